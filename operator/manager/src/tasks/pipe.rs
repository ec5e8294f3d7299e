//! Running a KUDO Pipe task ([`kudo_pkg::pipe`] says what one is): the Pod applied, waited
//! for, its files read from the waiter container ([`crate::pod_files`]), each made a ConfigMap
//! or Secret owned by the Instance, then the Pod deleted.
//!
//! Each round is idempotent: until the step is COMPLETE, a round applies the same Pod (by its
//! deterministic name) and, once it is Ready, copies every file again. A failing init
//! container keeps the Pod from Ready (`restartPolicy: OnFailure`): the step waits, naming the
//! container, its exit code and last log lines; once it has failed
//! `--pipe-max-restarts` times (3) the step fails for good (KUDO waits forever). A file that
//! cannot be read (missing: the command fails) or is larger than 1 MiB fails the step for
//! good; an API server that cannot be reached is retried. The Pod is deleted when the step
//! ends, COMPLETE or FATAL.

use kudo_pkg::package::Task;
use kudo_pkg::pipe::{self, MAX_FILE_SIZE, PipeTask, WAITER};
use kudo_pkg::render::Use;
use serde_json::Value;

use crate::health::{Health, health, with_troubles};
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
    let mut pod = check(pipe::pipe_pod(pod.clone(), &name))?;
    // The waiter kudo adds runs pinned too (by digest, or from a mirror).
    kudo_pkg::images::rewrite(&mut pod, &opts.images);
    let stored = run.apply(pod).await?;
    // The Pod goes when the step ends, COMPLETE or FATAL: a failed Pipe leaves nothing behind.
    let copied = copy(run, task, &spec, &stored, &name, &parts).await;
    match copied {
        Ok(()) => Ok(run.delete(&stored).await?),
        Err(Outcome::Fatal(why)) => {
            if let Err(f) = run.delete(&stored).await {
                tracing::warn!(pod = %name, failure = ?f, "the failed Pipe Pod could not be deleted");
            }
            Err(Outcome::Fatal(why))
        }
        Err(other) => Err(other),
    }
}

/// Waits for the Pipe Pod `stored` (named `name`) to be Ready, then copies each file of `spec`
/// into its ConfigMap or Secret. An init container that failed
/// [`StepRun::pipe_max_restarts`] times fails the step, naming it with its exit code and last
/// log lines.
async fn copy(
    run: StepRun<'_>,
    task: &Task,
    spec: &PipeTask,
    stored: &Value,
    name: &str,
    parts: &(dyn Fn(&str) -> String + Sync),
) -> Result<(), Outcome> {
    let what = format!("Pipe Pod {name}");
    let h = health(stored);
    if matches!(h, Health::Progressing(_)) {
        let troubles = run.objects.failing_containers(run.tenant, stored).await;
        let mask = run.redacted();
        let mask = |s: &str| mask.mask(s);
        let max = run.pipe_max_restarts;
        if let Some(t) = troubles.iter().find(|t| t.init && t.failures() >= max) {
            return Err(Outcome::Fatal(format!(
                "{what}: the init container of Pipe task `{}` failed {} times (kudo-manager --pipe-max-restarts {max}): {}",
                task.name,
                t.failures(),
                t.say(&mask)
            )));
        }
        return Outcome::of_health(with_troubles(h, &troubles, &mask), &what).done();
    }
    Outcome::of_health(h, &what).done()?;
    let namespace = stored
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let files = run.objects.files(run.tenant);
    for file in &spec.files {
        let data = files
            .read(&namespace, name, &file.path)
            .await
            .map_err(|e| match e {
                FileError::TooLarge => Outcome::Fatal(format!(
                    "pipe file {} of Pod {name} is larger than {MAX_FILE_SIZE} bytes, the most a {} holds",
                    file.path,
                    kind(file)
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
        let artifact = pipe::artifact(file, &parts(&file.key), &data)
            .map_err(|e| Outcome::Fatal(format!("Pipe task `{}`: {e}", task.name)))?;
        run.apply(artifact).await?;
    }
    Ok(())
}

/// `ConfigMap` or `Secret`.
fn kind(file: &pipe::PipeFile) -> &'static str {
    match file.kind {
        pipe::ArtifactKind::ConfigMap => "ConfigMap",
        pipe::ArtifactKind::Secret => "Secret",
    }
}
