//! `apiextensions.k8s.io/v1beta1` CustomResourceDefinition → `apiextensions.k8s.io/v1`
//! (Kubernetes 1.22; the guide's `#customresourcedefinition-v122`).
//!
//! - `spec.version` and `spec.versions` become `spec.versions`, each with `served`, `storage`,
//!   its own `schema.openAPIV3Schema` (the top-level `spec.validation`'s when it has none),
//!   `subresources` and `additionalPrinterColumns` (the top-level ones when it has none;
//!   `JSONPath` is `jsonPath`);
//! - `spec.scope` is written out (`Namespaced`, v1beta1's default); `spec.preserveUnknownFields`
//!   is `false`, the only value v1 accepts; `spec.conversion`'s `webhookClientConfig` and
//!   `conversionReviewVersions` move under `webhook` (`[v1beta1]`, v1beta1's default, when not
//!   given); `status` is dropped;
//! - each schema is made structural where that is mechanical: a node with `properties` or
//!   `additionalProperties` (and the root) gets `type: object`, one with `items` gets
//!   `type: array`, the int-or-string `anyOf` gets `x-kubernetes-int-or-string`, a node that
//!   declares nothing and an `array` without `items` keep any value
//!   (`x-kubernetes-preserve-unknown-fields`), and a missing schema is
//!   `{type: object, x-kubernetes-preserve-unknown-fields: true}`. When the v1beta1 CRD did not
//!   prune (`preserveUnknownFields` not `false`), an `object` that declares no fields keeps
//!   them, as before. The result is checked with [`crate::structural::violations`]; a schema
//!   that still is not structural is refused, naming the violations.
//!
//! `x-kubernetes-*` extensions given are kept as they are.

use serde_json::{Map, Value, json};

use super::{Note, Refusal, default_field, rename};
use crate::structural;
use kudo_diag::pointer;

const PRESERVE: &str = "x-kubernetes-preserve-unknown-fields";
const INT_OR_STRING: &str = "x-kubernetes-int-or-string";
const WHY_STRUCTURAL: &str = "apiextensions.k8s.io/v1 requires structural schemas";
const WHY_FREE_FORM: &str = "it declares no fields, so v1beta1 accepted any; v1 would prune them";

/// Converts the CRD `obj` (its `apiVersion` already set) in place.
pub(super) fn convert(obj: &mut Map<String, Value>, notes: &mut Vec<Note>) -> Result<(), Refusal> {
    if obj.shift_remove("status").is_some() {
        notes.push(Note::Dropped {
            pointer: "/status".into(),
            why: "the API server writes a CRD's status",
        });
    }
    approval(obj, notes);
    let Some(Value::Object(spec)) = obj.get_mut("spec") else {
        return Err(Refusal::Malformed {
            pointer: "/spec".into(),
            expected: "an object",
        });
    };
    let top_schema = spec
        .get("validation")
        .and_then(|v| v.get("openAPIV3Schema"))
        .cloned();
    let top_subresources = spec.get("subresources").cloned();
    let top_columns = spec.get("additionalPrinterColumns").cloned();
    let preserve_was = spec.get("preserveUnknownFields").and_then(Value::as_bool);
    let keep_unknown = preserve_was != Some(false);

    let mut versions = match (spec.get("versions"), spec.get("version")) {
        (Some(Value::Array(vs)), _) if !vs.is_empty() => vs.clone(),
        (None | Some(Value::Null) | Some(Value::Array(_)), Some(Value::String(name))) => {
            notes.push(Note::Moved {
                from: "/spec/version".into(),
                to: "/spec/versions/0/name".into(),
            });
            vec![json!({"name": name, "served": true, "storage": true})]
        }
        _ => {
            return Err(Refusal::Malformed {
                pointer: "/spec/versions".into(),
                expected: "a list of versions (or v1beta1's spec.version)",
            });
        }
    };
    let tops = Tops {
        schema: top_schema,
        subresources: top_subresources,
        columns: top_columns,
    };
    let mut declared = false;
    for (i, version) in versions.iter_mut().enumerate() {
        declared |= convert_version(i, version, &tops, keep_unknown, notes)?;
    }
    let conversion = match spec.get("conversion") {
        Some(c) => Some(conversion(c.clone(), notes)?),
        None => None,
    };

    let had_versions = spec.contains_key("versions");
    let mut out = Map::new();
    for (key, value) in std::mem::take(spec) {
        match key.as_str() {
            "version" if !had_versions => {
                out.insert("versions".into(), Value::Array(versions.clone()));
            }
            "version" => notes.push(Note::Dropped {
                pointer: "/spec/version".into(),
                why: "apiextensions.k8s.io/v1 has only spec.versions, and spec.version named the first of them",
            }),
            "versions" => {
                out.insert(key, Value::Array(versions.clone()));
            }
            // moved into each version (noted there)
            "validation" | "subresources" | "additionalPrinterColumns" => {}
            "conversion" => {
                out.insert(key, conversion.clone().unwrap_or(value));
            }
            "preserveUnknownFields" => {
                out.insert(key, Value::Bool(false));
            }
            _ => {
                out.insert(key, value);
            }
        }
    }
    default_field(
        &mut out,
        "/spec",
        "scope",
        json!("Namespaced"),
        Some("versions"),
        "v1beta1's default; apiextensions.k8s.io/v1 requires it",
        notes,
    );
    if !out.contains_key("preserveUnknownFields") {
        out.insert("preserveUnknownFields".into(), Value::Bool(false));
    }
    if keep_unknown && declared {
        notes.push(Note::Pruning { was: preserve_was });
    }
    *spec = out;
    Ok(())
}

/// What v1beta1 declared once for all versions, which v1 wants in each.
struct Tops {
    schema: Option<Value>,
    subresources: Option<Value>,
    columns: Option<Value>,
}

/// Converts version `i` of the CRD: its schema (its own, else the top one, else one that keeps
/// every field) made structural, the top subresources and printer columns moved in, and
/// `JSONPath` renamed. True when its schema declares fields.
fn convert_version(
    i: usize,
    version: &mut Value,
    tops: &Tops,
    keep_unknown: bool,
    notes: &mut Vec<Note>,
) -> Result<bool, Refusal> {
    let at = format!("/spec/versions/{i}");
    let v = version.as_object_mut().ok_or_else(|| Refusal::Malformed {
        pointer: at.clone(),
        expected: "an object",
    })?;
    let name = v
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let schema_at = format!("{at}/schema/openAPIV3Schema");
    let own = v
        .get("schema")
        .and_then(|s| s.get("openAPIV3Schema"))
        .cloned();
    let mut schema = match (own, &tops.schema) {
        (Some(s), _) => s,
        (None, Some(s)) => {
            notes.push(Note::Moved {
                from: "/spec/validation/openAPIV3Schema".into(),
                to: schema_at.clone(),
            });
            s.clone()
        }
        (None, None) => {
            let s = json!({"type": "object", PRESERVE: true});
            notes.push(Note::Added {
                pointer: schema_at.clone(),
                value: s.clone(),
                why: "apiextensions.k8s.io/v1 requires a schema; this one keeps every field, as v1beta1 did without a schema",
            });
            s
        }
    };
    let declared = schema.get("properties").is_some();
    fix(&mut schema, &schema_at, Level::Root, keep_unknown, notes, 0);
    let violations = structural::violations(&schema);
    if !violations.is_empty() {
        return Err(Refusal::NotStructural {
            version: name,
            pointer: schema_at,
            violations,
        });
    }
    match v.get_mut("schema") {
        Some(Value::Object(s)) => {
            s.insert("openAPIV3Schema".into(), schema);
        }
        _ => {
            v.insert("schema".into(), json!({ "openAPIV3Schema": schema }));
        }
    }
    for (key, top) in [
        ("subresources", &tops.subresources),
        ("additionalPrinterColumns", &tops.columns),
    ] {
        if let (false, Some(top)) = (v.contains_key(key), top) {
            v.insert(key.into(), top.clone());
            notes.push(Note::Moved {
                from: format!("/spec/{key}"),
                to: format!("{at}/{key}"),
            });
        }
    }
    if let Some(Value::Array(columns)) = v.get_mut("additionalPrinterColumns") {
        for (j, c) in columns.iter_mut().enumerate() {
            if let Some(c) = c.as_object_mut()
                && rename(c, "JSONPath", "jsonPath")
            {
                let col = format!("{at}/additionalPrinterColumns/{j}");
                notes.push(Note::Moved {
                    from: format!("{col}/JSONPath"),
                    to: format!("{col}/jsonPath"),
                });
            }
        }
    }
    Ok(declared)
}

/// v1's `conversion`: a webhook's client configuration and review versions under `webhook`.
fn conversion(c: Value, notes: &mut Vec<Note>) -> Result<Value, Refusal> {
    const AT: &str = "/spec/conversion";
    let Value::Object(mut c) = c else {
        return Err(Refusal::Malformed {
            pointer: AT.into(),
            expected: "an object",
        });
    };
    if c.get("strategy").and_then(Value::as_str) != Some("Webhook") {
        for key in ["webhookClientConfig", "conversionReviewVersions"] {
            if c.shift_remove(key).is_some() {
                notes.push(Note::Dropped {
                    pointer: format!("{AT}/{key}"),
                    why: "only the Webhook strategy has it",
                });
            }
        }
        return Ok(Value::Object(c));
    }
    let Some(client) = c.shift_remove("webhookClientConfig") else {
        return Err(Refusal::Malformed {
            pointer: format!("{AT}/webhookClientConfig"),
            expected: "the conversion webhook's client configuration",
        });
    };
    notes.push(Note::Moved {
        from: format!("{AT}/webhookClientConfig"),
        to: format!("{AT}/webhook/clientConfig"),
    });
    let mut webhook = Map::new();
    webhook.insert("clientConfig".into(), client);
    match c.shift_remove("conversionReviewVersions") {
        Some(v) => {
            notes.push(Note::Moved {
                from: format!("{AT}/conversionReviewVersions"),
                to: format!("{AT}/webhook/conversionReviewVersions"),
            });
            webhook.insert("conversionReviewVersions".into(), v);
        }
        None => default_field(
            &mut webhook,
            &format!("{AT}/webhook"),
            "conversionReviewVersions",
            json!(["v1beta1"]),
            None,
            "v1beta1's default; apiextensions.k8s.io/v1 requires it",
            notes,
        ),
    }
    c.insert("webhook".into(), Value::Object(webhook));
    Ok(Value::Object(c))
}

/// Where a schema node is: the root, the root's `metadata` (which may only restrict `name` and
/// `generateName`), or anywhere else.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Level {
    Root,
    Metadata,
    Other,
}

/// The annotation v1 requires of a CRD in a group Kubernetes protects (`*.k8s.io`,
/// `*.kubernetes.io`): the link to its approved API review, or a value starting with
/// `unapproved` (accepted, and reported in the CRD's `KubernetesAPIApprovalPolicyConformant`
/// condition). v1beta1 did not ask for it.
const APPROVAL: &str = "api-approved.kubernetes.io";

/// Writes [`APPROVAL`] as `unapproved, ...` on a CRD of a protected group without it (spark's
/// `sparkoperator.k8s.io`): what v1beta1 let through, said openly.
fn approval(obj: &mut Map<String, Value>, notes: &mut Vec<Note>) {
    let group = obj
        .get("spec")
        .and_then(|s| s.get("group"))
        .and_then(Value::as_str)
        .unwrap_or("");
    let protected = ["k8s.io", "kubernetes.io"]
        .iter()
        .any(|p| group == *p || group.ends_with(&format!(".{p}")));
    let has = obj
        .get("metadata")
        .and_then(|m| m.get("annotations"))
        .and_then(|a| a.get(APPROVAL))
        .is_some();
    if !protected || has {
        return;
    }
    let value = json!(
        "unapproved, applied as apiextensions.k8s.io/v1 from a v1beta1 CustomResourceDefinition"
    );
    let meta = obj.entry("metadata").or_insert_with(|| json!({}));
    if let Some(m) = meta.as_object_mut() {
        let annotations = m.entry("annotations").or_insert_with(|| json!({}));
        if let Some(a) = annotations.as_object_mut() {
            a.insert(APPROVAL.into(), value.clone());
            notes.push(Note::Added {
                pointer: format!("/metadata/annotations/{}", pointer::escape(APPROVAL)),
                value,
                why: "apiextensions.k8s.io/v1 requires it of CRDs in the k8s.io and kubernetes.io groups; v1beta1 did not",
            });
        }
    }
}

fn is_true(n: &Map<String, Value>, key: &str) -> bool {
    n.get(key) == Some(&Value::Bool(true))
}

fn declares(n: &Map<String, Value>, key: &str) -> bool {
    match n.get(key) {
        None | Some(Value::Null) => false,
        Some(Value::Object(m)) => !m.is_empty(),
        Some(_) => true,
    }
}

/// Makes the structural core of `node` (at pointer `at` in the object) structural where that
/// is mechanical, noting each change; leaves the rest to [`structural::violations`].
fn fix(
    node: &mut Value,
    at: &str,
    level: Level,
    keep_unknown: bool,
    notes: &mut Vec<Note>,
    depth: usize,
) {
    let Value::Object(n) = node else { return };
    if depth > structural::MAX_DEPTH {
        return;
    }
    let int_or_string_any_of =
        n.get("anyOf") == Some(&json!([{"type": "integer"}, {"type": "string"}]));
    let junctors = ["allOf", "anyOf", "oneOf", "not"]
        .iter()
        .any(|k| n.contains_key(*k));
    let mut add = |n: &mut Map<String, Value>, key: &str, value: Value, why: &'static str| {
        default_field(n, at, key, value, None, why, notes);
    };
    if !n.contains_key("type") && !is_true(n, INT_OR_STRING) {
        if int_or_string_any_of {
            add(n, INT_OR_STRING, Value::Bool(true), WHY_STRUCTURAL);
        } else if level != Level::Other
            || n.contains_key("properties")
            || n.contains_key("additionalProperties")
        {
            add(n, "type", json!("object"), WHY_STRUCTURAL);
        } else if n.contains_key("items") {
            add(n, "type", json!("array"), WHY_STRUCTURAL);
        } else if !junctors && !is_true(n, PRESERVE) {
            add(n, PRESERVE, Value::Bool(true), WHY_FREE_FORM);
        }
    }
    let ty = n.get("type").and_then(Value::as_str).map(str::to_string);
    let ty = ty.as_deref();
    if ty == Some("array") && !n.contains_key("items") {
        add(n, "items", json!({ PRESERVE: true }), WHY_FREE_FORM);
    }
    if ty == Some("object")
        && keep_unknown
        && level != Level::Metadata
        && !declares(n, "properties")
        && !n.contains_key("additionalProperties")
        && !is_true(n, PRESERVE)
    {
        add(n, PRESERVE, Value::Bool(true), WHY_FREE_FORM);
    }
    if let Some(Value::Object(props)) = n.get_mut("properties") {
        for (key, child) in props.iter_mut() {
            let child_level = if level == Level::Root && key == "metadata" {
                Level::Metadata
            } else {
                Level::Other
            };
            let child_at = pointer::push(&format!("{at}/properties"), key);
            fix(
                child,
                &child_at,
                child_level,
                keep_unknown,
                notes,
                depth + 1,
            );
        }
    }
    for key in ["items", "additionalProperties"] {
        if let Some(child @ Value::Object(_)) = n.get_mut(key) {
            let child_at = format!("{at}/{key}");
            fix(
                child,
                &child_at,
                Level::Other,
                keep_unknown,
                notes,
                depth + 1,
            );
        }
    }
}
