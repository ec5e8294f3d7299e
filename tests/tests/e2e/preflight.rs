//! Upgrades that cannot break what is running (issue 35, `docs/upgrade-safety.md`): the
//! preflight refuses, before anything is written, an upgrade whose CRD change OLM's rules call
//! unsafe and one that drops a value the user set (the CLI, and the webhook for a raw write),
//! until `--force` or `--allow-drop` lets it through; a deprecated parameter warns through
//! `kubectl` and `kudo`. On the real control plane, with the manager and the webhook as their
//! ServiceAccounts.

use crate::harness::*;
use crate::kudo_manifests::kubectl_apply;

/// The preflight fixture's version `v` (`v1`, `v2`).
fn preflight(v: &str) -> PathBuf {
    fixture("e2e/preflight").join(v)
}

/// The CRD the fixture applies in this scenario's namespace, as JSON (`None`: not there).
fn widget_crd(s: &Scenario) -> Option<Value> {
    s.get(&s.crds(), &format!("widgets.{}.e2e.kudo.dev", s.namespace))
}

/// `spec.required` of the CRD's `v1` schema.
fn required_fields(crd: &Value) -> Value {
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["required"]
        .clone()
}

#[test]
fn an_unsafe_crd_change_or_a_dropped_value_is_refused_until_forced_or_allowed() {
    let Some(s) = Scenario::start_with_workloads("preflight", false) else {
        return;
    };
    s.install(&preflight("v1"), "app").ok();
    s.install(&preflight("v1"), "kept")
        .params(&["legacy=old-setting"])
        .ok();
    let crd = widget_crd(&s).expect("the deploy plan applied the CRD");
    assert_eq!(required_fields(&crd), Value::Null);
    let before = crd["metadata"]["resourceVersion"].clone();

    // The CRD gains a required field: refused by the CLI, naming the CRD, the field and the
    // rule; nothing written (the CRD, the Instance, no OperatorVersion 0.2.0).
    let started = Instant::now();
    let refused = s
        .upgrade(&preflight("v2"), "app")
        .no_wait()
        .assert()
        .code(1);
    let stderr = text(&refused.get_output().stderr);
    say(&format!(
        "the CRD preflight refused the upgrade in {} ms (the whole kudo upgrade)",
        started.elapsed().as_millis()
    ));
    let crd_name = format!("widgets.{}.e2e.kudo.dev", s.namespace);
    for part in [
        crd_name.as_str(),
        "version v1",
        "/spec/owner",
        "new required field",
        "[required-added]",
        "OLM",
        "--force",
    ] {
        assert!(stderr.contains(part), "{part}: {stderr}");
    }
    let crd = widget_crd(&s).expect("the CRD is still there");
    assert_eq!(
        crd["metadata"]["resourceVersion"], before,
        "the CRD is unchanged"
    );
    assert_eq!(
        s.instance("app")["spec"]["operatorVersion"]["name"],
        "e2e-preflight-0.1.0"
    );
    let ovs = s.api("kudo.dev/v1beta2", "OperatorVersion", "operatorversions");
    assert!(
        s.get(&ovs, "e2e-preflight-0.2.0").is_none(),
        "nothing was created"
    );

    // With --force it proceeds, saying so; the manager applies the CRD and notes why.
    let forced = s.upgrade(&preflight("v2"), "app").args(&["--force"]).ok();
    let stderr = text(&forced.get_output().stderr);
    assert!(stderr.contains("allowed by --force"), "{stderr}");
    assert!(stderr.contains("/spec/owner"), "{stderr}");
    let crd = widget_crd(&s).expect("the CRD is there");
    assert_eq!(required_fields(&crd), json!(["owner"]));
    assert_eq!(s.config_map("app-config")["version"], "0.2.0");

    // A value the user set that 0.2.0 drops, with no oldName to carry it: refused by the CLI
    // and, sent raw, by the webhook; let go with --allow-drop.
    let refused = s
        .upgrade(&preflight("v2"), "kept")
        .no_wait()
        .assert()
        .code(1);
    let stderr = text(&refused.get_output().stderr);
    for part in ["/legacy", "[value-dropped]", "--allow-drop legacy"] {
        assert!(stderr.contains(part), "{part}: {stderr}");
    }
    let message = refusal(s.patch_raw(
        "kept",
        json!({"spec": {"operatorVersion": {"name": "e2e-preflight-0.2.0"}}}),
    ));
    assert!(message.contains("denied the request"), "{message}");
    assert!(
        message.contains("/legacy") && message.contains("value-dropped"),
        "{message}"
    );
    assert_eq!(
        s.instance("kept")["spec"]["operatorVersion"]["name"],
        "e2e-preflight-0.1.0"
    );
    let allowed = s
        .upgrade(&preflight("v2"), "kept")
        .args(&["--allow-drop", "legacy"])
        .ok();
    let stderr = text(&allowed.get_output().stderr);
    assert!(stderr.contains("allowed by --allow-drop"), "{stderr}");
    let kept = s.instance("kept");
    assert_eq!(
        kept["spec"]["operatorVersion"]["name"],
        "e2e-preflight-0.2.0"
    );
    assert!(kept["spec"]["parameters"].get("legacy").is_none(), "{kept}");

    // The manager checks a CRD before it applies one in any plan: a new Instance of 0.1.0 would
    // take the CRD back (a field removed), so its step fails, FATAL, and the CRD stays.
    let failed = s.install(&preflight("v1"), "older").assert().code(1);
    let stderr = text(&failed.get_output().stderr);
    for part in [
        "step crd",
        "is not applied",
        "/spec/owner",
        "[field-removed]",
        "existingFieldRemoval",
    ] {
        assert!(stderr.contains(part), "{part}: {stderr}");
    }
    let older = s.instance("older");
    assert_eq!(
        older["status"]["planStatus"]["deploy"]["status"], "FATAL_ERROR",
        "{older}"
    );
    assert_eq!(
        required_fields(&widget_crd(&s).expect("the CRD")),
        json!(["owner"])
    );

    // A deprecated parameter: kubectl prints the webhook's warning, and so does kudo.
    let manifest = format!(
        "apiVersion: kudo.dev/v1beta2\nkind: Instance\nmetadata:\n  name: old-style\n  namespace: {ns}\nspec:\n  operatorVersion:\n    name: e2e-preflight-0.2.0\n  parameters:\n    mode: slow\n",
        ns = s.namespace
    );
    let warned = kubectl_apply(&s, &manifest);
    assert!(warned.contains("Warning"), "{warned}");
    assert!(
        warned.contains("/mode: is deprecated in e2e-preflight-0.2.0"),
        "{warned}"
    );
    assert!(warned.contains("use /speed instead"), "{warned}");
    let updated = s.update("old-style").params(&["mode=slower"]).ok();
    let stderr = text(&updated.get_output().stderr);
    assert!(stderr.contains("is deprecated"), "{stderr}");

    let _ = s
        .runtime
        .block_on(s.crds().delete(&crd_name, &DeleteParams::default()));
}
