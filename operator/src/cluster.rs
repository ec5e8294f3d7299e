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
            let kc = kube::config::Kubeconfig::read_from(path)
                .map_err(|e| format!("cannot read the kubeconfig {}: {e}", path.display()))?;
            kube::Config::from_custom_kubeconfig(kc, &options)
                .await
                .map_err(|e| format!("unusable kubeconfig {}: {e}", path.display()))?
        }
        None if context.is_some() => kube::Config::from_kubeconfig(&options)
            .await
            .map_err(|e| format!("no usable kubeconfig: {e}"))?,
        None => kube::Config::infer()
            .await
            .map_err(|e| format!("no cluster configuration found (give --kubeconfig): {e}"))?,
    };
    kube::Client::try_from(config).map_err(|e| format!("cannot create the cluster client: {e}"))
}
