//! The HTTPS server: routes, limits, metrics, certificate reload, graceful shutdown.
//!
//! - `POST /convert` ([`crate::conversion`]), `POST /admit/instance/mutate`,
//!   `POST /admit/instance/validate` and `POST /admit/instance/v1beta1` ([`crate::admission`]). The handlers are CPU-bound (a LIST
//!   review of 1000 objects takes tens of milliseconds), so they run on tokio's blocking pool.
//! - `GET /healthz` (the process serves), `GET /readyz` (the OperatorVersion store can answer;
//!   the body says why not), `GET /metrics` (Prometheus text).
//! - TLS only (rustls with the ring provider). The certificate and key files are read again when
//!   they change on disk (a mounted Secret is updated in place), checked every
//!   [`Config::reload_interval`]; a pair that does not load keeps the previous one.
//! - Shutdown: on the future given to [`serve`] (SIGTERM or Ctrl-C in the binary), in-flight
//!   requests get [`Config::grace`] to finish.
//!
//! # Fair admission (issue 38)
//!
//! This server answers every Instance admission review and every conversion review of the
//! cluster, and kube-apiserver gives up on an admission webhook after 10 s. So no single
//! request, slow or large, may hold what the others need. A review goes through these steps,
//! each bounded (docs/limits.md, section "Webhook server", lists the defaults, the flags, what a
//! client sees and the metric):
//!
//! 1. **Connection.** The TLS handshake and the request head (HTTP/1) must arrive within
//!    [`Config::header_read_timeout`] (hyper's `header_read_timeout`, with tokio's timer), else
//!    the connection is closed. An idle HTTP/1 keep-alive connection is closed after the same
//!    time (hyper starts the clock when it waits for the next head).
//! 2. **Body.** The body is read here, frame by frame, before the handler runs. It must arrive
//!    within [`Config::read_timeout`] of the head (408, `refused{reason="read_timeout"}`), and be
//!    at most [`Config::body_limit`] (413 at once by `Content-Length`, else when it passes it:
//!    `reason="body_too_large"`). Time spent waiting for the memory budget (below) does not count
//!    against the sender: the server is not reading then.
//! 3. **Memory budget.** Request bodies take a share of a budget while they are read and
//!    handled: bodies of at most [`Config::small_body`] by `Content-Length` (every ordinary
//!    admission review and single-object conversion) from a lane of their own,
//!    [`Config::small_budget`], the others from [`Config::memory_budget`]. A share is taken **as
//!    bytes arrive**, not by the declared `Content-Length`, so a client that declares 8 MiB and
//!    trickles holds what it sent (and is dropped at the read deadline). When a lane is short,
//!    the body gives back what it holds and waits in line for its whole declared size (as the
//!    budget always did): partly read bodies never wait for each other, so two large reviews
//!    cannot hold half the budget each and stall. While a body waits, it is not read (TCP
//!    pushes back on its sender): its first KiB is taken before anything is read, so a body
//!    that finds the lane short at once waits unread; one that finds it short later keeps what
//!    it had read. A burst of 64 LIST-sized conversions peaked about 10 MB higher than with
//!    the old reservation by `Content-Length` (BENCHMARKS.md).
//!    A handler holds about three times its body (the body, the parts it parses, the reply),
//!    and the allocator keeps more: the budget bounds the memory of a burst of LIST-sized
//!    conversions, which without it took 219 MiB of the 256 MiB `kudo init` gives the Pod at
//!    64 LISTs of 1000 objects, and more with bigger ones (BENCHMARKS.md). The default, 8 MiB,
//!    was also the fastest on 2 cores: fewer reviews at once, same throughput, shorter tail. The
//!    small lane keeps a 1 KB review from waiting behind a large one: before it, one 25 MB
//!    review (or one slow sender) made every other review wait.
//! 4. **Work.** At most [`Config::max_concurrency`] handlers run at once (after their body is
//!    in, so slow senders take no slot). A review not answered within
//!    [`Config::request_timeout`] of its head gets 408 (`reason="request_timeout"`), and its
//!    work is **cancelled, not orphaned**: the handler's blocking task holds the review's budget
//!    share and slot, and stops at the next object of a ConversionReview or the next stage of an
//!    AdmissionReview once the flag is set ([`crate::conversion::convert_review_until`],
//!    [`crate::admission::admit_review_until`]); the share and the slot are given back only when
//!    the work has stopped (`kudo_webhook_cancelled_reviews_total`). A client that goes away
//!    cancels its review the same way.
//!
//! Metrics of the limits: `kudo_webhook_refused_total{reason}`,
//! `kudo_webhook_memory_budget_in_use_bytes{lane}`, `kudo_webhook_memory_budget_waits_total{lane}`
//! and `kudo_webhook_cancelled_reviews_total`. A connection closed for a slow head is not
//! counted (hyper closes it without telling the service).
//!
//! # Modules
//!
//! | | |
//! |---|---|
//! | `routes` | the routes and their handlers |
//! | `fairness` | fair admission: the body read, the budget share, the slot, the timeout, refusals |
//! | `budget` | `MemoryBudget`, one lane of the memory budget |
//! | `metrics` | [`Metrics`], the `kudo_webhook_*` Prometheus metrics |
//! | `tls` | the certificate loaded, and reloaded when it changes on disk |
//! | `no_cluster` | [`NoCluster`], [`Offline`]: the stores without a cluster |

mod budget;
mod fairness;
mod metrics;
mod no_cluster;
mod routes;
mod tls;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use axum_server::accept::NoDelayAcceptor;
use axum_server::tls_rustls::RustlsAcceptor;
use hyper_util::rt::TokioTimer;
use kudo_crd::convert::TypeSource;

use crate::admission::{Mode, OperatorVersions};

pub use metrics::Metrics;
pub use no_cluster::{NoCluster, Offline};

/// How the server runs.
#[derive(Debug, Clone)]
pub struct Config {
    /// Address to listen on (port 0: any free port).
    pub listen: SocketAddr,
    /// PEM certificate chain.
    pub tls_cert: PathBuf,
    /// PEM private key.
    pub tls_key: PathBuf,
    /// Largest request body accepted.
    pub body_limit: usize,
    /// Longest a request may take, from its head to its answer.
    pub request_timeout: Duration,
    /// Longest the TLS handshake, and then each HTTP/1 request head, may take to arrive.
    pub header_read_timeout: Duration,
    /// Longest a request's body may take to arrive once its head is in (time spent waiting
    /// for the memory budget not counted).
    pub read_timeout: Duration,
    /// Handlers run at once.
    pub max_concurrency: usize,
    /// Bytes of request bodies larger than [`Config::small_body`] handled at once.
    pub memory_budget: usize,
    /// A body of at most this many bytes (by `Content-Length`) is small: it takes its share
    /// from [`Config::small_budget`].
    pub small_body: usize,
    /// Bytes of small request bodies handled at once.
    pub small_budget: usize,
    /// How often the certificate files are checked for changes.
    pub reload_interval: Duration,
    /// How long in-flight requests may take to finish at shutdown.
    pub grace: Duration,
}

impl Config {
    /// Defaults for everything but the address and the certificate files.
    pub fn new(listen: SocketAddr, tls_cert: PathBuf, tls_key: PathBuf) -> Config {
        Config {
            listen,
            tls_cert,
            tls_key,
            body_limit: 32 * 1024 * 1024,
            request_timeout: Duration::from_secs(25),
            header_read_timeout: Duration::from_secs(5),
            read_timeout: Duration::from_secs(5),
            max_concurrency: 64,
            memory_budget: 8 * 1024 * 1024,
            small_body: 64 * 1024,
            small_budget: 1024 * 1024,
            reload_interval: Duration::from_secs(10),
            grace: Duration::from_secs(20),
        }
    }
}

/// Why the server could not start or stopped.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The certificate or key cannot be read or used.
    #[error("cannot load the TLS certificate {cert} and key {key}: {source}")]
    Tls {
        /// Certificate file.
        cert: PathBuf,
        /// Key file.
        key: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The socket cannot be used.
    #[error("cannot serve on {addr}: {source}")]
    Serve {
        /// The address.
        addr: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
}

/// What the handlers share.
pub struct Shared {
    /// OperatorVersion parameter types for conversion.
    pub types: Arc<dyn TypeSource + Send + Sync>,
    /// OperatorVersions for admission.
    pub store: Arc<dyn OperatorVersions + Send + Sync>,
    /// Prometheus metrics.
    pub metrics: Metrics,
    /// Where reviews are captured (`--capture-dir`); `None`: not captured.
    pub capture: Option<PathBuf>,
    /// The cluster, for what admission of a Rollout reads there (its claims, whether its
    /// approver may approve); `None`: no cluster (`--no-cluster`), and such a Rollout is refused.
    pub cluster: Option<kube::Client>,
}

/// What answers an Instance admission review (`/admit/instance/*`): `(HTTP status, the review
/// to send)` for a body, the webhook asked, the OperatorVersions and the cancellation flag.
/// kudo's is [`crate::admit_review_until`]; the benchmarks' no-op floor
/// (`webhook/examples/noop.rs`) allows everything without reading the Instance.
pub type Admit = fn(&[u8], Mode, &dyn OperatorVersions, &AtomicBool) -> (u16, serde_json::Value);

/// Serves until `shutdown` completes. `on_listening` gets the bound address (for port 0).
pub async fn serve(
    config: Config,
    shared: Arc<Shared>,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    on_listening: impl FnOnce(SocketAddr) + Send + 'static,
) -> Result<(), Error> {
    serve_with(
        config,
        shared,
        crate::admission::admit_review_until,
        shutdown,
        on_listening,
    )
    .await
}

/// [`serve`] with Instance admission answered by `answer`: the same server (TLS, limits, fair
/// admission, the blocking pool, metrics), another decision.
pub async fn serve_with(
    config: Config,
    shared: Arc<Shared>,
    answer: Admit,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    on_listening: impl FnOnce(SocketAddr) + Send + 'static,
) -> Result<(), Error> {
    let tls = tls::load(&config).await?;
    let handle = axum_server::Handle::new();
    tls::spawn_reload(tls.clone(), config.clone(), shared.clone());
    {
        let handle = handle.clone();
        let grace = config.grace;
        tokio::spawn(async move {
            shutdown.await;
            tracing::info!("shutting down");
            handle.graceful_shutdown(Some(grace));
        });
    }
    {
        let handle = handle.clone();
        tokio::spawn(async move {
            if let Some(addr) = handle.listening().await {
                on_listening(addr);
            }
        });
    }
    let app = routes::router(shared, &config, answer);
    // TCP_NODELAY: a reply's last partial segment is not held back waiting for the client's
    // ACK (Nagle against delayed ACK stalled about one large reply in four by 40 ms).
    // A slow TLS handshake is cut off like a slow request head.
    let acceptor = RustlsAcceptor::new(tls)
        .handshake_timeout(config.header_read_timeout)
        .acceptor(NoDelayAcceptor::new());
    let mut server = axum_server::bind(config.listen)
        .acceptor(acceptor)
        .handle(handle);
    // HTTP/1: a request head that does not arrive in time closes the connection (hyper needs a
    // timer for it; without one its 30 s default is not applied at all).
    server
        .http_builder()
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(config.header_read_timeout);
    server
        .serve(app.into_make_service())
        .await
        .map_err(|source| Error::Serve {
            addr: config.listen,
            source,
        })
}
