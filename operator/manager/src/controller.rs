//! The controller ([`run`]): a [`Controller`] on Instances calling [`reconcile`], with
//! OperatorVersions from a reflector (a change to one reconciles every Instance again), and
//! what a failed reconcile leads to ([`error_policy`]).

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use kube::Client;
use kube::api::{Api, ListParams};
use kube::runtime::controller::{self, Action, Controller};
use kube::runtime::reflector;
use kube::runtime::{WatchStreamExt, watcher};

use crate::bounded;
use crate::context::{Context, Settings, key};
use crate::error::{Error, Result};
use crate::reconcile::reconcile;
use crate::shards::Gate;
use kube::ResourceExt;
use kudo_crd::v1beta2::{Instance, OperatorVersion};
use tokio::sync::mpsc::UnboundedReceiver;

/// [`reconcile`], for an Instance of a shard this replica holds (`--shards`; every Instance
/// without): the shard is not handed over before it ends. Another's is left alone.
async fn gated(inst: Arc<Instance>, ctx: Arc<Context>) -> Result<Action> {
    let _entry = match &ctx.gate {
        Some(gate) => {
            let ns = inst.namespace().unwrap_or_default();
            match gate.enter(&ns, &inst.name_any()) {
                Some(entry) => Some(entry),
                None => return Ok(Action::await_change()),
            }
        }
        None => None,
    };
    reconcile(inst, ctx).await
}

/// `inst` as the manager keeps it: without what reconciling never reads.
fn lean(inst: &mut Instance) {
    inst.metadata.managed_fields = None;
    if let Some(a) = inst.metadata.annotations.as_mut() {
        a.remove("kubectl.kubernetes.io/last-applied-configuration");
    }
}

/// A signal for each shard taken (from `taken`): every Instance is reconciled again, those of
/// the shard taken run, the others are left at once by [`gated`]. (kube's `reconcile_on`, which
/// would name only the shard's, is unstable.) Empty without shards.
fn shard_taken(
    taken: Option<UnboundedReceiver<u32>>,
) -> impl futures::Stream<Item = ()> + Send + 'static {
    futures::stream::unfold(taken, |rx| async move {
        let mut rx = rx?;
        rx.recv().await?;
        Some(((), Some(rx)))
    })
}

/// What happens after a failed reconcile: the failure is counted and the Instance retried
/// with back-off, longer each time it fails the same way ([`Settings::backoff`] doubled up to
/// [`Settings::max_backoff`]); it is logged (its error cut to 4 KiB) the first 3 times, then
/// the 8th, 16th, 32nd… This is the one line a failed reconcile logs.
pub fn error_policy(inst: Arc<Instance>, error: &Error, ctx: Arc<Context>) -> Action {
    ctx.metrics.failed(error.metric_label());
    let error = bounded::cut(&error.to_string(), bounded::STATUS_MESSAGE);
    let again = ctx.failed(&key(&inst), &error);
    if again.log {
        tracing::warn!(instance = %key(&inst), %error, times = again.count, retry_in = ?again.delay, "reconcile failed");
    }
    Action::requeue(again.delay)
}

/// What the manager knows of where it is installed.
pub struct Installation {
    /// The ServiceAccount it acts as for Instances that name none.
    pub default_service_account: Option<String>,
    /// The key of its digests of secret values ([`crate::load_digest_key`]).
    pub digest_key: Vec<u8>,
    /// Its namespace (`kudo-system`), where its image policy is read
    /// ([`kudo_crd::labels::IMAGE_POLICY`]); `None`: none is.
    pub home: Option<String>,
}

/// Runs the manager until `shutdown` completes: the OperatorVersion reflector and the Instance
/// controller, acting for Instances that name no ServiceAccount as `default_service_account`
/// ([`Context::with_default_service_account`]). With `shards` (the gate and the stream of
/// shards taken), only the Instances of the shards held are reconciled, and those of a shard
/// just taken at once. Fails when the CRDs are not installed.
pub async fn run(
    client: Client,
    settings: Settings,
    installation: Installation,
    shards: Option<(Arc<Gate>, UnboundedReceiver<u32>)>,
    ctx_out: impl FnOnce(Arc<Context>),
    shutdown: impl Future<Output = ()> + Send + Sync + 'static,
) -> Result<()> {
    let instances: Api<Instance> = Api::all(client.clone());
    let shutdown = futures::FutureExt::shared(shutdown);
    // The CRDs may come after the manager (`kudo init` creates both): wait, never exit for it.
    let mut waited = 0u32;
    loop {
        match instances.list(&ListParams::default().limit(1)).await {
            Ok(_) => break,
            Err(e) => {
                if waited.is_multiple_of(30) {
                    tracing::warn!(error = %Error::NoCrd(e), "waiting for the kudo CRDs");
                }
                waited += 1;
                tokio::select! {
                    () = shutdown.clone() => return Ok(()),
                    () = tokio::time::sleep(Duration::from_secs(1)) => {}
                }
            }
        }
    }
    tracing::info!("the kudo CRDs are served: running");
    let ovs: Api<OperatorVersion> = Api::all(client.clone());
    let (store, writer) = reflector::store();
    let ov_changes = reflector::reflector(writer, watcher(ovs, watcher::Config::default()))
        .default_backoff()
        .touched_objects()
        .filter_map(|r| async move {
            match r {
                Ok(_) => Some(()),
                Err(e) => {
                    tracing::warn!(error = %e, "OperatorVersion watch failed");
                    None
                }
            }
        });
    let Installation {
        default_service_account,
        digest_key,
        home,
    } = installation;
    let mut ctx = Context::new(client, store, settings)
        .with_default_service_account(default_service_account.clone())
        .with_digest_key(digest_key)
        .with_image_policy(home);
    let mut taken = None;
    if let Some((gate, rx)) = shards {
        ctx = ctx.with_gate(gate);
        taken = Some(rx);
    }
    let ctx = Arc::new(ctx);
    ctx_out(ctx.clone());
    let concurrency = ctx.settings.concurrency;
    // Rollouts, beside Instances, under the same Lease.
    let rollouts = tokio::spawn(crate::rollout::run(
        ctx.clone(),
        default_service_account,
        shutdown.clone(),
    ));
    let shard_taken = shard_taken(taken);
    // The Instances as reconciling reads them: without their managedFields (every writer's
    // field sets, as large as the status itself) nor kubectl's last-applied copy of the spec,
    // which nothing here reads (issue 49: what the manager keeps per Instance).
    let (cached, writer) = reflector::store();
    let watched = watcher(instances, watcher::Config::default())
        .default_backoff()
        .modify(lean)
        .reflect(writer)
        .touched_objects();
    Controller::for_stream(watched, cached)
        .with_config(controller::Config::default().concurrency(concurrency))
        .reconcile_all_on(futures::stream::select(ov_changes, shard_taken))
        .graceful_shutdown_on(shutdown)
        .run(gated, error_policy, ctx)
        .for_each(|r| async move {
            match r {
                Ok((obj, _)) => tracing::debug!(instance = %obj.name, "reconciled"),
                // error_policy logged it (by the log rule): not a second line per retry.
                Err(controller::Error::ReconcilerFailed(..)) => {}
                Err(e) => tracing::debug!(error = %bounded::cut(&e.to_string(), bounded::STATUS_MESSAGE), "controller error"),
            }
        })
        .await;
    let _ = rollouts.await;
    Ok(())
}
