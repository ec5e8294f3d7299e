//! `package verify`: the checks a package must pass before it is published or installed.
//!
//! Now: the package loads (done by the caller); the parameter schema is valid against its
//! metaschema and compiles; every default validates against the schema; plans name defined
//! tasks and tasks name existing templates; a `deploy` plan exists; every template renders
//! with the defaults and produces Kubernetes objects.

use serde_json::Value;

use crate::diag::{Code, Diagnostic, Location, Origin, Severity};
use crate::package::Package;
use crate::params::Params;
use crate::pointer;
use crate::render::{self, RenderOptions};
use crate::validate::Validator;
use crate::values::Values;

/// Runs every check; the result holds errors and warnings, in check order.
pub fn verify(pkg: &Package) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let schema = pkg.schema();
    let op = pkg.operator();

    if let Some((line, col, message)) = pkg.operator_document().duplicate_key() {
        out.push(
            Diagnostic::warning(
                Code::Operator,
                "",
                format!("operator.yaml: {message}; the last value is used"),
            )
            .with_origin(Origin::File(Location {
                path: pkg.operator_document().path().to_path_buf(),
                line: *line,
                col: *col,
            })),
        );
    }
    if !op.plans.contains_key("deploy") {
        out.push(Diagnostic::error(
            Code::Operator,
            "",
            "the operator has no `deploy` plan",
        ));
    }
    for (plan_name, plan) in &op.plans {
        for phase in &plan.phases {
            for step in &phase.steps {
                for t in &step.tasks {
                    if op.task(t).is_none() {
                        out.push(Diagnostic::error(
                            Code::Operator,
                            "",
                            format!("plan `{plan_name}` phase `{}` step `{}` uses task `{t}`, which is not defined", phase.name, step.name),
                        ));
                    }
                }
            }
        }
    }
    for task in &op.tasks {
        for r in &task.resources {
            if !pkg.templates().contains_key(r) {
                out.push(Diagnostic::error(
                    Code::Template,
                    "",
                    format!(
                        "task `{}` uses templates/{r}, which the package does not have",
                        task.name
                    ),
                ));
            }
        }
    }

    let validator = match Validator::new(schema) {
        Ok(v) => v,
        Err(diags) => {
            out.extend(diags.into_iter().map(|d| {
                let origin = schema_location(pkg, &d.pointer)
                    .map(Origin::File)
                    .unwrap_or(Origin::None);
                d.with_origin(origin)
            }));
            return out;
        }
    };

    let mut defaults = Values::new(Value::Object(Default::default()), Origin::None);
    defaults.apply_defaults(schema);
    for d in validator.validate(&defaults) {
        if d.code == Code::Required {
            continue; // a package may require the user to give a value
        }
        let origin = default_location(pkg, &d.pointer)
            .map(Origin::File)
            .unwrap_or(Origin::Default);
        out.push(Diagnostic {
            code: Code::InvalidDefault,
            message: format!("the default {}", d.message),
            origin,
            ..d
        });
    }

    // Render every template (not only the deploy plan's) with the defaults.
    let mut hb = render::engine();
    for (name, text) in pkg.templates() {
        let file = pkg.source().join("templates").join(name);
        if let Err(e) = hb.register_template_string(name, text) {
            let (line, col) = e.pos().unwrap_or((1, 1));
            out.push(
                Diagnostic::error(
                    Code::Template,
                    "",
                    format!("template {name} does not parse: {}", e.reason()),
                )
                .with_origin(Origin::File(Location {
                    path: file,
                    line,
                    col: col.max(1),
                })),
            );
        }
    }
    if !out.iter().any(|d| d.code == Code::Template) {
        let opts = RenderOptions::default();
        for plan in op.plans.keys() {
            let opts = RenderOptions {
                plan: plan.clone(),
                ..opts.clone()
            };
            if let Err(diags) = render::render_plan(pkg, defaults.value(), &opts) {
                for d in diags {
                    if !out.contains(&d) {
                        out.push(d);
                    }
                }
            }
        }
    }
    out
}

/// Where the default of the parameter at a value pointer is written in params.yaml.
pub fn default_location(pkg: &Package, value_pointer: &str) -> Option<Location> {
    let doc = pkg.params_document();
    let tokens = pointer::tokens(value_pointer).ok()?;
    match pkg.params() {
        Params::V1beta1(p) => {
            let param = p.get(tokens.first()?)?;
            doc.location(&format!("{}/default", param.pointer))
        }
        Params::V1beta2(_) => {
            // Walk properties/items; the default sits on the deepest node that has one.
            let mut schema_ptr = String::new();
            let mut best = None;
            for t in &tokens {
                if t.parse::<usize>().is_ok() {
                    schema_ptr.push_str("/items");
                } else {
                    schema_ptr = pointer::push(&format!("{schema_ptr}/properties"), t);
                }
                let d = format!("{schema_ptr}/default");
                if doc.value().pointer(&d).is_some() {
                    best = doc.location(&d);
                }
            }
            best.or_else(|| doc.location(&schema_ptr))
        }
    }
}

/// Where a schema pointer is written in params.yaml (v1beta2 only).
fn schema_location(pkg: &Package, schema_pointer: &str) -> Option<Location> {
    match pkg.params() {
        Params::V1beta2(_) => pkg.params_document().location(schema_pointer),
        Params::V1beta1(_) => None,
    }
}

/// True when any diagnostic is an error.
pub fn failed(diags: &[Diagnostic]) -> bool {
    diags.iter().any(|d| d.severity == Severity::Error)
}
