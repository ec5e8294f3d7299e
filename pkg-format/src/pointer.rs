//! JSON pointers (RFC 6901) as this crate uses them: parsed by `jsonptr`, handled as strings.
//!
//! Parameters are addressed by pointer everywhere (`-p` keys, diagnostics, triggers, `oldName`),
//! so the few operations on them live here, once.

use jsonptr::{Pointer, Token};
use serde_json::Value;

/// Splits a pointer (`/a/b~1c`) into its decoded tokens (`["a", "b/c"]`). The empty pointer is
/// the whole document and has no tokens. A pointer must start with `/`, and `~` must be followed
/// by `0` or `1`.
pub fn tokens(pointer: &str) -> Result<Vec<String>, jsonptr::ParseError> {
    let p = Pointer::parse(pointer)?;
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
