//! Where kudo's packages come from, for the CLI: everything that fetches, publishes, signs or
//! checks a package before `kudo-pkg` reads it. No argument parsing and no printing: the CLI
//! (`kudo-cli`) calls it and says what happened.
//!
//! | module | what it holds |
//! |---|---|
//! | [`repo`] | repositories: their configuration (`repositories.yaml`), the cached index, downloads with digests checked, the policy of a repository |
//! | [`oci`] | OCI registries: push and pull of a package as an artifact, tags, references, docker-config credentials, cosign signatures on a registry: Sigstore bundles as referrers ([`oci::bundle`]), the `.sig` tag ([`oci::signature`]); air-gapped bundles and their relocation to a mirror ([`oci::airgap`], [`oci::layout`], [`oci::relocation`]) |
//! | [`trust`] | cosign keys (generate, read, the password), the simple-signing payload, index entries' signatures, the verification policy |
//! | [`keyfile`] | cosign's encrypted private key envelope: new keys with scrypt N=65536, a KDF kudo cannot read named |
//! | [`image_trust`] | the signatures of the container images a package runs: digests resolved, the `images:` policy, verifications cached by digest |
//! | [`atomic`] | a file written whole or not at all (keys, configuration, downloads) |

pub mod atomic;
pub mod image_trust;
pub mod keyfile;
pub mod oci;
pub mod repo;
pub mod trust;
