//! `kudo package verify NEW --against OLD`: the upgrade from OLD judged offline, on two
//! versions of a small operator written here (a ConfigMap and a CRD): exit codes, the text and
//! the JSON.

use std::path::{Path, PathBuf};

use kudo_testkit::kudo;
use serde_json::Value;

const PARAMS: &str = "apiVersion: kudo.dev/v1beta2\ntype: object\nproperties:\n  \
    nodes:\n    type: integer\n    default: 3\n  \
    heap:\n    type: string\n    default: 1G\n";

const CM: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: widgets\ndata:\n  \
    nodes: \"{{Params.nodes}}\"\n";

/// CRD `widgets.example.com`, version v1, `spec.replicas` (required when `required`).
fn crd(required: bool) -> String {
    let required = if required {
        "              required: [replicas]\n"
    } else {
        ""
    };
    format!(
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n\
         metadata:\n  name: widgets.example.com\n\
         spec:\n  group: example.com\n  scope: Namespaced\n  \
         names:\n    kind: Widget\n    plural: widgets\n  \
         versions:\n    - name: v1\n      served: true\n      storage: true\n      \
         schema:\n        openAPIV3Schema:\n          type: object\n          \
         properties:\n            spec:\n              type: object\n{required}              \
         properties:\n                replicas:\n                  type: integer\n"
    )
}

/// Operator `widgets` at `version` in `dir/name`, whose deploy plan applies the ConfigMap and
/// `crd`.
fn package(dir: &Path, name: &str, version: &str, params: &str, crd: &str) -> PathBuf {
    let pkg = dir.join(name);
    std::fs::create_dir_all(pkg.join("templates")).unwrap();
    let operator = format!(
        "apiVersion: kudo.dev/v1beta1\nname: widgets\noperatorVersion: {version}\n\
         kubernetesVersion: 1.18.0\nmaintainers:\n  - name: A\n    email: a@example.com\n\
         tasks:\n  - name: app\n    kind: Apply\n    spec:\n      resources: [cm.yaml, crd.yaml]\n\
         plans:\n  deploy:\n    strategy: serial\n    phases:\n      - name: p\n        strategy: serial\n        \
         steps:\n          - name: s\n            tasks: [app]\n"
    );
    std::fs::write(pkg.join("operator.yaml"), operator).unwrap();
    std::fs::write(pkg.join("params.yaml"), params).unwrap();
    std::fs::write(pkg.join("templates/cm.yaml"), CM).unwrap();
    std::fs::write(pkg.join("templates/crd.yaml"), crd).unwrap();
    pkg
}

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn verify(new: &Path, old: &Path, json: bool) -> Run {
    let mut cmd = kudo();
    cmd.args(["package", "verify"])
        .arg(new)
        .arg("--against")
        .arg(old);
    if json {
        cmd.args(["-o", "json"]);
    }
    let out = cmd.output().unwrap();
    Run {
        code: out.status.code().unwrap(),
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
    }
}

#[test]
fn an_upgrade_that_breaks_an_instance_fails_verify_against() {
    let dir = tempfile::tempdir().unwrap();
    let old = package(dir.path(), "old", "1.0.0", PARAMS, &crd(false));
    let params_without_heap = PARAMS.replace("  heap:\n    type: string\n    default: 1G\n", "");
    let dropped = package(
        dir.path(),
        "dropped",
        "1.1.0",
        &params_without_heap,
        &crd(false),
    );
    let required = package(dir.path(), "required", "1.2.0", PARAMS, &crd(true));
    let noted = package(
        dir.path(),
        "noted",
        "1.3.0",
        &PARAMS.replace("default: 1G", "default: 2G"),
        &crd(false),
    );

    // A version against itself: nothing to say.
    let same = verify(&old, &old, false);
    assert_eq!(same.code, 0, "{}", same.stderr);
    assert!(
        same.stdout
            .contains("widgets 1.0.0 -> 1.0.0: 0 unsafe, 0 to note"),
        "{}",
        same.stdout
    );

    // A dropped parameter: unsafe, exit 1, named on stderr.
    let run = verify(&dropped, &old, false);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(run.stdout.contains("package verified"), "{}", run.stdout);
    assert!(
        run.stdout
            .contains("widgets 1.0.0 -> 1.1.0: 1 unsafe, 0 to note"),
        "{}",
        run.stdout
    );
    assert!(run.stderr.contains("value-dropped"), "{}", run.stderr);
    assert!(run.stderr.contains("/heap"), "{}", run.stderr);
    assert!(
        run.stderr.contains("breaks any Instance that set"),
        "{}",
        run.stderr
    );

    // A CRD field newly required: unsafe by OLM's rules.
    let run = verify(&required, &old, false);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stdout
            .contains("widgets 1.0.0 -> 1.2.0: 1 unsafe, 0 to note"),
        "{}",
        run.stdout
    );
    assert!(run.stderr.contains("required-added"), "{}", run.stderr);
    assert!(
        run.stderr.contains("CRD widgets.example.com, version v1"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("/spec/replicas"), "{}", run.stderr);

    // A changed default is only noted.
    let run = verify(&noted, &old, false);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout
            .contains("widgets 1.0.0 -> 1.3.0: 0 unsafe, 1 to note"),
        "{}",
        run.stdout
    );
    assert!(run.stderr.contains("default-changed"), "{}", run.stderr);

    // JSON: the `against` object.
    let run = verify(&dropped, &old, true);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(report["ok"], true, "the package itself verifies");
    let against = &report["against"];
    assert_eq!(against["operator"], "widgets");
    assert_eq!(against["old"], "1.0.0");
    assert_eq!(against["new"], "1.1.0");
    assert_eq!(against["unsafe"], true);
    assert_eq!(against["parameters"][0]["code"], "value-dropped");
    assert_eq!(against["parameters"][0]["pointer"], "/heap");
    assert_eq!(against["crds"], serde_json::json!([]));

    let run = verify(&required, &old, true);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    let crds = &report["against"]["crds"];
    assert_eq!(crds.as_array().unwrap().len(), 1, "{crds}");
    assert_eq!(crds[0]["crd"], "widgets.example.com");
    assert_eq!(crds[0]["version"], "v1");
    assert_eq!(crds[0]["path"], "/spec/replicas");
    assert_eq!(crds[0]["rule"], "required");
    assert_eq!(crds[0]["code"], "required-added");
    assert_eq!(crds[0]["safe"], false);
    assert_eq!(report["against"]["parameters"], serde_json::json!([]));

    let run = verify(&noted, &old, true);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(report["against"]["unsafe"], false);
    assert_eq!(report["against"]["parameters"][0]["severity"], "warning");
}

#[test]
fn verify_against_another_operator_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let old = package(dir.path(), "old", "1.0.0", PARAMS, &crd(false));
    let run = verify(&kudo_testkit::example("cassandra-v1beta2"), &old, false);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains("--against is operator widgets"),
        "{}",
        run.stderr
    );
}
