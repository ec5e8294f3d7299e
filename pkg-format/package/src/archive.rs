//! `kudo package create`: a package directory as a `.tgz` that `Package::load` reads back.
//!
//! The archive holds `operator.yaml`, `params.yaml` and everything under `templates/`, at its
//! root (as KUDO's own archives), and is reproducible: entries sorted, times zero, modes 0644,
//! no owner names. The same directory always gives the same bytes.

use std::io::Write;
use std::path::Path;

use kudo_diag::error::{Error, Result};

/// The archive's bytes and the number of files in it.
pub fn create(dir: &Path) -> Result<(Vec<u8>, usize)> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| Error::Io {
            path: path.clone(),
            source,
        }
    };
    let mut files = Vec::new();
    for name in ["operator.yaml", "params.yaml"] {
        if dir.join(name).is_file() {
            files.push(name.to_string());
        }
    }
    let mut stack = vec![dir.join("templates")];
    let mut templates = Vec::new();
    while let Some(d) = stack.pop() {
        if !d.is_dir() {
            continue;
        }
        for entry in std::fs::read_dir(&d).map_err(io(&d))? {
            let p = entry.map_err(io(&d))?.path();
            if p.is_dir() {
                stack.push(p);
            } else if let Ok(rel) = p.strip_prefix(dir) {
                templates.push(rel.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    templates.sort();
    files.extend(templates);
    let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    let mut tar = tar::Builder::new(gz);
    tar.mode(tar::HeaderMode::Deterministic);
    for name in &files {
        let path = dir.join(name);
        let bytes = std::fs::read(&path).map_err(io(&path))?;
        let mut header = tar::Header::new_gnu();
        header.set_size(bytes.len() as u64);
        header.set_mode(0o644);
        header.set_mtime(0);
        header.set_entry_type(tar::EntryType::Regular);
        tar.append_data(&mut header, name, bytes.as_slice())
            .map_err(io(&path))?;
    }
    let gz = tar.into_inner().map_err(io(dir))?;
    let mut out = gz.finish().map_err(io(dir))?;
    out.flush().map_err(io(dir))?;
    Ok((out, files.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn archives_load_back_and_are_reproducible() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/cassandra-v1beta2");
        let (a, n) = create(&dir).unwrap();
        let (b, _) = create(&dir).unwrap();
        assert_eq!(a, b);
        assert!(n >= 3);
        let tmp = tempfile::NamedTempFile::with_suffix(".tgz").unwrap();
        std::fs::write(tmp.path(), &a).unwrap();
        let from_tgz = crate::Package::load(tmp.path()).unwrap();
        let from_dir = crate::Package::load(&dir).unwrap();
        assert_eq!(from_tgz.schema(), from_dir.schema());
        assert_eq!(from_tgz.templates(), from_dir.templates());
    }
}
