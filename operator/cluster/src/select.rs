//! Reading what a label selector picks across namespaces: what a Rollout's selection is made
//! of, read the same way by `kudo rollout start`, the manager and the admission webhook.

use kube::api::{Api, ListParams};
use kube::{Client, Resource, ResourceExt};
use serde::de::DeserializeOwned;

/// The names of the namespaces `query` (a `labelSelector`) matches, sorted.
pub async fn namespaces(client: &Client, query: &str) -> Result<Vec<String>, kube::Error> {
    let api: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(client.clone());
    let mut names: Vec<String> = api
        .list(&ListParams::default().labels(query))
        .await?
        .items
        .iter()
        .map(ResourceExt::name_any)
        .collect();
    names.sort();
    Ok(names)
}

/// The objects of kind `K` that `query` (a `labelSelector`) matches in each of `namespaces`,
/// in that order. `Err` names the namespace whose list failed.
pub async fn labelled<K>(
    client: &Client,
    namespaces: &[String],
    query: &str,
) -> Result<Vec<K>, (String, kube::Error)>
where
    K: Resource<Scope = k8s_openapi::NamespaceResourceScope, DynamicType = ()>
        + Clone
        + DeserializeOwned
        + std::fmt::Debug,
{
    let mut out = Vec::new();
    for ns in namespaces {
        let api: Api<K> = Api::namespaced(client.clone(), ns);
        let list = api
            .list(&ListParams::default().labels(query))
            .await
            .map_err(|e| (ns.clone(), e))?;
        out.extend(list.items);
    }
    Ok(out)
}
