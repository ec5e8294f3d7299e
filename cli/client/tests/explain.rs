//! `kudo explain --instance` against a mocked API server (`kudo_testkit::mock_api`): what
//! `commands::explain::read` asks the server for, and what `kudo_pkg::explain` then says of a
//! secret value: set by the user, masked, its text never in the result.

use std::path::Path;

use base64::Engine;
use kudo_client::commands::{Target, explain};
use kudo_pkg::Package;
use kudo_pkg::explain::{SecretSet, ValueSource};
use kudo_testkit::mock_api;
use serde_json::{Value, json};

const NS: &str = "default";
const SECRET_TEXT: &str = "hunter2-do-not-print";
const MANAGED: &str = "cassandra-params-x7k2p";

fn cassandra() -> Package {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/cassandra-v1beta2");
    Package::load(&dir).unwrap()
}

fn at(kind: &str, name: &str) -> String {
    format!("/apis/kudo.dev/v1beta2/namespaces/{NS}/{kind}/{name}")
}

fn secret_path(name: &str) -> String {
    format!("/api/v1/namespaces/{NS}/secrets/{name}")
}

/// The Instance `cassandra`: `nodeCount` set by the user, the backup password in kudo's own
/// Secret (a document), the backup user name in the user's Secret `theirs` (by pointer).
fn instance() -> Value {
    json!({"apiVersion": "kudo.dev/v1beta2", "kind": "Instance",
    "metadata": {"name": "cassandra", "namespace": NS, "resourceVersion": "7", "generation": 2},
    "spec": {"operatorVersion": {"name": "cassandra-2.0.0"},
        "parameters": {"nodeCount": 5},
        "parametersFrom": [
            {"secretRef": {"name": "theirs", "key": "user"}, "pointer": "/backup/credentials/name"},
            {"secretRef": {"name": MANAGED}}
        ]}})
}

fn managed_secret() -> Value {
    let doc = format!("backup:\n  credentials:\n    password: {SECRET_TEXT}\n");
    json!({"apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": MANAGED, "namespace": NS},
        "immutable": true,
        "data": {"parameters.yaml": base64::engine::general_purpose::STANDARD.encode(doc)}})
}

/// A server holding the Instance, its OperatorVersion and kudo's Secret (answered with
/// `secret`), and the log of what it was asked.
fn serve(secret: (u16, Value)) -> (Target, mock_api::Log) {
    let mut ov = serde_json::to_value(kudo_crd::package::objects(&cassandra(), NS).1).unwrap();
    ov["metadata"]["resourceVersion"] = json!("3");
    let (client, log) = mock_api::client(NS, move |r| match (r.method.as_str(), r.path.as_str()) {
        ("GET", p) if p == at("instances", "cassandra") => (200, instance()),
        ("GET", p) if p == at("operatorversions", "cassandra-2.0.0") => (200, ov.clone()),
        ("GET", p) if p == secret_path(MANAGED) => secret.clone(),
        _ => (500, mock_api::status(500, "UnexpectedRequest", &r.uri())),
    });
    (Target::new(client, Some(NS)), log)
}

fn requests(log: &mock_api::Log) -> Vec<(String, String)> {
    log.lock()
        .unwrap()
        .iter()
        .map(|s| (s.method.clone(), s.path.clone()))
        .collect()
}

#[tokio::test]
async fn a_secret_value_is_reported_as_set_by_the_user_and_never_shown() {
    let (t, log) = serve((200, managed_secret()));
    let stored = explain::read(&t, "cassandra").await.unwrap();
    // Only reads; the Secret named with a pointer is not read at all.
    assert_eq!(
        requests(&log),
        [
            ("GET".to_string(), at("instances", "cassandra")),
            ("GET".into(), at("operatorversions", "cassandra-2.0.0")),
            ("GET".into(), secret_path(MANAGED)),
        ]
    );
    assert_eq!(
        stored.secrets,
        [
            SecretSet {
                secret: "theirs".into(),
                sets: Ok(vec!["/backup/credentials/name".into()]),
            },
            SecretSet {
                secret: MANAGED.into(),
                sets: Ok(vec!["/backup/credentials/password".into()]),
            },
        ]
    );
    let pkg = &stored.package;
    let plans: Vec<&str> = pkg.operator().plans.keys().map(String::as_str).collect();
    let at = |p: &str| {
        kudo_pkg::explain::explain(pkg.schema(), &plans, Some(p), Some(&stored.instance())).unwrap()
    };
    let password = at("/backup/credentials/password");
    let c = password.current.clone().unwrap();
    assert_eq!(c.source, ValueSource::Secret);
    assert!(c.masked);
    assert_eq!(c.value, None);
    assert_eq!(c.secrets, [MANAGED]);
    let name = at("/backup/credentials/name").current.unwrap();
    assert_eq!((name.source, name.masked), (ValueSource::Secret, false));
    assert_eq!(name.secrets, ["theirs"]);
    let nodes = at("/nodeCount").current.unwrap();
    assert_eq!(
        (nodes.source, nodes.value),
        (ValueSource::User, Some(json!(5)))
    );
    let level = at("/logLevel").current.unwrap();
    assert_eq!(
        (level.source, level.value),
        (ValueSource::Default, Some(json!("INFO")))
    );

    let everything = format!(
        "{stored:?}{password:?}{}{}",
        serde_json::to_string(&password).unwrap(),
        serde_json::to_string(&at("/backup")).unwrap()
    );
    assert!(!everything.contains(SECRET_TEXT), "{everything}");
}

#[tokio::test]
async fn a_secret_that_cannot_be_read_leaves_its_values_unknown() {
    let forbidden = mock_api::status(403, "Forbidden", "secrets is forbidden");
    let (t, _) = serve((403, forbidden));
    let stored = explain::read(&t, "cassandra").await.unwrap();
    assert!(stored.secrets[1].sets.is_err());
    let pkg = &stored.package;
    let plans: Vec<&str> = pkg.operator().plans.keys().map(String::as_str).collect();
    let c = kudo_pkg::explain::explain(
        pkg.schema(),
        &plans,
        Some("/backup/credentials/password"),
        Some(&stored.instance()),
    )
    .unwrap()
    .current
    .unwrap();
    assert_eq!(c.source, ValueSource::Unknown);
    assert_eq!(c.secrets, [MANAGED]);
}
