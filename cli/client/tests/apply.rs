//! `init::apply` against a mocked API server: the namespace, then a server-side dry run of
//! every other object, then one server-side apply per object, in order, with kudo's field
//! manager, to the right URL; a refusal in the dry run writes nothing more.

use kudo_client::init::{self, Options};

use kudo_testkit::mock_api;

/// A request as the mock saw it: method, URI, content type, body.
type Seen = (String, String, String, serde_json::Value);

/// A mocked API server logging every request; it refuses (422) the dry run of the object
/// whose URI contains `refuse`, if any, and answers every other request with its body.
fn api(refuse: Option<&'static str>) -> (kube::Client, mock_api::Log) {
    mock_api::client("default", move |r| {
        let uri = r.uri();
        if refuse.is_some_and(|x| uri.contains(x) && uri.contains("dryRun=All")) {
            let message = "admission webhook \"policy.example.com\" denied the request";
            (422, mock_api::status(422, "Invalid", message))
        } else {
            (200, r.body.clone())
        }
    })
}

/// The log as tuples.
fn requests(log: &mock_api::Log) -> Vec<Seen> {
    log.lock()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r.method.clone(),
                r.uri(),
                r.content_type.clone(),
                r.body.clone(),
            )
        })
        .collect()
}

#[tokio::test]
async fn every_object_is_dry_run_then_applied_server_side_in_order() {
    let (client, seen) = api(None);
    let objects = init::manifests(&Options::default());
    let lines = init::apply(&client, &objects).await.unwrap();
    assert_eq!(lines.len(), objects.len());
    let seen = requests(&seen);
    let n = objects.len();
    assert_eq!(objects[0]["kind"], "Namespace");
    assert_eq!(
        seen.len(),
        1 + 2 * (n - 1),
        "the namespace, a dry run and an apply of the rest"
    );
    let expected = std::iter::once((&objects[0], false))
        .chain(objects[1..].iter().map(|o| (o, true)))
        .chain(objects[1..].iter().map(|o| (o, false)));
    for ((method, uri, ct, body), (object, dry_run)) in seen.iter().zip(expected) {
        assert_eq!(method, "PATCH");
        assert_eq!(ct, "application/apply-patch+yaml");
        assert!(uri.contains("fieldManager=kudo-init"), "{uri}");
        assert!(uri.contains("force=true"), "{uri}");
        assert_eq!(uri.contains("dryRun=All"), dry_run, "{uri}");
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

#[tokio::test]
async fn a_refusal_in_the_dry_run_writes_nothing_but_the_namespace() {
    let (client, seen) = api(Some("/deployments/kudo-webhook?"));
    let objects = init::manifests(&Options::default());
    let err = init::apply(&client, &objects)
        .await
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("Deployment/kudo-webhook: "), "{err}");
    assert!(err.contains("denied the request"), "{err}");
    assert!(err.contains("dry run"), "{err}");
    let seen = requests(&seen);
    let written: Vec<&str> = seen
        .iter()
        .filter(|(_, uri, _, _)| !uri.contains("dryRun=All"))
        .map(|(_, uri, _, _)| uri.as_str())
        .collect();
    assert_eq!(written.len(), 1, "{written:?}");
    assert!(written[0].starts_with("/api/v1/namespaces/kudo-system?"));
}
