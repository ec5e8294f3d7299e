//! The object kudo-manager applies for a rendered template: labelled for its Instance and for
//! the step that applies it, and placed in the Instance's namespace (owned by the Instance) or
//! left cluster-scoped. The manager applies it; `kudo diff` dry-runs the very same object.

use kube::{Resource, ResourceExt};
use serde_json::{Value, json};

use crate::labels;
use crate::v1beta2::Instance;

/// Where in a plan an object is applied.
#[derive(Debug, Clone, Copy)]
pub struct At<'a> {
    /// The plan.
    pub plan: &'a str,
    /// The phase.
    pub phase: &'a str,
    /// The step.
    pub step: &'a str,
}

/// `obj` with the labels that tie it to `inst` (of `operator`) and the annotations that say
/// where the plan applied it.
pub fn labelled(mut obj: Value, inst: &Instance, operator: &str, at: At<'_>) -> Value {
    let ov = inst.spec.operator_version_name().unwrap_or_default();
    let meta = &mut obj["metadata"];
    for (key, value) in [
        (labels::MANAGED_BY, labels::MANAGED_BY_KUDO.to_string()),
        (labels::INSTANCE, inst.name_any()),
        (labels::OPERATOR, operator.to_string()),
        (labels::OPERATOR_VERSION, ov),
    ] {
        meta["labels"][key] = json!(value);
    }
    for (key, value) in [
        (labels::PLAN, at.plan),
        (labels::PHASE, at.phase),
        (labels::STEP, at.step),
    ] {
        meta["annotations"][key] = json!(value);
    }
    obj
}

/// Places `obj` for `inst`: a namespaced object goes to its template's namespace, else the
/// Instance's, and is owned (controller reference) by the Instance when it is in the Instance's
/// namespace; a cluster-scoped object loses any namespace its template gave it.
pub fn placed(obj: &mut Value, inst: &Instance, namespaced: bool) {
    let ns = inst.namespace().unwrap_or_default();
    if namespaced {
        let target = obj
            .pointer("/metadata/namespace")
            .and_then(Value::as_str)
            .map(String::from)
            .unwrap_or_else(|| ns.clone());
        obj["metadata"]["namespace"] = json!(target);
        if target == ns
            && let Some(owner) = inst.controller_owner_ref(&())
        {
            obj["metadata"]["ownerReferences"] = json!([owner]);
        }
    } else if let Some(m) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
        m.remove("namespace");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::ObjectRef;
    use crate::v1beta2::InstanceSpec;

    fn kafka() -> Instance {
        let mut inst = Instance::new(
            "kafka",
            InstanceSpec {
                operator_version: Some(ObjectRef {
                    name: Some("kafka-1.0.0".into()),
                    ..Default::default()
                }),
                ..Default::default()
            },
        );
        inst.metadata.namespace = Some("ns".into());
        inst.metadata.uid = Some("u1".into());
        inst
    }

    #[test]
    fn applied_objects_carry_the_instance_labels_and_where_they_were_applied() {
        let obj = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "c", "labels": {"app": "x"}}});
        let at = At {
            plan: "deploy",
            phase: "main",
            step: "config",
        };
        let got = labelled(obj, &kafka(), "kafka", at);
        assert_eq!(
            got["metadata"],
            json!({"name": "c",
                "labels": {"app": "x", "app.kubernetes.io/managed-by": "kudo",
                    "kudo.dev/instance": "kafka", "kudo.dev/operator": "kafka",
                    "kudo.dev/operator-version": "kafka-1.0.0"},
                "annotations": {"kudo.dev/plan": "deploy", "kudo.dev/phase": "main",
                    "kudo.dev/step": "config"}})
        );
    }

    #[test]
    fn objects_are_owned_in_the_instance_namespace_only() {
        let inst = kafka();
        let mut here = json!({"metadata": {"name": "a"}});
        placed(&mut here, &inst, true);
        assert_eq!(here["metadata"]["namespace"], "ns");
        assert_eq!(here["metadata"]["ownerReferences"][0]["uid"], "u1");
        let mut there = json!({"metadata": {"name": "a", "namespace": "other"}});
        placed(&mut there, &inst, true);
        assert_eq!(there["metadata"]["namespace"], "other");
        assert!(there["metadata"].get("ownerReferences").is_none());
        let mut cluster = json!({"metadata": {"name": "a", "namespace": "other"}});
        placed(&mut cluster, &inst, false);
        assert!(cluster["metadata"].get("namespace").is_none());
    }
}
