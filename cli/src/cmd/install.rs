//! `kudo install PACKAGE`: the rules live in `kudo_client::commands::install`.

use super::Outcome;
use super::cluster;
use crate::args::{DataFormat, InstallArgs};
use crate::error::{Error, Refusal};
use crate::progress::Progress;
use kudo_client::commands::{self, Inputs, install, wait};

pub fn run(a: InstallArgs, mut progress: Progress) -> Result<Outcome, Error> {
    // From a mirror (`--mirror`, or the configuration's): the package named is its copy there.
    let mirror = super::mirror::Mirror::of(a.mirror.mirror.as_deref(), a.source.plain_http)?;
    let package = match &mirror {
        Some(m) => m.package(&a.package, &a.source.lookup)?,
        None => a.package.clone(),
    };
    let loaded = super::load_with(&package, &a.source)?;
    let deps = loaded.dependencies()?;
    let pkg = loaded.package;
    let (docs, sources) = super::value_inputs(pkg.schema(), &a.values)?;
    let inputs = Inputs {
        files: &docs,
        overrides: &a.values.overrides,
        resets: &[],
        edits: &[],
    };
    // Refused parameters never need a cluster: the same check runs again in install().
    if let Err(e) = install::check(&pkg, &inputs) {
        return Err(Error::from(e).in_command("install").with_sources(sources));
    }
    let gate = super::images::Gate::of(&a.images, mirror.as_ref().map(|m| m.pins()))?;
    let req = install::Request {
        package: &pkg,
        dependencies: Some(&deps),
        instance: a.instance.as_deref(),
        inputs,
        dry_run: a.dry_run,
        service_account: Some(&a.service_account),
        create_namespace: a.create_namespace,
        images: gate
            .as_ref()
            .map(|g| g as &dyn kudo_client::commands::ImageGate),
    };
    let (dry_run, output, create_namespace) = (a.dry_run, a.output, a.create_namespace);
    let waiting = a.wait.options();
    let out = cluster::block_on("install", &a.cluster, async |t| {
        let done = install::install(&t, &req).await?;
        let name = done.instance.metadata.name.clone().unwrap_or_default();
        let ov = done
            .instance
            .spec
            .operator_version_name()
            .unwrap_or_default();
        crate::report::diagnostics(&done.change.warnings);
        if dry_run {
            return Ok(dry_run_report(&t.namespace, &done, &name, &ov, output));
        }
        for o in done.created.iter().filter(|o| {
            matches!(
                o["kind"].as_str(),
                Some("Namespace" | "ServiceAccount" | "RoleBinding" | "ClusterRoleBinding")
            )
        }) {
            let name = o["metadata"]["name"].as_str().unwrap_or_default();
            match o["metadata"]["namespace"].as_str() {
                Some(ns) => eprintln!(
                    "{} {ns}/{name} created",
                    o["kind"].as_str().unwrap_or_default()
                ),
                None => eprintln!("{} {name} created", o["kind"].as_str().unwrap_or_default()),
            }
        }
        if done.created_operator {
            eprintln!("Operator {}/{} created", t.namespace, pkg.operator().name);
        }
        if done.created_operator_version {
            eprintln!("OperatorVersion {}/{ov} created", t.namespace);
        }
        let mut out = format!(
            "Instance {}/{name} created (OperatorVersion {ov})\n",
            t.namespace
        );
        if let Some(o) = waiting {
            let goal = wait::Goal {
                generation: done.instance.metadata.generation.unwrap_or(1),
                uid: None,
            };
            let plan = wait::plan_done(&t, &name, &goal, &o, &mut |r| progress.watch(r)).await?;
            out.push_str(&format!("plan {plan} COMPLETE\n"));
        }
        Ok(out)
    })
    .map_err(|e| no_namespace_hint(e, create_namespace).with_sources(sources))?;
    super::print(&out)?;
    Ok(Outcome::Done)
}

/// A namespace that does not exist: install can make it (`--create-namespace`).
fn no_namespace_hint(e: Error, create_namespace: bool) -> Error {
    match e {
        Error::In { command, source } if !create_namespace => match *source {
            Error::Cluster(commands::Error::NoNamespace { namespace }) => Error::In {
                command,
                source: Box::new(Error::refused(
                    format!("namespace {namespace}"),
                    Refusal::NoNamespace { namespace },
                )),
            },
            source => Error::In {
                command,
                source: Box::new(source),
            },
        },
        e => e,
    }
}

/// What `install --dry-run` prints: the objects as a `List` (`-o`), or a summary.
fn dry_run_report(
    namespace: &str,
    done: &install::Installation,
    name: &str,
    ov: &str,
    output: Option<DataFormat>,
) -> String {
    if let Some(format) = output {
        let mut items = done.created.clone();
        items.push(serde_json::to_value(&done.instance).unwrap_or_default());
        let list = serde_json::json!({"apiVersion": "v1", "kind": "List", "items": items});
        return match format {
            DataFormat::Json => {
                format!(
                    "{}\n",
                    serde_json::to_string_pretty(&list).unwrap_or_default()
                )
            }
            DataFormat::Yaml => super::to_yaml(&list),
        };
    }
    let mut out = String::new();
    for o in &done.created {
        let place = match o["metadata"]["namespace"].as_str() {
            Some(ns) => format!("{ns}/"),
            None if o["kind"] == "ClusterRoleBinding" || o["kind"] == "Namespace" => String::new(),
            None => format!("{namespace}/"),
        };
        out.push_str(&format!(
            "{} {place}{} would be created\n",
            o["kind"].as_str().unwrap_or_default(),
            o["metadata"]["name"].as_str().unwrap_or_default()
        ));
    }
    out.push_str(&format!(
        "Instance {namespace}/{name} would be created (OperatorVersion {ov}){}\n",
        if done.server_checked {
            ", accepted by the API server's dry run"
        } else {
            "; the API server could not check it, since its OperatorVersion does not exist yet"
        }
    ));
    out.push_str("nothing was written (--dry-run)\n");
    out
}
