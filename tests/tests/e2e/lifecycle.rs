//! Every change can be taken back (issue 34, `docs/lifecycle.md`): the manager records a
//! revision per change, `kudo history` shows them, `kudo rollback` restores one (values,
//! OperatorVersion, the Secret of its `writeOnly` values) through the same policy as every
//! change, and remediation rolls a failed upgrade back by itself. On the real control plane,
//! with the manager and the webhook as their ServiceAccounts, and a tenant that has `admin` in
//! its namespace only.

use crate::harness::*;
use crate::tenancy::tenant;

/// The lifecycle fixture's version `v` (`v1`, `v2`, `v3`).
fn lifecycle(v: &str) -> PathBuf {
    fixture("e2e/lifecycle").join(v)
}

const FIRST: &str = "first-Secret-Value-1a";
const SECOND: &str = "second-Secret-Value-2b";

/// `kudo history NAME -o json`.
fn history(s: &Scenario, name: &str) -> Vec<Value> {
    let h = s.json(&["history", name, "-n", &s.namespace, "-o", "json"]);
    h.as_array().cloned().unwrap_or_default()
}

/// The data of Secret `name` (decoded), `Null` when there is none.
fn secret(s: &Scenario, name: &str) -> Value {
    let got = s.get(&s.api("v1", "Secret", "secrets"), name);
    let Some(obj) = got else {
        return Value::Null;
    };
    let decode = |b64: &str| {
        use base64::Engine;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(b64)
            .unwrap_or_default();
        Value::String(String::from_utf8_lossy(&bytes).into_owned())
    };
    let mut out = serde_json::Map::new();
    for (k, v) in obj["data"].as_object().into_iter().flatten() {
        out.insert(k.clone(), decode(v.as_str().unwrap_or_default()));
    }
    Value::Object(out)
}

/// The replicas of StatefulSet `name`.
fn replicas(s: &Scenario, name: &str) -> Value {
    s.get(&s.api("apps/v1", "StatefulSet", "statefulsets"), name)
        .map(|o| o["spec"]["replicas"].clone())
        .unwrap_or(Value::Null)
}

/// Every revision object of the namespace, as text.
fn revision_objects(s: &Scenario) -> String {
    let api = s.api("apps/v1", "ControllerRevision", "controllerrevisions");
    let list = s
        .runtime
        .block_on(api.list(&Default::default()))
        .expect("the API server lists ControllerRevisions");
    serde_json::to_string(&list.items).expect("JSON")
}

#[test]
fn history_shows_each_change_and_a_rollback_restores_values_version_and_secret() {
    let Some(s) = Scenario::start_with_workloads("history", false) else {
        return;
    };
    s.instance_service_account();
    let pw = |p: &str| format!("password={p}");
    s.install(&lifecycle("v1"), "app")
        .params(&["greeting=one", &pw(FIRST)])
        .ok();
    s.wait_plan("app", "deploy");
    s.update("app")
        .params(&["greeting=two", "replicas=2", &pw(SECOND)])
        .assert()
        .success();
    s.wait_plan("app", "update");
    s.upgrade(&lifecycle("v2"), "app").ok();
    s.wait_plan("app", "upgrade");
    assert_eq!(s.config_map("app-config")["greeting"], "two");
    assert_eq!(secret(&s, "app-credentials")["password"], SECOND);

    // Three revisions, with their plans, how they ended, what changed and who asked.
    wait_until("three revisions, all COMPLETE", || {
        let h = history(&s, "app");
        h.len() == 3 && h.iter().all(|r| r["status"] == "COMPLETE")
    });
    let h = history(&s, "app");
    let plans: Vec<&str> = h.iter().map(|r| r["plan"].as_str().unwrap()).collect();
    assert_eq!(plans, ["deploy", "update", "upgrade"], "{h:?}");
    let versions: Vec<&str> = h
        .iter()
        .map(|r| r["operatorVersion"].as_str().unwrap())
        .collect();
    assert_eq!(
        versions,
        [
            "e2e-lifecycle-0.1.0",
            "e2e-lifecycle-0.1.0",
            "e2e-lifecycle-0.2.0"
        ]
    );
    let changed: Vec<&str> = h[1]["changed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap())
        .collect();
    for p in ["/greeting", "/password", "/replicas"] {
        assert!(changed.contains(&p), "revision 2 changed {p}: {changed:?}");
    }
    assert!(
        h.iter()
            .all(|r| r["by"].as_str().is_some_and(|b| !b.is_empty())),
        "who asked: {h:?}"
    );
    let table = s
        .kudo(&["history", "app", "-n", &s.namespace])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let table = text(&table);
    for column in [
        "REVISION",
        "UPDATED",
        "OPERATOR VERSION",
        "PLAN",
        "STATUS",
        "CHANGE",
        "BY",
    ] {
        assert!(table.contains(column), "{table}");
    }

    // What going back to revision 1 would do: values and objects, exit 1, nothing written.
    let out = s
        .kudo(&[
            "diff",
            "--instance",
            "app",
            "--revision",
            "1",
            "-n",
            &s.namespace,
        ])
        .output()
        .expect("kudo diff runs");
    let shown = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{shown}{}", text(&out.stderr));
    assert!(shown.contains("greeting"), "{shown}");
    assert!(!shown.contains(FIRST) && !shown.contains(SECOND), "{shown}");

    // An unknown revision names those that exist.
    s.kudo(&["rollback", "app", "9", "-n", &s.namespace])
        .assert()
        .code(1)
        .stderr(predicates::str::contains("has no revision 9"))
        .stderr(predicates::str::contains("its revisions: 1, 2, 3"));

    // Back to revision 1: its OperatorVersion, its values, its password from its kept Secret.
    s.kudo(&["rollback", "app", "1", "-n", &s.namespace, "--wait"])
        .assert()
        .success()
        .stdout(predicates::str::contains("rolled back to revision 1"));
    let inst = s.instance("app");
    assert_eq!(
        inst["spec"]["operatorVersion"]["name"],
        "e2e-lifecycle-0.1.0"
    );
    assert_eq!(inst["spec"]["parameters"], json!({"greeting": "one"}));
    assert_eq!(s.config_map("app-config")["greeting"], "one");
    assert_eq!(s.config_map("app-config")["version"], "0.1.0");
    wait_until("the StatefulSet is back to 1 replica", || {
        replicas(&s, "app-db") == json!(1)
    });
    assert_eq!(secret(&s, "app-credentials")["password"], FIRST);
    wait_until("revision 4 records the rollback, COMPLETE", || {
        let h = history(&s, "app");
        h.len() == 4 && h[3]["rollbackOf"] == 1 && h[3]["status"] == "COMPLETE"
    });
    let after = s
        .kudo(&["history", "app", "-n", &s.namespace])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    say(&format!("history: after the rollback:\n{}", text(&after)));
    let h = history(&s, "app");
    assert_eq!(
        h[3]["plan"], "update",
        "0.1.0 has no upgrade plan, so its update plan runs: {h:?}"
    );

    // No secret value in any revision, nor in what kudo printed.
    let revisions = revision_objects(&s);
    assert!(revisions.contains("app.r1"), "{revisions}");
    for secret in [FIRST, SECOND] {
        assert!(
            !revisions.contains(secret),
            "a revision holds a secret value"
        );
        assert!(!table.contains(secret));
    }
}

#[test]
fn a_never_ready_statefulset_upgrade_is_rolled_back_by_remediation() {
    let Some(s) = Scenario::start_with_workloads("remediate", false) else {
        return;
    };
    s.instance_service_account();
    s.install(&lifecycle("v2"), "app")
        .params(&["message=steady"])
        .ok();
    s.wait_plan("app", "deploy");
    let started = Instant::now();
    s.upgrade(&lifecycle("v3"), "app")
        .args(&["--rollback-on-failure", "--timeout", "30s"])
        .no_wait()
        .ok();
    let timeout_at = started + Duration::from_secs(30);
    wait_until("the rollback to revision 1 completes", || {
        let i = s.instance("app");
        i["spec"]["operatorVersion"]["name"] == "e2e-lifecycle-0.2.0"
            && i["status"]["planStatus"]["upgrade"]["status"] == "COMPLETE"
            && i["metadata"]["generation"].as_i64() > Some(2)
    });
    let after = Instant::now().saturating_duration_since(timeout_at);
    say(&format!(
        "remediate: from the upgrade's 30 s timeout to the rolled-back revision COMPLETE (StatefulSet forced rollback): {:.1} s",
        after.as_secs_f64()
    ));
    // The StatefulSet is back on the restored template, its Pod Ready: the broken Pod of the
    // failed revision was deleted (Kubernetes' forced rollback), not waited for.
    let db = s
        .get(&s.api("apps/v1", "StatefulSet", "statefulsets"), "app-db")
        .expect("the StatefulSet");
    assert_eq!(
        db["status"]["currentRevision"], db["status"]["updateRevision"],
        "{db}"
    );
    assert_eq!(
        db["status"]["readyReplicas"], db["spec"]["replicas"],
        "{db}"
    );
    let inst = s.instance("app");
    let remediated = condition_of(&inst, "Remediated");
    assert_eq!(remediated["status"], "True", "{inst}");
    assert_eq!(remediated["reason"], "RolledBack", "{inst}");
    assert!(
        remediated["message"]
            .as_str()
            .is_some_and(|m| m.contains("timeout") && m.contains("revision 1")),
        "{remediated}"
    );
    let events = s.api("v1", "Event", "events");
    let listed = s
        .runtime
        .block_on(events.list(&Default::default()))
        .expect("events");
    assert!(
        listed.items.iter().any(|e| {
            let e = serde_json::to_value(e).unwrap_or_default();
            e["reason"] == "RolledBack"
        }),
        "an Event RolledBack"
    );
    let h = history(&s, "app");
    assert_eq!(h.len(), 3, "{h:?}");
    assert_eq!(h[1]["status"], "ERROR", "the failed upgrade: {h:?}");
    assert_eq!(h[2]["rollbackOf"], 1, "{h:?}");
    assert!(
        h[2]["remediated"]
            .as_str()
            .is_some_and(|r| r.contains("rollback to revision 1")),
        "{h:?}"
    );
    assert_eq!(h[2]["status"], "COMPLETE", "{h:?}");
}

#[test]
fn a_rollback_across_an_immutable_value_is_refused_history_is_bounded_and_a_tenant_rolls_back_its_own()
 {
    let Some(s) = Scenario::start_with_workloads("bounded-history", false) else {
        return;
    };
    s.instance_service_account();
    let pw = |p: &str| format!("password={p}");
    s.install(&lifecycle("v1"), "app")
        .params(&["clusterName=a", &pw(FIRST)])
        .ok();
    s.wait_plan("app", "deploy");
    let first_secret = s.instance("app")["spec"]["parametersFrom"][0]["secretRef"]["name"]
        .as_str()
        .unwrap()
        .to_string();
    // 0.1.0 lets clusterName change; 0.2.0 makes it immutable.
    s.update("app").params(&["clusterName=b", &pw(SECOND)]).ok();
    s.wait_plan("app", "update");
    s.upgrade(&lifecycle("v2"), "app").ok();
    s.wait_plan("app", "upgrade");
    wait_until("three revisions", || history(&s, "app").len() == 3);

    // Revision 1 had clusterName a, which 0.2.0 holds immutable as b: refused, nothing written.
    let generation = s.instance("app")["metadata"]["generation"].clone();
    s.kudo(&["rollback", "app", "1", "-n", &s.namespace])
        .assert()
        .code(1)
        .stderr(predicates::str::contains("/clusterName"))
        .stderr(predicates::str::contains("immutable"));
    assert_eq!(s.instance("app")["metadata"]["generation"], generation);
    assert_eq!(history(&s, "app").len(), 3);

    // A tenant with `admin` in this namespace reads the history and rolls back its Instance.
    let t = tenant(&s);
    t.kudo(&["history", "app", "-n", &s.namespace, "-o", "json"])
        .assert()
        .success();
    t.kudo(&["rollback", "app", "2", "-n", &s.namespace, "--wait"])
        .assert()
        .success();
    assert_eq!(
        s.instance("app")["spec"]["operatorVersion"]["name"],
        "e2e-lifecycle-0.1.0"
    );
    // ... and nothing further: another namespace's history is refused.
    t.kudo(&["history", "app", "-n", "kube-system"])
        .assert()
        .code(1)
        .stderr(predicates::str::contains("kube-system"));

    // historyLimit 2: the next change keeps two revisions, and the Secret only the pruned ones
    // named goes with them.
    s.patch_raw("app", json!({"spec": {"historyLimit": 2}}))
        .expect("historyLimit is written");
    s.update("app").params(&["replicas=2"]).ok();
    s.wait_plan("app", "update");
    wait_until("two revisions kept", || {
        let numbers: Vec<i64> = history(&s, "app")
            .iter()
            .map(|r| r["revision"].as_i64().unwrap())
            .collect();
        numbers == [4, 5]
    });
    wait_until("the Secret of revision 1 is deleted", || {
        secret(&s, &first_secret).is_null()
    });
    let live = s.instance("app")["spec"]["parametersFrom"][0]["secretRef"]["name"].clone();
    assert!(
        !secret(&s, live.as_str().unwrap()).is_null(),
        "the Secret the Instance names stays"
    );
}
