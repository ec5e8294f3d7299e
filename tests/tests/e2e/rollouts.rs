//! Rollouts (issue 48): one operator's Instances moved to a new version in waves by the
//! manager's Rollout controller, through the admission webhook, as the Instances'
//! ServiceAccount.

use crate::harness::*;

/// The OperatorVersion of `package` in `namespace`, applied as `kudo upgrade` would create it.
fn operator_version(s: &Scenario, package: &std::path::Path) -> String {
    let pkg = kudo_pkg::Package::load(package).expect("the fixture loads");
    let (_, ov) = kudo_crd::package::objects(&pkg, &s.namespace);
    let mut v = serde_json::to_value(&ov).expect("an OperatorVersion is JSON");
    v["apiVersion"] = json!("kudo.dev/v1beta2");
    v["kind"] = json!("OperatorVersion");
    s.apply(&v);
    ov.metadata.name.unwrap_or_default()
}

#[test]
fn a_rollout_moves_the_selected_instances_wave_by_wave_and_leaves_the_others() {
    let Some(s) = Scenario::start("rollout") else {
        return;
    };
    s.instance_service_account();
    let kep33 = |v: &str| fixture("kep33").join(v);
    let names = ["r0", "r1", "r2", "r3"];
    for name in names.iter().chain(&["other"]) {
        s.install(&kep33("v1"), name)
            .params(&[
                &format!("CLUSTER_NAME={name}"),
                "BACKUP_CREDENTIALS_USERNAME=u",
                "BACKUP_CREDENTIALS_PASSWORD=p",
            ])
            .ok();
    }
    for name in names {
        s.kubectl(&["label", "instance", name, "team=blue", "-n", &s.namespace])
            .assert()
            .success();
    }
    // r3 goes first: its priority label.
    s.kubectl(&[
        "label",
        "instance",
        "r3",
        "kudo.dev/rollout-priority=1",
        "-n",
        &s.namespace,
    ])
    .assert()
    .success();
    let target = operator_version(&s, &kep33("v2"));
    let other_before = s.instance("other");
    s.apply(&json!({"apiVersion": "kudo.dev/v1beta2", "kind": "Rollout",
        "metadata": {"name": "blue", "namespace": s.namespace},
        "spec": {"operator": "my-operator", "operatorVersion": {"name": target},
            "selector": {"matchLabels": {"team": "blue"}},
            "waves": ["1", "50%", "100%"]}}));
    let rollouts = s.api("kudo.dev/v1beta2", "Rollout", "rollouts");
    let status = || {
        s.get(&rollouts, "blue")
            .map(|r| r["status"].clone())
            .unwrap_or_default()
    };
    wait_until("the rollout completes", || {
        let st = status();
        assert_ne!(st["phase"], "Refused", "{st:#}");
        assert_ne!(st["phase"], "Halted", "{st:#}");
        st["phase"] == "Completed"
    });
    let st = status();
    let members = st["instances"].as_array().expect("instances").clone();
    let order: Vec<&str> = members
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    assert_eq!(order, ["r3", "r0", "r1", "r2"], "{st:#}");
    let waves: Vec<u64> = members
        .iter()
        .map(|m| m["wave"].as_u64().unwrap())
        .collect();
    assert_eq!(
        waves,
        [0, 1, 2, 2],
        "1, then up to 50 % of 4, then the rest"
    );
    assert_eq!(st["waveEnds"], json!([1, 2, 4]));
    for m in &members {
        assert_eq!(m["state"], "Succeeded", "{m:#}");
        assert_eq!(m["fromVersion"], "my-operator-0.1.0");
        let inst = s.instance(m["name"].as_str().unwrap());
        assert_eq!(inst["spec"]["operatorVersion"]["name"], target);
        // oldName carried the value across, as `kudo upgrade` does.
        assert_eq!(inst["spec"]["parameters"]["clusterName"], m["name"]);
    }
    // The Instance no selector matched is untouched.
    let other = s.instance("other");
    assert_eq!(
        other["metadata"]["resourceVersion"],
        other_before["metadata"]["resourceVersion"]
    );
}

#[test]
fn a_rollout_whose_selector_matches_nothing_is_refused_and_touches_nothing() {
    let Some(s) = Scenario::start("rollout-none") else {
        return;
    };
    s.instance_service_account();
    let kep33 = |v: &str| fixture("kep33").join(v);
    let target = operator_version(&s, &kep33("v2"));
    s.apply(&json!({"apiVersion": "kudo.dev/v1beta2", "kind": "Rollout",
        "metadata": {"name": "none", "namespace": s.namespace},
        "spec": {"operator": "my-operator", "operatorVersion": {"name": target},
            "selector": {"matchLabels": {"team": "nobody"}}}}));
    let rollouts = s.api("kudo.dev/v1beta2", "Rollout", "rollouts");
    wait_until("the rollout is refused", || {
        s.get(&rollouts, "none")
            .is_some_and(|r| r["status"]["phase"] == "Refused")
    });
    let r = s.get(&rollouts, "none").unwrap();
    let message = r["status"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("spec.selector matches no Instance of operator my-operator"),
        "{message}"
    );
}
