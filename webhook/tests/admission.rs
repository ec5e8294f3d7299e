//! Admission on the AdmissionReviews kube-apiserver really sent (`tests/fixtures/wire/`), with a store
//! holding their OperatorVersions, and the cases KUDO's admission webhook tested.

use std::collections::HashMap;
use std::sync::Arc;

use base64::Engine;
use kudo_crd::convert::{NoTypes, convert};
use kudo_crd::labels;
use kudo_policy::change::Version;
use kudo_webhook::{Mode, OperatorVersions, StoreError, admit_review, version_from_object};
use serde_json::{Value, json};

use kudo_testkit::wire;

fn wire(name: &str) -> Value {
    wire::capture(name)
}

#[derive(Default)]
struct Store {
    ready: Option<StoreError>,
    ovs: HashMap<(String, String), Arc<Version>>,
}

impl Store {
    fn with(mut self, namespace: &str, ov: Value) -> Self {
        let info = version_from_object(&ov).unwrap();
        self.ovs
            .insert((namespace.into(), info.name.clone()), Arc::new(info));
        self
    }
}

impl OperatorVersions for Store {
    fn ready(&self) -> Result<(), StoreError> {
        match &self.ready {
            None => Ok(()),
            Some(why) => Err(why.clone()),
        }
    }
    fn get(&self, namespace: &str, name: &str) -> Result<Option<Arc<Version>>, StoreError> {
        self.ready()?;
        Ok(self.ovs.get(&(namespace.into(), name.into())).cloned())
    }
}

fn store() -> Store {
    let flat_ov = wire("conversion-operatorversion-v1beta1-to-v1beta2.json")["request_body"]["request"]["objects"][0].clone();
    Store::default()
        .with(
            wire::NAMESPACE,
            wire::sample_db_operator_version("sample-db-0.2.0", "0.2.0", wire::sample_db_schema()),
        )
        .with(
            wire::NAMESPACE,
            convert(&flat_ov, "kudo.dev/v1beta2", &NoTypes).unwrap(),
        )
}

/// Runs the capture (optionally edited) and returns the response part.
fn run(name: &str, mode: Mode, store: &Store, edit: impl Fn(&mut Value)) -> (u16, Value) {
    let mut body = wire(name)["request_body"].clone();
    edit(&mut body);
    let (status, review) = admit_review(body.to_string().as_bytes(), mode, store);
    assert_eq!(review["kind"], "AdmissionReview");
    assert_eq!(review["apiVersion"], "admission.k8s.io/v1");
    if status == 200 {
        assert_eq!(review["response"]["uid"], body["request"]["uid"], "{name}");
    }
    (status, review["response"].clone())
}

/// The patch of a mutating response, all of it.
fn whole_patch_of(response: &Value) -> Vec<Value> {
    if response.get("patch").is_none() {
        return Vec::new();
    }
    assert_eq!(response["patchType"], "JSONPatch");
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(response["patch"].as_str().unwrap())
        .unwrap();
    serde_json::from_slice(&bytes).unwrap()
}

/// Whether `op` is the stamp of who asked ([`labels::CHANGED_BY`]), which every mutating
/// answer to a change of the spec carries.
fn is_stamp(op: &Value) -> bool {
    let path = op["path"].as_str().unwrap_or_default();
    path == "/metadata/annotations/kudo.dev~1changed-by"
        || (path == "/metadata/annotations"
            && op["value"]
                .as_object()
                .is_some_and(|a| a.keys().all(|k| k == labels::CHANGED_BY)))
}

/// The patch of a mutating response without the stamp of who asked.
fn patch_of(response: &Value) -> Vec<Value> {
    whole_patch_of(response)
        .into_iter()
        .filter(|op| !is_stamp(op))
        .collect()
}

/// Issue 34: the mutating webhook names who asked for a change of the spec, as the API server
/// authenticated them, over whatever the write said; a write that leaves the spec as it was is
/// not stamped.
#[test]
fn a_change_is_stamped_with_the_user_who_asked() {
    let s = store();
    let (_, r) = run("admission-mutate-create.json", Mode::Mutate, &s, |b| {
        b["request"]["userInfo"]["username"] = json!("system:serviceaccount:t:alice");
        b["request"]["object"]["metadata"]["annotations"] =
            json!({labels::CHANGED_BY: "someone-else"});
    });
    assert_eq!(r["allowed"], true, "{r}");
    let ops = whole_patch_of(&r);
    assert_eq!(
        ops,
        vec![
            json!({"op": "replace", "path": "/metadata/annotations/kudo.dev~1changed-by",
            "value": "system:serviceaccount:t:alice"})
        ],
    );
    let (_, r) = run(
        "admission-mutate-update-sent-as-v1beta1.json",
        Mode::Mutate,
        &s,
        |b| {
            b["request"]["object"]["spec"] = b["request"]["oldObject"]["spec"].clone();
        },
    );
    assert_eq!(r["allowed"], true, "{r}");
    assert!(r.get("patch").is_none(), "metadata only: {r}");
}

#[test]
fn create_stores_what_the_user_set_typed_and_never_the_defaults() {
    let s = store();
    let (status, r) = run("admission-mutate-create.json", Mode::Mutate, &s, |_| {});
    assert_eq!(status, 200);
    assert_eq!(r["allowed"], true);
    // Typed already, and no defaults written: nothing to patch but who asked.
    assert!(patch_of(&r).is_empty(), "{r}");
    // A v1beta1-style string is typed; still no default is added.
    let (_, r) = run("admission-mutate-create.json", Mode::Mutate, &s, |b| {
        b["request"]["object"]["spec"]["parameters"]["nodeCount"] = json!("5");
    });
    let patch = patch_of(&r);
    assert_eq!(
        patch,
        vec![json!({"op": "replace", "path": "/spec/parameters/nodeCount", "value": 5})],
        "{patch:?}"
    );
    let (_, r) = run("admission-validate-create.json", Mode::Validate, &s, |_| {});
    assert_eq!(r["allowed"], true, "{r}");
    assert!(
        r.get("patch").is_none(),
        "a validating response sends no patch"
    );
}

#[test]
fn update_cases_as_kudo_tested_them() {
    let s = store();
    // (what the update changes, allowed?, words of the denial)
    let cases: Vec<(&str, Value, bool, &str)> = vec![
        ("the captured nodeCount change", Value::Null, true, ""),
        (
            "immutable changed",
            json!({"clusterName": "other"}),
            false,
            "immutable",
        ),
        (
            "invalid value",
            json!({"nodeCount": 0}),
            false,
            "at least 1",
        ),
        (
            "unknown parameter",
            json!({"nodeCont": 4}),
            false,
            "not a parameter",
        ),
        (
            "two plans",
            json!({"nodeCount": 4, "auth": {"enabled": false}}),
            false,
            "may run only one",
        ),
        (
            "one custom plan",
            json!({"nodeCount": null, "auth": {"enabled": false}}),
            true,
            "",
        ),
        (
            "a secret is never stored in an Instance, and never echoed",
            json!({"auth": {"enabled": true, "password": "short"}}),
            false,
            "/auth/password: is writeOnly",
        ),
        (
            // Issue 38: a string where the object holding the password belongs may be the
            // password: the denial names the type, never the value.
            "a value given where a secret lies below is never echoed",
            json!({"auth": "short-but-secret"}),
            false,
            "/auth",
        ),
    ];
    for (name, change, allowed, words) in cases {
        let (status, r) = run("admission-validate-update.json", Mode::Validate, &s, |b| {
            if let Value::Object(c) = &change {
                let p = b["request"]["object"]["spec"]["parameters"]
                    .as_object_mut()
                    .unwrap();
                for (k, v) in c {
                    if v.is_null() {
                        p.remove(k);
                    } else {
                        p.insert(k.clone(), v.clone());
                    }
                }
            }
        });
        assert_eq!(status, 200, "{name}");
        assert_eq!(r["allowed"], allowed, "{name}: {r}");
        if !allowed {
            let msg = r["status"]["message"].as_str().unwrap();
            assert!(msg.contains(words), "{name}: {msg}");
            assert!(!msg.contains("short"), "{name}: a secret leaked: {msg}");
            assert!(
                !msg.contains("but-secret"),
                "{name}: a secret leaked: {msg}"
            );
            assert_eq!(r["status"]["code"], 400, "{name}");
        }
    }
    // dryRun: the same answer, nothing else happens
    let (_, r) = run(
        "admission-validate-update-dryrun.json",
        Mode::Validate,
        &s,
        |b| b["request"]["object"]["spec"]["parameters"]["clusterName"] = json!("other"),
    );
    assert_eq!(
        r["allowed"], false,
        "the dry run changes the immutable clusterName: {r}"
    );
}

#[test]
fn values_written_through_v1beta1_are_typed_by_the_mutating_webhook() {
    let s = store();
    // The conversion webhook types the values of a known OperatorVersion (as in the capture);
    // with its cache still cold it passes v1beta1's string on, and the mutating webhook types it.
    let as_string = |b: &mut Value| {
        b["request"]["object"]["spec"]["parameters"]["NODE_COUNT"] = json!("4");
    };
    let (_, r) = run(
        "admission-mutate-update-sent-as-v1beta1.json",
        Mode::Mutate,
        &s,
        as_string,
    );
    assert_eq!(r["allowed"], true, "{r}");
    let patch = patch_of(&r);
    assert!(
        patch
            .contains(&json!({"op": "replace", "path": "/spec/parameters/NODE_COUNT", "value": 4})),
        "{patch:?}"
    );
    let (_, r) = run(
        "admission-validate-update-sent-as-v1beta1.json",
        Mode::Validate,
        &s,
        |_| {},
    );
    assert_eq!(r["allowed"], true, "{r}");
    // The update as the API server sent it, already typed: nothing to patch.
    let (_, r) = run(
        "admission-mutate-update-sent-as-v1beta1.json",
        Mode::Mutate,
        &s,
        |_| {},
    );
    assert_eq!(r["allowed"], true, "{r}");
    assert!(patch_of(&r).is_empty(), "{r}");
}

#[test]
fn an_upgrade_migrates_by_old_name_or_is_refused() {
    let v3 = json!({"type": "object", "properties": {
        "cluster": {"type": "object", "properties": {
            "name": {"type": "string", "immutable": true, "oldName": "/clusterName"},
            "size": {"type": "integer", "oldName": "/nodeCount"}}},
        "auth": {"type": "object", "properties": {"enabled": {"type": "boolean"}}}}});
    let skip = json!({"type": "object", "properties": {
        "cluster": {"type": "object", "properties": {"name": {"type": "string", "oldName": "/cluster_name_v2"}}}}});
    let s = store()
        .with(
            wire::NAMESPACE,
            wire::sample_db_operator_version("sample-db-0.3.0", "0.3.0", v3),
        )
        .with(
            wire::NAMESPACE,
            wire::sample_db_operator_version("sample-db-0.4.0", "0.4.0", skip),
        );
    let upgrade_to = |ov: &'static str| {
        move |b: &mut Value| {
            b["request"]["object"]["spec"]["parameters"] =
                b["request"]["oldObject"]["spec"]["parameters"].clone();
            b["request"]["object"]["spec"]["operatorVersion"]["name"] = json!(ov);
        }
    };
    // The installed /topology has no place in 0.3.0: refused by the preflight, naming it, ...
    let (_, r) = run(
        "admission-mutate-update.json",
        Mode::Mutate,
        &s,
        upgrade_to("sample-db-0.3.0"),
    );
    assert_eq!(r["allowed"], false, "{r}");
    let msg = r["status"]["message"].as_str().unwrap();
    assert!(
        msg.contains("/topology")
            && msg.contains("[value-dropped]")
            && msg.contains("--allow-drop topology"),
        "{msg}"
    );
    // ... unless the write lets it go (`kudo upgrade --allow-drop topology`), on top of the
    // generation it replaces; the same annotation on top of another generation counts for nothing.
    let allowing = |generation: i64| {
        move |b: &mut Value| {
            upgrade_to("sample-db-0.3.0")(b);
            let old = b["request"]["oldObject"]["metadata"]["generation"]
                .as_i64()
                .unwrap();
            b["request"]["object"]["metadata"]["annotations"]["kudo.dev/preflight"] =
                json!(format!("{}:{{\"drop\":[\"/topology\"]}}", old + generation));
        }
    };
    let (_, r) = run(
        "admission-mutate-update.json",
        Mode::Mutate,
        &s,
        allowing(-1),
    );
    assert_eq!(r["allowed"], false, "a stale annotation: {r}");
    let (_, r) = run(
        "admission-mutate-update.json",
        Mode::Mutate,
        &s,
        allowing(0),
    );
    assert_eq!(r["allowed"], true, "{r}");
    let patch = patch_of(&r);
    let mut doc =
        wire("admission-mutate-update.json")["request_body"]["request"]["oldObject"].clone();
    doc["spec"]["operatorVersion"]["name"] = json!("sample-db-0.3.0");
    json_patch::patch(
        &mut doc,
        &serde_json::from_value::<json_patch::Patch>(Value::Array(patch)).unwrap(),
    )
    .unwrap();
    assert_eq!(
        doc["spec"]["parameters"],
        // nodeCount was defaulted at create (3), and moves to its new place
        json!({"cluster": {"name": "shop-db", "size": 3}, "auth": {"enabled": true}})
    );
    let warnings = r["warnings"].as_array().unwrap();
    assert!(
        warnings.iter().any(|w| {
            let w = w.as_str().unwrap();
            w.contains("/topology") && w.contains("allowed by --allow-drop")
        }),
        "{warnings:?}"
    );
    let (_, r) = run(
        "admission-validate-update.json",
        Mode::Validate,
        &s,
        upgrade_to("sample-db-0.4.0"),
    );
    assert_eq!(r["allowed"], false);
    let msg = r["status"]["message"].as_str().unwrap();
    assert!(
        msg.contains("old-name-not-found") && msg.contains("0.2.0"),
        "{msg}"
    );
}

#[test]
fn what_cannot_be_checked_is_denied_clearly_and_bad_input_gets_400() {
    let not_ready = Store {
        ready: Some(StoreError::NotSynced),
        ..Default::default()
    };
    let (_, r) = run(
        "admission-validate-create.json",
        Mode::Validate,
        &not_ready,
        |_| {},
    );
    assert_eq!(r["allowed"], false);
    assert!(
        r["status"]["message"]
            .as_str()
            .unwrap()
            .contains("has not finished its first list")
    );
    let (_, r) = run(
        "admission-validate-create.json",
        Mode::Validate,
        &Store::default(),
        |_| {},
    );
    assert!(
        r["status"]["message"]
            .as_str()
            .unwrap()
            .contains("sample-db-0.2.0 does not exist")
    );
    for body in [
        &b"{"[..],
        b"",
        &[0xff, 0xfe],
        br#"{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1"}"#,
    ] {
        let (status, review) = admit_review(body, Mode::Validate, &store());
        assert_eq!(status, 400);
        assert_eq!(review["response"]["allowed"], false);
    }
}

/// The captured v1beta1-endpoint update of `apps/web-2`, turned into a rewrite: the old object
/// holds v1beta1 strings (as conversion delivers them when the OperatorVersion's types are not
/// known), the new one the same values typed, with a KUDO plan status on both.
fn rewrite_review(edit_new: impl Fn(&mut Value)) -> impl Fn(&mut Value) {
    move |b: &mut Value| {
        let strings = json!({"CLUSTER_NAME": "green", "NODE_COUNT": "7",
            "BACKUP_ENABLED": "false", "PORTS": "[80, 443]"});
        let typed = json!({"CLUSTER_NAME": "green", "NODE_COUNT": 7,
            "BACKUP_ENABLED": false, "PORTS": [80, 443]});
        let status = json!({"activePlan": {"name": "backup", "uid": "u1"},
            "planStatus": {"backup": {"name": "backup", "status": "IN_PROGRESS", "uid": "u1"}}});
        let r = &mut b["request"];
        r["oldObject"]["spec"]["parameters"] = strings;
        r["oldObject"]["status"] = status.clone();
        r["object"]["spec"]["parameters"] = typed;
        r["object"]["status"] = status;
        edit_new(&mut r["object"]);
    }
}

#[test]
fn a_migration_rewrite_that_only_types_values_is_admitted() {
    let s = store();
    for (name, mode) in [
        ("admission-mutate-update-sent-as-v1beta1.json", Mode::Mutate),
        (
            "admission-validate-update-sent-as-v1beta1.json",
            Mode::Validate,
        ),
    ] {
        let (status, r) = run(name, mode, &s, rewrite_review(|_| {}));
        assert_eq!(status, 200);
        assert_eq!(r["allowed"], true, "{name}: {r}");
    }
    // A real change in the same state is refused: `backup` is running, NODE_COUNT runs deploy.
    let (_, r) = run(
        "admission-validate-update-sent-as-v1beta1.json",
        Mode::Validate,
        &s,
        rewrite_review(|o| o["spec"]["parameters"]["NODE_COUNT"] = json!(8)),
    );
    assert_eq!(r["allowed"], false, "{r}");
    let msg = r["status"]["message"].as_str().unwrap();
    assert!(msg.contains("[plan-in-progress]"), "{msg}");
}

/// A direct trigger (`kudo plan trigger`: a new `spec.planExecution`) while `backup` runs: as
/// KUDO's tests say, "overriding an existing plan directly is NOT allowed"; the running plan
/// may be triggered again (it restarts), and `--force` supersedes the run it names.
#[test]
fn a_direct_trigger_over_a_running_plan_is_denied_unless_it_supersedes_it() {
    let s = store();
    /// (case, plan triggered, run named in `kudo.dev/supersede`, NODE_COUNT, allowed or the code).
    type Case = (
        &'static str,
        &'static str,
        Option<&'static str>,
        Value,
        Result<(), &'static str>,
    );
    let cases: Vec<Case> = vec![
        (
            "another plan",
            "deploy",
            None,
            json!(7),
            Err("[plan-in-progress]"),
        ),
        ("the running plan again", "backup", None, json!(7), Ok(())),
        (
            "another plan, superseding the run",
            "deploy",
            Some("u1"),
            json!(7),
            Ok(()),
        ),
        (
            "another plan, naming an older run",
            "deploy",
            Some("u0"),
            json!(7),
            Err("[plan-in-progress]"),
        ),
        (
            "with a parameter change",
            "backup",
            Some("u1"),
            json!(8),
            Err("[trigger-conflict]"),
        ),
        (
            "a plan the operator lacks",
            "nope",
            Some("u1"),
            json!(7),
            Err("[unknown-plan]"),
        ),
    ];
    for (name, plan, supersede, nodes, want) in cases {
        for (file, mode) in [
            ("admission-mutate-update-sent-as-v1beta1.json", Mode::Mutate),
            (
                "admission-validate-update-sent-as-v1beta1.json",
                Mode::Validate,
            ),
        ] {
            let (status, r) = run(
                file,
                mode,
                &s,
                rewrite_review(|o| {
                    o["spec"]["planExecution"] = json!({"planName": plan, "uid": "t-1"});
                    o["spec"]["parameters"]["NODE_COUNT"] = nodes.clone();
                    if let Some(uid) = supersede {
                        o["metadata"]["annotations"] = json!({"kudo.dev/supersede": uid});
                    }
                }),
            );
            assert_eq!(status, 200, "{name}");
            match want {
                Ok(()) => assert_eq!(r["allowed"], true, "{name} ({file}): {r}"),
                Err(code) => {
                    assert_eq!(r["allowed"], false, "{name} ({file}): {r}");
                    assert_eq!(r["status"]["code"], 400, "{name}");
                    let msg = r["status"]["message"].as_str().unwrap();
                    assert!(msg.contains(code), "{name} ({file}): {msg}");
                }
            }
        }
    }
}

/// Issue 23: a nested value written through v1beta1 reaches the webhooks pruned to `{}`; the
/// v1beta1 webhook (matchPolicy Exact) sees it before conversion and denies it, naming it.
#[test]
fn values_the_v1beta1_map_cannot_hold_are_denied_naming_the_parameter() {
    let s = store();
    let as_v1beta1 = |parameters: Value, version: &'static str| {
        move |b: &mut Value| {
            let r = &mut b["request"];
            r["kind"]["version"] = json!(version);
            r["resource"]["version"] = json!(version);
            for o in ["object", "oldObject"] {
                r[o]["apiVersion"] = json!(format!("kudo.dev/{version}"));
                r[o]["spec"]["parameters"] = json!({"CLUSTER_NAME": "green", "NODE_COUNT": "4"});
            }
            r["object"]["spec"]["parameters"] = parameters.clone();
        }
    };
    /// (case, parameters, the version the webhook receives, allowed or words of the denial).
    type Case = (
        &'static str,
        Value,
        &'static str,
        Result<(), Vec<&'static str>>,
    );
    let cases: Vec<Case> = vec![
        (
            "strings",
            json!({"CLUSTER_NAME": "green", "NODE_COUNT": "5"}),
            "v1beta1",
            Ok(()),
        ),
        (
            "an object, pruned by the API server",
            json!({"CLUSTER_NAME": "green", "BACKUP": {}}),
            "v1beta1",
            Err(vec![
                "/BACKUP: kudo.dev/v1beta1 holds each parameter value as a string; this one is an object",
            ]),
        ),
        (
            "a number, an array and null, each named",
            json!({"NODE_COUNT": 5, "PORTS": [80], "CLUSTER_NAME": null}),
            "v1beta1",
            Err(vec![
                "(3 problem(s))",
                "/NODE_COUNT:",
                "/PORTS:",
                "/CLUSTER_NAME:",
                "--reset CLUSTER_NAME",
            ]),
        ),
        // A v1beta2 object sent here (a misconfiguration) is left to the v1beta2 webhooks.
        (
            "a v1beta2 object",
            json!({"NODE_COUNT": 5}),
            "v1beta2",
            Ok(()),
        ),
    ];
    for (name, parameters, version, want) in cases {
        let (status, r) = run(
            "admission-mutate-update-sent-as-v1beta1.json",
            Mode::V1beta1,
            &s,
            as_v1beta1(parameters, version),
        );
        assert_eq!(status, 200, "{name}");
        assert!(
            r.get("patch").is_none(),
            "{name}: the v1beta1 webhook never patches"
        );
        match want {
            Ok(()) => assert_eq!(r["allowed"], true, "{name}: {r}"),
            Err(words) => {
                assert_eq!(r["allowed"], false, "{name}: {r}");
                assert_eq!(r["status"]["code"], 400, "{name}");
                let msg = r["status"]["message"].as_str().unwrap();
                for w in words {
                    assert!(msg.contains(w), "{name}: {w:?} not in {msg}");
                }
            }
        }
    }
}

/// `kudo update --force`: a change that names the running run in `kudo.dev/supersede` is
/// admitted; one naming another (an older) run is refused as before.
#[test]
fn a_change_naming_the_running_plan_to_supersede_is_admitted() {
    let s = store();
    for (uid, allowed) in [("u1", true), ("u0", false)] {
        let (_, r) = run(
            "admission-validate-update-sent-as-v1beta1.json",
            Mode::Validate,
            &s,
            rewrite_review(|o| {
                o["spec"]["parameters"]["NODE_COUNT"] = json!(8);
                o["metadata"]["annotations"] = json!({"kudo.dev/supersede": uid});
            }),
        );
        assert_eq!(r["allowed"], allowed, "supersede {uid}: {r}");
    }
}

#[test]
fn the_managers_writes_to_a_migrated_instance_are_admitted_even_while_it_is_deleted() {
    let s = store();
    // The manager removes its finalizer from an Instance being deleted: metadata only.
    let finalizer = |o: &mut Value| {
        o["metadata"]["deletionTimestamp"] = json!("2026-11-22T03:00:00Z");
        o["metadata"]["finalizers"] = json!([]);
    };
    for (name, mode) in [
        ("admission-mutate-update-sent-as-v1beta1.json", Mode::Mutate),
        (
            "admission-validate-update-sent-as-v1beta1.json",
            Mode::Validate,
        ),
    ] {
        let (_, r) = run(name, mode, &s, rewrite_review(finalizer));
        assert_eq!(r["allowed"], true, "{name}: {r}");
    }
    let (_, r) = run(
        "admission-validate-update-sent-as-v1beta1.json",
        Mode::Validate,
        &s,
        rewrite_review(|o| {
            finalizer(o);
            o["spec"]["parameters"]["BACKUP_ENABLED"] = json!(true);
        }),
    );
    assert_eq!(r["allowed"], false, "{r}");
    assert!(
        r["status"]["message"]
            .as_str()
            .unwrap()
            .contains("[deleting]")
    );
}

#[test]
fn an_upgrade_with_a_change_that_runs_another_plan_than_deploy_is_denied() {
    let v3 = wire::sample_db_schema();
    let s = store().with(
        wire::NAMESPACE,
        wire::sample_db_operator_version("sample-db-0.3.0", "0.3.0", v3),
    );
    let (_, r) = run(
        "admission-validate-update.json",
        Mode::Validate,
        &s,
        |b: &mut Value| {
            b["request"]["object"]["spec"]["operatorVersion"]["name"] = json!("sample-db-0.3.0");
            b["request"]["object"]["spec"]["parameters"] =
                b["request"]["oldObject"]["spec"]["parameters"].clone();
            b["request"]["object"]["spec"]["parameters"]["auth"] = json!({"enabled": false});
        },
    );
    assert_eq!(r["allowed"], false, "{r}");
    let msg = r["status"]["message"].as_str().unwrap();
    assert!(msg.contains("[upgrade-with-change]"), "{msg}");
    // The same upgrade changing an immutable value is denied, as the CLI denies it.
    let (_, r) = run(
        "admission-validate-update.json",
        Mode::Validate,
        &s,
        |b: &mut Value| {
            b["request"]["object"]["spec"]["operatorVersion"]["name"] = json!("sample-db-0.3.0");
            b["request"]["object"]["spec"]["parameters"] =
                b["request"]["oldObject"]["spec"]["parameters"].clone();
            b["request"]["object"]["spec"]["parameters"]["clusterName"] = json!("other");
        },
    );
    assert_eq!(r["allowed"], false, "{r}");
    let msg = r["status"]["message"].as_str().unwrap();
    assert!(msg.contains("[immutable-changed]"), "{msg}");
}

/// Issue 34: a rollback to another version restores the revision's whole values: the change
/// that an upgrade could not carry is admitted when the write names the generation it replaces
/// (`kudo.dev/rollback: N@G`); an annotation left from an earlier generation counts for nothing;
/// an immutable value is refused as on any upgrade.
#[test]
fn a_rollback_naming_the_generation_it_replaces_restores_a_revision() {
    let v3 = wire::sample_db_schema();
    let s = store().with(
        wire::NAMESPACE,
        wire::sample_db_operator_version("sample-db-0.3.0", "0.3.0", v3),
    );
    let rollback = |value: Value, cluster_name: Option<&'static str>, at: Option<i64>| {
        move |b: &mut Value| {
            b["request"]["object"]["spec"]["operatorVersion"]["name"] = json!("sample-db-0.3.0");
            b["request"]["object"]["spec"]["parameters"] =
                b["request"]["oldObject"]["spec"]["parameters"].clone();
            b["request"]["object"]["spec"]["parameters"]["auth"] = value.clone();
            if let Some(c) = cluster_name {
                b["request"]["object"]["spec"]["parameters"]["clusterName"] = json!(c);
            }
            let g = b["request"]["oldObject"]["metadata"]["generation"]
                .as_i64()
                .unwrap();
            let g = at.unwrap_or(g);
            b["request"]["object"]["metadata"]["annotations"] =
                json!({labels::ROLLBACK: format!("1@{g}")});
        }
    };
    let off = json!({"enabled": false});
    let (_, r) = run(
        "admission-validate-update.json",
        Mode::Validate,
        &s,
        rollback(off.clone(), None, None),
    );
    assert_eq!(r["allowed"], true, "{r}");
    let (_, r) = run(
        "admission-validate-update.json",
        Mode::Validate,
        &s,
        rollback(off.clone(), None, Some(-1)),
    );
    assert_eq!(r["allowed"], false, "a stale annotation: {r}");
    let (_, r) = run(
        "admission-validate-update.json",
        Mode::Validate,
        &s,
        rollback(off, Some("other"), None),
    );
    assert_eq!(r["allowed"], false, "{r}");
    let msg = r["status"]["message"].as_str().unwrap();
    assert!(msg.contains("[immutable-changed]"), "{msg}");
}

/// Issue 38, finding 1: 150,000 parameter keys (2.6 MB, under the API server's limit) made a
/// 13.8 MB denial listing every problem. Now: one problem, the bound passed, before any
/// other work on the values.
#[test]
fn values_past_the_policys_bounds_are_refused_whole_in_a_short_denial() {
    let s = store();
    let keys: serde_json::Map<String, Value> = (0..150_000)
        .map(|i| (format!("key{i}"), json!("value")))
        .collect();
    let keys = Value::Object(keys);
    for mode in [Mode::Mutate, Mode::Validate] {
        let (status, r) = run("admission-validate-create.json", mode, &s, |b| {
            b["request"]["object"]["spec"]["parameters"] = keys.clone();
        });
        assert_eq!(status, 200);
        assert_eq!(r["allowed"], false);
        let message = r["status"]["message"].as_str().unwrap();
        assert!(message.len() <= 64 * 1024, "{} bytes", message.len());
        assert!(message.contains("[too-large]"), "{message}");
        assert!(
            message.contains("the Instance's parameters are more than 262144 bytes as JSON"),
            "{message}"
        );
    }
    // Many problems within the bounds: the first 50, then how many more.
    let unknown: serde_json::Map<String, Value> = (0..8_000)
        .map(|i| (format!("key{i}"), json!("v")))
        .collect();
    let (_, r) = run("admission-validate-create.json", Mode::Validate, &s, |b| {
        let p = b["request"]["object"]["spec"]["parameters"]
            .as_object_mut()
            .unwrap();
        p.extend(unknown.clone());
    });
    let message = r["status"]["message"].as_str().unwrap();
    assert!(message.len() <= 64 * 1024, "{} bytes", message.len());
    assert!(message.contains("(8000 problem(s))"), "{message}");
    assert_eq!(message.matches("[unknown-parameter]").count(), 50);
    assert!(message.contains("and 7950 more problem(s)"), "{message}");
    // A key as long as the bytes allow is cut where it is shown.
    let long = "k".repeat(200_000);
    let (_, r) = run("admission-validate-create.json", Mode::Validate, &s, |b| {
        b["request"]["object"]["spec"]["parameters"][&long] = json!(1);
    });
    let message = r["status"]["message"].as_str().unwrap();
    assert!(message.contains("[unknown-parameter]"), "{message}");
    assert!(message.len() < 4 * 1024, "{} bytes", message.len());
}

/// Issue 38, finding 4: an Instance whose v1beta1 form cannot be held (Kubernetes' 256 KiB
/// limit on annotations) failed every `kubectl get instances.v1beta1.kudo.dev -A`. Here the
/// values fit the policy's bounds, but with the client-side apply annotation the v1beta1 form
/// would not: refused, naming the version and the largest annotations.
#[test]
fn an_instance_that_could_not_be_read_as_v1beta1_is_refused() {
    let s = store();
    let big = "x".repeat(150 * 1024);
    let edit = |b: &mut Value| {
        let obj = &mut b["request"]["object"];
        obj["spec"]["parameters"]["topology"] = json!([{"datacenterName": big}]);
        let applied = obj.to_string();
        obj["metadata"]["annotations"] = json!({
            "kubectl.kubernetes.io/last-applied-configuration": applied
        });
    };
    for mode in [Mode::Mutate, Mode::Validate] {
        let (status, r) = run("admission-validate-create.json", mode, &s, edit);
        assert_eq!(status, 200);
        assert_eq!(r["allowed"], false, "{mode:?}");
        let message = r["status"]["message"].as_str().unwrap();
        assert!(
            message.contains("read as kudo.dev/v1beta1 this object would hold")
                && message.contains("kubectl.kubernetes.io/last-applied-configuration (")
                && message.contains("kudo.dev/v1beta2-parameters ("),
            "{message}"
        );
        assert!(message.len() < 2048, "{} bytes", message.len());
    }
    // An Instance stored before the check, already past it, can still be changed in ways that
    // make it no worse (its finalizer removed, so that it can be deleted); not made worse.
    let legacy = |b: &mut Value, extra: &str| {
        let old = &mut b["request"]["oldObject"];
        old["spec"]["parameters"]["topology"] = json!([{"datacenterName": big}]);
        let applied = old.to_string();
        old["metadata"]["annotations"] =
            json!({"kubectl.kubernetes.io/last-applied-configuration": applied});
        let mut new = old.clone();
        new["metadata"]["finalizers"] = json!([]);
        if !extra.is_empty() {
            new["metadata"]["annotations"]["note"] = json!(extra);
        }
        b["request"]["object"] = new;
    };
    let (_, r) = run("admission-validate-update.json", Mode::Validate, &s, |b| {
        legacy(b, "")
    });
    assert_eq!(r["allowed"], true, "{r}");
    let (_, r) = run("admission-validate-update.json", Mode::Validate, &s, |b| {
        legacy(b, &"z".repeat(1000))
    });
    assert_eq!(r["allowed"], false, "{r}");
    // The same values without the annotation fit: admitted.
    let (_, r) = run("admission-validate-create.json", Mode::Validate, &s, |b| {
        b["request"]["object"]["spec"]["parameters"]["topology"] = json!([{"datacenterName": big}]);
    });
    assert_eq!(r["allowed"], true, "{r}");
    // What is admitted converts, and the result fits.
    let mut object =
        wire("admission-validate-create.json")["request_body"]["request"]["object"].clone();
    object["spec"]["parameters"]["topology"] = json!([{"datacenterName": big}]);
    let v1beta1 = convert(&object, "kudo.dev/v1beta1", &NoTypes).unwrap();
    let bytes: usize = v1beta1["metadata"]["annotations"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| k.len() + v.as_str().unwrap().len())
        .sum();
    assert!(bytes <= kudo_crd::convert::MAX_ANNOTATIONS_BYTES, "{bytes}");
}

/// `spec.window` (a maintenance window) is refused at admission when it cannot be read, naming
/// the field; a window that reads is admitted, and one left as it was is not checked again.
#[test]
fn a_maintenance_window_that_cannot_be_read_is_refused_naming_its_field() {
    let s = store();
    let file = "admission-validate-update-sent-as-v1beta1.json";
    let with = |window: Value| {
        rewrite_review(move |o| {
            o["status"] = json!({});
            o["spec"]["window"] = window.clone();
        })
    };
    for (window, field) in [
        (
            json!({"schedule": "61 2 * * *", "duration": "2h"}),
            "spec.window.schedule",
        ),
        (
            json!({"schedule": "0 2 * * *", "duration": "soon"}),
            "spec.window.duration",
        ),
        (
            json!({"schedule": "0 2 * * *", "duration": "2h", "timeZone": "Mars/Olympus"}),
            "spec.window.timeZone",
        ),
        (json!({"schedule": "0 2 * * *"}), "spec.window"),
    ] {
        let (status, r) = run(file, Mode::Validate, &s, with(window.clone()));
        assert_eq!(status, 200);
        assert_eq!(r["allowed"], false, "{window}: {r}");
        let msg = r["status"]["message"].as_str().unwrap();
        assert!(msg.contains(field), "{window}: {msg}");
    }
    let good = json!({"schedule": "0 2 * * 6", "duration": "4h", "timeZone": "Europe/Berlin"});
    let (_, r) = run(file, Mode::Validate, &s, with(good));
    assert_eq!(r["allowed"], true, "{r}");
}
