//! What kudo's two daemons, `kudo-manager` and `kudo-webhook`, share as processes: the log
//! format flag, the logging set-up, the runtime, and the signal that stops them.

use std::process::ExitCode;

/// `--log-format`: human-readable lines, or one JSON object per line (for log collectors).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines.
    #[default]
    Text,
    /// One JSON object per line.
    Json,
}

/// What is logged when `RUST_LOG` is not set: `info`, but not kube-client's line for every
/// failed request (`kube_client::client::builder`, at ERROR): the daemons report their
/// failures themselves, bounded by their log rule, while those lines are one per request.
/// During a 19 s API server restart under 10,000 Instances they were 12,287 lines of the
/// manager's log (BENCHMARKS.md, issue 49).
pub const DEFAULT_LOG_FILTER: &str = "info,kube_client::client::builder=off";

/// Logs to stderr in `format`, at the level `RUST_LOG` says (default [`DEFAULT_LOG_FILTER`]).
/// Text has ANSI colours only when stderr is a terminal (a log file or a Pod's log gets plain
/// text).
pub fn init_logging(format: LogFormat) {
    use std::io::IsTerminal as _;
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(DEFAULT_LOG_FILTER));
    let fmt = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(filter);
    match format {
        LogFormat::Json => fmt.json().init(),
        LogFormat::Text => fmt.with_ansi(std::io::stderr().is_terminal()).init(),
    }
}

/// Resolves on SIGTERM (Kubernetes stopping the Pod) or Ctrl-C; on Ctrl-C alone where SIGTERM
/// cannot be watched.
pub async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = term.recv() => {}
                _ = tokio::signal::ctrl_c() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}

/// Runs a daemon's body on a multi-threaded runtime: exit code 0 when it returns `Ok`, else the
/// error logged and printed on stderr, and 1.
pub fn run<E: std::fmt::Display>(body: impl Future<Output = Result<(), E>>) -> ExitCode {
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: cannot start the runtime: {e}");
            return ExitCode::from(1);
        }
    };
    match runtime.block_on(body) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!(error = %e, "stopped");
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_log_filter_reads_and_leaves_out_kube_clients_request_lines() {
        let filter = tracing_subscriber::EnvFilter::try_new(DEFAULT_LOG_FILTER)
            .expect("the default filter reads");
        let text = filter.to_string();
        assert!(text.contains("kube_client::client::builder=off"), "{text}");
        assert!(text.contains("info"), "{text}");
    }
}
