//! A ConversionReview read as raw JSON: one pass over the body borrows every member of every
//! object as it is, parsing only the members conversion looks into (`metadata` and `spec` one
//! level down, then `apiVersion`, `kind`, the namespace, the annotations,
//! `spec.operatorVersion` and `spec.parameters` on demand). Writing the reply copies the rest
//! byte for byte. `managedFields`, kubectl's last-applied annotation, templates and `status`,
//! most of a real object, are never built into a `Value`.
//!
//! Hand-written because no library reads "this JSON, with these few members parsed and the rest
//! kept raw" in one pass; serde_json's `RawValue` does the raw part.

use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde_json::Value;
use serde_json::value::RawValue;

use kudo_crd::convert::{Parts, Rewrite, V1BETA1_PARAMETERS, V1BETA2_PARAMETERS};

/// The review, borrowing from the body.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Review<'a> {
    pub api_version: Option<String>,
    pub kind: Option<String>,
    #[serde(borrow)]
    pub request: Option<Request<'a>>,
}

/// `request` (the stub `response` the API server may send is skipped).
#[derive(Deserialize)]
pub(super) struct Request<'a> {
    #[serde(default)]
    pub uid: String,
    #[serde(rename = "desiredAPIVersion")]
    pub desired_api_version: String,
    #[serde(borrow)]
    pub objects: Vec<Object<'a>>,
}

/// A member name, borrowed unless it holds escapes.
#[derive(Deserialize, PartialEq)]
#[serde(transparent)]
struct Key<'a>(#[serde(borrow)] Cow<'a, str>);

/// The members of a JSON object, in order, each kept raw.
type RawMap<'a> = Vec<(Key<'a>, &'a RawValue)>;

/// One object of the review: its members in order, `metadata` and `spec` one level down.
pub(super) struct Object<'a> {
    members: Vec<(Key<'a>, Member<'a>)>,
}

enum Member<'a> {
    Raw(&'a RawValue),
    /// `metadata` or `spec`.
    Map(RawMap<'a>),
}

struct Members<'a>(RawMap<'a>);

impl<'de: 'a, 'a> Deserialize<'de> for Members<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Members<'a>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut members = Vec::with_capacity(map.size_hint().unwrap_or(8));
                while let Some(key) = map.next_key::<Key<'a>>()? {
                    members.push((key, map.next_value::<&'a RawValue>()?));
                }
                Ok(Members(members))
            }
        }
        d.deserialize_map(V(std::marker::PhantomData))
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Object<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Object<'a>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a Kubernetes object (a JSON object)")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut members = Vec::with_capacity(6);
                while let Some(key) = map.next_key::<Key<'a>>()? {
                    let member = match key.0.as_ref() {
                        "metadata" | "spec" => Member::Map(
                            map.next_value::<Members<'a>>()
                                .map_err(|e| de::Error::custom(format!("{}: {e}", key.0)))?
                                .0,
                        ),
                        _ => Member::Raw(map.next_value()?),
                    };
                    members.push((key, member));
                }
                Ok(Object { members })
            }
        }
        d.deserialize_map(V(std::marker::PhantomData))
    }
}

fn lookup<'m, 'a>(map: &'m RawMap<'a>, key: &str) -> Option<&'m RawValue> {
    map.iter()
        .rev()
        .find(|(k, _)| k.0 == key)
        .map(|(_, v)| &**v)
}

/// A raw JSON string's text: borrowed when it has no escapes; `None` when not a string.
fn text(raw: &RawValue) -> Option<Cow<'_, str>> {
    serde_json::from_str::<&str>(raw.get())
        .map(Cow::Borrowed)
        .or_else(|_| serde_json::from_str::<String>(raw.get()).map(Cow::Owned))
        .ok()
}

impl<'a> Object<'a> {
    fn member(&self, key: &str) -> Option<&Member<'a>> {
        self.members
            .iter()
            .rev()
            .find(|(k, _)| k.0 == key)
            .map(|(_, m)| m)
    }

    fn text(&self, key: &str) -> Option<Cow<'_, str>> {
        match self.member(key)? {
            Member::Raw(raw) => text(raw),
            Member::Map(_) => None,
        }
    }

    fn map(&self, key: &str) -> Option<&RawMap<'a>> {
        match self.member(key)? {
            Member::Map(m) => Some(m),
            Member::Raw(_) => None,
        }
    }

    /// `apiVersion kind namespace/name`, for messages.
    pub fn describe(&self) -> String {
        let meta = |k: &str| {
            self.map("metadata")
                .and_then(|m| lookup(m, k))
                .and_then(text)
                .unwrap_or(Cow::Borrowed("?"))
                .into_owned()
        };
        format!(
            "{} {} {}/{}",
            self.text("apiVersion").as_deref().unwrap_or("?"),
            self.text("kind").as_deref().unwrap_or("?"),
            meta("namespace"),
            meta("name")
        )
    }

    /// Converts the object to `desired` with [`kudo_crd::convert::rewrite`] (the rules)
    /// and appends it to `out`.
    pub fn convert(
        &self,
        desired: &str,
        types: &dyn kudo_crd::convert::TypeSource,
        out: &mut Vec<u8>,
    ) -> Result<(), kudo_crd::convert::Error> {
        let api_version = self.text("apiVersion");
        let kind = self.text("kind");
        // Only a change of version looks past `apiVersion` and `kind` (and writes `metadata`
        // and `spec` anew), so the rest is read only then.
        let changing = api_version.as_deref().is_some_and(|v| v != desired);
        let metadata = self.map("metadata").filter(|_| changing);
        let spec = self.map("spec").filter(|_| changing);
        let namespace = metadata.and_then(|m| lookup(m, "namespace")).and_then(text);
        let annotations: Option<RawMap<'_>> = metadata
            .and_then(|m| lookup(m, "annotations"))
            .and_then(|raw| serde_json::from_str::<Members>(raw.get()).ok())
            .map(|m| m.0);
        let kept = |key: &str| {
            annotations
                .as_ref()
                .and_then(|a| lookup(a, key))
                .and_then(text)
        };
        let (v1beta1_parameters, v1beta2_parameters) =
            (kept(V1BETA1_PARAMETERS), kept(V1BETA2_PARAMETERS));
        #[derive(Deserialize)]
        struct Ref<'r> {
            #[serde(borrow)]
            name: Option<Cow<'r, str>>,
            #[serde(borrow, default)]
            namespace: Option<Cow<'r, str>>,
        }
        let reference = spec
            .and_then(|s| lookup(s, "operatorVersion"))
            .and_then(|raw| serde_json::from_str::<Ref>(raw.get()).ok());
        let (operator_version, operator_version_namespace) = match reference {
            Some(r) => (r.name, r.namespace),
            None => (None, None),
        };
        let parameters: Option<Value> = spec
            .and_then(|s| lookup(s, "parameters"))
            .and_then(|raw| serde_json::from_str(raw.get()).ok());
        let parts = Parts {
            api_version: api_version.as_deref(),
            kind: kind.as_deref(),
            namespace: namespace.as_deref().unwrap_or_default(),
            operator_version: operator_version.as_deref(),
            operator_version_namespace: operator_version_namespace.as_deref(),
            parameters: parameters.as_ref(),
            v1beta1_parameters: v1beta1_parameters.as_deref(),
            v1beta2_parameters: v1beta2_parameters.as_deref(),
        };
        let changes = kudo_crd::convert::rewrite(&parts, desired, types)?;
        self.write(desired, changes.as_ref(), annotations.as_ref(), out);
        Ok(())
    }

    fn write(
        &self,
        desired: &str,
        changes: Option<&Rewrite>,
        annotations: Option<&RawMap<'_>>,
        out: &mut Vec<u8>,
    ) {
        let mut w = ObjectWriter::new(out);
        let mut metadata_written = false;
        for (key, member) in &self.members {
            match (key.0.as_ref(), member) {
                ("apiVersion", _) => w.member(key, |out| string(out, desired)),
                ("metadata", Member::Map(map)) => {
                    metadata_written = true;
                    w.member(key, |out| match changes {
                        Some(c) => write_metadata(out, map, annotations, &c.annotations),
                        None => write_map(out, map),
                    })
                }
                ("spec", Member::Map(map)) => w.member(key, |out| match changes {
                    Some(c) => write_spec(out, map, c.parameters.as_ref()),
                    None => write_map(out, map),
                }),
                (_, Member::Map(map)) => w.member(key, |out| write_map(out, map)),
                (_, Member::Raw(raw)) => {
                    w.member(key, |out| out.extend_from_slice(raw.get().as_bytes()))
                }
            }
        }
        if !metadata_written {
            let sets = changes.map(|c| final_annotations(None, &c.annotations));
            if let Some(Some(entries)) = sets {
                w.member_named("metadata", |out| {
                    let mut m = ObjectWriter::new(out);
                    m.member_named("annotations", |out| write_entries(out, &entries));
                    m.end();
                });
            }
        }
        w.end();
    }
}

/// Writes `{"k":v,...}` with commas where they belong.
struct ObjectWriter<'o> {
    out: &'o mut Vec<u8>,
    first: bool,
}

impl<'o> ObjectWriter<'o> {
    fn new(out: &'o mut Vec<u8>) -> Self {
        out.push(b'{');
        ObjectWriter { out, first: true }
    }

    fn member(&mut self, key: &Key<'_>, value: impl FnOnce(&mut Vec<u8>)) {
        self.member_named(&key.0, value);
    }

    fn member_named(&mut self, key: &str, value: impl FnOnce(&mut Vec<u8>)) {
        if !self.first {
            self.out.push(b',');
        }
        self.first = false;
        string(self.out, key);
        self.out.push(b':');
        value(self.out);
    }

    fn end(self) {
        self.out.push(b'}');
    }
}

fn string(out: &mut Vec<u8>, s: &str) {
    // Writing a string into a Vec cannot fail.
    let _ = serde_json::to_writer(&mut *out, s);
}

fn write_map(out: &mut Vec<u8>, map: &RawMap<'_>) {
    let mut w = ObjectWriter::new(out);
    for (key, raw) in map {
        w.member(key, |out| out.extend_from_slice(raw.get().as_bytes()));
    }
    w.end();
}

/// An annotation's final state: its text (raw, as it was, or set now).
enum Entry<'e> {
    Raw(&'e RawValue),
    Set(&'e str),
}

/// The annotations after `ops`, in order (kept ones in place, new ones at the end), or `None`
/// when the `annotations` member is to be left out: it was absent and nothing is set, or the
/// removals left it empty (as [`kudo_crd::convert::convert_owned`] does).
fn final_annotations<'e>(
    existing: Option<&'e RawMap<'_>>,
    ops: &'e [(&'static str, Option<String>)],
) -> Option<Vec<(&'e str, Entry<'e>)>> {
    // Each key is in `ops` at most once (`Rewrite::annotations`).
    let op = |key: &str| ops.iter().find(|(k, _)| *k == key).map(|(_, v)| v);
    let mut entries: Vec<(&str, Entry)> = Vec::new();
    for (key, raw) in existing.into_iter().flatten() {
        match op(&key.0) {
            None => entries.push((&key.0, Entry::Raw(raw))),
            Some(Some(text)) => entries.push((&key.0, Entry::Set(text))),
            Some(None) => {}
        }
    }
    for (key, value) in ops {
        if let Some(text) = value
            && !entries.iter().any(|(k, _)| k == key)
        {
            entries.push((key, Entry::Set(text)));
        }
    }
    (!entries.is_empty()).then_some(entries)
}

fn write_entries(out: &mut Vec<u8>, entries: &[(&str, Entry<'_>)]) {
    let mut w = ObjectWriter::new(out);
    for (key, entry) in entries {
        w.member_named(key, |out| match entry {
            Entry::Raw(raw) => out.extend_from_slice(raw.get().as_bytes()),
            Entry::Set(text) => string(out, text),
        });
    }
    w.end();
}

fn write_metadata(
    out: &mut Vec<u8>,
    map: &RawMap<'_>,
    annotations: Option<&RawMap<'_>>,
    ops: &[(&'static str, Option<String>)],
) {
    let mut w = ObjectWriter::new(out);
    let mut seen = false;
    for (key, raw) in map {
        if key.0 != "annotations" {
            w.member(key, |out| out.extend_from_slice(raw.get().as_bytes()));
            continue;
        }
        seen = true;
        match annotations {
            // Not a map (null): conversion leaves it as it is.
            None => w.member(key, |out| out.extend_from_slice(raw.get().as_bytes())),
            Some(existing) => {
                if let Some(entries) = final_annotations(Some(existing), ops) {
                    w.member(key, |out| write_entries(out, &entries));
                }
            }
        }
    }
    if !seen && let Some(entries) = final_annotations(None, ops) {
        w.member_named("annotations", |out| write_entries(out, &entries));
    }
    w.end();
}

fn write_spec(out: &mut Vec<u8>, map: &RawMap<'_>, parameters: Option<&Value>) {
    let mut w = ObjectWriter::new(out);
    let mut seen = false;
    for (key, raw) in map {
        if key.0 != "parameters" {
            w.member(key, |out| out.extend_from_slice(raw.get().as_bytes()));
            continue;
        }
        seen = true;
        if let Some(p) = parameters {
            w.member(key, |out| {
                let _ = serde_json::to_writer(&mut *out, p);
            });
        }
    }
    if !seen && let Some(p) = parameters {
        w.member_named("parameters", |out| {
            let _ = serde_json::to_writer(&mut *out, p);
        });
    }
    w.end();
}
