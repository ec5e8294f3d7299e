//! kudo packages in OCI registries: push a package's `.tgz`, list a repository's tags, pull a
//! tag back, with the registry's credentials. The protocol is oci-client's (the ORAS
//! project); this module decides what a kudo package looks like in a registry
//! (`artifact`: a config of `application/vnd.kudo.operator.config.v1+json` and one layer of
//! `application/vnd.kudo.operator.package.v1.tar+gzip`, the `.tgz` byte for byte, whose sha256
//! is the package's digest, the one a KUDO repository's `index.yaml` lists). Its repository is
//! `PATH/NAME` below the push target, its tag the package's versions ([`tag_for`]).
//!
//! - [`Reference`], `oci://REGISTRY/PATH/NAME[:TAG]`.
//! - [`tag_for`] and [`versions_of_tag`], a package's versions as a tag, and back.
//! - [`Registry`], the client, with each registry's credentials ([`credentials`]) and
//!   `--plain-http`; [`Registry::push`], [`Registry::tags`], [`Registry::pull`],
//!   [`Registry::login`].
//! - Air-gapped installs: [`airgap::Bundler`] copies packages, their images and their
//!   signatures into one OCI image layout archive ([`layout`]), [`Registry::relocate`] pushes
//!   it to a mirror with its relocation map, read back by [`Registry::read_relocation`]
//!   ([`relocation`]).
//! - [`OciError`], what went wrong, naming the reference and the registry's answer (never a
//!   password).
//!
//! TLS goes through rustls with ring (see [`install_crypto_provider`]) and the system's
//! certificate store; `KUDO_REGISTRY_CA_FILE` names a PEM file of further roots (a registry
//! with a private CA).

pub mod airgap;
mod artifact;
pub mod bundle;
pub mod credentials;
mod error;
pub mod layout;
mod reference;
pub mod relocation;
pub mod signature;
mod tag;

use std::path::PathBuf;
use std::pin::Pin;
use std::task::{Context, Poll};

use oci_client::client::{Certificate, CertificateEncoding, ClientConfig, ClientProtocol};
use oci_client::errors::OciDistributionError;
use oci_client::manifest::OCI_IMAGE_MEDIA_TYPE;
use oci_client::secrets::RegistryAuth;
use oci_client::{Client, RegistryOperation};

use artifact::{Artifact, MAX_PACKAGE_BYTES, package_layer};
pub use credentials::Credentials;
pub use error::OciError;
pub use reference::{Reference, ReferenceProblem};
pub use tag::{TagProblem, tag_for};
// The package resolver (`kudo install oci://...`) reads the versions of a repository's tags;
// until it calls this, the tests do.
#[allow(unused_imports)]
pub use tag::versions_of_tag;

/// The environment variable naming a PEM file of further root certificates.
pub const CA_FILE_ENV: &str = "KUDO_REGISTRY_CA_FILE";

/// The repository `kudo registry login` asks for tags to check credentials, when given none.
const LOGIN_PROBE: &str = "kudo-login-check";
/// Tags asked per page; pages asked at most.
const TAG_PAGE: usize = 1000;
const MAX_TAG_PAGES: usize = 100;
/// How long connecting to a registry may take.
const CONNECT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(15);

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
    /// `KUDO_REGISTRY_CA_FILE`'s certificates (the cosign client is given them too).
    extra_roots: Vec<Certificate>,
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
        let extra_roots = config.extra_root_certificates.clone();
        let client = Client::try_from(config)
            .map_err(|e| OciError::Internal(format!("the HTTP client cannot be made: {e}")))?;
        Ok(Registry {
            client,
            plain_http,
            extra_roots,
        })
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
        let artifact = Artifact::of(target, tgz)?;
        let manifest_digest = artifact.manifest_digest();
        let Artifact {
            reference,
            layer,
            config,
            manifest,
            body,
        } = artifact;
        let image = reference.image();
        let (auth, sent) = self.auth(&reference.registry)?;
        let fail = |e| self.error(&reference, &sent, e);
        self.client
            .auth(&image, &auth, RegistryOperation::Push)
            .await
            .map_err(fail)?;
        let blobs = vec![
            (layer.data, manifest.layers[0].digest.clone()),
            (config.data, manifest.config.digest.clone()),
        ];
        self.upload(&image, blobs, body, &fail).await?;
        Ok(Pushed {
            reference,
            manifest_digest,
            package_digest: sha256_hex(tgz),
        })
    }

    /// Uploads an image manifest (`body`) after the blobs it names that the registry lacks
    /// (`(bytes, digest)`); `fail` names the reference in an error.
    async fn upload(
        &self,
        image: &oci_client::Reference,
        blobs: Vec<(impl Into<bytes::Bytes>, String)>,
        body: Vec<u8>,
        fail: &impl Fn(OciDistributionError) -> OciError,
    ) -> Result<(), OciError> {
        for (data, digest) in blobs {
            if !self
                .client
                .blob_exists(image, &digest)
                .await
                .map_err(fail)?
            {
                self.client
                    .push_blob(image, data, &digest)
                    .await
                    .map_err(fail)?;
            }
        }
        let content_type = OCI_IMAGE_MEDIA_TYPE
            .parse()
            .map_err(|e| OciError::Internal(format!("{e}")))?;
        self.client
            .push_manifest_raw(image, body, content_type)
            .await
            .map_err(fail)?;
        Ok(())
    }

    /// The tags of a repository (`oci://REGISTRY/PATH/NAME`; a tag in it is ignored), as the
    /// registry lists them (not sorted). A repository the registry does not know is
    /// [`OciError::NotFound`].
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
    /// a kudo package's (its config's and one layer's media types are kudo's), and the
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
        let layer = package_layer(&manifest).map_err(|found| OciError::NotKudo {
            reference: reference.to_string(),
            found,
        })?;
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

    /// The digest of the manifest `reference` (`oci://REGISTRY/PATH/NAME:TAG`) names.
    pub async fn manifest_digest(&self, reference: &Reference) -> Result<String, OciError> {
        reference.require(true)?;
        let image = reference.image();
        let (auth, sent) = self.auth(&reference.registry)?;
        self.client
            .fetch_manifest_digest(&image, &auth)
            .await
            .map_err(|e| self.error(reference, &sent, e))
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
        error::from_client(reference, sent, self.plain_http, e)
    }
}

/// The sha256 of `bytes`, lowercase hex: a package's digest, as an index gives it.
pub use kudo_pkg::repo::sha256_hex;

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

    /// The calls the package resolver makes, against a real registry: push, tags (page by
    /// page), the versions of a tag, pull.
    #[test]
    fn push_tags_and_pull_against_a_registry() {
        let Some(registry) = kudo_testkit::TestRegistry::start(Default::default()) else {
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
            let dir = kudo_testkit::example(example);
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
}
