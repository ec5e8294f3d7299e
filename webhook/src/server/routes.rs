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
use super::{Admit, Config, Shared};
use crate::admission::Mode;
use crate::conversion;

/// The routes, with the limits of `config`; Instance admission answered by `answer`.
pub fn router(shared: Arc<Shared>, config: &Config, answer: Admit) -> Router {
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
        .route(
            "/admit/instance/mutate",
            post(move |s, u, t, b| admit(s, u, t, b, answer, Mode::Mutate, "mutate")),
        )
        .route(
            "/admit/instance/validate",
            post(move |s, u, t, b| admit(s, u, t, b, answer, Mode::Validate, "validate")),
        )
        .route(
            "/admit/instance/v1beta1",
            post(move |s, u, t, b| admit(s, u, t, b, answer, Mode::V1beta1, "v1beta1")),
        )
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
    let body = hydrated(&shared, body).await;
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
    State(shared): State<Arc<Shared>>,
    OriginalUri(uri): OriginalUri,
    ticket: Option<Extension<TicketCell>>,
    body: Bytes,
    answer: Admit,
    mode: Mode,
    endpoint: &'static str,
) -> Response {
    let started = Instant::now();
    let body = hydrated(&shared, body).await;
    let s = shared.clone();
    let (ticket, cancel) = take_ticket(ticket);
    let done = tokio::task::spawn_blocking(move || {
        let (status, review) = answer(&body, mode, s.store.as_ref(), &cancel);
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

/// How long a review waits for the revision [`hydrated`] reads.
const REVISION_READ: std::time::Duration = std::time::Duration::from_secs(2);

/// `body` with the values the last plan ran with in the old Instance's
/// `status.applied.parameters`, when the policy needs them and the status refers to a revision
/// instead of copying them (issue 49; [`kudo_crd::baseline::pending_revision`]): a change the
/// manager has not acted on yet, whose plan a second write may conflict with. Read from the
/// revision (a ControllerRevision of the Instance's namespace), within [`REVISION_READ`].
/// Anything else, and a revision that cannot be read (logged), leaves `body` as it is: the
/// pending change's plan then counts as unknown, as with no status.
async fn hydrated(shared: &Shared, body: Bytes) -> Bytes {
    #[derive(serde::Deserialize)]
    struct Review {
        request: Option<Request>,
    }
    #[derive(serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Request {
        old_object: Option<kudo_crd::v1beta2::Instance>,
    }
    let Some(client) = shared.cluster.clone() else {
        return body;
    };
    // Cheap first: a status that refers to a revision has a digest.
    const DIGEST: &[u8] = b"\"digest\"";
    if !body.windows(DIGEST.len()).any(|w| w == DIGEST) {
        return body;
    }
    let Ok(Review {
        request: Some(Request {
            old_object: Some(old),
        }),
    }) = serde_json::from_slice::<Review>(&body)
    else {
        return body;
    };
    let Some(number) = kudo_crd::baseline::pending_revision(&old) else {
        return body;
    };
    let (ns, name) = (
        old.metadata.namespace.clone().unwrap_or_default(),
        kudo_crd::revision::name(old.metadata.name.as_deref().unwrap_or_default(), number),
    );
    let api: kube::Api<k8s_openapi::api::apps::v1::ControllerRevision> =
        kube::Api::namespaced(client, &ns);
    let read = tokio::time::timeout(REVISION_READ, api.get(&name)).await;
    let applied = match read {
        Ok(Ok(cr)) => kudo_crd::revision::applied_values(&cr),
        Ok(Err(e)) => {
            tracing::warn!(revision = %name, namespace = %ns, error = %e, "cannot read the revision of the values the last plan ran with; a pending change's plan counts as unknown");
            None
        }
        Err(_) => {
            tracing::warn!(revision = %name, namespace = %ns, "reading the revision of the values the last plan ran with timed out; a pending change's plan counts as unknown");
            None
        }
    };
    let Some(applied) = applied else {
        return body;
    };
    let Ok(mut review) = serde_json::from_slice::<serde_json::Value>(&body) else {
        return body;
    };
    match review.pointer_mut("/request/oldObject/status/applied") {
        Some(serde_json::Value::Object(a)) => {
            a.insert("parameters".into(), applied);
        }
        _ => return body,
    }
    serde_json::to_vec(&review).map(Bytes::from).unwrap_or(body)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::{Metrics, NoCluster};
    use serde_json::{Value, json};

    /// An update review whose old Instance's status refers to revision 3 (issue 49), with a
    /// spec (generation 5) the manager has not acted on (observed 4) when `pending`.
    fn review(pending: bool) -> Bytes {
        let observed = if pending { 4 } else { 5 };
        let body = json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "request": {"uid": "u", "operation": "UPDATE",
                "oldObject": {"apiVersion": "kudo.dev/v1beta2", "kind": "Instance",
                    "metadata": {"name": "zk", "namespace": "ns", "generation": 5},
                    "spec": {"operatorVersion": {"name": "zk-1"}, "parameters": {"nodes": 5}},
                    "status": {"observedGeneration": observed,
                        "applied": {"operatorVersion": "zk-1", "revision": 3, "digest": "sha256:00"}}}}});
        Bytes::from(serde_json::to_vec(&body).unwrap())
    }

    fn shared(cluster: kube::Client) -> Shared {
        Shared {
            types: Arc::new(NoCluster),
            store: Arc::new(NoCluster),
            metrics: Metrics::default(),
            capture: None,
            cluster: Some(cluster),
        }
    }

    #[tokio::test]
    async fn a_pending_change_gets_the_values_its_revision_recorded() {
        let record = kudo_crd::revision::Record {
            parameters: json!({"nodes": 3}),
            applied: Some(kudo_crd::revision::applied_patch(
                &json!({"nodes": 3}),
                &json!({"nodes": 3, "port": 2181}),
            )),
            ..Default::default()
        };
        let inst: kudo_crd::v1beta2::Instance = serde_json::from_value(json!({
            "metadata": {"name": "zk", "namespace": "ns"}, "spec": {}}))
        .unwrap();
        let cr = serde_json::to_value(kudo_crd::revision::object(&inst, 3, &record)).unwrap();
        let (client, log) = kudo_testkit::mock_api::client("ns", move |seen| {
            if seen.path == "/apis/apps/v1/namespaces/ns/controllerrevisions/zk.r3" {
                (200, cr.clone())
            } else {
                (
                    404,
                    kudo_testkit::mock_api::status(404, "NotFound", "not found"),
                )
            }
        });
        let s = shared(client);
        let body = hydrated(&s, review(true)).await;
        let v: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(
            v["request"]["oldObject"]["status"]["applied"]["parameters"],
            json!({"nodes": 3, "port": 2181})
        );
        assert_eq!(log.lock().unwrap().len(), 1);
        // Acted on already: nothing read, the body as it was.
        let body = hydrated(&s, review(false)).await;
        assert_eq!(body, review(false));
        assert_eq!(log.lock().unwrap().len(), 1);
    }

    #[tokio::test]
    async fn a_revision_that_cannot_be_read_leaves_the_review_as_it_is() {
        let (client, _) = kudo_testkit::mock_api::client("ns", |_| {
            (403, kudo_testkit::mock_api::status(403, "Forbidden", "no"))
        });
        let body = hydrated(&shared(client), review(true)).await;
        assert_eq!(body, review(true));
    }
}
