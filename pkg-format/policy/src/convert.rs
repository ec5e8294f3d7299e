//! Conversion from the flat `kudo.dev/v1beta1` parameters to the `kudo.dev/v1beta2` schema
//! ([`to_schema`]). An Instance's stored values are typed by [`crate::typing`].
//!
//! Each parameter becomes a property with `type`, `default` (typed), `enum` (typed), `title`
//! (from `displayName`), `description`, `trigger` and `immutable`. `required` lists the required
//! parameters (KUDO's default) that have no default, except arrays and maps: KUDO stores their
//! missing default as the YAML of nil, so it never asks for them. Fields KUDO did not define are copied as they
//! are, so nothing a parameter carries is lost.

use serde_json::{Map, Value};

use crate::params::{Draft, ParamSchema, Params, V1beta1Params, V1beta1Type};
use crate::typing::typed;

/// The JSON-schema of a `params.yaml` in either format: converted for v1beta1, as it is for
/// v1beta2.
pub fn schema_of(params: &Params) -> ParamSchema {
    match params {
        Params::V1beta1(p) => to_schema(p),
        Params::V1beta2(s) => s.clone(),
    }
}

/// The v1beta2 schema of a v1beta1 params file.
///
/// A default or enum value that cannot be typed (`"abc"` for an integer) is kept as written; the
/// schema then fails `package verify` at that default, which names it, rather than losing it here.
pub fn to_schema(params: &V1beta1Params) -> ParamSchema {
    let mut properties = Map::new();
    let mut required = Vec::new();
    for p in &params.parameters {
        let ty = p.value_type();
        let mut prop = Map::new();
        prop.insert("type".into(), Value::String(ty.json_schema_type().into()));
        if let Some(t) = &p.display_name {
            prop.insert("title".into(), Value::String(t.clone()));
        }
        if let Some(d) = &p.description {
            prop.insert("description".into(), Value::String(d.clone()));
        }
        if let Some(d) = &p.default {
            prop.insert("default".into(), typed(d, ty).unwrap_or_else(|_| d.clone()));
        }
        if let Some(values) = &p.enum_values {
            let typed_values = values
                .iter()
                .map(|v| typed(v, ty).unwrap_or_else(|_| v.clone()))
                .collect();
            prop.insert("enum".into(), Value::Array(typed_values));
        }
        if let Some(t) = &p.trigger {
            prop.insert("trigger".into(), Value::String(t.clone()));
        }
        if let Some(i) = p.immutable {
            prop.insert("immutable".into(), Value::Bool(i));
        }
        for (k, v) in &p.extra {
            prop.entry(k.clone()).or_insert_with(|| v.clone());
        }
        // KUDO stores an array or map parameter's missing default as the YAML of nil, so it
        // has a default (null) and is never asked for.
        let collection = matches!(ty, V1beta1Type::Array | V1beta1Type::Map);
        if p.is_required() && p.default.is_none() && !collection {
            required.push(Value::String(p.name.clone()));
        }
        properties.insert(p.name.clone(), Value::Object(prop));
    }
    let mut root = Map::new();
    root.insert(
        "$schema".into(),
        Value::String(Draft::Draft202012.uri().into()),
    );
    root.insert("type".into(), Value::String("object".into()));
    if !required.is_empty() {
        root.insert("required".into(), Value::Array(required));
    }
    root.insert("properties".into(), Value::Object(properties));
    ParamSchema::new(Value::Object(root), Draft::Draft202012)
}

#[cfg(test)]
mod tests {
    use super::*;
    use kudo_yaml::document::Document;
    use serde_json::json;
    use std::path::Path;

    #[test]
    fn kep_33_example_converts_as_in_the_kep() {
        let doc = Document::parse(
            Path::new("params.yaml"),
            r#"apiVersion: kudo.dev/v1beta1
parameters:
  - name: NODE_COUNT
    description: Number of replicas that should be run as part of the deployment
    default: 3
    type: integer
    required: true
  - name: BACKUP_ENABLED
    type: boolean
    default: false
"#,
        )
        .unwrap();
        let schema = to_schema(&V1beta1Params::parse(&doc).unwrap());
        assert_eq!(
            schema.as_value(),
            &json!({
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "type": "object",
                "properties": {
                    "NODE_COUNT": {"type": "integer", "description":
                        "Number of replicas that should be run as part of the deployment", "default": 3},
                    "BACKUP_ENABLED": {"type": "boolean", "default": false}
                }
            })
        );
    }

    #[test]
    fn nothing_a_parameter_carries_is_lost() {
        let doc = Document::parse(
            Path::new("params.yaml"),
            "apiVersion: kudo.dev/v1beta1\nparameters:\n  - name: P\n    displayName: Port\n    trigger: t\n    immutable: true\n    enum: [\"1\", \"2\"]\n    default: \"1\"\n    type: integer\n    desription: typo\n    example: \"2\"\n  - name: S\n",
        )
        .unwrap();
        let schema = to_schema(&V1beta1Params::parse(&doc).unwrap());
        assert_eq!(
            schema.as_value()["properties"]["P"],
            json!({"type": "integer", "title": "Port", "default": 1, "enum": [1, 2],
                   "trigger": "t", "immutable": true, "desription": "typo", "example": "2"})
        );
        assert_eq!(schema.as_value()["required"], json!(["S"]));
    }
}
