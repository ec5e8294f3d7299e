//! Writing an Instance's status: the statuses of its plans (kept by [`kudo_crd::plan`]) and
//! its `Ready` condition, with server-side apply on the status subresource (field manager
//! `kudo-manager`), only when something changed, every message cut to a bounded size; a status
//! the API server refuses replaced by a smaller one that says why ([`write_status`]).

use kube::ResourceExt;
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::events::EventType;
use serde_json::json;

use crate::bounded;
use crate::context::{Context, key};
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
    set_condition(status, inst, "Ready", value, reason, message, now);
}

/// Sets the condition `type_` (its transition time kept while its value stays), its message
/// cut to [`bounded::STATUS_MESSAGE`].
pub(crate) fn set_condition(
    status: &mut InstanceStatus,
    inst: &Instance,
    type_: &str,
    value: &str,
    reason: &str,
    message: &str,
    now: &str,
) {
    let previous = status.conditions.iter().find(|c| c.type_ == type_);
    let since = match previous {
        Some(p) if p.status == value => p.last_transition_time.clone(),
        _ => Some(now.to_string()),
    };
    let condition = Condition {
        type_: type_.into(),
        status: value.into(),
        reason: Some(reason.into()),
        message: Some(bounded::cut(message, bounded::STATUS_MESSAGE)),
        last_transition_time: since,
        observed_generation: inst.metadata.generation,
    };
    // In its place: the conditions' order changes nothing, and rewrites nothing.
    match status.conditions.iter_mut().find(|c| c.type_ == type_) {
        Some(c) => *c = condition,
        None => status.conditions.push(condition),
    }
}

/// The condition saying the manager's full status was refused: False while `status.applied`
/// (what the plan's run is for) could not be written, naming why.
pub const RECORDED: &str = "Recorded";

/// Writes `status` with server-side apply on the status subresource, unless it equals `was`;
/// the Instance's resourceVersion after the write (`None`: nothing written). Every message is
/// cut to [`bounded::STATUS_MESSAGE`] first.
///
/// When the API server refuses the status (too large for it or for etcd, invalid), a smaller
/// one is written so that the Instance always says why: the same without `status.applied`
/// (which holds the parameters, as large as the Instance's spec) and with the condition
/// [`RECORDED`] False, reason `StatusRefused`, naming the refusal; when that is refused too,
/// that condition alone. The refusal is logged and published as an Event once per write.
pub async fn write_status(
    ctx: &Context,
    api: &Api<Instance>,
    inst: &Instance,
    was: &InstanceStatus,
    status: &InstanceStatus,
    now: &str,
) -> Result<Option<String>> {
    if was == status {
        return Ok(None);
    }
    let mut full = status.clone();
    bounded::status(&mut full);
    // Once applied is written, the refusal it reported is over.
    if full.applied.is_some() {
        full.conditions.retain(|c| c.type_ != RECORDED);
    }
    if *was == full {
        return Ok(None);
    }
    let refusal = match apply(api, inst, &full).await {
        Ok(rv) => return Ok(rv),
        Err(kube::Error::Api(s)) if !matches!(s.code, 409 | 429 | 503 | 504) => s,
        Err(e) => return Err(e.into()),
    };
    let size = serde_json::to_vec(&full).map_or(0, |v| v.len());
    let why = bounded::cut(
        &format!(
            "the API server refused the Instance's status ({size} bytes; HTTP {}: {}): written without status.applied (the parameters the plan runs with), so the run is not recorded as applied",
            refusal.code, refusal.message
        ),
        bounded::STATUS_MESSAGE,
    );
    tracing::warn!(instance = %key(inst), status_bytes = size, code = refusal.code, reason = %refusal.reason, why = %why, "status refused: writing a smaller one");
    ctx.metrics.status_refused();
    ctx.event(inst, EventType::Warning, "StatusRefused", why.clone())
        .await;
    let refused = |s: &mut InstanceStatus| {
        set_condition(s, inst, RECORDED, "False", "StatusRefused", &why, now);
    };
    let mut smaller = full;
    smaller.applied = None;
    refused(&mut smaller);
    let error = match apply(api, inst, &smaller).await {
        Ok(rv) => return Ok(rv),
        Err(e) => e,
    };
    tracing::warn!(instance = %key(inst), error = %bounded::cut(&error.to_string(), bounded::STATUS_MESSAGE), "the smaller status was refused too: writing the condition alone");
    let mut alone = InstanceStatus::default();
    let previous = status.conditions.iter().find(|c| c.type_ == RECORDED);
    alone.conditions.extend(previous.cloned());
    refused(&mut alone);
    apply(api, inst, &alone).await.map_err(|_| error.into())
}

/// Server-side apply of `status`: the resourceVersion written.
async fn apply(
    api: &Api<Instance>,
    inst: &Instance,
    status: &InstanceStatus,
) -> kube::Result<Option<String>> {
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
