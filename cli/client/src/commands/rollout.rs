//! Rollouts (docs/rollouts.md): what `kudo rollout start|status|list|pause|resume|abort|approve`
//! do, and [`select`], the selection and upgrade preflight the manager's Rollout controller
//! runs when a Rollout starts. It is the same code, so `kudo rollout start --dry-run` lists
//! what the controller will select.
//!
//! [`start`] checks the spec ([`RolloutSpec::check`], what the admission webhook also
//! refuses), creates the target OperatorVersion when missing (as `kudo upgrade` does), then
//! the Rollout. A refused start leaves nothing behind: an OperatorVersion it created is
//! deleted again when the Rollout cannot be created.

use std::sync::OnceLock;

use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::{Client, ResourceExt};
use serde_json::json;

use kudo_crd::common::ObjectRef;
use kudo_crd::rollout::{Member, Rollout, RolloutSpec};
use kudo_crd::v1beta2::Instance;
use kudo_policy::preflight::Allow;
use kudo_policy::rollout::{self as policy, Candidate, Phase, Waves};

use super::{Error, Inputs, Result, Target, history, upgrade};

/// The waves of a Rollout that names none: one Instance, then the rest.
pub const DEFAULT_WAVES: [&str; 2] = ["1", "100%"];

/// What [`select`] found.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Selection {
    /// The Instances in rollout order, each with its wave; those the preflight refuses come
    /// last, `Skipped`, with the reason.
    pub members: Vec<Member>,
    /// Each wave's cumulative end (`[1, 6, 30]`).
    pub wave_ends: Vec<u32>,
    /// The rights the target version needs that a version it moves Instances from did not
    /// ([`super::service_account::needed_rights`]): when any, the rollout waits for an
    /// approval, whatever its spec says.
    pub grown_rights: Vec<String>,
}

/// Selects the Instances `ro` moves to `target`, runs the upgrade preflight for each (the
/// dry run of `kudo upgrade`), orders them (`kudo_policy::rollout::order`) and fixes the
/// waves. `Err` is why the rollout is refused: an unsafe Instance (unless `spec.skipUnsafe`),
/// nothing selected, a namespace whose Instances cannot be read.
///
/// The namespaces of `spec.namespaceSelector` are listed with `namespaces` (the manager's
/// client in the controller: a tenant's account seldom may list namespaces, and a name alone
/// reaches nothing); everything else is read as `acting`, the rollout's account, so a
/// namespace it may not read refuses the rollout.
pub async fn select(
    acting: &Client,
    namespaces: &Client,
    ro: &Rollout,
    target: &kudo_pkg::Package,
) -> std::result::Result<Selection, String> {
    let ns = ro.namespace().unwrap_or_default();
    let waves = if ro.spec.waves.is_empty() {
        Waves::from_list(&DEFAULT_WAVES.map(String::from))
    } else {
        Waves::from_list(&ro.spec.waves)
    }
    .map_err(|e| e.to_string())?;
    let found = selected(acting, namespaces, ro, &ns).await?;
    let target_name = &ro.spec.operator_version.name.clone().unwrap_or_default();
    let mut safe = Vec::new();
    let mut refused = Vec::new();
    for inst in &found {
        let t = Target::new(acting.clone(), inst.namespace().as_deref());
        let name = inst.name_any();
        let req = upgrade_request(&name, target, true);
        match upgrade::upgrade(&t, &req).await {
            Ok(_) => safe.push(inst),
            Err(Error::AlreadyRuns { .. }) => {}
            Err(e) => refused.push((inst, e.to_string())),
        }
    }
    if !refused.is_empty() && !ro.spec.skip_unsafe {
        return Err(format!(
            "the upgrade preflight refuses {} of {} selected Instances (spec.skipUnsafe leaves them out): {}",
            refused.len(),
            found.len(),
            refused
                .iter()
                .map(|(i, why)| format!("{}: {why}", key(i)))
                .collect::<Vec<_>>()
                .join("; ")
        ));
    }
    if safe.is_empty() {
        return Err(format!(
            "no selected Instance can move: {} already run {target_name}, {} are refused by the preflight",
            found.len() - refused.len(),
            refused.len()
        ));
    }
    let mut candidates: Vec<Candidate> = safe
        .iter()
        .map(|i| {
            Candidate::new(
                &i.namespace().unwrap_or_default(),
                &i.name_any(),
                Some(i.labels()),
            )
        })
        .collect();
    policy::order(&mut candidates);
    let ends = waves.ends(candidates.len());
    let mut members = Vec::new();
    for (k, c) in candidates.iter().enumerate() {
        let inst = safe
            .iter()
            .find(|i| {
                i.name_any() == c.name && i.namespace().as_deref() == Some(c.namespace.as_str())
            })
            .ok_or("internal error: a candidate is not a selected Instance")?;
        let mut m = Member {
            namespace: c.namespace.clone(),
            name: c.name.clone(),
            wave: ends.iter().position(|&e| k < e).unwrap_or(0) as u32,
            from_version: inst.spec.operator_version_name(),
            from_revision: latest_revision(acting, inst).await,
            ..Member::default()
        };
        m.set_state(policy::Member::Pending);
        members.push(m);
    }
    for (inst, why) in refused {
        let mut m = Member {
            namespace: inst.namespace().unwrap_or_default(),
            name: inst.name_any(),
            wave: ends.len() as u32,
            from_version: inst.spec.operator_version_name(),
            reason: Some(why),
            ..Member::default()
        };
        m.set_state(policy::Member::Skipped);
        members.push(m);
    }
    Ok(Selection {
        members,
        wave_ends: ends.iter().map(|&e| e as u32).collect(),
        grown_rights: grown_rights(acting, &safe, target).await?,
    })
}

/// The rights `target` needs that the version of one of `from` did not.
async fn grown_rights(
    acting: &Client,
    from: &[&Instance],
    target: &kudo_pkg::Package,
) -> std::result::Result<Vec<String>, String> {
    let wanted = super::service_account::needed_rights(target);
    let mut seen = std::collections::BTreeSet::new();
    let mut grown = std::collections::BTreeSet::new();
    for inst in from {
        let ns = inst.namespace().unwrap_or_default();
        let Some(reference) = inst.spec.operator_version_ref(&ns) else {
            continue;
        };
        if !seen.insert((reference.namespace.clone(), reference.name.clone())) {
            continue;
        }
        let ov = super::read_operator_version(acting, &reference)
            .await
            .map_err(|e| {
                format!(
                    "OperatorVersion {}/{} of Instance {} cannot be read: {}",
                    reference.namespace,
                    reference.name,
                    key(inst),
                    kudo_cluster::said(&e)
                )
            })?;
        let Some(old) = ov.as_ref().and_then(|ov| super::package_of(ov).ok()) else {
            continue;
        };
        let had = super::service_account::needed_rights(&old);
        grown.extend(wanted.difference(&had).cloned());
    }
    Ok(grown.into_iter().collect())
}

/// The Instances of the operator that the selectors match, in the namespaces they name.
async fn selected(
    acting: &Client,
    namespaces: &Client,
    ro: &Rollout,
    ns: &str,
) -> std::result::Result<Vec<Instance>, String> {
    let query = ro.spec.instance_query()?;
    let namespace_query = ro.spec.namespace_query().transpose()?;
    let (names, found): (_, Vec<Instance>) =
        kudo_cluster::select::across(acting, namespaces, ns, &query, namespace_query.as_deref())
            .await?;
    if found.is_empty() {
        return Err(format!(
            "spec.selector matches no Instance of operator {} ({query} in {})",
            ro.spec.operator,
            names.join(", ")
        ));
    }
    Ok(found)
}

/// `namespace/name`.
fn key(i: &Instance) -> String {
    format!("{}/{}", i.namespace().unwrap_or_default(), i.name_any())
}

/// The number of an Instance's latest revision: what a rollback to "before the rollout"
/// restores.
async fn latest_revision(acting: &Client, inst: &Instance) -> Option<i64> {
    let t = Target::new(acting.clone(), inst.namespace().as_deref());
    let revisions = history::revisions(&t, &inst.name_any()).await.ok()?;
    revisions.iter().map(|r| r.number).max()
}

/// The upgrade of `instance` to `package` as a rollout makes it: no values given, and the
/// preflight's findings refuse it (`kudo upgrade` without `--force`).
pub fn upgrade_request<'a>(
    instance: &'a str,
    package: &'a kudo_pkg::Package,
    dry_run: bool,
) -> upgrade::Request<'a> {
    static ALLOW: OnceLock<Allow> = OnceLock::new();
    upgrade::Request {
        instance,
        package,
        dependencies: Some(&[]),
        inputs: Inputs::default(),
        dry_run,
        force: false,
        ignore_window: false,
        remediation: None,
        allow: ALLOW.get_or_init(Allow::default),
        images: None,
    }
}

/// `kudo rollout start`.
#[derive(Debug)]
pub struct StartRequest<'a> {
    /// The Rollout's name.
    pub name: &'a str,
    /// The version to move to.
    pub package: &'a kudo_pkg::Package,
    /// Its KudoOperator dependencies, resolved where the package was read (`None`: from
    /// paths beside it).
    pub dependencies: Option<&'a [kudo_pkg::dependency::Dependency]>,
    /// The spec; `operator` and `operatorVersion` are the package's.
    pub spec: RolloutSpec,
    /// Create nothing: check, and select as the controller would.
    pub dry_run: bool,
}

/// What [`start`] did.
#[derive(Debug)]
pub struct Started {
    /// The Rollout, as created (or as it would be).
    pub rollout: Rollout,
    /// Whether the target OperatorVersion was created (a dry run: would be).
    pub created_operator_version: bool,
    /// A dry run: what the controller would select, or why it would refuse.
    pub selection: Option<std::result::Result<Selection, String>>,
}

/// Starts a rollout (see the module docs). Refused, with nothing written, when the spec is
/// not valid ([`Error::Rollout`]), a Rollout of that name exists, the selection the controller
/// would make fails as you ([`select`]: nothing matches, the preflight refuses, a namespace
/// cannot be read), or the OperatorVersion of that name exists with another spec.
pub async fn start(t: &Target, req: &StartRequest<'_>) -> Result<Started> {
    let resolved = super::resolved(req.package, req.dependencies)?;
    let deps = super::dependencies(t, &resolved).await?;
    let (operator, ov) = kudo_crd::package::objects_with(req.package, &t.namespace, &resolved);
    let existing = super::same_operator_version(t, &ov).await?;
    let mut spec = req.spec.clone();
    spec.operator = req.package.operator().name.clone();
    spec.operator_version = ObjectRef {
        name: existing.clone().or_else(|| ov.metadata.name.clone()),
        ..ObjectRef::default()
    };
    let mut rollout = Rollout::new(req.name, spec);
    rollout.metadata.namespace = Some(t.namespace.clone());
    let problems = rollout.spec.check(jiff::Timestamp::now());
    if !problems.is_empty() {
        return Err(Error::Rollout {
            rollout: format!("{}/{}", t.namespace, req.name),
            problems,
        });
    }
    let api: Api<Rollout> = Api::namespaced(t.client.clone(), &t.namespace);
    if api
        .get_opt(req.name)
        .await
        .map_err(t.api("get", "Rollout", req.name))?
        .is_some()
    {
        return Err(Error::Rollout {
            rollout: format!("{}/{}", t.namespace, req.name),
            problems: vec!["a Rollout of that name exists (`kudo rollout status` shows it; delete it to start again)".into()],
        });
    }
    let created = existing.is_none();
    // What the controller will select, checked as you before anything is written: a selector
    // that matches nothing, or a preflight that refuses, refuses the start.
    let selection = select(&t.client, &t.client, &rollout, req.package).await;
    if req.dry_run {
        return Ok(Started {
            rollout,
            created_operator_version: created,
            selection: Some(selection),
        });
    }
    if let Err(why) = selection {
        return Err(Error::Rollout {
            rollout: format!("{}/{}", t.namespace, req.name),
            problems: vec![why],
        });
    }
    super::create_missing(t, &deps).await?;
    if created {
        super::ensure_operator(t, &operator).await?;
        super::create_operator_version(t, &ov).await?;
    }
    match api.create(&PostParams::default(), &rollout).await {
        Ok(rollout) => Ok(Started {
            rollout,
            created_operator_version: created,
            selection: None,
        }),
        Err(e) => {
            if created {
                let name = ov.metadata.name.clone().unwrap_or_default();
                let ovs: Api<kudo_crd::v1beta2::OperatorVersion> =
                    Api::namespaced(t.client.clone(), &t.namespace);
                let _ = ovs.delete(&name, &DeleteParams::default()).await;
            }
            Err(t.api("create", "Rollout", req.name)(e))
        }
    }
}

/// The Rollout `name`.
pub async fn get(t: &Target, name: &str) -> Result<Rollout> {
    Api::<Rollout>::namespaced(t.client.clone(), &t.namespace)
        .get_opt(name)
        .await
        .map_err(t.api("get", "Rollout", name))?
        .ok_or_else(|| t.not_found("Rollout", name))
}

/// The Rollouts of `t`'s namespace, or of every namespace (`all`), by namespace and name.
pub async fn list(t: &Target, all: bool) -> Result<Vec<Rollout>> {
    let api: Api<Rollout> = if all {
        Api::all(t.client.clone())
    } else {
        Api::namespaced(t.client.clone(), &t.namespace)
    };
    let namespace = if all { "" } else { t.namespace.as_str() };
    let mut items = api
        .list(&ListParams::default())
        .await
        .map_err(|e| Error::Api {
            action: "list",
            kind: "Rollout",
            namespace: namespace.to_string(),
            name: String::new(),
            source: Box::new(e),
        })?
        .items;
    items.sort_by_key(|r| (r.namespace(), r.name_any()));
    Ok(items)
}

/// A change a person makes to a running rollout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Control {
    /// Start nothing new (`kudo rollout pause`).
    Pause,
    /// Go on; a halted rollout retries its halted wave (`kudo rollout resume`).
    Resume,
    /// Stop for good; with `rollback`, what it moved goes back (`kudo rollout abort`).
    Abort {
        /// Roll back every Instance the rollout moved.
        rollback: bool,
    },
    /// Approve it (`kudo rollout approve`): `by` is written as `approvedBy`; the admission
    /// webhook records the requesting user there, and admits it only from a user who may
    /// `approve` `rollouts`.
    Approve {
        /// The name to record.
        by: String,
    },
}

/// Applies `control` to Rollout `name`: one merge patch, guarded by the resourceVersion read
/// (re-read and redone when another writer got there first). Refused when the rollout is
/// over, or (approve) when it asks for no approval.
pub async fn control(t: &Target, name: &str, control: &Control) -> Result<Rollout> {
    let api: Api<Rollout> = Api::namespaced(t.client.clone(), &t.namespace);
    let written = super::entry::retry(super::MAX_ATTEMPTS, async |_| {
        let ro = get(t, name).await?;
        let status = ro.status.clone().unwrap_or_default();
        let phase = status.phase();
        let refuse = |why: String| Error::Rollout {
            rollout: format!("{}/{name}", t.namespace),
            problems: vec![why],
        };
        let halted = phase == Phase::Halted;
        let resume_halted = halted && *control == Control::Resume;
        let abort_halted = halted && matches!(control, Control::Abort { .. });
        if phase.is_final() && !resume_halted && !abort_halted {
            return Err(refuse(format!(
                "it is {phase:?}: a rollout that ended does not change{}",
                if halted {
                    " but by resume or abort"
                } else {
                    ""
                }
            )));
        }
        let spec = match control {
            Control::Pause => json!({"paused": true}),
            Control::Resume if resume_halted => {
                json!({"paused": false, "retry": ro.spec.retry.unwrap_or(0) + 1})
            }
            Control::Resume => json!({"paused": false}),
            Control::Abort { rollback } => json!({"abort": {"rollback": rollback}}),
            Control::Approve { by } => {
                let asked = ro.spec.approval.as_ref().is_some_and(|a| a.required);
                if !asked && status.grown_rights.is_empty() {
                    return Err(refuse(
                        "it asks for no approval (spec.approval.required, or a new version that needs new rights)".into(),
                    ));
                }
                json!({"approval": {"approvedBy": by}})
            }
        };
        let patch = json!({"metadata": {"resourceVersion": ro.metadata.resource_version},
            "spec": spec});
        match api
            .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
        {
            Ok(r) => Ok(super::entry::Attempt::Done(r)),
            Err(kube::Error::Api(s)) if s.code == 409 => Ok(super::entry::Attempt::Conflict),
            Err(e) => Err(t.api("patch", "Rollout", name)(e)),
        }
    })
    .await?;
    written.ok_or_else(|| Error::Rollout {
        rollout: format!("{}/{name}", t.namespace),
        problems: vec![format!(
            "it changed under this command {} times in a row (HTTP 409 Conflict); nothing was written: try again",
            super::MAX_ATTEMPTS
        )],
    })
}

/// Polls Rollout `name` until it ends ([`Phase::is_final`]) and returns it; each reading goes
/// to `watch`. Ends with [`Error::Timeout`] when `o.timeout` runs out.
pub async fn wait(
    t: &Target,
    name: &str,
    o: &super::wait::Options,
    watch: &mut dyn FnMut(&Rollout),
) -> Result<Rollout> {
    let start = tokio::time::Instant::now();
    let what = format!("Rollout {}/{name} to end", t.namespace);
    loop {
        let ro = get(t, name).await?;
        watch(&ro);
        let status = ro.status.clone().unwrap_or_default();
        if status.phase().is_final() {
            return Ok(ro);
        }
        let last = format!(
            "{:?}: {}",
            status.phase(),
            status.message.as_deref().unwrap_or("no message")
        );
        super::wait::sleep_or_time_out(start, o, &what, &last).await?;
    }
}
