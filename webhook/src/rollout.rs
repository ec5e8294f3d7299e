//! Admission of Rollouts (`/admit/rollout`: a mutating webhook on CREATE and UPDATE of
//! `rollouts.kudo.dev`), so that a Rollout applied with kubectl is held to what `kudo rollout`
//! checks:
//!
//! 1. the spec's rules ([`RolloutSpec::check`]: waves, the gate's CEL with its position, the
//!    window's cron and time zone, the selectors);
//! 2. one rollout per Instance: a Rollout whose selection meets an Instance another running
//!    Rollout of the operator claims is refused, naming that Rollout and the Instance;
//! 3. approvals: a new `spec.approval.approvedBy` is admitted only from a user who may
//!    `approve` `rollouts` in the namespace (a SubjectAccessReview: the ClusterRole
//!    kudo-rollout-approver grants it), and the requesting user's name is written there, so
//!    that it always says who approved.
//!
//! The claims and the approval are read from the cluster as the webhook; without a cluster
//! (`--no-cluster`) such a Rollout is refused, saying why.

use std::collections::BTreeSet;

use k8s_openapi::api::authorization::v1::{
    ResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec,
};
use kube::api::{Api, ListParams, PostParams};
use kube::core::DynamicObject;
use kube::core::admission::{AdmissionRequest, AdmissionResponse, Operation};
use kube::{Client, ResourceExt};
use kudo_crd::labels;
use kudo_crd::rollout::{Rollout, RolloutSpec};
use kudo_crd::v1beta2::Instance;
use serde_json::{Value, json};

use crate::admission::{deny, read_review, to_wire};

/// Handles one AdmissionReview of a Rollout: `(HTTP status, the review to send)`.
pub async fn review(body: &[u8], cluster: Option<&Client>) -> (u16, Value) {
    let read = match read_review(body) {
        Ok(read) => read,
        Err(invalid) => return (400, to_wire(invalid.into_review())),
    };
    let response = AdmissionResponse::from(&read.request);
    let reply = match decide(&read.request, read.new.as_ref(), read.old.as_ref(), cluster).await {
        Ok(None) => response,
        Ok(Some(patch)) => match response.with_patch(patch) {
            Ok(r) => r,
            Err(e) => deny(
                AdmissionResponse::from(&read.request),
                &format!("internal error: the patch cannot be written: {e}"),
            ),
        },
        Err(Refused::Invalid(why)) => deny(response, &why),
        Err(Refused::Forbidden(why)) => {
            let mut r = response.deny(&why);
            r.result = kube::core::Status::failure(&why, "Forbidden").with_code(403);
            r
        }
    };
    (200, to_wire(reply.into_review()))
}

/// Why a Rollout is refused: 400 Invalid, or 403 Forbidden (an approval from a user who may
/// not approve, as kubectl then says).
enum Refused {
    Invalid(String),
    Forbidden(String),
}

impl From<String> for Refused {
    fn from(why: String) -> Refused {
        Refused::Invalid(why)
    }
}

impl From<&str> for Refused {
    fn from(why: &str) -> Refused {
        Refused::Invalid(why.to_string())
    }
}

/// `Ok(patch)` to admit (with the approver's name written), `Err` why not.
async fn decide(
    request: &AdmissionRequest<DynamicObject>,
    new: Option<&Value>,
    old: Option<&Value>,
    cluster: Option<&Client>,
) -> Result<Option<json_patch::Patch>, Refused> {
    if request.kind.group != "kudo.dev" || request.kind.kind != "Rollout" {
        return Err(format!(
            "this endpoint admits kudo.dev Rollouts, not {}",
            request.kind.kind
        )
        .into());
    }
    if matches!(request.operation, Operation::Delete | Operation::Connect) {
        return Ok(None);
    }
    let read = |v: &Value| serde_json::from_value::<Rollout>(v.clone());
    let new =
        read(new.ok_or("the request has no object")?).map_err(|e| format!("not a Rollout: {e}"))?;
    let old = old.and_then(|v| read(v).ok());
    let problems = new.spec.check(jiff::Timestamp::now());
    if !problems.is_empty() {
        return Err(problems.join("; ").into());
    }
    let ns = request.namespace.clone().unwrap_or_default();
    let user = request.user_info.username.clone().unwrap_or_default();
    let approved = |r: &Rollout| r.spec.approval.as_ref().and_then(|a| a.approved_by.clone());
    let approving = approved(&new).is_some() && approved(&new) != old.as_ref().and_then(approved);
    let selection_changed = old.as_ref().is_none_or(|o| {
        (
            &o.spec.operator,
            &o.spec.selector,
            &o.spec.namespace_selector,
        ) != (
            &new.spec.operator,
            &new.spec.selector,
            &new.spec.namespace_selector,
        )
    });
    if !approving && !selection_changed {
        return Ok(None);
    }
    let Some(client) = cluster else {
        return Err("the webhook runs without a cluster (--no-cluster): it cannot check this Rollout's approval or claims".into());
    };
    if selection_changed {
        claims(client, &new, &ns).await?;
    }
    if !approving {
        return Ok(None);
    }
    may_approve(client, request, &ns).await?;
    if approved(&new).as_deref() == Some(user.as_str()) {
        return Ok(None);
    }
    let patch = json!([{"op": "replace", "path": "/spec/approval/approvedBy", "value": user}]);
    serde_json::from_value(patch)
        .map(Some)
        .map_err(|e| format!("internal error: {e}").into())
}

/// Whether the requesting user may `approve` `rollouts.kudo.dev` in `ns`.
async fn may_approve(
    client: &Client,
    request: &AdmissionRequest<DynamicObject>,
    ns: &str,
) -> Result<(), Refused> {
    let info = &request.user_info;
    let user = info.username.clone().unwrap_or_default();
    let review = SubjectAccessReview {
        spec: SubjectAccessReviewSpec {
            user: info.username.clone(),
            groups: info.groups.clone(),
            uid: info.uid.clone(),
            extra: info.extra.clone(),
            resource_attributes: Some(ResourceAttributes {
                group: Some("kudo.dev".into()),
                resource: Some("rollouts".into()),
                verb: Some("approve".into()),
                namespace: Some(ns.to_string()),
                name: Some(request.name.clone()).filter(|n| !n.is_empty()),
                ..ResourceAttributes::default()
            }),
            ..SubjectAccessReviewSpec::default()
        },
        ..SubjectAccessReview::default()
    };
    let api: Api<SubjectAccessReview> = Api::all(client.clone());
    let answer = api
        .create(&PostParams::default(), &review)
        .await
        .map_err(|e| format!("whether {user} may approve rollouts cannot be asked: {e}"))?;
    if answer.status.is_some_and(|s| s.allowed) {
        Ok(())
    } else {
        Err(Refused::Forbidden(format!(
            "{user} may not approve Rollouts in namespace {ns}: approving needs the verb approve on rollouts.kudo.dev there (the ClusterRole {} grants it)",
            labels::ROLLOUT_APPROVER
        )))
    }
}

/// Refuses `new` when an Instance it selects is claimed by another running Rollout of its
/// operator, naming the first such Rollout.
async fn claims(client: &Client, new: &Rollout, ns: &str) -> Result<(), String> {
    let mine = selection(client, &new.spec, ns).await?;
    if mine.is_empty() {
        return Err(format!(
            "spec.selector matches no Instance of operator {} ({} in {})",
            new.spec.operator,
            new.spec.instance_query()?,
            match new.spec.namespace_query() {
                None => format!("namespace {ns}"),
                Some(q) => format!("the namespaces of {}", q?),
            }
        ));
    }
    let all: Api<Rollout> = Api::all(client.clone());
    let mut others = all
        .list(&ListParams::default())
        .await
        .map_err(|e| {
            format!("the Rollouts that may claim the same Instances cannot be listed: {e}")
        })?
        .items;
    others.sort_by_key(|r| (r.namespace(), r.name_any()));
    for other in others {
        let same =
            other.namespace().as_deref() == Some(ns) && other.metadata.name == new.metadata.name;
        let status = other.status.clone().unwrap_or_default();
        if same || other.spec.operator != new.spec.operator || status.phase().is_final() {
            continue;
        }
        let other_ns = other.namespace().unwrap_or_default();
        let theirs: BTreeSet<(String, String)> = if status.instances.is_empty() {
            selection(client, &other.spec, &other_ns).await?
        } else {
            status.claimed()
        };
        if let Some((i_ns, i_name)) = mine.intersection(&theirs).next() {
            return Err(format!(
                "Instance {i_ns}/{i_name} is already claimed by Rollout {other_ns}/{} ({:?}): one rollout at a time moves an Instance (wait for it, or abort it)",
                other.name_any(),
                status.phase()
            ));
        }
    }
    Ok(())
}

/// The Instances (namespace, name) a spec selects now.
async fn selection(
    client: &Client,
    spec: &RolloutSpec,
    ns: &str,
) -> Result<BTreeSet<(String, String)>, String> {
    let query = spec.instance_query()?;
    let namespace_query = spec.namespace_query().transpose()?;
    kudo_cluster::select::keys::<Instance>(client, client, ns, &query, namespace_query.as_deref())
        .await
}
