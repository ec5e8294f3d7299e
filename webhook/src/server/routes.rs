//! The routes and their handlers: the reviews (run on tokio's blocking pool, behind
//! [`fair`]), health, readiness and metrics.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, Extension, OriginalUri, State};
use axum::http::{StatusCode, header};
use axum::middleware;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use tokio::sync::Semaphore;

use super::budget::MemoryBudget;
use super::fairness::{Gate, TicketCell, fair, take_ticket};
use super::{Config, Shared};
use crate::admission::{self, Mode};
use crate::conversion;

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
        .route("/admit/rollout", post(rollout))
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

/// `/admit/rollout`: async, as it asks the cluster (`crate::rollout`).
async fn rollout(
    State(shared): State<Arc<Shared>>,
    OriginalUri(uri): OriginalUri,
    body: Bytes,
) -> Response {
    let started = Instant::now();
    let (status, review) = crate::rollout::review(&body, shared.cluster.as_ref()).await;
    let reply = serde_json::to_vec(&review).unwrap_or_default();
    capture(&shared, "admit-rollout", &uri, &body, status, &reply);
    shared.metrics.observe("admit-rollout", status, started);
    json(status, reply)
}
