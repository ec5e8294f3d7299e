//! The LIST-sized ConversionReview of the benchmarks and the load run: the three objects
//! kube-apiserver sent in `shared/wire/`, repeated with distinct names and uids, 1000 in all.

use std::path::PathBuf;

use serde_json::{Value, json};

/// The directory of the shared data (`KUDO_SHARED_DIR`, else beside the repository).
pub fn shared_dir() -> PathBuf {
    std::env::var_os("KUDO_SHARED_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared"))
}

/// A 1000-object ConversionReview asking for `desired`, as bytes.
pub fn list_review(desired: &str) -> Vec<u8> {
    let mut samples = Vec::new();
    for name in [
        "conversion-instance-v1beta1-to-v1beta2.json",
        "conversion-instance-v1beta2-to-v1beta1.json",
        "conversion-operatorversion-v1beta1-to-v1beta2.json",
    ] {
        let text = std::fs::read_to_string(shared_dir().join("wire").join(name))
            .expect("the wire captures");
        let v: Value = serde_json::from_str(&text).expect("a captured review");
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
