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
//!   already cut ([`Shown`](kudo_diag::Shown)); a pointer shown is cut to
//!   [`MAX_POINTER_SHOWN`](kudo_diag::cut::MAX_POINTER_SHOWN) characters ([`shown_pointer`]).
//! - **Files** ([`MAX_FILE_BYTES`]): a `-P` file larger than this is not read.
//!
//! Why these numbers (docs/limits.md has the table): an Instance read as `kudo.dev/v1beta1`
//! keeps its v1beta2 values in one annotation, and Kubernetes refuses an object whose
//! annotations hold more than 256 KiB, so values larger than [`MAX_BYTES`] could never be read
//! through v1beta1 (the admission webhook checks the exact annotation size too). The largest
//! real package of the corpus (kafka) has 210 parameters and the deepest (the cassandra
//! example) nests 5 levels: [`MAX_NODES`] and [`MAX_DEPTH`] are a hundred times and six times
//! that, and keep the policy's work per request to milliseconds.

use serde_json::Value;

use kudo_diag::cut::shown_pointer;
use kudo_diag::{Code, Diagnostic, Origin, Severity, pointer};

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
    /// More than [`MAX_DEPTH`] levels, first at this pointer (cut to [`MAX_POINTER_SHOWN`](kudo_diag::cut::MAX_POINTER_SHOWN)).
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
}
