//! What `--wait` shows on stderr while it waits: `kudo_client`'s wait hands every reading of
//! the Instance ([`Reading`]) to [`Progress::watch`], which draws it.
//!
//! - stderr is a terminal: one live line (indicatif), redrawn at each reading, its spinner and
//!   clock ticking in between: `⠙ zk: deploy / zookeeper / deploy: IN_PROGRESS: 1 of 3 ready (3s)`.
//!   It is cleared when the wait ends: the result follows on stdout, an error on stderr.
//! - stderr is not a terminal (CI logs, a pipe): one plain line per transition, nothing else:
//!   `zk: deploy / zookeeper / deploy: IN_PROGRESS (3.2 s)`. A transition is a change of what
//!   the line says without its message (plan, phase, step, status): a message that counts
//!   replicas prints no new line.
//! - `--quiet`: nothing.
//!
//! stdout never gets any of it: `-o json` and the text report stay as they are.

use std::io::{IsTerminal, Write};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressFinish, ProgressStyle};
use kudo_client::commands::wait::{PlanAt, Reading, Stage};

/// The longest message a line shows, in characters; a longer one is cut and ends in `…`.
const MESSAGE_MAX: usize = 60;

/// How often the live line redraws its spinner and clock.
const TICK: Duration = Duration::from_millis(100);

/// The live line: the Instance, plan, phase, step, status and message, then the time waited.
const TEMPLATE: &str = "{spinner} {msg} ({elapsed})";

/// Where the progress of a wait goes.
pub enum Progress {
    /// Nowhere (`--quiet`).
    Quiet,
    /// A live line on the terminal, drawn from the first reading on.
    Live(Option<ProgressBar>),
    /// One line per transition.
    Lines(Lines<std::io::Stderr>),
}

impl Progress {
    /// Progress on stderr, as stderr is (a terminal or not); none when `quiet`.
    pub fn on_stderr(quiet: bool) -> Progress {
        if quiet {
            Progress::Quiet
        } else if std::io::stderr().is_terminal() {
            Progress::Live(None)
        } else {
            Progress::Lines(Lines::new(std::io::stderr()))
        }
    }

    /// Shows reading `r`: the watcher `kudo_client`'s wait calls.
    pub fn watch(&mut self, r: &Reading<'_>) {
        match self {
            Progress::Quiet => {}
            Progress::Lines(lines) => lines.watch(r),
            Progress::Live(bar) => {
                let bar = bar.get_or_insert_with(|| live(r.elapsed));
                let mut msg = format!("{}: {}", r.instance, head(r.stage));
                if let Some(m) = message(r.stage) {
                    msg.push_str(": ");
                    msg.push_str(&m);
                }
                bar.set_message(msg);
                if r.stage.is_over() {
                    bar.finish_and_clear();
                }
            }
        }
    }
}

impl Progress {
    /// Shows a line that is not an Instance's reading (`kudo rollout status --wait`: the
    /// rollout's phase and wave): the live line says it; as plain lines, it is written when it
    /// differs from the last. `over`: the wait ended (the live line is cleared).
    pub fn say(&mut self, line: &str, elapsed: Duration, over: bool) {
        match self {
            Progress::Quiet => {}
            Progress::Lines(lines) => lines.say(line, elapsed),
            Progress::Live(bar) => {
                let bar = bar.get_or_insert_with(|| live(elapsed));
                bar.set_message(line.to_string());
                if over {
                    bar.finish_and_clear();
                }
            }
        }
    }
}

/// A spinner on stderr whose clock starts `elapsed` ago; cleared when dropped (a wait that
/// failed: its error is printed next).
fn live(elapsed: Duration) -> ProgressBar {
    let style =
        ProgressStyle::with_template(TEMPLATE).unwrap_or_else(|_| ProgressStyle::default_spinner());
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr())
        .with_style(style)
        .with_elapsed(elapsed)
        .with_finish(ProgressFinish::AndClear);
    bar.enable_steady_tick(TICK);
    bar
}

/// One plain line per transition, written to `out`.
pub struct Lines<W> {
    out: W,
    /// What the last line said, without its message and time.
    last: Option<String>,
}

impl<W: Write> Lines<W> {
    /// Lines to `out`, none written yet.
    pub fn new(out: W) -> Lines<W> {
        Lines { out, last: None }
    }

    /// Writes `line` when it differs from the last one ([`Progress::say`]).
    pub fn say(&mut self, line: &str, elapsed: Duration) {
        if self.last.as_deref() != Some(line) {
            let secs = elapsed.as_secs_f64();
            // stderr closed: nobody reads the progress, the wait goes on
            let _ = writeln!(self.out, "{line} ({secs:.1} s)");
            self.last = Some(line.to_string());
        }
    }

    /// Writes a line for `r` when it says something else than the last one.
    pub fn watch(&mut self, r: &Reading<'_>) {
        let head = head(r.stage);
        if self.last.as_ref() == Some(&head) {
            return;
        }
        let message = message(r.stage)
            .map(|m| format!(": {m}"))
            .unwrap_or_default();
        let secs = r.elapsed.as_secs_f64();
        // stderr closed: nobody reads the progress, the wait goes on
        let _ = writeln!(self.out, "{}: {head}{message} ({secs:.1} s)", r.instance);
        self.last = Some(head);
    }
}

/// What a line says of `stage`, without its message: `deploy / zookeeper / deploy: IN_PROGRESS`.
fn head(stage: &Stage) -> String {
    match stage {
        Stage::Running(at) | Stage::Complete(at) | Stage::Failed(at) => plan_head(at),
        Stage::Deleting { cleanup: None } => "being deleted".into(),
        Stage::Deleting { cleanup: Some(at) } => format!("being deleted, {}", plan_head(at)),
        Stage::Gone => "deleted".into(),
        // the manager has not started the plan yet: the sentence a timeout would say
        other => other.to_string(),
    }
}

/// `plan / phase / step: STATUS`, as far as the status names them.
fn plan_head(at: &PlanAt) -> String {
    match &at.step {
        Some(s) => match &s.name {
            Some(step) => format!("{} / {} / {step}: {}", at.plan, s.phase, s.status),
            None => format!("{} / {}: {}", at.plan, s.phase, s.status),
        },
        None => format!("{}: {}", at.plan, at.status),
    }
}

/// The message of what [`head`] names (the step's, else the plan's), on one line and cut at
/// [`MESSAGE_MAX`].
fn message(stage: &Stage) -> Option<String> {
    let at = match stage {
        Stage::Running(at)
        | Stage::Complete(at)
        | Stage::Failed(at)
        | Stage::Deleting { cleanup: Some(at) } => at,
        _ => return None,
    };
    let m = match &at.step {
        Some(s) => s.message.as_deref(),
        None => at.message.as_deref(),
    }?;
    let line = m.lines().map(str::trim).find(|l| !l.is_empty())?;
    let more = line.chars().count() > MESSAGE_MAX || m.trim().lines().count() > 1;
    let mut short: String = line.chars().take(MESSAGE_MAX).collect();
    if more {
        short.push('…');
    }
    Some(short)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_said_line_is_written_once_until_it_changes() {
        let mut lines = Lines::new(Vec::new());
        let second = Duration::from_secs(1);
        lines.say("Rollout a/r: Progressing, wave 1/2", second);
        lines.say("Rollout a/r: Progressing, wave 1/2", second * 2);
        lines.say("Rollout a/r: Completed", second * 3);
        assert_eq!(
            String::from_utf8(lines.out).unwrap(),
            "Rollout a/r: Progressing, wave 1/2 (1.0 s)\nRollout a/r: Completed (3.0 s)\n"
        );
    }
    use kudo_client::commands::wait::StepAt;
    use kudo_crd::common::ExecStatus::{self, *};

    fn step(phase: &str, step: &str, status: ExecStatus, message: Option<&str>) -> Stage {
        let at = PlanAt {
            plan: "deploy".into(),
            status: if status == Complete {
                Complete
            } else {
                InProgress
            },
            message: None,
            step: Some(StepAt {
                phase: phase.into(),
                name: Some(step.into()),
                status,
                message: message.map(str::to_string),
            }),
        };
        Stage::Running(at)
    }

    fn plan(stage: fn(PlanAt) -> Stage, status: ExecStatus, message: Option<&str>) -> Stage {
        stage(PlanAt {
            plan: "deploy".into(),
            status,
            message: message.map(str::to_string),
            step: None,
        })
    }

    fn failed_at(phase: &str, step: Option<&str>, message: &str) -> Stage {
        Stage::Failed(PlanAt {
            plan: "deploy".into(),
            status: FatalError,
            message: None,
            step: Some(StepAt {
                phase: phase.into(),
                name: step.map(str::to_string),
                status: FatalError,
                message: Some(message.into()),
            }),
        })
    }

    fn cleanup(status: ExecStatus) -> Stage {
        Stage::Deleting {
            cleanup: Some(PlanAt {
                plan: "cleanup".into(),
                status: status.clone(),
                message: None,
                step: Some(StepAt {
                    phase: "remove".into(),
                    name: Some("backup".into()),
                    status,
                    message: None,
                }),
            }),
        }
    }

    /// The lines a sequence of readings (one a second) prints when stderr is not a terminal.
    fn lines(stages: &[Stage]) -> Vec<String> {
        let mut out = Lines::new(Vec::new());
        for (i, stage) in stages.iter().enumerate() {
            out.watch(&Reading {
                instance: "zk",
                stage,
                elapsed: Duration::from_millis(1000 * i as u64 + 200),
            });
        }
        String::from_utf8(out.out)
            .expect("UTF-8")
            .lines()
            .map(str::to_string)
            .collect()
    }

    #[test]
    fn one_line_per_transition_when_stderr_is_not_a_terminal() {
        let long = "x".repeat(MESSAGE_MAX + 1);
        let cut = format!("{}…", "x".repeat(MESSAGE_MAX));
        let cases: &[(&str, Vec<Stage>, Vec<String>)] = &[
            (
                "a plan from the manager's first look to COMPLETE",
                vec![
                    Stage::NoStatus,
                    Stage::Behind { generation: 2, observed: 1 },
                    step("zookeeper", "deploy", Pending, None),
                    step("zookeeper", "deploy", InProgress, Some("0 of 3 ready")),
                    step("zookeeper", "deploy", InProgress, Some("1 of 3 ready")),
                    step("zookeeper", "validation", InProgress, None),
                    plan(Stage::Complete, Complete, None),
                ],
                vec![
                    "zk: the manager has not reported a status yet (0.2 s)".into(),
                    "zk: the manager has not acted on generation 2 yet (observed generation 1) (1.2 s)".into(),
                    "zk: deploy / zookeeper / deploy: PENDING (2.2 s)".into(),
                    // a message that changes alone is no transition
                    "zk: deploy / zookeeper / deploy: IN_PROGRESS: 0 of 3 ready (3.2 s)".into(),
                    "zk: deploy / zookeeper / validation: IN_PROGRESS (5.2 s)".into(),
                    "zk: deploy: COMPLETE (6.2 s)".into(),
                ],
            ),
            (
                "a plan already COMPLETE: one line",
                vec![plan(Stage::Complete, Complete, None)],
                vec!["zk: deploy: COMPLETE (0.2 s)".into()],
            ),
            (
                "the same reading again and again: one line",
                vec![Stage::NoActivePlan, Stage::NoActivePlan, Stage::NoActivePlan],
                vec!["zk: no plan has started (0.2 s)".into()],
            ),
            (
                "ERROR then retried: each status a line",
                vec![
                    step("nodes", "node", InProgress, None),
                    step("nodes", "node", Error, Some("image pull failed")),
                    step("nodes", "node", Error, Some("image pull failed, retry 2")),
                    step("nodes", "node", InProgress, None),
                ],
                vec![
                    "zk: deploy / nodes / node: IN_PROGRESS (0.2 s)".into(),
                    "zk: deploy / nodes / node: ERROR: image pull failed (1.2 s)".into(),
                    "zk: deploy / nodes / node: IN_PROGRESS (3.2 s)".into(),
                ],
            ),
            (
                "FATAL_ERROR: where and why",
                vec![
                    Stage::NoPlanStatus { plan: "deploy".into() },
                    failed_at("nodes", Some("node"), "StatefulSet cassandra: invalid image"),
                ],
                vec![
                    "zk: plan deploy has no status yet (0.2 s)".into(),
                    "zk: deploy / nodes / node: FATAL_ERROR: StatefulSet cassandra: invalid image (1.2 s)".into(),
                ],
            ),
            (
                "a failed phase that names no step; a plan with no phases",
                vec![
                    plan(Stage::Running, Pending, Some("waiting for its turn")),
                    failed_at("nodes", None, "timed out"),
                ],
                vec![
                    "zk: deploy: PENDING: waiting for its turn (0.2 s)".into(),
                    "zk: deploy / nodes: FATAL_ERROR: timed out (1.2 s)".into(),
                ],
            ),
            (
                "a long message is cut, a message of many lines shows its first",
                vec![
                    step("nodes", "node", InProgress, Some(&long)),
                    step("nodes", "node", Error, Some("\n  first\nsecond")),
                ],
                vec![
                    format!("zk: deploy / nodes / node: IN_PROGRESS: {cut} (0.2 s)"),
                    "zk: deploy / nodes / node: ERROR: first… (1.2 s)".into(),
                ],
            ),
            (
                "a triggered run waits for its turn",
                vec![Stage::RunNotStarted {
                    uid: "run-1".into(),
                    plan: "deploy".into(),
                    run: "u-1".into(),
                }],
                vec!["zk: the triggered run run-1 has not started (active: plan deploy run u-1) (0.2 s)".into()],
            ),
            (
                "uninstall: the Instance stays while its cleanup plan runs, then goes",
                vec![
                    Stage::Deleting { cleanup: None },
                    cleanup(InProgress),
                    cleanup(InProgress),
                    Stage::Gone,
                ],
                vec![
                    "zk: being deleted (0.2 s)".into(),
                    "zk: being deleted, cleanup / remove / backup: IN_PROGRESS (1.2 s)".into(),
                    "zk: deleted (3.2 s)".into(),
                ],
            ),
        ];
        for (case, stages, want) in cases {
            assert_eq!(&lines(stages), want, "case: {case}");
        }
    }

    #[test]
    fn quiet_shows_nothing_and_draws_no_line() {
        let mut p = Progress::on_stderr(true);
        assert!(matches!(p, Progress::Quiet));
        p.watch(&Reading {
            instance: "zk",
            stage: &Stage::NoStatus,
            elapsed: Duration::ZERO,
        });
        assert!(matches!(p, Progress::Quiet));
    }
}
