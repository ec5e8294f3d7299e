//! `kudo init`: the objects `kudo_client::init` makes, applied to the cluster (and waited
//! for), or printed with --dry-run.

use super::Outcome;
use crate::args::{DataFormat, InitArgs};
use crate::error::{Error, Refusal};

/// `kudo init`: the installation, applied (or printed with --dry-run).
pub fn run(a: InitArgs) -> Result<Outcome, Error> {
    use kudo_client::init::{self, Options, WebhookTarget};
    use kudo_crd::webhook_cert::Lifetime;
    let mut o = Options {
        namespace: a.namespace.clone(),
        manager_replicas: a.manager_replicas,
        ..Options::default()
    };
    if let Some(i) = a.manager_image {
        o.manager_image = i;
    }
    if let Some(i) = a.webhook_image {
        o.webhook_image = i;
    }
    // Refused here, not by a webhook Deployment that would never start.
    o.webhook_cert = Lifetime::from_flags(a.webhook_cert_validity, a.webhook_cert_renew_before)
        .transpose()
        .map_err(|e| {
            Error::Usage(format!(
                "--webhook-cert-validity, --webhook-cert-renew-before: {e}"
            ))
        })?;
    let ca = match &a.ca_bundle {
        Some(path) => Some(std::fs::read(path).map_err(Error::io(path))?),
        None => None,
    };
    if let (Some(ca), Some(path)) = (&ca, &a.ca_bundle)
        && !String::from_utf8_lossy(ca).contains("-----BEGIN CERTIFICATE-----")
    {
        return Err(Error::refused(path.display(), Refusal::NotPem));
    }
    o.webhook = match (a.webhook_url, ca) {
        (Some(url), Some(ca_bundle)) => {
            if !url.starts_with("https://") {
                return Err(Error::refused(url, Refusal::NotHttps));
            }
            WebhookTarget::Url { url, ca_bundle }
        }
        (_, ca_bundle) => WebhookTarget::Service { ca_bundle },
    };
    let objects = init::manifests(&o);
    if !a.dry_run {
        let waiting = a.wait || a.wait_time.is_some();
        let lines = super::cluster::with_client("init", &a.connect, async |client| {
            let mut lines = init::apply(&client, &objects).await?;
            if waiting {
                for l in lines.drain(..) {
                    eprintln!("{l}");
                }
                let timeout = a
                    .wait_time
                    .unwrap_or(kudo_client::commands::wait::DEFAULT_TIMEOUT);
                lines = init::wait_ready(&client, &o, timeout).await?;
            }
            Ok(lines)
        })?;
        for l in lines {
            eprintln!("{l}");
        }
        let ready = if waiting { " and ready" } else { "" };
        super::print(&format!(
            "kudo is installed{ready} in namespace {}\n",
            o.namespace
        ))?;
        if matches!(o.webhook, WebhookTarget::Url { .. }) {
            eprintln!(
                "the manager and the webhook run outside the cluster (--webhook-url): run kudo-webhook at that URL and kudo-manager, as the ServiceAccounts {ns}/{} and {ns}/{}",
                kudo_crd::labels::WEBHOOK,
                kudo_crd::labels::MANAGER,
                ns = o.namespace
            );
        }
        return Ok(Outcome::Done);
    }
    let text = match a.output {
        DataFormat::Json => format!(
            "{}\n",
            serde_json::to_string_pretty(&serde_json::json!({
                "apiVersion": "v1", "kind": "List", "items": objects
            }))
            .unwrap_or_default()
        ),
        DataFormat::Yaml => objects
            .iter()
            .map(|v| format!("---\n{}", super::to_yaml(v)))
            .collect(),
    };
    super::print(&text)?;
    Ok(Outcome::Done)
}
