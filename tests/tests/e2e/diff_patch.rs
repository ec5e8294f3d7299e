//! `kudo diff` and `kudo patch` on the real control plane, with the cassandra example: its
//! topology array, its update and backup-update plans, and its writeOnly backup password that a
//! template puts into a Secret.

use crate::harness::*;

#[test]
fn diff_shows_values_plan_and_objects_and_patch_edits_an_array_with_nothing_secret_shown() {
    let Some(s) = Scenario::start_with_workloads("diff-patch", false) else {
        return;
    };
    let ns = s.namespace.clone();
    let cassandra = example("cassandra-v1beta2");
    let old_secret = "first-backup-secret-1234";
    let new_secret = "second-backup-secret-5678";
    s.install(&cassandra, "cass")
        .param(&format!("backup/credentials/password={old_secret}"))
        .ok();
    s.wait_plan("cass", "deploy");
    let generation = || s.instance("cass")["metadata"]["generation"].clone();
    let before = generation();
    let diff = |args: &[&str]| {
        let mut all = vec!["diff", "--instance", "cass", "-n", &ns];
        all.extend_from_slice(args);
        s.kudo(&all).output().expect("kudo diff runs")
    };

    // Nothing given: the drift of what kudo applied, none here, exit 0.
    let out = diff(&[]);
    assert_eq!(out.status.code(), Some(0), "{}", both(&out));
    let shown = both(&out);
    assert!(shown.contains("no drift"), "{shown}");

    // A value: its plan, and the StatefulSet's diff from the API server's dry run; exit 1.
    let started = Instant::now();
    let out = diff(&["-p", "nodeCount=4"]);
    say(&format!(
        "e2e: kudo diff of cassandra (-p nodeCount=4: the update plan's objects, each read and dry-run applied) in {:.2} s",
        started.elapsed().as_secs_f64()
    ));
    let shown = both(&out);
    assert_eq!(out.status.code(), Some(1), "{shown}");
    assert!(shown.contains("/nodeCount: 3 -> 4"), "{shown}");
    assert!(shown.contains("plan: update would run"), "{shown}");
    assert!(
        shown.contains(&format!("StatefulSet {ns}/cass-node")),
        "{shown}"
    );
    assert!(shown.contains("-  replicas: 3"), "{shown}");
    assert!(shown.contains("+  replicas: 4"), "{shown}");
    assert!(!shown.contains("managedFields"), "{shown}");
    // The Service's content does not depend on nodeCount: unchanged, not shown.
    assert!(!shown.contains("cass-svc"), "{shown}");
    assert!(
        shown.contains("other object(s) of the plan unchanged"),
        "{shown}"
    );

    // The secret: its plan and its Secret, both sides masked, in text and in JSON.
    for output in ["text", "json"] {
        let out = diff(&[
            "-p",
            &format!("backup/credentials/password={new_secret}"),
            "-o",
            output,
        ]);
        let shown = both(&out);
        assert_eq!(out.status.code(), Some(1), "{shown}");
        for secret in [old_secret, new_secret] {
            let b64 = base64_of(secret);
            assert!(
                !shown.contains(secret) && !shown.contains(&b64),
                "a secret shown by kudo diff -o {output}: {shown}"
            );
        }
        assert!(shown.contains("backup-update"), "{shown}");
        assert!(shown.contains("cass-backup-credentials"), "{shown}");
        if output == "json" {
            let report: Value = serde_json::from_slice(&out.stdout).expect("-o json");
            assert_eq!(report["plan"], "backup-update", "{report}");
            let value = &report["values"][0];
            assert_eq!(value["pointer"], "/backup/credentials/password", "{report}");
            assert_eq!(value["secret"], true, "{report}");
            let secret = report["objects"]
                .as_array()
                .unwrap()
                .iter()
                .find(|o| o["kind"] == "Secret")
                .expect("the Secret is in the diff")
                .clone();
            assert_eq!(secret["action"], "update", "{secret}");
            assert!(
                secret["diff"].as_str().unwrap().contains("(after)"),
                "{secret}"
            );
        }
    }

    // Refused as kudo update refuses it (two plans): exit 2, the reason on stderr.
    let out = diff(&["-p", "nodeCount=4", "-p", "backup/enabled=true"]);
    assert_eq!(out.status.code(), Some(2), "{}", both(&out));
    assert!(
        text(&out.stderr).contains("trigger-conflict"),
        "{}",
        both(&out)
    );
    assert_eq!(generation(), before, "kudo diff wrote nothing");

    // kudo patch: append a datacenter to the default topology, checked and written as an
    // update is; --dry-run first.
    let patch = |args: &[&str]| {
        let mut all = vec!["patch", "cass", "-n", &ns];
        all.extend_from_slice(args);
        s.kudo(&all).output().expect("kudo patch runs")
    };
    let dc2 = "topology/-={datacenterName: dc2, nodes: 1}";
    let out = patch(&["--add", dc2, "--dry-run"]);
    assert!(out.status.success(), "{}", both(&out));
    assert!(text(&out.stdout).contains("plan: update"), "{}", both(&out));
    assert_eq!(generation(), before, "a dry run wrote nothing");
    // An invalid item is refused, naming the argument; nothing is written.
    let out = patch(&["--add", "topology/-={datacenterName: 'no spaces'}"]);
    assert_eq!(out.status.code(), Some(1), "{}", both(&out));
    let err = text(&out.stderr);
    assert!(err.contains("/topology/1/datacenterName"), "{err}");
    assert!(err.contains("--add argument 1"), "{err}");
    assert_eq!(generation(), before);
    // Written, its plan run to COMPLETE.
    patch(&["--add", dc2, "--wait"]);
    let topology = s.instance("cass")["spec"]["parameters"]["topology"].clone();
    assert_eq!(topology.as_array().map(Vec::len), Some(2), "{topology}");
    assert_eq!(topology[0]["datacenterName"], "dc1", "{topology}");
    assert_eq!(topology[1], json!({"datacenterName": "dc2", "nodes": 1}));
    s.wait_plan("cass", "update");
    // Removing an item that is not there is refused; removing dc1 leaves dc2.
    let out = patch(&["--remove", "topology/5"]);
    assert_eq!(out.status.code(), Some(1), "{}", both(&out));
    assert!(
        text(&out.stderr).contains("nothing-to-remove"),
        "{}",
        both(&out)
    );
    let out = patch(&["--remove", "topology/0", "--wait", "-o", "json"]);
    assert!(out.status.success(), "{}", both(&out));
    let report: Value = serde_json::from_slice(&out.stdout).expect("-o json");
    assert_eq!(report["plan"], "update", "{report}");
    assert_eq!(report["written"], true, "{report}");
    let topology = s.instance("cass")["spec"]["parameters"]["topology"].clone();
    assert_eq!(topology, json!([{"datacenterName": "dc2", "nodes": 1}]));
    // Issue 33: KEP-33's own example, the pointer naming the array: the label is appended.
    let out = patch(&[
        "--add",
        "topology/0/labels={key: NewKey, value: NewValue}",
        "--wait",
    ]);
    assert!(out.status.success(), "{}", both(&out));
    let topology = s.instance("cass")["spec"]["parameters"]["topology"].clone();
    assert_eq!(
        topology,
        json!([{"datacenterName": "dc2", "nodes": 1,
            "labels": [{"key": "NewKey", "value": "NewValue"}]}])
    );
    // kudo explain --instance reads the same Instance: who set each value; a secret never shown.
    let explain = |pointer: &str| {
        let out = s
            .kudo(&["explain", "--instance", "cass", "-n", &ns, pointer])
            .output()
            .expect("kudo explain runs");
        assert!(out.status.success(), "{}", both(&out));
        both(&out)
    };
    let password = explain("backup/credentials/password");
    assert!(password.contains("VALUE:"), "{password}");
    assert!(
        password.contains("(secret, set by the user in Secret cass-params-"),
        "{password}"
    );
    assert!(!password.contains(old_secret), "{password}");
    assert!(explain("/nodeCount").contains("3 (the default)"));
    assert!(explain("/topology").contains("(set by the user)"));
    // The secret never left its Secret: the Instance holds no password.
    let inst = s.instance("cass").to_string();
    assert!(!inst.contains(old_secret), "{inst}");
}

/// `secret` base64-encoded, as a Secret's `data` holds it.
fn base64_of(secret: &str) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(secret)
}
