//! Reading what a label selector picks across namespaces: a Rollout's selection, read the same
//! way by `kudo rollout start`, the manager and the admission webhook.

use kube::api::{Api, ListParams};
use kube::{Client, Resource, ResourceExt};
use serde::de::DeserializeOwned;

/// The objects of kind `K` that `query` (a `labelSelector`) matches in namespace `own`, or, with
/// `namespace_query`, in each namespace that matches (listed with `namespaces`, sorted by
/// name); the objects are listed with `objects`. Returns the namespaces looked in and what was
/// found; `Err` says which list failed, as the API server said it (a Rollout's words:
/// `spec.namespaceSelector`).
pub async fn across<K>(
    objects: &Client,
    namespaces: &Client,
    own: &str,
    query: &str,
    namespace_query: Option<&str>,
) -> Result<(Vec<String>, Vec<K>), String>
where
    K: Resource<Scope = k8s_openapi::NamespaceResourceScope, DynamicType = ()>
        + Clone
        + DeserializeOwned
        + std::fmt::Debug,
{
    let names = match namespace_query {
        None => vec![own.to_string()],
        Some(q) => {
            let api: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(namespaces.clone());
            let mut names: Vec<String> = api
                .list(&ListParams::default().labels(q))
                .await
                .map_err(|e| {
                    format!(
                        "the namespaces of spec.namespaceSelector cannot be listed: {}",
                        crate::said(&e)
                    )
                })?
                .items
                .iter()
                .map(ResourceExt::name_any)
                .collect();
            names.sort();
            names
        }
    };
    let mut found = Vec::new();
    for ns in &names {
        let api: Api<K> = Api::namespaced(objects.clone(), ns);
        let list = api
            .list(&ListParams::default().labels(query))
            .await
            .map_err(|e| {
                format!(
                    "the {}s of namespace {ns} cannot be listed: {}",
                    K::kind(&()),
                    crate::said(&e)
                )
            })?;
        found.extend(list.items);
    }
    Ok((names, found))
}

/// What [`across`] finds, as (namespace, name) pairs.
pub async fn keys<K>(
    objects: &Client,
    namespaces: &Client,
    own: &str,
    query: &str,
    namespace_query: Option<&str>,
) -> Result<std::collections::BTreeSet<(String, String)>, String>
where
    K: Resource<Scope = k8s_openapi::NamespaceResourceScope, DynamicType = ()>
        + Clone
        + DeserializeOwned
        + std::fmt::Debug,
{
    let (_, found): (_, Vec<K>) = across(objects, namespaces, own, query, namespace_query).await?;
    Ok(found
        .iter()
        .map(|o| (o.namespace().unwrap_or_default(), o.name_any()))
        .collect())
}
