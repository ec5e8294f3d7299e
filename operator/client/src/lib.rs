//! `kudo-client`: kudo's side of a conversation with a cluster, as the `kudo` CLI holds it.
//!
//! | | |
//! |---|---|
//! | [`client`] | the kube client from a kubeconfig, as every kudo binary makes it |
//! | [`said`], [`Forbidden`] | what the API server said, as one sentence (never its `Status` dumped) |
//! | [`commands`] | `kudo install`, `update --instance`, `upgrade --instance`, `uninstall`, `plan status\|trigger`, `get`, and `--wait` |
//! | [`init`] | every object a cluster needs to run kudo (what `kudo init` applies or prints) |
//! | [`storage_migration`] | KEP-33's migration of a cluster's objects from v1beta1 to v1beta2 storage (`kudo migrate`): pre-flight conversion, CRDs, rewrite, `storedVersions` |
//! | `daemon` (feature `daemon`) | what `kudo-manager` and `kudo-webhook` share as processes: logging, the shutdown signal |
//!
//! The objects and every rule about them come from `kudo-crd` and `kudo-pkg`; this crate only
//! reads and writes them. (Values moved by `oldName` on an upgrade are `kudo_policy::old_name`,
//! another thing than [`storage_migration`].)
#![deny(missing_docs)]

mod api_status;
mod cluster;
pub mod commands;
#[cfg(feature = "daemon")]
pub mod daemon;
pub mod init;
pub mod storage_migration;

pub use api_status::{Forbidden, said};
pub use cluster::{ConnectError, NO_CLUSTER, client};
