//! Self-managed certificates: so that cert-manager is optional.
//!
//! The webhook keeps a CA and a serving certificate (for `kudo-webhook.NAMESPACE.svc`) in the
//! Secret `kudo-webhook-tls` (`ca.crt`, `tls.crt`, `tls.key`, and the expiry in the annotation
//! [`CERT_NOT_AFTER`]); every replica uses the same Secret. [`ensure`] creates it when it is missing,
//! unreadable, or expires within [`Options::renew_before`], and otherwise takes it as it is (two
//! replicas racing to create or renew it: the loser reads the winner's). [`inject`] writes the CA bundle
//! into the CRDs' conversion webhooks and the admission webhook configurations, so the API
//! server trusts the certificate. [`run`] does both now and then again every
//! [`Options::check_every`], writing the files the server reloads.

use std::path::PathBuf;
use std::time::Duration;

use base64::Engine;
use kube::api::{Api, ApiResource, DynamicObject, Patch, PatchParams, PostParams};
use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair, KeyUsagePurpose};
use serde_json::{Value, json};

use kudo_crd::labels::{CERT_NOT_AFTER, CONVERTED_CRDS, MUTATING, VALIDATING, WEBHOOK_SECRET};

/// A CA and the serving certificate it signed, as PEM.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bundle {
    /// The CA certificate (the `caBundle`).
    pub ca_pem: String,
    /// The serving certificate.
    pub cert_pem: String,
    /// Its private key.
    pub key_pem: String,
    /// When it expires (Unix seconds).
    pub not_after: i64,
}

/// How certificates are kept.
#[derive(Debug, Clone)]
pub struct Options {
    /// Namespace of the Secret and the Service.
    pub namespace: String,
    /// Name of the Service the API server calls.
    pub service: String,
    /// Validity of a new certificate (`--cert-validity`; `kudo-webhook` takes the three from a
    /// `kudo_crd::webhook_cert::Lifetime`, which refuses a renewal that comes too late).
    pub validity: Duration,
    /// Renew when the certificate expires within this (`--cert-renew-before`).
    pub renew_before: Duration,
    /// How often to check (a third of `renew_before`, at most an hour).
    pub check_every: Duration,
    /// Where the server's files are written (`tls.crt`, `tls.key`).
    pub dir: PathBuf,
}

/// Why certificates could not be kept.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Generating failed.
    #[error("cannot generate a certificate: {0}")]
    Generate(#[from] rcgen::Error),
    /// The API server refused or failed.
    #[error("{what}: {source}")]
    Api {
        /// What was being done.
        what: String,
        /// The client's error.
        source: kube::Error,
    },
    /// Writing the files failed.
    #[error("cannot write {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

fn now_unix() -> i64 {
    time::OffsetDateTime::now_utc().unix_timestamp()
}

/// A new CA and a serving certificate for `dns_names`, valid for `validity`.
pub fn generate(dns_names: &[String], validity: Duration) -> Result<Bundle, rcgen::Error> {
    let now = time::OffsetDateTime::now_utc();
    let not_after = now + validity;
    let mut ca = CertificateParams::new(Vec::<String>::new())?;
    ca.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
    ca.distinguished_name
        .push(DnType::CommonName, "kudo-webhook CA");
    ca.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    ca.not_before = now - Duration::from_secs(300);
    ca.not_after = not_after;
    let ca_key = KeyPair::generate()?;
    let ca_cert = ca.self_signed(&ca_key)?;
    let mut leaf = CertificateParams::new(dns_names.to_vec())?;
    leaf.distinguished_name.push(
        DnType::CommonName,
        dns_names.first().cloned().unwrap_or_default(),
    );
    leaf.not_before = now - Duration::from_secs(300);
    leaf.not_after = not_after;
    let key = KeyPair::generate()?;
    let cert = leaf.signed_by(&key, &ca_cert, &ca_key)?;
    Ok(Bundle {
        ca_pem: ca_cert.pem(),
        cert_pem: cert.pem(),
        key_pem: key.serialize_pem(),
        not_after: not_after.unix_timestamp(),
    })
}

/// The PEM blocks of `pem`, each with its `BEGIN`/`END` lines and a final newline.
pub fn pem_blocks(pem: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut block = String::new();
    for line in pem.lines() {
        let line = line.trim_end();
        if line.starts_with("-----BEGIN ") {
            block.clear();
        }
        block.push_str(line);
        block.push('\n');
        if line.starts_with("-----END ") {
            blocks.push(std::mem::take(&mut block));
        }
    }
    blocks
}

/// The DNS names the API server uses for the Service.
pub fn dns_names(service: &str, namespace: &str) -> Vec<String> {
    vec![
        format!("{service}.{namespace}.svc"),
        format!("{service}.{namespace}.svc.cluster.local"),
        format!("{service}.{namespace}"),
        service.to_string(),
    ]
}

/// The Secret holding `b`.
pub fn to_secret(b: &Bundle, namespace: &str) -> Value {
    let enc = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    json!({"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/tls",
        "metadata": {"name": WEBHOOK_SECRET, "namespace": namespace,
            "labels": {"app.kubernetes.io/part-of": "kudo"},
            "annotations": {CERT_NOT_AFTER: b.not_after.to_string()}},
        "data": {"ca.crt": enc(&b.ca_pem), "tls.crt": enc(&b.cert_pem), "tls.key": enc(&b.key_pem)}})
}

/// The bundle in a Secret, when it has every part.
pub fn from_secret(secret: &Value) -> Option<Bundle> {
    let field = |k: &str| {
        let b64 = secret.get("data")?.get(k)?.as_str()?;
        let bytes = base64::engine::general_purpose::STANDARD.decode(b64).ok()?;
        String::from_utf8(bytes).ok()
    };
    Some(Bundle {
        ca_pem: field("ca.crt")?,
        cert_pem: field("tls.crt")?,
        key_pem: field("tls.key")?,
        not_after: secret
            .pointer("/metadata/annotations")?
            .get(CERT_NOT_AFTER)?
            .as_str()?
            .parse()
            .ok()?,
    })
}

fn api_error(what: impl Into<String>) -> impl FnOnce(kube::Error) -> Error {
    let what = what.into();
    move |source| Error::Api { what, source }
}

/// The bundle to use: the Secret's when it is good for longer than `renew_before`, else a new
/// one, stored (created, or replaced with the read version as precondition).
pub async fn ensure(client: &kube::Client, o: &Options) -> Result<Bundle, Error> {
    let secrets: Api<DynamicObject> = Api::namespaced_with(
        client.clone(),
        &o.namespace,
        &ApiResource::from_gvk(&kube::core::GroupVersionKind::gvk("", "v1", "Secret")),
    );
    let existing = secrets
        .get_opt(WEBHOOK_SECRET)
        .await
        .map_err(api_error(format!(
            "cannot read the Secret {}/{WEBHOOK_SECRET}",
            o.namespace
        )))?;
    let current = existing
        .as_ref()
        .and_then(|s| serde_json::to_value(s).ok())
        .and_then(|v| from_secret(&v).map(|b| (b, v)));
    if let Some((b, _)) = &current
        && b.not_after - now_unix() > o.renew_before.as_secs() as i64
    {
        return Ok(b.clone());
    }
    let mut fresh = generate(&dns_names(&o.service, &o.namespace), o.validity)?;
    // Rotation: the API server must keep trusting the replicas that still serve the previous
    // certificate until their next check, so the previous CA stays in the bundle (after the new
    // one) for as long as it is valid. Only one previous CA is kept.
    if let Some((previous, _)) = &current
        && previous.not_after > now_unix()
        && let Some(previous_ca) = pem_blocks(&previous.ca_pem).first()
    {
        fresh.ca_pem = format!("{}{previous_ca}", fresh.ca_pem);
    }
    let mut secret = to_secret(&fresh, &o.namespace);
    let obj = |v: &Value| serde_json::from_value::<DynamicObject>(v.clone()).expect("a Secret");
    match existing {
        None => match secrets.create(&PostParams::default(), &obj(&secret)).await {
            Ok(_) => Ok(fresh),
            // Another replica created it first: use that one.
            Err(kube::Error::Api(s)) if s.code == 409 => {
                let s = secrets
                    .get(WEBHOOK_SECRET)
                    .await
                    .map_err(api_error("cannot read the Secret another replica created"))?;
                Ok(serde_json::to_value(&s)
                    .ok()
                    .and_then(|v| from_secret(&v))
                    .unwrap_or(fresh))
            }
            Err(e) => Err(api_error("cannot create the certificate Secret")(e)),
        },
        Some(old) => {
            secret["metadata"]["resourceVersion"] = json!(old.metadata.resource_version);
            match secrets
                .replace(WEBHOOK_SECRET, &PostParams::default(), &obj(&secret))
                .await
            {
                Ok(_) => Ok(fresh),
                // Another replica renewed it first (replicas started together check together):
                // use its certificate rather than fail this check and serve the old one on.
                Err(kube::Error::Api(conflict)) if conflict.code == 409 => {
                    let winner = secrets
                        .get(WEBHOOK_SECRET)
                        .await
                        .map_err(api_error("cannot read the Secret another replica renewed"))?;
                    serde_json::to_value(&winner)
                        .ok()
                        .and_then(|v| from_secret(&v))
                        .filter(|b| b.not_after - now_unix() > o.renew_before.as_secs() as i64)
                        .ok_or_else(|| {
                            api_error("cannot renew the certificate Secret")(kube::Error::Api(
                                conflict,
                            ))
                        })
                }
                Err(e) => Err(api_error("cannot renew the certificate Secret")(e)),
            }
        }
    }
}

/// Writes the CA bundle into the CRDs' conversion webhooks and the webhook configurations.
pub async fn inject(client: &kube::Client, ca_pem: &str) -> Result<(), Error> {
    let ca = base64::engine::general_purpose::STANDARD.encode(ca_pem);
    let crds: Api<DynamicObject> = Api::all_with(
        client.clone(),
        &ApiResource::from_gvk_with_plural(
            &kube::core::GroupVersionKind::gvk(
                "apiextensions.k8s.io",
                "v1",
                "CustomResourceDefinition",
            ),
            "customresourcedefinitions",
        ),
    );
    let merge = json!({"spec": {"conversion": {"webhook": {"clientConfig": {"caBundle": ca}}}}});
    for name in CONVERTED_CRDS {
        crds.patch(name, &PatchParams::default(), &Patch::Merge(&merge))
            .await
            .map_err(api_error(format!("cannot set the caBundle of CRD {name}")))?;
    }
    for (kind, plural, name) in [
        (
            "MutatingWebhookConfiguration",
            "mutatingwebhookconfigurations",
            MUTATING,
        ),
        (
            "ValidatingWebhookConfiguration",
            "validatingwebhookconfigurations",
            VALIDATING,
        ),
    ] {
        let api: Api<DynamicObject> = Api::all_with(
            client.clone(),
            &ApiResource::from_gvk_with_plural(
                &kube::core::GroupVersionKind::gvk("admissionregistration.k8s.io", "v1", kind),
                plural,
            ),
        );
        let current = api
            .get(name)
            .await
            .map_err(api_error(format!("cannot read {kind} {name}")))?;
        let count = current
            .data
            .get("webhooks")
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        let patch = json_patch::Patch(
            (0..count)
                .map(|i| {
                    let i = i.to_string();
                    kudo_crd::patch::add(
                        kudo_crd::patch::path(["webhooks", &i, "clientConfig", "caBundle"]),
                        json!(ca),
                    )
                })
                .collect(),
        );
        api.patch(name, &PatchParams::default(), &Patch::<()>::Json(patch))
            .await
            .map_err(api_error(format!(
                "cannot set the caBundle of {kind} {name}"
            )))?;
    }
    Ok(())
}

/// Keeps the certificate fresh: [`ensure`], [`inject`], write the files; then again every
/// `check_every`. Returns the first bundle's files once written, then keeps going.
pub async fn refresh(client: &kube::Client, o: &Options) -> Result<Bundle, Error> {
    let b = ensure(client, o).await?;
    // The bundle first: by the time this replica serves the new certificate, the API server
    // already trusts its CA (and still trusts the previous one, see `ensure`).
    inject(client, &b.ca_pem).await?;
    std::fs::create_dir_all(&o.dir).map_err(|source| Error::Io {
        path: o.dir.clone(),
        source,
    })?;
    for (file, text) in [("tls.key", &b.key_pem), ("tls.crt", &b.cert_pem)] {
        let path = o.dir.join(file);
        // Unchanged: not written again, so the server does not reload it at every check.
        if std::fs::read_to_string(&path).is_ok_and(|on_disk| on_disk == *text) {
            continue;
        }
        let tmp = o.dir.join(format!(".{file}.new"));
        std::fs::write(&tmp, text)
            .and_then(|()| std::fs::rename(&tmp, &path))
            .map_err(|source| Error::Io { path, source })?;
    }
    Ok(b)
}

/// [`refresh`] every `check_every`, forever; errors are logged and retried.
pub async fn run(client: kube::Client, o: Options) {
    loop {
        tokio::time::sleep(o.check_every).await;
        if let Err(e) = refresh(&client, &o).await {
            tracing::warn!(error = %e, "keeping the webhook certificate");
        }
    }
}
