//! Bounded under bad input (issue 38), on the real API server: what one tenant writes cannot
//! take the webhook's memory. Alone: the webhook's peak memory is its own answer's.

use crate::harness::*;
use crate::limits::{instance, kubectl_file};

/// `VmHWM` (the peak resident memory) of process `pid`, in KiB.
fn peak_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM")
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
