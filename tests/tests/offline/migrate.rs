//! `kudo migrate` as a process, without a cluster: usage and connection errors. The migration
//! itself is tested against a mocked API server in `operator/tests/storage_migration.rs`, and against a
//! real cluster in `tests/tests/e2e/`.

use kudo_testkit::kudo;
use predicates::prelude::*;

#[test]
fn an_unreadable_kubeconfig_is_a_clear_error_with_nothing_on_stdout() {
    for extra in [&[][..], &["--dry-run"][..], &["-o", "json"][..]] {
        kudo()
            .args(["migrate", "--kubeconfig", "/nonexistent/kubeconfig"])
            .args(extra)
            .assert()
            .code(1)
            .stdout("")
            .stderr(predicate::str::contains("/nonexistent/kubeconfig"));
    }
}

#[test]
fn an_unknown_output_format_is_a_usage_error() {
    kudo()
        .args(["migrate", "-o", "xml"])
        .assert()
        .code(2)
        .stdout("");
}

#[test]
fn help_names_the_four_phases() {
    kudo()
        .args(["migrate", "--help"])
        .assert()
        .success()
        .stdout(predicate::str::contains("--dry-run"))
        .stdout(predicate::str::contains("storedVersions"));
}
