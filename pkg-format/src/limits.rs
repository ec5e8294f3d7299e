//! Bounds on the values the parameter policy takes and on what it reports, so that one
//! Instance (or one `-P` file) costs bounded time and memory wherever the policy runs: the
//! CLI, the admission webhook (which answers for the whole cluster) and the manager.
//!
//! - **Size and shape** ([`check`]): the values a user gives (an Instance's
//!   `spec.parameters`, a `-P` file, a `-p` value) and the values to store are at most
//!   [`MAX_BYTES`] of compact JSON, [`MAX_NODES`] values in all and [`MAX_DEPTH`] levels
//!   deep. The walk stops at the first bound passed, so measuring a hostile input costs no more
//!   than measuring an accepted one. What passes is refused whole, before any other check, with
//!   one diagnostic naming the bound ([`Code::TooLarge`]).
//! - **Problems reported** ([`bounded`]): at most [`MAX_PROBLEMS`], the first by pointer, then
//!   one line saying how many more there are ([`Code::TooManyProblems`]). Every value shown is
//!   already cut ([`crate::Shown`]); a pointer shown is cut to [`MAX_POINTER_SHOWN`] characters
//!   ([`shown_pointer`]).
//! - **Files** ([`MAX_FILE_BYTES`]): a `-P` file larger than this is not read.
//! - **Text** ([`cut`]): the one cutter of long messages, used by the webhook's denials and the
//!   manager's status messages, Events and logs: an overlong word (an echoed value) is cut in
//!   its middle, then head and tail are kept around `… N bytes cut …`.
//!
//! Why these numbers (docs/limits.md has the table): an Instance read as `kudo.dev/v1beta1`
//! keeps its v1beta2 values in one annotation, and Kubernetes refuses an object whose
//! annotations hold more than 256 KiB, so values larger than [`MAX_BYTES`] could never be read
//! through v1beta1 (the admission webhook checks the exact annotation size too). The largest
//! real package of the corpus (kafka) has 210 parameters and the deepest (the cassandra
//! example) nests 5 levels: [`MAX_NODES`] and [`MAX_DEPTH`] are a hundred times and six times
//! that, and keep the policy's work per request to milliseconds.

use serde_json::Value;

use crate::diag::{Code, Diagnostic, Origin, Severity};
use crate::pointer;

/// Most bytes of compact JSON in a set of values: Kubernetes' limit on the annotations of one
/// object (`TotalAnnotationSizeLimitB`), where the v1beta1 form of an Instance keeps them.
pub const MAX_BYTES: usize = 256 * 1024;

/// Most values in a set of values, every object member and array item counted, at any depth.
pub const MAX_NODES: usize = 25_000;

/// Most nesting levels of a set of values (the top-level object is level 0).
pub const MAX_DEPTH: usize = 32;

/// Most problems listed by one refusal; the rest are counted in one last line.
pub const MAX_PROBLEMS: usize = 50;

/// Largest `-P` file read, in bytes (comments and layout count): the values in it must fit in
/// [`MAX_BYTES`] anyway; the margin is for comments.
pub const MAX_FILE_BYTES: u64 = 4 * 1024 * 1024;

/// Longest pointer shown in a diagnostic, in characters (a key may be long).
pub const MAX_POINTER_SHOWN: usize = 200;

/// The size of a set of values that passed [`check`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Size {
    /// Bytes of compact JSON.
    pub bytes: usize,
    /// Values, containers included (the top-level one too).
    pub nodes: usize,
    /// Deepest level reached.
    pub depth: usize,
}

/// Which bound a set of values passed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Exceeded {
    /// More than [`MAX_BYTES`] of compact JSON (counted up to where the walk stopped).
    Bytes(usize),
    /// More than [`MAX_NODES`] values.
    Nodes,
    /// More than [`MAX_DEPTH`] levels, first at this pointer (cut to [`MAX_POINTER_SHOWN`]).
    Depth(String),
}

impl std::fmt::Display for Exceeded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Exceeded::Bytes(n) => write!(
                f,
                "are more than {MAX_BYTES} bytes as JSON (at least {n}): kudo.dev/v1beta1 keeps an Instance's values in one annotation, and Kubernetes holds at most 256 KiB of annotations per object"
            ),
            Exceeded::Nodes => write!(
                f,
                "hold more than {MAX_NODES} values (object members and array items, at any depth), the most kudo accepts in one Instance"
            ),
            Exceeded::Depth(at) => write!(
                f,
                "nest more than {MAX_DEPTH} levels deep (first at {at}), the most kudo accepts"
            ),
        }
    }
}

/// Measures `value` against [`MAX_BYTES`], [`MAX_NODES`] and [`MAX_DEPTH`], stopping at the
/// first bound passed: linear in the part of `value` it reads, and never more than the bounds.
pub fn check(value: &Value) -> Result<Size, Exceeded> {
    let mut size = Size::default();
    let mut path: Vec<String> = Vec::new();
    walk(value, 0, &mut path, &mut size)?;
    Ok(size)
}

fn walk(
    value: &Value,
    depth: usize,
    path: &mut Vec<String>,
    size: &mut Size,
) -> Result<(), Exceeded> {
    if depth > MAX_DEPTH {
        return Err(Exceeded::Depth(shown_pointer(&pointer::from_tokens(path))));
    }
    size.nodes += 1;
    size.depth = size.depth.max(depth);
    if size.nodes > MAX_NODES {
        return Err(Exceeded::Nodes);
    }
    size.bytes += match value {
        Value::Null => 4,
        Value::Bool(b) => 4 + usize::from(!b),
        Value::Number(n) => n.to_string().len(),
        Value::String(s) => quoted_len(s),
        // Brackets, and commas between items.
        Value::Array(a) => 2 + a.len().saturating_sub(1),
        // Braces, colons, and commas between members.
        Value::Object(m) => 2 + m.len() + m.len().saturating_sub(1),
    };
    if size.bytes > MAX_BYTES {
        return Err(Exceeded::Bytes(size.bytes));
    }
    match value {
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                path.push(i.to_string());
                walk(item, depth + 1, path, size)?;
                path.pop();
            }
        }
        Value::Object(members) => {
            for (k, v) in members {
                size.bytes += quoted_len(k);
                if size.bytes > MAX_BYTES {
                    return Err(Exceeded::Bytes(size.bytes));
                }
                path.push(k.clone());
                walk(v, depth + 1, path, size)?;
                path.pop();
            }
        }
        _ => {}
    }
    Ok(())
}

/// Bytes of `s` as a JSON string, quotes and escapes included (as `serde_json` writes it).
fn quoted_len(s: &str) -> usize {
    2 + s
        .bytes()
        .map(|b| match b {
            b'"' | b'\\' | b'\n' | b'\r' | b'\t' | 0x08 | 0x0c => 2,
            0..=0x1f => 6,
            _ => 1,
        })
        .sum::<usize>()
}

/// [`check`] as a refusal: one [`Code::TooLarge`] error saying which bound, about `what`
/// ("the Instance's parameters", "-P values.yaml"), with `origin`.
pub fn refuse(value: &Value, what: &str, origin: Origin) -> Result<Size, Diagnostic> {
    check(value).map_err(|e| {
        Diagnostic::error(Code::TooLarge, "", format!("{what} {e}"))
            .with_origin(origin)
            .with_help(
                "keep large data in a ConfigMap or Secret the operator reads, not in parameters",
            )
    })
}

/// At most [`MAX_PROBLEMS`] of `problems` (in their order), then one diagnostic saying how
/// many more there were: an error when any of those was one. Idempotent: the line of an
/// earlier call is counted, not listed, so a list bounded once and extended is bounded again
/// with the right count.
pub fn bounded(problems: Vec<Diagnostic>) -> Vec<Diagnostic> {
    let listed = problems
        .iter()
        .filter(|d| d.code != Code::TooManyProblems)
        .count();
    if listed <= MAX_PROBLEMS {
        return problems;
    }
    let mut kept = Vec::with_capacity(MAX_PROBLEMS + 1);
    let mut more = 0;
    let mut more_errors = false;
    for d in problems {
        if d.code == Code::TooManyProblems {
            more += hidden(&d);
            more_errors |= d.is_error();
        } else if kept.len() < MAX_PROBLEMS {
            kept.push(d);
        } else {
            more += 1;
            more_errors |= d.is_error();
        }
    }
    kept.push(more_problems(more, more_errors));
    kept
}

/// How many errors and warnings `problems` stand for, the ones a [`bounded`] line counts
/// included.
pub fn counts(problems: &[Diagnostic]) -> (usize, usize) {
    problems.iter().fold((0, 0), |(e, w), d| {
        let n = if d.code == Code::TooManyProblems {
            hidden(d)
        } else {
            1
        };
        if d.is_error() { (e + n, w) } else { (e, w + n) }
    })
}

fn more_problems(count: usize, errors: bool) -> Diagnostic {
    let mut d = Diagnostic::error(
        Code::TooManyProblems,
        "",
        format!("and {count} more problem(s), not listed: at most {MAX_PROBLEMS} are"),
    )
    .with_help("fix these and run again to see the rest");
    if !errors {
        d.severity = Severity::Warning;
    }
    d
}

/// The count a [`Code::TooManyProblems`] line of [`more_problems`] stands for.
fn hidden(d: &Diagnostic) -> usize {
    d.message
        .strip_prefix("and ")
        .and_then(|m| m.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(1)
}

/// Longest word kept whole: longer runs without whitespace (an echoed value, base64) keep
/// their first and last [`WORD_KEPT`] bytes.
const LONG_WORD: usize = 512;

/// What of a long word's head and of its tail is kept.
const WORD_KEPT: usize = 96;

/// `text`, at most `max` bytes long (the one cutter: the manager's status messages, Events and
/// logs, the webhook's denial lines) (on a char boundary): overlong words cut in their middle,
/// then the head and tail of what remains kept, with `… N bytes cut …` where text was cut.
/// Text that fits is returned unchanged.
pub fn cut(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let shorter = cut_words(text);
    if shorter.len() <= max {
        return shorter;
    }
    cut_middle(&shorter, max)
}

/// Each run of non-whitespace longer than [`LONG_WORD`] bytes, its middle replaced by
/// `… N bytes cut …`.
fn cut_words(text: &str) -> String {
    let mut out = String::with_capacity(text.len().min(64 * 1024));
    let mut rest = text;
    while !rest.is_empty() {
        let word_start = rest
            .find(|c: char| !c.is_whitespace())
            .unwrap_or(rest.len());
        out.push_str(&rest[..word_start]);
        rest = &rest[word_start..];
        let word_end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        let word = &rest[..word_end];
        if word.len() > LONG_WORD {
            let head = floor(word, WORD_KEPT);
            let tail = ceil(word, word.len() - WORD_KEPT);
            out.push_str(&word[..head]);
            out.push_str(&marker(tail - head));
            out.push_str(&word[tail..]);
        } else {
            out.push_str(word);
        }
        rest = &rest[word_end..];
    }
    out
}

/// The head and tail of `text`, `… N bytes cut …` between them, `max` bytes at most.
fn cut_middle(text: &str, max: usize) -> String {
    // The marker's own length depends on N: reserve for the longest it can be.
    let room = max.saturating_sub(marker(text.len()).len());
    let head = floor(text, room - room / 2);
    let tail = ceil(text, text.len() - room / 2);
    let mut out = String::with_capacity(max);
    out.push_str(&text[..head]);
    out.push_str(&marker(tail - head));
    out.push_str(&text[tail..]);
    out
}

fn marker(n: usize) -> String {
    format!("… {n} bytes cut …")
}

/// The largest char boundary of `s` at or below `i`.
fn floor(s: &str, mut i: usize) -> usize {
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The smallest char boundary of `s` at or above `i`.
fn ceil(s: &str, mut i: usize) -> usize {
    while !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

/// `pointer` as shown in a diagnostic: cut to [`MAX_POINTER_SHOWN`] characters, with `...`
/// and its length when cut.
pub fn shown_pointer(pointer: &str) -> String {
    if pointer.len() <= MAX_POINTER_SHOWN {
        return pointer.to_string();
    }
    let mut cut = MAX_POINTER_SHOWN;
    while !pointer.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}... ({} bytes)", &pointer[..cut], pointer.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_byte_count_is_the_length_of_compact_json() {
        for v in [
            json!({}),
            json!([]),
            json!(null),
            json!({"a": [1, 2.5, -3, true, false, null], "b": {"c\"\n\u{1}é": "x\\y\t"}}),
            json!([[[]], {}, "", 12345678901234567890u64]),
        ] {
            let size = check(&v).unwrap();
            assert_eq!(size.bytes, serde_json::to_string(&v).unwrap().len(), "{v}");
        }
    }

    #[test]
    fn nodes_and_depth_are_counted() {
        let size = check(&json!({"a": [1, {"b": 2}]})).unwrap();
        assert_eq!(size.nodes, 5);
        assert_eq!(size.depth, 3);
    }

    #[test]
    fn each_bound_is_refused_saying_which() {
        let items = json!({"a": vec![0; MAX_NODES]});
        assert_eq!(check(&items), Err(Exceeded::Nodes));
        let items = json!({"a": vec![0; MAX_NODES - 2]});
        assert_eq!(check(&items).map(|s| s.nodes), Ok(MAX_NODES));
        let big = json!({"a": "x".repeat(MAX_BYTES)});
        assert!(matches!(check(&big), Err(Exceeded::Bytes(n)) if n > MAX_BYTES));
        let mut deep = json!(1);
        for _ in 0..=MAX_DEPTH {
            deep = json!({ "d": deep });
        }
        let Err(Exceeded::Depth(at)) = check(&deep) else {
            panic!("too deep");
        };
        assert_eq!(at.matches("/d").count(), MAX_DEPTH + 1);
        // At the bounds: accepted.
        let mut deep = json!(1);
        for _ in 0..MAX_DEPTH {
            deep = json!({ "d": deep });
        }
        assert!(check(&deep).is_ok());
    }

    #[test]
    fn the_walk_stops_at_the_first_bound() {
        // A million items: refused at once by the bytes of their commas alone; a million
        // nested empty objects after MAX_NODES of them, not after reading all.
        let items = Value::Array(vec![json!(0); 1_000_000]);
        assert_eq!(check(&items), Err(Exceeded::Bytes(1_000_001)));
        let objects = json!({"a": vec![json!([]); 1_000_000]});
        assert!(matches!(check(&objects), Err(Exceeded::Bytes(_))));
        let keys: serde_json::Map<String, Value> =
            (0..100_000).map(|i| (i.to_string(), json!([]))).collect();
        assert!(check(&Value::Object(keys)).is_err());
    }

    #[test]
    fn problems_past_the_bound_are_counted_in_one_line() {
        let many: Vec<Diagnostic> = (0..MAX_PROBLEMS + 7)
            .map(|i| Diagnostic::error(Code::UnknownParameter, format!("/k{i}"), "no"))
            .collect();
        let out = bounded(many);
        assert_eq!(out.len(), MAX_PROBLEMS + 1);
        let last = out.last().unwrap();
        assert_eq!(last.code, Code::TooManyProblems);
        assert!(last.is_error());
        assert!(last.message.contains("and 7 more"), "{}", last.message);
        // Bounded again after more were added: the earlier line is counted, not listed.
        let mut again = out.clone();
        again.extend((0..4).map(|i| Diagnostic::error(Code::Required, format!("/r{i}"), "no")));
        let again = bounded(again);
        assert_eq!(again.len(), MAX_PROBLEMS + 1);
        assert!(
            again.last().unwrap().message.contains("and 11 more"),
            "{:?}",
            again.last()
        );
        assert_eq!(bounded(again.clone()), again);
        assert_eq!(counts(&again), (MAX_PROBLEMS + 11, 0));
        let few: Vec<Diagnostic> = (0..3)
            .map(|i| Diagnostic::warning(Code::Unused, format!("/k{i}"), "no"))
            .collect();
        assert_eq!(bounded(few.clone()), few);
    }

    #[test]
    fn the_cut_says_how_many_bytes_it_took_out() {
        let text = "a".repeat(300) + " " + &"b".repeat(300) + " " + &"c".repeat(300);
        let got = cut(&text, 200);
        assert!(got.len() <= 200, "{}", got.len());
        let n: usize = got
            .split("… ")
            .nth(1)
            .and_then(|s| s.split(' ').next())
            .and_then(|s| s.parse().ok())
            .expect("a marker with a count");
        let kept = got.len() - marker(n).len();
        assert_eq!(kept + n, text.len(), "{got}");
    }

    #[test]
    fn cuts_fall_on_char_boundaries() {
        // Multi-byte characters everywhere: every cut must land between them.
        for (text, bound) in [
            ("é".repeat(5000), 1000),
            ("日本語 ".repeat(3000), 777),
            ("🦀".repeat(1000), 101),
            (format!("x {} y", "ü".repeat(2000)), 300),
        ] {
            let got = cut(&text, bound);
            assert!(got.len() <= bound, "{} > {bound}", got.len());
            // Being a String at all proves the boundaries; the ends are the text's own.
            assert_eq!(got.chars().next(), text.chars().next());
            assert_eq!(got.chars().last(), text.chars().last());
        }
    }

    #[test]
    fn a_long_pointer_is_cut_on_a_character_boundary() {
        let long = format!("/{}", "é".repeat(500));
        let shown = shown_pointer(&long);
        assert!(shown.len() < MAX_POINTER_SHOWN + 30, "{shown}");
        assert!(shown.ends_with("... (1001 bytes)"), "{shown}");
        assert_eq!(shown_pointer("/a/b"), "/a/b");
    }
}
