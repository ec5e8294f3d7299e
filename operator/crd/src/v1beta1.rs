//! `kudo.dev/v1beta1`: KUDO's shapes. Parameters are a flat list with `value-type`, and an
//! Instance's values are strings.

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
#[kube(group = "kudo.dev", version = "v1beta1", kind = "Operator", namespaced)]
#[kube(shortname = "op")]
pub struct OperatorSpec {
    /// The operator's description and requirements.
    #[serde(flatten)]
    pub fields: OperatorFields,
}

/// One flat parameter, as KUDO stored it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Parameter {
    /// Name, used in templates as `Params.NAME`.
    pub name: String,
    /// `displayName`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_name: Option<String>,
    /// Description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Required (KUDO: true when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<bool>,
    /// The default, as a string.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
    /// The plan a change runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trigger: Option<String>,
    /// string, integer, number, boolean, array, map.
    #[serde(
        rename = "value-type",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub value_type: Option<String>,
    /// Never changes after install.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub immutable: Option<bool>,
    /// Allowed values, as strings.
    #[serde(rename = "enum", default, skip_serializing_if = "Option::is_none")]
    pub enum_values: Option<Vec<String>>,
}

/// A version of an operator: templates, tasks, plans and flat parameters.
#[derive(CustomResource, Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "kudo.dev",
    version = "v1beta1",
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
    /// The flat parameters.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parameters: Vec<Parameter>,
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
#[kube(group = "kudo.dev", version = "v1beta1", kind = "Instance", namespaced)]
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
    /// Parameter values, as strings.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub parameters: BTreeMap<String, String>,
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
    /// A kudo extension (KUDO had no such field), the same as v1beta2's: the ServiceAccount
    /// whose rights the manager acts with. Served in both versions, so conversion copies it.
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
