//! `kudo plan status` and `kudo plan trigger`.
//!
//! [`status`] reads the Instance and its OperatorVersion into a [`StatusView`]: every plan of
//! the OperatorVersion with its status (NEVER_RUN when the Instance status has none), the
//! active plan with its phases and steps. The view serializes (`-o json|yaml`) and displays as
//! a tree. [`trigger`] asks the manager for a plan run: `spec.planExecution = {planName, uid}`
//! with a fresh uid, as a JSON merge patch, once [`kudo_policy::change::trigger_plan`] allows it
//! (the rule the admission webhook applies too): not while another plan is scheduled or
//! running, unless `force` supersedes that run.

use std::fmt;

use kube::api::Patch;
use serde::Serialize;
use serde_json::json;

use super::entry::{Attempt, Entry};
use super::{Error, Result, Target, installed, instance_and_version, operator_version, version_of};
use kudo_crd::common::{ActivePlan, AwaitingWindow, ExecStatus, PhaseStatus, PlanStatus};

use kudo_crd::v1beta2::{Instance, OperatorVersion};
use kudo_policy::change;

/// What a trigger asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Triggered {
    /// The plan.
    pub plan: String,
    /// The run's uid (the active plan's uid once the manager starts it).
    pub uid: String,
    /// The `metadata.generation` the write produced.
    pub generation: Option<i64>,
    /// The run the trigger supersedes (`force` while another plan was scheduled or running).
    pub superseded: Option<kudo_policy::run::Running>,
}

/// Asks the manager to run `plan` on Instance `instance`, as run `uid` (see
/// [`super::new_uid`]). Refused with nothing written: [`Error::UnknownPlan`] (listing the plans)
/// when the Instance's OperatorVersion has no such plan; [`Error::Parameters`] when
/// [`change::trigger_plan`] refuses (another plan scheduled or running, the Instance being
/// deleted). With `force`, the run in progress is superseded instead: the patch names it in
/// [`kudo_crd::labels::SUPERSEDE`], as `kudo update --force` does. With `ignore_window`, the run starts
/// even outside the Instance's maintenance window ([`kudo_crd::labels::IGNORE_WINDOW`]).
pub async fn trigger(
    t: &Target,
    instance: &str,
    plan: &str,
    uid: &str,
    force: bool,
    ignore_window: bool,
) -> Result<Triggered> {
    let entry = Entry::new(t, instance);
    entry
        .run(async |_| {
            let (inst, ov_ref) = entry.get().await?;
            let ov = operator_version(t, &ov_ref).await?;
            let flags = (force, ignore_window);
            let (patch, superseded) = decide(&inst, &ov_ref.name, &ov, plan, uid, flags)?;
            Ok(
                match entry.commit(&inst, None, &Patch::Merge(patch)).await? {
                    Attempt::Done(written) => Attempt::Done(Triggered {
                        plan: plan.to_string(),
                        uid: uid.to_string(),
                        generation: written.metadata.generation,
                        superseded,
                    }),
                    // Not conditioned on what was read: the API server has no reason to refuse it.
                    Attempt::Conflict => Attempt::Conflict,
                },
            )
        })
        .await
}

/// Decides a trigger of `plan` as run `uid` on `inst`, which runs `ov` (named `ov_name` by
/// the Instance): the merge patch that asks for it, and the run it supersedes (`force`).
/// Refused with nothing to write: [`Error::UnknownPlan`], or [`change::trigger_plan`]'s
/// refusal. Reads nothing.
fn decide(
    inst: &Instance,
    ov_name: &str,
    ov: &OperatorVersion,
    plan: &str,
    uid: &str,
    (force, ignore_window): (bool, bool),
) -> Result<(serde_json::Value, Option<kudo_policy::run::Running>)> {
    if !ov.spec.plans.contains_key(plan) {
        return Err(Error::UnknownPlan {
            plan: plan.to_string(),
            operator_version: ov_name.to_string(),
            plans: ov.spec.plans.keys().cloned().collect(),
        });
    }
    let version = &version_of(ov)?;
    let values = super::update::parameters(inst);
    let (blocking, superseded) = super::superseding(inst, version, force);
    change::trigger_plan(&installed(inst, version, &values, &blocking), plan, None)
        .map_err(Error::Parameters)?;
    let mut patch = json!({"spec": {"planExecution": {"planName": plan, "uid": uid}}});
    let annotations =
        super::change_annotations(inst, superseded.as_ref(), ignore_window, None, None);
    if !annotations.is_empty() {
        patch["metadata"] = json!({"annotations": super::annotations_object(&annotations)});
    }
    Ok((patch, superseded))
}

/// The plans of an Instance and their statuses.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StatusView {
    /// The Instance.
    pub instance: String,
    /// Its namespace.
    pub namespace: String,
    /// Its OperatorVersion.
    pub operator_version: String,
    /// The plan running now, or the last one run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub active_plan: Option<ActivePlan>,
    /// The plan a change needs, held until the maintenance window opens (`spec.window`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub awaiting_window: Option<AwaitingWindow>,
    /// Every plan: the OperatorVersion's, then any other the status has.
    pub plans: Vec<PlanView>,
}

/// A plan and its status.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanView {
    /// Name.
    pub name: String,
    /// `serial` or `parallel`, when the OperatorVersion says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub strategy: Option<String>,
    /// NEVER_RUN, PENDING, IN_PROGRESS, ERROR, FATAL_ERROR or COMPLETE.
    pub status: ExecStatus,
    /// Why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// The run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uid: Option<String>,
    /// When the status last changed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_updated: Option<String>,
    /// The phases.
    pub phases: Vec<PhaseView>,
    /// What the run applied otherwise than its templates say (converted API versions, dropped
    /// undeclared fields).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// A phase and its status.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PhaseView {
    /// Name.
    pub name: String,
    /// `serial` or `parallel`, when the OperatorVersion says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub strategy: Option<String>,
    /// Its status.
    pub status: ExecStatus,
    /// Why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// The steps.
    pub steps: Vec<StepView>,
}

/// A step and its status.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StepView {
    /// Name.
    pub name: String,
    /// Its status.
    pub status: ExecStatus,
    /// Why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// KUDO shows a plan, phase or step without a status as NEVER_RUN.
fn or_never(s: Option<&ExecStatus>) -> ExecStatus {
    s.cloned().unwrap_or(ExecStatus::NeverRun)
}

/// The view of `inst`'s plans; the structure (phases, steps, strategies) comes from `ov` when
/// given, else from the status alone.
pub fn view(inst: &Instance, ov: Option<&OperatorVersion>) -> StatusView {
    let status = inst.status.clone().unwrap_or_default();
    let mut plans = Vec::new();
    let empty = PlanStatus::default();
    if let Some(ov) = ov {
        for (name, plan) in &ov.spec.plans {
            let ps = status.plan_status.get(name).unwrap_or(&empty);
            let phases = plan
                .phases
                .iter()
                .map(|ph| {
                    let phs = ps.phases.iter().find(|p| p.name == ph.name);
                    PhaseView {
                        name: ph.name.clone(),
                        strategy: ph.strategy.clone(),
                        status: or_never(phs.and_then(|p| p.status.as_ref())),
                        message: phs.and_then(|p| p.message.clone()),
                        steps: ph
                            .steps
                            .iter()
                            .map(|st| {
                                let sts =
                                    phs.and_then(|p| p.steps.iter().find(|s| s.name == st.name));
                                StepView {
                                    name: st.name.clone(),
                                    status: or_never(sts.and_then(|s| s.status.as_ref())),
                                    message: sts.and_then(|s| s.message.clone()),
                                }
                            })
                            .collect(),
                    }
                })
                .collect();
            plans.push(plan_view(name, plan.strategy.clone(), ps, phases));
        }
    }
    for (name, ps) in &status.plan_status {
        if plans.iter().any(|p: &PlanView| &p.name == name) {
            continue;
        }
        let phases = ps.phases.iter().map(phase_from_status).collect();
        plans.push(plan_view(name, None, ps, phases));
    }
    StatusView {
        instance: inst.metadata.name.clone().unwrap_or_default(),
        namespace: inst.metadata.namespace.clone().unwrap_or_default(),
        operator_version: inst.spec.operator_version_name().unwrap_or_default(),
        active_plan: status.active_plan.clone(),
        awaiting_window: status.awaiting_window.clone(),
        plans,
    }
}

fn plan_view(
    name: &str,
    strategy: Option<String>,
    ps: &PlanStatus,
    phases: Vec<PhaseView>,
) -> PlanView {
    PlanView {
        name: name.to_string(),
        strategy,
        status: or_never(ps.status.as_ref()),
        message: ps.message.clone(),
        uid: ps.uid.clone(),
        last_updated: ps.last_updated_timestamp.clone(),
        phases,
        warnings: ps.warnings.clone(),
    }
}

fn phase_from_status(p: &PhaseStatus) -> PhaseView {
    PhaseView {
        name: p.name.clone(),
        strategy: None,
        status: or_never(p.status.as_ref()),
        message: p.message.clone(),
        steps: p
            .steps
            .iter()
            .map(|s| StepView {
                name: s.name.clone(),
                status: or_never(s.status.as_ref()),
                message: s.message.clone(),
            })
            .collect(),
    }
}

/// Reads Instance `name` and its OperatorVersion (when it is there) into a [`StatusView`].
pub async fn status(t: &Target, name: &str) -> Result<StatusView> {
    let (inst, ov_ref) = instance_and_version(t, name).await?;
    let ov = super::read_operator_version(&t.client, &ov_ref)
        .await
        .map_err(t.api("get", "OperatorVersion", &ov_ref.name))?;
    Ok(view(&inst, ov.as_ref()))
}

fn label(
    kind: &str,
    name: &str,
    strategy: Option<&str>,
    status: &str,
    message: Option<&str>,
) -> String {
    let mut s = format!("{kind} {name}");
    if let Some(st) = strategy {
        s.push_str(&format!(" ({st})"));
    }
    s.push_str(&format!(" [{status}]"));
    if let Some(m) = message {
        s.push_str(&format!(": {m}"));
    }
    s
}

/// A node's branch in the tree and the indent of its children: the last of its siblings
/// closes the branch.
fn branch(last: bool) -> (&'static str, &'static str) {
    if last {
        ("└── ", "    ")
    } else {
        ("├── ", "│   ")
    }
}

/// The tree: the active plan first, expanded to its phases and steps; then every other plan on
/// one line.
impl fmt::Display for StatusView {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let active = self.active_plan.as_ref().map(|a| a.name.as_str());
        writeln!(
            f,
            "Instance {}/{} (OperatorVersion {}), active plan: {}",
            self.namespace,
            self.instance,
            self.operator_version,
            active.unwrap_or("none")
        )?;
        if let Some(w) = &self.awaiting_window {
            writeln!(
                f,
                "plan {} (run {}) is AwaitingWindow: the maintenance window opens at {} (waiting since {}; --ignore-window runs a change now)",
                w.plan, w.uid, w.opens_at, w.since
            )?;
        }
        let mut order: Vec<&PlanView> = self
            .plans
            .iter()
            .filter(|p| Some(p.name.as_str()) == active)
            .collect();
        order.extend(
            self.plans
                .iter()
                .filter(|p| Some(p.name.as_str()) != active),
        );
        for (i, plan) in order.iter().enumerate() {
            let (b1, indent) = branch(i + 1 == order.len());
            writeln!(
                f,
                "{b1}{}",
                label(
                    "plan",
                    &plan.name,
                    plan.strategy.as_deref(),
                    plan.status.as_str(),
                    plan.message.as_deref()
                )
            )?;
            if Some(plan.name.as_str()) != active {
                continue;
            }
            for w in &plan.warnings {
                writeln!(f, "{indent}! warning: {w}")?;
            }
            for (j, phase) in plan.phases.iter().enumerate() {
                let (b2, i2) = branch(j + 1 == plan.phases.len());
                writeln!(
                    f,
                    "{indent}{b2}{}",
                    label(
                        "phase",
                        &phase.name,
                        phase.strategy.as_deref(),
                        phase.status.as_str(),
                        phase.message.as_deref()
                    )
                )?;
                for (k, step) in phase.steps.iter().enumerate() {
                    let (b3, _) = branch(k + 1 == phase.steps.len());
                    writeln!(
                        f,
                        "{indent}{i2}{b3}{}",
                        label(
                            "step",
                            &step.name,
                            None,
                            step.status.as_str(),
                            step.message.as_deref()
                        )
                    )?;
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ov() -> OperatorVersion {
        kudo_crd::package::objects(&crate::commands::fixtures::cassandra(), "ns").1
    }

    fn inst() -> Instance {
        serde_json::from_value(json!({"apiVersion": "kudo.dev/v1beta2", "kind": "Instance",
            "metadata": {"name": "c", "namespace": "ns", "generation": 1},
            "spec": {"operatorVersion": {"name": "cassandra-2.0.0"}}}))
        .expect("an Instance")
    }

    #[test]
    fn a_trigger_is_a_merge_patch_of_the_plan_execution() {
        let (patch, superseded) = decide(
            &inst(),
            "cassandra-2.0.0",
            &ov(),
            "deploy",
            "u1",
            (false, false),
        )
        .expect("allowed");
        assert_eq!(
            patch,
            json!({"spec": {"planExecution": {"planName": "deploy", "uid": "u1"}}})
        );
        assert!(superseded.is_none());
    }

    #[test]
    fn a_plan_the_operator_version_lacks_is_refused_naming_its_plans() {
        let Err(Error::UnknownPlan {
            operator_version,
            plans,
            ..
        }) = decide(&inst(), "cassandra", &ov(), "nope", "u1", (false, false))
        else {
            panic!("refused");
        };
        assert_eq!(operator_version, "cassandra");
        assert!(plans.contains(&"deploy".to_string()));
    }
}
