use crate::harness::*;

/// KUDO's objects stored as v1beta1 before kudo's CRDs existed, migrated with `kudo migrate`,
/// read back with the same meaning through both versions. Replaces kudo's CRDs: runs alone.
#[test]
fn v1beta1_objects_read_back_identical_in_meaning_after_kudo_migrate() {
    let Some(s) = Scenario::start_alone("migrate") else {
        return;
    };
    let crd_names = [
        "operators.kudo.dev",
        "operatorversions.kudo.dev",
        "instances.kudo.dev",
    ];

    // An old KUDO installation: v1beta1-only CRDs, no conversion.
    for name in crd_names {
        let _ = s
            .runtime
            .block_on(s.crds().delete(name, &DeleteParams::default()));
    }
    wait_until("kudo's CRDs are gone", || {
        crd_names.iter().all(|n| s.get(&s.crds(), n).is_none())
    });
    for crd in kudo_crd::converted() {
        let mut v = serde_json::to_value(&crd).expect("a CRD is JSON");
        let old: Vec<Value> = v["spec"]["versions"]
            .as_array()
            .expect("versions")
            .iter()
            .filter(|v| v["name"] == "v1beta1")
            .map(|v| {
                let mut v = v.clone();
                v["storage"] = json!(true);
                v
            })
            .collect();
        v["spec"]["versions"] = json!(old);
        s.apply(&v);
    }
    wait_until("the v1beta1 CRDs serve", || {
        s.runtime
            .block_on(s.instances("v1beta1").list(&Default::default()))
            .is_ok()
    });

    // KUDO's objects: the KEP's operator, stored as v1beta1, values as strings.
    let (op, ov) = kudo_objects(&fixture("kep33").join("v1"), &s.namespace);
    let ov_name = ov["metadata"]["name"].as_str().expect("a name").to_string();
    let values = json!({"CLUSTER_NAME": "blue", "BACKUP_ENABLED": "true",
        "BACKUP_CREDENTIALS_USERNAME": "u", "BACKUP_CREDENTIALS_PASSWORD": "p"});
    let instance = json!({"apiVersion": "kudo.dev/v1beta1", "kind": "Instance",
        "metadata": {"name": "old", "namespace": s.namespace, "labels": {"team": "data"}},
        "spec": {"operatorVersion": {"name": ov_name}, "parameters": values}});
    // Created as kubectl would: its plans run as the namespace's ServiceAccount.
    s.instance_service_account();
    for o in [&op, &ov, &instance] {
        s.apply(o);
    }

    // kudo's installation, then at once (no sleep) an install and the migration: `init
    // --wait` has returned once the new CRDs are served and the webhooks answer.
    init(&s.kubeconfig, &s.daemons);
    s.install(&configs(), "fresh").ok();
    assert_eq!(s.config_map("fresh-config")["replicas"], "1");
    let report = s.json(&["migrate", "-o", "json"]);
    assert!(
        report["rewrite"]
            .as_array()
            .expect("a rewrite section")
            .iter()
            .any(|r| r["name"] == "old" && r["outcome"] == "rewritten"),
        "{report}"
    );

    // Through v1beta2: typed values, the schema the conversion gives (KEP-33's v1 declares no
    // type for BACKUP_ENABLED: a string parameter, so "true" stays the string).
    let v2 = s.instance("old");
    assert_eq!(
        v2["spec"]["parameters"],
        json!({"CLUSTER_NAME": "blue", "BACKUP_ENABLED": "true",
            "BACKUP_CREDENTIALS_USERNAME": "u", "BACKUP_CREDENTIALS_PASSWORD": "p"})
    );
    assert_eq!(v2["metadata"]["labels"]["team"], "data");
    // The manager reconciles the migrated Instance (its writes are status and finalizers, none
    // denied): the deploy plan of KUDO's package, Go templates, completes.
    s.wait_plan("old", "deploy");
    let config = s.config_map("old-config");
    assert_eq!(
        (&config["cluster"], &config["backup"], &config["user"]),
        (&json!("blue"), &json!("true"), &json!("u"))
    );
    let ovs = |v: &str| {
        s.api(
            &format!("kudo.dev/{v}"),
            "OperatorVersion",
            "operatorversions",
        )
    };
    let ov2 = s
        .get(&ovs("v1beta2"), &ov_name)
        .expect("the OperatorVersion");
    let want = convert::convert(&ov, "kudo.dev/v1beta2", &NoTypes).expect("converts");
    assert_eq!(ov2["spec"], want["spec"]);
    // Through v1beta1: exactly what KUDO stored.
    let v1 = s.get(&s.instances("v1beta1"), "old").expect("the Instance");
    assert_eq!(v1["spec"]["parameters"], values);
    let ov1 = s
        .get(&ovs("v1beta1"), &ov_name)
        .expect("the OperatorVersion");
    assert_eq!(ov1["spec"], ov["spec"]);
    for name in crd_names {
        let crd = s.get(&s.crds(), name).expect("the CRD");
        assert_eq!(
            crd["status"]["storedVersions"],
            json!(["v1beta2"]),
            "{name}"
        );
    }

    // Again: nothing to do.
    let again = s.json(&["migrate", "-o", "json"]);
    assert!(
        again["rewrite"]
            .as_array()
            .expect("a rewrite section")
            .iter()
            .all(|r| r["outcome"] == "already-stored"),
        "{again}"
    );
    assert_eq!(again["storedVersions"], json!([]));
}
