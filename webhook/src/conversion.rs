//! `/convert`: the ConversionReview handler. Transport only: the conversion of each object is
//! `kudo_operator::convert`.
//!
//! The reply repeats the request's `uid` and returns exactly the objects sent, in order, each
//! converted to `desiredAPIVersion` (kube-apiserver checks count, order, uid, kind, name and
//! namespace). A review that cannot be read gets a well-formed `Failure` and HTTP 400; an object
//! that is not ours fails the review with a message naming it (kudo's own objects never fail).

use kube::core::Status;
use kube::core::conversion::{ConversionRequest, ConversionResponse, ConversionReview};
use kudo_operator::convert::{self, TypeSource};
use serde_json::Value;

/// The answer: an HTTP status and the review to send back.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    /// 200 for every review that could be read (success or `Failure` inside), 400 otherwise.
    pub http_status: u16,
    /// The ConversionReview.
    pub review: ConversionReview,
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
pub fn handle(body: &[u8], types: &dyn TypeSource) -> (Reply, Counts) {
    let review: ConversionReview = match serde_json::from_slice(body) {
        Ok(r) => r,
        Err(e) => return bad_request(format!("not a ConversionReview: {e}")),
    };
    let mut request = match ConversionRequest::from_review(review) {
        Ok(r) => r,
        Err(e) => return bad_request(e.to_string()),
    };
    if request.uid.is_empty() {
        return bad_request("the ConversionReview request has no uid".into());
    }
    let desired = request.desired_api_version.clone();
    let objects = std::mem::take(&mut request.objects);
    let count = objects.len();
    let response = ConversionResponse::for_request(request);
    let mut converted = Vec::with_capacity(count);
    let mut errors = Vec::new();
    for (i, obj) in objects.into_iter().enumerate() {
        let name = describe(&obj);
        match convert::convert_owned(obj, &desired, types) {
            Ok(v) => converted.push(v),
            Err(e) => errors.push(format!("object {i} ({name}): {e}")),
        }
    }
    let counts = Counts {
        objects: count,
        failed: errors.len(),
    };
    let response = if errors.is_empty() {
        response.success(converted)
    } else {
        response.failure(Status::failure(&errors.join("; "), "Invalid"))
    };
    (
        Reply {
            http_status: 200,
            review: response.into_review(),
        },
        counts,
    )
}

fn describe(obj: &Value) -> String {
    let s = |p: &str| obj.pointer(p).and_then(Value::as_str).unwrap_or("?");
    format!(
        "{} {} {}/{}",
        s("/apiVersion"),
        s("/kind"),
        s("/metadata/namespace"),
        s("/metadata/name")
    )
}

fn bad_request(message: String) -> (Reply, Counts) {
    let review =
        ConversionResponse::invalid(Status::failure(&message, "BadRequest").with_code(400))
            .into_review();
    (
        Reply {
            http_status: 400,
            review,
        },
        Counts::default(),
    )
}
