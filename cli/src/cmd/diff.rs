//! `kudo diff`: what `kudo update --instance` or `kudo upgrade PACKAGE --instance` would do
//! (`kudo_client::commands::diff`), printed as value changes, the plan, and one unified diff
//! per object. Exit codes as `diff(1)` and `kubectl diff`: 0 no change, 1 changes, 2 an error
//! ([`Outcome::Changes`], [`Outcome::Incomplete`], [`Error::Diff`]: `main` gives the codes).
//!
//! With no change given (`kudo diff NAME`), the drift of the objects kudo applied
//! (`kudo_client::commands::diff::drift`): 0 no drift, 1 drift, 2 an object not compared.

use kudo_client::commands::diff::{self, Change, Diffed, Drift, ObjectAction};
use kudo_client::commands::{Inputs, history, update, upgrade};
use serde_json::json;

use super::Outcome;
use super::cluster;
use crate::args::{DiffArgs, ReportFormat};
use crate::error::Error;

/// What would change; whatever stops it is an [`Error::Diff`].
pub fn run(a: DiffArgs) -> Result<Outcome, Error> {
    diff(&a).map_err(|e| Error::Diff(Box::new(e)))
}

fn diff(a: &DiffArgs) -> Result<Outcome, Error> {
    let nothing_given =
        a.values.overrides.is_empty() && a.values.files.is_empty() && a.resets.is_empty();
    if let Some(revision) = a.revision {
        return rollback(a, revision, nothing_given);
    }
    let name = match (&a.instance, &a.package) {
        (Some(name), None) if nothing_given => return drift(a, name),
        (Some(name), _) => name.as_str(),
        (None, Some(name)) if nothing_given => return drift(a, &name.to_string_lossy()),
        (None, _) => {
            return Err(Error::Usage(format!(
                "{program} diff NAME shows an Instance's drift and takes no change: give the \
                 change's Instance with --instance NAME ({program} diff [PACKAGE] --instance NAME \
                 -p ...)",
                program = crate::program::shown()
            )));
        }
    };
    let loaded = match &a.package {
        Some(p) => Some(super::load_with(p, &a.source)?),
        None => None,
    };
    let deps = match &loaded {
        Some(l) => Some(l.dependencies()?),
        None => None,
    };
    let (docs, sources) = match &loaded {
        Some(l) => super::value_inputs(l.package.schema(), &a.values)?,
        None => {
            let (docs, diags) = kudo_policy::values::read_files(&a.values.files);
            if !diags.is_empty() {
                return Err(Error::parameters(diags));
            }
            (docs, crate::sources::Sources::default())
        }
    };
    let allow = crate::args::allow(&a.allow_drop, a.force);
    let inputs = Inputs {
        files: &docs,
        overrides: &a.values.overrides,
        resets: &a.resets,
        edits: &[],
    };
    let change = match (&loaded, &deps) {
        (Some(l), Some(deps)) => Change::Upgrade(upgrade::Request {
            instance: name,
            package: &l.package,
            dependencies: Some(deps),
            inputs,
            dry_run: true,
            force: a.force,
            ignore_window: false,
            remediation: None,
            allow: &allow,
            images: None,
        }),
        _ => Change::Update(update::Request {
            instance: name,
            inputs,
            dry_run: true,
            force: a.force,
            ignore_window: false,
            remediation: None,
            images: None,
        }),
    };
    report(a, change, sources)
}

/// `kudo diff NAME --revision N` (or `--instance NAME --revision N`): what `kudo rollback NAME
/// N` would do.
fn rollback(a: &DiffArgs, revision: i64, nothing_given: bool) -> Result<Outcome, Error> {
    let name = match (&a.instance, &a.package) {
        (Some(name), None) => name.clone(),
        (None, Some(name)) => name.to_string_lossy().into_owned(),
        _ => {
            return Err(Error::Usage(
                "--revision shows what `kudo rollback NAME REVISION` would do: give the Instance, and no PACKAGE".into(),
            ));
        }
    };
    if !nothing_given {
        return Err(Error::Usage(
            "--revision shows the diff of `kudo rollback`, which restores the revision's values: give no -p, -P or --reset with it".into(),
        ));
    }
    let change = Change::Rollback(history::RollbackRequest {
        instance: &name,
        revision: Some(revision),
        dry_run: true,
        force: a.force,
        ignore_window: false,
    });
    report(a, change, crate::sources::Sources::default())
}

/// Computes `change` and prints it as `a.output` says; the outcome by the diff's content.
fn report(
    a: &DiffArgs,
    change: Change<'_>,
    sources: crate::sources::Sources,
) -> Result<Outcome, Error> {
    let d = cluster::block_on("diff", &a.cluster, async |t| {
        Ok(diff::diff(&t, change).await?)
    })
    .map_err(|e| e.with_sources(sources))?;
    crate::report::diagnostics(&d.warnings);
    let text = match a.output {
        ReportFormat::Json => with_diffs(&d, d.objects.iter().map(unified)),
        ReportFormat::Text => text(&d),
    };
    super::print(&text)?;
    Ok(outcome(d.incomplete(), d.changes()))
}

/// `report` as pretty JSON, each of its `objects` with its unified diff (`diffs`, in order).
fn with_diffs(report: &impl serde::Serialize, diffs: impl Iterator<Item = String>) -> String {
    let mut v = serde_json::to_value(report).unwrap_or_default();
    for (diff, shown) in diffs.zip(v["objects"].as_array_mut().into_iter().flatten()) {
        shown["diff"] = json!(diff);
    }
    format!("{}\n", serde_json::to_string_pretty(&v).unwrap_or_default())
}

/// Exit codes as `diff(1)`: 2 when the diff is incomplete (an object not compared), 1 when
/// something differs, 0 when nothing does (`main` gives the codes).
fn outcome(incomplete: bool, differs: bool) -> Outcome {
    if incomplete {
        Outcome::Incomplete
    } else if differs {
        Outcome::Changes
    } else {
        Outcome::Done
    }
}

/// The human report: the values, the plan, the objects' diffs, the notes.
fn text(d: &Diffed) -> String {
    let mut out = String::new();
    if d.from != d.to {
        out.push_str(&format!(
            "Instance {}: upgrade from {} to {}\n",
            d.instance, d.from, d.to
        ));
    } else {
        out.push_str(&format!("Instance {} ({})\n", d.instance, d.from));
    }
    if let Some(r) = &d.migration {
        out.push_str(&super::instance_file::migration(r));
    }
    if d.values.is_empty() {
        out.push_str("values: no effective value changes\n");
    } else {
        out.push_str("values:\n");
        for v in &d.values {
            let side = |s: &Option<serde_json::Value>| match s {
                Some(v) => serde_json::to_string(v).unwrap_or_default(),
                None => "(unset)".into(),
            };
            out.push_str(&format!(
                "  {}: {} -> {}\n",
                v.pointer,
                side(&v.before),
                side(&v.after)
            ));
        }
    }
    match &d.plan {
        Some(plan) => out.push_str(&format!("plan: {plan} would run\n")),
        None => out.push_str("plan: none would run\n"),
    }
    let mut unchanged = 0;
    for o in &d.objects {
        match (&o.error, o.action) {
            (Some(e), _) => out.push_str(&format!(
                "\n{} ({}): not compared: {e}\n",
                o.title(),
                o.step
            )),
            (None, ObjectAction::Unchanged) => unchanged += 1,
            (None, action) => {
                out.push_str(&format!("\n{} ({}): {}\n", o.title(), o.step, verb(action)));
                out.push_str(&unified(o));
            }
        }
    }
    if unchanged > 0 {
        out.push_str(&format!(
            "\n{unchanged} other object(s) of the plan unchanged\n"
        ));
    }
    for n in &d.notes {
        out.push_str(&format!("note: {n}\n"));
    }
    out
}

fn verb(a: ObjectAction) -> &'static str {
    match a {
        ObjectAction::Create => "would be created",
        ObjectAction::Update => "would change",
        ObjectAction::Delete => "would be deleted",
        ObjectAction::Unchanged => "unchanged",
        ObjectAction::Unknown => "unknown",
    }
}

/// The unified diff of the live object against the planned one (`/dev/null` for a missing
/// side), three lines of context.
fn unified(o: &diff::ObjectDiff) -> String {
    let live = o.live.as_deref().unwrap_or("");
    let planned = o.planned.as_deref().unwrap_or("");
    let title = o.title().replace(' ', "/");
    let (old, new) = (
        if o.live.is_some() {
            format!("live/{title}")
        } else {
            "/dev/null".into()
        },
        if o.planned.is_some() {
            format!("planned/{title}")
        } else {
            "/dev/null".into()
        },
    );
    similar::TextDiff::from_lines(live, planned)
        .unified_diff()
        .context_radius(3)
        .header(&old, &new)
        .to_string()
}

/// `kudo diff NAME`: the drift of Instance `name`.
fn drift(a: &DiffArgs, name: &str) -> Result<Outcome, Error> {
    let d = cluster::block_on("diff", &a.cluster, async |t| {
        Ok(diff::drift(&t, name).await?)
    })?;
    let text = match a.output {
        ReportFormat::Json => with_diffs(&d, d.objects.iter().map(|o| unified(&o.object))),
        ReportFormat::Text => drift_text(&d),
    };
    super::print(&text)?;
    Ok(outcome(d.incomplete(), d.drifted()))
}

/// The human drift report: each drifted object, its fields and its diff (live against what
/// kudo applied); the objects not compared; the notes.
fn drift_text(d: &Drift) -> String {
    let mode = serde_json::to_value(d.mode)
        .ok()
        .and_then(|v| v.as_str().map(String::from))
        .unwrap_or_default();
    let mut out = format!(
        "Instance {} ({}): drift of the objects kudo applied (spec.drift.mode: {mode})\n",
        d.instance, d.operator_version
    );
    let drifted = d
        .objects
        .iter()
        .filter(|o| o.object.error.is_none())
        .count();
    if drifted == 0 {
        out.push_str(&format!(
            "no drift: the {} object(s) kudo applied hold what it applied\n",
            d.checked
        ));
    }
    for o in &d.objects {
        let (obj, title) = (&o.object, o.object.title());
        match &obj.error {
            Some(e) => out.push_str(&format!("\n{title} ({}): not compared: {e}\n", obj.step)),
            None if o.pointers.is_empty() => {
                out.push_str(&format!("\n{title} ({}): deleted\n", obj.step));
                out.push_str(&unified(obj));
            }
            None => {
                out.push_str(&format!(
                    "\n{title} ({}): drifted at {}\n",
                    obj.step,
                    o.pointers.join(", ")
                ));
                out.push_str(&unified(obj));
            }
        }
    }
    for n in &d.notes {
        out.push_str(&format!("note: {n}\n"));
    }
    out
}
