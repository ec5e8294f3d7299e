//! Where kudo keeps its repositories (`repositories.yaml`, KUDO's format) and its cache.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{RepoError, Result, io, write_atomic};
use crate::trust::{Mode, Policy};

/// The repository KUDO configures by default, and kudo too.
pub const COMMUNITY: &str = "community";
/// Its URL (KUDO's `repo.Default`).
pub const COMMUNITY_URL: &str = "https://kudo-repository.storage.googleapis.com/v1";

/// kudo's files: the configuration file and the cache directory.
#[derive(Debug, Clone)]
pub struct Home {
    /// `repositories.yaml`.
    pub config: PathBuf,
    /// The cache directory.
    pub cache: PathBuf,
}

impl Home {
    /// From the environment: `$KUDO_HOME/repository/repositories.yaml` when `KUDO_HOME` is set,
    /// else `$XDG_CONFIG_HOME/kudo/repositories.yaml`; the cache in `$XDG_CACHE_HOME/kudo`
    /// (XDG's defaults: `~/.config`, `~/.cache`).
    pub fn from_env() -> Result<Home> {
        use etcetera::BaseStrategy;
        let xdg = etcetera::choose_base_strategy().map_err(|e| RepoError::Io {
            path: PathBuf::from("$HOME"),
            source: std::io::Error::new(std::io::ErrorKind::NotFound, e.to_string()),
        })?;
        let config = match std::env::var_os("KUDO_HOME").filter(|v| !v.is_empty()) {
            Some(home) => PathBuf::from(home)
                .join("repository")
                .join("repositories.yaml"),
            None => xdg.config_dir().join("kudo").join("repositories.yaml"),
        };
        Ok(Home {
            config,
            cache: xdg.cache_dir().join("kudo"),
        })
    }

    /// The cached index of `repo`: by name and a hash of its URL, so a name given to another
    /// URL never reads the old one's index.
    pub fn index_file(&self, repo: &Repository) -> PathBuf {
        let hash = &kudo_pkg::repo::sha256_hex(repo.url.as_bytes())[..12];
        self.cache
            .join("repository")
            .join(format!("{}-{hash}-index.yaml", repo.name))
    }

    /// Where a package of sha256 `digest` is cached, as `file`.
    pub fn package_file(&self, digest: &str, file: &str) -> PathBuf {
        self.cache.join("packages").join(digest).join(file)
    }

    /// The cached package of sha256 `digest`, when the cache holds it and its bytes still have
    /// that digest (a cached file changed on disk is not used).
    pub fn cached_package(&self, digest: &str) -> Option<PathBuf> {
        let dir = self.cache.join("packages").join(digest);
        let file = std::fs::read_dir(&dir)
            .ok()?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .find(|p| p.is_file())?;
        let bytes = std::fs::read(&file).ok()?;
        (kudo_pkg::repo::sha256_hex(&bytes) == digest).then_some(file)
    }

    /// Removes the cached indexes of repository `name`.
    pub fn forget_index(&self, name: &str) {
        let dir = self.cache.join("repository");
        let Ok(entries) = std::fs::read_dir(&dir) else {
            return;
        };
        for e in entries.flatten() {
            let file = e.file_name().to_string_lossy().into_owned();
            if let Some(rest) = file.strip_prefix(&format!("{name}-"))
                && rest.len() == "0123456789ab-index.yaml".len()
                && rest.ends_with("-index.yaml")
            {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
}

/// One configured repository.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Repository {
    /// Its name.
    pub name: String,
    /// Its URL: where `index.yaml` is, and what relative package URLs are relative to.
    pub url: String,
    /// kudo's: whether its packages' signatures are checked (KUDO ignores the field).
    #[serde(default, skip_serializing_if = "Mode::is_none")]
    pub verify: Mode,
    /// kudo's: the public keys its packages are signed with.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub keys: Vec<PathBuf>,
}

/// kudo's signature policy for an OCI registry, or a path in it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RegistryPolicy {
    /// `HOST[:PORT][/PATH]`: the packages whose `REGISTRY/PATH/NAME` starts with it (at a `/`).
    pub prefix: String,
    /// Whether their signatures are checked.
    #[serde(default)]
    pub verify: Mode,
    /// The public keys they are signed with.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub keys: Vec<PathBuf>,
}

impl RegistryPolicy {
    /// Whether it applies to `name` (`REGISTRY/PATH/NAME`).
    pub fn applies_to(&self, name: &str) -> bool {
        let prefix = self.prefix.trim_end_matches('/');
        name == prefix || name.starts_with(&format!("{prefix}/"))
    }
}

impl Repository {
    /// `URL/index.yaml`.
    pub fn index_url(&self) -> String {
        format!("{}/index.yaml", self.url.trim_end_matches('/'))
    }

    /// A package URL of the index, absolute (a relative one is relative to the repository).
    pub fn resolve(&self, url: &str) -> String {
        if url.contains("://") {
            return url.to_string();
        }
        let base = format!("{}/", self.url.trim_end_matches('/'));
        match reqwest::Url::parse(&base).and_then(|b| b.join(url)) {
            Ok(u) => u.to_string(),
            Err(_) => format!("{base}{}", url.trim_start_matches("./")),
        }
    }
}

/// `repositories.yaml`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Repositories {
    /// KUDO's repository format version (`v1`).
    #[serde(rename = "repoVersion", default = "repo_version")]
    pub repo_version: String,
    /// The repository names are looked up in when `--repo` is not given.
    #[serde(default)]
    pub context: String,
    /// The repositories.
    #[serde(default)]
    pub repositories: Vec<Repository>,
    /// kudo's: signature policies of OCI registries.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub registries: Vec<RegistryPolicy>,
    /// kudo's: signature policies of the container images packages run, per registry prefix
    /// (the same shape as `registries`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<RegistryPolicy>,
    /// kudo's: the mirror `kudo install|upgrade` install from (`oci://REGISTRY/PREFIX`, what
    /// `kudo package relocate` pushed there; `--mirror` for one command).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mirror: Option<String>,
}

fn repo_version() -> String {
    "v1".into()
}

impl Default for Repositories {
    /// KUDO's: the community repository, as the context.
    fn default() -> Repositories {
        Repositories {
            repo_version: repo_version(),
            context: COMMUNITY.into(),
            repositories: vec![Repository {
                name: COMMUNITY.into(),
                url: COMMUNITY_URL.into(),
                verify: Mode::None,
                keys: Vec::new(),
            }],
            registries: Vec::new(),
            images: Vec::new(),
            mirror: None,
        }
    }
}

impl Repositories {
    /// The configuration of `home`; KUDO's default when there is no file.
    pub fn load(home: &Home) -> Result<Repositories> {
        match std::fs::read_to_string(&home.config) {
            Ok(text) => Repositories::parse(&home.config, &text),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Repositories::default()),
            Err(e) => Err(io(&home.config)(e)),
        }
    }

    fn parse(path: &Path, text: &str) -> Result<Repositories> {
        let r: Repositories = serde_saphyr::from_str(text).map_err(|e| RepoError::Config {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        Ok(r)
    }

    /// Writes the configuration (atomically).
    pub fn save(&self, home: &Home) -> Result<()> {
        let value = serde_json::to_value(self).unwrap_or_default();
        write_atomic(
            &home.config,
            kudo_yaml::manifest::to_yaml(&value).as_bytes(),
        )
    }

    /// The repository named `name`.
    pub fn get(&self, name: &str) -> Option<&Repository> {
        self.repositories.iter().find(|r| r.name == name)
    }

    /// The policy of repository `repo`, its relative key paths made relative to `home`'s
    /// configuration file.
    pub fn repository_policy(&self, home: &Home, repo: &Repository) -> Policy {
        Policy {
            verify: repo.verify,
            keys: absolute(home, &repo.keys),
            from: format!("repository {} in {}", repo.name, home.config.display()),
        }
    }

    /// The policy of the registry path `name` (`REGISTRY/PATH/NAME`): the longest prefix that
    /// applies; none when no prefix does.
    pub fn registry_policy(&self, home: &Home, name: &str) -> Policy {
        longest(&self.registries, home, name, "registry")
    }

    /// The policy of container image `name` (`REGISTRY/PATH/NAME`, as a package's templates
    /// name it, normalized: `docker.io/library/zookeeper`): the `images` entry with the longest
    /// prefix that applies; none: `verify: none`.
    pub fn image_policy(&self, home: &Home, name: &str) -> Policy {
        longest(&self.images, home, name, "images")
    }
}

/// The entry of `policies` with the longest prefix that applies to `name`, as a [`Policy`]
/// whose `from` names `section`.
fn longest(policies: &[RegistryPolicy], home: &Home, name: &str, section: &str) -> Policy {
    match policies
        .iter()
        .filter(|r| r.applies_to(name))
        .max_by_key(|r| r.prefix.trim_end_matches('/').len())
    {
        Some(r) => Policy {
            verify: r.verify,
            keys: absolute(home, &r.keys),
            from: format!("{section} {} in {}", r.prefix, home.config.display()),
        },
        None => Policy::default(),
    }
}

/// Key paths, relative ones taken relative to the configuration file's folder.
fn absolute(home: &Home, keys: &[PathBuf]) -> Vec<PathBuf> {
    let dir = home.config.parent().unwrap_or(Path::new("."));
    keys.iter()
        .map(|k| {
            if k.is_absolute() {
                k.clone()
            } else {
                dir.join(k)
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kudos_repositories_file_reads_and_the_default_is_the_community_repository() {
        let text = "context: community\nrepoVersion: v1\nrepositories:\n- name: community\n  url: https://kudo-repository.storage.googleapis.com/v1\n";
        let r = Repositories::parse(Path::new("r.yaml"), text).unwrap();
        assert_eq!(r, Repositories::default());
        assert!(Repositories::parse(Path::new("r.yaml"), "repositories: 3\n").is_err());
    }

    #[test]
    fn a_registry_s_policy_is_its_longest_prefix_at_a_path_boundary_and_keys_are_absolute() {
        let home = Home {
            config: PathBuf::from("/etc/kudo/repositories.yaml"),
            cache: PathBuf::from("/tmp/cache"),
        };
        let text = "registries:\n- prefix: ghcr.io/acme\n  verify: warn\n  keys: [a.pub]\n- prefix: ghcr.io/acme/prod/\n  verify: required\n  keys: [/k/b.pub]\n";
        let r = Repositories::parse(Path::new("r.yaml"), text).unwrap();
        let p = r.registry_policy(&home, "ghcr.io/acme/prod/kafka");
        assert_eq!(p.verify, Mode::Required);
        assert_eq!(p.keys, [PathBuf::from("/k/b.pub")]);
        let p = r.registry_policy(&home, "ghcr.io/acme/dev/kafka");
        assert_eq!(p.verify, Mode::Warn);
        assert_eq!(p.keys, [PathBuf::from("/etc/kudo/a.pub")]);
        // `ghcr.io/acme` is not a prefix of `ghcr.io/acmeco/...`
        assert_eq!(
            r.registry_policy(&home, "ghcr.io/acmeco/kafka").verify,
            Mode::None
        );
        // KUDO's file, written back, keeps kudo's fields only where they are set
        let yaml = serde_json::to_string(&Repositories::default()).unwrap();
        assert!(
            !yaml.contains("verify") && !yaml.contains("registries"),
            "{yaml}"
        );
    }

    #[test]
    fn relative_package_urls_are_relative_to_the_repository() {
        let r = Repository {
            name: "local".into(),
            url: "http://127.0.0.1:8080/repo/".into(),
            verify: Mode::None,
            keys: Vec::new(),
        };
        assert_eq!(r.index_url(), "http://127.0.0.1:8080/repo/index.yaml");
        assert_eq!(
            r.resolve("kafka-2.5.1_1.3.2.tgz"),
            "http://127.0.0.1:8080/repo/kafka-2.5.1_1.3.2.tgz"
        );
        assert_eq!(r.resolve("https://x/y.tgz"), "https://x/y.tgz");
    }
}
