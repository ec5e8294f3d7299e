//! YAML files as JSON values that remember where each value was written.
//!
//! Parameters are JSON (the schema language is JSON-schema), but users write YAML. A
//! [`Document`] is one YAML file parsed by saphyr's parser (YAML 1.2 core schema, so `NO` and
//! `yes` stay strings) into a [`serde_json::Value`], plus an index from each JSON pointer to its
//! line and column, so every diagnostic can say `values.yaml:4:12`.
//!
//! The JSON value and the index are built in one pass over the parser's events (`Builder`):
//! no library turns YAML into JSON values that remember positions, and going through saphyr's
//! own marked tree first doubled the cost of loading a large params.yaml (see BENCHMARKS.md).
//! Aliases are expanded within a node budget (alias bombs are refused) and a key given twice in
//! one mapping is an error unless the caller accepts it.
//!
//! The same walk reads rendered manifests in its second mode (`Schema::Kubernetes`): scalars
//! resolved by YAML 1.1 as Kubernetes resolves them, keys made strings as Kubernetes makes
//! them, merge keys merged, and a block scalar that ends a text with no final line break given
//! none (saphyr adds one; libyaml, which Kubernetes' go-yaml ports, does not). The rules are in
//! [`crate::manifest`], which reads manifests. Parameter files keep the YAML 1.2 core schema.

use std::borrow::Cow;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use saphyr::Scalar;
use saphyr_parser::{
    Event, Marker, Parser, ScalarStyle, ScanError, Span, SpannedEventReceiver, Tag,
};
use serde_json::map::Entry;
use serde_json::{Map, Number, Value};

use crate::scalar::{self, Refusal};
use kudo_diag::diag::Location;
use kudo_diag::error::Error;
use kudo_diag::pointer;

/// Most nodes that alias expansion may produce in one stream (a "billion laughs" guard).
const ALIAS_BUDGET: usize = 100_000;

/// A parsed YAML file: its value and where each part of it was written.
///
/// The location index is built on first use, by parsing the text again: most runs never print
/// a location, and building the index costs as much as building the value.
#[derive(Clone)]
pub struct Document {
    path: PathBuf,
    value: Value,
    text: String,
    allow_duplicates: bool,
    locations: OnceLock<HashMap<String, (usize, usize)>>,
    duplicate_key: Option<(usize, usize, String)>,
}

/// A values file may hold secrets: `Debug` shows its path and which pointers it sets.
impl std::fmt::Debug for Document {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Document")
            .field("path", &self.path)
            .field("sets", &kudo_diag::pointer::leaves(&self.value))
            .finish_non_exhaustive()
    }
}

/// One YAML document as built: its value and the location index.
struct Built {
    value: Value,
    locations: HashMap<String, (usize, usize)>,
    start: (usize, usize),
}

/// How scalars are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Schema {
    /// The YAML 1.2 core schema: parameter files, values, package files.
    Core,
    /// Kubernetes' rules (go-yaml v2, then sigs.k8s.io/yaml): rendered manifests. See
    /// [`crate::manifest`].
    Kubernetes,
}

/// A mapping key read, waiting for its value.
struct Key {
    text: String,
    /// Where it was written.
    at: Marker,
    /// A merge key (`<<`, [`Schema::Kubernetes`] only): its value is merged, not stored.
    merge: bool,
}

/// A collection being built, with what is needed to close it.
enum Frame {
    Seq {
        items: Vec<Value>,
        anchor: usize,
        /// Length of the pointer of this collection (the builder's pointer is truncated to it).
        ptr_len: usize,
    },
    Map {
        map: Map<String, Value>,
        anchor: usize,
        ptr_len: usize,
        /// The key read, waiting for its value.
        key: Option<Key>,
        /// Keys whose value only a merge has set (a key written later overrides them).
        merged: Vec<String>,
    },
}

/// Turns parser events into JSON values and their locations.
struct Builder<'t> {
    /// The text parsed.
    source: &'t str,
    /// The last line of a manifest whose last line had no line break: `source` is the text with
    /// one added, as saphyr's block scalars are wrong at the very end of the input.
    unterminated: Option<&'t str>,
    schema: Schema,
    allow_duplicates: bool,
    /// Whether to build the location index (and the pointers it needs).
    locate: bool,
    stack: Vec<Frame>,
    /// JSON pointer of the node the next event belongs to.
    ptr: String,
    locations: HashMap<String, (usize, usize)>,
    anchors: HashMap<usize, Value>,
    budget: usize,
    doc_start: (usize, usize),
    /// Documents done when the current one started (an empty document adds none).
    docs_before: usize,
    docs: Vec<Built>,
    error: Option<ScanError>,
    /// Where the last scalar of the stream starts when it is a block scalar and no other node
    /// follows it (in characters).
    final_block: Option<usize>,
}

fn at(m: Marker) -> (usize, usize) {
    (m.line(), m.col() + 1)
}

impl<'t> Builder<'t> {
    fn new(source: &'t str, schema: Schema, allow_duplicates: bool, locate: bool) -> Builder<'t> {
        Builder {
            source,
            unterminated: None,
            schema,
            allow_duplicates,
            locate,
            stack: Vec::new(),
            ptr: String::new(),
            locations: HashMap::new(),
            anchors: HashMap::new(),
            budget: ALIAS_BUDGET,
            doc_start: (1, 1),
            docs_before: 0,
            docs: Vec::new(),
            error: None,
            final_block: None,
        }
    }

    /// Before a node starts: when it is a mapping value or a sequence item, extends the pointer
    /// to it and records where it is. `None` when the node is a mapping key.
    fn enter(&mut self, start: Marker, collection: bool) -> Option<()> {
        if !self.locate {
            return match self.stack.last() {
                Some(Frame::Map { key: None, .. }) => None,
                _ => Some(()),
            };
        }
        match self.stack.last() {
            None => {
                self.locations.entry(String::new()).or_insert(at(start));
                Some(())
            }
            Some(Frame::Seq { items, .. }) => {
                let i = items.len();
                self.ptr.push('/');
                self.ptr.push_str(&i.to_string());
                self.locations.insert(self.ptr.clone(), at(start));
                Some(())
            }
            Some(Frame::Map { key: None, .. }) => None,
            Some(Frame::Map {
                key: Some(Key {
                    text, at: key_at, ..
                }),
                ..
            }) => {
                let key_mark = *key_at;
                self.ptr.push('/');
                self.ptr.push_str(&pointer::escape(text));
                // A collection is found by its key; a scalar by its value.
                let pos = if collection { at(key_mark) } else { at(start) };
                self.locations.insert(self.ptr.clone(), pos);
                Some(())
            }
        }
    }

    /// A finished node: stored as the key or value of its mapping, an item of its sequence, or
    /// the document. `alias`: it is an alias's value (a merge takes an alias of a mapping only).
    fn add(
        &mut self,
        value: Value,
        anchor: usize,
        start: Marker,
        alias: bool,
    ) -> Result<(), ScanError> {
        if anchor > 0 {
            self.anchors.insert(anchor, value.clone());
        }
        match self.stack.last_mut() {
            Some(Frame::Map {
                key: key @ None, ..
            }) => {
                let text = match (value, self.schema) {
                    (Value::String(s), _) => s,
                    (Value::Array(_) | Value::Object(_), _) => return Err(key_error(start)),
                    (other, Schema::Core) => other.to_string(),
                    (other, Schema::Kubernetes) => scalar::key_of(other)
                        .map_err(|r| refused(start, &r))?
                        .ok_or_else(|| key_error(start))?,
                };
                *key = Some(Key {
                    text,
                    at: start,
                    merge: false,
                });
                Ok(())
            }
            _ => self.place(value, alias),
        }
    }

    /// Stores a value: in its mapping under the key read, in its sequence, or as the document.
    fn place(&mut self, value: Value, alias: bool) -> Result<(), ScanError> {
        match self.stack.last_mut() {
            None => self.docs.push(Built {
                value,
                locations: std::mem::take(&mut self.locations),
                start: self.doc_start,
            }),
            Some(Frame::Seq { items, ptr_len, .. }) => {
                items.push(value);
                self.ptr.truncate(*ptr_len);
            }
            Some(Frame::Map {
                map,
                key,
                ptr_len,
                merged,
                ..
            }) => {
                self.ptr.truncate(*ptr_len);
                let Some(Key { text, at, merge }) = key.take() else {
                    return Err(key_error(Marker::default()));
                };
                if merge {
                    return merge_into(map, merged, value, alias).map_err(|r| refused(at, &r));
                }
                match map.entry(text) {
                    Entry::Vacant(e) => {
                        e.insert(value);
                    }
                    Entry::Occupied(mut e) => {
                        let only_merged = match merged.iter().position(|k| k == e.key()) {
                            Some(i) => {
                                merged.swap_remove(i);
                                true
                            }
                            None => false,
                        };
                        e.insert(value);
                        if !only_merged && !self.allow_duplicates {
                            return Err(ScanError::new_str(at, "duplicated key in mapping"));
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// A scalar read by Kubernetes' rules: a value, a key, or a merge key.
    fn kubernetes_scalar(
        &mut self,
        mut text: Cow<'_, str>,
        style: ScalarStyle,
        anchor: usize,
        tag: Option<&Cow<'_, Tag>>,
        span: Span,
    ) -> Result<(), ScanError> {
        let start = span.start;
        if let Some(last_line) = self.unterminated
            && matches!(style, ScalarStyle::Literal | ScalarStyle::Folded)
            && span.end.index() == self.source.chars().count()
            && text.ends_with('\n')
            && scalar::line_break_unwritten(self.source, start.index(), last_line)
        {
            text.to_mut().pop();
        }
        let is_key = matches!(self.stack.last(), Some(Frame::Map { key: None, .. }));
        let merge = is_key && scalar::is_merge(&text, style, tag);
        let scalar = scalar::Scalar::read(text, style, tag).map_err(|r| refused(start, &r))?;
        if !is_key {
            let value = scalar.into_value().map_err(|r| refused(start, &r))?;
            self.enter(start, false);
            return self.add(value, anchor, start, false);
        }
        if anchor > 0 {
            // An alias of a key may be a value: it is anchored as one (a non-finite float, which
            // no value may be, as its key text).
            let value = scalar
                .clone()
                .into_value()
                .or_else(|_| scalar.clone().into_key().map(Value::String))
                .map_err(|r| refused(start, &r))?;
            self.anchors.insert(anchor, value);
        }
        let text = scalar.into_key().map_err(|r| refused(start, &r))?;
        if let Some(Frame::Map { key, .. }) = self.stack.last_mut() {
            *key = Some(Key {
                text,
                at: start,
                merge,
            });
        }
        Ok(())
    }

    fn event(&mut self, ev: Event<'_>, span: Span) -> Result<(), ScanError> {
        let start = span.start;
        match ev {
            Event::Nothing | Event::StreamStart | Event::StreamEnd => {}
            Event::DocumentStart(_) => {
                self.doc_start = at(start);
                self.docs_before = self.docs.len();
            }
            Event::DocumentEnd => {
                if self.docs.len() == self.docs_before {
                    // An empty document (`---` alone) is null.
                    if self.locate {
                        self.locations.insert(String::new(), at(start));
                    }
                    self.add(Value::Null, 0, start, false)?;
                }
                self.anchors.clear();
            }
            Event::Scalar(text, style, anchor, tag) => {
                self.final_block = matches!(style, ScalarStyle::Literal | ScalarStyle::Folded)
                    .then(|| start.index());
                match self.schema {
                    Schema::Core => {
                        let value = scalar_value(text, style, tag.as_ref()).ok_or_else(|| {
                            ScanError::new_str(start, "invalid value for its tag")
                        })?;
                        self.enter(start, false);
                        self.add(value, anchor, start, false)?;
                    }
                    Schema::Kubernetes => {
                        self.kubernetes_scalar(text, style, anchor, tag.as_ref(), span)?;
                    }
                }
            }
            Event::Alias(id) => {
                self.final_block = None;
                let value = self.alias(id, start)?;
                let collection = matches!(value, Value::Array(_) | Value::Object(_));
                self.enter(start, collection);
                self.add(value, 0, start, true)?;
            }
            Event::SequenceStart(anchor, _) | Event::MappingStart(anchor, _) => {
                self.final_block = None;
                if self.enter(start, true).is_none() {
                    return Err(key_error(start));
                }
                let ptr_len = self.ptr.len();
                self.stack.push(if matches!(ev, Event::SequenceStart(..)) {
                    Frame::Seq {
                        items: Vec::new(),
                        anchor,
                        ptr_len,
                    }
                } else {
                    Frame::Map {
                        map: Map::new(),
                        anchor,
                        ptr_len,
                        key: None,
                        merged: Vec::new(),
                    }
                });
            }
            Event::SequenceEnd | Event::MappingEnd => {
                let (value, anchor, ptr_len) = match self.stack.pop() {
                    Some(Frame::Seq {
                        items,
                        anchor,
                        ptr_len,
                    }) => (Value::Array(items), anchor, ptr_len),
                    Some(Frame::Map {
                        map,
                        anchor,
                        ptr_len,
                        ..
                    }) => (Value::Object(map), anchor, ptr_len),
                    None => return Err(ScanError::new_str(start, "unbalanced collection end")),
                };
                self.ptr.truncate(ptr_len);
                self.add(value, anchor, start, false)?;
            }
        }
        Ok(())
    }

    /// The value of an anchor, counted against the alias budget.
    fn alias(&mut self, id: usize, mark: Marker) -> Result<Value, ScanError> {
        let Some(value) = self.anchors.get(&id) else {
            return Err(ScanError::new_str(mark, "unknown alias"));
        };
        if !within_budget(value, &mut self.budget) {
            return Err(ScanError::new_str(
                mark,
                "alias expansion exceeded the maximum node budget (possible billion-laughs attack)",
            ));
        }
        Ok(value.clone())
    }
}

impl<'input> SpannedEventReceiver<'input> for Builder<'_> {
    fn on_event(&mut self, ev: Event<'input>, span: Span) {
        if self.error.is_none()
            && let Err(e) = self.event(ev, span)
        {
            self.error = Some(e);
        }
    }
}

fn key_error(m: Marker) -> ScanError {
    ScanError::new_str(m, "mapping keys must be strings, numbers or booleans")
}

fn refused(m: Marker, r: &Refusal) -> ScanError {
    ScanError::new(m, r.to_string())
}

/// A merge key's value merged into `map` as go-yaml v2 merges into a map: a mapping (written or
/// an alias) sets its keys, overriding those before; a written list of mappings merges them
/// last to first, so the first wins. `merged` records the keys only a merge has set.
fn merge_into(
    map: &mut Map<String, Value>,
    merged: &mut Vec<String>,
    value: Value,
    alias: bool,
) -> Result<(), Refusal> {
    let maps = match value {
        Value::Object(m) => vec![m],
        Value::Array(items) if !alias => items
            .into_iter()
            .rev()
            .map(|item| match item {
                Value::Object(m) => Ok(m),
                _ => Err(Refusal::Merge),
            })
            .collect::<Result<_, _>>()?,
        _ => return Err(Refusal::Merge),
    };
    for m in maps {
        for (k, v) in m {
            if let Entry::Vacant(e) = map.entry(k.clone()) {
                e.insert(v);
                merged.push(k);
            } else {
                map.insert(k, v);
            }
        }
    }
    Ok(())
}

/// Counts the nodes of `value` against `budget`; false once it is exhausted.
fn within_budget(value: &Value, budget: &mut usize) -> bool {
    if *budget == 0 {
        return false;
    }
    *budget -= 1;
    match value {
        Value::Array(items) => items.iter().all(|v| within_budget(v, budget)),
        Value::Object(map) => map.values().all(|v| within_budget(v, budget)),
        _ => true,
    }
}

/// A scalar resolved by the YAML 1.2 core schema (quoted: a string; a core tag: that type; an
/// unknown tag: as if untagged). `None` when the text does not fit its core tag (`!!int abc`).
fn scalar_value(
    text: Cow<'_, str>,
    style: saphyr_parser::ScalarStyle,
    tag: Option<&Cow<'_, Tag>>,
) -> Option<Value> {
    Scalar::parse_from_cow_and_metadata(text, style, tag).map(|s| scalar(&s))
}

/// Parses every YAML document of `text`; duplicate keys are an error unless `allow_duplicates`
/// (then the last value wins).
fn load(text: &str, allow_duplicates: bool, locate: bool) -> Result<Vec<Built>, ScanError> {
    let builder = Builder::new(text, Schema::Core, allow_duplicates, locate);
    run(builder).map(|b| b.docs)
}

/// Feeds the parser's events over `builder.source` to `builder`.
fn run(mut builder: Builder<'_>) -> Result<Builder<'_>, ScanError> {
    let mut parser = Parser::new_from_str(builder.source);
    parser.load(&mut builder, true)?;
    if let Some(e) = builder.error.take() {
        return Err(e);
    }
    Ok(builder)
}

/// Parses every document of a manifest stream by Kubernetes' rules ([`crate::manifest`]);
/// duplicate keys are an error. Also says where the stream's last node starts when it is a
/// block scalar (in characters).
///
/// A text whose last line has no line break is parsed with one: saphyr gives a block scalar
/// that ends the input a final line break that was not written (and more, after a blank last
/// line), where libyaml, and so go-yaml, keeps only the line breaks written. The block scalar
/// then loses the line break added, unless it was not its own ([`scalar::line_break_unwritten`]).
pub(crate) fn load_manifests(text: &str) -> Result<(Vec<Value>, Option<usize>), ScanError> {
    let unterminated = !text.is_empty() && !text.ends_with(['\n', '\r']);
    let source: Cow<'_, str> = match unterminated {
        true => format!("{text}\n").into(),
        false => text.into(),
    };
    let mut builder = Builder::new(&source, Schema::Kubernetes, false, false);
    if unterminated {
        builder.unterminated = text.rsplit('\n').next();
    }
    let builder = run(builder)?;
    let docs = builder.docs.into_iter().map(|d| d.value).collect();
    Ok((docs, builder.final_block))
}

pub(crate) fn scan_error(path: &Path, e: &ScanError) -> Error {
    Error::Yaml {
        path: path.to_path_buf(),
        line: e.marker().line(),
        col: e.marker().col() + 1,
        message: e.info().to_string(),
    }
}

impl Document {
    /// Like [`Document::parse`], but a key given twice in a mapping is accepted, the last value
    /// winning, as KUDO's own YAML reader did: some published `operator.yaml` files have one.
    /// [`Document::duplicate_key`] tells where the first one was.
    pub fn parse_lenient(path: &Path, text: &str) -> Result<Document, Error> {
        match Document::parse(path, text) {
            Err(Error::Yaml {
                line, col, message, ..
            }) if message.contains("duplicate") => {
                let mut doc = Document::parse_with(path, text, true)?;
                doc.duplicate_key = Some((line, col, message));
                Ok(doc)
            }
            other => other,
        }
    }

    /// Where a duplicated key was found by [`Document::parse_lenient`]: line, column, message.
    pub fn duplicate_key(&self) -> Option<&(usize, usize, String)> {
        self.duplicate_key.as_ref()
    }

    /// Parses `text`, read from `path`. An empty file is `null`. More than one YAML document in
    /// the stream is an error: parameters and values are one document each.
    pub fn parse(path: &Path, text: &str) -> Result<Document, Error> {
        Document::parse_with(path, text, false)
    }

    fn parse_with(path: &Path, text: &str, allow_duplicates: bool) -> Result<Document, Error> {
        let mut docs = load(text, allow_duplicates, false).map_err(|e| scan_error(path, &e))?;
        if docs.len() > 1 {
            let (line, col) = docs[1].start;
            return Err(Error::Yaml {
                path: path.to_path_buf(),
                line,
                col,
                message: format!("expected one YAML document, found {}", docs.len()),
            });
        }
        Ok(Document {
            path: path.to_path_buf(),
            value: docs.pop().map(|d| d.value).unwrap_or(Value::Null),
            text: text.to_string(),
            allow_duplicates,
            locations: OnceLock::new(),
            duplicate_key: None,
        })
    }

    /// A document built from JSON that was never YAML text (an object read from the API
    /// server): it has no locations.
    pub fn from_value(path: &Path, value: Value) -> Document {
        let locations = OnceLock::new();
        let _ = locations.set(HashMap::new());
        Document {
            path: path.to_path_buf(),
            value,
            text: String::new(),
            allow_duplicates: false,
            locations,
            duplicate_key: None,
        }
    }

    /// Reads and parses the file at `path`.
    pub fn read(path: &Path) -> Result<Document, Error> {
        let text = std::fs::read_to_string(path).map_err(|source| Error::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Document::parse(path, &text)
    }

    /// Reads and parses a values file (`-P`) of at most `max` bytes (the policy's bound is
    /// `kudo_policy::limits::MAX_FILE_BYTES`): a larger file (or an endless one, `/dev/zero`) is
    /// refused after reading that much, with an [`std::io::ErrorKind::FileTooLarge`] error.
    pub fn read_bounded(path: &Path, max: u64) -> Result<Document, Error> {
        use std::io::Read;
        let io = |source| Error::Io {
            path: path.to_path_buf(),
            source,
        };
        let file = std::fs::File::open(path).map_err(io)?;
        let mut bytes = Vec::new();
        file.take(max + 1).read_to_end(&mut bytes).map_err(io)?;
        if bytes.len() as u64 > max {
            return Err(io(std::io::Error::new(
                std::io::ErrorKind::FileTooLarge,
                format!("larger than {max} bytes, the most kudo reads as a values file"),
            )));
        }
        let text = String::from_utf8(bytes).map_err(|e| {
            io(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("not UTF-8 text: {e}"),
            ))
        })?;
        Document::parse(path, &text)
    }

    /// The file this document was read from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The text the document was parsed from.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The document as JSON.
    pub fn value(&self) -> &Value {
        &self.value
    }

    /// Takes the JSON value out.
    pub fn into_value(self) -> Value {
        self.value
    }

    /// Where the value at `pointer` was written: the value itself for scalars, the key for
    /// mappings and sequences (the line a user looks for). Falls back to the nearest ancestor.
    pub fn location(&self, pointer: &str) -> Option<Location> {
        let locations = self.locations.get_or_init(|| {
            // The text parsed once already, so it parses again.
            load(&self.text, self.allow_duplicates, true)
                .ok()
                .and_then(|mut docs| docs.pop())
                .map(|d| d.locations)
                .unwrap_or_default()
        });
        let mut p = pointer;
        loop {
            if let Some(&(line, col)) = locations.get(p) {
                return Some(Location {
                    path: self.path.clone(),
                    line,
                    col,
                });
            }
            if p.is_empty() {
                return None;
            }
            p = pointer::parent(p);
        }
    }
}

/// Converts one resolved YAML scalar to JSON. Non-finite floats have no JSON form and stay text.
fn scalar(s: &Scalar<'_>) -> Value {
    match s {
        Scalar::Null => Value::Null,
        Scalar::Boolean(b) => Value::Bool(*b),
        Scalar::Integer(i) => Value::Number((*i).into()),
        Scalar::FloatingPoint(f) => Number::from_f64(f.into_inner())
            .map(Value::Number)
            .unwrap_or_else(|| Value::String(f.to_string())),
        Scalar::String(s) => Value::String(s.to_string()),
    }
}

/// A short YAML text (a `-p` value) that does not parse: what the parser said, and where in
/// the text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ValueError {
    /// What the parser said.
    pub message: String,
    /// 1-based line and column in the text, when the parser gave them.
    pub at: Option<(usize, usize)>,
}

/// Parses a short YAML text (a `-p` value) into JSON, without positions.
pub fn parse_value(text: &str) -> Result<Value, ValueError> {
    let doc = Document::parse(Path::new("-"), text).map_err(|e| match e {
        Error::Yaml {
            message, line, col, ..
        } => ValueError {
            message,
            at: Some((line, col)),
        },
        other => ValueError {
            message: other.to_string(),
            at: None,
        },
    })?;
    Ok(doc.value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_follow_yaml_1_2_core_schema() {
        let doc = Document::parse(
            Path::new("v.yaml"),
            "a: NO\nb: yes\nc: 3\nd: '3'\ne: 1.5\nf: ~\ng: true\n",
        )
        .unwrap();
        assert_eq!(
            doc.value(),
            &serde_json::json!({"a": "NO", "b": "yes", "c": 3, "d": "3", "e": 1.5, "f": null, "g": true})
        );
    }

    #[test]
    fn locations_point_at_scalars_and_at_keys_of_collections() {
        let text = "top:\n  list:\n    - x\n    - key: v\n  n: 5\n";
        let doc = Document::parse(Path::new("v.yaml"), text).unwrap();
        let at = |p: &str| {
            let l = doc.location(p).unwrap();
            (l.line, l.col)
        };
        assert_eq!(at("/top"), (1, 1));
        assert_eq!(at("/top/list"), (2, 3));
        assert_eq!(at("/top/list/0"), (3, 7));
        assert_eq!(at("/top/list/1/key"), (4, 12));
        assert_eq!(at("/top/n"), (5, 6));
        // unknown pointers fall back to their nearest ancestor
        assert_eq!(at("/top/n/deeper"), (5, 6));
    }

    #[test]
    fn syntax_errors_carry_line_and_column() {
        let err = Document::parse(Path::new("bad.yaml"), "a: 1\nb: [1, 2\n").unwrap_err();
        match err {
            Error::Yaml { line, .. } => assert!(line >= 2, "line {line}"),
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn duplicate_keys_are_refused() {
        let err = Document::parse(Path::new("d.yaml"), "a: 1\na: 2\n").unwrap_err();
        assert!(matches!(err, Error::Yaml { line: 2, .. }), "{err:?}");
    }

    #[test]
    fn lenient_parsing_takes_the_last_duplicate_and_says_where() {
        let doc = Document::parse_lenient(Path::new("op.yaml"), "a: 1\nb: 2\na: 3\n").unwrap();
        assert_eq!(doc.value(), &serde_json::json!({"a": 3, "b": 2}));
        assert_eq!(doc.duplicate_key().map(|d| d.0), Some(3));
    }

    #[test]
    fn alias_bombs_are_refused() {
        let mut text = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..12 {
            let p = i - 1;
            text.push_str(&format!(
                "a{i}: &a{i} [*a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}]\n"
            ));
        }
        assert!(Document::parse(Path::new("bomb.yaml"), &text).is_err());
    }

    #[test]
    fn a_values_file_is_read_up_to_its_limit() {
        const MAX: u64 = 4 * 1024 * 1024;
        let dir = tempfile::tempdir().unwrap();
        let ok = dir.path().join("ok.yaml");
        std::fs::write(&ok, "a: 1\n").unwrap();
        assert_eq!(
            Document::read_bounded(&ok, MAX).unwrap().value(),
            &serde_json::json!({"a": 1})
        );
        let big = dir.path().join("big.yaml");
        let line = "# a comment line of some length\n";
        let n = MAX as usize / line.len() + 1;
        std::fs::write(&big, line.repeat(n)).unwrap();
        let Err(Error::Io { source, .. }) = Document::read_bounded(&big, MAX) else {
            panic!("a file over the limit is refused");
        };
        assert_eq!(source.kind(), std::io::ErrorKind::FileTooLarge);
        assert!(source.to_string().contains("4194304 bytes"), "{source}");
        // An endless file is refused after the limit, not read forever.
        #[cfg(unix)]
        {
            let Err(Error::Io { source, .. }) = Document::read_bounded(Path::new("/dev/zero"), MAX)
            else {
                panic!("/dev/zero is refused");
            };
            assert_eq!(source.kind(), std::io::ErrorKind::FileTooLarge);
        }
    }

    #[test]
    fn aliases_expand_and_are_located_at_the_alias() {
        let text = "base: &b\n  x: 1\n  y: [a, b]\nk: &k name\ncopy: *b\n*k : v\n";
        let doc = Document::parse(Path::new("a.yaml"), text).unwrap();
        assert_eq!(
            doc.value(),
            &serde_json::json!({"base": {"x": 1, "y": ["a", "b"]}, "k": "name",
                "copy": {"x": 1, "y": ["a", "b"]}, "name": "v"})
        );
        let l = doc.location("/copy/x").unwrap();
        assert_eq!((l.line, l.col), (5, 1));
        let l = doc.location("/name").unwrap();
        assert_eq!((l.line, l.col), (6, 6));
    }

    #[test]
    fn documents_empty_several_and_bad_keys() {
        let p = Path::new("s.yaml");
        assert_eq!(Document::parse(p, "").unwrap().value(), &Value::Null);
        assert_eq!(Document::parse(p, "---\n").unwrap().value(), &Value::Null);
        let err = Document::parse(p, "a: 1\n---\nb: 2\n").unwrap_err();
        assert!(
            matches!(&err, Error::Yaml { line: 2, message, .. } if message.contains("found 2")),
            "{err:?}"
        );
        let err = Document::parse(p, "? [a, b]\n: v\n").unwrap_err();
        assert!(matches!(&err, Error::Yaml { message, .. } if message.contains("mapping keys")));
        let err = Document::parse(p, "n: !!int abc\n").unwrap_err();
        assert!(matches!(&err, Error::Yaml { line: 1, .. }), "{err:?}");
        // numbers and booleans as keys become their text; a core tag is honoured
        let doc = Document::parse(p, "1: a\ntrue: b\nc: !!str 3\n").unwrap();
        assert_eq!(
            doc.value(),
            &serde_json::json!({"1": "a", "true": "b", "c": "3"})
        );
    }

    #[test]
    fn debug_names_the_pointers_never_the_values() {
        let doc =
            Document::parse(Path::new("v.yaml"), "auth:\n  password: hunter2-hunter2\n").unwrap();
        let shown = format!("{doc:?}");
        assert!(
            !shown.contains("hunter2") && shown.contains("/auth/password"),
            "{shown}"
        );
    }
}
