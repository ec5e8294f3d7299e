//! Self-managed certificates against a mocked API server: the Secret is created when missing,
//! kept while valid, renewed before expiry; the CA bundle reaches the CRDs and the webhook
//! configurations; the files the server loads are written.

use std::sync::Arc;
use std::time::Duration;

use kudo_webhook::certs::{self, Options, from_secret, to_secret};
use rustls::client::danger::ServerCertVerifier;
use serde_json::{Value, json};

use kudo_testkit::mock_api;

use mock_api::Log;

/// A mocked API server: `secret` is the Secret it holds (None: 404).
fn api(secret: Option<Value>) -> (kube::Client, Log) {
    mock_api::client("default", move |r| {
        let (method, path) = (r.method.as_str(), r.path.as_str());
        if path.contains("/secrets/kudo-webhook-tls") && method == "GET" {
            match &secret {
                Some(s) => (200, s.clone()),
                None => (404, mock_api::status(404, "NotFound", "not found")),
            }
        } else if path.contains("webhookconfigurations/") && method == "GET" {
            (
                200,
                json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "X",
                "metadata": {"name": "w"}, "webhooks": [{"name": "a"}]}),
            )
        } else if method == "POST" {
            (201, r.body.clone())
        } else {
            (
                200,
                json!({"apiVersion": "v1", "kind": "X", "metadata": {"name": "x"}}),
            )
        }
    })
}

fn options(dir: &std::path::Path) -> Options {
    Options {
        namespace: "kudo-system".into(),
        service: "kudo-webhook".into(),
        validity: Duration::from_secs(365 * 24 * 3600),
        renew_before: Duration::from_secs(30 * 24 * 3600),
        check_every: Duration::from_secs(3600),
        dir: dir.to_path_buf(),
    }
}

fn calls(log: &Log) -> Vec<(String, String)> {
    log.lock()
        .unwrap()
        .iter()
        .map(|s| (s.method.clone(), s.path.clone()))
        .collect()
}

#[tokio::test]
async fn a_missing_secret_is_created_and_the_ca_injected_everywhere() {
    let dir = tempfile::tempdir().unwrap();
    let (client, log) = api(None);
    let bundle = certs::refresh(&client, &options(dir.path())).await.unwrap();
    assert_eq!(
        calls(&log),
        [
            ("GET".into(), "/api/v1/namespaces/kudo-system/secrets/kudo-webhook-tls".into()),
            ("POST".into(), "/api/v1/namespaces/kudo-system/secrets".into()),
            ("PATCH".into(), "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/operatorversions.kudo.dev".into()),
            ("PATCH".into(), "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/instances.kudo.dev".into()),
            ("GET".into(), "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/kudo-mutate".into()),
            ("PATCH".into(), "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/kudo-mutate".into()),
            ("GET".into(), "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/kudo-validate".into()),
            ("PATCH".into(), "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/kudo-validate".into()),
        ]
    );
    let log = log.lock().unwrap();
    let stored = from_secret(&log[1].body).expect("the created Secret holds the bundle");
    assert_eq!(stored, bundle);
    let ca = base64::Engine::encode(&base64::engine::general_purpose::STANDARD, &bundle.ca_pem);
    assert_eq!(
        log[2].body["spec"]["conversion"]["webhook"]["clientConfig"]["caBundle"],
        ca
    );
    assert_eq!(
        log[5].body,
        json!([{"op": "add", "path": "/webhooks/0/clientConfig/caBundle", "value": ca}])
    );
    // the files the server loads
    assert_eq!(
        std::fs::read_to_string(dir.path().join("tls.crt")).unwrap(),
        bundle.cert_pem
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("tls.key")).unwrap(),
        bundle.key_pem
    );
    // a serving certificate rustls accepts for the Service name, signed by the CA
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut roots = rustls::RootCertStore::empty();
    let ca_der = rustls_pemfile_der(&bundle.ca_pem);
    roots.add(ca_der.into()).unwrap();
    let verifier = rustls::client::WebPkiServerVerifier::builder(Arc::new(roots))
        .build()
        .unwrap();
    let leaf = rustls_pemfile_der(&bundle.cert_pem);
    verifier
        .verify_server_cert(
            &leaf.into(),
            &[],
            &rustls::pki_types::ServerName::try_from("kudo-webhook.kudo-system.svc").unwrap(),
            &[],
            rustls::pki_types::UnixTime::now(),
        )
        .unwrap();
}

/// The DER inside one PEM block.
fn rustls_pemfile_der(pem: &str) -> Vec<u8> {
    let b64: String = pem.lines().filter(|l| !l.starts_with("-----")).collect();
    base64::Engine::decode(&base64::engine::general_purpose::STANDARD, b64).unwrap()
}

#[tokio::test]
async fn a_valid_secret_is_kept_and_an_expiring_one_renewed() {
    let dir = tempfile::tempdir().unwrap();
    let o = options(dir.path());
    let good =
        certs::generate(&certs::dns_names("kudo-webhook", "kudo-system"), o.validity).unwrap();
    let mut secret = to_secret(&good, "kudo-system");
    secret["metadata"]["resourceVersion"] = json!("41");
    let (client, log) = api(Some(secret.clone()));
    assert_eq!(certs::ensure(&client, &o).await.unwrap(), good);
    assert_eq!(
        calls(&log).len(),
        1,
        "nothing written for a valid certificate"
    );

    let soon = certs::generate(
        &certs::dns_names("kudo-webhook", "kudo-system"),
        Duration::from_secs(24 * 3600),
    )
    .unwrap();
    let mut expiring = to_secret(&soon, "kudo-system");
    expiring["metadata"]["resourceVersion"] = json!("42");
    let (client, log) = api(Some(expiring));
    let renewed = certs::ensure(&client, &o).await.unwrap();
    assert_ne!(renewed, soon);
    let log = log.lock().unwrap().clone();
    assert_eq!(log[1].method, "PUT");
    assert_eq!(
        log[1].body["metadata"]["resourceVersion"], "42",
        "replaced with a precondition"
    );
    assert_eq!(from_secret(&log[1].body).unwrap(), renewed);
    // Rotation: the new bundle trusts the new certificate and, until it expires, the previous
    // one (what the other replica serves until its next check); one previous CA only.
    let blocks = certs::pem_blocks(&renewed.ca_pem);
    assert_eq!(blocks.len(), 2, "the new CA, then the previous one");
    assert_eq!(blocks[1], soon.ca_pem);
    for (leaf, what) in [(&renewed.cert_pem, "new"), (&soon.cert_pem, "previous")] {
        assert!(
            verifies(&renewed.ca_pem, leaf),
            "the {what} serving certificate is trusted by the bundle"
        );
    }
    let mut rotated = to_secret(&renewed, "kudo-system");
    rotated["metadata"]["annotations"]["kudo.dev/not-after"] = json!(soon.not_after.to_string());
    let (client, _) = api(Some(rotated));
    let again = certs::ensure(&client, &o).await.unwrap();
    let blocks = certs::pem_blocks(&again.ca_pem);
    assert_eq!(blocks.len(), 2, "never more than one previous CA");
    assert_eq!(blocks[1], certs::pem_blocks(&renewed.ca_pem)[0]);
}

#[tokio::test]
async fn an_expired_previous_ca_is_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let o = options(dir.path());
    let old = certs::generate(
        &certs::dns_names("kudo-webhook", "kudo-system"),
        Duration::from_secs(3600),
    )
    .unwrap();
    let mut expired = to_secret(&old, "kudo-system");
    expired["metadata"]["annotations"]["kudo.dev/not-after"] = json!("1000");
    let (client, _) = api(Some(expired));
    let renewed = certs::ensure(&client, &o).await.unwrap();
    assert_eq!(certs::pem_blocks(&renewed.ca_pem).len(), 1);
}

#[tokio::test]
async fn a_replica_that_loses_the_renewal_race_takes_the_winners_certificate() {
    let dir = tempfile::tempdir().unwrap();
    let o = options(dir.path());
    let names = certs::dns_names("kudo-webhook", "kudo-system");
    let soon = certs::generate(&names, Duration::from_secs(24 * 3600)).unwrap();
    let mut expiring = to_secret(&soon, "kudo-system");
    expiring["metadata"]["resourceVersion"] = json!("42");
    let winner = certs::generate(&names, o.validity).unwrap();
    let mut renewed = to_secret(&winner, "kudo-system");
    renewed["metadata"]["resourceVersion"] = json!("43");
    // The Secret as read before the replace (expiring), then as the other replica left it.
    let mut reads = vec![renewed, expiring];
    let (client, log) = mock_api::client("default", move |r| match r.method.as_str() {
        "GET" => (200, reads.pop().expect("two reads")),
        "PUT" => (
            409,
            mock_api::status(409, "Conflict", "the object has been modified"),
        ),
        _ => (500, mock_api::status(500, "InternalError", "unexpected")),
    });
    assert_eq!(certs::ensure(&client, &o).await.unwrap(), winner);
    let methods: Vec<String> = log
        .lock()
        .unwrap()
        .iter()
        .map(|s| s.method.clone())
        .collect();
    assert_eq!(methods, ["GET", "PUT", "GET"]);
}

#[tokio::test]
async fn files_already_holding_the_bundle_are_not_written_again() {
    let dir = tempfile::tempdir().unwrap();
    let o = options(dir.path());
    let good =
        certs::generate(&certs::dns_names("kudo-webhook", "kudo-system"), o.validity).unwrap();
    let (client, _) = api(Some(to_secret(&good, "kudo-system")));
    let modified = |f: &str| {
        std::fs::metadata(dir.path().join(f))
            .and_then(|m| m.modified())
            .unwrap()
    };
    certs::refresh(&client, &o).await.unwrap();
    let first = (modified("tls.crt"), modified("tls.key"));
    std::thread::sleep(Duration::from_millis(20));
    certs::refresh(&client, &o).await.unwrap();
    // The server reloads the pair when either file changes: an hourly check changes nothing.
    assert_eq!((modified("tls.crt"), modified("tls.key")), first);
}

/// Whether `leaf_pem` verifies for the Service name against any CA of `bundle_pem`.
fn verifies(bundle_pem: &str, leaf_pem: &str) -> bool {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut roots = rustls::RootCertStore::empty();
    for block in certs::pem_blocks(bundle_pem) {
        roots.add(rustls_pemfile_der(&block).into()).unwrap();
    }
    let verifier = rustls::client::WebPkiServerVerifier::builder(Arc::new(roots))
        .build()
        .unwrap();
    verifier
        .verify_server_cert(
            &rustls_pemfile_der(leaf_pem).into(),
            &[],
            &rustls::pki_types::ServerName::try_from("kudo-webhook.kudo-system.svc").unwrap(),
            &[],
            rustls::pki_types::UnixTime::now(),
        )
        .is_ok()
}

#[test]
fn the_webhook_refuses_to_start_when_renewal_would_not_come_before_expiry() {
    // (flags, what the user reads)
    let cases: &[(&[&str], &str)] = &[
        (
            &["--cert-validity", "2m", "--cert-renew-before", "2m"],
            "error: the certificate renew-before (2m) must be shorter than its validity (2m)",
        ),
        (
            &["--cert-validity", "10d"],
            "error: the certificate renew-before (30d) must be shorter than its validity (10d)",
        ),
        (
            &["--cert-validity", "3m", "--cert-renew-before", "30s"],
            "error: the certificate renew-before (30s) must be at least 1m",
        ),
    ];
    for (flags, says) in cases {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_kudo-webhook"))
            .arg("--self-managed-certs")
            .args(*flags)
            .output()
            .expect("kudo-webhook runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        // Refused as a usage error, before it connects to anything.
        assert_eq!(out.status.code(), Some(2), "{flags:?}: {stderr}");
        assert!(
            stderr.starts_with(says),
            "{flags:?}: stderr does not start with {says:?}:\n{stderr}"
        );
    }
}
