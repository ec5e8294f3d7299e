//! `kudo-webhook`: the conversion webhook (`/convert`: kudo.dev v1beta1 ⇄ v1beta2) and, later,
//! the admission webhook, for kube-apiserver.
//!
//! Handlers are transport: [`conversion::handle`] reads a ConversionReview body and answers
//! with the review kube-apiserver expects; each object's conversion is
//! `kudo_operator::convert`, a pure function. Not built yet: the admission handler and the
//! HTTPS server (axum + rustls, health, metrics, certificates).
//!
//! ```
//! use kudo_operator::convert::NoTypes;
//! let body = br#"{"kind":"ConversionReview","apiVersion":"apiextensions.k8s.io/v1",
//!   "request":{"uid":"u1","desiredAPIVersion":"kudo.dev/v1beta2","objects":[
//!     {"apiVersion":"kudo.dev/v1beta1","kind":"Operator","metadata":{"name":"a"}}]},
//!   "response":{"uid":"","convertedObjects":null,"result":{"metadata":{}}}}"#;
//! let (reply, counts) = kudo_webhook::conversion::handle(body, &NoTypes);
//! assert_eq!(reply.http_status, 200);
//! let response = reply.review.response.unwrap();
//! assert_eq!(response.uid, "u1");
//! assert_eq!(response.converted_objects[0]["apiVersion"], "kudo.dev/v1beta2");
//! assert_eq!(counts.objects, 1);
//! ```
#![deny(missing_docs)]

pub mod conversion;
