//! RFC 7396 JSON merge patches between two values: the smallest patch that turns one into the
//! other, so that a write carries only what this command changes and leaves other writers'
//! changes alone.

use json_patch::PatchOperation;
use kudo_crd::patch::{add, path, remove, replace, test};
use kudo_diag::pointer::{self, Arrays};
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

/// The RFC 6902 patch that turns `old` into `new`, both found at the pointer of tokens `base`
/// of the object, with a `test` of every value it replaces or removes: the API server applies it
/// only while the values this command read are still there, whatever else changed meanwhile, so
/// writers of different values never conflict and a writer of the same value learns it was
/// overtaken. Objects are compared key by key, anything else replaced whole. `None` when they
/// are equal.
pub fn guarded(base: &[&str], old: &Value, new: &Value) -> Option<Vec<PatchOperation>> {
    let mut ops = Vec::new();
    pointer::diff(
        "",
        Some(old),
        Some(new),
        Arrays::Whole,
        &mut |_, below, old, new| {
            let at = || path(base.iter().copied().chain(below.iter().map(String::as_str)));
            if let Some(old) = old {
                ops.push(test(at(), old.clone()));
            }
            ops.push(match new {
                Some(new) if old.is_some() => replace(at(), new.clone()),
                Some(new) => add(at(), new.clone()),
                None => remove(at()),
            });
        },
    );
    (!ops.is_empty()).then_some(ops)
}

/// Whether the API server refused a JSON patch because one of its `test`s failed (422 with
/// its generic message; a refusal by validation names the field instead).
pub fn test_failed(e: &kube::Error) -> bool {
    matches!(e, kube::Error::Api(s) if s.code == 422
        && s.message == "the server rejected our request due to an error in our request")
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

#[cfg(test)]
mod guarded_tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_guarded_patch_tests_what_it_replaces_or_removes_and_adds_the_rest() {
        let old = json!({"a": 1, "gone": "x", "o": {"k": [1], "same": true}, "a/b": 0, "t~": 1});
        let new = json!({"a": 2, "o": {"k": [1, 2], "same": true, "n": "v"}, "a/b": 0, "t~": 2});
        let base = ["spec", "parameters"];
        let ops = guarded(&base, &old, &new).unwrap();
        assert_eq!(
            serde_json::to_value(&ops).unwrap(),
            json!([
                {"op": "test", "path": "/spec/parameters/a", "value": 1},
                {"op": "replace", "path": "/spec/parameters/a", "value": 2},
                {"op": "test", "path": "/spec/parameters/gone", "value": "x"},
                {"op": "remove", "path": "/spec/parameters/gone"},
                {"op": "test", "path": "/spec/parameters/o/k", "value": [1]},
                {"op": "replace", "path": "/spec/parameters/o/k", "value": [1, 2]},
                {"op": "add", "path": "/spec/parameters/o/n", "value": "v"},
                {"op": "test", "path": "/spec/parameters/t~0", "value": 1},
                {"op": "replace", "path": "/spec/parameters/t~0", "value": 2},
            ])
        );
        assert_eq!(guarded(&["p"], &old, &old), None);
        // The patch turns old into new.
        let mut doc = json!({"spec": {"parameters": old.clone()}});
        json_patch::patch(&mut doc, &ops).unwrap();
        assert_eq!(doc["spec"]["parameters"], new);
    }
}
