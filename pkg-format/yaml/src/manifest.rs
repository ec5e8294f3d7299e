//! Rendered manifests, read as Kubernetes reads them.
//!
//! Kubernetes (kubectl, the API server, KUDO's manager) reads a YAML manifest with
//! sigs.k8s.io/yaml: go-yaml **v2** decodes it, resolving plain scalars by YAML 1.1 rules, and
//! the result is converted to JSON. Parameter files are YAML 1.2
//! ([`Document`](crate::document::Document): `NO` and `0777` stay a string and 777); a
//! rendered template is a manifest, so [`parse`] reads it Kubernetes' way. `defaultMode: 0777`
//! is 511 (octal), as the API server expects, and `enabled: yes` is `true`.
//!
//! Only a **plain** scalar (unquoted, untagged) is resolved; quoted and block (`|`, `>`)
//! scalars are strings. [`resolve`] is go-yaml v2's `resolve` for plain scalars:
//!
//! | written (plain) | read as | rule |
//! |---|---|---|
//! | `~` `null` `Null` `NULL`, nothing | null | go-yaml v2 `resolve.go`, `resolveMapList` |
//! | `y Y yes Yes YES true True TRUE on On ON` | `true` | `resolveMapList` |
//! | `n N no No NO false False FALSE off Off OFF` | `false` | `resolveMapList` |
//! | `0777`, `0o17`, `0x1F`, `0b101`, `-0777`, `1_000` | 511, 15, 31, 5, -511, 1000 | underscores removed, then Go `strconv.ParseInt(s, 0, 64)`, then `ParseUint` ([`strconv::parse_int_base0`]) |
//! | `1.5`, `1e3`, `.5`, `1.`, `08` | 1.5, 1000, 0.5, 1, 8 | regex `^[-+]?(\.[0-9]+\|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`, then `ParseFloat` |
//! | `.inf` `-.Inf` `.NaN` ... | refused | JSON has no infinity or NaN: sigs.k8s.io/yaml fails too |
//! | `0b+1`, `0b-1` | 1, -1 | go-yaml v2's own fallback after `0b`: `ParseInt("+1", 2, 64)` |
//! | `1e400`, `2001-12-14`, `0x`, `yES`, anything else | the text | a number too large, a timestamp (go-yaml v2 keeps its text), or no rule |
//!
//! Tags: `!!str` makes any scalar a string; `!!int`, `!!float`, `!!bool`, `!!null` and
//! `!!timestamp` resolve the text (quoted or not) and refuse what does not fit ("cannot decode
//! !!str `abc` as a !!int", go-yaml's words); `!!float 3` is 3; `!!binary` is decoded from
//! base64; any other tag leaves a string.
//!
//! Numbers come out as Go's `encoding/json` writes them: a float that is an integer below 1e21
//! is written without a fraction (`1e3` is 1000, so an `int32` field takes it), others as the
//! shortest float.
//!
//! Mapping keys become strings, as sigs.k8s.io/yaml makes them (`convertToJSONableObject`):
//! `true`/`false`, an integer in decimal (`0777: x` is the key `"511"`), a float by Go's
//! `FormatFloat(f, 'g', -1, 32)` (`1e6` is `"1e+06"`), `.inf`/`-.inf`/`.nan`. A null key or an
//! integer above the largest int64 is refused, as there.
//!
//! Merge keys (`<<: *base`, `<<: [*a, *b]`) merge as go-yaml v2 merges into a map: in the order
//! written, so a merge overrides the keys before it and is overridden by the keys after it; in a
//! list, earlier maps win. Anchors, aliases (with the alias budget) and duplicate keys (refused)
//! are handled as for parameter files: the walk over the parser's events is `document`'s, in its
//! Kubernetes mode.
//!
//! Printing goes the other way: [`to_yaml`] writes YAML that this reader reads back to the same
//! JSON (a string such as `yes` or `0777` is quoted), and [`printable`] decides how a template's
//! rendered text is printed in a stream of several (`kudo template`) so that it still reads as
//! the objects applied.
//!
//! ```
//! use kudo_yaml::manifest;
//! use serde_json::json;
//! let docs = manifest::parse("t.yaml".as_ref(), "mode: 0777\non: yes\nsize: 1e3\n").unwrap();
//! assert_eq!(docs, vec![json!({"mode": 511, "true": true, "size": 1000})]);
//! ```

use std::borrow::Cow;
use std::path::Path;
use std::sync::LazyLock;

use base64::Engine as _;
use regex::Regex;
use saphyr_parser::{ScalarStyle, Tag};
use serde_json::{Number, Value};

use crate::document;
use crate::strconv::{self, GoInt, parse_int_base0, underscore_ok};
use kudo_diag::error::Error;

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

/// Parses every document of a manifest stream (a rendered template) by Kubernetes' rules.
/// Empty documents are `null`.
pub fn parse(path: &Path, text: &str) -> Result<Vec<Value>, Error> {
    document::load_manifests(text)
        .map(|(docs, _)| docs)
        .map_err(|e| document::scan_error(path, &e))
}

/// YAML text that Kubernetes (and [`parse`]) reads back as `value`.
///
/// serde-saphyr's emitter, which by default quotes every string that a YAML 1.1 reader such as
/// go-yaml would take for something else (`yes`, `on`, `y`, `0777`, `1_000`, `0x1F`, `~`,
/// `2001-12-14`); should it fail, JSON, which is YAML.
pub fn to_yaml(value: &Value) -> String {
    serde_saphyr::to_string(value).unwrap_or_else(|_| {
        let json = serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string());
        format!("{json}\n")
    })
}

/// How one template's rendered text is printed in a stream of documents (`kudo template`)
/// after a line `---`, so that it reads back (by [`parse`]) as `objects`, the objects read from
/// the text alone. Each variant's text ends with a line break.
#[derive(Debug, Clone, PartialEq)]
pub enum Printable {
    /// The text as rendered, with a line break added if it had none.
    Rendered(String),
    /// The text as rendered, its last node, a block scalar at the very end of a text with no
    /// final line break, made to strip its final line break (`|` → `|-`, `>+` → `>-`). Alone,
    /// the text ends without a line break, so the scalar has none; followed by the next
    /// document, it would gain one.
    Stripped(String),
    /// The objects themselves, as YAML: the rendered text would not read the same inside a
    /// stream (say, it starts with a `%YAML` directive).
    Objects(String),
}

impl Printable {
    /// The text to print.
    pub fn text(&self) -> &str {
        match self {
            Printable::Rendered(t) | Printable::Stripped(t) | Printable::Objects(t) => t,
        }
    }
}

/// Decides how to print a template's rendered `text`, which reads as `objects` (its documents
/// that are not empty), inside a stream: see [`Printable`]. Each candidate is checked by
/// reading it after a `---` line.
pub fn printable(text: &str, objects: &[Value]) -> Printable {
    let reads_as_objects = |candidate: &str| {
        parse(Path::new("-"), &format!("---\n{candidate}")).is_ok_and(|docs| {
            docs.into_iter()
                .filter(|d| !d.is_null())
                .eq(objects.iter().cloned())
        })
    };
    if text.is_empty() || text.ends_with('\n') {
        if reads_as_objects(text) {
            return Printable::Rendered(text.to_string());
        }
    } else {
        let with_break = format!("{text}\n");
        if reads_as_objects(&with_break) {
            return Printable::Rendered(with_break);
        }
        if let Some(stripped) = strip_final_block(text)
            && reads_as_objects(&stripped)
        {
            return Printable::Stripped(stripped);
        }
    }
    let yaml: Vec<String> = objects.iter().map(to_yaml).collect();
    let yaml = yaml.join("---\n");
    if reads_as_objects(&yaml) {
        return Printable::Objects(yaml);
    }
    let json: Vec<String> = objects.iter().map(|o| format!("{o}\n")).collect();
    Printable::Objects(json.join("---\n"))
}

/// `text` plus a line break, its final block scalar's chomping made strip: `None` when its last
/// node is not a block scalar.
fn strip_final_block(text: &str) -> Option<String> {
    let (_, last) = document::load_manifests(text).ok()?;
    let header = block_header(text, last?)?;
    let digit: String = text[header.at + 1..header.at + header.len]
        .chars()
        .filter(char::is_ascii_digit)
        .collect();
    let (before, after) = (&text[..=header.at], &text[header.at + header.len..]);
    Some(format!("{before}-{digit}{after}\n"))
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A rule's input, what it reads as, and the reference that says so.
    type Case = (&'static str, Value, &'static str);

    /// Reads `key: <text>` and returns the value, or the refusal's message.
    fn value_of(text: &str) -> Result<Value, String> {
        parse(Path::new("t.yaml"), &format!("key: {text}\n"))
            .map(|mut docs| docs.remove(0)["key"].take())
            .map_err(|e| e.to_string())
    }

    #[test]
    fn plain_scalars_resolve_as_go_yaml_v2_and_sigs_k8s_io_yaml_read_them() {
        #[rustfmt::skip]
        let cases: &[Case] = &[
            // null: go-yaml v2 resolve.go, resolveMapList {nil, "", "~", "null", "Null", "NULL"}
            ("~", json!(null), "resolveMapList: ~ is null"),
            ("null", json!(null), "resolveMapList: null"),
            ("Null", json!(null), "resolveMapList: Null"),
            ("NULL", json!(null), "resolveMapList: NULL"),
            ("", json!(null), "resolveMapList: the empty scalar"),
            ("nULL", json!("nULL"), "not in resolveMapList: a string"),
            // booleans: resolveMapList, YAML 1.1
            ("y", json!(true), "resolveMapList: y"),
            ("Y", json!(true), "resolveMapList: Y"),
            ("yes", json!(true), "resolveMapList: yes"),
            ("Yes", json!(true), "resolveMapList: Yes"),
            ("YES", json!(true), "resolveMapList: YES"),
            ("true", json!(true), "resolveMapList: true"),
            ("True", json!(true), "resolveMapList: True"),
            ("TRUE", json!(true), "resolveMapList: TRUE"),
            ("on", json!(true), "resolveMapList: on"),
            ("On", json!(true), "resolveMapList: On"),
            ("ON", json!(true), "resolveMapList: ON"),
            ("n", json!(false), "resolveMapList: n"),
            ("N", json!(false), "resolveMapList: N"),
            ("no", json!(false), "resolveMapList: no"),
            ("No", json!(false), "resolveMapList: No"),
            ("NO", json!(false), "resolveMapList: NO"),
            ("false", json!(false), "resolveMapList: false"),
            ("False", json!(false), "resolveMapList: False"),
            ("FALSE", json!(false), "resolveMapList: FALSE"),
            ("off", json!(false), "resolveMapList: off"),
            ("Off", json!(false), "resolveMapList: Off"),
            ("OFF", json!(false), "resolveMapList: OFF"),
            ("yES", json!("yES"), "not in resolveMapList: a string"),
            ("tRUE", json!("tRUE"), "not in resolveMapList: a string"),
            ("oN", json!("oN"), "not in resolveMapList: a string"),
            // integers: underscores removed, then strconv.ParseInt(s, 0, 64)
            ("0", json!(0), "ParseInt base 0: 0"),
            ("42", json!(42), "ParseInt base 0: decimal"),
            ("0777", json!(511), "ParseInt base 0: a leading 0 is octal"),
            ("0644", json!(420), "ParseInt base 0: a leading 0 is octal"),
            ("-0777", json!(-511), "ParseInt: sign, then octal"),
            ("+0777", json!(511), "ParseInt: a + sign"),
            ("0o17", json!(15), "ParseInt base 0: 0o octal (Go 1.13)"),
            ("0O17", json!(15), "ParseInt base 0: 0O octal"),
            ("0x1F", json!(31), "ParseInt base 0: 0x hex"),
            ("0X1f", json!(31), "ParseInt base 0: 0X hex, either case"),
            ("-0x1F", json!(-31), "ParseInt: sign, then hex"),
            ("0b101", json!(5), "ParseInt base 0: 0b binary (Go 1.13)"),
            ("-0b101", json!(-5), "ParseInt: sign, then binary"),
            ("1_000", json!(1000), "resolve.go: underscores removed first"),
            ("0x_1F", json!(31), "resolve.go: underscores removed, even after a prefix"),
            ("1__0", json!(10), "resolve.go: every underscore removed"),
            ("9223372036854775807", json!(i64::MAX), "ParseInt: the largest int64"),
            ("-9223372036854775808", json!(i64::MIN), "ParseInt: the smallest int64"),
            ("18446744073709551615", json!(u64::MAX), "ParseUint after ParseInt: uint64"),
            ("0xFFFFFFFFFFFFFFFF", json!(u64::MAX), "ParseUint base 0: hex uint64"),
            ("+9223372036854775808", json!(9223372036854776000_u64), "ParseUint refuses a sign: the float rule; encoding/json writes 9223372036854776000"),
            ("18446744073709551616", json!(18446744073709551616.0_f64), "too large for ParseUint: the float rule"),
            // leading 0 that is not octal: falls through to the float rule
            ("08", json!(8), "ParseInt refuses 08 (octal); yamlStyleFloat + ParseFloat: 8"),
            ("0779", json!(779), "ParseInt refuses 0779; the float rule reads decimal 779"),
            ("0x", json!("0x"), "ParseUint: 0x with no digits is invalid; not a float"),
            ("0b2", json!("0b2"), "ParseInt: 2 is no binary digit; not a float"),
            ("0xG", json!("0xG"), "ParseInt: G is no hex digit"),
            ("0b+1", json!(1), "resolve.go's 0b fallback: ParseInt(\"+1\", 2, 64)"),
            ("0b-1", json!(-1), "resolve.go's 0b fallback: ParseInt(\"-1\", 2, 64)"),
            ("-0b-1", json!("-0b-1"), "resolve.go's -0b fallback: ParseInt(\"--1\", 2, 64) fails"),
            ("+", json!("+"), "a sign alone: no rule"),
            ("+-1", json!("+-1"), "ParseInt: one sign only"),
            // floats: yamlStyleFloat, ParseFloat; JSON as Go's encoding/json writes float64
            ("1.5", json!(1.5), "yamlStyleFloat"),
            ("-1.5", json!(-1.5), "yamlStyleFloat: signed"),
            ("1e3", json!(1000), "yamlStyleFloat; encoding/json writes float64 1000 as 1000"),
            ("1E+3", json!(1000), "yamlStyleFloat: E and a signed exponent"),
            ("1.", json!(1), "yamlStyleFloat: digits and a point"),
            ("1.0", json!(1), "encoding/json: an integral float has no fraction"),
            (".5", json!(0.5), "hint '.': ParseFloat"),
            ("-.5", json!(-0.5), "yamlStyleFloat: [-+]?\\.[0-9]+"),
            ("1_000.5", json!(1000.5), "underscores removed, then yamlStyleFloat"),
            (".5_0", json!(0.5), "hint '.': ParseFloat accepts underscores between digits"),
            ("._5", json!("._5"), "hint '.': Go's underscoreOK refuses _ after the point"),
            ("1e-7", json!(1e-7), "encoding/json: a fraction stays a float"),
            ("1e21", json!(1e21), "encoding/json: 1e21 and above in exponent form"),
            ("1e20", json!(1e20), "encoding/json writes 100000000000000000000 (as a float here: above u64)"),
            ("1e400", json!("1e400"), "ParseFloat: out of range, so a string"),
            ("1e-400", json!(0), "ParseFloat: an underflow is 0, not an error"),
            ("1.2.3", json!("1.2.3"), "not yamlStyleFloat: a string"),
            ("1e", json!("1e"), "not yamlStyleFloat: no exponent digits"),
            (".", json!("."), "hint '.': ParseFloat refuses a point alone"),
            ("1:20", json!("1:20"), "no base-60 numbers in go-yaml v2"),
            // non-finite floats: in resolveMapList, but JSON has no form for them
            (".inf", json!("refused"), "resolveMapList .inf; encoding/json: unsupported value"),
            ("-.Inf", json!("refused"), "resolveMapList -.Inf; encoding/json: unsupported value"),
            ("+.INF", json!("refused"), "resolveMapList +.INF; encoding/json: unsupported value"),
            (".NaN", json!("refused"), "resolveMapList .NaN; encoding/json: unsupported value"),
            (".nAn", json!(".nAn"), "not in resolveMapList, not ParseFloat: a string"),
            ("inf", json!("inf"), "hint 0 ('i'): a string"),
            // timestamps: go-yaml v2 decodes into interface{} as the string
            ("2001-12-14", json!("2001-12-14"), "decode.go: a timestamp keeps its text"),
            ("2001-12-14t21:59:43.10Z", json!("2001-12-14t21:59:43.10Z"), "decode.go: timestamp text"),
            ("2001-12-14  21:59:43", json!("2001-12-14  21:59:43"), "decode.go: timestamp text"),
            // strings
            ("0777a", json!("0777a"), "no rule: a string"),
            ("<<", json!("<<"), "hint 0: a string (merges only as a key)"),
            ("hello world", json!("hello world"), "hint 0: a string"),
        ];
        for (text, want, reference) in cases {
            let got = value_of(text);
            if want == "refused" {
                assert!(
                    got.as_ref()
                        .is_err_and(|e| e.contains("not a number JSON can carry")),
                    "input {text:?} ({reference}): got {got:?}"
                );
            } else {
                assert_eq!(got.as_ref(), Ok(want), "input {text:?} ({reference})");
            }
        }
    }

    #[test]
    fn quoted_block_and_tagged_scalars_follow_go_yaml_v2_decode() {
        #[rustfmt::skip]
        let cases: &[Case] = &[
            ("'0777'", json!("0777"), "decode.go scalar: untagged, not plain: a string"),
            ("\"yes\"", json!("yes"), "decode.go scalar: double-quoted: a string"),
            ("|\n  0777", json!("0777\n"), "decode.go scalar: a block scalar is a string"),
            (">-\n  on", json!("on"), "decode.go scalar: a folded block scalar is a string"),
            ("!!str 0777", json!("0777"), "resolve: any data is accepted as a !!str"),
            ("!!str yes", json!("yes"), "resolve: !!str"),
            ("!!int \"0777\"", json!(511), "resolve(!!int): a tag resolves quoted text too"),
            ("!!int 0x1F", json!(31), "resolve(!!int)"),
            ("!!float 3", json!(3), "resolve: an int is accepted as a !!float"),
            ("!!float '1.5'", json!(1.5), "resolve(!!float)"),
            ("!!bool yes", json!(true), "resolve(!!bool)"),
            ("!!null ''", json!(null), "resolve(!!null): the empty text"),
            ("!!timestamp 2001-12-14", json!("2001-12-14"), "resolve(!!timestamp), decode.go keeps the text"),
            ("!!timestamp 2001-12-14 21:59:43.10", json!("2001-12-14 21:59:43.10"), "allowedTimestampFormats: space-separated"),
            ("!!timestamp 2001-12-14   21:59:43", json!("2001-12-14   21:59:43"), "time.Parse: a run of spaces matches the layout's space"),
            ("!!timestamp 2001-1-2T3:04:05.123456789+07:00", json!("2001-1-2T3:04:05.123456789+07:00"), "one-digit fields, nine digits of fraction, a zone"),
            ("!!binary aGVsbG8=", json!("hello"), "decode.go: !!binary is base64-decoded"),
            ("!foo 0777", json!("0777"), "resolvableTag: an unknown tag leaves the text"),
            ("! 12", json!("12"), "resolvableTag: the non-specific tag ! leaves the text"),
        ];
        for (text, want, reference) in cases {
            assert_eq!(
                value_of(text).as_ref(),
                Ok(want),
                "input {text:?} ({reference})"
            );
        }
        #[rustfmt::skip]
        let refused: &[(&str, Refusal)] = &[
            (
                "!!int abc",
                Refusal::Tag {
                    found: "str",
                    text: "abc".into(),
                    tag: "int".into(),
                },
            ),
            (
                "!!int 1.5",
                Refusal::Tag {
                    found: "float",
                    text: "1.5".into(),
                    tag: "int".into(),
                },
            ),
            (
                "!!bool 1",
                Refusal::Tag {
                    found: "int",
                    text: "1".into(),
                    tag: "bool".into(),
                },
            ),
            (
                "!!null x",
                Refusal::Tag {
                    found: "str",
                    text: "x".into(),
                    tag: "null".into(),
                },
            ),
            (
                "!!float 18446744073709551615",
                Refusal::Tag {
                    found: "int",
                    text: "18446744073709551615".into(),
                    tag: "float".into(),
                },
            ),
            (
                "!!timestamp 2001-12-14 21:59:43.1234567890",
                Refusal::Tag {
                    found: "str",
                    text: "2001-12-14 21:59:43.1234567890".into(),
                    tag: "timestamp".into(),
                },
            ),
            (
                "!!timestamp 2001-12-14T21:59:43",
                Refusal::Tag {
                    found: "str",
                    text: "2001-12-14T21:59:43".into(),
                    tag: "timestamp".into(),
                },
            ),
            (
                "!!int 2001-12-14",
                Refusal::Tag {
                    found: "str",
                    text: "2001-12-14".into(),
                    tag: "int".into(),
                },
            ),
            (
                "!!timestamp 2001-02-30",
                Refusal::Tag {
                    found: "str",
                    text: "2001-02-30".into(),
                    tag: "timestamp".into(),
                },
            ),
            ("!!binary '*'", Refusal::Binary),
            (".inf", Refusal::NonFinite(".inf".into())),
        ];
        for (text, refusal) in refused {
            assert_eq!(
                value_of(text),
                Err(format!("t.yaml:1:6: {refusal}")),
                "input {text:?}"
            );
        }
    }

    #[test]
    fn a_block_scalar_ending_the_text_has_only_the_line_breaks_written() {
        // (text with no final line break, value of `a`, what libyaml (go-yaml v2) reads)
        #[rustfmt::skip]
        let cases: &[(&str, &str, &str)] = &[
            ("a: |\n  x", "x", "clip: the last line has no line break"),
            ("a: |\n  x\n  y", "x\ny", "clip: the last content line ends the text"),
            ("a: >\n  x\n  y", "x y", "folded, clip"),
            ("a: |+\n  x", "x", "keep: no line break was written"),
            ("a: |-\n  x", "x", "strip"),
            ("a: |\n  x\n\n  ", "x\n", "clip: a blank last line, the break after x clipped to"),
            ("a: |+\n  x\n\n  ", "x\n\n", "keep: the two line breaks written"),
            ("a: |\n  x\n   ", "x\n ", "clip: a last line of spaces deeper than the indentation is content"),
            ("a: |2\n   x\n   ", " x\n ", "clip: an explicit indentation"),
            ("a: !!str |\n  x", "x", "a tag before the header"),
            ("a: | # note |\n  x", "x", "a comment after the header"),
            ("a: |\n  x\n", "x\n", "terminated: the line break written"),
            ("a: |\n  x\n# c", "x\n", "a comment after the scalar ends the text"),
        ];
        for (text, want, reference) in cases {
            let got = parse(Path::new("t.yaml"), text).map(|d| d[0]["a"].clone());
            assert_eq!(got.ok(), Some(json!(want)), "text {text:?} ({reference})");
        }
    }

    #[test]
    fn keys_become_strings_as_sigs_k8s_io_yaml_makes_them() {
        #[rustfmt::skip]
        let cases: &[Case] = &[
            ("on", json!("true"), "convertToJSONableObject: bool key → \"true\""),
            ("no", json!("false"), "convertToJSONableObject: bool key → \"false\""),
            ("0777", json!("511"), "convertToJSONableObject: int key → strconv.Itoa"),
            ("1_000", json!("1000"), "int key"),
            ("1.5", json!("1.5"), "float key: FormatFloat(f, 'g', -1, 32)"),
            ("1e3", json!("1000"), "float key: 'g' writes 1000"),
            ("1e6", json!("1e+06"), "float key: 'g' uses %e from exponent 6"),
            ("123456.0", json!("123456"), "float key: %f below exponent 6"),
            ("1234567.0", json!("1.234567e+06"), "float key: %e at exponent 6"),
            ("0.0001", json!("0.0001"), "float key: %f down to exponent -4"),
            ("0.00001", json!("1e-05"), "float key: %e below exponent -4, two digits"),
            ("0.1", json!("0.1"), "float key: the shortest float32 digits"),
            ("16777217.0", json!("1.6777216e+07"), "float key: rounded to float32"),
            ("0.0", json!("0"), "float key: zero"),
            (".inf", json!(".inf"), "float key: +Inf is written .inf"),
            ("-.inf", json!("-.inf"), "float key: -Inf is written -.inf"),
            (".nan", json!(".nan"), "float key: NaN is written .nan"),
            ("'on'", json!("on"), "a quoted key is a string"),
            ("2001-12-14", json!("2001-12-14"), "a timestamp key keeps its text"),
        ];
        for (key, want, reference) in cases {
            let got = parse(Path::new("t.yaml"), &format!("{key}: v\n"))
                .map(|docs| docs[0].as_object().and_then(|m| m.keys().next().cloned()));
            let want = want.as_str().map(str::to_string);
            assert_eq!(got.ok().flatten(), want, "key {key:?} ({reference})");
        }
        #[rustfmt::skip]
        let refused: &[(&str, Refusal)] = &[
            ("~: v", Refusal::NullKey("~".into())),
            ("null: v", Refusal::NullKey("null".into())),
            ("18446744073709551615: v", Refusal::UintKey(u64::MAX)),
        ];
        for (text, refusal) in refused {
            let got = parse(Path::new("t.yaml"), text).map_err(|e| e.to_string());
            assert_eq!(got, Err(format!("t.yaml:1:1: {refusal}")), "input {text:?}");
        }
    }

    #[test]
    fn merge_keys_merge_as_go_yaml_v2_merges_into_a_map() {
        let base = "base: &b {a: 1, b: 2}\nother: &o {b: 3, c: 4}\n";
        #[rustfmt::skip]
        let cases: &[(&str, Value, &str)] = &[
            ("m: {<<: *b, c: 9}", json!({"a": 1, "b": 2, "c": 9}), "merge: a mapping alias"),
            ("m: {<<: *b, a: 9}", json!({"a": 9, "b": 2}), "a key after the merge overrides it"),
            ("m: {a: 9, <<: *b}", json!({"a": 1, "b": 2}), "go-yaml v2: the merge overrides keys before it"),
            ("m: {<<: [*b, *o]}", json!({"a": 1, "b": 2, "c": 4}), "a list: earlier maps win"),
            ("m: {<<: {x: 1}}", json!({"x": 1}), "an inline mapping"),
            ("m: {'<<': *b}", json!({"<<": {"a": 1, "b": 2}}), "a quoted << is a plain key"),
            ("m: {!!merge <<: *b}", json!({"a": 1, "b": 2}), "isMerge: the !!merge tag"),
        ];
        for (text, want, reference) in cases {
            let got = parse(Path::new("t.yaml"), &format!("{base}{text}\n"))
                .map(|docs| docs[0]["m"].clone())
                .map_err(|e| e.to_string());
            assert_eq!(got.as_ref(), Ok(want), "input {text:?} ({reference})");
        }
        let list = "l: &l [1]\n";
        for text in [
            "m: {<<: 1}",
            "m: {<<: *l}",
            "m: {<<: [*b, [1]]}",
            "m: {<<: ~}",
        ] {
            let got = parse(Path::new("t.yaml"), &format!("{base}{list}{text}\n"))
                .map_err(|e| e.to_string());
            assert!(
                got.as_ref()
                    .is_err_and(|e| e.ends_with(&Refusal::Merge.to_string())),
                "input {text:?}: {got:?}"
            );
        }
        // A key written twice is refused, merged or not.
        let got = parse(
            Path::new("t.yaml"),
            &format!("{base}m: {{a: 1, <<: *b, a: 2}}\n"),
        );
        assert!(
            matches!(&got, Err(Error::Yaml { line: 3, message, .. }) if message.contains("duplicated key")),
            "{got:?}"
        );
        // Parameter files keep YAML 1.2: `<<` is a key there.
        let doc = crate::document::Document::parse(
            Path::new("p.yaml"),
            &format!("{base}m: {{<<: *b}}\n"),
        )
        .unwrap();
        assert_eq!(doc.value()["m"], json!({"<<": {"a": 1, "b": 2}}));
    }

    #[test]
    fn streams_hold_documents_and_empty_ones_are_null() {
        let docs = parse(Path::new("s.yaml"), "a: 0777\n---\n---\n- on\n").unwrap();
        assert_eq!(docs, vec![json!({"a": 511}), Value::Null, json!([true])]);
        let err = parse(Path::new("s.yaml"), "a: 1\nb: [1, 2\n").unwrap_err();
        assert!(matches!(err, Error::Yaml { line: 3, .. }), "{err:?}");
    }

    #[test]
    fn to_yaml_quotes_every_string_kubernetes_would_read_as_something_else() {
        let strings = [
            "yes",
            "Yes",
            "on",
            "ON",
            "off",
            "y",
            "Y",
            "n",
            "N",
            "no",
            "true",
            "False",
            "~",
            "null",
            "Null",
            "",
            "0777",
            "08",
            "0779",
            "1_000",
            "0x1F",
            "0o17",
            "0b101",
            "0b+1",
            "0b-1",
            "+1",
            "-1",
            "1.",
            ".5",
            "1e3",
            "1E+3",
            ".inf",
            "-.Inf",
            ".NaN",
            "2001-12-14",
            "2001-12-14 21:59:43.10",
            "18446744073709551616",
            "1e400",
            "<<",
            "- x",
            "a: b",
            "#c",
            "x #c",
            "@x",
            "`x",
            "!x",
            "&x",
            "*x",
            "|",
            ">",
            "%x",
            "'",
            "\"",
            "\ttab",
            " lead",
            "trail ",
            "two\nlines",
            "two\nlines\n",
            "{",
            "[",
            "]",
            "}",
            ",",
            "?",
            "? x",
            "-",
            "--- x",
            "---",
            "...",
        ];
        for s in strings {
            let value = json!({"s": s, "list": [s]});
            let yaml = to_yaml(&value);
            let back = parse(Path::new("-"), &yaml).map_err(|e| e.to_string());
            assert_eq!(back, Ok(vec![value]), "string {s:?} printed as:\n{yaml}");
        }
        let numbers = json!({"i": 511, "neg": -3, "u": u64::MAX, "f": 1.5, "small": 1e-7,
            "big": 1e300, "t": true, "null": null, "empty": {}, "none": []});
        let yaml = to_yaml(&numbers);
        assert_eq!(
            parse(Path::new("-"), &yaml).unwrap(),
            vec![numbers],
            "{yaml}"
        );
    }

    #[test]
    fn printable_text_reads_back_as_the_objects_inside_a_stream() {
        let read = |text: &str| -> Vec<Value> {
            parse(Path::new("-"), text)
                .unwrap()
                .into_iter()
                .filter(|d| !d.is_null())
                .collect()
        };
        // (rendered text, what it must print as)
        #[rustfmt::skip]
        let cases: &[(&str, Printable)] = &[
            ("a: 1\n", Printable::Rendered("a: 1\n".into())),
            ("a: 1", Printable::Rendered("a: 1\n".into())),
            ("", Printable::Rendered("".into())),
            ("\n\na: 1\n\n", Printable::Rendered("\n\na: 1\n\n".into())),
            // a block scalar that ends the text with no line break: alone, it has none
            ("a: |\n  x", Printable::Stripped("a: |-\n  x\n".into())),
            ("a:\n  b: >\n    x\n    y", Printable::Stripped("a:\n  b: >-\n    x\n    y\n".into())),
            ("a: |+\n  x", Printable::Stripped("a: |-\n  x\n".into())),
            ("a: |2+\n   x", Printable::Stripped("a: |-2\n   x\n".into())),
            ("a: !!str |\n  x", Printable::Stripped("a: !!str |-\n  x\n".into())),
            ("a: |-\n  x", Printable::Rendered("a: |-\n  x\n".into())),
            // keep chomping with trailing blank lines keeps them
            ("a: |+\n  x\n\n", Printable::Rendered("a: |+\n  x\n\n".into())),
            // a directive is not allowed after `---`: the objects are printed
            ("%YAML 1.2\n---\na: 'yes'\n", Printable::Objects("a: \"yes\"\n".into())),
        ];
        for (text, want) in cases {
            let objects = read(text);
            let got = printable(text, &objects);
            assert_eq!(&got, want, "text {text:?}");
            let stream = format!("---\n{}---\n{}", got.text(), got.text());
            let twice: Vec<Value> = objects.iter().chain(&objects).cloned().collect();
            assert_eq!(read(&stream), twice, "text {text:?} twice in a stream");
        }
    }
}
