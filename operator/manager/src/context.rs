//! What every reconcile shares ([`Context`]): the manager's client, the identities it acts
//! with for Instances ([`Tenants`]), the OperatorVersions (a reflector's store) and their
//! compiled packages, the cluster side of running tasks ([`Objects`]), events, metrics, the
//! backoff of failing Instances and the [`Settings`].

use kudo_pkg::render::Prepared;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use kube::runtime::events::EventType;
use kube::runtime::reflector::{self, Store};
use kube::{Client, Resource, ResourceExt};
use kudo_pkg::Package;
use kudo_policy::change::Version;

use crate::backoff::{Backoff, Retry};
use crate::bounded;
use crate::digest::digest_key;
use crate::memo::Memo;
use crate::metrics::Metrics;
use crate::objects::Objects;
use crate::pod_files::PodFiles;
use crate::tenant::Tenants;
use kudo_crd::labels;
use kudo_crd::reference::{Identity, OperatorVersionRef, resolve};
use kudo_crd::v1beta2::{Instance, OperatorVersion};

/// Timings.
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    /// How soon an Instance whose plan waits on an object is looked at again.
    pub progress: Duration,
    /// First retry delay of a failing step (doubled each time, up to `max_backoff`).
    pub backoff: Duration,
    /// Longest retry delay.
    pub max_backoff: Duration,
    /// How often an idle Instance is reconciled anyway.
    pub resync: Duration,
    /// How long a step RBAC refuses is retried before it fails its plan: a RoleBinding just
    /// made reaches the API server's authorizer within about a second.
    pub forbidden_grace: Duration,
    /// How many times a Pipe Pod's init container may fail before its step fails for good
    /// (`--pipe-max-restarts`): a command that failed this often (no network, a missing tool)
    /// will not succeed by waiting, and KUDO would wait forever.
    pub pipe_max_restarts: i64,
    /// Most Instances reconciled at once (`--concurrency`; never two of one Instance): each
    /// holds API server connections and a core while it renders, so 500 Instances at once
    /// meant 500 connections (issue 38). 0: no limit.
    pub concurrency: u16,
    /// Longest time between two drift checks of an Instance whose plan is COMPLETE
    /// (`--drift-interval`; `crate::drift`). Zero: never checked.
    pub drift_interval: Duration,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            progress: Duration::from_secs(5),
            backoff: Duration::from_secs(5),
            max_backoff: Duration::from_secs(300),
            resync: Duration::from_secs(300),
            forbidden_grace: Duration::from_secs(3),
            pipe_max_restarts: 3,
            concurrency: 8,
            drift_interval: Duration::from_secs(300),
        }
    }
}

/// An OperatorVersion's package, rebuilt and compiled once per resourceVersion.
pub(crate) struct Compiled {
    /// The package, rebuilt from the OperatorVersion, prepared for rendering: each template is
    /// parsed once, on its first render, and reused by every later reconcile of every Instance
    /// of this OperatorVersion.
    pub prepared: Prepared<'static>,
    /// Its parameters and plans, as the policy reads them.
    pub version: Version,
}

impl Compiled {
    /// The package.
    pub fn pkg(&self) -> &Package {
        self.prepared.package()
    }
}

/// Why the OperatorVersion an Instance names cannot be run: the Instance's `Ready` condition
/// says it (reason `OperatorVersionMissing`), and a deleted Instance loses its finalizer.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Unavailable {
    /// No OperatorVersion by either of its names.
    #[error("OperatorVersion {0} does not exist (install the operator version)")]
    Missing(OperatorVersionRef),
    /// Its package cannot be rebuilt from it.
    #[error("OperatorVersion {namespace}/{name} is not a valid package: {source}")]
    NotAPackage {
        /// Its namespace.
        namespace: String,
        /// Its name.
        name: String,
        /// Why.
        source: kudo_diag::Error,
    },
    /// Its parameters cannot be read as kudo's policy reads them.
    #[error("OperatorVersion {namespace}/{name} has an invalid parameter schema: {source}")]
    InvalidSchema {
        /// Its namespace.
        namespace: String,
        /// Its name.
        name: String,
        /// Why.
        source: kudo_crd::package::Unusable,
    },
}

/// What reconcile needs: the client, the identities it acts with for Instances, the
/// OperatorVersions, events, metrics.
pub struct Context {
    pub(crate) client: Client,
    pub(crate) tenants: Tenants,
    operator_versions: Store<OperatorVersion>,
    pub(crate) objects: Objects,
    pub(crate) events: crate::events::Publisher,
    /// The metrics.
    pub metrics: Metrics,
    pub(crate) settings: Settings,
    compiled: Memo<Arc<Compiled>>,
    /// The back-off of failing Instances and the log rule of their failures.
    failures: Backoff,
    /// By `instance/plan/phase/step`: when RBAC first refused the step (while it still does).
    forbidden: Mutex<HashMap<String, Instant>>,
    /// By Instance: the resourceVersion of the manager's last status write, so that a
    /// reconcile of an older copy (the watch has not delivered the write yet) acts on nothing.
    written: Mutex<HashMap<String, u64>>,
    /// By Instance whose plan waits: what it waits on (the plan's message, its numbers left
    /// out, as a digest) and since when ([`Context::wait_delay`]).
    waits: Mutex<HashMap<String, (u64, Instant)>>,
    /// By Instance: when its drift was last checked, and for which generation.
    drift_checked: Mutex<HashMap<String, (Option<i64>, Instant)>>,
    /// By Instance: the objects its last drift check found holding what kudo applied, each
    /// with its resourceVersion then and the digest of what kudo applies ([`Clean`]).
    drift_clean: Mutex<HashMap<String, Clean>>,
    pub(crate) clock: fn() -> String,
    /// Which Instances this replica runs (`--shards`); `None`: all of them.
    pub(crate) gate: Option<Arc<crate::shards::Gate>>,
    /// The key of the digests of secret values in `status.applied`
    /// ([`crate::DIGEST_KEY_ENV`]).
    pub(crate) digest_key: Vec<u8>,
    /// The image policy of the manager's namespace ([`crate::images`]).
    pub(crate) image_policy: crate::images::Policy,
}

/// By object (`apiVersion/kind/namespace/name`): what kudo last saw of it holding what kudo
/// applies ([`crate::drift`]).
pub(crate) type Clean = HashMap<String, Known>;

/// An object seen holding what kudo applies: by a drift check's dry run, or by the apply of a
/// plan's step (what the API server answered is what kudo applied).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Known {
    /// Its resourceVersion then.
    pub version: String,
    /// The digest of what kudo applies and of the rules drift ignores by
    /// ([`crate::drift::digest`]).
    pub digest: u64,
    /// When the request that saw it was sent: a list of resourceVersions sent before it tells
    /// nothing newer ([`crate::drift`]).
    pub at: Instant,
}

/// How long a plan waits the same way before it is looked at less often
/// ([`Context::wait_delay`]).
pub(crate) const PATIENCE: Duration = Duration::from_secs(60);

/// Most waiting Instances remembered ([`Context::wait_delay`]); past it, all are forgotten
/// (and looked at every `progress` again for a minute).
const MAX_WAITS_KEPT: usize = 65_536;

/// The delay before the next look at a plan that has waited the same way for `waited`:
/// `progress` for [`PATIENCE`], then twice `progress` for as long again, then four times.
pub(crate) fn patient_delay(progress: Duration, waited: Duration) -> Duration {
    if waited < PATIENCE {
        progress
    } else if waited < PATIENCE * 2 {
        progress * 2
    } else {
        progress * 4
    }
}

/// How often an Instance's drift is checked for `--drift-interval` `interval`: three quarters
/// of it. The lists of the objects' resourceVersions it reads are shared for up to a quarter
/// of it ([`drift_list_age`]), so a change is seen within `interval`, as when every object was
/// read at each check.
pub(crate) fn drift_period(interval: Duration) -> Duration {
    interval * 3 / 4
}

/// How long a list of resourceVersions is shared by drift checks: a quarter of `interval`.
pub(crate) fn drift_list_age(interval: Duration) -> Duration {
    interval / 4
}

fn now() -> String {
    k8s_openapi::jiff::Timestamp::now().to_string()
}

impl Context {
    /// A context over `client`, reading OperatorVersions from `operator_versions`.
    pub fn new(
        client: Client,
        operator_versions: Store<OperatorVersion>,
        settings: Settings,
    ) -> Context {
        Context {
            objects: Objects::new(client.clone()),
            tenants: Tenants::new(client.clone(), None),
            events: crate::events::Publisher::new(
                client.clone(),
                labels::MANAGER_FIELD_MANAGER,
                std::env::var("POD_NAME").ok(),
            ),
            client,
            operator_versions,
            metrics: Metrics::default(),
            settings,
            compiled: Memo::default(),
            failures: Backoff::new(settings.backoff, settings.max_backoff),
            forbidden: Mutex::default(),
            written: Mutex::default(),
            waits: Mutex::default(),
            drift_checked: Mutex::default(),
            drift_clean: Mutex::default(),
            clock: now,
            gate: None,
            digest_key: digest_key(),
            image_policy: crate::images::Policy::new(None),
        }
    }

    /// The same, checking the images plans run by the policy of namespace `home`
    /// ([`kudo_crd::labels::IMAGE_POLICY`]).
    pub fn with_image_policy(mut self, home: Option<String>) -> Context {
        self.image_policy = crate::images::Policy::new(home);
        self
    }

    /// The same, running only the Instances of the shards `gate` lets in (`--shards`).
    pub fn with_gate(mut self, gate: Arc<crate::shards::Gate>) -> Context {
        let (held, taken) = gate.metrics();
        self.metrics.register_shards(held, taken);
        self.gate = Some(gate);
        self
    }

    /// The same, acting for Instances that name no ServiceAccount as `name` of their namespace
    /// (`None`: with the manager's own identity).
    pub fn with_default_service_account(mut self, name: Option<String>) -> Context {
        self.tenants = Tenants::new(self.client.clone(), name);
        self
    }

    /// The same, Pipe files read by `files` (tests).
    pub fn with_pod_files(mut self, files: Arc<dyn PodFiles>) -> Context {
        self.objects = self.objects.with_files(files);
        self
    }

    /// The same, digesting secret values with `key` ([`crate::load_digest_key`]).
    pub fn with_digest_key(mut self, key: Vec<u8>) -> Context {
        self.digest_key = key;
        self
    }

    /// The same, with a fixed clock (tests).
    pub fn with_clock(mut self, clock: fn() -> String) -> Context {
        self.clock = clock;
        self
    }

    /// The compiled package of the OperatorVersion an Instance names, found by either of its
    /// names ([`kudo_crd::reference::resolve`]), or why there is none.
    pub(crate) fn compiled(
        &self,
        reference: &OperatorVersionRef,
    ) -> std::result::Result<Arc<Compiled>, Unavailable> {
        let ns = reference.namespace.as_str();
        let key = reflector::ObjectRef::<OperatorVersion>::new(&reference.name).within(ns);
        let ov = self
            .operator_versions
            .get(&key)
            .or_else(|| {
                let all = self.operator_versions.state();
                let here = all
                    .iter()
                    .filter(|o| o.metadata.namespace.as_deref() == Some(ns))
                    .filter_map(|o| Identity::of(o));
                let name = resolve(&reference.name, here)?.to_string();
                self.operator_versions
                    .get(&reflector::ObjectRef::new(&name).within(ns))
            })
            .ok_or_else(|| Unavailable::Missing(reference.clone()))?;
        let name = ov.name_any();
        let cache_key = format!("{ns}/{name}@{}", ov.resource_version().unwrap_or_default());
        if let Some(c) = self.compiled.get(&cache_key) {
            return Ok(c);
        }
        let pkg = kudo_crd::package::from_operator_version(&ov).map_err(|source| {
            Unavailable::NotAPackage {
                namespace: ns.into(),
                name: name.clone(),
                source,
            }
        })?;
        let version =
            kudo_crd::package::version(&ov).map_err(|source| Unavailable::InvalidSchema {
                namespace: ns.into(),
                name: name.clone(),
                source,
            })?;
        let c = Arc::new(Compiled {
            prepared: Prepared::from(pkg),
            version,
        });
        let older = format!("{ns}/{name}@");
        self.compiled
            .put(cache_key, c.clone(), |k| k.starts_with(&older));
        Ok(c)
    }

    /// Instance `key` failed with `fingerprint` (the failing steps and their messages, or the
    /// reconcile's error): when to try again and whether to log it ([`crate::backoff`]).
    pub(crate) fn failed(&self, key: &str, fingerprint: &str) -> Retry {
        self.failures.failed(key, fingerprint)
    }

    /// Whether a step RBAC refuses now (`refused`) was refused before, at least
    /// [`Settings::forbidden_grace`] ago; forgets the step once it is not refused.
    pub(crate) fn refused_too_long(&self, step: String, refused: bool) -> bool {
        let Ok(mut m) = self.forbidden.lock() else {
            return refused;
        };
        if !refused {
            m.remove(&step);
            return false;
        }
        match m.get(&step) {
            Some(since) => since.elapsed() >= self.settings.forbidden_grace,
            None => {
                m.insert(step, Instant::now());
                false
            }
        }
    }

    /// Records the resourceVersion `rv` of a status write of `inst` (`None`: no write).
    pub(crate) fn wrote(&self, inst: &Instance, rv: Option<String>) {
        let Some(rv) = rv.and_then(|v| v.parse::<u64>().ok()) else {
            return;
        };
        if let Ok(mut m) = self.written.lock() {
            m.insert(key(inst), rv);
        }
    }

    /// Whether `inst` is older than the manager's last status write of it: the watch has not
    /// delivered that write yet, and acting on this copy would run again a step the write
    /// ended (a failed Pipe task's Pod made again after its deletion, say). resourceVersions
    /// are etcd revisions, which only grow; one that is not a number is never behind.
    pub(crate) fn behind(&self, inst: &Instance) -> bool {
        let Some(rv) = inst
            .metadata
            .resource_version
            .as_deref()
            .and_then(|v| v.parse::<u64>().ok())
        else {
            return false;
        };
        self.written
            .lock()
            .ok()
            .and_then(|m| m.get(&key(inst)).copied())
            .is_some_and(|last| rv < last)
    }

    /// Forgets `inst` (it is gone).
    pub(crate) fn forget(&self, inst: &Instance) {
        if let Ok(mut m) = self.written.lock() {
            m.remove(&key(inst));
        }
        if let Ok(mut m) = self.drift_checked.lock() {
            m.remove(&key(inst));
        }
        if let Ok(mut m) = self.drift_clean.lock() {
            m.remove(&key(inst));
        }
    }

    /// The objects of `inst` its last drift check found holding what kudo applied.
    pub(crate) fn drift_clean(&self, inst: &Instance) -> Clean {
        self.drift_clean
            .lock()
            .ok()
            .and_then(|m| m.get(&key(inst)).cloned())
            .unwrap_or_default()
    }

    /// Records what the drift check of `inst` found holding what kudo applied.
    pub(crate) fn set_drift_clean(&self, inst: &Instance, clean: Clean) {
        if let Ok(mut m) = self.drift_clean.lock() {
            m.insert(key(inst), clean);
        }
    }

    /// Adds to what is known of `inst`'s objects the ones its plan just applied, each with
    /// what the API server stored: its first drift check then sends no dry run for them
    /// ([`crate::drift`]). Nothing is kept when drift is never checked (`--drift-interval 0`).
    pub(crate) fn drift_seed(&self, inst: &Instance, applied: Vec<(String, Known)>) {
        if applied.is_empty() || self.settings.drift_interval.is_zero() {
            return;
        }
        if let Ok(mut m) = self.drift_clean.lock() {
            m.entry(key(inst)).or_default().extend(applied);
        }
    }

    /// How long until the drift of `inst` is due to be checked ([`drift_period`] after the
    /// last check of its current generation); `None`: due now.
    pub(crate) fn drift_due(&self, inst: &Instance) -> Option<Duration> {
        let m = self.drift_checked.lock().ok()?;
        let (generation, at) = m.get(&key(inst))?;
        if *generation != inst.metadata.generation {
            return None;
        }
        drift_period(self.settings.drift_interval)
            .checked_sub(at.elapsed())
            .filter(|d| !d.is_zero())
    }

    /// The drift of `inst` was checked now.
    pub(crate) fn drift_checked(&self, inst: &Instance) {
        if let Ok(mut m) = self.drift_checked.lock() {
            m.insert(key(inst), (inst.metadata.generation, Instant::now()));
        }
    }

    /// Instance `key` progressed: its next failure is a first one.
    pub(crate) fn reset_backoff(&self, key: &str) {
        self.failures.reset(key);
    }

    /// How soon Instance `key`, whose plan waits saying `message`, is looked at again:
    /// [`Settings::progress`] (5 s) through the first [`PATIENCE`] of the same wait, then
    /// twice, then four times as long ([`patient_delay`]). The same wait: the same message with
    /// its numbers left out, so a restart count or an event's count going up is the same
    /// wait, and another reason or another object is a new one. A workload crashing for
    /// hours is looked at every 20 s instead of every 5 s, and does not keep the reconcile
    /// slots (`--concurrency`) from the Instances that are new.
    pub(crate) fn wait_delay(&self, key: &str, message: &str) -> Duration {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        message
            .chars()
            .filter(|c| !c.is_ascii_digit())
            .for_each(|c| c.hash(&mut h));
        let digest = h.finish();
        let Ok(mut m) = self.waits.lock() else {
            return self.settings.progress;
        };
        let since = match m.get(key) {
            Some((d, since)) if *d == digest => *since,
            _ => {
                if m.len() >= MAX_WAITS_KEPT {
                    m.clear();
                }
                let now = Instant::now();
                m.insert(key.to_string(), (digest, now));
                now
            }
        };
        patient_delay(self.settings.progress, since.elapsed())
    }

    /// Instance `key` no longer waits (a step completed, the plan ended or fails).
    pub(crate) fn stop_waiting(&self, key: &str) {
        if let Ok(mut m) = self.waits.lock() {
            m.remove(key);
        }
    }

    pub(crate) async fn event(
        &self,
        inst: &Instance,
        type_: EventType,
        reason: &str,
        note: String,
    ) {
        self.publish(&inst.object_ref(&()), type_, reason, "RunPlan", note)
            .await;
    }

    /// Publishes an Event on `object` (an Instance, a Rollout); a failure is logged.
    pub(crate) async fn publish(
        &self,
        object: &k8s_openapi::api::core::v1::ObjectReference,
        type_: EventType,
        reason: &str,
        action: &str,
        note: String,
    ) {
        // The API server refuses an Event whose note is over 1 kB.
        let note = bounded::cut(&note, bounded::EVENT_NOTE);
        if let Err(e) = self
            .events
            .publish(object, type_, reason, action, &note)
            .await
        {
            let name = object.name.as_deref().unwrap_or_default();
            tracing::warn!(object = %name, error = %e, "cannot publish event");
        }
    }
}

/// `namespace/name`: the key of an Instance in logs and in the backoff.
pub(crate) fn key(inst: &Instance) -> String {
    format!(
        "{}/{}",
        inst.namespace().unwrap_or_default(),
        inst.name_any()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_wait_is_looked_at_less_often() {
        let five = Duration::from_secs(5);
        let at = |s: u64| patient_delay(five, Duration::from_secs(s));
        assert_eq!(
            [at(0), at(59), at(60), at(119), at(120), at(7200)],
            [five, five, five * 2, five * 2, five * 4, five * 4]
        );
    }

    #[tokio::test]
    async fn the_same_wait_is_the_same_message_but_for_its_numbers() {
        let (client, _) = kudo_testkit::mock_api::client("ns", |_| (404, serde_json::json!({})));
        let ctx = Context::new(client, reflector::store().0, Settings::default());
        let crash = |n: u32| {
            format!("Deployment a: Pod a-1: container main: CrashLoopBackOff ({n} restarts)")
        };
        let first = ctx.wait_delay("ns/a", &crash(1));
        assert_eq!(first, Duration::from_secs(5));
        let since = |ctx: &Context| ctx.waits.lock().unwrap()["ns/a"].1;
        let start = since(&ctx);
        ctx.wait_delay("ns/a", &crash(7));
        assert_eq!(
            since(&ctx),
            start,
            "a restart count going up is the same wait"
        );
        ctx.wait_delay("ns/a", "Deployment a: ImagePullBackOff");
        assert!(since(&ctx) > start, "another reason is a new wait");
        ctx.stop_waiting("ns/a");
        assert!(ctx.waits.lock().unwrap().is_empty());
    }
}
