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

use crate::params::{ParamSchema, v1beta2::Child};
use kudo_diag::diag::{Code, Diagnostic, Origin, Shown};
use kudo_diag::pointer;
use kudo_yaml::document::Document;

/// Most nesting levels of a parameter schema the engine follows (filling defaults, migrating,
/// listing): schemas may be recursive through `$ref`. The structural checks, which guard
/// against hostile input rather than recursion, have their own (`kudo_k8s::structural::MAX_DEPTH`).
pub const MAX_DEPTH: usize = 64;

/// One parsed `-p KEY=VALUE` argument: parsed once, where the command line is read (the CLI's
/// argument parser), and carried typed through every crate after that.
#[derive(Clone, PartialEq)]
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

/// The value may be a secret: `Debug` shows the position and the pointer only.
impl std::fmt::Debug for Override {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Override({}: {})", self.index, self.pointer)
    }
}

impl Override {
    /// Where this value came from: `-p` argument N.
    pub fn origin(&self) -> Origin {
        Origin::Flag { index: self.index }
    }

    /// Parses `-p` arguments in order, numbering them from 1; every argument refused.
    pub fn parse_all<S: AsRef<str>>(args: &[S]) -> Result<Vec<Override>, Vec<Diagnostic>> {
        parse_numbered(args, Override::parse)
    }

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
pub fn parameter_pointer(
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

/// One parsed `--reset POINTER` argument (`kudo update`): a parameter whose value the user set
/// goes back to its default ([`reset`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Reset {
    /// 1-based position among the `--reset` arguments.
    pub index: usize,
    /// The pointer, normalised with a leading `/`.
    pub pointer: String,
    /// Its decoded tokens.
    pub tokens: Vec<String>,
}

impl Reset {
    /// Parses a `--reset` pointer (the leading `/` optional). `index` is 1-based.
    pub fn parse(index: usize, arg: &str) -> Result<Reset, Diagnostic> {
        let (pointer, tokens) = parameter_pointer(
            arg,
            &Origin::Reset { index },
            "the pointer is empty: name a parameter, e.g. --reset nodeCount",
        )?;
        Ok(Reset {
            index,
            pointer,
            tokens,
        })
    }

    /// Where this reset came from: `--reset` argument N.
    pub fn origin(&self) -> Origin {
        Origin::Reset { index: self.index }
    }

    /// Parses `--reset` arguments in order, numbering them from 1; every argument refused.
    pub fn parse_all<S: AsRef<str>>(args: &[S]) -> Result<Vec<Reset>, Vec<Diagnostic>> {
        parse_numbered(args, Reset::parse)
    }
}

/// `args` parsed by `parse` with their 1-based positions; every refusal when any.
fn parse_numbered<S: AsRef<str>, T>(
    args: &[S],
    parse: impl Fn(usize, &str) -> Result<T, Diagnostic>,
) -> Result<Vec<T>, Vec<Diagnostic>> {
    let (mut parsed, mut refused) = (Vec::new(), Vec::new());
    for (i, arg) in args.iter().enumerate() {
        match parse(i + 1, arg.as_ref()) {
            Ok(t) => parsed.push(t),
            Err(d) => refused.push(d),
        }
    }
    if refused.is_empty() {
        Ok(parsed)
    } else {
        Err(refused)
    }
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

    /// Forgets the origins of `at` and below. Those pointers all start with `at`, so they sit
    /// in one range of the sorted map: found in logarithmic time, not by a walk over every
    /// origin (which made a `-P` file of N keys cost N² steps).
    fn forget_within(&mut self, at: &str) {
        let within: Vec<String> = self
            .origins
            .range::<str, _>((std::ops::Bound::Included(at), std::ops::Bound::Unbounded))
            .map(|(p, _)| p)
            .take_while(|p| p.starts_with(at))
            .filter(|p| pointer::is_within(p, at))
            .cloned()
            .collect();
        for p in within {
            self.origins.remove(&p);
        }
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
        self.set_from(schema, ov, ov.origin())
    }

    /// [`Values::set`], the value recorded as coming from `origin`: the schema must have the
    /// path ([`schema_path`]), the value is typed by the schema there ([`typed_override`]), then
    /// set ([`Values::place`]).
    fn set_from(
        &mut self,
        schema: &ParamSchema,
        ov: &Override,
        origin: Origin,
    ) -> Result<(), Diagnostic> {
        let err = |code: Code, at: &str, msg: String| {
            Diagnostic::error(code, at.to_string(), msg).with_origin(origin.clone())
        };
        let (node, nodes) = schema_path(schema, ov, &err)?;
        let new_value = typed_override(schema, node, ov, &origin, &err)?;
        self.place(schema, ov, &nodes, new_value, &err)?;
        let at = &ov.pointer;
        self.forget_within(at);
        self.origins.insert(at.clone(), origin);
        Ok(())
    }

    /// Sets `new_value` at `ov`'s path, walking the values and creating objects (never arrays)
    /// on the way; `nodes` are the schema nodes along the path ([`schema_path`]).
    fn place(
        &mut self,
        schema: &ParamSchema,
        ov: &Override,
        nodes: &[&Value],
        new_value: Value,
        err: &dyn Fn(Code, &str, String) -> Diagnostic,
    ) -> Result<(), Diagnostic> {
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
                        None => return Err(index_error(err, &at, idx, n)),
                    }
                }
                scalar => {
                    return Err(walk_error(err, &ov.tokens[..i], scalar));
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
                    None => return Err(index_error(err, at, idx, n)),
                }
            }
            scalar => return Err(walk_error(err, parents, scalar)),
        }
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

/// One `--add POINTER=VALUE` or `--remove POINTER` of `kudo patch` (KEP-33's "Instance updates
/// from the command line"): what `-p` deliberately cannot do, add or remove one array item.
///
/// | edit | values before | after |
/// |---|---|---|
/// | `--add ports=8080` | `{"ports": [80]}` | `{"ports": [80, 8080]}` |
/// | `--add ports/-=8080` | `{"ports": [80]}` | `{"ports": [80, 8080]}` |
/// | `--add ports/0=8080` | `{"ports": [80]}` | `{"ports": [8080, 80]}` |
/// | `--add topology/-={name: dc2, nodes: 3}` | `{"topology": [{...}]}` | a second item |
/// | `--add topology/0/labels={key: k, value: v}` | `{"topology": [{"labels": []}]}` | one label |
/// | `--remove ports/0` | `{"ports": [80, 8080]}` | `{"ports": [8080]}` |
/// | `--remove labels/team` | `{"labels": {"team": "a", "x": "b"}}` | `{"labels": {"x": "b"}}` |
///
/// The edit applies to the effective values (an array that only has its default is edited from
/// the default). `--add` adds array items only (an object member is set with `-p`). Its pointer
/// names either the array, and the item is appended (KEP-33's `--add topology/0/labels=...`),
/// or the new item's place: the array's pointer then an index `0..=len` or `-` to append. The
/// schema tells which: a pointer whose parent is an array names an item's place (so in an array
/// of arrays, `matrix/0` inserts into `matrix`; `matrix/0/-` appends to its first item). The
/// VALUE is YAML typed by the item's schema. `--remove`
/// takes an array item that exists, or an object member that is set (a member with a default
/// then falls back to it). The array that changes is stored whole, as `-p` through an array
/// stores it ([`crate::change`]).
#[derive(Clone, PartialEq)]
pub enum Edit {
    /// `--add POINTER=VALUE`.
    Add {
        /// 1-based position among the `--add` arguments.
        index: usize,
        /// The pointer's decoded tokens (the last one an index or `-`).
        tokens: Vec<String>,
        /// The value text after the first `=`.
        value: String,
    },
    /// `--remove POINTER`.
    Remove {
        /// 1-based position among the `--remove` arguments.
        index: usize,
        /// The pointer's decoded tokens.
        tokens: Vec<String>,
    },
}

/// The value may be a secret: `Debug` shows the pointer only.
impl std::fmt::Debug for Edit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Edit::Add { .. } => write!(f, "Add({})", self.pointer()),
            Edit::Remove { .. } => write!(f, "Remove({})", self.pointer()),
        }
    }
}

impl Edit {
    /// Parses `--add POINTER=VALUE`. `index` is 1-based.
    pub fn add(index: usize, arg: &str) -> Result<Edit, Diagnostic> {
        let origin = Origin::Add { index };
        let Some((key, value)) = arg.split_once('=') else {
            return Err(Diagnostic::error(
                Code::OverrideSyntax,
                "",
                format!("expected POINTER=VALUE, found `{}`", first_chars(arg)),
            )
            .with_origin(origin));
        };
        let (_, tokens) = parameter_pointer(
            key,
            &origin,
            "the pointer is empty: name an array item, e.g. --add ports/-=8080",
        )?;
        Ok(Edit::Add {
            index,
            tokens,
            value: value.to_string(),
        })
    }

    /// Parses `--remove POINTER`. `index` is 1-based.
    pub fn remove(index: usize, arg: &str) -> Result<Edit, Diagnostic> {
        let (_, tokens) = parameter_pointer(
            arg,
            &Origin::Remove { index },
            "the pointer is empty: name an array item or an object member, e.g. --remove ports/0",
        )?;
        Ok(Edit::Remove { index, tokens })
    }

    /// Where the edit came from.
    pub fn origin(&self) -> Origin {
        match self {
            Edit::Add { index, .. } => Origin::Add { index: *index },
            Edit::Remove { index, .. } => Origin::Remove { index: *index },
        }
    }

    /// The pointer's tokens.
    pub fn tokens(&self) -> &[String] {
        match self {
            Edit::Add { tokens, .. } | Edit::Remove { tokens, .. } => tokens,
        }
    }

    /// The pointer, with its leading `/`.
    pub fn pointer(&self) -> String {
        pointer::from_tokens(self.tokens())
    }
}

/// Where a `kudo patch` edit ([`Edit`]) lands: its pointer, split, and the schema node of its
/// parent.
#[derive(Clone)]
struct EditAt<'a> {
    tokens: &'a [String],
    last: &'a String,
    parents: &'a [String],
    at: String,
    parent_at: String,
    origin: Origin,
    /// The schema node of the parent.
    node: &'a Value,
    /// The parent is an array.
    in_array: bool,
}

impl<'a> EditAt<'a> {
    /// Where `e` lands; `Err` when the schema does not declare its parent.
    fn new(schema: &'a ParamSchema, e: &'a Edit) -> Result<EditAt<'a>, Diagnostic> {
        let origin = e.origin();
        let tokens = e.tokens();
        let (last, parents) = tokens
            .split_last()
            .expect("parameter_pointer refuses an empty pointer");
        declared(schema, parents, &origin)?;
        let node = schema
            .node_at(parents)
            .expect("declared() checked every token");
        Ok(EditAt {
            tokens,
            last,
            parents,
            at: pointer::from_tokens(tokens),
            parent_at: pointer::from_tokens(parents),
            origin,
            node,
            in_array: schema.is_array(node) && !schema.is_object(node),
        })
    }

    /// A refusal of the edit.
    fn err(&self, code: Code, msg: String) -> Diagnostic {
        Diagnostic::error(code, self.at.clone(), msg).with_origin(self.origin.clone())
    }

    /// The array index the last token names (`-`, when `append` allows it, is `len`).
    fn index(&self, len: usize, append: bool) -> Result<usize, Diagnostic> {
        let last = self.last;
        let bad = || {
            self.err(
                Code::InvalidIndex,
                format!(
                    "`{last}` is not an array index: use 0, 1, 2, ...{}",
                    if append { " or - (append)" } else { "" }
                ),
            )
        };
        if append && last == "-" {
            return Ok(len);
        }
        if last.len() > 1 && last.starts_with('0') {
            return Err(bad());
        }
        last.parse::<usize>().map_err(|_| bad())
    }
}

impl Values {
    /// Applies one `kudo patch` edit ([`Edit`]) to the values.
    pub fn edit(&mut self, schema: &ParamSchema, e: &Edit) -> Result<(), Diagnostic> {
        let here = EditAt::new(schema, e)?;
        match e {
            Edit::Add { value, .. } => self.add_item(schema, &here, value),
            Edit::Remove { .. } if here.in_array => self.remove_item(schema, &here),
            Edit::Remove { .. } => self.remove_member(schema, &here),
        }
    }

    /// `--add`: inserts an item into the array the edit names.
    fn add_item(
        &mut self,
        schema: &ParamSchema,
        here: &EditAt<'_>,
        value: &str,
    ) -> Result<(), Diagnostic> {
        let EditAt {
            tokens,
            parents,
            node,
            in_array,
            ..
        } = *here;
        let (at, parent_at, origin) = (&here.at, &here.parent_at, &here.origin);
        let err = |code, msg| here.err(code, msg);
        let index = |len, append| here.index(len, append);
        // Which array, and where in it. `ARRAY/INDEX` and `ARRAY/-` insert (an item's
        // pointer: the parent is the array); a pointer naming an array appends to it
        // (KEP-33's form). An array of arrays reads `ARRAYS/0` as the item's pointer:
        // the inner array is appended to with `ARRAYS/0/-`.
        let (array, node, append) = if in_array {
            (parents, node, false)
        } else {
            declared(schema, tokens, origin)?;
            match schema.node_at(tokens) {
                Some(whole) if schema.is_array(whole) && !schema.is_object(whole) => {
                    (tokens, whole, true)
                }
                _ => {
                    return Err(err(
                        Code::OverrideSyntax,
                        format!(
                            "is not an array, and neither is {}: --add adds array items",
                            if parent_at.is_empty() {
                                "the top level"
                            } else {
                                parent_at
                            }
                        ),
                    )
                    .with_help(format!(
                        "set an object member with -p {}=VALUE",
                        at.trim_start_matches('/')
                    )));
                }
            }
        };
        let array_at = pointer::from_tokens(array);
        let mut items = match self.value.pointer(&array_at) {
            Some(Value::Array(items)) => items.clone(),
            _ => Vec::new(),
        };
        let idx = if append {
            items.len()
        } else {
            index(items.len(), true)?
        };
        if idx > items.len() {
            return Err(err(
                Code::IndexOutOfRange,
                format!(
                    "index {idx} is past the end: the array has {} item(s); insert at 0 to {}, or append with -",
                    items.len(),
                    items.len()
                ),
            ));
        }
        let mut item_tokens = array.to_vec();
        item_tokens.push("0".into());
        let secret = schema.may_hold_secret(&item_tokens);
        let item_node = schema.node_at(&item_tokens).unwrap_or(node);
        let item = type_override(schema, item_node, value).map_err(|why| {
            err(Code::TypeMismatch, why.to_string())
                .with_value(Shown::of(&Value::String(value.to_string()), secret))
        })?;
        if item.is_null() {
            return Err(err(
                Code::OverrideSyntax,
                "the value is empty: give the item to add".into(),
            ));
        }
        items.insert(idx, item);
        self.replace(schema, array, Value::Array(items), origin.clone())
    }

    /// `--remove` of an array item.
    fn remove_item(&mut self, schema: &ParamSchema, here: &EditAt<'_>) -> Result<(), Diagnostic> {
        let (parents, parent_at, origin) = (here.parents, &here.parent_at, &here.origin);
        let err = |code, msg| here.err(code, msg);
        let index = |len, append| here.index(len, append);
        let items = match self.value.pointer(parent_at) {
            Some(Value::Array(items)) => Some(items.clone()),
            _ => None,
        };
        let Some(mut items) = items else {
            return Err(err(
                Code::NothingToRemove,
                format!("{parent_at} has no value, so it has no item to remove"),
            ));
        };
        let idx = index(items.len(), false)?;
        if idx >= items.len() {
            let have = match items.len() {
                0 => "the array is empty".to_string(),
                1 => "the array has 1 item (index 0)".to_string(),
                n => format!("the array has {n} items (indexes 0 to {})", n - 1),
            };
            return Err(err(
                Code::NothingToRemove,
                format!("index {idx} does not exist: {have}"),
            ));
        }
        items.remove(idx);
        self.replace(schema, parents, Value::Array(items), origin.clone())
    }

    /// `--remove` of an object member.
    fn remove_member(&mut self, schema: &ParamSchema, here: &EditAt<'_>) -> Result<(), Diagnostic> {
        let (tokens, last) = (here.tokens, here.last);
        let (at, parent_at, origin) = (&here.at, &here.parent_at, &here.origin);
        let err = |code, msg| here.err(code, msg);
        declared(schema, tokens, origin)?;
        match self.value.pointer_mut(parent_at) {
            Some(Value::Object(map)) if map.contains_key(last) => {
                map.remove(last);
                self.forget_within(at);
                Ok(())
            }
            _ => Err(err(
                Code::NothingToRemove,
                "is not set, so there is nothing to remove".into(),
            )),
        }
    }

    /// Sets the whole value at `tokens` as `-p` would, recorded as coming from `origin`.
    fn replace(
        &mut self,
        schema: &ParamSchema,
        tokens: &[String],
        value: Value,
        origin: Origin,
    ) -> Result<(), Diagnostic> {
        let ov = Override {
            index: 0,
            pointer: pointer::from_tokens(tokens),
            tokens: tokens.to_vec(),
            value: serde_json::to_string(&value).unwrap_or_default(),
        };
        self.set_from(schema, &ov, origin)
    }
}

/// Removes the value at a `--reset` pointer ([`Reset`]) from `values`, the values a user set, so that the default applies again.
/// The pointer must name a parameter of `schema`; a value that is not set is already the
/// default (nothing to do). An array item cannot be reset alone: arrays are set whole.
///
/// | `--reset` | values before | after |
/// |---|---|---|
/// | `nodeCount` | `{"nodeCount": 5}` | `{}` |
/// | `resources/memory` | `{"resources": {"memory": "2Gi", "cpu": 1}}` | `{"resources": {"cpu": 1}}` |
/// | `topology/0/name` | `{"topology": [{"name": "a", "size": 3}]}` | `{"topology": [{"size": 3}]}` |
/// | `nodeCount` | `{}` | `{}` |
pub fn reset(schema: &ParamSchema, values: &mut Value, r: &Reset) -> Result<(), Diagnostic> {
    let origin = r.origin();
    let (ptr, tokens) = (r.pointer.clone(), &r.tokens);
    declared(schema, tokens, &origin)?;
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
/// step it does not know, with a "did you mean" (`--reset`, `kudo patch`, `kudo explain`).
pub fn declared(
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

/// The schema nodes along `ov`'s path, and the node at its end: `Err` when the schema does not
/// have the path (an unknown parameter, a scalar walked through, `-` or a bad array index).
fn schema_path<'s>(
    schema: &'s ParamSchema,
    ov: &Override,
    err: &dyn Fn(Code, &str, String) -> Diagnostic,
) -> Result<(&'s Value, Vec<&'s Value>), Diagnostic> {
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

    Ok((node, nodes))
}

/// `ov`'s value typed by the schema node at its target. `null` is a value only where the
/// schema allows it; elsewhere the user means the default, which is `--reset`.
fn typed_override(
    schema: &ParamSchema,
    node: &Value,
    ov: &Override,
    origin: &Origin,
    err: &dyn Fn(Code, &str, String) -> Diagnostic,
) -> Result<Value, Diagnostic> {
    let secret = schema.may_hold_secret(&ov.tokens);
    if let Some(d) = null_refused(schema, node, ov) {
        return Err(d.with_origin(origin.clone()));
    }
    type_override(schema, node, &ov.value).map_err(|why| {
        let code = match why {
            crate::typing::TextError::NotShape { yaml: Some(_), .. } => Code::OverrideSyntax,
            _ => Code::TypeMismatch,
        };
        err(code, &ov.pointer, why.to_string())
            .with_value(Shown::of(&Value::String(ov.value.clone()), secret))
    })
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
pub fn suggest_sibling(schema: &ParamSchema, parent: &[String], bad: &str) -> Option<String> {
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
    /// `-p` arguments in order ([`Override`]).
    pub overrides: &'a [Override],
}

/// Reads the `-P` files in order, each bounded by [`crate::limits`]: a file that cannot be
/// read or parsed, or is larger than kudo takes, becomes a diagnostic naming it (file:line for
/// YAML syntax), and the files that could be read are returned all the same.
pub fn read_files(paths: &[std::path::PathBuf]) -> (Vec<Document>, Vec<Diagnostic>) {
    use kudo_diag::diag::Location;
    let mut docs = Vec::new();
    let mut diags = Vec::new();
    for f in paths {
        let unreadable = |code, e: &dyn std::fmt::Display| {
            Diagnostic::error(
                code,
                "",
                format!("-P {}: cannot read the values file: {e}", f.display()),
            )
        };
        match Document::read_bounded(f, crate::limits::MAX_FILE_BYTES) {
            Ok(d) => {
                let origin = Origin::File(Location {
                    path: f.clone(),
                    line: 1,
                    col: 1,
                });
                let what = format!("the values of -P {}", f.display());
                match crate::limits::refuse(d.value(), &what, origin) {
                    Ok(_) => docs.push(d),
                    Err(too_large) => diags.push(too_large),
                }
            }
            Err(kudo_diag::Error::Yaml {
                path,
                line,
                col,
                message,
            }) => diags.push(
                Diagnostic::error(Code::YamlSyntax, "", format!("not valid YAML: {message}"))
                    .with_origin(Origin::File(Location { path, line, col })),
            ),
            Err(kudo_diag::Error::Io { source, .. }) => {
                let code = match source.kind() {
                    std::io::ErrorKind::NotFound => Code::FileNotFound,
                    std::io::ErrorKind::FileTooLarge => Code::TooLarge,
                    _ => Code::FileUnreadable,
                };
                diags.push(unreadable(code, &source));
            }
            Err(e) => diags.push(unreadable(Code::FileUnreadable, &e)),
        }
    }
    (docs, diags)
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
    for ov in inputs.overrides {
        if let Err(d) = values.set(schema, ov) {
            diags.push(d);
        }
    }
    values.apply_defaults(schema);
    (values, diags)
}

/// Values seen through their schema's `writeOnly` marks: the one view through which kudo shows
/// values. Printed parameters leave the secrets out (fed back as a `-P` file, they leave them
/// unchanged); snippets skip the lines that hold them; free text (a diff, a report) has their
/// texts replaced by [`Redacted::MASK`]; `Debug` names pointers only. A single value in a
/// diagnostic is [`kudo_diag::Shown`], masked by the same schema marks.
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

    /// Shortest secret text masked inside a longer string by [`Redacted::mask_value`]: a
    /// shorter one (`p`) is masked where it is a whole value only, or every `p` of a document
    /// would go.
    pub const MIN_INNER: usize = 4;

    /// `value` (a document: a rendered object, say) with each string that is a secret's text
    /// replaced by [`Redacted::MASK`], and each secret text of [`Redacted::MIN_INNER`] characters
    /// or more masked inside longer strings, keys included.
    pub fn mask_value(&self, value: &mut Value) {
        let mut texts: Vec<&str> = self.texts.iter().map(String::as_str).collect();
        texts.sort_by_key(|s| std::cmp::Reverse(s.len()));
        let masked = |s: &str| -> Option<String> {
            if texts.contains(&s) {
                return Some(Self::MASK.to_string());
            }
            let inner = texts
                .iter()
                .filter(|t| t.chars().count() >= Self::MIN_INNER);
            let out = inner.fold(s.to_string(), |out, t| out.replace(t, Self::MASK));
            (out != s).then_some(out)
        };
        match value {
            Value::String(s) => {
                if let Some(m) = masked(s) {
                    *s = m;
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|v| self.mask_value(v)),
            Value::Object(map) => {
                let old = std::mem::take(map);
                for (k, mut v) in old {
                    self.mask_value(&mut v);
                    map.insert(masked(&k).unwrap_or(k), v);
                }
            }
            _ => {}
        }
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

/// `top` over `base`: objects merge member by member, any other value of `top` wins. Unlike an
/// RFC 7396 merge, a `null` in `top` is a value.
pub(crate) fn overlay(base: &Value, top: &Value) -> Value {
    match (base, top) {
        (Value::Object(b), Value::Object(t)) => {
            let mut out = b.clone();
            for (k, v) in t {
                let merged = match out.get(k) {
                    Some(under) => overlay(under, v),
                    None => v.clone(),
                };
                out.insert(k.clone(), merged);
            }
            Value::Object(out)
        }
        _ => top.clone(),
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
mod read_files_tests {
    use super::*;

    #[test]
    fn the_files_that_read_are_kept_and_each_other_is_a_diagnostic_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let good = dir.path().join("good.yaml");
        std::fs::write(&good, "replicas: 3\n").unwrap();
        let bad = dir.path().join("bad.yaml");
        std::fs::write(&bad, "a: 1\nb: [\n").unwrap();
        let missing = dir.path().join("missing.yaml");
        let (docs, diags) = read_files(&[good, bad.clone(), missing]);
        assert_eq!(docs.len(), 1);
        assert_eq!(docs[0].value(), &serde_json::json!({"replicas": 3}));
        assert_eq!(diags.len(), 2, "{diags:?}");
        assert_eq!(diags[0].code, Code::YamlSyntax);
        assert!(matches!(&diags[0].origin, Origin::File(l) if l.path == bad && l.line >= 2));
        assert_eq!(diags[1].code, Code::FileNotFound);
        assert!(
            diags[1].message.contains("missing.yaml"),
            "{}",
            diags[1].message
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

    /// `kudo patch` edits (`+ARG` adds, `-ARG` removes) on `values`: the values after, or the
    /// code of the first refusal.
    fn patched(values: Value, edits: &[&str]) -> Result<Value, Code> {
        let schema = ParamSchema::from_value(json!({"type": "object", "properties": {
            "ports": {"type": "array", "items": {"type": "integer"}, "default": [80]},
            "labels": {"type": "object", "additionalProperties": {"type": "string"}},
            "replicas": {"type": "integer", "default": 3},
            "topology": {"type": "array", "items": {"type": "object", "properties": {
                "name": {"type": "string"}, "size": {"type": "integer", "default": 1},
                "tags": {"type": "array", "items": {"type": "string"}}}}},
            "matrix": {"type": "array", "items": {"type": "array", "items": {"type": "integer"}}}
        }}))
        .unwrap();
        let mut v = Values::new(values, Origin::Instance);
        v.apply_defaults(&schema);
        for (i, e) in edits.iter().enumerate() {
            let edit = match e.split_at(1) {
                ("+", arg) => Edit::add(i + 1, arg),
                (_, arg) => Edit::remove(i + 1, arg),
            }
            .map_err(|d| d.code)?;
            v.edit(&schema, &edit).map_err(|d| d.code)?;
        }
        v.apply_defaults(&schema);
        Ok(v.into_value())
    }

    #[test]
    fn patch_adds_and_removes_array_items_and_members() {
        let ports = |v: Result<Value, Code>| v.map(|v| v["ports"].clone());
        // From the default, appended, inserted, typed by the item schema.
        assert_eq!(
            ports(patched(json!({}), &["+ports/-=8080"])),
            Ok(json!([80, 8080]))
        );
        assert_eq!(
            ports(patched(json!({}), &["+/ports/0=8080"])),
            Ok(json!([8080, 80]))
        );
        assert_eq!(
            ports(patched(
                json!({}),
                &["+ports/1=1", "+ports/-=2", "-ports/0"]
            )),
            Ok(json!([1, 2]))
        );
        assert_eq!(ports(patched(json!({}), &["-ports/0"])), Ok(json!([])));
        // An array with no value yet is empty; an object item gets its defaults.
        assert_eq!(
            patched(json!({}), &["+topology/-={name: dc2}"]).map(|v| v["topology"].clone()),
            Ok(json!([{"name": "dc2", "size": 1}]))
        );
        assert_eq!(
            patched(json!({"labels": {"a": "1", "b": "2"}}), &["-labels/a"])
                .map(|v| v["labels"].clone()),
            Ok(json!({"b": "2"}))
        );
        // A member with a default falls back to it.
        assert_eq!(
            patched(json!({"replicas": 5}), &["-replicas"]).map(|v| v["replicas"].clone()),
            Ok(json!(3))
        );
        // Refusals, each with its code.
        assert_eq!(
            patched(json!({}), &["+ports/-=eighty"]),
            Err(Code::TypeMismatch)
        );
        assert_eq!(
            patched(json!({}), &["+ports/2=1"]),
            Err(Code::IndexOutOfRange)
        );
        assert_eq!(patched(json!({}), &["+ports/x=1"]), Err(Code::InvalidIndex));
        assert_eq!(
            patched(json!({}), &["+ports/-="]),
            Err(Code::OverrideSyntax)
        );
        assert_eq!(patched(json!({}), &["+ports"]), Err(Code::OverrideSyntax));
        assert_eq!(
            patched(json!({}), &["+labels/a=x"]),
            Err(Code::OverrideSyntax)
        );
        assert_eq!(
            patched(json!({}), &["-ports/1"]),
            Err(Code::NothingToRemove)
        );
        assert_eq!(patched(json!({}), &["-ports/-"]), Err(Code::InvalidIndex));
        assert_eq!(
            patched(json!({}), &["-topology/0"]),
            Err(Code::NothingToRemove)
        );
        assert_eq!(
            patched(json!({}), &["-labels/a"]),
            Err(Code::NothingToRemove)
        );
        assert_eq!(
            patched(json!({}), &["-prots/0"]),
            Err(Code::UnknownParameter)
        );
    }

    /// Issue 33: KEP-33's own example, `--add topology/0/labels={key: NewKey, ...}`, names the
    /// array and appends to it; the index and `-` forms keep inserting. The schema decides: a
    /// pointer whose parent is an array is an item's (insert), else one naming an array appends.
    #[test]
    fn patch_appends_to_the_array_a_pointer_names_as_kep_33_writes_it() {
        let dc = || json!({"topology": [{"name": "dc1", "tags": ["a"]}]});
        let cases: &[(Value, &str, Result<Value, Code>)] = &[
            // KEP-33's form: the pointer names the array
            (dc(), "+topology/0/tags=b", Ok(json!(["a", "b"]))),
            (dc(), "+/topology/0/tags=b", Ok(json!(["a", "b"]))),
            (
                json!({"topology": [{"name": "dc1"}]}),
                "+topology/0/tags=b",
                Ok(json!(["b"])),
            ),
            // the index and `-` forms insert, as before
            (dc(), "+topology/0/tags/0=b", Ok(json!(["b", "a"]))),
            (dc(), "+topology/0/tags/-=b", Ok(json!(["a", "b"]))),
            (dc(), "+topology/0/tags/1=b", Ok(json!(["a", "b"]))),
            // the item is typed by the item's schema
            (dc(), "+topology/0/tags=123", Ok(json!(["a", "123"]))),
            // refused, each with its code
            (dc(), "+topology/0/size=2", Err(Code::OverrideSyntax)),
            (dc(), "+topology/0=x", Err(Code::TypeMismatch)),
            (dc(), "+topology/0/tgas=b", Err(Code::UnknownParameter)),
            (dc(), "+topology/1/tags=b", Err(Code::IndexOutOfRange)),
            (dc(), "+topology/0/tags/2=b", Err(Code::IndexOutOfRange)),
            // an empty value of a string item is the empty string (as with -p)
            (dc(), "+topology/0/tags=", Ok(json!(["a", ""]))),
        ];
        for (values, edit, want) in cases {
            let got = patched(values.clone(), &[edit]).map(|v| v["topology"][0]["tags"].clone());
            assert_eq!(&got, want, "edit: {edit} on {values}");
        }
        // a top-level array: from its default
        assert_eq!(
            patched(json!({}), &["+ports=8080"]).map(|v| v["ports"].clone()),
            Ok(json!([80, 8080]))
        );
        // an array of arrays: `matrix/0` is the outer array's item (insert), `matrix/0/-` and
        // `matrix/0/1` edit the inner one
        let matrix =
            |edit: &str| patched(json!({"matrix": [[5]]}), &[edit]).map(|v| v["matrix"].clone());
        assert_eq!(matrix("+matrix/0=[1]"), Ok(json!([[1], [5]])));
        assert_eq!(matrix("+matrix=[1]"), Ok(json!([[5], [1]])));
        assert_eq!(matrix("+matrix/0/-=1"), Ok(json!([[5, 1]])));
        assert_eq!(matrix("+matrix/0/1=1"), Ok(json!([[5, 1]])));
        // not an array, nor an array's item
        for edit in ["+replicas=4", "+labels=x"] {
            assert_eq!(
                patched(json!({}), &[edit]),
                Err(Code::OverrideSyntax),
                "{edit}"
            );
        }
    }

    #[test]
    fn a_refused_edit_is_placed_at_its_pointer_and_says_which_array_it_looked_for() {
        let schema = ParamSchema::from_value(json!({"type": "object", "properties": {
            "topology": {"type": "array", "items": {"type": "object", "properties": {
                "size": {"type": "integer"}}}}}}))
        .unwrap();
        let d = Values::new(json!({"topology": [{"size": 1}]}), Origin::Instance)
            .edit(&schema, &Edit::add(1, "topology/0/size=2").unwrap())
            .unwrap_err();
        assert_eq!(d.code, Code::OverrideSyntax);
        assert_eq!(d.pointer, "/topology/0/size");
        assert_eq!(d.origin, Origin::Add { index: 1 });
        assert_eq!(
            d.message,
            "is not an array, and neither is /topology/0: --add adds array items"
        );
        assert_eq!(
            d.help.as_deref(),
            Some("set an object member with -p topology/0/size=VALUE")
        );
    }

    #[test]
    fn a_refused_edit_names_its_argument_and_masks_a_secret() {
        let schema = ParamSchema::from_value(json!({"type": "object", "properties": {
            "keys": {"type": "array", "writeOnly": true, "items": {"type": "integer"}}}}))
        .unwrap();
        let mut v = Values::default();
        let d = v
            .edit(&schema, &Edit::add(2, "keys/-=hunter2").unwrap())
            .unwrap_err();
        assert_eq!(d.origin, Origin::Add { index: 2 });
        assert_eq!(d.origin.to_string(), "--add argument 2");
        assert!(!format!("{d}").contains("hunter2"), "{d}");
        assert!(!format!("{:?}", Edit::add(1, "keys/-=hunter2").unwrap()).contains("hunter2"));
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
            let got = Reset::parse(1, arg)
                .and_then(|r| reset(&schema(), &mut v, &r))
                .map(|()| v);
            assert_eq!(got.map_err(|d| d.code), *want, "--reset {arg}");
        }
    }

    #[test]
    fn a_refused_reset_names_its_argument_and_suggests() {
        let mut v = json!({});
        let d = reset(&schema(), &mut v, &Reset::parse(3, "replicsa").unwrap()).unwrap_err();
        assert_eq!(
            d.to_string(),
            "/replicsa: is not a parameter of this package (from --reset argument 3) [unknown-parameter]; did you mean /replicas?"
        );
    }
}
