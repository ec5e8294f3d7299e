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
//! What is checked is returned per image; what it comes to ([`judge`]: refusals under
//! `required`, warnings under `warn`, the pins of what was verified) is one rule for the CLI's
//! gate and the manager's check. The manager's checker reads its policies and keys from one
//! ConfigMap ([`Checker::in_cluster`]) and caches in memory.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

use futures::StreamExt;
use serde::{Deserialize, Serialize};

use crate::oci::signature::Format;
use crate::oci::{Reference, Registry};
use crate::repo::{Home, RegistryPolicy, Repositories};
use crate::trust::{Mode, Policy, PublicKey, TrustError};

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

impl Wanted {
    /// The image written `image`, as `reference` names it (the reference a pin gives, or the
    /// image itself parsed).
    pub fn of(image: &str, reference: &kudo_pkg::images::Reference) -> Wanted {
        Wanted {
            image: image.to_string(),
            registry: reference.registry().to_string(),
            repository: reference.repository().to_string(),
            tag: reference.tag().map(str::to_string),
            digest: reference.digest().map(str::to_string),
        }
    }
}

/// The images of `found` as the checker takes them.
pub fn wanted(found: &kudo_pkg::images::Images) -> Vec<Wanted> {
    wanted_at(found, &BTreeMap::new())
}

/// The images of `found` as the checker takes them, each at its pin when `pins` (as written →
/// reference: `kudo.dev/images`'s, or a mirror's copies) gives one that parses: what will run.
pub fn wanted_at(found: &kudo_pkg::images::Images, pins: &BTreeMap<String, String>) -> Vec<Wanted> {
    found
        .images
        .iter()
        .map(|i| {
            match pins
                .get(&i.image)
                .and_then(|p| p.parse::<kudo_pkg::images::Reference>().ok())
            {
                Some(pinned) => Wanted::of(&i.image, &pinned),
                None => Wanted::of(&i.image, &i.reference),
            }
        })
        .collect()
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

/// Where verifications are kept.
enum Cache {
    /// One file each, in this folder (the CLI's, `$XDG_CACHE_HOME/kudo/verified/`).
    Dir(PathBuf),
    /// In memory, for as long as the checker lives (the manager's).
    Memory(Mutex<HashMap<String, Cached>>),
}

/// The policy the manager reads ([`Checker::in_cluster`]): `images:` as in
/// `repositories.yaml`, its keys named by the ConfigMap's other keys.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ClusterPolicy {
    #[serde(default)]
    images: Vec<RegistryPolicy>,
    /// The registries are read over plain HTTP (a registry on loopback, for tests).
    #[serde(rename = "plainHttp", default)]
    plain_http: bool,
}

/// The key of a ConfigMap the manager reads its image policy from.
pub const CLUSTER_POLICY_KEY: &str = "policy.yaml";

/// Checks images by the configured `images:` policies, or by `keys` for every image when
/// given (then `required`).
pub struct Checker {
    home: Home,
    config: Repositories,
    keys: Vec<PathBuf>,
    plain_http: bool,
    /// The keys' PEM texts by name, when they were given as text rather than files
    /// ([`Checker::in_cluster`]).
    key_texts: Option<HashMap<PathBuf, Vec<u8>>>,
    cache: Cache,
}

impl Checker {
    /// A checker reading kudo's configuration; `keys` (public key files), when not empty,
    /// require every image to be signed by one of them.
    pub fn new(keys: Vec<PathBuf>, plain_http: bool) -> Result<Checker, crate::repo::RepoError> {
        let home = Home::from_env()?;
        let config = Repositories::load(&home)?;
        Ok(Checker {
            cache: Cache::Dir(home.cache.join("verified")),
            home,
            config,
            keys,
            plain_http,
            key_texts: None,
        })
    }

    /// The manager's checker: the policy in `data` (a ConfigMap's data, `source` naming it in
    /// messages: `ConfigMap kudo-system/kudo-image-policy`): its [`CLUSTER_POLICY_KEY`] holds
    /// `images:` entries as `repositories.yaml` does (and `plainHttp`), whose `keys` name
    /// other keys of the same data, each a PEM public key. Verifications are cached in memory.
    pub fn in_cluster(source: &str, data: &BTreeMap<String, String>) -> Result<Checker, String> {
        let text = data.get(CLUSTER_POLICY_KEY).ok_or_else(|| {
            format!("{source}: no key {CLUSTER_POLICY_KEY} (the image policy, `images:` entries)")
        })?;
        let policy: ClusterPolicy = serde_saphyr::from_str(text)
            .map_err(|e| format!("{source}/{CLUSTER_POLICY_KEY}: {e}"))?;
        let home = Home {
            config: PathBuf::from(format!("{source}/{CLUSTER_POLICY_KEY}")),
            cache: PathBuf::new(),
        };
        let key_texts = data
            .iter()
            .filter(|(k, _)| k.as_str() != CLUSTER_POLICY_KEY)
            .map(|(k, v)| {
                (
                    PathBuf::from(format!("{source}/{k}")),
                    v.clone().into_bytes(),
                )
            })
            .collect();
        Ok(Checker {
            home,
            config: Repositories {
                images: policy.images,
                ..Repositories::default()
            },
            keys: Vec::new(),
            plain_http: policy.plain_http,
            key_texts: Some(key_texts),
            cache: Cache::Memory(Mutex::new(HashMap::new())),
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

    /// Whether `wanted` is checked at all: its policy is not `none`.
    pub fn checks(&self, wanted: &Wanted) -> bool {
        self.policy(wanted).verify != Mode::None
    }

    /// Checks every image of `wanted`, at most [`PARALLEL`] at once; in the same order. Runs
    /// its own runtime: for a caller outside one.
    pub fn check_all(&self, wanted: &[Wanted]) -> Result<Vec<Found>, crate::oci::OciError> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .map_err(|e| crate::oci::OciError::Internal(format!("a runtime: {e}")))?;
        runtime.block_on(self.check_each(wanted))
    }

    /// [`Checker::check_all`], in the caller's runtime.
    pub async fn check_each(&self, wanted: &[Wanted]) -> Result<Vec<Found>, crate::oci::OciError> {
        let registry = Registry::new(self.plain_http)?;
        let registry = &registry;
        // The futures made first: a stream over a closure is not `Send` for every lifetime,
        // which the manager's reconcile (a `Send` future) needs.
        let checks: Vec<_> = wanted.iter().map(|w| self.check(registry, w)).collect();
        Ok(futures::stream::iter(checks)
            .buffered(PARALLEL)
            .collect()
            .await)
    }

    /// The keys of `policy`: read from their files, or from the texts given.
    fn read_keys(&self, policy: &Policy) -> Result<Vec<PublicKey>, TrustError> {
        let Some(texts) = &self.key_texts else {
            return policy.read_keys();
        };
        if policy.keys.is_empty() {
            return policy.read_keys();
        }
        policy
            .keys
            .iter()
            .map(|k| match texts.get(k) {
                Some(pem) => PublicKey::parse(k, pem.clone()),
                None => Err(TrustError::Key {
                    path: k.clone(),
                    reason: format!("no such key beside {}", self.home.config.display()),
                }),
            })
            .collect()
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
            match self.read_keys(&policy) {
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
        let cache = cache_id(&digest, keys);
        if let Some(c) = self.read_cache(&cache, &digest) {
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
                self.write_cache(
                    &cache,
                    Cached {
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

    /// The cached verification `id` of `digest`.
    fn read_cache(&self, id: &str, digest: &str) -> Option<Cached> {
        let c = match &self.cache {
            Cache::Dir(dir) => {
                let text = std::fs::read(dir.join(format!("{id}.json"))).ok()?;
                serde_json::from_slice::<Cached>(&text).ok()?
            }
            Cache::Memory(m) => {
                let m = m.lock().unwrap_or_else(|e| e.into_inner());
                let c = m.get(id)?;
                Cached {
                    digest: c.digest.clone(),
                    key: c.key.clone(),
                    path: c.path.clone(),
                    format: c.format.clone(),
                }
            }
        };
        (c.digest == digest).then_some(c)
    }

    /// Keeps a verification; a cache that cannot be written only costs the next run a check.
    fn write_cache(&self, id: &str, c: Cached) {
        match &self.cache {
            Cache::Dir(dir) => {
                if let Ok(bytes) = serde_json::to_vec(&c) {
                    let _ = crate::repo::write_atomic(&dir.join(format!("{id}.json")), &bytes);
                }
            }
            Cache::Memory(m) => {
                let mut m = m.lock().unwrap_or_else(|e| e.into_inner());
                // Bounded: one entry per image digest and key set; a manager checks few.
                if m.len() >= MEMORY_CACHE {
                    m.clear();
                }
                m.insert(id.to_string(), c);
            }
        }
    }
}

/// How many verifications the manager keeps in memory before it starts again.
const MEMORY_CACHE: usize = 4096;

/// The cache's name of `digest` verified by one of `keys`.
fn cache_id(digest: &str, keys: &[PublicKey]) -> String {
    let mut fps: Vec<&str> = keys.iter().map(|k| k.fingerprint.as_str()).collect();
    fps.sort();
    kudo_pkg::repo::sha256_hex(format!("{digest}\n{}", fps.join("\n")).as_bytes())
}

/// What the checked images of a change come to ([`judge`]).
#[derive(Debug, Default)]
pub struct Verdict {
    /// Under `required`, each image not verified: [`unverified_line`].
    pub refused: Vec<String>,
    /// Under `warn`, each image not verified.
    pub warnings: Vec<String>,
    /// By image as written: the `kudo.dev/images` annotation's entries (`digest`, and for a
    /// verified image `pinned`, `verified` (the key) and `format`).
    pub pins: serde_json::Map<String, serde_json::Value>,
}

/// What `found` (the checks of `wanted`, in order) comes to: one rule for the CLI's gate and
/// the manager's check.
pub fn judge(wanted: &[Wanted], found: &[Found]) -> Verdict {
    let mut v = Verdict::default();
    for (w, f) in wanted.iter().zip(found) {
        let mut entry = serde_json::json!({"digest": f.digest});
        match &f.status {
            Status::NotChecked => continue,
            Status::Verified { key, format, .. } => {
                entry["pinned"] = serde_json::json!(f.pinned(w));
                entry["verified"] = serde_json::json!(key);
                entry["format"] = serde_json::json!(format);
            }
            Status::Unverified { why, keys } => {
                let line = unverified_line(f, why, keys);
                match f.policy.verify {
                    Mode::Required => v.refused.push(line),
                    _ => v.warnings.push(line),
                }
            }
        }
        v.pins.insert(f.image.clone(), entry);
    }
    v
}

/// `IMAGE (DIGEST): not signed by a trusted key: WHY`, the keys tried and the policy.
pub fn unverified_line(f: &Found, why: &str, keys: &[String]) -> String {
    format!(
        "{}{}: not signed by a trusted key: {why}\n  keys tried: {}\n  policy: verify: {} ({})",
        f.image,
        f.digest
            .as_deref()
            .map(|d| format!(" ({d})"))
            .unwrap_or_default(),
        if keys.is_empty() {
            "none".to_string()
        } else {
            keys.join(", ")
        },
        f.policy.verify.as_str(),
        f.policy.from
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const SOURCE: &str = "ConfigMap kudo-system/kudo-image-policy";

    fn wanted(image: &str) -> Wanted {
        let r: kudo_pkg::images::Reference = image.parse().unwrap();
        Wanted::of(image, &r)
    }

    fn data(entries: &[(&str, &str)]) -> BTreeMap<String, String> {
        entries
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn the_manager_s_policy_is_read_from_a_configmap_whose_keys_hold_the_public_keys() {
        let pem = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../examples/signing/cosign.pub"
        ))
        .unwrap();
        let policy = "plainHttp: true\nimages:\n- prefix: ghcr.io/acme\n  verify: required\n  keys: [acme.pub]\n- prefix: ghcr.io/acme/dev\n  verify: warn\n  keys: [gone.pub]\n";
        let c = Checker::in_cluster(
            SOURCE,
            &data(&[("policy.yaml", policy), ("acme.pub", &pem)]),
        )
        .unwrap();
        assert!(c.plain_http && c.is_active());
        let prod = wanted("ghcr.io/acme/kafka:3");
        assert!(c.checks(&prod));
        assert!(!c.checks(&wanted("nginx:1.27")), "no prefix: none");
        let p = c.policy(&prod);
        assert_eq!(p.verify, Mode::Required);
        assert_eq!(
            p.from,
            format!("images ghcr.io/acme in {SOURCE}/policy.yaml")
        );
        let keys = c.read_keys(&p).unwrap();
        assert_eq!(keys[0].path, PathBuf::from(format!("{SOURCE}/acme.pub")));
        // a key the policy names but the ConfigMap lacks: named
        let dev = c.policy(&wanted("ghcr.io/acme/dev/kafka:3"));
        let e = c.read_keys(&dev).unwrap_err().to_string();
        assert!(
            e.contains(&format!("{SOURCE}/gone.pub")) && e.contains("no such key"),
            "{e}"
        );
    }

    #[test]
    fn a_configmap_without_a_readable_policy_is_refused_naming_it() {
        let e = Checker::in_cluster(SOURCE, &data(&[])).err().unwrap();
        assert!(e.contains("no key policy.yaml"), "{e}");
        let e = Checker::in_cluster(SOURCE, &data(&[("policy.yaml", "images: 3\n")]))
            .err()
            .unwrap();
        assert!(e.starts_with(&format!("{SOURCE}/policy.yaml: ")), "{e}");
        let e = Checker::in_cluster(SOURCE, &data(&[("policy.yaml", "imagez: []\n")]))
            .err()
            .unwrap();
        assert!(e.contains("imagez"), "{e}");
    }

    #[test]
    fn the_verdict_refuses_under_required_warns_under_warn_and_pins_the_verified() {
        let policy = |verify| Policy {
            verify,
            keys: vec![PathBuf::from("k.pub")],
            from: "test".into(),
        };
        let d = format!("sha256:{}", "ab".repeat(32));
        let w = [
            wanted("a.io/x:1"),
            wanted("a.io/y:1"),
            wanted("a.io/z:1"),
            wanted("a.io/n:1"),
        ];
        let found = [
            Found {
                image: "a.io/x:1".into(),
                digest: Some(d.clone()),
                policy: policy(Mode::Required),
                status: Status::Verified {
                    key: "sha256:k".into(),
                    path: "k.pub".into(),
                    format: "bundle".into(),
                    cached: false,
                },
            },
            Found {
                image: "a.io/y:1".into(),
                digest: Some(d.clone()),
                policy: policy(Mode::Required),
                status: Status::Unverified {
                    why: "no signature".into(),
                    keys: vec!["k.pub (sha256:k)".into()],
                },
            },
            Found {
                image: "a.io/z:1".into(),
                digest: None,
                policy: policy(Mode::Warn),
                status: Status::Unverified {
                    why: "the registry did not answer within 30 s".into(),
                    keys: vec![],
                },
            },
            Found {
                image: "a.io/n:1".into(),
                digest: None,
                policy: Policy::default(),
                status: Status::NotChecked,
            },
        ];
        let v = judge(&w, &found);
        assert_eq!(v.refused.len(), 1);
        assert!(
            v.refused[0].starts_with(&format!("a.io/y:1 ({d}): not signed by a trusted key: no signature\n  keys tried: k.pub (sha256:k)")),
            "{}",
            v.refused[0]
        );
        assert_eq!(v.warnings.len(), 1);
        assert!(
            v.warnings[0].contains("keys tried: none"),
            "{}",
            v.warnings[0]
        );
        assert_eq!(v.pins["a.io/x:1"]["pinned"], format!("a.io/x@{d}"));
        assert_eq!(v.pins["a.io/x:1"]["verified"], "sha256:k");
        assert!(v.pins["a.io/y:1"].get("pinned").is_none());
        assert!(!v.pins.contains_key("a.io/n:1"), "not checked: no entry");
    }
}
