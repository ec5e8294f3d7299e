//! Fair admission (issue 38): the review routes' limits, applied before the handler runs.
//!
//! The steps (connection, body, memory budget, work) are described in the [server's module
//! docs](super); this module holds the body read with its deadline and its share of the budget
//! taken as bytes arrive ([`receive`]), the slot, the request timeout and the cancel flag
//! ([`fair`], [`Ticket`]), and the answer of a refused review ([`Refusal`]).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::extract::{Extension, Request, State};
use axum::http::{HeaderValue, StatusCode, Version, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

#[cfg(doc)]
use super::Config;
use super::Shared;
use super::budget::{Held, MemoryBudget};
use super::metrics::ReasonLabels;

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
pub(super) struct Gate {
    pub(super) shared: Arc<Shared>,
    pub(super) large: MemoryBudget,
    pub(super) small: MemoryBudget,
    pub(super) slots: Arc<Semaphore>,
    pub(super) body_limit: usize,
    pub(super) small_body: usize,
    pub(super) read_timeout: Duration,
    pub(super) request_timeout: Duration,
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
pub(super) struct Ticket {
    _held: Held,
    _slot: OwnedSemaphorePermit,
    cancel: Arc<AtomicBool>,
}

/// The request extension carrying the [`Ticket`] from [`fair`] to the handler.
#[derive(Clone)]
pub(super) struct TicketCell(Arc<Mutex<Option<Ticket>>>);

/// The ticket of a request, and its cancel flag (a flag never set when the route runs without
/// [`fair`]).
pub(super) fn take_ticket(
    cell: Option<Extension<TicketCell>>,
) -> (Option<Ticket>, Arc<AtomicBool>) {
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
pub(super) async fn fair(State(gate): State<Arc<Gate>>, request: Request, next: Next) -> Response {
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
