//! `kudo-diag`: what a kudo problem says, and where.
//!
//! The bottom of kudo's libraries: every other crate reports through these types, and this
//! crate depends on none of them.
//!
//! | module | what it holds | entry points |
//! |---|---|---|
//! | [`diag`] | a problem with a parameter: its pointer, rule, value (cut, masked when secret), origin and help, as one sentence | [`Diagnostic`], [`Code`], [`Origin`], [`Shown`] |
//! | [`pointer`](mod@pointer) | JSON pointers (RFC 6901), parsed by `jsonptr` | [`Pointer`], [`pointer::tokens`], [`pointer::from_tokens`] |
//! | [`error`] | what stops an operation: a file unreadable or malformed, a package that is not one | [`Error`], [`Result`] |
//! | [`cut`] | text cut to a bound: long pointers, denial lines, status messages | [`cut::cut`], [`cut::shown_pointer`] |
// `Diagnostic` is the error value of the parameter APIs: it carries everything a user needs
// (pointer, rule, value, origin, help) and is built only when input is refused.
#![allow(clippy::result_large_err)]

pub mod cut;
pub mod diag;
pub mod error;
pub mod pointer;

pub use diag::{Code, Diagnostic, Origin, Severity, Shown};
pub use error::{Error, Result};
pub use pointer::Pointer;
