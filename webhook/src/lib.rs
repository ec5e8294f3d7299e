//! `kudo-webhook`: the conversion webhook (`/convert`: kudo.dev v1beta1 ⇄ v1beta2) and the
//! admission webhook (`/admit/instance/mutate`, `/admit/instance/validate`) for kube-apiserver.
//!
//! Handlers are transport: [`conversion::convert_review`] reads a ConversionReview body and answers
//! with the review kube-apiserver expects, each object converted by `kudo_crd::convert`;
//! [`admission::admit_review`] reads an AdmissionReview and answers with [`admission::decide`], a pure
//! function over `kudo-pkg`'s validation, defaults, `immutable`, `trigger` and `oldName` rules
//! (the same code as the CLI). [`server`] serves them over HTTPS (axum + rustls) with health,
//! readiness, metrics, limits and certificate reload; [`cache`] is the watch-fed OperatorVersion
//! cache behind [`admission::OperatorVersions`] and `kudo_crd::convert::TypeSource`;
//! [`certs`] keeps a self-managed CA and serving certificate in a Secret, injects the CA bundle
//! into the CRDs and webhook configurations, and renews before expiry; [`capture`] writes the
//! reviews received to files (`--capture-dir`), the source of the tests' wire fixtures.
//!
//! ```
//! use kudo_crd::convert::NoTypes;
//! let body = br#"{"kind":"ConversionReview","apiVersion":"apiextensions.k8s.io/v1",
//!   "request":{"uid":"u1","desiredAPIVersion":"kudo.dev/v1beta2","objects":[
//!     {"apiVersion":"kudo.dev/v1beta1","kind":"Operator","metadata":{"name":"a"}}]},
//!   "response":{"uid":"","convertedObjects":null,"result":{"metadata":{}}}}"#;
//! let (reply, counts) = kudo_webhook::conversion::convert_review(body, &NoTypes);
//! assert_eq!(reply.http_status, 200);
//! let review: serde_json::Value = serde_json::from_slice(&reply.body).unwrap();
//! assert_eq!(review["response"]["uid"], "u1");
//! assert_eq!(review["response"]["convertedObjects"][0]["apiVersion"], "kudo.dev/v1beta2");
//! assert_eq!(counts.objects, 1);
//! ```
#![deny(missing_docs)]

pub mod admission;
pub mod cache;
pub mod capture;
pub mod certs;
pub mod conversion;
pub mod server;
