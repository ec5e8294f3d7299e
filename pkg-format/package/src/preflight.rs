//! The package side of the upgrade preflight: the CustomResourceDefinitions a package's plans
//! apply ([`crds`]), which the CRD preflight (`kudo_k8s::crd_safety`) compares with those in
//! the cluster (`kudo upgrade`, the manager) or with an older package's (`kudo package verify
//! NEW --against OLD`, [`against`]).

use serde_json::{Value, json};

use crate::package::Package;
use crate::render::{PlanObject, Prepared, RenderOptions};
use kudo_diag::diag::{Code, Diagnostic, Origin};
use kudo_k8s::crd_safety::{self, Finding};
use kudo_policy::values::Values;

/// What an upgrade from one package to another would break, judged offline: without a cluster
/// and without any Instance's values (`kudo package verify NEW --against OLD`).
#[derive(Debug, Clone, PartialEq)]
pub struct Against {
    /// The operator's name (both packages').
    pub operator: String,
    /// The old package's operator version (`operatorVersion`).
    pub old: String,
    /// The new package's operator version.
    pub new: String,
    /// The parameter schema changes ([`kudo_policy::preflight::offline`]): errors break an
    /// Instance that set (or did not set) a value, warnings inform.
    pub parameters: Vec<Diagnostic>,
    /// The CRD changes ([`kudo_k8s::crd_safety::check`]), of every CRD both packages apply.
    pub crds: Vec<Finding>,
}

impl Against {
    /// True when a finding is unsafe: an upgrade may break an Instance (a parameter error) or
    /// be refused by the CRD rules.
    pub fn is_unsafe(&self) -> bool {
        self.unsafe_count() > 0
    }

    /// How many findings are unsafe.
    pub fn unsafe_count(&self) -> usize {
        self.parameters.iter().filter(|d| d.is_error()).count()
            + self.crds.iter().filter(|f| !f.safe).count()
    }

    /// How many findings only inform.
    pub fn note_count(&self) -> usize {
        self.parameters.len() + self.crds.len() - self.unsafe_count()
    }

    /// True when nothing was found.
    pub fn is_empty(&self) -> bool {
        self.parameters.is_empty() && self.crds.is_empty()
    }

    /// Every finding as a diagnostic: the parameters' first, then the CRDs'
    /// ([`Finding::to_diagnostic`]).
    pub fn diagnostics(&self) -> Vec<Diagnostic> {
        let mut out = self.parameters.clone();
        out.extend(self.crds.iter().map(Finding::to_diagnostic));
        out
    }

    /// `cassandra 1.0.0 -> 1.1.0: 2 unsafe, 3 to note`.
    pub fn summary(&self) -> String {
        format!(
            "{} {} -> {}: {} unsafe, {} to note",
            self.operator,
            self.old,
            self.new,
            self.unsafe_count(),
            self.note_count()
        )
    }

    /// `{"operator", "old", "new", "unsafe", "parameters": [diagnostic...], "crds":
    /// [finding...]}` (a finding as [`Finding::to_json`]).
    pub fn to_json(&self) -> Value {
        json!({
            "operator": self.operator,
            "old": self.old,
            "new": self.new,
            "unsafe": self.is_unsafe(),
            "parameters": self.parameters,
            "crds": self.crds.iter().map(Finding::to_json).collect::<Vec<_>>(),
        })
    }
}

/// The upgrade from `old` to `new` judged offline, as `kudo package verify NEW --against OLD`
/// judges it in an author's CI: no cluster, no Instance, so every Instance that could exist is
/// assumed.
///
/// - Parameters: both schemas compared ([`kudo_policy::preflight::offline`]).
/// - CRDs: each package's plans rendered with its own defaults ([`crds`], Instance `instance` in
///   namespace `default`, as `package verify` renders them), and each CRD of the new package
///   compared with the old package's of the same `metadata.name` as if the old one were
///   installed: its `status.storedVersions` are its versions with `storage: true`, and objects
///   of it are assumed to exist (an Instance has some), so a removed served version is unsafe.
///   A CRD only the new package applies is new: nothing to compare. A CRD only the old package
///   applies is no finding: kudo never deletes a CRD it stops applying, it stays in the cluster
///   as it was. A task whose templates do not render with the defaults contributes no CRD
///   (`package verify` reports it).
///
/// `Err` when a package's schema does not compile, or the two are different operators.
pub fn against(new: &Package, old: &Package) -> Result<Against, Vec<Diagnostic>> {
    let (new_name, old_name) = (&new.operator().name, &old.operator().name);
    if new_name != old_name {
        return Err(vec![
            Diagnostic::error(
                Code::Operator,
                "",
                format!("--against is operator {old_name}, the package is operator {new_name}"),
            )
            .with_help("compare two versions of one operator"),
        ]);
    }
    let to = new.policy_version()?;
    let from = old.policy_version()?;
    let parameters = kudo_policy::preflight::offline(&from, &to);

    let defaults = |pkg: &Package| {
        let mut values = Values::new(Value::Object(Default::default()), Origin::None);
        values.apply_defaults(pkg.schema());
        values.value().clone()
    };
    let opts = RenderOptions::default();
    let new_crds = crds(new, &defaults(new), &opts.instance, &opts.namespace);
    let old_crds = crds(old, &defaults(old), &opts.instance, &opts.namespace);
    let mut findings = Vec::new();
    for crd in &new_crds {
        let name = crd.pointer("/metadata/name");
        let Some(live) = old_crds
            .iter()
            .find(|o| o.pointer("/metadata/name") == name)
        else {
            continue;
        };
        findings.extend(crd_safety::check(&as_installed(live), crd, true));
    }
    Ok(Against {
        operator: new_name.clone(),
        old: old.version(),
        new: new.version(),
        parameters,
        crds: findings,
    })
}

/// A rendered CRD as the API server would return it once applied: `status.storedVersions`
/// holds its storage version(s).
fn as_installed(crd: &Value) -> Value {
    let stored: Vec<Value> = crd
        .pointer("/spec/versions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|v| v.get("storage").and_then(Value::as_bool) == Some(true))
        .filter_map(|v| v.get("name").cloned())
        .collect();
    let mut live = crd.clone();
    if let Some(object) = live.as_object_mut() {
        object.insert("status".into(), json!({ "storedVersions": stored }));
    }
    live
}

/// The CustomResourceDefinitions the plans of `pkg` apply for an Instance `instance` in
/// `namespace` with effective parameters `params` ([`applied_crds`] of
/// [`Prepared::plan_objects`]).
pub fn crds(pkg: &Package, params: &Value, instance: &str, namespace: &str) -> Vec<Value> {
    applied_crds(&Prepared::new(pkg).plan_objects(params, instance, namespace))
}

/// The CustomResourceDefinitions among `objects` that their plans apply, each once (by name,
/// the first a plan renders), in plan order, as `apiextensions.k8s.io/v1` (a `v1beta1` one as
/// the manager applies it, [`kudo_k8s::successor::convert`]). A task whose templates do not
/// render contributes none: rendering errors are `package verify`'s and the plan's own to
/// report, not the preflight's.
pub fn applied_crds(objects: &[PlanObject]) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    for object in objects.iter().filter(|o| o.applied).map(|o| &o.object) {
        if !is_crd(object) {
            continue;
        }
        let object = match kudo_k8s::successor::convert(object) {
            Some(Ok(converted)) => converted.object,
            _ => object.clone(),
        };
        let name = object.pointer("/metadata/name");
        if out.iter().all(|o| o.pointer("/metadata/name") != name) {
            out.push(object);
        }
    }
    out
}

/// True for an `apiextensions.k8s.io` CustomResourceDefinition (any version of that group).
pub fn is_crd(object: &Value) -> bool {
    object.get("kind").and_then(Value::as_str) == Some("CustomResourceDefinition")
        && object
            .get("apiVersion")
            .and_then(Value::as_str)
            .is_some_and(|v| v.starts_with("apiextensions.k8s.io/"))
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::path::Path;

    use super::*;

    /// Operator `t` at `version` whose deploy plan applies `templates/crd.yaml` (`crd`, no
    /// template when `None`) and a ConfigMap; `params` is a v1beta2 params.yaml.
    fn package(name: &str, version: &str, params: &str, crd: Option<&str>) -> Package {
        let mut resources = vec!["cm.yaml"];
        let mut files = BTreeMap::new();
        files.insert(
            "templates/cm.yaml".to_string(),
            b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  a: b\n".to_vec(),
        );
        if let Some(crd) = crd {
            resources.push("crd.yaml");
            files.insert("templates/crd.yaml".to_string(), crd.as_bytes().to_vec());
        }
        let operator = format!(
            "apiVersion: kudo.dev/v1beta1\nname: {name}\noperatorVersion: {version}\nkubernetesVersion: 1.18.0\n\
             tasks:\n  - name: app\n    kind: Apply\n    spec:\n      resources: [{}]\n\
             plans:\n  deploy:\n    phases:\n      - name: p\n        steps:\n          - name: s\n            tasks: [app]\n",
            resources.join(", ")
        );
        files.insert("operator.yaml".to_string(), operator.into_bytes());
        files.insert("params.yaml".to_string(), params.as_bytes().to_vec());
        Package::from_files(Path::new("pkg"), files).unwrap()
    }

    const PARAMS: &str = "apiVersion: kudo.dev/v1beta2\ntype: object\nproperties:\n  \
        nodes:\n    type: integer\n    default: 3\n    maximum: 10\n  \
        heap:\n    type: string\n    default: 1G\n";

    /// A CRD `widgets.example.com` with one version `v1` whose spec has `replicas` (required
    /// when `required`) and `size`.
    fn crd(required: bool) -> String {
        let required = if required {
            "              required: [replicas]\n"
        } else {
            ""
        };
        format!(
            "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n\
             metadata:\n  name: widgets.example.com\n\
             spec:\n  group: example.com\n  scope: Namespaced\n  \
             names:\n    kind: Widget\n    plural: widgets\n  \
             versions:\n    - name: v1\n      served: true\n      storage: true\n      \
             schema:\n        openAPIV3Schema:\n          type: object\n          \
             properties:\n            spec:\n              type: object\n{required}              \
             properties:\n                replicas:\n                  type: integer\n                \
             size:\n                  type: string\n"
        )
    }

    fn codes(a: &Against) -> Vec<(&'static str, bool)> {
        a.diagnostics()
            .iter()
            .map(|d| (d.code.as_str(), d.is_error()))
            .collect()
    }

    #[test]
    fn identical_packages_have_nothing_to_report() {
        let old = package("t", "0.1.0", PARAMS, Some(&crd(false)));
        let new = package("t", "0.2.0", PARAMS, Some(&crd(false)));
        let a = against(&new, &old).unwrap();
        assert!(a.is_empty(), "{a:?}");
        assert!(!a.is_unsafe());
        assert_eq!(a.summary(), "t 0.1.0 -> 0.2.0: 0 unsafe, 0 to note");
    }

    #[test]
    fn a_dropped_parameter_is_unsafe() {
        let old = package("t", "0.1.0", PARAMS, None);
        let params = "apiVersion: kudo.dev/v1beta2\ntype: object\nproperties:\n  \
            nodes:\n    type: integer\n    default: 3\n    maximum: 10\n";
        let new = package("t", "0.2.0", params, None);
        let a = against(&new, &old).unwrap();
        assert_eq!(codes(&a), vec![("value-dropped", true)]);
        assert_eq!(a.parameters[0].pointer.as_str(), "/heap");
        assert!(a.is_unsafe());
        assert_eq!(a.summary(), "t 0.1.0 -> 0.2.0: 1 unsafe, 0 to note");
        let json = a.to_json();
        assert_eq!(json["unsafe"], true);
        assert_eq!(json["old"], "0.1.0");
        assert_eq!(json["new"], "0.2.0");
        assert_eq!(json["parameters"][0]["code"], "value-dropped");
    }

    #[test]
    fn a_loosened_bound_is_nothing() {
        let old = package("t", "0.1.0", PARAMS, None);
        let new = package(
            "t",
            "0.2.0",
            &PARAMS.replace("maximum: 10", "maximum: 20"),
            None,
        );
        let a = against(&new, &old).unwrap();
        assert!(a.is_empty(), "{a:?}");
    }

    #[test]
    fn a_tightened_bound_is_unsafe() {
        let old = package("t", "0.1.0", PARAMS, None);
        let new = package(
            "t",
            "0.2.0",
            &PARAMS.replace("maximum: 10", "maximum: 5"),
            None,
        );
        let a = against(&new, &old).unwrap();
        assert_eq!(codes(&a), vec![("bound-tightened", true)]);
    }

    #[test]
    fn a_changed_default_is_to_note() {
        let old = package("t", "0.1.0", PARAMS, None);
        let new = package(
            "t",
            "0.2.0",
            &PARAMS.replace("default: 1G", "default: 2G"),
            None,
        );
        let a = against(&new, &old).unwrap();
        assert_eq!(codes(&a), vec![("default-changed", false)]);
        assert!(!a.is_unsafe());
        assert_eq!(a.summary(), "t 0.1.0 -> 0.2.0: 0 unsafe, 1 to note");
    }

    #[test]
    fn a_crd_field_newly_required_is_unsafe() {
        let old = package("t", "0.1.0", PARAMS, Some(&crd(false)));
        let new = package("t", "0.2.0", PARAMS, Some(&crd(true)));
        let a = against(&new, &old).unwrap();
        assert!(a.parameters.is_empty());
        assert_eq!(a.crds.len(), 1, "{a:?}");
        let f = &a.crds[0];
        assert_eq!(f.rule, crd_safety::Rule::RequiredAdded);
        assert_eq!(f.crd, "widgets.example.com");
        assert_eq!(f.version.as_deref(), Some("v1"));
        assert_eq!(f.path, "/spec/replicas");
        assert!(a.is_unsafe());
        assert_eq!(a.to_json()["crds"][0]["code"], "required-added");
    }

    #[test]
    fn the_old_crd_counts_as_installed_with_objects() {
        // v1 renamed v2: v1 was stored, and served while objects exist.
        let old = package("t", "0.1.0", PARAMS, Some(&crd(false)));
        let new = package(
            "t",
            "0.2.0",
            PARAMS,
            Some(&crd(false).replace("name: v1", "name: v2")),
        );
        let a = against(&new, &old).unwrap();
        let rules: Vec<_> = a.crds.iter().map(|f| (f.rule, f.safe)).collect();
        assert!(
            rules.contains(&(crd_safety::Rule::StoredVersionRemoved, false)),
            "{rules:?}"
        );
        assert!(
            rules.contains(&(crd_safety::Rule::ServedVersionRemoved, false)),
            "{rules:?}"
        );
    }

    #[test]
    fn a_crd_the_new_package_no_longer_applies_or_newly_applies_is_no_finding() {
        let with = package("t", "0.1.0", PARAMS, Some(&crd(true)));
        let without = package("t", "0.2.0", PARAMS, None);
        assert!(against(&without, &with).unwrap().is_empty());
        assert!(against(&with, &without).unwrap().is_empty());
    }

    #[test]
    fn another_operator_or_a_schema_that_does_not_compile_is_an_error() {
        let old = package("t", "0.1.0", PARAMS, None);
        let other = package("u", "0.2.0", PARAMS, None);
        let e = against(&other, &old).unwrap_err();
        assert_eq!(e[0].code, Code::Operator);
        assert!(e[0].message.contains("operator t"), "{}", e[0].message);
        let broken = package(
            "t",
            "0.2.0",
            "apiVersion: kudo.dev/v1beta2\ntype: object\nproperties:\n  nodes:\n    type: integer\n    pattern: \"(\"\n",
            None,
        );
        assert!(against(&broken, &old).is_err());
    }
}
