//! `kudo-cluster`: what every kudo binary shares to talk to a cluster.
//!
//! | | |
//! |---|---|
//! | [`client`] | the kube client from a kubeconfig, as every kudo binary makes it ([`ConnectError`] says what was tried) |
//! | [`said`], [`Forbidden`], [`missing_namespace`] | what the API server said, as one sentence (never its `Status` dumped) |
//! | [`crd_preflight`] | a CRD a plan would apply compared with the cluster's, by OLM v1's rules (`kudo upgrade` and the manager call it) |
//! | [`select`] | the objects a label selector matches in the namespaces another matches (a Rollout's selection) |
//! | `daemon` (feature `daemon`) | what `kudo-manager` and `kudo-webhook` share as processes: the log format, logging, the runtime, the shutdown signal |
//!
//! The in-cluster binaries depend on this crate, not on `kudo-client` (the CLI's cluster
//! commands), so they do not link the CLI's command library.

mod api_status;
mod cluster;
pub mod crd_preflight;
#[cfg(feature = "daemon")]
pub mod daemon;
pub mod select;

pub use api_status::{Forbidden, missing_namespace, said};
pub use cluster::{ConnectError, NO_CLUSTER, client};
