//! `kudo-webhook`: the conversion webhook (`/convert`: kudo.dev v1beta1 ⇄ v1beta2) and the
//! admission webhook (`/admit/instance/mutate`, `/admit/instance/validate`, and
//! `/admit/instance/v1beta1` for writes through v1beta1 as sent: [`v1beta1_values`]; and
//! `/admit/rollout` for Rollouts) for kube-apiserver.
//!
//! | | |
//! |---|---|
//! | [`convert_review`] | a ConversionReview body in, the review kube-apiserver expects out; each object converted by `kudo_crd::convert` |
//! | [`admit_review`], [`decide`] | an AdmissionReview in, the answer out; `decide` is the pure rule over `kudo-policy`'s validation, defaults, `immutable`, `trigger` and `oldName` (the CLI's code) |
//! | [`rollout_review`] (`/admit/rollout`) | Rollouts: the spec's rules (`kudo_crd::rollout::RolloutSpec::check`), one rollout per Instance, approvals only from users who may `approve` `rollouts` (a SubjectAccessReview) |
//! | [`OperatorVersions`], [`version_from_object`] | where admission finds the installed OperatorVersion's rules |
//! | [`serve`], [`Config`], [`Shared`] ([`serve_with`]: another [`Admit`], for the no-op floor) | the HTTPS server (axum + rustls): health, readiness, metrics, certificate reload, and fair admission: body read deadline, memory budget taken as bytes arrive, a lane for small reviews, cancellation past the deadline ([`convert_review_until`], [`admit_review_until`]) |
//! | [`Cache`] | the watch-fed OperatorVersion cache behind [`OperatorVersions`] and `kudo_crd::TypeSource` |
//! | [`certs`] | a self-managed CA and serving certificate in a Secret, the CA bundle injected into the CRDs and webhook configurations, renewal before expiry |
//!
//! `--capture-dir` writes the reviews received to files (the source of the tests' wire
//! fixtures).
//!
//! ```
//! use kudo_crd::convert::NoTypes;
//! let body = br#"{"kind":"ConversionReview","apiVersion":"apiextensions.k8s.io/v1",
//!   "request":{"uid":"u1","desiredAPIVersion":"kudo.dev/v1beta2","objects":[
//!     {"apiVersion":"kudo.dev/v1beta1","kind":"Operator","metadata":{"name":"a"}}]},
//!   "response":{"uid":"","convertedObjects":null,"result":{"metadata":{}}}}"#;
//! let (reply, counts) = kudo_webhook::convert_review(body, &NoTypes);
//! assert_eq!(reply.http_status, 200);
//! let review: serde_json::Value = serde_json::from_slice(&reply.body).unwrap();
//! assert_eq!(review["response"]["uid"], "u1");
//! assert_eq!(review["response"]["convertedObjects"][0]["apiVersion"], "kudo.dev/v1beta2");
//! assert_eq!(counts.objects, 1);
//! ```

mod admission;
mod cache;
mod capture;
pub mod certs;
mod conversion;
mod rollout;
mod server;

pub use admission::{
    Mode, OperatorVersions, StoreError, UnusableVersion, Verdict, admit_review, admit_review_until,
    decide, v1beta1_values, version_from_object,
};
pub use cache::Cache;
pub use conversion::{convert_review, convert_review_until};
pub use rollout::review as rollout_review;
pub use server::{Admit, Config, NoCluster, Offline, Shared, serve, serve_with};
