//! Conversion between `kudo.dev/v1beta1` and `kudo.dev/v1beta2` objects: what the conversion
//! webhook runs for every read of a stored object in the other version.
//!
//! The API server fails every GET and LIST of an object whose conversion fails, so conversion is
//! **total** on well-formed objects and **lossless**: what one direction cannot express is kept
//! in an annotation, and the way back restores it exactly when the object was not changed in
//! between (round trip = identity). Only `apiVersion`, `spec` and the kudo annotations change;
//! the rest of `metadata` and `status` are copied as they are.
//!
//! - **OperatorVersion** v1beta1 → v1beta2: the flat parameter list becomes a JSON-schema with
//!   `kudo_policy::convert::to_schema` (the same conversion as `kudo package convert`); the list is
//!   kept in [`V1BETA1_PARAMETERS`]. v1beta2 → v1beta1: the top-level properties become flat
//!   parameters (nested ones cannot be flat); the schema is kept in [`V1BETA2_PARAMETERS`].
//! - **Instance** v1beta1 → v1beta2: string values are typed by the parameter types of the
//!   Instance's OperatorVersion when the [`TypeSource`] knows them (the webhook keeps a
//!   watch-fed cache), else they stay strings (typed later, when the manager reconciles). The
//!   strings are kept in [`V1BETA1_PARAMETERS`]. v1beta2 → v1beta1: values become strings
//!   (numbers and booleans as text, arrays and objects as JSON); the values are kept in
//!   [`V1BETA2_PARAMETERS`].
//! - **Operator** has the same shape in both versions.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use kudo_policy::ParamSchema;
use kudo_policy::params::V1beta1Params;
use kudo_yaml::document::Document;

/// Group of the kinds converted here.
pub const GROUP: &str = "kudo.dev";
/// Annotation with the object's v1beta1 parameters, kept while it is read as v1beta2.
pub const V1BETA1_PARAMETERS: &str = "kudo.dev/v1beta1-parameters";
/// Annotation with the object's v1beta2 parameters, kept while it is read as v1beta1.
pub const V1BETA2_PARAMETERS: &str = "kudo.dev/v1beta2-parameters";

/// Where the conversion finds the parameter schema of an Instance's OperatorVersion.
pub trait TypeSource {
    /// The schema of OperatorVersion `name` in `namespace`, if known.
    fn schema(&self, namespace: &str, name: &str) -> Option<ParamSchema>;
}

/// A [`TypeSource`] that knows nothing: Instance values stay as they are.
pub struct NoTypes;

impl TypeSource for NoTypes {
    fn schema(&self, _: &str, _: &str) -> Option<ParamSchema> {
        None
    }
}

/// Why an object cannot be converted (only for objects that are not ours or not well-formed).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// Not an Operator, OperatorVersion or Instance of `kudo.dev`.
    #[error(
        "cannot convert {kind} {api_version}: not a kudo.dev Operator, OperatorVersion or Instance"
    )]
    NotOurs {
        /// `kind` of the object.
        kind: String,
        /// `apiVersion` of the object.
        api_version: String,
    },
    /// The desired version is not one of ours.
    #[error("cannot convert to {0}: kudo.dev serves v1beta1 and v1beta2")]
    UnknownVersion(String),
    /// The object is not a JSON object with `apiVersion` and `kind`.
    #[error("not a Kubernetes object: {0}")]
    Malformed(String),
}

/// Converts one object to `desired` (`kudo.dev/v1beta1` or `kudo.dev/v1beta2`).
pub fn convert(object: &Value, desired: &str, types: &dyn TypeSource) -> Result<Value, Error> {
    convert_owned(object.clone(), desired, types)
}

/// [`convert`], taking the object (no copy of the parts that do not change).
pub fn convert_owned(object: Value, desired: &str, types: &dyn TypeSource) -> Result<Value, Error> {
    let Value::Object(mut out) = object else {
        return Err(Error::Malformed("not a JSON object".into()));
    };
    let parts = Parts::of(&out);
    let changes = rewrite(&parts, desired, types)?;
    out.insert("apiVersion".into(), Value::String(desired.to_string()));
    let Some(changes) = changes else {
        return Ok(Value::Object(out));
    };
    for (key, value) in changes.annotations {
        set_annotation(&mut out, key, value);
    }
    if let Some(spec) = out.get_mut("spec").and_then(Value::as_object_mut) {
        match changes.parameters {
            Some(p) => {
                spec.insert("parameters".into(), p);
            }
            None => {
                spec.remove("parameters");
            }
        }
    }
    Ok(Value::Object(out))
}

/// What conversion reads of an object: the few fields it depends on. Everything else is
/// copied as it is, which lets a caller holding the object as raw JSON (the webhook) parse only
/// these.
#[derive(Debug, Clone, Copy, Default)]
pub struct Parts<'a> {
    /// `apiVersion`.
    pub api_version: Option<&'a str>,
    /// `kind`.
    pub kind: Option<&'a str>,
    /// `metadata.namespace` (empty when cluster-scoped or absent).
    pub namespace: &'a str,
    /// `spec.operatorVersion.name` (Instances).
    pub operator_version: Option<&'a str>,
    /// `spec.operatorVersion.namespace` (Instances): where the OperatorVersion is, when not
    /// in the Instance's namespace ([`crate::reference::namespace`]).
    pub operator_version_namespace: Option<&'a str>,
    /// `spec.parameters`.
    pub parameters: Option<&'a Value>,
    /// The text of the [`V1BETA1_PARAMETERS`] annotation.
    pub v1beta1_parameters: Option<&'a str>,
    /// The text of the [`V1BETA2_PARAMETERS`] annotation.
    pub v1beta2_parameters: Option<&'a str>,
}

impl<'a> Parts<'a> {
    /// The parts of `object` (a JSON object; anything else has none).
    pub fn of(object: &'a Map<String, Value>) -> Parts<'a> {
        let text = |p: &str| object.get(p).and_then(Value::as_str);
        let metadata = object.get("metadata");
        let meta = |p: &str| metadata.and_then(|m| m.get(p)).and_then(Value::as_str);
        let kept = |key: &str| {
            metadata
                .and_then(|m| m.get("annotations"))
                .and_then(|a| a.get(key))
                .and_then(Value::as_str)
        };
        let spec = object.get("spec");
        Parts {
            api_version: text("apiVersion"),
            kind: text("kind"),
            namespace: meta("namespace").unwrap_or_default(),
            operator_version: spec
                .and_then(|s| s.pointer("/operatorVersion/name"))
                .and_then(Value::as_str),
            operator_version_namespace: spec
                .and_then(|s| s.pointer("/operatorVersion/namespace"))
                .and_then(Value::as_str),
            parameters: spec.and_then(|s| s.get("parameters")),
            v1beta1_parameters: kept(V1BETA1_PARAMETERS),
            v1beta2_parameters: kept(V1BETA2_PARAMETERS),
        }
    }
}

/// What conversion changes besides `apiVersion` (which always becomes the desired one).
#[derive(Debug, Clone, PartialEq)]
pub struct Rewrite {
    /// The new `spec.parameters` (`None`: removed). Only applied when the object has a `spec`.
    pub parameters: Option<Value>,
    /// Annotations to set (`Some(text)`) or remove (`None`), each key at most once. An `annotations`
    /// map a removal leaves empty is removed from `metadata`; a set creates `metadata` and
    /// `annotations` when missing.
    pub annotations: Vec<(&'static str, Option<String>)>,
}

/// What converting the object described by `parts` to `desired` changes: `None` when only
/// `apiVersion` does (same version, or an Operator). The one place the conversion rules live;
/// [`convert_owned`] applies them to a `Value`, the webhook to raw JSON.
pub fn rewrite(
    parts: &Parts<'_>,
    desired: &str,
    types: &dyn TypeSource,
) -> Result<Option<Rewrite>, Error> {
    let api_version = parts
        .api_version
        .ok_or_else(|| Error::Malformed("no apiVersion".into()))?;
    let kind = parts
        .kind
        .ok_or_else(|| Error::Malformed("no kind".into()))?;
    let version = |av: &str| match av.split_once('/') {
        Some((GROUP, v @ ("v1beta1" | "v1beta2"))) => Some(v.to_string()),
        _ => None,
    };
    let to = version(desired).ok_or_else(|| Error::UnknownVersion(desired.to_string()))?;
    let not_ours = || Error::NotOurs {
        kind: kind.to_string(),
        api_version: api_version.to_string(),
    };
    let from = version(api_version).ok_or_else(not_ours)?;
    if !matches!(kind, "Operator" | "OperatorVersion" | "Instance") {
        return Err(not_ours());
    }
    if from == to || kind == "Operator" {
        return Ok(None);
    }
    let up = to == "v1beta2";
    let current = parts.parameters;
    let (kept_as, restore_from, kept) = if up {
        (
            V1BETA1_PARAMETERS,
            V1BETA2_PARAMETERS,
            parts.v1beta2_parameters,
        )
    } else {
        (
            V1BETA2_PARAMETERS,
            V1BETA1_PARAMETERS,
            parts.v1beta1_parameters,
        )
    };
    let kept: Option<Value> = kept.and_then(|text| serde_json::from_str(text).ok());
    let schema = match kind {
        "Instance" => parts.operator_version.and_then(|name| {
            let ns = crate::reference::namespace(parts.operator_version_namespace, parts.namespace);
            types.schema(ns, name)
        }),
        _ => None,
    };
    // The way back: when the object still holds what the kept value converts to, the kept
    // value is the original, restored exactly, and nothing more is kept.
    let restored = kept.filter(|k| {
        let again = match (kind, up) {
            ("OperatorVersion", true) => ov_down(k),
            ("OperatorVersion", false) => ov_up(k),
            (_, true) => instance_down(k),
            (_, false) => instance_up(k, schema.as_ref()),
        };
        same(current, Some(&again), kind, up)
    });
    if let Some(original) = restored {
        return Ok(Some(Rewrite {
            parameters: Some(original),
            annotations: vec![(restore_from, None)],
        }));
    }
    // Converted: the parameters as they were are kept for the way back.
    let converted = current.map(|c| match (kind, up) {
        ("OperatorVersion", true) => ov_up(c),
        ("OperatorVersion", false) => ov_down(c),
        (_, true) => instance_up(c, schema.as_ref()),
        (_, false) => instance_down(c),
    });
    Ok(Some(Rewrite {
        parameters: converted,
        annotations: vec![
            (restore_from, None),
            (kept_as, current.map(Value::to_string)),
        ],
    }))
}

/// Kubernetes' limit on the annotations of one object, keys and values together, in bytes
/// (`TotalAnnotationSizeLimitB`): the API server refuses to store, and to return from a
/// conversion, an object with more.
pub const MAX_ANNOTATIONS_BYTES: usize = 256 * 1024;

/// An object that cannot be read in some version the CRD serves: converted to it, its
/// annotations would pass [`MAX_ANNOTATIONS_BYTES`], so the API server would fail the
/// conversion, and with it every GET, LIST and watch of that version that includes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unservable {
    /// The object's resource (`instances`, `operatorversions`).
    pub resource: String,
    /// The version (`kudo.dev/v1beta1`).
    pub version: &'static str,
    /// Bytes of annotations the object would hold in it.
    pub bytes: usize,
    /// Its largest annotations there, largest first (at most three), with their bytes.
    pub largest: Vec<(String, usize)>,
}

impl std::fmt::Display for Unservable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let largest: Vec<String> = self
            .largest
            .iter()
            .map(|(k, n)| format!("{k} ({n} bytes)"))
            .collect();
        write!(
            f,
            "read as {} this object would hold {} bytes of annotations, more than the {MAX_ANNOTATIONS_BYTES} Kubernetes allows, so every read of {} (kubectl get {}.{}.{GROUP} -A) would fail; its largest annotations there: {}",
            self.version,
            self.bytes,
            self.version,
            self.resource,
            self.version.trim_start_matches("kudo.dev/"),
            largest.join(", ")
        )
    }
}

/// Bytes of `annotations` as Kubernetes counts them: each key and value.
fn annotation_bytes<'a>(annotations: impl Iterator<Item = (&'a str, &'a str)>) -> usize {
    annotations.map(|(k, v)| k.len() + v.len()).sum()
}

/// Checks that `object` (a kudo.dev object in either version) can be read in every version
/// the CRDs serve: its annotations once converted ([`rewrite`], the conversion the webhook
/// runs) fit in [`MAX_ANNOTATIONS_BYTES`]. What the API server checks itself (the object as
/// written) is not repeated. An object conversion refuses passes: its own error is reported
/// where it is converted.
pub fn servable(object: &Value, types: &dyn TypeSource) -> Result<(), Unservable> {
    let Value::Object(map) = object else {
        return Ok(());
    };
    let parts = Parts::of(map);
    let own = map
        .get("metadata")
        .and_then(|m| m.get("annotations"))
        .and_then(Value::as_object);
    for version in ["kudo.dev/v1beta1", "kudo.dev/v1beta2"] {
        let Ok(Some(changes)) = rewrite(&parts, version, types) else {
            continue;
        };
        let mut annotations: BTreeMap<&str, &str> = own
            .into_iter()
            .flatten()
            .filter_map(|(k, v)| Some((k.as_str(), v.as_str()?)))
            .collect();
        for (key, value) in &changes.annotations {
            match value {
                Some(v) => annotations.insert(key, v.as_str()),
                None => annotations.remove(key),
            };
        }
        let bytes = annotation_bytes(annotations.iter().map(|(k, v)| (*k, *v)));
        if bytes > MAX_ANNOTATIONS_BYTES {
            let mut largest: Vec<(String, usize)> = annotations
                .iter()
                .map(|(k, v)| (k.to_string(), k.len() + v.len()))
                .collect();
            largest.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
            largest.truncate(3);
            return Err(Unservable {
                resource: format!("{}s", parts.kind.unwrap_or_default().to_ascii_lowercase()),
                version,
                bytes,
                largest,
            });
        }
    }
    Ok(())
}

/// Whether the object's current parameters are what converting the kept ones gives.
fn same(current: Option<&Value>, again: Option<&Value>, kind: &str, up: bool) -> bool {
    match (current, again) {
        (Some(c), Some(a)) if c == a => true,
        (Some(c), Some(a)) if kind == "Instance" && !up => {
            // Going down, the kept v1beta1 strings typed now may differ from how they were
            // typed on the way up (the OperatorVersion was not known then, or is not now):
            // compare each value by meaning ("3" and 3, "[80]" and [80]).
            let (Value::Object(c), Value::Object(a)) = (c, a) else {
                return c == a;
            };
            c.len() == a.len()
                && c.iter().all(|(k, cv)| {
                    a.get(k).is_some_and(|av| match (av, cv) {
                        (Value::String(s), other) | (other, Value::String(s)) => {
                            same_text(s, other)
                        }
                        (x, y) => x == y,
                    })
                })
        }
        (c, a) => c == a,
    }
}

/// Whether a v1beta1 string means the v1beta2 value `v`.
fn same_text(s: &str, v: &Value) -> bool {
    match v {
        Value::String(t) => s == t,
        other => kudo_yaml::document::parse_value(s).is_ok_and(|p| &p == other),
    }
}

fn set_annotation(obj: &mut Map<String, Value>, key: &str, value: Option<String>) {
    match value {
        Some(v) => {
            let metadata = obj
                .entry("metadata")
                .or_insert_with(|| Value::Object(Map::new()));
            let annotations = metadata.as_object_mut().map(|m| {
                m.entry("annotations")
                    .or_insert_with(|| Value::Object(Map::new()))
            });
            if let Some(a) = annotations.and_then(Value::as_object_mut) {
                a.insert(key.into(), Value::String(v));
            }
        }
        None => {
            let Some(metadata) = obj.get_mut("metadata").and_then(Value::as_object_mut) else {
                return;
            };
            if let Some(a) = metadata
                .get_mut("annotations")
                .and_then(Value::as_object_mut)
            {
                a.shift_remove(key);
                if a.is_empty() {
                    metadata.shift_remove("annotations");
                }
            }
        }
    }
}

/// OperatorVersion parameters, flat list → schema (the `kudo package convert` conversion).
fn ov_up(list: &Value) -> Value {
    let doc = Document::from_value(
        std::path::Path::new("OperatorVersion"),
        json!({"apiVersion": "kudo.dev/v1beta1", "parameters": list}),
    );
    let params = V1beta1Params::parse(&doc).ok();
    match params {
        Some(p) => kudo_policy::convert::to_schema(&p).as_value().clone(),
        // A list kudo-policy cannot read stays as it is (kept whole in the annotation too).
        None => list.clone(),
    }
}

/// OperatorVersion parameters, schema → flat list of the top-level properties.
fn ov_down(schema: &Value) -> Value {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return Value::Array(Vec::new());
    };
    let text = |v: &Value| match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let list = props
        .iter()
        .map(|(name, node)| {
            let mut p = Map::new();
            p.insert("name".into(), json!(name));
            if let Some(t) = node.get("title").and_then(Value::as_str) {
                p.insert("displayName".into(), json!(t));
            }
            if let Some(d) = node.get("description").and_then(Value::as_str) {
                p.insert("description".into(), json!(d));
            }
            let has_default = node.get("default").is_some();
            if let Some(d) = node.get("default") {
                p.insert("default".into(), json!(text(d)));
            }
            p.insert(
                "required".into(),
                json!(required.contains(&name.as_str()) || has_default),
            );
            if let Some(t) = node.get("trigger").and_then(Value::as_str) {
                p.insert("trigger".into(), json!(t));
            }
            let ty = match node.get("type").and_then(Value::as_str) {
                Some("object") => "map",
                Some(t @ ("integer" | "number" | "boolean" | "array")) => t,
                _ => "string",
            };
            p.insert("value-type".into(), json!(ty));
            if let Some(i) = node.get("immutable").and_then(Value::as_bool) {
                p.insert("immutable".into(), json!(i));
            }
            if let Some(e) = node.get("enum").and_then(Value::as_array) {
                p.insert(
                    "enum".into(),
                    Value::Array(e.iter().map(|v| json!(text(v))).collect()),
                );
            }
            Value::Object(p)
        })
        .collect();
    Value::Array(list)
}

/// Instance values, strings → typed by the schema's top-level types when known.
fn instance_up(values: &Value, schema: Option<&ParamSchema>) -> Value {
    match schema {
        Some(schema) => kudo_policy::typing::typed_by_schema(schema, values),
        None => values.clone(),
    }
}

/// Instance values → strings.
fn instance_down(values: &Value) -> Value {
    kudo_policy::typing::to_v1beta1_strings(values)
}
