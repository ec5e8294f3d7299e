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

/// Logs to stderr in `format`, at the level `RUST_LOG` says (default `info`). Text has ANSI
/// colours only when stderr is a terminal (a log file or a Pod's log gets plain text).
pub fn init_logging(format: LogFormat) {
    use std::io::IsTerminal as _;
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
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
