//! What a plan step does: each of its tasks, with what running it means under the effective
//! parameters. The renderer ([`crate::render::plan_templates`], what `kudo template` prints)
//! and kudo-manager (which runs the step) read a step through [`tasks`].
//!
//! | task kind | in a step | in a step with `delete: true` |
//! |---|---|---|
//! | `Apply` | [`Action::Apply`]: its `resources` | [`Action::Delete`] |
//! | `Delete` | [`Action::Delete`]: the objects of its `resources` | [`Action::Delete`] |
//! | `Toggle` | [`Action::Apply`] when its `parameter` is true ([`toggle_enabled`]), else [`Action::Delete`] | [`Action::Delete`] |
//! | `Pipe` | [`Action::Pipe`] ([`crate::pipe`]) | [`Action::Delete`] |
//! | `KudoOperator` | [`Action::KudoOperator`] ([`crate::dependency`]) | [`Action::Delete`] |
//! | `Dummy` | [`Action::Nothing`] | [`Action::Delete`] |
//! | another kind | [`Action::Unsupported`] | [`Action::Delete`] |
//!
//! ```
//! use kudo_pkg::step::{self, Action};
//! # let files = std::collections::BTreeMap::from([("operator.yaml".to_string(), br#"
//! # name: demo
//! # tasks:
//! # - {name: app, kind: Apply, spec: {resources: [app.yaml]}}
//! # - {name: backup, kind: Toggle, spec: {resources: [cron.yaml], parameter: BACKUP}}
//! # plans:
//! #   deploy: {phases: [{name: main, steps: [{name: all, tasks: [app, backup]}]}]}
//! # "#.to_vec())]);
//! # let pkg = kudo_pkg::Package::from_files(std::path::Path::new("demo"), files).unwrap();
//! let op = pkg.operator();
//! let all = step::find(op, "deploy", "main", "all").unwrap();
//! let params = serde_json::json!({"BACKUP": false});
//! let actions: Vec<(&str, Action)> = step::tasks(op, all, &params)
//!     .map(|t| t.map(|t| (t.task.name.as_str(), t.action)))
//!     .collect::<Result<_, _>>()
//!     .unwrap();
//! assert_eq!(actions, [("app", Action::Apply), ("backup", Action::Delete)]);
//! ```

use serde_json::Value;

use crate::package::{Operator, Step, Task, TaskKind};

/// What running one task of a step does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Renders the task's `resources` and applies the objects.
    Apply,
    /// Renders the task's `resources` and deletes the objects.
    Delete,
    /// Runs the Pipe task.
    Pipe,
    /// Applies the KudoOperator task's child Instance.
    KudoOperator,
    /// Nothing (a `Dummy` task).
    Nothing,
    /// Nothing kudo can run: a task of a kind KUDO does not know.
    Unsupported,
}

/// A task of a step, with what running it does.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepTask<'a> {
    /// The task.
    pub task: &'a Task,
    /// What running it does.
    pub action: Action,
}

/// A task a step names that the operator does not define.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("task `{0}` is not defined")]
pub struct UndefinedTask(pub String);

/// Step `step` of phase `phase` of plan `plan`.
pub fn find<'a>(op: &'a Operator, plan: &str, phase: &str, step: &str) -> Option<&'a Step> {
    op.plans
        .get(plan)?
        .phases
        .iter()
        .find(|ph| ph.name == phase)?
        .steps
        .iter()
        .find(|s| s.name == step)
}

/// The tasks of `step`, in order, each with what it does under the effective parameters
/// `params` (see the module docs); a task the operator does not define, where the step names
/// it.
pub fn tasks<'a>(
    op: &'a Operator,
    step: &'a Step,
    params: &'a Value,
) -> impl Iterator<Item = Result<StepTask<'a>, UndefinedTask>> + 'a {
    step.tasks.iter().map(move |name| {
        let task = op.task(name).ok_or_else(|| UndefinedTask(name.clone()))?;
        Ok(StepTask {
            task,
            action: action(task, step.delete, params),
        })
    })
}

fn action(task: &Task, delete_step: bool, params: &Value) -> Action {
    if delete_step {
        return Action::Delete;
    }
    match &task.kind {
        TaskKind::Apply => Action::Apply,
        TaskKind::Delete => Action::Delete,
        TaskKind::Toggle => {
            let on = task
                .parameter
                .as_deref()
                .is_some_and(|p| toggle_enabled(params, p));
            if on { Action::Apply } else { Action::Delete }
        }
        TaskKind::Pipe => Action::Pipe,
        TaskKind::KudoOperator => Action::KudoOperator,
        TaskKind::Dummy => Action::Nothing,
        TaskKind::Other(_) => Action::Unsupported,
    }
}

/// Whether a Toggle task is on: its parameter is a top-level name (`ENABLED`) or a pointer
/// (`backup/enabled`) whose value is `true` (or `"true"`, as v1beta1 values are).
pub fn toggle_enabled(params: &Value, name: &str) -> bool {
    let v = if name.contains('/') {
        let p = if name.starts_with('/') {
            name.to_string()
        } else {
            format!("/{name}")
        };
        params.pointer(&p)
    } else {
        params.get(name)
    };
    matches!(v, Some(Value::Bool(true))) || matches!(v, Some(Value::String(s)) if s == "true")
}

/// Sorts the objects one task applies so that what others need to exist comes first, keeping
/// the template order otherwise (a stable sort): CustomResourceDefinitions, Namespaces,
/// ServiceAccounts, then Roles and ClusterRoles. KUDO applied in template order with a
/// manager that held every right; acting with an Instance's ServiceAccount, a RoleBinding
/// applied before its Role is refused (RBAC's escalation check reads the Role: `roles ...
/// not found`), which kafka's `configuration` task does. Helm orders by kind the same way.
pub fn apply_order(objects: &mut [Value]) {
    let rank = |o: &Value| match o.get("kind").and_then(Value::as_str) {
        Some("CustomResourceDefinition") => 0,
        Some("Namespace") => 1,
        Some("ServiceAccount") => 2,
        Some("Role" | "ClusterRole") => 3,
        _ => 4,
    };
    objects.sort_by_key(rank);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_others_need_is_applied_first_and_the_rest_keeps_its_order() {
        let obj =
            |kind: &str, name: &str| serde_json::json!({"kind": kind, "metadata": {"name": name}});
        // kafka's `configuration` task, in its template order.
        let mut objects = vec![
            obj("ServiceAccount", "kafka"),
            obj("RoleBinding", "kafka-binding"),
            obj("Role", "kafka-role"),
            obj("ConfigMap", "a"),
            obj("ConfigMap", "b"),
            obj("CustomResourceDefinition", "c"),
        ];
        apply_order(&mut objects);
        let names: Vec<&str> = objects
            .iter()
            .map(|o| o["metadata"]["name"].as_str().unwrap())
            .collect();
        assert_eq!(
            names,
            ["c", "kafka", "kafka-role", "kafka-binding", "a", "b"]
        );
    }
    use crate::package::Package;
    use serde_json::json;
    use std::collections::BTreeMap;
    use std::path::Path;

    fn operator(delete: bool) -> Operator {
        let yaml = format!(
            "name: demo\ntasks:\n\
             - {{name: a, kind: Apply, spec: {{resources: [a.yaml]}}}}\n\
             - {{name: d, kind: Delete, spec: {{resources: [d.yaml]}}}}\n\
             - {{name: t, kind: Toggle, spec: {{resources: [t.yaml], parameter: backup/on}}}}\n\
             - {{name: p, kind: Pipe, spec: {{pod: p.yaml}}}}\n\
             - {{name: k, kind: KudoOperator, spec: {{package: ./zk}}}}\n\
             - {{name: n, kind: Dummy}}\n\
             - {{name: x, kind: Unknown}}\n\
             plans:\n  deploy:\n    phases:\n    - name: main\n      steps:\n\
             \x20     - {{name: s, delete: {delete}, tasks: [a, d, t, p, k, n, x, missing]}}\n"
        );
        let files = BTreeMap::from([("operator.yaml".to_string(), yaml.into_bytes())]);
        let pkg = Package::from_files(Path::new("demo"), files).unwrap();
        pkg.operator().clone()
    }

    /// Each task of the step: its name and action, or the task the operator does not define.
    type Resolved = Vec<Result<(String, Action), UndefinedTask>>;

    fn actions(op: &Operator, params: Value) -> Resolved {
        let step = find(op, "deploy", "main", "s").unwrap();
        tasks(op, step, &params)
            .map(|t| t.map(|t| (t.task.name.clone(), t.action)))
            .collect()
    }

    #[test]
    fn each_kind_does_what_the_table_says_and_a_delete_step_deletes_everything() {
        use Action::*;
        let ok = |name: &str, a| Ok((name.to_string(), a));
        let missing = Err(UndefinedTask("missing".into()));
        let cases: &[(bool, Value, Resolved)] = &[
            (
                false,
                json!({"backup": {"on": true}}),
                vec![
                    ok("a", Apply),
                    ok("d", Delete),
                    ok("t", Apply),
                    ok("p", Pipe),
                    ok("k", KudoOperator),
                    ok("n", Nothing),
                    ok("x", Unsupported),
                    missing.clone(),
                ],
            ),
            (
                false,
                json!({"backup": {"on": "false"}}),
                vec![
                    ok("a", Apply),
                    ok("d", Delete),
                    ok("t", Delete),
                    ok("p", Pipe),
                    ok("k", KudoOperator),
                    ok("n", Nothing),
                    ok("x", Unsupported),
                    missing.clone(),
                ],
            ),
            (
                true,
                json!({"backup": {"on": true}}),
                ["a", "d", "t", "p", "k", "n", "x"]
                    .into_iter()
                    .map(|n| ok(n, Delete))
                    .chain([missing.clone()])
                    .collect(),
            ),
        ];
        for (delete, params, want) in cases {
            let got = actions(&operator(*delete), params.clone());
            assert_eq!(&got, want, "delete step: {delete}, params: {params}");
        }
    }

    #[test]
    fn a_step_is_found_by_plan_phase_and_name() {
        let op = operator(false);
        assert!(find(&op, "deploy", "main", "s").is_some());
        assert!(find(&op, "deploy", "main", "nope").is_none());
        assert!(find(&op, "deploy", "other", "s").is_none());
        assert!(find(&op, "update", "main", "s").is_none());
    }
}
