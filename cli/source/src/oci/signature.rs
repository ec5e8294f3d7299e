//! cosign signatures of packages in a registry: [`Registry::sign`] and [`Registry::verify`].
//!
//! A signature is where cosign keeps it: the image manifest tagged `sha256-<DIGEST>.sig` in the
//! package's repository, one layer per signature (media type
//! `application/vnd.dev.cosign.simplesigning.v1+json`, the payload's bytes; the signature in
//! the layer's `dev.cosignproject.cosign/signature` annotation). Verification reads them
//! through the `sigstore` crate's cosign client (`trusted_signature_layers`, then a
//! `PublicKeyVerifier` per key), as cosign does. Signing writes the payload and the signature
//! with the crate too; the manifest is written here because the crate's `push_signature`
//! replaces the tag's manifest, dropping signatures other keys made, where cosign appends a
//! layer: kudo appends, as cosign does.

use std::collections::BTreeMap;

use oci_client::manifest::{OCI_IMAGE_MEDIA_TYPE, OciDescriptor, OciImageManifest};
use sigstore::cosign::verification_constraint::{PublicKeyVerifier, VerificationConstraint};
use sigstore::cosign::{ClientBuilder, CosignCapabilities};
use sigstore::registry::{Auth, OciReference};

use super::artifact::package_layer;
use super::{OciError, Reference, Registry, sha256_hex};
use crate::trust::{PublicKey, SigningKey};

/// The media type of a signature layer (cosign's simple signing).
pub const SIGNATURE_MEDIA_TYPE: &str = "application/vnd.dev.cosign.simplesigning.v1+json";
/// The annotation holding a layer's signature.
pub const SIGNATURE_ANNOTATION: &str = "dev.cosignproject.cosign/signature";
/// The media type of the signature manifest's config (an empty JSON object, as sigstore-rs
/// writes it).
const CONFIG_MEDIA_TYPE: &str = "application/vnd.oci.image.config.v1+json";
const CONFIG: &[u8] = b"{}";

/// The most signatures a `.sig` manifest may hold for kudo to read it, and the largest payload:
/// a registry cannot make kudo read without bound (a payload is a few hundred bytes).
const MAX_SIGNATURES: usize = 100;
const MAX_PAYLOAD_BYTES: i64 = 64 * 1024;
/// How long reading the signatures may take, all requests together.
const READ_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// Which of cosign's formats a signature is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// cosign 3's default: a Sigstore bundle attached as an OCI 1.1 referrer
    /// ([`super::bundle`]).
    Bundle,
    /// cosign 2's: a simple-signing layer in the tag `sha256-HEX.sig`.
    Legacy,
}

impl Format {
    /// As output names it.
    pub fn as_str(self) -> &'static str {
        match self {
            Format::Bundle => "bundle",
            Format::Legacy => "legacy",
        }
    }
}

/// A package signed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signed {
    /// The package's reference, `oci://REGISTRY/PATH/NAME:TAG`.
    pub reference: Reference,
    /// The manifest digest signed, `sha256:HEX`.
    pub manifest_digest: String,
    /// The signature's reference (`...:sha256-HEX.sig`).
    pub signature: Reference,
    /// How many signatures the tag holds now.
    pub signatures: usize,
    /// The signing key's fingerprint.
    pub key: String,
}

/// The cosign `.sig` tag of a manifest digest.
pub fn signature_tag(manifest_digest: &str) -> String {
    format!("{}.sig", super::bundle::fallback_tag(manifest_digest))
}

/// The identity a payload names: `REGISTRY/PATH/NAME`, as cosign's `docker-reference`.
pub fn identity(reference: &Reference) -> String {
    format!("{}/{}", reference.registry, reference.repository)
}

impl Registry {
    /// Signs the package at `reference` (`oci://REGISTRY/PATH/NAME:TAG`) with `key`: the
    /// payload names the manifest's digest; the signature is added to the tag
    /// `sha256-<DIGEST>.sig` (a signature of the same payload by the same key is replaced). A
    /// reference that is not a kudo package is refused.
    pub async fn sign(&self, reference: &Reference, key: &SigningKey) -> Result<Signed, OciError> {
        let (image, auth, sent) = self.for_push(reference).await?;
        let fail = |e| self.error(reference, &sent, e);
        let (manifest, digest) = self
            .client
            .pull_manifest(&image, &auth)
            .await
            .map_err(fail)?;
        package_layer(&manifest).map_err(|found| OciError::NotKudo {
            reference: reference.to_string(),
            found,
        })?;
        let signature_ref = reference.with_tag(&signature_tag(&digest));
        let sig_image = signature_ref.image();
        let sig_fail = |e| self.error(&signature_ref, &sent, e);
        let payload = crate::trust::payload(&identity(reference), &digest);
        let signature = key
            .sign(&payload)
            .map_err(|e| OciError::Internal(e.to_string()))?;
        let existing = match self.client.pull_image_manifest(&sig_image, &auth).await {
            Ok((m, _)) => Some(m),
            Err(e) => match sig_fail(e) {
                OciError::NotFound { .. } => None,
                e => return Err(e),
            },
        };
        let payload_digest = format!("sha256:{}", sha256_hex(&payload));
        let config = OciDescriptor {
            media_type: CONFIG_MEDIA_TYPE.into(),
            digest: format!("sha256:{}", sha256_hex(CONFIG)),
            size: CONFIG.len() as i64,
            urls: None,
            artifact_type: None,
            annotations: None,
        };
        let mut manifest = existing.unwrap_or_else(|| OciImageManifest {
            schema_version: 2,
            media_type: Some(OCI_IMAGE_MEDIA_TYPE.into()),
            config: config.clone(),
            layers: Vec::new(),
            subject: None,
            artifact_type: None,
            annotations: None,
        });
        manifest.layers.retain(|l| {
            let by_this_key = l.digest == payload_digest
                && l.annotations
                    .as_ref()
                    .and_then(|a| a.get(SIGNATURE_ANNOTATION))
                    .is_some_and(|s| key.verifies(&payload, s));
            !by_this_key
        });
        manifest.layers.push(OciDescriptor {
            media_type: SIGNATURE_MEDIA_TYPE.into(),
            digest: payload_digest.clone(),
            size: payload.len() as i64,
            urls: None,
            artifact_type: None,
            annotations: Some(BTreeMap::from([(
                SIGNATURE_ANNOTATION.to_string(),
                signature,
            )])),
        });
        // The payload; the config when the manifest is new (an existing one's is there).
        let mut blobs = vec![(payload, payload_digest)];
        if manifest.config.digest == config.digest {
            blobs.push((CONFIG.to_vec(), config.digest));
        }
        let body = serde_json::to_vec(&manifest)
            .map_err(|e| OciError::Internal(format!("the signature manifest: {e}")))?;
        self.upload(&sig_image, blobs, body, &sig_fail).await?;
        Ok(Signed {
            reference: reference.clone(),
            manifest_digest: digest,
            signature: signature_ref,
            signatures: manifest.layers.len(),
            key: key.fingerprint.clone(),
        })
    }

    /// The tagged `reference` as oci-client takes it, with the credentials sent (and whose),
    /// authorized to push: the start of both signing formats.
    pub(super) async fn for_push(
        &self,
        reference: &Reference,
    ) -> Result<
        (
            oci_client::Reference,
            oci_client::secrets::RegistryAuth,
            Option<(String, std::path::PathBuf)>,
        ),
        OciError,
    > {
        reference.require(true)?;
        let image = reference.image();
        let (auth, sent) = self.auth(&reference.registry)?;
        self.client
            .auth(&image, &auth, oci_client::RegistryOperation::Push)
            .await
            .map_err(|e| self.error(reference, &sent, e))?;
        Ok((image, auth, sent))
    }

    /// The key among `keys` that signed the manifest `manifest_digest` of `reference`'s
    /// repository, and in which of cosign's formats: its Sigstore bundles first (cosign 3,
    /// [`super::bundle`]), then its `.sig` tag (cosign 2). `Ok(Err(why))` when none did (no
    /// signature, or none by these keys, in either); `Err` when the registry could not be
    /// asked, or sent more than kudo reads.
    pub async fn verify<'k>(
        &self,
        reference: &Reference,
        manifest_digest: &str,
        keys: &'k [PublicKey],
    ) -> Result<Result<(&'k PublicKey, Format), String>, OciError> {
        let timed_out = || OciError::Registry {
            reference: reference.to_string(),
            answer: format!(
                "its signatures were not read within {} s",
                READ_TIMEOUT.as_secs()
            ),
        };
        let bundles = tokio::time::timeout(
            READ_TIMEOUT,
            self.verify_bundles(reference, manifest_digest, keys),
        )
        .await
        .map_err(|_| timed_out())??;
        let in_bundles = match bundles {
            Some(Ok(k)) => return Ok(Ok((k, Format::Bundle))),
            Some(Err(why)) => why,
            None => "no Sigstore bundle among its referrers".to_string(),
        };
        let legacy = self.verify_legacy(reference, manifest_digest, keys).await?;
        Ok(legacy
            .map(|k| (k, Format::Legacy))
            .map_err(|why| format!("{in_bundles}; {why}")))
    }

    /// [`Registry::verify`] of cosign 2's `.sig` tag alone.
    async fn verify_legacy<'k>(
        &self,
        reference: &Reference,
        manifest_digest: &str,
        keys: &'k [PublicKey],
    ) -> Result<Result<&'k PublicKey, String>, OciError> {
        let (auth, sent) = self.auth(&reference.registry)?;
        // The signature manifest first, with kudo's client (its timeouts): none is a missing
        // signature; one larger than kudo reads is refused before the cosign client (which
        // reads every layer, with no timeout of its own) is asked.
        let signature_ref = reference.with_tag(&signature_tag(manifest_digest));
        let no_signature = || {
            format!(
                "no cosign signature for {manifest_digest} (no tag {} in {}, or none naming this digest)",
                signature_tag(manifest_digest),
                reference.untagged()
            )
        };
        match self
            .client
            .pull_image_manifest(&signature_ref.image(), &auth)
            .await
        {
            Ok((m, _)) => {
                let too_large = m.layers.len() > MAX_SIGNATURES
                    || m.layers
                        .iter()
                        .any(|l| l.size < 0 || l.size > MAX_PAYLOAD_BYTES);
                if too_large {
                    return Err(OciError::Registry {
                        reference: signature_ref.to_string(),
                        answer: format!(
                            "its signature manifest holds {} layers; kudo reads at most {MAX_SIGNATURES} signatures of at most {MAX_PAYLOAD_BYTES} bytes each",
                            m.layers.len()
                        ),
                    });
                }
            }
            Err(e) => match self.error(&signature_ref, &sent, e) {
                OciError::NotFound { .. } => return Ok(Err(no_signature())),
                e => return Err(e),
            },
        }
        let auth = match auth {
            oci_client::secrets::RegistryAuth::Basic(u, p) => Auth::Basic(u, p),
            _ => Auth::Anonymous,
        };
        let mut client = ClientBuilder::default()
            .with_oci_client_config(self.sigstore_config())
            .build()
            .map_err(|e| OciError::Internal(format!("the cosign client: {e}")))?;
        let image = OciReference::with_digest(
            reference.registry.clone(),
            reference.repository.clone(),
            manifest_digest.to_string(),
        );
        let read =
            tokio::time::timeout(READ_TIMEOUT, client.trusted_signature_layers(&auth, &image))
                .await
                .map_err(|_| OciError::Registry {
                    reference: reference.to_string(),
                    answer: format!(
                        "its signatures were not read within {} s",
                        READ_TIMEOUT.as_secs()
                    ),
                })?;
        let mut layers = read.map_err(|e| OciError::Registry {
            reference: reference.to_string(),
            answer: format!("its signatures cannot be read: {e}"),
        })?;
        // A signature names the package it signs: one of another package (another name) by
        // the same key is not this one's, whatever registry or mirror serves either.
        let name = crate::trust::identity_name(&reference.repository);
        layers.retain(|l| {
            crate::trust::identity_name(&l.simple_signing.critical.identity.docker_reference)
                == name
        });
        if layers.is_empty() {
            return Ok(Err(no_signature()));
        }
        for key in keys {
            let Ok(verifier) = PublicKeyVerifier::try_from(&key.pem) else {
                continue;
            };
            let constraints: Vec<Box<dyn VerificationConstraint>> = vec![Box::new(verifier)];
            if sigstore::cosign::verify_constraints(&layers, constraints.iter()).is_ok() {
                return Ok(Ok(key));
            }
        }
        Ok(Err(format!(
            "{} signature(s) for {manifest_digest}, none made by these keys",
            layers.len()
        )))
    }

    /// The sigstore client's configuration: this registry client's protocol and roots.
    fn sigstore_config(&self) -> sigstore::registry::ClientConfig {
        use sigstore::registry::{Certificate, CertificateEncoding, ClientProtocol};
        sigstore::registry::ClientConfig {
            protocol: if self.plain_http {
                ClientProtocol::Http
            } else {
                ClientProtocol::Https
            },
            extra_root_certificates: self
                .extra_roots
                .iter()
                .map(|c| Certificate {
                    encoding: CertificateEncoding::Pem,
                    data: c.data.clone(),
                })
                .collect(),
            ..Default::default()
        }
    }
}
