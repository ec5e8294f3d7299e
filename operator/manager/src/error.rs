//! The manager's errors: only the API server's and the process's. Everything about an Instance
//! itself (a missing OperatorVersion, invalid parameters, a failing step) is written to its
//! status instead.

/// The manager's errors.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A request to the API server failed.
    #[error("Kubernetes API request failed: {0}")]
    Kube(#[from] kube::Error),
    /// An Instance without a namespace: the CRD is namespaced, so this is a bug.
    #[error("internal error: Instance {0} has no namespace; this is a bug in kudo-manager")]
    NoNamespace(String),
    /// The Instance CRD is not installed.
    #[error("the Instance CRD (instances.kudo.dev) is not installed: run `kudo init` first ({0})")]
    NoCrd(kube::Error),
    /// The health and metrics server cannot listen.
    #[error("cannot serve /healthz and /metrics on {0}: {1}")]
    Serve(std::net::SocketAddr, std::io::Error),
    /// Leader election failed.
    #[error("leader election failed: {0}")]
    LeaderElection(#[source] kube_lease_manager::LeaseManagerError),
    /// The Lease could not be renewed for this long: another replica may take it.
    #[error("leader election failed: the Lease could not be renewed for {} s", .0.as_secs())]
    LeaseNotRenewed(std::time::Duration),
    /// Another replica took the lease.
    #[error("lost leadership: another replica runs the plans now")]
    LeadershipLost,
}

impl Error {
    /// The `error` label of the failure metric.
    pub fn metric_label(&self) -> &'static str {
        match self {
            Error::Kube(_) => "kube",
            Error::NoNamespace(_) => "internal",
            Error::NoCrd(_) => "no_crd",
            Error::Serve(..) => "serve",
            Error::LeaderElection(_) | Error::LeaseNotRenewed(_) | Error::LeadershipLost => {
                "leader_election"
            }
        }
    }
}

/// `Result` with the manager's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
