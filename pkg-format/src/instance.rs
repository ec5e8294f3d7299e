//! Updating and upgrading a KUDO Instance manifest kept in a file (as teams that keep their
//! Instances in git and apply them with kubectl do), with the same rules as the cluster side.
//!
//! An Instance's `spec.parameters` holds what the user set, not the defaults: the defaults
//! come from the OperatorVersion. So the file keeps that shape:
//! - `-P` files merge into the values of the file (RFC 7396: `null` removes a value, which
//!   then falls back to its default again);
//! - each `-p` sets its value; when its path goes through an array, the whole array is written
//!   (arrays are values, as in merge patches), with the defaults of its items filled in;
//! - the effective parameters (defaults applied) before and after are what validation,
//!   `immutable` and `trigger` look at.
//!
//! [`install`], [`update_parameters`] and [`upgrade_parameters`] are these rules on an
//! Instance's parameters alone (what the cluster commands call); [`update`] and [`upgrade`]
//! run them on a file.
//!
//! The file is changed with [`crate::edit`]: only the parameter values that change (and, on
//! upgrade, `apiVersion` and `spec.operatorVersion.name`) are touched; comments stay. Any
//! refusal returns every problem and no text.

use std::path::Path;

use serde_json::{Map, Value};

use crate::diag::{Code, Diagnostic, Origin};
use crate::document::Document;
use crate::edit::{self, Edit};
use crate::migrate::{self, Report};
use crate::package::Package;
use crate::params::Params;
use crate::pointer;
use crate::trigger::{self, Selection};
use crate::validate::Validator;
use crate::values::{Inputs, Override, Values, effective};
use crate::{Error, Result, convert, immutable};

/// `apiVersion` of v1beta1 Instances (flat string values).
pub const V1BETA1: &str = "kudo.dev/v1beta1";
/// `apiVersion` of v1beta2 Instances (structured values).
pub const V1BETA2: &str = "kudo.dev/v1beta2";

/// An Instance manifest read from a file.
#[derive(Debug, Clone)]
pub struct InstanceFile {
    doc: Document,
    text: String,
    api_version: String,
}

impl InstanceFile {
    /// Parses an Instance manifest; anything else (another kind, another group) is refused.
    pub fn parse(path: &Path, text: &str) -> Result<InstanceFile> {
        let doc = Document::parse(path, text)?;
        let invalid = |pointer: &str, message: String| Error::Invalid {
            path: path.to_path_buf(),
            location: doc.location(pointer).map(|l| (l.line, l.col)),
            message,
        };
        let v = doc.value();
        if v.get("kind").and_then(Value::as_str) != Some("Instance") {
            return Err(invalid(
                "/kind",
                format!(
                    "not a KUDO Instance: kind is {}",
                    v.get("kind").unwrap_or(&Value::Null)
                ),
            ));
        }
        let api_version = match v.get("apiVersion").and_then(Value::as_str) {
            Some(a @ (V1BETA1 | V1BETA2)) => a.to_string(),
            other => {
                return Err(invalid(
                    "/apiVersion",
                    format!(
                        "unsupported apiVersion {other:?}: an Instance is {V1BETA1} or {V1BETA2}"
                    ),
                ));
            }
        };
        match v.pointer("/spec/parameters") {
            None | Some(Value::Null | Value::Object(_)) => {}
            Some(_) => {
                return Err(invalid(
                    "/spec/parameters",
                    "spec.parameters must be a mapping".into(),
                ));
            }
        }
        Ok(InstanceFile {
            text: text.to_string(),
            api_version,
            doc,
        })
    }

    /// The manifest as parsed.
    pub fn document(&self) -> &Document {
        &self.doc
    }

    /// `apiVersion`.
    pub fn api_version(&self) -> &str {
        &self.api_version
    }

    /// `spec.operatorVersion.name`, when set.
    pub fn operator_version_name(&self) -> Option<&str> {
        self.doc
            .value()
            .pointer("/spec/operatorVersion/name")
            .and_then(Value::as_str)
    }

    /// `spec.parameters` as written (an empty object when absent).
    pub fn raw_parameters(&self) -> Value {
        match self.doc.value().pointer("/spec/parameters") {
            Some(v @ Value::Object(_)) => v.clone(),
            _ => Value::Object(Map::new()),
        }
    }

    /// The parameters typed for `params`: a v1beta1 Instance's string values are typed by the
    /// v1beta1 parameters (a v1beta1 Instance cannot hold a v1beta2 package's values).
    pub fn parameters(&self, params: &Params) -> std::result::Result<Value, Vec<Diagnostic>> {
        let raw = self.raw_parameters();
        if self.api_version != V1BETA1 {
            return Ok(raw);
        }
        let Params::V1beta1(p) = params else {
            return Err(vec![Diagnostic::error(
                Code::Conversion,
                "",
                format!(
                    "this {V1BETA1} Instance holds flat string values, but its package has {V1BETA2} parameters"
                ),
            )
            .with_help("move the Instance to the new parameters with `kudo upgrade`")]);
        };
        let (typed, problems) = convert::instance_values(p, raw.as_object().unwrap_or(&Map::new()));
        if problems.is_empty() {
            Ok(Value::Object(typed))
        } else {
            Err(problems)
        }
    }
}

/// A parameter change computed for an Instance, before anything is written anywhere: the one
/// computation behind `kudo install`, `kudo update` and `kudo upgrade`, whether the Instance is
/// kept in a file or in a cluster.
#[derive(Debug, Clone)]
pub struct Change {
    /// The effective parameters after the change (defaults applied).
    pub values: Values,
    /// The values to store in `spec.parameters` (typed, as a `kudo.dev/v1beta2` Instance holds
    /// them): what the user set, not the defaults.
    pub written: Value,
    /// The plan to run and every changed path. On upgrade: the upgrade plan, no paths.
    pub selection: Selection,
    /// Warnings (accepted, but worth reading).
    pub warnings: Vec<Diagnostic>,
    /// The migration report (upgrade only).
    pub report: Option<Report>,
}

/// The parameters of a new Instance of `pkg`: the defaults, then the `-P` files, then the `-p`
/// overrides, validated once (what `kudo params` computes). [`Change::written`] holds only the
/// values given (`-P`, `-p`), not the defaults; the plan is `deploy`.
pub fn install(
    pkg: &Package,
    files: &[Document],
    overrides: &[String],
) -> std::result::Result<Change, Vec<Diagnostic>> {
    let schema = pkg.schema();
    let (values, warnings) = crate::validate::resolve(schema, &inputs(None, files, overrides))?;
    let written = explicit(&Value::Object(Map::new()), files, overrides, values.value());
    Ok(Change {
        values,
        written,
        selection: Selection {
            plan: Some("deploy".into()),
            changes: Vec::new(),
        },
        warnings,
        report: None,
    })
}

/// Applies `-P` files and `-p` overrides to `current` (an Instance's typed `spec.parameters`)
/// for the package `pkg`: validation, the `immutable` checks and the plan selection (one plan
/// per update). Every problem is returned at once. `selection.plan` is `None` when nothing
/// changes.
pub fn update_parameters(
    pkg: &Package,
    current: &Value,
    files: &[Document],
    overrides: &[String],
) -> std::result::Result<Change, Vec<Diagnostic>> {
    let schema = pkg.schema();
    let validator = Validator::new(schema)?;
    let (old, _) = effective(schema, &inputs(Some(current.clone()), &[], &[]));
    let (new, mut problems) = effective(schema, &inputs(Some(current.clone()), files, overrides));
    problems.extend(validator.validate(&new));
    problems.extend(with_origins(
        &new,
        immutable::check_update(schema, old.value(), new.value()),
    ));
    let plans: Vec<&str> = pkg.operator().plans.keys().map(String::as_str).collect();
    let selection = match trigger::select(schema, &plans, old.value(), new.value()) {
        Ok(s) => Some(s),
        Err(d) => {
            problems.extend(with_origins(&new, d));
            None
        }
    };
    let (errors, warnings): (Vec<_>, Vec<_>) = problems.into_iter().partition(|d| d.is_error());
    if !errors.is_empty() {
        return Err(errors);
    }
    let written = explicit(current, files, overrides, new.value());
    Ok(Change {
        values: new,
        written,
        selection: selection.unwrap_or(Selection {
            plan: None,
            changes: Vec::new(),
        }),
        warnings,
        report: None,
    })
}

/// Upgrades `current` (the typed `spec.parameters` of an Instance of `old_pkg`) to `new_pkg`:
/// `oldName` migration, then `-P` and `-p`, then validation and the immutable checks. The
/// plan is the new version's `upgrade` plan, else `deploy`.
pub fn upgrade_parameters(
    old_pkg: &Package,
    new_pkg: &Package,
    current: &Value,
    files: &[Document],
    overrides: &[String],
) -> std::result::Result<Change, Vec<Diagnostic>> {
    let old_version = version(old_pkg);
    let schema = new_pkg.schema();
    let validator = Validator::new(schema)?;
    let m = migrate::migrate(old_pkg.schema(), current, schema, &old_version)?;
    let migrated = m.explicit.clone();
    let (new, mut problems) = effective(schema, &inputs(Some(migrated.clone()), files, overrides));
    problems.extend(validator.validate(&new));
    problems.extend(with_origins(
        &new,
        immutable::check_update(schema, m.values.value(), new.value()),
    ));
    problems.extend(immutable::check_unset(schema, new.value()));
    let (errors, mut warnings): (Vec<_>, Vec<_>) = problems.into_iter().partition(|d| d.is_error());
    if !errors.is_empty() {
        return Err(errors);
    }
    warnings.extend(m.report.warnings());
    let written = explicit(&migrated, files, overrides, new.value());
    let plan = ["upgrade", "deploy"]
        .into_iter()
        .find(|p| new_pkg.operator().plans.contains_key(*p))
        .map(String::from);
    Ok(Change {
        values: new,
        written,
        selection: Selection {
            plan,
            changes: Vec::new(),
        },
        warnings,
        report: Some(m.report),
    })
}

/// The outcome of [`update`] and [`upgrade`] on a file.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The new file text (identical to the old one when nothing changed).
    pub text: String,
    /// The effective parameters after the change (defaults applied).
    pub values: Values,
    /// The values written to `spec.parameters`.
    pub written: Value,
    /// The plan to run and every changed path. On upgrade: the upgrade plan.
    pub selection: Selection,
    /// Warnings (accepted, but worth reading).
    pub warnings: Vec<Diagnostic>,
    /// The migration report (upgrade only).
    pub report: Option<Report>,
}

impl Outcome {
    fn new(text: String, c: Change) -> Outcome {
        Outcome {
            text,
            values: c.values,
            written: c.written,
            selection: c.selection,
            warnings: c.warnings,
            report: c.report,
        }
    }
}

/// Applies `-P` files and `-p` overrides to the Instance in `file`, for the package `pkg`
/// ([`update_parameters`]), and edits the file.
pub fn update(
    file: &InstanceFile,
    pkg: &Package,
    files: &[Document],
    overrides: &[String],
) -> std::result::Result<Outcome, Vec<Diagnostic>> {
    let current = file.parameters(pkg.params())?;
    let change = update_parameters(pkg, &current, files, overrides)?;
    let stored = stored_form(file.api_version(), &change.written);
    let edits = edit::edits_between(
        &["spec", "parameters"],
        Some(&file.raw_parameters()),
        Some(&stored),
    );
    let text = apply(file, &edits)?;
    Ok(Outcome::new(text, change))
}

/// Upgrades the Instance in `file` from `old_pkg` (installed) to `new_pkg`
/// ([`upgrade_parameters`]), and edits the file.
pub fn upgrade(
    file: &InstanceFile,
    old_pkg: &Package,
    new_pkg: &Package,
    files: &[Document],
    overrides: &[String],
) -> std::result::Result<Outcome, Vec<Diagnostic>> {
    let old_version = version(old_pkg);
    if let Some(name) = file.operator_version_name() {
        let expected = format!("{}-{}", old_pkg.operator().name, old_version);
        if name != expected {
            return Err(vec![
                Diagnostic::error(
                    Code::Version,
                    "",
                    format!("the Instance runs operator version {name}, but --from is {expected}"),
                )
                .with_help("pass the package of the version the Instance runs as --from"),
            ]);
        }
    }
    let current = file.parameters(old_pkg.params())?;
    let change = upgrade_parameters(old_pkg, new_pkg, &current, files, overrides)?;
    let api = match new_pkg.params() {
        Params::V1beta1(_) if file.api_version() == V1BETA1 => V1BETA1,
        _ => V1BETA2,
    };
    let stored = stored_form(api, &change.written);
    let mut edits = Vec::new();
    if api != file.api_version() {
        edits.push(Edit::Set {
            path: vec!["apiVersion".into()],
            value: Value::String(api.into()),
        });
    }
    edits.push(Edit::Set {
        path: vec!["spec".into(), "operatorVersion".into(), "name".into()],
        value: Value::String(format!("{}-{}", new_pkg.operator().name, version(new_pkg))),
    });
    edits.extend(edit::edits_between(
        &["spec", "parameters"],
        Some(&file.raw_parameters()),
        Some(&stored),
    ));
    let text = apply(file, &edits)?;
    Ok(Outcome::new(text, change))
}

/// Each problem about a changed value says where the new value came from (`-p` argument N,
/// a `-P` file, the Instance file).
fn with_origins(values: &Values, diags: Vec<Diagnostic>) -> Vec<Diagnostic> {
    diags
        .into_iter()
        .map(|d| {
            let origin = values.origin(&d.pointer);
            d.with_origin(origin)
        })
        .collect()
}

/// The package's operator version (`operatorVersion`, or the legacy `version`).
fn version(pkg: &Package) -> String {
    pkg.operator().operator_version.clone().unwrap_or_default()
}

fn inputs<'a>(
    current: Option<Value>,
    files: &'a [Document],
    overrides: &'a [String],
) -> Inputs<'a> {
    Inputs {
        current,
        files,
        overrides,
    }
}

/// The values to write: the file's values with the `-P` files merged in, then each `-p` value
/// (the whole array when it goes through one), taken from the effective result.
fn explicit(current: &Value, files: &[Document], overrides: &[String], effective: &Value) -> Value {
    let mut out = current.clone();
    for f in files {
        if !f.value().is_null() {
            json_patch::merge(&mut out, f.value());
        }
    }
    if !out.is_object() {
        out = Value::Object(Map::new());
    }
    for (i, arg) in overrides.iter().enumerate() {
        let Ok(ov) = Override::parse(i + 1, arg) else {
            continue;
        };
        // Write from the outermost array on the way, else the value itself.
        let mut end = ov.tokens.len();
        for k in 1..=ov.tokens.len() {
            if effective
                .pointer(&pointer::from_tokens(&ov.tokens[..k]))
                .is_some_and(Value::is_array)
            {
                end = k;
                break;
            }
        }
        let at = &ov.tokens[..end];
        if let Some(v) = effective.pointer(&pointer::from_tokens(at)) {
            pointer::set_creating(&mut out, at, v.clone());
        }
    }
    out
}

/// Values as an Instance of `api_version` stores them (v1beta1: strings, as KUDO did).
fn stored_form(api_version: &str, values: &Value) -> Value {
    if api_version == V1BETA1 {
        convert::to_v1beta1_strings(values)
    } else {
        values.clone()
    }
}

fn apply(file: &InstanceFile, edits: &[Edit]) -> std::result::Result<String, Vec<Diagnostic>> {
    if edits.is_empty() {
        return Ok(file.text.clone());
    }
    edit::apply(&file.text, edits).map_err(|e| {
        vec![
            Diagnostic::error(
                Code::YamlSyntax,
                "",
                format!("cannot edit {}: {e}", file.doc.path().display()),
            )
            .with_origin(Origin::None),
        ]
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn cassandra() -> Package {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/cassandra-v1beta2");
        Package::load(&dir).unwrap()
    }

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn install_writes_the_given_values_only_and_whole_arrays_through_which_a_value_is_set() {
        let pkg = cassandra();
        let c = install(
            &pkg,
            &[],
            &args(&["nodeCount=5", "topology/0/datacenterName=DC1"]),
        )
        .unwrap();
        let topology = c.values.value()["topology"].clone();
        assert_eq!(topology[0]["datacenterName"], json!("DC1"));
        assert_eq!(
            c.written,
            json!({"nodeCount": 5, "topology": topology}),
            "defaults stay out, the array goes whole"
        );
        assert_eq!(c.selection.plan.as_deref(), Some("deploy"));
    }

    #[test]
    fn install_with_nothing_given_writes_nothing() {
        let c = install(&cassandra(), &[], &[]).unwrap();
        assert_eq!(c.written, json!({}));
    }

    #[test]
    fn update_parameters_select_the_plan_of_the_change_and_keep_other_values() {
        let pkg = cassandra();
        let current = json!({"logLevel": "DEBUG"});
        let c = update_parameters(&pkg, &current, &[], &args(&["backup/enabled=true"])).unwrap();
        assert_eq!(c.selection.plan.as_deref(), Some("backup-update"));
        assert_eq!(
            c.written,
            json!({"logLevel": "DEBUG", "backup": {"enabled": true}})
        );
    }

    #[test]
    fn update_parameters_refuse_an_immutable_change_and_two_plans_at_once() {
        let pkg = cassandra();
        let codes = |o: &[&str]| {
            update_parameters(&pkg, &json!({}), &[], &args(o))
                .unwrap_err()
                .iter()
                .map(|d| d.code)
                .collect::<Vec<_>>()
        };
        assert_eq!(codes(&["clusterName=x"]), [Code::ImmutableChanged]);
        assert_eq!(
            codes(&["nodeCount=4", "metrics/enabled=true"]),
            [Code::TriggerConflict, Code::TriggerConflict]
        );
    }
}
