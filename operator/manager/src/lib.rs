//! `kudo-manager`: the manager, which runs an Instance's plans when it changes.
//!
//! A [`kube::runtime::Controller`] on Instances calls [`reconcile`]; OperatorVersions come from
//! a reflector (a change to one reconciles every Instance again). Each reconcile:
//! 1. adds the finalizer [`labels::FINALIZER`] to a new Instance;
//! 2. rebuilds the OperatorVersion's package ([`kudo_crd::package::from_operator_version`]) and
//!    the effective parameters (`kudo-pkg`'s defaults and validation, as the CLI);
//! 3. starts the plan the change needs ([`plan::select`]: `deploy`, a triggered plan, the
//!    `trigger`'s plan, `upgrade`), recording it in `status.activePlan` and what it runs for in
//!    `status.applied`;
//! 4. runs the steps that may run now ([`plan::runnable`]), each through `tasks::run_step`,
//!    writing the status after every round that completed a step, so a restarted manager
//!    resumes from the status and never runs a COMPLETE step again;
//! 5. on delete, runs the `cleanup` plan (when the operator has one), then removes the
//!    finalizer.
//!
//! Steps act with the rights of a ServiceAccount of the Instance's namespace, by impersonation
//! ([`Tenants`]: `spec.serviceAccountName`, else `--default-service-account`); the manager's own
//! identity only watches kudo's kinds and writes their status, finalizers, events and Lease. A
//! step that RBAC refuses is retried for [`Settings::forbidden_grace`] (a binding just made
//! takes a moment to count), then fails its plan, naming the object and the ServiceAccount
//! (`docs/tenancy.md`).
//!
//! Status goes through server-side apply on the status subresource (field manager
//! `kudo-manager`), with KUDO's statuses per plan, phase and step and a `Ready` condition.
//! Failures become events and metrics ([`Metrics`]); retries back off exponentially.

mod child;
mod health;
mod memo;
mod metrics;
mod pipe;
mod serve;
mod tasks;
mod tenant;
mod undeclared;

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, ListParams, Patch, PatchParams};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::events::{Event, EventType, Recorder, Reporter};
use kube::runtime::reflector::{self, Store};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Client, Resource, ResourceExt};
use kudo_pkg::Package;
use kudo_pkg::change::Version;
use serde_json::{Value, json};

pub use metrics::Metrics;
pub use pipe::{FileError, PodFiles};
pub use serve::{Lease, Options, serve};
pub use tenant::{InvalidName, ServiceAccount, Tenant, Tenants};

use kudo_crd::common::{Condition, InstanceStatus};
use kudo_crd::labels;
use kudo_crd::plan::{self, CLEANUP, ExecStatus, Refusal, Start};
use kudo_crd::v1beta2::{Instance, OperatorVersion};
use memo::Memo;
use tasks::{Objects, Outcome, StepRef};

/// The manager's errors: only the API server's. Everything about an Instance itself (a missing
/// OperatorVersion, invalid parameters, a failing step) is written to its status instead.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A request to the API server failed.
    #[error("Kubernetes API request failed: {0}")]
    Kube(#[from] kube::Error),
    /// An Instance without a namespace: the CRD is namespaced, so this is a bug.
    #[error("internal error: Instance {0} has no namespace; this is a bug in kudo-manager")]
    NoNamespace(String),
    /// The Instance CRD is not installed.
    #[error("the Instance CRD (instances.kudo.dev) is not installed: run `kudo init` first ({0})")]
    NoCrd(kube::Error),
    /// The health and metrics server cannot listen.
    #[error("cannot serve /healthz and /metrics on {0}: {1}")]
    Serve(std::net::SocketAddr, std::io::Error),
    /// Leader election failed.
    #[error("leader election failed: {0}")]
    LeaderElection(String),
    /// Another replica took the lease.
    #[error("lost leadership: another replica runs the plans now")]
    LeadershipLost,
}

impl Error {
    /// The `error` label of the failure metric.
    pub fn metric_label(&self) -> &'static str {
        match self {
            Error::Kube(_) => "kube",
            Error::NoNamespace(_) => "internal",
            Error::NoCrd(_) => "no_crd",
            Error::Serve(..) => "serve",
            Error::LeaderElection(_) | Error::LeadershipLost => "leader_election",
        }
    }
}

/// `Result` with the manager's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Longest Event note the API server accepts (events.k8s.io/v1: 1 kB).
const MAX_EVENT_NOTE: usize = 1024;

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
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            progress: Duration::from_secs(5),
            backoff: Duration::from_secs(5),
            max_backoff: Duration::from_secs(300),
            resync: Duration::from_secs(300),
            forbidden_grace: Duration::from_secs(3),
        }
    }
}

/// An OperatorVersion's package, rebuilt and compiled once per resourceVersion.
struct Compiled {
    pkg: Package,
    version: Version,
}

/// What reconcile needs: the client, the identities it acts with for Instances, the
/// OperatorVersions, events, metrics.
pub struct Context {
    client: Client,
    tenants: Tenants,
    operator_versions: Store<OperatorVersion>,
    objects: Objects,
    recorder: Recorder,
    /// The metrics.
    pub metrics: Metrics,
    settings: Settings,
    compiled: Memo<Arc<Compiled>>,
    failures: Mutex<HashMap<String, u32>>,
    /// By `instance/plan/phase/step`: when RBAC first refused the step (while it still does).
    forbidden: Mutex<HashMap<String, Instant>>,
    clock: fn() -> String,
    /// The key of the digests of secret values in `status.applied` ([`DIGEST_KEY_ENV`]).
    digest_key: Vec<u8>,
}

/// The environment variable that may give the key of the digests `status.applied` records of
/// `writeOnly` values (at least 16 bytes); it wins over [`DIGEST_SECRET`].
pub const DIGEST_KEY_ENV: &str = "KUDO_DIGEST_KEY";

/// The Secret (in kudo's namespace) holding the manager's digest key, key `key`: made with 32
/// random bytes by the first manager that starts, read by every later one, so that digests
/// survive restarts and failovers. Readers of Instances cannot read it.
pub const DIGEST_SECRET: &str = labels::DIGEST_SECRET;

fn env_digest_key() -> Option<Vec<u8>> {
    std::env::var(DIGEST_KEY_ENV)
        .ok()
        .filter(|k| k.len() >= 16)
        .map(String::into_bytes)
}

/// A random key, with a warning: digests then change with every process, so every Instance with
/// secret values runs their trigger plans once after a restart.
fn random_digest_key(why: &str) -> Vec<u8> {
    tracing::warn!(
        "secret values are digested with a random key ({why}): a restart runs their trigger plans again"
    );
    kudo_pkg::secrets::random_key()
}

/// The key of a context until [`Context::with_digest_key`] gives the loaded one: no warning
/// here, [`load_digest_key`] warns when it cannot load one.
fn digest_key() -> Vec<u8> {
    env_digest_key().unwrap_or_else(kudo_pkg::secrets::random_key)
}

/// The key of the digests of secret values: [`DIGEST_KEY_ENV`], else the Secret
/// [`DIGEST_SECRET`] of `home` (made when missing), else a random key.
pub async fn load_digest_key(client: &Client, home: Option<&str>) -> Vec<u8> {
    if let Some(k) = env_digest_key() {
        return k;
    }
    let Some(ns) = home else {
        return random_digest_key("no namespace to keep it in");
    };
    let api: Api<Secret> = Api::namespaced(client.clone(), ns);
    let read = |s: Secret| {
        s.data
            .and_then(|d| d.get("key").map(|b| b.0.clone()))
            .filter(|k| k.len() >= 16)
    };
    for _ in 0..3 {
        match api.get_opt(DIGEST_SECRET).await {
            Ok(Some(s)) => {
                if let Some(k) = read(s) {
                    return k;
                }
                return random_digest_key(&format!("Secret {ns}/{DIGEST_SECRET} holds no key"));
            }
            Ok(None) => {
                let key = kudo_pkg::secrets::random_key();
                let secret = Secret {
                    metadata: kube::api::ObjectMeta {
                        name: Some(DIGEST_SECRET.into()),
                        namespace: Some(ns.into()),
                        labels: Some(
                            [("app.kubernetes.io/part-of".to_string(), "kudo".to_string())].into(),
                        ),
                        ..Default::default()
                    },
                    immutable: Some(true),
                    data: Some([("key".to_string(), k8s_openapi::ByteString(key.clone()))].into()),
                    ..Default::default()
                };
                match api.create(&Default::default(), &secret).await {
                    Ok(_) => return key,
                    // Another replica made it first: read theirs.
                    Err(kube::Error::Api(s)) if s.code == 409 => continue,
                    Err(e) => {
                        return random_digest_key(&format!(
                            "cannot create Secret {ns}/{DIGEST_SECRET}: {e}"
                        ));
                    }
                }
            }
            Err(e) => {
                return random_digest_key(&format!("cannot read Secret {ns}/{DIGEST_SECRET}: {e}"));
            }
        }
    }
    random_digest_key(&format!("Secret {ns}/{DIGEST_SECRET} keeps changing"))
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
        let reporter = Reporter {
            controller: labels::MANAGER_FIELD_MANAGER.into(),
            instance: std::env::var("POD_NAME").ok(),
        };
        Context {
            objects: Objects::new(client.clone()),
            tenants: Tenants::new(client.clone(), None),
            recorder: Recorder::new(client.clone(), reporter),
            client,
            operator_versions,
            metrics: Metrics::default(),
            settings,
            compiled: Memo::default(),
            failures: Mutex::default(),
            forbidden: Mutex::default(),
            clock: now,
            digest_key: digest_key(),
        }
    }

    /// The same, acting for Instances that name no ServiceAccount as `name` of their namespace
    /// (`None`: with the manager's own identity).
    pub fn with_default_service_account(mut self, name: Option<String>) -> Context {
        self.tenants = Tenants::new(self.client.clone(), name);
        self
    }

    /// The same, Pipe files read by `files` (tests).
    pub fn with_pod_files(mut self, files: Arc<dyn pipe::PodFiles>) -> Context {
        self.objects = self.objects.with_files(files);
        self
    }

    /// The same, digesting secret values with `key` ([`load_digest_key`]).
    pub fn with_digest_key(mut self, key: Vec<u8>) -> Context {
        self.digest_key = key;
        self
    }

    /// The same, with a fixed clock (tests).
    pub fn with_clock(mut self, clock: fn() -> String) -> Context {
        self.clock = clock;
        self
    }

    /// The compiled package of OperatorVersion `ns/name`, or why there is none.
    fn compiled(&self, ns: &str, name: &str) -> std::result::Result<Arc<Compiled>, String> {
        let key = reflector::ObjectRef::<OperatorVersion>::new(name).within(ns);
        let ov = self.operator_versions.get(&key).ok_or_else(|| {
            format!("OperatorVersion {ns}/{name} does not exist (install the operator version)")
        })?;
        let cache_key = format!("{ns}/{name}@{}", ov.resource_version().unwrap_or_default());
        if let Some(c) = self.compiled.get(&cache_key) {
            return Ok(c);
        }
        let pkg = kudo_crd::package::from_operator_version(&ov)
            .map_err(|e| format!("OperatorVersion {ns}/{name} is not a valid package: {e}"))?;
        let version = Version::of_package(&pkg).map_err(|d| {
            format!(
                "OperatorVersion {ns}/{name} has an invalid parameter schema: {}",
                d.iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join("; ")
            )
        })?;
        let version = Version {
            name: name.to_string(),
            ..version
        };
        let c = Arc::new(Compiled { pkg, version });
        let older = format!("{ns}/{name}@");
        self.compiled
            .put(cache_key, c.clone(), |k| k.starts_with(&older));
        Ok(c)
    }

    fn backoff(&self, key: &str) -> Duration {
        let n = self
            .failures
            .lock()
            .map(|mut m| {
                let n = m.entry(key.to_string()).or_insert(0);
                *n += 1;
                *n
            })
            .unwrap_or(1);
        let d = self.settings.backoff.saturating_mul(1 << (n - 1).min(16));
        d.min(self.settings.max_backoff)
    }

    /// Whether a step RBAC refuses now (`refused`) was refused before, at least
    /// [`Settings::forbidden_grace`] ago; forgets the step once it is not refused.
    fn refused_too_long(&self, step: String, refused: bool) -> bool {
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

    fn reset_backoff(&self, key: &str) {
        if let Ok(mut m) = self.failures.lock() {
            m.remove(key);
        }
    }

    async fn event(&self, inst: &Instance, type_: EventType, reason: &str, mut note: String) {
        // The API server refuses an Event whose note is over 1 kB.
        if note.len() > MAX_EVENT_NOTE {
            let mut end = MAX_EVENT_NOTE - 3;
            while !note.is_char_boundary(end) {
                end -= 1;
            }
            note.truncate(end);
            note.push('…');
        }
        let ev = Event {
            type_,
            reason: reason.into(),
            note: Some(note),
            action: "RunPlan".into(),
            secondary: None,
        };
        if let Err(e) = self.recorder.publish(&ev, &inst.object_ref(&())).await {
            tracing::warn!(instance = %inst.name_any(), error = %e, "cannot publish event");
        }
    }
}

/// Reconciles one Instance (see the module docs).
pub async fn reconcile(inst: Arc<Instance>, ctx: Arc<Context>) -> Result<Action> {
    let started = Instant::now();
    let result = reconcile_instance(&inst, &ctx).await;
    ctx.metrics.reconciled(started);
    result
}

/// What happens after a failed reconcile: the failure is counted, the Instance retried with
/// backoff.
pub fn error_policy(inst: Arc<Instance>, error: &Error, ctx: Arc<Context>) -> Action {
    tracing::warn!(instance = %inst.name_any(), %error, "reconcile failed");
    ctx.metrics.failed(error.metric_label());
    Action::requeue(ctx.backoff(&key(&inst)))
}

fn key(inst: &Instance) -> String {
    format!(
        "{}/{}",
        inst.namespace().unwrap_or_default(),
        inst.name_any()
    )
}

async fn reconcile_instance(inst: &Instance, ctx: &Context) -> Result<Action> {
    let ns = inst
        .namespace()
        .ok_or_else(|| Error::NoNamespace(inst.name_any()))?;
    let api: Api<Instance> = Api::namespaced(ctx.client.clone(), &ns);
    let deleting = inst.metadata.deletion_timestamp.is_some();
    let finalized = inst.finalizers().iter().any(|f| f == labels::FINALIZER);
    if !finalized {
        if !deleting {
            add_finalizer(&api, inst).await?;
        }
        // The patch is seen by the watch, which reconciles again.
        return Ok(Action::await_change());
    }
    let original = inst.status.clone().unwrap_or_default();
    let mut status = original.clone();
    let now = (ctx.clock)();
    let ov = inst.spec.operator_version_name().unwrap_or_default();
    let compiled = match ctx.compiled(&ns, &ov) {
        Ok(c) => c,
        Err(why) if deleting => {
            tracing::info!(instance = %inst.name_any(), %why, "no cleanup plan to run");
            remove_finalizer(&api, inst).await?;
            return Ok(Action::await_change());
        }
        Err(why) => {
            set_ready(
                &mut status,
                inst,
                "False",
                "OperatorVersionMissing",
                &why,
                &now,
            );
            write_status(&api, inst, &original, &status).await?;
            return Ok(Action::requeue(ctx.settings.progress * 2));
        }
    };
    let pkg = &compiled.pkg;
    let schema = &compiled.version.schema;
    plan::ensure_all(&mut status, pkg);
    // The values in the Instance's Secrets (spec.parametersFrom), read at plan time.
    // Read as the Instance's ServiceAccount: the manager itself may read no Secret.
    let secret_values = match ctx.tenants.client_for(inst) {
        _ if inst.spec.parameters_from.is_empty() => Ok(json!({})),
        Ok(tenant) => read_secrets(&tenant, &ns, inst).await,
        Err(e) => Err(e.to_string()),
    };
    // What the plan's templates are rendered with: the recorded values with the secrets they
    // hold now (status.applied has their digests only).
    let render: Value;
    if deleting {
        if !pkg.operator().plans.contains_key(CLEANUP) {
            remove_finalizer(&api, inst).await?;
            return Ok(Action::await_change());
        }
        let uid = "cleanup-on-delete";
        if status.active_plan.as_ref().map(|a| a.uid.as_str()) != Some(uid) {
            let params = status
                .applied
                .as_ref()
                .and_then(|a| a.parameters.clone())
                .unwrap_or_else(|| json!({}));
            let start = Start {
                plan: CLEANUP.into(),
                uid: uid.into(),
                reason: "the Instance is being deleted".into(),
            };
            begin(ctx, inst, pkg, &params, &start, &mut status, &now).await;
        }
        let recorded = status
            .applied
            .as_ref()
            .and_then(|a| a.parameters.clone())
            .unwrap_or_else(|| json!({}));
        // The Secrets may be gone already (a foreground deletion): then the digests stay.
        let now_values = secret_values.map(|sv| {
            let public = inst.spec.parameters.clone().unwrap_or_else(|| json!({}));
            let given = kudo_pkg::secrets::under(&public, &sv);
            let kept = inst.spec.immutable_defaults.as_ref();
            compiled.version.effective_kept(&given, kept).0.into_value()
        });
        render = match now_values {
            Ok(v) => kudo_pkg::secrets::revealed(schema, &recorded, &v, &ctx.digest_key),
            Err(_) => recorded,
        };
    } else {
        let secret_values = match &secret_values {
            Ok(v) => v.clone(),
            Err(why) => {
                set_ready(&mut status, inst, "False", "SecretMissing", why, &now);
                write_status(&api, inst, &original, &status).await?;
                return Ok(Action::requeue(ctx.settings.progress * 2));
            }
        };
        let public = inst.spec.parameters.clone().unwrap_or_else(|| json!({}));
        let given = kudo_pkg::secrets::under(&public, &secret_values);
        let (values, mut problems) = compiled
            .version
            .effective_kept(&given, inst.spec.immutable_defaults.as_ref());
        problems.extend(compiled.version.validator.validate(&values));
        let errors: Vec<String> = problems
            .iter()
            .filter(|d| d.is_error())
            .map(ToString::to_string)
            .collect();
        if !errors.is_empty() {
            let why = format!("invalid parameters: {}", errors.join("; "));
            set_ready(&mut status, inst, "False", "InvalidParameters", &why, &now);
            write_status(&api, inst, &original, &status).await?;
            return Ok(Action::requeue(ctx.settings.resync));
        }
        let values = values.into_value();
        // status.applied records secrets as digests: compared as the values they were, when
        // they did not change.
        let record = kudo_pkg::secrets::digested(schema, &values, &ctx.digest_key);
        let mut seen = status.clone();
        if let Some(a) = seen.applied.as_mut() {
            a.parameters = a
                .parameters
                .as_ref()
                .map(|p| kudo_pkg::secrets::revealed(schema, p, &values, &ctx.digest_key));
        }
        match plan::select(inst, &compiled.version, &values, &seen) {
            Ok(Some(start)) => begin(ctx, inst, pkg, &record, &start, &mut status, &now).await,
            Ok(None) => {}
            Err(refusal) => {
                let why = match refusal {
                    Refusal::UnknownPlan(p) => format!(
                        "spec.planExecution.planName names plan `{p}`, which the operator does not have"
                    ),
                    Refusal::Refused(d) => format!(
                        "the parameter change is refused: {}",
                        d.iter()
                            .map(ToString::to_string)
                            .collect::<Vec<_>>()
                            .join("; ")
                    ),
                };
                set_ready(&mut status, inst, "False", "NoPlan", &why, &now);
                write_status(&api, inst, &original, &status).await?;
                return Ok(Action::requeue(ctx.settings.resync));
            }
        }
        status.observed_generation = inst.metadata.generation;
        render = values;
    }
    let rendering = Rendering {
        pkg,
        params: &render,
    };
    let action = advance(ctx, &api, inst, rendering, &original, &mut status, &now).await?;
    let cleaned = deleting
        && status
            .plan_status
            .get(CLEANUP)
            .is_some_and(|p| ExecStatus::parse(p.status.as_deref()) == ExecStatus::Complete);
    if cleaned {
        remove_finalizer(&api, inst).await?;
        return Ok(Action::await_change());
    }
    Ok(action)
}

/// The values of the Secrets `inst` names in `spec.parametersFrom`, merged in order; why not,
/// naming the Secret and key (never a value).
async fn read_secrets(
    tenant: &Tenant,
    ns: &str,
    inst: &Instance,
) -> std::result::Result<Value, String> {
    let from = serde_json::to_value(&inst.spec.parameters_from).unwrap_or_default();
    let sources = kudo_pkg::secrets::SecretSource::list(Some(&from))?;
    if sources.is_empty() {
        return Ok(json!({}));
    }
    let api: Api<Secret> = Api::namespaced(tenant.client.clone(), ns);
    let mut data: HashMap<String, BTreeMap<String, String>> = HashMap::new();
    for s in &sources {
        if data.contains_key(&s.name) {
            continue;
        }
        let got = api.get_opt(&s.name).await.map_err(|e| {
            format!(
                "cannot read Secret {ns}/{} (spec.parametersFrom): {e}",
                s.name
            )
        })?;
        let Some(secret) = got else {
            return Err(format!(
                "Secret {ns}/{} (spec.parametersFrom) does not exist",
                s.name
            ));
        };
        let texts = secret
            .data
            .unwrap_or_default()
            .into_iter()
            .filter_map(|(k, v)| String::from_utf8(v.0).ok().map(|t| (k, t)))
            .collect();
        data.insert(s.name.clone(), texts);
    }
    kudo_pkg::secrets::merged(&sources, |name, key| {
        data.get(name).and_then(|d| d.get(key)).cloned()
    })
    .map_err(|d| {
        d.iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("; ")
    })
}

async fn begin(
    ctx: &Context,
    inst: &Instance,
    pkg: &Package,
    values: &Value,
    start: &Start,
    status: &mut InstanceStatus,
    now: &str,
) {
    plan::begin(status, pkg, inst, values, start, now);
    tracing::info!(instance = %key(inst), plan = %start.plan, run = %start.uid, reason = %start.reason, "plan started");
    ctx.reset_backoff(&key(inst));
    ctx.metrics.plan_started(&start.plan);
    ctx.event(
        inst,
        EventType::Normal,
        "PlanStarted",
        format!("plan `{}` started: {}", start.plan, start.reason),
    )
    .await;
}

/// What a plan renders: the package, and the values (secrets included).
struct Rendering<'a> {
    pkg: &'a Package,
    params: &'a Value,
}

/// Runs what may run of the active plan, round after round while steps complete; writes the
/// status after each round. Returns when the plan waits, fails or ends.
async fn advance(
    ctx: &Context,
    api: &Api<Instance>,
    inst: &Instance,
    Rendering { pkg, params }: Rendering<'_>,
    original: &InstanceStatus,
    status: &mut InstanceStatus,
    now: &str,
) -> Result<Action> {
    let mut written = original.clone();
    let Some(active) = status.active_plan.clone() else {
        set_ready(status, inst, "Unknown", "NoPlan", "no plan has run", now);
        write_status(api, inst, &written, status).await?;
        return Ok(Action::requeue(ctx.settings.resync));
    };
    let mut action = Action::requeue(ctx.settings.resync);
    while let Some(ps) = status.plan_status.get_mut(&active.name) {
        let before = ExecStatus::parse(ps.status.as_deref());
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
        let notes = tasks::Notes::default();
        let tenant = ctx.tenants.client_for(inst);
        let runs = names.iter().map(|(phase, step)| {
            let at = StepRef {
                plan: &active.name,
                phase,
                step,
            };
            let tenant = match &tenant {
                Ok(t) => t,
                Err(invalid) => {
                    let o = Outcome::Fatal(invalid.to_string());
                    return futures::future::Either::Left(futures::future::ready(o));
                }
            };
            futures::future::Either::Right(tasks::run_step(tasks::StepRun {
                objects: &ctx.objects,
                tenant,
                inst,
                pkg,
                params,
                at,
                notes: &notes,
            }))
        });
        let outcomes = futures::future::join_all(runs).await;
        for note in notes.into_inner().unwrap_or_default() {
            if !ps.warnings.contains(&note) {
                tracing::warn!(instance = %key(inst), plan = %active.name, %note, "object applied otherwise than its template says");
                ctx.event(inst, EventType::Warning, "ObjectConverted", note.clone())
                    .await;
                ps.warnings.push(note);
            }
        }
        let mut completed = false;
        let mut retry = false;
        for ((at, outcome), (phase, step)) in steps.iter().zip(outcomes).zip(&names) {
            let refused = matches!(outcome, Outcome::Forbidden(_));
            let step_key = format!("{}/{}/{phase}/{step}", key(inst), active.name);
            let refused_too_long = ctx.refused_too_long(step_key, refused);
            let (st, message) = match outcome {
                Outcome::Done => {
                    completed = true;
                    (ExecStatus::Complete, None)
                }
                Outcome::Waiting(m) => (ExecStatus::InProgress, Some(m)),
                Outcome::Retry(m) => {
                    retry = true;
                    (ExecStatus::Error, Some(m))
                }
                Outcome::Fatal(m) => (ExecStatus::FatalError, Some(m)),
                Outcome::Forbidden(m) if refused_too_long => (ExecStatus::FatalError, Some(m)),
                Outcome::Forbidden(m) => {
                    retry = true;
                    (ExecStatus::Error, Some(m))
                }
            };
            let (phase, step) = (
                &ps.phases[at.phase].name,
                &ps.phases[at.phase].steps[at.step],
            );
            if step.status.as_deref() != Some(st.as_str()) || step.message != message {
                let name = &step.name;
                let message = message.as_deref().unwrap_or("");
                let instance = key(inst);
                match st {
                    ExecStatus::Error | ExecStatus::FatalError => {
                        tracing::warn!(%instance, plan = %active.name, %phase, step = %name, status = st.as_str(), %message, "step failed")
                    }
                    _ => {
                        tracing::info!(%instance, plan = %active.name, %phase, step = %name, status = st.as_str(), %message, "step")
                    }
                }
            }
            let step = &mut ps.phases[at.phase].steps[at.step];
            step.status = Some(st.as_str().into());
            step.message = message;
        }
        plan::roll_up(ps);
        let after = ExecStatus::parse(ps.status.as_deref());
        if after != before || completed {
            ps.last_updated_timestamp = Some(now.into());
        }
        if after.is_terminal() {
            let message = ps.message.clone().unwrap_or_default();
            ctx.metrics.plan_finished(&active.name, after.as_str());
            let (type_, reason, note) = if after == ExecStatus::Complete {
                (
                    EventType::Normal,
                    "PlanComplete",
                    format!("plan `{}` complete", active.name),
                )
            } else {
                (
                    EventType::Warning,
                    "PlanFailed",
                    format!("plan `{}` failed: {message}", active.name),
                )
            };
            if after == ExecStatus::Complete {
                tracing::info!(instance = %key(inst), plan = %active.name, "plan complete");
            } else {
                tracing::warn!(instance = %key(inst), plan = %active.name, %message, "plan failed");
            }
            ctx.event(inst, type_, reason, note).await;
        }
        ready_from_plan(status, inst, &active.name, now);
        write_status(api, inst, &written, status).await?;
        written = status.clone();
        if after.is_terminal() {
            ctx.reset_backoff(&key(inst));
            break;
        }
        if retry {
            action = Action::requeue(ctx.backoff(&key(inst)));
            break;
        }
        if !completed {
            ctx.reset_backoff(&key(inst));
            action = Action::requeue(ctx.settings.progress);
            break;
        }
    }
    ready_from_plan(status, inst, &active.name, now);
    write_status(api, inst, &written, status).await?;
    Ok(action)
}

fn ready_from_plan(status: &mut InstanceStatus, inst: &Instance, plan: &str, now: &str) {
    let ps = status.plan_status.get(plan);
    let st = ExecStatus::parse(ps.and_then(|p| p.status.as_deref()));
    let message = ps.and_then(|p| p.message.clone());
    let (s, reason, text) = match st {
        ExecStatus::Complete => ("True", "PlanComplete", format!("plan `{plan}` is complete")),
        ExecStatus::FatalError => (
            "False",
            "PlanFailed",
            format!("plan `{plan}` failed: {}", message.unwrap_or_default()),
        ),
        ExecStatus::Error => (
            "False",
            "PlanError",
            format!("plan `{plan}` is retrying: {}", message.unwrap_or_default()),
        ),
        _ => (
            "False",
            "PlanInProgress",
            format!("plan `{plan}` is running"),
        ),
    };
    set_ready(status, inst, s, reason, &text, now);
}

fn set_ready(
    status: &mut InstanceStatus,
    inst: &Instance,
    value: &str,
    reason: &str,
    message: &str,
    now: &str,
) {
    let previous = status.conditions.iter().find(|c| c.type_ == "Ready");
    let since = match previous {
        Some(p) if p.status == value => p.last_transition_time.clone(),
        _ => Some(now.to_string()),
    };
    let ready = Condition {
        type_: "Ready".into(),
        status: value.into(),
        reason: Some(reason.into()),
        message: Some(message.into()),
        last_transition_time: since,
        observed_generation: inst.metadata.generation,
    };
    status.conditions.retain(|c| c.type_ != "Ready");
    status.conditions.push(ready);
}

/// Writes `status` with server-side apply on the status subresource, unless it equals `was`.
async fn write_status(
    api: &Api<Instance>,
    inst: &Instance,
    was: &InstanceStatus,
    status: &InstanceStatus,
) -> Result<()> {
    if was == status {
        return Ok(());
    }
    let body = json!({
        "apiVersion": "kudo.dev/v1beta2",
        "kind": "Instance",
        "status": status,
    });
    let params = PatchParams::apply(labels::MANAGER_FIELD_MANAGER).force();
    api.patch_status(&inst.name_any(), &params, &Patch::Apply(&body))
        .await?;
    Ok(())
}

async fn add_finalizer(api: &Api<Instance>, inst: &Instance) -> Result<()> {
    let mut finalizers = inst.finalizers().to_vec();
    finalizers.push(labels::FINALIZER.into());
    let patch = json!([
        {"op": "test", "path": "/metadata/resourceVersion", "value": inst.resource_version()},
        {"op": "add", "path": "/metadata/finalizers", "value": finalizers},
    ]);
    let patch: json_patch::Patch =
        serde_json::from_value(patch).map_err(|e| Error::Kube(kube::Error::SerdeError(e)))?;
    api.patch(
        &inst.name_any(),
        &PatchParams::default(),
        &Patch::<()>::Json(patch),
    )
    .await?;
    Ok(())
}

async fn remove_finalizer(api: &Api<Instance>, inst: &Instance) -> Result<()> {
    let finalizers: Vec<&String> = inst
        .finalizers()
        .iter()
        .filter(|f| *f != labels::FINALIZER)
        .collect();
    let patch = json!([
        {"op": "test", "path": "/metadata/resourceVersion", "value": inst.resource_version()},
        {"op": "replace", "path": "/metadata/finalizers", "value": finalizers},
    ]);
    let patch: json_patch::Patch =
        serde_json::from_value(patch).map_err(|e| Error::Kube(kube::Error::SerdeError(e)))?;
    match api
        .patch(
            &inst.name_any(),
            &PatchParams::default(),
            &Patch::<()>::Json(patch),
        )
        .await
    {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(s)) if s.is_not_found() => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// Runs the manager until `shutdown` completes: the OperatorVersion reflector and the Instance
/// controller, acting for Instances that name no ServiceAccount as `default_service_account`
/// ([`Context::with_default_service_account`]). Fails when the CRDs are not installed.
pub async fn run(
    client: Client,
    settings: Settings,
    default_service_account: Option<String>,
    digest_key: Vec<u8>,
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
    let ctx = Arc::new(
        Context::new(client, store, settings)
            .with_default_service_account(default_service_account)
            .with_digest_key(digest_key),
    );
    ctx_out(ctx.clone());
    Controller::new(instances, watcher::Config::default())
        .reconcile_all_on(ov_changes)
        .graceful_shutdown_on(shutdown)
        .run(reconcile, error_policy, ctx)
        .for_each(|r| async move {
            match r {
                Ok((obj, _)) => tracing::debug!(instance = %obj.name, "reconciled"),
                Err(e) => tracing::debug!(error = %e, "reconcile error"),
            }
        })
        .await;
    Ok(())
}
