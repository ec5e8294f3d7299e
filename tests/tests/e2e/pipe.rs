//! KUDO's Pipe task for real (issue 33): a busybox init container run by the fake kubelet
//! (sandboxed, no network), its files read with `exec` as the Instance's ServiceAccount and
//! copied into Secrets and ConfigMaps byte-exact; the files that cannot be copied, and an init
//! container that keeps failing (the real cowsay operator, whose `wget` has no network), fail
//! the step at once, naming why, and leave no Pod behind. Workloads whose containers crash say
//! so while the plan waits.

use base64::Engine as _;

use crate::harness::*;

/// The Pipe Pods left in the scenario's namespace.
fn pipe_pods(s: &Scenario) -> Vec<String> {
    s.runtime
        .block_on(s.api("v1", "Pod", "pods").list(&Default::default()))
        .expect("the API server lists Pods")
        .items
        .into_iter()
        .filter(|p| {
            p.metadata
                .annotations
                .as_ref()
                .is_some_and(|a| a.contains_key("kudo.dev/pipepod"))
        })
        .filter_map(|p| p.metadata.name)
        .collect()
}

/// `kudo install PACKAGE --instance NAME --wait -p...`: its output, and how long it took.
fn install_waiting(
    s: &Scenario,
    package: &Path,
    name: &str,
    params: &[&str],
) -> (std::process::Output, Duration) {
    let started = Instant::now();
    let out = s
        .install(package, name)
        .params(params)
        .args(&["--wait-time", "170s"])
        .output();
    (out, started.elapsed())
}

/// The step's message in `kudo plan status`.
fn plan_status(s: &Scenario, name: &str) -> String {
    let out = s
        .kudo(&["plan", "status", name, "-n", &s.namespace])
        .output()
        .expect("kudo runs");
    text(&out.stdout)
}

/// A Pipe task copies a 500,000-byte random file into a Secret and a text file naming its
/// SHA-256 into a ConfigMap, byte-exact; the next step names both through `.Pipes`, and the
/// Pipe Pod is gone.
#[test]
fn a_pipe_copies_a_binary_file_into_a_secret_and_a_text_file_into_a_config_map() {
    let Some(s) = Scenario::start_with_workloads("pipe-files", false) else {
        return;
    };
    let (out, took) = install_waiting(&s, &fixture("e2e/pipe-files"), "pf", &[]);
    assert!(
        out.status.success(),
        "{}\n{}",
        text(&out.stderr),
        plan_status(&s, "pf")
    );
    say(&format!(
        "e2e: pipe-files: COMPLETE in {:.1} s",
        took.as_secs_f64()
    ));
    let refs = s.config_map("pf-refs");
    let (secret, notes) = (
        refs["blob"]
            .as_str()
            .expect("the Secret's name")
            .to_string(),
        refs["notes"]
            .as_str()
            .expect("the ConfigMap's name")
            .to_string(),
    );
    let b64 = base64::engine::general_purpose::STANDARD;
    let secret = s
        .get(&s.api("v1", "Secret", "secrets"), &secret)
        .expect("the Pipe's Secret exists");
    let blob = b64
        .decode(secret["data"]["blob.bin"].as_str().expect("key blob.bin"))
        .expect("base64");
    assert_eq!(blob.len(), 500_000);
    let cm = s
        .get(&s.api("v1", "ConfigMap", "configmaps"), &notes)
        .expect("the Pipe's ConfigMap exists");
    let notes = b64
        .decode(
            cm["binaryData"]["notes.txt"]
                .as_str()
                .expect("key notes.txt"),
        )
        .expect("base64");
    let notes = String::from_utf8(notes).expect("text");
    let digest: String = ring::digest::digest(&ring::digest::SHA256, &blob)
        .as_ref()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(
        notes,
        format!("{digest}\nwritten by pf for e2e-pipe-files\n"),
        "the Secret holds what the init container wrote"
    );
    assert!(secret["metadata"]["ownerReferences"][0]["kind"] == "Instance");
    assert!(pipe_pods(&s).is_empty(), "{:?}", pipe_pods(&s));
}

/// A file the init container did not write, and one too large for a Secret: each fails its
/// step at once (FATAL_ERROR, `--wait` ends) with a message naming the file, and the Pipe Pod
/// is deleted.
#[test]
fn a_missing_or_too_large_pipe_file_fails_the_step_and_leaves_no_pod() {
    let Some(s) = Scenario::start_with_workloads("pipe-bad", false) else {
        return;
    };
    let package = fixture("e2e/pipe-files");
    for (name, params, says) in [
        (
            "missing",
            &["SKIP_NOTES=true"][..],
            "pipe file /out/notes.txt of Pod missing.deploy.main.produce.produce.pipepod cannot be read",
        ),
        (
            "large",
            &["BLOB_BYTES=1500000"][..],
            "pipe file /out/blob.bin of Pod large.deploy.main.produce.produce.pipepod is larger than 1048576 bytes, the most a Secret holds",
        ),
    ] {
        let (out, took) = install_waiting(&s, &package, name, params);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{name}: {err}");
        assert!(err.contains(says), "{name}: {says} in: {err}");
        assert!(
            took < Duration::from_secs(90),
            "{name}: --wait took {took:?}"
        );
        let status = plan_status(&s, name);
        assert!(
            status.contains("step produce [FATAL_ERROR]") && status.contains(says),
            "{status}"
        );
        wait_until("the failed Pipe Pod is deleted", || {
            !pipe_pods(&s).iter().any(|p| p.starts_with(name))
        });
        say(&format!(
            "e2e: pipe {name}: FATAL_ERROR in {:.1} s",
            took.as_secs_f64()
        ));
    }
}

/// The real cowsay operator: its Pipe's `wget` has no network (exit code 4 here). The step
/// names the init container, its exit code, its failures and its last log lines while it
/// retries; after `--pipe-max-restarts` (3) failures the plan is FATAL_ERROR, `install --wait`
/// ends with that message, and the Pipe Pod is gone.
#[test]
fn cowsay_whose_pipe_has_no_network_fails_saying_why() {
    let Some(s) = Scenario::start_with_workloads("cowsay", false) else {
        return;
    };
    let Some(shared) = kudo_testkit::shared() else {
        return;
    };
    let package = shared.join("corpus/kudo-operators-full/cowsay");
    let (out, took) = install_waiting(&s, &package, "cow", &[]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    say(&format!(
        "e2e: cowsay: FATAL_ERROR in {:.1} s: {}",
        took.as_secs_f64(),
        err.trim()
    ));
    for says in [
        "Pipe Pod cow.deploy.main.genfiles.genwww.pipepod",
        "the init container of Pipe task `genwww` failed 3 times (kudo-manager --pipe-max-restarts 3)",
        "init container init: Init:",
        "exit code 4",
        "last log lines:",
        "cowsay.morecode.org",
    ] {
        assert!(err.contains(says), "{says} in: {err}");
    }
    assert!(took < Duration::from_secs(150), "--wait took {took:?}");
    let status = plan_status(&s, "cow");
    assert!(
        status.contains("step genfiles [FATAL_ERROR]") && status.contains("exit code 4"),
        "{status}"
    );
    wait_until("the failed Pipe Pod is deleted", || {
        pipe_pods(&s).is_empty()
    });
}

/// A Deployment whose container crashes (the fake kubelet's `fake-kubelet/fail`): the step
/// waits, and its message names the Pod's container and its CrashLoopBackOff.
#[test]
fn a_workload_whose_container_crashes_says_so_while_the_plan_waits() {
    let Some(s) = Scenario::start_with_workloads("crashing", false) else {
        return;
    };
    let package = fixture("e2e/crashing").to_string_lossy().into_owned();
    s.kudo(&["install", &package, "--instance", "cr", "-n", &s.namespace])
        .assert()
        .success();
    let says = |i: &Value| {
        i["status"]["planStatus"]["deploy"]["phases"][0]["steps"][0]["message"]
            .as_str()
            .unwrap_or("")
            .to_string()
    };
    wait_until("the step names the crashing container", || {
        let m = says(&s.instance("cr"));
        m.starts_with("Deployment cr-app: replicas: 0 of 1 available")
            && m.contains(": container main: CrashLoopBackOff")
    });
    let status = plan_status(&s, "cr");
    assert!(
        status.contains("step app [IN_PROGRESS]")
            && status.contains("container main: CrashLoopBackOff"),
        "{status}"
    );
}
