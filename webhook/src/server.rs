//! The HTTPS server: routes, limits, metrics, certificate reload, graceful shutdown.
//!
//! - `POST /convert` ([`crate::conversion`]), `POST /admit/instance/mutate`,
//!   `POST /admit/instance/validate` and `POST /admit/instance/v1beta1` ([`crate::admission`]). The handlers are CPU-bound (a LIST
//!   review of 1000 objects takes tens of milliseconds), so they run on tokio's blocking pool.
//! - `GET /healthz` (the process serves), `GET /readyz` (the OperatorVersion store can answer;
//!   the body says why not), `GET /metrics` (Prometheus text).
//! - Limits: request bodies above [`Config::body_limit`] get 413; a request that takes longer
//!   than [`Config::request_timeout`] gets 408 (kube-apiserver gives up after its own timeout,
//!   30 s by default for conversion, 10 s for admission); at most [`Config::max_concurrency`]
//!   requests are handled at once, the rest wait; and request bodies of at most
//!   [`Config::memory_budget`] bytes in all (by `Content-Length`, [`Config::body_limit`] when
//!   absent) are handled at once: a request whose body does not fit waits, within the timeout.
//!   A handler holds about three times its body (the body, the parts it parses, the reply), and
//!   the allocator keeps more: the budget bounds the memory of a burst of LIST-sized
//!   conversions, which without it took 219 MiB of the 256 MiB `kudo init` gives the Pod at 64
//!   LISTs of 1000 objects, and more with bigger ones (BENCHMARKS.md). The default, 8 MiB, was also the fastest on 2 cores: fewer reviews at
//!   once, same throughput, shorter tail.
//! - TLS only (rustls with the ring provider). The certificate and key files are read again when
//!   they change on disk (a mounted Secret is updated in place), checked every
//!   [`Config::reload_interval`]; a pair that does not load keeps the previous one.
//! - Shutdown: on the future given to [`serve`] (SIGTERM or Ctrl-C in the binary), in-flight
//!   requests get [`Config::grace`] to finish.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, OriginalUri, Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum_server::accept::NoDelayAcceptor;
use axum_server::tls_rustls::{RustlsAcceptor, RustlsConfig};
use kudo_crd::convert::TypeSource;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tower::limit::ConcurrencyLimitLayer;
use tower_http::limit::RequestBodyLimitLayer;
use tower_http::timeout::TimeoutLayer;

use crate::admission::{self, Mode, OperatorVersions, StoreError};
use crate::conversion;

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
    /// Longest a request may take.
    pub request_timeout: Duration,
    /// Requests handled at once.
    pub max_concurrency: usize,
    /// Bytes of request bodies handled at once.
    pub memory_budget: usize,
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
            max_concurrency: 64,
            memory_budget: 8 * 1024 * 1024,
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
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    endpoint: String,
    code: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct EndpointLabels {
    endpoint: String,
}

/// The server's metrics.
pub struct Metrics {
    registry: Registry,
    requests: Family<RequestLabels, Counter>,
    latency: Family<EndpointLabels, Histogram>,
    objects: Counter,
    failed_objects: Counter,
    reloads: Counter,
}

impl Default for Metrics {
    fn default() -> Self {
        let mut registry = Registry::with_prefix("kudo_webhook");
        let requests = Family::<RequestLabels, Counter>::default();
        let latency = Family::<EndpointLabels, Histogram>::new_with_constructor(|| {
            Histogram::new([
                0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0,
            ])
        });
        let objects = Counter::default();
        let failed_objects = Counter::default();
        let reloads = Counter::default();
        registry.register(
            "requests",
            "Requests by endpoint and HTTP status",
            requests.clone(),
        );
        registry.register(
            "request_duration_seconds",
            "Time to answer a request, by endpoint",
            latency.clone(),
        );
        registry.register("conversion_objects", "Objects converted", objects.clone());
        registry.register(
            "conversion_failures",
            "Objects that could not be converted",
            failed_objects.clone(),
        );
        registry.register(
            "certificate_reloads",
            "Times the TLS certificate was loaded again from disk",
            reloads.clone(),
        );
        Metrics {
            registry,
            requests,
            latency,
            objects,
            failed_objects,
            reloads,
        }
    }
}

impl Metrics {
    fn observe(&self, endpoint: &str, code: u16, started: Instant) {
        self.requests
            .get_or_create(&RequestLabels {
                endpoint: endpoint.into(),
                code,
            })
            .inc();
        self.latency
            .get_or_create(&EndpointLabels {
                endpoint: endpoint.into(),
            })
            .observe(started.elapsed().as_secs_f64());
    }

    /// The metrics in Prometheus' text format.
    pub fn encode(&self) -> String {
        let mut out = String::new();
        let _ = prometheus_client::encoding::text::encode(&mut out, &self.registry);
        out
    }
}

/// Bytes of request bodies handled at once ([`Config::memory_budget`]), counted in KiB.
#[derive(Clone)]
pub struct MemoryBudget {
    permits: Arc<Semaphore>,
    total_kib: u32,
    /// What a request without `Content-Length` is counted as.
    unknown: usize,
}

impl MemoryBudget {
    /// A budget of `bytes`; a request of unknown size counts as `unknown` bytes.
    pub fn new(bytes: usize, unknown: usize) -> MemoryBudget {
        // At most 2^29 KiB (512 GiB): within Semaphore::MAX_PERMITS on every target.
        let total_kib = u32::try_from(bytes.div_ceil(1024))
            .unwrap_or(u32::MAX)
            .clamp(1, u32::MAX >> 3);
        MemoryBudget {
            permits: Arc::new(Semaphore::new(total_kib as usize)),
            total_kib,
            unknown,
        }
    }

    /// Waits until a body of `bytes` (`None`: unknown) fits, and holds its share until the
    /// permit is dropped. A body larger than the whole budget waits for all of it.
    pub async fn reserve(&self, bytes: Option<usize>) -> Option<OwnedSemaphorePermit> {
        let kib = bytes.unwrap_or(self.unknown).div_ceil(1024);
        let kib = u32::try_from(kib)
            .unwrap_or(u32::MAX)
            .clamp(1, self.total_kib);
        // The semaphore is never closed, so this is always Some.
        self.permits.clone().acquire_many_owned(kib).await.ok()
    }

    /// Bytes of the budget not in use now.
    #[cfg(test)]
    pub fn available(&self) -> usize {
        self.permits.available_permits() * 1024
    }
}

async fn within_budget(
    State(budget): State<MemoryBudget>,
    request: Request,
    next: Next,
) -> Response {
    let declared = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok());
    let _held = budget.reserve(declared).await;
    next.run(request).await
}

/// The routes, with the limits of `config`.
pub fn router(shared: Arc<Shared>, config: &Config) -> Router {
    let budget = MemoryBudget::new(config.memory_budget, config.body_limit);
    let hooks = Router::new()
        .route("/convert", post(convert))
        .route("/admit/instance/mutate", post(mutate))
        .route("/admit/instance/validate", post(validate))
        .route("/admit/instance/v1beta1", post(v1beta1))
        .route_layer(middleware::from_fn_with_state(budget, within_budget));
    Router::new()
        .merge(hooks)
        .route("/healthz", get(|| async { "ok\n" }))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics))
        .layer(DefaultBodyLimit::disable())
        .layer(RequestBodyLimitLayer::new(config.body_limit))
        .layer(ConcurrencyLimitLayer::new(config.max_concurrency))
        .layer(TimeoutLayer::with_status_code(
            StatusCode::REQUEST_TIMEOUT,
            config.request_timeout,
        ))
        .with_state(shared)
}

fn json(status: u16, body: Vec<u8>) -> Response {
    (
        StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_REQUEST),
        [(header::CONTENT_TYPE, "application/json")],
        body,
    )
        .into_response()
}

/// Captures one review when [`Shared::capture`] is set.
fn capture(
    shared: &Shared,
    endpoint: &str,
    uri: &axum::http::Uri,
    body: &[u8],
    status: u16,
    reply: &[u8],
) {
    let Some(dir) = &shared.capture else { return };
    match crate::capture::write(dir, endpoint, &uri.to_string(), body, status, reply) {
        Ok(Some(file)) => tracing::debug!(file = %file.display(), "captured"),
        Ok(None) => {}
        Err(e) => tracing::warn!(error = %e, dir = %dir.display(), "cannot write the capture"),
    }
}

async fn convert(
    State(shared): State<Arc<Shared>>,
    OriginalUri(uri): OriginalUri,
    body: Bytes,
) -> Response {
    let started = Instant::now();
    let s = shared.clone();
    let done = tokio::task::spawn_blocking(move || {
        let (reply, counts) = conversion::convert_review(&body, s.types.as_ref());
        capture(&s, "convert", &uri, &body, reply.http_status, &reply.body);
        (reply.http_status, reply.body, counts)
    })
    .await;
    let (status, bytes, counts) = match done {
        Ok(d) => d,
        Err(e) => {
            tracing::error!(error = %e, "the conversion handler failed; this is a bug");
            (500, Vec::new(), Default::default())
        }
    };
    shared.metrics.objects.inc_by(counts.objects as u64);
    shared.metrics.failed_objects.inc_by(counts.failed as u64);
    shared.metrics.observe("convert", status, started);
    tracing::debug!(
        status,
        objects = counts.objects,
        failed = counts.failed,
        "convert"
    );
    json(status, bytes)
}

async fn admit(
    shared: Arc<Shared>,
    uri: axum::http::Uri,
    body: Bytes,
    mode: Mode,
    endpoint: &'static str,
) -> Response {
    let started = Instant::now();
    let s = shared.clone();
    let done = tokio::task::spawn_blocking(move || {
        let (status, review) = admission::admit_review(&body, mode, s.store.as_ref());
        let reply = serde_json::to_vec(&review).unwrap_or_default();
        capture(&s, endpoint, &uri, &body, status, &reply);
        (status, reply)
    })
    .await;
    let (status, bytes) = done.unwrap_or_else(|e| {
        tracing::error!(error = %e, "the admission handler failed; this is a bug");
        (500, Vec::new())
    });
    shared.metrics.observe(endpoint, status, started);
    json(status, bytes)
}

async fn mutate(
    State(shared): State<Arc<Shared>>,
    OriginalUri(uri): OriginalUri,
    body: Bytes,
) -> Response {
    admit(shared, uri, body, Mode::Mutate, "mutate").await
}

async fn validate(
    State(shared): State<Arc<Shared>>,
    OriginalUri(uri): OriginalUri,
    body: Bytes,
) -> Response {
    admit(shared, uri, body, Mode::Validate, "validate").await
}

async fn v1beta1(
    State(shared): State<Arc<Shared>>,
    OriginalUri(uri): OriginalUri,
    body: Bytes,
) -> Response {
    admit(shared, uri, body, Mode::V1beta1, "v1beta1").await
}

async fn readyz(State(shared): State<Arc<Shared>>) -> Response {
    match shared.store.ready() {
        Ok(()) => (StatusCode::OK, "ready\n").into_response(),
        Err(why) => (
            StatusCode::SERVICE_UNAVAILABLE,
            format!("not ready: {why}\n"),
        )
            .into_response(),
    }
}

async fn metrics(State(shared): State<Arc<Shared>>) -> Response {
    (
        [(
            header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        shared.metrics.encode(),
    )
        .into_response()
}

fn modified(config: &Config) -> Option<(SystemTime, SystemTime)> {
    let m = |p: &PathBuf| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    Some((m(&config.tls_cert)?, m(&config.tls_key)?))
}

/// Serves until `shutdown` completes. `on_listening` gets the bound address (for port 0).
pub async fn serve(
    config: Config,
    shared: Arc<Shared>,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    on_listening: impl FnOnce(SocketAddr) + Send + 'static,
) -> Result<(), Error> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let tls = RustlsConfig::from_pem_file(&config.tls_cert, &config.tls_key)
        .await
        .map_err(|source| Error::Tls {
            cert: config.tls_cert.clone(),
            key: config.tls_key.clone(),
            source,
        })?;
    let handle = axum_server::Handle::new();
    // Certificate reload: when either file changes, load the pair again.
    {
        let tls = tls.clone();
        let config = config.clone();
        let shared = shared.clone();
        tokio::spawn(async move {
            let mut seen = modified(&config);
            loop {
                tokio::time::sleep(config.reload_interval).await;
                let now = modified(&config);
                if now.is_some() && now != seen {
                    match tls
                        .reload_from_pem_file(&config.tls_cert, &config.tls_key)
                        .await
                    {
                        Ok(()) => {
                            seen = now;
                            shared.metrics.reloads.inc();
                            tracing::info!(cert = %config.tls_cert.display(), "TLS certificate reloaded");
                        }
                        Err(e) => {
                            tracing::warn!(error = %e, "the new TLS certificate does not load; keeping the previous one")
                        }
                    }
                }
            }
        });
    }
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
    let app = router(shared, &config);
    // TCP_NODELAY: a reply's last partial segment is not held back waiting for the client's
    // ACK (Nagle against delayed ACK stalled about one large reply in four by 40 ms).
    let acceptor = RustlsAcceptor::new(tls).acceptor(NoDelayAcceptor::new());
    axum_server::bind(config.listen)
        .acceptor(acceptor)
        .handle(handle)
        .serve(app.into_make_service())
        .await
        .map_err(|source| Error::Serve {
            addr: config.listen,
            source,
        })
}

/// The store of a webhook started without a cluster connection (`--no-cluster`): conversion
/// works (values it cannot type stay as they are), admission is refused with this reason.
pub struct NoCluster;

impl TypeSource for NoCluster {
    fn schema(&self, _: &str, _: &str) -> Option<kudo_pkg::ParamSchema> {
        None
    }
}

impl OperatorVersions for NoCluster {
    fn ready(&self) -> Result<(), StoreError> {
        Err(StoreError::NoCluster)
    }
    fn get(&self, _: &str, _: &str) -> Result<Option<Arc<kudo_pkg::change::Version>>, StoreError> {
        Err(StoreError::NoCluster)
    }
}

/// Like [`NoCluster`], with the reason the cluster cannot be reached.
pub struct Offline(pub String);

impl TypeSource for Offline {
    fn schema(&self, _: &str, _: &str) -> Option<kudo_pkg::ParamSchema> {
        None
    }
}

impl OperatorVersions for Offline {
    fn ready(&self) -> Result<(), StoreError> {
        Err(StoreError::Offline(self.0.clone()))
    }
    fn get(&self, _: &str, _: &str) -> Result<Option<Arc<kudo_pkg::change::Version>>, StoreError> {
        Err(StoreError::Offline(self.0.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KIB: usize = 1024;

    #[tokio::test]
    async fn a_body_that_does_not_fit_waits_until_the_budget_frees() {
        let budget = MemoryBudget::new(1000 * KIB, 32 * 1024 * KIB);
        let first = budget.reserve(Some(600 * KIB)).await;
        assert!(first.is_some());
        assert_eq!(budget.available(), 400 * KIB);
        let waiting =
            tokio::time::timeout(Duration::from_millis(50), budget.reserve(Some(600 * KIB))).await;
        assert!(waiting.is_err(), "600 KiB more must wait");
        // A request that gave up holds nothing; a smaller body still fits.
        assert_eq!(budget.available(), 400 * KIB);
        let small = budget.reserve(Some(300 * KIB)).await;
        assert_eq!(budget.available(), 100 * KIB);
        drop(first);
        let second =
            tokio::time::timeout(Duration::from_secs(5), budget.reserve(Some(600 * KIB))).await;
        assert!(second.is_ok_and(|p| p.is_some()));
        drop(small);
    }

    #[tokio::test]
    async fn a_body_larger_than_the_budget_takes_all_of_it_and_an_unknown_size_counts_as_the_limit()
    {
        let budget = MemoryBudget::new(1024 * KIB, 4 * 1024 * KIB);
        let big = budget.reserve(Some(10 * 1024 * KIB)).await;
        assert!(big.is_some());
        assert_eq!(budget.available(), 0);
        drop(big);
        let unknown = budget.reserve(None).await;
        assert_eq!(budget.available(), 0);
        drop(unknown);
        let tiny = budget.reserve(Some(1)).await;
        assert_eq!(budget.available(), 1023 * KIB);
        drop(tiny);
        assert_eq!(budget.available(), 1024 * KIB);
    }
}
