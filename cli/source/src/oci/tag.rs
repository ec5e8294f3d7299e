//! The tag of a package's versions, and back.
//!
//! A package is tagged `APPVERSION_OPERATORVERSION`, or `OPERATORVERSION` alone when it has no
//! `appVersion`: the versions part of KUDO's archive names (`cassandra-3.11.6_2.0.0.tgz`).
//! An OCI tag allows letters, digits, `_`, `.` and `-`; semver's build metadata sign `+` is
//! none of them, so it is written `__` (two underscores; semver has no `_` at all):
//!
//! | appVersion    | operatorVersion   | tag                    |
//! |---------------|-------------------|------------------------|
//! | `3.11.6`      | `2.0.0`           | `3.11.6_2.0.0`         |
//! | none          | `0.2.0`           | `0.2.0`                |
//! | `5.7`         | `1.0.0-rc.1+b.7`  | `5.7_1.0.0-rc.1__b.7`  |
//!
//! Read back, a lone `_` separates the two versions and `__` is a `+` (read left to right, so
//! `1.0___2.0` is `1.0+` then `2.0`). A version with another character (a space, `/`, `_`),
//! one that starts with `+`, `.` or `-`, or a tag longer than 128 characters, cannot be tagged.

use super::OciError;
use super::reference::{MAX_TAG_LENGTH, is_tag};

/// Why a version cannot be part of a tag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TagProblem {
    /// The version is empty.
    Empty,
    /// It has a character other than letters, digits, `.`, `-` and `+`.
    Character(char),
    /// It starts with `+`, `.` or `-`.
    Start,
    /// The tag would be longer than `MAX_TAG_LENGTH`.
    TooLong,
}

impl std::fmt::Display for TagProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TagProblem::Empty => write!(f, "it is empty"),
            TagProblem::Character(c) => write!(
                f,
                "{c:?} cannot be written in a tag (letters, digits, '.', '-' and '+' can)"
            ),
            TagProblem::Start => write!(f, "it starts with '+', '.' or '-'"),
            TagProblem::TooLong => write!(
                f,
                "the tag would be longer than {MAX_TAG_LENGTH} characters"
            ),
        }
    }
}

/// The tag of a package: `APPVERSION_OPERATORVERSION`, or `OPERATORVERSION` alone (an empty
/// `appVersion` counts as none), with `+` written `__`.
pub fn tag_for(operator_version: &str, app_version: Option<&str>) -> Result<String, OciError> {
    let encode = |v: &str| -> Result<String, OciError> {
        let refuse = |problem| OciError::Untaggable {
            version: v.to_string(),
            problem,
        };
        if v.is_empty() {
            return Err(refuse(TagProblem::Empty));
        }
        if v.starts_with(['+', '.', '-']) {
            return Err(refuse(TagProblem::Start));
        }
        if let Some(c) = v
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '+')))
        {
            return Err(refuse(TagProblem::Character(c)));
        }
        Ok(v.replace('+', "__"))
    };
    let op = encode(operator_version)?;
    let tag = match app_version.filter(|a| !a.is_empty()) {
        Some(app) => format!("{}_{op}", encode(app)?),
        None => op,
    };
    if tag.len() > MAX_TAG_LENGTH {
        return Err(OciError::Untaggable {
            version: operator_version.to_string(),
            problem: TagProblem::TooLong,
        });
    }
    Ok(tag)
}

/// The versions a tag names, `(appVersion, operatorVersion)`; `None` when the tag is not of
/// [`tag_for`]'s form (two lone `_`, an empty version, a character a tag cannot hold). Any
/// such tag reads as versions (`latest` is operator version `latest`): the caller decides
/// which versions it takes (semver ones, say).
pub fn versions_of_tag(tag: &str) -> Option<(Option<String>, String)> {
    if !is_tag(tag) {
        return None;
    }
    let mut parts = vec![String::new()];
    let mut chars = tag.chars().peekable();
    while let Some(c) = chars.next() {
        let current = parts.last_mut()?;
        if c != '_' {
            current.push(c);
        } else if chars.peek() == Some(&'_') {
            chars.next();
            current.push('+');
        } else {
            parts.push(String::new());
        }
    }
    if parts
        .iter()
        .any(|p| p.is_empty() || p.starts_with(['+', '.', '-']))
    {
        return None;
    }
    let mut parts = parts.into_iter();
    match (parts.next(), parts.next(), parts.next()) {
        (Some(op), None, None) => Some((None, op)),
        (Some(app), Some(op), None) => Some((Some(app), op)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn tags_of_versions() {
        let cases: &[(&str, Option<&str>, Result<&str, TagProblem>)] = &[
            ("2.0.0", Some("3.11.6"), Ok("3.11.6_2.0.0")),
            ("0.2.0", None, Ok("0.2.0")),
            ("0.2.0", Some(""), Ok("0.2.0")),
            ("1.0.0-rc.1+b.7", Some("5.7"), Ok("5.7_1.0.0-rc.1__b.7")),
            ("beta1", None, Ok("beta1")),
            ("1.0", Some("2.4+"), Ok("2.4___1.0")), // `+` at the end of appVersion
            ("", None, Err(TagProblem::Empty)),
            ("1.0", Some("2.4 beta"), Err(TagProblem::Character(' '))),
            ("1.0", Some("2_4"), Err(TagProblem::Character('_'))),
            ("1/0", None, Err(TagProblem::Character('/'))),
            ("+1.0", None, Err(TagProblem::Start)),
            ("-1.0", None, Err(TagProblem::Start)),
            ("1.0", Some(".4"), Err(TagProblem::Start)),
        ];
        for (op, app, want) in cases {
            let got = tag_for(op, *app).map_err(|e| match e {
                OciError::Untaggable { problem, .. } => problem,
                other => panic!("{op} {app:?}: {other}"),
            });
            assert_eq!(got.as_deref(), want.as_ref().map(|s| *s), "{op} {app:?}");
        }
        let long = "1".repeat(MAX_TAG_LENGTH);
        assert!(tag_for(&long, None).is_ok());
        assert!(matches!(
            tag_for(&long, Some("1")),
            Err(OciError::Untaggable {
                problem: TagProblem::TooLong,
                ..
            })
        ));
    }

    #[test]
    fn versions_of_tags() {
        let v = |app: Option<&str>, op: &str| Some((app.map(String::from), op.to_string()));
        let cases = [
            ("3.11.6_2.0.0", v(Some("3.11.6"), "2.0.0")),
            ("0.2.0", v(None, "0.2.0")),
            ("5.7_1.0.0-rc.1__b.7", v(Some("5.7"), "1.0.0-rc.1+b.7")),
            ("1.0___2.0", v(Some("1.0+"), "2.0")),
            ("latest", v(None, "latest")),
            ("a_b_c", None),
            ("_1.0", None),
            ("1.0_", None),
            ("1.0_.2", None),
            ("__1.0", None),
            ("", None),
            ("1+0", None),
        ];
        for (tag, want) in cases {
            assert_eq!(versions_of_tag(tag), want, "tag: {tag}");
        }
    }

    /// A version as packages write them: semver-like, with pre-release and build metadata.
    fn version() -> impl Strategy<Value = String> {
        "[0-9a-zA-Z][0-9a-zA-Z.+-]{0,20}"
    }

    proptest! {
        #[test]
        fn a_tag_reads_back_as_its_versions(op in version(), app in proptest::option::of(version())) {
            let tag = tag_for(&op, app.as_deref()).unwrap();
            prop_assert!(is_tag(&tag), "{tag}");
            prop_assert_eq!(versions_of_tag(&tag), Some((app, op)));
        }

        #[test]
        fn reading_any_tag_never_panics(tag in "[A-Za-z0-9_.+-]{0,40}") {
            if let Some((app, op)) = versions_of_tag(&tag) {
                prop_assert_eq!(tag_for(&op, app.as_deref()).unwrap(), tag);
            }
        }
    }
}
