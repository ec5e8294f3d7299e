//! Failures in the middle of a plan: the leading manager stopped (a planned restart, SIGTERM)
//! while another waits for the Lease, and the API server itself restarted. Each scenario has
//! the cluster to itself: it stops what every scenario shares.

use crate::harness::*;

/// The holder of the suite's Lease (`None` while it is free).
fn lease_holder(s: &Scenario) -> Option<String> {
    s.lease_holder(KUDO_NAMESPACE, &s.daemons.lease)
}

/// Waits until `identity` holds the Lease; returns how long that took.
fn wait_leader(s: &Scenario, identity: &str) -> Duration {
    wait_until(&format!("{identity} holds the Lease"), || {
        lease_holder(s).as_deref() == Some(identity)
    })
}

/// The `slow` operator installed as `name` (no wait): its `slow` step waits on a Deployment
/// whose Pods start `delay` seconds after they are scheduled. Returns once that step waits,
/// with the ConfigMap of the COMPLETE first step taken over by the test (a step `first` run
/// again would apply it with force and put the template's value back).
fn install_slow(s: &Scenario, name: &str, delay: u32) {
    s.install(&fixture("e2e/slow"), name)
        .param(&format!("delay={delay}"))
        .no_wait()
        .ok();
    // `first` is COMPLETE before `slow` starts (one phase, serial), and stays so.
    s.wait_step(name, "deploy", "slow", "IN_PROGRESS");
    assert_eq!(
        step_status(&s.instance(name), "deploy", "first"),
        "COMPLETE"
    );
    s.runtime
        .block_on(s.api("v1", "ConfigMap", "configmaps").patch(
            &format!("{name}-first"),
            &PatchParams::default(),
            &Patch::Merge(json!({"data": {"mark": "set-by-the-test"}})),
        ))
        .expect("the ConfigMap is patched");
}

/// The plan finished as if nothing had happened: COMPLETE, the same run (status not lost), the
/// first step not run again, the last one run.
fn finished_once(s: &Scenario, name: &str) {
    s.wait_plan(name, "deploy");
    let i = s.instance(name);
    assert_eq!(i["status"]["activePlan"]["uid"], "deploy-g1", "{i}");
    assert_eq!(
        i["status"]["planStatus"]["deploy"]["uid"], "deploy-g1",
        "{i}"
    );
    assert_eq!(
        s.config_map(&format!("{name}-first"))["mark"],
        "set-by-the-test"
    );
    assert_eq!(s.config_map(&format!("{name}-last"))["done"], "true");
    let d = s
        .get(
            &s.api("apps/v1", "Deployment", "deployments"),
            &format!("{name}-slow"),
        )
        .expect("the Deployment");
    assert_eq!(d["status"]["readyReplicas"], 2, "{d}");
}

/// Two managers, leader-elected; the leader is stopped with SIGTERM (a planned restart) while
/// a plan waits on Pods that take 20 s to start. The Lease passes at once (the leader releases
/// it, the other watches it), well within 10 s, and the other manager finishes the plan without
/// running a COMPLETE step again and without losing its status. Then the first manager comes
/// back and takes over again the same way.
#[test]
fn a_planned_restart_of_the_leader_fails_over_at_once_and_the_plan_finishes() {
    let Some(s) = Scenario::start_with_workloads("failover", true) else {
        return;
    };
    wait_leader(&s, MANAGER_A);
    install_slow(&s, "ha", 20);

    let b_metrics = free_port("127.0.0.1");
    let mut b = Some(s.daemons.spawn_manager_as("e2e-manager-b", b_metrics));
    // B is up and waiting for the Lease (its metrics answer once its server runs).
    wait_until("manager B serves its metrics", || {
        TcpStream::connect(("127.0.0.1", b_metrics)).is_ok()
    });
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(lease_holder(&s).as_deref(), Some(MANAGER_A));

    let stopped = Instant::now();
    terminate(
        &mut s.daemons.manager.lock().unwrap_or_else(|e| e.into_inner()),
        Duration::from_secs(15),
    );
    let stop_took = stopped.elapsed();
    wait_leader(&s, "e2e-manager-b");
    let failover = stopped.elapsed();
    say(&format!(
        "e2e: failover after SIGTERM: {:.2} s (the leader stopped in {:.2} s)",
        failover.as_secs_f64(),
        stop_took.as_secs_f64()
    ));
    assert!(
        failover <= Duration::from_secs(10),
        "failover took {failover:?}"
    );
    let i = s.instance("ha");
    assert_eq!(
        step_status(&i, "deploy", "slow"),
        "IN_PROGRESS",
        "stopped mid-plan: {i}"
    );
    finished_once(&s, "ha");
    assert!(reconciliations(b_metrics) > 0, "manager B ran the plan");

    // A comes back and waits; B is stopped the same way; A leads again.
    *s.daemons.manager.lock().unwrap_or_else(|e| e.into_inner()) = Some(s.daemons.spawn_manager());
    wait_until("manager A serves its metrics", || {
        TcpStream::connect(("127.0.0.1", s.daemons.metrics_port)).is_ok()
    });
    let stopped = Instant::now();
    terminate(&mut b, Duration::from_secs(15));
    wait_leader(&s, MANAGER_A);
    say(&format!(
        "e2e: failover back after SIGTERM: {:.2} s",
        stopped.elapsed().as_secs_f64()
    ));
    // A runs plans: an update completes.
    s.update("ha").param("replicas=1").ok();
}

/// The API server (with etcd, the controllers and the fake kubelet) stopped and started again
/// (`../shared/k8s/stop.sh` and `start.sh`, the same `K8S_RUN_DIR`) while a plan waits on Pods:
/// the manager and the webhook reconnect, the plan finishes without running a COMPLETE step
/// again, and an update after the restart goes through the webhook and runs.
#[test]
fn the_api_server_restarted_mid_plan_and_the_plan_finishes() {
    let Some(s) = Scenario::start_with_workloads("apiserver", true) else {
        return;
    };
    let k8s = kudo_testkit::shared_dir().join("k8s");
    let run_dir = std::env::var_os("K8S_RUN_DIR");
    let (Some(run_dir), true) = (run_dir, k8s.join("start.sh").is_file()) else {
        let why =
            "skipped: restarting the API server needs ../shared/k8s and the K8S_RUN_DIR it runs in";
        assert!(!kudo_testkit::in_ci(), "{why} (CI is set, so this fails)");
        say(why);
        return;
    };
    install_slow(&s, "rs", 25);
    // The control plane comes back as it runs now (RBAC, fake kubelets), whatever this
    // process's environment says: a restart into AlwaysAllow would void the tenancy scenarios.
    let mut settings = running_settings(Path::new(&run_dir));
    settings.push(("K8S_RUN_DIR", run_dir.to_string_lossy().into_owned()));
    let script = |name: &str| {
        let out = k8s_script(&k8s, name, &[], &settings);
        assert!(
            out.status.success(),
            "{name}: {}{}",
            text(&out.stdout),
            text(&out.stderr)
        );
    };
    let restarted = Instant::now();
    script("stop.sh");
    script("start.sh");
    say(&format!(
        "e2e: the API server was restarted in {:.1} s",
        restarted.elapsed().as_secs_f64()
    ));
    // A leader that could not renew its Lease for 8 s exits (code 1) to be restarted, as its
    // Deployment would: the test plays that part. The webhook rides it out.
    {
        let mut manager = s.daemons.manager.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(code) = manager.as_mut().and_then(|c| c.try_wait().ok().flatten()) {
            say(&format!(
                "e2e: the manager exited ({code}) while the API server was down; restarted"
            ));
            *manager = Some(s.daemons.spawn_manager());
        }
    }
    let webhook_exited = s
        .daemons
        .webhook
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .as_mut()
        .and_then(|c| c.try_wait().ok().flatten());
    assert_eq!(
        webhook_exited, None,
        "the webhook outlives an API server restart"
    );
    finished_once(&s, "rs");
    // `replicas` has no trigger: the operator's `update` plan runs.
    s.update("rs").params(&["replicas=1"]).ok();
    s.wait_plan("rs", "update");
}

/// The settings the control plane in `run_dir` runs with, read from its processes:
/// `K8S_AUTHORIZATION` from the API server's `--authorization-mode`, `FAKE_KUBELET=1` when its
/// fake kubelets run. What cannot be read is left to the environment.
fn running_settings(run_dir: &Path) -> Vec<(&'static str, String)> {
    let pid = |name: &str| {
        std::fs::read_to_string(run_dir.join(format!("{name}.pid")))
            .ok()
            .map(|p| p.trim().to_string())
            .filter(|p| Path::new(&format!("/proc/{p}")).exists())
    };
    let mut out = Vec::new();
    if let Some(p) = pid("apiserver")
        && let Ok(cmdline) = std::fs::read(format!("/proc/{p}/cmdline"))
    {
        let args: Vec<String> = cmdline
            .split(|b| *b == 0)
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect();
        let mode = args.iter().enumerate().find_map(|(i, a)| {
            a.strip_prefix("--authorization-mode=")
                .map(String::from)
                .or_else(|| (a == "--authorization-mode").then(|| args.get(i + 1).cloned())?)
        });
        if let Some(mode) = mode {
            out.push(("K8S_AUTHORIZATION", mode));
        }
    }
    if pid("fake-kubelet").is_some() {
        out.push(("FAKE_KUBELET", "1".to_string()));
    }
    out
}
