//! The revision of each run ([`kudo_crd::revision`]): recorded when the run has none yet (so a
//! manager that restarts, or a status write that failed, records it once), its plan's outcome
//! written to it as the plan moves, and the revisions past `spec.historyLimit` deleted with
//! the parameter Secrets only they named.
//!
//! Revisions are the manager's own bookkeeping, written with its own identity (as the
//! Instance's status is); the Secrets of kudo's that a pruned revision releases are deleted as
//! the Instance's ServiceAccount, which may write the Secrets of its namespace (the manager
//! itself may read or delete none).

use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::Secret;
use kube::ResourceExt;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::runtime::events::EventType;
use serde_json::Value;

use super::round::Round;
use crate::bounded;
use crate::context::{Compiled, Context, key};
use kudo_crd::common::{DEFAULT_HISTORY_LIMIT, ExecStatus, InstanceStatus};
use kudo_crd::labels;
use kudo_crd::revision::{self, Record, Revision};
use kudo_crd::v1beta2::Instance;

/// What the run that just started was started for: the reason and the changed pointers,
/// known only where it starts ([`Round::begin`]).
#[derive(Debug, Clone, Default)]
pub(super) struct Began {
    /// Why it runs.
    pub reason: String,
    /// The effective values' pointers that changed (a secret's too: never a value).
    pub changed: Vec<String>,
    /// Set when remediation started it (a retry), saying so.
    pub remediated: Option<String>,
    /// What the maintenance window did to it ([`kudo_crd::revision::Record::window`]).
    pub window: Option<String>,
}

/// The status a revision shows for a plan's status: a run that has not ended (ERROR is
/// retried) is IN_PROGRESS.
fn shown(status: &ExecStatus) -> ExecStatus {
    match status {
        ExecStatus::Complete | ExecStatus::FatalError => status.clone(),
        _ => ExecStatus::InProgress,
    }
}

/// The revisions of `inst`, oldest first (a ControllerRevision kudo cannot read is skipped).
pub(crate) async fn list(
    api: &Api<ControllerRevision>,
    inst: &Instance,
) -> kube::Result<Vec<Revision>> {
    let lp = ListParams::default().labels(&revision::selector(&inst.name_any()));
    let items = api.list(&lp).await?.items;
    let (good, bad) = revision::read_all(&items);
    for b in bad {
        tracing::warn!(instance = %key(inst), error = %b, "skipped");
    }
    Ok(good)
}

/// Records the active run's revision when it has none yet, and writes its plan's status to it
/// when that moved. `began`: what [`Round::begin`] knew of the run, when it began in this
/// reconcile. Failures are logged and published, never fatal: the plan runs, and the next
/// reconcile tries again.
pub(super) async fn sync(round: &mut Round<'_>, compiled: &Compiled, began: Option<&Began>) {
    let (ctx, inst) = (round.ctx, round.inst);
    let Some(active) = round.status.active_plan.clone() else {
        return;
    };
    let ns = inst.namespace().unwrap_or_default();
    let api: Api<ControllerRevision> = Api::namespaced(ctx.client.clone(), &ns);
    let ps = round.status.plan_status.get(&active.name);
    let ended = ps.is_some_and(|p| ExecStatus::of(&p.status).is_terminal());
    let mut written = active.revision_status.clone();
    let number = match active.revision {
        Some(n) => n,
        // A run that ended before this manager recorded revisions (an upgrade of kudo): what
        // started it is not known any more, so it has none.
        None if ended && began.is_none() => return,
        None => match record(round, &api, compiled, began).await {
            Ok((n, holds_values)) => {
                // Written IN_PROGRESS (or found, with what it says unknown here).
                written = Some(ExecStatus::InProgress);
                // The revision holds the values: the status refers to it instead of
                // carrying a second copy (issue 49).
                if holds_values && let Some(a) = round.status.applied.as_mut() {
                    a.revision = Some(n);
                    a.parameters = None;
                }
                n
            }
            Err(e) => {
                let why = format!(
                    "cannot record the revision of run {} (plan `{}`): {e}",
                    active.uid, active.name
                );
                tracing::warn!(instance = %key(inst), %why, "revision");
                ctx.event(inst, EventType::Warning, "RevisionNotRecorded", why)
                    .await;
                return;
            }
        },
    };
    if let Some(a) = round.status.active_plan.as_mut() {
        a.revision = Some(number);
        a.revision_status = written;
    }
    settle(ctx, inst, &mut round.status).await;
}

/// Writes the active run's plan status to its revision when that moved since it was last
/// written, and records in `status` that it did. Called by [`sync`] and, before the status
/// says a plan ended, by [`Round::advance`]: `kudo history` never shows a run in progress
/// that the Instance says ended.
pub(super) async fn settle(ctx: &Context, inst: &Instance, status: &mut InstanceStatus) {
    let Some(active) = status.active_plan.as_ref() else {
        return;
    };
    let Some(number) = active.revision else {
        return;
    };
    let ps = status.plan_status.get(&active.name);
    let now = shown(ExecStatus::of(&ps.and_then(|p| p.status.clone())));
    if active.revision_status.as_ref() == Some(&now) {
        return;
    }
    let message = ps.and_then(|p| p.message.clone());
    let api: Api<ControllerRevision> =
        Api::namespaced(ctx.client.clone(), &inst.namespace().unwrap_or_default());
    if outcome(&api, inst, number, &now, message.as_deref()).await
        && let Some(a) = status.active_plan.as_mut()
    {
        a.revision_status = Some(now);
    }
}

/// Writes how revision `number`'s plan stands (`status`, `message`) to it; false when it could
/// not (logged).
async fn outcome(
    api: &Api<ControllerRevision>,
    inst: &Instance,
    number: i64,
    status: &ExecStatus,
    message: Option<&str>,
) -> bool {
    let name = revision::name(&inst.name_any(), number);
    let patch = revision::outcome(status, message, bounded::STATUS_MESSAGE);
    match api
        .patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
    {
        Ok(_) => true,
        Err(e) => {
            tracing::warn!(instance = %key(inst), revision = %name, error = %e, "cannot write the revision's outcome");
            false
        }
    }
}

/// Marks revision `number` as superseded by `by` (its run ended without ending: another
/// change replaced it).
pub(super) async fn superseded(round: &Round<'_>, number: i64, by: &str) {
    let (ctx, inst) = (round.ctx, round.inst);
    let ns = inst.namespace().unwrap_or_default();
    let api: Api<ControllerRevision> = Api::namespaced(ctx.client.clone(), &ns);
    let message = format!("superseded by {by}");
    outcome(&api, inst, number, &ExecStatus::Error, Some(&message)).await;
}

/// Creates the active run's revision (or finds the one an earlier reconcile created), then
/// prunes past `spec.historyLimit`. Its number, and whether it holds the effective values the
/// run started with ([`Record::applied`]; one an older manager recorded does not).
async fn record(
    round: &Round<'_>,
    api: &Api<ControllerRevision>,
    compiled: &Compiled,
    began: Option<&Began>,
) -> kube::Result<(i64, bool)> {
    let (ctx, inst) = (round.ctx, round.inst);
    let active = round.status.active_plan.clone().unwrap_or_default();
    let applied = round
        .status
        .applied
        .as_ref()
        .and_then(|a| a.parameters.clone());
    // The revisions are listed only when the status cannot say what comes next: a LIST by
    // label reads every ControllerRevision of the namespace from etcd, so one per new
    // Instance made a deploy of N Instances in a namespace cost N² reads (issue 49).
    let unlisted = unlisted_next(round);
    // Whether `revisions` holds what the API server lists (else only what is written here).
    let mut listed = unlisted.is_none();
    let mut revisions = match unlisted {
        Some(_) => Vec::new(),
        None => {
            let revisions = list(api, inst).await?;
            if let Some(r) = revision::of_run(&revisions, &active.uid) {
                return Ok((
                    r.number,
                    applied.is_some() && r.record.applied_values() == applied,
                ));
            }
            revisions
        }
    };
    let generation = inst.metadata.generation;
    let rollback_of = revision::rollback_of(
        inst.metadata.annotations.as_ref(),
        generation.map(|g| g - 1),
    );
    // The rollback remediation wrote: said so.
    let remediation_rollback = round.status.remediation.as_ref().and_then(|r| {
        (r.rollback_generation.is_some() && r.rollback_generation == generation).then(|| {
            format!(
                "rollback to revision {} after revision {} failed",
                r.rolled_back_to.unwrap_or_default(),
                r.revision.unwrap_or_default()
            )
        })
    });
    let stored = kudo_policy::secrets::split(
        &compiled.version.schema,
        &inst
            .spec
            .parameters
            .clone()
            .unwrap_or_else(|| serde_json::json!({})),
    )
    .0;
    let record = Record {
        time: active.started.clone().unwrap_or_else(|| round.now.clone()),
        by: inst
            .annotations()
            .get(labels::CHANGED_BY)
            .cloned()
            .filter(|_| began.is_none_or(|b| b.remediated.is_none())),
        operator_version: inst.spec.operator_version.clone().unwrap_or_default(),
        version: Some(compiled.version.version.clone()).filter(|v| !v.is_empty()),
        // What the Instance stores, which never holds a writeOnly value when the admission
        // webhook admitted it; one written past it (no webhook) is left out, never recorded.
        parameters: stored.clone(),
        parameters_from: inst.spec.parameters_from.clone(),
        immutable_defaults: inst.spec.immutable_defaults.clone(),
        applied: applied
            .as_ref()
            .map(|a| revision::applied_patch(&stored, a)),
        plan: active.name.clone(),
        plan_uid: active.uid.clone(),
        reason: began.map(|b| b.reason.clone()).unwrap_or_default(),
        changed: began.map(|b| b.changed.clone()).unwrap_or_default(),
        rollback_of,
        remediation: revision::remediation_for(inst),
        remediated: began
            .and_then(|b| b.remediated.clone())
            .or(remediation_rollback),
        window: began.and_then(|b| b.window.clone()),
        images: inst
            .annotations()
            .get(labels::IMAGES)
            .and_then(|t| serde_json::from_str(t).ok()),
    };
    let mut number = unlisted.unwrap_or_else(|| revision::next_number(&revisions));
    let mut attempts = 0;
    loop {
        let cr = revision::object(inst, number, &record);
        match api.create(&PostParams::default(), &cr).await {
            Ok(_) => break,
            // Taken: by this run before its status was written (found in the list), by another
            // manager's last write before it lost the lease, or past what the status knew: the
            // next free one.
            Err(kube::Error::Api(e)) if e.code == 409 && attempts < 3 => {
                attempts += 1;
                revisions = list(api, inst).await?;
                listed = true;
                if let Some(r) = revision::of_run(&revisions, &active.uid) {
                    return Ok((
                        r.number,
                        applied.is_some() && r.record.applied_values() == applied,
                    ));
                }
                number = revision::next_number(&revisions);
            }
            Err(e) => return Err(e),
        }
    }
    ctx.metrics.revision_recorded();
    tracing::info!(instance = %key(inst), revision = number, plan = %active.name, run = %active.uid, "revision recorded");
    revisions.push(revision::read(&revision::object(inst, number, &record)).expect("just written"));
    // Unlisted, the revisions are at most 1..=number: none to prune within the limit.
    let limit = inst.spec.history_limit.unwrap_or(DEFAULT_HISTORY_LIMIT);
    if !listed && number > i64::from(limit) {
        revisions = list(api, inst).await?;
        listed = true;
    }
    if listed {
        prune(round, api, &revisions, number).await;
    }
    Ok((number, applied.is_some()))
}

/// The number of the active run's revision when the status read at the start of this
/// reconcile says it without a list: 1 for an Instance's first run (it had no run before), the
/// last run's number + 1 when that run recorded one. A number taken after all (a revision
/// written before a status write that failed, or left by an Instance of the same name) is a
/// conflict on create, and the revisions are listed then.
fn unlisted_next(round: &Round<'_>) -> Option<i64> {
    match &round.original.active_plan {
        None => Some(1),
        Some(last) if last.uid != round.status.active_plan.as_ref()?.uid => {
            last.revision.map(|n| n + 1)
        }
        Some(_) => None,
    }
}

/// The effective values (secret values as keyed digests) the manager last acted on: the copy
/// in `status.applied.parameters` (a status written before issue 49, or a run whose revision
/// is not recorded yet); `current` itself when its digest is the one recorded (nothing
/// changed, nothing read); else the values revision `status.applied.revision` recorded.
/// `None` when nothing was applied, or that revision is gone (said, as a Warning event).
pub(super) async fn applied_values(
    round: &Round<'_>,
    current: Option<&Value>,
) -> kube::Result<Option<Value>> {
    let (ctx, inst) = (round.ctx, round.inst);
    let Some(a) = round.status.applied.as_ref() else {
        return Ok(None);
    };
    if let Some(p) = &a.parameters {
        return Ok(Some(p.clone()));
    }
    if let (Some(current), Some(digest)) = (current, &a.digest)
        && *digest == kudo_crd::baseline::digest(current)
    {
        return Ok(Some(current.clone()));
    }
    let Some(number) = a.revision else {
        return Ok(None);
    };
    let ns = inst.namespace().unwrap_or_default();
    let api: Api<ControllerRevision> = Api::namespaced(ctx.client.clone(), &ns);
    let name = revision::name(&inst.name_any(), number);
    let found = api
        .get_opt(&name)
        .await?
        .and_then(|cr| revision::applied_values(&cr));
    if found.is_none() {
        let why = format!(
            "revision {name}, which records the values the last plan ran with (status.applied.revision), is gone or unreadable: every value counts as changed"
        );
        tracing::warn!(instance = %key(inst), %why, "revision");
        ctx.event(inst, EventType::Warning, "RevisionMissing", why)
            .await;
    }
    Ok(found)
}

/// Deletes the revisions past `spec.historyLimit` (never `current`), then the Secrets of
/// kudo's that only they named.
async fn prune(
    round: &Round<'_>,
    api: &Api<ControllerRevision>,
    revisions: &[Revision],
    current: i64,
) {
    let (ctx, inst) = (round.ctx, round.inst);
    let limit = inst.spec.history_limit.unwrap_or(DEFAULT_HISTORY_LIMIT);
    let pruned = revision::pruned(revisions, limit, Some(current));
    if pruned.is_empty() {
        return;
    }
    let mut deleted = Vec::new();
    for r in &pruned {
        match api.delete(&r.name, &DeleteParams::default()).await {
            Ok(_) => deleted.push(*r),
            Err(kube::Error::Api(e)) if e.code == 404 => deleted.push(*r),
            Err(e) => {
                tracing::warn!(instance = %key(inst), revision = %r.name, error = %e, "cannot delete a revision past historyLimit");
            }
        }
    }
    let kept: Vec<&Revision> = revisions
        .iter()
        .filter(|r| !deleted.iter().any(|d| d.number == r.number))
        .collect();
    let released = revision::released_secrets(
        &inst.name_any(),
        &deleted,
        &kept,
        &inst.spec.parameters_from,
    );
    if released.is_empty() {
        return;
    }
    let Ok(tenant) = ctx.tenants.client_for(inst) else {
        return;
    };
    let ns = inst.namespace().unwrap_or_default();
    let secrets: Api<Secret> = Api::namespaced(tenant.client.clone(), &ns);
    for name in released {
        match secrets.delete(&name, &DeleteParams::default()).await {
            Ok(_) => {}
            Err(kube::Error::Api(e)) if e.code == 404 => {}
            Err(e) => {
                let why = format!(
                    "cannot delete Secret {ns}/{name}, which only revisions past spec.historyLimit named, as {}: {e}",
                    tenant.who()
                );
                tracing::warn!(instance = %key(inst), %why, "revision");
                ctx.event(inst, EventType::Warning, "SecretNotDeleted", why)
                    .await;
            }
        }
    }
}
