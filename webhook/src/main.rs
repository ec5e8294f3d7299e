//! `kudo-webhook`: serves kudo's conversion and admission webhooks over HTTPS.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::{CommandFactory as _, Parser};
use kudo_cluster::daemon::LogFormat;
use kudo_crd::labels;
use kudo_crd::webhook_cert::{Lifetime, LifetimeError};
use kudo_webhook::Cache;
use kudo_webhook::{Config, NoCluster, Offline, Shared};

/// kudo's conversion (/convert) and admission (/admit/instance/{mutate,validate}) webhooks.
///
/// Also serves /healthz, /readyz (ready when the OperatorVersion cache has synced; the body says
/// why not) and /metrics (Prometheus). The certificate and key are read again when they change
/// on disk. OperatorVersions come from a watch on the cluster (in-cluster config, or
/// --kubeconfig, or $KUBECONFIG / ~/.kube/config). Without a reachable cluster, conversion still
/// works (Instance values it cannot type stay as they are) and admission denies with the reason.
#[derive(Debug, Parser)]
#[command(name = "kudo-webhook", version)]
struct Args {
    /// Address to listen on.
    #[arg(long, default_value = "0.0.0.0:8443")]
    listen: SocketAddr,
    /// PEM certificate chain of the serving certificate (a mounted Secret, cert-manager...).
    #[arg(
        long,
        value_name = "FILE",
        required_unless_present = "self_managed_certs",
        requires = "tls_key"
    )]
    tls_cert: Option<PathBuf>,
    /// PEM private key of the serving certificate.
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// Keep a CA and serving certificate in the Secret kudo-webhook-tls, inject the CA bundle
    /// into the CRDs and webhook configurations, and renew before expiry (needs the cluster).
    #[arg(long, conflicts_with_all = ["tls_cert", "no_cluster"])]
    self_managed_certs: bool,
    /// Namespace of the Secret and the Service (self-managed certificates).
    #[arg(long, env = "POD_NAMESPACE", default_value = labels::NAMESPACE)]
    namespace: String,
    /// Name of the Service the API server calls (self-managed certificates).
    #[arg(long, default_value = labels::WEBHOOK)]
    service_name: String,
    /// Directory the self-managed certificate files are written to.
    #[arg(long, value_name = "DIR", default_value = "/certs")]
    cert_dir: PathBuf,
    /// Validity of a new self-managed certificate: `365d`, `90d`, `3m`.
    #[arg(long, value_name = "DURATION", value_parser = humantime::parse_duration, default_value = "365d")]
    cert_validity: Duration,
    /// Renew the self-managed certificate when it expires within this (shorter than
    /// --cert-validity, at least 1m). Each replica checks the Secret every third of it, at
    /// most hourly.
    #[arg(long, value_name = "DURATION", value_parser = humantime::parse_duration, default_value = "30d")]
    cert_renew_before: Duration,
    /// Largest request body, in MiB (larger: 413).
    #[arg(long, default_value_t = 32)]
    body_limit_mib: usize,
    /// Longest a review may take from its head to its answer, in seconds (then 408, and its
    /// work is cancelled). kube-apiserver waits 30 s for conversion, 10 s for admission.
    #[arg(long, default_value_t = 25)]
    request_timeout: u64,
    /// Longest the TLS handshake and each HTTP/1 request head may take to arrive, in seconds
    /// (then the connection is closed; an idle HTTP/1 keep-alive connection is closed after
    /// the same time).
    #[arg(long, default_value_t = 5)]
    header_read_timeout: u64,
    /// Longest a request body may take to arrive once its head is in, in seconds (then 408):
    /// well under kube-apiserver's 10 s, so a slow sender is dropped before it costs others.
    #[arg(long, default_value_t = 5)]
    read_timeout: u64,
    /// Reviews handled at once (once their body is in).
    #[arg(long, default_value_t = 64)]
    max_concurrency: usize,
    /// Request bodies larger than --small-body-kib handled at once, in MiB in all, counted as
    /// bytes arrive; a body that does not fit waits (unread). The peak memory is about 140 MB
    /// at the default with LIST-sized conversions on 2 cores (BENCHMARKS.md): raise it with
    /// more cores and memory.
    #[arg(long, default_value_t = 8)]
    memory_budget_mib: usize,
    /// A body of at most this many KiB (by Content-Length) is small: every ordinary admission
    /// review and single-object conversion. Small bodies have their own budget, so they never
    /// wait behind a large one.
    #[arg(long, default_value_t = 64)]
    small_body_kib: usize,
    /// Small request bodies handled at once, in KiB in all.
    #[arg(long, default_value_t = 1024)]
    small_budget_kib: usize,
    /// Seconds between checks of the certificate files.
    #[arg(long, default_value_t = 10)]
    reload_interval: u64,
    /// Kubeconfig file (default: the in-cluster configuration, then $KUBECONFIG or
    /// ~/.kube/config).
    #[arg(long, value_name = "FILE", conflicts_with = "no_cluster")]
    kubeconfig: Option<PathBuf>,
    /// Do not connect to a cluster (conversion without typing; admission denied).
    #[arg(long)]
    no_cluster: bool,
    /// Log format.
    #[arg(long, value_enum, default_value = "text")]
    log_format: LogFormat,
    /// Write every review received, with the answer, to DIR/<namespace>/<class>.json (the
    /// wire fixtures of kudo's tests come from these; docs/e2e.md). Reviews hold the objects as
    /// sent, secret values included: for test clusters only.
    #[arg(long, value_name = "DIR")]
    capture_dir: Option<PathBuf>,
}

/// The certificate lifetime of `--cert-validity` and `--cert-renew-before`.
fn cert_lifetime(args: &Args) -> Result<Lifetime, LifetimeError> {
    Lifetime::new(args.cert_validity, args.cert_renew_before)
}

fn main() -> ExitCode {
    let args = Args::parse();
    let lifetime = cert_lifetime(&args).unwrap_or_else(|e| {
        Args::command()
            .error(clap::error::ErrorKind::ArgumentConflict, e)
            .exit()
    });
    kudo_cluster::daemon::init_logging(args.log_format);
    let cert_opts = kudo_webhook::certs::Options {
        namespace: args.namespace.clone(),
        service: args.service_name.clone(),
        validity: lifetime.validity(),
        renew_before: lifetime.renew_before(),
        check_every: lifetime.check_every(),
        dir: args.cert_dir.clone(),
    };
    let (cert, key) = match (&args.tls_cert, &args.tls_key) {
        (Some(c), Some(k)) => (c.clone(), k.clone()),
        _ => (cert_opts.dir.join("tls.crt"), cert_opts.dir.join("tls.key")),
    };
    let mut config = Config::new(args.listen, cert, key);
    config.body_limit = args.body_limit_mib * 1024 * 1024;
    config.request_timeout = Duration::from_secs(args.request_timeout.max(1));
    config.header_read_timeout = Duration::from_secs(args.header_read_timeout.max(1));
    config.read_timeout = Duration::from_secs(args.read_timeout.max(1));
    config.max_concurrency = args.max_concurrency.max(1);
    config.memory_budget = args.memory_budget_mib.max(1) * 1024 * 1024;
    config.small_body = args.small_body_kib * 1024;
    config.small_budget = args.small_budget_kib.max(1) * 1024;
    config.reload_interval = Duration::from_secs(args.reload_interval.max(1));
    kudo_cluster::daemon::run(async move {
        let cluster = if args.no_cluster {
            Err("--no-cluster".to_string())
        } else {
            kudo_cluster::client(args.kubeconfig.as_deref(), None)
                .await
                .map_err(|e| e.to_string())
        };
        if args.self_managed_certs {
            let Ok(client) = &cluster else {
                return Err(format!(
                    "self-managed certificates need the cluster: {}",
                    cluster.as_ref().err().cloned().unwrap_or_default()
                ));
            };
            kudo_webhook::certs::refresh(client, &cert_opts)
                .await
                .map_err(|e| e.to_string())?;
            tokio::spawn(kudo_webhook::certs::run(client.clone(), cert_opts));
        }
        let shared = match (args.no_cluster, cluster) {
            (true, _) => Shared {
                types: Arc::new(NoCluster),
                store: Arc::new(NoCluster),
                metrics: Default::default(),
                capture: args.capture_dir.clone(),
                cluster: None,
            },
            (false, Ok(client)) => {
                let (cache, run) = Cache::start(client.clone());
                tokio::spawn(run);
                Shared {
                    types: cache.clone(),
                    store: cache,
                    metrics: Default::default(),
                    capture: args.capture_dir.clone(),
                    cluster: Some(client),
                }
            }
            (false, Err(why)) => {
                tracing::warn!(reason = %why, "no cluster connection: admission will deny");
                Shared {
                    types: Arc::new(Offline(why.clone())),
                    store: Arc::new(Offline(why)),
                    metrics: Default::default(),
                    capture: args.capture_dir.clone(),
                    cluster: None,
                }
            }
        };
        kudo_webhook::serve(
            config,
            Arc::new(shared),
            kudo_cluster::daemon::shutdown_signal(),
            |addr| {
                tracing::info!(%addr, "serving");
            },
        )
        .await
        .map_err(|e| e.to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lifetime(flags: &[&str]) -> Result<Lifetime, LifetimeError> {
        let argv = ["kudo-webhook", "--self-managed-certs"].iter().chain(flags);
        cert_lifetime(&Args::try_parse_from(argv).expect("the flags parse"))
    }

    #[test]
    fn the_certificate_lifetime_comes_from_the_flags_and_is_checked() {
        let secs = Duration::from_secs;
        assert_eq!(lifetime(&[]), Ok(Lifetime::default()));
        let short = lifetime(&["--cert-validity", "3m", "--cert-renew-before", "2m"]).unwrap();
        assert_eq!(
            (short.validity(), short.renew_before(), short.check_every()),
            (secs(180), secs(120), secs(40))
        );
        assert_eq!(
            lifetime(&["--cert-validity", "2m", "--cert-renew-before", "2m"]),
            Err(LifetimeError::RenewBeforeNotShorter {
                validity: secs(120),
                renew_before: secs(120),
            })
        );
        // Only the renew-before: a year's validity.
        assert_eq!(
            lifetime(&["--cert-renew-before", "400d"]),
            Err(LifetimeError::RenewBeforeNotShorter {
                validity: secs(365 * 24 * 3600),
                renew_before: secs(400 * 24 * 3600),
            })
        );
    }

    #[test]
    fn a_duration_that_is_not_one_is_refused_by_the_parser() {
        let argv = [
            "kudo-webhook",
            "--self-managed-certs",
            "--cert-validity",
            "a year",
        ];
        let e = Args::try_parse_from(argv).unwrap_err();
        assert_eq!(e.kind(), clap::error::ErrorKind::ValueValidation);
    }
}
