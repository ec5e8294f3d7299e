//! [`Error`]: why a command stopped. Its `Display` is what the user reads after `error: `
//! (`report::error` draws parameter problems as diagnostics instead), and its variant decides
//! the exit code, which `main` gives: 1 for anything refused or failed, 2 for a usage error
//! found after clap and for any error of `kudo diff`, 130 for an interrupted wizard. The
//! libraries' errors come in whole through `From`; the CLI's own refusals are [`Refusal`]s,
//! each about a subject (a file, a name, a URL).

use std::path::{Path, PathBuf};

use kudo_client::{commands, init, storage_migration};
use kudo_diag::Diagnostic;
use kudo_pkg::dependency::DependencyError;
use kudo_pkg::images::ImagesError;
use kudo_pkg::repo::IndexError;

use crate::sources::Sources;
use kudo_source::oci::OciError;
use kudo_source::repo::RepoError;

/// Why a command stopped.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A package or a file that kudo-pkg read, named with its line when known.
    #[error(transparent)]
    Package(kudo_diag::Error),
    /// Parameter problems, every one of them, drawn as diagnostics; `sources` keeps snippets
    /// off the lines of -P files that hold secret values.
    #[error("{} parameter error(s)", diags.iter().filter(|d| d.is_error()).count())]
    Parameters {
        /// The problems (warnings too).
        diags: Vec<Diagnostic>,
        /// The files the snippets come from.
        sources: Sources,
    },
    /// A file the CLI reads or writes itself.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// Standard output cannot be written (a closed pipe is not an error).
    #[error("cannot write to standard output: {0}")]
    Stdout(#[source] std::io::Error),
    /// Standard input cannot be read.
    #[error("cannot read standard input: {0}")]
    Stdin(#[source] std::io::Error),
    /// The async runtime does not start.
    #[error("cannot start the async runtime: {0}")]
    Runtime(#[source] std::io::Error),
    /// No client for the cluster: the kubeconfig, the context.
    #[error(transparent)]
    Connect(#[from] kudo_cluster::ConnectError),
    /// A cluster command refused or failed.
    #[error(transparent)]
    Cluster(commands::Error),
    /// `kudo init` could not apply an object.
    #[error(transparent)]
    Apply(#[from] init::ApplyError),
    /// `kudo init --wait`: kudo did not answer in time.
    #[error(transparent)]
    NotReady(#[from] init::NotReady),
    /// `kudo migrate` stopped.
    #[error("{0}{note}", note = resume_note(.0))]
    Migration(#[from] storage_migration::Error),
    /// A repository: its configuration, cache, index or downloads.
    #[error(transparent)]
    Repo(#[from] RepoError),
    /// An index, or a version (`--operator-version`, `--app-version`), that is not one.
    #[error(transparent)]
    Index(IndexError),
    /// `package images`: image fields that hold no valid reference, or a walk of the
    /// parameters' domains that takes too many renders (templates that do not render are
    /// parameter problems).
    #[error(transparent)]
    Images(ImagesError),
    /// A KudoOperator dependency that cannot be resolved.
    #[error(transparent)]
    Dependency(#[from] DependencyError),
    /// An OCI registry refused or failed.
    #[error(transparent)]
    Oci(#[from] OciError),
    /// `package bundle` or `relocate`: an image, an archive, a mirror.
    #[error(transparent)]
    Airgap(#[from] kudo_source::oci::airgap::AirgapError),
    /// A signing key, or a signature.
    #[error(transparent)]
    Trust(#[from] kudo_source::trust::TrustError),
    /// The CLI refuses `subject` (a file, a name, a URL).
    #[error("{subject}: {reason}")]
    Refused {
        /// What is refused.
        subject: String,
        /// Why.
        reason: Refusal,
    },
    /// An error about `subject` (a file, a name, a URL) that does not name it itself.
    #[error("{subject}: {source}")]
    About {
        /// What the error is about.
        subject: String,
        /// The error.
        source: Box<Error>,
    },
    /// An error of a cluster command, named by the command, after the program's name as shown
    /// (`kudo install: ...`, `kubectl kudo install: ...`).
    #[error("{program} {command}: {source}", program = crate::program::shown())]
    In {
        /// The command (`install`, `plan status`).
        command: &'static str,
        /// The error.
        source: Box<Error>,
    },
    /// What stopped `kudo diff`, whatever it is (exit code 2, as `diff(1)` and `kubectl diff`
    /// answer trouble).
    #[error(transparent)]
    Diff(Box<Error>),
    /// Called wrong, in a way clap cannot see (exit code 2).
    #[error("{0}")]
    Usage(String),
    /// Ctrl-C or the end of input in a wizard (exit code 130).
    #[error("interrupted: nothing written")]
    Interrupted,
}

/// The CLI's own reasons to refuse a file, a name or a URL.
#[derive(Debug, thiserror::Error)]
pub enum Refusal {
    /// `package convert --in-place` of an archive.
    #[error("--in-place needs a package directory; use --output-dir DIR for an archive")]
    InPlaceNeedsDirectory,
    /// `package convert` of a directory with no package and no params.yaml.
    #[error(
        "holds neither operator.yaml nor params.yaml: give a package directory, a .tgz, or a params.yaml file"
    )]
    NothingToConvert,
    /// `package convert --output-dir` of an archive.
    #[error("--output-dir from an archive is not supported yet; unpack it first")]
    OutputDirFromArchive,
    /// A new directory to write that exists.
    #[error("already exists; choose a new directory")]
    DirectoryExists,
    /// A file to write that exists, without `--overwrite`.
    #[error("already exists; pass --overwrite to replace it")]
    FileExists,
    /// `package create` of something else than a directory.
    #[error("is not a package directory")]
    NotAPackageDirectory,
    /// `package add parameter` of an archive.
    #[error("needs a package directory (an archive cannot be edited)")]
    NotEditable,
    /// `package add parameter`: a flag the package cannot take (`--path`, `--name`).
    #[error("{0}")]
    NewParameter(String),
    /// A PACKAGE argument that is nothing on disk and no reference.
    #[error(
        "no such file or directory: PACKAGE is a package directory, a .tgz file, an http(s):// \
         URL, an oci:// reference or an operator name in a repository"
    )]
    NoSuchPackage,
    /// A PACKAGE argument looked up as a name in a repository, not found there.
    #[error(
        "not a file or directory, so looked up as an operator name in a repository (--repo, \
         default `{context}`): {source}"
    )]
    NoSuchName {
        /// The default repository.
        context: String,
        /// Why the lookup failed.
        source: Box<RepoError>,
    },
    /// `package push` of a file that does not exist.
    #[error("no such file or directory: PACKAGE is a package's .tgz or its directory")]
    NoSuchArchive,
    /// `package push` of a file that is not gzip data.
    #[error(
        "not a package archive (gzip data): push the .tgz `kudo package create` writes, or the \
         package's directory"
    )]
    NotGzip,
    /// `package pull` of something that is not a kudo package.
    #[error("the pulled archive is not a kudo package: {0}")]
    PulledNotAPackage(String),
    /// `registry login`: the terminal gave no password.
    #[error("no password read: {0}")]
    NoPassword(String),
    /// `registry login`: an empty password.
    #[error("the password is empty (nothing on standard input?)")]
    EmptyPassword,
    /// `repo add` of a name that exists.
    #[error(
        "a repository of this name exists ({url}); remove it first (`kudo repo remove {name}`)"
    )]
    RepositoryExists {
        /// The name.
        name: String,
        /// The URL it has.
        url: String,
    },
    /// `repo add` of a repository whose index cannot be read.
    #[error("{0} (nothing was added; --skip-check adds it unread)")]
    IndexUnread(Box<RepoError>),
    /// A repository name that is not configured.
    #[error("no repository of this name (see `kudo repo list`){}", if *.nothing_removed { "; nothing was removed" } else { "" })]
    NoRepository {
        /// `repo remove`: say that none of the names given was removed.
        nothing_removed: bool,
    },
    /// `search` or `repo update` where no repository answered: each failure was warned about
    /// (the others' would be used).
    #[error("no repository could be {0} (each is named above)")]
    NoRepositoryAnswered(&'static str),
    /// `repo index` of something else than a directory.
    #[error("is not a directory")]
    NotADirectory,
    /// `repo index` of a directory with no package.
    #[error("holds no valid package (*.tgz): no index was written")]
    NoPackages,
    /// `init --ca-bundle` of a file that is not PEM.
    #[error("--ca-bundle is not a PEM certificate bundle")]
    NotPem,
    /// `install` in a namespace that does not exist.
    #[error(
        "does not exist: use --create-namespace, or create it with `kubectl create namespace {namespace}`"
    )]
    NoNamespace {
        /// The namespace.
        namespace: String,
    },
    /// `init --webhook-url` without TLS.
    #[error("--webhook-url must be an https:// URL: the API server calls webhooks over TLS only")]
    NotHttps,
}

impl Error {
    /// `reason` to refuse `subject`.
    pub fn refused(subject: impl std::fmt::Display, reason: Refusal) -> Error {
        Error::Refused {
            subject: subject.to_string(),
            reason,
        }
    }

    /// Parameter problems, drawn with no snippet hidden.
    pub fn parameters(diags: Vec<Diagnostic>) -> Error {
        Error::Parameters {
            diags,
            sources: Sources::default(),
        }
    }

    /// This error, about `subject`.
    pub fn about(self, subject: impl std::fmt::Display) -> Error {
        Error::About {
            subject: subject.to_string(),
            source: Box::new(self),
        }
    }

    /// This error, named by the cluster command it stopped; parameter problems stay
    /// diagnostics.
    pub fn in_command(self, command: &'static str) -> Error {
        match self {
            e @ Error::Parameters { .. } => e,
            e => Error::In {
                command,
                source: Box::new(e),
            },
        }
    }

    /// Parameter problems drawn with `sources`, which hides the lines of secrets.
    pub fn with_sources(self, sources: Sources) -> Error {
        match self {
            Error::Parameters { diags, .. } => Error::Parameters { diags, sources },
            e => e,
        }
    }

    /// An I/O error on `path`, as `map_err` takes it.
    pub fn io(path: &Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
        move |source| Error::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// kudo-policy's parameter problems are diagnostics.
impl From<kudo_diag::Error> for Error {
    fn from(e: kudo_diag::Error) -> Self {
        match e {
            kudo_diag::Error::Diagnostics(diags) => Error::parameters(diags),
            e => Error::Package(e),
        }
    }
}

/// Templates that do not render are diagnostics; one that fails only with a value `--all-values`
/// set says which, in its help.
impl From<ImagesError> for Error {
    fn from(e: ImagesError) -> Self {
        match e {
            ImagesError::Render(failures) => Error::parameters(
                failures
                    .into_iter()
                    .flat_map(|f| {
                        let with = f.setting.map(|s| {
                            format!(
                                "it fails with -p {}={}, a value --all-values tries",
                                s.pointer.trim_start_matches('/'),
                                s.text()
                            )
                        });
                        f.diags.into_iter().map(move |mut d| {
                            if let Some(with) = &with {
                                d.help = Some(match d.help.take() {
                                    Some(help) => format!("{help}; {with}"),
                                    None => with.clone(),
                                });
                            }
                            d
                        })
                    })
                    .collect(),
            ),
            e => Error::Images(e),
        }
    }
}

/// A cluster command's parameter problems are diagnostics.
impl From<commands::Error> for Error {
    fn from(e: commands::Error) -> Self {
        match e {
            commands::Error::Parameters(diags) => Error::parameters(diags),
            e => Error::Cluster(e),
        }
    }
}

/// What follows a migration error that is not the pre-flight's: nothing is lost.
fn resume_note(e: &storage_migration::Error) -> &'static str {
    match e {
        storage_migration::Error::Preflight(_) => "",
        _ => {
            "\nnote: every phase is idempotent: once the cause is fixed, run kudo migrate again to resume"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn io_error() -> std::io::Error {
        std::io::Error::new(std::io::ErrorKind::PermissionDenied, "denied")
    }

    #[test]
    fn messages_name_their_subject_and_command() {
        let cases: &[(Error, &str)] = &[
            (
                Error::refused("x.tgz", Refusal::FileExists),
                "x.tgz: already exists; pass --overwrite to replace it",
            ),
            (
                Error::refused(
                    "nowhere",
                    Refusal::NoRepository {
                        nothing_removed: true,
                    },
                ),
                "nowhere: no repository of this name (see `kudo repo list`); nothing was removed",
            ),
            (
                Error::Io {
                    path: "a/b".into(),
                    source: io_error(),
                }
                .about("c"),
                "c: a/b: denied",
            ),
            (
                Error::Runtime(io_error()).in_command("plan status"),
                "kudo plan status: cannot start the async runtime: denied",
            ),
        ];
        for (e, want) in cases {
            assert_eq!(&e.to_string(), want, "{e:?}");
        }
    }

    #[test]
    fn parameter_problems_stay_diagnostics_whatever_wraps_them() {
        let e = Error::from(kudo_diag::Error::Diagnostics(Vec::new())).in_command("install");
        assert!(matches!(e, Error::Parameters { .. }), "{e:?}");
        let e = Error::from(commands::Error::Parameters(Vec::new()));
        assert!(matches!(e, Error::Parameters { .. }), "{e:?}");
    }
}
