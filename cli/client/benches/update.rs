//! What `kudo update --instance` costs end to end, the API server answering at once (an
//! in-process service): GET the Instance, GET its OperatorVersion, read its version from it,
//! apply three `-p` (all under the `update` trigger), validate, check `immutable` and `trigger`, PATCH with the resourceVersion
//! precondition. The package is `examples/cassandra-v1beta2`.
// criterion's macros define undocumented public functions.
#![allow(missing_docs)]

use std::path::Path;

use criterion::{Criterion, criterion_group, criterion_main};
use kudo_client::commands::{Inputs, Target, update};
use kudo_pkg::Package;
use serde_json::{Value, json};

use kudo_testkit::mock_api;

fn client(instance: Value, ov: Value) -> kube::Client {
    mock_api::answering("default", move |r| {
        let reply = if r.path.contains("/operatorversions/") {
            ov.clone()
        } else if r.method == "PATCH" {
            let mut i = instance.clone();
            // a JSON patch (a list of operations, the precondition first), or a merge patch
            match serde_json::from_value::<json_patch::Patch>(r.body.clone()) {
                Ok(ops) => json_patch::patch(&mut i, &ops).expect("the patch applies"),
                Err(_) => json_patch::merge(&mut i, &r.body),
            }
            i["metadata"]["generation"] = json!(2);
            i
        } else {
            instance.clone()
        };
        (200, reply)
    })
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().expect("a runtime");
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/cassandra-v1beta2");
    let pkg = Package::load(&dir).expect("the example package loads");
    let (_, ov) = kudo_crd::package::objects(&pkg, "ns");
    let ov_name = ov.metadata.name.clone().unwrap_or_default();
    let instance = json!({
        "apiVersion": "kudo.dev/v1beta2", "kind": "Instance",
        "metadata": {"name": "cassandra", "namespace": "ns", "resourceVersion": "1", "generation": 1},
        "spec": {"operatorVersion": {"name": ov_name}, "parameters": {"nodeCount": 3}}});
    let target = {
        let _guard = rt.enter();
        Target::new(
            client(instance, serde_json::to_value(&ov).unwrap_or_default()),
            Some("ns"),
        )
    };
    let overrides = kudo_policy::values::Override::parse_all(&[
        "resources/cpu=1",
        "resources/memory=4Gi",
        "jvm/heapSize=2G",
    ])
    .expect("well-formed -p arguments");
    let req = update::Request {
        instance: "cassandra",
        inputs: Inputs {
            files: &[],
            overrides: &overrides,
            resets: &[],
            edits: &[],
        },
        dry_run: false,
        force: false,
        ignore_window: false,
        remediation: None,
        images: None,
    };
    let first = rt.block_on(update::update(&target, &req));
    assert!(
        first.as_ref().is_ok_and(|u| u.patch.is_some()),
        "the update is accepted and written"
    );
    c.bench_function("kudo update --instance, 3 -p, end to end", |b| {
        b.to_async(&rt).iter(|| update::update(&target, &req));
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
