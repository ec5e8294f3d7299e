//! Admission of Rollouts against a mocked API server: the spec's rules, one rollout per
//! Instance, and approvals decided by a SubjectAccessReview.

use base64::Engine;
use kudo_testkit::mock_api;
use serde_json::{Value, json};

fn rollout(name: &str, approved_by: Option<&str>, waves: &[&str]) -> Value {
    json!({"apiVersion": "kudo.dev/v1beta2", "kind": "Rollout",
        "metadata": {"name": name, "namespace": "team"},
        "spec": {"operator": "kafka", "operatorVersion": {"name": "kafka-2.0.0"},
            "selector": {"matchLabels": {"tier": "gold"}}, "waves": waves,
            "approval": {"required": true, "approvedBy": approved_by}}})
}

fn review(operation: &str, new: &Value, old: Option<&Value>) -> Vec<u8> {
    json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
        "request": {"uid": "u1",
            "kind": {"group": "kudo.dev", "version": "v1beta2", "kind": "Rollout"},
            "resource": {"group": "kudo.dev", "version": "v1beta2", "resource": "rollouts"},
            "name": new["metadata"]["name"], "namespace": "team", "operation": operation,
            "userInfo": {"username": "alice", "groups": ["ops"]},
            "object": new, "oldObject": old}})
    .to_string()
    .into_bytes()
}

fn instance(name: &str) -> Value {
    json!({"apiVersion": "kudo.dev/v1beta2", "kind": "Instance",
        "metadata": {"name": name, "namespace": "team", "labels": {"kudo.dev/operator": "kafka"}},
        "spec": {"operatorVersion": {"name": "kafka-1.0.0"}}})
}

fn list(kind: &str, items: Vec<Value>) -> Value {
    json!({"apiVersion": "v1", "kind": format!("{kind}List"), "metadata": {}, "items": items})
}

/// A cluster with Instances a and b, the Rollouts `others`, and the SAR's answer `allowed`.
fn cluster(others: Vec<Value>, allowed: bool) -> (kube::Client, mock_api::Log) {
    mock_api::client("team", move |seen| match seen.path.as_str() {
        "/apis/authorization.k8s.io/v1/subjectaccessreviews" => {
            let mut sar = seen.body.clone();
            sar["status"] = json!({"allowed": allowed});
            (201, sar)
        }
        "/apis/kudo.dev/v1beta2/namespaces/team/instances" => {
            (200, list("Instance", vec![instance("a"), instance("b")]))
        }
        "/apis/kudo.dev/v1beta2/rollouts" => (200, list("Rollout", others.clone())),
        other => (404, mock_api::status(404, "NotFound", other)),
    })
}

async fn answer(body: &[u8], client: Option<&kube::Client>) -> Value {
    let (status, review) = kudo_webhook::rollout_review(body, client).await;
    assert_eq!(status, 200, "{review:#}");
    review["response"].clone()
}

#[tokio::test]
async fn a_spec_the_rules_refuse_is_refused_naming_its_field() {
    let (client, _) = cluster(vec![], true);
    let bad = rollout("r", None, &["1", "ten", "100%"]);
    let r = answer(&review("CREATE", &bad, None), Some(&client)).await;
    assert_eq!(r["allowed"], false);
    let message = r["status"]["message"].as_str().unwrap();
    assert!(message.contains("spec.waves[1] \"ten\""), "{message}");
}

#[tokio::test]
async fn a_selector_that_matches_nothing_is_refused() {
    let mut none = rollout("r", None, &["100%"]);
    none["spec"]["operator"] = json!("zookeeper");
    let (client_none, _) = mock_api::client("team", |seen| match seen.path.as_str() {
        "/apis/kudo.dev/v1beta2/namespaces/team/instances" => (200, list("Instance", vec![])),
        other => (404, mock_api::status(404, "NotFound", other)),
    });
    let r = answer(&review("CREATE", &none, None), Some(&client_none)).await;
    assert_eq!(r["allowed"], false);
    let message = r["status"]["message"].as_str().unwrap();
    assert!(
        message.contains("spec.selector matches no Instance of operator zookeeper"),
        "{message}"
    );
}

#[tokio::test]
async fn an_instance_claimed_by_a_running_rollout_is_not_claimed_twice() {
    let mut first = rollout("first", None, &["1", "100%"]);
    first["status"] = json!({"phase": "Progressing",
        "instances": [{"namespace": "team", "name": "b", "wave": 0, "state": "Upgrading"}]});
    let (client, _) = cluster(vec![first.clone()], true);
    let second = rollout("second", None, &["100%"]);
    let r = answer(&review("CREATE", &second, None), Some(&client)).await;
    assert_eq!(r["allowed"], false);
    let message = r["status"]["message"].as_str().unwrap();
    assert!(
        message.contains("Instance team/b is already claimed by Rollout team/first"),
        "{message}"
    );
    // Once the first has ended, the second may claim it.
    first["status"]["phase"] = json!("Completed");
    let (client, _) = cluster(vec![first], true);
    let r = answer(&review("CREATE", &second, None), Some(&client)).await;
    assert_eq!(r["allowed"], true, "{r:#}");
}

#[tokio::test]
async fn an_approval_is_admitted_only_from_an_approver_and_says_who() {
    let old = rollout("r", None, &["1", "100%"]);
    let new = rollout("r", Some("anyone"), &["1", "100%"]);
    let (client, log) = cluster(vec![old.clone()], false);
    let r = answer(&review("UPDATE", &new, Some(&old)), Some(&client)).await;
    assert_eq!(r["allowed"], false);
    let message = r["status"]["message"].as_str().unwrap();
    assert!(
        message.contains("alice may not approve Rollouts in namespace team")
            && message.contains("kudo-rollout-approver"),
        "{message}"
    );
    assert_eq!(r["status"]["code"], 403, "as RBAC refuses: {r:#}");
    let sar = log
        .lock()
        .unwrap()
        .iter()
        .find(|s| s.path.ends_with("subjectaccessreviews"))
        .expect("a SubjectAccessReview was asked")
        .body
        .clone();
    assert_eq!(sar["spec"]["user"], "alice");
    assert_eq!(sar["spec"]["groups"], json!(["ops"]));
    assert_eq!(
        sar["spec"]["resourceAttributes"],
        json!({"group": "kudo.dev", "resource": "rollouts", "verb": "approve",
            "namespace": "team", "name": "r"})
    );
    let (client, _) = cluster(vec![old.clone()], true);
    let r = answer(&review("UPDATE", &new, Some(&old)), Some(&client)).await;
    assert_eq!(r["allowed"], true, "{r:#}");
    let patch = base64::engine::general_purpose::STANDARD
        .decode(r["patch"].as_str().unwrap())
        .unwrap();
    let patch: Value = serde_json::from_slice(&patch).unwrap();
    assert_eq!(
        patch,
        json!([{"op": "replace", "path": "/spec/approval/approvedBy", "value": "alice"}])
    );
}

#[tokio::test]
async fn without_a_cluster_what_needs_one_is_refused_and_the_rest_admitted() {
    let old = rollout("r", None, &["1", "100%"]);
    let mut paused = old.clone();
    paused["spec"]["paused"] = json!(true);
    let r = answer(&review("UPDATE", &paused, Some(&old)), None).await;
    assert_eq!(r["allowed"], true, "{r:#}");
    let r = answer(&review("CREATE", &old, None), None).await;
    assert_eq!(r["allowed"], false);
    assert!(
        r["status"]["message"]
            .as_str()
            .unwrap()
            .contains("--no-cluster"),
        "{r:#}"
    );
}
