//! The connection to a cluster, as every kudo binary makes it.

use std::path::Path;

/// A client from `kubeconfig` (and `context`), or else the inferred configuration (in-cluster,
/// then `$KUBECONFIG` or `~/.kube/config`). The error says what was tried.
pub async fn client(
    kubeconfig: Option<&Path>,
    context: Option<&str>,
) -> Result<kube::Client, String> {
    let options = kube::config::KubeConfigOptions {
        context: context.map(String::from),
        ..Default::default()
    };
    let config = match kubeconfig {
        Some(path) => {
            unreadable(path, "--kubeconfig")?;
            let kc = kube::config::Kubeconfig::read_from(path)
                .map_err(|e| format!("cannot read the kubeconfig {}: {e}", path.display()))?;
            kube::Config::from_custom_kubeconfig(kc, &options)
                .await
                .map_err(|e| format!("unusable kubeconfig {}: {e}", path.display()))?
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
                        return Err(NO_CLUSTER.into());
                    }
                }
                None => {}
            }
            if context.is_some() {
                kube::Config::from_kubeconfig(&options)
                    .await
                    .map_err(|e| format!("no usable kubeconfig: {e}"))?
            } else {
                kube::Config::infer()
                    .await
                    .map_err(|e| format!("no usable cluster configuration: {e}"))?
            }
        }
    };
    kube::Client::try_from(config).map_err(|e| format!("cannot create the cluster client: {e}"))
}

/// What is said when nothing names a cluster.
pub const NO_CLUSTER: &str = "no cluster to talk to: give --kubeconfig FILE, or set $KUBECONFIG, \
     or write ~/.kube/config (none of them is there, and this is not a Pod in a cluster)";

/// `Err` with a short message when the kubeconfig `path` (given by `how`) cannot be read.
fn unreadable(path: &Path, how: &str) -> Result<(), String> {
    match std::fs::metadata(path) {
        Ok(m) if m.is_file() => Ok(()),
        Ok(_) => Err(format!(
            "the kubeconfig {} ({how}) is not a file",
            path.display()
        )),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(format!(
            "the kubeconfig {} ({how}) does not exist",
            path.display()
        )),
        Err(e) => Err(format!(
            "cannot read the kubeconfig {} ({how}): {}",
            path.display(),
            e.kind()
        )),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_kubeconfig_that_cannot_be_read_says_which_and_how_it_was_given() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("nope");
        assert_eq!(
            super::unreadable(&missing, "--kubeconfig").unwrap_err(),
            format!(
                "the kubeconfig {} (--kubeconfig) does not exist",
                missing.display()
            )
        );
        assert!(
            super::unreadable(dir.path(), "$KUBECONFIG")
                .unwrap_err()
                .ends_with("($KUBECONFIG) is not a file")
        );
        let file = dir.path().join("config");
        std::fs::write(&file, "apiVersion: v1\n").unwrap();
        assert_eq!(super::unreadable(&file, "--kubeconfig"), Ok(()));
    }
}
