//! `kudo-policy`: the parameter policy, the life of an update in one crate.
//!
//! Everything that decides something about parameters lives here, once, and is called unchanged
//! by the `kudo` CLI, the admission and conversion webhooks and the manager. Pure: no
//! Kubernetes client, no network, no async runtime, no package on disk (`kudo-pkg` hands the
//! policy a [`change::Version`]).
//!
//! Read in this order, it is the life of `kudo update -p a/0/b=x`:
//!
//! | module | what it decides | entry points |
//! |---|---|---|
//! | [`params`], [`convert`], [`typing`] | the three shapes of `params.yaml`; v1beta1 → v1beta2; text and stored v1beta1 values typed by the schema | [`Params`], [`ParamSchema`], [`convert::to_schema`], [`typing::instance_values`] |
//! | [`values`] | the parameters a user asks for: defaults, `-P` merge patches, `-p` overrides, each with its [`Origin`](kudo_diag::Origin) | [`values::effective`], [`values::Values`], [`Redacted`] |
//! | [`limits`] | the size, count and depth of values the policy takes; how many problems one refusal lists | [`limits::check`], [`limits::bounded`] |
//! | [`validate`] | every problem, at once | [`Validator`], [`validate::resolve`] |
//! | [`trigger`], [`immutable`] | the plan a change runs; what may never change | [`trigger::select`], [`immutable::check_update`] |
//! | [`old_name`] | values carried across an upgrade by `oldName` | [`old_name::migrate`] |
//! | [`preflight`] | what an upgrade would break: both versions' schemas compared, judged against the Instance's values (or offline, for authors) | [`preflight::against`], [`preflight::offline`] |
//! | [`secrets`] | `writeOnly` values kept in Secrets, never in the Instance | [`secrets::split`] |
//! | [`change`] | install, update and upgrade as pure decisions (all three extensions applied) | [`change::install`], [`change::update`], [`change::upgrade`] |
//! | [`version`] | one operator version as the policy sees it: schema, plans, names (also [`change::Version`]) | [`version::Version`] |
//! | [`run`] | the plan run an Instance needs, the one it has in progress, and whether a write supersedes it (`--force`) | [`run::select`], [`run::running`], [`run::supersede`] |
//! | [`window`] | when a maintenance window is open, and when it next opens (5-field cron in an IANA zone) | [`window::Window::at`] |
//! | [`rollout`] | a fleet upgrade: the order, the waves, when a wave passes or halts, the CEL gate | [`rollout::advance`], [`rollout::Waves`], [`rollout::Gate`] |
//!
//! Text is typed by its parameter's schema in one place ([`TextError`] says why not).
//!
//! # Example
//!
//! ```
//! use kudo_policy::{ParamSchema, Validator, values::{self, Inputs, Override}};
//! use kudo_diag::Code;
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
//! // `-p` arguments, parsed once where the command line is read
//! let overrides = Override::parse_all(&["topology/0/datacenterName=DC1", "nodeCount=0"]).unwrap();
//! let (values, problems) = values::effective(&schema, &Inputs { overrides: &overrides, ..Default::default() });
//! assert!(problems.is_empty());
//! assert_eq!(values.value(), &json!({"nodeCount": 0, "topology": [{"datacenterName": "DC1"}]}));
//!
//! let diags = Validator::new(&schema).unwrap().validate(&values);
//! assert_eq!(diags.len(), 1);
//! assert_eq!(diags[0].code, Code::OutOfRange);
//! assert_eq!(diags[0].to_string(), "/nodeCount: must be at least 1, got 0 (from -p argument 2) [out-of-range]");
//! ```
// `Diagnostic` is the error value of the parameter APIs: it carries everything a user needs
// (pointer, rule, value, origin, help) and is built only when input is refused.
#![allow(clippy::result_large_err)]

pub mod change;
pub mod convert;
pub mod immutable;
pub mod limits;
pub mod old_name;
pub mod params;
pub mod preflight;
pub mod rollout;
pub mod run;
pub mod secrets;
pub mod trigger;
pub mod typing;
pub mod validate;
pub mod values;
pub mod version;
pub mod window;

pub use params::{ParamSchema, Params};
pub use typing::TextError;
pub use validate::Validator;
pub use values::Redacted;
