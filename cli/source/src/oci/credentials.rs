//! Registry credentials: where `kudo registry login` keeps them, and where push, pull and tags
//! find them.
//!
//! Both files are Docker's config format, `{"auths": {"HOST[:PORT]": {"auth":
//! base64(USER:PASSWORD)}}}`:
//!
//! 1. kudo's own, written by `kudo registry login`: `$KUDO_HOME/registry/config.json` when
//!    `KUDO_HOME` is set, else `$XDG_CONFIG_HOME/kudo/registry/config.json` (XDG's default:
//!    `~/.config`). Mode 0600, written atomically.
//! 2. Docker's, read only: `$DOCKER_CONFIG/config.json`, else `~/.docker/config.json`. An entry
//!    gives `auth`, or `username` and `password`. Credential helpers (`credsStore`,
//!    `credHelpers`) and `identitytoken` are not used: such an entry counts as none, and the
//!    registry is asked anonymously.
//!
//! A key matches a registry with its scheme and path left out (`https://ghcr.io/v1/` is
//! `ghcr.io`); Docker Hub's `https://index.docker.io/v1/` is `docker.io`.

use std::path::{Path, PathBuf};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde_json::{Map, Value, json};

use super::OciError;

/// A user name and password (or token).
#[derive(Clone, PartialEq, Eq)]
pub struct Credentials {
    /// The user.
    pub username: String,
    /// The password or token; never printed.
    pub password: String,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credentials")
            .field("username", &self.username)
            .finish_non_exhaustive()
    }
}

/// Credentials and the file they were found in.
#[derive(Debug, Clone)]
pub struct Found {
    /// The credentials.
    pub credentials: Credentials,
    /// The file that holds them.
    pub file: PathBuf,
}

/// kudo's credentials file (see the module's docs); `None` when neither `KUDO_HOME`,
/// `XDG_CONFIG_HOME` nor `HOME` is set.
pub fn kudo_file() -> Option<PathBuf> {
    if let Some(home) = env_path("KUDO_HOME") {
        return Some(home.join("registry").join("config.json"));
    }
    let config =
        env_path("XDG_CONFIG_HOME").or_else(|| env_path("HOME").map(|h| h.join(".config")))?;
    Some(config.join("kudo").join("registry").join("config.json"))
}

/// Docker's config file: `$DOCKER_CONFIG/config.json`, else `~/.docker/config.json`.
pub fn docker_file() -> Option<PathBuf> {
    env_path("DOCKER_CONFIG")
        .or_else(|| env_path("HOME").map(|h| h.join(".docker")))
        .map(|d| d.join("config.json"))
}

fn env_path(var: &str) -> Option<PathBuf> {
    std::env::var_os(var)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// The credentials for `registry` (`host[:port]`): kudo's file first, then Docker's; `None`
/// when neither has an entry with a user and password.
pub fn lookup(registry: &str) -> Result<Option<Found>, OciError> {
    for file in [kudo_file(), docker_file()].into_iter().flatten() {
        let Some(config) = read(&file)? else {
            continue;
        };
        if let Some((_, entry)) = entry(&config, registry)
            && let Some(credentials) = decode(entry).map_err(|reason| OciError::Credentials {
                path: file.clone(),
                reason: format!("the entry of {registry}: {reason}"),
            })?
        {
            return Ok(Some(Found { credentials, file }));
        }
    }
    Ok(None)
}

/// Stores the credentials of `registry` in kudo's file, replacing any entry it had; returns
/// the file.
pub fn store(registry: &str, credentials: &Credentials) -> Result<PathBuf, OciError> {
    let file = kudo_file().ok_or_else(no_home)?;
    let mut config = read(&file)?.unwrap_or_else(|| json!({}));
    let auths = auths_mut(&mut config, &file)?;
    auths.retain(|k, _| key(k) != key(registry));
    let auth = BASE64.encode(format!("{}:{}", credentials.username, credentials.password));
    auths.insert(registry.to_string(), json!({ "auth": auth }));
    write(&file, &config)?;
    Ok(file)
}

/// Removes the entry of `registry` from kudo's file; returns the file and whether there was
/// one.
pub fn remove(registry: &str) -> Result<(PathBuf, bool), OciError> {
    let file = kudo_file().ok_or_else(no_home)?;
    let Some(mut config) = read(&file)? else {
        return Ok((file, false));
    };
    let auths = auths_mut(&mut config, &file)?;
    let before = auths.len();
    auths.retain(|k, _| key(k) != key(registry));
    let removed = auths.len() != before;
    if removed {
        write(&file, &config)?;
    }
    Ok((file, removed))
}

/// Whether Docker's config has an entry (of any kind) for `registry`: `kudo registry logout`
/// says that it stays.
pub fn in_docker_config(registry: &str) -> Option<PathBuf> {
    let file = docker_file()?;
    let config = read(&file).ok()??;
    entry(&config, registry).map(|_| file)
}

fn no_home() -> OciError {
    OciError::Credentials {
        path: PathBuf::from("$KUDO_HOME"),
        reason: "nowhere to keep credentials: set KUDO_HOME, XDG_CONFIG_HOME or HOME".into(),
    }
}

/// The file's JSON; `None` when it does not exist.
fn read(path: &Path) -> Result<Option<Value>, OciError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(OciError::Credentials {
                path: path.to_path_buf(),
                reason: format!("cannot read it: {e}"),
            });
        }
    };
    if text.trim().is_empty() {
        return Ok(None);
    }
    let value: Value = serde_json::from_str(&text).map_err(|e| OciError::Credentials {
        path: path.to_path_buf(),
        reason: format!("not a JSON registry config: {e}"),
    })?;
    if !value.is_object() {
        return Err(OciError::Credentials {
            path: path.to_path_buf(),
            reason: "not a JSON registry config: not an object".into(),
        });
    }
    Ok(Some(value))
}

fn auths_mut<'a>(
    config: &'a mut Value,
    file: &Path,
) -> Result<&'a mut Map<String, Value>, OciError> {
    let bad = || OciError::Credentials {
        path: file.to_path_buf(),
        reason: "`auths` is not an object".into(),
    };
    let object = config.as_object_mut().ok_or_else(bad)?;
    object
        .entry("auths")
        .or_insert_with(|| json!({}))
        .as_object_mut()
        .ok_or_else(bad)
}

/// The entry whose key names `registry`.
fn entry<'a>(config: &'a Value, registry: &str) -> Option<(&'a String, &'a Value)> {
    let want = key(registry);
    config
        .get("auths")?
        .as_object()?
        .iter()
        .find(|(k, _)| key(k) == want)
}

/// A key as a registry: no scheme, no path, lowercase, Docker Hub's names as `docker.io`.
fn key(s: &str) -> String {
    let s = s
        .strip_prefix("https://")
        .or_else(|| s.strip_prefix("http://"))
        .unwrap_or(s);
    let host = s.split('/').next().unwrap_or(s).to_ascii_lowercase();
    match host.as_str() {
        "index.docker.io" | "registry-1.docker.io" => "docker.io".into(),
        _ => host,
    }
}

/// An entry's user and password; `Ok(None)` for an entry without them (a credential helper's
/// or an identity token's).
fn decode(entry: &Value) -> Result<Option<Credentials>, String> {
    let text = |k: &str| {
        entry
            .get(k)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    };
    if let Some(auth) = text("auth") {
        let bytes = BASE64
            .decode(auth.trim())
            .map_err(|_| "`auth` is not base64".to_string())?;
        let pair = String::from_utf8(bytes).map_err(|_| "`auth` is not UTF-8 text".to_string())?;
        let (user, password) = pair
            .split_once(':')
            .ok_or_else(|| "`auth` is not USER:PASSWORD".to_string())?;
        return Ok(Some(Credentials {
            username: user.to_string(),
            password: password.to_string(),
        }));
    }
    match (text("username"), text("password")) {
        (Some(u), Some(p)) => Ok(Some(Credentials {
            username: u.to_string(),
            password: p.to_string(),
        })),
        _ => Ok(None),
    }
}

/// Writes the config through a temporary file (mode 0600) and a rename.
fn write(path: &Path, config: &Value) -> Result<(), OciError> {
    let fail = |e: std::io::Error| OciError::Credentials {
        path: path.to_path_buf(),
        reason: format!("cannot write it: {e}"),
    };
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir).map_err(fail)?;
    let mut text =
        serde_json::to_string_pretty(config).map_err(|e| OciError::Internal(e.to_string()))?;
    text.push('\n');
    crate::atomic::write(path, text.as_bytes(), Some(0o600)).map_err(fail)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_name_registries_without_scheme_or_path() {
        let cases = [
            ("ghcr.io", "ghcr.io"),
            ("https://ghcr.io", "ghcr.io"),
            ("https://GHCR.io/v1/", "ghcr.io"),
            ("http://localhost:5000", "localhost:5000"),
            ("https://index.docker.io/v1/", "docker.io"),
            ("registry-1.docker.io", "docker.io"),
            ("docker.io", "docker.io"),
        ];
        for (input, want) in cases {
            assert_eq!(key(input), want, "key: {input}");
        }
    }

    #[test]
    fn entries_give_auth_or_username_and_password() {
        let auth = BASE64.encode("alice:s3:cret");
        type UserAndPassword<'a> = Option<(&'a str, &'a str)>;
        let cases: &[(Value, Result<UserAndPassword, &str>)] = &[
            (json!({"auth": auth}), Ok(Some(("alice", "s3:cret")))),
            (
                json!({"username": "bob", "password": "pw"}),
                Ok(Some(("bob", "pw"))),
            ),
            (json!({"identitytoken": "tok"}), Ok(None)),
            (json!({}), Ok(None)),
            (json!({"auth": "***"}), Err("`auth` is not base64")),
            (
                json!({"auth": BASE64.encode("nocolon")}),
                Err("`auth` is not USER:PASSWORD"),
            ),
        ];
        for (entry, want) in cases {
            let got = decode(entry);
            let got = got
                .as_ref()
                .map(|c| {
                    c.as_ref()
                        .map(|c| (c.username.as_str(), c.password.as_str()))
                })
                .map_err(String::as_str);
            assert_eq!(got, *want, "entry: {entry}");
        }
    }

    #[test]
    fn debug_never_shows_the_password() {
        let c = Credentials {
            username: "alice".into(),
            password: "hunter2".into(),
        };
        let text = format!("{c:?}");
        assert!(
            text.contains("alice") && !text.contains("hunter2"),
            "{text}"
        );
    }
}
