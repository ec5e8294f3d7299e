//! `kudo install|upgrade --mirror oci://MIRROR/PREFIX` (or `mirror:` in kudo's
//! configuration): an air-gapped install from what `kudo package relocate` pushed there
//! (`docs/air-gap.md`). The relocation map it pushed (`PREFIX/kudo-relocation:latest`) says
//! where each package and image went: a package named by name is installed from its copy in
//! the mirror (its KudoOperator dependencies beside it), and every image the templates write is
//! run from its copy, by digest ([`MirrorPins::annotation`], read by the manager through
//! `kudo.dev/images`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use kudo_source::oci::relocation::RelocationMap;
use kudo_source::oci::{Reference, Registry};
use serde_json::{Value, json};

use crate::args::LookupArgs;
use crate::error::Error;

/// A mirror's relocation map, read.
#[derive(Debug)]
pub struct Mirror {
    /// `REGISTRY/PREFIX`.
    pub prefix: String,
    /// What was relocated there.
    pub map: RelocationMap,
}

impl Mirror {
    /// The mirror `flag` names, else the configuration's `mirror:`; `None` without either.
    /// Reads its relocation map (over plain HTTP with `plain_http`).
    pub fn of(flag: Option<&str>, plain_http: bool) -> Result<Option<Mirror>, Error> {
        let given = match flag {
            Some(m) => Some(m.to_string()),
            None => {
                let home = kudo_source::repo::Home::from_env()?;
                kudo_source::repo::Repositories::load(&home)?.mirror
            }
        };
        let Some(given) = given else {
            return Ok(None);
        };
        let mirror = Reference::parse(&given)?;
        if mirror.tag.is_some() {
            return Err(Error::Usage(format!(
                "--mirror {given}: a mirror names no tag (oci://REGISTRY/PREFIX)"
            )));
        }
        let registry = Registry::new(plain_http)?;
        let map = super::runtime()?.block_on(registry.read_relocation(&mirror))?;
        Ok(Some(Mirror {
            prefix: format!("{}/{}", mirror.registry, mirror.repository),
            map,
        }))
    }

    /// The package `package` means: a name (no such file, not a reference) is the newest
    /// copy in the mirror that `--operator-version`/`--app-version` accept; anything else is
    /// itself.
    pub fn package(&self, package: &Path, lookup: &LookupArgs) -> Result<PathBuf, Error> {
        let text = package.to_string_lossy();
        if package.exists() || text.contains("://") || text.contains('/') {
            return Ok(package.to_path_buf());
        }
        let want = lookup.want()?;
        let best = self
            .map
            .packages
            .iter()
            .filter(|p| p.name == text)
            .filter(|p| want.accepts_versions(&p.operator_version, p.app_version.as_deref()))
            .max_by(|a, b| {
                let v = |p: &kudo_source::oci::relocation::PackageEntry| {
                    semver::Version::parse(&p.operator_version).ok()
                };
                v(a).cmp(&v(b))
            });
        match best.and_then(|p| self.map.package(&p.name, &p.tag)) {
            Some(r) => Ok(PathBuf::from(r)),
            None => {
                let held: Vec<String> = self
                    .map
                    .packages
                    .iter()
                    .map(|p| format!("{} {}", p.name, p.operator_version))
                    .collect();
                Err(Error::Usage(format!(
                    "{text}: the mirror {} holds no such package{} (its relocation map lists: {})",
                    self.prefix,
                    if !want.is_any() {
                        " in the versions asked"
                    } else {
                        ""
                    },
                    if held.is_empty() {
                        "nothing".to_string()
                    } else {
                        held.join(", ")
                    }
                )))
            }
        }
    }

    /// Every image of the map as written, with its copy in the mirror.
    pub fn pins(&self) -> MirrorPins {
        MirrorPins {
            prefix: self.prefix.clone(),
            pins: self.map.images(),
            digests: self
                .map
                .images
                .iter()
                .map(|e| (e.image.clone(), e.digest.clone()))
                .collect(),
        }
    }
}

/// The images of a mirror: as written → `REGISTRY/PREFIX/RELOCATED@DIGEST`.
#[derive(Debug, Clone)]
pub struct MirrorPins {
    /// `REGISTRY/PREFIX`.
    pub prefix: String,
    /// As written → the copy.
    pub pins: BTreeMap<String, String>,
    /// As written → its digest.
    digests: BTreeMap<String, String>,
}

impl MirrorPins {
    /// The `kudo.dev/images` entries that run every image of the map from the mirror:
    /// `{"digest", "pinned", "mirror"}` (the manager accepts such a pin only at the image's
    /// relocated repository below `mirror`, `kudo_crd::labels::image_pins`).
    pub fn annotation(&self) -> serde_json::Map<String, Value> {
        self.pins
            .iter()
            .map(|(image, pinned)| {
                (
                    image.clone(),
                    json!({"digest": self.digests.get(image), "pinned": pinned, "mirror": self.prefix}),
                )
            })
            .collect()
    }
}
