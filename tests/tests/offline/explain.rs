//! `kudo explain` on packages (offline): the top level, a nested parameter with its inherited
//! plan and immutability, array items, a `writeOnly` default that never shows, a pointer the
//! package lacks, the JSON shape, a KUDO (v1beta1) package of the corpus. `--instance` is
//! covered by kudo-client's mocked-server tests (`cli/client/tests/explain.rs`).

use std::path::Path;

use kudo_testkit::{example, fixture, kudo};
use serde_json::{Value, json};

/// `kudo explain PACKAGE ARGS...`: stdout, stderr and the exit code.
fn explain(pkg: &Path, args: &[&str]) -> (String, String, Option<i32>) {
    let out = kudo()
        .arg("explain")
        .arg(pkg)
        .args(args)
        .output()
        .expect("kudo runs");
    (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
        out.status.code(),
    )
}

fn ok(pkg: &Path, args: &[&str]) -> String {
    let (out, err, code) = explain(pkg, args);
    assert_eq!(code, Some(0), "kudo explain {args:?}: {err}");
    out
}

fn json_of(pkg: &Path, args: &[&str]) -> Value {
    let mut args = args.to_vec();
    args.extend(["-o", "json"]);
    serde_json::from_str(&ok(pkg, &args)).unwrap()
}

#[test]
fn the_top_level_lists_every_parameter_as_fields() {
    let out = ok(&example("cassandra-v1beta2"), &[]);
    insta::assert_snapshot!("top_level_cassandra", out);
    for field in [
        "clusterName  <string> -required- -immutable-",
        "nodeCount  <integer> -required-",
        "topology  <array of object>",
        "backup  <object> (trigger: backup-update)",
    ] {
        assert!(out.contains(field), "{field}: {out}");
    }
}

#[test]
fn a_nested_parameter_shows_its_type_bounds_and_inherited_plan() {
    let pkg = example("cassandra-v1beta2");
    let out = ok(&pkg, &["/topology/0/datacenterName"]);
    insta::assert_snapshot!("datacenter_name", out);
    let e = json_of(&pkg, &["topology/0/nodes"]);
    assert_eq!(e["type"], "integer");
    assert_eq!(e["constraints"], json!({"minimum": 1}));
    assert_eq!(e["trigger"], "update");
    assert_eq!(e["triggerSource"], "fallback");

    // (pointer, plan, where from, the ancestor)
    let cases: &[(&str, &str, &str, Option<&str>)] = &[
        ("/backup", "backup-update", "own", None),
        (
            "/backup/schedule",
            "backup-update",
            "inherited",
            Some("/backup"),
        ),
        (
            "/backup/credentials/password",
            "backup-update",
            "inherited",
            Some("/backup"),
        ),
        (
            "metrics/port",
            "metrics-update",
            "inherited",
            Some("/metrics"),
        ),
        ("/nodeCount", "update", "fallback", None),
    ];
    for (p, plan, source, from) in cases {
        let e = json_of(&pkg, &[p]);
        assert_eq!(e["trigger"], *plan, "{p}");
        assert_eq!(e["triggerSource"], *source, "{p}");
        assert_eq!(e["triggerFrom"].as_str(), *from, "{p}");
    }
    let text = ok(&pkg, &["/backup/schedule"]);
    assert!(
        text.contains("TRIGGER:    backup-update (inherited from /backup)"),
        "{text}"
    );
    let port = json_of(&pkg, &["/metrics/port"]);
    assert_eq!(port["default"], 7200);
    assert_eq!(
        port["constraints"],
        json!({"minimum": 1024, "maximum": 65535})
    );
}

#[test]
fn immutable_is_inherited_from_the_outermost_immutable_ancestor() {
    let pkg = fixture("deep-schema");
    let e = json_of(&pkg, &["/cluster/name"]);
    assert_eq!(
        (e["immutable"].clone(), e["immutableFrom"].clone()),
        (json!(true), json!(null))
    );
    let top = json_of(&example("cassandra-v1beta2"), &["clusterName"]);
    assert_eq!(top["immutable"], true);
    assert_eq!(top["required"], true);

    // An immutable object: its children are immutable through it.
    let dir = tempfile::tempdir().unwrap();
    let pkg = dir.path().join("pkg");
    kudo_testkit::copy_dir(&fixture("deep-schema"), &pkg);
    let params = std::fs::read_to_string(pkg.join("params.yaml")).unwrap();
    let params = params.replacen(
        "      network:\n        type: object\n",
        "      network:\n        type: object\n        immutable: true\n",
        1,
    );
    std::fs::write(pkg.join("params.yaml"), params).unwrap();
    let e = json_of(&pkg, &["/cluster/network/tls/enabled"]);
    assert_eq!(e["immutable"], true);
    assert_eq!(e["immutableFrom"], "/cluster/network");
    let text = ok(&pkg, &["/cluster/network/tls/enabled"]);
    assert!(
        text.contains("IMMUTABLE:  yes (inherited from /cluster/network)"),
        "{text}"
    );
}

#[test]
fn a_write_only_default_never_appears() {
    let pkg = fixture("deep-schema");
    for args in [
        &["/cluster/network/tls/certificate/key"][..],
        &["/cluster/network/tls/certificate/key", "-o", "json"],
        &["/cluster/network/tls/certificate"],
        &["/cluster/network/tls/certificate", "-o", "json"],
        &["/cluster/network/tls"],
        &[],
        &["-o", "json"],
    ] {
        let (out, err, code) = explain(&pkg, args);
        assert_eq!(code, Some(0), "{args:?}: {err}");
        assert!(
            !out.contains("not-a-real-key") && !err.contains("not-a-real-key"),
            "{args:?}: {out}{err}"
        );
    }
    let text = ok(&pkg, &["/cluster/network/tls/certificate/key"]);
    assert!(text.contains("DEFAULT:    (hidden: writeOnly)"), "{text}");
    assert!(text.contains("WRITEONLY:  yes\n"), "{text}");
    let e = json_of(&pkg, &["/cluster/network/tls/certificate/key"]);
    assert_eq!(e["defaultHidden"], true);
    assert!(e.get("default").is_none(), "{e}");
    let parent = ok(&pkg, &["/cluster/network/tls/certificate"]);
    assert!(parent.contains("key  <string> -writeOnly-"), "{parent}");
}

#[test]
fn arrays_show_their_items_and_the_items_fields() {
    let pkg = example("cassandra-v1beta2");
    let e = json_of(&pkg, &["/topology"]);
    assert_eq!(e["type"], "array of object");
    assert_eq!(e["items"]["pointer"], "/topology/0");
    assert_eq!(e["items"]["type"], "object");
    let fields: Vec<(&str, bool)> = e["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["pointer"].as_str().unwrap(),
                f["required"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        fields,
        [
            ("/topology/0/datacenterName", true),
            ("/topology/0/rackName", false),
            ("/topology/0/nodes", false),
            ("/topology/0/labels", false)
        ]
    );
    let text = ok(&pkg, &["/jvm/extraOptions"]);
    assert!(
        text.contains("ITEMS:      <string> (/jvm/extraOptions/0)"),
        "{text}"
    );
}

#[test]
fn a_pointer_the_package_lacks_exits_1_with_did_you_mean() {
    let pkg = example("cassandra-v1beta2");
    // (pointer, what stderr says)
    let cases: &[(&str, &str)] = &[
        ("/nodeCont", "did you mean /nodeCount?"),
        (
            "topology/0/datacenterNmae",
            "did you mean /topology/0/datacenterName?",
        ),
        (
            "/topology/-",
            "array items are named by an index: /topology/0",
        ),
        ("jvm.heapSize", "did you mean /jvm/heapSize?"),
    ];
    for (p, help) in cases {
        let (out, err, code) = explain(&pkg, &[p]);
        assert_eq!(code, Some(1), "{p}: {err}");
        assert!(out.is_empty(), "{p}: {out}");
        assert!(err.contains("unknown-parameter"), "{p}: {err}");
        assert!(err.contains(help), "{p}: {err}");
    }
}

#[test]
fn json_output_is_one_object_with_documented_fields() {
    let e = json_of(&example("cassandra-v1beta2"), &["/clusterName"]);
    let keys: Vec<&str> = e.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "operator",
            "operatorVersion",
            "pointer",
            "type",
            "title",
            "description",
            "default",
            "defaultHidden",
            "required",
            "constraints",
            "trigger",
            "triggerSource",
            "immutable",
            "writeOnly",
            "fields"
        ]
    );
    assert_eq!(e["operator"], "cassandra");
    assert_eq!(e["default"], "cassandra");
    assert_eq!(
        e["constraints"],
        json!({"pattern": "^[a-z][a-z0-9-]*$", "minLength": 1, "maxLength": 63})
    );
    let top = json_of(&example("cassandra-v1beta2"), &[]);
    assert_eq!(top["pointer"], "");
    assert_eq!(top["fields"][0]["name"], "clusterName");
    assert_eq!(top["fields"][0]["required"], true);
}

#[test]
fn a_kudo_v1beta1_package_is_explained_through_its_conversion() {
    let zk = example("zookeeper-v1beta1");
    let e = json_of(&zk, &["NODE_COUNT"]);
    assert_eq!(e["pointer"], "/NODE_COUNT");
    let top = ok(&zk, &[]);
    assert!(top.contains("NODE_COUNT  <"), "{top}");

    let Some(shared) = kudo_testkit::shared() else {
        return;
    };
    let cassandra = shared.join("corpus/kudo-operators-full/cassandra");
    let e = json_of(&cassandra, &["BACKUP_TRIGGER"]);
    assert_eq!(e["trigger"], "backup");
    assert_eq!(e["triggerSource"], "own");
    assert_eq!(e["default"], "1");
    let e = json_of(&cassandra, &["NODE_COUNT"]);
    assert_eq!(e["triggerSource"], "fallback");
    let (_, err, code) = explain(&cassandra, &["NODE_CONT"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("did you mean /NODE_COUNT?"), "{err}");
}

#[test]
fn instance_and_package_are_one_or_the_other() {
    let out = kudo()
        .args(["explain", "--instance", "cassandra", "pkg", "/nodeCount"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("takes no PACKAGE"));
    let out = kudo().args(["explain"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    // --instance with POINTER alone goes to the cluster (none here).
    let out = kudo()
        .args(["explain", "--instance", "cassandra", "/nodeCount"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("does not exist"));
}
