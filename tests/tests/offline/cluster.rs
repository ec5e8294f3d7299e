//! The cluster commands as processes, where no cluster is needed: argument errors (exit 2),
//! parameters refused before any cluster is contacted (exit 1), a missing kubeconfig (exit 1).
//! What they send to a cluster is tested against a mocked API server in
//! `cli/client/tests/commands.rs`; `--wait`'s progress lines (stderr not a terminal)
//! against the same mocked server on loopback.

use kudo_testkit::{example, kudo};
use predicates::prelude::*;

#[test]
fn update_takes_a_file_or_an_instance_but_not_both() {
    kudo()
        .args(["update", "-f", "x.yaml", "--instance", "c"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("cannot be used with"));
}

#[test]
fn update_without_a_file_or_an_instance_is_a_usage_error() {
    kudo()
        .args(["update", "-p", "nodeCount=3"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "--file <INSTANCE_FILE>|NAME|--instance <NAME>",
        ));
}

#[test]
fn update_of_a_file_still_needs_its_package() {
    kudo()
        .args(["update", "-f", "x.yaml"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--package <PACKAGE>"));
}

#[test]
fn update_of_a_file_refuses_cluster_flags() {
    kudo()
        .args(["update", "-f", "x.yaml", "--package", "p", "--wait"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--wait"));
}

#[test]
fn upgrade_of_an_instance_needs_the_new_package() {
    kudo()
        .args(["upgrade", "--instance", "c"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("<PACKAGE>"));
}

#[test]
fn install_with_invalid_parameters_is_refused_before_any_cluster_is_contacted() {
    kudo()
        .arg("install")
        .arg(example("cassandra-v1beta2"))
        .args(["-p", "nodeCount=0"])
        .assert()
        .code(1)
        .stdout("")
        .stderr(predicate::str::contains("/nodeCount: must be at least 1"))
        .stderr(predicate::str::contains("kubeconfig").not());
}

#[test]
fn install_without_a_readable_kubeconfig_exits_with_1_naming_it() {
    kudo()
        .arg("install")
        .arg(example("cassandra-v1beta2"))
        .args(["--kubeconfig", "/nonexistent/config"])
        .assert()
        .code(1)
        .stdout("")
        .stderr(predicate::str::contains(
            "error: kudo install: the kubeconfig /nonexistent/config (--kubeconfig) does not exist",
        ));
}

#[test]
fn wait_time_is_a_duration() {
    kudo()
        .args(["uninstall", "--instance", "c", "--wait-time", "5x"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("not a duration: \"5x\""));
}

#[test]
fn plan_trigger_needs_the_plan_name() {
    kudo()
        .args(["plan", "trigger", "--instance", "c"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--name <PLAN>"));
}

#[test]
fn get_lists_only_kudo_kinds() {
    kudo()
        .args(["get", "pods"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "instances, operators, operatorversions",
        ));
}

#[test]
fn help_lists_the_cluster_commands() {
    let out = kudo().arg("--help").assert().success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    for command in ["install", "update", "upgrade", "uninstall", "plan", "get"] {
        assert!(
            text.lines()
                .any(|l| l.trim_start().starts_with(&format!("{command} "))),
            "{command} is not in:\n{text}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// --wait's progress, against the mocked API server on loopback

/// Instance `c` of the cassandra example with `plan_status` as its deploy plan's status.
fn cassandra_at(plan_status: serde_json::Value) -> serde_json::Value {
    serde_json::json!({"apiVersion": "kudo.dev/v1beta2", "kind": "Instance",
        "metadata": {"name": "c", "namespace": "default", "resourceVersion": "10", "generation": 1},
        "spec": {"operatorVersion": {"name": "cassandra"}, "parameters": {}},
        "status": {"observedGeneration": 1, "activePlan": {"name": "deploy", "uid": "u-1"},
            "planStatus": {"deploy": plan_status}}})
}

/// Plan deploy of the cassandra example: phase infra COMPLETE, phase nodes and its step node at
/// `nodes`.
fn deploy(plan: &str, nodes: &str, message: Option<&str>) -> serde_json::Value {
    let mut node = serde_json::json!({"name": "node", "status": nodes});
    if let Some(m) = message {
        node["message"] = m.into();
    }
    serde_json::json!({"name": "deploy", "status": plan, "uid": "u-1", "phases": [
        {"name": "infra", "status": "COMPLETE", "steps": [
            {"name": "infra", "status": "COMPLETE"}, {"name": "backup", "status": "COMPLETE"}]},
        {"name": "nodes", "status": nodes, "steps": [node]}]})
}

/// An API server whose Instance `c` reads as `readings` say, one after the other (the last
/// one from then on), with the cassandra example's OperatorVersion; and a kubeconfig for it.
fn api(readings: Vec<serde_json::Value>) -> (kudo_testkit::Served, tempfile::NamedTempFile) {
    use kudo_testkit::mock_api;
    let pkg = kudo_pkg::Package::load(&example("cassandra-v1beta2")).expect("the example loads");
    let ov = serde_json::to_value(kudo_crd::package::objects(&pkg, "default").1).unwrap();
    let mut readings = std::collections::VecDeque::from(readings);
    let served = mock_api::serve(move |r| match r.path.rsplit_once('/') {
        Some((kind, "c")) if r.method == "GET" && kind.ends_with("/instances") => {
            let inst = match readings.len() {
                1 => readings[0].clone(),
                _ => readings.pop_front().unwrap_or_default(),
            };
            (200, inst)
        }
        Some((kind, _)) if r.method == "GET" && kind.ends_with("/operatorversions") => {
            (200, ov.clone())
        }
        _ => (404, mock_api::status(404, "NotFound", &r.uri())),
    });
    let mut config = tempfile::NamedTempFile::new().unwrap();
    std::io::Write::write_all(
        &mut config,
        mock_api::kubeconfig(&served.url, "default").as_bytes(),
    )
    .unwrap();
    (served, config)
}

/// What `kudo ARGS --kubeconfig CONFIG` wrote: stdout, and stderr with its times as `(T)`.
fn run(args: &[&str], config: &tempfile::NamedTempFile) -> (String, String) {
    let out = kudo()
        .args(args)
        .arg("--kubeconfig")
        .arg(config.path())
        .output()
        .expect("kudo runs");
    assert!(out.status.success(), "{args:?}: {out:?}");
    let stderr = String::from_utf8(out.stderr).unwrap();
    let timed = stderr
        .lines()
        .map(|l| match l.rsplit_once(" (") {
            Some((line, time)) if time.ends_with(" s)") => format!("{line} (T)\n"),
            _ => format!("{l}\n"),
        })
        .collect();
    (String::from_utf8(out.stdout).unwrap(), timed)
}

#[test]
fn wait_prints_one_line_per_transition_on_stderr_when_it_is_no_terminal_and_stdout_stays() {
    let complete = cassandra_at(deploy("COMPLETE", "COMPLETE", None));
    let (_api, config) = api(vec![
        cassandra_at(deploy("IN_PROGRESS", "PENDING", None)),
        cassandra_at(deploy("IN_PROGRESS", "IN_PROGRESS", Some("1 of 3 ready"))),
        // the same step and status, another message: no line
        cassandra_at(deploy("IN_PROGRESS", "IN_PROGRESS", Some("2 of 3 ready"))),
        complete.clone(),
    ]);
    let status = ["plan", "status", "--instance", "c"];
    let (waited, progress) = run(&[&status[..], &["--wait"]].concat(), &config);
    assert_eq!(
        progress,
        "\
c: deploy / nodes / node: PENDING (T)
c: deploy / nodes / node: IN_PROGRESS: 1 of 3 ready (T)
c: deploy: COMPLETE (T)
"
    );
    // stdout is what it is without --wait, as text and as JSON
    let (_api, config) = api(vec![complete]);
    let (plain, nothing) = run(&status, &config);
    assert_eq!((waited.as_str(), nothing.as_str()), (plain.as_str(), ""));
    assert!(plain.contains("plan deploy (serial) [COMPLETE]"), "{plain}");
    let json = [&status[..], &["-o", "json"]].concat();
    let (waited, progress) = run(&[&json[..], &["--wait"]].concat(), &config);
    assert_eq!(progress, "c: deploy: COMPLETE (T)\n");
    assert_eq!(waited, run(&json, &config).0);
    // --quiet: no progress
    let (quiet, nothing) = run(&[&status[..], &["--wait", "-q"]].concat(), &config);
    assert_eq!((quiet.as_str(), nothing.as_str()), (plain.as_str(), ""));
}
