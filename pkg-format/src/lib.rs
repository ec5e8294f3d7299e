//! `kudo-pkg`: KUDO operator packages and the structured-parameters engine.
//!
//! Placeholder, filled below.
#![deny(missing_docs)]

pub mod convert;
pub mod diag;
pub mod document;
mod error;
pub mod params;
pub mod pointer;
pub mod validate;
pub mod values;

pub use diag::{Code, Diagnostic, Origin, Severity, Shown};
pub use error::{Error, Result};
