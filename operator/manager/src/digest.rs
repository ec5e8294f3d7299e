//! The key of the digests `status.applied` records of `writeOnly` values: from
//! [`DIGEST_KEY_ENV`], else kept in the Secret [`DIGEST_SECRET`] of kudo's namespace (made by
//! the first manager that starts), else random (with a warning: digests then change with every
//! process).

use k8s_openapi::api::core::v1::Secret;
use kube::Client;
use kube::api::Api;

use kudo_crd::labels;

/// The environment variable that may give the key of the digests `status.applied` records of
/// `writeOnly` values (at least 16 bytes); it wins over [`DIGEST_SECRET`].
pub const DIGEST_KEY_ENV: &str = "KUDO_DIGEST_KEY";

/// The Secret (in kudo's namespace) holding the manager's digest key, key `key`: made with 32
/// random bytes by the first manager that starts, read by every later one, so that digests
/// survive restarts and failovers. Readers of Instances cannot read it.
pub const DIGEST_SECRET: &str = labels::DIGEST_SECRET;

fn env_digest_key() -> Option<Vec<u8>> {
    std::env::var(DIGEST_KEY_ENV)
        .ok()
        .filter(|k| k.len() >= 16)
        .map(String::into_bytes)
}

/// A random key, with a warning: digests then change with every process, so every Instance with
/// secret values runs their trigger plans once after a restart.
fn random_digest_key(why: &str) -> Vec<u8> {
    tracing::warn!(
        "secret values are digested with a random key ({why}): a restart runs their trigger plans again"
    );
    kudo_policy::secrets::random_key()
}

/// The key of a context until [`crate::Context::with_digest_key`] gives the loaded one: no warning
/// here, [`load_digest_key`] warns when it cannot load one.
pub(crate) fn digest_key() -> Vec<u8> {
    env_digest_key().unwrap_or_else(kudo_policy::secrets::random_key)
}

/// The key of the digests of secret values: [`DIGEST_KEY_ENV`], else the Secret
/// [`DIGEST_SECRET`] of `home` (made when missing), else a random key.
pub async fn load_digest_key(client: &Client, home: Option<&str>) -> Vec<u8> {
    if let Some(k) = env_digest_key() {
        return k;
    }
    let Some(ns) = home else {
        return random_digest_key("no namespace to keep it in");
    };
    let api: Api<Secret> = Api::namespaced(client.clone(), ns);
    let read = |s: Secret| {
        s.data
            .and_then(|d| d.get("key").map(|b| b.0.clone()))
            .filter(|k| k.len() >= 16)
    };
    for _ in 0..3 {
        match api.get_opt(DIGEST_SECRET).await {
            Ok(Some(s)) => {
                if let Some(k) = read(s) {
                    return k;
                }
                return random_digest_key(&format!("Secret {ns}/{DIGEST_SECRET} holds no key"));
            }
            Ok(None) => {
                let key = kudo_policy::secrets::random_key();
                let secret = Secret {
                    metadata: kube::api::ObjectMeta {
                        name: Some(DIGEST_SECRET.into()),
                        namespace: Some(ns.into()),
                        labels: Some(
                            [(labels::PART_OF.0.to_string(), labels::PART_OF.1.to_string())].into(),
                        ),
                        ..Default::default()
                    },
                    immutable: Some(true),
                    data: Some([("key".to_string(), k8s_openapi::ByteString(key.clone()))].into()),
                    ..Default::default()
                };
                match api.create(&Default::default(), &secret).await {
                    Ok(_) => return key,
                    // Another replica made it first: read theirs.
                    Err(kube::Error::Api(s)) if s.code == 409 => continue,
                    Err(e) => {
                        return random_digest_key(&format!(
                            "cannot create Secret {ns}/{DIGEST_SECRET}: {e}"
                        ));
                    }
                }
            }
            Err(e) => {
                return random_digest_key(&format!("cannot read Secret {ns}/{DIGEST_SECRET}: {e}"));
            }
        }
    }
    random_digest_key(&format!("Secret {ns}/{DIGEST_SECRET} keeps changing"))
}
