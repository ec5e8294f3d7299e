//! `semver` and `semverCompare` with the rules of Masterminds/semver v1.5.0 (`version.go`,
//! `constraints.go`): AND is written with a comma (`>= 1.0, < 2.0`).

use gotmpl::{Result, Value};

use super::{Map, arg_str, call_err, map_value, string, want};

pub(super) fn f_semver(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 1)?;
    let v = SemVer::parse(arg_str(name, &a[0])?).map_err(|e| call_err(name, e))?;
    let mut m = Map::new();
    m.insert("Major".into(), Value::Int(v.major));
    m.insert("Minor".into(), Value::Int(v.minor));
    m.insert("Patch".into(), Value::Int(v.patch));
    m.insert("Prerelease".into(), string(v.pre.as_str()));
    m.insert("Metadata".into(), string(v.metadata.as_str()));
    m.insert("Original".into(), string(v.original.as_str()));
    m.insert("String".into(), string(v.to_string()));
    Ok(map_value(m))
}

pub(super) fn f_semver_compare(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 2)?;
    let constraint = arg_str(name, &a[0])?;
    let version = arg_str(name, &a[1])?;
    let c = Constraints::parse(constraint).map_err(|e| call_err(name, e))?;
    let v = SemVer::parse(version).map_err(|e| call_err(name, e))?;
    Ok(Value::Bool(c.check(&v)))
}

#[derive(Debug, Clone)]
struct SemVer {
    major: i64,
    minor: i64,
    patch: i64,
    pre: String,
    metadata: String,
    original: String,
}

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

fn semver_segment(s: &str) -> std::result::Result<i64, String> {
    s.parse::<i64>().map_err(|_| {
        format!(
            "Error parsing version segment: strconv.ParseInt: parsing \"{s}\": value out of range"
        )
    })
}

impl SemVer {
    /// `semver.NewVersion`.
    fn parse(v: &str) -> std::result::Result<SemVer, String> {
        let b = v.as_bytes();
        let m = match scan_version(b, 0, |c| c.is_ascii_digit()) {
            Some(m) if m.end == b.len() => m,
            _ => return Err("Invalid Semantic Version".into()),
        };
        let seg = |(s, e): (usize, usize)| &v[s..e];
        let major = semver_segment(seg(m.major))?;
        let minor = match seg(m.minor) {
            "" => 0,
            s => semver_segment(&s[1..])?,
        };
        let patch = match seg(m.patch) {
            "" => 0,
            s => semver_segment(&s[1..])?,
        };
        Ok(SemVer {
            major,
            minor,
            patch,
            pre: seg(m.pre).to_string(),
            metadata: seg(m.meta).to_string(),
            original: v.to_string(),
        })
    }

    fn compare(&self, o: &SemVer) -> std::cmp::Ordering {
        use std::cmp::Ordering;
        let c = (self.major, self.minor, self.patch).cmp(&(o.major, o.minor, o.patch));
        if c != Ordering::Equal {
            return c;
        }
        match (self.pre.is_empty(), o.pre.is_empty()) {
            (true, true) => Ordering::Equal,
            (true, false) => Ordering::Greater,
            (false, true) => Ordering::Less,
            (false, false) => compare_prerelease(&self.pre, &o.pre),
        }
    }
}

impl std::fmt::Display for SemVer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)?;
        if !self.pre.is_empty() {
            write!(f, "-{}", self.pre)?;
        }
        if !self.metadata.is_empty() {
            write!(f, "+{}", self.metadata)?;
        }
        Ok(())
    }
}

fn compare_prerelease(a: &str, b: &str) -> std::cmp::Ordering {
    let ap: Vec<&str> = a.split('.').collect();
    let bp: Vec<&str> = b.split('.').collect();
    for i in 0..ap.len().max(bp.len()) {
        let s = ap.get(i).copied().unwrap_or("");
        let o = bp.get(i).copied().unwrap_or("");
        let d = compare_pre_part(s, o);
        if d != std::cmp::Ordering::Equal {
            return d;
        }
    }
    std::cmp::Ordering::Equal
}

fn compare_pre_part(s: &str, o: &str) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    if s == o {
        return Ordering::Equal;
    }
    if s.is_empty() {
        return Ordering::Less;
    }
    if o.is_empty() {
        return Ordering::Greater;
    }
    let parse = |x: &str| -> Option<u64> {
        if x.starts_with('+') {
            None
        } else {
            x.parse::<u64>().ok()
        }
    };
    match (parse(s), parse(o)) {
        (None, None) => {
            if s > o {
                Ordering::Greater
            } else {
                Ordering::Less
            }
        }
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (Some(si), Some(oi)) => {
            if si > oi {
                Ordering::Greater
            } else {
                Ordering::Less
            }
        }
    }
}

#[derive(Debug)]
struct Constraint {
    op: &'static str,
    con: SemVer,
    minor_dirty: bool,
    patch_dirty: bool,
    dirty: bool,
}

/// `semver.Constraints`: OR of ANDs.
struct Constraints(Vec<Vec<Constraint>>);

const CONSTRAINT_OPS: &[&str] = &[
    "", "=", "!=", ">", "<", ">=", "=>", "<=", "=<", "~", "~>", "^",
];

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

impl Constraints {
    /// `semver.NewConstraint`.
    fn parse(c: &str) -> std::result::Result<Constraints, String> {
        let c = rewrite_range(c);
        let mut ors = Vec::new();
        for or in c.split("||") {
            let mut ands = Vec::new();
            for s in or.split(',') {
                ands.push(parse_constraint(s)?);
            }
            ors.push(ands);
        }
        Ok(Constraints(ors))
    }

    fn check(&self, v: &SemVer) -> bool {
        self.0.iter().any(|ands| ands.iter().all(|c| c.check(v)))
    }
}

fn parse_constraint(c: &str) -> std::result::Result<Constraint, String> {
    let improper = || format!("improper constraint: {c}");
    let b = c.as_bytes();
    let mut i = 0;
    while i < b.len() && is_re_space(b[i]) {
        i += 1;
    }
    let op_start = i;
    while i < b.len() && matches!(b[i], b'=' | b'!' | b'<' | b'>' | b'~' | b'^') {
        i += 1;
    }
    let op = CONSTRAINT_OPS
        .iter()
        .copied()
        .find(|o| *o == &c[op_start..i])
        .ok_or_else(improper)?;
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
    let seg = |(s, e): (usize, usize)| &c[s..e];
    let (m3, m4, m5, m6) = (
        seg(m.major),
        seg(m.minor),
        seg(m.patch),
        seg(m.pre_with_dash),
    );
    let (mut minor_dirty, mut patch_dirty, mut dirty) = (false, false, false);
    let ver = if is_x(m3) {
        dirty = true;
        "0.0.0".to_string()
    } else if m4.is_empty() || is_x(&m4[1..]) {
        minor_dirty = true;
        dirty = true;
        format!("{m3}.0.0{m6}")
    } else if !m5.is_empty() && is_x(&m5[1..]) {
        dirty = true;
        patch_dirty = true;
        format!("{m3}{m4}.0{m6}")
    } else {
        whole.to_string()
    };
    let con = SemVer::parse(&ver).map_err(|_| "constraint Parser Error".to_string())?;
    Ok(Constraint {
        op,
        con,
        minor_dirty,
        patch_dirty,
        dirty,
    })
}

impl Constraint {
    fn check(&self, v: &SemVer) -> bool {
        use std::cmp::Ordering;
        let c = &self.con;
        // A prerelease version only satisfies constraints that name a prerelease
        // (every check but a plain `!=` applies this rule).
        if !v.pre.is_empty() && c.pre.is_empty() && (self.op != "!=" || self.dirty) {
            return false;
        }
        match self.op {
            "" | "=" => {
                if self.dirty {
                    self.tilde(v)
                } else {
                    v.compare(c) == Ordering::Equal
                }
            }
            "!=" => {
                if self.dirty {
                    if c.major != v.major {
                        return true;
                    }
                    c.minor != v.minor && !self.minor_dirty
                } else {
                    v.compare(c) != Ordering::Equal
                }
            }
            ">" => v.compare(c) == Ordering::Greater,
            ">=" | "=>" => v.compare(c) != Ordering::Less,
            "<" | "<=" | "=<" => {
                if !self.dirty {
                    let o = v.compare(c);
                    return if self.op == "<" {
                        o == Ordering::Less
                    } else {
                        o != Ordering::Greater
                    };
                }
                !(v.major > c.major || (v.minor > c.minor && !self.minor_dirty))
            }
            "~" | "~>" => self.tilde(v),
            _ => v.compare(c) != Ordering::Less && v.major == c.major, // "^"
        }
    }

    fn tilde(&self, v: &SemVer) -> bool {
        let c = &self.con;
        if v.compare(c) == std::cmp::Ordering::Less {
            return false;
        }
        if c.major == 0 && c.minor == 0 && c.patch == 0 && !self.minor_dirty && !self.patch_dirty {
            return true;
        }
        if v.major != c.major {
            return false;
        }
        v.minor == c.minor || self.minor_dirty
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::{check, check_err};

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
