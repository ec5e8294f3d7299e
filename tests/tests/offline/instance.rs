//! `kudo update -f` and `kudo upgrade -f` as processes, on copies of Instance files with
//! comments: comments survive, only values change, and a refused command leaves the bytes
//! unchanged.

use std::path::{Path, PathBuf};

use kudo_testkit::{example, fixture, kudo};
use predicates::prelude::*;

/// A copy of `src` in a fresh temporary directory.
fn copy(src: &Path) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let to = dir.path().join("instance.yaml");
    std::fs::copy(src, &to).unwrap();
    (dir, to)
}

fn cassandra_instance() -> (tempfile::TempDir, PathBuf) {
    copy(&example("instances/cassandra.yaml"))
}

#[test]
fn update_changes_only_the_values_and_keeps_comments() {
    let (_d, file) = cassandra_instance();
    let before = std::fs::read_to_string(&file).unwrap();
    kudo()
        .arg("update")
        .arg("-f")
        .arg(&file)
        .arg("--package")
        .arg(example("cassandra-v1beta2"))
        .args(["-p", "nodeCount=4", "-p", "topology/1/nodes=3"])
        .assert()
        .success()
        .stdout(predicate::str::contains("plan: update"))
        .stdout(predicate::str::contains(
            "changed /topology/1/nodes (runs update)",
        ));
    let after = std::fs::read_to_string(&file).unwrap();
    let changed: Vec<(&str, &str)> = before
        .lines()
        .zip(after.lines())
        .filter(|(a, b)| a != b)
        .collect();
    assert_eq!(
        changed,
        [
            ("    nodeCount: 3", "    nodeCount: 4"),
            ("        nodes: 2", "        nodes: 3")
        ]
    );
    assert_eq!(before.lines().count(), after.lines().count());
}

#[test]
fn refused_updates_leave_the_file_byte_identical() {
    let refusals: &[(&[&str], &str)] = &[
        (&["-p", "clusterName=other"], "immutable-changed"),
        (
            &["-p", "nodeCount=4", "-p", "backup/enabled=false"],
            "trigger-conflict",
        ),
        (&["-p", "nodeCount=0"], "out-of-range"),
        (&["-p", "nodecount=4"], "unknown-parameter"),
        (&["-p", "topology/5/nodes=1"], "index-out-of-range"),
        // Issue 23: null is not a way back to the default...
        (
            &["-p", "nodeCount=null"],
            "help: to go back to the default, use --reset nodeCount",
        ),
        // ... --reset is, by the same rules: clusterName differs from its default.
        (&["--reset", "clusterName"], "immutable-changed"),
        (&["--reset", "nodecount"], "did you mean /nodeCount?"),
        (&["--reset", "topology/0"], "cannot be reset alone"),
    ];
    for (args, code) in refusals {
        let (_d, file) = cassandra_instance();
        let before = std::fs::read(&file).unwrap();
        kudo()
            .arg("update")
            .arg("-f")
            .arg(&file)
            .arg("--package")
            .arg(example("cassandra-v1beta2"))
            .args(*args)
            .assert()
            .code(1)
            .stdout("")
            .stderr(predicate::str::contains(*code));
        assert_eq!(std::fs::read(&file).unwrap(), before, "{args:?}");
    }
}

#[test]
fn a_secret_is_never_written_into_an_instance_file() {
    let (_d, file) = cassandra_instance();
    let before = std::fs::read(&file).unwrap();
    for dry_run in [true, false] {
        let mut cmd = kudo();
        cmd.arg("update")
            .arg("-f")
            .arg(&file)
            .arg("--package")
            .arg(example("cassandra-v1beta2"))
            .args(["-p", "backup/credentials/password=n3w-s3cret"]);
        if dry_run {
            cmd.arg("--dry-run");
        }
        let out = cmd
            .assert()
            .code(1)
            .stderr(predicate::str::contains("/backup/credentials/password"))
            .stderr(predicate::str::contains("secret-in-instance"))
            .stderr(predicate::str::contains("parametersFrom"))
            .get_output()
            .clone();
        let all = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(!all.contains("n3w-s3cret"), "{all}");
        assert_eq!(std::fs::read(&file).unwrap(), before);
    }
    // The file names the Secret that holds the password: a required secret it does not hold is
    // no problem offline, and other changes go through.
    kudo()
        .arg("update")
        .arg("-f")
        .arg(&file)
        .arg("--package")
        .arg(example("cassandra-v1beta2"))
        .args(["-p", "nodeCount=4", "--dry-run"])
        .assert()
        .success();
}

#[test]
fn update_reports_json() {
    let (_d, file) = cassandra_instance();
    let out = kudo()
        .arg("update")
        .arg("-f")
        .arg(&file)
        .arg("--package")
        .arg(example("cassandra-v1beta2"))
        .args(["-p", "metrics/enabled=true", "-o", "json"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let report: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(report["plan"], "metrics-update");
    assert_eq!(report["written"], true);
    assert_eq!(report["changes"][0]["pointer"], "/metrics/enabled");
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.contains("  parameters:\n    clusterName: prod-cluster # immutable"));
    assert!(text.contains("metrics:\n      enabled: true\n"), "{text}");
}

#[test]
fn upgrade_follows_kep33_and_keeps_comments() {
    let (_d, file) = copy(&fixture("kep33/instance-v1beta1.yaml"));
    kudo()
        .arg("upgrade")
        .arg("-f")
        .arg(&file)
        .arg("--from")
        .arg(fixture("kep33/v1"))
        .arg("--package")
        .arg(fixture("kep33/v2"))
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "moved      /BACKUP_CREDENTIALS_USERNAME -> /backup/credentials/name",
        ))
        .stdout(predicate::str::contains("plan: deploy"));
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.contains("apiVersion: kudo.dev/v1beta2\n"), "{text}");
    assert!(text.contains("name: my-operator-0.2.0\n"), "{text}");
    assert!(
        text.contains("name: my-instance # the instance\n"),
        "{text}"
    );
    let doc = kudo_yaml::document::Document::parse(&file, &text).unwrap();
    assert_eq!(
        doc.value()["spec"]["parameters"],
        serde_json::json!({"clusterName": "my-cluster", "backup": {"enabled": false,
            "credentials": {"name": "some value", "password": "some password"}}})
    );
}

#[test]
fn refused_upgrades_leave_the_file_byte_identical() {
    // 0.1 -> 0.3 skips 0.2, which introduced the oldName 0.3 follows.
    let (_d, file) = copy(&fixture("kep33/instance-v1beta1.yaml"));
    let before = std::fs::read(&file).unwrap();
    kudo()
        .arg("upgrade")
        .arg("-f")
        .arg(&file)
        .arg("--from")
        .arg(fixture("kep33/v1"))
        .arg("--package")
        .arg(fixture("kep33/v3"))
        .assert()
        .code(1)
        .stderr(predicate::str::contains("old-name-not-found"))
        .stderr(predicate::str::contains("0.1.0"));
    assert_eq!(std::fs::read(&file).unwrap(), before);
    // --from must be the version the Instance runs.
    kudo()
        .arg("upgrade")
        .arg("-f")
        .arg(&file)
        .arg("--from")
        .arg(fixture("kep33/v2"))
        .arg("--package")
        .arg(fixture("kep33/v3"))
        .assert()
        .code(1)
        .stderr(predicate::str::contains("my-operator-0.1.0"));
    assert_eq!(std::fs::read(&file).unwrap(), before);
}

#[test]
fn a_file_that_is_not_an_instance_is_refused() {
    let (_d, file) = copy(&example("values/cassandra-v1beta2.yaml"));
    kudo()
        .arg("update")
        .arg("-f")
        .arg(&file)
        .arg("--package")
        .arg(example("cassandra-v1beta2"))
        .assert()
        .code(1)
        .stderr(predicate::str::contains("not a KUDO Instance"));
}

#[test]
fn reset_removes_the_value_from_the_file_so_the_default_applies() {
    let (_d, file) = cassandra_instance();
    let update = |args: &[&str]| {
        kudo()
            .arg("update")
            .arg("-f")
            .arg(&file)
            .arg("--package")
            .arg(example("cassandra-v1beta2"))
            .args(args)
            .assert()
            .success()
    };
    update(&["-p", "nodeCount=5"]);
    let before = std::fs::read_to_string(&file).unwrap();
    assert!(before.contains("    nodeCount: 5\n"), "{before}");
    update(&["--reset", "nodeCount"])
        .stdout(predicate::str::contains("plan: update"))
        .stdout(predicate::str::contains("changed /nodeCount (runs update)"));
    let after = std::fs::read_to_string(&file).unwrap();
    let removed: Vec<&str> = before.lines().filter(|l| !after.contains(l)).collect();
    assert_eq!(removed, ["    nodeCount: 5"]);
    assert!(
        after.contains("clusterName: prod-cluster # immutable"),
        "{after}"
    );
}

/// Issue 23: an Instance exported while it was being deleted is refused offline as the
/// webhook refuses it in the cluster.
#[test]
fn a_file_being_deleted_takes_no_update_and_no_upgrade() {
    let deleting = |src: &std::path::Path| {
        let (d, file) = copy(src);
        let text = std::fs::read_to_string(&file).unwrap().replacen(
            "metadata:\n",
            "metadata:\n  deletionTimestamp: \"2024-05-01T10:00:00Z\"\n",
            1,
        );
        std::fs::write(&file, text).unwrap();
        (d, file)
    };
    let (_d, file) = deleting(&example("instances/cassandra.yaml"));
    let before = std::fs::read(&file).unwrap();
    kudo()
        .arg("update")
        .arg("-f")
        .arg(&file)
        .arg("--package")
        .arg(example("cassandra-v1beta2"))
        .args(["-p", "nodeCount=4"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("the Instance is being deleted"))
        .stderr(predicate::str::contains("[deleting]"));
    assert_eq!(std::fs::read(&file).unwrap(), before);
    let (_d, file) = deleting(&fixture("kep33/instance-v1beta1.yaml"));
    let before = std::fs::read(&file).unwrap();
    kudo()
        .arg("upgrade")
        .arg("-f")
        .arg(&file)
        .arg("--from")
        .arg(fixture("kep33/v1"))
        .arg("--package")
        .arg(fixture("kep33/v2"))
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "cannot upgrade: the Instance is being deleted",
        ));
    assert_eq!(std::fs::read(&file).unwrap(), before);
}
