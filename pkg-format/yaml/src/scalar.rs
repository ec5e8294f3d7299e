//! One scalar of a manifest, read as Kubernetes reads it: go-yaml v2's resolution of plain
//! scalars and tags ([`resolve`], [`Plain`]), mapping keys made strings, merge keys, and the
//! block scalar header that decides a final line break.
//!
//! [`crate::document`]'s walk in its Kubernetes mode and [`crate::manifest`] both read scalars
//! here; the rules are listed in [`crate::manifest`]'s module docs.

use std::borrow::Cow;
use std::sync::LazyLock;

use base64::Engine as _;
use regex::Regex;
use saphyr_parser::{ScalarStyle, Tag};
use serde_json::{Number, Value};

use crate::strconv::{self, GoInt, parse_int_base0, underscore_ok};

/// What go-yaml v2 makes of a plain (unquoted, untagged) scalar.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Plain {
    /// `null`.
    Null,
    /// A boolean.
    Bool(bool),
    /// An integer that fits an int64.
    Int(i64),
    /// An integer above the largest int64 (go-yaml's `ParseUint` fallback).
    Uint(u64),
    /// A float (non-finite ones included: JSON refuses those later).
    Float(f64),
    /// A timestamp (`2001-12-14`, `2001-12-14 21:59:43.10`): go-yaml v2 decodes it into an
    /// `interface{}` as its text, so it reads as a string; a string that looks like one is
    /// quoted when written (sprig's `toYaml`).
    Timestamp,
    /// A string: the text itself.
    Text,
}

/// go-yaml v2's `resolveMapList`: the words that are not strings.
const WORDS: &[(&str, Plain)] = &[
    ("y", Plain::Bool(true)),
    ("Y", Plain::Bool(true)),
    ("yes", Plain::Bool(true)),
    ("Yes", Plain::Bool(true)),
    ("YES", Plain::Bool(true)),
    ("true", Plain::Bool(true)),
    ("True", Plain::Bool(true)),
    ("TRUE", Plain::Bool(true)),
    ("on", Plain::Bool(true)),
    ("On", Plain::Bool(true)),
    ("ON", Plain::Bool(true)),
    ("n", Plain::Bool(false)),
    ("N", Plain::Bool(false)),
    ("no", Plain::Bool(false)),
    ("No", Plain::Bool(false)),
    ("NO", Plain::Bool(false)),
    ("false", Plain::Bool(false)),
    ("False", Plain::Bool(false)),
    ("FALSE", Plain::Bool(false)),
    ("off", Plain::Bool(false)),
    ("Off", Plain::Bool(false)),
    ("OFF", Plain::Bool(false)),
    ("~", Plain::Null),
    ("null", Plain::Null),
    ("Null", Plain::Null),
    ("NULL", Plain::Null),
    (".nan", Plain::Float(f64::NAN)),
    (".NaN", Plain::Float(f64::NAN)),
    (".NAN", Plain::Float(f64::NAN)),
    (".inf", Plain::Float(f64::INFINITY)),
    (".Inf", Plain::Float(f64::INFINITY)),
    (".INF", Plain::Float(f64::INFINITY)),
    ("+.inf", Plain::Float(f64::INFINITY)),
    ("+.Inf", Plain::Float(f64::INFINITY)),
    ("+.INF", Plain::Float(f64::INFINITY)),
    ("-.inf", Plain::Float(f64::NEG_INFINITY)),
    ("-.Inf", Plain::Float(f64::NEG_INFINITY)),
    ("-.INF", Plain::Float(f64::NEG_INFINITY)),
];

/// go-yaml v2's `yamlStyleFloat`.
static YAML_STYLE_FLOAT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$")
        .expect("a valid regular expression")
});

/// The prefix of the YAML tags (`!!int` is `tag:yaml.org,2002:int`).
const CORE_TAGS: &str = "tag:yaml.org,2002:";

/// Resolves a plain scalar as go-yaml v2 does (`resolve.go`, `resolve` with no tag).
///
/// Its first character decides what it may be, as go-yaml's `resolveTable` hints: one of
/// `yYnNtTfFoO~` only one of go-yaml's words (`resolveMapList`); `.` a word or a float; a
/// digit or a sign a word, a timestamp, an integer ([`parse_int_base0`] on the text without its
/// underscores), a float, or `0b`/`-0b` and binary digits with a sign (`0b+1` is 1: go-yaml's
/// own fallback after `ParseInt` refused it); anything else (`<<` included) is text.
///
/// ```
/// use kudo_yaml::manifest::{resolve, Plain};
/// assert_eq!(resolve("0777"), Plain::Int(511));
/// assert_eq!(resolve("on"), Plain::Bool(true));
/// assert_eq!(resolve("08"), Plain::Float(8.0));
/// assert_eq!(resolve("2001-12-14"), Plain::Timestamp);
/// assert_eq!(resolve("yES"), Plain::Text);
/// ```
pub fn resolve(text: &str) -> Plain {
    let Some(&first) = text.as_bytes().first() else {
        return Plain::Null;
    };
    let numeric = first.is_ascii_digit() || first == b'+' || first == b'-';
    if !numeric && first != b'.' && !b"yYnNtTfFoO~".contains(&first) {
        return Plain::Text;
    }
    if let Some((_, word)) = WORDS.iter().find(|(w, _)| *w == text) {
        return *word;
    }
    if first == b'.' {
        // `strconv.ParseFloat` on the text as written (its underscores checked by Go's rule).
        return match underscore_ok(text) {
            true => float(&text.replace('_', "")).map_or(Plain::Text, Plain::Float),
            false => Plain::Text,
        };
    }
    if !numeric {
        return Plain::Text;
    }
    if is_timestamp(text) {
        return Plain::Timestamp;
    }
    let plain = text.replace('_', "");
    match parse_int_base0(&plain) {
        Some(GoInt::Int(i)) => return Plain::Int(i),
        Some(GoInt::Uint(u)) => return Plain::Uint(u),
        None => {}
    }
    if let Some(f) = float(&plain) {
        return Plain::Float(f);
    }
    // go-yaml v2's binary fallbacks: `ParseInt(plain[2:], 2, 64)` (then `ParseUint`) after
    // `0b`, `ParseInt("-" + plain[3:], 2, 64)` after `-0b`: they read a sign after the prefix.
    let binary = if let Some(digits) = plain.strip_prefix("0b") {
        strconv::parse_int(digits, 2)
            .map(Plain::Int)
            .or_else(|| strconv::parse_uint(digits, 2).map(Plain::Uint))
    } else if let Some(digits) = plain.strip_prefix("-0b") {
        strconv::parse_int(&format!("-{digits}"), 2).map(Plain::Int)
    } else {
        None
    };
    binary.unwrap_or(Plain::Text)
}

/// go-yaml's float rule: `yamlStyleFloat`, then `strconv.ParseFloat`, which refuses a number
/// too large for a float64 (it stays text). Infinity and NaN are words, not parsed here.
fn float(s: &str) -> Option<f64> {
    if !YAML_STYLE_FLOAT.is_match(s) {
        return None;
    }
    s.parse::<f64>().ok().filter(|f| f.is_finite())
}

/// What Kubernetes refuses in a manifest that is well-formed YAML.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub(crate) enum Refusal {
    /// `.inf`, `.nan`: JSON has no such number (Go's `json: unsupported value: +Inf`).
    #[error(
        "`{0}` is not a number JSON can carry: Kubernetes refuses infinity and NaN \
         (quote it for a string)"
    )]
    NonFinite(String),
    /// A tagged scalar that does not fit its tag (go-yaml's words).
    #[error("cannot decode !!{found} `{text}` as a !!{tag}")]
    Tag {
        /// What the text resolves to.
        found: &'static str,
        /// The text.
        text: String,
        /// The tag it was given.
        tag: String,
    },
    /// `!!binary` text that is not base64 (go-yaml's words).
    #[error("!!binary value contains invalid base64 data")]
    Binary,
    /// A null key (`~: x`, `: x`): sigs.k8s.io/yaml has no string for it.
    #[error("a mapping key is null: Kubernetes refuses it (quote it for the key \"{0}\")")]
    NullKey(String),
    /// An integer key above the largest int64 (a uint64 to go-yaml, which sigs.k8s.io/yaml
    /// refuses as a key).
    #[error("the mapping key {0} is above the largest int64: Kubernetes refuses it (quote it)")]
    UintKey(u64),
    /// `<<:` with neither a mapping nor a list of mappings (go-yaml's words).
    #[error("map merge requires map or sequence of maps as the value")]
    Merge,
}

/// A scalar event read by Kubernetes' rules: what it resolved to, and its text.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Scalar {
    kind: Plain,
    text: String,
}

impl Scalar {
    /// Resolves a scalar event: plain and untagged by [`resolve`]; quoted or block, a string;
    /// tagged, by its tag.
    pub(crate) fn read(
        text: Cow<'_, str>,
        style: ScalarStyle,
        tag: Option<&Cow<'_, Tag>>,
    ) -> Result<Scalar, Refusal> {
        let Some(tag) = tag else {
            let kind = match style {
                ScalarStyle::Plain => resolve(&text),
                _ => Plain::Text,
            };
            return Ok(Scalar {
                kind,
                text: text.into_owned(),
            });
        };
        let name = match tag.handle.as_str() {
            CORE_TAGS => tag.suffix.as_str(),
            _ => "",
        };
        let kind = match name {
            "int" | "float" | "bool" | "null" | "timestamp" => tagged(name, &text)?,
            "binary" => {
                let compact: String = text.chars().filter(|c| !matches!(c, '\n' | '\r')).collect();
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(compact)
                    .map_err(|_| Refusal::Binary)?;
                return Ok(Scalar {
                    kind: Plain::Text,
                    text: String::from_utf8_lossy(&bytes).into_owned(),
                });
            }
            // `!!str`, `!!merge`, `!foo`, `!`: go-yaml resolves no other tag, the text stays.
            _ => Plain::Text,
        };
        Ok(Scalar {
            kind,
            text: text.into_owned(),
        })
    }

    /// The JSON value, as Go's `encoding/json` writes it.
    pub(crate) fn into_value(self) -> Result<Value, Refusal> {
        Ok(match self.kind {
            Plain::Null => Value::Null,
            Plain::Bool(b) => Value::Bool(b),
            Plain::Int(i) => Value::Number(i.into()),
            Plain::Uint(u) => Value::Number(u.into()),
            Plain::Float(f) => Value::Number(json_float(f).ok_or(Refusal::NonFinite(self.text))?),
            Plain::Timestamp | Plain::Text => Value::String(self.text),
        })
    }

    /// The mapping key it makes, as sigs.k8s.io/yaml turns keys into strings.
    pub(crate) fn into_key(self) -> Result<String, Refusal> {
        match self.kind {
            Plain::Null => Err(Refusal::NullKey(self.text)),
            Plain::Bool(b) => Ok(b.to_string()),
            Plain::Int(i) => Ok(i.to_string()),
            Plain::Uint(u) => Err(Refusal::UintKey(u)),
            Plain::Float(f) => Ok(float_key(f)),
            Plain::Timestamp | Plain::Text => Ok(self.text),
        }
    }
}

/// A scalar that is a merge key: `<<` plain and untagged (or with the non-specific tag `!`),
/// or tagged `!!merge` (go-yaml v2 `isMerge`).
pub(crate) fn is_merge(text: &str, style: ScalarStyle, tag: Option<&Cow<'_, Tag>>) -> bool {
    text == "<<"
        && match tag {
            None => style == ScalarStyle::Plain,
            Some(t) => {
                (t.handle == "!" && t.suffix.is_empty() && style == ScalarStyle::Plain)
                    || (t.handle == CORE_TAGS && t.suffix == "merge")
            }
        }
}

/// The key a value read earlier makes (an alias used as a key), as [`Scalar::into_key`].
pub(crate) fn key_of(value: Value) -> Result<Option<String>, Refusal> {
    Ok(Some(match value {
        Value::String(s) => s,
        Value::Bool(b) => b.to_string(),
        Value::Null => return Err(Refusal::NullKey("null".into())),
        Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), _, _) => i.to_string(),
            (None, Some(u), _) => return Err(Refusal::UintKey(u)),
            (None, None, Some(f)) => float_key(f),
            _ => n.to_string(),
        },
        Value::Array(_) | Value::Object(_) => return Ok(None),
    }))
}

/// go-yaml v2 `resolve(tag, text)` for a scalar tagged `!!int`, `!!float`, `!!bool`, `!!null`
/// or `!!timestamp`: the text resolves as a plain one (a timestamp only for `!!timestamp`), and
/// must give the tag's type; an integer is a float too.
fn tagged(tag: &str, text: &str) -> Result<Plain, Refusal> {
    let found = resolve(text);
    let fits = match (tag, found) {
        ("int", Plain::Int(_) | Plain::Uint(_)) => Some(found),
        ("float", Plain::Float(_)) => Some(found),
        ("float", Plain::Int(i)) => Some(Plain::Float(i as f64)),
        ("bool", Plain::Bool(_)) => Some(found),
        ("null", Plain::Null) => Some(found),
        ("timestamp", Plain::Timestamp) => Some(found),
        _ => None,
    };
    fits.ok_or_else(|| Refusal::Tag {
        found: match found {
            Plain::Null => "null",
            Plain::Bool(_) => "bool",
            Plain::Int(_) | Plain::Uint(_) => "int",
            Plain::Float(_) => "float",
            // go-yaml tries a timestamp only untagged or for `!!timestamp`
            Plain::Timestamp | Plain::Text => "str",
        },
        text: text.to_string(),
        tag: tag.to_string(),
    })
}

/// go-yaml v2 `parseTimestamp`: four digits and `-`, then Go's `time.Parse` with one of
/// `2006-1-2T15:4:5.999999999Z07:00` (or a lowercase `t`), `2006-1-2 15:4:5.999999999` (a run
/// of spaces before the time) and `2006-1-2`: month and day of one or two digits, the day
/// within its month, the time in range, at most nine digits of fraction, a zone (`Z`,
/// `+07:00`) after a `T` and none after a space.
fn is_timestamp(text: &str) -> bool {
    let b = text.as_bytes();
    if b.iter().take_while(|c| c.is_ascii_digit()).count() != 4 || b.get(4) != Some(&b'-') {
        return false;
    }
    // Go's `getnum`: one or two digits
    let num = |i: &mut usize| -> Option<u32> {
        let digits = b[*i..]
            .iter()
            .take(2)
            .take_while(|c| c.is_ascii_digit())
            .count();
        let n = text.get(*i..*i + digits)?.parse().ok()?;
        *i += digits;
        Some(n)
    };
    let expect = |i: &mut usize, c: u8| -> Option<()> { (b.get(*i) == Some(&c)).then(|| *i += 1) };
    let parse = || -> Option<()> {
        let year: u32 = text[..4].parse().ok()?;
        let mut i = 5;
        let month = num(&mut i)?;
        expect(&mut i, b'-')?;
        let day = num(&mut i)?;
        let leap =
            year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400));
        let days = match month {
            1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
            4 | 6 | 9 | 11 => 30,
            2 if leap => 29,
            2 => 28,
            _ => return None,
        };
        if !(1..=days).contains(&day) {
            return None;
        }
        if i == b.len() {
            return Some(());
        }
        let zoned = match b[i] {
            b'T' | b't' => true,
            b' ' => false,
            _ => return None,
        };
        i += 1;
        while !zoned && b.get(i) == Some(&b' ') {
            i += 1;
        }
        let hour = num(&mut i)?;
        expect(&mut i, b':')?;
        let minute = num(&mut i)?;
        expect(&mut i, b':')?;
        let second = num(&mut i)?;
        if hour >= 24 || minute >= 60 || second >= 60 {
            return None;
        }
        if b.get(i) == Some(&b'.') && b.get(i + 1).is_some_and(u8::is_ascii_digit) {
            let digits = b[i + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
            if digits > 9 {
                return None;
            }
            i += 1 + digits;
        }
        if zoned {
            match b.get(i) {
                Some(b'Z') => i += 1,
                Some(b'+' | b'-') => {
                    let zone = b.get(i + 1..i + 6)?;
                    let digits = [zone[0], zone[1], zone[3], zone[4]];
                    if zone[2] != b':' || !digits.iter().all(u8::is_ascii_digit) {
                        return None;
                    }
                    i += 6;
                }
                _ => return None,
            }
        }
        (i == b.len()).then_some(())
    };
    parse().is_some()
}

/// A float as Go's `encoding/json` writes it: an integer when it is one below 1e21 (Go writes
/// `1000`, not `1000.0`; the digits Go writes, `18446744073709552000` for 2^64, are kept when
/// they fit an int64 or a uint64), the float otherwise. `None` for infinity and NaN.
fn json_float(f: f64) -> Option<Number> {
    if f.fract() == 0.0 && f.abs() < 1e21 {
        // Rust's `Display` writes the shortest digits, zero-padded, as Go's 'f' format does.
        let digits = format!("{f}");
        if let Ok(i) = digits.parse::<i64>() {
            return Some(i.into());
        }
        if let Ok(u) = digits.parse::<u64>() {
            return Some(u.into());
        }
    }
    Number::from_f64(f)
}

/// A float key as sigs.k8s.io/yaml writes it: Go's `strconv.FormatFloat(f, 'g', -1, 32)` (the
/// shortest digits of the float32; `%e` when the exponent is below -4 or at least 6, with at
/// least two exponent digits), and `.inf`, `-.inf`, `.nan`.
fn float_key(f: f64) -> String {
    let f = f as f32;
    if f.is_nan() {
        return ".nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { ".inf" } else { "-.inf" }.into();
    }
    // `{:e}` writes the shortest digits that read back as this float32: `-1.2345679e8`.
    let sci = format!("{f:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let sign = if f.is_sign_negative() { "-" } else { "" };
    let digits: Vec<u8> = mantissa.bytes().filter(u8::is_ascii_digit).collect();
    // Go counts no digits for zero, and the decimal point after `dp` of them.
    let (digits, dp) = match digits.as_slice() {
        [b'0'] => (Vec::new(), 0),
        _ => (digits, exp.parse::<i64>().unwrap_or(0) + 1),
    };
    let nd = digits.len() as i64;
    let digit = |i: i64| match usize::try_from(i).ok().and_then(|i| digits.get(i)) {
        Some(&d) => d as char,
        None => '0',
    };
    let exp = if nd == 0 { 0 } else { dp - 1 };
    if !(-4..6).contains(&exp) {
        let fraction: String = (1..nd).map(digit).collect();
        let point = if fraction.is_empty() { "" } else { "." };
        let esign = if exp < 0 { '-' } else { '+' };
        return format!(
            "{sign}{}{point}{fraction}e{esign}{:02}",
            digit(0),
            exp.abs()
        );
    }
    let whole: String = if dp > 0 {
        (0..dp).map(digit).collect()
    } else {
        "0".into()
    };
    let fraction: String = (dp..nd).map(digit).collect();
    let point = if fraction.is_empty() { "" } else { "." };
    format!("{sign}{whole}{point}{fraction}")
}

/// Whether the block scalar that starts at `start` (a character index) in `source`, a text
/// whose last line, `last_line`, was given the line break it lacked, reads with a final line
/// break that was not written. libyaml (go-yaml) ends such a scalar with the line breaks written:
/// keep chomping (`|+`) has one less; clip (`|`) has none when its last line is content, and
/// its one line break when the last line is blank (no deeper than the scalar's indentation).
pub(crate) fn line_break_unwritten(source: &str, start: usize, last_line: &str) -> bool {
    let Some(header) = block_header(source, start) else {
        return false;
    };
    match header.chomping {
        Chomping::Strip => false,
        Chomping::Keep => true,
        Chomping::Clip => {
            let spaces = last_line.len() - last_line.trim_start_matches(' ').len();
            !last_line.trim().is_empty()
                || block_indent(source, &header).is_some_and(|indent| spaces > indent)
        }
    }
}

/// A block scalar's content indentation: the header line's plus an explicit indentation
/// indicator, or else that of its first line that is not blank.
fn block_indent(source: &str, header: &Header) -> Option<usize> {
    let leading = |line: &str| line.len() - line.trim_start_matches(' ').len();
    let line_start = source[..header.at].rfind('\n').map_or(0, |i| i + 1);
    let explicit = source[header.at + 1..header.at + header.len]
        .chars()
        .find_map(|c| c.to_digit(10));
    if let Some(n) = explicit {
        return Some(leading(&source[line_start..]) + n as usize);
    }
    let after = source[header.at..].find('\n')? + header.at + 1;
    source[after..]
        .lines()
        .find(|l| !l.trim().is_empty())
        .map(leading)
}

/// How a block scalar keeps its final line breaks: `|` clips to one, `|-` strips, `|+` keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Chomping {
    Clip,
    Strip,
    Keep,
}

/// A block scalar's header (`|`, `>-`, `|2+`): where it is (in bytes) and its chomping.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Header {
    /// Where the indicator `|` or `>` is.
    pub(crate) at: usize,
    /// The header's length: the indicator, then the chomping and indentation indicators.
    pub(crate) len: usize,
    pub(crate) chomping: Chomping,
}

/// A block scalar header at the end of a line (a comment may follow).
static HEADER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"[|>]([1-9][+-]?|[+-][1-9]?)?[ \t]*(?:#.*)?$").expect("a valid regular expression")
});

/// The header of the block scalar whose event starts at `start` (a character index, as the
/// parser counts). saphyr starts the event at its tag or anchor when it has one (the header
/// follows them on that line), at the header when the scalar is empty, and otherwise at its
/// first content, below the header.
pub(crate) fn block_header(text: &str, start: usize) -> Option<Header> {
    let byte = text
        .char_indices()
        .nth(start)
        .map_or(text.len(), |(i, _)| i);
    let (from, line) = match text[byte..].chars().next() {
        Some('|' | '>' | '!' | '&') => {
            let end = text[byte..].find('\n').map_or(text.len(), |i| byte + i);
            (byte, &text[byte..end])
        }
        _ => {
            // the nearest line above that is not blank
            let mut end = text[..byte].rfind('\n')?;
            loop {
                let line_start = text[..end].rfind('\n').map_or(0, |i| i + 1);
                let line = &text[line_start..end];
                if !line.trim().is_empty() {
                    break (line_start, line);
                }
                end = line_start.checked_sub(1)?;
            }
        }
    };
    let line = line.trim_end_matches('\r');
    let m = HEADER.find(line)?;
    let indicators = &line[m.start() + 1..];
    let len = 1 + indicators
        .find(|c: char| !matches!(c, '+' | '-' | '1'..='9'))
        .unwrap_or(indicators.len());
    let chomping = match &indicators[..len - 1] {
        i if i.contains('-') => Chomping::Strip,
        i if i.contains('+') => Chomping::Keep,
        _ => Chomping::Clip,
    };
    Some(Header {
        at: from + m.start(),
        len,
        chomping,
    })
}
