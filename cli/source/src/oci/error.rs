//! [`OciError`]: what went wrong with a registry, each message naming the reference (or the
//! file) and what the registry answered, never a password; and how oci-client's errors become
//! one ([`from_client`]).

use std::path::PathBuf;

use oci_client::errors::{OciDistributionError, OciErrorCode};

use super::{CA_FILE_ENV, Reference, ReferenceProblem, TagProblem};

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

/// An oci-client error as an [`OciError`] naming `reference`: the registry's answer sorted by
/// what the user can do about it (log in, fix the reference, reach the registry).
pub(super) fn from_client(
    reference: &Reference,
    sent: &Option<(String, PathBuf)>,
    plain_http: bool,
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
        OciDistributionError::UnauthorizedError { .. } => unauthorized("401 Unauthorized".into()),
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
                _ => by_status(code, reference_text, answer, None),
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
                _ => by_status(status, reference_text, answer, Some(chain(&e))),
            }
        }
        OciDistributionError::RequestError(e) => OciError::Unreachable {
            reference: reference_text,
            reason: chain(&e),
            plain_http,
        },
        OciDistributionError::DigestError(oci_client::errors::DigestError::VerificationError {
            expected,
            actual,
        }) => OciError::DigestMismatch {
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

/// A registry's answer that is not about credentials, by its HTTP status: 404 is
/// [`OciError::NotFound`], anything else [`OciError::Registry`], with `detail` (the error's
/// chain) after the answer when there is one.
fn by_status(status: u16, reference: String, answer: String, detail: Option<String>) -> OciError {
    match (status, detail) {
        (404, _) => OciError::NotFound { reference, answer },
        (_, Some(detail)) => OciError::Registry {
            reference,
            answer: format!("{answer} ({detail})"),
        },
        (_, None) => OciError::Registry { reference, answer },
    }
}
