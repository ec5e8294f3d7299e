//! `kudo upgrade PACKAGE --instance NAME`: the rules live in `kudo_client::commands::upgrade`.

use super::Outcome;
use super::changes::{ChangeReport, Sent, Superseded};
use super::cluster;
use crate::args::{ReportFormat, UpgradeArgs};
use crate::error::Error;
use crate::progress::Progress;
use kudo_client::commands::{Inputs, upgrade, wait};

pub fn run(a: UpgradeArgs, mut progress: Progress) -> Result<Outcome, Error> {
    let name = a.instance.clone().unwrap_or_default();
    let mirror = super::mirror::Mirror::of(a.mirror.mirror.as_deref(), a.source.plain_http)?;
    let package = a.new_package.clone().unwrap_or_default();
    let package = match &mirror {
        Some(m) => m.package(&package, &a.source.lookup)?,
        None => package,
    };
    let loaded = super::load_with(&package, &a.source)?;
    let deps = loaded.dependencies()?;
    let pkg = loaded.package;
    let (docs, sources) = super::value_inputs(pkg.schema(), &a.values)?;
    let remediation = a.remediation.remediation();
    let allow = a.allow();
    let gate = super::images::Gate::of(&a.images, mirror.as_ref().map(|m| m.pins()))?;
    let req = upgrade::Request {
        instance: &name,
        package: &pkg,
        dependencies: Some(&deps),
        inputs: Inputs {
            files: &docs,
            overrides: &a.values.overrides,
            resets: &[],
            edits: &[],
        },
        dry_run: a.edit.dry_run,
        force: a.force,
        ignore_window: a.ignore_window,
        remediation: remediation.as_ref(),
        allow: &allow,
        images: gate
            .as_ref()
            .map(|g| g as &dyn kudo_client::commands::ImageGate),
    };
    let waiting = a.wait.options().filter(|_| !a.edit.dry_run);
    let (namespace, done, waited) = cluster::block_on("upgrade", &a.cluster, async |t| {
        let done = upgrade::upgrade(&t, &req).await?;
        let waited = wait::after_write(&t, &name, done.generation, waiting, &mut |r| {
            progress.watch(r)
        })
        .await?;
        Ok((t.namespace.clone(), done, waited))
    })
    .map_err(|e| e.with_sources(sources))?;
    crate::report::diagnostics(&done.change.warnings);
    let out = match a.edit.output {
        ReportFormat::Json => ChangeReport {
            instance: Some(format!("{namespace}/{name}")),
            from: Some(&done.from),
            to: Some(&done.to),
            created_operator_version: Some(done.created_operator_version),
            superseded: done.superseded.as_ref().map(Superseded::of),
            cluster: Some(Sent {
                generation: done.generation,
                attempts: None,
                completed: waited.as_deref(),
            }),
            ..ChangeReport::of(&done.change, a.edit.dry_run, done.generation.is_some())
        }
        .json(),
        ReportFormat::Text => {
            let mut out = String::new();
            if let Some(r) = &done.change.report {
                out.push_str(&super::instance_file::migration(r));
            }
            if let Some(plan) = &done.change.plan {
                out.push_str(&format!("plan: {plan}\n"));
            }
            for c in &done.change.changes {
                out.push_str(&format!(
                    "  changed {} (runs {} in the new version)\n",
                    c.pointer, c.plan
                ));
            }
            if done.created_operator_version {
                out.push_str(&format!(
                    "OperatorVersion {namespace}/{} created\n",
                    done.to
                ));
            }
            if let Some(run) = &done.superseded {
                out.push_str(&Superseded::of(run).line());
            }
            if a.edit.dry_run {
                out.push_str(&format!(
                    "dry run: Instance {namespace}/{name} would move from {} to {}; nothing was sent\n",
                    done.from, done.to
                ));
            } else {
                out.push_str(&format!(
                    "Instance {namespace}/{name} upgraded from {} to {}\n",
                    done.from, done.to
                ));
            }
            if let Some(plan) = waited {
                out.push_str(&format!("plan {plan} COMPLETE\n"));
            }
            out
        }
    };
    super::print(&out)?;
    Ok(Outcome::Done)
}
