//! One reconcile of an Instance (see the crate docs): the finalizer first ([`finalizer`]),
//! then the OperatorVersion's compiled package and the values of the Instance's Secrets, then
//! [`apply`] (the plan a change needs) or, once the Instance is being deleted, [`cleanup`];
//! both run the active plan through a [`round::Round`].

mod apply;
mod cleanup;
mod remediation;
mod revisions;
mod round;

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Instant;

use k8s_openapi::api::core::v1::Secret;
use kube::ResourceExt;
use kube::api::Api;
use kube::runtime::controller::Action;
use serde_json::{Value, json};

use crate::context::Context;
use crate::error::{Error, Result};
use crate::finalizer;
use crate::step::diagnostics;
use crate::tenant::{InvalidName, Tenant};
use kudo_crd::plan;
use kudo_crd::v1beta2::Instance;
use kudo_diag::Diagnostic;
use round::Round;

/// Reconciles one Instance (see the module docs).
pub async fn reconcile(inst: Arc<Instance>, ctx: Arc<Context>) -> Result<Action> {
    let started = Instant::now();
    let result = reconcile_instance(&inst, &ctx).await;
    ctx.metrics.reconciled(started);
    result
}

async fn reconcile_instance(inst: &Instance, ctx: &Context) -> Result<Action> {
    let ns = inst
        .namespace()
        .ok_or_else(|| Error::NoNamespace(inst.name_any()))?;
    // An older copy than the manager's last status write: the write's own watch event brings
    // the current one.
    if ctx.behind(inst) {
        tracing::debug!(instance = %crate::context::key(inst), "older than the last status write: waiting for the watch");
        return Ok(Action::requeue(std::time::Duration::from_secs(1)));
    }
    let api: Api<Instance> = Api::namespaced(ctx.client.clone(), &ns);
    let deleting = inst.metadata.deletion_timestamp.is_some();
    if !finalizer::present(inst) {
        if !deleting {
            finalizer::add(&api, inst).await?;
        }
        // The patch is seen by the watch, which reconciles again.
        return Ok(Action::await_change());
    }
    let mut round = Round::new(ctx, api, inst);
    let reference = inst.spec.operator_version_ref(&ns);
    let compiled = match reference.as_ref().map(|r| ctx.compiled(r)) {
        Some(Ok(c)) => c,
        None => {
            let why = "the Instance names no OperatorVersion (spec.operatorVersion.name)";
            if deleting {
                return cleanup::without_operator_version(&round, why).await;
            }
            let after = ctx.settings.progress * 2;
            return round.not_ready("OperatorVersionMissing", why, after).await;
        }
        Some(Err(why)) if deleting => {
            return cleanup::without_operator_version(&round, &why.to_string()).await;
        }
        Some(Err(why)) => {
            let after = ctx.settings.progress * 2;
            return round
                .not_ready("OperatorVersionMissing", &why.to_string(), after)
                .await;
        }
    };
    plan::ensure_all(&mut round.status, compiled.pkg());
    // The values in the Instance's Secrets (spec.parametersFrom), read at plan time.
    // Read as the Instance's ServiceAccount: the manager itself may read no Secret.
    let secret_values = match ctx.tenants.client_for(inst) {
        _ if inst.spec.parameters_from.is_empty() => Ok(json!({})),
        Ok(tenant) => read_secrets(&tenant, &ns, inst).await,
        Err(invalid) => Err(SecretsError::Identity(invalid)),
    };
    // What the Instance gives: its parameters, with its Secrets' values under them. A
    // parameter the OperatorVersion does not declare, which a kudo.dev/v1beta1 write may keep
    // (`kudo_policy::change::set_aside`), is ignored: it runs no plan and fails none.
    let given = secret_values.map(|sv| {
        let public = inst.spec.parameters.clone().unwrap_or_else(|| json!({}));
        let public = kudo_policy::change::declared(&compiled.version, &public);
        kudo_policy::secrets::under(&public, &sv)
    });
    if deleting {
        cleanup::reconcile(round, &compiled, given).await
    } else {
        apply::reconcile(round, &compiled, given).await
    }
}

/// Why the values of an Instance's Secrets (`spec.parametersFrom`) cannot be read: the
/// Instance's `Ready` condition says it (reason `SecretMissing`), naming the Secret and key,
/// never a value.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SecretsError {
    /// The Instance names no identity the manager may act with to read them.
    #[error(transparent)]
    Identity(#[from] InvalidName),
    /// `spec.parametersFrom` names no Secret to read ([`kudo_policy::secrets::SecretSource`]'s
    /// words).
    #[error("{0}")]
    Sources(String),
    /// The API server did not answer the read.
    #[error("cannot read Secret {namespace}/{name} (spec.parametersFrom): {source}")]
    Read {
        /// The Secret's namespace.
        namespace: String,
        /// The Secret.
        name: String,
        /// Why.
        source: kube::Error,
    },
    /// The Secret does not exist.
    #[error("Secret {namespace}/{name} (spec.parametersFrom) does not exist")]
    Missing {
        /// The Secret's namespace.
        namespace: String,
        /// The Secret.
        name: String,
    },
    /// A key is missing, or its value is not what the schema says.
    #[error("{}", diagnostics(.0))]
    Values(Vec<Diagnostic>),
}

/// The values of the Secrets `inst` names in `spec.parametersFrom`, merged in order; why not,
/// naming the Secret and key (never a value).
async fn read_secrets(
    tenant: &Tenant,
    ns: &str,
    inst: &Instance,
) -> std::result::Result<Value, SecretsError> {
    let from = serde_json::to_value(&inst.spec.parameters_from).unwrap_or_default();
    let sources =
        kudo_policy::secrets::SecretSource::list(Some(&from)).map_err(SecretsError::Sources)?;
    if sources.is_empty() {
        return Ok(json!({}));
    }
    let api: Api<Secret> = Api::namespaced(tenant.client.clone(), ns);
    let mut data: HashMap<String, BTreeMap<String, String>> = HashMap::new();
    for s in &sources {
        if data.contains_key(&s.name) {
            continue;
        }
        let got = api
            .get_opt(&s.name)
            .await
            .map_err(|source| SecretsError::Read {
                namespace: ns.into(),
                name: s.name.clone(),
                source,
            })?;
        let Some(secret) = got else {
            return Err(SecretsError::Missing {
                namespace: ns.into(),
                name: s.name.clone(),
            });
        };
        let texts = secret
            .data
            .unwrap_or_default()
            .into_iter()
            .filter_map(|(k, v)| String::from_utf8(v.0).ok().map(|t| (k, t)))
            .collect();
        data.insert(s.name.clone(), texts);
    }
    kudo_policy::secrets::merged(&sources, |name, key| {
        data.get(name).and_then(|d| d.get(key)).cloned()
    })
    .map_err(SecretsError::Values)
}
