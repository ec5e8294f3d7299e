//! Events on Instances and Rollouts (`events.k8s.io/v1`), with a bounded memory of those
//! published.
//!
//! The same event (object, type, reason, action and note) published again within
//! [`SERIES_WINDOW`] of its last time is counted on the first one (its `series`: count and last time), as
//! client-go's correlator and kube's `Recorder` do, so a failure retried with back-off does not
//! write a new Event each time. What the manager remembers of the events it published is an
//! LRU of at most [`REMEMBERED`] entries (client-go's size), a few hundred bytes each: kube's
//! `Recorder` keeps every event it published, whole, until a later publish finds it older than
//! 6 minutes, so 10,000 Instances deployed kept their 20,000 last events in memory (40 % of the
//! manager's heap at 2,000 Instances, measured with heaptrack: BENCHMARKS.md, issue 49). An
//! event forgotten early is published as a new Event instead of counted: a second Event, never
//! a lost one.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::sync::Mutex;

use hashlink::LruCache;
use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::api::events::v1::{Event as K8sEvent, EventSeries};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::runtime::events::EventType;
use kube::{Client, ResourceExt};

/// How long an event published again is counted on the first one: 6 minutes, as kube's
/// `Recorder`.
pub const SERIES_WINDOW: SignedDuration = SignedDuration::from_mins(6);

/// How many published events the manager remembers: client-go's `maxLruCacheEntries`.
pub const REMEMBERED: usize = 4096;

/// What identifies an event for counting: its object, type, reason, action and note (a
/// 64-bit hash, so that a remembered event costs no copy of its note).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Key {
    namespace: String,
    name: String,
    uid: String,
    type_: EventType,
    reason: String,
    action: String,
    note: u64,
}

/// An event published: its name, how many times it happened, and when last.
#[derive(Debug, Clone)]
struct Published {
    name: String,
    count: i32,
    last: Timestamp,
}

/// Publishes events as `controller` (`reportingController`), from `instance`
/// (`reportingInstance`: the Pod's name, else the controller's).
pub struct Publisher {
    client: Client,
    controller: String,
    instance: String,
    remembered: Mutex<LruCache<Key, Published>>,
}

impl Publisher {
    /// A publisher over `client`.
    pub fn new(client: Client, controller: &str, instance: Option<String>) -> Publisher {
        Publisher {
            client,
            controller: controller.to_string(),
            instance: instance.unwrap_or_else(|| controller.to_string()),
            remembered: Mutex::new(LruCache::new(REMEMBERED)),
        }
    }

    /// How many published events are remembered now.
    #[cfg(test)]
    pub fn remembered(&self) -> usize {
        self.remembered.lock().map(|m| m.len()).unwrap_or(0)
    }

    /// Publishes an event on `regarding`: a new Event, or the count of the same event last
    /// published within [`SERIES_WINDOW`] raised. An Event gone meanwhile (its TTL) is published anew.
    pub async fn publish(
        &self,
        regarding: &ObjectReference,
        type_: EventType,
        reason: &str,
        action: &str,
        note: &str,
    ) -> Result<(), kube::Error> {
        let now = Timestamp::now();
        let key = Key {
            namespace: regarding.namespace.clone().unwrap_or_default(),
            name: regarding.name.clone().unwrap_or_default(),
            uid: regarding.uid.clone().unwrap_or_default(),
            type_,
            reason: reason.to_string(),
            action: action.to_string(),
            note: {
                let mut h = DefaultHasher::new();
                note.hash(&mut h);
                h.finish()
            },
        };
        let ns = if key.namespace.is_empty() {
            "default".to_string()
        } else {
            key.namespace.clone()
        };
        let events: Api<K8sEvent> = Api::namespaced(self.client.clone(), &ns);
        let again = self.remembered.lock().ok().and_then(|mut m| {
            m.get_mut(&key)
                .filter(|p| p.last + SERIES_WINDOW > now)
                .map(|p| {
                    p.count += 1;
                    p.last = now;
                    p.clone()
                })
        });
        if let Some(p) = again {
            let series = EventSeries {
                count: p.count,
                last_observed_time: MicroTime(now),
            };
            let patch = serde_json::json!({ "series": series });
            match events
                .patch(&p.name, &PatchParams::default(), &Patch::Merge(&patch))
                .await
            {
                Ok(_) => return Ok(()),
                Err(kube::Error::Api(e)) if e.code == 404 => {}
                Err(e) => return Err(e),
            }
        }
        let event = self.event(regarding, type_, reason, action, note, now);
        let created = events.create(&PostParams::default(), &event).await?;
        if let Ok(mut m) = self.remembered.lock() {
            m.insert(
                key,
                Published {
                    name: created.name_any(),
                    count: 1,
                    last: now,
                },
            );
        }
        Ok(())
    }

    /// A new Event, named as kube's `Recorder` names it (`OBJECT.NANOS`, hexadecimal).
    fn event(
        &self,
        regarding: &ObjectReference,
        type_: EventType,
        reason: &str,
        action: &str,
        note: &str,
        now: Timestamp,
    ) -> K8sEvent {
        let object = regarding.name.as_deref().unwrap_or(&self.controller);
        K8sEvent {
            action: Some(action.to_string()),
            reason: Some(reason.to_string()),
            note: Some(note.to_string()),
            event_time: Some(MicroTime(now)),
            regarding: Some(regarding.clone()),
            metadata: ObjectMeta {
                namespace: regarding.namespace.clone(),
                name: Some(format!("{object}.{:x}", now.as_nanosecond())),
                ..ObjectMeta::default()
            },
            reporting_controller: Some(self.controller.clone()),
            reporting_instance: Some(self.instance.clone()),
            type_: Some(
                match type_ {
                    EventType::Normal => "Normal",
                    EventType::Warning => "Warning",
                }
                .to_string(),
            ),
            ..K8sEvent::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use kudo_testkit::mock_api::{self, Seen};
    use serde_json::{Value, json};

    use super::*;

    fn instance(name: &str, resource_version: &str) -> ObjectReference {
        ObjectReference {
            api_version: Some("kudo.dev/v1beta2".into()),
            kind: Some("Instance".into()),
            namespace: Some("ns".into()),
            name: Some(name.into()),
            uid: Some(format!("uid-{name}")),
            resource_version: Some(resource_version.into()),
            ..ObjectReference::default()
        }
    }

    /// The API server's answer: what was created or patched, named.
    fn answer(seen: &Seen) -> (u16, Value) {
        let mut body = seen.body.clone();
        if seen.method == "PATCH" {
            body["metadata"]["name"] = json!(seen.path.rsplit('/').next());
        }
        (if seen.method == "POST" { 201 } else { 200 }, body)
    }

    #[tokio::test]
    async fn the_same_event_again_is_counted_on_the_first_and_another_note_is_a_new_event() {
        let (client, log) = mock_api::client("ns", answer);
        let events = Publisher::new(client, "kudo-manager", Some("pod-1".into()));
        let failed = |note: &'static str, rv: &'static str| {
            let events = &events;
            async move {
                let regarding = instance("a", rv);
                events
                    .publish(
                        &regarding,
                        EventType::Warning,
                        "PlanFailed",
                        "RunPlan",
                        note,
                    )
                    .await
                    .unwrap();
            }
        };
        failed("step s failed", "1").await;
        // The Instance changed meanwhile (its status): still the same event.
        failed("step s failed", "2").await;
        failed("step s failed", "3").await;
        failed("step t failed", "3").await;
        let seen = log.lock().unwrap().clone();
        let what: Vec<(&str, &str)> = seen
            .iter()
            .map(|s| (s.method.as_str(), s.path.as_str()))
            .collect();
        let first = seen[0].body["metadata"]["name"].as_str().unwrap();
        assert!(first.starts_with("a."), "named as kube names it: {first}");
        let patched = format!("/apis/events.k8s.io/v1/namespaces/ns/events/{first}");
        assert_eq!(
            what,
            [
                ("POST", "/apis/events.k8s.io/v1/namespaces/ns/events"),
                ("PATCH", patched.as_str()),
                ("PATCH", patched.as_str()),
                ("POST", "/apis/events.k8s.io/v1/namespaces/ns/events"),
            ]
        );
        assert_eq!(seen[0].body["note"], "step s failed");
        assert_eq!(seen[0].body["reportingController"], "kudo-manager");
        assert_eq!(seen[0].body["reportingInstance"], "pod-1");
        assert_eq!(seen[0].body["type"], "Warning");
        assert_eq!(seen[1].body["series"]["count"], 2);
        assert_eq!(seen[2].body["series"]["count"], 3);
        assert_eq!(seen[3].body["note"], "step t failed");
        assert_eq!(events.remembered(), 2);
    }

    #[tokio::test]
    async fn an_event_gone_is_published_anew_and_memory_is_bounded() {
        let (client, log) = mock_api::client("ns", |seen: &Seen| {
            if seen.method == "PATCH" {
                (404, mock_api::status(404, "NotFound", "events not found"))
            } else {
                answer(seen)
            }
        });
        let events = Publisher::new(client, "kudo-manager", None);
        let regarding = instance("a", "1");
        let started = |regarding: ObjectReference| {
            let events = &events;
            async move {
                events
                    .publish(
                        &regarding,
                        EventType::Normal,
                        "PlanStarted",
                        "RunPlan",
                        "deploy",
                    )
                    .await
                    .unwrap();
            }
        };
        for _ in 0..2 {
            started(regarding.clone()).await;
        }
        let methods: Vec<String> = log
            .lock()
            .unwrap()
            .iter()
            .map(|s| s.method.clone())
            .collect();
        assert_eq!(methods, ["POST", "PATCH", "POST"]);
        assert_eq!(
            log.lock().unwrap()[0].body["reportingInstance"],
            "kudo-manager"
        );
        for k in 0..REMEMBERED + 10 {
            started(instance(&format!("i{k}"), "1")).await;
        }
        assert_eq!(events.remembered(), REMEMBERED);
    }
}
