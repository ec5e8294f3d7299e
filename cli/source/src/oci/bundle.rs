//! cosign v3's signature format: a Sigstore bundle attached to the signed manifest as an OCI
//! 1.1 referrer. [`Registry::sign_bundle`] writes it, [`Registry::verify_bundles`] reads it;
//! [`Registry::verify`](super::Registry::verify) tries these first, then cosign's older `.sig`
//! tag ([`super::signature`]).
//!
//! What cosign 3 writes for `cosign sign --key` (read in its source: `signDigestBundle`,
//! `WriteAttestationNewBundleFormat`, `WriteReferrer`), and so what kudo writes:
//!
//! - an in-toto Statement v1 whose one subject is the manifest digest (`{"sha256": HEX}`),
//!   predicate type `https://sigstore.dev/cosign/sign/v1`, predicate `{}`;
//! - in a DSSE envelope (payload type `application/vnd.in-toto+json`), signed over DSSE's
//!   pre-authentication encoding ([`pae`]) with the key;
//! - in a bundle v0.3 (`application/vnd.dev.sigstore.bundle.v0.3+json`), its verification
//!   material the key's hint (base64 of the sha256 of the public key's DER), no transparency
//!   log entry; written with sigstore/protobuf-specs' own types (`sigstore_protobuf_specs`),
//!   so the JSON is protobuf's JSON mapping, as cosign's `protojson`;
//! - as the one layer of an image manifest whose `artifactType` is the bundle's media type,
//!   config the empty descriptor, `subject` the signed manifest, annotations
//!   `dev.sigstore.bundle.content: dsse-envelope` and `dev.sigstore.bundle.predicateType`;
//! - pushed by its digest. A registry that serves the referrers API lists it; one that does
//!   not (Debian's docker-registry, distribution 2.8) gets the referrers tag schema's
//!   fallback: the image index tagged `sha256-HEX` lists it, as go-containerregistry (cosign's
//!   registry client) does. kudo asks the referrers API after the push, and writes the
//!   fallback tag only when the API does not list the new manifest.
//!
//! Reading: the referrers of the digest (the API, else the fallback tag: `oci-client`'s
//! `pull_referrers`), those of the bundle's artifact type, at most [`MAX_BUNDLES`]; each
//! manifest and bundle read within [`MAX_BUNDLE_BYTES`] and checked against its digest; a
//! bundle counts when its envelope's one signature verifies with a key given and its statement
//! names this digest with cosign's sign predicate. Transparency log entries are not checked
//! (no Rekor is reached): verification says so in cosign's own words ([`TLOG_NOT_CHECKED`]),
//! as `cosign verify --insecure-ignore-tlog` does.

use std::collections::BTreeMap;

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use futures::StreamExt;
use oci_client::manifest::{OCI_IMAGE_MEDIA_TYPE, OciDescriptor, OciImageIndex, OciImageManifest};
use serde::Deserialize;
use sigstore_protobuf_specs::dev::sigstore::bundle::v1::{
    Bundle, VerificationMaterial, bundle, verification_material,
};
use sigstore_protobuf_specs::dev::sigstore::common::v1::PublicKeyIdentifier;
use sigstore_protobuf_specs::io::intoto::{Envelope, Signature};

use super::artifact::package_layer;
use super::{OciError, Reference, Registry, sha256_hex};
use crate::trust::{PublicKey, SigningKey};

/// The bundle's media type, and the referrer manifest's artifact type.
pub const BUNDLE_MEDIA_TYPE: &str = "application/vnd.dev.sigstore.bundle.v0.3+json";
/// The predicate of cosign's image signatures.
pub const SIGN_PREDICATE: &str = "https://sigstore.dev/cosign/sign/v1";
/// What cosign prints when the transparency log is not checked (`--insecure-ignore-tlog`).
pub const TLOG_NOT_CHECKED: &str = "Skipping tlog verification is an insecure practice that lacks transparency and auditability verification for the signature.";
/// The most bundle referrers read for one digest: a registry cannot make kudo read without
/// bound (the same bound as the `.sig` tag's layers).
pub const MAX_BUNDLES: usize = 100;
/// The largest referrer manifest and bundle read (a key-based bundle is about 1 KiB).
pub const MAX_BUNDLE_BYTES: usize = 64 * 1024;

const INTOTO_PAYLOAD_TYPE: &str = "application/vnd.in-toto+json";
const STATEMENT_TYPE: &str = "https://in-toto.io/Statement/v1";
const EMPTY_MEDIA_TYPE: &str = "application/vnd.oci.empty.v1+json";
const EMPTY: &[u8] = b"{}";
const INDEX_MEDIA_TYPE: &str = "application/vnd.oci.image.index.v1+json";
const CONTENT_ANNOTATION: &str = "dev.sigstore.bundle.content";
const PREDICATE_ANNOTATION: &str = "dev.sigstore.bundle.predicateType";
const CREATED_ANNOTATION: &str = "org.opencontainers.image.created";

/// How a bundle was attached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Attached {
    /// The registry lists it through the referrers API.
    ReferrersApi,
    /// The registry lacks the API: the fallback tag `sha256-HEX` lists it.
    FallbackTag,
}

impl Attached {
    /// As `kudo package sign` prints it.
    pub fn describe(self, subject_digest: &str) -> String {
        match self {
            Attached::ReferrersApi => "the referrers API".into(),
            Attached::FallbackTag => format!(
                "the referrers tag schema's fallback tag {} (the registry lacks the referrers API)",
                fallback_tag(subject_digest)
            ),
        }
    }
}

/// A package signed with a bundle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BundleSigned {
    /// The manifest digest signed.
    pub manifest_digest: String,
    /// The referrer manifest's digest.
    pub referrer_digest: String,
    /// How it was attached.
    pub attached: Attached,
}

/// The referrers tag schema's tag for `digest`: `sha256-HEX`.
pub fn fallback_tag(digest: &str) -> String {
    digest.replace(':', "-")
}

/// DSSE's pre-authentication encoding: what the envelope's signature signs.
pub fn pae(payload_type: &str, payload: &[u8]) -> Vec<u8> {
    let mut out = format!(
        "DSSEv1 {} {payload_type} {} ",
        payload_type.len(),
        payload.len()
    )
    .into_bytes();
    out.extend_from_slice(payload);
    out
}

/// cosign's statement for an image signature over manifest `digest` (`sha256:HEX`).
pub fn statement(digest: &str) -> Result<Vec<u8>, String> {
    let hex = digest
        .strip_prefix("sha256:")
        .ok_or_else(|| format!("{digest}: not a sha256 digest"))?;
    let s = serde_json::json!({
        "_type": STATEMENT_TYPE,
        "subject": [{"digest": {"sha256": hex}}],
        "predicateType": SIGN_PREDICATE,
        "predicate": {},
    });
    serde_json::to_vec(&s).map_err(|e| e.to_string())
}

/// The key hint of a bundle's verification material: base64 of the sha256 of the public
/// key's DER, as cosign writes it; from a [`crate::trust::fingerprint`] (`sha256:HEX`).
pub fn key_hint(fingerprint: &str) -> String {
    let hex = fingerprint.strip_prefix("sha256:").unwrap_or(fingerprint);
    let bytes: Vec<u8> = (0..hex.len() / 2)
        .filter_map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).ok())
        .collect();
    BASE64.encode(bytes)
}

/// The bundle (JSON) that signs manifest `digest` with `key`.
pub fn make(digest: &str, key: &SigningKey) -> Result<Vec<u8>, String> {
    let payload = statement(digest)?;
    let sig = key
        .sign(&pae(INTOTO_PAYLOAD_TYPE, &payload))
        .map_err(|e| e.to_string())?;
    let sig = BASE64.decode(sig).map_err(|e| e.to_string())?;
    let b = Bundle {
        media_type: BUNDLE_MEDIA_TYPE.into(),
        verification_material: Some(VerificationMaterial {
            content: Some(verification_material::Content::PublicKey(
                PublicKeyIdentifier {
                    hint: key_hint(&key.fingerprint),
                },
            )),
            tlog_entries: Vec::new(),
            timestamp_verification_data: None,
        }),
        content: Some(bundle::Content::DsseEnvelope(Envelope {
            payload,
            payload_type: INTOTO_PAYLOAD_TYPE.into(),
            signatures: vec![Signature {
                sig,
                keyid: String::new(),
            }],
        })),
    };
    serde_json::to_vec(&b).map_err(|e| format!("the bundle: {e}"))
}

/// A bundle read: the key among `keys` whose signature its envelope carries, and the
/// statement it signs. `Err` says why it does not count.
pub fn open<'k>(bytes: &[u8], keys: &'k [PublicKey]) -> Result<(&'k PublicKey, Vec<u8>), String> {
    let b: Bundle =
        serde_json::from_slice(bytes).map_err(|e| format!("not a Sigstore bundle: {e}"))?;
    if !b
        .media_type
        .starts_with("application/vnd.dev.sigstore.bundle")
    {
        return Err(format!(
            "media type {}, not a Sigstore bundle",
            b.media_type
        ));
    }
    let envelope = match b.content {
        Some(bundle::Content::DsseEnvelope(e)) => e,
        Some(bundle::Content::MessageSignature(_)) => {
            return Err("a message signature (a signed blob), not a DSSE envelope".into());
        }
        None => return Err("no content".into()),
    };
    if envelope.payload_type != INTOTO_PAYLOAD_TYPE {
        return Err(format!(
            "its envelope's payload is {}, not an in-toto statement",
            envelope.payload_type
        ));
    }
    // DSSE in a bundle carries exactly one signature.
    let [signature] = envelope.signatures.as_slice() else {
        return Err(format!(
            "its envelope holds {} signatures; a bundle's holds one",
            envelope.signatures.len()
        ));
    };
    let signed = pae(&envelope.payload_type, &envelope.payload);
    let sig = BASE64.encode(&signature.sig);
    let key = keys
        .iter()
        .find(|k| k.verifies(&signed, &sig))
        .ok_or_else(|| "not signed by these keys".to_string())?;
    Ok((key, envelope.payload))
}

#[derive(Deserialize)]
struct Statement {
    #[serde(rename = "_type")]
    type_: String,
    #[serde(default)]
    subject: Vec<Subject>,
    #[serde(rename = "predicateType")]
    predicate_type: String,
}

#[derive(Deserialize)]
struct Subject {
    #[serde(default)]
    digest: BTreeMap<String, String>,
}

/// Whether `statement` is cosign's signature of manifest `digest`; `Err` says what it is.
pub fn names(statement: &[u8], digest: &str) -> Result<(), String> {
    let s: Statement = serde_json::from_slice(statement)
        .map_err(|e| format!("its statement does not read: {e}"))?;
    if !s.type_.starts_with("https://in-toto.io/Statement/") {
        return Err(format!("its statement's type is {}", s.type_));
    }
    if s.predicate_type != SIGN_PREDICATE {
        return Err(format!(
            "an attestation ({}), not cosign's signature ({SIGN_PREDICATE})",
            s.predicate_type
        ));
    }
    let hex = digest.strip_prefix("sha256:").unwrap_or(digest);
    if !s
        .subject
        .iter()
        .any(|sub| sub.digest.get("sha256").is_some_and(|d| d == hex))
    {
        return Err(format!("its statement does not name {digest}"));
    }
    Ok(())
}

/// The referrer manifest that attaches `bundle` to `subject`.
fn referrer_manifest(subject: OciDescriptor, bundle: &[u8], created: String) -> OciImageManifest {
    OciImageManifest {
        schema_version: 2,
        media_type: Some(OCI_IMAGE_MEDIA_TYPE.into()),
        config: OciDescriptor {
            media_type: EMPTY_MEDIA_TYPE.into(),
            digest: format!("sha256:{}", sha256_hex(EMPTY)),
            size: EMPTY.len() as i64,
            urls: None,
            artifact_type: None,
            annotations: None,
        },
        layers: vec![OciDescriptor {
            media_type: BUNDLE_MEDIA_TYPE.into(),
            digest: format!("sha256:{}", sha256_hex(bundle)),
            size: bundle.len() as i64,
            urls: None,
            artifact_type: None,
            annotations: None,
        }],
        subject: Some(subject),
        artifact_type: Some(BUNDLE_MEDIA_TYPE.into()),
        annotations: Some(BTreeMap::from([
            (CREATED_ANNOTATION.to_string(), created),
            (CONTENT_ANNOTATION.to_string(), "dsse-envelope".to_string()),
            (PREDICATE_ANNOTATION.to_string(), SIGN_PREDICATE.to_string()),
        ])),
    }
}

/// What the bundles of a digest said: the key that signed, else why none counted.
pub type Verdict<'k> = Result<&'k PublicKey, String>;

impl Registry {
    /// Signs the package at `reference` (`oci://REGISTRY/PATH/NAME:TAG`) with `key` in
    /// cosign 3's format: a bundle attached as a referrer of its manifest (the module's doc).
    /// A reference that is not a kudo package is refused.
    pub async fn sign_bundle(
        &self,
        reference: &Reference,
        key: &SigningKey,
    ) -> Result<BundleSigned, OciError> {
        let (image, auth, sent) = self.for_push(reference).await?;
        let fail = |e| self.error(reference, &sent, e);
        let (raw, digest) = self
            .client
            .pull_manifest_raw(&image, &auth, &[OCI_IMAGE_MEDIA_TYPE])
            .await
            .map_err(fail)?;
        let manifest: OciImageManifest =
            serde_json::from_slice(&raw).map_err(|e| OciError::Registry {
                reference: reference.to_string(),
                answer: format!("its manifest does not read: {e}"),
            })?;
        package_layer(&oci_client::manifest::OciManifest::Image(manifest.clone())).map_err(
            |found| OciError::NotKudo {
                reference: reference.to_string(),
                found,
            },
        )?;
        let bundle = make(&digest, key).map_err(OciError::Internal)?;
        let subject = OciDescriptor {
            media_type: manifest
                .media_type
                .clone()
                .unwrap_or_else(|| OCI_IMAGE_MEDIA_TYPE.into()),
            digest: digest.clone(),
            size: raw.len() as i64,
            urls: None,
            artifact_type: None,
            annotations: None,
        };
        let created = created_now();
        let referrer = referrer_manifest(subject, &bundle, created);
        let body = serde_json::to_vec(&referrer)
            .map_err(|e| OciError::Internal(format!("the referrer manifest: {e}")))?;
        let referrer_digest = format!("sha256:{}", sha256_hex(&body));
        let at = |d: &str| {
            oci_client::Reference::with_digest(
                reference.registry.clone(),
                reference.repository.clone(),
                d.to_string(),
            )
        };
        let blobs = vec![
            (bundle.clone(), referrer.layers[0].digest.clone()),
            (EMPTY.to_vec(), referrer.config.digest.clone()),
        ];
        self.upload(&at(&referrer_digest), blobs, body.clone(), &fail)
            .await?;
        // Listed by the referrers API: attached. Else the fallback tag lists it.
        let listed = self
            .client
            .pull_referrers(&at(&digest), Some(BUNDLE_MEDIA_TYPE))
            .await
            .map_err(fail)?;
        let attached = if listed.manifests.iter().any(|m| m.digest == referrer_digest) {
            Attached::ReferrersApi
        } else {
            let descriptor = oci_client::manifest::ImageIndexEntry {
                media_type: OCI_IMAGE_MEDIA_TYPE.into(),
                digest: referrer_digest.clone(),
                size: body.len() as i64,
                platform: None,
                annotations: referrer.annotations.clone(),
                artifact_type: Some(BUNDLE_MEDIA_TYPE.into()),
            };
            self.add_to_fallback(reference, &digest, descriptor, &auth, &fail)
                .await?;
            Attached::FallbackTag
        };
        Ok(BundleSigned {
            manifest_digest: digest,
            referrer_digest,
            attached,
        })
    }

    /// Adds `entry` to the referrers tag schema's index of `digest` (the tag `sha256-HEX` in
    /// `reference`'s repository), made when there is none.
    pub(super) async fn add_to_fallback(
        &self,
        reference: &Reference,
        digest: &str,
        entry: oci_client::manifest::ImageIndexEntry,
        auth: &oci_client::secrets::RegistryAuth,
        fail: &impl Fn(oci_client::errors::OciDistributionError) -> OciError,
    ) -> Result<(), OciError> {
        let tag_ref = reference.with_tag(&fallback_tag(digest));
        let image = tag_ref.image();
        let mut index = match self
            .client
            .pull_manifest_raw(&image, auth, &[INDEX_MEDIA_TYPE])
            .await
        {
            Ok((raw, _)) => {
                serde_json::from_slice::<OciImageIndex>(&raw).map_err(|e| OciError::Registry {
                    reference: tag_ref.to_string(),
                    answer: format!("the referrers fallback tag is not an image index: {e}"),
                })?
            }
            Err(e) => match fail(e) {
                OciError::NotFound { .. } => OciImageIndex {
                    schema_version: 2,
                    media_type: Some(INDEX_MEDIA_TYPE.into()),
                    manifests: Vec::new(),
                    artifact_type: None,
                    annotations: None,
                },
                e => return Err(e),
            },
        };
        index.manifests.retain(|m| m.digest != entry.digest);
        index.manifests.push(entry);
        let body = serde_json::to_vec(&index)
            .map_err(|e| OciError::Internal(format!("the referrers index: {e}")))?;
        let content_type = INDEX_MEDIA_TYPE
            .parse()
            .map_err(|e| OciError::Internal(format!("{e}")))?;
        self.client
            .push_manifest_raw(&image, body, content_type)
            .await
            .map_err(fail)?;
        Ok(())
    }

    /// The bundles attached to manifest `digest` of `reference`'s repository, and what they
    /// say: `Ok(None)` when there are none; `Ok(Some(verdict))` otherwise. More than
    /// [`MAX_BUNDLES`], or one larger than [`MAX_BUNDLE_BYTES`], is an error naming it.
    pub async fn verify_bundles<'k>(
        &self,
        reference: &Reference,
        digest: &str,
        keys: &'k [PublicKey],
    ) -> Result<Option<Verdict<'k>>, OciError> {
        let (auth, sent) = self.auth(&reference.registry)?;
        let fail = |e| self.error(reference, &sent, e);
        let at = |d: &str| {
            oci_client::Reference::with_digest(
                reference.registry.clone(),
                reference.repository.clone(),
                d.to_string(),
            )
        };
        self.client
            .auth(&at(digest), &auth, oci_client::RegistryOperation::Pull)
            .await
            .map_err(fail)?;
        let index = self
            .client
            .pull_referrers(&at(digest), Some(BUNDLE_MEDIA_TYPE))
            .await
            .map_err(fail)?;
        let bundles: Vec<_> = index
            .manifests
            .iter()
            .filter(|m| m.artifact_type.as_deref() == Some(BUNDLE_MEDIA_TYPE))
            .collect();
        if bundles.is_empty() {
            return Ok(None);
        }
        if bundles.len() > MAX_BUNDLES {
            return Err(OciError::Registry {
                reference: reference.to_string(),
                answer: format!(
                    "{} Sigstore bundles are attached to {digest}; kudo reads at most {MAX_BUNDLES}",
                    bundles.len()
                ),
            });
        }
        let mut why = Vec::new();
        for entry in bundles {
            let bytes = match self.read_bundle(reference, &at(&entry.digest), &auth).await {
                Ok(b) => b,
                Err(e) => {
                    why.push(format!("{}: {e}", entry.digest));
                    continue;
                }
            };
            match open(&bytes, keys).and_then(|(k, s)| names(&s, digest).map(|()| k)) {
                Ok(k) => return Ok(Some(Ok(k))),
                Err(e) => why.push(format!("{}: {e}", entry.digest)),
            }
        }
        Ok(Some(Err(format!(
            "{} Sigstore bundle(s) attached to {digest}, none valid by these keys ({})",
            why.len(),
            why.join("; ")
        ))))
    }

    /// The bundle of the referrer manifest `image`, each read within [`MAX_BUNDLE_BYTES`] and
    /// checked against its digest.
    async fn read_bundle(
        &self,
        reference: &Reference,
        image: &oci_client::Reference,
        auth: &oci_client::secrets::RegistryAuth,
    ) -> Result<Vec<u8>, String> {
        let (raw, _) = self
            .client
            .pull_manifest_raw(image, auth, &[OCI_IMAGE_MEDIA_TYPE])
            .await
            .map_err(|e| e.to_string())?;
        if raw.len() > MAX_BUNDLE_BYTES {
            return Err(format!(
                "its manifest is {} bytes; kudo reads at most {MAX_BUNDLE_BYTES}",
                raw.len()
            ));
        }
        let want = image.digest().unwrap_or_default();
        if format!("sha256:{}", sha256_hex(&raw)) != want {
            return Err("its manifest does not match its digest".into());
        }
        let m: OciImageManifest =
            serde_json::from_slice(&raw).map_err(|e| format!("its manifest: {e}"))?;
        let layer = m
            .layers
            .iter()
            .find(|l| {
                l.media_type
                    .starts_with("application/vnd.dev.sigstore.bundle")
            })
            .ok_or("its manifest holds no bundle layer")?;
        if layer.size < 0 || layer.size as usize > MAX_BUNDLE_BYTES {
            return Err(format!(
                "its bundle is {} bytes; kudo reads at most {MAX_BUNDLE_BYTES}",
                layer.size
            ));
        }
        let mut stream = self
            .client
            .pull_blob_stream(image, layer)
            .await
            .map_err(|e| e.to_string())?
            .stream;
        let mut bytes = Vec::new();
        while let Some(chunk) = stream.next().await {
            // oci-client checks the digest as the stream ends.
            let chunk = chunk.map_err(|e| {
                format!("its bundle does not match its digest, or could not be read: {e}")
            })?;
            bytes.extend_from_slice(&chunk);
            if bytes.len() > MAX_BUNDLE_BYTES {
                return Err(format!(
                    "{reference}: sent more than {MAX_BUNDLE_BYTES} bytes for a bundle"
                ));
            }
        }
        if format!("sha256:{}", sha256_hex(&bytes)) != layer.digest {
            return Err("its bundle does not match its digest".into());
        }
        Ok(bytes)
    }
}

/// Now, RFC 3339 in UTC to the second, as cosign's `created` annotation.
fn created_now() -> String {
    jiff::Timestamp::now()
        .round(jiff::Unit::Second)
        .map(|t| t.to_string())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// cosign's own bundle (tests/fixtures/signing/README.md says where from): its envelope's
    /// signature verifies with its certificate's key through kudo's reader (the same PAE and
    /// signature check as kudo's bundles); the statement is an attestation, not a signature,
    /// so it does not count as one; a payload changed by one byte does not verify.
    #[test]
    fn a_bundle_cosign_wrote_verifies_with_its_certificate_s_key() {
        let path = kudo_testkit::fixture("signing/cosign-oci-attestation.sigstore.json");
        let text = std::fs::read(&path).unwrap();
        let json: serde_json::Value = serde_json::from_slice(&text).unwrap();
        let cert = BASE64
            .decode(
                json["verificationMaterial"]["certificate"]["rawBytes"]
                    .as_str()
                    .unwrap(),
            )
            .unwrap();
        // The certificate's SubjectPublicKeyInfo: a P-256 key's is 91 bytes, starting with
        // the SEQUENCE and the ecPublicKey / prime256v1 identifiers.
        let prefix = [
            0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01, 0x06,
            0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07,
        ];
        let at = cert
            .windows(prefix.len())
            .position(|w| w == prefix)
            .expect("a P-256 key in the certificate");
        let spki = &cert[at..at + 91];
        let dir = tempfile::tempdir().unwrap();
        let pem_file = dir.path().join("cert.pub");
        std::fs::write(&pem_file, pem::encode(&pem::Pem::new("PUBLIC KEY", spki))).unwrap();
        let keys = [PublicKey::read(&pem_file).unwrap()];
        let (key, statement) = open(&text, &keys).unwrap();
        assert_eq!(key.fingerprint, keys[0].fingerprint);
        let digest = "sha256:732112270d7e59418a8c080b134b24cabd67d250d0d0147a97ed95ba5c280aa4";
        let why = names(&statement, digest).unwrap_err();
        assert!(
            why.contains("an attestation (https://cosign.sigstore.dev/attestation/v1)"),
            "{why}"
        );
        // one byte of the payload changed
        let mut changed = json.clone();
        let payload = BASE64
            .decode(changed["dsseEnvelope"]["payload"].as_str().unwrap())
            .unwrap();
        let payload = String::from_utf8(payload)
            .unwrap()
            .replacen("7321", "7322", 1);
        changed["dsseEnvelope"]["payload"] = BASE64.encode(payload).into();
        let changed = serde_json::to_vec(&changed).unwrap();
        assert_eq!(
            open(&changed, &keys).err(),
            Some("not signed by these keys".to_string())
        );
    }

    /// kudo's bundle, read back by the same reader: the key, the statement naming the digest.
    #[test]
    fn a_bundle_kudo_makes_opens_with_its_key_only() {
        let dir = tempfile::tempdir().unwrap();
        let (private, public, _) = crate::trust::generate(dir.path(), b"").unwrap();
        let key = SigningKey::read(&private, b"").unwrap();
        let digest = format!("sha256:{}", "ab".repeat(32));
        let bytes = make(&digest, &key).unwrap();
        let keys = [PublicKey::read(&public).unwrap()];
        let (_, statement) = open(&bytes, &keys).unwrap();
        assert_eq!(names(&statement, &digest), Ok(()));
        let v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(v["mediaType"], BUNDLE_MEDIA_TYPE);
        assert!(v["verificationMaterial"]["publicKey"]["hint"].is_string());
        assert!(v["verificationMaterial"].get("tlogEntries").is_none());
        let other = tempfile::tempdir().unwrap();
        let (_, other_pub, _) = crate::trust::generate(other.path(), b"").unwrap();
        let others = [PublicKey::read(&other_pub).unwrap()];
        assert!(open(&bytes, &others).is_err());
    }

    #[test]
    fn pae_is_dsse_s_encoding() {
        // DSSE's protocol.md example: PAE("http://example.com/HelloWorld", "hello world")
        assert_eq!(
            pae("http://example.com/HelloWorld", b"hello world"),
            b"DSSEv1 29 http://example.com/HelloWorld 11 hello world".to_vec()
        );
    }

    #[test]
    fn the_statement_is_cosign_s_and_names_the_digest() {
        let d = format!("sha256:{}", "ab".repeat(32));
        let s = statement(&d).unwrap();
        assert_eq!(names(&s, &d), Ok(()));
        let other = format!("sha256:{}", "cd".repeat(32));
        assert!(names(&s, &other).unwrap_err().contains("does not name"));
        let v: serde_json::Value = serde_json::from_slice(&s).unwrap();
        assert_eq!(v["predicateType"], SIGN_PREDICATE);
        assert_eq!(v["_type"], STATEMENT_TYPE);
    }
}
