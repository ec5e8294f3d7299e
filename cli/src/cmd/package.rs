//! `kudo package convert` and `kudo package verify`.

use std::path::Path;

use kudo_policy::Params;

use super::Outcome;
use crate::args::{ConvertArgs, CreateArgs, ReportFormat, VerifyArgs};
use crate::error::{Error, Refusal};

pub fn convert(a: ConvertArgs) -> Result<Outcome, Error> {
    if let Some(params) = params_only(&a.package)? {
        return convert_params(&a, &params);
    }
    let pkg = super::load(&a.package)?;
    let text = converted(pkg.params(), &a.package);
    if a.in_place {
        if !a.package.is_dir() {
            return Err(Error::refused(
                a.package.display(),
                Refusal::InPlaceNeedsDirectory,
            ));
        }
        // operator.yaml first: naming the Go engine is harmless while params.yaml is v1beta1.
        if let Some(op) = pkg.operator_yaml_for_v1beta2() {
            super::write_atomic(&a.package.join("operator.yaml"), &op)?;
            eprintln!(
                "kept the Go templates: templateEngine: go in {}",
                a.package.join("operator.yaml").display()
            );
        }
        super::write_atomic(&a.package.join("params.yaml"), &text)?;
        eprintln!("converted {}", a.package.join("params.yaml").display());
    } else if let Some(dir) = &a.output {
        write_package(&pkg, dir, &text)?;
        eprintln!("wrote the converted package to {}", dir.display());
    } else {
        super::print(&text)?;
    }
    Ok(Outcome::Done)
}

/// The params.yaml to convert when `path` is one (any file that is not an archive) or a
/// directory holding one without an operator.yaml (three real KUDO folders are so).
fn params_only(path: &Path) -> Result<Option<std::path::PathBuf>, Error> {
    let archive = |p: &Path| {
        let name = p.to_string_lossy();
        name.ends_with(".tgz") || name.ends_with(".tar.gz")
    };
    if path.is_file() && !archive(path) {
        return Ok(Some(path.to_path_buf()));
    }
    if path.is_dir() && !path.join("operator.yaml").exists() {
        let params = path.join("params.yaml");
        if params.is_file() {
            return Ok(Some(params));
        }
        return Err(Error::refused(path.display(), Refusal::NothingToConvert));
    }
    Ok(None)
}

/// Converts a params.yaml alone: printed, replaced (--in-place) or written as DIR/params.yaml.
fn convert_params(a: &ConvertArgs, file: &Path) -> Result<Outcome, Error> {
    let doc = kudo_yaml::document::Document::read(file)?;
    let text = converted(&Params::parse(&doc)?, file);
    if a.in_place {
        super::write_atomic(file, &text)?;
        eprintln!("converted {}", file.display());
    } else if let Some(dir) = &a.output {
        if dir.exists() {
            return Err(Error::refused(dir.display(), Refusal::DirectoryExists));
        }
        std::fs::create_dir_all(dir).map_err(Error::io(dir))?;
        super::write_atomic(&dir.join("params.yaml"), &text)?;
        eprintln!("wrote {}", dir.join("params.yaml").display());
    } else {
        super::print(&text)?;
    }
    Ok(Outcome::Done)
}

/// The v1beta2 params.yaml of `params` (read from `from`), noting when it already was one.
fn converted(params: &Params, from: &Path) -> String {
    if matches!(params, Params::V1beta2(_)) {
        eprintln!(
            "note: {} already uses kudo.dev/v1beta2 parameters; nothing to convert",
            from.display()
        );
    }
    super::to_yaml(&kudo_policy::convert::schema_of(params).to_params_file())
}

/// Writes the whole package into a new directory, built aside and renamed into place.
fn write_package(pkg: &kudo_pkg::Package, dir: &Path, params: &str) -> Result<(), Error> {
    if dir.exists() {
        return Err(Error::refused(dir.display(), Refusal::DirectoryExists));
    }
    let parent = dir
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let tmp = tempfile::Builder::new()
        .prefix(".kudo-convert-")
        .tempdir_in(parent)
        .map_err(Error::io(parent))?;
    let root = tmp.path();
    let op_src = pkg.source().join("operator.yaml");
    if pkg.source().is_dir() {
        match pkg.operator_yaml_for_v1beta2() {
            Some(op) => std::fs::write(root.join("operator.yaml"), op).map_err(Error::io(root))?,
            None => {
                std::fs::copy(&op_src, root.join("operator.yaml")).map_err(Error::io(&op_src))?;
            }
        }
    } else {
        return Err(Error::refused(
            pkg.source().display(),
            Refusal::OutputDirFromArchive,
        ));
    }
    std::fs::write(root.join("params.yaml"), params).map_err(Error::io(root))?;
    for (name, text) in pkg.templates() {
        let p = root.join("templates").join(name);
        if let Some(d) = p.parent() {
            std::fs::create_dir_all(d).map_err(Error::io(d))?;
        }
        std::fs::write(&p, text).map_err(Error::io(&p))?;
    }
    let kept = tmp.keep();
    std::fs::rename(&kept, dir).map_err(Error::io(dir))?;
    Ok(())
}

pub fn verify(a: VerifyArgs) -> Result<Outcome, Error> {
    let pkg = super::load_with(&a.package, &a.source)?.package;
    let diags = kudo_pkg::verify::verify(&pkg);
    let failed = kudo_pkg::verify::failed(&diags);
    let against = match &a.against {
        Some(path) => {
            let old = super::load_with(path, &a.source)?.package;
            Some(kudo_pkg::preflight::against(&pkg, &old).map_err(Error::parameters)?)
        }
        None => None,
    };
    let unsafe_upgrade = against.as_ref().is_some_and(|a| a.is_unsafe());
    match a.output {
        ReportFormat::Json => {
            let mut report = serde_json::json!({
                "package": a.package.display().to_string(),
                "ok": !failed,
                "diagnostics": diags,
            });
            if let Some(against) = &against {
                report["against"] = against.to_json();
            }
            super::print(&format!(
                "{}\n",
                serde_json::to_string_pretty(&report).unwrap_or_default()
            ))?;
        }
        ReportFormat::Text => {
            crate::report::diagnostics(&diags);
            if !failed {
                let warnings = diags.len();
                super::print(&format!(
                    "{}: package verified ({warnings} warning(s))\n",
                    a.package.display()
                ))?;
            }
            if let Some(against) = &against {
                crate::report::diagnostics(&against.diagnostics());
                super::print(&format!("{}\n", against.summary()))?;
            }
        }
    }
    Ok(if failed || unsafe_upgrade {
        Outcome::Failed
    } else {
        Outcome::Done
    })
}

pub fn create(a: CreateArgs) -> Result<Outcome, Error> {
    if !a.package.is_dir() {
        return Err(Error::refused(
            a.package.display(),
            Refusal::NotAPackageDirectory,
        ));
    }
    let pkg = super::load(&a.package)?;
    let diags = kudo_pkg::verify::verify(&pkg);
    crate::report::diagnostics(&diags);
    if kudo_pkg::verify::failed(&diags) {
        eprintln!(
            "{}: not created: the package does not verify",
            a.package.display()
        );
        return Ok(Outcome::Failed);
    }
    let target = a.destination.join(kudo_pkg::repo::file_name(&pkg));
    if target.exists() && !a.overwrite {
        return Err(Error::refused(target.display(), Refusal::FileExists));
    }
    let (bytes, files) = kudo_pkg::create_archive(&a.package)?;
    std::fs::create_dir_all(&a.destination).map_err(Error::io(&a.destination))?;
    super::write_bytes_atomic(&target, &bytes)?;
    super::print(&format!("{}\n", target.display()))?;
    eprintln!(
        "created {} ({files} files, sha256 {})",
        target.display(),
        kudo_pkg::repo::sha256_hex(&bytes)
    );
    Ok(Outcome::Done)
}
