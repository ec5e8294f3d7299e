//! KUDO's habits on the real control plane (issue 46): the owner references KUDO writes (a
//! foreground deletion waits for the objects), rights for a kind that appears after the
//! install (zookeeper's ServiceMonitor), and one OperatorVersion per version whichever of
//! KUDO's two names it was installed under.

use crate::harness::*;
use crate::tenancy::tenant;

/// Every object an Instance owns carries `controller: true, blockOwnerDeletion: true`, set by
/// the tenant's ServiceAccount (the API server enforces owner references: `.ci/run` turns on
/// OwnerReferencesPermissionEnforcement), and `kubectl delete --cascade=foreground` returns
/// only once they are gone.
#[test]
fn owned_objects_block_a_foreground_deletion_until_they_are_gone() {
    let Some(s) = Scenario::start_with_workloads("foreground", false) else {
        return;
    };
    let tenant = tenant(&s);
    let package = fixture("e2e/tenant-app");
    s.install(&package, "fg").by(&tenant).ok();
    let deployments = s.api("apps/v1", "Deployment", "deployments");
    let config_maps = s.api("v1", "ConfigMap", "configmaps");
    for (api, name) in [(&deployments, "fg-app"), (&config_maps, "fg-config")] {
        let o = s.get(api, name).expect("the plan's object");
        let owner = &o["metadata"]["ownerReferences"][0];
        assert_eq!(owner["kind"], "Instance", "{name}: {owner}");
        assert_eq!(owner["controller"], true, "{name}: {owner}");
        assert_eq!(owner["blockOwnerDeletion"], true, "{name}: {owner}");
    }
    let out = s
        .kubectl(&["delete", "instances.kudo.dev", "fg", "-n", &s.namespace])
        .args(["--cascade=foreground", "--wait=true", "--timeout=120s"])
        .output()
        .expect("kubectl runs");
    assert!(out.status.success(), "{}", text(&out.stderr));
    // Returned: the Instance is gone, and so is everything it owned (not collected after).
    assert!(s.get(&s.instances("v1beta2"), "fg").is_none());
    assert!(s.get(&deployments, "fg-app").is_none(), "the Deployment");
    assert!(s.get(&config_maps, "fg-config").is_none(), "the ConfigMap");
}

/// zookeeper installed before the Prometheus operator's ServiceMonitor CRD exists, then the
/// CRD, then its metrics turned on: the Instance's ServiceAccount was granted the kind by
/// name at install (the Role `kudo-instance-kinds`), so the plan completes as it.
#[test]
fn a_kind_that_appears_after_the_install_is_granted_and_its_plan_completes() {
    let Some(s) = Scenario::start_with_workloads("late-kind", false) else {
        return;
    };
    let crd = "servicemonitors.monitoring.coreos.com";
    let existed = s.get(&s.crds(), crd).is_some();
    let zookeeper = example("zookeeper-v1beta1");
    s.install(&zookeeper, "zk").ok();
    s.wait_plan("zk", "deploy");
    let role = s
        .get(
            &s.api("rbac.authorization.k8s.io/v1", "Role", "roles"),
            "kudo-instance-kinds",
        )
        .expect("kudo install made the Role of the kinds admin does not cover");
    assert_eq!(
        role["rules"],
        json!([{"apiGroups": ["monitoring.coreos.com"], "resources": ["servicemonitors"],
            "verbs": ["get", "list", "watch", "create", "update", "patch", "delete"]}]),
        "{role}"
    );
    // Now the Prometheus operator arrives (another scenario may have brought it already).
    s.service_monitor_crd();
    s.update("zk").params(&["ENABLE_METRICS=true"]).ok();
    let i = s.instance("zk");
    assert_eq!(
        i["status"]["planStatus"]["update-metrics"]["status"], "COMPLETE",
        "{i}"
    );
    let monitors = s.api(
        "monitoring.coreos.com/v1",
        "ServiceMonitor",
        "servicemonitors",
    );
    assert!(
        s.get(&monitors, "zk-monitor").is_some(),
        "the ServiceMonitor"
    );
    say(&format!(
        "late-kind: the ServiceMonitor CRD {} before the install; update-metrics COMPLETE as {}/kudo-instance",
        if existed { "existed" } else { "did not exist" },
        s.namespace
    ));
}

/// An OperatorVersion installed under KUDO's older short name (`NAME-VERSION`) is the one
/// `kudo install` reuses: no second one is made under `NAME-APPVERSION-VERSION`. Moving the
/// Instance between the two names is no upgrade: the webhook takes it as an update, the
/// manager starts no plan.
#[test]
fn the_same_version_under_its_other_name_is_reused_and_switching_names_runs_nothing() {
    let Some(s) = Scenario::start_with_workloads("one-version", false) else {
        return;
    };
    // tenant-app with an appVersion: `e2e-tenant-app-1.2-0.1.0`, or `e2e-tenant-app-0.1.0`.
    let dir = tempfile::tempdir().expect("a temporary directory");
    let package = dir.path().join("tenant-app");
    kudo_testkit::copy_dir(&fixture("e2e/tenant-app"), &package);
    let operator = package.join("operator.yaml");
    let text = std::fs::read_to_string(&operator).expect("operator.yaml");
    let text = text.replace(
        "operatorVersion: 0.1.0",
        "appVersion: \"1.2\"\noperatorVersion: 0.1.0",
    );
    std::fs::write(&operator, text).expect("operator.yaml written");
    let pkg = kudo_pkg::Package::load(&package).expect("the package loads");
    let (op, ov) = kudo_crd::package::objects(&pkg, &s.namespace);
    let (long, short) = ("e2e-tenant-app-1.2-0.1.0", "e2e-tenant-app-0.1.0");
    assert_eq!(ov.metadata.name.as_deref(), Some(long));
    let mut ov = serde_json::to_value(ov).expect("JSON");
    ov["metadata"]["name"] = json!(short);
    s.apply(&serde_json::to_value(op).expect("JSON"));
    s.apply(&ov);
    s.instance_service_account();
    s.install(&package, "one").ok();
    s.wait_plan("one", "deploy");
    let ovs = s.api("kudo.dev/v1beta2", "OperatorVersion", "operatorversions");
    assert!(s.get(&ovs, long).is_none(), "a second OperatorVersion");
    let i = s.instance("one");
    assert_eq!(i["spec"]["operatorVersion"]["name"], short, "{i}");
    let run = i["status"]["activePlan"]["uid"].clone();
    // The Instance now names the version the other way.
    let written = s
        .patch_raw("one", json!({"spec": {"operatorVersion": {"name": long}}}))
        .expect("the webhook takes the other name of the version");
    let generation = written["metadata"]["generation"].as_i64();
    wait_until("the manager acts on the renamed reference", || {
        s.instance("one")["status"]["observedGeneration"].as_i64() == generation
    });
    let i = s.instance("one");
    assert_eq!(i["status"]["activePlan"]["uid"], run, "a plan ran: {i}");
    assert!(
        i["status"]["planStatus"]
            .get("upgrade")
            .is_none_or(|p| p["status"] == "NEVER_RUN")
    );
}
