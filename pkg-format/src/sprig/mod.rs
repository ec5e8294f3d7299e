//! Go template functions of [sprig] v2.22.0 (`sprig.TxtFuncMap()`, a subset) plus
//! KUDO's `toYaml`, for the `gotmpl` crate.
//!
//! This module follows Masterminds/sprig v2.22.0 and the libraries that KUDO (the
//! consumer of these templates) pins next to it: Masterminds/semver v1.5.0,
//! Masterminds/goutils v1.1.0 and gopkg.in/yaml.v2 v2.3.0, plus the Go standard
//! library (`strconv`, `fmt`, `encoding/json`, `encoding/base64`, …) as of Go 1.16.
//! It was written from reading that Go source; no Go code is copied.
//!
//! [`funcs`] returns the implemented functions; [`SPRIG_NAMES`] lists every name of
//! sprig v2.22.0's `TxtFuncMap`, so a caller can tell "a sprig function this port
//! does not implement" from "no such function".
//!
//! Behaviour notes (where the port cannot, or deliberately does not, match Go):
//! * Argument checking mirrors Go's `text/template`: a `string` parameter refuses a
//!   non-string (`wrong type for value; expected string; got int`), an `int`
//!   parameter refuses strings and floats, wrong arity gives
//!   `wrong number of args for NAME: want N got M`, and errors or panics inside a
//!   function surface as `error calling NAME: …`. gotmpl does not tell literals
//!   from data, so Go's literal-specific messages (`expected integer; found "2"`)
//!   are reported in the data form, and a `nil` literal is treated like nil data
//!   (`got interface {}`; Go passes a nil map to a map parameter, so
//!   `hasKey nil "a"` is `false` in Go and an error here).
//!   `gotmpl::Value::Uint` (what serde produces for positive JSON integers) is
//!   treated as Go's `int` when it fits in `i64` (for `int` parameters, `deepEqual`,
//!   `has`, `uniq`, `without`, `typeOf`, `kindOf`).
//! * Numeric coercion is sprig v2.22's own `toInt64`/`toFloat64` (decimal
//!   `strconv.ParseInt(s, 10, 64)` / `strconv.ParseFloat`, 0 on error), which is
//!   what v2.22 uses; spf13/cast only arrived in sprig v3.
//! * `semverCompare` uses Masterminds/semver **v1.5.0** rules, as sprig v2.22 does:
//!   AND is written with a comma (`>= 1.0, < 2.0`); a space-separated AND such as
//!   `>=1.0 <2.0` is an `improper constraint` error, exactly as in Go.
//! * `semver` returns a map with the fields `Major`, `Minor`, `Patch` (ints),
//!   `Prerelease`, `Metadata`, `Original` and `String`, standing in for the Go
//!   `*Version` methods of those names; methods taking arguments (`Compare`, …) are
//!   not available, and printing the value shows the map, not `1.2.3`.
//! * `set` and `unset` return the updated dictionary but cannot mutate the
//!   caller's map in place (gotmpl values are immutable): `{{ $_ := set $d "k" 1 }}`
//!   leaves `$d` unchanged; write `{{ $d = set $d "k" 1 }}` instead.
//! * `keys` returns each dictionary's keys in sorted order (Go: random order);
//!   `values` returns values in key order (Go: random order).
//! * `toYaml` is KUDO's `yaml.Marshal(v)` verbatim, **including the trailing
//!   newline** (KUDO does not trim it; Helm's `toYaml` does). Output matches
//!   yaml.v2 v2.3.0, which does not fold long lines (v2.2.x folded plain and
//!   quoted scalars at 80 columns; see `YAML_BEST_WIDTH`). Map keys are ordered
//!   with yaml.v2's "natural" key order.
//! * Case mapping and character classes outside ASCII (`upper`, `lower`, `title`,
//!   `swapcase`, `%q` printability in `quote`) use Rust's Unicode tables, which
//!   differ from Go's in rare cases (characters with only multi-character
//!   mappings are left unchanged; unassigned code points are treated as
//!   printable).
//! * `typeOf`/`kindOf` see gotmpl's value kinds: `int`, `float64`, `string`, `bool`,
//!   `[]interface {}`, `map[string]interface {}`, so a sprig result typed `int64`,
//!   `[]string` or `map[string]string` in Go reports the generic name here.
//! * Floats returned by these functions are printed by gotmpl itself, which does
//!   not use Go's `%v` format for large or small magnitudes (`{{ float64 "1e6" }}`
//!   prints `1000000`; Go prints `1e+06`); inside `toString`, `quote`, `toJson`,
//!   `toYaml`, … this module formats floats as Go does.
//! * Functions whose Go result is not valid UTF-8 (`trunc`/`substr` cutting a
//!   character, `b64dec` of binary data, …) return the lossy UTF-8 conversion.
//!
//! Not implemented (listed in [`SPRIG_NAMES`] only): the date functions, random
//! strings and `uuidv4`, `shuffle`, `snakecase`/`camelcase`/`kebabcase`, the regex
//! functions, `merge`/`mergeOverwrite`, the certificate/crypto generators,
//! `encryptAES`/`decryptAES`, `derivePassword`, `getHostByName`, `urlParse`/`urlJoin`,
//! and the functions KUDO deletes from its map (`env`, `expandenv`, `base`, `dir`,
//! `clean`, `ext`, `isAbs`).
//!
//! The tests' expected outputs were produced by Go itself (text/template with the
//! pinned sprig, semver, goutils and yaml.v2 sources), and the port was also
//! compared with that Go build on several thousand generated inputs.
//!
//! [sprig]: https://github.com/Masterminds/sprig

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Arc;

use base64::Engine as _;
use gotmpl::{FuncMap, Result, TemplateError, Value};

/// Every function name of sprig v2.22.0's `TxtFuncMap` (150 names), in the order of
/// sprig's `genericMap`. Names not returned by [`funcs`] are sprig functions this
/// port does not implement.
pub const SPRIG_NAMES: &[&str] = &[
    "hello",
    "date",
    "date_in_zone",
    "date_modify",
    "now",
    "htmlDate",
    "htmlDateInZone",
    "dateInZone",
    "dateModify",
    "ago",
    "toDate",
    "unixEpoch",
    "abbrev",
    "abbrevboth",
    "trunc",
    "trim",
    "upper",
    "lower",
    "title",
    "untitle",
    "substr",
    "repeat",
    "trimall",
    "trimAll",
    "trimSuffix",
    "trimPrefix",
    "nospace",
    "initials",
    "randAlphaNum",
    "randAlpha",
    "randAscii",
    "randNumeric",
    "swapcase",
    "shuffle",
    "snakecase",
    "camelcase",
    "kebabcase",
    "wrap",
    "wrapWith",
    "contains",
    "hasPrefix",
    "hasSuffix",
    "quote",
    "squote",
    "cat",
    "indent",
    "nindent",
    "replace",
    "plural",
    "sha1sum",
    "sha256sum",
    "adler32sum",
    "toString",
    "atoi",
    "int64",
    "int",
    "float64",
    "toDecimal",
    "split",
    "splitList",
    "splitn",
    "toStrings",
    "until",
    "untilStep",
    "add1",
    "add",
    "sub",
    "div",
    "mod",
    "mul",
    "biggest",
    "max",
    "min",
    "ceil",
    "floor",
    "round",
    "join",
    "sortAlpha",
    "default",
    "empty",
    "coalesce",
    "compact",
    "deepCopy",
    "toJson",
    "toPrettyJson",
    "ternary",
    "typeOf",
    "typeIs",
    "typeIsLike",
    "kindOf",
    "kindIs",
    "deepEqual",
    "env",
    "expandenv",
    "getHostByName",
    "base",
    "dir",
    "clean",
    "ext",
    "isAbs",
    "b64enc",
    "b64dec",
    "b32enc",
    "b32dec",
    "tuple",
    "list",
    "dict",
    "set",
    "unset",
    "hasKey",
    "pluck",
    "keys",
    "pick",
    "omit",
    "merge",
    "mergeOverwrite",
    "values",
    "append",
    "push",
    "prepend",
    "first",
    "rest",
    "last",
    "initial",
    "reverse",
    "uniq",
    "without",
    "has",
    "slice",
    "concat",
    "genPrivateKey",
    "derivePassword",
    "buildCustomCert",
    "genCA",
    "genSelfSignedCert",
    "genSignedCert",
    "encryptAES",
    "decryptAES",
    "uuidv4",
    "semver",
    "semverCompare",
    "fail",
    "regexMatch",
    "regexFindAll",
    "regexFind",
    "regexReplaceAll",
    "regexReplaceAllLiteral",
    "regexSplit",
    "urlParse",
    "urlJoin",
];

type Map = BTreeMap<Arc<str>, Value>;
type Impl = fn(&str, &[Value]) -> Result<Value>;

/// The implemented functions, in sprig's order, each with its Go implementation.
const TABLE: &[(&str, Impl)] = &[
    ("hello", f_hello),
    ("abbrev", f_abbrev),
    ("abbrevboth", f_abbrevboth),
    ("trunc", f_trunc),
    ("trim", f_trim),
    ("upper", f_upper),
    ("lower", f_lower),
    ("title", f_title),
    ("untitle", f_untitle),
    ("substr", f_substr),
    ("repeat", f_repeat),
    ("trimall", f_trim_all),
    ("trimAll", f_trim_all),
    ("trimSuffix", f_trim_suffix),
    ("trimPrefix", f_trim_prefix),
    ("nospace", f_nospace),
    ("initials", f_initials),
    ("swapcase", f_swapcase),
    ("wrap", f_wrap),
    ("wrapWith", f_wrap_with),
    ("contains", f_contains),
    ("hasPrefix", f_has_prefix),
    ("hasSuffix", f_has_suffix),
    ("quote", f_quote),
    ("squote", f_squote),
    ("cat", f_cat),
    ("indent", f_indent),
    ("nindent", f_nindent),
    ("replace", f_replace),
    ("plural", f_plural),
    ("sha1sum", f_sha1sum),
    ("sha256sum", f_sha256sum),
    ("adler32sum", f_adler32sum),
    ("toString", f_to_string),
    ("atoi", f_atoi),
    ("int64", f_int64),
    ("int", f_int64),
    ("float64", f_float64),
    ("toDecimal", f_to_decimal),
    ("split", f_split),
    ("splitList", f_split_list),
    ("splitn", f_splitn),
    ("toStrings", f_to_strings),
    ("until", f_until),
    ("untilStep", f_until_step),
    ("add1", f_add1),
    ("add", f_add),
    ("sub", f_sub),
    ("div", f_div),
    ("mod", f_mod),
    ("mul", f_mul),
    ("biggest", f_max),
    ("max", f_max),
    ("min", f_min),
    ("ceil", f_ceil),
    ("floor", f_floor),
    ("round", f_round),
    ("join", f_join),
    ("sortAlpha", f_sort_alpha),
    ("default", f_default),
    ("empty", f_empty),
    ("coalesce", f_coalesce),
    ("compact", f_compact),
    ("deepCopy", f_deep_copy),
    ("toJson", f_to_json),
    ("toPrettyJson", f_to_pretty_json),
    ("ternary", f_ternary),
    ("typeOf", f_type_of),
    ("typeIs", f_type_is),
    ("typeIsLike", f_type_is_like),
    ("kindOf", f_kind_of),
    ("kindIs", f_kind_is),
    ("deepEqual", f_deep_equal),
    ("b64enc", f_b64enc),
    ("b64dec", f_b64dec),
    ("b32enc", f_b32enc),
    ("b32dec", f_b32dec),
    ("tuple", f_list),
    ("list", f_list),
    ("dict", f_dict),
    ("set", f_set),
    ("unset", f_unset),
    ("hasKey", f_has_key),
    ("pluck", f_pluck),
    ("keys", f_keys),
    ("pick", f_pick),
    ("omit", f_omit),
    ("values", f_values),
    ("append", f_push),
    ("push", f_push),
    ("prepend", f_prepend),
    ("first", f_first),
    ("rest", f_rest),
    ("last", f_last),
    ("initial", f_initial),
    ("reverse", f_reverse),
    ("uniq", f_uniq),
    ("without", f_without),
    ("has", f_has),
    ("slice", f_slice),
    ("concat", f_concat),
    ("semver", f_semver),
    ("semverCompare", f_semver_compare),
    ("fail", f_fail),
    ("toYaml", f_to_yaml),
];

/// Sprig's functions (the subset described in the module docs) plus KUDO's
/// `toYaml`, keyed by name.
pub fn funcs() -> FuncMap {
    let mut m = FuncMap::new();
    for &(name, f) in TABLE {
        m.insert(
            name.to_string(),
            Arc::new(move |args: &[Value]| f(name, args)),
        );
    }
    m
}

// ---------------------------------------------------------------------------
// Errors and argument checking (Go text/template's evalCall / validateType).
// ---------------------------------------------------------------------------

fn exec_err(msg: impl Into<String>) -> TemplateError {
    TemplateError::Exec(msg.into())
}

/// An error returned (or a panic raised) by the Go function: text/template reports
/// it as `error calling NAME: ERR`.
fn call_err(name: &str, msg: impl std::fmt::Display) -> TemplateError {
    exec_err(format!("error calling {name}: {msg}"))
}

/// The panic a nil `interface{}` causes in sprig's `reflect.TypeOf(x).Kind()`.
fn nil_deref(name: &str) -> TemplateError {
    call_err(
        name,
        "runtime error: invalid memory address or nil pointer dereference",
    )
}

fn want(name: &str, a: &[Value], n: usize) -> Result<()> {
    if a.len() != n {
        return Err(exec_err(format!(
            "wrong number of args for {name}: want {n} got {}",
            a.len()
        )));
    }
    Ok(())
}

fn want_min(name: &str, a: &[Value], n: usize) -> Result<()> {
    if a.len() < n {
        return Err(exec_err(format!(
            "wrong number of args for {name}: want at least {n} got {}",
            a.len()
        )));
    }
    Ok(())
}

fn wrong_type(name: &str, expected: &str, got: &Value) -> TemplateError {
    let got = match got {
        Value::Nil => "interface {}",
        other => go_type_name(other),
    };
    exec_err(format!(
        "at <{name}>: wrong type for value; expected {expected}; got {got}"
    ))
}

fn arg_str<'a>(name: &str, v: &'a Value) -> Result<&'a str> {
    match v {
        Value::String(s) => Ok(s),
        other => Err(wrong_type(name, "string", other)),
    }
}

fn arg_int(name: &str, v: &Value) -> Result<i64> {
    match v {
        Value::Int(i) => Ok(*i),
        Value::Uint(u) if *u <= i64::MAX as u64 => Ok(*u as i64),
        other => Err(wrong_type(name, "int", other)),
    }
}

fn arg_float(name: &str, v: &Value) -> Result<f64> {
    match v {
        Value::Float(f) => Ok(*f),
        // an integer constant is accepted for a float64 parameter
        Value::Int(i) => Ok(*i as f64),
        Value::Uint(u) => Ok(*u as f64),
        other => Err(wrong_type(name, "float64", other)),
    }
}

fn arg_bool(name: &str, v: &Value) -> Result<bool> {
    match v {
        Value::Bool(b) => Ok(*b),
        other => Err(wrong_type(name, "bool", other)),
    }
}

fn arg_map<'a>(name: &str, v: &'a Value) -> Result<&'a Map> {
    match v {
        Value::Map(m) => Ok(m),
        other => Err(wrong_type(name, "map[string]interface {}", other)),
    }
}

fn string(s: impl Into<Arc<str>>) -> Value {
    Value::String(s.into())
}

fn list(v: Vec<Value>) -> Value {
    Value::List(v.into())
}

fn map_value(m: Map) -> Value {
    Value::Map(Arc::new(m))
}

/// Bytes that Go would keep as a (possibly invalid UTF-8) string.
fn lossy(b: &[u8]) -> Value {
    string(String::from_utf8_lossy(b).into_owned())
}

/// `reflect.DeepEqual` on template values. `Value::Uint` counts as Go's `int` when
/// it fits in `i64` (serde's form of positive integers).
fn deep_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Int(i), Value::Uint(u)) | (Value::Uint(u), Value::Int(i)) => {
            *u <= i64::MAX as u64 && *i == *u as i64
        }
        (Value::List(x), Value::List(y)) => {
            x.len() == y.len() && x.iter().zip(y.iter()).all(|(p, q)| deep_equal(p, q))
        }
        (Value::Map(x), Value::Map(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| deep_equal(v, w)))
        }
        _ => a == b,
    }
}

/// `fmt.Sprintf("%T", v)`.
fn go_type_name(v: &Value) -> &'static str {
    match v {
        Value::Nil => "<nil>",
        Value::Bool(_) => "bool",
        Value::Int(_) => "int",
        Value::Uint(u) => {
            if *u <= i64::MAX as u64 {
                "int"
            } else {
                "uint64"
            }
        }
        Value::Float(_) => "float64",
        Value::String(_) => "string",
        Value::List(_) => "[]interface {}",
        Value::Map(_) => "map[string]interface {}",
        _ => "func()",
    }
}

/// `reflect.ValueOf(v).Kind().String()`.
fn go_kind_name(v: &Value) -> &'static str {
    match v {
        Value::Nil => "invalid",
        Value::List(_) => "slice",
        Value::Map(_) => "map",
        Value::String(_) => "string",
        Value::Bool(_) | Value::Int(_) | Value::Uint(_) | Value::Float(_) => go_type_name(v),
        _ => "func",
    }
}

// ---------------------------------------------------------------------------
// Go formatting helpers: fmt's %v, strconv.FormatFloat, strconv.Quote.
// ---------------------------------------------------------------------------

/// `fmt.Sprintf("%v", v)`.
fn fmt_v(v: &Value) -> String {
    let mut out = String::new();
    write_v(&mut out, v);
    out
}

fn write_v(out: &mut String, v: &Value) {
    match v {
        Value::Nil => out.push_str("<nil>"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Int(i) => {
            let _ = write!(out, "{i}");
        }
        Value::Uint(u) => {
            let _ = write!(out, "{u}");
        }
        Value::Float(f) => out.push_str(&format_float(*f, b'g')),
        Value::String(s) => out.push_str(s),
        Value::List(l) => {
            out.push('[');
            for (i, item) in l.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                write_v(out, item);
            }
            out.push(']');
        }
        Value::Map(m) => {
            out.push_str("map[");
            for (i, (k, item)) in m.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                out.push_str(k);
                out.push(':');
                write_v(out, item);
            }
            out.push(']');
        }
        other => {
            let _ = write!(out, "{other}");
        }
    }
}

/// sprig's `strval`: strings as they are, everything else through `%v`.
fn strval(v: &Value) -> String {
    match v {
        Value::String(s) => s.to_string(),
        other => fmt_v(other),
    }
}

/// Shortest decimal digits of a finite `f > 0` that round-trip, with the
/// decimal point position: `f = 0.DIGITS × 10^dp` (strconv's shortest mode).
fn shortest_digits(f: f64) -> (Vec<u8>, i32) {
    let e = format!("{f:e}");
    let (mant, exp) = e.split_once('e').unwrap_or((&e, "0"));
    let digits: Vec<u8> = mant.bytes().filter(u8::is_ascii_digit).collect();
    let exp: i32 = exp.parse().unwrap_or(0);
    (digits, exp + 1)
}

/// `strconv.FormatFloat(f, verb, -1, 64)` for verb `g`, `e` or `f`.
fn format_float(f: f64, verb: u8) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "+Inf" } else { "-Inf" }.into();
    }
    let mut out = String::new();
    if f.is_sign_negative() {
        out.push('-');
    }
    let a = f.abs();
    let (digits, dp) = if a == 0.0 {
        (vec![b'0'], 1)
    } else {
        shortest_digits(a)
    };
    let nd = digits.len() as i32;
    let use_e = match verb {
        b'e' => true,
        b'f' => false,
        _ => {
            let exp = dp - 1;
            !(-4..6).contains(&exp)
        }
    };
    if use_e {
        out.push(digits[0] as char);
        if nd > 1 {
            out.push('.');
            out.extend(digits[1..].iter().map(|&d| d as char));
        }
        let exp = if a == 0.0 { 0 } else { dp - 1 };
        let _ = write!(out, "e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs());
    } else {
        if dp > 0 {
            for i in 0..dp {
                out.push(digits.get(i as usize).map_or('0', |&d| d as char));
            }
        } else {
            out.push('0');
        }
        let prec = (nd - dp).max(0);
        if prec > 0 {
            out.push('.');
            for i in 0..prec {
                let pos = dp + i;
                let d = if pos >= 0 && pos < nd {
                    digits[pos as usize] as char
                } else {
                    '0'
                };
                out.push(d);
            }
        }
    }
    out
}

/// Go's `strconv.IsPrint`, approximated with Rust's Unicode tables.
fn go_is_print(c: char) -> bool {
    let u = c as u32;
    if u < 0x80 {
        return (0x20..0x7f).contains(&u);
    }
    if c.is_control() || c.is_whitespace() {
        return false;
    }
    !matches!(u,
        0xAD | 0x600..=0x605 | 0x61C | 0x6DD | 0x70F | 0x8E2 | 0x180E
        | 0x200B..=0x200F | 0x202A..=0x202E | 0x2060..=0x2064 | 0x2066..=0x206F
        | 0xFEFF | 0xFFF9..=0xFFFB | 0x110BD | 0x110CD | 0x13430..=0x13438
        | 0x1BCA0..=0x1BCA3 | 0x1D173..=0x1D17A | 0xE0001 | 0xE0020..=0xE007F
        | 0xE000..=0xF8FF | 0xF0000..=0x10FFFF | 0xFDD0..=0xFDEF)
        && (u & 0xFFFE) != 0xFFFE
}

/// `strconv.Quote` (fmt's `%q` of a string).
fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        if c == '"' || c == '\\' {
            out.push('\\');
            out.push(c);
            continue;
        }
        if go_is_print(c) {
            out.push(c);
            continue;
        }
        let u = c as u32;
        match c {
            '\x07' => out.push_str("\\a"),
            '\x08' => out.push_str("\\b"),
            '\x0c' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\x0b' => out.push_str("\\v"),
            _ if u < 0x20 || u == 0x7f => {
                let _ = write!(out, "\\x{u:02x}");
            }
            _ if u < 0x10000 => {
                let _ = write!(out, "\\u{u:04x}");
            }
            _ => {
                let _ = write!(out, "\\U{u:08x}");
            }
        }
    }
    out.push('"');
    out
}

// ---------------------------------------------------------------------------
// strconv parsing.
// ---------------------------------------------------------------------------

/// strconv's `underscoreOK`: underscores only between digits (or after a base prefix).
fn underscore_ok(s: &str) -> bool {
    let b = s.as_bytes();
    let b = match b.first() {
        Some(b'+' | b'-') => &b[1..],
        _ => b,
    };
    let mut saw = b'^';
    let mut i = 0;
    let mut hex = false;
    if b.len() >= 2 && b[0] == b'0' && matches!(b[1].to_ascii_lowercase(), b'b' | b'o' | b'x') {
        i = 2;
        saw = b'0';
        hex = b[1].eq_ignore_ascii_case(&b'x');
    }
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_digit() || (hex && c.is_ascii_hexdigit()) {
            saw = b'0';
        } else if c == b'_' {
            if saw != b'0' {
                return false;
            }
            saw = b'_';
        } else {
            if saw == b'_' {
                return false;
            }
            saw = b'!';
        }
        i += 1;
    }
    saw != b'_'
}

/// `strconv.ParseFloat(s, 64)`; `None` on a syntax or range error.
fn parse_float(s: &str) -> Option<f64> {
    let b = s.as_bytes();
    // special values: [+-]inf, [+-]infinity, nan (case-insensitive)
    {
        let (sign, rest) = match b.first() {
            Some(b'+') => (1.0, &s[1..]),
            Some(b'-') => (-1.0, &s[1..]),
            _ => (1.0, s),
        };
        let l = rest.to_ascii_lowercase();
        if l == "inf" || l == "infinity" {
            return Some(sign * f64::INFINITY);
        }
        if l == "nan" && rest.len() == s.len() {
            return Some(f64::NAN);
        }
    }
    let mut i = 0;
    if matches!(b.first(), Some(b'+' | b'-')) {
        i = 1;
    }
    let neg = b.first() == Some(&b'-');
    let hex = b.len() > i + 2 && b[i] == b'0' && b[i + 1].eq_ignore_ascii_case(&b'x');
    if hex {
        return parse_hex_float(&s[i + 2..], neg);
    }
    let mut saw_digits = false;
    let mut saw_dot = false;
    let mut underscores = false;
    while i < b.len() {
        match b[i] {
            b'_' => underscores = true,
            b'.' if !saw_dot => saw_dot = true,
            c if c.is_ascii_digit() => saw_digits = true,
            _ => break,
        }
        i += 1;
    }
    if !saw_digits {
        return None;
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
            i += 1;
        }
        if i >= b.len() || !b[i].is_ascii_digit() {
            return None;
        }
        while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'_') {
            underscores |= b[i] == b'_';
            i += 1;
        }
    }
    if i != b.len() || (underscores && !underscore_ok(s)) {
        return None;
    }
    let clean: String = s.chars().filter(|&c| c != '_').collect();
    let f: f64 = clean.parse().ok()?;
    if f.is_infinite() {
        return None; // ErrRange
    }
    Some(f)
}

/// The hexadecimal form of `strconv.ParseFloat` (`0x1.8p3`); the `p` exponent is
/// required. Rounding is exact only for mantissas of at most 53 bits.
fn parse_hex_float(s: &str, neg: bool) -> Option<f64> {
    let b = s.as_bytes();
    let mut mant: f64 = 0.0;
    let mut i = 0;
    let mut saw_digits = false;
    let mut saw_dot = false;
    let mut frac_digits = 0i32;
    while i < b.len() {
        let c = b[i];
        if c == b'_' {
        } else if c == b'.' && !saw_dot {
            saw_dot = true;
        } else if let Some(d) = (c as char).to_digit(16) {
            saw_digits = true;
            mant = mant * 16.0 + f64::from(d);
            if saw_dot {
                frac_digits += 1;
            }
        } else {
            break;
        }
        i += 1;
    }
    if !saw_digits || i >= b.len() || !b[i].eq_ignore_ascii_case(&b'p') {
        return None;
    }
    i += 1;
    let exp_str = &s[i..];
    let exp: i32 = exp_str.replace('_', "").parse().ok()?;
    let full = if neg {
        format!("-0x{s}")
    } else {
        format!("0x{s}")
    };
    if full.contains('_') && !underscore_ok(&full) {
        return None;
    }
    let f = mant * 2f64.powi(exp - 4 * frac_digits);
    if f.is_infinite() {
        return None;
    }
    Some(if neg { -f } else { f })
}

/// `strconv.ParseUint(s, 0, 64)`-style syntax check and value for an unsigned
/// body with Go's base prefixes (`0x`, `0o`, `0b`, leading `0` for octal).
fn parse_uint_base0(s: &str) -> Option<u64> {
    if s.is_empty() {
        return None;
    }
    let b = s.as_bytes();
    let (base, digits) = if b[0] == b'0' {
        if b.len() >= 3 && b[1].eq_ignore_ascii_case(&b'b') {
            (2, &s[2..])
        } else if b.len() >= 3 && b[1].eq_ignore_ascii_case(&b'o') {
            (8, &s[2..])
        } else if b.len() >= 3 && b[1].eq_ignore_ascii_case(&b'x') {
            (16, &s[2..])
        } else {
            (8, &s[1..])
        }
    } else {
        (10, s)
    };
    if s.contains('_') && !underscore_ok(s) {
        return None;
    }
    let mut n: u64 = 0;
    for c in digits.chars() {
        if c == '_' {
            continue;
        }
        let d = c.to_digit(base)?;
        n = n.checked_mul(u64::from(base))?.checked_add(u64::from(d))?;
    }
    Some(n)
}

/// Whether `strconv.ParseInt(s, 0, 64)` or `strconv.ParseUint(s, 0, 64)` accepts `s`.
fn is_go_int_base0(s: &str) -> bool {
    let (sign, body) = match s.as_bytes().first() {
        Some(b'+') => (1, &s[1..]),
        Some(b'-') => (-1, &s[1..]),
        _ => (0, s),
    };
    match parse_uint_base0(body) {
        None => false,
        Some(n) => match sign {
            0 => true,
            1 => n <= i64::MAX as u64,
            _ => n <= 1u64 << 63,
        },
    }
}

// ---------------------------------------------------------------------------
// sprig numeric conversions (numeric.go).
// ---------------------------------------------------------------------------

/// Go's `int64(f)` conversion as amd64 performs it (out of range and NaN give
/// the minimum int64).
fn f64_to_i64(f: f64) -> i64 {
    // 2^63 is exactly representable; every finite f64 in [-2^63, 2^63) converts.
    const LIMIT: f64 = 9_223_372_036_854_775_808.0;
    if (-LIMIT..LIMIT).contains(&f) {
        f as i64
    } else {
        i64::MIN
    }
}

/// sprig's `toInt64`.
fn to_int64(v: &Value) -> i64 {
    match v {
        Value::String(s) => s.parse::<i64>().unwrap_or(0),
        Value::Int(i) => *i,
        Value::Uint(u) => i64::try_from(*u).unwrap_or(i64::MAX),
        Value::Float(f) => f64_to_i64(*f),
        Value::Bool(b) => i64::from(*b),
        _ => 0,
    }
}

/// sprig's `toFloat64`.
fn to_float64(v: &Value) -> f64 {
    match v {
        Value::String(s) => parse_float(s).unwrap_or(0.0),
        Value::Int(i) => *i as f64,
        Value::Uint(u) => *u as f64,
        Value::Float(f) => *f,
        Value::Bool(b) => f64::from(u8::from(*b)),
        _ => 0.0,
    }
}

/// sprig's `empty` (adapted from text/template's `isTrue`).
fn empty(v: &Value) -> bool {
    match v {
        Value::Nil => true,
        Value::Bool(b) => !b,
        Value::Int(i) => *i == 0,
        Value::Uint(u) => *u == 0,
        Value::Float(f) => *f == 0.0,
        Value::String(s) => s.is_empty(),
        Value::List(l) => l.is_empty(),
        Value::Map(m) => m.is_empty(),
        _ => false,
    }
}

// ---------------------------------------------------------------------------
// Strings (strings.go, goutils).
// ---------------------------------------------------------------------------

fn f_hello(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 0)?;
    Ok(string("Hello!"))
}

/// goutils `AbbreviateFull` (byte based); `None` is its error (sprig then uses "").
fn abbreviate_full(s: &[u8], offset: i64, max_width: i64) -> Option<Vec<u8>> {
    if s.is_empty() {
        return Some(Vec::new());
    }
    if max_width < 4 {
        return None;
    }
    let len = s.len() as i64;
    if len <= max_width {
        return Some(s.to_vec());
    }
    let mut offset = offset.min(len);
    if len - offset < max_width - 3 {
        offset = len - (max_width - 3);
    }
    if offset <= 4 {
        let mut out = s[..(max_width - 3) as usize].to_vec();
        out.extend_from_slice(b"...");
        return Some(out);
    }
    if max_width < 7 {
        return None;
    }
    let mut out = b"...".to_vec();
    if offset + max_width - 3 < len {
        out.extend(abbreviate_full(&s[offset as usize..], 0, max_width - 3).unwrap_or_default());
    } else {
        out.extend_from_slice(&s[(len - (max_width - 3)) as usize..]);
    }
    Some(out)
}

fn f_abbrev(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 2)?;
    let width = arg_int(name, &a[0])?;
    let s = arg_str(name, &a[1])?;
    if width < 4 {
        return Ok(string(s));
    }
    Ok(lossy(
        &abbreviate_full(s.as_bytes(), 0, width).unwrap_or_default(),
    ))
}

fn f_abbrevboth(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 3)?;
    let left = arg_int(name, &a[0])?;
    let right = arg_int(name, &a[1])?;
    let s = arg_str(name, &a[2])?;
    if right < 4 || (left > 0 && right < 7) {
        return Ok(string(s));
    }
    Ok(lossy(
        &abbreviate_full(s.as_bytes(), left, right).unwrap_or_default(),
    ))
}

/// Go's message for a string slice expression out of range.
fn slice_panic(name: &str, expr: String) -> TemplateError {
    call_err(
        name,
        format!("runtime error: slice bounds out of range {expr}"),
    )
}

fn f_trunc(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 2)?;
    let c = arg_int(name, &a[0])?;
    let s = arg_str(name, &a[1])?;
    if s.len() as i64 <= c {
        return Ok(string(s));
    }
    if c < 0 {
        return Err(slice_panic(name, format!("[:{c}]")));
    }
    Ok(lossy(&s.as_bytes()[..c as usize]))
}

fn f_trim(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 1)?;
    Ok(string(arg_str(name, &a[0])?.trim()))
}

/// `unicode.ToUpper` for one rune (single-rune mappings only, like Go's).
fn go_upper(c: char) -> char {
    if c.is_ascii() {
        return c.to_ascii_uppercase();
    }
    let mut it = c.to_uppercase();
    match (it.next(), it.next()) {
        (Some(u), None) => u,
        _ => c,
    }
}

/// `unicode.ToLower` for one rune.
fn go_lower(c: char) -> char {
    if c.is_ascii() {
        return c.to_ascii_lowercase();
    }
    if c == '\u{130}' {
        return 'i';
    }
    let mut it = c.to_lowercase();
    match (it.next(), it.next()) {
        (Some(l), None) => l,
        _ => c,
    }
}

/// `unicode.ToTitle` for one rune.
fn go_title(c: char) -> char {
    match c as u32 {
        0x1C4..=0x1C6 => '\u{1C5}',
        0x1C7..=0x1C9 => '\u{1C8}',
        0x1CA..=0x1CC => '\u{1CB}',
        0x1F1..=0x1F3 => '\u{1F2}',
        0x10D0..=0x10FA | 0x10FD..=0x10FF => c,
        _ => go_upper(c),
    }
}

fn go_is_title_case(c: char) -> bool {
    matches!(c as u32,
        0x1C5 | 0x1C8 | 0x1CB | 0x1F2 | 0x1F88..=0x1F8F | 0x1F98..=0x1F9F
        | 0x1FA8..=0x1FAF | 0x1FBC | 0x1FCC | 0x1FFC)
}

fn f_upper(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 1)?;
    Ok(string(
        arg_str(name, &a[0])?
            .chars()
            .map(go_upper)
            .collect::<String>(),
    ))
}

fn f_lower(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 1)?;
    Ok(string(
        arg_str(name, &a[0])?
            .chars()
            .map(go_lower)
            .collect::<String>(),
    ))
}

/// `strings.Title`: title-case the first letter of every word; the rest is kept.
fn f_title(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 1)?;
    fn is_separator(c: char) -> bool {
        if c.is_ascii() {
            return !(c.is_ascii_alphanumeric() || c == '_');
        }
        if c.is_alphabetic() || c.is_numeric() {
            return false;
        }
        c.is_whitespace()
    }
    let mut prev = ' ';
    let out: String = arg_str(name, &a[0])?
        .chars()
        .map(|c| {
            let r = if is_separator(prev) { go_title(c) } else { c };
            prev = c;
            r
        })
        .collect();
    Ok(string(out))
}

/// goutils `Uncapitalize`: lower-case the first rune of each whitespace-separated word.
fn f_untitle(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 1)?;
    let mut next = true;
    let out: String = arg_str(name, &a[0])?
        .chars()
        .map(|c| {
            if c.is_whitespace() {
                next = true;
                c
            } else if next {
                next = false;
                go_lower(c)
            } else {
                c
            }
        })
        .collect();
    Ok(string(out))
}

fn f_substr(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 3)?;
    let start = arg_int(name, &a[0])?;
    let end = arg_int(name, &a[1])?;
    let s = arg_str(name, &a[2])?.as_bytes();
    let len = s.len() as i64;
    if start < 0 {
        if end < 0 || end > len {
            let msg = if end < 0 {
                format!("[:{end}]")
            } else {
                format!("[:{end}] with length {len}")
            };
            return Err(slice_panic(name, msg));
        }
        return Ok(lossy(&s[..end as usize]));
    }
    if end < 0 || end > len {
        if start > len {
            return Err(slice_panic(name, format!("[{start}:{len}]")));
        }
        return Ok(lossy(&s[start as usize..]));
    }
    if start > end {
        return Err(slice_panic(name, format!("[{start}:{end}]")));
    }
    Ok(lossy(&s[start as usize..end as usize]))
}

fn f_repeat(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 2)?;
    let count = arg_int(name, &a[0])?;
    let s = arg_str(name, &a[1])?;
    if count < 0 {
        return Err(call_err(name, "strings: negative Repeat count"));
    }
    if (s.len() as u128) * (count as u128) > i64::MAX as u128 {
        return Err(call_err(name, "strings: Repeat count causes overflow"));
    }
    Ok(string(s.repeat(count as usize)))
}

fn f_trim_all(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 2)?;
    let cutset = arg_str(name, &a[0])?;
    let s = arg_str(name, &a[1])?;
    Ok(string(s.trim_matches(|c| cutset.contains(c))))
}

fn f_trim_suffix(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 2)?;
    let suffix = arg_str(name, &a[0])?;
    let s = arg_str(name, &a[1])?;
    Ok(string(s.strip_suffix(suffix).unwrap_or(s)))
}

fn f_trim_prefix(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 2)?;
    let prefix = arg_str(name, &a[0])?;
    let s = arg_str(name, &a[1])?;
    Ok(string(s.strip_prefix(prefix).unwrap_or(s)))
}

/// `unicode.IsSpace` for a Latin-1 rune (goutils iterates bytes as runes).
fn latin1_space(b: u8) -> bool {
    matches!(b, b'\t' | b'\n' | 0x0b | 0x0c | b'\r' | b' ' | 0x85 | 0xA0)
}

/// goutils `DeleteWhiteSpace`, which walks bytes (each byte read as a rune).
fn f_nospace(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 1)?;
    let s = arg_str(name, &a[0])?;
    if !s.bytes().any(latin1_space) {
        return Ok(string(s));
    }
    let out: String = s
        .bytes()
        .filter(|&b| !latin1_space(b))
        .map(char::from)
        .collect();
    Ok(string(out))
}

/// goutils `Initials` (byte based, whitespace delimited).
fn f_initials(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 1)?;
    let s = arg_str(name, &a[0])?;
    let mut out = String::new();
    let mut gap = true;
    for b in s.bytes() {
        if latin1_space(b) {
            gap = true;
        } else if gap {
            out.push(char::from(b));
            gap = false;
        }
    }
    Ok(string(out))
}

/// goutils `SwapCase`.
fn f_swapcase(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 1)?;
    let mut whitespace = true;
    let out: String = arg_str(name, &a[0])?
        .chars()
        .map(|c| {
            if c.is_uppercase() || go_is_title_case(c) {
                whitespace = false;
                go_lower(c)
            } else if c.is_lowercase() {
                if whitespace {
                    whitespace = false;
                    go_title(c)
                } else {
                    go_upper(c)
                }
            } else {
                whitespace = c.is_whitespace();
                c
            }
        })
        .collect();
    Ok(string(out))
}

/// goutils `WrapCustom` (byte based).
fn wrap_custom(s: &[u8], wrap_len: i64, nl: &[u8], wrap_long: bool) -> Vec<u8> {
    if s.is_empty() {
        return Vec::new();
    }
    let nl: &[u8] = if nl.is_empty() { b"\n" } else { nl };
    let wl = wrap_len.max(1);
    let len = s.len();
    let mut offset = 0usize;
    let mut out = Vec::new();
    while (len - offset) as i64 > wl {
        let w = wl as usize;
        if s[offset] == b' ' {
            offset += 1;
            continue;
        }
        let end = w + offset + 1;
        let space = s[offset..end].iter().rposition(|&b| b == b' ');
        if let Some(p) = space {
            let at = offset + p;
            out.extend_from_slice(&s[offset..at]);
            out.extend_from_slice(nl);
            offset = at + 1;
        } else if wrap_long {
            out.extend_from_slice(&s[offset..w + offset]);
            out.extend_from_slice(nl);
            offset += w;
        } else {
            let end = w + offset;
            match s[end..].iter().position(|&b| b == b' ') {
                None => {
                    out.extend_from_slice(&s[offset..]);
                    offset = len;
                }
                Some(p) => {
                    let at = p + end;
                    out.extend_from_slice(&s[offset..at]);
                    out.extend_from_slice(nl);
                    offset = at + 1;
                }
            }
        }
    }
    out.extend_from_slice(&s[offset..]);
    out
}

fn f_wrap(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 2)?;
    let l = arg_int(name, &a[0])?;
    let s = arg_str(name, &a[1])?;
    Ok(lossy(&wrap_custom(s.as_bytes(), l, b"", false)))
}

fn f_wrap_with(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 3)?;
    let l = arg_int(name, &a[0])?;
    let sep = arg_str(name, &a[1])?;
    let s = arg_str(name, &a[2])?;
    Ok(lossy(&wrap_custom(s.as_bytes(), l, sep.as_bytes(), true)))
}

fn f_contains(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 2)?;
    let sub = arg_str(name, &a[0])?;
    Ok(Value::Bool(arg_str(name, &a[1])?.contains(sub)))
}

fn f_has_prefix(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 2)?;
    let p = arg_str(name, &a[0])?;
    Ok(Value::Bool(arg_str(name, &a[1])?.starts_with(p)))
}

fn f_has_suffix(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 2)?;
    let p = arg_str(name, &a[0])?;
    Ok(Value::Bool(arg_str(name, &a[1])?.ends_with(p)))
}

fn f_quote(_name: &str, a: &[Value]) -> Result<Value> {
    let parts: Vec<String> = a
        .iter()
        .filter(|v| !matches!(v, Value::Nil))
        .map(|v| go_quote(&strval(v)))
        .collect();
    Ok(string(parts.join(" ")))
}

fn f_squote(_name: &str, a: &[Value]) -> Result<Value> {
    let parts: Vec<String> = a
        .iter()
        .filter(|v| !matches!(v, Value::Nil))
        .map(|v| format!("'{}'", fmt_v(v)))
        .collect();
    Ok(string(parts.join(" ")))
}

fn f_cat(_name: &str, a: &[Value]) -> Result<Value> {
    let parts: Vec<String> = a
        .iter()
        .filter(|v| !matches!(v, Value::Nil))
        .map(fmt_v)
        .collect();
    Ok(string(parts.join(" ")))
}

fn indent_str(name: &str, spaces: i64, s: &str) -> Result<String> {
    if spaces < 0 {
        return Err(call_err(name, "strings: negative Repeat count"));
    }
    let pad = " ".repeat(spaces as usize);
    Ok(format!("{pad}{}", s.replace('\n', &format!("\n{pad}"))))
}

fn f_indent(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 2)?;
    let n = arg_int(name, &a[0])?;
    Ok(string(indent_str(name, n, arg_str(name, &a[1])?)?))
}

fn f_nindent(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 2)?;
    let n = arg_int(name, &a[0])?;
    Ok(string(format!(
        "\n{}",
        indent_str(name, n, arg_str(name, &a[1])?)?
    )))
}

fn f_replace(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 3)?;
    let old = arg_str(name, &a[0])?;
    let new = arg_str(name, &a[1])?;
    Ok(string(arg_str(name, &a[2])?.replace(old, new)))
}

fn f_plural(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 3)?;
    let one = arg_str(name, &a[0])?;
    let many = arg_str(name, &a[1])?;
    let count = arg_int(name, &a[2])?;
    Ok(string(if count == 1 { one } else { many }))
}

fn f_to_string(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 1)?;
    Ok(string(strval(&a[0])))
}

/// sprig's `strslice`.
fn strslice(v: &Value) -> Vec<String> {
    match v {
        Value::List(l) => l
            .iter()
            .filter(|x| !matches!(x, Value::Nil))
            .map(strval)
            .collect(),
        Value::Nil => Vec::new(),
        other => vec![strval(other)],
    }
}

fn f_to_strings(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 1)?;
    Ok(list(strslice(&a[0]).into_iter().map(string).collect()))
}

fn f_join(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 2)?;
    let sep = arg_str(name, &a[0])?;
    Ok(string(strslice(&a[1]).join(sep)))
}

/// `strings.SplitN(s, sep, n)` (n < 0: all).
fn go_split(s: &str, sep: &str, n: i64) -> Vec<String> {
    if n == 0 {
        return Vec::new();
    }
    if sep.is_empty() {
        let chars: Vec<char> = s.chars().collect();
        let l = chars.len();
        let n = if n < 0 || n as usize > l {
            l
        } else {
            n as usize
        };
        let mut out: Vec<String> = chars[..n.saturating_sub(1)]
            .iter()
            .map(|c| c.to_string())
            .collect();
        if n > 0 {
            out.push(chars[n - 1..].iter().collect());
        }
        return out;
    }
    if n < 0 {
        s.split(sep).map(str::to_string).collect()
    } else {
        s.splitn(n as usize, sep).map(str::to_string).collect()
    }
}

fn split_map(parts: Vec<String>) -> Value {
    map_value(
        parts
            .into_iter()
            .enumerate()
            .map(|(i, p)| (Arc::from(format!("_{i}")), string(p)))
            .collect(),
    )
}

fn f_split(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 2)?;
    let sep = arg_str(name, &a[0])?;
    Ok(split_map(go_split(arg_str(name, &a[1])?, sep, -1)))
}

fn f_split_list(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 2)?;
    let sep = arg_str(name, &a[0])?;
    let parts = go_split(arg_str(name, &a[1])?, sep, -1);
    Ok(list(parts.into_iter().map(string).collect()))
}

fn f_splitn(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 3)?;
    let sep = arg_str(name, &a[0])?;
    let n = arg_int(name, &a[1])?;
    Ok(split_map(go_split(arg_str(name, &a[2])?, sep, n)))
}

fn f_sort_alpha(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 1)?;
    let mut v = match &a[0] {
        l @ Value::List(_) => strslice(l),
        other => vec![strval(other)],
    };
    v.sort();
    Ok(list(v.into_iter().map(string).collect()))
}

// ---------------------------------------------------------------------------
// Numbers (numeric.go and the arithmetic closures of functions.go).
// ---------------------------------------------------------------------------

fn f_atoi(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 1)?;
    let s = arg_str(name, &a[0])?;
    // strconv.Atoi; sprig drops the error, keeping the clamped value on overflow.
    let v = match s.parse::<i64>() {
        Ok(v) => v,
        Err(e) => match e.kind() {
            std::num::IntErrorKind::PosOverflow => i64::MAX,
            std::num::IntErrorKind::NegOverflow => i64::MIN,
            _ => 0,
        },
    };
    Ok(Value::Int(v))
}

fn f_int64(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 1)?;
    Ok(Value::Int(to_int64(&a[0])))
}

fn f_float64(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 1)?;
    Ok(Value::Float(to_float64(&a[0])))
}

fn f_to_decimal(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 1)?;
    Ok(Value::Int(
        i64::from_str_radix(&fmt_v(&a[0]), 8).unwrap_or(0),
    ))
}

fn until_step(start: i64, stop: i64, step: i64) -> Value {
    let mut v = Vec::new();
    let mut i = start;
    if stop < start {
        if step >= 0 {
            return list(v);
        }
        while i > stop {
            v.push(Value::Int(i));
            match i.checked_add(step) {
                Some(n) => i = n,
                None => break,
            }
        }
    } else {
        if step <= 0 {
            return list(v);
        }
        while i < stop {
            v.push(Value::Int(i));
            match i.checked_add(step) {
                Some(n) => i = n,
                None => break,
            }
        }
    }
    list(v)
}

fn f_until(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 1)?;
    let n = arg_int(name, &a[0])?;
    Ok(until_step(0, n, if n < 0 { -1 } else { 1 }))
}

fn f_until_step(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 3)?;
    let start = arg_int(name, &a[0])?;
    let stop = arg_int(name, &a[1])?;
    let step = arg_int(name, &a[2])?;
    Ok(until_step(start, stop, step))
}

fn f_add1(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 1)?;
    Ok(Value::Int(to_int64(&a[0]).wrapping_add(1)))
}

fn f_add(_name: &str, a: &[Value]) -> Result<Value> {
    Ok(Value::Int(
        a.iter().map(to_int64).fold(0i64, i64::wrapping_add),
    ))
}

fn f_sub(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 2)?;
    Ok(Value::Int(to_int64(&a[0]).wrapping_sub(to_int64(&a[1]))))
}

fn f_div(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 2)?;
    let d = to_int64(&a[1]);
    if d == 0 {
        return Err(call_err(name, "runtime error: integer divide by zero"));
    }
    Ok(Value::Int(to_int64(&a[0]).wrapping_div(d)))
}

fn f_mod(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 2)?;
    let d = to_int64(&a[1]);
    if d == 0 {
        return Err(call_err(name, "runtime error: integer divide by zero"));
    }
    Ok(Value::Int(to_int64(&a[0]).wrapping_rem(d)))
}

fn f_mul(name: &str, a: &[Value]) -> Result<Value> {
    want_min(name, a, 1)?;
    Ok(Value::Int(
        a.iter().map(to_int64).fold(1i64, i64::wrapping_mul),
    ))
}

fn f_max(name: &str, a: &[Value]) -> Result<Value> {
    want_min(name, a, 1)?;
    Ok(Value::Int(a.iter().map(to_int64).max().unwrap_or(0)))
}

fn f_min(name: &str, a: &[Value]) -> Result<Value> {
    want_min(name, a, 1)?;
    Ok(Value::Int(a.iter().map(to_int64).min().unwrap_or(0)))
}

fn f_ceil(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 1)?;
    Ok(Value::Float(to_float64(&a[0]).ceil()))
}

fn f_floor(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 1)?;
    Ok(Value::Float(to_float64(&a[0]).floor()))
}

fn f_round(name: &str, a: &[Value]) -> Result<Value> {
    want_min(name, a, 2)?;
    let places = arg_int(name, &a[1])?;
    let mut round_on = 0.5;
    for (i, v) in a[2..].iter().enumerate() {
        let f = arg_float(name, v)?;
        if i == 0 {
            round_on = f;
        }
    }
    let val = to_float64(&a[0]);
    let pow = 10f64.powf(places as f64);
    let digit = pow * val;
    let frac = digit.fract();
    let r = if frac >= round_on {
        digit.ceil()
    } else {
        digit.floor()
    };
    Ok(Value::Float(r / pow))
}

// ---------------------------------------------------------------------------
// Defaults, JSON and reflection (defaults.go, reflect.go).
// ---------------------------------------------------------------------------

fn f_default(name: &str, a: &[Value]) -> Result<Value> {
    want_min(name, a, 1)?;
    match a.get(1) {
        Some(given) if !empty(given) => Ok(given.clone()),
        _ => Ok(a[0].clone()),
    }
}

fn f_empty(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 1)?;
    Ok(Value::Bool(empty(&a[0])))
}

fn f_coalesce(_name: &str, a: &[Value]) -> Result<Value> {
    Ok(a.iter().find(|v| !empty(v)).cloned().unwrap_or(Value::Nil))
}

fn f_ternary(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 3)?;
    let cond = arg_bool(name, &a[2])?;
    Ok(if cond { a[0].clone() } else { a[1].clone() })
}

fn f_deep_copy(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 1)?;
    Ok(a[0].clone())
}

/// `encoding/json` string encoding (with HTML escaping, as `json.Marshal` does).
fn json_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// `json.Marshal`; `None` where Go returns an error (NaN/Inf, functions).
fn json_encode(out: &mut String, v: &Value) -> Option<()> {
    match v {
        Value::Nil => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Int(i) => {
            let _ = write!(out, "{i}");
        }
        Value::Uint(u) => {
            let _ = write!(out, "{u}");
        }
        Value::Float(f) => {
            if !f.is_finite() {
                return None;
            }
            let abs = f.abs();
            if abs != 0.0 && !(1e-6..1e21).contains(&abs) {
                let mut s = format_float(*f, b'e');
                let n = s.len();
                let b = s.as_bytes();
                if n >= 4 && b[n - 4] == b'e' && b[n - 3] == b'-' && b[n - 2] == b'0' {
                    s.remove(n - 2);
                }
                out.push_str(&s);
            } else {
                out.push_str(&format_float(*f, b'f'));
            }
        }
        Value::String(s) => json_string(out, s),
        Value::List(l) => {
            out.push('[');
            for (i, item) in l.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                json_encode(out, item)?;
            }
            out.push(']');
        }
        Value::Map(m) => {
            out.push('{');
            for (i, (k, item)) in m.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                json_string(out, k);
                out.push(':');
                json_encode(out, item)?;
            }
            out.push('}');
        }
        _ => return None,
    }
    Some(())
}

/// `json.Indent(dst, src, "", "  ")` applied to compact JSON (as `MarshalIndent` does).
fn json_indent(src: &str) -> String {
    let mut out = String::with_capacity(src.len() * 2);
    let mut depth = 0usize;
    let mut need_indent = false;
    let mut in_string = false;
    let mut escaped = false;
    let newline = |out: &mut String, depth: usize| {
        out.push('\n');
        for _ in 0..depth {
            out.push_str("  ");
        }
    };
    for c in src.chars() {
        if in_string {
            out.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
            continue;
        }
        if need_indent && c != ']' && c != '}' {
            need_indent = false;
            depth += 1;
            newline(&mut out, depth);
        }
        match c {
            '"' => {
                in_string = true;
                out.push(c);
            }
            '{' | '[' => {
                out.push(c);
                need_indent = true;
            }
            ',' => {
                out.push(c);
                newline(&mut out, depth);
            }
            ':' => out.push_str(": "),
            '}' | ']' => {
                if need_indent {
                    need_indent = false;
                } else {
                    depth = depth.saturating_sub(1);
                    newline(&mut out, depth);
                }
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

fn f_to_json(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 1)?;
    let mut out = String::new();
    if json_encode(&mut out, &a[0]).is_none() {
        out.clear();
    }
    Ok(string(out))
}

fn f_to_pretty_json(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 1)?;
    let mut out = String::new();
    if json_encode(&mut out, &a[0]).is_none() {
        return Ok(string(""));
    }
    Ok(string(json_indent(&out)))
}

fn f_type_of(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 1)?;
    Ok(string(go_type_name(&a[0])))
}

fn f_type_is(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 2)?;
    let target = arg_str(name, &a[0])?;
    Ok(Value::Bool(target == go_type_name(&a[1])))
}

fn f_type_is_like(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 2)?;
    let target = arg_str(name, &a[0])?;
    let t = go_type_name(&a[1]);
    Ok(Value::Bool(
        target == t || t.strip_prefix('*') == Some(target),
    ))
}

fn f_kind_of(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 1)?;
    Ok(string(go_kind_name(&a[0])))
}

fn f_kind_is(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 2)?;
    let target = arg_str(name, &a[0])?;
    Ok(Value::Bool(target == go_kind_name(&a[1])))
}

fn f_deep_equal(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 2)?;
    Ok(Value::Bool(deep_equal(&a[0], &a[1])))
}

// ---------------------------------------------------------------------------
// Lists (list.go).
// ---------------------------------------------------------------------------

/// The list argument of sprig's reflection-based list functions, with the Go
/// panic for a nil or non-slice value (`Cannot <what> on type <kind>`).
fn list_arg<'a>(name: &str, v: &'a Value, what: &str) -> Result<&'a [Value]> {
    match v {
        Value::List(l) => Ok(l),
        Value::Nil => Err(nil_deref(name)),
        other => Err(call_err(
            name,
            format!("Cannot {what} on type {}", go_kind_name(other)),
        )),
    }
}

fn f_list(_name: &str, a: &[Value]) -> Result<Value> {
    Ok(list(a.to_vec()))
}

fn f_push(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 2)?;
    let mut l = list_arg(name, &a[0], "push")?.to_vec();
    l.push(a[1].clone());
    Ok(list(l))
}

fn f_prepend(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 2)?;
    let mut l = vec![a[1].clone()];
    l.extend_from_slice(list_arg(name, &a[0], "prepend")?);
    Ok(list(l))
}

fn f_first(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 1)?;
    Ok(list_arg(name, &a[0], "find first")?
        .first()
        .cloned()
        .unwrap_or(Value::Nil))
}

fn f_last(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 1)?;
    Ok(list_arg(name, &a[0], "find last")?
        .last()
        .cloned()
        .unwrap_or(Value::Nil))
}

fn f_rest(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 1)?;
    let l = list_arg(name, &a[0], "find rest")?;
    Ok(list(l.get(1..).unwrap_or_default().to_vec()))
}

fn f_initial(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 1)?;
    let l = list_arg(name, &a[0], "find initial")?;
    Ok(list(l[..l.len().saturating_sub(1)].to_vec()))
}

fn f_reverse(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 1)?;
    let l = list_arg(name, &a[0], "find reverse")?;
    Ok(list(l.iter().rev().cloned().collect()))
}

fn f_compact(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 1)?;
    let l = list_arg(name, &a[0], "compact")?;
    Ok(list(l.iter().filter(|v| !empty(v)).cloned().collect()))
}

fn f_uniq(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 1)?;
    let l = list_arg(name, &a[0], "find uniq")?;
    let mut out: Vec<Value> = Vec::new();
    for v in l {
        if !out.iter().any(|o| deep_equal(o, v)) {
            out.push(v.clone());
        }
    }
    Ok(list(out))
}

fn f_without(name: &str, a: &[Value]) -> Result<Value> {
    want_min(name, a, 1)?;
    let l = list_arg(name, &a[0], "find without")?;
    let omit = &a[1..];
    Ok(list(
        l.iter()
            .filter(|v| !omit.iter().any(|o| deep_equal(o, v)))
            .cloned()
            .collect(),
    ))
}

fn f_has(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 2)?;
    match &a[1] {
        Value::Nil => Ok(Value::Bool(false)),
        Value::List(l) => Ok(Value::Bool(l.iter().any(|v| deep_equal(&a[0], v)))),
        other => Err(call_err(
            name,
            format!("Cannot find has on type {}", go_kind_name(other)),
        )),
    }
}

fn f_slice(name: &str, a: &[Value]) -> Result<Value> {
    want_min(name, a, 1)?;
    let l = match &a[0] {
        Value::List(l) => l,
        Value::Nil => return Err(nil_deref(name)),
        other => {
            return Err(call_err(
                name,
                format!(
                    "list should be type of slice or array but {}",
                    go_kind_name(other)
                ),
            ));
        }
    };
    if l.is_empty() {
        return Ok(Value::Nil);
    }
    let len = l.len() as i64;
    let start = a.get(1).map_or(0, to_int64);
    let end = if a.len() < 3 { len } else { to_int64(&a[2]) };
    if start < 0 || end < start || end > len {
        return Err(call_err(
            name,
            "reflect.Value.Slice: slice index out of bounds",
        ));
    }
    Ok(list(l[start as usize..end as usize].to_vec()))
}

fn f_concat(name: &str, a: &[Value]) -> Result<Value> {
    let mut out = Vec::new();
    for v in a {
        match v {
            Value::List(l) => out.extend_from_slice(l),
            Value::Nil => return Err(nil_deref(name)),
            other => {
                return Err(call_err(
                    name,
                    format!("Cannot concat type {} as list", go_kind_name(other)),
                ));
            }
        }
    }
    Ok(list(out))
}

// ---------------------------------------------------------------------------
// Dictionaries (dict.go).
// ---------------------------------------------------------------------------

fn f_dict(_name: &str, a: &[Value]) -> Result<Value> {
    let mut m = Map::new();
    for pair in a.chunks(2) {
        let key: Arc<str> = strval(&pair[0]).into();
        m.insert(key, pair.get(1).cloned().unwrap_or_else(|| string("")));
    }
    Ok(map_value(m))
}

fn f_set(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 3)?;
    let mut m = arg_map(name, &a[0])?.clone();
    let key = arg_str(name, &a[1])?;
    m.insert(key.into(), a[2].clone());
    Ok(map_value(m))
}

fn f_unset(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 2)?;
    let mut m = arg_map(name, &a[0])?.clone();
    m.remove(arg_str(name, &a[1])?);
    Ok(map_value(m))
}

fn f_has_key(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 2)?;
    let m = arg_map(name, &a[0])?;
    Ok(Value::Bool(m.contains_key(arg_str(name, &a[1])?)))
}

fn f_pluck(name: &str, a: &[Value]) -> Result<Value> {
    want_min(name, a, 1)?;
    let key = arg_str(name, &a[0])?;
    let mut out = Vec::new();
    for d in &a[1..] {
        if let Some(v) = arg_map(name, d)?.get(key) {
            out.push(v.clone());
        }
    }
    Ok(list(out))
}

fn f_keys(name: &str, a: &[Value]) -> Result<Value> {
    let mut out = Vec::new();
    for d in a {
        out.extend(arg_map(name, d)?.keys().map(|k| Value::String(k.clone())));
    }
    Ok(list(out))
}

fn f_pick(name: &str, a: &[Value]) -> Result<Value> {
    want_min(name, a, 1)?;
    let m = arg_map(name, &a[0])?;
    let mut out = Map::new();
    for k in &a[1..] {
        let k = arg_str(name, k)?;
        if let Some((key, v)) = m.get_key_value(k) {
            out.insert(key.clone(), v.clone());
        }
    }
    Ok(map_value(out))
}

fn f_omit(name: &str, a: &[Value]) -> Result<Value> {
    want_min(name, a, 1)?;
    let mut m = arg_map(name, &a[0])?.clone();
    for k in &a[1..] {
        m.remove(arg_str(name, k)?);
    }
    Ok(map_value(m))
}

fn f_values(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 1)?;
    Ok(list(arg_map(name, &a[0])?.values().cloned().collect()))
}

// ---------------------------------------------------------------------------
// Flow control, semver, encodings, hashes.
// ---------------------------------------------------------------------------

fn f_fail(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 1)?;
    Err(call_err(name, arg_str(name, &a[0])?))
}

fn f_semver(name: &str, a: &[Value]) -> Result<Value> {
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

fn f_semver_compare(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 2)?;
    let constraint = arg_str(name, &a[0])?;
    let version = arg_str(name, &a[1])?;
    let c = Constraints::parse(constraint).map_err(|e| call_err(name, e))?;
    let v = SemVer::parse(version).map_err(|e| call_err(name, e))?;
    Ok(Value::Bool(c.check(&v)))
}

fn f_b64enc(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 1)?;
    let s = arg_str(name, &a[0])?;
    Ok(string(base64::engine::general_purpose::STANDARD.encode(s)))
}

fn f_b64dec(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 1)?;
    match base64_decode(arg_str(name, &a[0])?.as_bytes()) {
        Ok(b) => Ok(lossy(&b)),
        // sprig returns the error text as the result
        Err(at) => Ok(string(format!("illegal base64 data at input byte {at}"))),
    }
}

fn f_b32enc(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 1)?;
    Ok(string(base32_encode(arg_str(name, &a[0])?.as_bytes())))
}

fn f_b32dec(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 1)?;
    match base32_decode(arg_str(name, &a[0])?.as_bytes()) {
        Ok(b) => Ok(lossy(&b)),
        Err(at) => Ok(string(format!("illegal base32 data at input byte {at}"))),
    }
}

fn hex(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

fn f_sha256sum(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 1)?;
    Ok(string(hex(&sha256(arg_str(name, &a[0])?.as_bytes()))))
}

fn f_sha1sum(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 1)?;
    Ok(string(hex(&sha1(arg_str(name, &a[0])?.as_bytes()))))
}

fn f_adler32sum(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 1)?;
    let (mut s1, mut s2) = (1u32, 0u32);
    for &b in arg_str(name, &a[0])?.as_bytes() {
        s1 = (s1 + u32::from(b)) % 65521;
        s2 = (s2 + s1) % 65521;
    }
    Ok(string(((s2 << 16) | s1).to_string()))
}

fn f_to_yaml(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 1)?;
    yaml_marshal(&a[0])
        .map(string)
        .map_err(|e| call_err(name, e))
}

// ---------------------------------------------------------------------------
// Masterminds/semver v1.5.0 (version.go, constraints.go).
// ---------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------
// encoding/base64 and encoding/base32 (standard alphabets, Go's error offsets).
// ---------------------------------------------------------------------------

const B32_ALPHABET: &[u8; 32] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

fn b64_value(c: u8) -> Option<u8> {
    match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    }
}

/// `base64.StdEncoding.DecodeString`: `\r` and `\n` are ignored; the error is the
/// offset Go reports in `illegal base64 data at input byte N`.
fn base64_decode(src: &[u8]) -> std::result::Result<Vec<u8>, usize> {
    let mut out = Vec::with_capacity(src.len() / 4 * 3);
    let mut si = 0;
    while si < src.len() {
        let mut dbuf = [0u8; 4];
        let mut dlen = 4;
        let mut j = 0;
        while j < 4 {
            if si == src.len() {
                if j == 0 {
                    return Ok(out);
                }
                return Err(si - j);
            }
            let c = src[si];
            si += 1;
            if let Some(v) = b64_value(c) {
                dbuf[j] = v;
                j += 1;
                continue;
            }
            if c == b'\n' || c == b'\r' {
                continue;
            }
            if c != b'=' {
                return Err(si - 1);
            }
            // padding
            match j {
                0 | 1 => return Err(si - 1),
                2 => {
                    while si < src.len() && (src[si] == b'\n' || src[si] == b'\r') {
                        si += 1;
                    }
                    if si == src.len() {
                        return Err(src.len());
                    }
                    if src[si] != b'=' {
                        return Err(si - 1);
                    }
                    si += 1;
                }
                _ => {}
            }
            while si < src.len() && (src[si] == b'\n' || src[si] == b'\r') {
                si += 1;
            }
            if si < src.len() {
                return Err(si); // trailing garbage
            }
            dlen = j;
            break;
        }
        let val = (u32::from(dbuf[0]) << 18)
            | (u32::from(dbuf[1]) << 12)
            | (u32::from(dbuf[2]) << 6)
            | u32::from(dbuf[3]);
        let bytes = [(val >> 16) as u8, (val >> 8) as u8, val as u8];
        out.extend_from_slice(&bytes[..dlen - 1]);
    }
    Ok(out)
}

fn base32_encode(src: &[u8]) -> String {
    let mut out = String::with_capacity(src.len().div_ceil(5) * 8);
    for chunk in src.chunks(5) {
        let mut buf = [0u8; 5];
        buf[..chunk.len()].copy_from_slice(chunk);
        let n = u64::from(buf[0]) << 32
            | u64::from(buf[1]) << 24
            | u64::from(buf[2]) << 16
            | u64::from(buf[3]) << 8
            | u64::from(buf[4]);
        let chars = match chunk.len() {
            1 => 2,
            2 => 4,
            3 => 5,
            4 => 7,
            _ => 8,
        };
        for k in 0..8 {
            if k < chars {
                out.push(B32_ALPHABET[((n >> (35 - 5 * k)) & 31) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// `base32.StdEncoding.DecodeString` (newlines stripped first, as Go does).
fn base32_decode(input: &[u8]) -> std::result::Result<Vec<u8>, usize> {
    let src: Vec<u8> = input
        .iter()
        .copied()
        .filter(|&c| c != b'\r' && c != b'\n')
        .collect();
    let olen = src.len();
    let mut rest: &[u8] = &src;
    let mut out = Vec::new();
    let mut end = false;
    while !rest.is_empty() && !end {
        let mut dbuf = [0u8; 8];
        let mut dlen = 8;
        let mut j = 0;
        while j < 8 {
            if rest.is_empty() {
                return Err(olen - j);
            }
            let c = rest[0];
            rest = &rest[1..];
            if c == b'=' && j >= 2 && rest.len() < 8 {
                if rest.len() + j < 7 {
                    return Err(olen);
                }
                for k in 0..7 - j {
                    if rest.len() > k && rest[k] != b'=' {
                        return Err(olen - rest.len() + k - 1);
                    }
                }
                dlen = j;
                end = true;
                if matches!(dlen, 1 | 3 | 6) {
                    return Err(olen - rest.len() - 1);
                }
                break;
            }
            match B32_ALPHABET.iter().position(|&x| x == c) {
                Some(v) => dbuf[j] = v as u8,
                None => return Err(olen - rest.len() - 1),
            }
            j += 1;
        }
        let d = &dbuf;
        let bytes = [
            (d[0] << 3) | (d[1] >> 2),
            (d[1] << 6) | (d[2] << 1) | (d[3] >> 4),
            (d[3] << 4) | (d[4] >> 1),
            (d[4] << 7) | (d[5] << 2) | (d[6] >> 3),
            (d[6] << 5) | d[7],
        ];
        let n = match dlen {
            8 => 5,
            7 => 4,
            5 => 3,
            4 => 2,
            2 => 1,
            _ => 0,
        };
        out.extend_from_slice(&bytes[..n]);
    }
    Ok(out)
}

// ---------------------------------------------------------------------------
// SHA-256 and SHA-1 (FIPS 180-4).
// ---------------------------------------------------------------------------

fn md_pad(data: &[u8]) -> Vec<u8> {
    let mut m = data.to_vec();
    let bits = (data.len() as u64).wrapping_mul(8);
    m.push(0x80);
    while m.len() % 64 != 56 {
        m.push(0);
    }
    m.extend_from_slice(&bits.to_be_bytes());
    m
}

fn sha256(data: &[u8]) -> [u8; 32] {
    const K: [u32; 64] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
        0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
        0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
        0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
        0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
        0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
        0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
        0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
        0xc67178f2,
    ];
    let mut h: [u32; 8] = [
        0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab,
        0x5be0cd19,
    ];
    for block in md_pad(data).chunks(64) {
        let mut w = [0u32; 64];
        for (i, word) in block.chunks(4).enumerate() {
            w[i] = u32::from_be_bytes([word[0], word[1], word[2], word[3]]);
        }
        for i in 16..64 {
            let s0 = w[i - 15].rotate_right(7) ^ w[i - 15].rotate_right(18) ^ (w[i - 15] >> 3);
            let s1 = w[i - 2].rotate_right(17) ^ w[i - 2].rotate_right(19) ^ (w[i - 2] >> 10);
            w[i] = w[i - 16]
                .wrapping_add(s0)
                .wrapping_add(w[i - 7])
                .wrapping_add(s1);
        }
        let mut v = h;
        for i in 0..64 {
            let s1 = v[4].rotate_right(6) ^ v[4].rotate_right(11) ^ v[4].rotate_right(25);
            let ch = (v[4] & v[5]) ^ (!v[4] & v[6]);
            let t1 = v[7]
                .wrapping_add(s1)
                .wrapping_add(ch)
                .wrapping_add(K[i])
                .wrapping_add(w[i]);
            let s0 = v[0].rotate_right(2) ^ v[0].rotate_right(13) ^ v[0].rotate_right(22);
            let maj = (v[0] & v[1]) ^ (v[0] & v[2]) ^ (v[1] & v[2]);
            let t2 = s0.wrapping_add(maj);
            v = [
                t1.wrapping_add(t2),
                v[0],
                v[1],
                v[2],
                v[3].wrapping_add(t1),
                v[4],
                v[5],
                v[6],
            ];
        }
        for (hi, vi) in h.iter_mut().zip(v) {
            *hi = hi.wrapping_add(vi);
        }
    }
    let mut out = [0u8; 32];
    for (i, word) in h.iter().enumerate() {
        out[i * 4..i * 4 + 4].copy_from_slice(&word.to_be_bytes());
    }
    out
}

fn sha1(data: &[u8]) -> [u8; 20] {
    let mut h: [u32; 5] = [0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0];
    for block in md_pad(data).chunks(64) {
        let mut w = [0u32; 80];
        for (i, word) in block.chunks(4).enumerate() {
            w[i] = u32::from_be_bytes([word[0], word[1], word[2], word[3]]);
        }
        for i in 16..80 {
            w[i] = (w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16]).rotate_left(1);
        }
        let [mut a, mut b, mut c, mut d, mut e] = h;
        for (i, wi) in w.iter().enumerate() {
            let (f, k) = match i {
                0..=19 => ((b & c) | (!b & d), 0x5A827999),
                20..=39 => (b ^ c ^ d, 0x6ED9EBA1),
                40..=59 => ((b & c) | (b & d) | (c & d), 0x8F1BBCDC),
                _ => (b ^ c ^ d, 0xCA62C1D6),
            };
            let t = a
                .rotate_left(5)
                .wrapping_add(f)
                .wrapping_add(e)
                .wrapping_add(k)
                .wrapping_add(*wi);
            e = d;
            d = c;
            c = b.rotate_left(30);
            b = a;
            a = t;
        }
        for (hi, vi) in h.iter_mut().zip([a, b, c, d, e]) {
            *hi = hi.wrapping_add(vi);
        }
    }
    let mut out = [0u8; 20];
    for (i, word) in h.iter().enumerate() {
        out[i * 4..i * 4 + 4].copy_from_slice(&word.to_be_bytes());
    }
    out
}

// ---------------------------------------------------------------------------
// KUDO's toYaml: gopkg.in/yaml.v2 v2.3.0 `Marshal` (encode.go, resolve.go,
// sorter.go and the libyaml-derived emitter, emitterc.go).
// ---------------------------------------------------------------------------

/// The emitter's line width. yaml.v2 v2.3.0 (KUDO ≥ 0.16) disables folding
/// (`best_width = -1`, i.e. `1<<31 - 1`); v2.2.x and v2.4.0 fold at 80.
const YAML_BEST_WIDTH: usize = (1 << 31) - 1;
const YAML_BEST_INDENT: i64 = 2;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum YStyle {
    Plain,
    SingleQuoted,
    DoubleQuoted,
    Literal,
}

enum YNode {
    Scalar(String, YStyle),
    Seq(Vec<YNode>),
    Map(Vec<(YNode, YNode)>),
}

fn yaml_node(v: &Value) -> std::result::Result<YNode, String> {
    Ok(match v {
        Value::Nil => YNode::Scalar("null".into(), YStyle::Plain),
        Value::Bool(b) => YNode::Scalar(b.to_string(), YStyle::Plain),
        Value::Int(i) => YNode::Scalar(i.to_string(), YStyle::Plain),
        Value::Uint(u) => YNode::Scalar(u.to_string(), YStyle::Plain),
        Value::Float(f) => {
            let s = match format_float(*f, b'g').as_str() {
                "+Inf" => ".inf".to_string(),
                "-Inf" => "-.inf".to_string(),
                "NaN" => ".nan".to_string(),
                s => s.to_string(),
            };
            YNode::Scalar(s, YStyle::Plain)
        }
        Value::String(s) => yaml_string_node(s),
        Value::List(l) => YNode::Seq(
            l.iter()
                .map(yaml_node)
                .collect::<std::result::Result<_, _>>()?,
        ),
        Value::Map(m) => {
            let mut keys: Vec<&Arc<str>> = m.keys().collect();
            insertion_sort_by(&mut keys, |a, b| yaml_key_less(a, b));
            let mut pairs = Vec::with_capacity(keys.len());
            for k in keys {
                pairs.push((yaml_string_node(k), yaml_node(&m[k])?));
            }
            YNode::Map(pairs)
        }
        other => return Err(format!("cannot marshal type: {}", go_type_name(other))),
    })
}

/// yaml.v2's `stringv`: plain unless the text would resolve to another type.
fn yaml_string_node(s: &str) -> YNode {
    let style = if s.contains('\n') {
        YStyle::Literal
    } else if yaml_resolves_to_str(s) && !yaml_is_base60_float(s) {
        YStyle::Plain
    } else {
        YStyle::DoubleQuoted
    };
    YNode::Scalar(s.to_string(), style)
}

/// A stable insertion sort driven by a strict "less" predicate (yaml.v2's key
/// order need not be a total order; this never panics on an inconsistent one).
fn insertion_sort_by<T>(v: &mut [T], less: impl Fn(&T, &T) -> bool) {
    for i in 1..v.len() {
        let mut j = i;
        while j > 0 && less(&v[j], &v[j - 1]) {
            v.swap(j, j - 1);
            j -= 1;
        }
    }
}

fn go_is_letter(c: char) -> bool {
    if c.is_ascii() {
        c.is_ascii_alphabetic()
    } else {
        c.is_alphabetic()
    }
}

fn go_is_digit(c: char) -> bool {
    if c.is_ascii() {
        c.is_ascii_digit()
    } else {
        c.is_numeric()
    }
}

/// yaml.v2's `keyList.Less` for two string keys (a "natural" order: runs of
/// digits compare numerically, non-letters sort before letters).
fn yaml_key_less(a: &str, b: &str) -> bool {
    let ar: Vec<char> = a.chars().collect();
    let br: Vec<char> = b.chars().collect();
    let mut i = 0;
    while i < ar.len() && i < br.len() {
        if ar[i] == br[i] {
            i += 1;
            continue;
        }
        let al = go_is_letter(ar[i]);
        let bl = go_is_letter(br[i]);
        if al && bl {
            return ar[i] < br[i];
        }
        if al || bl {
            return bl;
        }
        let (mut an, mut bn) = (0i64, 0i64);
        if ar[i] == '0' || br[i] == '0' {
            let mut j = i;
            while j > 0 && go_is_digit(ar[j - 1]) {
                j -= 1;
                if ar[j] != '0' {
                    an = 1;
                    bn = 1;
                    break;
                }
            }
        }
        let digit = |c: char| i64::from(c as u32).wrapping_sub('0' as i64);
        let mut ai = i;
        while ai < ar.len() && go_is_digit(ar[ai]) {
            an = an.wrapping_mul(10).wrapping_add(digit(ar[ai]));
            ai += 1;
        }
        let mut bi = i;
        while bi < br.len() && go_is_digit(br[bi]) {
            bn = bn.wrapping_mul(10).wrapping_add(digit(br[bi]));
            bi += 1;
        }
        if an != bn {
            return an < bn;
        }
        if ai != bi {
            return ai < bi;
        }
        return ar[i] < br[i];
    }
    ar.len() < br.len()
}

/// `resolve("", s)` yields `!!str` (so the string may be written plain).
fn yaml_resolves_to_str(s: &str) -> bool {
    const SPECIAL: &[&str] = &[
        "y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON", "n", "N", "no",
        "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF", "", "~", "null", "Null",
        "NULL", ".nan", ".NaN", ".NAN", ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf",
        "-.Inf", "-.INF", "<<",
    ];
    let hint = match s.as_bytes().first() {
        None => b'N',
        Some(b'+' | b'-') => b'S',
        Some(c) if c.is_ascii_digit() => b'D',
        Some(b'y' | b'Y' | b'n' | b'N' | b't' | b'T' | b'f' | b'F' | b'o' | b'O' | b'~') => b'M',
        Some(b'.') => b'.',
        Some(_) => 0,
    };
    if hint == 0 {
        return true;
    }
    if SPECIAL.contains(&s) {
        return false;
    }
    match hint {
        b'.' => parse_float(s).is_none(),
        b'D' | b'S' => {
            if yaml_is_timestamp(s) {
                return false;
            }
            let plain: String = s.chars().filter(|&c| c != '_').collect();
            if is_go_int_base0(&plain) {
                return false;
            }
            if yaml_style_float(&plain) && parse_float(&plain).is_some() {
                return false;
            }
            // resolve's explicit binary forms: ParseInt(plain[2:], 2, 64) after "0b",
            // ParseInt("-" + plain[3:], 2, 64) after "-0b".
            let binary = |digits: &str| {
                let body = digits.strip_prefix(['+', '-']).unwrap_or(digits);
                !body.is_empty()
                    && body.bytes().all(|c| c == b'0' || c == b'1')
                    && (i64::from_str_radix(digits, 2).is_ok()
                        || (body.len() == digits.len() && u64::from_str_radix(digits, 2).is_ok()))
            };
            if let Some(rest) = plain.strip_prefix("0b") {
                return !binary(rest);
            }
            if let Some(rest) = plain.strip_prefix("-0b") {
                return !binary(&format!("-{rest}"));
            }
            true
        }
        _ => true,
    }
}

/// `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`
fn yaml_style_float(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    if matches!(b.first(), Some(b'+' | b'-')) {
        i = 1;
    }
    let digits = |i: &mut usize| {
        let s = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i - s
    };
    if b.get(i) == Some(&b'.') {
        i += 1;
        if digits(&mut i) == 0 {
            return false;
        }
    } else {
        if digits(&mut i) == 0 {
            return false;
        }
        if b.get(i) == Some(&b'.') {
            i += 1;
            digits(&mut i);
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

/// yaml.v2's `isBase60Float`: `^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$`.
fn yaml_is_base60_float(s: &str) -> bool {
    let b = s.as_bytes();
    match b.first() {
        Some(c) if *c == b'+' || *c == b'-' || c.is_ascii_digit() => {}
        _ => return false,
    }
    if !s.contains(':') {
        return false;
    }
    let mut i = 0;
    if matches!(b[0], b'+' | b'-') {
        i = 1;
    }
    if !b.get(i).is_some_and(u8::is_ascii_digit) {
        return false;
    }
    i += 1;
    while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'_') {
        i += 1;
    }
    let mut groups = 0;
    while b.get(i) == Some(&b':') {
        i += 1;
        // [0-5]?[0-9]
        match (b.get(i), b.get(i + 1)) {
            (Some(d1), Some(d2)) if (b'0'..=b'5').contains(d1) && d2.is_ascii_digit() => i += 2,
            (Some(d), _) if d.is_ascii_digit() => i += 1,
            _ => return false,
        }
        groups += 1;
    }
    if groups == 0 {
        return false;
    }
    if b.get(i) == Some(&b'.') {
        i += 1;
        while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'_') {
            i += 1;
        }
    }
    i == b.len()
}

/// yaml.v2's `parseTimestamp` (Go `time.Parse` with its four layouts).
fn yaml_is_timestamp(s: &str) -> bool {
    let b = s.as_bytes();
    let lead = b.iter().take_while(|c| c.is_ascii_digit()).count();
    if lead != 4 || b.get(4) != Some(&b'-') {
        return false;
    }
    // getnum: one or two digits
    fn num(b: &[u8], i: &mut usize) -> Option<u32> {
        let d1 = *b.get(*i).filter(|c| c.is_ascii_digit())?;
        *i += 1;
        let mut n = u32::from(d1 - b'0');
        if let Some(d2) = b.get(*i).filter(|c| c.is_ascii_digit()) {
            n = n * 10 + u32::from(d2 - b'0');
            *i += 1;
        }
        Some(n)
    }
    let check = || -> Option<bool> {
        let year: u32 = s[..4].parse().ok()?;
        let mut i = 5;
        let month = num(b, &mut i)?;
        if b.get(i) != Some(&b'-') {
            return None;
        }
        i += 1;
        let day = num(b, &mut i)?;
        if !(1..=12).contains(&month) {
            return None;
        }
        let leap =
            year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400));
        let dim = [
            31,
            if leap { 29 } else { 28 },
            31,
            30,
            31,
            30,
            31,
            31,
            30,
            31,
            30,
            31,
        ];
        if day < 1 || day > dim[month as usize - 1] {
            return None;
        }
        if i == b.len() {
            return Some(true); // "2006-1-2"
        }
        let zoned = match b[i] {
            b'T' | b't' => {
                i += 1;
                true
            }
            b' ' => {
                while b.get(i) == Some(&b' ') {
                    i += 1;
                }
                false
            }
            _ => return None,
        };
        let hour = num(b, &mut i)?;
        if b.get(i) != Some(&b':') {
            return None;
        }
        i += 1;
        let min = num(b, &mut i)?;
        if b.get(i) != Some(&b':') {
            return None;
        }
        i += 1;
        let sec = num(b, &mut i)?;
        if hour >= 24 || min >= 60 || sec >= 60 {
            return None;
        }
        if b.get(i) == Some(&b'.') && b.get(i + 1).is_some_and(u8::is_ascii_digit) {
            i += 1;
            let start = i;
            while b.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
            if s[start..i]
                .parse::<u64>()
                .map_or(true, |ns| ns >= 1_000_000_000)
            {
                return None;
            }
        }
        if zoned {
            match b.get(i) {
                Some(b'Z') => i += 1,
                Some(b'+' | b'-') => {
                    let z = b.get(i..i + 6)?;
                    if z[3] != b':' || !z[1..3].iter().chain(&z[4..6]).all(u8::is_ascii_digit) {
                        return None;
                    }
                    i += 6;
                }
                _ => return None,
            }
        }
        Some(i == b.len())
    };
    check() == Some(true)
}

/// Properties of a scalar computed by libyaml's `yaml_emitter_analyze_scalar`.
struct ScalarAnalysis {
    multiline: bool,
    block_plain_allowed: bool,
    single_quoted_allowed: bool,
    block_allowed: bool,
}

fn at(b: &[u8], i: usize) -> u8 {
    b.get(i).copied().unwrap_or(0)
}

fn y_width(c: u8) -> usize {
    match c {
        c if c & 0x80 == 0 => 1,
        c if c & 0xE0 == 0xC0 => 2,
        c if c & 0xF0 == 0xE0 => 3,
        c if c & 0xF8 == 0xF0 => 4,
        _ => 1,
    }
}

fn y_is_space(b: &[u8], i: usize) -> bool {
    at(b, i) == b' '
}

fn y_is_blank(b: &[u8], i: usize) -> bool {
    matches!(at(b, i), b' ' | b'\t')
}

fn y_is_break(b: &[u8], i: usize) -> bool {
    let (c0, c1, c2) = (at(b, i), at(b, i + 1), at(b, i + 2));
    c0 == b'\r'
        || c0 == b'\n'
        || (c0 == 0xC2 && c1 == 0x85)
        || (c0 == 0xE2 && c1 == 0x80 && (c2 == 0xA8 || c2 == 0xA9))
}

fn y_is_blankz(b: &[u8], i: usize) -> bool {
    y_is_blank(b, i) || y_is_break(b, i) || at(b, i) == 0
}

fn y_is_printable(b: &[u8], i: usize) -> bool {
    let (c0, c1, c2) = (at(b, i), at(b, i + 1), at(b, i + 2));
    c0 == 0x0A
        || (0x20..=0x7E).contains(&c0)
        || (c0 == 0xC2 && c1 >= 0xA0)
        || (c0 > 0xC2 && c0 < 0xED)
        || (c0 == 0xED && c1 < 0xA0)
        || c0 == 0xEE
        || (c0 == 0xEF
            && !(c1 == 0xBB && c2 == 0xBF)
            && !(c1 == 0xBF && (c2 == 0xBE || c2 == 0xBF)))
}

/// libyaml's `is_bom`, which (as in yaml.v2) looks at the start of the value.
fn y_is_bom(b: &[u8]) -> bool {
    b.starts_with(&[0xEF, 0xBB, 0xBF])
}

fn analyze_scalar(value: &[u8]) -> ScalarAnalysis {
    if value.is_empty() {
        return ScalarAnalysis {
            multiline: false,
            block_plain_allowed: true,
            single_quoted_allowed: true,
            block_allowed: false,
        };
    }
    // Only libyaml's block indicators matter: no scalar is written in flow context.
    let (mut block_ind, mut line_breaks, mut special) = (false, false, false);
    let (mut leading_space, mut leading_break, mut trailing_space, mut trailing_break) =
        (false, false, false, false);
    let (mut break_space, mut space_break) = (false, false);
    let (mut previous_space, mut previous_break) = (false, false);
    if value.starts_with(b"---") || value.starts_with(b"...") {
        block_ind = true;
    }
    let mut preceded_by_ws = true;
    let mut i = 0;
    while i < value.len() {
        let w = y_width(value[i]);
        let followed_by_ws = i + w >= value.len() || y_is_blank(value, i + w);
        let indicator = if i == 0 {
            match value[i] {
                b'#' | b',' | b'[' | b']' | b'{' | b'}' | b'&' | b'*' | b'!' | b'|' | b'>'
                | b'\'' | b'"' | b'%' | b'@' | b'`' => true,
                b'?' | b':' | b'-' => followed_by_ws,
                _ => false,
            }
        } else {
            match value[i] {
                b':' => followed_by_ws,
                b'#' => preceded_by_ws,
                _ => false,
            }
        };
        block_ind |= indicator;
        if !y_is_printable(value, i) {
            special = true;
        }
        if y_is_space(value, i) {
            if i == 0 {
                leading_space = true;
            }
            if i + w == value.len() {
                trailing_space = true;
            }
            if previous_break {
                break_space = true;
            }
            previous_space = true;
            previous_break = false;
        } else if y_is_break(value, i) {
            line_breaks = true;
            if i == 0 {
                leading_break = true;
            }
            if i + w == value.len() {
                trailing_break = true;
            }
            if previous_space {
                space_break = true;
            }
            previous_space = false;
            previous_break = true;
        } else {
            previous_space = false;
            previous_break = false;
        }
        preceded_by_ws = y_is_blankz(value, i);
        i += w;
    }
    let mut a = ScalarAnalysis {
        multiline: line_breaks,
        block_plain_allowed: true,
        single_quoted_allowed: true,
        block_allowed: true,
    };
    if leading_space || leading_break || trailing_space || trailing_break {
        a.block_plain_allowed = false;
    }
    if trailing_space {
        a.block_allowed = false;
    }
    if break_space {
        a.block_plain_allowed = false;
        a.single_quoted_allowed = false;
    }
    if space_break || special {
        a.block_plain_allowed = false;
        a.single_quoted_allowed = false;
        a.block_allowed = false;
    }
    if line_breaks {
        a.block_plain_allowed = false;
    }
    if block_ind {
        a.block_plain_allowed = false;
    }
    a
}

/// The block-style emitter state of libyaml (as translated in yaml.v2). yaml.v2
/// only uses flow style for empty sequences and mappings, so no scalar is ever
/// written in flow context and libyaml's flow-level conditions are left out.
struct YamlEmitter {
    out: Vec<u8>,
    column: usize,
    indent: i64,
    indents: Vec<i64>,
    whitespace: bool,
    indention: bool,
    mapping_context: bool,
    simple_key_context: bool,
}

impl YamlEmitter {
    fn put(&mut self, c: u8) {
        self.out.push(c);
        self.column += 1;
    }

    fn put_break(&mut self) {
        self.out.push(b'\n');
        self.column = 0;
    }

    /// Copies one UTF-8 character of `s` at `*i`.
    fn write(&mut self, s: &[u8], i: &mut usize) {
        let w = y_width(s[*i]).min(s.len() - *i);
        self.out.extend_from_slice(&s[*i..*i + w]);
        self.column += 1;
        *i += w;
    }

    fn write_all(&mut self, s: &[u8]) {
        let mut i = 0;
        while i < s.len() {
            self.write(s, &mut i);
        }
    }

    fn write_break(&mut self, s: &[u8], i: &mut usize) {
        if s[*i] == b'\n' {
            self.put_break();
            *i += 1;
        } else {
            self.write(s, i);
            self.column = 0;
        }
    }

    fn increase_indent(&mut self, flow: bool, indentless: bool) {
        self.indents.push(self.indent);
        if self.indent < 0 {
            self.indent = if flow { YAML_BEST_INDENT } else { 0 };
        } else if !indentless {
            self.indent += YAML_BEST_INDENT;
        }
    }

    fn pop_indent(&mut self) {
        self.indent = self.indents.pop().unwrap_or(-1);
    }

    fn write_indent(&mut self) {
        let indent = self.indent.max(0) as usize;
        if !self.indention || self.column > indent || (self.column == indent && !self.whitespace) {
            self.put_break();
        }
        while self.column < indent {
            self.put(b' ');
        }
        self.whitespace = true;
        self.indention = true;
    }

    fn write_indicator(&mut self, ind: &[u8], need_ws: bool, is_ws: bool, is_indention: bool) {
        if need_ws && !self.whitespace {
            self.put(b' ');
        }
        self.write_all(ind);
        self.whitespace = is_ws;
        self.indention = self.indention && is_indention;
    }

    fn emit_node(&mut self, n: &YNode, mapping: bool, simple_key: bool) {
        self.mapping_context = mapping;
        self.simple_key_context = simple_key;
        match n {
            YNode::Scalar(value, style) => self.emit_scalar(value.as_bytes(), *style),
            YNode::Seq(items) => {
                if items.is_empty() {
                    self.emit_flow(b"[", b"]", items.len());
                } else {
                    self.emit_block_sequence(items);
                }
            }
            YNode::Map(pairs) => {
                if pairs.is_empty() {
                    self.emit_flow(b"{", b"}", pairs.len());
                } else {
                    self.emit_block_mapping(pairs);
                }
            }
        }
    }

    /// Flow collections only ever hold no items here (yaml.v2 uses them for
    /// empty sequences and mappings).
    fn emit_flow(&mut self, open: &[u8], close: &[u8], len: usize) {
        debug_assert_eq!(len, 0, "flow collections are only used when empty");
        self.write_indicator(open, true, true, false);
        self.increase_indent(true, false);
        self.pop_indent();
        self.write_indicator(close, false, false, false);
    }

    fn emit_block_sequence(&mut self, items: &[YNode]) {
        let indentless = self.mapping_context && !self.indention;
        self.increase_indent(false, indentless);
        for item in items {
            self.write_indent();
            self.write_indicator(b"-", true, false, true);
            self.emit_node(item, false, false);
        }
        self.pop_indent();
    }

    fn is_simple_key(n: &YNode) -> bool {
        match n {
            YNode::Scalar(v, _) => !analyze_scalar(v.as_bytes()).multiline && v.len() <= 128,
            YNode::Seq(items) => items.is_empty(),
            YNode::Map(pairs) => pairs.is_empty(),
        }
    }

    fn emit_block_mapping(&mut self, pairs: &[(YNode, YNode)]) {
        self.increase_indent(false, false);
        for (k, v) in pairs {
            self.write_indent();
            if Self::is_simple_key(k) {
                self.emit_node(k, true, true);
                self.write_indicator(b":", false, false, false);
            } else {
                self.write_indicator(b"?", true, false, true);
                self.emit_node(k, true, false);
                self.write_indent();
                self.write_indicator(b":", true, false, true);
            }
            self.emit_node(v, true, false);
        }
        self.pop_indent();
    }

    fn emit_scalar(&mut self, value: &[u8], requested: YStyle) {
        let a = analyze_scalar(value);
        let mut style = requested;
        if self.simple_key_context && a.multiline {
            style = YStyle::DoubleQuoted;
        }
        if style == YStyle::Plain {
            if !a.block_plain_allowed {
                style = YStyle::SingleQuoted;
            }
            if value.is_empty() && self.simple_key_context {
                style = YStyle::SingleQuoted;
            }
        }
        if style == YStyle::SingleQuoted && !a.single_quoted_allowed {
            style = YStyle::DoubleQuoted;
        }
        if style == YStyle::Literal && (!a.block_allowed || self.simple_key_context) {
            style = YStyle::DoubleQuoted;
        }
        self.increase_indent(true, false);
        let allow_breaks = !self.simple_key_context;
        match style {
            YStyle::Plain => self.write_plain(value, allow_breaks),
            YStyle::SingleQuoted => self.write_single_quoted(value, allow_breaks),
            YStyle::DoubleQuoted => self.write_double_quoted(value, allow_breaks),
            YStyle::Literal => self.write_literal(value),
        }
        self.pop_indent();
    }

    fn write_plain(&mut self, value: &[u8], allow_breaks: bool) {
        if !self.whitespace {
            self.put(b' ');
        }
        let (mut spaces, mut breaks) = (false, false);
        let mut i = 0;
        while i < value.len() {
            if y_is_space(value, i) {
                if allow_breaks
                    && !spaces
                    && self.column > YAML_BEST_WIDTH
                    && !y_is_space(value, i + 1)
                {
                    self.write_indent();
                    i += 1;
                } else {
                    self.write(value, &mut i);
                }
                spaces = true;
            } else if y_is_break(value, i) {
                if !breaks && value[i] == b'\n' {
                    self.put_break();
                }
                self.write_break(value, &mut i);
                self.indention = true;
                breaks = true;
            } else {
                if breaks {
                    self.write_indent();
                }
                self.write(value, &mut i);
                self.indention = false;
                spaces = false;
                breaks = false;
            }
        }
        self.whitespace = false;
        self.indention = false;
    }

    fn write_single_quoted(&mut self, value: &[u8], allow_breaks: bool) {
        self.write_indicator(b"'", true, false, false);
        let (mut spaces, mut breaks) = (false, false);
        let mut i = 0;
        while i < value.len() {
            if y_is_space(value, i) {
                if allow_breaks
                    && !spaces
                    && self.column > YAML_BEST_WIDTH
                    && i > 0
                    && i < value.len() - 1
                    && !y_is_space(value, i + 1)
                {
                    self.write_indent();
                    i += 1;
                } else {
                    self.write(value, &mut i);
                }
                spaces = true;
            } else if y_is_break(value, i) {
                if !breaks && value[i] == b'\n' {
                    self.put_break();
                }
                self.write_break(value, &mut i);
                self.indention = true;
                breaks = true;
            } else {
                if breaks {
                    self.write_indent();
                }
                if value[i] == b'\'' {
                    self.put(b'\'');
                }
                self.write(value, &mut i);
                self.indention = false;
                spaces = false;
                breaks = false;
            }
        }
        self.write_indicator(b"'", false, false, false);
        self.whitespace = false;
        self.indention = false;
    }

    fn write_double_quoted(&mut self, value: &[u8], allow_breaks: bool) {
        let mut spaces = false;
        self.write_indicator(b"\"", true, false, false);
        let bom = y_is_bom(value);
        let mut i = 0;
        while i < value.len() {
            if !y_is_printable(value, i)
                || bom
                || y_is_break(value, i)
                || value[i] == b'"'
                || value[i] == b'\\'
            {
                let w = y_width(value[i]).min(value.len() - i);
                let ch = std::str::from_utf8(&value[i..i + w])
                    .ok()
                    .and_then(|s| s.chars().next())
                    .map_or(u32::from(value[i]), |c| c as u32);
                i += w;
                self.put(b'\\');
                let short = match ch {
                    0x00 => Some(b'0'),
                    0x07 => Some(b'a'),
                    0x08 => Some(b'b'),
                    0x09 => Some(b't'),
                    0x0A => Some(b'n'),
                    0x0B => Some(b'v'),
                    0x0C => Some(b'f'),
                    0x0D => Some(b'r'),
                    0x1B => Some(b'e'),
                    0x22 => Some(b'"'),
                    0x5C => Some(b'\\'),
                    0x85 => Some(b'N'),
                    0xA0 => Some(b'_'),
                    0x2028 => Some(b'L'),
                    0x2029 => Some(b'P'),
                    _ => None,
                };
                match short {
                    Some(c) => self.put(c),
                    None => {
                        let (letter, digits) = if ch <= 0xFF {
                            (b'x', 2)
                        } else if ch <= 0xFFFF {
                            (b'u', 4)
                        } else {
                            (b'U', 8)
                        };
                        self.put(letter);
                        for k in (0..digits).rev() {
                            let d = ((ch >> (4 * k)) & 0xF) as u8;
                            self.put(if d < 10 { b'0' + d } else { b'A' + d - 10 });
                        }
                    }
                }
                spaces = false;
            } else if y_is_space(value, i) {
                if allow_breaks
                    && !spaces
                    && self.column > YAML_BEST_WIDTH
                    && i > 0
                    && i < value.len() - 1
                {
                    self.write_indent();
                    if y_is_space(value, i + 1) {
                        self.put(b'\\');
                    }
                    i += 1;
                } else {
                    self.write(value, &mut i);
                }
                spaces = true;
            } else {
                self.write(value, &mut i);
                spaces = false;
            }
        }
        self.write_indicator(b"\"", false, false, false);
        self.whitespace = false;
        self.indention = false;
    }

    fn write_literal(&mut self, value: &[u8]) {
        self.write_indicator(b"|", true, false, false);
        // block scalar hints
        if y_is_space(value, 0) || y_is_break(value, 0) {
            self.write_indicator(&[b'0' + YAML_BEST_INDENT as u8], false, false, false);
        }
        let chomp = if value.is_empty() {
            Some(b'-')
        } else {
            let mut i = value.len() - 1;
            while i > 0 && value[i] & 0xC0 == 0x80 {
                i -= 1;
            }
            if !y_is_break(value, i) {
                Some(b'-')
            } else if i == 0 {
                Some(b'+')
            } else {
                i -= 1;
                while i > 0 && value[i] & 0xC0 == 0x80 {
                    i -= 1;
                }
                if y_is_break(value, i) {
                    Some(b'+')
                } else {
                    None
                }
            }
        };
        if let Some(c) = chomp {
            self.write_indicator(&[c], false, false, false);
        }
        self.put_break();
        self.indention = true;
        self.whitespace = true;
        let mut breaks = true;
        let mut i = 0;
        while i < value.len() {
            if y_is_break(value, i) {
                self.write_break(value, &mut i);
                self.indention = true;
                breaks = true;
            } else {
                if breaks {
                    self.write_indent();
                }
                self.write(value, &mut i);
                self.indention = false;
                breaks = false;
            }
        }
    }
}

/// `yaml.Marshal(v)` of yaml.v2 v2.3.0.
fn yaml_marshal(v: &Value) -> std::result::Result<String, String> {
    let node = yaml_node(v)?;
    let mut e = YamlEmitter {
        out: Vec::new(),
        column: 0,
        indent: -1,
        indents: Vec::new(),
        whitespace: true,
        indention: true,
        mapping_context: false,
        simple_key_context: false,
    };
    e.emit_node(&node, false, false);
    e.write_indent(); // DOCUMENT-END
    Ok(String::from_utf8_lossy(&e.out).into_owned())
}

#[cfg(test)]
mod tests {
    //! Case tables run through gotmpl with `funcs()`. Expected outputs are those of
    //! Go (text/template + sprig v2.22.0 + KUDO's toYaml with yaml.v2 v2.3.0); the
    //! comment above each group names the sprig test (`*_test.go`) a row comes
    //! from, or the Go source it exercises.
    use super::*;

    /// (template source, data as JSON, expected output or error message)
    type Row = (&'static str, &'static str, &'static str);

    fn render(src: &str, data: &str) -> std::result::Result<String, String> {
        let data: serde_json::Value = serde_json::from_str(data).map_err(|e| e.to_string())?;
        let data = gotmpl::to_value(&data).map_err(|e| e.to_string())?;
        gotmpl::Template::new("t")
            .funcs(funcs())
            .missing_key(gotmpl::MissingKey::Error)
            .parse(src)
            .and_then(|t| t.execute_to_string(&data))
            .map_err(|e| e.to_string())
    }

    fn check(rows: &[Row]) {
        let mut failures = Vec::new();
        for &(src, data, want) in rows {
            match render(src, data) {
                Ok(got) if got == want => {}
                got => failures.push(format!(
                    "{src:?} with {data}\n  want {want:?}\n  got  {got:?}"
                )),
            }
        }
        assert!(
            failures.is_empty(),
            "{} failing rows:\n{}",
            failures.len(),
            failures.join("\n")
        );
    }

    fn check_err(rows: &[Row]) {
        let mut failures = Vec::new();
        for &(src, data, want) in rows {
            match render(src, data) {
                Err(e) if e.contains(want) => {}
                got => failures.push(format!(
                    "{src:?} with {data}\n  want error {want:?}\n  got {got:?}"
                )),
            }
        }
        assert!(
            failures.is_empty(),
            "{} failing rows:\n{}",
            failures.len(),
            failures.join("\n")
        );
    }

    #[test]
    fn int_int64_float64_atoi() {
        check(&[
            // numeric_test.go TestToInt64/TestToInt: "102" -> 102, "frankie" -> 0, true -> 1, float truncated
            (
                r#"{{ int64 "102" }} {{ int64 "frankie" }} {{ int64 true }} {{ int64 102.1234 }} {{ int 102 }} {{ int "102" }}"#,
                "{}",
                "102 0 1 102 102 102",
            ),
            // sprig toInt64: decimal ParseInt only, 0 on error
            (
                r#"{{ int "0x1F" }} {{ int "1.5" }} {{ int " 1" }} {{ int "+5" }} {{ int "-7" }} {{ int nil }} {{ int64 "99999999999999999999" }}"#,
                "{}",
                "0 0 0 5 -7 0 0",
            ),
            // sprig toInt64 on data values
            (
                "{{ int64 .x }} {{ int64 .f }} {{ int64 .l }} {{ int .s }} {{ int .b }}",
                r#"{"x": 5, "f": -2.9, "l": [1], "s": "12", "b": false}"#,
                "5 -2 0 12 0",
            ),
            // numeric_test.go TestToFloat64
            (
                r#"{{ float64 "102" }} {{ float64 "frankie" }} {{ float64 102 }} {{ float64 102.1234 }} {{ float64 true }}"#,
                "{}",
                "102 0 102 102.1234 1",
            ),
            // strconv.ParseFloat syntax
            (
                r#"{{ float64 "1e3" }} {{ float64 "1_000.5" }} {{ float64 ".5" }} {{ float64 "0x1p-2" }} {{ float64 "1e400" }} {{ float64 "1.5.5" }} {{ float64 "" }}"#,
                "{}",
                "1000 1000.5 0.5 0.25 0 0 0",
            ),
            // functions.go atoi: strconv.Atoi, error dropped
            (
                r#"{{ atoi "42" }} {{ atoi "x" }} {{ atoi "99999999999999999999" }} {{ atoi "-99999999999999999999" }} {{ atoi "+3" }} {{ atoi "" }} {{ atoi "1.5" }}"#,
                "{}",
                "42 0 9223372036854775807 -9223372036854775808 3 0 0",
            ),
            // numeric_test.go TestToDecimal
            (
                r#"{{ toDecimal "777" }} {{ toDecimal 777 }} {{ toDecimal 770 }} {{ toDecimal 755 }} {{ toDecimal 9 }} {{ toDecimal "x" }}"#,
                "{}",
                "511 511 504 493 0 0",
            ),
        ]);
    }

    #[test]
    fn arithmetic() {
        check(&[
            // numeric_test.go TestAdd
            ("{{ 3 | add 1 2}}", "{}", "6"),
            // numeric_test.go TestMul
            (r#"{{ 1 | mul "2" 3 "4"}}"#, "{}", "24"),
            // functions.go add/add1/sub/div/mod/mul
            (
                r#"{{ add 1 2 "3" }} {{ add }} {{ add1 "5" }} {{ sub 5 "2" }} {{ div 7 2 }} {{ mod 7 3 }} {{ mod -7 3 }} {{ div -7 2 }} {{ mul 2 "3" 4.5 }} {{ add "x" 1.9 true }}"#,
                "{}",
                "6 0 6 3 3 1 -1 -3 24 2",
            ),
            // data values
            (
                "{{ add .a .b }} {{ sub .a .f }} {{ mul .a .s }} {{ max .a .b .f }} {{ add1 .big }}",
                r#"{"a": 3, "b": 4, "f": 1.5, "s": "7", "big": 9223372036854775807}"#,
                "7 2 21 4 -9223372036854775808",
            ),
            // numeric_test.go TestBiggest
            ("{{ biggest 1 2 3 345 5 6 7}} {{ max 345}}", "{}", "345 345"),
            // numeric_test.go TestMin
            ("{{ min 1 2 3 345 5 6 7}} {{ min 345}}", "{}", "1 345"),
            // numeric.go max/min coerce with toInt64
            (
                r#"{{ max 1 "5" 3.9 }} {{ min 4 "2" 9 }} {{ max "a" -1 }}"#,
                "{}",
                "5 2 0",
            ),
            // numeric_test.go TestCeil/TestFloor
            (
                r#"{{ ceil 123 }} {{ ceil "123" }} {{ ceil 123.01 }} {{ ceil "123.01" }} {{ floor 123 }} {{ floor "123" }} {{ floor 123.9999 }} {{ floor "123.9999" }}"#,
                "{}",
                "123 123 124 124 123 123 123 123",
            ),
            // numeric_test.go TestRound
            (
                r#"{{ round 123.5555 3 }} {{ round "123.55555" 3 }} {{ round 123.500001 0 }} {{ round 123.49999999 0 }} {{ round 123.2329999 2 .3 }} {{ round 123.233 2 .3 }}"#,
                "{}",
                "123.556 123.556 124 123 123.23 123.24",
            ),
        ]);
    }

    #[test]
    fn until_untilstep() {
        check(&[
            // numeric_test.go TestUntil
            (
                "{{range $i, $e := until 5}}{{$i}}{{$e}}{{end}}",
                "{}",
                "0011223344",
            ),
            (
                "{{range $i, $e := until -5}}{{$i}}{{$e}} {{end}}",
                "{}",
                "00 1-1 2-2 3-3 4-4 ",
            ),
            // numeric_test.go TestUntilStep
            (
                "{{range $i, $e := untilStep 0 5 1}}{{$i}}{{$e}}{{end}}",
                "{}",
                "0011223344",
            ),
            (
                "{{range $i, $e := untilStep 3 6 1}}{{$i}}{{$e}}{{end}}",
                "{}",
                "031425",
            ),
            (
                "{{range $i, $e := untilStep 0 -10 -2}}{{$i}}{{$e}} {{end}}",
                "{}",
                "00 1-2 2-4 3-6 4-8 ",
            ),
            // numeric_test.go TestUntilStep (empty cases)
            (
                "{{range $i, $e := untilStep 3 0 1}}{{$i}}{{$e}}{{end}}|{{range $i, $e := untilStep 3 99 0}}{{$i}}{{$e}}{{end}}|{{range $i, $e := untilStep 3 99 -1}}{{$i}}{{$e}}{{end}}|{{range $i, $e := untilStep 3 0 0}}{{$i}}{{$e}}{{end}}",
                "{}",
                "|||",
            ),
            // int parameters accept integer data
            (
                "{{ until .n }} {{ untilStep .z .n 2 }} {{ until 0 }}",
                r#"{"n": 5, "z": 0}"#,
                "[0 1 2 3 4] [0 2 4] []",
            ),
        ]);
    }

    #[test]
    fn list_tuple() {
        check(&[
            // list_test.go TestTuple
            (
                r#"{{$t := tuple 1 "a" "foo"}}{{index $t 2}}{{index $t 0 }}{{index $t 1}}"#,
                "{}",
                "foo1a",
            ),
            // list_test.go TestList
            (
                r#"{{$t := list 1 "a" "foo"}}{{index $t 2}}{{index $t 0 }}{{index $t 1}}"#,
                "{}",
                "foo1a",
            ),
            // list.go list
            (
                r#"{{ list 1 "a" 2.5 nil true }} {{ list }} {{ len (list 1 2) }}"#,
                "{}",
                "[1 a 2.5 <nil> true] [] 2",
            ),
        ]);
    }

    #[test]
    fn b64_b32() {
        check(&[
            // strings_test.go TestBase64EncodeDecode
            (
                r#"{{b64enc "coffee"}} {{b64dec "Y29mZmVl"}}"#,
                "{}",
                "Y29mZmVl coffee",
            ),
            // strings_test.go TestBase32EncodeDecode
            (
                r#"{{b32enc "coffee"}} {{b32dec "MNXWMZTFMU======"}}"#,
                "{}",
                "MNXWMZTFMU====== coffee",
            ),
            // base64.StdEncoding: newlines ignored; the error text is the result
            (
                "{{ b64dec \"Y29m\\nZmVl\" }}|{{ b64dec \"abc\" }}|{{ b64dec \"a\" }}|{{ b64dec \"ab=c\" }}|{{ b64dec \"ab==cd\" }}|{{ b64dec \"a===\" }}|{{ b64dec \"Y29mZmVl!\" }}|{{ b64dec \"\" }}|{{ b64dec \"ab=\" }}|{{ b64dec \"abc=\\n\" }}|{{ b64dec \"YQ==\" }}",
                "{}",
                "coffee|illegal base64 data at input byte 0|illegal base64 data at input byte 0|illegal base64 data at input byte 2|illegal base64 data at input byte 4|illegal base64 data at input byte 1|illegal base64 data at input byte 8||illegal base64 data at input byte 3|i\u{fffd}|a",
            ),
            // base32.StdEncoding error offsets
            (
                r#"{{ b32dec "MNXW" }}|{{ b32dec "MN=XW" }}|{{ b32dec "MNXWMZTFMU=====" }}|{{ b32dec "mnxw" }}|{{ b32enc "" }}|{{ b32enc "a" }}|{{ b32enc "abcde" }}|{{ b32dec "ME======" }}|{{ b32dec "ME=====" }}"#,
                "{}",
                "illegal base32 data at input byte 0|illegal base32 data at input byte 5|illegal base32 data at input byte 15|illegal base32 data at input byte 0||ME======|MFRGGZDF|a|illegal base32 data at input byte 7",
            ),
            // round trip of non-ASCII data
            (
                "{{ b64enc .s }}|{{ b64enc .s | b64dec }}|{{ b32enc .s | b32dec }}",
                "{\"s\": \"h\\u00e9llo w\\u00f6rld\"}",
                "aMOpbGxvIHfDtnJsZA==|h\u{e9}llo w\u{f6}rld|h\u{e9}llo w\u{f6}rld",
            ),
        ]);
    }

    #[test]
    fn trim_functions() {
        check(&[
            // strings_test.go TestTrim
            (
                r#"{{trim "   5.00   "}}|{{trimAll "$" "$5.00$"}}|{{trimPrefix "$" "$5.00"}}|{{trimSuffix "$" "5.00$"}}"#,
                "{}",
                "5.00|5.00|5.00|5.00",
            ),
            // strings.TrimSpace / strings.Trim cutset
            (
                "{{ trimall \"ab\" \"abxba\" }}|{{ trim \"\\u00a0x\\u2003\\t\\n\" }}|{{ trimAll \"\" \"  x \" }}|{{ trimPrefix \"\" \"x\" }}|{{ trimSuffix \"y\" \"x\" }}",
                "{}",
                "x|x|  x |x|x",
            ),
            // pipelines pass the piped value last
            (
                r#"{{ "$$a$$" | trimAll "$" }}|{{ "prefix-x" | trimPrefix "prefix-" }}"#,
                "{}",
                "a|x",
            ),
        ]);
    }

    #[test]
    fn indent_nindent() {
        check(&[
            // strings_test.go TestIndent
            ("{{indent 4 \"a\\nb\\nc\"}}", "{}", "    a\n    b\n    c"),
            // strings_test.go TestNindent
            ("{{nindent 4 \"a\\nb\\nc\"}}", "{}", "\n    a\n    b\n    c"),
            // strings.go indent
            (
                "{{ indent 0 \"x\" }}|{{ indent 2 \"\" }}|{{ indent 2 \"a\\n\" }}|{{ \"foo\" | indent 2 }}|{{ indent .n \"a\\nb\" }}",
                r#"{"n": 3}"#,
                "x|  |  a\n  |  foo|   a\n   b",
            ),
        ]);
    }

    #[test]
    fn case_functions() {
        check(&[
            // strings.ToUpper / ToLower (per-rune simple mappings)
            (
                "{{ upper \"hello \\u00df \\ufb01 \\u01c6 stra\\u00dfe\" }}|{{ lower \"HELLO \\u0130 \\u03a3 \\u0391\\u03a3\" }}",
                "{}",
                "HELLO \u{df} \u{fb01} \u{1c4} STRA\u{df}E|hello i \u{3c3} \u{3b1}\u{3c3}",
            ),
            // strings.Title
            (
                "{{ title \"hello wORLD foo_bar a-b x.y \\u01c6x \\u00e9a 1a\" }}",
                "{}",
                "Hello WORLD Foo_bar A-B X.Y \u{1c5}x \u{c9}a 1a",
            ),
            // strings_test.go TestGoutils (untitle)
            (
                r#"{{untitle "First Try"}}|{{ untitle "First Try  Ab" }}"#,
                "{}",
                "first try|first try  ab",
            ),
            // goutils SwapCase
            (
                "{{ swapcase \"Hello World \\u01c5 abc\" }}",
                "{}",
                "hELLO wORLD \u{1c6} ABC",
            ),
            // data strings
            (
                "{{ upper .s }}|{{ .s | lower }}|{{ .s | title }}",
                r#"{"s": "aBc dEF"}"#,
                "ABC DEF|abc def|ABc DEF",
            ),
        ]);
    }

    #[test]
    fn substr_trunc_repeat() {
        check(&[
            // strings_test.go TestSubstr
            (r#"{{"fooo" | substr 0 3 }}"#, "{}", "foo"),
            // strings_test.go TestSubstr_shorterString
            (r#"{{"foo" | substr 0 10 }}"#, "{}", "foo"),
            // strings.go substring
            (
                r#"{{ substr 1 -1 "hello" }}|{{ substr -1 2 "hello" }}|{{ substr 2 2 "hello" }}"#,
                "{}",
                "ello|he|",
            ),
            // strings_test.go TestTrunc
            (r#"{{ "foooooo" | trunc 3 }}"#, "{}", "foo"),
            // strings.go trunc
            (
                r#"{{ trunc 10 "foo" }}|{{ trunc 0 "abc" }}|{{ trunc .n "abcdef" }}"#,
                r#"{"n": 2}"#,
                "foo||ab",
            ),
            // functions.go repeat
            (
                r#"{{ repeat 3 "ab" }}|{{ repeat 0 "x" }}|{{ "foo" | repeat 2 }}"#,
                "{}",
                "ababab||foofoo",
            ),
        ]);
    }

    #[test]
    fn goutils_functions() {
        check(&[
            // strings_test.go TestGoutils
            (
                "{{abbrev 5 \"hello world\"}}|{{abbrevboth 5 10 \"1234 5678 9123\"}}|{{nospace \"h e l l o \"}}|{{initials \"First Try\"}}|{{wrap 5 \"Hello World\"}}|{{wrapWith 5 \"\\t\" \"Hello World\"}}",
                "{}",
                "he...|...5678...|hello|FT|Hello\nWorld|Hello\tWorld",
            ),
            // goutils Abbreviate/AbbreviateFull
            (
                r#"{{ abbrev 3 "hello" }}|{{ abbrev 20 "hello" }}|{{ abbrevboth 0 4 "hello world" }}|{{ abbrevboth 10 6 "hello world foo" }}|{{ abbrevboth 20 10 "hello world foo bar baz" }}"#,
                "{}",
                "hello|hello|h...|hello world foo|...bar baz",
            ),
            // goutils byte-wise DeleteWhiteSpace/Initials
            (
                "{{ nospace \"h\\u00e9llo w\\u00f6rld\" }}|{{ nospace \"h\\u00e9llo\" }}|{{ initials \"  \\u00e9a b\" }}",
                "{}",
                "h\u{c3}\u{a9}llow\u{c3}\u{b6}rld|h\u{e9}llo|\u{c3}b",
            ),
            // goutils WrapCustom
            (
                r#"{{ wrap 3 "abcdefgh ij kl" }}|{{ wrapWith 3 "-" "abcdefgh ij" }}|{{ wrap 0 "a b" }}|{{ wrap 10 "  leading spaces here and there" }}"#,
                "{}",
                "abcdefgh\nij\nkl|abc-def-gh-ij|a\nb|leading\nspaces\nhere and\nthere",
            ),
        ]);
    }

    #[test]
    fn contains_prefix_suffix() {
        check(&[
            // strings_test.go TestContains
            (
                r#"{{if contains "cat" "fair catch"}}1{{end}}{{if hasPrefix "cat" "catch"}}1{{end}}{{if hasSuffix "cat" "ducat"}}1{{end}}"#,
                "{}",
                "111",
            ),
            // argument order
            (
                r#"{{ contains "x" "abc" }} {{ "abc" | hasPrefix "ab" }} {{ hasSuffix "abc" "c" }}"#,
                "{}",
                "false true false",
            ),
        ]);
    }

    #[test]
    fn quote_squote_cat() {
        check(&[
            // strings_test.go TestQuote
            (
                "{{quote \"a\" \"b\" \"c\"}}|{{quote \"\\\"a\\\"\" \"b\" \"c\"}}|{{quote 1 2 3 }}",
                "{}",
                "\"a\" \"b\" \"c\"|\"\\\"a\\\"\" \"b\" \"c\"|\"1\" \"2\" \"3\"",
            ),
            // strings_test.go TestQuote (nil value)
            ("{{ .value | quote }}", r#"{"value": null}"#, ""),
            // strconv.Quote escapes
            (
                "{{ quote \"tab\\there\" \"nl\\n\" \"\\u00e9\" \"\\u00a0\" \"\\u0001\" \"\\u200b\" \"\\U0001F600\" \"\\u007f\" \"\\\\\" }}|{{ quote nil }}|{{ quote (list 1 2) }}|{{ quote 1.5 true }}",
                "{}",
                "\"tab\\there\" \"nl\\n\" \"\u{e9}\" \"\\u00a0\" \"\\x01\" \"\\u200b\" \"\u{1f600}\" \"\\x7f\" \"\\\\\"||\"[1 2]\"|\"1.5\" \"true\"",
            ),
            // strings_test.go TestSquote
            (
                r#"{{squote "a" "b" "c"}}|{{squote 1 2 3 }}"#,
                "{}",
                "'a' 'b' 'c'|'1' '2' '3'",
            ),
            // strings_test.go TestSquote (nil value)
            ("{{ .value | squote }}", r#"{"value": null}"#, ""),
            // fmt %v in squote
            (
                r#"{{ squote (list 1 "a") }}|{{ squote (dict "a" 1) }}|{{ squote 2.5 }}"#,
                "{}",
                "'[1 a]'|'map[a:1]'|'2.5'",
            ),
            // strings_test.go TestCat
            (r#"{{$b := "b"}}{{"c" | cat "a" $b}}"#, "{}", "a b c"),
            // strings_test.go TestCat (nil value)
            (r#"{{ .value | cat "a" "b"}}"#, r#"{"value": null}"#, "a b"),
            // strings.go cat
            (r#"{{ cat "a" nil "b" 1 (list 2 3) }}"#, "{}", "a b 1 [2 3]"),
            // data values
            (
                "{{ quote .a .b .c .d }}|{{ squote .a .b .c .d }}|{{ cat .a .b .c .d }}",
                r#"{"a": 1, "b": 2.5, "c": [1, "x"], "d": {"k": "v"}}"#,
                r#""1" "2.5" "[1 x]" "map[k:v]"|'1' '2.5' '[1 x]' 'map[k:v]'|1 2.5 [1 x] map[k:v]"#,
            ),
        ]);
    }

    #[test]
    fn replace_plural() {
        check(&[
            // strings_test.go TestReplace
            (
                r#"{{"I Am Henry VIII" | replace " " "-"}}"#,
                "{}",
                "I-Am-Henry-VIII",
            ),
            // strings.Replace
            (
                r#"{{ replace "" "-" "abc" }}|{{ replace "a" "" "banana" }}"#,
                "{}",
                "-a-b-c-|bnn",
            ),
            // strings_test.go TestPlural
            (
                r#"{{$num := len "two"}}{{$num}} {{$num | plural "1 char" "chars"}}"#,
                "{}",
                "3 chars",
            ),
            (
                r#"{{len "t" | plural "cheese" "%d chars"}}"#,
                "{}",
                "cheese",
            ),
        ]);
    }

    #[test]
    fn hashes() {
        check(&[
            // crypto_test.go TestSha256Sum
            (
                r#"{{"abc" | sha256sum}}"#,
                "{}",
                "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
            ),
            // crypto_test.go TestSha1Sum
            (
                r#"{{"abc" | sha1sum}}"#,
                "{}",
                "a9993e364706816aba3e25717850c26c9cd0d89d",
            ),
            // crypto_test.go TestAdler32Sum
            (r#"{{"abc" | adler32sum}}"#, "{}", "38600999"),
            // empty and multi-block input
            (
                r#"{{ sha256sum "" }}|{{ sha1sum "" }}|{{ adler32sum "" }}|{{ sha256sum .s }}|{{ sha1sum .s }}|{{ adler32sum .s }}"#,
                r#"{"s": "The quick brown fox jumps over the lazy dog, and then some more text to exceed one block of sixty four bytes"}"#,
                "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855|da39a3ee5e6b4b0d3255bfef95601890afd80709|1|882ee395bbc5831733528db2e6a089d126803143bd568062621a648b40eede17|404940937072b6bb55d469bcae0bef64ae7db341|1372989259",
            ),
        ]);
    }

    #[test]
    fn to_string_to_strings_join_sort_alpha() {
        check(&[
            // strings_test.go TestToString
            ("{{ toString 1 | kindOf }}", "{}", "string"),
            // strval / fmt %v
            (
                r#"{{ toString 1.5 }}|{{ toString nil }}|{{ toString (list 1 "a" nil) }}|{{ toString (dict "b" 1 "a" (list 1)) }}|{{ toString true }}|{{ toString 1e6 }}|{{ toString 0.000001 }}|{{ toString 123456789.0 }}"#,
                "{}",
                "1.5|<nil>|[1 a <nil>]|map[a:[1] b:1]|true|1e+06|1e-06|1.23456789e+08",
            ),
            // fmt %v of float64 data
            (
                "{{ toString .f }}|{{ toString .g }}|{{ toString .h }}",
                r#"{"f": 1e21, "g": 1.5e-7, "h": 100000.0}"#,
                "1e+21|1.5e-07|100000",
            ),
            // strings_test.go TestToStrings
            (
                "{{ $s := list 1 2 3 | toStrings }}{{ index $s 1 | kindOf }}",
                "{}",
                "string",
            ),
            // strings_test.go TestToStrings (nil element)
            (
                "{{ list 1 .value 2 | toStrings }}",
                r#"{"value": null}"#,
                "[1 2]",
            ),
            // strings.go strslice
            (
                r#"{{ toStrings "a" }}|{{ toStrings nil }}|{{ toStrings (dict "a" 1) }}"#,
                "{}",
                "[a]|[]|[map[a:1]]",
            ),
            // strings_test.go TestJoin
            (
                r#"{{ tuple "a" "b" "c" | join "-" }}|{{ tuple 1 2 3 | join "-" }}|{{ join "-" .V }}|{{ join "-" .W }}|{{ join "-" .value }}"#,
                r#"{"V": ["a","b","c"], "W": "abc", "value": ["1", null, "2"]}"#,
                "a-b-c|1-2-3|a-b-c|abc|1-2",
            ),
            // strings_test.go TestSortAlpha
            (
                r#"{{ list "c" "a" "b" | sortAlpha | join "" }}|{{ list 2 1 4 3 | sortAlpha | join "" }}"#,
                "{}",
                "abc|1234",
            ),
            // list.go sortAlpha
            (
                r#"{{ sortAlpha "x" }}|{{ sortAlpha nil }}|{{ list "B" "a" "_" "10" "9" | sortAlpha }}|{{ join "," nil }}"#,
                "{}",
                "[x]|[<nil>]|[10 9 B _ a]|",
            ),
        ]);
    }

    #[test]
    fn split_splitlist_splitn() {
        check(&[
            // strings_test.go TestSplit
            (
                r#"{{$v := "foo$bar$baz" | split "$"}}{{$v._0}}"#,
                "{}",
                "foo",
            ),
            // strings_test.go TestSplitn
            (
                r#"{{$v := "foo$bar$baz" | splitn "$" 2}}{{$v._0}}"#,
                "{}",
                "foo",
            ),
            // strings.Split with an empty separator splits runes
            (
                r#"{{ split "," "a,b,,c" }}|{{ split "" "abc" }}|{{ split "" "" }}|{{ split "," "" }}"#,
                "{}",
                "map[_0:a _1:b _2: _3:c]|map[_0:a _1:b _2:c]|map[]|map[_0:]",
            ),
            // strings.SplitN
            (
                r#"{{ splitn "$" 2 "foo$bar$baz" }}|{{ splitn "," 0 "a,b" }}|{{ splitn "," -1 "a,b,c" }}|{{ splitn "" 2 "abc" }}|{{ splitn "" 5 "ab" }}"#,
                "{}",
                "map[_0:foo _1:bar$baz]|map[]|map[_0:a _1:b _2:c]|map[_0:a _1:bc]|map[_0:a _1:b]",
            ),
            // functions.go splitList
            (
                "{{ splitList \",\" \"a,b,,c\" }}|{{ splitList \"\" \"h\\u00e9llo\" }}|{{ splitList \",\" \"\" }}|{{ len (splitList \"\" \"\") }}",
                "{}",
                "[a b  c]|[h \u{e9} l l o]|[]|0",
            ),
            // ranging over the results
            (
                r#"{{ range (splitList "," "a,b") }}[{{.}}]{{ end }}|{{ range $k, $v := split "," "a,b" }}{{$k}}={{$v}};{{ end }}"#,
                "{}",
                "[a][b]|_0=a;_1=b;",
            ),
        ]);
    }

    #[test]
    fn list_functions() {
        check(&[
            // list_test.go TestPush
            (
                r#"{{ $t := tuple 1 2 3  }}{{ append $t 4 | len }}|{{ $t := tuple 1 2 3 4  }}{{ append $t 5 | join "-" }}|{{ push (list) 1 }}"#,
                "{}",
                "4|1-2-3-4-5|[1]",
            ),
            // list_test.go TestPrepend
            (
                r#"{{ $t := tuple 1 2 3  }}{{ prepend $t 0 | len }}|{{ $t := tuple 1 2 3 4  }}{{ prepend $t 0 | join "-" }}"#,
                "{}",
                "4|0-1-2-3-4",
            ),
            // list_test.go TestFirst/TestLast
            (
                "{{ list 1 2 3 | first }}|{{ list | first }}|{{ list 1 2 3 | last }}|{{ list | last }}",
                "{}",
                "1|<no value>|3|<no value>",
            ),
            // list_test.go TestInitial/TestRest
            (
                "{{ list 1 2 3 | initial | len }}|{{ list 1 2 3 | initial | last }}|{{ list 1 2 3 | initial | first }}|{{ list | initial }}|{{ list 1 2 3 | rest | len }}|{{ list 1 2 3 | rest | last }}|{{ list 1 2 3 | rest | first }}|{{ list | rest }}",
                "{}",
                "2|2|1|[]|2|3|2|[]",
            ),
            // list_test.go TestReverse
            (
                "{{ list 1 2 3 | reverse | first }}|{{ list 1 2 3 | reverse | rest | first }}|{{ list 1 2 3 | reverse | last }}|{{ list 1 2 3 4 | reverse }}|{{ list 1 | reverse }}|{{ list | reverse }}",
                "{}",
                "3|2|1|[4 3 2 1]|[1]|[]",
            ),
            // list_test.go TestCompact
            (
                r#"{{ list 1 0 "" "hello" | compact }}|{{ list "" "" | compact }}|{{ list | compact }}|{{ list nil false 0.0 (list) (dict) "x" | compact }}"#,
                "{}",
                "[1 hello]|[]|[]|[x]",
            ),
            // list_test.go TestUniq
            (
                r#"{{ list 1 2 3 4 | uniq }}|{{ list "a" "b" "c" "d" | uniq }}|{{ list 1 1 1 1 2 2 2 2 | uniq }}|{{ list "foo" 1 1 1 1 "foo" "foo" | uniq }}|{{ list | uniq }}|{{ list (list 1) (list 1) (dict "a" 1) (dict "a" 1) | uniq }}"#,
                "{}",
                "[1 2 3 4]|[a b c d]|[1 2]|[foo 1]|[]|[[1] map[a:1]]",
            ),
            // list_test.go TestWithout
            (
                r#"{{ without (list 1 2 3 4) 1 }}|{{ without (list "a" "b" "c" "d") "a" }}|{{ without (list 1 1 1 1 2) 1 }}|{{ without (list) 1 }}|{{ without (list 1 2 3) }}|{{ without list }}|{{ without (list 1 2 3) 1 3 }}"#,
                "{}",
                "[2 3 4]|[b c d]|[2]|[]|[1 2 3]|[]|[2]",
            ),
            // list_test.go TestHas
            (
                r#"{{ list 1 2 3 | has 1 }}|{{ list 1 2 3 | has 4 }}|{{ has "bar" nil }}|{{ has 1.0 (list 1) }}|{{ has nil (list nil) }}"#,
                "{}",
                "true|false|false|false|true",
            ),
            // reflect.DeepEqual between data and literal ints
            (
                "{{ .l | uniq }}|{{ has 1 .l }}|{{ without .l 1 }}",
                r#"{"l": [1, 1, 2]}"#,
                "[1 2]|true|[2]",
            ),
            // list_test.go TestSlice
            (
                r#"{{ slice (list 1 2 3) }}|{{ slice (list 1 2 3) 0 1 }}|{{ slice (list 1 2 3) 1 3 }}|{{ slice (list 1 2 3) 1 }}|{{ slice (list) }}|{{ slice (list 1 2) "1" }}"#,
                "{}",
                "[1 2 3]|[1]|[2 3]|[2 3]|<no value>|[2]",
            ),
            // list_test.go TestConcat
            (
                r#"{{ concat (list 1 2 3) }}|{{ concat (list 1 2 3) (list 4 5) }}|{{ concat (list 1 2 3) (list 4 5) (list) }}|{{ concat (list 1 2 3) (list 4 5) (list nil) }}|{{ concat (list 1 2 3) (list 4 5) (list ( list "foo" ) ) }}|{{ concat }}"#,
                "{}",
                "[1 2 3]|[1 2 3 4 5]|[1 2 3 4 5]|[1 2 3 4 5 <nil>]|[1 2 3 4 5 [foo]]|[]",
            ),
            // data lists
            (
                r#"{{ first .l }}|{{ last .l }}|{{ rest .l }}|{{ initial .l }}|{{ reverse .l }}|{{ append .l 9 }}|{{ prepend .l 0 }}|{{ has 2 .l }}|{{ without .l 2 }}|{{ uniq .l }}|{{ slice .l 1 2 }}|{{ concat .l .l }}|{{ compact .l }}|{{ sortAlpha .l }}|{{ join "," .l }}|{{ toStrings .l }}"#,
                r#"{"l": [1, 2, "a", null, 2, 0, ""]}"#,
                "1||[2 a <nil> 2 0 ]|[1 2 a <nil> 2 0]|[ 0 2 <nil> a 2 1]|[1 2 a <nil> 2 0  9]|[0 1 2 a <nil> 2 0 ]|true|[1 a <nil> 0 ]|[1 2 a <nil> 0 ]|[2]|[1 2 a <nil> 2 0  1 2 a <nil> 2 0 ]|[1 2 a 2]|[ 0 1 2 2 a]|1,2,a,2,0,|[1 2 a 2 0 ]",
            ),
        ]);
    }

    #[test]
    fn dict_functions() {
        check(&[
            // dict_test.go TestDict
            (
                r#"{{$t := dict "I" "shot" "the" "albatross"}}{{$t.the}} {{$t.I}}"#,
                "{}",
                "albatross shot",
            ),
            // dict.go dict: keys through strval, odd count pads with ""
            (
                r#"{{ dict 1 2 "three" "four" 5 }}|{{ dict }}|{{ dict nil 1 (list 1) 2 }}"#,
                "{}",
                "map[1:2 5: three:four]|map[]|map[<nil>:1 [1]:2]",
            ),
            // dict_test.go TestHasKey
            (
                r#"{{- $d := dict "one" 1 "two" 222222 -}}{{- if hasKey $d "one" -}}1{{- end -}}{{ hasKey $d "x" }}"#,
                "{}",
                "1false",
            ),
            // dict_test.go TestPluck
            (
                r#"{{- $d := dict "one" 1 "two" 222222 -}}{{- $d2 := dict "one" 1 "two" 33333 -}}{{- $d3 := dict "one" 1 -}}{{- $d4 := dict "one" 1 "two" 4444 -}}{{- pluck "two" $d $d2 $d3 $d4 -}}|{{ pluck "x" }}"#,
                "{}",
                "[222222 33333 4444]|[]",
            ),
            // dict_test.go TestKeys
            (
                r#"{{ dict "foo" 1 "bar" 2 | keys | sortAlpha }}|{{ dict | keys }}|{{ keys (dict "foo" 1) (dict "bar" 2) (dict "bar" 3) | uniq | sortAlpha }}|{{ keys }}"#,
                "{}",
                "[bar foo]|[]|[bar foo]|[]",
            ),
            // dict_test.go TestPick
            (
                r#"{{- $d := dict "one" 1 "two" 222222 }}{{ pick $d "two" | len -}}|{{- $d := dict "one" 1 "two" 222222 }}{{ pick $d "two" -}}|{{- $d := dict "one" 1 "two" 222222 }}{{ pick $d "one" "two" | len -}}|{{- $d := dict "one" 1 "two" 222222 }}{{ pick $d "one" "two" "three" | len -}}|{{- $d := dict }}{{ pick $d "two" | len -}}"#,
                "{}",
                "1|map[two:222222]|2|2|0",
            ),
            // dict_test.go TestOmit
            (
                r#"{{- $d := dict "one" 1 "two" 222222 }}{{ omit $d "one" | len -}}|{{- $d := dict "one" 1 "two" 222222 }}{{ omit $d "one" -}}|{{- $d := dict "one" 1 "two" 222222 }}{{ omit $d "one" "two" | len -}}|{{- $d := dict "one" 1 "two" 222222 }}{{ omit $d "two" "three" | len -}}|{{- $d := dict }}{{ omit $d "two" | len -}}"#,
                "{}",
                "1|map[two:222222]|0|1|0",
            ),
            // dict_test.go TestValues
            (
                r#"{{- $d := dict "a" 1 "b" 2 }}{{ values $d | sortAlpha | join "," }}|{{- $d := dict "a" "first" "b" 2 }}{{ values $d | sortAlpha | join "," }}"#,
                "{}",
                "1,2|2,first",
            ),
            // dict_test.go TestDeepCopy
            (
                r#"{{- $d := dict "a" 1 "b" 2 | deepCopy }}{{ values $d | sortAlpha | join "," }}|{{- $d := dict "a" 1 "b" 2 | deepCopy }}{{ keys $d | sortAlpha | join "," }}|{{- $one := dict "foo" (dict "bar" "baz") "qux" true -}}{{ deepCopy $one }}"#,
                "{}",
                "1,2|a,b|map[foo:map[bar:baz] qux:true]",
            ),
            // dict.go set/unset results
            (
                r#"{{ set (dict "a" 1) "b" 2 }}|{{ unset (dict "a" 1 "b" 2) "a" }}|{{ $d := dict }}{{ $d = set $d "k" "v" }}{{ $d.k }}"#,
                "{}",
                "map[a:1 b:2]|map[b:2]|v",
            ),
            // data maps
            (
                r#"{{ hasKey .m "a" }}|{{ pluck "a" .m .m }}|{{ pick .m "a" }}|{{ set .m "b" 2 }}"#,
                r#"{"m": {"a": 1, "c": [1]}}"#,
                "true|[1 1]|map[a:1]|map[a:1 b:2 c:[1]]",
            ),
        ]);
    }

    #[test]
    fn defaults() {
        check(&[
            // defaults_test.go TestDefault
            (
                r#"{{"" | default "foo"}}|{{default "foo" 234}}|{{default "foo" 2.34}}|{{ default "123" }}"#,
                "{}",
                "foo|234|2.34|123",
            ),
            // defaults_test.go TestDefault (nil value)
            (
                r#"{{ .Nothing | default "123" }}"#,
                r#"{"Nothing": null}"#,
                "123",
            ),
            // defaults.go dfault
            (
                r#"{{ default "x" 0 }}|{{ default "x" (list) }}|{{ default "x" false }}|{{ default "x" "y" "z" }}|{{ default .d .v }}|{{ default "x" .v }}"#,
                r#"{"d": "def", "v": 0}"#,
                "x|x|x|y|def|x",
            ),
            // defaults_test.go TestEmpty
            (
                r#"{{if empty 1}}1{{else}}0{{end}}|{{if empty 0}}1{{else}}0{{end}}|{{if empty ""}}1{{else}}0{{end}}|{{if empty 0.0}}1{{else}}0{{end}}|{{if empty false}}1{{else}}0{{end}}|{{ empty (dict) }}|{{ empty nil }}"#,
                "{}",
                "0|1|1|1|1|true|true",
            ),
            // defaults_test.go TestEmpty (missing nested value)
            (
                "{{if empty .top.NoSuchThing}}1{{else}}0{{end}}",
                r#"{"top": {"NoSuchThing": null}}"#,
                "1",
            ),
            // defaults_test.go TestCoalesce
            (
                r#"{{ coalesce 1 }}|{{ coalesce "" 0 nil 2 }}|{{ $two := 2 }}{{ coalesce "" 0 nil $two }}|{{ $two := 2 }}{{ coalesce "" $two 0 0 0 }}|{{ $two := 2 }}{{ coalesce "" $two 3 4 5 }}|{{ coalesce }}"#,
                "{}",
                "1|2|2|2|2|<no value>",
            ),
            // defaults_test.go TestCoalesce (nil values)
            (
                r#"{{ coalesce .top.NoSuchThing .bottom "airplane"}}"#,
                r#"{"top": {"NoSuchThing": null}, "bottom": null}"#,
                "airplane",
            ),
            // defaults_test.go TestTernary
            (
                r#"{{true | ternary "foo" "bar"}}|{{ternary "foo" "bar" true}}|{{false | ternary "foo" "bar"}}|{{ternary "foo" "bar" false}}"#,
                "{}",
                "foo|foo|bar|bar",
            ),
        ]);
    }

    #[test]
    fn json() {
        check(&[
            // defaults_test.go TestToJson
            (
                "{{.Top | toJson}}",
                r#"{"Top": {"bool": true, "string": "test", "number": 42}}"#,
                r#"{"bool":true,"number":42,"string":"test"}"#,
            ),
            // defaults_test.go TestToPrettyJson
            (
                "{{.Top | toPrettyJson}}",
                r#"{"Top": {"bool": true, "string": "test", "number": 42}}"#,
                "{\n  \"bool\": true,\n  \"number\": 42,\n  \"string\": \"test\"\n}",
            ),
            // encoding/json: HTML escaping, float format
            (
                "{{ toJson (list 1 \"a<b>&c\" nil 1.5 (dict) (list) 1e21 1e-7 0.000001 100000000000000000000.0 -0.0 \"\\u2028\\t\\u0001\\\"\\\\\") }}",
                "{}",
                "[1,\"a\\u003cb\\u003e\\u0026c\",null,1.5,{},[],1e+21,1e-7,0.000001,100000000000000000000,-0,\"\\u2028\\t\\u0001\\\"\\\\\"]",
            ),
            // json.MarshalIndent
            (
                r#"{{ toPrettyJson (dict "a" (list 1 (dict "b" (list)) (dict)) "c" "x") }}|{{ toPrettyJson (list) }}|{{ toPrettyJson nil }}|{{ toPrettyJson "s" }}"#,
                "{}",
                "{\n  \"a\": [\n    1,\n    {\n      \"b\": []\n    },\n    {}\n  ],\n  \"c\": \"x\"\n}|[]|null|\"s\"",
            ),
            // data values
            (
                "{{ toJson . }}",
                r#"{"a": [1, 2.5, "x", null, true, {"b": {}}], "c": "<&>"}"#,
                "{\"a\":[1,2.5,\"x\",null,true,{\"b\":{}}],\"c\":\"\\u003c\\u0026\\u003e\"}",
            ),
            (
                "{{ toPrettyJson . }}",
                r#"{"a": [1, 2.5, "x", null, true, {"b": {}}], "c": "<&>"}"#,
                "{\n  \"a\": [\n    1,\n    2.5,\n    \"x\",\n    null,\n    true,\n    {\n      \"b\": {}\n    }\n  ],\n  \"c\": \"\\u003c\\u0026\\u003e\"\n}",
            ),
        ]);
    }

    #[test]
    fn reflection() {
        check(&[
            // reflect.go typeOf/kindOf
            (
                r#"{{ typeOf 1 }}|{{ typeOf "a" }}|{{ typeOf 1.5 }}|{{ typeOf nil }}|{{ typeOf (list) }}|{{ typeOf (dict) }}|{{ typeOf true }}|{{ kindOf 1 }}|{{ kindOf (list) }}|{{ kindOf (dict) }}|{{ kindOf nil }}|{{ kindOf 1.5 }}|{{ kindIs "int" 1 }}|{{ typeIs "string" "a" }}|{{ typeIsLike "int" 1 }}"#,
                "{}",
                "int|string|float64|<nil>|[]interface {}|map[string]interface {}|bool|int|slice|map|invalid|float64|true|true|true",
            ),
            // data values
            (
                "{{ typeOf .i }}|{{ kindOf .i }}|{{ typeOf .l }}|{{ typeOf .m }}|{{ typeOf .f }}",
                r#"{"i": 5, "l": [1], "m": {"a": 1}, "f": 1.5}"#,
                "int|int|[]interface {}|map[string]interface {}|float64",
            ),
            // reflect.DeepEqual
            (
                r#"{{ deepEqual 1 1 }}|{{ deepEqual 1 1.0 }}|{{ deepEqual (list 1 "a") (list 1 "a") }}|{{ deepEqual (dict "a" 1) (dict "a" 2) }}|{{ deepEqual nil nil }}|{{ deepEqual .i 5 }}"#,
                r#"{"i": 5}"#,
                "true|false|true|false|true|true",
            ),
        ]);
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
    fn fail_hello() {
        check(&[
            // functions.go hello
            ("{{ hello }}", "{}", "Hello!"),
        ]);
    }

    #[test]
    fn to_yaml_strings() {
        check(&[
            // yaml.v2 Marshal (read from encode.go/emitterc.go; checked against Go)
            ("{{ toYaml .v }}", r#"{"v": {"k": ""}}"#, "k: \"\"\n"),
            ("{{ toYaml .v }}", r#"{"v": {"k": " "}}"#, "k: ' '\n"),
            ("{{ toYaml .v }}", r#"{"v": {"k": "a"}}"#, "k: a\n"),
            (
                "{{ toYaml .v }}",
                r#"{"v": {"k": "true"}}"#,
                "k: \"true\"\n",
            ),
            (
                "{{ toYaml .v }}",
                r#"{"v": {"k": "True"}}"#,
                "k: \"True\"\n",
            ),
            ("{{ toYaml .v }}", r#"{"v": {"k": "yes"}}"#, "k: \"yes\"\n"),
            ("{{ toYaml .v }}", r#"{"v": {"k": "no"}}"#, "k: \"no\"\n"),
            ("{{ toYaml .v }}", r#"{"v": {"k": "on"}}"#, "k: \"on\"\n"),
            ("{{ toYaml .v }}", r#"{"v": {"k": "off"}}"#, "k: \"off\"\n"),
            ("{{ toYaml .v }}", r#"{"v": {"k": "y"}}"#, "k: \"y\"\n"),
            ("{{ toYaml .v }}", r#"{"v": {"k": "n"}}"#, "k: \"n\"\n"),
            ("{{ toYaml .v }}", r#"{"v": {"k": "~"}}"#, "k: \"~\"\n"),
            (
                "{{ toYaml .v }}",
                r#"{"v": {"k": "null"}}"#,
                "k: \"null\"\n",
            ),
            (
                "{{ toYaml .v }}",
                r#"{"v": {"k": "NULL"}}"#,
                "k: \"NULL\"\n",
            ),
            ("{{ toYaml .v }}", r#"{"v": {"k": "1"}}"#, "k: \"1\"\n"),
            ("{{ toYaml .v }}", r#"{"v": {"k": "-1"}}"#, "k: \"-1\"\n"),
            ("{{ toYaml .v }}", r#"{"v": {"k": "+1"}}"#, "k: \"+1\"\n"),
            ("{{ toYaml .v }}", r#"{"v": {"k": "1.5"}}"#, "k: \"1.5\"\n"),
            ("{{ toYaml .v }}", r#"{"v": {"k": "1e3"}}"#, "k: \"1e3\"\n"),
            (
                "{{ toYaml .v }}",
                r#"{"v": {"k": "1_000"}}"#,
                "k: \"1_000\"\n",
            ),
            (
                "{{ toYaml .v }}",
                r#"{"v": {"k": "0x1F"}}"#,
                "k: \"0x1F\"\n",
            ),
            (
                "{{ toYaml .v }}",
                r#"{"v": {"k": "0o17"}}"#,
                "k: \"0o17\"\n",
            ),
            (
                "{{ toYaml .v }}",
                r#"{"v": {"k": "0b101"}}"#,
                "k: \"0b101\"\n",
            ),
            (
                "{{ toYaml .v }}",
                r#"{"v": {"k": "0b+1"}}"#,
                "k: \"0b+1\"\n",
            ),
            (
                "{{ toYaml .v }}",
                r#"{"v": {"k": "0b-1"}}"#,
                "k: \"0b-1\"\n",
            ),
            ("{{ toYaml .v }}", r#"{"v": {"k": "-0b-1"}}"#, "k: -0b-1\n"),
            ("{{ toYaml .v }}", r#"{"v": {"k": "0b2"}}"#, "k: 0b2\n"),
            (
                "{{ toYaml .v }}",
                r#"{"v": {"k": "0777"}}"#,
                "k: \"0777\"\n",
            ),
            ("{{ toYaml .v }}", r#"{"v": {"k": "08"}}"#, "k: \"08\"\n"),
            ("{{ toYaml .v }}", r#"{"v": {"k": ".5"}}"#, "k: \".5\"\n"),
            (
                "{{ toYaml .v }}",
                r#"{"v": {"k": ".inf"}}"#,
                "k: \".inf\"\n",
            ),
            (
                "{{ toYaml .v }}",
                r#"{"v": {"k": "-.inf"}}"#,
                "k: \"-.inf\"\n",
            ),
            (
                "{{ toYaml .v }}",
                r#"{"v": {"k": ".nan"}}"#,
                "k: \".nan\"\n",
            ),
            ("{{ toYaml .v }}", r#"{"v": {"k": "1."}}"#, "k: \"1.\"\n"),
            ("{{ toYaml .v }}", r#"{"v": {"k": "-"}}"#, "k: '-'\n"),
            ("{{ toYaml .v }}", r#"{"v": {"k": "---"}}"#, "k: '---'\n"),
            ("{{ toYaml .v }}", r#"{"v": {"k": "..."}}"#, "k: '...'\n"),
            ("{{ toYaml .v }}", r#"{"v": {"k": "- a"}}"#, "k: '- a'\n"),
            ("{{ toYaml .v }}", r#"{"v": {"k": "-a"}}"#, "k: -a\n"),
            ("{{ toYaml .v }}", r#"{"v": {"k": "a-"}}"#, "k: a-\n"),
            ("{{ toYaml .v }}", r#"{"v": {"k": ":"}}"#, "k: ':'\n"),
            ("{{ toYaml .v }}", r#"{"v": {"k": "a:"}}"#, "k: 'a:'\n"),
            ("{{ toYaml .v }}", r#"{"v": {"k": "a: b"}}"#, "k: 'a: b'\n"),
            ("{{ toYaml .v }}", r#"{"v": {"k": "a:b"}}"#, "k: a:b\n"),
            (
                "{{ toYaml .v }}",
                r#"{"v": {"k": "http://x.y/z"}}"#,
                "k: http://x.y/z\n",
            ),
            ("{{ toYaml .v }}", r#"{"v": {"k": "? x"}}"#, "k: '? x'\n"),
            ("{{ toYaml .v }}", r#"{"v": {"k": "?x"}}"#, "k: ?x\n"),
            ("{{ toYaml .v }}", "{\"v\": {\"k\": \"#x\"}}", "k: '#x'\n"),
            ("{{ toYaml .v }}", r#"{"v": {"k": "a #b"}}"#, "k: 'a #b'\n"),
            ("{{ toYaml .v }}", r#"{"v": {"k": "a#b"}}"#, "k: a#b\n"),
            ("{{ toYaml .v }}", r#"{"v": {"k": "[a]"}}"#, "k: '[a]'\n"),
            ("{{ toYaml .v }}", r#"{"v": {"k": "{a}"}}"#, "k: '{a}'\n"),
            ("{{ toYaml .v }}", r#"{"v": {"k": "a,b"}}"#, "k: a,b\n"),
            ("{{ toYaml .v }}", r#"{"v": {"k": "a]"}}"#, "k: a]\n"),
            ("{{ toYaml .v }}", r#"{"v": {"k": "&a"}}"#, "k: '&a'\n"),
            ("{{ toYaml .v }}", r#"{"v": {"k": "*a"}}"#, "k: '*a'\n"),
            ("{{ toYaml .v }}", r#"{"v": {"k": "!a"}}"#, "k: '!a'\n"),
            ("{{ toYaml .v }}", r#"{"v": {"k": "|a"}}"#, "k: '|a'\n"),
            ("{{ toYaml .v }}", r#"{"v": {"k": ">a"}}"#, "k: '>a'\n"),
            ("{{ toYaml .v }}", r#"{"v": {"k": "'a'"}}"#, "k: '''a'''\n"),
            (
                "{{ toYaml .v }}",
                "{\"v\": {\"k\": \"\\\"a\\\"\"}}",
                "k: '\"a\"'\n",
            ),
            ("{{ toYaml .v }}", r#"{"v": {"k": "%a"}}"#, "k: '%a'\n"),
            ("{{ toYaml .v }}", r#"{"v": {"k": "@a"}}"#, "k: '@a'\n"),
            ("{{ toYaml .v }}", r#"{"v": {"k": "`a"}}"#, "k: '`a'\n"),
            ("{{ toYaml .v }}", r#"{"v": {"k": "a'b"}}"#, "k: a'b\n"),
            (
                "{{ toYaml .v }}",
                "{\"v\": {\"k\": \"a\\\"b\"}}",
                "k: a\"b\n",
            ),
            (
                "{{ toYaml .v }}",
                "{\"v\": {\"k\": \"a\\\\b\"}}",
                "k: a\\b\n",
            ),
            (
                "{{ toYaml .v }}",
                r#"{"v": {"k": "leading space"}}"#,
                "k: leading space\n",
            ),
            (
                "{{ toYaml .v }}",
                r#"{"v": {"k": " lead"}}"#,
                "k: ' lead'\n",
            ),
            (
                "{{ toYaml .v }}",
                r#"{"v": {"k": "trail "}}"#,
                "k: 'trail '\n",
            ),
            (
                "{{ toYaml .v }}",
                "{\"v\": {\"k\": \"tab\\there\"}}",
                "k: \"tab\\there\"\n",
            ),
            (
                "{{ toYaml .v }}",
                "{\"v\": {\"k\": \"a\\nb\"}}",
                "k: |-\n  a\n  b\n",
            ),
            (
                "{{ toYaml .v }}",
                "{\"v\": {\"k\": \"a\\nb\\n\"}}",
                "k: |\n  a\n  b\n",
            ),
            (
                "{{ toYaml .v }}",
                "{\"v\": {\"k\": \"a\\n\\nb\"}}",
                "k: |-\n  a\n\n  b\n",
            ),
            (
                "{{ toYaml .v }}",
                "{\"v\": {\"k\": \"a\\nb\\n\\n\"}}",
                "k: |+\n  a\n  b\n\n",
            ),
            (
                "{{ toYaml .v }}",
                "{\"v\": {\"k\": \" a\\nb\"}}",
                "k: |2-\n   a\n  b\n",
            ),
            (
                "{{ toYaml .v }}",
                "{\"v\": {\"k\": \"a \\nb\"}}",
                "k: \"a \\nb\"\n",
            ),
            (
                "{{ toYaml .v }}",
                "{\"v\": {\"k\": \"a\\r\\nb\"}}",
                "k: \"a\\r\\nb\"\n",
            ),
            ("{{ toYaml .v }}", "{\"v\": {\"k\": \"\\n\"}}", "k: |2+\n\n"),
            (
                "{{ toYaml .v }}",
                "{\"v\": {\"k\": \"\\u00e9\"}}",
                "k: \u{e9}\n",
            ),
            (
                "{{ toYaml .v }}",
                "{\"v\": {\"k\": \"\\u65e5\\u672c\"}}",
                "k: \u{65e5}\u{672c}\n",
            ),
            (
                "{{ toYaml .v }}",
                "{\"v\": {\"k\": \"\\ud83d\\ude00\"}}",
                "k: \"\\U0001F600\"\n",
            ),
            (
                "{{ toYaml .v }}",
                "{\"v\": {\"k\": \"\\u00a0\"}}",
                "k: \u{a0}\n",
            ),
            (
                "{{ toYaml .v }}",
                "{\"v\": {\"k\": \"a\\u0085b\"}}",
                "k: \"a\\Nb\"\n",
            ),
            (
                "{{ toYaml .v }}",
                "{\"v\": {\"k\": \"\\ufeffbom\"}}",
                "k: \"\\uFEFF\\x62\\x6F\\x6D\"\n",
            ),
            (
                "{{ toYaml .v }}",
                "{\"v\": {\"k\": \"x\\u0001y\"}}",
                "k: \"x\\x01y\"\n",
            ),
            (
                "{{ toYaml .v }}",
                "{\"v\": {\"k\": \"\\u007f\"}}",
                "k: \"\\x7F\"\n",
            ),
            (
                "{{ toYaml .v }}",
                r#"{"v": {"k": "2020-01-01"}}"#,
                "k: \"2020-01-01\"\n",
            ),
            (
                "{{ toYaml .v }}",
                r#"{"v": {"k": "2020-13-01"}}"#,
                "k: 2020-13-01\n",
            ),
            (
                "{{ toYaml .v }}",
                r#"{"v": {"k": "2020-02-30"}}"#,
                "k: 2020-02-30\n",
            ),
            (
                "{{ toYaml .v }}",
                r#"{"v": {"k": "2020-02-29"}}"#,
                "k: \"2020-02-29\"\n",
            ),
            (
                "{{ toYaml .v }}",
                r#"{"v": {"k": "2019-02-29"}}"#,
                "k: 2019-02-29\n",
            ),
            (
                "{{ toYaml .v }}",
                r#"{"v": {"k": "2020-01-01T10:00:00Z"}}"#,
                "k: \"2020-01-01T10:00:00Z\"\n",
            ),
            (
                "{{ toYaml .v }}",
                r#"{"v": {"k": "2020-01-01 10:00:00"}}"#,
                "k: \"2020-01-01 10:00:00\"\n",
            ),
            (
                "{{ toYaml .v }}",
                r#"{"v": {"k": "2020-01-01T10:00:00.123+02:00"}}"#,
                "k: \"2020-01-01T10:00:00.123+02:00\"\n",
            ),
            (
                "{{ toYaml .v }}",
                r#"{"v": {"k": "2020-01-01T25:00:00Z"}}"#,
                "k: 2020-01-01T25:00:00Z\n",
            ),
            (
                "{{ toYaml .v }}",
                r#"{"v": {"k": "2020-01-01T10:00:00"}}"#,
                "k: 2020-01-01T10:00:00\n",
            ),
            (
                "{{ toYaml .v }}",
                r#"{"v": {"k": "1:30"}}"#,
                "k: \"1:30\"\n",
            ),
            ("{{ toYaml .v }}", r#"{"v": {"k": "1:70"}}"#, "k: 1:70\n"),
            (
                "{{ toYaml .v }}",
                r#"{"v": {"k": "12:30:45"}}"#,
                "k: \"12:30:45\"\n",
            ),
            (
                "{{ toYaml .v }}",
                r#"{"v": {"k": "-1:30"}}"#,
                "k: \"-1:30\"\n",
            ),
            ("{{ toYaml .v }}", r#"{"v": {"k": "<<"}}"#, "k: <<\n"),
            ("{{ toYaml .v }}", r#"{"v": {"k": "="}}"#, "k: =\n"),
            ("{{ toYaml .v }}", r#"{"v": {"k": "0"}}"#, "k: \"0\"\n"),
            ("{{ toYaml .v }}", r#"{"v": {"k": "1e400"}}"#, "k: 1e400\n"),
            (
                "{{ toYaml .v }}",
                r#"{"v": {"k": "123456789012345678901234567890"}}"#,
                "k: \"123456789012345678901234567890\"\n",
            ),
            (
                "{{ toYaml .v }}",
                r#"{"v": {"k": "0xFFFFFFFFFFFFFFFFFF"}}"#,
                "k: 0xFFFFFFFFFFFFFFFFFF\n",
            ),
            (
                "{{ toYaml .v }}",
                r#"{"v": {"k": "18446744073709551615"}}"#,
                "k: \"18446744073709551615\"\n",
            ),
            (
                "{{ toYaml .v }}",
                r#"{"v": {"k": "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}}"#,
                "k: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n",
            ),
            (
                "{{ toYaml .v }}",
                r#"{"v": {"k": "word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word"}}"#,
                "k: word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word\n",
            ),
            (
                "{{ toYaml .v }}",
                r#"{"v": {"k": "key: value"}}"#,
                "k: 'key: value'\n",
            ),
            (
                "{{ toYaml .v }}",
                r#"{"v": {"k": "foo bar: baz"}}"#,
                "k: 'foo bar: baz'\n",
            ),
        ]);
    }

    #[test]
    fn to_yaml_string_positions() {
        check(&[
            // yaml.v2 Marshal (read from encode.go/emitterc.go; checked against Go)
            ("{{ toYaml .v }}", r#"{"v": "a"}"#, "a\n"),
            ("{{ toYaml .v }}", r#"{"v": ""}"#, "\"\"\n"),
            ("{{ toYaml .v }}", r#"{"v": "true"}"#, "\"true\"\n"),
            ("{{ toYaml .v }}", "{\"v\": \"a\\nb\"}", "|-\n  a\n  b\n"),
            ("{{ toYaml .v }}", "{\"v\": \"a\\nb\\n\"}", "|\n  a\n  b\n"),
            ("{{ toYaml .v }}", "{\"v\": \"\\n\\n\"}", "|2+\n\n\n"),
            ("{{ toYaml .v }}", r#"{"v": "trail "}"#, "'trail '\n"),
            (
                "{{ toYaml .v }}",
                "{\"v\": [\"a\", \"\", \"true\", \"a\\nb\", \" x\"]}",
                "- a\n- \"\"\n- \"true\"\n- |-\n  a\n  b\n- ' x'\n",
            ),
            (
                "{{ toYaml .v }}",
                "{\"v\": {\"\": 1, \"true\": 2, \"a\\nb\": 3, \"kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk\": 4, \"a b\": 5, \"- x\": 6}}",
                "\"\": 1\n'- x': 6\n? |-\n  a\n  b\n: 3\na b: 5\n? kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk\n: 4\n\"true\": 2\n",
            ),
        ]);
    }

    #[test]
    fn to_yaml_values() {
        check(&[
            // yaml.v2 Marshal (read from encode.go/emitterc.go; checked against Go)
            ("{{ toYaml .v }}", r#"{"v": null}"#, "null\n"),
            ("{{ toYaml .v }}", r#"{"v": true}"#, "true\n"),
            ("{{ toYaml .v }}", r#"{"v": false}"#, "false\n"),
            ("{{ toYaml .v }}", r#"{"v": 0}"#, "0\n"),
            ("{{ toYaml .v }}", r#"{"v": 1}"#, "1\n"),
            ("{{ toYaml .v }}", r#"{"v": -5}"#, "-5\n"),
            ("{{ toYaml .v }}", r#"{"v": 1.5}"#, "1.5\n"),
            ("{{ toYaml .v }}", r#"{"v": 1000000.0}"#, "1e+06\n"),
            ("{{ toYaml .v }}", r#"{"v": 1e+21}"#, "1e+21\n"),
            ("{{ toYaml .v }}", r#"{"v": 1e-07}"#, "1e-07\n"),
            ("{{ toYaml .v }}", r#"{"v": 0.1}"#, "0.1\n"),
            ("{{ toYaml .v }}", r#"{"v": 100.0}"#, "100\n"),
            (
                "{{ toYaml .v }}",
                r#"{"v": 123456789.0}"#,
                "1.23456789e+08\n",
            ),
            ("{{ toYaml .v }}", r#"{"v": 3.0}"#, "3\n"),
            (
                "{{ toYaml .v }}",
                r#"{"v": 9223372036854775807}"#,
                "9223372036854775807\n",
            ),
            ("{{ toYaml .v }}", r#"{"v": []}"#, "[]\n"),
            ("{{ toYaml .v }}", r#"{"v": {}}"#, "{}\n"),
            ("{{ toYaml .v }}", r#"{"v": [[]]}"#, "- []\n"),
            ("{{ toYaml .v }}", r#"{"v": [{}]}"#, "- {}\n"),
            ("{{ toYaml .v }}", r#"{"v": {"a": []}}"#, "a: []\n"),
            ("{{ toYaml .v }}", r#"{"v": {"a": {}}}"#, "a: {}\n"),
            (
                "{{ toYaml .v }}",
                r#"{"v": [1, [2, [3, []]], {"a": [1, {"b": {}}]}]}"#,
                "- 1\n- - 2\n  - - 3\n    - []\n- a:\n  - 1\n  - b: {}\n",
            ),
            (
                "{{ toYaml .v }}",
                r#"{"v": {"b": 1, "a": 2, "c": {"z": [1, 2], "y": {"x": "v"}}}}"#,
                "a: 2\nb: 1\nc:\n  \"y\":\n    x: v\n  z:\n  - 1\n  - 2\n",
            ),
            (
                "{{ toYaml .v }}",
                r#"{"v": {"list": [{"name": "a", "value": "1"}, {"name": "b", "items": ["x", "y"]}]}}"#,
                "list:\n- name: a\n  value: \"1\"\n- items:\n  - x\n  - \"y\"\n  name: b\n",
            ),
            (
                "{{ toYaml .v }}",
                r#"{"v": [[1, 2], [3, [4, 5]], {"a": [6, 7]}]}"#,
                "- - 1\n  - 2\n- - 3\n  - - 4\n    - 5\n- a:\n  - 6\n  - 7\n",
            ),
            (
                "{{ toYaml .v }}",
                "{\"v\": {\"a\": \"multi\\nline\\nvalue\", \"b\": [\"x\\ny\", \"z\"], \"c\": {\"d\": \"e\\n\"}}}",
                "a: |-\n  multi\n  line\n  value\nb:\n- |-\n  x\n  y\n- z\nc:\n  d: |\n    e\n",
            ),
            (
                "{{ toYaml .v }}",
                r#"{"v": {"nested": {"deep": {"deeper": {"deepest": ["a", "b", {"c": "d"}]}}}}}"#,
                "nested:\n  deep:\n    deeper:\n      deepest:\n      - a\n      - b\n      - c: d\n",
            ),
            (
                "{{ toYaml .v }}",
                r#"{"v": [null, null]}"#,
                "- null\n- null\n",
            ),
            ("{{ toYaml .v }}", r#"{"v": {"n": null}}"#, "\"n\": null\n"),
            // KUDO engine_test.go TestRender "toYaml"
            (
                "{{ toYaml .Params.Dict | trim | indent 2 }}",
                r#"{"Params": {"Dict": {"Foo": "Bar", "Baz": "Quux"}}}"#,
                "  Baz: Quux\n  Foo: Bar",
            ),
            // yaml.v2 Marshal (read from encode.go/emitterc.go; checked against Go)
            (
                r#"{{ toYaml (list 1 "a" (dict "x" 1.5)) }}|{{ toYaml nil }}|{{ toYaml "" }}"#,
                "{}",
                "- 1\n- a\n- x: 1.5\n|null\n|\"\"\n",
            ),
        ]);
    }

    #[test]
    fn to_yaml_key_order() {
        check(&[
            // yaml.v2 sorter.go keyList.Less
            (
                "{{ toYaml .v }}",
                "{\"v\": {\"a10\": 1, \"a2\": 2, \"a1\": 3, \"A\": 4, \"_x\": 5, \"1\": 6, \"10\": 7, \"9\": 8, \"b\": 9, \"B\": 10, \"a01\": 11, \"a001\": 12, \"-\": 13, \".\": 14, \"\\u00e9\": 15, \"z\": 16, \"Z\": 17, \"x-1\": 18, \"x_1\": 19, \"x.10\": 20, \"x.9\": 21}}",
                "'-': 13\n.: 14\n_x: 5\n\"1\": 6\n\"9\": 8\n\"10\": 7\nA: 4\nB: 10\nZ: 17\na1: 3\na01: 11\na001: 12\na2: 2\na10: 1\nb: 9\nx-1: 18\nx.9: 21\nx.10: 20\nx_1: 19\nz: 16\n\u{e9}: 15\n",
            ),
        ]);
    }

    #[test]
    fn errors() {
        // (template, data, expected message). Messages are Go text/template's and
        // sprig's (after Go's "template: t:1:3: executing ... at <...>: " prefix),
        // except where noted: Go reports literal arguments as "expected string; found 1".
        check_err(&[
            // Go (literal argument): expected string; found 1
            (
                "{{ upper 1 }}",
                "{}",
                "wrong type for value; expected string; got int",
            ),
            (
                "{{ trim .x }}",
                r#"{"x": null}"#,
                "wrong type for value; expected string; got interface {}",
            ),
            (
                "{{ trim .x }}",
                r#"{"x": [1]}"#,
                "wrong type for value; expected string; got []interface {}",
            ),
            (
                "{{ upper .m }}",
                r#"{"m": {"a": 1}}"#,
                "wrong type for value; expected string; got map[string]interface {}",
            ),
            // Go (literal argument): expected integer; found "5"
            (
                r#"{{ until "5" }}"#,
                "{}",
                "wrong type for value; expected int; got string",
            ),
            (
                "{{ until .n }}",
                r#"{"n": 3.0}"#,
                "wrong type for value; expected int; got float64",
            ),
            (
                r#"{{ trunc .b "abc" }}"#,
                r#"{"b": true}"#,
                "wrong type for value; expected int; got bool",
            ),
            // Go (literal argument): expected bool; found "true"
            (
                r#"{{ ternary "a" "b" "true" }}"#,
                "{}",
                "wrong type for value; expected bool; got string",
            ),
            (
                r#"{{ hasKey .m "a" }}"#,
                r#"{"m": "x"}"#,
                "wrong type for value; expected map[string]interface {}; got string",
            ),
            (
                r#"{{ hasKey .m "a" }}"#,
                r#"{"m": null}"#,
                "wrong type for value; expected map[string]interface {}; got interface {}",
            ),
            (
                "{{ mul }}",
                "{}",
                "wrong number of args for mul: want at least 1 got 0",
            ),
            (
                "{{ empty }}",
                "{}",
                "wrong number of args for empty: want 1 got 0",
            ),
            (
                "{{ max }}",
                "{}",
                "wrong number of args for max: want at least 1 got 0",
            ),
            (
                "{{ default }}",
                "{}",
                "wrong number of args for default: want at least 1 got 0",
            ),
            (
                "{{ indent 2 }}",
                "{}",
                "wrong number of args for indent: want 2 got 1",
            ),
            (
                "{{ div 1 0 }}",
                "{}",
                "error calling div: runtime error: integer divide by zero",
            ),
            (
                "{{ mod 1 0 }}",
                "{}",
                "error calling mod: runtime error: integer divide by zero",
            ),
            (
                r#"{{ repeat -1 "x" }}"#,
                "{}",
                "error calling repeat: strings: negative Repeat count",
            ),
            (
                r#"{{ indent -2 "x" }}"#,
                "{}",
                "error calling indent: strings: negative Repeat count",
            ),
            (
                r#"{{ substr 3 1 "hello" }}"#,
                "{}",
                "error calling substr: runtime error: slice bounds out of range [3:1]",
            ),
            (
                r#"{{ substr 9 20 "hello" }}"#,
                "{}",
                "error calling substr: runtime error: slice bounds out of range [9:5]",
            ),
            (
                r#"{{ substr -1 9 "hello" }}"#,
                "{}",
                "error calling substr: runtime error: slice bounds out of range [:9] with length 5",
            ),
            (
                r#"{{ trunc -1 "abc" }}"#,
                "{}",
                "error calling trunc: runtime error: slice bounds out of range [:-1]",
            ),
            (
                r#"{{ append "x" 1 }}"#,
                "{}",
                "error calling append: Cannot push on type string",
            ),
            (
                "{{ append nil 1 }}",
                "{}",
                "error calling append: runtime error: invalid memory address or nil pointer dereference",
            ),
            (
                "{{ prepend 5 1 }}",
                "{}",
                "error calling prepend: Cannot prepend on type int",
            ),
            (
                r#"{{ first "abc" }}"#,
                "{}",
                "error calling first: Cannot find first on type string",
            ),
            (
                "{{ last .m }}",
                r#"{"m": {"a": 1}}"#,
                "error calling last: Cannot find last on type map",
            ),
            (
                "{{ rest 1 }}",
                "{}",
                "error calling rest: Cannot find rest on type int",
            ),
            (
                "{{ initial true }}",
                "{}",
                "error calling initial: Cannot find initial on type bool",
            ),
            (
                r#"{{ reverse "x" }}"#,
                "{}",
                "error calling reverse: Cannot find reverse on type string",
            ),
            (
                "{{ compact 1 }}",
                "{}",
                "error calling compact: Cannot compact on type int",
            ),
            (
                "{{ uniq 1 }}",
                "{}",
                "error calling uniq: Cannot find uniq on type int",
            ),
            (
                "{{ without 1 }}",
                "{}",
                "error calling without: Cannot find without on type int",
            ),
            (
                r#"{{ has 1 "abc" }}"#,
                "{}",
                "error calling has: Cannot find has on type string",
            ),
            (
                "{{ slice (list 1 2 3) 2 1 }}",
                "{}",
                "error calling slice: reflect.Value.Slice: slice index out of bounds",
            ),
            (
                r#"{{ slice "abc" 1 }}"#,
                "{}",
                "error calling slice: list should be type of slice or array but string",
            ),
            (
                "{{ concat (list 1) 2 }}",
                "{}",
                "error calling concat: Cannot concat type int as list",
            ),
            (
                r#"{{ fail "This is an error!" }}"#,
                "{}",
                "error calling fail: This is an error!",
            ),
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

    #[test]
    fn fail_message() {
        // flow_control_test.go TestFail: the error contains the message
        check_err(&[(r#"{{fail "This is an error!"}}"#, "{}", "This is an error!")]);
    }

    #[test]
    fn documented_divergences() {
        // Where this port cannot follow Go (see the module docs); Go's output in comments.
        check(&[
            // dict_test.go TestSet: Go's set mutates $d in place and prints "123".
            (
                r#"{{- $d := dict "one" 1 "two" 222222 -}}{{- $_ := set $d "two" 2 -}}{{- $_ := set $d "three" 3 -}}{{- if hasKey $d "one" -}}{{$d.one}}{{- end -}}{{- if hasKey $d "two" -}}{{$d.two}}{{- end -}}{{- if hasKey $d "three" -}}{{$d.three}}{{- end -}}"#,
                "{}",
                "1222222",
            ),
            // ... the returned map is updated; reassigning the variable works in both.
            (
                r#"{{- $d := dict "one" 1 -}}{{- $d = set $d "two" 2 -}}{{- $d = unset $d "one" -}}{{ $d }}"#,
                "{}",
                "map[two:2]",
            ),
            // keys/values: Go returns map order (random); here sorted by key.
            (
                r#"{{ keys (dict "b" 1 "a" 2 "c" 3) }}|{{ values (dict "b" 1 "a" 2) }}"#,
                "{}",
                "[a b c]|[2 1]",
            ),
            // Go: int64 / []string / map[string]string (sprig's typed results).
            (
                r#"{{ typeOf (int64 1) }}|{{ typeOf (toStrings (list 1)) }}|{{ typeOf (split "," "a") }}"#,
                "{}",
                "int|[]interface {}|map[string]interface {}",
            ),
            // Go prints the *Version as "1.2.3".
            (
                r#"{{ semver "v1.2.3" }}"#,
                "{}",
                "map[Major:1 Metadata: Minor:2 Original:v1.2.3 Patch:3 Prerelease: String:1.2.3]",
            ),
        ]);
        // Go: `hasKey nil "a"` (a nil literal) is false; gotmpl cannot tell it from nil data.
        check_err(&[(
            r#"{{ hasKey nil "a" }}"#,
            "{}",
            "expected map[string]interface {}; got interface {}",
        )]);
    }

    #[test]
    fn sprig_names() {
        assert_eq!(SPRIG_NAMES.len(), 150);
        let mut sorted = SPRIG_NAMES.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), SPRIG_NAMES.len(), "duplicate names");
        let implemented = funcs();
        for name in implemented.keys() {
            assert!(
                name == "toYaml" || SPRIG_NAMES.contains(&name.as_str()),
                "{name} is not a sprig v2.22 function"
            );
        }
        for name in ["required", "get", "fromJson", "mustToJson", "toYaml"] {
            assert!(!SPRIG_NAMES.contains(&name), "{name} is not in sprig v2.22");
        }
        for name in [
            "env",
            "expandenv",
            "base",
            "dir",
            "clean",
            "ext",
            "isAbs",
            "regexMatch",
            "now",
            "merge",
        ] {
            assert!(
                SPRIG_NAMES.contains(&name) && !implemented.contains_key(name),
                "{name}"
            );
        }
        assert_eq!(implemented.len(), 105);
    }

    #[test]
    fn go_number_formatting() {
        let cases: &[(f64, &str, &str, &str)] = &[
            (0.0, "0", "0e+00", "0"),
            (-0.0, "-0", "-0e+00", "-0"),
            (1.0, "1", "1e+00", "1"),
            (1.5, "1.5", "1.5e+00", "1.5"),
            (100000.0, "100000", "1e+05", "100000"),
            (1e6, "1e+06", "1e+06", "1000000"),
            (123456789.0, "1.23456789e+08", "1.23456789e+08", "123456789"),
            (0.0001, "0.0001", "1e-04", "0.0001"),
            (0.00001, "1e-05", "1e-05", "0.00001"),
            (1e21, "1e+21", "1e+21", "1000000000000000000000"),
            (f64::INFINITY, "+Inf", "+Inf", "+Inf"),
            (f64::NAN, "NaN", "NaN", "NaN"),
        ];
        for &(f, g, e, fixed) in cases {
            assert_eq!(format_float(f, b'g'), g, "{f} g");
            assert_eq!(format_float(f, b'e'), e, "{f} e");
            assert_eq!(format_float(f, b'f'), fixed, "{f} f");
        }
        assert_eq!(parse_float("1_0.5e1_0"), Some(10.5e10));
        assert_eq!(parse_float("_1"), None);
        assert_eq!(parse_float("+Infinity"), Some(f64::INFINITY));
        assert_eq!(parse_float("+nan"), None);
        assert!(is_go_int_base0("0x_1F") && is_go_int_base0("-9223372036854775808"));
        assert!(!is_go_int_base0("-9223372036854775809") && !is_go_int_base0("0x"));
    }
}
