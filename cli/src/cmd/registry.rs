//! `kudo package push`, `kudo package pull`, `kudo registry login` and `logout`: packages in
//! OCI registries. The registry work is `crate::oci`'s; here are the files, the terminal and
//! the exit codes (a registry's refusal, like a package's, exits with 1).

use std::io::{IsTerminal, Read};
use std::path::Path;
use std::process::ExitCode;

use kudo_pkg::Error;
use serde_json::json;

use super::package::io;
use crate::args::{DataFormat, LoginArgs, LogoutArgs, PullArgs, PushArgs};
use crate::oci::{self, Credentials, OciError, Reference, Registry};

/// Prints an error of the registry's, and the exit code it gives.
fn refused(e: &OciError) -> ExitCode {
    eprintln!("error: {e}");
    ExitCode::from(1)
}

/// Runs one registry call on the CLI's runtime.
fn block_on<T>(call: impl std::future::Future<Output = T>) -> Result<T, Error> {
    let runtime = super::runtime().map_err(io(Path::new("<runtime>")))?;
    Ok(runtime.block_on(call))
}

/// Prints `value` as JSON or YAML.
fn print_data(format: DataFormat, value: &serde_json::Value) -> Result<(), Error> {
    match format {
        DataFormat::Json => super::print(&format!(
            "{}\n",
            serde_json::to_string_pretty(value).unwrap_or_default()
        )),
        DataFormat::Yaml => super::print(&super::to_yaml(value)),
    }
}

/// `kudo package push PACKAGE oci://REGISTRY/PATH`.
pub fn push(a: PushArgs) -> Result<ExitCode, Error> {
    let target = match Reference::parse(&a.target) {
        Ok(t) if t.tag.is_some() => {
            return Ok(refused(&OciError::InvalidReference {
                input: a.target.clone(),
                problem: oci::ReferenceProblem::TagOnPushTarget,
            }));
        }
        Ok(t) => t,
        Err(e) => return Ok(refused(&e)),
    };
    let tgz = match archive(&a.package)? {
        Ok(bytes) => bytes,
        Err(code) => return Ok(code),
    };
    let registry = match Registry::new(a.registry.plain_http) {
        Ok(r) => r,
        Err(e) => return Ok(refused(&e)),
    };
    let pushed = match block_on(registry.push(&target, &tgz))? {
        Ok(p) => p,
        Err(e) => return Ok(refused(&e)),
    };
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
    Ok(ExitCode::SUCCESS)
}

/// The `.tgz` to push: a file's bytes when it is a package archive, or a package directory
/// verified and archived (as `kudo package create` does). `Err(code)`: refused, said on
/// stderr.
fn archive(path: &Path) -> Result<Result<Vec<u8>, ExitCode>, Error> {
    if path.is_dir() {
        let pkg = super::load(path)?;
        let diags = kudo_pkg::verify::verify(&pkg);
        crate::report::diagnostics(&diags);
        if kudo_pkg::verify::failed(&diags) {
            eprintln!(
                "{}: not pushed: the package does not verify",
                path.display()
            );
            return Ok(Err(ExitCode::from(1)));
        }
        return Ok(Ok(kudo_pkg::create_archive(path)?.0));
    }
    if !path.exists() {
        return Err(Error::Invalid {
            path: path.to_path_buf(),
            location: None,
            message: "no such file or directory: PACKAGE is a package's .tgz or its directory"
                .into(),
        });
    }
    let bytes = std::fs::read(path).map_err(io(path))?;
    if !bytes.starts_with(&[0x1f, 0x8b]) {
        return Err(Error::Invalid {
            path: path.to_path_buf(),
            location: None,
            message: "not a package archive (gzip data): push the .tgz `kudo package create` \
                      writes, or the package's directory"
                .into(),
        });
    }
    // The archive must load as a package (its errors name the file).
    super::load(path)?;
    Ok(Ok(bytes))
}

/// `kudo package pull oci://REGISTRY/PATH/NAME:TAG`.
pub fn pull(a: PullArgs) -> Result<ExitCode, Error> {
    let reference = match Reference::parse(&a.reference) {
        Ok(r) => r,
        Err(e) => return Ok(refused(&e)),
    };
    let registry = match Registry::new(a.registry.plain_http) {
        Ok(r) => r,
        Err(e) => return Ok(refused(&e)),
    };
    let pulled = match block_on(registry.pull(&reference))? {
        Ok(p) => p,
        Err(e) => return Ok(refused(&e)),
    };
    let dir = &a.destination;
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    // Written aside first: loaded there to name it, renamed into place.
    let mut tmp = tempfile::Builder::new()
        .prefix(".kudo-pull-")
        .suffix(".tgz")
        .tempfile_in(dir)
        .map_err(io(dir))?;
    std::io::Write::write_all(&mut tmp, &pulled.bytes).map_err(io(tmp.path()))?;
    let pkg = match kudo_pkg::Package::load(tmp.path()) {
        Ok(p) => p,
        Err(e) => {
            let why = e
                .to_string()
                .replace(&tmp.path().display().to_string(), "it");
            eprintln!("error: {reference}: the pulled archive is not a kudo package: {why}");
            return Ok(ExitCode::from(1));
        }
    };
    let target = dir.join(format!("{}-{}.tgz", pkg.operator().name, pkg.version()));
    if target.exists() && !a.overwrite {
        return Err(Error::Invalid {
            path: target,
            location: None,
            message: "already exists; pass --overwrite to replace it".into(),
        });
    }
    tmp.persist(&target).map_err(|e| Error::Io {
        path: target.clone(),
        source: e.error,
    })?;
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
    Ok(ExitCode::SUCCESS)
}

/// `kudo registry login REGISTRY -u USER`.
pub fn login(a: LoginArgs) -> Result<ExitCode, Error> {
    let target = match Reference::parse_registry(&a.registry) {
        Ok(t) => t,
        Err(e) => return Ok(refused(&e)),
    };
    let host = &target.registry;
    if a.username.is_empty() {
        return Ok(super::usage_error("-u/--username is empty"));
    }
    let registry = match Registry::new(a.registry_args.plain_http) {
        Ok(r) => r,
        Err(e) => return Ok(refused(&e)),
    };
    let password = if a.password_stdin {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .map_err(io(Path::new("<stdin>")))?;
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
            Err(e) => {
                eprintln!("error: {host}: no password read: {e}");
                return Ok(ExitCode::from(1));
            }
        }
    } else {
        return Ok(super::usage_error(
            "give the password with --password-stdin (or -p PASSWORD): standard input is not a terminal to ask on",
        ));
    };
    if password.is_empty() {
        eprintln!("error: {host}: the password is empty (nothing on standard input?)");
        return Ok(ExitCode::from(1));
    }
    let credentials = Credentials {
        username: a.username,
        password,
    };
    let repository = Some(target.repository.as_str()).filter(|r| !r.is_empty());
    if let Err(e) = block_on(registry.login(host, repository, &credentials))? {
        return Ok(refused(&e));
    }
    match oci::credentials::store(host, &credentials) {
        Ok(file) => {
            super::print(&format!("logged in to {host}\n"))?;
            eprintln!(
                "credentials of {} kept in {}",
                credentials.username,
                file.display()
            );
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => Ok(refused(&e)),
    }
}

/// `kudo registry logout REGISTRY`.
pub fn logout(a: LogoutArgs) -> Result<ExitCode, Error> {
    let target = match Reference::parse_registry(&a.registry) {
        Ok(t) => t,
        Err(e) => return Ok(refused(&e)),
    };
    let host = &target.registry;
    let (file, removed) = match oci::credentials::remove(host) {
        Ok(r) => r,
        Err(e) => return Ok(refused(&e)),
    };
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
    Ok(ExitCode::SUCCESS)
}
