//! `oldName`: carrying an instance's values across an upgrade that renames or restructures
//! parameters.
//!
//! The new values are built from the new schema (KEP-33; docs/architecture.md):
//! 1. every node with an `oldName` takes the installed value found there (a bare name is a
//!    top-level key, `CLUSTER_NAME`; a string starting with `/` is a JSON pointer); a parent
//!    moves whole and its children's own `oldName`s then override parts of it;
//! 2. every other installed value whose path the new schema still has stays where it is;
//! 3. defaults fill the rest;
//! 4. an installed value that lands nowhere is reported, by path: never silently dropped.
//!
//! A string value that lands on a non-string parameter is typed as `-p` types it (v1beta1
//! values are strings). An `oldName` that the installed version's schema does not have (and
//! whose own path it does not have either) refuses the upgrade: the operator's versions in
//! between are "non-skippable". `oldName` is followed outside arrays only (an array moves
//! whole); `package verify` refuses one inside array items.

use serde_json::{Map, Value};

use crate::params::ParamSchema;
use crate::values::Values;
use kudo_diag::diag::{Code, Diagnostic, Origin};
use kudo_diag::pointer;

use crate::values::MAX_DEPTH;

/// A value moved by an `oldName`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Moved {
    /// Where it was (value pointer in the installed parameters).
    pub from: String,
    /// Where it is now.
    pub to: String,
}

/// An installed value the new version has no place for.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Dropped {
    /// Where it was.
    pub pointer: String,
    /// Why it lands nowhere.
    pub reason: String,
}

/// What the migration did with every value.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Report {
    /// Values moved by `oldName`.
    pub moved: Vec<Moved>,
    /// Values kept at the same path.
    pub kept: Vec<String>,
    /// Parameters filled from the new version's defaults.
    pub defaulted: Vec<String>,
    /// Installed values that land nowhere.
    pub dropped: Vec<Dropped>,
}

impl Report {
    /// The dropped values as warnings, for a command to print.
    pub fn warnings(&self) -> Vec<Diagnostic> {
        self.dropped
            .iter()
            .map(|d| {
                Diagnostic::warning(
                    Code::ValueDropped,
                    &d.pointer,
                    format!("the installed value is not carried over: {}", d.reason),
                )
                .with_origin(Origin::Instance)
            })
            .collect()
    }
}

/// The new values and the report.
#[derive(Clone)]
pub struct Migration {
    /// The values for the new version (defaults applied), each remembering its origin.
    pub values: Values,
    /// The same without the defaults: what an Instance stores.
    pub explicit: Value,
    /// What happened to every installed value.
    pub report: Report,
}

/// Values may hold secrets: `Debug` shows which pointers are set, and the report.
impl std::fmt::Debug for Migration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Migration")
            .field("values", &self.values)
            .field("explicit", &kudo_diag::pointer::leaves(&self.explicit))
            .field("report", &self.report)
            .finish()
    }
}

/// Migrates `old_values` (installed, typed: convert v1beta1 strings first) from `old_schema` to
/// `new_schema`. `installed_version` names the installed operator version in messages.
pub fn migrate(
    old_schema: &ParamSchema,
    old_values: &Value,
    new_schema: &ParamSchema,
    installed_version: &str,
) -> Result<Migration, Vec<Diagnostic>> {
    let mut m = Migrator {
        old_schema,
        old_values,
        new_schema,
        installed_version,
        new: Value::Object(Map::new()),
        consumed: Vec::new(),
        report: Report::default(),
        errors: Vec::new(),
    };
    let mut tokens = Vec::new();
    m.follow_old_names(new_schema.root(), &mut tokens, 0);
    if !m.errors.is_empty() {
        return Err(m.errors);
    }
    let mut at = Vec::new();
    m.keep(old_values, &mut at, 0);
    let explicit = m.new.clone();
    let mut values = Values::new(m.new, Origin::Instance);
    m.report.defaulted = values.apply_defaults(new_schema);
    Ok(Migration {
        values,
        explicit,
        report: m.report,
    })
}

/// `newer_values` (values of the version whose schema is `newer`) in the layout of the older
/// version `older`, each `oldName` of `newer` read backwards: a value at a path with an
/// `oldName` goes back to that name (parents before children, as [`migrate`] moves them); every
/// other value stays at its path. What a rollback to `older` compares the installed values with
/// (an immutable value may not change across a rollback either). An `oldName` that `older` does
/// not declare moves nothing.
pub fn reverse(newer: &ParamSchema, newer_values: &Value, older: &ParamSchema) -> Value {
    let mut moves = old_names(newer);
    moves.retain(|(_, old)| pointer::tokens(old).is_ok_and(|t| declared(older, &t)));
    let mut out = newer_values.clone();
    for (new, _) in &moves {
        if let Ok(tokens) = pointer::tokens(new)
            && !tokens.is_empty()
        {
            let (last, parent) = tokens.split_last().expect("not empty");
            if let Some(Value::Object(m)) = out.pointer_mut(&pointer::from_tokens(parent)) {
                m.remove(last);
            }
        }
    }
    for (new, old) in &moves {
        if let (Some(v), Ok(tokens)) = (newer_values.pointer(new), pointer::tokens(old)) {
            pointer::set_creating(&mut out, &tokens, v.clone());
        }
    }
    out
}

/// Every `oldName` of `schema`, as `(pointer, old pointer)`, parents before children (outside
/// arrays: an array moves whole).
fn old_names(schema: &ParamSchema) -> Vec<(String, String)> {
    fn pairs(
        schema: &ParamSchema,
        node: &Value,
        tokens: &mut Vec<String>,
        depth: usize,
        out: &mut Vec<(String, String)>,
    ) {
        if depth > MAX_DEPTH {
            return;
        }
        let node = schema.resolve(node);
        let old = match node.get("oldName").and_then(Value::as_str) {
            Some(s) if s.starts_with('/') => Some(s.to_string()),
            Some(s) if !s.is_empty() => Some(pointer::push("", s)),
            _ => None,
        };
        if let Some(old) = old {
            out.push((pointer::from_tokens(tokens), old));
        }
        if schema.is_array(node) && !schema.is_object(node) {
            return;
        }
        for name in schema.property_names(node) {
            if let Some(child) = schema.child(node, name).schema() {
                tokens.push(name.to_string());
                pairs(schema, child, tokens, depth + 1, out);
                tokens.pop();
            }
        }
    }
    let mut out = Vec::new();
    pairs(schema, schema.root(), &mut Vec::new(), 0, &mut out);
    out
}

/// True when `key` (a top-level name of values written for `schema`) is no parameter of
/// `schema` but the `oldName` of one: [`renamed`] moves it.
pub fn is_old_name(schema: &ParamSchema, key: &str) -> bool {
    let at = pointer::push("", key);
    !declared(schema, &[key.to_string()])
        && old_names(schema)
            .iter()
            .any(|(_, old)| pointer::is_within(old, &at))
}

/// `given` (values written for `schema`: an Instance's `spec.parameters`) with each value
/// written at the `oldName` of a parameter moved to that parameter, when `schema` no longer
/// declares the old place and the new one holds no value; a warning for each (code
/// `deprecated`), naming where to write it. An old manifest applied after an upgrade keeps
/// working, and says what to change.
pub fn renamed(schema: &ParamSchema, given: &Value) -> (Value, Vec<Diagnostic>) {
    let mut out = given.clone();
    let mut warnings = Vec::new();
    for (new, old) in old_names(schema) {
        let (Ok(old_tokens), Ok(new_tokens)) = (pointer::tokens(&old), pointer::tokens(&new))
        else {
            continue;
        };
        if declared(schema, &old_tokens) || out.pointer(&new).is_some() {
            continue;
        }
        let Some((last, parent)) = old_tokens.split_last() else {
            continue;
        };
        let taken = match out.pointer_mut(&pointer::from_tokens(parent)) {
            Some(Value::Object(m)) => m.remove(last),
            _ => None,
        };
        if let Some(v) = taken {
            pointer::set_creating(&mut out, &new_tokens, v);
            warnings.push(
                Diagnostic::warning(
                    Code::Deprecated,
                    old.as_str(),
                    format!("is the old name of {new}: the value was moved there"),
                )
                .with_origin(Origin::Instance)
                .with_help(format!("write it at {new}")),
            );
        }
    }
    (out, warnings)
}

struct Migrator<'a> {
    old_schema: &'a ParamSchema,
    old_values: &'a Value,
    new_schema: &'a ParamSchema,
    installed_version: &'a str,
    new: Value,
    /// Installed pointers whose values moved (with everything under them).
    consumed: Vec<String>,
    report: Report,
    errors: Vec<Diagnostic>,
}

impl Migrator<'_> {
    /// Step 1: every `oldName` of the new schema, parents before children.
    fn follow_old_names(&mut self, node: &Value, tokens: &mut Vec<String>, depth: usize) {
        if depth > MAX_DEPTH {
            return;
        }
        let node = self.new_schema.resolve(node);
        if let Some(old_name) = node.get("oldName") {
            self.follow(old_name, tokens);
        }
        // Arrays move whole: no oldName below them is followed.
        if self.new_schema.is_array(node) && !self.new_schema.is_object(node) {
            return;
        }
        for name in self.new_schema.property_names(node) {
            if let Some(child) = self.new_schema.child(node, name).schema() {
                tokens.push(name.to_string());
                self.follow_old_names(child, tokens, depth + 1);
                tokens.pop();
            }
        }
    }

    fn follow(&mut self, old_name: &Value, tokens: &[String]) {
        let to = pointer::from_tokens(tokens);
        let from = match old_name.as_str() {
            Some(s) if s.starts_with('/') => match pointer::tokens(s) {
                Ok(_) => s.to_string(),
                Err(e) => {
                    return self.invalid(&to, format!("oldName {s:?} is not a JSON pointer: {e}"));
                }
            },
            Some(s) if !s.is_empty() => pointer::push("", s),
            _ => {
                return self.invalid(
                    &to,
                    format!("oldName must be a parameter name or a JSON pointer, got {old_name}"),
                );
            }
        };
        let from_tokens = pointer::tokens(&from).unwrap_or_default();
        if !declared(self.old_schema, &from_tokens) {
            if declared(self.old_schema, tokens) {
                return; // an oldName left over from an earlier upgrade: the path itself is there
            }
            self.errors.push(
                Diagnostic::error(
                    Code::OldNameNotFound,
                    &to,
                    format!(
                        "has oldName {from}, which the installed version {} does not have",
                        self.installed_version
                    ),
                )
                .with_help(format!(
                    "upgrade first to the version that introduced {from} (a version between {} and this one), then to this one",
                    self.installed_version
                )),
            );
            return;
        }
        let Some(value) = self.old_values.pointer(&from) else {
            return; // declared but not set: the default fills it
        };
        let typed = type_like(self.new_schema, tokens, value);
        pointer::set_creating(&mut self.new, tokens, typed);
        self.consumed.push(from.clone());
        self.report.moved.push(Moved { from, to });
    }

    fn invalid(&mut self, at: &str, message: String) {
        self.errors
            .push(Diagnostic::error(Code::InvalidOldName, at, message));
    }

    /// Step 2: installed values not moved stay at their path when the new schema has it.
    fn keep(&mut self, value: &Value, at: &mut Vec<String>, depth: usize) {
        let here = pointer::from_tokens(at);
        if self.consumed.iter().any(|c| pointer::is_within(&here, c)) {
            return;
        }
        if !at.is_empty() && !declared(self.new_schema, at) {
            self.drop_value(
                &here,
                "the new version has no such parameter, and no parameter names it in oldName"
                    .into(),
            );
            return;
        }
        match value {
            Value::Object(map) if depth < MAX_DEPTH && !map.is_empty() && !self.free_form(at) => {
                for (k, v) in map {
                    at.push(k.clone());
                    self.keep(v, at, depth + 1);
                    at.pop();
                }
            }
            _ if at.is_empty() => {}
            _ if pointer_of(&self.new, at).is_some() => self.drop_value(
                &here,
                "its path now holds the value moved there by an oldName".into(),
            ),
            _ => {
                pointer::set_creating(&mut self.new, at, type_like(self.new_schema, at, value));
                self.report.kept.push(here);
            }
        }
    }

    /// True when the new schema leaves this (non-root) object free-form: it is kept whole.
    fn free_form(&self, at: &[String]) -> bool {
        !at.is_empty()
            && self.new_schema.node_at(at).is_some_and(|n| {
                self.new_schema.is_object(n) && self.new_schema.property_names(n).is_empty()
            })
    }

    fn drop_value(&mut self, at: &str, reason: String) {
        self.report.dropped.push(Dropped {
            pointer: at.to_string(),
            reason,
        });
    }
}

/// True when every step of `tokens` is declared by `schema` (a property, an array item, or
/// allowed by `additionalProperties`/`patternProperties`/a free-form object).
fn declared(schema: &ParamSchema, tokens: &[String]) -> bool {
    schema.node_at(tokens).is_some()
}

fn pointer_of<'v>(value: &'v Value, tokens: &[String]) -> Option<&'v Value> {
    value.pointer(&pointer::from_tokens(tokens))
}

/// A string landing on a parameter that is not a string is typed as `-p` would type it.
fn type_like(schema: &ParamSchema, tokens: &[String], value: &Value) -> Value {
    if let (Value::String(s), Some(node)) = (value, schema.node_at(tokens)) {
        let types = schema.types(node);
        if !types.is_empty() && !types.contains(&"string") {
            return crate::typing::from_text(&types, s).unwrap_or_else(|_| value.clone());
        }
    }
    value.clone()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema(v: Value) -> ParamSchema {
        ParamSchema::from_value(v).unwrap()
    }

    #[test]
    fn moves_keeps_defaults_and_reports_dropped() {
        let old = schema(json!({"type": "object", "properties": {
            "NAME": {"type": "string"}, "SIZE": {"type": "string"}, "keep": {"type": "integer"},
            "obsolete": {"type": "string"}, "unset": {"type": "string"}}}));
        let new = schema(json!({"type": "object", "properties": {
            "cluster": {"type": "object", "properties": {
                "name": {"type": "string", "oldName": "NAME"},
                "size": {"type": "integer", "oldName": "/SIZE"},
                "zone": {"type": "string", "default": "a"},
                "other": {"type": "string", "oldName": "unset"}}},
            "keep": {"type": "integer"}}}));
        let m = migrate(
            &old,
            &json!({"NAME": "c1", "SIZE": "3", "keep": 7, "obsolete": "x"}),
            &new,
            "0.1.0",
        )
        .unwrap();
        assert_eq!(
            m.values.value(),
            &json!({"cluster": {"name": "c1", "size": 3, "zone": "a"}, "keep": 7})
        );
        assert_eq!(m.report.moved.len(), 2);
        assert_eq!(m.report.kept, ["/keep"]);
        assert_eq!(m.report.defaulted, ["/cluster/zone"]);
        assert_eq!(m.report.dropped.len(), 1);
        assert_eq!(m.report.dropped[0].pointer, "/obsolete");
    }

    #[test]
    fn an_old_name_the_installed_version_lacks_is_refused() {
        let old =
            schema(json!({"type": "object", "properties": {"CLUSTER_NAME": {"type": "string"}}}));
        let new = schema(json!({"type": "object", "properties": {
            "Cluster": {"type": "object", "properties": {
                "Name": {"type": "string", "oldName": "/clusterName"}}}}}));
        let e = migrate(&old, &json!({"CLUSTER_NAME": "x"}), &new, "0.1").unwrap_err();
        assert_eq!(e[0].code, Code::OldNameNotFound);
        assert_eq!(e[0].pointer, "/Cluster/Name");
        assert!(e[0].message.contains("0.1"), "{}", e[0].message);
    }

    #[test]
    fn a_stale_old_name_is_ignored_when_the_path_exists() {
        let old =
            schema(json!({"type": "object", "properties": {"clusterName": {"type": "string"}}}));
        let new = schema(json!({"type": "object", "properties": {
            "clusterName": {"type": "string", "oldName": "CLUSTER_NAME"}}}));
        let m = migrate(&old, &json!({"clusterName": "x"}), &new, "0.2").unwrap();
        assert_eq!(m.values.value(), &json!({"clusterName": "x"}));
        assert_eq!(m.report.kept, ["/clusterName"]);
    }
    #[test]
    fn a_value_written_by_its_old_name_moves_with_a_warning() {
        let s = schema(json!({"type": "object", "properties": {
            "clusterName": {"type": "string", "oldName": "CLUSTER_NAME"},
            "cluster": {"type": "object", "properties": {
                "size": {"type": "integer", "oldName": "/NODES"}}}}}));
        let (moved, warnings) = renamed(&s, &json!({"CLUSTER_NAME": "c1", "NODES": 3}));
        assert_eq!(moved, json!({"clusterName": "c1", "cluster": {"size": 3}}));
        assert_eq!(warnings.len(), 2);
        assert_eq!(
            warnings[0].to_string(),
            "/CLUSTER_NAME: is the old name of /clusterName: the value was moved there (from instance parameters) [deprecated]; write it at /clusterName"
        );
        // A value at the new place wins: the old one stays, for the policy to refuse.
        let (kept, warnings) = renamed(&s, &json!({"CLUSTER_NAME": "c1", "clusterName": "c2"}));
        assert_eq!(kept, json!({"CLUSTER_NAME": "c1", "clusterName": "c2"}));
        assert!(warnings.is_empty());
        assert!(is_old_name(&s, "CLUSTER_NAME"));
        assert!(!is_old_name(&s, "clusterName"));
    }

    #[test]
    fn reverse_reads_old_names_backwards() {
        let older = ParamSchema::from_value(json!({"type": "object", "properties": {
            "CLUSTER_NAME": {"type": "string", "immutable": true},
            "nodes": {"type": "integer"},
            "gone": {"type": "string"}
        }}))
        .unwrap();
        let newer = ParamSchema::from_value(json!({"type": "object", "properties": {
            "cluster": {"type": "object", "properties": {
                "name": {"type": "string", "oldName": "CLUSTER_NAME", "immutable": true}
            }},
            "nodes": {"type": "integer"},
            "added": {"type": "integer", "oldName": "/not/in/older"}
        }}))
        .unwrap();
        let values = json!({"cluster": {"name": "c1"}, "nodes": 5, "added": 1});
        let back = reverse(&newer, &values, &older);
        assert_eq!(
            back,
            json!({"cluster": {}, "CLUSTER_NAME": "c1", "nodes": 5, "added": 1})
        );
    }
}
