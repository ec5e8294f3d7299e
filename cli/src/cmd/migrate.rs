//! `kudo migrate`: KEP-33's migration of a cluster's kudo objects from `kudo.dev/v1beta1` to
//! `kudo.dev/v1beta2` storage. The work is `kudo_client::storage_migration::run`; this prints its
//! report (text, or `-o json|yaml`), and before the error that stops it, every object pre-flight refuses.

use std::fmt::Write as _;

use kudo_client::storage_migration::{self, Error as MigrationError, Options, Report, Rewrite};

use super::Outcome;
use super::cluster;
use crate::args::{DataFormat, MigrateArgs};
use crate::error::Error;

/// Runs the migration; 0 when done (or, with --dry-run, when everything converts), 1 when it
/// was refused or stopped (nothing is lost: running it again resumes).
pub fn run(a: MigrateArgs) -> Result<Outcome, Error> {
    let options = Options { dry_run: a.dry_run };
    let report = cluster::with_client("migrate", &a.connect, async |client| {
        match storage_migration::run(&client, &options).await {
            Ok(report) => Ok(report),
            // Every object that cannot be converted, then the error that stops.
            Err(MigrationError::Preflight(problems)) => {
                for p in &problems {
                    eprintln!("error: {p}");
                }
                Err(MigrationError::Preflight(problems).into())
            }
            Err(e) => Err(e.into()),
        }
    })?;
    let text = match a.output {
        None => text(&report),
        Some(DataFormat::Json) => format!(
            "{}\n",
            serde_json::to_string_pretty(&report).unwrap_or_default()
        ),
        Some(DataFormat::Yaml) => {
            super::to_yaml(&serde_json::to_value(&report).unwrap_or(serde_json::Value::Null))
        }
    };
    super::print(&text)?;
    Ok(Outcome::Done)
}

/// The report for people, one section per phase.
fn text(r: &Report) -> String {
    let mut out = String::new();
    let verb = if r.dry_run { "would rewrite" } else { "found" };
    let _ = writeln!(
        out,
        "pre-flight: {} object(s) convert to v1beta2, {verb}:",
        r.preflight.len()
    );
    for p in &r.preflight {
        if p.changes.is_empty() {
            let _ = writeln!(out, "  {} (same content)", p.object);
        } else {
            let _ = writeln!(out, "  {}: changes {}", p.object, p.changes.join(", "));
        }
    }
    if r.dry_run {
        out.push_str("dry run: nothing was written\n");
        return out;
    }
    out.push_str("crds:\n");
    for c in &r.crds {
        let _ = writeln!(
            out,
            "  {} applied (conversion {}, storedVersions {})",
            c.name,
            c.conversion,
            c.stored_versions.join(", ")
        );
    }
    out.push_str("rewrite:\n");
    for w in &r.rewrite {
        let line = match w {
            Rewrite::Rewritten {
                object,
                attempts: 1,
            } => format!("{object} rewritten as v1beta2, read back identical"),
            Rewrite::Rewritten { object, attempts } => format!(
                "{object} rewritten as v1beta2 after {attempts} attempts, read back identical"
            ),
            Rewrite::AlreadyStored { object } => format!("{object} already stored as v1beta2"),
            Rewrite::Gone { object } => format!("{object} deleted meanwhile"),
            Rewrite::ChangedSince { object } => {
                format!("{object} rewritten, then changed by another client")
            }
        };
        let _ = writeln!(out, "  {line}");
    }
    out.push_str("storedVersions:\n");
    if r.stored_versions.is_empty() {
        out.push_str("  already v1beta2 only\n");
    }
    for s in &r.stored_versions {
        let _ = writeln!(
            out,
            "  {}: {} -> {}",
            s.crd,
            s.before.join(", "),
            s.after.join(", ")
        );
    }
    out
}
