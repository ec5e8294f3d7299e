//! String functions (sprig's `strings.go` and the Masterminds/goutils v1.1.0 functions it
//! calls): `trim`, `upper`, `abbrev`, `wrap`, `quote`, `indent`, `split`, `join`, …

use std::sync::Arc;

use gotmpl::{Result, TemplateError, Value};

use super::strconv::{fmt_v, go_quote, strval};
use super::{arg_int, arg_str, call_err, list, lossy, map_value, string, want};

pub(super) fn f_hello(name: &str, a: &[Value]) -> Result<Value> {
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

pub(super) fn f_abbrev(name: &str, a: &[Value]) -> Result<Value> {
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

pub(super) fn f_abbrevboth(name: &str, a: &[Value]) -> Result<Value> {
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

pub(super) fn f_trunc(name: &str, a: &[Value]) -> Result<Value> {
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

pub(super) fn f_trim(name: &str, a: &[Value]) -> Result<Value> {
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

pub(super) fn f_upper(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 1)?;
    Ok(string(
        arg_str(name, &a[0])?
            .chars()
            .map(go_upper)
            .collect::<String>(),
    ))
}

pub(super) fn f_lower(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 1)?;
    Ok(string(
        arg_str(name, &a[0])?
            .chars()
            .map(go_lower)
            .collect::<String>(),
    ))
}

/// `strings.Title`: title-case the first letter of every word; the rest is kept.
pub(super) fn f_title(name: &str, a: &[Value]) -> Result<Value> {
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
pub(super) fn f_untitle(name: &str, a: &[Value]) -> Result<Value> {
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

pub(super) fn f_substr(name: &str, a: &[Value]) -> Result<Value> {
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

pub(super) fn f_repeat(name: &str, a: &[Value]) -> Result<Value> {
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

pub(super) fn f_trim_all(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 2)?;
    let cutset = arg_str(name, &a[0])?;
    let s = arg_str(name, &a[1])?;
    Ok(string(s.trim_matches(|c| cutset.contains(c))))
}

pub(super) fn f_trim_suffix(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 2)?;
    let suffix = arg_str(name, &a[0])?;
    let s = arg_str(name, &a[1])?;
    Ok(string(s.strip_suffix(suffix).unwrap_or(s)))
}

pub(super) fn f_trim_prefix(name: &str, a: &[Value]) -> Result<Value> {
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
pub(super) fn f_nospace(name: &str, a: &[Value]) -> Result<Value> {
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
pub(super) fn f_initials(name: &str, a: &[Value]) -> Result<Value> {
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
pub(super) fn f_swapcase(name: &str, a: &[Value]) -> Result<Value> {
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

pub(super) fn f_wrap(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 2)?;
    let l = arg_int(name, &a[0])?;
    let s = arg_str(name, &a[1])?;
    Ok(lossy(&wrap_custom(s.as_bytes(), l, b"", false)))
}

pub(super) fn f_wrap_with(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 3)?;
    let l = arg_int(name, &a[0])?;
    let sep = arg_str(name, &a[1])?;
    let s = arg_str(name, &a[2])?;
    Ok(lossy(&wrap_custom(s.as_bytes(), l, sep.as_bytes(), true)))
}

pub(super) fn f_contains(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 2)?;
    let sub = arg_str(name, &a[0])?;
    Ok(Value::Bool(arg_str(name, &a[1])?.contains(sub)))
}

pub(super) fn f_has_prefix(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 2)?;
    let p = arg_str(name, &a[0])?;
    Ok(Value::Bool(arg_str(name, &a[1])?.starts_with(p)))
}

pub(super) fn f_has_suffix(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 2)?;
    let p = arg_str(name, &a[0])?;
    Ok(Value::Bool(arg_str(name, &a[1])?.ends_with(p)))
}

pub(super) fn f_quote(_name: &str, a: &[Value]) -> Result<Value> {
    let parts: Vec<String> = a
        .iter()
        .filter(|v| !matches!(v, Value::Nil))
        .map(|v| go_quote(&strval(v)))
        .collect();
    Ok(string(parts.join(" ")))
}

pub(super) fn f_squote(_name: &str, a: &[Value]) -> Result<Value> {
    let parts: Vec<String> = a
        .iter()
        .filter(|v| !matches!(v, Value::Nil))
        .map(|v| format!("'{}'", fmt_v(v)))
        .collect();
    Ok(string(parts.join(" ")))
}

pub(super) fn f_cat(_name: &str, a: &[Value]) -> Result<Value> {
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

pub(super) fn f_indent(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 2)?;
    let n = arg_int(name, &a[0])?;
    Ok(string(indent_str(name, n, arg_str(name, &a[1])?)?))
}

pub(super) fn f_nindent(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 2)?;
    let n = arg_int(name, &a[0])?;
    Ok(string(format!(
        "\n{}",
        indent_str(name, n, arg_str(name, &a[1])?)?
    )))
}

pub(super) fn f_replace(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 3)?;
    let old = arg_str(name, &a[0])?;
    let new = arg_str(name, &a[1])?;
    Ok(string(arg_str(name, &a[2])?.replace(old, new)))
}

pub(super) fn f_plural(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 3)?;
    let one = arg_str(name, &a[0])?;
    let many = arg_str(name, &a[1])?;
    let count = arg_int(name, &a[2])?;
    Ok(string(if count == 1 { one } else { many }))
}

pub(super) fn f_to_string(name: &str, a: &[Value]) -> Result<Value> {
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

pub(super) fn f_to_strings(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 1)?;
    Ok(list(strslice(&a[0]).into_iter().map(string).collect()))
}

pub(super) fn f_join(name: &str, a: &[Value]) -> Result<Value> {
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

pub(super) fn f_split(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 2)?;
    let sep = arg_str(name, &a[0])?;
    Ok(split_map(go_split(arg_str(name, &a[1])?, sep, -1)))
}

pub(super) fn f_split_list(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 2)?;
    let sep = arg_str(name, &a[0])?;
    let parts = go_split(arg_str(name, &a[1])?, sep, -1);
    Ok(list(parts.into_iter().map(string).collect()))
}

pub(super) fn f_splitn(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 3)?;
    let sep = arg_str(name, &a[0])?;
    let n = arg_int(name, &a[1])?;
    Ok(split_map(go_split(arg_str(name, &a[2])?, sep, n)))
}

pub(super) fn f_sort_alpha(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 1)?;
    let mut v = match &a[0] {
        l @ Value::List(_) => strslice(l),
        other => vec![strval(other)],
    };
    v.sort();
    Ok(list(v.into_iter().map(string).collect()))
}

#[cfg(test)]
mod tests {
    use crate::testing::{check, check_err};

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
    fn errors() {
        // Go's panics and errors in the string functions, as text/template reports them.
        check_err(&[
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
        ]);
    }
}
