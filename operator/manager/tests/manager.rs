//! The manager's reconcile against a mocked API server: every request's method, path and body
//! is recorded and asserted. The mock answers like a small cluster: discovery for the core,
//! `apps` and `batch` groups, server-side applies that return the object with the status the
//! test gives it, deletes, Instance status and finalizer patches, events.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use kube::runtime::controller::Action;
use kube::runtime::reflector;
use kube::runtime::watcher;
use kudo_crd::package;
use kudo_crd::v1beta2::Instance;
use kudo_manager::{Context, Settings};
use kudo_pkg::Package;
use serde_json::{Value, json};

use kudo_testkit::mock_api;

use mock_api::Seen;

/// The fake cluster's knobs: the status each applied object comes back with (by name), and
/// HTTP errors to answer for some object names.
#[derive(Default)]
struct Cluster {
    statuses: HashMap<String, Value>,
    errors: HashMap<String, (u16, &'static str)>,
    instance: Value,
    /// The Events a list of events returns.
    events: Vec<Value>,
    /// The rights (`create pods/exec`) SelfSubjectAccessReviews deny; every other is allowed.
    denied: Vec<String>,
    /// What a container's log reads.
    log: String,
    /// Status writes give the Instance a new resourceVersion.
    versioned: bool,
    /// What a refusal of `errors` says (default: `refused by the test`).
    refusal: Option<String>,
    /// The ControllerRevisions (the Instance's revisions), as created and patched.
    revisions: Vec<Value>,
    /// The largest status write or revision taken (its body, in bytes); a larger one is
    /// refused as the API server refuses a request larger than etcd takes.
    status_limit: Option<usize>,
    /// By name: the objects applied for real (not dry runs), which a GET returns.
    applied: HashMap<String, Value>,
    /// By name: fields another manager changed since (pointer, value), seen by a GET.
    changed: HashMap<String, Vec<(String, Value)>>,
    /// Objects applied get a resourceVersion (one counter, as etcd's revision), and the
    /// ConfigMaps and Deployments of `ns` can be listed (drift's lists of resourceVersions).
    listed: bool,
    /// The last resourceVersion given ([`Cluster::listed`]).
    revision: u64,
}

struct Fake {
    seen: Arc<Mutex<Vec<Seen>>>,
    cluster: Arc<Mutex<Cluster>>,
}

fn resources(group_version: &str) -> Value {
    let list: &[(&str, &str, bool)] = match group_version {
        "v1" => &[
            ("configmaps", "ConfigMap", true),
            ("services", "Service", true),
            ("pods", "Pod", true),
            ("secrets", "Secret", true),
            ("namespaces", "Namespace", false),
        ],
        "apps/v1" => &[
            ("deployments", "Deployment", true),
            ("statefulsets", "StatefulSet", true),
        ],
        "batch/v1" => &[("jobs", "Job", true)],
        _ => &[],
    };
    json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": group_version,
        "resources": list.iter().map(|(plural, kind, namespaced)| json!({
            "name": plural, "singularName": "", "namespaced": namespaced, "kind": kind,
            "verbs": ["create", "delete", "get", "list", "patch", "update", "watch"]})).collect::<Vec<_>>()})
}

fn status_error(code: u16, reason: &str, message: &str) -> Value {
    json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": message, "reason": reason, "code": code})
}

fn answer(cluster: &mut Cluster, method: &str, path: &str, body: &Value) -> (u16, Value) {
    match (method, path) {
        ("GET", p) if p.ends_with("/controllerrevisions") => (
            200,
            json!({"kind": "ControllerRevisionList", "apiVersion": "apps/v1", "metadata": {},
                "items": cluster.revisions}),
        ),
        ("GET", p) if p.contains("/controllerrevisions/") => {
            let name = p.rsplit('/').next().unwrap_or("");
            match cluster
                .revisions
                .iter()
                .find(|r| r["metadata"]["name"] == name)
            {
                Some(r) => (200, r.clone()),
                None => (404, status_error(404, "NotFound", "not found")),
            }
        }
        ("POST", p) if p.ends_with("/controllerrevisions") => {
            if cluster
                .status_limit
                .is_some_and(|limit| body.to_string().len() > limit)
            {
                let message = "rpc error: code = ResourceExhausted desc = trying to send message larger than max";
                return (500, status_error(500, "", message));
            }
            let name = &body["metadata"]["name"];
            if cluster
                .revisions
                .iter()
                .any(|r| &r["metadata"]["name"] == name)
            {
                return (409, status_error(409, "AlreadyExists", "already exists"));
            }
            cluster.revisions.push(body.clone());
            (201, body.clone())
        }
        ("PATCH", p) if p.contains("/controllerrevisions/") => {
            let name = p.rsplit('/').next().unwrap_or("");
            let Some(r) = cluster
                .revisions
                .iter_mut()
                .find(|r| r["metadata"]["name"] == name)
            else {
                return (404, status_error(404, "NotFound", "not found"));
            };
            json_patch::merge(r, body);
            (200, r.clone())
        }
        ("DELETE", p) if p.contains("/controllerrevisions/") => {
            let name = p.rsplit('/').next().unwrap_or("");
            cluster.revisions.retain(|r| r["metadata"]["name"] != name);
            (
                200,
                json!({"kind": "Status", "apiVersion": "v1", "status": "Success", "metadata": {}}),
            )
        }
        ("GET", "/api/v1") => (200, resources("v1")),
        ("GET", p) if p.starts_with("/apis/") && p.matches('/').count() == 3 => {
            (200, resources(&p["/apis/".len()..]))
        }
        ("POST", p) if p.contains("/events") => (201, body.clone()),
        ("POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews") => {
            let a = &body["spec"]["resourceAttributes"];
            let mut right = format!(
                "{} {}",
                a["verb"].as_str().unwrap_or(""),
                a["resource"].as_str().unwrap_or("")
            );
            if let Some(sub) = a["subresource"].as_str() {
                right = format!("{right}/{sub}");
            }
            let mut review = body.clone();
            review["status"] = json!({"allowed": !cluster.denied.contains(&right)});
            (201, review)
        }
        ("GET", p) if p.ends_with("/events") => (
            200,
            json!({"kind": "EventList", "apiVersion": "v1", "metadata": {}, "items": cluster.events}),
        ),
        ("GET", p) if p.ends_with("/log") => (200, json!(cluster.log)),
        // Drift's lists: what was applied of that kind, as metadata.
        ("GET", p)
            if cluster.listed
                && (p == "/api/v1/namespaces/ns/configmaps"
                    || p == "/apis/apps/v1/namespaces/ns/deployments") =>
        {
            let plural = p.rsplit('/').next().unwrap_or("");
            if let Some((code, reason)) = cluster.errors.get(plural) {
                return (*code, status_error(*code, reason, "refused by the test"));
            }
            let kind = if plural == "configmaps" {
                "ConfigMap"
            } else {
                "Deployment"
            };
            let items: Vec<Value> = cluster
                .applied
                .values()
                .filter(|o| o["kind"] == kind)
                .map(|o| json!({"metadata": o["metadata"]}))
                .collect();
            (
                200,
                json!({"kind": "PartialObjectMetadataList", "apiVersion": "meta.k8s.io/v1",
                    "metadata": {}, "items": items}),
            )
        }
        // What a workload owns: nothing in this cluster.
        ("GET", p) if p.ends_with("/replicasets") || p.ends_with("/pods") => (
            200,
            json!({"kind": "List", "apiVersion": "v1", "metadata": {}, "items": []}),
        ),
        ("PATCH", p) if p.ends_with("/status") && p.contains("/instances/") => {
            let size = body.to_string().len();
            if cluster.status_limit.is_some_and(|limit| size > limit) {
                let message = "rpc error: code = ResourceExhausted desc = trying to send message larger than max";
                return (500, status_error(500, "", message));
            }
            cluster.instance["status"] = body["status"].clone();
            // Each write a new resourceVersion, as etcd's revision (when the test asks).
            if let Some(rv) = cluster.instance["metadata"]["resourceVersion"]
                .as_str()
                .and_then(|v| v.parse::<u64>().ok())
                .filter(|_| cluster.versioned)
            {
                cluster.instance["metadata"]["resourceVersion"] = json!((rv + 1).to_string());
            }
            (200, cluster.instance.clone())
        }
        ("PATCH", p) if p.contains("/instances/") => {
            let patch: json_patch::Patch = serde_json::from_value(body.clone()).unwrap();
            let mut inst = cluster.instance.clone();
            // A failed `test` is a 422 with no cause, as kube-apiserver answers it.
            if json_patch::patch(&mut inst, &patch).is_err() {
                return (
                    422,
                    status_error(
                        422,
                        "Invalid",
                        "the server rejected our request due to an error in our request",
                    ),
                );
            }
            // A change of the spec is a new generation, as the API server counts them.
            if inst["spec"] != cluster.instance["spec"] {
                let g = inst["metadata"]["generation"].as_i64().unwrap_or(0);
                inst["metadata"]["generation"] = json!(g + 1);
            }
            cluster.instance = inst.clone();
            (200, inst)
        }
        (m, p) => {
            let name = p.rsplit('/').next().unwrap_or("").to_string();
            if let Some((code, reason)) = cluster.errors.get(&name) {
                let message = cluster.refusal.as_deref().unwrap_or("refused by the test");
                return (*code, status_error(*code, reason, message));
            }
            match m {
                "PATCH" => {
                    let mut obj = body.clone();
                    obj["metadata"]["generation"] = json!(1);
                    obj["metadata"]["uid"] = json!(format!("uid-{name}"));
                    if cluster.listed {
                        cluster.revision += 1;
                        obj["metadata"]["resourceVersion"] = json!(cluster.revision.to_string());
                    }
                    if let Some(st) = cluster.statuses.get(&name) {
                        obj["status"] = st.clone();
                    }
                    (200, obj)
                }
                "GET" if cluster.applied.contains_key(&name) => {
                    let mut live = cluster.applied[&name].clone();
                    for (at, v) in cluster.changed.get(&name).into_iter().flatten() {
                        if let Some(f) = live.pointer_mut(at) {
                            *f = v.clone();
                        }
                    }
                    (200, live)
                }
                "DELETE" => (
                    200,
                    json!({"kind": "Status", "apiVersion": "v1", "status": "Success", "metadata": {}}),
                ),
                _ => (404, status_error(404, "NotFound", "not found")),
            }
        }
    }
}

impl Fake {
    fn start(instance: &Instance) -> (Fake, kube::Client) {
        let cluster = Arc::new(Mutex::new(Cluster {
            instance: serde_json::to_value(instance).unwrap(),
            ..Default::default()
        }));
        let state = cluster.clone();
        let (client, seen) = mock_api::client("default", move |r| {
            let mut cluster = state.lock().unwrap();
            let answered = answer(&mut cluster, &r.method, &r.path, &r.body);
            let name = r.path.rsplit('/').next().unwrap_or("").to_string();
            let object = !r.path.contains("/instances/") && !r.path.contains("/events");
            if object && r.method == "PATCH" && !r.query.contains("dryRun") && answered.0 == 200 {
                let mut stored = answered.1.clone();
                stored["metadata"]["managedFields"] = json!([{"manager": "kudo-manager"}]);
                cluster.applied.insert(name, stored);
            }
            answered
        });
        (Fake { seen, cluster }, client)
    }

    fn object_status(&self, name: &str, status: Value) {
        self.cluster
            .lock()
            .unwrap()
            .statuses
            .insert(name.into(), status);
    }

    fn event(&self, event: Value) {
        self.cluster.lock().unwrap().events.push(event);
    }

    fn refuse(&self, name: &str, code: u16, reason: &'static str) {
        self.cluster
            .lock()
            .unwrap()
            .errors
            .insert(name.into(), (code, reason));
    }

    /// What revision `i` (in creation order) records.
    fn revision(&self, i: usize) -> kudo_crd::revision::Record {
        let cr = self.cluster.lock().unwrap().revisions[i].clone();
        kudo_crd::revision::read(&serde_json::from_value(cr).unwrap())
            .unwrap()
            .record
    }

    /// The names of the revisions the fake cluster holds, in the order taken.
    fn revision_names(&self) -> Vec<String> {
        self.revisions()
            .iter()
            .map(|r| r["metadata"]["name"].as_str().unwrap_or("").to_string())
            .collect()
    }

    /// The Instance as the fake cluster holds it now (its status as last written).
    fn stored(&self) -> Instance {
        serde_json::from_value(self.cluster.lock().unwrap().instance.clone()).unwrap()
    }

    /// The revisions the fake cluster holds.
    fn revisions(&self) -> Vec<Value> {
        self.cluster.lock().unwrap().revisions.clone()
    }

    fn take(&self) -> Vec<Seen> {
        std::mem::take(&mut self.seen.lock().unwrap())
    }

    /// The requests seen, but for events, access reviews ([`Fake::reviews`]) and revisions
    /// ([`Fake::revisions`]).
    fn calls(seen: &[Seen]) -> Vec<String> {
        seen.iter()
            .filter(|s| {
                !s.path.contains("/events")
                    && !s.path.ends_with("accessreviews")
                    && !s.path.contains("/controllerrevisions")
            })
            .map(|s| format!("{} {}", s.method, s.path))
            .collect()
    }

    /// The rights asked about with SelfSubjectAccessReviews (`create pods/exec`), in order.
    fn reviews(seen: &[Seen]) -> Vec<String> {
        seen.iter()
            .filter(|s| s.path.ends_with("/selfsubjectaccessreviews"))
            .map(|s| {
                let a = &s.body["spec"]["resourceAttributes"];
                let sub = a["subresource"]
                    .as_str()
                    .map(|x| format!("/{x}"))
                    .unwrap_or_default();
                format!(
                    "{} {}{sub} in {}",
                    a["verb"].as_str().unwrap_or(""),
                    a["resource"].as_str().unwrap_or(""),
                    a["namespace"].as_str().unwrap_or("")
                )
            })
            .collect()
    }

    fn events(seen: &[Seen]) -> Vec<(String, String)> {
        seen.iter()
            .filter(|s| s.path.contains("/events") && s.method == "POST")
            .map(|s| {
                (
                    s.body["reason"].as_str().unwrap_or("").to_string(),
                    s.body["note"].as_str().unwrap_or("").to_string(),
                )
            })
            .collect()
    }

    fn last_status(seen: &[Seen]) -> Value {
        seen.iter()
            .rev()
            .find(|s| s.path.ends_with("/status"))
            .map(|s| s.body["status"].clone())
            .expect("a status was written")
    }
}

const OPERATOR: &str = r#"
apiVersion: kudo.dev/v1beta1
name: demo
operatorVersion: 1.0.0
tasks:
- name: config
  kind: Apply
  spec: {resources: [configmap.yaml]}
- name: app
  kind: Apply
  spec: {resources: [deployment.yaml]}
- name: backup
  kind: Apply
  spec: {resources: [job.yaml]}
- name: monitoring
  kind: Toggle
  spec: {resources: [service.yaml], parameter: monitoring}
- name: remove-config
  kind: Delete
  spec: {resources: [configmap.yaml]}
plans:
  deploy:
    strategy: serial
    phases:
    - name: main
      strategy: serial
      steps:
      - {name: config, tasks: [config]}
      - {name: app, tasks: [app, monitoring]}
  backup:
    phases:
    - name: backup
      steps:
      - {name: run, tasks: [backup]}
  cleanup:
    phases:
    - name: cleanup
      steps:
      - {name: wipe, tasks: [remove-config]}
"#;

const PARAMS: &str = r#"
apiVersion: kudo.dev/v1beta2
type: object
properties:
  replicas: {type: integer, default: 1}
  schedule: {type: string, default: daily, trigger: backup}
  monitoring: {type: boolean, default: false}
  token: {type: string, writeOnly: true, minLength: 12}
"#;

fn demo_package() -> Package {
    let mut files = BTreeMap::new();
    files.insert("operator.yaml".to_string(), OPERATOR.as_bytes().to_vec());
    files.insert("params.yaml".to_string(), PARAMS.as_bytes().to_vec());
    for (name, text) in [
        (
            "configmap.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{Name}}-config\ndata:\n  schedule: {{Params.schedule}}\n",
        ),
        (
            "deployment.yaml",
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{Name}}-app\nspec:\n  replicas: {{Params.replicas}}\n",
        ),
        (
            "job.yaml",
            "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: {{Name}}-backup\n",
        ),
        (
            "service.yaml",
            // With the Prometheus operator's ServiceMonitor, a kind this cluster does not serve.
            "apiVersion: v1\nkind: Service\nmetadata:\n  name: {{Name}}-metrics\n---\napiVersion: monitoring.coreos.com/v1\nkind: ServiceMonitor\nmetadata:\n  name: {{Name}}-metrics\n",
        ),
    ] {
        files.insert(format!("templates/{name}"), text.as_bytes().to_vec());
    }
    Package::from_files(Path::new("demo"), files).unwrap()
}

/// The Instance `ns/demo` of demo 1.0.0 with these explicit parameters.
fn instance(params: Value) -> Instance {
    serde_json::from_value(json!({
        "apiVersion": "kudo.dev/v1beta2", "kind": "Instance",
        "metadata": {"name": "demo", "namespace": "ns", "uid": "inst-uid",
            "resourceVersion": "7", "generation": 1},
        "spec": {"operatorVersion": {"name": "demo-1.0.0"}, "parameters": params}}))
    .unwrap()
}

trait Fixture {
    fn finalized(self) -> Self;
    fn with_status(self, status: Value) -> Self;
    fn deleted(self) -> Self;
}

impl Fixture for Instance {
    fn finalized(mut self) -> Self {
        self.metadata.finalizers = Some(vec!["kudo.dev/cleanup".into()]);
        self
    }
    fn with_status(mut self, status: Value) -> Self {
        self.status = Some(serde_json::from_value(status).unwrap());
        self
    }
    fn deleted(mut self) -> Self {
        self.metadata.deletion_timestamp =
            Some(serde_json::from_value(json!("2026-01-01T00:00:00Z")).unwrap());
        self
    }
}

const SETTINGS: Settings = Settings {
    progress: Duration::from_secs(5),
    backoff: Duration::from_secs(2),
    max_backoff: Duration::from_secs(60),
    resync: Duration::from_secs(300),
    forbidden_grace: Duration::ZERO,
    pipe_max_restarts: 3,
    concurrency: 8,
    // Not checked: the tests of plans count every request (see the drift tests).
    drift_interval: Duration::ZERO,
};

fn context(client: kube::Client, with_ov: bool) -> Arc<Context> {
    let (store, mut writer) = reflector::store();
    if with_ov {
        let (_, ov) = package::objects(&demo_package(), "ns");
        writer.apply_watcher_event(&watcher::Event::Apply(ov));
    }
    Arc::new(Context::new(client, store, SETTINGS).with_clock(|| "2026-11-22T00:00:00Z".into()))
}

async fn reconcile(inst: Instance, with_ov: bool) -> (Fake, Action, Vec<Seen>) {
    reconcile_with(inst, with_ov, |_| {}).await
}

async fn reconcile_with(
    inst: Instance,
    with_ov: bool,
    setup: impl FnOnce(&Fake),
) -> (Fake, Action, Vec<Seen>) {
    let (fake, client) = Fake::start(&inst);
    setup(&fake);
    let ctx = context(client, with_ov);
    let action = tokio::time::timeout(
        Duration::from_secs(10),
        kudo_manager::reconcile(Arc::new(inst), ctx),
    )
    .await
    .expect("reconcile finished")
    .expect("reconcile succeeded");
    let seen = fake.take();
    (fake, action, seen)
}

fn step_statuses(status: &Value, plan: &str) -> Vec<(String, String)> {
    status["planStatus"][plan]["phases"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|ph| ph["steps"].as_array().unwrap().iter())
        .map(|s| {
            (
                s["name"].as_str().unwrap().to_string(),
                s["status"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn ready(status: &Value) -> (String, String) {
    let c = status["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == "Ready")
        .unwrap();
    (
        c["status"].as_str().unwrap().to_string(),
        c["reason"].as_str().unwrap().to_string(),
    )
}

/// A copy read before the Instance's last change fails the finalizer patch's resourceVersion
/// test (422): no failed reconcile (it was one warning per Instance deleted during its plan),
/// the watch brings the change.
#[tokio::test]
async fn a_stale_copy_changes_no_finalizer_and_is_no_failure() {
    let inst = instance(json!({}));
    let (fake, client) = Fake::start(&inst);
    fake.cluster.lock().unwrap().instance["metadata"]["resourceVersion"] = json!("8");
    let ctx = context(client, true);
    let action = kudo_manager::reconcile(Arc::new(inst), ctx)
        .await
        .expect("a stale copy is no failure");
    assert_eq!(action, Action::await_change());
    let seen = fake.take();
    assert_eq!(
        Fake::calls(&seen),
        ["PATCH /apis/kudo.dev/v1beta2/namespaces/ns/instances/demo"]
    );
    assert!(
        fake.cluster.lock().unwrap().instance["metadata"]
            .get("finalizers")
            .is_none()
    );
}

#[tokio::test]
async fn a_new_instance_gets_the_cleanup_finalizer_before_anything_runs() {
    let (_, action, seen) = reconcile(instance(json!({})), true).await;
    assert_eq!(action, Action::await_change());
    assert_eq!(
        Fake::calls(&seen),
        ["PATCH /apis/kudo.dev/v1beta2/namespaces/ns/instances/demo"]
    );
    assert_eq!(
        seen[0].body,
        json!([
            {"op": "test", "path": "/metadata/resourceVersion", "value": "7"},
            {"op": "add", "path": "/metadata/finalizers", "value": ["kudo.dev/cleanup"]}
        ])
    );
}

#[tokio::test]
async fn deploy_applies_one_step_after_the_other_and_waits_for_an_unhealthy_deployment() {
    let inst = instance(json!({"replicas": 3})).finalized();
    let (fake, action, seen) = reconcile(inst, true).await;
    assert_eq!(action, Action::requeue(SETTINGS.progress));
    assert_eq!(
        Fake::calls(&seen),
        [
            "GET /api/v1",
            "PATCH /api/v1/namespaces/ns/configmaps/demo-config",
            "PATCH /apis/kudo.dev/v1beta2/namespaces/ns/instances/demo/status",
            "GET /apis/apps/v1",
            "PATCH /apis/apps/v1/namespaces/ns/deployments/demo-app",
            // It waits: what it owns is looked up, for the warnings of its controllers.
            "GET /apis/apps/v1/namespaces/ns/replicasets",
            "GET /api/v1/namespaces/ns/pods",
            "PATCH /apis/kudo.dev/v1beta2/namespaces/ns/instances/demo/status",
        ]
    );
    let config = &seen
        .iter()
        .find(|s| s.path.ends_with("/configmaps/demo-config"))
        .unwrap();
    assert!(
        config.query.contains("fieldManager=kudo-manager"),
        "{}",
        config.query
    );
    assert!(config.query.contains("force=true"));
    assert_eq!(
        config.body,
        json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "demo-config", "namespace": "ns",
                "labels": {"app.kubernetes.io/managed-by": "kudo", "heritage": "kudo", "kudo.dev/instance": "demo",
                    "kudo.dev/operator": "demo", "kudo.dev/operator-version": "demo-1.0.0"},
                "annotations": {"kudo.dev/plan": "deploy", "kudo.dev/phase": "main",
                    "kudo.dev/step": "config"},
                "ownerReferences": [{"apiVersion": "kudo.dev/v1beta2", "kind": "Instance",
                    "name": "demo", "uid": "inst-uid", "controller": true,
                    "blockOwnerDeletion": true}]},
            "data": {"schedule": "daily"}})
    );
    let deployment = seen
        .iter()
        .find(|s| s.path.ends_with("/deployments/demo-app"))
        .unwrap();
    assert_eq!(deployment.body["spec"], json!({"replicas": 3}));
    // The toggle `monitoring` is off: no Service applied, and none deleted either: a Toggle
    // that is off deletes its objects, which the mock answers as already gone.
    let first = &seen
        .iter()
        .find(|s| s.path.ends_with("/status"))
        .unwrap()
        .body;
    assert_eq!(first["apiVersion"], "kudo.dev/v1beta2");
    assert_eq!(
        step_statuses(&first["status"], "deploy"),
        [
            ("config".into(), "COMPLETE".into()),
            ("app".into(), "PENDING".into())
        ]
    );
    let status = Fake::last_status(&seen);
    assert_eq!(
        step_statuses(&status, "deploy"),
        [
            ("config".into(), "COMPLETE".into()),
            ("app".into(), "IN_PROGRESS".into())
        ]
    );
    assert_eq!(
        status["planStatus"]["deploy"]["phases"][0]["steps"][1]["message"],
        "Deployment demo-app: waiting for the controller to see generation 1 (observed 0)"
    );
    assert_eq!(
        status["activePlan"],
        json!({"name": "deploy", "uid": "deploy-g1", "revision": 1, "revisionStatus": "IN_PROGRESS",
            "started": "2026-11-22T00:00:00Z"})
    );
    // The values are in the revision; the status refers to it, with their digest (issue 49).
    let values = json!({"replicas": 3, "schedule": "daily", "monitoring": false});
    assert_eq!(
        status["applied"],
        json!({"operatorVersion": "demo-1.0.0", "revision": 1,
            "digest": kudo_crd::baseline::digest(&values)})
    );
    assert_eq!(fake.revision(0).applied_values(), Some(values));
    assert_eq!(status["observedGeneration"], 1);
    assert_eq!(status["planStatus"]["backup"]["status"], "NEVER_RUN");
    assert_eq!(ready(&status), ("False".into(), "PlanInProgress".into()));
    assert_eq!(
        Fake::events(&seen),
        [(
            "PlanStarted".into(),
            "plan `deploy` started: first deployment".into()
        )]
    );
}

#[tokio::test]
async fn a_restarted_manager_resumes_from_the_status_and_never_reruns_a_completed_step() {
    let inst = instance(json!({"replicas": 3})).finalized();
    let (_, _, seen) = reconcile(inst.clone(), true).await;
    let midway = Fake::last_status(&seen);
    // A new manager process: nothing in memory, only the Instance as stored.
    let (_, action, seen) = reconcile_with(inst.with_status(midway), true, |fake| {
        fake.object_status(
            "demo-app",
            json!({"observedGeneration": 1, "updatedReplicas": 3, "availableReplicas": 3}),
        );
    })
    .await;
    assert_eq!(action, Action::requeue(SETTINGS.resync));
    assert_eq!(
        Fake::calls(&seen),
        [
            "GET /apis/apps/v1",
            "PATCH /apis/apps/v1/namespaces/ns/deployments/demo-app",
            "GET /api/v1",
            "DELETE /api/v1/namespaces/ns/services/demo-metrics",
            // The toggle is off: its ServiceMonitor, a kind the cluster does not serve, has
            // nothing to delete (zookeeper with ENABLE_METRICS=false), and that is no error.
            "GET /apis/monitoring.coreos.com/v1",
            "PATCH /apis/kudo.dev/v1beta2/namespaces/ns/instances/demo/status",
        ],
        "the config step is COMPLETE: its ConfigMap is not applied again"
    );
    let status = Fake::last_status(&seen);
    assert_eq!(status["planStatus"]["deploy"]["status"], "COMPLETE");
    assert_eq!(ready(&status), ("True".into(), "PlanComplete".into()));
    assert_eq!(
        Fake::events(&seen),
        [("PlanComplete".into(), "plan `deploy` complete".into())]
    );
}

fn deployed(params: Value) -> Value {
    json!({
        "planStatus": {"deploy": {"name": "deploy", "status": "COMPLETE", "uid": "deploy-g1",
            "phases": [{"name": "main", "status": "COMPLETE", "steps": [
                {"name": "config", "status": "COMPLETE"}, {"name": "app", "status": "COMPLETE"}]}]},
            "backup": {"name": "backup", "status": "NEVER_RUN", "phases": []},
            "cleanup": {"name": "cleanup", "status": "NEVER_RUN", "phases": []}},
        "activePlan": {"name": "deploy", "uid": "deploy-g1"},
        "applied": {"operatorVersion": "demo-1.0.0", "parameters": params},
        "observedGeneration": 1,
    })
}

#[tokio::test]
async fn an_unchanged_instance_sends_nothing() {
    let params = json!({"replicas": 1, "schedule": "daily", "monitoring": false});
    let mut status = deployed(params);
    status["conditions"] = json!([{"type": "Ready", "status": "True", "reason": "PlanComplete",
        "message": "plan `deploy` is complete", "lastTransitionTime": "2026-11-22T00:00:00Z",
        "observedGeneration": 1}]);
    let inst = instance(json!({})).finalized().with_status(status);
    let (_, action, seen) = reconcile(inst, true).await;
    assert_eq!(action, Action::requeue(SETTINGS.resync));
    assert!(seen.is_empty(), "{seen:?}");
}

/// The watch may deliver an older copy of an Instance than the manager's last status write of
/// it: that copy acts on nothing (a step its write ended would run again), and the next,
/// current one does.
#[tokio::test]
async fn a_copy_older_than_the_last_status_write_acts_on_nothing() {
    let mut inst = instance(json!({})).finalized();
    inst.metadata.resource_version = Some("7".into());
    let (fake, client) = Fake::start(&inst);
    fake.cluster.lock().unwrap().versioned = true;
    let ctx = context(client, true);
    kudo_manager::reconcile(Arc::new(inst.clone()), ctx.clone())
        .await
        .expect("reconcile succeeded");
    assert!(!fake.take().is_empty(), "the first copy runs its plan");
    // The same copy again, as a watch that has not caught up would deliver it.
    let action = kudo_manager::reconcile(Arc::new(inst.clone()), ctx.clone())
        .await
        .expect("reconcile succeeded");
    assert_eq!(action, Action::requeue(Duration::from_secs(1)));
    assert!(fake.take().is_empty(), "an older copy sends nothing");
    // The current copy (what the write returned) is acted on.
    let current: Instance =
        serde_json::from_value(fake.cluster.lock().unwrap().instance.clone()).unwrap();
    kudo_manager::reconcile(Arc::new(current), ctx)
        .await
        .expect("reconcile succeeded");
}

/// The revision's outcome `ended` was written before the status write that says the plan
/// ended: `kudo history` never shows IN_PROGRESS for a run the Instance says ended.
fn revision_ends_before_the_status(seen: &[Seen], ended: &str) {
    let at = |found: &dyn Fn(&Seen) -> bool| seen.iter().position(found);
    let outcome = at(&|s| {
        s.method == "PATCH"
            && s.path.contains("/controllerrevisions/")
            && s.body.to_string().contains(ended)
    })
    .expect("the revision's outcome written");
    let status = at(&|s| {
        s.method == "PATCH" && s.path.ends_with("/status") && s.body.to_string().contains(ended)
    })
    .expect("the status written");
    assert!(outcome < status, "the revision after the status: {seen:?}");
}

#[tokio::test]
async fn a_change_to_a_triggered_parameter_runs_its_plan_and_a_failed_job_is_fatal() {
    let before = json!({"replicas": 1, "schedule": "daily", "monitoring": false});
    let mut inst = instance(json!({"schedule": "hourly"}))
        .finalized()
        .with_status(deployed(before));
    inst.metadata.generation = Some(2);
    let (_, action, seen) = reconcile_with(inst, true, |fake| {
        fake.object_status(
            "demo-backup",
            json!({"conditions": [{"type": "Failed", "status": "True",
                "reason": "BackoffLimitExceeded", "message": "Job has reached the specified backoff limit"}]}),
        );
    })
    .await;
    assert_eq!(action, Action::requeue(SETTINGS.resync));
    assert_eq!(
        Fake::calls(&seen),
        [
            "GET /apis/batch/v1",
            "PATCH /apis/batch/v1/namespaces/ns/jobs/demo-backup",
            "PATCH /apis/kudo.dev/v1beta2/namespaces/ns/instances/demo/status",
        ]
    );
    let status = Fake::last_status(&seen);
    assert_eq!(
        status["activePlan"],
        json!({"name": "backup", "uid": "backup-g2", "revision": 1, "revisionStatus": "FATAL_ERROR",
            "started": "2026-11-22T00:00:00Z"})
    );
    assert_eq!(status["planStatus"]["backup"]["status"], "FATAL_ERROR");
    revision_ends_before_the_status(&seen, "FATAL_ERROR");
    assert_eq!(
        status["planStatus"]["backup"]["message"],
        "backup: run: Job demo-backup: job failed: Job has reached the specified backoff limit"
    );
    assert_eq!(status["planStatus"]["deploy"]["status"], "COMPLETE");
    assert_eq!(ready(&status), ("False".into(), "PlanFailed".into()));
    assert_eq!(
        Fake::events(&seen),
        [
            ("PlanStarted".into(), "plan `backup` started: parameters changed: /schedule".into()),
            (
                "PlanFailed".into(),
                "plan `backup` failed: backup: run: Job demo-backup: job failed: Job has reached the specified backoff limit".into()
            ),
        ]
    );
}

/// The condition `type_` of a status: (status, reason, message).
fn condition(status: &Value, type_: &str) -> (String, String, String) {
    let c = status["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["type"] == type_)
        .cloned()
        .unwrap_or_else(|| panic!("no condition {type_}: {status}"));
    let text = |k: &str| c[k].as_str().unwrap_or_default().to_string();
    (text("status"), text("reason"), text("message"))
}

/// Issue 49: a status that refers to its revision instead of copying the values. An unchanged
/// Instance reads nothing (its digest says so); a change of a triggered parameter reads the
/// values from the revision and runs the trigger's plan, naming what changed; a revision that
/// is gone is said in a Warning event.
#[tokio::test]
async fn a_status_that_refers_to_its_revision_reads_the_values_there_on_a_change() {
    let before = json!({"replicas": 1, "schedule": "daily", "monitoring": false});
    let mut status = deployed(before.clone());
    status["applied"] = json!({"operatorVersion": "demo-1.0.0", "revision": 1,
        "digest": kudo_crd::baseline::digest(&before)});
    status["activePlan"]["revision"] = json!(1);
    status["activePlan"]["revisionStatus"] = json!("COMPLETE");
    let first = kudo_crd::revision::Record {
        time: "2026-11-21T00:00:00Z".into(),
        operator_version: serde_json::from_value(json!({"name": "demo-1.0.0"})).unwrap(),
        parameters: json!({"replicas": 1}),
        applied: Some(kudo_crd::revision::applied_patch(
            &json!({"replicas": 1}),
            &before,
        )),
        plan: "deploy".into(),
        plan_uid: "deploy-g1".into(),
        ..Default::default()
    };
    // Unchanged: nothing read, nothing written.
    let inst = instance(json!({"replicas": 1}))
        .finalized()
        .with_status(status.clone());
    let (fake, client) = Fake::start(&inst);
    let r1 = serde_json::to_value(kudo_crd::revision::object(&inst, 1, &first)).unwrap();
    fake.cluster.lock().unwrap().revisions.push(r1);
    let ctx = context(client, true);
    reconcile_in(&ctx, inst).await;
    let seen = fake.take();
    let read = |seen: &[Seen]| {
        seen.iter()
            .any(|s| s.path.ends_with("/controllerrevisions/demo.r1"))
    };
    assert!(!read(&seen), "the digest says unchanged: nothing read");
    // `schedule` changed: revision 1 read, `backup` runs for /schedule alone.
    let mut inst = instance(json!({"replicas": 1, "schedule": "hourly"}))
        .finalized()
        .with_status(status.clone());
    inst.metadata.generation = Some(2);
    reconcile_in(&ctx, inst).await;
    let seen = fake.take();
    assert!(read(&seen), "revision 1 read");
    let started = Fake::events(&seen);
    assert_eq!(
        started[0],
        (
            "PlanStarted".into(),
            "plan `backup` started: parameters changed: /schedule".into()
        ),
        "{started:?}"
    );
    // The revision gone: said, and every value counts as changed.
    fake.cluster.lock().unwrap().revisions.clear();
    let mut inst = instance(json!({"replicas": 1, "schedule": "hourly"}))
        .finalized()
        .with_status(status);
    inst.metadata.generation = Some(2);
    reconcile_in(&ctx, inst).await;
    let seen = fake.take();
    assert!(
        Fake::events(&seen)
            .iter()
            .any(|(r, n)| r == "RevisionMissing" && n.contains("demo.r1")),
        "{:?}",
        Fake::events(&seen)
    );
}

/// Issue 34: a change whose plan fails, with `onFailure: rollback`, is rolled back to the last
/// revision that completed, by a write the webhook decides as a rollback; when that rollback's
/// own plan fails, remediation stops and says so, with no second rollback.
#[tokio::test]
async fn a_failed_change_is_rolled_back_once_and_a_failed_rollback_stops_there() {
    let before = json!({"replicas": 1, "schedule": "daily", "monitoring": false});
    let mut inst = instance(json!({"schedule": "hourly"}))
        .finalized()
        .with_status(deployed(before));
    inst.metadata.generation = Some(2);
    inst.spec.remediation = Some(serde_json::from_value(json!({"onFailure": "rollback"})).unwrap());
    let (fake, client) = Fake::start(&inst);
    fake.object_status(
        "demo-backup",
        json!({"conditions": [{"type": "Failed", "status": "True",
            "reason": "BackoffLimitExceeded", "message": "Job has reached the specified backoff limit"}]}),
    );
    // Revision 1: the deploy that completed, with no values set.
    let first = kudo_crd::revision::Record {
        time: "2026-11-21T00:00:00Z".into(),
        operator_version: serde_json::from_value(json!({"name": "demo-1.0.0"})).unwrap(),
        parameters: json!({}),
        plan: "deploy".into(),
        plan_uid: "deploy-g1".into(),
        ..Default::default()
    };
    let mut r1 = serde_json::to_value(kudo_crd::revision::object(&inst, 1, &first)).unwrap();
    r1["metadata"]["annotations"]["kudo.dev/plan-status"] = json!("COMPLETE");
    fake.cluster.lock().unwrap().revisions.push(r1);
    let ctx = context(client, true);
    // The change runs `backup`, whose Job fails: revision 2, FATAL_ERROR.
    reconcile_in(&ctx, inst).await;
    fake.take();
    // Looked at again: rolled back to revision 1, through a guarded write naming generation 2.
    reconcile_in(&ctx, fake.stored()).await;
    let seen = fake.take();
    let stored = fake.stored();
    assert_eq!(
        stored.spec.parameters,
        Some(json!({})),
        "revision 1's values"
    );
    assert_eq!(stored.metadata.generation, Some(3));
    assert_eq!(
        stored.metadata.annotations.as_ref().unwrap()["kudo.dev/rollback"],
        "1@2"
    );
    let revisions = fake.revisions();
    assert_eq!(revisions.len(), 2);
    assert_eq!(
        revisions[1]["metadata"]["annotations"]["kudo.dev/plan-status"],
        "FATAL_ERROR"
    );
    let status = Fake::last_status(&seen);
    let (value, reason, message) = condition(&status, "Remediated");
    assert_eq!((value.as_str(), reason.as_str()), ("True", "RolledBack"));
    assert!(message.contains("rolled back to revision 1"), "{message}");
    assert!(
        Fake::events(&seen).iter().any(|(r, _)| r == "RolledBack"),
        "{:?}",
        Fake::events(&seen)
    );
    assert_eq!(status["remediation"]["rollbackGeneration"], 3, "{status}");
    // The rollback runs `backup` again (schedule back to daily), whose Job fails again.
    reconcile_in(&ctx, fake.stored()).await;
    fake.take();
    let revisions = fake.revisions();
    assert_eq!(revisions.len(), 3, "the rollback's revision");
    assert_eq!(revisions[2]["data"]["rollbackOf"], 1);
    assert!(
        revisions[2]["data"]["remediated"]
            .as_str()
            .is_some_and(|r| r.contains("rollback to revision 1 after revision 2 failed")),
        "{}",
        revisions[2]["data"]
    );
    // Remediation stops: no second rollback, and the condition says so.
    reconcile_in(&ctx, fake.stored()).await;
    let seen = fake.take();
    assert!(
        !seen
            .iter()
            .any(|s| s.method == "PATCH" && s.path.ends_with("/instances/demo")),
        "no second rollback: {:?}",
        Fake::calls(&seen)
    );
    let stored = serde_json::to_value(fake.stored().status).unwrap();
    let (value, reason, _) = condition(&stored, "Remediated");
    assert_eq!(
        (value.as_str(), reason.as_str()),
        ("False", "RollbackFailed")
    );
    assert!(
        Fake::events(&seen)
            .iter()
            .any(|(r, _)| r == "RemediationFailed"),
        "{:?}",
        Fake::events(&seen)
    );
}

#[tokio::test]
async fn a_plan_trigger_runs_the_plan_once_under_its_uid() {
    let params = json!({"replicas": 1, "schedule": "daily", "monitoring": false});
    let mut inst = instance(json!({}))
        .finalized()
        .with_status(deployed(params));
    inst.spec.plan_execution =
        Some(serde_json::from_value(json!({"planName": "backup", "uid": "run-42"})).unwrap());
    let (_, _, seen) = reconcile_with(inst, true, |fake| {
        fake.object_status(
            "demo-backup",
            json!({"conditions": [{"type": "Complete", "status": "True"}]}),
        );
    })
    .await;
    let status = Fake::last_status(&seen);
    assert_eq!(
        status["activePlan"],
        json!({"name": "backup", "uid": "run-42", "revision": 1, "revisionStatus": "COMPLETE",
            "started": "2026-11-22T00:00:00Z"})
    );
    revision_ends_before_the_status(&seen, "COMPLETE");
    assert_eq!(status["applied"]["planExecutionUid"], "run-42");
    assert_eq!(status["planStatus"]["backup"]["status"], "COMPLETE");
}

#[tokio::test]
async fn an_invalid_object_is_fatal_and_an_unavailable_api_server_is_retried_with_backoff() {
    let inst = instance(json!({})).finalized();
    let (_, action, seen) = reconcile_with(inst.clone(), true, |fake| {
        fake.refuse("demo-config", 422, "Invalid");
    })
    .await;
    let status = Fake::last_status(&seen);
    assert_eq!(action, Action::requeue(SETTINGS.resync));
    assert_eq!(
        step_statuses(&status, "deploy"),
        [
            ("config".into(), "FATAL_ERROR".into()),
            ("app".into(), "PENDING".into())
        ]
    );
    assert_eq!(
        status["planStatus"]["deploy"]["phases"][0]["steps"][0]["message"],
        "the API server refused ConfigMap demo-config: refused by the test"
    );
    let (_, action, seen) = reconcile_with(inst, true, |fake| {
        fake.refuse("demo-config", 503, "ServiceUnavailable");
    })
    .await;
    let status = Fake::last_status(&seen);
    assert_eq!(action, Action::requeue(SETTINGS.backoff));
    assert_eq!(status["planStatus"]["deploy"]["status"], "ERROR");
    assert_eq!(ready(&status), ("False".into(), "PlanError".into()));
}

#[tokio::test]
async fn deleting_an_instance_runs_cleanup_then_removes_the_finalizer() {
    let params = json!({"replicas": 1, "schedule": "daily", "monitoring": false});
    let inst = instance(json!({}))
        .finalized()
        .with_status(deployed(params))
        .deleted();
    let (_, action, seen) = reconcile(inst, true).await;
    assert_eq!(action, Action::await_change());
    assert_eq!(
        Fake::calls(&seen),
        [
            "GET /api/v1",
            "DELETE /api/v1/namespaces/ns/configmaps/demo-config",
            "PATCH /apis/kudo.dev/v1beta2/namespaces/ns/instances/demo/status",
            "PATCH /apis/kudo.dev/v1beta2/namespaces/ns/instances/demo",
        ]
    );
    let status = Fake::last_status(&seen);
    assert_eq!(status["planStatus"]["cleanup"]["status"], "COMPLETE");
    assert_eq!(status["activePlan"]["name"], "cleanup");
    assert_eq!(
        seen.last().unwrap().body,
        json!([
            {"op": "test", "path": "/metadata/resourceVersion", "value": "7"},
            {"op": "replace", "path": "/metadata/finalizers", "value": []}
        ])
    );
}

/// Every body the manager sent, but the snapshot a plan renders from (`status.applied`,
/// which holds what `spec.parameters` holds, on the same object, under the same RBAC).
fn sent_text(seen: &[Seen]) -> String {
    seen.iter()
        .map(|s| {
            let mut body = s.body.clone();
            if let Some(status) = body.get_mut("status").and_then(Value::as_object_mut) {
                status.remove("applied");
            }
            body.to_string()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test]
async fn a_write_only_value_is_in_no_event_or_status_message() {
    // refused: too short, so the Ready condition and an event carry the diagnostic
    let inst = instance(json!({"token": "TopSecret-1"})).finalized();
    let (_, _, seen) = reconcile(inst, true).await;
    let status = Fake::last_status(&seen);
    assert_eq!(ready(&status).0, "False", "{status}");
    let text = sent_text(&seen);
    assert!(
        text.contains("/token"),
        "the refusal names the parameter: {text}"
    );
    assert!(text.contains("<hidden: writeOnly>"), "{text}");
    assert!(!text.contains("TopSecret-1"), "a secret leaked: {text}");
    // accepted: the plan runs, and nothing the manager says shows the value
    let inst = instance(json!({"token": "TopSecret-2-long-enough"})).finalized();
    let (_, _, seen) = reconcile(inst, true).await;
    assert!(!Fake::events(&seen).is_empty());
    let text = sent_text(&seen);
    assert!(!text.contains("TopSecret-2"), "a secret leaked: {text}");
}

#[tokio::test]
async fn an_instance_of_an_unknown_operator_version_says_so_in_its_status() {
    let inst = instance(json!({})).finalized();
    let (_, action, seen) = reconcile(inst, false).await;
    assert_eq!(action, Action::requeue(SETTINGS.progress * 2));
    assert_eq!(
        Fake::calls(&seen),
        ["PATCH /apis/kudo.dev/v1beta2/namespaces/ns/instances/demo/status"]
    );
    let status = Fake::last_status(&seen);
    assert_eq!(
        ready(&status),
        ("False".into(), "OperatorVersionMissing".into())
    );
}

// ---------------------------------------------------------------------------------------------
// KUDO's Pipe task

const PIPE_OPERATOR: &str = r#"
apiVersion: kudo.dev/v1beta1
name: demo
operatorVersion: 1.0.0
tasks:
- name: gen
  kind: Pipe
  spec:
    pod: gen-pod.yaml
    pipe:
    - {file: /tmp/out/cert.pem, kind: Secret, key: cert}
    - {envFile: /tmp/out/settings.env, kind: ConfigMap, key: settings}
- name: app
  kind: Apply
  spec: {resources: [app.yaml]}
plans:
  deploy:
    phases:
    - name: main
      strategy: serial
      steps:
      - {name: gen, tasks: [gen]}
      - {name: app, tasks: [app]}
"#;

const PIPE_POD: &str = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: ignored\nspec:\n  volumes:\n  - name: out\n    emptyDir: {}\n  initContainers:\n  - name: init\n    image: alpine\n    command: [sh, -c, \"echo {{ .Params.CN }} > /tmp/out/cert.pem\"]\n    volumeMounts:\n    - {name: out, mountPath: /tmp/out}\n";

/// A KUDO package (v1beta1, Go templates) whose deploy plan pipes a Secret and a ConfigMap
/// from a Pod into the next step's template.
fn pipe_package() -> Package {
    let mut files = BTreeMap::new();
    files.insert(
        "operator.yaml".to_string(),
        PIPE_OPERATOR.as_bytes().to_vec(),
    );
    files.insert(
        "params.yaml".to_string(),
        b"apiVersion: kudo.dev/v1beta1\nparameters:\n  - name: CN\n    default: demo.local\n"
            .to_vec(),
    );
    files.insert(
        "templates/gen-pod.yaml".to_string(),
        PIPE_POD.as_bytes().to_vec(),
    );
    files.insert(
        "templates/app.yaml".to_string(),
        b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Name }}-app\ndata:\n  cert: {{ .Pipes.cert }}\n  settings: {{ .Pipes.settings }}\n".to_vec(),
    );
    Package::from_files(Path::new("demo"), files).unwrap()
}

/// Files a Pipe Pod "holds", by path; a path missing is a failed `cat`.
struct Files {
    files: HashMap<String, Result<Vec<u8>, kudo_manager::FileError>>,
    read: Mutex<Vec<String>>,
}

impl kudo_manager::PodFiles for Files {
    fn read<'a>(
        &'a self,
        namespace: &'a str,
        pod: &'a str,
        path: &'a str,
    ) -> futures::future::BoxFuture<'a, Result<Vec<u8>, kudo_manager::FileError>> {
        self.read
            .lock()
            .unwrap()
            .push(format!("{namespace}/{pod}:{path}"));
        let answer = self.files.get(path).cloned().unwrap_or_else(|| {
            Err(kudo_manager::FileError::Failed(format!(
                "cat: can't open '{path}': No such file or directory"
            )))
        });
        Box::pin(async move { answer })
    }
}

/// The body of the PATCH whose path ends with `path`.
fn patched(seen: &[Seen], path: &str) -> Value {
    seen.iter()
        .find(|s| s.method == "PATCH" && s.path.ends_with(path))
        .map(|s| s.body.clone())
        .unwrap_or_else(|| panic!("no PATCH of {path}"))
}

const PIPE_POD_NAME: &str = "demo.deploy.main.gen.gen.pipepod";

async fn reconcile_pipe(files: Arc<Files>, pod_ready: bool) -> (Action, Vec<Seen>) {
    let status = pod_ready
        .then(|| json!({"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}));
    reconcile_pipe_with(files, status, |_| {}).await
}

/// One reconcile of an Instance of [`pipe_package`] whose Pipe Pod has `pod_status`, in a
/// cluster `setup` prepares.
async fn reconcile_pipe_with(
    files: Arc<Files>,
    pod_status: Option<Value>,
    setup: impl FnOnce(&mut Cluster),
) -> (Action, Vec<Seen>) {
    let inst = instance(json!({})).finalized();
    let (fake, client) = Fake::start(&inst);
    if let Some(st) = pod_status {
        fake.object_status(PIPE_POD_NAME, st);
    }
    setup(&mut fake.cluster.lock().unwrap());
    let (store, mut writer) = reflector::store();
    let (_, ov) = package::objects(&pipe_package(), "ns");
    writer.apply_watcher_event(&watcher::Event::Apply(ov));
    let ctx = Arc::new(
        Context::new(client, store, SETTINGS)
            .with_clock(|| "2026-11-22T00:00:00Z".into())
            .with_pod_files(files),
    );
    let action = tokio::time::timeout(
        Duration::from_secs(10),
        kudo_manager::reconcile(Arc::new(inst), ctx),
    )
    .await
    .expect("reconcile finished")
    .expect("reconcile succeeded");
    (action, fake.take())
}

fn files(entries: &[(&str, Result<&[u8], kudo_manager::FileError>)]) -> Arc<Files> {
    Arc::new(Files {
        files: entries
            .iter()
            .map(|(p, r)| (p.to_string(), r.clone().map(<[u8]>::to_vec)))
            .collect(),
        read: Mutex::default(),
    })
}

#[tokio::test]
async fn a_pipe_task_runs_its_pod_copies_its_files_into_artifacts_and_feeds_the_next_step() {
    let pem: &[u8] = b"-----BEGIN CERTIFICATE-----\n";
    let env: &[u8] = b"# generated\nMODE=tls\nPORT=8443\n";
    let ok = files(&[
        ("/tmp/out/cert.pem", Ok(pem)),
        ("/tmp/out/settings.env", Ok(env)),
    ]);

    // The Pod is not Ready yet: applied, with the waiter added, and the step waits.
    let (action, seen) = reconcile_pipe(ok.clone(), false).await;
    assert_eq!(action, Action::requeue(SETTINGS.progress));
    assert_eq!(
        Fake::calls(&seen),
        [
            "GET /api/v1",
            &format!("PATCH /api/v1/namespaces/ns/pods/{PIPE_POD_NAME}"),
            "PATCH /apis/kudo.dev/v1beta2/namespaces/ns/instances/demo/status",
        ]
    );
    // Before the plan applies anything, the rights its Pipe task takes, asked as the
    // Instance's identity.
    assert_eq!(
        Fake::reviews(&seen),
        [
            "create pods in ns",
            "patch pods in ns",
            "get pods in ns",
            "delete pods in ns",
            "create pods/exec in ns",
            "get pods/exec in ns",
            "create secrets in ns",
            "patch secrets in ns",
            "create configmaps in ns",
            "patch configmaps in ns",
        ]
    );
    let body = |path: &str| patched(&seen, path);
    let pod = &body(PIPE_POD_NAME);
    assert_eq!(pod["metadata"]["annotations"]["kudo.dev/pipepod"], "true");
    assert_eq!(pod["metadata"]["ownerReferences"][0]["uid"], "inst-uid");
    assert_eq!(pod["spec"]["containers"][0]["name"], "waiter");
    assert_eq!(pod["spec"]["restartPolicy"], "OnFailure");
    assert!(
        pod["spec"]["initContainers"][0]["command"][2]
            .as_str()
            .unwrap()
            .contains("demo.local")
    );
    let status = Fake::last_status(&seen);
    assert_eq!(
        step_statuses(&status, "deploy"),
        [
            ("gen".into(), "IN_PROGRESS".into()),
            ("app".into(), "PENDING".into())
        ]
    );
    assert!(ok.read.lock().unwrap().is_empty());

    // Ready: every file read from the waiter, an artifact each, the Pod deleted, and the next
    // step renders their names.
    let (action, seen) = reconcile_pipe(ok.clone(), true).await;
    assert_eq!(action, Action::requeue(SETTINGS.resync));
    assert_eq!(
        *ok.read.lock().unwrap(),
        [
            format!("ns/{PIPE_POD_NAME}:/tmp/out/cert.pem"),
            format!("ns/{PIPE_POD_NAME}:/tmp/out/settings.env"),
        ]
    );
    assert_eq!(
        Fake::calls(&seen),
        [
            "GET /api/v1",
            &format!("PATCH /api/v1/namespaces/ns/pods/{PIPE_POD_NAME}"),
            // discovery, once per kind
            "GET /api/v1",
            "PATCH /api/v1/namespaces/ns/secrets/demo.deploy.main.gen.gen.cert",
            "GET /api/v1",
            "PATCH /api/v1/namespaces/ns/configmaps/demo.deploy.main.gen.gen.settings",
            &format!("DELETE /api/v1/namespaces/ns/pods/{PIPE_POD_NAME}"),
            "PATCH /apis/kudo.dev/v1beta2/namespaces/ns/instances/demo/status",
            "PATCH /api/v1/namespaces/ns/configmaps/demo-app",
            "PATCH /apis/kudo.dev/v1beta2/namespaces/ns/instances/demo/status",
        ]
    );
    let body = |path: &str| patched(&seen, path);
    let secret = &body("/secrets/demo.deploy.main.gen.gen.cert");
    assert_eq!(secret["type"], "Opaque");
    assert_eq!(
        secret["data"]["cert.pem"],
        "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg=="
    );
    assert_eq!(secret["metadata"]["ownerReferences"][0]["uid"], "inst-uid");
    assert_eq!(
        body("/configmaps/demo.deploy.main.gen.gen.settings")["data"],
        json!({"MODE": "tls", "PORT": "8443"})
    );
    assert_eq!(
        body("/configmaps/demo-app")["data"],
        json!({"cert": "demo.deploy.main.gen.gen.cert",
            "settings": "demo.deploy.main.gen.gen.settings"})
    );
    let status = Fake::last_status(&seen);
    assert_eq!(status["planStatus"]["deploy"]["status"], "COMPLETE");
}

#[tokio::test]
async fn a_pipe_file_missing_or_too_large_fails_the_step_and_an_unreachable_pod_is_waited_for() {
    use kudo_manager::FileError;
    let pem: &[u8] = b"x";
    for (cert, status, says) in [
        (None, "FATAL_ERROR", "cannot be read: cat: can't open"),
        (
            Some(Err(FileError::TooLarge)),
            "FATAL_ERROR",
            "larger than 1048576 bytes",
        ),
        (
            // No kubelet to exec through (the control plane of the e2e suite): the step
            // waits, naming the file and the Pod.
            Some(Err(FileError::Unreachable("connection reset".into()))),
            "IN_PROGRESS",
            "waiting to read pipe file /tmp/out/cert.pem from Pod demo.deploy.main.gen.gen.pipepod (container waiter, with exec): connection reset",
        ),
    ] {
        let mut entries: Vec<(&str, Result<&[u8], FileError>)> =
            vec![("/tmp/out/settings.env", Ok(pem))];
        if let Some(c) = cert {
            entries.push(("/tmp/out/cert.pem", c));
        }
        let (_, seen) = reconcile_pipe(files(&entries), true).await;
        let st = Fake::last_status(&seen);
        let step = &st["planStatus"]["deploy"]["phases"][0]["steps"][0];
        assert_eq!(step["status"], status, "{step}");
        assert!(step["message"].as_str().unwrap().contains(says), "{step}");
        // Nothing made; a failed step's Pod deleted, a waiting one's left for the next try.
        let calls = Fake::calls(&seen);
        assert!(!calls.iter().any(|c| c.contains("/secrets/")), "{calls:?}");
        let deleted = calls.contains(&format!(
            "DELETE /api/v1/namespaces/ns/pods/{PIPE_POD_NAME}"
        ));
        assert_eq!(deleted, status == "FATAL_ERROR", "{calls:?}");
    }
}

/// A Pipe Pod whose init container keeps failing: the step waits naming it, its exit code and
/// its last log lines (a writeOnly value masked); at `pipe_max_restarts` failures the step is
/// FATAL_ERROR and the Pod deleted.
#[tokio::test]
async fn a_pipe_whose_init_container_keeps_failing_says_why_then_fails_and_goes() {
    let ok = files(&[]);
    let failing = |restarts: i64| {
        json!({"phase": "Pending", "initContainerStatuses": [{"name": "init", "restartCount": restarts,
            "state": {"waiting": {"reason": "CrashLoopBackOff"}},
            "lastState": {"terminated": {"exitCode": 4, "reason": "Error"}}}]})
    };
    for (restarts, status, deleted) in [(1, "IN_PROGRESS", false), (2, "FATAL_ERROR", true)] {
        let (_, seen) = reconcile_pipe_with(ok.clone(), Some(failing(restarts)), |c| {
            c.log = "Connecting to demo.local\nwget: bad address 'demo.local'\n".into();
        })
        .await;
        let st = Fake::last_status(&seen);
        let step = &st["planStatus"]["deploy"]["phases"][0]["steps"][0];
        assert_eq!(step["status"], status, "{step}");
        let message = step["message"].as_str().unwrap();
        let failures = restarts + 1;
        assert!(
            message.contains(&format!(
                "Pod {PIPE_POD_NAME}: init container init: Init:CrashLoopBackOff (exit code 4, failed {failures} times); last log lines: Connecting to demo.local | wget: bad address 'demo.local'"
            )),
            "{message}"
        );
        let calls = Fake::calls(&seen);
        assert!(
            calls.contains(&format!(
                "GET /api/v1/namespaces/ns/pods/{PIPE_POD_NAME}/log"
            )),
            "{calls:?}"
        );
        let gone = calls.contains(&format!(
            "DELETE /api/v1/namespaces/ns/pods/{PIPE_POD_NAME}"
        ));
        assert_eq!(gone, deleted, "{calls:?}");
        if deleted {
            assert!(
                message.contains("failed 3 times (kudo-manager --pipe-max-restarts 3)"),
                "{message}"
            );
        }
    }
}

/// An identity that may not exec into Pods: the plan fails before it applies anything, naming
/// the rights and the Pipe task.
#[tokio::test]
async fn a_pipe_plan_whose_identity_lacks_exec_fails_before_it_applies_anything() {
    let (_, seen) = reconcile_pipe_with(files(&[]), None, |c| {
        c.denied = vec!["create pods/exec".into(), "get pods/exec".into()];
    })
    .await;
    let st = Fake::last_status(&seen);
    assert_eq!(st["planStatus"]["deploy"]["status"], "FATAL_ERROR", "{st}");
    let message = st["planStatus"]["deploy"]["phases"][0]["steps"][0]["message"]
        .as_str()
        .unwrap();
    assert!(
        message.contains(
            "may not create pods/exec, get pods/exec in namespace ns, which Pipe task `gen` needs"
        ) && message.contains("nothing of plan `deploy` was applied"),
        "{message}"
    );
    let calls = Fake::calls(&seen);
    assert!(
        !calls.iter().any(|c| c.starts_with("PATCH /api/")),
        "{calls:?}"
    );
}

/// The zookeeper operator before kudo read manifests as Kubernetes does: the StatefulSet is
/// applied, but its controller cannot create a Pod the API server finds invalid. The step fails
/// with the controller's words at once instead of waiting for a generation it never observes.
#[tokio::test]
async fn a_workload_whose_pods_are_refused_as_invalid_fails_its_step_with_the_reason() {
    let inst = instance(json!({"replicas": 3})).finalized();
    let (_, _, seen) = reconcile_with(inst, true, |f| {
        f.event(json!({"metadata": {"name": "demo-app.1", "namespace": "ns"},
            "involvedObject": {"kind": "Deployment", "name": "demo-app", "uid": "uid-demo-app"},
            "type": "Warning", "reason": "FailedCreate", "count": 12,
            "lastTimestamp": "2026-11-24T18:44:15Z",
            "message": "create Pod demo-app-0 failed error: Pod \"demo-app-0\" is invalid: spec.volumes[1].configMap.defaultMode: Invalid value: 777: must be a number between 0 and 0777 (octal), both inclusive"}));
        // Another object's warning is not this one's.
        f.event(json!({"metadata": {"name": "other.1", "namespace": "ns"},
            "involvedObject": {"kind": "Pod", "name": "other", "uid": "uid-other"},
            "type": "Warning", "reason": "BackOff", "message": "restarting"}));
    })
    .await;
    let last = &seen
        .iter()
        .rev()
        .find(|s| s.path.ends_with("/status"))
        .unwrap()
        .body["status"];
    let app = &last["planStatus"]["deploy"]["phases"][0]["steps"][1];
    assert_eq!(app["status"], "FATAL_ERROR", "{last}");
    let message = app["message"].as_str().unwrap();
    assert!(
        message.starts_with(
            "Deployment demo-app: FailedCreate (Deployment demo-app): create Pod demo-app-0 failed"
        ) && message.contains("Invalid value: 777")
            && !message.contains("restarting"),
        "{message}"
    );
}

/// A manager whose `--default-service-account` is `kudo-instance`, reaching `fake`.
fn tenant_context(client: kube::Client, settings: Settings) -> Arc<Context> {
    let (store, mut writer) = reflector::store();
    let (_, ov) = package::objects(&demo_package(), "ns");
    writer.apply_watcher_event(&watcher::Event::Apply(ov));
    Arc::new(
        Context::new(client, store, settings)
            .with_default_service_account(Some("kudo-instance".into()))
            .with_clock(|| "2026-11-22T00:00:00Z".into()),
    )
}

async fn reconcile_in(ctx: &Arc<Context>, inst: Instance) -> Action {
    tokio::time::timeout(
        Duration::from_secs(10),
        kudo_manager::reconcile(Arc::new(inst), ctx.clone()),
    )
    .await
    .expect("reconcile finished")
    .expect("reconcile succeeded")
}

/// A reconcile of `inst` by a manager whose `--default-service-account` is `kudo-instance`.
async fn reconcile_as_tenant(inst: Instance, setup: impl FnOnce(&Fake)) -> (Action, Vec<Seen>) {
    let (fake, client) = Fake::start(&inst);
    setup(&fake);
    let ctx = tenant_context(client, SETTINGS);
    let action = reconcile_in(&ctx, inst).await;
    (action, fake.take())
}

/// Who each request acted as: `METHOD path as USER` (events left out; the manager's own
/// identity is `manager`).
fn acting(seen: &[Seen]) -> Vec<String> {
    seen.iter()
        .filter(|s| !s.path.contains("/events"))
        .map(|s| {
            let who = if s.impersonate.is_empty() {
                "manager"
            } else {
                s.impersonate.as_str()
            };
            format!("{} {} as {who}", s.method, s.path)
        })
        .collect()
}

#[tokio::test]
async fn objects_are_applied_as_the_instance_service_account_and_status_as_the_manager() {
    let (_, seen) = reconcile_as_tenant(instance(json!({})).finalized(), |_| {}).await;
    let tenant = "system:serviceaccount:ns:kudo-instance";
    assert_eq!(
        acting(&seen),
        [
            // The run's revision: the manager's own bookkeeping, with its own identity. The
            // first run's is number 1 without a list (issue 49).
            "POST /apis/apps/v1/namespaces/ns/controllerrevisions as manager".to_string(),
            "GET /api/v1 as manager".into(),
            format!("PATCH /api/v1/namespaces/ns/configmaps/demo-config as {tenant}"),
            "PATCH /apis/kudo.dev/v1beta2/namespaces/ns/instances/demo/status as manager".into(),
            "GET /apis/apps/v1 as manager".into(),
            format!("PATCH /apis/apps/v1/namespaces/ns/deployments/demo-app as {tenant}"),
            format!("GET /apis/apps/v1/namespaces/ns/replicasets as {tenant}"),
            format!("GET /api/v1/namespaces/ns/pods as {tenant}"),
            "PATCH /apis/kudo.dev/v1beta2/namespaces/ns/instances/demo/status as manager".into(),
        ]
    );
    // The manager publishes its events itself; it reads the namespace's events (why a
    // Deployment waits) as the ServiceAccount.
    let events: Vec<(&str, &str)> = seen
        .iter()
        .filter(|s| s.path.contains("/events"))
        .map(|s| (s.method.as_str(), s.impersonate.as_str()))
        .collect();
    assert!(events.contains(&("POST", "")), "{events:?}");
    assert!(
        events
            .iter()
            .all(|(m, who)| (*m == "GET") == (*who == tenant)),
        "{events:?}"
    );
    // spec.serviceAccountName wins over the default.
    let mut named = instance(json!({})).finalized();
    named.spec.service_account_name = Some("deployer".into());
    let (_, seen) = reconcile_as_tenant(named, |_| {}).await;
    let config = seen
        .iter()
        .find(|s| s.path.ends_with("/configmaps/demo-config"))
        .unwrap();
    assert_eq!(config.impersonate, "system:serviceaccount:ns:deployer");
}

#[tokio::test]
async fn a_step_rbac_refuses_is_retried_for_the_grace_then_fails_naming_the_object_and_account() {
    let inst = instance(json!({})).finalized();
    let (fake, client) = Fake::start(&inst);
    fake.refuse("demo-config", 403, "Forbidden");
    // No grace: the first refusal is retried, the next fails the plan.
    let ctx = tenant_context(client, SETTINGS);
    let action = reconcile_in(&ctx, inst.clone()).await;
    let first = Fake::last_status(&fake.take());
    let message =
        "ServiceAccount ns/kudo-instance may not apply ConfigMap demo-config: refused by the test";
    assert_eq!(action, Action::requeue(SETTINGS.backoff));
    assert_eq!(first["planStatus"]["deploy"]["status"], "ERROR");
    assert_eq!(
        first["planStatus"]["deploy"]["phases"][0]["steps"][0]["message"],
        message
    );
    // Refused again, the grace over: the plan fails.
    let action = reconcile_in(&ctx, inst.clone().with_status(first.clone())).await;
    let second = Fake::last_status(&fake.take());
    assert_eq!(action, Action::requeue(SETTINGS.resync));
    assert_eq!(
        step_statuses(&second, "deploy"),
        [
            ("config".into(), "FATAL_ERROR".into()),
            ("app".into(), "PENDING".into())
        ]
    );
    assert_eq!(
        second["planStatus"]["deploy"]["phases"][0]["steps"][0]["message"],
        message
    );
    assert_eq!(ready(&second), ("False".into(), "PlanFailed".into()));
    // Within the grace, a refusal is retried again and again.
    let (fake, client) = Fake::start(&inst);
    fake.refuse("demo-config", 403, "Forbidden");
    let patient = Settings {
        forbidden_grace: Duration::from_secs(3600),
        ..SETTINGS
    };
    let ctx = tenant_context(client, patient);
    reconcile_in(&ctx, inst.clone()).await;
    let first = Fake::last_status(&fake.take());
    let action = reconcile_in(&ctx, inst.with_status(first)).await;
    assert_ne!(action, Action::requeue(SETTINGS.resync));
    let seen = fake.take();
    // Nothing changed: no status written, and the step is still ERROR.
    assert!(
        !seen.iter().any(|s| s.path.ends_with("/status")),
        "{seen:?}"
    );
}

#[tokio::test]
async fn a_service_account_name_that_is_not_one_fails_the_plan_without_a_request() {
    let mut inst = instance(json!({})).finalized();
    inst.spec.service_account_name = Some("other:cluster-admin".into());
    let (_, seen) = reconcile_as_tenant(inst, |_| {}).await;
    assert!(seen.iter().all(|s| s.impersonate.is_empty()));
    assert!(!seen.iter().any(|s| s.path.contains("/configmaps/")));
    let status = Fake::last_status(&seen);
    assert_eq!(status["planStatus"]["deploy"]["status"], "FATAL_ERROR");
    assert_eq!(
        status["planStatus"]["deploy"]["phases"][0]["steps"][0]["message"],
        "spec.serviceAccountName `other:cluster-admin` is not a ServiceAccount name (lower-case letters, digits, `-` and `.`, at most 253 characters)"
    );
}

/// The size of each status write in `seen` (its body, in bytes).
fn status_sizes(seen: &[Seen]) -> Vec<usize> {
    seen.iter()
        .filter(|s| s.path.ends_with("/status"))
        .map(|s| s.body.to_string().len())
        .collect()
}

/// Issue 49: a huge value (1 MB) is recorded once, in the revision; the status refers to it
/// by number and digest instead of carrying a second copy, so it stays small.
#[tokio::test]
async fn a_huge_value_is_kept_in_the_revision_and_not_copied_into_the_status() {
    let huge = "x".repeat(1024 * 1024);
    let inst = instance(json!({"schedule": huge})).finalized();
    let (fake, client) = Fake::start(&inst);
    let ctx = context(client, true);
    reconcile_in(&ctx, inst).await;
    let seen = fake.take();
    let writes = status_sizes(&seen);
    assert!(writes.iter().all(|w| *w < 16 * 1024), "{writes:?}");
    let status = Fake::last_status(&seen);
    assert_eq!(status["applied"]["revision"], 1, "{}", status["applied"]);
    assert!(status["applied"]["parameters"].is_null());
    let revision = fake.revision(0);
    let applied = revision
        .applied_values()
        .expect("the values the plan ran with");
    assert_eq!(applied["schedule"], json!(huge));
    assert_eq!(
        status["applied"]["digest"],
        kudo_crd::baseline::digest(&applied)
    );
    // Stored once: the revision's patch to its parameters holds the defaults, not the value.
    let size = serde_json::to_string(&revision.applied).unwrap().len();
    assert!(size < 1024, "{size} bytes");
}

/// Issue 38 item 5: an object refused with an error that echoes a huge value (the CronJob
/// `schedule` of 1 MB), and a status the API server then refuses as too large (the revision
/// is refused as too large too, so `status.applied` keeps the value): the status written
/// instead says why in bounded messages, and the next reconcile does not start the plan again.
#[tokio::test]
async fn a_huge_refusal_is_cut_and_a_refused_status_is_replaced_by_one_saying_why() {
    let huge = "x".repeat(1024 * 1024);
    let inst = instance(json!({"schedule": huge})).finalized();
    let (fake, client) = Fake::start(&inst);
    fake.refuse("demo-config", 422, "Invalid");
    {
        let mut c = fake.cluster.lock().unwrap();
        c.refusal = Some(format!(
            "ConfigMap \"demo-config\" is invalid: data.schedule: Invalid value: \"{huge}\": too long, found: {huge}"
        ));
        c.status_limit = Some(512 * 1024);
    }
    let ctx = context(client, true);
    let action = reconcile_in(&ctx, inst).await;
    assert_eq!(action, Action::requeue(SETTINGS.resync));
    let seen = fake.take();
    let writes = status_sizes(&seen);
    assert_eq!(
        writes.len(),
        2,
        "the full status, then the smaller: {writes:?}"
    );
    assert!(
        writes[0] > 512 * 1024 && writes[1] < 32 * 1024,
        "{writes:?}"
    );
    let status = Fake::last_status(&seen);
    assert!(status["applied"].is_null(), "{}", status["applied"]);
    let step = status["planStatus"]["deploy"]["phases"][0]["steps"][0].clone();
    assert_eq!(step["status"], "FATAL_ERROR");
    let message = step["message"].as_str().unwrap();
    assert!(message.len() <= 4096, "{} bytes", message.len());
    for says in [
        "the API server refused ConfigMap demo-config",
        "data.schedule: Invalid value",
        "too long, found",
        "bytes cut",
    ] {
        assert!(message.contains(says), "{says:?} not in {message}");
    }
    let recorded = status["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == "Recorded")
        .cloned()
        .expect("a Recorded condition");
    assert_eq!(recorded["status"], "False");
    assert_eq!(recorded["reason"], "StatusRefused");
    assert!(
        recorded["message"]
            .as_str()
            .unwrap()
            .contains("HTTP 500: rpc error: code = ResourceExhausted"),
        "{recorded}"
    );
    for (reason, note) in Fake::events(&seen) {
        assert!(note.len() <= 1024, "event {reason}: {} bytes", note.len());
    }
    assert!(
        Fake::events(&seen)
            .iter()
            .any(|(r, _)| r == "StatusRefused"),
        "{:?}",
        Fake::events(&seen)
    );
    // Looked at again (the write's own watch event), twice: the run the status holds is not
    // started again, nothing is applied or written. (Its revision, which would hold the
    // 1 MB value, is larger than the API server takes too: the run has none, and the status's
    // Recorded condition says why.)
    for _ in 0..2 {
        let action = reconcile_in(&ctx, fake.stored()).await;
        assert_eq!(action, Action::requeue(SETTINGS.resync));
        let seen = fake.take();
        assert_eq!(
            Fake::calls(&seen),
            Vec::<String>::new(),
            "nothing applied, nothing written"
        );
        assert!(Fake::events(&seen).is_empty(), "{:?}", Fake::events(&seen));
    }
}

/// A step that keeps failing the same way is retried later each time (2 s, 4 s, 8 s…, up to
/// the cap); a different failure starts again from the first delay.
#[tokio::test]
async fn a_step_failing_the_same_way_backs_off_and_a_new_failure_starts_again() {
    let inst = instance(json!({})).finalized();
    let (fake, client) = Fake::start(&inst);
    fake.refuse("demo-config", 503, "ServiceUnavailable");
    let ctx = context(client, true);
    let mut delays = Vec::new();
    for _ in 0..7 {
        let action = reconcile_in(&ctx, fake.stored()).await;
        delays.push(action);
    }
    let s = Duration::from_secs;
    let want: Vec<Action> = [2, 4, 8, 16, 32, 60, 60]
        .into_iter()
        .map(|n| Action::requeue(s(n)))
        .collect();
    assert_eq!(delays, want);
    fake.take();
    // The same step now fails otherwise: a new failure, retried soon.
    fake.refuse("demo-config", 500, "InternalError");
    let action = reconcile_in(&ctx, fake.stored()).await;
    assert_eq!(action, Action::requeue(SETTINGS.backoff));
    // The plan was started once, by the first reconcile.
    assert!(Fake::events(&fake.take()).is_empty());
}

/// A COMPLETE Instance checked for drift every minute, its `spec.drift` as given, in `fake`.
async fn drift_round(fake: &Fake, ctx: &Arc<Context>, generation: i64, drift: Value) -> Action {
    let mut status = deployed(json!({"replicas": 1, "schedule": "daily", "monitoring": false}));
    let conditions = fake.cluster.lock().unwrap().instance["status"]["conditions"].clone();
    if conditions.is_array() {
        status["conditions"] = conditions;
    }
    let mut inst = instance(json!({})).finalized().with_status(status);
    inst.metadata.generation = Some(generation);
    inst.spec.drift = serde_json::from_value(drift).unwrap();
    reconcile_in(ctx, inst).await
}

fn drifted(fake: &Fake) -> (String, String, String) {
    let st = fake.stored().status.unwrap_or_default();
    let c = st.conditions.iter().find(|c| c.type_ == "Drifted");
    let c = c.expect("a Drifted condition");
    (
        c.status.clone(),
        c.reason.clone().unwrap_or_default(),
        c.message.clone().unwrap_or_default(),
    )
}

/// Drift, against the fake API server: deleted objects reported under warn (dry runs only),
/// applied again under correct (an Event, no plan), a field another manager changed named,
/// ignored by a rule; the next check waits for the interval unless spec.drift changes.
#[tokio::test]
async fn drift_is_reported_under_warn_corrected_under_correct_and_ignored_by_a_rule() {
    let inst = instance(json!({})).finalized();
    let (fake, client) = Fake::start(&inst);
    let settings = Settings {
        drift_interval: Duration::from_secs(60),
        ..SETTINGS
    };
    let ctx = tenant_context(client, settings);

    // warn (absent): both objects of deploy are gone; only dry runs, as the tenant.
    let action = drift_round(&fake, &ctx, 1, json!(null)).await;
    // Checked every three quarters of the interval: the lists of resourceVersions the checks
    // share may be a quarter of it old, and a change is still seen within the interval.
    assert_eq!(action, Action::requeue(Duration::from_secs(45)));
    let seen = fake.take();
    let patches: Vec<&Seen> = seen
        .iter()
        .filter(|s| s.method == "PATCH" && !s.path.contains("/instances/"))
        .collect();
    assert_eq!(patches.len(), 2, "{seen:?}");
    for p in &patches {
        assert!(p.query.contains("dryRun=All"), "{p:?}");
        assert!(p.query.contains("fieldManager=kudo-manager"), "{p:?}");
        assert!(p.query.contains("force=true"), "{p:?}");
        assert_eq!(
            p.impersonate, "system:serviceaccount:ns:kudo-instance",
            "{p:?}"
        );
    }
    assert_eq!(
        drifted(&fake),
        (
            "True".into(),
            "Drifted".into(),
            "ConfigMap demo-config: deleted; Deployment demo-app: deleted".into()
        )
    );
    let events = Fake::events(&seen);
    assert!(
        events
            .iter()
            .any(|(r, n)| r == "Drifted" && n.contains("Deployment demo-app: deleted")),
        "{events:?}"
    );

    // Not due yet (same generation): nothing is sent.
    drift_round(&fake, &ctx, 1, json!(null)).await;
    assert!(Fake::calls(&fake.take()).is_empty());

    // correct (a new generation: due at once): applied for real, an Event, no plan.
    drift_round(&fake, &ctx, 2, json!({"mode": "correct"})).await;
    let seen = fake.take();
    let real: Vec<String> = seen
        .iter()
        .filter(|s| s.method == "PATCH" && !s.path.contains("/instances/"))
        .filter(|s| !s.query.contains("dryRun"))
        .map(|s| s.path.clone())
        .collect();
    assert_eq!(
        real,
        [
            "/api/v1/namespaces/ns/configmaps/demo-config",
            "/apis/apps/v1/namespaces/ns/deployments/demo-app"
        ]
    );
    let (value, reason, _) = drifted(&fake);
    assert_eq!(
        (value.as_str(), reason.as_str()),
        ("False", "DriftCorrected")
    );
    let events = Fake::events(&seen);
    assert!(
        events.iter().any(|(r, _)| r == "DriftCorrected"),
        "{events:?}"
    );
    assert!(
        !events.iter().any(|(r, _)| r == "PlanStarted"),
        "{events:?}"
    );

    // Nothing drifted now.
    drift_round(&fake, &ctx, 3, json!(null)).await;
    let (value, reason, _) = drifted(&fake);
    assert_eq!((value.as_str(), reason.as_str()), ("False", "NoDrift"));

    // Another manager scales the Deployment: named with its field.
    fake.cluster
        .lock()
        .unwrap()
        .changed
        .insert("demo-app".into(), vec![("/spec/replicas".into(), json!(5))]);
    drift_round(&fake, &ctx, 4, json!({"mode": "warn"})).await;
    assert_eq!(
        drifted(&fake),
        (
            "True".into(),
            "Drifted".into(),
            "Deployment demo-app: /spec/replicas".into()
        )
    );

    // Ignored by a rule: no drift.
    let rule = json!({"ignore": [{"kind": "Deployment", "pointers": ["/spec/replicas"]}]});
    drift_round(&fake, &ctx, 5, rule).await;
    let (value, reason, _) = drifted(&fake);
    assert_eq!((value.as_str(), reason.as_str()), ("False", "NoDrift"));

    // ignore: not checked, the condition removed.
    fake.take();
    drift_round(&fake, &ctx, 6, json!({"mode": "ignore"})).await;
    let seen = fake.take();
    assert!(
        !seen
            .iter()
            .any(|s| s.method == "PATCH" && !s.path.contains("/instances/")),
        "{seen:?}"
    );
    let st = fake.stored().status.unwrap_or_default();
    assert!(!st.conditions.iter().any(|c| c.type_ == "Drifted"));
}

/// Issue 49: a run's revision is numbered from the status, without a list of the namespace's
/// ControllerRevisions (which reads them all from etcd); a number already taken (here by a
/// revision an Instance of the same name left) is a conflict, and then the revisions are
/// listed and the next free number taken. The run after it is numbered from the status again,
/// and listed only to prune past `spec.historyLimit`.
#[tokio::test]
async fn a_revision_is_numbered_from_the_status_and_listed_only_on_a_conflict() {
    let inst = instance(json!({})).finalized();
    let revision_requests = |seen: &[Seen]| -> Vec<String> {
        seen.iter()
            .filter(|s| s.path.contains("/controllerrevisions") && s.method != "PATCH")
            .map(|s| format!("{} {}", s.method, s.path.rsplit('/').next().unwrap_or("")))
            .collect()
    };
    // A first run: revision 1, nothing listed.
    let (fake, _, seen) = reconcile(inst.clone(), true).await;
    assert_eq!(
        revision_requests(&seen),
        ["POST controllerrevisions"],
        "{seen:?}"
    );
    assert_eq!(fake.revisions()[0]["metadata"]["name"], "demo.r1");
    let mut left = fake.revisions()[0].clone();
    left["data"]["planUid"] = json!("deploy-g7");

    // demo.r1 left by another Instance named demo: taken, so listed, and number 2.
    let (fake, _, seen) = reconcile_with(inst.clone(), true, |fake| {
        fake.cluster.lock().unwrap().revisions.push(left);
    })
    .await;
    assert_eq!(
        revision_requests(&seen),
        [
            "POST controllerrevisions",
            "GET controllerrevisions",
            "POST controllerrevisions"
        ],
        "{seen:?}"
    );
    assert_eq!(fake.revision_names(), ["demo.r1", "demo.r2"]);

    // A change: its run follows the revision the status names (2), unlisted (that revision
    // is read by name: the values it ran with, to know what changed).
    let done = fake.stored();
    let mut changed = done.clone();
    changed.spec.parameters = Some(json!({"replicas": 4}));
    changed.spec.history_limit = Some(2);
    changed.metadata.generation = Some(2);
    let revisions = fake.revisions();
    let (fake, _, seen) = reconcile_with(changed, true, |fake| {
        fake.cluster.lock().unwrap().revisions = revisions;
    })
    .await;
    assert_eq!(
        revision_requests(&seen),
        // Past spec.historyLimit (2): listed, and the oldest deleted.
        [
            "GET demo.r2",
            "POST controllerrevisions",
            "GET controllerrevisions",
            "DELETE demo.r1"
        ],
        "{seen:?}"
    );
    assert_eq!(fake.revision_names(), ["demo.r2", "demo.r3"]);
}

/// A fake cluster whose objects have resourceVersions and can be listed, the Deployments
/// `ready` healthy, a manager checking drift every `drift_interval`, and the Instance to deploy.
fn listed_deploy(drift_interval: Duration, ready: &[&str]) -> (Fake, Arc<Context>, Instance) {
    let healthy = json!({"observedGeneration": 1, "updatedReplicas": 3, "availableReplicas": 3});
    let inst = instance(json!({"replicas": 3})).finalized();
    let (fake, client) = Fake::start(&inst);
    fake.cluster.lock().unwrap().listed = true;
    for name in ready {
        fake.object_status(name, healthy.clone());
    }
    let settings = Settings {
        drift_interval,
        ..SETTINGS
    };
    (fake, tenant_context(client, settings), inst)
}

/// Issue 49: what a plan's steps applied is known to hold what kudo applied (the API server's
/// answer): drift's first check after a deploy dry-runs nothing, even when the shared list of
/// resourceVersions was sent before the apply; an object changed since (a list sent later
/// shows another resourceVersion, or none) is dry-run, and only it.
#[tokio::test]
async fn drift_trusts_what_a_plan_just_applied_and_dry_runs_only_what_changed_since() {
    let dry_runs = |seen: &[Seen]| -> Vec<String> {
        seen.iter()
            .filter(|s| s.method == "PATCH" && s.query.contains("dryRun"))
            .map(|s| s.path.clone())
            .collect()
    };
    // Lists shared for a quarter of the interval (a minute: longer than this test).
    let (fake, ctx, inst) = listed_deploy(Duration::from_secs(60), &["demo-app", "other-app"]);

    // The deploy runs to COMPLETE, then drift's first check: the lists are sent after the
    // applies and show what they answered.
    reconcile_in(&ctx, inst).await;
    let seen = fake.take();
    assert!(
        seen.iter()
            .any(|s| s.method == "GET" && s.path == "/api/v1/namespaces/ns/configmaps"),
        "{seen:?}"
    );
    assert_eq!(dry_runs(&seen), Vec::<String>::new());
    let (value, reason, message) = drifted(&fake);
    assert_eq!(
        (value.as_str(), reason.as_str()),
        ("False", "NoDrift"),
        "{message}"
    );
    assert!(message.starts_with("the 2 object(s)"), "{message}");
    // Said in the write that says COMPLETE, and nothing written after it.
    let writes: Vec<&Value> = seen
        .iter()
        .filter(|s| s.method == "PATCH" && s.path.ends_with("/status"))
        .map(|s| &s.body["status"])
        .collect();
    let complete = writes
        .iter()
        .position(|st| st["planStatus"]["deploy"]["status"] == "COMPLETE")
        .expect("COMPLETE written");
    assert_eq!(complete, writes.len() - 1, "{writes:?}");
    let drifted_in = |st: &Value| {
        st["conditions"]
            .as_array()
            .is_some_and(|c| c.iter().any(|c| c["type"] == "Drifted"))
    };
    assert!(drifted_in(writes[complete]), "{:?}", writes[complete]);

    // Another Instance deployed next: the lists its check reads were sent before its applies
    // (shared, not sent again) and do not hold its objects; nothing newer can be known from
    // them, so what it applied is trusted until the next list.
    let mut other = instance(json!({"replicas": 3})).finalized();
    other.metadata.name = Some("other".into());
    other.metadata.uid = Some("other-uid".into());
    reconcile_in(&ctx, other).await;
    let seen = fake.take();
    assert!(
        !seen
            .iter()
            .any(|s| s.method == "GET" && s.path.ends_with("/configmaps")),
        "the list is shared: {seen:?}"
    );
    assert_eq!(dry_runs(&seen), Vec::<String>::new());
}

/// Issue 49: an object changed after kudo applied it (a list sent later shows another
/// resourceVersion, or no object) is dry-run at the next check, and only it.
#[tokio::test]
async fn drift_dry_runs_an_applied_object_a_later_list_shows_changed() {
    // Checked every 30 ms against lists at most 10 ms old.
    let (fake, ctx, inst) = listed_deploy(Duration::from_millis(40), &["demo-app"]);
    reconcile_in(&ctx, inst).await;
    fake.take();
    // Someone deletes the ConfigMap.
    fake.cluster.lock().unwrap().applied.remove("demo-config");
    tokio::time::sleep(Duration::from_millis(50)).await;
    reconcile_in(&ctx, fake.stored()).await;
    let seen = fake.take();
    let dry: Vec<&str> = seen
        .iter()
        .filter(|s| s.method == "PATCH" && s.query.contains("dryRun"))
        .map(|s| s.path.as_str())
        .collect();
    assert_eq!(
        dry,
        ["/api/v1/namespaces/ns/configmaps/demo-config"],
        "{seen:?}"
    );
    assert_eq!(
        drifted(&fake),
        (
            "True".into(),
            "Drifted".into(),
            "ConfigMap demo-config: deleted".into()
        )
    );
}

/// Issue 49: a list of resourceVersions the API server does not answer (restarting) leaves its
/// objects unchecked until the next check, which compares them with what was known before:
/// forgotten, each would be dry-run then.
#[tokio::test]
async fn a_failed_list_keeps_what_drift_knew_of_its_objects() {
    let dry_runs = |seen: &[Seen]| -> usize {
        seen.iter()
            .filter(|s| s.method == "PATCH" && s.query.contains("dryRun"))
            .count()
    };
    let (fake, ctx, inst) = listed_deploy(Duration::from_millis(40), &["demo-app"]);
    reconcile_in(&ctx, inst).await;
    assert_eq!(dry_runs(&fake.take()), 0);
    // The ConfigMaps cannot be listed for one check: not compared, and no dry run.
    fake.refuse("configmaps", 500, "InternalError");
    tokio::time::sleep(Duration::from_millis(50)).await;
    reconcile_in(&ctx, fake.stored()).await;
    assert_eq!(dry_runs(&fake.take()), 0);
    let (value, _, message) = drifted(&fake);
    assert!(
        message.contains("not compared: ConfigMap demo-config"),
        "{value}: {message}"
    );
    // Listed again, unchanged: still no dry run.
    fake.cluster.lock().unwrap().errors.clear();
    tokio::time::sleep(Duration::from_millis(50)).await;
    reconcile_in(&ctx, fake.stored()).await;
    let seen = fake.take();
    assert_eq!(dry_runs(&seen), 0, "{seen:?}");
    let (value, reason, _) = drifted(&fake);
    assert_eq!((value.as_str(), reason.as_str()), ("False", "NoDrift"));
}

/// An Instance at generation 2 whose `replicas` changed since its deploy, with `spec.window`
/// as given and the annotations given.
fn changed_with_window(window: Value, annotations: Value) -> Instance {
    let mut inst = instance(json!({"replicas": 3}))
        .finalized()
        .with_status(deployed(
            json!({"replicas": 1, "schedule": "daily", "monitoring": false}),
        ));
    inst.metadata.generation = Some(2);
    inst.spec.window = serde_json::from_value(window).unwrap();
    inst.metadata.annotations = serde_json::from_value(annotations).unwrap();
    inst
}

/// Open only in the first minute of every 29 February: closed whenever this test runs.
fn closed_window() -> Value {
    json!({"schedule": "0 0 29 2 *", "duration": "1m"})
}

/// Issue 48: a change outside the Instance's maintenance window starts no plan and applies
/// nothing; `status.awaitingWindow` says which run waits and when the window opens.
#[tokio::test]
async fn a_change_outside_the_window_is_held_and_applies_nothing() {
    let inst = changed_with_window(closed_window(), json!(null));
    let (fake, _, seen) = reconcile(inst, true).await;
    let applies: Vec<&Seen> = seen
        .iter()
        .filter(|s| s.method == "PATCH" && !s.path.contains("/instances/"))
        .collect();
    assert!(applies.is_empty(), "{applies:?}");
    let events = Fake::events(&seen);
    assert!(
        events.iter().any(|(r, _)| r == "PlanAwaitingWindow"),
        "{events:?}"
    );
    assert!(
        !events.iter().any(|(r, _)| r == "PlanStarted"),
        "{events:?}"
    );
    let st = serde_json::to_value(fake.stored().status.unwrap_or_default()).unwrap();
    assert_eq!(st["awaitingWindow"]["plan"], "deploy", "{st:#}");
    assert_eq!(st["awaitingWindow"]["uid"], "deploy-g2", "{st:#}");
    assert!(
        st["awaitingWindow"]["opensAt"]
            .as_str()
            .is_some_and(|t| t.contains("-02-29T00:00:00")),
        "{st:#}"
    );
    assert_eq!(st["activePlan"]["uid"], "deploy-g1", "{st:#}");
}

/// `--ignore-window` (the annotation naming the generation the change was written on) runs the
/// change now; one naming another generation counts for nothing.
#[tokio::test]
async fn ignore_window_on_the_right_generation_starts_the_plan() {
    let inst = changed_with_window(closed_window(), json!({"kudo.dev/ignore-window": "1"}));
    let (fake, _, seen) = reconcile(inst, true).await;
    let events = Fake::events(&seen);
    assert!(events.iter().any(|(r, _)| r == "PlanStarted"), "{events:?}");
    let st = serde_json::to_value(fake.stored().status.unwrap_or_default()).unwrap();
    assert_eq!(st["activePlan"]["uid"], "deploy-g2", "{st:#}");
    assert!(st["awaitingWindow"].is_null(), "{st:#}");

    let stale = changed_with_window(closed_window(), json!({"kudo.dev/ignore-window": "0"}));
    let (fake, _, _) = reconcile(stale, true).await;
    let st = serde_json::to_value(fake.stored().status.unwrap_or_default()).unwrap();
    assert_eq!(st["awaitingWindow"]["uid"], "deploy-g2", "{st:#}");
}

/// A window written past the admission webhook that cannot be read: the Instance says so
/// (Ready False, `InvalidWindow`, naming the field) and nothing starts.
#[tokio::test]
async fn a_window_that_cannot_be_read_makes_the_instance_not_ready() {
    let window = json!({"schedule": "0 2 * * *", "duration": "2h", "timeZone": "Mars/Olympus"});
    let inst = changed_with_window(window, json!(null));
    let (fake, _, seen) = reconcile(inst, true).await;
    assert!(
        !Fake::events(&seen).iter().any(|(r, _)| r == "PlanStarted"),
        "{seen:?}"
    );
    let st = serde_json::to_value(fake.stored().status.unwrap_or_default()).unwrap();
    let (value, reason) = ready(&st);
    assert_eq!(
        (value.as_str(), reason.as_str()),
        ("False", "InvalidWindow")
    );
    let c = st["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == "Ready")
        .unwrap()
        .clone();
    assert!(
        c["message"]
            .as_str()
            .unwrap()
            .contains("spec.window.timeZone"),
        "{c}"
    );
}
