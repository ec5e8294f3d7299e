//! `Rollout` (`kudo.dev/v1beta2`): one operator's Instances moved to a new OperatorVersion in
//! waves that halt on the first failure (docs/rollouts.md). Its decisions are
//! `kudo_policy::rollout`'s and `kudo_policy::window`'s; this is the object they are stored in.
//! Served in v1beta2 only: KUDO never had it, so there is nothing to convert.

use std::collections::BTreeMap;

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::common::ObjectRef;

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

/// `spec.approval`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Approval {
    /// Wait for an approval before the first wave.
    #[serde(default)]
    pub required: bool,
    /// Who approved (`kudo rollout approve` writes the caller's name; the admission webhook
    /// admits it only from that user, and only when they may `approve` `rollouts`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approved_by: Option<String>,
}

/// `spec.window`: as `kudo_policy::window::WindowSpec`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Window {
    /// 5-field cron: when the window opens.
    pub schedule: String,
    /// How long it stays open (`90m`, `2h`).
    pub duration: String,
    /// The IANA time zone of `schedule`; UTC when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_zone: Option<String>,
}

impl Window {
    /// The window as the policy reads it.
    pub fn spec(&self) -> kudo_policy::window::WindowSpec {
        kudo_policy::window::WindowSpec {
            schedule: self.schedule.clone(),
            duration: self.duration.clone(),
            time_zone: self.time_zone.clone(),
        }
    }
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
}
