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

use std::path::Path;

use serde_json::Value;

use crate::document;
use crate::scalar::block_header;
#[cfg(doc)]
use crate::strconv;
use kudo_diag::error::Error;

pub use crate::scalar::{Plain, resolve};

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scalar::*;
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
