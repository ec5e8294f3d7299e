//! `kudo update -f` and `kudo upgrade -f`: an Instance manifest kept in a file. The rules live
//! in `kudo_pkg::instance`; this module reads the inputs, prints, and writes the file.

use kudo_pkg::instance::{self, Edited, InstanceFile};
use kudo_policy::ParamSchema;
use kudo_policy::values::Redacted;

use super::Outcome;
use super::changes::ChangeReport;
use crate::args::{FileEditArgs, ReportFormat, UpdateArgs, UpgradeArgs};
use crate::error::Error;

pub fn update(a: UpdateArgs) -> Result<Outcome, Error> {
    let pkg = super::load(&a.package.clone().unwrap_or_default())?;
    let file = read(&a.edit)?;
    let (docs, sources) = super::value_inputs(pkg.schema(), &a.values)?;
    match instance::update(&file, &pkg, &docs, &a.values.overrides, &a.resets) {
        Ok(outcome) => finish(&a.edit, &file, pkg.schema(), &outcome, "update"),
        Err(diags) => Err(Error::parameters(diags).with_sources(sources)),
    }
}

pub fn upgrade(a: UpgradeArgs) -> Result<Outcome, Error> {
    let old = super::load(&a.from.clone().unwrap_or_default())?;
    let new = super::load(&a.package.clone().unwrap_or_default())?;
    let file = read(&a.edit)?;
    let (docs, sources) = super::value_inputs(new.schema(), &a.values)?;
    match instance::upgrade(&file, &old, &new, &docs, &a.values.overrides, &a.allow()) {
        Ok(outcome) => finish(&a.edit, &file, new.schema(), &outcome, "upgrade"),
        Err(diags) => Err(Error::parameters(diags).with_sources(sources)),
    }
}

/// The `-f` file (clap makes `-f` or `--instance` present; these functions run with `-f`).
fn file_path(a: &FileEditArgs) -> std::path::PathBuf {
    a.file.clone().unwrap_or_default()
}

fn read(a: &FileEditArgs) -> Result<InstanceFile, Error> {
    let path = file_path(a);
    let text = std::fs::read_to_string(&path).map_err(Error::io(&path))?;
    Ok(InstanceFile::parse(&path, &text)?)
}

/// Prints the outcome and writes the file (unless --dry-run or nothing changed).
fn finish(
    a: &FileEditArgs,
    file: &InstanceFile,
    schema: &ParamSchema,
    outcome: &Edited,
    command: &str,
) -> Result<Outcome, Error> {
    crate::report::diagnostics(&outcome.decision.warnings);
    let old_text = std::fs::read_to_string(file_path(a)).unwrap_or_default();
    let changed = outcome.text != old_text;
    let old_params = file.raw_parameters();
    let redacted = Redacted::new(schema, &old_params).and(schema, &outcome.decision.explicit);
    match a.output {
        ReportFormat::Json => {
            let report = ChangeReport {
                file: Some(file_path(a).display().to_string()),
                diff: a
                    .dry_run
                    .then(|| redacted.mask(&diff(a, &old_text, &outcome.text))),
                ..ChangeReport::of(&outcome.decision, a.dry_run, changed && !a.dry_run)
            };
            super::print(&report.json())?;
        }
        ReportFormat::Text => {
            let mut out = String::new();
            if let Some(r) = &outcome.decision.report {
                out.push_str(&migration(r));
            }
            if command == "update" && outcome.decision.plan.is_none() {
                out.push_str(if changed {
                    // Values pinned to, or reset to, what they already are (a default).
                    "no plan runs: the effective parameters stay the same\n"
                } else {
                    "nothing changes: the parameters are already these\n"
                });
            }
            if let Some(plan) = &outcome.decision.plan {
                out.push_str(&format!("plan: {plan}\n"));
            }
            for c in &outcome.decision.changes {
                out.push_str(&format!("  changed {} (runs {})\n", c.pointer, c.plan));
            }
            if a.dry_run {
                out.push_str(&redacted.mask(&diff(a, &old_text, &outcome.text)));
            }
            super::print(&out)?;
        }
    }
    if changed && !a.dry_run {
        super::write_atomic(&file_path(a), &outcome.text)?;
        eprintln!("{command}: wrote {}", file_path(a).display());
    }
    Ok(Outcome::Done)
}

fn diff(a: &FileEditArgs, old: &str, new: &str) -> String {
    let name = file_path(a).display().to_string();
    similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .header(&name, &name)
        .to_string()
}

/// The migration report, one line per value: moved, kept, defaulted, dropped.
pub(super) fn migration(r: &kudo_policy::old_name::Report) -> String {
    let mut out = String::new();
    for m in &r.moved {
        out.push_str(&format!("moved      {} -> {}\n", m.from, m.to));
    }
    for k in &r.kept {
        out.push_str(&format!("kept       {k}\n"));
    }
    for d in &r.defaulted {
        out.push_str(&format!("defaulted  {d}\n"));
    }
    for d in &r.dropped {
        out.push_str(&format!("dropped    {} ({})\n", d.pointer, d.reason));
    }
    out
}
