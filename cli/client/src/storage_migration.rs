//! KEP-33's migration of a cluster from `kudo.dev/v1beta1` to `kudo.dev/v1beta2` storage: what
//! `kudo migrate` runs.
//!
//! Four phases, each idempotent, so a second run is harmless and an interrupted run resumes:
//!
//! 1. **Pre-flight** ([`preflight`]): every Operator, OperatorVersion and Instance of every
//!    namespace is listed through `kudo.dev/v1beta1` and converted to v1beta2 with
//!    [`kudo_crd::convert`], Instances typed by their OperatorVersion's converted schema. An object
//!    that cannot be converted faithfully (its OperatorVersion is missing, a value does not fit
//!    its parameter's type, a parameter list kudo cannot read) is a [`Problem`]; any problem
//!    aborts before the first write ([`Error::Preflight`]).
//! 2. **CRDs**: [`kudo_crd::definitions`] (v1beta2 stored, both served) applied server-side with
//!    the field manager [`labels::MIGRATE_FIELD_MANAGER`], each keeping the `spec.conversion`
//!    the installed CRD has (the webhook URL and CA bundle `kudo init` set are never wiped).
//! 3. **Rewrite**: every object of a kind whose CRD still lists another stored version is PUT
//!    through `kudo.dev/v1beta2` as converted in pre-flight, with its `resourceVersion` as
//!    precondition (a 409 re-reads and converts again, up to [`MAX_ATTEMPTS`] times), so etcd
//!    holds it as v1beta2. An object already stored as v1beta2 is written unchanged, which the
//!    API server does not even store. Then it is read back through v1beta2 and compared with
//!    the conversion: `spec`, labels and annotations must be identical ([`Error::Changed`]).
//! 4. **storedVersions**: each CRD's `status.storedVersions` becomes `["v1beta2"]` (a merge
//!    patch of the status with the `resourceVersion` as precondition); already clean, nothing is
//!    sent.
//!
//! [`run`] with [`Options::dry_run`] stops after pre-flight: the [`Report`] then says what would
//! be rewritten (the JSON pointers each conversion changes, never values: some are secret).

use std::collections::HashMap;
use std::fmt;

use http::{Method, Request};
use kudo_diag::pointer::{self, Arrays};
use kudo_policy::ParamSchema;
use serde::Serialize;
use serde_json::{Value, json};

use crate::commands::entry::{Attempt, retry};
use kudo_crd::STORAGE_VERSION;
use kudo_crd::convert::{self, TypeSource};
use kudo_crd::labels;
use kudo_crd::reference::OperatorVersionRef;

/// How many times a rewrite is tried when the object keeps changing under it (HTTP 409), with
/// the cluster commands' back-off between tries (`commands::entry`).
pub const MAX_ATTEMPTS: usize = 5;
/// The version objects are listed in during pre-flight.
pub const OLD_VERSION: &str = "v1beta1";

const CRD_PATH: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";

/// A kind the migration rewrites.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum Kind {
    /// `Operator` (the same shape in both versions).
    Operator,
    /// `OperatorVersion` (flat parameter list → JSON-schema).
    OperatorVersion,
    /// `Instance` (string values → typed values).
    Instance,
}

impl Kind {
    /// In the order the migration handles them: OperatorVersions before the Instances they type.
    pub const ALL: [Kind; 3] = [Kind::Operator, Kind::OperatorVersion, Kind::Instance];

    /// The resource name in URLs.
    pub fn plural(self) -> &'static str {
        match self {
            Kind::Operator => "operators",
            Kind::OperatorVersion => "operatorversions",
            Kind::Instance => "instances",
        }
    }

    /// The name of its CRD.
    pub fn crd(self) -> String {
        format!("{}.{}", self.plural(), convert::GROUP)
    }

    /// The kind's name.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Operator => "Operator",
            Kind::OperatorVersion => "OperatorVersion",
            Kind::Instance => "Instance",
        }
    }
}

/// One object: kind, namespace, name.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct ObjectId {
    /// Its kind.
    pub kind: Kind,
    /// Its namespace.
    pub namespace: String,
    /// Its name.
    pub name: String,
}

impl fmt::Display for ObjectId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}/{}", self.kind.name(), self.namespace, self.name)
    }
}

impl ObjectId {
    fn path(&self, version: &str) -> String {
        format!(
            "/apis/{}/{version}/namespaces/{}/{}/{}",
            convert::GROUP,
            self.namespace,
            self.kind.plural(),
            self.name
        )
    }
}

/// Why an object cannot be migrated faithfully (found in pre-flight, or on a re-read).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, thiserror::Error)]
#[serde(tag = "problem", rename_all = "kebab-case")]
pub enum ProblemKind {
    /// The conversion refused the object.
    #[error("{message}")]
    Conversion {
        /// What the conversion said.
        message: String,
    },
    /// The object has no `metadata.name` or `metadata.namespace`.
    #[error("the object has no metadata.name or metadata.namespace")]
    NoName,
    /// The OperatorVersion's parameters do not convert to a JSON-schema (kudo cannot read the
    /// v1beta1 list).
    #[error("its parameters do not convert to a JSON-schema: {message}")]
    UnreadableParameters {
        /// Why.
        message: String,
    },
    /// The Instance names no OperatorVersion.
    #[error("it names no OperatorVersion (spec.operatorVersion.name)")]
    NoOperatorVersion,
    /// The Instance's OperatorVersion does not exist: its values cannot be typed.
    #[error(
        "its OperatorVersion {name} does not exist in its namespace: the values cannot be typed"
    )]
    MissingOperatorVersion {
        /// The OperatorVersion's name.
        name: String,
    },
    /// A value is a string that does not read as its parameter's type (the value itself is not
    /// shown: it may be a secret).
    #[error("the value of {parameter} is not a valid {expected}")]
    Untyped {
        /// The parameter.
        parameter: String,
        /// Its type in the schema.
        expected: String,
    },
}

/// An object pre-flight cannot migrate, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    /// The object.
    pub object: ObjectId,
    /// What failed.
    #[serde(flatten)]
    pub kind: ProblemKind,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.object, self.kind)
    }
}

/// Why the migration stopped.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An Instance's `writeOnly` values could not be moved to a Secret (or the Secret of a
    /// rewrite that did not land could not be deleted).
    #[error("moving writeOnly values to a Secret: {0}")]
    Secret(String),
    /// Pre-flight found objects that cannot be converted; nothing was written.
    #[error("pre-flight: {} object(s) cannot be migrated; nothing was written", .0.len())]
    Preflight(Vec<Problem>),
    /// A request failed.
    #[error("{method} {path}: {}", kudo_cluster::said(source))]
    Api {
        /// HTTP method.
        method: Method,
        /// Path.
        path: String,
        /// What the client or the API server said.
        #[source]
        source: kube::Error,
    },
    /// The API server answered with something that is not the expected object.
    #[error("{path}: unexpected answer: {what}")]
    Response {
        /// Path.
        path: String,
        /// What was wrong.
        what: String,
    },
    /// An object kept changing during its rewrite.
    #[error("{object}: still changing after {attempts} attempts; run kudo migrate again")]
    Conflict {
        /// The object.
        object: ObjectId,
        /// Attempts made.
        attempts: usize,
    },
    /// A CRD's status kept changing while storedVersions was cleaned.
    #[error("CRD {crd}: still changing after {attempts} attempts; run kudo migrate again")]
    CrdConflict {
        /// The CRD.
        crd: String,
        /// Attempts made.
        attempts: usize,
    },
    /// A re-read object cannot be converted any more (it changed since pre-flight).
    #[error("{0}")]
    Problem(Problem),
    /// What was read back after the rewrite is not what the conversion gave.
    #[error("{object}: read back through v1beta2, it differs from its conversion at {}", .pointers.join(", "))]
    Changed {
        /// The object.
        object: ObjectId,
        /// Where (JSON pointers; values are not shown).
        pointers: Vec<String>,
    },
}

/// What to do.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Options {
    /// Pre-flight only.
    pub dry_run: bool,
}

/// One object found in pre-flight and what its conversion changes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Planned {
    /// The object.
    #[serde(flatten)]
    pub object: ObjectId,
    /// JSON pointers the conversion changes (`/spec/parameters/NODE_COUNT`, ...).
    pub changes: Vec<String>,
}

/// A CRD as phase 2 left it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CrdApplied {
    /// The CRD.
    pub name: String,
    /// Its conversion strategy (kept from the installed CRD): `Webhook` or `None`.
    pub conversion: String,
    /// `status.storedVersions` after the apply.
    pub stored_versions: Vec<String>,
}

/// What phase 3 did to one object.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "outcome", rename_all = "kebab-case")]
pub enum Rewrite {
    /// Written through v1beta2 and read back identical in meaning.
    Rewritten {
        /// The object.
        #[serde(flatten)]
        object: ObjectId,
        /// Writes tried (more than 1 after conflicts).
        attempts: usize,
    },
    /// Its CRD stores only v1beta2: nothing to do.
    AlreadyStored {
        /// The object.
        #[serde(flatten)]
        object: ObjectId,
    },
    /// Deleted since pre-flight.
    Gone {
        /// The object.
        #[serde(flatten)]
        object: ObjectId,
    },
    /// Written, then changed by another client before it was read back: that client's change
    /// is what it holds now (not compared).
    ChangedSince {
        /// The object.
        #[serde(flatten)]
        object: ObjectId,
    },
}

/// What phase 4 did to one CRD.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StoredVersions {
    /// The CRD.
    pub crd: String,
    /// Before.
    pub before: Vec<String>,
    /// After.
    pub after: Vec<String>,
}

/// What the migration did, phase by phase.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// Only pre-flight ran.
    pub dry_run: bool,
    /// Phase 1: every object found, and what its conversion changes.
    pub preflight: Vec<Planned>,
    /// Phase 2: the CRDs applied.
    pub crds: Vec<CrdApplied>,
    /// Phase 3: every object rewritten (or why not).
    pub rewrite: Vec<Rewrite>,
    /// Phase 4: the CRDs whose storedVersions changed (empty when already clean).
    pub stored_versions: Vec<StoredVersions>,
}

/// An object as listed through v1beta1 and as converted to v1beta2.
#[derive(Debug, Clone, PartialEq)]
pub struct Converted {
    /// Which object.
    pub id: ObjectId,
    /// As read through v1beta1.
    pub old: Value,
    /// The v1beta2 form.
    pub new: Value,
}

/// The objects of the three kinds as listed through v1beta1.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Listed {
    /// Operators.
    pub operators: Vec<Value>,
    /// OperatorVersions.
    pub operator_versions: Vec<Value>,
    /// Instances.
    pub instances: Vec<Value>,
}

/// The v1beta2 parameter schemas of the OperatorVersions, by namespace and name.
#[derive(Debug, Default)]
struct Schemas(
    HashMap<(String, String), ParamSchema>,
    /// Each OperatorVersion's spec by namespace, to find one named the other way.
    HashMap<String, Vec<(String, Value)>>,
);

impl TypeSource for Schemas {
    fn schema(&self, namespace: &str, name: &str) -> Option<ParamSchema> {
        if let Some(s) = self.0.get(&(namespace.into(), name.into())) {
            return Some(s.clone());
        }
        let here = self.1.get(namespace)?;
        let found = kudo_crd::reference::resolve(
            name,
            here.iter()
                .map(|(n, spec)| kudo_crd::reference::Identity::of_spec(n, Some(spec))),
        )?;
        self.0.get(&(namespace.into(), found.into())).cloned()
    }
}

/// Converts every listed object to v1beta2, OperatorVersions first so that Instances are typed
/// by their schema. Every problem is reported, not just the first.
pub fn convert_all(listed: &Listed) -> Result<Vec<Converted>, Vec<Problem>> {
    let mut problems = Vec::new();
    let mut out = Vec::new();
    let no_types = Schemas::default();
    for (kind, objects) in [
        (Kind::Operator, &listed.operators),
        (Kind::OperatorVersion, &listed.operator_versions),
    ] {
        convert_each(kind, objects, &no_types, &mut out, &mut problems);
    }
    let schemas = schemas_of(&out);
    convert_each(
        Kind::Instance,
        &listed.instances,
        &schemas,
        &mut out,
        &mut problems,
    );
    for c in out.iter().filter(|c| c.id.kind == Kind::OperatorVersion) {
        if let Some(Err((at, message))) = c
            .new
            .pointer("/spec/parameters")
            .map(|p| ParamSchema::from_value(p.clone()))
        {
            let message = if at.is_empty() {
                message
            } else {
                format!("{at}: {message}")
            };
            problems.push(Problem {
                object: c.id.clone(),
                kind: ProblemKind::UnreadableParameters { message },
            });
        }
    }
    if problems.is_empty() {
        Ok(out)
    } else {
        problems.sort_by_key(|p| p.object.kind != Kind::OperatorVersion);
        Err(problems)
    }
}

fn convert_each(
    kind: Kind,
    objects: &[Value],
    types: &Schemas,
    out: &mut Vec<Converted>,
    problems: &mut Vec<Problem>,
) {
    for old in objects {
        match convert_one(kind, old, types) {
            Ok(c) => out.push(c),
            Err(mut p) => problems.append(&mut p),
        }
    }
}

/// Converts one object; an Instance is checked against its OperatorVersion's schema.
fn convert_one(kind: Kind, old: &Value, types: &Schemas) -> Result<Converted, Vec<Problem>> {
    let meta = |key: &str| {
        old.pointer(&format!("/metadata/{key}"))
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(String::from)
    };
    let id = ObjectId {
        kind,
        namespace: meta("namespace").unwrap_or_default(),
        name: meta("name").unwrap_or_default(),
    };
    let problem = |kind: ProblemKind| Problem {
        object: id.clone(),
        kind,
    };
    if id.name.is_empty() || id.namespace.is_empty() {
        return Err(vec![problem(ProblemKind::NoName)]);
    }
    let mut typed = old.clone();
    // Listed items may come without apiVersion and kind: they are the list's.
    if let Some(o) = typed.as_object_mut() {
        o.entry("apiVersion")
            .or_insert_with(|| json!(format!("{}/{OLD_VERSION}", convert::GROUP)));
        o.entry("kind").or_insert_with(|| json!(kind.name()));
    }
    let desired = format!("{}/{STORAGE_VERSION}", convert::GROUP);
    let new = convert::convert_owned(typed, &desired, types).map_err(|e| {
        vec![problem(ProblemKind::Conversion {
            message: e.to_string(),
        })]
    })?;
    if kind == Kind::Instance {
        let Some(ov) = OperatorVersionRef::of_object(&new, &id.namespace) else {
            return Err(vec![problem(ProblemKind::NoOperatorVersion)]);
        };
        let Some(schema) = types.schema(&ov.namespace, &ov.name) else {
            return Err(vec![problem(ProblemKind::MissingOperatorVersion {
                name: ov.name,
            })]);
        };
        let untyped = untyped_values(&schema, new.pointer("/spec/parameters"));
        if !untyped.is_empty() {
            return Err(untyped
                .into_iter()
                .map(|(parameter, expected)| {
                    problem(ProblemKind::Untyped {
                        parameter,
                        expected,
                    })
                })
                .collect());
        }
    }
    Ok(Converted {
        id,
        old: old.clone(),
        new,
    })
}

/// The top-level values still strings where the schema says another type: the conversion could
/// not read them as that type.
fn untyped_values(schema: &ParamSchema, values: Option<&Value>) -> Vec<(String, String)> {
    let Some(Value::Object(values)) = values else {
        return Vec::new();
    };
    values
        .iter()
        .filter(|(_, v)| v.is_string())
        .filter_map(|(k, _)| {
            let ty = schema
                .node_at(std::slice::from_ref(k))
                .and_then(|n| n.get("type"))
                .and_then(Value::as_str)?;
            (ty != "string").then(|| (k.clone(), ty.to_string()))
        })
        .collect()
}

/// The JSON pointers under `spec`, labels and annotations where `a` and `b` differ: what a
/// conversion changes, or what a read-back does not hold.
pub fn differences(a: &Value, b: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for at in ["/spec", "/metadata/labels", "/metadata/annotations"] {
        let mut here = Vec::new();
        pointer::diff(
            at,
            a.pointer(at),
            b.pointer(at),
            Arrays::Whole,
            &mut |p, _, _, _| here.push(p.to_string()),
        );
        here.sort();
        out.extend(here);
    }
    out
}

/// Phase 1: lists every object through v1beta1 and converts it. A kind whose CRD is not
/// installed has no objects.
pub async fn preflight(client: &kube::Client) -> Result<Vec<Converted>, Error> {
    let mut listed = Listed::default();
    for kind in Kind::ALL {
        let path = format!("/apis/{}/{OLD_VERSION}/{}", convert::GROUP, kind.plural());
        let items = match send(client, Method::GET, &path, None, None).await? {
            Some(list) => match list.get("items") {
                Some(Value::Array(items)) => items.clone(),
                Some(Value::Null) | None => Vec::new(),
                Some(_) => {
                    return Err(Error::Response {
                        path,
                        what: "items is not a list".into(),
                    });
                }
            },
            None => Vec::new(),
        };
        match kind {
            Kind::Operator => listed.operators = items,
            Kind::OperatorVersion => listed.operator_versions = items,
            Kind::Instance => listed.instances = items,
        }
    }
    convert_all(&listed).map_err(Error::Preflight)
}

/// Runs the migration (see the module's documentation).
pub async fn run(client: &kube::Client, options: &Options) -> Result<Report, Error> {
    let converted = preflight(client).await?;
    let mut report = Report {
        dry_run: options.dry_run,
        preflight: converted
            .iter()
            .map(|c| Planned {
                object: c.id.clone(),
                changes: differences(&c.old, &c.new),
            })
            .collect(),
        ..Report::default()
    };
    if options.dry_run {
        return Ok(report);
    }
    report.crds = apply_crds(client).await?;
    let clean = |kind: Kind| {
        report
            .crds
            .iter()
            .any(|c| c.name == kind.crd() && c.stored_versions == [STORAGE_VERSION])
    };
    let schemas = schemas_of(&converted);
    let mut rewrites = Vec::new();
    for c in &converted {
        if clean(c.id.kind) {
            rewrites.push(Rewrite::AlreadyStored {
                object: c.id.clone(),
            });
        } else {
            rewrites.push(rewrite(client, c, &schemas).await?);
        }
    }
    report.rewrite = rewrites;
    for crd in &report.crds {
        if crd.stored_versions != [STORAGE_VERSION]
            && let Some(sv) = clean_stored_versions(client, &crd.name).await?
        {
            report.stored_versions.push(sv);
        }
    }
    Ok(report)
}

fn schemas_of(converted: &[Converted]) -> Schemas {
    let mut schemas = Schemas::default();
    for c in converted {
        if c.id.kind == Kind::OperatorVersion
            && let Some(Ok(s)) = c
                .new
                .pointer("/spec/parameters")
                .map(|p| ParamSchema::from_value(p.clone()))
        {
            schemas
                .0
                .insert((c.id.namespace.clone(), c.id.name.clone()), s);
            schemas.1.entry(c.id.namespace.clone()).or_default().push((
                c.id.name.clone(),
                c.new.get("spec").cloned().unwrap_or_default(),
            ));
        }
    }
    schemas
}

/// Phase 2: the CRDs, v1beta2 stored, applied server-side; each keeps the conversion the
/// installed one has.
async fn apply_crds(client: &kube::Client) -> Result<Vec<CrdApplied>, Error> {
    let mut out = Vec::new();
    for crd in kudo_crd::converted() {
        let name = crd.metadata.name.clone().unwrap_or_default();
        let path = format!("{CRD_PATH}/{name}");
        let installed = send(client, Method::GET, &path, None, None).await?;
        let conversion = installed
            .as_ref()
            .and_then(|c| c.pointer("/spec/conversion"))
            .cloned();
        let mut body = serde_json::to_value(&crd).map_err(|e| Error::Response {
            path: path.clone(),
            what: format!("the CRD does not serialize: {e}"),
        })?;
        if let (Some(c), Some(spec)) = (&conversion, body.get_mut("spec")) {
            spec["conversion"] = c.clone();
        }
        let apply = format!(
            "{path}?fieldManager={}&force=true",
            labels::MIGRATE_FIELD_MANAGER
        );
        let applied = send(
            client,
            Method::PATCH,
            &apply,
            Some("application/apply-patch+yaml"),
            Some(&body),
        )
        .await?
        .ok_or_else(|| Error::Response {
            path: apply.clone(),
            what: "not found".into(),
        })?;
        out.push(CrdApplied {
            name,
            conversion: applied
                .pointer("/spec/conversion/strategy")
                .and_then(Value::as_str)
                .unwrap_or("None")
                .to_string(),
            stored_versions: stored_versions(&applied),
        });
    }
    Ok(out)
}

fn stored_versions(crd: &Value) -> Vec<String> {
    crd.pointer("/status/storedVersions")
        .and_then(Value::as_array)
        .map(|v| {
            v.iter()
                .filter_map(Value::as_str)
                .map(String::from)
                .collect()
        })
        .unwrap_or_default()
}

/// Phase 3 for one object: PUT through v1beta2 with its resourceVersion; on 409 re-read it
/// through v1beta1 and convert again. Then read it back and compare.
async fn rewrite(client: &kube::Client, c: &Converted, types: &Schemas) -> Result<Rewrite, Error> {
    let path = c.id.path(STORAGE_VERSION);
    let mut expected = c.new.clone();
    let done = retry(MAX_ATTEMPTS, async |attempt| {
        // An Instance's writeOnly values move to a Secret of kudo's first (never stored in an
        // Instance); the Secret is deleted again when the rewrite does not land.
        let moved = match c.id.kind {
            Kind::Instance => move_secrets(client, &c.id, &mut expected, types).await?,
            _ => None,
        };
        let mut body = expected.clone();
        if let Some(m) = body.get_mut("metadata").and_then(Value::as_object_mut) {
            m.remove("managedFields");
        }
        let sent = send(
            client,
            Method::PUT,
            &path,
            Some("application/json"),
            Some(&body),
        )
        .await;
        if let (Some(name), false) = (&moved, matches!(sent, Ok(Some(_)))) {
            let t = crate::commands::Target::new(client.clone(), Some(&c.id.namespace));
            crate::commands::secrets::delete(&t, name)
                .await
                .map_err(|e| Error::Secret(e.to_string()))?;
        }
        let gone = || {
            Attempt::Done(Rewrite::Gone {
                object: c.id.clone(),
            })
        };
        match sent {
            Ok(Some(written)) => Ok(Attempt::Done(
                verify(client, c, &expected, &written, attempt).await?,
            )),
            Ok(None) => Ok(gone()),
            Err(Error::Api {
                source: kube::Error::Api(status),
                ..
            }) if status.is_conflict() => {
                let old_path = c.id.path(OLD_VERSION);
                let Some(now) = send(client, Method::GET, &old_path, None, None).await? else {
                    return Ok(gone());
                };
                expected = convert_one(c.id.kind, &now, types)
                    .map_err(|mut p| Error::Problem(p.remove(0)))?
                    .new;
                Ok(Attempt::Conflict)
            }
            Err(e) => Err(e),
        }
    })
    .await?;
    done.ok_or_else(|| Error::Conflict {
        object: c.id.clone(),
        attempts: MAX_ATTEMPTS,
    })
}

/// Moves the `writeOnly` values of Instance `instance` (its v1beta2 form) into a new Secret of
/// kudo's, named in its `spec.parametersFrom` ([`crate::commands::secrets`]); the annotation
/// that kept its v1beta1 strings goes too, since it holds them as well. `None` when it has none.
async fn move_secrets(
    client: &kube::Client,
    id: &ObjectId,
    instance: &mut Value,
    types: &Schemas,
) -> Result<Option<String>, Error> {
    let Some(schema) = OperatorVersionRef::of_object(instance, &id.namespace)
        .and_then(|ov| types.schema(&ov.namespace, &ov.name))
    else {
        return Ok(None);
    };
    let params = instance
        .pointer("/spec/parameters")
        .cloned()
        .unwrap_or_else(|| json!({}));
    let (public, Some(secret)) = kudo_policy::secrets::split(&schema, &params) else {
        return Ok(None);
    };
    let inst: kudo_crd::v1beta2::Instance = serde_json::from_value(instance.clone())
        .map_err(|e| Error::Secret(format!("{id} does not read as an Instance: {e}")))?;
    let t = crate::commands::Target::new(client.clone(), Some(&id.namespace));
    let name =
        crate::commands::secrets::new_name(&id.name).map_err(|e| Error::Secret(e.to_string()))?;
    crate::commands::secrets::create(&t, &id.name, &name, Some(&inst), &secret)
        .await
        .map_err(|e| Error::Secret(e.to_string()))?;
    let from = crate::commands::secrets::entries(&inst, Some(&name));
    if let Some(spec) = instance.get_mut("spec").and_then(Value::as_object_mut) {
        spec.insert("parameters".into(), public);
        spec.insert(
            "parametersFrom".into(),
            serde_json::to_value(from).unwrap_or_default(),
        );
    }
    if let Some(a) = instance
        .pointer_mut("/metadata/annotations")
        .and_then(Value::as_object_mut)
    {
        a.remove(convert::V1BETA1_PARAMETERS);
    }
    Ok(Some(name))
}

/// Reads the rewritten object back through v1beta2 and compares it with its conversion.
async fn verify(
    client: &kube::Client,
    c: &Converted,
    expected: &Value,
    written: &Value,
    attempts: usize,
) -> Result<Rewrite, Error> {
    let path = c.id.path(STORAGE_VERSION);
    let Some(back) = send(client, Method::GET, &path, None, None).await? else {
        return Ok(Rewrite::Gone {
            object: c.id.clone(),
        });
    };
    let rv = |v: &Value| v.pointer("/metadata/resourceVersion").cloned();
    if rv(&back) != rv(written) {
        return Ok(Rewrite::ChangedSince {
            object: c.id.clone(),
        });
    }
    let pointers = differences(expected, &back);
    if pointers.is_empty() {
        Ok(Rewrite::Rewritten {
            object: c.id.clone(),
            attempts,
        })
    } else {
        Err(Error::Changed {
            object: c.id.clone(),
            pointers,
        })
    }
}

/// Phase 4 for one CRD: `status.storedVersions` becomes `["v1beta2"]`, with the CRD's
/// resourceVersion as precondition. `None` when it already was.
async fn clean_stored_versions(
    client: &kube::Client,
    crd: &str,
) -> Result<Option<StoredVersions>, Error> {
    let path = format!("{CRD_PATH}/{crd}");
    let done = retry(MAX_ATTEMPTS, async |_| {
        let current = send(client, Method::GET, &path, None, None)
            .await?
            .ok_or_else(|| Error::Response {
                path: path.clone(),
                what: "the CRD is gone".into(),
            })?;
        let before = stored_versions(&current);
        if before == [STORAGE_VERSION] {
            return Ok(Attempt::Done(None));
        }
        let patch = json!({
            "metadata": {"resourceVersion": current.pointer("/metadata/resourceVersion")},
            "status": {"storedVersions": [STORAGE_VERSION]},
        });
        let status_path = format!("{path}/status");
        match send(
            client,
            Method::PATCH,
            &status_path,
            Some("application/merge-patch+json"),
            Some(&patch),
        )
        .await
        {
            Ok(Some(after)) => Ok(Attempt::Done(Some(StoredVersions {
                crd: crd.to_string(),
                before,
                after: stored_versions(&after),
            }))),
            Ok(None) => Err(Error::Response {
                path: status_path,
                what: "the CRD is gone".into(),
            }),
            Err(Error::Api {
                source: kube::Error::Api(status),
                ..
            }) if status.is_conflict() => Ok(Attempt::Conflict),
            Err(e) => Err(e),
        }
    })
    .await?;
    done.ok_or_else(|| Error::CrdConflict {
        crd: crd.to_string(),
        attempts: MAX_ATTEMPTS,
    })
}

/// One request; `Ok(None)` for 404.
async fn send(
    client: &kube::Client,
    method: Method,
    path: &str,
    content_type: Option<&str>,
    body: Option<&Value>,
) -> Result<Option<Value>, Error> {
    let api = |source| Error::Api {
        method: method.clone(),
        path: path.to_string(),
        source,
    };
    let mut request = Request::builder().method(method.clone()).uri(path);
    if let Some(ct) = content_type {
        request = request.header(http::header::CONTENT_TYPE, ct);
    }
    let bytes = body.map(|b| b.to_string().into_bytes()).unwrap_or_default();
    let request = request
        .body(bytes)
        .map_err(|e| api(kube::Error::HttpError(e)))?;
    match client.request::<Value>(request).await {
        Ok(v) if v.is_object() => Ok(Some(v)),
        Ok(_) => Err(Error::Response {
            path: path.to_string(),
            what: "not a JSON object".into(),
        }),
        Err(kube::Error::Api(status)) if status.is_not_found() => Ok(None),
        Err(e) => Err(api(e)),
    }
}
