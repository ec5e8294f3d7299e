//! `kudo-crd`: kudo's cluster objects as Rust types, and every pure rule about them.
//!
//! Operator, OperatorVersion and Instance in `kudo.dev/v1beta1` (KUDO's flat parameters,
//! string values) and `kudo.dev/v1beta2` (a JSON-schema of parameters, free JSON values), and
//! what the CLI, the webhook and the manager all need to know about them. Nothing here talks to
//! a cluster: the client side is `kudo-client`, the manager `kudo-manager`.
//!
//! | | |
//! |---|---|
//! | [`v1beta1`], [`v1beta2`], [`common`] | the types, one module per API version |
//! | [`definitions`], [`crds_yaml`] | the CustomResourceDefinitions generated from the types (`deploy/crds.yaml`) |
//! | [`convert`] | v1beta1 ⇄ v1beta2 conversion of those objects, total and lossless (what the conversion webhook runs) |
//! | [`package`] | a package as Operator and OperatorVersion objects, and back |
//! | [`plan`] | where an Instance's plan stands, and its status bookkeeping (the manager, `kudo update --wait` and the admission webhook share it) |
//! | [`baseline`] | an Instance as kudo-policy sees it: its installed baseline and plan state (the CLI, both webhooks and the manager call it) |
//! | [`mod@reference`] | which OperatorVersion an Instance runs: `spec.operatorVersion.namespace`, and either of KUDO's names |
//! | [`labels`] | the labels, annotations, finalizer and field managers kudo puts on objects |
//! | [`applied`] | a rendered object as kudo-manager applies it: labelled, placed, owned |
//! | [`rollout`] | a Rollout: one operator's Instances moved to a new version in waves (its decisions are `kudo_policy::rollout`'s) |
//! | [`revision`] | revisions: an Instance's past as ControllerRevisions, read, numbered, pruned, rolled back to |
//! | [`drift`] | which objects kudo applied for an Instance, and where a live one drifted from them (the manager and `kudo diff NAME`) |
//! | [`patch`] | JSON patch operations as values, built from tokens (every RFC 6902 patch kudo sends) |
//! | [`webhook_cert`] | how long the webhook's self-managed certificate lives and when it is renewed (`kudo-webhook` and `kudo init` share the rule) |
//!
//! Every parameter rule applied here comes from `kudo-policy`.
//!
//! ```
//! let crds = kudo_crd::definitions();
//! let names: Vec<_> = crds.iter().map(|c| c.metadata.name.clone().unwrap()).collect();
//! assert_eq!(names, ["operators.kudo.dev", "operatorversions.kudo.dev", "instances.kudo.dev", "rollouts.kudo.dev"]);
//! ```

pub mod applied;
pub mod baseline;
pub mod common;
pub mod convert;
mod crds;
pub mod drift;
pub mod labels;
pub mod package;
pub mod patch;
pub mod plan;
pub mod reference;
pub mod revision;
pub mod rollout;
pub mod shard;
pub mod v1beta1;
pub mod v1beta2;
pub mod webhook_cert;
pub mod window;

pub use convert::{NoTypes, TypeSource};
pub use crds::{STORAGE_VERSION, converted, definitions, yaml as crds_yaml};
