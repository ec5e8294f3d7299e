//! Validation of parameter values against a package's schema: one entry point for the CLI, the
//! admission webhook and the manager.
//!
//! [`Validator::new`] compiles the schema once (checking it against its draft's metaschema, with
//! the linear-time `regex` engine for `pattern`, so a package cannot make validation take
//! super-linear time); [`Validator::validate`] reports every problem in one pass, each as a
//! [`Diagnostic`] with a stable code, the pointer, the rule in words, the value (masked under
//! `writeOnly`) and where the value came from.
//!
//! Unknown parameters are found here rather than by `additionalProperties: false`: an object
//! that declares `properties` is closed unless it opens itself (see
//! [`ParamSchema::child`]), so unknown data is refused, never stored, and the error can say
//! "did you mean".

use serde_json::Value;

use jsonschema::error::{TypeKind, ValidationErrorKind as Kind};

use crate::params::{Draft, ParamSchema, v1beta2::Child};
use crate::values::Values;
use kudo_diag::diag::{Code, Diagnostic, Origin, Shown};
use kudo_diag::pointer;

/// A compiled parameter schema.
pub struct Validator {
    schema: ParamSchema,
    compiled: jsonschema::Validator,
}

impl std::fmt::Debug for Validator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Validator").finish_non_exhaustive()
    }
}

impl Validator {
    /// Checks the schema against its metaschema and compiles it. Every metaschema violation is
    /// reported, at its pointer in the schema.
    pub fn new(schema: &ParamSchema) -> Result<Validator, Vec<Diagnostic>> {
        let draft = match schema.draft() {
            Draft::Draft7 => jsonschema::Draft::Draft7,
            Draft::Draft201909 => jsonschema::Draft::Draft201909,
            Draft::Draft202012 => jsonschema::Draft::Draft202012,
        };
        // Compiling checks the schema against its metaschema (jsonschema always does, and stops
        // at the first violation); only when that fails is the metaschema run again, to report
        // every violation. A valid schema is checked once.
        let compiled = jsonschema::options()
            .with_draft(draft)
            .with_pattern_options(jsonschema::PatternOptions::regex())
            .build(schema.as_value());
        let compiled = match compiled {
            Ok(c) => c,
            Err(e) => {
                let meta = match schema.draft() {
                    Draft::Draft7 => jsonschema::draft7::meta::validator(),
                    Draft::Draft201909 => jsonschema::draft201909::meta::validator(),
                    Draft::Draft202012 => jsonschema::draft202012::meta::validator(),
                };
                let meta_errors: Vec<Diagnostic> = meta
                    .iter_errors(schema.as_value())
                    .map(|e| {
                        Diagnostic::error(
                            Code::InvalidSchema,
                            e.instance_path().as_str().to_string(),
                            format!(
                                "not a valid JSON-schema ({}): {}",
                                draft_name(schema.draft()),
                                e
                            ),
                        )
                    })
                    .collect();
                if !meta_errors.is_empty() {
                    return Err(meta_errors);
                }
                return Err(vec![Diagnostic::error(
                    Code::InvalidSchema,
                    e.instance_path().as_str().to_string(),
                    format!("the schema cannot be compiled: {e}"),
                )]);
            }
        };
        Ok(Validator {
            schema: schema.clone(),
            compiled,
        })
    }

    /// The schema this validator checks.
    pub fn schema(&self) -> &ParamSchema {
        &self.schema
    }

    /// Every problem with `values`, sorted by pointer. Origins come from `values`.
    pub fn validate(&self, values: &Values) -> Vec<Diagnostic> {
        self.validate_value(values.value(), &|p| values.origin(p))
    }

    /// Like [`Validator::validate`] for plain JSON, with origins from `origin_of`.
    pub fn validate_value(
        &self,
        value: &Value,
        origin_of: &dyn Fn(&str) -> Origin,
    ) -> Vec<Diagnostic> {
        let mut out = Vec::new();
        let mut at = String::new();
        self.unknown(self.schema.root(), value, &mut at, 0, origin_of, &mut out);
        for e in self.compiled.iter_errors(value) {
            if let Some(d) = self.diagnostic(&e, value, origin_of) {
                out.push(d);
            }
        }
        out.sort_by(|a, b| {
            a.pointer
                .cmp(&b.pointer)
                .then(a.code.as_str().cmp(b.code.as_str()))
        });
        out.dedup();
        out
    }

    fn unknown(
        &self,
        node: &Value,
        value: &Value,
        at: &mut String,
        depth: usize,
        origin_of: &dyn Fn(&str) -> Origin,
        out: &mut Vec<Diagnostic>,
    ) {
        if depth > crate::values::MAX_DEPTH {
            return;
        }
        let s = &self.schema;
        let (Value::Object(_) | Value::Array(_)) = value else {
            return;
        };
        let entries: Vec<(String, &Value)> = match value {
            Value::Object(m) => m.iter().map(|(k, v)| (k.clone(), v)).collect(),
            Value::Array(a) => a
                .iter()
                .enumerate()
                .map(|(i, v)| (i.to_string(), v))
                .collect(),
            _ => return,
        };
        let node = s.resolve(node);
        if value.is_array() && !s.is_array(node) || value.is_object() && !s.is_object(node) {
            return; // a type error, reported by the schema
        }
        for (k, v) in entries {
            let len = at.len();
            at.push('/');
            at.push_str(&pointer::escape(&k));
            match s.child(node, &k) {
                Child::Unknown if value.is_object() => {
                    let mut d = Diagnostic::error(
                        Code::UnknownParameter,
                        at.clone(),
                        "is not a parameter of this package",
                    )
                    .with_origin(origin_of(at));
                    let tokens = pointer::tokens(pointer::parent(at)).unwrap_or_default();
                    if let Some(h) = crate::values::suggest_sibling(s, &tokens, &k) {
                        d = d.with_help(h);
                    }
                    out.push(d);
                }
                Child::Unknown => {}
                c => {
                    if let Some(child) = c.schema() {
                        self.unknown(child, v, at, depth + 1, origin_of, out);
                    }
                }
            }
            at.truncate(len);
        }
    }

    fn diagnostic(
        &self,
        e: &jsonschema::ValidationError<'_>,
        value: &Value,
        origin_of: &dyn Fn(&str) -> Origin,
    ) -> Option<Diagnostic> {
        let at = e.instance_path().as_str().to_string();
        let tokens = pointer::tokens(&at).unwrap_or_default();
        let secret = self.schema.may_hold_secret(&tokens);
        let (code, message) = match e.kind() {
            // Our own unknown-parameter check covers these, with suggestions.
            Kind::AdditionalProperties { .. } => return None,
            Kind::Required { property } => return Some(required(e, &at, property)),
            Kind::Type { kind } => self.type_mismatch(e, kind, value, &at),
            kind => value_rule(kind)
                .or_else(|| container_rule(kind))
                .unwrap_or_else(|| other_rule(e)),
        };
        let shown = value.pointer(&at).map(|v| Shown::of(v, secret));
        let mut d = Diagnostic::error(code, at.clone(), message)
            .with_origin(origin_of(&at))
            .with_rule(e.schema_path().as_str());
        if let Some(s) = shown {
            d = d.with_value(s);
        }
        Some(d)
    }

    /// A value of the wrong type at `at`.
    fn type_mismatch(
        &self,
        e: &jsonschema::ValidationError<'_>,
        kind: &TypeKind,
        value: &Value,
        at: &str,
    ) -> (Code, String) {
        let keyword_value = self.schema.as_value().pointer(e.schema_path().as_str());
        let want = match kind {
            TypeKind::Single(t) => t.to_string(),
            TypeKind::Multiple(_) => keyword_value
                .map(list)
                .unwrap_or_else(|| "the declared types".into()),
        };
        let found = value
            .pointer(at)
            .map(crate::params::json_type)
            .unwrap_or("nothing");
        (
            Code::TypeMismatch,
            format!("must be of type {want}, not {found}"),
        )
    }
}

/// A JSON array as its items, comma-separated; any other value as itself.
fn list(v: &Value) -> String {
    match v {
        Value::Array(items) => items
            .iter()
            .map(Value::to_string)
            .collect::<Vec<_>>()
            .join(", "),
        other => other.to_string(),
    }
}

/// A required property `property` of the object at `at` that has no value.
fn required(e: &jsonschema::ValidationError<'_>, at: &str, property: &Value) -> Diagnostic {
    let name = property.as_str().unwrap_or_default();
    let p = pointer::push(at, name);
    Diagnostic::error(Code::Required, p.clone(), "is required but has no value")
        .with_rule(e.schema_path().as_str())
        .with_help(format!(
            "set it with -p {}=VALUE or in a -P file",
            p.trim_start_matches('/')
        ))
}

/// The code and sentence of a rule on a single value: enum, const, bounds, length, pattern,
/// format.
fn value_rule(kind: &Kind) -> Option<(Code, String)> {
    Some(match kind {
        Kind::Enum { options } => (
            Code::NotInEnum,
            format!("must be one of: {}", list(options)),
        ),
        Kind::Constant { expected_value } => (Code::NotInEnum, format!("must be {expected_value}")),
        Kind::Minimum { limit } => (Code::OutOfRange, format!("must be at least {limit}")),
        Kind::Maximum { limit } => (Code::OutOfRange, format!("must be at most {limit}")),
        Kind::ExclusiveMinimum { limit } => {
            (Code::OutOfRange, format!("must be greater than {limit}"))
        }
        Kind::ExclusiveMaximum { limit } => {
            (Code::OutOfRange, format!("must be less than {limit}"))
        }
        Kind::MultipleOf { multiple_of } => (
            Code::MultipleOf,
            format!("must be a multiple of {multiple_of}"),
        ),
        Kind::MinLength { limit } => (
            Code::Length,
            format!("must be at least {limit} characters long"),
        ),
        Kind::MaxLength { limit } => (
            Code::Length,
            format!("must be at most {limit} characters long"),
        ),
        Kind::Pattern { pattern } => (Code::Pattern, format!("must match the pattern `{pattern}`")),
        Kind::BacktrackLimitExceeded { .. } | Kind::RegexEngineFailure { .. } => (
            Code::Pattern,
            "could not be checked against its pattern (the pattern is too expensive)".into(),
        ),
        Kind::Format { format } => (Code::Format, format!("must be a valid {format}")),
        _ => return None,
    })
}

/// The code and sentence of a rule on an array, an object or a composition of schemas.
fn container_rule(kind: &Kind) -> Option<(Code, String)> {
    Some(match kind {
        Kind::MinItems { limit } => (Code::Items, format!("must have at least {limit} item(s)")),
        Kind::MaxItems { limit } => (Code::Items, format!("must have at most {limit} item(s)")),
        Kind::UniqueItems => (Code::Items, "must not contain the same item twice".into()),
        Kind::AdditionalItems { limit } => {
            (Code::Items, format!("must have at most {limit} item(s)"))
        }
        Kind::Contains => (
            Code::Items,
            "must contain at least one item matching `contains`".into(),
        ),
        Kind::UnevaluatedItems { unexpected } => (
            Code::Items,
            format!("has items that are not allowed: {}", unexpected.join(", ")),
        ),
        Kind::MinProperties { limit } => (
            Code::Properties,
            format!("must have at least {limit} entries"),
        ),
        Kind::MaxProperties { limit } => (
            Code::Properties,
            format!("must have at most {limit} entries"),
        ),
        Kind::PropertyNames { .. } => (
            Code::Properties,
            "has a key that `propertyNames` does not allow".into(),
        ),
        Kind::UnevaluatedProperties { unexpected } => (
            Code::UnknownParameter,
            format!(
                "has parameters that are not allowed: {}",
                unexpected.join(", ")
            ),
        ),
        Kind::AnyOf { .. } => (
            Code::Composition,
            "must match at least one of the `anyOf` schemas".into(),
        ),
        Kind::OneOfNotValid { .. } => (
            Code::Composition,
            "must match one of the `oneOf` schemas".into(),
        ),
        Kind::OneOfMultipleValid { .. } => (
            Code::Composition,
            "must match exactly one of the `oneOf` schemas, but matches several".into(),
        ),
        Kind::Not { .. } => (Code::Composition, "must not match the `not` schema".into()),
        Kind::FalseSchema => (Code::Constraint, "is not allowed here".into()),
        Kind::Custom { message, .. } => (Code::Constraint, message.clone()),
        _ => return None,
    })
}

/// The code and sentence of any other rule: the keyword that refused the value.
fn other_rule(e: &jsonschema::ValidationError<'_>) -> (Code, String) {
    (
        Code::Constraint,
        format!(
            "does not satisfy `{}`",
            e.schema_path()
                .as_str()
                .rsplit('/')
                .next()
                .unwrap_or_default()
        ),
    )
}

fn draft_name(d: Draft) -> &'static str {
    match d {
        Draft::Draft7 => "draft-07",
        Draft::Draft201909 => "2019-09",
        Draft::Draft202012 => "2020-12",
    }
}

/// The whole pipeline of `kudo params`, `kudo template` and (later) `kudo update` and the
/// webhook: effective values from `inputs`, then one validation pass. Every problem comes back
/// at once; `Ok` carries the values and any warnings.
pub fn resolve(
    schema: &ParamSchema,
    inputs: &crate::values::Inputs<'_>,
) -> Result<(Values, Vec<Diagnostic>), Vec<Diagnostic>> {
    let validator = Validator::new(schema)?;
    let (values, mut diags) = crate::values::effective(schema, inputs);
    diags.extend(validator.validate(&values));
    diags.extend(crate::preflight::deprecated(
        &crate::preflight::deprecations(schema),
        None,
        &values,
    ));
    if kudo_diag::diag::has_errors(&diags) {
        Err(diags)
    } else {
        Ok((values, diags))
    }
}
