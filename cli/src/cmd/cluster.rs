//! What the cluster commands share: the connection flags, `--wait`, the async runtime, and
//! how a refusal is printed (exit code 1).

use std::process::ExitCode;

use crate::args::{ClusterArgs, ConnectArgs, WaitArgs};
use kudo_client::commands::{self, Target, wait};

impl WaitArgs {
    /// The wait options, when asked to wait.
    pub fn options(&self) -> Option<wait::Options> {
        (self.wait || self.wait_time.is_some()).then(|| wait::Options {
            timeout: self.wait_time.unwrap_or(wait::DEFAULT_TIMEOUT),
            ..wait::Options::default()
        })
    }
}

/// Why a cluster command stopped.
pub enum Failure {
    /// No client: the kubeconfig, the context, the runtime.
    Connect(String),
    /// The command refused or failed.
    Command(commands::Error),
}

impl From<commands::Error> for Failure {
    fn from(e: commands::Error) -> Self {
        Failure::Command(e)
    }
}

/// Connects as `cluster` says and runs `f` on the target.
pub fn block_on<T>(
    cluster: &ClusterArgs,
    f: impl AsyncFnOnce(Target) -> Result<T, Failure>,
) -> Result<T, Failure> {
    let runtime = super::runtime()
        .map_err(|e| Failure::Connect(format!("cannot start the async runtime: {e}")))?;
    runtime.block_on(async {
        let client = cluster.connect.client().await.map_err(Failure::Connect)?;
        f(Target::new(client, cluster.namespace.as_deref())).await
    })
}

/// Prints a failure on stderr (parameter problems as diagnostics) and returns exit code 1.
pub fn fail(command: &str, failure: Failure, sources: crate::report::Sources) -> ExitCode {
    match failure {
        Failure::Command(commands::Error::Parameters(diags)) => {
            crate::report::diagnostics_with(&diags, sources);
        }
        Failure::Command(e) => eprintln!("error: kudo {command}: {e}"),
        Failure::Connect(e) => eprintln!("error: kudo {command}: {e}"),
    }
    ExitCode::from(1)
}

impl ConnectArgs {
    /// A client for the cluster these flags name (`--kubeconfig`, `--context`, else
    /// `$KUBECONFIG`, `~/.kube/config`, the in-cluster configuration).
    pub async fn client(&self) -> Result<kube::Client, String> {
        kudo_client::client(self.kubeconfig.as_deref(), self.context.as_deref())
            .await
            .map_err(|e| e.to_string())
    }
}
