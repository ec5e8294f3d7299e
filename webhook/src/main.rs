//! `kudo-webhook`: serves kudo's conversion and admission webhooks over HTTPS.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::{Parser, ValueEnum};
use kudo_webhook::server::{self, Config, NoCluster, Shared};

/// kudo's conversion (/convert) and admission (/admit/instance/{mutate,validate}) webhooks.
///
/// Also serves /healthz, /readyz (ready when Instances can be checked; the body says why not)
/// and /metrics (Prometheus). The certificate and key are read again when they change on disk.
/// Without a cluster connection (the OperatorVersion cache is not built yet) conversion works,
/// leaving Instance values it cannot type as they are, and admission denies with the reason.
#[derive(Debug, Parser)]
#[command(name = "kudo-webhook", version)]
struct Args {
    /// Address to listen on.
    #[arg(long, default_value = "0.0.0.0:8443")]
    listen: SocketAddr,
    /// PEM certificate chain of the serving certificate.
    #[arg(long, value_name = "FILE")]
    tls_cert: PathBuf,
    /// PEM private key of the serving certificate.
    #[arg(long, value_name = "FILE")]
    tls_key: PathBuf,
    /// Largest request body, in MiB.
    #[arg(long, default_value_t = 32)]
    body_limit_mib: usize,
    /// Longest a request may take, in seconds.
    #[arg(long, default_value_t = 25)]
    request_timeout: u64,
    /// Requests handled at once.
    #[arg(long, default_value_t = 64)]
    max_concurrency: usize,
    /// Seconds between checks of the certificate files.
    #[arg(long, default_value_t = 10)]
    reload_interval: u64,
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
    let mut config = Config::new(args.listen, args.tls_cert, args.tls_key);
    config.body_limit = args.body_limit_mib * 1024 * 1024;
    config.request_timeout = Duration::from_secs(args.request_timeout);
    config.max_concurrency = args.max_concurrency.max(1);
    config.reload_interval = Duration::from_secs(args.reload_interval.max(1));
    let shared = Arc::new(Shared {
        types: Arc::new(NoCluster),
        store: Arc::new(NoCluster),
        metrics: Default::default(),
    });
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: cannot start the runtime: {e}");
            return ExitCode::from(1);
        }
    };
    let result = runtime.block_on(server::serve(config, shared, shutdown_signal(), |addr| {
        tracing::info!(%addr, "serving");
    }));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!(error = %e, "stopped");
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
    }
}

async fn shutdown_signal() {
    #[cfg(unix)]
    {
        let mut term =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(s) => s,
                Err(_) => return std::future::pending().await,
            };
        tokio::select! {
            _ = term.recv() => {}
            _ = tokio::signal::ctrl_c() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
