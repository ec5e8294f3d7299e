//! `trigger`: which plan a parameter change runs.
//!
//! The rules (KEP-33; docs/architecture.md): the plan for a changed value is the `trigger` of the
//! nearest schema node on the path from that value up to the root (array items resolve through
//! `items`). Without one anywhere on the path, the operator's `update` plan runs if it has one,
//! else `deploy`. One update whose changes select two different plans is refused, naming every
//! changed path and its plan. Removing a value is a change like any other.
//!
//! A descendant restating a different trigger than its ancestor is a package defect found by
//! `package verify`; here the nearest one wins, so a broken package still selects a plan.

use serde_json::Value;

use crate::params::ParamSchema;
use kudo_diag::diag::{Code, Diagnostic, Origin};
use kudo_diag::pointer::{self, Arrays, Pointer};

/// Why a change runs its plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reason {
    /// A `trigger` on the node at this value pointer (the changed value or an ancestor).
    Trigger {
        /// The value pointer of the node that carries the `trigger`.
        at: Pointer,
    },
    /// No `trigger` on the path: the operator's `update` plan, or `deploy` without one.
    Fallback,
}

/// One changed value and the plan it runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValueChange {
    /// The value pointer that changed (added, removed or modified).
    pub pointer: Pointer,
    /// The plan this change runs.
    pub plan: String,
    /// Where the plan comes from.
    pub reason: Reason,
}

/// The outcome of an update: the plan to run (none when nothing changed) and every change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selection {
    /// The plan to run; `None` when old and new parameters are equal.
    pub plan: Option<String>,
    /// Every changed value, in pointer order.
    pub changes: Vec<ValueChange>,
}

/// The value pointers where `old` and `new` differ, in order: the deepest pointer at which they
/// still have the same shape (objects are compared key by key, arrays item by item; an item
/// only one of them has is a change of that item).
pub fn changed_paths(old: &Value, new: &Value) -> Vec<Pointer> {
    let mut out = Vec::new();
    pointer::diff(
        "",
        Some(old),
        Some(new),
        Arrays::ByIndex,
        &mut |at, _, _, _| out.push(Pointer::from(at.to_string())),
    );
    out
}

/// The plan a change at `value_pointer` runs. `plans` are the operator's plan names. Errors: a
/// `trigger` that names no plan of the operator, or no `update`/`deploy` plan to fall back to.
pub fn plan_for(
    schema: &ParamSchema,
    plans: &[&str],
    value_pointer: &str,
) -> Result<(String, Reason), Diagnostic> {
    let tokens = pointer::tokens(value_pointer).map_err(|e| {
        Diagnostic::error(Code::InvalidPointer, value_pointer, e.to_string())
            .with_origin(Origin::None)
    })?;
    let path = schema.path(&tokens);
    // path[i] is the node of the value at tokens[..i]; the nearest trigger is the deepest.
    for (i, node) in path.iter().enumerate().rev() {
        let Some(t) = node.get("trigger") else {
            continue;
        };
        let at = pointer::from_tokens(&tokens[..i]);
        let Some(plan) = t.as_str() else {
            return Err(Diagnostic::error(
                Code::UnknownPlan,
                value_pointer,
                format!("the trigger at {} is not a plan name", shown_at(&at)),
            ));
        };
        if !plans.contains(&plan) {
            return Err(Diagnostic::error(
                Code::UnknownPlan,
                value_pointer,
                format!(
                    "the trigger at {} names plan `{plan}`, which the operator does not have (plans: {})",
                    shown_at(&at),
                    plans.join(", ")
                ),
            ));
        }
        return Ok((plan.to_string(), Reason::Trigger { at: at.into() }));
    }
    for fallback in ["update", "deploy"] {
        if plans.contains(&fallback) {
            return Ok((fallback.to_string(), Reason::Fallback));
        }
    }
    Err(Diagnostic::error(
        Code::UnknownPlan,
        value_pointer,
        "no trigger on this parameter or its ancestors, and the operator has neither an `update` nor a `deploy` plan",
    ))
}

fn shown_at(at: &str) -> &str {
    if at.is_empty() { "the root" } else { at }
}

/// Selects the plan for an update from `old` to `new` effective parameters. Refused (every
/// problem returned) when a trigger names an unknown plan or the changes select two plans.
pub fn select(
    schema: &ParamSchema,
    plans: &[&str],
    old: &Value,
    new: &Value,
) -> Result<Selection, Vec<Diagnostic>> {
    let mut changes = Vec::new();
    let mut errors = Vec::new();
    for p in changed_paths(old, new) {
        // A value the schema does not have is validation's to refuse, once: it runs no plan.
        if pointer::tokens(&p).is_ok_and(|t| schema.node_at(&t).is_none()) {
            continue;
        }
        match plan_for(schema, plans, &p) {
            Ok((plan, reason)) => changes.push(ValueChange {
                pointer: p,
                plan,
                reason,
            }),
            Err(d) => errors.push(d),
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    let mut distinct: Vec<&str> = Vec::new();
    for c in &changes {
        if !distinct.contains(&c.plan.as_str()) {
            distinct.push(&c.plan);
        }
    }
    if distinct.len() > 1 {
        // One diagnostic for the whole update, at its first change in pointer order (the same
        // whichever way the values changed): each plan with the changes that run it.
        let mut changes = changes;
        changes.sort_by(|a, b| a.pointer.cmp(&b.pointer));
        let mut distinct: Vec<&str> = Vec::new();
        for c in &changes {
            if !distinct.contains(&c.plan.as_str()) {
                distinct.push(&c.plan);
            }
        }
        let each = distinct
            .iter()
            .map(|plan| {
                let at: Vec<&str> = changes
                    .iter()
                    .filter(|c| c.plan == *plan)
                    .map(|c| c.pointer.as_str())
                    .collect();
                format!("`{plan}` ({})", at.join(", "))
            })
            .collect::<Vec<_>>()
            .join(", ");
        return Err(vec![
            Diagnostic::error(
                Code::TriggerConflict,
                &changes[0].pointer,
                format!(
                    "this update runs {} plans, and one update may run only one: {each}",
                    distinct.len()
                ),
            )
            .with_help("make these changes in separate updates, one per plan"),
        ]);
    }
    Ok(Selection {
        plan: distinct.first().map(|p| p.to_string()),
        changes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema(v: Value) -> ParamSchema {
        ParamSchema::from_value(v).unwrap()
    }

    #[test]
    fn a_conflict_is_one_diagnostic_and_an_unknown_key_no_change() {
        let s = schema(json!({"type": "object", "properties": {
            "a": {"type": "integer", "trigger": "p1"},
            "b": {"type": "integer", "trigger": "p2"},
            "c": {"type": "integer", "trigger": "p2"}}}));
        let plans = ["p1", "p2", "update"];
        let d = select(
            &s,
            &plans,
            &json!({}),
            &json!({"a": 1, "b": 2, "c": 3, "zzz": 4}),
        )
        .unwrap_err();
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(
            d[0].message,
            "this update runs 2 plans, and one update may run only one: `p1` (/a), `p2` (/b, /c)"
        );
        assert!(!format!("{:?}", d[0]).contains("zzz"), "{d:?}");
        // An unknown key alone runs nothing: validation refuses it.
        let alone = select(&s, &plans, &json!({}), &json!({"zzz": 4})).unwrap();
        assert_eq!(alone.plan, None);
    }

    #[test]
    fn changed_paths_go_as_deep_as_the_shapes_agree() {
        let old = json!({"a": 1, "b": {"c": 2, "d": 3}, "l": [1, 2], "gone": true});
        let new = json!({"a": 1, "b": {"c": 5, "d": 3}, "l": [1, 2, 3], "n": {"x": 1}});
        assert_eq!(
            changed_paths(&old, &new),
            vec!["/b/c", "/l/2", "/gone", "/n"]
        );
        assert_eq!(changed_paths(&old, &old), Vec::<String>::new());
        assert_eq!(changed_paths(&json!({"a": 1}), &json!("x")), vec![""]);
        assert_eq!(
            changed_paths(&json!({"a/b": 1}), &json!({"a/b": 2})),
            vec!["/a~1b"]
        );
    }

    #[test]
    fn nearest_trigger_then_update_then_deploy() {
        let s = schema(json!({"type": "object", "properties": {
            "a": {"type": "string"},
            "auth": {"type": "object", "trigger": "auth-update", "properties": {
                "name": {"type": "string"}}},
            "list": {"type": "array", "items": {"type": "object", "properties": {
                "x": {"type": "string", "trigger": "x-plan"}, "y": {"type": "string"}}}}
        }}));
        let plans = ["deploy", "update", "auth-update", "x-plan"];
        let at = |p: &str| plan_for(&s, &plans, p).unwrap();
        assert_eq!(
            at("/auth/name"),
            ("auth-update".into(), Reason::Trigger { at: "/auth".into() })
        );
        assert_eq!(at("/a"), ("update".into(), Reason::Fallback));
        assert_eq!(
            at("/list/3/x"),
            (
                "x-plan".into(),
                Reason::Trigger {
                    at: "/list/3/x".into()
                }
            )
        );
        assert_eq!(at("/list/3/y").0, "update");
        assert_eq!(plan_for(&s, &["deploy"], "/a").unwrap().0, "deploy");
        let e = plan_for(&s, &["deploy"], "/auth/name").unwrap_err();
        assert_eq!(e.code, Code::UnknownPlan);
        assert!(plan_for(&s, &["cleanup"], "/a").is_err());
    }
}
