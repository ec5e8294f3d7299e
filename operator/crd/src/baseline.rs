//! An Instance as kudo-policy sees it: the installed baseline a decision compares against
//! ([`installed`]), and the plan state run selection reads ([`plan_state`]). The one adapter
//! from the [`Instance`] type to the policy's data, called by the CLI, both webhooks and the
//! manager.

use kudo_policy::change::{Installed, Version};
use std::collections::BTreeMap;

use kudo_policy::run::{Active, Applied, Force, PlanState, Spec, Status, Trigger};
use serde_json::Value;

use crate::common::{AppliedState, InstanceStatus};
use crate::labels;
use crate::plan::{acted_on, judge};
use crate::v1beta2::Instance;

/// The Instance `inst` as [`kudo_policy::change`] sees it, installed at `version` with `values`
/// (its parameters as the caller read them: with its Secrets' values when it could read them):
/// its immutable defaults, whether it is being deleted, and the plan it has scheduled or running
/// (`in_progress`, from [`kudo_policy::run::supersede`]).
pub fn installed<'a>(
    inst: &'a Instance,
    version: &'a Version,
    values: &'a Value,
    in_progress: Option<&'a str>,
) -> Installed<'a> {
    Installed {
        version,
        values,
        kept: inst.spec.immutable_defaults.as_ref(),
        secrets_elsewhere: false,
        deleting: inst.metadata.deletion_timestamp.is_some(),
        in_progress,
    }
}

/// What `inst`'s spec asks for, as [`kudo_policy::run::select`] reads it.
pub fn spec(inst: &Instance) -> Spec<'_> {
    let trigger = inst.spec.plan_execution.as_ref().and_then(|pe| {
        Some(Trigger {
            plan: pe.plan_name.as_deref()?,
            uid: pe.uid.as_deref()?,
        })
    });
    Spec {
        generation: inst.metadata.generation,
        operator_version: inst.spec.operator_version_name(),
        trigger,
        parameters: inst.spec.parameters.as_ref(),
        kept: inst.spec.immutable_defaults.as_ref(),
    }
}

/// `sha256:` and the SHA-256 of `values` serialized with every object's keys sorted: the
/// digest `status.applied.digest` records, the same for the same values whatever order their
/// keys came in.
pub fn digest(values: &Value) -> String {
    use sha2::{Digest, Sha256};
    fn feed(h: &mut Sha256, v: &Value) {
        match v {
            Value::Object(map) => {
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort();
                h.update(b"{");
                for k in keys {
                    feed(h, &Value::String(k.clone()));
                    h.update(b":");
                    feed(h, &map[k]);
                    h.update(b",");
                }
                h.update(b"}");
            }
            Value::Array(items) => {
                h.update(b"[");
                for i in items {
                    feed(h, i);
                    h.update(b",");
                }
                h.update(b"]");
            }
            scalar => h.update(scalar.to_string().as_bytes()),
        }
    }
    let mut h = Sha256::new();
    feed(&mut h, values);
    let hex: String = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

/// The revision whose recorded values a reader of `inst` needs to know which plan its pending
/// change runs ([`kudo_policy::run::running`]): `Some(N)` when the manager has not acted on
/// its spec yet and its status refers to revision N instead of copying the values
/// (`status.applied.parameters` absent). The reader puts the revision's
/// [`crate::revision::Record::applied`] in `status.applied.parameters` ([`hydrate`]).
pub fn pending_revision(inst: &Instance) -> Option<i64> {
    let status = inst.status.as_ref()?;
    let applied = status.applied.as_ref()?;
    let generation = inst.metadata.generation?;
    (applied.parameters.is_none() && !acted_on(status, generation))
        .then_some(applied.revision)
        .flatten()
}

/// `inst` with the values a revision recorded (`applied`, read by the caller) in
/// `status.applied.parameters`, as a manager before issue 49 wrote them.
pub fn hydrate(inst: &mut Instance, applied: Value) {
    if let Some(a) = inst.status.as_mut().and_then(|s| s.applied.as_mut()) {
        a.parameters = Some(applied);
    }
}

/// What the manager last acted on (`status.applied`), as [`kudo_policy::run::select`] reads it.
pub fn applied(status: &InstanceStatus) -> Option<Applied<'_>> {
    status.applied.as_ref().map(|a: &AppliedState| Applied {
        operator_version: a.operator_version.as_deref(),
        parameters: a.parameters.as_ref(),
        trigger_uid: a.plan_execution_uid.as_deref(),
    })
}

/// `inst`'s plan state, as [`kudo_policy::run::running`] reads it: its spec, and what its
/// status says of its runs.
pub fn plan_state(inst: &Instance) -> PlanState<'_> {
    let status = inst.status.as_ref().map(|status| Status {
        applied: applied(status),
        active: status.active_plan.as_ref().and_then(|active| {
            let run = status.plan_status.get(&active.name)?;
            Some(Active {
                plan: &active.name,
                uid: &active.uid,
                over: judge(run).is_over(),
            })
        }),
        acted_on: inst
            .metadata
            .generation
            .is_some_and(|g| acted_on(status, g)),
    });
    PlanState {
        spec: spec(inst),
        status,
    }
}

/// How a write whose new object carries `annotations` treats the run in progress: it
/// supersedes the very run [`labels::SUPERSEDE`] names (what `--force` writes), else none.
pub fn force(annotations: Option<&BTreeMap<String, String>>) -> Force<'_> {
    match annotations.and_then(|a| a.get(labels::SUPERSEDE)) {
        Some(uid) => Force::Named(uid),
        None => Force::No,
    }
}
