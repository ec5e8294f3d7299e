//! The Secrets of an Instance's `spec.parametersFrom`, as `kudo install`, `update` and
//! `upgrade` read and write them ([`kudo_policy::secrets`] says what goes where).
//!
//! kudo manages one Secret per Instance, `<instance>-params-<random>`: immutable, owned by the
//! Instance, listed last in `spec.parametersFrom` (so a value given with `kudo update -p` wins
//! over the user's own Secrets listed before it), holding the `writeOnly` values the user gave
//! kudo that no Secret of their own already provides. A change of secrets writes a *new*
//! Secret and points the Instance at it in the same guarded write as the other parameters:
//! the Instance's generation moves, the admission webhook and the manager see one change, and
//! a refused or conflicting write deletes the new Secret (nothing half-applied). The old
//! Secret stays while a revision names it (`kudo rollback` restores its values); the manager
//! deletes it with the last such revision. A new name per content, not an edited Secret, also
//! means that no reader of a Secret ever sees half of an update.

use std::collections::BTreeMap;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use kube::Api;
use kube::api::{DeleteParams, ObjectMeta, Patch};
use kube::core::Resource;
use kudo_crd::common::{ParametersFrom, SecretKeyRef};
use kudo_crd::labels;
use kudo_crd::v1beta2::Instance;
use kudo_policy::ParamSchema;
use kudo_policy::secrets::{self as values, SecretSource};
use serde_json::{Value, json};

use super::{Error, Result, Target, patch_params, post_params};

/// The values an Instance's Secrets hold now.
#[derive(Default)]
pub(crate) struct Sources {
    /// Every source merged, in order.
    pub all: Value,
    /// The user's own Secrets merged (all but kudo's).
    pub others: Value,
    /// kudo's Secret: its name and values.
    pub managed: Option<(String, Value)>,
}

/// What the name of kudo's Secret of Instance `instance` starts with.
pub(crate) fn managed_prefix(instance: &str) -> String {
    format!("{instance}-params-")
}

fn is_managed(instance: &str, source: &ParametersFrom) -> bool {
    source.pointer.is_none()
        && source.secret_ref.key.is_none()
        && source
            .secret_ref
            .name
            .starts_with(&managed_prefix(instance))
}

fn secrets(t: &Target) -> Api<Secret> {
    Api::namespaced(t.client.clone(), &t.namespace)
}

/// Reads every Secret `inst` names. A missing Secret or key, or one the user may not read, is
/// an error naming it (never a value).
pub(crate) async fn read(t: &Target, inst: &Instance) -> Result<Sources> {
    let name = inst.metadata.name.clone().unwrap_or_default();
    let from = &inst.spec.parameters_from;
    if from.is_empty() {
        return Ok(Sources {
            all: json!({}),
            others: json!({}),
            managed: None,
        });
    }
    let mut data: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    for s in from {
        let secret = &s.secret_ref.name;
        if data.contains_key(secret) {
            continue;
        }
        let got = secrets(t)
            .get_opt(secret)
            .await
            .map_err(t.api("get", "Secret", secret))?;
        let texts = got
            .and_then(|s| s.data)
            .unwrap_or_default()
            .into_iter()
            .filter_map(|(k, v)| String::from_utf8(v.0).ok().map(|text| (k, text)))
            .collect();
        data.insert(secret.clone(), texts);
    }
    let list = |which: &dyn Fn(&ParametersFrom) -> bool| -> Result<Value> {
        let chosen: Vec<Value> = from
            .iter()
            .filter(|s| which(s))
            .map(|s| serde_json::to_value(s).unwrap_or_default())
            .collect();
        let sources = SecretSource::list(Some(&Value::Array(chosen))).map_err(Error::Internal)?;
        values::merged(&sources, |secret, key| {
            data.get(secret).and_then(|d| d.get(key)).cloned()
        })
        .map_err(Error::Parameters)
    };
    let managed = from
        .iter()
        .find(|s| is_managed(&name, s))
        .map(|s| s.secret_ref.name.clone());
    Ok(Sources {
        all: list(&|_| true)?,
        others: list(&|s| !is_managed(&name, s))?,
        managed: match managed {
            Some(m) => {
                let v = list(&|s| s.secret_ref.name == m && is_managed(&name, s))?;
                Some((m, v))
            }
            None => None,
        },
    })
}

/// What kudo's Secret must hold for the secret values `secret` (of `schema`): each value that
/// the user's own Secrets (`others`) do not already provide as it is. `None`: no Secret.
fn managed_values(schema: &ParamSchema, secret: Option<&Value>, others: &Value) -> Option<Value> {
    let secret = secret?;
    let mut out = json!({});
    for p in values::pointers(schema, secret) {
        let v = secret.pointer(&p)?;
        if others.pointer(&p) != Some(v) {
            let tokens = kudo_diag::pointer::tokens(&p).unwrap_or_default();
            kudo_diag::pointer::set_creating(&mut out, &tokens, v.clone());
        }
    }
    out.as_object()
        .is_some_and(|m| !m.is_empty())
        .then_some(out)
}

/// How a decision's values are written: the public part to `spec.parameters`, the secret part
/// (what the user's own Secrets do not provide) to a new Secret of kudo's when it changed.
pub(crate) struct Write {
    /// The new `spec.parameters`.
    pub public: Value,
    /// What kudo's new Secret holds; `None` with [`Write::sources`] set: no Secret any more.
    managed: Option<Value>,
    /// The new Secret's name, when one is written.
    new_secret: Option<String>,
    /// The new `spec.parametersFrom`, when kudo's Secret changes.
    pub sources: Option<Vec<ParametersFrom>>,
}

impl Write {
    /// Splits `explicit` (a decision's values, of `schema`) for Instance `inst`, whose Secrets
    /// hold `sources`.
    pub fn of(
        schema: &ParamSchema,
        explicit: &Value,
        sources: &Sources,
        inst: &Instance,
    ) -> Result<Write> {
        let (public, secret) = values::split(schema, explicit);
        let managed = managed_values(schema, secret.as_ref(), &sources.others);
        let now = sources.managed.as_ref().map(|(_, v)| v.clone());
        let changed = managed != now;
        let new_secret = match (&managed, changed) {
            (Some(_), true) => Some(new_name(&inst.metadata.name.clone().unwrap_or_default())?),
            _ => None,
        };
        Ok(Write {
            public,
            sources: changed.then(|| entries(inst, new_secret.as_deref())),
            managed,
            new_secret,
        })
    }

    /// Creates the new Secret (owned by `inst`), before the Instance is written.
    pub async fn prepare(&self, t: &Target, inst: &Instance) -> Result<()> {
        if let (Some(name), Some(values)) = (&self.new_secret, &self.managed) {
            let instance = inst.metadata.name.clone().unwrap_or_default();
            create(t, &instance, name, Some(inst), values).await?;
        }
        Ok(())
    }

    /// After the Instance's write: when it did not land, deletes the new Secret (nothing
    /// half-applied). When it landed, the old Secret stays: the revision of the change before
    /// names it (`kudo rollback` restores its values), and the manager deletes it with the last
    /// revision that names it (`kudo_crd::revision::released_secrets`).
    pub async fn settle(&self, t: &Target, landed: bool) -> Result<()> {
        if self.sources.is_none() || landed {
            return Ok(());
        }
        match &self.new_secret {
            Some(name) => delete(t, name).await,
            None => Ok(()),
        }
    }
}

/// `spec.parametersFrom` with kudo's Secret replaced by `managed` (removed when `None`;
/// appended last when there was none).
pub(crate) fn entries(inst: &Instance, managed: Option<&str>) -> Vec<ParametersFrom> {
    let name = inst.metadata.name.clone().unwrap_or_default();
    let mut out: Vec<ParametersFrom> = inst
        .spec
        .parameters_from
        .iter()
        .filter(|s| !is_managed(&name, s))
        .cloned()
        .collect();
    if let Some(m) = managed {
        out.push(entry(m));
    }
    out
}

/// The `spec.parametersFrom` entry of kudo's Secret `name`.
pub(crate) fn entry(name: &str) -> ParametersFrom {
    ParametersFrom {
        secret_ref: SecretKeyRef {
            name: name.into(),
            key: None,
        },
        pointer: None,
    }
}

/// A name for a new Secret of Instance `instance` (a random suffix: a hash of the content
/// would let a reader test guesses).
pub(crate) fn new_name(instance: &str) -> Result<String> {
    let uid = super::new_uid();
    Ok(format!("{}{}", managed_prefix(instance), &uid[..8]))
}

/// Creates kudo's Secret `name` holding `values` (a YAML document, key
/// [`values::DEFAULT_KEY`]), owned by `owner` when given.
pub(crate) async fn create(
    t: &Target,
    instance: &str,
    name: &str,
    owner: Option<&Instance>,
    values: &Value,
) -> Result<()> {
    let text = serde_json::to_string_pretty(values)
        .map_err(|e| Error::Internal(format!("cannot write the Secret's values: {e}")))?;
    let secret = Secret {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some(t.namespace.clone()),
            labels: Some([(labels::INSTANCE.to_string(), instance.to_string())].into()),
            owner_references: owner.and_then(|o| o.controller_owner_ref(&())).map(|o| {
                vec![
                    k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference {
                        controller: Some(false),
                        ..o
                    },
                ]
            }),
            ..Default::default()
        },
        immutable: Some(true),
        type_: Some("Opaque".into()),
        data: Some(
            [(
                values::DEFAULT_KEY.to_string(),
                ByteString(text.into_bytes()),
            )]
            .into(),
        ),
        ..Default::default()
    };
    secrets(t)
        .create(&post_params(), &secret)
        .await
        .map_err(t.api("create", "Secret", name))?;
    Ok(())
}

/// Makes `owner` the owner of Secret `name` (after the Instance was created), so it goes with it.
pub(crate) async fn own(t: &Target, name: &str, owner: &Instance) -> Result<()> {
    let Some(oref) = owner.controller_owner_ref(&()) else {
        return Ok(());
    };
    let patch = json!({"metadata": {"ownerReferences": [{
        "apiVersion": oref.api_version, "kind": oref.kind, "name": oref.name,
        "uid": oref.uid, "controller": false}]}});
    secrets(t)
        .patch(name, &patch_params(), &Patch::Merge(&patch))
        .await
        .map_err(t.api("patch", "Secret", name))?;
    Ok(())
}

/// Deletes Secret `name`; one already gone is no error.
pub(crate) async fn delete(t: &Target, name: &str) -> Result<()> {
    match secrets(t).delete(name, &DeleteParams::default()).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(s)) if s.code == 404 => Ok(()),
        Err(e) => Err(t.api("delete", "Secret", name)(e)),
    }
}
