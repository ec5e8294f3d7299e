//! The files a command's diagnostics point into, read once each, and the lines of them no
//! snippet may show (they hold writeOnly values): what `report` draws a diagnostic's source line
//! from, and what an `Error` carries to it.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::path::PathBuf;

use kudo_diag::Origin;
use miette::{NamedSource, SourceSpan};

/// Reads the files diagnostics point into, once each.
#[derive(Default)]
pub struct Sources {
    files: HashMap<PathBuf, Option<String>>,
    /// Lines holding writeOnly values: no snippet may show them (a snippet shows one line of
    /// context on each side).
    secret_lines: HashSet<(PathBuf, usize)>,
}

/// The files' names only: their text may hold secrets.
impl fmt::Debug for Sources {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sources")
            .field("files", &self.files.keys().collect::<Vec<_>>())
            .field("secret_lines", &self.secret_lines)
            .finish()
    }
}

impl Sources {
    /// Marks a line that holds a secret.
    pub fn hide_line(&mut self, path: PathBuf, line: usize) {
        self.secret_lines.insert((path, line));
    }
}

impl Sources {
    pub(crate) fn span(&mut self, origin: &Origin) -> Option<(NamedSource<String>, SourceSpan)> {
        let Origin::File(loc) = origin else {
            return None;
        };
        let near = loc.line.saturating_sub(1)..=loc.line + 1;
        if near
            .into_iter()
            .any(|l| self.secret_lines.contains(&(loc.path.clone(), l)))
        {
            return None;
        }
        let text = self
            .files
            .entry(loc.path.clone())
            .or_insert_with(|| std::fs::read_to_string(&loc.path).ok())
            .clone()?;
        let line_start: usize = text
            .split_inclusive('\n')
            .take(loc.line.saturating_sub(1))
            .map(str::len)
            .sum();
        let line = text[line_start..].lines().next().unwrap_or("");
        let col_bytes: usize = line
            .chars()
            .take(loc.col.saturating_sub(1))
            .map(char::len_utf8)
            .sum();
        let rest = &line[col_bytes.min(line.len())..];
        // The value (or key) itself: stop at a trailing comment and at a key's colon.
        let token = rest.split(" #").next().unwrap_or(rest).trim_end();
        let token = token.strip_suffix(':').unwrap_or(token);
        let len = token.len().max(1);
        let name = loc.path.display().to_string();
        Some((
            NamedSource::new(name, text),
            SourceSpan::new((line_start + col_bytes).into(), len),
        ))
    }
}
