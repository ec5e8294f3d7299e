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

/// A Rollout whose selector matches no Instance is refused at admission when applied, and by
/// `kudo rollout start`, which leaves no OperatorVersion behind.
#[test]
fn a_rollout_whose_selector_matches_nothing_is_refused_and_leaves_nothing() {
    let Some(s) = Scenario::start("rollout-none") else {
        return;
    };
    s.instance_service_account();
    let kep33 = |v: &str| fixture("kep33").join(v);
    let target = operator_version(&s, &kep33("v2"));
    // Applied as kubectl would: refused at admission.
    let refused = s
        .try_apply(&json!({"apiVersion": "kudo.dev/v1beta2", "kind": "Rollout",
            "metadata": {"name": "none", "namespace": s.namespace},
            "spec": {"operator": "my-operator", "operatorVersion": {"name": target},
                "selector": {"matchLabels": {"team": "nobody"}}}}))
        .expect_err("refused at admission")
        .to_string();
    assert!(
        refused.contains("spec.selector matches no Instance of operator my-operator"),
        "{refused}"
    );
    let rollouts = s.api("kudo.dev/v1beta2", "Rollout", "rollouts");
    assert!(s.get(&rollouts, "none").is_none());
    // Started with kudo: refused the same, and no OperatorVersion is left behind.
    let v2 = fixture("e2e/fleet/v2").to_string_lossy().to_string();
    let out = s
        .kudo(&[
            "rollout",
            "start",
            "none",
            &v2,
            "-l",
            "team=nobody",
            "-n",
            &s.namespace,
        ])
        .output()
        .expect("kudo runs");
    assert!(!out.status.success());
    let said = both(&out);
    assert!(
        said.contains("spec.selector matches no Instance of operator e2e-fleet")
            && said.contains("nothing was written"),
        "{said}"
    );
    let ovs = s.api("kudo.dev/v1beta2", "OperatorVersion", "operatorversions");
    assert!(s.get(&ovs, "e2e-fleet-0.2.0").is_none(), "{said}");
    assert!(s.get(&rollouts, "none").is_none());
}

/// The Rollout `name` of `s`'s namespace, once its phase is `phase` (any final phase other than
/// that one fails at once, with the status).
fn rollout_when(s: &Scenario, name: &str, phase: &str) -> Value {
    let rollouts = s.api("kudo.dev/v1beta2", "Rollout", "rollouts");
    let mut last = Value::Null;
    wait_until(&format!("rollout {name} is {phase}"), || {
        last = s.get(&rollouts, name).unwrap_or_default();
        let now = last["status"]["phase"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let finals = ["Completed", "Halted", "Refused", "Aborted"];
        assert!(
            now == phase || !finals.contains(&now.as_str()),
            "rollout {name} ended {now}, not {phase}: {:#}",
            last["status"]
        );
        now == phase
    });
    last
}

/// A label that names this test's namespaces and nothing else.
fn label_namespaces(s: &Scenario, namespaces: &[&str], label: &str) {
    for ns in namespaces {
        s.kubectl(&["label", "namespace", ns, label])
            .assert()
            .success();
    }
}

/// 30 Instances in two namespaces, waves 1, 20 %, 100 %, one Instance of the second wave whose
/// new version never becomes Ready: the rollout halts in that wave, rolls that Instance back to
/// its version before (whose plan completes again), and no Instance of the third wave is
/// changed.
#[test]
fn a_failure_halts_the_rollout_in_its_wave_and_rolls_the_instance_back() {
    let Some(a) = Scenario::start_with_workloads("rollout-halt-a", false) else {
        return;
    };
    let Some(b) = Scenario::start("rollout-halt-b") else {
        return;
    };
    a.instance_service_account();
    b.instance_service_account();
    // The rollout acts as namespace a's ServiceAccount, which b lets in too.
    b.apply(&json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
        "metadata": {"name": "fleet-from-a", "namespace": b.namespace},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "admin"},
        "subjects": [{"kind": "ServiceAccount", "name": kudo_crd::labels::DEFAULT_SERVICE_ACCOUNT,
            "namespace": a.namespace}]}));
    let fleet = |v: &str| fixture("e2e/fleet").join(v);
    let names = |p: &'static str| (0..15).map(move |i| format!("{p}{i:02}"));
    for (s, prefix) in [(&a, "a"), (&b, "b")] {
        for name in names(prefix) {
            // a03, of the second wave, is the one whose new version never becomes Ready.
            let ready = if name == "a03" { "false" } else { "true" };
            s.install(&fleet("v1"), &name)
                .param(&format!("ready={ready}"))
                .no_wait()
                .ok();
        }
    }
    for (s, prefix) in [(&a, "a"), (&b, "b")] {
        for name in names(prefix) {
            s.wait_plan(&name, "deploy");
        }
    }
    // b07 goes first: its priority label; then namespace a before b, by name.
    b.kubectl(&[
        "label",
        "instance",
        "b07",
        "kudo.dev/rollout-priority=1",
        "-n",
        &b.namespace,
    ])
    .assert()
    .success();
    let fleet_label = format!("fleet={}", a.namespace);
    label_namespaces(&a, &[&a.namespace, &b.namespace], &fleet_label);
    let target = operator_version(&a, &fleet("v2"));
    // Each Instance and its ConfigMap as they were before the rollout.
    let configs = |s: &Scenario| s.api("v1", "ConfigMap", "configmaps");
    let before: Vec<(String, Value, Value)> = [(&a, "a"), (&b, "b")]
        .iter()
        .flat_map(|(s, p)| {
            names(p).map(|n| {
                let cm = s.get(&configs(s), &format!("{n}-config"));
                (n.clone(), s.instance(&n), cm.unwrap_or_default())
            })
        })
        .collect();
    a.apply(&json!({"apiVersion": "kudo.dev/v1beta2", "kind": "Rollout",
        "metadata": {"name": "fleet", "namespace": a.namespace},
        "spec": {"operator": "e2e-fleet", "operatorVersion": {"name": target},
            "namespaceSelector": {"matchLabels": {"fleet": a.namespace}},
            "waves": ["1", "20%", "100%"], "progressDeadlineSeconds": 20}}));
    let halted = rollout_when(&a, "fleet", "Halted");
    let st = &halted["status"];
    assert_eq!(st["waveEnds"], json!([1, 6, 30]), "{st:#}");
    assert_eq!(st["wave"], 1, "halted in the second wave: {st:#}");
    let members = st["instances"].as_array().expect("instances");
    let by_name = |n: &str| {
        members
            .iter()
            .find(|m| m["name"] == n)
            .unwrap_or_else(|| panic!("{n} is a member: {st:#}"))
            .clone()
    };
    assert_eq!(by_name("b07")["wave"], 0, "{st:#}");
    for n in ["a00", "a01", "a02", "a03", "a04"] {
        assert_eq!(by_name(n)["wave"], 1, "{n}: {st:#}");
    }
    let failed = by_name("a03");
    assert_eq!(failed["state"], "RolledBack", "{failed:#}");
    assert!(
        st["message"].as_str().unwrap_or_default().contains("a03"),
        "the halt names the failed Instance: {st:#}"
    );
    // The halt is a warning Event on the Rollout.
    let events = a.api("v1", "Event", "events");
    wait_until("the Halted Event", || {
        a.list(&events, "").iter().any(|e| {
            e["involvedObject"]["kind"] == "Rollout"
                && e["involvedObject"]["name"] == "fleet"
                && e["reason"] == "Halted"
                && e["type"] == "Warning"
        })
    });
    // The failed Instance runs its version from before again, and its plan completes.
    wait_until("a03's rollback completes", || {
        let i = a.instance("a03");
        let plan = i["status"]["activePlan"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        i["spec"]["operatorVersion"]["name"] == "e2e-fleet-0.1.0"
            && i["status"]["planStatus"][&plan]["status"] == "COMPLETE"
    });
    assert_eq!(a.config_map("a03-config")["version"], "0.1.0");
    // Nothing of the third wave was touched: the same Instance (generation, resourceVersion,
    // version) and the same ConfigMap (resourceVersion).
    let third: Vec<&Value> = members.iter().filter(|m| m["wave"] == 2).collect();
    assert_eq!(third.len(), 24, "{st:#}");
    for m in third {
        let n = m["name"].as_str().unwrap();
        assert_eq!(m["state"], "Pending", "{m:#}");
        let s = if n.starts_with('a') { &a } else { &b };
        let now = s.instance(n);
        let (_, then, cm_then) = before.iter().find(|(name, _, _)| name == n).unwrap();
        for field in ["generation", "resourceVersion"] {
            assert_eq!(
                now["metadata"][field], then["metadata"][field],
                "{n}: {field}"
            );
        }
        let cm_now = s
            .get(&configs(s), &format!("{n}-config"))
            .unwrap_or_default();
        assert_eq!(
            cm_now["metadata"]["resourceVersion"], cm_then["metadata"]["resourceVersion"],
            "{n}: its ConfigMap"
        );
        assert_eq!(
            now["spec"]["operatorVersion"], then["spec"]["operatorVersion"],
            "{n}"
        );
    }
    // The first two waves' others moved.
    for n in ["b07", "a00", "a01", "a02", "a04"] {
        let s = if n.starts_with('a') { &a } else { &b };
        assert_eq!(by_name(n)["state"], "Succeeded", "{n}: {st:#}");
        assert_eq!(
            s.instance(n)["spec"]["operatorVersion"]["name"],
            target,
            "{n}"
        );
    }
}

/// A tenant's rollout reaches only what its ServiceAccount may: its namespaceSelector also
/// matches a namespace where that account has no rights, so the rollout is refused, naming
/// that namespace, and no Instance moves, not even in its own namespace.
#[test]
fn a_rollout_cannot_reach_instances_its_service_account_may_not_list() {
    let Some(mine) = Scenario::start("rollout-reach-mine") else {
        return;
    };
    let Some(theirs) = Scenario::start("rollout-reach-theirs") else {
        return;
    };
    mine.instance_service_account();
    theirs.instance_service_account();
    let fleet = |v: &str| fixture("e2e/fleet").join(v);
    mine.install(&fleet("v1"), "m").ok();
    theirs.install(&fleet("v1"), "t").ok();
    let label = format!("reach={}", mine.namespace);
    label_namespaces(&mine, &[&mine.namespace, &theirs.namespace], &label);
    let target = operator_version(&mine, &fleet("v2"));
    mine.apply(&json!({"apiVersion": "kudo.dev/v1beta2", "kind": "Rollout",
        "metadata": {"name": "reach", "namespace": mine.namespace},
        "spec": {"operator": "e2e-fleet", "operatorVersion": {"name": target},
            "namespaceSelector": {"matchLabels": {"reach": mine.namespace}}}}));
    let refused = rollout_when(&mine, "reach", "Refused");
    let message = refused["status"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains(&format!(
            "the Instances of namespace {} cannot be listed",
            theirs.namespace
        )) && message.contains("may not list instances.kudo.dev"),
        "{message}"
    );
    for (s, n) in [(&mine, "m"), (&theirs, "t")] {
        assert_eq!(
            s.instance(n)["spec"]["operatorVersion"]["name"],
            "e2e-fleet-0.1.0",
            "{n} did not move"
        );
    }
}

/// `kudo rollout`: a spec the rules refuse is refused by the flag that set it, with nothing
/// created; `--dry-run` lists the selection; a rollout that asks for approval waits; a second
/// rollout claiming its Instances is refused at admission, naming it; a namespace admin
/// without the verb `approve` cannot approve it, one bound to kudo-rollout-approver can (and
/// is recorded by name); `status --wait` ends when it completes.
#[test]
fn the_cli_starts_a_rollout_an_approver_releases_and_no_other_rollout_claims() {
    let Some(s) = Scenario::start("rollout-cli") else {
        return;
    };
    s.instance_service_account();
    let fleet = |v: &str| fixture("e2e/fleet").join(v);
    let v2 = fleet("v2").to_string_lossy().to_string();
    let ns = s.namespace.clone();
    for n in ["c0", "c1"] {
        s.install(&fleet("v1"), n).ok();
        s.kubectl(&["label", "instance", n, "team=blue", "-n", &ns])
            .assert()
            .success();
    }
    let start = |name: &str, extra: &[&str]| {
        let mut args = vec!["rollout", "start", name, &v2, "-l", "team=blue", "-n", &ns];
        args.extend(extra);
        s.kudo(&args).output().expect("kudo runs")
    };
    // Refused by the flag that set it; nothing created, not even the OperatorVersion.
    let out = start("bad", &["--waves", "1,ten,100%"]);
    assert!(!out.status.success());
    let said = both(&out);
    assert!(said.contains("--waves: spec.waves[1] \"ten\""), "{said}");
    let ovs = s.api("kudo.dev/v1beta2", "OperatorVersion", "operatorversions");
    assert!(s.get(&ovs, "e2e-fleet-0.2.0").is_none(), "{said}");
    // The dry run lists what the manager will select, in waves.
    let out = start("blue", &["--dry-run", "-o", "json"]);
    assert!(out.status.success(), "{}", both(&out));
    let dry: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(dry["status"]["waveEnds"], json!([1, 2]), "{dry:#}");
    assert_eq!(dry["status"]["instances"][0]["name"], "c0", "{dry:#}");
    assert!(
        s.get(&ovs, "e2e-fleet-0.2.0").is_none(),
        "a dry run creates nothing"
    );
    // Started, waiting for an approval.
    let out = start("blue", &["--require-approval"]);
    assert!(out.status.success(), "{}", both(&out));
    assert!(
        text(&out.stdout).contains(&format!("Rollout {ns}/blue created")),
        "{}",
        both(&out)
    );
    rollout_when(&s, "blue", "AwaitingApproval");
    // A second rollout of the same Instances is refused at admission, naming the first.
    let out = start("green", &[]);
    assert!(!out.status.success());
    let said = both(&out);
    assert!(
        said.contains(&format!(
            "Instance {ns}/c0 is already claimed by Rollout {ns}/blue"
        )),
        "{said}"
    );
    // A namespace admin may not approve; bound to kudo-rollout-approver, it may.
    let tenant = crate::tenancy::tenant(&s);
    let out = tenant
        .kudo(&["rollout", "approve", "blue", "-n", &ns])
        .output()
        .expect("kudo runs");
    assert!(!out.status.success());
    let said = both(&out);
    assert!(
        said.contains(&format!("may not approve Rollouts in namespace {ns}"))
            && said.contains("kudo-rollout-approver"),
        "{said}"
    );
    // As kubectl would: 403, as RBAC refuses.
    let out = tenant
        .kubectl(&[
            "patch",
            "rollout",
            "blue",
            "-n",
            &ns,
            "--type",
            "merge",
            "-p",
            r#"{"spec":{"approval":{"approvedBy":"me"}}}"#,
        ])
        .output()
        .expect("kubectl runs");
    assert!(!out.status.success());
    assert!(both(&out).contains("Forbidden"), "{}", both(&out));
    s.apply(
        &json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
        "metadata": {"name": "tenant-approves", "namespace": ns},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
            "name": kudo_crd::labels::ROLLOUT_APPROVER},
        "subjects": [{"kind": "ServiceAccount", "name": "tenant", "namespace": ns}]}),
    );
    let out = tenant
        .kudo(&["rollout", "approve", "blue", "-n", &ns])
        .output()
        .expect("kudo runs");
    assert!(out.status.success(), "{}", both(&out));
    let approver = format!("system:serviceaccount:{ns}:tenant");
    assert!(
        text(&out.stdout).contains(&format!("approved by {approver}")),
        "{}",
        both(&out)
    );
    let out = s
        .kudo(&["rollout", "status", "blue", "--wait", "-n", &ns])
        .output()
        .expect("kudo runs");
    assert!(out.status.success(), "{}", both(&out));
    assert!(text(&out.stdout).contains("Completed"), "{}", both(&out));
    for n in ["c0", "c1"] {
        assert_eq!(
            s.instance(n)["spec"]["operatorVersion"]["name"],
            "e2e-fleet-0.2.0"
        );
    }
    let list = s.json(&["rollout", "list", "-n", &ns, "-o", "json"]);
    assert_eq!(
        list["items"][0]["status"]["approvedBy"], approver,
        "{list:#}"
    );
}

/// A version that needs rights the old did not (a Role reading ConfigMaps) waits for an
/// approval although the Rollout asks for none; the status names the new rights; an approver
/// releases it.
#[test]
fn a_version_that_needs_new_rights_waits_for_an_approval() {
    let Some(s) = Scenario::start("rollout-rights") else {
        return;
    };
    s.instance_service_account();
    let fleet = |v: &str| fixture("e2e/fleet").join(v);
    let ns = s.namespace.clone();
    s.install(&fleet("v1"), "r0").ok();
    let v3 = fleet("v3").to_string_lossy().to_string();
    let out = s
        .kudo(&["rollout", "start", "rights", &v3, "-l", "", "-n", &ns])
        .output()
        .expect("kudo runs");
    assert!(out.status.success(), "{}", both(&out));
    let waiting = rollout_when(&s, "rights", "AwaitingApproval");
    let rights = &waiting["status"]["grownRights"];
    for right in [
        "get configmaps",
        "list configmaps",
        "write Role.rbac.authorization.k8s.io",
    ] {
        assert!(
            rights.as_array().is_some_and(|r| r.contains(&json!(right))),
            "{right} in {rights}"
        );
    }
    let message = waiting["status"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("needs rights the old did not"),
        "{message}"
    );
    // Nothing moved meanwhile.
    assert_eq!(
        s.instance("r0")["spec"]["operatorVersion"]["name"],
        "e2e-fleet-0.1.0"
    );
    s.kudo(&["rollout", "approve", "rights", "-n", &ns])
        .assert()
        .success();
    rollout_when(&s, "rights", "Completed");
    assert_eq!(
        s.instance("r0")["spec"]["operatorVersion"]["name"],
        "e2e-fleet-0.3.0"
    );
}

/// Two Rollouts of the same Instances created at the same instant. Admission refuses the
/// second when it sees the first; when both calls run before either is stored, both pass, and
/// the controller checks again as each starts: the later one is refused, naming the first.
/// Whichever way it goes, one rollout moves the Instances and no Instance is moved twice.
#[test]
fn two_rollouts_created_at_once_never_both_move_an_instance() {
    let Some(s) = Scenario::start("rollout-twins") else {
        return;
    };
    s.instance_service_account();
    let fleet = |v: &str| fixture("e2e/fleet").join(v);
    for name in ["t0", "t1"] {
        s.install(&fleet("v1"), name).no_wait().ok();
    }
    for name in ["t0", "t1"] {
        s.wait_plan(name, "deploy");
        s.kubectl(&["label", "instance", name, "twins=yes", "-n", &s.namespace])
            .assert()
            .success();
    }
    let target = operator_version(&s, &fleet("v2"));
    let rollout = |name: &str| {
        json!({"apiVersion": "kudo.dev/v1beta2", "kind": "Rollout",
            "metadata": {"name": name, "namespace": s.namespace},
            "spec": {"operator": "e2e-fleet", "operatorVersion": {"name": target},
                "selector": {"matchLabels": {"twins": "yes"}}}})
    };
    let api = s.api("kudo.dev/v1beta2", "Rollout", "rollouts");
    let params = kube::api::PatchParams::apply("kudo-e2e").force();
    let (one, two) = (rollout("one"), rollout("two"));
    let (a, b) = s.runtime.block_on(futures::future::join(
        api.patch("one", &params, &kube::api::Patch::Apply(&one)),
        api.patch("two", &params, &kube::api::Patch::Apply(&two)),
    ));
    let mut ended = Vec::new();
    for (name, created) in [("one", a.is_ok()), ("two", b.is_ok())] {
        if !created {
            continue;
        }
        let mut last = Value::Null;
        wait_until(&format!("rollout {name} ends"), || {
            last = s.get(&api, name).unwrap_or_default();
            let phase = last["status"]["phase"].as_str().unwrap_or_default();
            ["Completed", "Refused", "Halted", "Aborted"].contains(&phase)
        });
        ended.push((name, last));
    }
    let refused_at_admission: Vec<String> = [a.err(), b.err()]
        .into_iter()
        .flatten()
        .map(|e| e.to_string())
        .collect();
    for why in &refused_at_admission {
        assert!(why.contains("already claimed"), "{why}");
    }
    eprintln!(
        "two rollouts at once: {} refused at admission, {} by the controller",
        refused_at_admission.len(),
        ended
            .iter()
            .filter(|(_, r)| r["status"]["phase"] == "Refused")
            .count()
    );
    let completed = ended
        .iter()
        .filter(|(_, r)| r["status"]["phase"] == "Completed")
        .count();
    assert_eq!(completed, 1, "exactly one moves them: {ended:#?}");
    for (name, r) in &ended {
        if r["status"]["phase"] == "Completed" {
            continue;
        }
        assert_eq!(r["status"]["phase"], "Refused", "{name}: {r:#}");
        let message = r["status"]["message"].as_str().unwrap_or_default();
        assert!(message.contains("came first"), "{name}: {message}");
    }
    assert_eq!(ended.len() + refused_at_admission.len(), 2);
    // Each Instance was upgraded once: its install and one upgrade.
    for name in ["t0", "t1"] {
        let h = s.json(&["history", name, "-n", &s.namespace, "-o", "json"]);
        assert_eq!(h.as_array().map(Vec::len), Some(2), "{name}: {h:#}");
    }
}
