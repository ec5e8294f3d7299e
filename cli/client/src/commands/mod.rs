//! The cluster commands: what `kudo install`, `kudo update --instance`, `kudo upgrade
//! --instance`, `kudo rollback`, `kudo uninstall`, `kudo plan status|trigger`, `kudo get`,
//! `kudo diff` and `kudo explain` do, as library functions the CLI calls and tests drive
//! against a mocked API server.
//!
//! A command that changes an Instance is a pure decision and its transport. The decision
//! (`update::decide`, `upgrade::decide`, [`install::check`]) takes what was read and the
//! command line and returns the change and the write, or every reason it is refused, with no
//! cluster: every parameter rule is the policy's ([`kudo_policy::change`], the same as the
//! admission webhook's and `kudo update -f`'s), and nothing is written when anything is
//! refused. The transport reads, then commits the write in one get-modify-commit loop with one
//! back-off (`entry`, after kube-rs's `Api::entry`): a write is guarded by what it read (a
//! `test` of each value it replaces, or the `metadata.resourceVersion`), and when another
//! writer got there first the Instance is read again and the decision made again, up to
//! [`MAX_ATTEMPTS`] times. The policy's view of an installed OperatorVersion is read from the
//! object ([`kudo_crd::package::version`]); the package is rebuilt from it
//! ([`kudo_crd::package::from_operator_version`]) only where a command needs the package.
//!
//! - [`install::install`]: the Instance's ServiceAccount and bindings
//!   ([`service_account`]), the Operator and OperatorVersion when missing, then the Instance
//!   and kudo's Secret of its `writeOnly` values (`secrets`).
//! - [`update::update`]: an RFC 6902 JSON patch of only the values that change, each replaced
//!   or removed value guarded by a `test` of what was read (`merge::guarded`).
//! - [`upgrade::upgrade`]: `oldName` migration, the CRD preflight, the new OperatorVersion
//!   when missing, then a merge patch of the Instance on its `resourceVersion`.
//! - [`history::history`], [`history::rollback`]: an Instance's revisions (recorded by the
//!   manager, `kudo_crd::revision`), and a rollback to one through the same policy as every
//!   change (`kudo_policy::change::rollback`).
//! - [`diff::diff`]: what an update, upgrade or rollback would do (values, plan, each object
//!   from a server-side dry-run apply), with nothing written; [`diff::drift`] too.
//! - [`uninstall::uninstall`], [`plan::trigger`], [`plan::status`], [`get::list`].
//! - [`explain::read`]: an Instance as `kudo explain` reads it (its package, its values, what
//!   its Secrets set), nothing written.
//! - [`wait`]: the contract with the manager (the Instance status) that `--wait` polls.

pub mod diff;
pub(crate) mod entry;
pub mod explain;
pub mod get;
pub mod history;
pub mod install;
mod merge;
pub mod plan;
pub mod rollout;
pub(crate) mod secrets;
pub mod service_account;
pub mod uninstall;
pub mod update;
pub mod upgrade;
pub mod wait;

use std::time::Duration;

use kube::Api;
use kudo_crd::reference::{Identity, OperatorVersionRef, resolve};
use kudo_diag::Diagnostic;
use kudo_policy::change::{Installed, Proposal, Version};
use kudo_policy::values::{Override, Reset};
use kudo_yaml::document::Document;
use serde_json::Value;

use kudo_crd::package::Unusable;
use kudo_crd::v1beta2::{Instance, Operator, OperatorVersion};

pub use entry::MAX_ATTEMPTS;

/// The result type of the cluster commands.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Where a command works: the cluster client and the namespace of the objects.
#[derive(Clone)]
pub struct Target {
    /// The client.
    pub client: kube::Client,
    /// The namespace of the Instance, its Operator and OperatorVersions.
    pub namespace: String,
}

impl Target {
    /// A target in `namespace`, or else the client's default namespace (the kubeconfig
    /// context's namespace, else `default`).
    pub fn new(client: kube::Client, namespace: Option<&str>) -> Target {
        let namespace = match namespace {
            Some(ns) => ns.to_string(),
            None => client.default_namespace().to_string(),
        };
        Target { client, namespace }
    }

    fn instances(&self) -> Api<Instance> {
        Api::namespaced(self.client.clone(), &self.namespace)
    }

    fn operators(&self) -> Api<Operator> {
        Api::namespaced(self.client.clone(), &self.namespace)
    }

    fn operator_versions(&self) -> Api<OperatorVersion> {
        Api::namespaced(self.client.clone(), &self.namespace)
    }

    /// An error from the API server about `kind/name` in this namespace.
    fn api(
        &self,
        action: &'static str,
        kind: &'static str,
        name: &str,
    ) -> impl FnOnce(kube::Error) -> Error {
        let (namespace, name) = (self.namespace.clone(), name.to_string());
        move |source| {
            if kudo_cluster::missing_namespace(&source, &namespace) {
                return Error::NoNamespace { namespace };
            }
            Error::Api {
                action,
                kind,
                namespace,
                name,
                source: Box::new(source),
            }
        }
    }

    fn not_found(&self, kind: &'static str, name: &str) -> Error {
        Error::NotFound {
            kind,
            namespace: self.namespace.clone(),
            name: name.to_string(),
        }
    }

    /// The Instance `name`; [`Error::NotFound`] when there is none. When the manager has not
    /// acted on its spec yet and its status refers to the revision of the values the last
    /// plan ran with (`status.applied.revision`, issue 49), those values are read from it, so
    /// that the plan the pending change runs is known ([`kudo_crd::baseline::hydrate`]); a
    /// revision the user may not read leaves that plan unknown, as with no status.
    pub async fn instance(&self, name: &str) -> Result<Instance> {
        let mut inst = self
            .instances()
            .get_opt(name)
            .await
            .map_err(self.api("get", "Instance", name))?
            .ok_or_else(|| self.not_found("Instance", name))?;
        if let Some(number) = kudo_crd::baseline::pending_revision(&inst) {
            let revisions: Api<k8s_openapi::api::apps::v1::ControllerRevision> =
                Api::namespaced(self.client.clone(), &self.namespace);
            let applied = revisions
                .get_opt(&kudo_crd::revision::name(name, number))
                .await
                .ok()
                .flatten()
                .and_then(|cr| kudo_crd::revision::applied_values(&cr));
            if let Some(applied) = applied {
                kudo_crd::baseline::hydrate(&mut inst, applied);
            }
        }
        Ok(inst)
    }
}

/// The parameter inputs of a command line: `-P` files (in order) and `-p` overrides.
#[derive(Clone, Copy, Default)]
pub struct Inputs<'a> {
    /// `-P` files, parsed.
    pub files: &'a [Document],
    /// `-p` arguments, parsed where the command line was read.
    pub overrides: &'a [Override],
    /// `--reset` pointers, parsed (`kudo update` only).
    pub resets: &'a [Reset],
    /// `kudo patch`'s `--add` and `--remove`, parsed; when any is given, the proposal is
    /// these alone ([`Proposal::Patch`]).
    pub edits: &'a [kudo_policy::values::Edit],
}

/// `-p` values may be secrets: `Debug` shows the files (path and pointers) and the keys of the
/// overrides, never a value.
impl std::fmt::Debug for Inputs<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Inputs")
            .field("files", &self.files)
            .field("overrides", &self.overrides)
            .field("resets", &self.resets)
            .field("edits", &self.edits)
            .finish()
    }
}

/// What `Debug` shows of an Instance: its name and the pointers its parameters set.
pub(crate) fn instance_shape(i: &Instance) -> String {
    let set = i
        .spec
        .parameters
        .as_ref()
        .map(kudo_diag::pointer::leaves)
        .unwrap_or_default();
    format!(
        "Instance {}/{} sets {set:?}",
        i.metadata.namespace.as_deref().unwrap_or_default(),
        i.metadata.name.as_deref().unwrap_or_default()
    )
}

impl<'a> Inputs<'a> {
    /// The inputs as the policy takes them.
    pub fn proposal(&self) -> Proposal<'a> {
        if !self.edits.is_empty() {
            return Proposal::Patch(self.edits);
        }
        Proposal::Edits {
            files: self.files,
            overrides: self.overrides,
            resets: self.resets,
        }
    }
}

/// Why a cluster command stopped. Nothing was written unless the variant says so.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The parameters were refused (validation, `immutable`, conflicting triggers, migration):
    /// every problem, with where its value came from.
    #[error("{} parameter error(s)", .0.iter().filter(|d| d.is_error()).count())]
    Parameters(Vec<Diagnostic>),
    /// The OperatorVersion in the cluster does not read back as a package.
    #[error("OperatorVersion {name} does not read back as a package: {source}")]
    Package {
        /// The OperatorVersion.
        name: String,
        /// What the package reader said.
        #[source]
        source: kudo_diag::Error,
    },
    /// The OperatorVersion in the cluster cannot be read as kudo's policy reads it.
    #[error("OperatorVersion {name} cannot be used: {source}")]
    UnusableVersion {
        /// The OperatorVersion.
        name: String,
        /// Why.
        #[source]
        source: Unusable,
    },
    /// An OperatorVersion the cluster could not serve in every version (its v1beta1 form would
    /// pass Kubernetes' annotation limit).
    #[error(
        "OperatorVersion {name} cannot be created: {why}. Make its parameter schema smaller (descriptions, defaults)"
    )]
    Unservable {
        /// Its name.
        name: String,
        /// Why.
        why: Box<kudo_crd::convert::Unservable>,
    },
    /// `kudo install` of an Instance that exists.
    #[error(
        "Instance {namespace}/{name} already exists: change it with `kudo update --instance {name}` or `kudo upgrade`"
    )]
    InstanceExists {
        /// Namespace.
        namespace: String,
        /// Name.
        name: String,
    },
    /// A KudoOperator dependency cannot be resolved (a name, a missing path, another version,
    /// a cycle).
    #[error("dependency: {0}")]
    Dependency(#[from] kudo_pkg::dependency::DependencyError),
    /// An object the command needs is not there.
    #[error("{kind} {namespace}/{name} not found")]
    NotFound {
        /// Its kind.
        kind: &'static str,
        /// Namespace.
        namespace: String,
        /// Name.
        name: String,
    },
    /// The Instance names no OperatorVersion.
    #[error("Instance {namespace}/{name} has no spec.operatorVersion.name")]
    NoOperatorVersion {
        /// Namespace.
        namespace: String,
        /// Name.
        name: String,
    },
    /// The package's OperatorVersion exists with another content.
    #[error("OperatorVersion {namespace}/{name} already exists with a different {}: an installed version never changes; give the package a new operatorVersion", fields.join(", "))]
    OperatorVersionDiffers {
        /// Namespace.
        namespace: String,
        /// Name.
        name: String,
        /// The `spec` fields that differ.
        fields: Vec<String>,
    },
    /// `kudo upgrade` with a package of another operator.
    #[error("the package is operator {package}, but Instance {instance} runs operator {installed}")]
    OtherOperator {
        /// The Instance.
        instance: String,
        /// The package's operator.
        package: String,
        /// The installed operator.
        installed: String,
    },
    /// `kudo upgrade` to the version the Instance runs.
    #[error(
        "Instance {instance} already runs OperatorVersion {operator_version}: use `kudo update` to change its parameters"
    )]
    AlreadyRuns {
        /// The Instance.
        instance: String,
        /// Its OperatorVersion.
        operator_version: String,
    },
    /// The images the change would run are refused by the images policy ([`ImageGate`]):
    /// each image, its digest, the keys tried, the policy. Nothing was written.
    #[error("the images the change would run are refused (nothing was written):\n{0}")]
    ImagesRefused(String),
    /// `kudo plan trigger` of a plan the OperatorVersion does not have.
    #[error("OperatorVersion {operator_version} has no plan {plan}; its plans: {}", plans.join(", "))]
    UnknownPlan {
        /// The plan asked for.
        plan: String,
        /// The Instance's OperatorVersion.
        operator_version: String,
        /// Its plans.
        plans: Vec<String>,
    },
    /// The Instance changed between every read and write.
    #[error(
        "Instance {namespace}/{name} changed under this update {attempts} times in a row (HTTP 409 Conflict); nothing was written: try again"
    )]
    Conflict {
        /// Namespace.
        namespace: String,
        /// Name.
        name: String,
        /// Attempts made.
        attempts: usize,
    },
    /// `kudo rollback` or `kudo diff --revision` of a revision the Instance does not have.
    #[error("Instance {namespace}/{name} has no revision {asked}; {}", if existing.is_empty() { "it has none (revisions are recorded from the first plan a kudo manager with revisions runs)".to_string() } else { format!("its revisions: {}", existing.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")) })]
    UnknownRevision {
        /// Namespace.
        namespace: String,
        /// The Instance.
        name: String,
        /// The revision asked for (`previous completed` when none was named).
        asked: String,
        /// The revisions it has.
        existing: Vec<i64>,
    },
    /// `kudo rollback` of a revision that cannot be restored: what it needs is gone.
    #[error(
        "cannot roll back Instance {namespace}/{name} to revision {revision}: {why}; nothing was written"
    )]
    CannotRollBack {
        /// Namespace.
        namespace: String,
        /// The Instance.
        name: String,
        /// The revision.
        revision: i64,
        /// Why (the OperatorVersion or a Secret it names is gone).
        why: String,
    },
    /// The namespace of the command does not exist.
    #[error(
        "namespace {namespace} does not exist: create it with `kubectl create namespace {namespace}`"
    )]
    NoNamespace {
        /// The namespace.
        namespace: String,
    },
    /// The API server refused or failed a request: one sentence, the server's message
    /// ([`kudo_cluster::said`]; RBAC's refusal as the verb and resource to ask for).
    #[error(
        "cannot {action} {}: {}",
        object(kind, namespace, name),
        kudo_cluster::said(source)
    )]
    Api {
        /// `get`, `create`, `patch`, `delete`, `list`.
        action: &'static str,
        /// The kind.
        kind: &'static str,
        /// Namespace.
        namespace: String,
        /// Name (empty for a list).
        name: String,
        /// The client's error.
        #[source]
        source: Box<kube::Error>,
    },
    /// The Instance's ServiceAccount cannot be given the rights its package needs: the
    /// installing user may not grant them (RBAC's escalation check), or may not create the
    /// object at all. Nothing was written.
    #[error(
        "the package needs {object} ({why}) for the Instance's ServiceAccount {service_account}, and the API server refused to create it: {message}; nothing was installed"
    )]
    Grant {
        /// The ServiceAccount (`namespace/name`).
        service_account: String,
        /// The refused object (`ClusterRoleBinding kudo:t:kudo-instance`).
        object: String,
        /// Why the package needs it (which objects).
        why: String,
        /// What the API server said.
        message: String,
    },
    /// The Instance's ServiceAccount, whose bindings exist already, lacks rights its Pipe
    /// tasks take. Nothing was written.
    #[error(
        "the Instance's ServiceAccount {service_account} may not {} in namespace {namespace}, which Pipe task {} needs (it runs a Pod and reads its files with exec); grant them (the built-in admin ClusterRole holds them) or name another ServiceAccount with --service-account; nothing was installed",
        rights.join(", "),
        tasks.iter().map(|t| format!("`{t}`")).collect::<Vec<_>>().join(", ")
    )]
    Lacks {
        /// The ServiceAccount (`namespace/name`).
        service_account: String,
        /// The namespace.
        namespace: String,
        /// The Pipe tasks that need them.
        tasks: Vec<String>,
        /// The rights lacking (`create pods/exec`).
        rights: Vec<String>,
    },
    /// `--wait`: the plan ended in FATAL_ERROR.
    #[error("plan {plan} of Instance {instance} failed{}: {message}", failed_at(phase.as_deref(), step.as_deref()))]
    PlanFailed {
        /// The Instance (`namespace/name`).
        instance: String,
        /// The plan.
        plan: String,
        /// The phase that failed, when the status says.
        phase: Option<String>,
        /// The step that failed, when the status says.
        step: Option<String>,
        /// The status message.
        message: String,
    },
    /// `--wait`: the time ran out.
    #[error("timed out after {} waiting for {what}; last seen: {last}", humanize(*waited))]
    Timeout {
        /// How long it waited.
        waited: Duration,
        /// What it waited for.
        what: String,
        /// The last state seen.
        last: String,
    },
    /// A rollout cannot start, or cannot take the change asked for: each reason names the
    /// field (`spec.waves[2] ...`) or the state. Nothing was written.
    #[error("Rollout {rollout}: {}; nothing was written", problems.join("; "))]
    Rollout {
        /// The Rollout (`namespace/name`).
        rollout: String,
        /// Every reason.
        problems: Vec<String>,
    },
    /// `kudo rollout status --wait` (or `start --wait`): the rollout ended other than
    /// Completed.
    #[error("Rollout {rollout} ended {phase}: {message}")]
    RolloutEnded {
        /// The Rollout (`namespace/name`).
        rollout: String,
        /// `Halted`, `Refused` or `Aborted`.
        phase: String,
        /// Its status message.
        message: String,
    },
    /// Something that should not happen: a bug in kudo.
    #[error("internal error, this may indicate a bug in kudo (please report it): {0}")]
    Internal(String),
}

/// `Instance ns/name`, or `Instances in namespace ns` for a list (no name).
fn object(kind: &str, namespace: &str, name: &str) -> String {
    if name.is_empty() && namespace.is_empty() {
        format!("{kind}s in all namespaces")
    } else if name.is_empty() {
        format!("{kind}s in namespace {namespace}")
    } else if kind == "Namespace" {
        format!("{kind} {name}")
    } else {
        format!("{kind} {namespace}/{name}")
    }
}

fn failed_at(phase: Option<&str>, step: Option<&str>) -> String {
    match (phase, step) {
        (Some(p), Some(s)) => format!(" in phase {p}, step {s}"),
        (Some(p), None) => format!(" in phase {p}"),
        _ => String::new(),
    }
}

/// A duration as `kudo` prints it: `5m`, `1m30s`, `250ms`.
pub use kudo_policy::window::humanize;

/// Parses a duration as people write them (`humantime`: `30s`, `5m`, `1h30m`, `250ms`, `1h 30m`),
/// or a bare number of seconds.
pub fn parse_duration(text: &str) -> Option<Duration> {
    let t = text.trim();
    match t.parse::<u64>() {
        Ok(secs) => Some(Duration::from_secs(secs)),
        Err(_) => humantime::parse_duration(t).ok(),
    }
}

/// A fresh id for a plan run (a random UUID v4).
pub fn new_uid() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// The package an Instance's OperatorVersion was made from.
fn package_of(ov: &OperatorVersion) -> Result<kudo_pkg::Package> {
    kudo_crd::package::from_operator_version(ov).map_err(|source| Error::Package {
        name: ov.metadata.name.clone().unwrap_or_default(),
        source,
    })
}

/// The policy's view of an OperatorVersion read from the cluster, its [`Version`]
/// ([`kudo_crd::package::version`]), read from the object alone (no package is built).
fn version_of(ov: &OperatorVersion) -> Result<Version> {
    kudo_crd::package::version(ov).map_err(|e| match e {
        Unusable::Parameters(d) => Error::Parameters(d),
        other => Error::UnusableVersion {
            name: ov.metadata.name.clone().unwrap_or_default(),
            source: other,
        },
    })
}

/// The package an OperatorVersion was made from and its [`Version`], for the commands that
/// need both (`diff` renders the package; `upgrade` compares its operator).
fn package_and_version(ov: &OperatorVersion) -> Result<(kudo_pkg::Package, Version)> {
    Ok((package_of(ov)?, version_of(ov)?))
}

/// The Instance as [`kudo_policy::change`] sees it ([`kudo_crd::baseline::installed`]): its
/// values, whether it is being deleted, and the plan it has scheduled or running.
fn installed<'a>(
    inst: &'a Instance,
    version: &'a Version,
    values: &'a Value,
    in_progress: &'a Option<String>,
) -> Installed<'a> {
    kudo_crd::baseline::installed(inst, version, values, in_progress.as_deref())
}

/// The run `inst` has in progress ([`kudo_policy::run::running`]) and what the write does with
/// it ([`kudo_policy::run::supersede`]): with `force`, it blocks nothing and is superseded
/// (returned second); without, it blocks the change (its plan returned first).
fn superseding(
    inst: &Instance,
    version: &Version,
    force: bool,
) -> (Option<String>, Option<kudo_policy::run::Running>) {
    use kudo_policy::run::{self, Force};
    let running = run::running(&kudo_crd::baseline::plan_state(inst), version);
    let force = if force { Force::Any } else { Force::No };
    let s = run::supersede(running, force);
    (s.blocking, s.superseded)
}

/// The annotations a change's write sets: [`kudo_crd::labels::SUPERSEDE`] naming the run it
/// supersedes (`--force`), [`kudo_crd::labels::IGNORE_WINDOW`] (`--ignore-window`) and
/// [`kudo_crd::labels::REMEDIATE_ONCE`] with the remediation of this change
/// (`--rollback-on-failure`), written on top of `inst`'s generation.
fn change_annotations(
    inst: &Instance,
    superseded: Option<&kudo_policy::run::Running>,
    ignore_window: bool,
    remediation: Option<&kudo_crd::common::Remediation>,
    images: Option<&str>,
) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    if let Some(images) = images {
        out.push((kudo_crd::labels::IMAGES, images.to_string()));
    }
    if let Some(run) = superseded {
        out.push((kudo_crd::labels::SUPERSEDE, run.uid.clone()));
    }
    if ignore_window {
        let g = inst.metadata.generation.unwrap_or_default();
        out.push((
            kudo_crd::labels::IGNORE_WINDOW,
            kudo_crd::window::ignore_annotation(g),
        ));
    }
    if let Some(r) = remediation {
        let g = inst.metadata.generation.unwrap_or_default();
        out.push((
            kudo_crd::labels::REMEDIATE_ONCE,
            kudo_crd::revision::remediate_once_annotation(g, r),
        ));
    }
    out
}

/// The check of the container images a change will run, made once its effective values are
/// known and before anything is written (`kudo install|update|upgrade`; the CLI's is
/// `kudo_source::image_trust`'s, by the `images:` policy).
pub trait ImageGate: Sync + std::fmt::Debug {
    /// The `kudo.dev/images` annotation ([`kudo_crd::labels::IMAGES`]) for `pkg` run as
    /// Instance `instance` in `namespace` with `values`: `Ok(None)` when no image is checked
    /// (no policy applies); `Err` says why the change is refused.
    fn check(
        &self,
        pkg: &kudo_pkg::Package,
        values: &Value,
        instance: &str,
        namespace: &str,
    ) -> std::result::Result<Option<String>, String>;
}

/// [`ImageGate::check`] when a gate is given, as the change's error.
fn gate_images(
    gate: Option<&dyn ImageGate>,
    pkg: &kudo_pkg::Package,
    values: &Value,
    instance: &str,
    namespace: &str,
) -> Result<Option<String>> {
    match gate {
        None => Ok(None),
        Some(g) => g
            .check(pkg, values, instance, namespace)
            .map_err(Error::ImagesRefused),
    }
}

/// The JSON patch operations that set `annotations` on `inst`.
fn annotation_ops(
    inst: &Instance,
    annotations: &[(&'static str, String)],
) -> Vec<json_patch::PatchOperation> {
    use kudo_crd::patch::{add, path};
    if annotations.is_empty() {
        return Vec::new();
    }
    match &inst.metadata.annotations {
        None => vec![add(
            path(["metadata", "annotations"]),
            annotations_object(annotations),
        )],
        Some(_) => annotations
            .iter()
            .map(|(k, v)| {
                add(
                    path(["metadata", "annotations", k]),
                    Value::String(v.clone()),
                )
            })
            .collect(),
    }
}

/// `annotations` as the object a merge patch sets.
fn annotations_object(annotations: &[(&'static str, String)]) -> Value {
    annotations
        .iter()
        .map(|(k, v)| (k.to_string(), Value::String(v.clone())))
        .collect::<serde_json::Map<_, _>>()
        .into()
}

/// Reads an Instance and the OperatorVersion it names ([`kudo_crd::reference`]).
async fn instance_and_version(t: &Target, name: &str) -> Result<(Instance, OperatorVersionRef)> {
    let inst = t.instance(name).await?;
    let ov = inst
        .spec
        .operator_version_ref(&t.namespace)
        .ok_or_else(|| Error::NoOperatorVersion {
            namespace: t.namespace.clone(),
            name: name.to_string(),
        })?;
    Ok((inst, ov))
}

/// Reads the OperatorVersion an Instance names, by either of its names
/// ([`kudo_crd::reference::resolve`]): its exact name, else (on a 404) the one of its
/// namespace that answers to it. `Ok(None)` when there is none. The one read of an Instance's
/// OperatorVersion through the API (the webhook and the manager resolve in their caches).
pub async fn read_operator_version(
    client: &kube::Client,
    reference: &OperatorVersionRef,
) -> std::result::Result<Option<OperatorVersion>, kube::Error> {
    let api: Api<OperatorVersion> = Api::namespaced(client.clone(), &reference.namespace);
    if let Some(ov) = api.get_opt(&reference.name).await? {
        return Ok(Some(ov));
    }
    let list = api.list(&kube::api::ListParams::default()).await?;
    let Some(name) =
        resolve(&reference.name, list.items.iter().filter_map(Identity::of)).map(String::from)
    else {
        return Ok(None);
    };
    Ok(list
        .items
        .into_iter()
        .find(|o| o.metadata.name.as_deref() == Some(name.as_str())))
}

/// Reads the OperatorVersion an Instance names, which must exist
/// ([`read_operator_version`]).
async fn operator_version(t: &Target, reference: &OperatorVersionRef) -> Result<OperatorVersion> {
    let at = Target {
        client: t.client.clone(),
        namespace: reference.namespace.clone(),
    };
    read_operator_version(&t.client, reference)
        .await
        .map_err(at.api("get", "OperatorVersion", &reference.name))?
        .ok_or_else(|| at.not_found("OperatorVersion", &reference.name))
}

/// Reads the OperatorVersion `want` would be, under each name an OperatorVersion of its
/// operator and version is given ([`kudo_pkg::package::operator_version_names`]: KUDO's
/// `zookeeper-3.6.2-0.3.3`, then the older `zookeeper-0.3.3`), and refuses when the one found
/// has another spec, or when `want` could not be read in every version the CRD serves
/// (docs/limits.md: a schema whose v1beta1 form passes Kubernetes' annotation limit would
/// fail every read of v1beta1 OperatorVersions in the cluster). Returns the name of the one
/// found, which an Instance then names (one OperatorVersion per version: none is created
/// beside it), or `None` when there is none.
async fn same_operator_version(t: &Target, want: &OperatorVersion) -> Result<Option<String>> {
    let name = want.metadata.name.clone().unwrap_or_default();
    let object = serde_json::to_value(want).map_err(|e| Error::Internal(e.to_string()))?;
    kudo_crd::convert::servable(&object, &kudo_crd::convert::NoTypes).map_err(|why| {
        Error::Unservable {
            name: name.clone(),
            why: Box::new(why),
        }
    })?;
    let mut names = vec![name];
    if let (Some(operator), Some(version)) = (
        want.spec.operator.as_ref().and_then(|o| o.name.as_deref()),
        want.spec.version.as_deref(),
    ) {
        for other in kudo_pkg::package::operator_version_names(
            operator,
            want.spec.app_version.as_deref(),
            version,
        ) {
            if !names.contains(&other) {
                names.push(other);
            }
        }
    }
    for name in names {
        let have = t.operator_versions().get_opt(&name).await.map_err(t.api(
            "get",
            "OperatorVersion",
            &name,
        ))?;
        let Some(have) = have else {
            continue;
        };
        let fields = differing_fields(&have.spec, &want.spec);
        if !fields.is_empty() {
            return Err(Error::OperatorVersionDiffers {
                namespace: t.namespace.clone(),
                name,
                fields,
            });
        }
        return Ok(Some(name));
    }
    Ok(None)
}

/// `given`, or the dependencies of `pkg` resolved from paths.
fn resolved(
    pkg: &kudo_pkg::Package,
    given: Option<&[kudo_pkg::dependency::Dependency]>,
) -> Result<Vec<kudo_pkg::dependency::Dependency>> {
    match given {
        Some(deps) => Ok(deps.to_vec()),
        None => kudo_pkg::dependency::resolve(pkg).map_err(Error::Dependency),
    }
}

/// The Operator and OperatorVersion of every resolved KudoOperator dependency (and theirs,
/// deepest first), each with whether its OperatorVersion is already there. Reads only: an
/// OperatorVersion of the same name with another spec is refused here, before anything is
/// written, as for the package itself.
async fn dependencies(
    t: &Target,
    deps: &[kudo_pkg::dependency::Dependency],
) -> Result<Vec<(kudo_crd::v1beta2::Operator, OperatorVersion, bool)>> {
    let mut out = Vec::new();
    for dep in deps {
        let (operator, ov) = kudo_crd::package::objects_with(&dep.package, &t.namespace, deps);
        let has_ov = same_operator_version(t, &ov).await?.is_some();
        out.push((operator, ov, has_ov));
    }
    Ok(out)
}

/// Creates what [`dependencies`] found missing.
async fn create_missing(
    t: &Target,
    deps: &[(kudo_crd::v1beta2::Operator, OperatorVersion, bool)],
) -> Result<()> {
    for (operator, ov, has_ov) in deps {
        ensure_operator(t, operator).await?;
        if !has_ov {
            create_operator_version(t, ov).await?;
        }
    }
    Ok(())
}

/// Creates the Operator unless it exists (or is created meanwhile). `true` when it was made.
async fn ensure_operator(t: &Target, operator: &kudo_crd::v1beta2::Operator) -> Result<bool> {
    let name = operator.metadata.name.clone().unwrap_or_default();
    if t.operators()
        .get_opt(&name)
        .await
        .map_err(t.api("get", "Operator", &name))?
        .is_some()
    {
        return Ok(false);
    }
    create_operator(t, operator).await
}

/// Creates the Operator; one created meanwhile by someone else (409) is what we need.
async fn create_operator(t: &Target, operator: &kudo_crd::v1beta2::Operator) -> Result<bool> {
    let name = operator.metadata.name.clone().unwrap_or_default();
    match t.operators().create(&post_params(), operator).await {
        Ok(_) => Ok(true),
        Err(kube::Error::Api(s)) if s.code == 409 => Ok(false),
        Err(e) => Err(t.api("create", "Operator", &name)(e)),
    }
}

/// Creates an OperatorVersion. Created meanwhile by another install of the same package (409):
/// fine when its spec is the same, refused like any other differing one when not.
async fn create_operator_version(t: &Target, ov: &OperatorVersion) -> Result<()> {
    let name = ov.metadata.name.clone().unwrap_or_default();
    match t.operator_versions().create(&post_params(), ov).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(s)) if s.code == 409 => {
            same_operator_version(t, ov).await?;
            Ok(())
        }
        Err(e) => Err(t.api("create", "OperatorVersion", &name)(e)),
    }
}

/// The top-level `spec` fields whose values differ.
fn differing_fields<T: serde::Serialize>(have: &T, want: &T) -> Vec<String> {
    let (Ok(serde_json::Value::Object(h)), Ok(serde_json::Value::Object(w))) =
        (serde_json::to_value(have), serde_json::to_value(want))
    else {
        return vec!["spec".into()];
    };
    let mut keys: Vec<&String> = h.keys().chain(w.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter(|k| h.get(*k) != w.get(*k))
        .map(|k| format!("spec.{k}"))
        .collect()
}

fn post_params() -> kube::api::PostParams {
    kube::api::PostParams {
        dry_run: false,
        field_manager: Some(kudo_crd::labels::CLI_FIELD_MANAGER.into()),
    }
}

fn patch_params() -> kube::api::PatchParams {
    kube::api::PatchParams {
        field_manager: Some(kudo_crd::labels::CLI_FIELD_MANAGER.into()),
        ..Default::default()
    }
}

/// What the unit tests of the commands share.
#[cfg(test)]
pub(crate) mod fixtures {
    /// The example package `examples/cassandra-v1beta2` (OperatorVersion `cassandra-2.0.0`).
    pub fn cassandra() -> kudo_pkg::Package {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../examples/cassandra-v1beta2");
        kudo_pkg::Package::load(&dir).expect("the example package loads")
    }

    /// Its version, as the policy reads it.
    pub fn cassandra_version() -> super::Version {
        cassandra().policy_version().expect("its version")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse_as_kubectl_writes_them() {
        let cases: &[(&str, Option<u64>)] = &[
            ("30s", Some(30)),
            ("5m", Some(300)),
            ("1h30m", Some(5400)),
            ("1m30s", Some(90)),
            ("45", Some(45)),
            ("", None),
            ("5x", None),
            ("m5", None),
            ("1h 30m", Some(5400)),
            ("2days", Some(172_800)),
        ];
        for (text, want) in cases {
            assert_eq!(
                parse_duration(text).map(|d| d.as_secs()),
                *want,
                "input: {text}"
            );
        }
        assert_eq!(parse_duration("250ms"), Some(Duration::from_millis(250)));
    }

    #[test]
    fn durations_print_the_way_they_parse() {
        for text in ["5m", "1m30s", "2h", "250ms", "0ms"] {
            assert_eq!(humanize(parse_duration(text).unwrap()), text);
        }
    }

    #[test]
    fn a_new_uid_is_a_version_4_uuid() {
        let a = new_uid();
        let b = new_uid();
        assert_ne!(a, b);
        assert_eq!(a.len(), 36);
        assert_eq!(&a[14..15], "4");
    }
}
