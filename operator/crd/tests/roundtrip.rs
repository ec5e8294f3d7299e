//! Property tests: v1beta1 → v1beta2 → v1beta1 and v1beta2 → v1beta1 → v1beta2 are identities
//! on generated objects, with and without the OperatorVersion's types.

use kudo_crd::convert::{NoTypes, TypeSource, convert};
use kudo_policy::ParamSchema;
use proptest::prelude::*;
use serde_json::{Map, Value, json};

const TYPES: &[&str] = &["string", "integer", "number", "boolean", "array", "map"];

struct Fixed(ParamSchema);

impl TypeSource for Fixed {
    fn schema(&self, _: &str, _: &str) -> Option<ParamSchema> {
        Some(self.0.clone())
    }
}

fn name() -> impl Strategy<Value = String> {
    "[A-Z][A-Z_]{0,6}"
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z0-9 ]{0,8}",
        Just("3".to_string()),
        Just("-7".to_string()),
        Just("1.5".to_string()),
        Just("true".to_string()),
        Just("NO".to_string()),
        Just("[80, 443]".to_string()),
        Just("{a: 1}".to_string()),
        Just("[unclosed".to_string()),
        Just(String::new()),
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        any::<bool>().prop_map(Value::from),
        any::<i32>().prop_map(Value::from),
        "[a-z]{0,5}".prop_map(Value::from),
        Just(Value::Null),
    ];
    leaf.prop_recursive(3, 12, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
            prop::collection::btree_map("[a-z]{1,4}", inner, 0..3)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn object(api: &str, kind: &str, spec: Value) -> Value {
    json!({"apiVersion": api, "kind": kind,
        "metadata": {"name": "x", "namespace": "ns", "uid": "u-1", "labels": {"a": "b"},
            "annotations": {"team": "t"}, "resourceVersion": "7"},
        "spec": spec, "status": {"conditions": [{"type": "Ready", "status": "True"}]}})
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn v1beta1_instances_round_trip(
        values in prop::collection::btree_map(name(), text(), 0..6),
        types in prop::collection::vec(prop::sample::select(TYPES), 6),
    ) {
        let params: Map<String, Value> = values.iter().map(|(k, v)| (k.clone(), json!(v))).collect();
        let obj = object("kudo.dev/v1beta1", "Instance",
            json!({"operatorVersion": {"name": "ov"}, "parameters": params}));
        let schema_props: Map<String, Value> = values.keys().zip(types.iter().cycle())
            .map(|(k, t)| (k.clone(), json!({"type": if *t == "map" { "object" } else { *t }})))
            .collect();
        let typed = Fixed(ParamSchema::from_value(json!({"type": "object", "properties": schema_props})).unwrap());
        for source in [&typed as &dyn TypeSource, &NoTypes] {
            let up = convert(&obj, "kudo.dev/v1beta2", source).unwrap();
            prop_assert_eq!(convert(&up, "kudo.dev/v1beta1", source).unwrap(), obj.clone());
        }
    }

    #[test]
    fn v1beta2_instances_round_trip(values in prop::collection::btree_map("[a-z]{1,6}", json_value(), 0..6)) {
        let params: Map<String, Value> = values.into_iter().collect();
        let obj = object("kudo.dev/v1beta2", "Instance",
            json!({"operatorVersion": {"name": "ov"}, "parameters": params}));
        let down = convert(&obj, "kudo.dev/v1beta1", &NoTypes).unwrap();
        prop_assert!(down["spec"]["parameters"].as_object().unwrap().values().all(Value::is_string));
        prop_assert_eq!(convert(&down, "kudo.dev/v1beta2", &NoTypes).unwrap(), obj);
    }

    #[test]
    fn operator_versions_round_trip(
        params in prop::collection::btree_map(name(), (prop::sample::select(TYPES), prop::option::of(text()), any::<bool>()), 0..6),
    ) {
        let list: Vec<Value> = params.iter().map(|(n, (t, d, req))| {
            let mut p = json!({"name": n, "value-type": t, "required": req});
            if let Some(d) = d {
                p["default"] = json!(d);
            }
            p
        }).collect();
        let v1 = object("kudo.dev/v1beta1", "OperatorVersion",
            json!({"version": "1.0.0", "parameters": list, "templates": {"a.yaml": "x"}}));
        let up = convert(&v1, "kudo.dev/v1beta2", &NoTypes).unwrap();
        prop_assert_eq!(convert(&up, "kudo.dev/v1beta1", &NoTypes).unwrap(), v1);
        // and from v1beta2: a nested schema survives a read through v1beta1
        let schema = json!({"type": "object", "required": ["a"], "properties": {
            "a": {"type": "object", "trigger": "t", "properties": {"b": {"type": "integer", "default": 1}}},
            "c": {"type": "string", "enum": ["x", "y"], "immutable": true}}});
        let v2 = object("kudo.dev/v1beta2", "OperatorVersion", json!({"parameters": schema}));
        let down = convert(&v2, "kudo.dev/v1beta1", &NoTypes).unwrap();
        prop_assert_eq!(down["spec"]["parameters"][0]["value-type"].clone(), json!("map"));
        prop_assert_eq!(convert(&down, "kudo.dev/v1beta2", &NoTypes).unwrap(), v2);
    }
}
