//! Replicas that share the Instances (`kudo-manager --shards 3`, issue 49): each holds the
//! Lease of its shards, a replica killed mid-plan (SIGKILL) has its shards taken over by the
//! others, and its plans finish without a COMPLETE step run again; a replica started with
//! another count than the running one refuses to run.

use crate::harness::*;
use kudo_crd::shard;

const SHARDS: u32 = 3;
const INSTANCES: usize = 60;
/// Seconds the fake kubelet waits before starting each Instance's Pod: the plans are in their
/// `slow` step when a replica is killed.
const DELAY: u32 = 40;

/// The holder of shard `index`'s Lease (whatever its expiry).
fn holder(s: &Scenario, index: u32) -> Option<String> {
    s.lease_holder(
        KUDO_NAMESPACE,
        &shard::lease_name(&s.daemons.lease, index, SHARDS),
    )
}

/// What a manager wrote to its log files.
fn manager_log(s: &Scenario, identity: &str) -> String {
    ["log", "err"]
        .iter()
        .map(|ext| std::fs::read_to_string(s.daemons.dir.join(format!("{identity}.{ext}"))))
        .filter_map(Result::ok)
        .collect()
}

#[test]
fn three_sharded_managers_share_sixty_instances_and_one_killed_mid_plan_is_taken_over() {
    let Some(s) = Scenario::start_with_workloads("shards", true) else {
        return;
    };
    let shards = SHARDS.to_string();
    let sharded = ["--shards", shards.as_str()];

    // A replica started with --shards 3 beside the running leader (--leader-elect: one shard of
    // 1) refuses to run, saying why, and runs nothing.
    wait_until("the shared manager leads", || {
        s.lease_holder(KUDO_NAMESPACE, &s.daemons.lease).as_deref() == Some(MANAGER_A)
    });
    let odd = "e2e-shard-odd";
    let mut refused = s
        .daemons
        .spawn_manager_with(odd, free_port("127.0.0.1"), &sharded);
    let mut code = None;
    wait_until("the replica of another count exits", || {
        code = refused.try_wait().ok().flatten();
        code.is_some()
    });
    assert!(!code.is_some_and(|c| c.success()), "it exits with an error");
    let log = manager_log(&s, odd);
    assert!(
        log.contains("replicas disagree on the shard count")
            && log.contains("--shards 3")
            && log.contains(&s.daemons.lease),
        "{log}"
    );
    say(&format!(
        "e2e: a --shards 3 replica beside the leader refused: {}",
        log.lines()
            .find(|l| l.contains("disagree"))
            .unwrap_or_default()
            .trim()
    ));

    // The leader stops (SIGTERM: it releases its Lease); three sharded replicas start.
    terminate(
        &mut s.daemons.manager.lock().unwrap_or_else(|e| e.into_inner()),
        Duration::from_secs(15),
    );
    let ids = ["e2e-shard-a", "e2e-shard-b", "e2e-shard-c"];
    let ports: Vec<u16> = ids.iter().map(|_| free_port("127.0.0.1")).collect();
    let mut replicas: Vec<Option<Child>> = ids
        .iter()
        .zip(&ports)
        .map(|(id, port)| Some(s.daemons.spawn_manager_with(id, *port, &sharded)))
        .collect();
    let balanced = || {
        let holders: Vec<Option<String>> = (0..SHARDS).map(|i| holder(&s, i)).collect();
        ids.iter()
            .all(|id| holders.iter().filter(|h| h.as_deref() == Some(*id)).count() == 1)
    };
    let took = wait_until("each replica holds one shard", balanced);
    say(&format!(
        "e2e: 3 replicas hold one shard each after {:.1} s",
        took.as_secs_f64()
    ));

    // A fourth replica started with --shards 2 refuses too, naming the running count.
    let two = "e2e-shard-two";
    let mut refused = s
        .daemons
        .spawn_manager_with(two, free_port("127.0.0.1"), &["--shards", "2"]);
    wait_until("the --shards 2 replica exits", || {
        refused.try_wait().ok().flatten().is_some()
    });
    let log = manager_log(&s, two);
    assert!(
        log.contains("replicas disagree on the shard count")
            && log.contains("started with --shards 2")
            && log.contains("started with --shards 3"),
        "{log}"
    );
    assert!(balanced(), "the running replicas kept their shards");

    // 60 Instances, 8 installs at a time; each plan waits DELAY s in its `slow` step.
    let names: Vec<String> = (0..INSTANCES).map(|i| format!("sh{i:02}")).collect();
    let delay = format!("delay={DELAY}");
    for batch in names.chunks(8) {
        let children: Vec<Child> = batch
            .iter()
            .map(|n| {
                s.install(&fixture("e2e/slow"), n)
                    .params(&[&delay, "replicas=1"])
                    .no_wait()
                    .spawn()
            })
            .collect();
        for c in children {
            let out = c.wait_with_output().expect("kudo install ends");
            assert!(out.status.success(), "{}", both(&out));
        }
    }
    // Every `first` step COMPLETE: its ConfigMap taken over by the test, so that running it
    // again (with force) would show.
    let cms = s.api("v1", "ConfigMap", "configmaps");
    let mark = |n: &str, value: &str| {
        s.runtime
            .block_on(cms.patch(
                &format!("{n}-first"),
                &PatchParams::default(),
                &Patch::Merge(json!({"data": {"mark": value}})),
            ))
            .expect("the ConfigMap is patched");
    };
    for n in &names {
        s.wait_step(n, "deploy", "first", "COMPLETE");
        mark(n, "set-by-the-test");
    }

    // The replica running sh00 is killed while its plans wait in `slow`.
    let victim_shard = shard::of(&s.namespace, &names[0], SHARDS);
    let victim = holder(&s, victim_shard).expect("sh00's shard is held");
    let v = ids.iter().position(|id| *id == victim).expect("a replica");
    let in_flight: Vec<&String> = names
        .iter()
        .filter(|n| shard::of(&s.namespace, n, SHARDS) == victim_shard)
        .filter(|n| step_status(&s.instance(n), "deploy", "slow") == "IN_PROGRESS")
        .collect();
    assert!(!in_flight.is_empty(), "the victim's plans are mid-plan");
    let killed = Instant::now();
    stop(&mut replicas[v]);
    let live: Vec<&str> = ids.iter().copied().filter(|id| *id != victim).collect();
    wait_until("the killed replica's shard is taken over", || {
        holder(&s, victim_shard).is_some_and(|h| live.contains(&h.as_str()))
    });
    let takeover = killed.elapsed();
    say(&format!(
        "e2e: {victim} killed with {} plans in flight; its shard taken over after {:.1} s",
        in_flight.len(),
        takeover.as_secs_f64()
    ));

    // Every plan finishes once: COMPLETE, the same run, `first` not run again, the Deployment
    // of the step in flight applied once (its generation) and Ready.
    for n in &names {
        s.wait_plan(n, "deploy");
    }
    let finished = killed.elapsed();
    let deployments = s.api("apps/v1", "Deployment", "deployments");
    for n in &names {
        let i = s.instance(n);
        assert_eq!(
            i["status"]["planStatus"]["deploy"]["uid"], "deploy-g1",
            "{i}"
        );
        assert_eq!(
            s.config_map(&format!("{n}-first"))["mark"],
            "set-by-the-test",
            "{n}: the COMPLETE step `first` ran again"
        );
        assert_eq!(s.config_map(&format!("{n}-last"))["done"], "true");
        let d = s
            .get(&deployments, &format!("{n}-slow"))
            .expect("the Deployment");
        assert_eq!(d["metadata"]["generation"], 1, "{n}: applied once: {d}");
        assert_eq!(d["status"]["readyReplicas"], 1, "{d}");
        // Owned by exactly one live replica: its shard's Lease names it.
        let owner = holder(&s, shard::of(&s.namespace, n, SHARDS));
        assert!(
            owner.as_deref().is_some_and(|o| live.contains(&o)),
            "{n}: owned by {owner:?}, not a live replica"
        );
    }
    // The two left share the three shards: 2 and 1.
    let mut held: Vec<usize> = live
        .iter()
        .map(|id| {
            (0..SHARDS)
                .filter(|i| holder(&s, *i).as_deref() == Some(*id))
                .count()
        })
        .collect();
    held.sort_unstable();
    assert_eq!(held, [1, 2], "{live:?}");
    for (id, port) in ids.iter().zip(&ports) {
        if *id != victim {
            assert!(
                counter(*port, "kudo_manager_shards_held") > 0,
                "{id} holds shards"
            );
        }
    }
    // Drift at a bounded cost: once every object has been found clean, a quiet interval
    // (nothing changes) costs (almost) no dry run.
    let dry_runs = || -> u64 {
        ids.iter()
            .zip(&ports)
            .filter(|(id, _)| **id != victim)
            .map(|(_, port)| counter(*port, "kudo_manager_drift_dry_runs_total"))
            .sum()
    };
    // The marks put back as the template has them: no object differs from what kudo applies.
    for n in &names {
        mark(n, "from-the-template");
    }
    let interval = Duration::from_secs(
        DRIFT_INTERVAL
            .trim_end_matches('s')
            .parse()
            .expect("seconds"),
    );
    std::thread::sleep(interval * 2);
    let before = dry_runs();
    assert!(before > 0, "the first checks dry-ran the objects");
    std::thread::sleep(interval);
    let quiet = dry_runs() - before;
    say(&format!(
        "e2e: drift dry runs over one quiet interval ({DRIFT_INTERVAL}) of {} Instances (3 objects each): {quiet}",
        names.len()
    ));
    // A small fixed bound, not 0: an object whose status the cluster still updates (a
    // Deployment's conditions) is dry-run once more. Before issue 49, every object was: 180.
    assert!(
        quiet <= 3,
        "no object changed, so (almost) none is dry-run: {quiet}"
    );
    say(&format!(
        "e2e: {} Instances COMPLETE {:.1} s after the kill; the victim's {} plans in flight finished without a step run twice",
        names.len(),
        finished.as_secs_f64(),
        in_flight.len()
    ));

    // The shared manager back, as the other scenarios expect it.
    for r in &mut replicas {
        terminate(r, Duration::from_secs(15));
    }
    *s.daemons.manager.lock().unwrap_or_else(|e| e.into_inner()) = Some(s.daemons.spawn_manager());
    wait_until("the shared manager leads again", || {
        s.lease_holder(KUDO_NAMESPACE, &s.daemons.lease).as_deref() == Some(MANAGER_A)
    });
}
