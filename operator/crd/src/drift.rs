//! Drift: where a live object no longer holds what kudo-manager applied to it.
//!
//! The manager and `kudo diff NAME` both send each object kudo applies
//! ([`applied_objects`]: the Apply tasks, and Toggle tasks whose parameter is true, of the plans
//! that ran, rendered with the Instance's current effective values and labelled as
//! kudo-manager labels them) as a server-side **dry-run** apply with kudo-manager's field
//! manager, forced, and read the live object. What the dry run answers is the object as
//! kudo's apply would leave it: every field kudo owns put back, the other managers' fields
//! kept. Where it differs from the live object ([`fields`], after [`comparable`] removed the
//! server's bookkeeping) is drift; a live object that is gone is [`State::Deleted`].
//! `spec.drift.ignore` rules ([`ignored`]) take fields (or whole objects) out of it: an
//! autoscaler's `/spec/replicas`.
//!
//! Nothing here names a value: drift is a list of JSON pointers, so a message ([`message`]) can
//! go into a condition or an Event whatever the object holds (a Secret's `data`).
//!
//! ```
//! use kudo_crd::common::DriftIgnore;
//! use kudo_crd::drift;
//! use serde_json::json;
//!
//! let applied = json!({"kind": "StatefulSet", "metadata": {"name": "db", "generation": 3},
//!     "spec": {"replicas": 3, "serviceName": "db"}});
//! let live = json!({"kind": "StatefulSet", "metadata": {"name": "db", "generation": 4},
//!     "spec": {"replicas": 5, "serviceName": "db"}});
//! assert_eq!(drift::fields(&live, &applied), ["/spec/replicas"]);
//!
//! let autoscaled = [DriftIgnore { kind: "StatefulSet".into(), name: None,
//!     pointers: vec!["/spec/replicas".into()] }];
//! assert!(drift::ignored(&autoscaled, "StatefulSet", "db", "/spec/replicas"));
//! ```

use kudo_diag::Diagnostic;
use kudo_diag::pointer::{self, Arrays};
use kudo_pkg::render::{Prepared, RenderOptions};
use kudo_pkg::step::{self, Action};
use serde::Serialize;
use serde_json::Value;

use crate::applied::{self, At};
use crate::common::{Drift, DriftIgnore, DriftMode, ExecStatus, InstanceStatus};
use crate::labels;
use crate::v1beta2::Instance;

/// Most fields named for one object in a [`message`]; the rest are counted.
pub const FIELDS_SHOWN: usize = 5;

/// Most objects named in a [`message`]; the rest are counted.
pub const OBJECTS_SHOWN: usize = 20;

/// The members of `metadata` the API server maintains, never drift.
const SERVER_METADATA: &[&str] = &[
    "resourceVersion",
    "generation",
    "managedFields",
    "creationTimestamp",
    "uid",
    "selfLink",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
];

/// What the mode of `drift` is (`spec.drift.mode`; absent: [`DriftMode::Warn`]).
pub fn mode(drift: Option<&Drift>) -> DriftMode {
    drift.and_then(|d| d.mode).unwrap_or_default()
}

/// How an object drifted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase", tag = "state")]
pub enum State {
    /// Fields kudo applies hold something else: their JSON pointers, in the object's order.
    Changed {
        /// The fields.
        pointers: Vec<String>,
    },
    /// The object is gone.
    Deleted,
}

/// One object that drifted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Drifted {
    /// Its kind.
    pub kind: String,
    /// Its namespace; `None` when cluster-scoped.
    pub namespace: Option<String>,
    /// Its name.
    pub name: String,
    /// How.
    #[serde(flatten)]
    pub state: State,
}

impl Drifted {
    /// How an object kudo applied as `applied` (the dry run's answer) drifted from `live`
    /// (`None`: gone), the `rules` applied; `None` when it did not.
    pub fn of(live: Option<&Value>, applied: &Value, rules: &[DriftIgnore]) -> Option<Drifted> {
        let s = |p: &str| applied.pointer(p).and_then(Value::as_str).map(String::from);
        let kind = s("/kind").unwrap_or_default();
        let name = s("/metadata/name").unwrap_or_default();
        let whole = rules
            .iter()
            .any(|r| matches_object(r, &kind, &name) && r.pointers.is_empty());
        if whole {
            return None;
        }
        let state = match live {
            None => State::Deleted,
            Some(live) => {
                let pointers: Vec<String> = fields(live, applied)
                    .into_iter()
                    .filter(|p| !ignored(rules, &kind, &name, p))
                    .collect();
                if pointers.is_empty() {
                    return None;
                }
                State::Changed { pointers }
            }
        };
        Some(Drifted {
            namespace: s("/metadata/namespace"),
            kind,
            name,
            state,
        })
    }

    /// `Kind name`, with ` (namespace NS)` when it lives elsewhere than `home`.
    pub fn title(&self, home: &str) -> String {
        match &self.namespace {
            Some(ns) if ns != home => format!("{} {} (namespace {ns})", self.kind, self.name),
            _ => format!("{} {}", self.kind, self.name),
        }
    }
}

/// `obj` without what the API server maintains: `status`, the members of `metadata` it
/// writes (resourceVersion, generation, managedFields, uid, creation and deletion times) and
/// kudo's record of the step that last applied it (`kudo.dev/plan`, `phase`, `step`, which
/// every plan rewrites).
pub fn comparable(mut obj: Value) -> Value {
    if let Some(o) = obj.as_object_mut() {
        o.remove("status");
    }
    if let Some(m) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
        for key in SERVER_METADATA {
            m.remove(*key);
        }
        if let Some(Value::Object(a)) = m.get_mut("annotations") {
            for key in [labels::PLAN, labels::PHASE, labels::STEP] {
                a.remove(key);
            }
            if a.is_empty() {
                m.remove("annotations");
            }
        }
    }
    obj
}

/// The JSON pointers where `live` differs from `applied` (what kudo's apply would leave),
/// both taken [`comparable`]: arrays item by item, so a container's image is
/// `/spec/template/spec/containers/0/image`.
pub fn fields(live: &Value, applied: &Value) -> Vec<String> {
    let (live, applied) = (comparable(live.clone()), comparable(applied.clone()));
    let mut out = Vec::new();
    pointer::diff(
        "",
        Some(&live),
        Some(&applied),
        Arrays::ByIndex,
        &mut |at, _, _, _| out.push(at.to_string()),
    );
    out
}

fn matches_object(rule: &DriftIgnore, kind: &str, name: &str) -> bool {
    rule.kind == kind && rule.name.as_deref().is_none_or(|n| n == name)
}

/// Whether the field at `pointer` of the object `kind`/`name` is never drift: a rule names
/// its kind (and its name, or none) and the pointer or one above it (`/spec/replicas` covers
/// `/spec/replicas` only; `/spec/template` everything under it); a rule with no pointers
/// covers the whole object. A rule's pointer may omit its leading `/`.
pub fn ignored(rules: &[DriftIgnore], kind: &str, name: &str, pointer: &str) -> bool {
    rules
        .iter()
        .filter(|r| matches_object(r, kind, name))
        .any(|r| {
            r.pointers.is_empty()
                || r.pointers.iter().any(|p| {
                    let p = p.trim_end_matches('/');
                    let p = p.strip_prefix('/').unwrap_or(p);
                    let under = pointer.strip_prefix('/').unwrap_or(pointer);
                    p.is_empty()
                        || under == p
                        || under.strip_prefix(p).is_some_and(|r| r.starts_with('/'))
                })
        })
}

/// One line naming each drifted object and its fields (at most [`FIELDS_SHOWN`] an object, at
/// most [`OBJECTS_SHOWN`] objects, the rest counted): `StatefulSet db: /spec/replicas;
/// ConfigMap db-conf: deleted`. `home`: the Instance's namespace (objects elsewhere say
/// theirs). No value is ever named.
pub fn message(drifted: &[Drifted], home: &str) -> String {
    let mut parts: Vec<String> = drifted
        .iter()
        .take(OBJECTS_SHOWN)
        .map(|d| {
            let what = match &d.state {
                State::Deleted => "deleted".to_string(),
                State::Changed { pointers } => {
                    let mut shown: Vec<&str> = pointers
                        .iter()
                        .take(FIELDS_SHOWN)
                        .map(String::as_str)
                        .collect();
                    let more = pointers.len().saturating_sub(FIELDS_SHOWN);
                    let more = format!("and {more} more field(s)");
                    if pointers.len() > FIELDS_SHOWN {
                        shown.push(&more);
                        shown.join(", ")
                    } else {
                        shown.join(", ")
                    }
                }
            };
            format!("{}: {what}", d.title(home))
        })
        .collect();
    if drifted.len() > OBJECTS_SHOWN {
        parts.push(format!(
            "and {} more object(s)",
            drifted.len() - OBJECTS_SHOWN
        ));
    }
    parts.join("; ")
}

/// An object kudo applies for an Instance, rendered and labelled ([`applied::labelled`]);
/// not yet [placed](applied::placed) (that needs discovery's scope of its kind).
#[derive(Debug, Clone)]
pub struct AppliedObject {
    /// The object.
    pub object: Value,
    /// The plan, phase and step that apply it (the last one that does).
    pub plan: String,
    /// The phase.
    pub phase: String,
    /// The step.
    pub step: String,
}

/// The plans of `status` that ran, in the order they last changed, the active one last: each
/// plan whose status is COMPLETE, and the active plan.
pub fn plans_that_ran(status: &InstanceStatus) -> Vec<String> {
    let active = status.active_plan.as_ref().map(|a| a.name.as_str());
    let mut ran: Vec<(&str, &str)> = status
        .plan_status
        .iter()
        .filter(|(name, ps)| {
            Some(name.as_str()) != active && *ExecStatus::of(&ps.status) == ExecStatus::Complete
        })
        .map(|(name, ps)| {
            (
                ps.last_updated_timestamp.as_deref().unwrap_or(""),
                name.as_str(),
            )
        })
        .collect();
    ran.sort();
    let mut out: Vec<String> = ran.into_iter().map(|(_, n)| n.to_string()).collect();
    out.extend(active.map(String::from));
    out
}

/// The objects kudo applied for `inst` (see the module docs): the Apply tasks, and Toggle
/// tasks whose parameter is true, of the plans that ran by `status` ([`plans_that_ran`]), rendered with
/// `params` (the effective values, as the manager applies them), each once: the last plan and
/// step that applies it decides, and one a later Delete task deletes is left out. Pipe and
/// KudoOperator tasks are not counted (their objects come from a Pod's files and a child
/// Instance's own plans). Templates that do not render: their diagnostics.
pub fn applied_objects(
    prepared: &Prepared<'_>,
    inst: &Instance,
    status: &InstanceStatus,
    params: &Value,
) -> Result<Vec<AppliedObject>, Vec<Diagnostic>> {
    let pkg = prepared.package();
    let op = pkg.operator();
    let mut out: Vec<AppliedObject> = Vec::new();
    for plan in plans_that_ran(status) {
        let Some(p) = op.plans.get(&plan) else {
            continue;
        };
        let opts = RenderOptions {
            instance: inst.metadata.name.clone().unwrap_or_default(),
            namespace: inst.metadata.namespace.clone().unwrap_or_default(),
            plan: plan.clone(),
            images: crate::labels::image_pins(inst.metadata.annotations.as_ref()),
        };
        for phase in &p.phases {
            for s in &phase.steps {
                for task in step::tasks(op, s, params).flatten() {
                    let delete = match task.action {
                        Action::Apply => false,
                        Action::Delete => true,
                        _ => continue,
                    };
                    let rendered = prepared.render_task(
                        params,
                        &opts,
                        &phase.name,
                        &s.name,
                        &task.task.name,
                    )?;
                    for object in rendered.into_iter().flat_map(|r| r.objects) {
                        let key = identity(&object);
                        out.retain(|o| identity(&o.object) != key);
                        if delete {
                            continue;
                        }
                        let at = At {
                            plan: &plan,
                            phase: &phase.name,
                            step: &s.name,
                        };
                        let object = applied::labelled(object, inst, &op.name, &pkg.version(), at);
                        out.push(AppliedObject {
                            object,
                            plan: plan.clone(),
                            phase: phase.name.clone(),
                            step: s.name.clone(),
                        });
                    }
                }
            }
        }
    }
    Ok(out)
}

/// `kind`, namespace and name: what makes two rendered objects the same (an API version's
/// successor is the same object).
fn identity(obj: &Value) -> [String; 3] {
    let s = |p: &str| {
        obj.pointer(p)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    [s("/kind"), s("/metadata/namespace"), s("/metadata/name")]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rule(kind: &str, name: Option<&str>, pointers: &[&str]) -> DriftIgnore {
        DriftIgnore {
            kind: kind.into(),
            name: name.map(String::from),
            pointers: pointers.iter().map(|p| p.to_string()).collect(),
        }
    }

    fn sts(replicas: i64, image: &str) -> Value {
        json!({"apiVersion": "apps/v1", "kind": "StatefulSet",
            "metadata": {"name": "db", "namespace": "ns", "resourceVersion": "7", "generation": 2,
                "uid": "u", "creationTimestamp": "t",
                "managedFields": [{"manager": "kudo-manager"}],
                "annotations": {"kudo.dev/plan": "deploy", "kudo.dev/step": "app"}},
            "spec": {"replicas": replicas, "template": {"spec": {"containers": [
                {"name": "db", "image": image}]}}},
            "status": {"readyReplicas": replicas}})
    }

    #[test]
    fn the_fields_that_differ_are_named_and_server_bookkeeping_is_not() {
        let cases: &[(&str, Value, Value, &[&str])] = &[
            ("identical", sts(3, "db:1"), sts(3, "db:1"), &[]),
            (
                "scaled",
                sts(5, "db:1"),
                sts(3, "db:1"),
                &["/spec/replicas"],
            ),
            (
                "image edited",
                sts(3, "db:2"),
                sts(3, "db:1"),
                &["/spec/template/spec/containers/0/image"],
            ),
            (
                "both",
                sts(5, "db:2"),
                sts(3, "db:1"),
                &["/spec/replicas", "/spec/template/spec/containers/0/image"],
            ),
        ];
        for (name, live, applied, want) in cases {
            let mut live = live.clone();
            // What the server changes on every write, and the step that applied it last.
            live["metadata"]["resourceVersion"] = json!("99");
            live["metadata"]["generation"] = json!(9);
            live["metadata"]["annotations"]["kudo.dev/plan"] = json!("update");
            live["status"] = json!({"readyReplicas": 0});
            assert_eq!(fields(&live, applied), *want, "case: {name}");
        }
    }

    #[test]
    fn a_label_removed_by_hand_is_drift() {
        let mut applied = sts(3, "db:1");
        applied["metadata"]["labels"] = json!({"heritage": "kudo", "team": "a"});
        let mut live = applied.clone();
        live["metadata"]["labels"] = json!({"heritage": "kudo"});
        assert_eq!(fields(&live, &applied), ["/metadata/labels/team"]);
    }

    #[test]
    fn ignore_rules_match_kind_name_and_pointer_prefix() {
        let cases: &[(&str, DriftIgnore, &str, &str, bool)] = &[
            (
                "exact pointer",
                rule("StatefulSet", None, &["/spec/replicas"]),
                "db",
                "/spec/replicas",
                true,
            ),
            (
                "pointer above",
                rule("StatefulSet", None, &["/spec/template"]),
                "db",
                "/spec/template/spec/containers/0/image",
                true,
            ),
            (
                "a sibling with the same prefix is not under it",
                rule("StatefulSet", None, &["/spec/replicas"]),
                "db",
                "/spec/replicasets",
                false,
            ),
            (
                "without the leading slash",
                rule("StatefulSet", None, &["spec/replicas"]),
                "db",
                "/spec/replicas",
                true,
            ),
            (
                "its name",
                rule("StatefulSet", Some("db"), &["/spec/replicas"]),
                "db",
                "/spec/replicas",
                true,
            ),
            (
                "another name",
                rule("StatefulSet", Some("web"), &["/spec/replicas"]),
                "db",
                "/spec/replicas",
                false,
            ),
            (
                "another kind",
                rule("Deployment", None, &["/spec/replicas"]),
                "db",
                "/spec/replicas",
                false,
            ),
            (
                "no pointers: the whole object",
                rule("StatefulSet", None, &[]),
                "db",
                "/metadata/labels/x",
                true,
            ),
            (
                "another field",
                rule("StatefulSet", None, &["/spec/replicas"]),
                "db",
                "/spec/template/spec/containers/0/image",
                false,
            ),
        ];
        for (name, r, obj, at, want) in cases {
            let got = ignored(std::slice::from_ref(r), "StatefulSet", obj, at);
            assert_eq!(got, *want, "case: {name}");
        }
    }

    #[test]
    fn an_object_drifted_deleted_or_ignored() {
        let applied = sts(3, "db:1");
        let scaled = sts(5, "db:2");
        let none = Drifted::of(Some(&applied), &applied, &[]);
        assert_eq!(none, None, "unchanged");
        let deleted = Drifted::of(None, &applied, &[]).expect("deleted");
        assert_eq!(deleted.state, State::Deleted);
        assert_eq!(deleted.title("ns"), "StatefulSet db");
        assert_eq!(deleted.title("other"), "StatefulSet db (namespace ns)");
        let rules = [rule("StatefulSet", None, &["/spec/replicas"])];
        let image = Drifted::of(Some(&scaled), &applied, &rules).expect("image");
        assert_eq!(
            image.state,
            State::Changed {
                pointers: vec!["/spec/template/spec/containers/0/image".into()]
            }
        );
        let whole = [rule("StatefulSet", Some("db"), &[])];
        assert_eq!(Drifted::of(Some(&scaled), &applied, &whole), None);
        assert_eq!(
            Drifted::of(None, &applied, &whole),
            None,
            "an ignored object may go"
        );
        let only_replicas = Drifted::of(Some(&sts(5, "db:1")), &applied, &rules);
        assert_eq!(only_replicas, None, "only an ignored field drifted");
    }

    fn changed(kind: &str, name: &str, n: usize) -> Drifted {
        Drifted {
            kind: kind.into(),
            namespace: Some("ns".into()),
            name: name.into(),
            state: State::Changed {
                pointers: (0..n).map(|i| format!("/data/k{i}")).collect(),
            },
        }
    }

    #[test]
    fn the_message_names_objects_and_fields_within_bounds() {
        let deleted = Drifted {
            state: State::Deleted,
            ..changed("ConfigMap", "conf", 0)
        };
        let one = [changed("StatefulSet", "db", 1), deleted];
        assert_eq!(
            message(&one, "ns"),
            "StatefulSet db: /data/k0; ConfigMap conf: deleted"
        );
        let many = [changed("ConfigMap", "big", FIELDS_SHOWN + 3)];
        assert_eq!(
            message(&many, "ns"),
            "ConfigMap big: /data/k0, /data/k1, /data/k2, /data/k3, /data/k4, and 3 more field(s)"
        );
        let lots: Vec<Drifted> = (0..OBJECTS_SHOWN + 2)
            .map(|i| changed("ConfigMap", &format!("c{i}"), 1))
            .collect();
        let m = message(&lots, "ns");
        assert!(m.ends_with("; and 2 more object(s)"), "{m}");
        assert_eq!(m.matches("ConfigMap").count(), OBJECTS_SHOWN, "{m}");
    }

    #[test]
    fn the_mode_is_warn_unless_said() {
        assert_eq!(mode(None), DriftMode::Warn);
        let d = Drift {
            mode: Some(DriftMode::Correct),
            ignore: Vec::new(),
        };
        assert_eq!(mode(Some(&d)), DriftMode::Correct);
        assert_eq!(mode(Some(&Drift::default())), DriftMode::Warn);
    }

    #[test]
    fn the_plans_that_ran_are_the_complete_ones_then_the_active_one() {
        let status: InstanceStatus = serde_json::from_value(json!({
            "activePlan": {"name": "update", "uid": "u"},
            "planStatus": {
                "deploy": {"name": "deploy", "status": "COMPLETE", "lastUpdatedTimestamp": "2026-01-02T00:00:00Z"},
                "rotate": {"name": "rotate", "status": "COMPLETE", "lastUpdatedTimestamp": "2026-01-01T00:00:00Z"},
                "cleanup": {"name": "cleanup", "status": "NEVER_RUN"},
                "broken": {"name": "broken", "status": "FATAL_ERROR"},
                "update": {"name": "update", "status": "COMPLETE", "lastUpdatedTimestamp": "2026-01-03T00:00:00Z"}
            }
        }))
        .expect("status");
        assert_eq!(plans_that_ran(&status), ["rotate", "deploy", "update"]);
    }
}
