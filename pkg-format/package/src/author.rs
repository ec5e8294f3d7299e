//! Adding a parameter to a package's `params.yaml`: what `kudo package add parameter` (the
//! wizard and its scripted form) calls.
//!
//! Every answer is checked here, once, so that the wizard can ask again and the scripted form
//! can refuse with the same words: the place must be an object parameter (the root, an object,
//! or the items of an array of objects), the name valid and not taken (case-insensitively), the
//! default and enum values valid for the type and constraints as typed, the trigger one of the
//! operator's plans and allowed by an enclosing trigger, an immutable parameter needs a default
//! or must be required. The file is changed in place with `kudo_yaml::edit` (comments, key order
//! and indentation kept), and the result must load and compile again.

use serde_json::{Map, Value, json};

use crate::package::Package;
use kudo_diag::diag::{Code, Diagnostic, Origin};
use kudo_diag::pointer;
use kudo_policy::params::{ParamSchema, Params};
use kudo_policy::trigger::{self, Reason};
use kudo_policy::validate::Validator;
use kudo_yaml::document::Document;
use kudo_yaml::edit::{self, Edit};

/// The types a new parameter may have.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParamType {
    /// `string`.
    String,
    /// `integer`.
    Integer,
    /// `number`.
    Number,
    /// `boolean`.
    Boolean,
    /// `object` (free-form until it gets parameters of its own).
    Object,
    /// `array` with items of this type.
    Array(Box<ParamType>),
}

impl ParamType {
    /// Parses `string`, `integer`, `number`, `boolean`, `object`, `array` (of strings) or
    /// `array:TYPE`.
    pub fn parse(s: &str) -> Option<ParamType> {
        Some(match s {
            "string" => ParamType::String,
            "integer" => ParamType::Integer,
            "number" => ParamType::Number,
            "boolean" => ParamType::Boolean,
            "object" => ParamType::Object,
            "array" => ParamType::Array(Box::new(ParamType::String)),
            other => {
                let item = other.strip_prefix("array:")?;
                ParamType::Array(Box::new(ParamType::parse(item)?))
            }
        })
    }

    /// The JSON-schema type name.
    pub fn name(&self) -> &'static str {
        match self {
            ParamType::String => "string",
            ParamType::Integer => "integer",
            ParamType::Number => "number",
            ParamType::Boolean => "boolean",
            ParamType::Object => "object",
            ParamType::Array(_) => "array",
        }
    }

    /// The constraint keywords that fit this type.
    pub fn constraints(&self) -> &'static [&'static str] {
        match self {
            ParamType::String => &["minLength", "maxLength", "pattern", "format"],
            ParamType::Integer | ParamType::Number => &[
                "minimum",
                "maximum",
                "exclusiveMinimum",
                "exclusiveMaximum",
                "multipleOf",
            ],
            ParamType::Array(_) => &["minItems", "maxItems", "uniqueItems"],
            ParamType::Object => &["minProperties", "maxProperties"],
            ParamType::Boolean => &[],
        }
    }

    fn schema(&self) -> Value {
        match self {
            ParamType::Array(item) => json!({"type": "array", "items": item.schema()}),
            other => json!({"type": other.name()}),
        }
    }
}

/// A parameter to add. Texts (`default`, `enum`, constraint values) are YAML, typed by the
/// parameter's type as `-p` values are.
#[derive(Debug, Clone, PartialEq)]
pub struct NewParameter {
    /// Value pointer of the enclosing object: `""` for the root, `/backup/credentials`, or
    /// `/topology/0` for the items of an array of objects.
    pub parent: String,
    /// The name.
    pub name: String,
    /// The type.
    pub ty: ParamType,
    /// The default, as YAML text.
    pub default: Option<String>,
    /// `title` (v1beta1: `displayName`).
    pub title: Option<String>,
    /// `description`.
    pub description: Option<String>,
    /// Listed in the parent's `required`.
    pub required: bool,
    /// `enum` values, as YAML texts.
    pub enum_values: Vec<String>,
    /// Constraint keyword and its value as YAML text (`minimum`, `3`).
    pub constraints: Vec<(String, String)>,
    /// `trigger`.
    pub trigger: Option<String>,
    /// `immutable`.
    pub immutable: bool,
    /// `writeOnly`.
    pub write_only: bool,
}

impl NewParameter {
    /// A parameter with only a place, a name and a type.
    pub fn new(parent: &str, name: &str, ty: ParamType) -> NewParameter {
        NewParameter {
            parent: parent.to_string(),
            name: name.to_string(),
            ty,
            default: None,
            title: None,
            description: None,
            required: false,
            enum_values: Vec::new(),
            constraints: Vec::new(),
            trigger: None,
            immutable: false,
            write_only: false,
        }
    }

    /// The value pointer of the new parameter.
    pub fn pointer(&self) -> String {
        pointer::push(&self.parent, &self.name)
    }
}

/// The result: the new `params.yaml` text and the YAML of what was added (for a preview).
#[derive(Debug, Clone)]
pub struct Added {
    /// The whole new params.yaml.
    pub text: String,
    /// The added parameter as it is written.
    pub node: Value,
}

/// The place a user named (`--path`) as a value pointer: `/` or nothing for the root, a
/// pointer (`/topology/0`, the leading `/` optional), or a place as [`places`] shows it
/// (`/topology/[]`). A name that is no place is refused with the places there are.
pub fn place(pkg: &Package, given: &str) -> Result<String, String> {
    let p = match given {
        "/" | "" => String::new(),
        p if p.starts_with('/') => p.to_string(),
        p => format!("/{p}"),
    };
    let places = places(pkg);
    match places
        .iter()
        .find(|(ptr, shown)| *ptr == p || shown.split(' ').next() == Some(p.as_str()))
    {
        Some((ptr, _)) => Ok(ptr.clone()),
        None => Err(format!(
            "--path {given}: not a place for a parameter; one of: {}",
            places
                .iter()
                .map(|(_, shown)| shown.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

/// Where a parameter may go: the root and every object parameter (array items of objects
/// included), as value pointers with a display path (`/topology/[]`).
pub fn places(pkg: &Package) -> Vec<(String, String)> {
    let mut out = vec![(String::new(), "/ (top level)".to_string())];
    if matches!(pkg.params(), Params::V1beta1(_)) {
        return out; // flat parameters: the root only
    }
    let schema = pkg.schema();
    for row in crate::listing::rows(schema, &[]) {
        let p = row.pointer;
        let tokens = pointer::tokens(&p).unwrap_or_default();
        if let Some(node) = schema.node_at(&tokens)
            && schema.is_object(node)
            && !schema.is_array(node)
            && (node.get("properties").is_some() || schema.types(node) == ["object"])
        {
            let tree_path = tokens
                .iter()
                .map(|t| {
                    if t == "0" {
                        "[]".to_string()
                    } else {
                        pointer::escape(t)
                    }
                })
                .collect::<Vec<_>>()
                .join("/");
            out.push((p, format!("/{tree_path}")));
        }
    }
    out
}

/// Why a new parameter is refused, with what was refused. The words are the wizard's and
/// `package add parameter`'s.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Refusal {
    /// The name is empty.
    #[error("the name is empty")]
    EmptyName,
    /// The name holds a character a parameter name cannot have.
    #[error("a name cannot contain {0:?}")]
    NameChar(char),
    /// A place or `$ref` that is not a JSON pointer.
    #[error("{0}")]
    Pointer(String),
    /// The place names no parameter.
    #[error("{0} is not a parameter")]
    NotAParameter(String),
    /// Another parameter has the name (compared ignoring case, as KUDO did).
    #[error("{0} is already a parameter")]
    Taken(String),
    /// A constraint the type does not take.
    #[error("{constraint} does not apply to a {ty} (it takes: {takes})", takes = takes.join(", "))]
    NotApplicable {
        /// The constraint (`minimum`, `pattern`, ...).
        constraint: String,
        /// The parameter's type.
        ty: &'static str,
        /// The constraints the type takes.
        takes: &'static [&'static str],
    },
    /// A numeric constraint whose value is not a number.
    #[error("{constraint} must be a number, got {text:?}")]
    NotANumber {
        /// The constraint.
        constraint: String,
        /// Its value as given.
        text: String,
    },
    /// A `pattern` that is not a regular expression.
    #[error("pattern {0:?} is not a valid regular expression")]
    Pattern(String),
    /// A default or enum value that does not read as the type.
    #[error("the value {0}")]
    Value(kudo_policy::typing::TextError),
    /// An enum value that breaks the other constraints.
    #[error("the enum value {value} {message}")]
    EnumValue {
        /// The value.
        value: Value,
        /// The rule it breaks.
        message: String,
    },
    /// The default breaks a constraint or the enum.
    #[error("the default {0}")]
    Default(String),
    /// The node built is not a valid schema.
    #[error("{0}")]
    Schema(String),
    /// A nested place in a v1beta1 package.
    #[error("a v1beta1 package has flat parameters only: convert it first")]
    Flat,
    /// An array of non-strings in a v1beta1 package.
    #[error("a v1beta1 array has no item type: use array")]
    ItemType,
    /// Constraints in a v1beta1 package.
    #[error("constraints need v1beta2 parameters: convert the package first")]
    Constraints,
    /// A `$ref` leading out of params.yaml.
    #[error("the place is not in params.yaml")]
    NotInParams,
}

/// Checks a name for `parent`: valid, and not taken (case-insensitively, as KUDO compared).
pub fn check_name(pkg: &Package, parent: &str, name: &str) -> Result<(), Refusal> {
    if name.is_empty() {
        return Err(Refusal::EmptyName);
    }
    if let Some(c) = name
        .chars()
        .find(|c| matches!(c, ';' | ',' | '/' | '~') || c.is_whitespace() || c.is_control())
    {
        return Err(Refusal::NameChar(c));
    }
    let schema = pkg.schema();
    let tokens = pointer::tokens(parent).map_err(|e| Refusal::Pointer(e.to_string()))?;
    let node = schema
        .node_at(&tokens)
        .ok_or_else(|| Refusal::NotAParameter(parent.to_string()))?;
    if let Some(taken) = schema
        .property_names(node)
        .into_iter()
        .find(|n| n.eq_ignore_ascii_case(name))
    {
        return Err(Refusal::Taken(pointer::push(parent, taken)));
    }
    Ok(())
}

/// The plans a new parameter at `parent` may trigger: the enclosing trigger's plan only, when
/// there is one, else every plan of the operator.
pub fn allowed_triggers(pkg: &Package, parent: &str) -> Vec<String> {
    let plans: Vec<&str> = pkg.operator().plans.keys().map(String::as_str).collect();
    let probe = pointer::push(parent, "x");
    match trigger::plan_for(pkg.schema(), &plans, &probe) {
        Ok((plan, Reason::Trigger { .. })) => vec![plan],
        _ => plans.iter().map(|p| p.to_string()).collect(),
    }
}

/// Builds the schema node of `p` (without checking the place): typed default, enum and
/// constraints, then checks the default and enum values against the node.
pub fn node(p: &NewParameter) -> Result<Value, Refusal> {
    let mut n = Map::new();
    let Value::Object(base) = p.ty.schema() else {
        unreachable!("a type schema is an object")
    };
    n.insert("type".into(), base["type"].clone());
    if let Some(t) = &p.title {
        n.insert("title".into(), json!(t));
    }
    if let Some(d) = &p.description {
        n.insert("description".into(), json!(d));
    }
    if let Some(items) = base.get("items") {
        n.insert("items".into(), items.clone());
    }
    let shape = ParamSchema::new(
        Value::Object(n.clone()),
        kudo_policy::params::v1beta2::Draft::Draft202012,
    );
    for (k, text) in &p.constraints {
        if !p.ty.constraints().contains(&k.as_str()) {
            return Err(Refusal::NotApplicable {
                constraint: k.clone(),
                ty: p.ty.name(),
                takes: p.ty.constraints(),
            });
        }
        let v = match k.as_str() {
            "pattern" | "format" => Value::String(text.clone()),
            "uniqueItems" => json!(text == "true"),
            _ => match kudo_yaml::document::parse_value(text) {
                Ok(v @ Value::Number(_)) => v,
                _ => {
                    return Err(Refusal::NotANumber {
                        constraint: k.clone(),
                        text: text.clone(),
                    });
                }
            },
        };
        if k == "pattern" && regex::Regex::new(text).is_err() {
            return Err(Refusal::Pattern(text.clone()));
        }
        n.insert(k.clone(), v);
    }
    let typed = |text: &str| {
        kudo_policy::typing::from_text(&shape.types(shape.root()), text).map_err(Refusal::Value)
    };
    let mut enum_values = Vec::new();
    for e in &p.enum_values {
        enum_values.push(typed(e)?);
    }
    if !enum_values.is_empty() {
        n.insert("enum".into(), Value::Array(enum_values));
    }
    let default = match &p.default {
        Some(text) => Some(typed(text)?),
        None => None,
    };
    // Check the default and each enum value against the node as built so far.
    let check = ParamSchema::new(
        json!({"type": "object", "properties": {"v": Value::Object(n.clone())}}),
        kudo_policy::params::v1beta2::Draft::Draft202012,
    );
    let validator = Validator::new(&check).map_err(|d| Refusal::Schema(d[0].message.clone()))?;
    if let Some(Value::Array(es)) = n.get("enum") {
        for e in es {
            // an enum value must satisfy the other constraints
            let mut without = n.clone();
            without.remove("enum");
            let v = Validator::new(&ParamSchema::new(
                json!({"type": "object", "properties": {"v": Value::Object(without)}}),
                kudo_policy::params::v1beta2::Draft::Draft202012,
            ))
            .map_err(|d| Refusal::Schema(d[0].message.clone()))?;
            if let Some(d) = v
                .validate_value(&json!({"v": e}), &|_| Origin::None)
                .into_iter()
                .next()
            {
                return Err(Refusal::EnumValue {
                    value: e.clone(),
                    message: d.message,
                });
            }
        }
    }
    if let Some(v) = &default
        && let Some(d) = validator
            .validate_value(&json!({"v": v}), &|_| Origin::None)
            .into_iter()
            .next()
    {
        return Err(Refusal::Default(d.message));
    }
    if let Some(d) = default {
        n.insert("default".into(), d);
    }
    if let Some(t) = &p.trigger {
        n.insert("trigger".into(), json!(t));
    }
    if p.immutable {
        n.insert("immutable".into(), json!(true));
    }
    if p.write_only {
        n.insert("writeOnly".into(), json!(true));
    }
    // Key order as authors write it: type, title, description, default, the rest.
    let order = ["type", "title", "description", "default", "enum"];
    let mut out = Map::new();
    for k in order {
        if let Some(v) = n.remove(k) {
            out.insert(k.into(), v);
        }
    }
    out.extend(n);
    Ok(Value::Object(out))
}

/// Adds `p` to the package's params.yaml text and returns the new text. Every refusal is a
/// diagnostic naming the parameter and the rule.
pub fn add_parameter(pkg: &Package, p: &NewParameter) -> Result<Added, Vec<Diagnostic>> {
    let at = p.pointer();
    let refuse = |message: String| vec![Diagnostic::error(Code::InvalidName, &at, message)];
    let refused = |r: Refusal| refuse(r.to_string());
    check_name(pkg, &p.parent, &p.name).map_err(refused)?;
    if let Some(t) = &p.trigger {
        let allowed = allowed_triggers(pkg, &p.parent);
        if !allowed.contains(t) {
            return Err(vec![Diagnostic::error(
                Code::UnknownPlan,
                &at,
                format!(
                    "trigger `{t}` is not allowed here: choose one of {}",
                    allowed.join(", ")
                ),
            )]);
        }
    }
    if p.immutable && p.default.is_none() && !p.required {
        return Err(vec![Diagnostic::error(
            Code::ImmutableUnset,
            &at,
            "an immutable parameter needs a default or must be required",
        )]);
    }
    let node =
        node(p).map_err(|r| vec![Diagnostic::error(Code::InvalidDefault, &at, r.to_string())])?;
    let doc = pkg.params_document();
    let text = doc.text();
    let (edits, written) = match pkg.params() {
        Params::V1beta1(_) => v1beta1_edits(p, &node).map_err(refused)?,
        Params::V1beta2(_) => v1beta2_edits(doc.value(), p, node.clone()).map_err(refused)?,
    };
    let out =
        edit::apply(text, &edits).map_err(|e| refuse(format!("cannot edit params.yaml: {e}")))?;
    // The result must load and compile.
    let reparsed = Document::parse(doc.path(), &out)
        .and_then(|d| Params::parse(&d))
        .map_err(|e| refuse(format!("the edited params.yaml would not load: {e}")))?;
    Validator::new(&kudo_policy::convert::schema_of(&reparsed))?;
    Ok(Added {
        text: out,
        node: written,
    })
}

/// The package with its v1beta1 params.yaml converted to v1beta2 (in memory: nothing is
/// written), for adding a nested parameter to a flat package. `None` when it is v1beta2 already.
pub fn converted(pkg: &Package) -> kudo_diag::Result<Option<Package>> {
    if !matches!(pkg.params(), Params::V1beta1(_)) {
        return Ok(None);
    }
    let text = serde_saphyr::to_string(&pkg.schema().to_params_file()).map_err(|e| {
        kudo_diag::Error::Invalid {
            path: pkg.params_document().path().to_path_buf(),
            location: None,
            message: format!("cannot write the converted parameters: {e}"),
        }
    })?;
    let mut files = std::collections::BTreeMap::new();
    files.insert(
        "operator.yaml".to_string(),
        pkg.operator_document().text().as_bytes().to_vec(),
    );
    files.insert("params.yaml".to_string(), text.into_bytes());
    for (name, t) in pkg.templates() {
        files.insert(format!("templates/{name}"), t.as_bytes().to_vec());
    }
    Package::from_files(pkg.source(), files).map(Some)
}

/// v1beta1: a flat parameter appended to `parameters`, with KUDO's fields.
fn v1beta1_edits(p: &NewParameter, node: &Value) -> Result<(Vec<Edit>, Value), Refusal> {
    if !p.parent.is_empty() {
        return Err(Refusal::Flat);
    }
    let mut m = Map::new();
    m.insert("name".into(), json!(p.name));
    if let Some(t) = &p.title {
        m.insert("displayName".into(), json!(t));
    }
    if let Some(d) = &p.description {
        m.insert("description".into(), json!(d));
    }
    if let Some(d) = node.get("default") {
        // KUDO's defaults are strings; arrays and maps as YAML.
        let v = match d {
            Value::String(_) | Value::Array(_) | Value::Object(_) => d.clone(),
            other => json!(other.to_string()),
        };
        m.insert("default".into(), v);
    }
    m.insert("required".into(), json!(p.required));
    let ty = match &p.ty {
        ParamType::Object => "map",
        ParamType::Array(item) if **item != ParamType::String => {
            return Err(Refusal::ItemType);
        }
        other => other.name(),
    };
    if ty != "string" {
        m.insert("type".into(), json!(ty));
    }
    if let Some(e) = node.get("enum") {
        m.insert("enum".into(), e.clone());
    }
    if let Some(t) = &p.trigger {
        m.insert("trigger".into(), json!(t));
    }
    if p.immutable {
        m.insert("immutable".into(), json!(true));
    }
    if p.write_only {
        m.insert("writeOnly".into(), json!(true));
    }
    if !p.constraints.is_empty() {
        return Err(Refusal::Constraints);
    }
    let value = Value::Object(m);
    Ok((
        vec![Edit::Push {
            path: vec!["parameters".into()],
            value: value.clone(),
        }],
        value,
    ))
}

/// v1beta2: the node set under its parent's `properties`, and the name added to `required`.
fn v1beta2_edits(
    doc: &Value,
    p: &NewParameter,
    node: Value,
) -> Result<(Vec<Edit>, Value), Refusal> {
    let tokens = pointer::tokens(&p.parent).map_err(|e| Refusal::Pointer(e.to_string()))?;
    let parent = schema_path(doc, &tokens)?;
    let mut path = parent.clone();
    path.push("properties".into());
    path.push(p.name.clone());
    let mut edits = vec![Edit::Set {
        path,
        value: node.clone(),
    }];
    if p.required {
        let mut req = parent.clone();
        req.push("required".into());
        match doc.pointer(&pointer::from_tokens(&req)) {
            Some(Value::Array(_)) => edits.push(Edit::Push {
                path: req,
                value: json!(p.name),
            }),
            _ => edits.push(Edit::Set {
                path: req,
                value: json!([p.name]),
            }),
        }
    }
    Ok((edits, node))
}

/// The path in params.yaml of the schema node of a value pointer's tokens: `properties/NAME`
/// for names, `items` for array indexes, following local `$ref`s.
fn schema_path(doc: &Value, tokens: &[String]) -> Result<Vec<String>, Refusal> {
    let mut path: Vec<String> = Vec::new();
    let node_at = |path: &[String]| doc.pointer(&pointer::from_tokens(path));
    for t in tokens {
        for _ in 0..32 {
            match node_at(&path)
                .and_then(|n| n.get("$ref"))
                .and_then(Value::as_str)
            {
                Some(r) if r.starts_with("#/") => {
                    path = pointer::tokens(&r[1..]).map_err(|e| Refusal::Pointer(e.to_string()))?;
                }
                _ => break,
            }
        }
        let node = node_at(&path).ok_or(Refusal::NotInParams)?;
        if t.parse::<usize>().is_ok() && node.get("items").is_some() {
            path.push("items".into());
        } else {
            path.push("properties".into());
            path.push(t.clone());
        }
        if node_at(&path).is_none() {
            return Err(Refusal::NotAParameter(pointer::from_tokens(tokens)));
        }
    }
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_place_is_named_by_pointer_or_as_listed_and_a_wrong_one_lists_the_places() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../examples/cassandra-v1beta2");
        let pkg = Package::load(&dir).unwrap();
        assert_eq!(place(&pkg, "/").unwrap(), "");
        assert_eq!(place(&pkg, "").unwrap(), "");
        assert_eq!(place(&pkg, "/topology/0").unwrap(), "/topology/0");
        assert_eq!(place(&pkg, "topology/0").unwrap(), "/topology/0");
        assert_eq!(place(&pkg, "/topology/[]").unwrap(), "/topology/0");
        let e = place(&pkg, "/nodeCount").unwrap_err();
        assert!(e.starts_with("--path /nodeCount: not a place"), "{e}");
        assert!(e.contains("/topology/[]"), "{e}");
    }

    #[test]
    fn nodes_are_typed_and_checked() {
        let mut p = NewParameter::new("", "port", ParamType::Integer);
        p.default = Some("8080".into());
        p.constraints = vec![
            ("minimum".into(), "1".into()),
            ("maximum".into(), "65535".into()),
        ];
        p.enum_values = vec![];
        let n = node(&p).unwrap();
        assert_eq!(
            n,
            json!({"type": "integer", "default": 8080, "minimum": 1, "maximum": 65535})
        );
        p.default = Some("0".into());
        assert!(matches!(node(&p).unwrap_err(), Refusal::Default(m) if m.contains("at least 1")));
        p.default = Some("abc".into());
        assert!(node(&p).is_err());
        let mut s = NewParameter::new("", "level", ParamType::String);
        s.enum_values = vec!["INFO".into(), "123".into()];
        s.default = Some("DEBUG".into());
        assert!(matches!(node(&s).unwrap_err(), Refusal::Default(_)));
        s.default = Some("123".into());
        assert_eq!(node(&s).unwrap()["default"], json!("123"));
        s.constraints = vec![("minimum".into(), "1".into())];
        assert!(matches!(
            node(&s).unwrap_err(),
            Refusal::NotApplicable { constraint, ty: "string", .. } if constraint == "minimum"
        ));
        let a = NewParameter::new("", "tags", ParamType::parse("array:integer").unwrap());
        assert_eq!(
            node(&a).unwrap(),
            json!({"type": "array", "items": {"type": "integer"}})
        );
    }
}
