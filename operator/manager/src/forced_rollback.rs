//! A StatefulSet's forced rollback: the Pods a rollback leaves on the failed revision.
//!
//! Kubernetes does not roll a StatefulSet back by itself once an updated Pod never became
//! Ready: after the template is restored, the StatefulSet controller waits for that Pod before
//! it replaces it, and the rollout stays at `0 of N updated`. The Kubernetes documentation
//! calls the way out "forced rollback": revert the template, then delete the Pods the
//! StatefulSet had already run with the bad configuration; the controller recreates them from
//! the restored template.
//!
//! kudo does this only in a run that restores a revision (`kudo rollback`, remediation's
//! rollback, a campaign's rollback: [`kudo_crd::revision::restoring`]), and only for a Pod
//! that is **not Ready and not on the StatefulSet's update revision** (the restored template):
//! a Ready Pod, or one already on the restored template, is never touched. One Pod at a time,
//! in the StatefulSet's own order (highest ordinal first, as its rolling update goes): while a
//! deleted Pod is still terminating, nothing else is deleted. The deletion is made with the
//! Instance's identity (the tenant), which the plan's start checked for the rights it takes
//! ([`RIGHTS`]).

use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, DeleteParams, ListParams, Preconditions};
use kudo_pkg::pipe::Right;
use serde_json::Value;

use crate::health::owned_selector;
use crate::objects::{Failure, classify};
use crate::tenant::Tenant;

/// The label the StatefulSet controller puts on each Pod: the revision it was made from.
const REVISION_LABEL: &str = "controller-revision-hash";

/// The rights a forced rollback takes in the Instance's namespace: list the StatefulSet's Pods,
/// delete one.
pub const RIGHTS: &[Right] = &[
    Right {
        verb: "list",
        resource: "pods",
    },
    Right {
        verb: "delete",
        resource: "pods",
    },
];

/// What a forced rollback does now for one StatefulSet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Nothing: no Pod is left on a failed revision (or the controller has not seen the
    /// restored template yet).
    Nothing,
    /// A Pod deleted earlier is still going: the next waits for it.
    Wait(String),
    /// Delete this Pod (`name`, made from `revision`, not Ready), uid as the precondition.
    Delete {
        /// The Pod's name.
        name: String,
        /// Its uid: the deletion's precondition (a Pod recreated meanwhile is not deleted).
        uid: String,
        /// The revision it was made from.
        revision: String,
    },
}

/// The forced-rollback decision for StatefulSet `sts` (as the API server returned it) and its
/// `pods`, the Pods its selector matches. Only the Pods it controls count.
pub fn decide(sts: &Value, pods: &[Pod]) -> Decision {
    let int = |p: &str| sts.pointer(p).and_then(Value::as_i64).unwrap_or(0);
    // The controller has not seen the restored template: its update revision is the failed one.
    if int("/status/observedGeneration") < int("/metadata/generation") {
        return Decision::Nothing;
    }
    let Some(update) = sts
        .pointer("/status/updateRevision")
        .and_then(Value::as_str)
    else {
        return Decision::Nothing;
    };
    let uid = sts.pointer("/metadata/uid").and_then(Value::as_str);
    let name = sts
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let controlled: Vec<&Pod> = pods
        .iter()
        .filter(|p| {
            p.metadata.owner_references.iter().flatten().any(|r| {
                r.controller == Some(true) && Some(r.uid.as_str()) == uid && r.kind == "StatefulSet"
            })
        })
        .collect();
    if let Some(going) = controlled
        .iter()
        .find(|p| p.metadata.deletion_timestamp.is_some())
    {
        return Decision::Wait(format!(
            "forced rollback: waiting for Pod {} to go",
            going.metadata.name.as_deref().unwrap_or_default()
        ));
    }
    let mut left: Vec<(i64, &Pod, &str)> = controlled
        .into_iter()
        .filter(|p| !ready(p))
        .filter_map(|p| {
            let revision = p.metadata.labels.as_ref()?.get(REVISION_LABEL)?;
            (revision != update).then(|| (ordinal(name, p), p, revision.as_str()))
        })
        .collect();
    // The StatefulSet's own order: its rolling update goes from the highest ordinal down.
    left.sort_by_key(|(ordinal, ..)| std::cmp::Reverse(*ordinal));
    match left.first() {
        Some((_, pod, revision)) => Decision::Delete {
            name: pod.metadata.name.clone().unwrap_or_default(),
            uid: pod.metadata.uid.clone().unwrap_or_default(),
            revision: revision.to_string(),
        },
        None => Decision::Nothing,
    }
}

/// The Pod's ordinal in StatefulSet `sts`: `db-2` is 2 (an unexpected name sorts last).
fn ordinal(sts: &str, pod: &Pod) -> i64 {
    pod.metadata
        .name
        .as_deref()
        .and_then(|n| n.strip_prefix(sts))
        .and_then(|n| n.strip_prefix('-'))
        .and_then(|n| n.parse().ok())
        .unwrap_or(-1)
}

/// The Pod's condition `Ready` is True.
fn ready(pod: &Pod) -> bool {
    pod.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|c| c.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
}

/// One round of StatefulSet `sts`'s forced rollback, with the tenant's identity: reads its
/// Pods and deletes the one [`decide`] names. What it did, for the step's message (`None`:
/// nothing to do). A refusal by RBAC is a [`Failure::Forbidden`] naming the Pod.
pub async fn round(tenant: &Tenant, sts: &Value) -> Result<Option<String>, Failure> {
    let (Some(ns), Some(selector)) = (
        sts.pointer("/metadata/namespace").and_then(Value::as_str),
        owned_selector(sts),
    ) else {
        return Ok(None);
    };
    let api: Api<Pod> = Api::namespaced(tenant.client.clone(), ns);
    let pods = api
        .list(&ListParams::default().labels(&selector))
        .await
        .map_err(|e| classify(&e, tenant, "list", "Pods"))?;
    match decide(sts, &pods.items) {
        Decision::Nothing => Ok(None),
        Decision::Wait(why) => Ok(Some(why)),
        Decision::Delete {
            name,
            uid,
            revision,
        } => {
            let params = DeleteParams {
                preconditions: Some(Preconditions {
                    uid: Some(uid),
                    resource_version: None,
                }),
                ..DeleteParams::default()
            };
            match api.delete(&name, &params).await {
                Ok(_) => {}
                // Gone or recreated meanwhile: the next round looks again.
                Err(kube::Error::Api(s)) if s.code == 404 || s.code == 409 => {}
                Err(e) => return Err(classify(&e, tenant, "delete", &format!("Pod {name}"))),
            }
            tracing::info!(pod = %name, namespace = %ns, %revision, "forced rollback: deleted a Pod left on the failed revision");
            Ok(Some(format!(
                "forced rollback: deleted Pod {name} (revision {revision}, not Ready) for the restored template"
            )))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sts(generation: i64, observed: i64, update: &str) -> Value {
        json!({"apiVersion": "apps/v1", "kind": "StatefulSet",
            "metadata": {"name": "db", "namespace": "t", "uid": "sts-uid", "generation": generation},
            "spec": {"selector": {"matchLabels": {"app": "db"}}},
            "status": {"observedGeneration": observed, "updateRevision": update}})
    }

    /// Pod `db-N` of revision `rev`, Ready or not, going or not, controlled by `owner`.
    fn pod(n: u32, rev: &str, ready: bool, going: bool, owner: &str) -> Pod {
        serde_json::from_value(json!({
            "metadata": {"name": format!("db-{n}"), "uid": format!("pod-{n}"),
                "labels": {"app": "db", REVISION_LABEL: rev},
                "deletionTimestamp": going.then_some("2026-11-28T00:00:00Z"),
                "ownerReferences": [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "db",
                    "uid": owner, "controller": true}]},
            "status": {"conditions": [{"type": "Ready", "status": if ready {"True"} else {"False"}}]}
        }))
        .expect("a Pod")
    }

    fn delete(n: u32, rev: &str) -> Decision {
        Decision::Delete {
            name: format!("db-{n}"),
            uid: format!("pod-{n}"),
            revision: rev.into(),
        }
    }

    #[test]
    fn only_pods_left_on_a_failed_revision_and_not_ready_are_deleted_highest_first() {
        let good = "db-good";
        let bad = "db-bad";
        let cases: Vec<(&str, Value, Vec<Pod>, Decision)> = vec![
            (
                "the broken Pod of the failed revision",
                sts(3, 3, good),
                vec![
                    pod(0, good, true, false, "sts-uid"),
                    pod(1, bad, false, false, "sts-uid"),
                ],
                delete(1, bad),
            ),
            (
                "two broken: the highest ordinal first",
                sts(3, 3, good),
                vec![
                    pod(2, bad, false, false, "sts-uid"),
                    pod(10, bad, false, false, "sts-uid"),
                    pod(0, good, true, false, "sts-uid"),
                ],
                delete(10, bad),
            ),
            (
                "one at a time: a deleted Pod still going",
                sts(3, 3, good),
                vec![
                    pod(2, bad, false, true, "sts-uid"),
                    pod(1, bad, false, false, "sts-uid"),
                ],
                Decision::Wait("forced rollback: waiting for Pod db-2 to go".into()),
            ),
            (
                "a Ready Pod of another revision is left alone",
                sts(3, 3, good),
                vec![pod(1, bad, true, false, "sts-uid")],
                Decision::Nothing,
            ),
            (
                "a Pod of the restored revision, not Ready yet, is left alone",
                sts(3, 3, good),
                vec![pod(1, good, false, false, "sts-uid")],
                Decision::Nothing,
            ),
            (
                "the controller has not seen the restored template",
                sts(4, 3, bad),
                vec![pod(1, bad, false, false, "sts-uid")],
                Decision::Nothing,
            ),
            (
                "a Pod another StatefulSet controls",
                sts(3, 3, good),
                vec![pod(1, bad, false, false, "other-uid")],
                Decision::Nothing,
            ),
        ];
        for (case, sts, pods, want) in cases {
            assert_eq!(decide(&sts, &pods), want, "case: {case}");
        }
    }
}
