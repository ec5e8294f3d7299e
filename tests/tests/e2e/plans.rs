use crate::harness::*;

#[test]
fn install_runs_the_deploy_plan_with_the_given_parameters() {
    let Some(s) = Scenario::start("install") else {
        return;
    };
    // --dry-run first: what would be created, and nothing is
    let package = configs().to_string_lossy().into_owned();
    let dry = |instance: &str, extra: &[&str]| {
        let mut args = vec![
            "install",
            &*package,
            "--instance",
            instance,
            "-n",
            &s.namespace,
        ];
        args.extend(["--dry-run", "-p", "replicas=3"]);
        args.extend(extra);
        let out = s.kudo(&args).assert().success().get_output().stdout.clone();
        text(&out)
    };
    let out = dry("cfg", &[]);
    assert!(out.contains("OperatorVersion"), "{out}");
    assert!(out.contains("could not check it"), "{out}");
    assert!(out.contains("nothing was written"), "{out}");
    assert!(s.get(&s.instances("v1beta2"), "cfg").is_none());
    let ovs = s.api("kudo.dev/v1beta2", "OperatorVersion", "operatorversions");
    assert!(
        s.get(&ovs, "e2e-configs-0.1.0").is_none(),
        "a dry run wrote nothing"
    );
    s.install(&configs(), "cfg")
        .params(&["replicas=3", "settings/k01=one"])
        .ok();
    // with the OperatorVersion there, the API server and the webhooks check the dry run
    let out = dry("cfg2", &[]);
    assert!(
        out.contains("accepted by the API server's dry run"),
        "{out}"
    );
    let list: Value = serde_json::from_str(&dry("cfg2", &["-o", "json"])).expect("-o json");
    assert_eq!(list["items"][0]["kind"], "Instance", "{list}");
    assert_eq!(
        list["items"][0]["spec"]["parameters"]["replicas"], 3,
        "{list}"
    );
    assert!(s.get(&s.instances("v1beta2"), "cfg2").is_none());
    s.wait_plan("cfg", "deploy");
    let i = s.instance("cfg");
    assert_eq!(i["spec"]["parameters"]["replicas"], 3);
    let data = s.config_map("cfg-config");
    assert_eq!(data["replicas"], "3");
    assert_eq!(data["k01"], "one");
    assert_eq!(s.config_map("cfg-rotation")["secret"], "first");
    let status = s.json(&[
        "plan",
        "status",
        "--instance",
        "cfg",
        "-n",
        &s.namespace,
        "-o",
        "json",
    ]);
    assert!(status.to_string().contains("deploy"), "{status}");
}

#[test]
fn an_update_runs_the_plan_its_trigger_names() {
    let Some(s) = Scenario::start("trigger") else {
        return;
    };
    s.install(&configs(), "cfg").ok();
    let report = s
        .update("cfg")
        .param("rotation/secret=second")
        .args(&["-o", "json"])
        .json();
    s.wait_plan("cfg", "rotate");
    assert_eq!(s.config_map("cfg-rotation")["secret"], "second");
    // -o json: the report of the change, as written and waited for
    assert_eq!(
        report["instance"],
        format!("{}/cfg", s.namespace),
        "{report}"
    );
    assert_eq!(report["plan"], "rotate", "{report}");
    assert_eq!(
        report["changes"],
        json!([{"pointer": "/rotation/secret", "plan": "rotate"}])
    );
    assert_eq!(report["written"], true, "{report}");
    assert_eq!(report["dryRun"], false, "{report}");
    assert_eq!(report["completed"], "rotate", "{report}");
    assert!(
        report["generation"].as_i64().is_some_and(|g| g >= 2),
        "{report}"
    );
}

#[test]
fn an_untriggered_update_runs_the_update_plan() {
    let Some(s) = Scenario::start("fallback-update") else {
        return;
    };
    s.install(&configs(), "cfg").ok();
    s.update("cfg").params(&["replicas=2"]).ok();
    s.wait_plan("cfg", "update");
    assert_eq!(s.config_map("cfg-config")["replicas"], "2");
}

#[test]
fn an_untriggered_update_without_an_update_plan_runs_deploy() {
    let Some(s) = Scenario::start("fallback-deploy") else {
        return;
    };
    s.install(&configs_without_update(), "cfg").ok();
    s.wait_plan("cfg", "deploy");
    let first = s.instance("cfg")["status"]["planStatus"]["deploy"]["uid"].clone();
    s.update("cfg").params(&["replicas=4"]).ok();
    s.wait_plan("cfg", "deploy");
    assert_ne!(
        s.instance("cfg")["status"]["planStatus"]["deploy"]["uid"],
        first,
        "deploy ran again"
    );
    assert_eq!(s.config_map("cfg-config")["replicas"], "4");
}

#[test]
fn an_upgrade_carries_values_by_old_name_through_each_version() {
    let Some(s) = Scenario::start("upgrade") else {
        return;
    };
    let kep33 = |v: &str| fixture("kep33").join(v);
    s.install(&kep33("v1"), "app")
        .params(&[
            "CLUSTER_NAME=blue",
            "BACKUP_CREDENTIALS_USERNAME=u",
            "BACKUP_CREDENTIALS_PASSWORD=p",
        ])
        .ok();
    s.wait_plan("app", "deploy");
    // --wait: an upgrade while a plan runs is refused (KUDO's rule), so each one waits for its
    // plan before the next.
    let upgrade = |v: &str| s.upgrade(&kep33(v), "app").assert();
    // 0.2.0 is not skippable: 0.3.0's oldName points into it, which 0.1.0 does not have.
    upgrade("v3")
        .code(1)
        .stderr(predicates::str::contains("old-name-not-found"))
        .stderr(predicates::str::contains("0.1.0"));
    upgrade("v2").success();
    wait_until("0.2.0 runs", || {
        s.instance("app")["spec"]["operatorVersion"]["name"] == "my-operator-0.2.0"
            && s.config_map("app-config")["user"] == "u"
    });
    let p = s.instance("app")["spec"]["parameters"].clone();
    assert_eq!(p["clusterName"], "blue");
    assert_eq!(p["backup"]["credentials"]["name"], "u");
    // 0.3.0 drops the backup credentials the user set, which no oldName carries: the preflight
    // refuses the upgrade until --allow-drop lets them go.
    upgrade("v3")
        .code(1)
        .stderr(predicates::str::contains("/backup"))
        .stderr(predicates::str::contains("value-dropped"));
    // kudo diff of the upgrade: the migration, the plan and the objects, exit 1, nothing
    // written.
    let out = s
        .kudo(&[
            "diff",
            &kep33("v3").to_string_lossy(),
            "--instance",
            "app",
            "-n",
            &s.namespace,
            "--allow-drop",
            "backup",
        ])
        .output()
        .expect("kudo diff runs");
    let shown = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{shown}{}", text(&out.stderr));
    assert!(
        shown.contains("upgrade from my-operator-0.2.0 to my-operator-0.3.0"),
        "{shown}"
    );
    assert!(shown.contains("would run"), "{shown}");
    assert!(
        shown.contains(&format!("ConfigMap {}/app-config", s.namespace)),
        "{shown}"
    );
    assert_eq!(
        s.instance("app")["spec"]["operatorVersion"]["name"],
        "my-operator-0.2.0"
    );
    let report = s.json(&[
        "upgrade",
        &kep33("v3").to_string_lossy(),
        "--instance",
        "app",
        "-n",
        &s.namespace,
        "--allow-drop",
        "backup",
        "--dry-run",
        "-o",
        "json",
    ]);
    assert_eq!(report["from"], "my-operator-0.2.0", "{report}");
    assert_eq!(report["to"], "my-operator-0.3.0", "{report}");
    assert_eq!(report["dryRun"], true, "{report}");
    assert_eq!(report["written"], false, "{report}");
    assert!(report["migration"].is_object(), "{report}");
    s.upgrade(&kep33("v3"), "app")
        .args(&["--allow-drop", "backup"])
        .ok();
    wait_until("0.3.0 runs", || {
        s.instance("app")["spec"]["operatorVersion"]["name"] == "my-operator-0.3.0"
            && s.config_map("app-config")["cluster"] == "blue"
    });
    assert_eq!(
        s.instance("app")["spec"]["parameters"]["Cluster"]["Name"],
        "blue"
    );
}

#[test]
fn uninstall_runs_the_cleanup_plan_then_removes_the_instance() {
    let Some(s) = Scenario::start("uninstall") else {
        return;
    };
    s.install(&configs(), "cfg").ok();
    s.wait_plan("cfg", "deploy");
    // The cleanup plan creates the ConfigMap cfg-farewell, which goes with the Instance: a
    // watch started now sees it come, however short its life.
    let config_maps = s.api("v1", "ConfigMap", "configmaps");
    let added: Arc<Mutex<Vec<String>>> = Arc::default();
    let log = added.clone();
    let watched = config_maps.clone();
    let watch = s.runtime.spawn(async move {
        use futures::StreamExt;
        let Ok(stream) = watched.watch(&Default::default(), "0").await else {
            return;
        };
        futures::pin_mut!(stream);
        while let Some(Ok(kube::api::WatchEvent::Added(o))) = stream.next().await {
            if let Ok(mut l) = log.lock() {
                l.push(o.metadata.name.unwrap_or_default());
            }
        }
    });
    // The watch runs while the runtime is driven: let it connect, then keep driving it while
    // kudo uninstall runs.
    s.runtime
        .block_on(async { tokio::time::sleep(Duration::from_millis(500)).await });
    let mut uninstall = s.uninstall("cfg").args(&["--prune"]).spawn();
    let mut ended = None;
    wait_until("kudo uninstall ends", || {
        s.runtime
            .block_on(async { tokio::time::sleep(Duration::from_millis(50)).await });
        ended = uninstall.try_wait().expect("kudo uninstall runs");
        ended.is_some()
    });
    let mut said = String::new();
    if let Some(mut out) = uninstall.stdout.take() {
        std::io::Read::read_to_string(&mut out, &mut said).expect("kudo's stdout");
    }
    assert!(
        ended.is_some_and(|e| e.success()),
        "kudo uninstall: {ended:?} {said}"
    );
    assert!(s.get(&s.instances("v1beta2"), "cfg").is_none());
    // It said what it did and what went with --prune: the version no Instance uses, and the
    // Operator with no version left.
    assert!(said.contains("cleanup"), "{said}");
    let ovs = s.api("kudo.dev/v1beta2", "OperatorVersion", "operatorversions");
    let operators = s.api("kudo.dev/v1beta2", "Operator", "operators");
    assert!(s.get(&ovs, "e2e-configs-0.1.0").is_none(), "{said}");
    assert!(s.get(&operators, "e2e-configs").is_none(), "{said}");
    assert!(said.contains("e2e-configs-0.1.0"), "{said}");
    wait_until("the cleanup plan's ConfigMap was seen", || {
        added
            .lock()
            .is_ok_and(|l| l.iter().any(|n| n == "cfg-farewell"))
    });
    watch.abort();
    // What the plans created is collected with the Instance (owner references).
    wait_until("the Instance's objects are collected with it", || {
        ["cfg-farewell", "cfg-config", "cfg-rotation"]
            .iter()
            .all(|n| s.get(&config_maps, n).is_none())
    });
}

#[test]
fn twenty_concurrent_updates_of_different_parameters_all_land() {
    let Some(s) = Scenario::start("concurrent") else {
        return;
    };
    s.install(&configs(), "cfg").ok();
    let keys: Vec<String> = (0..20).map(|i| format!("k{i:02}")).collect();
    let children: Vec<(String, Child)> = keys
        .iter()
        .map(|k| {
            let child = s
                .update("cfg")
                .param(&format!("settings/{k}=value-{k}"))
                .spawn();
            (k.clone(), child)
        })
        .collect();
    for (k, child) in children {
        let out = child.wait_with_output().expect("kudo update ends");
        assert!(out.status.success(), "update of {k}: {}", text(&out.stderr));
    }
    let settings = s.instance("cfg")["spec"]["parameters"]["settings"].clone();
    for k in &keys {
        assert_eq!(settings[k], format!("value-{k}"), "{k} was lost");
    }
    wait_until("every value reaches the ConfigMap", || {
        let data = s.config_map("cfg-config");
        keys.iter().all(|k| data[k] == format!("value-{k}"))
    });
}

/// A KUDO operator (v1beta1 parameters, Go templates with sprig) installs and updates: the
/// manager renders its templates from the OperatorVersion as KUDO would.
#[test]
fn a_kudo_operator_with_go_templates_installs_and_updates() {
    let Some(s) = Scenario::start("kudo-go") else {
        return;
    };
    s.install(&fixture("e2e/kudo-go"), "k")
        .params(&["NODE_COUNT=2"])
        .ok();
    let ov = s
        .get(
            &s.api("kudo.dev/v1beta2", "OperatorVersion", "operatorversions"),
            "e2e-kudo-go-1.2.3-0.1.0",
        )
        .expect("the OperatorVersion");
    assert_eq!(ov["spec"]["templateEngine"], "go");
    let data = s.config_map("k-app");
    assert_eq!(data["operator"], "e2e-kudo-go-0.1.0 (1.2.3), plan deploy");
    assert_eq!(data["metrics"], "on");
    assert_eq!(data["nodes"], "k-0,k-1");
    assert_eq!(data["quarter"], "256");
    assert_eq!(data["ports"], "[9042,7000]");
    s.update("k").params(&["METRICS_ENABLED=false"]).ok();
    assert_eq!(s.config_map("k-app")["metrics"], "off");
}

/// A KudoOperator task: the dependency (a path in the parent package) installed with the
/// parent, run as a child Instance owned by the parent, with the parameters its file renders;
/// uninstalling the parent removes the child, which runs its own cleanup plan.
#[test]
fn a_dependency_runs_as_a_child_instance_and_goes_with_its_parent() {
    let Some(s) = Scenario::start("dependency") else {
        return;
    };
    s.install(&fixture("e2e/parent"), "p")
        .params(&["childReplicas=3"])
        .ok();
    let child = s.instance("p-e2e-configs");
    assert_eq!(child["spec"]["parameters"]["replicas"], 3);
    assert_eq!(child["metadata"]["ownerReferences"][0]["name"], "p");
    assert_eq!(
        child["status"]["planStatus"]["deploy"]["status"],
        "COMPLETE"
    );
    assert_eq!(s.config_map("p-e2e-configs-config")["replicas"], "3");
    assert_eq!(s.config_map("p-summary")["child"], "p-e2e-configs");

    s.uninstall("p").ok();
    wait_until("the child Instance and its objects are gone", || {
        s.get(&s.instances("v1beta2"), "p-e2e-configs").is_none()
            && s.config_map("p-e2e-configs-config").is_null()
    });
}

/// The README's example installs (a v1beta1 package, converted on install). Not waited for:
/// ZooKeeper's pods take their time on a small cluster; the plan starting is enough here.
#[test]
fn the_zookeeper_example_installs_and_starts_its_deploy_plan() {
    let Some(s) = Scenario::start("example") else {
        return;
    };
    let package = example("zookeeper-v1beta1");
    s.kudo(&[
        "install",
        &package.to_string_lossy(),
        "--instance",
        "zk",
        "-n",
        &s.namespace,
        "-p",
        "NODE_COUNT=1",
    ])
    .assert()
    .success();
    assert_eq!(s.instance("zk")["spec"]["parameters"]["NODE_COUNT"], 1);
    wait_until("the deploy plan starts", || {
        s.instance("zk")["status"]["activePlan"]["name"] == "deploy"
    });
}
