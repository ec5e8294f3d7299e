//! Go's `encoding/json`, `encoding/base64` and `encoding/base32` as sprig uses them: `toJson`,
//! `toPrettyJson`, `b64enc`, `b64dec`, `b32enc`, `b32dec` (standard alphabets, Go's error
//! offsets).

use std::fmt::Write as _;

use base64::Engine as _;
use gotmpl::{Result, Value};

use super::strconv::format_float;
use super::{arg_str, lossy, string, want};

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

pub(super) fn f_to_json(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 1)?;
    let mut out = String::new();
    if json_encode(&mut out, &a[0]).is_none() {
        out.clear();
    }
    Ok(string(out))
}

pub(super) fn f_to_pretty_json(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 1)?;
    let mut out = String::new();
    if json_encode(&mut out, &a[0]).is_none() {
        return Ok(string(""));
    }
    Ok(string(json_indent(&out)))
}

pub(super) fn f_b64enc(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 1)?;
    let s = arg_str(name, &a[0])?;
    Ok(string(base64::engine::general_purpose::STANDARD.encode(s)))
}

pub(super) fn f_b64dec(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 1)?;
    match base64_decode(arg_str(name, &a[0])?.as_bytes()) {
        Ok(b) => Ok(lossy(&b)),
        // sprig returns the error text as the result
        Err(at) => Ok(string(format!("illegal base64 data at input byte {at}"))),
    }
}

pub(super) fn f_b32enc(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 1)?;
    Ok(string(base32_encode(arg_str(name, &a[0])?.as_bytes())))
}

pub(super) fn f_b32dec(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 1)?;
    match base32_decode(arg_str(name, &a[0])?.as_bytes()) {
        Ok(b) => Ok(lossy(&b)),
        Err(at) => Ok(string(format!("illegal base32 data at input byte {at}"))),
    }
}

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

#[cfg(test)]
mod tests {
    use crate::testing::check;

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
}
