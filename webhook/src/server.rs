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

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{DefaultBodyLimit, Extension, OriginalUri, Request, State};
use axum::http::{HeaderValue, StatusCode, Version, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum_server::accept::NoDelayAcceptor;
use axum_server::tls_rustls::{RustlsAcceptor, RustlsConfig};
use futures::StreamExt;
use hyper_util::rt::TokioTimer;
use kudo_crd::convert::TypeSource;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

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

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ReasonLabels {
    reason: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct LaneLabels {
    lane: &'static str,
}

/// The server's metrics.
pub struct Metrics {
    registry: Registry,
    requests: Family<RequestLabels, Counter>,
    latency: Family<EndpointLabels, Histogram>,
    objects: Counter,
    failed_objects: Counter,
    reloads: Counter,
    refused: Family<ReasonLabels, Counter>,
    budget_in_use: Family<LaneLabels, Gauge>,
    budget_waits: Family<LaneLabels, Counter>,
    cancelled: Counter,
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
        let refused = Family::<ReasonLabels, Counter>::default();
        let budget_in_use = Family::<LaneLabels, Gauge>::default();
        let budget_waits = Family::<LaneLabels, Counter>::default();
        let cancelled = Counter::default();
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
        registry.register(
            "refused",
            "Reviews refused by a limit, by reason: read_timeout (408: the body did not arrive \
             in time), body_too_large (413), body_unreadable (400: the client broke the body \
             off), budget_timeout (408: no room in the memory budget before the request \
             timeout), request_timeout (408: not answered in time; its work is cancelled)",
            refused.clone(),
        );
        registry.register(
            "memory_budget_in_use_bytes",
            "Bytes of the memory budget held by request bodies, by lane (small, large)",
            budget_in_use.clone(),
        );
        registry.register(
            "memory_budget_waits",
            "Request bodies that waited for room in the memory budget, by lane",
            budget_waits.clone(),
        );
        registry.register(
            "cancelled_reviews",
            "Reviews whose work stopped early because their deadline passed or their client \
             went away",
            cancelled.clone(),
        );
        Metrics {
            registry,
            requests,
            latency,
            objects,
            failed_objects,
            reloads,
            refused,
            budget_in_use,
            budget_waits,
            cancelled,
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

/// One lane of the memory budget ([`Config::memory_budget`], [`Config::small_budget`]):
/// bytes of request bodies handled at once, counted in KiB.
#[derive(Clone)]
pub struct MemoryBudget {
    permits: Arc<Semaphore>,
    total_kib: u32,
    /// What a request without `Content-Length` is counted as when it must wait.
    unknown: usize,
    in_use: Gauge,
    waits: Counter,
}

/// A request's share of a [`MemoryBudget`], given back when dropped.
pub struct Held {
    permit: Option<OwnedSemaphorePermit>,
    in_use: Gauge,
}

impl Held {
    /// Bytes held (in whole KiB).
    pub fn bytes(&self) -> usize {
        self.permit.as_ref().map_or(0, |p| p.num_permits() * 1024)
    }

    fn add(&mut self, more: OwnedSemaphorePermit) {
        self.in_use.inc_by((more.num_permits() * 1024) as i64);
        match &mut self.permit {
            Some(p) => p.merge(more),
            None => self.permit = Some(more),
        }
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        self.in_use.dec_by(self.bytes() as i64);
    }
}

impl MemoryBudget {
    /// A budget of `bytes`; a request of unknown size counts as `unknown` bytes when it waits.
    pub fn new(bytes: usize, unknown: usize) -> MemoryBudget {
        // At most 2^29 KiB (512 GiB): within Semaphore::MAX_PERMITS on every target.
        let total_kib = u32::try_from(bytes.div_ceil(1024))
            .unwrap_or(u32::MAX)
            .clamp(1, u32::MAX >> 3);
        MemoryBudget {
            permits: Arc::new(Semaphore::new(total_kib as usize)),
            total_kib,
            unknown,
            in_use: Gauge::default(),
            waits: Counter::default(),
        }
    }

    fn with_metrics(mut self, metrics: &Metrics, lane: &'static str) -> MemoryBudget {
        self.in_use = metrics
            .budget_in_use
            .get_or_create(&LaneLabels { lane })
            .clone();
        self.waits = metrics
            .budget_waits
            .get_or_create(&LaneLabels { lane })
            .clone();
        self
    }

    /// `bytes` in KiB, at least 1, at most the whole budget.
    fn kib(&self, bytes: usize) -> u32 {
        u32::try_from(bytes.div_ceil(1024))
            .unwrap_or(u32::MAX)
            .clamp(1, self.total_kib)
    }

    /// A share of nothing.
    pub fn nothing(&self) -> Held {
        Held {
            permit: None,
            in_use: self.in_use.clone(),
        }
    }

    /// Waits until a body of `bytes` (`None`: unknown) fits, and holds its share until the
    /// [`Held`] is dropped. A body larger than the whole budget waits for all of it.
    #[cfg(test)]
    pub async fn reserve(&self, bytes: Option<usize>) -> Held {
        let kib = self.kib(bytes.unwrap_or(self.unknown));
        let mut held = self.nothing();
        // The semaphore is never closed.
        if let Ok(p) = self.permits.clone().acquire_many_owned(kib).await {
            held.add(p);
        }
        held
    }

    /// Makes `held` cover `bytes` received so far of a body of `declared` bytes. Takes the
    /// difference at once when the budget has it; otherwise gives back what `held` has and
    /// waits in line for the whole body (`declared`, the unknown size when absent, at least
    /// `bytes`): a partly read body never waits holding a share, so partly read bodies cannot
    /// stall each other. `true` when it waited.
    pub async fn grow(&self, held: &mut Held, bytes: usize, declared: Option<usize>) -> bool {
        let want = self.kib(bytes);
        let have = (held.bytes() / 1024) as u32;
        if want <= have {
            return false;
        }
        if let Ok(more) = self.permits.clone().try_acquire_many_owned(want - have) {
            held.add(more);
            return false;
        }
        *held = self.nothing();
        self.waits.inc();
        let whole = self.kib(declared.unwrap_or(self.unknown).max(bytes));
        if let Ok(p) = self.permits.clone().acquire_many_owned(whole).await {
            held.add(p);
        }
        true
    }

    /// Gives back what `held` has beyond `bytes`.
    pub fn trim(&self, held: &mut Held, bytes: usize) {
        let keep = self.kib(bytes) as usize;
        if let Some(p) = &mut held.permit
            && p.num_permits() > keep
            && let Some(extra) = p.split(p.num_permits() - keep)
        {
            self.in_use.dec_by((extra.num_permits() * 1024) as i64);
        }
    }

    /// Bytes of the budget not in use now.
    #[cfg(test)]
    pub fn available(&self) -> usize {
        self.permits.available_permits() * 1024
    }
}

/// Why a review was refused before its handler answered: the `reason` of
/// `kudo_webhook_refused_total`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Refusal {
    /// The body did not arrive within [`Config::read_timeout`].
    ReadTimeout,
    /// The body is larger than [`Config::body_limit`].
    BodyTooLarge,
    /// The client broke the body off (or sent a malformed one).
    BodyUnreadable,
    /// The memory budget had no room before [`Config::request_timeout`].
    BudgetTimeout,
    /// Not answered within [`Config::request_timeout`]; the work is cancelled.
    RequestTimeout,
}

impl Refusal {
    fn reason(self) -> &'static str {
        match self {
            Refusal::ReadTimeout => "read_timeout",
            Refusal::BodyTooLarge => "body_too_large",
            Refusal::BodyUnreadable => "body_unreadable",
            Refusal::BudgetTimeout => "budget_timeout",
            Refusal::RequestTimeout => "request_timeout",
        }
    }

    fn status(self) -> StatusCode {
        match self {
            Refusal::BodyTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            Refusal::BodyUnreadable => StatusCode::BAD_REQUEST,
            _ => StatusCode::REQUEST_TIMEOUT,
        }
    }

    fn message(self, gate: &Gate) -> String {
        match self {
            Refusal::ReadTimeout => format!(
                "the request body did not arrive within {:?} (--read-timeout)\n",
                gate.read_timeout
            ),
            Refusal::BodyTooLarge => format!(
                "the request body is larger than {} bytes (--body-limit-mib)\n",
                gate.body_limit
            ),
            Refusal::BodyUnreadable => "the request body could not be read\n".into(),
            Refusal::BudgetTimeout => format!(
                "the server's memory budget had no room for this body within {:?} \
                 (--memory-budget-mib, --request-timeout)\n",
                gate.request_timeout
            ),
            Refusal::RequestTimeout => format!(
                "the review was not answered within {:?} (--request-timeout); its work is \
                 cancelled\n",
                gate.request_timeout
            ),
        }
    }
}

/// What the review routes share: the limits and the budget lanes.
struct Gate {
    shared: Arc<Shared>,
    large: MemoryBudget,
    small: MemoryBudget,
    slots: Arc<Semaphore>,
    body_limit: usize,
    small_body: usize,
    read_timeout: Duration,
    request_timeout: Duration,
}

impl Gate {
    fn refuse(
        &self,
        endpoint: &'static str,
        why: Refusal,
        started: Instant,
        version: Version,
    ) -> Response {
        self.shared
            .metrics
            .refused
            .get_or_create(&ReasonLabels {
                reason: why.reason(),
            })
            .inc();
        let status = why.status();
        self.shared
            .metrics
            .observe(endpoint, status.as_u16(), started);
        tracing::info!(endpoint, reason = why.reason(), "review refused");
        let mut response = (status, why.message(self)).into_response();
        if version < Version::HTTP_2 {
            // The connection may hold the rest of an unread body: close it (HTTP/2 resets
            // the stream instead, and has no such header).
            response
                .headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
        }
        response
    }
}

/// What a review holds while its handler runs: its share of the memory budget, its slot, and
/// the flag that stops its work. The handler moves it into its blocking task, so the share and
/// the slot are given back when the work has stopped, not when the request is answered.
struct Ticket {
    _held: Held,
    _slot: OwnedSemaphorePermit,
    cancel: Arc<AtomicBool>,
}

/// The request extension carrying the [`Ticket`] from [`fair`] to the handler.
#[derive(Clone)]
struct TicketCell(Arc<Mutex<Option<Ticket>>>);

/// The ticket of a request, and its cancel flag (a flag never set when the route runs without
/// [`fair`]).
fn take_ticket(cell: Option<Extension<TicketCell>>) -> (Option<Ticket>, Arc<AtomicBool>) {
    let ticket = cell.and_then(|Extension(c)| c.0.lock().ok().and_then(|mut t| t.take()));
    let cancel = ticket
        .as_ref()
        .map_or_else(|| Arc::new(AtomicBool::new(false)), |t| t.cancel.clone());
    (ticket, cancel)
}

/// Sets the flag when dropped: when [`fair`] answers, times out, or is dropped because its
/// client went away.
struct CancelOnDrop(Arc<AtomicBool>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Release);
    }
}

fn endpoint_of(path: &str) -> &'static str {
    match path {
        "/convert" => "convert",
        "/admit/instance/mutate" => "mutate",
        "/admit/instance/validate" => "validate",
        "/admit/instance/v1beta1" => "v1beta1",
        _ => "other",
    }
}

/// Reads a body frame by frame, taking its share of `lane` as bytes arrive. The sender has
/// until `read_by` (moved on by the time spent waiting for the budget); the whole wait is
/// bounded by `deadline`.
async fn receive(
    gate: &Gate,
    body: Body,
    lane: &MemoryBudget,
    declared: Option<usize>,
    mut read_by: tokio::time::Instant,
    deadline: tokio::time::Instant,
) -> Result<(Bytes, Held), Refusal> {
    let mut held = lane.nothing();
    let mut frames = body.into_data_stream();
    let mut chunks: Vec<Bytes> = Vec::new();
    let mut size = 0usize;
    // The first KiB is taken before anything is read: when the lane is already short, the body
    // waits in line unread (its bytes stay with the sender), instead of waiting with its first
    // frames and the connection's read buffer in memory.
    let waiting = tokio::time::Instant::now();
    match tokio::time::timeout_at(deadline, lane.grow(&mut held, 1, declared)).await {
        Err(_) => return Err(Refusal::BudgetTimeout),
        Ok(true) => read_by = (read_by + waiting.elapsed()).min(deadline),
        Ok(false) => {}
    }
    loop {
        let chunk = match tokio::time::timeout_at(read_by, frames.next()).await {
            Err(_) => return Err(Refusal::ReadTimeout),
            Ok(None) => break,
            Ok(Some(Err(_))) => return Err(Refusal::BodyUnreadable),
            Ok(Some(Ok(chunk))) => chunk,
        };
        size += chunk.len();
        if size > gate.body_limit {
            return Err(Refusal::BodyTooLarge);
        }
        let waiting = tokio::time::Instant::now();
        match tokio::time::timeout_at(deadline, lane.grow(&mut held, size, declared)).await {
            Err(_) => return Err(Refusal::BudgetTimeout),
            Ok(true) => read_by = (read_by + waiting.elapsed()).min(deadline),
            Ok(false) => {}
        }
        chunks.push(chunk);
    }
    lane.trim(&mut held, size);
    let body = if chunks.len() == 1 {
        chunks.pop().unwrap_or_default()
    } else {
        let mut all = Vec::with_capacity(size);
        for chunk in chunks.drain(..) {
            all.extend_from_slice(&chunk);
        }
        Bytes::from(all)
    };
    Ok((body, held))
}

/// The review routes' limits ([module docs](self)): the body read with a deadline and its
/// share of the budget taken as it arrives, a slot, then the handler within the request
/// timeout, cancelled when it passes.
async fn fair(State(gate): State<Arc<Gate>>, request: Request, next: Next) -> Response {
    let started = Instant::now();
    let now = tokio::time::Instant::now();
    let deadline = now + gate.request_timeout;
    let endpoint = endpoint_of(request.uri().path());
    let version = request.version();
    let declared = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok());
    if declared.is_some_and(|n| n > gate.body_limit) {
        return gate.refuse(endpoint, Refusal::BodyTooLarge, started, version);
    }
    let lane = match declared {
        Some(n) if n <= gate.small_body => &gate.small,
        _ => &gate.large,
    };
    let (parts, body) = request.into_parts();
    let read_by = (now + gate.read_timeout).min(deadline);
    let (body, held) = match receive(&gate, body, lane, declared, read_by, deadline).await {
        Ok(received) => received,
        Err(why) => return gate.refuse(endpoint, why, started, version),
    };
    let slot = match tokio::time::timeout_at(deadline, gate.slots.clone().acquire_owned()).await {
        Ok(Ok(slot)) => slot,
        _ => return gate.refuse(endpoint, Refusal::RequestTimeout, started, version),
    };
    let cancel = Arc::new(AtomicBool::new(false));
    let _cancel_when_done = CancelOnDrop(cancel.clone());
    let mut request = Request::from_parts(parts, Body::from(body));
    request
        .extensions_mut()
        .insert(TicketCell(Arc::new(Mutex::new(Some(Ticket {
            _held: held,
            _slot: slot,
            cancel,
        })))));
    match tokio::time::timeout_at(deadline, next.run(request)).await {
        Ok(response) => response,
        Err(_) => gate.refuse(endpoint, Refusal::RequestTimeout, started, version),
    }
}

/// The routes, with the limits of `config`.
pub fn router(shared: Arc<Shared>, config: &Config) -> Router {
    let gate = Arc::new(Gate {
        large: MemoryBudget::new(config.memory_budget, config.body_limit)
            .with_metrics(&shared.metrics, "large"),
        small: MemoryBudget::new(config.small_budget, config.small_body)
            .with_metrics(&shared.metrics, "small"),
        slots: Arc::new(Semaphore::new(config.max_concurrency.max(1))),
        body_limit: config.body_limit,
        small_body: config.small_body,
        read_timeout: config.read_timeout,
        request_timeout: config.request_timeout,
        shared: shared.clone(),
    });
    let hooks = Router::new()
        .route("/convert", post(convert))
        .route("/admit/instance/mutate", post(mutate))
        .route("/admit/instance/validate", post(validate))
        .route("/admit/instance/v1beta1", post(v1beta1))
        .route_layer(middleware::from_fn_with_state(gate, fair));
    Router::new()
        .merge(hooks)
        .route("/healthz", get(|| async { "ok\n" }))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics))
        .layer(DefaultBodyLimit::disable())
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
    ticket: Option<Extension<TicketCell>>,
    body: Bytes,
) -> Response {
    let started = Instant::now();
    let s = shared.clone();
    let (ticket, cancel) = take_ticket(ticket);
    let done = tokio::task::spawn_blocking(move || {
        let (reply, counts) = conversion::convert_review_until(&body, s.types.as_ref(), &cancel);
        if cancel.load(Ordering::Acquire) {
            s.metrics.cancelled.inc();
        } else {
            capture(&s, "convert", &uri, &body, reply.http_status, &reply.body);
        }
        // The review's share of the budget and its slot, given back now that the work stopped.
        drop(ticket);
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
    ticket: Option<Extension<TicketCell>>,
    body: Bytes,
    mode: Mode,
    endpoint: &'static str,
) -> Response {
    let started = Instant::now();
    let s = shared.clone();
    let (ticket, cancel) = take_ticket(ticket);
    let done = tokio::task::spawn_blocking(move || {
        let (status, review) =
            admission::admit_review_until(&body, mode, s.store.as_ref(), &cancel);
        if cancel.load(Ordering::Acquire) {
            s.metrics.cancelled.inc();
            drop(ticket);
            return (status, Vec::new());
        }
        let reply = serde_json::to_vec(&review).unwrap_or_default();
        capture(&s, endpoint, &uri, &body, status, &reply);
        drop(ticket);
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
    ticket: Option<Extension<TicketCell>>,
    body: Bytes,
) -> Response {
    admit(shared, uri, ticket, body, Mode::Mutate, "mutate").await
}

async fn validate(
    State(shared): State<Arc<Shared>>,
    OriginalUri(uri): OriginalUri,
    ticket: Option<Extension<TicketCell>>,
    body: Bytes,
) -> Response {
    admit(shared, uri, ticket, body, Mode::Validate, "validate").await
}

async fn v1beta1(
    State(shared): State<Arc<Shared>>,
    OriginalUri(uri): OriginalUri,
    ticket: Option<Extension<TicketCell>>,
    body: Bytes,
) -> Response {
    admit(shared, uri, ticket, body, Mode::V1beta1, "v1beta1").await
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

/// The store of a webhook started without a cluster connection (`--no-cluster`): conversion
/// works (values it cannot type stay as they are), admission is refused with this reason.
pub struct NoCluster;

impl TypeSource for NoCluster {
    fn schema(&self, _: &str, _: &str) -> Option<kudo_policy::ParamSchema> {
        None
    }
}

impl OperatorVersions for NoCluster {
    fn ready(&self) -> Result<(), StoreError> {
        Err(StoreError::NoCluster)
    }
    fn get(
        &self,
        _: &str,
        _: &str,
    ) -> Result<Option<Arc<kudo_policy::change::Version>>, StoreError> {
        Err(StoreError::NoCluster)
    }
}

/// Like [`NoCluster`], with the reason the cluster cannot be reached.
pub struct Offline(pub String);

impl TypeSource for Offline {
    fn schema(&self, _: &str, _: &str) -> Option<kudo_policy::ParamSchema> {
        None
    }
}

impl OperatorVersions for Offline {
    fn ready(&self) -> Result<(), StoreError> {
        Err(StoreError::Offline(self.0.clone()))
    }
    fn get(
        &self,
        _: &str,
        _: &str,
    ) -> Result<Option<Arc<kudo_policy::change::Version>>, StoreError> {
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
        assert_eq!(first.bytes(), 600 * KIB);
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
        assert!(second.is_ok_and(|p| p.bytes() == 600 * KIB));
        drop(small);
    }

    #[tokio::test]
    async fn a_body_larger_than_the_budget_takes_all_of_it_and_an_unknown_size_counts_as_the_limit()
    {
        let budget = MemoryBudget::new(1024 * KIB, 4 * 1024 * KIB);
        let big = budget.reserve(Some(10 * 1024 * KIB)).await;
        assert_eq!(big.bytes(), 1024 * KIB);
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

    // Issue 38, item 3: a client that declares 8 MiB and trickles held the whole budget.
    #[tokio::test]
    async fn a_trickling_body_holds_what_it_sent_not_what_it_declared() {
        let budget = MemoryBudget::new(8 * 1024 * KIB, 32 * 1024 * KIB);
        let declared = Some(8 * 1024 * KIB);
        let mut held = budget.nothing();
        for sent in 1..=3000 {
            assert!(!budget.grow(&mut held, sent, declared).await, "never waits");
        }
        assert_eq!(held.bytes(), 3 * KIB);
        assert_eq!(budget.available(), (8 * 1024 - 3) * KIB);
        // What it sent is all it gives back.
        drop(held);
        assert_eq!(budget.available(), 8 * 1024 * KIB);
    }

    #[tokio::test]
    async fn a_body_that_finds_the_budget_short_gives_back_its_share_and_waits_for_all_of_it() {
        let budget = MemoryBudget::new(1000 * KIB, 32 * 1024 * KIB);
        let declared = Some(600 * KIB);
        let (mut a, mut b) = (budget.nothing(), budget.nothing());
        assert!(!budget.grow(&mut a, 500 * KIB, declared).await);
        assert!(!budget.grow(&mut b, 400 * KIB, declared).await);
        assert_eq!(budget.available(), 100 * KIB);
        // a needs 100 KiB more and gets it; b then finds nothing left: instead of waiting with
        // 400 KiB (both would wait for ever), it gives them back and waits in line for 600.
        assert!(!budget.grow(&mut a, 600 * KIB, declared).await);
        let budget2 = budget.clone();
        let waiter = tokio::spawn(async move {
            let waited = budget2.grow(&mut b, 500 * KIB, declared).await;
            (waited, b.bytes())
        });
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert_eq!(
            budget.available(),
            0,
            "b gave back its 400 KiB and waits for 600"
        );
        assert!(!waiter.is_finished());
        drop(a);
        let (waited, held) = tokio::time::timeout(Duration::from_secs(5), waiter)
            .await
            .unwrap()
            .unwrap();
        assert!(waited);
        assert_eq!(held, 600 * KIB);
        assert_eq!(
            budget.available(),
            1000 * KIB,
            "b dropped its share when done"
        );
    }

    #[tokio::test]
    async fn a_share_is_trimmed_to_the_body_that_came() {
        let metrics = Metrics::default();
        let budget = MemoryBudget::new(1000 * KIB, 32 * 1024 * KIB).with_metrics(&metrics, "large");
        let mut held = budget.reserve(Some(600 * KIB)).await;
        budget.trim(&mut held, 10 * KIB);
        assert_eq!(held.bytes(), 10 * KIB);
        assert_eq!(budget.available(), 990 * KIB);
        assert!(
            metrics
                .encode()
                .contains(r#"kudo_webhook_memory_budget_in_use_bytes{lane="large"} 10240"#),
            "{}",
            metrics.encode()
        );
        drop(held);
        assert!(
            metrics
                .encode()
                .contains(r#"kudo_webhook_memory_budget_in_use_bytes{lane="large"} 0"#)
        );
    }
}
