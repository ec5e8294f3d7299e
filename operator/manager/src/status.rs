//! Writing an Instance's status: the statuses of its plans (kept by [`kudo_crd::plan`]) and
//! its `Ready` condition, with server-side apply on the status subresource (field manager
//! `kudo-manager`), only when something changed.

use kube::ResourceExt;
use kube::api::{Api, Patch, PatchParams};
use serde_json::json;

use crate::error::Result;
use kudo_crd::common::{Condition, InstanceStatus};
use kudo_crd::labels;
use kudo_crd::plan::{Standing, judge};
use kudo_crd::v1beta2::Instance;

/// The `Ready` condition of the active plan `plan`: True when it is COMPLETE.
pub fn ready_from_plan(status: &mut InstanceStatus, inst: &Instance, plan: &str, now: &str) {
    let ps = status.plan_status.get(plan);
    // The plan's own message: the first failing phase and step, and why.
    let message = ps.and_then(|p| p.message.clone());
    let (s, reason, text) = match ps.map(judge) {
        Some(Standing::Complete) => ("True", "PlanComplete", format!("plan `{plan}` is complete")),
        Some(Standing::Failed(_)) => (
            "False",
            "PlanFailed",
            format!("plan `{plan}` failed: {}", message.unwrap_or_default()),
        ),
        Some(Standing::Retrying) => (
            "False",
            "PlanError",
            format!("plan `{plan}` is retrying: {}", message.unwrap_or_default()),
        ),
        Some(Standing::Running) | None => (
            "False",
            "PlanInProgress",
            format!("plan `{plan}` is running"),
        ),
    };
    set_ready(status, inst, s, reason, &text, now);
}

/// Sets the `Ready` condition (its transition time kept while its value stays).
pub fn set_ready(
    status: &mut InstanceStatus,
    inst: &Instance,
    value: &str,
    reason: &str,
    message: &str,
    now: &str,
) {
    let previous = status.conditions.iter().find(|c| c.type_ == "Ready");
    let since = match previous {
        Some(p) if p.status == value => p.last_transition_time.clone(),
        _ => Some(now.to_string()),
    };
    let ready = Condition {
        type_: "Ready".into(),
        status: value.into(),
        reason: Some(reason.into()),
        message: Some(message.into()),
        last_transition_time: since,
        observed_generation: inst.metadata.generation,
    };
    status.conditions.retain(|c| c.type_ != "Ready");
    status.conditions.push(ready);
}

/// Writes `status` with server-side apply on the status subresource, unless it equals `was`;
/// the Instance's resourceVersion after the write (`None`: nothing written).
pub async fn write_status(
    api: &Api<Instance>,
    inst: &Instance,
    was: &InstanceStatus,
    status: &InstanceStatus,
) -> Result<Option<String>> {
    if was == status {
        return Ok(None);
    }
    let body = json!({
        "apiVersion": "kudo.dev/v1beta2",
        "kind": "Instance",
        "status": status,
    });
    let params = PatchParams::apply(labels::MANAGER_FIELD_MANAGER).force();
    let written = api
        .patch_status(&inst.name_any(), &params, &Patch::Apply(&body))
        .await?;
    Ok(written.metadata.resource_version)
}
