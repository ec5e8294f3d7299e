//! Changing values in a YAML file in place, keeping its comments, key order and layout.
//!
//! Users keep Instances (and params.yaml) in git; a tool that rewrites the whole file destroys
//! their comments and makes every diff noisy. [`edits_between`] computes the smallest set of
//! [`Edit`]s that turn one value into another (arrays are replaced whole, as merge patches
//! replace them), and [`apply`] performs them with `yaml-edit`'s lossless syntax tree, then
//! parses the result again and refuses it unless it holds exactly the expected value: an edit
//! can never silently produce something else.

use std::path::Path;
use std::str::FromStr;

use serde_json::Value;
use yaml_edit::path::YamlPath;
use yaml_edit::{ScalarValue, YamlValue};

use crate::document::Document;
use kudo_diag::pointer::{self, Arrays};

/// One change to a YAML document, at a path of mapping keys (never inside an array).
#[derive(Debug, Clone, PartialEq)]
pub enum Edit {
    /// Sets the value at the path, creating the mappings on the way.
    Set {
        /// Mapping keys from the document root.
        path: Vec<String>,
        /// The new value.
        value: Value,
    },
    /// Removes the key at the path.
    Remove {
        /// Mapping keys from the document root.
        path: Vec<String>,
    },
    /// Appends an item to the sequence at the path (which must exist).
    Push {
        /// Mapping keys from the document root to the sequence.
        path: Vec<String>,
        /// The new item; an object keeps its key order.
        value: Value,
    },
}

/// The edits that turn `old` into `new` under `base` (the keys leading to them in the file,
/// e.g. `["spec", "parameters"]`). Objects are edited key by key; anything else, arrays
/// included, is set whole.
pub fn edits_between(base: &[&str], old: Option<&Value>, new: Option<&Value>) -> Vec<Edit> {
    let mut out = Vec::new();
    let base = pointer::from_tokens(base);
    pointer::diff(&base, old, new, Arrays::Whole, &mut |at, _, _, new| {
        let path = pointer::tokens(at).expect("the walker writes valid pointers");
        out.push(match new {
            Some(n) => Edit::Set {
                path,
                value: n.clone(),
            },
            None => Edit::Remove { path },
        })
    });
    out
}

/// Why an edit cannot be made; nothing is written then.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EditError {
    /// The text is not YAML the editor reads.
    #[error("{0}")]
    Syntax(String),
    /// The edit at `path` cannot be made.
    #[error("cannot {action} {}: {reason}", pointer::from_tokens(path))]
    At {
        /// What the edit does there (`set`, `remove`, `find the list`, ...).
        action: &'static str,
        /// Mapping keys from the document root.
        path: Vec<String>,
        /// Why not.
        reason: String,
    },
    /// The key at the path holds something else than a list.
    #[error("{} is not a list", pointer::from_tokens(.0))]
    NotAList(Vec<String>),
    /// The edited text would not parse.
    #[error("the edited file would not parse: {0}")]
    Unparsable(String),
    /// The edited text would not hold what the edits mean.
    #[error("the edited file would not hold the expected values; nothing was written")]
    Mismatch,
}

/// Applies `edits` to the YAML `text` (one document) and returns the new text. Fails, with a
/// message, when the file cannot be edited that way or the result does not hold what the edits
/// mean (checked by parsing it again).
pub fn apply(text: &str, edits: &[Edit]) -> Result<String, EditError> {
    let before =
        Document::parse(Path::new("-"), text).map_err(|e| EditError::Syntax(e.to_string()))?;
    let mut expected = before.value().clone();
    let doc =
        yaml_edit::Document::from_str(text).map_err(|e| EditError::Syntax(format!("{e:?}")))?;
    for edit in edits {
        match edit {
            Edit::Set { path, value } => {
                set(&doc, path, value)?;
                pointer::set_creating(&mut expected, path, value.clone());
            }
            Edit::Push { path, value } => {
                let p = yaml_path(path)?;
                let node = doc
                    .try_get_path(&p)
                    .map_err(|e| at("find the list", path, e))?;
                let seq = node
                    .as_sequence()
                    .ok_or_else(|| EditError::NotAList(path.clone()))?;
                match value {
                    Value::Object(map) if !map.is_empty() => {
                        // Built as a document of its own so that its keys keep their order.
                        let text = serde_saphyr::to_string(value)
                            .map_err(|e| EditError::Syntax(e.to_string()))?;
                        let item = yaml_edit::Document::from_str(&text)
                            .map_err(|e| EditError::Syntax(format!("{e:?}")))?;
                        let mapping = item
                            .as_mapping()
                            .ok_or_else(|| EditError::Syntax("not a mapping".into()))?;
                        seq.push(mapping);
                    }
                    other => seq.push(to_yaml(other)),
                }
                match expected.pointer_mut(&pointer::from_tokens(path)) {
                    Some(Value::Array(items)) => items.push(value.clone()),
                    _ => return Err(EditError::NotAList(path.clone())),
                }
            }
            Edit::Remove { path } => {
                let p = yaml_path(path)?;
                if doc.try_get_path(&p).is_ok() {
                    doc.try_remove_path(&p).map_err(|e| at("remove", path, e))?;
                }
                remove_json(&mut expected, path);
            }
        }
    }
    let out = doc.to_string();
    let after =
        Document::parse(Path::new("-"), &out).map_err(|e| EditError::Unparsable(e.to_string()))?;
    if after.value() != &expected {
        return Err(EditError::Mismatch);
    }
    Ok(out)
}

/// Sets a value; an object is set key by key so that its keys keep their order.
fn set(doc: &yaml_edit::Document, path: &[String], value: &Value) -> Result<(), EditError> {
    let p = yaml_path(path)?;
    match value {
        Value::Object(map) if !map.is_empty() => {
            let existing_is_mapping = doc
                .try_get_path(&p)
                .ok()
                .is_some_and(|n| n.as_mapping().is_some());
            if !existing_is_mapping && doc.try_get_path(&p).is_ok() {
                doc.try_remove_path(&p)
                    .map_err(|e| at("replace", path, e))?;
            }
            let mut child = path.to_vec();
            for (k, v) in map {
                child.push(k.clone());
                set(doc, &child, v)?;
                child.pop();
            }
            Ok(())
        }
        other => doc
            .try_set_path(&p, to_yaml(other))
            .map_err(|e| at("set", path, e)),
    }
}

fn at(action: &'static str, path: &[String], reason: impl std::fmt::Display) -> EditError {
    EditError::At {
        action,
        path: path.to_vec(),
        reason: reason.to_string(),
    }
}

/// A path in yaml-edit's syntax: keys joined by `.`, with `\`, `.` and `[` escaped and
/// all-digit keys marked as keys.
fn yaml_path(path: &[String]) -> Result<String, EditError> {
    let mut out = String::new();
    for (i, key) in path.iter().enumerate() {
        if key.is_empty() {
            return Err(at("edit", path, "an empty key has no path"));
        }
        if i > 0 {
            out.push('.');
        }
        if key.bytes().all(|b| b.is_ascii_digit()) {
            out.push('\\');
        }
        for c in key.chars() {
            if matches!(c, '\\' | '.' | '[' | ']') {
                out.push('\\');
            }
            out.push(c);
        }
    }
    Ok(out)
}

fn to_yaml(value: &Value) -> YamlValue {
    match value {
        Value::Null => YamlValue::Scalar(ScalarValue::null()),
        Value::Bool(b) => YamlValue::from(*b),
        // A number as written by serde_json (exact for big integers), as a plain scalar.
        Value::Number(n) => YamlValue::Scalar(ScalarValue::parse(n.to_string())),
        Value::String(s) => YamlValue::from(s.clone()),
        Value::Array(items) => YamlValue::Sequence(items.iter().map(to_yaml).collect()),
        Value::Object(map) => {
            YamlValue::Mapping(map.iter().map(|(k, v)| (k.clone(), to_yaml(v))).collect())
        }
    }
}

fn remove_json(root: &mut Value, path: &[String]) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut cur = root;
    for k in parents {
        match cur.get_mut(k) {
            Some(v) => cur = v,
            None => return,
        }
    }
    if let Value::Object(m) = cur {
        m.shift_remove(last);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const FILE: &str = "# an instance\napiVersion: kudo.dev/v1beta2\nkind: Instance\nspec:\n  parameters:\n    # how many\n    nodeCount: 3   # three\n    backup:\n      enabled: false # off\n    labels: [a, b]\n    a.b: 1\n    \"7\": seven\n  other: 1 # untouched\n";

    fn params(text: &str) -> Value {
        Document::parse(Path::new("-"), text).unwrap().value()["spec"]["parameters"].clone()
    }

    #[test]
    fn only_changed_values_are_touched_and_comments_stay() {
        let old = params(FILE);
        let mut new = old.clone();
        new["nodeCount"] = json!(5);
        new["labels"] = json!(["x"]);
        new["backup"]["credentials"] = json!({"name": "u", "password": "p w"});
        new["a.b"] = json!(2);
        new["7"] = json!("sieben");
        new["topology"] = json!([{"name": "dc1", "rack": "r1"}]);
        let edits = edits_between(&["spec", "parameters"], Some(&old), Some(&new));
        let out = apply(FILE, &edits).unwrap();
        assert_eq!(params(&out), new);
        for kept in [
            "# an instance",
            "# how many",
            "# three",
            "# off",
            "# untouched",
        ] {
            assert!(out.contains(kept), "{kept} lost:\n{out}");
        }
        assert!(out.contains("nodeCount: 5   # three"), "{out}");
    }

    #[test]
    fn removals_and_shape_changes() {
        let old = params(FILE);
        let mut new = old.clone();
        new.as_object_mut().unwrap().shift_remove("backup");
        new["nodeCount"] = json!({"min": 1});
        let edits = edits_between(&["spec", "parameters"], Some(&old), Some(&new));
        assert!(edits.contains(&Edit::Remove {
            path: vec!["spec".into(), "parameters".into(), "backup".into()]
        }));
        let out = apply(FILE, &edits).unwrap();
        assert_eq!(params(&out), new);
    }

    #[test]
    fn pushing_to_lists_keeps_order_and_comments() {
        let text =
            "parameters:\n  # first\n  - name: A\n    default: \"1\" # one\nrequired: [a] # req\n";
        let out = apply(
            text,
            &[
                Edit::Push {
                    path: vec!["parameters".into()],
                    value: json!({"name": "C", "description": "the c", "default": "3"}),
                },
                Edit::Push {
                    path: vec!["required".into()],
                    value: json!("b"),
                },
            ],
        )
        .unwrap();
        assert_eq!(
            out,
            "parameters:\n  # first\n  - name: A\n    default: \"1\" # one\n  - name: C\n    description: the c\n    default: \"3\"\nrequired: [a, b] # req\n"
        );
    }

    #[test]
    fn no_edits_leave_the_text_identical() {
        assert_eq!(apply(FILE, &[]).unwrap(), FILE);
    }
}
