//! The signatures of the container images a package runs, checked before anything runs them.
//!
//! Each image is resolved to its manifest digest (a reference pinned `@sha256:...` keeps its
//! digest; a tag is asked of its registry), then checked by the policy that applies to its
//! `REGISTRY/PATH/NAME`: the `images:` entries of `repositories.yaml` (longest prefix, as
//! `registries:`), or the keys given for one command. Signatures are read in both of cosign's
//! formats ([`crate::oci::Registry::verify`]). A verification is cached by digest and keys
//! (`$XDG_CACHE_HOME/kudo/verified/`): a digest names content, so what a key verified once
//! stays verified; a failure is never cached. Each image's check is bounded
//! ([`IMAGE_TIMEOUT`]); at most [`PARALLEL`] images are checked at once.
//!
//! What is checked is returned per image; what to do with it (warn, refuse) is the
//! caller's, by [`Mode`].

use std::path::{Path, PathBuf};
use std::time::Duration;

use futures::StreamExt;
use serde::{Deserialize, Serialize};

use crate::oci::signature::Format;
use crate::oci::{Reference, Registry};
use crate::repo::{Home, Repositories};
use crate::trust::{Mode, Policy, PublicKey};

/// How long one image's check may take, its digest's lookup and its signatures' reading
/// together.
pub const IMAGE_TIMEOUT: Duration = Duration::from_secs(30);
/// How many images are checked at once.
pub const PARALLEL: usize = 8;

/// An image to check: as written, and its parts.
#[derive(Debug, Clone)]
pub struct Wanted {
    /// As the templates write it.
    pub image: String,
    /// Its registry (`docker.io`, `127.0.0.1:5000`).
    pub registry: String,
    /// Its repository (`library/zookeeper`).
    pub repository: String,
    /// Its tag, if it has one.
    pub tag: Option<String>,
    /// Its digest, when the reference pins one.
    pub digest: Option<String>,
}

/// What was found of one image.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// As the templates write it.
    pub image: String,
    /// Its manifest digest, when it was resolved.
    pub digest: Option<String>,
    /// The policy that applied, with where it was given.
    pub policy: Policy,
    /// What its signatures said.
    pub status: Status,
}

impl Found {
    /// `REGISTRY/REPOSITORY@DIGEST`: the reference that names exactly what was checked.
    pub fn pinned(&self, wanted: &Wanted) -> Option<String> {
        self.digest
            .as_ref()
            .map(|d| format!("{}/{}@{d}", wanted.registry, wanted.repository))
    }
}

/// What an image's signatures said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    /// Its policy is `none`.
    NotChecked,
    /// Signed by `key` (a fingerprint; its file `path`), in `format`; `cached` when the
    /// cache said so.
    Verified {
        /// The key's fingerprint.
        key: String,
        /// The key's file.
        path: PathBuf,
        /// Which of cosign's formats.
        format: String,
        /// Read from the cache.
        cached: bool,
    },
    /// Not verified, and why (no signature, none by these keys, the registry did not answer
    /// in time, ...); `keys` the keys tried.
    Unverified {
        /// Why.
        why: String,
        /// The keys tried, `PATH (FINGERPRINT)`.
        keys: Vec<String>,
    },
}

/// A cached verification.
#[derive(Debug, Serialize, Deserialize)]
struct Cached {
    digest: String,
    key: String,
    path: PathBuf,
    format: String,
}

/// Checks images by the configured `images:` policies, or by `keys` for every image when
/// given (then `required`).
pub struct Checker {
    home: Home,
    config: Repositories,
    keys: Vec<PathBuf>,
    plain_http: bool,
}

impl Checker {
    /// A checker reading kudo's configuration; `keys` (public key files), when not empty,
    /// require every image to be signed by one of them.
    pub fn new(keys: Vec<PathBuf>, plain_http: bool) -> Result<Checker, crate::repo::RepoError> {
        let home = Home::from_env()?;
        let config = Repositories::load(&home)?;
        Ok(Checker {
            home,
            config,
            keys,
            plain_http,
        })
    }

    /// Whether any image can be checked: keys given, or an `images:` policy configured.
    /// Without either nothing is resolved or read.
    pub fn is_active(&self) -> bool {
        !self.keys.is_empty() || !self.config.images.is_empty()
    }

    /// The policy of `wanted`.
    pub fn policy(&self, wanted: &Wanted) -> Policy {
        if !self.keys.is_empty() {
            return Policy {
                verify: Mode::Required,
                keys: self.keys.clone(),
                from: "--image-key".into(),
            };
        }
        let name = format!("{}/{}", wanted.registry, wanted.repository);
        self.config.image_policy(&self.home, &name)
    }

    /// Checks every image of `wanted`, at most [`PARALLEL`] at once; in the same order.
    pub fn check_all(&self, wanted: &[Wanted]) -> Result<Vec<Found>, crate::oci::OciError> {
        let registry = Registry::new(self.plain_http)?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .map_err(|e| crate::oci::OciError::Internal(format!("a runtime: {e}")))?;
        let registry = &registry;
        Ok(runtime.block_on(
            futures::stream::iter(wanted.iter().map(|w| self.check(registry, w)))
                .buffered(PARALLEL)
                .collect(),
        ))
    }

    async fn check(&self, registry: &Registry, wanted: &Wanted) -> Found {
        let policy = self.policy(wanted);
        let mut found = Found {
            image: wanted.image.clone(),
            digest: wanted.digest.clone(),
            policy: policy.clone(),
            status: Status::NotChecked,
        };
        let keys = if policy.verify == Mode::None {
            None
        } else {
            match policy.read_keys() {
                Ok(k) => Some(k),
                Err(e) => {
                    found.status = Status::Unverified {
                        why: e.to_string(),
                        keys: Vec::new(),
                    };
                    return found;
                }
            }
        };
        let tried: Vec<String> = keys.iter().flatten().map(PublicKey::describe).collect();
        let checked = tokio::time::timeout(
            IMAGE_TIMEOUT,
            self.resolve_and_verify(registry, wanted, keys.as_deref(), &mut found),
        )
        .await;
        match checked {
            Ok(Ok(status)) => found.status = status,
            Ok(Err(why)) => {
                found.status = Status::Unverified { why, keys: tried };
            }
            Err(_) => {
                found.status = Status::Unverified {
                    why: format!(
                        "the registry did not answer within {} s",
                        IMAGE_TIMEOUT.as_secs()
                    ),
                    keys: tried,
                };
            }
        }
        if keys.is_none() && found.status != Status::NotChecked {
            // a digest that could not be resolved, under `none`: only said, not a failure
            found.status = Status::NotChecked;
        }
        found
    }

    /// Resolves `wanted`'s digest (into `found`) and, with `keys`, checks its signatures.
    async fn resolve_and_verify(
        &self,
        registry: &Registry,
        wanted: &Wanted,
        keys: Option<&[PublicKey]>,
        found: &mut Found,
    ) -> Result<Status, String> {
        let reference = Reference {
            registry: wanted.registry.clone(),
            repository: wanted.repository.clone(),
            tag: Some(wanted.tag.clone().unwrap_or_else(|| "latest".into())),
        };
        let digest = match &wanted.digest {
            Some(d) => d.clone(),
            None => registry
                .manifest_digest(&reference)
                .await
                .map_err(|e| format!("its digest cannot be resolved: {e}"))?,
        };
        found.digest = Some(digest.clone());
        let Some(keys) = keys else {
            return Ok(Status::NotChecked);
        };
        let cache = self.cache_file(&digest, keys);
        if let Some(c) = read_cache(&cache, &digest) {
            return Ok(Status::Verified {
                key: c.key,
                path: c.path,
                format: c.format,
                cached: true,
            });
        }
        let tried = || keys.iter().map(PublicKey::describe).collect();
        match registry.verify(&reference, &digest, keys).await {
            Ok(Ok((key, format))) => {
                write_cache(
                    &cache,
                    &Cached {
                        digest: digest.clone(),
                        key: key.fingerprint.clone(),
                        path: key.path.clone(),
                        format: format.as_str().into(),
                    },
                );
                Ok(Status::Verified {
                    key: key.fingerprint.clone(),
                    path: key.path.clone(),
                    format: Format::as_str(format).into(),
                    cached: false,
                })
            }
            Ok(Err(why)) => Ok(Status::Unverified { why, keys: tried() }),
            Err(e) => Err(e.to_string()),
        }
    }

    /// The cache file of `digest` verified by one of `keys`.
    fn cache_file(&self, digest: &str, keys: &[PublicKey]) -> PathBuf {
        let mut fps: Vec<&str> = keys.iter().map(|k| k.fingerprint.as_str()).collect();
        fps.sort();
        let id = kudo_pkg::repo::sha256_hex(format!("{digest}\n{}", fps.join("\n")).as_bytes());
        self.home.cache.join("verified").join(format!("{id}.json"))
    }
}

fn read_cache(file: &Path, digest: &str) -> Option<Cached> {
    let text = std::fs::read(file).ok()?;
    let c: Cached = serde_json::from_slice(&text).ok()?;
    (c.digest == digest).then_some(c)
}

/// Writes a verification to the cache; a cache that cannot be written only costs the next
/// run a check.
fn write_cache(file: &Path, c: &Cached) {
    if let Ok(bytes) = serde_json::to_vec(c) {
        let _ = crate::repo::write_atomic(file, &bytes);
    }
}
