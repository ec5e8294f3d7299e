//! Which OperatorVersion an Instance runs, read as KUDO reads `spec.operatorVersion`: the one
//! rule the webhook, the manager, conversion and the CLI all apply.
//!
//! - **Namespace**: `spec.operatorVersion.namespace` when it names one, else the Instance's
//!   own ([`namespace`]). KUDO's manifests install OperatorVersions into `default` and
//!   reference them from other namespaces; KUDO honoured the field, and so does kudo.
//!   OperatorVersions are not secret: an Instance may run one from a namespace its writer
//!   cannot write to (docs/tenancy.md).
//! - **Name**: an OperatorVersion answers to every name KUDO and kudo have given it
//!   ([`kudo_pkg::package::operator_version_names`]): `zookeeper-3.6.2-0.3.3` (KUDO 0.16 and
//!   later, and kudo) and `zookeeper-0.3.3` (older releases). An Instance naming one finds the
//!   OperatorVersion however it was named ([`resolve`]): its exact name first, else the one
//!   OperatorVersion of the namespace whose operator, appVersion and version give that name.
//!
//! ```
//! use kudo_crd::reference::{Identity, resolve};
//! let installed = [Identity {
//!     name: "zookeeper-3.6.2-0.3.3",
//!     operator: Some("zookeeper"),
//!     app_version: Some("3.6.2"),
//!     version: Some("0.3.3"),
//! }];
//! assert_eq!(resolve("zookeeper-0.3.3", installed), Some("zookeeper-3.6.2-0.3.3"));
//! ```

use serde_json::Value;

use crate::common::ObjectRef;
use crate::v1beta2::{InstanceSpec, OperatorVersion};

/// An OperatorVersion as an Instance names it: where to look, and the name it gives (which may
/// be the other form of the OperatorVersion's name: [`resolve`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct OperatorVersionRef {
    /// The namespace ([`namespace`]).
    pub namespace: String,
    /// The name as the Instance gives it.
    pub name: String,
}

impl std::fmt::Display for OperatorVersionRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.namespace, self.name)
    }
}

/// The namespace of an Instance's OperatorVersion: `given` (`spec.operatorVersion.namespace`)
/// when it names one, else the Instance's namespace.
pub fn namespace<'a>(given: Option<&'a str>, instance_namespace: &'a str) -> &'a str {
    given
        .filter(|n| !n.is_empty())
        .unwrap_or(instance_namespace)
}

impl OperatorVersionRef {
    /// The OperatorVersion `reference` (an Instance's `spec.operatorVersion`) names, for an
    /// Instance in `instance_namespace`; `None` without a name.
    pub fn of(reference: &ObjectRef, instance_namespace: &str) -> Option<OperatorVersionRef> {
        let name = reference.name.clone().filter(|n| !n.is_empty())?;
        Some(OperatorVersionRef {
            namespace: namespace(reference.namespace.as_deref(), instance_namespace).to_string(),
            name,
        })
    }

    /// The OperatorVersion an Instance object (JSON, either API version) names: its
    /// `spec.operatorVersion` and `metadata.namespace` (`instance_namespace` when the object
    /// has none, as in an admission request's object on create).
    pub fn of_object(object: &Value, instance_namespace: &str) -> Option<OperatorVersionRef> {
        let text = |p: &str| object.pointer(p).and_then(Value::as_str);
        let name = text("/spec/operatorVersion/name").filter(|n| !n.is_empty())?;
        let own = text("/metadata/namespace")
            .filter(|n| !n.is_empty())
            .unwrap_or(instance_namespace);
        Some(OperatorVersionRef {
            namespace: namespace(text("/spec/operatorVersion/namespace"), own).to_string(),
            name: name.to_string(),
        })
    }
}

impl InstanceSpec {
    /// The OperatorVersion the Instance runs, for an Instance in `instance_namespace`
    /// ([`OperatorVersionRef::of`]).
    pub fn operator_version_ref(&self, instance_namespace: &str) -> Option<OperatorVersionRef> {
        self.operator_version
            .as_ref()
            .and_then(|r| OperatorVersionRef::of(r, instance_namespace))
    }
}

/// What names an OperatorVersion: its own name, and the fields its other names are made of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Identity<'a> {
    /// `metadata.name`.
    pub name: &'a str,
    /// `spec.operator.name`.
    pub operator: Option<&'a str>,
    /// `spec.appVersion`.
    pub app_version: Option<&'a str>,
    /// `spec.version`.
    pub version: Option<&'a str>,
}

impl<'a> Identity<'a> {
    /// The identity of a typed OperatorVersion (`None` without a name).
    pub fn of(ov: &'a OperatorVersion) -> Option<Identity<'a>> {
        Some(Identity {
            name: ov.metadata.name.as_deref()?,
            operator: ov.spec.operator.as_ref().and_then(|o| o.name.as_deref()),
            app_version: ov.spec.app_version.as_deref(),
            version: ov.spec.version.as_deref(),
        })
    }

    /// The identity of an OperatorVersion object as JSON, either API version (`None` without
    /// a name).
    pub fn of_object(object: &'a Value) -> Option<Identity<'a>> {
        let name = object.pointer("/metadata/name").and_then(Value::as_str)?;
        Some(Identity::of_spec(name, object.get("spec")))
    }

    /// The identity of OperatorVersion `name` with `spec` (JSON, either API version).
    pub fn of_spec(name: &'a str, spec: Option<&'a Value>) -> Identity<'a> {
        let text = |p: &str| spec.and_then(|s| s.pointer(p)).and_then(Value::as_str);
        Identity {
            name,
            operator: text("/operator/name"),
            app_version: text("/appVersion"),
            version: text("/version"),
        }
    }

    /// True when an Instance naming `requested` runs this OperatorVersion.
    pub fn answers_to(&self, requested: &str) -> bool {
        if self.name == requested {
            return true;
        }
        let (Some(operator), Some(version)) = (self.operator, self.version) else {
            return false;
        };
        kudo_pkg::package::operator_version_names(operator, self.app_version, version)
            .iter()
            .any(|n| n == requested)
    }
}

/// The name of the OperatorVersion an Instance naming `requested` runs, among `candidates`
/// (the OperatorVersions of the namespace [`namespace`] gives): the one named `requested`,
/// else the one that answers to it ([`Identity::answers_to`]). `None` when none does, and when
/// several do (the same version of an operator for two appVersions, both installed by the
/// short name's form): the Instance must then name one exactly.
pub fn resolve<'a>(
    requested: &str,
    candidates: impl IntoIterator<Item = Identity<'a>>,
) -> Option<&'a str> {
    let mut found: Option<&'a str> = None;
    let mut several = false;
    for c in candidates {
        if c.name == requested {
            return Some(c.name);
        }
        if c.answers_to(requested) {
            several |= found.is_some_and(|f| f != c.name);
            found = Some(c.name);
        }
    }
    found.filter(|_| !several)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ov<'a>(name: &'a str, app: Option<&'a str>, version: &'a str) -> Identity<'a> {
        Identity {
            name,
            operator: Some("zookeeper"),
            app_version: app,
            version: Some(version),
        }
    }

    #[test]
    fn an_instance_finds_its_operator_version_by_either_name() {
        let kudo_named = [ov("zookeeper-3.6.2-0.3.3", Some("3.6.2"), "0.3.3")];
        let short_named = [ov("zookeeper-0.3.3", Some("3.6.2"), "0.3.3")];
        let two_apps = [
            ov("zookeeper-0.3.3", Some("3.6.2"), "0.3.3"),
            ov("zk-other", Some("3.5.0"), "0.3.3"),
        ];
        let cases: &[(&str, &[Identity<'_>], Option<&str>)] = &[
            (
                "zookeeper-3.6.2-0.3.3",
                &kudo_named,
                Some("zookeeper-3.6.2-0.3.3"),
            ),
            (
                "zookeeper-0.3.3",
                &kudo_named,
                Some("zookeeper-3.6.2-0.3.3"),
            ),
            ("zookeeper-0.3.3", &short_named, Some("zookeeper-0.3.3")),
            (
                "zookeeper-3.6.2-0.3.3",
                &short_named,
                Some("zookeeper-0.3.3"),
            ),
            ("zookeeper-0.3.4", &kudo_named, None),
            ("zookeeper-3.5.0-0.3.3", &kudo_named, None),
            // the exact name wins over the other form of another's
            ("zookeeper-0.3.3", &two_apps, Some("zookeeper-0.3.3")),
            // two OperatorVersions answer to it: none is chosen
            (
                "zookeeper-0.3.3",
                &[
                    ov("zookeeper-3.6.2-0.3.3", Some("3.6.2"), "0.3.3"),
                    ov("zookeeper-3.5.0-0.3.3", Some("3.5.0"), "0.3.3"),
                ],
                None,
            ),
        ];
        for (requested, candidates, want) in cases {
            let got = resolve(requested, candidates.iter().copied());
            assert_eq!(got, *want, "{requested} among {candidates:?}");
        }
    }

    #[test]
    fn the_operator_version_namespace_is_the_references_else_the_instances() {
        let cases: &[(Value, Option<(&str, &str)>)] = &[
            (
                json!({"metadata": {"namespace": "team"},
                    "spec": {"operatorVersion": {"name": "zk-0.3.3", "namespace": "default"}}}),
                Some(("default", "zk-0.3.3")),
            ),
            (
                json!({"metadata": {"namespace": "team"},
                    "spec": {"operatorVersion": {"name": "zk-0.3.3"}}}),
                Some(("team", "zk-0.3.3")),
            ),
            (
                json!({"metadata": {"namespace": "team"},
                    "spec": {"operatorVersion": {"name": "zk-0.3.3", "namespace": ""}}}),
                Some(("team", "zk-0.3.3")),
            ),
            // no namespace in the object (a create's object): the request's
            (
                json!({"spec": {"operatorVersion": {"name": "zk-0.3.3"}}}),
                Some(("request", "zk-0.3.3")),
            ),
            (
                json!({"spec": {"operatorVersion": {"namespace": "default"}}}),
                None,
            ),
        ];
        for (object, want) in cases {
            let got = OperatorVersionRef::of_object(object, "request");
            let want = want.map(|(namespace, name)| OperatorVersionRef {
                namespace: namespace.into(),
                name: name.into(),
            });
            assert_eq!(got, want, "{object}");
            if let Ok(inst) = serde_json::from_value::<crate::v1beta2::Instance>(json!({
                "apiVersion": "kudo.dev/v1beta2", "kind": "Instance",
                "metadata": {"name": "i"}, "spec": object["spec"]}))
            {
                let own = object
                    .pointer("/metadata/namespace")
                    .and_then(Value::as_str)
                    .unwrap_or("request");
                assert_eq!(inst.spec.operator_version_ref(own), want, "{object}");
            }
        }
    }
}
