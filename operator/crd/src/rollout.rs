//! `Rollout` (`kudo.dev/v1beta2`): one operator's Instances moved to a new OperatorVersion in
//! waves that halt on the first failure (docs/rollouts.md). Its decisions are
//! `kudo_policy::rollout`'s and `kudo_policy::window`'s; this is the object they are stored in.
//! Served in v1beta2 only: KUDO never had it, so there is nothing to convert.

use std::collections::BTreeMap;

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::common::ObjectRef;
pub use crate::common::Window;

/// Moves the Instances its selector matches to `operatorVersion`, wave by wave.
#[derive(CustomResource, Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(group = "kudo.dev", version = "v1beta2", kind = "Rollout", namespaced)]
#[kube(status = "RolloutStatus", shortname = "ro")]
#[kube(printcolumn = r#"{"name":"Operator","type":"string","jsonPath":".spec.operator"}"#)]
#[kube(
    printcolumn = r#"{"name":"Target","type":"string","jsonPath":".spec.operatorVersion.name"}"#
)]
#[kube(printcolumn = r#"{"name":"Phase","type":"string","jsonPath":".status.phase"}"#)]
#[kube(printcolumn = r#"{"name":"Wave","type":"string","jsonPath":".status.waveShown"}"#)]
#[kube(printcolumn = r#"{"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp"}"#)]
#[serde(rename_all = "camelCase")]
pub struct RolloutSpec {
    /// The operator whose Instances move (the Operator's name, as Instances name it in
    /// `kudo.dev/operator`).
    pub operator: String,
    /// The OperatorVersion they move to, in this namespace unless `namespace` says otherwise.
    pub operator_version: ObjectRef,
    /// Which Instances of the operator move.
    #[serde(default)]
    pub selector: Selector,
    /// Look in the namespaces this matches instead of the Rollout's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace_selector: Option<Selector>,
    /// Cumulative targets, each a count (`"5"`) or a percentage (`"20%"`) of the selected
    /// Instances; the last `"100%"`. Default `["1", "100%"]`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub waves: Vec<String>,
    /// Failed Instances a wave may hold without halting (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_failures: Option<u32>,
    /// How long an Instance must stay COMPLETE before it counts, in seconds (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_ready_seconds: Option<u32>,
    /// How long an Instance has from its upgrade to pass, in seconds (default 600).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress_deadline_seconds: Option<u32>,
    /// A CEL expression over the Instance (`self`) that must be true for it to pass.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate: Option<String>,
    /// `rollback` (default): failed Instances go back to their revision before the rollout,
    /// when that is safe; `halt`: they stay.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_failure: Option<String>,
    /// Wait for `kudo rollout approve` before the first wave.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<Approval>,
    /// Waves start only inside this window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<Window>,
    /// Leave out the Instances the preflight finds unsafe (recorded as `Skipped`) instead of
    /// refusing the whole rollout.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub skip_unsafe: bool,
    /// Nothing new starts while true; what runs is still judged.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub paused: bool,
    /// Stop for good; with `rollback: true`, every Instance the rollout moved goes back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub abort: Option<Abort>,
    /// A halted rollout retries its halted wave when this changes (`kudo rollout resume`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry: Option<u32>,
    /// The ServiceAccount (of the Rollout's namespace) whose rights every write of the rollout
    /// is made with (impersonated). None: the manager's default, as for Instances.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_account_name: Option<String>,
}

impl RolloutSpec {
    /// The `labelSelector` of the Instances this rollout selects: its operator's
    /// (`kudo.dev/operator`) that `selector` matches. `Err` names the requirement that cannot
    /// be written.
    pub fn instance_query(&self) -> Result<String, String> {
        let query = self
            .selector
            .query()
            .map_err(|e| format!("spec.selector.{e}"))?;
        let operator = format!("{}={}", crate::labels::OPERATOR, self.operator);
        Ok(if query.is_empty() {
            operator
        } else {
            format!("{query},{operator}")
        })
    }

    /// The `labelSelector` of the namespaces it looks in (`None`: only its own).
    pub fn namespace_query(&self) -> Option<Result<String, String>> {
        self.namespace_selector.as_ref().map(|sel| {
            sel.query()
                .map_err(|e| format!("spec.namespaceSelector.{e}"))
        })
    }

    /// Every reason this spec cannot run, each naming its field (`spec.waves[2] ...`,
    /// `spec.gate: line 1, column 5: ...`); empty when it can. What `kudo rollout start`
    /// checks before it writes anything and what the admission webhook refuses, so that a
    /// Rollout applied with kubectl is held to the same rules. `now` dates the window's first
    /// opening (a schedule that never opens is refused).
    pub fn check(&self, now: jiff::Timestamp) -> Vec<String> {
        use kudo_policy::rollout::{Gate, Waves};
        let mut out = Vec::new();
        if self.operator.trim().is_empty() {
            out.push("spec.operator: name the operator whose Instances move".to_string());
        }
        if self
            .operator_version
            .name
            .as_deref()
            .unwrap_or("")
            .is_empty()
        {
            out.push("spec.operatorVersion.name: name the OperatorVersion to move to".to_string());
        }
        if !self.waves.is_empty()
            && let Err(e) = Waves::from_list(&self.waves)
        {
            out.push(e.to_string());
        }
        if let Err(e) = self.selector.query() {
            out.push(format!("spec.selector.{e}"));
        }
        if let Some(Err(e)) = self.namespace_selector.as_ref().map(Selector::query) {
            out.push(format!("spec.namespaceSelector.{e}"));
        }
        if let Some(Err(e)) = self.gate.as_deref().map(Gate::compile) {
            out.push(e.to_string());
        }
        if let Some(Err(e)) = self
            .window
            .as_ref()
            .map(|w| kudo_policy::window::Window::new(&w.spec(), now))
        {
            out.push(format!("spec.{e}"));
        }
        if let Some(other) = self
            .on_failure
            .as_deref()
            .filter(|f| !matches!(*f, "rollback" | "halt"))
        {
            out.push(format!("spec.onFailure {other:?}: rollback or halt"));
        }
        out
    }
}

/// A label selector, as Kubernetes writes them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Selector {
    /// Labels that must have these values.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub match_labels: BTreeMap<String, String>,
    /// Requirements on labels.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub match_expressions: Vec<Requirement>,
}

/// One requirement of a [`Selector`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Requirement {
    /// The label.
    pub key: String,
    /// `In`, `NotIn`, `Exists` or `DoesNotExist`.
    pub operator: String,
    /// The values, for `In` and `NotIn`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<String>,
}

impl Selector {
    /// Reads a selector as kubectl's `-l` writes it: `team=blue,tier!=dev,zone in (a,b),
    /// env notin (test),canary,!legacy` (`==` is `=`). `Err` names the requirement that is
    /// not one of those forms. No library reads this syntax into a `LabelSelector` (kube has
    /// the types, not the parser).
    pub fn parse(text: &str) -> Result<Selector, String> {
        let mut sel = Selector::default();
        for part in split_requirements(text) {
            let part = part.trim();
            if part.is_empty() {
                continue;
            }
            let bad = || {
                format!(
                    "{part:?}: not a label requirement (key=value, key!=value, key in (a,b), key notin (a,b), key, !key)"
                )
            };
            let set = |rest: &str| -> Option<Vec<String>> {
                let inner = rest.trim().strip_prefix('(')?.strip_suffix(')')?;
                let values: Vec<String> = inner.split(',').map(|v| v.trim().to_string()).collect();
                values.iter().all(|v| !v.is_empty()).then_some(values)
            };
            let requirement = |key: &str, operator: &str, values: Vec<String>| Requirement {
                key: key.trim().to_string(),
                operator: operator.to_string(),
                values,
            };
            if let Some(key) = part.strip_prefix('!') {
                sel.match_expressions
                    .push(requirement(key, "DoesNotExist", Vec::new()));
            } else if let Some((key, value)) = part.split_once("!=") {
                sel.match_expressions.push(requirement(
                    key,
                    "NotIn",
                    vec![value.trim().to_string()],
                ));
            } else if let Some((key, value)) =
                part.split_once("==").or_else(|| part.split_once('='))
            {
                sel.match_labels
                    .insert(key.trim().to_string(), value.trim().to_string());
            } else if let Some((key, rest)) = part.split_once(" notin ") {
                sel.match_expressions
                    .push(requirement(key, "NotIn", set(rest).ok_or_else(bad)?));
            } else if let Some((key, rest)) = part.split_once(" in ") {
                sel.match_expressions
                    .push(requirement(key, "In", set(rest).ok_or_else(bad)?));
            } else if part.contains(|c: char| c.is_whitespace() || "()".contains(c)) {
                return Err(bad());
            } else {
                sel.match_expressions
                    .push(requirement(part, "Exists", Vec::new()));
            }
        }
        Ok(sel)
    }

    /// The selector as a `labelSelector` query (`a=b,c in (d,e),!f`); `Err` names the
    /// requirement with an unknown operator or missing values.
    pub fn query(&self) -> Result<String, String> {
        let mut parts: Vec<String> = self
            .match_labels
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        for (i, r) in self.match_expressions.iter().enumerate() {
            let values = || {
                if r.values.is_empty() {
                    Err(format!(
                        "matchExpressions[{i}]: {} needs values",
                        r.operator
                    ))
                } else {
                    Ok(r.values.join(","))
                }
            };
            parts.push(match r.operator.as_str() {
                "In" => format!("{} in ({})", r.key, values()?),
                "NotIn" => format!("{} notin ({})", r.key, values()?),
                "Exists" => r.key.clone(),
                "DoesNotExist" => format!("!{}", r.key),
                other => {
                    return Err(format!(
                        "matchExpressions[{i}].operator {other:?}: one of In, NotIn, Exists, DoesNotExist"
                    ));
                }
            });
        }
        Ok(parts.join(","))
    }
}

/// The requirements of a selector's text: split at the commas outside parentheses.
fn split_requirements(text: &str) -> Vec<&str> {
    let (mut out, mut depth, mut from) = (Vec::new(), 0i32, 0);
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&text[from..i]);
                from = i + 1;
            }
            _ => {}
        }
    }
    out.push(&text[from..]);
    out
}

/// `spec.approval`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Approval {
    /// Wait for an approval before the first wave.
    #[serde(default)]
    pub required: bool,
    /// Who approved (`kudo rollout approve`). The admission webhook admits a new value only
    /// from a user who may `approve` `rollouts`, and writes that user's name here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approved_by: Option<String>,
}

/// `spec.abort`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Abort {
    /// Roll back every Instance the rollout moved.
    #[serde(default)]
    pub rollback: bool,
}

/// Where a rollout stands. Everything the manager needs to go on after a restart or a
/// failover is here: nothing lives only in memory.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RolloutStatus {
    /// The `metadata.generation` last acted on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// `Pending`, `Refused`, `AwaitingApproval`, `AwaitingWindow`, `Progressing`, `Paused`,
    /// `Halted`, `Completed` or `Aborted` (`kudo_policy::rollout::Phase`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    /// Why it is in that phase, for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// The current wave, from 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wave: Option<u32>,
    /// `2/3`: the current wave of all, from 1 (for `kubectl get`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wave_shown: Option<String>,
    /// Where each wave ends in `instances` (cumulative, fixed at the start).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub wave_ends: Vec<u32>,
    /// Every selected Instance, in rollout order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub instances: Vec<Member>,
    /// When the first wave started (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<String>,
    /// When it halted, completed or was aborted (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<String>,
    /// When the window next opens, while it waits for it (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_opens_at: Option<String>,
    /// Who approved it, when.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approved_by: Option<String>,
    /// The rights the target version needs that a version the rollout moves Instances from
    /// did not (`get configmaps`, `write ClusterRole.rbac.authorization.k8s.io`): when any, the
    /// rollout waits for an approval, whatever `spec.approval` says.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub grown_rights: Vec<String>,
    /// `spec.retry` last acted on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_retry: Option<u32>,
}

/// One Instance of a rollout.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Member {
    /// Its namespace.
    pub namespace: String,
    /// Its name.
    pub name: String,
    /// Its wave, from 0.
    pub wave: u32,
    /// `Pending`, `Upgrading`, `Succeeded`, `Failed`, `RolledBack`, `RollbackRefused` or
    /// `Skipped` (`kudo_policy::rollout::Member`).
    pub state: String,
    /// The OperatorVersion it ran before the rollout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_version: Option<String>,
    /// Its revision before the rollout (what a rollback restores).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_revision: Option<i64>,
    /// Its revision once upgraded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to_revision: Option<i64>,
    /// Its `metadata.generation` once upgraded (the plan it must finish is for this one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generation: Option<i64>,
    /// When it was upgraded (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upgraded_at: Option<String>,
    /// Why it is in this state (a failed plan's message, a preflight finding, a rollback
    /// that was not safe).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl Member {
    /// Its state, as the policy reads it (`Pending` for one the policy does not know).
    pub fn state(&self) -> kudo_policy::rollout::Member {
        serde_json::from_value(serde_json::Value::String(self.state.clone())).unwrap_or_default()
    }

    /// Sets its state.
    pub fn set_state(&mut self, state: kudo_policy::rollout::Member) {
        self.state = word(&state);
    }
}

impl RolloutStatus {
    /// Its phase, as the policy reads it.
    pub fn phase(&self) -> kudo_policy::rollout::Phase {
        self.phase
            .as_ref()
            .and_then(|p| serde_json::from_value(serde_json::Value::String(p.clone())).ok())
            .unwrap_or_default()
    }

    /// Sets its phase.
    pub fn set_phase(&mut self, phase: kudo_policy::rollout::Phase) {
        self.phase = Some(word(&phase));
    }

    /// The Instances (namespace, name) it holds, but those it skipped: what it claims.
    pub fn claimed(&self) -> std::collections::BTreeSet<(String, String)> {
        claimed(&self.instances)
    }
}

/// The Instances (namespace, name) of `members`, but those skipped: what a rollout with them
/// claims.
pub fn claimed(members: &[Member]) -> std::collections::BTreeSet<(String, String)> {
    members
        .iter()
        .filter(|m| m.state() != kudo_policy::rollout::Member::Skipped)
        .map(|m| (m.namespace.clone(), m.name.clone()))
        .collect()
}

/// Whether Rollout `a` came before `b`: created earlier, then by namespace and name. Of two
/// Rollouts that both passed admission (created at the same instant) and select one Instance,
/// the first keeps it and the other is refused when it starts.
pub fn came_first(a: &Rollout, b: &Rollout) -> bool {
    let at = |r: &Rollout| {
        (
            r.metadata.creation_timestamp.as_ref().map(|t| t.0),
            r.metadata.namespace.clone(),
            r.metadata.name.clone(),
        )
    };
    at(a) < at(b)
}

/// A unit enum variant's name, as serde writes it.
fn word(v: &impl Serialize) -> String {
    serde_json::to_value(v)
        .ok()
        .and_then(|v| v.as_str().map(String::from))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_older_rollout_comes_first_then_namespace_and_name() {
        let at = |ns: &str, name: &str, t: &str| {
            let mut r = Rollout::new(name, RolloutSpec::default());
            r.metadata.namespace = Some(ns.into());
            r.metadata.creation_timestamp = Some(
                k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(t.parse().unwrap()),
            );
            r
        };
        let old = at("b", "z", "2026-11-29T10:00:00Z");
        let new = at("a", "a", "2026-11-29T10:00:01Z");
        assert!(came_first(&old, &new) && !came_first(&new, &old));
        let twin = at("a", "b", "2026-11-29T10:00:01Z");
        assert!(came_first(&new, &twin) && !came_first(&twin, &new));
        assert!(!came_first(&new, &new));
    }

    #[test]
    fn selectors_become_label_queries_and_bad_operators_are_named() {
        let s = Selector {
            match_labels: BTreeMap::from([("team".into(), "data".into())]),
            match_expressions: vec![
                Requirement {
                    key: "tier".into(),
                    operator: "In".into(),
                    values: vec!["gold".into(), "silver".into()],
                },
                Requirement {
                    key: "frozen".into(),
                    operator: "DoesNotExist".into(),
                    values: vec![],
                },
            ],
        };
        assert_eq!(
            s.query().unwrap(),
            "team=data,tier in (gold,silver),!frozen"
        );
        let bad = Selector {
            match_expressions: vec![Requirement {
                key: "a".into(),
                operator: "Gt".into(),
                values: vec![],
            }],
            ..Selector::default()
        };
        assert!(
            bad.query()
                .unwrap_err()
                .starts_with("matchExpressions[0].operator \"Gt\"")
        );
    }

    #[test]
    fn states_and_phases_round_trip_through_their_words() {
        let mut m = Member::default();
        m.set_state(kudo_policy::rollout::Member::RollbackRefused);
        assert_eq!(m.state, "RollbackRefused");
        assert_eq!(m.state(), kudo_policy::rollout::Member::RollbackRefused);
        let mut s = RolloutStatus::default();
        assert_eq!(s.phase(), kudo_policy::rollout::Phase::Pending);
        s.set_phase(kudo_policy::rollout::Phase::AwaitingWindow);
        assert_eq!(s.phase.as_deref(), Some("AwaitingWindow"));
        assert_eq!(s.phase(), kudo_policy::rollout::Phase::AwaitingWindow);
    }

    #[test]
    fn a_selector_reads_as_kubectl_writes_it() {
        let sel = Selector::parse(
            "team=blue, tier==gold,zone in (a, b),env notin (test),canary,!legacy,x!=y",
        )
        .unwrap();
        assert_eq!(
            sel.query().unwrap(),
            "team=blue,tier=gold,zone in (a,b),env notin (test),canary,!legacy,x notin (y)"
        );
        assert_eq!(Selector::parse("").unwrap(), Selector::default());
        for bad in ["zone in a,b", "zone in ()", "a b"] {
            let e = Selector::parse(bad).unwrap_err();
            assert!(e.contains("not a label requirement"), "{bad}: {e}");
        }
    }

    #[test]
    fn a_spec_is_checked_field_by_field() {
        let now: jiff::Timestamp = "2026-11-28T10:00:00Z".parse().unwrap();
        let spec = RolloutSpec {
            operator: "kafka".into(),
            operator_version: ObjectRef {
                name: Some("kafka-1.0.0".into()),
                ..ObjectRef::default()
            },
            ..RolloutSpec::default()
        };
        assert!(spec.check(now).is_empty(), "{:?}", spec.check(now));
        assert_eq!(spec.instance_query().unwrap(), "kudo.dev/operator=kafka");
        assert!(spec.namespace_query().is_none());
        let bad = RolloutSpec {
            operator: String::new(),
            waves: vec!["1".into(), "ten".into(), "100%".into()],
            gate: Some("self.status.ready ==".into()),
            on_failure: Some("retry".into()),
            window: Some(Window {
                schedule: "0 25 * * *".into(),
                duration: "2h".into(),
                time_zone: None,
            }),
            ..spec
        };
        let problems = bad.check(now);
        let said = problems.join("\n");
        for field in [
            "spec.operator:",
            "spec.waves[1]",
            "spec.gate:",
            "spec.onFailure \"retry\"",
            "spec.window.schedule",
        ] {
            assert!(said.contains(field), "{field} in {said}");
        }
        assert_eq!(problems.len(), 5, "{said}");
    }
}
