//! Revisions: the past of an Instance, one per accepted change whose plan ran (`kudo history`,
//! `kudo rollback`, the manager's remediation; `docs/lifecycle.md`).
//!
//! A revision is a `apps/v1` **ControllerRevision** in the Instance's namespace, named
//! [`name`] (`<instance>.r<N>`), labelled [`labels::REVISION_OF`], owned by the Instance (so
//! it goes with it), with `revision: N` and the change in its `data` ([`Record`]). Kubernetes
//! itself keeps a StatefulSet's and a DaemonSet's history this way, its `data` is immutable
//! once written, and the built-in `view` role (hence `edit` and `admin`) may read it: whoever
//! may read an Instance may read its history, with no role of kudo's. How the change's plan
//! ended is written later, in the annotations [`labels::REVISION_STATUS`] and
//! [`labels::REVISION_MESSAGE`] (metadata stays writable).
//!
//! A record holds the user's values exactly as the Instance stored them, which never hold a
//! `writeOnly` value (the admission webhook refuses one there): those live in the immutable
//! Secrets `spec.parametersFrom` names, and the record names those Secrets. The manager keeps
//! a Secret while a kept revision names it ([`released_secrets`]).
//!
//! Everything here is pure: the manager writes revisions, `kudo history` and `kudo rollback`
//! read them, and both call these functions.

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use k8s_openapi::apimachinery::pkg::runtime::RawExtension;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::common::{ExecStatus, ObjectRef, ParametersFrom, Remediation};
use crate::labels;
use crate::v1beta2::Instance;

/// What a revision records (the ControllerRevision's `data`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Record {
    /// When the change's plan started (RFC 3339).
    pub time: String,
    /// Who asked: the user the API server authenticated for the write
    /// ([`labels::CHANGED_BY`]); none when no admission webhook saw it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by: Option<String>,
    /// The OperatorVersion (`spec.operatorVersion`).
    pub operator_version: ObjectRef,
    /// The operator's version (`spec.version` of that OperatorVersion).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// `spec.parameters` as stored: what the user set, never a `writeOnly` value.
    #[serde(default)]
    pub parameters: Value,
    /// `spec.parametersFrom`: the Secrets holding the `writeOnly` values then.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parameters_from: Vec<ParametersFrom>,
    /// `spec.immutableDefaults`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub immutable_defaults: Option<Value>,
    /// The effective values the run started with (defaults applied, secret values as keyed
    /// digests), what the Instance's `status.applied` refers to by `revision` and `digest`
    /// instead of copying them: kept as the RFC 6902 patch that turns `parameters` into them
    /// (the defaults, kept values and digests: small), so a large value is stored once
    /// ([`Record::applied_values`], [`applied_patch`]). None in a revision an older manager
    /// recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub applied: Option<json_patch::Patch>,
    /// The plan the change ran.
    pub plan: String,
    /// The run's id.
    pub plan_uid: String,
    /// Why the plan ran (the manager's words: which values changed, an upgrade, a trigger).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    /// The pointers of the effective values that changed (a secret's too: never its value).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changed: Vec<String>,
    /// The revision this change restored (`kudo rollback`, remediation).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rollback_of: Option<i64>,
    /// The remediation that applied to this change (`spec.remediation`, or
    /// `--rollback-on-failure` for this change only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remediation: Option<Remediation>,
    /// Set when the manager made the change itself (remediation), saying why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remediated: Option<String>,
    /// What the maintenance window (`spec.window`) did to this change: it waited from a time
    /// until the window opened, or it ran outside the window (`--ignore-window`, remediation).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<String>,
    /// The container images the change's client checked and pinned (the Instance's
    /// `kudo.dev/images` annotation, [`crate::labels::IMAGES`]): digests, pinned references,
    /// the keys that verified them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub images: Option<Value>,
}

/// A revision as read back.
#[derive(Debug, Clone, PartialEq)]
pub struct Revision {
    /// Its number (1, 2, ...).
    pub number: i64,
    /// The ControllerRevision's name.
    pub name: String,
    /// The change.
    pub record: Record,
    /// How its plan ended, as far as the manager wrote it.
    pub status: ExecStatus,
    /// Why.
    pub message: Option<String>,
}

/// The patch [`Record::applied`] keeps: from the revision's `parameters` to the effective
/// values `applied`.
pub fn applied_patch(parameters: &Value, applied: &Value) -> json_patch::Patch {
    json_patch::diff(parameters, applied)
}

impl Record {
    /// The effective values the run started with ([`Record::applied`] applied to
    /// `parameters`); `None` when the revision does not record them or they do not apply.
    pub fn applied_values(&self) -> Option<Value> {
        let patch = self.applied.as_ref()?;
        let mut values = self.parameters.clone();
        json_patch::patch(&mut values, patch).ok()?;
        Some(values)
    }
}

/// The effective values a revision object records ([`Record::applied_values`]); `None` when
/// it cannot be read or does not record them (an older manager's). What the manager, the
/// webhook and the CLI read where `status.applied` names the revision.
pub fn applied_values(cr: &ControllerRevision) -> Option<Value> {
    read(cr).ok()?.record.applied_values()
}

/// The name of revision `n` of Instance `instance`.
pub fn name(instance: &str, n: i64) -> String {
    format!("{instance}.r{n}")
}

/// The label selector of Instance `instance`'s revisions.
pub fn selector(instance: &str) -> String {
    format!("{}={instance}", labels::REVISION_OF)
}

/// Revision `n` of `inst` recording `record`, owned by the Instance, its plan IN_PROGRESS.
pub fn object(inst: &Instance, n: i64, record: &Record) -> ControllerRevision {
    let instance = inst.metadata.name.clone().unwrap_or_default();
    let owner = OwnerReference {
        api_version: "kudo.dev/v1beta2".into(),
        kind: "Instance".into(),
        name: instance.clone(),
        uid: inst.metadata.uid.clone().unwrap_or_default(),
        controller: Some(false),
        block_owner_deletion: Some(false),
    };
    ControllerRevision {
        metadata: ObjectMeta {
            name: Some(name(&instance, n)),
            namespace: inst.metadata.namespace.clone(),
            labels: Some(BTreeMap::from([
                (labels::REVISION_OF.to_string(), instance),
                (
                    labels::MANAGED_BY.to_string(),
                    labels::MANAGED_BY_KUDO.to_string(),
                ),
            ])),
            annotations: Some(BTreeMap::from([(
                labels::REVISION_STATUS.to_string(),
                ExecStatus::InProgress.to_string(),
            )])),
            owner_references: inst.metadata.uid.as_ref().map(|_| vec![owner]),
            ..ObjectMeta::default()
        },
        data: Some(RawExtension(
            serde_json::to_value(record).unwrap_or_else(|_| json!({})),
        )),
        revision: n,
    }
}

/// Why a ControllerRevision is no revision kudo can read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("ControllerRevision {name} is not a kudo revision: {why}")]
pub struct Unreadable {
    /// Its name.
    pub name: String,
    /// Why.
    pub why: String,
}

/// Reads a revision back.
pub fn read(cr: &ControllerRevision) -> Result<Revision, Unreadable> {
    let name = cr.metadata.name.clone().unwrap_or_default();
    let data = cr.data.as_ref().map(|d| d.0.clone()).unwrap_or(Value::Null);
    let record: Record = serde_json::from_value(data).map_err(|e| Unreadable {
        name: name.clone(),
        why: e.to_string(),
    })?;
    let annotation = |key: &str| {
        cr.metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(key))
            .cloned()
    };
    Ok(Revision {
        number: cr.revision,
        name,
        record,
        status: annotation(labels::REVISION_STATUS)
            .map(ExecStatus::from)
            .unwrap_or(ExecStatus::InProgress),
        message: annotation(labels::REVISION_MESSAGE),
    })
}

/// Every readable revision in `items`, oldest first; the unreadable ones apart.
pub fn read_all(items: &[ControllerRevision]) -> (Vec<Revision>, Vec<Unreadable>) {
    let (mut good, mut bad) = (Vec::new(), Vec::new());
    for cr in items {
        match read(cr) {
            Ok(r) => good.push(r),
            Err(e) => bad.push(e),
        }
    }
    good.sort_by_key(|r| r.number);
    (good, bad)
}

/// The number the next revision takes: one more than the highest kept (1 for the first).
pub fn next_number(revisions: &[Revision]) -> i64 {
    revisions.iter().map(|r| r.number).max().unwrap_or(0) + 1
}

/// The revision recording run `uid`, if one does (a revision written before a status write
/// that failed is not written twice).
pub fn of_run<'a>(revisions: &'a [Revision], uid: &str) -> Option<&'a Revision> {
    revisions.iter().find(|r| r.record.plan_uid == uid)
}

/// The annotations that say how a revision's plan ended (`message` cut to `max` bytes).
pub fn outcome(status: &ExecStatus, message: Option<&str>, max: usize) -> Value {
    let message = message
        .filter(|m| !m.is_empty())
        .map(|m| kudo_diag::cut::cut(m, max));
    json!({"metadata": {"annotations": {
        labels::REVISION_STATUS: status.as_str(),
        labels::REVISION_MESSAGE: message,
    }}})
}

/// The revisions to delete so that `limit` are kept (at least one): the oldest, never
/// `current` (the revision of the plan running now).
pub fn pruned(revisions: &[Revision], limit: u32, current: Option<i64>) -> Vec<&Revision> {
    let limit = limit.max(1) as usize;
    let excess = revisions.len().saturating_sub(limit);
    let mut sorted: Vec<&Revision> = revisions.iter().collect();
    sorted.sort_by_key(|r| r.number);
    sorted
        .into_iter()
        .filter(|r| Some(r.number) != current)
        .take(excess)
        .collect()
}

/// The Secrets of kudo's (`<instance>-params-...`) that the `pruned` revisions name and
/// neither a `kept` revision nor the live Instance (`live`, its `spec.parametersFrom`) names:
/// what goes with the pruned revisions.
pub fn released_secrets(
    instance: &str,
    pruned: &[&Revision],
    kept: &[&Revision],
    live: &[ParametersFrom],
) -> Vec<String> {
    let prefix = format!("{instance}-params-");
    let named = |from: &[ParametersFrom], s: &str| from.iter().any(|f| f.secret_ref.name == s);
    let mut out: Vec<String> = pruned
        .iter()
        .flat_map(|r| r.record.parameters_from.iter())
        .map(|f| f.secret_ref.name.clone())
        .filter(|s| s.starts_with(&prefix))
        .filter(|s| !named(live, s))
        .filter(|s| !kept.iter().any(|r| named(&r.record.parameters_from, s)))
        .collect();
    out.sort();
    out.dedup();
    out
}

/// The revision `kudo rollback` goes back to when none is named: the newest one before the
/// newest that completed (the previous good state).
pub fn previous_complete(revisions: &[Revision]) -> Option<&Revision> {
    let newest = revisions.iter().map(|r| r.number).max()?;
    revisions
        .iter()
        .filter(|r| r.number < newest && r.status == ExecStatus::Complete)
        .max_by_key(|r| r.number)
}

/// The last revision that completed before revision `failed`: where remediation rolls back to.
pub fn last_complete_before(revisions: &[Revision], failed: i64) -> Option<&Revision> {
    revisions
        .iter()
        .filter(|r| r.number < failed && r.status == ExecStatus::Complete)
        .max_by_key(|r| r.number)
}

/// The value of [`labels::ROLLBACK`] for restoring revision `n` on top of generation `g`.
pub fn rollback_annotation(n: i64, g: i64) -> String {
    format!("{n}@{g}")
}

/// The revision a write restores: [`labels::ROLLBACK`] in `annotations` naming the generation
/// of the object it replaces (`old_generation`); `None` for any other write.
pub fn rollback_of(
    annotations: Option<&BTreeMap<String, String>>,
    old_generation: Option<i64>,
) -> Option<i64> {
    let text = annotations?.get(labels::ROLLBACK)?;
    let (n, g) = text.split_once('@')?;
    let (n, g) = (n.parse().ok()?, g.parse::<i64>().ok()?);
    (Some(g) == old_generation).then_some(n)
}

/// Whether `inst`'s current generation restores a revision (`kudo rollback`, remediation's
/// rollback): [`labels::ROLLBACK`] written on top of the generation before it.
pub fn restoring(inst: &Instance) -> bool {
    rollback_of(
        inst.metadata.annotations.as_ref(),
        inst.metadata.generation.map(|g| g - 1),
    )
    .is_some()
}

/// The remediation `--rollback-on-failure` asked for the change written on top of generation
/// `g` ([`labels::REMEDIATE_ONCE`]).
pub fn remediate_once_annotation(g: i64, r: &Remediation) -> String {
    format!(
        "{g}:{}",
        serde_json::to_string(r).unwrap_or_else(|_| "{}".into())
    )
}

/// The remediation that applies to the change an Instance at `generation` holds: the one
/// `--rollback-on-failure` gave for it ([`labels::REMEDIATE_ONCE`], written on top of
/// `generation - 1`), else `spec.remediation`.
pub fn remediation_for(inst: &Instance) -> Option<Remediation> {
    let once = inst
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(labels::REMEDIATE_ONCE))
        .and_then(|t| t.split_once(':'))
        .filter(|(g, _)| g.parse::<i64>().ok().map(|g| g + 1) == inst.metadata.generation)
        .and_then(|(_, r)| serde_json::from_str::<Remediation>(r).ok());
    once.or_else(|| inst.spec.remediation.clone())
}

/// The annotation `kudo upgrade --allow-drop|--force` writes on top of generation `g`
/// ([`labels::PREFLIGHT`]).
pub fn preflight_annotation(g: i64, allow: &kudo_policy::preflight::Allow) -> String {
    format!(
        "{g}:{}",
        serde_json::to_string(allow).unwrap_or_else(|_| "{}".into())
    )
}

/// What the preflight lets through for a write on top of generation `old_generation` (the
/// admission webhook): [`labels::PREFLIGHT`] of the new object when written on top of exactly
/// that generation, else nothing.
pub fn preflight_of(
    annotations: Option<&BTreeMap<String, String>>,
    old_generation: Option<i64>,
) -> kudo_policy::preflight::Allow {
    annotations
        .and_then(|a| a.get(labels::PREFLIGHT))
        .and_then(|t| t.split_once(':'))
        .filter(|(g, _)| g.parse::<i64>().ok() == old_generation)
        .and_then(|(_, a)| serde_json::from_str(a).ok())
        .unwrap_or_default()
}

/// What the preflight lets through for the change an Instance at its generation holds (the
/// manager): [`labels::PREFLIGHT`] written on top of `generation - 1`, else nothing.
pub fn preflight_for(inst: &Instance) -> kudo_policy::preflight::Allow {
    preflight_of(
        inst.metadata.annotations.as_ref(),
        inst.metadata.generation.map(|g| g - 1),
    )
}

/// The `spec` fields of an Instance that restore `record` (a JSON merge patch's `spec`, with
/// `parameters` whole: a merge patch would merge them, so the caller replaces it).
pub fn restored_spec(record: &Record) -> Value {
    json!({
        "operatorVersion": record.operator_version,
        "parameters": record.parameters,
        "parametersFrom": if record.parameters_from.is_empty() {
            Value::Null
        } else {
            serde_json::to_value(&record.parameters_from).unwrap_or(Value::Null)
        },
        "immutableDefaults": record.immutable_defaults.clone().unwrap_or(Value::Null),
    })
}

/// The JSON patch (RFC 6902) that restores `record` in `inst`, with `annotations` set: the
/// OperatorVersion, `spec.parameters` whole, `spec.parametersFrom` and
/// `spec.immutableDefaults`, guarded by a `test` of the resourceVersion read (a write on top of
/// a newer Instance fails with 422 and nothing is written). What `kudo rollback` and the
/// manager's remediation send.
pub fn restore_patch(
    inst: &Instance,
    record: &Record,
    annotations: &[(&str, String)],
) -> Vec<json_patch::PatchOperation> {
    use crate::patch::{add, path, remove, test};
    let mut ops = vec![test(
        path(["metadata", "resourceVersion"]),
        json!(inst.metadata.resource_version.clone().unwrap_or_default()),
    )];
    let spec = |field: &'static str| path(["spec", field]);
    ops.push(add(
        spec("operatorVersion"),
        serde_json::to_value(&record.operator_version).unwrap_or_default(),
    ));
    let parameters = match &record.parameters {
        Value::Object(_) => record.parameters.clone(),
        _ => json!({}),
    };
    ops.push(add(spec("parameters"), parameters));
    let from = serde_json::to_value(&record.parameters_from).unwrap_or_default();
    match (
        record.parameters_from.is_empty(),
        inst.spec.parameters_from.is_empty(),
    ) {
        (false, _) => ops.push(add(spec("parametersFrom"), from)),
        (true, false) => ops.push(remove(spec("parametersFrom"))),
        (true, true) => {}
    }
    match (&record.immutable_defaults, &inst.spec.immutable_defaults) {
        (Some(k), _) => ops.push(add(spec("immutableDefaults"), k.clone())),
        (None, Some(_)) => ops.push(remove(spec("immutableDefaults"))),
        (None, None) => {}
    }
    if inst.metadata.annotations.is_none() {
        ops.push(add(path(["metadata", "annotations"]), json!({})));
    }
    for (key, value) in annotations {
        ops.push(add(path(["metadata", "annotations", key]), json!(value)));
    }
    ops
}

/// A Go duration as `spec.remediation.timeout` takes it (`30s`, `5m`, `1h30m`, `1.5h`).
///
/// By hand, not `humantime` (which the flags use): the field is a Go duration, as Kubernetes
/// tools write it (fractions, `ms`), which humantime reads otherwise (`1.5h` it refuses).
pub fn parse_duration(text: &str) -> Option<std::time::Duration> {
    let mut total = 0f64;
    let mut rest = text.trim();
    if rest.is_empty() {
        return None;
    }
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let number: f64 = rest[..digits].parse().ok()?;
        rest = &rest[digits..];
        let unit = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let scale = match &rest[..unit] {
            "ms" => 0.001,
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            _ => return None,
        };
        total += number * scale;
        rest = &rest[unit..];
    }
    (total.is_finite() && total >= 0.0).then(|| std::time::Duration::from_secs_f64(total))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::SecretKeyRef;

    fn rev(n: i64, status: ExecStatus, secrets: &[&str]) -> Revision {
        Revision {
            number: n,
            name: name("c", n),
            record: Record {
                plan: "deploy".into(),
                plan_uid: format!("deploy-g{n}"),
                parameters_from: secrets
                    .iter()
                    .map(|s| ParametersFrom {
                        secret_ref: SecretKeyRef {
                            name: (*s).into(),
                            key: None,
                        },
                        pointer: None,
                    })
                    .collect(),
                ..Record::default()
            },
            status,
            message: None,
        }
    }

    #[test]
    fn a_revision_is_written_and_read_back_with_its_outcome() {
        let mut inst = Instance::new("c", Default::default());
        inst.metadata.namespace = Some("ns".into());
        inst.metadata.uid = Some("u-1".into());
        let record = Record {
            time: "2026-11-27T20:00:00Z".into(),
            by: Some("system:serviceaccount:t:admin".into()),
            operator_version: ObjectRef {
                name: Some("cassandra-0.1.0".into()),
                ..ObjectRef::default()
            },
            parameters: json!({"nodes": 3}),
            plan: "deploy".into(),
            plan_uid: "deploy-g1".into(),
            changed: vec!["/nodes".into()],
            ..Record::default()
        };
        let mut cr = object(&inst, 1, &record);
        assert_eq!(cr.metadata.name.as_deref(), Some("c.r1"));
        assert_eq!(cr.metadata.owner_references.as_ref().unwrap()[0].uid, "u-1");
        let read_back = read(&cr).unwrap();
        assert_eq!(read_back.record, record);
        assert_eq!(read_back.status, ExecStatus::InProgress);
        let patch = outcome(&ExecStatus::Complete, Some("done"), 100);
        let annotations: BTreeMap<String, String> =
            serde_json::from_value(patch["metadata"]["annotations"].clone()).unwrap();
        cr.metadata.annotations = Some(annotations);
        let read_back = read(&cr).unwrap();
        assert_eq!(read_back.status, ExecStatus::Complete);
        assert_eq!(read_back.message.as_deref(), Some("done"));
    }

    #[test]
    fn a_foreign_controller_revision_is_named_not_read() {
        let cr = ControllerRevision {
            metadata: ObjectMeta {
                name: Some("x".into()),
                ..ObjectMeta::default()
            },
            data: Some(RawExtension(json!({"spec": {}}))),
            revision: 1,
        };
        let err = read(&cr).unwrap_err();
        assert_eq!(err.name, "x");
        assert!(err.to_string().contains("not a kudo revision"), "{err}");
    }

    #[test]
    fn pruning_keeps_the_newest_and_the_running_one() {
        let revs: Vec<Revision> = (1..=5).map(|n| rev(n, ExecStatus::Complete, &[])).collect();
        let numbers = |v: Vec<&Revision>| v.iter().map(|r| r.number).collect::<Vec<_>>();
        assert_eq!(numbers(pruned(&revs, 2, Some(5))), [1, 2, 3]);
        assert_eq!(numbers(pruned(&revs, 10, Some(5))), Vec::<i64>::new());
        assert_eq!(
            numbers(pruned(&revs, 0, None)),
            [1, 2, 3, 4],
            "at least one kept"
        );
        // The running revision is never pruned, even when it is the oldest.
        assert_eq!(numbers(pruned(&revs, 2, Some(1))), [2, 3, 4]);
    }

    #[test]
    fn a_secret_goes_when_no_kept_revision_and_not_the_instance_names_it() {
        let revs = [
            rev(1, ExecStatus::Complete, &["c-params-a", "own"]),
            rev(2, ExecStatus::Complete, &["c-params-b"]),
            rev(3, ExecStatus::Complete, &["c-params-b"]),
            rev(4, ExecStatus::Complete, &["c-params-c"]),
        ];
        let live = rev(9, ExecStatus::Complete, &["c-params-c"])
            .record
            .parameters_from;
        let released = released_secrets("c", &[&revs[0], &revs[1]], &[&revs[2], &revs[3]], &live);
        // The user's own Secret is never kudo's to delete; b is still named by revision 3.
        assert_eq!(released, ["c-params-a"]);
        let released = released_secrets("c", &[&revs[2]], &[&revs[3]], &live);
        assert_eq!(released, ["c-params-b"]);
        assert!(
            released_secrets("c", &[&revs[3]], &[], &live).is_empty(),
            "live"
        );
    }

    #[test]
    fn the_default_rollback_target_is_the_previous_completed_revision() {
        use ExecStatus::*;
        let revs = [
            rev(1, Complete, &[]),
            rev(2, FatalError, &[]),
            rev(3, Complete, &[]),
            rev(4, FatalError, &[]),
        ];
        assert_eq!(previous_complete(&revs).map(|r| r.number), Some(3));
        assert_eq!(previous_complete(&revs[..3]).map(|r| r.number), Some(1));
        assert_eq!(
            previous_complete(&revs[..1]),
            None,
            "nothing before the first"
        );
        assert_eq!(last_complete_before(&revs, 4).map(|r| r.number), Some(3));
        assert_eq!(last_complete_before(&revs, 3).map(|r| r.number), Some(1));
    }

    #[test]
    fn a_rollback_annotation_counts_only_on_the_generation_it_names() {
        let a = |t: &str| BTreeMap::from([(labels::ROLLBACK.to_string(), t.to_string())]);
        assert_eq!(rollback_of(Some(&a("3@7")), Some(7)), Some(3));
        assert_eq!(rollback_of(Some(&a("3@7")), Some(8)), None, "left behind");
        assert_eq!(rollback_of(Some(&a("x@7")), Some(7)), None);
        assert_eq!(rollback_of(None, Some(7)), None);
        assert_eq!(rollback_annotation(3, 7), "3@7");
    }

    #[test]
    fn remediation_for_one_change_wins_over_the_spec_only_for_that_change() {
        let once = Remediation {
            retries: None,
            on_failure: Some(crate::common::OnFailure::Rollback),
            timeout: Some("30s".into()),
        };
        let mut inst = Instance::new("c", Default::default());
        inst.spec.remediation = Some(Remediation::default());
        inst.metadata.generation = Some(5);
        inst.metadata.annotations = Some(BTreeMap::from([(
            labels::REMEDIATE_ONCE.to_string(),
            remediate_once_annotation(4, &once),
        )]));
        assert_eq!(remediation_for(&inst), Some(once));
        inst.metadata.generation = Some(6);
        assert_eq!(remediation_for(&inst), Some(Remediation::default()));
    }

    #[test]
    fn a_restore_patch_replaces_the_values_whole_and_is_guarded() {
        let mut inst = Instance::new("c", Default::default());
        inst.metadata.resource_version = Some("42".into());
        inst.spec.parameters = Some(json!({"nodes": 5, "extra": true}));
        inst.spec.parameters_from = rev(1, ExecStatus::Complete, &["c-params-new"])
            .record
            .parameters_from;
        let mut record = rev(1, ExecStatus::Complete, &[]).record;
        record.parameters = json!({"nodes": 3});
        record.operator_version.name = Some("c-0.1.0".into());
        let ops = restore_patch(&inst, &record, &[(labels::ROLLBACK, "1@7".into())]);
        let mut obj = serde_json::to_value(&inst).unwrap();
        json_patch::patch(&mut obj, &ops).unwrap();
        assert_eq!(
            obj["spec"]["parameters"],
            json!({"nodes": 3}),
            "whole, not merged"
        );
        assert_eq!(obj["spec"]["operatorVersion"]["name"], json!("c-0.1.0"));
        assert!(obj["spec"].get("parametersFrom").is_none());
        assert_eq!(
            obj["metadata"]["annotations"][labels::ROLLBACK],
            json!("1@7")
        );
        // On top of a newer Instance, nothing is written.
        let mut newer = serde_json::to_value(&inst).unwrap();
        newer["metadata"]["resourceVersion"] = json!("43");
        assert!(json_patch::patch(&mut newer, &ops).is_err());
    }

    #[test]
    fn go_durations_parse() {
        use std::time::Duration;
        assert_eq!(parse_duration("30s"), Some(Duration::from_secs(30)));
        assert_eq!(parse_duration("5m"), Some(Duration::from_secs(300)));
        assert_eq!(parse_duration("1h30m"), Some(Duration::from_secs(5400)));
        assert_eq!(parse_duration("1.5h"), Some(Duration::from_secs(5400)));
        assert_eq!(parse_duration("250ms"), Some(Duration::from_millis(250)));
        for bad in ["", "30", "5 m", "m", "-1s", "1d"] {
            assert_eq!(parse_duration(bad), None, "{bad:?}");
        }
    }
}
