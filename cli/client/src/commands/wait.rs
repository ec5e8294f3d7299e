//! `--wait`: polls the Instance until the manager has run the plan a write asked for.
//!
//! The contract with the manager is the Instance status ([`kudo_crd::common::InstanceStatus`]):
//! - `status.observedGeneration` is the `metadata.generation` the manager last acted on;
//! - `status.activePlan {name, uid}` is the plan running now, or the last one run;
//! - `status.planStatus[name].status` is NEVER_RUN, PENDING, IN_PROGRESS, ERROR, FATAL_ERROR
//!   or COMPLETE, with phases and steps below;
//! - a manual trigger's run has the uid of `spec.planExecution.uid`.
//!
//! A wait succeeds when `observedGeneration` has reached the generation the write produced (and,
//! for a trigger, the active plan is that run) and the active plan is COMPLETE. FATAL_ERROR
//! fails at once, naming the plan, phase, step and message. ERROR is retried by the manager, so
//! the wait goes on. [`Stage::of`] reads one Instance against the goal (where the plan stands
//! is [`kudo_crd::plan::progress`], as the manager reads it); the loops around it poll with GET
//! every [`Options::interval`].
//!
//! Every reading is handed to a watcher (`&mut dyn FnMut(&Reading)`) before the loop decides:
//! the CLI draws its progress line from it, a caller that shows nothing passes `&mut |_| {}`.
//! The last reading a watcher gets is the one that ended the wait ([`Stage::Complete`],
//! [`Stage::Failed`], [`Stage::Gone`]), unless the time ran out or a request failed.
//!
//! ```
//! use kudo_client::commands::wait::{Goal, Stage};
//! use kudo_crd::v1beta2 as crd;
//!
//! let inst: crd::Instance = serde_json::from_value(serde_json::json!({
//!     "apiVersion": "kudo.dev/v1beta2", "kind": "Instance",
//!     "metadata": {"name": "zk", "generation": 2},
//!     "spec": {"operatorVersion": {"name": "zookeeper-0.3.0"}},
//!     "status": {"observedGeneration": 2, "activePlan": {"name": "deploy", "uid": "u-1"},
//!         "planStatus": {"deploy": {"name": "deploy", "status": "IN_PROGRESS", "phases": [
//!             {"name": "zookeeper", "status": "IN_PROGRESS", "steps": [
//!                 {"name": "deploy", "status": "IN_PROGRESS", "message": "1 of 3 ready"}]}]}}}
//! }))
//! .unwrap();
//! let stage = Stage::of(&inst, &Goal { generation: 2, uid: None });
//! assert!(matches!(&stage, Stage::Running(at) if at.plan == "deploy"));
//! assert_eq!(
//!     stage.to_string(),
//!     "plan deploy is IN_PROGRESS (phase zookeeper, step deploy IN_PROGRESS: 1 of 3 ready)"
//! );
//! ```

use std::fmt;
use std::time::Duration;

use kudo_crd::common::{ExecStatus, PlanStatus};
use kudo_crd::plan::{self, Failure, Progress, Standing};
use kudo_crd::v1beta2::Instance;

use super::{Error, Result, Target};

/// How long to wait and how often to look.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// Give up after this long.
    pub timeout: Duration,
    /// Time between two readings.
    pub interval: Duration,
}

/// `--wait-time` when not given.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);

impl Default for Options {
    fn default() -> Self {
        Options {
            timeout: DEFAULT_TIMEOUT,
            interval: Duration::from_secs(1),
        }
    }
}

/// What a write asked the manager for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Goal {
    /// The `metadata.generation` the write produced.
    pub generation: i64,
    /// For a manual trigger: the run's uid (`spec.planExecution.uid`).
    pub uid: Option<String>,
}

/// One reading of a wait, as its watcher gets it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reading<'a> {
    /// The Instance's name.
    pub instance: &'a str,
    /// Where the wait stands.
    pub stage: &'a Stage,
    /// The time since the wait began.
    pub elapsed: Duration,
}

/// Where a wait stands at one reading. Its `Display` is what a timeout says it last saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stage {
    /// The manager has written no status yet.
    NoStatus,
    /// The manager has not acted on the written generation yet.
    Behind {
        /// The generation the write produced.
        generation: i64,
        /// `status.observedGeneration` (0: none).
        observed: i64,
    },
    /// No plan has started.
    NoActivePlan,
    /// A manual trigger's run has not started: another run is the active one.
    RunNotStarted {
        /// The triggered run.
        uid: String,
        /// The active plan.
        plan: String,
        /// The active run.
        run: String,
    },
    /// The active plan has no status yet.
    NoPlanStatus {
        /// The plan.
        plan: String,
    },
    /// The plan the write needs waits for the Instance's maintenance window (`spec.window`).
    AwaitingWindow {
        /// The plan.
        plan: String,
        /// When the window opens (RFC 3339).
        opens_at: String,
    },
    /// The plan runs (or ERROR: the manager retries it).
    Running(PlanAt),
    /// The plan ran to COMPLETE: the wait is over.
    Complete(PlanAt),
    /// The plan ended in FATAL_ERROR: the wait fails, [`PlanAt::step`] is where.
    Failed(PlanAt),
    /// `uninstall --wait`: the Instance still exists; its cleanup plan, once it has a status.
    Deleting {
        /// Where the cleanup plan stands.
        cleanup: Option<PlanAt>,
    },
    /// `uninstall --wait`: the Instance is gone, the wait is over.
    Gone,
}

/// A plan run and the step it is at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanAt {
    /// The plan.
    pub plan: String,
    /// Its status (PENDING when the status has none).
    pub status: ExecStatus,
    /// Its own message.
    pub message: Option<String>,
    /// The first step not COMPLETE; for a failed plan, where it failed. `None` when every step
    /// is COMPLETE, or the status names none.
    pub step: Option<StepAt>,
}

/// A step of a plan run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepAt {
    /// The phase.
    pub phase: String,
    /// The step (`None`: a failed phase that names no failed step).
    pub name: Option<String>,
    /// Its status (PENDING when the status has none).
    pub status: ExecStatus,
    /// Its message (a failed run: the most precise one of step, phase and plan).
    pub message: Option<String>,
}

impl Stage {
    /// Reads `inst` against `goal`: where its plan for the goal's generation stands is
    /// [`kudo_crd::plan::progress`], as the manager reads a KudoOperator child.
    pub fn of(inst: &Instance, goal: &Goal) -> Stage {
        let (active, plan, standing) = match plan::progress(inst.status.as_ref(), goal.generation) {
            Progress::NoStatus => return Stage::NoStatus,
            Progress::Behind { observed } => {
                return Stage::Behind {
                    generation: goal.generation,
                    observed,
                };
            }
            Progress::NoActivePlan => return Stage::NoActivePlan,
            Progress::AwaitingWindow { held } => {
                return Stage::AwaitingWindow {
                    plan: held.plan.clone(),
                    opens_at: held.opens_at.clone(),
                };
            }
            Progress::NoPlanStatus { active } => {
                return match not_our_run(goal, &active.name, &active.uid) {
                    Some(stage) => stage,
                    None => Stage::NoPlanStatus {
                        plan: active.name.clone(),
                    },
                };
            }
            Progress::Plan {
                active,
                status,
                standing,
            } => (active, status, standing),
        };
        if let Some(stage) = not_our_run(goal, &active.name, &active.uid) {
            return stage;
        }
        match standing {
            Standing::Complete => Stage::Complete(PlanAt::of(&active.name, plan)),
            Standing::Failed(f) => Stage::Failed(PlanAt::failed(&active.name, plan, f)),
            Standing::Retrying | Standing::Running => {
                Stage::Running(PlanAt::of(&active.name, plan))
            }
        }
    }

    /// The wait is over: the plan ran to COMPLETE or failed, or the Instance is gone.
    pub fn is_over(&self) -> bool {
        matches!(self, Stage::Complete(_) | Stage::Failed(_) | Stage::Gone)
    }
}

/// A manual trigger waits for its own run: any other is [`Stage::RunNotStarted`].
fn not_our_run(goal: &Goal, plan: &str, run: &str) -> Option<Stage> {
    let uid = goal.uid.as_ref()?;
    (uid != run).then(|| Stage::RunNotStarted {
        uid: uid.clone(),
        plan: plan.to_string(),
        run: run.to_string(),
    })
}

impl PlanAt {
    /// Plan `name` as `plan` reports it, at its first step not COMPLETE.
    fn of(name: &str, plan: &PlanStatus) -> PlanAt {
        let step = plan.phases.iter().find_map(|p| {
            let s = p
                .steps
                .iter()
                .find(|s| s.status != Some(ExecStatus::Complete))?;
            Some(StepAt {
                phase: p.name.clone(),
                name: Some(s.name.clone()),
                status: pending_or(&s.status),
                message: s.message.clone(),
            })
        });
        PlanAt {
            plan: name.to_string(),
            status: pending_or(&plan.status),
            message: plan.message.clone(),
            step,
        }
    }

    /// Plan `name`, failed as `failure` says.
    fn failed(name: &str, plan: &PlanStatus, failure: Failure) -> PlanAt {
        let Failure {
            phase,
            step,
            message,
        } = failure;
        let (message, step) = match phase {
            Some(phase) => (
                plan.message.clone(),
                Some(StepAt {
                    phase,
                    name: step,
                    status: ExecStatus::FatalError,
                    message: Some(message),
                }),
            ),
            None => (Some(message), None),
        };
        PlanAt {
            plan: name.to_string(),
            status: ExecStatus::FatalError,
            message,
            step,
        }
    }

    /// The most precise message: the step's, else the plan's.
    pub fn message(&self) -> Option<&str> {
        self.step
            .as_ref()
            .and_then(|s| s.message.as_deref())
            .or(self.message.as_deref())
    }
}

/// A status as `--wait` reports it: an absent one is PENDING.
fn pending_or(status: &Option<ExecStatus>) -> ExecStatus {
    status.clone().unwrap_or(ExecStatus::Pending)
}

impl fmt::Display for Stage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Stage::NoStatus => f.write_str("the manager has not reported a status yet"),
            Stage::Behind {
                generation,
                observed,
            } => write!(
                f,
                "the manager has not acted on generation {generation} yet (observed generation \
                 {observed})"
            ),
            Stage::NoActivePlan => f.write_str("no plan has started"),
            Stage::RunNotStarted { uid, plan, run } => write!(
                f,
                "the triggered run {uid} has not started (active: plan {plan} run {run})"
            ),
            Stage::NoPlanStatus { plan } => write!(f, "plan {plan} has no status yet"),
            Stage::AwaitingWindow { plan, opens_at } => write!(
                f,
                "plan {plan} waits for the maintenance window, which opens at {opens_at}"
            ),
            Stage::Running(at) | Stage::Complete(at) | Stage::Failed(at) => at.fmt(f),
            Stage::Deleting { cleanup: None } => f.write_str("it still exists"),
            Stage::Deleting { cleanup: Some(at) } => {
                write!(f, "it still exists, plan {} is {}", at.plan, at.status)
            }
            Stage::Gone => f.write_str("it is gone"),
        }
    }
}

/// `plan P is S (phase P, step S STATUS: message)`.
impl fmt::Display for PlanAt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "plan {} is {}", self.plan, self.status)?;
        if let Some(s) = &self.step {
            write!(f, " (phase {}", s.phase)?;
            if let Some(name) = &s.name {
                write!(f, ", step {name}")?;
            }
            write!(f, " {}", s.status)?;
            if let Some(m) = &s.message {
                write!(f, ": {m}")?;
            }
            f.write_str(")")?;
        }
        Ok(())
    }
}

/// With `o` (`--wait`), waits for the plan the write that produced `generation` started, and
/// returns it; `None` without `--wait` or when nothing was written. Each reading goes to
/// `watch`.
pub async fn after_write(
    t: &Target,
    name: &str,
    generation: Option<i64>,
    o: Option<Options>,
    watch: &mut dyn FnMut(&Reading<'_>),
) -> Result<Option<String>> {
    let (Some(o), Some(generation)) = (o, generation) else {
        return Ok(None);
    };
    let goal = Goal {
        generation,
        uid: None,
    };
    plan_done(t, name, &goal, &o, watch).await.map(Some)
}

/// Polls Instance `name` until its plan for `goal` is [`Stage::Complete`] (returns the plan)
/// or [`Stage::Failed`] (an [`Error::PlanFailed`]), or the time runs out ([`Error::Timeout`]).
/// Each reading goes to `watch`.
pub async fn plan_done(
    t: &Target,
    name: &str,
    goal: &Goal,
    o: &Options,
    watch: &mut dyn FnMut(&Reading<'_>),
) -> Result<String> {
    let start = tokio::time::Instant::now();
    let what = format!("Instance {}/{name} to run its plan", t.namespace);
    loop {
        let inst = t.instance(name).await?;
        let stage = Stage::of(&inst, goal);
        watch(&reading(name, &stage, start));
        match stage {
            Stage::Complete(at) => return Ok(at.plan),
            Stage::Failed(at) => {
                let message = at.message().unwrap_or("no message").to_string();
                let (phase, step) = match at.step {
                    Some(s) => (Some(s.phase), s.name),
                    None => (None, None),
                };
                return Err(Error::PlanFailed {
                    instance: format!("{}/{name}", t.namespace),
                    plan: at.plan,
                    phase,
                    step,
                    message,
                });
            }
            stage => sleep_or_time_out(start, o, &what, &stage).await?,
        }
    }
}

/// Polls Instance `name` until its active plan is COMPLETE or FATAL_ERROR, and returns it
/// (`kudo plan status --wait`). Each reading goes to `watch`.
pub async fn plan_terminal(
    t: &Target,
    name: &str,
    o: &Options,
    watch: &mut dyn FnMut(&Reading<'_>),
) -> Result<Instance> {
    let start = tokio::time::Instant::now();
    let what = format!("the active plan of Instance {}/{name} to end", t.namespace);
    let any = Goal {
        generation: 0,
        uid: None,
    };
    loop {
        let inst = t.instance(name).await?;
        let stage = Stage::of(&inst, &any);
        watch(&reading(name, &stage, start));
        if stage.is_over() {
            return Ok(inst);
        }
        sleep_or_time_out(start, o, &what, &stage).await?;
    }
}

/// Polls until Instance `name` is gone (`kudo uninstall --wait`: the cleanup plan ran and the
/// finalizer was removed). Each reading goes to `watch`: [`Stage::Deleting`], then
/// [`Stage::Gone`].
pub async fn gone(
    t: &Target,
    name: &str,
    o: &Options,
    watch: &mut dyn FnMut(&Reading<'_>),
) -> Result<()> {
    let start = tokio::time::Instant::now();
    let what = format!("Instance {}/{name} to be deleted", t.namespace);
    loop {
        let Some(inst) = t
            .instances()
            .get_opt(name)
            .await
            .map_err(t.api("get", "Instance", name))?
        else {
            watch(&reading(name, &Stage::Gone, start));
            return Ok(());
        };
        let cleanup = inst
            .status
            .as_ref()
            .and_then(|s| s.plan_status.get(plan::CLEANUP))
            .map(|p| PlanAt::of(plan::CLEANUP, p));
        let stage = Stage::Deleting { cleanup };
        watch(&reading(name, &stage, start));
        sleep_or_time_out(start, o, &what, &stage).await?;
    }
}

fn reading<'a>(instance: &'a str, stage: &'a Stage, start: tokio::time::Instant) -> Reading<'a> {
    Reading {
        instance,
        stage,
        elapsed: start.elapsed(),
    }
}

/// Sleeps one [`Options::interval`] (no longer than the time left), or fails with
/// [`Error::Timeout`] naming `what` and the `last` reading once [`Options::timeout`] has passed
/// since `start`. Every `--wait` loop's pace, an Instance's or a Rollout's.
pub(crate) async fn sleep_or_time_out(
    start: tokio::time::Instant,
    o: &Options,
    what: &str,
    last: &dyn fmt::Display,
) -> Result<()> {
    let waited = start.elapsed();
    if waited >= o.timeout {
        return Err(Error::Timeout {
            waited: o.timeout,
            what: what.to_string(),
            last: last.to_string(),
        });
    }
    tokio::time::sleep(o.interval.min(o.timeout - waited)).await;
    Ok(())
}
