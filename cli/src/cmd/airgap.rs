//! `kudo package bundle` and `kudo package relocate`: packages resolved as `kudo install`
//! resolves them (with their KudoOperator dependencies), their images listed by
//! `kudo_pkg::images::list` with every finite domain walked; the copying and pushing are
//! `kudo_source::oci::airgap`'s. This module resolves, then prints what was done.

use std::collections::BTreeMap;
use std::path::Path;

use kudo_pkg::Package;
use kudo_pkg::images::{self, ListOptions, Reference as ImageReference};
use kudo_pkg::render::Prepared;
use kudo_source::oci::airgap::{Bundled, Bundler, PackageSource, Relocated};
use kudo_source::oci::relocation::RelocationMap;
use kudo_source::oci::{Reference, Registry, layout};
use serde_json::{Value, json};

use super::Outcome;
use crate::args::{BundleArgs, DataFormat, RelocateArgs, ValueArgs};
use crate::error::Error;

/// A package to bundle, and the images its plans run.
struct Found {
    package: Package,
    /// `None`: it is inside its parent's archive, which carries it.
    source: Option<PackageSource>,
}

pub fn bundle(a: BundleArgs) -> Result<Outcome, Error> {
    let mut found: Vec<Found> = Vec::new();
    let mut inside = Vec::new();
    for arg in &a.packages {
        let loaded = super::load_with(arg, &a.source)?;
        let mut all: Vec<Package> = loaded
            .dependencies()?
            .into_iter()
            .map(|d| d.package)
            .collect();
        all.push(loaded.package);
        for package in all {
            let name = package.operator_version_name();
            if found
                .iter()
                .any(|f| f.package.operator_version_name() == name)
            {
                continue;
            }
            let source = source_of(&package)?;
            if source.is_none() {
                inside.push(format!(
                    "{name} ({}): inside its parent's archive, bundled with it",
                    package.source().display()
                ));
            }
            found.push(Found { package, source });
        }
    }
    // Every image of every package, with each finite domain walked: an install with other
    // values must find its images in the mirror too.
    let mut wanted: BTreeMap<String, ImageReference> = BTreeMap::new();
    for f in &found {
        let values = super::resolve(&f.package, &ValueArgs::default())?;
        let opts = ListOptions {
            all_values: true,
            ..ListOptions::default()
        };
        let listed = images::list(&Prepared::new(&f.package), values.value(), &opts)
            .map_err(|e| Error::from(e).about(f.package.source().display()))?;
        for i in listed.images {
            wanted.entry(i.image).or_insert(i.reference);
        }
    }
    let registry = Registry::new(a.source.plain_http)?;
    let folder = a
        .output
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let runtime = super::runtime()?;
    let bundled = runtime.block_on(async {
        let mut bundler = Bundler::new(&registry, folder)?;
        for f in &found {
            if let Some(s) = &f.source {
                bundler.add_package(s).await?;
            }
        }
        for (image, reference) in &wanted {
            bundler.add_image(image, reference).await?;
        }
        bundler.finish(&a.output)
    })?;
    let data = bundle_data(&a.output, &bundled, &inside);
    match a.output_format {
        Some(DataFormat::Json) => super::print(&format!(
            "{}\n",
            serde_json::to_string_pretty(&data).unwrap_or_default()
        ))?,
        Some(DataFormat::Yaml) => super::print(&super::to_yaml(&data))?,
        None => {
            super::print(&bundle_text(&a.output, &bundled))?;
            for line in &inside {
                eprintln!("note: {line}");
            }
            for what in &bundled.unsigned {
                eprintln!("note: no signature found for {what}");
            }
        }
    }
    Ok(Outcome::Done)
}

/// How `package` is bundled: its `.tgz` (a folder archived as `kudo package create` does),
/// and for one from a registry, its reference and manifest digest. `None` for a dependency
/// read from inside its parent's archive: that archive carries it.
fn source_of(package: &Package) -> Result<Option<PackageSource>, Error> {
    let path = package.source();
    let from = package
        .provenance()
        .map(|p| p.source.clone())
        .unwrap_or_else(|| path.display().to_string());
    let tgz = if path.is_dir() {
        kudo_pkg::create_archive(path)?.0
    } else if path.is_file() {
        std::fs::read(path).map_err(Error::io(path))?
    } else {
        return Ok(None);
    };
    // `oci://REGISTRY/PATH/NAME:TAG@sha256:...`, as the resolver records it
    let registry = from
        .rsplit_once('@')
        .filter(|(r, _)| Reference::is_oci(r))
        .and_then(|(r, d)| Some((Reference::parse(r).ok()?, d.to_string())));
    Ok(Some(PackageSource {
        tgz,
        from,
        registry,
    }))
}

/// The summary as data: the archive, the counts, the map.
fn bundle_data(archive: &Path, b: &Bundled, inside: &[String]) -> Value {
    let signatures: usize = signature_count(&b.map);
    json!({
        "archive": archive.display().to_string(),
        "blobs": b.written.blobs,
        "blobBytes": b.written.blob_bytes,
        "archiveBytes": b.written.archive_bytes,
        "signatures": signatures,
        "unsigned": b.unsigned,
        "insideParents": inside,
        "relocation": serde_json::to_value(&b.map).unwrap_or_default(),
    })
}

fn signature_count(map: &RelocationMap) -> usize {
    map.images.iter().map(|i| i.signatures.len()).sum::<usize>()
        + map
            .packages
            .iter()
            .map(|p| p.signatures.len())
            .sum::<usize>()
}

/// The summary as text: one table of packages, one of images, the totals.
fn bundle_text(archive: &Path, b: &Bundled) -> String {
    let packages: Vec<Vec<String>> = b
        .map
        .packages
        .iter()
        .map(|p| {
            vec![
                p.name.clone(),
                p.tag.clone(),
                p.digest.clone(),
                p.signatures.len().to_string(),
            ]
        })
        .collect();
    let images: Vec<Vec<String>> = b
        .map
        .images
        .iter()
        .map(|i| {
            vec![
                i.image.clone(),
                i.digest.clone(),
                i.relocated.clone(),
                i.signatures.len().to_string(),
            ]
        })
        .collect();
    format!(
        "{}\n{}\nwrote {}: {} package(s), {} image(s), {} signature(s), {} blobs of {} bytes \
         ({} bytes on disk)\n",
        super::table(&["PACKAGE", "TAG", "DIGEST", "SIGNATURES"], &packages).trim_end(),
        super::table(&["IMAGE", "DIGEST", "RELOCATED", "SIGNATURES"], &images).trim_end(),
        archive.display(),
        b.map.packages.len(),
        b.map.images.len(),
        signature_count(&b.map),
        b.written.blobs,
        b.written.blob_bytes,
        b.written.archive_bytes,
    )
}

pub fn relocate(a: RelocateArgs) -> Result<Outcome, Error> {
    let mirror = Reference::parse(&a.mirror)?;
    if mirror.tag.is_some() {
        return Err(Error::Usage(format!(
            "{}: a mirror names no tag (oci://REGISTRY/PREFIX)",
            a.mirror
        )));
    }
    // the client first: a configuration that cannot work stops before the archive is read
    let registry = Registry::new(a.registry.plain_http)?;
    let layout = layout::read(&a.archive).map_err(kudo_source::oci::airgap::AirgapError::from)?;
    let runtime = super::runtime()?;
    let (map, done) = runtime.block_on(registry.relocate(&layout, &a.archive, &mirror))?;
    let data = relocate_data(&mirror, &map, &done);
    match a.output {
        Some(DataFormat::Json) => super::print(&format!(
            "{}\n",
            serde_json::to_string_pretty(&data).unwrap_or_default()
        ))?,
        Some(DataFormat::Yaml) => super::print(&super::to_yaml(&data))?,
        None => {
            let prefix = format!("{}/{}", mirror.registry, mirror.repository);
            let mut rows: Vec<Vec<String>> = map
                .images
                .iter()
                .map(|i| {
                    vec![
                        i.image.clone(),
                        format!("{prefix}/{}@{}", i.relocated, i.digest),
                    ]
                })
                .collect();
            rows.extend(map.packages.iter().map(|p| {
                vec![
                    format!("package {} {}", p.name, p.tag),
                    format!("oci://{prefix}/{}:{}", p.relocated, p.tag),
                ]
            }));
            super::print(&format!(
                "{}relocated to {}: {} image(s), {} package(s), {} signature(s); {} blobs pushed \
                 ({} bytes), {} already there, {} manifests\nrelocation map: {}\n",
                super::table(&["FROM", "TO"], &rows),
                mirror,
                map.images.len(),
                map.packages.len(),
                done.signatures,
                done.blobs_pushed,
                done.bytes_pushed,
                done.blobs_present,
                done.manifests,
                done.map
            ))?;
        }
    }
    Ok(Outcome::Done)
}

fn relocate_data(mirror: &Reference, map: &RelocationMap, done: &Relocated) -> Value {
    let prefix = format!("{}/{}", mirror.registry, mirror.repository);
    json!({
        "mirror": mirror.to_string(),
        "map": done.map,
        "blobsPushed": done.blobs_pushed,
        "blobsPresent": done.blobs_present,
        "bytesPushed": done.bytes_pushed,
        "manifests": done.manifests,
        "signatures": done.signatures,
        "images": map.images.iter().map(|i| json!({
            "image": i.image,
            "digest": i.digest,
            "to": format!("{prefix}/{}@{}", i.relocated, i.digest),
        })).collect::<Vec<_>>(),
        "packages": map.packages.iter().map(|p| json!({
            "name": p.name,
            "tag": p.tag,
            "digest": p.digest,
            "to": format!("oci://{prefix}/{}:{}", p.relocated, p.tag),
        })).collect::<Vec<_>>(),
    })
}
