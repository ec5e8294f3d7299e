//! `kudo history NAME` and `kudo rollback NAME [REVISION]`: the rules live in
//! `kudo_client::commands::history` (and the revisions themselves in `kudo_crd::revision`).

use kudo_client::commands::{history, wait};
use kudo_crd::revision::Revision;
use serde::Serialize;
use serde_json::json;

use super::Outcome;
use super::changes::{ChangeReport, Sent, Superseded, change_lines};
use super::cluster;
use crate::args::{DataFormat, HistoryArgs, ReportFormat, RollbackArgs};
use crate::error::Error;
use crate::progress::Progress;

/// One revision as `-o json|yaml` shows it.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct RevisionOutput<'a> {
    revision: i64,
    updated: &'a str,
    operator_version: Option<&'a str>,
    version: Option<&'a str>,
    plan: &'a str,
    run: &'a str,
    status: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<&'a str>,
    /// The pointers that changed (never a value).
    changed: &'a [String],
    #[serde(skip_serializing_if = "str::is_empty")]
    reason: &'a str,
    by: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    rollback_of: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    remediated: Option<&'a str>,
    /// What the maintenance window did to the change.
    #[serde(skip_serializing_if = "Option::is_none")]
    window: Option<&'a str>,
    /// The images the change's client checked: digests, pinned references, the keys that
    /// verified them (`kudo.dev/images`).
    #[serde(skip_serializing_if = "Option::is_none")]
    images: Option<&'a serde_json::Value>,
}

impl<'a> RevisionOutput<'a> {
    fn of(r: &'a Revision) -> RevisionOutput<'a> {
        let rec = &r.record;
        RevisionOutput {
            revision: r.number,
            updated: &rec.time,
            operator_version: rec.operator_version.name.as_deref(),
            version: rec.version.as_deref(),
            plan: &rec.plan,
            run: &rec.plan_uid,
            status: r.status.as_str(),
            message: r.message.as_deref(),
            changed: &rec.changed,
            reason: &rec.reason,
            by: rec.by.as_deref(),
            rollback_of: rec.rollback_of,
            remediated: rec.remediated.as_deref(),
            window: rec.window.as_deref(),
            images: rec.images.as_ref(),
        }
    }
}

/// The CHANGE column: what the revision did, by pointer (values are never shown).
fn change_column(r: &Revision) -> String {
    const SHOWN: usize = 3;
    let rec = &r.record;
    let mut parts = Vec::new();
    if let Some(n) = rec.rollback_of {
        parts.push(format!("rollback to {n}"));
    }
    if let Some(why) = &rec.remediated {
        parts.push(why.clone());
    }
    let changed = &rec.changed;
    if !changed.is_empty() {
        let mut list = changed
            .iter()
            .take(SHOWN)
            .cloned()
            .collect::<Vec<_>>()
            .join(", ");
        if changed.len() > SHOWN {
            list.push_str(&format!(" (+{} more)", changed.len() - SHOWN));
        }
        parts.push(list);
    } else if rec.rollback_of.is_none() && rec.remediated.is_none() {
        let what = if rec.reason.contains("trigger") {
            "plan triggered"
        } else if r.number == 1 {
            "installed"
        } else {
            "-"
        };
        parts.push(what.into());
    }
    if let Some(w) = &rec.window {
        parts.push(w.clone());
    }
    parts.join("; ")
}

/// An RFC 3339 time to the second, as kubectl shows times (`2026-11-27T22:04:01Z`).
fn to_the_second(time: &str) -> String {
    match (time.find('.'), time.rfind(['Z', '+', '-'])) {
        (Some(dot), Some(zone)) if zone > dot => format!("{}{}", &time[..dot], &time[zone..]),
        _ => time.to_string(),
    }
}

/// `kudo history NAME`.
pub fn history(a: HistoryArgs) -> Result<Outcome, Error> {
    let name = a.name.as_str();
    let (namespace, h) = cluster::block_on("history", &a.cluster, async |t| {
        Ok((t.namespace.clone(), history::history(&t, name).await?))
    })?;
    let rows: Vec<RevisionOutput> = h.revisions.iter().map(RevisionOutput::of).collect();
    let text = match a.output {
        Some(DataFormat::Json) => format!(
            "{}\n",
            serde_json::to_string_pretty(&rows).unwrap_or_default()
        ),
        Some(DataFormat::Yaml) => super::to_yaml(&json!(rows)),
        None if rows.is_empty() => {
            eprintln!(
                "Instance {namespace}/{name} has no revisions yet (the manager records one when a change's plan starts)"
            );
            String::new()
        }
        None => {
            let rows: Vec<Vec<String>> = h
                .revisions
                .iter()
                .map(|r| {
                    vec![
                        r.number.to_string(),
                        to_the_second(&r.record.time),
                        r.record.operator_version.name.clone().unwrap_or_default(),
                        r.record.plan.clone(),
                        r.status.to_string(),
                        change_column(r),
                        r.record.by.clone().unwrap_or_else(|| "-".into()),
                    ]
                })
                .collect();
            super::table(
                &[
                    "REVISION",
                    "UPDATED",
                    "OPERATOR VERSION",
                    "PLAN",
                    "STATUS",
                    "CHANGE",
                    "BY",
                ],
                &rows,
            )
        }
    };
    super::print(&text)?;
    Ok(Outcome::Done)
}

/// `kudo rollback NAME [REVISION]`.
pub fn rollback(a: RollbackArgs, mut progress: Progress) -> Result<Outcome, Error> {
    let name = a.name.as_str();
    let req = history::RollbackRequest {
        instance: name,
        revision: a.revision,
        dry_run: a.dry_run,
        force: a.force,
        ignore_window: a.ignore_window,
    };
    let waiting = a.wait.options().filter(|_| !a.dry_run);
    let (namespace, done, waited) = cluster::block_on("rollback", &a.cluster, async |t| {
        let done = history::rollback(&t, &req).await?;
        let waited = wait::after_write(&t, name, done.generation, waiting, &mut |r| {
            progress.watch(r)
        })
        .await?;
        Ok((t.namespace.clone(), done, waited))
    })?;
    crate::report::diagnostics(&done.change.warnings);
    let to = done
        .revision
        .record
        .operator_version
        .name
        .clone()
        .unwrap_or_default();
    let out = match a.output {
        ReportFormat::Json => {
            let report = ChangeReport {
                instance: Some(format!("{namespace}/{name}")),
                from: Some(&done.from_operator_version),
                to: Some(&to),
                superseded: done.superseded.as_ref().map(Superseded::of),
                cluster: Some(Sent {
                    generation: done.generation,
                    attempts: None,
                    completed: waited.as_deref(),
                }),
                ..ChangeReport::of(&done.change, a.dry_run, done.generation.is_some())
            };
            let mut v = serde_json::to_value(&report).unwrap_or_default();
            v["revision"] = json!(done.revision.number);
            format!("{}\n", serde_json::to_string_pretty(&v).unwrap_or_default())
        }
        ReportFormat::Text => {
            let mut out = format!(
                "rollback to revision {} (OperatorVersion {to}, from {})\n",
                done.revision.number, done.from_operator_version
            );
            match &done.change.plan {
                Some(plan) => out.push_str(&format!("plan: {plan}\n")),
                None => out.push_str("no plan runs: the effective parameters stay the same\n"),
            }
            out.push_str(&change_lines(
                &done.change.changes,
                done.superseded.as_ref(),
                &format!("{namespace}/{name}"),
                a.dry_run,
                done.generation.map(|_| {
                    format!(
                        "Instance {namespace}/{name} rolled back to revision {}\n",
                        done.revision.number
                    )
                }),
            ));
            if let Some(plan) = waited {
                out.push_str(&format!("plan {plan} COMPLETE\n"));
            }
            out
        }
    };
    super::print(&out)?;
    Ok(Outcome::Done)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_shown_to_the_second() {
        assert_eq!(
            to_the_second("2026-11-27T22:04:01.256487744Z"),
            "2026-11-27T22:04:01Z"
        );
        assert_eq!(
            to_the_second("2026-11-27T22:04:01.5+01:00"),
            "2026-11-27T22:04:01+01:00"
        );
        assert_eq!(
            to_the_second("2026-11-27T22:04:01Z"),
            "2026-11-27T22:04:01Z"
        );
        assert_eq!(to_the_second(""), "");
    }
}
