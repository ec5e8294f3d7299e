//! `kudo-manager`: runs the plans of kudo Instances.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use kudo_cluster::daemon::LogFormat;
use kudo_crd::labels;
use kudo_manager::{Lease, Options, Settings, Shards};

/// mimalloc: the manager keeps thousands of small objects (Instances, statuses, JSON values)
/// and frees many more while it renders and applies; with glibc's allocator its resident
/// memory at 10,000 Instances stayed well above what it held (BENCHMARKS.md, issue 49).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// kudo's manager: runs an Instance's plans when it changes.
///
/// Watches Instances and OperatorVersions; when an Instance's parameters, operator version or
/// spec.planExecution change, it runs the plan the change needs (deploy, the parameter's
/// trigger, update, upgrade, or the plan asked for) and records its progress in the Instance's
/// status. Deleting an Instance runs its cleanup plan first. Serves /healthz and /metrics
/// (Prometheus) on --metrics-addr. With --leader-elect only the replica holding the Lease runs
/// plans; one that loses it exits (code 1) to be restarted. With --shards N the replicas share
/// the Instances instead: each runs those of the shards whose Lease it holds, as many as its
/// fair share, and takes over a dead replica's within 15 s. An Instance's objects are applied
/// with the rights of a ServiceAccount of its namespace (spec.serviceAccountName, else
/// --default-service-account), by impersonation.
#[derive(Debug, Parser)]
#[command(name = "kudo-manager", version)]
struct Args {
    /// Kubeconfig file (default: the in-cluster configuration, then $KUBECONFIG or
    /// ~/.kube/config).
    #[arg(long, value_name = "FILE")]
    kubeconfig: Option<PathBuf>,
    /// Kubeconfig context.
    #[arg(long)]
    context: Option<String>,
    /// Address of /healthz and /metrics.
    #[arg(long, default_value = "0.0.0.0:8080")]
    metrics_addr: SocketAddr,
    /// Run plans only while holding the Lease --lease-name.
    #[arg(long)]
    leader_elect: bool,
    /// Share the Instances among the replicas: each Instance (and Rollout) belongs to one of N
    /// shards, by a stable hash of its namespace and name, and runs on the replica holding the
    /// Lease LEASE-NAME-shard-I-of-N; each replica holds its fair share of them. Every replica
    /// must be given the same N: one that finds a live Lease of another count refuses to run.
    /// Replaces --leader-elect; 1: not sharded.
    #[arg(long, default_value_t = 1, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1024))]
    shards: u32,
    /// Name of the leader election Lease (with --shards: the start of the shards' Leases).
    #[arg(long, default_value = labels::MANAGER)]
    lease_name: String,
    /// Namespace of the Lease.
    #[arg(long, env = "POD_NAMESPACE", default_value = labels::NAMESPACE)]
    lease_namespace: String,
    /// This replica's identity in the Lease (default: the pod or host name).
    #[arg(long, env = "POD_NAME")]
    identity: Option<String>,
    /// Seconds between looks at a plan that waits on objects becoming healthy (twice that after
    /// a minute of the same wait, four times after two).
    #[arg(long, default_value_t = 5)]
    progress_interval: u64,
    /// The ServiceAccount of an Instance's namespace whose rights the manager acts with for
    /// Instances that name none in spec.serviceAccountName (by impersonation). Without it, such
    /// Instances are run with the manager's own rights. `kudo init` passes kudo-instance.
    #[arg(long, value_name = "NAME")]
    default_service_account: Option<String>,
    /// How many times a Pipe task's init container may fail before its step fails for good
    /// (FATAL_ERROR, the Pod deleted, its last log lines in the step's message). KUDO waits
    /// forever.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(i64).range(1..))]
    pipe_max_restarts: i64,
    /// Most Instances reconciled at once (never two reconciles of one Instance); the others
    /// wait their turn. Each holds API server connections and a core while it renders. 0: no
    /// limit.
    #[arg(long, default_value_t = 8)]
    concurrency: u16,
    /// Longest time between two checks of the drift of an Instance whose plan is COMPLETE:
    /// its objects dry-run applied and compared with the live ones (spec.drift.mode: warn sets
    /// the Drifted condition, correct applies them again). A humantime duration: 30s, 5m, 1h;
    /// 0: drift is never checked.
    #[arg(long, default_value = "5m", value_parser = humantime::parse_duration)]
    drift_interval: std::time::Duration,
    /// Log format.
    #[arg(long, value_enum, default_value = "text")]
    log_format: LogFormat,
}

fn main() -> ExitCode {
    let args = Args::parse();
    kudo_cluster::daemon::init_logging(args.log_format);
    kudo_cluster::daemon::run(async move {
        let client =
            kudo_cluster::client(args.kubeconfig.as_deref(), args.context.as_deref()).await?;
        let identity = args.identity.clone().unwrap_or_else(|| {
            std::env::var("HOSTNAME")
                .unwrap_or_else(|_| format!("kudo-manager-{}", std::process::id()))
        });
        let settings = Settings {
            progress: std::time::Duration::from_secs(args.progress_interval.max(1)),
            pipe_max_restarts: args.pipe_max_restarts,
            concurrency: args.concurrency,
            drift_interval: args.drift_interval,
            ..Settings::default()
        };
        let opts = Options {
            metrics_addr: args.metrics_addr,
            lease: (args.leader_elect && args.shards == 1).then(|| Lease {
                name: args.lease_name.clone(),
                namespace: args.lease_namespace.clone(),
                identity: identity.clone(),
            }),
            shards: (args.shards > 1).then(|| Shards {
                count: args.shards,
                base: args.lease_name.clone(),
                namespace: args.lease_namespace.clone(),
                identity,
            }),
            settings,
            default_service_account: args.default_service_account.clone(),
            home: Some(args.lease_namespace.clone()),
        };
        // SIGTERM (Kubernetes stopping the pod) or Ctrl-C: finish the reconciles under way.
        kudo_manager::serve(client, opts, kudo_cluster::daemon::shutdown_signal()).await?;
        Ok::<(), Stopped>(())
    })
}

/// Why the manager stopped.
#[derive(Debug, thiserror::Error)]
enum Stopped {
    /// No client from the kubeconfig.
    #[error(transparent)]
    Connect(#[from] kudo_cluster::ConnectError),
    /// The manager's own errors.
    #[error(transparent)]
    Serve(#[from] kudo_manager::Error),
}
