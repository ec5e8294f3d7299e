//! `kudo-operator`: the CRD types of kudo and the conversion between their versions.
//!
//! - [`crd`]: Operator, OperatorVersion and Instance in `kudo.dev/v1beta1` (KUDO's flat
//!   parameters, string values) and `kudo.dev/v1beta2` (a JSON-schema of parameters, free JSON
//!   values). [`crd::definitions`] generates the CustomResourceDefinitions from the types;
//!   `deploy/crds.yaml` is that output, checked by a test.
//!
//! - [`convert`]: v1beta1 ⇄ v1beta2 conversion of those objects, total and lossless (what the
//!   conversion webhook runs).
//!
//! - [`cluster`]: the cluster client from a kubeconfig, as every kudo binary makes it.
//! - [`init`]: every object a cluster needs to run kudo (what `kudo init` applies or prints).
//! - [`package`]: a package as Operator and OperatorVersion objects, and back.
//! - [`commands`]: the cluster commands (`kudo install`, `update --instance`, `upgrade
//!   --instance`, `uninstall`, `plan status|trigger`, `get`) and `--wait`.
//! - [`labels`]: the labels, annotations, finalizer and field managers kudo uses.
//! - [`storage_migration`]: KEP-33's migration of a cluster's objects from v1beta1 to v1beta2
//!   storage (what `kudo migrate` runs): pre-flight conversion, CRDs, rewrite,
//!   `storedVersions`. (`kudo_pkg::migrate` is another thing: moving values by `oldName`.)
//! - [`manager`]: the manager (`kudo-manager`): runs an Instance's plans when it changes.
//! - [`daemon`]: what `kudo-manager` and `kudo-webhook` share as processes (logging, the
//!   shutdown signal).
//!
//! Every parameter rule this crate applies comes from `kudo-pkg`.
//!
//! ```
//! let crds = kudo_operator::crd::definitions();
//! let names: Vec<_> = crds.iter().map(|c| c.metadata.name.clone().unwrap()).collect();
//! assert_eq!(names, ["operators.kudo.dev", "operatorversions.kudo.dev", "instances.kudo.dev"]);
//! ```
#![deny(missing_docs)]

pub mod cluster;
pub mod commands;
pub mod convert;
pub mod crd;
pub mod daemon;
pub mod init;
pub mod labels;
pub mod manager;
pub mod package;
pub mod storage_migration;
