//! Trust: cosign signatures on packages, and the policy that asks for them.
//!
//! kudo signs and verifies in cosign's key-based format, through the `sigstore` crate: the
//! payload is cosign's *simple signing* JSON (`{"critical": {"identity": {"docker-reference":
//! ...}, "image": {"docker-manifest-digest": "sha256:..."}, "type": "cosign container image
//! signature"}, "optional": null}`), signed with the private key of `cosign.key` (cosign's
//! encrypted PEM: scrypt and NaCl secretbox, [`crate::keyfile`]), checked with the PEM public key of `cosign.pub`.
//!
//! - In an OCI registry ([`crate::oci::Registry::sign`], [`crate::oci::Registry::verify`]) the
//!   payload names the manifest's digest and is a layer of the manifest tagged
//!   `sha256-<digest>.sig` beside the package, its signature in the layer's
//!   `dev.cosignproject.cosign/signature` annotation: `cosign verify --key cosign.pub`
//!   accepts what kudo signs, and kudo what cosign signs.
//! - In a repository's `index.yaml` ([`sign_entry`], [`verify_entry`]) an entry carries the
//!   same payload over the package's sha256 (the entry's `digest`), with its signature.
//! - [`Mode`] and [`Policy`]: `verify: none|warn|required` and the keys, per repository and
//!   per registry in `repositories.yaml`, or `--verify[=KEY]` for one command.
//!
//! Keyless signing (Fulcio certificates, Rekor's log) needs the Internet and is left out.

use std::path::{Path, PathBuf};

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use kudo_pkg::repo::{Entry, EntrySignature};
use serde::{Deserialize, Serialize};
use sigstore::cosign::payload::simple_signing::{
    CRITICAL_TYPE_NAME, Critical, Identity, Image, SimpleSigning,
};
use sigstore::crypto::signing_key::SigStoreKeyPair;
use sigstore::crypto::{CosignVerificationKey, SigStoreSigner, Signature, SigningScheme};
use zeroize::Zeroizing;

/// The files `kudo package generate-key` writes, as `cosign generate-key-pair` names them.
pub const PRIVATE_KEY_FILE: &str = "cosign.key";
/// The public key's file.
pub const PUBLIC_KEY_FILE: &str = "cosign.pub";
/// The environment variable holding the private key's password (cosign's, `COSIGN_PASSWORD`,
/// is read when it is not set).
pub const PASSWORD_ENV: &str = "KUDO_PASSWORD";
const COSIGN_PASSWORD_ENV: &str = "COSIGN_PASSWORD";
/// The largest key file read.
const MAX_KEY_BYTES: u64 = 64 * 1024;

/// What went wrong with a key or a signature.
#[derive(Debug, thiserror::Error)]
pub enum TrustError {
    /// A key file that cannot be read or is not a key of the kind wanted.
    #[error("{}: {reason}", path.display())]
    Key {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// `generate-key` would replace a key.
    #[error("{}: already exists: kudo does not replace a key (move it away first)", path.display())]
    KeyExists {
        /// The file.
        path: PathBuf,
    },
    /// No password: not in the environment, and no terminal to ask in.
    #[error(
        "the private key's password: set {PASSWORD_ENV} (or COSIGN_PASSWORD), or run in a terminal to be asked"
    )]
    NoPassword,
    /// Signing failed.
    #[error("cannot sign: {0}")]
    Sign(String),
    /// A file could not be written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
}

/// The sha256 of a public key's DER (its SubjectPublicKeyInfo), as `sha256:HEX`: what kudo
/// records of a signer. `openssl pkey -pubin -in cosign.pub -outform DER | sha256sum` gives
/// the same hex.
pub fn fingerprint(der: &[u8]) -> String {
    format!("sha256:{}", kudo_pkg::repo::sha256_hex(der))
}

/// A public key that signatures are checked with.
pub struct PublicKey {
    /// Where it was read from.
    pub path: PathBuf,
    /// [`fingerprint`] of it.
    pub fingerprint: String,
    /// The PEM text, as `PublicKeyVerifier` takes it.
    pub pem: Vec<u8>,
    key: CosignVerificationKey,
}

impl std::fmt::Debug for PublicKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "PublicKey({}, {})",
            self.path.display(),
            self.fingerprint
        )
    }
}

impl PublicKey {
    /// Reads a PEM public key (`cosign.pub`: ECDSA P-256, or P-384, P-521, Ed25519, RSA).
    pub fn read(path: &Path) -> Result<PublicKey, TrustError> {
        let pem_text = read_key_file(path)?;
        PublicKey::parse(path, pem_text)
    }

    /// A PEM public key given as text, `path` naming where it came from.
    pub fn parse(path: &Path, pem_text: Vec<u8>) -> Result<PublicKey, TrustError> {
        let bad = |reason: String| TrustError::Key {
            path: path.to_path_buf(),
            reason,
        };
        let block = pem::parse(&pem_text).map_err(|e| bad(format!("not a PEM public key: {e}")))?;
        if block.tag() != "PUBLIC KEY" {
            return Err(bad(format!(
                "holds a {}, not a PUBLIC KEY (give cosign.pub, not cosign.key)",
                block.tag()
            )));
        }
        let key = CosignVerificationKey::try_from_pem(&pem_text).map_err(|e| {
            bad(format!(
                "not a public key kudo can check signatures with: {e}"
            ))
        })?;
        Ok(PublicKey {
            path: path.to_path_buf(),
            fingerprint: fingerprint(block.contents()),
            pem: pem_text,
            key,
        })
    }

    /// Whether `signature` (base64, as cosign writes it) is this key's over `payload`.
    pub fn verifies(&self, payload: &[u8], signature: &str) -> bool {
        self.key
            .verify_signature(
                Signature::Base64Encoded(signature.trim().as_bytes()),
                payload,
            )
            .is_ok()
    }

    /// `PATH (FINGERPRINT)`, as refusals name the keys tried.
    pub fn describe(&self) -> String {
        format!("{} ({})", self.path.display(), self.fingerprint)
    }
}

/// A private key that signs.
pub struct SigningKey {
    signer: SigStoreSigner,
    /// [`fingerprint`] of its public key.
    pub fingerprint: String,
}

impl SigningKey {
    /// Reads a private key in cosign's encrypted PEM (`ENCRYPTED SIGSTORE PRIVATE KEY`, or
    /// the older `ENCRYPTED COSIGN PRIVATE KEY`), decrypted with `password`.
    pub fn read(path: &Path, password: &[u8]) -> Result<SigningKey, TrustError> {
        let bad = |reason: String| TrustError::Key {
            path: path.to_path_buf(),
            reason,
        };
        let pem_text = Zeroizing::new(read_key_file(path)?);
        let block =
            pem::parse(&*pem_text).map_err(|e| bad(format!("not a PEM private key: {e}")))?;
        let tag = block.tag().to_string();
        if tag == "PUBLIC KEY" {
            return Err(bad(
                "is a public key: signing takes the private key (cosign.key)".into(),
            ));
        }
        if tag != crate::keyfile::PEM_LABEL && tag != crate::keyfile::OLD_PEM_LABEL {
            return Err(bad(format!(
                "holds a {tag}: kudo reads cosign's encrypted private key ({}, as `cosign \
                 generate-key-pair` and `kudo package generate-key` write it)",
                crate::keyfile::PEM_LABEL
            )));
        }
        let der = crate::keyfile::open(block.contents(), password)
            .map_err(|e| bad(format!("cannot open this {tag}: {e}")))?;
        let pair = SigStoreKeyPair::from_der(&der)
            .map_err(|e| bad(format!("its decrypted content is not a private key: {e}")))?;
        SigningKey::of(pair).map_err(bad)
    }

    fn of(pair: SigStoreKeyPair) -> Result<SigningKey, String> {
        let der = pair
            .public_key_to_der()
            .map_err(|e| format!("its public key cannot be read: {e}"))?;
        // The scheme is the key's: cosign's keys are ECDSA P-256.
        let schemes = [
            SigningScheme::ECDSA_P256_SHA256_ASN1,
            SigningScheme::ECDSA_P384_SHA384_ASN1,
            SigningScheme::ECDSA_P521_SHA512_ASN1,
            SigningScheme::ED25519,
            SigningScheme::RSA_PKCS1_SHA256(0),
        ];
        let signer = schemes
            .iter()
            .find_map(|s| pair.to_sigstore_signer(s).ok())
            .ok_or_else(|| "a key of a kind kudo cannot sign with".to_string())?;
        Ok(SigningKey {
            signer,
            fingerprint: fingerprint(&der),
        })
    }

    /// Whether `signature` (base64) is this key's over `payload`.
    pub fn verifies(&self, payload: &[u8], signature: &str) -> bool {
        self.signer.to_verification_key().is_ok_and(|k| {
            k.verify_signature(
                Signature::Base64Encoded(signature.trim().as_bytes()),
                payload,
            )
            .is_ok()
        })
    }

    /// The signature over `payload`, base64 (as cosign's annotation holds it).
    pub fn sign(&self, payload: &[u8]) -> Result<String, TrustError> {
        let raw = self
            .signer
            .sign(payload)
            .map_err(|e| TrustError::Sign(e.to_string()))?;
        Ok(BASE64.encode(raw))
    }
}

/// Writes a new ECDSA P-256 key pair into `dir` as `cosign.key` (encrypted with `password`,
/// mode 0600) and `cosign.pub`, as `cosign generate-key-pair` does; refused when either file
/// exists. Returns both paths and the public key's fingerprint.
pub fn generate(dir: &Path, password: &[u8]) -> Result<(PathBuf, PathBuf, String), TrustError> {
    let private = dir.join(PRIVATE_KEY_FILE);
    let public = dir.join(PUBLIC_KEY_FILE);
    for p in [&private, &public] {
        if p.exists() {
            return Err(TrustError::KeyExists { path: p.clone() });
        }
    }
    let fail = |e: sigstore::errors::SigstoreError| TrustError::Sign(e.to_string());
    let pair = SigningScheme::ECDSA_P256_SHA256_ASN1
        .create_signer()
        .and_then(|s| s.to_sigstore_keypair())
        .map_err(fail)?;
    let der = pair.private_key_to_der().map_err(fail)?;
    let encrypted = crate::keyfile::seal(&der, password).map_err(TrustError::Sign)?;
    let public_pem = pair.public_key_to_pem().map_err(fail)?;
    let public_der = pair.public_key_to_der().map_err(fail)?;
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| TrustError::Io { path, source }
    };
    crate::atomic::write(&private, encrypted.as_bytes(), Some(0o600)).map_err(io(&private))?;
    if let Err(e) = crate::atomic::write(&public, public_pem.as_bytes(), None) {
        let _ = std::fs::remove_file(&private);
        return Err(io(&public)(e));
    }
    Ok((private, public, fingerprint(&public_der)))
}

/// The password of a private key: `KUDO_PASSWORD`, else `COSIGN_PASSWORD`, else asked in the
/// terminal (twice when `confirm`: a new key's).
pub fn password(confirm: bool) -> Result<Zeroizing<String>, TrustError> {
    for var in [PASSWORD_ENV, COSIGN_PASSWORD_ENV] {
        if let Ok(p) = std::env::var(var) {
            return Ok(Zeroizing::new(p));
        }
    }
    use std::io::IsTerminal;
    if !std::io::stdin().is_terminal() || !std::io::stderr().is_terminal() {
        return Err(TrustError::NoPassword);
    }
    let mut prompt = dialoguer::Password::new().with_prompt("Password for the private key");
    if confirm {
        prompt = prompt.with_confirmation("Password again", "the passwords do not match");
    }
    prompt
        .allow_empty_password(true)
        .interact()
        .map(Zeroizing::new)
        .map_err(|_| TrustError::NoPassword)
}

fn read_key_file(path: &Path) -> Result<Vec<u8>, TrustError> {
    use std::io::Read;
    let bad = |reason: String| TrustError::Key {
        path: path.to_path_buf(),
        reason,
    };
    let file = std::fs::File::open(path).map_err(|e| bad(format!("cannot read it: {e}")))?;
    let mut bytes = Vec::new();
    file.take(MAX_KEY_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| bad(format!("cannot read it: {e}")))?;
    if bytes.len() as u64 > MAX_KEY_BYTES {
        return Err(bad(format!("larger than {MAX_KEY_BYTES} bytes: not a key")));
    }
    Ok(bytes)
}

/// cosign's simple-signing payload naming `digest` (`sha256:HEX`) as `identity`'s, as
/// cosign serializes it (the bytes that are signed).
pub fn payload(identity: &str, digest: &str) -> Vec<u8> {
    let signing = SimpleSigning {
        critical: Critical {
            identity: Identity {
                docker_reference: identity.to_string(),
            },
            image: Image {
                docker_manifest_digest: digest.to_string(),
            },
            type_name: CRITICAL_TYPE_NAME.to_string(),
        },
        optional: None,
    };
    serde_json::to_vec(&signing).unwrap_or_default()
}

/// The identity and the digest a simple-signing payload names, when it is one.
pub fn signed(payload: &[u8]) -> Option<(String, String)> {
    serde_json::from_slice::<SimpleSigning>(payload)
        .ok()
        .map(|s| {
            (
                s.critical.identity.docker_reference,
                s.critical.image.docker_manifest_digest,
            )
        })
}

/// The last path segment of an identity (`REGISTRY/PATH/NAME` → `NAME`): the package's name,
/// whatever registry or mirror it is served from.
pub fn identity_name(identity: &str) -> &str {
    identity.rsplit('/').next().unwrap_or(identity)
}

/// Signs a repository index's entry: the payload names the entry's package (`name`) and its
/// sha256 (the entry's `digest`, which must be set); the signature is added to those the entry
/// has (one by the same key is replaced).
pub fn sign_entry(entry: &mut Entry, key: &SigningKey) -> Result<(), TrustError> {
    let digest = entry
        .digest
        .clone()
        .ok_or_else(|| TrustError::Sign(format!("{}: the entry has no digest", entry.name)))?;
    let payload = payload(&entry.name, &format!("sha256:{digest}"));
    let signature = key.sign(&payload)?;
    entry
        .signatures
        .retain(|s| s.key.as_deref() != Some(&key.fingerprint));
    entry.signatures.push(EntrySignature {
        payload: BASE64.encode(&payload),
        signature,
        key: Some(key.fingerprint.clone()),
    });
    Ok(())
}

/// Signs every entry of `index` that has a digest ([`sign_entry`]); returns how many.
pub fn sign_index(
    index: &mut kudo_pkg::repo::Index,
    key: &SigningKey,
) -> Result<usize, TrustError> {
    let mut signed = 0;
    for entry in index.entries.values_mut().flatten() {
        if entry.digest.is_some() {
            sign_entry(entry, key)?;
            signed += 1;
        }
    }
    Ok(signed)
}

/// The key among `keys` that signed `entry`'s package of sha256 `digest` (hex): a signature of
/// the entry whose payload names that digest and that the key verifies. `Err` says what was
/// found instead.
pub fn verify_entry<'k>(
    entry: &Entry,
    digest: &str,
    keys: &'k [PublicKey],
) -> Result<&'k PublicKey, String> {
    if entry.signatures.is_empty() {
        return Err("the index gives no signature for this package".into());
    }
    let want = format!("sha256:{digest}");
    let mut other_digest = 0;
    for s in &entry.signatures {
        let Ok(payload) = BASE64.decode(s.payload.trim()) else {
            continue;
        };
        // The payload must name this package and this digest: a signature of another package
        // by the same key does not carry over.
        match signed(&payload) {
            Some((identity, d)) if identity_name(&identity) == entry.name && d == want => {}
            _ => {
                other_digest += 1;
                continue;
            }
        }
        if let Some(k) = keys.iter().find(|k| k.verifies(&payload, &s.signature)) {
            return Ok(k);
        }
    }
    Err(match other_digest {
        0 => format!(
            "{} signature(s) in the index, none made by these keys",
            entry.signatures.len()
        ),
        n => format!(
            "{} signature(s) in the index, {n} of them over another package or digest than {} {want}, none valid by these keys",
            entry.signatures.len(),
            entry.name
        ),
    })
}

/// How strictly a source's packages are checked.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Not checked.
    #[default]
    None,
    /// Checked; a package unsigned or signed by no key given is used, with a warning.
    Warn,
    /// Checked; a package unsigned or signed by no key given is refused.
    Required,
}

impl Mode {
    /// `none`, `warn`, `required`.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::None => "none",
            Mode::Warn => "warn",
            Mode::Required => "required",
        }
    }

    /// Whether it is [`Mode::None`] (serde's `skip_serializing_if`).
    pub fn is_none(&self) -> bool {
        *self == Mode::None
    }
}

/// A source's policy: the mode and the public keys (files; relative ones are relative to
/// the configuration file's folder).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Policy {
    /// The mode.
    pub verify: Mode,
    /// The public keys' files.
    pub keys: Vec<PathBuf>,
    /// Where the policy was given (`repository community in FILE`, `--verify`), for
    /// messages.
    pub from: String,
}

impl Policy {
    /// The keys, read; `required` or `warn` with no key is an error naming where the policy
    /// was given.
    pub fn read_keys(&self) -> Result<Vec<PublicKey>, TrustError> {
        if self.keys.is_empty() {
            return Err(TrustError::Key {
                path: PathBuf::from(&self.from),
                reason: format!(
                    "verify: {} names no public key (give --verify=cosign.pub, or keys: in the configuration)",
                    self.verify.as_str()
                ),
            });
        }
        self.keys.iter().map(|k| PublicKey::read(k)).collect()
    }
}

/// How a package was checked, for what kudo reports and records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Checked {
    /// Verified: the fingerprint and file of the key that signed it.
    Signed {
        /// [`fingerprint`] of the key.
        fingerprint: String,
        /// Its file.
        key: PathBuf,
    },
    /// Checked under `warn` and not verified (the warning said why).
    Unverified,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A key-based signature cosign made (sigstore-rs's test vector
    /// `build_correct_signature_layer_without_bundle`, src/cosign/signature_layers.rs): the
    /// public key, the signature, and the payload as cosign serialized it.
    const COSIGN_PUBLIC_KEY: &str = "-----BEGIN PUBLIC KEY-----
MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAENptdY/l3nB0yqkXLBWkZWQwo6+cu
OSWS1X9vPavpiQOoTTGC0xX57OojUadxF1cdQmrsiReWg2Wn4FneJfa8xw==
-----END PUBLIC KEY-----
";
    const COSIGN_SIGNATURE: &str = "MEUCIQD6q/COgzOyW0YH1Dk+CCYSt4uAhm3FDHUwvPI55zwnlwIgE0ZK58ZOWpZw8YVmBapJhBqCfdPekIknimuO0xH8Jh8=";
    const COSIGN_DIGEST: &str =
        "sha256:f3cfc9d0dbf931d3db4685ec659b7ac68e2a578219da4aae65427886e649b06b";

    fn cosign_key() -> PublicKey {
        PublicKey::parse(
            Path::new("cosign.pub"),
            COSIGN_PUBLIC_KEY.as_bytes().to_vec(),
        )
        .unwrap()
    }

    #[test]
    fn a_signature_cosign_made_verifies_over_the_payload_kudo_writes() {
        // kudo's payload for the same image and digest is, byte for byte, the one cosign signed.
        let payload = payload("registry-testing.svc.lan/busybox", COSIGN_DIGEST);
        let key = cosign_key();
        assert!(key.verifies(&payload, COSIGN_SIGNATURE));
        assert_eq!(
            signed(&payload),
            Some((
                "registry-testing.svc.lan/busybox".to_string(),
                COSIGN_DIGEST.to_string()
            ))
        );
        // one byte changed: no longer
        let other = payload_with_digest_char_changed(&payload);
        assert!(!key.verifies(&other, COSIGN_SIGNATURE));
    }

    fn payload_with_digest_char_changed(p: &[u8]) -> Vec<u8> {
        let s = String::from_utf8(p.to_vec()).unwrap();
        s.replace("f3cfc9", "f3cfc8").into_bytes()
    }

    #[test]
    fn a_generated_key_signs_what_its_public_key_verifies_and_no_other_does() {
        let dir = tempfile::tempdir().unwrap();
        let (private, public, fp) = generate(dir.path(), b"secret").unwrap();
        let text = std::fs::read_to_string(&private).unwrap();
        assert!(text.starts_with("-----BEGIN ENCRYPTED SIGSTORE PRIVATE KEY-----"));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&private).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let key = SigningKey::read(&private, b"secret").unwrap();
        assert_eq!(key.fingerprint, fp);
        let public = PublicKey::read(&public).unwrap();
        assert_eq!(public.fingerprint, fp);
        let p = payload("kudo/zookeeper", "sha256:00");
        let sig = key.sign(&p).unwrap();
        assert!(public.verifies(&p, &sig));
        assert!(!cosign_key().verifies(&p, &sig));
        // a wrong password, a second generate, a public key given to sign
        let e = SigningKey::read(&private, b"wrong")
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("(wrong password)"), "{e}");
        // written as cosign ≥ 2.2 writes it; a KDF kudo cannot read is named as such
        let block = pem::parse(&text).unwrap();
        let mut envelope: serde_json::Value = serde_json::from_slice(block.contents()).unwrap();
        assert_eq!(envelope["kdf"]["params"]["N"], 65536);
        envelope["kdf"]["params"]["N"] = 1_048_576.into();
        let odd = dir.path().join("odd.key");
        let body = serde_json::to_vec(&envelope).unwrap();
        std::fs::write(&odd, pem::encode(&pem::Pem::new(block.tag(), body))).unwrap();
        let e = SigningKey::read(&odd, b"secret").err().unwrap().to_string();
        assert!(e.contains("scrypt with N=1048576, r=8, p=1"), "{e}");
        assert!(!e.contains("wrong password"), "{e}");
        assert!(matches!(
            generate(dir.path(), b"x"),
            Err(TrustError::KeyExists { .. })
        ));
        let e = SigningKey::read(&public.path, b"secret")
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("is a public key"), "{e}");
        let e = PublicKey::read(&private).err().unwrap().to_string();
        assert!(e.contains("not a PUBLIC KEY"), "{e}");
    }

    #[test]
    fn a_key_cosign_generated_signs() {
        // sigstore-rs's tests/data/keys/cosign_generated_encrypted_empty_private.key: made by
        // `cosign generate-key-pair` with an empty password.
        let path = kudo_testkit::fixture("signing/cosign_generated_encrypted_empty_private.key");
        let key = SigningKey::read(&path, b"").unwrap();
        let p = payload("kudo/x", "sha256:11");
        let sig = key.sign(&p).unwrap();
        assert!(!sig.is_empty());
    }

    #[test]
    fn index_entries_are_signed_over_their_digest() {
        let dir = tempfile::tempdir().unwrap();
        let (private, public, _) = generate(dir.path(), b"").unwrap();
        let key = SigningKey::read(&private, b"").unwrap();
        let keys = vec![PublicKey::read(&public).unwrap()];
        let mut entry = Entry {
            name: "zookeeper".into(),
            digest: Some("ab".repeat(32)),
            ..Entry::default()
        };
        assert!(verify_entry(&entry, &"ab".repeat(32), &keys).is_err());
        sign_entry(&mut entry, &key).unwrap();
        sign_entry(&mut entry, &key).unwrap();
        assert_eq!(entry.signatures.len(), 1, "the same key's is replaced");
        assert_eq!(
            verify_entry(&entry, &"ab".repeat(32), &keys)
                .unwrap()
                .fingerprint,
            keys[0].fingerprint
        );
        // another package's digest: the signature does not carry over
        let e = verify_entry(&entry, &"cd".repeat(32), &keys).unwrap_err();
        assert!(e.contains("over another package or digest"), "{e}");
        // another package's name, the same digest: neither
        let mut renamed = entry.clone();
        renamed.name = "kafka".into();
        assert!(verify_entry(&renamed, &"ab".repeat(32), &keys).is_err());
        // another key
        let e = verify_entry(&entry, &"ab".repeat(32), &[cosign_key()]).unwrap_err();
        assert!(e.contains("none made by these keys"), "{e}");
    }
}
