//! Bounded under bad input (issue 38), on the real API server: what one tenant writes cannot
//! take the webhook's memory, flood a client with a denial, or break the reads of every
//! Instance in the cluster.

use crate::harness::*;

/// `kubectl VERB -f FILE` with the scenario's kubeconfig, in its namespace: success, stdout and
/// stderr.
pub(crate) fn kubectl_file(s: &Scenario, verb: &str, file: &Path) -> (bool, String, String) {
    let out = s
        .kubectl(&[verb, "-n", &s.namespace, "-f"])
        .arg(file)
        .output()
        .expect("kubectl runs (it is on the PATH)");
    (out.status.success(), text(&out.stdout), text(&out.stderr))
}

/// `kubectl get instances.VERSION.kudo.dev -A -o name`: success and stderr.
fn list_every_instance(s: &Scenario, version: &str) -> (bool, String) {
    let out = s
        .kubectl(&[
            "get",
            &format!("instances.{version}.kudo.dev"),
            "-A",
            "-o",
            "name",
        ])
        .output()
        .expect("kubectl runs");
    (out.status.success(), text(&out.stderr))
}

/// An Instance of the suite's operator named `name` with `parameters`.
pub(crate) fn instance(s: &Scenario, name: &str, parameters: Value) -> Value {
    let ov = s.instance("cfg")["spec"]["operatorVersion"].clone();
    json!({"apiVersion": "kudo.dev/v1beta2", "kind": "Instance",
        "metadata": {"name": name, "namespace": s.namespace},
        "spec": {"operatorVersion": ov, "parameters": parameters}})
}

/// Finding 4: an Instance whose v1beta1 form cannot be held (Kubernetes' 256 KiB limit on the
/// annotations of one object) was admitted, and then every `kubectl get
/// instances.v1beta1.kudo.dev -A` in the cluster failed. A 300 KiB value is refused by the
/// policy's bounds; a 150 KiB one applied with `kubectl apply` (which keeps the whole object
/// in its last-applied annotation) is refused because read as v1beta1 it would hold both;
/// the same value written without that annotation is admitted. After each, every Instance of
/// the cluster lists in both versions.
#[test]
fn an_instance_that_could_not_be_read_as_v1beta1_is_refused_and_lists_keep_working() {
    let Some(s) = Scenario::start("limits-v1beta1") else {
        return;
    };
    s.install(&configs(), "cfg").ok();
    let dir = tempfile::tempdir().unwrap();
    let huge = dir.path().join("huge.json");
    let value = "x".repeat(300 * 1024);
    let object = instance(&s, "huge", json!({"rotation": {"secret": value}}));
    std::fs::write(&huge, object.to_string()).unwrap();
    let (applied, _, stderr) = kubectl_file(&s, "apply", &huge);
    assert!(!applied, "a 300 KiB value was admitted");
    assert!(
        stderr.contains("are more than 262144 bytes as JSON") && stderr.contains("[too-large]"),
        "{stderr}"
    );
    let big = dir.path().join("big.json");
    let value = "y".repeat(150 * 1024);
    let object = instance(&s, "big", json!({"rotation": {"secret": value}}));
    std::fs::write(&big, object.to_string()).unwrap();
    let (applied, _, stderr) = kubectl_file(&s, "apply", &big);
    assert!(!applied, "an Instance unreadable as v1beta1 was admitted");
    assert!(
        stderr.contains("read as kudo.dev/v1beta1 this object would hold")
            && stderr.contains("kubectl.kubernetes.io/last-applied-configuration ("),
        "{stderr}"
    );
    for version in ["v1beta1", "v1beta2"] {
        let (listed, stderr) = list_every_instance(&s, version);
        assert!(listed, "instances.{version} -A: {stderr}");
    }
    // Without the last-applied copy it fits: admitted, and read back through v1beta1 whole.
    let (created, _, stderr) = kubectl_file(&s, "create", &big);
    assert!(created, "{stderr}");
    let read = s
        .get(&s.instances("v1beta1"), "big")
        .expect("readable as v1beta1");
    assert_eq!(
        read["spec"]["parameters"]["rotation"],
        json!(json!({"secret": value}).to_string())
    );
    for version in ["v1beta1", "v1beta2"] {
        let (listed, stderr) = list_every_instance(&s, version);
        assert!(listed, "instances.{version} -A: {stderr}");
    }
}
