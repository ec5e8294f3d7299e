//! The maintenance window of an Instance (`spec.window`): whether the plan a change needs
//! starts now ([`gate`]). The manager asks before it starts a plan; the admission webhook and
//! the CLI check a window as written with [`check`].
//!
//! The rules (docs/rollouts.md, "Maintenance windows of an Instance"):
//! - no window, or the window open: the plan starts;
//! - the first deploy (nothing applied yet) starts: a window keeps changes to a running
//!   Instance inside maintenance hours, it does not delay an install;
//! - a change written with `--ignore-window` ([`labels::IGNORE_WINDOW`] on top of the
//!   generation before it) starts, and its revision says so;
//! - the manager's own remediation rollback starts: a window never holds the repair of a
//!   failed change;
//! - anything else waits until the window next opens (`status.awaitingWindow`).
//!
//! Deleting an Instance (its `cleanup` plan) is never held.

use jiff::Timestamp;
use kudo_policy::window::{State, WindowError};

use crate::common::{InstanceStatus, Window};
use crate::labels;
use crate::v1beta2::Instance;

/// Whether the plan a change needs starts now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Gate {
    /// It starts: there is no window, it is open, or this is the first deploy.
    Open,
    /// It starts outside the window, for this reason (what the revision records).
    Excused(&'static str),
    /// It waits until the window opens at this time.
    Held(Timestamp),
}

/// Why a change outside the window runs anyway: written with `--ignore-window`.
pub const IGNORED: &str = "ran outside the maintenance window: --ignore-window";
/// Why a change outside the window runs anyway: the manager's remediation rollback.
pub const REMEDIATION: &str = "ran outside the maintenance window: remediation's rollback";

/// `spec.window` checked as written, its errors naming the field (`spec.window.schedule
/// "x": ...`); `now` dates its first opening.
pub fn check(window: &Window, now: Timestamp) -> Result<kudo_policy::window::Window, String> {
    kudo_policy::window::Window::new(&window.spec(), now)
        .map_err(|e: WindowError| format!("spec.{e}"))
}

/// Whether the plan a change of `inst` (whose status is `status`) needs starts at `now`.
/// `Err` names what is wrong with `spec.window` (a window the webhook would have refused).
pub fn gate(inst: &Instance, status: &InstanceStatus, now: Timestamp) -> Result<Gate, String> {
    let Some(window) = &inst.spec.window else {
        return Ok(Gate::Open);
    };
    if status.applied.is_none() {
        return Ok(Gate::Open);
    }
    let opens = match check(window, now)?.at(now) {
        State::Open { .. } => return Ok(Gate::Open),
        State::Closed { opens } => opens,
    };
    let generation = inst.metadata.generation;
    if ignored(inst) {
        return Ok(Gate::Excused(IGNORED));
    }
    let remediating = status
        .remediation
        .as_ref()
        .and_then(|r| r.rollback_generation);
    if remediating.is_some() && remediating == generation {
        return Ok(Gate::Excused(REMEDIATION));
    }
    Ok(Gate::Held(opens))
}

/// The value of [`labels::IGNORE_WINDOW`] for the change written on top of generation
/// `generation` (what [`ignored`] reads).
pub fn ignore_annotation(generation: i64) -> String {
    generation.to_string()
}

/// Whether `inst`'s current generation was written with `--ignore-window`
/// ([`labels::IGNORE_WINDOW`] naming the generation before it).
pub fn ignored(inst: &Instance) -> bool {
    inst.metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(labels::IGNORE_WINDOW))
        .and_then(|g| g.trim().parse::<i64>().ok())
        .is_some_and(|g| Some(g + 1) == inst.metadata.generation)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::{AppliedState, RemediationStatus};
    use std::collections::BTreeMap;

    fn at(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    /// An Instance at generation 4 with a window open 02:00-04:00 UTC every day.
    fn instance(annotation: Option<&str>) -> Instance {
        let mut inst = Instance::new("c", Default::default());
        inst.metadata.generation = Some(4);
        inst.spec.window = Some(Window {
            schedule: "0 2 * * *".into(),
            duration: "2h".into(),
            time_zone: None,
        });
        inst.metadata.annotations = annotation
            .map(|g| BTreeMap::from([(labels::IGNORE_WINDOW.to_string(), g.to_string())]));
        inst
    }

    fn deployed() -> InstanceStatus {
        InstanceStatus {
            applied: Some(AppliedState::default()),
            ..Default::default()
        }
    }

    #[test]
    fn a_change_outside_the_window_waits_for_its_next_opening() {
        let noon = at("2026-11-29T12:00:00Z");
        assert_eq!(
            gate(&instance(None), &deployed(), noon),
            Ok(Gate::Held(at("2026-11-30T02:00:00Z")))
        );
        let inside = at("2026-11-30T03:59:00Z");
        assert_eq!(gate(&instance(None), &deployed(), inside), Ok(Gate::Open));
    }

    #[test]
    fn the_first_deploy_and_an_instance_without_window_are_never_held() {
        let noon = at("2026-11-29T12:00:00Z");
        let first = InstanceStatus::default();
        assert_eq!(gate(&instance(None), &first, noon), Ok(Gate::Open));
        let mut plain = instance(None);
        plain.spec.window = None;
        assert_eq!(gate(&plain, &deployed(), noon), Ok(Gate::Open));
    }

    #[test]
    fn ignore_window_counts_for_the_change_written_on_top_of_its_generation_only() {
        let noon = at("2026-11-29T12:00:00Z");
        assert_eq!(
            gate(&instance(Some("3")), &deployed(), noon),
            Ok(Gate::Excused(IGNORED))
        );
        // Left behind by an earlier change: counts for nothing.
        assert!(matches!(
            gate(&instance(Some("2")), &deployed(), noon),
            Ok(Gate::Held(_))
        ));
    }

    #[test]
    fn remediations_rollback_is_not_held() {
        let noon = at("2026-11-29T12:00:00Z");
        let mut status = deployed();
        status.remediation = Some(RemediationStatus {
            rollback_generation: Some(4),
            ..Default::default()
        });
        assert_eq!(
            gate(&instance(None), &status, noon),
            Ok(Gate::Excused(REMEDIATION))
        );
    }

    #[test]
    fn a_window_that_cannot_be_read_names_its_field() {
        let mut inst = instance(None);
        inst.spec.window.as_mut().unwrap().time_zone = Some("Mars/Olympus".into());
        let err = gate(&inst, &deployed(), at("2026-11-29T12:00:00Z")).unwrap_err();
        assert!(
            err.starts_with("spec.window.timeZone \"Mars/Olympus\""),
            "{err}"
        );
    }
}
