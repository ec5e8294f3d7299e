use super::*;

/// What a refusal is, and where: enough to tell every expected refusal apart.
#[derive(Debug, PartialEq)]
enum Refused {
    NoSuccessor,
    Field(&'static str),
    NoSelector,
    /// The version, and the pointer of the first violation (relative to the schema).
    NotStructural(&'static str, &'static str),
    Malformed(&'static str),
}

fn refused(r: &Refusal) -> (String, String, String) {
    match r {
        Refusal::NoSuccessor { .. } => ("no-successor".into(), String::new(), String::new()),
        Refusal::Field { pointer, .. } => ("field".into(), pointer.clone(), String::new()),
        Refusal::NoSelector => ("no-selector".into(), String::new(), String::new()),
        Refusal::NotStructural {
            version,
            violations,
            ..
        } => (
            "not-structural".into(),
            version.clone(),
            violations[0].pointer(),
        ),
        Refusal::Malformed { pointer, .. } => ("malformed".into(), pointer.clone(), String::new()),
    }
}

impl Refused {
    fn parts(&self) -> (String, String, String) {
        let s = |s: &str| s.to_string();
        match self {
            Refused::NoSuccessor => (s("no-successor"), s(""), s("")),
            Refused::Field(p) => (s("field"), s(p), s("")),
            Refused::NoSelector => (s("no-selector"), s(""), s("")),
            Refused::NotStructural(v, p) => (s("not-structural"), s(v), s(p)),
            Refused::Malformed(p) => (s("malformed"), s(p), s("")),
        }
    }
}

/// A case: what it shows and the guide section it follows, the object, and the converted
/// object or the refusal.
type Case = (&'static str, Value, Result<Value, Refused>);

/// A workload's pod template with `labels`.
fn pod_template(labels: Value) -> Value {
    json!({"metadata": {"labels": labels}, "spec": {"containers": [{"name": "c", "image": "i"}]}})
}

#[test]
fn removed_versions_become_their_successors_or_are_refused() {
    let cases: Vec<Case> = vec![
        (
            "#rbac-resources-v122: rabbitmq's Role, apiVersion only",
            json!({"kind": "Role", "apiVersion": "rbac.authorization.k8s.io/v1beta1", "metadata": {"name": "rabbitmq-peer-discovery-rbac", "namespace": "ns"},
                   "rules": [{"apiGroups": [""], "resources": ["endpoints"], "verbs": ["get"]}]}),
            Ok(
                json!({"kind": "Role", "apiVersion": "rbac.authorization.k8s.io/v1", "metadata": {"name": "rabbitmq-peer-discovery-rbac", "namespace": "ns"},
                   "rules": [{"apiGroups": [""], "resources": ["endpoints"], "verbs": ["get"]}]}),
            ),
        ),
        (
            "#rbac-resources-v122: a ClusterRoleBinding",
            json!({"apiVersion": "rbac.authorization.k8s.io/v1beta1", "kind": "ClusterRoleBinding", "metadata": {"name": "b"},
                   "subjects": [{"kind": "ServiceAccount", "name": "sa", "namespace": "ns"}], "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "r"}}),
            Ok(
                json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": "b"},
                   "subjects": [{"kind": "ServiceAccount", "name": "sa", "namespace": "ns"}], "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "r"}}),
            ),
        ),
        (
            "#cronjob-v125: no notable changes",
            json!({"apiVersion": "batch/v1beta1", "kind": "CronJob", "metadata": {"name": "c"}, "spec": {"schedule": "* * * * *", "jobTemplate": {}}}),
            Ok(
                json!({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "c"}, "spec": {"schedule": "* * * * *", "jobTemplate": {}}}),
            ),
        ),
        (
            "#networkpolicy-v116: a new group, the same fields",
            json!({"apiVersion": "extensions/v1beta1", "kind": "NetworkPolicy", "metadata": {"name": "n"}, "spec": {"podSelector": {}}}),
            Ok(
                json!({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "metadata": {"name": "n"}, "spec": {"podSelector": {}}}),
            ),
        ),
        (
            "#deployment-v116: apps/v1beta1 took the selector and the labels from the template, and kept 2 old ReplicaSets",
            json!({"apiVersion": "apps/v1beta1", "kind": "Deployment", "metadata": {"name": "d"},
                   "spec": {"replicas": 2, "template": pod_template(json!({"app": "x"}))}}),
            Ok(
                json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "labels": {"app": "x"}},
                   "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "x"}}, "template": pod_template(json!({"app": "x"})), "revisionHistoryLimit": 2}}),
            ),
        ),
        (
            "#deployment-v116: extensions/v1beta1 had no deadline, kept every ReplicaSet; a Recreate strategy has no rolling defaults; labels given are kept",
            json!({"apiVersion": "extensions/v1beta1", "kind": "Deployment", "metadata": {"name": "d", "labels": {"team": "t"}},
                   "spec": {"selector": {"matchLabels": {"app": "x"}}, "strategy": {"type": "Recreate"}, "template": pod_template(json!({"app": "x"}))}}),
            Ok(
                json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "labels": {"team": "t"}},
                   "spec": {"selector": {"matchLabels": {"app": "x"}}, "strategy": {"type": "Recreate"}, "template": pod_template(json!({"app": "x"})),
                            "revisionHistoryLimit": 2147483647, "progressDeadlineSeconds": 2147483647}}),
            ),
        ),
        (
            "#deployment-v116: extensions/v1beta1 rolled one pod at a time",
            json!({"apiVersion": "extensions/v1beta1", "kind": "Deployment", "metadata": {"name": "d", "labels": {"app": "x"}},
                   "spec": {"selector": {"matchLabels": {"app": "x"}}, "revisionHistoryLimit": 3, "progressDeadlineSeconds": 60,
                            "strategy": {"rollingUpdate": {"maxSurge": 2}}, "template": pod_template(json!({"app": "x"}))}}),
            Ok(
                json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "labels": {"app": "x"}},
                   "spec": {"selector": {"matchLabels": {"app": "x"}}, "revisionHistoryLimit": 3, "progressDeadlineSeconds": 60,
                            "strategy": {"rollingUpdate": {"maxSurge": 2, "maxUnavailable": 1}}, "template": pod_template(json!({"app": "x"}))}}),
            ),
        ),
        (
            "#deployment-v116: spec.rollbackTo is removed",
            json!({"apiVersion": "extensions/v1beta1", "kind": "Deployment", "metadata": {"name": "d"},
                   "spec": {"rollbackTo": {"revision": 1}, "template": pod_template(json!({"app": "x"}))}}),
            Err(Refused::Field("/spec/rollbackTo")),
        ),
        (
            "#statefulset-v116: apps/v1beta2 had the same defaults and required the selector",
            json!({"apiVersion": "apps/v1beta2", "kind": "StatefulSet", "metadata": {"name": "s"},
                   "spec": {"serviceName": "s", "selector": {"matchLabels": {"app": "x"}}, "template": pod_template(json!({"app": "x"}))}}),
            Ok(
                json!({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "s"},
                   "spec": {"serviceName": "s", "selector": {"matchLabels": {"app": "x"}}, "template": pod_template(json!({"app": "x"}))}}),
            ),
        ),
        (
            "#statefulset-v116: apps/v1beta1 updated pods on delete",
            json!({"apiVersion": "apps/v1beta1", "kind": "StatefulSet", "metadata": {"name": "s", "labels": {"a": "b"}},
                   "spec": {"serviceName": "s", "template": pod_template(json!({"app": "x"}))}}),
            Ok(
                json!({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "s", "labels": {"a": "b"}},
                   "spec": {"serviceName": "s", "selector": {"matchLabels": {"app": "x"}}, "template": pod_template(json!({"app": "x"})),
                            "updateStrategy": {"type": "OnDelete"}}}),
            ),
        ),
        (
            "#daemonset-v116: templateGeneration is removed; extensions/v1beta1 updated pods on delete",
            json!({"apiVersion": "extensions/v1beta1", "kind": "DaemonSet", "metadata": {"name": "d", "labels": {"a": "b"}},
                   "spec": {"templateGeneration": 3, "updateStrategy": {"rollingUpdate": {"maxUnavailable": 1}}, "template": pod_template(json!({"app": "x"}))}}),
            Ok(
                json!({"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "d", "labels": {"a": "b"}},
                   "spec": {"updateStrategy": {"rollingUpdate": {"maxUnavailable": 1}, "type": "OnDelete"}, "selector": {"matchLabels": {"app": "x"}}, "template": pod_template(json!({"app": "x"}))}}),
            ),
        ),
        (
            "#replicaset-v116: no selector and no template labels to take it from",
            json!({"apiVersion": "apps/v1beta2", "kind": "ReplicaSet", "metadata": {"name": "r"}, "spec": {"template": pod_template(json!({}))}}),
            Err(Refused::NoSelector),
        ),
        (
            "#ingress-v122: spec.backend, serviceName/servicePort, pathType",
            json!({"apiVersion": "networking.k8s.io/v1beta1", "kind": "Ingress", "metadata": {"name": "i"},
                   "spec": {"backend": {"serviceName": "default", "servicePort": 80},
                            "rules": [{"host": "h", "http": {"paths": [
                                {"path": "/a", "backend": {"serviceName": "a", "servicePort": "http"}},
                                {"path": "/b", "pathType": "Prefix", "backend": {"serviceName": "b", "servicePort": 8080}}]}}],
                            "tls": [{"hosts": ["h"]}]}}),
            Ok(
                json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": "i"},
                   "spec": {"defaultBackend": {"service": {"name": "default", "port": {"number": 80}}},
                            "rules": [{"host": "h", "http": {"paths": [
                                {"path": "/a", "pathType": "ImplementationSpecific", "backend": {"service": {"name": "a", "port": {"name": "http"}}}},
                                {"path": "/b", "pathType": "Prefix", "backend": {"service": {"name": "b", "port": {"number": 8080}}}}]}}],
                            "tls": [{"hosts": ["h"]}]}}),
            ),
        ),
        (
            "#ingress-v122: extensions/v1beta1 too; a resource backend is the same in v1",
            json!({"apiVersion": "extensions/v1beta1", "kind": "Ingress", "metadata": {"name": "i"},
                   "spec": {"rules": [{"http": {"paths": [{"backend": {"resource": {"kind": "Bucket", "name": "b"}}}]}}]}}),
            Ok(
                json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": "i"},
                   "spec": {"rules": [{"http": {"paths": [{"pathType": "ImplementationSpecific", "backend": {"resource": {"kind": "Bucket", "name": "b"}}}]}}]}}),
            ),
        ),
        (
            "#ingress-v122: a servicePort that is neither a number nor a name",
            json!({"apiVersion": "extensions/v1beta1", "kind": "Ingress", "metadata": {"name": "i"},
                   "spec": {"backend": {"serviceName": "s", "servicePort": [80]}}}),
            Err(Refused::Malformed("/spec/defaultBackend/servicePort")),
        ),
        (
            "#poddisruptionbudget-v125: kafka's PDB, a selector with labels",
            json!({"apiVersion": "policy/v1beta1", "kind": "PodDisruptionBudget", "metadata": {"name": "p"},
                   "spec": {"selector": {"matchLabels": {"app": "kafka"}}, "maxUnavailable": 1}}),
            Ok(
                json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "p"},
                   "spec": {"selector": {"matchLabels": {"app": "kafka"}}, "maxUnavailable": 1}}),
            ),
        ),
        (
            "#poddisruptionbudget-v125: an empty selector selected no pods, and would select all",
            json!({"apiVersion": "policy/v1beta1", "kind": "PodDisruptionBudget", "metadata": {"name": "p"},
                   "spec": {"selector": {"matchLabels": {}}, "minAvailable": 1}}),
            Ok(
                json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "p"}, "spec": {"minAvailable": 1}}),
            ),
        ),
        (
            "#psp-v125: PodSecurityPolicy has no successor",
            json!({"apiVersion": "policy/v1beta1", "kind": "PodSecurityPolicy", "metadata": {"name": "p"}, "spec": {}}),
            Err(Refused::NoSuccessor),
        ),
        (
            "#horizontalpodautoscaler-v125: v2beta1 metrics take v2's metric and target",
            json!({"apiVersion": "autoscaling/v2beta1", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "h"},
                   "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d"}, "maxReplicas": 5, "metrics": [
                       {"type": "Resource", "resource": {"name": "cpu", "targetAverageUtilization": 80}},
                       {"type": "Pods", "pods": {"metricName": "qps", "targetAverageValue": "10"}},
                       {"type": "Object", "object": {"target": {"kind": "Service", "name": "s"}, "metricName": "rps", "targetValue": "100"}},
                       {"type": "External", "external": {"metricName": "queue", "metricSelector": {"matchLabels": {"q": "a"}}, "targetAverageValue": "30"}}]}}),
            Ok(
                json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "h"},
                   "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d"}, "maxReplicas": 5, "metrics": [
                       {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}},
                       {"type": "Pods", "pods": {"metric": {"name": "qps"}, "target": {"type": "AverageValue", "averageValue": "10"}}},
                       {"type": "Object", "object": {"describedObject": {"kind": "Service", "name": "s"}, "metric": {"name": "rps"}, "target": {"type": "Value", "value": "100"}}},
                       {"type": "External", "external": {"metric": {"name": "queue", "selector": {"matchLabels": {"q": "a"}}}, "target": {"type": "AverageValue", "averageValue": "30"}}}]}}),
            ),
        ),
        (
            "#horizontalpodautoscaler-v126: v2beta2 is v2's shape",
            json!({"apiVersion": "autoscaling/v2beta2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "h"}, "spec": {"maxReplicas": 2}}),
            Ok(
                json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "h"}, "spec": {"maxReplicas": 2}}),
            ),
        ),
        (
            "#webhook-resources-v122: v1beta1's defaults written out",
            json!({"apiVersion": "admissionregistration.k8s.io/v1beta1", "kind": "ValidatingWebhookConfiguration", "metadata": {"name": "w"},
                   "webhooks": [{"name": "a.example.com", "clientConfig": {"service": {"name": "s", "namespace": "n"}}, "sideEffects": "None"}]}),
            Ok(
                json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration", "metadata": {"name": "w"},
                   "webhooks": [{"name": "a.example.com", "clientConfig": {"service": {"name": "s", "namespace": "n"}}, "sideEffects": "None",
                                 "failurePolicy": "Ignore", "matchPolicy": "Exact", "timeoutSeconds": 30, "admissionReviewVersions": ["v1beta1"]}]}),
            ),
        ),
        (
            "#webhook-resources-v122: sideEffects defaulted to Unknown, which v1 refuses",
            json!({"apiVersion": "admissionregistration.k8s.io/v1beta1", "kind": "MutatingWebhookConfiguration", "metadata": {"name": "w"},
                   "webhooks": [{"name": "a.example.com", "sideEffects": "None"}, {"name": "b.example.com"}]}),
            Err(Refused::Field("/webhooks/1/sideEffects")),
        ),
        (
            "#webhook-resources-v122: names must be unique in v1",
            json!({"apiVersion": "admissionregistration.k8s.io/v1beta1", "kind": "MutatingWebhookConfiguration", "metadata": {"name": "w"},
                   "webhooks": [{"name": "a.example.com", "sideEffects": "None"}, {"name": "a.example.com", "sideEffects": "NoneOnDryRun"}]}),
            Err(Refused::Field("/webhooks/1/name")),
        ),
        (
            "#customresourcedefinition-v122: version, validation, subresources, columns into versions; scope; status dropped",
            json!({"apiVersion": "apiextensions.k8s.io/v1beta1", "kind": "CustomResourceDefinition", "metadata": {"name": "things.example.com"},
                   "spec": {"group": "example.com", "names": {"kind": "Thing", "plural": "things"},
                            "subresources": {"status": {}},
                            "validation": {"openAPIV3Schema": {"properties": {"spec": {"properties": {"size": {"type": "integer"}, "ports": {"items": {"type": "integer"}}}}}}},
                            "additionalPrinterColumns": [{"name": "Size", "type": "integer", "JSONPath": ".spec.size"}],
                            "version": "v1alpha1"},
                   "status": {"storedVersions": null}}),
            Ok(
                json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": "things.example.com"},
                   "spec": {"group": "example.com", "names": {"kind": "Thing", "plural": "things"},
                            "scope": "Namespaced",
                            "versions": [{"name": "v1alpha1", "served": true, "storage": true,
                                "schema": {"openAPIV3Schema": {"properties": {"spec": {"properties": {"size": {"type": "integer"}, "ports": {"items": {"type": "integer"}, "type": "array"}}, "type": "object"}}, "type": "object"}},
                                "subresources": {"status": {}},
                                "additionalPrinterColumns": [{"name": "Size", "type": "integer", "jsonPath": ".spec.size"}]}],
                            "preserveUnknownFields": false}}),
            ),
        ),
        (
            "#customresourcedefinition-v122 (apiextensions validation, KEP-1111): a CRD of a protected group (*.k8s.io) gets the approval annotation v1 requires, as unapproved",
            json!({"apiVersion": "apiextensions.k8s.io/v1beta1", "kind": "CustomResourceDefinition", "metadata": {"name": "apps.spark.k8s.io"},
                   "spec": {"group": "spark.k8s.io", "scope": "Namespaced", "version": "v1",
                            "validation": {"openAPIV3Schema": {"type": "object"}}}}),
            Ok(
                json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
                   "metadata": {"name": "apps.spark.k8s.io", "annotations": {"api-approved.kubernetes.io": "unapproved, applied as apiextensions.k8s.io/v1 from a v1beta1 CustomResourceDefinition"}},
                   "spec": {"group": "spark.k8s.io", "scope": "Namespaced",
                            "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}],
                            "preserveUnknownFields": false}}),
            ),
        ),
        (
            "#customresourcedefinition-v122: no schema keeps every field; per-version fields win; a free-form object keeps its fields",
            json!({"apiVersion": "apiextensions.k8s.io/v1beta1", "kind": "CustomResourceDefinition", "metadata": {"name": "t.e"},
                   "spec": {"group": "e", "scope": "Cluster", "preserveUnknownFields": true,
                            "versions": [
                                {"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object"}, "metadata": {"type": "object"}}}}},
                                {"name": "v0", "served": false, "storage": false}]}}),
            Ok(
                json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": "t.e"},
                   "spec": {"group": "e", "scope": "Cluster", "preserveUnknownFields": false,
                            "versions": [
                                {"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}, "metadata": {"type": "object"}}}}},
                                {"name": "v0", "served": false, "storage": false, "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}}),
            ),
        ),
        (
            "#customresourcedefinition-v122: webhook conversion moves under conversion.webhook, reviewing v1beta1 by default",
            json!({"apiVersion": "apiextensions.k8s.io/v1beta1", "kind": "CustomResourceDefinition", "metadata": {"name": "t.e"},
                   "spec": {"group": "e", "scope": "Namespaced", "preserveUnknownFields": false, "version": "v2",
                            "versions": [{"name": "v2", "served": true, "storage": true}, {"name": "v1", "served": true, "storage": false}],
                            "validation": {"openAPIV3Schema": {"type": "object", "properties": {"n": {"type": "integer"}}}},
                            "conversion": {"strategy": "Webhook", "webhookClientConfig": {"service": {"name": "conv", "namespace": "ns", "path": "/convert"}, "caBundle": "Cg=="}}}}),
            Ok(
                json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": "t.e"},
                   "spec": {"group": "e", "scope": "Namespaced", "preserveUnknownFields": false,
                            "versions": [
                                {"name": "v2", "served": true, "storage": true, "schema": {"openAPIV3Schema": {"type": "object", "properties": {"n": {"type": "integer"}}}}},
                                {"name": "v1", "served": true, "storage": false, "schema": {"openAPIV3Schema": {"type": "object", "properties": {"n": {"type": "integer"}}}}}],
                            "conversion": {"strategy": "Webhook", "webhook": {"clientConfig": {"service": {"name": "conv", "namespace": "ns", "path": "/convert"}, "caBundle": "Cg=="}, "conversionReviewVersions": ["v1beta1"]}}}}),
            ),
        ),
        (
            "#customresourcedefinition-v122: the int-or-string anyOf gets its marker; a node declaring nothing keeps any value",
            json!({"apiVersion": "apiextensions.k8s.io/v1beta1", "kind": "CustomResourceDefinition", "metadata": {"name": "t.e"},
                   "spec": {"group": "e", "version": "v1", "preserveUnknownFields": false,
                            "validation": {"openAPIV3Schema": {"type": "object", "properties": {
                                "port": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
                                "extra": {"description": "anything"},
                                "list": {"type": "array"}}}}}}),
            Ok(
                json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": "t.e"},
                   "spec": {"group": "e",
                            "scope": "Namespaced",
                            "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                                "port": {"anyOf": [{"type": "integer"}, {"type": "string"}], "x-kubernetes-int-or-string": true},
                                "extra": {"description": "anything", "x-kubernetes-preserve-unknown-fields": true},
                                "list": {"type": "array", "items": {"x-kubernetes-preserve-unknown-fields": true}}}}}}],
                            "preserveUnknownFields": false}}),
            ),
        ),
        (
            "#customresourcedefinition-v122: types inside oneOf are not structural, and not mechanically so",
            json!({"apiVersion": "apiextensions.k8s.io/v1beta1", "kind": "CustomResourceDefinition", "metadata": {"name": "t.e"},
                   "spec": {"group": "e", "version": "v1",
                            "validation": {"openAPIV3Schema": {"properties": {"a": {"oneOf": [{"type": "string"}, {"type": "boolean"}]}}}}}}),
            Err(Refused::NotStructural("v1", "/properties/a/oneOf/0/type")),
        ),
        (
            "#customresourcedefinition-v122: a version is needed",
            json!({"apiVersion": "apiextensions.k8s.io/v1beta1", "kind": "CustomResourceDefinition", "metadata": {"name": "t.e"}, "spec": {"group": "e"}}),
            Err(Refused::Malformed("/spec/versions")),
        ),
    ];
    for (what, input, want) in &cases {
        let got = convert(input).unwrap_or_else(|| panic!("{what}: not a removed version"));
        match (got, want) {
            (Ok(c), Ok(want)) => {
                assert_eq!(&c.object, want, "{what}");
                // the order of the fields is kept (and added ones are where they belong)
                assert_eq!(
                    serde_json::to_string(&c.object).unwrap(),
                    serde_json::to_string(want).unwrap(),
                    "{what}: field order"
                );
            }
            (Err(u), Err(want)) => assert_eq!(refused(&u.refusal), want.parts(), "{what}: {u}"),
            (got, want) => panic!("{what}: got {got:#?}, want {want:#?}"),
        }
    }
}

#[test]
fn versions_kubernetes_still_serves_are_not_converted() {
    let cases = [
        ("v1", "ConfigMap"),
        ("apps/v1", "Deployment"),
        ("rbac.authorization.k8s.io/v1", "Role"),
        ("apiextensions.k8s.io/v1", "CustomResourceDefinition"),
        ("policy/v1beta1", "Eviction"), // a removed group version, but not this kind
        ("kudo.dev/v1beta1", "Instance"),
    ];
    for (api_version, kind) in cases {
        let obj = json!({"apiVersion": api_version, "kind": kind, "metadata": {"name": "x"}});
        assert_eq!(convert(&obj), None, "{api_version} {kind}");
    }
    assert_eq!(convert(&json!({"kind": "Role"})), None, "no apiVersion");
    assert_eq!(convert(&json!("text")), None, "not an object");
}

#[test]
fn a_conversion_says_what_it_changed() {
    let deployment = json!({"apiVersion": "extensions/v1beta1", "kind": "Deployment", "metadata": {"name": "d"},
        "spec": {"template": pod_template(json!({"app": "x"}))}});
    let notes: Vec<String> = convert(&deployment)
        .unwrap()
        .unwrap()
        .notes
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        notes,
        [
            r#"/spec/selector: added {"matchLabels":{"app":"x"}} (apps/v1 requires it; the old API server took it from the template's labels)"#,
            "/spec/revisionHistoryLimit: added 2147483647 (extensions/v1beta1 kept every old ReplicaSet; apps/v1 keeps 10)",
            "/spec/progressDeadlineSeconds: added 2147483647 (extensions/v1beta1 had no progress deadline; apps/v1 sets 600 seconds)",
            "/spec/strategy/rollingUpdate/maxUnavailable: added 1 (extensions/v1beta1 rolled one pod at a time; apps/v1 defaults to 25%)",
            "/spec/strategy/rollingUpdate/maxSurge: added 1 (extensions/v1beta1 rolled one pod at a time; apps/v1 defaults to 25%)",
            r#"/metadata/labels: added {"app":"x"} (the old API server gave an unlabelled workload its template's labels)"#,
        ]
    );

    let crd = json!({"apiVersion": "apiextensions.k8s.io/v1beta1", "kind": "CustomResourceDefinition", "metadata": {"name": "t.e"},
        "spec": {"group": "e", "version": "v1", "validation": {"openAPIV3Schema": {"properties": {"spec": {"type": "object", "properties": {"a": {"type": "string"}}}}}}}});
    let c = convert(&crd).unwrap().unwrap();
    assert_eq!(
        c.notes,
        vec![
            Note::Moved {
                from: "/spec/version".into(),
                to: "/spec/versions/0/name".into()
            },
            Note::Moved {
                from: "/spec/validation/openAPIV3Schema".into(),
                to: "/spec/versions/0/schema/openAPIV3Schema".into()
            },
            Note::Added {
                pointer: "/spec/versions/0/schema/openAPIV3Schema/type".into(),
                value: json!("object"),
                why: "apiextensions.k8s.io/v1 requires structural schemas"
            },
            Note::Added {
                pointer: "/spec/scope".into(),
                value: json!("Namespaced"),
                why: "v1beta1's default; apiextensions.k8s.io/v1 requires it"
            },
            Note::Pruning { was: None },
        ]
    );
}

#[test]
fn a_refusal_says_what_to_do() {
    let cases = [
        (
            json!({"apiVersion": "policy/v1beta1", "kind": "PodSecurityPolicy", "metadata": {"name": "p"}}),
            "policy/v1beta1 PodSecurityPolicy is not served since Kubernetes 1.25: PodSecurityPolicy has no successor since Kubernetes 1.25: enforce pod security with Pod Security Admission (namespace labels) or an admission webhook, and remove this object",
        ),
        (
            json!({"apiVersion": "apps/v1beta1", "kind": "Deployment", "spec": {"rollbackTo": {}}}),
            "apps/v1beta1 Deployment is not served since Kubernetes 1.16, and kudo cannot apply it as apps/v1: /spec/rollbackTo: apps/v1 has no rollbackTo (a one-off request, not a state): remove it, and roll back with `kubectl rollout undo`",
        ),
        (
            json!({"apiVersion": "apiextensions.k8s.io/v1beta1", "kind": "CustomResourceDefinition",
                   "spec": {"version": "v1", "validation": {"openAPIV3Schema": {"properties": {
                       "a": {"oneOf": [{"type": "string"}]}, "b": {"$ref": "#/x"}, "c": {"oneOf": [{"type": "integer"}]}}}}}}),
            "apiextensions.k8s.io/v1beta1 CustomResourceDefinition is not served since Kubernetes 1.22, and kudo cannot apply it as apiextensions.k8s.io/v1: the schema of version v1 is not structural, as apiextensions.k8s.io/v1 requires: \
             /spec/versions/0/schema/openAPIV3Schema/properties/a/oneOf/0/type: Forbidden: must be empty to be structural; \
             /spec/versions/0/schema/openAPIV3Schema/properties/a/type: Required value: must not be empty for specified object fields; \
             /spec/versions/0/schema/openAPIV3Schema/properties/b/$ref: Forbidden: $ref is not supported (and 2 more); fix the schema (docs/removed-apis.md)",
        ),
        (
            json!({"apiVersion": "apiextensions.k8s.io/v1beta1", "kind": "CustomResourceDefinition",
                   "spec": {"versions": [{"name": "v1", "schema": {"openAPIV3Schema": "any"}}]}}),
            "apiextensions.k8s.io/v1beta1 CustomResourceDefinition is not served since Kubernetes 1.22, and kudo cannot apply it as apiextensions.k8s.io/v1: the schema of version v1 is not structural, as apiextensions.k8s.io/v1 requires: \
             /spec/versions/0/schema/openAPIV3Schema: Invalid value: \"any\": must be a schema object; fix the schema (docs/removed-apis.md)",
        ),
    ];
    for (obj, want) in cases {
        let u = convert(&obj).unwrap().unwrap_err();
        assert_eq!(u.to_string(), want);
    }
}

#[test]
fn every_row_cites_its_section_and_is_in_the_docs() {
    let docs = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/removed-apis.md"
    ))
    .expect("docs/removed-apis.md");
    for r in REMOVED {
        assert!(r.section.starts_with('#'), "{r:?}");
        assert!(
            r.section.ends_with(&format!("-v1{}", r.removed_in.minor))
                || r.kind == "PodSecurityPolicy",
            "{r:?}: the section names the release"
        );
        let to =
            r.to.map(|t| format!("`{t}`"))
                .unwrap_or_else(|| "none".into());
        let line = format!("| `{}` | {} | {to} | {} |", r.from, r.kind, r.removed_in);
        assert!(docs.contains(&line), "docs/removed-apis.md lacks {line}");
        assert_eq!(
            removal(r.from, r.kind),
            Some(r),
            "one row per version and kind"
        );
    }
}
