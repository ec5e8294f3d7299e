//! `kudo.dev/v1beta2`: structured parameters. An OperatorVersion's `parameters` is one JSON-schema
//! (with `trigger`, `immutable`, `oldName`); an Instance's `parameters` is free JSON.

use std::collections::BTreeMap;

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::common::{
    Drift, InstanceStatus, ObjectRef, OperatorFields, ParametersFrom, Plan, PlanExecution,
    Remediation, Task, preserve_unknown_object,
};

/// An operator (its versions are OperatorVersions).
#[derive(CustomResource, Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(group = "kudo.dev", version = "v1beta2", kind = "Operator", namespaced)]
#[kube(shortname = "op")]
pub struct OperatorSpec {
    /// The operator's description and requirements.
    #[serde(flatten)]
    pub fields: OperatorFields,
}

/// A version of an operator: templates, tasks, plans and flat parameters.
#[derive(CustomResource, Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "kudo.dev",
    version = "v1beta2",
    kind = "OperatorVersion",
    namespaced
)]
#[kube(shortname = "ov")]
#[kube(printcolumn = r#"{"name":"Operator","type":"string","jsonPath":".spec.operator.name"}"#)]
#[kube(printcolumn = r#"{"name":"Version","type":"string","jsonPath":".spec.version"}"#)]
#[serde(rename_all = "camelCase")]
pub struct OperatorVersionSpec {
    /// The Operator this is a version of.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operator: Option<ObjectRef>,
    /// The operator version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// The version of the application it runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app_version: Option<String>,
    /// The language of the templates: `go` (Go `text/template` with sprig, as KUDO renders
    /// them) or `handlebars`. A kudo extension: when absent, an OperatorVersion made by KUDO
    /// (flat v1beta1 parameters) has Go templates and any other Handlebars.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template_engine: Option<String>,
    /// Templates by file name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub templates: BTreeMap<String, String>,
    /// Tasks.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tasks: Vec<Task>,
    /// The parameter schema (JSON-schema with `trigger`, `immutable`, `oldName`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "preserve_unknown_object")]
    pub parameters: Option<Value>,
    /// Plans by name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub plans: BTreeMap<String, Plan>,
    /// A template of the connection string the operator offers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connection_string: Option<String>,
    /// Versions it can be upgraded from.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub upgradable_from: Vec<ObjectRef>,
}

/// An installed operator: which version, with which parameter values.
#[derive(CustomResource, Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(group = "kudo.dev", version = "v1beta2", kind = "Instance", namespaced)]
#[kube(status = "InstanceStatus", shortname = "inst")]
#[kube(
    printcolumn = r#"{"name":"OperatorVersion","type":"string","jsonPath":".spec.operatorVersion.name"}"#
)]
#[kube(printcolumn = r#"{"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp"}"#)]
#[serde(rename_all = "camelCase")]
pub struct InstanceSpec {
    /// The OperatorVersion it runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operator_version: Option<ObjectRef>,
    /// Parameter values, structured as the schema says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "preserve_unknown_object")]
    pub parameters: Option<Value>,
    /// The plan to run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_execution: Option<PlanExecution>,
    /// Installed defaults of `immutable` parameters whose default a later version changed,
    /// structured as `parameters` (v1beta2 values). Written by kudo's policy on upgrade, not by
    /// users: no user values, but an immutable value never changes (docs/extensions.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "preserve_unknown_object")]
    pub immutable_defaults: Option<Value>,
    /// Secrets holding parameter values, merged in order under `parameters`: where
    /// `writeOnly` values live, never in the Instance itself (as Flux's `valuesFrom`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parameters_from: Vec<ParametersFrom>,
    /// The ServiceAccount of the Instance's namespace whose rights the manager acts with for
    /// this Instance (it impersonates it to apply, delete and read the plans' objects). None:
    /// the manager's `--default-service-account` (`kudo init` makes it
    /// [`crate::labels::DEFAULT_SERVICE_ACCOUNT`]). See `docs/tenancy.md`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_account_name: Option<String>,
    /// How many revisions (`kudo history`) are kept; default 10. Older revisions, and the
    /// parameter Secrets only they name, are deleted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history_limit: Option<u32>,
    /// What the manager does when a change's plan fails: retries, then a rollback.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remediation: Option<Remediation>,
    /// How the manager treats objects changed behind its back: `warn` (default), `correct`,
    /// `ignore`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drift: Option<Drift>,
    /// The maintenance window: a plan that a change (after the first deploy) needs starts only
    /// while it is open (`status.awaitingWindow` says when it opens). A kudo extension.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<crate::common::Window>,
}

impl InstanceSpec {
    /// The name of the OperatorVersion the Instance runs (`spec.operatorVersion.name`).
    pub fn operator_version_name(&self) -> Option<String> {
        self.operator_version.as_ref().and_then(|r| r.name.clone())
    }

    /// `spec.drift.ignore`: what drift never counts (none when absent).
    pub fn drift_ignores(&self) -> &[crate::common::DriftIgnore] {
        self.drift.as_ref().map_or(&[], |d| d.ignore.as_slice())
    }
}
