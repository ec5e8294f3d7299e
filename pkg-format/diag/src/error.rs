//! Errors that stop an operation: a file that cannot be read or parsed, a package that is not a
//! package. Problems with parameter values are [`Diagnostic`]s instead, reported
//! all at once.

use std::path::PathBuf;

use crate::diag::Diagnostic;

/// The result type of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Something that stops loading, converting or rendering a package.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A file could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// A YAML file is not well-formed.
    #[error("{}:{line}:{col}: {message}", path.display())]
    Yaml {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        col: usize,
        /// What the parser said.
        message: String,
    },
    /// A file is well-formed YAML but not what it should be (a package, a params file).
    #[error("{}{}: {message}", path.display(), location.map(|(l, c)| format!(":{l}:{c}")).unwrap_or_default())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// Line and column, when known.
        location: Option<(usize, usize)>,
        /// What is wrong.
        message: String,
    },
    /// Parameter problems, every one of them.
    #[error("{} parameter error(s)", .0.iter().filter(|d| d.is_error()).count())]
    Diagnostics(Vec<Diagnostic>),
}

impl Error {
    /// The diagnostics, when this error carries parameter problems.
    pub fn diagnostics(&self) -> &[Diagnostic] {
        match self {
            Error::Diagnostics(d) => d,
            _ => &[],
        }
    }
}
