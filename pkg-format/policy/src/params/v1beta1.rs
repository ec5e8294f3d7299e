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
//!     group: cluster        # how an installer presents it: a group of `groups`,
//!     advanced: false       # hidden unless asked for,
//!     hint: An odd number.  # with a hint
//! groups:
//!   - name: cluster
//!     displayName: Cluster
//!     description: The size and shape of the cluster.
//!     prio: 1
//! ```
//!
//! The pre-November-2019 map format (`NODE_COUNT: {default: "3", description: ...}`) is read
//! into the same model; it has no `groups`. KUDO's presentation fields (`group`, `advanced`,
//! `hint`: "descriptive only", KUDO did not put them in its OperatorVersion) are checked for
//! their type and kept as written in [`V1beta1Parameter::extra`], with fields KUDO did not
//! know (typos like `desription`, or `example`), so that nothing is lost on conversion; read
//! them with [`V1beta1Parameter::group`] and [`V1beta1Parameter::is_advanced`].

use std::fmt;

use serde_json::{Map, Value};

use kudo_diag::error::{Error, Result};
use kudo_diag::pointer;
use kudo_yaml::document::Document;

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
    /// Fields kept as written for the conversion to copy: KUDO's presentation fields
    /// (`group`, `advanced`, `hint`; their types are checked when read) and fields KUDO did not
    /// define.
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

    /// `group`: the name of the group (of [`V1beta1Params::groups`]) an installer shows the
    /// parameter in; `None` when absent or empty (no group, as KUDO read it).
    pub fn group(&self) -> Option<&str> {
        self.extra
            .get("group")
            .and_then(Value::as_str)
            .filter(|g| !g.is_empty())
    }

    /// `advanced: true`: an installer hides the parameter unless asked for advanced ones.
    pub fn is_advanced(&self) -> bool {
        match self.extra.get("advanced") {
            Some(Value::Bool(b)) => *b,
            Some(Value::String(s)) => s == "true",
            _ => false,
        }
    }
}

/// A group of parameters (`groups` in params.yaml): how an installer presents the
/// parameters whose `group` names it. KUDO's `packages.Group`.
#[derive(Debug, Clone, PartialEq)]
pub struct V1beta1Group {
    /// Name, referenced by a parameter's `group`.
    pub name: String,
    /// `displayName`.
    pub display_name: Option<String>,
    /// `description`.
    pub description: Option<String>,
    /// `prio`: the order of the groups (KUDO's `Priority`).
    pub priority: Option<i64>,
    /// Pointer of this group inside the params file (for locations).
    pub pointer: String,
}

/// A v1beta1 params file.
#[derive(Debug, Clone, PartialEq)]
pub struct V1beta1Params {
    /// Which shape the file had.
    pub shape: V1beta1Shape,
    /// The parameters in file order.
    pub parameters: Vec<V1beta1Parameter>,
    /// The parameter groups in file order (`groups`, list format only).
    pub groups: Vec<V1beta1Group>,
}

impl V1beta1Params {
    /// No parameters.
    pub fn empty() -> Self {
        V1beta1Params {
            shape: V1beta1Shape::List,
            parameters: Vec::new(),
            groups: Vec::new(),
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
        let mut groups = Vec::new();
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
            match root.get("groups") {
                None | Some(Value::Null) => {}
                Some(Value::Array(items)) => {
                    for (i, item) in items.iter().enumerate() {
                        groups.push(group(item, &format!("/groups/{i}"), &invalid)?);
                    }
                }
                Some(_) => return Err(invalid("/groups", "`groups` must be a list".into())),
            }
            if let Some(k) = root
                .keys()
                .find(|k| !matches!(k.as_str(), "apiVersion" | "parameters" | "groups"))
            {
                let ptr = pointer::push("", k);
                return Err(invalid(
                    &ptr,
                    format!(
                        "unexpected top-level field `{k}` (expected `apiVersion`, `parameters` and `groups`)"
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
        Ok(V1beta1Params {
            shape,
            parameters,
            groups,
        })
    }
}

/// One entry of `groups`. Unknown fields are ignored, as KUDO ignored them.
fn group(item: &Value, ptr: &str, invalid: &dyn Fn(&str, String) -> Error) -> Result<V1beta1Group> {
    let Value::Object(fields) = item else {
        return Err(invalid(ptr, "a group must be a mapping".into()));
    };
    let name = match fields.get("name") {
        Some(Value::String(n)) if !n.is_empty() => n.clone(),
        _ => {
            return Err(invalid(
                ptr,
                "a group needs a non-empty string `name`".into(),
            ));
        }
    };
    let text = |key: &str| -> Result<Option<String>> {
        match fields.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(invalid(
                &pointer::push(ptr, key),
                format!("`{key}` of group `{name}` must be text"),
            )),
        }
    };
    let priority = match fields.get("prio") {
        None | Some(Value::Null) => None,
        Some(Value::Number(n)) if n.is_i64() => n.as_i64(),
        Some(_) => {
            return Err(invalid(
                &pointer::push(ptr, "prio"),
                format!("`prio` of group `{name}` must be an integer"),
            ));
        }
    };
    Ok(V1beta1Group {
        display_name: text("displayName")?,
        description: text("description")?,
        priority,
        name,
        pointer: ptr.to_string(),
    })
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
            // presentation only: typed as KUDO typed them, kept as written for the conversion
            "group" | "hint" => match value {
                Value::Null | Value::String(_) => {
                    p.extra.insert(key.clone(), value.clone());
                }
                _ => return Err(invalid(&at, format!("`{key}` of `{}` must be text", p.name))),
            },
            "advanced" => {
                flag()?;
                p.extra.insert(key.clone(), value.clone());
            }
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
    fn groups_and_the_presentation_fields_are_read_and_kept_for_the_conversion() {
        let p = parse(
            "apiVersion: kudo.dev/v1beta1\ngroups:\n  - name: cluster\n    displayName: Cluster\n    description: Its size.\n    prio: 2\n  - name: tls\nparameters:\n  - name: N\n    group: cluster\n    advanced: true\n    hint: Odd.\n  - name: M\n    group: \"\"\n    advanced: \"false\"\n",
        );
        assert_eq!(
            p.groups,
            vec![
                V1beta1Group {
                    name: "cluster".into(),
                    display_name: Some("Cluster".into()),
                    description: Some("Its size.".into()),
                    priority: Some(2),
                    pointer: "/groups/0".into(),
                },
                V1beta1Group {
                    name: "tls".into(),
                    display_name: None,
                    description: None,
                    priority: None,
                    pointer: "/groups/1".into(),
                },
            ]
        );
        let (n, m) = (&p.parameters[0], &p.parameters[1]);
        assert_eq!((n.group(), n.is_advanced()), (Some("cluster"), true));
        assert_eq!((m.group(), m.is_advanced()), (None, false));
        let kept: Vec<&str> = n.extra.keys().map(String::as_str).collect();
        assert_eq!(kept, ["group", "advanced", "hint"]);
    }

    #[test]
    fn malformed_groups_and_presentation_fields_point_at_the_field() {
        let head = "apiVersion: kudo.dev/v1beta1\n";
        let cases: &[(&str, (usize, usize), &str)] = &[
            ("groups: cluster\n", (2, 9), "`groups` must be a list"),
            (
                "groups:\n  - displayName: X\n",
                (3, 5),
                "a group needs a non-empty string `name`",
            ),
            (
                "groups:\n  - name: a\n    prio: high\n",
                (4, 11),
                "`prio` of group `a` must be an integer",
            ),
            (
                "parameters:\n  - name: N\n    group: [a]\n",
                (4, 5),
                "`group` of `N` must be text",
            ),
            (
                "parameters:\n  - name: N\n    advanced: yes please\n",
                (4, 15),
                "`advanced` of `N` must be true or false",
            ),
            (
                "parameters: []\nextra: 1\n",
                (3, 8),
                "unexpected top-level field `extra`",
            ),
        ];
        for (text, at, want) in cases {
            let doc = Document::parse(Path::new("params.yaml"), &format!("{head}{text}")).unwrap();
            match V1beta1Params::parse(&doc).unwrap_err() {
                Error::Invalid {
                    location, message, ..
                } => {
                    assert_eq!(location, Some(*at), "{text}");
                    assert!(message.contains(want), "{text}: {message}");
                }
                other => panic!("{text}: {other:?}"),
            }
        }
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
