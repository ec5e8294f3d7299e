//! The `package add parameter` wizard driven in a real pseudo-terminal (expectrl): arrow keys,
//! typed answers, a refused default asked again, Ctrl-C.

#![cfg(unix)]

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use expectrl::{ControlCode, Eof, Expect, Session};
use kudo_testkit::{fixture, kudo_bin};

const DOWN: &str = "\x1b[B";
const ENTER: &str = "\r";

fn wizard(pkg: &Path, args: &[&str]) -> expectrl::session::OsSession {
    let mut cmd = Command::new(kudo_bin());
    cmd.args(["package", "add", "parameter"])
        .arg(pkg)
        .args(args);
    cmd.env("TERM", "xterm").env("NO_COLOR", "1");
    let mut s = Session::spawn(cmd).expect("a pseudo-terminal");
    s.set_expect_timeout(Some(Duration::from_secs(30)));
    s
}

/// Answers one prompt: waits for its text, then sends the keys.
fn answer(s: &mut expectrl::session::OsSession, prompt: &str, keys: &str) {
    s.expect(prompt)
        .unwrap_or_else(|e| panic!("no prompt {prompt:?}: {e}"));
    s.send(keys).unwrap();
}

#[test]
fn the_wizard_adds_a_nested_parameter_chosen_with_the_arrow_keys() {
    let (_d, pkg) = kudo_testkit::copy_package(&fixture("commented"));
    let places = kudo_pkg::author::places(&kudo_pkg::Package::load(&pkg).unwrap());
    let index = places
        .iter()
        .position(|(p, _)| p == "/backup/credentials")
        .unwrap();
    let mut s = wizard(&pkg, &[]);
    answer(
        &mut s,
        "Where does the parameter go?",
        &format!("{}{ENTER}", DOWN.repeat(index)),
    );
    answer(&mut s, "Name", &format!("region{ENTER}"));
    answer(&mut s, "Type", ENTER); // string
    answer(&mut s, "Title", ENTER);
    answer(&mut s, "Description", &format!("Bucket region{ENTER}"));
    answer(&mut s, "Allowed value 1", ENTER);
    for k in ["minLength", "maxLength", "pattern", "format"] {
        answer(&mut s, k, ENTER);
    }
    answer(&mut s, "Default", &format!("eu-west-1{ENTER}"));
    answer(&mut s, "Required?", "n");
    answer(&mut s, "trigger", ENTER); // none: inherits backup-update
    answer(&mut s, "Immutable", "n");
    answer(&mut s, "Secret", "n");
    answer(&mut s, "Write it?", "y");
    s.expect("added /backup/credentials/region").unwrap();
    s.expect(Eof).unwrap();
    let text = std::fs::read_to_string(pkg.join("params.yaml")).unwrap();
    assert!(
        text.contains("          region:\n            type: string\n            description: Bucket region\n            default: eu-west-1\n"),
        "{text}"
    );
    assert!(text.contains("# Every comment here must survive"));
}

#[test]
fn an_invalid_default_is_asked_again_for_an_array_item_field() {
    let (_d, pkg) = kudo_testkit::copy_package(&fixture("commented"));
    let mut s = wizard(
        &pkg,
        &[
            "--path",
            "/topology/0",
            "--name",
            "rackCount",
            "--type",
            "integer",
        ],
    );
    answer(&mut s, "Title", ENTER);
    answer(&mut s, "Description", ENTER);
    answer(&mut s, "Allowed value 1", ENTER);
    answer(&mut s, "minimum", &format!("1{ENTER}"));
    for k in [
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
    ] {
        answer(&mut s, k, ENTER);
    }
    answer(&mut s, "Default", &format!("0{ENTER}"));
    s.expect("must be at least 1").unwrap();
    // the same prompt again: clear the refused text, give a good one
    s.send("\x7f".repeat(3)).unwrap();
    s.send(format!("2{ENTER}")).unwrap();
    answer(&mut s, "Required?", "y");
    answer(&mut s, "trigger", ENTER);
    answer(&mut s, "Immutable", "n");
    answer(&mut s, "Secret", "n");
    answer(&mut s, "Write it?", "y");
    s.expect("added /topology/0/rackCount").unwrap();
    s.expect(Eof).unwrap();
    let text = std::fs::read_to_string(pkg.join("params.yaml")).unwrap();
    assert!(
        text.contains(
            "rackCount:\n          type: integer\n          default: 2\n          minimum: 1\n"
        ),
        "{text}"
    );
    assert!(text.contains("        - rackCount\n"), "{text}");
}

#[test]
fn ctrl_c_leaves_the_file_identical() {
    let (_d, pkg) = kudo_testkit::copy_package(&fixture("commented"));
    let before = std::fs::read(pkg.join("params.yaml")).unwrap();
    let mut s = wizard(&pkg, &["--path", "/", "--name", "late"]);
    answer(&mut s, "Type", ENTER);
    answer(&mut s, "Title", "half a tit");
    s.send(ControlCode::EndOfText).unwrap();
    s.expect(Eof).unwrap();
    assert_eq!(std::fs::read(pkg.join("params.yaml")).unwrap(), before);
    // and "no" at the confirmation too
    let mut s = wizard(
        &pkg,
        &[
            "--path",
            "/",
            "--name",
            "late",
            "--type",
            "boolean",
            "--default",
            "true",
            "--title",
            "T",
            "--description",
            "D",
            "--required",
            "--trigger",
            "update",
            "--immutable",
            "--write-only",
        ],
    );
    answer(&mut s, "Allowed value 1", ENTER);
    answer(&mut s, "Write it?", "n");
    s.expect("nothing written").unwrap();
    s.expect(Eof).unwrap();
    assert_eq!(std::fs::read(pkg.join("params.yaml")).unwrap(), before);
}
