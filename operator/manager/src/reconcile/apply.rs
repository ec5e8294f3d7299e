//! An Instance that is not being deleted: its effective values (its parameters, its Secrets'
//! values, the defaults), validated as the CLI validates them; the plan the change needs
//! ([`kudo_policy::run::select`]) started; the active plan advanced.

use kube::runtime::controller::Action;
use serde_json::Value;

use super::SecretsError;
use super::remediation;
use super::revisions::{self, Began};
use super::round::{self, Round};
use crate::context::Compiled;
use crate::error::Result;
use crate::images::Checked;
use crate::step::diagnostics;
use kudo_crd::baseline;
use kudo_crd::common::{ExecStatus, InstanceStatus};
use kudo_crd::window::Gate;
use kudo_policy::run::{self, Refusal};

/// Starts the plan the Instance needs now, if any, and advances the active plan. `given`:
/// the values the Instance gives (its parameters, its Secrets' values under them), or why its
/// Secrets cannot be read.
pub(super) async fn reconcile(
    mut round: Round<'_>,
    compiled: &Compiled,
    given: Result<Value, SecretsError>,
) -> Result<Action> {
    let (ctx, inst) = (round.ctx, round.inst);
    let (pkg, schema) = (compiled.pkg(), &compiled.version.schema);
    let given = match given {
        Ok(v) => v,
        Err(why) => {
            let after = ctx.settings.progress * 2;
            return round
                .not_ready("SecretMissing", &why.to_string(), after)
                .await;
        }
    };
    let (values, mut problems) = compiled
        .version
        .effective_kept(&given, inst.spec.immutable_defaults.as_ref());
    problems.extend(compiled.version.validator.validate(&values));
    let errors: Vec<String> = problems
        .iter()
        .filter(|d| d.is_error())
        .map(ToString::to_string)
        .collect();
    if !errors.is_empty() {
        let why = format!("invalid parameters: {}", errors.join("; "));
        let after = ctx.settings.resync;
        return round.not_ready("InvalidParameters", &why, after).await;
    }
    let values = values.into_value();
    // status.applied records secrets as digests: compared as the values they were, when
    // they did not change.
    let record = kudo_policy::secrets::digested(schema, &values, &ctx.digest_key);
    // What the last plan ran with: the status's copy, or its revision's (issue 49).
    let before = revisions::applied_values(&round, Some(&record)).await?;
    let mut seen = round.status.clone();
    if let Some(a) = seen.applied.as_mut() {
        a.parameters = before
            .as_ref()
            .map(|p| kudo_policy::secrets::revealed(schema, p, &values, &ctx.digest_key));
    }
    let mut began = None;
    let mut held = None;
    let applied = baseline::applied(&seen);
    match run::select(
        &baseline::spec(inst),
        applied.as_ref(),
        &compiled.version,
        &values,
    ) {
        // The run the status already holds, which its status write could not record as
        // applied (`status::RECORDED`): not started again, or it would run (and fail) again
        // each time it is looked at.
        Ok(Some(start))
            if round
                .status
                .active_plan
                .as_ref()
                .is_some_and(|a| a.uid == start.uid && a.name == start.plan) => {}
        Ok(Some(start)) => {
            let excused = match kudo_crd::window::gate(inst, &round.status, at(&round.now)) {
                Err(why) => {
                    let after = ctx.settings.resync;
                    return round.not_ready("InvalidWindow", &why, after).await;
                }
                Ok(Gate::Held(opens)) => {
                    held = Some(opens);
                    round.await_window(&start, opens).await;
                    None
                }
                Ok(Gate::Excused(why)) => Some(why.to_string()),
                Ok(Gate::Open) => None,
            };
            if held.is_none() {
                let window = excused.or_else(|| waited(&round.status, &start, &round.now));
                round.status.awaiting_window = None;
                began = Some(begin(&mut round, pkg, &record, before.as_ref(), start, window).await);
            }
        }
        Ok(None) => round.status.awaiting_window = None,
        Err(refusal) => {
            let why = match refusal {
                Refusal::UnknownPlan(p) => format!(
                    "spec.planExecution.planName names plan `{p}`, which the operator does not have"
                ),
                Refusal::Refused(d) => {
                    format!("the parameter change is refused: {}", diagnostics(&d))
                }
            };
            let after = ctx.settings.resync;
            return round.not_ready("NoPlan", &why, after).await;
        }
    }
    // Before the plan's first step, and before its revision records what runs: its images.
    if let Some(active) = round.status.active_plan.clone()
        && round::untouched_plan(&round.status, &active.name)
    {
        match crate::images::check(ctx, inst, &compiled.prepared, &values, &active.name).await {
            Checked::Pass => {}
            // The pinned Instance starts the plan (an annotation changes no generation: looked
            // at again rather than waiting for a watch event).
            Checked::Pinned => return Ok(Action::requeue(std::time::Duration::from_secs(1))),
            Checked::Held(outcome) => round.held = Some(outcome),
        }
    }
    round.status.observed_generation = inst.metadata.generation;
    revisions::sync(&mut round, compiled, began.as_ref()).await;
    if let Some(retry) = remediation::check(&mut round, pkg, &record).await {
        revisions::sync(&mut round, compiled, Some(&retry)).await;
    }
    let action = round.advance(&compiled.prepared, &values).await?;
    // Once the plan is COMPLETE: the drift of what it applied (crate::drift).
    let (api, status, now) = (&round.api, &mut round.status, round.now.as_str());
    let prepared = &compiled.prepared;
    let next = crate::drift::check(ctx, api, inst, status, prepared, &values, now).await?;
    let next = match held {
        None => next,
        // Looked at again a second after the window opens, and as often as the plan in
        // progress (or drift) needs meanwhile.
        Some(opens) => {
            let wait = std::time::Duration::try_from(opens.duration_since(at(&round.now)))
                .unwrap_or_default()
                + std::time::Duration::from_secs(1);
            let other = if running(&round.status) {
                ctx.settings.progress
            } else {
                next.unwrap_or(ctx.settings.resync)
            };
            Some(wait.min(other))
        }
    };
    Ok(next.map_or(action, |due| Action::requeue(due.min(ctx.settings.resync))))
}

/// Starts `start` (the plan a change needs) with the values it runs with, `record` (`before`:
/// those of the last run): the run it replaces, if one had not ended, is recorded as
/// superseded. `window` says what the
/// maintenance window did to it (the revision records it).
async fn begin(
    round: &mut Round<'_>,
    pkg: &kudo_pkg::Package,
    record: &Value,
    before: Option<&Value>,
    start: run::Start,
    window: Option<String>,
) -> Began {
    let previous = round.status.active_plan.clone();
    let changed = match before {
        Some(before) => kudo_policy::trigger::changed_paths(before, record)
            .into_iter()
            .map(|p| p.to_string())
            .collect(),
        None => Vec::new(),
    };
    round.begin(pkg, record, &start).await;
    // The run this one replaces ended without ending: its revision says so.
    if let Some(p) = previous
        && let Some(number) = p.revision
        && !p
            .revision_status
            .as_ref()
            .is_some_and(ExecStatus::is_terminal)
    {
        let by = format!("plan `{}` ({})", start.plan, start.uid);
        revisions::superseded(round, number, &by).await;
    }
    Began {
        reason: start.reason,
        changed,
        remediated: None,
        window,
    }
}

/// What the revision of `start` says about the window it waited for (`status.awaitingWindow`
/// held this very run), now that it starts at `now`.
fn waited(status: &InstanceStatus, start: &run::Start, now: &str) -> Option<String> {
    status
        .awaiting_window
        .as_ref()
        .filter(|w| w.uid == start.uid)
        .map(|w| {
            format!(
                "waited for the maintenance window from {} until {now}",
                w.since
            )
        })
}

/// The reconcile's time (RFC 3339) as a timestamp.
fn at(now: &str) -> jiff::Timestamp {
    now.parse().unwrap_or_else(|_| jiff::Timestamp::now())
}

/// Whether the active plan is still running (not COMPLETE, not FATAL_ERROR).
fn running(status: &InstanceStatus) -> bool {
    status.active_plan.as_ref().is_some_and(|a| {
        status
            .plan_status
            .get(&a.name)
            .is_none_or(|p| !kudo_crd::plan::judge(p).is_over())
    })
}
