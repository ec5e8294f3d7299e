//! Drift on the real control plane, with the cassandra example (a StatefulSet and a
//! ConfigMap among its objects) and the suite's manager started with `--drift-interval 5s`:
//! a StatefulSet scaled by another field manager is reported under `warn` (the `Drifted`
//! condition, an Event, `kudo diff NAME` exiting 1), not reported when `/spec/replicas` is
//! ignored, and restored under `correct`; a deleted ConfigMap is recreated under `correct`.

use crate::harness::*;

/// Waits (at most the suite's timeout) for `done`, polling every 100 ms: how long it took.
fn timed(what: &str, done: impl FnMut() -> bool) -> Duration {
    wait_for(what, TIMEOUT, Duration::from_millis(100), done)
}

/// The reasons of the namespace's Events about Instance `name`.
fn event_reasons(s: &Scenario, name: &str) -> Vec<String> {
    let events = s.api("v1", "Event", "events");
    let list = s
        .runtime
        .block_on(events.list(&Default::default()))
        .expect("the API server lists Events");
    list.items
        .iter()
        .map(|e| serde_json::to_value(e).unwrap_or_default())
        .filter(|e| {
            e["involvedObject"]["name"] == name && e["involvedObject"]["kind"] == "Instance"
        })
        .map(|e| e["reason"].as_str().unwrap_or("").to_string())
        .collect()
}

#[test]
fn a_scaled_statefulset_is_reported_ignored_or_corrected_and_a_deleted_config_map_recreated() {
    let Some(s) = Scenario::start_with_workloads("drift", false) else {
        return;
    };
    let ns = s.namespace.clone();
    s.install(&example("cassandra-v1beta2"), "cass").ok();
    s.wait_plan("cass", "deploy");
    // What one revision costs (issue 34's note): the cassandra example's first, as stored.
    let revisions = s.api("apps/v1", "ControllerRevision", "controllerrevisions");
    let mut first = None;
    wait_until("revision 1 is recorded", || {
        first = s.get(&revisions, "cass.r1");
        first.is_some()
    });
    let first = first.unwrap_or_default();
    say(&format!(
        "drift: one revision of the cassandra example: {} bytes of data, {} bytes as stored (JSON)",
        serde_json::to_vec(&first["data"]).map_or(0, |v| v.len()),
        serde_json::to_vec(&first).map_or(0, |v| v.len()),
    ));
    let sts = s.api("apps/v1", "StatefulSet", "statefulsets");
    let replicas =
        || s.get(&sts, "cass-node").expect("the StatefulSet")["spec"]["replicas"].clone();
    let diff = |args: &[&str]| {
        let mut all = vec!["diff", "cass", "-n", &ns];
        all.extend_from_slice(args);
        s.kudo(&all).output().expect("kudo diff runs")
    };

    // Nothing drifted: the first check after the plan says so, and kudo diff exits 0.
    timed("the first drift check", || {
        s.condition("cass", "Drifted")["reason"] == "NoDrift"
    });
    let out = diff(&[]);
    assert_eq!(out.status.code(), Some(0), "{}", both(&out));
    assert!(both(&out).contains("no drift"), "{}", both(&out));
    assert_eq!(replicas(), json!(3));
    // The checks after it read each object's resourceVersion from a list shared by the
    // namespace and dry-run none of those unchanged since (issue 49).
    wait_until("a drift check finds objects unchanged", || {
        s.daemons.counter("kudo_manager_drift_unchanged_total") > 0
    });

    // warn (no spec.drift): another field manager scales the StatefulSet.
    let scale = |n: i64| {
        let params = PatchParams {
            field_manager: Some("e2e-scaler".into()),
            ..Default::default()
        };
        s.runtime
            .block_on(sts.patch(
                "cass-node",
                &params,
                &Patch::Merge(json!({"spec": {"replicas": n}})),
            ))
            .expect("the StatefulSet is scaled");
    };
    scale(5);
    let latency = s.wait_condition("cass", "Drifted", "True", Duration::from_millis(100));
    say(&format!(
        "e2e: drift (StatefulSet scaled to 5) detected under warn in {:.1} s (--drift-interval {DRIFT_INTERVAL})",
        latency.as_secs_f64()
    ));
    let c = s.condition("cass", "Drifted");
    assert_eq!(c["reason"], "Drifted", "{c}");
    assert_eq!(c["message"], "StatefulSet cass-node: /spec/replicas", "{c}");
    timed("the Drifted Event", || {
        event_reasons(&s, "cass").iter().any(|r| r == "Drifted")
    });
    let out = diff(&[]);
    let shown = both(&out);
    assert_eq!(out.status.code(), Some(1), "{shown}");
    assert!(
        shown.contains(&format!(
            "StatefulSet {ns}/cass-node (nodes/node): drifted at /spec/replicas"
        )),
        "{shown}"
    );
    assert!(shown.contains("-  replicas: 5"), "{shown}");
    assert!(shown.contains("+  replicas: 3"), "{shown}");
    assert!(
        !shown.contains("ConfigMap"),
        "only the StatefulSet drifted: {shown}"
    );
    let out = diff(&["-o", "json"]);
    assert_eq!(out.status.code(), Some(1), "{}", both(&out));
    let report: Value = serde_json::from_slice(&out.stdout).expect("-o json");
    assert_eq!(report["mode"], "warn", "{report}");
    assert_eq!(report["objects"][0]["kind"], "StatefulSet", "{report}");
    assert_eq!(
        report["objects"][0]["pointers"],
        json!(["/spec/replicas"]),
        "{report}"
    );
    assert_eq!(replicas(), json!(5), "warn changes nothing");

    // An ignore rule for /spec/replicas of StatefulSets: nothing drifted, the replicas stay.
    s.patch_raw(
        "cass",
        json!({"spec": {"drift": {"mode": "warn", "ignore": [
            {"kind": "StatefulSet", "pointers": ["/spec/replicas"]}]}}}),
    )
    .expect("spec.drift is written");
    timed("the ignore rule applied", || {
        s.condition("cass", "Drifted")["reason"] == "NoDrift"
    });
    let out = diff(&[]);
    assert_eq!(out.status.code(), Some(0), "{}", both(&out));
    std::thread::sleep(Duration::from_secs(6));
    assert_eq!(replicas(), json!(5), "ignored: left as scaled");
    assert_eq!(s.condition("cass", "Drifted")["reason"], "NoDrift");

    // correct: the replicas are restored, no plan runs.
    let runs = s.instance("cass")["status"]["planStatus"].clone();
    let correct = Instant::now();
    s.patch_raw(
        "cass",
        json!({"spec": {"drift": {"mode": "correct", "ignore": null}}}),
    )
    .expect("spec.drift is written");
    timed("the replicas restored", || replicas() == json!(3));
    say(&format!(
        "e2e: drift corrected (replicas 5 -> 3) {:.1} s after spec.drift.mode became correct",
        correct.elapsed().as_secs_f64()
    ));
    timed("the DriftCorrected Event", || {
        event_reasons(&s, "cass")
            .iter()
            .any(|r| r == "DriftCorrected")
    });
    let c = s.condition("cass", "Drifted");
    assert_eq!(c["status"], "False", "{c}");
    // Scaled again while correct: restored within the interval.
    scale(4);
    let restored = timed("the replicas restored again", || replicas() == json!(3));
    say(&format!(
        "e2e: drift (StatefulSet scaled to 4) corrected under correct in {:.1} s",
        restored.as_secs_f64()
    ));

    // A deleted ConfigMap is recreated.
    let cms = s.api("v1", "ConfigMap", "configmaps");
    let uid = s.get(&cms, "cass-config").expect("the ConfigMap")["metadata"]["uid"].clone();
    s.runtime
        .block_on(cms.delete("cass-config", &DeleteParams::default()))
        .expect("the ConfigMap is deleted");
    let recreated = timed("the ConfigMap recreated", || {
        s.get(&cms, "cass-config")
            .is_some_and(|c| c["metadata"]["uid"] != uid)
    });
    say(&format!(
        "e2e: deleted ConfigMap recreated under correct in {:.1} s",
        recreated.as_secs_f64()
    ));
    let cm = s.get(&cms, "cass-config").expect("the ConfigMap");
    assert!(
        cm["data"]["cassandra.yaml"]
            .as_str()
            .is_some_and(|c| c.contains("num_tokens: 256")),
        "{cm}"
    );
    // No plan ran for any of it.
    let i = s.instance("cass");
    assert_eq!(i["status"]["activePlan"]["name"], "deploy");
    for (plan, st) in runs.as_object().into_iter().flatten() {
        assert_eq!(
            i["status"]["planStatus"][plan]["uid"], st["uid"],
            "plan {plan} did not run again"
        );
    }
    let out = diff(&[]);
    assert_eq!(out.status.code(), Some(0), "{}", both(&out));
}
