//! `kudo uninstall NAME`: deletes the Instance and says what stays. The manager's finalizer
//! ([`kudo_crd::labels::FINALIZER`]) runs the `cleanup` plan (when the package has one) before
//! the Instance goes; `--wait` polls until it is gone ([`super::wait::gone`]).
//!
//! What the Instance does not own stays, and [`Uninstalled`] names it: the
//! PersistentVolumeClaims of its StatefulSets (made by the StatefulSet controller from
//! `volumeClaimTemplates`, owned by nothing) and of its own (labelled
//! [`kudo_crd::labels::INSTANCE`]), its Operator and OperatorVersions, and which other
//! Instances use them. [`prune`] deletes the OperatorVersions of the operator that no Instance
//! uses any more, then the Operator when none is left.

use std::collections::BTreeSet;

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::PersistentVolumeClaim;
use kube::api::{DeleteParams, ListParams};

use super::{Result, Target};
use kudo_crd::labels;

/// What `uninstall` deleted and what it left.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Uninstalled {
    /// The OperatorVersion the Instance ran (`None`: it named none).
    pub operator_version: Option<String>,
    /// Its Operator.
    pub operator: Option<String>,
    /// Whether that OperatorVersion has a `cleanup` plan (which the manager runs before the
    /// Instance goes).
    pub cleanup_plan: bool,
    /// The PersistentVolumeClaims of the Instance, which stay (their data is not deleted).
    pub claims: Vec<String>,
    /// The other Instances of the namespace that run the same OperatorVersion.
    pub version_users: Vec<String>,
}

/// Deletes Instance `name` ([`super::Error::NotFound`] when there is none), after reading what
/// will stay.
pub async fn uninstall(t: &Target, name: &str) -> Result<Uninstalled> {
    let inst = t.instance(name).await?;
    let mut done = Uninstalled {
        operator_version: inst.spec.operator_version_name(),
        ..Default::default()
    };
    if let Some(reference) = inst.spec.operator_version_ref(&t.namespace)
        && let Some(ov) = super::read_operator_version(&t.client, &reference)
            .await
            .map_err(t.api("get", "OperatorVersion", &reference.name))?
    {
        done.cleanup_plan = ov.spec.plans.contains_key("cleanup");
        done.operator = ov.spec.operator.as_ref().and_then(|o| o.name.clone());
    }
    // Read before the delete: the StatefulSets go with the Instance, their claims stay.
    done.claims = claims(t, name).await;
    match t.instances().delete(name, &DeleteParams::default()).await {
        Ok(_) => {}
        Err(kube::Error::Api(s)) if s.code == 404 => return Err(t.not_found("Instance", name)),
        Err(e) => return Err(t.api("delete", "Instance", name)(e)),
    }
    if let Some(ov) = &done.operator_version {
        done.version_users = users(t, name).await?.remove(ov).unwrap_or_default();
    }
    Ok(done)
}

/// The OperatorVersion each Instance of the namespace runs, but `except`: name → Instances.
async fn users(
    t: &Target,
    except: &str,
) -> Result<std::collections::BTreeMap<String, Vec<String>>> {
    let list = t
        .instances()
        .list(&ListParams::default())
        .await
        .map_err(t.api("list", "Instance", ""))?;
    let mut out: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    for i in list.items {
        let name = i.metadata.name.clone().unwrap_or_default();
        if name == except {
            continue;
        }
        if let Some(ov) = i.spec.operator_version_name() {
            out.entry(ov).or_default().push(name);
        }
    }
    Ok(out)
}

/// The PersistentVolumeClaims of Instance `name`: labelled with it, or made from the
/// `volumeClaimTemplates` of its StatefulSets (`TEMPLATE-STATEFULSET-ORDINAL`). Best effort:
/// what the user may not list is not named.
async fn claims(t: &Target, name: &str) -> Vec<String> {
    let selector = ListParams::default().labels(&format!("{}={name}", labels::INSTANCE));
    let pvcs: kube::Api<PersistentVolumeClaim> =
        kube::Api::namespaced(t.client.clone(), &t.namespace);
    let Ok(all) = pvcs.list(&ListParams::default()).await else {
        return Vec::new();
    };
    let sets: kube::Api<StatefulSet> = kube::Api::namespaced(t.client.clone(), &t.namespace);
    let prefixes: Vec<String> = match sets.list(&selector).await {
        Ok(l) => l
            .items
            .iter()
            .flat_map(|s| {
                let set = s.metadata.name.clone().unwrap_or_default();
                s.spec
                    .iter()
                    .flat_map(|spec| spec.volume_claim_templates.iter().flatten())
                    .map(move |c| {
                        format!("{}-{set}-", c.metadata.name.as_deref().unwrap_or_default())
                    })
                    .collect::<Vec<_>>()
            })
            .collect(),
        Err(_) => Vec::new(),
    };
    let mut out = BTreeSet::new();
    for pvc in all.items {
        let claim = pvc.metadata.name.clone().unwrap_or_default();
        let labelled = pvc
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get(labels::INSTANCE))
            .is_some_and(|i| i == name);
        let templated = prefixes.iter().any(|p| {
            claim
                .strip_prefix(p.as_str())
                .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
        });
        if labelled || templated {
            out.insert(claim);
        }
    }
    out.into_iter().collect()
}

/// What [`prune`] deleted and kept.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pruned {
    /// The OperatorVersions deleted (no Instance used them).
    pub deleted: Vec<String>,
    /// The OperatorVersions kept, each with the Instances that use it.
    pub kept: Vec<(String, Vec<String>)>,
    /// Whether the Operator was deleted (no OperatorVersion of it was left).
    pub operator_deleted: bool,
}

/// Deletes the OperatorVersions of `operator` that no Instance of the namespace uses (once
/// Instance `gone` is gone: the manager needs its OperatorVersion for the cleanup plan), then
/// the Operator when no OperatorVersion of it is left. An Instance installed meanwhile with a
/// deleted version is refused by the admission webhook (its OperatorVersion is missing) and can
/// be installed again.
pub async fn prune(t: &Target, operator: &str, gone: &str) -> Result<Pruned> {
    let used = users(t, gone).await?;
    let versions = t
        .operator_versions()
        .list(&ListParams::default())
        .await
        .map_err(t.api("list", "OperatorVersion", ""))?;
    let mut out = Pruned::default();
    let mut left = 0;
    for ov in versions.items {
        if ov.spec.operator.as_ref().and_then(|o| o.name.as_deref()) != Some(operator) {
            continue;
        }
        let name = ov.metadata.name.clone().unwrap_or_default();
        match used.get(&name) {
            Some(users) => {
                out.kept.push((name, users.clone()));
                left += 1;
            }
            None => {
                match t
                    .operator_versions()
                    .delete(&name, &DeleteParams::default())
                    .await
                {
                    Ok(_) => {}
                    Err(kube::Error::Api(s)) if s.code == 404 => {}
                    Err(e) => return Err(t.api("delete", "OperatorVersion", &name)(e)),
                }
                out.deleted.push(name);
            }
        }
    }
    if left == 0 {
        match t
            .operators()
            .delete(operator, &DeleteParams::default())
            .await
        {
            Ok(_) => out.operator_deleted = true,
            Err(kube::Error::Api(s)) if s.code == 404 => {}
            Err(e) => return Err(t.api("delete", "Operator", operator)(e)),
        }
    }
    Ok(out)
}
