//! The names kudo puts on cluster objects: labels, annotations, the finalizer, field managers,
//! and the names of the objects `kudo init` installs (namespace, Deployments, Secrets,
//! webhook configurations, ClusterRoles). Every kudo binary reads them from here.

/// Label on every object a plan applies: the tool that manages it (value [`MANAGED_BY_KUDO`]).
pub const MANAGED_BY: &str = "app.kubernetes.io/managed-by";
/// The value of [`MANAGED_BY`].
pub const MANAGED_BY_KUDO: &str = "kudo";
/// Label on every object a plan applies and on its Pod templates, as KUDO puts it (value
/// [`HERITAGE_KUDO`]): KUDO's `heritage`, which KUDO-era selectors and tools read.
pub const HERITAGE: &str = "heritage";
/// The value of [`HERITAGE`].
pub const HERITAGE_KUDO: &str = "kudo";
/// Label: the Instance an object belongs to.
pub const INSTANCE: &str = "kudo.dev/instance";
/// Label: the operator of that Instance.
pub const OPERATOR: &str = "kudo.dev/operator";
/// Label: the OperatorVersion of that Instance (its name). On a Pod template, as in KUDO, an
/// annotation with the operator's version (`spec.version`).
pub const OPERATOR_VERSION: &str = "kudo.dev/operator-version";
/// Annotation: the plan that last applied an object.
pub const PLAN: &str = "kudo.dev/plan";
/// Annotation: the phase that last applied an object.
pub const PHASE: &str = "kudo.dev/phase";
/// Annotation: the step that last applied an object.
pub const STEP: &str = "kudo.dev/step";
/// The Instance finalizer: the manager runs the `cleanup` plan before the Instance goes.
pub const FINALIZER: &str = "kudo.dev/cleanup";
/// Field manager of the manager's server-side applies (objects and Instance status).
pub const MANAGER_FIELD_MANAGER: &str = "kudo-manager";
/// Field manager of the CLI's writes (`kudo install`, `update`, `upgrade`, ...).
pub const CLI_FIELD_MANAGER: &str = "kudo";
/// Annotation of an Instance written by `kudo update --force` and `kudo upgrade --force`: the
/// run (`status.activePlan.uid`, or the run a spec not yet acted on starts) that the write may
/// supersede. The admission webhook lets a change that another plan's run would otherwise
/// block through when it names that very run ([`kudo_policy::run::supersede`], read by [`crate::baseline::force`]).
pub const SUPERSEDE: &str = "kudo.dev/supersede";
/// Annotation of an Instance that the mutating admission webhook sets on every write that
/// changes its `spec`: the user the API server authenticated for that write (the admission
/// request's `userInfo.username`). What a revision records as who asked; set by the webhook,
/// whatever the write itself said.
pub const CHANGED_BY: &str = "kudo.dev/changed-by";
/// Annotation of an Instance written by `kudo rollback` (and by the manager's remediation):
/// `N@G`, revision `N` restored by a write on top of generation `G`. The admission webhook
/// decides the write as a rollback (`kudo_policy::change::rollback`) only when `G` is the
/// generation of the object it replaces, so an annotation left behind counts for nothing.
pub const ROLLBACK: &str = "kudo.dev/rollback";
/// Annotation of an Instance written by `kudo update|upgrade --rollback-on-failure`: the
/// remediation (`spec.remediation` as JSON) for the change written on top of generation `G`,
/// as `G:{...}`. It applies to that one change only.
pub const REMEDIATE_ONCE: &str = "kudo.dev/remediation";
/// Annotation of an Instance written by `kudo upgrade --allow-drop POINTER | --force`: what the
/// upgrade preflight lets through (`kudo_policy::preflight::Allow` as JSON) for the change
/// written on top of generation `G`, as `G:{...}`. The admission webhook and the manager honour
/// it for that one change only, so one left behind counts for nothing.
pub const PREFLIGHT: &str = "kudo.dev/preflight";
/// Annotation of an Instance written by `kudo update|upgrade|rollback --ignore-window` and
/// `kudo plan trigger --ignore-window`: `G`, the change written on top of generation `G` runs
/// now, whatever the Instance's maintenance window (`spec.window`) says. It applies to that
/// one change only; the revision records it, with who asked ([`CHANGED_BY`]).
pub const IGNORE_WINDOW: &str = "kudo.dev/ignore-window";
/// On an OperatorVersion: where its package came from (`oci://...@sha256:...`, a URL, a
/// repository), as `kudo install` fetched it.
pub const PACKAGE_SOURCE: &str = "kudo.dev/package-source";
/// On an OperatorVersion: its package's sha256 (`sha256:HEX`, the `.tgz`'s).
pub const PACKAGE_DIGEST: &str = "kudo.dev/package-digest";
/// On an OperatorVersion: the fingerprint of the key whose cosign signature of its package
/// was verified (`sha256:HEX` of the public key's DER).
pub const PACKAGE_SIGNER: &str = "kudo.dev/package-signer";
/// On an OperatorVersion: how its package's signature was checked (`verified`, `unverified`,
/// `none`).
pub const PACKAGE_VERIFICATION: &str = "kudo.dev/package-verification";
/// Label of a revision (a ControllerRevision): the Instance it belongs to.
pub const REVISION_OF: &str = "kudo.dev/revision-of";
/// Annotation on an Instance: the container images `kudo install|update|upgrade` checked, as
/// JSON: `{"IMAGE": {"digest": "sha256:...", "pinned": "REGISTRY/REPO@sha256:...",
/// "verified": "sha256:KEY" (a key's fingerprint, when a signature was verified), "format":
/// "bundle|legacy"}, "mirror": "REGISTRY/PREFIX" (an install from a mirror: `pinned` is the
/// image relocated there)}`. What the manager renders has each IMAGE replaced by its `pinned`
/// reference ([`image_pins`]); the revision records the whole of it; a KudoOperator task's
/// child Instance gets its parent's.
pub const IMAGES: &str = "kudo.dev/images";

/// The ConfigMap of kudo's namespace (`kudo-system`) that holds the manager's policy for the
/// images plans run: `policy.yaml` (`images:` entries, as `repositories.yaml`'s) and the public
/// keys it names, one per key.
pub const IMAGE_POLICY: &str = "kudo-image-policy";

/// The pinned images of an object's `kudo.dev/images` annotation ([`IMAGES`]): each image as
/// the templates write it → the reference to render in its place. An annotation that does not
/// read pins nothing.
pub fn image_pins(
    annotations: Option<&std::collections::BTreeMap<String, String>>,
) -> std::collections::BTreeMap<String, String> {
    let Some(text) = annotations.and_then(|a| a.get(IMAGES)) else {
        return Default::default();
    };
    let Ok(serde_json::Value::Object(map)) = serde_json::from_str::<serde_json::Value>(text) else {
        return Default::default();
    };
    map.into_iter()
        .filter_map(|(image, v)| {
            let pinned = v.get("pinned")?.as_str()?;
            let mirror = v.get("mirror").and_then(serde_json::Value::as_str);
            same_image_by_digest(&image, pinned, mirror).then(|| (image, pinned.to_string()))
        })
        .collect()
}

/// Whether `pinned` is `image`'s own repository at a sha256 digest, or with `mirror`
/// (`REGISTRY/PREFIX`, an air-gapped install's: `docs/air-gap.md`) its relocated repository
/// there ([`kudo_pkg::images::relocated`]): a pin can only fix which content of that image
/// runs, or from which mirror, never put another image in its place (whoever writes the
/// annotation could otherwise swap an image the package's templates hard-code).
fn same_image_by_digest(image: &str, pinned: &str, mirror: Option<&str>) -> bool {
    use kudo_pkg::images::Reference;
    let (Ok(image), Ok(pinned)) = (image.parse::<Reference>(), pinned.parse::<Reference>()) else {
        return false;
    };
    let sha256 = pinned.digest().and_then(|d| d.strip_prefix("sha256:"));
    let by_digest =
        sha256.is_some_and(|h| h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()));
    let same = image.registry() == pinned.registry() && image.repository() == pinned.repository();
    let relocated = mirror.is_some_and(|m| {
        kudo_pkg::images::relocated(&image, m)
            == format!("{}/{}", pinned.registry(), pinned.repository())
    });
    by_digest && (same || relocated)
}
/// Annotation of a revision: how its plan ended (`IN_PROGRESS`, `COMPLETE`, `FATAL_ERROR`,
/// `ERROR`), which its immutable `data` cannot hold.
pub const REVISION_STATUS: &str = "kudo.dev/plan-status";
/// Annotation of a revision: why its plan ended so (bounded).
pub const REVISION_MESSAGE: &str = "kudo.dev/plan-message";
/// The ServiceAccount `kudo install` prepares in an Instance's namespace (unless given
/// `--service-account`), and the manager's `--default-service-account` as `kudo init` deploys
/// it: the identity the manager impersonates for an Instance (`docs/tenancy.md`).
pub const DEFAULT_SERVICE_ACCOUNT: &str = "kudo-instance";

/// The Secret (in kudo's namespace) where kudo-manager keeps the key of the digests that
/// `status.applied` records of `writeOnly` values.
pub const DIGEST_SECRET: &str = "kudo-manager-digest-key";

/// Label every object `kudo init` installs carries, and the manager's digest Secret.
pub const PART_OF: (&str, &str) = ("app.kubernetes.io/part-of", "kudo");
/// kudo's namespace when none is given: where `kudo init` installs the manager and the webhook.
pub const NAMESPACE: &str = "kudo-system";
/// Name of the webhook's Service, Deployment, ServiceAccount and ClusterRole.
pub const WEBHOOK: &str = "kudo-webhook";
/// Name of the manager's Deployment, ServiceAccount, ClusterRole and leader election Lease.
pub const MANAGER: &str = "kudo-manager";
/// Secret holding the webhook's certificate (`ca.crt`, `tls.crt`, `tls.key`).
pub const WEBHOOK_SECRET: &str = "kudo-webhook-tls";
/// Annotation of [`WEBHOOK_SECRET`] with the certificate's expiry (Unix seconds).
pub const CERT_NOT_AFTER: &str = "kudo.dev/not-after";
/// The MutatingWebhookConfiguration.
pub const MUTATING: &str = "kudo-mutate";
/// The ValidatingWebhookConfiguration.
pub const VALIDATING: &str = "kudo-validate";
/// The CRDs whose conversion goes through the webhook.
pub const CONVERTED_CRDS: [&str; 2] = ["operatorversions.kudo.dev", "instances.kudo.dev"];
/// The ClusterRole aggregated into the built-in `view` (and so `edit` and `admin`): read kudo's
/// kinds.
pub const AGGREGATE_VIEW: &str = "kudo-view";
/// The ClusterRole aggregated into the built-in `admin`: write kudo's kinds. Not into `edit`:
/// whoever writes an Instance acts through the manager with the rights of its ServiceAccount,
/// which `kudo install` binds to `admin` (`docs/tenancy.md`).
pub const AGGREGATE_ADMIN: &str = "kudo-admin";
/// The ClusterRole that may approve Rollouts (the verb `approve` on `rollouts`, which no
/// built-in role holds): bind it, in a namespace or cluster-wide, to who may approve.
pub const ROLLOUT_APPROVER: &str = "kudo-rollout-approver";
/// Field manager of `kudo init`'s server-side apply.
pub const INIT_FIELD_MANAGER: &str = "kudo-init";
/// Field manager of the storage migration's server-side apply of the CRDs (`kudo migrate`).
pub const MIGRATE_FIELD_MANAGER: &str = "kudo-migrate";
/// Name of the Instance `kudo init --wait` sends (server-side dry run, nothing written) to see
/// the webhooks answer through the API server.
pub const INIT_PROBE: &str = "kudo-init-probe";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_pins_read_the_pinned_references_and_nothing_from_a_bad_annotation() {
        let d = "ab".repeat(32);
        let a = std::collections::BTreeMap::from([(
            IMAGES.to_string(),
            serde_json::json!({
                "nginx:1.27": {"digest": format!("sha256:{d}"), "pinned": format!("docker.io/library/nginx@sha256:{d}"), "verified": "sha256:k"},
                "busybox": {"digest": "sha256:cd"},
                // another image in place of the one written, or no digest: not a pin
                "redis:7": {"pinned": format!("evil.example.com/redis@sha256:{d}")},
                "memcached:1": {"pinned": "docker.io/library/memcached:2"},
            })
            .to_string(),
        )]);
        let pins = image_pins(Some(&a));
        assert_eq!(pins.len(), 1, "{pins:?}");
        assert_eq!(
            pins["nginx:1.27"],
            format!("docker.io/library/nginx@sha256:{d}")
        );
        // an air-gapped install's: the image's repository below the mirror it names, by digest
        let m = std::collections::BTreeMap::from([(
            IMAGES.to_string(),
            serde_json::json!({
                "zookeeper:3.6.2": {"pinned": format!("mirror.local:5000/kudo/library/zookeeper@sha256:{d}"), "mirror": "mirror.local:5000/kudo"},
                // another repository than the relocated one: not a pin
                "redis:7": {"pinned": format!("mirror.local:5000/kudo/evil@sha256:{d}"), "mirror": "mirror.local:5000/kudo"},
                "nginx:1.27": {"pinned": "mirror.local:5000/kudo/library/nginx:1.27", "mirror": "mirror.local:5000/kudo"},
            })
            .to_string(),
        )]);
        let pins = image_pins(Some(&m));
        assert_eq!(pins.len(), 1, "{pins:?}");
        assert!(pins["zookeeper:3.6.2"].starts_with("mirror.local:5000/kudo/library/zookeeper@"));
        let bad = std::collections::BTreeMap::from([(IMAGES.to_string(), "[1".to_string())]);
        assert!(image_pins(Some(&bad)).is_empty());
        assert!(image_pins(None).is_empty());
    }
}
