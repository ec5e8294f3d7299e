//! Which plan run an Instance needs, which one it has in progress, and whether a write may
//! supersede that run: pure decisions over the Instance's plan state, passed in as data
//! ([`PlanState`]; `kudo_crd::baseline::plan_state` reads it from an Instance).
//!
//! A plan starts when the Instance differs from what the manager last acted on ([`Applied`]):
//! 1. never applied: `deploy`;
//! 2. a new `spec.planExecution.uid`: `spec.planExecution.planName` (`kudo plan trigger`);
//! 3. another OperatorVersion: [`change::upgrade_plan`] (`upgrade`, else `update`, else
//!    `deploy`);
//! 4. other effective parameters: the plan [`change::update`] decides (the same function the
//!    CLI and the admission webhook call).
//!
//! "A plan is in progress, `--force` supersedes it" is one rule, [`supersede`]: the CLI, the
//! webhooks and the policy's own refusals ([`change::Installed::in_progress`]) read it.

use kudo_diag::Diagnostic;
use serde_json::Value;

use crate::change::{self, Installed, Proposal, Version};
use crate::trigger;

/// What an Instance's spec asks for, as run selection reads it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Spec<'a> {
    /// `metadata.generation`.
    pub generation: Option<i64>,
    /// The OperatorVersion it names.
    pub operator_version: Option<String>,
    /// `spec.planExecution`, when it names both a plan and a run uid.
    pub trigger: Option<Trigger<'a>>,
    /// `spec.parameters` as stored.
    pub parameters: Option<&'a Value>,
    /// `spec.immutableDefaults`.
    pub kept: Option<&'a Value>,
}

/// A direct trigger of a plan (`spec.planExecution`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Trigger<'a> {
    /// The plan.
    pub plan: &'a str,
    /// The run's id.
    pub uid: &'a str,
}

/// What the manager last acted on (`status.applied`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Applied<'a> {
    /// The OperatorVersion it ran.
    pub operator_version: Option<&'a str>,
    /// The effective parameters its plan ran with.
    pub parameters: Option<&'a Value>,
    /// The `spec.planExecution.uid` it ran last.
    pub trigger_uid: Option<&'a str>,
}

/// The active plan run (`status.activePlan`) and whether its status is terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Active<'a> {
    /// The plan.
    pub plan: &'a str,
    /// The run's id.
    pub uid: &'a str,
    /// Its status is COMPLETE or FATAL_ERROR (`kudo_crd::plan::judge`).
    pub over: bool,
}

/// What an Instance's status says of its runs.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Status<'a> {
    /// `status.applied`.
    pub applied: Option<Applied<'a>>,
    /// The active plan, when it has a status.
    pub active: Option<Active<'a>>,
    /// The manager has acted on the spec's generation (`kudo_crd::plan::acted_on`).
    pub acted_on: bool,
}

/// An Instance's plan state, as the policy reads it: its spec, and its status when the manager
/// has written one.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PlanState<'a> {
    /// What the spec asks for.
    pub spec: Spec<'a>,
    /// What the status says.
    pub status: Option<Status<'a>>,
}

/// A plan to start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Start {
    /// The plan.
    pub plan: String,
    /// The run's id.
    pub uid: String,
    /// Why it starts (for events and logs).
    pub reason: String,
}

/// Why no plan can start.
#[derive(Debug, Clone, PartialEq)]
pub enum Refusal {
    /// `spec.planExecution.planName` names no plan of the operator.
    UnknownPlan(String),
    /// The parameter change is refused by [`change::update`] (two plans, an immutable value:
    /// the webhook refuses these; without it, they can land).
    Refused(Vec<Diagnostic>),
}

/// The plan the Instance whose spec is `spec` needs now, given its effective parameters
/// `effective` and what the manager last acted on (`applied`); `None` when it is as the manager
/// last left it. The one place the manager runs the policy for a write.
pub fn select(
    spec: &Spec<'_>,
    applied: Option<&Applied<'_>>,
    version: &Version,
    effective: &Value,
) -> Result<Option<Start>, Refusal> {
    let Some(applied) = applied else {
        return Ok(Some(start(spec, "deploy", "first deployment".into())));
    };
    if let Some(triggered) = triggered(spec, applied, version)? {
        return Ok(Some(triggered));
    }
    if let Some(upgrade) = upgraded(spec, applied, version)? {
        return Ok(Some(upgrade));
    }
    let before = applied.parameters.cloned().unwrap_or(Value::Null);
    if &before == effective {
        return Ok(None);
    }
    let installed = Installed::at_rest(version, &before);
    let decision =
        change::update(&installed, Proposal::Values(effective)).map_err(Refusal::Refused)?;
    Ok(decision
        .plan
        .map(|plan| changed(spec, &plan, &decision.changes)))
}

/// A run of `plan` for the spec's generation.
fn start(spec: &Spec<'_>, plan: &str, reason: String) -> Start {
    let generation = spec.generation.unwrap_or(0);
    Start {
        plan: plan.to_string(),
        uid: format!("{plan}-g{generation}"),
        reason,
    }
}

/// The run a parameter change starts, naming what changed.
fn changed(spec: &Spec<'_>, plan: &str, changes: &[trigger::ValueChange]) -> Start {
    let paths: Vec<&str> = changes.iter().map(|c| c.pointer.as_str()).collect();
    start(
        spec,
        plan,
        format!("parameters changed: {}", paths.join(", ")),
    )
}

/// A new `spec.planExecution.uid`: the plan it names.
fn triggered(
    spec: &Spec<'_>,
    applied: &Applied<'_>,
    version: &Version,
) -> Result<Option<Start>, Refusal> {
    let Some(t) = spec.trigger else {
        return Ok(None);
    };
    if applied.trigger_uid == Some(t.uid) {
        return Ok(None);
    }
    if !version.has_plan(t.plan) {
        return Err(Refusal::UnknownPlan(t.plan.to_string()));
    }
    Ok(Some(Start {
        plan: t.plan.to_string(),
        uid: t.uid.to_string(),
        reason: format!("plan `{}` triggered", t.plan),
    }))
}

/// Another OperatorVersion: its upgrade plan.
fn upgraded(
    spec: &Spec<'_>,
    applied: &Applied<'_>,
    version: &Version,
) -> Result<Option<Start>, Refusal> {
    let ov = spec.operator_version.as_deref();
    // The same version named the other way (`zookeeper-0.3.3`, then `zookeeper-3.6.2-0.3.3`)
    // is no upgrade: the webhook decides it as an update too.
    let same = applied
        .operator_version
        .is_some_and(|a| version.answers_to(a));
    if ov == applied.operator_version || same {
        return Ok(None);
    }
    let Some(plan) = change::upgrade_plan(version) else {
        return Err(Refusal::UnknownPlan(change::UPGRADE.into()));
    };
    let reason = format!(
        "upgrade from {} to {}",
        applied.operator_version.unwrap_or("?"),
        ov.unwrap_or("?")
    );
    Ok(Some(start(spec, plan, reason)))
}

/// A run an Instance has scheduled or running.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Running {
    /// The plan.
    pub plan: String,
    /// The run's id (`status.activePlan.uid`, or the one the manager will give it).
    pub uid: String,
}

/// The run an Instance has scheduled or running, as the admission rules see it
/// ([`change::Installed::in_progress`]):
/// - the active plan, while its status is not terminal (COMPLETE or FATAL_ERROR);
/// - else, when the manager has acted on the Instance before but not yet on its latest spec,
///   the plan that spec will start.
///
/// An Instance the manager has never written a status for has nothing in progress: its
/// `deploy` starts from whatever spec it finds.
///
/// The plan a pending spec will start is chosen by [`trigger::select`] alone, without running
/// the whole policy again: the write that stored the spec was decided already.
pub fn running(state: &PlanState<'_>, version: &Version) -> Option<Running> {
    let status = state.status.as_ref()?;
    if let Some(active) = status.active
        && !active.over
    {
        return Some(Running {
            plan: active.plan.to_string(),
            uid: active.uid.to_string(),
        });
    }
    state.spec.generation?;
    let applied = status.applied.as_ref()?;
    if status.acted_on {
        return None;
    }
    let start = pending(&state.spec, applied, version)?;
    Some(Running {
        plan: start.plan,
        uid: start.uid,
    })
}

/// The run the manager will start for `spec`, which it has not acted on yet.
fn pending(spec: &Spec<'_>, applied: &Applied<'_>, version: &Version) -> Option<Start> {
    let given = spec.parameters.cloned().unwrap_or_default();
    let (values, _) = version.effective_kept(&given, spec.kept);
    // Secrets are not in the spec (nor readable here): they count as unchanged.
    let recorded = applied.parameters.cloned().unwrap_or_default();
    let effective = crate::secrets::carried(&version.schema, &recorded, values.value());
    if let Some(s) = triggered(spec, applied, version).ok()? {
        return Some(s);
    }
    if let Some(s) = upgraded(spec, applied, version).ok()? {
        return Some(s);
    }
    let before = applied.parameters.cloned().unwrap_or(Value::Null);
    if before == effective {
        return None;
    }
    let (old, _) = version.effective_kept(&before, None);
    let (new, _) = version.effective_kept(&effective, None);
    let plans = version.plan_names();
    let selection = trigger::select(&version.schema, &plans, old.value(), new.value()).ok()?;
    selection
        .plan
        .map(|plan| changed(spec, &plan, &selection.changes))
}

/// The plan of [`running`].
pub fn in_progress(state: &PlanState<'_>, version: &Version) -> Option<String> {
    running(state, version).map(|r| r.plan)
}

/// Whether a write supersedes the run in progress.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Force<'a> {
    /// It does not: the run blocks it.
    No,
    /// `--force`: whatever runs now (the CLI, which then names that run in the write).
    Any,
    /// The write names the run it supersedes (the `kudo.dev/supersede` annotation): only that
    /// very run. A stale name, of a run that is over, lets nothing through.
    Named(&'a str),
}

/// What a write does with the run in progress ([`supersede`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Supersession {
    /// The plan that blocks the write ([`change::Installed::in_progress`]).
    pub blocking: Option<String>,
    /// The run the write supersedes, which it names (`kudo.dev/supersede`).
    pub superseded: Option<Running>,
}

/// "A plan is in progress, `--force` supersedes it": the run in progress (`run`, from
/// [`running`]) blocks the write unless `force` supersedes it.
pub fn supersede(run: Option<Running>, force: Force<'_>) -> Supersession {
    let Some(run) = run else {
        return Supersession::default();
    };
    let forced = match force {
        Force::No => false,
        Force::Any => true,
        Force::Named(uid) => uid == run.uid,
    };
    if forced {
        Supersession {
            blocking: None,
            superseded: Some(run),
        }
    } else {
        Supersession {
            blocking: Some(run.plan),
            superseded: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deploy() -> Running {
        Running {
            plan: "deploy".into(),
            uid: "deploy-g1".into(),
        }
    }

    #[test]
    fn a_run_in_progress_blocks_unless_the_write_supersedes_it() {
        let blocked = Supersession {
            blocking: Some("deploy".into()),
            superseded: None,
        };
        let superseded = Supersession {
            blocking: None,
            superseded: Some(deploy()),
        };
        let cases: &[(Option<Running>, Force<'_>, Supersession)] = &[
            (None, Force::No, Supersession::default()),
            (None, Force::Any, Supersession::default()),
            (Some(deploy()), Force::No, blocked.clone()),
            (Some(deploy()), Force::Any, superseded.clone()),
            (Some(deploy()), Force::Named("deploy-g1"), superseded),
            (Some(deploy()), Force::Named("deploy-g0"), blocked), // stale
        ];
        for (run, force, want) in cases {
            assert_eq!(&supersede(run.clone(), *force), want, "{run:?} {force:?}");
        }
    }
}
