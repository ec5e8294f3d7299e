//! The effective parameters: schema defaults, then `-P` files, then `-p` overrides.
//!
//! # `-p` grammar
//!
//! ```text
//! override  = pointer "=" value            split at the first "="
//! pointer   = ["/"] token *("/" token)     RFC 6901, the leading "/" optional; ~0 is "~", ~1 is "/"
//! value     = YAML text, typed by the schema at the pointer
//! ```
//!
//! | `-p` | with the schema saying | gives |
//! |---|---|---|
//! | `clusterName=NewName` | string | `{"clusterName": "NewName"}` |
//! | `clusterName=123` | string | `{"clusterName": "123"}` (stays a string) |
//! | `nodeCount=3` | integer | `{"nodeCount": 3}` |
//! | `topology/0/datacenterName=DC1` | array of objects | `{"topology": [{"datacenterName": "DC1", ...}]}` |
//! | `topology/0/labels/0={key: Usage, value: v}` | object | replaces that label |
//! | `topology/0/labels=[{key: a, value: b}]` | array | replaces the whole array |
//! | `a~1b=x` | property `a/b` | `{"a/b": "x"}` |
//! | `nodeCount=` | integer | removes the value: it falls back to its default |
//!
//! Refused, each with its own [`Code`]: a pointer the schema does not have (with a "did you
//! mean"), an array index that does not exist (no padding), `-` (append would make `update`
//! non-idempotent), a non-number index, and walking into a scalar. Objects missing along a valid
//! path are created; arrays never are.
//!
//! # `-P` files
//!
//! RFC 7396 JSON merge patches, applied in order onto the current values: objects merge, arrays
//! and scalars replace, `null` removes (the value then falls back to its default).
//!
//! # Defaults
//!
//! Schema defaults fill every missing value, nested ones too: inside objects, inside each array
//! item, and objects with no `default` of their own are created when their properties have
//! defaults (so `Params.resources.cpu` exists when only `cpu` has a default).

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::diag::{Code, Diagnostic, Origin, Shown};
use crate::document::Document;
use crate::params::{ParamSchema, v1beta2::Child};
use crate::pointer;

/// Most nesting levels of a parameter schema the engine follows (filling defaults, migrating,
/// listing): schemas may be recursive through `$ref`. The structural checks, which guard
/// against hostile input rather than recursion, have their own ([`crate::structural::MAX_DEPTH`]).
pub const MAX_DEPTH: usize = 64;

/// One parsed `-p KEY=VALUE` argument.
#[derive(Debug, Clone, PartialEq)]
pub struct Override {
    /// 1-based position among the `-p` arguments (for "-p argument N").
    pub index: usize,
    /// The pointer, normalised with a leading `/`.
    pub pointer: String,
    /// Its decoded tokens.
    pub tokens: Vec<String>,
    /// The value text after the first `=`.
    pub value: String,
}

impl Override {
    /// Parses `KEY=VALUE`. `index` is 1-based.
    pub fn parse(index: usize, arg: &str) -> Result<Override, Diagnostic> {
        let origin = Origin::Flag { index };
        let Some((key, value)) = arg.split_once('=') else {
            return Err(Diagnostic::error(
                Code::OverrideSyntax,
                "",
                format!("expected KEY=VALUE, found `{}`", first_chars(arg)),
            )
            .with_origin(origin));
        };
        let (ptr, tokens) = parameter_pointer(
            key,
            &origin,
            "the key is empty: name a parameter, e.g. nodeCount=3",
        )?;
        Ok(Override {
            index,
            pointer: ptr,
            tokens,
            value: value.to_string(),
        })
    }
}

/// A parameter named on the command line (`-p` key, `--reset`): a JSON pointer, the leading `/`
/// optional. `empty` is the message when it names nothing.
pub(crate) fn parameter_pointer(
    key: &str,
    origin: &Origin,
    empty: &str,
) -> Result<(String, Vec<String>), Diagnostic> {
    if key.is_empty() || key == "/" {
        return Err(Diagnostic::error(Code::OverrideSyntax, "", empty).with_origin(origin.clone()));
    }
    let ptr = if key.starts_with('/') {
        key.to_string()
    } else {
        format!("/{key}")
    };
    let tokens = pointer::tokens(&ptr).map_err(|e| {
        Diagnostic::error(
            Code::InvalidPointer,
            ptr.clone(),
            format!("invalid JSON pointer: {e}"),
        )
        .with_origin(origin.clone())
        .with_help("escape `~` as `~0` and `/` inside a name as `~1`")
    })?;
    Ok((ptr, tokens))
}

fn first_chars(s: &str) -> String {
    // The value may be a secret: show only the start of an argument that has no `=`.
    let cut: String = s.chars().take(40).collect();
    if cut.len() < s.len() {
        format!("{cut}...")
    } else {
        cut
    }
}

/// Parameter values together with where each came from.
#[derive(Clone, PartialEq)]
pub struct Values {
    value: Value,
    origins: BTreeMap<String, Origin>,
}

/// Values may hold secrets: `Debug` shows only which pointers are set ([`pointer::leaves`]).
impl std::fmt::Debug for Values {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Values")
            .field("pointers", &self.origins.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

impl Default for Values {
    fn default() -> Self {
        Values::new(Value::Object(Map::new()), Origin::Instance)
    }
}

impl Values {
    /// Starts from existing values (an Instance's parameters), all with the same origin.
    pub fn new(value: Value, origin: Origin) -> Values {
        let mut origins = BTreeMap::new();
        origins.insert(String::new(), origin);
        Values { value, origins }
    }

    /// The values as JSON.
    pub fn value(&self) -> &Value {
        &self.value
    }

    /// Takes the JSON out.
    pub fn into_value(self) -> Value {
        self.value
    }

    /// Where the value at `pointer` came from: its own record, else its nearest ancestor's.
    pub fn origin(&self, pointer: &str) -> Origin {
        let mut p = pointer;
        loop {
            if let Some(o) = self.origins.get(p) {
                return o.clone();
            }
            if p.is_empty() {
                return Origin::None;
            }
            p = pointer::parent(p);
        }
    }

    fn forget_within(&mut self, at: &str) {
        self.origins.retain(|p, _| !pointer::is_within(p, at));
    }

    /// Fills every missing value that has a schema default; returns the pointers filled.
    pub fn apply_defaults(&mut self, schema: &ParamSchema) -> Vec<String> {
        let mut filled = Vec::new();
        let mut at = String::new();
        fill_defaults(
            schema,
            schema.root(),
            &mut self.value,
            &mut at,
            0,
            &mut filled,
        );
        for p in &filled {
            self.origins.insert(p.clone(), Origin::Default);
        }
        filled
    }

    /// Applies a `-P` file as an RFC 7396 merge patch. An empty file changes nothing. A file whose
    /// top level is not a mapping replaces the parameters whole (RFC 7396), which validation then
    /// refuses (the parameters are an object).
    pub fn merge_file(&mut self, doc: &Document) {
        if !doc.value().is_null() {
            self.merge(doc.value(), Some(doc));
        }
    }

    /// Applies an RFC 7396 merge patch; values it sets take their origin from `doc` when given.
    pub fn merge(&mut self, patch: &Value, doc: Option<&Document>) {
        json_patch::merge(&mut self.value, patch);
        if !patch.is_object() {
            self.origins.clear();
        }
        if let Some(doc) = doc {
            if !patch.is_object()
                && let Some(loc) = doc.location("")
            {
                self.origins.insert(String::new(), Origin::File(loc));
            }
            let mut at = String::new();
            self.record_patch(doc, patch, &mut at);
        }
    }

    fn record_patch(&mut self, doc: &Document, patch: &Value, at: &mut String) {
        match patch {
            Value::Object(map) => {
                for (k, v) in map {
                    let len = at.len();
                    at.push('/');
                    at.push_str(&pointer::escape(k));
                    if !v.is_object() {
                        self.forget_within(at);
                    }
                    if !v.is_null() {
                        if let Some(loc) = doc.location(at) {
                            self.origins.insert(at.clone(), Origin::File(loc));
                        }
                        self.record_patch(doc, v, at);
                    }
                    at.truncate(len);
                }
            }
            Value::Array(items) => {
                for (i, v) in items.iter().enumerate() {
                    let len = at.len();
                    at.push('/');
                    at.push_str(&i.to_string());
                    if let Some(loc) = doc.location(at) {
                        self.origins.insert(at.clone(), Origin::File(loc));
                    }
                    self.record_patch(doc, v, at);
                    at.truncate(len);
                }
            }
            _ => {}
        }
    }

    /// Applies one `-p` override: checks the pointer against the schema, types the value by the
    /// schema, and sets it.
    pub fn set(&mut self, schema: &ParamSchema, ov: &Override) -> Result<(), Diagnostic> {
        let origin = Origin::Flag { index: ov.index };
        let err = |code: Code, at: &str, msg: String| {
            Diagnostic::error(code, at.to_string(), msg).with_origin(origin.clone())
        };

        // 1. The schema must have this path.
        let mut node = schema.root();
        let mut nodes = Vec::with_capacity(ov.tokens.len());
        for (i, tok) in ov.tokens.iter().enumerate() {
            let at = pointer::from_tokens(&ov.tokens[..=i]);
            if schema.is_array(node) && !schema.is_object(node) {
                if tok == "-" {
                    return Err(err(
                        Code::AppendRefused,
                        &at,
                        "`-` (append) is not allowed: set the whole array instead, so that updates stay idempotent".into(),
                    ));
                }
                if tok.parse::<usize>().is_err() || (tok.len() > 1 && tok.starts_with('0')) {
                    return Err(err(
                        Code::InvalidIndex,
                        &at,
                        format!("`{tok}` is not an array index: use 0, 1, 2, ..."),
                    ));
                }
            }
            let types = schema.types(node);
            if !types.is_empty() && !types.iter().any(|t| *t == "object" || *t == "array") {
                return Err(err(
                    Code::WalkThroughScalar,
                    &pointer::from_tokens(&ov.tokens[..i]),
                    format!(
                        "is a {}, so it has no parameters below it",
                        types.join(" or ")
                    ),
                ));
            }
            match schema.child(node, tok) {
                Child::Unknown => {
                    let mut d = err(
                        Code::UnknownParameter,
                        &at,
                        "is not a parameter of this package".into(),
                    );
                    if let Some(h) = suggest(schema, &ov.tokens[..i], tok) {
                        d = d.with_help(h);
                    }
                    return Err(d);
                }
                c => {
                    node = schema.resolve(c.schema().unwrap_or(node));
                    nodes.push(node);
                }
            }
        }

        // 2. Type the value by the schema at the target. `null` is a value only where the
        // schema allows it; elsewhere the user means the default, which is `--reset`.
        let secret = schema.is_secret(&ov.tokens);
        if let Some(d) = null_refused(schema, node, ov) {
            return Err(d.with_origin(origin));
        }
        let new_value = type_override(schema, node, &ov.value).map_err(|why| {
            let code = match why {
                crate::typing::TextError::NotShape { yaml: Some(_), .. } => Code::OverrideSyntax,
                _ => Code::TypeMismatch,
            };
            err(code, &ov.pointer, why.to_string())
                .with_value(Shown::of(&Value::String(ov.value.clone()), secret))
        })?;

        // 3. Walk the values, creating objects (never arrays) on the way.
        if !self.value.is_object() {
            self.value = Value::Object(Map::new());
        }
        let (last, parents) = ov
            .tokens
            .split_last()
            .expect("Override::parse refuses an empty key");
        let mut cur = &mut self.value;
        for (i, tok) in parents.iter().enumerate() {
            let at = pointer::from_tokens(&ov.tokens[..=i]);
            let child_schema = nodes[i];
            cur = match cur {
                Value::Object(map) => {
                    let slot = map.entry(tok.clone()).or_insert(Value::Null);
                    if slot.is_null() {
                        if schema.is_array(child_schema) && !schema.is_object(child_schema) {
                            return Err(err(
                                Code::MissingArray,
                                &at,
                                "this array has no value yet, so it has no items to set".into(),
                            )
                            .with_help(format!(
                                "set the whole array, e.g. -p {}='[...]'",
                                at.trim_start_matches('/')
                            )));
                        }
                        *slot = Value::Object(Map::new());
                    }
                    slot
                }
                Value::Array(items) => {
                    let n = items.len();
                    let idx = tok.parse::<usize>().unwrap_or(usize::MAX);
                    match items.get_mut(idx) {
                        Some(v) => v,
                        None => return Err(index_error(&err, &at, idx, n)),
                    }
                }
                scalar => {
                    return Err(walk_error(&err, &ov.tokens[..i], scalar));
                }
            };
        }
        let at = &ov.pointer;
        match cur {
            Value::Object(map) => {
                if new_value.is_null() {
                    map.remove(last);
                } else {
                    map.insert(last.clone(), new_value);
                }
            }
            Value::Array(items) => {
                let n = items.len();
                let idx = last.parse::<usize>().unwrap_or(usize::MAX);
                if new_value.is_null() {
                    return Err(err(
                        Code::OverrideSyntax,
                        at,
                        "an array item cannot be removed: set the whole array instead".into(),
                    ));
                }
                match items.get_mut(idx) {
                    Some(slot) => *slot = new_value,
                    None => return Err(index_error(&err, at, idx, n)),
                }
            }
            scalar => return Err(walk_error(&err, parents, scalar)),
        }
        self.forget_within(at);
        self.origins.insert(at.clone(), origin);
        Ok(())
    }
}

/// The refusal of `-p POINTER=null` (or `~`, `Null`, `NULL`) when the schema at the pointer
/// does not allow null; `None` when it does (no `type`, or `null` among its types).
fn null_refused(schema: &ParamSchema, node: &Value, ov: &Override) -> Option<Diagnostic> {
    let types = schema.types(node);
    let text = ov.value.trim();
    if types.is_empty() || types.contains(&"null") || !NULL_TEXTS.contains(&text) {
        return None;
    }
    let key = ov.pointer.trim_start_matches('/');
    let mut help = format!("to go back to the default, use --reset {key}");
    if types.contains(&"string") {
        help.push_str(&format!(
            "; for the text `{text}`, quote it: -p {key}='\"{text}\"'"
        ));
    }
    Some(
        Diagnostic::error(
            Code::NullValue,
            ov.pointer.clone(),
            format!(
                "`{text}` means null, which this parameter does not take (type {})",
                types.join(" or ")
            ),
        )
        .with_help(help),
    )
}

/// The YAML texts of null that `-p` refuses where the schema does not allow null (the empty
/// value keeps its meaning: `-p nodeCount=` removes a non-string value).
const NULL_TEXTS: &[&str] = &["null", "Null", "NULL", "~"];

/// Removes the value at `arg` (a `--reset` pointer, the leading `/` optional, `index` its
/// 1-based position) from `values`, the values a user set, so that the default applies again.
/// The pointer must name a parameter of `schema`; a value that is not set is already the
/// default (nothing to do). An array item cannot be reset alone: arrays are set whole.
///
/// | `--reset` | values before | after |
/// |---|---|---|
/// | `nodeCount` | `{"nodeCount": 5}` | `{}` |
/// | `resources/memory` | `{"resources": {"memory": "2Gi", "cpu": 1}}` | `{"resources": {"cpu": 1}}` |
/// | `topology/0/name` | `{"topology": [{"name": "a", "size": 3}]}` | `{"topology": [{"size": 3}]}` |
/// | `nodeCount` | `{}` | `{}` |
pub fn reset(
    schema: &ParamSchema,
    values: &mut Value,
    index: usize,
    arg: &str,
) -> Result<(), Diagnostic> {
    let origin = Origin::Reset { index };
    let (ptr, tokens) = parameter_pointer(
        arg,
        &origin,
        "the pointer is empty: name a parameter, e.g. --reset nodeCount",
    )?;
    declared(schema, &tokens, &origin)?;
    let Some((last, parents)) = tokens.split_last() else {
        return Ok(());
    };
    match values.pointer_mut(&pointer::from_tokens(parents)) {
        Some(Value::Object(map)) => {
            map.remove(last);
            Ok(())
        }
        Some(Value::Array(_)) => Err(Diagnostic::error(
            Code::OverrideSyntax,
            ptr,
            "an array item cannot be reset alone: arrays are set whole",
        )
        .with_origin(origin)
        .with_help("reset the whole array, or set it with -p")),
        // Not set: the default applies already.
        _ => Ok(()),
    }
}

/// Refuses `tokens` unless `schema` declares every step: `unknown-parameter` at the first
/// step it does not know, with a "did you mean" (`--reset`, `kudo explain`).
pub(crate) fn declared(
    schema: &ParamSchema,
    tokens: &[String],
    origin: &Origin,
) -> Result<(), Diagnostic> {
    for i in 0..tokens.len() {
        if schema.node_at(&tokens[..=i]).is_none() {
            let mut d = Diagnostic::error(
                Code::UnknownParameter,
                pointer::from_tokens(&tokens[..=i]),
                "is not a parameter of this package",
            )
            .with_origin(origin.clone());
            if let Some(h) = suggest(schema, &tokens[..i], &tokens[i]) {
                d = d.with_help(h);
            }
            return Err(d);
        }
    }
    Ok(())
}

fn index_error(
    err: &dyn Fn(Code, &str, String) -> Diagnostic,
    at: &str,
    idx: usize,
    len: usize,
) -> Diagnostic {
    let have = match len {
        0 => "the array is empty".to_string(),
        1 => "the array has 1 item (index 0)".to_string(),
        n => format!("the array has {n} items (indexes 0 to {})", n - 1),
    };
    err(
        Code::IndexOutOfRange,
        at,
        format!("index {idx} does not exist: {have}"),
    )
    .with_help("items are never added one by one: set the whole array to add one")
}

fn walk_error(
    err: &dyn Fn(Code, &str, String) -> Diagnostic,
    scalar_at: &[String],
    scalar: &Value,
) -> Diagnostic {
    let at = pointer::from_tokens(scalar_at);
    err(
        Code::WalkThroughScalar,
        &at,
        format!(
            "is a {}, so it has no parameters below it",
            crate::params::json_type(scalar)
        ),
    )
}

/// Types the text of a `-p` value by the schema node it sets ([`crate::typing`]'s rule). An
/// empty value of a parameter that is not a string is `null`: `-p replicas=` removes the value,
/// which falls back to its default.
pub(crate) fn type_override(
    schema: &ParamSchema,
    node: &Value,
    raw: &str,
) -> Result<Value, crate::typing::TextError> {
    let types = schema.types(node);
    if raw.trim().is_empty() && !types.contains(&"string") {
        return Ok(Value::Null);
    }
    crate::typing::from_text(&types, raw)
}

/// "did you mean /parent/name?" when a declared sibling is within a small edit distance of `bad`
/// (case-insensitive). Used for `-p` keys and for unknown keys in values alike.
pub(crate) fn suggest_sibling(
    schema: &ParamSchema,
    parent: &[String],
    bad: &str,
) -> Option<String> {
    let node = schema.node_at(parent)?;
    let bad_l = bad.to_lowercase();
    schema
        .property_names(node)
        .into_iter()
        .map(|n| (n, strsim::damerau_levenshtein(&n.to_lowercase(), &bad_l)))
        .filter(|(_, d)| *d <= (bad.chars().count() / 3).max(2))
        .min_by_key(|(_, d)| *d)
        .map(|(n, _)| {
            let mut p = parent.to_vec();
            p.push(n.to_string());
            format!("did you mean {}?", pointer::from_tokens(&p))
        })
}

/// "did you mean ...?" for an unknown token under the known prefix `parent`: a close sibling,
/// else the same name deeper in the tree, else the list of parameters at that level.
fn suggest(schema: &ParamSchema, parent: &[String], bad: &str) -> Option<String> {
    // Helm's habit: `-p jvm.heapSize=2G` for `/jvm/heapSize`.
    if bad.contains('.') {
        let mut dotted = parent.to_vec();
        dotted.extend(bad.split('.').map(String::from));
        if schema.node_at(&dotted).is_some() {
            return Some(format!(
                "did you mean {}? -p takes a JSON pointer (`/` between names), not a dotted path",
                pointer::from_tokens(&dotted)
            ));
        }
    }
    if let Some(h) = suggest_sibling(schema, parent, bad) {
        return Some(h);
    }
    let node = schema.node_at(parent)?;
    let bad_l = bad.to_lowercase();
    let close = |name: &str| {
        let d = strsim::damerau_levenshtein(&name.to_lowercase(), &bad_l);
        (d <= (bad.chars().count() / 3).max(2)).then_some(d)
    };
    let siblings = schema.property_names(node);
    // The name exists deeper or elsewhere: `-p datacenterName=x` for `/topology/0/datacenterName`.
    let prefix = pointer::from_tokens(parent);
    let elsewhere: Vec<String> = schema
        .parameter_pointers()
        .into_iter()
        .filter(|p| p.starts_with(&prefix))
        .filter(|p| {
            pointer::tokens(p)
                .ok()
                .and_then(|t| t.last().cloned())
                .is_some_and(|last| close(&last) == Some(0) || last.eq_ignore_ascii_case(bad))
        })
        .take(3)
        .collect();
    if !elsewhere.is_empty() {
        return Some(format!("did you mean {}?", elsewhere.join(" or ")));
    }
    if !siblings.is_empty() {
        let at = if prefix.is_empty() {
            "the top level"
        } else {
            prefix.as_str()
        };
        let mut names: Vec<&str> = siblings.into_iter().take(12).collect();
        names.sort_unstable();
        return Some(format!("parameters at {at}: {}", names.join(", ")));
    }
    None
}

fn fill_defaults(
    schema: &ParamSchema,
    node: &Value,
    value: &mut Value,
    at: &mut String,
    depth: usize,
    filled: &mut Vec<String>,
) {
    if depth > MAX_DEPTH {
        return;
    }
    let node = schema.resolve(node);
    match value {
        Value::Object(map) => {
            for name in schema.property_names(node) {
                if map.contains_key(name) {
                    continue;
                }
                let Some(child) = schema.child(node, name).schema() else {
                    continue;
                };
                let child = schema.resolve(child);
                let len = at.len();
                at.push('/');
                at.push_str(&pointer::escape(name));
                if let Some(d) = child.get("default") {
                    map.insert(name.to_string(), d.clone());
                    filled.push(at.clone());
                } else if schema.is_object(child) && !schema.property_names(child).is_empty() {
                    let mut obj = Value::Object(Map::new());
                    let before = filled.len();
                    fill_defaults(schema, child, &mut obj, at, depth + 1, filled);
                    if filled.len() > before {
                        map.insert(name.to_string(), obj);
                        filled.push(at.clone());
                    }
                }
                at.truncate(len);
            }
            for (k, v) in map.iter_mut() {
                if let Some(child) = schema.child(node, k).schema() {
                    let len = at.len();
                    at.push('/');
                    at.push_str(&pointer::escape(k));
                    fill_defaults(schema, child, v, at, depth + 1, filled);
                    at.truncate(len);
                }
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter_mut().enumerate() {
                if let Some(child) = schema.child(node, &i.to_string()).schema() {
                    let len = at.len();
                    at.push('/');
                    at.push_str(&i.to_string());
                    fill_defaults(schema, child, v, at, depth + 1, filled);
                    at.truncate(len);
                }
            }
        }
        _ => {}
    }
}

/// The inputs of [`effective`]: what the user gave, in order.
#[derive(Debug, Default)]
pub struct Inputs<'a> {
    /// Current values (an Instance's parameters); none for a fresh install.
    pub current: Option<Value>,
    /// `-P` files in order.
    pub files: &'a [Document],
    /// `-p` arguments in order, as written (`KEY=VALUE`).
    pub overrides: &'a [String],
}

/// Builds the effective parameters: current values (or none), defaults, `-P` files in order,
/// `-p` overrides in order, defaults again (for values a patch removed). Returns the values and
/// every problem met on the way; validation is a separate step ([`crate::validate`]).
pub fn effective(schema: &ParamSchema, inputs: &Inputs<'_>) -> (Values, Vec<Diagnostic>) {
    let mut values = match &inputs.current {
        Some(Value::Null) | None => Values::new(Value::Object(Map::new()), Origin::None),
        Some(v) => Values::new(v.clone(), Origin::Instance),
    };
    let mut diags = Vec::new();
    values.apply_defaults(schema);
    for file in inputs.files {
        values.merge_file(file);
        values.apply_defaults(schema);
    }
    for (i, arg) in inputs.overrides.iter().enumerate() {
        match Override::parse(i + 1, arg).and_then(|ov| values.set(schema, &ov)) {
            Ok(()) => {}
            Err(d) => diags.push(d),
        }
    }
    values.apply_defaults(schema);
    (values, diags)
}

/// Values seen through their schema's `writeOnly` marks: the one view through which kudo shows
/// values. Printed parameters leave the secrets out (fed back as a `-P` file, they leave them
/// unchanged); snippets skip the lines that hold them; free text (a diff, a report) has their
/// texts replaced by [`Redacted::MASK`]; `Debug` names pointers only. A single value in a
/// diagnostic is [`crate::Shown`], masked by the same schema marks.
#[derive(Clone, Default)]
pub struct Redacted {
    shown: Value,
    hidden: Vec<String>,
    texts: Vec<String>,
}

impl Redacted {
    /// What stands where a secret was.
    pub const MASK: &'static str = Shown::MASKED;

    /// `value` with every `writeOnly` value of `schema` taken out.
    pub fn new(schema: &ParamSchema, value: &Value) -> Redacted {
        let mut shown = value.clone();
        let mut hidden = Vec::new();
        redact_in(
            schema,
            schema.root(),
            &mut shown,
            &mut String::new(),
            0,
            &mut hidden,
        );
        let texts = hidden
            .iter()
            .filter_map(|p| match value.pointer(p)? {
                Value::String(s) => Some(s.clone()),
                Value::Null => None,
                other => Some(other.to_string()),
            })
            .filter(|t| !t.is_empty())
            .collect();
        Redacted {
            shown,
            hidden,
            texts,
        }
    }

    /// Also masks, in free text, the secrets of `other` (the other side of a diff).
    pub fn and(mut self, schema: &ParamSchema, other: &Value) -> Redacted {
        self.texts.extend(Redacted::new(schema, other).texts);
        self
    }

    /// The value without its secrets.
    pub fn value(&self) -> &Value {
        &self.shown
    }

    /// The pointers of the secrets taken out.
    pub fn hidden(&self) -> &[String] {
        &self.hidden
    }

    /// `text` with every secret's text replaced by [`Redacted::MASK`], the longest first, so
    /// that a secret containing another is masked whole.
    pub fn mask(&self, text: &str) -> String {
        let mut texts: Vec<&str> = self.texts.iter().map(String::as_str).collect();
        texts.sort_by_key(|s| std::cmp::Reverse(s.len()));
        texts
            .into_iter()
            .fold(text.to_string(), |out, s| out.replace(s, Self::MASK))
    }
}

impl std::fmt::Debug for Redacted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Redacted")
            .field("sets", &pointer::leaves(&self.shown))
            .field("hidden", &self.hidden)
            .finish()
    }
}

fn redact_in(
    schema: &ParamSchema,
    node: &Value,
    value: &mut Value,
    at: &mut String,
    depth: usize,
    hidden: &mut Vec<String>,
) {
    if depth > MAX_DEPTH {
        return;
    }
    let node = schema.resolve(node);
    let keys: Vec<String> = match value {
        Value::Object(m) => m.keys().cloned().collect(),
        Value::Array(a) => (0..a.len()).map(|i| i.to_string()).collect(),
        _ => return,
    };
    let mut removed = Vec::new();
    for k in keys {
        let Some(child) = schema.child(node, &k).schema() else {
            continue;
        };
        let child = schema.resolve(child);
        let len = at.len();
        at.push('/');
        at.push_str(&pointer::escape(&k));
        if child.get("writeOnly") == Some(&Value::Bool(true)) {
            hidden.push(at.clone());
            removed.push(k);
        } else {
            let v = match value {
                Value::Object(m) => m.get_mut(&k),
                Value::Array(a) => k.parse::<usize>().ok().and_then(|i| a.get_mut(i)),
                _ => None,
            };
            if let Some(v) = v {
                redact_in(schema, child, v, at, depth + 1, hidden);
            }
        }
        at.truncate(len);
    }
    match value {
        Value::Object(m) => {
            for k in removed {
                m.remove(&k);
            }
        }
        Value::Array(a) => {
            for k in removed {
                if let Some(slot) = k.parse::<usize>().ok().and_then(|i| a.get_mut(i)) {
                    *slot = Value::Null;
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod redacted_tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn redacted_takes_secrets_out_and_masks_them_in_text_longest_first() {
        let schema = ParamSchema::from_value(json!({"type": "object", "properties": {
            "user": {"type": "string"},
            "pass": {"type": "string", "writeOnly": true},
            "pin": {"type": "integer", "writeOnly": true}}}))
        .unwrap();
        let old = json!({"user": "u", "pass": "hunter2", "pin": 1234});
        let new = json!({"user": "u", "pass": "hunter2-new"});
        let r = Redacted::new(&schema, &old).and(&schema, &new);
        assert_eq!(r.value(), &json!({"user": "u"}));
        assert_eq!(r.hidden(), ["/pass", "/pin"]);
        assert_eq!(
            r.mask("pass: hunter2 -> hunter2-new, pin 1234, user u"),
            "pass: <hidden: writeOnly> -> <hidden: writeOnly>, pin <hidden: writeOnly>, user u"
        );
        let debug = format!("{r:?}");
        assert!(
            !debug.contains("hunter2") && !debug.contains("1234"),
            "{debug}"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> ParamSchema {
        ParamSchema::from_value(json!({"type": "object", "properties": {
            "replicas": {"type": "integer", "default": 3},
            "memory": {"type": "string", "default": "1Gi"},
            "nickname": {"type": ["string", "null"]},
            "free": {},
            "resources": {"type": "object", "properties": {
                "cpu": {"type": "integer"}, "memory": {"type": "string"}}},
            "topology": {"type": "array", "items": {"type": "object", "properties": {
                "name": {"type": "string"}, "size": {"type": "integer"}}}}
        }}))
        .unwrap()
    }

    /// `-p ARG` on `{"replicas": 5, "memory": "2Gi", "nickname": "n", "free": 1}`: the values
    /// after, or the code of the refusal.
    fn set(arg: &str) -> Result<Value, Code> {
        let mut v = Values::new(
            json!({"replicas": 5, "memory": "2Gi", "nickname": "n", "free": 1}),
            Origin::Instance,
        );
        let ov = Override::parse(1, arg).map_err(|d| d.code)?;
        v.set(&schema(), &ov).map_err(|d| d.code)?;
        Ok(v.into_value())
    }

    #[test]
    fn null_is_refused_where_the_schema_does_not_allow_it() {
        let kept = |k: &str, v: Value| {
            let mut all = json!({"replicas": 5, "memory": "2Gi", "nickname": "n", "free": 1});
            all[k] = v;
            Ok(all)
        };
        let removed = |k: &str| {
            let mut all = json!({"replicas": 5, "memory": "2Gi", "nickname": "n", "free": 1});
            all.as_object_mut().unwrap().remove(k);
            Ok(all)
        };
        let cases: Vec<(&str, Result<Value, Code>)> = vec![
            ("replicas=null", Err(Code::NullValue)),
            ("replicas=~", Err(Code::NullValue)),
            ("replicas=NULL", Err(Code::NullValue)),
            ("replicas= null ", Err(Code::NullValue)),
            // Issue 23: a string parameter stored the text "null".
            ("memory=null", Err(Code::NullValue)),
            ("memory=Null", Err(Code::NullValue)),
            // The text, quoted, is a string like any other.
            ("memory=\"null\"", kept("memory", json!("null"))),
            ("memory=nullable", kept("memory", json!("nullable"))),
            // The schema allows null: the value goes.
            ("nickname=null", removed("nickname")),
            ("free=null", removed("free")),
            // The empty value of a non-string parameter keeps its meaning.
            ("replicas=", removed("replicas")),
        ];
        for (arg, want) in cases {
            assert_eq!(set(arg), want, "-p {arg}");
        }
    }

    #[test]
    fn a_refused_null_names_the_parameter_its_origin_and_reset() {
        let mut v = Values::default();
        let ov = Override::parse(2, "resources/memory=null").unwrap();
        let d = v.set(&schema(), &ov).unwrap_err();
        assert_eq!(d.code, Code::NullValue);
        assert_eq!(d.pointer.as_str(), "/resources/memory");
        assert_eq!(d.origin, Origin::Flag { index: 2 });
        assert_eq!(
            d.help.as_deref(),
            Some(
                "to go back to the default, use --reset resources/memory; for the text `null`, quote it: -p resources/memory='\"null\"'"
            )
        );
        let ov = Override::parse(1, "replicas=~").unwrap();
        let d = v.set(&schema(), &ov).unwrap_err();
        assert_eq!(
            d.to_string(),
            "/replicas: `~` means null, which this parameter does not take (type integer) (from -p argument 1) [null-value]; to go back to the default, use --reset replicas"
        );
    }

    #[test]
    fn reset_removes_what_the_user_set() {
        let cases: &[(&str, Value, Result<Value, Code>)] = &[
            ("replicas", json!({"replicas": 5}), Ok(json!({}))),
            ("/replicas", json!({"replicas": 5}), Ok(json!({}))),
            (
                "resources/memory",
                json!({"resources": {"memory": "2Gi", "cpu": 1}}),
                Ok(json!({"resources": {"cpu": 1}})),
            ),
            (
                "topology/0/name",
                json!({"topology": [{"name": "a", "size": 3}]}),
                Ok(json!({"topology": [{"size": 3}]})),
            ),
            (
                "topology",
                json!({"topology": [{"name": "a"}]}),
                Ok(json!({})),
            ),
            // Not set: already the default.
            ("replicas", json!({}), Ok(json!({}))),
            ("resources/cpu", json!({}), Ok(json!({}))),
            ("topology/0/name", json!({}), Ok(json!({}))),
            // Refused.
            (
                "replicsa",
                json!({"replicas": 5}),
                Err(Code::UnknownParameter),
            ),
            ("resources/gpu", json!({}), Err(Code::UnknownParameter)),
            (
                "topology/0",
                json!({"topology": [{"name": "a"}]}),
                Err(Code::OverrideSyntax),
            ),
            ("", json!({}), Err(Code::OverrideSyntax)),
            ("a~2b", json!({}), Err(Code::InvalidPointer)),
        ];
        for (arg, before, want) in cases {
            let mut v = before.clone();
            let got = reset(&schema(), &mut v, 1, arg).map(|()| v);
            assert_eq!(got.map_err(|d| d.code), *want, "--reset {arg}");
        }
    }

    #[test]
    fn a_refused_reset_names_its_argument_and_suggests() {
        let mut v = json!({});
        let d = reset(&schema(), &mut v, 3, "replicsa").unwrap_err();
        assert_eq!(
            d.to_string(),
            "/replicsa: is not a parameter of this package (from --reset argument 3) [unknown-parameter]; did you mean /replicas?"
        );
    }
}
