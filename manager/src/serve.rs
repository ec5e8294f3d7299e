//! Running the manager as a process: `/healthz`, `/readyz` (the controller runs) and
//! `/metrics` over HTTP, leader election on a Lease (kube-lease-manager), then the controller
//! until shutdown or until leadership is lost.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::{Arc, OnceLock};

use axum::Router;
use axum::routing::get;
use kube::Client;
use kube_lease_manager::LeaseManagerBuilder;

use super::{Context, Error, Result, Settings, run};

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
    /// Timings.
    pub settings: Settings,
}

/// Serves health and metrics, waits for leadership (when asked), then runs the controller until
/// `shutdown`. Losing leadership ends it with [`Error::LeadershipLost`]: the process should
/// exit and be restarted.
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
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<Error>();
    let mut lease_channel = None;
    if let Some(lease) = &opts.lease {
        let manager = LeaseManagerBuilder::new(client.clone(), &lease.name)
            .with_namespace(&lease.namespace)
            .with_identity(&lease.identity)
            .build()
            .await
            .map_err(|e| Error::LeaderElection(e.to_string()))?;
        let (mut leader, _task) = manager.watch().await;
        tracing::info!(lease = %lease.name, identity = %lease.identity, "waiting for leadership");
        while !*leader.borrow_and_update() {
            leader
                .changed()
                .await
                .map_err(|e| Error::LeaderElection(e.to_string()))?;
        }
        tracing::info!("leading: running plans");
        let mut watch = leader.clone();
        tokio::spawn(async move {
            while watch.changed().await.is_ok() {
                if !*watch.borrow_and_update() {
                    let _ = stop_tx.send(Error::LeadershipLost);
                    return;
                }
            }
        });
        lease_channel = Some(leader);
    } else {
        drop(stop_tx);
    }
    let lost = Arc::new(std::sync::Mutex::new(None::<Error>));
    let lost_in = lost.clone();
    let stop = async move {
        tokio::select! {
            () = shutdown => {}
            Ok(e) = stop_rx => {
                if let Ok(mut l) = lost_in.lock() {
                    *l = Some(e);
                }
            }
        }
    };
    run(
        client,
        opts.settings,
        |c| {
            let _ = ctx.set(c);
        },
        stop,
    )
    .await?;
    // Dropping the channel releases the lease.
    drop(lease_channel);
    match lost.lock().ok().and_then(|mut l| l.take()) {
        Some(e) => Err(e),
        None => Ok(()),
    }
}
