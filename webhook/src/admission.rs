//! `/admit/instance/mutate` and `/admit/instance/validate`: admission of Instance create and
//! update, decided by [`kudo_policy::change`], the policy the CLI and the manager call too.
//!
//! [`decide`] is the pure decision; [`admit_review`] is transport (read the AdmissionReview, answer
//! with the same uid). For an Instance whose OperatorVersion is known:
//! - **create** is [`change::install`];
//! - **update** within one OperatorVersion is [`change::update`]: values are compared after
//!   both sides are typed by the schema (a v1beta1 `"7"` and a v1beta2 `7` are the same value),
//!   so a rewrite that changes only representation (`kudo migrate`, the manager's own writes)
//!   is always admitted and runs no plan; the Instance's deletion and the plan it has scheduled
//!   or running (read from the old object's status) count; a direct trigger (a new
//!   `spec.planExecution`) is [`change::with_trigger`]: refused while another plan is
//!   scheduled or running (unless the write supersedes it, `--force`);
//! - **upgrade** (another OperatorVersion) is [`change::upgrade`]: parameters left as they
//!   were are carried over by `oldName`; values that land nowhere become warnings.
//!
//! The mutating webhook stores what the user set, typed and moved by `oldName`, never the
//! defaults (they are derived wherever values are used, so an upgrade takes the new version's),
//! and the installed defaults of immutable parameters that an upgrade keeps
//! (`spec.immutableDefaults`), as an RFC 6902 patch; the validating webhook denies what the
//! policy refuses. A denial lists every
//! violation (secret values masked, as everywhere). An Instance whose OperatorVersion is not
//! (yet) known is denied with a message saying so: the webhook cannot check it, and letting it
//! through would store unchecked parameters.

use std::collections::BTreeMap;
use std::sync::Arc;

use base64::Engine;

use kube::core::DynamicObject;
use kube::core::ObjectMeta;
use kube::core::Status;
use kube::core::admission::{AdmissionRequest, AdmissionResponse, AdmissionReview, Operation};
use kudo_crd::baseline;
use kudo_crd::reference::OperatorVersionRef;
use kudo_crd::v1beta2::{Instance, OperatorVersion, OperatorVersionSpec};
use kudo_crd::{labels, revision};
use kudo_diag::{Code, Diagnostic, Origin};
use kudo_policy::change::{self, Installed, Proposal, Undeclared, Version};
use kudo_policy::run;
use serde_json::{Value, json};

/// Why an OperatorVersion object cannot be the policy's [`Version`].
pub use kudo_crd::package::Unusable as UnusableVersion;

/// Reads a v1beta2 OperatorVersion object (as the API server stores it) as the policy's
/// [`Version`] ([`kudo_crd::package::version`]). Only the fields that reads are taken from the
/// object (name, version, parameters, plan names), so that an odd field elsewhere never makes
/// it unusable. `Err` when its parameters are not a usable schema.
pub fn version_from_object(object: &Value) -> Result<Version, UnusableVersion> {
    let text = |pointer: &str| {
        object
            .pointer(pointer)
            .and_then(Value::as_str)
            .map(String::from)
    };
    let plans = object
        .pointer("/spec/plans")
        .and_then(Value::as_object)
        .map(|p| p.keys().map(|k| (k.clone(), Default::default())).collect())
        .unwrap_or_default();
    let ov = OperatorVersion {
        metadata: ObjectMeta {
            name: text("/metadata/name"),
            ..Default::default()
        },
        spec: OperatorVersionSpec {
            version: text("/spec/version"),
            parameters: object.pointer("/spec/parameters").cloned(),
            plans,
            ..Default::default()
        },
    };
    kudo_crd::package::version(&ov)
}

/// Why the installed OperatorVersions cannot be known now.
#[derive(Debug, Clone, thiserror::Error)]
pub enum StoreError {
    /// The cache has not finished its first list.
    #[error("the OperatorVersion cache has not finished its first list")]
    NotSynced,
    /// The cache cannot list: what the API server said.
    #[error("the OperatorVersion cache cannot list: {0}")]
    CannotList(String),
    /// The OperatorVersion is not in the cache and cannot be read now.
    #[error("{0}")]
    Unreadable(String),
    /// It exists, but its parameters cannot be used.
    #[error("OperatorVersion {namespace}/{name} has unusable parameters: {reason}")]
    Unusable {
        /// Its namespace.
        namespace: String,
        /// Its name.
        name: String,
        /// Why.
        reason: UnusableVersion,
    },
    /// The webhook runs without a cluster connection (`--no-cluster`).
    #[error(
        "no OperatorVersion cache: this webhook runs without a cluster connection (--no-cluster), so Instances cannot be checked"
    )]
    NoCluster,
    /// The cluster cannot be reached.
    #[error("no cluster connection ({0}), so Instances cannot be checked")]
    Offline(String),
}

/// Where admission finds OperatorVersions (the webhook keeps a watch-fed cache that reads
/// through to the API server on a miss).
pub trait OperatorVersions {
    /// `Err(why)` while the store is not warm (not synced yet, no cluster): for `/readyz`.
    /// Admission does not wait for it: [`OperatorVersions::get`] answers either way.
    fn ready(&self) -> Result<(), StoreError>;
    /// The OperatorVersion `name` in `namespace`: `Ok(None)` when it does not exist, `Err(why)`
    /// when that cannot be known now (the API server cannot be reached).
    fn get(&self, namespace: &str, name: &str) -> Result<Option<Arc<Version>>, StoreError>;
}

/// Which webhook is asked. Both ask [`decide`] the same question; only the mutating one
/// answers with a patch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// The mutating webhook: defaults and migrated values, as a patch.
    Mutate,
    /// The validating webhook.
    Validate,
    /// The v1beta1 webhook (`/admit/instance/v1beta1`, registered for `kudo.dev/v1beta1` with
    /// `matchPolicy: Exact`): it sees a write through v1beta1 as sent, before the API server
    /// converts it, and refuses values the v1beta1 map cannot hold ([`v1beta1_values`]).
    V1beta1,
}

/// The verdict on one Instance.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// Allowed; `parameters` are the values to store (when they differ from the object's).
    Allow {
        /// What to store in the spec (the user's typed and migrated values, and the kept
        /// installed defaults), when it differs from the object's.
        parameters: Option<Box<Stored>>,
        /// The plan the change runs (none when nothing changes).
        plan: Option<String>,
        /// Things the client should hear about.
        warnings: Vec<String>,
    },
    /// Denied, with every violation.
    Deny(Vec<Diagnostic>),
    /// Cannot be checked now (the cache is not ready, the OperatorVersion is unknown).
    Unchecked(String),
}

/// What the mutating webhook writes into an Instance's spec: what the user set, never the
/// defaults ([`change::Decision::explicit`]), and the kept installed defaults of immutable
/// parameters ([`change::Decision::kept`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Stored {
    /// `spec.parameters`.
    pub parameters: Value,
    /// `spec.immutableDefaults`; `None` removes it.
    pub kept: Option<Value>,
}

impl Stored {
    fn of(obj: &Value) -> Stored {
        Stored {
            parameters: params(obj),
            kept: kept(obj),
        }
    }

    /// `obj` with this stored in its spec.
    fn apply(&self, obj: &Value) -> Value {
        let mut patched = obj.clone();
        if let Some(spec) = patched.get_mut("spec").and_then(Value::as_object_mut) {
            spec.insert("parameters".into(), self.parameters.clone());
            match &self.kept {
                Some(k) => spec.insert("immutableDefaults".into(), k.clone()),
                None => spec.remove("immutableDefaults"),
            };
        }
        patched
    }
}

fn kept(obj: &Value) -> Option<Value> {
    obj.pointer("/spec/immutableDefaults")
        .filter(|k| k.as_object().is_some_and(|m| !m.is_empty()))
        .cloned()
}

/// The OperatorVersion an Instance object names ([`OperatorVersionRef::of_object`]): in
/// `spec.operatorVersion.namespace` when given, else the Instance's.
fn ov_ref(obj: &Value, namespace: &str) -> Option<OperatorVersionRef> {
    OperatorVersionRef::of_object(obj, namespace)
}

fn params(obj: &Value) -> Value {
    match obj.pointer("/spec/parameters") {
        Some(v @ Value::Object(_)) => v.clone(),
        _ => json!({}),
    }
}

/// The annotations of an object (none when they are not strings).
fn annotations(obj: &Value) -> Option<BTreeMap<String, String>> {
    obj.pointer("/metadata/annotations")
        .and_then(|a| serde_json::from_value(a.clone()).ok())
}

/// The plan the old object `inst` has scheduled or running, unless the new one supersedes that
/// run (`--force`): [`run::supersede`].
fn blocking(inst: &Instance, new: &Value, version: &Version) -> Option<String> {
    let annotations = annotations(new);
    let running = run::running(&baseline::plan_state(inst), version);
    run::supersede(running, baseline::force(annotations.as_ref())).blocking
}

/// `patched` with [`labels::CHANGED_BY`] naming `user`, when the write changes the spec (or
/// creates the Instance): who asked, as the API server authenticated them, whatever the write
/// itself said. What the manager records in the change's revision.
fn stamped(old: Option<&Value>, new: &Value, mut patched: Value, user: Option<&str>) -> Value {
    let (Some(user), Some(meta)) = (user, patched.get_mut("metadata")) else {
        return patched;
    };
    if old.is_some_and(|o| o.get("spec") == new.get("spec")) {
        return patched;
    }
    if let Some(meta) = meta.as_object_mut() {
        let annotations = meta.entry("annotations").or_insert_with(|| json!({}));
        if !annotations.is_object() {
            *annotations = json!({});
        }
        annotations[labels::CHANGED_BY] = json!(user);
    }
    patched
}

/// The plan a write triggers directly (`kudo plan trigger`): `spec.planExecution` names a plan,
/// with another run uid or plan name than the old object's.
fn triggered<'a>(old: &Value, new: &'a Value) -> Option<&'a str> {
    let plan = new
        .pointer("/spec/planExecution/planName")
        .and_then(Value::as_str)?;
    let run = |o: &Value| {
        (
            o.pointer("/spec/planExecution/planName").cloned(),
            o.pointer("/spec/planExecution/uid").cloned(),
        )
    };
    (run(old) != run(new)).then_some(plan)
}

/// The OperatorVersion `reference` names, or the verdict that it cannot be checked (`missing`
/// says what its absence means).
fn lookup(
    store: &dyn OperatorVersions,
    reference: &OperatorVersionRef,
    missing: &str,
) -> Result<Arc<Version>, Verdict> {
    let OperatorVersionRef { namespace, name } = reference;
    match store.get(namespace, name) {
        Ok(Some(v)) => Ok(v),
        Ok(None) => Err(Verdict::Unchecked(format!(
            "OperatorVersion {namespace}/{name} does not exist: {missing}"
        ))),
        Err(why) => Err(Verdict::Unchecked(format!(
            "kudo's admission webhook cannot read OperatorVersion {namespace}/{name}: {why}"
        ))),
    }
}

/// Decides on an Instance `new` (and its previous state `old` on update), in `namespace`, as
/// written through `kudo.dev/v1beta2`: a parameter the OperatorVersion does not declare is
/// refused unless the Instance already holds it ([`change::Undeclared::KeepInstalled`]).
pub fn decide(
    namespace: &str,
    old: Option<&Value>,
    new: &Value,
    store: &dyn OperatorVersions,
) -> Verdict {
    decide_with(namespace, old, new, store, Undeclared::KeepInstalled)
}

/// [`decide`], keeping the parameters the OperatorVersion does not declare as `undeclared`
/// says ([`change::set_aside`]): every one for a write sent through `kudo.dev/v1beta1`, as
/// KUDO did. Each kept one is named in a warning.
pub fn decide_with(
    namespace: &str,
    old: Option<&Value>,
    new: &Value,
    store: &dyn OperatorVersions,
    undeclared: Undeclared,
) -> Verdict {
    // Metadata only (the manager's finalizer, labels): nothing the policy looks at changes, so
    // nothing needs the OperatorVersion, which may be gone (a namespace being deleted).
    if let Some(old_obj) = old
        && old_obj.get("spec") == new.get("spec")
    {
        return Verdict::Allow {
            parameters: None,
            plan: None,
            warnings: Vec::new(),
        };
    }
    // Values larger than the policy takes are refused before any work on them (the policy
    // checks them again, at no cost worth naming).
    if let Some(given) = new.pointer("/spec/parameters")
        && let Err(too_large) =
            kudo_policy::limits::refuse(given, "the Instance's parameters", Origin::Instance)
    {
        return Verdict::Deny(vec![too_large]);
    }
    let Some(name) = ov_ref(new, namespace) else {
        return Verdict::Unchecked(
            "the Instance names no OperatorVersion (spec.operatorVersion.name)".into(),
        );
    };
    let to = match lookup(store, &name, "install the operator version first") {
        Ok(to) => to,
        Err(unchecked) => return unchecked,
    };
    // The version the Instance ran before the write, and its parameters (an update or an
    // upgrade): what it already holds may be kept, and what that version declares is the
    // policy's.
    let before = match old.and_then(|o| ov_ref(o, namespace).map(|r| (o, r))) {
        None => None,
        Some((o, r)) if r == name => Some((to.clone(), params(o))),
        Some((o, r)) => match lookup(store, &r, "cannot upgrade from it") {
            Ok(from) => Some((from, params(o))),
            Err(unchecked) => return unchecked,
        },
    };
    let (given, aside) = change::set_aside(
        &to,
        &params(new),
        before.as_ref().map(|(v, p)| (v.as_ref(), p)),
        undeclared,
    );
    // The webhook cannot read the Instance's Secrets: what may be in them may be missing here.
    let proposal = match new.pointer("/spec/parametersFrom") {
        Some(Value::Array(from)) if !from.is_empty() => Proposal::WithoutSecrets(&given),
        _ => Proposal::Values(&given),
    };
    // No secret is ever stored in an Instance.
    let stored_secrets = change::secrets_stored(&to, &given);
    if !stored_secrets.is_empty() {
        return Verdict::Deny(stored_secrets);
    }
    let decision = match old {
        None => change::install(&to, proposal),
        Some(old_obj) => {
            match decide_change(namespace, old_obj, new, &name, &to, store, proposal) {
                Ok(decided) => decided,
                Err(unchecked) => return unchecked,
            }
        }
    };
    verdict(decision.map(|d| aside.restore(d)), new)
}

/// An update or upgrade of the Instance `old_obj` to `new` (whose OperatorVersion `name` is
/// `to`) decided by the policy, or the verdict that it cannot be checked.
fn decide_change(
    namespace: &str,
    old_obj: &Value,
    new: &Value,
    name: &OperatorVersionRef,
    to: &Arc<Version>,
    store: &dyn OperatorVersions,
    proposal: Proposal<'_>,
) -> Result<Result<change::Decision, Vec<Diagnostic>>, Verdict> {
    let old_name = ov_ref(old_obj, namespace).unwrap_or_else(|| name.clone());
    let from = if old_name == *name {
        to.clone()
    } else {
        lookup(store, &old_name, "cannot upgrade from it")?
    };
    let values = change::declared(&from, &params(old_obj));
    // An old object that is no Instance (it never is: the API server stored it) has
    // nothing in progress.
    let old_inst: Instance = serde_json::from_value(old_obj.clone())
        .unwrap_or_else(|_| Instance::new("", Default::default()));
    let running = blocking(&old_inst, new, &from);
    let installed = Installed {
        deleting: new.pointer("/metadata/deletionTimestamp").is_some()
            || old_obj.pointer("/metadata/deletionTimestamp").is_some(),
        ..baseline::installed(&old_inst, &from, &values, running.as_deref())
    };
    // The same OperatorVersion named the other way (`zookeeper-0.3.3` then
    // `zookeeper-3.6.2-0.3.3`) is no upgrade.
    let same = old_name.namespace == name.namespace && from.name == to.name;
    let old_generation = old_obj
        .pointer("/metadata/generation")
        .and_then(Value::as_i64);
    let decided = if revision::rollback_of(annotations(new).as_ref(), old_generation).is_some() {
        // `kudo rollback` (or the manager's remediation) restoring a revision, written
        // on top of this very generation.
        change::rollback(&installed, to, proposal, kept(new).as_ref())
    } else if same {
        change::update(&installed, proposal)
    } else {
        let allow = revision::preflight_of(annotations(new).as_ref(), old_generation);
        change::upgrade(&installed, to, proposal, &allow)
    };
    Ok(match triggered(old_obj, new) {
        Some(plan) => change::with_trigger(&installed, plan, decided),
        None => decided,
    })
}

/// The policy's decision on `new` as the webhook answers it: what to store, the plan and the
/// warnings, or every refusal.
fn verdict(decision: Result<change::Decision, Vec<Diagnostic>>, new: &Value) -> Verdict {
    match decision {
        Err(diags) => Verdict::Deny(diags),
        Ok(d) => {
            let warnings = d.warnings.iter().map(ToString::to_string).collect();
            let stored = Stored {
                parameters: d.explicit,
                kept: Some(d.kept).filter(|k| k.as_object().is_some_and(|m| !m.is_empty())),
            };
            Verdict::Allow {
                parameters: (stored != Stored::of(new)).then(|| Box::new(stored)),
                plan: d.plan,
                warnings,
            }
        }
    }
}

/// The values of a `kudo.dev/v1beta1` Instance `object` that its `spec.parameters`
/// (`map[string]string`) cannot hold: every value that is not a string, by name.
///
/// Such a value never arrives whole: the API server prunes what the v1beta1 schema does not
/// declare, so `kubectl patch instances.v1beta1.kudo.dev d1 --type merge -p
/// '{"spec":{"parameters":{"rotation":{"secret":"x"}}}}'` reaches the webhooks as `"rotation":
/// {}`. Converted to v1beta2 and given its defaults there, it became a storable string again,
/// and the write was answered "patched" with the value silently gone. Refused here, before
/// conversion, naming the parameter (and never showing a value: it may be a secret).
pub fn v1beta1_values(object: &Value) -> Result<(), Vec<Diagnostic>> {
    let Some(Value::Object(values)) = object.pointer("/spec/parameters") else {
        return Ok(());
    };
    let refused: Vec<Diagnostic> = values
        .iter()
        .filter(|(_, v)| !v.is_string())
        .map(|(name, v)| {
            let pointer = kudo_diag::pointer::push("", name);
            let what = match v {
                Value::Object(_) => "an object (the API server drops its fields before kudo sees them, so it cannot be stored)",
                Value::Array(_) => "an array",
                Value::Null => "null",
                Value::Bool(_) => "a boolean",
                _ => "a number",
            };
            Diagnostic::error(
                Code::TypeMismatch,
                pointer.as_str(),
                format!("kudo.dev/v1beta1 holds each parameter value as a string; this one is {what}"),
            )
            .with_help(format!(
                "write it through kudo.dev/v1beta2 (kubectl patch instances.v1beta2.kudo.dev ...), or as JSON text in a string (\"{name}\": \"{{...}}\"); to go back to the default: kudo update --instance NAME --reset {}",
                pointer.trim_start_matches('/')
            ))
        })
        .collect();
    if refused.is_empty() {
        Ok(())
    } else {
        Err(refused)
    }
}

/// Handles one AdmissionReview body: `(HTTP status, the review to send)`.
pub fn admit_review(body: &[u8], mode: Mode, store: &dyn OperatorVersions) -> (u16, Value) {
    let (status, review) = answer(body, mode, store);
    (status, to_wire(review))
}

/// [`admit_review`] that stops at its next stage once `cancelled` is set (the request's
/// deadline passed, or its client went away: the server's fair admission): before the review
/// is read, when the OperatorVersion is looked up, and before the answer is written. A review
/// stopped so is answered with HTTP 503 that nobody reads.
pub fn admit_review_until(
    body: &[u8],
    mode: Mode,
    store: &dyn OperatorVersions,
    cancelled: &std::sync::atomic::AtomicBool,
) -> (u16, Value) {
    let stopped = || cancelled.load(std::sync::atomic::Ordering::Acquire);
    let cancelled_reply = || {
        let review = AdmissionResponse::invalid("cancelled: the deadline passed").into_review();
        (503, to_wire(review))
    };
    if stopped() {
        return cancelled_reply();
    }
    let (status, review) = answer(
        body,
        mode,
        &Until {
            store,
            stopped: &stopped,
        },
    );
    if stopped() {
        return cancelled_reply();
    }
    (status, to_wire(review))
}

/// The store of [`admit_review_until`]: the lookup fails once the review is cancelled, so the
/// policy is not run for nobody.
struct Until<'a> {
    store: &'a dyn OperatorVersions,
    stopped: &'a dyn Fn() -> bool,
}

impl OperatorVersions for Until<'_> {
    fn ready(&self) -> Result<(), StoreError> {
        self.store.ready()
    }
    fn get(&self, namespace: &str, name: &str) -> Result<Option<Arc<Version>>, StoreError> {
        if (self.stopped)() {
            return Err(StoreError::Unreadable(
                "cancelled: the deadline passed".into(),
            ));
        }
        self.store.get(namespace, name)
    }
}

/// The review as JSON, with the patch as kube-apiserver reads it: base64 text (Go's `[]byte`).
/// kube-core serializes its `Vec<u8>` as an array of numbers.
pub(crate) fn to_wire(review: AdmissionReview<DynamicObject>) -> Value {
    let mut v = serde_json::to_value(&review).unwrap_or(Value::Null);
    if let Some(r) = v.get_mut("response").and_then(Value::as_object_mut)
        && let Some(Value::Array(bytes)) = r.get("patch")
    {
        let bytes: Vec<u8> = bytes
            .iter()
            .filter_map(Value::as_u64)
            .map(|b| b as u8)
            .collect();
        r.insert(
            "patch".into(),
            Value::String(base64::engine::general_purpose::STANDARD.encode(bytes)),
        );
    }
    v
}

fn answer(
    body: &[u8],
    mode: Mode,
    store: &dyn OperatorVersions,
) -> (u16, AdmissionReview<DynamicObject>) {
    let Read { request, new, old } = match read_review(body) {
        Ok(read) => read,
        Err(invalid) => return (400, invalid.into_review()),
    };
    if request.uid.is_empty() {
        return (
            400,
            AdmissionResponse::invalid("the AdmissionReview request has no uid").into_review(),
        );
    }
    let response = AdmissionResponse::from(&request);
    if request.kind.group != "kudo.dev" || request.kind.kind != "Instance" {
        return (
            200,
            deny(
                response,
                &format!(
                    "kudo's webhook admits kudo.dev Instances, not {}",
                    request.kind.kind
                ),
            )
            .into_review(),
        );
    }
    if matches!(request.operation, Operation::Delete | Operation::Connect) {
        return (200, response.into_review());
    }
    let Some(new) = new else {
        return (
            200,
            deny(response, "the request has no object").into_review(),
        );
    };
    if mode == Mode::V1beta1 {
        // Only what was written through v1beta1 is checked here: the webhooks of v1beta2
        // decide everything else, after conversion.
        let reply = match v1beta1_values(&new) {
            Err(diags) if request.kind.version == "v1beta1" => refused(response, &diags),
            _ => response,
        };
        return (200, reply.into_review());
    }
    let namespace = request.namespace.clone().unwrap_or_default();
    let undeclared = if sent_as_v1beta1(&request) {
        Undeclared::KeepAll
    } else {
        Undeclared::KeepInstalled
    };
    let reply = match decide_with(&namespace, old.as_ref(), &new, store, undeclared) {
        // An object that could not be read in the other version would fail every LIST of
        // that version in the cluster: refused, whatever else the write changes (annotations
        // only, say).
        Verdict::Allow { .. } if let Err(why) = servable(old.as_ref(), &new) => {
            deny(response, &why)
        }
        Verdict::Allow { .. } if let Err(why) = window(old.as_ref(), &new) => deny(response, &why),
        Verdict::Allow {
            parameters,
            warnings,
            ..
        } => allowed(
            response,
            mode,
            parameters,
            warnings,
            &request,
            old.as_ref(),
            &new,
        ),
        Verdict::Deny(diags) => refused(response, &diags),
        Verdict::Unchecked(why) => deny(response, &why),
    };
    (200, reply.into_review())
}

/// `spec.window` as written, when the write sets or changes it: refused, naming the field,
/// when it cannot be read ([`kudo_crd::window::check`], what the manager reads it with).
fn window(old: Option<&Value>, new: &Value) -> Result<(), String> {
    let Some(given) = new.pointer("/spec/window") else {
        return Ok(());
    };
    if old.and_then(|o| o.pointer("/spec/window")) == Some(given) {
        return Ok(());
    }
    let window: kudo_crd::common::Window =
        serde_json::from_value(given.clone()).map_err(|e| format!("spec.window: {e}"))?;
    kudo_crd::window::check(&window, jiff::Timestamp::now()).map(|_| ())
}

/// A review read once: its request, and the objects taken out of it as they are (`object`,
/// `oldObject`); `Err` with the answer to a body that is no AdmissionReview.
pub(crate) fn read_review(body: &[u8]) -> Result<Read, Box<AdmissionResponse>> {
    // The body is parsed once: the objects are taken out of it as they are (no second copy
    // through DynamicObject, which doubled the memory of a large review), and the rest, small,
    // is read as kube's AdmissionReview.
    let mut raw: Value = match serde_json::from_slice(body) {
        Ok(r) => r,
        Err(e) => {
            return Err(Box::new(AdmissionResponse::invalid(format!(
                "not an AdmissionReview: {e}"
            ))));
        }
    };
    let mut take = |key: &str| {
        raw.get_mut("request")
            .and_then(Value::as_object_mut)
            .and_then(|r| r.shift_remove(key))
            .filter(|v| !v.is_null())
    };
    let (new, old) = (take("object"), take("oldObject"));
    let review: AdmissionReview<DynamicObject> = match serde_json::from_value(raw) {
        Ok(r) => r,
        Err(e) => {
            return Err(Box::new(AdmissionResponse::invalid(format!(
                "not an AdmissionReview: {e}"
            ))));
        }
    };
    let request: AdmissionRequest<DynamicObject> = match review.try_into() {
        Ok(r) => r,
        Err(e) => return Err(Box::new(AdmissionResponse::invalid(e))),
    };
    Ok(Read { request, new, old })
}

/// A review as [`read_review`] read it.
pub(crate) struct Read {
    pub(crate) request: AdmissionRequest<DynamicObject>,
    /// `request.object`.
    pub(crate) new: Option<Value>,
    /// `request.oldObject`.
    pub(crate) old: Option<Value>,
}

/// The answer to an allowed write: its warnings, and for the mutating webhook the patch that
/// stores what the policy decided (`parameters`) and who changed it.
fn allowed(
    mut r: AdmissionResponse,
    mode: Mode,
    parameters: Option<Box<Stored>>,
    warnings: Vec<String>,
    request: &AdmissionRequest<DynamicObject>,
    old: Option<&Value>,
    new: &Value,
) -> AdmissionResponse {
    if !warnings.is_empty() {
        r.warnings = Some(warnings);
    }
    match (mode, parameters) {
        (Mode::Mutate, stored) => {
            let patched = stored.map_or_else(|| new.clone(), |s| s.apply(new));
            let user = request.user_info.username.as_deref();
            let patched = stamped(old, new, patched, user);
            let patch = json_patch::diff(new, &patched);
            if patch.0.is_empty() {
                return r;
            }
            match r.clone().with_patch(patch) {
                Ok(with) => with,
                Err(e) => deny(
                    r,
                    &format!("internal error, please report it: cannot serialize the patch: {e}"),
                ),
            }
        }
        _ => r,
    }
}

/// `Err(denial)` when `new` could not be read in every version the CRD serves
/// ([`kudo_crd::convert::servable`]), unless the `old` object already could not and the write
/// makes it no worse: an Instance stored before this check (or past a limit since lowered) can
/// still lose its finalizer, be deleted, and be made smaller.
fn servable(old: Option<&Value>, new: &Value) -> Result<(), String> {
    use kudo_crd::convert::{NoTypes, servable};
    let Err(why) = servable(new, &NoTypes) else {
        return Ok(());
    };
    if let Some(Err(was)) = old.map(|o| servable(o, &NoTypes))
        && was.version == why.version
        && why.bytes <= was.bytes
    {
        return Ok(());
    }
    Err(why).map_err(|why| {
        format!(
            "the Instance cannot be stored: {why}. Keep large data out of parameters (in a ConfigMap or Secret the operator reads) and out of annotations (kubectl apply --server-side keeps no last-applied-configuration annotation)"
        )
    })
}

/// Whether the client wrote through `kudo.dev/v1beta1`. The v1beta2 webhooks
/// (`matchPolicy: Equivalent`) receive the object converted to v1beta2 (`kind.version`
/// v1beta2), and `requestKind` says what the client sent (`/work/shared/wire`:
/// `admission-*-update-sent-as-v1beta1.json`).
fn sent_as_v1beta1(request: &AdmissionRequest<DynamicObject>) -> bool {
    let sent = request.request_kind.as_ref().unwrap_or(&request.kind);
    sent.group == "kudo.dev" && sent.version == "v1beta1"
}

/// Longest problem in a denial, in bytes.
const MAX_PROBLEM_BYTES: usize = 1024;

/// The denial listing the problems: at most [`kudo_policy::limits::MAX_PROBLEMS`], each cut to
/// [`MAX_PROBLEM_BYTES`], then how many more, so that a denial stays within 64 KiB whatever
/// the Instance holds.
fn refused(response: AdmissionResponse, diags: &[Diagnostic]) -> AdmissionResponse {
    let (errors, warnings) = kudo_policy::limits::counts(diags);
    let list: Vec<String> = kudo_policy::limits::bounded(diags.to_vec())
        .iter()
        .map(|d| kudo_diag::cut::cut(&d.to_string(), MAX_PROBLEM_BYTES))
        .collect();
    deny(
        response,
        &format!(
            "the Instance's parameters are refused ({} problem(s)): {}",
            errors + warnings,
            list.join("; ")
        ),
    )
}

pub(crate) fn deny(response: AdmissionResponse, message: &str) -> AdmissionResponse {
    let mut r = response.deny(message);
    r.result = Status::failure(message, "Invalid").with_code(400);
    r
}
