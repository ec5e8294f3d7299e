//! The OperatorVersion cache against a mocked API server (the requests kube's watcher sends,
//! answered at the HTTP level by a `tower` service): ready after the first list, serving compiled OperatorVersions
//! to admission and conversion, following a modification from the watch.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use http::{Request, Response};
use kube::client::Body;
use kudo_crd::convert::TypeSource;
use kudo_webhook::Cache;
use kudo_webhook::{OperatorVersions, Verdict, decide};
use serde_json::{Value, json};

fn ov(resource_version: &str, schema: Value) -> Value {
    json!({"apiVersion": "kudo.dev/v1beta2", "kind": "OperatorVersion",
        "metadata": {"name": "db-0.2.0", "namespace": "shop", "resourceVersion": resource_version,
            "uid": "ov-uid"},
        "spec": {"version": "0.2.0", "parameters": schema, "plans": {"deploy": {}}}})
}

fn instance(params: Value) -> Value {
    json!({"apiVersion": "kudo.dev/v1beta2", "kind": "Instance",
        "metadata": {"name": "db", "namespace": "shop"},
        "spec": {"operatorVersion": {"name": "db-0.2.0"}, "parameters": params}})
}

async fn wait_for(what: &str, f: impl Fn() -> bool) {
    for _ in 0..100 {
        if f() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{what} never happened");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cache_lists_then_follows_the_watch() {
    let v1 =
        json!({"type": "object", "properties": {"replicas": {"type": "integer", "minimum": 1}}});
    let v2 =
        json!({"type": "object", "properties": {"replicas": {"type": "integer", "minimum": 3}}});
    let watches = Arc::new(AtomicUsize::new(0));
    let service = tower::service_fn(move |request: Request<Body>| {
        let watches = watches.clone();
        let (v1, v2) = (v1.clone(), v2.clone());
        async move {
            let uri = request.uri().to_string();
            assert_eq!(request.method(), "GET");
            let (code, body) = if uri
                == "/apis/kudo.dev/v1beta2/namespaces/other/operatorversions/db-0.2.0"
            {
                // The direct read of what the watch does not hold: it does not exist.
                let status = json!({"kind": "Status", "apiVersion": "v1", "status": "Failure",
                    "reason": "NotFound", "code": 404, "message": "not found"});
                (404, status.to_string())
            } else if uri.starts_with("/apis/kudo.dev/v1beta2/namespaces/other/operatorversions?") {
                // On the 404, the namespace's list, for one named the other way: none.
                let list = json!({"apiVersion": "kudo.dev/v1beta2", "kind": "OperatorVersionList",
                    "metadata": {"resourceVersion": "1"}, "items": []});
                (200, list.to_string())
            } else {
                assert!(
                    uri.starts_with("/apis/kudo.dev/v1beta2/operatorversions?"),
                    "{uri}"
                );
                if !uri.contains("watch=true") {
                    let list = json!({"apiVersion": "kudo.dev/v1beta2",
                        "kind": "OperatorVersionList", "metadata": {"resourceVersion": "1"},
                        "items": [ov("1", v1)]});
                    (200, list.to_string())
                } else if watches.fetch_add(1, Ordering::SeqCst) == 0 {
                    let event = json!({"type": "MODIFIED", "object": ov("2", v2)});
                    (200, format!("{event}\n"))
                } else {
                    tokio::time::sleep(Duration::from_millis(200)).await;
                    (200, String::new())
                }
            };
            Response::builder()
                .status(code)
                .body(Body::from(body.into_bytes()))
        }
    });
    let client = kube::Client::new(service, "default");
    let (cache, run) = Cache::start(client);
    assert!(matches!(
        cache.ready(),
        Err(kudo_webhook::StoreError::NotSynced)
    ));
    tokio::spawn(run);
    wait_for("the first list", || cache.ready().is_ok()).await;
    assert!(cache.get("shop", "db-0.2.0").unwrap().is_some());
    assert!(
        matches!(cache.get("other", "db-0.2.0"), Ok(None)),
        "read from the API server: 404"
    );
    assert!(cache.schema("shop", "db-0.2.0").is_some());
    // the watch's modification replaces the compiled OperatorVersion
    wait_for("the modification", || {
        cache
            .get("shop", "db-0.2.0")
            .ok()
            .flatten()
            .is_some_and(|i| i.schema.as_value()["properties"]["replicas"]["minimum"] == 3)
    })
    .await;
    let decision = decide(
        "shop",
        None,
        &instance(json!({"replicas": 2})),
        cache.as_ref(),
    );
    assert!(matches!(decision, Verdict::Deny(_)), "{decision:?}");
    let decision = decide(
        "shop",
        None,
        &instance(json!({"replicas": 3})),
        cache.as_ref(),
    );
    assert!(matches!(decision, Verdict::Allow { .. }), "{decision:?}");
}
