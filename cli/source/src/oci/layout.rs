//! An OCI image layout ([image-spec's `image-layout.md`]) in one tar archive: the file
//! `kudo package bundle` writes and `kudo package relocate` reads.
//!
//! ```text
//! oci-layout                 {"imageLayoutVersion": "1.0.0"}
//! index.json                 an image index: one descriptor per manifest a bundle holds at its top
//! blobs/sha256/HEX           every blob and manifest, named by the sha256 of its bytes
//! ```
//!
//! [`Writer`] stages the blobs in a folder beside the archive to be, then writes the archive
//! to a temporary file there and renames it into place: a bundle that fails leaves no file.
//! The archive is reproducible for the same content (entries sorted, times zero, modes 0644).
//!
//! [`read`] unpacks an archive into a temporary folder and checks it whole before anyone uses
//! it: every `blobs/sha256/HEX` entry's bytes hash to HEX, the archive does not end inside an
//! entry, `oci-layout` names version 1.0.0, and every descriptor of `index.json`, and every
//! descriptor of each manifest and index it reaches (configs, layers, the manifests an index
//! lists), names a blob the archive holds, of the size it gives. Each error names the entry or
//! the descriptor ([`LayoutError`]).
//!
//! [image-spec's `image-layout.md`]: https://github.com/opencontainers/image-spec/blob/main/image-layout.md

use std::collections::{BTreeMap, BTreeSet};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use oci_client::manifest::{ImageIndexEntry, OciImageIndex};
use serde_json::Value;

use super::sha256_hex;

/// The layout version written and read.
pub const LAYOUT_VERSION: &str = "1.0.0";
/// The largest manifest (or image index) copied or read: a registry, or an archive, cannot
/// make kudo parse without bound (real manifests are a few KiB).
pub const MAX_MANIFEST_BYTES: u64 = 4 * 1024 * 1024;
/// The most manifests an image index may list to be copied (platforms of one image).
pub const MAX_INDEX_MANIFESTS: usize = 64;
/// The media type of `index.json`.
pub const INDEX_MEDIA_TYPE: &str = "application/vnd.oci.image.index.v1+json";

/// The media types whose blobs are manifests or indexes: their descriptors are followed.
const MANIFEST_TYPES: [&str; 4] = [
    "application/vnd.oci.image.manifest.v1+json",
    INDEX_MEDIA_TYPE,
    "application/vnd.docker.distribution.manifest.v2+json",
    "application/vnd.docker.distribution.manifest.list.v2+json",
];

/// Whether blobs of `media_type` are manifests or image indexes.
pub fn is_manifest(media_type: &str) -> bool {
    MANIFEST_TYPES.contains(&media_type)
}

/// What is wrong with a layout being written or read.
#[derive(Debug, thiserror::Error)]
pub enum LayoutError {
    /// A file of the layout, or the archive, cannot be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The archive ends inside an entry, or is not a tar archive from there on.
    #[error(
        "{}: the archive is cut short or damaged at {entry} ({source}); nothing was pushed",
        archive.display()
    )]
    Truncated {
        /// The archive.
        archive: PathBuf,
        /// The entry being read (or the last one read whole).
        entry: String,
        /// What the reader said.
        #[source]
        source: std::io::Error,
    },
    /// A blob's bytes do not hash to the digest its entry's name gives.
    #[error(
        "{}: entry {entry} holds bytes of digest sha256:{actual}, not the digest its name gives: the archive was changed; nothing was pushed",
        archive.display()
    )]
    Digest {
        /// The archive.
        archive: PathBuf,
        /// The entry.
        entry: String,
        /// The sha256 of its bytes, hex.
        actual: String,
    },
    /// The archive is not an OCI image layout kudo reads.
    #[error("{}: not an OCI image layout kudo reads: {why}", archive.display())]
    NotLayout {
        /// The archive.
        archive: PathBuf,
        /// Why.
        why: String,
    },
    /// A descriptor names a blob the archive does not hold, or holds at another size.
    #[error("{}: {referrer} names {digest} ({size} bytes): {why}; nothing was pushed", archive.display())]
    Missing {
        /// The archive.
        archive: PathBuf,
        /// The manifest (or `index.json`) whose descriptor it is.
        referrer: String,
        /// The digest named.
        digest: String,
        /// The size named.
        size: i64,
        /// What the archive holds instead.
        why: String,
    },
}

/// A `Result` with a [`LayoutError`].
pub type Result<T, E = LayoutError> = std::result::Result<T, E>;

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> LayoutError + '_ {
    move |source| LayoutError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// The hex of a `sha256:HEX` digest, when it is one (64 lowercase hex digits).
pub fn sha256_of(digest: &str) -> Option<&str> {
    let hex = digest.strip_prefix("sha256:")?;
    (hex.len() == 64 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))).then_some(hex)
}

/// A layout being written: blobs staged in a folder, the top descriptors in order.
pub struct Writer {
    dir: tempfile::TempDir,
    blobs: BTreeMap<String, u64>,
    entries: Vec<ImageIndexEntry>,
}

/// What [`Writer::finish`] wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    /// Blobs (manifests included).
    pub blobs: usize,
    /// Their bytes.
    pub blob_bytes: u64,
    /// The archive's size.
    pub archive_bytes: u64,
}

impl Writer {
    /// A writer staging its blobs in a new folder in `folder` (where the archive goes, so the
    /// final rename stays on one file system).
    pub fn new(folder: &Path) -> Result<Writer> {
        let dir = tempfile::Builder::new()
            .prefix(".kudo-bundle-")
            .tempdir_in(folder)
            .map_err(io(folder))?;
        let blobs = dir.path().join("blobs/sha256");
        std::fs::create_dir_all(&blobs).map_err(io(&blobs))?;
        Ok(Writer {
            dir,
            blobs: BTreeMap::new(),
            entries: Vec::new(),
        })
    }

    /// Whether the layout holds blob `digest`.
    pub fn has(&self, digest: &str) -> bool {
        self.blobs.contains_key(digest)
    }

    /// Where blob `digest` (`sha256:HEX`) is staged: a caller that streams a blob writes it
    /// there, checks it, then calls [`Writer::added`]. `None` for a digest that is not sha256.
    pub fn blob_path(&self, digest: &str) -> Option<PathBuf> {
        let hex = sha256_of(digest)?;
        Some(self.dir.path().join("blobs/sha256").join(hex))
    }

    /// Records blob `digest` of `size` bytes, written at [`Writer::blob_path`] and checked
    /// by the caller.
    pub fn added(&mut self, digest: &str, size: u64) {
        self.blobs.insert(digest.to_string(), size);
    }

    /// Adds `bytes` as a blob; its digest.
    pub fn add(&mut self, bytes: &[u8]) -> Result<String> {
        let digest = format!("sha256:{}", sha256_hex(bytes));
        if !self.has(&digest) {
            let path = self.dir.path().join("blobs/sha256").join(sha256_hex(bytes));
            std::fs::write(&path, bytes).map_err(io(&path))?;
            self.added(&digest, bytes.len() as u64);
        }
        Ok(digest)
    }

    /// Lists `entry` in `index.json` (a manifest the layout holds at its top).
    pub fn entry(&mut self, entry: ImageIndexEntry) {
        if !self
            .entries
            .iter()
            .any(|e| e.digest == entry.digest && e.annotations == entry.annotations)
        {
            self.entries.push(entry);
        }
    }

    /// Writes the archive to `archive`, whole or not at all: through a temporary file beside
    /// it, renamed into place. The staged blobs are removed.
    pub fn finish(self, archive: &Path) -> Result<Written> {
        let folder = archive
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let index = OciImageIndex {
            schema_version: 2,
            media_type: Some(INDEX_MEDIA_TYPE.into()),
            manifests: self.entries.clone(),
            artifact_type: None,
            annotations: None,
        };
        let index = serde_json::to_vec_pretty(&index).map_err(|e| LayoutError::Io {
            path: archive.to_path_buf(),
            source: std::io::Error::other(e),
        })?;
        let layout = format!("{{\"imageLayoutVersion\":\"{LAYOUT_VERSION}\"}}");
        let tmp = tempfile::Builder::new()
            .prefix(".kudo-bundle-")
            .suffix(".tar")
            .tempfile_in(folder)
            .map_err(io(folder))?;
        let mut tar = tar::Builder::new(std::io::BufWriter::new(tmp.as_file()));
        tar.mode(tar::HeaderMode::Deterministic);
        let mut append = |name: &str, size: u64, data: &mut dyn Read| {
            let mut header = tar::Header::new_ustar();
            header.set_size(size);
            header.set_mode(0o644);
            header.set_mtime(0);
            header.set_entry_type(tar::EntryType::Regular);
            tar.append_data(&mut header, name, data)
                .map_err(io(archive))
        };
        append("oci-layout", layout.len() as u64, &mut layout.as_bytes())?;
        append("index.json", index.len() as u64, &mut index.as_slice())?;
        for (digest, size) in &self.blobs {
            let path = self.blob_path(digest).unwrap_or_default();
            let mut file = std::fs::File::open(&path).map_err(io(&path))?;
            let name = format!("blobs/sha256/{}", sha256_of(digest).unwrap_or_default());
            append(&name, *size, &mut file)?;
        }
        let mut out = tar.into_inner().map_err(io(archive))?;
        out.flush().map_err(io(archive))?;
        drop(out);
        tmp.as_file().sync_all().map_err(io(archive))?;
        // a temporary file is made readable by its owner alone; an archive is not a secret
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            tmp.as_file()
                .set_permissions(std::fs::Permissions::from_mode(0o644))
                .map_err(io(archive))?;
        }
        let archive_bytes = tmp.as_file().metadata().map_err(io(archive))?.len();
        tmp.persist(archive).map_err(|e| LayoutError::Io {
            path: archive.to_path_buf(),
            source: e.error,
        })?;
        Ok(Written {
            blobs: self.blobs.len(),
            blob_bytes: self.blobs.values().sum(),
            archive_bytes,
        })
    }
}

/// A layout read and checked ([`read`]), unpacked in a temporary folder (removed when it is
/// dropped).
pub struct Layout {
    archive: PathBuf,
    dir: tempfile::TempDir,
    /// `index.json`.
    pub index: OciImageIndex,
    blobs: BTreeMap<String, u64>,
}

impl std::fmt::Debug for Layout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Layout")
            .field("archive", &self.archive)
            .field("manifests", &self.index.manifests.len())
            .field("blobs", &self.blobs.len())
            .finish()
    }
}

impl Layout {
    /// Blob `digest`'s bytes.
    pub fn blob(&self, digest: &str) -> Result<Vec<u8>> {
        let path = self.path_of(digest);
        std::fs::read(&path).map_err(io(&path))
    }

    /// Whether the layout holds blob `digest`.
    pub fn has(&self, digest: &str) -> bool {
        self.blobs.contains_key(digest)
    }

    /// Every blob, by digest, with its size.
    pub fn blobs(&self) -> &BTreeMap<String, u64> {
        &self.blobs
    }

    /// The descriptors manifest `digest` names (config and layers; an index's manifests), as
    /// `(digest, media type, size)`; empty for a blob that is not a manifest.
    pub fn children(&self, digest: &str) -> Result<Vec<(String, String, i64)>> {
        let bytes = self.blob(digest)?;
        Ok(descriptors(&bytes).unwrap_or_default())
    }

    fn path_of(&self, digest: &str) -> PathBuf {
        self.dir
            .path()
            .join("blobs/sha256")
            .join(sha256_of(digest).unwrap_or("-"))
    }
}

/// The descriptors a manifest or index names: `config`, `layers`, `manifests` (not
/// `subject`: a referrer's subject is elsewhere). `None` when it is not JSON of that shape.
fn descriptors(bytes: &[u8]) -> Option<Vec<(String, String, i64)>> {
    let v: Value = serde_json::from_slice(bytes).ok()?;
    let one = |d: &Value| {
        Some((
            d.get("digest")?.as_str()?.to_string(),
            d.get("mediaType")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
            d.get("size")?.as_i64()?,
        ))
    };
    let mut out = Vec::new();
    if let Some(c) = v.get("config") {
        out.push(one(c)?);
    }
    for key in ["layers", "manifests"] {
        for d in v.get(key).and_then(Value::as_array).into_iter().flatten() {
            out.push(one(d)?);
        }
    }
    Some(out)
}

/// A reader that hashes what passes through it.
struct Hashing<R> {
    inner: R,
    hasher: ring::digest::Context,
}

impl<R: Read> Read for Hashing<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.hasher.update(&buf[..n]);
        Ok(n)
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Reads and checks the layout archive at `archive` (the module's doc); nothing of it is used
/// before the whole archive is checked.
pub fn read(archive: &Path) -> Result<Layout> {
    let file = std::fs::File::open(archive).map_err(io(archive))?;
    let dir = tempfile::Builder::new()
        .prefix("kudo-relocate-")
        .tempdir()
        .map_err(io(archive))?;
    let blob_dir = dir.path().join("blobs/sha256");
    std::fs::create_dir_all(&blob_dir).map_err(io(&blob_dir))?;
    let cut = |entry: &str, source: std::io::Error| LayoutError::Truncated {
        archive: archive.to_path_buf(),
        entry: entry.to_string(),
        source,
    };
    let mut tar = tar::Archive::new(std::io::BufReader::new(file));
    let mut blobs = BTreeMap::new();
    let (mut layout, mut index) = (None, None);
    let mut last = "the archive's start".to_string();
    let entries = tar.entries().map_err(|e| cut(&last, e))?;
    for entry in entries {
        let mut entry = entry.map_err(|e| cut(&format!("the entry after {last}"), e))?;
        let name = entry
            .path()
            .map(|p| p.to_string_lossy().trim_start_matches("./").to_string())
            .map_err(|e| cut(&format!("the entry after {last}"), e))?;
        let kind = entry.header().entry_type();
        if kind.is_dir() {
            last = name;
            continue;
        }
        if !kind.is_file() {
            return Err(LayoutError::NotLayout {
                archive: archive.to_path_buf(),
                why: format!("entry {name} is not a regular file"),
            });
        }
        let small = |entry: &mut tar::Entry<_>| -> Result<Vec<u8>> {
            let mut bytes = Vec::new();
            let declared = entry.size();
            entry
                .by_ref()
                .take(MAX_MANIFEST_BYTES + 1)
                .read_to_end(&mut bytes)
                .map_err(|e| cut(&name, e))?;
            if bytes.len() as u64 != declared.min(MAX_MANIFEST_BYTES + 1) {
                return Err(cut(
                    &name,
                    std::io::Error::new(
                        std::io::ErrorKind::UnexpectedEof,
                        format!("{} of its {declared} bytes are there", bytes.len()),
                    ),
                ));
            }
            if bytes.len() as u64 > MAX_MANIFEST_BYTES {
                return Err(LayoutError::NotLayout {
                    archive: archive.to_path_buf(),
                    why: format!("{name} is larger than {MAX_MANIFEST_BYTES} bytes"),
                });
            }
            Ok(bytes)
        };
        match name.as_str() {
            "oci-layout" => layout = Some(small(&mut entry)?),
            "index.json" => index = Some(small(&mut entry)?),
            _ => {
                let Some(hex_name) = name
                    .strip_prefix("blobs/sha256/")
                    .filter(|h| sha256_of(&format!("sha256:{h}")).is_some())
                else {
                    return Err(LayoutError::NotLayout {
                        archive: archive.to_path_buf(),
                        why: format!(
                            "entry {name} is none of oci-layout, index.json, blobs/sha256/HEX"
                        ),
                    });
                };
                let path = blob_dir.join(hex_name);
                let mut out = std::fs::File::create(&path).map_err(io(&path))?;
                let mut hashing = Hashing {
                    inner: &mut entry,
                    hasher: ring::digest::Context::new(&ring::digest::SHA256),
                };
                let declared = hashing.inner.size();
                let size = std::io::copy(&mut hashing, &mut out).map_err(|e| cut(&name, e))?;
                if size != declared {
                    // the tar reader ends an entry's data where the file ends, quietly
                    return Err(cut(
                        &name,
                        std::io::Error::new(
                            std::io::ErrorKind::UnexpectedEof,
                            format!("{size} of its {declared} bytes are there"),
                        ),
                    ));
                }
                let actual = hex(hashing.hasher.finish().as_ref());
                if actual != hex_name {
                    return Err(LayoutError::Digest {
                        archive: archive.to_path_buf(),
                        entry: name,
                        actual,
                    });
                }
                blobs.insert(format!("sha256:{hex_name}"), size);
            }
        }
        last = name;
    }
    let not_layout = |why: String| LayoutError::NotLayout {
        archive: archive.to_path_buf(),
        why,
    };
    let layout: Value = serde_json::from_slice(
        &layout.ok_or_else(|| not_layout("it holds no oci-layout file".into()))?,
    )
    .map_err(|e| not_layout(format!("oci-layout: {e}")))?;
    if layout["imageLayoutVersion"] != LAYOUT_VERSION {
        return Err(not_layout(format!(
            "oci-layout gives imageLayoutVersion {}, kudo reads {LAYOUT_VERSION}",
            layout["imageLayoutVersion"]
        )));
    }
    let index: OciImageIndex =
        serde_json::from_slice(&index.ok_or_else(|| not_layout("it holds no index.json".into()))?)
            .map_err(|e| not_layout(format!("index.json: {e}")))?;
    let layout = Layout {
        archive: archive.to_path_buf(),
        dir,
        index,
        blobs,
    };
    check_references(&layout)?;
    Ok(layout)
}

/// Every descriptor reachable from `index.json` names a blob of its size.
fn check_references(layout: &Layout) -> Result<()> {
    let mut todo: Vec<(String, String, i64, String)> = layout
        .index
        .manifests
        .iter()
        .map(|m| {
            (
                m.digest.clone(),
                m.media_type.clone(),
                m.size,
                "index.json".to_string(),
            )
        })
        .collect();
    let mut seen = BTreeSet::new();
    while let Some((digest, media_type, size, referrer)) = todo.pop() {
        let missing = |why: String| LayoutError::Missing {
            archive: layout.archive.clone(),
            referrer: referrer.clone(),
            digest: digest.clone(),
            size,
            why,
        };
        match layout.blobs.get(&digest) {
            None => return Err(missing("the archive holds no such blob".into())),
            Some(&have) if have as i64 != size => {
                return Err(missing(format!("the archive's blob is {have} bytes")));
            }
            Some(_) => {}
        }
        if !is_manifest(&media_type) || !seen.insert(digest.clone()) {
            continue;
        }
        let bytes = layout.blob(&digest)?;
        let children = descriptors(&bytes)
            .ok_or_else(|| missing(format!("it is not a {media_type} kudo reads")))?;
        for (d, t, s) in children {
            todo.push((d, t, s, format!("manifest {digest}")));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const MANIFEST: &str = "application/vnd.oci.image.manifest.v1+json";

    /// A layout of one image (config, layer, manifest) written to `dir/b.tar`; the manifest's
    /// digest and the layer's.
    fn one_image(dir: &Path) -> (PathBuf, String, String) {
        let mut w = Writer::new(dir).unwrap();
        let config = w.add(b"{}").unwrap();
        let layer = w.add(b"layer bytes").unwrap();
        let manifest = serde_json::json!({
            "schemaVersion": 2, "mediaType": MANIFEST,
            "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": config, "size": 2},
            "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar", "digest": layer, "size": 11}],
        });
        let body = serde_json::to_vec(&manifest).unwrap();
        let digest = w.add(&body).unwrap();
        w.entry(ImageIndexEntry {
            media_type: MANIFEST.into(),
            digest: digest.clone(),
            size: body.len() as i64,
            platform: None,
            annotations: None,
            artifact_type: None,
        });
        let out = dir.join("b.tar");
        let written = w.finish(&out).unwrap();
        assert_eq!(written.blobs, 3);
        assert_eq!(
            written.archive_bytes,
            std::fs::metadata(&out).unwrap().len()
        );
        (out, digest, layer)
    }

    #[test]
    fn a_layout_written_reads_back_whole_and_no_staging_is_left() {
        let dir = tempfile::tempdir().unwrap();
        let (out, digest, layer) = one_image(dir.path());
        let layout = read(&out).unwrap();
        assert_eq!(layout.index.manifests[0].digest, digest);
        assert_eq!(layout.blob(&layer).unwrap(), b"layer bytes");
        assert_eq!(layout.children(&digest).unwrap().len(), 2);
        let left: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left, ["b.tar"], "only the archive is left");
        // reproducible: the same content gives the same bytes
        let again = tempfile::tempdir().unwrap();
        let (second, _, _) = one_image(again.path());
        assert_eq!(std::fs::read(&out).unwrap(), std::fs::read(second).unwrap());
    }

    /// The archive's bytes: where an entry's data starts, found by its content.
    fn find(bytes: &[u8], what: &[u8]) -> usize {
        bytes.windows(what.len()).position(|w| w == what).unwrap()
    }

    #[test]
    fn a_damaged_archive_is_refused_naming_the_entry() {
        let dir = tempfile::tempdir().unwrap();
        let (out, digest, layer) = one_image(dir.path());
        let bytes = std::fs::read(&out).unwrap();
        let layer_entry = format!("blobs/sha256/{}", sha256_of(&layer).unwrap());

        // a blob changed: its bytes no longer hash to its name
        let mut tampered = bytes.clone();
        let at = find(&tampered, b"layer bytes");
        tampered[at] = b'L';
        std::fs::write(&out, &tampered).unwrap();
        match read(&out) {
            Err(LayoutError::Digest { entry, .. }) => assert_eq!(entry, layer_entry),
            other => panic!("{other:?}"),
        }

        // cut inside the layer's data
        let at = find(&bytes, b"layer bytes") + 4;
        std::fs::write(&out, &bytes[..at]).unwrap();
        match read(&out) {
            Err(LayoutError::Truncated { entry, .. }) => assert_eq!(entry, layer_entry),
            other => panic!("{other:?}"),
        }

        // a blob removed: the manifest names what the archive lacks
        let mut w = Writer::new(dir.path()).unwrap();
        let body = serde_json::json!({
            "schemaVersion": 2, "mediaType": MANIFEST,
            "config": {"mediaType": "x", "digest": format!("sha256:{}", "0".repeat(64)), "size": 2},
            "layers": [],
        });
        let body = serde_json::to_vec(&body).unwrap();
        let m = w.add(&body).unwrap();
        w.entry(ImageIndexEntry {
            media_type: MANIFEST.into(),
            digest: m.clone(),
            size: body.len() as i64,
            platform: None,
            annotations: None,
            artifact_type: None,
        });
        w.finish(&out).unwrap();
        match read(&out) {
            Err(LayoutError::Missing { referrer, .. }) => {
                assert_eq!(referrer, format!("manifest {m}"))
            }
            other => panic!("{other:?}"),
        }
        let _ = digest;
    }

    #[test]
    fn only_sha256_digests_name_blobs() {
        let cases: &[(&str, bool)] = &[
            (&format!("sha256:{}", "a".repeat(64)), true),
            (&format!("sha256:{}", "A".repeat(64)), false),
            (&format!("sha512:{}", "a".repeat(64)), false),
            ("sha256:../../etc", false),
        ];
        for (digest, ok) in cases {
            assert_eq!(sha256_of(digest).is_some(), *ok, "{digest}");
        }
    }
}
