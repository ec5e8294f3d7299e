//! Fair admission (issue 38, items 2, 3 and 10) against the real HTTPS server on loopback: a
//! slow or large request delays no other past a small bound, a slow head is cut off, and a
//! review past its deadline is cancelled, keeping its share of the memory budget until its work
//! has stopped. Timeouts are small here; the bounds asserted are wide (a loaded 2-core machine).

use std::io::{Read, Write};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use kudo_crd::convert::TypeSource;
use kudo_webhook::{Config, NoCluster, Shared, serve};

use kudo_testkit::{tls, wire};

struct Server {
    addr: SocketAddr,
    shared: Arc<Shared>,
    roots: rustls::RootCertStore,
    _dir: tempfile::TempDir,
}

impl Server {
    async fn start(
        types: Arc<dyn TypeSource + Send + Sync>,
        edit: impl FnOnce(&mut Config),
    ) -> Server {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let dir = tempfile::tempdir().unwrap();
        let tls = tls::loopback(dir.path());
        let roots = tls.roots;
        let mut config = Config::new("127.0.0.1:0".parse().unwrap(), tls.cert, tls.key);
        edit(&mut config);
        let shared = Arc::new(Shared {
            types,
            store: Arc::new(NoCluster),
            metrics: Default::default(),
            capture: None,
            cluster: None,
        });
        let (tx, rx) = tokio::sync::oneshot::channel();
        tokio::spawn(serve(
            config,
            shared.clone(),
            std::future::pending(),
            move |a| {
                let _ = tx.send(a);
            },
        ));
        Server {
            addr: rx.await.unwrap(),
            shared,
            roots,
            _dir: dir,
        }
    }

    fn client(&self) -> reqwest::Client {
        let tls = rustls::ClientConfig::builder()
            .with_root_certificates(self.roots.clone())
            .with_no_client_auth();
        reqwest::Client::builder()
            .use_preconfigured_tls(tls)
            .timeout(Duration::from_secs(10))
            .build()
            .unwrap()
    }

    fn url(&self, path: &str) -> String {
        format!("https://127.0.0.1:{}{path}", self.addr.port())
    }

    /// One metric's value (0 when absent).
    fn metric(&self, line_start: &str) -> f64 {
        let text = self.shared.metrics.encode();
        text.lines()
            .find_map(|l| l.strip_prefix(line_start)?.trim().parse().ok())
            .unwrap_or(0.0)
    }

    /// A raw TLS connection (HTTP/1 by hand), in blocking mode, for the slow clients.
    fn raw(&self) -> RawTls {
        let config = Arc::new(
            rustls::ClientConfig::builder()
                .with_root_certificates(self.roots.clone())
                .with_no_client_auth(),
        );
        let name = rustls::pki_types::ServerName::try_from("127.0.0.1").unwrap();
        let tcp = std::net::TcpStream::connect(self.addr).unwrap();
        tcp.set_read_timeout(Some(Duration::from_millis(20)))
            .unwrap();
        RawTls {
            conn: rustls::ClientConnection::new(config, name).unwrap(),
            tcp,
        }
    }
}

struct RawTls {
    conn: rustls::ClientConnection,
    tcp: std::net::TcpStream,
}

/// What a slow client saw at the end.
#[derive(Debug)]
enum Seen {
    /// The server answered (the reply's first line).
    Answer(String),
    /// The server closed the connection without an answer.
    Closed,
    /// Still open when the client gave up.
    Open,
}

impl RawTls {
    /// Sends `head`, then `drip` a byte at a time every `every`, until the server answers or
    /// closes the connection, for at most `limit`. Returns what it saw and when.
    fn trickle(
        mut self,
        head: &[u8],
        drip: &[u8],
        every: Duration,
        limit: Duration,
    ) -> (Seen, Duration) {
        let started = Instant::now();
        let mut tls = rustls::Stream::new(&mut self.conn, &mut self.tcp);
        if tls.write_all(head).and_then(|()| tls.flush()).is_err() {
            return (Seen::Closed, started.elapsed());
        }
        let mut answer = Vec::new();
        for byte in drip.iter().cycle() {
            if started.elapsed() > limit {
                return (Seen::Open, started.elapsed());
            }
            let mut buf = [0u8; 4096];
            match tls.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    answer.extend_from_slice(&buf[..n]);
                    if answer.windows(2).any(|w| w == b"\r\n") {
                        break;
                    }
                    continue;
                }
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) => {}
                Err(_) => break,
            }
            if tls
                .write_all(std::slice::from_ref(byte))
                .and_then(|()| tls.flush())
                .is_err()
            {
                break;
            }
            std::thread::sleep(every);
        }
        let elapsed = started.elapsed();
        match String::from_utf8_lossy(&answer).lines().next() {
            Some(line) if !line.is_empty() => (Seen::Answer(line.to_string()), elapsed),
            _ => (Seen::Closed, elapsed),
        }
    }
}

/// A TypeSource that takes `delay` per lookup and counts them; with `gated`, the first lookup
/// waits until [`SlowTypes::open`] (or 20 s), the others do not.
#[derive(Default)]
struct SlowTypes {
    delay: Duration,
    gated: bool,
    calls: AtomicUsize,
    open: Mutex<bool>,
    opened: Condvar,
}

impl SlowTypes {
    fn open(&self) {
        *self.open.lock().unwrap() = true;
        self.opened.notify_all();
    }
}

impl TypeSource for SlowTypes {
    fn schema(&self, _: &str, _: &str) -> Option<kudo_policy::ParamSchema> {
        let before = self.calls.fetch_add(1, Ordering::SeqCst);
        if self.gated && before == 0 {
            let open = self.open.lock().unwrap();
            let _ = self
                .opened
                .wait_timeout_while(open, Duration::from_secs(20), |open| !*open)
                .unwrap();
        }
        std::thread::sleep(self.delay);
        None
    }
}

/// Sends a small admission review (the captured create, 2.8 KB) and returns its status and
/// how long it took.
async fn small_review(server: &Server) -> (u16, Duration) {
    let body = wire::request_body("admission-validate-create.json");
    assert!(body.len() < 4096, "{}", body.len());
    let started = Instant::now();
    let r = server
        .client()
        .post(server.url("/admit/instance/validate"))
        .body(body)
        .send()
        .await;
    let status = r.map(|r| r.status().as_u16()).unwrap_or(0);
    (status, started.elapsed())
}

// Issue 38, item 3: a client that declared 8 MiB and sent a byte a second held the whole
// budget; a 1 KB review waited 24.7 s behind it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trickling_client_delays_no_small_review_and_is_dropped_at_the_read_timeout() {
    let server = Server::start(Arc::new(NoCluster), |c| {
        c.read_timeout = Duration::from_secs(1);
    })
    .await;
    let head = format!(
        "POST /admit/instance/validate HTTP/1.1\r\nhost: 127.0.0.1\r\n\
         content-type: application/json\r\ncontent-length: {}\r\n\r\n{{",
        8 * 1024 * 1024
    );
    let slow = server.raw();
    let trickler = tokio::task::spawn_blocking(move || {
        slow.trickle(
            head.as_bytes(),
            b" ",
            Duration::from_millis(100),
            Duration::from_secs(10),
        )
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (status, took) = small_review(&server).await;
    eprintln!("a small review beside a trickling client: {took:?}");
    assert_eq!(status, 200);
    assert!(
        took < Duration::from_secs(1),
        "the small review took {took:?}"
    );
    let (seen, after) = trickler.await.unwrap();
    eprintln!("the trickling client: {seen:?} after {after:?}");
    assert!(
        matches!(&seen, Seen::Answer(line) if line.starts_with("HTTP/1.1 408")),
        "{seen:?} after {after:?}"
    );
    assert!(
        after >= Duration::from_millis(900) && after < Duration::from_secs(5),
        "{after:?}"
    );
    assert_eq!(
        server.metric(r#"kudo_webhook_refused_total{reason="read_timeout"}"#),
        1.0
    );
    assert_eq!(
        server.metric(r#"kudo_webhook_memory_budget_in_use_bytes{lane="large"}"#),
        0.0
    );
}

// Issue 38, item 10: a connection that sends its head slowly was never closed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_sending_its_head_slowly_is_closed_at_the_header_read_timeout() {
    let server = Server::start(Arc::new(NoCluster), |c| {
        c.header_read_timeout = Duration::from_secs(1);
    })
    .await;
    let slow = server.raw();
    let (seen, after) = tokio::task::spawn_blocking(move || {
        slow.trickle(
            b"POST /convert HTTP/1.1\r\nx-slow: ",
            b"a",
            Duration::from_millis(100),
            Duration::from_secs(8),
        )
    })
    .await
    .unwrap();
    eprintln!("the slow head: {seen:?} after {after:?}");
    assert!(!matches!(seen, Seen::Open), "still open after {after:?}");
    assert!(
        after >= Duration::from_millis(900) && after < Duration::from_secs(5),
        "{after:?}"
    );
    // The server still serves.
    let (status, _) = small_review(&server).await;
    assert_eq!(status, 200);
}

// Issue 38, item 3: one large legitimate review made every other review wait for the budget.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_large_review_being_worked_on_does_not_delay_a_small_one() {
    let types = Arc::new(SlowTypes {
        delay: Duration::from_millis(10),
        ..Default::default()
    });
    let server = Server::start(types.clone(), |c| {
        // smaller than the LIST-sized review: it takes the whole budget
        c.memory_budget = 1024 * 1024;
    })
    .await;
    let list = wire::list_review("kudo.dev/v1beta2");
    assert!(list.len() > 1024 * 1024);
    let client = server.client();
    let url = server.url("/convert");
    let large = tokio::spawn(async move {
        let r = client.post(url).body(list).send().await.unwrap();
        r.status().as_u16()
    });
    let started = Instant::now();
    while types.calls.load(Ordering::SeqCst) == 0 {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the large review never started"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let (status, took) = small_review(&server).await;
    eprintln!(
        "a small review beside a large one ({} lookups done): {took:?}",
        types.calls.load(Ordering::SeqCst)
    );
    assert_eq!(status, 200);
    assert!(
        !large.is_finished(),
        "the large review must still be at work"
    );
    assert!(
        took < Duration::from_secs(1),
        "the small review took {took:?}"
    );
    assert_eq!(large.await.unwrap(), 200);
}

// Issue 38, item 2: after its 408, a 25 MB review kept a core busy for 7 s more, its share of
// the budget released already.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_review_past_its_deadline_is_cancelled_and_keeps_its_share_until_its_work_stops() {
    let types = Arc::new(SlowTypes {
        gated: true,
        ..Default::default()
    });
    let server = Server::start(types.clone(), |c| {
        c.request_timeout = Duration::from_millis(500);
    })
    .await;
    let list = wire::list_review("kudo.dev/v1beta2");
    let started = Instant::now();
    let r = server
        .client()
        .post(server.url("/convert"))
        .body(list.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 408, "{:?}", r.text().await);
    assert!(started.elapsed() < Duration::from_secs(5));
    // The work is stuck in its first lookup: it still holds its share of the budget.
    assert_eq!(types.calls.load(Ordering::SeqCst), 1);
    let held = server.metric(r#"kudo_webhook_memory_budget_in_use_bytes{lane="large"}"#);
    assert!(held >= list.len() as f64, "held {held}");
    types.open();
    let stopping = Instant::now();
    while server.metric(r#"kudo_webhook_memory_budget_in_use_bytes{lane="large"}"#) > 0.0 {
        assert!(
            stopping.elapsed() < Duration::from_secs(5),
            "the share was never given back"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // It stopped at the next object: one lookup, not one per Instance of the 1000 objects.
    let calls = types.calls.load(Ordering::SeqCst);
    assert!(calls <= 2, "{calls} lookups after the deadline");
    assert_eq!(server.metric("kudo_webhook_cancelled_reviews_total"), 1.0);
    assert_eq!(
        server.metric(r#"kudo_webhook_refused_total{reason="request_timeout"}"#),
        1.0
    );
    // The budget serves the next one.
    types.calls.store(0, Ordering::SeqCst);
    let (status, _) = small_review(&server).await;
    assert_eq!(status, 200);
}
