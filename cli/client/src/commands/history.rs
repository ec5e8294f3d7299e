//! `kudo history NAME` and `kudo rollback NAME [REVISION]`: an Instance's revisions, which the
//! manager records for every change whose plan runs ([`kudo_crd::revision`]), and a rollback to
//! one of them.
//!
//! A rollback is a change like any other: decided first with the policy the admission webhook
//! applies ([`change::rollback`]: within the installed version an update of the revision's
//! whole values, which runs the plans they trigger; to another version that version's
//! `upgrade` plan, no immutable value changed, the installed values read back through the
//! newer version's `oldName`s), refused with every reason and nothing written; then one guarded
//! JSON patch ([`revision::restore_patch`]) that names the generation it replaces
//! ([`labels::ROLLBACK`]), so the webhook decides it as a rollback too. What the revision needs
//! must still be there: its OperatorVersion, and the Secrets that hold its `writeOnly` values
//! (kept by the manager while the revision is kept).

use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::Secret;
use kube::Api;
use kube::api::{ListParams, Patch};
use kudo_crd::labels;
use kudo_crd::reference::OperatorVersionRef;
use kudo_crd::revision::{self, Revision};
use kudo_crd::v1beta2::Instance;
use kudo_policy::change::{self, Decision, Proposal, Version};
use serde_json::{Value, json};

use super::entry::{Attempt, Entry};
use super::{Error, Result, Target, installed, operator_version, superseding, version_of};

/// An Instance and its revisions.
#[derive(Debug, Clone)]
pub struct History {
    /// The Instance as read.
    pub instance: Instance,
    /// Its revisions, oldest first.
    pub revisions: Vec<Revision>,
}

/// Reads Instance `name` and its revisions.
pub async fn history(t: &Target, name: &str) -> Result<History> {
    let instance = t.instance(name).await?;
    let revisions = revisions(t, name).await?;
    Ok(History {
        instance,
        revisions,
    })
}

/// The revisions of Instance `name`, oldest first.
pub async fn revisions(t: &Target, name: &str) -> Result<Vec<Revision>> {
    let api: Api<ControllerRevision> = Api::namespaced(t.client.clone(), &t.namespace);
    let lp = ListParams::default().labels(&revision::selector(name));
    let items = api
        .list(&lp)
        .await
        .map_err(t.api("list", "ControllerRevision", name))?
        .items;
    Ok(revision::read_all(&items).0)
}

/// Revision `asked` of `revisions` (`None`: the previous one that completed), or why not.
pub fn pick<'a>(
    t: &Target,
    name: &str,
    revisions: &'a [Revision],
    asked: Option<i64>,
) -> Result<&'a Revision> {
    let found = match asked {
        Some(n) => revisions.iter().find(|r| r.number == n),
        None => revision::previous_complete(revisions),
    };
    found.ok_or_else(|| Error::UnknownRevision {
        namespace: t.namespace.clone(),
        name: name.to_string(),
        asked: asked.map_or_else(
            || "before the newest that completed".to_string(),
            |n| n.to_string(),
        ),
        existing: revisions.iter().map(|r| r.number).collect(),
    })
}

/// What to roll back.
#[derive(Debug, Clone, Copy)]
pub struct RollbackRequest<'a> {
    /// The Instance.
    pub instance: &'a str,
    /// The revision; `None`: the previous one that completed.
    pub revision: Option<i64>,
    /// Decide and report, write nothing.
    pub dry_run: bool,
    /// Supersede the plan scheduled or running instead of refusing.
    pub force: bool,
    /// `--ignore-window`: the change runs now, even outside the Instance's maintenance window
    /// ([`kudo_crd::labels::IGNORE_WINDOW`]).
    pub ignore_window: bool,
}

/// What a rollback did (or, dry, would do).
#[derive(Clone)]
pub struct RolledBack {
    /// The revision restored.
    pub revision: Revision,
    /// The OperatorVersion the Instance ran before.
    pub from_operator_version: String,
    /// The change, as the policy decided it.
    pub change: Decision,
    /// The patch sent (or that would be).
    pub patch: Value,
    /// The generation the write produced (`None`: nothing written).
    pub generation: Option<i64>,
    /// The run superseded (`--force`).
    pub superseded: Option<kudo_policy::run::Running>,
}

/// The patch may hold values: `Debug` leaves them out.
impl std::fmt::Debug for RolledBack {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RolledBack")
            .field("revision", &self.revision.number)
            .field("change", &self.change)
            .field("generation", &self.generation)
            .finish_non_exhaustive()
    }
}

/// What a rollback decides from what it read, with no cluster ([`decide`]).
pub(crate) struct Decided {
    /// The change, as the policy decided it.
    pub change: Decision,
    /// The run the rollback supersedes (`--force`).
    pub superseded: Option<kudo_policy::run::Running>,
    /// The JSON patch that restores the revision ([`revision::restore_patch`]).
    pub ops: Vec<json_patch::PatchOperation>,
}

/// What a rollback reads besides the Instance: the versions it goes from and to, and the
/// values whole (Secrets' values under the parameters) of the revision and of the Instance.
pub(crate) struct Read<'a> {
    /// The version the Instance runs.
    pub from: &'a Version,
    /// The revision's version.
    pub to: &'a Version,
    /// The revision's values.
    pub given: &'a Value,
    /// The Instance's values.
    pub values: &'a Value,
}

/// Decides the rollback of `inst` to revision `target` ([`change::rollback`]) and the patch
/// that restores it, naming the generation it replaces ([`labels::ROLLBACK`]) and, with
/// `force`, the run it supersedes. Refused with every reason ([`Error::Parameters`]). Reads and
/// writes nothing.
pub(crate) fn decide(
    inst: &Instance,
    target: &Revision,
    read: &Read<'_>,
    force: bool,
    ignore_window: bool,
) -> Result<Decided> {
    let (blocking, superseded) = superseding(inst, read.from, force);
    let change = change::rollback(
        &installed(inst, read.from, read.values, &blocking),
        read.to,
        Proposal::Values(read.given),
        target.record.immutable_defaults.as_ref(),
    )
    .map_err(Error::Parameters)?;
    let generation = inst.metadata.generation.unwrap_or_default();
    let mut annotations = vec![(
        labels::ROLLBACK,
        revision::rollback_annotation(target.number, generation),
    )];
    // The images the restored change pinned are pinned again.
    let images = target.record.images.as_ref().map(|v| v.to_string());
    annotations.extend(super::change_annotations(
        inst,
        superseded.as_ref(),
        ignore_window,
        None,
        images.as_deref(),
    ));
    let ops = revision::restore_patch(inst, &target.record, &annotations);
    Ok(Decided {
        change,
        superseded,
        ops,
    })
}

/// The reference to the OperatorVersion revision `target` ran.
pub(crate) fn reference(t: &Target, target: &Revision) -> OperatorVersionRef {
    let ov = &target.record.operator_version;
    OperatorVersionRef {
        namespace: ov.namespace.clone().unwrap_or_else(|| t.namespace.clone()),
        name: ov.name.clone().unwrap_or_default(),
    }
}

/// The [`Version`] of the OperatorVersion revision `target` of Instance `name` ran;
/// [`Error::CannotRollBack`] when that OperatorVersion is gone.
async fn revision_version(t: &Target, name: &str, target: &Revision) -> Result<Version> {
    let cannot = |why: String| Error::CannotRollBack {
        namespace: t.namespace.clone(),
        name: name.to_string(),
        revision: target.number,
        why,
    };
    let to_ref = reference(t, target);
    match operator_version(t, &to_ref).await {
        Ok(ov) => version_of(&ov),
        Err(Error::NotFound { .. }) => Err(cannot(format!(
            "its OperatorVersion {}/{} no longer exists (install that version's package again, then roll back)",
            to_ref.namespace, to_ref.name
        ))),
        Err(e) => Err(e),
    }
}

/// Fails with [`Error::CannotRollBack`] when a Secret revision `target` names is gone.
async fn secrets_there(t: &Target, name: &str, target: &Revision) -> Result<()> {
    let secrets: Api<Secret> = Api::namespaced(t.client.clone(), &t.namespace);
    for s in &target.record.parameters_from {
        let secret = &s.secret_ref.name;
        let got = secrets
            .get_metadata_opt(secret)
            .await
            .map_err(t.api("get", "Secret", secret))?;
        if got.is_none() {
            return Err(Error::CannotRollBack {
                namespace: t.namespace.clone(),
                name: name.to_string(),
                revision: target.number,
                why: format!(
                    "Secret {}/{secret}, which held its writeOnly values, no longer exists",
                    t.namespace
                ),
            });
        }
    }
    Ok(())
}

/// Rolls Instance `req.instance` back to a revision (see the module docs). Refused with nothing
/// written: an unknown revision ([`Error::UnknownRevision`], naming those that exist), one whose
/// OperatorVersion or Secret is gone ([`Error::CannotRollBack`]), one the policy refuses
/// ([`Error::Parameters`]: an immutable value changed since, a plan in progress).
///
/// Each attempt: get (the Instance, its revisions, both versions, what the revision needs, the
/// values of both), `decide`, commit (`Entry::commit`).
pub async fn rollback(t: &Target, req: &RollbackRequest<'_>) -> Result<RolledBack> {
    let entry = Entry::new(t, req.instance);
    entry
        .run(async |_| {
            let (inst, ov_ref) = entry.get().await?;
            let all = revisions(t, req.instance).await?;
            let target = pick(t, req.instance, &all, req.revision)?.clone();
            let to = revision_version(t, req.instance, &target).await?;
            let other;
            let from = if reference(t, &target) == ov_ref {
                &to
            } else {
                other = version_of(&operator_version(t, &ov_ref).await?)?;
                &other
            };
            secrets_there(t, req.instance, &target).await?;
            // The revision's values whole: its parameters, with its Secrets' values under them
            // (read as the user, who may read the Secrets of their namespace).
            let mut shadow = inst.clone();
            shadow.spec.parameters_from = target.record.parameters_from.clone();
            let held = super::secrets::read(t, &shadow).await?;
            let given = kudo_policy::secrets::under(&target.record.parameters, &held.all);
            let current = super::secrets::read(t, &inst).await?;
            let values =
                kudo_policy::secrets::under(&super::update::parameters(&inst), &current.all);
            let read = Read {
                from,
                to: &to,
                given: &given,
                values: &values,
            };
            let d = decide(&inst, &target, &read, req.force, req.ignore_window)?;
            let done = |d: Decided, generation| RolledBack {
                revision: target.clone(),
                from_operator_version: ov_ref.name.clone(),
                change: d.change,
                patch: serde_json::to_value(&d.ops).unwrap_or_else(|_| json!([])),
                generation,
                superseded: d.superseded,
            };
            if req.dry_run {
                return Ok(Attempt::Done(done(d, None)));
            }
            // The Instance moved between the read and the write (its resourceVersion is
            // tested): read again.
            let ops = Patch::Json(json_patch::Patch(d.ops.clone()));
            Ok(match entry.commit(&inst, None, &ops).await? {
                Attempt::Done(written) => Attempt::Done(done(d, written.metadata.generation)),
                Attempt::Conflict => Attempt::Conflict,
            })
        })
        .await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::fixtures::cassandra_version;
    use kudo_crd::common::{ExecStatus, ObjectRef};
    use kudo_crd::revision::Record;

    fn revision(parameters: Value) -> Revision {
        Revision {
            number: 2,
            name: revision::name("c", 2),
            record: Record {
                operator_version: ObjectRef {
                    kind: None,
                    name: Some("cassandra-2.0.0".into()),
                    namespace: None,
                },
                parameters,
                plan: "update".into(),
                ..Record::default()
            },
            status: ExecStatus::Complete,
            message: None,
        }
    }

    #[test]
    fn a_rollback_is_the_revision_values_in_one_patch_naming_the_generation_it_replaces() {
        let inst: Instance = serde_json::from_value(json!({"apiVersion": "kudo.dev/v1beta2",
            "kind": "Instance",
            "metadata": {"name": "c", "namespace": "ns", "resourceVersion": "10", "generation": 7},
            "spec": {"operatorVersion": {"name": "cassandra-2.0.0"},
                "parameters": {"nodeCount": 5}}}))
        .expect("an Instance");
        let v = cassandra_version();
        let target = revision(json!({"nodeCount": 3}));
        let (given, values) = (json!({"nodeCount": 3}), json!({"nodeCount": 5}));
        let read = Read {
            from: &v,
            to: &v,
            given: &given,
            values: &values,
        };
        let d = decide(&inst, &target, &read, false, false).unwrap();
        assert_eq!(d.change.plan.as_deref(), Some("update"));
        assert!(d.superseded.is_none());
        let patch = serde_json::to_value(&d.ops).unwrap();
        let text = patch.to_string();
        assert!(
            text.contains(&revision::rollback_annotation(2, 7)),
            "{text}"
        );
        assert!(text.contains("/spec/parameters"), "{text}");
    }
}
