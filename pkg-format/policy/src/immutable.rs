//! `immutable`: parameters that may never change after install.
//!
//! `immutable: true` applies to the node and its whole subtree (KEP-33). After install, any
//! change under it is refused, naming the changed path and the immutable node. On upgrade, an
//! immutable parameter the new version adds must end up with a value (given, or a default):
//! it can never be set later.

use serde_json::Value;

use crate::params::ParamSchema;
use crate::trigger::changed_paths;
use kudo_diag::diag::{Code, Diagnostic, Origin, Shown};
use kudo_diag::pointer::{self, Pointer};

/// The value pointer of the outermost immutable node on the path to `value_pointer`, if any.
pub fn immutable_at(schema: &ParamSchema, value_pointer: &str) -> Option<Pointer> {
    let tokens = pointer::tokens(value_pointer).ok()?;
    schema
        .path(&tokens)
        .iter()
        .position(|n| n.get("immutable") == Some(&Value::Bool(true)))
        .map(|i| Pointer::from(pointer::from_tokens(&tokens[..i])))
}

/// Every change from `old` to `new` that touches an immutable parameter, as errors. `old` and
/// `new` are effective parameters (defaults applied); a value shown is masked when secret.
pub fn check_update(schema: &ParamSchema, old: &Value, new: &Value) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for p in changed_paths(old, new) {
        let Some(at) = immutable_at(schema, &p) else {
            continue;
        };
        let secret = schema.may_hold_secret(&p.tokens());
        let what = if at == p {
            "is immutable".to_string()
        } else {
            format!("is under {at}, which is immutable")
        };
        let mut d = Diagnostic::error(
            Code::ImmutableChanged,
            &p,
            format!("cannot change after install: {} {what}", shown(&p)),
        )
        .with_origin(Origin::Instance)
        .with_help(format!(
            "keep the installed value of {at}; changing it needs a new instance"
        ));
        match (old.pointer(&p), new.pointer(&p)) {
            (Some(o), Some(_)) => {
                d.message
                    .push_str(&format!("; installed value {}", Shown::of(o, secret)));
                d = d.with_value(Shown::of(new.pointer(&p).unwrap_or(&Value::Null), secret));
            }
            (Some(_), None) => d.message.push_str(" (the update removes it)"),
            (None, Some(n)) => {
                d.message.push_str(" (the update adds it)");
                d = d.with_value(Shown::of(n, secret));
            }
            (None, None) => {}
        }
        out.push(d);
    }
    out
}

fn shown(p: &str) -> &str {
    if p.is_empty() { "/" } else { p }
}

/// Immutable parameters of `schema` that have no value in `values` (defaults applied) and are
/// outside arrays: on upgrade they would stay unset forever.
pub fn check_unset(schema: &ParamSchema, values: &Value) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for p in schema.parameter_pointers() {
        let tokens = pointer::tokens(&p).unwrap_or_default();
        if tokens.iter().any(|t| t.parse::<usize>().is_ok()) {
            continue; // array items exist only when their array has them
        }
        let Some(node) = schema.node_at(&tokens) else {
            continue;
        };
        if node.get("immutable") != Some(&Value::Bool(true)) {
            continue;
        }
        // The parent must be present for the parameter to be expected.
        let parent = pointer::parent(&p);
        if values.pointer(parent).is_none() || values.pointer(&p).is_some() {
            continue;
        }
        out.push(
            Diagnostic::error(
                Code::ImmutableUnset,
                &p,
                "is immutable and has no value and no default: it could never be set after this",
            )
            .with_help(format!("give it a value with -p {}=VALUE", &p[1..])),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> ParamSchema {
        ParamSchema::from_value(json!({"type": "object", "properties": {
            "name": {"type": "string", "immutable": true},
            "storage": {"type": "object", "immutable": true, "properties": {
                "size": {"type": "string"}, "class": {"type": "string"}}},
            "creds": {"type": "object", "properties": {
                "password": {"type": "string", "immutable": true, "writeOnly": true}}},
            "count": {"type": "integer"}
        }}))
        .unwrap()
    }

    #[test]
    fn changes_under_immutable_nodes_are_refused() {
        let s = schema();
        let old = json!({"name": "a", "storage": {"size": "1Gi"}, "count": 1,
            "creds": {"password": "s3cret"}});
        let mut new = old.clone();
        new["count"] = json!(2);
        assert!(check_update(&s, &old, &new).is_empty());
        new["name"] = json!("b");
        new["storage"]["class"] = json!("fast");
        new["creds"]["password"] = json!("other");
        let d = check_update(&s, &old, &new);
        let ptrs: Vec<&str> = d.iter().map(|d| d.pointer.as_str()).collect();
        assert_eq!(ptrs, ["/name", "/storage/class", "/creds/password"]);
        assert!(d[1].message.contains("under /storage"), "{}", d[1].message);
        assert!(d.iter().all(|d| d.code == Code::ImmutableChanged));
        let text = d[2].to_string();
        assert!(
            !text.contains("s3cret") && !text.contains("other"),
            "{text}"
        );
    }

    #[test]
    fn unset_immutable_parameters_are_found() {
        let s = schema();
        let d = check_unset(&s, &json!({"storage": {}, "creds": {"password": "x"}}));
        let ptrs: Vec<&str> = d.iter().map(|d| d.pointer.as_str()).collect();
        assert_eq!(ptrs, ["/name"]);
    }
}
