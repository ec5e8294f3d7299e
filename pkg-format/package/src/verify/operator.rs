//! `operator.yaml`: versions, plans, tasks.
//!
//! Task kinds are KUDO's (`pkg/engine/task`): `Apply` and `Delete` need `resources`; `Toggle`
//! needs `resources` and a `parameter` (a name, or a pointer like `backup/enabled`) that the
//! package defines; `Pipe` needs a `pod` template and `pipe` files (each with exactly one of
//! `file` and `envFile`, a `kind` of `Secret` or `ConfigMap`, a `key` of letters, digits, `_`
//! and `-`); `KudoOperator` needs `package` and `operatorVersion`; `Dummy` needs nothing. The
//! legacy task map (`name: {resources: [...]}`) holds Apply tasks.
//!
//! Every template a task names exists; every file under `templates/` is named by a task (of
//! any kind, used by a plan or not) or is the `namespaceManifest`, else it is never applied
//! (a warning, as in KUDO's verifier).
//!
//! Not checked: that a KudoOperator's package exists in a repository, and the values of a
//! Pipe's `file` paths (they live in the pod).

use serde_json::Value;

use super::{did_you_mean, operator_origin};
use crate::package::{Package, Task, TaskKind};
use kudo_diag::diag::{Code, Diagnostic, Location, Origin};
use kudo_diag::pointer;
use kudo_policy::params::Params;
use kudo_sprig::semver::{self, Version};

pub(super) fn check(pkg: &Package, out: &mut Vec<Diagnostic>) {
    let doc = pkg.operator_document();
    if let Some((line, col, message)) = doc.duplicate_key() {
        out.push(
            Diagnostic::warning(
                Code::Operator,
                "",
                format!("operator.yaml: {message}; the last value is used"),
            )
            .with_origin(Origin::File(Location {
                path: doc.path().to_path_buf(),
                line: *line,
                col: *col,
            })),
        );
    }
    versions(pkg, out);
    plans(pkg, out);
    for (i, task) in pkg.operator().tasks.iter().enumerate() {
        task_well_formed(pkg, i, task, out);
    }
    unused_tasks(pkg, out);
    unused_templates(pkg, out);
}

/// KUDO read every version with Masterminds/semver's `NewVersion`, which accepts a leading `v`
/// and a missing minor or patch number (`5.7` is 5.7.0); published packages rely on both
/// (`appVersion: 5.7`), so they are accepted here too, and nothing looser: the reader is
/// [`Version::parse`], the one templates' `semver` and repositories use (spaces around the
/// version ignored). `kudoVersion` is the KUDO version the package was written for, a version
/// too (not a range: every published package gives one version).
pub(super) fn parse_version(text: &str) -> Result<Version, String> {
    Version::parse(text.trim()).map_err(|e| match e {
        semver::Error::Invalid => "expected MAJOR[.MINOR[.PATCH]] numbers with an optional -PRERELEASE or +BUILD, like 1.2.3".into(),
        other => other.to_string(),
    })
}

fn versions(pkg: &Package, out: &mut Vec<Diagnostic>) {
    let op = pkg.operator();
    let doc = pkg.operator_document().value();
    let version_key = if doc.get("operatorVersion").is_none() && doc.get("version").is_some() {
        "version"
    } else {
        "operatorVersion"
    };
    let fields = [
        (version_key, op.operator_version.as_deref(), true),
        ("kubernetesVersion", op.kubernetes_version.as_deref(), true),
        ("appVersion", op.app_version.as_deref(), false),
        ("kudoVersion", op.kudo_version.as_deref(), false),
    ];
    for (key, value, required) in fields {
        let ptr = pointer::push("", key);
        match value.map(str::trim) {
            None | Some("") if required => out.push(
                Diagnostic::error(
                    Code::Version,
                    "",
                    format!("`{key}` is missing: it is required, as a semantic version"),
                )
                .with_origin(operator_origin(pkg, ""))
                .with_help(format!(
                    "add `{key}: 1.0.0` (MAJOR.MINOR.PATCH) to operator.yaml"
                )),
            ),
            None | Some("") => {}
            Some(v) => {
                if let Err(why) = parse_version(v) {
                    out.push(
                        Diagnostic::error(
                            Code::Version,
                            "",
                            format!("`{key}` {v:?} is not a semantic version: {why}"),
                        )
                        .with_origin(operator_origin(pkg, &ptr)),
                    );
                }
            }
        }
    }
}

fn plans(pkg: &Package, out: &mut Vec<Diagnostic>) {
    let op = pkg.operator();
    if !op.plans.contains_key("deploy") {
        out.push(
            Diagnostic::error(Code::Operator, "", "the operator has no `deploy` plan")
                .with_origin(operator_origin(pkg, "/plans")),
        );
    }
    for (plan_name, plan) in &op.plans {
        for (pi, phase) in plan.phases.iter().enumerate() {
            for (si, step) in phase.steps.iter().enumerate() {
                for (ti, t) in step.tasks.iter().enumerate() {
                    if op.task(t).is_some() {
                        continue;
                    }
                    let ptr = format!(
                        "{}/phases/{pi}/steps/{si}/tasks/{ti}",
                        pointer::push("/plans", plan_name)
                    );
                    let mut d = Diagnostic::error(
                        Code::Operator,
                        "",
                        format!(
                            "plan `{plan_name}` phase `{}` step `{}` uses task `{t}`, which is not defined",
                            phase.name, step.name
                        ),
                    )
                    .with_origin(operator_origin(pkg, &ptr));
                    if let Some(m) = did_you_mean(t, op.tasks.iter().map(|t| t.name.as_str())) {
                        d = d.with_help(format!("did you mean `{m}`?"));
                    }
                    out.push(d);
                }
            }
        }
    }
}

/// Where a task is written: `/tasks/N` in the list format, `/tasks/NAME` in the legacy map;
/// and where its spec fields are.
fn task_pointers(pkg: &Package, index: usize, task: &Task) -> (String, String) {
    match pkg.operator_document().value().get("tasks") {
        Some(Value::Array(_)) => (format!("/tasks/{index}"), format!("/tasks/{index}/spec")),
        _ => {
            let p = pointer::push("/tasks", &task.name);
            (p.clone(), p)
        }
    }
}

fn task_well_formed(pkg: &Package, index: usize, task: &Task, out: &mut Vec<Diagnostic>) {
    let (at, spec_at) = task_pointers(pkg, index, task);
    let spec = &task.spec;
    let name = &task.name;
    let kind = &task.kind;
    // `field` is a spec field (`pipe/0`), or `/kind` for the task's own key
    let mut error = |field: &str, message: String| {
        let ptr = match field.strip_prefix('/') {
            Some(own) => format!("{at}/{own}"),
            None => format!("{spec_at}/{field}"),
        };
        out.push(
            Diagnostic::error(Code::Operator, "", message).with_origin(operator_origin(pkg, &ptr)),
        );
    };
    let text = |field: &str| {
        spec.get(field)
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty())
    };
    let resources_given = !task.resources.is_empty();
    match kind {
        TaskKind::Apply | TaskKind::Delete | TaskKind::Toggle if !resources_given => error(
            "resources",
            format!(
                "{kind} task `{name}` has no resources: it needs at least one template; a step that does nothing is a Dummy task"
            ),
        ),
        _ => {}
    }
    match kind {
        TaskKind::Apply | TaskKind::Delete | TaskKind::Dummy => {}
        TaskKind::Toggle => match text("parameter") {
            None => error(
                "parameter",
                format!(
                    "Toggle task `{name}` has no `parameter`: it needs the boolean parameter that switches its resources on"
                ),
            ),
            Some(p) if !parameter_defined(pkg, p) => {
                let mut message =
                    format!("Toggle task `{name}` uses parameter `{p}`, which is not defined");
                if let Some(m) = did_you_mean(p, top_level_names(pkg)) {
                    message.push_str(&format!(" (did you mean `{m}`?)"));
                }
                error("parameter", message);
            }
            Some(_) => {}
        },
        TaskKind::Pipe => {
            if text("pod").is_none() {
                error(
                    "pod",
                    format!(
                        "Pipe task `{name}` has no `pod`: it needs the template of the pod that produces the files"
                    ),
                );
            }
            match spec.get("pipe") {
                Some(Value::Array(files)) if !files.is_empty() => {
                    for (i, f) in files.iter().enumerate() {
                        if let Some(why) = pipe_file_problem(f) {
                            error(
                                &format!("pipe/{i}"),
                                format!("Pipe task `{name}` pipe file {i} {why}"),
                            );
                        }
                    }
                }
                _ => error(
                    "pipe",
                    format!("Pipe task `{name}` has no `pipe` files: it needs at least one"),
                ),
            }
        }
        TaskKind::KudoOperator => {
            for field in ["package", "operatorVersion"] {
                if text(field).is_none() {
                    error(
                        field,
                        format!("KudoOperator task `{name}` has no `{field}`"),
                    );
                }
            }
        }
        TaskKind::Other(other) => {
            let known = TaskKind::KNOWN.map(|k| k.to_string());
            let mut message = format!(
                "task `{name}` has the unknown kind `{other}` (known: {})",
                known.join(", ")
            );
            if let Some(m) = did_you_mean(other, known.iter().map(String::as_str)) {
                message.push_str(&format!("; did you mean `{m}`?"));
            }
            error("/kind", message);
        }
    }

    for (field, file) in task_templates(task) {
        if !pkg.templates().contains_key(file) {
            let ptr = format!("{spec_at}/{field}");
            out.push(
                Diagnostic::error(
                    Code::Template,
                    "",
                    format!("task `{name}` uses templates/{file}, which the package does not have"),
                )
                .with_origin(operator_origin(pkg, &ptr)),
            );
        }
    }
}

/// The templates a task names, with the spec field that names each: its `resources` (of any
/// kind: a task of an unknown kind is reported once, as such), a Pipe's `pod`, a
/// KudoOperator's `parameterFile`.
pub(super) fn task_templates(task: &Task) -> Vec<(String, &str)> {
    let text = |field: &str| {
        task.spec
            .get(field)
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty())
    };
    let mut templates: Vec<(String, &str)> = task
        .resources
        .iter()
        .enumerate()
        .map(|(i, r)| (format!("resources/{i}"), r.as_str()))
        .collect();
    if task.kind == TaskKind::Pipe
        && let Some(p) = text("pod")
    {
        templates.push(("pod".into(), p));
    }
    if task.kind == TaskKind::KudoOperator
        && let Some(p) = text("parameterFile")
    {
        templates.push(("parameterFile".into(), p));
    }
    templates
}

/// Every template operator.yaml names: the tasks' ([`task_templates`]) and the
/// `namespaceManifest`.
pub(super) fn named_templates(pkg: &Package) -> Vec<&str> {
    let op = pkg.operator();
    op.tasks
        .iter()
        .flat_map(|t| task_templates(t).into_iter().map(|(_, f)| f))
        .chain(op.namespace_manifest.as_deref())
        .collect()
}

/// A template file no task names, and that is not the `namespaceManifest`: it is never
/// applied (KUDO's "template is not referenced from any task").
fn unused_templates(pkg: &Package, out: &mut Vec<Diagnostic>) {
    let named = named_templates(pkg);
    for name in pkg.templates().keys() {
        if named.contains(&name.as_str()) {
            continue;
        }
        out.push(
            Diagnostic::warning(
                Code::Unused,
                "",
                format!("templates/{name} is not used by any task, nor as the `namespaceManifest`"),
            )
            .with_origin(Origin::File(Location {
                path: pkg.source().join("templates").join(name),
                line: 1,
                col: 1,
            }))
            .with_help("remove it, or name it in a task's `resources`"),
        );
    }
}

/// Why a Pipe task's file entry is malformed (KUDO's `validPipeFile`), if it is.
fn pipe_file_problem(f: &Value) -> Option<String> {
    let s = |k: &str| f.get(k).and_then(Value::as_str).unwrap_or("");
    let (file, env_file, kind, key) = (s("file"), s("envFile"), s("kind"), s("key"));
    if file.is_empty() == env_file.is_empty() {
        return Some("must have exactly one of `file` and `envFile`".into());
    }
    if kind != "Secret" && kind != "ConfigMap" {
        return Some(format!("has kind {kind:?}: it must be Secret or ConfigMap"));
    }
    let key_ok = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if !key_ok {
        return Some(format!(
            "has key {key:?}: only letters, digits, `_` and `-` are allowed"
        ));
    }
    None
}

/// A Toggle parameter: a name (v1beta1, or a top-level v1beta2 property) or a pointer
/// (`backup/enabled`, `/backup/enabled`).
fn parameter_defined(pkg: &Package, p: &str) -> bool {
    if let Params::V1beta1(params) = pkg.params()
        && !p.contains('/')
    {
        return params.get(p).is_some();
    }
    toggle_tokens(p).is_some_and(|t| pkg.schema().node_at(&t).is_some())
}

/// The value tokens of a Toggle task's `parameter`.
pub(super) fn toggle_tokens(p: &str) -> Option<Vec<String>> {
    if !p.contains('/') {
        return Some(vec![p.to_string()]);
    }
    let ptr = if p.starts_with('/') {
        p.to_string()
    } else {
        format!("/{p}")
    };
    pointer::tokens(&ptr).ok()
}

fn top_level_names(pkg: &Package) -> Vec<&str> {
    let schema = pkg.schema();
    schema.property_names(schema.root())
}

fn unused_tasks(pkg: &Package, out: &mut Vec<Diagnostic>) {
    let op = pkg.operator();
    for (i, task) in op.tasks.iter().enumerate() {
        let used = op.plans.values().any(|plan| {
            plan.phases.iter().any(|ph| {
                ph.steps
                    .iter()
                    .any(|s| s.tasks.iter().any(|t| t == &task.name))
            })
        });
        if !used {
            let (at, _) = task_pointers(pkg, i, task);
            out.push(
                Diagnostic::warning(
                    Code::Unused,
                    "",
                    format!("task `{}` is not used by any plan", task.name),
                )
                .with_origin(operator_origin(pkg, &at)),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_read_as_kudo_read_them() {
        let cases: &[(&str, Option<&str>)] = &[
            ("1.2.3", Some("1.2.3")),
            ("v1.2.3", Some("1.2.3")),
            ("5.7", Some("5.7.0")),
            ("2", Some("2.0.0")),
            ("0.15.0-rc1", Some("0.15.0-rc1")),
            ("1.0-beta.1+build.5", Some("1.0.0-beta.1+build.5")),
            (" 1.15.0 ", Some("1.15.0")),
            ("beta1", None),
            ("1.2.3.4", None),
            ("1..2", None),
            ("", None),
            ("v", None),
            ("1.x", None),
            (">= 0.10.0", None),
            ("1.2.3-", None),
        ];
        for (text, want) in cases {
            let got = parse_version(text).ok().map(|v| v.to_string());
            assert_eq!(got.as_deref(), *want, "{text:?}");
        }
    }

    #[test]
    fn verify_repositories_and_templates_read_versions_and_ranges_alike() {
        let sprig = |name: &str, args: &[&str]| {
            let args: Vec<gotmpl::Value> = args.iter().map(|a| gotmpl::Value::from(*a)).collect();
            kudo_sprig::funcs()[name](&args).map_err(|e| e.to_string())
        };
        // (text, the version verify, a repository's order and templates' `semver` read)
        #[rustfmt::skip]
        let versions: &[(&str, Option<&str>)] = &[
            ("1.3-beta", Some("1.3.0-beta")),
            ("v1.3", Some("1.3.0")),
            ("1.3", Some("1.3.0")),
            ("1.3.x", None),
            ("^1.3", None),
            (">=1.2, <2", None),
            ("01.2.3", Some("1.2.3")),
            ("1.2.3+build.5", Some("1.2.3+build.5")),
            ("1.2.3-01", None),
            ("latest", None),
        ];
        for (text, want) in versions {
            let verify = parse_version(text).ok().map(|v| v.to_string());
            let repository = crate::repo::version_of(text).map(|v| v.to_string());
            let template = sprig("semver", &[text]).ok().and_then(|m| match m {
                gotmpl::Value::Map(m) => m.get("String").map(|s| s.to_string()),
                _ => None,
            });
            assert_eq!(verify.as_deref(), *want, "verify: {text:?}");
            assert_eq!(repository.as_deref(), *want, "repository: {text:?}");
            assert_eq!(template.as_deref(), *want, "template: {text:?}");
        }
        // As asked for (`--operator-version`, a KudoOperator task) and in `semverCompare`.
        let candidates = [
            "1.1.9",
            "1.2.0",
            "1.3.0-beta",
            "1.3.0",
            "1.3.7",
            "1.4.0",
            "1.9.9",
        ];
        for want in ["1.3-beta", "v1.3", "1.3", "1.3.x", "^1.3", ">=1.2, <2"] {
            let asked = crate::repo::VersionWant::parse("--operator-version", want).unwrap();
            for version in candidates {
                let template = sprig("semverCompare", &[want, version]);
                assert_eq!(
                    Ok(gotmpl::Value::Bool(asked.accepts(version))),
                    template,
                    "{want:?} with {version}"
                );
            }
        }
        // Where they differ (kudo_sprig::semver's module doc): Masterminds v1.5.0, which
        // templates keep, reads `<2` as "MAJOR at most 2"; kudo picks packages below 2.0.0.
        let asked = crate::repo::VersionWant::parse("--operator-version", ">=1.2, <2").unwrap();
        assert!(!asked.accepts("2.5.0"));
        assert_eq!(
            sprig("semverCompare", &[">=1.2, <2", "2.5.0"]),
            Ok(gotmpl::Value::Bool(true))
        );
    }

    #[test]
    fn pipe_files_follow_kudos_rules() {
        use serde_json::json;
        let cases = [
            (
                json!({"file": "/tmp/a", "kind": "Secret", "key": "a_b-1"}),
                None,
            ),
            (
                json!({"envFile": "/tmp/e", "kind": "ConfigMap", "key": "k"}),
                None,
            ),
            (
                json!({"file": "/a", "envFile": "/b", "kind": "Secret", "key": "k"}),
                Some("must have exactly one of `file` and `envFile`"),
            ),
            (
                json!({"kind": "Secret", "key": "k"}),
                Some("must have exactly one of `file` and `envFile`"),
            ),
            (
                json!({"file": "/a", "kind": "Pod", "key": "k"}),
                Some("has kind \"Pod\": it must be Secret or ConfigMap"),
            ),
            (
                json!({"file": "/a", "kind": "Secret", "key": "a.b"}),
                Some("has key \"a.b\": only letters, digits, `_` and `-` are allowed"),
            ),
        ];
        for (f, want) in cases {
            assert_eq!(pipe_file_problem(&f).as_deref(), want, "{f}");
        }
    }

    #[test]
    fn toggle_parameters_are_names_or_pointers() {
        assert_eq!(toggle_tokens("ENABLED"), Some(vec!["ENABLED".to_string()]));
        assert_eq!(
            toggle_tokens("backup/enabled"),
            Some(vec!["backup".to_string(), "enabled".to_string()])
        );
        assert_eq!(
            toggle_tokens("/a~1b/c"),
            Some(vec!["a/b".to_string(), "c".to_string()])
        );
        assert_eq!(toggle_tokens("/a~2"), None);
    }
}
