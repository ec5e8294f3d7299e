//! `kudo update --instance NAME`: the Instance's parameters changed in the cluster, with the
//! rules of `kudo update -f` and of the admission webhook ([`kudo_policy::change::update`]): the
//! Instance's deletion and the plan it has scheduled or running count too.
//!
//! The Instance and its OperatorVersion are read (as the policy's `Version`: no package is
//! built); `-P` and `-p` are applied to the Instance's `spec.parameters`; validation,
//! `immutable` and the one-plan-per-update rule run before anything is sent, all in one pure
//! function (`decide`) that also shapes the write; [`update`] is the transport around it
//! (`commands::entry`: get, modify, commit). The write is a
//! JSON patch (`merge::guarded`) of only the parameter values that change, each replaced or
//! removed value guarded by a `test` of the value this update read: updates of different
//! parameters never conflict, whatever else (the manager's status, other updates) changed the
//! Instance meanwhile, and the admission webhook checks the result as a whole with the same
//! policy. When a tested value changed (another update of the same parameter got there first),
//! the Instance is read again and the overrides applied to the fresh object, after a jittered
//! backoff, up to [`super::MAX_ATTEMPTS`] times: the last writer wins, and no
//! update is lost without its writer being told. An Instance without `spec.parameters` is
//! written with a merge patch holding `metadata.resourceVersion` instead (409 Conflict when it
//! changed). `writeOnly` values go to a new Secret of kudo's, named in `spec.parametersFrom` in
//! the same write (`commands::secrets`).

use kube::api::Patch;
use kudo_policy::change::{self, Decision, Version};
use serde_json::{Map, Value, json};

use super::entry::{Attempt, Entry};
use super::{Error, Inputs, Result, Target, installed, merge, secrets, version_of};
use kudo_crd::v1beta2::Instance;

/// What to update.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    /// The Instance's name.
    pub instance: &'a str,
    /// `-P` and `-p`.
    pub inputs: Inputs<'a>,
    /// Compute and report, send nothing.
    pub dry_run: bool,
    /// `--force`: supersede the plan scheduled or running instead of refusing the change.
    pub force: bool,
    /// `--ignore-window`: the change runs now, even outside the Instance's maintenance window
    /// ([`kudo_crd::labels::IGNORE_WINDOW`]).
    pub ignore_window: bool,
    /// `--rollback-on-failure [--timeout]`: the remediation of this change only
    /// ([`kudo_crd::labels::REMEDIATE_ONCE`]).
    pub remediation: Option<&'a kudo_crd::common::Remediation>,
    /// The check of the images the change runs ([`super::ImageGate`]); `None`: not checked.
    pub images: Option<&'a dyn super::ImageGate>,
}

/// What an update did (or, with `dry_run`, would do).
#[derive(Clone)]
pub struct Updated {
    /// The plan the change runs and every changed path (`plan` is `None` when the effective
    /// parameters stay the same), and warnings.
    pub change: Decision,
    /// The OperatorVersion the Instance runs.
    pub operator_version: String,
    /// The merge patch sent (or that would be sent); `None` when nothing changes.
    pub patch: Option<Value>,
    /// The `metadata.generation` the write produced (`None` when nothing was written).
    pub generation: Option<i64>,
    /// Writes attempted (more than one after conflicts).
    pub attempts: usize,
    /// The run the change supersedes (`--force` while a plan was scheduled or running).
    pub superseded: Option<kudo_policy::run::Running>,
}

/// The patch holds values, secrets included: `Debug` shows the pointers it sets.
impl std::fmt::Debug for Updated {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Updated")
            .field("change", &self.change)
            .field("operator_version", &self.operator_version)
            .field(
                "patch",
                &self.patch.as_ref().map(kudo_diag::pointer::leaves),
            )
            .field("generation", &self.generation)
            .field("attempts", &self.attempts)
            .field("superseded", &self.superseded)
            .finish()
    }
}

/// The `spec.parameters` of an Instance (an empty object when absent).
pub(super) fn parameters(inst: &Instance) -> Value {
    match &inst.spec.parameters {
        Some(v @ Value::Object(_)) => v.clone(),
        _ => Value::Object(Map::new()),
    }
}

/// The resourceVersion the write is conditioned on.
pub(super) fn resource_version(inst: &Instance) -> Result<String> {
    inst.metadata.resource_version.clone().ok_or_else(|| {
        Error::Internal(
            "the API server returned an Instance without metadata.resourceVersion".into(),
        )
    })
}

/// What an update decides from what it read, with no cluster (`decide`): the change, how its
/// values are written, and the write.
pub(crate) struct Decided {
    /// The change, as the policy decided it.
    pub change: Decision,
    /// Where its values go: `spec.parameters`, kudo's Secret.
    pub write: secrets::Write,
    /// The run the change supersedes (`--force`).
    pub superseded: Option<kudo_policy::run::Running>,
    /// The write; `None` when nothing changes.
    pub patch: Option<Shaped>,
}

/// A write of the Instance: what is sent, and what `--dry-run` shows of it.
pub(crate) struct Shaped {
    /// The patch sent.
    pub send: Patch<Value>,
    /// The patch as reported (the operations of a JSON patch, or the merge patch).
    pub shown: Value,
}

/// Decides an update of `inst` (running `version`, its Secrets holding `sources`) with
/// `req`'s inputs: the policy's decision, then the write that carries it. Refused with every
/// reason ([`Error::Parameters`]). Reads and writes nothing.
pub(crate) fn decide(
    inst: &Instance,
    version: &Version,
    sources: &secrets::Sources,
    req: &Request<'_>,
    package: Option<&kudo_pkg::Package>,
) -> Result<Decided> {
    let public = parameters(inst);
    // Parameters the version does not declare, that a kudo.dev/v1beta1 write kept, stay
    // as they are (`change::set_aside`); `-p` cannot set a new one.
    let (public_known, aside) =
        change::set_aside(version, &public, None, change::Undeclared::KeepAll);
    let current = kudo_policy::secrets::under(&public_known, &sources.all);
    let (blocking, superseded) = super::superseding(inst, version, req.force);
    let change = change::update(
        &installed(inst, version, &current, &blocking),
        req.inputs.proposal(),
    )
    .map(|d| aside.restore(d))
    .map_err(Error::Parameters)?;
    // writeOnly values go to kudo's Secret, the rest to spec.parameters.
    let write = secrets::Write::of(&version.schema, &change.explicit, sources, inst)?;
    // The images of the plan it runs, checked and pinned before it is written.
    let images = match package {
        Some(pkg) if change.plan.is_some() => super::gate_images(
            req.images,
            pkg,
            change.values.value(),
            req.instance,
            inst.metadata.namespace.as_deref().unwrap_or_default(),
        )?,
        _ => None,
    };
    let annotations = super::change_annotations(
        inst,
        superseded.as_ref(),
        req.ignore_window,
        req.remediation,
        images.as_deref(),
    );
    let patch = shape(inst, &public, &write, &annotations)?;
    Ok(Decided {
        change,
        write,
        superseded,
        patch,
    })
}

/// The write of `write` over `inst` (whose `spec.parameters` read `public`): a JSON patch
/// guarded by a `test` of each value it replaces or removes ([`merge::guarded`]), or, for an
/// Instance without `spec.parameters`, a merge patch holding its `metadata.resourceVersion`.
/// `None` when no value changes.
fn shape(
    inst: &Instance,
    public: &Value,
    write: &secrets::Write,
    annotations: &[(&'static str, String)],
) -> Result<Option<Shaped>> {
    let (public_new, sources_new) = (&write.public, &write.sources);
    let diff = merge::diff(public, public_new);
    if diff.is_none() && sources_new.is_none() {
        return Ok(None);
    }
    if let Some(Value::Object(_)) = &inst.spec.parameters {
        let mut ops =
            merge::guarded(&["spec", "parameters"], public, public_new).unwrap_or_default();
        if let Some(list) = sources_new {
            ops.extend(sources_ops(inst, list));
        }
        ops.extend(super::annotation_ops(inst, annotations));
        // What --dry-run prints (operations of values and pointers serialize whole).
        let shown = serde_json::to_value(&ops).unwrap_or_default();
        return Ok(Some(Shaped {
            send: Patch::Json(json_patch::Patch(ops)),
            shown,
        }));
    }
    let mut p = json!({
        "metadata": {"resourceVersion": resource_version(inst)?},
        "spec": {},
    });
    if let Some(diff) = diff {
        p["spec"]["parameters"] = diff;
    }
    if let Some(list) = sources_new {
        p["spec"]["parametersFrom"] = if list.is_empty() {
            Value::Null
        } else {
            serde_json::to_value(list).unwrap_or_default()
        };
    }
    if !annotations.is_empty() {
        p["metadata"]["annotations"] = super::annotations_object(annotations);
    }
    Ok(Some(Shaped {
        send: Patch::Merge(p.clone()),
        shown: p,
    }))
}

/// Updates the parameters of Instance `req.instance`. Refused, with nothing written, when the
/// new parameters are invalid, change an immutable value or run two plans
/// ([`Error::Parameters`]); [`Error::Conflict`] when every attempt met a newer Instance.
///
/// Each attempt: get (the Instance, its OperatorVersion unless the last attempt read the same,
/// its Secrets), `decide`, commit (`Entry::commit`).
pub async fn update(t: &Target, req: &Request<'_>) -> Result<Updated> {
    let entry = Entry::new(t, req.instance);
    let mut cache: Option<(String, Version, Option<kudo_pkg::Package>)> = None;
    entry
        .run(async |attempt| {
            let (inst, ov_ref) = entry.get().await?;
            let operator_version = ov_ref.name.clone();
            let (version, package) = match cache.take() {
                Some((name, v, p)) if name == operator_version => (v, p),
                _ => {
                    let ov = super::operator_version(t, &ov_ref).await?;
                    // The package only when its images are checked.
                    let package = match req.images {
                        Some(_) => Some(super::package_of(&ov)?),
                        None => None,
                    };
                    (version_of(&ov)?, package)
                }
            };
            let sources = secrets::read(t, &inst).await?;
            let Decided {
                change,
                write,
                superseded,
                patch,
            } = decide(&inst, &version, &sources, req, package.as_ref())?;
            let Some(patch) = patch else {
                return Ok(Attempt::Done(Updated {
                    change,
                    operator_version,
                    patch: None,
                    generation: None,
                    attempts: attempt - 1,
                    superseded: None,
                }));
            };
            let generation = if req.dry_run {
                None
            } else {
                match entry.commit(&inst, Some(&write), &patch.send).await? {
                    Attempt::Done(written) => written.metadata.generation,
                    Attempt::Conflict => {
                        cache = Some((operator_version, version, package));
                        return Ok(Attempt::Conflict);
                    }
                }
            };
            Ok(Attempt::Done(Updated {
                change,
                operator_version,
                patch: Some(patch.shown),
                generation,
                attempts: if req.dry_run { 0 } else { attempt },
                superseded,
            }))
        })
        .await
}

/// JSON patch operations that set `spec.parametersFrom` to `list`, guarded by a test of the
/// list this update read.
fn sources_ops(
    inst: &Instance,
    list: &[kudo_crd::common::ParametersFrom],
) -> Vec<json_patch::PatchOperation> {
    use kudo_crd::patch::{add, path, remove, replace, test};
    let at = || path(["spec", "parametersFrom"]);
    let value = serde_json::to_value(list).unwrap_or_default();
    match (inst.spec.parameters_from.is_empty(), list.is_empty()) {
        (true, true) => Vec::new(),
        (true, false) => vec![add(at(), value)],
        (false, empty) => {
            let old = serde_json::to_value(&inst.spec.parameters_from).unwrap_or_default();
            vec![
                test(at(), old),
                if empty {
                    remove(at())
                } else {
                    replace(at(), value)
                },
            ]
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::fixtures::cassandra_version;
    use kudo_diag::diag::Code;
    use kudo_policy::values::Override;

    fn instance(parameters: Option<Value>) -> Instance {
        let mut i = json!({"apiVersion": "kudo.dev/v1beta2", "kind": "Instance",
            "metadata": {"name": "c", "namespace": "ns", "resourceVersion": "10", "generation": 1},
            "spec": {"operatorVersion": {"name": "cassandra-2.0.0"}}});
        if let Some(p) = parameters {
            i["spec"]["parameters"] = p;
        }
        serde_json::from_value(i).expect("an Instance")
    }

    fn no_secrets() -> secrets::Sources {
        secrets::Sources {
            all: json!({}),
            others: json!({}),
            managed: None,
        }
    }

    fn decided(inst: &Instance, overrides: &[&str]) -> Result<Decided> {
        let overrides = Override::parse_all(overrides).expect("well-formed -p");
        let req = Request {
            instance: "c",
            inputs: Inputs {
                overrides: &overrides,
                ..Inputs::default()
            },
            dry_run: false,
            force: false,
            ignore_window: false,
            remediation: None,
            images: None,
        };
        decide(inst, &cassandra_version(), &no_secrets(), &req, None)
    }

    #[test]
    fn a_changed_value_is_a_json_patch_that_tests_the_value_read() {
        let d = decided(&instance(Some(json!({"nodeCount": 3}))), &["nodeCount=5"]).unwrap();
        assert_eq!(d.change.plan.as_deref(), Some("update"));
        let patch = d.patch.expect("a write");
        assert!(matches!(patch.send, Patch::Json(_)));
        assert_eq!(
            patch.shown,
            json!([{"op": "test", "path": "/spec/parameters/nodeCount", "value": 3},
                {"op": "replace", "path": "/spec/parameters/nodeCount", "value": 5}])
        );
    }

    #[test]
    fn the_value_it_already_has_is_no_write() {
        let d = decided(&instance(Some(json!({"nodeCount": 3}))), &["nodeCount=3"]).unwrap();
        assert!(d.patch.is_none());
        assert_eq!(d.change.plan, None);
    }

    #[test]
    fn an_instance_without_parameters_is_a_merge_patch_on_its_resource_version() {
        let d = decided(&instance(None), &["nodeCount=5"]).unwrap();
        let patch = d.patch.expect("a write");
        assert!(matches!(patch.send, Patch::Merge(_)));
        assert_eq!(
            patch.shown,
            json!({"metadata": {"resourceVersion": "10"}, "spec": {"parameters": {"nodeCount": 5}}})
        );
    }

    #[test]
    fn a_refused_change_is_every_reason_and_no_write() {
        let Err(Error::Parameters(d)) = decided(&instance(Some(json!({}))), &["clusterName=x"])
        else {
            panic!("refused");
        };
        assert_eq!(
            d.iter().map(|d| d.code).collect::<Vec<_>>(),
            [Code::ImmutableChanged]
        );
    }
}
