//! `kudo package sign`, `kudo package verify-signature`, `kudo package generate-key` and `kudo
//! registry trust`: cosign signatures of packages, and the policy that asks for them. The
//! format is `kudo_source::trust`'s and `kudo_source::oci::signature`'s; here are the files, the terminal
//! and the exit codes (a package not signed by a key given: 1).

use serde_json::json;

use super::Outcome;
use super::registry::{block_on, print_data};
use crate::args::{GenerateKeyArgs, RegistryTrustArgs, SignArgs, TrustArgs, VerifySignatureArgs};
use crate::error::Error;
use kudo_source::oci::bundle::TLOG_NOT_CHECKED;
use kudo_source::oci::signature::Format;
use kudo_source::oci::{Reference, Registry};
use kudo_source::repo::{Home, Repositories, Resolver, Signed, Source, config::RegistryPolicy};
use kudo_source::trust::{self, Mode, PublicKey, SigningKey};

/// A private key, its password from the environment or the terminal.
pub fn signing_key(path: &std::path::Path) -> Result<SigningKey, Error> {
    let password = trust::password(false)?;
    Ok(SigningKey::read(path, password.as_bytes())?)
}

/// `kudo package sign oci://... --key cosign.key [--bundle-format bundle|legacy]`.
pub fn sign(a: SignArgs) -> Result<Outcome, Error> {
    let reference = Reference::parse(&a.reference)?;
    reference.require(true)?;
    let registry = Registry::new(a.registry.plain_http)?;
    let key = signing_key(&a.key)?;
    let format = a.bundle_format;
    let data = match format {
        Format::Bundle => {
            let signed = block_on(registry.sign_bundle(&reference, &key))?;
            json!({
                "reference": reference.to_string(),
                "manifestDigest": signed.manifest_digest,
                "format": format.as_str(),
                "signature": format!("{}@{}", reference.untagged(), signed.referrer_digest),
                "attachedBy": signed.attached.describe(&signed.manifest_digest),
                "key": key.fingerprint,
            })
        }
        Format::Legacy => {
            let signed = block_on(registry.sign(&reference, &key))?;
            json!({
                "reference": signed.reference.to_string(),
                "manifestDigest": signed.manifest_digest,
                "format": format.as_str(),
                "signature": signed.signature.to_string(),
                "signatures": signed.signatures,
                "key": signed.key,
            })
        }
    };
    match a.output {
        Some(output) => print_data(output, &data)?,
        None => {
            let text = |k: &str| data[k].as_str().unwrap_or_default().to_string();
            let attached = match data["attachedBy"].as_str() {
                Some(how) => format!(" (attached through {how})"),
                None => String::new(),
            };
            super::print(&format!(
                "signed {} ({})\nsignature: {} ({}){attached}\nkey: {}\n",
                text("reference"),
                text("manifestDigest"),
                text("signature"),
                text("format"),
                text("key")
            ))?
        }
    }
    Ok(Outcome::Done)
}

/// `kudo package verify-signature PACKAGE --key cosign.pub`: PACKAGE resolved as `kudo
/// install` resolves it ([`kudo_source::repo::Resolver::signed`]).
pub fn verify_signature(a: VerifySignatureArgs) -> Result<Outcome, Error> {
    // The registry's client first: a bad $KUDO_REGISTRY_CA_FILE is said before anything else.
    let registry = Reference::is_oci(&a.reference)
        .then(|| Registry::new(a.registry.plain_http))
        .transpose()?;
    let keys = a
        .key
        .iter()
        .map(|k| PublicKey::read(k))
        .collect::<Result<Vec<_>, _>>()?;
    let source = Source {
        repo: a.lookup.repo.clone(),
        want: a.lookup.want()?,
        plain_http: a.registry.plain_http,
        verify: None,
    };
    let arg = &a.reference;
    if std::path::Path::new(arg).exists()
        || arg.starts_with("http://")
        || arg.starts_with("https://")
    {
        return Err(Error::Usage(format!(
            "{arg}: a package on disk or at a URL carries no signature; give an oci:// reference or a name in a repository"
        )));
    }
    let home = Home::from_env()?;
    let signed = Resolver::new(home, source).signed(arg)?;
    let mut signed_as = None;
    let (package, digest, found) = match signed {
        Signed::Oci(reference) => {
            let registry = match registry {
                Some(r) => r,
                None => Registry::new(a.registry.plain_http)?,
            };
            let (digest, found) = block_on(async {
                let digest = registry.manifest_digest(&reference).await?;
                let found = registry.verify(&reference, &digest, &keys).await?;
                Ok((digest, found))
            })?;
            let found = found.map(|(key, f)| {
                signed_as = Some(f);
                key
            });
            (reference.to_string(), digest, found)
        }
        Signed::Entry { repository, entry } => {
            let digest = entry.digest.as_deref().map(str::to_ascii_lowercase);
            let found = match &digest {
                Some(d) => trust::verify_entry(&entry, d, &keys),
                None => Err(
                    "the index gives no digest for this package, so no signature can cover it"
                        .into(),
                ),
            };
            let package = format!(
                "{} {} from repository {repository}",
                entry.name,
                entry.versions()
            );
            (
                package,
                format!("sha256:{}", digest.unwrap_or_default()),
                found,
            )
        }
    };
    let (verified, signer, why) = match &found {
        Ok(k) => (true, Some(*k), None),
        Err(why) => (false, None, Some(why.clone())),
    };
    match a.output {
        Some(format) => print_data(
            format,
            &json!({
                "reference": package,
                "manifestDigest": digest,
                "verified": verified,
                "key": signer.map(|k| json!({
                    "path": k.path.display().to_string(),
                    "fingerprint": k.fingerprint,
                })),
                "format": signed_as.map(Format::as_str),
                "transparencyLog": verified.then_some(TLOG_NOT_CHECKED),
                "reason": why,
                "keysTried": keys.iter().map(PublicKey::describe).collect::<Vec<_>>(),
            }),
        )?,
        None => match signer {
            Some(k) => {
                eprintln!("WARNING: {TLOG_NOT_CHECKED}");
                super::print(&format!(
                    "verified {package} ({digest}){}\nsigned by: {}\n",
                    signed_as
                        .map(|f| format!(", {} format", f.as_str()))
                        .unwrap_or_default(),
                    k.describe()
                ))?
            }
            None => eprintln!(
                "{package}: NOT verified: {}\n  digest: {digest}\n  keys tried: {}",
                why.unwrap_or_default(),
                keys.iter()
                    .map(PublicKey::describe)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        },
    }
    Ok(if verified {
        Outcome::Done
    } else {
        Outcome::Failed
    })
}

/// `kudo package generate-key`.
pub fn generate_key(a: GenerateKeyArgs) -> Result<Outcome, Error> {
    if !a.dir.is_dir() {
        return Err(Error::refused(
            a.dir.display(),
            crate::error::Refusal::NotADirectory,
        ));
    }
    for file in [trust::PRIVATE_KEY_FILE, trust::PUBLIC_KEY_FILE] {
        let path = a.dir.join(file);
        if path.exists() {
            return Err(trust::TrustError::KeyExists { path }.into());
        }
    }
    let password = trust::password(true)?;
    let (private, public, fingerprint) = trust::generate(&a.dir, password.as_bytes())?;
    super::print(&format!(
        "private key: {} (keep it secret)\npublic key: {}\nfingerprint: {fingerprint}\n",
        private.display(),
        public.display()
    ))?;
    Ok(Outcome::Done)
}

/// The policy `--verify` and `--key` ask for: `--key` alone means `required`.
pub fn policy_of(a: &TrustArgs) -> Result<(Mode, Vec<std::path::PathBuf>), Error> {
    let mode = a.verify.unwrap_or(if a.key.is_empty() {
        Mode::None
    } else {
        Mode::Required
    });
    if mode != Mode::None && a.key.is_empty() {
        return Err(Error::Usage(format!(
            "--verify {} needs a public key: add --key cosign.pub",
            mode.as_str()
        )));
    }
    // Each key must read as one, and is kept as an absolute path.
    let mut keys = Vec::new();
    for k in &a.key {
        PublicKey::read(k)?;
        keys.push(std::path::absolute(k).map_err(Error::io(k))?);
    }
    Ok((mode, keys))
}

/// `kudo registry trust oci://REGISTRY[/PATH] [--verify MODE] [--key FILE]... [--remove]`.
pub fn registry_trust(a: RegistryTrustArgs) -> Result<Outcome, Error> {
    let prefix = a
        .prefix
        .strip_prefix("oci://")
        .unwrap_or(&a.prefix)
        .trim_end_matches('/')
        .to_string();
    if prefix.is_empty() || prefix.contains(char::is_whitespace) {
        return Err(Error::Usage(format!(
            "{}: not a registry (HOST[:PORT][/PATH])",
            a.prefix
        )));
    }
    let home = Home::from_env()?;
    let mut config = Repositories::load(&home)?;
    let show = a.trust.verify.is_none() && a.trust.key.is_empty() && !a.remove;
    if show {
        let policy = config.registry_policy(&home, &prefix);
        let keys: Vec<String> = policy
            .keys
            .iter()
            .map(|k| k.display().to_string())
            .collect();
        super::print(&format!(
            "{prefix}: verify: {}{}{}\n",
            policy.verify.as_str(),
            if keys.is_empty() {
                String::new()
            } else {
                format!(", keys: {}", keys.join(", "))
            },
            if policy.from.is_empty() {
                String::new()
            } else {
                format!(" ({})", policy.from)
            }
        ))?;
        return Ok(Outcome::Done);
    }
    let before = config.registries.len();
    config
        .registries
        .retain(|r| r.prefix.trim_end_matches('/') != prefix);
    if a.remove {
        if config.registries.len() == before {
            return Err(Error::Usage(format!(
                "{prefix}: no policy is set for exactly this prefix (see `kudo registry trust {prefix}`)"
            )));
        }
        config.save(&home)?;
        eprintln!("{prefix}: policy removed ({})", home.config.display());
        return Ok(Outcome::Done);
    }
    let (verify, keys) = policy_of(&a.trust)?;
    config.registries.push(RegistryPolicy {
        prefix: prefix.clone(),
        verify,
        keys,
    });
    config.save(&home)?;
    eprintln!(
        "{prefix}: verify: {} ({})",
        verify.as_str(),
        home.config.display()
    );
    Ok(Outcome::Done)
}
