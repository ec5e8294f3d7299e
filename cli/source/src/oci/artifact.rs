//! What a kudo package is in a registry: an OCI image manifest whose config is
//! [`CONFIG_MEDIA_TYPE`] (the package's `name`, `operatorVersion`, `appVersion`, `description`
//! and `maintainers`) and whose one layer is [`PACKAGE_MEDIA_TYPE`], the `.tgz` byte for byte
//! (annotated with its file name, so `oras pull` writes `NAME-VERSION.tgz`). The manifest is
//! annotated with `org.opencontainers.image.title` (the name) and
//! `org.opencontainers.image.version` (the tag), and has no creation time: the same `.tgz`
//! always gives the same manifest, byte for byte ([`Artifact::of`]). Anything else a registry
//! holds is told apart by its media types ([`foreign`]).

use oci_client::client::{Config, ImageLayer};
use oci_client::manifest::{OCI_IMAGE_MEDIA_TYPE, OciDescriptor, OciImageManifest, OciManifest};
use serde_json::{Map, Value};

use super::{OciError, Reference, sha256_hex, tag_for};

/// The media type of a package's config: a JSON of its name, versions, description and
/// maintainers.
pub const CONFIG_MEDIA_TYPE: &str = "application/vnd.kudo.operator.config.v1+json";
/// The media type of a package's one layer: the `.tgz` itself.
pub const PACKAGE_MEDIA_TYPE: &str = "application/vnd.kudo.operator.package.v1.tar+gzip";
/// The annotation of the package's name (on the manifest) and file name (on the layer, so
/// `oras pull` writes `NAME-VERSION.tgz`).
const TITLE: &str = "org.opencontainers.image.title";
/// The annotation of the tag.
const VERSION: &str = "org.opencontainers.image.version";
/// Helm's chart config: a chart is the artifact most likely pulled by mistake.
const HELM_CONFIG_MEDIA_TYPE: &str = "application/vnd.cncf.helm.config.v1+json";
/// Container image configs (OCI and Docker).
const IMAGE_CONFIG_MEDIA_TYPES: [&str; 2] = [
    "application/vnd.oci.image.config.v1+json",
    "application/vnd.docker.container.image.v1+json",
];
/// The most bytes a package may have, as `kudo_pkg` reads archives.
pub(super) const MAX_PACKAGE_BYTES: u64 = kudo_pkg::package::MAX_PACKAGE_BYTES;

/// A package as it is pushed: its blobs, its manifest and where it goes.
pub(super) struct Artifact {
    /// `oci://REGISTRY/PATH/NAME:TAG`.
    pub reference: Reference,
    /// The `.tgz`.
    pub layer: ImageLayer,
    /// The config JSON.
    pub config: Config,
    /// The manifest, whose descriptors name the two blobs.
    pub manifest: OciImageManifest,
    /// The manifest as it is pushed (its sha256 is its digest).
    pub body: Vec<u8>,
}

impl Artifact {
    /// The artifact of the package in `tgz`, pushed below `target` (`oci://REGISTRY/PATH`).
    pub fn of(target: &Reference, tgz: &[u8]) -> Result<Artifact, OciError> {
        let meta = PackageMeta::read(tgz)?;
        let tag = tag_for(&meta.operator_version, meta.app_version.as_deref())?;
        let reference = target.join(&meta.name)?.with_tag(&tag);
        let layer = ImageLayer::new(
            tgz.to_vec(),
            PACKAGE_MEDIA_TYPE.to_string(),
            Some([(TITLE.to_string(), meta.file_name())].into()),
        );
        let config = Config::new(meta.config_json()?, CONFIG_MEDIA_TYPE.to_string(), None);
        let annotations = [
            (TITLE.to_string(), meta.name.clone()),
            (VERSION.to_string(), tag),
        ];
        let mut manifest = OciImageManifest::build(
            std::slice::from_ref(&layer),
            &config,
            Some(annotations.into()),
        );
        manifest.media_type = Some(OCI_IMAGE_MEDIA_TYPE.to_string());
        let body = serde_json::to_vec(&manifest).map_err(|e| OciError::Internal(e.to_string()))?;
        Ok(Artifact {
            reference,
            layer,
            config,
            manifest,
            body,
        })
    }

    /// The manifest's digest, `sha256:HEX`.
    pub fn manifest_digest(&self) -> String {
        format!("sha256:{}", sha256_hex(&self.body))
    }
}

/// The end of the message for something that is not a kudo package.
const WHAT_KUDO_PULLS: &str = "; kudo pulls what `kudo package push` pushed: a config of \
    application/vnd.kudo.operator.config.v1+json and one layer of \
    application/vnd.kudo.operator.package.v1.tar+gzip";

/// The layer holding the package, when `manifest` is a kudo package's; else what it is (an
/// image index, a Helm chart, ...).
pub(super) fn package_layer(manifest: &OciManifest) -> Result<&OciDescriptor, String> {
    match manifest {
        OciManifest::ImageIndex(i) => Err(format!(
            "an image index of {} manifests (a multi-platform container image){WHAT_KUDO_PULLS}",
            i.manifests.len()
        )),
        OciManifest::Image(m) => match (foreign(m), m.layers.first()) {
            (None, Some(layer)) => Ok(layer),
            (Some(what), _) => Err(what),
            (None, None) => Err(format!("a manifest without layers{WHAT_KUDO_PULLS}")),
        },
    }
}

/// What a manifest holds when it is not a kudo package; `None` when it is one.
fn foreign(manifest: &OciImageManifest) -> Option<String> {
    let config = manifest.config.media_type.as_str();
    let layers: Vec<&str> = manifest
        .layers
        .iter()
        .map(|l| l.media_type.as_str())
        .collect();
    if config == CONFIG_MEDIA_TYPE && layers == [PACKAGE_MEDIA_TYPE] {
        return None;
    }
    let what = match config {
        HELM_CONFIG_MEDIA_TYPE => "a Helm chart".to_string(),
        c if IMAGE_CONFIG_MEDIA_TYPES.contains(&c) => "a container image".to_string(),
        CONFIG_MEDIA_TYPE => "a kudo package manifest with other layers".to_string(),
        _ => match &manifest.artifact_type {
            Some(t) => format!("an artifact of type {t}"),
            None => "an artifact".to_string(),
        },
    };
    Some(format!(
        "{what} (config {config}, layers [{}]){WHAT_KUDO_PULLS}",
        layers.join(", ")
    ))
}

/// A package's metadata, read from its `.tgz`.
#[derive(Debug)]
pub(super) struct PackageMeta {
    name: String,
    operator_version: String,
    app_version: Option<String>,
    description: Option<Value>,
    maintainers: Option<Value>,
}

impl PackageMeta {
    /// Loads the package in `tgz` (through a temporary file, as `kudo_pkg` reads archives).
    pub(super) fn read(tgz: &[u8]) -> Result<PackageMeta, OciError> {
        let refuse = |reason: String| OciError::NotAPackage { reason };
        if tgz.len() as u64 > MAX_PACKAGE_BYTES {
            return Err(refuse(format!(
                "{} bytes, more than the {MAX_PACKAGE_BYTES} bytes kudo reads",
                tgz.len()
            )));
        }
        if !tgz.starts_with(&[0x1f, 0x8b]) {
            return Err(refuse(
                "not gzip data (push the .tgz `kudo package create` writes)".into(),
            ));
        }
        let io = |e: std::io::Error| OciError::Internal(format!("a temporary file: {e}"));
        let dir = tempfile::tempdir().map_err(io)?;
        let path = dir.path().join("package.tgz");
        std::fs::write(&path, tgz).map_err(io)?;
        let pkg = kudo_pkg::Package::load(&path).map_err(|e| {
            refuse(
                e.to_string()
                    .replace(&path.display().to_string(), "the archive"),
            )
        })?;
        let op = pkg.operator();
        let doc = pkg.operator_document().value();
        let field = |k: &str| doc.get(k).filter(|v| !v.is_null()).cloned();
        Ok(PackageMeta {
            name: op.name.clone(),
            operator_version: pkg.version(),
            app_version: op.app_version.clone().filter(|a| !a.is_empty()),
            description: field("description"),
            maintainers: field("maintainers"),
        })
    }

    /// The artifact's config: the fields a registry's UI or `oras manifest fetch-config` shows.
    fn config_json(&self) -> Result<Vec<u8>, OciError> {
        let mut config = Map::new();
        config.insert("name".into(), Value::String(self.name.clone()));
        config.insert(
            "operatorVersion".into(),
            Value::String(self.operator_version.clone()),
        );
        if let Some(a) = &self.app_version {
            config.insert("appVersion".into(), Value::String(a.clone()));
        }
        if let Some(d) = &self.description {
            config.insert("description".into(), d.clone());
        }
        if let Some(m) = &self.maintainers {
            config.insert("maintainers".into(), m.clone());
        }
        serde_json::to_vec(&config).map_err(|e| OciError::Internal(e.to_string()))
    }

    /// The archive's name as `kudo package create` writes it.
    fn file_name(&self) -> String {
        format!("{}-{}.tgz", self.name, self.operator_version)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest(config: &str, layers: &[&str]) -> OciImageManifest {
        let mut m = OciImageManifest::default();
        m.config.media_type = config.into();
        for l in layers {
            m.layers.push(oci_client::manifest::OciDescriptor {
                media_type: (*l).into(),
                ..Default::default()
            });
        }
        m
    }

    #[test]
    fn only_a_kudo_manifest_is_a_package() {
        let cases: &[(&str, &[&str], Option<&str>)] = &[
            (CONFIG_MEDIA_TYPE, &[PACKAGE_MEDIA_TYPE], None),
            (
                HELM_CONFIG_MEDIA_TYPE,
                &["application/vnd.cncf.helm.chart.content.v1.tar+gzip"],
                Some("a Helm chart"),
            ),
            (
                "application/vnd.oci.image.config.v1+json",
                &["application/vnd.oci.image.layer.v1.tar+gzip"],
                Some("a container image"),
            ),
            (
                CONFIG_MEDIA_TYPE,
                &[PACKAGE_MEDIA_TYPE, PACKAGE_MEDIA_TYPE],
                Some("a kudo package manifest with other layers"),
            ),
            (
                CONFIG_MEDIA_TYPE,
                &[],
                Some("a kudo package manifest with other layers"),
            ),
            ("application/x-other", &["a/b"], Some("an artifact")),
        ];
        for (config, layers, want) in cases {
            let got = foreign(&manifest(config, layers));
            match want {
                None => assert_eq!(got, None, "{config} {layers:?}"),
                Some(what) => {
                    let got = got.unwrap_or_default();
                    assert!(got.starts_with(what), "{config} {layers:?}: {got}");
                    assert!(got.contains(PACKAGE_MEDIA_TYPE), "{got}");
                }
            }
        }
    }

    #[test]
    fn a_package_s_metadata_comes_from_its_archive() {
        let dir = kudo_pkg::create_archive(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../examples/zookeeper-v1beta1"),
        )
        .unwrap()
        .0;
        let meta = PackageMeta::read(&dir).unwrap();
        assert_eq!(meta.name, "zookeeper");
        let config: Value = serde_json::from_slice(&meta.config_json().unwrap()).unwrap();
        assert_eq!(config["name"], "zookeeper");
        assert_eq!(config["operatorVersion"], meta.operator_version.as_str());
        assert!(matches!(
            PackageMeta::read(b"plain text"),
            Err(OciError::NotAPackage { .. })
        ));
        // gzip's magic, then nothing gzip can read
        let not_a_package = [0x1f, 0x8b, 0x08, 0x00, 0xff, 0xff, 0xff];
        match PackageMeta::read(&not_a_package) {
            Err(OciError::NotAPackage { reason }) => {
                assert!(!reason.contains("package.tgz"), "{reason}")
            }
            other => panic!("{other:?}"),
        }
    }
}
