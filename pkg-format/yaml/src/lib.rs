//! `kudo-yaml`: YAML as kudo's users write it and as Go and Kubernetes read it.
//!
//! | module | what it reads or writes | entry points |
//! |---|---|---|
//! | [`document`] | a YAML file (params.yaml, a `-P` file, an Instance) as a JSON value that remembers the line and column of each value (YAML 1.2 core schema) | [`Document`], [`Document::parse`], [`Document::read_bounded`] |
//! | [`manifest`] | rendered manifests read as Kubernetes reads them (go-yaml v2's YAML 1.1: `0777` is 511, `on` is true); YAML it reads back | [`manifest::parse`], [`manifest::resolve`], [`manifest::to_yaml`] |
//! | [`strconv`] | Go's integer syntax (`strconv.ParseInt(s, 0, 64)`, `underscoreOK`), which go-yaml's resolver and sprig share | [`strconv::parse_int_base0`], [`strconv::underscore_ok`] |
//! | [`edit`](mod@edit) | a YAML file changed in place, its comments and layout kept | [`Edit`], [`edit::edits_between`], [`edit::apply`] |
//!
//! Depends on `kudo-diag` alone: a file that is not YAML is a [`kudo_diag::Error`].
#![allow(clippy::result_large_err)]

pub mod document;
pub mod edit;
pub mod manifest;
mod scalar;
pub mod strconv;

pub use document::Document;
pub use edit::{Edit, EditError};
