//! `storage_migration::run` against a mocked API server that keeps objects the way kube-apiserver does:
//! each in the version it was stored in, read through either version (converted the way the
//! conversion webhook does), `resourceVersion` preconditions on writes, CRD `storedVersions`
//! growing with each storage version applied. Every request is recorded, so each test asserts
//! the method, path and body of the whole conversation.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use http::StatusCode;
use kudo_client::storage_migration::{self, Error, Kind, Options, ProblemKind, Report, Rewrite};
use kudo_crd::convert::{self, NoTypes};
use serde_json::{Value, json};

const NS: &str = "zk";
const OV: &str = "zookeeper-3.6.2-0.4.0";
const WEBHOOK_URL: &str = "https://127.0.0.1:8443/convert";
const CA_BUNDLE: &str = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0t";

use kudo_testkit::mock_api;

use mock_api::Seen;

/// One stored custom object.
#[derive(Debug, Clone)]
struct Stored {
    /// `v1beta1` or `v1beta2`: the version etcd holds it in.
    version: String,
    /// The object, in that version.
    object: Value,
}

/// The API server's state.
#[derive(Debug, Default)]
struct Cluster {
    /// By path without the version: `{ns}/{plural}/{name}`.
    objects: BTreeMap<String, Stored>,
    crds: BTreeMap<String, Value>,
    next_rv: u64,
    /// Paths whose next PUT loses a race: another client writes first (the closure changes
    /// the stored object), and the PUT gets 409.
    races: BTreeMap<String, fn(&mut Value)>,
    seen: Vec<Seen>,
}

impl Cluster {
    fn rv(&mut self) -> String {
        self.next_rv += 1;
        self.next_rv.to_string()
    }

    /// Stores an object (`apiVersion` says the version it is stored in).
    fn store(&mut self, mut object: Value) {
        let version = object["apiVersion"]
            .as_str()
            .unwrap()
            .trim_start_matches("kudo.dev/")
            .to_string();
        let plural = plural(object["kind"].as_str().unwrap());
        let key = format!(
            "{}/{plural}/{}",
            object["metadata"]["namespace"].as_str().unwrap(),
            object["metadata"]["name"].as_str().unwrap()
        );
        object["metadata"]["resourceVersion"] = json!(self.rv());
        self.objects.insert(key, Stored { version, object });
    }

    /// A stored object read through `version`, converted as the webhook would.
    fn read(stored: &Stored, version: &str) -> Value {
        convert::convert(&stored.object, &format!("kudo.dev/{version}"), &NoTypes).unwrap()
    }

    fn answer(&mut self, method: &str, path: &str, body: &Value) -> (StatusCode, Value) {
        let (path, _query) = path.split_once('?').unwrap_or((path, ""));
        let parts: Vec<&str> = path.trim_start_matches('/').split('/').collect();
        match (method, parts.as_slice()) {
            ("GET", ["apis", "kudo.dev", version, plural]) => {
                let items: Vec<Value> = self
                    .objects
                    .iter()
                    .filter(|(k, _)| k.split('/').nth(1) == Some(plural))
                    .map(|(_, s)| Self::read(s, version))
                    .collect();
                (StatusCode::OK, json!({"kind": "List", "items": items}))
            }
            ("GET", ["apis", "kudo.dev", version, "namespaces", ns, plural, name]) => {
                match self.objects.get(&format!("{ns}/{plural}/{name}")) {
                    Some(s) => (StatusCode::OK, Self::read(s, version)),
                    None => not_found(),
                }
            }
            (
                "PUT",
                [
                    "apis",
                    "kudo.dev",
                    "v1beta2",
                    "namespaces",
                    ns,
                    plural,
                    name,
                ],
            ) => {
                let key = format!("{ns}/{plural}/{name}");
                if let Some(race) = self.races.remove(&key) {
                    let stored = self.objects.get(&key).unwrap().object.clone();
                    let mut changed = stored;
                    race(&mut changed);
                    self.store(changed);
                }
                let Some(current) = self.objects.get(&key) else {
                    return not_found();
                };
                if current.object["metadata"]["resourceVersion"]
                    != body["metadata"]["resourceVersion"]
                {
                    return conflict();
                }
                let mut object = body.clone();
                // Instances have a status subresource: a PUT keeps the stored status.
                if plural == &"instances" {
                    object["status"] = Self::read(current, "v1beta2")["status"].clone();
                    if object["status"].is_null() {
                        object.as_object_mut().unwrap().remove("status");
                    }
                }
                self.store(object);
                (StatusCode::OK, self.objects[&key].object.clone())
            }
            (
                "GET",
                [
                    "apis",
                    "apiextensions.k8s.io",
                    "v1",
                    "customresourcedefinitions",
                    name,
                ],
            ) => match self.crds.get(*name) {
                Some(c) => (StatusCode::OK, c.clone()),
                None => not_found(),
            },
            (
                "PATCH",
                [
                    "apis",
                    "apiextensions.k8s.io",
                    "v1",
                    "customresourcedefinitions",
                    name,
                ],
            ) => {
                let mut crd = body.clone();
                let storage = crd["spec"]["versions"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|v| v["storage"] == true)
                    .unwrap()["name"]
                    .as_str()
                    .unwrap()
                    .to_string();
                let mut stored: Vec<String> = self
                    .crds
                    .get(*name)
                    .map(|c| serde_json::from_value(c["status"]["storedVersions"].clone()).unwrap())
                    .unwrap_or_default();
                if !stored.contains(&storage) {
                    stored.push(storage);
                }
                crd["status"] = json!({"storedVersions": stored});
                crd["metadata"]["resourceVersion"] = json!(self.rv());
                self.crds.insert(name.to_string(), crd.clone());
                (StatusCode::OK, crd)
            }
            (
                "PATCH",
                [
                    "apis",
                    "apiextensions.k8s.io",
                    "v1",
                    "customresourcedefinitions",
                    name,
                    "status",
                ],
            ) => {
                let rv = self.rv();
                let Some(crd) = self.crds.get_mut(*name) else {
                    return not_found();
                };
                if crd["metadata"]["resourceVersion"] != body["metadata"]["resourceVersion"] {
                    return conflict();
                }
                crd["status"]["storedVersions"] = body["status"]["storedVersions"].clone();
                crd["metadata"]["resourceVersion"] = json!(rv);
                (StatusCode::OK, crd.clone())
            }
            _ => panic!("unexpected request {method} {path}"),
        }
    }
}

fn plural(kind: &str) -> &'static str {
    match kind {
        "Operator" => "operators",
        "OperatorVersion" => "operatorversions",
        "Instance" => "instances",
        other => panic!("not a kudo kind: {other}"),
    }
}

fn status(code: u16, reason: &str) -> Value {
    json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": reason, "reason": reason, "code": code})
}

fn not_found() -> (StatusCode, Value) {
    (StatusCode::NOT_FOUND, status(404, "NotFound"))
}

fn conflict() -> (StatusCode, Value) {
    (StatusCode::CONFLICT, status(409, "Conflict"))
}

/// A client talking to `cluster`, which records every request.
fn client(cluster: Arc<Mutex<Cluster>>) -> kube::Client {
    let (client, _) = mock_api::client("default", move |r| {
        let mut c = cluster.lock().unwrap();
        c.seen.push(r.clone());
        let (code, answer) = c.answer(&r.method, &r.uri(), &r.body);
        (code.as_u16(), answer)
    });
    client
}

/// The zookeeper example as KUDO stored it: Operator and OperatorVersion in v1beta1 (a flat
/// parameter list with `value-type`, defaults as strings).
fn zookeeper_v1beta1() -> (Value, Value) {
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/zookeeper-v1beta1");
    let pkg = kudo_pkg::Package::load(&dir).unwrap();
    let (op, ov) = kudo_crd::package::objects(&pkg, NS);
    let mut op = serde_json::to_value(op).unwrap();
    op["apiVersion"] = json!("kudo.dev/v1beta1");
    let ov = serde_json::to_value(ov).unwrap();
    let mut ov = convert::convert(&ov, "kudo.dev/v1beta1", &NoTypes).unwrap();
    // KUDO never wrote kudo's round-trip annotation.
    ov["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("annotations");
    assert_eq!(ov["metadata"]["name"], OV);
    assert_eq!(ov["spec"]["parameters"][0]["value-type"], "integer");
    (op, ov)
}

/// A v1beta1 Instance of the zookeeper OperatorVersion, values as strings.
fn instance(name: &str, parameters: Value) -> Value {
    json!({"apiVersion": "kudo.dev/v1beta1", "kind": "Instance",
        "metadata": {"name": name, "namespace": NS, "uid": format!("uid-{name}"),
            "labels": {"kudo.dev/operator": "zookeeper"}, "annotations": {"team": "data"}},
        "spec": {"operatorVersion": {"name": OV}, "parameters": parameters},
        "status": {"activePlan": {"name": "deploy", "status": "COMPLETE"}}})
}

fn zk1() -> Value {
    instance(
        "zk1",
        json!({"NODE_COUNT": "5", "MEMORY": "2Gi", "ENABLE_METRICS": "true",
            "JVM_OPTS": "[\"-Xmx1g\"]", "CLIENT_PORT": "2181"}),
    )
}

/// KUDO's CRDs as an old installation has them: v1beta1 only, stored as v1beta1, with the
/// conversion webhook `kudo init --webhook-url` configured.
fn kudo_v1beta1_crds(cluster: &mut Cluster) {
    for crd in kudo_crd::converted() {
        let mut v = serde_json::to_value(&crd).unwrap();
        let versions: Vec<Value> = v["spec"]["versions"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|v| v["name"] == "v1beta1")
            .map(|v| {
                let mut v = v.clone();
                v["storage"] = json!(true);
                v
            })
            .collect();
        v["spec"]["versions"] = json!(versions);
        v["spec"]["conversion"] = conversion(crd.spec.names.kind.as_str());
        v["status"] = json!({"storedVersions": ["v1beta1"]});
        v["metadata"]["resourceVersion"] = json!(cluster.rv());
        cluster.crds.insert(crd.metadata.name.clone().unwrap(), v);
    }
}

fn conversion(kind: &str) -> Value {
    if kind == "Operator" {
        json!({"strategy": "None"})
    } else {
        json!({"strategy": "Webhook", "webhook": {"conversionReviewVersions": ["v1"],
            "clientConfig": {"url": WEBHOOK_URL, "caBundle": CA_BUNDLE}}})
    }
}

/// An old cluster: v1beta1 CRDs and the zookeeper Operator, OperatorVersion and an Instance.
fn old_cluster() -> Arc<Mutex<Cluster>> {
    let mut c = Cluster::default();
    kudo_v1beta1_crds(&mut c);
    let (op, ov) = zookeeper_v1beta1();
    c.store(op);
    c.store(ov);
    c.store(zk1());
    Arc::new(Mutex::new(c))
}

fn requests(cluster: &Arc<Mutex<Cluster>>) -> Vec<(String, String)> {
    cluster
        .lock()
        .unwrap()
        .seen
        .iter()
        .map(|s| (s.method.clone(), s.uri()))
        .collect()
}

fn r(method: &str, path: &str) -> (String, String) {
    (method.to_string(), path.to_string())
}

fn crd_path(kind: Kind) -> String {
    format!(
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{}",
        kind.crd()
    )
}

fn object_path(version: &str, plural: &str, name: &str) -> String {
    format!("/apis/kudo.dev/{version}/namespaces/{NS}/{plural}/{name}")
}

fn lists() -> Vec<(String, String)> {
    ["operators", "operatorversions", "instances"]
        .iter()
        .map(|p| r("GET", &format!("/apis/kudo.dev/v1beta1/{p}")))
        .collect()
}

fn applies() -> Vec<(String, String)> {
    Kind::ALL
        .iter()
        .flat_map(|k| {
            [
                r("GET", &crd_path(*k)),
                r(
                    "PATCH",
                    &format!("{}?fieldManager=kudo-migrate&force=true", crd_path(*k)),
                ),
            ]
        })
        .collect()
}

fn rewrite(plural: &str, name: &str) -> Vec<(String, String)> {
    vec![
        r("PUT", &object_path("v1beta2", plural, name)),
        r("GET", &object_path("v1beta2", plural, name)),
    ]
}

fn cleanups() -> Vec<(String, String)> {
    Kind::ALL
        .iter()
        .flat_map(|k| {
            [
                r("GET", &crd_path(*k)),
                r("PATCH", &format!("{}/status", crd_path(*k))),
            ]
        })
        .collect()
}

/// The stored object at `{plural}/{name}`: its version and the object.
fn stored(cluster: &Arc<Mutex<Cluster>>, plural: &str, name: &str) -> Stored {
    cluster.lock().unwrap().objects[&format!("{NS}/{plural}/{name}")].clone()
}

#[tokio::test]
async fn a_v1beta1_cluster_is_migrated_in_four_phases_in_order() {
    let cluster = old_cluster();
    let report = storage_migration::run(&client(cluster.clone()), &Options::default())
        .await
        .unwrap();

    // The whole conversation, in order.
    let mut want = lists();
    want.extend(applies());
    want.extend(rewrite("operators", "zookeeper"));
    want.extend(rewrite("operatorversions", OV));
    want.extend(rewrite("instances", "zk1"));
    want.extend(cleanups());
    assert_eq!(requests(&cluster), want);

    let seen = cluster.lock().unwrap().seen.clone();
    // Phase 2: every CRD applied server-side as the types define it, with its conversion kept.
    for (seen, crd) in seen[3..9]
        .chunks(2)
        .map(|pair| &pair[1])
        .zip(kudo_crd::converted())
    {
        assert_eq!(seen.content_type, "application/apply-patch+yaml");
        let mut want = serde_json::to_value(&crd).unwrap();
        want["spec"]["conversion"] = conversion(crd.spec.names.kind.as_str());
        assert_eq!(seen.body, want, "{}", crd.metadata.name.unwrap());
    }
    // Phase 3: each object PUT as its v1beta2 conversion, with the resourceVersion read in
    // pre-flight as precondition.
    let put = |i: usize| &seen[i];
    let (op_put, ov_put, inst_put) = (put(9), put(11), put(13));
    for p in [op_put, ov_put, inst_put] {
        assert_eq!(p.method, "PUT");
        assert_eq!(p.content_type, "application/json");
        assert_eq!(p.body["apiVersion"], "kudo.dev/v1beta2");
        assert!(p.body["metadata"].get("managedFields").is_none());
    }
    assert_eq!(op_put.body["metadata"]["resourceVersion"], "4");
    assert_eq!(ov_put.body["metadata"]["resourceVersion"], "5");
    assert_eq!(inst_put.body["metadata"]["resourceVersion"], "6");
    assert_eq!(
        ov_put.body["spec"]["parameters"]["properties"]["NODE_COUNT"]["type"],
        "integer"
    );
    assert_eq!(
        inst_put.body["spec"]["parameters"],
        json!({"NODE_COUNT": 5, "MEMORY": "2Gi", "ENABLE_METRICS": true,
            "JVM_OPTS": ["-Xmx1g"], "CLIENT_PORT": 2181})
    );
    assert_eq!(
        inst_put.body["metadata"]["labels"],
        zk1()["metadata"]["labels"]
    );
    assert_eq!(
        inst_put.body["metadata"]["annotations"]["team"],
        zk1()["metadata"]["annotations"]["team"]
    );
    // The v1beta1 strings are kept for a lossless read through v1beta1.
    assert_eq!(
        serde_json::from_str::<Value>(
            inst_put.body["metadata"]["annotations"][convert::V1BETA1_PARAMETERS]
                .as_str()
                .unwrap()
        )
        .unwrap(),
        zk1()["spec"]["parameters"]
    );
    // Phase 4: storedVersions cleaned with the CRD's resourceVersion as precondition.
    for p in seen[15..].iter().skip(1).step_by(2) {
        assert_eq!(p.content_type, "application/merge-patch+json");
        assert_eq!(p.body["status"], json!({"storedVersions": ["v1beta2"]}));
        assert!(p.body["metadata"]["resourceVersion"].is_string());
    }

    // The cluster afterwards: everything stored as v1beta2, typed; CRDs store only v1beta2 and
    // still convert through the URL and CA bundle kudo init set.
    for (plural, name) in [
        ("operators", "zookeeper"),
        ("operatorversions", OV),
        ("instances", "zk1"),
    ] {
        assert_eq!(
            stored(&cluster, plural, name).version,
            "v1beta2",
            "{plural}/{name}"
        );
    }
    let zk = stored(&cluster, "instances", "zk1").object;
    assert_eq!(zk["spec"]["parameters"]["NODE_COUNT"], 5);
    assert_eq!(zk["status"], zk1()["status"]);
    for crd in cluster.lock().unwrap().crds.values() {
        assert_eq!(crd["status"]["storedVersions"], json!(["v1beta2"]));
        assert_eq!(
            crd["spec"]["conversion"],
            conversion(crd["spec"]["names"]["kind"].as_str().unwrap())
        );
    }

    // The report, phase by phase.
    assert_eq!(report.preflight.len(), 3);
    let inst_changes = &report.preflight[2].changes;
    assert!(inst_changes.contains(&"/spec/parameters/NODE_COUNT".to_string()));
    assert!(!inst_changes.contains(&"/spec/parameters/MEMORY".to_string()));
    assert_eq!(report.crds.len(), 3);
    assert_eq!(report.crds[1].conversion, "Webhook");
    assert_eq!(report.crds[1].stored_versions, ["v1beta1", "v1beta2"]);
    assert!(
        report
            .rewrite
            .iter()
            .all(|r| matches!(r, Rewrite::Rewritten { attempts: 1, .. }))
    );
    assert_eq!(report.stored_versions.len(), 3);
    assert_eq!(report.stored_versions[2].before, ["v1beta1", "v1beta2"]);
    assert_eq!(report.stored_versions[2].after, ["v1beta2"]);
}

#[tokio::test]
async fn a_value_that_does_not_fit_its_type_aborts_before_any_write() {
    let cluster = old_cluster();
    {
        let mut c = cluster.lock().unwrap();
        c.store(instance("zk2", json!({"NODE_COUNT": "three"})));
        let mut orphan = instance("zk3", json!({}));
        orphan["spec"]["operatorVersion"]["name"] = json!("zookeeper-0.1.0");
        c.store(orphan);
    }
    let err = storage_migration::run(&client(cluster.clone()), &Options::default())
        .await
        .unwrap_err();
    let Error::Preflight(problems) = err else {
        panic!("not a pre-flight error: {err}");
    };
    let got: Vec<(String, ProblemKind)> = problems
        .into_iter()
        .map(|p| (p.object.name, p.kind))
        .collect();
    assert_eq!(
        got,
        [
            (
                "zk2".to_string(),
                ProblemKind::Untyped {
                    parameter: "NODE_COUNT".into(),
                    expected: "integer".into()
                }
            ),
            (
                "zk3".to_string(),
                ProblemKind::MissingOperatorVersion {
                    name: "zookeeper-0.1.0".into()
                }
            ),
        ]
    );
    // Only the three lists: not one write.
    assert_eq!(requests(&cluster), lists());
    assert_eq!(stored(&cluster, "instances", "zk1").version, "v1beta1");
}

#[tokio::test]
async fn a_dry_run_lists_what_would_be_rewritten_and_writes_nothing() {
    let cluster = old_cluster();
    let report = storage_migration::run(&client(cluster.clone()), &Options { dry_run: true })
        .await
        .unwrap();
    assert_eq!(requests(&cluster), lists());
    assert!(report.dry_run);
    let names: Vec<(Kind, &str)> = report
        .preflight
        .iter()
        .map(|p| (p.object.kind, p.object.name.as_str()))
        .collect();
    assert_eq!(
        names,
        [
            (Kind::Operator, "zookeeper"),
            (Kind::OperatorVersion, OV),
            (Kind::Instance, "zk1")
        ]
    );
    assert!(
        report.preflight[0].changes.is_empty(),
        "Operators keep their shape"
    );
    assert!(
        report.preflight[1]
            .changes
            .contains(&"/spec/parameters".to_string())
    );
    assert!(report.crds.is_empty() && report.rewrite.is_empty());
}

#[tokio::test]
async fn a_second_run_rewrites_nothing_and_leaves_stored_versions_alone() {
    let cluster = old_cluster();
    let first = storage_migration::run(&client(cluster.clone()), &Options::default())
        .await
        .unwrap();
    let objects_after_first = cluster.lock().unwrap().objects.clone();
    cluster.lock().unwrap().seen.clear();

    let second: Report = storage_migration::run(&client(cluster.clone()), &Options::default())
        .await
        .unwrap();
    let mut want = lists();
    want.extend(applies());
    assert_eq!(requests(&cluster), want, "no PUT, no status PATCH");
    assert!(
        second
            .rewrite
            .iter()
            .all(|r| matches!(r, Rewrite::AlreadyStored { .. }))
    );
    assert!(second.stored_versions.is_empty());
    // Read through v1beta1 (converted down by the webhook) and up again, every object is
    // found again, and none is written.
    let ids = |r: &Report| {
        r.preflight
            .iter()
            .map(|p| p.object.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(ids(&first), ids(&second));
    let objects = cluster.lock().unwrap().objects.clone();
    for (k, v) in objects_after_first {
        assert_eq!(objects[&k].object, v.object, "{k}");
    }
}

#[tokio::test]
async fn a_conflict_during_the_rewrite_is_retried_on_the_object_read_again() {
    let cluster = old_cluster();
    cluster.lock().unwrap().races.insert(
        format!("{NS}/instances/zk1"),
        // Another client sets NODE_COUNT to 7 between pre-flight and the rewrite.
        |o: &mut Value| o["spec"]["parameters"]["NODE_COUNT"] = json!("7"),
    );
    let report = storage_migration::run(&client(cluster.clone()), &Options::default())
        .await
        .unwrap();
    let mut want = lists();
    want.extend(applies());
    want.extend(rewrite("operators", "zookeeper"));
    want.extend(rewrite("operatorversions", OV));
    want.push(r("PUT", &object_path("v1beta2", "instances", "zk1")));
    want.push(r("GET", &object_path("v1beta1", "instances", "zk1")));
    want.extend(rewrite("instances", "zk1"));
    want.extend(cleanups());
    assert_eq!(requests(&cluster), want);
    let seen = cluster.lock().unwrap().seen.clone();
    let (first, second) = (&seen[13], &seen[15]);
    assert_eq!(first.body["spec"]["parameters"]["NODE_COUNT"], 5);
    assert_eq!(second.body["spec"]["parameters"]["NODE_COUNT"], 7);
    assert_ne!(
        first.body["metadata"]["resourceVersion"],
        second.body["metadata"]["resourceVersion"]
    );
    assert!(matches!(
        report.rewrite[2],
        Rewrite::Rewritten { attempts: 2, .. }
    ));
    let zk = stored(&cluster, "instances", "zk1");
    assert_eq!(zk.version, "v1beta2");
    assert_eq!(zk.object["spec"]["parameters"]["NODE_COUNT"], 7);
}

#[tokio::test]
async fn an_interrupted_run_resumes_where_it_stopped() {
    // The first run stopped after rewriting the Operator and OperatorVersion.
    let cluster = old_cluster();
    {
        let mut c = cluster.lock().unwrap();
        for kind in Kind::ALL {
            let crd = c.crds.get_mut(&kind.crd()).unwrap();
            crd["status"]["storedVersions"] = json!(["v1beta1", "v1beta2"]);
        }
        let (op, ov) = zookeeper_v1beta1();
        c.store(convert::convert(&op, "kudo.dev/v1beta2", &NoTypes).unwrap());
        c.store(convert::convert(&ov, "kudo.dev/v1beta2", &NoTypes).unwrap());
    }
    let ov_before = stored(&cluster, "operatorversions", OV).object;
    storage_migration::run(&client(cluster.clone()), &Options::default())
        .await
        .unwrap();
    assert_eq!(stored(&cluster, "instances", "zk1").version, "v1beta2");
    assert_eq!(
        stored(&cluster, "instances", "zk1").object["spec"]["parameters"]["ENABLE_METRICS"],
        true
    );
    let ov_after = stored(&cluster, "operatorversions", OV).object;
    assert_eq!(ov_after["spec"], ov_before["spec"]);
    assert_eq!(
        ov_after["metadata"]["annotations"],
        ov_before["metadata"]["annotations"]
    );
    let crds = cluster.lock().unwrap().crds.clone();
    assert!(
        crds.values()
            .all(|c| c["status"]["storedVersions"] == json!(["v1beta2"]))
    );
}

#[test]
fn differences_name_the_changed_pointers_never_the_values() {
    let a =
        json!({"spec": {"parameters": {"A": "1", "B/C": "x"}}, "metadata": {"labels": {"l": "1"}}});
    let b = json!({"spec": {"parameters": {"A": 1, "B/C": "x", "D": true}}, "metadata": {}});
    assert_eq!(
        storage_migration::differences(&a, &b),
        [
            "/spec/parameters/A",
            "/spec/parameters/D",
            "/metadata/labels"
        ]
    );
}
