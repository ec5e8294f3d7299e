//! `kudo-sprig`: the Go template functions of [sprig] v2.22.0 (`sprig.TxtFuncMap()`, a subset) plus
//! KUDO's `toYaml`, for the `gotmpl` crate.
//!
//! This crate follows Masterminds/sprig v2.22.0 and the libraries that KUDO (the
//! consumer of these templates) pins next to it: Masterminds/semver v1.5.0,
//! Masterminds/goutils v1.1.0 and gopkg.in/yaml.v2 v2.3.0, plus the Go standard
//! library (`strconv`, `fmt`, `encoding/json`, `encoding/base64`, …) as of Go 1.16.
//! It was written from reading that Go source; no Go code is copied.
//!
//! The [`semver`] module is public: it is kudo's reader of versions and version ranges
//! ([`semver::Version`], [`semver::Constraint`], [`semver::Range`]), which kudo-pkg's
//! repositories and `verify` use too.
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
//!   `>=1.0 <2.0` is an `improper constraint` error, exactly as in Go. Versions are read by
//!   the [`semver`] module, kudo's one version parser, which refuses a numeric prerelease
//!   identifier with a leading zero (`1.2.3-01`, SemVer 2.0's rule; Masterminds reads it).
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
//!   with yaml.v2's "natural" key order. Whether a string is written plain is go-yaml v2's
//!   resolver, `kudo_yaml::manifest::resolve`: the one kudo reads rendered manifests with.
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
//! The functions live in modules named for what they work on, as sprig's own files are
//! (`strings`, `math`, `defaults`, `encoding`, `reflect`, `lists`, `dicts`, `semver`,
//! `crypto`, `yaml`, and `strconv` for Go's number and string syntax); this file holds the
//! table, and the argument checking and coercions they share.
//!
//! [sprig]: https://github.com/Masterminds/sprig

use std::collections::BTreeMap;
use std::sync::{Arc, LazyLock};

use gotmpl::{FuncMap, Result, TemplateError, Value};

mod crypto;
mod defaults;
mod dicts;
mod encoding;
mod lists;
mod math;
mod reflect;
pub mod semver;
mod strconv;
mod strings;
#[cfg(test)]
mod testing;

use strconv::parse_float;
mod yaml;

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
    ("hello", strings::f_hello),
    ("abbrev", strings::f_abbrev),
    ("abbrevboth", strings::f_abbrevboth),
    ("trunc", strings::f_trunc),
    ("trim", strings::f_trim),
    ("upper", strings::f_upper),
    ("lower", strings::f_lower),
    ("title", strings::f_title),
    ("untitle", strings::f_untitle),
    ("substr", strings::f_substr),
    ("repeat", strings::f_repeat),
    ("trimall", strings::f_trim_all),
    ("trimAll", strings::f_trim_all),
    ("trimSuffix", strings::f_trim_suffix),
    ("trimPrefix", strings::f_trim_prefix),
    ("nospace", strings::f_nospace),
    ("initials", strings::f_initials),
    ("swapcase", strings::f_swapcase),
    ("wrap", strings::f_wrap),
    ("wrapWith", strings::f_wrap_with),
    ("contains", strings::f_contains),
    ("hasPrefix", strings::f_has_prefix),
    ("hasSuffix", strings::f_has_suffix),
    ("quote", strings::f_quote),
    ("squote", strings::f_squote),
    ("cat", strings::f_cat),
    ("indent", strings::f_indent),
    ("nindent", strings::f_nindent),
    ("replace", strings::f_replace),
    ("plural", strings::f_plural),
    ("sha1sum", crypto::f_sha1sum),
    ("sha256sum", crypto::f_sha256sum),
    ("adler32sum", crypto::f_adler32sum),
    ("toString", strings::f_to_string),
    ("atoi", math::f_atoi),
    ("int64", math::f_int64),
    ("int", math::f_int64),
    ("float64", math::f_float64),
    ("toDecimal", math::f_to_decimal),
    ("split", strings::f_split),
    ("splitList", strings::f_split_list),
    ("splitn", strings::f_splitn),
    ("toStrings", strings::f_to_strings),
    ("until", math::f_until),
    ("untilStep", math::f_until_step),
    ("add1", math::f_add1),
    ("add", math::f_add),
    ("sub", math::f_sub),
    ("div", math::f_div),
    ("mod", math::f_mod),
    ("mul", math::f_mul),
    ("biggest", math::f_max),
    ("max", math::f_max),
    ("min", math::f_min),
    ("ceil", math::f_ceil),
    ("floor", math::f_floor),
    ("round", math::f_round),
    ("join", strings::f_join),
    ("sortAlpha", strings::f_sort_alpha),
    ("default", defaults::f_default),
    ("empty", defaults::f_empty),
    ("coalesce", defaults::f_coalesce),
    ("compact", lists::f_compact),
    ("deepCopy", defaults::f_deep_copy),
    ("toJson", encoding::f_to_json),
    ("toPrettyJson", encoding::f_to_pretty_json),
    ("ternary", defaults::f_ternary),
    ("typeOf", reflect::f_type_of),
    ("typeIs", reflect::f_type_is),
    ("typeIsLike", reflect::f_type_is_like),
    ("kindOf", reflect::f_kind_of),
    ("kindIs", reflect::f_kind_is),
    ("deepEqual", reflect::f_deep_equal),
    ("b64enc", encoding::f_b64enc),
    ("b64dec", encoding::f_b64dec),
    ("b32enc", encoding::f_b32enc),
    ("b32dec", encoding::f_b32dec),
    ("tuple", lists::f_list),
    ("list", lists::f_list),
    ("dict", dicts::f_dict),
    ("set", dicts::f_set),
    ("unset", dicts::f_unset),
    ("hasKey", dicts::f_has_key),
    ("pluck", dicts::f_pluck),
    ("keys", dicts::f_keys),
    ("pick", dicts::f_pick),
    ("omit", dicts::f_omit),
    ("values", dicts::f_values),
    ("append", lists::f_push),
    ("push", lists::f_push),
    ("prepend", lists::f_prepend),
    ("first", lists::f_first),
    ("rest", lists::f_rest),
    ("last", lists::f_last),
    ("initial", lists::f_initial),
    ("reverse", lists::f_reverse),
    ("uniq", lists::f_uniq),
    ("without", lists::f_without),
    ("has", lists::f_has),
    ("slice", lists::f_slice),
    ("concat", lists::f_concat),
    ("semver", semver::f_semver),
    ("semverCompare", semver::f_semver_compare),
    ("fail", f_fail),
    ("toYaml", yaml::f_to_yaml),
];

/// Sprig's functions (the subset described in the module docs) plus KUDO's
/// `toYaml`, keyed by name. The map is built once; `Template::funcs` takes its own copy,
/// whose functions are shared.
pub fn funcs() -> &'static FuncMap {
    static FUNCS: LazyLock<FuncMap> = LazyLock::new(|| {
        let mut m = FuncMap::new();
        for &(name, f) in TABLE {
            m.insert(
                name.to_string(),
                Arc::new(move |args: &[Value]| f(name, args)),
            );
        }
        m
    });
    &FUNCS
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

/// sprig's `fail` (`flow_control.go`): the message is the error.
fn f_fail(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 1)?;
    Err(call_err(name, arg_str(name, &a[0])?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{check, check_err};

    #[test]
    fn fail_hello() {
        check(&[
            // functions.go hello
            ("{{ hello }}", "{}", "Hello!"),
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
                r#"{{ fail "This is an error!" }}"#,
                "{}",
                "error calling fail: This is an error!",
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
}
