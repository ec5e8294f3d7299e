//! What an Instance stores: only what its user set (an upgrade takes the new version's
//! defaults, an immutable one stays as installed), and never a `writeOnly` value, which lives in
//! a Secret the Instance names (`spec.parametersFrom`) and is looked for, and not found, in
//! every other place a reader could see it.

use crate::harness::*;

/// The data of Secret `name`, decoded; `Null` when it does not exist.
fn secret_data(s: &Scenario, name: &str) -> Value {
    let Some(secret) = s.get(&s.api("v1", "Secret", "secrets"), name) else {
        return Value::Null;
    };
    let mut out = serde_json::Map::new();
    if let Some(data) = secret["data"].as_object() {
        for (k, v) in data {
            let bytes = base64::Engine::decode(
                &base64::engine::general_purpose::STANDARD,
                v.as_str().unwrap_or_default(),
            )
            .expect("Secret data is base64");
            out.insert(k.clone(), Value::String(text(&bytes)));
        }
    }
    Value::Object(out)
}

/// Every object of `api` in the scenario's namespace, as JSON text.
fn list_text(s: &Scenario, api: &Api<DynamicObject>) -> String {
    let list = s
        .runtime
        .block_on(api.list(&Default::default()))
        .expect("the API server lists");
    serde_json::to_string(&list.items).expect("objects are JSON")
}

/// The text of every file under `dir`, recursively.
fn files_text(dir: &Path) -> String {
    let mut out = String::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            out.push_str(&files_text(&p));
        } else if let Ok(bytes) = std::fs::read(&p) {
            out.push_str(&String::from_utf8_lossy(&bytes));
        }
    }
    out
}

/// The name of kudo's Secret that Instance `name` points at.
fn params_secret(s: &Scenario, name: &str) -> String {
    let inst = s.instance(name);
    let from = inst["spec"]["parametersFrom"]
        .as_array()
        .unwrap_or_else(|| panic!("{name} names no Secret: {inst}"));
    assert_eq!(from.len(), 1, "{inst}");
    from[0]["secretRef"]["name"]
        .as_str()
        .expect("a Secret name")
        .to_string()
}

#[test]
fn a_write_only_value_lives_in_a_secret_and_is_found_nowhere_else() {
    let Some(s) = Scenario::start("write-only") else {
        return;
    };
    let first = "first-Secret-Value-7f3a";
    let second = "second-Secret-Value-9c1d";
    let mut outputs = String::new();
    let install = s
        .install(&configs(), "cfg")
        .params(&[&format!("auth/adminPassword={first}"), "replicas=2"])
        .ok()
        .get_output()
        .clone();
    outputs.push_str(&text(&install.stdout));
    outputs.push_str(&text(&install.stderr));
    s.wait_plan("cfg", "deploy");

    // The operator got the value, from kudo's Secret, which the Instance names.
    assert_eq!(secret_data(&s, "cfg-credentials")["password"], first);
    let held = params_secret(&s, "cfg");
    assert!(held.starts_with("cfg-params-"), "{held}");
    assert!(
        secret_data(&s, &held)["parameters.yaml"]
            .as_str()
            .is_some_and(|t| t.contains(first)),
        "kudo's Secret holds the value"
    );
    let inst = s.instance("cfg");
    assert_eq!(inst["spec"]["parameters"], json!({"replicas": 2}), "{inst}");
    // Recorded in the revision the status refers to (issue 49), as a digest.
    assert!(inst["status"]["applied"]["parameters"].is_null(), "{inst}");
    assert!(inst["status"]["applied"]["revision"].is_i64(), "{inst}");
    let digest = s.applied_values("cfg")["auth"]["adminPassword"].clone();
    assert!(
        digest
            .as_str()
            .is_some_and(|d| d.starts_with("hmac-sha256:")),
        "the revision records a digest: {digest}"
    );

    // A new value: a new Secret, the old one gone, the untriggered `update` plan run.
    let update = s
        .update("cfg")
        .param(&format!("auth/adminPassword={second}"))
        .ok()
        .get_output()
        .clone();
    outputs.push_str(&text(&update.stdout));
    outputs.push_str(&text(&update.stderr));
    wait_until("the operator's Secret holds the new value", || {
        secret_data(&s, "cfg-credentials")["password"] == second
    });
    s.wait_plan("cfg", "update");
    let now = params_secret(&s, "cfg");
    assert_ne!(now, held, "a new Secret for the new value");
    // The old Secret stays while the revision of the first change names it (issue 34:
    // `kudo rollback` restores its value); `lifecycle.rs` sees it go past historyLimit.
    assert!(
        !secret_data(&s, &held).is_null(),
        "the Secret of revision 1 is kept"
    );
    assert_ne!(
        s.applied_values("cfg")["auth"]["adminPassword"],
        digest,
        "a changed secret is recorded as changed"
    );

    // Nobody puts it into the Instance by hand either: refused, the value never echoed.
    let refused = refusal(s.patch_raw(
        "cfg",
        json!({"spec": {"parameters": {"auth": {"adminPassword": "third-Secret-Value-2b"}}}}),
    ));
    assert!(refused.contains("/auth/adminPassword"), "{refused}");
    assert!(refused.contains("writeOnly"), "{refused}");
    assert!(!refused.contains("third-Secret"), "{refused}");

    // Every place a reader of the Instance, or of kudo's output and logs, could look.
    for args in [
        vec!["get", "instances", "-n", &s.namespace, "-o", "yaml"],
        vec!["get", "instances", "-n", &s.namespace, "-o", "json"],
        vec!["history", "cfg", "-n", &s.namespace, "-o", "json"],
        vec!["history", "cfg", "-n", &s.namespace],
        vec!["get", "instances", "-n", &s.namespace],
        vec!["plan", "status", "--instance", "cfg", "-n", &s.namespace],
        vec![
            "plan",
            "status",
            "--instance",
            "cfg",
            "-n",
            &s.namespace,
            "-o",
            "json",
        ],
        vec![
            "update",
            "--instance",
            "cfg",
            "-n",
            &s.namespace,
            "-p",
            "replicas=3",
            "--dry-run",
            "-o",
            "json",
        ],
    ] {
        let out = s.kudo(&args).assert().success().get_output().clone();
        outputs.push_str(&text(&out.stdout));
        outputs.push_str(&text(&out.stderr));
    }
    let mut places = vec![("kudo's output", outputs)];
    for version in ["v1beta1", "v1beta2"] {
        let inst = s.get(&s.instances(version), "cfg").expect("the Instance");
        places.push(("the Instance", inst.to_string()));
    }
    places.push((
        "events",
        list_text(&s, &s.api("events.k8s.io/v1", "Event", "events")),
    ));
    places.push((
        "core events",
        list_text(&s, &s.api("v1", "Event", "events")),
    ));
    places.push((
        "revisions",
        list_text(
            &s,
            &s.api("apps/v1", "ControllerRevision", "controllerrevisions"),
        ),
    ));
    places.push(("the daemons' logs and captures", files_text(&s.daemons.dir)));
    for (what, seen) in &places {
        assert!(!seen.is_empty(), "{what}: nothing read");
        for secret in [first, second] {
            assert!(!seen.contains(secret), "{what} holds a secret value");
        }
    }
}

#[test]
fn an_upgrade_takes_the_new_defaults_and_keeps_an_installed_immutable_one() {
    let Some(s) = Scenario::start("new-defaults") else {
        return;
    };
    s.install(&configs(), "cfg")
        .params(&["settings/k01=mine"])
        .ok();
    s.wait_plan("cfg", "deploy");
    assert_eq!(
        s.instance("cfg")["spec"]["parameters"],
        json!({"settings": {"k01": "mine"}}),
        "only what the user set is stored"
    );
    assert_eq!(s.config_map("cfg-config")["replicas"], "1");
    assert_eq!(s.config_map("cfg-config")["cluster"], "e2e");

    // Version 0.2.0: new defaults for replicas (mutable) and clusterName (immutable).
    let (_dir, v2) = kudo_testkit::copy_package(&configs());
    let edit = |file: &str, from: &str, to: &str| {
        let path = v2.join(file);
        let text = std::fs::read_to_string(&path).expect("the fixture");
        assert!(text.contains(from), "{file} has {from}");
        std::fs::write(&path, text.replacen(from, to, 1)).expect("written");
    };
    edit(
        "operator.yaml",
        "operatorVersion: 0.1.0",
        "operatorVersion: 0.2.0",
    );
    edit("params.yaml", "    default: 1\n", "    default: 4\n");
    edit(
        "params.yaml",
        "    default: e2e\n",
        "    default: e2e-two\n",
    );
    s.upgrade(&v2, "cfg").ok();
    wait_until("0.2.0 runs with its new default", || {
        s.instance("cfg")["spec"]["operatorVersion"]["name"] == "e2e-configs-0.2.0"
            && s.config_map("cfg-config")["replicas"] == "4"
    });
    let inst = s.instance("cfg");
    assert_eq!(
        inst["spec"]["parameters"],
        json!({"settings": {"k01": "mine"}}),
        "{inst}"
    );
    assert_eq!(
        inst["spec"]["immutableDefaults"],
        json!({"clusterName": "e2e"}),
        "the installed immutable default is kept, apart from the user's values: {inst}"
    );
    let data = s.config_map("cfg-config");
    assert_eq!(data["cluster"], "e2e", "an immutable value never changes");
    assert_eq!(data["k01"], "mine");
}
