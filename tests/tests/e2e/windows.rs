//! Maintenance windows of an Instance (issue 48, `spec.window`): a change made outside the
//! window waits, with nothing applied, and starts when the window opens; `--ignore-window`
//! runs one now, and its revision says so, with who asked.

use crate::harness::*;
use jiff::{SignedDuration, Timestamp};

/// The fixture's ConfigMap of Instance `name`, whole (its resourceVersion says whether anything
/// wrote it).
fn config(s: &Scenario, name: &str) -> Value {
    let cm = s.get(
        &s.api("v1", "ConfigMap", "configmaps"),
        &format!("{name}-config"),
    );
    cm.expect("the ConfigMap exists")
}

/// `kudo history NAME -o json`: the revisions, oldest first.
fn history(s: &Scenario, name: &str) -> Vec<Value> {
    let h = s.json(&["history", name, "-n", &s.namespace, "-o", "json"]);
    h.as_array().cloned().unwrap_or_default()
}

#[test]
fn a_change_outside_the_window_waits_for_it_and_ignore_window_runs_now() {
    let Some(s) = Scenario::start("window") else {
        return;
    };
    let fleet = fixture("e2e/fleet").join("v1");
    s.install(&fleet, "w").ok();
    // A window that opens at the start of a minute 45 to 105 s from now, for ten minutes.
    let secs = Timestamp::now().as_second();
    let opens = Timestamp::from_second(((secs + 45) / 60 + 1) * 60).expect("a time");
    let utc = opens.to_zoned(jiff::tz::TimeZone::UTC);
    let schedule = format!("{} {} * * *", utc.minute(), utc.hour());
    s.patch_raw(
        "w",
        json!({"spec": {"window": {"schedule": schedule, "duration": "10m"}}}),
    )
    .expect("the window is admitted");
    // Setting the window runs nothing.
    let before = config(&s, "w");
    s.update("w").param("ready=false").no_wait().ok();
    wait_until("the change awaits the window", || {
        !s.instance("w")["status"]["awaitingWindow"].is_null()
    });
    let held = s.instance("w")["status"]["awaitingWindow"].clone();
    assert_eq!(held["plan"], "deploy", "{held}");
    let said: Timestamp = held["opensAt"].as_str().unwrap().parse().unwrap();
    assert_eq!(said, opens, "{held}");
    let shown = s
        .kudo(&["plan", "status", "--instance", "w", "-n", &s.namespace])
        .assert()
        .success();
    let out = String::from_utf8_lossy(&shown.get_output().stdout).into_owned();
    assert!(out.contains("AwaitingWindow"), "{out}");
    // Nothing is applied until the window opens.
    while Timestamp::now() < opens - SignedDuration::from_secs(3) {
        let now = config(&s, "w");
        assert_eq!(
            now["metadata"]["resourceVersion"], before["metadata"]["resourceVersion"],
            "applied before the window opened"
        );
        assert_eq!(now["data"]["ready"], "true");
        std::thread::sleep(std::time::Duration::from_secs(2));
    }
    s.wait_plan("w", "deploy");
    wait_until("the held change is applied", || {
        config(&s, "w")["data"]["ready"] == "false"
    });
    let inst = s.instance("w");
    assert!(inst["status"]["awaitingWindow"].is_null(), "{inst:#}");
    let started: Timestamp = inst["status"]["activePlan"]["started"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        started >= opens && started <= opens + SignedDuration::from_secs(30),
        "started at {started}, the window opened at {opens}"
    );
    let revisions = history(&s, "w");
    let last = revisions.last().expect("a revision").clone();
    assert!(
        last["window"]
            .as_str()
            .is_some_and(|w| w.starts_with("waited for the maintenance window")),
        "{last:#}"
    );

    // A window that has just closed (it opened a minute ago, for a minute): closed for a day.
    let past =
        (Timestamp::now() - SignedDuration::from_secs(120)).to_zoned(jiff::tz::TimeZone::UTC);
    let schedule = format!("{} {} * * *", past.minute(), past.hour());
    s.patch_raw(
        "w",
        json!({"spec": {"window": {"schedule": schedule, "duration": "1m"}}}),
    )
    .expect("the window is admitted");
    s.update("w")
        .param("ready=true")
        .args(&["--ignore-window"])
        .ok();
    assert_eq!(config(&s, "w")["data"]["ready"], "true");
    let revisions = history(&s, "w");
    let last = revisions.last().expect("a revision").clone();
    assert_eq!(
        last["window"], "ran outside the maintenance window: --ignore-window",
        "{last:#}"
    );
    assert!(
        last["by"].as_str().is_some_and(|b| !b.is_empty()),
        "{last:#}"
    );
    // A window that cannot be read is refused at admission, naming its field.
    let refused = s
        .patch_raw(
            "w",
            json!({"spec": {"window": {"schedule": "0 25 * * *", "duration": "1h"}}}),
        )
        .expect_err("refused");
    assert!(
        refused.to_string().contains("spec.window.schedule"),
        "{refused}"
    );
}
