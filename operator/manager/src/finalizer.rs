//! The finalizer [`labels::FINALIZER`]: added to a new Instance, removed once its `cleanup`
//! plan is COMPLETE (or when it has none to run).
//!
//! Handled here by hand, not with kube-runtime's `finalizer` helper: that helper removes the
//! finalizer as soon as its cleanup closure returns `Ok`, and a cleanup plan takes several
//! reconciles (each applies, then waits for objects to become healthy). Both patches are JSON
//! patches that first test the resourceVersion, so a stale Instance changes nothing: the API
//! server answers a failed test with 422 (and no cause), which is no error here: the Instance
//! changed since it was read, and the watch brings the change, which reconciles again. (Logged
//! as a failed reconcile, it was one warning per Instance deleted during its plan: 500 lines
//! for 500 Instances.)

use kube::ResourceExt;
use kube::api::{Api, Patch, PatchParams};
use serde_json::json;

use crate::error::Result;
use kudo_crd::v1beta2::Instance;
use kudo_crd::{labels, patch};

/// Whether `inst` carries the finalizer.
pub fn present(inst: &Instance) -> bool {
    inst.finalizers().iter().any(|f| f == labels::FINALIZER)
}

/// Adds the finalizer.
pub async fn add(api: &Api<Instance>, inst: &Instance) -> Result<()> {
    let mut finalizers = inst.finalizers().to_vec();
    finalizers.push(labels::FINALIZER.into());
    match set(api, inst, patch::add, finalizers).await {
        Err(kube::Error::Api(s)) if stale(&s) => Ok(()),
        other => Ok(other?),
    }
}

/// Removes the finalizer; an Instance already gone is fine.
pub async fn remove(api: &Api<Instance>, inst: &Instance) -> Result<()> {
    let finalizers = inst
        .finalizers()
        .iter()
        .filter(|f| *f != labels::FINALIZER)
        .cloned()
        .collect();
    match set(api, inst, patch::replace, finalizers).await {
        Ok(()) => Ok(()),
        Err(kube::Error::Api(s)) if s.is_not_found() || stale(&s) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// Whether the API server refused the patch because its resourceVersion test failed: the
/// Instance was read before its last change (422 Invalid, no cause named).
fn stale(s: &kube::core::Status) -> bool {
    let stale = s.code == 422 && s.details.as_ref().is_none_or(|d| d.causes.is_empty());
    if stale {
        tracing::debug!(message = %s.message, "the Instance changed since it was read: waiting for the watch");
    }
    stale
}

/// `op` ([`patch::add`] or [`patch::replace`]) `/metadata/finalizers` with `finalizers`, if the
/// Instance is still at the resourceVersion `inst` was read at.
async fn set(
    api: &Api<Instance>,
    inst: &Instance,
    op: fn(json_patch::jsonptr::PointerBuf, serde_json::Value) -> json_patch::PatchOperation,
    finalizers: Vec<String>,
) -> kube::Result<()> {
    let patch = json_patch::Patch(vec![
        patch::test(
            patch::path(["metadata", "resourceVersion"]),
            json!(inst.resource_version()),
        ),
        op(patch::path(["metadata", "finalizers"]), json!(finalizers)),
    ]);
    api.patch(
        &inst.name_any(),
        &PatchParams::default(),
        &Patch::<()>::Json(patch),
    )
    .await?;
    Ok(())
}
