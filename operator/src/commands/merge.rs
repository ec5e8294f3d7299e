//! RFC 7396 JSON merge patches between two values: the smallest patch that turns one into the
//! other, so that a write carries only what this command changes and leaves other writers'
//! changes alone.

use serde_json::{Map, Value};

/// The merge patch that turns `old` into `new`: changed keys with their new values, removed
/// keys as `null`, objects compared key by key, anything else (arrays too) replaced whole.
/// `None` when they are equal.
pub fn diff(old: &Value, new: &Value) -> Option<Value> {
    if old == new {
        return None;
    }
    match (old, new) {
        (Value::Object(o), Value::Object(n)) => {
            let mut patch = Map::new();
            for (k, ov) in o {
                match n.get(k) {
                    None => {
                        patch.insert(k.clone(), Value::Null);
                    }
                    Some(nv) => {
                        if let Some(p) = diff(ov, nv) {
                            patch.insert(k.clone(), p);
                        }
                    }
                }
            }
            for (k, nv) in n {
                if !o.contains_key(k) {
                    patch.insert(k.clone(), nv.clone());
                }
            }
            Some(Value::Object(patch))
        }
        // `null` in a patch removes: a new null value cannot be sent as a merge patch value,
        // and an Instance's parameters never hold null (it means "use the default").
        _ => Some(new.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_patch_carries_only_the_changes_and_nulls_what_is_removed() {
        let cases = [
            (json!({"a": 1}), json!({"a": 1}), None),
            (json!({"a": 1}), json!({"a": 2}), Some(json!({"a": 2}))),
            (
                json!({"a": 1, "b": 2}),
                json!({"b": 2}),
                Some(json!({"a": null})),
            ),
            (
                json!({"o": {"x": 1, "y": 2}}),
                json!({"o": {"x": 1, "y": 3}, "n": [1]}),
                Some(json!({"o": {"y": 3}, "n": [1]})),
            ),
            (
                json!({"l": [1, 2]}),
                json!({"l": [1]}),
                Some(json!({"l": [1]})),
            ),
        ];
        for (old, new, want) in cases {
            assert_eq!(diff(&old, &new), want, "{old} -> {new}");
            if let Some(p) = diff(&old, &new) {
                let mut applied = old.clone();
                json_patch::merge(&mut applied, &p);
                assert_eq!(applied, new, "{old} -> {new}");
            }
        }
    }
}
