//! Parameter names KUDO cannot use: two that differ only in case (KUDO compared names
//! case-insensitively), and names with `;` or `,` (KUDO's `InvalidCharVerifier`).
//!
//! v1beta1: the parameter list (or legacy map), in file order; the later of two duplicates is
//! reported. v1beta2: the property names of every `properties` map, each compared with its
//! siblings only (`/a/name` and `/b/NAME` are different parameters).

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::schema::walk;
use super::{file_origin, params_origin, value_pointer};
use crate::package::Package;
use kudo_diag::diag::{Code, Diagnostic};
use kudo_diag::pointer;
use kudo_policy::params::Params;
use kudo_policy::params::v1beta1::V1beta1Shape;

/// Characters a parameter name may not contain.
const INVALID_CHARS: &[char] = &[';', ','];

pub(super) fn check(pkg: &Package, out: &mut Vec<Diagnostic>) {
    match pkg.params() {
        Params::V1beta1(p) => {
            let doc = pkg.params_document();
            let mut seen: HashMap<String, &str> = HashMap::new();
            for param in &p.parameters {
                let at = match p.shape {
                    V1beta1Shape::List => format!("{}/name", param.pointer),
                    V1beta1Shape::Map => param.pointer.clone(),
                };
                let value_ptr = pointer::push("", &param.name);
                for d in name_problems(&param.name, &value_ptr, &mut seen) {
                    out.push(d.with_origin(file_origin(doc, &at)));
                }
            }
        }
        Params::V1beta2(schema) => walk(schema.as_value(), &mut |node| {
            let Some(Value::Object(props)) = node.map.get("properties") else {
                return;
            };
            siblings(pkg, &node.tokens, props, out);
        }),
    }
}

/// The property names of one `properties` map (at `tokens` in the schema).
fn siblings(
    pkg: &Package,
    tokens: &[String],
    props: &Map<String, Value>,
    out: &mut Vec<Diagnostic>,
) {
    let mut seen: HashMap<String, &str> = HashMap::new();
    for name in props.keys() {
        let mut schema_tokens = tokens.to_vec();
        schema_tokens.extend(["properties".to_string(), name.clone()]);
        let value_ptr = value_pointer(&schema_tokens);
        let origin = params_origin(pkg, &pointer::from_tokens(&schema_tokens));
        for d in name_problems(name, &value_ptr, &mut seen) {
            out.push(d.with_origin(origin.clone()));
        }
    }
}

fn name_problems<'a>(
    name: &'a str,
    value_ptr: &str,
    seen: &mut HashMap<String, &'a str>,
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    if let Some(first) = seen.get(&name.to_lowercase()) {
        out.push(Diagnostic::error(
            Code::InvalidName,
            value_ptr,
            format!(
                "parameter `{name}` duplicates `{first}`: names are compared case-insensitively"
            ),
        ));
    } else {
        seen.insert(name.to_lowercase(), name);
    }
    for c in INVALID_CHARS {
        if name.contains(*c) {
            out.push(Diagnostic::error(
                Code::InvalidName,
                value_ptr,
                format!("parameter `{name}` contains the invalid character `{c}`"),
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duplicates_ignore_case_and_separators_are_refused() {
        let names = ["Foo", "bar", "foo", "a;b", "c,d", "BAR"];
        let mut seen = HashMap::new();
        let got: Vec<String> = names
            .iter()
            .flat_map(|n| name_problems(n, &format!("/{n}"), &mut seen))
            .map(|d| d.to_string())
            .collect();
        assert_eq!(
            got,
            vec![
                "/foo: parameter `foo` duplicates `Foo`: names are compared case-insensitively [invalid-name]",
                "/a;b: parameter `a;b` contains the invalid character `;` [invalid-name]",
                "/c,d: parameter `c,d` contains the invalid character `,` [invalid-name]",
                "/BAR: parameter `BAR` duplicates `bar`: names are compared case-insensitively [invalid-name]",
            ]
        );
    }
}
