//! Conversion from the flat `kudo.dev/v1beta1` parameters to the `kudo.dev/v1beta2` schema, for
//! packages ([`to_schema`]) and for an Instance's stored values ([`instance_values`]).
//!
//! KUDO kept every value as a string (`"3"`, `"false"`, `"[a, b]"`). Conversion types them by the
//! parameter's declared `type`:
//!
//! | v1beta1 `type` | string value | v1beta2 value |
//! |---|---|---|
//! | integer | `"3"` | `3` |
//! | number | `"0.5"` | `0.5` |
//! | boolean | `"true"`, `"False"`, `"1"` | `true`, `false`, `true` (Go's `ParseBool`) |
//! | array | `"[foo, bar]"` | `["foo", "bar"]` (parsed as YAML) |
//! | map | `"{foo: bar}"` | `{"foo": "bar"}` (parsed as YAML) |
//! | string (or none) | `8090` | `"8090"` (non-strings become their text) |
//!
//! Each parameter becomes a property with `type`, `default` (typed), `enum` (typed), `title`
//! (from `displayName`), `description`, `trigger` and `immutable`. `required` lists the required
//! parameters (KUDO's default) that have no default, except arrays and maps: KUDO stores their
//! missing default as the YAML of nil, so it never asks for them. Fields KUDO did not define are copied as they
//! are, so nothing a parameter carries is lost.

use serde_json::{Map, Value};

use crate::diag::{Code, Diagnostic, Origin, Shown};
use crate::params::{Draft, ParamSchema, Params, V1beta1Params, V1beta1Type};
use crate::pointer;
use crate::typing::{self, TextError};

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

/// Types one v1beta1 value (usually a string) by its parameter type, with the one rule of
/// `typing` (the rule `-p` values follow too). The error says why, in words, without
/// repeating the value (it may be a secret).
pub fn typed(value: &Value, ty: V1beta1Type) -> Result<Value, TextError> {
    typing::from_value(&[ty.json_schema_type()], value)
}

/// Values as a v1beta1 Instance stores them (`map[string]string`): strings as they are,
/// numbers and booleans as their text, arrays and objects as JSON text. The inverse of typing
/// by [`instance_values`] / [`typed_by_schema`].
pub fn to_v1beta1_strings(values: &Value) -> Value {
    let Value::Object(map) = values else {
        return values.clone();
    };
    Value::Object(
        map.iter()
            .map(|(k, v)| {
                let s = match v {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                (k.clone(), Value::String(s))
            })
            .collect(),
    )
}

/// Types the top-level string values of `values` by the types of `schema`'s properties, as
/// v1beta1 values are typed (`"3"` for an integer → 3, `"[80]"` for an array → `[80]`). A value
/// that does not fit its type, or has no typed property, stays as it is (validation names it).
pub fn typed_by_schema(schema: &ParamSchema, values: &Value) -> Value {
    let Value::Object(map) = values else {
        return values.clone();
    };
    let out = map
        .iter()
        .map(|(k, v)| {
            let typed = match (v, schema.node_at(std::slice::from_ref(k))) {
                (Value::String(s), Some(node)) => {
                    let types = schema.types(node);
                    if types.is_empty() || types.contains(&"string") {
                        v.clone()
                    } else {
                        typing::from_text(&types, s).unwrap_or_else(|_| v.clone())
                    }
                }
                _ => v.clone(),
            };
            (k.clone(), typed)
        })
        .collect();
    Value::Object(out)
}

/// Types an Instance's v1beta1 values (`map[string]string`) by the package's parameters.
/// Values of unknown parameters are kept as they are (validation reports them); a value that
/// cannot be typed is kept as its string and reported, masked when the package marks the
/// parameter secret in an `x-`/`writeOnly` extra field.
pub fn instance_values(
    params: &V1beta1Params,
    values: &Map<String, Value>,
) -> (Map<String, Value>, Vec<Diagnostic>) {
    let mut out = Map::new();
    let mut diags = Vec::new();
    for (name, value) in values {
        let converted = match params.get(name) {
            None => value.clone(),
            Some(p) => match typed(value, p.value_type()) {
                Ok(v) => v,
                Err(why) => {
                    let secret = p.extra.get("writeOnly") == Some(&Value::Bool(true));
                    diags.push(
                        Diagnostic::error(
                            Code::Conversion,
                            pointer::push("", name),
                            format!("cannot convert to {}: value {why}", p.value_type()),
                        )
                        .with_value(Shown::of(value, secret))
                        .with_origin(Origin::Instance),
                    );
                    value.clone()
                }
            },
        };
        out.insert(name.clone(), converted);
    }
    (out, diags)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::Document;
    use serde_json::json;
    use std::path::Path;

    #[test]
    fn values_are_typed_by_parameter_type() {
        use V1beta1Type::*;
        let cases: &[(Value, V1beta1Type, Result<Value, ()>)] = &[
            (json!("3"), Integer, Ok(json!(3))),
            (json!(" -1 "), Integer, Ok(json!(-1))),
            // Integers are 64-bit signed, as Kubernetes' int64 (crate::typing).
            (json!("9223372036854775807"), Integer, Ok(json!(i64::MAX))),
            (json!("18446744073709551615"), Integer, Err(())),
            (json!("3.5"), Integer, Err(())),
            (json!("0.25"), Number, Ok(json!(0.25))),
            (json!("4"), Number, Ok(json!(4))),
            (json!("false"), Boolean, Ok(json!(false))),
            (json!("True"), Boolean, Ok(json!(true))),
            (json!("yes"), Boolean, Err(())),
            (json!("[foo, bar]"), Array, Ok(json!(["foo", "bar"]))),
            (
                json!("[foo,bar,bazz]"),
                Array,
                Ok(json!(["foo", "bar", "bazz"])),
            ),
            (json!("{foo: \"bar\"}"), Map, Ok(json!({"foo": "bar"}))),
            (json!(""), Array, Ok(json!([]))),
            (json!("a: b"), Array, Err(())),
            (json!(8090), String, Ok(json!("8090"))),
            (json!("NO"), String, Ok(json!("NO"))),
        ];
        for (input, ty, want) in cases {
            let got = typed(input, *ty).map_err(|_| ());
            assert_eq!(&got, want, "{input} as {ty}");
        }
    }

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

    #[test]
    fn instance_values_are_typed_and_bad_ones_reported() {
        let doc = Document::parse(
            Path::new("params.yaml"),
            "apiVersion: kudo.dev/v1beta1\nparameters:\n  - name: NODE_COUNT\n    type: integer\n  - name: ARRAY_PARAM\n    type: array\n  - name: MAP_PARAM\n    type: map\n  - name: BACKUP_ENABLED\n    type: boolean\n",
        )
        .unwrap();
        let params = V1beta1Params::parse(&doc).unwrap();
        let values = json!({"NODE_COUNT": "3", "BACKUP_ENABLED": "false",
            "ARRAY_PARAM": "[foo,bar,bazz]", "MAP_PARAM": "{foo: \"bar\"}", "OTHER": "x"});
        let (out, diags) = instance_values(&params, values.as_object().unwrap());
        assert!(diags.is_empty(), "{diags:?}");
        assert_eq!(
            Value::Object(out),
            json!({"NODE_COUNT": 3, "BACKUP_ENABLED": false, "ARRAY_PARAM": ["foo", "bar", "bazz"],
                   "MAP_PARAM": {"foo": "bar"}, "OTHER": "x"})
        );
        let (_, diags) =
            instance_values(&params, json!({"NODE_COUNT": "many"}).as_object().unwrap());
        assert_eq!(diags.len(), 1);
        assert_eq!(diags[0].code, Code::Conversion);
        assert_eq!(diags[0].pointer, "/NODE_COUNT");
    }
}
