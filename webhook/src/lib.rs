//! `kudo-webhook`: the conversion webhook (v1beta1 <-> v1beta2) and the admission webhook for
//! Instances, served over HTTPS.
//!
//! **Not built yet.** This crate is an empty placeholder in the workspace so that the layout of
//! `ARCHITECTURE.md` is in place; it exposes nothing. Its decisions will call the same
//! `kudo_pkg::validate` entry point as the CLI.
#![deny(missing_docs)]
