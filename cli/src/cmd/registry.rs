//! `kudo package push`, `kudo package pull`, `kudo registry login` and `logout`: packages in
//! OCI registries. The registry work is `kudo_source::oci`'s; here are the files and the terminal (a
//! registry's refusal, like a package's, is an error: exit code 1).

use std::io::{IsTerminal, Read};
use std::path::Path;

use serde_json::json;

use super::Outcome;
use crate::args::{DataFormat, LoginArgs, LogoutArgs, PullArgs, PushArgs};
use crate::error::{Error, Refusal};
use kudo_source::oci::{self, Credentials, OciError, Reference, Registry};

/// Runs one registry call on the CLI's runtime.
pub(super) fn block_on<T>(
    call: impl std::future::Future<Output = Result<T, OciError>>,
) -> Result<T, Error> {
    Ok(super::runtime()?.block_on(call)?)
}

/// Prints `value` as JSON or YAML.
pub(super) fn print_data(format: DataFormat, value: &serde_json::Value) -> Result<(), Error> {
    match format {
        DataFormat::Json => super::print(&format!(
            "{}\n",
            serde_json::to_string_pretty(value).unwrap_or_default()
        )),
        DataFormat::Yaml => super::print(&super::to_yaml(value)),
    }
}

/// `kudo package push PACKAGE oci://REGISTRY/PATH`.
pub fn push(a: PushArgs) -> Result<Outcome, Error> {
    let target = Reference::parse(&a.target)?;
    if target.tag.is_some() {
        return Err(OciError::InvalidReference {
            input: a.target.clone(),
            problem: oci::ReferenceProblem::TagOnPushTarget,
        }
        .into());
    }
    let tgz = match archive(&a.package)? {
        Ok(bytes) => bytes,
        Err(refused) => return Ok(refused),
    };
    let registry = Registry::new(a.registry.plain_http)?;
    let pushed = block_on(registry.push(&target, &tgz))?;
    match a.output {
        Some(format) => print_data(
            format,
            &json!({
                "reference": pushed.reference.to_string(),
                "repository": pushed.reference.untagged().to_string(),
                "tag": pushed.reference.tag,
                "manifestDigest": pushed.manifest_digest,
                "packageDigest": pushed.package_digest,
                "size": tgz.len(),
            }),
        )?,
        None => super::print(&format!(
            "pushed {}\ndigest: {}\npackage sha256: {}\n",
            pushed.reference, pushed.manifest_digest, pushed.package_digest
        ))?,
    }
    Ok(Outcome::Done)
}

/// The `.tgz` to push: a file's bytes when it is a package archive, or a package directory
/// verified and archived (as `kudo package create` does). `Err(outcome)`: refused, said on
/// stderr.
fn archive(path: &Path) -> Result<Result<Vec<u8>, Outcome>, Error> {
    if path.is_dir() {
        let pkg = super::load(path)?;
        let diags = kudo_pkg::verify::verify(&pkg);
        crate::report::diagnostics(&diags);
        if kudo_pkg::verify::failed(&diags) {
            eprintln!(
                "{}: not pushed: the package does not verify",
                path.display()
            );
            return Ok(Err(Outcome::Failed));
        }
        return Ok(Ok(kudo_pkg::create_archive(path)?.0));
    }
    if !path.exists() {
        return Err(Error::refused(path.display(), Refusal::NoSuchArchive));
    }
    let bytes = std::fs::read(path).map_err(Error::io(path))?;
    if !bytes.starts_with(&[0x1f, 0x8b]) {
        return Err(Error::refused(path.display(), Refusal::NotGzip));
    }
    // The archive must load as a package (its errors name the file).
    super::load(path)?;
    Ok(Ok(bytes))
}

/// `kudo package pull oci://REGISTRY/PATH/NAME:TAG`.
pub fn pull(a: PullArgs) -> Result<Outcome, Error> {
    let reference = Reference::parse(&a.reference)?;
    let registry = Registry::new(a.registry.plain_http)?;
    let pulled = block_on(registry.pull(&reference))?;
    let dir = &a.destination;
    std::fs::create_dir_all(dir).map_err(Error::io(dir))?;
    // Written aside first: loaded there to name it, renamed into place.
    let mut tmp = tempfile::Builder::new()
        .prefix(".kudo-pull-")
        .suffix(".tgz")
        .tempfile_in(dir)
        .map_err(Error::io(dir))?;
    std::io::Write::write_all(&mut tmp, &pulled.bytes).map_err(Error::io(tmp.path()))?;
    let pkg = kudo_pkg::Package::load(tmp.path()).map_err(|e| {
        let why = e
            .to_string()
            .replace(&tmp.path().display().to_string(), "it");
        Error::refused(&reference, Refusal::PulledNotAPackage(why))
    })?;
    let target = dir.join(format!("{}-{}.tgz", pkg.operator().name, pkg.version()));
    if target.exists() && !a.overwrite {
        return Err(Error::refused(target.display(), Refusal::FileExists));
    }
    tmp.persist(&target)
        .map_err(|e| Error::io(&target)(e.error))?;
    match a.output {
        Some(format) => print_data(
            format,
            &json!({
                "reference": reference.to_string(),
                "path": target.display().to_string(),
                "manifestDigest": pulled.manifest_digest,
                "packageDigest": pulled.package_digest,
                "size": pulled.bytes.len(),
            }),
        )?,
        None => {
            super::print(&format!("{}\n", target.display()))?;
            eprintln!(
                "pulled {reference} ({} bytes, sha256 {})",
                pulled.bytes.len(),
                pulled.package_digest
            );
        }
    }
    Ok(Outcome::Done)
}

/// `kudo registry login REGISTRY -u USER`.
pub fn login(a: LoginArgs) -> Result<Outcome, Error> {
    let target = Reference::parse_registry(&a.registry)?;
    let host = &target.registry;
    if a.username.is_empty() {
        return Err(Error::Usage("-u/--username is empty".into()));
    }
    let registry = Registry::new(a.registry_args.plain_http)?;
    let password = if a.password_stdin {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .map_err(Error::Stdin)?;
        text.trim_end_matches(['\n', '\r']).to_string()
    } else if let Some(p) = a.password {
        eprintln!(
            "warning: a password given with -p shows in the process list and the shell's \
             history; prefer --password-stdin"
        );
        p
    } else if std::io::stdin().is_terminal() {
        match dialoguer::Password::new()
            .with_prompt(format!("Password for {} at {host}", a.username))
            .interact()
        {
            Ok(p) => p,
            Err(e) => return Err(Error::refused(host, Refusal::NoPassword(e.to_string()))),
        }
    } else {
        return Err(Error::Usage(
            "give the password with --password-stdin (or -p PASSWORD): standard input is not a terminal to ask on"
                .into(),
        ));
    };
    if password.is_empty() {
        return Err(Error::refused(host, Refusal::EmptyPassword));
    }
    let credentials = Credentials {
        username: a.username,
        password,
    };
    let repository = Some(target.repository.as_str()).filter(|r| !r.is_empty());
    block_on(registry.login(host, repository, &credentials))?;
    let file = oci::credentials::store(host, &credentials)?;
    super::print(&format!("logged in to {host}\n"))?;
    eprintln!(
        "credentials of {} kept in {}",
        credentials.username,
        file.display()
    );
    Ok(Outcome::Done)
}

/// `kudo registry logout REGISTRY`.
pub fn logout(a: LogoutArgs) -> Result<Outcome, Error> {
    let target = Reference::parse_registry(&a.registry)?;
    let host = &target.registry;
    let (file, removed) = oci::credentials::remove(host)?;
    if removed {
        super::print(&format!("logged out of {host}\n"))?;
        eprintln!("removed its credentials from {}", file.display());
    } else {
        super::print(&format!("not logged in to {host}\n"))?;
        eprintln!("{} has no credentials of {host}", file.display());
    }
    if let Some(docker) = oci::credentials::in_docker_config(host) {
        eprintln!(
            "note: {} still has credentials of {host}, which kudo reads after its own: \
             `docker logout {host}` removes them",
            docker.display()
        );
    }
    Ok(Outcome::Done)
}
