//! Running the manager as a process: `/healthz`, `/readyz` (the controller runs) and
//! `/metrics` over HTTP, leader election on a Lease or the shards' Leases (`lease`,
//! `shards`), then the controller until shutdown or until a Lease is lost.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::{Arc, OnceLock};

use axum::Router;
use axum::routing::get;
use kube::Client;

use crate::context::{Context, Settings};
use crate::controller::run;
use crate::digest::load_digest_key;
use crate::error::{Error, Result};
use crate::lease::{self, Named};
use crate::shards::{Gate, LOOK, Shards, Sharing};

/// Leader election: only the holder of the Lease `name` in `namespace` runs plans.
#[derive(Debug, Clone)]
pub struct Lease {
    /// Lease name.
    pub name: String,
    /// Lease namespace.
    pub namespace: String,
    /// This replica's identity (its pod name).
    pub identity: String,
}

/// How the manager process runs.
#[derive(Debug, Clone)]
pub struct Options {
    /// Where `/healthz` and `/metrics` are served.
    pub metrics_addr: SocketAddr,
    /// Leader election, when more than one replica may run.
    pub lease: Option<Lease>,
    /// Replicas that share the Instances (`--shards`), instead of one leader running them all.
    pub shards: Option<Shards>,
    /// Timings.
    pub settings: Settings,
    /// The ServiceAccount (of each Instance's namespace) to act as for Instances that name
    /// none; `None`: the manager's own identity ([`crate::Tenants`]).
    pub default_service_account: Option<String>,
    /// kudo's namespace, where the manager keeps the key of its digests of secret values (the
    /// Secret [`crate::DIGEST_SECRET`], made on first start); `None`: [`crate::DIGEST_KEY_ENV`],
    /// else a random key per process.
    pub home: Option<String>,
}

/// Serves health and metrics, waits for leadership (when asked) or joins the replicas that share
/// the shards, then runs the controller until `shutdown`. Losing a Lease ends it with
/// [`Error::LeaseTaken`] or [`Error::LeaseNotRenewed`], and replicas that disagree on the shard
/// count with [`Error::ShardCount`]: the process should exit and be restarted.
pub async fn serve(
    client: Client,
    opts: Options,
    shutdown: impl Future<Output = ()> + Send + Sync + 'static,
) -> Result<()> {
    let ctx: Arc<OnceLock<Arc<Context>>> = Arc::default();
    let listener = tokio::net::TcpListener::bind(opts.metrics_addr)
        .await
        .map_err(|e| Error::Serve(opts.metrics_addr, e))?;
    let metrics_ctx = ctx.clone();
    let ready_ctx = ctx.clone();
    let app = Router::new()
        .route("/healthz", get(|| async { "ok" }))
        .route(
            "/readyz",
            get(move || {
                let ready = ready_ctx.get().is_some();
                async move {
                    if ready {
                        (axum::http::StatusCode::OK, "ready\n")
                    } else {
                        (
                            axum::http::StatusCode::SERVICE_UNAVAILABLE,
                            "not ready: waiting for leadership or for the kudo CRDs (kudo init)\n",
                        )
                    }
                }
            }),
        )
        .route(
            "/metrics",
            get(move || {
                let ctx = metrics_ctx.clone();
                async move { ctx.get().map(|c| c.metrics.encode()).unwrap_or_default() }
            }),
        );
    tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, app).await {
            tracing::error!(error = %e, "the metrics server stopped");
        }
    });
    let (lost_tx, mut lost_rx) = tokio::sync::mpsc::channel::<Error>(4);
    let shutdown = futures::FutureExt::shared(shutdown);
    let leadership = match &opts.lease {
        // A replica stopped while it waits for leadership just stops.
        Some(l) => {
            let named = Named {
                name: l.name.clone(),
                namespace: l.namespace.clone(),
                identity: l.identity.clone(),
            };
            tracing::info!(lease = %l.name, namespace = %l.namespace, identity = %l.identity, "waiting for leadership");
            tokio::select! {
                m = named.wait(&client, lease::LEADER) => {
                    let held = named.hold(&client, m, lease::LEADER, lost_tx.clone());
                    if let Err(e) = crate::shards::agree_as_leader(&client, &l.name, &l.namespace).await {
                        held.release().await;
                        return Err(e);
                    }
                    tracing::info!(lease = %l.name, identity = %l.identity, "leading: running plans");
                    Some(held)
                }
                () = shutdown.clone() => return Ok(()),
            }
        }
        None => None,
    };
    let (gate, sharing) = match &opts.shards {
        Some(set) => {
            let (gate, taken) = Gate::new(set.count);
            let sharing =
                Sharing::join(&client, set.clone(), gate.clone(), lost_tx.clone()).await?;
            (Some((gate, taken)), Some(look(sharing, lost_tx.clone())))
        }
        None => (None, None),
    };
    drop(lost_tx);
    let lost = Arc::new(std::sync::Mutex::new(None::<Error>));
    let lost_in = lost.clone();
    let stop = async move {
        tokio::select! {
            () = shutdown => {}
            Some(e) = lost_rx.recv() => {
                tracing::error!(error = %e, "stopping");
                if let Ok(mut l) = lost_in.lock() {
                    *l = Some(e);
                }
                // The reconciles under way are waited for, but not past the time the Lease
                // may expire and another replica take their Instances: then the process ends,
                // as client-go's leader election ends it, and the new holder takes up what a
                // step left from the status, as after a SIGKILL.
                tokio::spawn(async {
                    tokio::time::sleep(lease::LOST_GRACE).await;
                    tracing::error!(grace = ?lease::LOST_GRACE, "reconciles still running when the Lease may expire: exiting");
                    std::process::exit(1);
                });
            }
        }
    };
    let digest_key = load_digest_key(&client, opts.home.as_deref()).await;
    run(
        client,
        opts.settings,
        crate::controller::Installation {
            default_service_account: opts.default_service_account.clone(),
            digest_key,
            home: opts.home.clone(),
        },
        gate,
        |c| {
            let _ = ctx.set(c);
        },
        stop,
    )
    .await?;
    // The reconciles under way have ended: hand the Leases over now, so that another replica
    // takes over at once instead of when they expire.
    if let Some((stop_looking, looking)) = sharing {
        let _ = stop_looking.send(());
        if let Ok(sharing) = looking.await {
            sharing.leave().await;
        }
    }
    if let Some(l) = leadership {
        l.release().await;
    }
    match lost.lock().ok().and_then(|mut l| l.take()) {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Looks at the shards' Leases every [`LOOK`] until told to stop, then gives the [`Sharing`]
/// back to be left. Replicas that disagree on the count stop the process (on `lost`); any
/// other failure to read the Leases is tried again at the next look.
fn look(
    mut sharing: Sharing,
    lost: lease::Lost,
) -> (
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<Sharing>,
) {
    let (stop_tx, mut stop_rx) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        loop {
            match sharing.look().await {
                Ok(()) => {}
                Err(e @ Error::ShardCount { .. }) => {
                    let _ = lost.try_send(e);
                    return sharing;
                }
                Err(e) => {
                    tracing::warn!(error = %e, "cannot read the shards' Leases; trying again")
                }
            }
            tokio::select! {
                _ = &mut stop_rx => return sharing,
                () = tokio::time::sleep(LOOK) => {}
            }
        }
    });
    (stop_tx, task)
}
