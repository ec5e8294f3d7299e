//! Running the manager as a process: `/healthz`, `/readyz` (the controller runs) and
//! `/metrics` over HTTP, leader election on a Lease (kube-lease-manager), then the controller
//! until shutdown or until leadership is lost.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::{Arc, OnceLock};

use axum::Router;
use axum::routing::get;
use futures::StreamExt;
use k8s_openapi::api::coordination::v1::Lease as LeaseObject;
use kube::runtime::watcher;
use kube::{Api, Client};
use kube_lease_manager::{LeaseManager, LeaseManagerBuilder};

use crate::context::{Context, Settings};
use crate::controller::run;
use crate::digest::load_digest_key;
use crate::error::{Error, Result};

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
    /// The ServiceAccount (of each Instance's namespace) to act as for Instances that name
    /// none; `None`: the manager's own identity ([`crate::Tenants`]).
    pub default_service_account: Option<String>,
    /// kudo's namespace, where the manager keeps the key of its digests of secret values (the
    /// Secret [`crate::DIGEST_SECRET`], made on first start); `None`: [`crate::DIGEST_KEY_ENV`],
    /// else a random key per process.
    pub home: Option<String>,
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
    let shutdown = futures::FutureExt::shared(shutdown);
    let leadership = match &opts.lease {
        // A replica stopped while it waits for leadership just stops.
        Some(lease) => tokio::select! {
            l = Leadership::acquire(&client, lease, stop_tx) => Some(l?),
            () = shutdown.clone() => return Ok(()),
        },
        None => {
            drop(stop_tx);
            None
        }
    };
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
    let digest_key = load_digest_key(&client, opts.home.as_deref()).await;
    run(
        client,
        opts.settings,
        opts.default_service_account.clone(),
        digest_key,
        |c| {
            let _ = ctx.set(c);
        },
        stop,
    )
    .await?;
    // The reconciles under way have ended: hand the Lease over now, so that another replica
    // takes over at once instead of when the Lease expires.
    if let Some(l) = leadership {
        l.release().await;
    }
    match lost.lock().ok().and_then(|mut l| l.take()) {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Seconds a Lease stays valid after its last renewal (kube-lease-manager's default: 30;
/// client-go's leader election: 15).
const LEASE_SECONDS: u64 = 15;
/// Seconds before expiry at which the holder renews it: a renewal every 5 s, and 10 s to
/// retry a failing one before the Lease expires (client-go's renew deadline).
const LEASE_GRACE: u64 = 10;
/// How long the holder tries to renew a Lease whose renewal fails before it gives up
/// leadership: less than [`LEASE_GRACE`], so it stops before another replica may take over.
const RENEW_DEADLINE: std::time::Duration = std::time::Duration::from_secs(LEASE_GRACE - 2);
/// Time between two tries of a failing renewal.
const RENEW_RETRY: std::time::Duration = std::time::Duration::from_secs(1);
/// Longest wait for the Lease to be released on shutdown.
const RELEASE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// This replica holds the Lease: renewed in the background until [`Leadership::release`].
struct Leadership {
    manager: Arc<LeaseManager>,
    renew: tokio::task::JoinHandle<()>,
    name: String,
}

impl Leadership {
    /// Waits until this replica holds the Lease `lease`, then keeps it renewed; losing it sends
    /// [`Error::LeadershipLost`] on `lost`.
    ///
    /// A waiting replica also watches the Lease: when the holder releases it (a planned
    /// restart), it tries at once instead of sleeping until the Lease would have expired,
    /// which is all kube-lease-manager's own loop does.
    async fn acquire(
        client: &Client,
        lease: &Lease,
        lost: tokio::sync::oneshot::Sender<Error>,
    ) -> Result<Leadership> {
        let build = || async {
            LeaseManagerBuilder::new(client.clone(), &lease.name)
                .with_namespace(&lease.namespace)
                .with_identity(&lease.identity)
                .with_duration(LEASE_SECONDS)
                .with_grace(LEASE_GRACE)
                .build()
                .await
                .map_err(Error::LeaderElection)
        };
        tracing::info!(lease = %lease.name, namespace = %lease.namespace, identity = %lease.identity, "waiting for leadership");
        let api: Api<LeaseObject> = Api::namespaced(client.clone(), &lease.namespace);
        let config = watcher::Config::default().fields(&format!("metadata.name={}", lease.name));
        let mut released = std::pin::pin!(watcher::watcher(api, config).filter_map(
            |event| async move {
                let free = |l: &LeaseObject| {
                    l.spec
                        .as_ref()
                        .and_then(|s| s.holder_identity.as_deref())
                        .is_none_or(str::is_empty)
                };
                match event {
                    Ok(watcher::Event::Apply(l) | watcher::Event::InitApply(l)) if free(&l) => {
                        Some(())
                    }
                    _ => None,
                }
            }
        ));
        let manager = 'acquired: loop {
            // A new manager each time round: kube-lease-manager keeps what it last read of
            // the Lease until it expires, and would not see the release.
            // The API server unreachable (restarting): try again, a replica that waits has
            // nothing to give up.
            let manager = match build().await {
                Ok(m) => m,
                Err(e) => {
                    tracing::warn!(error = %e, "cannot read the Lease; trying again");
                    tokio::time::sleep(RENEW_RETRY).await;
                    continue 'acquired;
                }
            };
            loop {
                tokio::select! {
                    r = manager.changed() => match r {
                        Ok(true) => break 'acquired Arc::new(manager),
                        Ok(false) => {}
                        Err(e) => {
                            tracing::warn!(error = %e, "cannot read the Lease; trying again");
                            tokio::time::sleep(RENEW_RETRY).await;
                            continue 'acquired;
                        }
                    },
                    // Released by its holder (a planned restart): try now.
                    Some(()) = released.next() => continue 'acquired,
                }
            }
        };
        tracing::info!(lease = %lease.name, identity = %lease.identity, "leading: running plans");
        let renewing = manager.clone();
        let (leases, name, identity) = (
            Api::<LeaseObject>::namespaced(client.clone(), &lease.namespace),
            lease.name.clone(),
            lease.identity.clone(),
        );
        let renew = tokio::spawn(async move {
            // A renewal that fails (the API server restarting) is tried again every second;
            // leadership is given up when none has gone through for RENEW_DEADLINE.
            let mut failing_since: Option<tokio::time::Instant> = None;
            loop {
                let renewed = tokio::select! {
                    r = renewing.changed() => Some(r),
                    () = tokio::time::sleep(RENEW_RETRY * 2), if failing_since.is_some() => None,
                };
                match renewed {
                    Some(Ok(true)) => failing_since = None,
                    Some(Ok(false)) => {
                        let _ = lost.send(Error::LeadershipLost);
                        return;
                    }
                    Some(Err(e)) => {
                        failing_since.get_or_insert_with(tokio::time::Instant::now);
                        tracing::warn!(error = %e, "cannot renew the Lease; trying again");
                        tokio::time::sleep(RENEW_RETRY).await;
                    }
                    // Renewing for a while without an error: the API server may be back.
                    None if holds(&leases, &name, &identity).await => failing_since = None,
                    None => {}
                }
                if failing_since.is_some_and(|t| t.elapsed() >= RENEW_DEADLINE) {
                    let _ = lost.send(Error::LeaseNotRenewed(RENEW_DEADLINE));
                    return;
                }
            }
        });
        Ok(Leadership {
            manager,
            renew,
            name: lease.name.clone(),
        })
    }

    /// Stops renewing and releases the Lease (within [`RELEASE_TIMEOUT`]; past it, the Lease
    /// expires on its own).
    async fn release(self) {
        self.renew.abort();
        let _ = self.renew.await;
        match tokio::time::timeout(RELEASE_TIMEOUT, self.manager.release()).await {
            Ok(Ok(())) => tracing::info!(lease = %self.name, "released the Lease"),
            Ok(Err(e)) => {
                tracing::warn!(lease = %self.name, error = %e, "cannot release the Lease; it expires on its own")
            }
            Err(_) => {
                tracing::warn!(lease = %self.name, "releasing the Lease timed out; it expires on its own")
            }
        }
    }
}

/// Whether the API server answers, within a second, that `identity` holds the Lease `name`.
async fn holds(leases: &Api<LeaseObject>, name: &str, identity: &str) -> bool {
    let read = tokio::time::timeout(RENEW_RETRY, leases.get(name)).await;
    matches!(read, Ok(Ok(l)) if l.spec.as_ref().and_then(|s| s.holder_identity.as_deref()) == Some(identity))
}
