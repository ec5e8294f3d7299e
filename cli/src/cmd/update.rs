//! `kudo update NAME` (`--instance NAME`): the rules live in `kudo_client::commands::update`.

use super::Outcome;
use super::changes::{ChangeReport, Sent, Superseded, change_lines};
use super::cluster;
use crate::args::{ReportFormat, UpdateArgs};
use crate::error::Error;
use crate::progress::Progress;
use kudo_client::commands::{Inputs, update, wait};

pub fn run(a: UpdateArgs, progress: Progress) -> Result<Outcome, Error> {
    let name = crate::args::either(a.name.as_deref(), a.instance.as_deref())?
        .unwrap_or_default()
        .to_string();
    let (docs, diags) = kudo_policy::values::read_files(&a.values.files);
    if !diags.is_empty() {
        return Err(Error::parameters(diags));
    }
    let remediation = a.remediation.remediation();
    // An install from a mirror (the configuration's `mirror:`) stays on it.
    let mirror = super::mirror::Mirror::of(None, a.images.image_plain_http)?;
    let gate = super::images::Gate::of(&a.images, mirror.as_ref().map(|m| m.pins()))?;
    let req = update::Request {
        instance: &name,
        inputs: Inputs {
            files: &docs,
            overrides: &a.values.overrides,
            resets: &a.resets,
            edits: &[],
        },
        dry_run: a.edit.dry_run,
        force: a.force,
        ignore_window: a.ignore_window,
        remediation: remediation.as_ref(),
        images: gate
            .as_ref()
            .map(|g| g as &dyn kudo_client::commands::ImageGate),
    };
    send("update", &req, &a.cluster, &a.wait, a.edit.output, progress)
}

/// Sends the update `req` (or, with `req.dry_run`, computes it), waits as `wait` says and
/// prints the report: `kudo update --instance` and `kudo patch`.
pub(super) fn send(
    command: &'static str,
    req: &update::Request<'_>,
    cluster: &crate::args::ClusterArgs,
    wait: &crate::args::WaitArgs,
    output: ReportFormat,
    mut progress: Progress,
) -> Result<Outcome, Error> {
    let name = req.instance;
    let waiting = wait.options().filter(|_| !req.dry_run);
    // The package is in the cluster: no -P snippet is shown next to parameter problems.
    let (namespace, done, waited) = cluster::block_on(command, cluster, async |t| {
        let done = update::update(&t, req).await?;
        let waited = wait::after_write(&t, name, done.generation, waiting, &mut |r| {
            progress.watch(r)
        })
        .await?;
        Ok((t.namespace.clone(), done, waited))
    })?;
    crate::report::diagnostics(&done.change.warnings);
    let selection = done.change.selection();
    let out = match output {
        ReportFormat::Json => ChangeReport {
            instance: Some(format!("{namespace}/{name}")),
            operator_version: Some(&done.operator_version),
            superseded: done.superseded.as_ref().map(Superseded::of),
            cluster: Some(Sent {
                generation: done.generation,
                attempts: Some(done.attempts),
                completed: waited.as_deref(),
            }),
            ..ChangeReport::of(&done.change, req.dry_run, done.generation.is_some())
        }
        .json(),
        ReportFormat::Text => {
            let mut out = String::new();
            match (&selection.plan, &done.patch) {
                (Some(plan), _) => out.push_str(&format!("plan: {plan}\n")),
                (None, None) => out.push_str("nothing changes: the parameters are already these\n"),
                // Values pinned to what they already are (a default, say): stored, no plan.
                (None, Some(_)) => {
                    out.push_str("no plan runs: the effective parameters stay the same\n")
                }
            }
            out.push_str(&change_lines(
                &selection.changes,
                done.superseded.as_ref(),
                &format!("{namespace}/{name}"),
                req.dry_run,
                done.generation
                    .map(|_| format!("Instance {namespace}/{name} updated\n")),
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
