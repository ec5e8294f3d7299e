//! `typing`: the one rule that turns a value given as text into a typed parameter value.
//!
//! Text reaches parameters in three ways, and all three are typed here, the same way:
//! a `-p` value (`-p replicas=3`), a value stored by a `kudo.dev/v1beta1` Instance (where every
//! value is a string: `"3"`, `"true"`, `"[80, 443]"`), and an answer to the `package add
//! parameter` wizard. The rule, by the parameter's JSON-schema `type`:
//!
//! | type | accepted text | refused |
//! |---|---|---|
//! | `string` | the text as written (`123`, `NO`, `a: b` stay strings); quotes are removed | nothing |
//! | `integer` | decimal digits with an optional sign (`3`, `-1`, `+7`, `007`), within 64 bits | `1e3`, `0x1A`, `0o17`, `1_000`, `1.0`, `9223372036854775808` |
//! | `number` | a decimal integer (kept an integer) or a decimal fraction (`0.5`, `2.5e-3`) whose value a 64-bit float holds exactly as written | `0x1A`, `.inf`, `nan`, digits beyond what a float keeps (`0.30000000000000000001`) |
//! | `boolean` | `true`, `false` (also `True`, `TRUE`, `False`, `FALSE`: YAML 1.2's core schema) | `yes`, `on`, `1`, `t` |
//! | `array`, `object` | YAML or JSON text of that shape (`[a, b]`, `{k: v}`); empty text is an empty collection | any other shape |
//! | `null` | `null`, `~` or empty text | |
//!
//! A parameter with several types tries them in the order integer, number, boolean, null, array,
//! object, string; one without a type takes the text as YAML. The value is never printed in an
//! error (it may be a secret): [`TextError`] says why in words, and its help shows the accepted
//! form when one is obvious (`0x1A` -> "write 26").

use serde_json::{Map, Number, Value};

use crate::params::{ParamSchema, V1beta1Params, V1beta1Type};
use kudo_diag::diag::{Code, Diagnostic, Origin, Shown};
use kudo_diag::pointer;
use kudo_yaml::document;

/// Why a text cannot be a value of its parameter's type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TextError {
    /// Not decimal integer digits (`1e3`, `0x1A`, `1.5`, `ten`).
    NotInteger {
        /// The decimal form, when the text is an integer written another way.
        decimal: Option<String>,
    },
    /// An integer outside the 64-bit range.
    IntegerOutOfRange,
    /// Not a decimal number.
    NotNumber,
    /// A number with more digits than a 64-bit float keeps.
    LosesPrecision {
        /// What would be stored.
        stored: String,
    },
    /// Not `true` or `false`.
    NotBoolean,
    /// Not YAML of the expected shape.
    NotShape {
        /// `array` or `object`.
        expected: &'static str,
        /// The YAML parser's complaint, if it failed.
        yaml: Option<String>,
    },
    /// A non-text value (a number, a map...) of the wrong type.
    WrongType {
        /// The JSON type of the value.
        found: &'static str,
        /// The types the parameter takes.
        expected: String,
    },
}

impl std::fmt::Display for TextError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TextError::NotInteger { decimal: Some(d) } => write!(
                f,
                "is not an integer in decimal digits (write {d}): hexadecimal, octal, exponents and fractions are refused"
            ),
            TextError::NotInteger { decimal: None } => {
                write!(f, "is not an integer (decimal digits, optionally signed)")
            }
            TextError::IntegerOutOfRange => write!(
                f,
                "is an integer outside the 64-bit range ({} to {})",
                i64::MIN,
                i64::MAX
            ),
            TextError::NotNumber => write!(f, "is not a decimal number"),
            TextError::LosesPrecision { stored } => write!(
                f,
                "has more digits than a 64-bit number keeps: it would be stored as {stored}"
            ),
            TextError::NotBoolean => write!(f, "is not a boolean (true or false)"),
            TextError::NotShape {
                expected,
                yaml: Some(e),
            } => write!(f, "is not YAML of an {expected}: {e}"),
            TextError::NotShape {
                expected,
                yaml: None,
            } => write!(f, "is not YAML of an {expected}"),
            TextError::WrongType { found, expected } => {
                write!(f, "is a {found}, not {expected}")
            }
        }
    }
}

/// Types `text` for a parameter of JSON-schema `types` (empty: no declared type).
pub fn from_text(types: &[&str], text: &str) -> Result<Value, TextError> {
    let allows = |t: &str| types.contains(&t);
    if types.is_empty() {
        return document::parse_value(text).map_err(|e| TextError::NotShape {
            expected: "value",
            yaml: Some(e.message),
        });
    }
    let trimmed = text.trim();
    let unquoted = unquote(trimmed);
    let scalar = unquoted.as_deref().unwrap_or(trimmed);
    let only_string = types.iter().all(|t| *t == "string" || *t == "null");
    if only_string {
        if allows("null") && unquoted.is_none() && is_null(trimmed) {
            return Ok(Value::Null);
        }
        // A string parameter takes the text as written (only surrounding quotes go).
        return Ok(Value::String(unquoted.unwrap_or_else(|| text.to_string())));
    }
    let mut first_error = None;
    let mut note = |e: TextError| {
        if first_error.is_none() {
            first_error = Some(e);
        }
    };
    if allows("integer") {
        match integer(scalar) {
            Ok(v) => return Ok(v),
            Err(e) => {
                if !(allows("number") && e == TextError::IntegerOutOfRange) {
                    note(e)
                }
            }
        }
    }
    if allows("number") {
        match number(scalar) {
            Ok(v) => return Ok(v),
            Err(e) => note(e),
        }
    }
    if allows("boolean") {
        match boolean(scalar) {
            Some(b) => return Ok(Value::Bool(b)),
            None => note(TextError::NotBoolean),
        }
    }
    if allows("null") && unquoted.is_none() && is_null(trimmed) {
        return Ok(Value::Null);
    }
    for (t, expected) in [("array", "array"), ("object", "object")] {
        if !allows(t) {
            continue;
        }
        if trimmed.is_empty() {
            return Ok(if t == "array" {
                Value::Array(Vec::new())
            } else {
                Value::Object(Map::new())
            });
        }
        match document::parse_value(text) {
            Ok(v @ Value::Array(_)) if t == "array" => return Ok(v),
            Ok(v @ Value::Object(_)) if t == "object" => return Ok(v),
            Ok(_) => note(TextError::NotShape {
                expected,
                yaml: None,
            }),
            Err(e) => note(TextError::NotShape {
                expected,
                yaml: Some(e.message),
            }),
        }
    }
    if allows("string") {
        return Ok(Value::String(unquoted.unwrap_or_else(|| text.to_string())));
    }
    Err(first_error.unwrap_or(TextError::WrongType {
        found: "string",
        expected: types.join(" or "),
    }))
}

/// Types a stored value for a parameter of `types`: a string is typed by [`from_text`]
/// (a v1beta1 Instance's `"3"`); a value that already has a type must be one of `types`
/// (a number for a string parameter becomes its text, as v1beta1 stored it).
pub fn from_value(types: &[&str], value: &Value) -> Result<Value, TextError> {
    if types.is_empty() {
        return Ok(value.clone());
    }
    let allows = |t: &str| types.contains(&t);
    match value {
        Value::String(s) => {
            if allows("string") {
                return Ok(value.clone());
            }
            from_text(types, s)
        }
        Value::Number(n) if allows("integer") && (n.is_i64() || n.is_u64()) => {
            if n.is_u64() && !n.is_i64() && !allows("number") {
                return Err(TextError::IntegerOutOfRange);
            }
            Ok(value.clone())
        }
        Value::Number(_) if allows("number") => Ok(value.clone()),
        Value::Number(n) if allows("integer") => Err(TextError::NotInteger {
            decimal: n
                .as_f64()
                .filter(|f| f.fract() == 0.0 && f.abs() < 9.0e15)
                .map(|f| format!("{}", f as i64)),
        }),
        Value::Number(n) if allows("string") => Ok(Value::String(n.to_string())),
        Value::Bool(b) if !allows("boolean") && allows("string") => {
            Ok(Value::String(b.to_string()))
        }
        Value::Bool(_) if allows("boolean") => Ok(value.clone()),
        Value::Null if allows("null") => Ok(Value::Null),
        Value::Array(_) if allows("array") => Ok(value.clone()),
        Value::Object(_) if allows("object") => Ok(value.clone()),
        other => Err(TextError::WrongType {
            found: crate::params::json_type(other),
            expected: types.join(" or "),
        }),
    }
}

/// The text inside matching single or double quotes, as YAML reads it.
fn unquote(text: &str) -> Option<String> {
    let quoted = text.len() >= 2
        && ((text.starts_with('"') && text.ends_with('"'))
            || (text.starts_with('\'') && text.ends_with('\'')));
    if !quoted {
        return None;
    }
    match document::parse_value(text) {
        Ok(Value::String(s)) => Some(s),
        _ => None,
    }
}

fn is_null(text: &str) -> bool {
    matches!(text, "" | "~" | "null" | "Null" | "NULL")
}

fn boolean(text: &str) -> Option<bool> {
    match text {
        "true" | "True" | "TRUE" => Some(true),
        "false" | "False" | "FALSE" => Some(false),
        _ => None,
    }
}

/// `[+-]?[0-9]+`, the only integer grammar.
fn is_decimal_integer(text: &str) -> bool {
    let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

fn integer(text: &str) -> Result<Value, TextError> {
    if is_decimal_integer(text) {
        return text
            .parse::<i64>()
            .map(Value::from)
            .map_err(|_| TextError::IntegerOutOfRange);
    }
    Err(TextError::NotInteger {
        decimal: other_integer_form(text).map(|i| i.to_string()),
    })
}

/// The value of an integer written in a form the rule refuses (hex, octal, binary, an integral
/// exponent or fraction), to show the decimal form in the error.
fn other_integer_form(text: &str) -> Option<i128> {
    let (neg, body) = match text.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let lower = body.to_ascii_lowercase().replace('_', "");
    let parsed = if let Some(h) = lower.strip_prefix("0x") {
        i128::from_str_radix(h, 16).ok()
    } else if let Some(o) = lower.strip_prefix("0o") {
        i128::from_str_radix(o, 8).ok()
    } else if let Some(b) = lower.strip_prefix("0b") {
        i128::from_str_radix(b, 2).ok()
    } else if is_decimal_number(&lower) {
        lower
            .parse::<f64>()
            .ok()
            .filter(|f| f.fract() == 0.0 && f.abs() < 1.0e18)
            .map(|f| f as i128)
    } else {
        None
    };
    parsed.map(|v| if neg { -v } else { v })
}

/// `[+-]?digits(.digits)?([eE][+-]?digits)?` (also `.5` and `5.`).
fn is_decimal_number(text: &str) -> bool {
    let body = text.strip_prefix(['+', '-']).unwrap_or(text);
    let (mantissa, exponent) = match body.find(['e', 'E']) {
        Some(i) => (&body[..i], Some(&body[i + 1..])),
        None => (body, None),
    };
    let (int, frac) = match mantissa.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (mantissa, None),
    };
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    let mantissa_ok = digits(int)
        && frac.is_none_or(digits)
        && !(int.is_empty() && frac.is_none_or(str::is_empty));
    let exponent_ok = exponent.is_none_or(|e| {
        let e = e.strip_prefix(['+', '-']).unwrap_or(e);
        !e.is_empty() && digits(e)
    });
    mantissa_ok && exponent_ok
}

fn number(text: &str) -> Result<Value, TextError> {
    if is_decimal_integer(text)
        && let Ok(i) = text.parse::<i64>()
    {
        return Ok(Value::from(i));
    }
    if !is_decimal_number(text) {
        return Err(TextError::NotNumber);
    }
    let f: f64 = text.parse().map_err(|_| TextError::NotNumber)?;
    let n = Number::from_f64(f).ok_or(TextError::NotNumber)?;
    let stored = n.to_string();
    if decimal_digits(text) != decimal_digits(&stored) {
        return Err(TextError::LosesPrecision { stored });
    }
    Ok(Value::Number(n))
}

/// A decimal number as (negative, significant digits, exponent of the last digit): equal for
/// equal values (`1.50` and `15e-1` give the same), so a round trip through a float can be
/// checked for exactness.
fn decimal_digits(text: &str) -> (bool, String, i64) {
    let (neg, body) = match text.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let (mantissa, exp) = match body.find(['e', 'E']) {
        Some(i) => (&body[..i], body[i + 1..].parse::<i64>().unwrap_or(0)),
        None => (body, 0),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let mut digits: String = format!("{int}{frac}");
    let mut exp = exp - frac.len() as i64;
    let trimmed = digits.trim_start_matches('0').to_string();
    digits = trimmed;
    while digits.ends_with('0') {
        digits.pop();
        exp += 1;
    }
    if digits.is_empty() {
        return (false, String::new(), 0);
    }
    (neg, digits, exp)
}

// ---------------------------------------------------------------------------------------------
// Stored values: what a `kudo.dev/v1beta1` Instance stores (`map[string]string`), typed by the
// package's parameters, and back.
//
// | v1beta1 `type` | string value | v1beta2 value |
// |---|---|---|
// | integer | `"3"` | `3` |
// | number | `"0.5"` | `0.5` |
// | boolean | `"true"`, `"False"` | `true`, `false` |
// | array | `"[foo, bar]"` | `["foo", "bar"]` (parsed as YAML) |
// | map | `"{foo: bar}"` | `{"foo": "bar"}` (parsed as YAML) |
// | string (or none) | `8090` | `"8090"` (non-strings become their text) |

/// Types one v1beta1 value (usually a string) by its parameter type, with the one rule of
/// `typing` (the rule `-p` values follow too). The error says why, in words, without
/// repeating the value (it may be a secret).
pub fn typed(value: &Value, ty: V1beta1Type) -> Result<Value, TextError> {
    from_value(&[ty.json_schema_type()], value)
}

/// Values as a v1beta1 Instance stores them (`map[string]string`): strings as they are,
/// numbers and booleans as their text, arrays and objects as JSON text. The inverse of typing
/// by [`instance_values`] / [`typed_by_schema`].
pub fn to_v1beta1_strings(values: &Value) -> Value {
    let Value::Object(map) = values else {
        return values.clone();
    };
    Value::Object(
        map.iter()
            .map(|(k, v)| {
                let s = match v {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                (k.clone(), Value::String(s))
            })
            .collect(),
    )
}

/// Types the top-level string values of `values` by the types of `schema`'s properties, as
/// v1beta1 values are typed (`"3"` for an integer → 3, `"[80]"` for an array → `[80]`). A value
/// that does not fit its type, or has no typed property, stays as it is (validation names it).
pub fn typed_by_schema(schema: &ParamSchema, values: &Value) -> Value {
    let Value::Object(map) = values else {
        return values.clone();
    };
    let out = map
        .iter()
        .map(|(k, v)| {
            let typed = match (v, schema.node_at(std::slice::from_ref(k))) {
                (Value::String(s), Some(node)) => {
                    let types = schema.types(node);
                    if types.is_empty() || types.contains(&"string") {
                        v.clone()
                    } else {
                        from_text(&types, s).unwrap_or_else(|_| v.clone())
                    }
                }
                _ => v.clone(),
            };
            (k.clone(), typed)
        })
        .collect();
    Value::Object(out)
}

/// Types an Instance's v1beta1 values (`map[string]string`) by the package's parameters.
/// Values of unknown parameters are kept as they are (validation reports them); a value that
/// cannot be typed is kept as its string and reported, masked when the package marks the
/// parameter secret in an `x-`/`writeOnly` extra field.
pub fn instance_values(
    params: &V1beta1Params,
    values: &Map<String, Value>,
) -> (Map<String, Value>, Vec<Diagnostic>) {
    let mut out = Map::new();
    let mut diags = Vec::new();
    for (name, value) in values {
        let converted = match params.get(name) {
            None => value.clone(),
            Some(p) => match typed(value, p.value_type()) {
                Ok(v) => v,
                Err(why) => {
                    let secret = p.extra.get("writeOnly") == Some(&Value::Bool(true));
                    diags.push(
                        Diagnostic::error(
                            Code::Conversion,
                            pointer::push("", name),
                            format!("cannot convert to {}: value {why}", p.value_type()),
                        )
                        .with_value(Shown::of(value, secret))
                        .with_origin(Origin::Instance),
                    );
                    value.clone()
                }
            },
        };
        out.insert(name.clone(), converted);
    }
    (out, diags)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::{V1beta1Params, V1beta1Type};
    use kudo_diag::diag::Code;
    use kudo_yaml::document::Document;
    use serde_json::json;
    use std::path::Path;

    #[test]
    fn integers_are_decimal_and_exact() {
        let cases: &[(&str, Result<Value, TextError>)] = &[
            ("3", Ok(json!(3))),
            (" -1 ", Ok(json!(-1))),
            ("+7", Ok(json!(7))),
            ("007", Ok(json!(7))),
            ("\"3\"", Ok(json!(3))),
            ("9223372036854775807", Ok(json!(i64::MAX))),
            ("9223372036854775808", Err(TextError::IntegerOutOfRange)),
            (
                "1e3",
                Err(TextError::NotInteger {
                    decimal: Some("1000".into()),
                }),
            ),
            (
                "0x1A",
                Err(TextError::NotInteger {
                    decimal: Some("26".into()),
                }),
            ),
            (
                "0o17",
                Err(TextError::NotInteger {
                    decimal: Some("15".into()),
                }),
            ),
            (
                "1.0",
                Err(TextError::NotInteger {
                    decimal: Some("1".into()),
                }),
            ),
            ("1.5", Err(TextError::NotInteger { decimal: None })),
            ("ten", Err(TextError::NotInteger { decimal: None })),
            ("", Err(TextError::NotInteger { decimal: None })),
        ];
        for (text, want) in cases {
            assert_eq!(&from_text(&["integer"], text), want, "text: {text:?}");
        }
    }

    #[test]
    fn numbers_keep_every_digit_or_are_refused() {
        let cases: &[(&str, Result<Value, TextError>)] = &[
            ("3", Ok(json!(3))),
            ("0.5", Ok(json!(0.5))),
            ("2.5e-3", Ok(json!(0.0025))),
            ("1e3", Ok(json!(1000.0))),
            ("0.1", Ok(json!(0.1))),
            ("1.50", Ok(json!(1.5))),
            (
                "9223372036854775808",
                Err(TextError::LosesPrecision {
                    stored: "9.223372036854776e+18".into(),
                }),
            ),
            ("1e30", Ok(json!(1e30))),
            (
                "0.30000000000000000001",
                Err(TextError::LosesPrecision {
                    stored: "0.3".into(),
                }),
            ),
            (
                "12345678901234567891",
                Err(TextError::LosesPrecision {
                    stored: "1.2345678901234567e+19".into(),
                }),
            ),
            ("0x1A", Err(TextError::NotNumber)),
            (".inf", Err(TextError::NotNumber)),
            ("nan", Err(TextError::NotNumber)),
        ];
        for (text, want) in cases {
            assert_eq!(&from_text(&["number"], text), want, "text: {text:?}");
        }
        assert!(from_text(&["number"], "3").unwrap().is_i64());
    }

    #[test]
    fn booleans_are_true_or_false() {
        for (text, want) in [("true", true), ("True", true), ("FALSE", false)] {
            assert_eq!(from_text(&["boolean"], text), Ok(json!(want)), "{text}");
        }
        for text in ["yes", "on", "1", "t", ""] {
            assert_eq!(
                from_text(&["boolean"], text),
                Err(TextError::NotBoolean),
                "{text}"
            );
        }
    }

    #[test]
    fn strings_stay_as_written_and_collections_parse() {
        assert_eq!(from_text(&["string"], "123"), Ok(json!("123")));
        assert_eq!(from_text(&["string"], "NO"), Ok(json!("NO")));
        assert_eq!(from_text(&["string"], " a: b"), Ok(json!(" a: b")));
        assert_eq!(from_text(&["string"], "'x'"), Ok(json!("x")));
        assert_eq!(from_text(&["array"], "[80, 443]"), Ok(json!([80, 443])));
        assert_eq!(from_text(&["array"], ""), Ok(json!([])));
        assert_eq!(from_text(&["object"], "{k: v}"), Ok(json!({"k": "v"})));
        assert!(matches!(
            from_text(&["array"], "{k: v}"),
            Err(TextError::NotShape {
                expected: "array",
                ..
            })
        ));
        assert_eq!(from_text(&["integer", "string"], "3"), Ok(json!(3)));
        assert_eq!(from_text(&["integer", "string"], "0x1A"), Ok(json!("0x1A")));
        assert_eq!(from_text(&["integer", "null"], "null"), Ok(json!(null)));
        assert_eq!(from_text(&[], "[1]"), Ok(json!([1])));
    }

    #[test]
    fn stored_values_are_typed_like_text() {
        assert_eq!(from_value(&["integer"], &json!("7")), Ok(json!(7)));
        assert_eq!(from_value(&["boolean"], &json!("false")), Ok(json!(false)));
        assert_eq!(
            from_value(&["array"], &json!("[80, 443]")),
            Ok(json!([80, 443]))
        );
        assert_eq!(from_value(&["integer"], &json!(7)), Ok(json!(7)));
        assert_eq!(from_value(&["string"], &json!(7)), Ok(json!("7")));
        assert_eq!(
            from_value(&["integer"], &json!(1000.0)),
            Err(TextError::NotInteger {
                decimal: Some("1000".into())
            })
        );
        assert_eq!(
            from_value(&["integer"], &json!({"a": 1})),
            Err(TextError::WrongType {
                found: "object",
                expected: "integer".into()
            })
        );
    }

    #[test]
    fn values_are_typed_by_parameter_type() {
        use V1beta1Type::*;
        let cases: &[(Value, V1beta1Type, Result<Value, ()>)] = &[
            (json!("3"), Integer, Ok(json!(3))),
            (json!(" -1 "), Integer, Ok(json!(-1))),
            // Integers are 64-bit signed, as Kubernetes' int64 (crate::typing).
            (json!("9223372036854775807"), Integer, Ok(json!(i64::MAX))),
            (json!("18446744073709551615"), Integer, Err(())),
            (json!("3.5"), Integer, Err(())),
            (json!("0.25"), Number, Ok(json!(0.25))),
            (json!("4"), Number, Ok(json!(4))),
            (json!("false"), Boolean, Ok(json!(false))),
            (json!("True"), Boolean, Ok(json!(true))),
            (json!("yes"), Boolean, Err(())),
            (json!("[foo, bar]"), Array, Ok(json!(["foo", "bar"]))),
            (
                json!("[foo,bar,bazz]"),
                Array,
                Ok(json!(["foo", "bar", "bazz"])),
            ),
            (json!("{foo: \"bar\"}"), Map, Ok(json!({"foo": "bar"}))),
            (json!(""), Array, Ok(json!([]))),
            (json!("a: b"), Array, Err(())),
            (json!(8090), String, Ok(json!("8090"))),
            (json!("NO"), String, Ok(json!("NO"))),
        ];
        for (input, ty, want) in cases {
            let got = typed(input, *ty).map_err(|_| ());
            assert_eq!(&got, want, "{input} as {ty}");
        }
    }

    #[test]
    fn instance_values_are_typed_and_bad_ones_reported() {
        let doc = Document::parse(
            Path::new("params.yaml"),
            "apiVersion: kudo.dev/v1beta1\nparameters:\n  - name: NODE_COUNT\n    type: integer\n  - name: ARRAY_PARAM\n    type: array\n  - name: MAP_PARAM\n    type: map\n  - name: BACKUP_ENABLED\n    type: boolean\n",
        )
        .unwrap();
        let params = V1beta1Params::parse(&doc).unwrap();
        let values = json!({"NODE_COUNT": "3", "BACKUP_ENABLED": "false",
            "ARRAY_PARAM": "[foo,bar,bazz]", "MAP_PARAM": "{foo: \"bar\"}", "OTHER": "x"});
        let (out, diags) = instance_values(&params, values.as_object().unwrap());
        assert!(diags.is_empty(), "{diags:?}");
        assert_eq!(
            Value::Object(out),
            json!({"NODE_COUNT": 3, "BACKUP_ENABLED": false, "ARRAY_PARAM": ["foo", "bar", "bazz"],
                   "MAP_PARAM": {"foo": "bar"}, "OTHER": "x"})
        );
        let (_, diags) =
            instance_values(&params, json!({"NODE_COUNT": "many"}).as_object().unwrap());
        assert_eq!(diags.len(), 1);
        assert_eq!(diags[0].code, Code::Conversion);
        assert_eq!(diags[0].pointer, "/NODE_COUNT");
    }
}
