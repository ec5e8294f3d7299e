//! Where an Instance's plan stands, and its status bookkeeping: pure functions over the
//! Instance, its OperatorVersion's package and its status.
//!
//! Which plan starts, and which one is in progress, is the policy's to decide
//! ([`kudo_policy::run`]), over the plan state [`crate::baseline::plan_state`] reads here.
//!
//! A plan's phases run one after the other (`serial`, the default) or all at once
//! (`parallel`); so do a phase's steps. A step's tasks run in order.

use kudo_pkg::Package;
use kudo_policy::run::Start;
use serde_json::Value;

use crate::common::{
    ActivePlan, AppliedState, ExecStatus, InstanceStatus, PhaseStatus, PlanStatus, StepStatus,
};
use crate::v1beta2::Instance;

/// The name of the plan that runs when an Instance is deleted.
pub const CLEANUP: &str = "cleanup";

/// Where a plan run stands ([`judge`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Standing {
    /// COMPLETE: done.
    Complete,
    /// FATAL_ERROR: it will not go on; a new run is needed.
    Failed(Failure),
    /// ERROR: the manager retries it.
    Retrying,
    /// Not run, pending or in progress.
    Running,
}

impl Standing {
    /// Complete or failed: the run is over.
    pub fn is_over(&self) -> bool {
        matches!(self, Standing::Complete | Standing::Failed(_))
    }
}

/// Where a plan run failed for good.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// The first phase in FATAL_ERROR, when the status names one.
    pub phase: Option<String>,
    /// Its first step in FATAL_ERROR, when the status names one.
    pub step: Option<String>,
    /// The most precise message: the step's, else the phase's, else the plan's.
    pub message: String,
}

/// Where the run whose status is `plan` stands: what the manager's `Ready` condition, `--wait`,
/// the admission rules ([`kudo_policy::run::running`], through
/// [`crate::baseline::plan_state`]) and a parent waiting for its KudoOperator child read.
/// A status kudo does not know ([`ExecStatus::Unknown`]) has not ended: Running.
pub fn judge(plan: &PlanStatus) -> Standing {
    match ExecStatus::of(&plan.status) {
        ExecStatus::Complete => Standing::Complete,
        ExecStatus::FatalError => Standing::Failed(failure(plan)),
        ExecStatus::Error => Standing::Retrying,
        ExecStatus::NeverRun
        | ExecStatus::Pending
        | ExecStatus::InProgress
        | ExecStatus::Unknown(_) => Standing::Running,
    }
}

/// The first phase and step in FATAL_ERROR, and the most precise message.
fn failure(plan: &PlanStatus) -> Failure {
    let fatal = |s: &Option<ExecStatus>| *ExecStatus::of(s) == ExecStatus::FatalError;
    let phase = plan.phases.iter().find(|p| fatal(&p.status));
    let step = phase.and_then(|p| p.steps.iter().find(|s| fatal(&s.status)));
    let message = step
        .and_then(|s| s.message.clone())
        .or_else(|| phase.and_then(|p| p.message.clone()))
        .or_else(|| plan.message.clone())
        .unwrap_or_else(|| "no message".into());
    Failure {
        phase: phase.map(|p| p.name.clone()),
        step: step.map(|s| s.name.clone()),
        message,
    }
}

/// Whether the manager has acted on `generation` of an Instance (or a later one): its
/// `status.observedGeneration` has reached it. A status without one has acted on none.
///
/// `>=`, not `==`: a generation only grows, and the manager records the one it read, so once it
/// has acted on a later write it has acted on this one too. `kudo update --wait` asks about
/// the generation its own write produced, and another write may land before the manager
/// looks; on the Instance's own `metadata.generation` (a parent reading its KudoOperator
/// child, the admission rules) the two agree.
pub fn acted_on(status: &InstanceStatus, generation: i64) -> bool {
    status.observed_generation.unwrap_or(0) >= generation
}

/// How far an Instance's plan for a generation has come ([`progress`]).
#[derive(Debug, Clone, PartialEq)]
pub enum Progress<'a> {
    /// The manager has written no status yet.
    NoStatus,
    /// The manager has not acted on the generation yet ([`acted_on`]); it last acted on
    /// `observed` (0: none).
    Behind {
        /// `status.observedGeneration`.
        observed: i64,
    },
    /// No plan has started.
    NoActivePlan,
    /// The active plan has no status yet.
    NoPlanStatus {
        /// The active plan.
        active: &'a ActivePlan,
    },
    /// The manager has acted on the generation by holding the plan it needs until the
    /// maintenance window opens (`status.awaitingWindow`): nothing of it runs yet.
    AwaitingWindow {
        /// The held plan and when the window opens.
        held: &'a crate::common::AwaitingWindow,
    },
    /// The active plan, and where it stands ([`judge`]).
    Plan {
        /// The active plan.
        active: &'a ActivePlan,
        /// Its status.
        status: &'a PlanStatus,
        /// Where it stands.
        standing: Standing,
    },
}

/// Where the plan the manager runs for `generation` of an Instance stands, given the
/// Instance's status: "has this Instance finished its plan", decided once for `--wait` and for
/// a parent waiting on its KudoOperator child. The plan has finished when this is
/// [`Progress::Plan`] with a [`Standing`] that [`Standing::is_over`].
pub fn progress(status: Option<&InstanceStatus>, generation: i64) -> Progress<'_> {
    let Some(status) = status else {
        return Progress::NoStatus;
    };
    if !acted_on(status, generation) {
        return Progress::Behind {
            observed: status.observed_generation.unwrap_or(0),
        };
    }
    if let Some(held) = &status.awaiting_window {
        return Progress::AwaitingWindow { held };
    }
    let Some(active) = status.active_plan.as_ref() else {
        return Progress::NoActivePlan;
    };
    match status.plan_status.get(&active.name) {
        None => Progress::NoPlanStatus { active },
        Some(plan) => Progress::Plan {
            active,
            status: plan,
            standing: judge(plan),
        },
    }
}

/// A fresh status tree for `plan`: every phase and step PENDING, the plan IN_PROGRESS.
pub fn fresh(pkg: &Package, plan: &str, uid: &str, now: &str) -> PlanStatus {
    let phases = pkg
        .operator()
        .plans
        .get(plan)
        .map(|p| {
            p.phases
                .iter()
                .map(|ph| PhaseStatus {
                    name: ph.name.clone(),
                    status: Some(ExecStatus::Pending),
                    message: None,
                    steps: ph
                        .steps
                        .iter()
                        .map(|s| StepStatus {
                            name: s.name.clone(),
                            status: Some(ExecStatus::Pending),
                            message: None,
                        })
                        .collect(),
                })
                .collect()
        })
        .unwrap_or_default();
    PlanStatus {
        name: plan.into(),
        status: Some(ExecStatus::InProgress),
        message: None,
        last_updated_timestamp: Some(now.into()),
        uid: Some(uid.into()),
        phases,
        warnings: Vec::new(),
    }
}

/// Starts `start` in `status`: a fresh tree for its plan, the plan it replaces (if still
/// running) marked as superseded, and `applied` set to what the plan runs for.
pub fn begin(
    status: &mut InstanceStatus,
    pkg: &Package,
    inst: &Instance,
    effective: &Value,
    start: &Start,
    now: &str,
) {
    if let Some(active) = &status.active_plan
        && let Some(old) = status.plan_status.get_mut(&active.name)
        && !judge(old).is_over()
        && old.uid.as_deref() != Some(start.uid.as_str())
    {
        old.status = Some(ExecStatus::Error);
        old.message = Some(format!(
            "superseded by plan `{}` ({})",
            start.plan, start.reason
        ));
        old.last_updated_timestamp = Some(now.into());
    }
    status
        .plan_status
        .insert(start.plan.clone(), fresh(pkg, &start.plan, &start.uid, now));
    status.active_plan = Some(ActivePlan {
        name: start.plan.clone(),
        uid: start.uid.clone(),
        revision: None,
        revision_status: None,
        started: Some(now.into()),
    });
    status.applied = Some(AppliedState {
        operator_version: inst.spec.operator_version_name(),
        parameters: Some(effective.clone()),
        revision: None,
        digest: Some(crate::baseline::digest(effective)),
        plan_execution_uid: inst
            .spec
            .plan_execution
            .as_ref()
            .and_then(|p| p.uid.clone())
            .or_else(|| {
                status
                    .applied
                    .as_ref()
                    .and_then(|a| a.plan_execution_uid.clone())
            }),
    });
}

/// Every plan of the operator has a status (NEVER_RUN until it runs).
pub fn ensure_all(status: &mut InstanceStatus, pkg: &Package) {
    for name in pkg.operator().plans.keys() {
        status
            .plan_status
            .entry(name.clone())
            .or_insert_with(|| PlanStatus {
                name: name.clone(),
                status: Some(ExecStatus::NeverRun),
                ..Default::default()
            });
    }
}

/// A step to work on now: its phase and step index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StepAt {
    /// Index of the phase in the plan.
    pub phase: usize,
    /// Index of the step in the phase.
    pub step: usize,
}

fn parallel(strategy: Option<&String>) -> bool {
    strategy.map(String::as_str) == Some("parallel")
}

/// The steps that may run now: in a serial plan the first unfinished phase, in a parallel one
/// every unfinished phase; within a phase likewise for steps. Finished (COMPLETE) steps are
/// never returned, so a completed step never runs again; nor are steps of a phase behind a
/// fatal one. A step in a status kudo does not know ([`ExecStatus::Unknown`]) has not run.
pub fn runnable(pkg: &Package, plan: &str, status: &PlanStatus) -> Vec<StepAt> {
    let Some(p) = pkg.operator().plans.get(plan) else {
        return Vec::new();
    };
    let step_status = |ph: usize, st: usize| {
        status
            .phases
            .get(ph)
            .and_then(|x| x.steps.get(st))
            .and_then(|s| s.status.as_ref())
            .unwrap_or(&ExecStatus::NeverRun)
    };
    let mut out = Vec::new();
    for (pi, phase) in p.phases.iter().enumerate() {
        let statuses: Vec<&ExecStatus> = (0..phase.steps.len())
            .map(|si| step_status(pi, si))
            .collect();
        if statuses.iter().all(|s| **s == ExecStatus::Complete) {
            continue;
        }
        if statuses.contains(&&ExecStatus::FatalError) {
            return out;
        }
        for (si, st) in statuses.iter().enumerate() {
            if **st == ExecStatus::Complete {
                continue;
            }
            out.push(StepAt {
                phase: pi,
                step: si,
            });
            if !parallel(phase.strategy.as_ref()) {
                break;
            }
        }
        if !parallel(p.strategy.as_ref()) {
            break;
        }
    }
    out
}

/// A status kudo does not know counts as not started (as NEVER_RUN and PENDING do).
fn aggregate<'a>(statuses: impl Iterator<Item = &'a ExecStatus> + Clone) -> ExecStatus {
    let all = |s: ExecStatus| statuses.clone().all(|x| *x == s);
    let any = |s: ExecStatus| statuses.clone().any(|x| *x == s);
    if all(ExecStatus::Complete) {
        ExecStatus::Complete
    } else if any(ExecStatus::FatalError) {
        ExecStatus::FatalError
    } else if any(ExecStatus::Error) {
        ExecStatus::Error
    } else if any(ExecStatus::InProgress) || any(ExecStatus::Complete) {
        ExecStatus::InProgress
    } else {
        ExecStatus::Pending
    }
}

/// Sets each phase's and the plan's status from their steps': all COMPLETE is COMPLETE, any
/// FATAL_ERROR is FATAL_ERROR, then ERROR, then IN_PROGRESS. The plan is never PENDING: once
/// started it is IN_PROGRESS. The first step message that explains a failure becomes the
/// phase's and the plan's message.
pub fn roll_up(status: &mut PlanStatus) {
    for phase in &mut status.phases {
        let st = aggregate(phase.steps.iter().map(|s| ExecStatus::of(&s.status)));
        phase.message = failure_message(
            &st,
            phase.steps.iter().map(|s| (&s.name, &s.status, &s.message)),
        );
        phase.status = Some(st);
    }
    let mut st = aggregate(status.phases.iter().map(|p| ExecStatus::of(&p.status)));
    if st == ExecStatus::Pending {
        st = ExecStatus::InProgress;
    }
    status.message = failure_message(
        &st,
        status
            .phases
            .iter()
            .map(|p| (&p.name, &p.status, &p.message)),
    );
    status.status = Some(st);
}

fn failure_message<'a>(
    st: &ExecStatus,
    parts: impl Iterator<Item = (&'a String, &'a Option<ExecStatus>, &'a Option<String>)>,
) -> Option<String> {
    if !matches!(st, ExecStatus::Error | ExecStatus::FatalError) {
        return None;
    }
    parts
        .filter(|(_, s, _)| ExecStatus::of(s) == st)
        .find_map(|(name, _, m)| m.as_ref().map(|m| format!("{name}: {m}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::baseline;
    use crate::common::{ObjectRef, PlanExecution};
    use crate::labels;
    use crate::v1beta2::InstanceSpec;
    use kudo_policy::change::Version;
    use kudo_policy::run::{self, Refusal, Running};
    use serde_json::json;
    use std::collections::BTreeMap;
    use std::path::Path;

    fn package(plans: &str, params: &str) -> Package {
        let mut files = BTreeMap::new();
        files.insert(
            "operator.yaml".to_string(),
            format!("apiVersion: kudo.dev/v1beta1\nname: demo\noperatorVersion: 1.0.0\ntasks:\n- name: t\n  kind: Dummy\n  spec: {{}}\nplans:\n{plans}").into_bytes(),
        );
        files.insert("params.yaml".to_string(), params.as_bytes().to_vec());
        Package::from_files(Path::new("demo"), files).unwrap()
    }

    /// [`run::select`] over an Instance and a status, as the manager calls it.
    fn select(
        inst: &Instance,
        version: &Version,
        effective: &Value,
        status: &InstanceStatus,
    ) -> Result<Option<Start>, Refusal> {
        let applied = baseline::applied(status);
        run::select(&baseline::spec(inst), applied.as_ref(), version, effective)
    }

    fn running(inst: &Instance, version: &Version) -> Option<Running> {
        run::running(&baseline::plan_state(inst), version)
    }

    /// The plan that blocks a write carrying `annotations`, as the webhook decides it.
    fn blocking(
        inst: &Instance,
        annotations: Option<&BTreeMap<String, String>>,
        version: &Version,
    ) -> Option<String> {
        run::supersede(running(inst, version), baseline::force(annotations)).blocking
    }

    fn ver(pkg: &Package) -> Version {
        pkg.policy_version().unwrap()
    }

    fn two_phase() -> Package {
        package(
            "  deploy:\n    strategy: serial\n    phases:\n    - name: one\n      strategy: parallel\n      steps:\n      - {name: a, tasks: [t]}\n      - {name: b, tasks: [t]}\n    - name: two\n      steps:\n      - {name: c, tasks: [t]}\n      - {name: d, tasks: [t]}\n  backup:\n    phases:\n    - name: x\n      steps:\n      - {name: y, tasks: [t]}\n",
            "apiVersion: kudo.dev/v1beta2\ntype: object\nproperties:\n  replicas: {type: integer, default: 1}\n  schedule: {type: string, default: daily, trigger: backup}\n",
        )
    }

    fn instance(generation: i64, params: Value) -> Instance {
        let mut i = Instance::new(
            "demo",
            InstanceSpec {
                operator_version: Some(ObjectRef {
                    name: Some("demo-1.0.0".into()),
                    ..Default::default()
                }),
                parameters: Some(params),
                ..Default::default()
            },
        );
        i.metadata.generation = Some(generation);
        i
    }

    fn applied(params: Value) -> InstanceStatus {
        InstanceStatus {
            applied: Some(AppliedState {
                operator_version: Some("demo-1.0.0".into()),
                parameters: Some(params),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    #[test]
    fn a_new_instance_deploys() {
        let pkg = two_phase();
        let got = select(
            &instance(1, json!({})),
            &ver(&pkg),
            &json!({}),
            &InstanceStatus::default(),
        );
        assert_eq!(
            got,
            Ok(Some(Start {
                plan: "deploy".into(),
                uid: "deploy-g1".into(),
                reason: "first deployment".into()
            }))
        );
    }

    #[test]
    fn an_unchanged_instance_starts_nothing() {
        let pkg = two_phase();
        let eff = json!({"replicas": 1, "schedule": "daily"});
        let got = select(
            &instance(3, json!({})),
            &ver(&pkg),
            &eff,
            &applied(eff.clone()),
        );
        assert_eq!(got, Ok(None));
    }

    #[test]
    fn a_triggered_parameter_runs_its_plan_and_others_fall_back_to_deploy() {
        let pkg = two_phase();
        let before = json!({"replicas": 1, "schedule": "daily"});
        let by_trigger = json!({"replicas": 1, "schedule": "hourly"});
        let got = select(
            &instance(2, json!({})),
            &ver(&pkg),
            &by_trigger,
            &applied(before.clone()),
        )
        .unwrap()
        .unwrap();
        assert_eq!(
            (got.plan.as_str(), got.uid.as_str()),
            ("backup", "backup-g2")
        );
        assert_eq!(got.reason, "parameters changed: /schedule");
        let fallback = json!({"replicas": 3, "schedule": "daily"});
        let got = select(
            &instance(2, json!({})),
            &ver(&pkg),
            &fallback,
            &applied(before.clone()),
        )
        .unwrap()
        .unwrap();
        assert_eq!(got.plan, "deploy");
        let both = json!({"replicas": 3, "schedule": "hourly"});
        assert!(matches!(
            select(&instance(2, json!({})), &ver(&pkg), &both, &applied(before)),
            Err(Refusal::Refused(d)) if d.len() == 1
        ));
    }

    #[test]
    fn a_new_plan_execution_uid_runs_that_plan_once() {
        let pkg = two_phase();
        let eff = json!({"replicas": 1, "schedule": "daily"});
        let mut inst = instance(4, json!({}));
        inst.spec.plan_execution = Some(PlanExecution {
            plan_name: Some("backup".into()),
            uid: Some("u-1".into()),
        });
        let mut status = applied(eff.clone());
        let got = select(&inst, &ver(&pkg), &eff, &status).unwrap().unwrap();
        assert_eq!((got.plan.as_str(), got.uid.as_str()), ("backup", "u-1"));
        begin(&mut status, &pkg, &inst, &eff, &got, "t0");
        assert_eq!(select(&inst, &ver(&pkg), &eff, &status), Ok(None));
        inst.spec.plan_execution.as_mut().unwrap().plan_name = Some("nope".into());
        inst.spec.plan_execution.as_mut().unwrap().uid = Some("u-2".into());
        assert_eq!(
            select(&inst, &ver(&pkg), &eff, &status),
            Err(Refusal::UnknownPlan("nope".into()))
        );
    }

    #[test]
    fn another_operator_version_upgrades_or_deploys() {
        let pkg = two_phase();
        let eff = json!({"replicas": 1, "schedule": "daily"});
        let mut status = applied(eff.clone());
        status.applied.as_mut().unwrap().operator_version = Some("demo-0.9.0".into());
        let got = select(&instance(5, json!({})), &ver(&pkg), &eff, &status)
            .unwrap()
            .unwrap();
        assert_eq!(got.plan, "deploy", "no upgrade or update plan: deploy");
        assert_eq!(got.reason, "upgrade from demo-0.9.0 to demo-1.0.0");
    }

    #[test]
    fn the_same_version_named_the_other_way_is_no_upgrade() {
        // demo at appVersion 2.0: `demo-2.0-1.0.0` (KUDO's) and `demo-1.0.0` (older KUDO's).
        let mut files = BTreeMap::new();
        files.insert(
            "operator.yaml".to_string(),
            b"apiVersion: kudo.dev/v1beta1\nname: demo\nappVersion: \"2.0\"\noperatorVersion: 1.0.0\ntasks:\n- name: t\n  kind: Dummy\n  spec: {}\nplans:\n  deploy:\n    phases:\n    - name: x\n      steps:\n      - {name: y, tasks: [t]}\n".to_vec(),
        );
        files.insert(
            "params.yaml".to_string(),
            b"apiVersion: kudo.dev/v1beta2\ntype: object\nproperties:\n  replicas: {type: integer, default: 1}\n".to_vec(),
        );
        let pkg = Package::from_files(Path::new("demo"), files).unwrap();
        let eff = json!({"replicas": 1});
        let cases = [
            ("demo-1.0.0", "demo-2.0-1.0.0", None),
            ("demo-2.0-1.0.0", "demo-1.0.0", None),
            (
                "demo-0.9.0",
                "demo-2.0-1.0.0",
                Some("upgrade from demo-0.9.0 to demo-2.0-1.0.0"),
            ),
        ];
        for (before, now, want) in cases {
            let mut status = applied(eff.clone());
            status.applied.as_mut().unwrap().operator_version = Some(before.into());
            let mut inst = instance(5, json!({}));
            inst.spec.operator_version.as_mut().unwrap().name = Some(now.into());
            let got = select(&inst, &ver(&pkg), &eff, &status).unwrap();
            assert_eq!(got.map(|s| s.reason).as_deref(), want, "{before} -> {now}");
        }
    }

    #[test]
    fn serial_phases_wait_and_parallel_steps_run_together() {
        let pkg = two_phase();
        let mut st = fresh(&pkg, "deploy", "u", "t0");
        let at = |p, s| StepAt { phase: p, step: s };
        assert_eq!(runnable(&pkg, "deploy", &st), [at(0, 0), at(0, 1)]);
        st.phases[0].steps[0].status = Some("COMPLETE".into());
        assert_eq!(runnable(&pkg, "deploy", &st), [at(0, 1)]);
        st.phases[0].steps[1].status = Some("COMPLETE".into());
        assert_eq!(
            runnable(&pkg, "deploy", &st),
            [at(1, 0)],
            "serial steps: one at a time"
        );
        st.phases[1].steps[0].status = Some("FATAL_ERROR".into());
        assert_eq!(runnable(&pkg, "deploy", &st), []);
    }

    #[test]
    fn statuses_roll_up_from_steps_to_the_plan() {
        let pkg = two_phase();
        let mut st = fresh(&pkg, "deploy", "u", "t0");
        roll_up(&mut st);
        assert_eq!(st.status, Some(ExecStatus::InProgress));
        assert_eq!(st.phases[0].status, Some(ExecStatus::Pending));
        st.phases[0].steps[0].status = Some("COMPLETE".into());
        st.phases[0].steps[1].status = Some("ERROR".into());
        st.phases[0].steps[1].message = Some("the API server refused it".into());
        roll_up(&mut st);
        assert_eq!(st.phases[0].status, Some(ExecStatus::Error));
        assert_eq!(st.status, Some(ExecStatus::Error));
        assert_eq!(
            st.message.as_deref(),
            Some("one: b: the API server refused it")
        );
        for ph in &mut st.phases {
            for s in &mut ph.steps {
                s.status = Some("COMPLETE".into());
            }
        }
        roll_up(&mut st);
        assert_eq!(st.status, Some(ExecStatus::Complete));
        assert_eq!(st.message, None);
    }

    #[test]
    fn a_plan_is_judged_by_its_status_and_a_failure_names_its_first_fatal_step() {
        let mut st = fresh(&two_phase(), "deploy", "u", "t0");
        st.phases[1].status = Some("FATAL_ERROR".into());
        st.phases[1].message = Some("d: boom".into());
        st.phases[1].steps[1].status = Some("FATAL_ERROR".into());
        st.phases[1].steps[1].message = Some("boom".into());
        let failed = Standing::Failed(Failure {
            phase: Some("two".into()),
            step: Some("d".into()),
            message: "boom".into(),
        });
        let cases: &[(Option<&str>, Standing)] = &[
            (None, Standing::Running),
            (Some("NEVER_RUN"), Standing::Running),
            (Some("PENDING"), Standing::Running),
            (Some("IN_PROGRESS"), Standing::Running),
            (Some("something else"), Standing::Running),
            (Some("ERROR"), Standing::Retrying),
            (Some("COMPLETE"), Standing::Complete),
            (Some("FATAL_ERROR"), failed),
        ];
        for (status, want) in cases {
            st.status = status.map(ExecStatus::from);
            assert_eq!(&judge(&st), want, "status: {status:?}");
            assert_eq!(
                judge(&st).is_over(),
                matches!(want, Standing::Complete | Standing::Failed(_)),
                "status: {status:?}"
            );
        }
        // Without a failing step, the plan's own message.
        let mut bare = fresh(&two_phase(), "deploy", "u", "t0");
        bare.status = Some("FATAL_ERROR".into());
        bare.message = Some("superseded".into());
        assert_eq!(
            judge(&bare),
            Standing::Failed(Failure {
                phase: None,
                step: None,
                message: "superseded".into()
            })
        );
    }

    #[test]
    fn an_instance_has_finished_its_plan_once_the_manager_acted_on_its_generation() {
        let pkg = two_phase();
        let mut status = InstanceStatus::default();
        assert_eq!(progress(None, 1), Progress::NoStatus);
        assert_eq!(progress(Some(&status), 1), Progress::Behind { observed: 0 });
        assert_eq!(progress(Some(&status), 0), Progress::NoActivePlan);
        let first = select(&instance(1, json!({})), &ver(&pkg), &json!({}), &status)
            .unwrap()
            .unwrap();
        begin(
            &mut status,
            &pkg,
            &instance(1, json!({})),
            &json!({}),
            &first,
            "t0",
        );
        status.observed_generation = Some(2);
        let active = status.active_plan.clone().unwrap();
        let standing = |s: &InstanceStatus, generation| match progress(Some(s), generation) {
            Progress::Plan { standing, .. } => Some(standing),
            _ => None,
        };
        // observed 2: generations 1 and 2 acted on (`>=`: a later write came first), 3 not
        let cases: &[(i64, Option<Standing>)] = &[
            (1, Some(Standing::Running)),
            (2, Some(Standing::Running)),
            (3, None),
        ];
        for (generation, want) in cases {
            assert_eq!(
                &standing(&status, *generation),
                want,
                "generation {generation}"
            );
            assert_eq!(
                acted_on(&status, *generation),
                want.is_some(),
                "generation {generation}"
            );
        }
        assert_eq!(progress(Some(&status), 3), Progress::Behind { observed: 2 });
        status.plan_status.get_mut("deploy").unwrap().status = Some(ExecStatus::Complete);
        assert_eq!(standing(&status, 2), Some(Standing::Complete));
        status.plan_status.remove("deploy");
        assert_eq!(
            progress(Some(&status), 2),
            Progress::NoPlanStatus { active: &active }
        );
    }

    #[test]
    fn a_status_kudo_does_not_know_is_a_run_not_ended_and_a_step_not_run() {
        let pkg = two_phase();
        let mut st = fresh(&pkg, "deploy", "u", "t0");
        st.status = Some("SUSPENDED".into());
        assert_eq!(judge(&st), Standing::Running);
        st.phases[0].steps[0].status = Some("SKIPPED".into());
        st.phases[0].steps[1].status = Some(ExecStatus::Complete);
        let at = |p, s| StepAt { phase: p, step: s };
        assert_eq!(runnable(&pkg, "deploy", &st), [at(0, 0)]);
        roll_up(&mut st);
        assert_eq!(st.phases[0].status, Some(ExecStatus::InProgress));
        assert_eq!(
            st.phases[0].steps[0].status,
            Some(ExecStatus::Unknown("SKIPPED".into())),
            "a step's status is kept: only the manager running it changes it"
        );
    }

    #[test]
    fn a_plan_that_is_replaced_midway_says_so() {
        let pkg = two_phase();
        let eff = json!({"replicas": 1, "schedule": "daily"});
        let inst = instance(1, json!({}));
        let mut status = InstanceStatus::default();
        ensure_all(&mut status, &pkg);
        assert_eq!(
            status.plan_status["backup"].status,
            Some(ExecStatus::NeverRun)
        );
        let first = select(&inst, &ver(&pkg), &eff, &status).unwrap().unwrap();
        begin(&mut status, &pkg, &inst, &eff, &first, "t0");
        let second = Start {
            plan: "backup".into(),
            uid: "backup-g2".into(),
            reason: "parameters changed: /schedule".into(),
        };
        begin(&mut status, &pkg, &inst, &eff, &second, "t1");
        assert_eq!(status.plan_status["deploy"].status, Some(ExecStatus::Error));
        assert_eq!(
            status.plan_status["deploy"].message.as_deref(),
            Some("superseded by plan `backup` (parameters changed: /schedule)")
        );
        assert_eq!(status.active_plan.as_ref().unwrap().name, "backup");
    }

    #[test]
    fn a_running_plan_blocks_writes_unless_they_name_it_to_supersede() {
        let pkg = two_phase();
        let eff = json!({"replicas": 1, "schedule": "daily"});
        let mut inst = instance(1, json!({}));
        let mut status = InstanceStatus::default();
        let first = select(&inst, &ver(&pkg), &eff, &status).unwrap().unwrap();
        begin(&mut status, &pkg, &inst, &eff, &first, "t0");
        inst.status = Some(status);
        let v = ver(&pkg);
        assert_eq!(
            running(&inst, &v),
            Some(Running {
                plan: "deploy".into(),
                uid: "deploy-g1".into()
            })
        );
        let with = |uid: &str| BTreeMap::from([(labels::SUPERSEDE.to_string(), uid.to_string())]);
        type Annotations = Option<BTreeMap<String, String>>;
        let cases: &[(Annotations, Option<&str>)] = &[
            (None, Some("deploy")),                    // no --force
            (Some(BTreeMap::new()), Some("deploy")),   // other annotations only
            (Some(with("deploy-g1")), None),           // --force naming this run
            (Some(with("deploy-g0")), Some("deploy")), // a stale --force of an older run
        ];
        for (annotations, want) in cases {
            assert_eq!(
                blocking(&inst, annotations.as_ref(), &v).as_deref(),
                *want,
                "annotations: {annotations:?}"
            );
        }
        // Once the run is over, nothing blocks.
        if let Some(st) = inst.status.as_mut() {
            st.plan_status.get_mut("deploy").unwrap().status = Some("COMPLETE".into());
        }
        assert_eq!(blocking(&inst, None, &v), None);
    }
}
