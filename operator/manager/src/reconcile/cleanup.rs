//! An Instance being deleted: its `cleanup` plan run with the values last applied (the
//! secrets as its Secrets hold them now, when they can still be read), then the finalizer
//! removed. Without a cleanup plan, or without the OperatorVersion, the finalizer goes at
//! once; a cleanup plan that fails for good keeps it.

use kube::ResourceExt;
use kube::runtime::controller::Action;
use serde_json::{Value, json};

use super::SecretsError;
use super::round::Round;
use crate::context::Compiled;
use crate::error::Result;
use crate::finalizer;
use kudo_crd::plan::{self, CLEANUP, Standing};
use kudo_policy::run::Start;

/// The run id of the cleanup plan of a deleted Instance.
const UID: &str = "cleanup-on-delete";

/// Runs the cleanup plan of `compiled` for the deleted Instance; removes the finalizer once
/// it is COMPLETE. `given`: the values the Instance gives (its parameters, its Secrets' values
/// under them), or why its Secrets cannot be read.
pub(super) async fn reconcile(
    mut round: Round<'_>,
    compiled: &Compiled,
    given: Result<Value, SecretsError>,
) -> Result<Action> {
    let pkg = compiled.pkg();
    if !pkg.operator().plans.contains_key(CLEANUP) {
        return release(&round).await;
    }
    let recorded = super::revisions::applied_values(&round, None)
        .await?
        .unwrap_or_else(|| json!({}));
    if round.status.active_plan.as_ref().map(|a| a.uid.as_str()) != Some(UID) {
        let start = Start {
            plan: CLEANUP.into(),
            uid: UID.into(),
            reason: "the Instance is being deleted".into(),
        };
        round.begin(pkg, &recorded, &start).await;
    }
    // The Secrets may be gone already (a foreground deletion): then the digests stay.
    let now_values = given.map(|given| {
        let kept = round.inst.spec.immutable_defaults.as_ref();
        compiled.version.effective_kept(&given, kept).0.into_value()
    });
    let schema = &compiled.version.schema;
    let render = match now_values {
        Ok(v) => kudo_policy::secrets::revealed(schema, &recorded, &v, &round.ctx.digest_key),
        Err(_) => recorded,
    };
    let action = round.advance(&compiled.prepared, &render).await?;
    let cleaned = round
        .status
        .plan_status
        .get(CLEANUP)
        .is_some_and(|p| plan::judge(p) == Standing::Complete);
    if cleaned {
        return release(&round).await;
    }
    Ok(action)
}

/// The end of a deleted Instance: its finalizer goes (the API server then removes it), and
/// the manager forgets what it kept of it.
async fn release(round: &Round<'_>) -> Result<Action> {
    finalizer::remove(&round.api, round.inst).await?;
    round.ctx.forget(round.inst);
    Ok(Action::await_change())
}

/// A deleted Instance whose OperatorVersion is gone (`why`): no cleanup plan to run, the
/// finalizer goes.
pub(super) async fn without_operator_version(round: &Round<'_>, why: &str) -> Result<Action> {
    tracing::info!(instance = %round.inst.name_any(), %why, "no cleanup plan to run");
    release(round).await
}
