//! Reading the files a Pipe task's Pod wrote ([`PodFiles`]): through the API server, `cat`
//! run with `exec` in the Pod's [`WAITER`] container ([`ExecFiles`]), at most
//! [`MAX_FILE_SIZE`] bytes; tests read them otherwise.

use futures::future::BoxFuture;
use kube::Client;
use kube::api::{Api, AttachParams};
use kudo_pkg::pipe::{MAX_FILE_SIZE, WAITER};
use tokio::io::AsyncReadExt;

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
