//! `kudo package create` as a process (`kudo completion`: completion.rs).

use kudo_testkit::{example, fixture, kudo};
use predicates::prelude::*;

#[test]
fn create_writes_a_reproducible_archive_that_loads_back() {
    let dir = tempfile::tempdir().unwrap();
    let run = || {
        kudo()
            .args(["package", "create"])
            .arg(example("cassandra-v1beta2"))
            .arg("-d")
            .arg(dir.path())
            .arg("--overwrite")
            .assert()
            .success()
    };
    run().stdout(predicate::str::ends_with("cassandra-3.11.6_2.0.0.tgz\n"));
    let tgz = dir.path().join("cassandra-3.11.6_2.0.0.tgz");
    let first = std::fs::read(&tgz).unwrap();
    run();
    assert_eq!(
        std::fs::read(&tgz).unwrap(),
        first,
        "same package, same bytes"
    );
    let from_tgz = kudo_pkg::Package::load(&tgz).unwrap();
    let from_dir = kudo_pkg::Package::load(&example("cassandra-v1beta2")).unwrap();
    assert_eq!(from_tgz.schema(), from_dir.schema());
    assert_eq!(from_tgz.templates(), from_dir.templates());
    // without --overwrite an existing archive is kept
    kudo()
        .args(["package", "create"])
        .arg(example("cassandra-v1beta2"))
        .arg("-d")
        .arg(dir.path())
        .assert()
        .code(1)
        .stderr(predicate::str::contains("--overwrite"));
    assert_eq!(std::fs::read(&tgz).unwrap(), first);
}

#[test]
fn a_package_that_does_not_verify_is_not_created() {
    let dir = tempfile::tempdir().unwrap();
    kudo()
        .args(["package", "create"])
        .arg(fixture("broken-package"))
        .arg("-d")
        .arg(dir.path())
        .assert()
        .code(1)
        .stderr(predicate::str::contains("not created"));
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}
