//! The `kudo.dev/v1beta2` parameter schema: one JSON-schema document with KUDO's extensions.
//!
//! ```yaml
//! apiVersion: kudo.dev/v1beta2
//! $schema: https://json-schema.org/draft/2020-12/schema   # or draft-07, 2019-09; 2020-12 when absent
//! type: object
//! properties:
//!   backup:
//!     type: object
//!     trigger: backup-update          # the plan a change below here runs
//!     properties:
//!       password: {type: string, writeOnly: true}   # never printed
//!   clusterName: {type: string, immutable: true, oldName: CLUSTER_NAME}
//! ```
//!
//! [`ParamSchema`] also knows how to walk the schema along a value's pointer
//! ([`ParamSchema::child`]): through `properties`, array `items`, `additionalProperties`,
//! `patternProperties` and local `$ref`s. Every other module asks it instead of walking the
//! JSON itself.

use serde_json::{Map, Value};

use kudo_diag::error::{Error, Result};
use kudo_yaml::document::Document;

/// The JSON-schema drafts a v1beta2 params file may declare with `$schema`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Draft {
    /// Draft 7.
    Draft7,
    /// Draft 2019-09.
    Draft201909,
    /// Draft 2020-12 (the default).
    Draft202012,
}

impl Draft {
    /// The canonical `$schema` URI of the draft.
    pub fn uri(self) -> &'static str {
        match self {
            Draft::Draft7 => "http://json-schema.org/draft-07/schema#",
            Draft::Draft201909 => "https://json-schema.org/draft/2019-09/schema",
            Draft::Draft202012 => "https://json-schema.org/draft/2020-12/schema",
        }
    }

    /// Recognises a `$schema` URI (http or https, with or without the trailing `#`).
    pub fn from_uri(uri: &str) -> Option<Draft> {
        let u = uri.trim().trim_end_matches('#');
        let u = u
            .strip_prefix("https://")
            .or_else(|| u.strip_prefix("http://"))?;
        match u {
            "json-schema.org/draft-07/schema" => Some(Draft::Draft7),
            "json-schema.org/draft/2019-09/schema" => Some(Draft::Draft201909),
            "json-schema.org/draft/2020-12/schema" => Some(Draft::Draft202012),
            _ => None,
        }
    }
}

/// What a schema node says about one step (`token`) of a value's pointer.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Child<'a> {
    /// A declared property.
    Property(&'a Value),
    /// An array item (`items`, `prefixItems`).
    Item(&'a Value),
    /// Allowed by `additionalProperties`, `patternProperties` or because the object is free-form.
    Additional(&'a Value),
    /// Not allowed: the parameter does not exist.
    Unknown,
}

impl<'a> Child<'a> {
    /// The schema of the child, unless it is unknown.
    pub fn schema(self) -> Option<&'a Value> {
        match self {
            Child::Property(s) | Child::Item(s) | Child::Additional(s) => Some(s),
            Child::Unknown => None,
        }
    }
}

/// The schema that accepts anything.
static ANY: Value = Value::Bool(true);

/// Most `$ref` hops followed before giving up (a cycle).
const MAX_REF_HOPS: usize = 32;

/// A v1beta2 parameter schema.
#[derive(Debug, Clone, PartialEq)]
pub struct ParamSchema {
    schema: Value,
    draft: Draft,
}

impl ParamSchema {
    /// Reads the schema from a parsed params file. `apiVersion` is taken off; an unknown
    /// `$schema` is an error.
    pub fn from_document(doc: &Document) -> Result<ParamSchema> {
        ParamSchema::from_value(doc.value().clone()).map_err(|(pointer, message)| Error::Invalid {
            path: doc.path().to_path_buf(),
            location: doc.location(pointer).map(|l| (l.line, l.col)),
            message,
        })
    }

    /// Reads the schema from JSON (`apiVersion` optional). The error names the pointer at fault.
    pub fn from_value(value: Value) -> std::result::Result<ParamSchema, (&'static str, String)> {
        let Value::Object(mut map) = value else {
            return Err((
                "",
                "a v1beta2 params file must be a JSON-schema object".into(),
            ));
        };
        map.remove("apiVersion");
        let draft = match map.get("$schema") {
            None => Draft::Draft202012,
            Some(Value::String(uri)) => Draft::from_uri(uri).ok_or_else(|| {
                (
                    "/$schema",
                    format!(
                        "unsupported $schema {uri:?}: use draft-07, 2019-09 or 2020-12 ({})",
                        Draft::Draft202012.uri()
                    ),
                )
            })?,
            Some(_) => return Err(("/$schema", "$schema must be a URI string".into())),
        };
        Ok(ParamSchema {
            schema: Value::Object(map),
            draft,
        })
    }

    /// Builds a schema from parts (used by conversion).
    pub fn new(schema: Value, draft: Draft) -> ParamSchema {
        ParamSchema { schema, draft }
    }

    /// The JSON-schema document, without `apiVersion`.
    pub fn as_value(&self) -> &Value {
        &self.schema
    }

    /// The draft the schema is written in.
    pub fn draft(&self) -> Draft {
        self.draft
    }

    /// The params.yaml document: `apiVersion: kudo.dev/v1beta2` followed by the schema.
    pub fn to_params_file(&self) -> Value {
        let mut out = Map::new();
        out.insert("apiVersion".into(), Value::String(super::V1BETA2.into()));
        if let Value::Object(m) = &self.schema {
            for (k, v) in m {
                out.insert(k.clone(), v.clone());
            }
        }
        Value::Object(out)
    }

    /// The root node.
    pub fn root(&self) -> &Value {
        self.resolve(&self.schema)
    }

    /// Follows local `$ref`s (`#/$defs/x`, `#/definitions/x`) until a node without one.
    /// Remote or broken references resolve to the node itself.
    pub fn resolve<'a>(&'a self, mut node: &'a Value) -> &'a Value {
        for _ in 0..MAX_REF_HOPS {
            let Some(Value::String(r)) = node.get("$ref") else {
                return node;
            };
            let Some(ptr) = r.strip_prefix('#') else {
                return node;
            };
            match self.schema.pointer(ptr) {
                Some(target) => node = target,
                None => return node,
            }
        }
        node
    }

    /// The schema for one step from `node` into a value: `token` is an object key or an array
    /// index. An object with `properties` is closed unless `additionalProperties`,
    /// `patternProperties` or `x-kubernetes-preserve-unknown-fields` opens it; an object without
    /// `properties` is free-form.
    pub fn child<'a>(&'a self, node: &'a Value, token: &str) -> Child<'a> {
        let node = self.resolve(node);
        let Value::Object(n) = node else {
            // `true` and `{}` accept anything, `false` nothing
            return if node == &Value::Bool(false) {
                Child::Unknown
            } else {
                Child::Additional(&ANY)
            };
        };
        let types = self.types(node);
        if !types.is_empty() && !types.iter().any(|t| *t == "object" || *t == "array") {
            return Child::Unknown; // a scalar has nothing below it
        }
        if self.is_array(node) {
            if let Ok(i) = token.parse::<usize>() {
                let prefix = match (self.draft, n.get("prefixItems"), n.get("items")) {
                    (_, Some(Value::Array(p)), _) => Some(p),
                    (Draft::Draft7 | Draft::Draft201909, _, Some(Value::Array(p))) => Some(p),
                    _ => None,
                };
                if let Some(s) = prefix.and_then(|p| p.get(i)) {
                    return Child::Item(s);
                }
                let rest = match self.draft {
                    Draft::Draft202012 => n.get("items"),
                    _ if prefix.is_some() => n.get("additionalItems"),
                    _ => n.get("items"),
                };
                return match rest {
                    Some(Value::Bool(false)) => Child::Unknown,
                    Some(s) => Child::Item(s),
                    None => Child::Item(&ANY),
                };
            }
            if !self.is_object(node) {
                return Child::Unknown;
            }
        }
        if let Some(s) = n.get("properties").and_then(|p| p.get(token)) {
            return Child::Property(s);
        }
        for key in ["allOf", "anyOf", "oneOf"] {
            if let Some(Value::Array(branches)) = n.get(key) {
                for b in branches {
                    if let c @ (Child::Property(_) | Child::Item(_)) = self.child(b, token) {
                        return c;
                    }
                }
            }
        }
        if let Some(Value::Object(pp)) = n.get("patternProperties") {
            for (pattern, s) in pp {
                if regex::Regex::new(pattern).is_ok_and(|re| re.is_match(token)) {
                    return Child::Additional(s);
                }
            }
        }
        if n.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true)) {
            return Child::Additional(&ANY);
        }
        match n.get("additionalProperties") {
            Some(Value::Bool(false)) => Child::Unknown,
            Some(s) => Child::Additional(s),
            None if n.contains_key("properties") || self.has_branch_properties(n) => Child::Unknown,
            None => Child::Additional(&ANY),
        }
    }

    fn has_branch_properties(&self, n: &Map<String, Value>) -> bool {
        ["allOf", "anyOf", "oneOf"].iter().any(|k| {
            n.get(*k).and_then(Value::as_array).is_some_and(|bs| {
                bs.iter()
                    .any(|b| self.resolve(b).get("properties").is_some())
            })
        })
    }

    /// The schema node at a value pointer's tokens, when every step is known.
    pub fn node_at<S: AsRef<str>>(&self, tokens: &[S]) -> Option<&Value> {
        let mut node = self.root();
        for t in tokens {
            node = self.resolve(self.child(node, t.as_ref()).schema()?);
        }
        Some(node)
    }

    /// The schema nodes along a value pointer, root first, as far as they are known.
    pub fn path<S: AsRef<str>>(&self, tokens: &[S]) -> Vec<&Value> {
        let mut out = vec![self.root()];
        let mut node = self.root();
        for t in tokens {
            match self.child(node, t.as_ref()).schema() {
                Some(s) => {
                    node = self.resolve(s);
                    out.push(node);
                }
                None => break,
            }
        }
        out
    }

    /// The JSON types a node allows (`type` as a string or a list); empty when unconstrained.
    pub fn types<'a>(&self, node: &'a Value) -> Vec<&'a str> {
        match node.get("type") {
            Some(Value::String(t)) => vec![t.as_str()],
            Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        }
    }

    /// True when the node describes an array (by `type`, or by `items` without a `type`).
    pub fn is_array(&self, node: &Value) -> bool {
        let types = self.types(node);
        if types.is_empty() {
            node.get("items").is_some() || node.get("prefixItems").is_some()
        } else {
            types.contains(&"array")
        }
    }

    /// True when the node describes an object (by `type`, or by `properties` without a `type`).
    pub fn is_object(&self, node: &Value) -> bool {
        let types = self.types(node);
        if types.is_empty() {
            !self.is_array(node)
        } else {
            types.contains(&"object")
        }
    }

    /// True when the value at this pointer is sensitive: the node or an ancestor has
    /// `writeOnly: true`.
    pub fn is_secret<S: AsRef<str>>(&self, tokens: &[S]) -> bool {
        self.path(tokens)
            .iter()
            .any(|n| n.get("writeOnly") == Some(&Value::Bool(true)))
    }

    /// True when a value given at this pointer must not be shown: it is secret
    /// ([`ParamSchema::is_secret`]), or a `writeOnly` parameter lies under it. A value given
    /// where an object holding a secret belongs (`backup/credentials=hunter2`, meant for
    /// `backup/credentials/password`) may well be that secret.
    pub fn may_hold_secret<S: AsRef<str>>(&self, tokens: &[S]) -> bool {
        let path = self.path(tokens);
        if path
            .iter()
            .any(|n| n.get("writeOnly") == Some(&Value::Bool(true)))
        {
            return true;
        }
        // The pointer names no declared node (an unknown key): nothing under it is known.
        if path.len() != tokens.len() + 1 {
            return false;
        }
        path.last().is_some_and(|n| self.holds_write_only(n, 0))
    }

    /// Whether a `writeOnly` node lies under `node` (its properties, items, additional and
    /// pattern properties, composition branches, `$ref`s followed), to a bounded depth.
    fn holds_write_only(&self, node: &Value, depth: usize) -> bool {
        const MAX_DEPTH: usize = 64;
        if depth > MAX_DEPTH {
            return false;
        }
        let node = self.resolve(node);
        if node.get("writeOnly") == Some(&Value::Bool(true)) {
            return true;
        }
        let maps = ["properties", "patternProperties"]
            .iter()
            .filter_map(|k| node.get(*k).and_then(Value::as_object))
            .flat_map(|m| m.values());
        let singles = ["items", "additionalProperties", "not"]
            .iter()
            .filter_map(|k| node.get(*k))
            .filter(|v| v.is_object());
        let lists = ["allOf", "anyOf", "oneOf", "prefixItems"]
            .iter()
            .filter_map(|k| node.get(*k).and_then(Value::as_array))
            .flatten();
        maps.chain(singles)
            .chain(lists)
            .any(|child| self.holds_write_only(child, depth + 1))
    }

    /// The declared property names of an object node (including those of `allOf`/`anyOf`/`oneOf`
    /// branches), in order.
    pub fn property_names<'a>(&'a self, node: &'a Value) -> Vec<&'a str> {
        let node = self.resolve(node);
        let mut out: Vec<&str> = node
            .get("properties")
            .and_then(Value::as_object)
            .map(|p| p.keys().map(String::as_str).collect())
            .unwrap_or_default();
        for key in ["allOf", "anyOf", "oneOf"] {
            if let Some(Value::Array(bs)) = node.get(key) {
                for b in bs {
                    for name in self.property_names(b) {
                        if !out.contains(&name) {
                            out.push(name);
                        }
                    }
                }
            }
        }
        out
    }

    /// Every parameter pointer the schema declares (array items as `/0`), depth-first.
    pub fn parameter_pointers(&self) -> Vec<String> {
        let mut out = Vec::new();
        self.collect_pointers(self.root(), String::new(), 0, &mut out);
        out
    }

    fn collect_pointers(&self, node: &Value, at: String, depth: usize, out: &mut Vec<String>) {
        if depth > MAX_REF_HOPS {
            return;
        }
        let node = self.resolve(node);
        for name in self.property_names(node) {
            let p = kudo_diag::pointer::push(&at, name);
            out.push(p.clone());
            if let Some(s) = self.child(node, name).schema() {
                self.collect_pointers(s, p, depth + 1, out);
            }
        }
        if self.is_array(node)
            && let Child::Item(s) = self.child(node, "0")
        {
            let p = format!("{at}/0");
            self.collect_pointers(s, p, depth + 1, out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema(v: Value) -> ParamSchema {
        ParamSchema::from_value(v).unwrap()
    }

    #[test]
    fn drafts_are_recognised_and_2020_12_is_the_default() {
        assert_eq!(schema(json!({})).draft(), Draft::Draft202012);
        assert_eq!(
            schema(json!({"$schema": "http://json-schema.org/draft-07/schema#"})).draft(),
            Draft::Draft7
        );
        assert_eq!(
            schema(json!({"$schema": "https://json-schema.org/draft/2019-09/schema"})).draft(),
            Draft::Draft201909
        );
        assert!(ParamSchema::from_value(json!({"$schema": "https://example.com/s"})).is_err());
    }

    #[test]
    fn walking_properties_items_refs_and_free_form_objects() {
        let s = schema(json!({
            "type": "object",
            "$defs": {"label": {"type": "object", "properties": {"key": {"type": "string"}}}},
            "properties": {
                "topology": {"type": "array", "items": {"type": "object", "properties": {
                    "labels": {"type": "array", "items": {"$ref": "#/$defs/label"}}}}},
                "extra": {"type": "object"},
                "closed": {"type": "object", "properties": {"a": {}}, "additionalProperties": false},
                "map": {"type": "object", "additionalProperties": {"type": "integer"}}
            }
        }));
        assert_eq!(
            s.node_at(&["topology", "0", "labels", "3", "key"]),
            Some(&json!({"type": "string"}))
        );
        assert!(s.node_at(&["topology", "0", "labels", "x"]).is_none());
        assert!(s.node_at(&["extra", "anything", "goes"]).is_some());
        assert!(s.node_at(&["closed", "b"]).is_none());
        assert_eq!(s.node_at(&["map", "k"]), Some(&json!({"type": "integer"})));
        assert!(s.node_at(&["nope"]).is_none());
    }

    #[test]
    fn secrets_are_inherited() {
        let s = schema(
            json!({"properties": {"creds": {"type": "object", "writeOnly": true,
            "properties": {"user": {"type": "string"}}}, "name": {"type": "string"}}}),
        );
        assert!(s.is_secret(&["creds", "user"]));
        assert!(s.is_secret(&["creds"]));
        assert!(!s.is_secret(&["name"]));
    }

    #[test]
    fn a_value_given_where_secrets_lie_below_may_be_one() {
        let s = schema(
            json!({"$defs": {"pw": {"type": "string", "writeOnly": true}},
            "properties": {
                "backup": {"type": "object", "properties": {
                    "credentials": {"type": "object", "properties": {
                        "name": {"type": "string"}, "password": {"$ref": "#/$defs/pw"}}},
                    "schedule": {"type": "string"}}},
                "users": {"type": "array", "items": {"type": "object",
                    "properties": {"token": {"type": "string", "writeOnly": true}}}},
                "name": {"type": "string"}}}),
        );
        for (tokens, hidden) in [
            (&["backup", "credentials"][..], true),
            (&["backup"][..], true),
            (&["backup", "credentials", "password"][..], true),
            (&["backup", "credentials", "name"][..], false),
            (&["backup", "schedule"][..], false),
            (&["users"][..], true),
            (&["users", "0"][..], true),
            (&["name"][..], false),
            (&["nope"][..], false),
        ] {
            assert_eq!(s.may_hold_secret(tokens), hidden, "{tokens:?}");
        }
        assert!(
            s.may_hold_secret::<&str>(&[]),
            "the whole values hold secrets"
        );
        assert!(
            !s.is_secret(&["backup", "credentials"]),
            "is_secret is unchanged"
        );
    }

    #[test]
    fn parameter_pointers_list_the_tree() {
        let s = schema(
            json!({"properties": {"a": {"type": "object", "properties": {"b~/": {}}},
            "l": {"type": "array", "items": {"properties": {"x": {}}}}}}),
        );
        assert_eq!(
            s.parameter_pointers(),
            vec!["/a", "/a/b~0~1", "/l", "/l/0/x"]
        );
    }
}
