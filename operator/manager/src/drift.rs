//! Drift of the objects kudo applied for an Instance ([`check`]): once its active plan is
//! COMPLETE, at least every [`Settings::drift_interval`](crate::Settings::drift_interval),
//! each object its plans applied ([`kudo_crd::drift::applied_objects`]) is sent as a
//! server-side apply **dry run** as the Instance's tenant ([`Objects::dry_run`]) and compared
//! with the live object ([`kudo_crd::drift::Drifted::of`]). Then, by `spec.drift.mode`:
//!
//! - `warn` (the default): the condition `Drifted` True (reason `Drifted`) naming each object
//!   and field, a Warning Event `Drifted` when that changes, the metrics
//!   `kudo_manager_drift_detected_total` and `kudo_manager_drifted_objects`; no drift: the
//!   condition False, reason `NoDrift`;
//! - `correct`: the drifted and deleted objects applied again for real (the plan's own apply,
//!   as the tenant), an Event `DriftCorrected` naming them,
//!   `kudo_manager_drift_corrected_total`, the condition False (reason `DriftCorrected`); no plan
//!   runs;
//! - `ignore`: nothing checked, and a `Drifted` condition left from before removed.

use std::time::Duration;

use kube::ResourceExt;
use kube::api::Api;
use kube::runtime::events::EventType;
use serde_json::Value;

use crate::bounded;
use crate::context::{Compiled, Context, key};
use crate::error::Result;
use crate::objects::{Failure, Notes};
use crate::status::{set_condition, write_status};
use crate::step::diagnostics;
use kudo_crd::common::{DriftMode, ExecStatus, InstanceStatus};
use kudo_crd::drift::{self, Drifted};
use kudo_crd::v1beta2::Instance;

/// The condition drift sets.
pub const DRIFTED: &str = "Drifted";

/// Checks the drift of `inst` when it is due (see the module docs), its `status` (as the
/// round leaves it, already written) updated and written again when the check changes it.
/// When to look again: `None` while a plan runs (the plan's own pace decides), else before
/// the next check is due.
pub(crate) async fn check(
    ctx: &Context,
    api: &Api<Instance>,
    inst: &Instance,
    status: &mut InstanceStatus,
    compiled: &Compiled,
    params: &Value,
    now: &str,
) -> Result<Option<Duration>> {
    let Some(active) = status.active_plan.as_ref() else {
        return Ok(None);
    };
    let complete = status
        .plan_status
        .get(&active.name)
        .is_some_and(|ps| *ExecStatus::of(&ps.status) == ExecStatus::Complete);
    if !complete {
        return Ok(None);
    }
    // `--drift-interval 0`: never checked.
    if ctx.settings.drift_interval.is_zero() {
        return Ok(None);
    }
    let interval = crate::context::drift_period(ctx.settings.drift_interval);
    let mode = drift::mode(inst.spec.drift.as_ref());
    let was = status.clone();
    if mode == DriftMode::Ignore {
        status.conditions.retain(|c| c.type_ != DRIFTED);
        let rv = write_status(ctx, api, inst, &was, status, now).await?;
        ctx.wrote(inst, rv);
        return Ok(Some(interval));
    }
    if let Some(due) = ctx.drift_due(inst) {
        return Ok(Some(due));
    }
    ctx.drift_checked(inst);
    let found = match look(ctx, inst, status, compiled, params).await {
        Ok(f) => f,
        Err(why) => {
            // Not a failure of the Instance: said in the log, tried again at the next check.
            tracing::warn!(instance = %key(inst), why = %bounded::cut(&why, bounded::STATUS_MESSAGE), "drift not checked");
            return Ok(Some(interval));
        }
    };
    let ns = inst.namespace().unwrap_or_default();
    let previous = status
        .conditions
        .iter()
        .find(|c| c.type_ == DRIFTED)
        .cloned();
    let unchecked = &found.unchecked;
    if found.drifted.is_empty() {
        ctx.metrics.drift_checked(&ns, &inst.name_any(), 0, 0);
        let text = format!(
            "the {} object(s) kudo applied hold what it applied{}",
            found.checked,
            unchecked_note(unchecked)
        );
        set_condition(status, inst, DRIFTED, "False", "NoDrift", &text, now);
    } else {
        let text = bounded::cut(
            &drift::message(&found.drifted, &ns),
            bounded::STATUS_MESSAGE,
        );
        let reported = previous
            .as_ref()
            .is_some_and(|c| c.status == "True" && c.message.as_deref() == Some(text.as_str()));
        let new = if reported { 0 } else { found.drifted.len() };
        ctx.metrics
            .drift_checked(&ns, &inst.name_any(), found.drifted.len(), new);
        if mode == DriftMode::Correct {
            let (fixed, failed) = correct(ctx, inst, &found).await;
            ctx.metrics.drift_corrected(fixed.len());
            if !fixed.is_empty() {
                let note = format!(
                    "applied again what kudo applied: {}",
                    drift::message(&fixed, &ns)
                );
                tracing::info!(instance = %key(inst), corrected = %bounded::cut(&note, bounded::LOG_MESSAGE), "drift corrected");
                ctx.event(inst, EventType::Normal, "DriftCorrected", note)
                    .await;
            }
            if failed.is_empty() {
                let text = format!("corrected: {}", drift::message(&fixed, &ns));
                set_condition(status, inst, DRIFTED, "False", "DriftCorrected", &text, now);
            } else {
                let text = format!("not corrected{}", unchecked_note(&failed));
                set_condition(
                    status,
                    inst,
                    DRIFTED,
                    "True",
                    "CorrectionFailed",
                    &text,
                    now,
                );
            }
        } else {
            let full = format!(
                "drifted from what kudo applied: {text}{}",
                unchecked_note(unchecked)
            );
            if !reported {
                tracing::warn!(instance = %key(inst), drift = %bounded::cut(&text, bounded::LOG_MESSAGE), "drift detected");
                ctx.event(inst, EventType::Warning, "Drifted", full.clone())
                    .await;
            }
            // The message compared above is the list alone.
            set_condition(status, inst, DRIFTED, "True", "Drifted", &text, now);
        }
    }
    let rv = write_status(ctx, api, inst, &was, status, now).await?;
    ctx.wrote(inst, rv);
    Ok(Some(interval))
}

/// ` (not compared: ...)`, or nothing.
fn unchecked_note(unchecked: &[String]) -> String {
    if unchecked.is_empty() {
        return String::new();
    }
    let listed: Vec<&str> = unchecked
        .iter()
        .take(drift::OBJECTS_SHOWN)
        .map(String::as_str)
        .collect();
    format!("; not compared: {}", listed.join("; "))
}

/// What a drift check found.
struct Found {
    /// The objects compared.
    checked: usize,
    /// Those that drifted, and the object kudo applies for each.
    drifted: Vec<Drifted>,
    applied: Vec<Value>,
    /// The objects that could not be compared, and why.
    unchecked: Vec<String>,
}

/// Each object kudo applied for `inst` dry-run applied as its tenant and compared with the
/// live one; why the check could not run at all (no identity, templates that do not render).
async fn look(
    ctx: &Context,
    inst: &Instance,
    status: &InstanceStatus,
    compiled: &Compiled,
    params: &Value,
) -> std::result::Result<Found, String> {
    let tenant = ctx.tenants.client_for(inst).map_err(|e| e.to_string())?;
    let objects = drift::applied_objects(&compiled.prepared, inst, status, params)
        .map_err(|d| diagnostics(&d))?;
    let rules = inst.spec.drift_ignores().to_vec();
    let mut found = Found {
        checked: 0,
        drifted: Vec::new(),
        applied: Vec::new(),
        unchecked: Vec::new(),
    };
    let was_clean = ctx.drift_clean(inst);
    let mut clean = crate::context::Clean::new();
    let max_age = crate::context::drift_list_age(ctx.settings.drift_interval);
    let mut unchanged = 0;
    for o in objects {
        let name = o.object["metadata"]["name"].as_str().unwrap_or("");
        let title = format!("{} {name}", o.object["kind"].as_str().unwrap_or(""));
        let at = object_key(&o.object, inst);
        let digest = digest(&o.object, &rules);
        // Unchanged since a check found it holding what kudo applied, and kudo applies the
        // same: no dry run.
        let live = match ctx
            .objects
            .live_versions(&tenant, &o.object, inst, max_age)
            .await
        {
            Ok(Some(versions)) => versions.get(name).cloned(),
            Ok(None) => None,
            // The API server did not answer the list: checked at the next check, not one by
            // one now.
            Err(why) => {
                found
                    .unchecked
                    .push(format!("{title}: {why}; checked again at the next check"));
                continue;
            }
        };
        if let Some(rv) = live
            && was_clean.get(&at) == Some(&(rv.clone(), digest))
        {
            found.checked += 1;
            unchanged += 1;
            clean.insert(at, (rv, digest));
            continue;
        }
        ctx.metrics.drift_dry_run();
        match ctx.objects.dry_run(&tenant, o.object.clone(), inst).await {
            Ok((live, planned)) => {
                found.checked += 1;
                match Drifted::of(live.as_ref(), &planned, &rules) {
                    Some(d) => {
                        found.drifted.push(d);
                        found.applied.push(o.object);
                    }
                    None => {
                        let rv = live
                            .as_ref()
                            .and_then(|l| l.pointer("/metadata/resourceVersion"))
                            .and_then(Value::as_str);
                        if let Some(rv) = rv {
                            clean.insert(at, (rv.to_string(), digest));
                        }
                    }
                }
            }
            Err(f) => found
                .unchecked
                .push(format!("{title}: {}", failure_message(&f))),
        }
    }
    ctx.metrics.drift_unchanged(unchanged);
    ctx.set_drift_clean(inst, clean);
    Ok(found)
}

/// Where an object lives: `apiVersion/kind/namespace/name` (its namespace: the Instance's
/// when it names none).
fn object_key(obj: &Value, inst: &Instance) -> String {
    let text = |p: &str| obj.pointer(p).and_then(Value::as_str).unwrap_or("");
    format!(
        "{}/{}/{}/{}",
        text("/apiVersion"),
        text("/kind"),
        crate::objects::namespace_of(obj, inst),
        text("/metadata/name")
    )
}

/// A digest of what kudo applies for an object and the rules drift ignores by: when either
/// changes, the object is compared again.
fn digest(obj: &Value, rules: &[kudo_crd::common::DriftIgnore]) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    obj.to_string().hash(&mut h);
    serde_json::to_string(rules)
        .unwrap_or_default()
        .hash(&mut h);
    h.finish()
}

/// The API server's words in a [`Failure`].
fn failure_message(f: &Failure) -> &str {
    match f {
        Failure::Unavailable(m) | Failure::Invalid(m) | Failure::Forbidden(m) => m,
    }
}

/// The drifted objects of `found` applied again for real, as the plan applies them: those
/// applied, and why each other was not.
async fn correct(ctx: &Context, inst: &Instance, found: &Found) -> (Vec<Drifted>, Vec<String>) {
    let tenant = match ctx.tenants.client_for(inst) {
        Ok(t) => t,
        Err(e) => return (Vec::new(), vec![e.to_string()]),
    };
    let notes = Notes::default();
    let (mut fixed, mut failed) = (Vec::new(), Vec::new());
    for (d, obj) in found.drifted.iter().zip(&found.applied) {
        match ctx.objects.apply(&tenant, obj.clone(), inst, &notes).await {
            Ok(_) => fixed.push(d.clone()),
            Err(f) => failed.push(format!("{}: {}", d.title(""), failure_message(&f))),
        }
    }
    (fixed, failed)
}
