//! kudo packages in OCI registries: push a package's `.tgz`, list a repository's tags, pull a
//! tag back, with the registry's credentials. The protocol is oci-client's (the ORAS
//! project); this module decides what a kudo package looks like in a registry.
//!
//! A package is an OCI artifact: one manifest (`application/vnd.oci.image.manifest.v1+json`)
//! whose config is [`CONFIG_MEDIA_TYPE`] (a small JSON of the package's `name`,
//! `operatorVersion`, `appVersion`, `description` and `maintainers`) and whose one layer is
//! [`PACKAGE_MEDIA_TYPE`], the exact bytes of the `.tgz` `kudo package create` writes: the
//! layer's sha256 is the package's digest, the one a KUDO repository's `index.yaml` lists. The
//! manifest is annotated with `org.opencontainers.image.title` (the name) and
//! `org.opencontainers.image.version` (the tag) and no creation time, so pushing the same
//! `.tgz` again gives the same manifest digest. Its repository is `PATH/NAME` below the push
//! target, its tag the package's versions ([`tag_for`]).
//!
//! - [`Reference`], `oci://REGISTRY/PATH/NAME[:TAG]`.
//! - [`tag_for`] and [`versions_of_tag`], a package's versions as a tag, and back.
//! - [`Registry`], the client, with each registry's credentials ([`credentials`]) and
//!   `--plain-http`; [`Registry::push`], [`Registry::tags`], [`Registry::pull`],
//!   [`Registry::login`].
//! - [`OciError`], what went wrong, naming the reference and the registry's answer (never a
//!   password).
//!
//! TLS goes through rustls with ring (see [`install_crypto_provider`]) and the system's
//! certificate store; `KUDO_REGISTRY_CA_FILE` names a PEM file of further roots (a registry
//! with a private CA).

pub mod credentials;
mod reference;
mod tag;

use std::path::PathBuf;
use std::pin::Pin;
use std::task::{Context, Poll};

use oci_client::client::{
    Certificate, CertificateEncoding, ClientConfig, ClientProtocol, Config, ImageLayer,
};
use oci_client::errors::{OciDistributionError, OciErrorCode};
use oci_client::manifest::{OCI_IMAGE_MEDIA_TYPE, OciImageManifest, OciManifest};
use oci_client::secrets::RegistryAuth;
use oci_client::{Client, RegistryOperation};
use serde_json::{Map, Value};

pub use credentials::Credentials;
pub use reference::{Reference, ReferenceProblem};
pub use tag::{TagProblem, tag_for};
// The package resolver (`kudo install oci://...`) reads the versions of a repository's tags;
// until it calls this, the tests do.
#[allow(unused_imports)]
pub use tag::versions_of_tag;

/// The media type of a package's config: a JSON of its name, versions, description and
/// maintainers.
pub const CONFIG_MEDIA_TYPE: &str = "application/vnd.kudo.operator.config.v1+json";
/// The media type of a package's one layer: the `.tgz` itself.
pub const PACKAGE_MEDIA_TYPE: &str = "application/vnd.kudo.operator.package.v1.tar+gzip";
/// The environment variable naming a PEM file of further root certificates.
pub const CA_FILE_ENV: &str = "KUDO_REGISTRY_CA_FILE";

/// The annotation of the package's name (on the manifest) and file name (on the layer, so
/// `oras pull` writes `NAME-VERSION.tgz`).
const TITLE: &str = "org.opencontainers.image.title";
/// The annotation of the tag.
const VERSION: &str = "org.opencontainers.image.version";
/// Helm's chart config: a chart is the artifact most likely pulled by mistake.
const HELM_CONFIG_MEDIA_TYPE: &str = "application/vnd.cncf.helm.config.v1+json";
/// Container image configs (OCI and Docker).
const IMAGE_CONFIG_MEDIA_TYPES: [&str; 2] = [
    "application/vnd.oci.image.config.v1+json",
    "application/vnd.docker.container.image.v1+json",
];
/// The repository `kudo registry login` asks for tags to check credentials, when given none.
const LOGIN_PROBE: &str = "kudo-login-check";
/// Tags asked per page; pages asked at most.
const TAG_PAGE: usize = 1000;
const MAX_TAG_PAGES: usize = 100;
/// How long connecting to a registry may take.
const CONNECT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(15);
/// The most bytes a package may have, as `kudo_pkg` reads archives.
const MAX_PACKAGE_BYTES: u64 = kudo_pkg::package::MAX_PACKAGE_BYTES;

/// What went wrong with a registry; each message names the reference (or file) and what the
/// registry answered, never a password.
#[derive(Debug, thiserror::Error)]
pub enum OciError {
    /// Not an `oci://` reference, or not one this operation takes.
    #[error("{input}: not an OCI reference kudo takes here: {problem}")]
    InvalidReference {
        /// What was given.
        input: String,
        /// Why it is refused.
        problem: ReferenceProblem,
    },
    /// A version that cannot be written in a tag.
    #[error("version {version:?} cannot be written in an OCI tag: {problem}")]
    Untaggable {
        /// The version.
        version: String,
        /// Why.
        problem: TagProblem,
    },
    /// The bytes to push are not a kudo package's `.tgz`.
    #[error("not a kudo package archive: {reason}")]
    NotAPackage {
        /// What is wrong with them.
        reason: String,
    },
    /// The reference holds something else than a kudo package.
    #[error("{reference}: not a kudo operator package: {found}")]
    NotKudo {
        /// The reference.
        reference: String,
        /// What it holds.
        found: String,
    },
    /// The registry refused the request's credentials, or asked for some.
    #[error("{reference}: the registry refused access ({answer}); {}", access_hint(.registry, .sent))]
    Unauthorized {
        /// The reference.
        reference: String,
        /// Its registry, for the `kudo registry login` hint.
        registry: String,
        /// What the registry answered.
        answer: String,
        /// Whose credentials were sent, and from which file.
        sent: Option<(String, PathBuf)>,
    },
    /// `kudo registry login`: the registry refused these credentials.
    #[error(
        "{registry}: the registry refused the credentials of {username} ({answer}); nothing was stored"
    )]
    LoginRefused {
        /// The registry.
        registry: String,
        /// The user.
        username: String,
        /// What the registry answered.
        answer: String,
    },
    /// The repository or tag does not exist.
    #[error("{reference}: not found in the registry ({answer})")]
    NotFound {
        /// The reference.
        reference: String,
        /// What the registry answered.
        answer: String,
    },
    /// Any other refusal by the registry.
    #[error("{reference}: the registry answered: {answer}")]
    Registry {
        /// The reference.
        reference: String,
        /// What the registry answered.
        answer: String,
    },
    /// No answer: the registry cannot be reached, or TLS failed.
    #[error("{reference}: cannot reach the registry: {reason}{}", if *.plain_http { "" } else { " (kudo speaks HTTPS; for a registry that speaks plain HTTP, pass --plain-http)" })]
    Unreachable {
        /// The reference.
        reference: String,
        /// Why, as the HTTP client says it.
        reason: String,
        /// Whether plain HTTP was used.
        plain_http: bool,
    },
    /// The pulled bytes are not those the manifest names.
    #[error(
        "{reference}: the package's bytes have digest {actual}, its manifest says {expected}: the registry served other bytes than were pushed; nothing was kept"
    )]
    DigestMismatch {
        /// The reference.
        reference: String,
        /// The digest in the manifest.
        expected: String,
        /// The digest of the bytes received.
        actual: String,
    },
    /// The package is larger than kudo reads.
    #[error("{reference}: the package is {size} bytes, more than the {max} bytes kudo reads")]
    TooLarge {
        /// The reference.
        reference: String,
        /// Its size.
        size: u64,
        /// The limit.
        max: u64,
    },
    /// A credentials file cannot be read or written.
    #[error("{}: {reason}", path.display())]
    Credentials {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// The file `KUDO_REGISTRY_CA_FILE` names cannot be used.
    #[error("{} (from {CA_FILE_ENV}): {reason}", path.display())]
    CaFile {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// A bug.
    #[error("internal error, this may indicate a bug in kudo: {0}; consider filing an issue")]
    Internal(String),
}

/// What [`OciError::Unauthorized`] suggests.
fn access_hint(registry: &str, sent: &Option<(String, PathBuf)>) -> String {
    match sent {
        None => format!(
            "no credentials for {registry} were found: log in with `kudo registry login {registry}`"
        ),
        Some((user, file)) => format!(
            "the credentials of {user} from {} were sent: check them with `kudo registry login {registry}`",
            file.display()
        ),
    }
}

/// Makes ring rustls's crypto provider for the process, once; a provider already installed is
/// kept. oci-client's HTTP client finds no TLS without one.
pub fn install_crypto_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// A pushed package.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pushed {
    /// `oci://REGISTRY/PATH/NAME:TAG`.
    pub reference: Reference,
    /// The manifest's digest, `sha256:HEX`.
    pub manifest_digest: String,
    /// The sha256 of the `.tgz`, hex (as a KUDO `index.yaml` writes it).
    pub package_digest: String,
}

/// A pulled package.
#[derive(Clone, PartialEq, Eq)]
pub struct Pulled {
    /// The `.tgz`.
    pub bytes: Vec<u8>,
    /// Its sha256, hex, computed from the bytes and checked against the manifest's layer.
    pub package_digest: String,
    /// The manifest's digest, `sha256:HEX`.
    pub manifest_digest: String,
}

impl std::fmt::Debug for Pulled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pulled")
            .field("bytes", &self.bytes.len())
            .field("package_digest", &self.package_digest)
            .field("manifest_digest", &self.manifest_digest)
            .finish()
    }
}

/// A client for OCI registries, with each registry's credentials ([`credentials::lookup`],
/// read at each call) and the protocol (`plain_http`: HTTP instead of HTTPS, for every
/// registry).
pub struct Registry {
    client: Client,
    plain_http: bool,
}

impl Registry {
    /// A client; `KUDO_REGISTRY_CA_FILE`, when set, names a PEM file of root certificates
    /// trusted beside the system's.
    pub fn new(plain_http: bool) -> Result<Registry, OciError> {
        install_crypto_provider();
        let mut config = ClientConfig {
            protocol: if plain_http {
                ClientProtocol::Http
            } else {
                ClientProtocol::Https
            },
            user_agent: concat!("kudo/", env!("CARGO_PKG_VERSION")),
            connect_timeout: Some(CONNECT_TIMEOUT),
            ..ClientConfig::default()
        };
        if let Some(path) = std::env::var_os(CA_FILE_ENV).filter(|p| !p.is_empty()) {
            config.extra_root_certificates = pem_certificates(&PathBuf::from(path))?;
        }
        let client = Client::try_from(config)
            .map_err(|e| OciError::Internal(format!("the HTTP client cannot be made: {e}")))?;
        Ok(Registry { client, plain_http })
    }

    /// Pushes a package's `.tgz` to `target` (`oci://REGISTRY/PATH`; the package's name is
    /// appended, its versions are the tag). Blobs the registry has are not sent again.
    pub async fn push(&self, target: &Reference, tgz: &[u8]) -> Result<Pushed, OciError> {
        if target.tag.is_some() {
            return Err(OciError::InvalidReference {
                input: target.to_string(),
                problem: ReferenceProblem::TagOnPushTarget,
            });
        }
        let meta = PackageMeta::read(tgz)?;
        let tag = tag_for(&meta.operator_version, meta.app_version.as_deref())?;
        let reference = target.join(&meta.name)?.with_tag(&tag);
        let package_digest = sha256_hex(tgz);
        let layer = ImageLayer::new(
            tgz.to_vec(),
            PACKAGE_MEDIA_TYPE.to_string(),
            Some([(TITLE.to_string(), meta.file_name())].into()),
        );
        let config = Config::new(meta.config_json()?, CONFIG_MEDIA_TYPE.to_string(), None);
        let annotations = [
            (TITLE.to_string(), meta.name.clone()),
            (VERSION.to_string(), tag.clone()),
        ];
        let mut manifest = OciImageManifest::build(
            std::slice::from_ref(&layer),
            &config,
            Some(annotations.into()),
        );
        manifest.media_type = Some(OCI_IMAGE_MEDIA_TYPE.to_string());
        let body = serde_json::to_vec(&manifest).map_err(|e| OciError::Internal(e.to_string()))?;
        let manifest_digest = format!("sha256:{}", sha256_hex(&body));

        let image = reference.image();
        let (auth, sent) = self.auth(&reference.registry)?;
        let fail = |e| self.error(&reference, &sent, e);
        self.client
            .auth(&image, &auth, RegistryOperation::Push)
            .await
            .map_err(fail)?;
        for (data, digest) in [
            (layer.data, &manifest.layers[0].digest),
            (config.data, &manifest.config.digest),
        ] {
            if !self
                .client
                .blob_exists(&image, digest)
                .await
                .map_err(fail)?
            {
                self.client
                    .push_blob(&image, data, digest)
                    .await
                    .map_err(fail)?;
            }
        }
        let content_type = OCI_IMAGE_MEDIA_TYPE
            .parse()
            .map_err(|e| OciError::Internal(format!("{e}")))?;
        self.client
            .push_manifest_raw(&image, body, content_type)
            .await
            .map_err(fail)?;
        Ok(Pushed {
            reference,
            manifest_digest,
            package_digest,
        })
    }

    /// The tags of a repository (`oci://REGISTRY/PATH/NAME`; a tag in it is ignored), as the
    /// registry lists them (not sorted). A repository the registry does not know is
    /// [`OciError::NotFound`].
    #[allow(
        dead_code,
        reason = "the package resolver's (`kudo install oci://...`); the tests call it"
    )]
    pub async fn tags(&self, repository: &Reference) -> Result<Vec<String>, OciError> {
        self.tags_by_page(repository, TAG_PAGE).await
    }

    /// [`Registry::tags`], asking `page` tags at a time (registries that page their answer
    /// page it by `n` and `last`; those that ignore them send every tag at once).
    async fn tags_by_page(
        &self,
        repository: &Reference,
        page: usize,
    ) -> Result<Vec<String>, OciError> {
        repository.require(false)?;
        let reference = repository.untagged();
        let image = reference.image();
        let (auth, sent) = self.auth(&reference.registry)?;
        let mut tags: Vec<String> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        let mut last: Option<String> = None;
        for _ in 0..MAX_TAG_PAGES {
            let answer = self
                .client
                .list_tags(&image, &auth, Some(page), last.as_deref())
                .await
                .map_err(|e| self.error(&reference, &sent, e))?;
            let full = answer.tags.len() >= page;
            let before = tags.len();
            for t in answer.tags {
                if seen.insert(t.clone()) {
                    tags.push(t);
                }
            }
            // A registry that ignores `n` or `last` sends what it sent before: done.
            if !full || tags.len() == before {
                break;
            }
            last = tags.last().cloned();
        }
        Ok(tags)
    }

    /// Pulls the package at `reference` (`oci://REGISTRY/PATH/NAME:TAG`): its manifest must be
    /// a kudo package's ([`CONFIG_MEDIA_TYPE`], one [`PACKAGE_MEDIA_TYPE`] layer), and the
    /// layer's bytes must have the digest and size the manifest gives.
    pub async fn pull(&self, reference: &Reference) -> Result<Pulled, OciError> {
        reference.require(true)?;
        let image = reference.image();
        let (auth, sent) = self.auth(&reference.registry)?;
        let fail = |e| self.error(reference, &sent, e);
        let (manifest, manifest_digest) = self
            .client
            .pull_manifest(&image, &auth)
            .await
            .map_err(fail)?;
        let manifest = match manifest {
            OciManifest::Image(m) => m,
            OciManifest::ImageIndex(i) => {
                return Err(OciError::NotKudo {
                    reference: reference.to_string(),
                    found: format!(
                        "an image index of {} manifests (a multi-platform container image){}",
                        i.manifests.len(),
                        WHAT_KUDO_PULLS
                    ),
                });
            }
        };
        if let Some(found) = foreign(&manifest) {
            return Err(OciError::NotKudo {
                reference: reference.to_string(),
                found,
            });
        }
        let layer = &manifest.layers[0];
        let size = u64::try_from(layer.size).unwrap_or(u64::MAX);
        if size > MAX_PACKAGE_BYTES {
            return Err(OciError::TooLarge {
                reference: reference.to_string(),
                size,
                max: MAX_PACKAGE_BYTES,
            });
        }
        let Some(expected) = layer.digest.strip_prefix("sha256:") else {
            return Err(OciError::Registry {
                reference: reference.to_string(),
                answer: format!(
                    "the package layer's digest {} is not sha256, which kudo checks",
                    layer.digest
                ),
            });
        };
        let mut out = Capped {
            bytes: Vec::with_capacity(size as usize),
            max: size as usize,
            overflow: false,
        };
        let pulled = self.client.pull_blob(&image, layer, &mut out).await;
        if out.overflow {
            return Err(OciError::Registry {
                reference: reference.to_string(),
                answer: format!("it sent more than the {size} bytes the manifest gives"),
            });
        }
        pulled.map_err(fail)?;
        let actual = sha256_hex(&out.bytes);
        if actual != expected {
            return Err(OciError::DigestMismatch {
                reference: reference.to_string(),
                expected: layer.digest.clone(),
                actual: format!("sha256:{actual}"),
            });
        }
        if out.bytes.len() as u64 != size {
            return Err(OciError::Registry {
                reference: reference.to_string(),
                answer: format!(
                    "the package is {} bytes, the manifest says {size}",
                    out.bytes.len()
                ),
            });
        }
        Ok(Pulled {
            bytes: out.bytes,
            package_digest: actual,
            manifest_digest,
        })
    }

    /// Checks `credentials` against `registry` (`host[:port]`): a token service (Docker Hub,
    /// ghcr.io, ...) must give a token for them; a registry with Basic authentication must
    /// list the tags of `repository` (default `kudo-login-check`) with them, where only a
    /// 401 refuses them (a repository that does not exist is fine). A registry that asks for
    /// no credentials accepts any.
    pub async fn login(
        &self,
        registry: &str,
        repository: Option<&str>,
        credentials: &Credentials,
    ) -> Result<(), OciError> {
        let probe = Reference {
            registry: registry.to_string(),
            repository: repository.unwrap_or(LOGIN_PROBE).to_string(),
            tag: None,
        };
        let image = probe.image();
        let auth = RegistryAuth::Basic(credentials.username.clone(), credentials.password.clone());
        let refused = |e| match self.error(&probe, &None, e) {
            OciError::Unauthorized { answer, .. } => OciError::LoginRefused {
                registry: registry.to_string(),
                username: credentials.username.clone(),
                answer,
            },
            other => other,
        };
        // Some(token): a token service took the credentials. None: Basic, or no challenge.
        if self
            .client
            .auth(&image, &auth, RegistryOperation::Pull)
            .await
            .map_err(refused)?
            .is_some()
        {
            return Ok(());
        }
        match self.client.list_tags(&image, &auth, Some(1), None).await {
            Ok(_) => Ok(()),
            Err(e) => match refused(e) {
                e @ (OciError::LoginRefused { .. } | OciError::Unreachable { .. }) => Err(e),
                _ => Ok(()),
            },
        }
    }

    /// The credentials for `registry`, and whose they are.
    fn auth(&self, registry: &str) -> Result<(RegistryAuth, Option<(String, PathBuf)>), OciError> {
        Ok(match credentials::lookup(registry)? {
            Some(found) => {
                let c = found.credentials;
                (
                    RegistryAuth::Basic(c.username.clone(), c.password),
                    Some((c.username, found.file)),
                )
            }
            None => (RegistryAuth::Anonymous, None),
        })
    }

    /// An oci-client error as an [`OciError`] naming `reference`.
    fn error(
        &self,
        reference: &Reference,
        sent: &Option<(String, PathBuf)>,
        e: OciDistributionError,
    ) -> OciError {
        let reference_text = reference.to_string();
        let unauthorized = |answer: String| OciError::Unauthorized {
            reference: reference_text.clone(),
            registry: reference.registry.clone(),
            answer,
            sent: sent.clone(),
        };
        match e {
            OciDistributionError::UnauthorizedError { .. } => {
                unauthorized("401 Unauthorized".into())
            }
            OciDistributionError::AuthenticationFailure(body) => {
                unauthorized(format!("its token service answered: {}", short(&body)))
            }
            OciDistributionError::RegistryError { envelope, .. } => {
                let codes: Vec<String> = envelope
                    .errors
                    .iter()
                    .map(|e| {
                        let code = serde_json::to_value(&e.code)
                            .ok()
                            .and_then(|v| v.as_str().map(String::from))
                            .unwrap_or_else(|| format!("{:?}", e.code));
                        if e.message.is_empty() {
                            code
                        } else {
                            format!("{code}: {}", short(&e.message))
                        }
                    })
                    .collect();
                let answer = codes.join("; ");
                let has = |c: &OciErrorCode| envelope.errors.iter().any(|e| &e.code == c);
                if has(&OciErrorCode::Unauthorized) || has(&OciErrorCode::Denied) {
                    unauthorized(answer)
                } else if has(&OciErrorCode::NameUnknown)
                    || has(&OciErrorCode::ManifestUnknown)
                    || has(&OciErrorCode::BlobUnknown)
                {
                    OciError::NotFound {
                        reference: reference_text,
                        answer,
                    }
                } else {
                    OciError::Registry {
                        reference: reference_text,
                        answer,
                    }
                }
            }
            OciDistributionError::ServerError { code, message, .. } => {
                let answer = if message.trim().is_empty() {
                    format!("HTTP {code}")
                } else {
                    format!("HTTP {code}: {}", short(&message))
                };
                match code {
                    401 | 403 => unauthorized(answer),
                    404 => OciError::NotFound {
                        reference: reference_text,
                        answer,
                    },
                    _ => OciError::Registry {
                        reference: reference_text,
                        answer,
                    },
                }
            }
            // An answer oci-client checked by its status alone (a blob's HEAD, an upload).
            OciDistributionError::RequestError(e) if e.status().is_some() => {
                let status = e.status().map(|s| s.as_u16()).unwrap_or_default();
                let answer = e
                    .status()
                    .map(|s| s.to_string())
                    .unwrap_or_else(|| chain(&e));
                match status {
                    401 | 403 => unauthorized(answer),
                    404 => OciError::NotFound {
                        reference: reference_text,
                        answer,
                    },
                    _ => OciError::Registry {
                        reference: reference_text,
                        answer: format!("{answer} ({})", chain(&e)),
                    },
                }
            }
            OciDistributionError::RequestError(e) => OciError::Unreachable {
                reference: reference_text,
                reason: chain(&e),
                plain_http: self.plain_http,
            },
            OciDistributionError::DigestError(
                oci_client::errors::DigestError::VerificationError { expected, actual },
            ) => OciError::DigestMismatch {
                reference: reference_text,
                expected,
                actual,
            },
            other => OciError::Registry {
                reference: reference_text,
                answer: chain(&other),
            },
        }
    }
}

/// The end of the message for something that is not a kudo package.
const WHAT_KUDO_PULLS: &str = "; kudo pulls what `kudo package push` pushed: a config of \
    application/vnd.kudo.operator.config.v1+json and one layer of \
    application/vnd.kudo.operator.package.v1.tar+gzip";

/// What a manifest holds when it is not a kudo package; `None` when it is one.
fn foreign(manifest: &OciImageManifest) -> Option<String> {
    let config = manifest.config.media_type.as_str();
    let layers: Vec<&str> = manifest
        .layers
        .iter()
        .map(|l| l.media_type.as_str())
        .collect();
    if config == CONFIG_MEDIA_TYPE && layers == [PACKAGE_MEDIA_TYPE] {
        return None;
    }
    let what = match config {
        HELM_CONFIG_MEDIA_TYPE => "a Helm chart".to_string(),
        c if IMAGE_CONFIG_MEDIA_TYPES.contains(&c) => "a container image".to_string(),
        CONFIG_MEDIA_TYPE => "a kudo package manifest with other layers".to_string(),
        _ => match &manifest.artifact_type {
            Some(t) => format!("an artifact of type {t}"),
            None => "an artifact".to_string(),
        },
    };
    Some(format!(
        "{what} (config {config}, layers [{}]){WHAT_KUDO_PULLS}",
        layers.join(", ")
    ))
}

/// A package's metadata, read from its `.tgz`.
#[derive(Debug)]
struct PackageMeta {
    name: String,
    operator_version: String,
    app_version: Option<String>,
    description: Option<Value>,
    maintainers: Option<Value>,
}

impl PackageMeta {
    /// Loads the package in `tgz` (through a temporary file, as `kudo_pkg` reads archives).
    fn read(tgz: &[u8]) -> Result<PackageMeta, OciError> {
        let refuse = |reason: String| OciError::NotAPackage { reason };
        if tgz.len() as u64 > MAX_PACKAGE_BYTES {
            return Err(refuse(format!(
                "{} bytes, more than the {MAX_PACKAGE_BYTES} bytes kudo reads",
                tgz.len()
            )));
        }
        if !tgz.starts_with(&[0x1f, 0x8b]) {
            return Err(refuse(
                "not gzip data (push the .tgz `kudo package create` writes)".into(),
            ));
        }
        let io = |e: std::io::Error| OciError::Internal(format!("a temporary file: {e}"));
        let dir = tempfile::tempdir().map_err(io)?;
        let path = dir.path().join("package.tgz");
        std::fs::write(&path, tgz).map_err(io)?;
        let pkg = kudo_pkg::Package::load(&path).map_err(|e| {
            refuse(
                e.to_string()
                    .replace(&path.display().to_string(), "the archive"),
            )
        })?;
        let op = pkg.operator();
        let doc = pkg.operator_document().value();
        let field = |k: &str| doc.get(k).filter(|v| !v.is_null()).cloned();
        Ok(PackageMeta {
            name: op.name.clone(),
            operator_version: pkg.version(),
            app_version: op.app_version.clone().filter(|a| !a.is_empty()),
            description: field("description"),
            maintainers: field("maintainers"),
        })
    }

    /// The artifact's config: the fields a registry's UI or `oras manifest fetch-config` shows.
    fn config_json(&self) -> Result<Vec<u8>, OciError> {
        let mut config = Map::new();
        config.insert("name".into(), Value::String(self.name.clone()));
        config.insert(
            "operatorVersion".into(),
            Value::String(self.operator_version.clone()),
        );
        if let Some(a) = &self.app_version {
            config.insert("appVersion".into(), Value::String(a.clone()));
        }
        if let Some(d) = &self.description {
            config.insert("description".into(), d.clone());
        }
        if let Some(m) = &self.maintainers {
            config.insert("maintainers".into(), m.clone());
        }
        serde_json::to_vec(&config).map_err(|e| OciError::Internal(e.to_string()))
    }

    /// The archive's name as `kudo package create` writes it.
    fn file_name(&self) -> String {
        format!("{}-{}.tgz", self.name, self.operator_version)
    }
}

/// The sha256 of `bytes`, lowercase hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    ring::digest::digest(&ring::digest::SHA256, bytes)
        .as_ref()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// An error and its sources, one sentence: `error sending request: ... : Connection refused`.
fn chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let next = s.to_string();
        if !text.contains(&next) {
            text.push_str(": ");
            text.push_str(&next);
        }
        source = s.source();
    }
    text
}

/// A registry's message on one line, cut at 300 characters.
fn short(text: &str) -> String {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match line.char_indices().nth(300) {
        Some((i, _)) => format!("{}...", &line[..i]),
        None => line,
    }
}

/// The root certificates in a PEM file, each given to the client.
fn pem_certificates(path: &std::path::Path) -> Result<Vec<Certificate>, OciError> {
    let text = std::fs::read_to_string(path).map_err(|e| OciError::CaFile {
        path: path.to_path_buf(),
        reason: format!("cannot read it: {e}"),
    })?;
    const END: &str = "-----END CERTIFICATE-----";
    let certs: Vec<Certificate> = text
        .split_inclusive(END)
        .filter_map(|block| {
            block
                .find("-----BEGIN CERTIFICATE-----")
                .map(|i| &block[i..])
        })
        .filter(|block| block.ends_with(END))
        .map(|block| Certificate {
            encoding: CertificateEncoding::Pem,
            data: block.as_bytes().to_vec(),
        })
        .collect();
    if certs.is_empty() {
        return Err(OciError::CaFile {
            path: path.to_path_buf(),
            reason: "holds no PEM certificate (-----BEGIN CERTIFICATE-----)".into(),
        });
    }
    Ok(certs)
}

/// A buffer that refuses more than `max` bytes: a registry cannot make kudo hold more than the
/// manifest's size.
struct Capped {
    bytes: Vec<u8>,
    max: usize,
    overflow: bool,
}

impl tokio::io::AsyncWrite for Capped {
    fn poll_write(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        if self.bytes.len() + buf.len() > self.max {
            self.overflow = true;
            return Poll::Ready(Err(std::io::Error::other(
                "more bytes than the manifest gives",
            )));
        }
        self.bytes.extend_from_slice(buf);
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest(config: &str, layers: &[&str]) -> OciImageManifest {
        let mut m = OciImageManifest::default();
        m.config.media_type = config.into();
        for l in layers {
            m.layers.push(oci_client::manifest::OciDescriptor {
                media_type: (*l).into(),
                ..Default::default()
            });
        }
        m
    }

    #[test]
    fn only_a_kudo_manifest_is_a_package() {
        let cases: &[(&str, &[&str], Option<&str>)] = &[
            (CONFIG_MEDIA_TYPE, &[PACKAGE_MEDIA_TYPE], None),
            (
                HELM_CONFIG_MEDIA_TYPE,
                &["application/vnd.cncf.helm.chart.content.v1.tar+gzip"],
                Some("a Helm chart"),
            ),
            (
                "application/vnd.oci.image.config.v1+json",
                &["application/vnd.oci.image.layer.v1.tar+gzip"],
                Some("a container image"),
            ),
            (
                CONFIG_MEDIA_TYPE,
                &[PACKAGE_MEDIA_TYPE, PACKAGE_MEDIA_TYPE],
                Some("a kudo package manifest with other layers"),
            ),
            (
                CONFIG_MEDIA_TYPE,
                &[],
                Some("a kudo package manifest with other layers"),
            ),
            ("application/x-other", &["a/b"], Some("an artifact")),
        ];
        for (config, layers, want) in cases {
            let got = foreign(&manifest(config, layers));
            match want {
                None => assert_eq!(got, None, "{config} {layers:?}"),
                Some(what) => {
                    let got = got.unwrap_or_default();
                    assert!(got.starts_with(what), "{config} {layers:?}: {got}");
                    assert!(got.contains(PACKAGE_MEDIA_TYPE), "{got}");
                }
            }
        }
    }

    /// The calls the package resolver makes, against a real registry: push, tags (page by
    /// page), the versions of a tag, pull.
    #[test]
    fn push_tags_and_pull_against_a_registry() {
        let Some(registry) = kudo_tests::TestRegistry::start(Default::default()) else {
            return;
        };
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let client = Registry::new(true).unwrap();
        let target = Reference::parse(&registry.oci("kudo")).unwrap();
        let mut tgzs = Vec::new();
        for example in ["zookeeper-v1beta1", "cassandra-v1beta2"] {
            let dir = kudo_tests::example(example);
            tgzs.push(kudo_pkg::create_archive(&dir).unwrap().0);
        }
        let mut pushed = Vec::new();
        for tgz in &tgzs {
            pushed.push(runtime.block_on(client.push(&target, tgz)).unwrap());
        }
        assert_eq!(
            pushed[0].reference.to_string(),
            registry.oci("kudo/zookeeper:3.6.2_0.4.0")
        );
        let repository = pushed[0].reference.untagged();
        // one tag a page: this registry ignores `n` and sends them all, read once
        for page in [1, TAG_PAGE] {
            let tags = runtime
                .block_on(client.tags_by_page(&repository, page))
                .unwrap();
            assert_eq!(tags, ["3.6.2_0.4.0"], "page {page}");
            assert_eq!(
                versions_of_tag(&tags[0]),
                Some((Some("3.6.2".into()), "0.4.0".into()))
            );
        }
        for (p, tgz) in pushed.iter().zip(&tgzs) {
            let pulled = runtime.block_on(client.pull(&p.reference)).unwrap();
            assert_eq!(&pulled.bytes, tgz);
            assert_eq!(pulled.package_digest, p.package_digest);
            assert_eq!(pulled.manifest_digest, p.manifest_digest);
        }
        let unknown = Reference::parse(&registry.oci("kudo/nothing")).unwrap();
        assert!(matches!(
            runtime.block_on(client.tags(&unknown)),
            Err(OciError::NotFound { .. })
        ));
        assert!(matches!(
            runtime.block_on(client.pull(&repository.with_tag("9.9.9"))),
            Err(OciError::NotFound { .. })
        ));
    }

    #[test]
    fn sha256_is_lowercase_hex() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn a_pem_bundle_gives_each_certificate() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ca.pem");
        let one = "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----";
        std::fs::write(&path, format!("# comment\n{one}\n\n{one}\n")).unwrap();
        let certs = pem_certificates(&path).unwrap();
        assert_eq!(certs.len(), 2);
        assert_eq!(certs[0].data, one.as_bytes());
        std::fs::write(&path, "not pem").unwrap();
        assert!(matches!(
            pem_certificates(&path),
            Err(OciError::CaFile { .. })
        ));
    }

    #[test]
    fn a_package_s_metadata_comes_from_its_archive() {
        let dir = kudo_pkg::create_archive(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/zookeeper-v1beta1"),
        )
        .unwrap()
        .0;
        let meta = PackageMeta::read(&dir).unwrap();
        assert_eq!(meta.name, "zookeeper");
        let config: Value = serde_json::from_slice(&meta.config_json().unwrap()).unwrap();
        assert_eq!(config["name"], "zookeeper");
        assert_eq!(config["operatorVersion"], meta.operator_version.as_str());
        assert!(matches!(
            PackageMeta::read(b"plain text"),
            Err(OciError::NotAPackage { .. })
        ));
        // gzip's magic, then nothing gzip can read
        let not_a_package = [0x1f, 0x8b, 0x08, 0x00, 0xff, 0xff, 0xff];
        match PackageMeta::read(&not_a_package) {
            Err(OciError::NotAPackage { reason }) => {
                assert!(!reason.contains("package.tgz"), "{reason}")
            }
            other => panic!("{other:?}"),
        }
    }
}
