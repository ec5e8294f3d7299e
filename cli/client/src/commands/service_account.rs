//! The ServiceAccount an Instance's plans run as, and its rights (`docs/tenancy.md`).
//!
//! kudo-manager applies an Instance's objects with the rights of a ServiceAccount of the
//! Instance's namespace (it impersonates it). `kudo install` and `kudo upgrade` prepare that
//! ServiceAccount **with the installing user's own credentials**, so that Kubernetes' RBAC
//! escalation check decides what can be granted:
//!
//! | the package's plans apply or delete | the ServiceAccount gets |
//! |---|---|
//! | objects of the Instance's namespace only | a RoleBinding `SA-admin` to the built-in `admin` ClusterRole there |
//! | objects in another namespace X | also a RoleBinding `kudo:NS:SA` to `admin` in X |
//! | a cluster-scoped object (CRD, ClusterRole, Namespace, ...) | also a ClusterRoleBinding `kudo:NS:SA` to `cluster-admin` (then no per-namespace RoleBindings) |
//!
//! A user who may not grant that (a tenant who is `admin` of one namespace and installs a
//! package holding a ClusterRoleBinding) is refused by the API server; [`Reach`] says which
//! objects needed the binding. Every binding goes through a server-side dry run first, so a
//! refusal writes nothing; [`Prepared::undo`] removes what [`prepare`] made when a later write
//! of the install fails.
//!
//! What the plans reach is found by rendering every Apply, Toggle (either way) and Delete task
//! of every plan with the install's parameters (a dependency's with its defaults) and asking
//! discovery whether each kind is namespaced. A kind discovery does not know yet (a CRD the
//! package installs) counts as namespaced: a package that installs a CRD is cluster-scoped
//! already.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use k8s_openapi::api::authorization::v1::{
    LocalSubjectAccessReview, ResourceAttributes, SubjectAccessReviewSpec,
};
use kube::api::{Api, ApiResource, DeleteParams, DynamicObject, GroupVersionKind, PostParams};
use kube::discovery::{Scope, oneshot};
use kudo_pkg::Package;
use kudo_pkg::pipe::Right;
use kudo_pkg::render::{self, PlanObject};
use serde_json::{Value, json};

use super::{Error, Result, Target};
use kudo_crd::labels;

/// The built-in ClusterRole the ServiceAccount gets in each namespace its plans write to.
pub const NAMESPACE_ROLE: &str = "admin";
/// The built-in ClusterRole it gets when its plans write cluster-scoped objects.
pub const CLUSTER_ROLE: &str = "cluster-admin";

/// Where a package's plans write, besides the Instance's namespace.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reach {
    /// Cluster-scoped objects: `Kind name`.
    pub cluster_scoped: Vec<String>,
    /// Objects of other namespaces, by namespace: `Kind name`.
    pub other_namespaces: BTreeMap<String, Vec<String>>,
    /// Namespaced objects of kinds outside the groups the built-in `admin` role covers
    /// ([`ADMIN_GROUPS`]: a CRD's kind, such as the Prometheus operator's ServiceMonitor), by
    /// `(group, resource)`: `Kind name`. Known to the cluster or not: a kind it does not serve
    /// yet is named by the resource its kind makes (`ServiceMonitor` → `servicemonitors`), as a
    /// CRD names it, since RBAC grants rights on resources that do not exist yet.
    pub kinds: BTreeMap<(String, String), Vec<String>>,
}

/// The API groups whose namespaced kinds the built-in `admin` ClusterRole covers (Kubernetes'
/// bootstrap policy): the core group, `apps`, `batch`, `autoscaling`, `policy`, `extensions`,
/// `networking.k8s.io`, `rbac.authorization.k8s.io`. A kind of any other group gets its rights
/// from the Role `SA-kinds` ([`objects`]).
pub const ADMIN_GROUPS: &[&str] = &[
    "",
    "apps",
    "batch",
    "autoscaling",
    "policy",
    "extensions",
    "networking.k8s.io",
    "rbac.authorization.k8s.io",
];

/// What the Role `SA-kinds` allows on each of its resources: what kudo-manager does with an
/// object (server-side apply, read, delete) and what a drift check reads.
pub const KIND_VERBS: &[&str] = &[
    "get", "list", "watch", "create", "update", "patch", "delete",
];

/// Every object the plans of `packages` (each with its effective parameters) apply or delete
/// for Instance `instance` of `t.namespace`, sorted by where it goes. Templates that do not
/// render are left out: the manager reports them when it runs the plan.
pub async fn reach(t: &Target, packages: &[(&Package, Value)], instance: &str) -> Reach {
    let objects: Vec<PlanObject> = packages
        .iter()
        .flat_map(|(pkg, params)| {
            render::Prepared::new(pkg).plan_objects(params, instance, &t.namespace)
        })
        .collect();
    reach_of(t, &objects).await
}

/// [`reach`] of objects rendered already ([`render::Prepared::plan_objects`]).
pub async fn reach_of(t: &Target, objects: &[PlanObject]) -> Reach {
    // By `apiVersion/kind`: namespaced or not, and the resource.
    let mut scopes: HashMap<String, (bool, String)> = HashMap::new();
    let mut out = Reach::default();
    for obj in objects.iter().map(|o| &o.object) {
        let api_version = obj["apiVersion"].as_str().unwrap_or_default();
        let kind = obj["kind"].as_str().unwrap_or_default();
        let name = obj["metadata"]["name"].as_str().unwrap_or_default();
        let key = format!("{api_version}/{kind}");
        let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
        let (namespaced, resource) = match scopes.get(&key) {
            Some(found) => found.clone(),
            None => {
                let gvk = GroupVersionKind::gvk(group, version, kind);
                // Not served yet: namespaced, and the resource its kind makes.
                let found = oneshot::pinned_kind(&t.client, &gvk)
                    .await
                    .map(|(ar, caps)| (caps.scope == Scope::Namespaced, ar.plural))
                    .unwrap_or_else(|_| (true, ApiResource::from_gvk(&gvk).plural));
                scopes.insert(key, found.clone());
                found
            }
        };
        let what = format!("{kind} {name}");
        if namespaced && !ADMIN_GROUPS.contains(&group) {
            let list = out
                .kinds
                .entry((group.to_string(), resource.clone()))
                .or_default();
            if !list.contains(&what) {
                list.push(what.clone());
            }
        }
        if !namespaced {
            if !out.cluster_scoped.contains(&what) {
                out.cluster_scoped.push(what);
            }
            continue;
        }
        match obj["metadata"]["namespace"].as_str() {
            Some(ns) if ns != t.namespace => {
                let list = out.other_namespaces.entry(ns.to_string()).or_default();
                if !list.contains(&what) {
                    list.push(what);
                }
            }
            _ => {}
        }
    }
    out
}

/// The rights the plans of `pkg` need, rendered with its defaults, as words to compare one
/// version with another: every rule of the Roles and ClusterRoles they apply (`get
/// configmaps`, `create clusterroles.rbac.authorization.k8s.io`), each kind they write (`write
/// Deployment.apps`), and what their Pipe tasks take (`create pods/exec`). A rollout to a
/// version that needs a right the old one did not waits for an approval.
pub fn needed_rights(pkg: &Package) -> BTreeSet<String> {
    let values = pkg
        .policy_version()
        .map(|v| v.effective(&json!({})).0.value().clone())
        .unwrap_or_else(|_| json!({}));
    let mut out = BTreeSet::new();
    let dotted = |name: &str, group: &str| {
        if group.is_empty() {
            name.to_string()
        } else {
            format!("{name}.{group}")
        }
    };
    for obj in render::Prepared::new(pkg)
        .plan_objects(&values, "rights", "rights")
        .into_iter()
        .map(|o| o.object)
    {
        let api_version = obj["apiVersion"].as_str().unwrap_or_default();
        let kind = obj["kind"].as_str().unwrap_or_default();
        let group = api_version.split_once('/').map_or("", |(g, _)| g);
        out.insert(format!("write {}", dotted(kind, group)));
        let is_role = group == "rbac.authorization.k8s.io" && kind.ends_with("Role");
        for rule in obj["rules"]
            .as_array()
            .filter(|_| is_role)
            .into_iter()
            .flatten()
        {
            let words = |key: &str| -> Vec<String> {
                rule[key]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|w| w.as_str().map(String::from))
                    .collect()
            };
            let groups = words("apiGroups");
            for verb in words("verbs") {
                for resource in words("resources") {
                    for g in groups
                        .iter()
                        .map(String::as_str)
                        .chain(groups.is_empty().then_some(""))
                    {
                        out.insert(format!("{verb} {}", dotted(&resource, g)));
                    }
                }
                for url in words("nonResourceURLs") {
                    out.insert(format!("{verb} {url}"));
                }
            }
        }
    }
    for (_, rights) in kudo_pkg::pipe::plan_rights(pkg.operator(), None) {
        out.extend(rights.iter().map(ToString::to_string));
    }
    out
}

/// The ServiceAccount `service_account` of `namespace` and the bindings [`Reach`] needs, in
/// creation order, each with why it is needed.
pub fn objects(namespace: &str, service_account: &str, reach: &Reach) -> Vec<(Value, String)> {
    let meta_labels = json!({labels::MANAGED_BY: labels::MANAGED_BY_KUDO});
    let subject =
        json!([{"kind": "ServiceAccount", "name": service_account, "namespace": namespace}]);
    let binding = |kind: &str, name: &str, ns: Option<&str>, role: &str| {
        let mut b = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind,
            "metadata": {"name": name, "labels": meta_labels},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
            "subjects": subject});
        if let Some(ns) = ns {
            b["metadata"]["namespace"] = json!(ns);
        }
        b
    };
    let wide = format!("kudo:{namespace}:{service_account}");
    let mut out = vec![
        (
            json!({"apiVersion": "v1", "kind": "ServiceAccount",
                "metadata": {"name": service_account, "namespace": namespace, "labels": meta_labels}}),
            "the identity kudo-manager acts with for the Instance".to_string(),
        ),
        (
            binding(
                "RoleBinding",
                &format!("{service_account}-{NAMESPACE_ROLE}"),
                Some(namespace),
                NAMESPACE_ROLE,
            ),
            format!("to {NAMESPACE_ROLE}, for the objects of namespace {namespace}"),
        ),
    ];
    if !reach.cluster_scoped.is_empty() {
        out.push((
            binding("ClusterRoleBinding", &wide, None, CLUSTER_ROLE),
            format!(
                "to {CLUSTER_ROLE}, for the cluster-scoped {}",
                reach.cluster_scoped.join(", ")
            ),
        ));
        return out;
    }
    for (ns, what) in &reach.other_namespaces {
        out.push((
            binding("RoleBinding", &wide, Some(ns), NAMESPACE_ROLE),
            format!(
                "to {NAMESPACE_ROLE} in namespace {ns}, for {}",
                what.join(", ")
            ),
        ));
    }
    if reach.kinds.is_empty() {
        return out;
    }
    // The kinds `admin` does not cover, by resource name (whether the cluster serves them yet
    // or not), in every namespace the plans write to.
    let name = kinds_role(service_account);
    let rules = kind_rules(&reach.kinds);
    let why = format!(
        "for {}, which the built-in {NAMESPACE_ROLE} role does not cover",
        reach
            .kinds
            .values()
            .flatten()
            .cloned()
            .collect::<Vec<_>>()
            .join(", ")
    );
    for ns in std::iter::once(namespace).chain(reach.other_namespaces.keys().map(String::as_str)) {
        out.push((
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
                "metadata": {"name": name, "namespace": ns, "labels": meta_labels},
                "rules": rules}),
            format!("the rights {why}"),
        ));
        let mut b = binding("RoleBinding", &name, Some(ns), &name);
        b["roleRef"]["kind"] = json!("Role");
        out.push((b, format!("to Role {name}, {why}")));
    }
    out
}

/// The Role (and its RoleBinding) with the rights on the kinds `admin` does not cover:
/// `SA-kinds`.
pub fn kinds_role(service_account: &str) -> String {
    format!("{service_account}-kinds")
}

/// One rule per API group: its resources, [`KIND_VERBS`].
fn kind_rules(kinds: &BTreeMap<(String, String), Vec<String>>) -> Value {
    let mut by_group: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (group, resource) in kinds.keys() {
        by_group.entry(group).or_default().push(resource);
    }
    by_group
        .into_iter()
        .map(|(group, resources)| {
            json!({"apiGroups": [group], "resources": resources, "verbs": KIND_VERBS})
        })
        .collect()
}

/// Whether `object` is the Role of the kinds `admin` does not cover, or its binding: a user
/// who may not grant it is told, not refused (the plans that need it fail, naming it).
fn is_kinds_grant(object: &Value, service_account: &str) -> bool {
    object["metadata"]["name"] == kinds_role(service_account).as_str()
}

/// The rights the Pipe tasks of `packages` take ([`kudo_pkg::pipe::plan_rights`]) that
/// ServiceAccount `service_account` of `t.namespace` lacks, asked of the API server with a
/// LocalSubjectAccessReview each (the namespace's `admin` may make them): the Pipe tasks
/// needing them and the rights, or `None`. Only meaningful when the ServiceAccount's bindings
/// exist already ([`prepare`] would create none); a review the user may not make is no
/// refusal (kudo-manager checks again before the plan runs).
pub async fn pipe_rights_lacking(
    t: &Target,
    service_account: &str,
    packages: &[&Package],
) -> Result<Option<(Vec<String>, Vec<String>)>> {
    let needs: Vec<(String, Vec<Right>)> = packages
        .iter()
        .flat_map(|p| kudo_pkg::pipe::plan_rights(p.operator(), None))
        .collect();
    if needs.is_empty() {
        return Ok(None);
    }
    let reviews: Api<LocalSubjectAccessReview> = Api::namespaced(t.client.clone(), &t.namespace);
    let user = format!("system:serviceaccount:{}:{service_account}", t.namespace);
    let groups = vec![
        "system:serviceaccounts".to_string(),
        format!("system:serviceaccounts:{}", t.namespace),
        "system:authenticated".to_string(),
    ];
    let mut denied: Vec<Right> = Vec::new();
    let mut asked: Vec<Right> = Vec::new();
    for r in needs.iter().flat_map(|(_, r)| r) {
        if asked.contains(r) {
            continue;
        }
        asked.push(*r);
        let (resource, subresource) = r.parts();
        let review = LocalSubjectAccessReview {
            metadata: kube::api::ObjectMeta {
                namespace: Some(t.namespace.clone()),
                ..Default::default()
            },
            spec: SubjectAccessReviewSpec {
                user: Some(user.clone()),
                groups: Some(groups.clone()),
                resource_attributes: Some(ResourceAttributes {
                    namespace: Some(t.namespace.clone()),
                    verb: Some(r.verb.to_string()),
                    group: Some(String::new()),
                    resource: Some(resource.to_string()),
                    subresource: subresource.map(String::from),
                    ..Default::default()
                }),
                ..Default::default()
            },
            ..Default::default()
        };
        match reviews.create(&PostParams::default(), &review).await {
            Ok(answer) if !answer.status.as_ref().is_some_and(|s| s.allowed) => denied.push(*r),
            Ok(_) => {}
            Err(kube::Error::Api(s)) if s.code == 403 || s.code == 404 => return Ok(None),
            Err(e) => return Err(t.api("create", "LocalSubjectAccessReview", "")(e)),
        }
    }
    if denied.is_empty() {
        return Ok(None);
    }
    let tasks = needs
        .iter()
        .filter(|(_, r)| r.iter().any(|x| denied.contains(x)))
        .map(|(task, _)| task.clone())
        .collect();
    Ok(Some((
        tasks,
        denied.iter().map(ToString::to_string).collect(),
    )))
}

/// What [`prepare`] created (not what existed before it): what [`Prepared::undo`] removes.
#[derive(Debug, Clone, Default)]
pub struct Prepared {
    /// The objects created (with `dry_run`: that would be), in creation order.
    pub created: Vec<Value>,
    /// The existing Roles given the rules they lacked (with `dry_run`: that would be). Left
    /// as they are by [`Prepared::undo`]: a rule added stays.
    pub updated: Vec<Value>,
    /// The rights on kinds `admin` does not cover that the user may not grant
    /// ([`kinds_role`]): said, not refused; the plans that need them fail naming them.
    pub warnings: Vec<String>,
}

/// Creates `objects` (from [`objects`]) that do not exist yet: all of them through a
/// server-side dry run first (authorization and RBAC's escalation check, nothing written),
/// then, unless `dry_run`, for real. [`Error::Grant`] names the first refused object and why
/// it was needed.
pub async fn prepare(
    t: &Target,
    service_account: &str,
    objects: &[(Value, String)],
    dry_run: bool,
) -> Result<Prepared> {
    let missing = missing(t, service_account, objects).await?;
    if dry_run {
        return Ok(missing);
    }
    create_missing(t, service_account, objects, &missing).await
}

/// The objects of `objects` that do not exist yet (or, for the Role of [`kinds_role`], lack
/// a rule), each checked with a server-side dry run (authorization and RBAC's escalation
/// check, nothing written): what [`prepare`] would create.
pub async fn missing(
    t: &Target,
    service_account: &str,
    objects: &[(Value, String)],
) -> Result<Prepared> {
    let mut missing = Prepared::default();
    // Namespaces where the kinds Role was refused: its binding is not made either.
    let mut refused_in: Vec<String> = Vec::new();
    for (object, why) in objects {
        let ns = object["metadata"]["namespace"].as_str().unwrap_or_default();
        let optional = is_kinds_grant(object, service_account);
        if optional && refused_in.iter().any(|n| n == ns) {
            continue;
        }
        match create(t, object, true).await {
            Ok(Written::Created) => missing.created.push(object.clone()),
            Ok(Written::Updated) => missing.updated.push(object.clone()),
            Ok(Written::Unchanged) => {}
            // The binding's Role is made by this same install (the dry run made none): the
            // API server cannot find it yet.
            Err(kube::Error::Api(s))
                if s.code == 404
                    && optional
                    && object["kind"] == "RoleBinding"
                    && missing
                        .created
                        .iter()
                        .any(|o| o["kind"] == "Role" && o["metadata"]["namespace"] == ns) =>
            {
                missing.created.push(object.clone())
            }
            Err(e) if optional && !kudo_cluster::missing_namespace(&e, ns) => {
                refused_in.push(ns.to_string());
                missing
                    .warnings
                    .push(not_granted(t, service_account, object, why, &e));
            }
            Err(e) => return Err(refused(t, service_account, object, why, &e)),
        }
    }
    Ok(missing)
}

/// Creates what [`missing`] found missing (of `objects`) and gives the kinds Role the rules
/// it lacks; on a refusal, removes what it made.
pub async fn create_missing(
    t: &Target,
    service_account: &str,
    objects: &[(Value, String)],
    missing: &Prepared,
) -> Result<Prepared> {
    let mut done = Prepared {
        warnings: missing.warnings.clone(),
        ..Prepared::default()
    };
    // In `objects`' order: a Role before its binding.
    let todo = objects
        .iter()
        .filter(|(o, _)| missing.created.contains(o) || missing.updated.contains(o));
    for (object, why) in todo {
        match create(t, object, false).await {
            Ok(Written::Created) => done.created.push(object.clone()),
            Ok(Written::Updated) => done.updated.push(object.clone()),
            Ok(Written::Unchanged) => {}
            Err(e) if is_kinds_grant(object, service_account) => {
                done.warnings
                    .push(not_granted(t, service_account, object, why, &e))
            }
            Err(e) => {
                done.undo(t).await;
                return Err(refused(t, service_account, object, why, &e));
            }
        }
    }
    Ok(done)
}

impl Prepared {
    /// Deletes what was created, last first. Best effort: what cannot be deleted stays (the
    /// caller is already reporting an error).
    pub async fn undo(&self, t: &Target) {
        for object in self.created.iter().rev() {
            let (api, name) = api(t, object);
            let _ = api.delete(&name, &DeleteParams::background()).await;
        }
    }
}

/// What a [`create`] did (or, as a dry run, would do).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Written {
    /// The object is new.
    Created,
    /// A Role that existed got the rules it lacked.
    Updated,
    /// It existed (a Role: with every rule).
    Unchanged,
}

/// Creates `object` (`dry_run`: only checks it). A Role that exists gets the rules of
/// `object` it lacks (the kinds of every package installed with that ServiceAccount add up).
async fn create(t: &Target, object: &Value, dry_run: bool) -> Result<Written, kube::Error> {
    let (api, name) = api(t, object);
    let obj: DynamicObject =
        serde_json::from_value(object.clone()).map_err(kube::Error::SerdeError)?;
    let params = PostParams {
        dry_run,
        field_manager: Some(labels::CLI_FIELD_MANAGER.into()),
    };
    match api.create(&params, &obj).await {
        Ok(_) => return Ok(Written::Created),
        Err(kube::Error::Api(s)) if s.code == 409 => {}
        Err(e) => return Err(e),
    }
    if object["kind"] != "Role" {
        return Ok(Written::Unchanged);
    }
    let mut live = api.get(&name).await?;
    let mut rules = live.data["rules"].as_array().cloned().unwrap_or_default();
    let lacking: Vec<Value> = object["rules"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|r| !rules.contains(r))
        .cloned()
        .collect();
    if lacking.is_empty() {
        return Ok(Written::Unchanged);
    }
    rules.extend(lacking);
    live.data["rules"] = Value::Array(rules);
    // Replaced with the resourceVersion read: a Role changed meanwhile is a conflict, not lost.
    api.replace(&name, &params, &live).await?;
    Ok(Written::Updated)
}

fn api(t: &Target, object: &Value) -> (Api<DynamicObject>, String) {
    let api_version = object["apiVersion"].as_str().unwrap_or_default();
    let kind = object["kind"].as_str().unwrap_or_default();
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
    let plural = match kind {
        "ServiceAccount" => "serviceaccounts",
        "RoleBinding" => "rolebindings",
        "Role" => "roles",
        _ => "clusterrolebindings",
    };
    let ar =
        ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(group, version, kind), plural);
    let name = object["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let api = match object["metadata"]["namespace"].as_str() {
        Some(ns) => Api::namespaced_with(t.client.clone(), ns, &ar),
        None => Api::all_with(t.client.clone(), &ar),
    };
    (api, name)
}

/// A kinds grant the API server refused, as a warning: who would have got what, and why not.
fn not_granted(
    t: &Target,
    service_account: &str,
    object: &Value,
    why: &str,
    e: &kube::Error,
) -> String {
    let kind = object["kind"].as_str().unwrap_or_default();
    let ns = object["metadata"]["namespace"].as_str().unwrap_or_default();
    let name = object["metadata"]["name"].as_str().unwrap_or_default();
    format!(
        "the Instance's ServiceAccount {}/{service_account} gets no {kind} {ns}/{name} ({why}): {}; a plan that applies or deletes one fails until an admin grants it",
        t.namespace,
        kudo_cluster::said(e)
    )
}

fn refused(t: &Target, service_account: &str, object: &Value, why: &str, e: &kube::Error) -> Error {
    let namespace = object["metadata"]["namespace"].as_str().unwrap_or_default();
    if kudo_cluster::missing_namespace(e, namespace) {
        return Error::NoNamespace {
            namespace: namespace.to_string(),
        };
    }
    let kind = object["kind"].as_str().unwrap_or_default();
    let name = object["metadata"]["name"].as_str().unwrap_or_default();
    let place = match object["metadata"]["namespace"].as_str() {
        Some(ns) => format!("{kind} {ns}/{name}"),
        None => format!("{kind} {name}"),
    };
    Error::Grant {
        service_account: format!("{}/{service_account}", t.namespace),
        object: place,
        why: why.to_string(),
        message: kudo_cluster::said(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rights_a_version_needs_are_its_roles_rules_its_kinds_and_its_pipe_tasks() {
        let fleet = |v: &str| {
            let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../tests/fixtures/e2e/fleet")
                .join(v);
            Package::load(&dir).expect("the fixture loads")
        };
        let (v1, v2, v3) = (fleet("v1"), fleet("v2"), fleet("v3"));
        let words = |pkg: &Package| needed_rights(pkg).into_iter().collect::<Vec<_>>();
        assert_eq!(words(&v1), ["write ConfigMap", "write Deployment.apps"]);
        assert_eq!(words(&v2), words(&v1));
        let grown: Vec<String> = needed_rights(&v3)
            .difference(&needed_rights(&v2))
            .cloned()
            .collect();
        assert_eq!(
            grown,
            [
                "get configmaps",
                "list configmaps",
                "write Role.rbac.authorization.k8s.io"
            ]
        );
    }

    fn names(objects: &[(Value, String)]) -> Vec<String> {
        objects
            .iter()
            .map(|(o, _)| {
                format!(
                    "{} {}/{} -> {}",
                    o["kind"].as_str().unwrap(),
                    o["metadata"]["namespace"].as_str().unwrap_or("-"),
                    o["metadata"]["name"].as_str().unwrap(),
                    o["roleRef"]["name"].as_str().unwrap_or("-"),
                )
            })
            .collect()
    }

    #[test]
    fn the_bindings_follow_where_the_plans_write() {
        let local = Reach::default();
        let elsewhere = Reach {
            other_namespaces: [("logs".to_string(), vec!["ConfigMap shipper".to_string()])].into(),
            ..Reach::default()
        };
        let cluster = Reach {
            cluster_scoped: vec!["ClusterRoleBinding escalate".into()],
            other_namespaces: elsewhere.other_namespaces.clone(),
            ..Reach::default()
        };
        // zookeeper's ServiceMonitor, whether the cluster serves the kind yet or not.
        let kinds = Reach {
            kinds: [(
                (
                    "monitoring.coreos.com".to_string(),
                    "servicemonitors".to_string(),
                ),
                vec!["ServiceMonitor zk-monitor".to_string()],
            )]
            .into(),
            ..Reach::default()
        };
        let cases: &[(&str, &Reach, &[&str])] = &[
            (
                "namespace only",
                &local,
                &[
                    "ServiceAccount t/kudo-instance -> -",
                    "RoleBinding t/kudo-instance-admin -> admin",
                ],
            ),
            (
                "another namespace",
                &elsewhere,
                &[
                    "ServiceAccount t/kudo-instance -> -",
                    "RoleBinding t/kudo-instance-admin -> admin",
                    "RoleBinding logs/kudo:t:kudo-instance -> admin",
                ],
            ),
            (
                "cluster-scoped (covers the other namespaces)",
                &cluster,
                &[
                    "ServiceAccount t/kudo-instance -> -",
                    "RoleBinding t/kudo-instance-admin -> admin",
                    "ClusterRoleBinding -/kudo:t:kudo-instance -> cluster-admin",
                ],
            ),
            (
                "a kind admin does not cover",
                &kinds,
                &[
                    "ServiceAccount t/kudo-instance -> -",
                    "RoleBinding t/kudo-instance-admin -> admin",
                    "Role t/kudo-instance-kinds -> -",
                    "RoleBinding t/kudo-instance-kinds -> kudo-instance-kinds",
                ],
            ),
        ];
        for (case, reach, want) in cases {
            let got = objects("t", "kudo-instance", reach);
            assert_eq!(names(&got), *want, "case: {case}");
            for (o, _) in got.iter().skip(1).filter(|(o, _)| o["kind"] != "Role") {
                assert_eq!(
                    o["subjects"],
                    json!([{"kind": "ServiceAccount", "name": "kudo-instance", "namespace": "t"}]),
                    "case: {case}"
                );
            }
        }
        let role = &objects("t", "kudo-instance", &kinds)[2].0;
        assert_eq!(
            role["rules"],
            json!([{"apiGroups": ["monitoring.coreos.com"], "resources": ["servicemonitors"],
                "verbs": ["get", "list", "watch", "create", "update", "patch", "delete"]}])
        );
        let binding = &objects("t", "kudo-instance", &kinds)[3].0;
        assert_eq!(binding["roleRef"]["kind"], "Role");
        let why = &objects("t", "kudo-instance", &cluster)[2].1;
        assert_eq!(
            why,
            "to cluster-admin, for the cluster-scoped ClusterRoleBinding escalate"
        );
    }
}
