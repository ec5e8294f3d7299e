//! A `writeOnly` value fed through every output of the `kudo` CLI is found in none of them:
//! `params` (text and JSON), a refused value's diagnostic and snippet, the `update -f` diff
//! (text and JSON), `package list parameters` (text and JSON) and `package verify` (text and
//! JSON). The webhook's denials (`webhook/tests/admission.rs`) and the manager's events and
//! status (`operator/manager/tests/manager.rs`) have the same test beside their code. `kudo template`
//! is left out on purpose: rendering a secret into the Secret the operator asks for is its job.
//!
//! Every output goes through `kudo_policy::values::Redacted` (values, diffs, snippets) or
//! `kudo_diag::Shown` (a diagnostic's value), which read the same schema marks.

use std::path::Path;

use kudo_testkit::{copy_package, example, kudo};

const PASSWORD: &str = "/backup/credentials/password";

/// Runs `kudo ARGS`, expects `code`, and returns stdout and stderr together.
fn run(args: &[&str], code: i32) -> String {
    let out = kudo().args(args).assert().code(code).get_output().clone();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!text.is_empty(), "kudo {args:?} printed nothing");
    text
}

fn assert_hidden(what: &str, text: &str, secret: &str) {
    assert!(!text.contains(secret), "{what}: the secret leaked:\n{text}");
}

/// A copy of the Cassandra example whose password parameter has `default: DEFAULT` added.
fn with_password_default(default: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let (dir, pkg) = copy_package(&example("cassandra-v1beta2"));
    let params = pkg.join("params.yaml");
    let text = std::fs::read_to_string(&params).unwrap();
    let marked = "            writeOnly: true\n";
    assert!(text.contains(marked));
    let text = text.replacen(
        marked,
        &format!("{marked}            default: {default}\n"),
        1,
    );
    std::fs::write(&params, text).unwrap();
    (dir, pkg)
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn params_text_and_json_leave_the_value_out() {
    let pkg = example("cassandra-v1beta2");
    let set = format!("{}=TopSecret-A", &PASSWORD[1..]);
    for format in ["yaml", "json"] {
        let text = run(&["params", path(&pkg), "-p", &set, "-o", format], 0);
        assert!(text.contains(PASSWORD), "the note names it: {text}");
        assert_hidden(&format!("params -o {format}"), &text, "TopSecret-A");
    }
}

#[test]
fn a_refused_value_is_masked_in_the_diagnostic_and_its_line_is_not_shown() {
    let dir = tempfile::tempdir().unwrap();
    let values = dir.path().join("values.yaml");
    std::fs::write(
        &values,
        "nodeCount: 3\nbackup:\n  credentials:\n    password: [TopSecret-B]\n",
    )
    .unwrap();
    let pkg = example("cassandra-v1beta2");
    for command in ["params", "template"] {
        let text = run(&[command, path(&pkg), "-P", path(&values)], 1);
        assert!(text.contains("<hidden: writeOnly>"), "{text}");
        assert!(text.contains(PASSWORD), "{text}");
        assert_hidden(command, &text, "TopSecret-B");
    }
}

/// Issue 38: a value given where the object holding the password belongs (`-p
/// backup/credentials=SECRET`, or the same in a values file) may be the password: the refusal
/// names the pointer and the type, never the value.
#[test]
fn a_value_given_where_a_secret_lies_below_is_masked() {
    let pkg = example("cassandra-v1beta2");
    for command in ["params", "template"] {
        let text = run(
            &[command, path(&pkg), "-p", "backup/credentials=TopSecret-C"],
            1,
        );
        assert!(text.contains("/backup/credentials"), "{text}");
        assert_hidden(command, &text, "TopSecret-C");
    }
    let dir = tempfile::tempdir().unwrap();
    let values = dir.path().join("values.yaml");
    std::fs::write(&values, "backup:\n  credentials: TopSecret-D\n").unwrap();
    let text = run(&["params", path(&pkg), "-P", path(&values)], 1);
    assert!(text.contains("/backup/credentials"), "{text}");
    assert_hidden("params -P", &text, "TopSecret-D");
}

#[test]
fn an_instance_file_written_before_secrets_left_it_is_edited_with_the_secret_masked() {
    // A file from before writeOnly values moved to Secrets: the password in spec.parameters.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("instance.yaml");
    let text = std::fs::read_to_string(example("instances/cassandra.yaml")).unwrap();
    let at = text
        .find("  # writeOnly values never sit")
        .expect("the example's parametersFrom");
    let old = "s3cr3t-pass";
    let legacy = format!("{}        password: {old}\n", &text[..at]);
    std::fs::write(&file, &legacy).unwrap();
    let pkg = example("cassandra-v1beta2");
    for format in ["text", "json"] {
        // Another value changes: the diff never shows the secret the file holds.
        let text = run(
            &[
                "update",
                "-f",
                path(&file),
                "--package",
                path(&pkg),
                "-p",
                "backup/credentials/name=other-user",
                "--dry-run",
                "-o",
                format,
            ],
            0,
        );
        assert_hidden(&format!("update --dry-run -o {format}"), &text, old);
        // A new secret is refused, its value never echoed.
        let set = format!("{}=TopSecret-C", &PASSWORD[1..]);
        let text = run(
            &[
                "update",
                "-f",
                path(&file),
                "--package",
                path(&pkg),
                "-p",
                &set,
                "--dry-run",
                "-o",
                format,
            ],
            1,
        );
        assert!(text.contains("secret-in-instance"), "{text}");
        assert_hidden(&format!("refused update -o {format}"), &text, "TopSecret-C");
        assert_hidden(&format!("refused update -o {format}"), &text, old);
    }
    assert_eq!(std::fs::read_to_string(&file).unwrap(), legacy);
}

#[test]
fn the_parameter_listing_masks_a_default() {
    let (_dir, pkg) = with_password_default("TopSecret-D");
    for format in ["table", "json", "yaml"] {
        let text = run(
            &["package", "list", "parameters", path(&pkg), "-o", format],
            0,
        );
        assert!(text.contains("password"), "{text}");
        assert_hidden(
            &format!("list parameters -o {format}"),
            &text,
            "TopSecret-D",
        );
    }
}

#[test]
fn verify_masks_an_invalid_default_and_its_line() {
    let (_dir, pkg) = with_password_default("[TopSecret-E]");
    for format in ["text", "json"] {
        let text = run(&["package", "verify", path(&pkg), "-o", format], 1);
        assert!(text.contains("invalid-default"), "{text}");
        assert_hidden(&format!("verify -o {format}"), &text, "TopSecret-E");
    }
}
