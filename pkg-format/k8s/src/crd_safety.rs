//! CRD upgrade safety: may the CRD a package applies replace the CRD in the cluster?
//!
//! The rules are OLM v1's CRD upgrade safety preflight (operator-framework/operator-controller,
//! `internal/operator-controller/rukpak/preflights/crdupgradesafety/crdupgradesafety.go`), which
//! runs sigs.k8s.io/crdify's validations (`pkg/validations/...`) with OLM's default
//! configuration: every validation enforced as an error, `description` not enforced, `enum`
//! allowing added values, unhandled changes enforced as errors. kudo writes them down again on
//! plain JSON values:
//!
//! | [`Rule`] | unsafe when |
//! |---|---|
//! | [`Rule::Scope`] | `spec.scope` changed |
//! | [`Rule::StoredVersionRemoved`] | a version of the live `status.storedVersions` is not in the new `spec.versions` |
//! | [`Rule::ServedVersionRemoved`] | a version served by the live CRD is gone or no longer served, and objects of the CRD exist (a kudo rule) |
//! | [`Rule::RequiredAdded`] | a name was added to a `required` list (also for a new property) |
//! | [`Rule::FieldRemoved`] | a property, an array's `items` or a map's `additionalProperties` schema is gone |
//! | [`Rule::TypeChanged`] | `type` changed |
//! | [`Rule::EnumRestricted`] | an `enum` value was removed, or an `enum` was added where there was none |
//! | [`Rule::BoundTightened`] | a `maximum`/`maxLength`/`maxItems`/`maxProperties` was lowered or added, a `minimum`/`minLength`/`minItems`/`minProperties` raised or added, `exclusiveMinimum`/`exclusiveMaximum` became true, a `pattern` was added or changed |
//! | [`Rule::DefaultChanged`] | a `default` was added, changed or removed |
//! | [`Rule::Unhandled`] | any other keyword changed (`format`, `nullable`, a removed `pattern`, `x-kubernetes-*`, `allOf`/`anyOf`/`oneOf`/`not`, ...) or the schema is nested too deep to compare |
//!
//! The schemas of each version present in both CRDs are compared node by node, following
//! `properties`, `items` and `additionalProperties` (all other sub-schemas are compared whole).
//! A [`Finding`]'s path is a JSON pointer in the *value* space of the version's schema:
//! `/spec/replicas`; `*` stands for any array item or any map value (`/spec/ports/*/name`).
//! `description` changes are ignored, as OLM ignores them. Loosening changes (a bound relaxed or
//! removed, an `enum` value added, a new optional field, a `required` name removed, a schema added
//! where there was none, a new version) produce no finding.
//!
//! **Served versions.** Without a conversion webhook (`spec.conversion.strategy` absent or
//! `None`) the API server serves an object stored at one version at every other served version
//! by changing its `apiVersion` only, so each served version must accept what an older one
//! accepted. As crdify's served-version validator (OLM runs it with `Conversion: Ignore`), the
//! served versions of the new CRD are ordered by Kubernetes' version priority (v1alpha1 <
//! v1beta1 < v1beta2 < v1 < v2) and each is compared with each newer one by the same property
//! rules. The findings the live CRD's own served versions already had (same pair, path, rule and
//! message) are left out: the upgrade did not cause them. Such a finding has
//! [`Finding::served_from`] set to the older version and [`Finding::version`] to the newer.
//!
//! ```
//! use kudo_k8s::crd_safety::{self, Rule};
//! use serde_json::json;
//!
//! let schema = |kind: &str| json!({"type": "object", "properties": {
//!     "spec": {"type": "object", "properties": {"replicas": {"type": kind}}}}});
//! let crd = |kind: &str| json!({
//!     "metadata": {"name": "widgets.example.com"},
//!     "spec": {"scope": "Namespaced", "versions": [
//!         {"name": "v1", "served": true, "storage": true,
//!          "schema": {"openAPIV3Schema": schema(kind)}}]},
//!     "status": {"storedVersions": ["v1"]}});
//! let findings = crd_safety::check(&crd("integer"), &crd("string"), true);
//! assert_eq!(findings.len(), 1);
//! assert_eq!(findings[0].rule, Rule::TypeChanged);
//! assert_eq!(findings[0].path, "/spec/replicas");
//! assert_eq!(findings[0].message, "type changed from integer to string");
//! assert!(crd_safety::is_unsafe(&findings));
//! ```

use std::cmp::Reverse;
use std::collections::BTreeSet;

use kudo_diag::diag::{Code, Diagnostic};
use kudo_diag::pointer;
use serde_json::{Map, Value, json};

/// How deep [`check`] follows nested schemas (`properties`, `items`, `additionalProperties`)
/// before it gives up with one [`Rule::Unhandled`] finding; also bounds the comparison of
/// sub-schemas compared whole. Keeps the cost of bad input bounded.
pub const MAX_DEPTH: usize = 64;

/// Longest rendering of a schema keyword's value kept in a message; longer values are only
/// named ("default changed").
const MAX_SHOWN: usize = 64;

/// One finding of the comparison of a CRD in the cluster with its new version.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    /// `metadata.name` of the CRD.
    pub crd: String,
    /// The CRD version (`spec.versions[].name`) the field belongs to; `None` for CRD-wide rules
    /// (scope, stored versions). For a served-version finding, the newer of the two versions.
    pub version: Option<String>,
    /// For a served-version finding (two served versions of the new CRD compared with each
    /// other, see the [module docs](self)): the older version, whose objects `version` must
    /// accept. `None` for the comparison of the live CRD with the new one.
    pub served_from: Option<String>,
    /// JSON pointer of the field in the value space of the version's `openAPIV3Schema`:
    /// `/spec/replicas`, `/spec/items/*/name` for array items and map values (`*`), `""` for the
    /// root and for CRD-wide rules.
    pub path: String,
    /// The rule that found the change.
    pub rule: Rule,
    /// One sentence, what changed: "type changed from integer to string".
    pub message: String,
    /// `false`: unsafe, refuses the upgrade; `true`: informational.
    pub safe: bool,
}

/// The rules of the comparison, each with OLM's (crdify's) name and kudo's diagnostic code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Rule {
    /// `spec.scope` changed (crdify `scope`).
    Scope,
    /// A stored version was removed from `spec.versions` (crdify `storedVersionRemoval`).
    StoredVersionRemoved,
    /// A served version was removed (or is no longer served) while objects exist (kudo's rule).
    ServedVersionRemoved,
    /// A field became required (crdify `required`).
    RequiredAdded,
    /// A field was removed (crdify `existingFieldRemoval`).
    FieldRemoved,
    /// A field's type changed (crdify `type`).
    TypeChanged,
    /// An enum lost a value or was added (crdify `enum`).
    EnumRestricted,
    /// A bound was tightened or added (crdify `maximum`, `minimum`, ... and `pattern`).
    BoundTightened,
    /// A default was added, changed or removed (crdify `default`).
    DefaultChanged,
    /// Any other change: no rule knows it to be safe (crdify `unhandled`).
    Unhandled,
}

impl Rule {
    /// kudo's diagnostic code for this rule.
    pub fn code(self) -> Code {
        match self {
            Rule::Scope => Code::ScopeChanged,
            Rule::StoredVersionRemoved => Code::StoredVersionRemoved,
            Rule::ServedVersionRemoved => Code::ServedVersionRemoved,
            Rule::RequiredAdded => Code::RequiredAdded,
            Rule::FieldRemoved => Code::FieldRemoved,
            Rule::TypeChanged => Code::TypeChanged,
            Rule::EnumRestricted => Code::EnumRestricted,
            Rule::BoundTightened => Code::BoundTightened,
            Rule::DefaultChanged => Code::DefaultChanged,
            Rule::Unhandled => Code::UnhandledChange,
        }
    }

    /// The name OLM prints for the rule: crdify's validation name (`scope`, `enum`, ...), as in
    /// OLM's message `validating upgrade for CRD "...": v1: ^.spec.foo: enum: ...`.
    ///
    /// [`Rule::ServedVersionRemoved`] has no OLM counterpart; its name, `servedVersion`, points at
    /// the nearest one, crdify's served-version validator (which compares served versions with
    /// each other; kudo does that too, reporting by the property rules with
    /// [`Finding::served_from`] set).
    pub fn olm_name(self) -> &'static str {
        match self {
            Rule::Scope => "scope",
            Rule::StoredVersionRemoved => "storedVersionRemoval",
            Rule::ServedVersionRemoved => "servedVersion",
            Rule::RequiredAdded => "required",
            Rule::FieldRemoved => "existingFieldRemoval",
            Rule::TypeChanged => "type",
            Rule::EnumRestricted => "enum",
            Rule::BoundTightened => {
                "maximum, maxLength, maxItems, maxProperties, minimum, minLength, minItems, minProperties, pattern"
            }
            Rule::DefaultChanged => "default",
            Rule::Unhandled => "unhandled",
        }
    }

    /// Every rule, in the order findings of one path are sorted in.
    pub fn all() -> &'static [Rule] {
        &[
            Rule::Scope,
            Rule::StoredVersionRemoved,
            Rule::ServedVersionRemoved,
            Rule::RequiredAdded,
            Rule::FieldRemoved,
            Rule::TypeChanged,
            Rule::EnumRestricted,
            Rule::BoundTightened,
            Rule::DefaultChanged,
            Rule::Unhandled,
        ]
    }
}

impl Finding {
    /// The finding as a diagnostic: an error (a warning when safe) with [`Rule::code`], the
    /// path as pointer and the message "CRD {crd}, version {v}: {message} (OLM rule {name})",
    /// or "CRD {crd}, served versions {older} → {newer}: ..." for a served-version finding.
    pub fn to_diagnostic(&self) -> Diagnostic {
        let message = match (&self.served_from, &self.version) {
            (Some(older), Some(newer)) => format!(
                "CRD {}, served versions {older} → {newer}: {} (OLM rule {})",
                self.crd,
                self.message,
                self.rule.olm_name()
            ),
            (_, Some(version)) => format!(
                "CRD {}, version {version}: {} (OLM rule {})",
                self.crd,
                self.message,
                self.rule.olm_name()
            ),
            (_, None) => format!(
                "CRD {}: {} (OLM rule {})",
                self.crd,
                self.message,
                self.rule.olm_name()
            ),
        };
        if self.safe {
            Diagnostic::warning(self.rule.code(), self.path.as_str(), message)
        } else {
            Diagnostic::error(self.rule.code(), self.path.as_str(), message)
        }
    }

    /// The finding as JSON: `{"crd", "version", "servedFrom", "path", "rule", "code", "message",
    /// "safe"}` (`rule` is OLM's name, `code` kudo's; `servedFrom` is `null` but for a
    /// served-version finding).
    pub fn to_json(&self) -> Value {
        json!({
            "crd": self.crd,
            "version": self.version,
            "servedFrom": self.served_from,
            "path": self.path,
            "rule": self.rule.olm_name(),
            "code": self.rule.code().as_str(),
            "message": self.message,
            "safe": self.safe,
        })
    }

    /// What tells two findings of one CRD apart, in the order findings are sorted by.
    fn key(&self) -> (Option<&str>, Option<&str>, &str, Rule, &str) {
        (
            self.version.as_deref(),
            self.served_from.as_deref(),
            &self.path,
            self.rule,
            &self.message,
        )
    }
}

/// True when any finding is unsafe.
pub fn is_unsafe(findings: &[Finding]) -> bool {
    findings.iter().any(|f| !f.safe)
}

/// Compares the CRD in the cluster (`live`, as the API server returns it: spec +
/// `status.storedVersions`) with the CRD a package would apply (`new`, as rendered, no status).
/// `objects_exist`: the cluster holds objects of this CRD (the caller lists them); only then is
/// a removed served version unsafe.
///
/// Without a conversion webhook in `new`, the served versions of `new` are also compared with
/// each other, less what those of `live` already had (see the [module docs](self)).
///
/// Findings are sorted by version (CRD-wide first), older served version (none first), path,
/// rule and message.
pub fn check(live: &Value, new: &Value, objects_exist: bool) -> Vec<Finding> {
    let crd = text_at(new, "/metadata/name")
        .or_else(|| text_at(live, "/metadata/name"))
        .unwrap_or_default()
        .to_string();
    let mut found = Findings::of(&crd);

    // crdify pkg/validations/crd/scope/scope.go
    let live_scope = text_at(live, "/spec/scope").unwrap_or_default();
    let new_scope = text_at(new, "/spec/scope").unwrap_or_default();
    if live_scope != new_scope {
        found.unsafe_at(
            "",
            Rule::Scope,
            format!(
                "scope changed from {} to {}",
                or_none(live_scope),
                or_none(new_scope)
            ),
        );
    }

    let live_versions = versions(live);
    let new_versions = versions(new);
    let find_new = |name: &str| new_versions.iter().find(|v| v.name == name);

    // crdify pkg/validations/crd/storedversionremoval/storedversionremoval.go
    let stored = live
        .pointer("/status/storedVersions")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect::<BTreeSet<_>>())
        .unwrap_or_default();
    for name in stored {
        if find_new(name).is_none() {
            found.unsafe_at(
                "",
                Rule::StoredVersionRemoved,
                format!("stored version {name} removed from spec.versions"),
            );
        }
    }

    // kudo's rule: objects stored at a version nobody serves any more cannot be read.
    for old in live_versions.iter().filter(|v| v.served) {
        let change = match find_new(old.name) {
            None => "removed",
            Some(v) if !v.served => "no longer served",
            Some(_) => continue,
        };
        found.version = Some(old.name.to_string());
        if objects_exist {
            found.unsafe_at(
                "",
                Rule::ServedVersionRemoved,
                format!("served version {change} while objects of the CRD exist"),
            );
        } else {
            found.push(
                "",
                Rule::ServedVersionRemoved,
                format!("served version {change}; no objects of the CRD exist"),
                true,
            );
        }
    }

    // crdify pkg/validators/version/same/same.go: every version present in both.
    for old in &live_versions {
        let Some(new_version) = find_new(old.name) else {
            continue;
        };
        found.version = Some(old.name.to_string());
        compare_versions(old, new_version, &mut found);
    }

    // crdify pkg/validators/version/served/served.go, with OLM's `Conversion: Ignore`: skipped
    // when the new CRD converts by webhook; the live CRD's own pairs are compared whatever its
    // conversion, and what they already found is no finding of this upgrade.
    if text_at(new, "/spec/conversion/strategy") != Some("Webhook") {
        let had = served_pairs(live, &crd);
        let known: BTreeSet<_> = had.iter().map(Finding::key).collect();
        found.list.extend(
            served_pairs(new, &crd)
                .into_iter()
                .filter(|f| !known.contains(&f.key())),
        );
    }

    let mut list = found.list;
    list.sort_by(|a, b| a.key().cmp(&b.key()));
    list.dedup();
    list
}

/// Every served version of `crd` compared with every newer served one (by [`priority`]), each
/// finding named by both.
fn served_pairs(crd: &Value, name: &str) -> Vec<Finding> {
    let mut served: Vec<Version<'_>> = versions(crd).into_iter().filter(|v| v.served).collect();
    served.sort_by(|a, b| priority(a.name).cmp(&priority(b.name)));
    let mut found = Findings::of(name);
    for (i, older) in served.iter().enumerate() {
        for newer in &served[i + 1..] {
            found.served_from = Some(older.name.to_string());
            found.version = Some(newer.name.to_string());
            compare_versions(older, newer, &mut found);
        }
    }
    found.list
}

/// Compares the schema of a version with a later one: the same version in the new CRD, or a
/// newer served version of the same CRD.
fn compare_versions(old: &Version<'_>, new: &Version<'_>, found: &mut Findings) {
    match (old.schema, new.schema) {
        (Some(a), Some(b)) => compare_schema(a, b, "", 0, found),
        (Some(_), None) => found.unsafe_at("", Rule::FieldRemoved, "schema removed".into()),
        // No schema before: nothing was validated, nothing can break (crdify flattens
        // nothing).
        (None, _) => {}
    }
}

/// A version name's place in Kubernetes' version priority, lowest first (apimachinery's
/// `version.CompareKubeAwareVersionStrings`, by which crdify orders served versions). Names of
/// the form `v<major>`, `v<major>beta<minor>`, `v<major>alpha<minor>` rank above all others: GA
/// above beta above alpha, then by major, then by minor (v1alpha1 < v2alpha1 < v1beta1 < v1beta2
/// < v1 < v2). Other names rank in reverse alphabetical order (`foo` below `bar`).
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Priority<'a> {
    /// Not a Kubernetes version name.
    Other(Reverse<&'a str>),
    /// A Kubernetes version name.
    Kube {
        stability: Stability,
        major: i64,
        minor: i64,
    },
}

/// The level of a Kubernetes version name, lowest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Stability {
    Alpha,
    Beta,
    Ga,
}

fn priority(name: &str) -> Priority<'_> {
    kube_version(name).unwrap_or(Priority::Other(Reverse(name)))
}

/// `v<major>[(alpha|beta)<minor>]` with decimal numbers, as apimachinery's
/// `^v([\d]+)(?:(alpha|beta)([\d]+))?$`.
fn kube_version(name: &str) -> Option<Priority<'_>> {
    let rest = name.strip_prefix('v')?;
    let end = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    let (major, rest) = rest.split_at(end);
    let major = decimal(major)?;
    if rest.is_empty() {
        return Some(Priority::Kube {
            stability: Stability::Ga,
            major,
            minor: 0,
        });
    }
    let (stability, minor) = match rest.strip_prefix("beta") {
        Some(minor) => (Stability::Beta, minor),
        None => (Stability::Alpha, rest.strip_prefix("alpha")?),
    };
    Some(Priority::Kube {
        stability,
        major,
        minor: decimal(minor)?,
    })
}

/// ASCII digits only (no sign), within `i64` as Go's `strconv.Atoi`.
fn decimal(text: &str) -> Option<i64> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

/// The findings of one CRD, and the version (and older served version) being compared.
struct Findings {
    crd: String,
    version: Option<String>,
    served_from: Option<String>,
    list: Vec<Finding>,
}

impl Findings {
    fn of(crd: &str) -> Findings {
        Findings {
            crd: crd.to_string(),
            version: None,
            served_from: None,
            list: Vec::new(),
        }
    }

    fn push(&mut self, path: &str, rule: Rule, message: String, safe: bool) {
        self.list.push(Finding {
            crd: self.crd.clone(),
            version: self.version.clone(),
            served_from: self.served_from.clone(),
            path: path.to_string(),
            rule,
            message,
            safe,
        });
    }

    fn unsafe_at(&mut self, path: &str, rule: Rule, message: String) {
        self.push(path, rule, message, false);
    }
}

/// One entry of `spec.versions`.
struct Version<'a> {
    name: &'a str,
    served: bool,
    schema: Option<&'a Value>,
}

/// `spec.versions` by name; the first of duplicate names wins (crdify's `GetCRDVersionByName`).
fn versions(crd: &Value) -> Vec<Version<'_>> {
    let mut out: Vec<Version<'_>> = Vec::new();
    let entries = crd
        .pointer("/spec/versions")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    for entry in entries {
        let Some(name) = entry.get("name").and_then(Value::as_str) else {
            continue;
        };
        if out.iter().any(|v| v.name == name) {
            continue;
        }
        out.push(Version {
            name,
            served: entry
                .get("served")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            schema: entry
                .pointer("/schema/openAPIV3Schema")
                .filter(|s| !s.is_null()),
        });
    }
    out
}

fn text_at<'a>(value: &'a Value, at: &str) -> Option<&'a str> {
    value.pointer(at).and_then(Value::as_str)
}

fn or_none(text: &str) -> &str {
    if text.is_empty() { "none" } else { text }
}

/// Keywords a rule (or the recursion) handles; every other keyword is compared whole and a
/// difference is [`Rule::Unhandled`].
const HANDLED: &[&str] = &[
    "description",
    "type",
    "enum",
    "required",
    "default",
    "maximum",
    "maxLength",
    "maxItems",
    "maxProperties",
    "minimum",
    "minLength",
    "minItems",
    "minProperties",
    "exclusiveMaximum",
    "exclusiveMinimum",
    "pattern",
    "properties",
    "items",
    "additionalProperties",
];

/// Compares one schema node of a version with its new self, then its children.
fn compare_schema(old: &Value, new: &Value, path: &str, depth: usize, found: &mut Findings) {
    if depth >= MAX_DEPTH {
        // Exact equality: linear in the size of the input, whatever its depth.
        if old != new {
            found.unsafe_at(
                path,
                Rule::Unhandled,
                format!("schema nested deeper than {MAX_DEPTH} levels changed; not compared"),
            );
        }
        return;
    }
    let empty = Map::new();
    let (Some(a), Some(b)) = (old.as_object(), new.as_object()) else {
        if !same(old, new, depth) {
            found.unsafe_at(
                path,
                Rule::Unhandled,
                "schema is not an object and changed".into(),
            );
        }
        return;
    };

    compare_type(a, b, path, found);
    compare_enum(a, b, path, depth, found);
    compare_required(a, b, path, found);
    compare_default(a, b, path, depth, found);
    for keyword in ["maximum", "maxLength", "maxItems", "maxProperties"] {
        compare_bound(a, b, keyword, Direction::Upper, path, found);
    }
    for keyword in ["minimum", "minLength", "minItems", "minProperties"] {
        compare_bound(a, b, keyword, Direction::Lower, path, found);
    }
    for keyword in ["exclusiveMaximum", "exclusiveMinimum"] {
        compare_exclusive(a, b, keyword, path, found);
    }
    compare_pattern(a, b, path, found);
    compare_unhandled(a, b, path, depth, found);

    // properties: crdify compares every property of the old schema (its flattened map).
    let old_properties = a
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let new_properties = b
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    for (name, old_child) in old_properties {
        let child_path = pointer::push(path, name);
        match new_properties.get(name) {
            Some(new_child) => compare_schema(old_child, new_child, &child_path, depth + 1, found),
            None => found.unsafe_at(&child_path, Rule::FieldRemoved, "field removed".into()),
        }
    }

    compare_child(
        a.get("items"),
        b.get("items"),
        "items",
        "array item schema",
        path,
        depth,
        found,
    );
    compare_child(
        a.get("additionalProperties"),
        b.get("additionalProperties"),
        "additionalProperties",
        "map value schema",
        path,
        depth,
        found,
    );
}

/// `items` or `additionalProperties`: a schema is followed (as `*`); a removed schema is a
/// removed field; any other change (a boolean, a list of schemas) is unhandled.
fn compare_child(
    old: Option<&Value>,
    new: Option<&Value>,
    keyword: &str,
    what: &str,
    path: &str,
    depth: usize,
    found: &mut Findings,
) {
    let child_path = pointer::push(path, "*");
    match (old, new) {
        (Some(a @ Value::Object(_)), Some(b @ Value::Object(_))) => {
            compare_schema(a, b, &child_path, depth + 1, found)
        }
        (Some(Value::Object(_)), None) => {
            found.unsafe_at(&child_path, Rule::FieldRemoved, format!("{what} removed"))
        }
        // A new item schema: crdify compares only the nodes of the old schema, and `items`
        // is not part of the parent's comparison.
        (None, Some(Value::Object(_))) if keyword == "items" => {}
        (a, b) => {
            let (a, b) = (a.unwrap_or(&Value::Null), b.unwrap_or(&Value::Null));
            if !same(a, b, depth) {
                found.unsafe_at(path, Rule::Unhandled, keyword_changed(keyword, a, b));
            }
        }
    }
}

/// crdify pkg/validations/property/type.go
fn compare_type(a: &Map<String, Value>, b: &Map<String, Value>, path: &str, found: &mut Findings) {
    let old = a.get("type").unwrap_or(&Value::Null);
    let new = b.get("type").unwrap_or(&Value::Null);
    if same(old, new, 0) {
        return;
    }
    let message = format!(
        "type changed from {} to {}",
        shown_or_none(old),
        shown_or_none(new)
    );
    found.unsafe_at(path, Rule::TypeChanged, message);
}

/// crdify pkg/validations/property/enum.go, with OLM's `additionPolicy: Allow`.
fn compare_enum(
    a: &Map<String, Value>,
    b: &Map<String, Value>,
    path: &str,
    depth: usize,
    found: &mut Findings,
) {
    let old = list(a.get("enum"));
    let new = list(b.get("enum"));
    let removed: Vec<&Value> = old
        .iter()
        .filter(|v| !new.iter().any(|w| same(v, w, depth)))
        .collect();
    if old.is_empty() && !new.is_empty() {
        found.unsafe_at(
            path,
            Rule::EnumRestricted,
            format!(
                "enum added where there was none: {}",
                shown_list(new.iter())
            ),
        );
    } else if !removed.is_empty() {
        let message = if new.is_empty() {
            format!(
                "enum removed; OLM counts its values as removed: {}",
                shown_list(removed.into_iter())
            )
        } else {
            format!("enum values removed: {}", shown_list(removed.into_iter()))
        };
        found.unsafe_at(path, Rule::EnumRestricted, message);
    }
}

/// crdify pkg/validations/property/required.go: every name added to `required`.
fn compare_required(
    a: &Map<String, Value>,
    b: &Map<String, Value>,
    path: &str,
    found: &mut Findings,
) {
    let old: BTreeSet<&str> = list(a.get("required"))
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let new: BTreeSet<&str> = list(b.get("required"))
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let had_property = |name: &str| a.get("properties").and_then(|p| p.get(name)).is_some();
    for name in new.difference(&old) {
        let message = if had_property(name) {
            "field became required"
        } else {
            "new required field"
        };
        found.unsafe_at(
            &pointer::push(path, name),
            Rule::RequiredAdded,
            message.into(),
        );
    }
}

/// crdify pkg/validations/property/default.go: added, removed and changed defaults.
fn compare_default(
    a: &Map<String, Value>,
    b: &Map<String, Value>,
    path: &str,
    depth: usize,
    found: &mut Findings,
) {
    let message = match (a.get("default"), b.get("default")) {
        (None, None) => return,
        (None, Some(new)) => format!("default {} added", shown(new)),
        (Some(old), None) => format!("default {} removed", shown(old)),
        (Some(old), Some(new)) if !same(old, new, depth) => {
            format!("default changed from {} to {}", shown(old), shown(new))
        }
        _ => return,
    };
    found.unsafe_at(path, Rule::DefaultChanged, message);
}

/// Which way a bound restricts.
#[derive(Clone, Copy)]
enum Direction {
    /// `maximum`, `maxLength`, ...: lowering it tightens.
    Upper,
    /// `minimum`, `minLength`, ...: raising it tightens.
    Lower,
}

/// crdify pkg/validations/property/max.go and min.go: a bound added or tightened.
fn compare_bound(
    a: &Map<String, Value>,
    b: &Map<String, Value>,
    keyword: &str,
    direction: Direction,
    path: &str,
    found: &mut Findings,
) {
    let (old, new) = (a.get(keyword), b.get(keyword));
    let message = match (old.map(number), new.map(number)) {
        (_, None) => return,
        (None, Some(Some(n))) => format!("{keyword} {} added", shown_number(n)),
        (Some(Some(o)), Some(Some(n))) => {
            let tightened = match direction {
                Direction::Upper => n < o,
                Direction::Lower => n > o,
            };
            if !tightened {
                return;
            }
            let verb = match direction {
                Direction::Upper => "lowered",
                Direction::Lower => "raised",
            };
            format!(
                "{keyword} {verb} from {} to {}",
                shown_number(o),
                shown_number(n)
            )
        }
        // Not a number on either side: not a bound crdify knows.
        _ => {
            let (o, n) = (old.unwrap_or(&Value::Null), new.unwrap_or(&Value::Null));
            if !same(o, n, 0) {
                found.unsafe_at(path, Rule::Unhandled, keyword_changed(keyword, o, n));
            }
            return;
        }
    };
    found.unsafe_at(path, Rule::BoundTightened, message);
}

/// `exclusiveMaximum`/`exclusiveMinimum` (booleans in OpenAPI v3): crdify has no rule, OLM
/// refuses any change as unhandled. kudo names the tightening one (false to true).
fn compare_exclusive(
    a: &Map<String, Value>,
    b: &Map<String, Value>,
    keyword: &str,
    path: &str,
    found: &mut Findings,
) {
    let old = a.get(keyword).unwrap_or(&Value::Null);
    let new = b.get(keyword).unwrap_or(&Value::Null);
    if same(old, new, 0) {
        return;
    }
    if is_zero(old) && new == &Value::Bool(true) {
        found.unsafe_at(path, Rule::BoundTightened, format!("{keyword} became true"));
    } else {
        found.unsafe_at(path, Rule::Unhandled, keyword_changed(keyword, old, new));
    }
}

/// crdify pkg/validations/property/pattern.go: added, changed and (by default) removed
/// patterns are refused; a removal is a loosening, so kudo reports it as unhandled.
fn compare_pattern(
    a: &Map<String, Value>,
    b: &Map<String, Value>,
    path: &str,
    found: &mut Findings,
) {
    let old = a.get("pattern").unwrap_or(&Value::Null);
    let new = b.get("pattern").unwrap_or(&Value::Null);
    if same(old, new, 0) {
        return;
    }
    if is_zero(new) {
        found.unsafe_at(
            path,
            Rule::Unhandled,
            "pattern removed (OLM's pattern rule refuses it)".into(),
        );
    } else if is_zero(old) {
        found.unsafe_at(path, Rule::BoundTightened, "pattern added".into());
    } else {
        found.unsafe_at(path, Rule::BoundTightened, "pattern changed".into());
    }
}

/// crdify pkg/validations/compare.go `checkUnhandled`: any other keyword that changed.
fn compare_unhandled(
    a: &Map<String, Value>,
    b: &Map<String, Value>,
    path: &str,
    depth: usize,
    found: &mut Findings,
) {
    let keywords: BTreeSet<&str> = a
        .keys()
        .chain(b.keys())
        .map(String::as_str)
        .filter(|k| !HANDLED.contains(k))
        .collect();
    for keyword in keywords {
        let old = a.get(keyword).unwrap_or(&Value::Null);
        let new = b.get(keyword).unwrap_or(&Value::Null);
        if !same(old, new, depth) {
            found.unsafe_at(path, Rule::Unhandled, keyword_changed(keyword, old, new));
        }
    }
}

/// "format changed from none to email", or "allOf changed" for values too long to show.
fn keyword_changed(keyword: &str, old: &Value, new: &Value) -> String {
    match (short(old), short(new)) {
        (Some(o), Some(n)) => format!("{keyword} changed from {o} to {n}"),
        _ if is_zero(old) => format!("{keyword} added"),
        _ if is_zero(new) => format!("{keyword} removed"),
        _ => format!("{keyword} changed"),
    }
}

/// A scalar keyword value as shown in a message ("none" when absent), or `None` when it is a
/// list, a map or longer than [`MAX_SHOWN`].
fn short(value: &Value) -> Option<String> {
    match value {
        Value::Null => Some("none".into()),
        Value::Array(_) | Value::Object(_) => None,
        Value::String(s) if s.is_empty() => Some("none".into()),
        Value::String(s) if s.chars().count() <= MAX_SHOWN => Some(s.clone()),
        Value::String(_) => None,
        other => Some(other.to_string()),
    }
}

fn shown_or_none(value: &Value) -> String {
    short(value).unwrap_or_else(|| "a non-string value".into())
}

/// A default or enum value as compact JSON, or `…` when longer than [`MAX_SHOWN`].
fn shown(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() <= MAX_SHOWN {
        text
    } else {
        "…".into()
    }
}

fn shown_list<'a>(values: impl Iterator<Item = &'a Value>) -> String {
    let mut texts: Vec<String> = values.map(shown).collect();
    texts.sort();
    texts.dedup();
    format!("[{}]", texts.join(", "))
}

fn shown_number(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 1e15 {
        format!("{}", n as i64)
    } else {
        n.to_string()
    }
}

fn number(value: &Value) -> Option<f64> {
    value.as_f64()
}

fn list(value: Option<&Value>) -> &[Value] {
    value
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

/// A value the API server's typed schema (Go's `JSONSchemaProps`) cannot tell from an absent
/// keyword: `null`, `false`, `""`, `[]`, `{}`.
fn is_zero(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        Value::Number(_) => false,
    }
}

/// Semantic equality, as Kubernetes' `equality.Semantic.DeepEqual` on the typed schema: numbers
/// by value, a zero value equal to an absent member, maps by key. Nested deeper than
/// [`MAX_DEPTH`] counts as different.
fn same(a: &Value, b: &Value, depth: usize) -> bool {
    if depth > MAX_DEPTH {
        return false;
    }
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_f64(), y.as_f64()) {
            (Some(x), Some(y)) => x == y,
            _ => x == y,
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y, depth + 1))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.iter().all(|(k, v)| match y.get(k) {
                Some(w) => same(v, w, depth + 1),
                None => is_zero(v),
            }) && y.iter().all(|(k, w)| x.contains_key(k) || is_zero(w))
        }
        _ if is_zero(a) && is_zero(b) => true,
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A CRD named `widgets.example.com` with the given scope, versions (name, served, schema)
    /// and stored versions.
    fn crd(scope: &str, versions: &[(&str, bool, Value)], stored: &[&str]) -> Value {
        let versions: Vec<Value> = versions
            .iter()
            .map(|(name, served, schema)| {
                json!({"name": name, "served": served, "storage": false,
                       "schema": {"openAPIV3Schema": schema}})
            })
            .collect();
        json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.example.com"},
            "spec": {"group": "example.com", "scope": scope, "versions": versions,
                     "names": {"plural": "widgets", "kind": "Widget"}},
            "status": {"storedVersions": stored},
        })
    }

    /// The root schema of a version with `spec` holding one field `field`.
    fn with_field(field: Value) -> Value {
        json!({"type": "object", "properties": {
            "spec": {"type": "object", "properties": {"field": field}}}})
    }

    /// `crd` with `spec.conversion` set to a webhook.
    fn converted_by_webhook(mut crd: Value) -> Value {
        crd["spec"]["conversion"] = json!({"strategy": "Webhook", "webhook": {
            "conversionReviewVersions": ["v1"],
            "clientConfig": {"service": {"namespace": "widgets", "name": "convert"}}}});
        crd
    }

    /// (path, rule, safe) of each finding.
    fn summary(findings: &[Finding]) -> Vec<(String, Rule, bool)> {
        findings
            .iter()
            .map(|f| (f.path.clone(), f.rule, f.safe))
            .collect()
    }

    /// Runs one schema case: `old` and `new` are the schemas of `spec.field` in version v1.
    fn schema_case(old: Value, new: Value) -> Vec<Finding> {
        let live = crd("Namespaced", &[("v1", true, with_field(old))], &["v1"]);
        let next = crd("Namespaced", &[("v1", true, with_field(new))], &[]);
        check(&live, &next, true)
    }

    struct Case {
        name: &'static str,
        old: Value,
        new: Value,
        /// Expected rules at `/spec/field` (or below); empty: safe.
        want: &'static [(&'static str, Rule)],
    }

    fn run(cases: Vec<Case>) {
        for case in cases {
            let got = schema_case(case.old, case.new);
            let want: Vec<(String, Rule, bool)> = case
                .want
                .iter()
                .map(|(p, r)| (p.to_string(), *r, false))
                .collect();
            assert_eq!(summary(&got), want, "case {}: {got:#?}", case.name);
            assert_eq!(is_unsafe(&got), !want.is_empty(), "case {}", case.name);
        }
    }

    const FIELD: &str = "/spec/field";

    // crdify pkg/validations/crd/scope/scope_test.go, TestScope: "no scope change, not
    // flagged", "scope change, flagged".
    #[test]
    fn scope_rule() {
        let schema = with_field(json!({"type": "string"}));
        let live = crd("Namespaced", &[("v1", true, schema.clone())], &["v1"]);
        let same_scope = crd("Namespaced", &[("v1", true, schema.clone())], &[]);
        assert!(check(&live, &same_scope, true).is_empty());
        let cluster = crd("Cluster", &[("v1", true, schema)], &[]);
        let got = check(&live, &cluster, true);
        assert_eq!(summary(&got), vec![(String::new(), Rule::Scope, false)]);
        assert_eq!(got[0].version, None);
        assert_eq!(got[0].message, "scope changed from Namespaced to Cluster");
    }

    // crdify pkg/validations/crd/storedversionremoval/storedversionremoval_test.go,
    // TestStoredVersionRemoval: "stored versions, no stored version removed, not flagged",
    // "stored versions, stored version removed, flagged".
    #[test]
    fn stored_version_rule() {
        let schema = with_field(json!({"type": "string"}));
        let live = crd(
            "Namespaced",
            &[
                ("v1alpha1", false, schema.clone()),
                ("v1", true, schema.clone()),
            ],
            &["v1alpha1", "v1"],
        );
        let kept = crd(
            "Namespaced",
            &[
                ("v1alpha1", false, schema.clone()),
                ("v1", true, schema.clone()),
            ],
            &[],
        );
        assert!(check(&live, &kept, true).is_empty());
        let dropped = crd("Namespaced", &[("v1", true, schema)], &[]);
        let got = check(&live, &dropped, true);
        assert_eq!(
            summary(&got),
            vec![(String::new(), Rule::StoredVersionRemoved, false)]
        );
        assert_eq!(got[0].version, None);
        assert_eq!(
            got[0].message,
            "stored version v1alpha1 removed from spec.versions"
        );
    }

    // kudo's own rule (OLM has none; the nearest is crdify
    // pkg/validators/version/served/served.go): a served version removed is unsafe only while
    // objects exist.
    #[test]
    fn served_version_rule() {
        let schema = with_field(json!({"type": "string"}));
        let live = crd(
            "Namespaced",
            &[
                ("v1beta1", true, schema.clone()),
                ("v1", true, schema.clone()),
            ],
            &["v1"],
        );
        let removed = crd("Namespaced", &[("v1", true, schema.clone())], &[]);
        let got = check(&live, &removed, true);
        assert_eq!(
            summary(&got),
            vec![(String::new(), Rule::ServedVersionRemoved, false)]
        );
        assert_eq!(got[0].version.as_deref(), Some("v1beta1"));
        // No objects: informational only.
        let got = check(&live, &removed, false);
        assert_eq!(
            summary(&got),
            vec![(String::new(), Rule::ServedVersionRemoved, true)]
        );
        assert!(!is_unsafe(&got));
        // No longer served counts as removed.
        let unserved = crd(
            "Namespaced",
            &[
                ("v1beta1", false, schema.clone()),
                ("v1", true, schema.clone()),
            ],
            &[],
        );
        let got = check(&live, &unserved, true);
        assert_eq!(got.len(), 1);
        assert_eq!(
            got[0].message,
            "served version no longer served while objects of the CRD exist"
        );
        // A new served version is fine.
        let added = crd(
            "Namespaced",
            &[
                ("v1beta1", true, schema.clone()),
                ("v1", true, schema.clone()),
                ("v2", true, schema),
            ],
            &[],
        );
        assert!(check(&live, &added, true).is_empty());
    }

    // crdify pkg/validators/version/served/served.go (OLM runs it with `Conversion: Ignore`) and
    // OLM crdupgradesafety_test.go: "webhook conversion strategy exists", "new crd validation
    // failure when missing conversion strategy and enum values removed", "success when old crd
    // and new crd contain the exact same validation issues", "failure when old crd and new crd
    // contain the exact same validation issues, but new crd introduces another validation issue".
    #[test]
    fn served_versions_rule() {
        /// A CRD with the given versions (name, served, schema of `spec.field`), no conversion.
        fn widgets(versions: &[(&str, bool, Value)]) -> Value {
            let versions: Vec<(&str, bool, Value)> = versions
                .iter()
                .map(|(name, served, field)| (*name, *served, with_field(field.clone())))
                .collect();
            crd("Namespaced", &versions, &[])
        }
        struct Case {
            name: &'static str,
            live: Value,
            new: Value,
            /// (older served version, version, path, rule) of each finding, all unsafe.
            want: &'static [(Option<&'static str>, &'static str, &'static str, Rule)],
        }
        let string = json!({"type": "string"});
        let integer = json!({"type": "integer"});
        let at_most_5 = json!({"type": "integer", "maximum": 5});
        let one_version = widgets(&[("v1beta1", true, string.clone())]);
        let two_differing = widgets(&[
            ("v1beta1", true, string.clone()),
            ("v1", true, integer.clone()),
        ]);
        let mut strategy_none = two_differing.clone();
        strategy_none["spec"]["conversion"] = json!({"strategy": "None"});
        let cases = [
            Case {
                name: "two served versions differ, no conversion",
                live: one_version.clone(),
                new: two_differing.clone(),
                want: &[(Some("v1beta1"), "v1", FIELD, Rule::TypeChanged)],
            },
            Case {
                name: "conversion strategy None written out",
                live: one_version.clone(),
                new: strategy_none,
                want: &[(Some("v1beta1"), "v1", FIELD, Rule::TypeChanged)],
            },
            Case {
                name: "conversion webhook",
                live: one_version.clone(),
                new: converted_by_webhook(two_differing.clone()),
                want: &[],
            },
            Case {
                name: "listed newest first, compared by priority",
                live: one_version.clone(),
                new: widgets(&[
                    ("v1", true, integer.clone()),
                    ("v1beta1", true, string.clone()),
                ]),
                want: &[(Some("v1beta1"), "v1", FIELD, Rule::TypeChanged)],
            },
            Case {
                name: "every pair of three served versions",
                live: one_version.clone(),
                new: widgets(&[
                    ("v1alpha1", true, string.clone()),
                    ("v1beta1", true, string.clone()),
                    ("v1", true, integer.clone()),
                ]),
                want: &[
                    (Some("v1alpha1"), "v1", FIELD, Rule::TypeChanged),
                    (Some("v1beta1"), "v1", FIELD, Rule::TypeChanged),
                ],
            },
            Case {
                name: "a version not served is not compared",
                live: one_version.clone(),
                new: widgets(&[
                    ("v1alpha1", false, integer.clone()),
                    ("v1beta1", true, string.clone()),
                    ("v1", true, string.clone()),
                ]),
                want: &[],
            },
            Case {
                name: "the live CRD had the same finding",
                live: two_differing.clone(),
                new: two_differing.clone(),
                want: &[],
            },
            Case {
                name: "the live CRD had one finding, the new CRD adds another",
                live: two_differing.clone(),
                new: widgets(&[("v1beta1", true, string.clone()), ("v1", true, at_most_5)]),
                want: &[
                    (None, "v1", FIELD, Rule::BoundTightened),
                    (Some("v1beta1"), "v1", FIELD, Rule::BoundTightened),
                ],
            },
            Case {
                name: "the live CRD had it between other versions: only the same pair counts",
                live: two_differing.clone(),
                new: widgets(&[
                    ("v1beta1", true, string.clone()),
                    ("v1", true, integer.clone()),
                    ("v2", true, integer.clone()),
                ]),
                want: &[(Some("v1beta1"), "v2", FIELD, Rule::TypeChanged)],
            },
        ];
        for case in cases {
            let got = check(&case.live, &case.new, true);
            let rows: Vec<(Option<&str>, &str, &str, Rule)> = got
                .iter()
                .map(|f| {
                    let version = f.version.as_deref().unwrap_or_default();
                    (f.served_from.as_deref(), version, f.path.as_str(), f.rule)
                })
                .collect();
            assert_eq!(rows, case.want, "case {}: {got:#?}", case.name);
            assert!(got.iter().all(|f| !f.safe), "case {}", case.name);
        }

        let got = check(&one_version, &two_differing, true);
        assert_eq!(got[0].message, "type changed from string to integer");
        let diagnostic = got[0].to_diagnostic();
        assert!(diagnostic.is_error());
        assert_eq!(diagnostic.code, Code::TypeChanged);
        assert_eq!(diagnostic.pointer.as_str(), FIELD);
        assert_eq!(
            diagnostic.message,
            "CRD widgets.example.com, served versions v1beta1 → v1: type changed from string to \
             integer (OLM rule type)"
        );
        let json = got[0].to_json();
        assert_eq!(
            (&json["servedFrom"], &json["version"]),
            (&json!("v1beta1"), &json!("v1"))
        );
    }

    // apimachinery pkg/version/helpers.go, CompareKubeAwareVersionStrings ("v2, v1, v1beta2,
    // v1beta1, v1alpha1"; names not of that form below them, in reverse alphabetical order).
    #[test]
    fn versions_rank_by_kubernetes_priority() {
        let lowest_first = [
            "v1gamma1", "v1beta", "v", "foo", "bar", "v1alpha1", "v1alpha2", "v2alpha1", "v1beta1",
            "v1beta2", "v0", "v1", "v2", "v10",
        ];
        for pair in lowest_first.windows(2) {
            let (lower, higher) = (pair[0], pair[1]);
            assert!(
                priority(lower) < priority(higher),
                "{lower} should rank below {higher}"
            );
        }
    }

    // crdify pkg/validations/property/required_test.go, TestRequired: "no diff, not flagged",
    // "new required field, flagged"; OLM crdupgradesafety_test.go "optional field addition
    // should not fail" (crd-optional-field-*.json).
    #[test]
    fn required_rule() {
        let object = |required: Value, props: Value| json!({"type": "object", "required": required, "properties": props});
        run(vec![
            Case {
                name: "optional field added",
                old: object(json!(["a"]), json!({"a": {"type": "string"}})),
                new: object(
                    json!(["a"]),
                    json!({"a": {"type": "string"}, "b": {"type": "string"}}),
                ),
                want: &[],
            },
            Case {
                name: "required name removed",
                old: object(json!(["a"]), json!({"a": {"type": "string"}})),
                new: object(json!([]), json!({"a": {"type": "string"}})),
                want: &[],
            },
            Case {
                name: "existing field became required",
                old: object(json!([]), json!({"a": {"type": "string"}})),
                new: object(json!(["a"]), json!({"a": {"type": "string"}})),
                want: &[("/spec/field/a", Rule::RequiredAdded)],
            },
            Case {
                name: "new required property",
                old: object(json!([]), json!({"a": {"type": "string"}})),
                new: object(
                    json!(["b"]),
                    json!({"a": {"type": "string"}, "b": {"type": "string"}}),
                ),
                want: &[("/spec/field/b", Rule::RequiredAdded)],
            },
        ]);
    }

    // crdify pkg/validations/crd/existingfieldremoval/existingfieldremoval_test.go,
    // TestExistingFieldRemoval: "no existing field removed, not flagged", "existing field
    // removed, flagged", "new version is added with the field removed, not flagged"; OLM
    // crdupgradesafety_test.go "new crd validation failure for existing field removal".
    #[test]
    fn field_removed_rule() {
        run(vec![
            Case {
                name: "field kept",
                old: json!({"type": "object", "properties": {"a": {"type": "string"}}}),
                new: json!({"type": "object", "properties": {"a": {"type": "string"}}}),
                want: &[],
            },
            Case {
                name: "field removed",
                old: json!({"type": "object", "properties": {"a": {"type": "string"}}}),
                new: json!({"type": "object", "properties": {}}),
                want: &[("/spec/field/a", Rule::FieldRemoved)],
            },
            Case {
                name: "array item schema removed",
                old: json!({"type": "array", "items": {"type": "string"}}),
                new: json!({"type": "array"}),
                want: &[("/spec/field/*", Rule::FieldRemoved)],
            },
        ]);
        // A new version without the field is not compared with the old one (a conversion
        // webhook keeps the served-version rule out of it, see served_versions_rule).
        let old_schema = with_field(json!({"type": "string"}));
        let live = crd(
            "Namespaced",
            &[("v1alpha1", true, old_schema.clone())],
            &["v1alpha1"],
        );
        let next = converted_by_webhook(crd(
            "Namespaced",
            &[
                ("v1alpha1", true, old_schema),
                ("v1alpha2", true, json!({"type": "object"})),
            ],
            &[],
        ));
        assert!(check(&live, &next, true).is_empty());
    }

    // crdify pkg/validations/property/type_test.go, TestType: "no diff, not flagged", "type
    // changed, flagged"; OLM crdupgradesafety_test.go "complex breaking changes should fail".
    #[test]
    fn type_rule() {
        run(vec![
            Case {
                name: "type kept",
                old: json!({"type": "integer"}),
                new: json!({"type": "integer"}),
                want: &[],
            },
            Case {
                name: "type changed",
                old: json!({"type": "integer"}),
                new: json!({"type": "string"}),
                want: &[(FIELD, Rule::TypeChanged)],
            },
            Case {
                name: "type removed",
                old: json!({"type": "object"}),
                new: json!({"x-kubernetes-preserve-unknown-fields": true}),
                want: &[(FIELD, Rule::TypeChanged), (FIELD, Rule::Unhandled)],
            },
        ]);
        let got = schema_case(json!({"type": "integer"}), json!({"type": "string"}));
        assert_eq!(got[0].message, "type changed from integer to string");
    }

    // crdify pkg/validations/property/enum_test.go, TestEnum: "new enum constraint, flagged",
    // "new allowed enum value added, addition policy set to Allow, not flagged" (OLM's
    // configuration), "removed enum value, flagged"; OLM crdupgradesafety_test.go "new crd
    // validation failure when missing conversion strategy and enum values removed".
    #[test]
    fn enum_rule() {
        run(vec![
            Case {
                name: "enum value added",
                old: json!({"type": "string", "enum": ["a", "b"]}),
                new: json!({"type": "string", "enum": ["a", "b", "c"]}),
                want: &[],
            },
            Case {
                name: "enum value removed",
                old: json!({"type": "string", "enum": ["a", "b"]}),
                new: json!({"type": "string", "enum": ["a"]}),
                want: &[(FIELD, Rule::EnumRestricted)],
            },
            Case {
                name: "enum added",
                old: json!({"type": "string"}),
                new: json!({"type": "string", "enum": ["a"]}),
                want: &[(FIELD, Rule::EnumRestricted)],
            },
            Case {
                name: "enum removed: OLM counts every value as removed",
                old: json!({"type": "string", "enum": ["a"]}),
                new: json!({"type": "string"}),
                want: &[(FIELD, Rule::EnumRestricted)],
            },
        ]);
        let got = schema_case(
            json!({"type": "string", "enum": ["a", "b"]}),
            json!({"type": "string", "enum": ["a"]}),
        );
        assert_eq!(got[0].message, "enum values removed: [\"b\"]");
    }

    // crdify pkg/validations/property/max_test.go (TestMaximum, TestMaxItems, TestMaxLength,
    // TestMaxProperties) and min_test.go (TestMinimum, TestMinItems, TestMinLength,
    // TestMinProperties): "new ... constraint, flagged", "... decreased/increased, flagged",
    // "... increased/decreased, not flagged"; pattern_test.go TestPattern.
    #[test]
    fn bound_rule() {
        let mut cases = Vec::new();
        for keyword in ["maximum", "maxLength", "maxItems", "maxProperties"] {
            cases.push(Case {
                name: "upper bound raised",
                old: json!({keyword: 10}),
                new: json!({keyword: 20}),
                want: &[],
            });
            cases.push(Case {
                name: "upper bound removed",
                old: json!({keyword: 10}),
                new: json!({}),
                want: &[],
            });
            cases.push(Case {
                name: "upper bound lowered",
                old: json!({keyword: 10}),
                new: json!({keyword: 5}),
                want: &[(FIELD, Rule::BoundTightened)],
            });
            cases.push(Case {
                name: "upper bound added",
                old: json!({}),
                new: json!({keyword: 5}),
                want: &[(FIELD, Rule::BoundTightened)],
            });
        }
        for keyword in ["minimum", "minLength", "minItems", "minProperties"] {
            cases.push(Case {
                name: "lower bound lowered",
                old: json!({keyword: 5}),
                new: json!({keyword: 1}),
                want: &[],
            });
            cases.push(Case {
                name: "lower bound raised",
                old: json!({keyword: 5}),
                new: json!({keyword: 6}),
                want: &[(FIELD, Rule::BoundTightened)],
            });
            cases.push(Case {
                name: "lower bound added",
                old: json!({}),
                new: json!({keyword: 0}),
                want: &[(FIELD, Rule::BoundTightened)],
            });
        }
        cases.push(Case {
            name: "same bound written as 10.0",
            old: json!({"maximum": 10}),
            new: json!({"maximum": 10.0}),
            want: &[],
        });
        cases.push(Case {
            name: "exclusiveMaximum became true",
            old: json!({"maximum": 10}),
            new: json!({"maximum": 10, "exclusiveMaximum": true}),
            want: &[(FIELD, Rule::BoundTightened)],
        });
        cases.push(Case {
            name: "exclusiveMinimum became false: OLM's unhandled",
            old: json!({"minimum": 1, "exclusiveMinimum": true}),
            new: json!({"minimum": 1, "exclusiveMinimum": false}),
            want: &[(FIELD, Rule::Unhandled)],
        });
        cases.push(Case {
            name: "pattern kept",
            old: json!({"type": "string", "pattern": "^a"}),
            new: json!({"type": "string", "pattern": "^a"}),
            want: &[],
        });
        cases.push(Case {
            name: "pattern added",
            old: json!({"type": "string"}),
            new: json!({"type": "string", "pattern": "^a"}),
            want: &[(FIELD, Rule::BoundTightened)],
        });
        cases.push(Case {
            name: "pattern removed: OLM's pattern rule refuses it",
            old: json!({"type": "string", "pattern": "^a"}),
            new: json!({"type": "string"}),
            want: &[(FIELD, Rule::Unhandled)],
        });
        run(cases);
        let got = schema_case(json!({"maximum": 10}), json!({"maximum": 5}));
        assert_eq!(got[0].message, "maximum lowered from 10 to 5");
    }

    // crdify pkg/validations/property/default_test.go, TestDefault: "no diff, not flagged",
    // "new default value, flagged", "default value removed, flagged", "default value changed,
    // flagged"; OLM keeps the rule's default enforcement (Error).
    #[test]
    fn default_rule() {
        run(vec![
            Case {
                name: "default kept",
                old: json!({"type": "integer", "default": 1}),
                new: json!({"type": "integer", "default": 1}),
                want: &[],
            },
            Case {
                name: "default added",
                old: json!({"type": "integer"}),
                new: json!({"type": "integer", "default": 1}),
                want: &[(FIELD, Rule::DefaultChanged)],
            },
            Case {
                name: "default removed",
                old: json!({"type": "integer", "default": 1}),
                new: json!({"type": "integer"}),
                want: &[(FIELD, Rule::DefaultChanged)],
            },
            Case {
                name: "default changed",
                old: json!({"type": "integer", "default": 1}),
                new: json!({"type": "integer", "default": 2}),
                want: &[(FIELD, Rule::DefaultChanged)],
            },
        ]);
        let got = schema_case(
            json!({"type": "integer", "default": 1}),
            json!({"type": "integer", "default": 2}),
        );
        assert_eq!(got[0].message, "default changed from 1 to 2");
    }

    // crdify pkg/validations/compare.go checkUnhandled; OLM crdupgradesafety_test.go
    // TestUpgrade_UnhandledChanges_InSpec_DefaultPolicy (crd-unhandled-*.json: format "" ->
    // "email"), crdify nullable_test.go TestNullable "nullable allowed, flagged by default".
    #[test]
    fn unhandled_rule() {
        run(vec![
            Case {
                name: "format kept, zero values written out",
                old: json!({"type": "string", "format": "email"}),
                new: json!({"type": "string", "format": "email", "nullable": false, "required": []}),
                want: &[],
            },
            Case {
                name: "format added",
                old: json!({"type": "string"}),
                new: json!({"type": "string", "format": "email"}),
                want: &[(FIELD, Rule::Unhandled)],
            },
            Case {
                name: "nullable added",
                old: json!({"type": "string"}),
                new: json!({"type": "string", "nullable": true}),
                want: &[(FIELD, Rule::Unhandled)],
            },
            Case {
                name: "x-kubernetes-list-type changed",
                old: json!({"type": "array", "items": {"type": "string"},
                            "x-kubernetes-list-type": "atomic"}),
                new: json!({"type": "array", "items": {"type": "string"},
                            "x-kubernetes-list-type": "set"}),
                want: &[(FIELD, Rule::Unhandled)],
            },
            Case {
                name: "oneOf added",
                old: json!({"type": "object"}),
                new: json!({"type": "object", "oneOf": [{"required": ["a"]}, {"required": ["b"]}]}),
                want: &[(FIELD, Rule::Unhandled)],
            },
        ]);
        let got = schema_case(
            json!({"type": "string"}),
            json!({"type": "string", "format": "email"}),
        );
        assert_eq!(got[0].message, "format changed from none to email");
    }

    // crdify pkg/validations/property/description_test.go; OLM crdupgradesafety_test.go "new crd
    // validation should not fail on description changes" (crd-description-changed.json).
    #[test]
    fn description_change_is_ignored() {
        let got = schema_case(
            json!({"type": "object", "description": "old", "properties": {
                "a": {"type": "string", "description": "old"}}}),
            json!({"type": "object", "description": "new", "properties": {
                "a": {"type": "string"}}}),
        );
        assert!(got.is_empty(), "{got:#?}");
    }

    #[test]
    fn nested_field_in_array_items_has_star_path() {
        let got = schema_case(
            json!({"type": "array", "items": {"type": "object", "properties": {
                "name": {"type": "string", "maxLength": 63},
                "port": {"type": "integer"}}}}),
            json!({"type": "array", "items": {"type": "object", "properties": {
                "name": {"type": "string", "maxLength": 32}}}}),
        );
        assert_eq!(
            summary(&got),
            vec![
                (
                    "/spec/field/*/name".to_string(),
                    Rule::BoundTightened,
                    false
                ),
                ("/spec/field/*/port".to_string(), Rule::FieldRemoved, false),
            ]
        );
        let map = schema_case(
            json!({"type": "object", "additionalProperties": {"type": "string"}}),
            json!({"type": "object", "additionalProperties": {"type": "integer"}}),
        );
        assert_eq!(
            summary(&map),
            vec![("/spec/field/*".to_string(), Rule::TypeChanged, false)]
        );
    }

    #[test]
    fn deep_schema_is_bounded() {
        let mut old = json!({"type": "string"});
        let mut new = json!({"type": "integer"});
        for _ in 0..(MAX_DEPTH * 2) {
            old = json!({"type": "object", "properties": {"a": old}});
            new = json!({"type": "object", "properties": {"a": new}});
        }
        let got = schema_case(old.clone(), new);
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].rule, Rule::Unhandled);
        assert!(!got[0].safe);
        assert!(schema_case(old.clone(), old).is_empty());
    }

    #[test]
    fn bad_input_gives_no_panic() {
        for (live, new) in [
            (json!(null), json!(null)),
            (json!({"spec": {"versions": "x"}}), json!([])),
            (
                json!({"spec": {"versions": [{"name": "v1", "served": true,
                    "schema": {"openAPIV3Schema": 3}}]}}),
                json!({"spec": {"versions": [{"name": "v1", "served": true,
                    "schema": {"openAPIV3Schema": {"properties": []}}}]}}),
            ),
        ] {
            let _ = check(&live, &new, true);
        }
    }

    #[test]
    fn rule_table_is_complete() {
        assert_eq!(Rule::all().len(), 10);
        let codes: BTreeSet<&str> = Rule::all().iter().map(|r| r.code().as_str()).collect();
        assert_eq!(codes.len(), 10);
        for rule in Rule::all() {
            assert!(!rule.olm_name().is_empty());
        }
    }

    #[test]
    fn finding_as_diagnostic_and_json() {
        let finding = Finding {
            crd: "widgets.example.com".into(),
            version: Some("v1".into()),
            served_from: None,
            path: "/spec/replicas".into(),
            rule: Rule::TypeChanged,
            message: "type changed from integer to string".into(),
            safe: false,
        };
        let diagnostic = finding.to_diagnostic();
        assert!(diagnostic.is_error());
        assert_eq!(diagnostic.code, Code::TypeChanged);
        assert_eq!(diagnostic.pointer.as_str(), "/spec/replicas");
        assert_eq!(
            diagnostic.message,
            "CRD widgets.example.com, version v1: type changed from integer to string (OLM rule type)"
        );
        let crd_wide = Finding {
            version: None,
            path: String::new(),
            rule: Rule::Scope,
            message: "scope changed from Namespaced to Cluster".into(),
            safe: true,
            ..finding.clone()
        };
        let diagnostic = crd_wide.to_diagnostic();
        assert!(!diagnostic.is_error());
        assert_eq!(
            diagnostic.message,
            "CRD widgets.example.com: scope changed from Namespaced to Cluster (OLM rule scope)"
        );
        assert_eq!(finding.to_json()["code"], "type-changed");
        assert_eq!(finding.to_json()["rule"], "type");
        assert_eq!(crd_wide.to_json()["version"], Value::Null);
    }

    /// A realistic CRD with two versions (v1beta1 served, v1 served and stored), upgraded with
    /// safe changes (descriptions, a new optional field, a relaxed bound, an enum value, a new
    /// version v2 and the conversion webhook it needs) and then with unsafe ones.
    #[test]
    fn realistic_crd_round_trip() {
        let v1beta1 = json!({"type": "object", "properties": {
            "spec": {"type": "object", "properties": {
                "size": {"type": "integer", "minimum": 1}}}}});
        let v1 = |extra: Value| {
            json!({"type": "object", "description": "A widget.", "properties": {
                "apiVersion": {"type": "string"},
                "kind": {"type": "string"},
                "metadata": {"type": "object"},
                "spec": {"type": "object", "required": ["replicas"], "properties": {
                    "replicas": {"type": "integer", "minimum": 1, "maximum": 10, "default": 1},
                    "mode": {"type": "string", "enum": ["fast", "safe"]},
                    "ports": {"type": "array", "x-kubernetes-list-type": "map",
                              "x-kubernetes-list-map-keys": ["name"],
                              "items": {"type": "object", "required": ["name"], "properties": {
                                  "name": {"type": "string", "maxLength": 15},
                                  "port": {"type": "integer", "minimum": 1, "maximum": 65535}}}},
                    "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                    "extra": extra}},
                "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}})
        };
        let live = crd(
            "Namespaced",
            &[
                ("v1beta1", true, v1beta1.clone()),
                ("v1", true, v1(json!({"type": "string"}))),
            ],
            &["v1beta1", "v1"],
        );
        // Same CRD: nothing to say.
        let mut unchanged = live.clone();
        if let Some(map) = unchanged.as_object_mut() {
            map.remove("status");
        }
        assert!(check(&live, &unchanged, true).is_empty());

        // Safe changes only.
        let mut safe_v1 = v1(json!({"type": "string", "description": "More words."}));
        safe_v1["description"] = json!("A widget, described anew.");
        safe_v1["properties"]["spec"]["properties"]["replicas"]["maximum"] = json!(100);
        safe_v1["properties"]["spec"]["properties"]["mode"]["enum"] =
            json!(["fast", "safe", "balanced"]);
        safe_v1["properties"]["spec"]["properties"]["note"] = json!({"type": "string"});
        safe_v1["properties"]["spec"]["properties"]["ports"]["items"]["properties"]["name"]["maxLength"] =
            json!(63);
        let unconverted = crd(
            "Namespaced",
            &[
                ("v1beta1", true, v1beta1.clone()),
                ("v1", true, safe_v1),
                ("v2", true, json!({"type": "object"})),
            ],
            &[],
        );
        let safe = converted_by_webhook(unconverted.clone());
        let got = check(&live, &safe, true);
        assert!(got.is_empty(), "{got:#?}");

        // Without the webhook, v2 would serve objects of v1beta1 and v1 as they are, and its
        // schema has none of their fields. v1beta1 → v1 differ as much as in the live CRD: no
        // finding of this upgrade.
        let got = check(&live, &unconverted, true);
        let pairs: BTreeSet<(Option<&str>, Option<&str>)> = got
            .iter()
            .map(|f| (f.served_from.as_deref(), f.version.as_deref()))
            .collect();
        assert_eq!(
            pairs,
            BTreeSet::from([(Some("v1"), Some("v2")), (Some("v1beta1"), Some("v2"))]),
            "{got:#?}"
        );
        assert!(got.iter().all(|f| f.rule == Rule::FieldRemoved && !f.safe));

        // Unsafe changes.
        let mut bad_v1 = v1(json!({"type": "integer"}));
        bad_v1["properties"]["spec"]["required"] = json!(["replicas", "mode"]);
        bad_v1["properties"]["spec"]["properties"]["replicas"]["default"] = json!(3);
        bad_v1["properties"]["spec"]["properties"]["mode"]["enum"] = json!(["fast"]);
        bad_v1["properties"]["spec"]["properties"]["ports"]["items"]["properties"]["port"]["maximum"] =
            json!(1024);
        if let Some(labels) = bad_v1["properties"]["spec"]["properties"].as_object_mut() {
            labels.remove("labels");
        }
        let bad = crd("Cluster", &[("v1", true, bad_v1)], &[]);
        let got = check(&live, &bad, true);
        let rows: Vec<(Option<&str>, &str, Rule)> = got
            .iter()
            .map(|f| (f.version.as_deref(), f.path.as_str(), f.rule))
            .collect();
        assert_eq!(
            rows,
            vec![
                (None, "", Rule::Scope),
                (None, "", Rule::StoredVersionRemoved),
                (Some("v1"), "/spec/extra", Rule::TypeChanged),
                (Some("v1"), "/spec/labels", Rule::FieldRemoved),
                (Some("v1"), "/spec/mode", Rule::RequiredAdded),
                (Some("v1"), "/spec/mode", Rule::EnumRestricted),
                (Some("v1"), "/spec/ports/*/port", Rule::BoundTightened),
                (Some("v1"), "/spec/replicas", Rule::DefaultChanged),
                (Some("v1beta1"), "", Rule::ServedVersionRemoved),
            ]
        );
        assert!(is_unsafe(&got));
        assert!(got.iter().all(|f| f.crd == "widgets.example.com"));
        let diagnostics: Vec<Diagnostic> = got.iter().map(Finding::to_diagnostic).collect();
        assert!(kudo_diag::diag::has_errors(&diagnostics));
    }
}
