//! Running a step: its tasks in order, each doing what [`kudo_pkg::step::tasks`] says (the
//! model `kudo template` renders with), the next one starting only when the objects of the
//! previous one are healthy.
//!
//! `Apply` (and a `Toggle` whose parameter is true) renders its templates with `kudo-pkg` and
//! applies the objects ([`crate::objects`]: server-side apply, field manager `kudo-manager`,
//! labelled and owned by the Instance), then checks their health; `Delete` (a `Toggle` whose
//! parameter is false, any task of a step with `delete: true`) deletes them; `Pipe` is
//! KUDO's ([`pipe`]); `KudoOperator` applies a child Instance ([`kudo_operator`]); `Dummy`
//! does nothing. In a run that restores a revision, a StatefulSet that waits gets its forced
//! rollback ([`crate::forced_rollback`]).

mod kudo_operator;
mod pipe;

use kudo_pkg::package::Task;
use kudo_pkg::step::{self, Action};
use serde_json::Value;

use crate::forced_rollback;
use crate::health::{Health, health, with_reports, with_troubles};
use crate::step::{Outcome, StepRun};

/// Runs the step `run.at` of `run.pkg` for `run.inst` with the effective parameters.
pub async fn run_step(run: StepRun<'_>) -> Outcome {
    let op = run.prepared.package().operator();
    let at = run.at;
    let Some(step) = step::find(op, at.plan, at.phase, at.step) else {
        return Outcome::Fatal(format!(
            "plan `{}` has no step `{}` in phase `{}`",
            at.plan, at.step, at.phase
        ));
    };
    for t in step::tasks(op, step, run.params) {
        let t = match t {
            Ok(t) => t,
            Err(undefined) => return Outcome::Fatal(undefined.to_string()),
        };
        let done = match t.action {
            Action::Apply => objects(run, t.task, true).await.done(),
            Action::Delete => objects(run, t.task, false).await.done(),
            Action::Pipe => pipe::run(run, t.task).await,
            Action::KudoOperator => kudo_operator::run(run, t.task).await,
            Action::Nothing => Ok(()),
            Action::Unsupported => {
                return Outcome::Fatal(format!(
                    "task `{}` is of kind {}, which kudo-manager does not run here (it runs Apply, Delete, Toggle, Pipe, KudoOperator and Dummy; Pipe and KudoOperator not in a delete step)",
                    t.task.name, t.task.kind
                ));
            }
        };
        if let Err(o) = done {
            return o;
        }
    }
    Outcome::Done
}

/// The objects of `task`'s templates applied (each checked for health) or deleted. The step
/// waits for every object applied that is not healthy yet.
async fn objects(run: StepRun<'_>, task: &Task, apply: bool) -> Outcome {
    let opts = run.render_options();
    let rendered =
        match run
            .prepared
            .render_task(run.params, &opts, run.at.phase, run.at.step, &task.name)
        {
            Ok(r) => r,
            Err(d) => return Outcome::invalid(&d),
        };
    let mut waiting = Vec::new();
    let mut objects: Vec<Value> = rendered.into_iter().flat_map(|r| r.objects).collect();
    if apply {
        step::apply_order(&mut objects);
    }
    for obj in objects {
        if !apply {
            if let Err(f) = run.delete(&obj).await {
                return f.into();
            }
            continue;
        }
        let stored = match run.apply(obj).await {
            Ok(s) => s,
            Err(f) => return f.into(),
        };
        let what = format!(
            "{} {}",
            stored.get("kind").and_then(Value::as_str).unwrap_or(""),
            stored
                .pointer("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or("")
        );
        let mut h = health(&stored);
        // A rollback restored a StatefulSet's template: the Pods left on the failed revision.
        if run.restoring
            && let Health::Progressing(why) = &h
            && stored.get("kind").and_then(Value::as_str) == Some("StatefulSet")
        {
            match forced_rollback::round(run.tenant, &stored).await {
                Ok(Some(did)) => h = Health::Progressing(format!("{why}; {did}")),
                Ok(None) => {}
                Err(f) => return f.into(),
            }
        }
        if matches!(h, Health::Progressing(_)) {
            let (warnings, troubles) = run.objects.reports(run.tenant, &stored).await;
            h = with_reports(h, &stored, &warnings);
            if !troubles.is_empty() {
                let mask = run.redacted();
                h = with_troubles(h, &troubles, &|s| mask.mask(s));
            }
        }
        match Outcome::of_health(h, &what) {
            Outcome::Done => {}
            Outcome::Waiting(why) => waiting.push(why),
            other => return other,
        }
    }
    // The next task starts when this one's objects are healthy.
    if !waiting.is_empty() {
        return Outcome::Waiting(waiting.join("; "));
    }
    Outcome::Done
}
