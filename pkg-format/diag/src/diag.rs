//! The diagnostic model: what went wrong with which parameter, where the value came from, and
//! what to do about it.
//!
//! A [`Diagnostic`] is data. The CLI renders it with source snippets, the admission webhook turns
//! it into a denial message and the manager into a status condition; all three use the same
//! [`Display`](std::fmt::Display) sentence.

use std::fmt;
use std::path::PathBuf;

use serde::Serialize;

use crate::pointer::Pointer;

/// Stable identifier of a kind of problem. The string form ([`Code::as_str`]) is part of the
/// public interface (`-o json`, webhook denials) and never changes meaning.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(into = "&'static str")]
#[non_exhaustive]
pub enum Code {
    /// A file is not well-formed YAML.
    YamlSyntax,
    /// A parameter that the schema does not define.
    UnknownParameter,
    /// A value of the wrong JSON type.
    TypeMismatch,
    /// A required parameter has no value.
    Required,
    /// A value is not one of the schema's `enum` values (or not its `const`).
    NotInEnum,
    /// A number outside `minimum`/`maximum`/`exclusiveMinimum`/`exclusiveMaximum`.
    OutOfRange,
    /// A number that is not a `multipleOf` the schema's value.
    MultipleOf,
    /// A string outside `minLength`/`maxLength`.
    Length,
    /// A string that does not match the schema's `pattern`.
    Pattern,
    /// A string that does not have the schema's `format`.
    Format,
    /// An array outside `minItems`/`maxItems`, or with repeated items under `uniqueItems`.
    Items,
    /// An object outside `minProperties`/`maxProperties`, or failing `propertyNames`.
    Properties,
    /// A combination of schemas (`anyOf`, `oneOf`, `not`, `if`/`then`, ...) is not satisfied.
    Composition,
    /// Any other schema keyword.
    Constraint,
    /// A `-p` argument without `=`, or with an empty key.
    OverrideSyntax,
    /// A JSON pointer with a bad escape (`~` not followed by `0` or `1`).
    InvalidPointer,
    /// A `-p` pointer walks into a string, number or boolean.
    WalkThroughScalar,
    /// A `-p` pointer names an array element that does not exist.
    IndexOutOfRange,
    /// A `-p` pointer uses `-` (append), which would make updates non-idempotent.
    AppendRefused,
    /// A `-p` pointer uses something other than a number as an array index.
    InvalidIndex,
    /// A `-p` pointer goes through an array that has no value yet.
    MissingArray,
    /// A `-p` value `null` for a parameter whose schema does not allow null (`--reset` goes back
    /// to the default).
    NullValue,
    /// A value cannot be converted to its v1beta1 parameter type.
    Conversion,
    /// The parameter schema is not a valid JSON-schema, or cannot be compiled.
    InvalidSchema,
    /// A package default does not validate against its own schema.
    InvalidDefault,
    /// A template does not render or does not produce a Kubernetes object.
    Template,
    /// operator.yaml is malformed or inconsistent (plans, tasks).
    Operator,
    /// A name that KUDO cannot use: a duplicate (case-insensitive), or one with `;` or `,`
    /// (or `/` in a parameter group).
    InvalidName,
    /// A v1beta1 parameter's `group` that the `groups` section does not define.
    UnknownGroup,
    /// A task's template creates a `Namespace` (KUDO's rule: only `namespaceManifest` does).
    NamespaceObject,
    /// A version field that is missing or not semver.
    Version,
    /// A task no plan uses, a parameter no template uses (warnings).
    Unused,
    /// A template references a parameter the schema does not define.
    UndefinedParameter,
    /// The parameter schema is not structural in the Kubernetes sense.
    NotStructural,
    /// A schema keyword nobody knows, probably a typo of a known one.
    UnknownKeyword,
    /// A `trigger` names a plan the operator does not have.
    UnknownPlan,
    /// Two triggers that disagree: a descendant naming another plan than its ancestor, or one
    /// update that would run two different plans.
    TriggerConflict,
    /// A change under an `immutable` parameter after install.
    ImmutableChanged,
    /// An `immutable` parameter with neither a default nor a value (nor `required`).
    ImmutableUnset,
    /// An `oldName` that is not a valid name or JSON pointer.
    InvalidOldName,
    /// An `oldName` names a parameter the installed version does not have: the upgrade must go
    /// through an intermediate version.
    OldNameNotFound,
    /// An old value that an upgrade cannot place anywhere in the new parameters.
    ValueDropped,
    /// A parameter change given with an upgrade runs a plan other than `deploy` in the new
    /// version (KUDO's rule: upgrade first, then update).
    UpgradeWithChange,
    /// A plan is scheduled or running, and the change would run another plan (or upgrade), or
    /// another plan is triggered directly (`kudo plan trigger`).
    PlanInProgress,
    /// A `writeOnly` value in an Instance's `spec.parameters`: secrets live in Secrets.
    SecretInInstance,
    /// A Secret (or key) named in `spec.parametersFrom` is missing or unreadable.
    SecretMissing,
    /// The Instance is being deleted: no parameter change and no upgrade.
    Deleting,
    /// A template creates an object in an API version that recent Kubernetes releases no longer
    /// serve (a warning: kudo-manager applies it as its successor where the conversion is
    /// mechanical, see `kudo_k8s::successor`).
    RemovedApi,
    /// A file named on the command line does not exist.
    FileNotFound,
    /// A file named on the command line exists but cannot be read (a directory, permissions).
    FileUnreadable,
    /// `kudo patch --remove` of a value that is not there (an array index past the end, an
    /// object member that is not set).
    NothingToRemove,
    /// Values larger than kudo accepts (`kudo_policy::limits`): bytes, count or depth.
    TooLarge,
    /// The problems not listed because a refusal lists at most
    /// `kudo_policy::limits::MAX_PROBLEMS`.
    TooManyProblems,
    /// Upgrade preflight: a value's (or a CRD field's) type changed, and the value in use does
    /// not convert.
    TypeChanged,
    /// Upgrade preflight: an `enum` lost a value (in use, for a parameter).
    EnumRestricted,
    /// Upgrade preflight: a bound (minimum, maximum, length, items, properties, pattern) was
    /// tightened or added.
    BoundTightened,
    /// Upgrade preflight: a new required parameter (or CRD field) without a default.
    RequiredAdded,
    /// Upgrade preflight: a default changed, was added or was removed.
    DefaultChanged,
    /// Upgrade preflight: a parameter became `immutable`.
    ImmutableAdded,
    /// Upgrade preflight: a parameter is no longer `immutable`.
    ImmutableRemoved,
    /// A parameter marked `deprecated` is set, or a value is written by its `oldName`.
    Deprecated,
    /// CRD preflight: a field of a served version's schema was removed.
    FieldRemoved,
    /// CRD preflight: `spec.scope` changed.
    ScopeChanged,
    /// CRD preflight: a version in `status.storedVersions` is no longer in `spec.versions`.
    StoredVersionRemoved,
    /// CRD preflight: a served version was removed while objects of the CRD exist.
    ServedVersionRemoved,
    /// CRD preflight: a change no rule knows to be safe.
    UnhandledChange,
    /// A check that could not run (the CRD in the cluster could not be read): a warning saying
    /// what was not checked and why.
    Unchecked,
    /// A right the Instance's ServiceAccount needs that the installing user may not grant (a
    /// kind the built-in `admin` role does not cover): a warning naming it.
    NotGranted,
}

impl Code {
    /// The stable, kebab-case name of this code.
    pub fn as_str(self) -> &'static str {
        match self {
            Code::YamlSyntax => "yaml-syntax",
            Code::FileNotFound => "file-not-found",
            Code::FileUnreadable => "file-unreadable",
            Code::NothingToRemove => "nothing-to-remove",
            Code::UnknownParameter => "unknown-parameter",
            Code::TypeMismatch => "type-mismatch",
            Code::Required => "required",
            Code::NotInEnum => "not-in-enum",
            Code::OutOfRange => "out-of-range",
            Code::MultipleOf => "multiple-of",
            Code::Length => "length",
            Code::Pattern => "pattern",
            Code::Format => "format",
            Code::Items => "items",
            Code::Properties => "properties",
            Code::Composition => "composition",
            Code::Constraint => "constraint",
            Code::OverrideSyntax => "override-syntax",
            Code::InvalidPointer => "invalid-pointer",
            Code::WalkThroughScalar => "walk-through-scalar",
            Code::IndexOutOfRange => "index-out-of-range",
            Code::AppendRefused => "append-refused",
            Code::InvalidIndex => "invalid-index",
            Code::MissingArray => "missing-array",
            Code::NullValue => "null-value",
            Code::Conversion => "conversion",
            Code::InvalidSchema => "invalid-schema",
            Code::InvalidDefault => "invalid-default",
            Code::Template => "template",
            Code::Operator => "operator",
            Code::InvalidName => "invalid-name",
            Code::UnknownGroup => "unknown-group",
            Code::NamespaceObject => "namespace-object",
            Code::Version => "version",
            Code::Unused => "unused",
            Code::UndefinedParameter => "undefined-parameter",
            Code::NotStructural => "not-structural",
            Code::UnknownKeyword => "unknown-keyword",
            Code::UnknownPlan => "unknown-plan",
            Code::TriggerConflict => "trigger-conflict",
            Code::ImmutableChanged => "immutable-changed",
            Code::ImmutableUnset => "immutable-unset",
            Code::InvalidOldName => "invalid-old-name",
            Code::OldNameNotFound => "old-name-not-found",
            Code::UpgradeWithChange => "upgrade-with-change",
            Code::PlanInProgress => "plan-in-progress",
            Code::SecretInInstance => "secret-in-instance",
            Code::SecretMissing => "secret-missing",
            Code::Deleting => "deleting",
            Code::ValueDropped => "value-dropped",
            Code::RemovedApi => "removed-api",
            Code::TooLarge => "too-large",
            Code::TooManyProblems => "too-many-problems",
            Code::TypeChanged => "type-changed",
            Code::EnumRestricted => "enum-restricted",
            Code::BoundTightened => "bound-tightened",
            Code::RequiredAdded => "required-added",
            Code::DefaultChanged => "default-changed",
            Code::ImmutableAdded => "immutable-added",
            Code::ImmutableRemoved => "immutable-removed",
            Code::Deprecated => "deprecated",
            Code::FieldRemoved => "field-removed",
            Code::ScopeChanged => "scope-changed",
            Code::StoredVersionRemoved => "stored-version-removed",
            Code::ServedVersionRemoved => "served-version-removed",
            Code::UnhandledChange => "unhandled-change",
            Code::Unchecked => "unchecked",
            Code::NotGranted => "not-granted",
        }
    }
}

impl From<Code> for &'static str {
    fn from(c: Code) -> Self {
        c.as_str()
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How bad a diagnostic is. Only errors make a command fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The input is refused.
    Error,
    /// The input is accepted, but probably not what was meant.
    Warning,
}

/// A place in a file, 1-based line and column.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Location {
    /// The file as the user named it.
    pub path: PathBuf,
    /// 1-based line.
    pub line: usize,
    /// 1-based column (in characters).
    pub col: usize,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.path.display(), self.line, self.col)
    }
}

/// Where a parameter value came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Origin {
    /// The package's schema default.
    Default,
    /// A values file (`-P`) or another YAML file, at this place.
    File(Location),
    /// The N-th `-p` argument (1-based), as written on the command line.
    Flag {
        /// 1-based position among the `-p` arguments.
        index: usize,
    },
    /// The N-th `--reset` argument (1-based).
    Reset {
        /// 1-based position among the `--reset` arguments.
        index: usize,
    },
    /// The N-th `--add` argument of `kudo patch` (1-based).
    Add {
        /// 1-based position among the `--add` arguments.
        index: usize,
    },
    /// The N-th `--remove` argument of `kudo patch` (1-based).
    Remove {
        /// 1-based position among the `--remove` arguments.
        index: usize,
    },
    /// The stored parameters of an Instance (a value that was already there).
    Instance,
    /// A Secret named in the Instance's `spec.parametersFrom` (which Secret and key).
    Secret(String),
    /// Not tied to a value (a missing required parameter, a package-level problem).
    None,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::Default => f.write_str("package default"),
            Origin::File(loc) => write!(f, "{loc}"),
            Origin::Flag { index } => write!(f, "-p argument {index}"),
            Origin::Reset { index } => write!(f, "--reset argument {index}"),
            Origin::Add { index } => write!(f, "--add argument {index}"),
            Origin::Remove { index } => write!(f, "--remove argument {index}"),
            Origin::Instance => f.write_str("instance parameters"),
            Origin::Secret(which) => f.write_str(which),
            Origin::None => Ok(()),
        }
    }
}

/// Where the rule a diagnostic reports is written: the schema keyword, and its place in
/// params.yaml when the schema came from a file (ytt's "by schema.yaml:4").
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Rule {
    /// JSON pointer of the keyword in the parameter schema (`/properties/nodeCount/minimum`).
    pub keyword: String,
    /// The keyword's place in params.yaml (for KUDO's flat parameters, the parameter's entry).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub at: Option<Location>,
}

/// The offending value as it may be shown to a user.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", content = "text", rename_all = "lowercase")]
pub enum Shown {
    /// Compact JSON of the value, shortened when long.
    Value(String),
    /// The value belongs to a `writeOnly` parameter and is never printed.
    Masked,
}

impl Shown {
    /// What stands where a `writeOnly` value was, wherever values are shown.
    pub const MASKED: &'static str = "<hidden: writeOnly>";

    /// Longest value text shown before it is shortened.
    pub const MAX_LEN: usize = 80;

    /// The value shown as compact JSON, or masked when `secret`.
    pub fn of(value: &serde_json::Value, secret: bool) -> Shown {
        if secret {
            return Shown::Masked;
        }
        let text = value.to_string();
        if text.chars().count() > Self::MAX_LEN {
            let cut: String = text.chars().take(Self::MAX_LEN).collect();
            Shown::Value(format!("{cut}..."))
        } else {
            Shown::Value(text)
        }
    }
}

impl fmt::Display for Shown {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Shown::Value(v) => f.write_str(v),
            Shown::Masked => f.write_str(Shown::MASKED),
        }
    }
}

/// One problem, with everything a user needs to find and fix it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Diagnostic {
    /// Stable code.
    pub code: Code,
    /// Error or warning.
    pub severity: Severity,
    /// JSON pointer of the parameter (`/topology/0/labels`); empty for the whole document.
    pub pointer: Pointer,
    /// The rule that was broken, in words ("must be at least 1").
    pub message: String,
    /// The offending value, masked for `writeOnly` parameters.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<Shown>,
    /// Where the value came from.
    pub origin: Origin,
    /// A hint: "did you mean /topology?".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub help: Option<String>,
    /// The rule broken, where the schema says it (`kudo_pkg::Package::locate_rules` adds the
    /// file and line).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub by: Option<Rule>,
}

impl Diagnostic {
    /// An error about `pointer`.
    pub fn error(code: Code, pointer: impl Into<Pointer>, message: impl Into<String>) -> Self {
        Diagnostic {
            code,
            severity: Severity::Error,
            pointer: pointer.into(),
            message: message.into(),
            value: None,
            origin: Origin::None,
            help: None,
            by: None,
        }
    }

    /// A warning about `pointer`.
    pub fn warning(code: Code, pointer: impl Into<Pointer>, message: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Warning,
            ..Diagnostic::error(code, pointer, message)
        }
    }

    /// Sets where the value came from.
    pub fn with_origin(mut self, origin: Origin) -> Self {
        self.origin = origin;
        self
    }

    /// Sets the value shown.
    pub fn with_value(mut self, value: Shown) -> Self {
        self.value = Some(value);
        self
    }

    /// Names the schema keyword whose rule is broken (its place is found later).
    pub fn with_rule(mut self, keyword: impl Into<String>) -> Self {
        self.by = Some(Rule {
            keyword: keyword.into(),
            at: None,
        });
        self
    }

    /// Sets a hint.
    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    /// True for errors, false for warnings.
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

/// The one-line sentence: `/nodeCount: must be at least 1, got 0 (values.yaml:3:12)`.
impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = if self.pointer.is_empty() {
            "/".to_string()
        } else {
            crate::cut::shown_pointer(&self.pointer)
        };
        write!(f, "{at}: {}", self.message)?;
        if let Some(v) = &self.value {
            write!(f, ", got {v}")?;
        }
        write!(f, "{}", Whence(self, true))?;
        write!(f, " [{}]", self.code)?;
        if let Some(h) = &self.help {
            write!(f, "; {h}")?;
        }
        Ok(())
    }
}

/// ` (from ORIGIN, by FILE:LINE)`: where the value came from and where the rule is written,
/// each when known; `.1` false leaves out a file origin (a snippet shows it).
pub struct Whence<'a>(pub &'a Diagnostic, pub bool);

impl fmt::Display for Whence<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = self.0;
        let from = match &d.origin {
            Origin::None => None,
            Origin::File(_) if !self.1 => None,
            o => Some(o),
        };
        let by = d.by.as_ref().and_then(|r| r.at.as_ref());
        match (from, by) {
            (None, None) => Ok(()),
            (Some(o), None) => write!(f, " (from {o})"),
            (None, Some(at)) => write!(f, " (by {}:{})", at.path.display(), at.line),
            (Some(o), Some(at)) => write!(f, " (from {o}, by {}:{})", at.path.display(), at.line),
        }
    }
}

/// True when any diagnostic is an error.
pub fn has_errors(diags: &[Diagnostic]) -> bool {
    diags.iter().any(Diagnostic::is_error)
}
