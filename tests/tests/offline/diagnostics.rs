//! What a user reads when parameters are refused: snapshots of the diagnostics, in the engine's
//! one-line form (used by the webhook and manager too) and as the CLI renders them.

use kudo_pkg::Package;
use kudo_policy::validate;
use kudo_policy::values::{Inputs, Override};
use kudo_yaml::document::Document;

use crate::in_repo;

fn diagnostics(files: &[&str], overrides: &[&str]) -> Vec<kudo_diag::Diagnostic> {
    let pkg = Package::load(std::path::Path::new("examples/cassandra-v1beta2")).unwrap();
    let docs: Vec<Document> = files
        .iter()
        .map(|f| Document::read(std::path::Path::new(f)).unwrap())
        .collect();
    let overrides = Override::parse_all(overrides).expect("well-formed -p arguments");
    validate::resolve(
        pkg.schema(),
        &Inputs {
            current: None,
            files: &docs,
            overrides: &overrides,
        },
    )
    .expect_err("these inputs are invalid")
}

#[test]
fn invalid_values_file_one_line_each() {
    in_repo();
    let diags = diagnostics(&["examples/values/cassandra-invalid.yaml"], &[]);
    let text: Vec<String> = diags.iter().map(ToString::to_string).collect();
    insta::assert_snapshot!(text.join("\n"));
}

#[test]
fn overrides_and_a_masked_secret_one_line_each() {
    in_repo();
    let diags = diagnostics(
        &[],
        &[
            "backup/credentials={name: admin, password: 424242}",
            "topology/3/nodes=2",
            "jvm/extraOptions/-=x",
            "metrics/port=http",
        ],
    );
    let text: Vec<String> = diags.iter().map(ToString::to_string).collect();
    assert!(!text.join("\n").contains("424242"));
    assert!(text.join("\n").contains("<hidden: writeOnly>"));
    insta::assert_snapshot!(text.join("\n"));
}

#[test]
fn invalid_values_file_as_json() {
    in_repo();
    let diags = diagnostics(&["examples/values/cassandra-invalid.yaml"], &[]);
    insta::assert_json_snapshot!(diags);
}

#[test]
fn invalid_values_file_as_the_cli_prints_it() {
    let out = std::process::Command::new(kudo_testkit::kudo_bin())
        .current_dir(kudo_testkit::repo())
        .env("NO_COLOR", "1")
        .args([
            "params",
            "examples/cassandra-v1beta2",
            "-P",
            "examples/values/cassandra-invalid.yaml",
            "-p",
            "nodeCont=1",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    insta::assert_snapshot!(String::from_utf8(out.stderr).unwrap());
}

fn params_with(file: &std::path::Path) -> std::process::Output {
    std::process::Command::new(kudo_testkit::kudo_bin())
        .current_dir(kudo_testkit::repo())
        .env("NO_COLOR", "1")
        .args(["params", "examples/cassandra-v1beta2", "-P"])
        .arg(file)
        .output()
        .unwrap()
}

/// Issue 38, finding 7: a `-P` file of 8,000 unknown keys printed 8,000 snippets and took
/// 7.6 s (the origins of a merge were forgotten by a walk over all of them, per key). Now the
/// CLI lists the first 50 problems, then how many more, and the count says 8,000.
#[test]
fn a_values_file_with_thousands_of_problems_lists_fifty_then_counts_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("keys.yaml");
    let text: String = (0..8_000).map(|i| format!("k{i}: v{i}\n")).collect();
    std::fs::write(&file, text).unwrap();
    let out = params_with(&file);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(
        stderr.matches("[unknown-parameter]").count(),
        50,
        "{stderr}"
    );
    assert!(
        stderr.contains("and 7950 more problem(s), not listed: at most 50 are [too-many-problems]"),
        "{stderr}"
    );
    assert!(
        stderr.ends_with("8000 error(s), 0 warning(s)\n"),
        "{stderr}"
    );
}

/// Values past the policy's bounds, and a file past the size kudo reads, are refused whole,
/// naming the file and the bound.
#[test]
fn values_files_past_the_bounds_are_refused_naming_the_bound() {
    let dir = tempfile::tempdir().unwrap();
    let deep = dir.path().join("deep.yaml");
    let mut text = String::from("jvm:\n  extraOptions: ");
    text.push_str(&"[".repeat(40));
    text.push_str(&"]".repeat(40));
    std::fs::write(&deep, format!("{text}\n")).unwrap();
    let out = params_with(&deep);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("deep.yaml nest more than 32 levels deep (first at /jvm/")
            && stderr.contains("[too-large]"),
        "{stderr}"
    );
    let out = params_with(std::path::Path::new("/dev/zero"));
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("-P /dev/zero: cannot read the values file: larger than 4194304")
            && stderr.contains("[too-large]"),
        "{stderr}"
    );
}
