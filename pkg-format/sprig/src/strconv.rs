//! Go's `fmt` and `strconv` as sprig's functions meet them: `%v` of a value,
//! `strconv.FormatFloat`, `strconv.Quote`, and the number syntax of `strconv.ParseFloat` (whose
//! underscores, and Go's integer syntax, are `kudo_yaml::strconv`'s).

use std::fmt::Write as _;

use gotmpl::Value;
use kudo_yaml::strconv::underscore_ok;

/// `fmt.Sprintf("%v", v)`.
pub(super) fn fmt_v(v: &Value) -> String {
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
pub(super) fn strval(v: &Value) -> String {
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
pub(super) fn format_float(f: f64, verb: u8) -> String {
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
pub(super) fn go_quote(s: &str) -> String {
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

/// `strconv.ParseFloat(s, 64)`; `None` on a syntax or range error.
pub(super) fn parse_float(s: &str) -> Option<f64> {
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

#[cfg(test)]
mod tests {
    use super::*;

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
    }
}
