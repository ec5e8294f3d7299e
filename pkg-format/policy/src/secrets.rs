//! `writeOnly` values outside the Instance: what goes into a Secret, what the Instance records
//! instead, and how the record is compared with the values of the next reconcile.
//!
//! An Instance never holds a `writeOnly` value (a node marked `writeOnly`, or any value under
//! one). `kudo install`/`update` [`split`] the values: the public part is stored in
//! `spec.parameters`, the secret part in a Secret the Instance names in `spec.parametersFrom`
//! ([`SecretSource`], [`merged`]). The manager reads the Secrets, validates the whole and
//! renders; `status.applied` records each secret value as a keyed digest ([`digested`]), so a
//! changed secret is seen and runs its parameter's `trigger` plan, while a reader of the
//! Instance learns nothing that can be checked against a guess without the manager's key
//! (HMAC-SHA256, not a bare hash, which would let anyone test candidate passwords offline).
//!
//! The layout of a Secret, chosen after Flux's `valuesFrom` (docs/extensions.md):
//! - without `pointer`, the key (default [`DEFAULT_KEY`]) holds a YAML or JSON document of
//!   structured values, merged like a `-P` file;
//! - with `pointer`, the key holds one value, placed there and typed by the schema as `-p`
//!   types it (one key per secret, as External Secrets and SealedSecrets write them).

use serde_json::{Map, Value};

use crate::params::ParamSchema;
use kudo_diag::diag::{Code, Diagnostic, Origin};
use kudo_diag::pointer;

/// The key of a Secret that holds a document of values, when `secretRef.key` is not given.
pub const DEFAULT_KEY: &str = "parameters.yaml";

/// What a digest recorded in `status.applied` starts with.
pub const DIGEST_PREFIX: &str = "hmac-sha256:";

/// One entry of `spec.parametersFrom`, as read from the Instance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretSource {
    /// The Secret's name (in the Instance's namespace).
    pub name: String,
    /// The key in its `data`.
    pub key: String,
    /// Where the key's one value goes; `None`: the key holds a document of values.
    pub pointer: Option<String>,
}

impl SecretSource {
    /// The entries of `spec.parametersFrom` (`None` or not an array: none). An entry without a
    /// `secretRef.name` is reported by name.
    pub fn list(parameters_from: Option<&Value>) -> Result<Vec<SecretSource>, String> {
        let Some(Value::Array(items)) = parameters_from else {
            return Ok(Vec::new());
        };
        items
            .iter()
            .enumerate()
            .map(|(i, item)| {
                let name = item
                    .pointer("/secretRef/name")
                    .and_then(Value::as_str)
                    .filter(|n| !n.is_empty())
                    .ok_or_else(|| format!("spec.parametersFrom[{i}] names no secretRef.name"))?;
                let key = item
                    .pointer("/secretRef/key")
                    .and_then(Value::as_str)
                    .unwrap_or(DEFAULT_KEY);
                let pointer = item.get("pointer").and_then(Value::as_str);
                if let Some(p) = pointer
                    && pointer::tokens(p).is_err()
                {
                    return Err(format!(
                        "spec.parametersFrom[{i}].pointer {p:?} is not a JSON pointer"
                    ));
                }
                Ok(SecretSource {
                    name: name.into(),
                    key: key.into(),
                    pointer: pointer.map(String::from),
                })
            })
            .collect()
    }

    /// Where a value read from this source came from, for messages.
    pub fn describe(&self) -> String {
        format!("Secret {} key {}", self.name, self.key)
    }
}

/// The values of `sources` read from their Secrets' data (`read(name, key)` gives the text, or
/// `None` when the Secret or key is missing), merged in order into one object: documents as
/// RFC 7396 merge patches, single values placed at their pointer (a string, typed later by the
/// schema as every stored value is). Errors name the Secret and key, never a value.
pub fn merged(
    sources: &[SecretSource],
    mut read: impl FnMut(&str, &str) -> Option<String>,
) -> Result<Value, Vec<Diagnostic>> {
    let mut out = Value::Object(Map::new());
    let mut problems = Vec::new();
    for s in sources {
        let origin = Origin::Secret(s.describe());
        let Some(text) = read(&s.name, &s.key) else {
            problems.push(
                Diagnostic::error(
                    Code::SecretMissing,
                    s.pointer.clone().unwrap_or_default(),
                    format!(
                        "Secret {} has no key {} (spec.parametersFrom)",
                        s.name, s.key
                    ),
                )
                .with_origin(origin),
            );
            continue;
        };
        match &s.pointer {
            Some(p) => {
                let tokens = pointer::tokens(p).unwrap_or_default();
                pointer::set_creating(&mut out, &tokens, Value::String(text));
            }
            None => match kudo_yaml::document::parse_value(&text) {
                Ok(v @ Value::Object(_)) => json_patch::merge(&mut out, &v),
                Ok(Value::Null) => {}
                Ok(_) | Err(_) => problems.push(
                    Diagnostic::error(
                        Code::SecretMissing,
                        "",
                        format!(
                            "Secret {} key {} is not a YAML or JSON object of parameter values",
                            s.name, s.key
                        ),
                    )
                    .with_origin(origin),
                ),
            },
        }
    }
    if problems.is_empty() {
        Ok(out)
    } else {
        Err(problems)
    }
}

/// The values of an Instance: its Secrets' values (`secret`, [`merged`]) under its
/// `spec.parameters` (`public`), as Flux merges `valuesFrom` under `values`.
pub fn under(public: &Value, secret: &Value) -> Value {
    crate::values::overlay(secret, public)
}

/// `values` split into what an Instance may store and its `writeOnly` values, each at its path.
/// The second is `None` when there are no secrets.
pub fn split(schema: &ParamSchema, values: &Value) -> (Value, Option<Value>) {
    let mut public = values.clone();
    let mut secret = Value::Object(Map::new());
    for p in pointers(schema, values) {
        let tokens = pointer::tokens(&p).unwrap_or_default();
        if let Some(v) = remove(&mut public, &tokens) {
            pointer::set_creating(&mut secret, &tokens, v);
            // Objects left empty by the move go too (they held only secrets).
            for end in (1..tokens.len()).rev() {
                let parent = pointer::from_tokens(&tokens[..end]);
                if public
                    .pointer(&parent)
                    .is_some_and(|v| v.as_object().is_some_and(|m| m.is_empty()))
                {
                    remove(&mut public, &tokens[..end]);
                }
            }
        }
    }
    let any = secret.as_object().is_some_and(|m| !m.is_empty());
    (public, any.then_some(secret))
}

/// The pointers of the secret values set in `values`: each outermost `writeOnly` value, or the
/// outermost array holding one (an array moves whole, as `-p` writes it, so the Instance and
/// the Secret never each hold part of one list).
pub fn pointers(schema: &ParamSchema, values: &Value) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    walk(schema, values, &mut Vec::new(), &mut |tokens| {
        let mut end = tokens.len();
        for k in 1..tokens.len() {
            if values
                .pointer(&pointer::from_tokens(&tokens[..k]))
                .is_some_and(Value::is_array)
            {
                end = k;
                break;
            }
        }
        let p = pointer::from_tokens(&tokens[..end]);
        if !out.contains(&p) {
            out.push(p);
        }
    });
    out
}

/// Takes the value at `tokens` (through objects only) out of `root`.
fn remove(root: &mut Value, tokens: &[String]) -> Option<Value> {
    let (last, parents) = tokens.split_last()?;
    let mut cur = root;
    for t in parents {
        cur = cur.as_object_mut()?.get_mut(t)?;
    }
    cur.as_object_mut()?.remove(last)
}

/// `values` with every `writeOnly` value replaced by its digest under `key`: what
/// `status.applied` records.
pub fn digested(schema: &ParamSchema, values: &Value, key: &[u8]) -> Value {
    let mut out = values.clone();
    for p in pointers(schema, values) {
        let tokens = pointer::tokens(&p).unwrap_or_default();
        if let Some(v) = values.pointer(&p) {
            pointer::set_creating(&mut out, &tokens, Value::String(digest(key, v)));
        }
    }
    out
}

/// `recorded` (a [`digested`] record) with each digest that equals the digest of the value at
/// the same place in `current` replaced by that value: the record as it reads when those
/// secrets did not change. A changed, added or removed secret stays a difference.
pub fn revealed(schema: &ParamSchema, recorded: &Value, current: &Value, key: &[u8]) -> Value {
    let mut out = recorded.clone();
    for p in pointers(schema, recorded) {
        let (Some(Value::String(d)), Some(now)) = (recorded.pointer(&p), current.pointer(&p))
        else {
            continue;
        };
        if *d == digest(key, now) {
            let tokens = pointer::tokens(&p).unwrap_or_default();
            pointer::set_creating(&mut out, &tokens, now.clone());
        }
    }
    out
}

/// `into` with the `writeOnly` values of `from` (what a client that cannot read the Secrets
/// compares: the secrets count as unchanged).
pub fn carried(schema: &ParamSchema, from: &Value, into: &Value) -> Value {
    let mut out = into.clone();
    for p in pointers(schema, into) {
        let tokens = pointer::tokens(&p).unwrap_or_default();
        remove(&mut out, &tokens);
    }
    for p in pointers(schema, from) {
        let tokens = pointer::tokens(&p).unwrap_or_default();
        if let Some(v) = from.pointer(&p) {
            pointer::set_creating(&mut out, &tokens, v.clone());
        }
    }
    out
}

/// A fresh random key for [`digest`] (32 bytes).
pub fn random_key() -> Vec<u8> {
    use ring::rand::SecureRandom;
    let mut key = vec![0u8; 32];
    // The system's random source; it fails only on a broken system, where a fixed key still
    // digests (a restart then compares against it as against any other key).
    let _ = ring::rand::SystemRandom::new().fill(&mut key);
    key
}

/// The keyed digest of one value: HMAC-SHA256 of its canonical JSON (object members sorted).
pub fn digest(key: &[u8], value: &Value) -> String {
    let k = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, key);
    let tag = ring::hmac::sign(&k, canonical(value).as_bytes());
    let hex: String = tag.as_ref().iter().map(|b| format!("{b:02x}")).collect();
    format!("{DIGEST_PREFIX}{hex}")
}

fn canonical(value: &Value) -> String {
    fn sorted(v: &Value) -> Value {
        match v {
            Value::Object(m) => {
                let mut keys: Vec<&String> = m.keys().collect();
                keys.sort();
                Value::Object(
                    keys.into_iter()
                        .map(|k| (k.clone(), sorted(&m[k])))
                        .collect(),
                )
            }
            Value::Array(a) => Value::Array(a.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    sorted(value).to_string()
}

/// Calls `found` with the path of every outermost `writeOnly` value of `value`.
fn walk(
    schema: &ParamSchema,
    value: &Value,
    tokens: &mut Vec<String>,
    found: &mut dyn FnMut(&[String]),
) {
    if !tokens.is_empty() && schema.is_secret(tokens) {
        found(tokens);
        return;
    }
    // A digest where the schema has a list (of items holding secrets): a recorded list.
    if let Value::String(s) = value
        && s.starts_with(DIGEST_PREFIX)
        && schema
            .node_at(tokens)
            .is_some_and(|n| n.get("type") == Some(&Value::String("array".into())))
    {
        found(tokens);
        return;
    }
    match value {
        Value::Object(m) => {
            for (k, v) in m {
                tokens.push(k.clone());
                walk(schema, v, tokens, found);
                tokens.pop();
            }
        }
        Value::Array(a) => {
            for (i, v) in a.iter().enumerate() {
                tokens.push(i.to_string());
                walk(schema, v, tokens, found);
                tokens.pop();
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> ParamSchema {
        ParamSchema::from_value(json!({"type": "object", "properties": {
            "nodeCount": {"type": "integer", "default": 3},
            "auth": {"type": "object", "properties": {
                "user": {"type": "string", "default": "admin"},
                "adminPassword": {"type": "string", "writeOnly": true}}},
            "tls": {"type": "object", "writeOnly": true, "properties": {
                "key": {"type": "string"}, "cert": {"type": "string"}}},
            "users": {"type": "array", "items": {"type": "object", "properties": {
                "name": {"type": "string"},
                "password": {"type": "string", "writeOnly": true}}}}
        }}))
        .unwrap()
    }

    fn values() -> Value {
        json!({"nodeCount": 4,
            "auth": {"user": "root", "adminPassword": "correct-horse-battery"},
            "tls": {"key": "K", "cert": "C"},
            "users": [{"name": "a", "password": "pa"}, {"name": "b"}]})
    }

    #[test]
    fn split_moves_every_write_only_value_and_nothing_else() {
        let (public, secret) = split(&schema(), &values());
        assert_eq!(public, json!({"nodeCount": 4, "auth": {"user": "root"}}));
        // A list holding a secret moves whole.
        assert_eq!(
            secret,
            Some(json!({"auth": {"adminPassword": "correct-horse-battery"},
                "tls": {"key": "K", "cert": "C"},
                "users": [{"name": "a", "password": "pa"}, {"name": "b"}]}))
        );
        // An object that held only secrets goes with them.
        let (public, _) = split(&schema(), &json!({"auth": {"adminPassword": "x"}}));
        assert_eq!(public, json!({}));
        let (_, none) = split(&schema(), &json!({"nodeCount": 1}));
        assert_eq!(none, None);
    }

    #[test]
    fn a_record_holds_digests_and_reads_back_only_while_the_secret_is_unchanged() {
        let key = b"0123456789abcdef0123456789abcdef";
        let record = digested(&schema(), &values(), key);
        let text = record.to_string();
        for secret in ["correct-horse-battery", "\"K\"", "\"pa\""] {
            assert!(!text.contains(secret), "{secret} in {text}");
        }
        assert_eq!(record["nodeCount"], 4);
        assert!(
            record["auth"]["adminPassword"]
                .as_str()
                .unwrap()
                .starts_with(DIGEST_PREFIX)
        );
        // Another key gives other digests: without the key, a guess cannot be checked.
        assert_ne!(record, digested(&schema(), &values(), b"another key"));
        assert_eq!(revealed(&schema(), &record, &values(), key), values());
        let mut changed = values();
        changed["auth"]["adminPassword"] = json!("hunter22");
        let back = revealed(&schema(), &record, &changed, key);
        assert_eq!(back["tls"], values()["tls"]);
        assert_eq!(
            back["auth"]["adminPassword"],
            record["auth"]["adminPassword"]
        );
        assert_ne!(back, changed, "a changed secret stays a difference");
    }

    #[test]
    fn digests_do_not_depend_on_member_order() {
        let a: Value = serde_json::from_str(r#"{"key": "K", "cert": "C"}"#).unwrap();
        let b: Value = serde_json::from_str(r#"{"cert": "C", "key": "K"}"#).unwrap();
        assert_eq!(digest(b"k", &a), digest(b"k", &b));
    }

    #[test]
    fn carried_takes_the_secrets_of_the_record() {
        let record = digested(&schema(), &values(), b"k");
        let (public, _) = split(&schema(), &values());
        let back = carried(&schema(), &record, &public);
        assert_eq!(back, record);
    }

    #[test]
    fn secrets_are_read_from_documents_and_single_keys_in_order() {
        let from = json!([
            {"secretRef": {"name": "inst-params"}},
            {"secretRef": {"name": "db-creds", "key": "password"}, "pointer": "/auth/adminPassword"}
        ]);
        let sources = SecretSource::list(Some(&from)).unwrap();
        assert_eq!(sources[0].key, DEFAULT_KEY);
        let got = merged(&sources, |name, key| match (name, key) {
            ("inst-params", DEFAULT_KEY) => {
                Some("auth:\n  adminPassword: old\ntls: {key: K}\n".into())
            }
            ("db-creds", "password") => Some("s3cret: with colon".into()),
            _ => None,
        })
        .unwrap();
        assert_eq!(
            got,
            json!({"auth": {"adminPassword": "s3cret: with colon"}, "tls": {"key": "K"}})
        );
        let missing = merged(&sources, |_, _| None).unwrap_err();
        assert_eq!(missing.len(), 2);
        assert!(missing[1].to_string().contains("db-creds"));
        let bad = SecretSource::list(Some(&json!([{"secretRef": {}}]))).unwrap_err();
        assert!(bad.contains("parametersFrom[0]"), "{bad}");
    }
}
