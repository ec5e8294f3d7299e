//! Operator repositories: KUDO's `index.yaml`, and which of its entries a name and a version
//! ask for.
//!
//! The format is KUDO's (`pkg/kudoctl/util/repo/index.go`): a map from operator name to the
//! list of its packages, each with its versions, description, maintainers, URLs and the sha256
//! `digest` of its `.tgz`. kudo reads KUDO's community index as it is and writes indexes KUDO
//! reads. Where kudo differs, it is on purpose:
//!
//! - each list is sorted newest first by appVersion, then operatorVersion (both versions as
//!   Masterminds/semver reads them, [`kudo_sprig::semver::Version`]), and entries whose
//!   appVersion is missing or not a version come last **in a stable order** (KUDO's
//!   `sort.Sort` with a `Less` that answers `true` for any unparsable version has none);
//! - a version asked for may be a range (`^1.3`, `~1.3.2`, `>=1.2, <2`, `1.3.x`), as Helm's
//!   `--version`, not only an exact string ([`Want`], [`kudo_sprig::semver::Range`]);
//! - nothing here touches the network or the disk: the CLI downloads, checks digests and
//!   caches (`cli/source/src/repo/`).

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::fmt;

use kudo_sprig::semver::{Range, Version};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::package::Package;

/// The `apiVersion` of the index files kudo writes (KUDO's repository version).
pub const INDEX_API_VERSION: &str = "v1";

/// An `index.yaml`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Index {
    /// `apiVersion` (`v1`).
    #[serde(rename = "apiVersion")]
    pub api_version: String,
    /// Operator name → its packages, newest first.
    #[serde(default)]
    pub entries: BTreeMap<String, Vec<Entry>>,
    /// When the index was generated (RFC 3339), as KUDO writes it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generated: Option<String>,
}

/// One package of an index.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// The operator's name.
    #[serde(default)]
    pub name: String,
    /// `operatorVersion`.
    #[serde(rename = "operatorVersion", default)]
    pub operator_version: String,
    /// `appVersion`, when the package has one.
    #[serde(
        rename = "appVersion",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub app_version: Option<String>,
    /// A one-sentence description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Maintainers, as `operator.yaml` lists them (`name`, `email`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub maintainers: Vec<Value>,
    /// Where the `.tgz` is: absolute, or relative to the repository's URL.
    #[serde(default)]
    pub urls: Vec<String>,
    /// The sha256 of the `.tgz`, lowercase hex.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
    /// KUDO's `removed` flag: a withdrawn package, never chosen.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub removed: bool,
    /// kudo's: cosign signatures over the package's digest (KUDO ignores the field).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub signatures: Vec<EntrySignature>,
}

/// A cosign signature of an index entry: cosign's simple-signing payload naming the package
/// and `sha256:DIGEST` (the entry's `digest`), and the signature over those bytes, as a
/// package in an OCI registry is signed over its manifest's digest.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EntrySignature {
    /// The payload's bytes, base64.
    pub payload: String,
    /// The signature, base64 (as cosign's `dev.cosignproject.cosign/signature` annotation).
    pub signature: String,
    /// The signing key's fingerprint (`sha256:` of its public key's DER), a hint to readers;
    /// verification does not trust it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
}

impl Entry {
    /// `APPVERSION_OPERATORVERSION`, or `OPERATORVERSION` alone, as KUDO names packages.
    pub fn versions(&self) -> String {
        versions(&self.operator_version, self.app_version.as_deref())
    }

    /// The entry for `pkg`, whose `.tgz` is `file`, has sha256 `digest` and is served at
    /// `{url}/{file}` (at `file`, relative to the index, without `url`).
    pub fn of_package(pkg: &Package, digest: &str, url: Option<&str>, file: &str) -> Entry {
        let doc = pkg.operator_document().value();
        let text = |k: &str| {
            doc.get(k)
                .and_then(Value::as_str)
                .filter(|s| !s.trim().is_empty())
                .map(String::from)
        };
        let url = match url {
            Some(u) => format!("{}/{file}", u.trim_end_matches('/')),
            None => file.to_string(),
        };
        Entry {
            name: pkg.operator().name.clone(),
            operator_version: pkg.version(),
            app_version: pkg.operator().app_version.clone(),
            description: text("description"),
            maintainers: doc
                .get("maintainers")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default(),
            urls: vec![url],
            digest: Some(digest.to_string()),
            removed: false,
            signatures: Vec::new(),
        }
    }
}

/// `APPVERSION_OPERATORVERSION`, or `OPERATORVERSION` without an appVersion.
pub fn versions(operator_version: &str, app_version: Option<&str>) -> String {
    match app_version {
        Some(app) if !app.is_empty() => format!("{app}_{operator_version}"),
        _ => operator_version.to_string(),
    }
}

/// The file name `kudo package create` writes and `kudo repo index` points at:
/// `NAME-APPVERSION_OPERATORVERSION.tgz`, or `NAME-OPERATORVERSION.tgz` (KUDO's names).
pub fn file_name(pkg: &Package) -> String {
    format!(
        "{}-{}.tgz",
        pkg.operator().name,
        versions(&pkg.version(), pkg.operator().app_version.as_deref())
    )
}

/// The sha256 of `bytes`, lowercase hex: a package's `digest`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    ring::digest::digest(&ring::digest::SHA256, bytes)
        .as_ref()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// `kudo repo index DIR`: an index of every `DIR/*.tgz` (by file name), served under `url`
/// (entries hold file names alone without one). What does not load as a package is left out,
/// with a warning; two packages with the same name and versions keep the first (by file
/// name), with a warning. Nothing is written.
pub fn index_dir(
    dir: &std::path::Path,
    url: Option<&str>,
    generated: Option<String>,
) -> std::io::Result<(Index, Vec<String>)> {
    let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "tgz"))
        .collect();
    files.sort();
    let mut index = Index::new(generated);
    let mut warnings = Vec::new();
    for path in files {
        let bytes = std::fs::read(&path)?;
        match Package::load(&path) {
            Ok(pkg) => {
                let file = path
                    .file_name()
                    .map(|f| f.to_string_lossy().into_owned())
                    .unwrap_or_default();
                let entry = Entry::of_package(&pkg, &sha256_hex(&bytes), url, &file);
                if let Err(e) = index.add(entry) {
                    warnings.push(format!("{}: left out: {e}", path.display()));
                }
            }
            Err(e) => warnings.push(format!(
                "{}: left out: not a valid package: {e}",
                path.display()
            )),
        }
    }
    Ok((index, warnings))
}

/// What is wrong with an index, or with a question put to it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IndexError {
    /// The file is not an index.
    #[error("not a repository index: {0}")]
    Invalid(String),
    /// Two entries with the same name and versions.
    #[error("{name} {versions} is in the index twice")]
    Duplicate {
        /// The operator.
        name: String,
        /// `APPVERSION_OPERATORVERSION`.
        versions: String,
    },
    /// A version asked for is neither a version nor a range.
    #[error("{flag} `{given}` is neither a version nor a semver range ({why})")]
    BadWant {
        /// `--operator-version` or `--app-version`.
        flag: &'static str,
        /// What was given.
        given: String,
        /// The parser's answer.
        why: String,
    },
    /// No operator of that name.
    #[error("no operator `{name}` in {repository}{}", did_you_mean(.suggestions))]
    NoOperator {
        /// The name asked for.
        name: String,
        /// The repository asked.
        repository: String,
        /// Close names.
        suggestions: Vec<String>,
    },
    /// The operator is there, not in that version.
    #[error("{repository} has no {name} with {want}; it has {}", .available.join(", "))]
    NoVersion {
        /// The operator.
        name: String,
        /// The repository asked.
        repository: String,
        /// The versions asked for, as text.
        want: String,
        /// Every version the index has (`APPVERSION_OPERATORVERSION`), newest first.
        available: Vec<String>,
    },
}

fn did_you_mean(names: &[String]) -> String {
    match names {
        [] => String::new(),
        [one] => format!(" (did you mean `{one}`?)"),
        more => format!(" (did you mean one of {}?)", more.join(", ")),
    }
}

impl Index {
    /// An empty index, generated at `generated` (RFC 3339).
    pub fn new(generated: Option<String>) -> Index {
        Index {
            api_version: INDEX_API_VERSION.to_string(),
            entries: BTreeMap::new(),
            generated,
        }
    }

    /// Reads an `index.yaml`: it must name an `apiVersion`, and every entry an
    /// `operatorVersion` (as KUDO checks). Entries are sorted newest first.
    pub fn parse(text: &str) -> Result<Index, IndexError> {
        let mut index: Index =
            serde_saphyr::from_str(text).map_err(|e| IndexError::Invalid(e.to_string()))?;
        if index.api_version.is_empty() {
            return Err(IndexError::Invalid("no apiVersion".into()));
        }
        for (name, list) in &mut index.entries {
            for e in list.iter_mut() {
                if e.operator_version.is_empty() {
                    return Err(IndexError::Invalid(format!(
                        "an entry of `{name}` has no operatorVersion"
                    )));
                }
                if e.name.is_empty() {
                    e.name = name.clone();
                }
            }
        }
        index.sort();
        Ok(index)
    }

    /// The index as YAML, sorted.
    pub fn to_yaml(&self) -> String {
        let mut sorted = self.clone();
        sorted.sort();
        kudo_yaml::manifest::to_yaml(&serde_json::to_value(&sorted).unwrap_or_default())
    }

    /// Adds an entry; the same name and versions twice is refused.
    pub fn add(&mut self, entry: Entry) -> Result<(), IndexError> {
        let list = self.entries.entry(entry.name.clone()).or_default();
        if list.iter().any(|e| {
            e.operator_version == entry.operator_version && e.app_version == entry.app_version
        }) {
            return Err(IndexError::Duplicate {
                name: entry.name.clone(),
                versions: entry.versions(),
            });
        }
        list.push(entry);
        sort_entries(list);
        Ok(())
    }

    /// Adds every entry of `other` this index does not have (same name and versions): this
    /// index's entries win. Returns how many were added.
    pub fn merge(&mut self, other: &Index) -> usize {
        let mut added = 0;
        for list in other.entries.values() {
            for e in list {
                if self.add(e.clone()).is_ok() {
                    added += 1;
                }
            }
        }
        added
    }

    /// Sorts every list newest first (see the module doc).
    pub fn sort(&mut self) {
        for list in self.entries.values_mut() {
            sort_entries(list);
        }
    }

    /// The newest entry of operator `name` that `want` accepts; `repository` names the index
    /// in errors. Removed entries are never chosen.
    pub fn find(&self, name: &str, want: &Want, repository: &str) -> Result<&Entry, IndexError> {
        let Some(list) = self.entries.get(name).filter(|l| !l.is_empty()) else {
            let mut suggestions: Vec<(f64, &String)> = self
                .entries
                .keys()
                .map(|k| (strsim::jaro_winkler(name, k), k))
                .filter(|(s, k)| *s > 0.8 || k.contains(name) || name.contains(k.as_str()))
                .collect();
            suggestions.sort_by(|a, b| b.0.total_cmp(&a.0));
            return Err(IndexError::NoOperator {
                name: name.to_string(),
                repository: repository.to_string(),
                suggestions: suggestions
                    .into_iter()
                    .take(3)
                    .map(|(_, k)| k.clone())
                    .collect(),
            });
        };
        list.iter()
            .find(|e| !e.removed && want.accepts(e))
            .ok_or_else(|| IndexError::NoVersion {
                name: name.to_string(),
                repository: repository.to_string(),
                want: want.to_string(),
                available: list
                    .iter()
                    .filter(|e| !e.removed)
                    .map(Entry::versions)
                    .collect(),
            })
    }

    /// The entries whose name or description contains `term` (case-insensitive; every entry
    /// for an empty term), by name; each operator's newest only, unless `all_versions`.
    pub fn search(&self, term: &str, all_versions: bool) -> Vec<&Entry> {
        let term = term.to_lowercase();
        let mut out = Vec::new();
        for (name, list) in &self.entries {
            let hit = |e: &Entry| {
                name.to_lowercase().contains(&term)
                    || e.description
                        .as_deref()
                        .is_some_and(|d| d.to_lowercase().contains(&term))
            };
            let live = list.iter().filter(|e| !e.removed);
            if all_versions {
                out.extend(live.filter(|e| hit(e)));
            } else if let Some(newest) = live.clone().next()
                && hit(newest)
            {
                out.push(newest);
            }
        }
        out
    }
}

/// Newest first: appVersion, then operatorVersion, both semver; an entry whose appVersion is
/// missing or not semver comes after every one whose is, and ties keep their order.
fn sort_entries(list: &mut [Entry]) {
    list.sort_by(newest_first);
}

fn newest_first(a: &Entry, b: &Entry) -> Ordering {
    let app = |e: &Entry| e.app_version.as_deref().and_then(version_of);
    let op = |e: &Entry| version_of(&e.operator_version);
    // `None` (missing or not semver) sorts last; `Reverse` puts the newest first.
    let key = |v: Option<Version>| (v.is_none(), std::cmp::Reverse(v));
    key(app(a))
        .cmp(&key(app(b)))
        .then_with(|| key(op(a)).cmp(&key(op(b))))
}

/// A version of an index or a package, as [`Version::parse`] reads it (Masterminds': a leading
/// `v`, a missing MINOR or PATCH, `1.3-beta` is 1.3.0-beta), spaces around it ignored.
pub(crate) fn version_of(text: &str) -> Option<Version> {
    Version::parse(text.trim()).ok()
}

/// One version asked for: an exact version, or a version range.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VersionWant {
    /// This version (compared as versions when both read as one, else as text).
    Exact(String),
    /// Any version in this range.
    Range(Range),
}

impl VersionWant {
    /// Reads `--operator-version`/`--app-version` (`flag` names it in errors). A bare version
    /// (`1.3.1`, `1.3`, `v1.3-beta`) is exact, as KUDO and Helm take it, and so is any text with
    /// none of a range's characters (`latest`); anything else is a [`Range`]: `^1.3`,
    /// `~1.3.2`, `>=1.2, <2`, `>=1.2 <2`, `1.3.x`, `*`, `1.2 - 1.4`, `<1 || >=2`.
    pub fn parse(flag: &'static str, text: &str) -> Result<VersionWant, IndexError> {
        let t = text.trim();
        if Version::parse(t).is_ok() || !t.contains(|c: char| "^~<>=!*xX,| ".contains(c)) {
            return Ok(VersionWant::Exact(t.to_string()));
        }
        Range::parse(t)
            .map(VersionWant::Range)
            .map_err(|e| IndexError::BadWant {
                flag,
                given: text.to_string(),
                why: e.to_string(),
            })
    }

    /// Whether `version` is the one asked for.
    pub fn accepts(&self, version: &str) -> bool {
        match self {
            VersionWant::Exact(want) => {
                want == version
                    || matches!(
                        (version_of(want), version_of(version)),
                        (Some(a), Some(b)) if a == b
                    )
            }
            VersionWant::Range(range) => version_of(version).is_some_and(|v| range.matches(&v)),
        }
    }
}

impl fmt::Display for VersionWant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            VersionWant::Exact(v) => write!(f, "{v}"),
            VersionWant::Range(range) => write!(f, "{range}"),
        }
    }
}

/// The versions asked for: `--operator-version` and `--app-version`, either or both.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Want {
    /// `--operator-version`.
    pub operator: Option<VersionWant>,
    /// `--app-version`.
    pub app: Option<VersionWant>,
}

impl Want {
    /// From the two flags' text.
    pub fn parse(operator: Option<&str>, app: Option<&str>) -> Result<Want, IndexError> {
        Ok(Want {
            operator: operator
                .filter(|s| !s.trim().is_empty())
                .map(|s| VersionWant::parse("--operator-version", s))
                .transpose()?,
            app: app
                .filter(|s| !s.trim().is_empty())
                .map(|s| VersionWant::parse("--app-version", s))
                .transpose()?,
        })
    }

    /// Whether `entry` has the versions asked for.
    pub fn accepts(&self, entry: &Entry) -> bool {
        self.accepts_versions(&entry.operator_version, entry.app_version.as_deref())
    }

    /// Whether a package with these versions is the one asked for.
    pub fn accepts_versions(&self, operator_version: &str, app_version: Option<&str>) -> bool {
        self.operator
            .as_ref()
            .is_none_or(|w| w.accepts(operator_version))
            && self
                .app
                .as_ref()
                .is_none_or(|w| app_version.is_some_and(|a| w.accepts(a)))
    }

    /// Whether no version was asked for (the newest will do).
    pub fn is_any(&self) -> bool {
        self.operator.is_none() && self.app.is_none()
    }
}

impl fmt::Display for Want {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.operator, &self.app) {
            (None, None) => write!(f, "any version"),
            (Some(o), None) => write!(f, "operatorVersion {o}"),
            (None, Some(a)) => write!(f, "appVersion {a}"),
            (Some(o), Some(a)) => write!(f, "appVersion {a} and operatorVersion {o}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(name: &str, op: &str, app: Option<&str>) -> Entry {
        Entry {
            name: name.into(),
            operator_version: op.into(),
            app_version: app.map(String::from),
            urls: vec![format!("{name}-{}.tgz", versions(op, app))],
            ..Entry::default()
        }
    }

    #[test]
    fn kudos_own_index_reads_and_sorts_newest_first_with_unversioned_last_in_order() {
        let text = "apiVersion: v1\nentries:\n  kafka:\n  - name: kafka\n    operatorVersion: 1.2.0\n    appVersion: 2.4.0\n    urls: [a]\n    digest: aa\n  - name: kafka\n    operatorVersion: 1.3.2\n    appVersion: 2.5.1\n    urls: [b]\n  - name: kafka\n    operatorVersion: 0.2.0\n    urls: [c]\n  - name: kafka\n    operatorVersion: 0.1.0\n    urls: [d]\n  - name: kafka\n    operatorVersion: 1.3.1\n    appVersion: 2.5.0\n    urls: [e]\n  - name: kafka\n    operatorVersion: 1.3.0\n    appVersion: 2.5.0\n    urls: [f]\ngenerated: \"2019-08-09T15:04:00Z\"\n";
        let index = Index::parse(text).unwrap();
        let order: Vec<String> = index.entries["kafka"].iter().map(Entry::versions).collect();
        assert_eq!(
            order,
            [
                "2.5.1_1.3.2",
                "2.5.0_1.3.1",
                "2.5.0_1.3.0",
                "2.4.0_1.2.0",
                "0.2.0",
                "0.1.0"
            ]
        );
        // written and read back: the same index
        let again = Index::parse(&index.to_yaml()).unwrap();
        assert_eq!(again, index);
        assert!(Index::parse("entries: {}\n").is_err());
        assert!(
            Index::parse("apiVersion: v1\nentries:\n  x:\n  - name: x\n    urls: []\n").is_err()
        );
    }

    #[test]
    fn duplicates_are_refused_and_a_merge_keeps_the_local_entry() {
        let mut index = Index::new(None);
        index.add(entry("zk", "0.3.1", Some("3.4.14"))).unwrap();
        let e = index.add(entry("zk", "0.3.1", Some("3.4.14"))).unwrap_err();
        assert_eq!(e.to_string(), "zk 3.4.14_0.3.1 is in the index twice");
        index.add(entry("zk", "0.3.1", None)).unwrap();

        let mut remote = Index::new(None);
        let mut theirs = entry("zk", "0.3.1", Some("3.4.14"));
        theirs.urls = vec!["https://elsewhere/zk.tgz".into()];
        remote.add(theirs).unwrap();
        remote.add(entry("zk", "0.3.3", Some("3.6.2"))).unwrap();
        assert_eq!(index.merge(&remote), 1);
        let zk = &index.entries["zk"];
        assert_eq!(zk[0].versions(), "3.6.2_0.3.3");
        assert_eq!(zk[1].urls, ["zk-3.4.14_0.3.1.tgz"], "the local entry wins");
    }

    #[test]
    fn versions_are_exact_or_ranges_and_the_newest_match_wins() {
        let mut index = Index::new(None);
        for (op, app) in [
            ("1.3.2", Some("2.5.1")),
            ("1.3.1", Some("2.5.0")),
            ("1.2.0", Some("2.4.0")),
            ("0.2.0", None),
        ] {
            index.add(entry("kafka", op, app)).unwrap();
        }
        let find = |op: Option<&str>, app: Option<&str>| {
            index
                .find("kafka", &Want::parse(op, app).unwrap(), "test")
                .map(Entry::versions)
        };
        assert_eq!(find(None, None).unwrap(), "2.5.1_1.3.2");
        assert_eq!(find(Some("1.3.1"), None).unwrap(), "2.5.0_1.3.1");
        assert_eq!(find(Some("^1.2"), None).unwrap(), "2.5.1_1.3.2");
        assert_eq!(find(Some("~1.2"), None).unwrap(), "2.4.0_1.2.0");
        assert_eq!(find(Some(">=1.2 <1.3.2"), None).unwrap(), "2.5.0_1.3.1");
        assert_eq!(find(Some("1.3.x"), Some("2.5.0")).unwrap(), "2.5.0_1.3.1");
        assert_eq!(find(Some("0.2.0"), None).unwrap(), "0.2.0");
        assert_eq!(find(None, Some("2.4")).unwrap(), "2.4.0_1.2.0");
        let e = find(Some("9.0.0"), None).unwrap_err().to_string();
        assert_eq!(
            e,
            "test has no kafka with operatorVersion 9.0.0; it has 2.5.1_1.3.2, 2.5.0_1.3.1, 2.4.0_1.2.0, 0.2.0"
        );
        let e = index
            .find("kafak", &Want::default(), "test")
            .unwrap_err()
            .to_string();
        assert_eq!(e, "no operator `kafak` in test (did you mean `kafka`?)");
        assert!(Want::parse(Some(">>1"), None).is_err());
    }

    #[test]
    fn search_matches_names_and_descriptions_newest_only_unless_all() {
        let mut index = Index::new(None);
        index.add(entry("kafka", "1.3.2", Some("2.5.1"))).unwrap();
        index.add(entry("kafka", "1.3.1", Some("2.5.0"))).unwrap();
        let mut zk = entry("zookeeper", "0.3.3", None);
        zk.description = Some("Coordination for Kafka".into());
        index.add(zk).unwrap();
        let names = |v: Vec<&Entry>| v.iter().map(|e| e.versions()).collect::<Vec<_>>();
        assert_eq!(
            names(index.search("kafka", false)),
            ["2.5.1_1.3.2", "0.3.3"]
        );
        assert_eq!(index.search("", true).len(), 3);
        assert!(index.search("redis", true).is_empty());
    }
}
