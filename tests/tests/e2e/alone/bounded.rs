//! The manager bounded (issue 38 item 5): an Instance whose rendered object the API server
//! refuses with a huge error (a 200 KiB `backup/schedule`, echoed back twice in the 422) gets
//! a status that says why in a bounded message, its plan is not restarted over and over, and
//! the manager's log does not grow by megabytes.

use crate::harness::*;

/// The longest message the manager writes into a status (`docs/limits.md`).
const STATUS_MESSAGE_BOUND: usize = 4096;
/// How long the scenario watches the looping Instance.
const WATCHED: Duration = Duration::from_secs(60);

/// The bytes the shared manager has logged so far (stdout and stderr).
fn manager_log_bytes(s: &Scenario) -> u64 {
    ["manager.log", "manager.err"]
        .iter()
        .filter_map(|f| std::fs::metadata(s.daemons.dir.join(f)).ok())
        .map(|m| m.len())
        .sum()
}

/// The shared manager's whole log (stdout and stderr).
fn manager_log(s: &Scenario) -> String {
    ["manager.log", "manager.err"]
        .iter()
        .map(|f| std::fs::read(s.daemons.dir.join(f)).unwrap_or_default())
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .collect()
}

/// Every message string under the Instance's status, with where it is.
fn messages(status: &Value, at: String, out: &mut Vec<(String, usize)>) {
    match status {
        Value::Object(m) => {
            for (k, v) in m {
                let here = format!("{at}/{k}");
                if k == "message" {
                    out.push((here.clone(), v.as_str().map_or(0, str::len)));
                }
                messages(v, here, out);
            }
        }
        Value::Array(a) => {
            for (i, v) in a.iter().enumerate() {
                messages(v, format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

/// A CronJob whose 200 KiB `schedule` the API server refuses, echoing it twice in its 422:
/// within a minute the Instance's status says the step failed, naming the CronJob and
/// `schedule`, in a message of at most 4 KiB; the plan starts once; the manager logs less than
/// 1 MB. (The 1 MB value is now refused at admission, past the policy's 256 KiB bound,
/// `kudo_policy::limits`; 200 KiB is the largest kind still admitted. Uncut, its three copies of
/// the 400 KiB error and the value in `status.applied` came to 1.4 MB of status; the refused
/// status with a value too large for any status is the manager tests' case.)
#[test]
fn an_object_refused_with_a_huge_error_gets_a_bounded_status_and_no_restart_loop() {
    let Some(s) = Scenario::start_alone("bounded") else {
        return;
    };
    s.instance_service_account();
    let values = s.daemons.dir.join(format!("bounded-{}.yaml", s.namespace));
    let huge = "x".repeat(200 * 1024);
    std::fs::write(&values, format!("backup:\n  schedule: \"{huge}\"\n")).expect("writable");
    let log_before = manager_log_bytes(&s);
    let started = Instant::now();
    let package = fixture("e2e/bounded");
    s.kudo(&[
        "install",
        &package.to_string_lossy(),
        "--instance",
        "big",
        "-n",
        &s.namespace,
        "-P",
        &values.to_string_lossy(),
    ])
    .assert()
    .success();
    let step = |i: &Value| i["status"]["planStatus"]["deploy"]["phases"][0]["steps"][0].clone();
    wait_until("the Instance's status says why its step failed", || {
        let i = s.instance("big");
        i["status"]["planStatus"]["deploy"]["status"] == "FATAL_ERROR"
            && step(&i)["status"] == "FATAL_ERROR"
    });
    say(&format!(
        "e2e: bounded: the status said why after {:.1} s",
        started.elapsed().as_secs_f64()
    ));
    if let Some(rest) = WATCHED.checked_sub(started.elapsed()) {
        std::thread::sleep(rest);
    }
    let grew = manager_log_bytes(&s) - log_before;
    let i = s.instance("big");
    let status_bytes = serde_json::to_vec(&i["status"]).map_or(0, |v| v.len());
    say(&format!(
        "e2e: bounded: in {:.0} s the manager logged {grew} bytes; the status is {status_bytes} bytes",
        started.elapsed().as_secs_f64()
    ));
    // The step says why, naming the object and the field, within the bound.
    let message = step(&i)["message"].as_str().unwrap_or("").to_string();
    assert!(
        message.contains("CronJob big-backup") && message.contains("schedule"),
        "{}",
        &message[..message.len().min(2000)]
    );
    let mut all = Vec::new();
    messages(&i["status"], String::new(), &mut all);
    assert!(!all.is_empty(), "the status has messages: {}", i["status"]);
    for (at, len) in &all {
        assert!(
            *len <= STATUS_MESSAGE_BOUND,
            "status{at} is {len} bytes, over {STATUS_MESSAGE_BOUND}"
        );
    }
    let ready = condition_of(&i, "Ready");
    assert_eq!(ready["status"], "False", "{ready}");
    assert_eq!(ready["reason"], "PlanFailed", "{ready}");
    // With the messages cut, the whole status fits: the run is recorded as applied.
    assert!(
        i["status"]["applied"].is_object(),
        "{}",
        &i["status"].to_string()[..2000.min(i["status"].to_string().len())]
    );
    // The log: under 1 MB for the minute, and the plan started once.
    assert!(
        grew < 1024 * 1024,
        "the manager logged {grew} bytes in a minute"
    );
    // The namespace is the scenario's own: every line naming the Instance is about this run.
    let log = manager_log(&s);
    let key = format!("{}/big", s.namespace);
    let starts = log
        .lines()
        .filter(|l| l.contains(&key) && l.contains("plan started"))
        .count();
    assert_eq!(starts, 1, "plan deploy of {key} started {starts} times");
}
