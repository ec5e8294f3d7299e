//! `kudo diff`: what `kudo update --instance` or `kudo upgrade --instance` would do, with
//! nothing written.
//!
//! The change is decided exactly as the command decides it (the same functions, run as a dry
//! run: [`update::update`], [`upgrade::upgrade`], hence the same policy as the admission
//! webhook); a refusal is that command's refusal. Then, for the plan the change would run,
//! every object its steps would apply is rendered with the new effective values, labelled and
//! placed as kudo-manager applies it ([`kudo_crd::applied`]), and sent as a server-side
//! **dry-run** apply with kudo-manager's field manager, as the user running `kudo diff`: the
//! API server's defaulting, admission and the merge with the live object's other owners'
//! fields are all in the answer, and nothing is written. Each answer is compared with the live
//! object; objects the plan deletes are shown as deletions.
//!
//! Nothing secret leaves this module unmasked: `writeOnly` values are masked in the value
//! changes, in every object (their texts, wherever a template put them) and a Secret's `data`
//! and `stringData` are masked whole, as `kubectl diff` does.

use kube::api::{Api, ApiResource, DynamicObject, Patch, PatchParams};
use kube::core::GroupVersionKind;
use kube::discovery::{Scope, oneshot};
use kudo_crd::applied::{self, At};
use kudo_crd::common::DriftMode;
use kudo_crd::drift;
use kudo_crd::labels;
use kudo_crd::v1beta2::Instance;
use kudo_diag::Diagnostic;
use kudo_diag::pointer::{self, Arrays};
use kudo_k8s::successor;
use kudo_pkg::Package;
use kudo_pkg::render::{Prepared, RenderOptions};
use kudo_pkg::step::{self, Action};
use kudo_policy::change::{Decision, Version};
use kudo_policy::values::Redacted;
use serde::Serialize;
use serde_json::{Value, json};

use super::{
    Error, Result, Target, history, instance_and_version, operator_version, package_and_version,
    update, upgrade,
};

/// The change to show.
#[derive(Debug, Clone, Copy)]
pub enum Change<'a> {
    /// `kudo update --instance` (its `dry_run` is ignored: nothing is ever written).
    Update(update::Request<'a>),
    /// `kudo upgrade PACKAGE --instance` (likewise).
    Upgrade(upgrade::Request<'a>),
    /// `kudo rollback NAME REVISION` (`kudo diff NAME --revision N`; likewise).
    Rollback(history::RollbackRequest<'a>),
}

/// What the change would do. Every value and object in it is masked.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Diffed {
    /// `namespace/name` of the Instance.
    pub instance: String,
    /// The OperatorVersion it runs.
    pub from: String,
    /// The OperatorVersion it would run (`from` for an update).
    pub to: String,
    /// The plan the change would run; `None` when no plan runs.
    pub plan: Option<String>,
    /// Every effective value that changes.
    pub values: Vec<ValueDiff>,
    /// Where each installed value went (upgrade).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub migration: Option<kudo_policy::old_name::Report>,
    /// Every object the plan would apply or delete.
    pub objects: Vec<ObjectDiff>,
    /// What is not shown, and why (Pipe and KudoOperator tasks, objects of a removed API
    /// version applied as their successor).
    pub notes: Vec<String>,
    /// Warnings of the policy (accepted, worth reading).
    #[serde(skip)]
    pub warnings: Vec<Diagnostic>,
}

impl Diffed {
    /// Whether anything would change: a value, a plan to run, an object.
    pub fn changes(&self) -> bool {
        !self.values.is_empty()
            || self.plan.is_some()
            || self
                .objects
                .iter()
                .any(|o| o.action != ObjectAction::Unchanged)
    }

    /// Whether an object could not be compared: the diff is incomplete.
    pub fn incomplete(&self) -> bool {
        self.objects.iter().any(|o| o.error.is_some())
    }
}

/// One effective value that changes.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ValueDiff {
    /// Its pointer.
    pub pointer: String,
    /// The value before (`None`: unset); masked when secret.
    pub before: Option<Value>,
    /// The value after (`None`: unset); masked when secret.
    pub after: Option<Value>,
    /// The parameter is `writeOnly`: both sides are masked.
    pub secret: bool,
}

/// What the plan would do to an object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ObjectAction {
    /// It does not exist and would be created.
    Create,
    /// It exists and would change.
    Update,
    /// It exists and would be deleted.
    Delete,
    /// It would stay as it is.
    Unchanged,
    /// The API server did not say (see [`ObjectDiff::error`]).
    Unknown,
}

/// One object of the plan, live and as the dry run answered, both as YAML (masked, without
/// `metadata.managedFields`).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectDiff {
    /// `apiVersion` (as applied: the successor of a removed one).
    pub api_version: String,
    /// `kind`.
    pub kind: String,
    /// Namespace; `None` for a cluster-scoped object.
    pub namespace: Option<String>,
    /// Name.
    pub name: String,
    /// The step that applies it (`phase/step`).
    pub step: String,
    /// What would happen.
    pub action: ObjectAction,
    /// The live object; `None` when there is none.
    pub live: Option<String>,
    /// The object after the plan (the dry run's answer); `None` when it would be deleted.
    pub planned: Option<String>,
    /// Why it could not be compared (the API server's message).
    pub error: Option<String>,
    /// The live object as read (unmasked: never shown, for the drift comparison).
    #[serde(skip)]
    live_value: Option<Value>,
    /// The dry run's answer as read (likewise).
    #[serde(skip)]
    planned_value: Option<Value>,
}

impl ObjectDiff {
    /// `Kind namespace/name`, or `Kind name` when cluster-scoped.
    pub fn title(&self) -> String {
        match &self.namespace {
            Some(ns) => format!("{} {ns}/{}", self.kind, self.name),
            None => format!("{} {}", self.kind, self.name),
        }
    }
}

/// Computes what `change` would do. The refusals are the command's own
/// ([`Error::Parameters`] and the others); an object the API server cannot dry-run is reported
/// in it ([`ObjectDiff::error`]), not as an error.
pub async fn diff(t: &Target, change: Change<'_>) -> Result<Diffed> {
    let (decision, name, from, to, pkg, version) = match change {
        Change::Update(req) => {
            let req = update::Request {
                dry_run: true,
                ..req
            };
            let done = update::update(t, &req).await?;
            let (_, reference) = instance_and_version(t, req.instance).await?;
            let (pkg, version) = package_and_version(&operator_version(t, &reference).await?)?;
            let ov = done.operator_version;
            (done.change, req.instance, ov.clone(), ov, pkg, version)
        }
        Change::Upgrade(req) => {
            let req = upgrade::Request {
                dry_run: true,
                ..req
            };
            let done = upgrade::upgrade(t, &req).await?;
            let version = req.package.policy_version().map_err(Error::Parameters)?;
            let (from, to) = (done.from, done.to);
            (
                done.change,
                req.instance,
                from,
                to,
                req.package.clone(),
                version,
            )
        }
        Change::Rollback(req) => {
            let req = history::RollbackRequest {
                dry_run: true,
                ..req
            };
            let done = history::rollback(t, &req).await?;
            let reference = history::reference(t, &done.revision);
            let (pkg, version) = package_and_version(&operator_version(t, &reference).await?)?;
            let (from, to) = (done.from_operator_version, reference.name);
            (done.change, req.instance, from, to, pkg, version)
        }
    };
    let redacted = Redacted::new(&version.schema, decision.values.value())
        .and(&version.schema, &decision.before);
    let mut inst = t.instance(name).await?;
    // The objects are labelled with the version the Instance would run.
    if let Some(r) = inst.spec.operator_version.as_mut() {
        r.name = Some(to.clone());
    }
    let mut out = Diffed {
        instance: format!("{}/{name}", t.namespace),
        from,
        to,
        plan: decision.plan.clone(),
        values: value_changes(&version, &decision),
        migration: decision.report.clone(),
        objects: Vec::new(),
        notes: Vec::new(),
        warnings: decision.warnings.clone(),
    };
    if let Some(plan) = &decision.plan {
        let planned = plan_objects(&pkg, plan, &inst, decision.values.value(), &mut out.notes)?;
        // In apply order: what the earlier objects would create, which the later ones' dry
        // runs cannot see (a dry run writes nothing).
        let mut made: Vec<Made> = Vec::new();
        for p in planned {
            let d = compare(t, &inst, &pkg, p, &redacted, &made, &mut out.notes).await;
            if d.action == ObjectAction::Create {
                made.push(Made::of(&d));
            }
            out.objects.push(d);
        }
    }
    Ok(out)
}

/// Every effective value that differs between `decision.before` and `decision.values`: arrays
/// as one value, secrets masked.
fn value_changes(version: &Version, decision: &Decision) -> Vec<ValueDiff> {
    let mut out = Vec::new();
    let shown = |v: Option<&Value>, secret: bool| {
        v.map(|v| {
            if secret {
                json!(Redacted::MASK)
            } else {
                v.clone()
            }
        })
    };
    pointer::diff(
        "",
        Some(&decision.before),
        Some(decision.values.value()),
        Arrays::Whole,
        &mut |at, _, old, new| {
            let secret = pointer::tokens(at).is_ok_and(|t| version.schema.is_secret(&t));
            out.push(ValueDiff {
                pointer: at.to_string(),
                before: shown(old, secret),
                after: shown(new, secret),
                secret,
            });
        },
    );
    out
}

/// An object a plan's step would apply or delete, rendered.
struct Planned {
    object: Value,
    phase: String,
    step: String,
    plan: String,
    delete: bool,
}

/// The objects plan `plan` of `pkg` would apply or delete for `inst` with `params`, in plan
/// order, each once (the last step that names it decides).
fn plan_objects(
    pkg: &Package,
    plan: &str,
    inst: &Instance,
    params: &Value,
    notes: &mut Vec<String>,
) -> Result<Vec<Planned>> {
    let op = pkg.operator();
    let Some(p) = op.plans.get(plan) else {
        return Ok(Vec::new());
    };
    let prepared = Prepared::new(pkg);
    let opts = RenderOptions {
        instance: inst.metadata.name.clone().unwrap_or_default(),
        namespace: inst.metadata.namespace.clone().unwrap_or_default(),
        plan: plan.to_string(),
        // as the manager renders for it: the images its last change pinned
        images: kudo_crd::labels::image_pins(inst.metadata.annotations.as_ref()),
    };
    let mut out: Vec<Planned> = Vec::new();
    for phase in &p.phases {
        for s in &phase.steps {
            for task in step::tasks(op, s, params) {
                let task = match task {
                    Ok(t) => t,
                    Err(undefined) => {
                        notes.push(format!("step {}/{}: {undefined}", phase.name, s.name));
                        continue;
                    }
                };
                let delete = match task.action {
                    Action::Apply => false,
                    Action::Delete => true,
                    Action::Pipe => {
                        notes.push(format!(
                            "step {}/{}: Pipe task {} makes its ConfigMaps or Secrets from a Pod's files when the plan runs: not shown",
                            phase.name, s.name, task.task.name
                        ));
                        continue;
                    }
                    Action::KudoOperator => {
                        notes.push(format!(
                            "step {}/{}: KudoOperator task {} applies a child Instance, whose own plan decides its objects: not shown",
                            phase.name, s.name, task.task.name
                        ));
                        continue;
                    }
                    Action::Nothing | Action::Unsupported => continue,
                };
                let rendered = prepared
                    .render_task(params, &opts, &phase.name, &s.name, &task.task.name)
                    .map_err(Error::Parameters)?;
                let mut objects: Vec<Value> =
                    rendered.into_iter().flat_map(|r| r.objects).collect();
                // In the order kudo-manager applies them (a Role before its RoleBinding).
                if !delete {
                    step::apply_order(&mut objects);
                }
                for object in objects {
                    let planned = Planned {
                        object,
                        phase: phase.name.clone(),
                        step: s.name.clone(),
                        plan: plan.to_string(),
                        delete,
                    };
                    let key = identity(&planned.object);
                    match out.iter_mut().find(|o| identity(&o.object) == key) {
                        Some(seen) => *seen = planned,
                        None => out.push(planned),
                    }
                }
            }
        }
    }
    Ok(out)
}

/// `apiVersion`, `kind`, namespace and name: what makes two rendered objects the same.
fn identity(obj: &Value) -> [String; 4] {
    let s = |p: &str| {
        obj.pointer(p)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    [
        s("/apiVersion"),
        s("/kind"),
        s("/metadata/namespace"),
        s("/metadata/name"),
    ]
}

/// The API resource of `obj` as the cluster serves it (its successor when its version was
/// removed), and whether it is namespaced.
async fn resource(
    t: &Target,
    obj: &mut Value,
    notes: &mut Vec<String>,
) -> Result<(ApiResource, bool), String> {
    let gvk = |obj: &Value| {
        let api_version = obj.get("apiVersion").and_then(Value::as_str).unwrap_or("");
        let kind = obj.get("kind").and_then(Value::as_str).unwrap_or("");
        let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
        GroupVersionKind::gvk(group, version, kind)
    };
    let found = |caps: kube::discovery::ApiCapabilities| caps.scope == Scope::Namespaced;
    match oneshot::pinned_kind(&t.client, &gvk(obj)).await {
        Ok((ar, caps)) => Ok((ar, found(caps))),
        Err(e) => match successor::convert(obj) {
            Some(Ok(converted)) => {
                notes.push(format!(
                    "{} {}: the cluster does not serve {}; kudo-manager applies it as {}",
                    converted.object["kind"].as_str().unwrap_or(""),
                    converted.object["metadata"]["name"].as_str().unwrap_or(""),
                    obj["apiVersion"].as_str().unwrap_or(""),
                    converted.object["apiVersion"].as_str().unwrap_or("")
                ));
                *obj = converted.object;
                let (ar, caps) = oneshot::pinned_kind(&t.client, &gvk(obj))
                    .await
                    .map_err(|e| format!("the cluster does not serve it: {e}"))?;
                Ok((ar, found(caps)))
            }
            Some(Err(unmapped)) => Err(unmapped.to_string()),
            None => Err(format!("the cluster does not serve it: {e}")),
        },
    }
}

/// An object an earlier part of the plan would create: `kind`, namespace (empty: cluster
/// scope) and name.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Made {
    kind: String,
    namespace: String,
    name: String,
}

impl Made {
    fn of(d: &ObjectDiff) -> Made {
        Made {
            kind: d.kind.clone(),
            namespace: d.namespace.clone().unwrap_or_default(),
            name: d.name.clone(),
        }
    }

    /// What `obj` (placed) needs to exist for its dry run to pass: the Role or ClusterRole a
    /// binding refers to (RBAC's escalation check reads it), the Namespace it goes to.
    fn needed_by(obj: &Value) -> Vec<Made> {
        let text = |p: &str| obj.pointer(p).and_then(Value::as_str).unwrap_or_default();
        let mut out = Vec::new();
        if matches!(text("/kind"), "RoleBinding" | "ClusterRoleBinding") {
            let namespace = match text("/roleRef/kind") {
                "Role" => text("/metadata/namespace"),
                _ => "",
            };
            out.push(Made {
                kind: text("/roleRef/kind").into(),
                namespace: namespace.into(),
                name: text("/roleRef/name").into(),
            });
        }
        if !text("/metadata/namespace").is_empty() {
            out.push(Made {
                kind: "Namespace".into(),
                namespace: String::new(),
                name: text("/metadata/namespace").into(),
            });
        }
        out
    }
}

impl std::fmt::Display for Made {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.namespace.as_str() {
            "" => write!(f, "{} {}", self.kind, self.name),
            ns => write!(f, "{} {ns}/{}", self.kind, self.name),
        }
    }
}

/// The live object and the dry run's answer for `p`, compared. `made`: what the plan's
/// earlier objects would create; a dry run refused only because one of them does not exist
/// yet (`not found`: a RoleBinding's Role, the Namespace) compares the object as it is sent,
/// and says so in `notes`.
async fn compare(
    t: &Target,
    inst: &Instance,
    pkg: &kudo_pkg::Package,
    p: Planned,
    redacted: &Redacted,
    made: &[Made],
    notes: &mut Vec<String>,
) -> ObjectDiff {
    let at = At {
        plan: &p.plan,
        phase: &p.phase,
        step: &p.step,
    };
    // Labelled with the package's operator name, as kudo-manager labels it.
    let operator = &pkg.operator().name;
    let mut obj = applied::labelled(p.object, inst, operator, &pkg.version(), at);
    let mut d = ObjectDiff {
        api_version: obj["apiVersion"].as_str().unwrap_or("").to_string(),
        kind: obj["kind"].as_str().unwrap_or("").to_string(),
        namespace: None,
        name: obj["metadata"]["name"].as_str().unwrap_or("").to_string(),
        step: format!("{}/{}", p.phase, p.step),
        action: ObjectAction::Unknown,
        live: None,
        planned: None,
        error: None,
        live_value: None,
        planned_value: None,
    };
    let (ar, namespaced) = match resource(t, &mut obj, notes).await {
        Ok(found) => found,
        Err(why) => {
            d.error = Some(why);
            return d;
        }
    };
    applied::placed(&mut obj, inst, namespaced);
    d.api_version = obj["apiVersion"].as_str().unwrap_or("").to_string();
    d.namespace = namespaced.then(|| {
        obj["metadata"]["namespace"]
            .as_str()
            .unwrap_or(&t.namespace)
            .to_string()
    });
    let api: Api<DynamicObject> = match &d.namespace {
        Some(ns) => Api::namespaced_with(t.client.clone(), ns, &ar),
        None => Api::all_with(t.client.clone(), &ar),
    };
    let live = match api.get_opt(&d.name).await {
        Ok(live) => live.map(|o| serde_json::to_value(o).unwrap_or_default()),
        Err(e) => {
            d.error = Some(format!("cannot read it: {}", kudo_cluster::said(&e)));
            return d;
        }
    };
    let planned = if p.delete {
        None
    } else {
        let params = PatchParams::apply(labels::MANAGER_FIELD_MANAGER)
            .force()
            .dry_run();
        let first = Made::needed_by(&obj).into_iter().find(|m| made.contains(m));
        match api.patch(&d.name, &params, &Patch::Apply(&obj)).await {
            Ok(o) => Some(serde_json::to_value(o).unwrap_or_default()),
            Err(kube::Error::Api(s))
                if live.is_none()
                    && first.is_some()
                    && (s.code == 404 || s.message.contains("not found")) =>
            {
                notes.push(format!(
                    "{} {}: compared as it would be sent: its dry run cannot see {}, which the plan creates before it",
                    d.kind,
                    d.name,
                    first.as_ref().map(ToString::to_string).unwrap_or_default()
                ));
                Some(obj.clone())
            }
            Err(e) => {
                d.live = live
                    .as_ref()
                    .map(|l| shown(l, None, &d.kind, redacted, "live"));
                d.error = Some(format!(
                    "the dry-run apply was refused: {}",
                    kudo_cluster::said(&e)
                ));
                return d;
            }
        }
    };
    d.live_value = live.clone();
    d.planned_value = planned.clone();
    let live = live.map(comparable);
    let planned = planned.map(comparable);
    d.action = match (&live, &planned) {
        (None, None) => ObjectAction::Unchanged,
        (None, Some(_)) => ObjectAction::Create,
        (Some(_), None) => ObjectAction::Delete,
        (Some(l), Some(n)) if l == n => ObjectAction::Unchanged,
        (Some(_), Some(_)) => ObjectAction::Update,
    };
    d.live = live
        .as_ref()
        .map(|l| shown(l, planned.as_ref(), &d.kind, redacted, "before"));
    d.planned = planned
        .as_ref()
        .map(|n| shown(n, live.as_ref(), &d.kind, redacted, "after"));
    d
}

/// The object as compared and shown: without what the API server maintains and kudo's
/// record of the step that applied it ([`drift::comparable`]: `status`, `managedFields`,
/// `resourceVersion`, `generation`, `kudo.dev/plan`, `phase`, `step`), which every write or
/// plan rewrites: left in, they would make every object differ.
fn comparable(obj: Value) -> Value {
    drift::comparable(obj)
}

/// `obj` as YAML with nothing secret in it: the texts of `writeOnly` values masked wherever
/// they are, and, in a Secret, every `data` and `stringData` value (marked `(side)` where it
/// differs from `other`'s, as `kubectl diff` does) and kubectl's last-applied annotation.
fn shown(
    obj: &Value,
    other: Option<&Value>,
    kind: &str,
    redacted: &Redacted,
    side: &str,
) -> String {
    let mut obj = obj.clone();
    if kind == "Secret" {
        for field in ["data", "stringData"] {
            if let Some(Value::Object(map)) = obj.get_mut(field) {
                for (k, v) in map.iter_mut() {
                    let same = other.and_then(|o| o.get(field)).and_then(|m| m.get(k)) == Some(v);
                    *v = if same || other.is_none() {
                        json!(Redacted::MASK)
                    } else {
                        json!(format!("{} ({side})", Redacted::MASK))
                    };
                }
            }
        }
        if let Some(a) = obj
            .pointer_mut("/metadata/annotations/kubectl.kubernetes.io~1last-applied-configuration")
        {
            *a = json!(Redacted::MASK);
        }
    }
    redacted.mask_value(&mut obj);
    kudo_yaml::manifest::to_yaml(&obj)
}

/// `kudo diff NAME` with no change given: where the objects kudo applied for the Instance
/// drifted from what it applied (`kudo_crd::drift`). Every object is masked as in [`Diffed`].
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Drift {
    /// `namespace/name` of the Instance.
    pub instance: String,
    /// The OperatorVersion it runs.
    pub operator_version: String,
    /// `spec.drift.mode` (`warn` when absent): what the manager does about it.
    pub mode: DriftMode,
    /// How many objects were compared.
    pub checked: usize,
    /// The objects that drifted, and those that could not be compared.
    pub objects: Vec<DriftedObject>,
    /// What is not shown, and why.
    pub notes: Vec<String>,
}

impl Drift {
    /// Whether an object drifted.
    pub fn drifted(&self) -> bool {
        self.objects.iter().any(|o| o.object.error.is_none())
    }

    /// Whether an object could not be compared: the report is incomplete.
    pub fn incomplete(&self) -> bool {
        self.objects.iter().any(|o| o.object.error.is_some())
    }
}

/// One object that drifted: the live object against what kudo's apply would make of it
/// (`planned`), and the fields that differ.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DriftedObject {
    /// The object, live and as applied again (`create`: it was deleted).
    #[serde(flatten)]
    pub object: ObjectDiff,
    /// The JSON pointers that drifted (empty when the object was deleted).
    pub pointers: Vec<String>,
}

/// The drift of Instance `name` (see [`Drift`]): each object its plans applied
/// ([`drift::applied_objects`], rendered with its current effective values) sent as a
/// server-side dry-run apply with kudo-manager's field manager, as the user running it, and
/// compared with the live object; `spec.drift.ignore` applies.
pub async fn drift(t: &Target, name: &str) -> Result<Drift> {
    let req = update::Request {
        instance: name,
        inputs: super::Inputs::default(),
        dry_run: true,
        force: false,
        ignore_window: false,
        remediation: None,
        images: None,
    };
    let done = update::update(t, &req).await?;
    let (_, reference) = instance_and_version(t, name).await?;
    let (pkg, version) = package_and_version(&operator_version(t, &reference).await?)?;
    let values = done.change.values.value();
    let redacted = Redacted::new(&version.schema, values);
    let inst = t.instance(name).await?;
    let status = inst.status.clone().unwrap_or_default();
    let prepared = Prepared::new(&pkg);
    let applied =
        drift::applied_objects(&prepared, &inst, &status, values).map_err(Error::Parameters)?;
    let rules = inst.spec.drift_ignores().to_vec();
    let mut out = Drift {
        instance: format!("{}/{name}", t.namespace),
        operator_version: done.operator_version,
        mode: drift::mode(inst.spec.drift.as_ref()),
        checked: 0,
        objects: Vec::new(),
        notes: Vec::new(),
    };
    for a in applied {
        let p = Planned {
            object: a.object,
            phase: a.phase,
            step: a.step,
            plan: a.plan,
            delete: false,
        };
        let mut d = compare(t, &inst, &pkg, p, &redacted, &[], &mut out.notes).await;
        if d.error.is_some() {
            out.objects.push(DriftedObject {
                object: d,
                pointers: Vec::new(),
            });
            continue;
        }
        out.checked += 1;
        let live = d.live_value.take();
        let Some(planned) = d.planned_value.take() else {
            continue;
        };
        let Some(found) = drift::Drifted::of(live.as_ref(), &planned, &rules) else {
            continue;
        };
        let pointers = match found.state {
            drift::State::Changed { pointers } => pointers,
            drift::State::Deleted => Vec::new(),
        };
        out.objects.push(DriftedObject {
            object: d,
            pointers,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use kudo_policy::ParamSchema;

    #[test]
    fn a_secret_is_masked_in_every_object_and_whole_in_a_secret() {
        let schema = ParamSchema::from_value(json!({"type": "object", "properties": {
            "password": {"type": "string", "writeOnly": true}}}))
        .unwrap();
        let redacted = Redacted::new(&schema, &json!({"password": "hunter2hunter2"}))
            .and(&schema, &json!({"password": "s3cr3t-old"}));
        let cm = json!({"kind": "ConfigMap", "data": {"conf": "user=a\npass=hunter2hunter2\n"}});
        let text = shown(&cm, None, "ConfigMap", &redacted, "after");
        assert!(!text.contains("hunter2"), "{text}");
        assert!(text.contains("user=a"), "{text}");
        // A short secret is masked where it is a whole value only.
        let short = Redacted::new(&schema, &json!({"password": "p"}));
        let cm = json!({"kind": "ConfigMap", "data": {"pass": "p", "path": "/tmp"}});
        let text = shown(&cm, None, "ConfigMap", &short, "after");
        assert!(text.contains("path: /tmp"), "{text}");
        assert!(!text.contains("pass: p"), "{text}");
        let before = json!({"kind": "Secret", "data": {"a": "b2xk", "same": "eA=="}});
        let after = json!({"kind": "Secret", "data": {"a": "bmV3", "same": "eA=="}});
        let text = shown(&after, Some(&before), "Secret", &redacted, "after");
        assert!(!text.contains("bmV3") && !text.contains("eA=="), "{text}");
        assert!(
            text.contains(&format!("a: \"{} (after)\"", Redacted::MASK)),
            "{text}"
        );
        assert!(
            text.contains(&format!("same: \"{}\"", Redacted::MASK)),
            "{text}"
        );
    }

    fn object(action: ObjectAction, error: Option<&str>) -> ObjectDiff {
        ObjectDiff {
            api_version: "v1".into(),
            kind: "ConfigMap".into(),
            namespace: Some("ns".into()),
            name: "c".into(),
            step: "p/s".into(),
            action,
            live: None,
            planned: None,
            error: error.map(String::from),
            live_value: None,
            planned_value: None,
        }
    }

    #[test]
    fn an_object_not_compared_makes_the_diff_incomplete_and_unchanged_ones_no_change() {
        let mut d = Diffed {
            instance: "ns/i".into(),
            from: "op-1".into(),
            to: "op-1".into(),
            plan: None,
            values: Vec::new(),
            migration: None,
            objects: vec![object(ObjectAction::Unchanged, None)],
            notes: Vec::new(),
            warnings: Vec::new(),
        };
        assert!(!d.changes() && !d.incomplete());
        d.objects.push(object(
            ObjectAction::Unknown,
            Some("the dry-run apply was refused: forbidden"),
        ));
        assert!(d.incomplete());
        assert_eq!(
            d.objects[1].title(),
            "ConfigMap ns/c",
            "the refused object is named"
        );
        d.objects[1] = object(ObjectAction::Update, None);
        assert!(d.changes() && !d.incomplete());
    }

    #[test]
    fn a_drifted_object_is_drift_and_one_not_compared_makes_the_report_incomplete() {
        let mut d = Drift {
            instance: "ns/i".into(),
            operator_version: "op-1".into(),
            mode: DriftMode::Warn,
            checked: 2,
            objects: Vec::new(),
            notes: Vec::new(),
        };
        assert!(!d.drifted() && !d.incomplete(), "nothing drifted");
        d.objects.push(DriftedObject {
            object: object(ObjectAction::Unknown, Some("cannot read it: forbidden")),
            pointers: Vec::new(),
        });
        assert!(!d.drifted() && d.incomplete(), "not compared is not drift");
        d.objects.push(DriftedObject {
            object: object(ObjectAction::Update, None),
            pointers: vec!["/data/a".into()],
        });
        assert!(d.drifted() && d.incomplete());
        let v = serde_json::to_value(&d).unwrap();
        assert_eq!(v["mode"], "warn", "{v}");
        assert_eq!(v["objects"][1]["pointers"], json!(["/data/a"]), "{v}");
        assert_eq!(v["objects"][1]["kind"], "ConfigMap", "flattened: {v}");
        assert!(
            v["objects"][1].get("liveValue").is_none(),
            "never serialized: {v}"
        );
    }

    #[test]
    fn managed_fields_and_the_step_annotations_are_not_compared() {
        let obj = json!({"metadata": {"name": "a", "managedFields": [{"manager": "kudo-manager"}],
            "annotations": {"kudo.dev/plan": "deploy", "kudo.dev/phase": "p", "kudo.dev/step": "s"}}});
        assert_eq!(comparable(obj), json!({"metadata": {"name": "a"}}));
        let kept = json!({"metadata": {"annotations": {"kudo.dev/plan": "deploy", "team": "a"}}});
        assert_eq!(
            comparable(kept),
            json!({"metadata": {"annotations": {"team": "a"}}})
        );
    }
}
