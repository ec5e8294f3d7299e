//! `kudo-client`: the `kudo` CLI's side of a conversation with a cluster.
//!
//! | | |
//! |---|---|
//! | [`commands`] | `kudo install`, `update --instance`, `upgrade --instance`, `uninstall`, `plan status\|trigger`, `get`, and `--wait` |
//! | [`init`] | every object a cluster needs to run kudo (what `kudo init` applies or prints) |
//! | [`storage_migration`] | KEP-33's migration of a cluster's objects from v1beta1 to v1beta2 storage (`kudo migrate`): pre-flight conversion, CRDs, rewrite, `storedVersions` |
//!
//! Only the CLI links this crate. What every kudo binary shares to reach a cluster (the kube
//! client from a kubeconfig, what the API server said, the daemons' process set-up) is
//! `kudo-cluster`. The objects and every rule about them come from `kudo-crd`, `kudo-policy`
//! and `kudo-pkg`; this crate only reads and writes them. (Values moved by `oldName` on an
//! upgrade are `kudo_policy::old_name`, another thing than [`storage_migration`].)

pub mod commands;
pub mod init;
pub mod storage_migration;
