//! `/convert`: the ConversionReview handler. Transport only: the rules of conversion are
//! `kudo_crd::convert::rewrite`, the same code `kudo migrate` and the tests run through
//! `kudo_crd::convert::convert`.
//!
//! The reply repeats the request's `uid` and returns exactly the objects sent, in order, each
//! converted to `desiredAPIVersion` (kube-apiserver checks count, order, uid, kind, name and
//! namespace). A review that cannot be read gets a well-formed `Failure` and HTTP 400; an object
//! that is not ours fails the review with a message naming it (kudo's own objects never fail).
//!
//! A LIST of 1000 objects is one review, and most of each object is `managedFields`, kubectl's
//! last-applied annotation, templates and `status`, none of which conversion touches. So the
//! body is read once as raw JSON ([`raw`]): only what the rules look at is parsed, and the
//! reply copies the rest byte for byte. BENCHMARKS.md has the numbers against parsing the whole
//! body into a `Value` and back.

mod raw;

use std::sync::atomic::{AtomicBool, Ordering};

use kube::core::Status;
use kube::core::conversion::ConversionResponse;
use kudo_crd::convert::TypeSource;

/// The review's `apiVersion` (the only one the CRDs ask for).
const REVIEW_API_VERSION: &str = "apiextensions.k8s.io/v1";

/// The answer: an HTTP status and the ConversionReview to send back, as JSON.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    /// 200 for every review that could be read (success or `Failure` inside), 400 otherwise.
    pub http_status: u16,
    /// The ConversionReview, serialized.
    pub body: Vec<u8>,
}

/// Counts of one review, for metrics.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Objects received.
    pub objects: usize,
    /// Objects that could not be converted.
    pub failed: usize,
}

/// Handles one request body.
pub fn convert_review(body: &[u8], types: &dyn TypeSource) -> (Reply, Counts) {
    convert_review_until(body, types, &AtomicBool::new(false))
}

/// [`convert_review`] that stops at the next object once `cancelled` is set (the request's
/// deadline passed, or its client went away: the server's fair admission). A review stopped
/// so is answered with a `Failure` and HTTP 503 that nobody reads; `Counts` has the objects
/// converted until then.
pub fn convert_review_until(
    body: &[u8],
    types: &dyn TypeSource,
    cancelled: &AtomicBool,
) -> (Reply, Counts) {
    let review: raw::Review = match serde_json::from_slice(body) {
        Ok(r) => r,
        Err(e) => return bad_request(format!("not a ConversionReview: {e}")),
    };
    let (api_version, kind) = (
        review.api_version.as_deref().unwrap_or_default(),
        review.kind.as_deref().unwrap_or_default(),
    );
    if (api_version, kind) != (REVIEW_API_VERSION, "ConversionReview") {
        return bad_request(format!(
            "expected a ConversionReview of {REVIEW_API_VERSION}, got kind {kind:?} of \
             apiVersion {api_version:?}"
        ));
    }
    let Some(request) = review.request else {
        return bad_request("the ConversionReview has no request".into());
    };
    if request.uid.is_empty() {
        return bad_request("the ConversionReview request has no uid".into());
    }
    let desired = request.desired_api_version.as_str();
    let count = request.objects.len();
    if tracing::enabled!(tracing::Level::DEBUG) {
        let first = request.objects.first().map(|o| o.describe());
        tracing::debug!(
            desired,
            count,
            first = first.as_deref().unwrap_or(""),
            "conversion review"
        );
    }
    let mut out = Vec::with_capacity(body.len() + body.len() / 4 + 256);
    out.extend_from_slice(br#"{"apiVersion":"#);
    let _ = serde_json::to_writer(&mut out, REVIEW_API_VERSION);
    out.extend_from_slice(br#","kind":"ConversionReview","response":{"uid":"#);
    let _ = serde_json::to_writer(&mut out, &request.uid);
    out.extend_from_slice(br#","result":{"status":"Success"},"convertedObjects":["#);
    let mut errors = Vec::new();
    for (i, object) in request.objects.iter().enumerate() {
        if cancelled.load(Ordering::Acquire) {
            let counts = Counts {
                objects: i,
                failed: errors.len(),
            };
            let message = format!("cancelled after {i} of {count} objects: the deadline passed");
            let (mut reply, _) = bad_request(message);
            reply.http_status = 503;
            return (reply, counts);
        }
        if i > 0 {
            out.push(b',');
        }
        if let Err(e) = object.convert(desired, types, &mut out) {
            errors.push(format!("object {i} ({}): {e}", object.describe()));
        }
    }
    out.extend_from_slice(b"]}}");
    let counts = Counts {
        objects: count,
        failed: errors.len(),
    };
    if !errors.is_empty() {
        let mut response =
            ConversionResponse::invalid(Status::failure(&errors.join("; "), "Invalid"));
        response.uid = request.uid.clone();
        out = serde_json::to_vec(&response.into_review()).unwrap_or_default();
    }
    (
        Reply {
            http_status: 200,
            body: out,
        },
        counts,
    )
}

fn bad_request(message: String) -> (Reply, Counts) {
    let review =
        ConversionResponse::invalid(Status::failure(&message, "BadRequest").with_code(400))
            .into_review();
    (
        Reply {
            http_status: 400,
            body: serde_json::to_vec(&review).unwrap_or_default(),
        },
        Counts::default(),
    )
}
