//! Namespaces (KUDO's `NamespaceVerifier`): a task never creates a Namespace; the one place a
//! package describes its Namespace is operator.yaml's `namespaceManifest`, the template KUDO
//! renders and creates when an Instance is installed with `--create-namespace`.
//!
//! - No template but the `namespaceManifest` says `kind: Namespace`. KUDO searched the text of
//!   every template for `kind:\s*Namespace`; here a line whose key `kind` has the value
//!   `Namespace` is found (quoted or not, in block or flow style), not a comment line and not
//!   a kind that merely starts with `Namespace`. A template that renders (with the defaults) to
//!   a Namespace whose `kind` is computed is found when rendered (`super::rendering`).
//! - The `namespaceManifest` is a file under `templates/`, renders with the defaults, and holds
//!   exactly one object, a `v1` `Namespace`. KUDO parsed the file unrendered; it is rendered
//!   here, as KUDO's installer renders it (with the instance, and no plan).

use std::path::PathBuf;
use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value;

use super::operator_origin;
use crate::package::Package;
use crate::render::{Prepared, RenderOptions, Use};
use kudo_diag::diag::{Code, Diagnostic, Location, Origin};

/// `kind: Namespace` as a YAML key and value: at a line's start, after `- ` or inside a flow
/// mapping; the key and the value may be quoted.
static KIND_NAMESPACE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(?:^|[\s{,-])(["']?kind["']?\s*:\s*["']?Namespace["']?)\s*(?:$|[,}#])"#)
        .expect("a valid regular expression")
});

/// The line and column (1-based) of each `kind: Namespace` in a template's text.
pub(super) fn namespace_kinds(text: &str) -> Vec<(usize, usize)> {
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim_start().starts_with('#'))
        .filter_map(|(i, line)| {
            let m = KIND_NAMESPACE.captures(line)?.get(1)?;
            Some((i + 1, line[..m.start()].chars().count() + 1))
        })
        .collect()
}

/// The templates other than the `namespaceManifest` that say `kind: Namespace`, each reported
/// where it says it; returns their names.
pub(super) fn templates(pkg: &Package, out: &mut Vec<Diagnostic>) -> Vec<String> {
    let manifest = pkg.operator().namespace_manifest.as_deref();
    let mut found = Vec::new();
    for (name, text) in pkg.templates() {
        if Some(name.as_str()) == manifest {
            continue;
        }
        for (line, col) in namespace_kinds(text) {
            out.push(namespace_object(pkg, name, line, col));
            if !found.contains(name) {
                found.push(name.clone());
            }
        }
    }
    found
}

/// The finding for a Namespace object in template `name`.
pub(super) fn namespace_object(pkg: &Package, name: &str, line: usize, col: usize) -> Diagnostic {
    Diagnostic::error(
        Code::NamespaceObject,
        "",
        format!(
            "template {name} creates a Namespace, which a task may not do: an Instance's namespace comes from operator.yaml's `namespaceManifest`"
        ),
    )
    .with_origin(Origin::File(Location {
        path: pkg.source().join("templates").join(name),
        line,
        col,
    }))
    .with_help("move the Namespace to its own template and name it as `namespaceManifest` in operator.yaml")
}

/// The `namespaceManifest`: it exists, renders with `values` (unless it is in `skipped`: its
/// own findings are reported) and is one Namespace.
pub(super) fn manifest(
    prepared: &Prepared<'_>,
    values: &Value,
    skipped: &[PathBuf],
    out: &mut Vec<Diagnostic>,
) {
    let pkg = prepared.package();
    let Some(name) = pkg.operator().namespace_manifest.as_deref() else {
        return;
    };
    let Some(text) = pkg.templates().get(name) else {
        out.push(
            Diagnostic::error(
                Code::Template,
                "",
                format!("the `namespaceManifest` templates/{name} is not in the package"),
            )
            .with_origin(operator_origin(pkg, "/namespaceManifest")),
        );
        return;
    };
    let file = pkg.source().join("templates").join(name);
    if skipped.contains(&file) {
        return;
    }
    let opts = RenderOptions {
        plan: String::new(),
        ..RenderOptions::default()
    };
    let at = Use {
        phase: String::new(),
        step: String::new(),
        task: String::new(),
        template: name.to_string(),
    };
    let rendered = match prepared.render_parameter_file(values, &opts, at) {
        Ok(r) => r,
        Err(diags) => {
            out.extend(diags);
            return;
        }
    };
    let error = |line: usize, col: usize, problem: String| {
        Diagnostic::error(
            Code::Template,
            "",
            format!("the `namespaceManifest` templates/{name} {problem}"),
        )
        .with_origin(Origin::File(Location {
            path: file.clone(),
            line,
            col,
        }))
    };
    let objects: Vec<Value> = match kudo_yaml::manifest::parse(&file, &rendered) {
        Ok(docs) => docs.into_iter().filter(|d| !d.is_null()).collect(),
        Err(e) => {
            out.push(error(
                1,
                1,
                format!("renders to invalid YAML (with the defaults): {e}"),
            ));
            return;
        }
    };
    match &objects[..] {
        [ns] if ns["kind"] == "Namespace" && ns["apiVersion"] == "v1" => {}
        [other] => {
            // where the template says its kind, when it does
            let (line, col) = text
                .lines()
                .enumerate()
                .find_map(|(i, l)| {
                    let col = l.find("kind:")?;
                    Some((i + 1, l[..col].chars().count() + 1))
                })
                .unwrap_or((1, 1));
            let what = match (other.get("apiVersion"), other.get("kind")) {
                (Some(Value::String(a)), Some(Value::String(k))) => format!("`{a}` `{k}`"),
                _ => "something else".to_string(),
            };
            out.push(error(
                line,
                col,
                format!("must be a Namespace (apiVersion: v1, kind: Namespace), not {what}"),
            ));
        }
        many => out.push(error(
            1,
            1,
            format!(
                "must hold exactly one object, a Namespace; it renders to {}",
                many.len()
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kudo_diag::diag::Severity;
    use std::collections::BTreeMap;
    use std::path::Path;

    /// A case: what it shows, the end of operator.yaml, the templates besides `cm.yaml`, and
    /// the findings expected (code, severity, file, line).
    type Case<'a> = (
        &'a str,
        &'a str,
        &'a [(&'a str, &'a str)],
        &'a [(Code, Severity, &'a str, usize)],
    );

    /// verify's findings on a Handlebars package whose operator.yaml ends with `extra`, whose
    /// deploy plan applies `templates/cm.yaml`, with `templates` besides: code, severity, file
    /// and line.
    fn findings(extra: &str, templates: &[(&str, &str)]) -> Vec<(Code, Severity, String, usize)> {
        let mut files = BTreeMap::new();
        files.insert(
            "operator.yaml".to_string(),
            format!(
                "name: t\noperatorVersion: 0.1.0\nkubernetesVersion: 1.18.0\n\
                 tasks:\n  - name: app\n    kind: Apply\n    spec:\n      resources: [cm.yaml]\n\
                 plans:\n  deploy:\n    phases:\n      - name: p\n        steps:\n          - name: s\n            tasks: [app]\n{extra}"
            )
            .into_bytes(),
        );
        files.insert(
            "params.yaml".to_string(),
            b"apiVersion: kudo.dev/v1beta2\ntype: object\nproperties:\n  team: {type: string, default: data}\n".to_vec(),
        );
        files.insert(
            "templates/cm.yaml".to_string(),
            b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{Name}}\ndata:\n  team: {{Params.team}}\n".to_vec(),
        );
        for (name, text) in templates {
            files.insert(format!("templates/{name}"), text.as_bytes().to_vec());
        }
        let pkg = Package::from_files(Path::new("pkg"), files).unwrap();
        super::super::verify(&pkg)
            .into_iter()
            .map(|d| match &d.origin {
                Origin::File(l) => (d.code, d.severity, l.path.display().to_string(), l.line),
                other => panic!("{d} says not where it is: {other:?}"),
            })
            .collect()
    }

    #[test]
    fn the_namespace_manifest_exists_renders_and_is_one_namespace() {
        use Code::{NamespaceObject, Template, Unused};
        use Severity::{Error, Warning};
        let ns = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: {{Namespace}}\n  labels: {team: {{Params.team}}}\n";
        let manifest = "namespaceManifest: ns.yaml\n";
        let cases: &[Case] = &[
            (
                "a Namespace, used by no task: neither unused nor a Namespace a task creates",
                manifest,
                &[("ns.yaml", ns)],
                &[],
            ),
            (
                "without a namespaceManifest it is an unused template that creates a Namespace",
                "",
                &[("ns.yaml", ns)],
                &[
                    (Unused, Warning, "pkg/templates/ns.yaml", 1),
                    (NamespaceObject, Error, "pkg/templates/ns.yaml", 2),
                ],
            ),
            (
                "the file is missing: reported where operator.yaml names it",
                manifest,
                &[],
                &[(Template, Error, "pkg/operator.yaml", 16)],
            ),
            (
                "another kind: reported at its `kind`",
                manifest,
                &[(
                    "ns.yaml",
                    "apiVersion: v1\n\nkind: ConfigMap\nmetadata: {name: x}\n",
                )],
                &[(Template, Error, "pkg/templates/ns.yaml", 3)],
            ),
            (
                "two objects",
                manifest,
                &[(
                    "ns.yaml",
                    "apiVersion: v1\nkind: Namespace\n---\napiVersion: v1\nkind: Namespace\n",
                )],
                &[(Template, Error, "pkg/templates/ns.yaml", 1)],
            ),
            (
                "it does not render with the defaults",
                manifest,
                &[(
                    "ns.yaml",
                    "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: {{lookup Params \"nope\"}}\n",
                )],
                &[(Template, Error, "pkg/templates/ns.yaml", 4)],
            ),
            (
                "its own findings are reported once, not rendered",
                manifest,
                &[(
                    "ns.yaml",
                    "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: {{Namespce}}\n",
                )],
                &[(Template, Error, "pkg/templates/ns.yaml", 4)],
            ),
        ];
        for (what, extra, templates, want) in cases {
            let want: Vec<_> = want
                .iter()
                .map(|(c, s, f, l)| (*c, *s, f.to_string(), *l))
                .collect();
            assert_eq!(findings(extra, templates), want, "{what}");
        }
    }

    #[test]
    fn a_task_that_creates_a_namespace_is_refused_whether_written_or_computed() {
        // a KUDO package (no params.yaml: v1beta1, so Go templates)
        let cases: &[(&str, &str, usize)] = &[
            (
                "written",
                "apiVersion: v1\nkind: Namespace\nmetadata: {name: x}\n",
                2,
            ),
            (
                "computed",
                "apiVersion: v1\nkind: {{ if true }}Namespace{{ end }}\nmetadata: {name: x}\n",
                1,
            ),
        ];
        for (what, text, line) in cases {
            let extra =
                "  - name: more\n    kind: Apply\n    spec:\n      resources: [more.yaml]\n";
            let mut files = BTreeMap::new();
            files.insert(
                "operator.yaml".to_string(),
                format!(
                    "name: t\noperatorVersion: 0.1.0\nkubernetesVersion: 1.18.0\n\
                     tasks:\n{extra}\
                     plans:\n  deploy:\n    phases:\n      - name: p\n        steps:\n          - name: s\n            tasks: [more]\n"
                )
                .into_bytes(),
            );
            files.insert("templates/more.yaml".to_string(), text.as_bytes().to_vec());
            let pkg = Package::from_files(Path::new("pkg"), files).unwrap();
            let got: Vec<_> = super::super::verify(&pkg)
                .into_iter()
                .map(|d| (d.code, d.severity, d.origin))
                .collect();
            let want = vec![(
                Code::NamespaceObject,
                Severity::Error,
                Origin::File(Location {
                    path: "pkg/templates/more.yaml".into(),
                    line: *line,
                    col: 1,
                }),
            )];
            assert_eq!(got, want, "{what}");
        }
    }

    #[test]
    fn a_namespace_kind_is_found_where_it_is_written() {
        let cases: &[(&str, &[(usize, usize)])] = &[
            ("apiVersion: v1\nkind: Namespace\n", &[(2, 1)]),
            ("kind:   \"Namespace\"  # the namespace\n", &[(1, 1)]),
            ("items:\n  - kind: Namespace\n", &[(2, 5)]),
            (
                "{apiVersion: v1, kind: Namespace, metadata: {name: x}}\n",
                &[(1, 18)],
            ),
            ("{\"kind\": \"Namespace\"}\n", &[(1, 2)]),
            (
                "x: 1\n---\nkind: Namespace\n---\nkind: Namespace\n",
                &[(3, 1), (5, 1)],
            ),
            // not a Namespace
            ("# kind: Namespace\n", &[]),
            ("kind: NamespaceSelector\n", &[]),
            ("kind: Service\nmetadata:\n  namespace: Namespace\n", &[]),
            (
                "subjects:\n  - kind: ServiceAccount\n    namespace: {{ .Namespace }}\n",
                &[],
            ),
            ("mykind: Namespace\n", &[]),
        ];
        for (text, want) in cases {
            assert_eq!(namespace_kinds(text), *want, "{text}");
        }
    }
}
