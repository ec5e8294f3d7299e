//! The LIST-sized ConversionReview of the benchmarks and the load run: the three objects
//! kube-apiserver sent in `tests/fixtures/wire/`, repeated with distinct names and uids, 1000 in
//! all. The including crate has the `wire` module (`tests/support/wire.rs`).

use serde_json::{Value, json};

/// A 1000-object ConversionReview asking for `desired`, as bytes.
pub fn list_review(desired: &str) -> Vec<u8> {
    let mut samples = Vec::new();
    for name in [
        "conversion-instance-v1beta1-to-v1beta2.json",
        "conversion-instance-v1beta2-to-v1beta1.json",
        "conversion-operatorversion-v1beta1-to-v1beta2.json",
    ] {
        let v: Value = crate::wire::capture(name);
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
