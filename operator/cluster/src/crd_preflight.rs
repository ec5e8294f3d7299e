//! The CRD preflight against a cluster: a CustomResourceDefinition a plan would apply compared
//! with the one the cluster has, by OLM v1's rules ([`kudo_k8s::crd_safety`]). `kudo upgrade`
//! runs it before anything is written, and the manager before it applies a CRD in any plan.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Client;
use kube::api::{Api, ApiResource, DynamicObject, ListParams};
use kudo_k8s::crd_safety::{self, Finding};
use serde_json::Value;

/// What the preflight found for one CRD.
#[derive(Debug, Clone, PartialEq)]
pub enum Preflight {
    /// The cluster has no CRD of that name: nothing to break.
    New,
    /// Compared with the CRD in the cluster: the findings (none when the change is safe).
    Checked(Vec<Finding>),
    /// The CRD in the cluster could not be read with this identity (what the API server said):
    /// not checked.
    Unreadable(String),
}

impl Preflight {
    /// The unsafe findings (none unless [`Preflight::Checked`]).
    pub fn refusals(&self) -> Vec<&Finding> {
        match self {
            Preflight::Checked(f) => f.iter().filter(|f| !f.safe).collect(),
            _ => Vec::new(),
        }
    }
}

/// Compares `new` (a CRD as `apiextensions.k8s.io/v1`, as rendered) with the CRD of the same
/// name in the cluster, read with `client`. Whether objects of the CRD exist (a served version
/// may then not go) is asked by listing one object of its storage version, and only when it
/// matters: a change that is safe even with objects (the CRD unchanged, most often: every plan
/// that applies it asks) costs the one GET. When the list cannot be read, objects are assumed
/// to exist.
pub async fn check(client: &Client, new: &Value) -> Preflight {
    let Some(name) = new.pointer("/metadata/name").and_then(Value::as_str) else {
        return Preflight::New;
    };
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let live = match crds.get_opt(name).await {
        Ok(None) => return Preflight::New,
        Ok(Some(live)) => live,
        Err(e) => return Preflight::Unreadable(crate::said(&e)),
    };
    let live_value = serde_json::to_value(&live).unwrap_or(Value::Null);
    // Objects only ever add findings: safe as if they existed is safe.
    let pessimistic = crd_safety::check(&live_value, new, true);
    if pessimistic.iter().all(|f| f.safe) {
        return Preflight::Checked(pessimistic);
    }
    let exists = objects_exist(client, &live).await;
    Preflight::Checked(crd_safety::check(&live_value, new, exists))
}

/// True unless a list of the CRD's storage version says there are no objects.
async fn objects_exist(client: &Client, crd: &CustomResourceDefinition) -> bool {
    let spec = &crd.spec;
    let Some(version) = spec
        .versions
        .iter()
        .find(|v| v.storage)
        .or_else(|| spec.versions.first())
    else {
        return true;
    };
    let api_version = if spec.group.is_empty() {
        version.name.clone()
    } else {
        format!("{}/{}", spec.group, version.name)
    };
    let ar = ApiResource {
        group: spec.group.clone(),
        version: version.name.clone(),
        api_version,
        kind: spec.names.kind.clone(),
        plural: spec.names.plural.clone(),
    };
    let api: Api<DynamicObject> = Api::all_with(client.clone(), &ar);
    match api.list(&ListParams::default().limit(1)).await {
        Ok(list) => !list.items.is_empty(),
        Err(_) => true,
    }
}
