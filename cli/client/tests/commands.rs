//! The cluster commands against a mocked API server (`kudo_testkit::mock_api` behind
//! `kube::Client`): each test scripts the server's answers and asserts every request the
//! command sent, its method, path, query and body, and that refused commands send no write.

use kudo_policy::values::Override;
use std::collections::VecDeque;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use kudo_client::commands::wait::{self, Goal, Options, PlanAt, Reading, Stage, StepAt};
use kudo_client::commands::{
    self, Error, Inputs, Target, get, history, install, plan, uninstall, update, upgrade,
};
use kudo_crd::common::ExecStatus;
use kudo_crd::package;
use kudo_diag::Code;
use kudo_pkg::Package;
use serde_json::{Value, json};

// ---------------------------------------------------------------------------------------------
// The mocked API server.

/// An answer of the server, computed from the request body.
type Answer = Box<dyn Fn(&Value) -> (u16, Value) + Send>;

/// One expected exchange: the request the script expects next and the server's answer.
struct Step {
    method: &'static str,
    path: String,
    answer: Answer,
    /// Answer every further request with this step.
    forever: bool,
}

use kudo_testkit::mock_api;

use mock_api::Seen;

const NS: &str = "default";

fn at(kind: &str, name: &str) -> String {
    format!("/apis/kudo.dev/v1beta2/namespaces/{NS}/{kind}/{name}")
}

fn collection(kind: &str) -> String {
    format!("/apis/kudo.dev/v1beta2/namespaces/{NS}/{kind}")
}

fn step(method: &'static str, path: String, status: u16, body: Value) -> Step {
    Step {
        method,
        path,
        answer: Box::new(move |_| (status, body.clone())),
        forever: false,
    }
}

fn ok(method: &'static str, path: String, body: Value) -> Step {
    step(method, path, 200, body)
}

fn status(code: u16, reason: &str) -> Value {
    json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": format!("scripted {reason}"), "reason": reason, "code": code})
}

fn missing(method: &'static str, path: String) -> Step {
    step(method, path, 404, status(404, "NotFound"))
}

/// A POST answered with its own body (as created).
fn created(path: String) -> Step {
    Step {
        method: "POST",
        path,
        answer: Box::new(|body| {
            let mut b = body.clone();
            b["metadata"]["generation"] = json!(1);
            b["metadata"]["resourceVersion"] = json!("1");
            (201, b)
        }),
        forever: false,
    }
}

/// A merge PATCH applied to `object` (with `generation` set), as the API server would.
fn merged(path: String, object: Value, generation: i64) -> Step {
    Step {
        method: "PATCH",
        path,
        answer: Box::new(move |patch| {
            let mut o = object.clone();
            json_patch::merge(&mut o, patch);
            o["metadata"]["generation"] = json!(generation);
            (200, o)
        }),
        forever: false,
    }
}

/// A JSON PATCH applied to `object` (with `generation` set), as the API server would: 422 when
/// one of its `test`s fails.
fn patched(path: String, object: Value, generation: i64) -> Step {
    Step {
        method: "PATCH",
        path,
        answer: Box::new(move |ops| {
            let mut o = object.clone();
            let patch: json_patch::Patch = serde_json::from_value(ops.clone()).unwrap();
            if json_patch::patch(&mut o, &patch).is_err() {
                return (422, test_failed());
            }
            o["metadata"]["generation"] = json!(generation);
            (200, o)
        }),
        forever: false,
    }
}

/// What kube-apiserver answers when a JSON patch's `test` fails.
fn test_failed() -> Value {
    json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": "the server rejected our request due to an error in our request",
        "reason": "Invalid", "code": 422})
}

/// A client whose server follows `script`, and the log of what it received.
/// The scripted server. Discovery (`GET /api/v1`, `GET /apis/GROUP/VERSION`) is answered
/// outside the script and not logged: this cluster serves only RBAC's kinds (so `kudo
/// install` counts every other kind as namespaced).
fn serve(script: Vec<Step>) -> (Target, Arc<Mutex<Vec<Seen>>>) {
    let mut script: VecDeque<Step> = script.into();
    let log: Arc<Mutex<Vec<Seen>>> = Arc::default();
    let seen = log.clone();
    let client = mock_api::answering(NS, move |r| {
        if r.method == "GET" && (r.path == "/api/v1" || r.path.matches('/').count() == 3) {
            return discovery(&r.path);
        }
        seen.lock().unwrap().push(r.clone());
        match script.front() {
            // A path ending in `*` matches by prefix (a name with a random suffix).
            Some(s)
                if s.method == r.method
                    && (s.path == r.path
                        || s.path
                            .strip_suffix('*')
                            .is_some_and(|p| r.path.starts_with(p))) =>
            {
                let a = (s.answer)(&r.body);
                if !s.forever {
                    script.pop_front();
                }
                a
            }
            _ => (500, status(500, "UnexpectedRequest")),
        }
    });
    (Target::new(client, None), log)
}

fn discovery(path: &str) -> (u16, Value) {
    if path != "/apis/rbac.authorization.k8s.io/v1" {
        return (404, status(404, "NotFound"));
    }
    let kinds = [
        ("clusterrolebindings", "ClusterRoleBinding", false),
        ("clusterroles", "ClusterRole", false),
        ("rolebindings", "RoleBinding", true),
        ("roles", "Role", true),
    ];
    (
        200,
        json!({"kind": "APIResourceList", "apiVersion": "v1",
            "groupVersion": "rbac.authorization.k8s.io/v1",
            "resources": kinds.iter().map(|(plural, kind, namespaced)| json!({
                "name": plural, "singularName": "", "namespaced": namespaced, "kind": kind,
                "verbs": ["create", "delete", "get", "list", "patch", "update", "watch"]}))
                .collect::<Vec<_>>()}),
    )
}

const SERVICE_ACCOUNTS: &str = "/api/v1/namespaces/default/serviceaccounts";
const ROLE_BINDINGS: &str = "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings";
const CLUSTER_ROLE_BINDINGS: &str = "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings";

/// `kudo install`'s ServiceAccount and RoleBinding to `admin`: a dry run of each, then each
/// created.
fn granted() -> Vec<Step> {
    [
        SERVICE_ACCOUNTS,
        ROLE_BINDINGS,
        SERVICE_ACCOUNTS,
        ROLE_BINDINGS,
    ]
    .into_iter()
    .map(|p| created(p.to_string()))
    .collect()
}

fn granted_pairs() -> Vec<(&'static str, String)> {
    [
        SERVICE_ACCOUNTS,
        ROLE_BINDINGS,
        SERVICE_ACCOUNTS,
        ROLE_BINDINGS,
    ]
    .into_iter()
    .map(|p| ("POST", p.to_string()))
    .collect()
}

fn requests(seen: &Arc<Mutex<Vec<Seen>>>) -> Vec<(String, String)> {
    seen.lock()
        .unwrap()
        .iter()
        .map(|s| (s.method.clone(), s.path.clone()))
        .collect()
}

fn pairs(list: &[(&str, String)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(m, p)| (m.to_string(), p.clone()))
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Fixtures.

fn load(rel: &str) -> Package {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(rel);
    Package::load(&dir).unwrap()
}

fn cassandra() -> Package {
    load("examples/cassandra-v1beta2")
}

fn json_of<T: serde::Serialize>(t: &T) -> Value {
    serde_json::to_value(t).unwrap()
}

/// The OperatorVersion of `pkg`, as the API server returns it.
fn ov_of(pkg: &Package) -> Value {
    let mut ov = json_of(&package::objects(pkg, NS).1);
    ov["metadata"]["resourceVersion"] = json!("5");
    ov
}

/// An Instance of OperatorVersion `ov` with `parameters`, at `resource_version`.
fn instance(name: &str, ov: &str, parameters: Value, resource_version: &str) -> Value {
    json!({"apiVersion": "kudo.dev/v1beta2", "kind": "Instance",
        "metadata": {"name": name, "namespace": NS, "resourceVersion": resource_version, "generation": 1},
        "spec": {"operatorVersion": {"name": ov}, "parameters": parameters}})
}

fn with_status(mut inst: Value, status: Value) -> Value {
    inst["status"] = status;
    inst
}

fn args(list: &[&str]) -> Vec<Override> {
    Override::parse_all(list).expect("well-formed -p arguments")
}

fn codes(e: &Error) -> Vec<Code> {
    match e {
        Error::Parameters(d) => d.iter().map(|d| d.code).collect(),
        other => panic!("expected parameter errors, got {other}"),
    }
}

fn fast() -> Options {
    Options {
        timeout: Duration::from_secs(5),
        interval: Duration::from_millis(1),
    }
}

/// What a wait's watcher was shown, reading after reading: each stage with the Instance it
/// names; and the times, which never go back.
#[derive(Default)]
struct Watched {
    stages: Vec<(String, Stage)>,
    times: Vec<Duration>,
}

impl Watched {
    fn watch(&mut self, r: &Reading<'_>) {
        self.stages.push((r.instance.to_string(), r.stage.clone()));
        self.times.push(r.elapsed);
    }

    /// The stages shown, for Instance `c`.
    fn of_c(&self) -> Vec<Stage> {
        assert!(self.times.is_sorted(), "{:?}", self.times);
        self.stages
            .iter()
            .map(|(instance, stage)| {
                assert_eq!(instance, "c");
                stage.clone()
            })
            .collect()
    }
}

/// Plan deploy of [`deploy_status`] with its step node (phase nodes) at `step`.
fn deploy_at(plan: ExecStatus, step: Option<(ExecStatus, Option<&str>)>) -> PlanAt {
    PlanAt {
        plan: "deploy".into(),
        status: plan,
        message: None,
        step: step.map(|(status, message)| StepAt {
            phase: "nodes".into(),
            name: Some("node".into()),
            status,
            message: message.map(str::to_string),
        }),
    }
}

// ---------------------------------------------------------------------------------------------
// install

#[tokio::test]
async fn install_creates_the_operator_the_operator_version_and_an_instance_holding_only_the_given_values()
 {
    let pkg = cassandra();
    let (operator, ov) = package::objects(&pkg, NS);
    let mut script = vec![
        missing("GET", at("instances", "cassandra-instance")),
        missing("GET", at("operators", "cassandra")),
        missing("GET", at("operatorversions", "cassandra-3.11.6-2.0.0")),
        // KUDO's older name of the same version: none either.
        missing("GET", at("operatorversions", "cassandra-2.0.0")),
    ];
    script.extend(granted());
    script.extend([
        created(collection("operators")),
        created(collection("operatorversions")),
        created(collection("instances")),
    ]);
    let (t, seen) = serve(script);
    let overrides = args(&["nodeCount=5", "topology/0/datacenterName=DC1"]);
    let req = install::Request {
        dependencies: None,
        package: &pkg,
        instance: None,
        inputs: Inputs {
            files: &[],
            overrides: &overrides,
            resets: &[],
            edits: &[],
        },
        dry_run: false,
        service_account: None,
        create_namespace: false,
        images: None,
    };
    let done = install::install(&t, &req).await.unwrap();
    assert!(done.created_operator && done.created_operator_version);
    assert_eq!(done.instance.metadata.generation, Some(1));
    let mut want = vec![
        ("GET", at("instances", "cassandra-instance")),
        ("GET", at("operators", "cassandra")),
        ("GET", at("operatorversions", "cassandra-3.11.6-2.0.0")),
        ("GET", at("operatorversions", "cassandra-2.0.0")),
    ];
    want.extend(granted_pairs());
    want.extend([
        ("POST", collection("operators")),
        ("POST", collection("operatorversions")),
        ("POST", collection("instances")),
    ]);
    assert_eq!(requests(&seen), pairs(&want));
    let seen = seen.lock().unwrap().clone();
    for (i, s) in seen[4..].iter().enumerate() {
        assert_eq!(s.method, "POST");
        let dry_run = if i < 2 { "dryRun=All&" } else { "" };
        assert_eq!(s.query, format!("{dry_run}fieldManager=kudo"));
        assert_eq!(s.content_type, "application/json");
    }
    // The ServiceAccount the manager acts as, bound to `admin` in the namespace only.
    assert_eq!(
        seen[6].body,
        json!({"apiVersion": "v1", "kind": "ServiceAccount",
            "metadata": {"name": "kudo-instance", "namespace": NS,
                "labels": {"app.kubernetes.io/managed-by": "kudo"}}})
    );
    assert_eq!(seen[7].body["roleRef"]["name"], "admin");
    assert_eq!(seen[7].body["metadata"]["namespace"], NS);
    assert_eq!(seen[8].body, json_of(&operator));
    assert_eq!(seen[9].body, json_of(&ov));
    // The defaults stay in the OperatorVersion: the Instance holds what was given.
    let topology = done.change.values.value()["topology"].clone();
    assert_eq!(topology[0]["datacenterName"], json!("DC1"));
    assert_eq!(
        seen[10].body,
        json!({"apiVersion": "kudo.dev/v1beta2", "kind": "Instance",
            "metadata": {"name": "cassandra-instance", "namespace": NS,
                "labels": {"kudo.dev/operator": "cassandra"}},
            "spec": {"operatorVersion": {"name": "cassandra-3.11.6-2.0.0"},
                "parameters": {"nodeCount": 5, "topology": topology},
                "serviceAccountName": "kudo-instance"}})
    );
}

/// What a command was given and did may be logged with `{:?}`: a `writeOnly` value never
/// shows, its pointer does.
/// An [`ImageGate`](kudo_client::commands::ImageGate) that answers `answer` and keeps the
/// images' values it was asked about.
#[derive(Debug)]
struct FixedGate {
    answer: Result<Option<String>, String>,
    asked: Mutex<Vec<Value>>,
}

impl kudo_client::commands::ImageGate for FixedGate {
    fn check(
        &self,
        _pkg: &Package,
        values: &Value,
        _instance: &str,
        _namespace: &str,
    ) -> Result<Option<String>, String> {
        self.asked.lock().unwrap().push(values.clone());
        self.answer.clone()
    }
}

/// The image gate is asked with the change's effective values before anything is written: a
/// refusal writes nothing at all; an answer rides on the Instance as `kudo.dev/images`.
#[tokio::test]
async fn install_asks_the_image_gate_before_writing_and_writes_nothing_when_refused() {
    let pkg = cassandra();
    let overrides = args(&["nodeCount=5"]);
    let request = |gate: &'static FixedGate| install::Request {
        dependencies: None,
        package: &pkg,
        instance: None,
        inputs: Inputs {
            files: &[],
            overrides: &overrides,
            resets: &[],
            edits: &[],
        },
        dry_run: false,
        service_account: None,
        create_namespace: false,
        images: Some(gate),
    };
    // refused: only the Instance's absence was read
    let refusing: &'static FixedGate = Box::leak(Box::new(FixedGate {
        answer: Err("busybox (sha256:00): not signed by a trusted key".into()),
        asked: Mutex::new(Vec::new()),
    }));
    let (t, seen) = serve(vec![missing("GET", at("instances", "cassandra-instance"))]);
    let e = install::install(&t, &request(refusing)).await.unwrap_err();
    assert!(
        e.to_string().contains("refused (nothing was written)")
            && e.to_string().contains("busybox"),
        "{e}"
    );
    assert_eq!(
        requests(&seen),
        pairs(&[("GET", at("instances", "cassandra-instance"))])
    );
    assert_eq!(refusing.asked.lock().unwrap()[0]["nodeCount"], 5);
    // accepted: the annotation is on the Instance created
    let annotation =
        r#"{"busybox":{"digest":"sha256:00","pinned":"docker.io/library/busybox@sha256:00"}}"#;
    let accepting: &'static FixedGate = Box::leak(Box::new(FixedGate {
        answer: Ok(Some(annotation.into())),
        asked: Mutex::new(Vec::new()),
    }));
    let mut script = vec![
        missing("GET", at("instances", "cassandra-instance")),
        missing("GET", at("operators", "cassandra")),
        missing("GET", at("operatorversions", "cassandra-3.11.6-2.0.0")),
        missing("GET", at("operatorversions", "cassandra-2.0.0")),
    ];
    script.extend(granted());
    script.extend([
        created(collection("operators")),
        created(collection("operatorversions")),
        created(collection("instances")),
    ]);
    let (t, seen) = serve(script);
    install::install(&t, &request(accepting)).await.unwrap();
    let seen = seen.lock().unwrap().clone();
    let instance = seen
        .iter()
        .find(|s| s.method == "POST" && s.path.ends_with("/instances"))
        .expect("the Instance created");
    assert_eq!(
        instance.body["metadata"]["annotations"]["kudo.dev/images"],
        annotation
    );
}

#[tokio::test]
async fn debug_of_a_request_and_of_what_it_did_never_shows_a_secret() {
    let pkg = cassandra();
    let mut script = vec![
        missing("GET", at("instances", "cassandra-instance")),
        missing("GET", at("operators", "cassandra")),
        missing("GET", at("operatorversions", "cassandra-3.11.6-2.0.0")),
        // KUDO's older name of the same version: none either.
        missing("GET", at("operatorversions", "cassandra-2.0.0")),
    ];
    script.extend(granted());
    script.extend([
        created(collection("operators")),
        created(collection("operatorversions")),
        created(format!("/api/v1/namespaces/{NS}/secrets")),
        created(collection("instances")),
        ok(
            "PATCH",
            format!("/api/v1/namespaces/{NS}/secrets/cassandra-instance-params-*"),
            json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}}),
        ),
    ]);
    let (t, seen) = serve(script);
    let secret = "s3cret-Value-123";
    let overrides = args(&[&format!("backup/credentials/password={secret}")]);
    let req = install::Request {
        dependencies: None,
        package: &pkg,
        instance: None,
        inputs: Inputs {
            files: &[],
            overrides: &overrides,
            resets: &[],
            edits: &[],
        },
        dry_run: false,
        service_account: None,
        create_namespace: false,
        images: None,
    };
    let done = install::install(&t, &req).await.unwrap();
    for shown in [format!("{req:?}"), format!("{done:?}")] {
        assert!(!shown.contains(secret), "a secret in Debug: {shown}");
    }
    assert!(format!("{req:?}").contains("backup/credentials/password"));
    // The value went to a Secret the Instance names, never into the Instance.
    let seen = seen.lock().unwrap();
    let body = |path: &str| {
        seen.iter()
            .find(|r| r.method == "POST" && r.path.ends_with(path))
            .map(|r| r.body.clone())
            .unwrap_or_else(|| panic!("a POST to {path}"))
    };
    let inst = body("/instances");
    assert!(!inst.to_string().contains(secret), "{inst}");
    let named = inst["spec"]["parametersFrom"][0]["secretRef"]["name"].clone();
    let held = body("/secrets");
    assert_eq!(held["metadata"]["name"], named);
    assert_eq!(held["immutable"], true);
    let data = held["data"]["parameters.yaml"].as_str().unwrap();
    let text = base64::Engine::decode(&base64::engine::general_purpose::STANDARD, data).unwrap();
    assert!(String::from_utf8(text).unwrap().contains(secret));
}

#[tokio::test]
async fn concurrent_installs_of_one_package_share_the_operator_version_another_created() {
    let pkg = cassandra();
    let (operator, ov) = package::objects(&pkg, NS);
    let (t, seen) = serve(vec![
        missing("GET", at("instances", "second")),
        ok("GET", at("operators", "cassandra"), json_of(&operator)),
        missing("GET", at("operatorversions", "cassandra-3.11.6-2.0.0")),
        // KUDO's older name of the same version: none either.
        missing("GET", at("operatorversions", "cassandra-2.0.0")),
        // The ServiceAccount and its RoleBinding exist already (the first install's).
        step(
            "POST",
            SERVICE_ACCOUNTS.into(),
            409,
            status(409, "AlreadyExists"),
        ),
        step(
            "POST",
            ROLE_BINDINGS.into(),
            409,
            status(409, "AlreadyExists"),
        ),
        // Another install created it between the read and this create.
        step(
            "POST",
            collection("operatorversions"),
            409,
            status(409, "AlreadyExists"),
        ),
        ok(
            "GET",
            at("operatorversions", "cassandra-3.11.6-2.0.0"),
            json_of(&ov),
        ),
        created(collection("instances")),
    ]);
    let req = install::Request {
        dependencies: None,
        package: &pkg,
        instance: Some("second"),
        inputs: Inputs::default(),
        dry_run: false,
        service_account: None,
        create_namespace: false,
        images: None,
    };
    let done = install::install(&t, &req).await.unwrap();
    assert_eq!(done.instance.metadata.name.as_deref(), Some("second"));
    assert_eq!(requests(&seen).len(), 9);
}

#[tokio::test]
async fn install_with_invalid_parameters_sends_no_request() {
    let pkg = cassandra();
    let (t, seen) = serve(vec![]);
    let overrides = args(&["nodeCount=0", "logLevel=LOUD"]);
    let req = install::Request {
        dependencies: None,
        package: &pkg,
        instance: Some("c"),
        inputs: Inputs {
            files: &[],
            overrides: &overrides,
            resets: &[],
            edits: &[],
        },
        dry_run: false,
        service_account: None,
        create_namespace: false,
        images: None,
    };
    let err = install::install(&t, &req).await.unwrap_err();
    let mut got = codes(&err);
    got.sort_by_key(|c| c.as_str());
    assert_eq!(got.len(), 2, "{got:?}");
    assert!(got.contains(&Code::OutOfRange), "{got:?}");
    assert!(seen.lock().unwrap().is_empty());
}

#[tokio::test]
async fn install_refuses_an_existing_instance_and_writes_nothing() {
    let pkg = cassandra();
    let (t, seen) = serve(vec![ok(
        "GET",
        at("instances", "c"),
        instance("c", "cassandra-3.11.6-2.0.0", json!({}), "7"),
    )]);
    let req = install::Request {
        dependencies: None,
        package: &pkg,
        instance: Some("c"),
        inputs: Inputs::default(),
        dry_run: false,
        service_account: None,
        create_namespace: false,
        images: None,
    };
    let err = install::install(&t, &req).await.unwrap_err();
    assert!(
        matches!(&err, Error::InstanceExists { name, .. } if name == "c"),
        "{err}"
    );
    assert_eq!(requests(&seen), pairs(&[("GET", at("instances", "c"))]));
}

#[tokio::test]
async fn install_refuses_an_operator_version_that_exists_with_another_spec() {
    let pkg = cassandra();
    let mut other = ov_of(&pkg);
    other["spec"]["templates"]["service.yaml"] = json!("kind: Service\n");
    let (t, seen) = serve(vec![
        missing("GET", at("instances", "c")),
        ok(
            "GET",
            at("operators", "cassandra"),
            json_of(&package::objects(&pkg, NS).0),
        ),
        ok(
            "GET",
            at("operatorversions", "cassandra-3.11.6-2.0.0"),
            other,
        ),
    ]);
    let req = install::Request {
        dependencies: None,
        package: &pkg,
        instance: Some("c"),
        inputs: Inputs::default(),
        dry_run: false,
        service_account: None,
        create_namespace: false,
        images: None,
    };
    let err = install::install(&t, &req).await.unwrap_err();
    match &err {
        Error::OperatorVersionDiffers { name, fields, .. } => {
            assert_eq!(name, "cassandra-3.11.6-2.0.0");
            assert_eq!(fields, &["spec.templates"]);
        }
        other => panic!("{other}"),
    }
    assert!(requests(&seen).iter().all(|(m, _)| m == "GET"));
}

#[tokio::test]
async fn install_next_to_the_same_operator_version_creates_only_the_instance() {
    let pkg = cassandra();
    let (t, seen) = serve(vec![
        missing("GET", at("instances", "c")),
        ok(
            "GET",
            at("operators", "cassandra"),
            json_of(&package::objects(&pkg, NS).0),
        ),
        ok(
            "GET",
            at("operatorversions", "cassandra-3.11.6-2.0.0"),
            ov_of(&pkg),
        ),
        step(
            "POST",
            SERVICE_ACCOUNTS.into(),
            409,
            status(409, "AlreadyExists"),
        ),
        step(
            "POST",
            ROLE_BINDINGS.into(),
            409,
            status(409, "AlreadyExists"),
        ),
        created(collection("instances")),
    ]);
    let req = install::Request {
        dependencies: None,
        package: &pkg,
        instance: Some("c"),
        inputs: Inputs::default(),
        dry_run: false,
        service_account: None,
        create_namespace: false,
        images: None,
    };
    let done = install::install(&t, &req).await.unwrap();
    assert!(!done.created_operator && !done.created_operator_version);
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.last().unwrap().path, collection("instances"));
    // No value given: no spec.parameters at all (the defaults live in the OperatorVersion).
    assert_eq!(
        seen.last().unwrap().body["spec"],
        json!({"operatorVersion": {"name": "cassandra-3.11.6-2.0.0"}, "serviceAccountName": "kudo-instance"})
    );
}

/// The same version installed under KUDO's older name (`cassandra-2.0.0`, by KUDO before
/// 0.16 or an older kudo) is the OperatorVersion the Instance runs: no second one is created.
#[tokio::test]
async fn install_next_to_the_same_version_under_its_older_name_reuses_it() {
    let pkg = cassandra();
    let mut older = ov_of(&pkg);
    older["metadata"]["name"] = json!("cassandra-2.0.0");
    let (t, seen) = serve(vec![
        missing("GET", at("instances", "c")),
        ok(
            "GET",
            at("operators", "cassandra"),
            json_of(&package::objects(&pkg, NS).0),
        ),
        missing("GET", at("operatorversions", "cassandra-3.11.6-2.0.0")),
        ok("GET", at("operatorversions", "cassandra-2.0.0"), older),
        step(
            "POST",
            SERVICE_ACCOUNTS.into(),
            409,
            status(409, "AlreadyExists"),
        ),
        step(
            "POST",
            ROLE_BINDINGS.into(),
            409,
            status(409, "AlreadyExists"),
        ),
        created(collection("instances")),
    ]);
    let req = install::Request {
        dependencies: None,
        package: &pkg,
        instance: Some("c"),
        inputs: Inputs::default(),
        dry_run: false,
        service_account: None,
        create_namespace: false,
        images: None,
    };
    let done = install::install(&t, &req).await.unwrap();
    assert!(!done.created_operator_version);
    let seen = seen.lock().unwrap().clone();
    assert!(
        !seen
            .iter()
            .any(|s| s.method == "POST" && s.path == collection("operatorversions"))
    );
    assert_eq!(
        seen.last().unwrap().body["spec"]["operatorVersion"],
        json!({"name": "cassandra-2.0.0"})
    );
}

fn escalate() -> Package {
    load("tests/fixtures/e2e/escalate")
}

/// A package with a cluster-scoped object needs a ClusterRoleBinding to `cluster-admin`, which
/// a tenant may not create: refused in the dry run, nothing written, the object named.
#[tokio::test]
async fn install_of_a_cluster_scoped_package_by_a_tenant_is_refused_before_any_write() {
    let pkg = escalate();
    let forbidden = json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "reason": "Forbidden", "code": 403,
        "message": "clusterrolebindings.rbac.authorization.k8s.io is forbidden: User \"system:serviceaccount:default:tenant\" cannot create resource \"clusterrolebindings\" in API group \"rbac.authorization.k8s.io\" at the cluster scope"});
    let (t, seen) = serve(vec![
        missing("GET", at("instances", "x")),
        missing("GET", at("operators", "e2e-escalate")),
        missing("GET", at("operatorversions", "e2e-escalate-0.1.0")),
        created(SERVICE_ACCOUNTS.into()),
        created(ROLE_BINDINGS.into()),
        step("POST", CLUSTER_ROLE_BINDINGS.into(), 403, forbidden),
    ]);
    let req = install::Request {
        dependencies: None,
        package: &pkg,
        instance: Some("x"),
        inputs: Inputs::default(),
        dry_run: false,
        service_account: None,
        create_namespace: false,
        images: None,
    };
    let err = install::install(&t, &req).await.unwrap_err();
    let Error::Grant {
        service_account,
        object,
        why,
        message,
    } = &err
    else {
        panic!("{err}");
    };
    assert_eq!(service_account, "default/kudo-instance");
    assert_eq!(object, "ClusterRoleBinding kudo:default:kudo-instance");
    assert_eq!(
        why,
        "to cluster-admin, for the cluster-scoped ClusterRoleBinding default-x-escalate"
    );
    assert_eq!(
        message,
        "you (system:serviceaccount:default:tenant) may not create \
         clusterrolebindings.rbac.authorization.k8s.io cluster-wide: ask for the verb create on \
         clusterrolebindings.rbac.authorization.k8s.io (a ClusterRole)"
    );
    let seen = seen.lock().unwrap().clone();
    let writes: Vec<&Seen> = seen.iter().filter(|s| s.method != "GET").collect();
    assert_eq!(writes.len(), 3);
    assert!(
        writes.iter().all(|s| s.query.starts_with("dryRun=All")),
        "{writes:?}"
    );
}

/// When the Instance cannot be created after the ServiceAccount and its bindings were, they
/// are removed again: nothing half-done stays.
#[tokio::test]
async fn install_removes_the_bindings_it_made_when_the_instance_is_refused() {
    let pkg = escalate();
    let mut script = vec![
        missing("GET", at("instances", "x")),
        missing("GET", at("operators", "e2e-escalate")),
        missing("GET", at("operatorversions", "e2e-escalate-0.1.0")),
    ];
    for _ in 0..2 {
        script.extend([
            created(SERVICE_ACCOUNTS.into()),
            created(ROLE_BINDINGS.into()),
            created(CLUSTER_ROLE_BINDINGS.into()),
        ]);
    }
    let deletes = [
        format!("{CLUSTER_ROLE_BINDINGS}/kudo:default:kudo-instance"),
        format!("{ROLE_BINDINGS}/kudo-instance-admin"),
        format!("{SERVICE_ACCOUNTS}/kudo-instance"),
    ];
    script.extend([
        created(collection("operators")),
        created(collection("operatorversions")),
        step(
            "POST",
            collection("instances"),
            400,
            status(400, "BadRequest"),
        ),
    ]);
    script.extend(deletes.iter().map(|d| ok("DELETE", d.clone(), json!({}))));
    let (t, seen) = serve(script);
    let req = install::Request {
        dependencies: None,
        package: &pkg,
        instance: Some("x"),
        inputs: Inputs::default(),
        dry_run: false,
        service_account: None,
        create_namespace: false,
        images: None,
    };
    let err = install::install(&t, &req).await.unwrap_err();
    assert!(
        matches!(
            err,
            Error::Api {
                kind: "Instance",
                ..
            }
        ),
        "{err}"
    );
    let seen = seen.lock().unwrap().clone();
    let cluster_binding = &seen[8];
    assert_eq!(cluster_binding.query, "fieldManager=kudo");
    assert_eq!(cluster_binding.body["roleRef"]["name"], "cluster-admin");
    let deleted: Vec<String> = seen
        .iter()
        .filter(|s| s.method == "DELETE")
        .map(|s| s.path.clone())
        .collect();
    assert_eq!(deleted, deletes);
}

// ---------------------------------------------------------------------------------------------
// update

fn update_req<'a>(name: &'a str, overrides: &'a [Override], dry_run: bool) -> update::Request<'a> {
    update::Request {
        instance: name,
        inputs: Inputs {
            files: &[],
            overrides,
            resets: &[],
            edits: &[],
        },
        dry_run,
        force: false,
        ignore_window: false,
        remediation: None,
        images: None,
    }
}

#[tokio::test]
async fn update_sends_only_its_change_guarded_by_what_it_read_so_other_writers_stay() {
    let pkg = cassandra();
    let read = instance("c", "cassandra-2.0.0", json!({"nodeCount": 3}), "10");
    // Meanwhile another client changed logLevel and the manager wrote status: no conflict.
    let now = instance(
        "c",
        "cassandra-2.0.0",
        json!({"nodeCount": 3, "logLevel": "DEBUG"}),
        "12",
    );
    let (t, seen) = serve(vec![
        ok("GET", at("instances", "c"), read),
        ok(
            "GET",
            at("operatorversions", "cassandra-2.0.0"),
            ov_of(&pkg),
        ),
        patched(at("instances", "c"), now, 3),
    ]);
    let overrides = args(&["nodeCount=5"]);
    let done = update::update(&t, &update_req("c", &overrides, false))
        .await
        .unwrap();
    assert_eq!((done.attempts, done.generation), (1, Some(3)));
    assert_eq!(done.change.plan.as_deref(), Some("update"));
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen[2].content_type, "application/json-patch+json");
    assert_eq!(seen[2].query, "fieldManager=kudo");
    assert_eq!(
        seen[2].body,
        json!([{"op": "test", "path": "/spec/parameters/nodeCount", "value": 3},
            {"op": "replace", "path": "/spec/parameters/nodeCount", "value": 5}])
    );
}

#[tokio::test]
async fn update_of_a_value_another_writer_changed_reads_again_and_the_last_writer_wins() {
    let pkg = cassandra();
    let first = instance("c", "cassandra-2.0.0", json!({"nodeCount": 3}), "10");
    // Meanwhile another client set nodeCount to 4: this update's test of 3 fails.
    let fresh = instance("c", "cassandra-2.0.0", json!({"nodeCount": 4}), "11");
    let (t, seen) = serve(vec![
        ok("GET", at("instances", "c"), first),
        ok(
            "GET",
            at("operatorversions", "cassandra-2.0.0"),
            ov_of(&pkg),
        ),
        patched(at("instances", "c"), fresh.clone(), 3),
        ok("GET", at("instances", "c"), fresh.clone()),
        patched(at("instances", "c"), fresh, 4),
    ]);
    let overrides = args(&["nodeCount=5"]);
    let done = update::update(&t, &update_req("c", &overrides, false))
        .await
        .unwrap();
    assert_eq!((done.attempts, done.generation), (2, Some(4)));
    let seen = seen.lock().unwrap().clone();
    assert_eq!(
        seen.iter()
            .map(|s| (s.method.clone(), s.path.clone()))
            .collect::<Vec<_>>(),
        pairs(&[
            ("GET", at("instances", "c")),
            ("GET", at("operatorversions", "cassandra-2.0.0")),
            ("PATCH", at("instances", "c")),
            ("GET", at("instances", "c")),
            ("PATCH", at("instances", "c")),
        ])
    );
    assert_eq!(
        seen[4].body,
        json!([{"op": "test", "path": "/spec/parameters/nodeCount", "value": 4},
            {"op": "replace", "path": "/spec/parameters/nodeCount", "value": 5}])
    );
}

#[tokio::test]
async fn update_of_an_instance_without_parameters_holds_its_resource_version() {
    let pkg = cassandra();
    let mut bare = instance("c", "cassandra-2.0.0", json!({}), "10");
    bare["spec"].as_object_mut().unwrap().remove("parameters");
    let (t, seen) = serve(vec![
        ok("GET", at("instances", "c"), bare.clone()),
        ok(
            "GET",
            at("operatorversions", "cassandra-2.0.0"),
            ov_of(&pkg),
        ),
        merged(at("instances", "c"), bare, 2),
    ]);
    let overrides = args(&["nodeCount=5"]);
    update::update(&t, &update_req("c", &overrides, false))
        .await
        .unwrap();
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen[2].content_type, "application/merge-patch+json");
    assert_eq!(
        seen[2].body,
        json!({"metadata": {"resourceVersion": "10"}, "spec": {"parameters": {"nodeCount": 5}}})
    );
}

#[tokio::test]
async fn update_gives_up_after_being_overtaken_on_every_attempt() {
    let pkg = cassandra();
    let inst = instance("c", "cassandra-2.0.0", json!({"nodeCount": 3}), "10");
    let mut script = vec![
        ok("GET", at("instances", "c"), inst.clone()),
        ok(
            "GET",
            at("operatorversions", "cassandra-2.0.0"),
            ov_of(&pkg),
        ),
    ];
    for i in 0..commands::MAX_ATTEMPTS {
        if i > 0 {
            script.push(ok("GET", at("instances", "c"), inst.clone()));
        }
        script.push(step("PATCH", at("instances", "c"), 422, test_failed()));
    }
    let (t, seen) = serve(script);
    let overrides = args(&["nodeCount=5"]);
    let err = update::update(&t, &update_req("c", &overrides, false))
        .await
        .unwrap_err();
    assert!(
        matches!(err, Error::Conflict { attempts, .. } if attempts == commands::MAX_ATTEMPTS),
        "{err}"
    );
    let patches = seen
        .lock()
        .unwrap()
        .iter()
        .filter(|s| s.method == "PATCH")
        .count();
    assert_eq!(patches, commands::MAX_ATTEMPTS);
}

#[tokio::test]
async fn update_of_an_immutable_parameter_is_refused_without_a_write() {
    let pkg = cassandra();
    let (t, seen) = serve(vec![
        ok(
            "GET",
            at("instances", "c"),
            instance("c", "cassandra-2.0.0", json!({}), "10"),
        ),
        ok(
            "GET",
            at("operatorversions", "cassandra-2.0.0"),
            ov_of(&pkg),
        ),
    ]);
    let overrides = args(&["clusterName=other"]);
    let err = update::update(&t, &update_req("c", &overrides, false))
        .await
        .unwrap_err();
    assert_eq!(codes(&err), [Code::ImmutableChanged]);
    assert!(requests(&seen).iter().all(|(m, _)| m == "GET"));
}

#[tokio::test]
async fn update_whose_changes_run_two_plans_is_refused_without_a_write() {
    let pkg = cassandra();
    let (t, seen) = serve(vec![
        ok(
            "GET",
            at("instances", "c"),
            instance("c", "cassandra-2.0.0", json!({}), "10"),
        ),
        ok(
            "GET",
            at("operatorversions", "cassandra-2.0.0"),
            ov_of(&pkg),
        ),
    ]);
    let overrides = args(&["nodeCount=5", "backup/enabled=true"]);
    let err = update::update(&t, &update_req("c", &overrides, false))
        .await
        .unwrap_err();
    assert_eq!(codes(&err), [Code::TriggerConflict]);
    assert_eq!(requests(&seen).len(), 2);
    assert!(requests(&seen).iter().all(|(m, _)| m == "GET"));
}

#[tokio::test]
async fn update_dry_run_reports_the_plan_and_the_changed_paths_and_sends_nothing() {
    let pkg = cassandra();
    let (t, seen) = serve(vec![
        ok(
            "GET",
            at("instances", "c"),
            instance(
                "c",
                "cassandra-2.0.0",
                json!({"backup": {"enabled": false}}),
                "10",
            ),
        ),
        ok(
            "GET",
            at("operatorversions", "cassandra-2.0.0"),
            ov_of(&pkg),
        ),
    ]);
    let overrides = args(&["backup/enabled=true", "backup/schedule=0 3 * * *"]);
    let done = update::update(&t, &update_req("c", &overrides, true))
        .await
        .unwrap();
    assert_eq!(done.change.plan.as_deref(), Some("backup-update"));
    let changed: Vec<&str> = done
        .change
        .changes
        .iter()
        .map(|c| c.pointer.as_str())
        .collect();
    assert_eq!(changed, ["/backup/enabled", "/backup/schedule"]);
    assert_eq!(
        done.patch,
        Some(json!([
            {"op": "test", "path": "/spec/parameters/backup/enabled", "value": false},
            {"op": "replace", "path": "/spec/parameters/backup/enabled", "value": true},
            {"op": "add", "path": "/spec/parameters/backup/schedule", "value": "0 3 * * *"}]))
    );
    assert_eq!(done.generation, None);
    assert!(requests(&seen).iter().all(|(m, _)| m == "GET"));
}

// ---------------------------------------------------------------------------------------------
// upgrade

#[tokio::test]
async fn upgrade_moves_values_by_old_name_creates_the_new_operator_version_and_patches_the_instance()
 {
    let v1 = load("tests/fixtures/kep33/v1");
    let v2 = load("tests/fixtures/kep33/v2");
    let installed = json!({"CLUSTER_NAME": "prod", "BACKUP_ENABLED": true,
        "BACKUP_CREDENTIALS_USERNAME": "admin", "BACKUP_CREDENTIALS_PASSWORD": "s3cret"});
    let inst = instance("mine", "my-operator-0.1.0", installed, "20");
    let (t, seen) = serve(vec![
        ok("GET", at("instances", "mine"), inst.clone()),
        ok(
            "GET",
            at("operatorversions", "my-operator-0.1.0"),
            ov_of(&v1),
        ),
        missing("GET", at("operatorversions", "my-operator-0.2.0")),
        // The Instance's ServiceAccount and RoleBinding, there since its install.
        step(
            "POST",
            SERVICE_ACCOUNTS.into(),
            409,
            status(409, "AlreadyExists"),
        ),
        step(
            "POST",
            ROLE_BINDINGS.into(),
            409,
            status(409, "AlreadyExists"),
        ),
        created(collection("operatorversions")),
        merged(at("instances", "mine"), inst, 2),
    ]);
    let req = upgrade::Request {
        dependencies: None,
        instance: "mine",
        package: &v2,
        inputs: Inputs::default(),
        dry_run: false,
        force: false,
        ignore_window: false,
        remediation: None,
        allow: &Default::default(),
        images: None,
    };
    let done = upgrade::upgrade(&t, &req).await.unwrap();
    assert_eq!(
        (done.from.as_str(), done.to.as_str()),
        ("my-operator-0.1.0", "my-operator-0.2.0")
    );
    assert!(done.created_operator_version);
    assert_eq!(done.generation, Some(2));
    let report = done.change.report.as_ref().unwrap();
    let moved: Vec<(&str, &str)> = report
        .moved
        .iter()
        .map(|m| (m.from.as_str(), m.to.as_str()))
        .collect();
    assert!(
        moved.contains(&("/CLUSTER_NAME", "/clusterName")),
        "{moved:?}"
    );
    assert!(report.dropped.is_empty(), "{report:?}");
    let seen = seen.lock().unwrap().clone();
    assert_eq!(
        seen.iter()
            .map(|s| (s.method.clone(), s.path.clone()))
            .collect::<Vec<_>>(),
        pairs(&[
            ("GET", at("instances", "mine")),
            ("GET", at("operatorversions", "my-operator-0.1.0")),
            ("GET", at("operatorversions", "my-operator-0.2.0")),
            ("POST", SERVICE_ACCOUNTS.into()),
            ("POST", ROLE_BINDINGS.into()),
            ("POST", collection("operatorversions")),
            ("PATCH", at("instances", "mine")),
        ])
    );
    assert!(seen[3].query.starts_with("dryRun=All"));
    assert_eq!(seen[5].body, json_of(&package::objects(&v2, NS).1));
    assert_eq!(seen[6].content_type, "application/merge-patch+json");
    assert_eq!(
        seen[6].body,
        json!({"metadata": {"resourceVersion": "20"},
            "spec": {"operatorVersion": {"name": "my-operator-0.2.0"},
                "parameters": {
                    "CLUSTER_NAME": null, "BACKUP_ENABLED": null,
                    "BACKUP_CREDENTIALS_USERNAME": null, "BACKUP_CREDENTIALS_PASSWORD": null,
                    "clusterName": "prod",
                    "backup": {"enabled": true, "credentials": {"name": "admin", "password": "s3cret"}}}}})
    );
}

#[tokio::test]
async fn upgrade_after_a_conflict_migrates_the_fresh_instance_and_creates_the_operator_version_once()
 {
    let v1 = load("tests/fixtures/kep33/v1");
    let v2 = load("tests/fixtures/kep33/v2");
    let values = json!({"CLUSTER_NAME": "prod", "BACKUP_ENABLED": true,
        "BACKUP_CREDENTIALS_USERNAME": "admin", "BACKUP_CREDENTIALS_PASSWORD": "s3cret"});
    let first = instance("mine", "my-operator-0.1.0", values.clone(), "20");
    // Meanwhile someone renamed the cluster.
    let mut renamed = values;
    renamed["CLUSTER_NAME"] = json!("prod-2");
    let fresh = instance("mine", "my-operator-0.1.0", renamed, "21");
    let (t, seen) = serve(vec![
        ok("GET", at("instances", "mine"), first),
        ok(
            "GET",
            at("operatorversions", "my-operator-0.1.0"),
            ov_of(&v1),
        ),
        missing("GET", at("operatorversions", "my-operator-0.2.0")),
        // The Instance's ServiceAccount and RoleBinding, there since its install.
        step(
            "POST",
            SERVICE_ACCOUNTS.into(),
            409,
            status(409, "AlreadyExists"),
        ),
        step(
            "POST",
            ROLE_BINDINGS.into(),
            409,
            status(409, "AlreadyExists"),
        ),
        created(collection("operatorversions")),
        step(
            "PATCH",
            at("instances", "mine"),
            409,
            status(409, "Conflict"),
        ),
        ok("GET", at("instances", "mine"), fresh.clone()),
        merged(at("instances", "mine"), fresh, 3),
    ]);
    let req = upgrade::Request {
        dependencies: None,
        instance: "mine",
        package: &v2,
        inputs: Inputs::default(),
        dry_run: false,
        force: false,
        ignore_window: false,
        remediation: None,
        allow: &Default::default(),
        images: None,
    };
    let done = upgrade::upgrade(&t, &req).await.unwrap();
    assert_eq!(done.attempts, 2);
    assert_eq!(
        requests(&seen),
        pairs(&[
            ("GET", at("instances", "mine")),
            ("GET", at("operatorversions", "my-operator-0.1.0")),
            ("GET", at("operatorversions", "my-operator-0.2.0")),
            ("POST", SERVICE_ACCOUNTS.into()),
            ("POST", ROLE_BINDINGS.into()),
            ("POST", collection("operatorversions")),
            ("PATCH", at("instances", "mine")),
            ("GET", at("instances", "mine")),
            ("PATCH", at("instances", "mine")),
        ])
    );
    let last = seen.lock().unwrap().last().unwrap().body.clone();
    assert_eq!(last["metadata"], json!({"resourceVersion": "21"}));
    assert_eq!(last["spec"]["parameters"]["clusterName"], json!("prod-2"));
}

#[tokio::test]
async fn upgrade_to_the_running_version_is_refused_without_a_write() {
    let v2 = load("tests/fixtures/kep33/v2");
    let (t, seen) = serve(vec![ok(
        "GET",
        at("instances", "mine"),
        instance("mine", "my-operator-0.2.0", json!({}), "20"),
    )]);
    let req = upgrade::Request {
        dependencies: None,
        instance: "mine",
        package: &v2,
        inputs: Inputs::default(),
        dry_run: false,
        force: false,
        ignore_window: false,
        remediation: None,
        allow: &Default::default(),
        images: None,
    };
    let err = upgrade::upgrade(&t, &req).await.unwrap_err();
    assert!(matches!(err, Error::AlreadyRuns { .. }), "{err}");
    assert_eq!(requests(&seen).len(), 1);
}

// ---------------------------------------------------------------------------------------------
// uninstall

const CLAIMS: &str = "/api/v1/namespaces/default/persistentvolumeclaims";
const STATEFUL_SETS: &str = "/apis/apps/v1/namespaces/default/statefulsets";

fn list_of(kind: &str, items: Vec<Value>) -> Value {
    json!({"apiVersion": "v1", "kind": kind, "metadata": {"resourceVersion": "1"}, "items": items})
}

fn claim(name: &str, labels: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "namespace": NS, "labels": labels}})
}

/// What `uninstall` reads before its DELETE: the Instance, its OperatorVersion, the claims and
/// the Instance's StatefulSets.
fn before_uninstall(inst: &Value, ov: Value, claims: Vec<Value>, sets: Vec<Value>) -> Vec<Step> {
    vec![
        ok("GET", at("instances", "c"), inst.clone()),
        ok("GET", at("operatorversions", "cassandra-2.0.0"), ov),
        ok(
            "GET",
            CLAIMS.into(),
            list_of("PersistentVolumeClaimList", claims),
        ),
        ok(
            "GET",
            STATEFUL_SETS.into(),
            list_of("StatefulSetList", sets),
        ),
    ]
}

#[tokio::test]
async fn uninstall_deletes_the_instance_and_wait_polls_until_it_is_gone() {
    let inst = instance("c", "cassandra-2.0.0", json!({}), "10");
    let cleaning = with_status(
        inst.clone(),
        json!({"planStatus": {"cleanup": {"name": "cleanup", "status": "IN_PROGRESS"}}}),
    );
    let mut script = before_uninstall(&inst, ov_of(&cassandra()), vec![], vec![]);
    script.extend([
        ok("DELETE", at("instances", "c"), inst.clone()),
        ok(
            "GET",
            collection("instances"),
            list_of("InstanceList", vec![]),
        ),
        ok("GET", at("instances", "c"), cleaning),
        missing("GET", at("instances", "c")),
    ]);
    let (t, seen) = serve(script);
    uninstall::uninstall(&t, "c").await.unwrap();
    let mut watched = Watched::default();
    wait::gone(&t, "c", &fast(), &mut |r| watched.watch(r))
        .await
        .unwrap();
    // what the wait shows while it waits: the cleanup plan, then the Instance gone
    let cleanup = PlanAt {
        plan: "cleanup".into(),
        status: ExecStatus::InProgress,
        message: None,
        step: None,
    };
    assert_eq!(
        watched.of_c(),
        [
            Stage::Deleting {
                cleanup: Some(cleanup)
            },
            Stage::Gone
        ]
    );
    let requests = requests(&seen);
    assert_eq!(
        requests[4..],
        pairs(&[
            ("DELETE", at("instances", "c")),
            ("GET", collection("instances")),
            ("GET", at("instances", "c")),
            ("GET", at("instances", "c")),
        ])
    );
}

#[tokio::test]
async fn uninstall_names_the_claims_left_and_the_instances_that_share_the_operator_version() {
    let inst = instance("c", "cassandra-2.0.0", json!({}), "10");
    let set = json!({"apiVersion": "apps/v1", "kind": "StatefulSet",
        "metadata": {"name": "c-node", "namespace": NS},
        "spec": {"selector": {}, "serviceName": "c", "template": {},
            "volumeClaimTemplates": [{"metadata": {"name": "data"}}]}});
    let claims = vec![
        claim("data-c-node-0", json!({"app": "cassandra"})),
        claim("data-c-node-1", json!({})),
        claim("data-c-node-x", json!({})),
        claim("backup", json!({"kudo.dev/instance": "c"})),
        claim("other", json!({"kudo.dev/instance": "d"})),
    ];
    let mut script = before_uninstall(&inst, ov_of(&cassandra()), claims, vec![set]);
    script.extend([
        ok("DELETE", at("instances", "c"), inst.clone()),
        ok(
            "GET",
            collection("instances"),
            list_of(
                "InstanceList",
                vec![
                    instance("d", "cassandra-2.0.0", json!({}), "3"),
                    instance("e", "cassandra-1.0.0", json!({}), "4"),
                ],
            ),
        ),
    ]);
    let (t, seen) = serve(script);
    let done = uninstall::uninstall(&t, "c").await.unwrap();
    assert_eq!(done.claims, ["backup", "data-c-node-0", "data-c-node-1"]);
    assert_eq!(done.version_users, ["d"]);
    assert_eq!(done.operator.as_deref(), Some("cassandra"));
    assert_eq!(
        done.cleanup_plan,
        cassandra().operator().plans.contains_key("cleanup")
    );
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen[3].query, "labelSelector=kudo.dev%2Finstance%3Dc");
}

#[tokio::test]
async fn prune_deletes_the_unused_operator_versions_and_the_operator_when_none_is_left() {
    let ov = |name: &str| {
        json!({"apiVersion": "kudo.dev/v1beta2", "kind": "OperatorVersion",
            "metadata": {"name": name, "namespace": NS},
            "spec": {"operator": {"name": "cassandra"}, "version": "1"}})
    };
    let other = json!({"apiVersion": "kudo.dev/v1beta2", "kind": "OperatorVersion",
        "metadata": {"name": "kafka-1", "namespace": NS}, "spec": {"operator": {"name": "kafka"}}});
    let (t, seen) = serve(vec![
        ok(
            "GET",
            collection("instances"),
            list_of(
                "InstanceList",
                vec![instance("d", "cassandra-1.0.0", json!({}), "3")],
            ),
        ),
        ok(
            "GET",
            collection("operatorversions"),
            list_of(
                "OperatorVersionList",
                vec![ov("cassandra-1.0.0"), ov("cassandra-2.0.0"), other],
            ),
        ),
        ok(
            "DELETE",
            at("operatorversions", "cassandra-2.0.0"),
            ov("cassandra-2.0.0"),
        ),
    ]);
    let done = uninstall::prune(&t, "cassandra", "c").await.unwrap();
    assert_eq!(done.deleted, ["cassandra-2.0.0"]);
    assert_eq!(
        done.kept,
        [("cassandra-1.0.0".to_string(), vec!["d".to_string()])]
    );
    assert!(!done.operator_deleted);
    assert_eq!(requests(&seen).len(), 3);

    let (t, _) = serve(vec![
        ok(
            "GET",
            collection("instances"),
            list_of("InstanceList", vec![]),
        ),
        ok(
            "GET",
            collection("operatorversions"),
            list_of("OperatorVersionList", vec![ov("cassandra-2.0.0")]),
        ),
        ok(
            "DELETE",
            at("operatorversions", "cassandra-2.0.0"),
            ov("cassandra-2.0.0"),
        ),
        ok(
            "DELETE",
            at("operators", "cassandra"),
            json!({"apiVersion": "kudo.dev/v1beta2",
            "kind": "Operator", "metadata": {"name": "cassandra"}, "spec": {}}),
        ),
    ]);
    let done = uninstall::prune(&t, "cassandra", "c").await.unwrap();
    assert!(done.operator_deleted);
}

#[tokio::test]
async fn uninstall_of_a_missing_instance_says_it_is_not_found() {
    let (t, _) = serve(vec![missing("GET", at("instances", "c"))]);
    let err = uninstall::uninstall(&t, "c").await.unwrap_err();
    assert!(
        matches!(
            err,
            Error::NotFound {
                kind: "Instance",
                ..
            }
        ),
        "{err}"
    );
}

// ---------------------------------------------------------------------------------------------
// plan trigger, plan status

#[tokio::test]
async fn plan_trigger_sets_the_plan_execution_with_the_given_run_uid() {
    let pkg = cassandra();
    let inst = instance("c", "cassandra-2.0.0", json!({}), "10");
    let (t, seen) = serve(vec![
        ok("GET", at("instances", "c"), inst.clone()),
        ok(
            "GET",
            at("operatorversions", "cassandra-2.0.0"),
            ov_of(&pkg),
        ),
        merged(at("instances", "c"), inst, 2),
    ]);
    let done = plan::trigger(&t, "c", "backup-update", "run-1", false, false)
        .await
        .unwrap();
    assert_eq!(done.generation, Some(2));
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 3);
    assert_eq!(seen[2].method, "PATCH");
    assert_eq!(seen[2].path, at("instances", "c"));
    assert_eq!(seen[2].content_type, "application/merge-patch+json");
    assert_eq!(
        seen[2].body,
        json!({"spec": {"planExecution": {"planName": "backup-update", "uid": "run-1"}}})
    );
}

#[tokio::test]
async fn plan_trigger_of_an_unknown_plan_is_refused_and_lists_the_plans() {
    let pkg = cassandra();
    let (t, seen) = serve(vec![
        ok(
            "GET",
            at("instances", "c"),
            instance("c", "cassandra-2.0.0", json!({}), "10"),
        ),
        ok(
            "GET",
            at("operatorversions", "cassandra-2.0.0"),
            ov_of(&pkg),
        ),
    ]);
    let err = plan::trigger(&t, "c", "backpu", "run-1", false, false)
        .await
        .unwrap_err();
    match &err {
        Error::UnknownPlan { plan, plans, .. } => {
            assert_eq!(plan, "backpu");
            assert_eq!(
                plans,
                &["backup-update", "deploy", "metrics-update", "update"]
            );
        }
        other => panic!("{other}"),
    }
    assert_eq!(requests(&seen).len(), 2);
}

fn deploy_status(plan: &str, phase_nodes: &str, step_node: &str, message: Option<&str>) -> Value {
    let mut step = json!({"name": "node", "status": step_node});
    if let Some(m) = message {
        step["message"] = json!(m);
    }
    json!({"name": "deploy", "status": plan, "uid": "u-1", "phases": [
        {"name": "infra", "status": "COMPLETE", "steps": [
            {"name": "infra", "status": "COMPLETE"}, {"name": "backup", "status": "COMPLETE"}]},
        {"name": "nodes", "status": phase_nodes, "steps": [step]}]})
}

#[tokio::test]
async fn plan_status_shows_the_active_plan_as_a_tree_and_the_other_plans_in_one_line_each() {
    let pkg = cassandra();
    let inst = with_status(
        instance("c", "cassandra-2.0.0", json!({}), "10"),
        json!({"observedGeneration": 1, "activePlan": {"name": "deploy", "uid": "u-1"},
            "planStatus": {"deploy": deploy_status("IN_PROGRESS", "IN_PROGRESS", "IN_PROGRESS", Some("waiting for 3 ready replicas"))}}),
    );
    let (t, seen) = serve(vec![
        ok("GET", at("instances", "c"), inst),
        ok(
            "GET",
            at("operatorversions", "cassandra-2.0.0"),
            ov_of(&pkg),
        ),
    ]);
    let view = plan::status(&t, "c").await.unwrap();
    assert_eq!(requests(&seen).len(), 2);
    assert_eq!(
        view.to_string(),
        "\
Instance default/c (OperatorVersion cassandra-2.0.0), active plan: deploy
├── plan deploy (serial) [IN_PROGRESS]
│   ├── phase infra (parallel) [COMPLETE]
│   │   ├── step infra [COMPLETE]
│   │   └── step backup [COMPLETE]
│   └── phase nodes (serial) [IN_PROGRESS]
│       └── step node [IN_PROGRESS]: waiting for 3 ready replicas
├── plan backup-update (serial) [NEVER_RUN]
├── plan metrics-update (serial) [NEVER_RUN]
└── plan update (serial) [NEVER_RUN]
"
    );
    let data = json_of(&view);
    assert_eq!(data["activePlan"], json!({"name": "deploy", "uid": "u-1"}));
    assert_eq!(data["plans"][1]["name"], json!("deploy"));
    assert_eq!(
        data["plans"][1]["phases"][1]["steps"][0]["status"],
        json!("IN_PROGRESS")
    );
}

// ---------------------------------------------------------------------------------------------
// --wait

#[tokio::test]
async fn wait_fails_on_fatal_error_naming_the_plan_phase_step_and_message() {
    let base = instance("c", "cassandra-2.0.0", json!({}), "10");
    // First the manager still shows the previous generation's complete plan, then the failure.
    let old = with_status(
        base.clone(),
        json!({"observedGeneration": 1, "activePlan": {"name": "deploy", "uid": "u-0"},
            "planStatus": {"deploy": deploy_status("COMPLETE", "COMPLETE", "COMPLETE", None)}}),
    );
    let failed = with_status(
        base,
        json!({"observedGeneration": 2, "activePlan": {"name": "deploy", "uid": "u-1"},
            "planStatus": {"deploy": deploy_status("FATAL_ERROR", "FATAL_ERROR", "FATAL_ERROR", Some("StatefulSet cassandra: invalid image"))}}),
    );
    let (t, seen) = serve(vec![
        ok("GET", at("instances", "c"), old),
        ok("GET", at("instances", "c"), failed),
    ]);
    let goal = Goal {
        generation: 2,
        uid: None,
    };
    let mut watched = Watched::default();
    let err = wait::plan_done(&t, "c", &goal, &fast(), &mut |r| watched.watch(r))
        .await
        .unwrap_err();
    assert_eq!(
        watched.of_c(),
        [
            Stage::Behind {
                generation: 2,
                observed: 1
            },
            Stage::Failed(deploy_at(
                ExecStatus::FatalError,
                Some((
                    ExecStatus::FatalError,
                    Some("StatefulSet cassandra: invalid image")
                ))
            )),
        ]
    );
    match &err {
        Error::PlanFailed {
            plan,
            phase,
            step,
            message,
            ..
        } => {
            assert_eq!(plan, "deploy");
            assert_eq!(phase.as_deref(), Some("nodes"));
            assert_eq!(step.as_deref(), Some("node"));
            assert_eq!(message, "StatefulSet cassandra: invalid image");
        }
        other => panic!("{other}"),
    }
    assert_eq!(
        err.to_string(),
        "plan deploy of Instance default/c failed in phase nodes, step node: StatefulSet cassandra: invalid image"
    );
    assert_eq!(requests(&seen).len(), 2);
}

#[tokio::test]
async fn wait_succeeds_once_the_written_generation_is_observed_and_the_plan_is_complete() {
    let base = instance("c", "cassandra-2.0.0", json!({}), "10");
    let running = with_status(
        base.clone(),
        json!({"observedGeneration": 2, "activePlan": {"name": "deploy", "uid": "u-1"},
            "planStatus": {"deploy": deploy_status("IN_PROGRESS", "IN_PROGRESS", "PENDING", None)}}),
    );
    let done = with_status(
        base,
        json!({"observedGeneration": 2, "activePlan": {"name": "deploy", "uid": "u-1"},
            "planStatus": {"deploy": deploy_status("COMPLETE", "COMPLETE", "COMPLETE", None)}}),
    );
    let (t, seen) = serve(vec![
        ok("GET", at("instances", "c"), running),
        ok("GET", at("instances", "c"), done),
    ]);
    let goal = Goal {
        generation: 2,
        uid: None,
    };
    let mut watched = Watched::default();
    let plan = wait::plan_done(&t, "c", &goal, &fast(), &mut |r| watched.watch(r))
        .await
        .unwrap();
    assert_eq!(plan, "deploy");
    assert_eq!(
        watched.of_c(),
        [
            // the first step not COMPLETE: infra's are, node is PENDING
            Stage::Running(deploy_at(
                ExecStatus::InProgress,
                Some((ExecStatus::Pending, None))
            )),
            Stage::Complete(deploy_at(ExecStatus::Complete, None)),
        ]
    );
    assert_eq!(requests(&seen).len(), 2);
}

#[tokio::test]
async fn wait_for_a_trigger_ignores_a_complete_plan_of_another_run() {
    let base = instance("c", "cassandra-2.0.0", json!({}), "10");
    let other = with_status(
        base.clone(),
        json!({"observedGeneration": 3, "activePlan": {"name": "deploy", "uid": "u-1"},
            "planStatus": {"deploy": deploy_status("COMPLETE", "COMPLETE", "COMPLETE", None)}}),
    );
    let ours = with_status(
        base,
        json!({"observedGeneration": 3, "activePlan": {"name": "backup-update", "uid": "run-1"},
            "planStatus": {"backup-update": {"name": "backup-update", "status": "COMPLETE"}}}),
    );
    let (t, _) = serve(vec![
        ok("GET", at("instances", "c"), other),
        ok("GET", at("instances", "c"), ours),
    ]);
    let goal = Goal {
        generation: 3,
        uid: Some("run-1".into()),
    };
    let mut watched = Watched::default();
    assert_eq!(
        wait::plan_done(&t, "c", &goal, &fast(), &mut |r| watched.watch(r))
            .await
            .unwrap(),
        "backup-update"
    );
    assert_eq!(
        watched.of_c(),
        [
            Stage::RunNotStarted {
                uid: "run-1".into(),
                plan: "deploy".into(),
                run: "u-1".into()
            },
            Stage::Complete(PlanAt {
                plan: "backup-update".into(),
                status: ExecStatus::Complete,
                message: None,
                step: None
            }),
        ]
    );
}

#[tokio::test]
async fn wait_times_out_with_a_message_saying_what_it_last_saw() {
    let running = with_status(
        instance("c", "cassandra-2.0.0", json!({}), "10"),
        json!({"observedGeneration": 2, "activePlan": {"name": "deploy", "uid": "u-1"},
            "planStatus": {"deploy": deploy_status("IN_PROGRESS", "IN_PROGRESS", "IN_PROGRESS", Some("1 of 3 ready"))}}),
    );
    let mut forever = ok("GET", at("instances", "c"), running);
    forever.forever = true;
    let (t, _) = serve(vec![forever]);
    let o = Options {
        timeout: Duration::from_millis(30),
        interval: Duration::from_millis(5),
    };
    let goal = Goal {
        generation: 2,
        uid: None,
    };
    let mut watched = Watched::default();
    let err = wait::plan_done(&t, "c", &goal, &o, &mut |r| watched.watch(r))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Timeout { .. }), "{err}");
    // every reading was shown, each the same stage
    let running = Stage::Running(deploy_at(
        ExecStatus::InProgress,
        Some((ExecStatus::InProgress, Some("1 of 3 ready"))),
    ));
    let stages = watched.of_c();
    assert!(stages.len() > 1, "{stages:?}");
    assert!(stages.iter().all(|s| s == &running), "{stages:?}");
    assert_eq!(
        err.to_string(),
        "timed out after 30ms waiting for Instance default/c to run its plan; last seen: plan deploy is IN_PROGRESS (phase nodes, step node IN_PROGRESS: 1 of 3 ready)"
    );
}

#[tokio::test]
async fn plan_status_wait_shows_the_active_plan_until_it_ends_whatever_its_generation() {
    let base = instance("c", "cassandra-2.0.0", json!({}), "10");
    let reading = |plan: &str, phase: &str, step: &str, message: Option<&str>| {
        with_status(
            base.clone(),
            json!({"observedGeneration": 1, "activePlan": {"name": "deploy", "uid": "u-1"},
                "planStatus": {"deploy": deploy_status(plan, phase, step, message)}}),
        )
    };
    let (t, seen) = serve(vec![
        ok(
            "GET",
            at("instances", "c"),
            reading(
                "IN_PROGRESS",
                "IN_PROGRESS",
                "ERROR",
                Some("image pull failed"),
            ),
        ),
        ok(
            "GET",
            at("instances", "c"),
            reading("IN_PROGRESS", "IN_PROGRESS", "IN_PROGRESS", None),
        ),
        ok(
            "GET",
            at("instances", "c"),
            reading("COMPLETE", "COMPLETE", "COMPLETE", None),
        ),
    ]);
    let mut watched = Watched::default();
    let inst = wait::plan_terminal(&t, "c", &fast(), &mut |r| watched.watch(r))
        .await
        .unwrap();
    assert_eq!(inst.metadata.name.as_deref(), Some("c"));
    assert_eq!(
        watched.of_c(),
        [
            Stage::Running(deploy_at(
                ExecStatus::InProgress,
                Some((ExecStatus::Error, Some("image pull failed")))
            )),
            Stage::Running(deploy_at(
                ExecStatus::InProgress,
                Some((ExecStatus::InProgress, None))
            )),
            Stage::Complete(deploy_at(ExecStatus::Complete, None)),
        ]
    );
    assert_eq!(requests(&seen).len(), 3);
}

// ---------------------------------------------------------------------------------------------
// get

#[tokio::test]
async fn get_instances_lists_the_namespace_as_rows() {
    let inst = with_status(
        instance("c", "cassandra-2.0.0", json!({}), "10"),
        json!({"activePlan": {"name": "deploy", "uid": "u-1"},
            "planStatus": {"deploy": {"name": "deploy", "status": "COMPLETE"}},
            "conditions": [{"type": "Ready", "status": "True"}]}),
    );
    let list = json!({"apiVersion": "kudo.dev/v1beta2", "kind": "InstanceList",
        "metadata": {"resourceVersion": "99"}, "items": [inst]});
    let (t, seen) = serve(vec![ok("GET", collection("instances"), list)]);
    let listing = get::list(&t, get::Kind::Instances).await.unwrap();
    assert_eq!(requests(&seen), pairs(&[("GET", collection("instances"))]));
    assert_eq!(
        listing.headers,
        ["NAME", "OPERATOR VERSION", "ACTIVE PLAN", "STATUS", "READY"]
    );
    assert_eq!(
        listing.rows,
        [["c", "cassandra-2.0.0", "deploy", "COMPLETE", "True"]]
    );
    assert_eq!(listing.items[0]["kind"], json!("Instance"));
}

// ---------------------------------------------------------------------------------------------
// what the API server said, as one sentence

/// kube-apiserver's answer to a write in a namespace that does not exist.
fn no_namespace() -> Value {
    json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": format!("namespaces \"{NS}\" not found"), "reason": "NotFound",
        "details": {"name": NS, "kind": "namespaces"}, "code": 404})
}

fn install_req(pkg: &Package, dry_run: bool, create_namespace: bool) -> install::Request<'_> {
    install::Request {
        dependencies: None,
        package: pkg,
        instance: None,
        inputs: Inputs::default(),
        dry_run,
        service_account: None,
        create_namespace,
        images: None,
    }
}

const NAMESPACES: &str = "/api/v1/namespaces";

#[tokio::test]
async fn install_in_a_namespace_that_does_not_exist_says_so_and_how_to_make_it() {
    let pkg = cassandra();
    let (t, seen) = serve(vec![
        missing("GET", at("instances", "cassandra-instance")),
        missing("GET", at("operators", "cassandra")),
        missing("GET", at("operatorversions", "cassandra-3.11.6-2.0.0")),
        // KUDO's older name of the same version: none either.
        missing("GET", at("operatorversions", "cassandra-2.0.0")),
        step("POST", SERVICE_ACCOUNTS.into(), 404, no_namespace()),
    ]);
    let err = install::install(&t, &install_req(&pkg, false, false))
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "namespace default does not exist: create it with `kubectl create namespace default`"
    );
    let seen = seen.lock().unwrap().clone();
    assert!(
        seen.iter()
            .filter(|s| s.method != "GET")
            .all(|s| s.query.starts_with("dryRun=All"))
    );
}

#[tokio::test]
async fn install_with_create_namespace_creates_it_first_with_the_user_s_rights() {
    let pkg = cassandra();
    let mut script = vec![
        missing("GET", at("instances", "cassandra-instance")),
        missing("GET", at("operators", "cassandra")),
        missing("GET", at("operatorversions", "cassandra-3.11.6-2.0.0")),
        // KUDO's older name of the same version: none either.
        missing("GET", at("operatorversions", "cassandra-2.0.0")),
        missing("GET", format!("{NAMESPACES}/{NS}")),
        created(NAMESPACES.into()),
    ];
    script.extend(granted());
    script.extend([
        created(collection("operators")),
        created(collection("operatorversions")),
        created(collection("instances")),
    ]);
    let (t, seen) = serve(script);
    let done = install::install(&t, &install_req(&pkg, false, true))
        .await
        .unwrap();
    assert_eq!(done.created[0]["kind"], "Namespace");
    assert_eq!(done.created[0]["metadata"]["name"], NS);
    let seen = seen.lock().unwrap().clone();
    let ns = seen.iter().find(|s| s.path == NAMESPACES).unwrap();
    assert_eq!(ns.body["metadata"]["name"], NS);
    assert!(!ns.query.contains("dryRun"), "{}", ns.query);
}

#[tokio::test]
async fn install_dry_run_with_create_namespace_writes_nothing_and_says_it_would_make_it() {
    let pkg = cassandra();
    let (t, seen) = serve(vec![
        missing("GET", at("instances", "cassandra-instance")),
        missing("GET", at("operators", "cassandra")),
        missing("GET", at("operatorversions", "cassandra-3.11.6-2.0.0")),
        // KUDO's older name of the same version: none either.
        missing("GET", at("operatorversions", "cassandra-2.0.0")),
        missing("GET", format!("{NAMESPACES}/{NS}")),
        created(NAMESPACES.into()),
    ]);
    let done = install::install(&t, &install_req(&pkg, true, true))
        .await
        .unwrap();
    let kinds: Vec<&str> = done
        .created
        .iter()
        .map(|o| o["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "Namespace",
            "ServiceAccount",
            "RoleBinding",
            "Operator",
            "OperatorVersion"
        ]
    );
    assert!(!done.server_checked);
    let seen = seen.lock().unwrap().clone();
    let writes: Vec<&Seen> = seen.iter().filter(|s| s.method != "GET").collect();
    assert_eq!(writes.len(), 1);
    assert!(
        writes[0].query.starts_with("dryRun=All"),
        "{}",
        writes[0].query
    );
}

#[tokio::test]
async fn install_with_create_namespace_in_an_existing_namespace_creates_no_namespace() {
    let pkg = cassandra();
    let mut script = vec![
        missing("GET", at("instances", "cassandra-instance")),
        missing("GET", at("operators", "cassandra")),
        missing("GET", at("operatorversions", "cassandra-3.11.6-2.0.0")),
        // KUDO's older name of the same version: none either.
        missing("GET", at("operatorversions", "cassandra-2.0.0")),
        ok(
            "GET",
            format!("{NAMESPACES}/{NS}"),
            json!({"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": NS}}),
        ),
    ];
    script.extend(granted());
    script.extend([
        created(collection("operators")),
        created(collection("operatorversions")),
        created(collection("instances")),
    ]);
    let (t, _) = serve(script);
    let done = install::install(&t, &install_req(&pkg, false, true))
        .await
        .unwrap();
    assert_eq!(done.created[0]["kind"], "ServiceAccount");
}

#[tokio::test]
async fn a_refused_request_is_one_sentence_naming_the_object_and_the_missing_right() {
    let forbidden = json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "reason": "Forbidden", "code": 403, "details": {"group": "kudo.dev", "kind": "instances"},
        "message": "instances.kudo.dev is forbidden: User \"system:serviceaccount:t1:tenant\" cannot list resource \"instances\" in API group \"kudo.dev\" in the namespace \"default\""});
    let (t, _) = serve(vec![step(
        "GET",
        collection("instances"),
        403,
        forbidden.clone(),
    )]);
    let err = get::list(&t, get::Kind::Instances).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "cannot list Instances in namespace default: you (system:serviceaccount:t1:tenant) may \
         not list instances.kudo.dev in namespace default: ask for the verb list on \
         instances.kudo.dev in namespace default"
    );
    let (t, _) = serve(vec![step(
        "GET",
        at("instances", "c"),
        500,
        status(500, "InternalError"),
    )]);
    let err = uninstall::uninstall(&t, "c").await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "cannot get Instance default/c: scripted InternalError"
    );
}

/// Issue 34: a rollback whose revision needs what is gone (its OperatorVersion, the Secret of
/// its writeOnly values) is refused naming it, and nothing is written; an unknown revision
/// names those that exist.
#[tokio::test]
async fn a_rollback_to_what_is_gone_is_refused_naming_it_and_writes_nothing() {
    let ov = ov_of(&cassandra());
    let ov_name = ov["metadata"]["name"].as_str().unwrap().to_string();
    let inst = instance("cass", &ov_name, json!({"nodeCount": 5}), "9");
    let revision = |n: i64, ov: &str, secret: Option<&str>| {
        let record = kudo_crd::revision::Record {
            time: "2026-11-27T20:00:00Z".into(),
            operator_version: serde_json::from_value(json!({"name": ov})).unwrap(),
            parameters: json!({"nodeCount": 3}),
            parameters_from: secret
                .map(|s| serde_json::from_value(json!([{"secretRef": {"name": s}}])).unwrap())
                .unwrap_or_default(),
            plan: "deploy".into(),
            plan_uid: format!("deploy-g{n}"),
            ..Default::default()
        };
        let i: kudo_crd::v1beta2::Instance = serde_json::from_value(inst.clone()).unwrap();
        let mut r = json_of(&kudo_crd::revision::object(&i, n, &record));
        r["metadata"]["annotations"]["kudo.dev/plan-status"] = json!("COMPLETE");
        r
    };
    let revisions = json!({"apiVersion": "apps/v1", "kind": "ControllerRevisionList",
    "metadata": {}, "items": [
        revision(1, "cassandra-gone", None),
        revision(2, &ov_name, Some("cass-params-gone")),
        revision(3, &ov_name, None),
    ]});
    let list = format!("/apis/apps/v1/namespaces/{NS}/controllerrevisions");
    let rollback = |n: i64| history::RollbackRequest {
        instance: "cass",
        revision: Some(n),
        dry_run: false,
        force: false,
        ignore_window: false,
    };

    // Revision 1's OperatorVersion is gone (by either of its names).
    let (t, log) = serve(vec![
        ok("GET", at("instances", "cass"), inst.clone()),
        ok("GET", list.clone(), revisions.clone()),
        missing("GET", at("operatorversions", "cassandra-gone")),
        ok(
            "GET",
            collection("operatorversions"),
            json!({"apiVersion": "kudo.dev/v1beta2", "kind": "OperatorVersionList", "metadata": {}, "items": [ov]}),
        ),
    ]);
    let err = history::rollback(&t, &rollback(1)).await.unwrap_err();
    let text = err.to_string();
    assert!(
        matches!(err, Error::CannotRollBack { revision: 1, .. }),
        "{text}"
    );
    assert!(
        text.contains("OperatorVersion default/cassandra-gone no longer exists"),
        "{text}"
    );
    assert!(text.contains("nothing was written"), "{text}");
    assert!(
        !requests(&log).iter().any(|(m, _)| m == "PATCH"),
        "nothing written"
    );

    // Revision 2's Secret is gone.
    let (t, log) = serve(vec![
        ok("GET", at("instances", "cass"), inst.clone()),
        ok("GET", list.clone(), revisions.clone()),
        ok("GET", at("operatorversions", &ov_name), ov.clone()),
        missing(
            "GET",
            format!("/api/v1/namespaces/{NS}/secrets/cass-params-gone"),
        ),
    ]);
    let err = history::rollback(&t, &rollback(2)).await.unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains(
            "Secret default/cass-params-gone, which held its writeOnly values, no longer exists"
        ),
        "{text}"
    );
    assert!(!requests(&log).iter().any(|(m, _)| m == "PATCH"));

    // An unknown revision names those that exist.
    let (t, _) = serve(vec![
        ok("GET", at("instances", "cass"), inst.clone()),
        ok("GET", list.clone(), revisions.clone()),
    ]);
    let err = history::rollback(&t, &rollback(7)).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "Instance default/cass has no revision 7; its revisions: 1, 2, 3"
    );
}
