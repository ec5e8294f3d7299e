//! An operator package as cluster objects, and back.
//!
//! [`objects`] turns a loaded [`Package`] into the `kudo.dev/v1beta2` Operator and
//! OperatorVersion that `kudo install` creates; [`from_operator_version`] rebuilds the package
//! from an OperatorVersion, so that the manager and the cluster commands render and validate
//! with exactly the code `kudo template` and `kudo params` use; [`version`] reads an
//! OperatorVersion as kudo's policy does (the manager, the cluster commands and the admission
//! webhook all read it so).

use std::collections::BTreeMap;
use std::path::PathBuf;

use kube::core::ObjectMeta;
use kudo_diag::Diagnostic;
use kudo_pkg::Package;
use kudo_pkg::dependency::Dependency;
use kudo_pkg::package::{DEFAULT_VERSION, TaskKind};
use kudo_policy::ParamSchema;
use kudo_policy::change::Version;
use serde_json::{Map, Value, json};

use crate::common::{ObjectRef, OperatorFields, Phase, Plan, Step, Task};
use crate::v1beta2::{Operator, OperatorSpec, OperatorVersion, OperatorVersionSpec};

/// The Operator and OperatorVersion (v1beta2, parameters as one schema) of a package, in
/// `namespace`; its KudoOperator tasks' paths are resolved on disk.
pub fn objects(pkg: &Package, namespace: &str) -> (Operator, OperatorVersion) {
    objects_with(pkg, namespace, &[])
}

/// [`objects`], with the package's dependencies as resolved
/// ([`kudo_pkg::dependency::resolve_with`]: from a repository, by name), so each KudoOperator
/// task names the operator and the exact version the manager will find in the cluster.
pub fn objects_with(
    pkg: &Package,
    namespace: &str,
    deps: &[Dependency],
) -> (Operator, OperatorVersion) {
    let op = pkg.operator();
    let version = pkg.version();
    let operator = Operator {
        metadata: ObjectMeta {
            name: Some(op.name.clone()),
            namespace: Some(namespace.into()),
            ..Default::default()
        },
        spec: OperatorSpec {
            fields: OperatorFields {
                kudo_version: op.kudo_version.clone(),
                kubernetes_version: op.kubernetes_version.clone(),
                ..Default::default()
            },
        },
    };
    let tasks = op
        .tasks
        .iter()
        .map(|t| Task {
            name: t.name.clone(),
            kind: t.kind.clone(),
            spec: (!t.spec.is_null()).then(|| with_dependency_named(pkg, t, deps)),
        })
        .collect();
    let plans = op
        .plans
        .iter()
        .map(|(name, p)| {
            let plan = Plan {
                strategy: p.strategy.clone(),
                phases: p
                    .phases
                    .iter()
                    .map(|ph| Phase {
                        name: ph.name.clone(),
                        strategy: ph.strategy.clone(),
                        steps: ph
                            .steps
                            .iter()
                            .map(|s| Step {
                                name: s.name.clone(),
                                tasks: s.tasks.clone(),
                                delete: s.delete.then_some(true),
                            })
                            .collect(),
                    })
                    .collect(),
            };
            (name.clone(), plan)
        })
        .collect();
    let ov = OperatorVersion {
        metadata: ObjectMeta {
            name: Some(pkg.operator_version_name()),
            namespace: Some(namespace.into()),
            annotations: pkg.provenance().map(provenance_annotations),
            ..Default::default()
        },
        spec: OperatorVersionSpec {
            operator: Some(ObjectRef {
                kind: Some("Operator".into()),
                name: Some(op.name.clone()),
                namespace: None,
            }),
            version: Some(version),
            app_version: op.app_version.clone(),
            template_engine: Some(pkg.template_engine().as_str().into()),
            templates: pkg.templates().clone(),
            tasks,
            parameters: Some(pkg.schema().as_value().clone()),
            plans,
            connection_string: None,
            upgradable_from: Vec::new(),
        },
    };
    (operator, ov)
}

/// What an OperatorVersion records of where its package came from
/// ([`crate::labels::PACKAGE_SOURCE`] and the others).
fn provenance_annotations(p: &kudo_pkg::Provenance) -> BTreeMap<String, String> {
    use crate::labels::{PACKAGE_DIGEST, PACKAGE_SIGNER, PACKAGE_SOURCE, PACKAGE_VERIFICATION};
    let mut a = BTreeMap::from([
        (PACKAGE_SOURCE.to_string(), p.source.clone()),
        (PACKAGE_DIGEST.to_string(), p.digest.clone()),
        (PACKAGE_VERIFICATION.to_string(), p.verification.clone()),
    ]);
    if let Some(signer) = &p.signer {
        a.insert(PACKAGE_SIGNER.to_string(), signer.clone());
    }
    a
}

/// A task's spec; a KudoOperator task gets the dependency's `operatorName` and exact
/// `operatorVersion` (a task may give a range, or none), so the manager finds the child's
/// OperatorVersion without the package files: from `deps` when resolved there, else from a
/// path on disk. A dependency not found is left as it is: `kudo install` refuses it before
/// anything is written ([`kudo_pkg::dependency::resolve_with`]).
fn with_dependency_named(
    pkg: &Package,
    task: &kudo_pkg::package::Task,
    deps: &[Dependency],
) -> Value {
    let mut spec = task.spec.clone();
    let Ok(dep) = kudo_pkg::dependency::KudoOperatorTask::of(task) else {
        return spec;
    };
    if task.kind != TaskKind::KudoOperator {
        return spec;
    }
    let parent = pkg.operator_version_name();
    let resolved = deps
        .iter()
        .find(|d| d.parent == parent && d.task == task.name)
        .map(|d| d.package.clone());
    let child = resolved.or_else(|| {
        dep.is_path()
            .then(|| Package::load(&dep.package_path(pkg)).ok())
            .flatten()
    });
    if let Some(child) = child {
        spec["operatorName"] = json!(child.operator().name);
        if dep.operator_version.as_deref() != Some(child.version().as_str()) {
            spec["operatorVersion"] = json!(child.version());
        }
        let app = child.operator().app_version.clone();
        if app.is_some() && dep.app_version != app {
            spec["appVersion"] = json!(app);
        }
    }
    spec
}

/// Why an OperatorVersion cannot be read as a [`Version`].
#[derive(Debug, Clone, thiserror::Error)]
pub enum Unusable {
    /// It has no `metadata.name`.
    #[error("an OperatorVersion without a name")]
    NoName,
    /// Its `spec.parameters` is not a JSON-schema kudo reads.
    #[error("{0}")]
    Schema(String),
    /// Its parameters break kudo's rules (triggers, immutable, oldName).
    #[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
    Parameters(Vec<Diagnostic>),
}

/// An OperatorVersion as kudo's policy reads it ([`kudo_policy::change`]): its name, its version
/// (`spec.version`, else [`DEFAULT_VERSION`] as for a package that names none), its parameter
/// schema (`spec.parameters`, compiled; none is an empty object schema) and its plan names.
/// The one derivation: the manager, the cluster commands and the admission webhook call it.
pub fn version(ov: &OperatorVersion) -> Result<Version, Unusable> {
    let name = ov.metadata.name.clone().ok_or(Unusable::NoName)?;
    let spec = &ov.spec;
    let parameters = spec
        .parameters
        .clone()
        .unwrap_or_else(|| json!({"type": "object"}));
    let schema = ParamSchema::from_value(parameters).map_err(|(_, m)| Unusable::Schema(m))?;
    let version = spec
        .version
        .clone()
        .unwrap_or_else(|| DEFAULT_VERSION.into());
    let plans = spec.plans.keys().cloned().collect();
    Version::new(name, version, schema, plans).map_err(Unusable::Parameters)
}

/// The package an OperatorVersion was made from (operator.yaml, the v1beta2 params file and
/// the templates), named `operatorversion/{namespace}/{name}` in diagnostics.
pub fn from_operator_version(ov: &OperatorVersion) -> kudo_diag::Result<Package> {
    let spec = &ov.spec;
    let name = ov.metadata.name.clone().unwrap_or_default();
    let namespace = ov.metadata.namespace.clone().unwrap_or_default();
    let operator_name = spec
        .operator
        .as_ref()
        .and_then(|o| o.name.clone())
        .unwrap_or_else(|| name.clone());
    let tasks: Vec<Value> = spec
        .tasks
        .iter()
        .map(|t| json!({"name": t.name, "kind": t.kind, "spec": t.spec.clone().unwrap_or(json!({}))}))
        .collect();
    let plans: Map<String, Value> = spec
        .plans
        .iter()
        .map(|(n, p)| (n.clone(), serde_json::to_value(p).unwrap_or(Value::Null)))
        .collect();
    let mut operator = json!({
        "apiVersion": "kudo.dev/v1beta1",
        "name": operator_name,
        "tasks": tasks,
        "plans": plans,
    });
    if let Some(v) = &spec.version {
        operator["operatorVersion"] = json!(v);
    }
    if let Some(v) = &spec.app_version {
        operator["appVersion"] = json!(v);
    }
    // Named, or else what made the OperatorVersion: KUDO's (its flat parameters are kept by
    // the conversion in an annotation) has Go templates, kudo's names its engine.
    let made_by_kudo_v1 = ov
        .metadata
        .annotations
        .as_ref()
        .is_some_and(|a| a.contains_key(crate::convert::V1BETA1_PARAMETERS));
    let engine = match &spec.template_engine {
        Some(e) => e.as_str(),
        None if made_by_kudo_v1 => "go",
        None => "handlebars",
    };
    operator["templateEngine"] = json!(engine);
    let mut params = match &spec.parameters {
        Some(Value::Object(m)) => m.clone(),
        _ => Map::new(),
    };
    params.insert("apiVersion".into(), json!(kudo_pkg::instance::V1BETA2));
    let mut files: BTreeMap<String, Vec<u8>> = BTreeMap::new();
    // JSON is YAML: the package reader takes these as they are.
    files.insert("operator.yaml".into(), operator.to_string().into_bytes());
    files.insert(
        "params.yaml".into(),
        Value::Object(params).to_string().into_bytes(),
    );
    for (path, text) in &spec.templates {
        files.insert(format!("templates/{path}"), text.clone().into_bytes());
    }
    let source = PathBuf::from(format!("operatorversion/{namespace}/{name}"));
    Package::from_files(&source, files)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn example(name: &str) -> Package {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../examples")
            .join(name);
        Package::load(&dir).unwrap()
    }

    #[test]
    fn an_operator_version_reads_as_the_version_of_its_package() {
        for name in ["cassandra-v1beta2", "zookeeper-v1beta1"] {
            let pkg = example(name);
            let (_, ov) = objects(&pkg, "ns");
            let got = version(&ov).unwrap();
            let mut want = pkg.policy_version().unwrap();
            // The OperatorVersion keeps its plans by name.
            want.plans.sort();
            assert_eq!(
                (&got.name, &got.version, &got.plans),
                (&want.name, &want.version, &want.plans),
                "{name}"
            );
            assert_eq!(got.schema, want.schema, "{name}");
        }
        let mut nameless = objects(&example("cassandra-v1beta2"), "ns").1;
        nameless.metadata.name = None;
        assert!(matches!(version(&nameless), Err(Unusable::NoName)));
    }

    #[test]
    fn a_package_survives_the_trip_through_an_operator_version() {
        for name in ["cassandra-v1beta2", "zookeeper-v1beta1"] {
            let pkg = example(name);
            let (op, ov) = objects(&pkg, "ns");
            assert_eq!(
                op.metadata.name.as_deref(),
                Some(pkg.operator().name.as_str())
            );
            assert_eq!(ov.metadata.name, Some(pkg.operator_version_name()));
            let back = from_operator_version(&ov).unwrap();
            assert_eq!(back.schema().as_value(), pkg.schema().as_value(), "{name}");
            assert_eq!(back.templates(), pkg.templates(), "{name}");
            assert_eq!(back.operator().tasks, pkg.operator().tasks, "{name}");
            let plans = |p: &Package| {
                p.operator()
                    .plans
                    .iter()
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect::<BTreeMap<_, _>>()
            };
            assert_eq!(plans(&back), plans(&pkg), "{name}");
            assert_eq!(
                back.operator().operator_version,
                pkg.operator().operator_version
            );
            assert_eq!(
                back.source(),
                Path::new(&format!("operatorversion/ns/{}", ov.metadata.name.unwrap()))
            );
        }
    }
}
