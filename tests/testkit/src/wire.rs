//! The wire fixtures (`tests/fixtures/wire/`): reviews kube-apiserver sent to kudo's webhooks,
//! captured by the end-to-end suite's wire scenario (`KUDO_E2E_UPDATE_WIRE=1`, docs/e2e.md).
//! Used by the test suites of `kudo-crd` and `kudo-webhook`.

use serde_json::{Value, json};

/// The namespace the captures were normalized to.
pub const NAMESPACE: &str = "wire";

/// The capture `name` (`conversion-instance-v1beta1-to-v1beta2`, with or without `.json`):
/// `{"path", "request_body", "response_status", "response_body"}`.
pub fn capture(name: &str) -> Value {
    let name = name.strip_suffix(".json").unwrap_or(name);
    let file = crate::fixture("wire").join(format!("{name}.json"));
    let text = std::fs::read_to_string(&file)
        .unwrap_or_else(|e| panic!("the wire fixture {}: {e}", file.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()))
}

/// The review the capture `name` holds, as the bytes kube-apiserver sent.
pub fn request_body(name: &str) -> Vec<u8> {
    capture(name)["request_body"].to_string().into_bytes()
}

/// The LIST-sized ConversionReview of the webhook's benchmarks and load run: the three objects
/// kube-apiserver sent in the conversion captures, repeated with distinct names and uids, 1000
/// in all.
/// A 1000-object ConversionReview asking for `desired`, as bytes.
pub fn list_review(desired: &str) -> Vec<u8> {
    let mut samples = Vec::new();
    for name in [
        "conversion-instance-v1beta1-to-v1beta2.json",
        "conversion-instance-v1beta2-to-v1beta1.json",
        "conversion-operatorversion-v1beta1-to-v1beta2.json",
    ] {
        let v: Value = capture(name);
        samples.extend(
            v["request_body"]["request"]["objects"]
                .as_array()
                .expect("objects")
                .clone(),
        );
    }
    let objects: Vec<Value> = (0..1000)
        .map(|i| {
            let mut o = samples[i % samples.len()].clone();
            o["metadata"]["name"] = json!(format!("obj-{i}"));
            o["metadata"]["uid"] = json!(format!("uid-{i}"));
            o
        })
        .collect();
    json!({"kind": "ConversionReview", "apiVersion": "apiextensions.k8s.io/v1",
        "request": {"uid": "bench", "desiredAPIVersion": desired, "objects": objects},
        "response": {"uid": "", "convertedObjects": null, "result": {"metadata": {}}}})
    .to_string()
    .into_bytes()
}

/// The parameters of `sample-db`, the operator the admission captures were taken with: an
/// immutable name, a defaulted count, a write-only password whose change runs `auth-update`,
/// and a list of datacenters.
pub fn sample_db_schema() -> Value {
    json!({"type": "object", "required": ["clusterName"], "properties": {
        "clusterName": {"type": "string", "immutable": true},
        "nodeCount": {"type": "integer", "minimum": 1, "default": 3},
        "auth": {"type": "object", "trigger": "auth-update", "properties": {
            "enabled": {"type": "boolean", "default": false},
            "password": {"type": "string", "writeOnly": true, "minLength": 8}}},
        "topology": {"type": "array", "items": {"type": "object", "properties": {
            "datacenterName": {"type": "string"}, "nodes": {"type": "integer"}}}}}})
}

/// A `sample-db` OperatorVersion (v1beta2) in the captures' namespace: `name`, its `version`,
/// the parameter `schema` ([`sample_db_schema`] as captured) and the plans the captures run.
pub fn sample_db_operator_version(name: &str, version: &str, schema: Value) -> Value {
    json!({"apiVersion": "kudo.dev/v1beta2", "kind": "OperatorVersion",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {"version": version, "parameters": schema,
            "plans": {"deploy": {}, "update": {}, "auth-update": {}}}})
}
