//! `kudo-pkg`: KUDO operator packages and the structured-parameters engine.
//!
//! Everything that decides something about parameters lives here, once, and is called unchanged
//! by the `kudo` CLI, the admission and conversion webhooks and the manager. The crate is pure:
//! no Kubernetes client, no network, no async runtime.
//!
//! # Overview
//!
//! - [`Package`] loads `operator.yaml`, `params.yaml` and `templates/` from a directory or a
//!   `.tgz`. Its [`Params`] are one of the three shapes of `params.yaml` (v1beta1 list, legacy
//!   map, v1beta2 JSON-schema); [`Package::schema`] is always a v1beta2 [`ParamSchema`], converted
//!   by [`convert`] when the package is v1beta1.
//! - [`values::effective`] builds the parameters a user asks for: defaults, `-P` merge patches,
//!   `-p` overrides, each value remembering its [`Origin`].
//! - [`Validator`] checks them and returns every problem as a [`Diagnostic`].
//! - [`render::render_plan`] turns a plan's templates into Kubernetes objects.
//! - [`trigger::select`] picks the plan an update runs, [`immutable::check_update`] refuses
//!   changes to immutable parameters, [`migrate::migrate`] carries values across an upgrade by
//!   `oldName`.
//! - [`verify::verify`] is `package verify`.
//!
//! # Example
//!
//! ```
//! use kudo_pkg::{ParamSchema, Validator, Code, values::{self, Inputs}};
//! use serde_json::json;
//!
//! let schema = ParamSchema::from_value(json!({
//!     "type": "object",
//!     "properties": {
//!         "nodeCount": {"type": "integer", "minimum": 1, "default": 3},
//!         "topology": {"type": "array", "default": [{"datacenterName": "dc1"}],
//!             "items": {"type": "object", "properties": {"datacenterName": {"type": "string"}}}}
//!     }
//! })).unwrap();
//! let overrides = ["topology/0/datacenterName=DC1".to_string(), "nodeCount=0".to_string()];
//! let (values, problems) = values::effective(&schema, &Inputs { overrides: &overrides, ..Default::default() });
//! assert!(problems.is_empty());
//! assert_eq!(values.value(), &json!({"nodeCount": 0, "topology": [{"datacenterName": "DC1"}]}));
//!
//! let diags = Validator::new(&schema).unwrap().validate(&values);
//! assert_eq!(diags.len(), 1);
//! assert_eq!(diags[0].code, Code::OutOfRange);
//! assert_eq!(diags[0].to_string(), "/nodeCount: must be at least 1, got 0 (from -p argument 2) [out-of-range]");
//! ```
#![deny(missing_docs)]
// `Diagnostic` is the error value of the parameter APIs: it carries everything a user needs
// (pointer, rule, value, origin, help) and is built only when input is refused.
#![allow(clippy::result_large_err)]

pub mod archive;
pub mod author;
pub mod change;
pub mod convert;
pub mod dependency;
pub mod diag;
pub mod document;
pub mod edit;
mod error;
pub mod gotemplate;
pub mod immutable;
pub mod instance;
pub mod listing;
pub mod migrate;
pub mod package;
pub mod params;
pub mod pipe;
pub mod pointer;
pub mod render;
pub mod sprig;
pub mod structural;
pub mod trigger;
pub mod typing;
pub mod validate;
pub mod values;
pub mod verify;

pub use diag::{Code, Diagnostic, Origin, Severity, Shown};
pub use error::{Error, Result};
pub use package::Package;
pub use params::{ParamSchema, Params};
pub use validate::Validator;
