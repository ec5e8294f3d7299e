//! The container images a plan runs, checked before its first step (issue 50): the manager's
//! own check, after the CLI's (`kudo install|upgrade|update` check what they start, but an
//! Instance may be written by anything).
//!
//! The policy is the ConfigMap [`POLICY_CONFIGMAP`] of the manager's namespace
//! (`kudo-system`), in the words of the CLI's `images:` policy
//! ([`kudo_source::image_trust::Checker::in_cluster`]); without it nothing is checked or
//! resolved. It is read (one GET) each time a plan is about to start, so a policy written
//! holds for every plan that starts after it; its checker, and the verifications it cached,
//! are kept while the ConfigMap's resourceVersion is the same.
//!
//! Before an untouched plan's first step, each image the plan renders whose policy is not
//! `none` is checked at the digest it will run: a pinned image (`kudo.dev/images`,
//! [`kudo_crd::labels::image_pins`]) at its pin, another resolved from its tag. Then:
//! - under `required`, one not verified fails the plan (FATAL_ERROR) before any object is
//!   applied, naming the image, its digest and the keys tried;
//! - under `warn`, it is said (a Warning event) and the plan runs;
//! - a verified image the annotation does not pin yet is pinned there by the manager, so that
//!   what runs is the digest that was verified, and the revision records it: the plan starts
//!   in the next reconcile, which sees the pin.
//!
//! The same rule as the CLI's ([`kudo_source::image_trust::judge`]); verifications are cached
//! in memory by digest and keys, so a fleet of Instances of one image costs one check.

use std::sync::Arc;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::ResourceExt;
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::events::EventType;
use kudo_crd::labels;
use kudo_crd::v1beta2::Instance;
use kudo_pkg::images::{self, ListOptions};
use kudo_pkg::render::Prepared;
use kudo_source::image_trust::{Checker, Wanted, judge, wanted_at};
use serde_json::{Value, json};

use crate::context::{Context, key};
use crate::step::Outcome;

/// The ConfigMap of the manager's namespace that holds its image policy.
pub const POLICY_CONFIGMAP: &str = labels::IMAGE_POLICY;

/// The image policy of the manager's namespace, read when a plan is about to start.
pub(crate) struct Policy {
    /// The manager's namespace; `None`: no policy is ever read.
    home: Option<String>,
    last: std::sync::Mutex<Last>,
}

/// The last read of the policy.
#[derive(Default)]
struct Last {
    /// Whether it was read once.
    read: bool,
    /// The ConfigMap's resourceVersion: the checker (and its cache) is kept while it holds.
    version: Option<String>,
    /// `None`: no ConfigMap; `Err`: it cannot be used, and why.
    checker: Option<Result<Arc<Checker>, String>>,
}

impl Policy {
    /// The policy of namespace `home`.
    pub(crate) fn new(home: Option<String>) -> Policy {
        Policy {
            home,
            last: std::sync::Mutex::default(),
        }
    }

    /// The checker of the current policy; `None` when there is none; why it cannot be used.
    /// An API server that does not answer leaves the last policy read in force.
    async fn current(&self, client: &kube::Client) -> Result<Option<Arc<Checker>>, String> {
        let Some(ns) = &self.home else {
            return Ok(None);
        };
        let api: Api<ConfigMap> = Api::namespaced(client.clone(), ns);
        let source = format!("ConfigMap {ns}/{POLICY_CONFIGMAP}");
        // Read before the lock: plans that start at once read at once.
        let got = api.get_opt(POLICY_CONFIGMAP).await;
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        match got {
            Ok(None) => {
                *last = Last {
                    read: true,
                    ..Last::default()
                };
            }
            Ok(Some(cm)) => {
                let version = cm.resource_version();
                if version.is_none() || version != last.version {
                    let data = cm.data.unwrap_or_default();
                    last.checker = Some(Checker::in_cluster(&source, &data).map(Arc::new));
                    last.version = version;
                }
                last.read = true;
            }
            Err(e) if last.read => {
                tracing::warn!(error = %e, "cannot read the image policy: the last one read holds");
            }
            Err(e) => return Err(format!("cannot read {source}: {e}")),
        }
        last.checker.clone().transpose()
    }
}

/// What the check of a plan's images came to.
pub(crate) enum Checked {
    /// Nothing to check, or every image under `required` verified at the digest it runs.
    Pass,
    /// Verified images were pinned in the Instance's annotation: the plan starts once the
    /// reconcile sees the pin.
    Pinned,
    /// The plan's steps end so: FATAL_ERROR (an image not verified), or ERROR, retried (the
    /// policy or a registry could not be read).
    Held(Outcome),
}

/// Checks the images plan `plan` of `inst` renders with `values` (see the module docs).
pub(crate) async fn check(
    ctx: &Context,
    inst: &Instance,
    prepared: &Prepared<'_>,
    values: &Value,
    plan: &str,
) -> Checked {
    let checker = match ctx.image_policy.current(&ctx.client).await {
        Ok(Some(c)) => c,
        Ok(None) => return Checked::Pass,
        Err(why) => {
            return Checked::Held(Outcome::Retry(format!(
                "the images of plan `{plan}` cannot be checked: {why}"
            )));
        }
    };
    let opts = ListOptions {
        instance: inst.name_any(),
        namespace: inst.namespace().unwrap_or_default(),
        all_values: false,
    };
    // A template that does not render fails its step, which says why better.
    let Ok(found) = images::list(prepared, values, &opts) else {
        return Checked::Pass;
    };
    let pins = labels::image_pins(inst.metadata.annotations.as_ref());
    let wanted: Vec<Wanted> = wanted_at(&found, &pins)
        .into_iter()
        .zip(&found.images)
        .filter(|(_, i)| i.sites.iter().any(|s| s.plan == plan))
        .map(|(w, _)| w)
        .filter(|w| checker.checks(w))
        .collect();
    if wanted.is_empty() {
        return Checked::Pass;
    }
    let checked = match checker.check_each(&wanted).await {
        Ok(c) => c,
        Err(e) => {
            return Checked::Held(Outcome::Retry(format!(
                "the images of plan `{plan}` cannot be checked: {e}"
            )));
        }
    };
    let verdict = judge(&wanted, &checked);
    for line in &verdict.warnings {
        tracing::warn!(instance = %key(inst), plan = %plan, image = %line, "image not verified (policy warn)");
        ctx.event(
            inst,
            EventType::Warning,
            "ImageNotVerified",
            format!("plan `{plan}`: {line}"),
        )
        .await;
    }
    if !verdict.refused.is_empty() {
        let why = format!(
            "plan `{plan}` runs images no trusted key signed; nothing was applied: {}",
            verdict.refused.join("; ")
        );
        tracing::warn!(instance = %key(inst), plan = %plan, %why, "images refused");
        return Checked::Held(Outcome::Fatal(why));
    }
    // Verified images not pinned yet: pinned now, beside the pins the annotation holds.
    let new: serde_json::Map<String, Value> = verdict
        .pins
        .into_iter()
        .filter(|(image, entry)| entry.get("pinned").is_some() && !pins.contains_key(image))
        .collect();
    if new.is_empty() {
        return Checked::Pass;
    }
    match pin(ctx, inst, new).await {
        Ok(()) => {
            tracing::info!(instance = %key(inst), plan = %plan, "verified images pinned");
            Checked::Pinned
        }
        Err(e) => Checked::Held(Outcome::Retry(format!(
            "cannot pin the verified images of plan `{plan}` (annotation {}): {e}",
            labels::IMAGES
        ))),
    }
}

/// Adds `new` to the Instance's `kudo.dev/images` annotation (its other entries kept).
async fn pin(
    ctx: &Context,
    inst: &Instance,
    new: serde_json::Map<String, Value>,
) -> kube::Result<()> {
    let mut all = inst
        .annotations()
        .get(labels::IMAGES)
        .and_then(|t| serde_json::from_str::<Value>(t).ok())
        .and_then(|v| match v {
            Value::Object(m) => Some(m),
            _ => None,
        })
        .unwrap_or_default();
    all.extend(new);
    let api: Api<Instance> =
        Api::namespaced(ctx.client.clone(), &inst.namespace().unwrap_or_default());
    // Only if the Instance is the one checked: a change meanwhile is checked again.
    let patch = json!({"metadata": {
        "resourceVersion": inst.resource_version(),
        "annotations": {labels::IMAGES: Value::Object(all).to_string()},
    }});
    let pp = PatchParams::default();
    api.patch(&inst.name_any(), &pp, &Patch::Merge(&patch))
        .await
        .map(|_| ())
}
