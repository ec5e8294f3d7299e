//! The no-op admission webhook: the floor that kudo's admission is measured against
//! (`BENCH_PARTS=admission python3 bench/cluster.py`, issue 49).
//!
//!     noop --listen 127.0.0.1:29444 --tls-cert tls.crt --tls-key tls.key
//!
//! The same process and server as `kudo-webhook` (its runtime, `serve_with`: TLS, limits, fair
//! admission, the blocking pool, `/metrics`) with its default limits, but every Instance
//! admission review (`/admit/instance/{mutate,validate,v1beta1}`) is answered `allowed: true`
//! with the request's uid and no patch: only the uid is read, no OperatorVersion, no policy.
//! The other routes are kudo-webhook's (with no cluster).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use clap::Parser;
use kudo_cluster::daemon;
use kudo_webhook::{Config, Mode, NoCluster, OperatorVersions, Shared, serve_with};
use serde_json::{Value, json};

/// Answers every Instance admission review with `allowed: true`.
#[derive(Parser)]
struct Args {
    /// Address to listen on.
    #[arg(long)]
    listen: SocketAddr,
    /// PEM certificate chain.
    #[arg(long)]
    tls_cert: PathBuf,
    /// PEM private key.
    #[arg(long)]
    tls_key: PathBuf,
}

/// Allowed, no patch: the request's uid is all that is read.
fn allow(body: &[u8], _: Mode, _: &dyn OperatorVersions, _: &AtomicBool) -> (u16, Value) {
    #[derive(serde::Deserialize)]
    struct Review {
        #[serde(rename = "apiVersion")]
        api_version: String,
        request: Request,
    }
    #[derive(serde::Deserialize)]
    struct Request {
        uid: String,
    }
    match serde_json::from_slice::<Review>(body) {
        Ok(r) => (
            200,
            json!({"apiVersion": r.api_version, "kind": "AdmissionReview",
                "response": {"uid": r.request.uid, "allowed": true}}),
        ),
        Err(e) => (400, json!({"error": e.to_string()})),
    }
}

fn main() -> ExitCode {
    let args = Args::parse();
    daemon::init_logging(daemon::LogFormat::Text);
    let config = Config::new(args.listen, args.tls_cert, args.tls_key);
    let shared = Arc::new(Shared {
        types: Arc::new(NoCluster),
        store: Arc::new(NoCluster),
        metrics: Default::default(),
        capture: None,
        cluster: None,
    });
    daemon::run(serve_with(
        config,
        shared,
        allow,
        daemon::shutdown_signal(),
        |addr| tracing::info!(%addr, "serving (no-op admission)"),
    ))
}
