//! Remediation of a failed change (`spec.remediation`, or `--rollback-on-failure` for one
//! change: [`revision::remediation_for`]): when the active run ends FATAL_ERROR, or runs past
//! `timeout` without ending, the plan runs again up to `retries` times, then, with `onFailure:
//! rollback`, the Instance is rolled back to the last revision whose plan completed, through
//! the admission webhook like any rollback. Each action is an Event, the condition
//! `Remediated` and a revision. A rollback whose own plan fails stops remediation there: no
//! loop, and the condition says so.

use std::time::Duration;

use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::jiff::Timestamp;
use kube::ResourceExt;
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::events::EventType;
use kudo_pkg::Package;
use serde_json::Value;

use super::revisions::{self, Began};
use super::round::Round;
use crate::context::key;
use crate::status::set_condition;
use kudo_crd::common::{ExecStatus, OnFailure, Remediation, RemediationStatus};
use kudo_crd::labels;
use kudo_crd::revision;
use kudo_policy::run::{self, Force, Running, Start};

/// The condition remediation keeps.
pub(crate) const REMEDIATED: &str = "Remediated";

/// How long the active run has run, at `now` (both RFC 3339); `None` when unknown.
fn running_for(started: Option<&str>, now: &str) -> Option<Duration> {
    let (s, n) = (
        started?.parse::<Timestamp>().ok()?,
        now.parse::<Timestamp>().ok()?,
    );
    let d = n.duration_since(s);
    Duration::try_from(d).ok()
}

/// Remediates the active run when it failed (see the module docs). `values`: the values a
/// retry runs with (as [`Round::begin`] takes them). A retry started here is returned, for
/// its revision to say so.
pub(super) async fn check(round: &mut Round<'_>, pkg: &Package, values: &Value) -> Option<Began> {
    let inst = round.inst;
    // The run of a rollback remediation wrote: its failure is only said (no remediation of a
    // remediation), whatever policy applies to its own change.
    let rolling_back = round.status.remediation.as_ref().is_some_and(|r| {
        r.rollback_generation.is_some() && r.rollback_generation == inst.metadata.generation
    });
    let policy = match revision::remediation_for(inst) {
        Some(p) => p,
        None if rolling_back => Remediation::default(),
        None => return None,
    };
    let active = round.status.active_plan.clone()?;
    let ps = round.status.plan_status.get(&active.name)?;
    let status = ExecStatus::of(&ps.status).clone();
    let message = ps.message.clone().unwrap_or_default();
    let timeout = policy.timeout.as_deref().and_then(revision::parse_duration);
    let timed_out = !status.is_terminal()
        && timeout.is_some_and(|t| {
            running_for(active.started.as_deref(), &round.now).is_some_and(|d| d > t)
        });
    if status != ExecStatus::FatalError && !timed_out {
        return None;
    }
    let why = if timed_out {
        format!(
            "plan `{}` ran past its timeout of {}",
            active.name,
            policy.timeout.as_deref().unwrap_or_default()
        )
    } else {
        format!("plan `{}` failed: {message}", active.name)
    };
    let generation = inst.metadata.generation.unwrap_or_default();
    let rem = round
        .status
        .remediation
        .get_or_insert_with(RemediationStatus::default);
    // The rollback's own run failed: remediation stops here.
    if rem.rollback_generation == Some(generation) {
        let reported = round
            .status
            .conditions
            .iter()
            .any(|c| c.type_ == REMEDIATED && c.reason.as_deref() == Some("RollbackFailed"));
        if !reported {
            let text = format!(
                "the rollback to revision {} failed too ({why}); remediation stops here: fix the cause, then kudo rollback or kudo upgrade",
                rem.rolled_back_to.unwrap_or_default()
            );
            say(
                round,
                ("False", "RollbackFailed"),
                "stopped",
                "RemediationFailed",
                text,
            )
            .await;
        }
        return None;
    }
    if rem.generation != generation {
        *rem = RemediationStatus {
            generation,
            revision: active.revision,
            ..RemediationStatus::default()
        };
    }
    let retries = policy.retries.unwrap_or(0);
    if rem.retries < retries {
        rem.retries += 1;
        let n = rem.retries;
        let base = active.uid.split("-retry").next().unwrap_or(&active.uid);
        let start = Start {
            plan: active.name.clone(),
            uid: format!("{base}-retry{n}"),
            reason: format!("retry {n} of {retries}: {why}"),
        };
        let text = format!("retrying plan `{}` ({n} of {retries}): {why}", active.name);
        say(
            round,
            ("False", "Retrying"),
            "retry",
            "RemediationRetry",
            text,
        )
        .await;
        if let Some(number) = active.revision.filter(|_| timed_out) {
            revisions::superseded(round, number, &format!("retry {n} of {retries}")).await;
        }
        round.begin(pkg, values, &start).await;
        return Some(Began {
            reason: start.reason,
            changed: Vec::new(),
            remediated: Some(format!(
                "retry {n} of {retries} of revision {}",
                rem_revision(round)
            )),
            window: None,
        });
    }
    if policy.on_failure != Some(OnFailure::Rollback) {
        if !condition_reports(round, &["RetriesExhausted"], generation) {
            let text = format!("{why}; {retries} retries spent, and onFailure is none");
            say(
                round,
                ("False", "RetriesExhausted"),
                "stopped",
                "RemediationFailed",
                text,
            )
            .await;
        }
        return None;
    }
    rollback(round, &why).await;
    None
}

fn rem_revision(round: &Round<'_>) -> i64 {
    round
        .status
        .remediation
        .as_ref()
        .and_then(|r| r.revision)
        .unwrap_or_default()
}

/// What remediation did, said everywhere at once: the condition [`REMEDIATED`] (`condition`:
/// its value and reason, with `text`), the metric (`action`) and a Warning Event `event`.
async fn say(
    round: &mut Round<'_>,
    condition: (&str, &str),
    action: &str,
    event: &str,
    text: String,
) {
    let (ctx, inst) = (round.ctx, round.inst);
    let now = round.now.clone();
    let (value, reason) = condition;
    set_condition(
        &mut round.status,
        inst,
        REMEDIATED,
        value,
        reason,
        &text,
        &now,
    );
    ctx.metrics.remediated(action);
    ctx.event(inst, EventType::Warning, event, text).await;
}

/// Whether the condition [`REMEDIATED`] already reports one of `reasons` for `generation`.
fn condition_reports(round: &Round<'_>, reasons: &[&str], generation: i64) -> bool {
    round.status.conditions.iter().any(|c| {
        c.type_ == REMEDIATED
            && c.observed_generation == Some(generation)
            && c.reason.as_deref().is_some_and(|r| reasons.contains(&r))
    })
}

/// Rolls the Instance back to the last revision that completed before the failed one.
async fn rollback(round: &mut Round<'_>, why: &str) {
    let (ctx, inst) = (round.ctx, round.inst);
    let generation = inst.metadata.generation.unwrap_or_default();
    // Refused or impossible once for this change: said once, not tried at every reconcile.
    if condition_reports(round, &["RollbackRefused", "NoRevision"], generation) {
        return;
    }
    let Some(active) = round.status.active_plan.clone() else {
        return;
    };
    let ns = inst.namespace().unwrap_or_default();
    let api: Api<ControllerRevision> = Api::namespaced(ctx.client.clone(), &ns);
    let failed = active.revision.unwrap_or(i64::MAX);
    let all = match revisions::list(&api, inst).await {
        Ok(all) => all,
        Err(e) => {
            tracing::warn!(instance = %key(inst), error = %e, "cannot list revisions to roll back to");
            return;
        }
    };
    let Some(target) = revision::last_complete_before(&all, failed).cloned() else {
        let text =
            format!("{why}; no earlier revision completed, so there is nothing to roll back to");
        say(
            round,
            ("False", "NoRevision"),
            "stopped",
            "RemediationFailed",
            text,
        )
        .await;
        return;
    };
    let mut annotations = vec![(
        labels::ROLLBACK,
        revision::rollback_annotation(target.number, generation),
    )];
    // A run still in progress (a timed-out one) would block the rollback's write: the write
    // supersedes it as `--force` does, by the one rule the webhook checks it against.
    let running = round
        .status
        .plan_status
        .get(&active.name)
        .filter(|p| !ExecStatus::of(&p.status).is_terminal())
        .map(|_| Running {
            plan: active.name.clone(),
            uid: active.uid.clone(),
        });
    if let Some(superseded) = run::supersede(running, Force::Any).superseded {
        annotations.push((labels::SUPERSEDE, superseded.uid));
    }
    let ops = revision::restore_patch(inst, &target.record, &annotations);
    let sent = round
        .api
        .patch(
            &inst.name_any(),
            &PatchParams::default(),
            &Patch::<()>::Json(json_patch::Patch(ops)),
        )
        .await;
    match sent {
        Ok(written) => {
            let text = format!(
                "{why}; rolled back to revision {} (OperatorVersion {})",
                target.number,
                target
                    .record
                    .operator_version
                    .name
                    .clone()
                    .unwrap_or_default()
            );
            if let Some(rem) = round.status.remediation.as_mut() {
                rem.rolled_back_to = Some(target.number);
                rem.rollback_generation = written.metadata.generation;
            }
            tracing::warn!(instance = %key(inst), revision = target.number, %why, "rolled back");
            say(
                round,
                ("True", "RolledBack"),
                "rollback",
                "RolledBack",
                text,
            )
            .await;
        }
        Err(e) => {
            let text = format!(
                "{why}; the rollback to revision {} was refused: {}",
                target.number,
                crate::bounded::cut(&e.to_string(), crate::bounded::STATUS_MESSAGE)
            );
            say(
                round,
                ("False", "RollbackRefused"),
                "stopped",
                "RemediationFailed",
                text,
            )
            .await;
        }
    }
}
