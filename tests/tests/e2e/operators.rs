//! The real KUDO operators (`../shared/corpus/kudo-operators-full/`) on a cluster whose
//! workloads become healthy (a fake kubelet on `../shared/k8s`, `FAKE_KUBELET=1`, or real
//! nodes), and plans that wait on workloads.

use crate::harness::*;

/// The real operators that install to COMPLETE on their own, each with the parameters it is
/// installed with. kafka's deploy plan starts with a Pipe task (its TLS files, made by a
/// busybox init container the fake kubelet runs, read with `exec`). cowsay's Pipe needs the
/// Internet (`tests/tests/e2e/pipe.rs`), and flink-demo installs its dependencies from a
/// repository (`tests/tests/e2e/repository.rs`).
const OPERATORS: &[(&str, &[&str])] = &[
    ("cassandra", &[]),
    ("confluent-rest-proxy", &[]),
    ("confluent-schema-registry", &[]),
    ("elastic", &[]),
    ("first-operator", &[]),
    ("flink", &[]),
    ("kafka", &[]),
    ("mysql", &[]),
    ("rabbitmq", &[]),
    ("redis", &[]),
    ("spark", &[]),
    // Five replicas: the plan completes only when the StatefulSet has five ready.
    ("zookeeper", &["NODE_COUNT=5"]),
];

/// What `namespace` still holds of Instance `instance`'s workloads: Deployments, StatefulSets
/// and Pods labelled with it (the Pods carry their template's labels, so they are found by the
/// owner chain instead: every Pod left in the namespace counts).
fn workloads_left(s: &Scenario, instance: &str) -> Vec<String> {
    let selector = format!("kudo.dev/instance={instance}");
    let mut left = Vec::new();
    for (version, kind, plural) in [
        ("apps/v1", "Deployment", "deployments"),
        ("apps/v1", "StatefulSet", "statefulsets"),
    ] {
        let list = s
            .runtime
            .block_on(
                s.api(version, kind, plural)
                    .list(&kube::api::ListParams::default().labels(&selector)),
            )
            .expect("the API server lists workloads");
        left.extend(
            list.items
                .iter()
                .map(|o| format!("{kind} {}", o.metadata.name.clone().unwrap_or_default())),
        );
    }
    let pods = s
        .runtime
        .block_on(s.api("v1", "Pod", "pods").list(&Default::default()))
        .expect("the API server lists Pods");
    left.extend(
        pods.items
            .iter()
            .map(|o| format!("Pod {}", o.metadata.name.clone().unwrap_or_default())),
    );
    left
}

/// Installs the operator `name` of the corpus in its own namespace and waits for its deploy
/// plan (`kudo install --wait`); then checks what the operator promises, uninstalls it and
/// waits for its workloads to go. Returns how long the install took.
fn install_to_complete(root: &Path, name: &str, params: &[&str]) -> Result<Duration, String> {
    let s = Scenario::start(&format!("op-{name}")).ok_or("no cluster")?;
    let started = Instant::now();
    let out = s
        .install(&root.join(name), name)
        .params(params)
        .args(&["--wait-time", "170s"])
        .output();
    if !out.status.success() {
        let status = s
            .kudo(&["plan", "status", "--instance", name, "-n", &s.namespace])
            .output()
            .map(|o| text(&o.stdout))
            .unwrap_or_default();
        return Err(format!("{}\n{status}", text(&out.stderr).trim()));
    }
    let took = started.elapsed();
    // What the cluster does not serve, or does not declare, is applied otherwise and said so.
    let expected: &[&str] = match name {
        "rabbitmq" => {
            &["Role rabbitmq-peer-discovery-rbac: applied as rbac.authorization.k8s.io/v1"]
        }
        "spark" => &[
            "CustomResourceDefinition sparkapplications.sparkoperator.k8s.io: applied as apiextensions.k8s.io/v1",
            "Deployment spark: dropped .spec.template.metadata.initializers",
        ],
        _ => &[],
    };
    let warnings = s.instance(name)["status"]["planStatus"]["deploy"]["warnings"].clone();
    for w in expected {
        let said = warnings
            .as_array()
            .into_iter()
            .flatten()
            .any(|x| x.as_str().is_some_and(|x| x.starts_with(w)));
        if !said {
            return Err(format!("no plan warning starting {w:?} in {warnings}"));
        }
    }
    if name == "kafka" {
        // The Pipe task's two files, each a Secret named after its step, the Pipe Pod gone.
        for key in ["privatekey", "certificate"] {
            let secret = format!(
                "kafka.deploy.deploykafka.generatetlscertificates.generatetlscertificates.{key}"
            );
            let found = s.get(&s.api("v1", "Secret", "secrets"), &secret);
            let found = found.ok_or(format!("the Pipe's Secret {secret} exists"))?;
            if found["data"].as_object().is_none_or(|d| d.len() != 1) {
                return Err(format!("Secret {secret} holds one file: {found}"));
            }
        }
        let pods = workloads_left(&s, name);
        if pods.iter().any(|p| p.contains("pipepod")) {
            return Err(format!("a Pipe Pod is left: {pods:?}"));
        }
    }
    if name == "cassandra" {
        // Issue 33: the manager renders an optional parameter without a value (BACKUP_PREFIX)
        // as KUDO does: '' in the restore script, not `<no value>`.
        let scripts = s
            .get(
                &s.api("v1", "ConfigMap", "configmaps"),
                "cassandra-node-scripts",
            )
            .ok_or("the cassandra-node-scripts ConfigMap exists")?;
        let data = scripts["data"].to_string();
        if data.contains("<no value>") || !data.contains("in prefix ''") {
            return Err(format!("node scripts not as KUDO renders them: {data}"));
        }
    }
    if name == "zookeeper" {
        let sts = s
            .get(
                &s.api("apps/v1", "StatefulSet", "statefulsets"),
                "zookeeper-zookeeper",
            )
            .ok_or("the zookeeper StatefulSet exists")?;
        if sts["status"]["readyReplicas"] != 5 {
            return Err(format!(
                "plan COMPLETE with {} of 5 replicas ready",
                sts["status"]["readyReplicas"]
            ));
        }
    }
    s.uninstall(name).ok();
    let deadline = Instant::now() + TIMEOUT;
    loop {
        let left = workloads_left(&s, name);
        if left.is_empty() {
            break;
        }
        if Instant::now() > deadline {
            return Err(format!("after uninstall, still there: {}", left.join(", ")));
        }
        std::thread::sleep(Duration::from_secs(1));
    }
    Ok(took)
}

/// Each of the 12 real KUDO operators that stand alone (kafka with its Pipe task) installs to COMPLETE
/// under RBAC (the manager as its ServiceAccount), all at once in their own namespaces;
/// zookeeper with five nodes completes only with five ready replicas; uninstalling each
/// removes its workloads. cassandra's ServiceMonitor needs the Prometheus operator's CRD: a
/// minimal one is installed first, as on a cluster that runs it.
#[test]
fn the_real_kudo_operators_install_to_complete_and_uninstall_cleanly() {
    let Some(s) = Scenario::start_with_workloads("operators", false) else {
        return;
    };
    let Some(shared) = kudo_testkit::shared() else {
        return;
    };
    s.service_monitor_crd();
    let root = shared.join("corpus/kudo-operators-full");
    let results: Vec<(&str, std::thread::Result<Result<Duration, String>>)> =
        std::thread::scope(|scope| {
            let runs: Vec<_> = OPERATORS
                .iter()
                .map(|(name, params)| {
                    let root = &root;
                    (
                        *name,
                        scope.spawn(move || install_to_complete(root, name, params)),
                    )
                })
                .collect();
            runs.into_iter().map(|(n, h)| (n, h.join())).collect()
        });
    let mut failed = Vec::new();
    for (name, result) in results {
        match result {
            Ok(Ok(took)) => say(&format!(
                "e2e: {name}: COMPLETE in {:.1} s",
                took.as_secs_f64()
            )),
            Ok(Err(why)) => failed.push(format!("{name}: {why}")),
            Err(_) => failed.push(format!("{name}: the scenario panicked (see above)")),
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n\n"));
}

/// A plan whose Pods run but never become Ready stays IN_PROGRESS, and its status names the
/// object it waits for and why.
#[test]
fn a_plan_whose_pods_never_become_ready_waits_and_says_for_what() {
    let Some(s) = Scenario::start_with_workloads("never-ready", false) else {
        return;
    };
    let package = fixture("e2e/never-ready");
    s.kudo(&[
        "install",
        &package.to_string_lossy(),
        "--instance",
        "nr",
        "-n",
        &s.namespace,
    ])
    .assert()
    .success();
    let says = |i: &Value| {
        i["status"]["planStatus"]["deploy"]["phases"][0]["steps"][0]["message"]
            .as_str()
            .unwrap_or("")
            .to_string()
    };
    wait_until(
        "the step says it waits for the Deployment's available replica",
        || says(&s.instance("nr")) == "Deployment nr-app: replicas: 0 of 1 available",
    );
    // Given time, it still waits: a Pod that is not Ready is no failure.
    std::thread::sleep(Duration::from_secs(12));
    let i = s.instance("nr");
    assert_eq!(
        i["status"]["planStatus"]["deploy"]["status"], "IN_PROGRESS",
        "{i}"
    );
    assert_eq!(says(&i), "Deployment nr-app: replicas: 0 of 1 available");
    let status = s
        .kudo(&["plan", "status", "--instance", "nr", "-n", &s.namespace])
        .output()
        .expect("kudo runs");
    assert!(
        text(&status.stdout)
            .contains("step app [IN_PROGRESS]: Deployment nr-app: replicas: 0 of 1 available"),
        "{}",
        text(&status.stdout)
    );
}

/// A StatefulSet the API server accepts but whose Pods it refuses as invalid (the real
/// zookeeper operator's `defaultMode` read as decimal 777): the plan fails at once with the
/// controller's words, `kudo install --wait` ends with them instead of waiting out its time,
/// and `kudo plan status` says why. A fixed version installs over it.
#[test]
fn a_plan_whose_pods_are_refused_as_invalid_fails_at_once_and_says_why() {
    let Some(s) = Scenario::start_with_workloads("invalid-pods", false) else {
        return;
    };
    let started = Instant::now();
    let out = s
        .install(&fixture("e2e/invalid-pods"), "bad")
        .args(&["--wait-time", "150s"])
        .output();
    let took = started.elapsed();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        took < Duration::from_secs(120),
        "--wait ended only after {took:?}"
    );
    for says in [
        "failed in phase main, step app",
        "FailedCreate",
        "defaultMode",
        "777",
    ] {
        assert!(err.contains(says), "{says} in: {err}");
    }
    let status = s
        .kudo(&["plan", "status", "--instance", "bad", "-n", &s.namespace])
        .output()
        .expect("kudo runs");
    let status = text(&status.stdout);
    assert!(
        status.contains(
            "step app [FATAL_ERROR]: StatefulSet bad-app: FailedCreate (StatefulSet bad-app)"
        ),
        "{status}"
    );
    // The author's fix, as a parameter here: the plan is over, so the change is not refused,
    // and its plan completes.
    s.update("bad").params(&["mode=420"]).ok();
    s.wait_plan("bad", "deploy");
}

/// A plan stuck waiting is left deliberately: without `--force` a change that runs another
/// plan is refused (by the CLI and by the admission webhook), with `--force` the write names
/// the run it supersedes, the output says so, and the new run replaces it.
#[test]
fn a_stuck_plan_is_superseded_only_with_force() {
    let Some(s) = Scenario::start("force") else {
        return;
    };
    let package = fixture("e2e/slow");
    // Pods that start in a day: the plan waits.
    s.install(&package, "st")
        .param("delay=86400")
        .no_wait()
        .ok();
    s.wait_step("st", "deploy", "slow", "IN_PROGRESS");
    // `note` runs the update plan: refused while deploy runs, by the CLI...
    let refused = s
        .kudo(&[
            "update",
            "--instance",
            "st",
            "-n",
            &s.namespace,
            "-p",
            "note=second",
        ])
        .output()
        .expect("kudo runs");
    assert_eq!(refused.status.code(), Some(1));
    assert!(
        text(&refused.stderr).contains("[plan-in-progress]"),
        "{}",
        text(&refused.stderr)
    );
    // ... and by the admission webhook, for a client that skips the CLI.
    let raw = refusal(s.patch_raw("st", json!({"spec": {"parameters": {"note": "second"}}})));
    assert!(
        raw.contains("plan `deploy` is scheduled or running"),
        "{raw}"
    );
    // With --force: the write names the run it supersedes, and says so.
    let out = s
        .kudo(&[
            "update",
            "--instance",
            "st",
            "-n",
            &s.namespace,
            "-p",
            "note=second",
            "--force",
            "-o",
            "json",
        ])
        .output()
        .expect("kudo runs");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).expect("a JSON report");
    assert_eq!(
        report["superseded"],
        json!({"plan": "deploy", "run": "deploy-g1"}),
        "{report}"
    );
    assert_eq!(report["plan"], "update", "{report}");
    let i = s.instance("st");
    assert_eq!(
        i["metadata"]["annotations"]["kudo.dev/supersede"], "deploy-g1",
        "{i}"
    );
    s.wait_plan("st", "update");
    let i = s.instance("st");
    assert_eq!(
        i["status"]["planStatus"]["deploy"]["status"], "ERROR",
        "{i}"
    );
    assert!(
        i["status"]["planStatus"]["deploy"]["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("superseded by plan `update`")),
        "{i}"
    );
    assert_eq!(s.config_map("st-last")["note"], "second");
}

/// Issue 23: `kudo plan trigger` of another plan while one runs is refused, by the CLI and by
/// the admission webhook (KUDO: "overriding an existing plan directly is NOT allowed"), and
/// nothing is superseded; with `--force` the trigger names the run it supersedes, and runs.
#[test]
fn a_direct_trigger_while_a_plan_runs_is_refused_unless_forced() {
    let Some(s) = Scenario::start("direct-trigger") else {
        return;
    };
    let package = fixture("e2e/slow");
    s.install(&package, "tr")
        .param("delay=86400")
        .no_wait()
        .ok();
    s.wait_step("tr", "deploy", "slow", "IN_PROGRESS");
    let trigger = |extra: &[&str]| {
        let mut args = vec![
            "plan",
            "trigger",
            "--name",
            "update",
            "--instance",
            "tr",
            "-n",
            &s.namespace,
        ];
        args.extend(extra);
        s.kudo(&args).output().expect("kudo runs")
    };
    let refused = trigger(&[]);
    assert_eq!(refused.status.code(), Some(1), "{}", text(&refused.stdout));
    let stderr = text(&refused.stderr);
    assert!(
        stderr.contains("cannot trigger plan `update`: plan `deploy` is scheduled or running")
            && stderr.contains("[plan-in-progress]"),
        "{stderr}"
    );
    assert!(!text(&refused.stdout).contains("triggered"));
    // A client that skips the CLI is refused by the webhook.
    let raw = refusal(s.patch_raw(
        "tr",
        json!({"spec": {"planExecution": {"planName": "update", "uid": "raw-1"}}}),
    ));
    assert!(
        raw.contains("cannot trigger plan `update`: plan `deploy` is scheduled or running"),
        "{raw}"
    );
    let i = s.instance("tr");
    assert!(i["spec"].get("planExecution").is_none(), "{i}");
    assert_eq!(i["status"]["activePlan"]["name"], "deploy", "{i}");
    assert_eq!(
        i["status"]["planStatus"]["deploy"]["status"], "IN_PROGRESS",
        "{i}"
    );
    // With --force: the run it supersedes is named, and the triggered plan runs to COMPLETE.
    let forced = trigger(&["--force", "--wait", "--wait-time", "2m"]);
    let stdout = text(&forced.stdout);
    assert!(forced.status.success(), "{stdout}{}", text(&forced.stderr));
    assert!(
        stdout.contains("--force: plan `deploy` (run deploy-g1) was scheduled or running"),
        "{stdout}"
    );
    assert!(stdout.contains("plan update COMPLETE"), "{stdout}");
    let i = s.instance("tr");
    assert_eq!(
        i["metadata"]["annotations"]["kudo.dev/supersede"], "deploy-g1",
        "{i}"
    );
    assert_eq!(
        i["status"]["planStatus"]["deploy"]["status"], "ERROR",
        "{i}"
    );
    assert!(
        i["status"]["planStatus"]["deploy"]["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("superseded by plan `update`")),
        "{i}"
    );
}
