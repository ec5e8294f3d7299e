//! What the cluster commands share: the connection flags, `--wait`, and the async runtime
//! their requests run on.

use crate::args::{ClusterArgs, ConnectArgs, WaitArgs};
use crate::error::Error;
use kudo_client::commands::{Target, wait};

impl WaitArgs {
    /// The wait options, when asked to wait.
    pub fn options(&self) -> Option<wait::Options> {
        (self.wait || self.wait_time.is_some()).then(|| wait::Options {
            timeout: self.wait_time.unwrap_or(wait::DEFAULT_TIMEOUT),
            ..wait::Options::default()
        })
    }
}

/// Connects as `connect` says and runs `f` with the client; an error is named by `command`
/// (`kudo init: ...`), but for parameter problems.
pub fn with_client<T>(
    command: &'static str,
    connect: &ConnectArgs,
    f: impl AsyncFnOnce(kube::Client) -> Result<T, Error>,
) -> Result<T, Error> {
    super::runtime()
        .and_then(|runtime| runtime.block_on(async { f(connect.client().await?).await }))
        .map_err(|e| e.in_command(command))
}

/// [`with_client`] on the namespace `cluster` names.
pub fn block_on<T>(
    command: &'static str,
    cluster: &ClusterArgs,
    f: impl AsyncFnOnce(Target) -> Result<T, Error>,
) -> Result<T, Error> {
    with_client(command, &cluster.connect, async |client| {
        f(Target::new(client, cluster.namespace.as_deref())).await
    })
}

impl ConnectArgs {
    /// A client for the cluster these flags name (`--kubeconfig`, `--context`, else
    /// `$KUBECONFIG`, `~/.kube/config`, the in-cluster configuration).
    pub async fn client(&self) -> Result<kube::Client, kudo_cluster::ConnectError> {
        kudo_cluster::client(self.kubeconfig.as_deref(), self.context.as_deref()).await
    }
}
