//! The flat `kudo.dev/v1beta1` parameters, as KUDO read them.
//!
//! ```yaml
//! apiVersion: kudo.dev/v1beta1
//! parameters:
//!   - name: NODE_COUNT
//!     displayName: Node count
//!     description: Number of nodes
//!     default: "3"          # KUDO kept every value as a string
//!     type: integer         # string (default), integer, number, boolean, array, map
//!     required: true        # the default when absent
//!     trigger: deploy
//!     immutable: false
//!     enum: ["1", "3", "5"]
//! ```
//!
//! The pre-November-2019 map format (`NODE_COUNT: {default: "3", description: ...}`) is read
//! into the same model. Fields KUDO did not know (typos like `desription`, or `example`) are kept
//! in [`V1beta1Parameter::extra`] so that nothing is lost on conversion.

use std::fmt;

use serde_json::{Map, Value};

use crate::document::Document;
use crate::error::{Error, Result};
use crate::pointer;

/// The value types of a v1beta1 parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum V1beta1Type {
    /// A string (KUDO's default).
    String,
    /// An integer.
    Integer,
    /// A number.
    Number,
    /// `true` or `false`.
    Boolean,
    /// A list.
    Array,
    /// A map (a JSON object).
    Map,
}

impl V1beta1Type {
    /// Parses KUDO's type names.
    pub fn parse(s: &str) -> Option<V1beta1Type> {
        Some(match s {
            "string" => V1beta1Type::String,
            "integer" => V1beta1Type::Integer,
            "number" => V1beta1Type::Number,
            "boolean" => V1beta1Type::Boolean,
            "array" => V1beta1Type::Array,
            "map" | "object" => V1beta1Type::Map,
            _ => return None,
        })
    }

    /// KUDO's name of the type.
    pub fn as_str(self) -> &'static str {
        match self {
            V1beta1Type::String => "string",
            V1beta1Type::Integer => "integer",
            V1beta1Type::Number => "number",
            V1beta1Type::Boolean => "boolean",
            V1beta1Type::Array => "array",
            V1beta1Type::Map => "map",
        }
    }

    /// The JSON-schema `type` of this type.
    pub fn json_schema_type(self) -> &'static str {
        match self {
            V1beta1Type::Map => "object",
            other => other.as_str(),
        }
    }
}

impl fmt::Display for V1beta1Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which of the two v1beta1 shapes a file used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum V1beta1Shape {
    /// `apiVersion: kudo.dev/v1beta1` with a `parameters` list.
    List,
    /// The legacy `NAME: {...}` map.
    Map,
}

/// One flat parameter.
#[derive(Debug, Clone, PartialEq)]
pub struct V1beta1Parameter {
    /// Name, used in templates as `Params.NAME`.
    pub name: String,
    /// `displayName`.
    pub display_name: Option<String>,
    /// `description`.
    pub description: Option<String>,
    /// `default`, as written (KUDO wrote strings; YAML lists and maps appear for arrays/maps).
    pub default: Option<Value>,
    /// `required`; KUDO treats an absent `required` as `true`.
    pub required: Option<bool>,
    /// `type`; absent means string.
    pub ty: Option<V1beta1Type>,
    /// `trigger`: the plan a change runs.
    pub trigger: Option<String>,
    /// `immutable`.
    pub immutable: Option<bool>,
    /// `enum`.
    pub enum_values: Option<Vec<Value>>,
    /// Fields KUDO did not define, kept as written.
    pub extra: Map<String, Value>,
    /// Pointer of this parameter inside the params file (for locations).
    pub pointer: String,
}

impl V1beta1Parameter {
    /// KUDO's rule: required unless `required: false`.
    pub fn is_required(&self) -> bool {
        self.required.unwrap_or(true)
    }

    /// The declared type, string when absent.
    pub fn value_type(&self) -> V1beta1Type {
        self.ty.unwrap_or(V1beta1Type::String)
    }
}

/// A v1beta1 params file.
#[derive(Debug, Clone, PartialEq)]
pub struct V1beta1Params {
    /// Which shape the file had.
    pub shape: V1beta1Shape,
    /// The parameters in file order.
    pub parameters: Vec<V1beta1Parameter>,
}

impl V1beta1Params {
    /// No parameters.
    pub fn empty() -> Self {
        V1beta1Params {
            shape: V1beta1Shape::List,
            parameters: Vec::new(),
        }
    }

    /// Finds a parameter by exact name.
    pub fn get(&self, name: &str) -> Option<&V1beta1Parameter> {
        self.parameters.iter().find(|p| p.name == name)
    }

    /// Reads either v1beta1 shape from a parsed document.
    pub fn parse(doc: &Document) -> Result<V1beta1Params> {
        let invalid = |pointer: &str, message: String| Error::Invalid {
            path: doc.path().to_path_buf(),
            location: doc.location(pointer).map(|l| (l.line, l.col)),
            message,
        };
        let Value::Object(root) = doc.value() else {
            return Err(invalid("", "params file must be a mapping".into()));
        };
        let mut parameters = Vec::new();
        let shape;
        if root.contains_key("apiVersion") || root.contains_key("parameters") {
            shape = V1beta1Shape::List;
            match root.get("parameters") {
                None | Some(Value::Null) => {}
                Some(Value::Array(items)) => {
                    for (i, item) in items.iter().enumerate() {
                        let ptr = format!("/parameters/{i}");
                        let Value::Object(fields) = item else {
                            return Err(invalid(&ptr, "a parameter must be a mapping".into()));
                        };
                        let name = match fields.get("name") {
                            Some(Value::String(n)) if !n.is_empty() => n.clone(),
                            Some(Value::Number(n)) => n.to_string(),
                            _ => {
                                return Err(invalid(
                                    &ptr,
                                    "a parameter needs a non-empty string `name`".into(),
                                ));
                            }
                        };
                        parameters.push(parameter(name, fields, &ptr, &invalid)?);
                    }
                }
                Some(_) => {
                    return Err(invalid("/parameters", "`parameters` must be a list".into()));
                }
            }
            if let Some(k) = root
                .keys()
                .find(|k| !matches!(k.as_str(), "apiVersion" | "parameters"))
            {
                let ptr = pointer::push("", k);
                return Err(invalid(
                    &ptr,
                    format!(
                        "unexpected top-level field `{k}` (expected `apiVersion` and `parameters`)"
                    ),
                ));
            }
        } else {
            shape = V1beta1Shape::Map;
            for (name, fields) in root {
                let ptr = pointer::push("", name);
                let empty = Map::new();
                let fields = match fields {
                    Value::Object(f) => f,
                    Value::Null => &empty,
                    _ => {
                        return Err(invalid(
                            &ptr,
                            format!("parameter `{name}` must be a mapping of its fields"),
                        ));
                    }
                };
                parameters.push(parameter(name.clone(), fields, &ptr, &invalid)?);
            }
        }
        Ok(V1beta1Params { shape, parameters })
    }
}

fn parameter(
    name: String,
    fields: &Map<String, Value>,
    ptr: &str,
    invalid: &dyn Fn(&str, String) -> Error,
) -> Result<V1beta1Parameter> {
    let mut p = V1beta1Parameter {
        name,
        display_name: None,
        description: None,
        default: None,
        required: None,
        ty: None,
        trigger: None,
        immutable: None,
        enum_values: None,
        extra: Map::new(),
        pointer: ptr.to_string(),
    };
    for (key, value) in fields {
        let at = pointer::push(ptr, key);
        let text = || -> Result<Option<String>> {
            match value {
                Value::Null => Ok(None),
                Value::String(s) => Ok(Some(s.clone())),
                Value::Number(n) => Ok(Some(n.to_string())),
                Value::Bool(b) => Ok(Some(b.to_string())),
                _ => Err(invalid(
                    &at,
                    format!("`{key}` of `{}` must be text", p.name),
                )),
            }
        };
        let flag = || -> Result<Option<bool>> {
            match value {
                Value::Null => Ok(None),
                Value::Bool(b) => Ok(Some(*b)),
                Value::String(s) if s == "true" || s == "false" => Ok(Some(s == "true")),
                _ => Err(invalid(
                    &at,
                    format!("`{key}` of `{}` must be true or false", p.name),
                )),
            }
        };
        match key.as_str() {
            "name" => {}
            "displayName" => p.display_name = text()?,
            "description" => p.description = text()?,
            "default" => p.default = (!value.is_null()).then(|| value.clone()),
            "required" => p.required = flag()?,
            "immutable" => p.immutable = flag()?,
            "trigger" => p.trigger = text()?.filter(|t| !t.is_empty()),
            "type" | "value-type" => {
                p.ty = match text()? {
                    None => None,
                    Some(t) => Some(V1beta1Type::parse(&t).ok_or_else(|| {
                        invalid(
                            &at,
                            format!(
                                "unknown type `{t}` of `{}`: expected string, integer, number, boolean, array or map",
                                p.name
                            ),
                        )
                    })?),
                }
            }
            "enum" => match value {
                Value::Null => {}
                Value::Array(v) => p.enum_values = Some(v.clone()),
                _ => return Err(invalid(&at, format!("`enum` of `{}` must be a list", p.name))),
            },
            _ => {
                p.extra.insert(key.clone(), value.clone());
            }
        }
    }
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn parse(text: &str) -> V1beta1Params {
        V1beta1Params::parse(&Document::parse(Path::new("params.yaml"), text).unwrap()).unwrap()
    }

    #[test]
    fn list_format_with_every_field() {
        let p = parse(
            "apiVersion: kudo.dev/v1beta1\nparameters:\n  - name: N\n    displayName: Nodes\n    default: \"3\"\n    type: integer\n    required: false\n    trigger: scale\n    immutable: true\n    enum: [\"1\", \"3\"]\n    desription: typo kept\n",
        );
        assert_eq!(p.shape, V1beta1Shape::List);
        let n = &p.parameters[0];
        assert_eq!(n.name, "N");
        assert_eq!(n.display_name.as_deref(), Some("Nodes"));
        assert_eq!(n.default, Some(Value::String("3".into())));
        assert_eq!(n.ty, Some(V1beta1Type::Integer));
        assert!(!n.is_required());
        assert_eq!(n.trigger.as_deref(), Some("scale"));
        assert_eq!(n.immutable, Some(true));
        assert_eq!(n.enum_values.as_ref().map(Vec::len), Some(2));
        assert_eq!(
            n.extra.get("desription"),
            Some(&Value::String("typo kept".into()))
        );
    }

    #[test]
    fn legacy_map_format() {
        let p =
            parse("memory:\n  description: RAM\n  default: \"1Gi\"\ncpus:\n  default: \"0.25\"\n");
        assert_eq!(p.shape, V1beta1Shape::Map);
        assert_eq!(p.parameters.len(), 2);
        assert!(p.parameters[1].is_required());
        assert_eq!(p.parameters[1].value_type(), V1beta1Type::String);
    }

    #[test]
    fn unknown_type_points_at_the_field() {
        let doc = Document::parse(
            Path::new("params.yaml"),
            "apiVersion: kudo.dev/v1beta1\nparameters:\n  - name: N\n    type: int\n",
        )
        .unwrap();
        match V1beta1Params::parse(&doc).unwrap_err() {
            Error::Invalid {
                location, message, ..
            } => {
                assert_eq!(location, Some((4, 11)));
                assert!(message.contains("unknown type `int`"), "{message}");
            }
            other => panic!("{other:?}"),
        }
    }
}
