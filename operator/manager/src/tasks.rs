//! Running a step: its tasks' objects rendered by `kudo-pkg`, applied with server-side apply
//! (field manager `kudo-manager`), labelled and owned by the Instance, then checked for health;
//! or deleted.
//!
//! Task kinds: `Apply`; `Delete`; `Toggle` (applies its resources when its parameter is true,
//! deletes them otherwise); `Pipe` (KUDO's: see [`super::pipe`]); `KudoOperator` (a child
//! Instance: see [`super::child`]); `Dummy` (does nothing). A step with `delete: true` deletes
//! its tasks' objects.

use std::sync::Arc;

use k8s_openapi::api::apps::v1::ReplicaSet;
use k8s_openapi::api::core::v1::{Event, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, ApiResource, DeleteParams, DynamicObject, ListParams, Patch, PatchParams};
use kube::core::GroupVersionKind;
use kube::discovery::{Scope, oneshot};
use kube::{Client, Resource, ResourceExt};
use kudo_pkg::render::{RenderOptions, render_task};
use kudo_pkg::step::{self, Action};
use kudo_pkg::{Diagnostic, Package, successor};
use serde_json::{Value, json};

use super::health::{Health, Warning, health, owned_selector, with_reports};
use super::memo::Memo;
use super::pipe::{ExecFiles, PodFiles};
use super::tenant::Tenant;
use super::undeclared;
use kudo_crd::labels;
use kudo_crd::v1beta2::Instance;

/// How a step ended this time round.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Every task done, every applied object healthy.
    Done,
    /// Applied, but an object is not healthy yet.
    Waiting(String),
    /// Failed; worth retrying (the API server was unreachable, a kind is not known yet...).
    Retry(String),
    /// Failed for good (an invalid object, a failed Job, a template that does not render).
    Fatal(String),
    /// RBAC refused the identity the manager acts with for the Instance
    /// ([`super::tenant`]): retried for a grace period (a RoleBinding just made may take a
    /// moment to reach the API server's authorizer), then failed for good.
    Forbidden(String),
}

/// Where in a plan a step is.
#[derive(Debug, Clone, Copy)]
pub struct StepRef<'a> {
    /// The plan.
    pub plan: &'a str,
    /// The phase.
    pub phase: &'a str,
    /// The step.
    pub step: &'a str,
}

impl StepRef<'_> {
    /// How the step's templates are rendered for `inst`.
    pub fn render_options(&self, inst: &Instance) -> RenderOptions {
        RenderOptions {
            instance: inst.name_any(),
            namespace: inst.namespace().unwrap_or_default(),
            plan: self.plan.into(),
        }
    }
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
}

impl Objects {
    /// Kinds looked up through `client` (discovery); Pipe files read with `exec`.
    pub fn new(client: Client) -> Objects {
        Objects {
            files: None,
            client,
            resources: Memo::default(),
            undeclared: Memo::default(),
        }
    }

    /// The same, Pipe files read by `files` (tests).
    pub fn with_files(mut self, files: Arc<dyn PodFiles>) -> Objects {
        self.files = Some(files);
        self
    }

    /// How Pipe files are read for `tenant`: `exec` with its client.
    pub(super) fn files(&self, tenant: &Tenant) -> Arc<dyn PodFiles> {
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

    /// Applies `obj` (already prepared) and returns what the API server stored. An object in
    /// an API version the cluster does not serve is applied as its successor when
    /// [`successor::convert`] knows one, which is noted in `notes`.
    pub(super) async fn apply(
        &self,
        tenant: &Tenant,
        obj: Value,
        inst: &Instance,
        notes: &Notes,
    ) -> Result<Value, Outcome> {
        let (mut obj, (ar, namespaced)) = match self.resource(&obj).await {
            Ok(found) => (obj, found),
            Err(l @ Lookup::NotServed { .. }) => match successor::convert(&obj) {
                None => return Err(Outcome::Retry(l.to_string())),
                Some(Err(unmapped)) => return Err(Outcome::Fatal(unmapped.to_string())),
                Some(Ok(converted)) => {
                    let found = self
                        .resource(&converted.object)
                        .await
                        .map_err(|l| Outcome::Retry(l.to_string()))?;
                    if let Ok(mut n) = notes.lock() {
                        n.push(conversion_note(&obj, &converted));
                    }
                    (converted.object, found)
                }
            },
            Err(l) => return Err(Outcome::Retry(l.to_string())),
        };
        let ns = inst.namespace().unwrap_or_default();
        if namespaced {
            let target = obj
                .pointer("/metadata/namespace")
                .and_then(Value::as_str)
                .map(String::from)
                .unwrap_or_else(|| ns.clone());
            obj["metadata"]["namespace"] = json!(target);
            if target == ns
                && let Some(owner) = inst.controller_owner_ref(&())
            {
                obj["metadata"]["ownerReferences"] = json!([owner]);
            }
        } else if let Some(m) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
            m.remove("namespace");
        }
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
        let params = PatchParams::apply(labels::MANAGER_FIELD_MANAGER).force();
        let what = format!("{} {name}", ar.kind);
        let what = if namespaced && target_ns != ns {
            format!("{what} (namespace {target_ns})")
        } else if namespaced {
            what
        } else {
            format!("{what} (cluster-scoped)")
        };
        let kind_key = format!(
            "{}/{}",
            obj.get("apiVersion").and_then(Value::as_str).unwrap_or(""),
            ar.kind
        );
        // The fields found undeclared before go at once; each refusal adds the ones it names,
        // and a refusal naming none ends it.
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
                Ok(stored) => return Ok(serde_json::to_value(stored).unwrap_or(Value::Null)),
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
        Err(Outcome::Fatal(format!(
            "the API server refused {what}: it kept naming undeclared fields after {MAX_UNDECLARED_ROUNDS} rounds of dropping them"
        )))
    }

    /// The recent Warning events of `stored` (an object as the API server returned it) and of
    /// the objects it owns (a Deployment's ReplicaSets and their Pods, the Pods of other
    /// workloads), most recent first. Recent: since kudo-manager last changed the object.
    /// Events that cannot be read are left out: they only explain a wait.
    pub(super) async fn warnings(&self, tenant: &Tenant, stored: &Value) -> Vec<Warning> {
        let ns = stored
            .pointer("/metadata/namespace")
            .and_then(Value::as_str);
        let uid = stored.pointer("/metadata/uid").and_then(Value::as_str);
        let (Some(ns), Some(uid)) = (ns, uid) else {
            return Vec::new();
        };
        let mut owners = vec![uid.to_string()];
        if let Some(selector) = owned_selector(stored) {
            let lp = ListParams::default().labels(&selector);
            if stored.get("kind").and_then(Value::as_str) == Some("Deployment") {
                let sets: Api<ReplicaSet> = Api::namespaced(tenant.client.clone(), ns);
                if let Ok(list) = sets.list_metadata(&lp).await {
                    owners.extend(owned_by(list.items.iter().map(|o| &o.metadata), &owners));
                }
            }
            let pods: Api<Pod> = Api::namespaced(tenant.client.clone(), ns);
            if let Ok(list) = pods.list_metadata(&lp).await {
                owners.extend(owned_by(list.items.iter().map(|o| &o.metadata), &owners));
            }
        }
        let since = changed_at(stored);
        let events: Api<Event> = Api::namespaced(tenant.client.clone(), ns);
        let Ok(list) = events
            .list(&ListParams::default().fields("type=Warning"))
            .await
        else {
            return Vec::new();
        };
        let mut found: Vec<(Timestamp, Warning)> = list
            .items
            .into_iter()
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
                        reason: e.reason.unwrap_or_default(),
                        message: e.message.unwrap_or_default(),
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

    /// Deletes `obj`; one that is already gone is fine, and so is one of a kind the cluster
    /// does not serve (there is nothing of it to delete).
    pub(super) async fn delete(
        &self,
        tenant: &Tenant,
        obj: &Value,
        inst: &Instance,
    ) -> Result<(), Outcome> {
        let (ar, namespaced) = match self.resource(obj).await {
            Ok(found) => found,
            Err(Lookup::NotServed { .. }) => return Ok(()),
            Err(l) => return Err(Outcome::Retry(l.to_string())),
        };
        let ns = obj
            .pointer("/metadata/namespace")
            .and_then(Value::as_str)
            .map(String::from)
            .or_else(|| inst.namespace())
            .unwrap_or_default();
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
pub(super) enum Lookup {
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

/// An invalid object will stay invalid: fatal. A refusal by RBAC names the object and who
/// was refused: [`Outcome::Forbidden`]. Anything else may pass later: retried.
fn classify(e: &kube::Error, tenant: &Tenant, verb: &str, what: &str) -> Outcome {
    match e {
        kube::Error::Api(s) if s.code == 403 => Outcome::Forbidden(format!(
            "{} may not {verb} {what}: {}",
            tenant.who(),
            s.message
        )),
        kube::Error::Api(s) if s.is_invalid() || s.code == 400 || s.message.contains(UNTYPED) => {
            Outcome::Fatal(format!("the API server refused {what}: {}", s.message))
        }
        kube::Error::Api(s) => Outcome::Retry(format!("{what}: {} ({})", s.message, s.code)),
        other => Outcome::Retry(format!("{what}: {other}")),
    }
}

/// Labels and annotations that tie an object to its Instance and to where the plan applied it.
pub(super) fn prepare(mut obj: Value, inst: &Instance, operator: &str, at: StepRef<'_>) -> Value {
    let ov = inst.spec.operator_version_name().unwrap_or_default();
    let meta = &mut obj["metadata"];
    for (key, value) in [
        (labels::MANAGED_BY, labels::MANAGED_BY_KUDO.to_string()),
        (labels::INSTANCE, inst.name_any()),
        (labels::OPERATOR, operator.to_string()),
        (labels::OPERATOR_VERSION, ov.clone()),
    ] {
        meta["labels"][key] = json!(value);
    }
    for (key, value) in [
        (labels::PLAN, at.plan),
        (labels::PHASE, at.phase),
        (labels::STEP, at.step),
    ] {
        meta["annotations"][key] = json!(value);
    }
    obj
}

pub(super) fn diagnostics(d: &[Diagnostic]) -> String {
    d.iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

/// A step being run: where its objects go and with whose rights, the Instance, its package,
/// the effective parameters, and where in the plan the step is. Every kind of task runs with
/// one.
#[derive(Clone, Copy)]
pub struct StepRun<'a> {
    /// The objects' API.
    pub objects: &'a Objects,
    /// The identity the step acts with ([`super::tenant`]).
    pub tenant: &'a Tenant,
    /// The Instance.
    pub inst: &'a Instance,
    /// Its OperatorVersion's package.
    pub pkg: &'a Package,
    /// The effective parameters the plan runs with.
    pub params: &'a Value,
    /// Where the step is.
    pub at: StepRef<'a>,
    /// What the step notes for its plan's status.
    pub notes: &'a Notes,
}

impl<'a> StepRun<'a> {
    /// Its parts, in the order of the fields.
    pub fn parts(
        self,
    ) -> (
        &'a Objects,
        &'a Instance,
        &'a Package,
        &'a Value,
        StepRef<'a>,
    ) {
        (self.objects, self.inst, self.pkg, self.params, self.at)
    }
}

/// Runs the step `run.at` of `run.pkg` for `run.inst` with the effective parameters.
pub async fn run_step(run: StepRun<'_>) -> Outcome {
    let (objects, inst, pkg, params, at) = run.parts();
    let op = pkg.operator();
    let Some(step) = step::find(op, at.plan, at.phase, at.step) else {
        return Outcome::Fatal(format!(
            "plan `{}` has no step `{}` in phase `{}`",
            at.plan, at.step, at.phase
        ));
    };
    let opts = at.render_options(inst);
    for t in step::tasks(op, step, params) {
        let (task, action) = match t {
            Ok(t) => (t.task, t.action),
            Err(undefined) => return Outcome::Fatal(undefined.to_string()),
        };
        let task_name = &task.name;
        let apply = match action {
            Action::Apply => true,
            Action::Delete => false,
            Action::Nothing => continue,
            Action::Pipe => match super::pipe::run(run, task).await {
                Ok(()) => continue,
                Err(o) => return o,
            },
            Action::KudoOperator => match super::child::run(run, task).await {
                Ok(()) => continue,
                Err(o) => return o,
            },
            Action::Unsupported => {
                return Outcome::Fatal(format!(
                    "task `{task_name}` is of kind {}, which kudo-manager does not run here (it runs Apply, Delete, Toggle, Pipe, KudoOperator and Dummy; Pipe and KudoOperator not in a delete step)",
                    task.kind
                ));
            }
        };
        let rendered = match render_task(pkg, params, &opts, at.phase, at.step, task_name) {
            Ok(r) => r,
            Err(d) => return Outcome::Fatal(diagnostics(&d)),
        };
        let mut waiting = Vec::new();
        for obj in rendered.into_iter().flat_map(|r| r.objects) {
            if apply {
                let stored = match objects
                    .apply(
                        run.tenant,
                        prepare(obj, inst, &op.name, at),
                        inst,
                        run.notes,
                    )
                    .await
                {
                    Ok(s) => s,
                    Err(o) => return o,
                };
                let what = format!(
                    "{} {}",
                    stored.get("kind").and_then(Value::as_str).unwrap_or(""),
                    stored
                        .pointer("/metadata/name")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                );
                let mut h = health(&stored);
                if matches!(h, Health::Progressing(_)) {
                    h = with_reports(h, &stored, &objects.warnings(run.tenant, &stored).await);
                }
                match h {
                    Health::Healthy => {}
                    Health::Progressing(why) => waiting.push(format!("{what}: {why}")),
                    Health::Failed(why) => return Outcome::Fatal(format!("{what}: {why}")),
                }
            } else if let Err(o) = objects.delete(run.tenant, &obj, inst).await {
                return o;
            }
        }
        // The next task starts when this one's objects are healthy.
        if !waiting.is_empty() {
            return Outcome::Waiting(waiting.join("; "));
        }
    }
    Outcome::Done
}

#[cfg(test)]
mod tests {
    use super::*;
    use kudo_crd::common::ObjectRef;
    use kudo_crd::v1beta2::InstanceSpec;

    #[test]
    fn applied_objects_carry_the_instance_labels_and_where_they_were_applied() {
        let mut inst = Instance::new(
            "kafka",
            InstanceSpec {
                operator_version: Some(ObjectRef {
                    name: Some("kafka-1.0.0".into()),
                    ..Default::default()
                }),
                ..Default::default()
            },
        );
        inst.metadata.namespace = Some("ns".into());
        let obj = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "c", "labels": {"app": "x"}}});
        let at = StepRef {
            plan: "deploy",
            phase: "main",
            step: "config",
        };
        let got = prepare(obj, &inst, "kafka", at);
        assert_eq!(
            got["metadata"],
            json!({"name": "c",
                "labels": {"app": "x", "app.kubernetes.io/managed-by": "kudo",
                    "kudo.dev/instance": "kafka", "kudo.dev/operator": "kafka",
                    "kudo.dev/operator-version": "kafka-1.0.0"},
                "annotations": {"kudo.dev/plan": "deploy", "kudo.dev/phase": "main",
                    "kudo.dev/step": "config"}})
        );
    }
}
