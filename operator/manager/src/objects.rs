//! The cluster side of running tasks ([`Objects`]): the API resource of each kind (found by
//! discovery, once per kind), server-side apply (field manager `kudo-manager`, force) with
//! what the cluster needs of an object (the successor of an API version it no longer serves,
//! without fields its schema does not declare), deletes, and the Warning events that explain
//! a wait. What the API server refuses is a [`Failure`]: the step decides what it means.

use std::sync::Arc;

use k8s_openapi::api::apps::v1::ReplicaSet;
use k8s_openapi::api::authorization::v1::{
    ResourceAttributes, SelfSubjectAccessReview, SelfSubjectAccessReviewSpec,
};
use k8s_openapi::api::core::v1::{Event, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::jiff::Timestamp;
use kube::api::{
    Api, ApiResource, DeleteParams, DynamicObject, ListParams, LogParams, Patch, PatchParams,
    PostParams,
};
use kube::core::GroupVersionKind;
use kube::discovery::{Scope, oneshot};
use kube::{Client, ResourceExt};
use kudo_k8s::successor;
use kudo_pkg::pipe::Right;
use serde_json::Value;

use crate::containers::{self, Trouble};
use crate::health::{Warning, owned_selector};
use crate::memo::Memo;
use crate::pod_files::{ExecFiles, PodFiles};
use crate::tenant::Tenant;
use crate::undeclared;
use kudo_crd::labels;
use kudo_crd::v1beta2::Instance;

/// Why the API server did not take a write (or a kind could not be looked up).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// It may pass later: the API server unreachable or failing, a kind not served yet.
    Unavailable(String),
    /// It will not pass as it is: an invalid object, an API version with no successor.
    Invalid(String),
    /// RBAC refused the identity the manager acts with for the Instance ([`crate::tenant`]).
    Forbidden(String),
}

/// The cluster side of running tasks: the API resources of the kinds seen so far (found by
/// discovery with the manager's own client, once per kind). Objects are written and read with
/// the client of the Instance's [`Tenant`].
pub struct Objects {
    client: Client,
    /// By `apiVersion/kind`: the kinds found, and the removed API versions not served (a CRD
    /// not installed yet is looked up again).
    resources: Memo<Result<(ApiResource, bool), Lookup>>,
    /// By `apiVersion/kind`: the fields the API server's schema was found not to declare.
    undeclared: Memo<Arc<Vec<undeclared::Field>>>,
    /// Reads Pipe files instead of `exec` with the tenant's client (tests).
    files: Option<Arc<dyn PodFiles>>,
    /// The last log lines of failing containers, by Pod uid, container and run
    /// ([`log_key`]): read once per restart, not at every look at a waiting workload.
    logs: std::sync::Mutex<std::collections::HashMap<String, Option<String>>>,
    /// The failing containers of the Pods that workloads waiting own, by identity and Pod uid,
    /// with the Pod's resourceVersion then: a Pod unchanged is not read again ([`Objects::owned`]).
    pods: std::sync::Mutex<std::collections::HashMap<String, KeptPod>>,
    /// [`Objects::warning_events`]: by identity and namespace, the last list of Warning events
    /// and when (those nobody asked for within [`WARNINGS_AGE`] dropped at each ask).
    warning_lists: std::sync::Mutex<std::collections::HashMap<String, SharedList<Event>>>,
    /// [`Objects::live_versions`]: by identity, namespace and kind, the last list and when.
    lists: std::sync::Mutex<std::collections::HashMap<String, Arc<tokio::sync::Mutex<Listed>>>>,
}

/// Most failing containers whose last log lines are kept ([`Objects::troubles`]); past it, all
/// are forgotten and read again (at 2 KiB each, at most 8 MiB).
const MAX_LOGS_KEPT: usize = 4096;

/// Most Pods whose failing containers are kept ([`Objects::owned`]); past it, all are
/// forgotten and read again.
const MAX_PODS_KEPT: usize = 4096;

/// How long a list of a namespace's Warning events is shared ([`Objects::warning_events`]):
/// less than the 5 s between two looks at a waiting step, so each look sees a newer list.
const WARNINGS_AGE: std::time::Duration = std::time::Duration::from_secs(4);

/// A list shared by the reconciles that ask within its age: when it was last asked for, and
/// the last list (`None`: not listed yet) with when it was listed.
type SharedList<T> = (
    Option<std::time::Instant>,
    Arc<tokio::sync::Mutex<Option<(std::time::Instant, Arc<Vec<T>>)>>>,
);

/// A Pod's resourceVersion when it was read, and its failing containers then.
type KeptPod = (String, Arc<Vec<Trouble>>);

/// The failing containers of one Pod ([`crate::containers::troubles`]), without their logs.
#[derive(Debug, Clone)]
struct PodTroubles {
    namespace: String,
    uid: String,
    troubles: Arc<Vec<Trouble>>,
}

/// What identifies one run of a failing container: who reads it, its Pod's uid, the container,
/// its restarts and how its last run ended. Its logs are read once for each.
fn log_key(who: &str, pod_uid: &str, t: &Trouble) -> String {
    format!(
        "{who}|{pod_uid}|{}|{}|{}|{:?}|{}",
        t.pod, t.container, t.restarts, t.exit_code, t.reason
    )
}

/// How many objects one page of [`list_versions`] holds.
const VERSIONS_PAGE: u32 = 500;

/// The names and resourceVersions of the objects kudo applied (label [`labels::MANAGED_BY`])
/// that `api` lists, as metadata, in pages of [`VERSIONS_PAGE`]: each object's metadata comes
/// with its managedFields (a few KiB), so a list of 10,000 held whole took tens of MiB for a
/// moment; a page at a time, it takes about one page's worth. The label is matched here, not
/// by a label selector: kube-apiserver 1.24 answers a label-selected list with a `limit` by
/// skipping the matching objects of the first keys it read when one of those did not match
/// (measured: the 499 ConfigMaps sorted after `kube-root-ca.crt` left out of the first page,
/// so drift dry-ran them on every check), and an unselected paged list returns every object.
async fn list_versions(
    api: &Api<DynamicObject>,
) -> kube::Result<std::collections::HashMap<String, String>> {
    let mut out = std::collections::HashMap::new();
    let mut lp = ListParams::default().limit(VERSIONS_PAGE);
    loop {
        let page = api.list_metadata(&lp).await?;
        out.extend(page.items.into_iter().filter_map(|o| {
            let managed = o
                .metadata
                .labels
                .as_ref()
                .and_then(|l| l.get(labels::MANAGED_BY))
                .is_some_and(|v| v == labels::MANAGED_BY_KUDO);
            managed.then_some((o.metadata.name?, o.metadata.resource_version?))
        }));
        match page.metadata.continue_.filter(|c| !c.is_empty()) {
            Some(token) => lp = lp.continue_token(&token),
            None => return Ok(out),
        }
    }
}

/// The namespace of `obj`: its own, else its Instance's.
pub(crate) fn namespace_of(obj: &Value, inst: &Instance) -> String {
    obj.pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .map(String::from)
        .or_else(|| inst.namespace())
        .unwrap_or_default()
}

/// The resourceVersions of the objects kudo applied of one kind in one namespace, by name.
pub type Versions = Arc<std::collections::HashMap<String, String>>;

/// One kind's list for [`Objects::live_versions`]: when it was made, and what it found
/// (`None`: it cannot be listed, as that identity).
type Listed = Option<(std::time::Instant, Option<Versions>)>;

impl Objects {
    /// Kinds looked up through `client` (discovery); Pipe files read with `exec`.
    pub fn new(client: Client) -> Objects {
        Objects {
            files: None,
            client,
            resources: Memo::default(),
            undeclared: Memo::default(),
            lists: std::sync::Mutex::default(),
            logs: std::sync::Mutex::default(),
            pods: std::sync::Mutex::default(),
            warning_lists: std::sync::Mutex::default(),
        }
    }

    /// The same, Pipe files read by `files` (tests).
    pub fn with_files(mut self, files: Arc<dyn PodFiles>) -> Objects {
        self.files = Some(files);
        self
    }

    /// How Pipe files are read for `tenant`: `exec` with its client.
    pub fn files(&self, tenant: &Tenant) -> Arc<dyn PodFiles> {
        match &self.files {
            Some(f) => f.clone(),
            None => Arc::new(ExecFiles::new(tenant.client.clone())),
        }
    }

    /// The API resource of `obj`'s kind, and whether it is namespaced.
    async fn resource(&self, obj: &Value) -> Result<(ApiResource, bool), Lookup> {
        let api_version = obj.get("apiVersion").and_then(Value::as_str).unwrap_or("");
        let kind = obj.get("kind").and_then(Value::as_str).unwrap_or("");
        let key = format!("{api_version}/{kind}");
        if let Some(found) = self.resources.get(&key) {
            return found;
        }
        let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
        let gvk = GroupVersionKind::gvk(group, version, kind);
        let found = oneshot::pinned_kind(&self.client, &gvk)
            .await
            .map(|(ar, caps)| (ar, caps.scope == Scope::Namespaced))
            .map_err(|e| Lookup::of(&e, kind, api_version));
        let removed = matches!(found, Err(Lookup::NotServed { .. }))
            && successor::removal(api_version, kind).is_some();
        if found.is_ok() || removed {
            self.resources.put(key, found.clone(), |_| false);
        }
        found
    }

    fn api(tenant: &Tenant, ar: &ApiResource, namespaced: bool, ns: &str) -> Api<DynamicObject> {
        if namespaced {
            Api::namespaced_with(tenant.client.clone(), ns, ar)
        } else {
            Api::all_with(tenant.client.clone(), ar)
        }
    }

    /// Applies `obj` (labelled for its Instance) and returns what the API server stored. An object in
    /// an API version the cluster does not serve is applied as its successor when
    /// [`successor::convert`] knows one, which is noted in `notes`.
    pub async fn apply(
        &self,
        tenant: &Tenant,
        obj: Value,
        inst: &Instance,
        notes: &Notes,
    ) -> Result<Value, Failure> {
        self.apply_with(tenant, obj, inst, notes, false)
            .await
            .map(|(_, stored)| stored)
    }

    /// What applying `obj` (labelled for its Instance) would store, as a server-side apply dry
    /// run (`dryRun=All`, same field manager, forced, same conversions as [`Objects::apply`]),
    /// and the live object read just before (`None`: there is none). Nothing is written.
    pub async fn dry_run(
        &self,
        tenant: &Tenant,
        obj: Value,
        inst: &Instance,
    ) -> Result<(Option<Value>, Value), Failure> {
        self.apply_with(tenant, obj, inst, &Notes::default(), true)
            .await
    }

    /// The resourceVersions of the objects of `obj`'s kind that kudo applied in `obj`'s
    /// namespace (label [`labels::MANAGED_BY`]), by name, listed as `tenant` with metadata
    /// only, and when that list was sent: one request for every Instance there whose drift is
    /// checked within `max_age` (drift, `crate::drift`). `Ok(None)` when that identity may
    /// not list the kind (or it is not served): its objects are then checked one by one. `Err` when the API server did not
    /// answer the list (restarting, overloaded): nothing is kept, the check waits for the next
    /// one rather than dry-running every object one by one (after an API server restart at
    /// 10,000 Instances that fallback sent 166 requests/s).
    pub async fn live_versions(
        &self,
        tenant: &Tenant,
        obj: &Value,
        inst: &Instance,
        max_age: std::time::Duration,
    ) -> Result<Option<(std::time::Instant, Versions)>, String> {
        let Ok((ar, namespaced)) = self.resource(obj).await else {
            return Ok(None);
        };
        let ns = namespace_of(obj, inst);
        let scope = if namespaced { ns.as_str() } else { "" };
        let key = format!("{}|{scope}|{}/{}", tenant.who(), ar.api_version, ar.kind);
        let Some(slot) = self
            .lists
            .lock()
            .ok()
            .map(|mut lists| lists.entry(key).or_default().clone())
        else {
            return Ok(None);
        };
        let mut listed = slot.lock().await;
        if let Some((at, versions)) = listed.as_ref()
            && at.elapsed() < max_age
        {
            return Ok(versions.clone().map(|v| (*at, v)));
        }
        let api = Self::api(tenant, &ar, namespaced, scope);
        let sent = std::time::Instant::now();
        let versions = match list_versions(&api).await {
            Ok(found) => Some(Arc::new(found)),
            // Refused (RBAC) or not listable: its objects are checked one by one until the
            // list is tried again.
            Err(kube::Error::Api(e)) if (403..=405).contains(&e.code) => {
                tracing::debug!(kind = %ar.kind, namespace = %scope, error = %e, "drift: the kind cannot be listed; its objects are checked one by one");
                None
            }
            // The API server did not answer: nothing is kept.
            Err(e) => {
                tracing::debug!(kind = %ar.kind, namespace = %scope, error = %e, "drift: the list failed; tried again at the next check");
                return Err(format!("the list of {} failed: {e}", ar.kind));
            }
        };
        *listed = Some((sent, versions.clone()));
        Ok(versions.map(|v| (sent, v)))
    }

    /// [`Objects::apply`], or with `dry_run` [`Objects::dry_run`].
    async fn apply_with(
        &self,
        tenant: &Tenant,
        obj: Value,
        inst: &Instance,
        notes: &Notes,
        dry_run: bool,
    ) -> Result<(Option<Value>, Value), Failure> {
        let (mut obj, (ar, namespaced)) = match self.resource(&obj).await {
            Ok(found) => (obj, found),
            Err(l @ Lookup::NotServed { .. }) => match successor::convert(&obj) {
                None => return Err(Failure::Unavailable(l.to_string())),
                Some(Err(unmapped)) => return Err(Failure::Invalid(unmapped.to_string())),
                Some(Ok(converted)) => {
                    let found = self
                        .resource(&converted.object)
                        .await
                        .map_err(|l| Failure::Unavailable(l.to_string()))?;
                    if let Ok(mut n) = notes.lock() {
                        n.push(conversion_note(&obj, &converted));
                    }
                    (converted.object, found)
                }
            },
            Err(l) => return Err(Failure::Unavailable(l.to_string())),
        };
        let ns = inst.namespace().unwrap_or_default();
        kudo_crd::applied::placed(&mut obj, inst, namespaced);
        let name = obj
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let target_ns = obj
            .pointer("/metadata/namespace")
            .and_then(Value::as_str)
            .unwrap_or(&ns)
            .to_string();
        let api = Self::api(tenant, &ar, namespaced, &target_ns);
        let mut params = PatchParams::apply(labels::MANAGER_FIELD_MANAGER).force();
        if dry_run {
            params = params.dry_run();
        }
        let what = format!("{} {name}", ar.kind);
        let what = if namespaced && target_ns != ns {
            format!("{what} (namespace {target_ns})")
        } else if namespaced {
            what
        } else {
            format!("{what} (cluster-scoped)")
        };
        if !dry_run && kudo_pkg::preflight::is_crd(&obj) {
            crd_preflight(tenant, &obj, inst, notes, &what).await?;
        }
        let kind_key = format!(
            "{}/{}",
            obj.get("apiVersion").and_then(Value::as_str).unwrap_or(""),
            ar.kind
        );
        // The fields found undeclared before go at once; each refusal adds the ones it names,
        // and a refusal naming none ends it.
        let live = if dry_run {
            match api.get_opt(&name).await {
                Ok(live) => live.map(|o| serde_json::to_value(o).unwrap_or(Value::Null)),
                Err(e) => return Err(classify(&e, tenant, "get", &what)),
            }
        } else {
            None
        };
        let mut known = self.undeclared.get(&kind_key).unwrap_or_default();
        let mut dropped = drop_fields(&mut obj, &known);
        for _ in 0..MAX_UNDECLARED_ROUNDS {
            if !dropped.is_empty()
                && let Ok(mut n) = notes.lock()
            {
                n.push(format!(
                    "{what}: dropped {}: not declared by the API server's schema of {} (the API server drops unknown fields on create and update, as KUDO and kubectl apply wrote them; server-side apply refuses the object)",
                    dropped.join(", "),
                    obj.get("apiVersion").and_then(Value::as_str).unwrap_or("")
                ));
            }
            let e = match api.patch(&name, &params, &Patch::Apply(&obj)).await {
                Ok(stored) => {
                    return Ok((live, serde_json::to_value(stored).unwrap_or(Value::Null)));
                }
                Err(e) => e,
            };
            let kube::Error::Api(status) = &e else {
                return Err(classify(&e, tenant, "apply", &what));
            };
            let found = undeclared::paths(&status.message);
            let more = drop_fields(&mut obj, &found);
            if more.is_empty() {
                return Err(classify(&e, tenant, "apply", &what));
            }
            known = Arc::new(known.iter().cloned().chain(found).collect());
            self.undeclared
                .put(kind_key.clone(), known.clone(), |_| false);
            dropped.extend(more);
        }
        Err(Failure::Invalid(format!(
            "the API server refused {what}: it kept naming undeclared fields after {MAX_UNDECLARED_ROUNDS} rounds of dropping them"
        )))
    }

    /// The uids of `stored` and of the objects it owns (a Deployment's ReplicaSets and their
    /// Pods, the Pods of other workloads), and the failing containers of those Pods (for a Pod,
    /// its own). The Pods are listed as metadata; only when one is new or changed since the
    /// last look (its resourceVersion) are they listed in full, so a workload that waits costs
    /// one small list per look, and a full one per restart of its containers. What cannot be
    /// read is left out: this only explains a wait.
    async fn owned(&self, tenant: &Tenant, stored: &Value) -> (Vec<String>, Vec<PodTroubles>) {
        let ns = stored
            .pointer("/metadata/namespace")
            .and_then(Value::as_str);
        let uid = stored.pointer("/metadata/uid").and_then(Value::as_str);
        let (Some(ns), Some(uid)) = (ns, uid) else {
            return (Vec::new(), Vec::new());
        };
        let mut owners = vec![uid.to_string()];
        if stored.get("kind").and_then(Value::as_str) == Some("Pod") {
            let troubles = PodTroubles {
                namespace: ns.to_string(),
                uid: uid.to_string(),
                troubles: Arc::new(containers::troubles(stored)),
            };
            return (owners, vec![troubles]);
        }
        let Some(selector) = owned_selector(stored) else {
            return (owners, Vec::new());
        };
        let lp = ListParams::default().labels(&selector);
        if stored.get("kind").and_then(Value::as_str) == Some("Deployment") {
            let sets: Api<ReplicaSet> = Api::namespaced(tenant.client.clone(), ns);
            if let Ok(list) = sets.list_metadata(&lp).await {
                owners.extend(owned_by(list.items.iter().map(|o| &o.metadata), &owners));
            }
        }
        let pods: Api<Pod> = Api::namespaced(tenant.client.clone(), ns);
        let Ok(list) = pods.list_metadata(&lp).await else {
            return (owners, Vec::new());
        };
        let uids = owned_by(list.items.iter().map(|o| &o.metadata), &owners);
        let who = tenant.who();
        let seen: Vec<(String, String)> = list
            .items
            .iter()
            .filter_map(|p| {
                Some((
                    p.metadata.uid.clone()?,
                    p.metadata.resource_version.clone()?,
                ))
            })
            .filter(|(uid, _)| uids.contains(uid))
            .collect();
        let known = |kept: &std::collections::HashMap<String, KeptPod>| {
            seen.iter()
                .map(|(uid, rv)| {
                    let (was, troubles) = kept.get(&format!("{who}|{uid}"))?;
                    (was == rv).then(|| PodTroubles {
                        namespace: ns.to_string(),
                        uid: uid.clone(),
                        troubles: troubles.clone(),
                    })
                })
                .collect::<Option<Vec<_>>>()
        };
        owners.extend(uids.iter().cloned());
        if let Some(all) = self.pods.lock().ok().and_then(|kept| known(&kept)) {
            return (owners, all);
        }
        let Ok(full) = pods.list(&lp).await else {
            return (owners, Vec::new());
        };
        let mut out = Vec::new();
        for pod in full
            .items
            .iter()
            .filter(|p| p.metadata.uid.as_ref().is_some_and(|u| uids.contains(u)))
        {
            let Ok(value) = serde_json::to_value(pod) else {
                continue;
            };
            let uid = pod.metadata.uid.clone().unwrap_or_default();
            let troubles = Arc::new(containers::troubles(&value));
            if let (Some(rv), Ok(mut kept)) = (&pod.metadata.resource_version, self.pods.lock()) {
                if kept.len() >= MAX_PODS_KEPT {
                    kept.clear();
                }
                kept.insert(format!("{who}|{uid}"), (rv.clone(), troubles.clone()));
            }
            out.push(PodTroubles {
                namespace: ns.to_string(),
                uid,
                troubles,
            });
        }
        (owners, out)
    }

    /// What explains why `stored` (an object as the API server returned it, not healthy yet)
    /// waits: the recent Warning events of it and of what it owns, and the failing containers
    /// of its Pods (or its own, for a Pod).
    pub async fn reports(&self, tenant: &Tenant, stored: &Value) -> (Vec<Warning>, Vec<Trouble>) {
        let (owners, pods) = self.owned(tenant, stored).await;
        if owners.is_empty() {
            return (Vec::new(), Vec::new());
        }
        let warnings = self.warnings(tenant, stored, &owners).await;
        (warnings, self.troubles(tenant, &pods).await)
    }

    /// The failing containers of `stored` (a Pipe Pod, say) or of the Pods it owns, without its
    /// Warning events (a Pipe step names only its containers).
    pub async fn failing_containers(&self, tenant: &Tenant, stored: &Value) -> Vec<Trouble> {
        let (_, pods) = self.owned(tenant, stored).await;
        self.troubles(tenant, &pods).await
    }

    /// The failing containers of `pods` ([`crate::containers::troubles`]), at most
    /// [`containers::MAX_TROUBLES`], each with its last log lines when it has run (read with
    /// the tenant's rights, once per run of the container; left out when they cannot be read).
    async fn troubles(&self, tenant: &Tenant, pods: &[PodTroubles]) -> Vec<Trouble> {
        let mut found: Vec<(&str, &str, Trouble)> = pods
            .iter()
            .flat_map(|p| {
                p.troubles
                    .iter()
                    .map(|t| (p.namespace.as_str(), p.uid.as_str(), t.clone()))
            })
            .collect();
        found.truncate(containers::MAX_TROUBLES);
        let mut out = Vec::new();
        for (ns, uid, mut t) in found {
            if !t.never_ran {
                let key = log_key(&tenant.who(), uid, &t);
                let known = self.logs.lock().ok().and_then(|m| m.get(&key).cloned());
                t.logs = match known {
                    Some(logs) => logs,
                    None => {
                        let pods: Api<Pod> = Api::namespaced(tenant.client.clone(), ns);
                        let lp = LogParams {
                            container: Some(t.container.clone()),
                            tail_lines: Some(containers::LOG_LINES),
                            limit_bytes: Some(containers::LOG_BYTES),
                            ..LogParams::default()
                        };
                        let logs = pods.logs(&t.pod, &lp).await.ok();
                        if let Ok(mut m) = self.logs.lock() {
                            if m.len() >= MAX_LOGS_KEPT {
                                m.clear();
                            }
                            m.insert(key, logs.clone());
                        }
                        logs
                    }
                };
            }
            out.push(t);
        }
        out
    }

    /// The recent Warning events of `stored` (an object as the API server returned it) and of
    /// the objects it owns (a Deployment's ReplicaSets and their Pods, the Pods of other
    /// workloads), most recent first. Recent: since kudo-manager last changed the object.
    /// Events that cannot be read are left out: they only explain a wait.
    async fn warnings(&self, tenant: &Tenant, stored: &Value, owners: &[String]) -> Vec<Warning> {
        let Some(ns) = stored
            .pointer("/metadata/namespace")
            .and_then(Value::as_str)
        else {
            return Vec::new();
        };
        let since = changed_at(stored);
        let Some(list) = self.warning_events(tenant, ns).await else {
            return Vec::new();
        };
        let mut found: Vec<(Timestamp, Warning)> = list
            .iter()
            .filter(|e| {
                e.involved_object
                    .uid
                    .as_ref()
                    .is_some_and(|u| owners.contains(u))
            })
            .filter_map(|e| {
                let last = e
                    .series
                    .as_ref()
                    .and_then(|s| s.last_observed_time.as_ref().map(|t| t.0))
                    .or(e.last_timestamp.as_ref().map(|t| t.0))
                    .or(e.event_time.as_ref().map(|t| t.0))
                    .or(e.first_timestamp.as_ref().map(|t| t.0))?;
                // The Event API rate-limits updates of a repeated event (client-go's spam
                // filter refills once per 5 minutes), so a warning still happening may carry an
                // older time: those of the last 5 minutes before the change are named too, but
                // only newer ones can fail the step, and only once the controller has had
                // EVENT_SETTLE to act on the change (times are in whole seconds, and a sync of
                // the old spec may still be under way when the change lands).
                let after_change = since.is_none_or(|s| last >= s + EVENT_SETTLE);
                if since.is_some_and(|s| last < s - EVENT_LAG) {
                    return None;
                }
                let o = &e.involved_object;
                Some((
                    last,
                    Warning {
                        object: format!(
                            "{} {}",
                            o.kind.as_deref().unwrap_or(""),
                            o.name.as_deref().unwrap_or("")
                        ),
                        reason: e.reason.clone().unwrap_or_default(),
                        message: e.message.clone().unwrap_or_default(),
                        count: e
                            .series
                            .as_ref()
                            .and_then(|s| s.count)
                            .or(e.count)
                            .unwrap_or(1)
                            .into(),
                        after_change,
                    },
                ))
            })
            .collect();
        found.sort_by_key(|w| std::cmp::Reverse(w.0));
        found.into_iter().map(|(_, w)| w).collect()
    }

    /// The Warning events of namespace `ns` as `tenant` lists them, one list shared for
    /// [`WARNINGS_AGE`] by every workload waiting there: 100 waiting in one namespace cost one
    /// list per look, not 100 lists of the same events. `None` when they cannot be listed.
    async fn warning_events(&self, tenant: &Tenant, ns: &str) -> Option<Arc<Vec<Event>>> {
        let key = format!("{}|{ns}", tenant.who());
        let slot = {
            let mut lists = self.warning_lists.lock().ok()?;
            lists.retain(|k, (asked, _)| {
                k == &key || asked.is_some_and(|a| a.elapsed() < WARNINGS_AGE)
            });
            let entry = lists.entry(key).or_default();
            entry.0 = Some(std::time::Instant::now());
            entry.1.clone()
        };
        let mut listed = slot.lock().await;
        if let Some((at, events)) = listed.as_ref()
            && at.elapsed() < WARNINGS_AGE
        {
            return Some(events.clone());
        }
        let api: Api<Event> = Api::namespaced(tenant.client.clone(), ns);
        let list = api
            .list(&ListParams::default().fields("type=Warning"))
            .await
            .ok()?;
        let events = Arc::new(list.items);
        *listed = Some((std::time::Instant::now(), events.clone()));
        Some(events)
    }

    /// Which of `rights` (in namespace `ns`) the identity of `tenant` lacks, asked of the API
    /// server with a SelfSubjectAccessReview each, sent as that identity (every authenticated
    /// user may ask about itself: the manager needs no right of its own for it). A review that
    /// cannot be made is no refusal: the step that needs the right reports it.
    pub async fn denied(&self, tenant: &Tenant, ns: &str, rights: &[Right]) -> Vec<Right> {
        let reviews: Api<SelfSubjectAccessReview> = Api::all(tenant.client.clone());
        let asks = rights.iter().map(|r| {
            let (resource, subresource) = r.parts();
            let review = SelfSubjectAccessReview {
                spec: SelfSubjectAccessReviewSpec {
                    resource_attributes: Some(ResourceAttributes {
                        namespace: Some(ns.to_string()),
                        verb: Some(r.verb.to_string()),
                        group: Some(String::new()),
                        resource: Some(resource.to_string()),
                        subresource: subresource.map(String::from),
                        ..ResourceAttributes::default()
                    }),
                    ..SelfSubjectAccessReviewSpec::default()
                },
                ..SelfSubjectAccessReview::default()
            };
            let reviews = reviews.clone();
            async move {
                match reviews.create(&PostParams::default(), &review).await {
                    Ok(answer) => !answer.status.as_ref().is_some_and(|s| s.allowed),
                    Err(e) => {
                        tracing::debug!(error = %e, right = %r, "a SelfSubjectAccessReview could not be made");
                        false
                    }
                }
            }
        });
        let answers = futures::future::join_all(asks).await;
        rights
            .iter()
            .zip(answers)
            .filter(|(_, denied)| *denied)
            .map(|(r, _)| *r)
            .collect()
    }

    /// Deletes `obj`; one that is already gone is fine, and so is one of a kind the cluster
    /// does not serve (there is nothing of it to delete).
    pub async fn delete(
        &self,
        tenant: &Tenant,
        obj: &Value,
        inst: &Instance,
    ) -> Result<(), Failure> {
        let (ar, namespaced) = match self.resource(obj).await {
            Ok(found) => found,
            Err(Lookup::NotServed { .. }) => return Ok(()),
            Err(l) => return Err(Failure::Unavailable(l.to_string())),
        };
        let ns = namespace_of(obj, inst);
        let name = obj
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or("");
        let api = Self::api(tenant, &ar, namespaced, &ns);
        match api.delete(name, &DeleteParams::background()).await {
            Ok(_) => Ok(()),
            Err(kube::Error::Api(s)) if s.is_not_found() => Ok(()),
            Err(e) => Err(classify(
                &e,
                tenant,
                "delete",
                &format!("{} {name}", ar.kind),
            )),
        }
    }
}

/// What a step's tasks note for their plan's status (`status.planStatus.PLAN.warnings`): each
/// object applied otherwise than its template says (as the successor of an API version the
/// cluster does not serve; without fields the API server does not declare).
pub type Notes = std::sync::Mutex<Vec<String>>;

/// `Role r: applied as rbac.authorization.k8s.io/v1: ...`.
/// The CRD preflight before a CRD is applied in any plan ([`kudo_cluster::crd_preflight`], with
/// the Instance's identity): a change OLM's rules call unsafe fails the step (FATAL, naming the
/// CRD, version, field and rule) rather than leave a half-upgraded operator, unless the change
/// was made with `kudo upgrade --force` ([`kudo_crd::revision::preflight_for`]): then it is
/// applied and noted.
async fn crd_preflight(
    tenant: &Tenant,
    crd: &Value,
    inst: &Instance,
    notes: &Notes,
    what: &str,
) -> Result<(), Failure> {
    let checked = kudo_cluster::crd_preflight::check(&tenant.client, crd).await;
    if let kudo_cluster::crd_preflight::Preflight::Unreadable(why) = &checked
        && let Ok(mut n) = notes.lock()
    {
        n.push(format!(
            "{what}: not checked against the CRD in the cluster (the CRD preflight), which this identity cannot read: {why}"
        ));
    }
    let refusals = checked.refusals();
    if refusals.is_empty() {
        return Ok(());
    }
    let said: Vec<String> = refusals
        .iter()
        .map(|f| f.to_diagnostic().to_string())
        .collect();
    let said = said.join("; ");
    if kudo_crd::revision::preflight_for(inst).force {
        if let Ok(mut n) = notes.lock() {
            n.push(format!(
                "{what}: applied despite the CRD preflight, as kudo upgrade --force asked: {said}"
            ));
        }
        return Ok(());
    }
    Err(Failure::Invalid(format!(
        "{what} is not applied: the change is unsafe for the CRD in the cluster: {said} (kudo upgrade --force applies it anyway)"
    )))
}

fn conversion_note(obj: &Value, c: &successor::Converted) -> String {
    let r = c.removal;
    let mut note = format!(
        "{} {}: applied as {}, since the cluster does not serve {} (removed in Kubernetes {}, {})",
        r.kind,
        obj.pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or(""),
        r.to.unwrap_or(""),
        r.from,
        r.removed_in,
        r.reference()
    );
    for n in &c.notes {
        note.push_str(&format!("; {n}"));
    }
    note
}

/// How much older than kudo-manager's last change of an object a Warning event may look and
/// still be named (client-go's event spam filter lets a repeated event update once per 5
/// minutes).
const EVENT_LAG: k8s_openapi::jiff::SignedDuration =
    k8s_openapi::jiff::SignedDuration::from_secs(300);

/// How long after kudo-manager's change of an object a Warning event must come to be about
/// the object as changed.
const EVENT_SETTLE: k8s_openapi::jiff::SignedDuration =
    k8s_openapi::jiff::SignedDuration::from_secs(2);

/// The uids of the objects among `objects` whose controller is one of `owners`.
fn owned_by<'a>(objects: impl Iterator<Item = &'a ObjectMeta>, owners: &[String]) -> Vec<String> {
    objects
        .filter(|m| {
            m.owner_references
                .iter()
                .flatten()
                .any(|r| r.controller == Some(true) && owners.contains(&r.uid))
        })
        .filter_map(|m| m.uid.clone())
        .collect()
}

/// When kudo-manager last changed `stored` (its server-side apply entry in `managedFields`).
fn changed_at(stored: &Value) -> Option<Timestamp> {
    stored
        .pointer("/metadata/managedFields")?
        .as_array()?
        .iter()
        .filter(|f| {
            f.get("manager").and_then(Value::as_str) == Some(labels::MANAGER_FIELD_MANAGER)
                && f.get("operation").and_then(Value::as_str) == Some("Apply")
        })
        .filter_map(|f| f.get("time")?.as_str()?.parse::<Timestamp>().ok())
        .max()
}

/// Why the API resource of a kind is not known.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum Lookup {
    /// Discovery does not list the kind in that group and version.
    #[error(
        "kind {kind} of {api_version} is not served by this cluster (a CRD not installed, or an API version the cluster no longer serves)"
    )]
    NotServed {
        /// The kind.
        kind: String,
        /// Its `apiVersion`.
        api_version: String,
    },
    /// Discovery failed.
    #[error("cannot look up kind {kind} of {api_version}: {message}")]
    Failed {
        /// The kind.
        kind: String,
        /// Its `apiVersion`.
        api_version: String,
        /// What the client said.
        message: String,
    },
}

impl Lookup {
    fn of(e: &kube::Error, kind: &str, api_version: &str) -> Lookup {
        let (kind, api_version) = (kind.to_string(), api_version.to_string());
        match e {
            kube::Error::Api(s) if s.code == 404 => Lookup::NotServed { kind, api_version },
            kube::Error::Discovery(_) => Lookup::NotServed { kind, api_version },
            other => Lookup::Failed {
                kind,
                api_version,
                message: other.to_string(),
            },
        }
    }
}

/// Removes the fields at `paths` from `obj`; the ones that were there, as written.
fn drop_fields(obj: &mut Value, paths: &[undeclared::Field]) -> Vec<String> {
    paths
        .iter()
        .filter(|(steps, _)| undeclared::remove(obj, steps))
        .map(|(_, text)| text.clone())
        .collect()
}

/// Most rounds of dropping undeclared fields before an apply gives up.
const MAX_UNDECLARED_ROUNDS: usize = 4;

/// What server-side apply says when the object does not fit the kind's schema (a field of the
/// wrong type, an undeclared field): a 500, though the object, not the server, is at fault.
const UNTYPED: &str = "failed to create typed patch object";

/// An invalid object will stay invalid: [`Failure::Invalid`]. A refusal by RBAC names the
/// object and who was refused: [`Failure::Forbidden`]. Anything else may pass later.
pub(crate) fn classify(e: &kube::Error, tenant: &Tenant, verb: &str, what: &str) -> Failure {
    match e {
        kube::Error::Api(s) if s.code == 403 => Failure::Forbidden(format!(
            "{} may not {verb} {what}: {}",
            tenant.who(),
            s.message
        )),
        kube::Error::Api(s) if s.is_invalid() || s.code == 400 || s.message.contains(UNTYPED) => {
            Failure::Invalid(format!("the API server refused {what}: {}", s.message))
        }
        kube::Error::Api(s) => Failure::Unavailable(format!("{what}: {} ({})", s.message, s.code)),
        other => Failure::Unavailable(format!("{what}: {other}")),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use kudo_testkit::mock_api::{self, Seen};
    use serde_json::{Value, json};

    use super::*;

    /// A Deployment's Pod whose container keeps failing, at resourceVersion `rv` with
    /// `restarts`; as metadata only when the request asks for that.
    fn pods(seen: &Seen, rv: &str, restarts: i64) -> Value {
        let metadata = json!({"name": "web-1", "namespace": "ns", "uid": "pod-1",
            "resourceVersion": rv, "labels": {"app": "web"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-x",
                "uid": "rs-1", "controller": true}]});
        if seen.accept.contains("PartialObjectMetadataList") {
            return json!({"kind": "PartialObjectMetadataList", "apiVersion": "meta.k8s.io/v1",
                "metadata": {}, "items": [{"metadata": metadata}]});
        }
        json!({"kind": "PodList", "apiVersion": "v1", "metadata": {}, "items": [{
            "metadata": metadata,
            "status": {"containerStatuses": [{"name": "app", "restartCount": restarts,
                "image": "i", "imageID": "", "ready": false,
                "state": {"waiting": {"reason": "CrashLoopBackOff"}},
                "lastState": {"terminated": {"exitCode": 1, "reason": "Error"}}}]}}]})
    }

    #[tokio::test]
    async fn a_waiting_workloads_pods_are_read_in_full_and_logged_only_when_they_change() {
        let state = Arc::new(Mutex::new(("7".to_string(), 2_i64)));
        let now = state.clone();
        let (client, log) = mock_api::client("ns", move |seen: &Seen| {
            let (rv, restarts) = now.lock().unwrap().clone();
            match seen.path.as_str() {
                "/apis/apps/v1/namespaces/ns/replicasets" => (
                    200,
                    json!({
                    "kind": "PartialObjectMetadataList", "apiVersion": "meta.k8s.io/v1",
                    "metadata": {}, "items": [{"metadata": {"name": "web-x", "uid": "rs-1",
                        "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment",
                            "name": "web", "uid": "dep-1", "controller": true}]}}]}),
                ),
                "/api/v1/namespaces/ns/pods" => (200, pods(seen, &rv, restarts)),
                "/api/v1/namespaces/ns/pods/web-1/log" => (200, json!("panic: no config")),
                _ => (404, mock_api::status(404, "NotFound", "not found")),
            }
        });
        let objects = Objects::new(client.clone());
        let tenant = Tenant {
            client,
            service_account: None,
        };
        let deployment = json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "ns", "uid": "dep-1"},
            "spec": {"selector": {"matchLabels": {"app": "web"}}}});
        let mut looks = Vec::new();
        for change in [None, None, Some(("9", 3))] {
            if let Some((rv, restarts)) = change {
                *state.lock().unwrap() = (rv.to_string(), restarts);
            }
            log.lock().unwrap().clear();
            let troubles = objects.failing_containers(&tenant, &deployment).await;
            assert_eq!(troubles.len(), 1, "{troubles:?}");
            assert_eq!(troubles[0].restarts, state.lock().unwrap().1);
            assert_eq!(troubles[0].logs.as_deref(), Some("panic: no config"));
            let requests: Vec<String> = log
                .lock()
                .unwrap()
                .iter()
                .map(|s| {
                    let full = !s.accept.contains("PartialObjectMetadataList");
                    format!(
                        "{}{}",
                        s.path.rsplit('/').next().unwrap_or(""),
                        if full { "" } else { " (metadata)" }
                    )
                })
                .collect();
            looks.push(requests);
        }
        assert_eq!(
            looks,
            [
                vec!["replicasets (metadata)", "pods (metadata)", "pods", "log"],
                // Unchanged: the metadata alone; the failure and its log lines as they were.
                vec!["replicasets (metadata)", "pods (metadata)"],
                // It restarted: read again, and its new run's log lines.
                vec!["replicasets (metadata)", "pods (metadata)", "pods", "log"],
            ]
        );
    }

    #[tokio::test]
    async fn the_versions_drift_compares_with_are_listed_a_page_at_a_time() {
        let (client, log) = mock_api::client("ns", |seen: &Seen| {
            let item = |name: &str, rv: &str| {
                json!({"metadata": {"name": name, "resourceVersion": rv,
                    "labels": {"app.kubernetes.io/managed-by": "kudo"}}})
            };
            let other = json!({"metadata": {"name": "kube-root-ca.crt", "resourceVersion": "9"}});
            let (items, next) = if seen.query.contains("continue=") {
                (vec![item("c", "3")], "")
            } else {
                (vec![other, item("a", "1"), item("b", "2")], "page-2")
            };
            (
                200,
                json!({"kind": "PartialObjectMetadataList", "apiVersion": "meta.k8s.io/v1",
                "metadata": {"continue": next}, "items": items}),
            )
        });
        let ar = ApiResource::from_gvk(&GroupVersionKind::gvk("", "v1", "ConfigMap"));
        let api: Api<DynamicObject> = Api::namespaced_with(client, "ns", &ar);
        let versions = list_versions(&api).await.unwrap();
        let mut found: Vec<(String, String)> = versions.into_iter().collect();
        found.sort();
        let pair = |n: &str, rv: &str| (n.to_string(), rv.to_string());
        assert_eq!(found, [pair("a", "1"), pair("b", "2"), pair("c", "3")]);
        let queries: Vec<String> = log
            .lock()
            .unwrap()
            .iter()
            .map(|s| s.query.clone())
            .collect();
        assert_eq!(queries.len(), 2, "{queries:?}");
        assert!(
            queries
                .iter()
                .all(|q| q.contains(&format!("limit={VERSIONS_PAGE}"))),
            "{queries:?}"
        );
        assert!(queries[1].contains("continue=page-2"), "{queries:?}");
        // The label is matched here: a label-selected page skips objects on kube-apiserver 1.24.
        assert!(
            queries.iter().all(|q| !q.contains("labelSelector")),
            "{queries:?}"
        );
    }

    #[tokio::test]
    async fn workloads_waiting_in_one_namespace_share_one_list_of_its_warnings() {
        let (client, log) = mock_api::client("ns", |seen: &Seen| match seen.path.as_str() {
            "/api/v1/namespaces/ns/events" => (
                200,
                json!({"kind": "EventList", "apiVersion": "v1",
                "metadata": {}, "items": [{"metadata": {"name": "e1", "namespace": "ns"},
                    "involvedObject": {"kind": "Deployment", "name": "b", "uid": "dep-b"},
                    "type": "Warning", "reason": "FailedCreate", "message": "quota exceeded",
                    "lastTimestamp": "2026-11-29T10:00:00Z"}]}),
            ),
            _ => (
                200,
                json!({"kind": "List", "apiVersion": "v1", "metadata": {}, "items": []}),
            ),
        });
        let objects = Objects::new(client.clone());
        let tenant = Tenant {
            client,
            service_account: None,
        };
        let deployment = |name: &str| {
            json!({"apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": {"name": name, "namespace": "ns", "uid": format!("dep-{name}")},
                "spec": {"selector": {"matchLabels": {"app": name}}}})
        };
        let (a, _) = objects.reports(&tenant, &deployment("a")).await;
        let (b, _) = objects.reports(&tenant, &deployment("b")).await;
        assert!(a.is_empty(), "{a:?}");
        assert_eq!(b.len(), 1, "each sees its own: {b:?}");
        assert_eq!(b[0].reason, "FailedCreate");
        let lists = log
            .lock()
            .unwrap()
            .iter()
            .filter(|s| s.path.ends_with("/events"))
            .count();
        assert_eq!(lists, 1, "one list for both");
    }

    #[tokio::test]
    async fn a_list_the_api_server_did_not_answer_is_not_kept_and_a_refused_one_is() {
        let code = Arc::new(Mutex::new(500_u16));
        let now = code.clone();
        let (client, log) = mock_api::client("ns", move |seen: &Seen| match seen.path.as_str() {
            "/api/v1" => (
                200,
                json!({"kind": "APIResourceList", "groupVersion": "v1",
                "resources": [{"name": "configmaps", "singularName": "", "namespaced": true,
                    "kind": "ConfigMap", "verbs": ["list", "get", "patch"]}]}),
            ),
            _ => {
                let code = *now.lock().unwrap();
                (
                    code,
                    mock_api::status(code, "InternalError", "etcdserver: leader changed"),
                )
            }
        });
        let objects = Objects::new(client.clone());
        let tenant = Tenant {
            client,
            service_account: None,
        };
        let inst: Instance = serde_json::from_value(json!({"apiVersion": "kudo.dev/v1beta2",
            "kind": "Instance", "metadata": {"name": "i", "namespace": "ns"},
            "spec": {"operatorVersion": {"name": "ov"}}}))
        .unwrap();
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "a", "namespace": "ns"}});
        let age = std::time::Duration::from_secs(60);
        let lists = || {
            log.lock()
                .unwrap()
                .iter()
                .filter(|s| s.path.ends_with("/configmaps"))
                .count()
        };
        for _ in 0..2 {
            let found = objects.live_versions(&tenant, &cm, &inst, age).await;
            assert!(found.is_err(), "{found:?}");
        }
        assert_eq!(lists(), 2, "a failed list is tried again");
        *code.lock().unwrap() = 403;
        for _ in 0..2 {
            let found = objects.live_versions(&tenant, &cm, &inst, age).await;
            assert_eq!(found, Ok(None), "refused: checked one by one");
        }
        assert_eq!(lists(), 3, "a refusal is kept for the list's age");
    }
}
