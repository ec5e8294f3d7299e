//! RFC 6902 JSON patch operations as values (`json_patch`'s types), for the patches kudo sends:
//! built from tokens, never parsed from text, so a patch kudo makes is valid by construction
//! (no `.expect`, no "internal error" on a patch of our own). As kube-runtime's finalizer
//! helper builds its patches.

use json_patch::jsonptr::PointerBuf;
use json_patch::{AddOperation, PatchOperation, RemoveOperation, ReplaceOperation, TestOperation};
use serde_json::Value;

/// A JSON pointer from its tokens as they read (`["metadata", "annotations", "kudo.dev/x"]`:
/// escaping is done here).
pub fn path<'t>(tokens: impl IntoIterator<Item = &'t str>) -> PointerBuf {
    PointerBuf::from_tokens(tokens)
}

/// `test` that `value` is at `path`.
pub fn test(path: PointerBuf, value: Value) -> PatchOperation {
    PatchOperation::Test(TestOperation { path, value })
}

/// `add` `value` at `path`.
pub fn add(path: PointerBuf, value: Value) -> PatchOperation {
    PatchOperation::Add(AddOperation { path, value })
}

/// `replace` what is at `path` with `value`.
pub fn replace(path: PointerBuf, value: Value) -> PatchOperation {
    PatchOperation::Replace(ReplaceOperation { path, value })
}

/// `remove` what is at `path`.
pub fn remove(path: PointerBuf) -> PatchOperation {
    PatchOperation::Remove(RemoveOperation { path })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn operations_serialize_as_rfc_6902_with_escaped_paths() {
        let ops = vec![
            test(path(["metadata", "resourceVersion"]), json!("7")),
            add(
                path(["metadata", "annotations", "kudo.dev/x~y"]),
                json!("v"),
            ),
            replace(path(["spec", "a"]), json!(1)),
            remove(path(["spec", "b"])),
        ];
        assert_eq!(
            serde_json::to_value(&ops).unwrap(),
            json!([
                {"op": "test", "path": "/metadata/resourceVersion", "value": "7"},
                {"op": "add", "path": "/metadata/annotations/kudo.dev~1x~0y", "value": "v"},
                {"op": "replace", "path": "/spec/a", "value": 1},
                {"op": "remove", "path": "/spec/b"},
            ])
        );
    }
}
