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

// The one cutter, kudo_diag::cut::cut: overlong words cut in their middle, then the head and
// tail kept, at most `max` bytes.
pub use kudo_diag::cut::cut;

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
