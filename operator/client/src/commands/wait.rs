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
//! the wait goes on. [`judge`] is that decision on one reading (where the plan stands is
//! [`kudo_crd::plan::judge`], as the manager reads it); the loops around it poll with GET every
//! [`Options::interval`].

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

/// One reading of the Instance against a goal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Judgement {
    /// The plan ran to COMPLETE.
    Complete {
        /// The plan.
        plan: String,
    },
    /// The plan ended in FATAL_ERROR.
    Failed {
        /// The plan.
        plan: String,
        /// The failed phase, when the status names one.
        phase: Option<String>,
        /// The failed step, when the status names one.
        step: Option<String>,
        /// The message of the step (else the phase, else the plan).
        message: String,
    },
    /// Not there yet: what is seen now.
    Waiting(String),
}

/// Judges one reading of `inst` against `goal`: where its plan for the goal's generation
/// stands is [`kudo_crd::plan::progress`], as the manager reads a KudoOperator child.
pub fn judge(inst: &Instance, goal: &Goal) -> Judgement {
    let (active, run) = match plan::progress(inst.status.as_ref(), goal.generation) {
        Progress::NoStatus => {
            return Judgement::Waiting("the manager has not reported a status yet".into());
        }
        Progress::Behind { observed } => {
            return Judgement::Waiting(format!(
                "the manager has not acted on generation {} yet (observed generation {observed})",
                goal.generation
            ));
        }
        Progress::NoActivePlan => return Judgement::Waiting("no plan has started".into()),
        Progress::NoPlanStatus { active } => (active, None),
        Progress::Plan {
            active,
            status,
            standing,
        } => (active, Some((status, standing))),
    };
    if let Some(uid) = &goal.uid
        && &active.uid != uid
    {
        return Judgement::Waiting(format!(
            "the triggered run {uid} has not started (active: plan {} run {})",
            active.name, active.uid
        ));
    }
    let Some((plan, standing)) = run else {
        return Judgement::Waiting(format!("plan {} has no status yet", active.name));
    };
    match standing {
        Standing::Complete => Judgement::Complete {
            plan: active.name.clone(),
        },
        Standing::Failed(Failure {
            phase,
            step,
            message,
        }) => Judgement::Failed {
            plan: active.name.clone(),
            phase,
            step,
            message,
        },
        Standing::Retrying | Standing::Running => Judgement::Waiting(format!(
            "plan {} is {}{}",
            active.name,
            pending_or(&plan.status),
            where_now(plan)
        )),
    }
}

/// A status as `--wait` reports it: an absent one is PENDING.
fn pending_or(status: &Option<ExecStatus>) -> &str {
    status.as_ref().map_or("PENDING", ExecStatus::as_str)
}

/// ` (phase P, step S: message)` for the first step that is not COMPLETE.
fn where_now(plan: &PlanStatus) -> String {
    for p in &plan.phases {
        for s in &p.steps {
            if s.status != Some(ExecStatus::Complete) {
                let msg = s
                    .message
                    .as_deref()
                    .map(|m| format!(": {m}"))
                    .unwrap_or_default();
                return format!(
                    " (phase {}, step {} {}{msg})",
                    p.name,
                    s.name,
                    pending_or(&s.status)
                );
            }
        }
    }
    String::new()
}

/// With `o` (`--wait`), waits for the plan the write that produced `generation` started, and
/// returns it; `None` without `--wait` or when nothing was written.
pub async fn after_write(
    t: &Target,
    name: &str,
    generation: Option<i64>,
    o: Option<Options>,
) -> Result<Option<String>> {
    let (Some(o), Some(generation)) = (o, generation) else {
        return Ok(None);
    };
    let goal = Goal {
        generation,
        uid: None,
    };
    plan_done(t, name, &goal, &o).await.map(Some)
}

/// Polls Instance `name` until [`judge`] says Complete (returns the plan) or Failed (an
/// [`Error::PlanFailed`]), or the time runs out ([`Error::Timeout`]).
pub async fn plan_done(t: &Target, name: &str, goal: &Goal, o: &Options) -> Result<String> {
    let start = tokio::time::Instant::now();
    let what = format!("Instance {}/{name} to run its plan", t.namespace);
    loop {
        let inst = t.instance(name).await?;
        let last = match judge(&inst, goal) {
            Judgement::Complete { plan } => return Ok(plan),
            Judgement::Failed {
                plan,
                phase,
                step,
                message,
            } => {
                return Err(Error::PlanFailed {
                    instance: format!("{}/{name}", t.namespace),
                    plan,
                    phase,
                    step,
                    message,
                });
            }
            Judgement::Waiting(last) => last,
        };
        sleep_or_time_out(start, o, &what, last).await?;
    }
}

/// Polls Instance `name` until its active plan is COMPLETE or FATAL_ERROR, and returns it
/// (`kudo plan status --wait`).
pub async fn plan_terminal(t: &Target, name: &str, o: &Options) -> Result<Instance> {
    let start = tokio::time::Instant::now();
    let what = format!("the active plan of Instance {}/{name} to end", t.namespace);
    let any = Goal {
        generation: 0,
        uid: None,
    };
    loop {
        let inst = t.instance(name).await?;
        let last = match judge(&inst, &any) {
            Judgement::Complete { .. } | Judgement::Failed { .. } => return Ok(inst),
            Judgement::Waiting(last) => last,
        };
        sleep_or_time_out(start, o, &what, last).await?;
    }
}

/// Polls until Instance `name` is gone (`kudo uninstall --wait`: the cleanup plan ran and the
/// finalizer was removed).
pub async fn gone(t: &Target, name: &str, o: &Options) -> Result<()> {
    let start = tokio::time::Instant::now();
    let what = format!("Instance {}/{name} to be deleted", t.namespace);
    loop {
        let Some(inst) = t
            .instances()
            .get_opt(name)
            .await
            .map_err(t.api("get", "Instance", name))?
        else {
            return Ok(());
        };
        let last = match inst
            .status
            .as_ref()
            .and_then(|s| s.plan_status.get("cleanup"))
        {
            Some(p) => format!("it still exists, plan cleanup is {}", pending_or(&p.status)),
            None => "it still exists".into(),
        };
        sleep_or_time_out(start, o, &what, last).await?;
    }
}

async fn sleep_or_time_out(
    start: tokio::time::Instant,
    o: &Options,
    what: &str,
    last: String,
) -> Result<()> {
    let waited = start.elapsed();
    if waited >= o.timeout {
        return Err(Error::Timeout {
            waited: o.timeout,
            what: what.to_string(),
            last,
        });
    }
    tokio::time::sleep(o.interval.min(o.timeout - waited)).await;
    Ok(())
}
