//! `kudo-manager`: the manager, which runs an Instance's plans when it changes.
//!
//! A [`kube::runtime::Controller`] on Instances ([`run`]) calls [`reconcile`]; OperatorVersions
//! come from a reflector (a change to one reconciles every Instance again). Each reconcile:
//! 1. adds the finalizer [`kudo_crd::labels::FINALIZER`] to a new Instance;
//! 2. rebuilds the OperatorVersion's package ([`kudo_crd::package::from_operator_version`]) and
//!    the effective parameters (`kudo-policy`'s defaults and validation, as the CLI);
//! 3. starts the plan the change needs ([`kudo_policy::run::select`]: `deploy`, a triggered plan, the
//!    `trigger`'s plan, `upgrade`), recording it in `status.activePlan` and what it runs for in
//!    `status.applied` (the revision that records the values, and their digest: not a copy);
//! 4. runs the steps that may run now ([`kudo_crd::plan::runnable`]), each through `tasks::run_step`
//!    (what each task does is [`kudo_pkg::step::tasks`], the model `kudo template` renders),
//!    writing the status after every round that completed a step, so a restarted manager
//!    resumes from the status and never runs a COMPLETE step again;
//! 5. on delete, runs the `cleanup` plan (when the operator has one), then removes the
//!    finalizer.
//!
//! # Modules
//!
//! From the top down; a module uses only those below it:
//!
//! | module | what it holds |
//! |---|---|
//! | `serve` | the process: `/healthz`, `/readyz`, `/metrics`, leader election ([`serve`]) |
//! | `shards`, `lease` | replicas sharing the Instances by shard, one Lease per shard ([`Shards`], [`Gate`]); holding a Lease (kube-lease-manager) |
//! | `controller` | the controller on Instances and the OperatorVersion reflector ([`run`], [`error_policy`]) |
//! | `reconcile` | one reconcile ([`reconcile`]): the finalizer, then `apply` (the plan a change needs) or `cleanup` (the `cleanup` plan of a deleted Instance); `round` starts and advances the active plan |
//! | `rollout` | the Rollout controller: a fleet's waves carried out as `kudo_policy::rollout::advance` decides, status-only state |
//! | `drift` | once the active plan is COMPLETE, every `--drift-interval`: the objects kudo applied dry-run applied as the tenant and compared with the live ones; the `Drifted` condition, or the objects applied again (`spec.drift.mode`) |
//! | `status`, `finalizer` | writing the Instance's status (a refused one replaced by a smaller one saying why) and `Ready` condition; the hand-written finalizer |
//! | `context` | what reconciles share: clients, OperatorVersions, backoff, events ([`Context`], [`Settings`]) |
//! | `tasks` | running a step: its tasks in order; `tasks::pipe`, `tasks::kudo_operator` |
//! | `step` | a step being run (`StepRun`), how it ended (`Outcome`), an object's health as an outcome |
//! | `objects` | discovery, server-side apply, deletes, the Warning events that explain a wait |
//! | `events` | Events published, the same one again counted on the first (`series`); at most 4,096 remembered |
//! | `backoff`, `bounded` | the back-off of a failure that repeats and its log rule; messages cut to a bounded size |
//! | `forced_rollback` | a StatefulSet's forced rollback: in a run that restores a revision, the Pods left not Ready on the failed revision deleted one at a time |
//! | `health`, `containers`, `undeclared`, `pod_files`, `tenant`, `digest`, `memo`, `metrics`, `error` | an object's health; why a Pod's containers fail; fields a schema does not declare; reading a Pipe Pod's files; the identity acting for an Instance; the digest key; memo; metrics; errors |
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
//! Failures become events and metrics ([`Metrics`]).
//!
//! # Bounds
//!
//! What the manager writes is bounded (issue 38; `docs/limits.md`, "The manager"): every message it
//! writes into a status is cut to 4 KiB, an Event's note to 1 KiB, a log line's message to
//! 64 KiB (`bounded`: an echoed value cut in its middle, then head and tail kept with
//! `… N bytes cut …`). A status the API server refuses (too large: `status.applied` holds the
//! parameters while their revision could not be recorded) is replaced at once by one without `status.applied` and with the condition
//! `Recorded` False, reason `StatusRefused`, saying why, so an Instance always shows why; a run
//! the status already holds is not started again. A failure that repeats (same plan run, same
//! failing steps and messages, or the same reconcile error) is retried after 5 s, doubled each
//! time up to 5 min ([`Settings::backoff`], [`Settings::max_backoff`]); a new failure or
//! progress starts again. Of a run of identical failures the first 3 are logged, then the 8th,
//! 16th, 32nd… (`backoff`); [`error_policy`] is the one line a failed reconcile logs. At most
//! [`Settings::concurrency`] Instances are reconciled at once.

mod backoff;
mod bounded;
mod containers;
mod context;
mod controller;
mod digest;
mod drift;
mod error;
mod events;
mod finalizer;
mod forced_rollback;
mod health;
mod images;
mod lease;
mod memo;
mod metrics;
mod objects;
mod pod_files;
mod reconcile;
pub mod rollout;
mod serve;
mod shards;
mod status;
mod step;
mod tasks;
mod tenant;
mod undeclared;

pub use context::{Context, Settings};
pub use controller::{error_policy, run};
pub use digest::{DIGEST_KEY_ENV, DIGEST_SECRET, load_digest_key};
pub use error::{Error, Result};
pub use metrics::Metrics;
pub use pod_files::{FileError, PodFiles};
pub use reconcile::reconcile;
pub use serve::{Lease, Options, serve};
pub use shards::{Entry, Gate, Shards};
pub use tenant::{InvalidName, ServiceAccount, Tenant, Tenants};
