//! `kudo-manager`: runs the plans of kudo Instances.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, ValueEnum};
use kudo_operator::manager::{self, Lease, Options, Settings};

/// kudo's manager: runs an Instance's plans when it changes.
///
/// Watches Instances and OperatorVersions; when an Instance's parameters, operator version or
/// spec.planExecution change, it runs the plan the change needs (deploy, the parameter's
/// trigger, update, upgrade, or the plan asked for) and records its progress in the Instance's
/// status. Deleting an Instance runs its cleanup plan first. Serves /healthz and /metrics
/// (Prometheus) on --metrics-addr. With --leader-elect only the replica holding the Lease runs
/// plans; one that loses it exits (code 1) to be restarted.
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
    /// Name of the leader election Lease.
    #[arg(long, default_value = "kudo-manager")]
    lease_name: String,
    /// Namespace of the Lease.
    #[arg(long, env = "POD_NAMESPACE", default_value = "kudo-system")]
    lease_namespace: String,
    /// This replica's identity in the Lease (default: the pod or host name).
    #[arg(long, env = "POD_NAME")]
    identity: Option<String>,
    /// Seconds between looks at a plan that waits on objects becoming healthy.
    #[arg(long, default_value_t = 5)]
    progress_interval: u64,
    /// Log format.
    #[arg(long, value_enum, default_value = "text")]
    log_format: LogFormat,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum LogFormat {
    Text,
    Json,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    match args.log_format {
        LogFormat::Json => tracing_subscriber::fmt()
            .json()
            .with_env_filter(filter)
            .init(),
        LogFormat::Text => tracing_subscriber::fmt().with_env_filter(filter).init(),
    }
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: cannot start the runtime: {e}");
            return ExitCode::from(1);
        }
    };
    let result = runtime.block_on(async move {
        let client =
            kudo_operator::cluster::client(args.kubeconfig.as_deref(), args.context.as_deref())
                .await?;
        let identity = args.identity.clone().unwrap_or_else(|| {
            std::env::var("HOSTNAME")
                .unwrap_or_else(|_| format!("kudo-manager-{}", std::process::id()))
        });
        let settings = Settings {
            progress: std::time::Duration::from_secs(args.progress_interval.max(1)),
            ..Settings::default()
        };
        let opts = Options {
            metrics_addr: args.metrics_addr,
            lease: args.leader_elect.then(|| Lease {
                name: args.lease_name.clone(),
                namespace: args.lease_namespace.clone(),
                identity,
            }),
            settings,
        };
        // SIGTERM (Kubernetes stopping the pod) or Ctrl-C: finish the reconciles under way.
        let shutdown = async {
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(mut term) => {
                    tokio::select! {
                        _ = term.recv() => {}
                        _ = tokio::signal::ctrl_c() => {}
                    }
                }
                Err(_) => {
                    let _ = tokio::signal::ctrl_c().await;
                }
            }
        };
        manager::serve(client, opts, shutdown)
            .await
            .map_err(|e| e.to_string())
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
    }
}
