//! `params.yaml` in its three shapes, and the one schema they all become.
//!
//! - `kudo.dev/v1beta1` list format: `parameters: [{name: X, default: ...}]` ([`v1beta1`]).
//! - The older map format (`X: {default: ..., description: ...}`), also v1beta1.
//! - `kudo.dev/v1beta2`: one JSON-schema document with KUDO's extensions ([`v1beta2`]).
//!
//! Everything downstream (values, validation, rendering) works on a [`ParamSchema`]; a v1beta1
//! file gets one through [`crate::convert`].

pub mod v1beta1;
pub mod v1beta2;

use serde_json::Value;

use kudo_diag::error::{Error, Result};
use kudo_yaml::document::Document;

pub use v1beta1::{V1beta1Group, V1beta1Parameter, V1beta1Params, V1beta1Type};
pub use v1beta2::{Draft, ParamSchema};

/// The api version string of the flat format.
pub const V1BETA1: &str = "kudo.dev/v1beta1";
/// The api version string of the JSON-schema format.
pub const V1BETA2: &str = "kudo.dev/v1beta2";

/// A parsed `params.yaml`.
#[derive(Debug, Clone)]
pub enum Params {
    /// Flat list (or legacy map) of parameters.
    V1beta1(V1beta1Params),
    /// JSON-schema.
    V1beta2(ParamSchema),
}

impl Params {
    /// Parses a params file in any of its shapes. The shape is chosen by `apiVersion`
    /// (`kudo.dev/v1beta2` is a schema, `kudo.dev/v1beta1` a list); a file without `apiVersion`
    /// is the list format when it has a `parameters` list, else the legacy map format.
    pub fn parse(doc: &Document) -> Result<Params> {
        let invalid = |pointer: &str, message: String| Error::Invalid {
            path: doc.path().to_path_buf(),
            location: doc.location(pointer).map(|l| (l.line, l.col)),
            message,
        };
        let obj = match doc.value() {
            Value::Object(o) => o,
            Value::Null => return Ok(Params::V1beta1(V1beta1Params::empty())),
            other => {
                return Err(invalid(
                    "",
                    format!("params file must be a mapping, found {}", json_type(other)),
                ));
            }
        };
        match obj.get("apiVersion") {
            Some(Value::String(v)) if v == V1BETA2 => {
                ParamSchema::from_document(doc).map(Params::V1beta2)
            }
            Some(Value::String(v)) if v == V1BETA1 => {
                V1beta1Params::parse(doc).map(Params::V1beta1)
            }
            None => V1beta1Params::parse(doc).map(Params::V1beta1),
            Some(other) => Err(invalid(
                "/apiVersion",
                format!("unsupported apiVersion {other}: expected {V1BETA1} or {V1BETA2}"),
            )),
        }
    }

    /// The api version of this file's format.
    pub fn api_version(&self) -> &'static str {
        match self {
            Params::V1beta1(_) => V1BETA1,
            Params::V1beta2(_) => V1BETA2,
        }
    }
}

/// The JSON type name of a value, as JSON-schema calls it.
pub fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}
