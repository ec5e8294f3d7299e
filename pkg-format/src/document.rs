//! YAML files as JSON values that remember where each value was written.
//!
//! Parameters are JSON (the schema language is JSON-schema), but users write YAML. A
//! [`Document`] is one YAML file parsed with saphyr's marked loader (YAML 1.2 core schema, so
//! `NO` and `yes` stay strings, with a budget against alias bombs) into a
//! [`serde_json::Value`], plus an index from each JSON pointer to its line and column, so every
//! diagnostic can say `values.yaml:4:12`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use saphyr::{MarkedYaml, Scalar, YamlData, YamlLoader};
use serde_json::{Map, Number, Value};

use crate::diag::Location;
use crate::error::Error;
use crate::pointer;

/// A parsed YAML file: its value and where each part of it was written.
#[derive(Debug, Clone)]
pub struct Document {
    path: PathBuf,
    value: Value,
    locations: HashMap<String, (usize, usize)>,
    duplicate_key: Option<(usize, usize, String)>,
}

/// Loads every YAML document of `text`; duplicate keys are an error unless `allow_duplicates`
/// (then the last value wins).
fn load(text: &str, allow_duplicates: bool) -> Result<Vec<MarkedYaml<'_>>, saphyr::ScanError> {
    let mut parser = saphyr_parser::Parser::new_from_str(text);
    let mut loader: YamlLoader<'_, MarkedYaml<'_>> = YamlLoader::default();
    loader.allow_duplicate_keys(allow_duplicates);
    parser.load(&mut loader, true)?;
    if let Some(e) = loader.error() {
        return Err(e.clone());
    }
    Ok(loader.into_documents())
}

fn scan_error(path: &Path, e: &saphyr::ScanError) -> Error {
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
        let docs = load(text, allow_duplicates).map_err(|e| scan_error(path, &e))?;
        let mut doc = Document {
            path: path.to_path_buf(),
            value: Value::Null,
            locations: HashMap::new(),
            duplicate_key: None,
        };
        match docs.len() {
            0 => {}
            1 => {
                let mut ptr = String::new();
                doc.value = doc.convert(&docs[0], &mut ptr)?;
            }
            n => {
                let second = &docs[1];
                return Err(Error::Yaml {
                    path: path.to_path_buf(),
                    line: second.span.start.line(),
                    col: second.span.start.col() + 1,
                    message: format!("expected one YAML document, found {n}"),
                });
            }
        }
        Ok(doc)
    }

    /// Parses a stream of YAML documents (a rendered template may hold several). Empty documents
    /// are `null`.
    pub fn parse_stream(path: &Path, text: &str) -> Result<Vec<Value>, Error> {
        let docs = load(text, false).map_err(|e| scan_error(path, &e))?;
        let mut out = Vec::with_capacity(docs.len());
        for d in &docs {
            let mut doc = Document {
                path: path.to_path_buf(),
                value: Value::Null,
                locations: HashMap::new(),
                duplicate_key: None,
            };
            let mut ptr = String::new();
            out.push(doc.convert(d, &mut ptr)?);
        }
        Ok(out)
    }

    /// Reads and parses the file at `path`.
    pub fn read(path: &Path) -> Result<Document, Error> {
        let text = std::fs::read_to_string(path).map_err(|source| Error::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Document::parse(path, &text)
    }

    /// The file this document was read from.
    pub fn path(&self) -> &Path {
        &self.path
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
        let mut p = pointer;
        loop {
            if let Some(&(line, col)) = self.locations.get(p) {
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

    fn convert(&mut self, node: &MarkedYaml<'_>, ptr: &mut String) -> Result<Value, Error> {
        let here = (node.span.start.line(), node.span.start.col() + 1);
        self.locations.entry(ptr.clone()).or_insert(here);
        Ok(match &node.data {
            YamlData::Value(s) => scalar(s),
            YamlData::Representation(text, _, _) => Value::String(text.to_string()),
            YamlData::Tagged(_, inner) => return self.convert(inner, ptr),
            YamlData::Sequence(items) => {
                let mut out = Vec::with_capacity(items.len());
                for (i, item) in items.iter().enumerate() {
                    let len = ptr.len();
                    ptr.push('/');
                    ptr.push_str(&i.to_string());
                    out.push(self.convert(item, ptr)?);
                    ptr.truncate(len);
                }
                Value::Array(out)
            }
            YamlData::Mapping(map) => {
                let mut out = Map::new();
                for (k, v) in map {
                    let key = match &k.data {
                        YamlData::Value(Scalar::String(s)) => s.to_string(),
                        YamlData::Value(s) => match scalar(s) {
                            Value::String(s) => s,
                            other => other.to_string(),
                        },
                        _ => {
                            return Err(Error::Yaml {
                                path: self.path.clone(),
                                line: k.span.start.line(),
                                col: k.span.start.col() + 1,
                                message: "mapping keys must be strings, numbers or booleans"
                                    .to_string(),
                            });
                        }
                    };
                    let len = ptr.len();
                    ptr.push('/');
                    ptr.push_str(&pointer::escape(&key));
                    // A collection is found by its key; a scalar by its value.
                    let key_pos = (k.span.start.line(), k.span.start.col() + 1);
                    if !matches!(v.data, YamlData::Value(_) | YamlData::Representation(..)) {
                        self.locations.insert(ptr.clone(), key_pos);
                    }
                    let value = self.convert(v, ptr)?;
                    ptr.truncate(len);
                    out.insert(key, value);
                }
                Value::Object(out)
            }
            YamlData::Alias(_) | YamlData::BadValue => {
                return Err(Error::Yaml {
                    path: self.path.clone(),
                    line: here.0,
                    col: here.1,
                    message: "invalid value (unknown alias, or alias expansion too large)"
                        .to_string(),
                });
            }
        })
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

/// Parses a short YAML text (a `-p` value) into JSON, without positions.
pub fn parse_value(text: &str) -> Result<Value, String> {
    let doc = Document::parse(Path::new("-"), text).map_err(|e| match e {
        Error::Yaml { message, .. } => message,
        other => other.to_string(),
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
}
