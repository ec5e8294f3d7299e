//! Bounded under bad input (issue 38), on the real API server: what one tenant writes cannot
//! take the webhook's memory, flood a client with a denial, or break the reads of every
//! Instance in the cluster.

use crate::harness::*;

/// `kubectl VERB -f FILE` with the scenario's kubeconfig, in its namespace: success, stdout and
/// stderr.
fn kubectl_file(s: &Scenario, verb: &str, file: &Path) -> (bool, String, String) {
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

/// `VmHWM` (the peak resident memory) of process `pid`, in KiB.
fn peak_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM")
}

/// An Instance of the suite's operator named `name` with `parameters`.
fn instance(s: &Scenario, name: &str, parameters: Value) -> Value {
    let ov = s.instance("cfg")["spec"]["operatorVersion"].clone();
    json!({"apiVersion": "kudo.dev/v1beta2", "kind": "Instance",
        "metadata": {"name": name, "namespace": s.namespace},
        "spec": {"operatorVersion": ov, "parameters": parameters}})
}

/// Finding 1: an Instance with 150,000 parameter keys (2.6 MB, under the API server's limit),
/// written with `kubectl create`, drove the webhook to a 336 MB peak and answered with a 13.8 MB
/// denial. Now refused whole, in a denial of a few hundred bytes, with the webhook's peak
/// resident memory while answering it under 128 MiB (measured from /proc: the peak is reset
/// first, and the scenario has the cluster to itself).
#[test]
fn a_150000_key_instance_is_refused_in_a_short_denial_and_the_webhook_stays_small() {
    let Some(s) = Scenario::start_alone("limits-keys") else {
        return;
    };
    s.install(&configs(), "cfg").ok();
    let keys: serde_json::Map<String, Value> = (0..150_000)
        .map(|i| (format!("key{i:06}"), json!("value")))
        .collect();
    let object = instance(&s, "wide", Value::Object(keys));
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("wide.json");
    std::fs::write(&file, object.to_string()).unwrap();
    let size = std::fs::metadata(&file).unwrap().len();
    assert!(size > 2_500_000, "{size} bytes");
    let pid = s.daemons.webhook_pid();
    // Reset the peak (Linux: 5 > clear_refs), so what follows is this request's.
    std::fs::write(format!("/proc/{pid}/clear_refs"), "5").expect("the peak can be reset");
    let before = peak_kib(pid);
    let (created, _, stderr) = kubectl_file(&s, "create", &file);
    let peak = peak_kib(pid);
    say(&format!(
        "limits-keys: {size}-byte Instance; webhook peak {before} KiB before, {peak} KiB after; denial {} bytes",
        stderr.len()
    ));
    assert!(!created, "the Instance was created");
    assert!(
        stderr.contains("denied the request") && stderr.contains("[too-large]"),
        "{stderr}"
    );
    assert!(stderr.len() <= 64 * 1024, "{} bytes", stderr.len());
    assert!(peak <= 128 * 1024, "the webhook's peak: {peak} KiB");
    assert!(s.get(&s.instances("v1beta2"), "wide").is_none());
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
