//! `/convert` on the exact wire format kube-apiserver sends (`shared/wire/`), on a LIST-sized
//! review, and on bad input.

use std::path::PathBuf;

use kudo_operator::convert::{NoTypes, V1BETA1_PARAMETERS, V1BETA2_PARAMETERS};
use kudo_webhook::conversion::handle;
use serde_json::{Value, json};

fn wire(name: &str) -> Value {
    let dir = std::env::var_os("KUDO_SHARED_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared"));
    let text = std::fs::read_to_string(dir.join("wire").join(name)).expect("the wire captures");
    serde_json::from_str(&text).unwrap()
}

const CAPTURES: &[&str] = &[
    "conversion-instance-v1beta1-to-v1beta2.json",
    "conversion-instance-v1beta2-to-v1beta1.json",
    "conversion-operatorversion-v1beta1-to-v1beta2.json",
];

fn reply_json(body: &[u8]) -> (u16, Value) {
    let (reply, _) = handle(body, &NoTypes);
    (
        reply.http_status,
        serde_json::to_value(&reply.review).unwrap(),
    )
}

/// What kube-apiserver checks: same uid, Success, same count and order, desired apiVersion,
/// same kind/name/namespace/uid, metadata unchanged but for annotations.
fn assert_accepted(request: &Value, response: &Value) {
    assert_eq!(response["apiVersion"], "apiextensions.k8s.io/v1");
    assert_eq!(response["kind"], "ConversionReview");
    let r = &response["response"];
    assert_eq!(r["uid"], request["request"]["uid"]);
    assert_eq!(r["result"]["status"], "Success", "{r}");
    let sent = request["request"]["objects"].as_array().unwrap();
    let got = r["convertedObjects"].as_array().unwrap();
    assert_eq!(sent.len(), got.len());
    for (s, g) in sent.iter().zip(got) {
        assert_eq!(g["apiVersion"], request["request"]["desiredAPIVersion"]);
        for p in [
            "/kind",
            "/metadata/name",
            "/metadata/namespace",
            "/metadata/uid",
        ] {
            assert_eq!(s.pointer(p), g.pointer(p), "{p}");
        }
        let strip = |v: &Value| {
            let mut m = v["metadata"].clone();
            if let Some(a) = m.get_mut("annotations").and_then(Value::as_object_mut) {
                a.remove(V1BETA1_PARAMETERS);
                a.remove(V1BETA2_PARAMETERS);
                if a.is_empty() {
                    m.as_object_mut().unwrap().remove("annotations");
                }
            }
            m
        };
        assert_eq!(strip(s), strip(g), "metadata must not change");
        assert_eq!(s.get("status"), g.get("status"));
    }
}

#[test]
fn the_captured_reviews_get_replies_of_the_accepted_shape() {
    for name in CAPTURES {
        let capture = wire(name);
        let request = &capture["request_body"];
        let (status, response) = reply_json(request.to_string().as_bytes());
        assert_eq!(status, 200, "{name}");
        assert_accepted(request, &response);
        // The same top-level shape as the reply the API server accepted.
        let valid = &capture["a_valid_response_body"];
        let keys = |v: &Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
        let mut want = keys(valid);
        let mut have = keys(&response);
        want.sort();
        have.sort();
        assert_eq!(have, want, "{name}");
        let mut want = keys(&valid["response"]);
        let mut have = keys(&response["response"]);
        want.sort();
        have.sort();
        assert_eq!(have, want, "{name}");
    }
}

#[test]
fn a_list_of_1000_mixed_objects_converts_in_order() {
    let mut objects = Vec::new();
    let samples: Vec<Value> = CAPTURES
        .iter()
        .flat_map(|n| {
            wire(n)["request_body"]["request"]["objects"]
                .as_array()
                .unwrap()
                .clone()
        })
        .collect();
    for i in 0..1000 {
        let mut o = samples[i % samples.len()].clone();
        o["metadata"]["name"] = json!(format!("obj-{i}"));
        o["metadata"]["uid"] = json!(format!("uid-{i}"));
        objects.push(o);
    }
    for desired in ["kudo.dev/v1beta2", "kudo.dev/v1beta1"] {
        let request = json!({"kind": "ConversionReview", "apiVersion": "apiextensions.k8s.io/v1",
            "request": {"uid": "list-1", "desiredAPIVersion": desired, "objects": objects},
            "response": {"uid": "", "convertedObjects": null, "result": {"metadata": {}}}});
        let (status, response) = reply_json(request.to_string().as_bytes());
        assert_eq!(status, 200);
        assert_accepted(&request, &response);
        let names: Vec<&str> = response["response"]["convertedObjects"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["metadata"]["name"].as_str().unwrap())
            .collect();
        assert_eq!(names.len(), 1000);
        assert!(
            names
                .iter()
                .enumerate()
                .all(|(i, n)| *n == format!("obj-{i}"))
        );
    }
}

#[test]
fn an_object_that_is_not_ours_fails_the_review_with_its_name() {
    let request = json!({"kind": "ConversionReview", "apiVersion": "apiextensions.k8s.io/v1",
        "request": {"uid": "u", "desiredAPIVersion": "kudo.dev/v1beta2", "objects": [
            {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "n"}}]}});
    let (status, response) = reply_json(request.to_string().as_bytes());
    assert_eq!(status, 200);
    assert_eq!(response["response"]["uid"], "u");
    assert_eq!(response["response"]["result"]["status"], "Failure");
    let msg = response["response"]["result"]["message"].as_str().unwrap();
    assert!(msg.contains("v1 Pod n/p"), "{msg}");
}

#[test]
fn bad_input_gets_a_well_formed_400_never_a_panic() {
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let huge = format!(
        r#"{{"kind":"ConversionReview","apiVersion":"apiextensions.k8s.io/v1","request":{{"uid":"u","desiredAPIVersion":"kudo.dev/v1beta2","objects":[{{"apiVersion":"kudo.dev/v1beta1","kind":"Operator","metadata":{{"name":"a"}},"spec":{{"description":"{}"}}}}]}}}}"#,
        "x".repeat(50 * 1024 * 1024)
    );
    let cases: Vec<(&str, Vec<u8>, u16)> = vec![
        ("malformed JSON", b"{not json".to_vec(), 400),
        ("empty body", Vec::new(), 400),
        ("invalid UTF-8", vec![b'{', 0xff, 0xfe, b'}'], 400),
        ("100 000-deep nesting", deep.into_bytes(), 400),
        ("no request", br#"{"kind":"ConversionReview","apiVersion":"apiextensions.k8s.io/v1"}"#.to_vec(), 400),
        ("missing uid", br#"{"kind":"ConversionReview","apiVersion":"apiextensions.k8s.io/v1","request":{"uid":"","desiredAPIVersion":"kudo.dev/v1beta2","objects":[]}}"#.to_vec(), 400),
        ("an admission review", br#"{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{"uid":"u"}}"#.to_vec(), 400),
        ("a 50 MB object", huge.into_bytes(), 200),
    ];
    for (name, body, want) in cases {
        let (status, response) = reply_json(&body);
        assert_eq!(status, want, "{name}");
        assert_eq!(response["kind"], "ConversionReview", "{name}");
        if want == 400 {
            assert_eq!(
                response["response"]["result"]["status"], "Failure",
                "{name}"
            );
            assert!(
                !response["response"]["result"]["message"]
                    .as_str()
                    .unwrap()
                    .is_empty()
            );
        }
    }
}
