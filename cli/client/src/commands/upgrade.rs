//! `kudo upgrade PACKAGE --instance NAME`: the Instance moved to the package's version, with
//! the rules of `kudo upgrade -f` and of the admission webhook ([`kudo_policy::change::upgrade`]).
//!
//! The installed OperatorVersion (read from the cluster) is the old package, PACKAGE the new:
//! values move by `oldName`, `-P` and `-p` apply, everything is validated; then the new
//! OperatorVersion is created when missing (refused when it exists with another spec) and the
//! Instance patched (`spec.operatorVersion.name` and the migrated parameters) with its
//! `metadata.resourceVersion` as precondition, read again and redone on 409 Conflict.

use kube::api::Patch;
use kudo_pkg::Package;
use kudo_pkg::render::{PlanObject, Prepared};
use kudo_policy::change::{self, Decision, Version};
use kudo_policy::preflight::Allow;
use serde_json::{Value, json};

use super::entry::{Attempt, Entry};
use super::update::{parameters, resource_version};
use super::{
    Error, Inputs, Result, Target, create_operator_version, installed, merge, operator_version,
    package_and_version, same_operator_version, secrets, service_account,
};
use kudo_crd::v1beta2::Instance;
use kudo_crd::{labels, package};

/// What to upgrade.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    /// The Instance's name.
    pub instance: &'a str,
    /// The package to upgrade to.
    pub package: &'a Package,
    /// Its KudoOperator dependencies, resolved; `None`: resolved here from paths (as
    /// [`super::install::Request::dependencies`]).
    pub dependencies: Option<&'a [kudo_pkg::dependency::Dependency]>,
    /// `-P` and `-p`, applied after the migration.
    pub inputs: Inputs<'a>,
    /// Compute and report, send nothing.
    pub dry_run: bool,
    /// `--force`: supersede the plan scheduled or running instead of refusing the upgrade.
    pub force: bool,
    /// `--ignore-window`: the change runs now, even outside the Instance's maintenance window
    /// ([`kudo_crd::labels::IGNORE_WINDOW`]).
    pub ignore_window: bool,
    /// `--rollback-on-failure [--timeout]`: the remediation of this change only
    /// ([`kudo_crd::labels::REMEDIATE_ONCE`]).
    pub remediation: Option<&'a kudo_crd::common::Remediation>,
    /// `--allow-drop POINTER` and `--force`: what the upgrade preflight lets through
    /// ([`kudo_policy::preflight`]), written for the webhook and the manager
    /// ([`kudo_crd::labels::PREFLIGHT`]).
    pub allow: &'a Allow,
    /// The check of the images the change runs ([`super::ImageGate`]); `None`: not checked.
    pub images: Option<&'a dyn super::ImageGate>,
}

/// What an upgrade did (or, with `dry_run`, would do).
#[derive(Clone)]
pub struct Upgraded {
    /// The new parameters, the plan (`upgrade`, else `update`, else `deploy`), the changes
    /// given with it, warnings and the migration report (moved, kept, defaulted, dropped).
    pub change: Decision,
    /// The OperatorVersion the Instance ran.
    pub from: String,
    /// The OperatorVersion it runs now.
    pub to: String,
    /// Whether the new OperatorVersion was created (else it existed with the same spec).
    pub created_operator_version: bool,
    /// The merge patch sent (or that would be sent).
    pub patch: Value,
    /// The `metadata.generation` the write produced (`None` on a dry run).
    pub generation: Option<i64>,
    /// Writes attempted.
    pub attempts: usize,
    /// The run the upgrade supersedes (`--force` while a plan was scheduled or running).
    pub superseded: Option<kudo_policy::run::Running>,
}

/// The patch holds values, secrets included: `Debug` shows the pointers it sets.
impl std::fmt::Debug for Upgraded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Upgraded")
            .field("change", &self.change)
            .field("from", &self.from)
            .field("to", &self.to)
            .field("created_operator_version", &self.created_operator_version)
            .field("patch", &kudo_diag::pointer::leaves(&self.patch))
            .field("generation", &self.generation)
            .field("attempts", &self.attempts)
            .field("superseded", &self.superseded)
            .finish()
    }
}

/// The CRD preflight of an upgrade ([`kudo_cluster::crd_preflight`]): every CRD the new
/// version's plans apply, rendered with the upgrade's values, compared with the one in the
/// cluster. An unsafe change refuses the upgrade, every one at once ([`Error::Parameters`], the
/// CRD, version, field and OLM's rule named), unless `force`: then each is a warning that says
/// so. A CRD this identity cannot read is a warning (not checked here; the manager checks it
/// again before applying it).
async fn crd_preflight(
    t: &Target,
    objects: &[PlanObject],
    force: bool,
) -> Result<Vec<kudo_diag::diag::Diagnostic>> {
    use kudo_cluster::crd_preflight::{self, Preflight};
    use kudo_diag::diag::{Code, Diagnostic, Severity};
    let mut refused = Vec::new();
    let mut told = Vec::new();
    for crd in kudo_pkg::preflight::applied_crds(objects) {
        match crd_preflight::check(&t.client, &crd).await {
            Preflight::New => {}
            Preflight::Unreadable(why) => {
                let name = crd
                    .pointer("/metadata/name")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                told.push(Diagnostic::warning(
                    Code::Unchecked,
                    "",
                    format!("CRD {name} was not checked against the cluster's: {why}"),
                ));
            }
            Preflight::Checked(findings) => {
                for f in findings.iter().filter(|f| !f.safe) {
                    let d = f.to_diagnostic();
                    if force {
                        told.push(Diagnostic {
                            severity: Severity::Warning,
                            message: format!("{} (allowed by --force)", d.message),
                            ..d
                        });
                    } else {
                        refused.push(d.with_help(
                            "keep the CRD compatible (a new version of it, or optional fields), or apply it anyway: kudo upgrade --force",
                        ));
                    }
                }
            }
        }
    }
    if refused.is_empty() {
        Ok(told)
    } else {
        Err(Error::Parameters(refused))
    }
}

/// What an upgrade decides from what it read, with no cluster (`decide`).
pub(crate) struct Decided {
    /// The change, as the policy decided it.
    pub change: Decision,
    /// Where its values go: `spec.parameters`, kudo's Secret.
    pub write: secrets::Write,
    /// The run the upgrade supersedes (`--force`).
    pub superseded: Option<kudo_policy::run::Running>,
    /// The `kudo.dev/images` annotation of the images it runs, when they were checked.
    pub images: Option<String>,
}

/// Decides the upgrade of `inst` (running `old`, its Secrets holding `sources`) to `new` with
/// `req`'s inputs ([`change::upgrade`]). Refused with every reason, located in the new
/// package ([`Error::Parameters`]). Reads and writes nothing.
pub(crate) fn decide(
    inst: &Instance,
    old: &Version,
    new: &Version,
    sources: &secrets::Sources,
    req: &Request<'_>,
) -> Result<Decided> {
    let current = kudo_policy::secrets::under(&parameters(inst), &sources.all);
    let (blocking, superseded) = super::superseding(inst, old, req.force);
    let change = change::upgrade(
        &installed(inst, old, &current, &blocking),
        new,
        req.inputs.proposal(),
        req.allow,
    )
    .map_err(|d| Error::Parameters(req.package.located(d)))?;
    // writeOnly values (moved by oldName, or given) go to kudo's Secret.
    let write = secrets::Write::of(&new.schema, &change.explicit, sources, inst)?;
    // The images of the plan it runs, checked and pinned before it is written.
    let images = super::gate_images(
        req.images,
        req.package,
        change.values.value(),
        req.instance,
        inst.metadata.namespace.as_deref().unwrap_or_default(),
    )?;
    Ok(Decided {
        change,
        write,
        superseded,
        images,
    })
}

/// The merge patch that moves `inst` to OperatorVersion `to` with `d`'s values, conditioned
/// on its `metadata.resourceVersion`, with the annotations of the change (`--force`'s
/// supersede, `--rollback-on-failure`, the preflight's allowances).
fn shape(inst: &Instance, to: &str, d: &Decided, req: &Request<'_>) -> Result<Value> {
    let mut spec = json!({"operatorVersion": {"name": to}});
    // The new OperatorVersion is in the Instance's namespace: a reference to another
    // namespace (KUDO's manifests reference `default`) goes.
    if inst
        .spec
        .operator_version
        .as_ref()
        .is_some_and(|r| r.namespace.is_some())
    {
        spec["operatorVersion"]["namespace"] = Value::Null;
    }
    if let Some(diff) = merge::diff(&parameters(inst), &d.write.public) {
        spec["parameters"] = diff;
    }
    if let Some(list) = &d.write.sources {
        spec["parametersFrom"] = if list.is_empty() {
            Value::Null
        } else {
            serde_json::to_value(list).unwrap_or_default()
        };
    }
    let mut patch = json!({
        "metadata": {"resourceVersion": resource_version(inst)?},
        "spec": spec,
    });
    let mut annotations = super::change_annotations(
        inst,
        d.superseded.as_ref(),
        req.ignore_window,
        req.remediation,
        d.images.as_deref(),
    );
    if !req.allow.is_none() {
        let g = inst.metadata.generation.unwrap_or_default();
        annotations.push((
            kudo_crd::labels::PREFLIGHT,
            kudo_crd::revision::preflight_annotation(g, req.allow),
        ));
    }
    if !annotations.is_empty() {
        patch["metadata"]["annotations"] = super::annotations_object(&annotations);
    }
    Ok(patch)
}

/// The Instance's ServiceAccount given what the new version needs (it may write where the old
/// one did not: a CRD, another namespace: `objects`, what its plans write), with the user's
/// own rights; what could not be granted is added to `change`'s warnings.
async fn grant(
    t: &Target,
    inst: &Instance,
    objects: &[PlanObject],
    req: &Request<'_>,
    change: &mut Decision,
) -> Result<()> {
    let sa = inst
        .spec
        .service_account_name
        .clone()
        .unwrap_or_else(|| labels::DEFAULT_SERVICE_ACCOUNT.into());
    let reach = service_account::reach_of(t, objects).await;
    let grants = service_account::objects(&t.namespace, &sa, &reach);
    let prepared = service_account::prepare(t, &sa, &grants, req.dry_run).await?;
    change.warnings.extend(prepared.warnings.iter().map(|w| {
        kudo_diag::diag::Diagnostic::warning(kudo_diag::diag::Code::NotGranted, "", w.clone())
    }));
    Ok(())
}

/// What the attempts of one upgrade share: what is read, checked or made once.
#[derive(Default)]
struct Once {
    /// The OperatorVersion the last attempt read, its package and version.
    old: Option<(String, Package, Version)>,
    /// The name of the new OperatorVersion when it exists already (read once).
    existing: Option<Option<String>>,
    /// Whether the new OperatorVersion was created.
    created: bool,
    /// Whether the ServiceAccount was given what the new version needs.
    granted: bool,
    /// What the CRD preflight said (`None`: not run yet).
    crds_told: Option<Vec<kudo_diag::diag::Diagnostic>>,
    /// What the new version's plans write with the first attempt's values, rendered once for
    /// the CRD preflight and the grants (`None`: not rendered yet).
    objects: Option<Vec<PlanObject>>,
}

/// Upgrades Instance `req.instance` to `req.package`. Refused, with nothing written, when the
/// package is another operator ([`Error::OtherOperator`]) or the version the Instance runs
/// ([`Error::AlreadyRuns`]), when the migrated parameters are refused ([`Error::Parameters`]),
/// or when the new OperatorVersion exists with another spec.
///
/// Each attempt: get (the Instance, its OperatorVersion unless the last attempt read the same,
/// its Secrets), `decide`, then once per upgrade the CRD preflight, the new OperatorVersion
/// looked for and the ServiceAccount's grants, then commit (`Entry::commit`).
pub async fn upgrade(t: &Target, req: &Request<'_>) -> Result<Upgraded> {
    let new_pkg = req.package;
    // Checked (read only) before anything is written; created unless this is a dry run.
    let resolved = super::resolved(new_pkg, req.dependencies)?;
    let deps = super::dependencies(t, &resolved).await?;
    if !req.dry_run {
        super::create_missing(t, &deps).await?;
    }
    let (_, new_ov) = package::objects_with(new_pkg, &t.namespace, &resolved);
    let to = new_ov.metadata.name.clone().unwrap_or_default();
    let to_version = new_pkg.policy_version().map_err(Error::Parameters)?;
    let entry = Entry::new(t, req.instance);
    let mut once = Once::default();
    entry
        .run(async |attempt| {
            let (inst, from_ref) = entry.get().await?;
            let from = from_ref.name.clone();
            if from_ref.namespace == t.namespace && new_pkg.is_operator_version(&from) {
                return Err(Error::AlreadyRuns {
                    instance: format!("{}/{}", t.namespace, req.instance),
                    operator_version: from,
                });
            }
            let (old_pkg, old_version) = match once.old.take() {
                Some((name, pkg, v)) if name == from => (pkg, v),
                _ => package_and_version(&operator_version(t, &from_ref).await?)?,
            };
            if old_pkg.operator().name != new_pkg.operator().name {
                return Err(Error::OtherOperator {
                    instance: format!("{}/{}", t.namespace, req.instance),
                    package: new_pkg.operator().name.clone(),
                    installed: old_pkg.operator().name.clone(),
                });
            }
            let sources = secrets::read(t, &inst).await?;
            let mut d = decide(&inst, &old_version, &to_version, &sources, req)?;
            // The CRDs the new version's plans apply, with the upgrade's values, against the
            // cluster's: once (a conflict's retry changes the values, not the CRDs' rules).
            let objects = once.objects.get_or_insert_with(|| {
                Prepared::new(new_pkg).plan_objects(
                    d.change.values.value(),
                    req.instance,
                    &t.namespace,
                )
            });
            let told = match once.crds_told.take() {
                Some(told) => told,
                None => crd_preflight(t, objects, req.allow.force).await?,
            };
            d.change.warnings.extend(told.iter().cloned());
            once.crds_told = Some(told);
            // The new version installed under its other name is the one the Instance runs.
            let existing = match &once.existing {
                Some(e) => e.clone(),
                None => same_operator_version(t, &new_ov).await?,
            };
            once.existing = Some(existing.clone());
            let exists = existing.is_some();
            let to = existing.unwrap_or_else(|| to.clone());
            let patch = shape(&inst, &to, &d, req)?;
            if !once.granted {
                grant(t, &inst, objects, req, &mut d.change).await?;
                once.granted = true;
            }
            let done = |d: Decided, patch, generation, attempts, created| Upgraded {
                change: d.change,
                from: from.clone(),
                to: to.clone(),
                created_operator_version: created,
                patch,
                generation,
                attempts,
                superseded: d.superseded,
            };
            if req.dry_run {
                return Ok(Attempt::Done(done(d, patch, None, 0, false)));
            }
            if !exists && !once.created {
                create_operator_version(t, &new_ov).await?;
                once.created = true;
            }
            let sent = Patch::Merge(patch.clone());
            Ok(match entry.commit(&inst, Some(&d.write), &sent).await? {
                Attempt::Done(written) => {
                    let generation = written.metadata.generation;
                    Attempt::Done(done(d, patch, generation, attempt, once.created))
                }
                Attempt::Conflict => {
                    once.old = Some((from.clone(), old_pkg, old_version));
                    Attempt::Conflict
                }
            })
        })
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(rel: &str) -> Package {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../..")
            .join(rel);
        Package::load(&dir).expect("the fixture loads")
    }

    fn instance(annotations: Option<Value>) -> Instance {
        serde_json::from_value(json!({"apiVersion": "kudo.dev/v1beta2", "kind": "Instance",
            "metadata": {"name": "mine", "namespace": "ns", "resourceVersion": "20",
                "generation": 4, "annotations": annotations},
            "spec": {"operatorVersion": {"name": "my-operator-0.1.0", "namespace": "default"},
                "parameters": {"CLUSTER_NAME": "prod"}}}))
        .expect("an Instance")
    }

    #[test]
    fn an_upgrade_moves_values_by_old_name_and_is_one_merge_patch_on_the_resource_version() {
        let (v1, v2) = (
            load("tests/fixtures/kep33/v1"),
            load("tests/fixtures/kep33/v2"),
        );
        let (old, new) = (v1.policy_version().unwrap(), v2.policy_version().unwrap());
        let req = Request {
            instance: "mine",
            package: &v2,
            dependencies: None,
            inputs: Inputs::default(),
            dry_run: false,
            force: false,
            ignore_window: false,
            remediation: None,
            allow: &Allow::default(),
            images: None,
        };
        let inst = instance(None);
        let sources = secrets::Sources {
            all: json!({}),
            others: json!({}),
            managed: None,
        };
        let d = decide(&inst, &old, &new, &sources, &req).unwrap();
        assert_eq!(d.write.public["clusterName"], json!("prod"));
        let patch = shape(&inst, "my-operator-0.2.0", &d, &req).unwrap();
        assert_eq!(patch["metadata"], json!({"resourceVersion": "20"}));
        assert_eq!(
            patch["spec"]["operatorVersion"],
            json!({"name": "my-operator-0.2.0", "namespace": null})
        );
        assert_eq!(patch["spec"]["parameters"]["clusterName"], json!("prod"));
        assert_eq!(patch["spec"]["parameters"]["CLUSTER_NAME"], Value::Null);
    }
}
