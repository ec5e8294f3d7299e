//! `package verify`: the checks a package must pass before it is published or installed.
//!
//! Every check reports each problem it finds (nothing stops at the first), as a [`Diagnostic`]
//! with a stable [`Code`], the parameter's value pointer (empty for the package as a whole) and
//! the file, line and column it is written at. Only errors make [`failed`] true; warnings are
//! advice.
//!
//! | check | code | severity |
//! |---|---|---|
//! | `operator.yaml` has a key twice | `operator` | warning |
//! | `operatorVersion` (or the legacy `version`) and `kubernetesVersion` are present and semantic versions; `appVersion` and `kudoVersion` are when set | `version` | error |
//! | a `deploy` plan exists; every plan step names a defined task | `operator` | error |
//! | every task is well-formed for its kind (`Apply`/`Delete`: resources; `Toggle`: resources and a defined `parameter`; `Pipe`: `pod` and well-formed `pipe` files; `KudoOperator`: `package` and `operatorVersion`; `Dummy`); no unknown kind | `operator` | error |
//! | every template a task names (resources, a Pipe `pod`, a KudoOperator `parameterFile`) exists | `template` | error |
//! | every task is used by a plan | `unused` | warning |
//! | every file under `templates/` is named by a task or is the `namespaceManifest` | `unused` | warning |
//! | v1beta1 `groups` have unique names without `/`; a parameter's `group` has no `/` and is one of them | `invalid-name` | error |
//! | a v1beta1 `advanced` parameter that is required has a `default` | `required` | error |
//! | no template but the `namespaceManifest` creates a Namespace (as written, or as rendered) | `template` | error |
//! | the `namespaceManifest` exists, renders with the defaults and is one `v1` Namespace | `template` | error |
//! | parameter names are unique case-insensitively (v1beta1 list; v1beta2 sibling properties) and have no `;` or `,` | `invalid-name` | error |
//! | the schema is structural in the Kubernetes sense ([`kudo_k8s::structural`], parameter rules) | `not-structural` | error |
//! | no unknown keyword that looks like a typo of a known one (`imutable`, `defualt`) | `unknown-keyword` | warning |
//! | every `trigger` names a plan of the operator | `unknown-plan` | error |
//! | no `trigger` differs from an ancestor's | `trigger-conflict` | error |
//! | an `immutable` parameter has a default or is required | `immutable-unset` | error |
//! | `oldName` is a name or a JSON pointer, and not inside array items | `invalid-old-name` | error |
//! | `enum` is a non-empty list of values valid for their node, holding the node's default | `invalid-default` | error |
//! | every `default` is valid for its own node, and the defaults together validate | `invalid-default` | error |
//! | the schema is valid against its metaschema and compiles | `invalid-schema` | error |
//! | templates reference only defined parameters (`Params.a.b`, through `#each`/`#with` blocks) | `undefined-parameter` | error |
//! | every leaf parameter is used by a template or a Toggle task, unless it has a `trigger` | `unused` | warning |
//! | templates use only names of the render context (`Name`, not `Nmae`) | `template` | error |
//! | every template parses, and every plan renders with the defaults into Kubernetes objects | `template` | error |
//! | no rendered object is in an API version Kubernetes no longer serves ([`kudo_k8s::successor`]) | `removed-api` | warning |
//!
//! No check waits for another to pass, and each template is judged on its own: a template that
//! does not parse, or has a finding of its own, is not rendered (rendering would stop at that
//! finding), and every other template still is. KUDO's verifier (`kudo package verify`) is
//! covered check by check; `docs/verify.md` lists how.
//!
//! v1beta1 packages are checked through their converted schema ([`Package::schema`]), with each
//! finding placed at the v1beta1 parameter's line; keyword typos are looked for among the
//! v1beta1 fields. What is not checked, and why, is in `docs/verify.md` and in the submodules'
//! docs.

mod names;
mod namespace;
mod operator;
mod presentation;
mod rendering;
mod schema;
mod templates;

use serde_json::Value;

use crate::package::Package;
use crate::render::Prepared;
use kudo_diag::diag::{Code, Diagnostic, Location, Origin, Severity};
use kudo_diag::pointer;
use kudo_policy::params::Params;
use kudo_policy::validate::Validator;
use kudo_policy::values::Values;
use kudo_yaml::document::Document;

/// Runs every check; the result holds errors and warnings, in check order.
///
/// No check depends on another passing: a schema that does not compile still has its
/// templates rendered with its defaults, and a template that does not render does not keep
/// the others from being rendered.
pub fn verify(pkg: &Package) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    operator::check(pkg, &mut out);
    names::check(pkg, &mut out);
    presentation::check(pkg, &mut out);
    schema::check(pkg, &mut out);
    // each template is parsed once, for the template checks and every render
    let prepared = Prepared::new(pkg);
    let skipped = templates::check(pkg, &prepared, &mut out);
    let namespaces = namespace::templates(pkg, &mut out);

    // The defaults together (nested ones filled in). A default already found invalid at its
    // own node is not reported twice.
    let schema = pkg.schema();
    let mut defaults = Values::new(Value::Object(Default::default()), Origin::None);
    defaults.apply_defaults(schema);
    match Validator::new(schema) {
        Ok(validator) => {
            for d in validator.validate(&defaults) {
                if d.code == Code::Required {
                    continue; // a package may require the user to give a value
                }
                if out
                    .iter()
                    .any(|o| o.code == Code::InvalidDefault && o.pointer == d.pointer)
                {
                    continue;
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
        }
        Err(diags) => out.extend(diags.into_iter().map(|d| {
            let origin = params_origin(pkg, &d.pointer);
            d.with_origin(origin)
        })),
    }

    namespace::manifest(&prepared, defaults.value(), &skipped, &mut out);
    rendering::check(&prepared, defaults.value(), &skipped, namespaces, &mut out);
    pkg.locate_rules(&mut out);
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

/// True when any diagnostic is an error.
pub fn failed(diags: &[Diagnostic]) -> bool {
    diags.iter().any(|d| d.severity == Severity::Error)
}

/// The place of `ptr` in `doc`, or its first line when the document cannot say (an empty
/// file): a package finding always names its file.
fn file_origin(doc: &Document, ptr: &str) -> Origin {
    Origin::File(doc.location(ptr).unwrap_or_else(|| Location {
        path: doc.path().to_path_buf(),
        line: 1,
        col: 1,
    }))
}

/// Where a pointer into `operator.yaml` is written.
fn operator_origin(pkg: &Package, ptr: &str) -> Origin {
    file_origin(pkg.operator_document(), ptr)
}

/// Where a pointer into the (converted) parameter schema is written in params.yaml.
fn params_origin(pkg: &Package, schema_ptr: &str) -> Origin {
    file_origin(pkg.params_document(), &params_pointer(pkg, schema_ptr))
}

/// The params.yaml pointer of a pointer into [`Package::schema`]. For v1beta2 they are the same;
/// for v1beta1, `/properties/NAME/...` is the parameter's entry (`title` is its `displayName`),
/// anything else the file as a whole.
fn params_pointer(pkg: &Package, schema_ptr: &str) -> String {
    let Params::V1beta1(p) = pkg.params() else {
        return schema_ptr.to_string();
    };
    let tokens = pointer::tokens(schema_ptr).unwrap_or_default();
    let [props, name, rest @ ..] = tokens.as_slice() else {
        return String::new();
    };
    let Some(param) = p.get(name).filter(|_| props == "properties") else {
        return String::new();
    };
    let mut out = param.pointer.clone();
    for (i, t) in rest.iter().enumerate() {
        let field = if i == 0 && t == "title" {
            "displayName"
        } else {
            t
        };
        out = pointer::push(&out, field);
    }
    out
}

/// The value pointer of the parameter a schema node describes: `properties/NAME` adds the name,
/// `items` an index `0`; junctors (`allOf`, `not`, `if`...) describe the same value; a map's
/// value schema (`additionalProperties`, `patternProperties`) and everything under `$defs`
/// are named by their nearest parameter (the map, or the root).
fn value_pointer(schema_tokens: &[String]) -> String {
    let mut out: Vec<&str> = Vec::new();
    let mut i = 0;
    while i < schema_tokens.len() {
        let t = schema_tokens[i].as_str();
        let next = schema_tokens.get(i + 1).map(String::as_str);
        match (t, next) {
            ("properties", Some(name)) => {
                out.push(name);
                i += 2;
            }
            ("items" | "prefixItems", Some(n)) if n.parse::<usize>().is_ok() => {
                out.push(n);
                i += 2;
            }
            ("items", _) => {
                out.push("0");
                i += 1;
            }
            ("allOf" | "anyOf" | "oneOf", Some(_)) => i += 2,
            ("$defs" | "definitions", _) => return String::new(),
            ("additionalProperties" | "patternProperties" | "dependentSchemas", _) => break,
            _ => i += 1,
        }
    }
    pointer::from_tokens(&out)
}

/// "did you mean `x`?" for the candidate closest to `bad` (case-insensitive), when it is close
/// enough to be a typo: one edit for names of up to five characters, two beyond.
fn did_you_mean<'a>(bad: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let bad_l = bad.to_lowercase();
    let allowed = if bad.chars().count() <= 5 { 1 } else { 2 };
    candidates
        .into_iter()
        .map(|c| (c, strsim::damerau_levenshtein(&c.to_lowercase(), &bad_l)))
        .filter(|(_, d)| *d <= allowed)
        .min_by_key(|(_, d)| *d)
        .map(|(c, _)| c)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::applying_one_template;
    use std::collections::BTreeMap;
    use std::path::Path;

    fn toks(p: &str) -> Vec<String> {
        pointer::tokens(p).unwrap()
    }

    /// A package whose deploy plan applies `templates/all.yaml`, which passes every parameter
    /// whole (so none is unused); `operator_extra` is appended to operator.yaml's tasks.
    fn package(params: &str, operator_tasks_extra: &str, templates: &[(&str, &str)]) -> Package {
        let operator = format!(
            "apiVersion: kudo.dev/v1beta1\nname: t\noperatorVersion: 0.1.0\nkubernetesVersion: 1.18.0\n\
             templateEngine: handlebars\n\
             tasks:\n  - name: app\n    kind: Apply\n    spec:\n      resources: [all.yaml]\n{operator_tasks_extra}\
             plans:\n  deploy:\n    phases:\n      - name: p\n        steps:\n          - name: s\n            tasks: [app]\n  \
             update:\n    phases: []\n"
        );
        let mut files = BTreeMap::new();
        files.insert("operator.yaml".to_string(), operator.into_bytes());
        files.insert("params.yaml".to_string(), params.as_bytes().to_vec());
        files.insert(
            "templates/all.yaml".to_string(),
            b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  p: {{quote (toJson Params)}}\n".to_vec(),
        );
        for (name, text) in templates {
            files.insert(format!("templates/{name}"), text.as_bytes().to_vec());
        }
        Package::from_files(Path::new("pkg"), files).unwrap()
    }

    #[test]
    fn go_templates_are_checked_like_handlebars_ones() {
        use crate::gotemplate::TemplateEngine;
        let params = "apiVersion: kudo.dev/v1beta1\nparameters:\n  - name: NODE_COUNT\n    default: \"3\"\n  - name: SPARE\n    default: x\n";
        let head = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Name }}\ndata:\n";
        type Expected<'a> = &'a [(Code, &'a str, bool)];
        let cases: &[(&str, Expected)] = &[
            (
                "  n: \"{{ .Params.NODE_COUNT }}\"\n  s: \"{{ $.Params.SPARE | upper }}\"\n",
                &[],
            ),
            (
                "  n: \"{{ .Params.NODE_CONT }}\"\n  s: \"{{ .Params.SPARE }}\"\n",
                &[
                    (Code::UndefinedParameter, "/NODE_CONT", true),
                    (Code::Unused, "/NODE_COUNT", false),
                ],
            ),
            (
                "  n: \"{{ nope .Params.NODE_COUNT }}{{ .Nmae }}{{ uuidv4 }}{{ .Params.SPARE }}\"\n",
                &[
                    (Code::Template, "", true),
                    (Code::Template, "", true),
                    (Code::Template, "", true),
                ],
            ),
            // a range over a parameter uses it whole; the dot inside is not followed
            (
                "{{ range $i := until (int .Params.NODE_COUNT) }}  n{{ $i }}: \"{{ . }}\"\n{{ end }}  s: {{ .Params.SPARE }}\n",
                &[],
            ),
            ("  n: {{ if }}\n", &[(Code::Template, "", true)]),
        ];
        for (body, want) in cases {
            let pkg = applying_one_template(params, &format!("{head}{body}"));
            assert_eq!(pkg.template_engine(), TemplateEngine::Go);
            let got = findings(&pkg);
            let want: Vec<(Code, String, bool)> = want
                .iter()
                .map(|(c, p, e)| (*c, p.to_string(), *e))
                .collect();
            assert_eq!(got, want, "{body}: {:#?}", verify(&pkg));
        }
        // The messages: Go's words for an unknown function, sprig's name for one kudo lacks.
        let pkg = applying_one_template(
            params,
            &format!(
                "{head}  n: \"{{{{ nope 1 }}}}{{{{ uuidv4 }}}}{{{{ .Params.NODE_COUNT }}}}{{{{ .Params.SPARE }}}}\"\n"
            ),
        );
        let text: Vec<String> = verify(&pkg).iter().map(|d| d.message.clone()).collect();
        assert!(
            text[0].contains("function \"nope\" not defined"),
            "{text:?}"
        );
        assert!(text[1].contains("sprig's `uuidv4`"), "{text:?}");
    }

    #[test]
    fn every_template_is_judged_on_its_own_and_nothing_stops_the_other_checks() {
        let operator = "name: t\noperatorVersion: 0.1.0\nkubernetesVersion: 1.18.0\n\
             tasks:\n  - name: app\n    kind: Apply\n    spec:\n      resources: [names.yaml, object.yaml, parse.yaml, missing.yaml, fine.yaml]\n\
             plans:\n  deploy:\n    phases:\n      - name: p\n        steps:\n          - name: s\n            tasks: [app]\n";
        // a pattern that does not compile: the schema is invalid, its defaults still render
        let params =
            format!("{V2}properties:\n  team: {{type: string, default: data, pattern: \"(\"}}\n");
        let mut files = BTreeMap::new();
        files.insert("operator.yaml".to_string(), operator.as_bytes().to_vec());
        files.insert("params.yaml".to_string(), params.into_bytes());
        for (name, text) in [
            // two names the render context lacks: both, not only the first that fails
            (
                "names.yaml",
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{Nmae}}\n  namespace: {{Namespce}}\n",
            ),
            // renders, but not to an object
            ("object.yaml", "apiVersion: v1\nkind: ConfigMap\ndata: {}\n"),
            ("parse.yaml", "apiVersion: v1\n{{#if Params.team}}\n"),
            // renders with the invalid schema's defaults; a Namespace all the same
            (
                "fine.yaml",
                "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: {{Params.team}}\n",
            ),
        ] {
            files.insert(format!("templates/{name}"), text.as_bytes().to_vec());
        }
        let pkg = Package::from_files(Path::new("pkg"), files).unwrap();
        let got: Vec<(Code, String, usize)> = verify(&pkg)
            .iter()
            .map(|d| match &d.origin {
                Origin::File(l) => (d.code, l.path.display().to_string(), l.line),
                other => panic!("{d} says not where it is: {other:?}"),
            })
            .collect();
        let want = [
            (Code::Template, "pkg/operator.yaml", 8), // missing.yaml
            (Code::Template, "pkg/templates/names.yaml", 4),
            (Code::Template, "pkg/templates/names.yaml", 5),
            (Code::Template, "pkg/templates/parse.yaml", 3), // the `#if` is never closed
            (Code::NamespaceObject, "pkg/templates/fine.yaml", 2),
            (Code::InvalidSchema, "pkg/params.yaml", 4),
            (Code::Template, "pkg/templates/object.yaml", 1),
        ]
        .map(|(c, f, l)| (c, f.to_string(), l));
        assert_eq!(got, want, "{:#?}", verify(&pkg));
    }

    #[test]
    fn objects_in_removed_api_versions_are_warnings_at_their_api_version_line() {
        let params = "apiVersion: kudo.dev/v1beta1\nparameters:\n  - name: A\n    default: x\n";
        let template = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Name }}\ndata:\n  a: \"{{ .Params.A }}\"\n\
             ---\nkind: Role\napiVersion: rbac.authorization.k8s.io/v1beta1\nmetadata:\n  name: peer\nrules: []\n\
             ---\napiVersion: policy/v1beta1\nkind: PodSecurityPolicy\nmetadata:\n  name: psp\nspec: {}\n\
             ---\napiVersion: \"rbac.authorization.k8s.io/v1beta1\"\nkind: RoleBinding\nmetadata:\n  name: peer\nroleRef: {kind: Role, name: peer}\n";
        let diags = verify(&applying_one_template(params, template));
        let got: Vec<(Code, bool, usize, &str, Option<&str>)> = diags
            .iter()
            .map(|d| match &d.origin {
                Origin::File(l) => (
                    d.code,
                    d.is_error(),
                    l.line,
                    d.message.as_str(),
                    d.help.as_deref(),
                ),
                other => panic!("{d} says not where it is: {other:?}"),
            })
            .collect();
        let guide = kudo_k8s::successor::GUIDE;
        let role_help =
            format!("write it as rbac.authorization.k8s.io/v1 ({guide}#rbac-resources-v122)");
        let psp_help = format!("see {guide}#psp-v125");
        assert_eq!(
            got,
            vec![
                (
                    Code::RemovedApi,
                    false,
                    9,
                    "template all.yaml: Role peer is rbac.authorization.k8s.io/v1beta1, which Kubernetes 1.22 and later do not serve; kudo-manager applies it as rbac.authorization.k8s.io/v1 on clusters that do not serve rbac.authorization.k8s.io/v1beta1",
                    Some(role_help.as_str()),
                ),
                (
                    Code::RemovedApi,
                    false,
                    14,
                    "template all.yaml: PodSecurityPolicy psp is policy/v1beta1, which Kubernetes 1.25 and later do not serve: PodSecurityPolicy has no successor since Kubernetes 1.25: enforce pod security with Pod Security Admission (namespace labels) or an admission webhook, and remove this object; plans that apply it fail on those clusters",
                    Some(psp_help.as_str()),
                ),
                (
                    Code::RemovedApi,
                    false,
                    20,
                    "template all.yaml: RoleBinding peer is rbac.authorization.k8s.io/v1beta1, which Kubernetes 1.22 and later do not serve; kudo-manager applies it as rbac.authorization.k8s.io/v1 on clusters that do not serve rbac.authorization.k8s.io/v1beta1",
                    Some(role_help.as_str()),
                ),
            ]
        );
    }

    #[test]
    fn a_pipe_pod_is_rendered_and_checked_as_the_manager_will() {
        let operator = "apiVersion: kudo.dev/v1beta1\nname: t\noperatorVersion: 0.1.0\nkubernetesVersion: 1.18.0\n\
             tasks:\n  - name: gen\n    kind: Pipe\n    spec:\n      pod: pod.yaml\n      pipe:\n        - {file: /out/a, kind: Secret, key: a}\n\
             plans:\n  deploy:\n    phases:\n      - name: p\n        steps:\n          - name: s\n            tasks: [gen]\n";
        let pod = |extra: &str| {
            format!(
                "apiVersion: v1\nkind: Pod\nspec:\n  volumes: [{{name: o, emptyDir: {{}}}}]\n  initContainers:\n    - name: i\n      image: x\n      volumeMounts: [{{name: o, mountPath: /out}}]\n{extra}"
            )
        };
        let check = |pod: String| {
            let mut files = BTreeMap::new();
            files.insert("operator.yaml".to_string(), operator.as_bytes().to_vec());
            files.insert(
                "params.yaml".to_string(),
                b"apiVersion: kudo.dev/v1beta1\nparameters: []\n".to_vec(),
            );
            files.insert("templates/pod.yaml".to_string(), pod.into_bytes());
            verify(&Package::from_files(Path::new("pkg"), files).unwrap())
        };
        // KUDO names the Pod: the template need not.
        assert_eq!(check(pod("")), vec![]);
        let d = check(pod("  containers: [{name: c, image: x}]\n"));
        assert_eq!(d.len(), 1, "{d:#?}");
        assert_eq!(d[0].code, Code::Template);
        assert!(
            d[0].message.contains("must have no containers"),
            "{}",
            d[0].message
        );
    }

    #[test]
    fn a_typo_of_an_extension_keyword_is_an_error_naming_what_it_loses() {
        for (typo, meant, loses) in [
            ("imutable: true", "immutable", "can be changed"),
            ("triger: deploy", "trigger", "default plan"),
            ("oldname: OLD", "oldName", "carry the old value"),
            ("writeonly: true", "writeOnly", "secret"),
        ] {
            let v2 = format!("{V2}properties:\n  a: {{type: string, default: x, {typo}}}\n");
            let v1 = format!(
                "apiVersion: kudo.dev/v1beta1\nparameters:\n  - name: a\n    default: x\n    {typo}\n"
            );
            for params in [v2, v1] {
                let d: Vec<Diagnostic> = verify(&package(&params, "", &[]))
                    .into_iter()
                    .filter(|d| d.code == Code::UnknownKeyword)
                    .collect();
                assert_eq!(d.len(), 1, "{params}: {d:#?}");
                assert!(d[0].is_error(), "{params}");
                assert!(d[0].message.contains(loses), "{}", d[0].message);
                assert!(d[0].help.as_deref().unwrap_or("").contains(meant), "{d:?}");
            }
        }
    }

    /// (code, pointer, is error) of every finding.
    fn findings(pkg: &Package) -> Vec<(Code, String, bool)> {
        verify(pkg)
            .into_iter()
            .map(|d| (d.code, d.pointer.to_string(), d.is_error()))
            .collect()
    }

    const V2: &str = "apiVersion: kudo.dev/v1beta2\ntype: object\n";

    /// A case: params.yaml (or operator.yaml tasks), what it shows, and the findings expected.
    type Case<'a, F> = (&'a str, &'a str, &'a [F]);

    #[test]
    fn each_check_reports_exactly_its_defect() {
        use Code::*;
        let cases: &[Case<(Code, &str, bool)>] = &[
            // v1beta1: KUDO's rules on the flat list
            (
                "apiVersion: kudo.dev/v1beta1\nparameters:\n  - name: A\n    default: x\n  - name: a\n    default: y\n",
                "v1beta1 names are unique case-insensitively",
                &[(InvalidName, "/a", true)],
            ),
            (
                "apiVersion: kudo.dev/v1beta1\nparameters:\n  - name: D\n    immutable: true\n    required: false\n  - name: R\n    immutable: true\n",
                "a v1beta1 immutable parameter needs a default or required (KUDO's default)",
                &[(ImmutableUnset, "/D", true)],
            ),
            (
                "apiVersion: kudo.dev/v1beta1\nparameters:\n  - name: S\n    default: x\n    trigger: not-allowed\n    Default: y\n",
                "v1beta1 trigger names a plan; fields are looked at for typos",
                &[(UnknownKeyword, "/S", false), (UnknownPlan, "/S", true)],
            ),
            (
                "apiVersion: kudo.dev/v1beta1\nparameters:\n  - name: N\n    type: integer\n    default: \"7\"\n    enum: [\"1\", \"x\"]\n",
                "v1beta1 enum values are typed, and hold the default",
                &[(InvalidDefault, "/N", true), (InvalidDefault, "/N", true)],
            ),
            // v1beta2
            (
                "properties:\n  a:\n    type: object\n    trigger: update\n    properties:\n      b: {type: string, trigger: update, default: x}\n      c:\n        type: array\n        default: []\n        items: {type: string, trigger: deploy}\n",
                "restating the ancestor's trigger is allowed, another plan is not, through items",
                &[(TriggerConflict, "/a/c/0", true)],
            ),
            (
                "required: [r]\nproperties:\n  r: {type: string, immutable: true}\n  o:\n    type: object\n    immutable: true\n    properties:\n      x: {type: string, default: d}\n  l:\n    type: array\n    default: []\n    items: {type: string, immutable: true}\n  u: {type: string, immutable: yes}\n",
                "required, a defaulted descendant and items satisfy immutable; it must be boolean",
                &[(InvalidSchema, "/u", true)],
            ),
            (
                "properties:\n  a: {type: string, oldName: A, default: x}\n  b: {type: string, oldName: /old~1b, default: x}\n  c: {type: string, oldName: /bad~2, default: x}\n  d: {type: string, oldName: \"\", default: x}\n  e: {type: string, oldName: 3, default: x}\n",
                "oldName is a name or a pointer",
                &[
                    (InvalidOldName, "/c", true),
                    (InvalidOldName, "/d", true),
                    (InvalidOldName, "/e", true),
                ],
            ),
            (
                "properties:\n  n: {type: number, enum: [1, 2.5], default: 1.0}\n  s:\n    type: object\n    writeOnly: true\n    properties:\n      p: {type: string, minLength: 8, default: short}\n",
                "enum compares numbers by value; a nested default is checked against its node, masked under writeOnly",
                &[(InvalidDefault, "/s/p", true)],
            ),
            (
                "$defs:\n  port: {type: integer, minimum: 1024, default: 80}\nproperties:\n  p: {$ref: \"#/$defs/port\"}\n",
                "definitions are checked where written; $ref is not structural",
                &[
                    (NotStructural, "", true),
                    (NotStructural, "/p", true),
                    (NotStructural, "/p", true),
                    (InvalidDefault, "", true),
                    (InvalidDefault, "/p", true),
                ],
            ),
            (
                "properties:\n  a:\n    type: object\n    properties:\n      x: {type: string, default: v}\n      X: {type: string, default: w}\n  b: {type: object, properties: {x: {type: string, default: v}}}\n",
                "v1beta2 names are compared with their siblings only",
                &[(InvalidName, "/a/X", true)],
            ),
            (
                "properties:\n  a: {type: string, default: x, Trigger: update, minimun: 1, title: A, examples: [x], x-ui: 1, $comment: c}\n",
                "typos of keywords are warned about, of kudo's guarantees refused; known vocabulary is neither",
                &[(UnknownKeyword, "/a", true), (UnknownKeyword, "/a", false)],
            ),
        ];
        for (params, what, want) in cases {
            let params = if params.starts_with("apiVersion") {
                params.to_string()
            } else {
                format!("{V2}{params}")
            };
            let got = findings(&package(&params, "", &[]));
            let want: Vec<(Code, String, bool)> = want
                .iter()
                .map(|(c, p, e)| (*c, p.to_string(), *e))
                .collect();
            assert_eq!(got, want, "{what}");
        }
    }

    #[test]
    fn a_default_under_write_only_is_never_shown() {
        let params = format!(
            "{V2}properties:\n  s:\n    type: object\n    writeOnly: true\n    properties:\n      p: {{type: string, minLength: 8, default: short}}\n"
        );
        let diags = verify(&package(&params, "", &[]));
        assert_eq!(diags.len(), 1, "{diags:?}");
        assert_eq!(diags[0].value, Some(kudo_diag::Shown::Masked));
        assert!(!diags[0].to_string().contains("short"));
    }

    #[test]
    fn tasks_are_well_formed_for_their_kind() {
        use Code::*;
        let params = format!(
            "{V2}properties:\n  backup:\n    type: object\n    properties:\n      enabled: {{type: boolean, default: false}}\n"
        );
        let cases: &[Case<(Code, bool)>] = &[
            (
                "  - name: t\n    kind: Toggle\n    spec:\n      parameter: backup/enabled\n      resources: [all.yaml]\n",
                "a Toggle parameter may be a pointer",
                &[(Unused, false)],
            ),
            (
                "  - name: t\n    kind: Toggle\n    spec:\n      resources: [all.yaml]\n",
                "a Toggle needs a parameter",
                &[(Operator, true), (Unused, false)],
            ),
            (
                "  - name: d\n    kind: Delete\n    spec: {}\n",
                "a Delete needs resources",
                &[(Operator, true), (Unused, false)],
            ),
            (
                "  - name: p\n    kind: Pipe\n    spec:\n      pipe:\n        - {file: /tmp/x, kind: Secret, key: k}\n",
                "a Pipe needs a pod",
                &[(Operator, true), (Unused, false)],
            ),
            (
                "  - name: p\n    kind: Pipe\n    spec:\n      pod: pod.yaml\n      pipe: []\n",
                "a Pipe needs pipe files, and its pod template must exist",
                &[(Operator, true), (Template, true), (Unused, false)],
            ),
            (
                "  - name: k\n    kind: KudoOperator\n    spec:\n      package: zookeeper\n",
                "a KudoOperator needs package and operatorVersion",
                &[(Operator, true), (Unused, false)],
            ),
            (
                "  - name: n\n    kind: Dummy\n    spec: {done: true}\n",
                "a Dummy needs nothing",
                &[(Unused, false)],
            ),
            (
                "  - name: x\n    kind: apply\n    spec:\n      resources: [all.yaml]\n",
                "kinds are case-sensitive",
                &[(Operator, true), (Unused, false)],
            ),
        ];
        for (tasks, what, want) in cases {
            let got: Vec<(Code, bool)> = findings(&package(&params, tasks, &[]))
                .into_iter()
                .map(|(c, _, e)| (c, e))
                .collect();
            assert_eq!(got, *want, "{what}");
        }
    }

    #[test]
    fn templates_reference_defined_parameters_and_use_them_all() {
        use Code::*;
        let params = format!(
            "{V2}properties:\n  a: {{type: string, default: x}}\n  b: {{type: string, default: y, trigger: update}}\n  c: {{type: object, properties: {{d: {{type: string, default: z}}}}}}\n"
        );
        let mut files = BTreeMap::new();
        files.insert(
            "operator.yaml".to_string(),
            b"name: t\noperatorVersion: 0.1.0\nkubernetesVersion: 1.18.0\ntasks:\n  - name: app\n    kind: Apply\n    spec:\n      resources: [cm.yaml]\nplans:\n  deploy:\n    phases:\n      - name: p\n        steps:\n          - name: s\n            tasks: [app]\n  update:\n    phases: []\n".to_vec(),
        );
        files.insert("params.yaml".to_string(), params.into_bytes());
        files.insert(
            "templates/cm.yaml".to_string(),
            b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  a: {{Params.a}}\n  e: {{Params.c.e}}\n".to_vec(),
        );
        let pkg = Package::from_files(Path::new("pkg"), files).unwrap();
        // /c/e is undefined; /c/d is unused; /b is unused but has a trigger
        assert_eq!(
            findings(&pkg),
            vec![
                (UndefinedParameter, "/c/e".to_string(), true),
                (Unused, "/c/d".to_string(), false),
            ]
        );
    }

    #[test]
    fn schema_nodes_are_named_by_their_parameter() {
        let cases = [
            ("", ""),
            ("/properties/a/properties/b~1c", "/a/b~1c"),
            ("/properties/l/items/properties/x/type", "/l/0/x"),
            ("/properties/t/prefixItems/2", "/t/2"),
            ("/properties/a/anyOf/1/properties/b", "/a/b"),
            ("/properties/m/additionalProperties/properties/x", "/m"),
            ("/$defs/label/properties/key", ""),
            (
                "/properties/properties/properties/items",
                "/properties/items",
            ),
        ];
        for (schema_ptr, want) in cases {
            assert_eq!(value_pointer(&toks(schema_ptr)), want, "{schema_ptr}");
        }
    }

    #[test]
    fn typos_are_close_and_case_insensitive() {
        let known = [
            "trigger",
            "immutable",
            "oldName",
            "default",
            "description",
            "if",
        ];
        let cases = [
            ("imutable", Some("immutable")),
            ("triger", Some("trigger")),
            ("defualt", Some("default")),
            ("descripton", Some("description")),
            ("oldname", Some("oldName")),
            ("id", Some("if")),
            ("example", None),
            ("group", None),
            ("hint", None),
        ];
        for (bad, want) in cases {
            assert_eq!(did_you_mean(bad, known), want, "{bad}");
        }
    }
}
