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
    #[error("the Lease {0} could not be renewed for {secs} s: another replica may take it, so this one stops", secs = .1.as_secs())]
    LeaseNotRenewed(String, std::time::Duration),
    /// Another replica took the Lease.
    #[error("another replica holds the Lease {0} now: this one stops running its plans")]
    LeaseTaken(String),
    /// Replicas started with different `--shards` would both run some Instances.
    #[error(
        "replicas disagree on the shard count: this one was started with {}, but the Lease {lease} is held by {holder}, started with {}. Every replica must be started with the same --shards (kudo init --manager-replicas); this one refuses to run so that no Instance is run by two replicas at once",
        flag(*ours),
        flag(*theirs)
    )]
    ShardCount {
        /// This replica's `--shards`.
        ours: u32,
        /// The other replica's.
        theirs: u32,
        /// The other replica's live Lease.
        lease: String,
        /// Who holds it.
        holder: String,
    },
    /// This replica's own Lease is held by another process with the same identity.
    #[error(
        "the Lease {0} of this replica's identity is held by another process: give each replica its own --identity (the Pod name)"
    )]
    IdentityTaken(String),
}

/// How a replica of `count` shards was started.
fn flag(count: u32) -> String {
    match count {
        1 => "--leader-elect (one replica runs every Instance)".to_string(),
        n => format!("--shards {n}"),
    }
}

impl Error {
    /// The `error` label of the failure metric.
    pub fn metric_label(&self) -> &'static str {
        match self {
            Error::Kube(_) => "kube",
            Error::NoNamespace(_) => "internal",
            Error::NoCrd(_) => "no_crd",
            Error::Serve(..) => "serve",
            Error::LeaderElection(_)
            | Error::LeaseNotRenewed(..)
            | Error::LeaseTaken(_)
            | Error::ShardCount { .. }
            | Error::IdentityTaken(_) => "leader_election",
        }
    }
}

/// `Result` with the manager's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
