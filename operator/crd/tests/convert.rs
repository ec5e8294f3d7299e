//! Conversion on the objects kube-apiserver really sent (`tests/fixtures/wire/`), and round trips.

use kudo_crd::convert::{self, NoTypes, TypeSource, V1BETA1_PARAMETERS};
use kudo_policy::ParamSchema;
use serde_json::{Value, json};

use kudo_testkit::wire;

fn wire(name: &str) -> Value {
    wire::capture(name)
}

fn objects(capture: &Value) -> Vec<Value> {
    capture["request_body"]["request"]["objects"]
        .as_array()
        .unwrap()
        .clone()
}

/// The OperatorVersion of the captures, converted, as the webhook's cache would hold it.
struct Captured(ParamSchema);

impl TypeSource for Captured {
    fn schema(&self, namespace: &str, name: &str) -> Option<ParamSchema> {
        (namespace == wire::NAMESPACE && name == "sample-app-0.1.0").then(|| self.0.clone())
    }
}

fn captured_types() -> Captured {
    let ov = objects(&wire("conversion-operatorversion-v1beta1-to-v1beta2.json")).remove(0);
    let up = convert::convert(&ov, "kudo.dev/v1beta2", &NoTypes).unwrap();
    Captured(ParamSchema::from_value(up["spec"]["parameters"].clone()).unwrap())
}

fn without(mut v: Value, annotation: &str) -> Value {
    if let Some(a) = v
        .pointer_mut("/metadata/annotations")
        .and_then(Value::as_object_mut)
    {
        a.remove(annotation);
        if a.is_empty() {
            v["metadata"].as_object_mut().unwrap().remove("annotations");
        }
    }
    v
}

#[test]
fn a_stored_v1beta1_instance_reads_as_typed_v1beta2() {
    let capture = wire("conversion-instance-v1beta1-to-v1beta2.json");
    let desired = capture["request_body"]["request"]["desiredAPIVersion"]
        .as_str()
        .unwrap();
    let types = captured_types();
    for obj in objects(&capture) {
        let out = convert::convert(&obj, desired, &types).unwrap();
        assert_eq!(out["apiVersion"], desired);
        assert_eq!(out["kind"], obj["kind"]);
        assert_eq!(out["status"], obj["status"]);
        // metadata: only our annotation is added
        assert_eq!(
            without(out.clone(), V1BETA1_PARAMETERS)["metadata"],
            obj["metadata"]
        );
        assert_eq!(
            out["spec"]["parameters"],
            json!({"BACKUP_CREDENTIALS_PASSWORD": "hunter2-hunter2",
                "BACKUP_CREDENTIALS_USERNAME": "backup-user", "BACKUP_ENABLED": true,
                "CLUSTER_NAME": "blue", "NODE_COUNT": 3, "PORTS": [80]})
        );
        assert_eq!(
            out["spec"]["operatorVersion"],
            obj["spec"]["operatorVersion"]
        );
        // without the OperatorVersion's types the values stay as they are
        let untyped = convert::convert(&obj, desired, &NoTypes).unwrap();
        assert_eq!(untyped["spec"]["parameters"], obj["spec"]["parameters"]);
        // and back, exactly the stored object, whichever way it was typed
        for v2 in [out, untyped] {
            assert_eq!(
                convert::convert(&v2, "kudo.dev/v1beta1", &types).unwrap(),
                obj
            );
        }
    }
}

#[test]
fn a_v1beta1_operator_version_reads_as_a_schema_and_back() {
    let capture = wire("conversion-operatorversion-v1beta1-to-v1beta2.json");
    for obj in objects(&capture) {
        let out = convert::convert(&obj, "kudo.dev/v1beta2", &NoTypes).unwrap();
        let schema = &out["spec"]["parameters"];
        assert_eq!(schema["type"], "object");
        assert_eq!(schema["properties"]["NODE_COUNT"]["type"], "integer");
        assert_eq!(schema["properties"]["NODE_COUNT"]["default"], 3);
        assert_eq!(schema["properties"]["PORTS"]["default"], json!([80, 443]));
        assert_eq!(schema["properties"]["BACKUP_ENABLED"]["trigger"], "backup");
        for key in ["templates", "tasks", "plans", "operator", "version"] {
            assert_eq!(out["spec"][key], obj["spec"][key], "{key}");
        }
        assert_eq!(
            convert::convert(&out, "kudo.dev/v1beta1", &NoTypes).unwrap(),
            obj
        );
    }
}

#[test]
fn a_v1beta2_instance_reads_through_v1beta1_and_back() {
    let capture = wire("conversion-instance-v1beta2-to-v1beta1.json");
    for obj in objects(&capture) {
        let down = convert::convert(&obj, "kudo.dev/v1beta1", &NoTypes).unwrap();
        let params = down["spec"]["parameters"].as_object().unwrap();
        assert!(params.values().all(Value::is_string), "{params:?}");
        assert_eq!(
            params["topology"],
            json!(r#"[{"datacenterName":"dc-a","nodes":3}]"#)
        );
        assert_eq!(
            convert::convert(&down, "kudo.dev/v1beta2", &NoTypes).unwrap(),
            obj
        );
    }
}

/// `spec.serviceAccountName` is served in both versions (docs/tenancy.md): each direction
/// copies it, and the v1beta1 CRD's schema declares it, so the API server does not prune it.
#[test]
fn the_service_account_name_survives_both_directions() {
    let capture = wire("conversion-instance-v1beta2-to-v1beta1.json");
    for mut obj in objects(&capture) {
        obj["spec"]["serviceAccountName"] = json!("tenant-sa");
        let down = convert::convert(&obj, "kudo.dev/v1beta1", &NoTypes).unwrap();
        assert_eq!(down["spec"]["serviceAccountName"], "tenant-sa");
        assert_eq!(
            convert::convert(&down, "kudo.dev/v1beta2", &NoTypes).unwrap(),
            obj
        );
    }
    for crd in kudo_crd::definitions() {
        if crd.spec.names.kind != "Instance" {
            continue;
        }
        for v in &crd.spec.versions {
            let schema = serde_json::to_value(&v.schema).unwrap();
            assert_eq!(
                schema
                    .pointer("/openAPIV3Schema/properties/spec/properties/serviceAccountName/type"),
                Some(&json!("string")),
                "{} declares spec.serviceAccountName",
                v.name
            );
        }
    }
}

#[test]
fn objects_that_are_not_ours_are_refused_and_ours_never_are() {
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}});
    assert!(convert::convert(&pod, "kudo.dev/v1beta2", &NoTypes).is_err());
    let inst =
        json!({"apiVersion": "kudo.dev/v1beta1", "kind": "Instance", "metadata": {"name": "i"}});
    assert!(convert::convert(&inst, "kudo.dev/v9", &NoTypes).is_err());
    // no spec, no parameters, odd values: converted, never refused
    for spec in [
        json!(null),
        json!({}),
        json!({"parameters": {}}),
        json!({"parameters": {"A": "[unclosed"}}),
    ] {
        let mut o = inst.clone();
        if !spec.is_null() {
            o["spec"] = spec;
        }
        let up = convert::convert(&o, "kudo.dev/v1beta2", &NoTypes).unwrap();
        assert_eq!(
            convert::convert(&up, "kudo.dev/v1beta1", &NoTypes).unwrap(),
            o
        );
    }
    let op = json!({"apiVersion": "kudo.dev/v1beta1", "kind": "Operator", "metadata": {"name": "o"}, "spec": {"description": "d"}});
    let up = convert::convert(&op, "kudo.dev/v1beta2", &NoTypes).unwrap();
    assert_eq!(up["spec"], op["spec"]);
    assert_eq!(up["apiVersion"], "kudo.dev/v1beta2");
}

/// Issue 38: an object whose form in the other version would pass Kubernetes' 256 KiB limit on
/// annotations cannot be served in it; [`servable`] says so, naming the resource, the version
/// and the largest annotations, for Instances and OperatorVersions alike.
#[test]
fn an_object_whose_other_version_passes_the_annotation_limit_is_not_servable() {
    use kudo_crd::convert::{MAX_ANNOTATIONS_BYTES, servable};
    let big = "d".repeat(200 * 1024);
    let ov = json!({"apiVersion": "kudo.dev/v1beta2", "kind": "OperatorVersion",
        "metadata": {"name": "big-1.0.0", "namespace": "ns"},
        "spec": {"version": "1.0.0", "parameters": {"type": "object", "properties": {
            "a": {"type": "string", "description": big}}}}});
    assert!(servable(&ov, &NoTypes).is_ok(), "200 KiB fits");
    let mut bigger = ov.clone();
    bigger["metadata"]["annotations"] = json!({"note": "n".repeat(100 * 1024)});
    let why = servable(&bigger, &NoTypes).unwrap_err();
    assert_eq!(why.resource, "operatorversions");
    assert_eq!(why.version, "kudo.dev/v1beta1");
    assert!(why.bytes > MAX_ANNOTATIONS_BYTES);
    assert_eq!(why.largest[0].0, "kudo.dev/v1beta2-parameters");
    assert_eq!(why.largest[1].0, "note");
    let text = why.to_string();
    assert!(
        text.contains("kubectl get operatorversions.v1beta1.kudo.dev -A"),
        "{text}"
    );
    // What conversion really produces is what was measured.
    let down = convert::convert(&bigger, "kudo.dev/v1beta1", &NoTypes).unwrap();
    let bytes: usize = down["metadata"]["annotations"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| k.len() + v.as_str().unwrap().len())
        .sum();
    assert_eq!(bytes, why.bytes);
    // A v1beta1 Instance whose values would be kept whole in the v1beta2 form's annotation.
    let inst = json!({"apiVersion": "kudo.dev/v1beta1", "kind": "Instance",
        "metadata": {"name": "i", "namespace": "ns",
            "annotations": {"note": "n".repeat(100 * 1024)}},
        "spec": {"operatorVersion": {"name": "big-1.0.0"}, "parameters": {"A": big}}});
    let why = servable(&inst, &NoTypes).unwrap_err();
    assert_eq!(
        (why.resource.as_str(), why.version),
        ("instances", "kudo.dev/v1beta2")
    );
}
