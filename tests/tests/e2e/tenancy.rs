//! Tenancy (`docs/tenancy.md`): a tenant, the ServiceAccount `tenant` of one namespace with
//! only the built-in `admin` ClusterRole bound there (kudo's kinds come with it, through
//! `kudo init`'s aggregation), runs `kudo` and writes Instances with its own token. What lives
//! in its namespace installs; anything outside it or cluster-scoped is refused, whether asked
//! for through `kudo install` or through an Instance applied as kubectl would.

use crate::harness::*;

/// The tenant's ServiceAccount.
const TENANT: &str = "tenant";

/// A tenant of `s`'s namespace: the ServiceAccount [`TENANT`] bound to `admin` there (nothing
/// else), acting through a kubeconfig with its token ([`Kube::apply`] as it is what `kubectl
/// apply` would do for it; [`Change::by`] runs kudo as it).
pub(crate) fn tenant(s: &Scenario) -> Kube {
    s.apply(&json!({"apiVersion": "v1", "kind": "ServiceAccount",
        "metadata": {"name": TENANT, "namespace": s.namespace}}));
    s.apply(&json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
        "metadata": {"name": "tenant-admin", "namespace": s.namespace},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "admin"},
        "subjects": [{"kind": "ServiceAccount", "name": TENANT, "namespace": s.namespace}]}));
    let kubeconfig = s
        .daemons
        .dir
        .join(format!("{}-{TENANT}.kubeconfig", s.namespace));
    service_account_kubeconfig(&s.kubeconfig, &s.namespace, TENANT, &kubeconfig);
    Kube::connect(&kubeconfig)
}

/// Whether `tenant` may list Secrets in kube-system (it must never).
fn lists_kube_system_secrets(tenant: &Kube) -> bool {
    let secrets = tenant.namespaced("kube-system", "v1", "Secret", "secrets");
    match tenant.runtime.block_on(secrets.list(&Default::default())) {
        Ok(_) => true,
        Err(kube::Error::Api(e)) if e.code == 403 => false,
        Err(e) => panic!("listing Secrets in kube-system as the tenant: {e}"),
    }
}

/// The e2e fixture package `name`.
fn package(name: &str) -> PathBuf {
    fixture("e2e").join(name)
}

/// A tenant installs an operator whose objects all live in its namespace: the ServiceAccount
/// `kudo-instance` and its RoleBinding to `admin` are made with the tenant's token, the plan
/// (a ConfigMap, then a Deployment whose health is read through the impersonated client)
/// completes, and the tenant's uninstall runs to the end.
#[test]
fn a_tenant_installs_an_operator_whose_objects_live_in_its_namespace() {
    let Some(s) = Scenario::start_with_workloads("tenant-ok", false) else {
        return;
    };
    let t = tenant(&s);
    assert!(!lists_kube_system_secrets(&t));
    let started = Instant::now();
    let out = s
        .install(&package("tenant-app"), "app")
        .param("greeting=hi")
        .by(&t)
        .ok();
    let stderr = text(&out.get_output().stderr);
    assert!(
        stderr.contains(&format!(
            "ServiceAccount {}/kudo-instance created",
            s.namespace
        )),
        "{stderr}"
    );
    say(&format!(
        "e2e: the tenant's install completed in {:.1} s",
        started.elapsed().as_secs_f64()
    ));
    let inst = s.instance("app");
    assert_eq!(inst["spec"]["serviceAccountName"], "kudo-instance");
    assert_eq!(inst["status"]["planStatus"]["deploy"]["status"], "COMPLETE");
    assert_eq!(s.config_map("app-config")["greeting"], "hi");
    let deployment = s.get(&s.api("apps/v1", "Deployment", "deployments"), "app-app");
    assert_eq!(
        deployment.expect("the Deployment exists")["status"]["availableReplicas"],
        1
    );
    // No binding outside the namespace was needed, so none was made.
    let crb = s.cluster_api(
        "rbac.authorization.k8s.io/v1",
        "ClusterRoleBinding",
        "clusterrolebindings",
    );
    assert!(
        s.get(&crb, &format!("kudo:{}:kudo-instance", s.namespace))
            .is_none()
    );
    // Issue 26: what the API server refuses is one sentence naming the right to ask for.
    let out = t
        .kudo(&["get", "instances", "-n", "kube-system"])
        .assert()
        .code(1);
    let stderr = text(&out.get_output().stderr);
    assert!(
        stderr.contains(
            "may not list instances.kudo.dev in namespace kube-system: ask for the verb list on \
             instances.kudo.dev in namespace kube-system"
        ) && !stderr.contains("Status {"),
        "{stderr}"
    );
    // A namespace that does not exist: as the cluster's admin, the hint to make it.
    let missing = format!("{}-none", s.namespace);
    let out = s
        .kudo(&[
            "install",
            &package("tenant-app").to_string_lossy(),
            "-n",
            &missing,
        ])
        .assert()
        .code(1);
    let stderr = text(&out.get_output().stderr);
    assert!(
        stderr.contains(&format!(
            "namespace {missing}: does not exist: use --create-namespace"
        )) && !stderr.contains("Status {"),
        "{stderr}"
    );
    let out = s
        .kudo(&[
            "install",
            &package("tenant-app").to_string_lossy(),
            "-n",
            &missing,
            "--create-namespace",
            "--dry-run",
        ])
        .assert()
        .success();
    let stdout = text(&out.get_output().stdout);
    assert!(
        stdout.contains(&format!("Namespace {missing} would be created")),
        "{stdout}"
    );
    let namespaces = s.cluster_api("v1", "Namespace", "namespaces");
    assert!(s.get(&namespaces, &missing).is_none(), "--dry-run wrote it");

    let out = s.uninstall("app").by(&t).ok();
    let stdout = text(&out.get_output().stdout);
    assert!(
        stdout.contains(&format!(
            "Instance {}/app deleted (it is gone)",
            s.namespace
        )) && stdout.contains("used by no other Instance (--prune deletes it)")
            && !stdout.contains("cleanup"),
        "{stdout}"
    );
    assert!(s.get(&s.instances("v1beta2"), "app").is_none());
}

/// The escalation of issue 23: a package whose template binds `cluster-admin` to the tenant's
/// ServiceAccount, and one that writes into kube-system. `kudo install` refuses both before
/// writing anything (the API server will not let the tenant bind `kudo-instance` beyond its
/// namespace); Instances of them applied with the tenant's rights (kubectl) get their plans
/// failed by the manager, naming the object and the ServiceAccount. Afterwards the tenant still
/// cannot list Secrets in kube-system, and nothing was made outside its namespace.
#[test]
fn a_tenant_cannot_escalate_through_kudo_install_or_an_instance_applied_with_kubectl() {
    let Some(s) = Scenario::start("tenant-escalate") else {
        return;
    };
    let ns = s.namespace.clone();
    let t = tenant(&s);
    assert!(!lists_kube_system_secrets(&t));
    let crbs = s.cluster_api(
        "rbac.authorization.k8s.io/v1",
        "ClusterRoleBinding",
        "clusterrolebindings",
    );

    // Through `kudo install`: refused, nothing written.
    for (pkg, instance, refused) in [
        (
            "escalate",
            "esc",
            format!(
                "ClusterRoleBinding kudo:{ns}:kudo-instance (to cluster-admin, for the cluster-scoped ClusterRoleBinding {ns}-esc-escalate)"
            ),
        ),
        (
            "elsewhere",
            "away",
            format!(
                "RoleBinding kube-system/kudo:{ns}:kudo-instance (to admin in namespace kube-system, for ConfigMap {ns}-away-planted)"
            ),
        ),
    ] {
        let out = s.install(&package(pkg), instance).by(&t).assert().code(1);
        let stderr = text(&out.get_output().stderr);
        say(&format!(
            "e2e: the tenant's `kudo install {pkg}`: {}",
            stderr.trim()
        ));
        assert!(stderr.contains(&refused), "{stderr}");
        assert!(stderr.contains("may not create"), "{stderr}");
        assert!(stderr.contains("ask for the verb create"), "{stderr}");
        assert!(!stderr.contains("Status {"), "{stderr}");
        assert!(stderr.contains("nothing was installed"), "{stderr}");
        assert!(s.get(&s.instances("v1beta2"), instance).is_none());
        // Not even the namespace's ServiceAccount: every binding went through a dry run first.
        let sas = s.api("v1", "ServiceAccount", "serviceaccounts");
        assert!(s.get(&sas, "kudo-instance").is_none(), "{pkg}");
    }

    // Through Instances applied as kubectl would, once the tenant has a ServiceAccount for its
    // plans (its own `kudo install` of an operator that stays in the namespace).
    s.install(&configs(), "fine").by(&t).ok();
    for (pkg, instance, refused) in [
        (
            "escalate",
            "esc-raw",
            format!(
                "ServiceAccount {ns}/kudo-instance may not apply ClusterRoleBinding {ns}-esc-raw-escalate (cluster-scoped): clusterrolebindings.rbac.authorization.k8s.io \"{ns}-esc-raw-escalate\" is forbidden"
            ),
        ),
        (
            "elsewhere",
            "away-raw",
            format!(
                "ServiceAccount {ns}/kudo-instance may not apply ConfigMap {ns}-away-raw-planted (namespace kube-system): configmaps \"{ns}-away-raw-planted\" is forbidden"
            ),
        ),
    ] {
        let loaded = kudo_pkg::Package::load(&package(pkg)).expect("the fixture loads");
        let (op, ov) = kudo_crd::package::objects(&loaded, &ns);
        for o in [serde_json::to_value(op), serde_json::to_value(ov)] {
            t.try_apply(&o.expect("JSON"))
                .expect("the tenant may write Operators and OperatorVersions (aggregated admin)");
        }
        let ov_name = loaded.operator_version_name();
        t.try_apply(
            &json!({"apiVersion": "kudo.dev/v1beta2", "kind": "Instance",
                "metadata": {"name": instance, "namespace": ns},
                "spec": {"operatorVersion": {"name": ov_name}}}),
        )
        .expect("the tenant may write Instances (aggregated admin)");
        let started = Instant::now();
        wait_until(&format!("the plan of {instance} fails"), || {
            s.instance(instance)["status"]["planStatus"]["deploy"]["status"] == "FATAL_ERROR"
        });
        let inst = s.instance(instance);
        let message = inst["status"]["planStatus"]["deploy"]["phases"][0]["steps"][0]["message"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        say(&format!(
            "e2e: Instance {instance} applied by the tenant: FATAL_ERROR after {:.1} s: {message}",
            started.elapsed().as_secs_f64()
        ));
        assert!(message.starts_with(&refused), "{message}");
        let out = t
            .kudo(&["plan", "status", "--instance", instance, "-n", &ns])
            .assert()
            .success();
        assert!(text(&out.get_output().stdout).contains("FATAL_ERROR"));
    }

    // Nothing reached outside the namespace.
    for name in [
        format!("{ns}-esc-escalate"),
        format!("{ns}-esc-raw-escalate"),
        format!("kudo:{ns}:kudo-instance"),
    ] {
        assert!(s.get(&crbs, &name).is_none(), "ClusterRoleBinding {name}");
    }
    let kube_system = s.namespaced("kube-system", "v1", "ConfigMap", "configmaps");
    for name in [
        format!("{ns}-away-planted"),
        format!("{ns}-away-raw-planted"),
    ] {
        assert!(
            s.get(&kube_system, &name).is_none(),
            "ConfigMap kube-system/{name}"
        );
    }
    assert!(
        !lists_kube_system_secrets(&t),
        "the tenant lists Secrets in kube-system"
    );
    say("e2e: afterwards the tenant still cannot list Secrets in kube-system (403)");
}

/// Issue 33: a Pipe task runs a Pod and reads its files with `exec` as the Instance's
/// ServiceAccount. The tenant installs the real kafka operator (a Pipe task first) to COMPLETE
/// with its own token. A ServiceAccount whose bindings exist but lack `pods/exec` is named
/// before anything is created: `kudo install --service-account` refuses with nothing written,
/// and an Instance applied naming it fails its plan at once, with no Pipe Pod made.
#[test]
fn a_tenant_installs_kafka_and_a_service_account_without_exec_is_named_first() {
    let Some(s) = Scenario::start_with_workloads("tenant-pipe", false) else {
        return;
    };
    let Some(shared) = kudo_testkit::shared() else {
        return;
    };
    // kafka's default NodePort listener applies a ClusterRole (to read Nodes), which a
    // tenant may not grant: the tenant asks for a LoadBalancer listener.
    const LISTENER: &str = "EXTERNAL_ADVERTISED_LISTENER_TYPE=LoadBalancer";
    let kafka = shared.join("corpus/kudo-operators-full/kafka");
    let t = tenant(&s);
    let started = Instant::now();
    s.install(&kafka, "kafka")
        .param(LISTENER)
        .args(&["--wait-time", "170s"])
        .by(&t)
        .ok();
    say(&format!(
        "e2e: the tenant's kafka install completed in {:.1} s",
        started.elapsed().as_secs_f64()
    ));
    // A ServiceAccount made by the namespace's admin with a Role that may do everything a
    // Pipe takes but exec, bound under the name `kudo install` would use.
    s.apply(&json!({"apiVersion": "v1", "kind": "ServiceAccount",
        "metadata": {"name": "limited", "namespace": s.namespace}}));
    s.apply(&json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
        "metadata": {"name": "no-exec", "namespace": s.namespace},
        "rules": [{"apiGroups": [""], "resources": ["pods", "pods/log", "configmaps", "secrets", "services", "serviceaccounts"], "verbs": ["*"]},
                  {"apiGroups": ["apps", "policy"], "resources": ["*"], "verbs": ["*"]}]}));
    s.apply(
        &json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
        "metadata": {"name": "limited-admin", "namespace": s.namespace},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "no-exec"},
        "subjects": [{"kind": "ServiceAccount", "name": "limited", "namespace": s.namespace}]}),
    );
    let refused = s
        .install(&kafka, "k2")
        .param(LISTENER)
        .args(&["--service-account", "limited"])
        .no_wait()
        .by(&t)
        .output();
    let err = text(&refused.stderr);
    assert_eq!(refused.status.code(), Some(1), "{err}");
    for says in [
        &format!(
            "ServiceAccount {}/limited may not create pods/exec, get pods/exec",
            s.namespace
        )[..],
        "Pipe task `generate-tls-certificates`",
        "nothing was installed",
    ] {
        assert!(err.contains(says), "{says} in: {err}");
    }
    assert!(s.get(&s.instances("v1beta2"), "k2").is_none());
    // The same Instance applied as kubectl would (the OperatorVersion is there from the first
    // install): the plan fails before its Pipe Pod is made.
    let ov = s.instance("kafka")["spec"]["operatorVersion"].clone();
    t.try_apply(
        &json!({"apiVersion": "kudo.dev/v1beta2", "kind": "Instance",
            "metadata": {"name": "k3", "namespace": s.namespace},
            "spec": {"operatorVersion": ov, "serviceAccountName": "limited"}}),
    )
    .expect("the tenant may write Instances");
    wait_until("k3's deploy plan fails naming the rights", || {
        let i = s.instance("k3");
        i["status"]["planStatus"]["deploy"]["status"] == "FATAL_ERROR"
    });
    let i = s.instance("k3");
    let message = i["status"]["planStatus"]["deploy"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        message.contains(&format!(
            "ServiceAccount {}/limited may not create pods/exec, get pods/exec",
            s.namespace
        )) && message.contains("nothing of plan `deploy` was applied"),
        "{i}"
    );
    let pods = s
        .runtime
        .block_on(s.api("v1", "Pod", "pods").list(&Default::default()))
        .expect("the API server lists Pods");
    assert!(
        !pods.items.iter().any(|p| p
            .metadata
            .name
            .as_deref()
            .is_some_and(|n| n.starts_with("k3."))),
        "no Pipe Pod of k3"
    );
}

/// A tenant's `kudo diff` of an upgrade that adds a Role and its RoleBinding (the binding first
/// in template order, as kafka's `configuration` task has them) compares every object: the
/// Role's dry run passes, and the RoleBinding's, refused alone (RBAC's escalation check reads a
/// Role a dry run never made), is compared as it would be sent, after its Role. Nothing is
/// "not compared" that the tenant could apply; the upgrade then applies both.
#[test]
fn a_tenants_diff_compares_a_role_binding_after_the_role_the_plan_creates() {
    let Some(s) = Scenario::start("tenant-diff") else {
        return;
    };
    let tenant = tenant(&s);
    let rbac = |v: &str| fixture("e2e/rbac-app").join(v);
    s.install(&rbac("v1"), "ra").by(&tenant).ok();
    let out = tenant
        .kudo(&[
            "diff",
            &rbac("v2").to_string_lossy(),
            "--instance",
            "ra",
            "-n",
            &s.namespace,
            "-o",
            "json",
        ])
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    let diff: Value = serde_json::from_slice(&out).expect("JSON");
    let objects = diff["objects"].as_array().cloned().unwrap_or_default();
    let actions: Vec<(String, String)> = objects
        .iter()
        .map(|o| {
            (
                format!(
                    "{} {}",
                    o["kind"].as_str().unwrap_or(""),
                    o["name"].as_str().unwrap_or("")
                ),
                o["action"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    assert_eq!(
        actions,
        // In apply order (the Role first); the ConfigMap's label names the new version.
        [
            ("Role ra-reader".to_string(), "create".to_string()),
            ("ConfigMap ra-config".to_string(), "update".to_string()),
            ("RoleBinding ra-reader".to_string(), "create".to_string()),
        ],
        "{diff}"
    );
    assert!(objects.iter().all(|o| o["error"].is_null()), "{diff}");
    let notes = diff["notes"].to_string();
    assert!(
        notes.contains("Role") && notes.contains("ra-reader"),
        "{diff}"
    );
    s.upgrade(&rbac("v2"), "ra").by(&tenant).ok();
    let bindings = s.api(
        "rbac.authorization.k8s.io/v1",
        "RoleBinding",
        "rolebindings",
    );
    assert!(
        s.get(&bindings, "ra-reader").is_some(),
        "the RoleBinding applied"
    );
}
