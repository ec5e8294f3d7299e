//! Go templates, rendered as KUDO renders them: Go's `text/template` (the [`gotmpl`] port) with
//! `missingkey=error`, sprig's functions ([`kudo_sprig`]) and KUDO's context.
//!
//! The engine of a package is [`TemplateEngine`]: `templateEngine:` in operator.yaml, else
//! [`TemplateEngine::Go`] for a KUDO package (`params.yaml` in the flat `kudo.dev/v1beta1`
//! format) and [`TemplateEngine::Handlebars`] for a package written for kudo (v1beta2).
//!
//! KUDO's context, as `{{ .Name }}` etc.:
//!
//! | name | value |
//! |---|---|
//! | `Params` | the effective parameters, **scalars as strings** (see below) |
//! | `Name`, `Namespace` | the instance |
//! | `OperatorName`, `OperatorVersion`, `AppVersion` | from operator.yaml |
//! | `PlanName`, `PhaseName`, `StepName` | where in the plan the template is applied |
//! | `Pipes` | each key of the plan's Pipe tasks: the name of the ConfigMap or Secret it makes |
//!
//! KUDO hands templates every scalar parameter as a string, whatever its declared type
//! (`{{ if eq .Params.ENABLED "true" }}`, `{{ div .Params.MEM_MIB 4 }}` through sprig's
//! coercion): a boolean as `true`/`false`, an integer in decimal, any other number as Go's `%v`
//! prints a float64 (`1e+06`). Arrays and objects are passed as they are. The same holds for a
//! package converted to v1beta2 with its Go templates kept: its typed values render exactly as
//! the strings the original package's templates compared.
//!
//! Every declared top-level parameter is in `Params`, with a value or without one. One without
//! a value (no value set, no default) is what KUDO's `ParamsMap` gives it, by its type: a scalar
//! the empty string (`{{ .Params.PREFIX }}` prints nothing), an array an empty list (prints
//! `[]`, ranges over nothing), an object nil (prints `<no value>`, as in KUDO). A name nobody
//! declared is an error.

use std::collections::BTreeMap;
use std::sync::Arc;

use gotmpl::{MissingKey, Template, TemplateError, Value as GoValue};
use serde_json::Value;

use crate::package::{Operator, TaskKind};
use kudo_policy::params::ParamSchema;

pub use crate::package::TemplateEngine;

/// A template that does not parse or does not render, with its position when known (1-based).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// Line and column in the template file.
    pub at: Option<(usize, usize)>,
    /// What went wrong, in Go's words where it has them.
    pub message: String,
}

fn failure(e: TemplateError) -> Failure {
    match e {
        TemplateError::Parse {
            line, col, message, ..
        }
        | TemplateError::Lex {
            line, col, message, ..
        } => Failure {
            at: Some((line, col)),
            message,
        },
        TemplateError::MissingKey { key } => Failure {
            at: None,
            message: format!("map has no entry for key {key:?}"),
        },
        other => Failure {
            at: None,
            message: other.to_string(),
        },
    }
}

/// Parses `text` (the file `name`) with sprig's functions.
pub fn parse(name: &str, text: &str) -> Result<Template, Failure> {
    Template::new(name)
        .funcs(kudo_sprig::funcs().clone())
        .missing_key(MissingKey::Error)
        .parse(text)
        .map_err(failure)
}

/// Executes a parsed template against `context` ([`context`]).
pub fn execute(template: &Template, context: &GoValue) -> Result<String, Failure> {
    template.execute_to_string(context).map_err(failure)
}

/// Which instance and plan a template is rendered for.
#[derive(Debug, Clone, Copy)]
pub struct At<'a> {
    /// Instance name.
    pub instance: &'a str,
    /// Its namespace.
    pub namespace: &'a str,
    /// Plan.
    pub plan: &'a str,
}

/// The top-level parameters `schema` declares, each with the value KUDO's context holds for it
/// when it has none ([`unset`]): `Params` holds every one (`missingkey=error` is for names
/// nobody declared).
pub fn declared(schema: &ParamSchema) -> Vec<(Arc<str>, GoValue)> {
    schema
        .as_value()
        .get("properties")
        .and_then(Value::as_object)
        .map(|props| {
            props
                .keys()
                .map(|k| {
                    let node = schema.node_at(&[k]).unwrap_or(&Value::Null);
                    (Arc::from(k.as_str()), unset(schema, node))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The value of a parameter of schema `node` without a value, as KUDO's `ParamsMap` makes it:
/// `convert.UnwrapParamValue` of no value (a nil default) by the parameter's type. A string (and
/// every other scalar, which KUDO hands over as a string) is `""`; an array is a nil
/// `[]interface{}` (empty); a map is the YAML of nothing, nil. A v1beta2 node's type is read
/// the same way (`null` aside); a node without one is a string, KUDO's default type.
pub fn unset(schema: &ParamSchema, node: &Value) -> GoValue {
    let types: Vec<&str> = schema
        .types(node)
        .into_iter()
        .filter(|t| *t != "null")
        .collect();
    match types.as_slice() {
        ["object"] => GoValue::Nil,
        ["array"] => GoValue::List(Arc::from(Vec::new())),
        _ => GoValue::String(Arc::from("")),
    }
}

/// KUDO's render context for `params` (the effective values) at `at`, built once for all the
/// templates of a render: only `PhaseName` and `StepName` differ between them ([`Self::at`]).
pub struct Context(GoValue);

impl Context {
    /// The context of plan `at.plan`; `declared` are the schema's top-level parameters
    /// ([`declared`]): one without a value, or null, gets its [`unset`] value.
    pub fn new(
        op: &Operator,
        declared: &[(Arc<str>, GoValue)],
        params: &Value,
        at: At<'_>,
    ) -> Context {
        let text = |s: &str| GoValue::String(Arc::from(s));
        let opt = |s: &Option<String>| s.as_deref().map(text).unwrap_or(GoValue::Nil);
        let mut m: BTreeMap<Arc<str>, GoValue> = BTreeMap::new();
        let mut values = kudo_params(params);
        if let GoValue::Map(given) = &mut values
            && !declared.is_empty()
        {
            let given = Arc::make_mut(given);
            for (name, unset) in declared {
                let v = given.entry(name.clone()).or_insert(GoValue::Nil);
                if *v == GoValue::Nil {
                    *v = unset.clone();
                }
            }
        }
        m.insert("Params".into(), values);
        m.insert("Name".into(), text(at.instance));
        m.insert("Namespace".into(), text(at.namespace));
        m.insert("OperatorName".into(), text(&op.name));
        m.insert("OperatorVersion".into(), opt(&op.operator_version));
        m.insert("AppVersion".into(), opt(&op.app_version));
        m.insert("PlanName".into(), text(at.plan));
        m.insert("PhaseName".into(), text(""));
        m.insert("StepName".into(), text(""));
        let pipes = pipes(op, at)
            .into_iter()
            .map(|(k, v)| (Arc::from(k.as_str()), text(&v)))
            .collect();
        m.insert("Pipes".into(), GoValue::Map(Arc::new(pipes)));
        Context(GoValue::Map(Arc::new(m)))
    }

    /// The context of a template applied by step `step` of phase `phase`.
    pub fn at(&mut self, phase: &str, step: &str) -> &GoValue {
        if let GoValue::Map(m) = &mut self.0 {
            let m = Arc::make_mut(m);
            m.insert("PhaseName".into(), GoValue::String(Arc::from(phase)));
            m.insert("StepName".into(), GoValue::String(Arc::from(step)));
        }
        &self.0
    }
}

/// The parameters as KUDO hands them to templates: top-level scalars as strings, arrays and
/// objects as values.
fn kudo_params(params: &Value) -> GoValue {
    let Value::Object(map) = params else {
        return GoValue::Map(Arc::new(BTreeMap::new()));
    };
    let m = map
        .iter()
        .map(|(k, v)| {
            let v = match v {
                Value::Array(_) | Value::Object(_) => value(v),
                Value::Null => GoValue::Nil,
                scalar => GoValue::String(Arc::from(go_string(scalar).as_str())),
            };
            (Arc::from(k.as_str()), v)
        })
        .collect();
    GoValue::Map(Arc::new(m))
}

/// A JSON value as a template value (integers stay integers, other numbers are float64).
pub fn value(v: &Value) -> GoValue {
    match v {
        Value::Null => GoValue::Nil,
        Value::Bool(b) => GoValue::Bool(*b),
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => GoValue::Int(i),
            (None, Some(u)) => GoValue::Uint(u),
            _ => GoValue::Float(n.as_f64().unwrap_or(0.0)),
        },
        Value::String(s) => GoValue::String(Arc::from(s.as_str())),
        Value::Array(a) => GoValue::List(a.iter().map(value).collect()),
        Value::Object(o) => GoValue::Map(Arc::new(
            o.iter()
                .map(|(k, v)| (Arc::from(k.as_str()), value(v)))
                .collect(),
        )),
    }
}

/// A scalar as KUDO's parameters carry it: Go's `%v`.
pub fn go_string(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => i.to_string(),
            (None, Some(u)) => u.to_string(),
            _ => go_float(n.as_f64().unwrap_or(0.0)),
        },
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// Go's `%v` of a float64 (`strconv.FormatFloat(f, 'g', -1, 64)`): the shortest digits that
/// read back, in exponent form when the exponent is below -4 or at least 6 (`1e+06`, `1.5e-05`,
/// `123456`).
pub fn go_float(f: f64) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "+Inf" } else { "-Inf" }.into();
    }
    if f == 0.0 {
        return if f.is_sign_negative() { "-0" } else { "0" }.into();
    }
    // Rust's `{:e}` gives the shortest round-tripping digits, as Go's shortest mode does.
    let e = format!("{f:e}");
    let Some((mantissa, exp)) = e.split_once('e') else {
        return e;
    };
    let exp: i32 = exp.parse().unwrap_or(0);
    let negative = mantissa.starts_with('-');
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let mut out = String::from(if negative { "-" } else { "" });
    if !(-4..6).contains(&exp) {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let sign = if exp < 0 { '-' } else { '+' };
        out.push_str(&format!("e{sign}{:02}", exp.abs()));
    } else if exp >= 0 {
        let point = usize::try_from(exp).unwrap_or(0) + 1;
        if digits.len() <= point {
            out.push_str(&digits);
            out.push_str(&"0".repeat(point - digits.len()));
        } else {
            out.push_str(&digits[..point]);
            out.push('.');
            out.push_str(&digits[point..]);
        }
    } else {
        out.push_str("0.");
        out.push_str(&"0".repeat(usize::try_from(-exp - 1).unwrap_or(0)));
        out.push_str(&digits);
    }
    out
}

/// `Pipes`: each file key of the Pipe tasks of plan `at.plan`, named as KUDO names what the
/// task makes: `<instance>.<plan>.<phase>.<step>.<task>.<key>`, each part lower-cased with
/// everything but `a-z0-9` removed.
pub fn pipes(op: &Operator, at: At<'_>) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let Some(plan) = op.plans.get(at.plan) else {
        return out;
    };
    for phase in &plan.phases {
        for step in &phase.steps {
            for task_name in &step.tasks {
                let Some(task) = op.task(task_name).filter(|t| t.kind == TaskKind::Pipe) else {
                    continue;
                };
                let files = task.spec.get("pipe").and_then(Value::as_array);
                for key in files
                    .into_iter()
                    .flatten()
                    .filter_map(|f| f.get("key").and_then(Value::as_str))
                {
                    let parts = [
                        at.instance,
                        at.plan,
                        &phase.name,
                        &step.name,
                        &task.name,
                        key,
                    ];
                    out.insert(key.to_string(), crate::pipe::artifact_name(&parts));
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn floats_print_as_go_prints_a_float64() {
        for (f, want) in [
            (1e6, "1e+06"),
            (1.5e7, "1.5e+07"),
            (123456.0, "123456"),
            (0.5, "0.5"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (-2.25, "-2.25"),
            (100000.0, "100000"),
            (0.1 + 0.2, "0.30000000000000004"),
        ] {
            assert_eq!(go_float(f), want, "{f}");
        }
    }

    #[test]
    fn scalars_reach_templates_as_strings_and_collections_as_values() {
        let params = json!({"N": 3, "ON": true, "F": 1000000.5, "S": "x", "L": [1, "a"],
            "M": {"k": 2}, "NONE": null});
        let GoValue::Map(m) = kudo_params(&params) else {
            panic!("a map")
        };
        assert_eq!(m["N"], GoValue::String("3".into()));
        assert_eq!(m["ON"], GoValue::String("true".into()));
        assert_eq!(m["F"], GoValue::String("1.0000005e+06".into()));
        assert_eq!(m["S"], GoValue::String("x".into()));
        assert!(matches!(m["L"], GoValue::List(_)));
        assert!(matches!(m["M"], GoValue::Map(_)));
        assert_eq!(m["NONE"], GoValue::Nil);
    }

    fn render(src: &str, data: Value) -> Result<String, Failure> {
        let t = parse("t.yaml", src)?;
        execute(&t, &value(&data))
    }

    #[test]
    fn text_template_semantics_the_kudo_operators_rely_on() {
        let cases: &[(&str, Value, &str)] = &[
            // reassignment inside a range changes the outer variable
            (
                "{{ $x := 0 }}{{ range $i, $v := .L }}{{ $x = $v }}{{ end }}{{ $x }}",
                json!({"L": [1, 2, 3]}),
                "3",
            ),
            // a map ranges in key order; nil ranges as empty
            (
                "{{ range $k, $v := .M }}{{ $k }}={{ $v }};{{ end }}{{ range .N }}x{{ end }}",
                json!({"M": {"b": 2, "a": 1}, "N": null}),
                "a=1;b=2;",
            ),
            // whitespace trimming, else if, $ in a range
            (
                "{{- if eq .S \"a\" }}A{{ else if eq .S \"b\" -}}  B  {{- else }}C{{ end }}{{ range .L }}{{ $.S }}{{ end }}",
                json!({"S": "b", "L": [1, 2]}),
                "Bbb",
            ),
            // define and template
            (
                "{{ define \"x\" }}[{{ . }}]{{ end }}{{ template \"x\" .S }}",
                json!({"S": "q"}),
                "[q]",
            ),
        ];
        for (src, data, want) in cases {
            assert_eq!(render(src, data.clone()).as_deref(), Ok(*want), "{src}");
        }
    }

    #[test]
    fn a_missing_key_is_an_error_and_a_parse_error_has_its_position() {
        let e = render("{{ .Params.NOPE }}", json!({"Params": {}})).unwrap_err();
        assert!(e.message.contains("NOPE"), "{e:?}");
        let Err(e) = parse("t.yaml", "a\n{{ if }}") else {
            panic!("`{{{{ if }}}}` parses")
        };
        assert_eq!(e.at.map(|(l, _)| l), Some(2), "{e:?}");
    }
}
