//! `kudo-k8s`: Kubernetes' own rules, as kudo applies them without a cluster.
//!
//! | module | what it knows | entry points |
//! |---|---|---|
//! | [`crd_safety`] | OLM v1's CRD upgrade safety preflight (crdify's rules): may a package's CRD replace the one in the cluster (scope, stored and served versions, required, removed fields, type, enum, bounds, defaults, anything else) | [`crd_safety::check`], [`crd_safety::is_unsafe`], [`crd_safety::Finding`] |
//! | [`structural`] | the structural-schema rules kube-apiserver applies to a CRD's `openAPIV3Schema` (and to a v1beta2 parameter schema, which becomes one) | [`structural::violations`] |
//! | [`successor`] | an object in an API version Kubernetes no longer serves, as its successor (what kudo-manager applies instead, what `package verify` warns about) | [`successor::convert`], [`successor::REMOVED`] |
//!
//! Pure: plain JSON values in, findings out. Depends on `kudo-diag` for JSON pointers.

pub mod crd_safety;
pub mod structural;
pub mod successor;
