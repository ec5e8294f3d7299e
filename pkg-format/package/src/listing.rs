//! The parameters of a package as rows of a tree: what `kudo package list parameters` shows.
//!
//! One [`Row`] per declared parameter, depth-first in schema order; array items are a row of
//! their own (named `[]`) whose children are the item's properties. Each row carries what an
//! author asks about a parameter: its type, default (masked for `writeOnly`), whether it is
//! required, the plan a change runs (the rules of [`kudo_policy::trigger`], marking an inherited or
//! fallback plan) and whether it is immutable (itself or through an ancestor).

use serde::Serialize;
use serde_json::Value;

use kudo_diag::diag::Shown;
use kudo_diag::pointer::{self, Pointer};
use kudo_policy::params::ParamSchema;
use kudo_policy::trigger::{self, Reason};

use kudo_policy::values::MAX_DEPTH;

/// Where a row's plan comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum TriggerSource {
    /// The parameter's own `trigger`.
    Own,
    /// An ancestor's `trigger`, at this value pointer.
    Inherited(Pointer),
    /// No trigger on the way: the operator's `update` or `deploy` plan.
    Fallback,
    /// A `trigger` naming a plan the operator does not have.
    Unknown,
}

/// One parameter.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Row {
    /// Value pointer (array items as `/0`): usable with `-p` once the item exists.
    pub pointer: String,
    /// The name shown in the tree (`[]` for array items).
    pub name: String,
    /// Nesting level, 0 for top-level parameters.
    pub depth: usize,
    /// For each level 0..=depth: whether the row (or its ancestor at that level) is the last of
    /// its siblings. Draws the tree.
    #[serde(skip)]
    pub last: Vec<bool>,
    /// `string`, `integer`, `object`, `array of string`, `string | null`, ...
    #[serde(rename = "type")]
    pub type_name: String,
    /// The default, as compact JSON, masked for `writeOnly` parameters.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default: Option<Shown>,
    /// Listed in its parent's `required`.
    pub required: bool,
    /// The plan a change of this parameter runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trigger: Option<String>,
    /// Where the plan comes from.
    pub trigger_source: TriggerSource,
    /// Immutable itself.
    pub immutable: bool,
    /// Immutable through an ancestor (its value pointer).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub immutable_from: Option<Pointer>,
    /// `writeOnly` (itself or an ancestor).
    pub secret: bool,
    /// `deprecated: true`: its `deprecationMessage` (empty when none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deprecated: Option<String>,
    /// `title`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// `description`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// Every parameter of `schema`, depth-first; `plans` are the operator's plan names.
pub fn rows(schema: &ParamSchema, plans: &[&str]) -> Vec<Row> {
    let mut out = Vec::new();
    let mut last = Vec::new();
    walk(schema, plans, schema.root(), "", &mut last, &mut out);
    out
}

fn walk(
    schema: &ParamSchema,
    plans: &[&str],
    node: &Value,
    at: &str,
    last: &mut Vec<bool>,
    out: &mut Vec<Row>,
) {
    if last.len() > MAX_DEPTH {
        return;
    }
    let node = schema.resolve(node);
    let mut children: Vec<(String, String, &Value, bool)> = Vec::new();
    let required: Vec<&str> = node
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    for name in schema.property_names(node) {
        if let Some(child) = schema.child(node, name).schema() {
            children.push((
                name.to_string(),
                pointer::push(at, name),
                child,
                required.contains(&name),
            ));
        }
    }
    if schema.is_array(node)
        && let Some(items) = schema.child(node, "0").schema()
        && items.is_object()
    {
        children.push(("[]".into(), format!("{at}/0"), items, false));
    }
    let n = children.len();
    for (i, (name, ptr, child, req)) in children.into_iter().enumerate() {
        last.push(i + 1 == n);
        out.push(row(schema, plans, child, &name, &ptr, req, last));
        walk(schema, plans, child, &ptr, last, out);
        last.pop();
    }
}

/// The row of the one parameter at `value_pointer` (array items by any index), as [`rows`]
/// shows it; `None` for the root and for a pointer the schema does not declare. Its tree
/// position (`depth`, `last`) is that of a row with no siblings.
pub fn row_at(schema: &ParamSchema, plans: &[&str], value_pointer: &str) -> Option<Row> {
    let tokens = pointer::tokens(value_pointer).ok()?;
    let (name, parents) = tokens.split_last()?;
    let parent = schema.node_at(parents)?;
    let node = schema.node_at(&tokens)?;
    let item = schema.is_array(parent) && name.parse::<usize>().is_ok();
    let required = !item
        && parent
            .get("required")
            .and_then(Value::as_array)
            .is_some_and(|r| r.iter().any(|n| n.as_str() == Some(name)));
    let tree_name = if item { "[]" } else { name.as_str() };
    let last = vec![true; tokens.len()];
    Some(row(
        schema,
        plans,
        node,
        tree_name,
        value_pointer,
        required,
        &last,
    ))
}

/// The row of `node` at `ptr`: its plan by [`trigger::plan_for`], its immutability by
/// [`kudo_policy::immutable::immutable_at`].
pub(crate) fn row(
    schema: &ParamSchema,
    plans: &[&str],
    node: &Value,
    name: &str,
    ptr: &str,
    required: bool,
    last: &[bool],
) -> Row {
    let node = schema.resolve(node);
    let tokens = pointer::tokens(ptr).unwrap_or_default();
    let secret = schema.is_secret(&tokens);
    let (trigger, trigger_source) = match trigger::plan_for(schema, plans, ptr) {
        Ok((plan, Reason::Trigger { at })) if at == ptr => (Some(plan), TriggerSource::Own),
        Ok((plan, Reason::Trigger { at })) => (Some(plan), TriggerSource::Inherited(at)),
        Ok((plan, Reason::Fallback)) => (Some(plan), TriggerSource::Fallback),
        Err(_) => (
            node.get("trigger")
                .and_then(Value::as_str)
                .map(String::from),
            TriggerSource::Unknown,
        ),
    };
    let immutable = node.get("immutable") == Some(&Value::Bool(true));
    let immutable_from = kudo_policy::immutable::immutable_at(schema, ptr).filter(|a| a != ptr);
    let text = |k: &str| node.get(k).and_then(Value::as_str).map(String::from);
    Row {
        pointer: ptr.to_string(),
        name: name.to_string(),
        depth: last.len() - 1,
        last: last.to_vec(),
        type_name: type_name(schema, node),
        default: node.get("default").map(|d| Shown::of(d, secret)),
        required,
        trigger,
        trigger_source,
        immutable,
        immutable_from,
        secret,
        deprecated: kudo_policy::preflight::deprecation(node).map(String::from),
        title: text("title"),
        description: text("description"),
    }
}

fn type_name(schema: &ParamSchema, node: &Value) -> String {
    let types = schema.types(node);
    let base = if types.is_empty() {
        if node.get("properties").is_some() {
            "object".to_string()
        } else if schema.is_array(node) {
            "array".to_string()
        } else {
            "any".to_string()
        }
    } else {
        types.join(" | ")
    };
    if base == "array"
        && let Some(items) = schema.child(node, "0").schema()
    {
        let items = schema.resolve(items);
        if items.is_object() && !schema.types(items).is_empty() {
            return format!("array of {}", type_name(schema, items));
        }
    }
    base
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn rows_follow_the_tree_with_inherited_plans_and_masks() {
        let s = ParamSchema::from_value(json!({"type": "object", "required": ["name"],
        "properties": {
            "name": {"type": "string", "immutable": true, "default": "c"},
            "backup": {"type": "object", "trigger": "backup-update", "properties": {
                "password": {"type": "string", "writeOnly": true, "default": "pw"}}},
            "dcs": {"type": "array", "items": {"type": "object", "properties": {
                "rack": {"type": "string"}}}}
        }}))
        .unwrap();
        let rows = rows(&s, &["deploy", "update", "backup-update"]);
        let names: Vec<(&str, usize)> = rows.iter().map(|r| (r.name.as_str(), r.depth)).collect();
        assert_eq!(
            names,
            [
                ("name", 0),
                ("backup", 0),
                ("password", 1),
                ("dcs", 0),
                ("[]", 1),
                ("rack", 2)
            ]
        );
        assert!(rows[0].required && rows[0].immutable);
        assert_eq!(rows[1].trigger_source, TriggerSource::Own);
        assert_eq!(
            rows[2].trigger_source,
            TriggerSource::Inherited("/backup".into())
        );
        assert_eq!(rows[2].default, Some(Shown::Masked));
        assert_eq!(rows[3].type_name, "array of object");
        assert_eq!(rows[5].pointer, "/dcs/0/rack");
        assert_eq!(rows[5].trigger.as_deref(), Some("update"));
        assert_eq!(rows[5].trigger_source, TriggerSource::Fallback);
        assert_eq!(rows[5].last, [true, true, true]);
    }
}
