//! The relocation map: what a bundle holds and where each thing goes in a mirror. `kudo package
//! bundle` writes it into the archive, `kudo package relocate` pushes it to the mirror at
//! [`MAP_REPOSITORY`]`:`[`MAP_TAG`] below the mirror's prefix, and an install from the mirror
//! reads it back ([`Registry::read_relocation`]) to run each image from the mirror by digest
//! ([`RelocationMap::image`]).
//!
//! Where a thing goes is relative to the mirror's prefix ([`kudo_pkg::images::relocated`]): an
//! image's repository path (`docker.io/library/zookeeper` → `library/zookeeper`), a package's
//! name. The map is JSON of media type [`MEDIA_TYPE`]:
//!
//! ```json
//! {"schemaVersion": 1,
//!  "images": [{"image": "zookeeper:3.6.2", "registry": "docker.io",
//!    "repository": "library/zookeeper", "tag": "3.6.2", "digest": "sha256:...",
//!    "mediaType": "application/vnd.oci.image.index.v1+json", "relocated": "library/zookeeper",
//!    "signatures": [{"kind": "cosignTag", "tag": "sha256-....sig", "digest": "sha256:..."}]}],
//!  "packages": [{"name": "zookeeper", "operatorVersion": "0.3.3", "appVersion": "3.6.2",
//!    "digest": "sha256:...", "packageDigest": "...", "relocated": "zookeeper",
//!    "tag": "3.6.2_0.3.3", "from": "oci://...", "signatures": []}]}
//! ```

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{OciError, Reference, Registry};

/// The map's media type (the map blob's, and the artifact type of the manifest holding it).
pub const MEDIA_TYPE: &str = "application/vnd.kudo.relocation.v1+json";
/// The repository, below the mirror's prefix, that holds the map.
pub const MAP_REPOSITORY: &str = "kudo-relocation";
/// The map's tag there.
pub const MAP_TAG: &str = "latest";
/// The version of the map's format.
pub const SCHEMA_VERSION: u32 = 1;
/// The largest map read back.
pub const MAX_MAP_BYTES: usize = 4 * 1024 * 1024;

/// What a bundle holds, and where each of it goes below a mirror's prefix.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RelocationMap {
    /// [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// The images, each once, sorted as written.
    pub images: Vec<ImageEntry>,
    /// The packages, each once, a dependency before what depends on it.
    pub packages: Vec<PackageEntry>,
    /// The mirror the map was read from (`REGISTRY/PREFIX`): set by
    /// [`Registry::read_relocation`], never written.
    #[serde(skip)]
    pub mirror: Option<String>,
}

/// An image of a bundle.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImageEntry {
    /// As the templates write it (`zookeeper:3.6.2`).
    pub image: String,
    /// Its registry (`docker.io`).
    pub registry: String,
    /// Its repository (`library/zookeeper`).
    pub repository: String,
    /// Its tag, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tag: Option<String>,
    /// The manifest (or image index) digest copied.
    pub digest: String,
    /// The manifest's media type.
    pub media_type: String,
    /// Its repository below the mirror's prefix.
    pub relocated: String,
    /// Its signatures, copied beside it.
    #[serde(default)]
    pub signatures: Vec<Signature>,
}

/// A package of a bundle.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PackageEntry {
    /// Its name.
    pub name: String,
    /// `operatorVersion`.
    pub operator_version: String,
    /// `appVersion`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app_version: Option<String>,
    /// Its manifest's digest (the artifact `kudo package push` writes).
    pub digest: String,
    /// The sha256 of its `.tgz`, hex (as a KUDO `index.yaml` lists it).
    pub package_digest: String,
    /// Its repository below the mirror's prefix (its name: dependencies named by name are
    /// found beside it).
    pub relocated: String,
    /// Its tag, as `kudo package push` tags it.
    pub tag: String,
    /// Where it was bundled from (a folder, a file, `oci://...`, a repository).
    pub from: String,
    /// Its signatures, copied beside it (a package from a registry).
    #[serde(default)]
    pub signatures: Vec<Signature>,
}

/// A signature copied beside what it signs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Signature {
    /// Which of cosign's layouts.
    pub kind: SignatureKind,
    /// The signature's manifest (the `.sig` tag's, or the referrer's).
    pub digest: String,
    /// Its media type.
    pub media_type: String,
    /// The tag it is pushed under (`sha256-HEX.sig`); none for a referrer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tag: Option<String>,
    /// A referrer's artifact type (a Sigstore bundle's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifact_type: Option<String>,
    /// A referrer's annotations, as the referrers index lists them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<BTreeMap<String, String>>,
}

/// Where a signature is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum SignatureKind {
    /// cosign 2's `.sig` tag.
    CosignTag,
    /// A referrer (cosign 3's Sigstore bundle): listed by the referrers API, else by the
    /// fallback tag `sha256-HEX`.
    Referrer,
}

impl RelocationMap {
    /// An empty map.
    pub fn new() -> RelocationMap {
        RelocationMap {
            schema_version: SCHEMA_VERSION,
            ..RelocationMap::default()
        }
    }

    /// The mirror's reference for `image` as the templates write it:
    /// `REGISTRY/PREFIX/RELOCATED@DIGEST`. `None` when the map does not hold it, or was not
    /// read from a mirror.
    pub fn image(&self, image: &str) -> Option<String> {
        let mirror = self.mirror.as_deref()?;
        let entry = self.images.iter().find(|e| e.image == image)?;
        Some(format!("{mirror}/{}@{}", entry.relocated, entry.digest))
    }

    /// Every image the map holds, as written → its mirror reference ([`RelocationMap::image`]):
    /// what [`kudo_pkg::images::rewrite`] takes.
    pub fn images(&self) -> BTreeMap<String, String> {
        self.images
            .iter()
            .filter_map(|e| Some((e.image.clone(), self.image(&e.image)?)))
            .collect()
    }

    /// The mirror's reference of package `name` at `tag`: `oci://REGISTRY/PREFIX/NAME:TAG`.
    pub fn package(&self, name: &str, tag: &str) -> Option<String> {
        let mirror = self.mirror.as_deref()?;
        let entry = self
            .packages
            .iter()
            .find(|p| p.name == name && p.tag == tag)?;
        Some(format!("oci://{mirror}/{}:{}", entry.relocated, entry.tag))
    }
}

/// Reads the relocation map relocated to `mirror` (`oci://REGISTRY/PREFIX`).
pub async fn read_relocation(
    registry: &Registry,
    mirror: &Reference,
) -> Result<RelocationMap, OciError> {
    registry.read_relocation(mirror).await
}

impl Registry {
    /// The relocation map at `MIRROR/PREFIX/kudo-relocation:latest` ([`MAP_REPOSITORY`],
    /// [`MAP_TAG`]), for `mirror` `oci://REGISTRY/PREFIX`: read within [`MAX_MAP_BYTES`],
    /// checked against its digest, with [`RelocationMap::mirror`] set.
    pub async fn read_relocation(&self, mirror: &Reference) -> Result<RelocationMap, OciError> {
        let at = mirror.join(MAP_REPOSITORY)?.with_tag(MAP_TAG);
        let image = at.image();
        let (auth, sent) = self.auth(&at.registry)?;
        let fail = |e| self.error(&at, &sent, e);
        let (raw, _) = self
            .client
            .pull_manifest_raw(&image, &auth, &[oci_client::manifest::OCI_IMAGE_MEDIA_TYPE])
            .await
            .map_err(fail)?;
        let bad = |answer: String| OciError::Registry {
            reference: at.to_string(),
            answer,
        };
        let manifest: oci_client::manifest::OciImageManifest =
            serde_json::from_slice(&raw).map_err(|e| bad(format!("its manifest: {e}")))?;
        let layer = manifest
            .layers
            .iter()
            .find(|l| l.media_type == MEDIA_TYPE)
            .ok_or_else(|| bad(format!("its manifest holds no layer of {MEDIA_TYPE}")))?;
        if layer.size < 0 || layer.size as usize > MAX_MAP_BYTES {
            return Err(bad(format!(
                "the map is {} bytes; kudo reads at most {MAX_MAP_BYTES}",
                layer.size
            )));
        }
        let mut bytes = Vec::with_capacity(layer.size as usize);
        // oci-client checks the layer's digest
        self.client
            .pull_blob(&image, layer, &mut bytes)
            .await
            .map_err(fail)?;
        let mut map: RelocationMap =
            serde_json::from_slice(&bytes).map_err(|e| bad(format!("the map: {e}")))?;
        if map.schema_version != SCHEMA_VERSION {
            return Err(bad(format!(
                "the map's schemaVersion is {}; kudo reads {SCHEMA_VERSION}",
                map.schema_version
            )));
        }
        map.mirror = Some(format!("{}/{}", mirror.registry, mirror.repository));
        Ok(map)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map() -> RelocationMap {
        let mut m = RelocationMap::new();
        m.images.push(ImageEntry {
            image: "zookeeper:3.6.2".into(),
            registry: "docker.io".into(),
            repository: "library/zookeeper".into(),
            tag: Some("3.6.2".into()),
            digest: format!("sha256:{}", "a".repeat(64)),
            media_type: "application/vnd.oci.image.index.v1+json".into(),
            relocated: "library/zookeeper".into(),
            signatures: Vec::new(),
        });
        m.packages.push(PackageEntry {
            name: "zookeeper".into(),
            operator_version: "0.3.3".into(),
            app_version: Some("3.6.2".into()),
            digest: format!("sha256:{}", "b".repeat(64)),
            package_digest: "c".repeat(64),
            relocated: "zookeeper".into(),
            tag: "3.6.2_0.3.3".into(),
            from: "./zookeeper".into(),
            signatures: Vec::new(),
        });
        m
    }

    #[test]
    fn an_image_is_found_by_how_the_templates_write_it_once_a_mirror_is_known() {
        let mut m = map();
        assert_eq!(
            m.image("zookeeper:3.6.2"),
            None,
            "no mirror: nothing to point at"
        );
        m.mirror = Some("mirror:5000/air".into());
        let cases: &[(&str, Option<String>)] = &[
            (
                "zookeeper:3.6.2",
                Some(format!(
                    "mirror:5000/air/library/zookeeper@sha256:{}",
                    "a".repeat(64)
                )),
            ),
            // another spelling of the same image is another key: the map keeps what was written
            ("docker.io/library/zookeeper:3.6.2", None),
            ("zookeeper:3.6.3", None),
        ];
        for (image, want) in cases {
            assert_eq!(&m.image(image), want, "image {image}");
        }
        assert_eq!(m.images().len(), 1);
        assert_eq!(
            m.package("zookeeper", "3.6.2_0.3.3").as_deref(),
            Some("oci://mirror:5000/air/zookeeper:3.6.2_0.3.3")
        );
    }

    #[test]
    fn the_map_reads_back_what_it_writes_and_never_writes_the_mirror() {
        let mut m = map();
        m.mirror = Some("mirror:5000/air".into());
        let text = serde_json::to_string(&m).unwrap();
        assert!(!text.contains("mirror:5000"), "{text}");
        let back: RelocationMap = serde_json::from_str(&text).unwrap();
        assert_eq!(back.images, m.images);
        assert_eq!(back.packages, m.packages);
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["schemaVersion"], 1);
        assert_eq!(v["images"][0]["relocated"], "library/zookeeper");
        assert_eq!(v["packages"][0]["operatorVersion"], "0.3.3");
    }
}
