//! The Rollout controller: carries out what `kudo_policy::rollout::advance` decides, one
//! reconcile at a time, with everything it needs to go on kept in the Rollout's status (a
//! restarted or new leader resumes from it).
//!
//! Each reconcile of a Rollout:
//! 1. an abort (`spec.abort`) ends it, rolling back what it moved when asked;
//! 2. the first time: selects the operator's Instances (`spec.selector`, in its namespace or
//!    those of `spec.namespaceSelector`), runs the upgrade preflight for each (the same
//!    dry-run `kudo upgrade --dry-run` makes), refuses the rollout if one is unsafe (unless
//!    `skipUnsafe`), orders them and fixes the waves;
//! 3. a halted rollout whose `spec.retry` changed retries its halted wave;
//! 4. judges the current wave (`advance`) and carries it out: upgrades (`kudo upgrade`'s own
//!    path, through the admission webhook), rollbacks (`kudo rollback`'s), the status.
//!
//! Every write to an Instance or an OperatorVersion is made as the Rollout's ServiceAccount
//! (`spec.serviceAccountName`, else the manager's default), impersonated: a tenant's rollout
//! reaches only what its RBAC allows. While a wave runs, the Rollout is looked at again every
//! [`POLL`] (and when a `minReady`, a deadline or a window runs out).

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use jiff::{SignedDuration, Timestamp};
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::events::EventType;
use kube::runtime::watcher;
use kube::{Client, Resource, ResourceExt};
use serde_json::json;

use kudo_client::commands::{Target, history, rollout, upgrade};
use kudo_crd::plan::{self, Standing};
use kudo_crd::rollout::{Member, Rollout, RolloutStatus};
use kudo_crd::v1beta2::{Instance, OperatorVersion};
use kudo_policy::rollout::{
    self as policy, Advance, Gate, GateResult, May, OnFailure, Phase, Progress, Seen, Settings,
};
use kudo_policy::window::{State, Window};

use crate::context::Context;
use crate::tenant::Tenants;

/// How often a Rollout with a wave in progress is looked at again.
pub const POLL: Duration = Duration::from_secs(2);

/// What the Rollout controller shares.
pub struct Fleet {
    client: Client,
    tenants: Tenants,
    /// The manager's events and metrics.
    ctx: Arc<Context>,
}

/// Why a reconcile of a Rollout failed (it is retried).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A request to the API server failed.
    #[error("Kubernetes API request failed: {0}")]
    Kube(#[from] kube::Error),
    /// A Rollout without a namespace: the CRD is namespaced, so this is a bug.
    #[error("internal error: a Rollout has no namespace")]
    NoNamespace,
}

/// Runs the Rollout controller until `shutdown`, acting as `default_service_account` for
/// Rollouts that name none.
pub async fn run(
    ctx: Arc<Context>,
    default_service_account: Option<String>,
    shutdown: impl std::future::Future<Output = ()> + Send + Sync + 'static,
) {
    let client = ctx.client.clone();
    let fleet = Arc::new(Fleet {
        tenants: Tenants::new(client.clone(), default_service_account),
        client: client.clone(),
        ctx,
    });
    let rollouts: Api<Rollout> = Api::all(client);
    Controller::new(rollouts, watcher::Config::default())
        .graceful_shutdown_on(shutdown)
        .run(
            |ro, fleet| -> futures::future::BoxFuture<'static, Result<Action, Error>> {
                Box::pin(gated(ro, fleet))
            },
            error_policy,
            fleet,
        )
        .for_each(|r| async move {
            if let Err(e) = r {
                tracing::debug!(error = %e, "rollout controller");
            }
        })
        .await;
}

fn error_policy(ro: Arc<Rollout>, error: &Error, _: Arc<Fleet>) -> Action {
    tracing::warn!(rollout = %ro.name_any(), %error, "rollout reconcile failed");
    Action::requeue(Duration::from_secs(5))
}

/// [`reconcile`], for a Rollout of a shard this replica holds (`--shards`; every Rollout
/// without). Another's is looked at again every [`POLL`], in memory, so that a replica that
/// takes its shard over carries it on within that.
async fn gated(ro: Arc<Rollout>, fleet: Arc<Fleet>) -> Result<Action, Error> {
    let _entry = match &fleet.ctx.gate {
        Some(gate) => {
            let ns = ro.namespace().unwrap_or_default();
            match gate.enter(&ns, &ro.name_any()) {
                Some(entry) => Some(entry),
                None => return Ok(Action::requeue(POLL)),
            }
        }
        None => None,
    };
    reconcile(ro, fleet).await
}

/// One reconcile of a Rollout (see the module docs).
pub async fn reconcile(ro: Arc<Rollout>, fleet: Arc<Fleet>) -> Result<Action, Error> {
    let ns = ro.namespace().ok_or(Error::NoNamespace)?;
    let now = Timestamp::now();
    let before = ro.status.clone().unwrap_or_default();
    let mut status = before.clone();
    status.observed_generation = ro.metadata.generation;
    let acting = match fleet
        .tenants
        .client_as(&ns, ro.spec.service_account_name.as_deref())
    {
        Ok(t) => t.client,
        Err(e) => {
            refuse(&mut status, format!("spec.serviceAccountName: {e}"));
            return finish(&fleet, &ro, &before, status, None).await;
        }
    };
    let phase = status.phase();
    if let Some(abort) = &ro.spec.abort {
        if phase != Phase::Aborted {
            if abort.rollback {
                for i in 0..status.instances.len() {
                    let moved = matches!(
                        status.instances[i].state(),
                        policy::Member::Succeeded
                            | policy::Member::Upgrading
                            | policy::Member::Failed
                    );
                    if moved {
                        roll_back(&acting, &mut status.instances[i]).await;
                    }
                }
            }
            status.set_phase(Phase::Aborted);
            status.message = Some("aborted by spec.abort".into());
            status.finished_at = Some(now.to_string());
        }
        return finish(&fleet, &ro, &before, status, None).await;
    }
    if phase == Phase::Halted && ro.spec.retry != status.observed_retry {
        retry(&mut status, ro.spec.retry);
    } else if phase.is_final() {
        return finish(&fleet, &ro, &before, status, None).await;
    }
    if status.instances.is_empty() {
        if let Err(why) = start(&acting, &fleet.client, &ro, &mut status).await {
            refuse(&mut status, why);
            return finish(&fleet, &ro, &before, status, None).await;
        }
        status.started_at = Some(now.to_string());
    }
    let settings = settings(&ro);
    let may = may(&ro, &mut status, now);
    let wave = status.wave.unwrap_or(0) as usize;
    let waves = status.wave_ends.len();
    let members: Vec<usize> = (0..status.instances.len())
        .filter(|&i| status.instances[i].wave as usize == wave)
        .collect();
    let mut live = Vec::with_capacity(members.len());
    for &i in &members {
        let m = &status.instances[i];
        let api: Api<Instance> = Api::namespaced(acting.clone(), &m.namespace);
        live.push(api.get_opt(&m.name).await?);
    }
    let seen = see(&ro, &status, &members, &live);
    let advanced = policy::advance(&settings, wave, waves, &seen, may, now);
    carry_out(&acting, &ro, &mut status, &members, &advanced, now).await;
    let requeue = match status.phase() {
        p if p.is_final() => None,
        _ => Some(wait_for(advanced.requeue_at, now)),
    };
    finish(&fleet, &ro, &before, status, requeue).await
}

/// The rollout's settings, with the defaults.
fn settings(ro: &Rollout) -> Settings {
    let s = &ro.spec;
    let d = Settings::default();
    Settings {
        max_failures: s.max_failures.unwrap_or(d.max_failures),
        min_ready: s
            .min_ready_seconds
            .map_or(d.min_ready, |n| SignedDuration::from_secs(n.into())),
        progress_deadline: s
            .progress_deadline_seconds
            .map_or(d.progress_deadline, |n| SignedDuration::from_secs(n.into())),
        on_failure: match s.on_failure.as_deref() {
            Some("halt") => OnFailure::Halt,
            _ => OnFailure::Rollback,
        },
    }
}

/// Whether upgrades may start now: paused, awaiting approval, awaiting the window, or yes.
fn may(ro: &Rollout, status: &mut RolloutStatus, now: Timestamp) -> May {
    status.window_opens_at = None;
    if ro.spec.paused {
        return May::Paused;
    }
    // An approval is required when the spec asks, or when the new version needs rights the
    // old did not (`status.grownRights`), whatever the spec says.
    let required =
        ro.spec.approval.as_ref().is_some_and(|a| a.required) || !status.grown_rights.is_empty();
    match ro
        .spec
        .approval
        .as_ref()
        .and_then(|a| a.approved_by.clone())
    {
        Some(who) => status.approved_by = Some(who),
        None if required => return May::AwaitApproval,
        None => {}
    }
    if let Some(w) = &ro.spec.window
        && let Ok(window) = Window::new(&w.spec(), now)
        && let State::Closed { opens } = window.at(now)
    {
        status.window_opens_at = Some(opens.to_string());
        return May::AwaitWindow(opens);
    }
    May::Start
}

/// Selects, checks and orders the Instances (`kudo_client::commands::rollout::select`, the
/// namespaces of `spec.namespaceSelector` listed by the manager, the rest as the rollout's
/// account); `Err` is why the rollout is refused.
async fn start(
    acting: &Client,
    manager: &Client,
    ro: &Rollout,
    status: &mut RolloutStatus,
) -> Result<(), String> {
    let package = target_package(acting, ro).await?;
    let selection = {
        let (acting, manager, ro) = (acting.clone(), manager.clone(), ro.clone());
        detached(Box::new(move || {
            Box::pin(async move { rollout::select(&acting, &manager, &ro, &package).await })
        }))
        .await?
    };
    first_claim(manager, ro, &selection.members).await?;
    status.instances = selection.members;
    status.wave_ends = selection.wave_ends;
    status.grown_rights = selection.grown_rights;
    status.wave = Some(0);
    status.set_phase(Phase::Progressing);
    Ok(())
}

/// Refuses `ro`, whose selection is `mine` (its members), when a Rollout of the same operator that came
/// first ([`kudo_crd::rollout::came_first`]) and has not ended claims one of its Instances:
/// what admission refuses, for the two that passed it at the same instant. A first Rollout
/// that has not selected yet claims what its selector matches now. Read as the manager.
async fn first_claim(manager: &Client, ro: &Rollout, mine: &[Member]) -> Result<(), String> {
    let mine = kudo_crd::rollout::claimed(mine);
    let all: Api<Rollout> = Api::all(manager.clone());
    let others = all.list(&Default::default()).await.map_err(|e| {
        format!(
            "the other Rollouts cannot be listed: {}",
            kudo_cluster::said(&e)
        )
    })?;
    for other in others.items.iter().filter(|o| {
        o.spec.operator == ro.spec.operator
            && kudo_crd::rollout::came_first(o, ro)
            && !o.status.as_ref().is_some_and(|s| s.phase().is_final())
    }) {
        let ns = other.namespace().unwrap_or_default();
        let status = other.status.clone().unwrap_or_default();
        let theirs = if status.instances.is_empty() {
            let query = other.spec.instance_query()?;
            let namespaces = other.spec.namespace_query().transpose()?;
            kudo_cluster::select::keys::<Instance>(
                manager,
                manager,
                &ns,
                &query,
                namespaces.as_deref(),
            )
            .await?
        } else {
            status.claimed()
        };
        if let Some((i_ns, i_name)) = mine.intersection(&theirs).next() {
            return Err(format!(
                "Instance {i_ns}/{i_name} is claimed by Rollout {ns}/{}, which came first: one rollout at a time moves an Instance (wait for it, or abort it)",
                other.name_any()
            ));
        }
    }
    Ok(())
}

/// A `kudo-client` command, ready to run on another thread ([`detached`]).
type Command<T> =
    Box<dyn FnOnce() -> std::pin::Pin<Box<dyn std::future::Future<Output = T>>> + Send + 'static>;

/// Runs a `kudo-client` command to its end. Those commands retry through an async closure
/// (`AsyncFnMut`), whose future Rust cannot yet prove `Send`, and a controller's reconcile
/// must be: so the command runs on a blocking thread, driven by the runtime's handle (its I/O
/// and timers stay on the runtime).
/// The command is type-erased (boxed) so that its future's type never reaches the
/// reconcile's.
async fn detached<T: Send + 'static>(make: Command<T>) -> T {
    let handle = tokio::runtime::Handle::current();
    match tokio::task::spawn_blocking(move || handle.block_on(make())).await {
        Ok(v) => v,
        Err(e) => std::panic::resume_unwind(e.into_panic()),
    }
}

/// What the policy needs to know of the current wave's members (`live`: each Instance, as
/// read now). The gate is compiled here, never held across an await (a CEL program is not
/// `Send`).
fn see(
    ro: &Rollout,
    status: &RolloutStatus,
    members: &[usize],
    live: &[Option<Instance>],
) -> Vec<Seen> {
    let gate = ro.spec.gate.as_deref().and_then(|g| Gate::compile(g).ok());
    members
        .iter()
        .zip(live)
        .map(|(&i, inst)| observe(&status.instances[i], inst.as_ref(), gate.as_ref()))
        .collect()
}

/// What the policy needs to know of one member.
fn observe(m: &Member, inst: Option<&Instance>, gate: Option<&Gate>) -> Seen {
    let upgraded = m.upgraded_at.as_deref().and_then(|t| t.parse().ok());
    let progress = match (inst, m.generation) {
        (None, _) => Progress::Fatal {
            message: "the Instance was deleted".into(),
        },
        (Some(_), None) => Progress::Running,
        (Some(i), Some(g)) => match plan::progress(i.status.as_ref(), g) {
            plan::Progress::Plan {
                standing: Standing::Complete,
                status,
                ..
            } => Progress::Complete {
                since: status
                    .last_updated_timestamp
                    .as_deref()
                    .and_then(|t| t.parse().ok())
                    .unwrap_or_else(Timestamp::now),
            },
            plan::Progress::Plan {
                standing: Standing::Failed(f),
                ..
            } => Progress::Fatal { message: f.message },
            _ => Progress::Running,
        },
    };
    let gate = match (gate, inst) {
        (Some(g), Some(i)) => g.check(&serde_json::to_value(i).unwrap_or_default()),
        _ => GateResult::Pass,
    };
    Seen {
        member: m.state(),
        upgraded,
        progress,
        gate,
    }
}

/// Does what `advanced` says: state changes, upgrades, rollbacks, the phase and the wave.
async fn carry_out(
    acting: &Client,
    ro: &Rollout,
    status: &mut RolloutStatus,
    members: &[usize],
    advanced: &Advance,
    now: Timestamp,
) {
    for (k, state, why) in &advanced.changes {
        let m = &mut status.instances[members[*k]];
        m.set_state(*state);
        m.reason = Some(why.clone());
    }
    if !advanced.upgrade.is_empty() {
        let target = target_package(acting, ro).await;
        for &k in &advanced.upgrade {
            let m = &mut status.instances[members[k]];
            match &target {
                Ok(pkg) => upgrade_one(acting, pkg, m, now).await,
                Err(why) => {
                    m.set_state(policy::Member::Failed);
                    m.reason = Some(why.clone());
                }
            }
        }
    }
    for &k in &advanced.roll_back {
        roll_back(acting, &mut status.instances[members[k]]).await;
    }
    let total = status.wave_ends.len();
    status.wave = Some(advanced.wave as u32);
    status.wave_shown = Some(format!("{}/{total}", (advanced.wave + 1).min(total)));
    status.set_phase(advanced.phase);
    status.message = Some(message(status, advanced));
    if advanced.phase.is_final() {
        status.finished_at = Some(now.to_string());
    }
}

/// The target OperatorVersion's package.
async fn target_package(acting: &Client, ro: &Rollout) -> Result<kudo_pkg::Package, String> {
    let ns = ro
        .spec
        .operator_version
        .namespace
        .clone()
        .or_else(|| ro.namespace())
        .unwrap_or_default();
    let name = ro.spec.operator_version.name.clone().unwrap_or_default();
    let ov = Api::<OperatorVersion>::namespaced(acting.clone(), &ns)
        .get(&name)
        .await
        .map_err(|e| format!("OperatorVersion {ns}/{name} cannot be read: {e}"))?;
    kudo_crd::package::from_operator_version(&ov)
        .map_err(|e| format!("OperatorVersion {ns}/{name}: {e}"))
}

/// Upgrades one member; a refused upgrade is a failure of that member.
async fn upgrade_one(acting: &Client, pkg: &kudo_pkg::Package, m: &mut Member, now: Timestamp) {
    let t = Target::new(acting.clone(), Some(&m.namespace));
    let name = m.name.clone();
    let pkg = pkg.clone();
    let done = detached(Box::new(move || {
        Box::pin(async move {
            upgrade::upgrade(&t, &rollout::upgrade_request(&name, &pkg, false))
                .await
                .map(|d| (d.generation, d.from, d.to))
        })
    }));
    match done.await {
        Ok((generation, from, to)) => {
            m.generation = generation;
            m.upgraded_at = Some(now.to_string());
            m.set_state(policy::Member::Upgrading);
            m.reason = Some(format!("upgraded from {from} to {to}"));
        }
        Err(e) => {
            m.upgraded_at = Some(now.to_string());
            m.set_state(policy::Member::Failed);
            m.reason = Some(format!("the upgrade was refused: {e}"));
        }
    }
}

/// Rolls a member back to its revision before the rollout (`kudo rollback`'s path, which
/// refuses what is not safe: that refusal is recorded, and the member stays).
async fn roll_back(acting: &Client, m: &mut Member) {
    let t = Target::new(acting.clone(), Some(&m.namespace));
    let name = m.name.clone();
    let revision = m.from_revision;
    let why = m.reason.clone().unwrap_or_default();
    let done = detached(Box::new(move || {
        Box::pin(async move {
            let req = history::RollbackRequest {
                instance: &name,
                revision,
                dry_run: false,
                force: true,
                // A repair, as remediation's: never held by the Instance's window.
                ignore_window: true,
            };
            history::rollback(&t, &req).await.map(|r| r.revision.number)
        })
    }));
    match done.await {
        Ok(number) => {
            m.set_state(policy::Member::RolledBack);
            m.reason = Some(format!("{why}; rolled back to revision {number}"));
        }
        Err(e) => {
            m.set_state(policy::Member::RollbackRefused);
            m.reason = Some(format!("{why}; not rolled back: {e}"));
        }
    }
}

/// A halted rollout retries its halted wave: its failed members go back to Pending.
fn retry(status: &mut RolloutStatus, retry: Option<u32>) {
    let wave = status.wave.unwrap_or(0);
    for m in status.instances.iter_mut().filter(|m| m.wave == wave) {
        if m.state().failed() {
            m.set_state(policy::Member::Pending);
            m.reason = Some("retried (spec.retry)".into());
            m.generation = None;
            m.upgraded_at = None;
        }
    }
    status.observed_retry = retry;
    status.finished_at = None;
    status.set_phase(Phase::Progressing);
}

fn refuse(status: &mut RolloutStatus, why: String) {
    status.set_phase(Phase::Refused);
    status.message = Some(why);
    status.finished_at = Some(Timestamp::now().to_string());
}

/// The status message: the phase said for people.
fn message(status: &RolloutStatus, a: &Advance) -> String {
    let count = |s: policy::Member| status.instances.iter().filter(|m| m.state() == s).count();
    let failed: Vec<String> = status
        .instances
        .iter()
        .filter(|m| m.wave as usize == a.wave && m.state().failed())
        .map(|m| {
            format!(
                "{}/{}: {}",
                m.namespace,
                m.name,
                m.reason.as_deref().unwrap_or("failed")
            )
        })
        .collect();
    match a.phase {
        Phase::Halted => format!("halted in wave {}: {}", a.wave + 1, failed.join("; ")),
        Phase::Completed => format!(
            "every wave passed: {} succeeded, {} skipped",
            count(policy::Member::Succeeded),
            count(policy::Member::Skipped)
        ),
        Phase::AwaitingApproval if !status.grown_rights.is_empty() => format!(
            "waiting for `kudo rollout approve`: the new version needs rights the old did not ({})",
            status.grown_rights.join(", ")
        ),
        Phase::AwaitingApproval => "waiting for `kudo rollout approve`".into(),
        Phase::AwaitingWindow => format!(
            "waiting for the window to open at {}",
            status.window_opens_at.as_deref().unwrap_or("?")
        ),
        Phase::Paused => "paused (spec.paused)".into(),
        _ => format!(
            "wave {} of {}: {} succeeded, {} upgrading",
            a.wave + 1,
            status.wave_ends.len(),
            count(policy::Member::Succeeded),
            count(policy::Member::Upgrading)
        ),
    }
}

/// How long to wait before looking again: [`POLL`], or sooner when something runs out.
fn wait_for(at: Option<Timestamp>, now: Timestamp) -> Duration {
    let soon = match at {
        // A time already past: as soon as allowed.
        Some(t) if t <= now => Duration::ZERO,
        Some(t) => t.duration_since(now).try_into().unwrap_or(POLL),
        None => POLL,
    };
    soon.clamp(Duration::from_millis(200), POLL)
}

/// Writes the status when it changed; then what the controller does next.
/// Writes the status when it changed, and says a new phase or wave (an Event on the Rollout,
/// the metric `kudo_manager_rollout_phases`); then what the controller does next.
async fn finish(
    fleet: &Fleet,
    ro: &Rollout,
    before: &RolloutStatus,
    status: RolloutStatus,
    requeue: Option<Duration>,
) -> Result<Action, Error> {
    if &status != before {
        let ns = ro.namespace().unwrap_or_default();
        let api: Api<Rollout> = Api::namespaced(fleet.client.clone(), &ns);
        api.patch_status(
            &ro.name_any(),
            &PatchParams::default(),
            &Patch::Merge(json!({ "status": status })),
        )
        .await?;
        tell(fleet, ro, before, &status).await;
    }
    Ok(match requeue {
        Some(d) => Action::requeue(d),
        None => Action::await_change(),
    })
}

/// The metrics of what happened to the Instances, and the Event and metric of a new phase, or
/// of a new wave.
async fn tell(fleet: &Fleet, ro: &Rollout, before: &RolloutStatus, now: &RolloutStatus) {
    for (then, m) in before.instances.iter().zip(&now.instances) {
        let action = match m.state() {
            s if s == then.state() => continue,
            policy::Member::Upgrading => "upgraded",
            policy::Member::Failed => "failed",
            policy::Member::RolledBack => "rolled_back",
            policy::Member::RollbackRefused => "rollback_refused",
            _ => continue,
        };
        fleet.ctx.metrics.rollout_instance(action);
    }
    let (was, is) = (before.phase(), now.phase());
    let message = now.message.clone().unwrap_or_default();
    let (reason, warning) = if was != is {
        fleet.ctx.metrics.rollout_phase(&format!("{is:?}"));
        (
            format!("{is:?}"),
            matches!(is, Phase::Halted | Phase::Refused | Phase::Aborted),
        )
    } else if before.wave != now.wave && is == Phase::Progressing {
        ("WaveStarted".to_string(), false)
    } else {
        return;
    };
    let type_ = if warning {
        EventType::Warning
    } else {
        EventType::Normal
    };
    fleet
        .ctx
        .publish(&ro.object_ref(&()), type_, &reason, "Rollout", message)
        .await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_next_look_is_at_most_a_poll_away_and_never_a_busy_loop() {
        let now: Timestamp = "2026-11-28T10:00:00Z".parse().unwrap();
        assert_eq!(wait_for(None, now), POLL);
        let soon = now.checked_add(SignedDuration::from_millis(500)).unwrap();
        assert_eq!(wait_for(Some(soon), now), Duration::from_millis(500));
        let past = now.checked_sub(SignedDuration::from_secs(5)).unwrap();
        assert_eq!(wait_for(Some(past), now), Duration::from_millis(200));
        let later = now.checked_add(SignedDuration::from_secs(60)).unwrap();
        assert_eq!(wait_for(Some(later), now), POLL);
    }
}
