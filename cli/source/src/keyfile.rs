//! cosign's encrypted private key: the PEM body is go-securesystemslib's `encrypted` JSON
//! envelope (`{"kdf": {"name": "scrypt", "params": {"N", "r", "p"}, "salt"}, "cipher":
//! {"name": "nacl/secretbox", "nonce"}, "ciphertext"}`) around the PKCS#8 DER of the key.
//!
//! Written by hand on two well-kept primitives (`scrypt`, `crypto_secretbox`) because the
//! `sigstore` crate's own envelope writes N=32768 only (cosign ≥ 2.2 writes 65536), and its
//! reader gives the same kind of error for a KDF it does not take as for a wrong password.
//! Here a new key is written with N=65536; a key is read with N=32768 (cosign before 2.2, and
//! kudo before) or 65536, r=8, p=1, which are the parameters cosign reads; anything else is
//! refused naming what the file asks for, before a password is tried, so the memory scrypt
//! takes is bounded (N=65536, r=8: 64 MiB).

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use crypto_secretbox::aead::{Aead, KeyInit};
use crypto_secretbox::{Key, Nonce, XSalsa20Poly1305};
use ring::rand::{SecureRandom, SystemRandom};
use serde::{Deserialize, Serialize};
use zeroize::Zeroizing;

/// The PEM label cosign writes today.
pub const PEM_LABEL: &str = "ENCRYPTED SIGSTORE PRIVATE KEY";
/// The label cosign wrote before; read, never written.
pub const OLD_PEM_LABEL: &str = "ENCRYPTED COSIGN PRIVATE KEY";
/// scrypt's N for a new key (cosign ≥ 2.2).
pub const NEW_KEY_N: u32 = 65536;
/// The scrypt N values read: cosign's before 2.2 (and kudo's before), and today's.
pub const READ_N: [u32; 2] = [32768, 65536];
const SCRYPT_R: u32 = 8;
const SCRYPT_P: u32 = 1;
const SALT_BYTES: usize = 32;
const NONCE_BYTES: usize = 24;

/// Why a key file cannot be opened.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum KeyFileError {
    /// The body is not the envelope at all.
    #[error("not cosign's encrypted key envelope: {0}")]
    NotAnEnvelope(String),
    /// An envelope kudo cannot read: another KDF, cipher or parameters.
    #[error("{0}")]
    Unreadable(String),
    /// The envelope is readable and the password does not open it.
    #[error("the password given does not decrypt it (wrong password)")]
    WrongPassword,
}

#[derive(Serialize, Deserialize)]
struct Envelope {
    kdf: Kdf,
    cipher: Cipher,
    ciphertext: String,
}

#[derive(Serialize, Deserialize)]
struct Kdf {
    name: String,
    params: ScryptParams,
    salt: String,
}

#[derive(Serialize, Deserialize, Clone, Copy)]
struct ScryptParams {
    #[serde(rename = "N")]
    n: u32,
    r: u32,
    p: u32,
}

#[derive(Serialize, Deserialize)]
struct Cipher {
    name: String,
    nonce: String,
}

/// `der` (a PKCS#8 private key) sealed with `password` in cosign's envelope, N=65536, as PEM.
pub fn seal(der: &[u8], password: &[u8]) -> Result<Zeroizing<String>, String> {
    seal_with(der, password, NEW_KEY_N)
}

fn seal_with(der: &[u8], password: &[u8], n: u32) -> Result<Zeroizing<String>, String> {
    let rng = SystemRandom::new();
    let mut salt = [0u8; SALT_BYTES];
    let mut nonce = [0u8; NONCE_BYTES];
    rng.fill(&mut salt)
        .and_then(|()| rng.fill(&mut nonce))
        .map_err(|_| "no randomness from the system".to_string())?;
    let params = ScryptParams {
        n,
        r: SCRYPT_R,
        p: SCRYPT_P,
    };
    let key = derive(password, &salt, params)?;
    let ciphertext = XSalsa20Poly1305::new(Key::from_slice(&key[..]))
        .encrypt(Nonce::from_slice(&nonce), der)
        .map_err(|_| "cannot seal the key".to_string())?;
    let envelope = Envelope {
        kdf: Kdf {
            name: "scrypt".into(),
            params,
            salt: BASE64.encode(salt),
        },
        cipher: Cipher {
            name: "nacl/secretbox".into(),
            nonce: BASE64.encode(nonce),
        },
        ciphertext: BASE64.encode(ciphertext),
    };
    let json = serde_json::to_vec(&envelope).map_err(|e| e.to_string())?;
    Ok(Zeroizing::new(pem::encode(&pem::Pem::new(PEM_LABEL, json))))
}

/// The PKCS#8 DER inside `body` (the PEM block's contents), opened with `password`.
pub fn open(body: &[u8], password: &[u8]) -> Result<Zeroizing<Vec<u8>>, KeyFileError> {
    let envelope: Envelope = serde_json::from_slice(body)
        .map_err(|e| KeyFileError::NotAnEnvelope(format!("its JSON does not read: {e}")))?;
    let params = readable(&envelope)?;
    let field = |name: &str, text: &str| {
        BASE64
            .decode(text)
            .map_err(|e| KeyFileError::NotAnEnvelope(format!("{name} is not base64: {e}")))
    };
    let salt = field("kdf.salt", &envelope.kdf.salt)?;
    let nonce = field("cipher.nonce", &envelope.cipher.nonce)?;
    let ciphertext = field("ciphertext", &envelope.ciphertext)?;
    if nonce.len() != NONCE_BYTES {
        return Err(KeyFileError::Unreadable(format!(
            "its nacl/secretbox nonce has {} bytes, not {NONCE_BYTES}",
            nonce.len()
        )));
    }
    let key = derive(password, &salt, params).map_err(KeyFileError::Unreadable)?;
    XSalsa20Poly1305::new(Key::from_slice(&key[..]))
        .decrypt(Nonce::from_slice(&nonce), ciphertext.as_slice())
        .map(Zeroizing::new)
        .map_err(|_| KeyFileError::WrongPassword)
}

/// The scrypt parameters of `envelope` when kudo reads them; else why not, naming what the
/// file asks for.
fn readable(envelope: &Envelope) -> Result<ScryptParams, KeyFileError> {
    let kdf = &envelope.kdf;
    if kdf.name != "scrypt" {
        return Err(KeyFileError::Unreadable(format!(
            "its key derivation function is `{}`: kudo reads scrypt only (as cosign does)",
            kdf.name
        )));
    }
    if envelope.cipher.name != "nacl/secretbox" {
        return Err(KeyFileError::Unreadable(format!(
            "its cipher is `{}`: kudo reads nacl/secretbox only (as cosign does)",
            envelope.cipher.name
        )));
    }
    let ScryptParams { n, r, p } = kdf.params;
    if !READ_N.contains(&n) || r != SCRYPT_R || p != SCRYPT_P {
        return Err(KeyFileError::Unreadable(format!(
            "its key derivation function is scrypt with N={n}, r={r}, p={p}: kudo reads scrypt \
             with N=32768 or 65536, r=8, p=1 (the parameters cosign writes and reads)"
        )));
    }
    Ok(kdf.params)
}

fn derive(
    password: &[u8],
    salt: &[u8],
    params: ScryptParams,
) -> Result<Zeroizing<[u8; 32]>, String> {
    let log_n = params.n.trailing_zeros() as u8;
    let p = scrypt::Params::new(log_n, params.r, params.p)
        .map_err(|e| format!("scrypt parameters: {e}"))?;
    let mut key = Zeroizing::new([0u8; 32]);
    scrypt::scrypt(password, salt, &p, &mut key[..]).map_err(|e| format!("scrypt: {e}"))?;
    Ok(key)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params_of(pem_text: &str) -> serde_json::Value {
        let block = pem::parse(pem_text).unwrap();
        let json: serde_json::Value = serde_json::from_slice(block.contents()).unwrap();
        json["kdf"]["params"].clone()
    }

    #[test]
    fn a_new_key_is_sealed_with_n_65536_and_opens_with_its_password_only() {
        let der = b"not really a key, but bytes";
        let sealed = seal(der, b"pw").unwrap();
        assert!(sealed.starts_with("-----BEGIN ENCRYPTED SIGSTORE PRIVATE KEY-----"));
        assert_eq!(
            params_of(&sealed),
            serde_json::json!({"N": 65536, "r": 8, "p": 1})
        );
        let body = pem::parse(sealed.as_bytes()).unwrap();
        assert_eq!(&open(body.contents(), b"pw").unwrap()[..], der);
        assert_eq!(
            open(body.contents(), b"other"),
            Err(KeyFileError::WrongPassword)
        );
    }

    #[test]
    fn a_key_sealed_with_n_32768_still_opens() {
        let sealed = seal_with(b"k", b"", 32768).unwrap();
        let body = pem::parse(sealed.as_bytes()).unwrap();
        assert_eq!(&open(body.contents(), b"").unwrap()[..], b"k");
    }

    #[test]
    fn a_kdf_kudo_cannot_read_is_named_not_taken_for_a_wrong_password() {
        let sealed = seal_with(b"k", b"pw", 65536).unwrap();
        let body = pem::parse(sealed.as_bytes()).unwrap();
        let mut json: serde_json::Value = serde_json::from_slice(body.contents()).unwrap();
        let reopen = |json: &serde_json::Value| {
            open(&serde_json::to_vec(json).unwrap(), b"pw")
                .unwrap_err()
                .to_string()
        };
        json["kdf"]["params"]["N"] = 131072.into();
        let why = reopen(&json);
        assert!(why.contains("scrypt with N=131072, r=8, p=1"), "{why}");
        assert!(!why.contains("password"), "{why}");
        json["kdf"]["params"]["N"] = 65536.into();
        json["kdf"]["name"] = "argon2id".into();
        let why = reopen(&json);
        assert!(why.contains("`argon2id`"), "{why}");
        json["kdf"]["name"] = "scrypt".into();
        json["cipher"]["name"] = "aes-gcm".into();
        assert!(reopen(&json).contains("`aes-gcm`"));
        assert!(matches!(
            open(b"{\"kdf\":1}", b""),
            Err(KeyFileError::NotAnEnvelope(_))
        ));
    }
}
