//! `kudo-pkg`: KUDO operator packages and the structured-parameters engine.
//!
//! Everything that decides something about parameters lives here, once, and is called unchanged
//! by the `kudo` CLI, the admission and conversion webhooks and the manager. The crate is pure:
//! no Kubernetes client, no network, no async runtime.
//!
//! # Contents
//!
//! | module | what it decides | entry points |
//! |---|---|---|
//! | [`package`] | a package on disk or in a `.tgz` | [`Package`], [`TemplateEngine`], [`create_archive`] |
//! | [`params`], [`convert`], [`typing`] | the three shapes of `params.yaml`; v1beta1 → v1beta2; text and stored v1beta1 values typed by the schema | [`Params`], [`ParamSchema`], [`convert::to_schema`], [`typing::instance_values`] |
//! | [`values`] | the parameters a user asks for: defaults, `-P` merge patches, `-p` overrides, each with its [`Origin`] | [`values::effective`], [`values::Values`], [`Redacted`] |
//! | [`validate`] | every problem, at once | [`Validator`], [`validate::resolve`] |
//! | [`limits`] | the size, count and depth of values the policy takes; how many problems one refusal lists | [`limits::check`], [`limits::bounded`] |
//! | [`diag`], [`pointer`](mod@pointer) | what a problem says, and where | [`Diagnostic`], [`Code`], [`Shown`], [`Pointer`] |
//! | [`trigger`], [`immutable`], [`change`] | the plan a change runs; what may never change; install, update and upgrade as pure decisions (all three extensions applied) | [`trigger::select`], [`immutable::check_update`], [`change::install`], [`change::update`], [`change::upgrade`] |
//! | [`old_name`] | values carried across an upgrade by `oldName` | [`old_name::migrate`] |
//! | [`instance`] | `kudo update -f` / `upgrade -f` on an Instance file, comments kept | [`instance::update`], [`instance::upgrade`], [`Edit`] |
//! | [`render`] | a plan's templates (Handlebars, or KUDO's Go templates with sprig) as objects | [`render::render_plan`], [`render::render_task`], [`render::Prepared`] (templates parsed once, for repeated renders), [`render::stream`] |
//! | [`manifest`] | rendered manifests read as Kubernetes reads them (YAML 1.1: `0777` is 511); YAML it reads back | [`manifest::parse`], [`manifest::to_yaml`] |
//! | [`step`] | what a plan step does: its tasks, each resolved for the parameters (shared by the renderer and the manager) | [`step::tasks`], [`package::TaskKind`] |
//! | [`pipe`], [`dependency`] | KUDO's Pipe and KudoOperator tasks | [`pipe::PipeTask`], [`dependency::resolve`] |
//! | [`repo`] | KUDO's repository `index.yaml`: its order, and the entry a name and a version (or a semver range) ask for | [`repo::Index`], [`repo::Want`], [`repo::file_name`] |
//! | [`verify`], [`structural`] | `package verify`; Kubernetes' structural-schema rules | [`verify::verify`], [`structural::violations`] |
//! | [`successor`] | an object in an API version Kubernetes no longer serves, as its successor (what kudo-manager applies instead) | [`successor::convert`], [`successor::REMOVED`] |
//! | [`author`], [`listing`], [`explain`] | `package add parameter`; `package list parameters`; `kudo explain` | [`author::add_parameter`], [`listing::rows`], [`explain::explain`] |
//!
//! Text is typed by its parameter's schema in one place ([`TextError`] says why not).

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

// The library's namespaces: each module is one concept, named in paths (`change::update`,
// `values::effective`, `render::render_plan`).
pub mod author;
pub mod change;
pub mod convert;
pub mod dependency;
pub mod diag;
pub mod document;
pub mod explain;
pub mod immutable;
pub mod instance;
pub mod limits;
pub mod listing;
pub mod manifest;
pub mod old_name;
pub mod package;
pub mod params;
pub mod pipe;
pub mod pointer;
pub mod render;
pub mod repo;
pub mod secrets;
pub mod step;
pub mod structural;
pub mod successor;
pub mod trigger;
pub mod typing;
pub mod validate;
pub mod values;
pub mod verify;

// Inner workings, reached through the entry points below.
mod archive;
mod edit;
mod error;
#[cfg(test)]
mod fixtures;
mod gotemplate;
mod sprig;

pub use archive::create as create_archive;
pub use diag::{Code, Diagnostic, Origin, Severity, Shown};
pub use edit::{Edit, EditError};
pub use error::{Error, Result};
pub use package::{Package, TemplateEngine};
pub use params::{ParamSchema, Params};
pub use pointer::Pointer;
pub use typing::TextError;
pub use validate::Validator;
pub use values::Redacted;
