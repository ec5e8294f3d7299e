//! The cluster commands as processes, where no cluster is needed: argument errors (exit 2),
//! parameters refused before any cluster is contacted (exit 1), a missing kubeconfig (exit 1).
//! What they send to a cluster is tested against a mocked API server in
//! `operator/tests/commands.rs`.

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
