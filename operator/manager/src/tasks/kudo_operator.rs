//! Running a KUDO KudoOperator task ([`kudo_pkg::dependency`] says what one is): the child
//! Instance of the dependency operator, applied with server-side apply and owned by the parent
//! (so it is removed with the parent), its parameters rendered from the task's
//! `parameterFile`; the step waits until the child's plan is COMPLETE.
//!
//! The child's OperatorVersion is named as KUDO names it, `<operatorName>-<appVersion>-<operatorVersion>`
//! (`<operatorName>-<operatorVersion>` without an appVersion): `kudo install` installed it with
//! the parent and wrote `operatorName`, `operatorVersion` and `appVersion` into the task. The child goes through kudo's
//! admission like any Instance: its parameters are checked against its own schema. It names its
//! parent's ServiceAccount (`spec.serviceAccountName`): a child acts with its parent's rights.

use kube::ResourceExt;
use kudo_pkg::dependency::KudoOperatorTask;
use kudo_pkg::package::Task;
use kudo_pkg::render::Use;
use kudo_yaml::document::Document;
use serde_json::{Value, json};

use crate::health::health;
use crate::step::{Outcome, StepRun};

/// Runs KudoOperator task `task` of step `at`: `Ok` once the child's plan is COMPLETE.
pub async fn run(run: StepRun<'_>, task: &Task) -> Result<(), Outcome> {
    let StepRun {
        prepared,
        params,
        at,
        ..
    } = run;
    let spec = KudoOperatorTask::of(task).map_err(|e| Outcome::Fatal(e.to_string()))?;
    let Some(version) = spec.operator_version.as_deref() else {
        return Err(Outcome::Fatal(format!(
            "KudoOperator task `{}` names no operatorVersion of {}",
            task.name, spec.package
        )));
    };
    // KUDO's name; an OperatorVersion named the other way is found too (the Instance's
    // admission and its reconcile resolve either, `kudo_crd::reference`).
    let ov = kudo_pkg::package::operator_version_name(
        spec.operator(),
        spec.app_version.as_deref(),
        version,
    );
    let opts = run.render_options();
    let parameters = match &spec.parameter_file {
        None => json!({}),
        Some(file) => {
            let at_file = Use {
                phase: at.phase.into(),
                step: at.step.into(),
                task: task.name.clone(),
                template: file.clone(),
            };
            let text = run
                .prepared
                .render_parameter_file(params, &opts, at_file)
                .map_err(|d| Outcome::invalid(&d))?;
            let path = prepared.package().source().join("templates").join(file);
            match Document::parse(&path, &text).map(|d| d.value().clone()) {
                Ok(v @ Value::Object(_)) => v,
                Ok(Value::Null) => json!({}),
                Ok(_) => {
                    return Err(Outcome::Fatal(format!(
                        "KudoOperator task `{}`: templates/{file} must render a map of parameters",
                        task.name
                    )));
                }
                Err(e) => {
                    return Err(Outcome::Fatal(format!(
                        "KudoOperator task `{}`: templates/{file} renders invalid YAML: {e}",
                        task.name
                    )));
                }
            }
        }
    };
    let name = spec.child_name(&opts.instance);
    let mut child = json!({
        "apiVersion": "kudo.dev/v1beta2",
        "kind": "Instance",
        "metadata": {"name": name, "namespace": opts.namespace},
        "spec": {"operatorVersion": {"name": ov}, "parameters": parameters},
    });
    // The child acts with its parent's rights, no more.
    if let Some(sa) = &run.tenant.service_account {
        child["spec"]["serviceAccountName"] = json!(sa.name);
    }
    // It runs the images its parent's were pinned to (verified, or relocated to a mirror).
    if let Some(images) = run.inst.annotations().get(kudo_crd::labels::IMAGES) {
        child["metadata"]["annotations"] = json!({kudo_crd::labels::IMAGES: images});
    }
    let stored = run.apply(child).await?;
    Outcome::of_health(health(&stored), &format!("Instance {name}")).done()
}
