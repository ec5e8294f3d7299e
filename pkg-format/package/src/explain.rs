//! `kudo explain`: one parameter of a package (or its top level), as `kubectl explain` shows a
//! field of a resource.
//!
//! [`explain`] takes a parameter's pointer and returns an [`Explanation`]: its type, default,
//! constraints (every validation keyword its schema node holds), description, whether it is
//! required, the plan a change of it runs and where that plan comes from, whether it is
//! immutable or `writeOnly` (itself, or through which ancestor), its `oldName`, and its fields
//! (an object's properties; an array's item and the item's properties). The plan and the
//! immutability are decided by the rules every other command uses ([`kudo_policy::trigger::plan_for`],
//! [`kudo_policy::immutable::immutable_at`], through [`crate::listing::row_at`]).
//!
//! Given what an Instance stores ([`Instance`]), the explanation also says the parameter's
//! current value and where it comes from ([`Current`]): the user (`spec.parameters`), a Secret
//! of `spec.parametersFrom`, a kept immutable default, the package default, or nothing.
//!
//! **Secrets.** A `writeOnly` parameter's default is never in an explanation, nor any value of a
//! `writeOnly` parameter: [`Current::masked`] says a value is there. Values a Secret holds are
//! never read here at all: [`SecretSet`] names only the pointers a Secret sets.
//!
//! # Pointers
//!
//! | POINTER | explains |
//! |---|---|
//! | none, `""` or `/` | the top level |
//! | `nodeCount`, `/nodeCount` | a parameter (the leading `/` is optional, as with `-p`) |
//! | `/topology/0` | the item schema of array `topology` (any index; with an Instance, that item's value) |
//! | `/topology/0/datacenterName` | a property of the items |
//! | `/topology/-` | refused: items are named by an index |
//!
//! A pointer the schema does not declare is refused (`unknown-parameter`) with a "did you mean",
//! as an unknown `-p` key is.

use serde::Serialize;
use serde_json::{Map, Value};

use crate::listing::{self, Row, TriggerSource};
use kudo_diag::diag::{Code, Diagnostic, Origin};
use kudo_diag::pointer::{self, Pointer};
use kudo_policy::params::ParamSchema;
use kudo_policy::values::{self, Redacted};

/// Keywords shown in a place of their own, never among [`Explanation::constraints`].
const KEYWORDS_WITH_OWN_PLACE: &[&str] = &[
    "type",
    "title",
    "description",
    "default",
    "properties",
    "items",
    "prefixItems",
    "required",
    "trigger",
    "immutable",
    "oldName",
    "writeOnly",
    "deprecated",
    "deprecationMessage",
    "$ref",
    "$defs",
    "definitions",
    "$schema",
    "$id",
    "apiVersion",
];

/// Keywords that hold values of the parameter itself: left out for a `writeOnly` parameter, as
/// its default is.
const VALUE_KEYWORDS: &[&str] = &["const", "examples", "example"];

/// One parameter (or the top level), explained.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Explanation {
    /// The value pointer explained (array items by the index asked for); empty: the top level.
    pub pointer: String,
    /// `string`, `integer`, `object`, `array of object`, `string | null`, ... (as `kudo package
    /// list parameters` names types).
    #[serde(rename = "type")]
    pub type_name: String,
    /// `title`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// `description`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The default. Always `None` for a `writeOnly` parameter (see `default_hidden`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default: Option<Value>,
    /// A `writeOnly` parameter that has a default, which is not shown.
    pub default_hidden: bool,
    /// Listed in its parent object's `required`.
    pub required: bool,
    /// The other keywords of its schema node, in their order: `enum`, `minimum`, `pattern`,
    /// `format`, `minItems`, `additionalProperties`, ... (`const` and `examples` left out for a
    /// `writeOnly` parameter).
    pub constraints: Map<String, Value>,
    /// The plan a change of it runs; `None` when there is none to run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trigger: Option<String>,
    /// Where the plan comes from.
    pub trigger_source: TriggerFrom,
    /// The ancestor whose `trigger` it is (with [`TriggerFrom::Inherited`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trigger_from: Option<Pointer>,
    /// Immutable, itself or through an ancestor.
    pub immutable: bool,
    /// The outermost immutable ancestor, when immutable through one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub immutable_from: Option<Pointer>,
    /// `writeOnly`, itself or through an ancestor.
    pub write_only: bool,
    /// The outermost `writeOnly` ancestor, when `writeOnly` through one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub write_only_from: Option<Pointer>,
    /// `oldName`: where an upgrade takes its value from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub old_name: Option<String>,
    /// `deprecated: true`: its `deprecationMessage` (empty when none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deprecated: Option<String>,
    /// An array's item schema.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub items: Option<Items>,
    /// Its fields: an object's properties, or an array item's, in schema order.
    pub fields: Vec<Field>,
    /// The value an Instance has (only when explained with one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub current: Option<Current>,
}

/// Where a parameter's plan comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum TriggerFrom {
    /// Its own `trigger`.
    Own,
    /// An ancestor's `trigger` ([`Explanation::trigger_from`]).
    Inherited,
    /// No `trigger` on the way: the operator's `update` plan, else `deploy`.
    Fallback,
    /// A `trigger` naming a plan the operator does not have, or no plan to fall back to.
    Unknown,
}

/// An array's items.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Items {
    /// The pointer of the first item (`/topology/0`): explain it for more.
    pub pointer: String,
    /// The items' type.
    #[serde(rename = "type")]
    pub type_name: String,
    /// The item schema's `title`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The item schema's `description`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// One field of the explained parameter, as kubectl's FIELDS list shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Field {
    /// Its name.
    pub name: String,
    /// Its value pointer.
    pub pointer: String,
    /// Its type.
    #[serde(rename = "type")]
    pub type_name: String,
    /// Listed in `required`.
    pub required: bool,
    /// Immutable (itself or through an ancestor).
    pub immutable: bool,
    /// `writeOnly` (itself or through an ancestor).
    pub write_only: bool,
    /// Its own `trigger` (inherited ones are the explained parameter's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trigger: Option<String>,
    /// The first line of its description.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// What an Instance stores, as [`explain`] reads it: the user's values and which pointers its
/// Secrets set, never a Secret's value.
#[derive(Clone, Copy)]
pub struct Instance<'a> {
    /// `spec.parameters`, typed by the schema.
    pub parameters: &'a Value,
    /// `spec.immutableDefaults`, typed by the schema.
    pub kept: Option<&'a Value>,
    /// The Secrets of `spec.parametersFrom`, in order.
    pub secrets: &'a [SecretSet],
}

/// `spec.parameters` may hold a `writeOnly` value (written before kudo kept them in Secrets):
/// `Debug` shows which pointers are set, never a value.
impl std::fmt::Debug for Instance<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Instance")
            .field("parameters", &pointer::leaves(self.parameters))
            .field("kept", &self.kept.map(pointer::leaves))
            .field("secrets", &self.secrets)
            .finish()
    }
}

/// What one entry of `spec.parametersFrom` sets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretSet {
    /// The Secret's name.
    pub secret: String,
    /// The value pointers it sets (an entry with `pointer`: that one; a document: its leaves),
    /// or why that is not known (the Secret could not be read).
    pub sets: Result<Vec<String>, String>,
}

/// An Instance's value of the explained parameter.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Current {
    /// Where the value comes from.
    pub source: ValueSource,
    /// The value (the effective one: user values over defaults), `writeOnly` values taken
    /// out. `None` when masked, unset, or held by a Secret (never read).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<Value>,
    /// A `writeOnly` value is there, and is not shown.
    pub masked: bool,
    /// The Secrets that set it ([`ValueSource::Secret`]) or may set it
    /// ([`ValueSource::Unknown`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub secrets: Vec<String>,
    /// Why it is unknown ([`ValueSource::Unknown`]): the Secret that could not be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unknown_because: Option<String>,
}

/// Where an Instance's value comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum ValueSource {
    /// The user set it (or a value under it) in `spec.parameters`.
    User,
    /// The user set it in a Secret of `spec.parametersFrom`.
    Secret,
    /// The installed default of an immutable parameter, kept (`spec.immutableDefaults`).
    KeptDefault,
    /// The package default.
    Default,
    /// No value.
    Unset,
    /// A Secret that could not be read may set it.
    Unknown,
}

/// Explains the parameter at `at` (`None`, `""` or `/`: the top level) of `schema`; `plans` are
/// the operator's plan names; `instance`, what an Instance stores, adds its current value.
/// Refused (`unknown-parameter`, `invalid-pointer`) when the schema does not declare `at`.
pub fn explain(
    schema: &ParamSchema,
    plans: &[&str],
    at: Option<&str>,
    instance: Option<&Instance<'_>>,
) -> Result<Explanation, Diagnostic> {
    let (ptr, tokens) = match at {
        None | Some("" | "/") => (String::new(), Vec::new()),
        Some(arg) => values::parameter_pointer(arg, &Origin::None, "")?,
    };
    declared(schema, &tokens)?;
    let node = schema.node_at(&tokens).unwrap_or(schema.root());
    let row = match listing::row_at(schema, plans, &ptr) {
        Some(row) => row,
        // The top level: the root node, as a row of its own.
        None => listing::row(schema, plans, node, "", "", false, &[true]),
    };
    let secret = row.secret;
    let (trigger_source, trigger_from) = match &row.trigger_source {
        TriggerSource::Own => (TriggerFrom::Own, None),
        TriggerSource::Inherited(p) => (TriggerFrom::Inherited, Some(p.clone())),
        TriggerSource::Fallback => (TriggerFrom::Fallback, None),
        TriggerSource::Unknown => (TriggerFrom::Unknown, None),
    };
    let constraints = node
        .as_object()
        .map(|n| {
            n.iter()
                .filter(|(k, _)| !KEYWORDS_WITH_OWN_PLACE.contains(&k.as_str()))
                .filter(|(k, _)| !(secret && VALUE_KEYWORDS.contains(&k.as_str())))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        })
        .unwrap_or_default();
    let (items, fields) = fields(schema, plans, node, &ptr);
    Ok(Explanation {
        type_name: row.type_name.clone(),
        title: row.title.clone(),
        description: row.description.clone(),
        default: node.get("default").filter(|_| !secret).cloned(),
        default_hidden: secret && node.get("default").is_some(),
        required: row.required,
        constraints,
        trigger: row.trigger.clone(),
        trigger_source,
        trigger_from,
        immutable: row.immutable || row.immutable_from.is_some(),
        immutable_from: row.immutable_from.clone(),
        write_only: secret,
        write_only_from: write_only_at(schema, &tokens).filter(|a| a.as_str() != ptr),
        old_name: node
            .get("oldName")
            .and_then(Value::as_str)
            .map(String::from),
        deprecated: row.deprecated.clone(),
        items,
        fields,
        current: instance.map(|i| current(schema, &row, &ptr, i)),
        pointer: ptr,
    })
}

/// Refuses a pointer the schema does not declare, as `--reset` does; an array's items are
/// named by an index.
fn declared(schema: &ParamSchema, tokens: &[String]) -> Result<(), Diagnostic> {
    for (i, token) in tokens.iter().enumerate() {
        let parent = schema.node_at(&tokens[..i]);
        if parent.is_some_and(|p| schema.is_array(p) && !schema.is_object(p))
            && token.parse::<usize>().is_err()
        {
            let mut item = tokens[..i].to_vec();
            item.push("0".into());
            return Err(Diagnostic::error(
                Code::UnknownParameter,
                pointer::from_tokens(&tokens[..=i]),
                "is not a parameter of this package",
            )
            .with_origin(Origin::None)
            .with_help(format!(
                "array items are named by an index: {}",
                pointer::from_tokens(&item)
            )));
        }
    }
    values::declared(schema, tokens, &Origin::None)
}

/// The outermost `writeOnly` node on the way to `tokens`, as a value pointer.
fn write_only_at(schema: &ParamSchema, tokens: &[String]) -> Option<Pointer> {
    schema
        .path(tokens)
        .iter()
        .position(|n| n.get("writeOnly") == Some(&Value::Bool(true)))
        .map(|i| Pointer::from(pointer::from_tokens(&tokens[..i])))
}

/// An array's items, and the fields: an object's properties, an array item's properties.
fn fields(
    schema: &ParamSchema,
    plans: &[&str],
    node: &Value,
    ptr: &str,
) -> (Option<Items>, Vec<Field>) {
    let mut items = None;
    let mut object = (node, ptr.to_string());
    if schema.is_array(node) && !schema.is_object(node) {
        let item_ptr = format!("{ptr}/0");
        let (Some(item), Some(row)) = (
            schema.child(node, "0").schema(),
            listing::row_at(schema, plans, &item_ptr),
        ) else {
            return (None, Vec::new());
        };
        items = Some(Items {
            pointer: item_ptr.clone(),
            type_name: row.type_name,
            title: row.title,
            description: row.description,
        });
        object = (schema.resolve(item), item_ptr);
    }
    let (object, at) = object;
    let fields = schema
        .property_names(object)
        .into_iter()
        .filter_map(|name| listing::row_at(schema, plans, &pointer::push(&at, name)))
        .map(|r| Field {
            trigger: (r.trigger_source == TriggerSource::Own)
                .then_some(r.trigger)
                .flatten(),
            description: r
                .description
                .as_deref()
                .and_then(|d| d.lines().next())
                .map(String::from),
            immutable: r.immutable || r.immutable_from.is_some(),
            write_only: r.secret,
            required: r.required,
            type_name: r.type_name,
            pointer: r.pointer,
            name: r.name,
        })
        .collect();
    (items, fields)
}

/// The Instance's value at `ptr`: the user's, a Secret's, a kept default, the default, none.
/// Effective values are `spec.parameters` over `spec.immutableDefaults` over the defaults; the
/// Secrets' values are not known here, only what they set.
fn current(schema: &ParamSchema, row: &Row, ptr: &str, inst: &Instance<'_>) -> Current {
    let mut out = Current {
        source: ValueSource::Unset,
        value: None,
        masked: false,
        secrets: Vec::new(),
        unknown_because: None,
    };
    let touches = |p: &str| pointer::is_within(p, ptr) || pointer::is_within(ptr, p);
    let setting: Vec<String> = inst
        .secrets
        .iter()
        .filter(|s| {
            s.sets
                .as_ref()
                .is_ok_and(|set| set.iter().any(|p| touches(p.as_str())))
        })
        .map(|s| s.secret.clone())
        .collect();
    let unread: Vec<(&str, &str)> = inst
        .secrets
        .iter()
        .filter_map(|s| {
            s.sets
                .as_ref()
                .err()
                .map(|e| (s.secret.as_str(), e.as_str()))
        })
        .collect();
    let base = match inst.kept {
        Some(kept) => kudo_policy::secrets::under(inst.parameters, kept),
        None => inst.parameters.clone(),
    };
    let inputs = values::Inputs {
        current: Some(base),
        ..Default::default()
    };
    let effective = values::effective(schema, &inputs).0;
    let redacted = Redacted::new(schema, effective.value());
    let has = |v: Option<&Value>| v.is_some_and(|v| v.pointer(ptr).is_some());
    out.source = if has(Some(inst.parameters)) {
        ValueSource::User
    } else if !setting.is_empty() {
        out.secrets = setting;
        ValueSource::Secret
    } else if !unread.is_empty() {
        out.secrets = unread.iter().map(|(s, _)| s.to_string()).collect();
        out.unknown_because = Some(
            unread
                .iter()
                .map(|(s, why)| format!("Secret {s}: {why}"))
                .collect::<Vec<_>>()
                .join("; "),
        );
        ValueSource::Unknown
    } else if has(inst.kept) {
        ValueSource::KeptDefault
    } else if has(Some(effective.value())) {
        ValueSource::Default
    } else {
        ValueSource::Unset
    };
    match out.source {
        ValueSource::Unset | ValueSource::Unknown => {}
        ValueSource::Secret => out.masked = row.secret,
        _ if row.secret => out.masked = true,
        _ => out.value = redacted.value().pointer(ptr).cloned(),
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const PLANS: &[&str] = &["deploy", "update", "backup-update", "network-update"];

    fn schema() -> ParamSchema {
        ParamSchema::from_value(json!({"type": "object", "required": ["cluster"],
        "description": "Top.",
        "properties": {
            "cluster": {"type": "object", "immutable": true, "required": ["name"],
                "description": "The cluster.\nMore text.",
                "properties": {
                    "name": {"type": "string", "default": "main", "minLength": 1,
                        "maxLength": 63, "pattern": "^[a-z]+$"},
                    "zone": {"type": "string", "oldName": "ZONE"}}},
            "backup": {"type": "object", "trigger": "backup-update", "properties": {
                "schedule": {"type": "string", "default": "0 2 * * *"},
                "credentials": {"type": "object", "writeOnly": true, "properties": {
                    "password": {"type": "string", "default": "not-a-real-password",
                        "examples": ["hunter2"], "minLength": 8}}}}},
            "ports": {"type": "array", "minItems": 1, "uniqueItems": true,
                "description": "Ports.",
                "items": {"type": "object", "required": ["port"], "description": "A port.",
                    "properties": {
                        "port": {"type": "integer", "minimum": 1, "maximum": 65535,
                            "trigger": "network-update"},
                        "name": {"type": "string"}}}},
            "tags": {"type": "array", "items": {"type": "string", "format": "hostname"}},
            "level": {"type": "string", "enum": ["INFO", "DEBUG"], "default": "INFO"}
        }}))
        .unwrap()
    }

    fn at(p: &str) -> Explanation {
        explain(&schema(), PLANS, Some(p), None).unwrap()
    }

    #[test]
    fn the_top_level_lists_the_parameters() {
        for root in [None, Some(""), Some("/")] {
            let e = explain(&schema(), PLANS, root, None).unwrap();
            assert_eq!(e.pointer, "");
            assert_eq!(e.type_name, "object");
            assert_eq!(e.description.as_deref(), Some("Top."));
            let names: Vec<&str> = e.fields.iter().map(|f| f.name.as_str()).collect();
            assert_eq!(
                names,
                ["cluster", "backup", "ports", "tags", "level"],
                "{root:?}"
            );
        }
        let e = at("");
        assert!(e.fields[0].required && e.fields[0].immutable);
        assert_eq!(e.fields[0].description.as_deref(), Some("The cluster."));
        assert_eq!(e.fields[1].trigger.as_deref(), Some("backup-update"));
        assert_eq!(e.fields[2].type_name, "array of object");
        assert_eq!(e.trigger_source, TriggerFrom::Fallback);
        assert_eq!(e.trigger.as_deref(), Some("update"));
    }

    #[test]
    fn a_nested_parameter_inherits_trigger_and_immutable_from_its_ancestors() {
        // (pointer, trigger, source, from)
        let cases: &[(&str, &str, TriggerFrom, Option<&str>)] = &[
            ("backup", "backup-update", TriggerFrom::Own, None),
            (
                "/backup/schedule",
                "backup-update",
                TriggerFrom::Inherited,
                Some("/backup"),
            ),
            (
                "backup/credentials/password",
                "backup-update",
                TriggerFrom::Inherited,
                Some("/backup"),
            ),
            ("/ports/3/port", "network-update", TriggerFrom::Own, None),
            ("/ports/0/name", "update", TriggerFrom::Fallback, None),
            ("/level", "update", TriggerFrom::Fallback, None),
        ];
        for (p, plan, source, from) in cases {
            let e = at(p);
            assert_eq!(e.trigger.as_deref(), Some(*plan), "{p}");
            assert_eq!(e.trigger_source, *source, "{p}");
            assert_eq!(e.trigger_from.as_deref(), *from, "{p}");
        }
        let e = explain(&schema(), &["deploy"], Some("/level"), None).unwrap();
        assert_eq!(
            e.trigger.as_deref(),
            Some("deploy"),
            "no update plan: deploy"
        );
        let e = explain(&schema(), &["deploy"], Some("/backup"), None).unwrap();
        assert_eq!(e.trigger_source, TriggerFrom::Unknown);

        let name = at("/cluster/name");
        assert!(name.immutable && name.required);
        assert_eq!(name.immutable_from.as_deref(), Some("/cluster"));
        let cluster = at("/cluster");
        assert!(cluster.immutable && cluster.immutable_from.is_none());
        assert_eq!(at("/cluster/zone").old_name.as_deref(), Some("ZONE"));
    }

    #[test]
    fn constraints_are_every_other_keyword_in_schema_order() {
        let e = at("/cluster/name");
        assert_eq!(e.type_name, "string");
        assert_eq!(e.default, Some(json!("main")));
        assert_eq!(
            Value::Object(e.constraints),
            json!({"minLength": 1, "maxLength": 63, "pattern": "^[a-z]+$"})
        );
        let e = at("/ports");
        assert_eq!(
            Value::Object(e.constraints),
            json!({"minItems": 1, "uniqueItems": true})
        );
        assert_eq!(
            Value::Object(at("level").constraints),
            json!({"enum": ["INFO", "DEBUG"]})
        );
    }

    #[test]
    fn a_write_only_default_is_never_in_the_explanation() {
        let e = at("/backup/credentials/password");
        assert!(e.write_only && e.default_hidden);
        assert_eq!(e.write_only_from.as_deref(), Some("/backup/credentials"));
        assert_eq!(e.default, None);
        assert!(!e.constraints.contains_key("examples"));
        assert!(e.constraints.contains_key("minLength"));
        let text = serde_json::to_string(&e).unwrap() + &format!("{e:?}");
        assert!(
            !text.contains("not-a-real-password") && !text.contains("hunter2"),
            "{text}"
        );
        let own = at("/backup/credentials");
        assert!(own.write_only && own.write_only_from.is_none());
        assert!(own.fields[0].write_only);
    }

    #[test]
    fn arrays_show_their_item_schema_and_its_fields() {
        let e = at("/ports");
        let items = e.items.unwrap();
        assert_eq!(items.pointer, "/ports/0");
        assert_eq!(items.type_name, "object");
        assert_eq!(items.description.as_deref(), Some("A port."));
        let fields: Vec<(&str, &str, bool)> = e
            .fields
            .iter()
            .map(|f| (f.pointer.as_str(), f.type_name.as_str(), f.required))
            .collect();
        assert_eq!(
            fields,
            [
                ("/ports/0/port", "integer", true),
                ("/ports/0/name", "string", false)
            ]
        );
        let tags = at("/tags");
        assert_eq!(tags.type_name, "array of string");
        assert_eq!(tags.items.unwrap().type_name, "string");
        assert!(tags.fields.is_empty());
        let item = at("/tags/0");
        assert_eq!(
            Value::Object(item.constraints),
            json!({"format": "hostname"})
        );
        let port = at("/ports/2/port");
        assert_eq!(
            Value::Object(port.constraints),
            json!({"minimum": 1, "maximum": 65535})
        );
        assert!(port.required);
    }

    #[test]
    fn an_unknown_pointer_is_refused_with_a_suggestion() {
        // (pointer, the pointer refused, the help)
        let cases: &[(&str, &str, Option<&str>)] = &[
            ("clustr", "/clustr", Some("did you mean /cluster?")),
            (
                "/cluster/nmae",
                "/cluster/nmae",
                Some("did you mean /cluster/name?"),
            ),
            (
                "/ports/-/port",
                "/ports/-",
                Some("array items are named by an index: /ports/0"),
            ),
            (
                "/ports/0/prot",
                "/ports/0/prot",
                Some("did you mean /ports/0/port?"),
            ),
            ("/level/x", "/level/x", None),
        ];
        for (p, refused, help) in cases {
            let d = explain(&schema(), PLANS, Some(p), None).unwrap_err();
            assert_eq!(d.code, Code::UnknownParameter, "{p}");
            assert_eq!(d.pointer, *refused, "{p}");
            assert_eq!(d.help.as_deref(), *help, "{p}");
        }
        let d = explain(&schema(), PLANS, Some("/a~2"), None).unwrap_err();
        assert_eq!(d.code, Code::InvalidPointer);
    }

    #[test]
    fn a_v1beta1_package_is_explained_through_its_conversion() {
        let doc = kudo_yaml::document::Document::parse(
            std::path::Path::new("params.yaml"),
            "apiVersion: kudo.dev/v1beta1\nparameters:\n  - name: NODE_COUNT\n    default: \"3\"\n    \
             type: integer\n    description: Nodes.\n    trigger: scale\n  - name: PASSWORD\n    \
             default: s3cr3t-default\n    immutable: true\n",
        )
        .unwrap();
        let kudo_policy::params::Params::V1beta1(p) =
            kudo_policy::params::Params::parse(&doc).unwrap()
        else {
            panic!("a v1beta1 params file");
        };
        let schema = kudo_policy::convert::to_schema(&p);
        let e = explain(&schema, &["deploy", "scale"], Some("NODE_COUNT"), None).unwrap();
        assert_eq!(e.type_name, "integer");
        assert_eq!(e.default, Some(json!(3)));
        assert_eq!(e.trigger.as_deref(), Some("scale"));
        assert_eq!(e.trigger_source, TriggerFrom::Own);
        let e = explain(&schema, &["deploy", "scale"], Some("PASSWORD"), None).unwrap();
        assert!(e.immutable);
        assert_eq!(e.trigger.as_deref(), Some("deploy"));
    }

    #[test]
    fn an_instance_value_says_where_it_comes_from_and_never_shows_a_secret() {
        let s = schema();
        let parameters = json!({"level": "DEBUG", "ports": [{"port": 80}]});
        let kept = json!({"cluster": {"name": "old"}});
        let secrets = [
            SecretSet {
                secret: "i-params-abc".into(),
                sets: Ok(vec!["/backup/credentials/password".into()]),
            },
            SecretSet {
                secret: "theirs".into(),
                sets: Ok(vec!["/backup/schedule".into()]),
            },
        ];
        let inst = Instance {
            parameters: &parameters,
            kept: Some(&kept),
            secrets: &secrets,
        };
        let now = |p: &str| {
            explain(&s, PLANS, Some(p), Some(&inst))
                .unwrap()
                .current
                .unwrap()
        };
        // (pointer, source, value, masked)
        let cases: &[(&str, ValueSource, Option<Value>, bool)] = &[
            ("/level", ValueSource::User, Some(json!("DEBUG")), false),
            ("/ports/0/port", ValueSource::User, Some(json!(80)), false),
            ("/ports/1/port", ValueSource::Unset, None, false),
            (
                "/cluster/name",
                ValueSource::KeptDefault,
                Some(json!("old")),
                false,
            ),
            ("/cluster/zone", ValueSource::Unset, None, false),
            (
                "/backup/credentials/password",
                ValueSource::Secret,
                None,
                true,
            ),
            ("/backup/schedule", ValueSource::Secret, None, false),
            ("/tags", ValueSource::Unset, None, false),
        ];
        for (p, source, value, masked) in cases {
            let c = now(p);
            assert_eq!(
                (c.source, &c.value, c.masked),
                (*source, value, *masked),
                "{p}"
            );
        }
        assert_eq!(
            now("/backup/credentials/password").secrets,
            ["i-params-abc"]
        );

        // A secret default, and a secret value stored in spec.parameters (before kudo moved
        // them to Secrets): masked either way.
        let parameters = json!({"backup": {"credentials": {"password": "in-the-instance"}}});
        let inst = Instance {
            parameters: &parameters,
            kept: None,
            secrets: &[],
        };
        let e = explain(&s, PLANS, Some("/backup/credentials/password"), Some(&inst)).unwrap();
        let c = e.current.clone().unwrap();
        assert_eq!(
            (c.source, c.masked, c.value),
            (ValueSource::User, true, None)
        );
        let whole = explain(&s, PLANS, Some("/backup"), Some(&inst)).unwrap();
        let text = format!("{e:?}{whole:?}{}", serde_json::to_string(&whole).unwrap());
        assert!(!text.contains("in-the-instance"), "{text}");
        assert!(!text.contains("not-a-real-password"), "{text}");
        assert_eq!(
            whole.current.unwrap().value,
            Some(json!({"schedule": "0 2 * * *"}))
        );
        let nothing = json!({});
        let inst = Instance {
            parameters: &nothing,
            kept: None,
            secrets: &[],
        };
        let c = explain(&s, PLANS, Some("/backup/credentials/password"), Some(&inst))
            .unwrap()
            .current
            .unwrap();
        assert_eq!(
            (c.source, c.masked, c.value),
            (ValueSource::Default, true, None)
        );
        assert!(format!("{inst:?}").contains("parameters"));
    }

    #[test]
    fn a_secret_that_cannot_be_read_makes_the_value_unknown() {
        let parameters = json!({"level": "DEBUG"});
        let secrets = [SecretSet {
            secret: "theirs".into(),
            sets: Err("forbidden".into()),
        }];
        let inst = Instance {
            parameters: &parameters,
            kept: None,
            secrets: &secrets,
        };
        let now = |p: &str| {
            explain(&schema(), PLANS, Some(p), Some(&inst))
                .unwrap()
                .current
                .unwrap()
        };
        assert_eq!(now("/level").source, ValueSource::User);
        let c = now("/backup/schedule");
        assert_eq!(c.source, ValueSource::Unknown);
        assert_eq!(c.secrets, ["theirs"]);
        assert_eq!(
            c.unknown_because.as_deref(),
            Some("Secret theirs: forbidden")
        );
    }
}
