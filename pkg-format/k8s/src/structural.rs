//! Structural schemas in the Kubernetes sense, checked on a plain JSON value.
//!
//! kube-apiserver accepts a CRD's `openAPIV3Schema` only when it is *structural* (apiextensions
//! `ValidateStructural`, plus the CRD schema validation around it), because pruning unknown
//! fields needs to know the complete shape of the data. The rules, as kube-apiserver applies
//! them:
//!
//! - every node has a non-empty `type` (one of `array`, `boolean`, `integer`, `number`,
//!   `object`, `string`), except a node with `x-kubernetes-int-or-string: true` or
//!   `x-kubernetes-preserve-unknown-fields: true`; the root is an `object`;
//! - an `array` has `items`, and `items` is one schema, not a list of schemas;
//! - `properties` and `additionalProperties` are mutually exclusive (`additionalProperties: true`
//!   excepted), and the root has no `additionalProperties`;
//! - no `$ref`, `definitions`/`$defs`, `patternProperties`, `dependencies`, `additionalItems`,
//!   `id`, `type: null`, `uniqueItems: true`;
//! - inside the logical junctors (`allOf`, `anyOf`, `oneOf`, `not`: "value validation") there
//!   is no `type`, `default`, `title`, `description`, `nullable`, `additionalProperties`,
//!   `externalDocs` or `x-kubernetes-*` extension, and no `properties[metadata]`; every property
//!   and `items` they mention is also declared outside of them ("completeness"); the
//!   int-or-string pattern `anyOf: [{type: integer}, {type: string}]` is allowed;
//! - the `x-kubernetes-*` extensions are consistent: `x-kubernetes-preserve-unknown-fields` is
//!   true or absent and not combined with `x-kubernetes-int-or-string`; an
//!   `x-kubernetes-embedded-resource` is an `object` with properties or unknown fields kept;
//!   `x-kubernetes-list-type` (`atomic`, `set`, `map`) is on arrays, `map` with
//!   `x-kubernetes-list-map-keys` naming scalar item properties; `x-kubernetes-map-type`
//!   (`atomic`, `granular`) is on objects; each `x-kubernetes-validations` rule is non-empty;
//! - at the root of a resource, `metadata` may only restrict `name` and `generateName`, and
//!   `kind` and `apiVersion` are strings.
//!
//! [`violations`] applies these rules as kube-apiserver does ([`Options::CRD`]): that is what the
//! CRD generator checks its schemas with. [`violations_with`] and [`Options::PARAMETERS`] relax
//! the few rules that only serve pruning, for `params.yaml` schemas (see [`Options`]).
//!
//! Each [`Violation`] is data: the schema pointer of the offending keyword, kube-apiserver's
//! reason and its words. It displays as kube-apiserver would print it, with a JSON pointer for
//! the field path:
//!
//! ```
//! use kudo_k8s::structural;
//! use serde_json::json;
//!
//! let schema = json!({"type": "object", "properties": {"foo": {"properties": {}}}});
//! let v = structural::violations(&schema);
//! assert_eq!(v.len(), 1);
//! assert_eq!(v[0].pointer(), "/properties/foo/type");
//! assert_eq!(v[0].field_path(), "properties[foo].type");
//! assert_eq!(
//!     v[0].to_string(),
//!     "/properties/foo/type: Required value: must not be empty for specified object fields"
//! );
//! ```
//!
//! Not checked: CEL rule compilation and cost, `pattern` regex syntax (Go's RE2; the schema's own
//! validator compiles patterns), `format` names, and defaults against their schema (a separate
//! `package verify` check).

use std::fmt;

use serde_json::{Map, Value};

use kudo_diag::pointer;

/// Deepest schema nesting walked; deeper nodes are not checked (a guard against hostile input).
pub const MAX_DEPTH: usize = 256;

/// The `type` names OpenAPI v3 (and so kube-apiserver) knows.
pub const OPENAPI_TYPES: &[&str] = &["array", "boolean", "integer", "number", "object", "string"];

const PRESERVE: &str = "x-kubernetes-preserve-unknown-fields";
const INT_OR_STRING: &str = "x-kubernetes-int-or-string";
const EMBEDDED: &str = "x-kubernetes-embedded-resource";
const LIST_TYPE: &str = "x-kubernetes-list-type";
const LIST_MAP_KEYS: &str = "x-kubernetes-list-map-keys";
const MAP_TYPE: &str = "x-kubernetes-map-type";
const VALIDATIONS: &str = "x-kubernetes-validations";

/// The fields of kube-apiserver's `JSONSchemaProps`: anything else is refused in a CRD.
const OPENAPI_FIELDS: &[&str] = &[
    "id",
    "$schema",
    "$ref",
    "description",
    "type",
    "format",
    "title",
    "default",
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
    "multipleOf",
    "enum",
    "maxProperties",
    "minProperties",
    "required",
    "items",
    "allOf",
    "oneOf",
    "anyOf",
    "not",
    "properties",
    "additionalProperties",
    "patternProperties",
    "dependencies",
    "additionalItems",
    "definitions",
    "externalDocs",
    "example",
    "nullable",
    PRESERVE,
    EMBEDDED,
    INT_OR_STRING,
    LIST_MAP_KEYS,
    LIST_TYPE,
    MAP_TYPE,
    VALIDATIONS,
];

/// Keywords whose value is a map from names to schemas (for [`Violation::field_path`]).
const MAP_KEYWORDS: &[&str] = &[
    "properties",
    "patternProperties",
    "definitions",
    "$defs",
    "dependencies",
    "dependentSchemas",
];

/// Keywords whose value is a list (for [`Violation::field_path`]).
const LIST_KEYWORDS: &[&str] = &[
    "allOf",
    "anyOf",
    "oneOf",
    "items",
    "prefixItems",
    VALIDATIONS,
];

/// Which of kube-apiserver's error types a violation is.
#[derive(Debug, Clone, PartialEq)]
pub enum Reason {
    /// `Required value`: something that must be there is missing.
    Required,
    /// `Forbidden`: something that must not be there is.
    Forbidden,
    /// `Invalid value: V`: the value at the pointer is wrong.
    Invalid(Value),
    /// `Unsupported value: V: supported values: ...`.
    NotSupported {
        /// The value given.
        value: Value,
        /// The values allowed.
        supported: &'static [&'static str],
    },
}

/// One reason a schema is not structural.
#[derive(Debug, Clone, PartialEq)]
pub struct Violation {
    /// The schema path of the offending keyword, as pointer tokens (`["properties", "foo",
    /// "type"]`). A missing keyword is named where it should be.
    pub tokens: Vec<String>,
    /// kube-apiserver's error type.
    pub reason: Reason,
    /// The rule, in kube-apiserver's words ("must not be empty for specified object fields").
    pub detail: String,
}

impl Violation {
    /// The schema path as a JSON pointer: `/properties/foo/type`.
    pub fn pointer(&self) -> String {
        pointer::from_tokens(&self.tokens)
    }

    /// The schema path as kube-apiserver writes it: `properties[foo].items.type`, to be put
    /// after `spec.versions[0].schema.openAPIV3Schema.` in a CRD. Empty for the root.
    pub fn field_path(&self) -> String {
        let t = &self.tokens;
        let mut out = String::new();
        let mut i = 0;
        while i < t.len() {
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(&t[i]);
            let next = t.get(i + 1);
            if let Some(key) = next.filter(|_| MAP_KEYWORDS.contains(&t[i].as_str())) {
                out.push_str(&format!("[{key}]"));
                i += 2;
            } else if let Some(n) = next
                .filter(|n| LIST_KEYWORDS.contains(&t[i].as_str()) && n.parse::<usize>().is_ok())
            {
                out.push_str(&format!("[{n}]"));
                i += 2;
            } else {
                i += 1;
            }
        }
        out
    }
}

/// `/properties/foo/type: Required value: must not be empty for specified object fields`.
impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let p = self.pointer();
        let at = if p.is_empty() { "/" } else { &p };
        match &self.reason {
            Reason::Required => write!(f, "{at}: Required value: {}", self.detail),
            Reason::Forbidden => write!(f, "{at}: Forbidden: {}", self.detail),
            Reason::Invalid(v) => write!(f, "{at}: Invalid value: {v}: {}", self.detail),
            Reason::NotSupported { value, supported } => {
                let list: Vec<String> = supported.iter().map(|s| format!("{s:?}")).collect();
                write!(
                    f,
                    "{at}: Unsupported value: {value}: supported values: {}",
                    list.join(", ")
                )
            }
        }
    }
}

/// Which rules apply: kube-apiserver's for a CRD, or the parameter-schema relaxations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// The root is a Kubernetes object: it may not have `additionalProperties`, its `metadata`
    /// may only restrict `name` and `generateName`, `kind` and `apiVersion` are strings.
    pub resource_root: bool,
    /// Accept `additionalProperties: false` beside `properties` (and at the root).
    /// kube-apiserver refuses it because it prunes unknown fields instead; kudo's parameter
    /// engine closes an object that declares `properties` anyway, so in `params.yaml` it only
    /// restates the default.
    pub closed_objects: bool,
    /// Accept an `array` without `items`, as a free-form list (kudo's engine accepts any item
    /// there, as it accepts any key in an object without `properties`; converted v1beta1
    /// `array` parameters are such lists). kube-apiserver requires `items`.
    pub free_form_arrays: bool,
    /// Refuse keys that are not fields of OpenAPI v3's schema object (`const`, `if`,
    /// `prefixItems`, kudo's `trigger`...), as kube-apiserver does. Parameter schemas are
    /// JSON-schema 2020-12 with kudo's extensions and keep them.
    pub openapi_only: bool,
}

impl Options {
    /// kube-apiserver's rules for a CRD's `openAPIV3Schema`.
    pub const CRD: Options = Options {
        resource_root: true,
        closed_objects: false,
        free_form_arrays: false,
        openapi_only: true,
    };

    /// The rules for a `params.yaml` schema: its root is the parameters object (not a
    /// Kubernetes object), closed objects and free-form arrays are accepted, and JSON-schema
    /// keywords beyond OpenAPI v3 are allowed (`if`/`then`/`else` are held to the same
    /// value-validation rules as `allOf`).
    pub const PARAMETERS: Options = Options {
        resource_root: false,
        closed_objects: true,
        free_form_arrays: true,
        openapi_only: false,
    };
}

/// Every reason `schema` is not structural, by kube-apiserver's rules ([`Options::CRD`]), in
/// schema order.
pub fn violations(schema: &Value) -> Vec<Violation> {
    violations_with(schema, &Options::CRD)
}

/// Every reason `schema` is not structural under `opts`, in schema order.
pub fn violations_with(schema: &Value, opts: &Options) -> Vec<Violation> {
    let mut c = Checker {
        opts,
        out: Vec::new(),
    };
    let mut at = Vec::new();
    c.core(schema, Level::Root, &mut at, 0);
    c.out
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Level {
    Root,
    Item,
    Field,
}

struct Checker<'o> {
    opts: &'o Options,
    out: Vec<Violation>,
}

fn is_true(n: &Map<String, Value>, key: &str) -> bool {
    n.get(key) == Some(&Value::Bool(true))
}

fn non_empty_str(n: &Map<String, Value>, key: &str) -> bool {
    n.get(key)
        .and_then(Value::as_str)
        .is_some_and(|s| !s.is_empty())
}

fn type_of(n: &Map<String, Value>) -> Option<&str> {
    n.get("type").and_then(Value::as_str)
}

/// `anyOf: [{type: integer}, {type: string}]`, exactly (kube's int-or-string exception).
fn is_int_or_string_any_of(n: &Map<String, Value>) -> bool {
    match n.get("anyOf") {
        Some(Value::Array(bs)) if bs.len() == 2 => {
            bs[0] == serde_json::json!({"type": "integer"})
                && bs[1] == serde_json::json!({"type": "string"})
        }
        _ => false,
    }
}

fn is_int_or_string_all_of(n: &Map<String, Value>) -> bool {
    match n.get("allOf") {
        Some(Value::Array(bs)) => bs
            .first()
            .and_then(Value::as_object)
            .is_some_and(is_int_or_string_any_of),
        _ => false,
    }
}

impl Checker<'_> {
    fn push(&mut self, at: &[String], rest: &[&str], reason: Reason, detail: impl Into<String>) {
        let mut tokens = at.to_vec();
        tokens.extend(rest.iter().map(|s| s.to_string()));
        self.out.push(Violation {
            tokens,
            reason,
            detail: detail.into(),
        });
    }

    /// The logical junctors of a node, with their schema path tokens. `if`/`then`/`else` count
    /// for parameter schemas (in a CRD they are refused as unknown fields).
    fn junctors<'a>(&self, n: &'a Map<String, Value>) -> Vec<(Vec<String>, &'a Value)> {
        let mut out = Vec::new();
        for kw in ["allOf", "anyOf", "oneOf"] {
            if let Some(Value::Array(bs)) = n.get(kw) {
                for (i, b) in bs.iter().enumerate() {
                    out.push((vec![kw.to_string(), i.to_string()], b));
                }
            }
        }
        let mut single = vec!["not"];
        if !self.opts.openapi_only {
            single.extend(["if", "then", "else"]);
        }
        for kw in single {
            if let Some(b) = n.get(kw) {
                out.push((vec![kw.to_string()], b));
            }
        }
        out
    }

    /// The object of a schema node, its common rules checked: `None` (and a violation) when the
    /// node is not an object, `None` past [`MAX_DEPTH`].
    fn enter<'n>(
        &mut self,
        node: &'n Value,
        at: &[String],
        depth: usize,
    ) -> Option<&'n Map<String, Value>> {
        let Value::Object(n) = node else {
            self.push(
                at,
                &[],
                Reason::Invalid(node.clone()),
                "must be a schema object",
            );
            return None;
        };
        if depth > MAX_DEPTH {
            return None;
        }
        self.common(n, at);
        Some(n)
    }

    /// A `type` that `detail` requires is missing or another one.
    fn wrong_type(&mut self, at: &[String], ty: Option<&Value>, detail: &str) {
        match ty {
            None => self.push(at, &["type"], Reason::Required, detail),
            Some(t) => self.push(at, &["type"], Reason::Invalid(t.clone()), detail),
        }
    }

    /// A node of the structural core (reached through `properties`, `items`,
    /// `additionalProperties`, from the root).
    fn core(&mut self, node: &Value, level: Level, at: &mut Vec<String>, depth: usize) {
        let Some(n) = self.enter(node, at, depth) else {
            return;
        };
        self.core_children(n, level, at, depth);
        // value validation, skipping kube's two int-or-string patterns
        let skip_any_of = is_int_or_string_any_of(n);
        let skip_first_all_of_any_of = is_int_or_string_all_of(n);
        self.value_validation(n, at, skip_any_of, skip_first_all_of_any_of, depth);
        self.completeness(n, at, depth);
        self.core_extensions(n, at);
        self.core_type(n, level, at);
        self.resource_fields(n, level, at);
    }

    /// The core's children: `properties`, `items` and `additionalProperties`.
    fn core_children(
        &mut self,
        n: &Map<String, Value>,
        level: Level,
        at: &mut Vec<String>,
        depth: usize,
    ) {
        if type_of(n) == Some("array") && !n.contains_key("items") && !self.opts.free_form_arrays {
            self.push(at, &["items"], Reason::Required, "must be specified");
        }
        if let Some(props) = n.get("properties").and_then(Value::as_object) {
            for (k, v) in props {
                at.push("properties".into());
                at.push(k.clone());
                self.core(v, Level::Field, at, depth + 1);
                at.truncate(at.len() - 2);
            }
        }
        if let Some(items @ (Value::Object(_) | Value::Bool(_))) = n.get("items") {
            at.push("items".into());
            self.core(items, Level::Item, at, depth + 1);
            at.pop();
        }
        if let Some(ap) = n.get("additionalProperties") {
            self.additional_properties(n, ap, level, at, depth);
        }
    }

    /// `additionalProperties` (`ap`) of a core node: where it may stand, and its schema.
    fn additional_properties(
        &mut self,
        n: &Map<String, Value>,
        ap: &Value,
        level: Level,
        at: &mut Vec<String>,
        depth: usize,
    ) {
        let props = n.get("properties").and_then(Value::as_object);
        let has_props = props.is_some_and(|p| !p.is_empty());
        let closed = ap == &Value::Bool(false);
        let tolerated = closed && self.opts.closed_objects;
        if has_props && ap != &Value::Bool(true) && !tolerated {
            self.push(
                at,
                &["additionalProperties"],
                Reason::Forbidden,
                "additionalProperties and properties are mutual exclusive",
            );
        }
        if level == Level::Root && self.opts.resource_root && !tolerated {
            self.push(
                at,
                &["additionalProperties"],
                Reason::Forbidden,
                "must not be used at the root",
            );
        }
        if is_true(n, EMBEDDED) {
            self.push(
                at,
                &["additionalProperties"],
                Reason::Forbidden,
                "must not be used if x-kubernetes-embedded-resource is set",
            );
        }
        if ap.is_object() {
            at.push("additionalProperties".into());
            self.core(ap, Level::Field, at, depth + 1);
            at.pop();
        }
    }

    /// The extensions that exclude `x-kubernetes-int-or-string`.
    fn core_extensions(&mut self, n: &Map<String, Value>, at: &[String]) {
        if !is_true(n, INT_OR_STRING) {
            return;
        }
        for extension in [PRESERVE, EMBEDDED] {
            if is_true(n, extension) {
                self.push(
                    at,
                    &[extension],
                    Reason::Invalid(Value::Bool(true)),
                    "must be false if x-kubernetes-int-or-string is true",
                );
            }
        }
    }

    /// The `type` a core node must have.
    fn core_type(&mut self, n: &Map<String, Value>, level: Level, at: &[String]) {
        let ty = n.get("type");
        let int_or_string = is_true(n, INT_OR_STRING);
        if is_true(n, EMBEDDED) && type_of(n) != Some("object") {
            self.wrong_type(
                at,
                ty,
                "must be object if x-kubernetes-embedded-resource is true",
            );
        } else if ty.is_none() && !int_or_string && !is_true(n, PRESERVE) {
            let detail = match level {
                Level::Root => "must not be empty at the root",
                Level::Item => "must not be empty for specified array items",
                Level::Field => "must not be empty for specified object fields",
            };
            self.push(at, &["type"], Reason::Required, detail);
        }
        if level == Level::Root
            && let Some(t) = type_of(n)
            && t != "object"
        {
            self.push(
                at,
                &["type"],
                Reason::Invalid(Value::String(t.into())),
                "must be object at the root",
            );
        }
    }

    /// A resource's (the root's, or an embedded one's) `kind`, `apiVersion` and `metadata`.
    fn resource_fields(&mut self, n: &Map<String, Value>, level: Level, at: &[String]) {
        let embedded = is_true(n, EMBEDDED);
        let props = n.get("properties").and_then(Value::as_object);
        let resource = (level == Level::Root && self.opts.resource_root) || embedded;
        if let Some(props) = props {
            if resource {
                for key in ["kind", "apiVersion"] {
                    if let Some(Value::Object(p)) = props.get(key)
                        && type_of(p) != Some("string")
                    {
                        self.push(
                            at,
                            &["properties", key, "type"],
                            Reason::Invalid(p.get("type").cloned().unwrap_or(Value::Null)),
                            "must be string",
                        );
                    }
                }
            }
            if let Some(Value::Object(meta)) = props.get("metadata") {
                if resource && type_of(meta) != Some("object") {
                    self.push(
                        at,
                        &["properties", "metadata", "type"],
                        Reason::Invalid(meta.get("type").cloned().unwrap_or(Value::Null)),
                        "must be object",
                    );
                }
                if level == Level::Root && self.opts.resource_root && !metadata_only_names(meta) {
                    self.push(
                        at,
                        &["properties", "metadata"],
                        Reason::Forbidden,
                        "must not specify anything other than name and generateName, but metadata is implicitly specified",
                    );
                }
            }
        }
        if embedded && !is_true(n, PRESERVE) && props.is_none_or(Map::is_empty) {
            self.push(
                at,
                &["properties"],
                Reason::Required,
                "must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields",
            );
        }
    }

    /// Rules for every node, in the core or inside a junctor (kube's "spec standard validator"
    /// and extension checks).
    fn common(&mut self, n: &Map<String, Value>, at: &[String]) {
        for (key, what) in [
            ("$ref", "$ref is not supported"),
            ("id", "id is not supported"),
            ("additionalItems", "additionalItems is not supported"),
            ("patternProperties", "patternProperties is not supported"),
            ("definitions", "definitions is not supported"),
            ("$defs", "$defs is not supported"),
            ("dependencies", "dependencies is not supported"),
            (
                "prefixItems",
                "prefixItems is not supported: items must be a schema object and not an array",
            ),
        ] {
            if n.contains_key(key) {
                self.push(at, &[key], Reason::Forbidden, what);
            }
        }
        if let Some(Value::Array(_)) = n.get("items") {
            self.push(
                at,
                &["items"],
                Reason::Forbidden,
                "items must be a schema object and not an array",
            );
        }
        match n.get("type") {
            None => {}
            Some(Value::String(t)) if t == "null" => self.push(
                at,
                &["type"],
                Reason::Forbidden,
                "type cannot be set to null, use nullable as an alternative",
            ),
            Some(Value::String(t)) if !OPENAPI_TYPES.contains(&t.as_str()) => self.push(
                at,
                &["type"],
                Reason::NotSupported {
                    value: Value::String(t.clone()),
                    supported: OPENAPI_TYPES,
                },
                "",
            ),
            Some(Value::String(_)) => {}
            Some(other) => self.push(
                at,
                &["type"],
                Reason::Invalid(other.clone()),
                "must be a single type name (OpenAPI v3 has one type per schema; use nullable: true for null)",
            ),
        }
        if is_true(n, "uniqueItems") {
            self.push(
                at,
                &["uniqueItems"],
                Reason::Forbidden,
                "uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
            );
        }
        if n.get(PRESERVE) == Some(&Value::Bool(false)) {
            self.push(
                at,
                &[PRESERVE],
                Reason::Invalid(Value::Bool(false)),
                "must be true or undefined",
            );
        }
        self.map_and_list_types(n, at);
        if let Some(Value::Array(rules)) = n.get(VALIDATIONS) {
            for (i, r) in rules.iter().enumerate() {
                let rule = r.get("rule").and_then(Value::as_str).unwrap_or("");
                if rule.trim().is_empty() {
                    let i = i.to_string();
                    self.push(
                        at,
                        &[VALIDATIONS, &i, "rule"],
                        Reason::Required,
                        "rule is not specified",
                    );
                }
            }
        }
        if self.opts.openapi_only {
            for key in n.keys() {
                if !OPENAPI_FIELDS.contains(&key.as_str()) {
                    self.push(
                        at,
                        &[key],
                        Reason::Forbidden,
                        "is not a field of an OpenAPI v3 schema (kube-apiserver refuses unknown fields)",
                    );
                }
            }
        }
    }

    /// `x-kubernetes-map-type`, `x-kubernetes-list-type` and `x-kubernetes-list-map-keys`.
    fn map_and_list_types(&mut self, n: &Map<String, Value>, at: &[String]) {
        if let Some(mt) = n.get(MAP_TYPE) {
            self.map_type(n, mt, at);
        }
        let list_type = n.get(LIST_TYPE);
        if let Some(lt) = list_type {
            self.list_type(n, lt, at);
        }
        let keys: Vec<&Value> = n
            .get(LIST_MAP_KEYS)
            .and_then(Value::as_array)
            .map(|k| k.iter().collect())
            .unwrap_or_default();
        if !keys.is_empty() {
            let detail = "must be map if x-kubernetes-list-map-keys is non-empty";
            match list_type {
                None => self.push(at, &[LIST_TYPE], Reason::Required, detail),
                Some(lt) if lt.as_str() != Some("map") => {
                    self.push(at, &[LIST_TYPE], Reason::Invalid(lt.clone()), detail)
                }
                Some(_) => {}
            }
        }
        if list_type.and_then(Value::as_str) == Some("map") {
            self.list_map(n, &keys, at);
        }
    }

    /// `x-kubernetes-map-type` (`mt`): on an object, `atomic` or `granular`.
    fn map_type(&mut self, n: &Map<String, Value>, mt: &Value, at: &[String]) {
        if type_of(n) != Some("object") {
            self.wrong_type(
                at,
                n.get("type"),
                "must be object if x-kubernetes-map-type is specified",
            );
        }
        if !matches!(mt.as_str(), Some("atomic" | "granular")) {
            self.push(
                at,
                &[MAP_TYPE],
                Reason::NotSupported {
                    value: mt.clone(),
                    supported: &["atomic", "granular"],
                },
                "",
            );
        }
    }

    /// `x-kubernetes-list-type` (`lt`): on an array, `atomic`, `set` or `map`.
    fn list_type(&mut self, n: &Map<String, Value>, lt: &Value, at: &[String]) {
        if type_of(n) != Some("array") {
            self.wrong_type(
                at,
                n.get("type"),
                "must be array if x-kubernetes-list-type is specified",
            );
        }
        if !matches!(lt.as_str(), Some("atomic" | "set" | "map")) {
            self.push(
                at,
                &[LIST_TYPE],
                Reason::NotSupported {
                    value: lt.clone(),
                    supported: &["atomic", "map", "set"],
                },
                "",
            );
        }
    }

    /// A list of type `map`: its `keys`, scalar properties of its one object item schema.
    fn list_map(&mut self, n: &Map<String, Value>, keys: &[&Value], at: &[String]) {
        if keys.is_empty() {
            self.push(
                at,
                &[LIST_MAP_KEYS],
                Reason::Required,
                "must not be empty if x-kubernetes-list-type is map",
            );
        }
        let item = match n.get("items") {
            None => {
                self.push(
                    at,
                    &["items"],
                    Reason::Required,
                    "must have a schema if x-kubernetes-list-type is map",
                );
                return;
            }
            Some(Value::Object(item)) => item,
            Some(other) => {
                self.push(
                    at,
                    &["items"],
                    Reason::Invalid(other.clone()),
                    "must only have a single schema if x-kubernetes-list-type is map",
                );
                return;
            }
        };
        if type_of(item) != Some("object") {
            self.push(
                at,
                &["items", "type"],
                Reason::Invalid(item.get("type").cloned().unwrap_or(Value::Null)),
                "must be object if parent array's x-kubernetes-list-type is map",
            );
            return;
        }
        let keys_value = n.get(LIST_MAP_KEYS).cloned().unwrap_or(Value::Null);
        let mut seen = Vec::new();
        for k in keys {
            let name = k.as_str().unwrap_or("");
            match item.get("properties").and_then(|p| p.get(name)) {
                Some(Value::Object(p)) if matches!(type_of(p), Some("array" | "object")) => {
                    self.push(
                        at,
                        &["items", "properties", name, "type"],
                        Reason::Invalid(p.get("type").cloned().unwrap_or(Value::Null)),
                        "must be a scalar type if parent array's x-kubernetes-list-type is map",
                    );
                }
                Some(_) => {}
                None => self.push(
                    at,
                    &[LIST_MAP_KEYS],
                    Reason::Invalid(keys_value.clone()),
                    "entries must all be names of item properties",
                ),
            }
            if seen.contains(&name) {
                self.push(
                    at,
                    &[LIST_MAP_KEYS],
                    Reason::Invalid(keys_value.clone()),
                    "must not contain duplicate entries",
                );
            }
            seen.push(name);
        }
    }

    /// The junctors of `n` (at `at`), each checked as nested value validation.
    fn value_validation(
        &mut self,
        n: &Map<String, Value>,
        at: &mut Vec<String>,
        skip_any_of: bool,
        skip_first_all_of_any_of: bool,
        depth: usize,
    ) {
        for (path, branch) in self.junctors(n) {
            if skip_any_of && path[0] == "anyOf" {
                continue;
            }
            let skip = skip_first_all_of_any_of && path[0] == "allOf" && path[1] == "0";
            let len = at.len();
            at.extend(path);
            self.nested(branch, at, skip, depth + 1);
            at.truncate(len);
        }
    }

    /// A schema inside a junctor: it may only validate values, never declare structure.
    fn nested(&mut self, node: &Value, at: &mut Vec<String>, skip_any_of: bool, depth: usize) {
        let Some(n) = self.enter(node, at, depth) else {
            return;
        };
        self.value_validation(n, at, skip_any_of, false, depth);
        if let Some(items @ Value::Object(_)) = n.get("items") {
            at.push("items".into());
            self.nested(items, at, false, depth + 1);
            at.pop();
        }
        if let Some(Value::Object(props)) = n.get("properties") {
            for (k, v) in props {
                at.push("properties".into());
                at.push(k.clone());
                self.nested(v, at, false, depth + 1);
                at.truncate(at.len() - 2);
            }
            if props.contains_key("metadata") {
                self.push(
                    at,
                    &["properties", "metadata"],
                    Reason::Forbidden,
                    "must not be specified in a nested context",
                );
            }
        }
        for (key, present, detail) in [
            (
                "type",
                n.contains_key("type"),
                "must be empty to be structural",
            ),
            (
                "additionalProperties",
                n.contains_key("additionalProperties"),
                "must be undefined to be structural",
            ),
            (
                "default",
                n.contains_key("default"),
                "must be undefined to be structural",
            ),
            (
                "title",
                non_empty_str(n, "title"),
                "must be empty to be structural",
            ),
            (
                "description",
                non_empty_str(n, "description"),
                "must be empty to be structural",
            ),
            (
                "nullable",
                is_true(n, "nullable"),
                "must be false to be structural",
            ),
            (
                "externalDocs",
                n.contains_key("externalDocs"),
                "must be undefined to be structural",
            ),
            (
                PRESERVE,
                is_true(n, PRESERVE),
                "must be false to be structural",
            ),
            (
                EMBEDDED,
                is_true(n, EMBEDDED),
                "must be false to be structural",
            ),
            (
                INT_OR_STRING,
                is_true(n, INT_OR_STRING),
                "must be false to be structural",
            ),
            (
                LIST_MAP_KEYS,
                n.get(LIST_MAP_KEYS)
                    .and_then(Value::as_array)
                    .is_some_and(|k| !k.is_empty()),
                "must be empty to be structural",
            ),
            (
                LIST_TYPE,
                n.contains_key(LIST_TYPE),
                "must be undefined to be structural",
            ),
            (
                MAP_TYPE,
                n.contains_key(MAP_TYPE),
                "must be undefined to be structural",
            ),
            (
                VALIDATIONS,
                n.get(VALIDATIONS)
                    .and_then(Value::as_array)
                    .is_some_and(|v| !v.is_empty()),
                "must be empty to be structural",
            ),
        ] {
            if present {
                self.push(at, &[key], Reason::Forbidden, detail);
            }
        }
    }

    /// Every property and `items` mentioned inside the junctors of the core node `s` is declared
    /// in the core too.
    fn completeness(&mut self, s: &Map<String, Value>, at: &[String], depth: usize) {
        for (path, branch) in self.junctors(s) {
            let mut v_at = at.to_vec();
            v_at.extend(path);
            self.complete(branch, s, at, &v_at, depth + 1);
        }
    }

    fn complete(
        &mut self,
        v: &Value,
        s: &Map<String, Value>,
        s_at: &[String],
        v_at: &[String],
        depth: usize,
    ) {
        let Value::Object(vn) = v else { return };
        if depth > MAX_DEPTH {
            return;
        }
        for (path, branch) in self.junctors(vn) {
            let mut sub = v_at.to_vec();
            sub.extend(path);
            self.complete(branch, s, s_at, &sub, depth + 1);
        }
        if let Some(vi @ Value::Object(_)) = vn.get("items") {
            let mut v_items = v_at.to_vec();
            v_items.push("items".into());
            match s.get("items") {
                Some(Value::Object(si)) => {
                    let mut s_items = s_at.to_vec();
                    s_items.push("items".into());
                    self.complete(vi, si, &s_items, &v_items, depth + 1);
                }
                Some(_) => {}
                None => self.push(
                    s_at,
                    &["items"],
                    Reason::Required,
                    format!(
                        "because it is defined in {}",
                        pointer::from_tokens(&v_items)
                    ),
                ),
            }
        }
        if let Some(Value::Object(vp)) = vn.get("properties") {
            let sp = s.get("properties").and_then(Value::as_object);
            for (k, vf) in vp {
                let mut v_prop = v_at.to_vec();
                v_prop.extend(["properties".to_string(), k.clone()]);
                match sp.and_then(|p| p.get(k)) {
                    Some(Value::Object(sf)) => {
                        let mut s_prop = s_at.to_vec();
                        s_prop.extend(["properties".to_string(), k.clone()]);
                        self.complete(vf, sf, &s_prop, &v_prop, depth + 1);
                    }
                    Some(_) => {}
                    None => self.push(
                        s_at,
                        &["properties", k],
                        Reason::Required,
                        format!("because it is defined in {}", pointer::from_tokens(&v_prop)),
                    ),
                }
            }
        }
    }
}

/// kube's rule for the root `metadata`: nothing but `type`, `default` and properties that are
/// exactly `name` and/or `generateName`.
fn metadata_only_names(meta: &Map<String, Value>) -> bool {
    meta.iter().all(|(k, v)| match k.as_str() {
        "type" | "default" => true,
        "properties" => v
            .as_object()
            .is_some_and(|p| !p.is_empty() && p.keys().all(|k| k == "name" || k == "generateName")),
        _ => false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The violations of `schema` as their one-line text.
    fn lines(schema: Value, opts: &Options) -> Vec<String> {
        violations_with(&schema, opts)
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn structural_schemas_have_no_violations() {
        let cases = [
            json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
                "command": {"type": "string", "minLength": 1},
                "machines": {"type": "array", "items": {"type": "string", "pattern": "^[a-z]+$"}}},
                "oneOf": [{"required": ["command"]}, {"required": ["shell"]}]}}}),
            json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true}),
            json!({"type": "object", "properties": {"port": {"x-kubernetes-int-or-string": true,
                "anyOf": [{"type": "integer"}, {"type": "string"}]}}}),
            json!({"type": "object", "properties": {"port": {"x-kubernetes-int-or-string": true,
                "allOf": [{"anyOf": [{"type": "integer"}, {"type": "string"}]}, {"pattern": "x"}]}}}),
            json!({"type": "object", "properties": {"labels": {"type": "object",
                "additionalProperties": {"type": "string"}}, "open": {"type": "object",
                "properties": {"a": {"type": "string"}}, "additionalProperties": true}}}),
            json!({"type": "object", "properties": {"metadata": {"type": "object",
                "properties": {"name": {"type": "string", "maxLength": 10}}}}}),
            json!({"type": "object", "properties": {"ports": {"type": "array",
                "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["port"],
                "items": {"type": "object", "properties": {"port": {"type": "integer"}}}}}}),
        ];
        for schema in cases {
            assert_eq!(
                lines(schema.clone(), &Options::CRD),
                Vec::<String>::new(),
                "{schema}"
            );
        }
    }

    #[test]
    fn each_rule_is_reported_as_kube_apiserver_words_it() {
        let cases: &[(Value, &[&str])] = &[
            (
                json!({"properties": {"a": {"type": "string"}}}),
                &["/type: Required value: must not be empty at the root"],
            ),
            (
                json!({"type": "array", "items": {"type": "string"}}),
                &["/type: Invalid value: \"array\": must be object at the root"],
            ),
            (
                json!({"type": "object", "properties": {"l": {"type": "array", "items": {}}}}),
                &[
                    "/properties/l/items/type: Required value: must not be empty for specified array items",
                ],
            ),
            (
                json!({"type": "object", "properties": {"l": {"type": "array"}}}),
                &["/properties/l/items: Required value: must be specified"],
            ),
            (
                json!({"type": "object", "properties": {"l": {"type": "array",
                    "items": [{"type": "string"}]}}}),
                &["/properties/l/items: Forbidden: items must be a schema object and not an array"],
            ),
            (
                json!({"type": "object", "properties": {"o": {"type": "object",
                    "properties": {"a": {"type": "string"}}, "additionalProperties": false}}}),
                &[
                    "/properties/o/additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive",
                ],
            ),
            (
                json!({"type": "object", "additionalProperties": {"type": "string"}}),
                &["/additionalProperties: Forbidden: must not be used at the root"],
            ),
            (
                json!({"type": "object", "properties": {"r": {"$ref": "#/definitions/x"}},
                    "definitions": {"x": {"type": "string"}}}),
                &[
                    "/definitions: Forbidden: definitions is not supported",
                    "/properties/r/$ref: Forbidden: $ref is not supported",
                    "/properties/r/type: Required value: must not be empty for specified object fields",
                ],
            ),
            (
                json!({"type": "object", "properties": {"a": {"type": "string"}},
                    "anyOf": [{"type": "object", "description": "d",
                        "properties": {"a": {"default": "x"}, "b": {"minLength": 1}}}]}),
                &[
                    "/anyOf/0/properties/a/default: Forbidden: must be undefined to be structural",
                    "/anyOf/0/type: Forbidden: must be empty to be structural",
                    "/anyOf/0/description: Forbidden: must be empty to be structural",
                    "/properties/b: Required value: because it is defined in /anyOf/0/properties/b",
                ],
            ),
            (
                json!({"type": "object", "properties": {"a": {"type": "null"}, "b": {"type": "int"},
                    "c": {"type": ["string", "null"]}}}),
                &[
                    "/properties/a/type: Forbidden: type cannot be set to null, use nullable as an alternative",
                    "/properties/b/type: Unsupported value: \"int\": supported values: \"array\", \"boolean\", \"integer\", \"number\", \"object\", \"string\"",
                    "/properties/c/type: Invalid value: [\"string\",\"null\"]: must be a single type name (OpenAPI v3 has one type per schema; use nullable: true for null)",
                ],
            ),
            (
                json!({"type": "object", "properties": {"p": {"type": "string",
                    "x-kubernetes-preserve-unknown-fields": false}, "q": {
                    "x-kubernetes-int-or-string": true, "x-kubernetes-preserve-unknown-fields": true}}}),
                &[
                    "/properties/p/x-kubernetes-preserve-unknown-fields: Invalid value: false: must be true or undefined",
                    "/properties/q/x-kubernetes-preserve-unknown-fields: Invalid value: true: must be false if x-kubernetes-int-or-string is true",
                ],
            ),
            (
                json!({"type": "object", "properties": {"e": {"x-kubernetes-embedded-resource": true}}}),
                &[
                    "/properties/e/type: Required value: must be object if x-kubernetes-embedded-resource is true",
                    "/properties/e/properties: Required value: must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields",
                ],
            ),
            (
                json!({"type": "object", "properties": {"l": {"type": "array",
                    "x-kubernetes-list-type": "map", "items": {"type": "object",
                    "properties": {"k": {"type": "object"}}}, "x-kubernetes-list-map-keys": ["k", "z"]},
                    "m": {"type": "string", "x-kubernetes-map-type": "weird"}}}),
                &[
                    "/properties/l/items/properties/k/type: Invalid value: \"object\": must be a scalar type if parent array's x-kubernetes-list-type is map",
                    "/properties/l/x-kubernetes-list-map-keys: Invalid value: [\"k\",\"z\"]: entries must all be names of item properties",
                    "/properties/m/type: Invalid value: \"string\": must be object if x-kubernetes-map-type is specified",
                    "/properties/m/x-kubernetes-map-type: Unsupported value: \"weird\": supported values: \"atomic\", \"granular\"",
                ],
            ),
            (
                json!({"type": "object", "properties": {"metadata": {"type": "object",
                    "properties": {"labels": {"type": "object"}}}, "kind": {"type": "integer"}}}),
                &[
                    "/properties/kind/type: Invalid value: \"integer\": must be string",
                    "/properties/metadata: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified",
                ],
            ),
            (
                json!({"type": "object", "properties": {"s": {"type": "array", "uniqueItems": true,
                    "items": {"type": "string"}}}}),
                &[
                    "/properties/s/uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
                ],
            ),
            (
                json!({"type": "object", "properties": {"a": {"type": "string", "trigger": "x"}}}),
                &[
                    "/properties/a/trigger: Forbidden: is not a field of an OpenAPI v3 schema (kube-apiserver refuses unknown fields)",
                ],
            ),
        ];
        for (schema, want) in cases {
            let mut got = lines(schema.clone(), &Options::CRD);
            let mut want: Vec<String> = want.iter().map(|s| s.to_string()).collect();
            got.sort();
            want.sort();
            assert_eq!(got, want, "schema: {schema}");
        }
    }

    #[test]
    fn parameter_schemas_keep_closed_objects_free_form_arrays_and_json_schema_keywords() {
        let schema = json!({"type": "object", "additionalProperties": false, "properties": {
            "list": {"type": "array", "default": []},
            "closed": {"type": "object", "additionalProperties": false,
                "properties": {"a": {"type": "string", "const": "x", "trigger": "deploy"}}},
            "metadata": {"type": "object", "properties": {"labels": {"type": "object"}}}}});
        assert_eq!(
            lines(schema.clone(), &Options::PARAMETERS),
            Vec::<String>::new()
        );
        // the same schema is not structural for a CRD
        assert_eq!(
            lines(schema, &Options::CRD),
            vec![
                "/properties/list/items: Required value: must be specified",
                "/properties/closed/properties/a/const: Forbidden: is not a field of an OpenAPI v3 schema (kube-apiserver refuses unknown fields)",
                "/properties/closed/properties/a/trigger: Forbidden: is not a field of an OpenAPI v3 schema (kube-apiserver refuses unknown fields)",
                "/properties/closed/additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive",
                "/additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive",
                "/additionalProperties: Forbidden: must not be used at the root",
                "/properties/metadata: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified",
            ]
        );
        // `then` is value validation in a parameter schema
        let schema = json!({"type": "object", "properties": {"a": {"type": "string"}},
            "if": {"properties": {"a": {"const": "x"}}}, "then": {"properties": {"b": {"type": "string"}}}});
        assert_eq!(
            lines(schema, &Options::PARAMETERS),
            vec![
                "/then/properties/b/type: Forbidden: must be empty to be structural",
                "/properties/b: Required value: because it is defined in /then/properties/b",
            ]
        );
    }

    #[test]
    fn field_paths_are_written_as_kube_apiserver_does() {
        let v = |t: &[&str]| Violation {
            tokens: t.iter().map(|s| s.to_string()).collect(),
            reason: Reason::Required,
            detail: String::new(),
        };
        assert_eq!(v(&[]).field_path(), "");
        assert_eq!(
            v(&[
                "properties",
                "a.b",
                "items",
                "anyOf",
                "0",
                "properties",
                "items",
                "type"
            ])
            .field_path(),
            "properties[a.b].items.anyOf[0].properties[items].type"
        );
        assert_eq!(
            v(&["properties", "x/y"]).pointer(),
            "/properties/x~1y",
            "pointers escape"
        );
    }

    #[test]
    fn hostile_depth_is_cut_off_without_overflowing_the_stack() {
        let mut schema = json!({"type": "string"});
        for _ in 0..(MAX_DEPTH * 4) {
            schema = json!({"type": "object", "properties": {"a": schema}});
        }
        assert_eq!(violations(&schema), Vec::new());
    }
}
