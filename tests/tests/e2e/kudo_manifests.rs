//! KUDO-written manifests, applied unchanged with `kubectl` (issue 33): an Instance in one
//! namespace running an OperatorVersion installed into `default` (`spec.operatorVersion.namespace`),
//! named the way KUDO names it while the cluster has it under kudo's older name, setting a
//! parameter the OperatorVersion does not declare (kept, ignored, warned about), and the labels
//! KUDO's enhancer put on Pod templates and claim templates.

use crate::harness::*;

/// The OperatorVersion and Operator a scenario made in `default`, deleted when it ends
/// (whatever the outcome), so `default` is left as it was found. Deleted through the
/// scenario's client and runtime (the client's connection lives on that runtime).
struct InDefault<'a> {
    s: &'a Scenario,
    objects: Vec<(ApiResource, String)>,
}

impl Drop for InDefault<'_> {
    fn drop(&mut self) {
        for (ar, name) in &self.objects {
            let api: Api<DynamicObject> =
                Api::namespaced_with(self.s.client.clone(), "default", ar);
            let _ = self
                .s
                .runtime
                .block_on(api.delete(name, &DeleteParams::default()));
        }
    }
}

/// `kubectl apply -f -` of `manifest` (YAML) with the scenario's kubeconfig: its stderr (the
/// API server's warnings) when it succeeds.
pub(crate) fn kubectl_apply(s: &Scenario, manifest: &str) -> String {
    let out = s
        .kubectl(&["apply", "-f", "-"])
        .write_stdin(manifest)
        .output()
        .expect("kubectl runs (it is on the PATH)");
    assert!(
        out.status.success(),
        "kubectl apply failed: {}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    text(&out.stderr)
}

#[test]
fn a_kudo_written_v1beta1_instance_runs_an_operator_version_of_default() {
    let Some(shared) = kudo_testkit::shared() else {
        return;
    };
    let Some(s) = Scenario::start_with_workloads("kudo-manifests", false) else {
        return;
    };
    let package = shared.join("corpus/kudo-operators-full/zookeeper");
    // The OperatorVersion as KUDO wrote it (v1beta1, flat parameters), installed into
    // `default` under the name kudo gave it before it named them as KUDO does
    // (`zookeeper-0.3.3`); the Instance names it as KUDO 0.16 does (`zookeeper-3.6.2-0.3.3`).
    let (mut op, mut ov) = kudo_objects(&package, "default");
    let suffix = std::process::id();
    let operator = "zookeeper";
    let old_name = format!("zookeeper-0.3.3-e2e{suffix}");
    let ov_version = format!("0.3.3-e2e{suffix}");
    let kudo_name = format!("zookeeper-3.6.2-{ov_version}");
    assert_eq!(
        kudo_pkg::package::operator_version_name(operator, Some("3.6.2"), &ov_version),
        kudo_name,
        "KUDO's name"
    );
    ov["metadata"]["name"] = json!(old_name);
    ov["spec"]["version"] = json!(ov_version);
    ov["spec"]["appVersion"] = json!("3.6.2");
    let ov_resource = api_resource("kudo.dev/v1beta1", "OperatorVersion", "operatorversions");
    let op_resource = api_resource("kudo.dev/v1beta1", "Operator", "operators");
    // The Operator is shared by every version: made (and deleted) only when missing.
    let operators: Api<DynamicObject> =
        Api::namespaced_with(s.client.clone(), "default", &op_resource);
    let op_exists = s
        .runtime
        .block_on(operators.get_opt(operator))
        .expect("the API server answers")
        .is_some();
    let mut cleanup = InDefault {
        s: &s,
        objects: vec![(ov_resource, old_name.clone())],
    };
    if !op_exists {
        cleanup.objects.push((op_resource, operator.to_string()));
        op["metadata"]["name"] = json!(operator);
        s.apply(&op);
    }
    s.apply(&ov);
    s.instance_service_account();

    // KUDO's own manifest: v1beta1, string values, the OperatorVersion in `default`, and a
    // parameter the OperatorVersion does not declare.
    let manifest = format!(
        "apiVersion: kudo.dev/v1beta1
kind: Instance
metadata:
  name: zk
  namespace: {ns}
  labels:
    kudo.dev/operator: zookeeper
spec:
  operatorVersion:
    name: {kudo_name}
    namespace: default
  parameters:
    NODE_COUNT: \"3\"
    NOT_A_ZOOKEEPER_PARAMETER: \"kept\"
",
        ns = s.namespace
    );
    let warnings = kubectl_apply(&s, &manifest);
    say(&format!(
        "e2e: kubectl apply of the v1beta1 manifest said: {}",
        warnings.trim()
    ));
    assert!(
        warnings.contains("Warning:")
            && warnings.contains("/NOT_A_ZOOKEEPER_PARAMETER")
            && warnings.contains(&old_name),
        "kubectl prints the admission warning naming the parameter and the OperatorVersion: {warnings}"
    );
    s.wait_plan("zk", "deploy");
    let inst = s.instance("zk");
    assert_eq!(
        inst["spec"]["parameters"]["NOT_A_ZOOKEEPER_PARAMETER"], "kept",
        "the undeclared parameter is kept as written"
    );
    assert_eq!(inst["spec"]["operatorVersion"]["namespace"], "default");
    let applied = s.applied_values("zk");
    assert!(
        applied.is_object() && applied.get("NOT_A_ZOOKEEPER_PARAMETER").is_none(),
        "the plan ignored it: {applied}"
    );

    // KUDO's labels, on the StatefulSet, its Pod template and its claim templates; the
    // selector as the template wrote it.
    let sts = s
        .get(
            &s.api("apps/v1", "StatefulSet", "statefulsets"),
            "zk-zookeeper",
        )
        .expect("the StatefulSet exists");
    let kudo_labels = [
        ("heritage", "kudo"),
        ("kudo.dev/operator", operator),
        ("kudo.dev/instance", "zk"),
    ];
    let template = &sts["spec"]["template"]["metadata"];
    for (key, value) in kudo_labels {
        assert_eq!(
            sts["metadata"]["labels"][key], value,
            "StatefulSet label {key}"
        );
        assert_eq!(template["labels"][key], value, "Pod template label {key}");
        let claims = sts["spec"]["volumeClaimTemplates"]
            .as_array()
            .expect("zookeeper has volumeClaimTemplates");
        for c in claims {
            assert_eq!(
                c["metadata"]["labels"][key], value,
                "claim template {} label {key}",
                c["metadata"]["name"]
            );
        }
    }
    assert_eq!(
        template["annotations"]["kudo.dev/operator-version"], ov_version,
        "the Pod template's operator-version annotation, as KUDO's"
    );
    assert!(
        sts["spec"]["selector"]["matchLabels"]
            .get("heritage")
            .is_none(),
        "the selector is never touched: {}",
        sts["spec"]["selector"]
    );
    // The Pods the fake kubelet runs carry them too.
    let pods =
        s.runtime
            .block_on(s.api("v1", "Pod", "pods").list(
                &kube::api::ListParams::default().labels("heritage=kudo,kudo.dev/instance=zk"),
            ))
            .expect("the API server lists Pods");
    assert_eq!(
        pods.items.len(),
        3,
        "the three Pods are labelled as KUDO labels them"
    );

    // A v1beta2 write (kudo update) keeps the parameter the Instance already holds, and a new
    // undeclared one through v1beta2 is refused.
    s.update("zk").params(&["MEMORY=512Mi"]).ok();
    assert_eq!(
        s.instance("zk")["spec"]["parameters"]["NOT_A_ZOOKEEPER_PARAMETER"],
        "kept"
    );
    let refused = refusal(s.patch_raw(
        "zk",
        json!({"spec": {"parameters": {"ANOTHER_UNKNOWN": "x"}}}),
    ));
    assert!(
        refused.contains("ANOTHER_UNKNOWN") && refused.contains("unknown-parameter"),
        "{refused}"
    );

    s.uninstall("zk").ok();
}
