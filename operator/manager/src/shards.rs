//! Replicas that share the work (`kudo-manager --shards N`): each Instance and Rollout belongs
//! to one of N shards ([`kudo_crd::shard::of`], a stable hash of its namespace and name), and
//! a replica runs the objects of the shards whose Lease it holds
//! ([`kudo_crd::shard::lease_name`], one `coordination.k8s.io` Lease per shard, kept with
//! kube-lease-manager: Kubernetes is the engine, nothing home-made beside it).
//!
//! - **Sharing evenly.** Each replica also holds a Lease of its own
//!   ([`kudo_crd::shard::member_lease_name`]); every [`LOOK`] it lists the Leases of kudo's
//!   namespace, counts the live replicas, and holds its fair share, `ceil(N / replicas)`:
//!   it takes free or expired shards while it holds fewer, and hands one over (its reconciles
//!   finished first) while it holds more.
//! - **Never two at once.** A replica reconciles an object only while it holds its shard
//!   ([`Gate::enter`]); handing a shard over waits for its reconciles under way. A Lease that
//!   cannot be renewed stops the process before the Lease expires, as leader election does.
//!   A replica that dies leaves its Leases to expire ([`lease::SHARD`]: 6 to 10 s), and the
//!   others take them within [`LOOK`] more. A plan step in flight is neither lost nor applied
//!   twice: the status records every COMPLETE step, and the step in flight is applied again
//!   by server-side apply, which changes nothing already applied.
//! - **One count.** The count is in each shard Lease's name (the leader's Lease of
//!   `--leader-elect` counts as the one shard of 1). After taking a Lease, a replica lists
//!   them again (a consistent read) and refuses to run ([`Error::ShardCount`]) when a live one
//!   has another count: of two replicas that disagree, the one that took its Lease later
//!   always sees the other's, so they never both run.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::coordination::v1::Lease as LeaseObject;
use kube::api::{Api, ListParams};
use kube::{Client, ResourceExt};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::gauge::Gauge;
use tokio::sync::{OwnedRwLockReadGuard, RwLock};

use crate::error::{Error, Result};
use crate::lease::{self, Held, Lost, Named};
use kudo_crd::shard;

/// How often a replica looks at the Leases: takes free shards, hands surplus ones over.
pub(crate) const LOOK: Duration = Duration::from_secs(2);
/// Longest wait to take a shard's Lease seen free or expired.
const TAKE_WITHIN: Duration = Duration::from_secs(5);

/// How the work is shared: this replica's part in it.
#[derive(Debug, Clone)]
pub struct Shards {
    /// How many shards (every replica must be started with the same count).
    pub count: u32,
    /// The Leases' names start with this (`--lease-name`).
    pub base: String,
    /// The Leases' namespace.
    pub namespace: String,
    /// This replica's identity (its Pod name).
    pub identity: String,
}

/// Which shards this replica runs now; asked before every reconcile.
pub struct Gate {
    count: u32,
    /// By shard: whether this replica runs it. A reconcile holds a read guard while it runs;
    /// handing the shard over takes the write lock, so it waits for them.
    owned: Vec<Arc<RwLock<bool>>>,
    /// Shards just taken: their objects are reconciled at once.
    taken: tokio::sync::mpsc::UnboundedSender<u32>,
    held: Gauge,
    acquired: Counter,
}

/// A reconcile allowed to run: the shard is not handed over before it ends.
pub type Entry = OwnedRwLockReadGuard<bool>;

impl Gate {
    /// A gate over `count` shards, none held yet, and the stream of shards taken.
    pub fn new(count: u32) -> (Arc<Gate>, tokio::sync::mpsc::UnboundedReceiver<u32>) {
        let (taken, rx) = tokio::sync::mpsc::unbounded_channel();
        let gate = Gate {
            count: count.max(1),
            owned: (0..count.max(1))
                .map(|_| Arc::new(RwLock::new(false)))
                .collect(),
            taken,
            held: Gauge::default(),
            acquired: Counter::default(),
        };
        (Arc::new(gate), rx)
    }

    /// The shard of `namespace/name`.
    pub fn shard(&self, namespace: &str, name: &str) -> u32 {
        shard::of(namespace, name, self.count)
    }

    /// Whether this replica runs `namespace/name` now: `Some` (hold it while reconciling) or
    /// `None` (another replica runs it, or its shard is being handed over).
    pub fn enter(&self, namespace: &str, name: &str) -> Option<Entry> {
        let lock = self
            .owned
            .get(self.shard(namespace, name) as usize)?
            .clone();
        let guard = lock.try_read_owned().ok()?;
        (*guard).then_some(guard)
    }

    /// Runs shard `index` from now on, and reconciles its objects.
    async fn own(&self, index: u32) {
        if let Some(lock) = self.owned.get(index as usize) {
            *lock.write().await = true;
            self.held.inc();
            self.acquired.inc();
            let _ = self.taken.send(index);
        }
    }

    /// Stops running shard `index`, once its reconciles under way have ended.
    async fn drain(&self, index: u32) {
        if let Some(lock) = self.owned.get(index as usize) {
            let mut owned = lock.write().await;
            if *owned {
                *owned = false;
                self.held.dec();
            }
        }
    }

    /// The gauge of shards held and the counter of shards taken, for `/metrics`.
    pub(crate) fn metrics(&self) -> (Gauge, Counter) {
        (self.held.clone(), self.acquired.clone())
    }
}

/// What a replica holds: its own Lease and its shards'.
pub(crate) struct Sharing {
    client: Client,
    set: Shards,
    gate: Arc<Gate>,
    lost: Lost,
    member: Held,
    held: BTreeMap<u32, Held>,
    leases: Api<LeaseObject>,
}

impl Sharing {
    /// Joins the replicas: refuses when a live shard Lease has another count, then takes this
    /// replica's own Lease (no shard yet: [`Sharing::look`] takes them).
    pub(crate) async fn join(
        client: &Client,
        set: Shards,
        gate: Arc<Gate>,
        lost: Lost,
    ) -> Result<Sharing> {
        let leases: Api<LeaseObject> = Api::namespaced(client.clone(), &set.namespace);
        let live = Live::read(&leases, &set).await?;
        live.agree(&set)?;
        let member = Named {
            name: shard::member_lease_name(&set.base, &set.identity),
            namespace: set.namespace.clone(),
            identity: set.identity.clone(),
        };
        let Some(manager) = member.take(client, lease::SHARD, TAKE_WITHIN * 3).await else {
            return Err(Error::IdentityTaken(member.name));
        };
        let held_member = member.hold(client, manager, lease::SHARD, lost.clone());
        tracing::info!(shards = set.count, identity = %set.identity, "sharing the Instances with the other replicas");
        Ok(Sharing {
            client: client.clone(),
            set,
            gate,
            lost,
            member: held_member,
            held: BTreeMap::new(),
            leases,
        })
    }

    /// One look at the Leases: refuses another count, then takes or hands over shards to hold
    /// this replica's fair share.
    pub(crate) async fn look(&mut self) -> Result<()> {
        let live = Live::read(&self.leases, &self.set).await?;
        live.agree(&self.set)?;
        let fair = self.set.count.div_ceil(live.replicas.max(1)) as usize;
        if self.held.len() > fair {
            if let Some((&index, _)) = self.held.iter().next_back() {
                self.hand_over(index, fair, live.replicas).await;
            }
            return Ok(());
        }
        // Free or expired shards, from a point of this replica's own, so that replicas
        // starting together try different ones first.
        let start = shard::of("", &self.set.identity, self.set.count);
        for k in 0..self.set.count {
            if self.held.len() >= fair {
                break;
            }
            let index = (start + k) % self.set.count;
            if self.held.contains_key(&index) || live.shards.contains_key(&index) {
                continue;
            }
            self.take(index).await?;
        }
        Ok(())
    }

    /// Takes shard `index` (seen free or expired), checks again that no live Lease has another
    /// count, then runs it.
    async fn take(&mut self, index: u32) -> Result<()> {
        let named = self.named(index);
        let Some(manager) = named.take(&self.client, lease::SHARD, TAKE_WITHIN).await else {
            // Another replica was faster.
            return Ok(());
        };
        let held = named.hold(&self.client, manager, lease::SHARD, self.lost.clone());
        // Of two replicas that disagree on the count, the one that took its Lease later sees
        // the other's here (a consistent list).
        let agreed = match Live::read(&self.leases, &self.set).await {
            Ok(live) => live.agree(&self.set),
            Err(e) => Err(e),
        };
        if let Err(e) = agreed {
            held.release().await;
            return Err(e);
        }
        self.gate.own(index).await;
        self.held.insert(index, held);
        tracing::info!(shard = index, lease = %named.name, held = self.held.len(), "running shard");
        Ok(())
    }

    /// Hands shard `index` over: its reconciles under way end first, then its Lease is
    /// released for a replica holding fewer.
    async fn hand_over(&mut self, index: u32, fair: usize, replicas: u32) {
        let Some(held) = self.held.remove(&index) else {
            return;
        };
        self.gate.drain(index).await;
        held.release().await;
        tracing::info!(
            shard = index,
            fair,
            replicas,
            "handed a shard over to share the work evenly"
        );
    }

    fn named(&self, index: u32) -> Named {
        Named {
            name: shard::lease_name(&self.set.base, index, self.set.count),
            namespace: self.set.namespace.clone(),
            identity: self.set.identity.clone(),
        }
    }

    /// Stops: every shard handed over (their reconciles have ended), then this replica's own
    /// Lease, so that the others take the shards at once.
    pub(crate) async fn leave(mut self) {
        let indexes: Vec<u32> = self.held.keys().copied().collect();
        for index in indexes {
            if let Some(held) = self.held.remove(&index) {
                self.gate.drain(index).await;
                held.release().await;
            }
        }
        self.member.release().await;
    }
}

/// What one list of the Leases says: the live shard Leases of the replicas' count, by index
/// (and their holder), the first live one of another count, and the live replicas.
struct Live {
    shards: BTreeMap<u32, String>,
    other: Option<(String, u32, String)>,
    replicas: u32,
}

impl Live {
    /// Lists the Leases of kudo's namespace (a consistent read: what the API server holds now).
    async fn read(leases: &Api<LeaseObject>, set: &Shards) -> Result<Live> {
        let list = leases.list(&ListParams::default()).await?;
        let now = k8s_openapi::jiff::Timestamp::now();
        let mut live = Live {
            shards: BTreeMap::new(),
            other: None,
            replicas: 0,
        };
        for l in &list.items {
            let Some(holder) = holder_if_live(l, now) else {
                continue;
            };
            let name = l.name_any();
            // The leader's Lease (`--leader-elect`, one replica runs everything) is the one
            // shard of a count of 1.
            let parsed = if name == set.base {
                Some((0, 1))
            } else {
                shard::parse(&set.base, &name)
            };
            if let Some((index, count)) = parsed {
                if count == set.count {
                    live.shards.insert(index, holder);
                } else if live.other.is_none() {
                    live.other = Some((name, count, holder));
                }
            } else if shard::parse_member(&set.base, &name).is_some() {
                live.replicas += 1;
            }
        }
        Ok(live)
    }

    /// Refuses to run beside a live shard Lease of another count.
    fn agree(&self, set: &Shards) -> Result<()> {
        match &self.other {
            Some((lease, theirs, holder)) => Err(Error::ShardCount {
                ours: set.count,
                theirs: *theirs,
                lease: lease.clone(),
                holder: holder.clone(),
            }),
            None => Ok(()),
        }
    }
}

/// Refuses to lead (`--leader-elect`, the Lease `base` just taken) beside live shard Leases:
/// replicas started with `--shards` run Instances too.
pub(crate) async fn agree_as_leader(client: &Client, base: &str, namespace: &str) -> Result<()> {
    let set = Shards {
        count: 1,
        base: base.to_string(),
        namespace: namespace.to_string(),
        identity: String::new(),
    };
    let leases: Api<LeaseObject> = Api::namespaced(client.clone(), namespace);
    Live::read(&leases, &set).await?.agree(&set)
}

/// The holder of Lease `l` when it is held and not expired at `now`.
fn holder_if_live(l: &LeaseObject, now: k8s_openapi::jiff::Timestamp) -> Option<String> {
    let spec = l.spec.as_ref()?;
    let holder = spec.holder_identity.as_deref().filter(|h| !h.is_empty())?;
    let renewed = spec.renew_time.as_ref().or(spec.acquire_time.as_ref())?.0;
    let seconds = i64::from(spec.lease_duration_seconds?);
    let expires = renewed.checked_add(k8s_openapi::jiff::SignedDuration::from_secs(seconds));
    expires.is_ok_and(|e| e > now).then(|| holder.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::coordination::v1::LeaseSpec;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
    use k8s_openapi::jiff::{SignedDuration, Timestamp};

    fn lease(holder: Option<&str>, renewed_ago: i64, duration: i32) -> LeaseObject {
        let now = Timestamp::now();
        LeaseObject {
            spec: Some(LeaseSpec {
                holder_identity: holder.map(str::to_string),
                renew_time: Some(MicroTime(
                    now.checked_sub(SignedDuration::from_secs(renewed_ago))
                        .expect("a time"),
                )),
                lease_duration_seconds: Some(duration),
                ..LeaseSpec::default()
            }),
            ..LeaseObject::default()
        }
    }

    #[test]
    fn a_lease_is_live_while_held_and_not_expired() {
        let now = Timestamp::now();
        assert_eq!(
            holder_if_live(&lease(Some("a"), 3, 10), now).as_deref(),
            Some("a")
        );
        assert_eq!(holder_if_live(&lease(Some("a"), 11, 10), now), None);
        assert_eq!(holder_if_live(&lease(None, 1, 10), now), None);
        assert_eq!(holder_if_live(&lease(Some(""), 1, 10), now), None);
        assert_eq!(holder_if_live(&LeaseObject::default(), now), None);
    }

    #[tokio::test]
    async fn the_gate_lets_in_only_the_shards_held_and_waits_for_them_on_hand_over() {
        let (gate, mut taken) = Gate::new(3);
        let (ns, name) = (0..100)
            .map(|i| ("fleet".to_string(), format!("i{i}")))
            .find(|(ns, n)| gate.shard(ns, n) == 1)
            .expect("an Instance of shard 1");
        assert!(gate.enter(&ns, &name).is_none(), "no shard held yet");
        gate.own(1).await;
        assert_eq!(taken.recv().await, Some(1));
        let entry = gate.enter(&ns, &name).expect("shard 1 is held");
        // Handing over waits for the reconcile under way; meanwhile nothing new enters.
        let draining = {
            let gate = gate.clone();
            tokio::spawn(async move { gate.drain(1).await })
        };
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(
            !draining.is_finished(),
            "the hand-over waits for the reconcile"
        );
        assert!(
            gate.enter(&ns, &name).is_none(),
            "nothing enters while it drains"
        );
        drop(entry);
        draining.await.expect("drained");
        assert!(gate.enter(&ns, &name).is_none());
        assert_eq!(gate.held.get(), 0);
        assert_eq!(gate.acquired.get(), 1);
    }
}
