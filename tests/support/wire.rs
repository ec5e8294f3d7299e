//! The wire fixtures (`tests/fixtures/wire/`): reviews kube-apiserver sent to kudo's webhooks,
//! captured by the end-to-end suite's wire scenario (`KUDO_E2E_UPDATE_WIRE=1`, docs/e2e.md).
//! Included with `#[path]` by the test suites of the crates below `kudo-tests`, which cannot
//! depend on it.

use std::path::PathBuf;

use serde_json::Value;

/// The namespace the captures were normalized to.
#[allow(dead_code)]
pub const NAMESPACE: &str = "wire";

/// The capture `name` (`conversion-instance-v1beta1-to-v1beta2`, with or without `.json`):
/// `{"path", "request_body", "response_status", "response_body"}`.
pub fn capture(name: &str) -> Value {
    let name = name.strip_suffix(".json").unwrap_or(name);
    let file = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/wire")
        .join(format!("{name}.json"));
    let text = std::fs::read_to_string(&file)
        .unwrap_or_else(|e| panic!("the wire fixture {}: {e}", file.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()))
}
