//! Rendering with the defaults, as the manager renders: every plan, step by step, with the
//! context of the step that runs each task.
//!
//! - `Apply`, `Delete` and `Toggle` tasks: all their resources, into Kubernetes objects (a
//!   Toggle renders whether it applies or deletes them, a Delete renders what it deletes);
//! - `Pipe` tasks: the Pod, checked as the manager checks it before running one (KUDO's rules,
//!   [`crate::pipe::check_pod`]);
//! - `KudoOperator` tasks: the `parameterFile`, as text (it holds the child's parameters, not
//!   objects);
//! - a rendered object of kind `Namespace` is refused as in [`super::namespace`]: a `kind`
//!   computed by the template is found here, and so is the `namespaceManifest` when a task
//!   applies it (a task may not create the Namespace, whatever the template);
//! - a rendered object in an API version Kubernetes no longer serves ([`kudo_k8s::successor`]) is
//!   a warning (`removed-api`) at its `apiVersion` line: kudo-manager applies its successor on
//!   clusters that do not serve it, or, when there is no mechanical successor, the plan fails
//!   there.
//!
//! Each template is judged on its own: one that is missing, does not parse or has findings of
//! its own (`skipped`, reported by the other checks) adds no rendering finding (rendering stops
//! at what was reported, and would repeat it), and every other template is still rendered.
//! Templates no task of a plan names are not rendered (they are never applied; an unused
//! template is reported as such).

use std::path::PathBuf;

use serde_json::Value;

use super::namespace;
use crate::package::{Package, Task, TaskKind};
use crate::render::{self, Prepared, RenderOptions, Use};
use kudo_diag::diag::{Code, Diagnostic, Location, Origin};
use kudo_k8s::successor;

/// What rendering already reported, so that nothing is reported twice.
struct Findings<'a> {
    pkg: &'a Package,
    skipped: &'a [PathBuf],
    /// Templates already reported as creating a Namespace.
    namespaces: Vec<String>,
    out: &'a mut Vec<Diagnostic>,
}

impl Findings<'_> {
    /// Adds rendering's findings, except those about templates the other checks reported
    /// (missing ones, without a file: the operator checks name them where a task names them;
    /// skipped ones) and repeats.
    fn add(&mut self, diags: Vec<Diagnostic>) {
        for d in diags {
            let repeated = match &d.origin {
                Origin::File(l) => self.skipped.contains(&l.path),
                _ => true,
            };
            if !repeated && !self.out.contains(&d) {
                self.out.push(d);
            }
        }
    }

    /// Refuses the rendered templates that hold a Namespace, once each.
    fn objects(&mut self, rendered: &[render::Rendered]) {
        for r in rendered {
            if self.namespaces.contains(&r.template)
                || !r.objects.iter().any(|o| o["kind"] == "Namespace")
            {
                continue;
            }
            self.namespaces.push(r.template.clone());
            let d = namespace::namespace_object(self.pkg, &r.template, 1, 1);
            self.out.push(d);
        }
    }

    /// Warns about every rendered object in a removed API version, once each.
    fn removed_versions(&mut self, rendered: &[render::Rendered]) {
        for r in rendered {
            let text = self.pkg.templates().get(&r.template);
            let mut seen: Vec<&str> = Vec::new(); // the removed versions met so far, per object
            for obj in &r.objects {
                let Some(converted) = successor::convert(obj) else {
                    continue;
                };
                let removal = match &converted {
                    Ok(c) => c.removal,
                    Err(u) => u.removal,
                };
                let nth = seen.iter().filter(|v| **v == removal.from).count();
                seen.push(removal.from);
                let (line, col) = text
                    .and_then(|t| api_version_lines(t, removal.from).get(nth).copied())
                    .unwrap_or((1, 1));
                let d = removed_version(&r.template, obj, &converted).with_origin(Origin::File(
                    Location {
                        path: self.pkg.source().join("templates").join(&r.template),
                        line,
                        col,
                    },
                ));
                if !self.out.contains(&d) {
                    self.out.push(d);
                }
            }
        }
    }
}

/// The warning for `obj`, rendered from `template`, in a removed API version.
fn removed_version(
    template: &str,
    obj: &Value,
    converted: &Result<successor::Converted, successor::Unmapped>,
) -> Diagnostic {
    let meta = |k: &str| {
        obj.get("metadata")
            .and_then(|m| m.get(k))
            .and_then(Value::as_str)
    };
    let name = meta("name")
        .map(str::to_string)
        .or_else(|| meta("generateName").map(|g| format!("{g}*")))
        .unwrap_or_else(|| "(unnamed)".to_string());
    let (removal, refusal) = match converted {
        Ok(c) => (c.removal, None),
        Err(u) => (u.removal, Some(&u.refusal)),
    };
    let head = format!(
        "template {template}: {} {name} is {}, which Kubernetes {} and later do not serve",
        removal.kind, removal.from, removal.removed_in
    );
    let (message, help) = match (removal.to, refusal) {
        (Some(to), None) => (
            format!(
                "{head}; kudo-manager applies it as {to} on clusters that do not serve {}",
                removal.from
            ),
            format!("write it as {to} ({})", removal.reference()),
        ),
        (Some(to), Some(refusal)) => (
            format!(
                "{head}, and kudo-manager cannot apply it as {to}: {refusal}; plans that apply it fail on those clusters"
            ),
            format!("see {}", removal.reference()),
        ),
        (None, refusal) => (
            format!(
                "{head}: {}; plans that apply it fail on those clusters",
                refusal.map(ToString::to_string).unwrap_or_default()
            ),
            format!("see {}", removal.reference()),
        ),
    };
    Diagnostic::warning(Code::RemovedApi, "", message).with_help(help)
}

/// The line and column (1-based) of each `apiVersion: VERSION` key in a template's text, in
/// order (a block sequence's `- apiVersion:` too).
fn api_version_lines(text: &str, version: &str) -> Vec<(usize, usize)> {
    text.lines()
        .enumerate()
        .filter_map(|(i, line)| {
            let key = line.trim_start().trim_start_matches("- ");
            let value = key.strip_prefix("apiVersion:")?.trim();
            let value = value.trim_matches(|c| c == '"' || c == '\'');
            let col = line[..line.len() - key.len()].chars().count() + 1;
            (value == version).then_some((i + 1, col))
        })
        .collect()
}

/// Renders every plan with `values`; `namespaces` are the templates already reported as
/// creating a Namespace.
pub(super) fn check(
    prepared: &Prepared<'_>,
    values: &Value,
    skipped: &[PathBuf],
    namespaces: Vec<String>,
    out: &mut Vec<Diagnostic>,
) {
    let pkg = prepared.package();
    let mut f = Findings {
        pkg,
        skipped,
        namespaces,
        out,
    };
    let op = pkg.operator();
    for (plan_name, plan) in &op.plans {
        let opts = RenderOptions {
            plan: plan_name.clone(),
            ..RenderOptions::default()
        };
        for phase in &plan.phases {
            for step in &phase.steps {
                // a task the operator does not define is reported by the operator checks
                for task in step.tasks.iter().filter_map(|t| op.task(t)) {
                    let at = |template: &str| Use {
                        phase: phase.name.clone(),
                        step: step.name.clone(),
                        task: task.name.clone(),
                        template: template.to_string(),
                    };
                    match task.kind {
                        TaskKind::Apply | TaskKind::Delete | TaskKind::Toggle => {
                            match prepared.render_task(
                                values,
                                &opts,
                                &phase.name,
                                &step.name,
                                &task.name,
                            ) {
                                Ok(rendered) => {
                                    f.objects(&rendered);
                                    f.removed_versions(&rendered);
                                }
                                Err(diags) => f.add(diags),
                            }
                        }
                        TaskKind::Pipe => pipe_pod(&mut f, prepared, values, &opts, task, &at),
                        TaskKind::KudoOperator => {
                            let file = task
                                .spec
                                .get("parameterFile")
                                .and_then(Value::as_str)
                                .map(str::trim)
                                .filter(|p| !p.is_empty());
                            if let Some(file) = file
                                && let Err(diags) =
                                    prepared.render_parameter_file(values, &opts, at(file))
                            {
                                f.add(diags);
                            }
                        }
                        _ => {} // an unknown kind is reported by the operator checks
                    }
                }
            }
        }
    }
}

/// A Pipe task's Pod, rendered and checked as the manager checks it before running one.
fn pipe_pod(
    f: &mut Findings<'_>,
    prepared: &Prepared<'_>,
    values: &Value,
    opts: &RenderOptions,
    task: &Task,
    at: &dyn Fn(&str) -> Use,
) {
    let Ok(spec) = crate::pipe::PipeTask::of(task) else {
        return; // a malformed Pipe task is reported by the operator checks
    };
    let file = f.pkg.source().join("templates").join(&spec.pod);
    if f.skipped.contains(&file) {
        return;
    }
    let problem = match prepared.render_pipe_pod(values, opts, at(&spec.pod)) {
        Err(diags) => return f.add(diags),
        Ok(r) => match &r.objects[..] {
            [pod] if pod["kind"] == "Pod" => crate::pipe::check_pod(pod, &spec.files)
                .err()
                .map(|e| e.to_string()),
            _ => Some("must hold exactly one Pod".to_string()),
        },
    };
    if let Some(p) = problem {
        let d = Diagnostic::error(
            Code::Template,
            "",
            format!("Pipe task `{}`: templates/{}: {p}", task.name, spec.pod),
        )
        .with_origin(Origin::File(Location {
            path: file,
            line: 1,
            col: 1,
        }));
        f.add(vec![d]);
    }
}
