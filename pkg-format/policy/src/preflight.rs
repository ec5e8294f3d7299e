//! `preflight`: what an upgrade from one operator version to another would break in an
//! Instance's parameters, judged before anything is written.
//!
//! Both versions' schemas are walked side by side, each parameter of the new version paired
//! with its place in the installed one (the same path, or the one its `oldName` names, as
//! [`crate::old_name`] moves values). Every difference that may break an Instance is a
//! [`SchemaChange`]; [`against`] then judges each against the Instance's values, [`offline`]
//! against every Instance that could exist (`kudo package verify NEW --against OLD`).
//!
//! | code | what changed | unsafe (refused) when |
//! |---|---|---|
//! | `value-dropped` | a parameter is gone and no `oldName` carries it | the user set it (offline: always) |
//! | `type-changed` | its `type` no longer allows a type it allowed | the value does not convert to the new type |
//! | `enum-restricted` | an `enum` lost values (or one was added) | the value is not in the new `enum` |
//! | `bound-tightened` | `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`, `multipleOf`, `minLength`, `maxLength`, `pattern`, `minItems`, `maxItems`, `uniqueItems`, `minProperties`, `maxProperties` tightened or added | the value fails the new bound |
//! | `required-added` | a parameter is newly required and has no default | no value is given |
//! | `default-changed` | a default changed, was added or removed | never: information, when the user never set the value |
//! | `immutable-added` | a parameter became `immutable` | never: information, when its value differs from the new default |
//! | `immutable-removed` | a parameter is no longer `immutable` | never: information |
//!
//! A refusal comes with the others of the upgrade, all at once; `--allow-drop POINTER` lets a
//! set value go, and so does `--force` for every dropped value ([`Allow`]). No flag lets a value
//! the new version's schema refuses through: no plan of the new version could run with it, so
//! the user gives a value it accepts with the upgrade (`-p`), or updates it before.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::old_name::Dropped;
use crate::params::ParamSchema;
use crate::params::v1beta2::Child;
use crate::values::{MAX_DEPTH, Values};
use crate::version::Version;
use kudo_diag::diag::{Code, Diagnostic, Origin, Shown};
use kudo_diag::pointer;

/// The token that stands for every item of an array in a [`SchemaChange::pointer`].
pub const ANY_ITEM: &str = "*";

/// What the user lets an upgrade through despite the preflight: `--allow-drop POINTER` (a set
/// value at or under it may be dropped) and `--force` (every dropped value, every unsafe CRD
/// change).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Allow {
    /// Pointers whose set values may be dropped.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub drop: Vec<String>,
    /// Every dropped value may go (a value the new schema refuses stays refused), and so may a
    /// CRD change the CRD preflight refuses.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub force: bool,
}

impl Allow {
    /// Nothing allowed: every unsafe finding refuses the upgrade.
    pub const NONE: Allow = Allow {
        drop: Vec::new(),
        force: false,
    };

    /// True when nothing is allowed.
    pub fn is_none(&self) -> bool {
        self.drop.is_empty() && !self.force
    }

    /// True when `--allow-drop` names `pointer` or one of its ancestors.
    pub fn drops(&self, at: &str) -> bool {
        self.drop.iter().any(|d| pointer::is_within(at, d))
    }
}

/// One difference between the installed and the new version's schema, at one parameter.
#[derive(Debug, Clone, PartialEq)]
pub struct SchemaChange {
    /// What kind of change (`bound-tightened`, ...).
    pub code: Code,
    /// The parameter in the new version's layout (array items as [`ANY_ITEM`]); for a removed
    /// parameter, its place in the installed version.
    pub pointer: String,
    /// The schema keyword that changed (`maximum`, `type`, `default`...).
    pub keyword: &'static str,
    /// The installed version's rule, `None` when it had none.
    pub from: Option<Value>,
    /// The new version's rule, `None` when it has none.
    pub to: Option<Value>,
    /// Where the new rule is written in the new schema (`/properties/nodeCount/maximum`).
    pub rule_at: Option<String>,
    /// The parameter is (or holds) a `writeOnly` value: defaults and values are never shown.
    pub secret: bool,
}

impl SchemaChange {
    /// True for the kinds that refuse an upgrade when they break a value (the others inform).
    pub fn may_break(&self) -> bool {
        !matches!(
            self.code,
            Code::DefaultChanged | Code::ImmutableAdded | Code::ImmutableRemoved
        )
    }

    /// `maximum was 10 in cassandra-1.0.0, is 5 in cassandra-2.0.0`.
    fn sentence(&self, from: &Version, to: &Version) -> String {
        let show = |v: &Option<Value>| match v {
            None => "none".to_string(),
            Some(_) if self.secret && self.keyword == "default" => Shown::MASKED.to_string(),
            Some(v) => match Shown::of(v, false) {
                Shown::Value(s) => s,
                Shown::Masked => Shown::MASKED.to_string(),
            },
        };
        match self.code {
            Code::ValueDropped => format!(
                "is not a parameter of {} and no oldName carries it there",
                to.name
            ),
            Code::RequiredAdded => format!("is required in {}, with no default", to.name),
            Code::ImmutableAdded => {
                format!("is immutable in {} (it was not in {})", to.name, from.name)
            }
            Code::ImmutableRemoved => format!(
                "is no longer immutable in {} (it was in {})",
                to.name, from.name
            ),
            _ => format!(
                "{} was {} in {}, is {} in {}",
                self.keyword,
                show(&self.from),
                from.name,
                show(&self.to),
                to.name
            ),
        }
    }
}

/// Every difference between `from`'s and `to`'s parameter schemas that may break an Instance
/// or is worth telling, parameter by parameter, in the order of the new schema (removed
/// parameters last).
pub fn schema_changes(from: &ParamSchema, to: &ParamSchema) -> Vec<SchemaChange> {
    let mut walk = Walk {
        from,
        to,
        out: Vec::new(),
        visited: Vec::new(),
    };
    walk.pair(
        from.root(),
        to.root(),
        &mut Vec::new(),
        &mut Vec::new(),
        String::new(),
        0,
    );
    // Removed: a parameter of the installed version no pair reached (the topmost one only).
    let visited = std::mem::take(&mut walk.visited);
    let mut removed: Vec<String> = Vec::new();
    for p in declared_pointers(from) {
        let reached = visited.iter().any(|v| v == &p);
        let under_removed = removed.iter().any(|r| pointer::is_within(&p, r));
        if !reached && !under_removed {
            let tokens = pointer::tokens(&p).unwrap_or_default();
            walk.out.push(SchemaChange {
                code: Code::ValueDropped,
                pointer: p.clone(),
                keyword: "properties",
                from: None,
                to: None,
                rule_at: None,
                secret: from.may_hold_secret(&tokens),
            });
            removed.push(p);
        }
    }
    walk.out
}

/// The findings of an upgrade from `from` to `to`, judged without values (an operator author's
/// check, `kudo package verify NEW --against OLD`): each change that may break an Instance is
/// an error saying which Instances it breaks, each other a warning.
pub fn offline(from: &Version, to: &Version) -> Vec<Diagnostic> {
    schema_changes(&from.schema, &to.schema)
        .into_iter()
        .map(|c| {
            let message = c.sentence(from, to);
            let shown = shown_pointer(&c.pointer);
            let d = if c.may_break() {
                let breaks = match c.code {
                    Code::ValueDropped => {
                        format!("breaks any Instance that set {shown}: its value would be dropped")
                    }
                    Code::RequiredAdded => {
                        format!("breaks any Instance that does not set {shown} with the upgrade")
                    }
                    _ => format!("breaks any Instance whose value of {shown} fails the new rule"),
                };
                Diagnostic::error(c.code, c.pointer.as_str(), message).with_help(breaks)
            } else {
                Diagnostic::warning(c.code, c.pointer.as_str(), message)
            };
            with_rule(d, &c)
        })
        .collect()
}

/// The findings of an upgrade of an Instance from `from` to `to`: each [`SchemaChange`] judged
/// against `values` (the effective values after the upgrade, in `to`'s layout, each with its
/// origin) and `explicit` (what of them the user set), and `dropped` (the set values the
/// migration could place nowhere, [`crate::old_name::Report::dropped`]).
///
/// A dropped value is an error unless `allow` lets it go (then a warning that says so); a value
/// the new rules refuse, and a missing required one, are errors whatever `allow` says; an
/// informational finding is a warning. Values are shown as the validator shows them, `writeOnly`
/// ones masked.
pub fn against(
    from: &Version,
    to: &Version,
    values: &Values,
    explicit: &Value,
    dropped: &[Dropped],
    allow: &Allow,
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let allowed = |mut d: Diagnostic, why: &str| {
        d.severity = kudo_diag::diag::Severity::Warning;
        d.message = format!("{} (allowed by {why})", d.message);
        d
    };
    for d in dropped {
        let diag = Diagnostic::error(
            Code::ValueDropped,
            d.pointer.as_str(),
            format!(
                "the value set here is not carried over to {}: {}",
                to.name, d.reason
            ),
        )
        .with_origin(Origin::Instance)
        .with_help(format!(
            "add an oldName for it in {}, or let it go: --allow-drop {}",
            to.name,
            d.pointer.trim_start_matches('/')
        ));
        out.push(if allow.drops(&d.pointer) {
            allowed(diag, "--allow-drop")
        } else if allow.force {
            allowed(diag, "--force")
        } else {
            diag
        });
    }
    for c in schema_changes(&from.schema, &to.schema) {
        if c.code == Code::ValueDropped {
            continue; // judged by the migration, above
        }
        let message = c.sentence(from, to);
        if !c.may_break() {
            for (p, v) in values_at(values.value(), &c.pointer) {
                let set = explicit.pointer(&p).is_some();
                let tell = match c.code {
                    Code::DefaultChanged => !set,
                    Code::ImmutableAdded => c_default(&to.schema, &p) != Some(v),
                    _ => true,
                };
                if tell {
                    out.push(with_rule(
                        Diagnostic::warning(c.code, p.as_str(), message.clone())
                            .with_origin(values.origin(&p)),
                        &c,
                    ));
                }
            }
            continue;
        }
        if c.code == Code::RequiredAdded {
            if values.value().pointer(&c.pointer).is_none() && !c.pointer.contains("/*") {
                let d = with_rule(
                    Diagnostic::error(c.code, c.pointer.as_str(), message).with_help(format!(
                        "give it a value with the upgrade: -p {}=...",
                        c.pointer.trim_start_matches('/')
                    )),
                    &c,
                );
                out.push(d);
            }
            continue;
        }
        for (p, v) in values_at(values.value(), &c.pointer) {
            if passes(to, &c, v) {
                continue;
            }
            let tokens = pointer::tokens(&p).unwrap_or_default();
            let d = with_rule(
                Diagnostic::error(c.code, p.as_str(), message.clone())
                    .with_value(Shown::of(v, c.secret || to.schema.may_hold_secret(&tokens)))
                    .with_origin(values.origin(&p))
                    .with_help(format!(
                        "set a value {} accepts with the upgrade (-p {}=...), or update it before upgrading",
                        to.name,
                        p.trim_start_matches('/')
                    )),
                &c,
            );
            out.push(d);
        }
    }
    out
}

/// `deprecated: true` on a schema node (JSON-schema 2019-09's own keyword): `Some` with its
/// `deprecationMessage` (what to use instead; VS Code's JSON language service shows the same
/// extension), empty when it has none.
pub fn deprecation(node: &Value) -> Option<&str> {
    (node.get("deprecated") == Some(&Value::Bool(true))).then(|| {
        node.get("deprecationMessage")
            .and_then(Value::as_str)
            .unwrap_or("")
    })
}

/// A parameter a schema marks `deprecated` ([`deprecation`]): found once per schema
/// ([`deprecations`]; a [`crate::version::Version`] keeps its own), read at each admission.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Deprecated {
    /// Its pointer, `*` for any item of an array.
    pub at: String,
    /// The schema keyword's place (`/properties/a/deprecated`).
    pub rule: String,
    /// Its `deprecationMessage` (empty when none).
    pub message: String,
}

/// Every parameter `schema` marks `deprecated`: the walk of the schema [`deprecated`] reads.
pub fn deprecations(schema: &ParamSchema) -> Vec<Deprecated> {
    declared_pointers(schema)
        .into_iter()
        .filter_map(|at| {
            let tokens = pointer::tokens(&at).unwrap_or_default();
            let message = declared_node(schema, &tokens).and_then(deprecation)?;
            Some(Deprecated {
                rule: schema_pointer(&tokens, "deprecated"),
                message: message.to_string(),
                at,
            })
        })
        .collect()
}

/// A warning for each value of `values` that the user set (not a default) at a parameter
/// marked `deprecated` (`found`, [`deprecations`] of the schema), with its message: accepted,
/// worth changing. `operator_version` names the version in the warning, when known.
pub fn deprecated(
    found: &[Deprecated],
    operator_version: Option<&str>,
    values: &Values,
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let what = match operator_version {
        Some(name) => format!("is deprecated in {name}"),
        None => "is deprecated".to_string(),
    };
    for dep in found {
        for (p, _) in values_at(values.value(), &dep.at) {
            if values.origin(&p) == Origin::Default {
                continue;
            }
            let mut d = Diagnostic::warning(Code::Deprecated, p.as_str(), what.clone())
                .with_origin(values.origin(&p))
                .with_rule(dep.rule.clone());
            if !dep.message.is_empty() {
                d = d.with_help(dep.message.clone());
            }
            out.push(d);
        }
    }
    out
}

/// The place of keyword `keyword` of the node at value `tokens` in a schema of plain
/// `properties` and `items` (`/properties/a/items/properties/b/deprecated`).
fn schema_pointer(tokens: &[String], keyword: &str) -> String {
    let mut at = String::new();
    for t in tokens {
        at = if t == ANY_ITEM {
            pointer::push(&at, "items")
        } else {
            pointer::push(&pointer::push(&at, "properties"), t)
        };
    }
    pointer::push(&at, keyword)
}

fn c_default<'a>(schema: &'a ParamSchema, at: &str) -> Option<&'a Value> {
    let tokens = pointer::tokens(at).ok()?;
    schema.node_at(&tokens)?.get("default")
}

fn with_rule(d: Diagnostic, c: &SchemaChange) -> Diagnostic {
    match &c.rule_at {
        Some(at) => d.with_rule(at.clone()),
        None => d,
    }
}

fn shown_pointer(p: &str) -> String {
    if p.is_empty() {
        "/".into()
    } else {
        p.to_string()
    }
}

/// True when `value` passes the new version's rule `c` on its own (the rest of the schema is the
/// validator's).
fn passes(to: &Version, c: &SchemaChange, value: &Value) -> bool {
    let Some(rule) = &c.to else {
        return true;
    };
    let mut schema = serde_json::Map::new();
    schema.insert(c.keyword.to_string(), rule.clone());
    let draft = match to.schema.draft() {
        crate::params::Draft::Draft7 => jsonschema::Draft::Draft7,
        crate::params::Draft::Draft201909 => jsonschema::Draft::Draft201909,
        crate::params::Draft::Draft202012 => jsonschema::Draft::Draft202012,
    };
    jsonschema::options()
        .with_draft(draft)
        .with_pattern_options(jsonschema::PatternOptions::regex())
        .build(&Value::Object(schema))
        .map(|v| v.is_valid(value))
        .unwrap_or(true)
}

/// The values at `pattern` (a value pointer whose [`ANY_ITEM`] tokens stand for every item of
/// an array), with their pointers.
fn values_at<'v>(root: &'v Value, pattern: &str) -> Vec<(String, &'v Value)> {
    let Ok(tokens) = pointer::tokens(pattern) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    fn go<'v>(v: &'v Value, rest: &[String], at: String, out: &mut Vec<(String, &'v Value)>) {
        let Some((first, rest)) = rest.split_first() else {
            out.push((at, v));
            return;
        };
        match (first.as_str(), v) {
            (ANY_ITEM, Value::Array(items)) => {
                for (i, item) in items.iter().enumerate() {
                    go(item, rest, pointer::push(&at, &i.to_string()), out);
                }
            }
            (key, Value::Object(m)) => {
                if let Some(child) = m.get(key) {
                    go(child, rest, pointer::push(&at, key), out);
                }
            }
            _ => {}
        }
    }
    go(root, &tokens, String::new(), &mut out);
    out
}

/// Every parameter pointer `schema` declares (through properties and array items, the latter
/// as [`ANY_ITEM`]).
fn declared_pointers(schema: &ParamSchema) -> Vec<String> {
    fn go(schema: &ParamSchema, node: &Value, at: String, depth: usize, out: &mut Vec<String>) {
        if depth > MAX_DEPTH {
            return;
        }
        let node = schema.resolve(node);
        for name in schema.property_names(node) {
            if let Child::Property(child) = schema.child(node, name) {
                let p = pointer::push(&at, name);
                out.push(p.clone());
                go(schema, child, p, depth + 1, out);
            }
        }
        if let Some(items) = items_of(schema, node) {
            go(schema, items, pointer::push(&at, ANY_ITEM), depth + 1, out);
        }
    }
    let mut out = Vec::new();
    go(schema, schema.root(), String::new(), 0, &mut out);
    out
}

/// The schema of an array node's items (`items` as one schema).
fn items_of<'a>(schema: &'a ParamSchema, node: &'a Value) -> Option<&'a Value> {
    if !schema.is_array(node) {
        return None;
    }
    match node.get("items") {
        Some(items @ Value::Object(_)) => Some(schema.resolve(items)),
        _ => None,
    }
}

/// The node of `schema` at value `tokens` (array items as [`ANY_ITEM`]), declared all the way
/// (properties and items, not free-form).
fn declared_node<'a>(schema: &'a ParamSchema, tokens: &[String]) -> Option<&'a Value> {
    let mut node = schema.root();
    for t in tokens {
        node = if t == ANY_ITEM {
            items_of(schema, node)?
        } else {
            match schema.child(node, t) {
                Child::Property(c) => schema.resolve(c),
                _ => return None,
            }
        };
    }
    Some(node)
}

/// Bounds, each with the direction that tightens it: `true` when a larger value is tighter.
const BOUNDS: &[(&str, bool)] = &[
    ("minimum", true),
    ("exclusiveMinimum", true),
    ("maximum", false),
    ("exclusiveMaximum", false),
    ("minLength", true),
    ("maxLength", false),
    ("minItems", true),
    ("maxItems", false),
    ("minProperties", true),
    ("maxProperties", false),
];

struct Walk<'a> {
    from: &'a ParamSchema,
    to: &'a ParamSchema,
    out: Vec<SchemaChange>,
    /// Installed parameter pointers reached by a pair.
    visited: Vec<String>,
}

impl Walk<'_> {
    /// Compares the installed node `old` at `old_at` with the new node `new` at `new_at`
    /// (value tokens), `schema_at` the new node's place in the new schema.
    fn pair(
        &mut self,
        old: &Value,
        new: &Value,
        old_at: &mut Vec<String>,
        new_at: &mut Vec<String>,
        schema_at: String,
        depth: usize,
    ) {
        if depth > MAX_DEPTH {
            return;
        }
        let (old, new) = (self.from.resolve(old), self.to.resolve(new));
        if !new_at.is_empty() {
            self.visited.push(pointer::from_tokens(old_at));
            let here = Here {
                pointer: pointer::from_tokens(new_at),
                schema_at: &schema_at,
                secret: self.to.may_hold_secret(new_at),
            };
            self.narrowed(old, new, &here);
            self.changed(old, new, &here);
        }
        self.required_added(old, new, old_at, new_at, &schema_at);
        self.children(old, new, old_at, new_at, &schema_at, depth);
    }

    /// The rules of the node that accept fewer values now: its type, enum and bounds.
    fn narrowed(&mut self, old: &Value, new: &Value, here: &Here<'_>) {
        let change = |code, keyword, from, to| here.change(code, keyword, from, to);
        // type
        let (ot, nt) = (self.from.types(old), self.to.types(new));
        let widened = |t: &str| nt.contains(&t) || (t == "integer" && nt.contains(&"number"));
        if !nt.is_empty() && (ot.is_empty() || !ot.iter().all(|t| widened(t))) {
            self.out.push(change(
                Code::TypeChanged,
                "type",
                old.get("type"),
                new.get("type"),
            ));
        }
        // enum
        if let Some(Value::Array(ne)) = new.get("enum") {
            let restricted = match old.get("enum") {
                Some(Value::Array(oe)) => oe.iter().any(|v| !ne.contains(v)),
                _ => true,
            };
            if restricted {
                self.out.push(change(
                    Code::EnumRestricted,
                    "enum",
                    old.get("enum"),
                    new.get("enum"),
                ));
            }
        }
        // bounds
        for (kw, larger_is_tighter) in BOUNDS {
            let (o, n) = (old.get(*kw), new.get(*kw));
            let tighter = match (o.and_then(Value::as_f64), n.and_then(Value::as_f64)) {
                (_, None) => false,
                (None, Some(_)) => n.is_some_and(|v| v.is_number()),
                (Some(o), Some(n)) => {
                    if *larger_is_tighter {
                        n > o
                    } else {
                        n < o
                    }
                }
            };
            if tighter {
                self.out.push(change(Code::BoundTightened, kw, o, n));
            }
        }
        for kw in ["pattern", "multipleOf"] {
            let (o, n) = (old.get(kw), new.get(kw));
            if n.is_some() && o != n {
                self.out.push(change(Code::BoundTightened, kw, o, n));
            }
        }
        if new.get("uniqueItems") == Some(&Value::Bool(true))
            && old.get("uniqueItems") != Some(&Value::Bool(true))
        {
            self.out.push(change(
                Code::BoundTightened,
                "uniqueItems",
                old.get("uniqueItems"),
                new.get("uniqueItems"),
            ));
        }
    }

    /// The rules of the node that changed otherwise: its default, whether it is immutable.
    fn changed(&mut self, old: &Value, new: &Value, here: &Here<'_>) {
        let change = |code, keyword, from, to| here.change(code, keyword, from, to);
        // default
        if old.get("default") != new.get("default") {
            self.out.push(change(
                Code::DefaultChanged,
                "default",
                old.get("default"),
                new.get("default"),
            ));
        }
        // immutable
        let immutable = |n: &Value| n.get("immutable") == Some(&Value::Bool(true));
        match (immutable(old), immutable(new)) {
            (false, true) => self.out.push(change(
                Code::ImmutableAdded,
                "immutable",
                None,
                new.get("immutable"),
            )),
            (true, false) => self.out.push(change(
                Code::ImmutableRemoved,
                "immutable",
                old.get("immutable"),
                None,
            )),
            _ => {}
        }
    }

    /// Names the new node requires and the old did not, without a default.
    fn required_added(
        &mut self,
        old: &Value,
        new: &Value,
        old_at: &[String],
        new_at: &mut Vec<String>,
        schema_at: &str,
    ) {
        let required = |n: &Value| -> Vec<String> {
            n.get("required")
                .and_then(Value::as_array)
                .map(|r| {
                    r.iter()
                        .filter_map(Value::as_str)
                        .map(String::from)
                        .collect()
                })
                .unwrap_or_default()
        };
        let old_required = required(old);
        for name in required(new) {
            let child = match self.to.child(new, &name) {
                Child::Property(c) => Some(self.to.resolve(c)),
                _ => None,
            };
            let has_default = child.is_some_and(|c| c.get("default").is_some());
            // A renamed parameter was required under its old name if its old place was.
            let old_name = child.and_then(|c| old_place(c, old_at, &name));
            let was_required = old_name.as_ref().is_some_and(|(parent, last)| {
                parent.as_slice() == old_at && old_required.contains(last)
                    || declared_node(self.from, parent).is_some_and(|p| required(p).contains(last))
            });
            if !has_default && !was_required {
                new_at.push(name.clone());
                self.out.push(SchemaChange {
                    code: Code::RequiredAdded,
                    pointer: pointer::from_tokens(new_at),
                    keyword: "required",
                    from: old.get("required").cloned(),
                    to: new.get("required").cloned(),
                    rule_at: Some(pointer::push(schema_at, "required")),
                    secret: self.to.may_hold_secret(new_at),
                });
                new_at.pop();
            }
        }
    }

    /// The node's children, each paired with its installed place: properties, then items.
    fn children(
        &mut self,
        old: &Value,
        new: &Value,
        old_at: &mut Vec<String>,
        new_at: &mut Vec<String>,
        schema_at: &str,
        depth: usize,
    ) {
        for name in self.to.property_names(new) {
            let Child::Property(child) = self.to.child(new, name) else {
                continue;
            };
            let child = self.to.resolve(child);
            let Some((parent, last)) = old_place(child, old_at, name) else {
                continue;
            };
            let mut old_child_at = parent;
            old_child_at.push(last);
            let Some(old_child) = declared_node(self.from, &old_child_at) else {
                continue; // a new parameter
            };
            new_at.push(name.to_string());
            let child_schema_at = pointer::push(&pointer::push(schema_at, "properties"), name);
            self.pair(
                old_child,
                child,
                &mut old_child_at,
                new_at,
                child_schema_at,
                depth + 1,
            );
            new_at.pop();
        }
        if let (Some(oi), Some(ni)) = (items_of(self.from, old), items_of(self.to, new)) {
            old_at.push(ANY_ITEM.into());
            new_at.push(ANY_ITEM.into());
            self.pair(
                oi,
                ni,
                old_at,
                new_at,
                pointer::push(schema_at, "items"),
                depth + 1,
            );
            new_at.pop();
            old_at.pop();
        }
    }
}

/// The node a [`Walk`] compares now: where it is, for the [`SchemaChange`]s it finds.
struct Here<'a> {
    /// Its value pointer in the new schema.
    pointer: String,
    /// Its place in the new schema.
    schema_at: &'a str,
    /// It may hold a secret.
    secret: bool,
}

impl Here<'_> {
    /// A change of `keyword` here, from the installed rule `from` to the new `to`.
    fn change(
        &self,
        code: Code,
        keyword: &'static str,
        from: Option<&Value>,
        to: Option<&Value>,
    ) -> SchemaChange {
        SchemaChange {
            code,
            pointer: self.pointer.clone(),
            keyword,
            from: from.cloned(),
            to: to.cloned(),
            rule_at: to.map(|_| pointer::push(self.schema_at, keyword)),
            secret: self.secret,
        }
    }
}

/// Where the installed value of new parameter `name` (node `child`, under the installed place
/// `old_parent`) lived: its `oldName` (a name is top-level, a pointer anywhere), else the same
/// name under the parent's installed place. `(parent tokens, last token)`; `None` for an
/// `oldName` that is no pointer.
fn old_place(child: &Value, old_parent: &[String], name: &str) -> Option<(Vec<String>, String)> {
    let mut tokens = match child.get("oldName").and_then(Value::as_str) {
        Some(s) if s.starts_with('/') => pointer::tokens(s).ok()?,
        Some(s) if !s.is_empty() => vec![s.to_string()],
        _ => {
            let mut t = old_parent.to_vec();
            t.push(name.to_string());
            t
        }
    };
    let last = tokens.pop()?;
    Some((tokens, last))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn version(name: &str, schema: Value) -> Version {
        Version::new(
            name.into(),
            "1".into(),
            ParamSchema::from_value(schema).unwrap(),
            vec!["deploy".into()],
        )
        .unwrap()
    }

    fn props(p: Value) -> Value {
        json!({"type": "object", "properties": p})
    }

    /// One rule: the installed and new schema of parameter `x`, a value that still passes and
    /// one that breaks (`None`: the rule informs only).
    struct Case {
        name: &'static str,
        from: Value,
        to: Value,
        code: Code,
        passes: Value,
        breaks: Option<Value>,
    }

    fn cases() -> Vec<Case> {
        vec![
            Case {
                name: "type changed",
                from: json!({"type": "integer"}),
                to: json!({"type": "string"}),
                code: Code::TypeChanged,
                passes: json!("7"),
                breaks: Some(json!(7)),
            },
            Case {
                name: "enum value removed",
                from: json!({"type": "string", "enum": ["a", "b", "c"]}),
                to: json!({"type": "string", "enum": ["a", "b"]}),
                code: Code::EnumRestricted,
                passes: json!("a"),
                breaks: Some(json!("c")),
            },
            Case {
                name: "enum added",
                from: json!({"type": "string"}),
                to: json!({"type": "string", "enum": ["a"]}),
                code: Code::EnumRestricted,
                passes: json!("a"),
                breaks: Some(json!("z")),
            },
            Case {
                name: "maximum lowered",
                from: json!({"type": "integer", "maximum": 10}),
                to: json!({"type": "integer", "maximum": 5}),
                code: Code::BoundTightened,
                passes: json!(5),
                breaks: Some(json!(7)),
            },
            Case {
                name: "minimum added",
                from: json!({"type": "integer"}),
                to: json!({"type": "integer", "minimum": 3}),
                code: Code::BoundTightened,
                passes: json!(3),
                breaks: Some(json!(1)),
            },
            Case {
                name: "maxLength lowered",
                from: json!({"type": "string", "maxLength": 10}),
                to: json!({"type": "string", "maxLength": 3}),
                code: Code::BoundTightened,
                passes: json!("abc"),
                breaks: Some(json!("abcd")),
            },
            Case {
                name: "pattern added",
                from: json!({"type": "string"}),
                to: json!({"type": "string", "pattern": "^[a-z]+$"}),
                code: Code::BoundTightened,
                passes: json!("abc"),
                breaks: Some(json!("ABC")),
            },
            Case {
                name: "maxItems lowered",
                from: json!({"type": "array", "maxItems": 5}),
                to: json!({"type": "array", "maxItems": 1}),
                code: Code::BoundTightened,
                passes: json!([1]),
                breaks: Some(json!([1, 2])),
            },
            Case {
                name: "default changed",
                from: json!({"type": "integer", "default": 3}),
                to: json!({"type": "integer", "default": 5}),
                code: Code::DefaultChanged,
                passes: json!(4),
                breaks: None,
            },
            Case {
                name: "immutable added",
                from: json!({"type": "string"}),
                to: json!({"type": "string", "immutable": true}),
                code: Code::ImmutableAdded,
                passes: json!("a"),
                breaks: None,
            },
            Case {
                name: "immutable removed",
                from: json!({"type": "string", "immutable": true}),
                to: json!({"type": "string"}),
                code: Code::ImmutableRemoved,
                passes: json!("a"),
                breaks: None,
            },
        ]
    }

    fn judged(from: &Version, to: &Version, value: &Value) -> Vec<Diagnostic> {
        let explicit = json!({"x": value});
        let mut values = Values::new(explicit.clone(), Origin::Instance);
        values.apply_defaults(&to.schema);
        against(from, to, &values, &explicit, &[], &Allow::NONE)
    }

    #[test]
    fn each_rule_passes_a_value_it_accepts_and_refuses_one_it_breaks() {
        for c in cases() {
            let from = version("op-1", props(json!({"x": c.from})));
            let to = version("op-2", props(json!({"x": c.to})));
            let changes = schema_changes(&from.schema, &to.schema);
            assert_eq!(
                changes.iter().map(|s| s.code).collect::<Vec<_>>(),
                vec![c.code],
                "{}: {changes:?}",
                c.name
            );
            let offline = offline(&from, &to);
            assert_eq!(offline.len(), 1, "{}", c.name);
            assert_eq!(offline[0].is_error(), c.breaks.is_some(), "{}", c.name);
            let ok = judged(&from, &to, &c.passes);
            assert!(ok.iter().all(|d| !d.is_error()), "{}: {:?}", c.name, ok);
            if let Some(bad) = &c.breaks {
                let refused = judged(&from, &to, bad);
                assert_eq!(refused.len(), 1, "{}: {refused:?}", c.name);
                assert!(refused[0].is_error(), "{}", c.name);
                assert_eq!(refused[0].code, c.code, "{}", c.name);
                assert_eq!(refused[0].pointer.as_str(), "/x", "{}", c.name);
                assert!(
                    refused[0].to_string().contains("op-1"),
                    "{}: {}",
                    c.name,
                    refused[0]
                );
                assert!(refused[0].to_string().contains("op-2"), "{}", c.name);
                let forced = against(
                    &from,
                    &to,
                    &Values::new(json!({"x": bad}), Origin::Instance),
                    &json!({"x": bad}),
                    &[],
                    &Allow {
                        force: true,
                        ..Allow::default()
                    },
                );
                assert!(
                    forced[0].is_error(),
                    "{}: --force stores no value the schema refuses",
                    c.name
                );
            }
        }
    }

    #[test]
    fn loosened_and_unchanged_rules_are_no_finding() {
        let from = version(
            "op-1",
            props(
                json!({"x": {"type": "integer", "maximum": 5, "minimum": 2, "enum": [2, 3]},
                         "s": {"type": "string", "description": "old"}}),
            ),
        );
        let to = version(
            "op-2",
            props(
                json!({"x": {"type": "number", "maximum": 10, "enum": [2, 3, 4]},
                         "s": {"type": "string", "description": "new"},
                         "added": {"type": "string"}}),
            ),
        );
        assert_eq!(schema_changes(&from.schema, &to.schema), vec![]);
    }

    #[test]
    fn a_required_parameter_without_default_needs_a_value() {
        let from = version("op-1", props(json!({"a": {"type": "string"}})));
        let to = version(
            "op-2",
            json!({"type": "object", "required": ["b"], "properties": {
                "a": {"type": "string"}, "b": {"type": "string"}}}),
        );
        let none = Values::new(json!({}), Origin::Instance);
        let refused = against(&from, &to, &none, &json!({}), &[], &Allow::NONE);
        assert_eq!(refused.len(), 1);
        assert_eq!(refused[0].code, Code::RequiredAdded);
        assert_eq!(refused[0].pointer.as_str(), "/b");
        let given = Values::new(json!({"b": "x"}), Origin::Instance);
        assert!(against(&from, &to, &given, &json!({"b": "x"}), &[], &Allow::NONE).is_empty());
        // A renamed required parameter stays required: no finding.
        let from = version(
            "op-1",
            json!({"type": "object", "required": ["B"], "properties": {"B": {"type": "string"}}}),
        );
        let to = version(
            "op-2",
            json!({"type": "object", "required": ["b"], "properties": {"b": {"type": "string", "oldName": "B"}}}),
        );
        assert_eq!(schema_changes(&from.schema, &to.schema), vec![]);
    }

    #[test]
    fn a_dropped_value_is_refused_unless_allowed() {
        let from = version(
            "op-1",
            props(json!({"a": {"type": "string"}, "gone": {"type": "string"}})),
        );
        let to = version("op-2", props(json!({"a": {"type": "string"}})));
        let changes = schema_changes(&from.schema, &to.schema);
        assert_eq!(changes.len(), 1);
        assert_eq!(
            (changes[0].code, changes[0].pointer.as_str()),
            (Code::ValueDropped, "/gone")
        );
        assert!(
            offline(&from, &to)[0]
                .help
                .as_deref()
                .unwrap()
                .contains("breaks any Instance that set /gone")
        );
        let dropped = [Dropped {
            pointer: "/gone".into(),
            reason: "no parameter of the new version is there".into(),
        }];
        let values = Values::new(json!({}), Origin::Instance);
        let refused = against(&from, &to, &values, &json!({}), &dropped, &Allow::NONE);
        assert!(refused[0].is_error());
        assert!(
            refused[0].to_string().contains("--allow-drop gone"),
            "{}",
            refused[0]
        );
        let allowed = against(
            &from,
            &to,
            &values,
            &json!({}),
            &dropped,
            &Allow {
                drop: vec!["/gone".into()],
                force: false,
            },
        );
        assert!(!allowed[0].is_error());
        assert!(allowed[0].message.contains("allowed by --allow-drop"));
    }

    #[test]
    fn renamed_and_nested_parameters_pair_through_old_name_and_items() {
        let from = version(
            "op-1",
            props(
                json!({"NODES": {"type": "array", "items": {"type": "object", "properties": {
                "name": {"type": "string", "maxLength": 20}}}}}),
            ),
        );
        let to = version(
            "op-2",
            props(
                json!({"nodes": {"type": "array", "oldName": "NODES", "items": {"type": "object", "properties": {
                "name": {"type": "string", "maxLength": 5}}}}}),
            ),
        );
        let changes = schema_changes(&from.schema, &to.schema);
        assert_eq!(changes.len(), 1, "{changes:?}");
        assert_eq!(changes[0].pointer, "/nodes/*/name");
        assert_eq!(
            changes[0].rule_at.as_deref(),
            Some("/properties/nodes/items/properties/name/maxLength")
        );
        let v = json!({"nodes": [{"name": "abc"}, {"name": "abcdefgh"}]});
        let refused = against(
            &from,
            &to,
            &Values::new(v.clone(), Origin::Instance),
            &v,
            &[],
            &Allow::NONE,
        );
        assert_eq!(refused.len(), 1);
        assert_eq!(refused[0].pointer.as_str(), "/nodes/1/name");
    }

    #[test]
    fn a_secret_value_is_never_shown() {
        let from = version(
            "op-1",
            props(json!({"pw": {"type": "string", "writeOnly": true}})),
        );
        let to = version(
            "op-2",
            props(json!({"pw": {"type": "string", "writeOnly": true, "minLength": 12}})),
        );
        let v = json!({"pw": "hunter2"});
        let refused = against(
            &from,
            &to,
            &Values::new(v.clone(), Origin::Instance),
            &v,
            &[],
            &Allow::NONE,
        );
        assert_eq!(refused.len(), 1);
        assert!(
            !refused[0].to_string().contains("hunter2"),
            "{}",
            refused[0]
        );
        assert_eq!(refused[0].value, Some(Shown::Masked));
    }

    #[test]
    fn a_default_change_informs_only_when_the_user_never_set_the_value() {
        let from = version(
            "op-1",
            props(json!({"n": {"type": "integer", "default": 3}})),
        );
        let to = version(
            "op-2",
            props(json!({"n": {"type": "integer", "default": 5}})),
        );
        let mut unset = Values::new(json!({}), Origin::Instance);
        unset.apply_defaults(&to.schema);
        let told = against(&from, &to, &unset, &json!({}), &[], &Allow::NONE);
        assert_eq!(told.len(), 1);
        assert!(!told[0].is_error());
        assert_eq!(
            told[0].to_string(),
            "/n: default was 3 in op-1, is 5 in op-2 (from package default) [default-changed]"
        );
        let set = Values::new(json!({"n": 4}), Origin::Instance);
        assert!(against(&from, &to, &set, &json!({"n": 4}), &[], &Allow::NONE).is_empty());
    }

    #[test]
    fn a_deprecated_parameter_set_is_a_warning_with_its_message() {
        let v = version(
            "op-2",
            props(json!({
                "old": {"type": "string", "deprecated": true, "deprecationMessage": "use /new"},
                "bare": {"type": "string", "deprecated": true},
                "new": {"type": "string"}})),
        );
        let mut values = Values::new(json!({"old": "x", "new": "y"}), Origin::Instance);
        values.apply_defaults(&v.schema);
        let warned = deprecated(&v.deprecations, Some(&v.name), &values);
        assert_eq!(warned.len(), 1, "{warned:?}");
        assert!(!warned[0].is_error());
        assert_eq!(
            warned[0].to_string(),
            "/old: is deprecated in op-2 (from instance parameters) [deprecated]; use /new"
        );
        assert_eq!(
            warned[0].by.as_ref().unwrap().keyword,
            "/properties/old/deprecated"
        );
        let bare = Values::new(json!({"bare": "z"}), Origin::Instance);
        let warned = deprecated(&v.deprecations, None, &bare);
        assert_eq!(
            warned[0].to_string(),
            "/bare: is deprecated (from instance parameters) [deprecated]"
        );
    }
}
