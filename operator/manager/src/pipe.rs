//! Running a KUDO Pipe task ([`kudo_pkg::pipe`] says what one is): the Pod applied, waited
//! for, its files read from the waiter container through the API server's `exec`, each made a
//! ConfigMap or Secret owned by the Instance, then the Pod deleted.
//!
//! Each round is idempotent: until the step is COMPLETE, a round applies the same Pod (by its
//! deterministic name) and, once it is Ready, copies every file again. A failing init
//! container keeps the Pod from Ready (`restartPolicy: OnFailure`): the step waits, as in KUDO.
//! A file that cannot be read (missing: the command fails) or is larger than 1 MiB fails the
//! step for good; an API server that cannot be reached is retried.

use futures::future::BoxFuture;
use kube::Client;
use kube::api::{Api, AttachParams};
use kudo_pkg::pipe::{self, MAX_FILE_SIZE, PipeTask, WAITER};
use kudo_pkg::render::{Use, render_pipe_pod};
use serde_json::Value;
use tokio::io::AsyncReadExt;

use super::health::{Health, health};
use super::tasks::{Outcome, StepRun, diagnostics, prepare};

/// Why a file could not be read from a Pipe Pod.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileError {
    /// Larger than [`MAX_FILE_SIZE`].
    TooLarge,
    /// The read ran and failed (no such file): it will fail again.
    Failed(String),
    /// The Pod could not be reached now.
    Unreachable(String),
}

/// Why an exec into a Pod failed, in the API server's words (without the client's debug dump
/// of the status). The usual case without a reachable kubelet: `error dialing backend: ...`.
fn exec_failure(e: &kube::Error) -> String {
    match e {
        kube::Error::Api(s) => format!(
            "the API server cannot exec into the Pod ({}): is its node's kubelet reachable?",
            s.message
        ),
        other => other.to_string(),
    }
}

/// Reads a file from a running Pod's [`WAITER`] container.
pub trait PodFiles: Send + Sync {
    /// At most [`MAX_FILE_SIZE`] bytes of `path` in Pod `namespace/pod`.
    fn read<'a>(
        &'a self,
        namespace: &'a str,
        pod: &'a str,
        path: &'a str,
    ) -> BoxFuture<'a, Result<Vec<u8>, FileError>>;
}

/// [`PodFiles`] through the API server: `cat` run with `exec` in the waiter container.
pub struct ExecFiles {
    client: Client,
}

impl ExecFiles {
    /// Reads through `client`.
    pub fn new(client: Client) -> ExecFiles {
        ExecFiles { client }
    }
}

impl PodFiles for ExecFiles {
    fn read<'a>(
        &'a self,
        namespace: &'a str,
        pod: &'a str,
        path: &'a str,
    ) -> BoxFuture<'a, Result<Vec<u8>, FileError>> {
        Box::pin(async move {
            let pods: Api<k8s_openapi::api::core::v1::Pod> =
                Api::namespaced(self.client.clone(), namespace);
            let params = AttachParams::default()
                .container(WAITER)
                .stdin(false)
                .stdout(true)
                .stderr(true);
            let mut process = pods
                .exec(pod, ["cat", path], &params)
                .await
                .map_err(|e| FileError::Unreachable(exec_failure(&e)))?;
            let status = process.take_status();
            let mut data = Vec::new();
            if let Some(stdout) = process.stdout() {
                let limit = u64::try_from(MAX_FILE_SIZE).unwrap_or(u64::MAX) + 1;
                stdout
                    .take(limit)
                    .read_to_end(&mut data)
                    .await
                    .map_err(|e| FileError::Unreachable(e.to_string()))?;
            }
            if data.len() > MAX_FILE_SIZE {
                process.abort();
                return Err(FileError::TooLarge);
            }
            let mut errors = String::new();
            if let Some(mut stderr) = process.stderr() {
                let _ = (&mut stderr).take(4096).read_to_string(&mut errors).await;
            }
            let done = match status {
                Some(s) => s.await,
                None => None,
            };
            let _ = process.join().await;
            match done {
                Some(s) if s.status.as_deref() != Some("Success") => Err(FileError::Failed(
                    format!("{} {}", s.message.unwrap_or_default(), errors.trim())
                        .trim()
                        .to_string(),
                )),
                _ => Ok(data),
            }
        })
    }
}

/// Runs Pipe task `task` of step `at`: `Ok` once its artifacts exist and its Pod is deleted.
pub async fn run(run: StepRun<'_>, task: &kudo_pkg::package::Task) -> Result<(), Outcome> {
    let (objects, inst, pkg, params, at) = run.parts();
    let op = pkg.operator();
    let spec = PipeTask::of(task).map_err(|e| Outcome::Fatal(e.to_string()))?;
    let opts = at.render_options(inst);
    let template = Use {
        phase: at.phase.into(),
        step: at.step.into(),
        task: task.name.clone(),
        template: spec.pod.clone(),
    };
    let rendered = render_pipe_pod(pkg, params, &opts, template)
        .map_err(|d| Outcome::Fatal(diagnostics(&d)))?;
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
    let stored = objects
        .apply(
            run.tenant,
            prepare(pod, inst, &op.name, at),
            inst,
            run.notes,
        )
        .await?;
    match health(&stored) {
        Health::Healthy => {}
        Health::Progressing(why) => {
            return Err(Outcome::Waiting(format!("Pipe Pod {name}: {why}")));
        }
        Health::Failed(why) => return Err(Outcome::Fatal(format!("Pipe Pod {name}: {why}"))),
    }
    let namespace = stored
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .unwrap_or(&opts.namespace)
        .to_string();
    let files = objects.files(run.tenant);
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
        objects
            .apply(
                run.tenant,
                prepare(artifact, inst, &op.name, at),
                inst,
                run.notes,
            )
            .await?;
    }
    objects.delete(run.tenant, &stored, inst).await
}
