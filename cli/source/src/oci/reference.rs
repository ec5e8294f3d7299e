//! `oci://REGISTRY/PATH/NAME[:TAG]`: where a package lives in an OCI registry, as Helm writes
//! it (the registry's host always named, no Docker Hub default).
//!
//! | input                                   | registry         | repository      | tag     |
//! |-----------------------------------------|------------------|-----------------|---------|
//! | `oci://ghcr.io/acme/kudo/cassandra:2.0.0` | `ghcr.io`      | `acme/kudo/cassandra` | `2.0.0` |
//! | `oci://localhost:5000/kudo`             | `localhost:5000` | `kudo`          | none    |
//! | `oci://localhost:5000`                  | `localhost:5000` | (empty)         | none    |
//!
//! The repository follows the distribution spec's grammar (lowercase components `[a-z0-9]`
//! joined by `.`, `_`, `__` or dashes), the tag its `[A-Za-z0-9_][A-Za-z0-9._-]{0,127}`. A
//! digest (`@sha256:…`) is refused: kudo names versions by tag.

use std::fmt;

use super::OciError;

/// The scheme every reference starts with.
pub const SCHEME: &str = "oci://";
/// The longest tag the distribution spec allows.
pub const MAX_TAG_LENGTH: usize = 128;
/// The longest repository name the distribution spec allows.
pub const MAX_REPOSITORY_LENGTH: usize = 255;

/// `oci://REGISTRY/PATH/NAME[:TAG]`, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reference {
    /// `host[:port]`.
    pub registry: String,
    /// `PATH/NAME`, without a leading or trailing `/`; empty for `oci://REGISTRY` alone (a
    /// push target: the package's name becomes the repository).
    pub repository: String,
    /// The tag, when given.
    pub tag: Option<String>,
}

/// Why a string is not a [`Reference`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReferenceProblem {
    /// It does not start with `oci://`.
    NotOci,
    /// Nothing follows `oci://`, or the host is not `host[:port]`.
    Registry,
    /// A digest (`@sha256:...`) instead of a tag.
    Digest,
    /// A path component that is not `[a-z0-9]+` joined by `.`, `_`, `__` or dashes.
    Component(String),
    /// The repository is longer than `MAX_REPOSITORY_LENGTH`.
    TooLong,
    /// The tag is not `[A-Za-z0-9_][A-Za-z0-9._-]{0,127}`.
    Tag(String),
    /// A repository is needed here (`oci://REGISTRY` alone names none).
    NoRepository,
    /// A tag is needed here.
    NoTag,
    /// A push target names a tag: the tag comes from the package's versions.
    TagOnPushTarget,
}

impl fmt::Display for ReferenceProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReferenceProblem::NotOci => write!(f, "it does not start with {SCHEME}"),
            ReferenceProblem::Registry => write!(
                f,
                "the registry is not host[:port] (oci://REGISTRY/PATH/NAME[:TAG])"
            ),
            ReferenceProblem::Digest => write!(
                f,
                "a digest (@sha256:...) is not supported; name the version by its tag"
            ),
            ReferenceProblem::Component(c) => write!(
                f,
                "{c:?} is not a repository name component: lowercase letters and digits, joined \
                 by '.', '_', '__' or dashes"
            ),
            ReferenceProblem::TooLong => write!(
                f,
                "the repository is longer than {MAX_REPOSITORY_LENGTH} characters"
            ),
            ReferenceProblem::Tag(t) => write!(
                f,
                "{t:?} is not a tag: letters, digits, '_', '.' and '-', up to {MAX_TAG_LENGTH}, \
                 not starting with '.' or '-'"
            ),
            ReferenceProblem::NoRepository => {
                write!(f, "it names no repository (oci://REGISTRY/PATH/NAME)")
            }
            ReferenceProblem::NoTag => write!(f, "it names no tag (oci://REGISTRY/PATH/NAME:TAG)"),
            ReferenceProblem::TagOnPushTarget => write!(
                f,
                "a push target names no tag: kudo appends the package's name and tags it with its \
                 versions (oci://REGISTRY/PATH)"
            ),
        }
    }
}

impl Reference {
    /// Whether `s` is meant as an OCI reference (starts with `oci://`), valid or not.
    pub fn is_oci(s: &str) -> bool {
        s.starts_with(SCHEME)
    }

    /// Parses `oci://REGISTRY[/PATH/NAME][:TAG]`; a trailing `/` is ignored.
    pub fn parse(s: &str) -> Result<Reference, OciError> {
        let invalid = |problem| OciError::InvalidReference {
            input: s.to_string(),
            problem,
        };
        let rest = s
            .strip_prefix(SCHEME)
            .ok_or_else(|| invalid(ReferenceProblem::NotOci))?;
        if rest.contains('@') {
            return Err(invalid(ReferenceProblem::Digest));
        }
        let rest = rest.trim_end_matches('/');
        let (registry, path) = rest.split_once('/').unwrap_or((rest, ""));
        if !is_registry(registry) {
            return Err(invalid(ReferenceProblem::Registry));
        }
        // A tag follows the last component's ':' (a port's ':' sits in the registry part).
        let (repository, tag) = match path.rsplit_once('/') {
            Some((head, last)) => match last.split_once(':') {
                Some((name, tag)) => (format!("{head}/{name}"), Some(tag)),
                None => (path.to_string(), None),
            },
            None => match path.split_once(':') {
                Some((name, tag)) => (name.to_string(), Some(tag)),
                None => (path.to_string(), None),
            },
        };
        if tag.is_some() && repository.is_empty() {
            return Err(invalid(ReferenceProblem::NoRepository));
        }
        check_repository(&repository).map_err(invalid)?;
        if let Some(t) = tag
            && !is_tag(t)
        {
            return Err(invalid(ReferenceProblem::Tag(t.to_string())));
        }
        Ok(Reference {
            registry: registry.to_string(),
            repository,
            tag: tag.map(str::to_string),
        })
    }

    /// A registry as `kudo registry login` takes it: `HOST[:PORT]` (Docker's `https://HOST/`
    /// too), or a whole `oci://` reference, whose repository (when it names one) is where the
    /// credentials are checked.
    pub fn parse_registry(s: &str) -> Result<Reference, OciError> {
        if Reference::is_oci(s) {
            return Reference::parse(s);
        }
        let host = s
            .strip_prefix("https://")
            .or_else(|| s.strip_prefix("http://"))
            .unwrap_or(s)
            .trim_end_matches('/');
        if !is_registry(host) {
            return Err(OciError::InvalidReference {
                input: s.to_string(),
                problem: ReferenceProblem::Registry,
            });
        }
        Ok(Reference {
            registry: host.to_string(),
            repository: String::new(),
            tag: None,
        })
    }

    /// The package's name: the last segment of the repository.
    pub fn name(&self) -> &str {
        self.repository.rsplit('/').next().unwrap_or_default()
    }

    /// The same repository at `tag`.
    pub fn with_tag(&self, tag: &str) -> Reference {
        Reference {
            tag: Some(tag.to_string()),
            ..self.clone()
        }
    }

    /// The same repository without a tag.
    pub fn untagged(&self) -> Reference {
        Reference {
            tag: None,
            ..self.clone()
        }
    }

    /// `PATH/NAME` below this reference's path: where `kudo package push` puts package `name`.
    /// A name that is not a repository component (uppercase letters, say) is refused.
    pub fn join(&self, name: &str) -> Result<Reference, OciError> {
        let repository = if self.repository.is_empty() {
            name.to_string()
        } else {
            format!("{}/{name}", self.repository)
        };
        let joined = Reference {
            registry: self.registry.clone(),
            repository,
            tag: None,
        };
        check_repository(&joined.repository).map_err(|problem| OciError::InvalidReference {
            input: format!("{self}/{name}"),
            problem,
        })?;
        Ok(joined)
    }

    /// Refuses a reference without a repository, or (when `tagged`) without a tag.
    pub fn require(&self, tagged: bool) -> Result<(), OciError> {
        let problem = if self.repository.is_empty() {
            ReferenceProblem::NoRepository
        } else if tagged && self.tag.is_none() {
            ReferenceProblem::NoTag
        } else {
            return Ok(());
        };
        Err(OciError::InvalidReference {
            input: self.to_string(),
            problem,
        })
    }

    /// The reference as oci-client takes it; a reference without a tag gets `latest`, which
    /// the calls that take one for its repository alone (tags, auth) never read.
    pub(crate) fn image(&self) -> oci_client::Reference {
        oci_client::Reference::with_tag(
            self.registry.clone(),
            self.repository.clone(),
            self.tag.clone().unwrap_or_else(|| "latest".into()),
        )
    }
}

impl fmt::Display for Reference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{SCHEME}{}", self.registry)?;
        if !self.repository.is_empty() {
            write!(f, "/{}", self.repository)?;
        }
        if let Some(t) = &self.tag {
            write!(f, ":{t}")?;
        }
        Ok(())
    }
}

/// `host[:port]`, or `[v6-address][:port]`.
pub(crate) fn is_registry(s: &str) -> bool {
    let (host, port) = if let Some(v6) = s.strip_prefix('[') {
        match v6.split_once(']') {
            Some((addr, rest))
                if !addr.is_empty() && addr.chars().all(|c| c.is_ascii_hexdigit() || c == ':') =>
            {
                match rest {
                    "" => return true,
                    p => match p.strip_prefix(':') {
                        Some(port) => (addr, Some(port)),
                        None => return false,
                    },
                }
            }
            _ => return false,
        }
    } else {
        match s.split_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (s, None),
        }
    };
    let host_ok = s.starts_with('[')
        || (!host.is_empty()
            && !host.starts_with(['.', '-'])
            && host
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-'));
    let port_ok = port.is_none_or(|p| p.parse::<u16>().is_ok_and(|n| n > 0));
    host_ok && port_ok
}

/// The repository's components, each `[a-z0-9]+` joined by `.`, `_`, `__` or dashes.
fn check_repository(repository: &str) -> Result<(), ReferenceProblem> {
    if repository.len() > MAX_REPOSITORY_LENGTH {
        return Err(ReferenceProblem::TooLong);
    }
    if repository.is_empty() {
        return Ok(());
    }
    for c in repository.split('/') {
        if !is_component(c) {
            return Err(ReferenceProblem::Component(c.to_string()));
        }
    }
    Ok(())
}

/// `[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*`.
fn is_component(c: &str) -> bool {
    let mut separator = String::new();
    let mut started = false;
    for ch in c.chars() {
        if ch.is_ascii_lowercase() || ch.is_ascii_digit() {
            if !separator.is_empty() {
                let ok = matches!(separator.as_str(), "." | "_" | "__")
                    || separator.chars().all(|s| s == '-');
                if !ok {
                    return false;
                }
                separator.clear();
            }
            started = true;
        } else if matches!(ch, '.' | '_' | '-') && started {
            separator.push(ch);
        } else {
            return false;
        }
    }
    started && separator.is_empty()
}

/// `[A-Za-z0-9_][A-Za-z0-9._-]{0,127}`.
pub(crate) fn is_tag(t: &str) -> bool {
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    t.len() <= MAX_TAG_LENGTH
        && t.chars().next().is_some_and(word)
        && t.chars().all(|c| word(c) || c == '.' || c == '-')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(s: &str) -> Result<(String, String, Option<String>), ReferenceProblem> {
        match Reference::parse(s) {
            Ok(r) => Ok((r.registry, r.repository, r.tag)),
            Err(OciError::InvalidReference { problem, .. }) => Err(problem),
            Err(other) => panic!("{s}: not an InvalidReference: {other}"),
        }
    }

    fn ok(
        registry: &str,
        repository: &str,
        tag: Option<&str>,
    ) -> Result<(String, String, Option<String>), ReferenceProblem> {
        Ok((registry.into(), repository.into(), tag.map(Into::into)))
    }

    #[test]
    fn references_parse_into_registry_repository_and_tag() {
        use ReferenceProblem::*;
        let cases = [
            (
                "oci://ghcr.io/acme/kudo/cassandra:3.11.6_2.0.0",
                ok("ghcr.io", "acme/kudo/cassandra", Some("3.11.6_2.0.0")),
            ),
            (
                "oci://localhost:5000/kudo/cassandra",
                ok("localhost:5000", "kudo/cassandra", None),
            ),
            (
                "oci://localhost:5000/cassandra:1.0",
                ok("localhost:5000", "cassandra", Some("1.0")),
            ),
            ("oci://localhost:5000", ok("localhost:5000", "", None)),
            ("oci://localhost:5000/", ok("localhost:5000", "", None)),
            (
                "oci://127.0.0.1:5000/kudo/",
                ok("127.0.0.1:5000", "kudo", None),
            ),
            ("oci://[::1]:5000/kudo", ok("[::1]:5000", "kudo", None)),
            (
                "oci://r.example/a.b/c__d/e--f/g_h",
                ok("r.example", "a.b/c__d/e--f/g_h", None),
            ),
            ("oci://r/kudo/zk:__1.0", ok("r", "kudo/zk", Some("__1.0"))),
            // refused, each with its reason
            ("ghcr.io/acme/cassandra", Err(NotOci)),
            ("https://ghcr.io/acme/cassandra", Err(NotOci)),
            ("oci://", Err(Registry)),
            ("oci:///kudo", Err(Registry)),
            ("oci://host:port/kudo", Err(Registry)),
            ("oci://host:0/kudo", Err(Registry)),
            ("oci://host:99999/kudo", Err(Registry)),
            ("oci://ho_st/kudo", Err(Registry)),
            ("oci://r/kudo/cassandra@sha256:abcd", Err(Digest)),
            ("oci://r/Kudo/cassandra", Err(Component("Kudo".into()))),
            ("oci://r/kudo//cassandra", Err(Component("".into()))),
            (
                "oci://r/kudo/-cassandra",
                Err(Component("-cassandra".into())),
            ),
            (
                "oci://r/kudo/cass___andra",
                Err(Component("cass___andra".into())),
            ),
            (
                "oci://r/kudo/cass.-andra",
                Err(Component("cass.-andra".into())),
            ),
            (
                "oci://r/kudo/cassandra.",
                Err(Component("cassandra.".into())),
            ),
            ("oci://r/kudo/cassandra:", Err(Tag("".into()))),
            ("oci://r/kudo/cassandra:.1", Err(Tag(".1".into()))),
            ("oci://r/kudo/cassandra:1+2", Err(Tag("1+2".into()))),
            ("oci://r:5000:1.0", Err(Registry)),
        ];
        for (input, want) in cases {
            assert_eq!(parsed(input), want, "input: {input}");
        }
    }

    #[test]
    fn tags_and_repositories_at_their_length_limits() {
        let tag = "a".repeat(MAX_TAG_LENGTH);
        assert!(parsed(&format!("oci://r/x:{tag}")).is_ok());
        assert_eq!(
            parsed(&format!("oci://r/x:{tag}a")),
            Err(ReferenceProblem::Tag(format!("{tag}a")))
        );
        let repo = "a".repeat(MAX_REPOSITORY_LENGTH);
        assert!(parsed(&format!("oci://r/{repo}")).is_ok());
        assert_eq!(
            parsed(&format!("oci://r/{repo}a")),
            Err(ReferenceProblem::TooLong)
        );
    }

    #[test]
    fn a_reference_prints_as_it_parses() {
        for s in [
            "oci://ghcr.io/acme/kudo/cassandra:3.11.6_2.0.0",
            "oci://localhost:5000/kudo",
            "oci://localhost:5000",
        ] {
            assert_eq!(Reference::parse(s).unwrap().to_string(), s);
        }
        let r = Reference::parse("oci://r:1/kudo").unwrap();
        assert_eq!(r.with_tag("2.0.0").to_string(), "oci://r:1/kudo:2.0.0");
        assert_eq!(
            r.join("cassandra").unwrap().to_string(),
            "oci://r:1/kudo/cassandra"
        );
        let bare = Reference::parse("oci://r:1").unwrap();
        assert_eq!(bare.join("zk").unwrap().to_string(), "oci://r:1/zk");
        assert!(matches!(
            r.join("Cassandra"),
            Err(OciError::InvalidReference { problem: ReferenceProblem::Component(c), .. }) if c == "Cassandra"
        ));
    }

    #[test]
    fn a_registry_is_a_host_or_a_reference() {
        let host = |s: &str| Reference::parse_registry(s).map(|r| (r.registry, r.repository));
        assert_eq!(
            host("localhost:5000").unwrap(),
            ("localhost:5000".into(), "".into())
        );
        assert_eq!(
            host("https://ghcr.io/").unwrap(),
            ("ghcr.io".into(), "".into())
        );
        assert_eq!(
            host("oci://ghcr.io/acme/kudo").unwrap(),
            ("ghcr.io".into(), "acme/kudo".into())
        );
        assert!(matches!(
            host("ghcr.io/acme"),
            Err(OciError::InvalidReference {
                problem: ReferenceProblem::Registry,
                ..
            })
        ));
    }

    #[test]
    fn is_oci_goes_by_the_scheme_alone() {
        assert!(Reference::is_oci("oci://anything"));
        assert!(!Reference::is_oci("./cassandra"));
        assert!(!Reference::is_oci("cassandra-2.0.0.tgz"));
    }
}
