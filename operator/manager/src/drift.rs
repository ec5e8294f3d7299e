//! Drift of the objects kudo applied for an Instance ([`check`], [`judge`]): once its active
//! plan is COMPLETE, at least every [`Settings::drift_interval`](crate::Settings::drift_interval),
//! each object its plans applied ([`kudo_crd::drift::applied_objects`]) that may have changed
//! since kudo last saw it holding what kudo applies (its resourceVersion in a shared list,
//! [`Objects::live_versions`]; a step's apply counts as seeing it, [`applying`]) is sent as
//! a server-side apply **dry run** as the Instance's tenant ([`Objects::dry_run`]) and compared
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

use std::time::{Duration, Instant};

use kube::ResourceExt;
use kube::api::Api;
use kube::runtime::events::EventType;
use serde_json::Value;

use crate::bounded;
use crate::context::{Context, Known, key};
use crate::error::Result;
use crate::objects::{Failure, Notes};
use crate::status::{set_condition, write_status};
use crate::step::diagnostics;
use kudo_crd::common::{DriftMode, ExecStatus, InstanceStatus};
use kudo_crd::drift::{self, Drifted};
use kudo_crd::v1beta2::Instance;
use kudo_pkg::render::Prepared;

/// The condition drift sets.
pub const DRIFTED: &str = "Drifted";

/// Checks the drift of `inst` when it is due ([`judge`]), and writes its `status` (as the round
/// left it, already written) when the check changed it.
pub(crate) async fn check(
    ctx: &Context,
    api: &Api<Instance>,
    inst: &Instance,
    status: &mut InstanceStatus,
    prepared: &Prepared<'_>,
    params: &Value,
    now: &str,
) -> Result<Option<Duration>> {
    let was = status.clone();
    let next = judge(ctx, inst, status, prepared, params, now).await;
    let rv = write_status(ctx, api, inst, &was, status, now).await?;
    ctx.wrote(inst, rv);
    Ok(next)
}

/// Checks the drift of `inst` when it is due (see the module docs) and says it in `status`
/// (its `Drifted` condition), which the caller writes: a plan that just ended COMPLETE says it
/// in the same write. When to look again: `None` while a plan runs (the plan's own pace
/// decides), else before the next check is due.
pub(crate) async fn judge(
    ctx: &Context,
    inst: &Instance,
    status: &mut InstanceStatus,
    prepared: &Prepared<'_>,
    params: &Value,
    now: &str,
) -> Option<Duration> {
    let active = status.active_plan.as_ref()?;
    let complete = status
        .plan_status
        .get(&active.name)
        .is_some_and(|ps| *ExecStatus::of(&ps.status) == ExecStatus::Complete);
    // `--drift-interval 0`: never checked.
    if !complete || ctx.settings.drift_interval.is_zero() {
        return None;
    }
    let interval = crate::context::drift_period(ctx.settings.drift_interval);
    let mode = drift::mode(inst.spec.drift.as_ref());
    if mode == DriftMode::Ignore {
        status.conditions.retain(|c| c.type_ != DRIFTED);
        return Some(interval);
    }
    if let Some(due) = ctx.drift_due(inst) {
        return Some(due);
    }
    ctx.drift_checked(inst);
    let found = match look(ctx, inst, status, prepared, params).await {
        Ok(f) => f,
        Err(why) => {
            // Not a failure of the Instance: said in the log, tried again at the next check.
            tracing::warn!(instance = %key(inst), why = %bounded::cut(&why, bounded::STATUS_MESSAGE), "drift not checked");
            return Some(interval);
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
    Some(interval)
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
    prepared: &Prepared<'_>,
    params: &Value,
) -> std::result::Result<Found, String> {
    let tenant = ctx.tenants.client_for(inst).map_err(|e| e.to_string())?;
    let objects =
        drift::applied_objects(prepared, inst, status, params).map_err(|d| diagnostics(&d))?;
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
            Ok(Some((listed, versions))) => Some((listed, versions.get(name).cloned())),
            Ok(None) => None,
            // The API server did not answer the list: checked at the next check, not one by
            // one now, against what was known of it (forgotten, it would be dry-run then: after
            // an API server restart under 10,000 Instances, 55 dry runs a second).
            Err(why) => {
                found
                    .unchecked
                    .push(format!("{title}: {why}; checked again at the next check"));
                if let Some(known) = was_clean.get(&at) {
                    clean.insert(at, known.clone());
                }
                continue;
            }
        };
        // Unchanged: the list shows the resourceVersion kudo saw it holding what it applies,
        // or the list was sent before kudo saw that and cannot show anything newer (the next
        // check's will: a list is at most a quarter of the interval old).
        if let Some((listed, version)) = &live
            && let Some(known) = was_clean.get(&at).filter(|k| k.digest == digest)
            && (*listed < known.at || version.as_ref() == Some(&known.version))
        {
            found.checked += 1;
            unchanged += 1;
            clean.insert(at, known.clone());
            continue;
        }
        ctx.metrics.drift_dry_run();
        let sent = Instant::now();
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
                            let version = rv.to_string();
                            clean.insert(
                                at,
                                Known {
                                    version,
                                    digest,
                                    at: sent,
                                },
                            );
                        }
                    }
                }
            }
            Err(f) => {
                found
                    .unchecked
                    .push(format!("{title}: {}", failure_message(&f)));
                if let Some(known) = was_clean.get(&at) {
                    clean.insert(at, known.clone());
                }
            }
        }
    }
    ctx.metrics.drift_unchanged(unchanged);
    ctx.set_drift_clean(inst, clean);
    Ok(found)
}

/// What a plan's apply of `obj` (labelled, as the step applies it and [`look`] renders it)
/// will tell drift: where it lives and the digest of what kudo applies, taken before the apply
/// consumes it ([`Applying::stored`]).
pub(crate) fn applying(obj: &Value, inst: &Instance) -> Applying {
    Applying {
        key: object_key(obj, inst),
        digest: digest(obj, inst.spec.drift_ignores()),
        sent: Instant::now(),
    }
}

/// An apply under way, for drift ([`applying`]).
pub(crate) struct Applying {
    key: String,
    digest: u64,
    sent: Instant,
}

impl Applying {
    /// The API server `stored` the object: at that resourceVersion it holds what kudo applies,
    /// and the first check needs no dry run for it. `None` when the answer has no
    /// resourceVersion.
    pub(crate) fn stored(self, stored: &Value) -> Option<(String, Known)> {
        let version = stored.pointer("/metadata/resourceVersion")?.as_str()?;
        let known = Known {
            version: version.to_string(),
            digest: self.digest,
            at: self.sent,
        };
        Some((self.key, known))
    }
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
        let seen = applying(obj, inst);
        match ctx.objects.apply(&tenant, obj.clone(), inst, &notes).await {
            Ok(stored) => {
                // Corrected: holds what kudo applies, as the next check will trust.
                ctx.drift_seed(inst, seen.stored(&stored).into_iter().collect());
                fixed.push(d.clone());
            }
            Err(f) => failed.push(format!("{}: {}", d.title(""), failure_message(&f))),
        }
    }
    (fixed, failed)
}
