//! The real HTTPS server on loopback: requests over TLS, limits, health and metrics, certificate
//! hot reload, graceful shutdown.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use kudo_webhook::{Config, NoCluster, Shared, serve};
use rcgen::{CertificateParams, IsCa, KeyPair};
use serde_json::Value;

use kudo_testkit::wire;

struct Ca {
    cert: rcgen::Certificate,
    key: KeyPair,
}

fn ca() -> Ca {
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    params.is_ca = IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "kudo test CA");
    let key = KeyPair::generate().unwrap();
    Ca {
        cert: params.self_signed(&key).unwrap(),
        key,
    }
}

/// A serving certificate for 127.0.0.1 signed by `ca`, written to `dir`; returns its DER.
fn serving(ca: &Ca, dir: &Path, cn: &str) -> Vec<u8> {
    let mut params =
        CertificateParams::new(vec!["127.0.0.1".to_string(), "localhost".to_string()]).unwrap();
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, cn);
    let key = KeyPair::generate().unwrap();
    let cert = params.signed_by(&key, &ca.cert, &ca.key).unwrap();
    // written aside and renamed, as a Secret volume update does
    std::fs::write(dir.join("tls.crt.new"), cert.pem()).unwrap();
    std::fs::write(dir.join("tls.key.new"), key.serialize_pem()).unwrap();
    std::fs::rename(dir.join("tls.key.new"), dir.join("tls.key")).unwrap();
    std::fs::rename(dir.join("tls.crt.new"), dir.join("tls.crt")).unwrap();
    cert.der().to_vec()
}

fn client(ca: &Ca) -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut roots = rustls::RootCertStore::empty();
    roots.add(ca.cert.der().clone()).unwrap();
    let tls = rustls::ClientConfig::builder()
        .with_root_certificates(roots)
        .with_no_client_auth();
    reqwest::Client::builder()
        .use_preconfigured_tls(tls)
        .tls_info(true)
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_answers_over_tls_reloads_its_certificate_and_shuts_down() {
    let dir = tempfile::tempdir().unwrap();
    let ca = ca();
    let first = serving(&ca, dir.path(), "first");
    let mut config = Config::new(
        "127.0.0.1:0".parse().unwrap(),
        dir.path().join("tls.crt"),
        dir.path().join("tls.key"),
    );
    config.body_limit = 1024 * 1024;
    // Smaller than one review: each request takes the whole budget, and is still served.
    config.memory_budget = 2 * 1024;
    config.reload_interval = Duration::from_millis(100);
    config.grace = Duration::from_secs(2);
    let shared = Arc::new(Shared {
        types: Arc::new(NoCluster),
        store: Arc::new(NoCluster),
        metrics: Default::default(),
        capture: None,
        cluster: None,
    });
    let (addr_tx, addr_rx) = tokio::sync::oneshot::channel::<SocketAddr>();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(serve(
        config,
        shared,
        async move {
            let _ = stop_rx.await;
        },
        move |addr| {
            let _ = addr_tx.send(addr);
        },
    ));
    let addr = addr_rx.await.unwrap();
    let url = |path: &str| format!("https://127.0.0.1:{}{path}", addr.port());
    let c = client(&ca);

    // /convert with the captured review
    let r = c
        .post(url("/convert?timeout=30s"))
        .header("content-type", "application/json")
        .body(wire::request_body(
            "conversion-instance-v1beta1-to-v1beta2.json",
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let peer = r
        .extensions()
        .get::<reqwest::tls::TlsInfo>()
        .and_then(|t| t.peer_certificate().map(<[u8]>::to_vec));
    assert_eq!(peer.as_deref(), Some(&first[..]));
    let review: Value = serde_json::from_slice(&r.bytes().await.unwrap()).unwrap();
    assert_eq!(review["response"]["result"]["status"], "Success");
    assert_eq!(
        review["response"]["uid"],
        wire::capture("conversion-instance-v1beta1-to-v1beta2")["request_body"]["request"]["uid"]
    );

    // admission without a cluster: a clear denial; /readyz says why
    let r = c
        .post(url("/admit/instance/validate?timeout=10s"))
        .body(wire::request_body("admission-validate-create.json"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let review: Value = serde_json::from_slice(&r.bytes().await.unwrap()).unwrap();
    assert_eq!(review["response"]["allowed"], false);
    assert!(
        review["response"]["status"]["message"]
            .as_str()
            .unwrap()
            .contains("cluster")
    );
    let r = c.get(url("/readyz")).send().await.unwrap();
    assert_eq!(r.status(), 503);
    assert!(r.text().await.unwrap().contains("no OperatorVersion cache"));
    assert_eq!(c.get(url("/healthz")).send().await.unwrap().status(), 200);

    // limits and bad input: 4xx, never a 5xx
    // Over the body limit the server answers 413 at once and closes: a client still sending
    // sees either the 413 or its write cut off.
    match c
        .post(url("/convert"))
        .body(vec![b' '; 2 * 1024 * 1024])
        .send()
        .await
    {
        Ok(r) => assert_eq!(r.status(), 413),
        Err(e) => assert!(e.is_request(), "{e}"),
    }
    let r = c
        .post(url("/convert"))
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    let r = c
        .post(url("/admit/instance/mutate"))
        .body(vec![0xff, 0xfe])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);

    // plain HTTP is not served
    let plain = reqwest::Client::new()
        .get(format!("http://127.0.0.1:{}/healthz", addr.port()))
        .send()
        .await;
    assert!(!plain.is_ok_and(|r| r.status().is_success()));

    // metrics count what happened
    let m = c
        .get(url("/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        m.contains(r#"kudo_webhook_requests_total{endpoint="convert",code="200"} 1"#),
        "{m}"
    );
    assert!(m.contains("kudo_webhook_conversion_objects_total 1"), "{m}");
    assert!(
        m.contains("kudo_webhook_request_duration_seconds_bucket"),
        "{m}"
    );

    // the certificate changes on disk: new connections get the new one
    let second = serving(&ca, dir.path(), "second");
    let mut seen = None;
    for _ in 0..50 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let r = client(&ca).get(url("/healthz")).send().await.unwrap();
        seen = r
            .extensions()
            .get::<reqwest::tls::TlsInfo>()
            .and_then(|t| t.peer_certificate().map(<[u8]>::to_vec));
        if seen.as_deref() == Some(&second[..]) {
            break;
        }
    }
    assert_eq!(
        seen.as_deref(),
        Some(&second[..]),
        "the reloaded certificate was never served"
    );

    // graceful shutdown
    stop_tx.send(()).unwrap();
    let result = tokio::time::timeout(Duration::from_secs(10), server)
        .await
        .unwrap()
        .unwrap();
    assert!(result.is_ok(), "{result:?}");
}
