use crate::harness::*;

#[test]
fn init_installs_crds_that_store_v1beta2_and_convert_through_the_local_webhook() {
    let Some(s) = Scenario::start("init") else {
        return;
    };
    for name in ["operatorversions.kudo.dev", "instances.kudo.dev"] {
        let crd = s.get(&s.crds(), name).expect("kudo init created the CRD");
        let stored: Vec<&Value> = crd["spec"]["versions"]
            .as_array()
            .expect("versions")
            .iter()
            .filter(|v| v["storage"] == true)
            .collect();
        assert_eq!(stored.len(), 1);
        assert_eq!(stored[0]["name"], "v1beta2", "{name}");
        assert_eq!(crd["spec"]["conversion"]["strategy"], "Webhook", "{name}");
        assert_eq!(
            crd["spec"]["conversion"]["webhook"]["clientConfig"]["url"],
            format!("{}/convert", s.daemons.url),
            "{name}"
        );
    }
    // Running it again is harmless.
    init(&s.kubeconfig, &s.daemons);
}

#[test]
fn changes_that_select_two_plans_are_refused() {
    let Some(s) = Scenario::start("conflict") else {
        return;
    };
    s.install(&configs(), "cfg").ok();
    s.update("cfg")
        .params(&["replicas=2", "rotation/secret=x"])
        .assert()
        .code(1)
        .stderr(predicates::str::contains("/replicas"))
        .stderr(predicates::str::contains("/rotation"));
    let i = s.instance("cfg");
    assert!(
        i["spec"]["parameters"].is_null() && i["metadata"]["generation"] == 1,
        "nothing was written: {i}"
    );
}

#[test]
fn an_immutable_change_is_refused_by_the_cli_and_by_the_webhook() {
    let Some(s) = Scenario::start("immutable") else {
        return;
    };
    s.install(&configs(), "cfg")
        .params(&["clusterName=blue"])
        .ok();
    s.update("cfg")
        .params(&["clusterName=green"])
        .assert()
        .code(1)
        .stderr(predicates::str::contains("/clusterName"));
    let message = refusal(s.patch_raw(
        "cfg",
        json!({"spec": {"parameters": {"clusterName": "green"}}}),
    ));
    assert!(message.contains("denied the request"), "{message}");
    assert!(message.contains("clusterName"), "{message}");
    assert_eq!(
        s.instance("cfg")["spec"]["parameters"]["clusterName"],
        "blue"
    );
}

#[test]
fn an_unknown_parameter_sent_raw_is_refused_by_the_webhook() {
    let Some(s) = Scenario::start("unknown") else {
        return;
    };
    s.install(&configs(), "cfg").ok();
    let message = refusal(s.patch_raw("cfg", json!({"spec": {"parameters": {"replcas": 2}}})));
    assert!(message.contains("denied the request"), "{message}");
    assert!(message.contains("replcas"), "{message}");
    assert!(
        s.instance("cfg")["spec"]["parameters"]
            .get("replcas")
            .is_none()
    );
}

#[test]
fn a_too_short_secret_is_refused_through_either_api_version_and_never_echoed() {
    let Some(s) = Scenario::start("secret") else {
        return;
    };
    s.install(&configs(), "cfg")
        .params(&["auth/adminPassword=long-enough-pw-1"])
        .ok();
    s.wait_plan("cfg", "deploy");
    let short = "tiny-pw-9";
    let nested = json!({"spec": {"parameters": {"auth": {"adminPassword": short}}}});
    let as_text = json!({"spec": {"parameters": {"auth":
        json!({"adminPassword": short}).to_string()}}});
    for (version, patch, how) in [
        ("v1beta2", nested.clone(), "a v1beta2 value"),
        ("v1beta1", as_text, "a v1beta1 string"),
        ("v1beta1", nested, "a nested object sent to v1beta1"),
    ] {
        let refused = refusal(s.patch_raw_as(version, "cfg", patch));
        assert!(
            !refused.contains(short),
            "{how}: the secret is echoed: {refused}"
        );
        assert!(
            refused.contains("auth"),
            "{how}: the parameter is not named: {refused}"
        );
        let inst = s.instance("cfg");
        assert!(
            inst["spec"]["parameters"]["auth"]["adminPassword"].is_null(),
            "{how}: a secret is in the Instance: {}",
            inst["spec"]["parameters"]
        );
        assert_eq!(
            inst["spec"]["parametersFrom"].as_array().map(Vec::len),
            Some(1),
            "{how}: the Instance names its Secret"
        );
    }
}

/// Issue 23: `kubectl patch --type merge` of a nested value through v1beta1, as users write
/// it. The API server prunes the value's fields (the v1beta1 map holds strings), and the write
/// was answered "patched" with nothing stored. Now the v1beta1 webhook refuses it with 400,
/// naming the parameter; the same value sent as JSON text is stored.
#[test]
fn a_nested_value_patched_through_v1beta1_is_refused_naming_it_never_dropped() {
    let Some(s) = Scenario::start("v1beta1-nested") else {
        return;
    };
    s.install(&configs(), "cfg")
        .params(&["auth/adminPassword=long-enough-pw-1"])
        .ok();
    s.wait_plan("cfg", "deploy");
    let generation = s.instance("cfg")["metadata"]["generation"].clone();
    let kubectl = |patch: &str| {
        s.kubectl(&[
            "patch",
            "instances.v1beta1.kudo.dev",
            "cfg",
            "-n",
            &s.namespace,
        ])
        .args(["--type", "merge", "-p", patch])
        .output()
        .expect("kubectl runs")
    };
    for (patch, parameter) in [
        (
            r#"{"spec":{"parameters":{"rotation":{"secret":"second-secret"}}}}"#,
            "/rotation",
        ),
        (
            r#"{"spec":{"parameters":{"auth":{"adminPassword":"x"}}}}"#,
            "/auth",
        ),
    ] {
        let out = kubectl(patch);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{patch}: {stderr}");
        assert!(
            stderr.contains(
                r#"admission webhook "instances-v1beta1.mutate.kudo.dev" denied the request"#
            ),
            "{stderr}"
        );
        assert!(
            stderr.contains(&format!(
                "{parameter}: kudo.dev/v1beta1 holds each parameter value as a string; this one is an object"
            )),
            "{stderr}"
        );
        assert!(!stderr.contains("second-secret"), "{stderr}");
        assert_eq!(
            s.instance("cfg")["metadata"]["generation"],
            generation,
            "{patch}: the Instance changed"
        );
    }
    // The same value as JSON text: stored, and its plan runs.
    let out = kubectl(r#"{"spec":{"parameters":{"rotation":"{\"secret\":\"second-secret\"}"}}}"#);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("patched"),
        "{}",
        text(&out.stdout)
    );
    assert_eq!(
        s.instance("cfg")["spec"]["parameters"]["rotation"],
        json!({"secret": "second-secret"})
    );
    s.wait_plan("cfg", "rotate");
}
