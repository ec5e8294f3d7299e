//! A bounded load run against the real HTTPS server on loopback.
//!
//!     cargo run --release -p kudo-webhook --example load -- [SECONDS] [CLIENTS] [list|admit]
//!
//! Environment: `LOAD_MEMORY_BUDGET_MIB` sets the server's in-flight body budget;
//! `LOAD_SERVER_BIN=target/release/kudo-webhook` runs that binary as a child process instead of
//! the server in this process, and prints its peak memory (`VmHWM`) at the end.
//!
//! Starts the server (the same `server::serve` as the binary) with a generated certificate,
//! then CLIENTS concurrent clients (default 64) send, for SECONDS (default 60): single-object
//! ConversionReviews (what watch-driven reads send, 90 % of requests) and admission reviews
//! (10 %), all from `tests/fixtures/wire/`; with `list`, only 1000-object ConversionReviews (a LIST of
//! 1000 stored objects), to v1beta2 and to v1beta1 in turn; with `admit`, only validating
//! AdmissionReviews of the captured Instance update (12 KB), judged against a store holding its
//! OperatorVersion, so each review does the real policy work and is allowed (an answer that does
//! not allow it counts as an error). Prints the count, errors (anything but HTTP 200 with a
//! well-formed answer), throughput and the latency distribution.
//!
//! `LOAD_TRICKLE=N` also opens N slow clients for the whole run: each declares an 8 MiB body
//! (`Content-Length: 8388608`) and sends one byte every 100 ms, starting again when the server
//! closes its connection (what issue 38's security probe did). Their requests are not counted.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use std::collections::HashMap;

use kudo_policy::change::Version;
use kudo_webhook::{
    Config, NoCluster, OperatorVersions, Shared, StoreError, serve, version_from_object,
};

use kudo_testkit::{tls, wire};

/// A well-formed review with a response: a conversion that succeeded, or an admission answer
/// (the objects themselves are skipped without being built, so the clients stay light).
fn well_formed(body: &[u8]) -> bool {
    #[derive(serde::Deserialize)]
    struct Review {
        response: Response,
    }
    #[derive(serde::Deserialize)]
    struct Response {
        result: Option<Status>,
        allowed: Option<bool>,
    }
    #[derive(serde::Deserialize)]
    struct Status {
        status: String,
    }
    match serde_json::from_slice::<Review>(body) {
        Ok(r) => match (r.response.result, r.response.allowed) {
            (Some(s), _) => s.status == "Success",
            (None, allowed) => allowed.is_some(),
        },
        Err(_) => false,
    }
}

/// The OperatorVersions the `admit` reviews name: `sample-db-0.2.0` of the wire captures.
struct Store(HashMap<(String, String), Arc<Version>>);

impl Store {
    fn sample_db() -> Store {
        let ov =
            wire::sample_db_operator_version("sample-db-0.2.0", "0.2.0", wire::sample_db_schema());
        let version = version_from_object(&ov).expect("the sample OperatorVersion is usable");
        let key = (wire::NAMESPACE.to_string(), "sample-db-0.2.0".to_string());
        Store(HashMap::from([(key, Arc::new(version))]))
    }
}

impl kudo_crd::convert::TypeSource for Store {
    fn schema(&self, namespace: &str, name: &str) -> Option<kudo_policy::ParamSchema> {
        let v = self.0.get(&(namespace.into(), name.into()))?;
        Some(v.schema.clone())
    }
}

impl OperatorVersions for Store {
    fn ready(&self) -> Result<(), StoreError> {
        Ok(())
    }
    fn get(&self, namespace: &str, name: &str) -> Result<Option<Arc<Version>>, StoreError> {
        Ok(self.0.get(&(namespace.into(), name.into())).cloned())
    }
}

/// Whether an admission answer allows the review.
fn allowed(body: &[u8]) -> bool {
    serde_json::from_slice::<serde_json::Value>(body)
        .is_ok_and(|v| v["response"]["allowed"] == true)
}

/// One slow client (`LOAD_TRICKLE`): declares 8 MiB, sends a byte every 100 ms; reconnects
/// when the server closes the connection. Runs until the process ends.
fn trickle(addr: SocketAddr, roots: rustls::RootCertStore) {
    use std::io::Write;
    let config = Arc::new(
        rustls::ClientConfig::builder()
            .with_root_certificates(roots)
            .with_no_client_auth(),
    );
    loop {
        let Ok(mut tcp) = std::net::TcpStream::connect(addr) else {
            std::thread::sleep(Duration::from_millis(100));
            continue;
        };
        let name = rustls::pki_types::ServerName::try_from("127.0.0.1").unwrap();
        let mut conn = rustls::ClientConnection::new(config.clone(), name).unwrap();
        let mut tls = rustls::Stream::new(&mut conn, &mut tcp);
        let head = format!(
            "POST /admit/instance/validate HTTP/1.1\r\nhost: 127.0.0.1\r\n\
             content-type: application/json\r\ncontent-length: {}\r\n\r\n",
            8 * 1024 * 1024
        );
        if tls.write_all(head.as_bytes()).is_err() {
            continue;
        }
        while tls.write_all(b" ").and_then(|()| tls.flush()).is_ok() {
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

#[tokio::main(flavor = "multi_thread")]
async fn main() {
    let mut args = std::env::args().skip(1);
    let seconds: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(60);
    let clients: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(64);
    let mode = args.next();
    let list = mode.as_deref() == Some("list");
    let admit = mode.as_deref() == Some("admit");
    let _ = rustls::crypto::ring::default_provider().install_default();
    let dir = tempfile::tempdir().unwrap();
    let tls = tls::loopback(dir.path());
    // LOAD_MEMORY_BUDGET_MIB: the server's in-flight body budget (default: the server's).
    let budget_mib = std::env::var("LOAD_MEMORY_BUDGET_MIB")
        .ok()
        .and_then(|v| v.parse::<usize>().ok());
    let shared = Arc::new(if admit {
        let store = Arc::new(Store::sample_db());
        Shared {
            types: store.clone(),
            store,
            metrics: Default::default(),
            capture: None,
            cluster: None,
        }
    } else {
        Shared {
            types: Arc::new(NoCluster),
            store: Arc::new(NoCluster),
            metrics: Default::default(),
            capture: None,
            cluster: None,
        }
    });
    // LOAD_SERVER_BIN: run that `kudo-webhook` binary as a child process instead of the server
    // in this process, so its own peak memory can be read at the end.
    let mut child = None;
    let addr: SocketAddr = if let Some(bin) = std::env::var_os("LOAD_SERVER_BIN") {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
        let mut cmd = std::process::Command::new(bin);
        cmd.arg("--listen")
            .arg(addr.to_string())
            .arg("--tls-cert")
            .arg(&tls.cert)
            .arg("--tls-key")
            .arg(&tls.key)
            .arg("--no-cluster")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        if let Some(mib) = budget_mib {
            cmd.arg("--memory-budget-mib").arg(mib.to_string());
        }
        child = Some(cmd.spawn().expect("the server binary starts"));
        let up = Instant::now();
        while tokio::net::TcpStream::connect(addr).await.is_err() {
            assert!(
                up.elapsed() < Duration::from_secs(10),
                "the server did not listen"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        addr
    } else {
        let mut config = Config::new(
            "127.0.0.1:0".parse().unwrap(),
            tls.cert.clone(),
            tls.key.clone(),
        );
        if let Some(mib) = budget_mib {
            config.memory_budget = mib * 1024 * 1024;
        }
        let (tx, rx) = tokio::sync::oneshot::channel();
        tokio::spawn(serve(
            config,
            shared.clone(),
            std::future::pending(),
            move |a| {
                let _ = tx.send(a);
            },
        ));
        rx.await.unwrap()
    };
    let roots = tls.roots;
    let tls = rustls::ClientConfig::builder()
        .with_root_certificates(roots.clone())
        .with_no_client_auth();
    let client = reqwest::Client::builder()
        .use_preconfigured_tls(tls)
        .pool_max_idle_per_host(clients)
        .build()
        .unwrap();
    let url = |p: &str| format!("https://127.0.0.1:{}{p}", addr.port());
    let trickling: usize = std::env::var("LOAD_TRICKLE")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    for _ in 0..trickling {
        let roots = roots.clone();
        std::thread::spawn(move || trickle(addr, roots));
    }
    let bodies: Arc<Vec<(String, Vec<u8>)>> = Arc::new(if admit {
        vec![(
            url("/admit/instance/validate"),
            wire::request_body("admission-validate-update.json"),
        )]
    } else if list {
        ["kudo.dev/v1beta2", "kudo.dev/v1beta1"]
            .iter()
            .map(|d| (url("/convert"), wire::list_review(d)))
            .collect()
    } else {
        [
            ("/convert", "conversion-instance-v1beta1-to-v1beta2.json"),
            ("/convert", "conversion-instance-v1beta2-to-v1beta1.json"),
            (
                "/convert",
                "conversion-operatorversion-v1beta1-to-v1beta2.json",
            ),
        ]
        .iter()
        .cycle()
        .take(9)
        .chain([("/admit/instance/validate", "admission-validate-update.json")].iter())
        .map(|(p, f)| (url(p), wire::request_body(f)))
        .collect()
    });
    let errors = Arc::new(AtomicU64::new(0));
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let started = Instant::now();
    let mut tasks = Vec::new();
    for c in 0..clients {
        let client = client.clone();
        let bodies = bodies.clone();
        let errors = errors.clone();
        tasks.push(tokio::spawn(async move {
            let mut times = Vec::new();
            let mut i = c;
            while Instant::now() < deadline {
                let (url, body) = &bodies[i % bodies.len()];
                i += 1;
                let t = Instant::now();
                let reply = match client.post(url).body(body.clone()).send().await {
                    Ok(r) if r.status() == 200 => r.bytes().await.ok(),
                    _ => None,
                };
                // The time until the whole reply is in; checking it is the client's business.
                times.push(t.elapsed());
                let ok = reply.is_some_and(|b| well_formed(&b) && (!admit || allowed(&b)));
                if !ok {
                    errors.fetch_add(1, Ordering::Relaxed);
                }
            }
            times
        }));
    }
    let mut all = Vec::new();
    for t in tasks {
        all.extend(t.await.unwrap());
    }
    let elapsed = started.elapsed();
    all.sort();
    let pct = |p: f64| all[((all.len() as f64 * p) as usize).min(all.len() - 1)];
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "{} requests in {:.1} s from {clients} clients: {:.0} req/s, {} errors",
        all.len(),
        elapsed.as_secs_f64(),
        all.len() as f64 / elapsed.as_secs_f64(),
        errors.load(Ordering::Relaxed)
    );
    println!(
        "latency ms: p50 {:.2}, p90 {:.2}, p99 {:.2}, p99.9 {:.2}, max {:.2}",
        ms(pct(0.50)),
        ms(pct(0.90)),
        ms(pct(0.99)),
        ms(pct(0.999)),
        ms(*all.last().unwrap())
    );
    if let Some(mut child) = child {
        let status =
            std::fs::read_to_string(format!("/proc/{}/status", child.id())).unwrap_or_default();
        for line in status
            .lines()
            .filter(|l| l.starts_with("VmHWM") || l.starts_with("VmRSS"))
        {
            println!("server {line}");
        }
        let _ = child.kill();
        let _ = child.wait();
    }
    if std::env::var_os("LOAD_METRICS").is_some() {
        println!("{}", shared.metrics.encode());
    }
    let bounds = [1.0, 2.5, 5.0, 10.0, 25.0, 50.0, 100.0, 250.0, f64::INFINITY];
    let mut lower = 0.0;
    for b in bounds {
        let n = all
            .iter()
            .filter(|d| ms(**d) >= lower && ms(**d) < b)
            .count();
        println!("  [{lower:>6.1}, {b:>6.1}) ms: {n}");
        lower = b;
    }
}
