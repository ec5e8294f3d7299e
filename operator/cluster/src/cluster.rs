//! The connection to a cluster, as every kudo binary makes it.

use std::path::{Path, PathBuf};

use kube::config::{InferConfigError, KubeconfigError};

/// Why no client could be made, with what was tried.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// Nothing names a cluster.
    #[error("{}", NO_CLUSTER)]
    NoCluster,
    /// The kubeconfig named (by `how`: `--kubeconfig` or `$KUBECONFIG`) cannot be read.
    #[error("the kubeconfig {} ({how}) {problem}", path.display())]
    Unreadable {
        /// The file.
        path: PathBuf,
        /// What named it.
        how: &'static str,
        /// `does not exist` or `is not a file`.
        problem: &'static str,
    },
    /// The kubeconfig named exists but the OS refuses to read it.
    #[error("cannot read the kubeconfig {} ({how}): {kind}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What named it.
        how: &'static str,
        /// The OS error's kind.
        kind: std::io::ErrorKind,
    },
    /// The kubeconfig is not one.
    #[error("cannot read the kubeconfig {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// What kube said.
        source: KubeconfigError,
    },
    /// The kubeconfig names no usable cluster (or not the `--context`).
    #[error("unusable kubeconfig {}: {source}", path.display())]
    Unusable {
        /// The file.
        path: PathBuf,
        /// What kube said.
        source: KubeconfigError,
    },
    /// `$KUBECONFIG` or `~/.kube/config` has no usable `--context`.
    #[error("no usable kubeconfig: {0}")]
    Kubeconfig(KubeconfigError),
    /// Neither the environment nor the in-cluster configuration is usable.
    #[error("no usable cluster configuration: {0}")]
    Infer(InferConfigError),
    /// The configuration does not make a client (a bad TLS set-up, ...).
    #[error("cannot create the cluster client: {0}")]
    Client(kube::Error),
}

/// A client from `kubeconfig` (and `context`), or else the inferred configuration (in-cluster,
/// then `$KUBECONFIG` or `~/.kube/config`). The error says what was tried.
pub async fn client(
    kubeconfig: Option<&Path>,
    context: Option<&str>,
) -> Result<kube::Client, ConnectError> {
    let options = kube::config::KubeConfigOptions {
        context: context.map(String::from),
        ..Default::default()
    };
    let config = match kubeconfig {
        Some(path) => {
            unreadable(path, "--kubeconfig")?;
            let kc =
                kube::config::Kubeconfig::read_from(path).map_err(|source| ConnectError::Read {
                    path: path.to_path_buf(),
                    source,
                })?;
            kube::Config::from_custom_kubeconfig(kc, &options)
                .await
                .map_err(|source| ConnectError::Unusable {
                    path: path.to_path_buf(),
                    source,
                })?
        }
        None => {
            let from_env = std::env::var_os("KUBECONFIG").filter(|v| !v.is_empty());
            let in_cluster = std::env::var_os("KUBERNETES_SERVICE_HOST").is_some();
            match &from_env {
                // the first file of the list is the one that must exist
                Some(v) => {
                    if let Some(first) = std::env::split_paths(v).next() {
                        unreadable(&first, "$KUBECONFIG")?;
                    }
                }
                None if !in_cluster => {
                    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
                    let default = home.map(|h| h.join(".kube").join("config"));
                    if default.as_ref().is_none_or(|d| !d.exists()) {
                        return Err(ConnectError::NoCluster);
                    }
                }
                None => {}
            }
            if context.is_some() {
                kube::Config::from_kubeconfig(&options)
                    .await
                    .map_err(ConnectError::Kubeconfig)?
            } else {
                kube::Config::infer().await.map_err(ConnectError::Infer)?
            }
        }
    };
    // ring, named: with both of rustls's providers compiled in (the CLI's sigstore brings
    // aws-lc-rs into a workspace build), rustls picks none by itself. One already installed
    // is kept.
    let _ = rustls::crypto::ring::default_provider().install_default();
    kube::Client::try_from(config).map_err(ConnectError::Client)
}

/// What is said when nothing names a cluster.
pub const NO_CLUSTER: &str = "no cluster to talk to: give --kubeconfig FILE, or set $KUBECONFIG, \
     or write ~/.kube/config (none of them is there, and this is not a Pod in a cluster)";

/// `Err` with a short message when the kubeconfig `path` (given by `how`) cannot be read.
fn unreadable(path: &Path, how: &'static str) -> Result<(), ConnectError> {
    let problem = match std::fs::metadata(path) {
        Ok(m) if m.is_file() => return Ok(()),
        Ok(_) => "is not a file",
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => "does not exist",
        Err(e) => {
            return Err(ConnectError::Io {
                path: path.to_path_buf(),
                how,
                kind: e.kind(),
            });
        }
    };
    Err(ConnectError::Unreadable {
        path: path.to_path_buf(),
        how,
        problem,
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_kubeconfig_that_cannot_be_read_says_which_and_how_it_was_given() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("nope");
        assert_eq!(
            super::unreadable(&missing, "--kubeconfig")
                .unwrap_err()
                .to_string(),
            format!(
                "the kubeconfig {} (--kubeconfig) does not exist",
                missing.display()
            )
        );
        assert!(
            super::unreadable(dir.path(), "$KUBECONFIG")
                .unwrap_err()
                .to_string()
                .ends_with("($KUBECONFIG) is not a file")
        );
        let file = dir.path().join("config");
        std::fs::write(&file, "apiVersion: v1\n").unwrap();
        assert!(super::unreadable(&file, "--kubeconfig").is_ok());
    }
}
