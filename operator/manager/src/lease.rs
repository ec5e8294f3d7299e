//! Holding a `coordination.k8s.io` Lease with kube-lease-manager: the leader's (`--leader-elect`),
//! each shard's and each replica's own (`--shards`). One renewal loop for all of them: a
//! renewal that fails is tried again every second, and the Lease is given up (reported on
//! [`Lost`]) once none has gone through for [`Timing::renew_deadline`], before another replica
//! may take it.

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::coordination::v1::Lease as LeaseObject;
use kube::runtime::watcher;
use kube::{Api, Client};
use kube_lease_manager::{LeaseManager, LeaseManagerBuilder};

use crate::error::{Error, Result};

/// How long a Lease lasts and when it is renewed.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Timing {
    /// Seconds a Lease stays valid after its last renewal.
    pub(crate) duration: u64,
    /// Seconds before expiry at which the holder renews it.
    pub(crate) grace: u64,
}

impl Timing {
    /// How long the holder tries to renew a Lease whose renewal fails before it gives it up:
    /// less than the grace, so it stops before another replica may take over.
    pub(crate) fn renew_deadline(self) -> Duration {
        Duration::from_secs(self.grace.saturating_sub(2).max(1))
    }
}

/// The leader's Lease: 15 s (client-go's leader election: 15; kube-lease-manager's default:
/// 30), renewed every 5 s, with 10 s to retry a failing renewal (client-go's renew deadline).
pub(crate) const LEADER: Timing = Timing {
    duration: 15,
    grace: 10,
};

/// A shard's and a replica's Lease: 10 s, renewed every 4 s. A replica that dies leaves its
/// shards' Leases expired 6 to 10 s later, so another takes them over within 15 s.
pub(crate) const SHARD: Timing = Timing {
    duration: 10,
    grace: 6,
};

/// How long the reconciles under way may go on once a Lease is given up: a Lease not renewed
/// is given up about 2 s before it expires ([`Timing::renew_deadline`]), so they end, or the
/// process does, before another replica may hold it (`serve`).
pub(crate) const LOST_GRACE: Duration = Duration::from_secs(1);

/// Time between two tries of a failing renewal.
pub(crate) const RETRY: Duration = Duration::from_secs(1);
/// Longest wait for a Lease to be released on shutdown.
const RELEASE_TIMEOUT: Duration = Duration::from_secs(5);

/// Where a Lease given up is reported: the process stops running plans.
pub(crate) type Lost = tokio::sync::mpsc::Sender<Error>;

/// A Lease named `name` in `namespace`, held as `identity`.
#[derive(Debug, Clone)]
pub(crate) struct Named {
    pub(crate) name: String,
    pub(crate) namespace: String,
    pub(crate) identity: String,
}

impl Named {
    /// A kube-lease-manager for it (its first read of the Lease).
    pub(crate) async fn manager(&self, client: &Client, timing: Timing) -> Result<LeaseManager> {
        LeaseManagerBuilder::new(client.clone(), &self.name)
            .with_namespace(&self.namespace)
            .with_identity(&self.identity)
            .with_duration(timing.duration)
            .with_grace(timing.grace)
            .build()
            .await
            .map_err(Error::LeaderElection)
    }

    /// Waits until this replica holds the Lease. A waiting replica also watches it: when the
    /// holder releases it (a planned restart), it tries at once instead of sleeping until the
    /// Lease would have expired, which is all kube-lease-manager's own loop does.
    pub(crate) async fn wait(&self, client: &Client, timing: Timing) -> LeaseManager {
        let api: Api<LeaseObject> = Api::namespaced(client.clone(), &self.namespace);
        let config = watcher::Config::default().fields(&format!("metadata.name={}", self.name));
        let mut released = std::pin::pin!(watcher::watcher(api, config).filter_map(
            |event| async move {
                match event {
                    Ok(watcher::Event::Apply(l) | watcher::Event::InitApply(l)) if free(&l) => {
                        Some(())
                    }
                    _ => None,
                }
            }
        ));
        'acquired: loop {
            // A new manager each time round: kube-lease-manager keeps what it last read of
            // the Lease until it expires, and would not see the release.
            // The API server unreachable (restarting): try again, a replica that waits has
            // nothing to give up.
            let manager = match self.manager(client, timing).await {
                Ok(m) => m,
                Err(e) => {
                    tracing::warn!(lease = %self.name, error = %e, "cannot read the Lease; trying again");
                    tokio::time::sleep(RETRY).await;
                    continue 'acquired;
                }
            };
            loop {
                tokio::select! {
                    r = manager.changed() => match r {
                        Ok(true) => return manager,
                        Ok(false) => {}
                        Err(e) => {
                            tracing::warn!(lease = %self.name, error = %e, "cannot read the Lease; trying again");
                            tokio::time::sleep(RETRY).await;
                            continue 'acquired;
                        }
                    },
                    // Released by its holder (a planned restart): try now.
                    Some(()) = released.next() => continue 'acquired,
                }
            }
        }
    }

    /// Takes the Lease if it is free or expired within `within`; `None` when another holds it
    /// (or the API server does not answer in time).
    pub(crate) async fn take(
        &self,
        client: &Client,
        timing: Timing,
        within: Duration,
    ) -> Option<LeaseManager> {
        let manager = self.manager(client, timing).await.ok()?;
        match tokio::time::timeout(within, manager.changed()).await {
            Ok(Ok(true)) => Some(manager),
            _ => None,
        }
    }

    /// Keeps `manager`'s Lease renewed in the background until [`Held::release`]; giving it
    /// up is reported on `lost`.
    pub(crate) fn hold(
        &self,
        client: &Client,
        manager: LeaseManager,
        timing: Timing,
        lost: Lost,
    ) -> Held {
        let manager = Arc::new(manager);
        let renewing = manager.clone();
        let leases = Api::<LeaseObject>::namespaced(client.clone(), &self.namespace);
        let (name, identity) = (self.name.clone(), self.identity.clone());
        let deadline = timing.renew_deadline();
        let renew = tokio::spawn(async move {
            // A renewal that fails (the API server restarting) is tried again every second;
            // the Lease is given up when none has gone through for the deadline.
            let mut failing_since: Option<tokio::time::Instant> = None;
            loop {
                let renewed = tokio::select! {
                    r = renewing.changed() => Some(r),
                    () = tokio::time::sleep(RETRY * 2), if failing_since.is_some() => None,
                };
                match renewed {
                    Some(Ok(true)) => failing_since = None,
                    Some(Ok(false)) => {
                        let _ = lost.try_send(Error::LeaseTaken(name.clone()));
                        return;
                    }
                    Some(Err(e)) => {
                        failing_since.get_or_insert_with(tokio::time::Instant::now);
                        tracing::warn!(lease = %name, error = %e, "cannot renew the Lease; trying again");
                        tokio::time::sleep(RETRY).await;
                    }
                    // Renewing for a while without an error: the API server may be back.
                    None if holds(&leases, &name, &identity).await => failing_since = None,
                    None => {}
                }
                if failing_since.is_some_and(|t| t.elapsed() >= deadline) {
                    let _ = lost.try_send(Error::LeaseNotRenewed(name.clone(), deadline));
                    return;
                }
            }
        });
        Held {
            manager,
            renew,
            name: self.name.clone(),
        }
    }
}

/// Whether nobody holds the Lease.
fn free(l: &LeaseObject) -> bool {
    l.spec
        .as_ref()
        .and_then(|s| s.holder_identity.as_deref())
        .is_none_or(str::is_empty)
}

/// A Lease this replica holds: renewed in the background until [`Held::release`].
pub(crate) struct Held {
    manager: Arc<LeaseManager>,
    renew: tokio::task::JoinHandle<()>,
    name: String,
}

impl Held {
    /// Stops renewing and releases the Lease (within 5 s; past it, the Lease expires on its
    /// own).
    pub(crate) async fn release(self) {
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
    let read = tokio::time::timeout(RETRY, leases.get(name)).await;
    matches!(read, Ok(Ok(l)) if l.spec.as_ref().and_then(|s| s.holder_identity.as_deref()) == Some(identity))
}
