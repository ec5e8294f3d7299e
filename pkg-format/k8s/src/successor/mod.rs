//! Removed API versions and their successors: what an object written in an API version that
//! Kubernetes no longer serves becomes in the version that replaced it.
//!
//! Kubernetes stops serving beta API versions a few releases after their successor is out
//! (rabbitmq's `rbac.authorization.k8s.io/v1beta1` Role, spark's
//! `apiextensions.k8s.io/v1beta1` CRDs: not served since 1.22), and a plan applying such an
//! object fails with "not served". kudo-manager, when discovery says a cluster does not serve an
//! object's apiVersion, applies [`convert`]'s result instead; `package verify` warns about every
//! rendered object in a removed version. Both read [`REMOVED`], one row per (apiVersion, kind),
//! each citing its section of Kubernetes' Deprecated API Migration Guide ([`GUIDE`]).
//!
//! A conversion is mechanical or it is refused:
//!
//! - most rows change only the `apiVersion` (the guide: "no notable changes");
//! - Deployments, StatefulSets, DaemonSets and ReplicaSets get the `spec.selector` apps/v1
//!   requires from their template's labels, and the defaults their old version gave and
//!   apps/v1 gives differently are written out (a v1beta1 StatefulSet keeps `OnDelete`);
//! - Ingress backends take v1's shape (`service: {name, port: {number | name}}`,
//!   `spec.defaultBackend`), and a path without `pathType` gets `ImplementationSpecific`;
//! - an empty PodDisruptionBudget selector (no pods in v1beta1, every pod in v1) is dropped;
//! - v2beta1 HorizontalPodAutoscaler metrics take v2's `metric`/`target` shape;
//! - v1beta1 admission webhooks get their old defaults written out;
//! - a v1beta1 CustomResourceDefinition becomes a v1 one with a structural schema per version
//!   (see `crd.rs`).
//!
//! Everything else in the object is kept, in its order. What was done is listed in
//! [`Converted::notes`]; what cannot be done mechanically is an [`Unmapped`] whose
//! [`Refusal`] says what the author must do (PodSecurityPolicy has no successor; a Deployment's
//! `rollbackTo`, a webhook without `sideEffects`, a CRD schema that is still not structural).
//!
//! ```
//! use kudo_k8s::successor;
//! use serde_json::json;
//!
//! let role = json!({
//!     "kind": "Role",
//!     "apiVersion": "rbac.authorization.k8s.io/v1beta1",
//!     "metadata": {"name": "rabbitmq-peer-discovery-rbac"},
//!     "rules": [{"apiGroups": [""], "resources": ["endpoints"], "verbs": ["get"]}]
//! });
//! let converted = successor::convert(&role).unwrap().unwrap();
//! assert_eq!(converted.object["apiVersion"], "rbac.authorization.k8s.io/v1");
//! assert_eq!(converted.object["rules"], role["rules"]);
//! assert_eq!(converted.removal.removed_in.to_string(), "1.22");
//! assert!(converted.notes.is_empty());
//!
//! // a version Kubernetes still serves is not converted
//! assert!(successor::convert(&json!({"apiVersion": "v1", "kind": "ConfigMap"})).is_none());
//! ```
//!
//! Not in the table: the review APIs (`TokenReview`, `SubjectAccessReview`...: requests, never
//! stored), and what controllers rather than packages write (`Event`, `EndpointSlice`,
//! `CertificateSigningRequest`, the flow-control objects).

use std::fmt;

use serde_json::{Map, Value, json};

use crate::structural::Violation;
use kudo_diag::pointer;

mod crd;

/// Kubernetes' Deprecated API Migration Guide: every row of [`REMOVED`] names its section.
pub const GUIDE: &str = "https://kubernetes.io/docs/reference/using-api/deprecation-guide/";

/// A Kubernetes release, `1.22`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Release {
    /// Major version (1).
    pub major: u32,
    /// Minor version.
    pub minor: u32,
}

/// `1.22`.
impl fmt::Display for Release {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// One removed API version of one kind, and what replaces it.
#[derive(Debug, PartialEq, Eq)]
pub struct Removal {
    /// The removed apiVersion: `rbac.authorization.k8s.io/v1beta1`.
    pub from: &'static str,
    /// The kind.
    pub kind: &'static str,
    /// The successor apiVersion, or `None` when the kind has none (PodSecurityPolicy).
    pub to: Option<&'static str>,
    /// The first release that does not serve `from`.
    pub removed_in: Release,
    /// The section of [`GUIDE`] that says so: `#rbac-resources-v122`.
    pub section: &'static str,
    rewrite: Rewrite,
}

impl Removal {
    /// The guide's section as a link.
    pub fn reference(&self) -> String {
        format!("{GUIDE}{}", self.section)
    }

    /// True when only the `apiVersion` changes.
    pub fn renames_only(&self) -> bool {
        self.rewrite == Rewrite::ApiVersion
    }
}

/// What a row's conversion does besides setting the new `apiVersion`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rewrite {
    /// Nothing: the fields are the same.
    ApiVersion,
    /// apps/v1: the selector, the old version's defaults, `rollbackTo`, `templateGeneration`.
    Workload,
    /// networking.k8s.io/v1 Ingress backends and `pathType`.
    Ingress,
    /// policy/v1: an empty selector.
    DisruptionBudget,
    /// autoscaling/v2 metrics from v2beta1's.
    Autoscaler,
    /// admissionregistration.k8s.io/v1 defaults and `sideEffects`.
    Webhooks,
    /// apiextensions.k8s.io/v1.
    Crd,
    /// No mechanical successor: the advice.
    Refused(&'static str),
}

const fn row(
    from: &'static str,
    kind: &'static str,
    to: Option<&'static str>,
    minor: u32,
    section: &'static str,
    rewrite: Rewrite,
) -> Removal {
    Removal {
        from,
        kind,
        to,
        removed_in: Release { major: 1, minor },
        section,
        rewrite,
    }
}

const PSP_ADVICE: &str = "PodSecurityPolicy has no successor since Kubernetes 1.25: enforce pod security with Pod Security Admission (namespace labels) or an admission webhook, and remove this object";

/// Every removed API version kudo knows, in the guide's order of releases.
#[rustfmt::skip]
pub static REMOVED: &[Removal] = {
    use Rewrite::*;
    const RBAC: Option<&str> = Some("rbac.authorization.k8s.io/v1");
    const APPS: Option<&str> = Some("apps/v1");
    const STORAGE: Option<&str> = Some("storage.k8s.io/v1");
    const NETWORKING: Option<&str> = Some("networking.k8s.io/v1");
    &[
        // 1.16
        row("extensions/v1beta1", "NetworkPolicy", NETWORKING, 16, "#networkpolicy-v116", ApiVersion),
        row("extensions/v1beta1", "DaemonSet", APPS, 16, "#daemonset-v116", Workload),
        row("apps/v1beta2", "DaemonSet", APPS, 16, "#daemonset-v116", Workload),
        row("extensions/v1beta1", "Deployment", APPS, 16, "#deployment-v116", Workload),
        row("apps/v1beta1", "Deployment", APPS, 16, "#deployment-v116", Workload),
        row("apps/v1beta2", "Deployment", APPS, 16, "#deployment-v116", Workload),
        row("apps/v1beta1", "StatefulSet", APPS, 16, "#statefulset-v116", Workload),
        row("apps/v1beta2", "StatefulSet", APPS, 16, "#statefulset-v116", Workload),
        row("extensions/v1beta1", "ReplicaSet", APPS, 16, "#replicaset-v116", Workload),
        row("apps/v1beta1", "ReplicaSet", APPS, 16, "#replicaset-v116", Workload),
        row("apps/v1beta2", "ReplicaSet", APPS, 16, "#replicaset-v116", Workload),
        row("extensions/v1beta1", "PodSecurityPolicy", None, 16, "#psp-v125", Refused(PSP_ADVICE)),
        // 1.22
        row("admissionregistration.k8s.io/v1beta1", "MutatingWebhookConfiguration", Some("admissionregistration.k8s.io/v1"), 22, "#webhook-resources-v122", Webhooks),
        row("admissionregistration.k8s.io/v1beta1", "ValidatingWebhookConfiguration", Some("admissionregistration.k8s.io/v1"), 22, "#webhook-resources-v122", Webhooks),
        row("apiextensions.k8s.io/v1beta1", "CustomResourceDefinition", Some("apiextensions.k8s.io/v1"), 22, "#customresourcedefinition-v122", Crd),
        row("apiregistration.k8s.io/v1beta1", "APIService", Some("apiregistration.k8s.io/v1"), 22, "#apiservice-v122", ApiVersion),
        row("coordination.k8s.io/v1beta1", "Lease", Some("coordination.k8s.io/v1"), 22, "#lease-v122", ApiVersion),
        row("extensions/v1beta1", "Ingress", NETWORKING, 22, "#ingress-v122", Ingress),
        row("networking.k8s.io/v1beta1", "Ingress", NETWORKING, 22, "#ingress-v122", Ingress),
        row("networking.k8s.io/v1beta1", "IngressClass", NETWORKING, 22, "#ingressclass-v122", ApiVersion),
        row("rbac.authorization.k8s.io/v1beta1", "ClusterRole", RBAC, 22, "#rbac-resources-v122", ApiVersion),
        row("rbac.authorization.k8s.io/v1beta1", "ClusterRoleBinding", RBAC, 22, "#rbac-resources-v122", ApiVersion),
        row("rbac.authorization.k8s.io/v1beta1", "Role", RBAC, 22, "#rbac-resources-v122", ApiVersion),
        row("rbac.authorization.k8s.io/v1beta1", "RoleBinding", RBAC, 22, "#rbac-resources-v122", ApiVersion),
        row("scheduling.k8s.io/v1beta1", "PriorityClass", Some("scheduling.k8s.io/v1"), 22, "#priorityclass-v122", ApiVersion),
        row("storage.k8s.io/v1beta1", "CSIDriver", STORAGE, 22, "#storage-resources-v122", ApiVersion),
        row("storage.k8s.io/v1beta1", "CSINode", STORAGE, 22, "#storage-resources-v122", ApiVersion),
        row("storage.k8s.io/v1beta1", "StorageClass", STORAGE, 22, "#storage-resources-v122", ApiVersion),
        row("storage.k8s.io/v1beta1", "VolumeAttachment", STORAGE, 22, "#storage-resources-v122", ApiVersion),
        // 1.25
        row("batch/v1beta1", "CronJob", Some("batch/v1"), 25, "#cronjob-v125", ApiVersion),
        row("autoscaling/v2beta1", "HorizontalPodAutoscaler", Some("autoscaling/v2"), 25, "#horizontalpodautoscaler-v125", Autoscaler),
        row("policy/v1beta1", "PodDisruptionBudget", Some("policy/v1"), 25, "#poddisruptionbudget-v125", DisruptionBudget),
        row("policy/v1beta1", "PodSecurityPolicy", None, 25, "#psp-v125", Refused(PSP_ADVICE)),
        row("node.k8s.io/v1beta1", "RuntimeClass", Some("node.k8s.io/v1"), 25, "#runtimeclass-v125", ApiVersion),
        // 1.26
        row("autoscaling/v2beta2", "HorizontalPodAutoscaler", Some("autoscaling/v2"), 26, "#horizontalpodautoscaler-v126", ApiVersion),
        // 1.27
        row("storage.k8s.io/v1beta1", "CSIStorageCapacity", STORAGE, 27, "#csistoragecapacity-v127", ApiVersion),
    ]
};

/// The row for an object's `apiVersion` and `kind`, when that version is removed.
pub fn removal(api_version: &str, kind: &str) -> Option<&'static Removal> {
    REMOVED
        .iter()
        .find(|r| r.from == api_version && r.kind == kind)
}

/// An object converted to its successor version.
#[derive(Debug, Clone, PartialEq)]
pub struct Converted {
    /// The object in the successor version: what to apply.
    pub object: Value,
    /// The removed version it was written in, and its successor.
    pub removal: &'static Removal,
    /// What was changed besides the `apiVersion`, in object order.
    pub notes: Vec<Note>,
}

/// One change a conversion made besides the `apiVersion`. Pointers are JSON pointers into the
/// object (the converted one for `Added` and `Moved`'s `to`, the original one otherwise).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Note {
    /// A field the successor requires, or defaults otherwise than the old version did, written
    /// out with the value the old API server gave it.
    Added {
        /// Where.
        pointer: String,
        /// The value written.
        value: Value,
        /// Why, in words.
        why: &'static str,
    },
    /// A field that the successor has under another name or place.
    Moved {
        /// Where it was.
        from: String,
        /// Where it is.
        to: String,
    },
    /// A field the successor does not have, or that would mean something else there.
    Dropped {
        /// Where it was.
        pointer: String,
        /// Why, in words.
        why: &'static str,
    },
    /// A CRD's custom resources are pruned of the fields their schema does not declare, as v1
    /// always does; v1beta1's `preserveUnknownFields` defaulted to keeping them.
    Pruning {
        /// The CRD's `spec.preserveUnknownFields` as it was (`None`: not given).
        was: Option<bool>,
    },
}

/// `/spec/selector: added {"matchLabels":{"app":"x"}} (apps/v1 requires it; ...)`.
impl fmt::Display for Note {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Note::Added {
                pointer,
                value,
                why,
            } => write!(f, "{pointer}: added {value} ({why})"),
            Note::Moved { from, to } => write!(f, "{from}: moved to {to}"),
            Note::Dropped { pointer, why } => write!(f, "{pointer}: dropped ({why})"),
            Note::Pruning { was } => {
                let was = match was {
                    Some(true) => "true",
                    _ => "not given (true by default)",
                };
                write!(
                    f,
                    "/spec/preserveUnknownFields: false (it was {was}, which apiextensions.k8s.io/v1 refuses): custom resources are pruned of fields their schema does not declare; objects without declared properties keep theirs"
                )
            }
        }
    }
}

/// An object in a removed API version that kudo cannot convert mechanically.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{} {} is not served since Kubernetes {}{}: {refusal}", .removal.from, .removal.kind, .removal.removed_in, .removal.to.map(|t| format!(", and kudo cannot apply it as {t}")).unwrap_or_default())]
pub struct Unmapped {
    /// The removed version.
    pub removal: &'static Removal,
    /// Why, and what to do.
    pub refusal: Refusal,
}

/// Why an object cannot be converted, and what its author should do.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Refusal {
    /// The kind has no mechanical successor.
    NoSuccessor {
        /// What to do instead.
        advice: &'static str,
    },
    /// A field whose meaning the successor cannot express.
    Field {
        /// Where it is.
        pointer: String,
        /// What is wrong with it, and what to do.
        advice: &'static str,
    },
    /// A workload without `spec.selector` nor template labels to take it from.
    NoSelector,
    /// A CRD version whose schema is not structural, even with the mechanical fixes.
    NotStructural {
        /// The version's name.
        version: String,
        /// The schema's place in the converted object.
        pointer: String,
        /// kube-apiserver's reasons, pointers relative to the schema.
        violations: Vec<Violation>,
    },
    /// Something that is not what its version says it is (a `spec` that is not an object).
    Malformed {
        /// Where.
        pointer: String,
        /// What was expected there.
        expected: &'static str,
    },
}

/// How many violations a [`Refusal::NotStructural`] names.
const VIOLATIONS_SHOWN: usize = 3;

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::NoSuccessor { advice } => f.write_str(advice),
            Refusal::Field { pointer, advice } => write!(f, "{pointer}: {advice}"),
            Refusal::NoSelector => f.write_str(
                "/spec/selector: apps/v1 requires a selector, and the template has no labels to take it from: give spec.selector",
            ),
            Refusal::NotStructural {
                version,
                pointer,
                violations,
            } => {
                write!(
                    f,
                    "the schema of version {version} is not structural, as apiextensions.k8s.io/v1 requires: "
                )?;
                let listed: Vec<String> = violations
                    .iter()
                    .take(VIOLATIONS_SHOWN)
                    .map(|v| {
                        // a violation displays with its pointer first ("/" for the root)
                        let text = v.to_string();
                        let rest = if v.pointer().is_empty() { &text[1..] } else { &text };
                        format!("{pointer}{rest}")
                    })
                    .collect();
                f.write_str(&listed.join("; "))?;
                if violations.len() > VIOLATIONS_SHOWN {
                    write!(f, " (and {} more)", violations.len() - VIOLATIONS_SHOWN)?;
                }
                f.write_str("; fix the schema (docs/removed-apis.md)")
            }
            Refusal::Malformed { pointer, expected } => {
                let at = if pointer.is_empty() { "/" } else { pointer };
                write!(f, "{at}: expected {expected}")
            }
        }
    }
}

/// The object in its successor version: `None` when its `apiVersion` and `kind` are not a
/// removed version kudo knows ([`REMOVED`]), an [`Unmapped`] when they are but the object has
/// no mechanical successor. The object is not otherwise validated.
///
/// kudo-manager calls this for an object whose apiVersion the cluster does not serve, and
/// applies [`Converted::object`].
pub fn convert(obj: &Value) -> Option<Result<Converted, Unmapped>> {
    let api_version = obj.get("apiVersion")?.as_str()?;
    let kind = obj.get("kind")?.as_str()?;
    let removal = removal(api_version, kind)?;
    let unmapped = |refusal| Unmapped { removal, refusal };
    let (Some(to), Value::Object(map)) = (removal.to, obj) else {
        let advice = match removal.rewrite {
            Rewrite::Refused(advice) => advice,
            _ => "no successor",
        };
        return Some(Err(unmapped(Refusal::NoSuccessor { advice })));
    };
    let mut map = map.clone();
    map.insert("apiVersion".into(), Value::String(to.into()));
    let mut notes = Vec::new();
    let done = match removal.rewrite {
        Rewrite::ApiVersion => Ok(()),
        Rewrite::Workload => workload(&mut map, removal, &mut notes),
        Rewrite::Ingress => ingress(&mut map, &mut notes),
        Rewrite::DisruptionBudget => disruption_budget(&mut map, &mut notes),
        Rewrite::Autoscaler => autoscaler(&mut map, &mut notes),
        Rewrite::Webhooks => webhooks(&mut map, &mut notes),
        Rewrite::Crd => crd::convert(&mut map, &mut notes),
        Rewrite::Refused(advice) => Err(Refusal::NoSuccessor { advice }),
    };
    Some(match done {
        Ok(()) => Ok(Converted {
            object: Value::Object(map),
            removal,
            notes,
        }),
        Err(refusal) => Err(unmapped(refusal)),
    })
}

/// The object at `key` of `map` (`at` is `map`'s pointer), created empty when absent.
fn object_at<'m>(
    map: &'m mut Map<String, Value>,
    key: &str,
    at: &str,
) -> Result<&'m mut Map<String, Value>, Refusal> {
    map.entry(key.to_string())
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
        .ok_or_else(|| Refusal::Malformed {
            pointer: pointer::push(at, key),
            expected: "an object",
        })
}

/// The object at `key` of `map`, when present; an error when present and not an object.
fn existing_object<'m>(
    map: &'m mut Map<String, Value>,
    key: &str,
    at: &str,
) -> Result<Option<&'m mut Map<String, Value>>, Refusal> {
    match map.get_mut(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(m)) => Ok(Some(m)),
        Some(_) => Err(Refusal::Malformed {
            pointer: pointer::push(at, key),
            expected: "an object",
        }),
    }
}

/// Sets `key` of `map` (at pointer `at`) to `value` when absent, before `before` when that key
/// is there (else last), and notes it.
fn default_field(
    map: &mut Map<String, Value>,
    at: &str,
    key: &str,
    value: Value,
    before: Option<&str>,
    why: &'static str,
    notes: &mut Vec<Note>,
) {
    if map.get(key).is_some_and(|v| !v.is_null()) {
        return;
    }
    notes.push(Note::Added {
        pointer: pointer::push(at, key),
        value: value.clone(),
        why,
    });
    if map.contains_key(key) {
        map.insert(key.to_string(), value); // a null, replaced where it is
        return;
    }
    let index = before
        .and_then(|b| map.keys().position(|k| k == b))
        .unwrap_or(map.len());
    map.shift_insert(index, key.to_string(), value);
}

/// Renames `from` to `to` in place, keeping its position; true when `from` was there.
fn rename(map: &mut Map<String, Value>, from: &str, to: &str) -> bool {
    let Some(index) = map.keys().position(|k| k == from) else {
        return false;
    };
    if let Some(v) = map.shift_remove(from) {
        map.shift_insert(index, to.to_string(), v);
    }
    true
}

/// `rollbackTo` and `templateGeneration`, the selector apps/v1 requires, the labels the old
/// server copied from the template, and the defaults that changed.
fn workload(
    obj: &mut Map<String, Value>,
    removal: &Removal,
    notes: &mut Vec<Note>,
) -> Result<(), Refusal> {
    // extensions/v1beta1 and apps/v1beta1 defaulted the selector and the object's own labels
    // from the template's labels; apps/v1beta2 and apps/v1 require the selector.
    let old_defaulting = removal.from != "apps/v1beta2";
    let spec = object_at(obj, "spec", "")?;
    if spec.contains_key("rollbackTo") {
        return Err(Refusal::Field {
            pointer: "/spec/rollbackTo".into(),
            advice: "apps/v1 has no rollbackTo (a one-off request, not a state): remove it, and roll back with `kubectl rollout undo`",
        });
    }
    if spec.shift_remove("templateGeneration").is_some() {
        notes.push(Note::Dropped {
            pointer: "/spec/templateGeneration".into(),
            why: "apps/v1 has no templateGeneration; the DaemonSet controller tracks revisions itself",
        });
    }
    let labels = spec
        .get("template")
        .and_then(|t| t.get("metadata"))
        .and_then(|m| m.get("labels"))
        .and_then(Value::as_object)
        .filter(|l| !l.is_empty())
        .cloned();
    if spec.get("selector").is_none_or(Value::is_null) {
        let Some(labels) = &labels else {
            return Err(Refusal::NoSelector);
        };
        default_field(
            spec,
            "/spec",
            "selector",
            json!({"matchLabels": labels}),
            Some("template"),
            "apps/v1 requires it; the old API server took it from the template's labels",
            notes,
        );
    }
    changed_defaults(spec, removal, notes)?;
    if old_defaulting && let Some(labels) = labels {
        let meta = object_at(obj, "metadata", "")?;
        if meta
            .get("labels")
            .and_then(Value::as_object)
            .is_none_or(Map::is_empty)
        {
            default_field(
                meta,
                "/metadata",
                "labels",
                Value::Object(labels),
                None,
                "the old API server gave an unlabelled workload its template's labels",
                notes,
            );
        }
    }
    Ok(())
}

/// The defaults apps/v1 changed, written as the old version had them, so that the workload
/// behaves as it did: history kept, progress deadline, rolling pace, update strategy.
fn changed_defaults(
    spec: &mut Map<String, Value>,
    removal: &Removal,
    notes: &mut Vec<Note>,
) -> Result<(), Refusal> {
    let kind = removal.kind;
    match (removal.from, kind) {
        ("extensions/v1beta1", "Deployment") => {
            const MAX_INT32: i64 = i32::MAX as i64;
            let why_history = "extensions/v1beta1 kept every old ReplicaSet; apps/v1 keeps 10";
            let why_deadline =
                "extensions/v1beta1 had no progress deadline; apps/v1 sets 600 seconds";
            default_field(
                spec,
                "/spec",
                "revisionHistoryLimit",
                json!(MAX_INT32),
                None,
                why_history,
                notes,
            );
            default_field(
                spec,
                "/spec",
                "progressDeadlineSeconds",
                json!(MAX_INT32),
                None,
                why_deadline,
                notes,
            );
            let strategy = object_at(spec, "strategy", "/spec")?;
            let rolling = strategy.get("type").is_none_or(|t| t == "RollingUpdate")
                || strategy.contains_key("rollingUpdate");
            if rolling {
                let why = "extensions/v1beta1 rolled one pod at a time; apps/v1 defaults to 25%";
                let ru = object_at(strategy, "rollingUpdate", "/spec/strategy")?;
                for key in ["maxUnavailable", "maxSurge"] {
                    default_field(
                        ru,
                        "/spec/strategy/rollingUpdate",
                        key,
                        json!(1),
                        None,
                        why,
                        notes,
                    );
                }
            }
        }
        ("apps/v1beta1", "Deployment") => {
            let why = "apps/v1beta1 kept 2 old ReplicaSets; apps/v1 keeps 10";
            default_field(
                spec,
                "/spec",
                "revisionHistoryLimit",
                json!(2),
                None,
                why,
                notes,
            );
        }
        ("apps/v1beta1", "StatefulSet") | ("extensions/v1beta1", "DaemonSet") => {
            let why = if kind == "StatefulSet" {
                "apps/v1beta1 updated StatefulSet pods only when deleted; apps/v1 rolls them"
            } else {
                "extensions/v1beta1 updated DaemonSet pods only when deleted; apps/v1 rolls them"
            };
            let strategy = object_at(spec, "updateStrategy", "/spec")?;
            default_field(
                strategy,
                "/spec/updateStrategy",
                "type",
                json!("OnDelete"),
                None,
                why,
                notes,
            );
        }
        _ => {}
    }
    Ok(())
}

/// v1's Ingress: `spec.backend` → `spec.defaultBackend`, `serviceName`/`servicePort` →
/// `service: {name, port}`, `pathType` on every path.
fn ingress(obj: &mut Map<String, Value>, notes: &mut Vec<Note>) -> Result<(), Refusal> {
    let Some(spec) = existing_object(obj, "spec", "")? else {
        return Ok(());
    };
    if rename(spec, "backend", "defaultBackend") {
        notes.push(Note::Moved {
            from: "/spec/backend".into(),
            to: "/spec/defaultBackend".into(),
        });
        backend(&mut spec["defaultBackend"], "/spec/defaultBackend", notes)?;
    }
    let Some(rules) = spec.get_mut("rules") else {
        return Ok(());
    };
    let rules = rules.as_array_mut().ok_or(Refusal::Malformed {
        pointer: "/spec/rules".into(),
        expected: "a list",
    })?;
    for (i, rule) in rules.iter_mut().enumerate() {
        let Some(paths) = rule.pointer_mut("/http/paths") else {
            continue;
        };
        let at = format!("/spec/rules/{i}/http/paths");
        let paths = paths.as_array_mut().ok_or_else(|| Refusal::Malformed {
            pointer: at.clone(),
            expected: "a list",
        })?;
        for (j, path) in paths.iter_mut().enumerate() {
            let at = format!("{at}/{j}");
            let p = path.as_object_mut().ok_or_else(|| Refusal::Malformed {
                pointer: at.clone(),
                expected: "an object",
            })?;
            default_field(
                p,
                &at,
                "pathType",
                json!("ImplementationSpecific"),
                Some("backend"),
                "networking.k8s.io/v1 requires it; ImplementationSpecific is v1beta1's behaviour",
                notes,
            );
            if let Some(b) = p.get_mut("backend") {
                backend(b, &format!("{at}/backend"), notes)?;
            }
        }
    }
    Ok(())
}

/// A v1beta1 backend `{serviceName, servicePort}` as v1's `{service: {name, port}}`; a
/// `resource` backend is the same in both.
fn backend(b: &mut Value, at: &str, notes: &mut Vec<Note>) -> Result<(), Refusal> {
    let m = b.as_object_mut().ok_or_else(|| Refusal::Malformed {
        pointer: at.to_string(),
        expected: "an object",
    })?;
    let Some(index) = m
        .keys()
        .position(|k| k == "serviceName" || k == "servicePort")
    else {
        return Ok(());
    };
    let mut service = Map::new();
    if let Some(name) = m.shift_remove("serviceName") {
        service.insert("name".into(), name);
        notes.push(Note::Moved {
            from: format!("{at}/serviceName"),
            to: format!("{at}/service/name"),
        });
    }
    if let Some(port) = m.shift_remove("servicePort") {
        let key = match &port {
            Value::Number(_) => "number",
            Value::String(_) => "name",
            _ => {
                return Err(Refusal::Malformed {
                    pointer: format!("{at}/servicePort"),
                    expected: "a port number or name",
                });
            }
        };
        service.insert("port".into(), json!({ key: port }));
        notes.push(Note::Moved {
            from: format!("{at}/servicePort"),
            to: format!("{at}/service/port/{key}"),
        });
    }
    m.shift_insert(index, "service".into(), Value::Object(service));
    Ok(())
}

/// policy/v1: an empty selector selected no pods in v1beta1 and selects every pod in v1; an
/// absent one selects none in both.
fn disruption_budget(obj: &mut Map<String, Value>, notes: &mut Vec<Note>) -> Result<(), Refusal> {
    let Some(spec) = existing_object(obj, "spec", "")? else {
        return Ok(());
    };
    let empty = |v: Option<&Value>| match v {
        None | Some(Value::Null) => true,
        Some(Value::Object(m)) => m.is_empty(),
        Some(Value::Array(a)) => a.is_empty(),
        Some(_) => false,
    };
    let is_empty = match spec.get("selector") {
        Some(Value::Object(s)) => empty(s.get("matchLabels")) && empty(s.get("matchExpressions")),
        _ => false,
    };
    if is_empty {
        spec.shift_remove("selector");
        notes.push(Note::Dropped {
            pointer: "/spec/selector".into(),
            why: "an empty selector selected no pods in policy/v1beta1 and would select every pod in policy/v1; without one it selects none, as before",
        });
    }
    Ok(())
}

/// autoscaling/v2 metrics from v2beta1's: `metricName`/`selector` → `metric`,
/// `target*` → `target: {type, ...}`, an Object metric's `target` → `describedObject`.
fn autoscaler(obj: &mut Map<String, Value>, notes: &mut Vec<Note>) -> Result<(), Refusal> {
    let Some(metrics) = obj.get_mut("spec").and_then(|s| s.get_mut("metrics")) else {
        return Ok(());
    };
    let metrics = metrics.as_array_mut().ok_or(Refusal::Malformed {
        pointer: "/spec/metrics".into(),
        expected: "a list",
    })?;
    for (i, metric) in metrics.iter_mut().enumerate() {
        let source_key = match metric.get("type").and_then(Value::as_str) {
            Some("Resource") => "resource",
            Some("ContainerResource") => "containerResource",
            Some("Pods") => "pods",
            Some("Object") => "object",
            Some("External") => "external",
            _ => continue, // left for the API server to judge
        };
        let at = format!("/spec/metrics/{i}/{source_key}");
        let Some(Value::Object(src)) = metric.get_mut(source_key) else {
            continue;
        };
        let moved = |notes: &mut Vec<Note>, from: &str, to: &str| {
            notes.push(Note::Moved {
                from: format!("{at}/{from}"),
                to: format!("{at}/{to}"),
            })
        };
        // v2beta1 field → (v2 target type, v2 target field), the first one given wins
        let targets: &[(&str, &str, &str)] = match source_key {
            "resource" | "containerResource" => &[
                (
                    "targetAverageUtilization",
                    "Utilization",
                    "averageUtilization",
                ),
                ("targetAverageValue", "AverageValue", "averageValue"),
            ],
            "pods" => &[("targetAverageValue", "AverageValue", "averageValue")],
            "object" => &[
                ("averageValue", "AverageValue", "averageValue"),
                ("targetValue", "Value", "value"),
            ],
            _ => &[
                ("targetAverageValue", "AverageValue", "averageValue"),
                ("targetValue", "Value", "value"),
            ],
        };
        if source_key == "object"
            && let Some(described) = src.shift_remove("target")
        {
            src.insert("describedObject".into(), described);
            moved(notes, "target", "describedObject");
        }
        let selector_key = if source_key == "external" {
            "metricSelector"
        } else {
            "selector"
        };
        if src.contains_key("metricName") {
            let mut m = Map::new();
            if let Some(name) = src.shift_remove("metricName") {
                m.insert("name".into(), name);
                moved(notes, "metricName", "metric/name");
            }
            if let Some(sel) = src.shift_remove(selector_key) {
                m.insert("selector".into(), sel);
                moved(notes, selector_key, "metric/selector");
            }
            src.insert("metric".into(), Value::Object(m));
        }
        let mut target = None;
        for (old, ty, new) in targets {
            if let Some(v) = src.shift_remove(*old) {
                if target.is_none() {
                    target = Some(json!({"type": ty, *new: v}));
                    moved(notes, old, &format!("target/{new}"));
                } else {
                    notes.push(Note::Dropped {
                        pointer: format!("{at}/{old}"),
                        why: "autoscaling/v2 has one target per metric; v2beta1 used the first one",
                    });
                }
            }
        }
        if let Some(t) = target {
            src.insert("target".into(), t);
        }
    }
    Ok(())
}

/// admissionregistration.k8s.io/v1: the old defaults written out, `sideEffects` required and
/// known, names unique.
fn webhooks(obj: &mut Map<String, Value>, notes: &mut Vec<Note>) -> Result<(), Refusal> {
    let Some(list) = obj.get_mut("webhooks") else {
        return Ok(());
    };
    let list = list.as_array_mut().ok_or(Refusal::Malformed {
        pointer: "/webhooks".into(),
        expected: "a list",
    })?;
    let mut names: Vec<Value> = Vec::new();
    for (i, hook) in list.iter_mut().enumerate() {
        let at = format!("/webhooks/{i}");
        let h = hook.as_object_mut().ok_or_else(|| Refusal::Malformed {
            pointer: at.clone(),
            expected: "an object",
        })?;
        match h.get("sideEffects").and_then(Value::as_str) {
            Some("None" | "NoneOnDryRun") => {}
            _ => {
                return Err(Refusal::Field {
                    pointer: format!("{at}/sideEffects"),
                    advice: "admissionregistration.k8s.io/v1 accepts only None or NoneOnDryRun (v1beta1 defaulted to Unknown): declare the webhook's side effects",
                });
            }
        }
        let name = h.get("name").cloned().unwrap_or(Value::Null);
        if names.contains(&name) {
            return Err(Refusal::Field {
                pointer: format!("{at}/name"),
                advice: "admissionregistration.k8s.io/v1 requires the webhooks' names to be unique: rename one",
            });
        }
        names.push(name);
        for (key, value, why) in [
            (
                "failurePolicy",
                json!("Ignore"),
                "v1beta1's default; v1 defaults to Fail",
            ),
            (
                "matchPolicy",
                json!("Exact"),
                "v1beta1's default; v1 defaults to Equivalent",
            ),
            (
                "timeoutSeconds",
                json!(30),
                "v1beta1's default; v1 defaults to 10",
            ),
            (
                "admissionReviewVersions",
                json!(["v1beta1"]),
                "v1beta1's default; v1 requires it",
            ),
        ] {
            default_field(h, &at, key, value, None, why, notes);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
