//! `kudo package add parameter` as a process, scripted (no terminal): on a params.yaml full of
//! comments the change is exactly the added parameter, the package still verifies, and every
//! refusal leaves the file byte-identical.

use std::path::Path;

use kudo_testkit::{example, fixture, kudo};
use predicates::prelude::*;

fn add(pkg: &Path, args: &[&str]) -> assert_cmd::assert::Assert {
    kudo()
        .args(["package", "add", "parameter"])
        .arg(pkg)
        .args(args)
        .write_stdin("")
        .assert()
}

/// The lines inserted between `before` and `after`; panics if anything else changed.
fn inserted(before: &str, after: &str) -> Vec<String> {
    let diff = similar::TextDiff::from_lines(before, after);
    let mut out = Vec::new();
    for change in diff.iter_all_changes() {
        match change.tag() {
            similar::ChangeTag::Equal => {}
            similar::ChangeTag::Insert => out.push(change.value().trim_end().to_string()),
            similar::ChangeTag::Delete => panic!("a line was removed or changed: {change}"),
        }
    }
    out
}

fn verify_ok(pkg: &Path) {
    kudo()
        .args(["package", "verify"])
        .arg(pkg)
        .assert()
        .success();
}

#[test]
fn a_nested_parameter_is_exactly_what_changes() {
    let (_d, pkg) = kudo_testkit::copy_package(&fixture("commented"));
    let file = pkg.join("params.yaml");
    let before = std::fs::read_to_string(&file).unwrap();
    add(
        &pkg,
        &[
            "--path",
            "/backup/credentials",
            "--name",
            "region",
            "--type",
            "string",
            "--default",
            "eu-west-1",
            "--description",
            "Bucket region",
            "--constraint",
            "minLength=1",
            "--yes",
        ],
    )
    .success()
    .stderr(predicate::str::contains("added /backup/credentials/region"));
    let after = std::fs::read_to_string(&file).unwrap();
    assert_eq!(
        inserted(&before, &after),
        [
            "          region:",
            "            type: string",
            "            description: Bucket region",
            "            default: eu-west-1",
            "            minLength: 1",
        ]
    );
    verify_ok(&pkg);
}

#[test]
fn an_array_item_field_joins_the_items_required_list() {
    let (_d, pkg) = kudo_testkit::copy_package(&fixture("commented"));
    let file = pkg.join("params.yaml");
    let before = std::fs::read_to_string(&file).unwrap();
    add(
        &pkg,
        &[
            "--path",
            "topology/0",
            "--name",
            "zone",
            "--type",
            "string",
            "--required",
            "--enum",
            "a",
            "--enum",
            "b",
            "--yes",
        ],
    )
    .success();
    let after = std::fs::read_to_string(&file).unwrap();
    let lines = inserted(&before, &after);
    assert!(lines.contains(&"        - zone".to_string()), "{lines:?}");
    assert!(lines.contains(&"        zone:".to_string()), "{lines:?}");
    verify_ok(&pkg);
    let listed = kudo()
        .args(["package", "list", "parameters", "--required", "--names"])
        .arg(&pkg)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    assert!(String::from_utf8_lossy(&listed).contains("/topology/0/zone\n"));
}

#[test]
fn a_v1beta1_package_gets_a_flat_parameter() {
    let (_d, pkg) = kudo_testkit::copy_package(&example("zookeeper-v1beta1"));
    let file = pkg.join("params.yaml");
    let before = std::fs::read_to_string(&file).unwrap();
    add(
        &pkg,
        &[
            "--name",
            "SNAPSHOT_COUNT",
            "--type",
            "integer",
            "--default",
            "3",
            "--trigger",
            "update",
            "--yes",
        ],
    )
    .success();
    let after = std::fs::read_to_string(&file).unwrap();
    assert_eq!(
        inserted(&before, &after),
        [
            "  - name: SNAPSHOT_COUNT",
            "    default: \"3\"",
            "    required: false",
            "    type: integer",
            "    trigger: update",
        ]
    );
    verify_ok(&pkg);
}

#[test]
fn refusals_leave_params_yaml_byte_identical() {
    let cases: &[(&[&str], &str)] = &[
        (
            &[
                "--name",
                "port",
                "--type",
                "integer",
                "--default",
                "0",
                "--constraint",
                "minimum=1",
                "--yes",
            ],
            "at least 1",
        ),
        (
            &[
                "--name",
                "port",
                "--type",
                "integer",
                "--default",
                "eighty",
                "--yes",
            ],
            "integer",
        ),
        (
            &["--name", "NODECOUNT", "--type", "integer", "--yes"],
            "/nodeCount is already a parameter",
        ),
        (
            &[
                "--path", "/nowhere", "--name", "x", "--type", "string", "--yes",
            ],
            "not a place",
        ),
        (
            &[
                "--path",
                "/backup",
                "--name",
                "x",
                "--type",
                "string",
                "--trigger",
                "update",
                "--yes",
            ],
            "backup-update",
        ),
        (
            &[
                "--name",
                "x",
                "--type",
                "string",
                "--trigger",
                "no-such-plan",
                "--yes",
            ],
            "not allowed",
        ),
        (
            &["--name", "x", "--type", "string", "--immutable", "--yes"],
            "needs a default or must be required",
        ),
        (
            &[
                "--name",
                "x",
                "--type",
                "string",
                "--constraint",
                "minimum=1",
                "--yes",
            ],
            "does not apply",
        ),
        (
            &["--name", "a b", "--type", "string", "--yes"],
            "cannot contain",
        ),
    ];
    // the command called wrong: usage errors, exit 2
    let usage: &[(&[&str], &str)] = &[
        (
            &["--name", "x", "--type", "strin", "--yes"],
            "invalid value 'strin' for '--type <TYPE>'",
        ),
        (
            &["--name", "x", "--type", "int", "--yes"],
            "string, integer, number",
        ),
        (
            &[
                "--name",
                "x",
                "--type",
                "string",
                "--constraint",
                "minimum",
                "--yes",
            ],
            "expected KEYWORD=VALUE",
        ),
        (&["--name", "x", "--type", "string"], "pass --yes"),
        (&["--name", "x"], "give --type"),
    ];
    for (args, code, why) in cases
        .iter()
        .map(|(a, w)| (a, 1, w))
        .chain(usage.iter().map(|(a, w)| (a, 2, w)))
    {
        let (_d, pkg) = kudo_testkit::copy_package(&fixture("commented"));
        let file = pkg.join("params.yaml");
        let before = std::fs::read(&file).unwrap();
        add(&pkg, args)
            .code(code)
            .stderr(predicate::str::contains(*why));
        assert_eq!(std::fs::read(&file).unwrap(), before, "{args:?}");
    }
}

#[test]
fn a_v1beta1_package_can_be_converted_first_to_nest_a_parameter() {
    let (_d, pkg) = kudo_testkit::copy_package(&example("zookeeper-v1beta1"));
    add(
        &pkg,
        &["--convert", "--name", "tls", "--type", "object", "--yes"],
    )
    .success();
    add(
        &pkg,
        &[
            "--path",
            "/tls",
            "--name",
            "enabled",
            "--type",
            "boolean",
            "--default",
            "false",
            "--yes",
        ],
    )
    .success();
    let text = std::fs::read_to_string(pkg.join("params.yaml")).unwrap();
    assert!(text.starts_with("apiVersion: kudo.dev/v1beta2\n"), "{text}");
    assert!(text.contains("  tls:\n    type: object\n    properties:\n      enabled:\n        type: boolean\n        default: false\n"), "{text}");
    // without --convert a nested place is refused on a flat package
    let (_d2, flat) = kudo_testkit::copy_package(&example("zookeeper-v1beta1"));
    add(
        &flat,
        &["--path", "/x", "--name", "y", "--type", "string", "--yes"],
    )
    .code(1)
    .stderr(predicate::str::contains("not a place"));
}
