//! Templates and parameters: every parameter a template references is defined, and every
//! parameter is used.
//!
//! Templates are read with Handlebars' own parser (the AST of
//! [`handlebars::template::Template::compile`]), not with patterns. A path is resolved the way
//! the renderer resolves it: from the context of the block it is in. At the top that is the
//! render context (`Params`, `Name`, `Namespace`, ... see [`crate::render`]); `#each X` makes
//! each item of `X` the context (an array's `items`, a map's value schema), `#with X` makes `X`
//! the context, block parameters (`as |item i|`) name them, `../` goes to the enclosing block's
//! context and `@root` to the top. A path from the render context names one of its names
//! (`{{Nmae}}` is an error: strict rendering fails on it, as KUDO's `missingkey=error` does).
//! A path is checked against the schema step by step
//! ([`ParamSchema::child`]): numeric steps are array indexes, steps into a free-form object
//! (no `properties`, or `additionalProperties`) are always defined. The first step the schema
//! does not have is reported, with a suggestion.
//!
//! A parameter counts as used when a template references it or something under it, when it
//! lies under a value a template passes whole (`{{toYaml Params.resources}}` uses every
//! parameter under `/resources`; a block's subject such as `#each Params.list` or
//! `#if Params.backup` does not), or when a Toggle task names it. Only leaf parameters are
//! reported, and not one with its own `trigger` (it may exist only to run a plan, as KUDO
//! allowed). The check is skipped when a template does not parse or operator.yaml names a
//! template the package does not have (a task's, or the `namespaceManifest`): an unread
//! template might use anything.
//!
//! Not checked: paths whose context is not a parameter (`#each` over a closed object, whose
//! values each have their own schema; custom block helpers), `lookup` with a computed key,
//! partials and decorators (no partials are registered), and indexes against `prefixItems`
//! lengths.

use std::path::PathBuf;

use handlebars::template::{
    BlockParam, DecoratorTemplate, HelperTemplate, Parameter, Template, TemplateElement,
};
use handlebars::{Path as HbPath, PathSeg};

use super::operator::toggle_tokens;
use super::params_origin;
use crate::package::{Package, TaskKind};
use crate::render::{Parsed, Prepared};
use kudo_diag::diag::{Code, Diagnostic, Location, Origin};
use kudo_diag::pointer;
use kudo_policy::params::{ParamSchema, Params, v1beta2::Child};

mod go;

/// Helpers whose block makes each item of their first argument the context.
const EACH: &str = "each";
/// Helpers whose block makes their first argument the context.
const WITH: &str = "with";

/// The names of the Handlebars render context ([`crate::render`]); Go templates also have
/// `Pipes` (see `go.rs`).
const CONTEXT: [&str; 9] = [
    "Params",
    "Name",
    "Namespace",
    "OperatorName",
    "OperatorVersion",
    "AppVersion",
    "PlanName",
    "PhaseName",
    "StepName",
];

/// Runs both checks on every template; returns the templates that did not parse or have a
/// finding of their own (an undefined parameter or name, an unknown function): rendering
/// stops at the first such reference, so it would only repeat one of them.
pub(super) fn check(
    pkg: &Package,
    prepared: &Prepared<'_>,
    out: &mut Vec<Diagnostic>,
) -> Vec<PathBuf> {
    let schema = pkg.schema();
    // a template operator.yaml names is missing (reported by the operator checks)
    let missing = super::operator::named_templates(pkg)
        .iter()
        .any(|t| !pkg.templates().contains_key(*t));
    let mut uses: Vec<Use> = Vec::new();
    let mut skipped = Vec::new();
    let mut all_read = true;
    for (name, text) in pkg.templates() {
        let file = pkg.source().join("templates").join(name);
        let Some(parsed) = prepared.parsed(name) else {
            continue; // the package has every template it lists
        };
        let mut s = Scanner::new(schema, name, file.clone(), &mut uses);
        match parsed {
            Ok(Parsed::Go(template)) => s.go_template(text, template),
            Ok(Parsed::Handlebars(template)) => s.template(template),
            Err(f) => {
                let (line, col) = f.at.unwrap_or((1, 1));
                s.diags.push(
                    Diagnostic::error(
                        Code::Template,
                        "",
                        format!("template {name} does not parse: {}", f.message),
                    )
                    .with_origin(Origin::File(Location {
                        path: file.clone(),
                        line,
                        col: col.max(1),
                    })),
                );
                all_read = false;
            }
        }
        if !s.diags.is_empty() {
            skipped.push(file);
        }
        out.extend(s.diags);
    }
    if all_read && !missing {
        unused(pkg, &uses, out);
    }
    skipped
}

/// A parameter reference: the value pointer tokens (array indexes as `0`) and whether the
/// whole value is passed (so every parameter under it is used).
struct Use {
    tokens: Vec<String>,
    whole: bool,
}

/// What a template context is.
#[derive(Debug, Clone, PartialEq)]
enum Scope {
    /// The render context: `Params`, `Name`, `Namespace`...
    Root,
    /// A parameter: its value tokens.
    Param(Vec<String>),
    /// Something else (a name, an index, a value the schema cannot follow).
    Opaque,
}

struct Frame {
    scope: Scope,
    /// Block parameters (`as |item index|`) and what they are.
    params: Vec<(String, Scope)>,
}

/// How a path is used.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Usage {
    /// Its value is output or passed to a helper: all of it is used.
    Value,
    /// It is a block's subject (`#each`, `#with`, `#if`): only it.
    Subject,
}

struct Scanner<'a> {
    schema: &'a ParamSchema,
    name: &'a str,
    file: PathBuf,
    frames: Vec<Frame>,
    /// Line and column of the element being read.
    at: (usize, usize),
    uses: &'a mut Vec<Use>,
    diags: Vec<Diagnostic>,
}

impl<'a> Scanner<'a> {
    /// A scanner of template `name` (file `file`), its context the render context.
    fn new(
        schema: &'a ParamSchema,
        name: &'a str,
        file: PathBuf,
        uses: &'a mut Vec<Use>,
    ) -> Scanner<'a> {
        Scanner {
            schema,
            name,
            file,
            frames: vec![Frame {
                scope: Scope::Root,
                params: Vec::new(),
            }],
            at: (1, 1),
            uses,
            diags: Vec::new(),
        }
    }
}

impl Scanner<'_> {
    fn template(&mut self, t: &Template) {
        let enclosing = self.at;
        for (i, e) in t.elements.iter().enumerate() {
            self.at = t.mapping.get(i).map(|m| (m.0, m.1)).unwrap_or(enclosing);
            match e {
                TemplateElement::Expression(h) | TemplateElement::HtmlExpression(h) => {
                    self.expression(h)
                }
                TemplateElement::HelperBlock(h) => self.block(h),
                TemplateElement::DecoratorExpression(d)
                | TemplateElement::DecoratorBlock(d)
                | TemplateElement::PartialExpression(d)
                | TemplateElement::PartialBlock(d) => self.decorator(d),
                _ => {}
            }
        }
        self.at = enclosing;
    }

    /// `{{path}}` outputs the value; `{{helper args...}}` passes each argument.
    fn expression(&mut self, h: &HelperTemplate) {
        match &h.name {
            Parameter::Path(p) if h.params.is_empty() && h.hash.is_empty() => {
                self.path(p, Usage::Value);
            }
            _ => self.arguments(h.params.iter().chain(h.hash.values())),
        }
    }

    fn arguments<'p>(&mut self, params: impl Iterator<Item = &'p Parameter>) {
        for p in params {
            self.parameter(p, Usage::Value);
        }
    }

    fn parameter(&mut self, p: &Parameter, usage: Usage) -> Scope {
        match p {
            Parameter::Path(path) => self.path(path, usage),
            Parameter::Subexpression(sub) => {
                if let TemplateElement::Expression(h) = sub.element.as_ref() {
                    self.expression(h);
                }
                Scope::Opaque
            }
            _ => Scope::Opaque,
        }
    }

    fn decorator(&mut self, d: &DecoratorTemplate) {
        self.arguments(d.params.iter().chain(d.hash.values()));
        if let Some(t) = &d.template {
            self.template(t);
        }
    }

    fn block(&mut self, h: &HelperTemplate) {
        let helper = match &h.name {
            Parameter::Name(n) => n.as_str(),
            _ => "",
        };
        let subject = match h.params.first() {
            Some(first) if matches!(helper, EACH | WITH | "if" | "unless") => {
                Some(self.parameter(first, Usage::Subject))
            }
            _ => None,
        };
        let rest = usize::from(subject.is_some());
        self.arguments(h.params.iter().skip(rest).chain(h.hash.values()));

        let inner = match (helper, &subject) {
            (EACH, Some(s)) => Some(self.item_of(s)),
            (WITH, Some(s)) => Some(s.clone()),
            _ => None,
        };
        match inner {
            Some(scope) => {
                let mut params = Vec::new();
                match &h.block_param {
                    Some(BlockParam::Single(Parameter::Name(n))) => {
                        params.push((n.clone(), scope.clone()))
                    }
                    Some(BlockParam::Pair((Parameter::Name(a), Parameter::Name(b)))) => {
                        params.push((a.clone(), scope.clone()));
                        params.push((b.clone(), Scope::Opaque));
                    }
                    _ => {}
                }
                self.frames.push(Frame { scope, params });
                if let Some(t) = &h.template {
                    self.template(t);
                }
                self.frames.pop();
            }
            None => {
                if let Some(t) = &h.template {
                    self.template(t);
                }
            }
        }
        if let Some(t) = &h.inverse {
            self.template(t);
        }
    }

    /// The context inside `#each` over `scope`: an array's item, a map's value.
    fn item_of(&self, scope: &Scope) -> Scope {
        let Scope::Param(tokens) = scope else {
            return Scope::Opaque;
        };
        let Some(node) = self.schema.node_at(tokens) else {
            return Scope::Opaque;
        };
        let (token, child) = if self.schema.is_array(node) {
            ("0", self.schema.child(node, "0"))
        } else {
            // any key: only a map's shared value schema answers for every value
            ("*", self.schema.child(node, "*"))
        };
        match child {
            Child::Item(_) | Child::Additional(_) => {
                let mut t = tokens.clone();
                t.push(token.to_string());
                Scope::Param(t)
            }
            _ => Scope::Opaque,
        }
    }

    /// Resolves a path from its context, checks it against the schema and records the use.
    fn path(&mut self, p: &HbPath, usage: Usage) -> Scope {
        let HbPath::Relative((segs, raw)) = p else {
            return Scope::Opaque; // @index, @key, @first...
        };
        let mut base: Option<Scope> = None;
        let mut ups = 0;
        let mut names: Vec<&str> = Vec::new();
        for seg in segs {
            match seg {
                PathSeg::Named(n) => names.push(n),
                // the grammar's rule names: `@root` and `..`
                PathSeg::Ruled(r) => match format!("{r:?}").as_str() {
                    "path_root" => base = Some(Scope::Root),
                    "path_up" => ups += 1,
                    _ => return Scope::Opaque,
                },
                _ => return Scope::Opaque,
            }
        }
        let base = match base {
            Some(b) => b,
            None if ups > 0 => {
                let i = self.frames.len().saturating_sub(1 + ups);
                self.frames[i].scope.clone()
            }
            None => {
                let param = names.first().and_then(|first| {
                    self.frames
                        .iter()
                        .rev()
                        .flat_map(|f| f.params.iter())
                        .find(|(n, _)| n == first)
                        .map(|(_, s)| s.clone())
                });
                match param {
                    Some(s) => {
                        names.remove(0);
                        s
                    }
                    None => self
                        .frames
                        .last()
                        .map(|f| f.scope.clone())
                        .unwrap_or(Scope::Root),
                }
            }
        };
        let tokens = match base {
            Scope::Opaque => return Scope::Opaque,
            Scope::Param(t) => t,
            Scope::Root => match names.first() {
                None => {
                    // the whole context passed on: every parameter is used
                    self.uses.push(Use {
                        tokens: Vec::new(),
                        whole: usage == Usage::Value,
                    });
                    return Scope::Root;
                }
                Some(&"Params") => {
                    names.remove(0);
                    Vec::new()
                }
                Some(first) => {
                    if !CONTEXT.contains(first) {
                        self.unknown_context_name(first, raw, &CONTEXT);
                    }
                    return Scope::Opaque;
                }
            },
        };
        self.params_path(tokens, &names, usage, raw)
    }

    /// Follows `names` in the schema from the parameter at `tokens` (the root: empty),
    /// reporting the first step the schema does not have, and records the use.
    fn params_path(
        &mut self,
        mut tokens: Vec<String>,
        names: &[&str],
        usage: Usage,
        raw: &str,
    ) -> Scope {
        let Some(mut node) = self.schema.node_at(&tokens) else {
            return Scope::Opaque;
        };
        for &name in names {
            match self.schema.child(node, name) {
                Child::Unknown => {
                    self.undefined(&tokens, name, node, raw);
                    self.uses.push(Use {
                        tokens,
                        whole: false,
                    });
                    return Scope::Opaque;
                }
                c => {
                    tokens.push(name.to_string());
                    node = self.schema.resolve(c.schema().unwrap_or(node));
                }
            }
        }
        self.uses.push(Use {
            tokens: tokens.clone(),
            whole: usage == Usage::Value,
        });
        Scope::Param(tokens)
    }

    /// A name the render context does not have (`{{Nmae}}`, `{{ .Nmae }}`): rendering fails on
    /// it (Handlebars' strict mode, Go's `missingkey=error`).
    fn unknown_context_name(&mut self, name: &str, raw: &str, context: &[&str]) {
        let mut d = Diagnostic::error(
            Code::Template,
            "",
            format!(
                "template {} uses `{raw}`: the render context has no `{name}` (it has {})",
                self.name,
                context.join(", ")
            ),
        )
        .with_origin(Origin::File(Location {
            path: self.file.clone(),
            line: self.at.0,
            col: self.at.1.max(1),
        }));
        if let Some(m) = super::did_you_mean(name, context.iter().copied()) {
            d = d.with_help(format!("did you mean `{m}`?"));
        }
        self.diags.push(d);
    }

    fn undefined(&mut self, known: &[String], bad: &str, node: &serde_json::Value, raw: &str) {
        let mut tokens = known.to_vec();
        tokens.push(bad.to_string());
        let ptr = pointer::from_tokens(&tokens);
        if self.diags.iter().any(|d| d.pointer == ptr) {
            return; // once per template
        }
        let types = self.schema.types(node);
        let scalar = !types.is_empty() && !types.iter().any(|t| *t == "object" || *t == "array");
        let message = if scalar {
            let parent = pointer::from_tokens(known);
            format!(
                "is not a parameter: {parent} is a {}, it has nothing under it (template {} uses `{raw}`)",
                types.join(" or "),
                self.name
            )
        } else {
            format!("is not a parameter (template {} uses `{raw}`)", self.name)
        };
        let mut d = Diagnostic::error(Code::UndefinedParameter, ptr, message).with_origin(
            Origin::File(Location {
                path: self.file.clone(),
                line: self.at.0,
                col: self.at.1.max(1),
            }),
        );
        if bad == "Params" && !known.is_empty() {
            d = d.with_help(
                "inside #each and #with the context is the block's value: write `@root.Params...`",
            );
        } else if !scalar
            && let Some(h) = kudo_policy::values::suggest_sibling(self.schema, known, bad)
        {
            d = d.with_help(h);
        }
        self.diags.push(d);
    }
}

/// A value pointer's tokens with array indexes made `0`, so that `/list/3/x` and
/// `/list/0/x` (the schema's name for any item) compare equal.
fn normalized(tokens: &[String]) -> Vec<String> {
    tokens
        .iter()
        .map(|t| {
            if t.parse::<usize>().is_ok() {
                "0".to_string()
            } else {
                t.clone()
            }
        })
        .collect()
}

/// `a` is `b` or lies under it.
fn within(a: &[String], b: &[String]) -> bool {
    a.len() >= b.len() && a[..b.len()] == *b
}

fn unused(pkg: &Package, uses: &[Use], out: &mut Vec<Diagnostic>) {
    let schema = pkg.schema();
    let mut used: Vec<(Vec<String>, bool)> = uses
        .iter()
        .map(|u| (normalized(&u.tokens), u.whole))
        .collect();
    for task in &pkg.operator().tasks {
        if task.kind == TaskKind::Toggle
            && let Some(t) = task.parameter.as_deref().and_then(toggle_tokens)
        {
            used.push((normalized(&t), true));
        }
    }
    let pointers: Vec<Vec<String>> = schema
        .parameter_pointers()
        .iter()
        .filter_map(|p| pointer::tokens(p).ok())
        .collect();
    for leaf in &pointers {
        if pointers
            .iter()
            .any(|other| other.len() > leaf.len() && within(other, leaf))
        {
            continue; // not a leaf
        }
        let norm = normalized(leaf);
        let is_used = used
            .iter()
            .any(|(u, whole)| within(u, &norm) || (*whole && within(&norm, u)));
        let triggered = schema
            .node_at(leaf)
            .is_some_and(|n| n.get("trigger").is_some());
        if is_used || triggered {
            continue;
        }
        let ptr = pointer::from_tokens(leaf);
        let origin = schema_pointer(schema, leaf)
            .map(|sp| params_origin(pkg, &sp))
            .unwrap_or_else(|| params_origin(pkg, ""));
        let what = match pkg.params() {
            Params::V1beta1(_) => "parameter",
            Params::V1beta2(_) => "leaf parameter",
        };
        out.push(
            Diagnostic::warning(
                Code::Unused,
                ptr,
                format!("this {what} is not used by any template or Toggle task"),
            )
            .with_origin(origin)
            .with_help(
                "remove it, use it in a template, or give it a `trigger` if it only runs a plan",
            ),
        );
    }
}

/// The schema pointer of the node a value pointer's tokens lead to, through `properties` and
/// `items` as written (not through `$ref`).
fn schema_pointer(schema: &ParamSchema, tokens: &[String]) -> Option<String> {
    let mut node = schema.as_value();
    let mut at: Vec<String> = Vec::new();
    for t in tokens {
        if let Some(p) = node.get("properties").and_then(|p| p.get(t)) {
            at.extend(["properties".to_string(), t.clone()]);
            node = p;
        } else if let Some(i) = node.get("items").filter(|i| i.is_object()) {
            at.push("items".into());
            node = i;
        } else {
            return None;
        }
    }
    Some(pointer::from_tokens(&at))
}

#[cfg(test)]
mod tests {
    use super::*;
    use kudo_diag::diag::Severity;
    use serde_json::json;

    fn schema() -> ParamSchema {
        ParamSchema::from_value(json!({
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "backup": {"type": "object", "properties": {
                    "enabled": {"type": "boolean"},
                    "creds": {"type": "object", "properties": {"user": {"type": "string"}}}}},
                "topology": {"type": "array", "items": {"type": "object", "properties": {
                    "dc": {"type": "string"},
                    "labels": {"type": "array", "items": {"type": "object",
                        "properties": {"key": {"type": "string"}}}}}}},
                "extra": {"type": "object"},
                "res": {"type": "object", "additionalProperties": {"type": "object",
                    "properties": {"cpu": {"type": "string"}}}}
            }
        }))
        .unwrap()
    }

    /// The undefined pointers a template references, and the uses it records.
    fn scan(text: &str) -> (Vec<String>, Vec<(String, bool)>) {
        let (diags, uses) = scan_diags(text);
        let undefined = diags
            .iter()
            .filter(|d| d.code == Code::UndefinedParameter)
            .map(|d| d.pointer.to_string())
            .collect();
        (undefined, uses)
    }

    /// Every finding of a template, and the uses it records.
    fn scan_diags(text: &str) -> (Vec<Diagnostic>, Vec<(String, bool)>) {
        let schema = schema();
        let mut uses = Vec::new();
        let mut s = Scanner {
            schema: &schema,
            name: "t.yaml",
            file: PathBuf::from("t.yaml"),
            frames: vec![Frame {
                scope: Scope::Root,
                params: Vec::new(),
            }],
            at: (1, 1),
            uses: &mut uses,
            diags: Vec::new(),
        };
        s.template(&Template::compile(text).unwrap());
        let diags = std::mem::take(&mut s.diags);
        let uses = uses
            .iter()
            .map(|u| (pointer::from_tokens(&u.tokens), u.whole))
            .collect();
        (diags, uses)
    }

    #[test]
    fn a_name_the_render_context_lacks_is_an_error_where_it_is_written() {
        // (template, the line and column of each finding, the help of the first)
        type Case<'a> = (&'a str, &'a [(usize, usize)], Option<&'a str>);
        let cases: &[Case] = &[
            (
                "{{Name}} {{Namespace}} {{OperatorName}} {{OperatorVersion}} {{AppVersion}} {{PlanName}} {{PhaseName}} {{StepName}} {{Params.name}} {{@root.Name}} {{this}} {{@index}}",
                &[],
                None,
            ),
            (
                "a: {{Nmae}}\nb: {{quote Namespce}}\n{{#if Unknown}}x{{/if}}",
                &[(1, 4), (2, 4), (3, 1)],
                Some("did you mean `Name`?"),
            ),
            // inside a block the context is the block's value; `../` and `@root` climb out
            (
                "{{#each Params.topology}}{{dc}}{{../Nme}}{{@root.PlanNme}}{{/each}}",
                &[(1, 32), (1, 42)],
                Some("did you mean `Name`?"),
            ),
            (
                "{{#with Params.backup}}{{enabled}}{{/with}}{{#each Params.extra}}{{Whatever}}{{/each}}",
                &[],
                None,
            ),
        ];
        for (text, want, help) in cases {
            let (diags, _) = scan_diags(text);
            let got: Vec<(usize, usize)> = diags
                .iter()
                .map(|d| {
                    assert_eq!((d.code, d.severity), (Code::Template, Severity::Error));
                    match &d.origin {
                        Origin::File(l) => (l.line, l.col),
                        other => panic!("{other:?}"),
                    }
                })
                .collect();
            assert_eq!(got, *want, "template: {text}");
            assert_eq!(
                diags.first().and_then(|d| d.help.as_deref()),
                *help,
                "template: {text}"
            );
        }
    }

    #[test]
    fn references_resolve_through_blocks_as_the_renderer_does() {
        let cases: &[(&str, &[&str])] = &[
            ("{{Params.name}} {{quote Params.backup.creds.user}}", &[]),
            ("{{Params.nmae}}", &["/nmae"]),
            ("{{Params.backup.creds.usr}}", &["/backup/creds/usr"]),
            ("{{Params.name.first}}", &["/name/first"]),
            (
                "{{#each Params.topology}}{{dc}}{{#each labels}}{{key}}{{/each}}{{/each}}",
                &[],
            ),
            (
                "{{#each Params.topology}}{{dcc}}{{/each}}",
                &["/topology/0/dcc"],
            ),
            (
                "{{#each Params.topology}}{{Params.name}}{{/each}}",
                &["/topology/0/Params"],
            ),
            (
                "{{#each Params.topology}}{{@root.Params.name}} {{../Params.nam}}{{/each}}",
                &["/nam"],
            ),
            (
                "{{#each Params.topology as |t i|}}{{t.dc}} {{t.d}} {{i}}{{/each}}",
                &["/topology/0/d"],
            ),
            (
                "{{#with Params.backup}}{{enabled}} {{creds.user}} {{enabeld}}{{/with}}",
                &["/backup/enabeld"],
            ),
            (
                "{{#with Params.backup}}x{{else}}{{Params.bakup}}{{/with}}",
                &["/bakup"],
            ),
            (
                "{{Params.topology.0.dc}} {{Params.topology.[1].labels.0.kee}}",
                &["/topology/1/labels/0/kee"],
            ),
            (
                "{{Params.extra.anything.below}} {{Params.res.small.cpu}} {{Params.res.big.mem}}",
                &["/res/big/mem"],
            ),
            (
                "{{#each Params.res}}{{cpu}} {{gpu}}{{/each}}",
                &["/res/*/gpu"],
            ),
            (
                "{{#if (eq Params.backup.enabled true)}}{{default Params.nope 1}}{{/if}}",
                &["/nope"],
            ),
            (
                "{{#each Params.extra}}{{@key}}: {{this}} {{whatever.x}}{{/each}}",
                &[],
            ),
            ("{{Name}} {{Namespace}} {{Unknown}} {{@index}}", &[]),
        ];
        for (text, want) in cases {
            let (got, _) = scan(text);
            assert_eq!(got, *want, "template: {text}");
        }
    }

    #[test]
    fn uses_record_what_is_passed_whole() {
        let (_, uses) = scan(
            "{{toYaml Params.backup}} {{#each Params.topology}}{{dc}}{{/each}} {{#if Params.extra}}x{{/if}}",
        );
        assert_eq!(
            uses,
            vec![
                ("/backup".to_string(), true),
                ("/topology".to_string(), false),
                ("/topology/0/dc".to_string(), true),
                ("/extra".to_string(), false),
            ]
        );
    }
}
