//! What a cluster needs to run kudo: what `kudo init` prints (and, later, applies).
//!
//! [`manifests`] returns, in apply order: the namespace; the three CRDs (v1beta2 stored, v1beta1
//! served; OperatorVersion and Instance converted by the webhook, Operator by the API server as
//! both versions have the same shape); service accounts and RBAC; the aggregation ClusterRoles
//! that put kudo's kinds into the built-in `view` (read) and `admin` (write) roles; the manager
//! Deployment (one replica, leader-elected, `--default-service-account`
//! [`kudo_crd::labels::DEFAULT_SERVICE_ACCOUNT`]); the webhook Deployment (two replicas, spread over nodes, a
//! PodDisruptionBudget) and its Service; the mutating and validating webhook configurations on
//! Instance create and update (`failurePolicy: Fail`, `sideEffects: None`).
//!
//! With [`WebhookTarget::Url`] (the manager and webhook run outside the cluster, as in
//! development and the end-to-end suite, the way envtest does it) the CRD conversion and the
//! webhook configurations call that URL with the given CA bundle, and neither Deployment nor
//! the webhook Service is made: the two ServiceAccounts and their RBAC are, for the processes
//! outside to run as.
//!
//! The manager's own rights ([`manager_rules`]) are only what it needs: kudo's kinds, events,
//! its Lease, discovery, and impersonating ServiceAccounts. It applies an Instance's objects
//! with the rights of a ServiceAccount of the Instance's namespace (`docs/tenancy.md`).

use base64::Engine;
use serde_json::{Value, json};

use kudo_crd::labels::{
    AGGREGATE_ADMIN, AGGREGATE_VIEW, IMAGE_POLICY, INIT_FIELD_MANAGER, INIT_PROBE, MANAGER,
    MUTATING, NAMESPACE, PART_OF, ROLLOUT_APPROVER, VALIDATING, WEBHOOK,
};
use kudo_crd::webhook_cert::Lifetime;

/// Where the API server reaches the webhooks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WebhookTarget {
    /// The in-cluster Service `kudo-webhook` (its CA bundle is injected by the webhook's
    /// self-managed certificates, or given here).
    Service {
        /// PEM CA bundle, when known now.
        ca_bundle: Option<Vec<u8>>,
    },
    /// A URL outside the cluster (`https://HOST:PORT`), trusted through `ca_bundle` (PEM).
    Url {
        /// Base URL, without a path.
        url: String,
        /// PEM CA bundle.
        ca_bundle: Vec<u8>,
    },
}

/// What to install.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// Namespace of the manager and the webhook.
    pub namespace: String,
    /// Image of the manager.
    pub manager_image: String,
    /// Image of the webhook.
    pub webhook_image: String,
    /// How the API server reaches the webhooks.
    pub webhook: WebhookTarget,
    /// The lifetime of the in-cluster webhook's self-managed certificate (`--cert-validity`,
    /// `--cert-renew-before`); `None`: the webhook's defaults (a year, renewed 30 days before).
    pub webhook_cert: Option<Lifetime>,
    /// Replicas of the manager: 1 runs with `--leader-elect` (a standby takes over); more run
    /// with `--shards N`, sharing the Instances, each replica holding the Leases of its shards.
    pub manager_replicas: u32,
}

impl Default for Options {
    fn default() -> Self {
        let version = env!("CARGO_PKG_VERSION");
        Options {
            namespace: NAMESPACE.into(),
            manager_image: format!("kudo/kudo-manager:{version}"),
            webhook_image: format!("kudo/kudo-webhook:{version}"),
            webhook: WebhookTarget::Service { ca_bundle: None },
            webhook_cert: None,
            manager_replicas: 1,
        }
    }
}

/// The kinds of `kudo.dev`, as RBAC names them.
const KUDO_RESOURCES: [&str; 4] = ["operators", "operatorversions", "instances", "rollouts"];

/// What the manager's own identity may do, cluster-wide: watch kudo's kinds and write an
/// Instance's finalizers and status; publish events; read discovery; impersonate
/// ServiceAccounts (it acts for an Instance as one of its namespace). Its Lease is in a Role
/// of its own namespace.
pub fn manager_rules() -> Value {
    json!([
        {"apiGroups": ["kudo.dev"], "resources": KUDO_RESOURCES, "verbs": ["get", "list", "watch"]},
        {"apiGroups": ["kudo.dev"], "resources": ["instances"], "verbs": ["patch", "update"]},
        {"apiGroups": ["kudo.dev"], "resources": ["instances/status", "rollouts/status"], "verbs": ["get", "patch", "update"]},
        {"apiGroups": ["", "events.k8s.io"], "resources": ["events"], "verbs": ["create", "patch", "update"]},
        {"apiGroups": [""], "resources": ["serviceaccounts"], "verbs": ["impersonate"]},
        // The namespaces a Rollout's namespaceSelector matches (their Instances are then read
        // as the Rollout's account).
        {"apiGroups": [""], "resources": ["namespaces"], "verbs": ["get", "list", "watch"]},
        // Revisions (kudo_crd::revision): the manager's own bookkeeping of each change.
        {"apiGroups": ["apps"], "resources": ["controllerrevisions"], "verbs": ["get", "list", "watch", "create", "patch", "delete"]},
        {"nonResourceURLs": ["/api", "/api/*", "/apis", "/apis/*", "/version"], "verbs": ["get"]}
    ])
}

fn labels(component: &str) -> Value {
    json!({PART_OF.0: PART_OF.1, "app.kubernetes.io/component": component})
}

/// `clientConfig` of a webhook (conversion or admission) at `path`.
fn client_config(o: &Options, path: &str) -> Value {
    let b64 = |pem: &[u8]| base64::engine::general_purpose::STANDARD.encode(pem);
    match &o.webhook {
        WebhookTarget::Service { ca_bundle } => {
            let mut c = json!({"service": {"namespace": o.namespace, "name": WEBHOOK, "path": path, "port": 443}});
            if let Some(ca) = ca_bundle {
                c["caBundle"] = json!(b64(ca));
            }
            c
        }
        WebhookTarget::Url { url, ca_bundle } => json!({
            "url": format!("{}{path}", url.trim_end_matches('/')),
            "caBundle": b64(ca_bundle),
        }),
    }
}

/// Every object of the installation, in apply order: the Namespace, the CRDs, the
/// identities and their rights, the in-cluster Deployments (with
/// [`WebhookTarget::Service`]), the admission webhook configurations.
pub fn manifests(o: &Options) -> Vec<Value> {
    let mut out = vec![json!({"apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": o.namespace, "labels": labels("namespace")}})];
    out.extend(crds(o));
    out.extend(identities(o));
    // With the webhooks outside the cluster, the manager runs outside too (under the
    // ServiceAccount made here): an in-cluster one as well would run every plan twice.
    if matches!(o.webhook, WebhookTarget::Service { .. }) {
        out.extend(in_cluster(o));
    }
    out.extend(webhook_configurations(o));
    out
}

/// kudo's CRDs, converted by the webhook (`Operator`, the same in both versions, and
/// `Rollout`, served in one version, are not).
fn crds(o: &Options) -> Vec<Value> {
    let mut out = Vec::new();
    for crd in kudo_crd::definitions() {
        let mut v = serde_json::to_value(&crd).unwrap_or(Value::Null);
        v["metadata"]["labels"] = labels("crd");
        let kind = crd.spec.names.kind.as_str();
        v["spec"]["conversion"] = if kind == "Operator" || crd.spec.versions.len() < 2 {
            json!({"strategy": "None"})
        } else {
            json!({"strategy": "Webhook", "webhook": {
                "conversionReviewVersions": ["v1"],
                "clientConfig": client_config(o, "/convert")}})
        };
        out.push(v);
    }
    out
}

/// The manager's and the webhook's ServiceAccounts, their roles and bindings, and the roles
/// the built-in `view` and `admin` aggregate.
fn identities(o: &Options) -> Vec<Value> {
    let ns = &o.namespace;
    let mut out = Vec::new();
    for sa in [MANAGER, WEBHOOK] {
        out.push(json!({"apiVersion": "v1", "kind": "ServiceAccount",
            "metadata": {"name": sa, "namespace": ns, "labels": labels(sa)}}));
    }
    // The manager applies an Instance's objects as a ServiceAccount of the Instance's
    // namespace (impersonation): its own rights are only what it needs for itself.
    out.push(
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": {"name": MANAGER, "labels": labels(MANAGER)},
        "rules": manager_rules()}),
    );
    // The built-in roles cover kudo's kinds, as well-behaved CRDs do.
    let mut view = labels("rbac");
    view["rbac.authorization.k8s.io/aggregate-to-view"] = json!("true");
    out.push(json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": {"name": AGGREGATE_VIEW, "labels": view},
        "rules": [{"apiGroups": ["kudo.dev"], "resources": ["operators", "operatorversions", "instances", "instances/status", "rollouts", "rollouts/status"],
            "verbs": ["get", "list", "watch"]}]}));
    // Approving a Rollout is its own right, as approving a CertificateSigningRequest is: no
    // built-in role holds it; this role is bound to who may approve.
    out.push(json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": {"name": ROLLOUT_APPROVER, "labels": labels("rbac")},
        "rules": [{"apiGroups": ["kudo.dev"], "resources": ["rollouts"], "verbs": ["approve", "get", "list", "watch"]}]}));
    let mut admin = labels("rbac");
    admin["rbac.authorization.k8s.io/aggregate-to-admin"] = json!("true");
    out.push(json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": {"name": AGGREGATE_ADMIN, "labels": admin},
        "rules": [{"apiGroups": ["kudo.dev"], "resources": KUDO_RESOURCES,
            "verbs": ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]},
            // `blockOwnerDeletion` on an object an Instance owns, as KUDO writes it: the
            // OwnerReferencesPermissionEnforcement admission plugin asks for this right. The
            // Instance's ServiceAccount holds it through the `admin` RoleBinding `kudo install`
            // makes, and a namespace's admins may grant it.
            {"apiGroups": ["kudo.dev"], "resources": ["instances/finalizers"], "verbs": ["update"]}]}));
    out.push(json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": {"name": WEBHOOK, "labels": labels(WEBHOOK)},
        "rules": [
            {"apiGroups": ["kudo.dev"], "resources": ["operatorversions", "instances", "rollouts"], "verbs": ["get", "list", "watch"]},
            // The values an Instance's last plan ran with, which its status refers to (its
            // revision), read when a write meets a change the manager has not acted on yet.
            {"apiGroups": ["apps"], "resources": ["controllerrevisions"], "verbs": ["get"]},
            // Approvals: whether the user who approves a Rollout may `approve` rollouts.
            {"apiGroups": ["authorization.k8s.io"], "resources": ["subjectaccessreviews"], "verbs": ["create"]},
            // Rollout claims: the namespaces a Rollout's namespaceSelector matches.
            {"apiGroups": [""], "resources": ["namespaces"], "verbs": ["get", "list"]},
            {"apiGroups": ["apiextensions.k8s.io"], "resources": ["customresourcedefinitions"], "verbs": ["get", "list", "watch", "patch"]},
            {"apiGroups": ["admissionregistration.k8s.io"], "resources": ["mutatingwebhookconfigurations", "validatingwebhookconfigurations"], "verbs": ["get", "list", "watch", "patch"]}]}));
    for name in [MANAGER, WEBHOOK] {
        out.push(json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
            "metadata": {"name": name, "labels": labels(name)},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
            "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": ns}]}));
    }
    // The webhook keeps its certificate in a Secret of its namespace; the manager its Lease.
    out.push(
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
        "metadata": {"name": MANAGER, "namespace": ns, "labels": labels(MANAGER)},
        "rules": [{"apiGroups": ["coordination.k8s.io"], "resources": ["leases"],
            "verbs": ["get", "list", "watch", "create", "update", "patch", "delete"]},
            // The key of its digests of secret values, made on its first start.
            {"apiGroups": [""], "resources": ["secrets"], "resourceNames": [kudo_crd::labels::DIGEST_SECRET],
                "verbs": ["get"]},
            {"apiGroups": [""], "resources": ["secrets"], "verbs": ["create"]},
            // Its image policy, read before a plan's first step (issue 50).
            {"apiGroups": [""], "resources": ["configmaps"], "resourceNames": [IMAGE_POLICY],
                "verbs": ["get"]}]}),
    );
    out.push(
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
        "metadata": {"name": MANAGER, "namespace": ns, "labels": labels(MANAGER)},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": MANAGER},
        "subjects": [{"kind": "ServiceAccount", "name": MANAGER, "namespace": ns}]}),
    );
    out.push(json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
        "metadata": {"name": WEBHOOK, "namespace": ns, "labels": labels(WEBHOOK)},
        "rules": [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get", "create", "update", "patch"]}]}));
    out.push(
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
        "metadata": {"name": WEBHOOK, "namespace": ns, "labels": labels(WEBHOOK)},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": WEBHOOK},
        "subjects": [{"kind": "ServiceAccount", "name": WEBHOOK, "namespace": ns}]}),
    );
    out
}

/// The manager's and the webhook's Deployments, the webhook's PodDisruptionBudget and Service.
fn in_cluster(o: &Options) -> Vec<Value> {
    let ns = &o.namespace;
    let mut out = Vec::new();
    // One replica elects itself leader; more share the Instances by shard (the same count
    // for every replica: the Deployment is replaced, never rolled, so two counts never meet).
    let election = if o.manager_replicas > 1 {
        json!(["--shards", o.manager_replicas.to_string()])
    } else {
        json!(["--leader-elect"])
    };
    let mut manager_args = election;
    if let Some(args) = manager_args.as_array_mut() {
        args.extend([
            json!("--default-service-account"),
            json!(kudo_crd::labels::DEFAULT_SERVICE_ACCOUNT),
            json!("--metrics-addr"),
            json!("0.0.0.0:8080"),
            json!("--log-format"),
            json!("json"),
        ]);
    }
    let mut manager = deployment(
        o,
        MANAGER,
        &o.manager_image,
        o.manager_replicas.max(1),
        manager_args,
        None,
    );
    manager["spec"]["strategy"] = json!({"type": "Recreate"});
    out.push(manager);

    let mut webhook_args = json!([
        "--listen",
        "0.0.0.0:8443",
        "--self-managed-certs",
        "--cert-dir",
        "/certs",
        "--log-format",
        "json"
    ]);
    if let (Some(lifetime), Some(args)) = (&o.webhook_cert, webhook_args.as_array_mut()) {
        let text = |d| json!(kudo_crd::webhook_cert::written(d));
        args.extend([
            json!("--cert-validity"),
            text(lifetime.validity()),
            json!("--cert-renew-before"),
            text(lifetime.renew_before()),
        ]);
    }
    out.push(deployment(
        o,
        WEBHOOK,
        &o.webhook_image,
        2,
        webhook_args,
        Some(8443),
    ));
    out.push(
        json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
        "metadata": {"name": WEBHOOK, "namespace": ns, "labels": labels(WEBHOOK)},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": labels(WEBHOOK)}}}),
    );
    out.push(json!({"apiVersion": "v1", "kind": "Service",
        "metadata": {"name": WEBHOOK, "namespace": ns, "labels": labels(WEBHOOK)},
        "spec": {"selector": labels(WEBHOOK),
            "ports": [{"name": "https", "port": 443, "targetPort": 8443, "protocol": "TCP"}]}}));
    out
}

/// The mutating and validating webhook configurations of Instances.
fn webhook_configurations(o: &Options) -> Vec<Value> {
    let mut out = Vec::new();
    let rule = json!([{"apiGroups": ["kudo.dev"], "apiVersions": ["v1beta2"],
        "operations": ["CREATE", "UPDATE"], "resources": ["instances"], "scope": "Namespaced"}]);
    let v1beta1_rule = json!([{"apiGroups": ["kudo.dev"], "apiVersions": ["v1beta1"],
        "operations": ["CREATE", "UPDATE"], "resources": ["instances"], "scope": "Namespaced"}]);
    let rollout_rule = json!([{"apiGroups": ["kudo.dev"], "apiVersions": ["v1beta2"],
        "operations": ["CREATE", "UPDATE"], "resources": ["rollouts"], "scope": "Namespaced"}]);
    for (kind, name, path) in [
        (
            "MutatingWebhookConfiguration",
            "instances.mutate.kudo.dev",
            "/admit/instance/mutate",
        ),
        (
            "ValidatingWebhookConfiguration",
            "instances.validate.kudo.dev",
            "/admit/instance/validate",
        ),
    ] {
        let webhook = |name: &str, rule: &Value, policy: &str, path: &str| {
            json!({"name": name, "rules": rule, "matchPolicy": policy,
                "failurePolicy": "Fail", "sideEffects": "None", "timeoutSeconds": 10,
                "admissionReviewVersions": ["v1"], "clientConfig": client_config(o, path)})
        };
        let mut webhooks = Vec::new();
        if kind.starts_with("Mutating") {
            // Writes through v1beta1, as sent (Exact: not converted), before the API server
            // converts them and checks them against the v1beta1 schema: a value the v1beta1
            // map cannot hold is refused naming its parameter, not pruned to `{}` and lost.
            webhooks.push(webhook(
                "instances-v1beta1.mutate.kudo.dev",
                &v1beta1_rule,
                "Exact",
                "/admit/instance/v1beta1",
            ));
        }
        webhooks.push(webhook(name, &rule, "Equivalent", path));
        if kind.starts_with("Mutating") {
            // Rollouts: the spec's rules, one rollout per Instance, and who approved
            // (kudo_webhook's `rollout`: the approver's name is written, hence mutating).
            webhooks.push(webhook(
                "rollouts.mutate.kudo.dev",
                &rollout_rule,
                "Equivalent",
                "/admit/rollout",
            ));
        }
        out.push(json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": kind,
            "metadata": {"name": if kind.starts_with("Mutating") { MUTATING } else { VALIDATING }, "labels": labels(WEBHOOK)},
            "webhooks": webhooks}));
    }
    out
}

/// The API resource of an installed object's kind (the kinds [`manifests`] makes).
fn resource(object: &Value) -> Option<(kube::api::ApiResource, bool)> {
    let api_version = object.get("apiVersion")?.as_str()?;
    let kind = object.get("kind")?.as_str()?;
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
    let (plural, namespaced) = match kind {
        "Namespace" => ("namespaces", false),
        "CustomResourceDefinition" => ("customresourcedefinitions", false),
        "ServiceAccount" => ("serviceaccounts", true),
        "ClusterRole" => ("clusterroles", false),
        "ClusterRoleBinding" => ("clusterrolebindings", false),
        "Role" => ("roles", true),
        "RoleBinding" => ("rolebindings", true),
        "Deployment" => ("deployments", true),
        "PodDisruptionBudget" => ("poddisruptionbudgets", true),
        "Service" => ("services", true),
        "MutatingWebhookConfiguration" => ("mutatingwebhookconfigurations", false),
        "ValidatingWebhookConfiguration" => ("validatingwebhookconfigurations", false),
        _ => return None,
    };
    let gvk = kube::core::GroupVersionKind::gvk(group, version, kind);
    Some((
        kube::api::ApiResource::from_gvk_with_plural(&gvk, plural),
        namespaced,
    ))
}

/// Applies `objects` in order with server-side apply (field manager [`INIT_FIELD_MANAGER`], taking
/// over conflicting fields: `kudo init` owns what it installs). Idempotent. Returns a line per
/// object (`Kind/name applied`).
///
/// Nothing is half-installed by a refusal the API server can foresee: the Namespaces are
/// applied first (namespaced objects cannot be checked without them), then every other object
/// goes through a server-side dry run (schema, admission, RBAC escalation checks, nothing
/// written), and only when every one passes are they applied for real. A refusal names the
/// object and whether it came from the dry run (then only the Namespaces were written).
pub async fn apply(client: &kube::Client, objects: &[Value]) -> Result<Vec<String>, ApplyError> {
    let (namespaces, rest): (Vec<&Value>, Vec<&Value>) =
        objects.iter().partition(|o| o["kind"] == "Namespace");
    let mut done = Vec::new();
    for object in &namespaces {
        done.push(apply_one(client, object, false).await?);
    }
    for object in &rest {
        apply_one(client, object, true).await?;
    }
    for object in &rest {
        done.push(apply_one(client, object, false).await?);
    }
    Ok(done)
}

/// An object [`apply`] could not apply, and why.
#[derive(Debug, thiserror::Error)]
#[error("{kind}/{name}: {reason}{}", if *.dry_run {
    " (server-side dry run: nothing but the namespace was written)"
} else {
    ""
})]
pub struct ApplyError {
    /// The object's kind.
    pub kind: String,
    /// The object's name.
    pub name: String,
    /// Whether it was refused in the dry run (then only the Namespaces were written).
    pub dry_run: bool,
    /// Why.
    pub reason: ApplyRefusal,
}

/// Why an object could not be applied.
#[derive(Debug, thiserror::Error)]
pub enum ApplyRefusal {
    /// A kind `kudo init` does not make.
    #[error("not a kind kudo init applies")]
    UnknownKind,
    /// The API server refused it.
    #[error("{}", kudo_cluster::said(.0))]
    Api(#[from] kube::Error),
}

async fn apply_one(
    client: &kube::Client,
    object: &Value,
    dry_run: bool,
) -> Result<String, ApplyError> {
    use kube::api::{Api, DynamicObject, Patch, PatchParams};
    let mut params = PatchParams::apply(INIT_FIELD_MANAGER).force();
    params.dry_run = dry_run;
    let kind = object["kind"].as_str().unwrap_or("?");
    let name = object["metadata"]["name"].as_str().unwrap_or("?");
    let refused = |reason: ApplyRefusal| ApplyError {
        kind: kind.to_string(),
        name: name.to_string(),
        dry_run,
        reason,
    };
    let (ar, namespaced) = resource(object).ok_or_else(|| refused(ApplyRefusal::UnknownKind))?;
    let api: Api<DynamicObject> = if namespaced {
        let ns = object["metadata"]["namespace"]
            .as_str()
            .unwrap_or("default");
        Api::namespaced_with(client.clone(), ns, &ar)
    } else {
        Api::all_with(client.clone(), &ar)
    };
    api.patch(name, &params, &Patch::Apply(object))
        .await
        .map_err(|e| refused(e.into()))?;
    Ok(format!("{kind}/{name} applied"))
}

/// What [`wait_ready`] has seen, one line each, in order.
pub type Progress = Vec<String>;

/// Waits until the installation answers, as a client would use it, or `timeout` passes:
/// 1. every kudo CRD is `Established`;
/// 2. the API server serves `kudo.dev/v1beta2` Instances (a LIST answers, not a 404);
/// 3. the webhooks answer through the API server: an Instance is created through `v1beta1` as a
///    server-side dry run (nothing is written), which the API server converts through the
///    conversion webhook and sends to both admission webhooks. An admission denial (it names
///    an OperatorVersion that does not exist) is an answer; "failed calling webhook" and
///    conversion failures are not yet;
/// 4. with the in-cluster webhook ([`WebhookTarget::Service`]), the manager's Deployment has an
///    available replica. A manager running outside the cluster is not looked for.
///
/// What was still missing when [`wait_ready`]'s time ran out.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not ready after {}: {waiting_for}", crate::commands::humanize(*.after))]
pub struct NotReady {
    /// The time waited.
    pub after: std::time::Duration,
    /// The first check not passed, and why, in the API server's words.
    pub waiting_for: String,
}

/// Returns the lines of what became ready; on timeout, what is still missing and why.
pub async fn wait_ready(
    client: &kube::Client,
    o: &Options,
    timeout: std::time::Duration,
) -> Result<Progress, NotReady> {
    use std::time::{Duration, Instant};
    let deadline = Instant::now() + timeout;
    let mut done = Progress::new();
    let mut stage = 0usize;
    enum Check {
        Crds,
        Served,
        Webhooks,
        Manager,
    }
    let checks: &[Check] = match o.webhook {
        WebhookTarget::Service { .. } => {
            &[Check::Crds, Check::Served, Check::Webhooks, Check::Manager]
        }
        WebhookTarget::Url { .. } => &[Check::Crds, Check::Served, Check::Webhooks],
    };
    let mut waiting_for;
    loop {
        let outcome = match checks[stage] {
            Check::Crds => crds_established(client).await,
            Check::Served => instances_served(client, &o.namespace).await,
            Check::Webhooks => webhooks_answer(client, &o.namespace).await,
            Check::Manager => manager_available(client, &o.namespace).await,
        };
        match outcome {
            Ok(line) => {
                done.push(line);
                stage += 1;
                if stage == checks.len() {
                    return Ok(done);
                }
                continue;
            }
            Err(why) => waiting_for = why,
        }
        if Instant::now() >= deadline {
            return Err(NotReady {
                after: timeout,
                waiting_for,
            });
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

async fn crds_established(client: &kube::Client) -> Result<String, String> {
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
    let api: kube::Api<CustomResourceDefinition> = kube::Api::all(client.clone());
    for name in [
        "operators.kudo.dev",
        "operatorversions.kudo.dev",
        "instances.kudo.dev",
    ] {
        let crd = api
            .get_opt(name)
            .await
            .map_err(|e| {
                format!(
                    "CustomResourceDefinition/{name} cannot be read: {}",
                    kudo_cluster::said(&e)
                )
            })?
            .ok_or_else(|| format!("CustomResourceDefinition/{name} does not exist"))?;
        let established = crd
            .status
            .as_ref()
            .and_then(|s| s.conditions.as_ref())
            .is_some_and(|cs| {
                cs.iter()
                    .any(|c| c.type_ == "Established" && c.status == "True")
            });
        if !established {
            return Err(format!(
                "CustomResourceDefinition/{name} is not established yet"
            ));
        }
    }
    Ok("the kudo CRDs are established".into())
}

async fn instances_served(client: &kube::Client, namespace: &str) -> Result<String, String> {
    use kube::api::ListParams;
    let api: kube::Api<kudo_crd::v1beta2::Instance> =
        kube::Api::namespaced(client.clone(), namespace);
    api.list_metadata(&ListParams::default().limit(1))
        .await
        .map_err(|e| {
            format!(
                "kudo.dev/v1beta2 Instances are not served yet: {}",
                kudo_cluster::said(&e)
            )
        })?;
    Ok("kudo.dev/v1beta2 is served".into())
}

async fn webhooks_answer(client: &kube::Client, namespace: &str) -> Result<String, String> {
    use kube::api::PostParams;
    let api: kube::Api<kudo_crd::v1beta1::Instance> =
        kube::Api::namespaced(client.clone(), namespace);
    let probe: kudo_crd::v1beta1::Instance = serde_json::from_value(json!({
        "apiVersion": "kudo.dev/v1beta1", "kind": "Instance",
        "metadata": {"name": INIT_PROBE, "namespace": namespace},
        "spec": {"operatorVersion": {"name": INIT_PROBE}, "parameters": {}},
    }))
    .map_err(|e| format!("internal error: the probe Instance: {e}"))?;
    let params = PostParams {
        dry_run: true,
        field_manager: Some(INIT_FIELD_MANAGER.into()),
    };
    match api.create(&params, &probe).await {
        Ok(_) => Ok("the conversion and admission webhooks answer".into()),
        Err(kube::Error::Api(s)) if s.message.contains("denied the request") => {
            Ok("the conversion and admission webhooks answer".into())
        }
        Err(kube::Error::Api(s)) if s.code == 403 && !s.message.contains("webhook") => {
            Err(format!(
                "cannot check the webhooks: creating an Instance (dry run) in {namespace} is forbidden: {}",
                s.message
            ))
        }
        Err(e) => Err(format!(
            "the webhooks do not answer yet: {}",
            kudo_cluster::said(&e)
        )),
    }
}

async fn manager_available(client: &kube::Client, namespace: &str) -> Result<String, String> {
    use k8s_openapi::api::apps::v1::Deployment;
    let api: kube::Api<Deployment> = kube::Api::namespaced(client.clone(), namespace);
    let d = api
        .get_opt(MANAGER)
        .await
        .map_err(|e| {
            format!(
                "Deployment {namespace}/{MANAGER} cannot be read: {}",
                kudo_cluster::said(&e)
            )
        })?
        .ok_or_else(|| format!("Deployment {namespace}/{MANAGER} does not exist"))?;
    let available = d
        .status
        .as_ref()
        .and_then(|s| s.available_replicas)
        .unwrap_or(0);
    if available < 1 {
        return Err(format!(
            "Deployment {namespace}/{MANAGER} has no available replica yet"
        ));
    }
    Ok(format!("Deployment {namespace}/{MANAGER} is available"))
}

fn deployment(
    o: &Options,
    name: &str,
    image: &str,
    replicas: u32,
    args: Value,
    https_port: Option<u16>,
) -> Value {
    let mut container = json!({"name": name, "image": image, "args": args,
        "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}, "limits": {"memory": "256Mi"}},
        "securityContext": {"runAsNonRoot": true, "readOnlyRootFilesystem": true,
            "allowPrivilegeEscalation": false, "capabilities": {"drop": ["ALL"]}}});
    let mut pod = json!({"serviceAccountName": name, "containers": [], "volumes": []});
    if let Some(port) = https_port {
        container["ports"] = json!([{"name": "https", "containerPort": port}]);
        container["readinessProbe"] = json!({"httpGet": {"path": "/readyz", "port": port, "scheme": "HTTPS"}, "periodSeconds": 5});
        container["livenessProbe"] = json!({"httpGet": {"path": "/healthz", "port": port, "scheme": "HTTPS"}, "periodSeconds": 10});
        // Self-managed certificates: kept in the Secret WEBHOOK_SECRET by the webhook itself,
        // written for the server to a scratch volume (the root filesystem is read-only).
        container["volumeMounts"] = json!([{"name": "certs", "mountPath": "/certs"}]);
        container["env"] = json!([{"name": "POD_NAMESPACE",
            "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}}]);
        pod["volumes"] = json!([{"name": "certs", "emptyDir": {}}]);
        pod["affinity"] = json!({"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 100, "podAffinityTerm": {"topologyKey": "kubernetes.io/hostname",
                "labelSelector": {"matchLabels": labels(name)}}}]}});
    } else {
        // The manager: /healthz and /metrics over HTTP; its pod name is its Lease identity.
        container["ports"] = json!([{"name": "metrics", "containerPort": 8080}]);
        container["livenessProbe"] =
            json!({"httpGet": {"path": "/healthz", "port": 8080}, "periodSeconds": 10});
        container["env"] = json!([
            {"name": "POD_NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}},
            {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}]);
        if let Some(p) = pod.as_object_mut() {
            p.remove("volumes");
        }
    }
    pod["containers"] = json!([container]);
    json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": o.namespace, "labels": labels(name)},
        "spec": {"replicas": replicas, "selector": {"matchLabels": labels(name)},
            "template": {"metadata": {"labels": labels(name)}, "spec": pod}}})
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::admissionregistration::v1::{
        MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
    };
    use k8s_openapi::api::apps::v1::Deployment;
    use k8s_openapi::api::core::v1::{Namespace, Service, ServiceAccount};
    use k8s_openapi::api::policy::v1::PodDisruptionBudget;
    use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, Role, RoleBinding};
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

    /// Every object reads back as its Kubernetes type (a typo in a field would not), and
    /// serializes back to the same JSON (no field is lost on the way).
    fn check_typed(v: &Value) {
        fn roundtrip<T: serde::de::DeserializeOwned + serde::Serialize>(v: &Value) {
            let typed: T = serde_json::from_value(v.clone())
                .unwrap_or_else(|e| panic!("{} {}: {e}", v["kind"], v["metadata"]["name"]));
            let mut back = serde_json::to_value(&typed).unwrap();
            let mut orig = v.clone();
            for x in [&mut back, &mut orig] {
                x.as_object_mut().unwrap().remove("status");
            }
            assert_eq!(
                back, orig,
                "{} {} lost a field",
                v["kind"], v["metadata"]["name"]
            );
        }
        match v["kind"].as_str().unwrap() {
            "Namespace" => roundtrip::<Namespace>(v),
            "CustomResourceDefinition" => roundtrip::<CustomResourceDefinition>(v),
            "ServiceAccount" => roundtrip::<ServiceAccount>(v),
            "ClusterRole" => roundtrip::<ClusterRole>(v),
            "ClusterRoleBinding" => roundtrip::<ClusterRoleBinding>(v),
            "Role" => roundtrip::<Role>(v),
            "RoleBinding" => roundtrip::<RoleBinding>(v),
            "Deployment" => roundtrip::<Deployment>(v),
            "PodDisruptionBudget" => roundtrip::<PodDisruptionBudget>(v),
            "Service" => roundtrip::<Service>(v),
            "MutatingWebhookConfiguration" => roundtrip::<MutatingWebhookConfiguration>(v),
            "ValidatingWebhookConfiguration" => roundtrip::<ValidatingWebhookConfiguration>(v),
            other => panic!("unexpected kind {other}"),
        }
    }

    #[test]
    fn the_in_cluster_installation_is_complete_and_typed() {
        let objects = manifests(&Options::default());
        let kinds: Vec<&str> = objects
            .iter()
            .map(|o| o["kind"].as_str().unwrap())
            .collect();
        for k in [
            "Namespace",
            "CustomResourceDefinition",
            "Deployment",
            "PodDisruptionBudget",
            "Service",
            "MutatingWebhookConfiguration",
            "ValidatingWebhookConfiguration",
        ] {
            assert!(kinds.contains(&k), "{k} missing: {kinds:?}");
        }
        for o in &objects {
            check_typed(o);
        }
        let webhook = objects
            .iter()
            .find(|o| o["kind"] == "Deployment" && o["metadata"]["name"] == WEBHOOK)
            .unwrap();
        assert_eq!(webhook["spec"]["replicas"], 2);
        let ov = objects
            .iter()
            .find(|o| o["metadata"]["name"] == "operatorversions.kudo.dev")
            .unwrap();
        assert_eq!(ov["spec"]["conversion"]["strategy"], "Webhook");
        assert_eq!(
            ov["spec"]["conversion"]["webhook"]["clientConfig"]["service"]["path"],
            "/convert"
        );
        let m = objects
            .iter()
            .find(|o| o["kind"] == "MutatingWebhookConfiguration")
            .unwrap();
        assert_eq!(m["webhooks"][0]["failurePolicy"], "Fail");
        assert_eq!(m["webhooks"][0]["sideEffects"], "None");
    }

    #[test]
    fn the_manager_may_not_write_what_packages_hold_only_impersonate() {
        let objects = manifests(&Options::default());
        let role = objects
            .iter()
            .find(|o| o["kind"] == "ClusterRole" && o["metadata"]["name"] == MANAGER)
            .unwrap();
        let rules = role["rules"].as_array().unwrap();
        for rule in rules {
            for field in ["apiGroups", "resources", "verbs"] {
                let wild = rule[field]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|v| v == "*");
                assert!(!wild, "a wildcard in {field}: {rule}");
            }
        }
        // Writes only to kudo's kinds and events; impersonation only of ServiceAccounts.
        for rule in rules.iter().filter(|r| r.get("resources").is_some()) {
            let writes = rule["verbs"]
                .as_array()
                .unwrap()
                .iter()
                .any(|v| v != "get" && v != "list" && v != "watch");
            if writes {
                let group = rule["apiGroups"][0].as_str().unwrap();
                let resources: Vec<&str> = rule["resources"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|r| r.as_str().unwrap())
                    .collect();
                let allowed = match group {
                    "kudo.dev" => resources
                        .iter()
                        .all(|r| ["instances", "instances/status", "rollouts/status"].contains(r)),
                    "" => resources == ["events"] || resources == ["serviceaccounts"],
                    // Revisions: its own bookkeeping, no object a package holds.
                    "apps" => resources == ["controllerrevisions"],
                    _ => false,
                };
                assert!(allowed, "the manager writes {resources:?} of `{group}`");
            }
        }
        let sa = rules
            .iter()
            .find(|r| r["resources"] == json!(["serviceaccounts"]))
            .unwrap();
        assert_eq!(sa["verbs"], json!(["impersonate"]));
        let deployment = objects
            .iter()
            .find(|o| o["kind"] == "Deployment" && o["metadata"]["name"] == MANAGER)
            .unwrap();
        let args = &deployment["spec"]["template"]["spec"]["containers"][0]["args"];
        assert_eq!(args[1], "--default-service-account");
        assert_eq!(args[2], kudo_crd::labels::DEFAULT_SERVICE_ACCOUNT);
    }

    #[test]
    fn the_built_in_roles_cover_kudo_kinds_through_aggregation() {
        let objects = manifests(&Options::default());
        let find = |name: &str| {
            objects
                .iter()
                .find(|o| o["kind"] == "ClusterRole" && o["metadata"]["name"] == name)
                .unwrap_or_else(|| panic!("ClusterRole {name}"))
        };
        let cases = [
            (AGGREGATE_VIEW, "aggregate-to-view", false),
            (AGGREGATE_ADMIN, "aggregate-to-admin", true),
        ];
        for (name, label, writes) in cases {
            let role = find(name);
            assert_eq!(
                role["metadata"]["labels"][format!("rbac.authorization.k8s.io/{label}")],
                "true",
                "{name}"
            );
            let verbs = role["rules"][0]["verbs"].as_array().unwrap();
            assert_eq!(verbs.contains(&json!("create")), writes, "{name}");
            assert!(
                role["rules"][0]["resources"]
                    .as_array()
                    .unwrap()
                    .contains(&json!("instances")),
                "{name}"
            );
        }
        // Objects an Instance owns carry blockOwnerDeletion: admin may set it.
        assert_eq!(
            find(AGGREGATE_ADMIN)["rules"][1],
            json!({"apiGroups": ["kudo.dev"], "resources": ["instances/finalizers"], "verbs": ["update"]})
        );
        // Not `edit`: an Instance's writer acts with its ServiceAccount's rights (admin).
        assert!(!objects.iter().any(
            |o| o["metadata"]["labels"]["rbac.authorization.k8s.io/aggregate-to-edit"] == "true"
        ));
    }

    fn webhook_args(o: &Options) -> Vec<String> {
        let objects = manifests(o);
        let webhook = objects
            .iter()
            .find(|o| o["kind"] == "Deployment" && o["metadata"]["name"] == WEBHOOK)
            .expect("the webhook Deployment");
        let args = &webhook["spec"]["template"]["spec"]["containers"][0]["args"];
        serde_json::from_value(args.clone()).expect("args are strings")
    }

    #[test]
    fn more_manager_replicas_share_the_instances_by_shard() {
        let manager = |replicas| {
            let o = Options {
                manager_replicas: replicas,
                ..Options::default()
            };
            manifests(&o)
                .into_iter()
                .find(|o| o["kind"] == "Deployment" && o["metadata"]["name"] == MANAGER)
                .expect("the manager Deployment")
        };
        let args = |d: &Value| -> Vec<String> {
            serde_json::from_value(d["spec"]["template"]["spec"]["containers"][0]["args"].clone())
                .expect("args are strings")
        };
        let one = manager(1);
        assert_eq!(one["spec"]["replicas"], 1);
        assert_eq!(args(&one)[0], "--leader-elect");
        let three = manager(3);
        assert_eq!(three["spec"]["replicas"], 3);
        assert_eq!(args(&three)[..2], ["--shards", "3"]);
        assert!(!args(&three).contains(&"--leader-elect".to_string()));
        // Replaced, never rolled: replicas of two counts never run together.
        assert_eq!(three["spec"]["strategy"]["type"], "Recreate");
        check_typed(&three);
    }

    #[test]
    fn the_webhook_deployment_carries_the_certificate_lifetime_given() {
        use std::time::Duration;
        let defaults = webhook_args(&Options::default());
        assert!(
            !defaults
                .iter()
                .any(|a| a == "--cert-validity" || a == "--cert-renew-before"),
            "no lifetime given, the webhook's defaults: {defaults:?}"
        );
        let cases = [
            ((180, 120), ["3m", "2m"]),
            ((90 * 86400, 7 * 86400), ["90d", "7d"]),
            ((86400 + 3600, 3600), ["25h", "1h"]),
        ];
        for ((validity, renew_before), [v, r]) in cases {
            let lifetime = Lifetime::new(
                Duration::from_secs(validity),
                Duration::from_secs(renew_before),
            )
            .expect("a lifetime renewal can keep");
            let o = Options {
                webhook_cert: Some(lifetime),
                ..Options::default()
            };
            let args = webhook_args(&o);
            let tail: Vec<&str> = args
                .iter()
                .rev()
                .take(4)
                .rev()
                .map(String::as_str)
                .collect();
            assert_eq!(
                tail,
                ["--cert-validity", v, "--cert-renew-before", r],
                "{validity} s / {renew_before} s"
            );
            // What the webhook's flags read back (humantime) is what was given.
            assert_eq!(
                humantime::parse_duration(v),
                Ok(Duration::from_secs(validity))
            );
            assert_eq!(
                humantime::parse_duration(r),
                Ok(Duration::from_secs(renew_before))
            );
            for o in manifests(&o) {
                check_typed(&o);
            }
        }
    }

    #[test]
    fn every_installed_kind_has_its_api_resource() {
        for o in manifests(&Options::default()) {
            assert!(resource(&o).is_some(), "{}", o["kind"]);
        }
    }

    #[test]
    fn out_of_cluster_webhooks_are_called_by_url() {
        let o = Options {
            webhook: WebhookTarget::Url {
                url: "https://127.0.0.1:8443/".into(),
                ca_bundle: b"-----BEGIN CERTIFICATE-----\n".to_vec(),
            },
            ..Options::default()
        };
        let objects = manifests(&o);
        assert!(!objects.iter().any(|o| o["kind"] == "Service"));
        // Neither Deployment: the manager outside and one inside would both run every plan.
        assert!(!objects.iter().any(|o| o["kind"] == "Deployment"));
        // The ServiceAccounts (and their RBAC) are made for the processes outside to run as.
        for sa in [MANAGER, WEBHOOK] {
            assert!(
                objects
                    .iter()
                    .any(|o| o["kind"] == "ServiceAccount" && o["metadata"]["name"] == sa)
            );
        }
        let v = objects
            .iter()
            .find(|o| o["kind"] == "ValidatingWebhookConfiguration")
            .unwrap();
        let cc = &v["webhooks"][0]["clientConfig"];
        assert_eq!(cc["url"], "https://127.0.0.1:8443/admit/instance/validate");
        assert!(cc["caBundle"].as_str().unwrap().starts_with("LS0t"));
        for o in &objects {
            check_typed(o);
        }
    }
}
