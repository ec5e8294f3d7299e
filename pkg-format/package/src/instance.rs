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
//! The decisions themselves (validation, `immutable`, `trigger`, `oldName`, the plan) are
//! [`kudo_policy::change`]'s, the same the cluster commands, the admission webhook and the manager
//! call; [`update`] and [`upgrade`] run them on a file.
//!
//! The file is changed with `kudo_yaml::edit`: only the parameter values that change (and, on
//! upgrade, `apiVersion` and `spec.operatorVersion.name`) are touched; comments stay. Any
//! refusal returns every problem and no text.

use std::path::Path;

use serde_json::{Map, Value};

use crate::package::Package;
use kudo_diag::diag::{Code, Diagnostic, Origin};
use kudo_diag::{Error, Result};
use kudo_policy::change::{self, Decision, Installed, Proposal, Version};
use kudo_policy::params::Params;
use kudo_policy::values::{Override, Reset};
use kudo_yaml::document::Document;
use kudo_yaml::edit::{self, Edit};

/// `apiVersion` of v1beta1 Instances (flat string values) and of v1beta2 ones (structured
/// values): the same strings as the two `params.yaml` formats.
pub use kudo_policy::params::{V1BETA1, V1BETA2};

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

    /// `metadata.deletionTimestamp` is set: the Instance was being deleted when it was
    /// exported, so the policy's `deleting` rule applies as the webhook applies it.
    pub fn deleting(&self) -> bool {
        self.doc
            .value()
            .pointer("/metadata/deletionTimestamp")
            .is_some_and(|t| !t.is_null())
    }

    /// The Instance as the policy sees it: at rest, unless its file says it is being deleted.
    fn installed<'a>(&self, version: &'a Version, values: &'a Value) -> Installed<'a> {
        Installed {
            deleting: self.deleting(),
            ..Installed::at_rest(version, values)
        }
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

    /// Whether `spec.parametersFrom` names Secrets (whose values kudo does not read offline).
    pub fn names_secrets(&self) -> bool {
        self.doc
            .value()
            .pointer("/spec/parametersFrom")
            .and_then(Value::as_array)
            .is_some_and(|a| !a.is_empty())
    }

    /// `spec.immutableDefaults` (installed defaults an upgrade kept), when set.
    pub fn kept(&self) -> Option<Value> {
        self.doc
            .value()
            .pointer("/spec/immutableDefaults")
            .filter(|v| v.is_object())
            .cloned()
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
        let (typed, problems) =
            kudo_policy::typing::instance_values(p, raw.as_object().unwrap_or(&Map::new()));
        if problems.is_empty() {
            Ok(Value::Object(typed))
        } else {
            Err(problems)
        }
    }
}

/// The outcome of [`update`] and [`upgrade`] on a file.
#[derive(Clone)]
pub struct Edited {
    /// The new file text (identical to the old one when nothing changed).
    pub text: String,
    /// What the change does ([`kudo_policy::change`]).
    pub decision: Decision,
}

/// The new text holds the values, secrets included: `Debug` shows its size only.
impl std::fmt::Debug for Edited {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Edited")
            .field("text_bytes", &self.text.len())
            .field("decision", &self.decision)
            .finish()
    }
}

/// Applies `--reset` pointers, `-P` files and `-p` overrides to the Instance in `file`, for the
/// package `pkg` ([`change::update`]), and edits the file.
pub fn update(
    file: &InstanceFile,
    pkg: &Package,
    files: &[Document],
    overrides: &[Override],
    resets: &[Reset],
) -> std::result::Result<Edited, Vec<Diagnostic>> {
    let current = file.parameters(pkg.params())?;
    let version = pkg.policy_version()?;
    let kept = file.kept();
    let installed = Installed {
        kept: kept.as_ref(),
        secrets_elsewhere: file.names_secrets(),
        ..file.installed(&version, &current)
    };
    let proposal = Proposal::Edits {
        files,
        overrides,
        resets,
    };
    let decision = change::update(&installed, proposal).map_err(|d| pkg.located(d))?;
    no_new_secrets(&version, &current, &decision).map_err(|d| pkg.located(d))?;
    let stored = stored_form(file.api_version(), &decision.explicit);
    let edits = edit::edits_between(
        &["spec", "parameters"],
        Some(&file.raw_parameters()),
        Some(&stored),
    );
    let text = apply(file, &edits)?;
    Ok(Edited { text, decision })
}

/// Upgrades the Instance in `file` from `old_pkg` (installed) to `new_pkg`
/// ([`change::upgrade`]), and edits the file.
pub fn upgrade(
    file: &InstanceFile,
    old_pkg: &Package,
    new_pkg: &Package,
    files: &[Document],
    overrides: &[Override],
    allow: &kudo_policy::preflight::Allow,
) -> std::result::Result<Edited, Vec<Diagnostic>> {
    if let Some(name) = file.operator_version_name() {
        let expected = old_pkg.operator_version_name();
        if !old_pkg.is_operator_version(name) {
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
    let from = old_pkg.policy_version()?;
    let to = new_pkg.policy_version()?;
    let kept = file.kept();
    let installed = Installed {
        kept: kept.as_ref(),
        secrets_elsewhere: file.names_secrets(),
        ..file.installed(&from, &current)
    };
    let proposal = Proposal::Edits {
        files,
        overrides,
        resets: &[],
    };
    let decision =
        change::upgrade(&installed, &to, proposal, allow).map_err(|d| new_pkg.located(d))?;
    let api = match new_pkg.params() {
        Params::V1beta1(_) if file.api_version() == V1BETA1 => V1BETA1,
        _ => V1BETA2,
    };
    no_new_secrets(&to, &current, &decision).map_err(|d| new_pkg.located(d))?;
    let stored = stored_form(api, &decision.explicit);
    let mut edits = Vec::new();
    if api != file.api_version() {
        edits.push(Edit::Set {
            path: vec!["apiVersion".into()],
            value: Value::String(api.into()),
        });
    }
    edits.push(Edit::Set {
        path: vec!["spec".into(), "operatorVersion".into(), "name".into()],
        value: Value::String(to.name.clone()),
    });
    edits.extend(edit::edits_between(
        &["spec", "parameters"],
        Some(&file.raw_parameters()),
        Some(&stored),
    ));
    let kept_now = Some(&decision.kept).filter(|k| k.as_object().is_some_and(|m| !m.is_empty()));
    if kept_now != kept.as_ref() {
        edits.extend(edit::edits_between(
            &["spec", "immutableDefaults"],
            kept.as_ref(),
            kept_now,
        ));
    }
    let text = apply(file, &edits)?;
    Ok(Edited { text, decision })
}

/// A `writeOnly` value the edit would write into the file (new or changed) is refused: an
/// Instance file is kept in git and read by anyone who may read Instances once applied (the
/// admission webhook refuses it too). A value the file already held is left as it is.
fn no_new_secrets(
    v: &Version,
    current: &Value,
    decision: &Decision,
) -> std::result::Result<(), Vec<Diagnostic>> {
    let refused: Vec<Diagnostic> = kudo_policy::secrets::pointers(&v.schema, &decision.explicit)
        .into_iter()
        .filter(|p| decision.explicit.pointer(p) != v.typed(current).pointer(p))
        .map(|p| {
            Diagnostic::error(
                Code::SecretInInstance,
                &p,
                "is writeOnly: an Instance file never holds its value",
            )
            .with_origin(decision.values.origin(&p))
            .with_help(format!(
                "put it in a Secret and name it in spec.parametersFrom ({{secretRef: {{name: NAME, key: KEY}}, pointer: {p}}}); in a cluster, kudo update --instance does this"
            ))
        })
        .collect();
    if refused.is_empty() {
        Ok(())
    } else {
        Err(refused)
    }
}

/// Values as an Instance of `api_version` stores them (v1beta1: strings, as KUDO did).
fn stored_form(api_version: &str, values: &Value) -> Value {
    if api_version == V1BETA1 {
        kudo_policy::typing::to_v1beta1_strings(values)
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
    fn ov(args: &[&str]) -> Vec<Override> {
        Override::parse_all(args).unwrap()
    }

    fn rs(args: &[&str]) -> Vec<Reset> {
        Reset::parse_all(args).unwrap()
    }

    use super::*;
    use serde_json::json;

    fn cassandra() -> Package {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/cassandra-v1beta2");
        Package::load(&dir).unwrap()
    }

    #[test]
    fn update_edits_only_the_changed_values_and_reports_the_plan() {
        let pkg = cassandra();
        let text = "apiVersion: kudo.dev/v1beta2\nkind: Instance\nmetadata:\n  name: db # mine\nspec:\n  parameters:\n    logLevel: DEBUG\n";
        let file = InstanceFile::parse(Path::new("i.yaml"), text).unwrap();
        let out = update(&file, &pkg, &[], &ov(&["backup/enabled=true"]), &[]).unwrap();
        assert_eq!(out.decision.plan.as_deref(), Some("backup-update"));
        assert!(out.text.contains("# mine"), "{}", out.text);
        assert_eq!(
            out.decision.explicit,
            json!({"logLevel": "DEBUG", "backup": {"enabled": true}})
        );
    }

    #[test]
    fn reset_takes_the_value_out_of_the_file() {
        let pkg = cassandra();
        let text = "apiVersion: kudo.dev/v1beta2\nkind: Instance\nmetadata:\n  name: db\nspec:\n  parameters:\n    logLevel: DEBUG # loud\n    nodeCount: 5\n";
        let file = InstanceFile::parse(Path::new("i.yaml"), text).unwrap();
        let out = update(&file, &pkg, &[], &[], &rs(&["logLevel"])).unwrap();
        assert_eq!(out.decision.explicit, json!({"nodeCount": 5}));
        assert_eq!(out.decision.plan.as_deref(), Some("update"));
        assert!(!out.text.contains("logLevel"), "{}", out.text);
    }

    /// Issue 23: an Instance file exported while it was being deleted is refused as the webhook
    /// refuses it, for update and upgrade alike.
    #[test]
    fn a_file_with_a_deletion_timestamp_is_being_deleted() {
        let pkg = cassandra();
        let text = "apiVersion: kudo.dev/v1beta2\nkind: Instance\nmetadata:\n  name: db\n  deletionTimestamp: \"2024-05-01T10:00:00Z\"\nspec:\n  parameters:\n    nodeCount: 5\n";
        let file = InstanceFile::parse(Path::new("i.yaml"), text).unwrap();
        assert!(file.deleting());
        let codes = |r: std::result::Result<Edited, Vec<Diagnostic>>| {
            r.map(|o| o.decision.plan)
                .map_err(|d| d.iter().map(|d| d.code).collect::<Vec<_>>())
        };
        let change = ov(&["nodeCount=4"]);
        assert_eq!(
            codes(update(&file, &pkg, &[], &change, &[])),
            Err(vec![Code::Deleting])
        );
        assert_eq!(
            codes(update(&file, &pkg, &[], &[], &rs(&["nodeCount"]))),
            Err(vec![Code::Deleting])
        );
        // Nothing changes: a rewrite, allowed.
        assert_eq!(
            codes(update(&file, &pkg, &[], &ov(&["nodeCount=5"]), &[])),
            Ok(None)
        );
        let kep33 = |v: &str| {
            let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/kep33");
            Package::load(&dir.join(v)).unwrap()
        };
        let old = "apiVersion: kudo.dev/v1beta1\nkind: Instance\nmetadata:\n  name: i\n  deletionTimestamp: \"2024-05-01T10:00:00Z\"\nspec:\n  operatorVersion:\n    name: my-operator-0.1.0\n  parameters:\n    CLUSTER_NAME: c\n";
        let old = InstanceFile::parse(Path::new("i.yaml"), old).unwrap();
        assert_eq!(
            codes(upgrade(
                &old,
                &kep33("v1"),
                &kep33("v2"),
                &[],
                &[],
                &Default::default()
            )),
            Err(vec![Code::Deleting])
        );
        let at_rest = text.replace("  deletionTimestamp: \"2024-05-01T10:00:00Z\"\n", "");
        let file = InstanceFile::parse(Path::new("i.yaml"), &at_rest).unwrap();
        assert!(!file.deleting());
        assert_eq!(
            codes(update(&file, &pkg, &[], &change, &[])),
            Ok(Some("update".into()))
        );
    }
}
