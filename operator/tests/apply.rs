//! `install::apply` against a mocked API server: one server-side apply per object, in order,
//! with kudo's field manager, to the right URL.

use std::sync::{Arc, Mutex};

use http::{Request, Response};
use http_body_util::BodyExt;
use kube::client::Body;
use kudo_operator::install::{self, Options};

/// A request as the mock saw it: method, URI, content type, body.
type Seen = (String, String, String, serde_json::Value);

#[tokio::test]
async fn every_object_is_applied_server_side_in_order() {
    let (service, mut handle) = tower_test::mock::pair::<Request<Body>, Response<Body>>();
    let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
    let log = seen.clone();
    tokio::spawn(async move {
        while let Some((request, send)) = handle.next_request().await {
            let method = request.method().to_string();
            let uri = request.uri().to_string();
            let ct = request
                .headers()
                .get("content-type")
                .map(|v| v.to_str().unwrap().to_string())
                .unwrap_or_default();
            let body = request.into_body().collect().await.unwrap().to_bytes();
            let json: serde_json::Value = serde_json::from_slice(&body).unwrap();
            log.lock().unwrap().push((method, uri, ct, json.clone()));
            send.send_response(Response::builder().body(Body::from(body.to_vec())).unwrap());
        }
    });
    let client = kube::Client::new(service, "default");
    let objects = install::manifests(&Options::default());
    let lines = install::apply(&client, &objects).await.unwrap();
    assert_eq!(lines.len(), objects.len());
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), objects.len());
    for ((method, uri, ct, body), object) in seen.iter().zip(&objects) {
        assert_eq!(method, "PATCH");
        assert_eq!(ct, "application/apply-patch+yaml");
        assert!(uri.contains("fieldManager=kudo-init"), "{uri}");
        assert!(uri.contains("force=true"), "{uri}");
        assert_eq!(body, object);
        let name = object["metadata"]["name"].as_str().unwrap();
        assert!(uri.contains(&format!("/{name}?")), "{uri}");
    }
    assert!(seen[0].1.starts_with("/api/v1/namespaces/kudo-system?"));
    assert!(
        seen[1]
            .1
            .starts_with("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/")
    );
    assert!(seen.iter().any(|(_, u, _, _)| {
        u.starts_with("/apis/apps/v1/namespaces/kudo-system/deployments/kudo-webhook?")
    }));
}
