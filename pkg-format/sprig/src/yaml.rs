//! KUDO's `toYaml`: gopkg.in/yaml.v2 v2.3.0 `Marshal` (`encode.go`, `resolve.go`, `sorter.go`
//! and the libyaml-derived emitter, `emitterc.go`).

use std::sync::Arc;

use gotmpl::{Result, Value};

use kudo_yaml::manifest::{self, Plain};

use super::strconv::format_float;
use super::{call_err, go_type_name, string, want};

pub(super) fn f_to_yaml(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 1)?;
    yaml_marshal(&a[0])
        .map(string)
        .map_err(|e| call_err(name, e))
}

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

/// yaml.v2's `stringv`: plain unless the text would resolve to another type (go-yaml v2's
/// `resolve("", s)` is `!!str`: [`manifest::resolve`] answers [`Plain::Text`]).
fn yaml_string_node(s: &str) -> YNode {
    let style = if s.contains('\n') {
        YStyle::Literal
    } else if manifest::resolve(s) == Plain::Text && !yaml_is_base60_float(s) {
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

/// Where one kind of white space (spaces, or line breaks) stands in a scalar, as
/// `analyze_scalar` tracks it for each kind.
#[derive(Default)]
struct WhiteSpace {
    leading: bool,
    trailing: bool,
    /// right after the other kind
    after_other: bool,
}

impl WhiteSpace {
    fn see(&mut self, first: bool, last: bool, after_other: bool) {
        self.leading |= first;
        self.trailing |= last;
        self.after_other |= after_other;
    }
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
    let (mut spaces, mut breaks) = (WhiteSpace::default(), WhiteSpace::default());
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
        let last = i + w == value.len();
        if y_is_space(value, i) {
            spaces.see(i == 0, last, previous_break);
            previous_space = true;
            previous_break = false;
        } else if y_is_break(value, i) {
            line_breaks = true;
            breaks.see(i == 0, last, previous_space);
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
    if spaces.leading || breaks.leading || spaces.trailing || breaks.trailing {
        a.block_plain_allowed = false;
    }
    if spaces.trailing {
        a.block_allowed = false;
    }
    // libyaml's `break_space`: a space right after a line break
    if spaces.after_other {
        a.block_plain_allowed = false;
        a.single_quoted_allowed = false;
    }
    // libyaml's `space_break`: a line break right after a space
    if breaks.after_other || special {
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

    /// Writes the line break at `s[*i]` of a scalar's text: what follows starts an indented
    /// line (libyaml's scalar writers set `indention` after each `WRITE_BREAK`).
    fn write_break(&mut self, s: &[u8], i: &mut usize) {
        if s[*i] == b'\n' {
            self.put_break();
            *i += 1;
        } else {
            self.write(s, i);
            self.column = 0;
        }
        self.indention = true;
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
        self.write_folded(value, allow_breaks, false);
        self.whitespace = false;
        self.indention = false;
    }

    fn write_single_quoted(&mut self, value: &[u8], allow_breaks: bool) {
        self.write_indicator(b"'", true, false, false);
        self.write_folded(value, allow_breaks, true);
        self.write_indicator(b"'", false, false, false);
        self.whitespace = false;
        self.indention = false;
    }

    /// The text of a plain or a single-quoted scalar, folded at spaces past the best width:
    /// libyaml's two writers differ only where `quoted` is tested (a quoted scalar never
    /// folds at its first or last byte, and doubles its `'`).
    fn write_folded(&mut self, value: &[u8], allow_breaks: bool, quoted: bool) {
        let (mut spaces, mut breaks) = (false, false);
        let mut i = 0;
        while i < value.len() {
            if y_is_space(value, i) {
                if allow_breaks
                    && !spaces
                    && self.column > YAML_BEST_WIDTH
                    && (!quoted || (i > 0 && i < value.len() - 1))
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
                breaks = true;
            } else {
                if breaks {
                    self.write_indent();
                }
                if quoted && value[i] == b'\'' {
                    self.put(b'\'');
                }
                self.write(value, &mut i);
                self.indention = false;
                spaces = false;
                breaks = false;
            }
        }
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
    use crate::testing::check;

    /// Runs `{{ toYaml .v }}` on each row: (`.v` as JSON, expected output).
    fn check_to_yaml(rows: &[(&str, &str)]) {
        let rows: Vec<_> = rows
            .iter()
            .map(|&(v, want)| ("{{ toYaml .v }}", format!(r#"{{"v": {v}}}"#), want))
            .collect();
        check(&rows);
    }

    /// Runs `{{ toYaml .v }}` with `.v` the map `{"k": STRING}`: (STRING, expected output).
    fn check_to_yaml_string(rows: &[(&str, &str)]) {
        let rows: Vec<_> = rows
            .iter()
            .map(|&(k, want)| {
                let data = serde_json::json!({ "v": { "k": k } }).to_string();
                ("{{ toYaml .v }}", data, want)
            })
            .collect();
        check(&rows);
    }

    #[test]
    fn to_yaml_strings() {
        // yaml.v2 Marshal (read from encode.go/emitterc.go; checked against Go)
        check_to_yaml_string(&[
            ("", "k: \"\"\n"),
            (" ", "k: ' '\n"),
            ("a", "k: a\n"),
            ("true", "k: \"true\"\n"),
            ("True", "k: \"True\"\n"),
            ("yes", "k: \"yes\"\n"),
            ("no", "k: \"no\"\n"),
            ("on", "k: \"on\"\n"),
            ("off", "k: \"off\"\n"),
            ("y", "k: \"y\"\n"),
            ("n", "k: \"n\"\n"),
            ("~", "k: \"~\"\n"),
            ("null", "k: \"null\"\n"),
            ("NULL", "k: \"NULL\"\n"),
            ("1", "k: \"1\"\n"),
            ("-1", "k: \"-1\"\n"),
            ("+1", "k: \"+1\"\n"),
            ("1.5", "k: \"1.5\"\n"),
            ("1e3", "k: \"1e3\"\n"),
            ("1_000", "k: \"1_000\"\n"),
            ("0x1F", "k: \"0x1F\"\n"),
            ("0o17", "k: \"0o17\"\n"),
            ("0b101", "k: \"0b101\"\n"),
            ("0b+1", "k: \"0b+1\"\n"),
            ("0b-1", "k: \"0b-1\"\n"),
            ("-0b-1", "k: -0b-1\n"),
            ("0b2", "k: 0b2\n"),
            ("0777", "k: \"0777\"\n"),
            ("08", "k: \"08\"\n"),
            (".5", "k: \".5\"\n"),
            (".inf", "k: \".inf\"\n"),
            ("-.inf", "k: \"-.inf\"\n"),
            (".nan", "k: \".nan\"\n"),
            ("1.", "k: \"1.\"\n"),
            ("-", "k: '-'\n"),
            ("---", "k: '---'\n"),
            ("...", "k: '...'\n"),
            ("- a", "k: '- a'\n"),
            ("-a", "k: -a\n"),
            ("a-", "k: a-\n"),
            (":", "k: ':'\n"),
            ("a:", "k: 'a:'\n"),
            ("a: b", "k: 'a: b'\n"),
            ("a:b", "k: a:b\n"),
            ("http://x.y/z", "k: http://x.y/z\n"),
            ("? x", "k: '? x'\n"),
            ("?x", "k: ?x\n"),
            ("#x", "k: '#x'\n"),
            ("a #b", "k: 'a #b'\n"),
            ("a#b", "k: a#b\n"),
            ("[a]", "k: '[a]'\n"),
            ("{a}", "k: '{a}'\n"),
            ("a,b", "k: a,b\n"),
            ("a]", "k: a]\n"),
            ("&a", "k: '&a'\n"),
            ("*a", "k: '*a'\n"),
            ("!a", "k: '!a'\n"),
            ("|a", "k: '|a'\n"),
            (">a", "k: '>a'\n"),
            ("'a'", "k: '''a'''\n"),
            (r#""a""#, "k: '\"a\"'\n"),
            ("%a", "k: '%a'\n"),
            ("@a", "k: '@a'\n"),
            ("`a", "k: '`a'\n"),
            ("a'b", "k: a'b\n"),
            (r#"a"b"#, "k: a\"b\n"),
            ("a\\b", "k: a\\b\n"),
            ("leading space", "k: leading space\n"),
            (" lead", "k: ' lead'\n"),
            ("trail ", "k: 'trail '\n"),
            ("tab\there", "k: \"tab\\there\"\n"),
            ("a\nb", "k: |-\n  a\n  b\n"),
            ("a\nb\n", "k: |\n  a\n  b\n"),
            ("a\n\nb", "k: |-\n  a\n\n  b\n"),
            ("a\nb\n\n", "k: |+\n  a\n  b\n\n"),
            (" a\nb", "k: |2-\n   a\n  b\n"),
            ("a \nb", "k: \"a \\nb\"\n"),
            ("a\r\nb", "k: \"a\\r\\nb\"\n"),
            ("\n", "k: |2+\n\n"),
            ("\u{e9}", "k: \u{e9}\n"),
            ("\u{65e5}\u{672c}", "k: \u{65e5}\u{672c}\n"),
            ("\u{1f600}", "k: \"\\U0001F600\"\n"),
            ("\u{a0}", "k: \u{a0}\n"),
            ("a\u{85}b", "k: \"a\\Nb\"\n"),
            ("\u{feff}bom", "k: \"\\uFEFF\\x62\\x6F\\x6D\"\n"),
            ("x\u{1}y", "k: \"x\\x01y\"\n"),
            ("\u{7f}", "k: \"\\x7F\"\n"),
            ("2020-01-01", "k: \"2020-01-01\"\n"),
            ("2020-13-01", "k: 2020-13-01\n"),
            ("2020-02-30", "k: 2020-02-30\n"),
            ("2020-02-29", "k: \"2020-02-29\"\n"),
            ("2019-02-29", "k: 2019-02-29\n"),
            ("2020-01-01T10:00:00Z", "k: \"2020-01-01T10:00:00Z\"\n"),
            ("2020-01-01 10:00:00", "k: \"2020-01-01 10:00:00\"\n"),
            (
                "2020-01-01T10:00:00.123+02:00",
                "k: \"2020-01-01T10:00:00.123+02:00\"\n",
            ),
            ("2020-01-01T25:00:00Z", "k: 2020-01-01T25:00:00Z\n"),
            ("2020-01-01T10:00:00", "k: 2020-01-01T10:00:00\n"),
            ("1:30", "k: \"1:30\"\n"),
            ("1:70", "k: 1:70\n"),
            ("12:30:45", "k: \"12:30:45\"\n"),
            ("-1:30", "k: \"-1:30\"\n"),
            ("<<", "k: <<\n"),
            ("=", "k: =\n"),
            ("0", "k: \"0\"\n"),
            ("1e400", "k: 1e400\n"),
            (
                "123456789012345678901234567890",
                "k: \"123456789012345678901234567890\"\n",
            ),
            ("0xFFFFFFFFFFFFFFFFFF", "k: 0xFFFFFFFFFFFFFFFFFF\n"),
            ("18446744073709551615", "k: \"18446744073709551615\"\n"),
            (
                "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
                "k: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n",
            ),
            (
                "word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word",
                "k: word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word\n",
            ),
            ("key: value", "k: 'key: value'\n"),
            ("foo bar: baz", "k: 'foo bar: baz'\n"),
        ]);
    }

    #[test]
    fn to_yaml_string_positions() {
        // yaml.v2 Marshal (read from encode.go/emitterc.go; checked against Go)
        check_to_yaml(&[
            (r#""a""#, "a\n"),
            (r#""""#, "\"\"\n"),
            (r#""true""#, "\"true\"\n"),
            ("\"a\\nb\"", "|-\n  a\n  b\n"),
            ("\"a\\nb\\n\"", "|\n  a\n  b\n"),
            ("\"\\n\\n\"", "|2+\n\n\n"),
            (r#""trail ""#, "'trail '\n"),
            (
                "[\"a\", \"\", \"true\", \"a\\nb\", \" x\"]",
                "- a\n- \"\"\n- \"true\"\n- |-\n  a\n  b\n- ' x'\n",
            ),
            (
                "{\"\": 1, \"true\": 2, \"a\\nb\": 3, \"kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk\": 4, \"a b\": 5, \"- x\": 6}",
                "\"\": 1\n'- x': 6\n? |-\n  a\n  b\n: 3\na b: 5\n? kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk\n: 4\n\"true\": 2\n",
            ),
        ]);
    }

    #[test]
    fn to_yaml_values() {
        // yaml.v2 Marshal (read from encode.go/emitterc.go; checked against Go)
        check_to_yaml(&[
            ("null", "null\n"),
            ("true", "true\n"),
            ("false", "false\n"),
            ("0", "0\n"),
            ("1", "1\n"),
            ("-5", "-5\n"),
            ("1.5", "1.5\n"),
            ("1000000.0", "1e+06\n"),
            ("1e+21", "1e+21\n"),
            ("1e-07", "1e-07\n"),
            ("0.1", "0.1\n"),
            ("100.0", "100\n"),
            ("123456789.0", "1.23456789e+08\n"),
            ("3.0", "3\n"),
            ("9223372036854775807", "9223372036854775807\n"),
            ("[]", "[]\n"),
            ("{}", "{}\n"),
            ("[[]]", "- []\n"),
            ("[{}]", "- {}\n"),
            (r#"{"a": []}"#, "a: []\n"),
            (r#"{"a": {}}"#, "a: {}\n"),
            (
                r#"[1, [2, [3, []]], {"a": [1, {"b": {}}]}]"#,
                "- 1\n- - 2\n  - - 3\n    - []\n- a:\n  - 1\n  - b: {}\n",
            ),
            (
                r#"{"b": 1, "a": 2, "c": {"z": [1, 2], "y": {"x": "v"}}}"#,
                "a: 2\nb: 1\nc:\n  \"y\":\n    x: v\n  z:\n  - 1\n  - 2\n",
            ),
            (
                r#"{"list": [{"name": "a", "value": "1"}, {"name": "b", "items": ["x", "y"]}]}"#,
                "list:\n- name: a\n  value: \"1\"\n- items:\n  - x\n  - \"y\"\n  name: b\n",
            ),
            (
                r#"[[1, 2], [3, [4, 5]], {"a": [6, 7]}]"#,
                "- - 1\n  - 2\n- - 3\n  - - 4\n    - 5\n- a:\n  - 6\n  - 7\n",
            ),
            (
                "{\"a\": \"multi\\nline\\nvalue\", \"b\": [\"x\\ny\", \"z\"], \"c\": {\"d\": \"e\\n\"}}",
                "a: |-\n  multi\n  line\n  value\nb:\n- |-\n  x\n  y\n- z\nc:\n  d: |\n    e\n",
            ),
            (
                r#"{"nested": {"deep": {"deeper": {"deepest": ["a", "b", {"c": "d"}]}}}}"#,
                "nested:\n  deep:\n    deeper:\n      deepest:\n      - a\n      - b\n      - c: d\n",
            ),
            ("[null, null]", "- null\n- null\n"),
            (r#"{"n": null}"#, "\"n\": null\n"),
        ]);
        check(&[
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
        // yaml.v2 sorter.go keyList.Less
        check_to_yaml(&[(
            "{\"a10\": 1, \"a2\": 2, \"a1\": 3, \"A\": 4, \"_x\": 5, \"1\": 6, \"10\": 7, \"9\": 8, \"b\": 9, \"B\": 10, \"a01\": 11, \"a001\": 12, \"-\": 13, \".\": 14, \"\\u00e9\": 15, \"z\": 16, \"Z\": 17, \"x-1\": 18, \"x_1\": 19, \"x.10\": 20, \"x.9\": 21}",
            "'-': 13\n.: 14\n_x: 5\n\"1\": 6\n\"9\": 8\n\"10\": 7\nA: 4\nB: 10\nZ: 17\na1: 3\na01: 11\na001: 12\na2: 2\na10: 1\nb: 9\nx-1: 18\nx.9: 21\nx.10: 20\nx_1: 19\nz: 16\n\u{e9}: 15\n",
        )]);
    }
}
