//! TLS: the certificate and key loaded, and loaded again when they change on disk.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::SystemTime;

use axum_server::tls_rustls::RustlsConfig;

use super::{Config, Error, Shared};

/// The certificate and key of `config`, for rustls.
pub(super) async fn load(config: &Config) -> Result<RustlsConfig, Error> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    RustlsConfig::from_pem_file(&config.tls_cert, &config.tls_key)
        .await
        .map_err(|source| Error::Tls {
            cert: config.tls_cert.clone(),
            key: config.tls_key.clone(),
            source,
        })
}

fn modified(config: &Config) -> Option<(SystemTime, SystemTime)> {
    let m = |p: &PathBuf| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    Some((m(&config.tls_cert)?, m(&config.tls_key)?))
}

/// Certificate reload: every [`Config::reload_interval`], when either file changed, loads the
/// pair again into `tls`; a pair that does not load keeps the previous one.
pub(super) fn spawn_reload(tls: RustlsConfig, config: Config, shared: Arc<Shared>) {
    tokio::spawn(async move {
        let mut seen = modified(&config);
        loop {
            tokio::time::sleep(config.reload_interval).await;
            let now = modified(&config);
            if now.is_some() && now != seen {
                match tls
                    .reload_from_pem_file(&config.tls_cert, &config.tls_key)
                    .await
                {
                    Ok(()) => {
                        seen = now;
                        shared.metrics.reloads.inc();
                        tracing::info!(cert = %config.tls_cert.display(), "TLS certificate reloaded");
                    }
                    Err(e) => {
                        tracing::warn!(error = %e, "the new TLS certificate does not load; keeping the previous one")
                    }
                }
            }
        }
    });
}
