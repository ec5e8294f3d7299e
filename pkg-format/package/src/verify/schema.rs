//! The parameter schema, node by node: structure, keywords, the extensions (`trigger`,
//! `immutable`, `oldName`), `enum` and `default`.
//!
//! Every schema node is visited ([`walk`]): through `properties`, `items`, `prefixItems`,
//! `additionalProperties`, `patternProperties`, the junctors (`allOf`, `anyOf`, `oneOf`,
//! `not`, `if`/`then`/`else`) and `$defs`/`definitions`. `$ref` is not followed: a node under
//! `$defs` is checked once, where it is written, without the `trigger` it would inherit at the
//! places that use it (a `$ref` is itself reported as not structural).
//!
//! Rules, beyond the structural ones ([`kudo_k8s::structural`] with
//! [`Options::PARAMETERS`](kudo_k8s::structural::Options::PARAMETERS)):
//! - `trigger` is a string naming a plan of the operator, and equal to the nearest ancestor's
//!   `trigger` when one has it (KEP-33: a deeper level must not name a different plan;
//!   restating the same plan is allowed); array items inherit through `items`.
//! - `immutable` is a boolean; an `immutable: true` property has a `default`, is listed in its
//!   parent's `required`, or has a descendant with a default (defaults then create it), else it
//!   could never get a value after installation. Array items and map values exist when their
//!   collection does and are not checked.
//! - `oldName` is a non-empty string: a top-level name (no `/`) or a JSON pointer (starting
//!   with `/`, `~` escaped as `~0`/`~1`); not inside array items, which the migration does not
//!   follow (an array moves whole).
//! - `enum` is a non-empty list; each value is valid against its own node; the node's default
//!   is one of them.
//! - `default` is valid against its own node (nested defaults filled in first; a missing
//!   required value is not an error, as for the defaults as a whole).
//! - keys that are not keywords of JSON-schema (drafts 7 to 2020-12), OpenAPI v3 or kudo, and
//!   look like a typo of one (`imutable`, `defualt`: see `did_you_mean`), are warned about;
//!   other unknown keys are annotations and kept. Keys of `properties`, `patternProperties`,
//!   `$defs` and `definitions` are names, not keywords, and `x-` keys are extensions.

use serde_json::{Map, Value};

use super::{did_you_mean, file_origin, params_origin, value_pointer};
use crate::package::Package;
use kudo_diag::diag::{Code, Diagnostic, Origin, Shown};
use kudo_diag::pointer;
use kudo_k8s::structural::{self, Options};
use kudo_policy::params::{ParamSchema, Params};
use kudo_policy::validate::Validator;
use kudo_policy::values::Values;

/// Deepest schema nesting walked.
const MAX_DEPTH: usize = structural::MAX_DEPTH;

/// Every keyword a parameter schema may use: JSON-schema drafts 7, 2019-09 and 2020-12, OpenAPI
/// v3's additions, and kudo's extensions. `x-` keys are extensions and are not listed.
const KEYWORDS: &[&str] = &[
    // core
    "$schema",
    "$id",
    "id",
    "$ref",
    "$anchor",
    "$dynamicRef",
    "$dynamicAnchor",
    "$recursiveRef",
    "$recursiveAnchor",
    "$vocabulary",
    "$comment",
    "$defs",
    "definitions",
    // applicators
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "if",
    "then",
    "else",
    "dependentSchemas",
    "dependencies",
    "prefixItems",
    "items",
    "additionalItems",
    "contains",
    "properties",
    "patternProperties",
    "additionalProperties",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
    // validation
    "type",
    "const",
    "enum",
    "multipleOf",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "pattern",
    "maxItems",
    "minItems",
    "uniqueItems",
    "maxContains",
    "minContains",
    "maxProperties",
    "minProperties",
    "required",
    "dependentRequired",
    // annotations, format, content
    "title",
    "description",
    "default",
    "deprecated",
    "readOnly",
    "writeOnly",
    "examples",
    "format",
    "contentEncoding",
    "contentMediaType",
    "contentSchema",
    // OpenAPI v3
    "nullable",
    "discriminator",
    "xml",
    "externalDocs",
    "example",
    // kudo
    "trigger",
    "immutable",
    "oldName",
    "deprecationMessage",
];

/// The fields of a v1beta1 parameter (KUDO's `Parameter`).
const V1BETA1_FIELDS: &[&str] = &[
    "name",
    "displayName",
    "description",
    "default",
    "required",
    "type",
    "trigger",
    "immutable",
    "enum",
    "hint",
    "advanced",
    "group",
];

/// How a schema node is reached from its parent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Position {
    /// The root.
    Root,
    /// A declared property (`properties/NAME`).
    Property,
    /// An array item (`items`, `prefixItems/N`, `additionalItems`).
    Item,
    /// A map value (`additionalProperties`, `patternProperties/RE`).
    MapValue,
    /// A junctor branch or another subschema describing the same value.
    Branch,
    /// A definition under `$defs`/`definitions`.
    Definition,
}

/// A schema node, with what the walk knows about its place.
pub(super) struct Node<'a> {
    /// The node.
    pub map: &'a Map<String, Value>,
    /// Its schema pointer tokens.
    pub tokens: Vec<String>,
    /// How it is reached.
    pub position: Position,
    /// For a property: the node that declares it, and its name.
    pub parent: Option<(&'a Map<String, Value>, &'a str)>,
    /// Under array items.
    pub in_items: bool,
    /// The nearest ancestor's `trigger`, with that ancestor's schema tokens.
    pub inherited_trigger: Option<(&'a Value, Vec<String>)>,
}

/// Visits every object node of `root` (boolean schemas have nothing to check), parents first.
pub(super) fn walk<'a>(root: &'a Value, f: &mut dyn FnMut(&Node<'a>)) {
    let Value::Object(map) = root else { return };
    visit(
        Node {
            map,
            tokens: Vec::new(),
            position: Position::Root,
            parent: None,
            in_items: false,
            inherited_trigger: None,
        },
        0,
        f,
    );
}

fn visit<'a>(node: Node<'a>, depth: usize, f: &mut dyn FnMut(&Node<'a>)) {
    if depth > MAX_DEPTH {
        return;
    }
    f(&node);
    let map = node.map;
    let trigger = match map.get("trigger") {
        Some(t) => Some((t, node.tokens.clone())),
        None => node.inherited_trigger.clone(),
    };
    let mut child = |value: &'a Value,
                     path: &[&str],
                     position: Position,
                     parent: Option<(&'a Map<String, Value>, &'a str)>| {
        let Value::Object(m) = value else { return };
        let mut tokens = node.tokens.clone();
        tokens.extend(path.iter().map(|s| s.to_string()));
        let definition = position == Position::Definition;
        visit(
            Node {
                map: m,
                tokens,
                position,
                parent,
                in_items: !definition && (node.in_items || position == Position::Item),
                inherited_trigger: if definition { None } else { trigger.clone() },
            },
            depth + 1,
            f,
        );
    };
    for (kw, position) in [
        ("properties", Position::Property),
        ("patternProperties", Position::MapValue),
        ("$defs", Position::Definition),
        ("definitions", Position::Definition),
        ("dependentSchemas", Position::Branch),
        ("dependencies", Position::Branch),
    ] {
        if let Some(Value::Object(entries)) = map.get(kw) {
            for (name, v) in entries {
                let parent = (position == Position::Property).then_some((map, name.as_str()));
                child(v, &[kw, name], position, parent);
            }
        }
    }
    for (kw, position) in [
        ("allOf", Position::Branch),
        ("anyOf", Position::Branch),
        ("oneOf", Position::Branch),
        ("prefixItems", Position::Item),
        ("items", Position::Item),
    ] {
        if let Some(Value::Array(list)) = map.get(kw) {
            for (i, v) in list.iter().enumerate() {
                child(v, &[kw, &i.to_string()], position, None);
            }
        }
    }
    for (kw, position) in [
        ("items", Position::Item),
        ("additionalItems", Position::Item),
        ("unevaluatedItems", Position::Item),
        ("contains", Position::Item),
        ("additionalProperties", Position::MapValue),
        ("unevaluatedProperties", Position::MapValue),
        ("not", Position::Branch),
        ("if", Position::Branch),
        ("then", Position::Branch),
        ("else", Position::Branch),
        ("propertyNames", Position::Branch),
        ("contentSchema", Position::Branch),
    ] {
        if let Some(v @ Value::Object(_)) = map.get(kw) {
            child(v, &[kw], position, None);
        }
    }
}

pub(super) fn check(pkg: &Package, out: &mut Vec<Diagnostic>) {
    let schema = pkg.schema();
    for v in structural::violations_with(schema.as_value(), &Options::PARAMETERS) {
        out.push(
            Diagnostic::error(
                Code::NotStructural,
                value_pointer(&v.tokens),
                format!("not structural: {v}"),
            )
            .with_origin(params_origin(pkg, &v.pointer())),
        );
    }
    match pkg.params() {
        Params::V1beta1(p) => {
            for param in &p.parameters {
                for key in param.extra.keys() {
                    // KUDO's presentation fields (`group`, `advanced`, `hint`, checked in
                    // `presentation`) and kudo's extensions are carried over as written
                    if V1BETA1_FIELDS.contains(&key.as_str()) || GUARANTEES.contains(&key.as_str())
                    {
                        continue;
                    }
                    let known = V1BETA1_FIELDS.iter().chain(&GUARANTEES).copied();
                    if let Some(m) = did_you_mean(key, known) {
                        out.push(
                            unknown_keyword(key, &pointer::push("", &param.name), m, "a parameter")
                                .with_origin(file_origin(
                                    pkg.params_document(),
                                    &pointer::push(&param.pointer, key),
                                )),
                        );
                    }
                }
            }
        }
        Params::V1beta2(_) => walk(schema.as_value(), &mut |node| {
            for key in node.map.keys() {
                if KEYWORDS.contains(&key.as_str()) || key.starts_with("x-") {
                    continue;
                }
                if let Some(m) = did_you_mean(key, KEYWORDS.iter().copied()) {
                    let mut at = node.tokens.clone();
                    at.push(key.clone());
                    out.push(
                        unknown_keyword(key, &value_pointer(&node.tokens), m, "a schema")
                            .with_origin(params_origin(pkg, &pointer::from_tokens(&at))),
                    );
                }
            }
        }),
    }
    walk(schema.as_value(), &mut |node| {
        trigger(pkg, node, out);
        immutable(pkg, node, out);
        old_name(pkg, node, out);
        enum_and_default(pkg, schema, node, out);
    });
}

/// kudo's extensions (and `writeOnly`, which hides secrets): a typo of one silently drops a
/// guarantee its author believes in, so it is an error, not a warning.
const GUARANTEES: [&str; 4] = ["trigger", "immutable", "oldName", "writeOnly"];

fn unknown_keyword(key: &str, value_ptr: &str, meant: &str, what: &str) -> Diagnostic {
    let message = format!("`{key}` is not a keyword of {what}: it is ignored");
    if GUARANTEES.contains(&meant) {
        let lost = match meant {
            "trigger" => "a change runs the default plan instead",
            "immutable" => "the value can be changed",
            "oldName" => "an upgrade does not carry the old value over",
            _ => "the value is not treated as a secret",
        };
        return Diagnostic::error(
            Code::UnknownKeyword,
            value_ptr,
            format!("{message}, so {lost}"),
        )
        .with_help(format!(
            "did you mean `{meant}`? (the keyword is case-sensitive)"
        ));
    }
    Diagnostic::warning(Code::UnknownKeyword, value_ptr, message)
        .with_help(format!("did you mean `{meant}`?"))
}

/// The origin of a keyword of `node` (or of something inside it: `rest`).
fn at(pkg: &Package, node: &Node<'_>, rest: &[&str]) -> Origin {
    let mut t = node.tokens.clone();
    t.extend(rest.iter().map(|s| s.to_string()));
    params_origin(pkg, &pointer::from_tokens(&t))
}

fn trigger(pkg: &Package, node: &Node<'_>, out: &mut Vec<Diagnostic>) {
    let Some(t) = node.map.get("trigger") else {
        return;
    };
    let ptr = value_pointer(&node.tokens);
    let plans = &pkg.operator().plans;
    match t {
        Value::String(plan) if plans.contains_key(plan) => {}
        Value::String(plan) => {
            let names: Vec<&str> = plans.keys().map(String::as_str).collect();
            let mut help = format!("the plans are: {}", names.join(", "));
            if plan == "not-allowed" {
                help = format!(
                    "`not-allowed` was an early way to refuse updates by naming no plan: say `immutable: true` instead ({help})"
                );
            } else if let Some(m) = did_you_mean(plan, names.iter().copied()) {
                help = format!("did you mean `{m}`? ({help})");
            }
            out.push(
                Diagnostic::error(
                    Code::UnknownPlan,
                    ptr.clone(),
                    format!("`trigger: {plan}` names a plan the operator does not have"),
                )
                .with_origin(at(pkg, node, &["trigger"]))
                .with_help(help),
            );
        }
        other => out.push(
            Diagnostic::error(
                Code::UnknownPlan,
                ptr.clone(),
                format!("`trigger` must be the name of a plan, not {other}"),
            )
            .with_origin(at(pkg, node, &["trigger"])),
        ),
    }
    if let Some((ancestor, tokens)) = &node.inherited_trigger
        && *ancestor != t
    {
        let anc_ptr = value_pointer(tokens);
        let anc_ptr = if anc_ptr.is_empty() { "/" } else { &anc_ptr };
        out.push(
            Diagnostic::error(
                Code::TriggerConflict,
                ptr,
                format!(
                    "`trigger: {}` differs from `trigger: {}` of its ancestor {anc_ptr}: a deeper level must not name a different plan",
                    plain(t),
                    plain(ancestor)
                ),
            )
            .with_origin(at(pkg, node, &["trigger"]))
            .with_help("remove the inner trigger, or restate the ancestor's"),
        );
    }
}

/// A string as written, anything else as JSON.
fn plain(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn immutable(pkg: &Package, node: &Node<'_>, out: &mut Vec<Diagnostic>) {
    let ptr = value_pointer(&node.tokens);
    match node.map.get("immutable") {
        None | Some(Value::Bool(false)) => {}
        Some(Value::Bool(true)) => {
            // the root, items and map values exist when their container does
            let (Position::Property, Some((parent, name))) = (node.position, node.parent) else {
                return;
            };
            let required = parent
                .get("required")
                .and_then(Value::as_array)
                .is_some_and(|r| r.iter().any(|n| n.as_str() == Some(name)));
            if !required && !defaulted(node.map, 0) {
                out.push(
                    Diagnostic::error(
                        Code::ImmutableUnset,
                        ptr,
                        "is `immutable` but has no `default` and is not `required`: if it is not set at installation it can never be set",
                    )
                    .with_origin(at(pkg, node, &["immutable"]))
                    .with_help(format!(
                        "give it a `default`, or list `{name}` in its parent's `required`"
                    )),
                );
            }
        }
        Some(other) => out.push(
            Diagnostic::error(
                Code::InvalidSchema,
                ptr,
                format!("`immutable` must be true or false, not {other}"),
            )
            .with_origin(at(pkg, node, &["immutable"])),
        ),
    }
}

/// The node has a default, or defaults create it: one of its properties (at any depth) has one.
fn defaulted(map: &Map<String, Value>, depth: usize) -> bool {
    if map.contains_key("default") {
        return true;
    }
    depth < MAX_DEPTH
        && map
            .get("properties")
            .and_then(Value::as_object)
            .is_some_and(|p| {
                p.values()
                    .filter_map(Value::as_object)
                    .any(|m| defaulted(m, depth + 1))
            })
}

fn old_name(pkg: &Package, node: &Node<'_>, out: &mut Vec<Diagnostic>) {
    let Some(o) = node.map.get("oldName") else {
        return;
    };
    let ptr = value_pointer(&node.tokens);
    let problem = match o {
        Value::String(s) if s.is_empty() => Some(
            "is empty: it must be a top-level name (`CLUSTER_NAME`) or a JSON pointer (`/cluster/name`)"
                .to_string(),
        ),
        Value::String(s) if s.starts_with('/') => pointer::tokens(s)
            .err()
            .map(|e| format!("{s:?} is not a valid JSON pointer: {e}")),
        Value::String(s) if s.contains('/') => Some(format!(
            "{s:?} is neither a top-level name (without `/`) nor a JSON pointer (starting with `/`)"
        )),
        Value::String(_) => None,
        other => Some(format!(
            "must be a string (a name or a JSON pointer), not {other}"
        )),
    };
    if let Some(p) = problem {
        out.push(
            Diagnostic::error(Code::InvalidOldName, ptr.clone(), format!("`oldName` {p}"))
                .with_origin(at(pkg, node, &["oldName"])),
        );
    }
    if node.in_items {
        out.push(
            Diagnostic::error(
                Code::InvalidOldName,
                ptr,
                "`oldName` inside array items is not supported: the migration moves values between fixed places, and an array moves whole",
            )
            .with_origin(at(pkg, node, &["oldName"]))
            .with_help("put the `oldName` on the array itself"),
        );
    }
}

/// JSON equality with numbers compared by value (`1` is `1.0`), as `enum` compares them.
fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(i), Some(j)) => i == j,
            _ => match (x.as_u64(), y.as_u64()) {
                (Some(i), Some(j)) => i == j,
                _ => x.as_f64() == y.as_f64(),
            },
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| json_eq(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_eq(v, w)))
        }
        _ => a == b,
    }
}

/// A validator for one node of the schema, with the root's definitions so local `$ref`s
/// resolve. `None` when the node does not compile (the whole schema's check reports why).
fn node_validator(schema: &ParamSchema, map: &Map<String, Value>) -> Option<Validator> {
    let mut sub = map.clone();
    for key in ["$defs", "definitions"] {
        if let Some(d) = schema.as_value().get(key)
            && !sub.contains_key(key)
        {
            sub.insert(key.to_string(), d.clone());
        }
    }
    Validator::new(&ParamSchema::new(Value::Object(sub), schema.draft())).ok()
}

fn enum_and_default(
    pkg: &Package,
    schema: &ParamSchema,
    node: &Node<'_>,
    out: &mut Vec<Diagnostic>,
) {
    let map = node.map;
    let default = map.get("default");
    let ptr = value_pointer(&node.tokens);
    let secret = schema.is_secret(&pointer::tokens(&ptr).unwrap_or_default())
        || map.get("writeOnly") == Some(&Value::Bool(true));
    let shown = |v: &Value| Shown::of(v, secret);
    let mut default_reported = false;
    let values = match map.get("enum") {
        None => &[][..],
        Some(Value::Array(values)) if !values.is_empty() => {
            if let Some(d) = default
                && !values.iter().any(|v| json_eq(v, d))
            {
                let list: Vec<String> = values.iter().map(|v| shown(v).to_string()).collect();
                out.push(
                    Diagnostic::error(
                        Code::InvalidDefault,
                        ptr.clone(),
                        format!(
                            "the default is not one of the `enum` values: {}",
                            list.join(", ")
                        ),
                    )
                    .with_value(shown(d))
                    .with_origin(at(pkg, node, &["default"])),
                );
                default_reported = true;
            }
            &values[..]
        }
        Some(other) => {
            out.push(
                Diagnostic::error(
                    Code::InvalidDefault,
                    ptr.clone(),
                    "`enum` must be a non-empty list of the allowed values",
                )
                .with_value(shown(other))
                .with_origin(at(pkg, node, &["enum"])),
            );
            &[][..]
        }
    };
    if default.is_none() && values.is_empty() {
        return;
    }
    let Some(validator) = node_validator(schema, map) else {
        return;
    };
    let nested = |rel: &str| {
        let mut p = ptr.clone();
        p.push_str(rel);
        p
    };
    if let Some(d) = default {
        let mut filled = Values::new(d.clone(), Origin::Default);
        filled.apply_defaults(validator.schema());
        for e in validator.validate(&filled) {
            if e.code == Code::Required || (default_reported && e.code == Code::NotInEnum) {
                continue;
            }
            let rel: Vec<String> = e.pointer.tokens();
            let mut origin_path = vec!["default"];
            origin_path.extend(rel.iter().map(String::as_str));
            let mut message = format!("the default {}", e.message);
            if !e.pointer.is_empty() {
                let whole = if ptr.is_empty() { "/" } else { &ptr };
                message.push_str(&format!(" (in the default of {whole})"));
            }
            let mut diag = Diagnostic::error(Code::InvalidDefault, nested(&e.pointer), message)
                .with_origin(at(pkg, node, &origin_path));
            diag.value = e.value.map(|v| if secret { Shown::Masked } else { v });
            diag.help = e.help;
            out.push(diag);
        }
    }
    for (i, v) in values.iter().enumerate() {
        let i_text = i.to_string();
        for e in validator.validate(&Values::new(v.clone(), Origin::None)) {
            let rel: Vec<String> = e.pointer.tokens();
            let mut origin_path = vec!["enum", i_text.as_str()];
            origin_path.extend(rel.iter().map(String::as_str));
            let mut diag = Diagnostic::error(
                Code::InvalidDefault,
                nested(&e.pointer),
                format!("`enum` entry {} of {} {}", i + 1, values.len(), e.message),
            )
            .with_origin(at(pkg, node, &origin_path));
            diag.value = e.value.map(|v| if secret { Shown::Masked } else { v });
            out.push(diag);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_walk_reaches_every_subschema_with_its_place() {
        let schema = json!({
            "type": "object",
            "trigger": "t0",
            "$defs": {"d": {"type": "string"}},
            "properties": {
                "a": {"type": "array", "items": {"type": "object", "properties": {"b": {}}}},
                "m": {"type": "object", "additionalProperties": {"type": "string"}},
                "c": {"anyOf": [{"minLength": 1}], "not": {"const": "x"}}
            }
        });
        let mut seen = Vec::new();
        walk(&schema, &mut |n| {
            seen.push((
                pointer::from_tokens(&n.tokens),
                n.position,
                n.in_items,
                n.parent.map(|(_, name)| name.to_string()),
                n.inherited_trigger.as_ref().map(|(t, _)| t.to_string()),
            ))
        });
        let t0 = Some("\"t0\"".to_string());
        let s = |x: &str| x.to_string();
        assert_eq!(
            seen,
            vec![
                (s(""), Position::Root, false, None, None),
                (
                    s("/properties/a"),
                    Position::Property,
                    false,
                    Some(s("a")),
                    t0.clone()
                ),
                (
                    s("/properties/a/items"),
                    Position::Item,
                    true,
                    None,
                    t0.clone()
                ),
                (
                    s("/properties/a/items/properties/b"),
                    Position::Property,
                    true,
                    Some(s("b")),
                    t0.clone()
                ),
                (
                    s("/properties/m"),
                    Position::Property,
                    false,
                    Some(s("m")),
                    t0.clone()
                ),
                (
                    s("/properties/m/additionalProperties"),
                    Position::MapValue,
                    false,
                    None,
                    t0.clone()
                ),
                (
                    s("/properties/c"),
                    Position::Property,
                    false,
                    Some(s("c")),
                    t0.clone()
                ),
                (
                    s("/properties/c/anyOf/0"),
                    Position::Branch,
                    false,
                    None,
                    t0.clone()
                ),
                (
                    s("/properties/c/not"),
                    Position::Branch,
                    false,
                    None,
                    t0.clone()
                ),
                (s("/$defs/d"), Position::Definition, false, None, None),
            ]
        );
    }

    #[test]
    fn enum_values_compare_numbers_by_value() {
        assert!(json_eq(&json!(1), &json!(1.0)));
        assert!(json_eq(&json!({"a": [1, 2.5]}), &json!({"a": [1.0, 2.5]})));
        assert!(!json_eq(&json!(1), &json!("1")));
        assert!(!json_eq(&json!([1]), &json!([1, 1])));
    }

    #[test]
    fn a_property_is_defaulted_through_its_descendants() {
        let m = |v: Value| v.as_object().unwrap().clone();
        assert!(defaulted(&m(json!({"default": 1})), 0));
        assert!(defaulted(
            &m(json!({"properties": {"a": {"properties": {"b": {"default": 1}}}}})),
            0
        ));
        assert!(!defaulted(
            &m(json!({"properties": {"a": {"items": {"default": 1}}}})),
            0
        ));
    }
}
