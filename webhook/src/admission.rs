//! `/admit/instance/mutate` and `/admit/instance/validate`: admission of Instance create and
//! update, with the same `kudo-pkg` rules as the CLI.
//!
//! [`decide`] is the pure decision; [`handle`] is transport (read the AdmissionReview, answer
//! with the same uid). For an Instance whose OperatorVersion is known:
//! - **upgrade** (the OperatorVersion changes and the parameters were left as they were): the
//!   values are carried over by `oldName` ([`kudo_pkg::migrate`]); values that land nowhere
//!   become warnings; an `oldName` the installed version lacks denies the upgrade;
//! - **mutate**: string values of typed parameters (written through the v1beta1 endpoint) are
//!   typed, the schema's defaults are filled in, and the result is returned as an RFC 6902 patch
//!   (with the migrated values on upgrade);
//! - **validate**: the parameters validate against the schema (unknown ones refused); on update,
//!   no immutable parameter changes and the changes select one plan; on upgrade, immutable
//!   parameters keep their migrated values and new immutable ones have a value.
//!
//! A denial lists every violation (secret values masked, as everywhere). An Instance whose
//! OperatorVersion is not (yet) known is denied with a message saying so: the webhook cannot
//! check it, and letting it through would store unchecked parameters.

use std::sync::Arc;

use base64::Engine;

use kube::core::DynamicObject;
use kube::core::Status;
use kube::core::admission::{AdmissionRequest, AdmissionResponse, AdmissionReview, Operation};
use kudo_pkg::values::{Inputs, effective};
use kudo_pkg::{Diagnostic, ParamSchema, Validator, immutable, migrate, trigger};
use serde_json::{Value, json};

/// What admission needs of an OperatorVersion: its schema (compiled once) and plans.
#[derive(Debug)]
pub struct OperatorVersionInfo {
    /// `metadata.name`.
    pub name: String,
    /// `spec.version`.
    pub version: String,
    /// The parameter schema (a v1beta1 OperatorVersion's, converted).
    pub schema: ParamSchema,
    /// The compiled validator of `schema`.
    pub validator: Validator,
    /// Plan names.
    pub plans: Vec<String>,
}

impl OperatorVersionInfo {
    /// Reads a v1beta2 OperatorVersion object (as the API server stores it). `Err` when its
    /// parameters are not a usable schema.
    pub fn from_object(object: &Value) -> Result<OperatorVersionInfo, String> {
        let name = object
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .ok_or("an OperatorVersion without a name")?
            .to_string();
        let params = object
            .pointer("/spec/parameters")
            .cloned()
            .unwrap_or_else(|| json!({"type": "object"}));
        let schema = ParamSchema::from_value(params).map_err(|(_, m)| m)?;
        let validator = Validator::new(&schema).map_err(|d| {
            d.iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("; ")
        })?;
        let plans = object
            .pointer("/spec/plans")
            .and_then(Value::as_object)
            .map(|p| p.keys().cloned().collect())
            .unwrap_or_default();
        let version = object
            .pointer("/spec/version")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        Ok(OperatorVersionInfo {
            name,
            version,
            schema,
            validator,
            plans,
        })
    }
}

/// Where admission finds OperatorVersions (the webhook keeps a watch-fed cache).
pub trait OperatorVersions {
    /// `Err(why)` while the cache cannot answer (not synced, no cluster).
    fn ready(&self) -> Result<(), String>;
    /// The OperatorVersion `name` in `namespace`.
    fn get(&self, namespace: &str, name: &str) -> Option<Arc<OperatorVersionInfo>>;
}

/// Which webhook is asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// The mutating webhook: defaults and migrated values, as a patch.
    Mutate,
    /// The validating webhook.
    Validate,
}

/// The decision on one Instance.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    /// Allowed; `parameters` are the values to store (when they differ from the object's).
    Allow {
        /// The parameters after defaults (and migration), when they changed.
        parameters: Option<Value>,
        /// Things the client should hear about.
        warnings: Vec<String>,
    },
    /// Denied, with every violation.
    Deny(Vec<Diagnostic>),
    /// Cannot be checked now (the cache is not ready, the OperatorVersion is unknown).
    Unchecked(String),
}

fn ov_name(obj: &Value) -> Option<&str> {
    obj.pointer("/spec/operatorVersion/name")
        .and_then(Value::as_str)
}

fn params(obj: &Value) -> Value {
    match obj.pointer("/spec/parameters") {
        Some(v @ Value::Object(_)) => v.clone(),
        _ => json!({}),
    }
}

/// Decides on an Instance `new` (and its previous state `old` on update), in `namespace`.
pub fn decide(
    mode: Mode,
    namespace: &str,
    old: Option<&Value>,
    new: &Value,
    store: &dyn OperatorVersions,
) -> Decision {
    if let Err(why) = store.ready() {
        return Decision::Unchecked(format!(
            "kudo's admission webhook cannot check Instances yet: {why}"
        ));
    }
    let Some(name) = ov_name(new) else {
        return Decision::Unchecked(
            "the Instance names no OperatorVersion (spec.operatorVersion.name)".into(),
        );
    };
    let Some(ov) = store.get(namespace, name) else {
        return Decision::Unchecked(format!(
            "OperatorVersion {namespace}/{name} is not known: install the operator version first"
        ));
    };
    let schema = &ov.schema;
    let mut warnings = Vec::new();
    let given = params(new);
    // Values written through the v1beta1 endpoint arrive as strings: typed by the schema.
    let typed = kudo_pkg::convert::typed_by_schema(schema, &given);
    // An upgrade that left the parameters as they were: carry them over by oldName.
    let old_ov = old.and_then(|o| ov_name(o).map(|n| (o, n)));
    let upgrade = old_ov.filter(|(_, n)| *n != name);
    let mut baseline: Option<Value> = None;
    let mut migrated_explicit: Option<Value> = None;
    if let Some((old_obj, old_name)) = upgrade {
        let Some(old_info) = store.get(namespace, old_name) else {
            return Decision::Unchecked(format!(
                "the installed OperatorVersion {namespace}/{old_name} is not known: cannot upgrade from it"
            ));
        };
        let old_values = params(old_obj);
        if given == old_values {
            match migrate::migrate(&old_info.schema, &old_values, schema, &old_info.version) {
                Ok(m) => {
                    warnings.extend(m.report.warnings().iter().map(ToString::to_string));
                    baseline = Some(m.values.value().clone());
                    migrated_explicit = Some(m.explicit);
                }
                Err(d) => return Decision::Deny(d),
            }
        }
    }
    let explicit = migrated_explicit.clone().unwrap_or(typed);
    let (values, mut problems) = effective(
        schema,
        &Inputs {
            current: Some(explicit.clone()),
            ..Default::default()
        },
    );
    problems.extend(ov.validator.validate(&values));
    if mode == Mode::Validate {
        match (old, upgrade, &baseline) {
            (Some(_), Some(_), Some(migrated)) => {
                problems.extend(immutable::check_update(schema, migrated, values.value()));
                problems.extend(immutable::check_unset(schema, values.value()));
            }
            (Some(_), Some(_), None) => {
                problems.extend(immutable::check_unset(schema, values.value()));
            }
            (Some(old_obj), None, _) => {
                let (before, _) = effective(
                    schema,
                    &Inputs {
                        current: Some(params(old_obj)),
                        ..Default::default()
                    },
                );
                problems.extend(immutable::check_update(
                    schema,
                    before.value(),
                    values.value(),
                ));
                let plans: Vec<&str> = ov.plans.iter().map(String::as_str).collect();
                if let Err(d) = trigger::select(schema, &plans, before.value(), values.value()) {
                    problems.extend(d);
                }
            }
            _ => {}
        }
    }
    let (errors, rest): (Vec<_>, Vec<_>) = problems.into_iter().partition(Diagnostic::is_error);
    if !errors.is_empty() {
        return Decision::Deny(errors);
    }
    warnings.extend(rest.iter().map(ToString::to_string));
    let stored = values.into_value();
    Decision::Allow {
        parameters: (stored != given).then_some(stored),
        warnings,
    }
}

/// Handles one AdmissionReview body: `(HTTP status, the review to send)`.
pub fn handle(body: &[u8], mode: Mode, store: &dyn OperatorVersions) -> (u16, Value) {
    let (status, review) = answer(body, mode, store);
    (status, to_wire(review))
}

/// The review as JSON, with the patch as kube-apiserver reads it: base64 text (Go's `[]byte`).
/// kube-core serializes its `Vec<u8>` as an array of numbers.
fn to_wire(review: AdmissionReview<DynamicObject>) -> Value {
    let mut v = serde_json::to_value(&review).unwrap_or(Value::Null);
    if let Some(r) = v.get_mut("response").and_then(Value::as_object_mut)
        && let Some(Value::Array(bytes)) = r.get("patch")
    {
        let bytes: Vec<u8> = bytes
            .iter()
            .filter_map(Value::as_u64)
            .map(|b| b as u8)
            .collect();
        r.insert(
            "patch".into(),
            Value::String(base64::engine::general_purpose::STANDARD.encode(bytes)),
        );
    }
    v
}

fn answer(
    body: &[u8],
    mode: Mode,
    store: &dyn OperatorVersions,
) -> (u16, AdmissionReview<DynamicObject>) {
    let review: AdmissionReview<DynamicObject> = match serde_json::from_slice(body) {
        Ok(r) => r,
        Err(e) => {
            return (
                400,
                AdmissionResponse::invalid(format!("not an AdmissionReview: {e}")).into_review(),
            );
        }
    };
    let request: AdmissionRequest<DynamicObject> = match review.try_into() {
        Ok(r) => r,
        Err(e) => return (400, AdmissionResponse::invalid(e).into_review()),
    };
    if request.uid.is_empty() {
        return (
            400,
            AdmissionResponse::invalid("the AdmissionReview request has no uid").into_review(),
        );
    }
    let response = AdmissionResponse::from(&request);
    if request.kind.group != "kudo.dev" || request.kind.kind != "Instance" {
        return (
            200,
            deny(
                response,
                &format!(
                    "kudo's webhook admits kudo.dev Instances, not {}",
                    request.kind.kind
                ),
            )
            .into_review(),
        );
    }
    if matches!(request.operation, Operation::Delete | Operation::Connect) {
        return (200, response.into_review());
    }
    let Some(object) = request.object.as_ref() else {
        return (
            200,
            deny(response, "the request has no object").into_review(),
        );
    };
    let new = serde_json::to_value(object).unwrap_or(Value::Null);
    let old = request
        .old_object
        .as_ref()
        .and_then(|o| serde_json::to_value(o).ok());
    let namespace = request.namespace.clone().unwrap_or_default();
    let reply = match decide(mode, &namespace, old.as_ref(), &new, store) {
        Decision::Allow {
            parameters,
            warnings,
        } => {
            let mut r = response;
            if !warnings.is_empty() {
                r.warnings = Some(warnings);
            }
            match (mode, parameters) {
                (Mode::Mutate, Some(p)) => {
                    let mut patched = new.clone();
                    if let Some(spec) = patched.get_mut("spec").and_then(Value::as_object_mut) {
                        spec.insert("parameters".into(), p);
                    }
                    let patch = json_patch::diff(&new, &patched);
                    match r.clone().with_patch(patch) {
                        Ok(with) => with,
                        Err(e) => deny(
                            r,
                            &format!(
                                "internal error, please report it: cannot serialize the patch: {e}"
                            ),
                        ),
                    }
                }
                _ => r,
            }
        }
        Decision::Deny(diags) => {
            let list: Vec<String> = diags.iter().map(ToString::to_string).collect();
            deny(
                response,
                &format!(
                    "the Instance's parameters are refused ({} problem(s)): {}",
                    list.len(),
                    list.join("; ")
                ),
            )
        }
        Decision::Unchecked(why) => deny(response, &why),
    };
    (200, reply.into_review())
}

fn deny(response: AdmissionResponse, message: &str) -> AdmissionResponse {
    let mut r = response.deny(message);
    r.result = Status::failure(message, "Invalid").with_code(400);
    r
}
