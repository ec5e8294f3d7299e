//! What a user reads when parameters are refused: snapshots of the diagnostics, in the engine's
//! one-line form (used by the webhook and manager too) and as the CLI renders them.

use kudo_pkg::document::Document;
use kudo_pkg::values::Inputs;
use kudo_pkg::{Package, validate};

fn diagnostics(files: &[&str], overrides: &[&str]) -> Vec<kudo_pkg::Diagnostic> {
    let pkg = Package::load(std::path::Path::new("examples/cassandra-v1beta2")).unwrap();
    let docs: Vec<Document> = files
        .iter()
        .map(|f| Document::read(std::path::Path::new(f)).unwrap())
        .collect();
    let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
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

fn in_repo() {
    std::env::set_current_dir(kudo_testkit::repo()).unwrap();
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
