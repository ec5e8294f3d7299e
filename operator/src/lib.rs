//! `kudo-operator`: the CRD types (Operator, OperatorVersion, Instance in `kudo.dev/v1beta1` and
//! `kudo.dev/v1beta2`) and the manager that runs plans when parameters change.
//!
//! **Not built yet.** This crate is an empty placeholder in the workspace so that the layout of
//! `ARCHITECTURE.md` is in place; it exposes nothing. Its work is tracked by the in-cluster
//! and manager issues. Every parameter rule it will apply comes from `kudo-pkg`.
#![deny(missing_docs)]
