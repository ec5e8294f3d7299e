//! The one way the CLI writes a file: through a temporary file in the same directory and a
//! rename, so readers see the old file or the new one, never half of it.

use std::io::Write;
use std::path::Path;

/// Writes `bytes` to `path` atomically. `mode` (Unix) sets the new file's permissions before
/// anything is written into it (0600 for credentials); without one, an existing file keeps
/// its permissions. The directory must exist.
pub fn write(path: &Path, bytes: &[u8], mode: Option<u32>) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    match mode {
        #[cfg(unix)]
        Some(mode) => {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(mode))?;
        }
        _ => {
            if let Ok(meta) = std::fs::metadata(path) {
                std::fs::set_permissions(tmp.path(), meta.permissions())?;
            }
        }
    }
    tmp.write_all(bytes)?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}
