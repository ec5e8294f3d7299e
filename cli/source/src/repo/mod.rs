//! Operator repositories, as the CLI uses them: the configuration (`kudo repo add` ...), the
//! cache, downloads with their digests checked, and a PACKAGE argument turned into a package.
//!
//! - **Configuration**: `repositories.yaml` in KUDO's format (`repoVersion`, `context`,
//!   `repositories: [{name, url}]`), at `$KUDO_HOME/repository/repositories.yaml` when
//!   `KUDO_HOME` is set (KUDO's place), else `$XDG_CONFIG_HOME/kudo/repositories.yaml`. With
//!   no file, the configuration is KUDO's: the `community` repository, as the context.
//! - **Cache** (`$XDG_CACHE_HOME/kudo/`): `repository/NAME-URLHASH-index.yaml`, each
//!   repository's last index (written by `kudo repo update`, and by any download of an index);
//!   `packages/SHA256/FILE.tgz`, each package downloaded, by its digest, checked again on
//!   every read. `kudo search` reads the cached indexes (downloading only one never cached):
//!   it works offline. A repository that cannot be read is a warning for `search` and
//!   `repo update`, which use the others (`cmd::repo`).
//! - **Resolution** ([`Resolver::package`]): a local folder, a local `.tgz`, an `http(s)://`
//!   URL, an `oci://` reference, else a repository name, in that order (KUDO's order, with
//!   OCI added). A name's package comes from the cached index when it has the version asked
//!   for (else the index is downloaded once more); its sha256 must equal the index's `digest`.
//! - **Dependencies** named by a KudoOperator task are looked up in the parent's repository
//!   ([`Resolver`] is a [`kudo_pkg::dependency::Lookup`]).
//! - **Signatures** (`crate::trust`): a repository's or registry's policy in the
//!   configuration (`verify: none|warn|required`, `keys`), or `--verify[=KEY]` for one command,
//!   is applied to every package resolved, dependencies included: an index entry's signature is
//!   checked before the package is downloaded, a registry package's after its manifest and
//!   bytes are pulled and before anything is cached. The package carries where it came from
//!   and how it was checked ([`kudo_pkg::Provenance`]), which its OperatorVersion records.
//!
//! The index model and version selection are `kudo_pkg::repo`'s; this module does the I/O.

pub mod config;
pub mod http;

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use kudo_pkg::dependency::{KudoOperatorTask, Lookup};
use kudo_pkg::repo::{Entry, Index, Want, sha256_hex};
use kudo_pkg::{Package, Provenance};

pub use config::{Home, RegistryPolicy, Repositories, Repository};

use crate::trust::{Checked, Mode, Policy, PublicKey};

/// What went wrong with a repository, a download or a package reference.
#[derive(Debug, thiserror::Error)]
pub enum RepoError {
    /// A file of kudo's (configuration, cache) could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The configuration file is not valid.
    #[error("{}: not a repositories file: {message}", path.display())]
    Config {
        /// The file.
        path: PathBuf,
        /// Why.
        message: String,
    },
    /// No repository of that name is configured.
    #[error("no repository `{0}` (see `kudo repo list`; add one with `kudo repo add NAME URL`)")]
    NoRepository(String),
    /// A download failed.
    #[error("{url}: {message}")]
    Download {
        /// What was downloaded.
        url: String,
        /// Why it failed.
        message: String,
    },
    /// The index of a repository is not valid.
    #[error("{url}: {source}")]
    Index {
        /// Where it came from.
        url: String,
        /// Why.
        source: kudo_pkg::repo::IndexError,
    },
    /// Asked for a name or a version a repository does not have, or a version that is not one.
    #[error(transparent)]
    Find(#[from] kudo_pkg::repo::IndexError),
    /// A downloaded package is not the one the index describes.
    #[error(
        "{url}: sha256 {actual} is not the digest the index of {repository} gives, {expected}: the package was changed after it was indexed, or the download was tampered with; nothing was used"
    )]
    Digest {
        /// The repository.
        repository: String,
        /// Where the package came from.
        url: String,
        /// The index's digest.
        expected: String,
        /// The download's.
        actual: String,
    },
    /// A downloaded package does not load.
    #[error("{url}: not a valid package: {source}")]
    Package {
        /// Where it came from.
        url: String,
        /// Why.
        source: Box<kudo_diag::Error>,
    },
    /// An OCI registry refused or failed.
    #[error("{0}")]
    Oci(String),
    /// A key of the signature policy cannot be read.
    #[error(transparent)]
    Trust(#[from] crate::trust::TrustError),
    /// A package the policy requires to be signed is not signed by any key given.
    #[error("{0}")]
    Unverified(Box<Unverified>),
    /// `--verify` for a package that carries no signature (on disk, or at a URL).
    #[error(
        "{0}: --verify: a package on disk or at a URL carries no signature; verify a package from a repository or an oci:// registry, or leave --verify out"
    )]
    NothingToVerify(String),
}

/// A package refused by its signature policy: what, which digest, the keys tried, what was
/// found instead, and where the policy was given.
#[derive(Debug, thiserror::Error)]
#[error(
    "{package}: refused: not signed by a trusted key: {why}\n  digest: {digest}\n  keys tried: {}\n  policy: verify: required ({from})\nnothing was cached or written",
    keys.join(", ")
)]
pub struct Unverified {
    /// The package (name and versions, and where from).
    pub package: String,
    /// Its digest (`sha256:HEX`: the manifest's in a registry, the `.tgz`'s in a repository).
    pub digest: String,
    /// The keys tried (path and fingerprint).
    pub keys: Vec<String>,
    /// What was found instead.
    pub why: String,
    /// Where the policy was given.
    pub from: String,
}

/// A `Result` with a [`RepoError`].
pub type Result<T, E = RepoError> = std::result::Result<T, E>;

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> RepoError + '_ {
    move |source| RepoError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Where a package came from: what `kudo install` reports, and where its dependencies named
/// by name are looked up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// A folder or a `.tgz` on disk.
    Local,
    /// An `http(s)://` URL.
    Url(String),
    /// A repository: its name, and the package's URL.
    Repository {
        /// The repository's name.
        name: String,
        /// Where the package was downloaded from.
        url: String,
        /// The package's sha256 (the index's digest).
        digest: String,
        /// How its signature was checked (`None`: not checked).
        checked: Option<Checked>,
    },
    /// An OCI registry.
    Oci {
        /// `oci://REGISTRY/PATH/NAME:TAG`.
        reference: String,
        /// The manifest's digest, `sha256:HEX`.
        digest: String,
        /// How its signature was checked (`None`: not checked).
        checked: Option<Checked>,
    },
}

impl Origin {
    /// How the package's signature was checked, said in a few words for stderr: `, signed
    /// by sha256:...` or `, NOT verified`.
    pub fn checked_note(&self) -> String {
        let checked = match self {
            Origin::Repository { checked, .. } | Origin::Oci { checked, .. } => checked,
            _ => &None,
        };
        match checked {
            Some(Checked::Signed { fingerprint, key }) => {
                format!(
                    ", signature verified (key {}, {fingerprint})",
                    key.display()
                )
            }
            Some(Checked::Unverified) => ", signature NOT verified".into(),
            None => String::new(),
        }
    }
}

/// Which repository a name is looked up in, and which version: `--repo`,
/// `--operator-version`, `--app-version`, `--plain-http`.
#[derive(Debug, Clone, Default)]
pub struct Source {
    /// `--repo`: else the configuration's context.
    pub repo: Option<String>,
    /// The versions asked for.
    pub want: Want,
    /// `--plain-http`, for an `oci://` registry without TLS.
    pub plain_http: bool,
    /// `--verify[=KEY]`: signatures required, by KEY (empty: by the configuration's keys).
    pub verify: Option<PathBuf>,
}

/// A package argument, resolved.
pub struct Resolved {
    /// The package.
    pub package: Package,
    /// Where it came from.
    pub origin: Origin,
}

impl Resolved {
    /// One line for stderr saying where a package not on disk came from, and how its
    /// signature was checked; `None` for a package on disk.
    pub fn provenance(&self) -> Option<String> {
        let pkg = &self.package;
        let what = format!(
            "{} {}",
            pkg.operator().name,
            kudo_pkg::repo::versions(&pkg.version(), pkg.operator().app_version.as_deref())
        );
        let checked = self.origin.checked_note();
        match &self.origin {
            Origin::Local => None,
            Origin::Url(url) => Some(format!("{what} from {url}")),
            Origin::Repository {
                name, url, digest, ..
            } => Some(format!(
                "{what} from repository {name} ({url}, sha256 {digest} checked){checked}"
            )),
            Origin::Oci {
                reference, digest, ..
            } => Some(format!("{what} from {reference} ({digest}){checked}")),
        }
    }
}

/// Turns PACKAGE arguments (and KudoOperator dependencies) into packages, through the
/// repositories of the configuration; remembers where each package came from.
pub struct Resolver {
    home: Home,
    source: Source,
    config: RefCell<Option<Repositories>>,
    http: RefCell<Option<http::Http>>,
    /// Package source path → the repository (or OCI base) its dependencies are looked up in.
    origins: RefCell<HashMap<PathBuf, Origin>>,
    /// Indexes read in this run, by repository URL (each is read or downloaded once).
    indexes: RefCell<HashMap<String, (Index, bool)>>,
}

impl Resolver {
    /// A resolver over the configuration and cache of `home`.
    pub fn new(home: Home, source: Source) -> Resolver {
        Resolver {
            home,
            source,
            config: RefCell::new(None),
            http: RefCell::new(None),
            origins: RefCell::new(HashMap::new()),
            indexes: RefCell::new(HashMap::new()),
        }
    }

    /// The configuration (read once).
    pub fn config(&self) -> Result<Repositories> {
        if let Some(c) = self.config.borrow().as_ref() {
            return Ok(c.clone());
        }
        let c = Repositories::load(&self.home)?;
        *self.config.borrow_mut() = Some(c.clone());
        Ok(c)
    }

    fn with_http<T>(&self, f: impl FnOnce(&http::Http) -> Result<T>) -> Result<T> {
        if self.http.borrow().is_none() {
            *self.http.borrow_mut() = Some(http::Http::new()?);
        }
        let guard = self.http.borrow();
        f(guard.as_ref().expect("set above"))
    }

    /// The repository `--repo` names, or the context.
    fn repository(&self, name: Option<&str>) -> Result<Repository> {
        let config = self.config()?;
        let name = name
            .or(self.source.repo.as_deref())
            .unwrap_or(&config.context)
            .to_string();
        config
            .get(&name)
            .cloned()
            .ok_or(RepoError::NoRepository(name))
    }

    /// Resolves a PACKAGE argument: a local folder, a local `.tgz`, an `http(s)://` URL, an
    /// `oci://` reference, else an operator name in a repository.
    pub fn package(&self, arg: &str) -> Result<Resolved> {
        let path = Path::new(arg);
        if path.exists() {
            if self.source.verify.is_some() {
                return Err(RepoError::NothingToVerify(arg.to_string()));
            }
            let package = Package::load(path).map_err(|e| RepoError::Package {
                url: arg.to_string(),
                source: Box::new(e),
            })?;
            return Ok(Resolved {
                package,
                origin: Origin::Local,
            });
        }
        if arg.starts_with("http://") || arg.starts_with("https://") {
            if self.source.verify.is_some() {
                return Err(RepoError::NothingToVerify(arg.to_string()));
            }
            let bytes = self.with_http(|h| h.get(arg))?;
            let file = self.cache_package(&bytes, arg)?;
            let package = self.load_cached(&file, arg)?.with_provenance(provenance(
                arg,
                &sha256_hex(&bytes),
                None,
            ));
            let origin = Origin::Url(arg.to_string());
            return Ok(self.remember(package, origin));
        }
        if arg.starts_with("oci://") {
            return self.oci(arg);
        }
        if looks_like_a_path(arg) {
            return Err(RepoError::Io {
                path: path.to_path_buf(),
                source: std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    "no such file or directory",
                ),
            });
        }
        let repo = self.repository(None)?;
        let (package, origin) = self.in_repository(&repo, arg, &self.source.want)?;
        Ok(self.remember(package, origin))
    }

    /// The policy a package is checked by: `--verify[=KEY]`, else `configured` (its
    /// repository's or registry's), with its keys read; `None`: not checked.
    fn policy(&self, configured: Policy) -> Result<Option<(Policy, Vec<PublicKey>)>> {
        let policy = match &self.source.verify {
            Some(key) if !key.as_os_str().is_empty() => Policy {
                verify: Mode::Required,
                keys: vec![key.clone()],
                from: format!("--verify={}", key.display()),
            },
            Some(_) if configured.keys.is_empty() => Policy {
                verify: Mode::Required,
                keys: Vec::new(),
                from: "--verify".into(),
            },
            Some(_) => Policy {
                verify: Mode::Required,
                from: format!("--verify, with the keys of {}", configured.from),
                keys: configured.keys,
            },
            None => configured,
        };
        if policy.verify == Mode::None {
            return Ok(None);
        }
        let keys = policy.read_keys()?;
        Ok(Some((policy, keys)))
    }

    /// A signature check's end: verified; or, not verified, refused under `required` and
    /// warned of under `warn`.
    fn settle(
        &self,
        (policy, keys): &(Policy, Vec<PublicKey>),
        package: &str,
        digest: &str,
        found: std::result::Result<&PublicKey, String>,
    ) -> Result<Checked> {
        let why = match found {
            Ok(k) => {
                return Ok(Checked::Signed {
                    fingerprint: k.fingerprint.clone(),
                    key: k.path.clone(),
                });
            }
            Err(why) => why,
        };
        let tried: Vec<String> = keys.iter().map(PublicKey::describe).collect();
        if policy.verify == Mode::Required {
            return Err(RepoError::Unverified(Box::new(Unverified {
                package: package.to_string(),
                digest: digest.to_string(),
                keys: tried,
                why,
                from: policy.from.clone(),
            })));
        }
        eprintln!(
            "warning: {package}: signature NOT verified: {why}\n  digest: {digest}\n  keys tried: {}\n  used anyway: verify: warn ({})",
            tried.join(", "),
            policy.from
        );
        Ok(Checked::Unverified)
    }

    fn remember(&self, package: Package, origin: Origin) -> Resolved {
        self.origins
            .borrow_mut()
            .insert(package.source().to_path_buf(), origin.clone());
        Resolved { package, origin }
    }

    /// The index of `repo`: this run's copy, else the cached one, else downloaded (and
    /// cached). `refresh` downloads it even when cached (once per run).
    pub fn index(&self, repo: &Repository, refresh: bool) -> Result<(Index, bool)> {
        if let Some((index, fresh)) = self.indexes.borrow().get(&repo.url)
            && (!refresh || *fresh)
        {
            return Ok((index.clone(), *fresh));
        }
        let cached = self.home.index_file(repo);
        if !refresh
            && let Ok(text) = std::fs::read_to_string(&cached)
            && let Ok(index) = Index::parse(&text)
        {
            self.indexes
                .borrow_mut()
                .insert(repo.url.clone(), (index.clone(), false));
            return Ok((index, false));
        }
        let index = self.download_index(repo)?;
        self.indexes
            .borrow_mut()
            .insert(repo.url.clone(), (index.clone(), true));
        Ok((index, true))
    }

    /// Downloads the index of `repo` and writes it to the cache.
    pub fn download_index(&self, repo: &Repository) -> Result<Index> {
        let url = repo.index_url();
        let bytes = self.with_http(|h| h.get(&url))?;
        let text = String::from_utf8(bytes).map_err(|_| RepoError::Download {
            url: url.clone(),
            message: "the index is not UTF-8 text".into(),
        })?;
        let index = Index::parse(&text).map_err(|source| RepoError::Index {
            url: url.clone(),
            source,
        })?;
        let file = self.home.index_file(repo);
        write_atomic(&file, text.as_bytes())?;
        Ok(index)
    }

    /// The package `name` in `repo`, in the versions `want` asks for: the cached index first,
    /// downloaded again when it lacks them; the package from the cache when there, else
    /// downloaded and its digest checked.
    fn in_repository(
        &self,
        repo: &Repository,
        name: &str,
        want: &Want,
    ) -> Result<(Package, Origin)> {
        let entry = self.entry(repo, name, want)?;
        let policy = self.policy(self.config()?.repository_policy(&self.home, repo))?;
        let checked = match &policy {
            None => None,
            Some(p) => {
                let package = format!(
                    "{} {} from repository {}",
                    entry.name,
                    entry.versions(),
                    repo.name
                );
                let digest = entry.digest.as_deref().map(str::to_ascii_lowercase);
                let found = match &digest {
                    Some(d) => crate::trust::verify_entry(&entry, d, &p.1),
                    None => Err(
                        "the index gives no digest for this package, so no signature can cover it"
                            .into(),
                    ),
                };
                let shown = format!("sha256:{}", digest.unwrap_or_default());
                Some(self.settle(p, &package, &shown, found)?)
            }
        };
        let (file, url, digest) = self.fetch(repo, &entry)?;
        let package = self.load_cached(&file, &url)?.with_provenance(provenance(
            &url,
            &digest,
            checked.as_ref(),
        ));
        Ok((
            package,
            Origin::Repository {
                name: repo.name.clone(),
                url,
                digest,
                checked,
            },
        ))
    }

    /// The entry of package `name` in `repo`, in the versions `want` asks for: from the cached
    /// index first, downloaded again when it lacks them.
    fn entry(&self, repo: &Repository, name: &str, want: &Want) -> Result<Entry> {
        let (index, fresh) = self.index(repo, false)?;
        match index.find(name, want, &repo.name) {
            Ok(e) => Ok(e.clone()),
            Err(_) if !fresh => {
                let (index, _) = self.index(repo, true)?;
                Ok(index.find(name, want, &repo.name)?.clone())
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Where the signature of PACKAGE `arg` is, resolved as [`Resolver::package`] resolves
    /// it (an untagged `oci://` reference to the newest tag the versions asked for accept, a
    /// name to its repository's entry), without downloading the package. A folder, a `.tgz`
    /// or an `http(s)://` URL carries none: refused.
    pub fn signed(&self, arg: &str) -> Result<Signed> {
        if Path::new(arg).exists() || arg.starts_with("http://") || arg.starts_with("https://") {
            return Err(RepoError::NothingToVerify(arg.to_string()));
        }
        if arg.starts_with("oci://") {
            let reference = crate::oci::Reference::parse(arg).map_err(oci)?;
            reference.require(false).map_err(oci)?;
            let registry = crate::oci::Registry::new(self.source.plain_http).map_err(oci)?;
            let runtime = runtime()?;
            let tagged = runtime.block_on(self.tagged(&registry, reference, &self.source.want))?;
            return Ok(Signed::Oci(tagged));
        }
        let repo = self.repository(None)?;
        let entry = self.entry(&repo, arg, &self.source.want)?;
        Ok(Signed::Entry {
            repository: repo.name,
            entry: Box::new(entry),
        })
    }

    /// `reference` with its tag: its own, else the newest tag of its repository that `want`
    /// accepts (tags are `APPVERSION_OPERATORVERSION`; the same order and the same version
    /// rules as a repository's).
    async fn tagged(
        &self,
        registry: &crate::oci::Registry,
        reference: crate::oci::Reference,
        want: &Want,
    ) -> Result<crate::oci::Reference> {
        if reference.tag.is_some() {
            return Ok(reference);
        }
        let name = reference.name().to_string();
        let tags = registry.tags(&reference).await.map_err(oci)?;
        let mut index = Index::new(None);
        for tag in &tags {
            if let Some((app, op)) = crate::oci::versions_of_tag(tag) {
                let _ = index.add(Entry {
                    name: name.clone(),
                    operator_version: op,
                    app_version: app,
                    urls: vec![tag.clone()],
                    ..Entry::default()
                });
            }
        }
        let entry = index.find(&name, want, &reference.to_string())?;
        Ok(reference.with_tag(&entry.urls[0]))
    }

    /// The `.tgz` of `entry`, from the cache or downloaded, its sha256 equal to the entry's
    /// digest: its cached file, URL and digest.
    fn fetch(&self, repo: &Repository, entry: &Entry) -> Result<(PathBuf, String, String)> {
        let urls: Vec<String> = entry.urls.iter().map(|u| repo.resolve(u)).collect();
        let first = urls.first().cloned().unwrap_or_default();
        let expected = entry.digest.as_deref().map(str::to_ascii_lowercase);
        if let Some(digest) = &expected
            && let Some(file) = self.home.cached_package(digest)
        {
            return Ok((file, first, digest.clone()));
        }
        let mut last = RepoError::Download {
            url: entry.name.clone(),
            message: "the index gives no URL for this package".into(),
        };
        for url in &urls {
            let bytes = match self.with_http(|h| h.get(url)) {
                Ok(b) => b,
                Err(e) => {
                    last = e;
                    continue;
                }
            };
            let actual = sha256_hex(&bytes);
            match &expected {
                Some(d) if *d != actual => {
                    return Err(RepoError::Digest {
                        repository: repo.name.clone(),
                        url: url.clone(),
                        expected: d.clone(),
                        actual,
                    });
                }
                _ => {}
            }
            let file = self.cache_package(&bytes, url)?;
            return Ok((file, url.clone(), actual));
        }
        Err(last)
    }

    /// Writes downloaded package bytes into the cache by their digest.
    fn cache_package(&self, bytes: &[u8], url: &str) -> Result<PathBuf> {
        let digest = sha256_hex(bytes);
        let name = url
            .rsplit('/')
            .next()
            .filter(|n| n.ends_with(".tgz") || n.ends_with(".tar.gz"))
            .unwrap_or("package.tgz");
        let file = self.home.package_file(&digest, name);
        if !file.exists() {
            write_atomic(&file, bytes)?;
        }
        Ok(file)
    }

    fn load_cached(&self, file: &Path, url: &str) -> Result<Package> {
        Package::load(file).map_err(|e| RepoError::Package {
            url: url.to_string(),
            source: Box::new(e),
        })
    }

    /// A package from an OCI registry: `oci://REGISTRY/PATH/NAME[:TAG]`; without a tag, the
    /// newest tag the versions asked for accept (tags are `APPVERSION_OPERATORVERSION`).
    fn oci(&self, arg: &str) -> Result<Resolved> {
        let reference = crate::oci::Reference::parse(arg).map_err(oci)?;
        let (package, origin) = self.oci_package(reference, &self.source.want)?;
        Ok(self.remember(package, origin))
    }

    fn oci_package(
        &self,
        reference: crate::oci::Reference,
        want: &Want,
    ) -> Result<(Package, Origin)> {
        let policy = self.policy(self.config()?.registry_policy(
            &self.home,
            &format!("{}/{}", reference.registry, reference.repository),
        ))?;
        let registry = crate::oci::Registry::new(self.source.plain_http).map_err(oci)?;
        let runtime = runtime()?;
        let name = reference.name().to_string();
        let tagged = runtime.block_on(self.tagged(&registry, reference, want))?;
        let pulled = runtime.block_on(registry.pull(&tagged)).map_err(oci)?;
        let checked = match &policy {
            None => None,
            Some(p) => {
                let found = runtime
                    .block_on(registry.verify(&tagged, &pulled.manifest_digest, &p.1))
                    .map_err(oci)?;
                let found = found.map(|(key, _format)| key);
                Some(self.settle(p, &tagged.to_string(), &pulled.manifest_digest, found)?)
            }
        };
        let tag = tagged.tag.clone().unwrap_or_default();
        let file = self.cache_package(&pulled.bytes, &format!("{name}-{tag}.tgz"))?;
        let source = format!("{tagged}@{}", pulled.manifest_digest);
        let package = self
            .load_cached(&file, &tagged.to_string())?
            .with_provenance(provenance(
                &source,
                &pulled.package_digest,
                checked.as_ref(),
            ));
        Ok((
            package,
            Origin::Oci {
                reference: tagged.to_string(),
                digest: pulled.manifest_digest,
                checked,
            },
        ))
    }
}

/// What the OperatorVersion records of a package from `source` of sha256 `digest` (hex).
fn provenance(source: &str, digest: &str, checked: Option<&Checked>) -> Provenance {
    let (signer, verification) = match checked {
        Some(Checked::Signed { fingerprint, .. }) => (Some(fingerprint.clone()), "verified"),
        Some(Checked::Unverified) => (None, "unverified"),
        None => (None, Mode::None.as_str()),
    };
    Provenance {
        source: source.to_string(),
        digest: format!("sha256:{digest}"),
        signer,
        verification: verification.into(),
    }
}

/// Where a package's signature is ([`Resolver::signed`]).
#[derive(Debug, Clone)]
pub enum Signed {
    /// A registry package at this tag: cosign's signatures of its manifest digest.
    Oci(crate::oci::Reference),
    /// A repository package: its index entry's signatures.
    Entry {
        /// The repository's name.
        repository: String,
        /// The entry.
        entry: Box<Entry>,
    },
}

/// A runtime for one blocking registry call.
fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| RepoError::Oci(format!("cannot start a runtime: {e}")))
}

fn oci(e: crate::oci::OciError) -> RepoError {
    RepoError::Oci(e.to_string())
}

impl Lookup for Resolver {
    /// A dependency named by name: in the repository its parent came from (for a parent on
    /// disk or from a URL: `--repo`, else the context), with the task's versions.
    fn by_name(
        &self,
        parent: &Package,
        spec: &KudoOperatorTask,
    ) -> std::result::Result<Package, String> {
        let want = Want::parse(
            spec.operator_version.as_deref(),
            spec.app_version.as_deref(),
        )
        .map_err(|e| e.to_string())?;
        let origin = self.origins.borrow().get(parent.source()).cloned();
        if let Some(Origin::Oci {
            reference: parent_ref,
            ..
        }) = &origin
        {
            // A sibling of the parent's repository: oci://REGISTRY/PATH/CHILD.
            let mut child = crate::oci::Reference::parse(parent_ref).map_err(|e| e.to_string())?;
            let path = child
                .repository
                .rsplit_once('/')
                .map(|(p, _)| p.to_string());
            child.repository = match path {
                Some(p) => format!("{p}/{}", spec.package),
                None => spec.package.clone(),
            };
            child.tag = None;
            let (package, origin) = self.oci_package(child, &want).map_err(|e| e.to_string())?;
            return Ok(self.remember(package, origin).package);
        }
        let repo = match &origin {
            Some(Origin::Repository { name, .. }) => self.repository(Some(name)),
            _ => self.repository(None),
        }
        .map_err(|e| e.to_string())?;
        let (package, origin) = self
            .in_repository(&repo, &spec.package, &want)
            .map_err(|e| e.to_string())?;
        Ok(self.remember(package, origin).package)
    }
}

/// Whether a PACKAGE argument that does not exist was meant as a path, not a name.
fn looks_like_a_path(arg: &str) -> bool {
    arg.contains('/')
        || arg.contains('\\')
        || arg.ends_with(".tgz")
        || arg.ends_with(".tar.gz")
        || arg.starts_with('.')
}

/// Writes a file through a temporary file in the same directory and a rename (readers see
/// all of it or nothing), making the directory first.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    crate::atomic::write(path, bytes, None).map_err(io(path))
}
