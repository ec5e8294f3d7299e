//! The manager and the webhook killed (SIGKILL) and restarted in the middle of a plan.

use crate::harness::*;

#[test]
fn the_manager_and_the_webhook_restarted_mid_plan_finish_it_without_rerunning_a_step() {
    // Alone: it restarts the daemons every scenario shares.
    let Some(s) = Scenario::start_alone("restart") else {
        return;
    };
    let package = fixture("e2e/gated");
    s.kudo(&[
        "install",
        &package.to_string_lossy(),
        "--instance",
        "g",
        "-n",
        &s.namespace,
    ])
    .assert()
    .success();
    wait_until(
        "step first is COMPLETE and the plan waits on the gate Pod",
        || {
            let i = s.instance("g");
            step_status(&i, "deploy", "first") == "COMPLETE"
                && step_status(&i, "deploy", "gate") == "IN_PROGRESS"
        },
    );
    // Took over from the manager: a step `first` run again would apply its ConfigMap (with
    // force) and put the template's value back.
    s.runtime
        .block_on(s.api("v1", "ConfigMap", "configmaps").patch(
            "g-first",
            &PatchParams::default(),
            &Patch::Merge(json!({"data": {"mark": "set-by-the-test"}})),
        ))
        .expect("the ConfigMap is patched");

    s.daemons.restart_manager();
    s.daemons.restart_webhook();
    // The new manager has looked at the waiting plan before the gate opens.
    wait_until("the restarted manager reconciles", || {
        s.daemons.reconciliations() > 0
    });
    let i = s.instance("g");
    assert_eq!(step_status(&i, "deploy", "first"), "COMPLETE");
    assert_eq!(step_status(&i, "deploy", "gate"), "IN_PROGRESS");

    // The kubelet's part: the gate Pod ran to completion.
    s.runtime
        .block_on(s.api("v1", "Pod", "pods").patch_status(
            "g-gate",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"phase": "Succeeded"}})),
        ))
        .expect("the Pod's status is written");
    s.wait_plan("g", "deploy");
    assert_eq!(s.config_map("g-last")["note"], "first");
    assert_eq!(s.config_map("g-first")["mark"], "set-by-the-test");

    // The restarted webhook (its cache cold) admits an update, which runs the update plan.
    s.update("g").params(&["note=second"]).ok();
    s.wait_plan("g", "update");
    assert_eq!(s.config_map("g-last")["note"], "second");
    assert_eq!(s.config_map("g-first")["mark"], "set-by-the-test");
}
