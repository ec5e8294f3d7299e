//! JSON pointers (RFC 6901) as this crate uses them: parsed by `jsonptr`.
//!
//! Parameters are addressed by pointer everywhere (`-p` keys, diagnostics, triggers, `oldName`),
//! so the few operations on them live here, once. [`Pointer`] is the type a diagnostic and a
//! change carry; the free functions work on pointer text for the code that builds one.

use std::fmt;

use jsonptr::Token;
use serde_json::Value;

/// The pointer of a parameter value (`/topology/0/datacenterName`; empty: the whole document),
/// as written. It reads as `&str`; [`Pointer::tokens`] decodes it. The text is kept even when
/// it is not a valid pointer, so that a diagnostic about a malformed `-p` key can name it.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(transparent)]
pub struct Pointer(String);

impl Pointer {
    /// The pointer as written.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The decoded tokens (`/a/b~1c` → `["a", "b/c"]`); none for the root and for a malformed
    /// pointer (see [`tokens`] for the error).
    pub fn tokens(&self) -> Vec<String> {
        tokens(&self.0).unwrap_or_default()
    }
}

impl std::ops::Deref for Pointer {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for Pointer {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Pointer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<String> for Pointer {
    fn from(s: String) -> Pointer {
        Pointer(s)
    }
}

impl From<&str> for Pointer {
    fn from(s: &str) -> Pointer {
        Pointer(s.to_string())
    }
}

impl From<&String> for Pointer {
    fn from(s: &String) -> Pointer {
        Pointer(s.clone())
    }
}

impl From<&Pointer> for Pointer {
    fn from(p: &Pointer) -> Pointer {
        p.clone()
    }
}

impl PartialEq<String> for Pointer {
    fn eq(&self, other: &String) -> bool {
        &self.0 == other
    }
}

impl PartialEq<str> for Pointer {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<&str> for Pointer {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

impl PartialEq<Pointer> for &str {
    fn eq(&self, other: &Pointer) -> bool {
        *self == other.0
    }
}

/// Splits a pointer (`/a/b~1c`) into its decoded tokens (`["a", "b/c"]`). The empty pointer is
/// the whole document and has no tokens. A pointer must start with `/`, and `~` must be followed
/// by `0` or `1`.
pub fn tokens(pointer: &str) -> Result<Vec<String>, jsonptr::ParseError> {
    let p = jsonptr::Pointer::parse(pointer)?;
    Ok(p.tokens().map(|t| t.decoded().into_owned()).collect())
}

/// Escapes one token for use in a pointer (`~` -> `~0`, `/` -> `~1`).
pub fn escape(token: &str) -> String {
    Token::new(token).encoded().to_string()
}

/// Appends a token to a pointer.
pub fn push(pointer: &str, token: &str) -> String {
    format!("{pointer}/{}", escape(token))
}

/// Builds a pointer from decoded tokens.
pub fn from_tokens<S: AsRef<str>>(tokens: &[S]) -> String {
    tokens
        .iter()
        .fold(String::new(), |p, t| push(&p, t.as_ref()))
}

/// The parent of a pointer; the parent of the root is the root.
pub fn parent(pointer: &str) -> &str {
    match pointer.rfind('/') {
        Some(i) => &pointer[..i],
        None => "",
    }
}

/// True when `pointer` is `ancestor` or lies under it.
pub fn is_within(pointer: &str, ancestor: &str) -> bool {
    pointer == ancestor
        || (pointer.starts_with(ancestor) && pointer.as_bytes().get(ancestor.len()) == Some(&b'/'))
}

/// Sets `value` at `tokens` in `root`, creating the objects on the way (never arrays; a
/// non-object on the way is replaced by an object).
pub fn set_creating(root: &mut serde_json::Value, tokens: &[String], value: serde_json::Value) {
    let mut cur = root;
    for t in tokens {
        if !cur.is_object() {
            *cur = serde_json::Value::Object(serde_json::Map::new());
        }
        let serde_json::Value::Object(map) = cur else {
            return;
        };
        cur = map.entry(t.clone()).or_insert(serde_json::Value::Null);
    }
    *cur = value;
}

/// How [`diff`] compares two arrays.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arrays {
    /// Item by item: an item only one side has is added or removed at its index.
    ByIndex,
    /// As one value: a different array is one change at the array's pointer.
    Whole,
}

/// What [`diff`] calls for each difference: the pointer, its tokens below the base (decoded),
/// the old side, the new side.
pub type Visit<'f, 'v> = dyn FnMut(&str, &[String], Option<&'v Value>, Option<&'v Value>) + 'f;

/// Where `old` and `new` differ, below `base` (the pointer they are found at), as deep as both
/// still have the same shape: objects are compared member by member (the old members in their
/// order, then the new ones), arrays as [`Arrays`] says, anything else as one value. `visit` is
/// called with the pointer and both sides of each difference (`None` on the side that lacks
/// it). The one JSON diff walker: triggers, file edits, guarded patches and the storage
/// migration's read-back all compare through it.
pub fn diff<'v>(
    base: &str,
    old: Option<&'v Value>,
    new: Option<&'v Value>,
    arrays: Arrays,
    visit: &mut Visit<'_, 'v>,
) {
    let mut at = base.to_string();
    walk_diff(&mut at, &mut Vec::new(), old, new, arrays, visit);
}

fn walk_diff<'v>(
    at: &mut String,
    tokens: &mut Vec<String>,
    old: Option<&'v Value>,
    new: Option<&'v Value>,
    arrays: Arrays,
    visit: &mut Visit<'_, 'v>,
) {
    let step = |at: &mut String,
                tokens: &mut Vec<String>,
                token: &str,
                o,
                n,
                visit: &mut Visit<'_, 'v>| {
        let len = at.len();
        at.push('/');
        at.push_str(&escape(token));
        tokens.push(token.to_string());
        walk_diff(at, tokens, o, n, arrays, visit);
        tokens.pop();
        at.truncate(len);
    };
    match (old, new) {
        (Some(o), Some(n)) if o == n => {}
        (None, None) => {}
        (Some(Value::Object(o)), Some(Value::Object(n))) => {
            for (k, ov) in o {
                step(at, tokens, k, Some(ov), n.get(k), visit);
            }
            for (k, nv) in n {
                if !o.contains_key(k) {
                    step(at, tokens, k, None, Some(nv), visit);
                }
            }
        }
        (Some(Value::Array(o)), Some(Value::Array(n))) if arrays == Arrays::ByIndex => {
            for i in 0..o.len().max(n.len()) {
                step(at, tokens, &i.to_string(), o.get(i), n.get(i), visit);
            }
        }
        _ => visit(at, tokens, old, new),
    }
}

/// The pointers of the leaves of `value` (scalars, empty objects and arrays): what is set,
/// never what it is set to. `Debug` of anything holding parameter values shows these, since
/// a value may be a `writeOnly` secret.
pub fn leaves(value: &Value) -> Vec<String> {
    fn walk(v: &Value, at: &mut String, out: &mut Vec<String>) {
        let len = at.len();
        match v {
            Value::Object(m) if !m.is_empty() => {
                for (k, child) in m {
                    at.push('/');
                    at.push_str(&escape(k));
                    walk(child, at, out);
                    at.truncate(len);
                }
            }
            Value::Array(a) if !a.is_empty() => {
                for (i, child) in a.iter().enumerate() {
                    at.push_str(&format!("/{i}"));
                    walk(child, at, out);
                    at.truncate(len);
                }
            }
            _ => out.push(at.clone()),
        }
    }
    let mut out = Vec::new();
    walk(value, &mut String::new(), &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leaves_name_what_is_set_never_the_value() {
        let v = serde_json::json!({"a": {"b": 1, "c~/": "x"}, "list": [{"k": "v"}], "empty": {}, "none": []});
        let mut set = leaves(&v);
        set.sort();
        assert_eq!(
            set,
            vec!["/a/b", "/a/c~0~1", "/empty", "/list/0/k", "/none"]
        );
    }

    #[test]
    fn tokens_are_decoded() {
        assert_eq!(tokens("/a~1b/m~0n/0").unwrap(), vec!["a/b", "m~n", "0"]);
        assert_eq!(tokens("").unwrap(), Vec::<String>::new());
        assert_eq!(tokens("/").unwrap(), vec![""]);
        assert!(tokens("/a~2").is_err());
        assert!(tokens("a").is_err());
    }

    #[test]
    fn building_and_walking_up() {
        assert_eq!(from_tokens(&["a/b", "m~n"]), "/a~1b/m~0n");
        assert_eq!(parent("/a/b"), "/a");
        assert_eq!(parent("/a"), "");
        assert!(is_within("/a/b", "/a"));
        assert!(!is_within("/ab", "/a"));
        assert!(is_within("/a", ""));
    }
}
