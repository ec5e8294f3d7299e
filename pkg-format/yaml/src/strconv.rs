//! Go's integer syntax, as `strconv` reads it: the rules go-yaml v2 resolves a plain scalar by
//! ([`manifest::resolve`](crate::manifest::resolve)) and that sprig's `toYaml` quotes by.
//!
//! | text | [`parse_int_base0`] | rule |
//! |---|---|---|
//! | `42`, `-42`, `+42` | `Int(42)`, `Int(-42)`, `Int(42)` | decimal, one optional sign |
//! | `0777`, `0o17`, `0x1F`, `0b101` | `Int(511)`, `Int(15)`, `Int(31)`, `Int(5)` | a leading `0` is octal; `0o`, `0x`, `0b` prefixes in either case, with a digit after them |
//! | `1_000`, `0x_1F` | `Int(1000)`, `Int(31)` | underscores between digits, or after a prefix ([`underscore_ok`]) |
//! | `18446744073709551615` | `Uint(u64::MAX)` | above the largest int64: `ParseUint`, which takes no sign |
//! | `0x`, `08`, `1__0`, `_1`, `+9223372036854775808` | `None` | no digit after the prefix, 8 is no octal digit, underscores out of place, too large with a sign |
//!
//! ```
//! use kudo_yaml::strconv::{GoInt, parse_int_base0};
//! assert_eq!(parse_int_base0("0777"), Some(GoInt::Int(511)));
//! assert_eq!(parse_int_base0("0xFFFFFFFFFFFFFFFF"), Some(GoInt::Uint(u64::MAX)));
//! assert_eq!(parse_int_base0("08"), None);
//! ```

/// An integer as Go's `strconv` reads it: an int64, or above the largest int64 a uint64.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GoInt {
    /// `strconv.ParseInt(s, 0, 64)` read it.
    Int(i64),
    /// `ParseInt` refused it and `strconv.ParseUint(s, 0, 64)` read it (above the largest
    /// int64, no sign).
    Uint(u64),
}

/// `strconv.ParseInt(s, 0, 64)`, then, when it fails, `strconv.ParseUint(s, 0, 64)`: the order
/// go-yaml v2 tries them in. `None` when both refuse `s` (a syntax or a range error).
pub fn parse_int_base0(s: &str) -> Option<GoInt> {
    parse_int(s, 0)
        .map(GoInt::Int)
        .or_else(|| parse_uint(s, 0).map(GoInt::Uint))
}

/// `strconv.ParseInt(s, base, 64)`: one optional sign, then [`parse_uint`]'s digits, down to
/// -2^63.
pub(crate) fn parse_int(s: &str, base: u32) -> Option<i64> {
    let (negative, body) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let magnitude = parse_uint(body, base)?;
    match negative {
        true if magnitude <= 1 << 63 => Some((magnitude as i64).wrapping_neg()),
        false => i64::try_from(magnitude).ok(),
        true => None,
    }
}

/// `strconv.ParseUint(s, base, 64)`, for `base` 0 (Go's prefixes: `0x`, `0o`, `0b` with a digit
/// after them, a leading `0` for octal, decimal otherwise; underscores as [`underscore_ok`]
/// allows) or 2 to 36 (digits alone). No sign.
pub(crate) fn parse_uint(s: &str, base: u32) -> Option<u64> {
    let b = s.as_bytes();
    let (radix, digits) = match (base, b) {
        (_, []) => return None,
        (0, [b'0', p, _, ..]) if p.eq_ignore_ascii_case(&b'x') => (16, &s[2..]),
        (0, [b'0', p, _, ..]) if p.eq_ignore_ascii_case(&b'o') => (8, &s[2..]),
        (0, [b'0', p, _, ..]) if p.eq_ignore_ascii_case(&b'b') => (2, &s[2..]),
        // `0` alone is octal with no digits: 0
        (0, [b'0', ..]) => (8, &s[1..]),
        (0, _) => (10, s),
        (2..=36, _) => (base, s),
        _ => return None,
    };
    let mut n: u64 = 0;
    let mut underscores = false;
    for c in digits.chars() {
        if c == '_' && base == 0 {
            underscores = true;
            continue;
        }
        let d = c.to_digit(radix)?;
        n = n.checked_mul(u64::from(radix))?.checked_add(u64::from(d))?;
    }
    (!underscores || underscore_ok(s)).then_some(n)
}

/// Go's `strconv.underscoreOK`: every underscore stands between two digits, or between a base
/// prefix (`0x`, `0o`, `0b`) and a digit. A sign may lead; other characters are not checked.
pub fn underscore_ok(s: &str) -> bool {
    let s = s.strip_prefix(['+', '-']).unwrap_or(s);
    let b = s.as_bytes();
    // The class of the last character: `^` the start, `0` a digit or a base prefix, `_` an
    // underscore, `!` anything else.
    let (mut saw, mut i, mut hex) = (b'^', 0, false);
    if b.len() >= 2 && b[0] == b'0' && matches!(b[1].to_ascii_lowercase(), b'b' | b'o' | b'x') {
        (saw, i, hex) = (b'0', 2, b[1].eq_ignore_ascii_case(&b'x'));
    }
    for &c in &b[i..] {
        if c.is_ascii_digit() || hex && c.is_ascii_hexdigit() {
            saw = b'0';
        } else if c == b'_' {
            if saw != b'0' {
                return false;
            }
            saw = b'_';
        } else if saw == b'_' {
            return false;
        } else {
            saw = b'!';
        }
    }
    saw != b'_'
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_read_as_go_strconv_reads_them_in_base_0() {
        // (text, strconv.ParseInt(s, 0, 64) then ParseUint(s, 0, 64), the rule)
        #[rustfmt::skip]
        let cases: &[(&str, Option<GoInt>, &str)] = &[
            ("0", Some(GoInt::Int(0)), "octal with no digits"),
            ("42", Some(GoInt::Int(42)), "decimal"),
            ("-42", Some(GoInt::Int(-42)), "a sign"),
            ("+42", Some(GoInt::Int(42)), "a + sign"),
            ("0777", Some(GoInt::Int(511)), "a leading 0 is octal"),
            ("0o17", Some(GoInt::Int(15)), "0o octal"),
            ("0O17", Some(GoInt::Int(15)), "0O octal"),
            ("0x1F", Some(GoInt::Int(31)), "0x hex"),
            ("0X1f", Some(GoInt::Int(31)), "0X hex, digits in either case"),
            ("0b101", Some(GoInt::Int(5)), "0b binary"),
            ("-0b101", Some(GoInt::Int(-5)), "a sign, then a prefix"),
            ("1_000", Some(GoInt::Int(1000)), "underscoreOK: between digits"),
            ("0x_1F", Some(GoInt::Int(31)), "underscoreOK: after a prefix"),
            ("0_7", Some(GoInt::Int(7)), "underscoreOK: the octal 0 is a digit"),
            ("9223372036854775807", Some(GoInt::Int(i64::MAX)), "the largest int64"),
            ("-9223372036854775808", Some(GoInt::Int(i64::MIN)), "the smallest int64"),
            ("9223372036854775808", Some(GoInt::Uint(1 << 63)), "ParseUint after ParseInt"),
            ("18446744073709551615", Some(GoInt::Uint(u64::MAX)), "the largest uint64"),
            ("0xFFFFFFFFFFFFFFFF", Some(GoInt::Uint(u64::MAX)), "ParseUint: hex"),
            ("18446744073709551616", None, "ParseUint: out of range"),
            ("-9223372036854775809", None, "ParseInt: out of range"),
            ("+9223372036854775808", None, "ParseUint takes no sign"),
            ("", None, "empty"),
            ("+", None, "a sign alone"),
            ("+-1", None, "one sign only"),
            ("0x", None, "0x with no digit: octal 0 then x"),
            ("0b", None, "0b with no digit"),
            ("08", None, "8 is no octal digit"),
            ("0b2", None, "2 is no binary digit"),
            ("0xG", None, "G is no hex digit"),
            ("1__0", None, "underscoreOK: two underscores"),
            ("_1", None, "underscoreOK: a leading underscore"),
            ("1_", None, "underscoreOK: a trailing underscore"),
            ("1.5", None, "no fraction"),
        ];
        for (text, want, rule) in cases {
            assert_eq!(parse_int_base0(text), *want, "input {text:?} ({rule})");
        }
    }

    #[test]
    fn underscores_stand_between_digits() {
        // (text, Go's underscoreOK)
        #[rustfmt::skip]
        let cases: &[(&str, bool)] = &[
            ("1_000", true), ("-1_000", true), ("0x_1F", true), ("0xa_b", true), ("1_0.5e1_0", true),
            ("_1", false), ("1_", false), ("1__0", false), ("._5", false), ("1_.5", false),
            ("0b_1", true), ("0_x1", false), ("a_b", false), ("\u{10}_1", false),
        ];
        for (text, want) in cases {
            assert_eq!(underscore_ok(text), *want, "input {text:?}");
        }
    }
}
