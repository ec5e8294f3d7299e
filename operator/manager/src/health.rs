//! Whether an applied object is healthy, read from the object the API server returned.
//!
//! | kind | healthy when |
//! |---|---|
//! | Deployment | the controller saw this generation; all replicas updated and available, none of the old template left |
//! | StatefulSet | the controller saw this generation; all replicas updated and ready |
//! | DaemonSet | the controller saw this generation; every scheduled pod updated and available |
//! | Job | condition `Complete`; condition `Failed` is fatal |
//! | Pod | condition `Ready`, or phase `Succeeded`; phase `Failed` is fatal |
//! | Service | type `LoadBalancer`: an ingress address; other types: once applied |
//! | CustomResourceDefinition | condition `Established` |
//! | Namespace | phase `Active` |
//! | kudo Instance (a KudoOperator child) | its manager acted on this generation and its active plan is COMPLETE; FATAL_ERROR is fatal ([`kudo_crd::plan::progress`]) |
//! | anything else | once applied |
//!
//! While a workload waits, [`with_reports`] adds what its controllers report: a Deployment's
//! `ReplicaFailure` and `Progressing=False` conditions, and the recent Warning events of the
//! object and of the objects it owns (its ReplicaSets and Pods), which `objects` reads from the
//! API server. A Pod the controller cannot create because the API server finds it invalid
//! (`FailedCreate ... is invalid`, a Deployment's `ReplicaFailure` saying the same) will not
//! become valid by waiting: the object has failed.

use kudo_crd::common::{ActivePlan, ExecStatus, InstanceStatus, PlanStatus};
use kudo_crd::plan::{Progress, Standing, progress};
use serde_json::Value;

use crate::containers::Trouble;

/// An object's health.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Health {
    /// Ready.
    Healthy,
    /// Not yet: why.
    Progressing(String),
    /// Will not become healthy (a failed Job or Pod): why.
    Failed(String),
}

/// A Deployment or StatefulSet: its status is current, and `spec.replicas` (default 1) are
/// updated and `enough` (available, or ready).
fn replicas(obj: &Value, enough: (&str, &str)) -> Health {
    stale(obj).unwrap_or_else(|| {
        let want = obj
            .pointer("/spec/replicas")
            .and_then(Value::as_i64)
            .unwrap_or(1);
        let updated = int(obj, "/status/updatedReplicas");
        match counts(
            "replicas",
            want,
            &[("updated", updated), (enough.0, int(obj, enough.1))],
        ) {
            // Pods of the old template still there (as `kubectl rollout status` reads it): the
            // old ones count as available while the new ones never become so, so a rollout
            // whose new Pods never become ready is not done.
            Health::Healthy if int(obj, "/status/replicas") > updated => {
                Health::Progressing(format!(
                    "replicas: {} old pending termination",
                    int(obj, "/status/replicas") - updated
                ))
            }
            h => h,
        }
    })
}

fn int(obj: &Value, pointer: &str) -> i64 {
    obj.pointer(pointer).and_then(Value::as_i64).unwrap_or(0)
}

fn condition<'a>(obj: &'a Value, type_: &str) -> Option<&'a Value> {
    obj.pointer("/status/conditions")?
        .as_array()?
        .iter()
        .find(|c| c.get("type").and_then(Value::as_str) == Some(type_))
}

fn condition_true(obj: &Value, type_: &str) -> bool {
    condition(obj, type_)
        .and_then(|c| c.get("status"))
        .and_then(Value::as_str)
        == Some("True")
}

fn condition_message(obj: &Value, type_: &str) -> String {
    condition(obj, type_)
        .and_then(|c| c.get("message").or_else(|| c.get("reason")))
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string()
}

/// The observed generation lags behind the spec: the controller has not seen the change.
fn stale(obj: &Value) -> Option<Health> {
    let generation = int(obj, "/metadata/generation");
    let observed = int(obj, "/status/observedGeneration");
    (observed < generation).then(|| {
        Health::Progressing(format!(
            "waiting for the controller to see generation {generation} (observed {observed})"
        ))
    })
}

fn counts(what: &str, want: i64, have: &[(&str, i64)]) -> Health {
    match have.iter().find(|(_, n)| *n < want) {
        None => Health::Healthy,
        Some((label, n)) => Health::Progressing(format!("{what}: {n} of {want} {label}")),
    }
}

/// The health of `obj` (as returned by the API server after it was applied).
pub fn health(obj: &Value) -> Health {
    let kind = obj.get("kind").and_then(Value::as_str).unwrap_or("");
    let group = obj
        .get("apiVersion")
        .and_then(Value::as_str)
        .and_then(|v| v.split_once('/').map(|(g, _)| g))
        .unwrap_or("");
    match (group, kind) {
        ("apps", "Deployment") => replicas(obj, ("available", "/status/availableReplicas")),
        ("apps", "StatefulSet") => replicas(obj, ("ready", "/status/readyReplicas")),
        ("apps", "DaemonSet") => stale(obj).unwrap_or_else(|| {
            let want = int(obj, "/status/desiredNumberScheduled");
            counts(
                "pods",
                want,
                &[
                    ("updated", int(obj, "/status/updatedNumberScheduled")),
                    ("available", int(obj, "/status/numberAvailable")),
                ],
            )
        }),
        ("batch", "Job") => {
            if condition_true(obj, "Failed") {
                Health::Failed(format!("job failed: {}", condition_message(obj, "Failed")))
            } else if condition_true(obj, "Complete") {
                Health::Healthy
            } else {
                Health::Progressing("job has not completed".into())
            }
        }
        ("", "Pod") => match obj.pointer("/status/phase").and_then(Value::as_str) {
            Some("Succeeded") => Health::Healthy,
            Some("Failed") => Health::Failed(format!(
                "pod failed: {}",
                obj.pointer("/status/message")
                    .or_else(|| obj.pointer("/status/reason"))
                    .and_then(Value::as_str)
                    .unwrap_or("")
            )),
            _ if condition_true(obj, "Ready") => Health::Healthy,
            _ => Health::Progressing("pod is not ready".into()),
        },
        ("", "Service") => {
            let lb = obj.pointer("/spec/type").and_then(Value::as_str) == Some("LoadBalancer");
            let ingress = obj
                .pointer("/status/loadBalancer/ingress")
                .and_then(Value::as_array)
                .is_some_and(|a| !a.is_empty());
            if lb && !ingress {
                Health::Progressing("load balancer has no ingress address yet".into())
            } else {
                Health::Healthy
            }
        }
        ("apiextensions.k8s.io", "CustomResourceDefinition") => {
            if condition_true(obj, "Established") {
                Health::Healthy
            } else {
                Health::Progressing("CRD is not established".into())
            }
        }
        ("kudo.dev", "Instance") => child_instance(obj),
        ("", "Namespace") => match obj.pointer("/status/phase").and_then(Value::as_str) {
            Some("Active") => Health::Healthy,
            other => Health::Progressing(format!("namespace is {}", other.unwrap_or("not active"))),
        },
        _ => Health::Healthy,
    }
}

/// A kudo Instance (a KudoOperator child): healthy once its plan for its current generation is
/// COMPLETE, failed when it is FATAL_ERROR ([`kudo_crd::plan::progress`], as `--wait` reads it).
fn child_instance(obj: &Value) -> Health {
    let not_started = || Health::Progressing("its plan has not started yet".into());
    let Some(generation) = obj.pointer("/metadata/generation").and_then(Value::as_i64) else {
        return not_started();
    };
    // Read field by field: what the decision needs, whatever else the status holds.
    let text = |pointer: &str| obj.pointer(pointer).and_then(Value::as_str);
    let active = text("/status/activePlan/name");
    let status = obj.get("status").map(|_| InstanceStatus {
        observed_generation: obj
            .pointer("/status/observedGeneration")
            .and_then(Value::as_i64),
        active_plan: active.map(|name| ActivePlan {
            name: name.into(),
            uid: text("/status/activePlan/uid").unwrap_or_default().into(),
            ..ActivePlan::default()
        }),
        plan_status: active
            .map(|plan| {
                let field = |f: &str| text(&format!("/status/planStatus/{plan}/{f}"));
                let status = PlanStatus {
                    name: plan.into(),
                    status: field("status").map(ExecStatus::from),
                    message: field("message").map(String::from),
                    ..Default::default()
                };
                (plan.to_string(), status)
            })
            .into_iter()
            .collect(),
        ..Default::default()
    });
    let Progress::Plan {
        active,
        status,
        standing,
    } = progress(status.as_ref(), generation)
    else {
        return not_started();
    };
    let plan = &active.name;
    match standing {
        Standing::Complete => Health::Healthy,
        Standing::Failed(_) => Health::Failed(format!(
            "plan `{plan}` failed: {}",
            status.message.as_deref().unwrap_or("")
        )),
        Standing::Retrying | Standing::Running => Health::Progressing(format!(
            "plan `{plan}` is {}",
            status.status.as_ref().map_or("PENDING", ExecStatus::as_str)
        )),
    }
}

/// A Warning event a controller recorded about an object or one it owns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    /// The object it is about: `Pod zk-0`.
    pub object: String,
    /// `FailedCreate`, `BackOff`...
    pub reason: String,
    /// What the controller said.
    pub message: String,
    /// How many times it was seen.
    pub count: i64,
    /// Seen after kudo-manager last changed the object (older ones only explain a wait: they
    /// may be about what the object was before).
    pub after_change: bool,
}

/// Most warnings named in a message.
const MAX_WARNINGS: usize = 3;

/// Words of an API server refusing an object as invalid, in a controller's report.
fn refused_as_invalid(reason: &str, message: &str) -> bool {
    reason == "FailedCreate" && message.contains(" is invalid")
}

/// `health` (of `obj`) with what its controllers report: its failure conditions and the
/// `warnings` of it and of what it owns (most recent first). Healthy and failed objects are
/// left as they are.
pub fn with_reports(health: Health, obj: &Value, warnings: &[Warning]) -> Health {
    let Health::Progressing(why) = health else {
        return health;
    };
    let mut said = vec![why];
    for (type_, bad) in [("ReplicaFailure", "True"), ("Progressing", "False")] {
        let Some(c) = condition(obj, type_) else {
            continue;
        };
        if c.get("status").and_then(Value::as_str) != Some(bad) {
            continue;
        }
        let reason = c.get("reason").and_then(Value::as_str).unwrap_or(type_);
        let message = c.get("message").and_then(Value::as_str).unwrap_or("");
        if refused_as_invalid(reason, message) {
            return Health::Failed(format!("{reason}: {message}"));
        }
        said.push(format!("condition {type_}={bad} ({reason}): {message}"));
    }
    if let Some(w) = warnings
        .iter()
        .find(|w| w.after_change && refused_as_invalid(&w.reason, &w.message))
    {
        return Health::Failed(format!("{} ({}): {}", w.reason, w.object, w.message));
    }
    for w in warnings.iter().take(MAX_WARNINGS) {
        let times = if w.count > 1 {
            format!(", {} times", w.count)
        } else {
            String::new()
        };
        said.push(format!(
            "warning {} ({}{times}): {}",
            w.reason, w.object, w.message
        ));
    }
    Health::Progressing(said.join("; "))
}

/// `health` with the failing containers of the object's Pods named ([`Trouble::say`], each
/// text through `mask`). Healthy and failed objects are left as they are.
pub fn with_troubles(
    health: Health,
    troubles: &[Trouble],
    mask: &dyn Fn(&str) -> String,
) -> Health {
    match health {
        Health::Progressing(why) if !troubles.is_empty() => {
            let mut said = vec![why];
            said.extend(troubles.iter().map(|t| t.say(mask)));
            Health::Progressing(said.join("; "))
        }
        other => other,
    }
}

/// The label selector of the Pods (or ReplicaSets) a workload owns (`a=b,c=d`), from its
/// `spec.selector.matchLabels`; `None` for kinds that own none.
pub fn owned_selector(obj: &Value) -> Option<String> {
    let kind = obj.get("kind").and_then(Value::as_str)?;
    if !matches!(
        kind,
        "Deployment" | "StatefulSet" | "DaemonSet" | "ReplicaSet" | "Job"
    ) {
        return None;
    }
    let labels = obj
        .pointer("/spec/selector/matchLabels")
        .and_then(Value::as_object);
    Some(
        labels
            .into_iter()
            .flatten()
            .filter_map(|(k, v)| v.as_str().map(|v| format!("{k}={v}")))
            .collect::<Vec<_>>()
            .join(","),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_deployment_is_healthy_once_every_replica_is_updated_and_available() {
        let mut d = json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"generation": 2}, "spec": {"replicas": 3},
            "status": {"observedGeneration": 1, "updatedReplicas": 3, "availableReplicas": 3}});
        assert_eq!(
            health(&d),
            Health::Progressing(
                "waiting for the controller to see generation 2 (observed 1)".into()
            )
        );
        d["status"]["observedGeneration"] = json!(2);
        d["status"]["availableReplicas"] = json!(2);
        assert_eq!(
            health(&d),
            Health::Progressing("replicas: 2 of 3 available".into())
        );
        d["status"]["availableReplicas"] = json!(3);
        assert_eq!(health(&d), Health::Healthy);
        // Mid-rollout: the new Pod never became ready, the old one is still available.
        d["spec"]["replicas"] = json!(1);
        d["status"] = json!({"observedGeneration": 2, "replicas": 2, "updatedReplicas": 1,
            "availableReplicas": 1, "unavailableReplicas": 1});
        assert_eq!(
            health(&d),
            Health::Progressing("replicas: 1 old pending termination".into())
        );
    }

    #[test]
    fn a_fresh_statefulset_without_status_is_progressing() {
        let s = json!({"apiVersion": "apps/v1", "kind": "StatefulSet",
            "metadata": {"generation": 1}, "spec": {"replicas": 2}});
        assert!(matches!(health(&s), Health::Progressing(_)));
        let ready = json!({"apiVersion": "apps/v1", "kind": "StatefulSet",
            "metadata": {"generation": 1}, "spec": {"replicas": 2},
            "status": {"observedGeneration": 1, "updatedReplicas": 2, "readyReplicas": 2}});
        assert_eq!(health(&ready), Health::Healthy);
    }

    #[test]
    fn a_daemonset_counts_its_scheduled_pods() {
        let d = json!({"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"generation": 1},
            "status": {"observedGeneration": 1, "desiredNumberScheduled": 4,
                "updatedNumberScheduled": 4, "numberAvailable": 3}});
        assert_eq!(
            health(&d),
            Health::Progressing("pods: 3 of 4 available".into())
        );
    }

    #[test]
    fn a_failed_job_is_fatal_and_a_complete_one_healthy() {
        let job = |t: &str| {
            json!({"apiVersion": "batch/v1", "kind": "Job",
            "status": {"conditions": [{"type": t, "status": "True", "message": "BackoffLimitExceeded"}]}})
        };
        assert_eq!(health(&job("Complete")), Health::Healthy);
        assert_eq!(
            health(&job("Failed")),
            Health::Failed("job failed: BackoffLimitExceeded".into())
        );
        let running = json!({"apiVersion": "batch/v1", "kind": "Job", "status": {"active": 1}});
        assert!(matches!(health(&running), Health::Progressing(_)));
    }

    #[test]
    fn pods_services_crds_and_namespaces() {
        let pod = json!({"apiVersion": "v1", "kind": "Pod",
            "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}});
        assert_eq!(health(&pod), Health::Healthy);
        let failed = json!({"apiVersion": "v1", "kind": "Pod", "status": {"phase": "Failed", "reason": "Evicted"}});
        assert_eq!(
            health(&failed),
            Health::Failed("pod failed: Evicted".into())
        );
        let lb = json!({"apiVersion": "v1", "kind": "Service", "spec": {"type": "LoadBalancer"}});
        assert!(matches!(health(&lb), Health::Progressing(_)));
        let cip = json!({"apiVersion": "v1", "kind": "Service", "spec": {"type": "ClusterIP"}});
        assert_eq!(health(&cip), Health::Healthy);
        let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "status": {"conditions": [{"type": "Established", "status": "True"}]}});
        assert_eq!(health(&crd), Health::Healthy);
        let ns =
            json!({"apiVersion": "v1", "kind": "Namespace", "status": {"phase": "Terminating"}});
        assert_eq!(
            health(&ns),
            Health::Progressing("namespace is Terminating".into())
        );
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap"});
        assert_eq!(health(&cm), Health::Healthy);
    }

    #[test]
    fn a_child_instance_is_healthy_once_its_plan_for_this_generation_completes() {
        let child = |observed: i64, status: &str| {
            json!({"apiVersion": "kudo.dev/v1beta2", "kind": "Instance",
                "metadata": {"generation": 2},
                "status": {"observedGeneration": observed, "activePlan": {"name": "deploy"},
                    "planStatus": {"deploy": {"status": status, "message": "boom"}}}})
        };
        assert_eq!(health(&child(2, "COMPLETE")), Health::Healthy);
        // acted on a later generation too (`kudo_crd::plan::acted_on`: `>=`, as `--wait`)
        assert_eq!(health(&child(3, "COMPLETE")), Health::Healthy);
        assert!(matches!(
            health(&child(1, "COMPLETE")),
            Health::Progressing(_)
        ));
        assert!(
            matches!(health(&child(2, "IN_PROGRESS")), Health::Progressing(m) if m.contains("IN_PROGRESS"))
        );
        assert!(
            matches!(health(&child(2, "FATAL_ERROR")), Health::Failed(m) if m.contains("boom"))
        );
        let fresh = json!({"apiVersion": "kudo.dev/v1beta2", "kind": "Instance"});
        assert!(matches!(health(&fresh), Health::Progressing(_)));
    }

    fn warning(object: &str, reason: &str, message: &str, count: i64) -> Warning {
        Warning {
            object: object.into(),
            reason: reason.into(),
            message: message.into(),
            count,
            after_change: true,
        }
    }

    #[test]
    fn a_workload_whose_pods_are_refused_as_invalid_has_failed() {
        // The real zookeeper operator before YAML 1.1 reading: `defaultMode: 0777` sent as 777.
        let sts = json!({"apiVersion": "apps/v1", "kind": "StatefulSet",
            "metadata": {"generation": 1}, "spec": {"replicas": 3},
            "status": {"observedGeneration": 1, "replicas": 0}});
        let refused = warning(
            "StatefulSet zk",
            "FailedCreate",
            "create Pod zk-0 in StatefulSet zk failed error: Pod \"zk-0\" is invalid: spec.volumes[1].configMap.defaultMode: Invalid value: 777: must be a number between 0 and 0777 (octal), both inclusive",
            12,
        );
        let got = with_reports(health(&sts), &sts, std::slice::from_ref(&refused));
        assert!(
            matches!(&got, Health::Failed(m) if m.starts_with("FailedCreate (StatefulSet zk): create Pod zk-0") && m.contains("Invalid value: 777")),
            "{got:?}"
        );
        // Seen before kudo last changed the StatefulSet (it may be fixed now): named, not fatal.
        let before = Warning {
            after_change: false,
            ..refused
        };
        let got = with_reports(health(&sts), &sts, &[before]);
        assert!(
            matches!(&got, Health::Progressing(m) if m.contains("warning FailedCreate (StatefulSet zk, 12 times)")),
            "{got:?}"
        );
    }

    #[test]
    fn other_warnings_and_conditions_are_named_while_the_workload_waits() {
        let d = json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"generation": 1}, "spec": {"replicas": 1},
            "status": {"observedGeneration": 1, "conditions": [
                {"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded",
                    "message": "ReplicaSet \"web-1\" has timed out progressing."},
                {"type": "Available", "status": "False"}]}});
        let warnings = [
            warning(
                "Pod web-1-a",
                "BackOff",
                "Back-off restarting failed container",
                5,
            ),
            warning("Pod web-1-a", "Unhealthy", "Readiness probe failed", 1),
            warning(
                "Pod web-1-b",
                "BackOff",
                "Back-off restarting failed container",
                2,
            ),
            warning(
                "Pod web-1-c",
                "BackOff",
                "Back-off restarting failed container",
                2,
            ),
        ];
        assert_eq!(
            with_reports(health(&d), &d, &warnings),
            Health::Progressing(
                "replicas: 0 of 1 updated; condition Progressing=False (ProgressDeadlineExceeded): ReplicaSet \"web-1\" has timed out progressing.; warning BackOff (Pod web-1-a, 5 times): Back-off restarting failed container; warning Unhealthy (Pod web-1-a): Readiness probe failed; warning BackOff (Pod web-1-b, 2 times): Back-off restarting failed container".into()
            )
        );
        // A Deployment's ReplicaFailure saying the Pods are invalid: failed.
        let mut bad = d.clone();
        bad["status"]["conditions"] = json!([{"type": "ReplicaFailure", "status": "True",
            "reason": "FailedCreate", "message": "pods \"web-1-x\" is invalid: spec.containers: Required value"}]);
        assert!(
            matches!(with_reports(health(&bad), &bad, &[]), Health::Failed(m) if m.contains("Required value"))
        );
        // Healthy stays healthy, whatever old warnings say.
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap"});
        assert_eq!(with_reports(health(&cm), &cm, &warnings), Health::Healthy);
    }

    #[test]
    fn workloads_select_what_they_own() {
        let sts = json!({"kind": "StatefulSet", "spec": {"selector": {"matchLabels": {"app": "zk", "tier": "db"}}}});
        assert_eq!(owned_selector(&sts).as_deref(), Some("app=zk,tier=db"));
        let cm = json!({"kind": "ConfigMap"});
        assert_eq!(owned_selector(&cm), None);
        let expr = json!({"kind": "Job", "spec": {"selector": {"matchExpressions": []}}});
        assert_eq!(owned_selector(&expr).as_deref(), Some(""));
    }
}
