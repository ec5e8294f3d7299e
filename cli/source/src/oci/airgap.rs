//! Air-gapped installs: packages, their images and every signature of either, copied into one
//! OCI image layout archive ([`Bundler`], `kudo package bundle`), then from the archive into a
//! mirror registry ([`Registry::relocate`], `kudo package relocate`).
//!
//! A bundle holds, each blob once ([`super::layout`]):
//!
//! - each package as the artifact `kudo package push` writes (a package from a registry is
//!   copied as it is there, by digest, so that its signatures still name it);
//! - each image by digest: its manifest, or its image index and every manifest it lists (at
//!   most [`MAX_INDEX_MANIFESTS`], each at most [`MAX_MANIFEST_BYTES`]), and their blobs;
//! - the signatures of each image and registry package: cosign's `.sig` tag and every referrer
//!   (cosign 3's Sigstore bundles; the referrers API, else the fallback tag `sha256-HEX`), at
//!   most [`super::bundle::MAX_BUNDLES`]. None found is not an error: the summary says so;
//! - the relocation map ([`super::relocation`]), as an artifact of type
//!   [`relocation::MEDIA_TYPE`], listed in `index.json` with the tag [`relocation::MAP_TAG`].
//!
//! Where each goes below the mirror's prefix is [`kudo_pkg::images::relocated`] (an image's
//! repository path) or a package's name. Two images of different registries with the same
//! path, or an image at a package's name, cannot share a mirror: [`Bundler::add_image`] refuses
//! the second, naming both.
//!
//! Relocation pushes what the map lists, each blob after checking the mirror lacks it (HEAD),
//! each manifest by digest (and an image's or a package's under its tag too), each signature
//! beside what it signs (the `.sig` tag; referrers by digest, then the fallback tag when the
//! mirror's referrers API does not list them), and last the map at
//! `PREFIX/kudo-relocation:latest`. The archive was checked whole before ([`super::layout::read`]).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use oci_client::manifest::{ImageIndexEntry, OCI_IMAGE_MEDIA_TYPE, OciDescriptor};
use serde_json::Value;

use super::artifact::Artifact;
use super::bundle::MAX_BUNDLES;
use super::layout::{
    self, INDEX_MEDIA_TYPE, Layout, LayoutError, MAX_INDEX_MANIFESTS, MAX_MANIFEST_BYTES, Writer,
    Written,
};
use super::relocation::{
    self, ImageEntry, MAP_REPOSITORY, MAP_TAG, PackageEntry, RelocationMap, Signature,
    SignatureKind,
};
use super::signature::signature_tag;
use super::{OciError, Reference, Registry, sha256_hex, versions_of_tag};

/// The manifest media types asked of a registry: OCI's and Docker's, images and indexes.
const ACCEPT: [&str; 4] = [
    OCI_IMAGE_MEDIA_TYPE,
    INDEX_MEDIA_TYPE,
    "application/vnd.docker.distribution.manifest.v2+json",
    "application/vnd.docker.distribution.manifest.list.v2+json",
];
/// The annotation of `index.json` entries naming a tag (image-spec's).
const REF_NAME: &str = "org.opencontainers.image.ref.name";
/// The annotation of `index.json` entries naming the repository below the mirror's prefix.
const RELOCATED: &str = "dev.kudo.relocated";
/// The annotation of `index.json` entries saying what they are (`image`, `package`,
/// `signature`, `relocation-map`).
const KIND: &str = "dev.kudo.kind";
/// The empty config of the map's artifact.
const EMPTY_MEDIA_TYPE: &str = "application/vnd.oci.empty.v1+json";
/// The host of the placeholder reference a package's artifact is built against (the artifact
/// does not depend on where it goes).
const NOWHERE: &str = "bundle.invalid";

/// Why a bundle or a relocation stopped.
#[derive(Debug, thiserror::Error)]
pub enum AirgapError {
    /// A registry refused or failed.
    #[error(transparent)]
    Oci(#[from] OciError),
    /// The archive cannot be written, or is not whole.
    #[error(transparent)]
    Layout(#[from] LayoutError),
    /// An image cannot be copied (not in its registry, too large, ...).
    #[error("image {image}: {source}")]
    Image {
        /// As the templates write it.
        image: String,
        /// Why.
        #[source]
        source: Box<OciError>,
    },
    /// Two things would go to the same repository of the mirror.
    #[error(
        "{first} and {second} would both go to {relocated} below the mirror's prefix (a mirror \
         keeps an image's repository path, not its registry); bundle them separately"
    )]
    Collision {
        /// The repository below the prefix.
        relocated: String,
        /// The first one bundled.
        first: String,
        /// The one refused.
        second: String,
    },
    /// The archive holds no relocation map, or one kudo cannot read.
    #[error("{}: {why}", archive.display())]
    Map {
        /// The archive.
        archive: PathBuf,
        /// Why.
        why: String,
    },
}

/// A `Result` with an [`AirgapError`].
pub type Result<T, E = AirgapError> = std::result::Result<T, E>;

/// A package to bundle.
#[derive(Debug, Clone)]
pub struct PackageSource {
    /// Its `.tgz`.
    pub tgz: Vec<u8>,
    /// Where it came from, said in the map (`./zookeeper`, `oci://...`, a repository).
    pub from: String,
    /// For a package from a registry: its reference and manifest digest; it is copied as it
    /// is there (so its signatures still name it), with its signatures.
    pub registry: Option<(Reference, String)>,
}

/// A bundle being written.
pub struct Bundler<'r> {
    registry: &'r Registry,
    writer: Writer,
    map: RelocationMap,
    /// Repository below the prefix → what goes there (`REGISTRY/REPOSITORY`, `package NAME`).
    owners: BTreeMap<String, String>,
    /// What no signature was found for.
    unsigned: Vec<String>,
}

/// A bundle written.
#[derive(Debug, Clone)]
pub struct Bundled {
    /// What it holds.
    pub map: RelocationMap,
    /// The images and packages no signature was found for.
    pub unsigned: Vec<String>,
    /// Blobs, bytes.
    pub written: Written,
}

/// The descriptor fields of a manifest's children: digest, media type, size.
type Child = (String, String, i64);

/// A manifest's media type: its own `mediaType`, else an index for a `manifests` list.
fn media_type_of(v: &Value) -> String {
    match v.get("mediaType").and_then(Value::as_str) {
        Some(t) => t.to_string(),
        None if v.get("manifests").is_some() => INDEX_MEDIA_TYPE.into(),
        None => OCI_IMAGE_MEDIA_TYPE.into(),
    }
}

fn children(v: &Value) -> Vec<Child> {
    let one = |d: &Value| {
        Some((
            d.get("digest")?.as_str()?.to_string(),
            d.get("mediaType")?.as_str()?.to_string(),
            d.get("size")?.as_i64()?,
        ))
    };
    let mut out: Vec<Child> = v.get("config").and_then(one).into_iter().collect();
    for key in ["layers", "manifests"] {
        out.extend(
            v.get(key)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(one),
        );
    }
    out
}

impl<'r> Bundler<'r> {
    /// A bundle staged in `folder` (where the archive goes), copying from `registry`.
    pub fn new(registry: &'r Registry, folder: &Path) -> Result<Bundler<'r>> {
        Ok(Bundler {
            registry,
            writer: Writer::new(folder)?,
            map: RelocationMap::new(),
            owners: BTreeMap::new(),
            unsigned: Vec::new(),
        })
    }

    /// Claims `relocated` for `what`: refused when something else has it.
    fn claim(&mut self, relocated: &str, what: String) -> Result<()> {
        match self.owners.get(relocated) {
            Some(first) if *first != what => Err(AirgapError::Collision {
                relocated: relocated.to_string(),
                first: first.clone(),
                second: what,
            }),
            Some(_) => Ok(()),
            None => {
                self.owners.insert(relocated.to_string(), what);
                Ok(())
            }
        }
    }

    /// Adds image `image` (as the templates write it; `reference` as the distribution spec
    /// reads it): copied by digest, with its signatures. An image already added is not
    /// copied again.
    pub async fn add_image(
        &mut self,
        image: &str,
        reference: &kudo_pkg::images::Reference,
    ) -> Result<()> {
        if self.map.images.iter().any(|e| e.image == image) {
            return Ok(());
        }
        let relocated = kudo_pkg::images::relocated(reference, "");
        let whole = format!("{}/{}", reference.registry(), reference.repository());
        self.claim(&relocated, whole)?;
        let repo = Reference {
            registry: reference.registry().to_string(),
            repository: reference.repository().to_string(),
            tag: Some(reference.tag().unwrap_or("latest").to_string()),
        };
        let failed = |e| match e {
            AirgapError::Oci(source) => AirgapError::Image {
                image: image.to_string(),
                source: Box::new(source),
            },
            e => e,
        };
        let (digest, media_type, size) = self
            .copy_manifest(&repo, reference.digest(), image)
            .await
            .map_err(failed)?;
        let signatures = self
            .copy_signatures(&repo, &digest, &relocated)
            .await
            .map_err(failed)?;
        if signatures.is_empty() {
            self.unsigned.push(format!("image {image}"));
        }
        let tag = match reference.digest() {
            Some(_) => None,
            None => Some(reference.tag().unwrap_or("latest").to_string()),
        };
        self.list(
            &digest,
            &media_type,
            size,
            "image",
            &relocated,
            tag.as_deref(),
        );
        self.map.images.push(ImageEntry {
            image: image.to_string(),
            registry: reference.registry().to_string(),
            repository: reference.repository().to_string(),
            tag,
            digest,
            media_type,
            relocated,
            signatures,
        });
        Ok(())
    }

    /// Adds a package: the artifact `kudo package push` writes, or (from a registry) the
    /// registry's manifest by digest with its signatures. A package of the same name and
    /// versions already added is not added again.
    pub async fn add_package(&mut self, p: &PackageSource) -> Result<()> {
        let nowhere = Reference {
            registry: NOWHERE.into(),
            repository: String::new(),
            tag: None,
        };
        let artifact = Artifact::of(&nowhere, &p.tgz)?;
        let name = artifact.reference.name().to_string();
        let tag = artifact.reference.tag.clone().unwrap_or_default();
        if self
            .map
            .packages
            .iter()
            .any(|e| e.name == name && e.tag == tag)
        {
            return Ok(());
        }
        self.claim(&name, format!("package {name}"))?;
        let (app_version, operator_version) =
            versions_of_tag(&tag).unwrap_or((None, tag.to_string()));
        let (digest, size, signatures) = match &p.registry {
            Some((at, digest)) => {
                let (digest, _, size) = self
                    .copy_manifest(at, Some(digest), &at.to_string())
                    .await?;
                let signatures = self.copy_signatures(at, &digest, &name).await?;
                if signatures.is_empty() {
                    self.unsigned.push(format!("package {}", at));
                }
                (digest, size, signatures)
            }
            None => {
                self.writer.add(&artifact.layer.data)?;
                self.writer.add(&artifact.config.data)?;
                let digest = self.writer.add(&artifact.body)?;
                (digest, artifact.body.len() as i64, Vec::new())
            }
        };
        self.list(
            &digest,
            OCI_IMAGE_MEDIA_TYPE,
            size,
            "package",
            &name,
            Some(&tag),
        );
        self.map.packages.push(PackageEntry {
            name: name.clone(),
            operator_version,
            app_version,
            digest,
            package_digest: sha256_hex(&p.tgz),
            relocated: name,
            tag,
            from: p.from.clone(),
            signatures,
        });
        Ok(())
    }

    /// Lists a manifest in `index.json`.
    fn list(
        &mut self,
        digest: &str,
        media_type: &str,
        size: i64,
        kind: &str,
        relocated: &str,
        tag: Option<&str>,
    ) {
        let mut annotations = BTreeMap::from([
            (KIND.to_string(), kind.to_string()),
            (RELOCATED.to_string(), relocated.to_string()),
        ]);
        if let Some(t) = tag {
            annotations.insert(REF_NAME.to_string(), t.to_string());
        }
        self.writer.entry(ImageIndexEntry {
            media_type: media_type.to_string(),
            digest: digest.to_string(),
            size,
            platform: None,
            annotations: Some(annotations),
            artifact_type: None,
        });
    }

    /// Copies the manifest of `at` (by `digest` when given, else by its tag) and what it
    /// names: an index's manifests (at most [`MAX_INDEX_MANIFESTS`]) and every blob. Its
    /// digest, media type and size.
    async fn copy_manifest(
        &mut self,
        at: &Reference,
        digest: Option<&str>,
        what: &str,
    ) -> Result<(String, String, i64)> {
        let (raw, digest, v) = self.pull_manifest(at, digest, what).await?;
        let media_type = media_type_of(&v);
        let listed = children(&v);
        if layout::is_manifest(&media_type) && v.get("manifests").is_some() {
            if listed.len() > MAX_INDEX_MANIFESTS {
                return Err(OciError::Registry {
                    reference: what.to_string(),
                    answer: format!(
                        "its image index lists {} manifests; kudo copies at most {MAX_INDEX_MANIFESTS}",
                        listed.len()
                    ),
                }
                .into());
            }
            for (child, _, _) in &listed {
                if self.writer.has(child) {
                    continue;
                }
                let (child_raw, child_digest, cv) =
                    self.pull_manifest(at, Some(child), what).await?;
                self.copy_blobs(at, &children(&cv), what).await?;
                self.writer.add(&child_raw)?;
                debug_assert_eq!(&child_digest, child);
            }
        } else {
            self.copy_blobs(at, &listed, what).await?;
        }
        self.writer.add(&raw)?;
        Ok((digest, media_type, raw.len() as i64))
    }

    /// A manifest, raw, within [`MAX_MANIFEST_BYTES`] (oci-client checks a digest asked for).
    async fn pull_manifest(
        &self,
        at: &Reference,
        digest: Option<&str>,
        what: &str,
    ) -> Result<(bytes::Bytes, String, Value), OciError> {
        let image = match digest {
            Some(d) => oci_client::Reference::with_digest(
                at.registry.clone(),
                at.repository.clone(),
                d.to_string(),
            ),
            None => at.image(),
        };
        let (auth, sent) = self.registry.auth(&at.registry)?;
        let (raw, digest) = self
            .registry
            .client
            .pull_manifest_raw(&image, &auth, &ACCEPT)
            .await
            .map_err(|e| self.registry.error(at, &sent, e))?;
        if raw.len() as u64 > MAX_MANIFEST_BYTES {
            return Err(OciError::Registry {
                reference: what.to_string(),
                answer: format!(
                    "its manifest is {} bytes; kudo copies at most {MAX_MANIFEST_BYTES}",
                    raw.len()
                ),
            });
        }
        let v: Value = serde_json::from_slice(&raw).map_err(|e| OciError::Registry {
            reference: what.to_string(),
            answer: format!("its manifest {digest} is not JSON: {e}"),
        })?;
        Ok((raw, digest, v))
    }

    /// Copies the blobs of `listed` the bundle lacks, streamed to the staging folder; oci-client
    /// checks each against its digest, and the size is checked here.
    async fn copy_blobs(&mut self, at: &Reference, listed: &[Child], what: &str) -> Result<()> {
        let image = at.image();
        for (digest, media_type, size) in listed {
            if self.writer.has(digest) {
                continue;
            }
            let bad = |answer: String| OciError::Registry {
                reference: what.to_string(),
                answer,
            };
            let path = self
                .writer
                .blob_path(digest)
                .ok_or_else(|| bad(format!("blob {digest} is not named by a sha256 digest")))?;
            let file = tokio::fs::File::create(&path)
                .await
                .map_err(|source| LayoutError::Io {
                    path: path.clone(),
                    source,
                })?;
            let descriptor = OciDescriptor {
                media_type: media_type.clone(),
                digest: digest.clone(),
                size: *size,
                ..OciDescriptor::default()
            };
            let (_, sent) = self.registry.auth(&at.registry)?;
            self.registry
                .client
                .pull_blob(&image, &descriptor, file)
                .await
                .map_err(|e| self.registry.error(at, &sent, e))?;
            let got = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
            if got as i64 != *size {
                return Err(bad(format!(
                    "blob {digest} is {got} bytes, its manifest says {size}"
                ))
                .into());
            }
            self.writer.added(digest, got);
        }
        Ok(())
    }

    /// The signatures of manifest `digest` in `at`'s repository, copied: the `.sig` tag, then
    /// every referrer (the API, else the fallback tag).
    async fn copy_signatures(
        &mut self,
        at: &Reference,
        digest: &str,
        relocated: &str,
    ) -> Result<Vec<Signature>> {
        let mut out = Vec::new();
        let sig = at.with_tag(&signature_tag(digest));
        match self.copy_manifest(&sig, None, &sig.to_string()).await {
            Ok((d, media_type, size)) => {
                self.list(
                    &d,
                    &media_type,
                    size,
                    "signature",
                    relocated,
                    sig.tag.as_deref(),
                );
                out.push(Signature {
                    kind: SignatureKind::CosignTag,
                    digest: d,
                    media_type,
                    tag: sig.tag.clone(),
                    artifact_type: None,
                    annotations: None,
                });
            }
            Err(AirgapError::Oci(OciError::NotFound { .. })) => {}
            Err(e) => return Err(e),
        }
        let subject = oci_client::Reference::with_digest(
            at.registry.clone(),
            at.repository.clone(),
            digest.to_string(),
        );
        let (auth, sent) = self.registry.auth(&at.registry)?;
        let fail = |e| self.registry.error(at, &sent, e);
        self.registry
            .client
            .auth(&subject, &auth, oci_client::RegistryOperation::Pull)
            .await
            .map_err(fail)?;
        let referrers = self
            .registry
            .client
            .pull_referrers(&subject, None)
            .await
            .map_err(fail)?;
        if referrers.manifests.len() > MAX_BUNDLES {
            return Err(OciError::Registry {
                reference: at.to_string(),
                answer: format!(
                    "{} referrers are attached to {digest}; kudo copies at most {MAX_BUNDLES}",
                    referrers.manifests.len()
                ),
            }
            .into());
        }
        for r in referrers.manifests {
            let (d, media_type, size) = self
                .copy_manifest(at, Some(&r.digest), &format!("{at}@{}", r.digest))
                .await?;
            self.list(&d, &media_type, size, "signature", relocated, None);
            out.push(Signature {
                kind: SignatureKind::Referrer,
                digest: d,
                media_type,
                tag: None,
                artifact_type: r.artifact_type,
                annotations: r.annotations,
            });
        }
        Ok(out)
    }

    /// Writes the archive to `archive` with the relocation map, whole or not at all.
    pub fn finish(mut self, archive: &Path) -> Result<Bundled> {
        let map = serde_json::to_vec_pretty(&self.map)
            .map_err(|e| OciError::Internal(format!("the relocation map: {e}")))?;
        let (body, digest) = map_manifest(&mut self.writer, &map)?;
        self.writer.entry(ImageIndexEntry {
            media_type: OCI_IMAGE_MEDIA_TYPE.into(),
            digest,
            size: body.len() as i64,
            platform: None,
            annotations: Some(BTreeMap::from([
                (KIND.to_string(), "relocation-map".to_string()),
                (RELOCATED.to_string(), MAP_REPOSITORY.to_string()),
                (REF_NAME.to_string(), MAP_TAG.to_string()),
            ])),
            artifact_type: Some(relocation::MEDIA_TYPE.into()),
        });
        let written = self.writer.finish(archive)?;
        Ok(Bundled {
            map: self.map,
            unsigned: self.unsigned,
            written,
        })
    }
}

/// The artifact manifest holding the map (config empty, one layer of the map's media type),
/// its blobs added to `writer`; its bytes and digest.
fn map_manifest(writer: &mut Writer, map: &[u8]) -> Result<(Vec<u8>, String)> {
    let empty = writer.add(b"{}")?;
    let layer = writer.add(map)?;
    let manifest = serde_json::json!({
        "schemaVersion": 2,
        "mediaType": OCI_IMAGE_MEDIA_TYPE,
        "artifactType": relocation::MEDIA_TYPE,
        "config": {"mediaType": EMPTY_MEDIA_TYPE, "digest": empty, "size": 2},
        "layers": [{"mediaType": relocation::MEDIA_TYPE, "digest": layer, "size": map.len(),
            "annotations": {"org.opencontainers.image.title": "relocation.json"}}],
    });
    let body = serde_json::to_vec(&manifest)
        .map_err(|e| OciError::Internal(format!("the map's manifest: {e}")))?;
    let digest = writer.add(&body)?;
    Ok((body, digest))
}

/// The relocation map of a layout, and its manifest's digest.
pub fn map_of(layout: &Layout, archive: &Path) -> Result<(RelocationMap, String)> {
    let bad = |why: String| AirgapError::Map {
        archive: archive.to_path_buf(),
        why,
    };
    let entry = layout
        .index
        .manifests
        .iter()
        .find(|m| m.artifact_type.as_deref() == Some(relocation::MEDIA_TYPE))
        .ok_or_else(|| {
            bad(format!(
                "index.json lists no manifest of artifact type {}: not a bundle `kudo package bundle` wrote",
                relocation::MEDIA_TYPE
            ))
        })?;
    let layer = layout
        .children(&entry.digest)?
        .into_iter()
        .find(|(_, t, _)| t == relocation::MEDIA_TYPE)
        .ok_or_else(|| bad("the relocation map's manifest holds no map".into()))?;
    let map: RelocationMap = serde_json::from_slice(&layout.blob(&layer.0)?)
        .map_err(|e| bad(format!("the relocation map does not read: {e}")))?;
    if map.schema_version != relocation::SCHEMA_VERSION {
        return Err(bad(format!(
            "the relocation map's schemaVersion is {}; kudo reads {}",
            map.schema_version,
            relocation::SCHEMA_VERSION
        )));
    }
    Ok((map, entry.digest.clone()))
}

/// What a relocation pushed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Relocated {
    /// Blobs pushed.
    pub blobs_pushed: usize,
    /// Blobs the mirror had (not pushed again).
    pub blobs_present: usize,
    /// Bytes pushed.
    pub bytes_pushed: u64,
    /// Manifests pushed (by digest; tags not counted).
    pub manifests: usize,
    /// Signatures pushed.
    pub signatures: usize,
    /// Where the map is: `oci://MIRROR/PREFIX/kudo-relocation:latest`.
    pub map: String,
}

impl Registry {
    /// Pushes everything `layout` (read and checked by [`layout::read`]) holds to `mirror`
    /// (`oci://REGISTRY/PREFIX`), as the map says, then the map (the module's doc).
    pub async fn relocate(
        &self,
        layout: &Layout,
        archive: &Path,
        mirror: &Reference,
    ) -> Result<(RelocationMap, Relocated)> {
        let (map, map_digest) = map_of(layout, archive)?;
        let mut done = Relocated::default();
        let mut pushed: BTreeSet<(String, String)> = BTreeSet::new();
        for image in &map.images {
            let target = mirror.join(&image.relocated)?;
            self.push_tree(layout, &target, &image.digest, &mut pushed, &mut done)
                .await?;
            if let Some(tag) = &image.tag {
                self.push_manifest(layout, &target.with_tag(tag), &image.digest)
                    .await?;
            }
            self.push_signatures(
                layout,
                &target,
                &image.digest,
                &image.signatures,
                &mut pushed,
                &mut done,
            )
            .await?;
        }
        for package in &map.packages {
            let target = mirror.join(&package.relocated)?;
            self.push_tree(layout, &target, &package.digest, &mut pushed, &mut done)
                .await?;
            self.push_manifest(layout, &target.with_tag(&package.tag), &package.digest)
                .await?;
            self.push_signatures(
                layout,
                &target,
                &package.digest,
                &package.signatures,
                &mut pushed,
                &mut done,
            )
            .await?;
        }
        let at = mirror.join(MAP_REPOSITORY)?;
        self.push_tree(layout, &at, &map_digest, &mut pushed, &mut done)
            .await?;
        let tagged = at.with_tag(MAP_TAG);
        self.push_manifest(layout, &tagged, &map_digest).await?;
        done.map = tagged.to_string();
        Ok((map, done))
    }

    /// Pushes manifest `digest` and everything below it (blobs first, the mirror's own
    /// blobs not again) to `target`'s repository, by digest.
    async fn push_tree(
        &self,
        layout: &Layout,
        target: &Reference,
        digest: &str,
        pushed: &mut BTreeSet<(String, String)>,
        done: &mut Relocated,
    ) -> Result<()> {
        let repo = target.repository.clone();
        if pushed.contains(&(repo.clone(), digest.to_string())) {
            return Ok(());
        }
        self.authorize(target).await?;
        // post-order: a manifest after what it names
        let mut order: Vec<(String, bool)> = Vec::new();
        let mut stack = vec![(digest.to_string(), true, false)];
        while let Some((d, is_manifest, expanded)) = stack.pop() {
            if !is_manifest || expanded {
                order.push((d, is_manifest));
                continue;
            }
            stack.push((d.clone(), true, true));
            for (child, media_type, _) in layout.children(&d)? {
                stack.push((child, layout::is_manifest(&media_type), false));
            }
        }
        let image = target.image();
        let (_, sent) = self.auth(&target.registry)?;
        let fail = |e| self.error(target, &sent, e);
        for (d, is_manifest) in order {
            if !pushed.insert((repo.clone(), d.clone())) {
                continue;
            }
            if is_manifest {
                self.push_manifest(layout, target, &d).await?;
                done.manifests += 1;
            } else if self.client.blob_exists(&image, &d).await.map_err(fail)? {
                done.blobs_present += 1;
            } else {
                let bytes = layout.blob(&d)?;
                done.bytes_pushed += bytes.len() as u64;
                self.client
                    .push_blob(&image, bytes, &d)
                    .await
                    .map_err(fail)?;
                done.blobs_pushed += 1;
            }
        }
        Ok(())
    }

    /// Pushes manifest `digest` of `layout` to `target`: under its tag when it has one, else
    /// by digest.
    async fn push_manifest(&self, layout: &Layout, target: &Reference, digest: &str) -> Result<()> {
        let body = layout.blob(digest)?;
        let v: Value = serde_json::from_slice(&body).unwrap_or_default();
        let media_type = media_type_of(&v);
        let image = match &target.tag {
            Some(_) => target.image(),
            None => oci_client::Reference::with_digest(
                target.registry.clone(),
                target.repository.clone(),
                digest.to_string(),
            ),
        };
        let (_, sent) = self.auth(&target.registry)?;
        let content_type = media_type
            .parse()
            .map_err(|e| OciError::Internal(format!("media type {media_type}: {e}")))?;
        self.client
            .push_manifest_raw(&image, body, content_type)
            .await
            .map_err(|e| self.error(target, &sent, e))?;
        Ok(())
    }

    /// Pushes the signatures of `subject` beside it in `target`'s repository: the `.sig` tag;
    /// referrers by digest, then listed in the fallback tag when the mirror's referrers API
    /// does not list them.
    async fn push_signatures(
        &self,
        layout: &Layout,
        target: &Reference,
        subject: &str,
        signatures: &[Signature],
        pushed: &mut BTreeSet<(String, String)>,
        done: &mut Relocated,
    ) -> Result<()> {
        let mut referrers = Vec::new();
        for s in signatures {
            self.push_tree(layout, target, &s.digest, pushed, done)
                .await?;
            match (&s.kind, &s.tag) {
                (SignatureKind::CosignTag, Some(tag)) => {
                    self.push_manifest(layout, &target.with_tag(tag), &s.digest)
                        .await?;
                }
                _ => referrers.push(s),
            }
            done.signatures += 1;
        }
        if referrers.is_empty() {
            return Ok(());
        }
        let at = oci_client::Reference::with_digest(
            target.registry.clone(),
            target.repository.clone(),
            subject.to_string(),
        );
        let (auth, sent) = self.auth(&target.registry)?;
        let fail = |e| self.error(target, &sent, e);
        let listed = self.client.pull_referrers(&at, None).await.map_err(fail)?;
        for s in referrers {
            if listed.manifests.iter().any(|m| m.digest == s.digest) {
                continue;
            }
            let size = layout.blobs().get(&s.digest).copied().unwrap_or(0) as i64;
            let entry = ImageIndexEntry {
                media_type: s.media_type.clone(),
                digest: s.digest.clone(),
                size,
                platform: None,
                annotations: s.annotations.clone(),
                artifact_type: s.artifact_type.clone(),
            };
            self.add_to_fallback(target, subject, entry, &auth, &fail)
                .await?;
        }
        Ok(())
    }

    /// Authorizes pushes to `target`'s repository (a token registry gives one per
    /// repository).
    async fn authorize(&self, target: &Reference) -> Result<(), OciError> {
        let (auth, sent) = self.auth(&target.registry)?;
        self.client
            .auth(&target.image(), &auth, oci_client::RegistryOperation::Push)
            .await
            .map_err(|e| self.error(target, &sent, e))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use oci_client::client::{Config, ImageLayer};
    use oci_client::secrets::RegistryAuth;

    use super::*;
    use crate::oci::relocation::read_relocation;

    /// The library's whole path against two registries: a package and an image bundled, the
    /// source stopped, the archive read and relocated, and the map read back from the mirror
    /// answers where each image and package is.
    #[test]
    fn a_bundle_relocated_to_a_mirror_is_found_through_its_map() {
        let Some(source) = kudo_testkit::TestRegistry::start(Default::default()) else {
            return;
        };
        let Some(mirror) = kudo_testkit::TestRegistry::start(Default::default()) else {
            return;
        };
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let registry = Registry::new(true).unwrap();
        let at =
            oci_client::Reference::with_tag(source.host().into(), "acme/app".into(), "1".into());
        runtime
            .block_on(registry.client.push(
                &at,
                &[ImageLayer::oci_v1(b"a layer".to_vec(), None)],
                Config::oci_v1(b"{\"os\":\"linux\"}".to_vec(), None),
                &RegistryAuth::Anonymous,
                None,
            ))
            .unwrap();
        let tgz = kudo_pkg::create_archive(&kudo_testkit::example("zookeeper-v1beta1"))
            .unwrap()
            .0;
        let dir = tempfile::tempdir().unwrap();
        let archive = dir.path().join("b.tar");
        let image = format!("{}/acme/app:1", source.host());
        let bundled = runtime
            .block_on(async {
                let mut b = Bundler::new(&registry, dir.path())?;
                b.add_package(&PackageSource {
                    tgz,
                    from: "zookeeper-v1beta1".into(),
                    registry: None,
                })
                .await?;
                let reference: kudo_pkg::images::Reference = image.parse().unwrap();
                b.add_image(&image, &reference).await?;
                b.finish(&archive)
            })
            .unwrap();
        assert_eq!(bundled.unsigned, [format!("image {image}")]);
        drop(source);
        let layout = layout::read(&archive).unwrap();
        let to = Reference::parse(&mirror.oci("air")).unwrap();
        let (_, done) = runtime
            .block_on(registry.relocate(&layout, &archive, &to))
            .unwrap();
        assert_eq!(done.map, mirror.oci("air/kudo-relocation:latest"));
        let map = runtime.block_on(read_relocation(&registry, &to)).unwrap();
        assert_eq!(
            map.image(&image),
            Some(format!(
                "{}/air/acme/app@{}",
                mirror.host(),
                bundled.map.images[0].digest
            ))
        );
        assert_eq!(
            map.package("zookeeper", "3.6.2_0.4.0"),
            Some(mirror.oci("air/zookeeper:3.6.2_0.4.0"))
        );
        // the package pulls from the mirror as pushed
        let pulled = runtime
            .block_on(
                registry.pull(&Reference::parse(&mirror.oci("air/zookeeper:3.6.2_0.4.0")).unwrap()),
            )
            .unwrap();
        assert_eq!(
            pulled.package_digest,
            bundled.map.packages[0].package_digest
        );
    }
}
