//! What one reconcile costs the manager, the API server answering at once (an in-process
//! service): a deploy plan of 50 rendered objects (5 steps of 10 ConfigMaps, all healthy, run
//! to COMPLETE in one reconcile: 50 applies, a status write per step, two events), and an
//! Instance that has not changed (no request at all).
// criterion's macros define undocumented public functions.
#![allow(missing_docs)]

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use kube::runtime::{reflector, watcher};
use kudo_crd::v1beta2::Instance;
use kudo_manager::{Context, Settings};
use kudo_pkg::Package;
use serde_json::{Value, json};

use kudo_testkit::mock_api;

const STEPS: usize = 5;
const PER_STEP: usize = 10;

fn package() -> Package {
    let mut tasks = String::new();
    let mut steps = String::new();
    let mut files = BTreeMap::new();
    for s in 0..STEPS {
        let resources: Vec<String> = (0..PER_STEP).map(|i| format!("cm-{s}-{i}.yaml")).collect();
        tasks.push_str(&format!(
            "- name: t{s}\n  kind: Apply\n  spec: {{resources: [{}]}}\n",
            resources.join(", ")
        ));
        steps.push_str(&format!("      - {{name: s{s}, tasks: [t{s}]}}\n"));
        for r in resources {
            let name = r.trim_end_matches(".yaml").to_string();
            files.insert(
                format!("templates/{r}"),
                format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{{{Name}}}}-{name}\ndata:\n  replicas: \"{{{{Params.replicas}}}}\"\n  name: {{{{Params.cluster.name}}}}\n").into_bytes(),
            );
        }
    }
    files.insert(
        "operator.yaml".into(),
        format!("apiVersion: kudo.dev/v1beta1\nname: big\noperatorVersion: 1.0.0\ntasks:\n{tasks}plans:\n  deploy:\n    phases:\n    - name: main\n      steps:\n{steps}").into_bytes(),
    );
    files.insert(
        "params.yaml".into(),
        b"apiVersion: kudo.dev/v1beta2\ntype: object\nproperties:\n  replicas: {type: integer, default: 3}\n  cluster:\n    type: object\n    default: {}\n    properties:\n      name: {type: string, default: c1}\n".to_vec(),
    );
    Package::from_files(Path::new("big"), files).expect("the bench package loads")
}

fn resources() -> Value {
    json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": "v1",
        "resources": [{"name": "configmaps", "singularName": "", "namespaced": true,
            "kind": "ConfigMap", "verbs": ["patch"]}]})
}

/// Answers like an API server that accepts everything: the applied object (or the Instance
/// with the status written) comes back.
fn client(instance: Value) -> kube::Client {
    mock_api::answering("default", move |r| {
        let reply = if r.path == "/api/v1" {
            resources()
        } else if r.path.ends_with("/status") {
            let mut i = instance.clone();
            i["status"] = r.body["status"].clone();
            i
        } else {
            r.body
        };
        (200, reply)
    })
}

fn instance() -> Instance {
    serde_json::from_value(json!({
        "apiVersion": "kudo.dev/v1beta2", "kind": "Instance",
        "metadata": {"name": "big", "namespace": "ns", "uid": "u", "resourceVersion": "1",
            "generation": 1, "finalizers": ["kudo.dev/cleanup"]},
        "spec": {"operatorVersion": {"name": "big-1.0.0"}, "parameters": {"replicas": 5}}}))
    .expect("the bench Instance reads")
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().expect("a runtime");
    let pkg = package();
    let (_, ov) = kudo_crd::package::objects(&pkg, "ns");
    let inst = instance();
    let make_ctx = |inst: &Instance| {
        let _guard = rt.enter();
        let (store, mut writer) = reflector::store();
        writer.apply_watcher_event(&watcher::Event::Apply(ov.clone()));
        Arc::new(Context::new(
            client(serde_json::to_value(inst).unwrap_or_default()),
            store,
            Settings {
                progress: Duration::from_secs(5),
                ..Settings::default()
            },
        ))
    };
    let ctx = make_ctx(&inst);
    let fresh = Arc::new(inst.clone());
    // The full run really ends COMPLETE (idle until the resync), or the numbers mean nothing.
    let first = rt.block_on(kudo_manager::reconcile(fresh.clone(), make_ctx(&inst)));
    assert_eq!(
        first.ok(),
        Some(kube::runtime::controller::Action::requeue(
            Settings::default().resync
        )),
        "the deploy plan completes in one reconcile"
    );
    let mut g = c.benchmark_group("reconcile");
    g.bench_function("deploy plan, 50 objects, to COMPLETE", |b| {
        b.to_async(&rt)
            .iter(|| kudo_manager::reconcile(fresh.clone(), ctx.clone()));
    });
    let steady = {
        let mut i = inst.clone();
        let params = json!({"replicas": 5, "cluster": {"name": "c1"}});
        i.status = serde_json::from_value(json!({
            "planStatus": {"deploy": {"name": "deploy", "status": "COMPLETE", "uid": "deploy-g1", "phases": []}},
            "activePlan": {"name": "deploy", "uid": "deploy-g1"},
            "applied": {"operatorVersion": "big-1.0.0", "parameters": params},
            "observedGeneration": 1,
            "conditions": [{"type": "Ready", "status": "True", "reason": "PlanComplete",
                "message": "plan `deploy` is complete", "observedGeneration": 1}]}))
        .ok();
        Arc::new(i)
    };
    g.bench_function("unchanged Instance (no request)", |b| {
        b.to_async(&rt)
            .iter(|| kudo_manager::reconcile(steady.clone(), ctx.clone()));
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
