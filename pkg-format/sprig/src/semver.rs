//! Versions and version constraints as Masterminds/semver reads them: sprig's `semver` and
//! `semverCompare`, and kudo's own versions (`operatorVersion`, `appVersion`, the ranges of
//! `--operator-version`, `--app-version` and of a KudoOperator task).
//!
//! One grammar, Masterminds/semver **v1.5.0**'s (what sprig v2.22 and KUDO pin), built on the
//! [`semver`] crate where its rules are Masterminds':
//!
//! | type | grammar | examples |
//! |---|---|---|
//! | [`Version`] | `v?MAJOR(.MINOR(.PATCH)?)?(-PRERELEASE)?(+METADATA)?`; a missing number is 0 | `1.2.3`, `v1.3` (1.3.0), `1.3-beta` (1.3.0-beta), `2` (2.0.0) |
//! | [`Constraint`] | terms `OP VERSION`, AND written `,`, OR written `\|\|`, `A - B` for `>= A, <= B`; a number may be `x`, `X` or `*`; OP one of `= != > < >= => <= =< ~ ~> ^` or none (`=`) | `^1.3`, `~1.3.2`, `>=1.2, <2`, `1.3.x`, `1.2 - 1.4.5`, `<1 \|\| >=2` |
//! | [`Range`] | a [`Constraint`]'s, and AND may also be written with spaces (`>=1.2 <2`) | `>=1.2 <2`, `^1.3 \|\| ~2.0` |
//!
//! A [`Constraint`] is checked by Masterminds v1.5.0's rules ([`Constraint::check`]): what a
//! template's `semverCompare` answers. A [`Range`] is checked by the `semver` crate's
//! comparators ([`Range::matches`]), which are Cargo's and, for the forms kudo documents,
//! those of Masterminds v3 that Helm's `--version` uses: what kudo answers when it picks a
//! package.
//!
//! Where Masterminds v1.5.0 and the `semver` crate differ, and what kudo does then:
//!
//! | input | Masterminds v1.5.0 | `semver` crate | kudo |
//! |---|---|---|---|
//! | `v1.3`, `1.3`, `1.3-beta` | 1.3.0, 1.3.0, 1.3.0-beta | refused: MAJOR.MINOR.PATCH only | Masterminds' ([`Version::parse`]) |
//! | `01.2.3` | 1.2.3 | refused: a leading zero | Masterminds': 1.2.3, its [original](Version::original) text kept |
//! | a number above 2^63 - 1 | refused (`strconv.ParseInt`) | read (`u64`) | Masterminds': refused ([`Error::Segment`]) |
//! | `1.2.3-01`: a numeric prerelease identifier with a leading zero | read (and `01` sorts below `1`) | refused (SemVer 2.0) | the crate's: refused ([`Error::Identifier`]), in templates too |
//! | precedence | MAJOR, MINOR, PATCH, then the prerelease identifiers; metadata ignored | the same ([`semver::Version::cmp_precedence`]) | the crate's precedence for [`Constraint`]s and equality; [`Version`]'s `Ord` (lists sorted newest first) also orders the metadata, so that it is total |
//! | `<2`, `<=1.x` (an `x` or a missing MINOR, with `<`, `<=`) | compares MAJOR only: `<2` takes 2.5.0 | below 2.0.0 | a [`Constraint`] Masterminds', a [`Range`] the crate's |
//! | `^0.2` | at least 0.2.0, MAJOR 0 | below 0.3.0 | a [`Constraint`] Masterminds', a [`Range`] the crate's |
//! | `~0`, `~0.0.0`, `~x` | any version | below 1.0.0, 0.1.0, 1.0.0 | a [`Constraint`] Masterminds', a [`Range`] the crate's |
//! | `=1.2`, `1.2`, `<=1.2` (no PATCH, no wildcard) | exactly 1.2.0, at most 1.2.0 | 1.2.x, below 1.3.0 | a [`Constraint`] Masterminds', a [`Range`] the crate's (a bare version alone is an exact version to kudo, not a range) |
//! | `>x`, `<x` (an operator before a wildcard MAJOR) | against 0.0.0 | refused | a [`Constraint`] Masterminds', a [`Range`] reads MAJOR 0 (`>x` is `>0`); `x` alone is any version |
//! | a prerelease version | matches a constraint that names any prerelease: `>=1.0-a` takes 1.5.0-beta | matches only a comparator naming a prerelease of its MAJOR.MINOR.PATCH | a [`Constraint`] Masterminds', a [`Range`] the crate's |
//! | `>=1.2 <2` | refused: `improper constraint` | refused | a [`Constraint`] refuses it, a [`Range`] reads AND (as Masterminds v3 and Helm) |
//! | `!=`, `=>`, `=<`, `~>`, `A - B`, `\|\|`, `v1.2` in a range | read | no such syntax | read by both: a [`Range`] turns `!=` into "not the crate's `=`" |
//!
//! ```
//! use kudo_sprig::semver::{Constraint, Range, Version};
//! let v = Version::parse("v1.3-beta").unwrap();
//! assert_eq!(v.to_string(), "1.3.0-beta");
//! let two = Version::parse("2.5.0").unwrap();
//! assert!(Constraint::parse(">=1.2, <2").unwrap().check(&two)); // Masterminds v1.5.0
//! assert!(!Range::parse(">=1.2 <2").unwrap().matches(&two));
//! ```

use std::cmp::Ordering;
use std::fmt;

use gotmpl::{Result, Value};

use super::{Map, arg_str, call_err, map_value, string, want};

pub(super) fn f_semver(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 1)?;
    let v = Version::parse(arg_str(name, &a[0])?).map_err(|e| call_err(name, e))?;
    // every number is at most i64::MAX (`Error::Segment`)
    let int = |n: u64| Value::Int(n as i64);
    let mut m = Map::new();
    m.insert("Major".into(), int(v.major()));
    m.insert("Minor".into(), int(v.minor()));
    m.insert("Patch".into(), int(v.patch()));
    m.insert("Prerelease".into(), string(v.prerelease()));
    m.insert("Metadata".into(), string(v.metadata()));
    m.insert("Original".into(), string(v.original()));
    m.insert("String".into(), string(v.to_string()));
    Ok(map_value(m))
}

pub(super) fn f_semver_compare(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 2)?;
    let constraint = arg_str(name, &a[0])?;
    let version = arg_str(name, &a[1])?;
    let c = Constraint::parse(constraint).map_err(|e| call_err(name, e))?;
    let v = Version::parse(version).map_err(|e| call_err(name, e))?;
    Ok(Value::Bool(c.check(&v)))
}

/// Why a text is not a version or a constraint. The messages of Masterminds v1.5.0 are its own
/// words (sprig's functions report them).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Not of the version grammar (`1.2.3.4`, `latest`, `1.2.3-`).
    #[error("Invalid Semantic Version")]
    Invalid,
    /// A MAJOR, MINOR or PATCH number above 2^63 - 1.
    #[error("Error parsing version segment: strconv.ParseInt: parsing \"{0}\": value out of range")]
    Segment(String),
    /// A prerelease identifier the `semver` crate refuses (SemVer 2.0: a numeric one with a
    /// leading zero, `1.2.3-01`).
    #[error("{0}")]
    Identifier(::semver::Error),
    /// A term of a constraint that is not of its grammar (`>>1`, `>=1.0 <2.0`).
    #[error("improper constraint: {0}")]
    Improper(String),
    /// A term of a constraint whose version is not one (`1|2`).
    #[error("constraint Parser Error")]
    Parser,
}

/// A version, as Masterminds/semver v1.5.0's `NewVersion` reads it (see the module doc), held
/// as a [`semver::Version`] with the text it was read from.
///
/// Equal and ordered as the `semver` crate orders versions (its precedence, then the build
/// metadata); the text it was read from does not count (`v1.3` equals `1.3.0`).
#[derive(Debug, Clone)]
pub struct Version {
    version: ::semver::Version,
    original: String,
}

impl Version {
    /// `semver.NewVersion`: the whole text is a version (no space around it), or an [`Error`].
    pub fn parse(text: &str) -> std::result::Result<Version, Error> {
        let b = text.as_bytes();
        let m = match scan_version(b, 0, |c| c.is_ascii_digit()) {
            Some(m) if m.end == b.len() => m,
            _ => return Err(Error::Invalid),
        };
        let span = |(s, e): Span| &text[s..e];
        // `strconv.ParseInt(s, 10, 64)` of digits: only a range error can happen
        let number = |digits: &str| match digits.trim_start_matches('.') {
            "" => Ok(0),
            d => d
                .parse::<i64>()
                .map(|n| n as u64)
                .map_err(|_| Error::Segment(d.to_string())),
        };
        let mut version = ::semver::Version::new(
            number(span(m.major))?,
            number(span(m.minor))?,
            number(span(m.patch))?,
        );
        version.pre = ::semver::Prerelease::new(span(m.pre)).map_err(Error::Identifier)?;
        version.build = ::semver::BuildMetadata::new(span(m.meta)).map_err(Error::Identifier)?;
        Ok(Version {
            version,
            original: text.to_string(),
        })
    }

    /// MAJOR.
    pub fn major(&self) -> u64 {
        self.version.major
    }

    /// MINOR (0 when not written).
    pub fn minor(&self) -> u64 {
        self.version.minor
    }

    /// PATCH (0 when not written).
    pub fn patch(&self) -> u64 {
        self.version.patch
    }

    /// The prerelease, without its `-` (empty for none).
    pub fn prerelease(&self) -> &str {
        self.version.pre.as_str()
    }

    /// The build metadata, without its `+` (empty for none).
    pub fn metadata(&self) -> &str {
        self.version.build.as_str()
    }

    /// The text it was read from.
    pub fn original(&self) -> &str {
        &self.original
    }

    /// As the `semver` crate holds it.
    pub fn as_semver(&self) -> &::semver::Version {
        &self.version
    }

    /// Masterminds' `Compare`: by precedence, the build metadata ignored.
    pub fn cmp_precedence(&self, other: &Version) -> Ordering {
        self.version.cmp_precedence(&other.version)
    }
}

/// Masterminds' `String()`: `MAJOR.MINOR.PATCH[-PRERELEASE][+METADATA]`.
impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.version.fmt(f)
    }
}

impl PartialEq for Version {
    fn eq(&self, other: &Version) -> bool {
        self.version == other.version
    }
}

impl Eq for Version {}

impl PartialOrd for Version {
    fn partial_cmp(&self, other: &Version) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Version {
    fn cmp(&self, other: &Version) -> Ordering {
        self.version.cmp(&other.version)
    }
}

/// A constraint's operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    /// `=`, or none.
    Equal,
    /// `!=`.
    NotEqual,
    /// `>`.
    Greater,
    /// `<`.
    Less,
    /// `>=`, `=>`.
    GreaterEq,
    /// `<=`, `=<`.
    LessEq,
    /// `~`, `~>`.
    Tilde,
    /// `^`.
    Caret,
}

impl Op {
    fn parse(text: &str) -> Option<Op> {
        Some(match text {
            "" | "=" => Op::Equal,
            "!=" => Op::NotEqual,
            ">" => Op::Greater,
            "<" => Op::Less,
            ">=" | "=>" => Op::GreaterEq,
            "<=" | "=<" => Op::LessEq,
            "~" | "~>" => Op::Tilde,
            "^" => Op::Caret,
            _ => return None,
        })
    }
}

/// How MINOR or PATCH was written in a term.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    Number,
    Wildcard,
    Missing,
}

/// One term of a constraint: an operator and a version whose numbers may be wildcards.
#[derive(Debug, Clone)]
struct Term {
    op: Op,
    /// The version, each wildcard (and a missing MINOR or PATCH) 0: Masterminds' `con`.
    con: Version,
    major_wildcard: bool,
    minor: Part,
    patch: Part,
}

impl Term {
    /// Masterminds' `dirty`: a wildcard, or no MINOR.
    fn dirty(&self) -> bool {
        self.major_wildcard || self.minor != Part::Number || self.patch == Part::Wildcard
    }

    /// Masterminds' `minorDirty`.
    fn minor_dirty(&self) -> bool {
        !self.major_wildcard && self.minor != Part::Number
    }

    /// Masterminds' `patchDirty`.
    fn patch_dirty(&self) -> bool {
        !self.major_wildcard && self.minor == Part::Number && self.patch == Part::Wildcard
    }
}

/// A constraint (`^1.3`, `>=1.2, <2`, `1.3.x`, `<1 || >=2`), as Masterminds/semver v1.5.0's
/// `NewConstraint` reads it, checked by its rules: sprig's `semverCompare`.
#[derive(Debug, Clone)]
pub struct Constraint {
    text: String,
    /// OR of ANDs.
    any: Vec<Vec<Term>>,
}

impl Constraint {
    /// `semver.NewConstraint`.
    pub fn parse(text: &str) -> std::result::Result<Constraint, Error> {
        let rewritten = rewrite_range(text);
        let any = rewritten
            .split("||")
            .map(|all| all.split(',').map(parse_term).collect())
            .collect::<std::result::Result<_, _>>()?;
        Ok(Constraint {
            text: text.to_string(),
            any,
        })
    }

    /// Masterminds v1.5.0's `Check`: whether `v` satisfies every term of one of the ORs.
    pub fn check(&self, v: &Version) -> bool {
        self.any
            .iter()
            .any(|all| all.iter().all(|term| masterminds_check(term, v)))
    }
}

impl fmt::Display for Constraint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// A version range kudo picks packages by: a [`Constraint`] (AND may also be written with
/// spaces), each term checked by the `semver` crate's comparator of its operator (see the
/// module doc).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Range {
    text: String,
    /// OR of ANDs.
    any: Vec<Group>,
}

/// One AND of a range: the crate's comparators, and the versions `!=` excludes.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Group {
    all: ::semver::VersionReq,
    not: Vec<::semver::Comparator>,
}

impl Range {
    /// Reads a range: [`Constraint::parse`], after AND written with spaces has become `,`.
    pub fn parse(text: &str) -> std::result::Result<Range, Error> {
        let constraint = Constraint::parse(&and_by_commas(&rewrite_range(text)))?;
        let any = constraint
            .any
            .iter()
            .map(|terms| {
                let mut group = Group {
                    all: ::semver::VersionReq::STAR,
                    not: Vec::new(),
                };
                for term in terms {
                    match (term.op, comparator(term)) {
                        (Op::NotEqual, Some(c)) => group.not.push(c),
                        (_, Some(c)) => group.all.comparators.push(c),
                        (_, None) => {}
                    }
                }
                group
            })
            .collect();
        Ok(Range {
            text: text.to_string(),
            any,
        })
    }

    /// Whether `v` is in the range: in one of its ORs, by the `semver` crate's rules (a
    /// prerelease only where a comparator names a prerelease of its MAJOR.MINOR.PATCH).
    pub fn matches(&self, v: &Version) -> bool {
        let v = v.as_semver();
        self.any
            .iter()
            .any(|g| g.all.matches(v) && !g.not.iter().any(|c| c.matches(v)))
    }
}

impl fmt::Display for Range {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// The `semver` crate's comparator for a term: its operator (`!=` as `=`, the caller negates
/// it), MINOR and PATCH when written as numbers. A wildcard MAJOR is 0, and with no operator
/// (or `=`, `!=`) none: any version.
fn comparator(term: &Term) -> Option<::semver::Comparator> {
    use ::semver::Op as C;
    let op = match term.op {
        Op::Equal | Op::NotEqual => C::Exact,
        Op::Greater => C::Greater,
        Op::Less => C::Less,
        Op::GreaterEq => C::GreaterEq,
        Op::LessEq => C::LessEq,
        Op::Tilde => C::Tilde,
        Op::Caret => C::Caret,
    };
    if term.major_wildcard && op == C::Exact {
        return None;
    }
    let minor = (term.minor == Part::Number).then_some(term.con.minor());
    let patch = (minor.is_some() && term.patch == Part::Number).then_some(term.con.patch());
    Some(::semver::Comparator {
        op,
        major: term.con.major(),
        minor,
        patch,
        pre: term.con.version.pre.clone(),
    })
}

/// AND written with spaces (`>=1.2 <2`) written with commas (`>=1.2,<2`): a run of spaces
/// between the end of a version (a letter, a digit, `*`) and the start of the next term (not
/// `,` or `|`) becomes `,`; other spaces stay.
fn and_by_commas(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.trim().chars().peekable();
    while let Some(c) = chars.next() {
        let ends_version = c.is_ascii_alphanumeric() || c == '*';
        out.push(c);
        if !ends_version || !chars.peek().is_some_and(|c| c.is_whitespace()) {
            continue;
        }
        let mut spaces = String::new();
        while let Some(&s) = chars.peek().filter(|c| c.is_whitespace()) {
            spaces.push(s);
            chars.next();
        }
        match chars.peek() {
            Some(',' | '|') | None => out.push_str(&spaces),
            Some(_) => out.push(','),
        }
    }
    out
}

/// One term of Masterminds v1.5.0's `constraintRegex`: `\s*OP\s*VERSION\s*`, where the version
/// is `cvRegex` (whose numbers may be `x`, `X`, `*`, and, as in v1.5.0, `|`).
fn parse_term(c: &str) -> std::result::Result<Term, Error> {
    let improper = || Error::Improper(c.to_string());
    let b = c.as_bytes();
    let mut i = 0;
    while i < b.len() && is_re_space(b[i]) {
        i += 1;
    }
    let op_start = i;
    while i < b.len() && matches!(b[i], b'=' | b'!' | b'<' | b'>' | b'~' | b'^') {
        i += 1;
    }
    let op = Op::parse(&c[op_start..i]).ok_or_else(improper)?;
    while i < b.len() && is_re_space(b[i]) {
        i += 1;
    }
    let m = scan_version(b, i, cv_seg).ok_or_else(improper)?;
    let whole = &c[i..m.end];
    let mut j = m.end;
    while j < b.len() && is_re_space(b[j]) {
        j += 1;
    }
    if j != b.len() {
        return Err(improper());
    }
    let span = |(s, e): Span| &c[s..e];
    let (major, minor, patch, pre) = (
        span(m.major),
        span(m.minor),
        span(m.patch),
        span(m.pre_with_dash),
    );
    let part = |p: &str| match p.strip_prefix('.') {
        None => Part::Missing,
        Some(n) if is_x(n) => Part::Wildcard,
        Some(_) => Part::Number,
    };
    let (major_wildcard, minor, patch) = (is_x(major), part(minor), part(patch));
    // Masterminds' `con`: wildcards (and a missing MINOR) are 0, the metadata then dropped
    let con = if major_wildcard {
        "0.0.0".to_string()
    } else if minor != Part::Number {
        format!("{major}.0.0{pre}")
    } else if patch == Part::Wildcard {
        format!("{major}{}.0{pre}", span(m.minor))
    } else {
        whole.to_string()
    };
    Ok(Term {
        op,
        con: Version::parse(&con).map_err(|_| Error::Parser)?,
        major_wildcard,
        minor,
        patch,
    })
}

/// Masterminds v1.5.0's check of one term (`constraints.go`, `constraint*` functions).
fn masterminds_check(term: &Term, v: &Version) -> bool {
    let c = &term.con;
    // A prerelease version only satisfies terms that name a prerelease (every check but a
    // plain `!=` applies this rule).
    if !v.prerelease().is_empty()
        && c.prerelease().is_empty()
        && (term.op != Op::NotEqual || term.dirty())
    {
        return false;
    }
    let order = v.cmp_precedence(c);
    match term.op {
        Op::Equal if term.dirty() => tilde(term, v),
        Op::Equal => order == Ordering::Equal,
        Op::NotEqual if term.dirty() => {
            c.major() != v.major() || (c.minor() != v.minor() && !term.minor_dirty())
        }
        Op::NotEqual => order != Ordering::Equal,
        Op::Greater => order == Ordering::Greater,
        Op::GreaterEq => order != Ordering::Less,
        Op::Less | Op::LessEq if term.dirty() => {
            !(v.major() > c.major() || (v.minor() > c.minor() && !term.minor_dirty()))
        }
        Op::Less => order == Ordering::Less,
        Op::LessEq => order != Ordering::Greater,
        Op::Tilde => tilde(term, v),
        Op::Caret => order != Ordering::Less && v.major() == c.major(),
    }
}

/// Masterminds v1.5.0's `constraintTilde` (also `=` with a wildcard).
fn tilde(term: &Term, v: &Version) -> bool {
    let c = &term.con;
    if v.cmp_precedence(c) == Ordering::Less {
        return false;
    }
    if (c.major(), c.minor(), c.patch()) == (0, 0, 0) && !term.minor_dirty() && !term.patch_dirty()
    {
        return true;
    }
    v.major() == c.major() && (v.minor() == c.minor() || term.minor_dirty())
}

// ---------------------------------------------------------------------------
// The grammar: Masterminds v1.5.0's regular expressions, scanned by hand.
// ---------------------------------------------------------------------------

fn is_ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'-'
}

/// `[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*` starting at `i`; returns the end.
fn scan_ident_list(b: &[u8], mut i: usize) -> Option<usize> {
    let start = i;
    while i < b.len() && is_ident_byte(b[i]) {
        i += 1;
    }
    if i == start {
        return None;
    }
    while i + 1 < b.len() && b[i] == b'.' && is_ident_byte(b[i + 1]) {
        i += 1;
        while i < b.len() && is_ident_byte(b[i]) {
            i += 1;
        }
    }
    Some(i)
}

/// A version-like match (semver's `SemVerRegex`, or the constraint regex's
/// `cvRegex` when `seg` also accepts `x`, `X`, `*` and `|`): the end offset and
/// the groups `(major, .minor, .patch, -prerelease)` as spans.
struct VersionMatch {
    end: usize,
    major: (usize, usize),
    minor: (usize, usize),
    patch: (usize, usize),
    pre_with_dash: (usize, usize),
    pre: (usize, usize),
    meta: (usize, usize),
}

fn scan_version(b: &[u8], start: usize, seg: fn(u8) -> bool) -> Option<VersionMatch> {
    let mut i = start;
    if b.get(i) == Some(&b'v') {
        i += 1;
    }
    let major_start = i;
    while i < b.len() && seg(b[i]) {
        i += 1;
    }
    if i == major_start {
        return None;
    }
    let major = (major_start, i);
    let mut dotted = || {
        if i + 1 < b.len() && b[i] == b'.' && seg(b[i + 1]) {
            let s = i;
            i += 1;
            while i < b.len() && seg(b[i]) {
                i += 1;
            }
            (s, i)
        } else {
            (i, i)
        }
    };
    let minor = dotted();
    let patch = dotted();
    let mut pre_with_dash = (i, i);
    let mut pre = (i, i);
    if b.get(i) == Some(&b'-')
        && let Some(e) = scan_ident_list(b, i + 1)
    {
        pre_with_dash = (i, e);
        pre = (i + 1, e);
        i = e;
    }
    let mut meta = (i, i);
    if b.get(i) == Some(&b'+')
        && let Some(e) = scan_ident_list(b, i + 1)
    {
        meta = (i + 1, e);
        i = e;
    }
    Some(VersionMatch {
        end: i,
        major,
        minor,
        patch,
        pre_with_dash,
        pre,
        meta,
    })
}

/// Go regexp's `\s`.
fn is_re_space(b: u8) -> bool {
    matches!(b, b'\t' | b'\n' | 0x0c | b'\r' | b' ')
}

fn cv_seg(b: u8) -> bool {
    b.is_ascii_digit() || matches!(b, b'x' | b'X' | b'*' | b'|')
}

fn is_x(s: &str) -> bool {
    matches!(s, "x" | "*" | "X")
}

type Span = (usize, usize);

/// A match of semver's `constraintRangeRegex`, `\s*(CV)\s+-\s+(CV)\s*`, at `p`:
/// the end of the match and the spans of the two versions.
fn range_match_at(b: &[u8], p: usize) -> Option<(usize, Span, Span)> {
    let skip_ws = |mut i: usize| {
        while i < b.len() && is_re_space(b[i]) {
            i += 1;
        }
        i
    };
    let mut i = skip_ws(p);
    let v1 = (i, scan_version(b, i, cv_seg)?.end);
    i = skip_ws(v1.1);
    if i == v1.1 || b.get(i) != Some(&b'-') {
        return None;
    }
    let after_dash = i + 1;
    i = skip_ws(after_dash);
    if i == after_dash {
        return None;
    }
    let v2 = (i, scan_version(b, i, cv_seg)?.end);
    Some((skip_ws(v2.1), v1, v2))
}

/// semver's `rewriteRange`: `1.2 - 1.4.5` becomes `>= 1.2, <= 1.4.5`.
fn rewrite_range(input: &str) -> String {
    let b = input.as_bytes();
    let mut found: Vec<(String, String)> = Vec::new();
    let mut p = 0;
    while p < b.len() {
        match range_match_at(b, p) {
            Some((end, v1, v2)) => {
                found.push((
                    input[p..end].to_string(),
                    format!(">= {}, <= {}", &input[v1.0..v1.1], &input[v2.0..v2.1]),
                ));
                p = end;
            }
            None => p += 1,
        }
    }
    let mut out = input.to_string();
    for (whole, replacement) in found {
        out = out.replacen(&whole, &replacement, 1);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{check, check_err};

    #[test]
    fn versions_read_as_masterminds_reads_them_held_by_the_semver_crate() {
        // (text, the version it reads as, or the error's message)
        #[rustfmt::skip]
        let cases: &[(&str, std::result::Result<&str, &str>)] = &[
            ("1.2.3", Ok("1.2.3")),
            ("v1.2.3", Ok("1.2.3")),
            ("1.3", Ok("1.3.0")),
            ("v1.3", Ok("1.3.0")),
            ("2", Ok("2.0.0")),
            ("1.3-beta", Ok("1.3.0-beta")),
            ("1.0-beta.1+build.5", Ok("1.0.0-beta.1+build.5")),
            ("01.2.3", Ok("1.2.3")),
            ("1.2.3-alpha.1-x", Ok("1.2.3-alpha.1-x")),
            ("9223372036854775807", Ok("9223372036854775807.0.0")),
            ("9223372036854775808", Err(r#"Error parsing version segment: strconv.ParseInt: parsing "9223372036854775808": value out of range"#)),
            ("1.2.3-01", Err("invalid leading zero in pre-release identifier")),
            ("1.2.3.4", Err("Invalid Semantic Version")),
            ("1.2.3-", Err("Invalid Semantic Version")),
            ("vv1", Err("Invalid Semantic Version")),
            (" 1.2.3", Err("Invalid Semantic Version")),
            ("1.x", Err("Invalid Semantic Version")),
            ("latest", Err("Invalid Semantic Version")),
            ("", Err("Invalid Semantic Version")),
        ];
        for (text, want) in cases {
            let got = Version::parse(text)
                .map(|v| v.to_string())
                .map_err(|e| e.to_string());
            assert_eq!(
                got.as_deref(),
                want.map_err(String::from).as_deref(),
                "input {text:?}"
            );
        }
        let v = |t: &str| Version::parse(t).unwrap();
        assert_eq!(v("v1.3"), v("1.3.0"), "equal whatever the text");
        assert_eq!(v("v1.3").original(), "v1.3");
        assert_eq!(v("1.2.3+a").cmp_precedence(&v("1.2.3+b")), Ordering::Equal);
        assert!(v("1.2.3+a") < v("1.2.3+b"), "Ord also orders the metadata");
        assert!(v("1.0.0-alpha") < v("1.0.0-alpha.1") && v("1.0.0-alpha.1") < v("1.0.0-beta"));
        assert!(v("1.0.0-beta.2") < v("1.0.0-beta.11") && v("1.0.0-rc.1") < v("1.0.0"));
    }

    #[test]
    fn ranges_are_checked_by_the_semver_crate_where_masterminds_v1_differs() {
        // (range, version, Constraint::check (Masterminds v1.5.0), Range::matches (the crate))
        #[rustfmt::skip]
        let cases: &[(&str, &str, bool, bool)] = &[
            // the same answer
            ("^1.3", "1.9.9", true, true),
            ("^1.3", "2.0.0", false, false),
            ("~1.3.2", "1.3.9", true, true),
            ("~1.3.2", "1.4.0", false, false),
            ("1.3.x", "1.3.7", true, true),
            ("1.3.x", "1.4.0", false, false),
            (">=1.2, <2", "1.9.9", true, true),
            (">=1.2, <2", "1.1.0", false, false),
            ("1.2 - 1.4.5", "1.4.5", true, true),
            ("1.2 - 1.4.5", "1.4.6", false, false),
            ("<1 || >=2", "2.1.0", true, true),
            ("!=1.2.3", "1.2.3", false, false),
            ("!=1.2.3", "1.2.4", true, true),
            ("*", "3.0.0", true, true),
            ("x", "3.0.0-beta", false, false),
            (">=1.2.0-beta", "1.2.0-rc", true, true),
            ("=v1.2.3", "1.2.3+meta", true, true),
            // Masterminds v1.5.0: a dirty `<` compares MAJOR (and MINOR when written) only
            (">=1.2, <2", "2.5.0", true, false),
            ("<1", "1.0.0", true, false),
            ("<=1.2.x", "1.3.0", false, false),
            // Masterminds v1.5.0's caret and tilde ignore 0.x
            ("^0.2", "0.9.0", true, false),
            ("~0", "0.9.0", true, true),
            ("~0.0.0", "5.0.0", true, false),
            // Masterminds v1.5.0: no wildcard, no missing PATCH: exactly
            ("=1.2", "1.2.5", false, true),
            ("<=1.2", "1.2.5", false, true),
            // prereleases: Masterminds v1.5.0 takes any once the constraint names one
            (">=1.0-a", "1.5.0-beta", true, false),
            ("!=1.5.0", "1.5.0-beta", true, false),
        ];
        for &(text, version, masterminds, kudo) in cases {
            let v = Version::parse(version).unwrap();
            let constraint = Constraint::parse(text).unwrap();
            let range = Range::parse(text).unwrap();
            assert_eq!(
                constraint.check(&v),
                masterminds,
                "Constraint {text:?} with {version}"
            );
            assert_eq!(range.matches(&v), kudo, "Range {text:?} with {version}");
        }
    }

    #[test]
    fn a_range_may_write_and_with_spaces() {
        // (range, the same with commas)
        #[rustfmt::skip]
        let cases: &[(&str, &str)] = &[
            (">=1.2 <2", ">=1.2,<2"),
            (">= 1.2 < 2", ">= 1.2,< 2"),
            (" >=1.2   <1.3.2 ", ">=1.2,<1.3.2"),
            (">=1.2 , <2", ">=1.2 , <2"),
            ("<1 || >=2 <3", "<1 || >=2,<3"),
            ("1.2 - 1.4.5", ">= 1.2, <= 1.4.5"),
        ];
        for (text, want) in cases {
            assert_eq!(and_by_commas(&rewrite_range(text)), *want, "input {text:?}");
            let v = Version::parse("1.2.5").unwrap();
            assert_eq!(
                Range::parse(text).unwrap().matches(&v),
                Range::parse(want).unwrap().matches(&v),
                "input {text:?}"
            );
        }
        assert!(
            matches!(Constraint::parse(">=1.2 <2"), Err(Error::Improper(c)) if c == ">=1.2 <2")
        );
        assert!(matches!(Range::parse(">>1"), Err(Error::Improper(_))));
        assert!(matches!(Range::parse("1|2"), Err(Error::Parser)));
    }

    #[test]
    fn semver() {
        check(&[
            // semver_test.go TestSemverCompare
            (
                r#"{{ semverCompare "1.2.3" "1.2.3" }}|{{ semverCompare "^1.2.0" "1.2.3" }}|{{ semverCompare "^1.2.0" "2.2.3" }}"#,
                "{}",
                "true|true|false",
            ),
            // semver_test.go TestSemver (field access)
            (
                r#"{{ $s := semver "1.2.3-beta.1+c0ff33" }}{{ $s.Prerelease }}|{{ $s := semver "1.2.3-beta.1+c0ff33" }}{{ $s.Major}}"#,
                "{}",
                "beta.1|1",
            ),
            // semver v1.5.0 Version accessors
            (
                r#"{{ (semver "v1.2").Minor }}|{{ (semver "v1.2").Patch }}|{{ (semver "v1.2.3+m").Metadata }}|{{ (semver "v1.2.3").Original }}|{{ (semver "v1.2.3-rc1").String }}"#,
                "{}",
                "2|0|m|v1.2.3|1.2.3-rc1",
            ),
            // semver v1.5.0 constraints: ranges, tilde, caret, x
            (
                r#"{{ semverCompare ">= 1.2" "1.2.0" }}|{{ semverCompare ">=1.2" "1.1.9" }}|{{ semverCompare "~1.2" "1.2.9" }}|{{ semverCompare "~1.2" "1.3.0" }}|{{ semverCompare "1.2.x" "1.2.7" }}|{{ semverCompare "1.2.x" "1.3.0" }}|{{ semverCompare "1.2" "1.2.5" }}|{{ semverCompare "1.x" "1.9.9" }}|{{ semverCompare "*" "3.0.0" }}"#,
                "{}",
                "true|false|true|false|true|false|false|true|true",
            ),
            // semver v1.5.0: comma is AND, || is OR, hyphen ranges
            (
                r#"{{ semverCompare ">=1.0, <2.0" "1.5.0" }}|{{ semverCompare ">=1.0, <2.0" "2.0.0" }}|{{ semverCompare "<1.0 || >=2.0" "2.1.0" }}|{{ semverCompare "<1.0 || >=2.0" "1.1.0" }}|{{ semverCompare "1.2 - 1.4.5" "1.4.5" }}|{{ semverCompare "1.2 - 1.4.5" "1.4.6" }}|{{ semverCompare " 1.2  -  1.4.5 " "1.3.0" }}"#,
                "{}",
                "true|false|true|false|true|false|true",
            ),
            // semver v1.5.0: prerelease handling
            (
                r#"{{ semverCompare ">=1.0" "1.5.0-beta" }}|{{ semverCompare ">=1.0-a" "1.5.0-beta" }}|{{ semverCompare "!=1.5.0" "1.5.0-beta" }}|{{ semverCompare "!=1.x" "1.5.0" }}|{{ semverCompare "!=1.x" "2.5.0" }}|{{ semverCompare "!=1.2.x" "1.3.0" }}|{{ semverCompare "!=1.2.x" "1.2.3" }}"#,
                "{}",
                "false|true|true|false|true|true|false",
            ),
            // semver v1.5.0: operators
            (
                r#"{{ semverCompare "<1.x" "1.9.0" }}|{{ semverCompare "<=1.2.x" "1.2.9" }}|{{ semverCompare "<=1.2.x" "1.3.0" }}|{{ semverCompare "<1.2" "1.1.9" }}|{{ semverCompare "<=1.2" "1.2.0" }}|{{ semverCompare ">1.2" "1.2.1" }}|{{ semverCompare "=>1.2" "1.2.0" }}|{{ semverCompare "=<1.2" "1.2.1" }}|{{ semverCompare "~>1.2.3" "1.2.9" }}|{{ semverCompare "~0" "0.9.0" }}|{{ semverCompare "~0.0.0" "5.0.0" }}|{{ semverCompare "^0.2" "0.9.0" }}"#,
                "{}",
                "true|true|false|true|true|true|true|false|true|true|true|true",
            ),
            // semver v1.5.0: prerelease ordering and metadata
            (
                r#"{{ semverCompare "^1.2.3-alpha.1" "1.2.3-alpha.2" }}|{{ semverCompare "^1.2.3-alpha.10" "1.2.3-alpha.9" }}|{{ semverCompare ">1.0.0-alpha" "1.0.0-alpha.1" }}|{{ semverCompare ">1.0.0-beta" "1.0.0-alpha" }}|{{ semverCompare ">1.0.0-a.b" "1.0.0-a.1" }}|{{ semverCompare "=v1.2.3" "1.2.3+meta" }}|{{ semverCompare "1.2.3+x" "1.2.3" }}"#,
                "{}",
                "true|false|true|false|false|true|true",
            ),
            // semver v1.5.0: wildcards
            (
                r#"{{ semverCompare "x" "1.0.0" }}|{{ semverCompare "1.X" "1.0.0" }}|{{ semverCompare "v1.x" "1.5.0" }}|{{ semverCompare "~1.x-beta" "1.5.0" }}|{{ semverCompare "1.2.*" "1.2.0" }}|{{ semverCompare "1.x.3" "1.2.3" }}"#,
                "{}",
                "true|true|true|true|true|true",
            ),
            // data values
            (
                "{{ semverCompare .c .v }}",
                r#"{"c": ">= 1.2.0, < 2.0.0", "v": "1.9.9"}"#,
                "true",
            ),
        ]);
    }

    #[test]
    fn errors() {
        // Masterminds/semver v1.5.0's errors, as text/template reports them.
        check_err(&[
            (
                r#"{{ semver "1.2.3.4" }}"#,
                "{}",
                "error calling semver: Invalid Semantic Version",
            ),
            (
                r#"{{ semver "99999999999999999999.1" }}"#,
                "{}",
                r#"error calling semver: Error parsing version segment: strconv.ParseInt: parsing "99999999999999999999": value out of range"#,
            ),
            (
                r#"{{ semverCompare ">=1.0 <2.0" "1.5.0" }}"#,
                "{}",
                "error calling semverCompare: improper constraint: >=1.0 <2.0",
            ),
            (
                r#"{{ semverCompare "1.0" "x" }}"#,
                "{}",
                "error calling semverCompare: Invalid Semantic Version",
            ),
            (
                r#"{{ semverCompare "1|2" "1.0.0" }}"#,
                "{}",
                "error calling semverCompare: constraint Parser Error",
            ),
            (
                r#"{{ semverCompare "==1.0" "1.0.0" }}"#,
                "{}",
                "error calling semverCompare: improper constraint: ==1.0",
            ),
        ]);
    }
}
