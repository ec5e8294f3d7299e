//! Fields a manifest holds that the API server's schema does not declare.
//!
//! kubectl's client-side apply, and KUDO's create and update, send a manifest as it is, and the
//! API server drops the fields its schema does not know (Kubernetes 1.25 and later warn about
//! them). Server-side apply, which kudo-manager uses, refuses the whole object instead:
//!
//! ```text
//! failed to create typed patch object (ns/spark; apps/v1, Kind=Deployment):
//! .spec.template.metadata.initializers: field not declared in schema
//! ```
//!
//! Real operators carry such fields (spark's Deployment has `metadata.initializers`, removed
//! from Kubernetes in 1.14), so kudo-manager does what the API server does for the other
//! writes: [`paths`] reads the fields from the refusal, [`remove`] drops them, and the object
//! is applied again, with a warning in the plan's status naming each dropped field.

use serde_json::Value;

/// What the API server says of a field its schema does not declare.
const UNDECLARED: &str = ": field not declared in schema";

/// One step of a field path in a server-side apply refusal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// `.name`: a field of an object.
    Field(String),
    /// `[key="value"]` (or `[k1="v1",k2="v2"]`): the item of a list whose keys have these
    /// values.
    Keyed(Vec<(String, Value)>),
    /// `[3]`: an item by index (atomic lists).
    Index(usize),
}

/// An undeclared field: its path, and the path as the API server wrote it
/// (`.spec.template.metadata.initializers`).
pub type Field = (Vec<Step>, String);

/// The undeclared fields an API server refusal names. Empty when the refusal is about
/// something else.
pub fn paths(message: &str) -> Vec<Field> {
    message
        .lines()
        .flat_map(|l| l.split(", "))
        .filter_map(|part| {
            let end = part.find(UNDECLARED)?;
            let text = part[..end].trim();
            let start = text.find('.')?;
            let text = &text[start..];
            parse(text).map(|steps| (steps, text.to_string()))
        })
        .collect()
}

/// Parses `.a.b[name="x"].c` (structured-merge-diff's path syntax).
fn parse(text: &str) -> Option<Vec<Step>> {
    let mut steps = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix('.') {
            let end = r.find(['.', '[']).unwrap_or(r.len());
            if end == 0 {
                return None;
            }
            steps.push(Step::Field(r[..end].to_string()));
            rest = &r[end..];
        } else if let Some(r) = rest.strip_prefix('[') {
            let end = closing(r)?;
            let inside = &r[..end];
            rest = &r[end + 1..];
            if let Ok(i) = inside.parse::<usize>() {
                steps.push(Step::Index(i));
                continue;
            }
            // key="json",key2=json: the values are JSON.
            let mut keys = Vec::new();
            let mut s = inside;
            while !s.is_empty() {
                let eq = s.find('=')?;
                let key = s[..eq].to_string();
                let mut de = serde_json::Deserializer::from_str(&s[eq + 1..]).into_iter::<Value>();
                let value = de.next()?.ok()?;
                let used = de.byte_offset();
                keys.push((key, value));
                s = &s[eq + 1 + used..];
                s = s.strip_prefix(',').unwrap_or(s);
            }
            steps.push(Step::Keyed(keys));
        } else {
            return None;
        }
    }
    Some(steps)
}

/// The index of the `]` closing a `[` (quotes respected).
fn closing(s: &str) -> Option<usize> {
    let mut quoted = false;
    let mut escaped = false;
    for (i, c) in s.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            ']' if !quoted => return Some(i),
            _ => {}
        }
    }
    None
}

/// Removes the field at `steps` from `obj`; whether it was there.
pub fn remove(obj: &mut Value, steps: &[Step]) -> bool {
    let Some((last, parents)) = steps.split_last() else {
        return false;
    };
    let mut at = obj;
    for step in parents {
        let next = match (step, at) {
            (Step::Field(f), Value::Object(m)) => m.get_mut(f),
            (Step::Index(i), Value::Array(a)) => a.get_mut(*i),
            (Step::Keyed(keys), Value::Array(a)) => a
                .iter_mut()
                .find(|item| keys.iter().all(|(k, v)| item.get(k) == Some(v))),
            _ => None,
        };
        match next {
            Some(n) => at = n,
            None => return false,
        }
    }
    match (last, at) {
        (Step::Field(f), Value::Object(m)) => m.shift_remove(f).is_some(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_undeclared_fields_of_a_refusal_are_read_and_removed() {
        // What kube-apiserver 1.24 said of spark's Deployment (one field), and of two fields in
        // keyed lists.
        let cases: &[(&str, Value, Value)] = &[
            (
                "failed to create typed patch object (t-spark/spark; apps/v1, Kind=Deployment): .spec.template.metadata.initializers: field not declared in schema",
                json!({"spec": {"template": {"metadata": {"labels": {"a": "b"}, "initializers": {"pending": []}}}}}),
                json!({"spec": {"template": {"metadata": {"labels": {"a": "b"}}}}}),
            ),
            (
                "failed to create typed patch object (ns/x; apps/v1, Kind=StatefulSet): errors:\n  .spec.template.spec.containers[name=\"c\"].bogus: field not declared in schema\n  .spec.template.spec.volumes[name=\"v\"].configMap.mode: field not declared in schema",
                json!({"spec": {"template": {"spec": {
                    "containers": [{"name": "a", "bogus": 1}, {"name": "c", "bogus": 2, "image": "i"}],
                    "volumes": [{"name": "v", "configMap": {"name": "cm", "mode": 1}}]}}}}),
                json!({"spec": {"template": {"spec": {
                    "containers": [{"name": "a", "bogus": 1}, {"name": "c", "image": "i"}],
                    "volumes": [{"name": "v", "configMap": {"name": "cm"}}]}}}}),
            ),
            (
                ".spec.ports[port=80,protocol=\"TCP\"].nodePortx: field not declared in schema",
                json!({"spec": {"ports": [{"port": 80, "protocol": "TCP", "nodePortx": 1}]}}),
                json!({"spec": {"ports": [{"port": 80, "protocol": "TCP"}]}}),
            ),
        ];
        for (message, before, after) in cases {
            let found = paths(message);
            assert!(!found.is_empty(), "message: {message}");
            let mut obj = before.clone();
            for (steps, text) in &found {
                assert!(remove(&mut obj, steps), "{text} in {message}");
            }
            assert_eq!(&obj, after, "message: {message}");
        }
    }

    #[test]
    fn other_refusals_name_no_undeclared_field() {
        for message in [
            ".spec.template.spec.containers[name=\"cassandra\"].volumeMounts[mountPath=\"/etc\"].readOnly: expected boolean, got &{yes}",
            "Deployment.apps \"x\" is invalid: spec.replicas: Invalid value: -1",
            "",
        ] {
            assert!(paths(message).is_empty(), "message: {message}");
        }
    }
}
