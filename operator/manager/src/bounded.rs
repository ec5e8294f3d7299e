//! Messages cut to a bounded size ([`cut`]) before the manager writes them anywhere: into an
//! Instance's status ([`STATUS_MESSAGE`], [`status`]), into an Event ([`EVENT_NOTE`]) or into
//! its log ([`LOG_MESSAGE`]).
//!
//! An error may echo what it refuses: the API server's 422 for a CronJob whose `schedule` is a
//! 1 MB parameter holds the value twice. Written whole, it made the status too large to store
//! (over the API server's 3 MiB request limit), so the Instance showed no status at all, and
//! each retry logged megabytes (issue 38). Cut, the message keeps what says why: every overlong
//! word (a run without spaces, such as an echoed value) is cut in its middle first, so the
//! sentence around it survives; then, if the text is still too long, its head and tail are kept
//! with the number of bytes cut between them.

use kudo_crd::common::{InstanceStatus, PlanStatus};

/// Longest message the manager writes into an Instance's status (a step's, a phase's, a plan's,
/// a warning, a condition's), in bytes.
pub const STATUS_MESSAGE: usize = 4096;

/// Longest Event note: the API server refuses an events.k8s.io/v1 Event whose `note` is over
/// 1 kB (`NoteLengthLimit`), so kube's recorder could not publish a longer one.
pub const EVENT_NOTE: usize = 1024;

/// Longest message in one log line: the first time a step fails a given way its message is
/// logged with up to this much of its text.
pub const LOG_MESSAGE: usize = 64 * 1024;

/// Longest word kept whole: longer runs without whitespace (an echoed value, base64) keep
/// their first and last [`WORD_KEPT`] bytes.
const LONG_WORD: usize = 512;

/// What of a long word's head and of its tail is kept.
const WORD_KEPT: usize = 96;

/// `text`, at most `max` bytes long (on a char boundary): overlong words cut in their middle,
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

/// Every message of `status` (each step's, phase's and plan's, each plan warning, each
/// condition's) cut to [`STATUS_MESSAGE`]: what the manager writes is never larger.
pub fn status(status: &mut InstanceStatus) {
    for ps in status.plan_status.values_mut() {
        plan(ps);
    }
    for c in &mut status.conditions {
        bound(&mut c.message);
    }
}

/// Every message of the plan status `ps` (its own, its phases', its steps', its warnings) cut
/// to [`STATUS_MESSAGE`]: done as soon as they are rolled up, so that what the manager holds
/// is what it writes, and a status read back compares equal.
pub fn plan(ps: &mut PlanStatus) {
    bound(&mut ps.message);
    for w in &mut ps.warnings {
        if w.len() > STATUS_MESSAGE {
            *w = cut(w, STATUS_MESSAGE);
        }
    }
    for phase in &mut ps.phases {
        bound(&mut phase.message);
        for step in &mut phase.steps {
            bound(&mut step.message);
        }
    }
}

fn bound(message: &mut Option<String>) {
    if let Some(text) = message.as_mut()
        && text.len() > STATUS_MESSAGE
    {
        *text = cut(text, STATUS_MESSAGE);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The CronJob refusal of issue 38, with a value of `n` bytes echoed twice.
    fn refusal(n: usize) -> String {
        let v = "x".repeat(n);
        format!(
            "the API server refused CronJob big-backup: CronJob.batch \"big-backup\" is invalid: spec.schedule: Invalid value: \"{v}\": Expected exactly 5 fields, found 1: {v}"
        )
    }

    #[test]
    fn a_message_is_cut_to_its_bound_keeping_what_says_why() {
        // (input, bound, what the result must hold)
        let huge = refusal(1024 * 1024);
        let cases: &[(&str, String, usize, &[&str])] = &[
            ("fits", "short message".into(), 100, &["short message"]),
            (
                "an echoed 1 MB value, status bound",
                huge.clone(),
                STATUS_MESSAGE,
                &[
                    "CronJob big-backup",
                    "spec.schedule: Invalid value",
                    "Expected exactly 5 fields, found 1",
                    "bytes cut …",
                ],
            ),
            (
                "an echoed 1 MB value, event bound",
                huge.clone(),
                EVENT_NOTE,
                &["CronJob big-backup", "Expected exactly 5 fields"],
            ),
            (
                "many short words: head and tail",
                "word ".repeat(10_000),
                STATUS_MESSAGE,
                &["word word", "bytes cut …"],
            ),
        ];
        for (name, input, bound, holds) in cases {
            let got = cut(input, *bound);
            assert!(got.len() <= *bound, "{name}: {} > {bound}", got.len());
            for h in *holds {
                assert!(got.contains(h), "{name}: no {h:?} in {got}");
            }
            if input.len() <= *bound {
                assert_eq!(&got, input, "{name}: fits, unchanged");
            }
        }
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
    fn every_message_of_a_status_is_bounded() {
        let huge = refusal(200_000);
        let mut status: InstanceStatus = serde_json::from_value(serde_json::json!({
            "planStatus": {"deploy": {
                "name": "deploy", "status": "FATAL_ERROR", "message": huge,
                "warnings": [huge],
                "phases": [{"name": "main", "status": "FATAL_ERROR", "message": huge,
                    "steps": [{"name": "backup", "status": "FATAL_ERROR", "message": huge}]}],
            }},
            "conditions": [{"type": "Ready", "status": "False", "message": huge}],
        }))
        .expect("a status");
        super::status(&mut status);
        let text = serde_json::to_string(&status).expect("JSON");
        assert!(text.len() < 6 * STATUS_MESSAGE, "{} bytes", text.len());
        let ps = &status.plan_status["deploy"];
        for m in [
            ps.message.as_deref(),
            Some(ps.warnings[0].as_str()),
            ps.phases[0].message.as_deref(),
            ps.phases[0].steps[0].message.as_deref(),
            status.conditions[0].message.as_deref(),
        ] {
            let m = m.expect("a message");
            assert!(
                m.len() <= STATUS_MESSAGE && m.contains("Expected exactly 5"),
                "{m}"
            );
        }
    }
}
