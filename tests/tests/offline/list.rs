//! `kudo package list parameters`: the tree table (snapshots at two widths), the data outputs.

use kudo_testkit::{example, fixture, kudo};

fn list(pkg: &std::path::Path, args: &[&str]) -> String {
    let out = kudo()
        .args(["package", "list", "parameters"])
        .arg(pkg)
        .args(args)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    String::from_utf8(out).unwrap()
}

#[test]
fn tree_tables() {
    for (name, pkg) in [
        ("cassandra", example("cassandra-v1beta2")),
        ("zookeeper", example("zookeeper-v1beta1")),
        ("deep", fixture("deep-schema")),
    ] {
        for width in ["80", "200"] {
            insta::assert_snapshot!(
                format!("table_{name}_{width}"),
                list(&pkg, &["--descriptions", "--width", width])
            );
        }
    }
}

#[test]
fn a_secret_default_is_masked_everywhere() {
    let pkg = fixture("deep-schema");
    for args in [&["--descriptions"][..], &["-o", "json"], &["-o", "yaml"]] {
        let out = list(&pkg, args);
        assert!(!out.contains("not-a-real-key"), "{args:?}: {out}");
    }
    assert!(list(&pkg, &[]).contains("<hidden: writeOnly>"));
}

#[test]
fn names_required_and_data_outputs() {
    let pkg = fixture("deep-schema");
    let names = list(&pkg, &["--names"]);
    assert_eq!(
        names.lines().collect::<Vec<_>>(),
        [
            "/cluster",
            "/cluster/name",
            "/cluster/network",
            "/cluster/network/tls",
            "/cluster/network/tls/enabled",
            "/cluster/network/tls/certificate",
            "/cluster/network/tls/certificate/secretName",
            "/cluster/network/tls/certificate/key",
            "/cluster/network/ports",
            "/cluster/network/ports/0",
            "/cluster/network/ports/0/name",
            "/cluster/network/ports/0/port",
            "/replicas",
        ]
    );
    let required = list(&pkg, &["--required", "--names"]);
    assert_eq!(
        required.lines().collect::<Vec<_>>(),
        [
            "/cluster",
            "/cluster/name",
            "/cluster/network",
            "/cluster/network/ports",
            "/cluster/network/ports/0",
            "/cluster/network/ports/0/port"
        ]
    );
    let rows: serde_json::Value = serde_json::from_str(&list(&pkg, &["-o", "json"])).unwrap();
    let port = rows
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["pointer"] == "/cluster/network/ports/0/port")
        .unwrap();
    assert_eq!(port["trigger"], "network-update");
    assert_eq!(
        port["triggerSource"],
        serde_json::json!({"inherited": "/cluster/network"})
    );
    assert_eq!(port["required"], true);
    // A v1beta1 package lists its converted schema.
    let schema: serde_json::Value =
        serde_json::from_str(&list(&example("zookeeper-v1beta1"), &["-o", "json-schema"])).unwrap();
    assert_eq!(schema["apiVersion"], "kudo.dev/v1beta2");
    assert_eq!(schema["properties"]["NODE_COUNT"]["type"], "integer");
}
