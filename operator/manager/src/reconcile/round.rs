//! One reconcile of an Instance ([`Round`]): its status as read and as the reconcile leaves
//! it; a plan started ([`Round::begin`]) and the active plan advanced ([`Round::advance`]),
//! round after round while steps complete, the status written after each.

use futures::future::{self, Either};
use kube::ResourceExt;
use kube::api::Api;
use kube::runtime::controller::Action;
use kube::runtime::events::EventType;
use kudo_pkg::Package;
use kudo_pkg::package::TaskKind;
use kudo_pkg::render::Prepared;
use serde_json::Value;

use crate::bounded;
use crate::context::{Context, key};
use crate::error::Result;
use crate::forced_rollback;
use crate::objects::Notes;
use crate::status::{ready_from_plan, set_ready, write_status};
use crate::step::{Outcome, StepRef, StepRun};
use crate::tasks;
use kudo_crd::common::ExecStatus;
use kudo_crd::common::{AwaitingWindow, InstanceStatus};
use kudo_crd::plan;
use kudo_crd::v1beta2::Instance;
use kudo_policy::run::Start;

/// One reconcile of one Instance.
pub struct Round<'a> {
    /// What every reconcile shares.
    pub ctx: &'a Context,
    /// The Instances of the Instance's namespace, with the manager's own identity.
    pub api: Api<Instance>,
    /// The Instance.
    pub inst: &'a Instance,
    /// Its status as read.
    pub original: InstanceStatus,
    /// Its status as this reconcile leaves it.
    pub status: InstanceStatus,
    /// When this reconcile runs.
    pub now: String,
    /// How the steps of an untouched plan end before they apply anything: the check of its
    /// images refused them ([`crate::images`]).
    pub held: Option<Outcome>,
}

impl<'a> Round<'a> {
    /// A reconcile of `inst`, its status as read.
    pub fn new(ctx: &'a Context, api: Api<Instance>, inst: &'a Instance) -> Round<'a> {
        let original = inst.status.clone().unwrap_or_default();
        Round {
            ctx,
            api,
            inst,
            status: original.clone(),
            original,
            now: (ctx.clock)(),
            held: None,
        }
    }

    /// Sets the `Ready` condition False for `reason` (saying `why`), writes the status and
    /// looks again `after`.
    pub async fn not_ready(
        &mut self,
        reason: &str,
        why: &str,
        after: std::time::Duration,
    ) -> Result<Action> {
        set_ready(&mut self.status, self.inst, "False", reason, why, &self.now);
        let (ctx, inst, now) = (self.ctx, self.inst, self.now.as_str());
        let rv = write_status(ctx, &self.api, inst, &self.original, &self.status, now).await?;
        self.ctx.wrote(self.inst, rv);
        Ok(Action::requeue(after))
    }

    /// Starts `start` for the `values` it runs with ([`plan::begin`]): logged, counted and
    /// published as the event `PlanStarted`.
    pub async fn begin(&mut self, pkg: &Package, values: &Value, start: &Start) {
        let (ctx, inst, now) = (self.ctx, self.inst, self.now.as_str());
        let status = &mut self.status;
        plan::begin(status, pkg, inst, values, start, now);
        tracing::info!(instance = %key(inst), plan = %start.plan, run = %start.uid, reason = %start.reason, "plan started");
        ctx.metrics.plan_started(&start.plan);
        ctx.event(
            inst,
            EventType::Normal,
            "PlanStarted",
            format!("plan `{}` started: {}", start.plan, start.reason),
        )
        .await;
    }

    /// Holds `start` until the maintenance window opens at `opens` (`status.awaitingWindow`):
    /// logged and published as the event `PlanAwaitingWindow` when it starts to wait.
    pub async fn await_window(&mut self, start: &Start, opens: jiff::Timestamp) {
        let opens_at = opens.to_string();
        let since = match &self.status.awaiting_window {
            Some(w) if w.uid == start.uid && w.plan == start.plan => {
                if w.opens_at == opens_at {
                    return;
                }
                w.since.clone()
            }
            _ => self.now.clone(),
        };
        self.status.awaiting_window = Some(AwaitingWindow {
            plan: start.plan.clone(),
            uid: start.uid.clone(),
            opens_at: opens_at.clone(),
            since,
        });
        let (ctx, inst) = (self.ctx, self.inst);
        tracing::info!(instance = %key(inst), plan = %start.plan, run = %start.uid, opens = %opens_at, "plan awaits the maintenance window");
        ctx.event(
            inst,
            EventType::Normal,
            "PlanAwaitingWindow",
            format!(
                "plan `{}` waits for the maintenance window, which opens at {opens_at}: {}",
                start.plan, start.reason
            ),
        )
        .await;
    }

    /// Runs what may run of the active plan of `pkg` with `params` (the values, secrets
    /// included), round after round while steps complete; writes the status after each round.
    /// Returns when the plan waits, fails or ends.
    pub async fn advance(&mut self, prepared: &Prepared<'_>, params: &Value) -> Result<Action> {
        let pkg = prepared.package();
        let (ctx, api, inst, now) = (self.ctx, &self.api, self.inst, self.now.as_str());
        let (original, status) = (&self.original, &mut self.status);
        let mut written = original.clone();
        let Some(active) = status.active_plan.clone() else {
            set_ready(status, inst, "Unknown", "NoPlan", "no plan has run", now);
            let rv = write_status(ctx, api, inst, &written, status, now).await?;
            ctx.wrote(inst, rv);
            return Ok(Action::requeue(ctx.settings.resync));
        };
        let mut action = Action::requeue(ctx.settings.resync);
        let restoring = kudo_crd::revision::restoring(inst);
        // Before a plan applies anything: the rights its Pipe tasks take, and a rollback's
        // forced rollback of a StatefulSet.
        let refused = match (self.held.take(), status.plan_status.get(&active.name)) {
            // The check of its images held it ([`untouched_plan`]).
            (Some(held), _) => Some(held),
            (None, Some(ps)) if untouched(ps) => {
                missing_rights(ctx, inst, pkg, &active.name, restoring)
                    .await
                    .map(Outcome::Fatal)
            }
            _ => None,
        };
        while let Some(ps) = status.plan_status.get_mut(&active.name) {
            let before = ExecStatus::of(&ps.status).clone();
            if before.is_terminal() {
                break;
            }
            let steps = plan::runnable(pkg, &active.name, ps);
            let names: Vec<(String, String)> = steps
                .iter()
                .map(|at| {
                    let ph = &ps.phases[at.phase];
                    (ph.name.clone(), ph.steps[at.step].name.clone())
                })
                .collect();
            let (outcomes, notes) = run_steps(
                ctx,
                inst,
                prepared,
                params,
                &active.name,
                &names,
                &refused,
                restoring,
            )
            .await;
            record_notes(ctx, inst, &active.name, ps, notes).await;
            let (completed, retry) =
                record_outcomes(ctx, inst, &active.name, ps, &steps, outcomes, &names);
            if completed || !retry.is_empty() {
                ctx.stop_waiting(&key(inst));
            }
            plan::roll_up(ps);
            // A phase's and the plan's messages name their failing steps': cut as written.
            bounded::plan(ps);
            let after = ExecStatus::of(&ps.status).clone();
            // What the plan waits on, if it waits (its message names its waiting steps').
            let waits_on = ps.message.clone().unwrap_or_default();
            if after != before || completed {
                ps.last_updated_timestamp = Some(now.into());
            }
            if after.is_terminal() {
                let message = ps.message.clone().unwrap_or_default();
                finished(ctx, inst, &active.name, &after, &message).await;
                // The revision says so before the status does.
                super::revisions::settle(ctx, inst, status).await;
                // Drift's first check (COMPLETE only) said in the same write: what the plan
                // just applied needs no dry run (crate::drift::applying).
                crate::drift::judge(ctx, inst, status, prepared, params, now).await;
            }
            ready_from_plan(status, inst, &active.name, now);
            let rv = write_status(ctx, api, inst, &written, status, now).await?;
            ctx.wrote(inst, rv);
            written = status.clone();
            if after.is_terminal() {
                ctx.reset_backoff(&key(inst));
                ctx.stop_waiting(&key(inst));
                break;
            }
            if !retry.is_empty() {
                let failure = format!("{}: {}", active.uid, retry.join("; "));
                let again = ctx.failed(&key(inst), &failure);
                // The first time is the step's own line above; a few more, then a summary now
                // and then (crate::backoff).
                if again.count > 1 && again.log {
                    tracing::warn!(instance = %key(inst), plan = %active.name, times = again.count, retry_in = ?again.delay, failure = %bounded::cut(&failure, bounded::STATUS_MESSAGE), "steps still failing the same way");
                }
                action = Action::requeue(again.delay);
                break;
            }
            if !completed {
                ctx.reset_backoff(&key(inst));
                action = Action::requeue(ctx.wait_delay(&key(inst), &waits_on));
                break;
            }
        }
        ready_from_plan(status, inst, &active.name, now);
        let rv = write_status(ctx, api, inst, &written, status, now).await?;
        ctx.wrote(inst, rv);
        Ok(action)
    }
}

/// Runs the steps `names` (phase, step) of plan `plan` at once: each ends at once as
/// `refused` says when the plan lacks rights or its images were refused. Returns their outcomes, in order, and what they noted.
#[allow(clippy::too_many_arguments)]
async fn run_steps(
    ctx: &Context,
    inst: &Instance,
    prepared: &Prepared<'_>,
    params: &Value,
    plan: &str,
    names: &[(String, String)],
    refused: &Option<Outcome>,
    restoring: bool,
) -> (Vec<Outcome>, Vec<String>) {
    let notes = Notes::default();
    let applied = crate::step::Applied::default();
    let tenant = ctx.tenants.client_for(inst);
    let runs = names.iter().map(|(phase, step)| {
        let at = StepRef { plan, phase, step };
        if let Some(held) = &refused {
            return Either::Left(future::ready(held.clone()));
        }
        let tenant = match &tenant {
            Ok(t) => t,
            Err(invalid) => {
                let o = Outcome::Fatal(invalid.to_string());
                return Either::Left(future::ready(o));
            }
        };
        Either::Right(tasks::run_step(StepRun {
            objects: &ctx.objects,
            tenant,
            inst,
            prepared,
            params,
            at,
            notes: &notes,
            pipe_max_restarts: ctx.settings.pipe_max_restarts,
            restoring,
            applied: &applied,
        }))
    });
    let outcomes = future::join_all(runs).await;
    ctx.drift_seed(inst, applied.into_inner().unwrap_or_default());
    (outcomes, notes.into_inner().unwrap_or_default())
}

/// Records in the plan's status `ps` what the steps noted (an object applied otherwise than
/// its template says), once each, with a warning event.
async fn record_notes(
    ctx: &Context,
    inst: &Instance,
    plan: &str,
    ps: &mut kudo_crd::common::PlanStatus,
    notes: Vec<String>,
) {
    for note in notes {
        let note = bounded::cut(&note, bounded::STATUS_MESSAGE);
        if !ps.warnings.contains(&note) {
            tracing::warn!(instance = %key(inst), plan = %plan, %note, "object applied otherwise than its template says");
            ctx.event(inst, EventType::Warning, "ObjectConverted", note.clone())
                .await;
            ps.warnings.push(note);
        }
    }
}

/// Records the steps' `outcomes` in the plan's status `ps`, logging each change. Returns
/// whether a step completed, and the steps that failed worth retrying with their messages.
fn record_outcomes(
    ctx: &Context,
    inst: &Instance,
    plan: &str,
    ps: &mut kudo_crd::common::PlanStatus,
    steps: &[plan::StepAt],
    outcomes: Vec<Outcome>,
    names: &[(String, String)],
) -> (bool, Vec<String>) {
    let mut completed = false;
    // The steps that failed worth retrying, and their messages: the failure's
    // fingerprint in the back-off.
    let mut retry = Vec::new();
    for ((at, outcome), (phase, step)) in steps.iter().zip(outcomes).zip(names) {
        let refused = matches!(outcome, Outcome::Forbidden(_));
        let step_key = format!("{}/{plan}/{phase}/{step}", key(inst));
        let refused_too_long = ctx.refused_too_long(step_key, refused);
        let (st, full) = outcome.status(refused_too_long);
        // What the status holds is cut; the log's one line has more of it.
        let message = full
            .as_deref()
            .map(|m| bounded::cut(m, bounded::STATUS_MESSAGE));
        completed |= st == ExecStatus::Complete;
        let (phase, step) = (
            &ps.phases[at.phase].name,
            &ps.phases[at.phase].steps[at.step],
        );
        if st == ExecStatus::Error {
            let m = message.as_deref().unwrap_or("");
            retry.push(format!("{phase}/{}: {m}", step.name));
        }
        if step.status.as_ref() != Some(&st) || step.message != message {
            let name = &step.name;
            let message = bounded::cut(full.as_deref().unwrap_or(""), bounded::LOG_MESSAGE);
            let instance = key(inst);
            match st {
                ExecStatus::Error | ExecStatus::FatalError => {
                    tracing::warn!(%instance, plan = %plan, %phase, step = %name, status = st.as_str(), %message, "step failed")
                }
                _ => {
                    tracing::info!(%instance, plan = %plan, %phase, step = %name, status = st.as_str(), %message, "step")
                }
            }
        }
        let step = &mut ps.phases[at.phase].steps[at.step];
        step.status = Some(st);
        step.message = message;
    }
    (completed, retry)
}

/// Plan `plan` has not ended and no step of it has completed or is under way (steps retried
/// after an ERROR included): its images are checked before each try ([`crate::images`]).
pub(super) fn untouched_plan(status: &InstanceStatus, plan: &str) -> bool {
    status.plan_status.get(plan).is_some_and(|ps| {
        !ExecStatus::of(&ps.status).is_terminal()
            && ps.phases.iter().flat_map(|p| &p.steps).all(|s| {
                // ERROR: a first step retried, which may be the check's own retry (the policy
                // or a registry unreadable): checked again, never let through unchecked.
                matches!(
                    ExecStatus::of(&s.status),
                    ExecStatus::Pending
                        | ExecStatus::NeverRun
                        | ExecStatus::Unknown(_)
                        | ExecStatus::Error
                )
            })
    })
}

/// No step of the plan has run yet (a status kudo does not know is not a run).
fn untouched(ps: &kudo_crd::common::PlanStatus) -> bool {
    ps.phases.iter().flat_map(|p| &p.steps).all(|s| {
        matches!(
            ExecStatus::of(&s.status),
            ExecStatus::Pending | ExecStatus::NeverRun | ExecStatus::Unknown(_)
        )
    })
}

/// Why plan `plan` of `pkg` cannot run for `inst`: the rights its Pipe tasks take
/// ([`kudo_pkg::pipe::plan_rights`]) that the identity acting for the Instance lacks, asked of
/// the API server before anything is applied. `None`: none lacking (or no Pipe task).
async fn missing_rights(
    ctx: &Context,
    inst: &Instance,
    pkg: &Package,
    plan: &str,
    restoring: bool,
) -> Option<String> {
    let pipes = kudo_pkg::pipe::plan_rights(pkg.operator(), Some(plan));
    let rollback = restoring && applies_statefulsets(pkg, plan);
    if pipes.is_empty() && !rollback {
        return None;
    }
    let tenant = ctx.tenants.client_for(inst).ok()?;
    let ns = inst.namespace().unwrap_or_default();
    let mut all = Vec::new();
    let wanted = pipes.iter().flat_map(|(_, r)| r);
    let forced = rollback.then_some(forced_rollback::RIGHTS).into_iter();
    for r in wanted.chain(forced.flatten()) {
        if !all.contains(r) {
            all.push(*r);
        }
    }
    let denied = ctx.objects.denied(&tenant, &ns, &all).await;
    if denied.is_empty() {
        return None;
    }
    let tasks: Vec<String> = pipes
        .iter()
        .filter(|(_, r)| r.iter().any(|x| denied.contains(x)))
        .map(|(t, _)| format!("`{t}`"))
        .collect();
    let mut needed_by = Vec::new();
    if !tasks.is_empty() {
        needed_by.push(format!(
            "Pipe task {} needs (it runs a Pod and reads its files with exec)",
            tasks.join(", ")
        ));
    }
    if rollback && forced_rollback::RIGHTS.iter().any(|r| denied.contains(r)) {
        needed_by.push(
            "this rollback needs (a StatefulSet's forced rollback deletes the Pods left not Ready on the failed revision)"
                .into(),
        );
    }
    let denied: Vec<String> = denied.iter().map(ToString::to_string).collect();
    Some(format!(
        "{} may not {} in namespace {ns}, which {}: grant them (the built-in admin ClusterRole holds them), then run the plan again with kudo plan trigger; nothing of plan `{plan}` was applied",
        tenant.who(),
        denied.join(", "),
        needed_by.join(", and which ")
    ))
}

/// Whether plan `plan` of `pkg` has an Apply or Toggle task whose templates hold a
/// StatefulSet (read from the template text: no rendering, so a template that names its kind
/// through a value is not seen, and its forced rollback is refused when it comes).
fn applies_statefulsets(pkg: &Package, plan: &str) -> bool {
    let op = pkg.operator();
    let Some(p) = op.plans.get(plan) else {
        return false;
    };
    p.phases
        .iter()
        .flat_map(|ph| &ph.steps)
        .flat_map(|st| &st.tasks)
        .filter_map(|t| op.task(t))
        .filter(|t| matches!(t.kind, TaskKind::Apply | TaskKind::Toggle))
        .flat_map(|t| &t.resources)
        .filter_map(|r| pkg.templates().get(r))
        .any(|text| text.contains("kind: StatefulSet"))
}

/// A run that ended (`after`: COMPLETE or FATAL_ERROR, with the plan's `message`): counted,
/// logged and published as the event `PlanComplete` or `PlanFailed`.
async fn finished(ctx: &Context, inst: &Instance, plan: &str, after: &ExecStatus, message: &str) {
    ctx.metrics.plan_finished(plan, after.as_str());
    let (type_, reason, note) = if *after == ExecStatus::Complete {
        tracing::info!(instance = %key(inst), plan = %plan, "plan complete");
        (
            EventType::Normal,
            "PlanComplete",
            format!("plan `{plan}` complete"),
        )
    } else {
        let message = bounded::cut(message, bounded::STATUS_MESSAGE);
        tracing::warn!(instance = %key(inst), plan = %plan, %message, "plan failed");
        (
            EventType::Warning,
            "PlanFailed",
            format!("plan `{plan}` failed: {message}"),
        )
    };
    ctx.event(inst, type_, reason, note).await;
}
