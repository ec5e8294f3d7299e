use crate::harness::*;

// The wire fixtures

/// The reviews of `tests/fixtures/wire/`, each captured by the wire scenario.
const WIRE: &[&str] = &[
    "conversion-operatorversion-v1beta1-to-v1beta2",
    "conversion-instance-v1beta1-to-v1beta2",
    "conversion-instance-v1beta2-to-v1beta1",
    "admission-mutate-create",
    "admission-validate-create",
    "admission-mutate-update",
    "admission-validate-update",
    "admission-mutate-update-dryrun",
    "admission-validate-update-dryrun",
    "admission-mutate-update-sent-as-v1beta1",
    "admission-validate-update-sent-as-v1beta1",
];

/// The keys of `v` (an object), sorted.
fn keys(v: &Value) -> Vec<String> {
    let mut k: Vec<String> = v
        .as_object()
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default();
    k.sort();
    k
}

/// Creates `object` (a POST, as `kubectl create`) through its own apiVersion.
fn create(s: &Scenario, object: Value) {
    let (version, kind) = (
        object["apiVersion"].as_str().expect("an apiVersion"),
        object["kind"].as_str().expect("a kind"),
    );
    let api = s.api(version, kind, plural(kind));
    let o: DynamicObject = serde_json::from_value(object.clone()).expect("an object");
    s.runtime
        .block_on(api.create(&Default::default(), &o))
        .unwrap_or_else(|e| panic!("creating {object}: {e}"));
}

/// What kube-apiserver sends to the webhooks, captured from the real server: two operators as
/// the captures of the project's beginnings had them (KUDO's flat `sample-app` written through
/// v1beta1, the structured `sample-db`), then the writes each review class comes from. The
/// captures must hold what each step sent, and have the shape of `tests/fixtures/wire/`; with
/// `KUDO_E2E_UPDATE_WIRE=1` they replace the fixtures (the namespace written as `wire`).
#[test]
fn the_wire_fixtures_are_what_the_api_server_sends() {
    let Some(s) = Scenario::start("wire") else {
        return;
    };
    let ns = s.namespace.clone();
    let packages = fixture("wire").join("packages");
    // Instances created as kubectl would: their plans run as the namespace's ServiceAccount.
    s.instance_service_account();

    // sample-db through v1beta2; sample-app as KUDO wrote it, through v1beta1.
    let db = kudo_pkg::Package::load(&packages.join("sample-db")).expect("sample-db");
    let (op, mut ov) = kudo_crd::package::objects(&db, &ns);
    // Named the short way (`sample-db-0.2.0`, as the fixtures were captured), not KUDO's
    // `sample-db-1.0.0-0.2.0`: the Instances name it so, and the captures hold that name.
    ov.metadata.name = Some("sample-db-0.2.0".into());
    for o in [serde_json::to_value(op), serde_json::to_value(ov)] {
        s.apply(&o.expect("JSON"));
    }
    let (op, ov) = kudo_objects(&packages.join("sample-app"), &ns);
    s.apply(&op);
    s.apply(&ov);

    // An update sent through v1beta1, once the deploy plan is done.
    let v1beta1 = |name: &str, parameters: Value| {
        json!({"apiVersion": "kudo.dev/v1beta1", "kind": "Instance",
            "metadata": {"name": name, "namespace": ns},
            "spec": {"operatorVersion": {"name": "sample-app-0.1.0"}, "parameters": parameters}})
    };
    create(&s, v1beta1("web-2", json!({"CLUSTER_NAME": "green"})));
    s.wait_plan("web-2", "deploy");
    s.patch_raw_as(
        "v1beta1",
        "web-2",
        json!({"spec": {"parameters": {"NODE_COUNT": "4"}}}),
    )
    .expect("the v1beta1 update is admitted");
    // The manager's writes that follow convert the object again (kube-apiserver's field
    // manager keeps v1beta1 managedFields): wait for the plan of the update to be done.
    wait_until("web-2's update is applied", || {
        let i = s.instance("web-2");
        s.applied_values("web-2")["NODE_COUNT"] == 4
            && i["status"]["planStatus"]["deploy"]["status"] == "COMPLETE"
    });

    // A KUDO Instance created through v1beta1, values as strings.
    create(
        &s,
        v1beta1(
            "web-1",
            json!({"CLUSTER_NAME": "blue", "NODE_COUNT": "3", "BACKUP_ENABLED": "true",
                "BACKUP_CREDENTIALS_USERNAME": "backup-user",
                "BACKUP_CREDENTIALS_PASSWORD": "hunter2-hunter2", "PORTS": "[80]"}),
        ),
    );
    s.wait_plan("web-1", "deploy");
    std::thread::sleep(Duration::from_secs(1));

    // A v1beta2 Instance: created, updated, updated in a dry run; then
    // read through v1beta1. (Last: the manager's writes to the others are done.)
    create(
        &s,
        json!({"apiVersion": "kudo.dev/v1beta2", "kind": "Instance",
            "metadata": {"name": "shop-db", "namespace": ns},
            "spec": {"operatorVersion": {"name": "sample-db-0.2.0"}, "parameters": {
                "clusterName": "shop-db", "auth": {"enabled": true},
                "topology": [{"datacenterName": "dc-a", "nodes": 3}]}}}),
    );
    s.wait_plan("shop-db", "deploy");
    s.patch_raw("shop-db", json!({"spec": {"parameters": {"nodeCount": 5}}}))
        .expect("the update is admitted");
    wait_until("shop-db's update is applied", || {
        let i = s.instance("shop-db");
        s.applied_values("shop-db")["nodeCount"] == 5
            && i["status"]["planStatus"]["update"]["status"] == "COMPLETE"
    });
    let api = s.instances("v1beta2");
    s.runtime
        .block_on(api.patch(
            "shop-db",
            &PatchParams::default().dry_run(),
            &Patch::Merge(json!({"spec": {"parameters": {"nodeCount": 6}}})),
        ))
        .expect("the dry run is admitted");

    std::thread::sleep(Duration::from_secs(1));
    s.get(&s.instances("v1beta1"), "shop-db")
        .expect("shop-db read through v1beta1");

    // Each capture holds what its step sent.
    let dir = s.daemons.dir.join("captures").join(&ns);
    let update = std::env::var_os("KUDO_E2E_UPDATE_WIRE").is_some_and(|v| v == "1");
    for class in WIRE {
        let file = dir.join(format!("{class}.json"));
        let text = std::fs::read_to_string(&file)
            .unwrap_or_else(|e| panic!("{}: {e}", file.display()))
            .replace(&ns, "wire");
        let capture: Value = serde_json::from_str(&text).expect("a capture is JSON");
        let request = &capture["request_body"]["request"];
        let name = |o: &Value| {
            o["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        };
        let (want, have) = if class.starts_with("conversion") {
            let want = match *class {
                "conversion-operatorversion-v1beta1-to-v1beta2" => "sample-app-0.1.0",
                "conversion-instance-v1beta1-to-v1beta2" => "web-1",
                _ => "shop-db",
            };
            (want, name(&request["objects"][0]))
        } else {
            let want = if class.ends_with("-sent-as-v1beta1") {
                "web-2"
            } else {
                "shop-db"
            };
            (
                want,
                request["name"].as_str().unwrap_or_default().to_string(),
            )
        };
        assert_eq!(have, want, "{class}: the capture is of another write");
        assert_eq!(capture["response_status"], 200, "{class}");
        match *class {
            "admission-mutate-update" | "admission-validate-update" => {
                assert_eq!(
                    request["object"]["spec"]["parameters"]["nodeCount"], 5,
                    "{class}"
                );
                assert!(request["oldObject"]["spec"]["parameters"]["nodeCount"] != 5);
            }
            c if c.ends_with("-dryrun") => assert_eq!(request["dryRun"], true, "{class}"),
            _ => {}
        }
        let fixture_file = fixture("wire").join(format!("{class}.json"));
        if update {
            std::fs::write(&fixture_file, &text).expect("tests/fixtures/wire is writable");
            continue;
        }
        // The fixture has the shape of what the server sends today.
        let committed: Value = serde_json::from_str(
            &std::fs::read_to_string(&fixture_file)
                .unwrap_or_else(|e| panic!("{}: {e}", fixture_file.display())),
        )
        .expect("a fixture is JSON");
        for part in [
            "/request_body",
            "/request_body/request",
            "/response_body/response",
        ] {
            assert_eq!(
                keys(capture.pointer(part).unwrap_or(&Value::Null)),
                keys(committed.pointer(part).unwrap_or(&Value::Null)),
                "{class}{part}: the API server sends another shape than tests/fixtures/wire \
                 holds (KUDO_E2E_UPDATE_WIRE=1 captures it again)"
            );
        }
    }
}
