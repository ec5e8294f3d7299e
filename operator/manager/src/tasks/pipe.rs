//! Running a KUDO Pipe task ([`kudo_pkg::pipe`] says what one is): the Pod applied, waited
//! for, its files read from the waiter container ([`crate::pod_files`]), each made a ConfigMap
//! or Secret owned by the Instance, then the Pod deleted.
//!
//! Each round is idempotent: until the step is COMPLETE, a round applies the same Pod (by its
//! deterministic name) and, once it is Ready, copies every file again. A failing init
//! container keeps the Pod from Ready (`restartPolicy: OnFailure`): the step waits, as in KUDO.
//! A file that cannot be read (missing: the command fails) or is larger than 1 MiB fails the
//! step for good; an API server that cannot be reached is retried.

use kudo_pkg::package::Task;
use kudo_pkg::pipe::{self, MAX_FILE_SIZE, PipeTask, WAITER};
use kudo_pkg::render::Use;
use serde_json::Value;

use crate::health::health;
use crate::pod_files::FileError;
use crate::step::{Outcome, StepRun};

/// Runs Pipe task `task` of step `at`: `Ok` once its artifacts exist and its Pod is deleted.
pub async fn run(run: StepRun<'_>, task: &Task) -> Result<(), Outcome> {
    let StepRun { params, at, .. } = run;
    let spec = PipeTask::of(task).map_err(|e| Outcome::Fatal(e.to_string()))?;
    let opts = run.render_options();
    let template = Use {
        phase: at.phase.into(),
        step: at.step.into(),
        task: task.name.clone(),
        template: spec.pod.clone(),
    };
    let rendered = run
        .prepared
        .render_pipe_pod(params, &opts, template)
        .map_err(|d| Outcome::invalid(&d))?;
    let [pod] = &rendered.objects[..] else {
        return Err(Outcome::Fatal(format!(
            "Pipe task `{}`: templates/{} must hold exactly one Pod",
            task.name, spec.pod
        )));
    };
    if pod["kind"] != "Pod" {
        return Err(Outcome::Fatal(format!(
            "Pipe task `{}`: templates/{} is a {}, not a Pod",
            task.name, spec.pod, pod["kind"]
        )));
    }
    let check = |r: Result<Value, pipe::PipeError>| {
        r.map_err(|e| Outcome::Fatal(format!("Pipe task `{}`: {e}", task.name)))
    };
    pipe::check_pod(pod, &spec.files)
        .map_err(|e| Outcome::Fatal(format!("Pipe task `{}`: {e}", task.name)))?;
    let parts = |suffix: &str| {
        pipe::artifact_name(&[
            &opts.instance,
            at.plan,
            at.phase,
            at.step,
            &task.name,
            suffix,
        ])
    };
    let name = parts("pipepod");
    let pod = check(pipe::pipe_pod(pod.clone(), &name))?;
    let stored = run.apply(pod).await?;
    Outcome::of_health(health(&stored), &format!("Pipe Pod {name}")).done()?;
    let namespace = stored
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .unwrap_or(&opts.namespace)
        .to_string();
    let files = run.objects.files(run.tenant);
    for file in &spec.files {
        let data = files
            .read(&namespace, &name, &file.path)
            .await
            .map_err(|e| match e {
                FileError::TooLarge => Outcome::Fatal(format!(
                    "pipe file {} of Pod {name} is larger than {MAX_FILE_SIZE} bytes",
                    file.path
                )),
                FileError::Failed(why) => Outcome::Fatal(format!(
                    "pipe file {} of Pod {name} cannot be read: {why}",
                    file.path
                )),
                // Not the package's fault, and the Pod may become reachable: the step waits,
                // saying for what.
                FileError::Unreachable(why) => Outcome::Waiting(format!(
                    "waiting to read pipe file {} from Pod {name} (container {WAITER}, with exec): {why}",
                    file.path
                )),
            })?;
        let artifact = check(pipe::artifact(file, &parts(&file.key), &data))?;
        run.apply(artifact).await?;
    }
    Ok(run.delete(&stored).await?)
}
