//! `/convert` on the exact wire format kube-apiserver sends (`tests/fixtures/wire/`), on a LIST-sized
//! review, and on bad input.

use kudo_crd::convert::{NoTypes, V1BETA1_PARAMETERS, V1BETA2_PARAMETERS};
use kudo_webhook::convert_review;
use proptest::prelude::*;
use serde_json::{Value, json};

use kudo_testkit::wire;

fn wire(name: &str) -> Value {
    wire::capture(name)
}

const CAPTURES: &[&str] = &[
    "conversion-instance-v1beta1-to-v1beta2.json",
    "conversion-instance-v1beta2-to-v1beta1.json",
    "conversion-operatorversion-v1beta1-to-v1beta2.json",
];

/// The objects of every captured review.
fn captured_objects() -> Vec<Value> {
    CAPTURES
        .iter()
        .flat_map(|n| {
            wire(n)["request_body"]["request"]["objects"]
                .as_array()
                .unwrap()
                .clone()
        })
        .collect()
}

fn reply_json(body: &[u8]) -> (u16, Value) {
    let (reply, _) = convert_review(body, &NoTypes);
    (
        reply.http_status,
        serde_json::from_slice(&reply.body).unwrap(),
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
        let valid = &capture["response_body"];
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
    let samples = captured_objects();
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
        ("an object that is not a JSON object", br#"{"kind":"ConversionReview","apiVersion":"apiextensions.k8s.io/v1","request":{"uid":"u","desiredAPIVersion":"kudo.dev/v1beta2","objects":[1]}}"#.to_vec(), 400),
        ("metadata that is not a JSON object", br#"{"kind":"ConversionReview","apiVersion":"apiextensions.k8s.io/v1","request":{"uid":"u","desiredAPIVersion":"kudo.dev/v1beta2","objects":[{"apiVersion":"kudo.dev/v1beta1","kind":"Instance","metadata":[]}]}}"#.to_vec(), 400),
        ("a review of another version", br#"{"kind":"ConversionReview","apiVersion":"apiextensions.k8s.io/v1beta1","request":{"uid":"u","desiredAPIVersion":"kudo.dev/v1beta2","objects":[]}}"#.to_vec(), 400),
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

/// Every object of a review, as `/convert` answers and as `convert` (the `Value` path `kudo
/// migrate` uses) gives it: the raw reader and writer must not change a thing.
fn assert_same_as_convert(objects: &[Value], types: &dyn kudo_crd::convert::TypeSource) {
    for desired in ["kudo.dev/v1beta2", "kudo.dev/v1beta1"] {
        let request = json!({"kind": "ConversionReview", "apiVersion": "apiextensions.k8s.io/v1",
            "request": {"uid": "u", "desiredAPIVersion": desired, "objects": objects}});
        let (reply, _) = convert_review(request.to_string().as_bytes(), types);
        assert_eq!(reply.http_status, 200);
        let response: Value = serde_json::from_slice(&reply.body).unwrap();
        let got = response["response"]["convertedObjects"].as_array().unwrap();
        assert_eq!(got.len(), objects.len());
        for (object, got) in objects.iter().zip(got) {
            let want = kudo_crd::convert::convert(object, desired, types).unwrap();
            assert_eq!(got, &want, "{object} to {desired}");
        }
    }
}

struct Fixed(kudo_policy::ParamSchema);

impl kudo_crd::convert::TypeSource for Fixed {
    fn schema(&self, _: &str, _: &str) -> Option<kudo_policy::ParamSchema> {
        Some(self.0.clone())
    }
}

fn fixed_types() -> Fixed {
    Fixed(
        kudo_policy::ParamSchema::from_value(json!({"type": "object", "properties": {
            "NODE_COUNT": {"type": "integer"}, "BACKUP_ENABLED": {"type": "boolean"},
            "PORTS": {"type": "array"}, "A": {"type": "number"}}}))
        .unwrap(),
    )
}

#[test]
fn the_raw_reply_is_what_convert_gives_on_edge_cases() {
    let captured = captured_objects();
    let instance = |metadata: Option<Value>, spec: Option<Value>| {
        let mut o = json!({"apiVersion": "kudo.dev/v1beta1", "kind": "Instance"});
        if let Some(m) = metadata {
            o["metadata"] = m;
        }
        if let Some(s) = spec {
            o["spec"] = s;
        }
        o.as_object_mut()
            .unwrap()
            .insert("status".into(), json!({"x": [1, 2.5, null]}));
        o
    };
    let params =
        json!({"operatorVersion": {"name": "ov"}, "parameters": {"NODE_COUNT": "3", "A": "x"}});
    let mut objects = captured.clone();
    // The captured objects converted once, so the way back restores from the annotation.
    for desired in ["kudo.dev/v1beta2", "kudo.dev/v1beta1"] {
        for o in &captured {
            objects.push(kudo_crd::convert::convert(o, desired, &fixed_types()).unwrap());
        }
    }
    objects.extend([
        instance(None, Some(params.clone())),
        instance(Some(json!({"name": "a"})), Some(params.clone())),
        instance(Some(json!({"name": "a", "annotations": {}})), Some(params.clone())),
        instance(Some(json!({"name": "a", "annotations": null})), Some(params.clone())),
        instance(
            Some(json!({"name": "a\"b\\c\u{2028}ü", "annotations": {"k\"ey": "v\n", V1BETA2_PARAMETERS: "{\"NODE_COUNT\":3}"}})),
            Some(params.clone()),
        ),
        instance(
            Some(json!({"annotations": {V1BETA2_PARAMETERS: "not json"}})),
            Some(params.clone()),
        ),
        instance(Some(json!({"name": "a"})), Some(json!({"operatorVersion": {"name": "ov"}}))),
        instance(Some(json!({"name": "a"})), None),
        json!({"apiVersion": "kudo.dev/v1beta2", "kind": "Instance", "spec": {"parameters": {"x": {"y": [1, "2", true]}}}}),
        json!({"apiVersion": "kudo.dev/v1beta1", "kind": "Operator", "metadata": {"name": "o"}, "spec": {"a": 1}}),
        json!({"apiVersion": "kudo.dev/v1beta1", "kind": "OperatorVersion", "metadata": {"name": "ov", "annotations": {"a": "b"}},
            "spec": {"parameters": [{"name": "A", "default": "1", "value-type": "number"}, {"name": "B"}], "templates": {"t.yaml": "x"}}}),
        json!({"apiVersion": "kudo.dev/v1beta1", "kind": "OperatorVersion", "spec": {"parameters": {"not": "a list"}}}),
        json!({"apiVersion": "kudo.dev/v1beta1", "kind": "Instance", "x\"y\u{e9}": {"a": "\u{1F600}"},
            "metadata": {"na\\me": "q", "annotations": {"\"": "\\"}},
            "spec": {"para\nmeters": 1, "parameters": {"K": "v"}, "operatorVersion": {"name": "o\"v"}}}),
    ]);
    for types in [
        &NoTypes as &dyn kudo_crd::convert::TypeSource,
        &fixed_types(),
    ] {
        assert_same_as_convert(&objects, types);
    }
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        any::<bool>().prop_map(Value::from),
        any::<i32>().prop_map(Value::from),
        "[a-z\"\\\\é]{0,5}".prop_map(Value::from),
        Just(Value::Null),
    ];
    leaf.prop_recursive(3, 12, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
            prop::collection::btree_map("[A-Za-z\"]{1,4}", inner, 0..3)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn generated_object() -> impl Strategy<Value = Value> {
    let annotations = prop_oneof![
        Just(None),
        Just(Some(Value::Null)),
        prop::collection::btree_map(
            prop_oneof![
                Just(V1BETA1_PARAMETERS.to_string()),
                Just(V1BETA2_PARAMETERS.to_string()),
                "[a-z\"/.]{1,6}".prop_map(String::from),
            ],
            prop_oneof![
                json_value().prop_map(|v| v.to_string()),
                "[a-z{}\":]{0,8}".prop_map(String::from),
            ],
            0..3
        )
        .prop_map(|m| Some(Value::Object(
            m.into_iter().map(|(k, v)| (k, Value::String(v))).collect()
        ))),
    ];
    let metadata = prop::option::of((annotations, "[a-z\"é]{0,4}"));
    let spec = prop::option::of((
        prop::option::of(json_value()),
        prop::option::of("[a-z]{1,3}"),
    ));
    (
        prop::sample::select(vec!["kudo.dev/v1beta1", "kudo.dev/v1beta2"]),
        prop::sample::select(vec!["Instance", "OperatorVersion", "Operator"]),
        metadata,
        spec,
        prop::option::of(json_value()),
    )
        .prop_map(|(api, kind, metadata, spec, status)| {
            let mut o = serde_json::Map::new();
            if let Some(s) = &status {
                o.insert("status".into(), s.clone());
            }
            o.insert("apiVersion".into(), json!(api));
            o.insert("kind".into(), json!(kind));
            if let Some((annotations, name)) = metadata {
                let mut m = serde_json::Map::new();
                m.insert("name".into(), json!(name));
                if let Some(a) = annotations {
                    m.insert("annotations".into(), a);
                }
                m.insert("namespace".into(), json!("ns"));
                o.insert("metadata".into(), Value::Object(m));
            }
            if let Some((parameters, ov)) = spec {
                let mut s = serde_json::Map::new();
                if let Some(p) = parameters {
                    s.insert("parameters".into(), p);
                }
                if let Some(ov) = ov {
                    s.insert("operatorVersion".into(), json!({"name": ov}));
                }
                o.insert("spec".into(), Value::Object(s));
            }
            Value::Object(o)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn the_raw_reply_is_what_convert_gives_on_generated_objects(
        objects in prop::collection::vec(generated_object(), 1..4),
    ) {
        for types in [&NoTypes as &dyn kudo_crd::convert::TypeSource, &fixed_types()] {
            assert_same_as_convert(&objects, types);
        }
    }
}
