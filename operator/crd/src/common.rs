//! The parts of the CRDs that both versions share: plans, tasks, references, status.

use std::borrow::Cow;
use std::fmt;

use kudo_pkg::package::TaskKind;
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The schema of a field that holds any JSON (kept whole by the API server).
pub fn preserve_unknown(_: &mut SchemaGenerator) -> Schema {
    json_schema!({"x-kubernetes-preserve-unknown-fields": true})
}

/// The schema of a field that holds any JSON object.
pub fn preserve_unknown_object(_: &mut SchemaGenerator) -> Schema {
    json_schema!({"type": "object", "x-kubernetes-preserve-unknown-fields": true})
}

/// A reference to another object by name (`corev1.ObjectReference` as KUDO used it).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ObjectRef {
    /// Kind of the referent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Name of the referent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Namespace of the referent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
}

/// A maintainer of an operator.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Maintainer {
    /// Name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// E-mail address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
}

/// A task of an operator version: its `spec` depends on its kind.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Task {
    /// Name, used by plans.
    pub name: String,
    /// Apply, Delete, Toggle, Pipe, KudoOperator, Dummy.
    // A kind KUDO does not know is kept as written (`TaskKind::Other`), and the manager refuses
    // to run it; the schema says `string` so that the API server stores it too.
    #[schemars(with = "String")]
    pub kind: TaskKind,
    /// The kind's fields.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "preserve_unknown_object")]
    pub spec: Option<Value>,
}

/// A plan: phases run in order (serial) or together (parallel).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Plan {
    /// `serial` or `parallel`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strategy: Option<String>,
    /// The phases.
    #[serde(default)]
    pub phases: Vec<Phase>,
}

/// A phase of a plan.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Phase {
    /// Name.
    pub name: String,
    /// `serial` or `parallel`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strategy: Option<String>,
    /// The steps.
    #[serde(default)]
    pub steps: Vec<Step>,
}

/// A step of a phase: tasks run in order.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Step {
    /// Name.
    pub name: String,
    /// Task names.
    #[serde(default)]
    pub tasks: Vec<String>,
    /// KUDO's `delete` flag: the step deletes its tasks' objects.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delete: Option<bool>,
}

/// Which plan runs for an Instance (KUDO's `planExecution`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PlanExecution {
    /// The plan asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_name: Option<String>,
    /// Identifies this run of the plan.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uid: Option<String>,
}

/// KUDO's execution statuses, of a plan, a phase or a step (the `status` of [`PlanStatus`],
/// [`PhaseStatus`] and [`StepStatus`]; an absent one reads as [`ExecStatus::NeverRun`],
/// [`ExecStatus::of`]).
///
/// Written as KUDO writes them (`NEVER_RUN`, `IN_PROGRESS`, ...). A value kudo does not know (a
/// newer manager's, a hand-written one) is kept as written ([`ExecStatus::Unknown`]) and written
/// back so: reading a status never rewrites it. The CRD schema says `string`, not an enum, so
/// the API server stores such a value too. What an unknown status means where a decision needs
/// one is said there ([`crate::plan`]): a run in it has not ended.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(from = "String", into = "String")]
pub enum ExecStatus {
    /// Not run since the Instance was created.
    NeverRun,
    /// Waiting for its turn.
    Pending,
    /// Running: objects applied, waiting for them to become healthy.
    InProgress,
    /// Failed, retried with backoff.
    Error,
    /// Failed for good (an invalid object, a failed Job): a new plan is needed.
    FatalError,
    /// Done.
    Complete,
    /// A value kudo does not know, as written; never one of the values above.
    Unknown(String),
}

impl ExecStatus {
    /// The statuses kudo knows.
    pub const KNOWN: [ExecStatus; 6] = [
        ExecStatus::NeverRun,
        ExecStatus::Pending,
        ExecStatus::InProgress,
        ExecStatus::Error,
        ExecStatus::FatalError,
        ExecStatus::Complete,
    ];

    /// The status as written in the Instance status.
    pub fn as_str(&self) -> &str {
        match self {
            ExecStatus::NeverRun => "NEVER_RUN",
            ExecStatus::Pending => "PENDING",
            ExecStatus::InProgress => "IN_PROGRESS",
            ExecStatus::Error => "ERROR",
            ExecStatus::FatalError => "FATAL_ERROR",
            ExecStatus::Complete => "COMPLETE",
            ExecStatus::Unknown(s) => s,
        }
    }

    /// The status a `status` field holds: an absent one is NEVER_RUN (as KUDO reads it).
    pub fn of(field: &Option<ExecStatus>) -> &ExecStatus {
        field.as_ref().unwrap_or(&ExecStatus::NeverRun)
    }

    /// COMPLETE and FATAL_ERROR end a run.
    pub fn is_terminal(&self) -> bool {
        matches!(self, ExecStatus::Complete | ExecStatus::FatalError)
    }
}

impl From<&str> for ExecStatus {
    fn from(s: &str) -> ExecStatus {
        ExecStatus::KNOWN
            .into_iter()
            .find(|k| k.as_str() == s)
            .unwrap_or_else(|| ExecStatus::Unknown(s.to_string()))
    }
}

impl From<String> for ExecStatus {
    fn from(s: String) -> ExecStatus {
        ExecStatus::from(s.as_str())
    }
}

impl From<ExecStatus> for String {
    fn from(s: ExecStatus) -> String {
        match s {
            ExecStatus::Unknown(s) => s,
            known => known.as_str().to_string(),
        }
    }
}

impl fmt::Display for ExecStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A string in the CRD schema: an enum there would make the API server refuse a status kudo
/// does not know, which [`ExecStatus::Unknown`] keeps.
impl JsonSchema for ExecStatus {
    fn schema_name() -> Cow<'static, str> {
        String::schema_name()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        String::json_schema(generator)
    }
}

/// How many revisions of an Instance are kept when `spec.historyLimit` is absent.
pub const DEFAULT_HISTORY_LIMIT: u32 = 10;

/// What the manager does when a change's plan fails (`spec.remediation`; `docs/lifecycle.md`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Remediation {
    /// How many times a failed plan is run again before `onFailure` (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retries: Option<u32>,
    /// `rollback` (to the last revision whose plan completed) or `none` (the default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_failure: Option<OnFailure>,
    /// How long a plan may run before it counts as failed (a Go duration: `30s`, `5m`, `1h`);
    /// none: only FATAL_ERROR is a failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<String>,
}

/// What remediation does once the retries are spent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum OnFailure {
    /// Roll back to the last revision whose plan completed.
    Rollback,
    /// Leave the Instance as the failed plan left it.
    #[default]
    None,
}

/// How the manager treats objects it applied that no longer hold what it applied
/// (`spec.drift`; `docs/drift.md`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Drift {
    /// `warn` (the default): a `Drifted` condition, an Event and a metric; `correct`: the
    /// object applied again; `ignore`: not checked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<DriftMode>,
    /// Fields never counted as drift (an autoscaler's `/spec/replicas`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ignore: Vec<DriftIgnore>,
}

/// What the manager does about drift.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum DriftMode {
    /// Not checked.
    Ignore,
    /// Reported: condition, Event, metric.
    #[default]
    Warn,
    /// Applied again (no plan runs), with an Event and a metric.
    Correct,
}

/// Fields of some objects that drift does not look at.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DriftIgnore {
    /// The objects' kind (`Deployment`).
    pub kind: String,
    /// One object's name; none: every object of the kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// JSON pointers of the fields ignored (`/spec/replicas`); none: the whole object.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pointers: Vec<String>,
}

/// Where remediation of the current change stands (`status.remediation`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RemediationStatus {
    /// The Instance's `metadata.generation` whose change is being remediated.
    pub generation: i64,
    /// The revision whose plan failed first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<i64>,
    /// Retries run so far.
    #[serde(default)]
    pub retries: u32,
    /// The revision rolled back to, once remediation rolled back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rolled_back_to: Option<i64>,
    /// The generation the rollback's write produced: a failure of its plan stops remediation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rollback_generation: Option<i64>,
}

/// Status of a plan, a phase or a step: KUDO's values.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StepStatus {
    /// Name.
    pub name: String,
    /// NEVER_RUN, PENDING, IN_PROGRESS, ERROR, FATAL_ERROR, COMPLETE.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<ExecStatus>,
    /// Why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// Status of a phase.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PhaseStatus {
    /// Name.
    pub name: String,
    /// As for steps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<ExecStatus>,
    /// Why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// The steps.
    #[serde(default)]
    pub steps: Vec<StepStatus>,
}

/// Status of a plan.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PlanStatus {
    /// Name.
    pub name: String,
    /// As for steps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<ExecStatus>,
    /// Why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// When the status last changed (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_updated_timestamp: Option<String>,
    /// The run this status belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uid: Option<String>,
    /// The phases.
    #[serde(default)]
    pub phases: Vec<PhaseStatus>,
    /// What the run did that the operator's author should know: each object applied otherwise
    /// than its template says (in the successor of an API version the cluster no longer
    /// serves; without fields the API server's schema does not declare), and how.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// A condition (`metav1.Condition` shape).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Condition {
    /// `Ready`, ...
    #[serde(rename = "type")]
    pub type_: String,
    /// `True`, `False`, `Unknown`.
    pub status: String,
    /// Machine-readable reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Human-readable message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// When it last changed (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<String>,
    /// The generation it was computed for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
}

/// `spec.window` of a Rollout or an Instance: a maintenance window, as
/// `kudo_policy::window::WindowSpec`.
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

/// Status of an Instance (the same in both versions).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InstanceStatus {
    /// Per plan, by name.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub plan_status: std::collections::BTreeMap<String, PlanStatus>,
    /// Conditions (`Ready`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// The plan running now, or the last one run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active_plan: Option<ActivePlan>,
    /// What the manager last acted on: a plan starts when the Instance differs from it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub applied: Option<AppliedState>,
    /// The `metadata.generation` the manager last acted on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// Where remediation of a failed change stands (`spec.remediation`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remediation: Option<RemediationStatus>,
    /// The plan a change needs, held until the maintenance window (`spec.window`) opens;
    /// absent when nothing waits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub awaiting_window: Option<AwaitingWindow>,
}

/// A plan held by the maintenance window (`status.awaitingWindow`): nothing of it is applied
/// until the window opens.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AwaitingWindow {
    /// The plan that will run.
    pub plan: String,
    /// The run's id (what `status.activePlan.uid` will be).
    pub uid: String,
    /// When the window next opens (RFC 3339).
    pub opens_at: String,
    /// Since when the plan waits (RFC 3339).
    pub since: String,
}

/// The plan an Instance runs (or ran last).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ActivePlan {
    /// The plan's name.
    pub name: String,
    /// The run's id (also `planStatus[name].uid`).
    pub uid: String,
    /// The revision that records this run (`kudo history`), once recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<i64>,
    /// The plan status last written to that revision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision_status: Option<ExecStatus>,
    /// When the run started (RFC 3339): what `spec.remediation.timeout` counts from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started: Option<String>,
}

/// The state of an Instance the manager last started a plan for.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AppliedState {
    /// `spec.operatorVersion.name` then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operator_version: Option<String>,
    /// The effective parameters then (defaults applied, secret values as keyed digests).
    /// Written until the run's revision records them (`revision`), then left out: an
    /// Instance's status does not carry a second copy of its values. A status written by a
    /// manager before issue 49 keeps them here, and is read as it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "preserve_unknown_object")]
    pub parameters: Option<Value>,
    /// The number of the revision (`INSTANCE-N`, a ControllerRevision) that records those
    /// effective parameters (`kudo_crd::revision::Record::applied`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<i64>,
    /// `sha256:` and the SHA-256 of those effective parameters, keys sorted
    /// ([`crate::baseline::digest`]): values with the same digest are the same values, so an
    /// unchanged Instance is known without reading its revision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
    /// `spec.planExecution.uid` then: a new uid there asks for `spec.planExecution.planName`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_execution_uid: Option<String>,
}

/// `spec` of an Operator (both versions).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OperatorFields {
    /// What the operator runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// KUDO version it needs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kudo_version: Option<String>,
    /// Kubernetes version it needs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kubernetes_version: Option<String>,
    /// Maintainers.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub maintainers: Vec<Maintainer>,
    /// Home page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// A template for the Instance's namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace_manifest: Option<String>,
}

/// One source of parameter values outside the Instance (`spec.parametersFrom`): a Secret in the
/// Instance's namespace. `writeOnly` values live only there (`kudo_policy::secrets`).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ParametersFrom {
    /// The Secret and its key.
    pub secret_ref: SecretKeyRef,
    /// Where the key's one value goes (a JSON pointer, typed by the schema as `-p` types it).
    /// Without it, the key holds a YAML or JSON document of values, merged like a `-P` file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pointer: Option<String>,
}

/// A key of a Secret in the same namespace.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
pub struct SecretKeyRef {
    /// The Secret's name.
    pub name: String,
    /// The key in its data (default `parameters.yaml`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn exec_statuses_are_read_and_written_as_kudo_writes_them() {
        let cases: &[(&str, ExecStatus)] = &[
            ("NEVER_RUN", ExecStatus::NeverRun),
            ("PENDING", ExecStatus::Pending),
            ("IN_PROGRESS", ExecStatus::InProgress),
            ("ERROR", ExecStatus::Error),
            ("FATAL_ERROR", ExecStatus::FatalError),
            ("COMPLETE", ExecStatus::Complete),
            ("complete", ExecStatus::Unknown("complete".into())), // case-sensitive, as KUDO
            ("SUSPENDED", ExecStatus::Unknown("SUSPENDED".into())),
            ("", ExecStatus::Unknown(String::new())),
        ];
        for (text, want) in cases {
            let got: ExecStatus = serde_json::from_value(json!(text)).unwrap();
            assert_eq!(&got, want, "status: {text:?}");
            assert_eq!(
                serde_json::to_value(&got).unwrap(),
                json!(text),
                "status: {text:?}"
            );
        }
    }

    #[test]
    fn a_status_kudo_does_not_know_is_written_back_as_it_was() {
        let stored = json!({
            "name": "deploy", "status": "SUSPENDED",
            "phases": [{"name": "p", "status": "PAUSED", "steps": [
                {"name": "s", "status": "WAITING_FOR_GODOT"},
                {"name": "t"}
            ]}]
        });
        let read: PlanStatus = serde_json::from_value(stored.clone()).unwrap();
        assert_eq!(read.status, Some(ExecStatus::Unknown("SUSPENDED".into())));
        assert_eq!(read.phases[0].steps[1].status, None, "absent stays absent");
        assert_eq!(
            ExecStatus::of(&read.phases[0].steps[1].status),
            &ExecStatus::NeverRun
        );
        assert_eq!(serde_json::to_value(&read).unwrap(), stored);
    }

    #[test]
    fn task_kinds_round_trip_known_or_not() {
        for kind in ["Apply", "KudoOperator", "Custom"] {
            let task = json!({"name": "t", "kind": kind});
            let read: Task = serde_json::from_value(task.clone()).unwrap();
            assert_eq!(read.kind, TaskKind::from(kind), "kind: {kind}");
            assert_eq!(serde_json::to_value(&read).unwrap(), task, "kind: {kind}");
        }
    }
}
