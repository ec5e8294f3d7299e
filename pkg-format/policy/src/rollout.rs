//! Fleet upgrades: how a Rollout moves many Instances to one new version, as pure decisions
//! over its state, passed in as data. The manager reads the Instances and the Rollout's status,
//! calls [`advance`], and carries out what it says (upgrade these, roll back those, this phase);
//! the CLI and the admission webhook check a Rollout with [`Waves::parse`], [`Gate::compile`]
//! and [`crate::window::Window::new`] before it is stored.
//!
//! - **Order** ([`order`]): Instances labelled [`PRIORITY_LABEL`] first, lowest number first;
//!   then by namespace, then by name. The order is fixed when the rollout starts.
//! - **Waves** ([`Waves`]): cumulative targets, each a count or a percentage of all the
//!   selected Instances, the last 100 %. `1,20%,100%` of 30 Instances: 1, then up to 6 in all
//!   (5 more), then the other 24. A percentage rounds up, so every wave moves at least one; a
//!   wave whose target is already reached is empty and skipped.
//! - **Pass**: a wave passes when each of its Instances has its plan COMPLETE for the new
//!   version, has stayed so for `minReady`, and passes the `gate` (CEL over the Instance).
//! - **Halt**: an Instance fails when its plan ends in FATAL_ERROR, or when it has not passed
//!   within `progressDeadline` of its upgrade. When a wave holds more than `maxFailures` failed
//!   Instances the rollout halts at once: no other Instance starts. With
//!   [`OnFailure::Rollback`] each failed Instance is rolled back (when that is safe: the
//!   manager checks it).

use jiff::{SignedDuration, Timestamp};
use serde::{Deserialize, Serialize};

/// The label that puts an Instance earlier in a rollout: an integer, lowest first; Instances
/// without it come after those with it.
pub const PRIORITY_LABEL: &str = "kudo.dev/rollout-priority";

/// The most waves a rollout may have.
pub const MAX_WAVES: usize = 20;

/// One wave's cumulative target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// This many Instances in all.
    Count(u32),
    /// This percentage of all selected Instances, rounded up.
    Percent(u32),
}

/// A rollout's waves: cumulative targets, the last 100 %.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Waves(Vec<Target>);

/// Why waves cannot be used: each names the wave (`spec.waves[1]`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WaveError {
    /// No wave at all.
    #[error("spec.waves: at least one wave is needed (the last must be 100%)")]
    Empty,
    /// More than [`MAX_WAVES`].
    #[error("spec.waves: {0} waves, at most {MAX_WAVES}")]
    TooMany(usize),
    /// Not a count or a percentage.
    #[error("spec.waves[{index}] {text:?}: not a count (5) or a percentage (20%)")]
    Syntax {
        /// Which wave.
        index: usize,
        /// As written.
        text: String,
    },
    /// 0, 0 % or over 100 %.
    #[error(
        "spec.waves[{index}] {text:?}: must be a count of at least 1 or a percentage from 1% to 100%"
    )]
    Range {
        /// Which wave.
        index: usize,
        /// As written.
        text: String,
    },
    /// Not above the wave before it of the same kind.
    #[error(
        "spec.waves[{index}] {text:?}: targets are cumulative, so each must be above the one before ({before:?})"
    )]
    NotIncreasing {
        /// Which wave.
        index: usize,
        /// As written.
        text: String,
        /// The earlier wave it is not above.
        before: String,
    },
    /// The last wave is not 100 %.
    #[error("spec.waves: the last wave must be 100% (every selected Instance), not {0:?}")]
    NotAll(String),
}

impl Waves {
    /// Waves as the CLI takes them: `1,10%,50%,100%`.
    pub fn parse(text: &str) -> Result<Waves, WaveError> {
        let parts: Vec<String> = text.split(',').map(|s| s.trim().to_string()).collect();
        Waves::from_list(&parts)
    }

    /// Waves as a Rollout's `spec.waves` holds them: `["1", "10%", "100%"]`.
    pub fn from_list(list: &[String]) -> Result<Waves, WaveError> {
        if list.is_empty() || list.iter().all(|s| s.trim().is_empty()) {
            return Err(WaveError::Empty);
        }
        if list.len() > MAX_WAVES {
            return Err(WaveError::TooMany(list.len()));
        }
        let mut targets = Vec::with_capacity(list.len());
        // The last count and the last percentage, each with its text.
        let mut last_count: Option<(u32, &str)> = None;
        let mut last_percent: Option<(u32, &str)> = None;
        for (index, text) in list.iter().enumerate() {
            let t = text.trim();
            let syntax = || WaveError::Syntax {
                index,
                text: text.clone(),
            };
            let target = match t.strip_suffix('%') {
                Some(p) => Target::Percent(p.trim().parse().map_err(|_| syntax())?),
                None => Target::Count(t.parse().map_err(|_| syntax())?),
            };
            let (n, last) = match target {
                Target::Count(0) | Target::Percent(0) => None,
                Target::Percent(p) if p > 100 => None,
                Target::Count(n) => Some((n, &mut last_count)),
                Target::Percent(p) => Some((p, &mut last_percent)),
            }
            .ok_or_else(|| WaveError::Range {
                index,
                text: text.clone(),
            })?;
            if let Some((before, before_text)) = *last
                && n <= before
            {
                return Err(WaveError::NotIncreasing {
                    index,
                    text: text.clone(),
                    before: before_text.to_string(),
                });
            }
            *last = Some((n, t));
            if last_percent.is_some_and(|(p, _)| p == 100) && index + 1 < list.len() {
                return Err(WaveError::NotIncreasing {
                    index: index + 1,
                    text: list[index + 1].clone(),
                    before: t.to_string(),
                });
            }
            targets.push(target);
        }
        match targets.last() {
            Some(Target::Percent(100)) => Ok(Waves(targets)),
            _ => Err(WaveError::NotAll(list.last().cloned().unwrap_or_default())),
        }
    }

    /// Where each wave ends in the rollout order, for `total` selected Instances: strictly
    /// increasing ends, the last `total` (empty waves left out). Wave `i` holds the Instances
    /// from `ends[i-1]` (0 for the first) to `ends[i]`.
    pub fn ends(&self, total: usize) -> Vec<usize> {
        let mut ends: Vec<usize> = Vec::with_capacity(self.0.len());
        for t in &self.0 {
            let end = match *t {
                Target::Count(n) => (n as usize).min(total),
                Target::Percent(p) => (total * p as usize).div_ceil(100).min(total),
            };
            if end > ends.last().copied().unwrap_or(0) {
                ends.push(end);
            }
        }
        ends
    }

    /// The targets as written back into `spec.waves`.
    pub fn to_list(&self) -> Vec<String> {
        self.0
            .iter()
            .map(|t| match t {
                Target::Count(n) => n.to_string(),
                Target::Percent(p) => format!("{p}%"),
            })
            .collect()
    }
}

/// An Instance a rollout selected, as [`order`] sorts it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// Its namespace.
    pub namespace: String,
    /// Its name.
    pub name: String,
    /// Its [`PRIORITY_LABEL`], when that is an integer.
    pub priority: Option<i64>,
}

impl Candidate {
    /// A candidate with the priority read from its labels (a label that is not an integer is
    /// no priority).
    pub fn new(
        namespace: &str,
        name: &str,
        labels: Option<&std::collections::BTreeMap<String, String>>,
    ) -> Candidate {
        Candidate {
            namespace: namespace.to_string(),
            name: name.to_string(),
            priority: labels
                .and_then(|l| l.get(PRIORITY_LABEL))
                .and_then(|p| p.trim().parse().ok()),
        }
    }
}

/// Sorts candidates into rollout order: labelled ones first, lowest priority number first, then
/// namespace, then name.
pub fn order(candidates: &mut [Candidate]) {
    candidates.sort_by(|a, b| {
        (a.priority.is_none(), a.priority, &a.namespace, &a.name).cmp(&(
            b.priority.is_none(),
            b.priority,
            &b.namespace,
            &b.name,
        ))
    });
}

/// What a rollout does with an Instance that failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum OnFailure {
    /// Roll it back to its revision before the rollout (when that is safe).
    #[default]
    Rollback,
    /// Leave it as it is.
    Halt,
}

/// How a rollout judges its waves (from its spec, with the defaults applied).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// Failed Instances a wave may hold without halting (default 0).
    pub max_failures: u32,
    /// How long an Instance must stay COMPLETE before it counts (default 0).
    pub min_ready: SignedDuration,
    /// How long an Instance has, from its upgrade, to pass (default 10 minutes).
    pub progress_deadline: SignedDuration,
    /// What happens to failed Instances.
    pub on_failure: OnFailure,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            max_failures: 0,
            min_ready: SignedDuration::ZERO,
            progress_deadline: SignedDuration::from_mins(10),
            on_failure: OnFailure::Rollback,
        }
    }
}

/// Where one Instance is in a rollout (`status.instances[].state`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum Member {
    /// Not touched yet.
    #[default]
    Pending,
    /// Upgraded; its plan has not passed yet.
    Upgrading,
    /// Passed: on the new version, COMPLETE for `minReady`, through the gate.
    Succeeded,
    /// Failed; nothing was done about it (`onFailure: halt`, or the rollback is pending).
    Failed,
    /// Failed, then rolled back to its revision before the rollout.
    RolledBack,
    /// Failed, and its rollback was not safe: it stays where it is (the reason says why).
    RollbackRefused,
    /// Left out by `skipUnsafe` (the preflight found the upgrade unsafe for it).
    Skipped,
}

impl Member {
    /// Whether it failed, whatever was done about it.
    pub fn failed(self) -> bool {
        matches!(
            self,
            Member::Failed | Member::RolledBack | Member::RollbackRefused
        )
    }
}

/// What the manager saw of an upgraded Instance's plan, for the new version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Progress {
    /// Its plan for the new version has not ended (or not started).
    Running,
    /// Its plan is COMPLETE for the new version, since this time.
    Complete {
        /// When the plan completed.
        since: Timestamp,
    },
    /// Its plan ended in FATAL_ERROR.
    Fatal {
        /// The plan's message.
        message: String,
    },
}

/// The gate's answer for an Instance whose plan is COMPLETE.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GateResult {
    /// No gate, or it returned true.
    Pass,
    /// It returned false, or could not be evaluated (why).
    Wait(String),
}

/// One Instance of the current wave, as [`advance`] reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    /// Where it is.
    pub member: Member,
    /// When it was upgraded (for [`Member::Upgrading`]).
    pub upgraded: Option<Timestamp>,
    /// Its plan (for [`Member::Upgrading`]).
    pub progress: Progress,
    /// The gate (for a COMPLETE plan).
    pub gate: GateResult,
}

/// What may start now: the rollout's own conditions, judged by the manager.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum May {
    /// Upgrades may start.
    Start,
    /// `spec.paused`: nothing starts; what runs is still judged.
    Paused,
    /// Outside the window, until it opens.
    AwaitWindow(Timestamp),
    /// `spec.approval` not given yet.
    AwaitApproval,
}

/// The rollout's phase (`status.phase`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum Phase {
    /// Created; the preflight has not run.
    #[default]
    Pending,
    /// The preflight refused it: nothing was touched.
    Refused,
    /// Waiting for `kudo rollout approve`.
    AwaitingApproval,
    /// Waiting for its window to open.
    AwaitingWindow,
    /// Moving its waves.
    Progressing,
    /// Paused by `spec.paused`.
    Paused,
    /// A wave failed: nothing more starts until `resume`.
    Halted,
    /// Every wave passed.
    Completed,
    /// Aborted by `kudo rollout abort`.
    Aborted,
}

impl Phase {
    /// Whether nothing more will happen without a user.
    pub fn is_final(self) -> bool {
        matches!(
            self,
            Phase::Refused | Phase::Completed | Phase::Aborted | Phase::Halted
        )
    }
}

/// What [`advance`] decided for the current wave.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Advance {
    /// The new phase.
    pub phase: Phase,
    /// The wave it is in (the next one when this one passed).
    pub wave: usize,
    /// Members (indexes into the wave) whose state changes, with why.
    pub changes: Vec<(usize, Member, String)>,
    /// Members to upgrade now.
    pub upgrade: Vec<usize>,
    /// Members to roll back now (failed, with `onFailure: rollback`).
    pub roll_back: Vec<usize>,
    /// When to look again at the latest, with nothing else happening (a `minReady` or a
    /// deadline running out, a window opening).
    pub requeue_at: Option<Timestamp>,
}

/// Judges the current wave (`wave` of `waves` in all; `members` are its Instances) at `now`:
/// who passed, who failed, whether it halts, passes, or who starts next.
pub fn advance(
    settings: &Settings,
    wave: usize,
    waves: usize,
    members: &[Seen],
    may: May,
    now: Timestamp,
) -> Advance {
    let mut out = Advance {
        phase: Phase::Progressing,
        wave,
        ..Advance::default()
    };
    let mut soonest: Option<Timestamp> = None;
    let mut soon = |t: Timestamp| soonest = Some(soonest.map_or(t, |s| s.min(t)));
    let mut states: Vec<Member> = members.iter().map(|m| m.member).collect();
    for (i, m) in members.iter().enumerate() {
        if m.member != Member::Upgrading {
            continue;
        }
        let deadline = m
            .upgraded
            .and_then(|t| t.checked_add(settings.progress_deadline).ok());
        let late = deadline.is_some_and(|d| now >= d);
        let verdict = match &m.progress {
            Progress::Fatal { message } => {
                Some((Member::Failed, format!("plan failed: {message}")))
            }
            Progress::Complete { since } => {
                let ready_at = since.checked_add(settings.min_ready).unwrap_or(*since);
                match (&m.gate, now >= ready_at) {
                    (GateResult::Pass, true) => Some((
                        Member::Succeeded,
                        format!("COMPLETE since {since}, gate passed"),
                    )),
                    (GateResult::Wait(why), true) if late => Some((
                        Member::Failed,
                        format!(
                            "gate not passed within progressDeadline {}: {why}",
                            show(settings.progress_deadline)
                        ),
                    )),
                    (_, false) if late => Some((
                        Member::Failed,
                        format!(
                            "not COMPLETE for minReady {} within progressDeadline {}",
                            show(settings.min_ready),
                            show(settings.progress_deadline)
                        ),
                    )),
                    (_, ready) => {
                        if !ready {
                            soon(ready_at);
                        }
                        None
                    }
                }
            }
            Progress::Running if late => Some((
                Member::Failed,
                format!(
                    "plan not COMPLETE within progressDeadline {}",
                    show(settings.progress_deadline)
                ),
            )),
            Progress::Running => None,
        };
        match verdict {
            Some((state, why)) => {
                states[i] = state;
                out.changes.push((i, state, why));
            }
            None => {
                if let Some(d) = deadline {
                    soon(d);
                }
            }
        }
    }
    let failed: Vec<usize> = (0..states.len()).filter(|&i| states[i].failed()).collect();
    if failed.len() > settings.max_failures as usize {
        out.phase = Phase::Halted;
        if settings.on_failure == OnFailure::Rollback {
            out.roll_back = failed
                .into_iter()
                .filter(|&i| states[i] == Member::Failed)
                .collect();
        }
        return out;
    }
    let done = |s: &Member| matches!(s, Member::Succeeded | Member::Skipped) || s.failed();
    if states.iter().all(done) {
        if wave + 1 >= waves {
            out.phase = Phase::Completed;
        } else {
            out.wave = wave + 1;
        }
        return out;
    }
    match may {
        May::Start => {
            out.upgrade = (0..states.len())
                .filter(|&i| states[i] == Member::Pending)
                .collect();
        }
        May::Paused => out.phase = Phase::Paused,
        May::AwaitWindow(opens) => {
            out.phase = Phase::AwaitingWindow;
            soon(opens);
        }
        May::AwaitApproval => out.phase = Phase::AwaitingApproval,
    }
    // Waiting on something the rollout cannot start only shows when nothing is upgrading.
    if out.phase != Phase::Paused && states.contains(&Member::Upgrading) && may != May::Start {
        out.phase = Phase::Progressing;
    }
    out.requeue_at = soonest;
    out
}

/// A duration as Kubernetes writes it (`10m0s` is `10m`).
fn show(d: SignedDuration) -> String {
    crate::window::humanize(d.unsigned_abs())
}

/// A rollout gate: a CEL expression over the Instance (`self`), which must return a bool, as
/// Kubernetes' `x-kubernetes-validations` rules are written (`self.status.planStatus.deploy
/// .status == 'COMPLETE'`). Evaluated by cel-rust (`cel`), the maintained Rust CEL.
pub struct Gate {
    source: String,
    program: cel::Program,
}

impl std::fmt::Debug for Gate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Gate").field(&self.source).finish()
    }
}

/// The longest gate expression, in bytes (Kubernetes bounds a CRD's rules by cost; a gate is
/// bounded by size, and by the Instance it reads).
pub const MAX_GATE_BYTES: usize = 4096;

/// Why a gate does not compile: where, and what.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("spec.gate: {message}")]
pub struct GateError {
    /// The problem, with its position (`line 1, column 12: ...`).
    pub message: String,
}

impl Gate {
    /// Compiles `source`; an error gives the line and column of each problem.
    pub fn compile(source: &str) -> Result<Gate, GateError> {
        if source.len() > MAX_GATE_BYTES {
            return Err(GateError {
                message: format!("{} bytes, at most {MAX_GATE_BYTES}", source.len()),
            });
        }
        if source.trim().is_empty() {
            return Err(GateError {
                message: "empty: give a CEL expression that returns a bool, or no gate".into(),
            });
        }
        let program = cel::Program::compile(source).map_err(|e| GateError {
            message: e
                .errors
                .iter()
                .map(|p| format!("line {}, column {}: {}", p.pos.0.max(1), p.pos.1 + 1, p.msg))
                .collect::<Vec<_>>()
                .join("; "),
        })?;
        Ok(Gate {
            source: source.to_string(),
            program,
        })
    }

    /// The expression as written.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// Evaluates the gate over `instance` (the Instance object, as JSON, bound to `self`):
    /// [`GateResult::Pass`] when it returns true; otherwise why not (false, not a bool, or an
    /// error such as a field that is not there).
    pub fn check(&self, instance: &serde_json::Value) -> GateResult {
        let value = match cel::to_value(instance) {
            Ok(v) => v,
            Err(e) => return GateResult::Wait(format!("the Instance cannot be read: {e}")),
        };
        let mut context = cel::Context::default();
        context.add_variable_from_value("self", value);
        match self.program.execute(&context) {
            Ok(cel::Value::Bool(true)) => GateResult::Pass,
            Ok(cel::Value::Bool(false)) => {
                GateResult::Wait(format!("gate {:?} is false", self.source))
            }
            Ok(other) => GateResult::Wait(format!(
                "gate {:?} returned {:?}, not a bool",
                self.source,
                other.type_of()
            )),
            Err(e) => GateResult::Wait(format!("gate {:?}: {e}", self.source)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn waves(text: &str) -> Waves {
        Waves::parse(text).unwrap()
    }

    #[test]
    fn waves_are_cumulative_targets_rounded_up_and_empty_ones_skipped() {
        assert_eq!(waves("1,20%,100%").ends(30), vec![1, 6, 30]);
        assert_eq!(waves("1,10%,50%,100%").ends(1000), vec![1, 100, 500, 1000]);
        // 1% of 30 rounds up to 1, the first wave's target: empty, skipped.
        assert_eq!(waves("1,1%,100%").ends(30), vec![1, 30]);
        assert_eq!(waves("5,100%").ends(3), vec![3]);
        assert_eq!(waves("100%").ends(7), vec![7]);
        assert_eq!(waves("1,2,100%").ends(0), Vec::<usize>::new());
        // Exponential waves from 5 over 1,000 Instances.
        assert_eq!(
            waves("5,10,20,40,80,160,320,640,100%").ends(1000),
            vec![5, 10, 20, 40, 80, 160, 320, 640, 1000]
        );
        assert_eq!(waves(" 1 , 50 % ,100%").to_list(), ["1", "50%", "100%"]);
    }

    #[test]
    fn bad_waves_name_the_wave() {
        let err = |t: &str| Waves::parse(t).unwrap_err().to_string();
        assert_eq!(
            err("1,50%"),
            "spec.waves: the last wave must be 100% (every selected Instance), not \"50%\""
        );
        assert_eq!(
            err("1,x,100%"),
            "spec.waves[1] \"x\": not a count (5) or a percentage (20%)"
        );
        assert!(err("0,100%").starts_with("spec.waves[0] \"0\": must be a count of at least 1"));
        assert!(err("1,120%").starts_with("spec.waves[1] \"120%\""));
        assert!(err("5,3,100%").starts_with("spec.waves[1] \"3\": targets are cumulative"));
        assert!(err("50%,20%,100%").starts_with("spec.waves[1] \"20%\""));
        assert!(err("100%,5").starts_with("spec.waves[1] \"5\": targets are cumulative"));
        assert!(err("1.5,100%").starts_with("spec.waves[0]"));
        assert_eq!(
            err(""),
            "spec.waves: at least one wave is needed (the last must be 100%)"
        );
        let many = vec!["1%"; 21].join(",");
        assert!(err(&many).contains("at most 20"));
    }

    #[test]
    fn order_is_priority_then_namespace_then_name() {
        let labels = |p: &str| {
            Some(std::collections::BTreeMap::from([(
                PRIORITY_LABEL.to_string(),
                p.to_string(),
            )]))
        };
        let mut c = vec![
            Candidate::new("b", "x", None),
            Candidate::new("a", "z", None),
            Candidate::new("z", "canary", labels("1").as_ref()),
            Candidate::new("a", "y", labels("oops").as_ref()),
            Candidate::new("b", "first", labels("-5").as_ref()),
            Candidate::new("a", "a", None),
        ];
        order(&mut c);
        let names: Vec<String> = c
            .iter()
            .map(|c| format!("{}/{}", c.namespace, c.name))
            .collect();
        assert_eq!(names, ["b/first", "z/canary", "a/a", "a/y", "a/z", "b/x"]);
    }

    fn ts(t: &str) -> Timestamp {
        t.parse().unwrap()
    }

    fn seen(member: Member, progress: Progress) -> Seen {
        Seen {
            member,
            upgraded: Some(ts("2026-11-28T10:00:00Z")),
            progress,
            gate: GateResult::Pass,
        }
    }

    fn pending() -> Seen {
        Seen {
            member: Member::Pending,
            upgraded: None,
            progress: Progress::Running,
            gate: GateResult::Pass,
        }
    }

    #[test]
    fn a_wave_starts_its_pending_members_and_passes_when_all_succeed() {
        let s = Settings::default();
        let now = ts("2026-11-28T10:01:00Z");
        let a = advance(&s, 0, 3, &[pending(), pending()], May::Start, now);
        assert_eq!(
            (a.phase, a.wave, a.upgrade.clone()),
            (Phase::Progressing, 0, vec![0, 1])
        );
        let complete = Progress::Complete {
            since: ts("2026-11-28T10:00:30Z"),
        };
        let a = advance(
            &s,
            0,
            3,
            &[
                seen(Member::Upgrading, complete.clone()),
                seen(Member::Succeeded, complete.clone()),
            ],
            May::Start,
            now,
        );
        assert_eq!((a.phase, a.wave), (Phase::Progressing, 1));
        assert_eq!(a.changes[0].1, Member::Succeeded);
        let last = advance(
            &s,
            2,
            3,
            &[seen(Member::Upgrading, complete)],
            May::Start,
            now,
        );
        assert_eq!(last.phase, Phase::Completed);
    }

    #[test]
    fn min_ready_holds_a_member_and_says_when_to_look_again() {
        let s = Settings {
            min_ready: SignedDuration::from_secs(60),
            ..Settings::default()
        };
        let since = ts("2026-11-28T10:00:30Z");
        let m = [seen(Member::Upgrading, Progress::Complete { since })];
        let a = advance(&s, 0, 2, &m, May::Start, ts("2026-11-28T10:01:00Z"));
        assert_eq!((a.wave, a.changes.len()), (0, 0));
        assert_eq!(a.requeue_at, Some(ts("2026-11-28T10:01:30Z")));
        let a = advance(&s, 0, 2, &m, May::Start, ts("2026-11-28T10:01:30Z"));
        assert_eq!(a.wave, 1);
    }

    #[test]
    fn more_failures_than_allowed_halt_at_once_and_roll_back_the_failed() {
        let s = Settings::default();
        let now = ts("2026-11-28T10:02:00Z");
        let fatal = Progress::Fatal {
            message: "step deploy: Job failed".into(),
        };
        let m = [
            seen(Member::Upgrading, fatal.clone()),
            seen(Member::Upgrading, Progress::Running),
            pending(),
        ];
        let a = advance(&s, 1, 3, &m, May::Start, now);
        assert_eq!(a.phase, Phase::Halted);
        assert_eq!(a.wave, 1);
        assert!(a.upgrade.is_empty(), "nothing else starts");
        assert_eq!(a.roll_back, vec![0]);
        assert_eq!(
            a.changes,
            vec![(
                0,
                Member::Failed,
                "plan failed: step deploy: Job failed".into()
            )]
        );
        // onFailure: halt leaves it; maxFailures: 1 lets the wave go on.
        let halt = Settings {
            on_failure: OnFailure::Halt,
            ..Settings::default()
        };
        assert!(
            advance(&halt, 1, 3, &m, May::Start, now)
                .roll_back
                .is_empty()
        );
        let tolerant = Settings {
            max_failures: 1,
            ..Settings::default()
        };
        let a = advance(&tolerant, 1, 3, &m, May::Start, now);
        assert_eq!((a.phase, a.upgrade.clone()), (Phase::Progressing, vec![2]));
    }

    #[test]
    fn past_the_progress_deadline_is_a_failure() {
        let s = Settings::default();
        let m = [seen(Member::Upgrading, Progress::Running)];
        let a = advance(&s, 0, 1, &m, May::Start, ts("2026-11-28T10:09:59Z"));
        assert_eq!(a.phase, Phase::Progressing);
        assert_eq!(a.requeue_at, Some(ts("2026-11-28T10:10:00Z")));
        let a = advance(&s, 0, 1, &m, May::Start, ts("2026-11-28T10:10:00Z"));
        assert_eq!(a.phase, Phase::Halted);
        assert_eq!(
            a.changes[0].2,
            "plan not COMPLETE within progressDeadline 10m"
        );
        let mut gated = seen(
            Member::Upgrading,
            Progress::Complete {
                since: ts("2026-11-28T10:01:00Z"),
            },
        );
        gated.gate = GateResult::Wait("gate \"false\" is false".into());
        let a = advance(&s, 0, 1, &[gated], May::Start, ts("2026-11-28T10:10:00Z"));
        assert!(
            a.changes[0]
                .2
                .starts_with("gate not passed within progressDeadline 10m")
        );
    }

    #[test]
    fn a_closed_window_or_missing_approval_holds_only_new_starts() {
        let s = Settings::default();
        let now = ts("2026-11-28T10:01:00Z");
        let opens = ts("2026-11-28T11:00:00Z");
        let a = advance(&s, 0, 2, &[pending()], May::AwaitWindow(opens), now);
        assert_eq!(
            (a.phase, a.requeue_at),
            (Phase::AwaitingWindow, Some(opens))
        );
        assert!(a.upgrade.is_empty());
        let a = advance(&s, 0, 2, &[pending()], May::AwaitApproval, now);
        assert_eq!(a.phase, Phase::AwaitingApproval);
        let a = advance(&s, 0, 2, &[pending()], May::Paused, now);
        assert_eq!(a.phase, Phase::Paused);
        // What already runs is still judged.
        let m = [seen(Member::Upgrading, Progress::Running), pending()];
        let a = advance(&s, 0, 2, &m, May::AwaitWindow(opens), now);
        assert_eq!(a.phase, Phase::Progressing);
        assert!(a.upgrade.is_empty());
    }

    #[test]
    fn gates_are_cel_over_the_instance_and_say_why_not() {
        let instance = json!({"metadata": {"labels": {"tier": "gold"}},
            "status": {"planStatus": {"deploy": {"status": "COMPLETE"}}}});
        let g = Gate::compile("self.status.planStatus.deploy.status == 'COMPLETE'").unwrap();
        assert_eq!(g.check(&instance), GateResult::Pass);
        let g = Gate::compile("self.metadata.labels.tier == 'silver'").unwrap();
        assert!(matches!(g.check(&instance), GateResult::Wait(w) if w.ends_with("is false")));
        let g = Gate::compile("self.spec.nope == 1").unwrap();
        assert!(matches!(g.check(&instance), GateResult::Wait(_)));
        let g = Gate::compile("1 + 1").unwrap();
        assert!(matches!(g.check(&instance), GateResult::Wait(w) if w.contains("not a bool")));
        let e = Gate::compile("self.status ==").unwrap_err().to_string();
        assert!(e.starts_with("spec.gate: line 1, column "), "{e}");
        assert!(Gate::compile(&"x".repeat(MAX_GATE_BYTES + 1)).is_err());
        assert!(Gate::compile("  ").is_err());
    }
}
