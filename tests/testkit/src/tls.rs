//! TLS on loopback for the servers under test (the webhook's tests and its load run): a
//! self-signed certificate for `127.0.0.1`, written where the server reads it, and the roots a
//! client trusts it by.

use std::path::{Path, PathBuf};

/// A serving certificate and key on disk, and the roots that trust it.
pub struct Loopback {
    /// `DIR/tls.crt` (PEM).
    pub cert: PathBuf,
    /// `DIR/tls.key` (PEM).
    pub key: PathBuf,
    /// The certificate itself, as the only root.
    pub roots: rustls::RootCertStore,
}

/// Writes a fresh self-signed certificate for `127.0.0.1` to `dir`.
pub fn loopback(dir: &Path) -> Loopback {
    let key = rcgen::KeyPair::generate().expect("a key pair");
    let cert = rcgen::CertificateParams::new(vec!["127.0.0.1".to_string()])
        .and_then(|params| params.self_signed(&key))
        .expect("a self-signed certificate for 127.0.0.1");
    let (cert_path, key_path) = (dir.join("tls.crt"), dir.join("tls.key"));
    std::fs::write(&cert_path, cert.pem()).expect("tls.crt written");
    std::fs::write(&key_path, key.serialize_pem()).expect("tls.key written");
    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(cert.der().clone())
        .expect("the certificate is a root");
    Loopback {
        cert: cert_path,
        key: key_path,
        roots,
    }
}
