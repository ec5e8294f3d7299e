//! The object kudo-manager applies for a rendered template: labelled for its Instance and for
//! the step that applies it, and placed in the Instance's namespace (owned by the Instance) or
//! left cluster-scoped. The manager applies it; `kudo diff` dry-runs the very same object.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
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

/// Where a kind keeps the metadata of the Pods (and claims) it makes: KUDO's
/// `CommonLabelPaths` (`pkg/engine/renderer/consts.go`, from kustomize's common labels). A
/// group of `None` matches every group, as KUDO's empty group does. KUDO also listed
/// `spec/template` for a CronJob, which has none; it is left out.
const TEMPLATES: &[(Option<&str>, &str, &str)] = &[
    (Some("apps"), "StatefulSet", "/spec/template"),
    (Some("apps"), "Deployment", "/spec/template"),
    (None, "ReplicaSet", "/spec/template"),
    (None, "ReplicationController", "/spec/template"),
    (None, "DaemonSet", "/spec/template"),
    (Some("batch"), "Job", "/spec/template"),
    (Some("batch"), "CronJob", "/spec/jobTemplate/spec/template"),
];

/// `obj` with the labels that tie it to `inst` (of `operator`, at `version`: the package's
/// operator name and version) and the annotations that say where the plan applied it. As KUDO's
/// enhancer (`pkg/engine/renderer/enhancer.go`) does:
/// - every object: the labels `heritage: kudo`, `kudo.dev/operator`, `kudo.dev/instance` (and
///   kudo's `app.kubernetes.io/managed-by`, `kudo.dev/operator-version`: the OperatorVersion's
///   name), and the annotations `kudo.dev/plan`, `kudo.dev/phase`, `kudo.dev/step`;
/// - the Pod template of a workload (`TEMPLATES`): the labels `heritage`,
///   `kudo.dev/operator` and `kudo.dev/instance`, and the annotation `kudo.dev/operator-version`
///   with the operator's version (stable across plans, so no plan restarts a Pod by it; an
///   upgrade does, as in KUDO);
/// - a StatefulSet's `volumeClaimTemplates`: the same labels, so the claims are found by them.
///
/// Only metadata changes: a selector (`spec.selector`) is never touched, so a Pod template's
/// new labels keep matching it. A template the object does not have is not created.
pub fn labelled(
    mut obj: Value,
    inst: &Instance,
    operator: &str,
    version: &str,
    at: At<'_>,
) -> Value {
    let ov = inst.spec.operator_version_name().unwrap_or_default();
    let own = [
        (labels::HERITAGE, labels::HERITAGE_KUDO.to_string()),
        (labels::INSTANCE, inst.name_any()),
        (labels::OPERATOR, operator.to_string()),
    ];
    let meta = &mut obj["metadata"];
    for (key, value) in own.iter().cloned().chain([
        (labels::MANAGED_BY, labels::MANAGED_BY_KUDO.to_string()),
        (labels::OPERATOR_VERSION, ov),
    ]) {
        meta["labels"][key] = json!(value);
    }
    for (key, value) in [
        (labels::PLAN, at.plan),
        (labels::PHASE, at.phase),
        (labels::STEP, at.step),
    ] {
        meta["annotations"][key] = json!(value);
    }
    let (group, kind) = group_kind(&obj);
    let template = TEMPLATES
        .iter()
        .find(|(g, k, _)| *k == kind && g.is_none_or(|g| g == group))
        .map(|(_, _, path)| *path);
    if let Some(Value::Object(t)) = template.and_then(|p| obj.pointer_mut(p)) {
        let meta = t.entry("metadata").or_insert_with(|| json!({}));
        for (key, value) in &own {
            set(meta, "labels", key, value);
        }
        set(meta, "annotations", labels::OPERATOR_VERSION, version);
    }
    if (group.as_str(), kind.as_str()) == ("apps", "StatefulSet")
        && let Some(Value::Array(claims)) = obj.pointer_mut("/spec/volumeClaimTemplates")
    {
        for claim in claims.iter_mut().filter(|c| c.is_object()) {
            let meta = &mut claim["metadata"];
            for (key, value) in &own {
                set(meta, "labels", key, value);
            }
        }
    }
    obj
}

/// `meta[map][key] = value`, making `map` when missing (or not a map).
fn set(meta: &mut Value, map: &str, key: &str, value: &str) {
    if !meta.is_object() {
        *meta = json!({});
    }
    if !meta[map].is_object() {
        meta[map] = json!({});
    }
    meta[map][key] = json!(value);
}

/// The group (empty for the core group) and kind of `obj`.
fn group_kind(obj: &Value) -> (String, String) {
    let api_version = obj["apiVersion"].as_str().unwrap_or_default();
    let group = api_version.rsplit_once('/').map(|(g, _)| g).unwrap_or("");
    (
        group.into(),
        obj["kind"].as_str().unwrap_or_default().into(),
    )
}

/// The owner reference of an object `inst` owns, as KUDO writes it: `controller: true`,
/// `blockOwnerDeletion: true` (a foreground deletion of the Instance waits for the object).
/// Setting `blockOwnerDeletion` takes `update` on `instances/finalizers` where the API server
/// enforces owner references (the OwnerReferencesPermissionEnforcement admission plugin):
/// `kudo install` grants it to the Instance's ServiceAccount. `None` before the Instance has
/// a uid.
pub fn owner_reference(inst: &Instance) -> Option<OwnerReference> {
    let owner = inst.controller_owner_ref(&())?;
    Some(OwnerReference {
        block_owner_deletion: Some(true),
        ..owner
    })
}

/// Places `obj` for `inst`: a namespaced object goes to its template's namespace, else the
/// Instance's, and is owned (controller reference) by the Instance when it is in the Instance's
/// namespace ([`owner_reference`]); a cluster-scoped object loses any namespace its template gave it.
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
            && let Some(owner) = owner_reference(inst)
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
        let got = labelled(obj, &kafka(), "kafka", "1.0.0", at);
        assert_eq!(
            got["metadata"],
            json!({"name": "c",
                "labels": {"app": "x", "app.kubernetes.io/managed-by": "kudo", "heritage": "kudo",
                    "kudo.dev/instance": "kafka", "kudo.dev/operator": "kafka",
                    "kudo.dev/operator-version": "kafka-1.0.0"},
                "annotations": {"kudo.dev/plan": "deploy", "kudo.dev/phase": "main",
                    "kudo.dev/step": "config"}})
        );
    }

    /// KUDO's enhancer labels Pod templates and claim templates; the selector stays as the
    /// template gave it.
    #[test]
    fn pod_templates_and_claim_templates_carry_kudos_labels() {
        let at = At {
            plan: "deploy",
            phase: "main",
            step: "app",
        };
        let kudo = json!({"heritage": "kudo", "kudo.dev/operator": "kafka",
            "kudo.dev/instance": "kafka"});
        let with = |extra: Value| {
            let mut l = kudo.clone();
            l.as_object_mut()
                .unwrap()
                .extend(extra.as_object().unwrap().clone());
            l
        };
        let pod = |labels: Value| json!({"metadata": {"labels": labels}, "spec": {}});
        let cases: &[(&str, &str, &str)] = &[
            ("apps/v1", "StatefulSet", "/spec/template"),
            ("apps/v1", "Deployment", "/spec/template"),
            ("apps/v1", "DaemonSet", "/spec/template"),
            ("apps/v1", "ReplicaSet", "/spec/template"),
            ("v1", "ReplicationController", "/spec/template"),
            ("batch/v1", "Job", "/spec/template"),
            ("batch/v1", "CronJob", "/spec/jobTemplate/spec/template"),
        ];
        for (api_version, kind, path) in cases {
            let mut obj = json!({"apiVersion": api_version, "kind": kind,
                "metadata": {"name": "w"},
                "spec": {"selector": {"matchLabels": {"app": "w"}}}});
            let tokens: Vec<&str> = path.trim_start_matches('/').split('/').collect();
            let mut at_path = &mut obj;
            for t in &tokens {
                at_path = &mut at_path[*t];
            }
            *at_path = pod(json!({"app": "w"}));
            let got = labelled(obj, &kafka(), "kafka", "1.0.0", at);
            let template = got.pointer(path).unwrap();
            assert_eq!(
                template["metadata"]["labels"],
                with(json!({"app": "w"})),
                "{kind}"
            );
            assert_eq!(
                template["metadata"]["annotations"],
                json!({"kudo.dev/operator-version": "1.0.0"}),
                "{kind}"
            );
            assert_eq!(
                got["spec"]["selector"],
                json!({"matchLabels": {"app": "w"}}),
                "{kind}: the selector is never touched"
            );
            assert_eq!(got["metadata"]["labels"]["heritage"], "kudo", "{kind}");
        }
        let set = json!({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "zk"},
            "spec": {"template": {"spec": {}}, "volumeClaimTemplates": [
                {"metadata": {"name": "data"}, "spec": {}},
                {"metadata": {"name": "logs", "labels": {"tier": "x"}}, "spec": {}}]}});
        let got = labelled(set, &kafka(), "kafka", "1.0.0", at);
        assert_eq!(got["spec"]["template"]["metadata"]["labels"], kudo);
        assert_eq!(
            got["spec"]["volumeClaimTemplates"][0]["metadata"]["labels"],
            kudo
        );
        assert_eq!(
            got["spec"]["volumeClaimTemplates"][1]["metadata"]["labels"],
            with(json!({"tier": "x"}))
        );
        assert!(
            got["spec"]["volumeClaimTemplates"][0]["metadata"]
                .get("annotations")
                .is_none()
        );
        // No template, none made; other kinds get the object's labels only.
        for obj in [
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}, "spec": {}}),
            json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"},
                "spec": {"template": {"metadata": {}}}}),
        ] {
            let got = labelled(obj.clone(), &kafka(), "kafka", "1.0.0", at);
            assert_eq!(got["spec"], obj["spec"], "{obj}");
        }
    }

    #[test]
    fn objects_are_owned_in_the_instance_namespace_only() {
        let inst = kafka();
        let mut here = json!({"metadata": {"name": "a"}});
        placed(&mut here, &inst, true);
        assert_eq!(here["metadata"]["namespace"], "ns");
        // As KUDO writes it (its operator tests assert both).
        let owner = &here["metadata"]["ownerReferences"][0];
        assert_eq!(owner["uid"], "u1");
        assert_eq!(owner["controller"], true, "{owner}");
        assert_eq!(owner["blockOwnerDeletion"], true, "{owner}");
        let mut there = json!({"metadata": {"name": "a", "namespace": "other"}});
        placed(&mut there, &inst, true);
        assert_eq!(there["metadata"]["namespace"], "other");
        assert!(there["metadata"].get("ownerReferences").is_none());
        let mut cluster = json!({"metadata": {"name": "a", "namespace": "other"}});
        placed(&mut cluster, &inst, false);
        assert!(cluster["metadata"].get("namespace").is_none());
    }
}
