//! Rendering a plan's templates into Kubernetes objects.
//!
//! A package's templates are Go templates or Handlebars ([`Package::template_engine`]). Go
//! templates are rendered as KUDO renders them: see the `gotemplate` module. Handlebars
//! templates are rendered in strict mode (a missing value in `{{ }}` is an error,
//! not an empty string) without HTML escaping. The context is:
//!
//! | name | value |
//! |---|---|
//! | `Params` | the effective parameters, with their JSON types |
//! | `Name`, `Namespace` | the instance |
//! | `OperatorName`, `OperatorVersion`, `AppVersion` | from operator.yaml |
//! | `PlanName`, `PhaseName`, `StepName` | where in the plan the template is applied |
//!
//! Helpers besides Handlebars' built-ins (`if`, `each`, `with`, `lookup`, `eq`, `ne`, `gt`,
//! `gte`, `lt`, `lte`, `and`, `or`, `not`): `toYaml`, `toJson`, `default VALUE FALLBACK`
//! (fallback when the value is missing, null or ""), `quote` (a double-quoted, escaped string),
//! `indent N TEXT`, `b64enc`.
//!
//! The rendered text is read as Kubernetes reads a manifest ([`crate::manifest`]: YAML 1.1,
//! so `defaultMode: 0777` is 511), whether the manager applies it, `kudo template -o json` or
//! `install --dry-run` prints it or `package verify` checks it. [`stream`] prints the texts of
//! a plan as one YAML stream that reads back as exactly those objects.

use std::path::Path;

use base64::Engine as _;
use handlebars::{
    Context, Handlebars, Helper, HelperResult, JsonRender, Output, RenderContext, RenderError,
    RenderErrorReason, ScopedJson,
};
use serde_json::{Value, json};

use crate::diag::{Code, Diagnostic, Location, Origin};
use crate::gotemplate::{self, TemplateEngine};
use crate::manifest::{self, Printable};
use crate::package::{Operator, Package};
use crate::step::{self, Action, StepTask, UndefinedTask};

/// The rendered templates as one YAML stream, each document under a `# Source:` comment naming
/// its template and task, that [`manifest::parse`] reads as exactly the objects of `rendered`,
/// in order (what `kudo template` prints).
///
/// Each template's text is kept as rendered ([`manifest::printable`] says when it cannot be:
/// a final block scalar with no line break after it is made to strip, `|` → `|-`; a text that
/// would not read the same is replaced by its objects, under a comment that says so).
pub fn stream(rendered: &[Rendered]) -> String {
    let mut out = String::new();
    for r in rendered {
        out.push_str(&format!(
            "---\n# Source: templates/{} (task {})\n",
            r.template, r.task
        ));
        let printed = manifest::printable(&r.text, &r.objects);
        if let Printable::Objects(_) = printed {
            out.push_str(
                "# The objects read from the rendered text: the text itself would not read the \
                 same here.\n",
            );
        }
        out.push_str(printed.text());
    }
    out
}

/// Which instance and plan to render for.
#[derive(Debug, Clone)]
pub struct RenderOptions {
    /// Instance name (`Name`).
    pub instance: String,
    /// Namespace (`Namespace`).
    pub namespace: String,
    /// Plan whose Apply (and enabled Toggle) tasks are rendered.
    pub plan: String,
}

impl Default for RenderOptions {
    fn default() -> Self {
        RenderOptions {
            instance: "instance".into(),
            namespace: "default".into(),
            plan: "deploy".into(),
        }
    }
}

/// One rendered template.
#[derive(Debug, Clone, PartialEq)]
pub struct Rendered {
    /// The template's path under `templates/`.
    pub template: String,
    /// The phase, step and task that apply it.
    pub phase: String,
    /// The step.
    pub step: String,
    /// The task.
    pub task: String,
    /// The rendered text.
    pub text: String,
    /// The Kubernetes objects it holds.
    pub objects: Vec<Value>,
}

/// A template to render, found by walking a plan.
#[derive(Debug, Clone, PartialEq)]
pub struct Use {
    /// Phase name.
    pub phase: String,
    /// Step name.
    pub step: String,
    /// Task name.
    pub task: String,
    /// Template path under `templates/`.
    pub template: String,
}

/// The templates a plan applies, in plan order, each once: the resources of the tasks whose
/// [`step::Action`] is `Apply` (its `Apply` tasks and its `Toggle` tasks whose parameter is
/// true in `params`).
pub fn plan_templates(op: &Operator, plan: &str, params: &Value) -> Result<Vec<Use>, Diagnostic> {
    let p = op.plans.get(plan).ok_or_else(|| {
        let known: Vec<&str> = op.plans.keys().map(String::as_str).collect();
        Diagnostic::error(
            Code::Operator,
            "",
            format!("the operator has no plan `{plan}`"),
        )
        .with_help(format!("plans: {}", known.join(", ")))
    })?;
    let mut out: Vec<Use> = Vec::new();
    for phase in &p.phases {
        for step in &phase.steps {
            if step.delete {
                continue;
            }
            for t in step::tasks(op, step, params) {
                let StepTask { task, action } = t.map_err(|UndefinedTask(task_name)| {
                    Diagnostic::error(
                        Code::Operator,
                        "",
                        format!(
                            "plan `{plan}` step `{}` uses task `{task_name}`, which is not defined",
                            step.name
                        ),
                    )
                })?;
                if action != Action::Apply {
                    continue;
                }
                for r in &task.resources {
                    if out.iter().any(|u| &u.template == r) {
                        continue;
                    }
                    out.push(Use {
                        phase: phase.name.clone(),
                        step: step.name.clone(),
                        task: task.name.clone(),
                        template: r.clone(),
                    });
                }
            }
        }
    }
    Ok(out)
}

/// The template engine, configured as described in the module docs.
pub fn engine() -> Handlebars<'static> {
    let mut hb = Handlebars::new();
    hb.set_strict_mode(true);
    hb.register_escape_fn(handlebars::no_escape);
    hb.register_helper("toYaml", Box::new(Text(to_yaml)));
    hb.register_helper("toJson", Box::new(Text(to_json)));
    hb.register_helper("default", Box::new(DefaultHelper));
    hb.register_helper("quote", Box::new(Text(quote)));
    hb.register_helper("indent", Box::new(Text(indent)));
    hb.register_helper("b64enc", Box::new(Text(b64enc)));
    hb
}

/// Renders the plan's templates with `params`. Every failing template is reported.
pub fn render_plan(
    pkg: &Package,
    params: &Value,
    opts: &RenderOptions,
) -> Result<Vec<Rendered>, Vec<Diagnostic>> {
    let uses = plan_templates(pkg.operator(), &opts.plan, params).map_err(|d| vec![d])?;
    render_uses(pkg, params, opts, uses, Naming::Required)
}

/// Renders the templates of one task (whatever its kind: what an Apply or an enabled Toggle
/// applies, and what a Delete or a disabled Toggle deletes), as the step `step` of phase
/// `phase` of `opts.plan` sees them.
pub fn render_task(
    pkg: &Package,
    params: &Value,
    opts: &RenderOptions,
    phase: &str,
    step: &str,
    task: &str,
) -> Result<Vec<Rendered>, Vec<Diagnostic>> {
    let t = pkg.operator().task(task).ok_or_else(|| {
        vec![Diagnostic::error(
            Code::Operator,
            "",
            format!("step `{step}` uses task `{task}`, which is not defined"),
        )]
    })?;
    let uses = t
        .resources
        .iter()
        .map(|template| Use {
            phase: phase.into(),
            step: step.into(),
            task: task.into(),
            template: template.clone(),
        })
        .collect();
    render_uses(pkg, params, opts, uses, Naming::Required)
}

/// Renders a Pipe task's Pod template (`at.template`) as its step sees it. KUDO names the Pod,
/// so the template need not.
pub fn render_pipe_pod(
    pkg: &Package,
    params: &Value,
    opts: &RenderOptions,
    at: Use,
) -> Result<Rendered, Vec<Diagnostic>> {
    let mut rendered = render_uses(pkg, params, opts, vec![at], Naming::Given)?;
    rendered.pop().ok_or_else(Vec::new)
}

/// Renders a KudoOperator task's `parameterFile` (`at.template`): the child Instance's
/// parameters as YAML text, not Kubernetes objects.
pub fn render_parameter_file(
    pkg: &Package,
    params: &Value,
    opts: &RenderOptions,
    at: Use,
) -> Result<String, Vec<Diagnostic>> {
    let mut rendered = render_uses(pkg, params, opts, vec![at], Naming::Text)?;
    Ok(rendered.pop().map(|r| r.text).unwrap_or_default())
}

/// What a rendered template holds.
#[derive(Clone, Copy, PartialEq)]
enum Naming {
    /// Objects, each with `metadata.name` (or `generateName`).
    Required,
    /// Objects that kudo names (a Pipe Pod).
    Given,
    /// Text (a parameter file): not parsed as objects.
    Text,
}

/// A package's templates, parsed once each by the package's engine.
enum Engine {
    Handlebars(Box<Handlebars<'static>>),
    Go(std::collections::HashMap<String, gotmpl::Template>),
}

impl Engine {
    fn of(pkg: &Package) -> Engine {
        match pkg.template_engine() {
            TemplateEngine::Handlebars => Engine::Handlebars(Box::new(engine())),
            TemplateEngine::Go => Engine::Go(Default::default()),
        }
    }

    /// Renders template `u` (text `text`, file `file`), parsing it first if needed.
    fn render(
        &mut self,
        pkg: &Package,
        params: &Value,
        opts: &RenderOptions,
        u: &Use,
        text: &str,
        file: &Path,
    ) -> Result<String, Diagnostic> {
        match self {
            Engine::Handlebars(hb) => {
                if !hb.has_template(&u.template)
                    && let Err(e) = hb.register_template_string(&u.template, text)
                {
                    let (line, col) = e.pos().unwrap_or((1, 0));
                    return Err(template_diag(
                        file,
                        line,
                        col,
                        format!("does not parse: {}", e.reason()),
                    ));
                }
                let ctx = context(pkg.operator(), params, opts, u);
                hb.render(&u.template, &ctx).map_err(|e| {
                    template_diag(
                        file,
                        e.line_no.unwrap_or(1),
                        e.column_no.unwrap_or(0),
                        format!("does not render: {}", render_reason(&e)),
                    )
                })
            }
            Engine::Go(parsed) => {
                let go_failure = |verb: &str, f: gotemplate::Failure| {
                    let (line, col) = f.at.unwrap_or((1, 0));
                    template_diag(file, line, col, format!("does not {verb}: {}", f.message))
                };
                if !parsed.contains_key(&u.template) {
                    let t =
                        gotemplate::parse(&u.template, text).map_err(|f| go_failure("parse", f))?;
                    parsed.insert(u.template.clone(), t);
                }
                let t = &parsed[&u.template];
                let at = gotemplate::At {
                    instance: &opts.instance,
                    namespace: &opts.namespace,
                    plan: &opts.plan,
                    phase: &u.phase,
                    step: &u.step,
                };
                let ctx = gotemplate::context(pkg.operator(), pkg.schema(), params, at);
                gotemplate::execute(t, &ctx).map_err(|f| go_failure("render", f))
            }
        }
    }
}

fn render_uses(
    pkg: &Package,
    params: &Value,
    opts: &RenderOptions,
    uses: Vec<Use>,
    naming: Naming,
) -> Result<Vec<Rendered>, Vec<Diagnostic>> {
    let mut engine = Engine::of(pkg);
    let mut out = Vec::new();
    let mut diags = Vec::new();
    for u in uses {
        let file = pkg.source().join("templates").join(&u.template);
        let Some(text) = pkg.templates().get(&u.template) else {
            diags.push(Diagnostic::error(
                Code::Template,
                "",
                format!(
                    "task `{}` uses templates/{}, which the package does not have",
                    u.task, u.template
                ),
            ));
            continue;
        };
        match engine.render(pkg, params, opts, &u, text, &file) {
            Ok(text) if naming == Naming::Text => out.push(Rendered {
                template: u.template,
                phase: u.phase,
                step: u.step,
                task: u.task,
                text,
                objects: Vec::new(),
            }),
            Ok(text) => match objects(&file, &text, naming) {
                Ok(objects) => out.push(Rendered {
                    template: u.template,
                    phase: u.phase,
                    step: u.step,
                    task: u.task,
                    text,
                    objects,
                }),
                Err(d) => diags.push(d),
            },
            Err(d) => diags.push(d),
        }
    }
    if diags.is_empty() {
        Ok(out)
    } else {
        Err(diags)
    }
}

fn render_reason(e: &RenderError) -> String {
    match e.reason() {
        RenderErrorReason::MissingVariable(Some(path)) => {
            format!(
                "`{path}` has no value (templates are strict: guard optional values with {{{{#if}}}} or `default`)"
            )
        }
        other => other.to_string(),
    }
}

fn template_diag(file: &Path, line: usize, col: usize, message: String) -> Diagnostic {
    Diagnostic::error(
        Code::Template,
        "",
        format!(
            "template {} {message}",
            file.file_name()
                .map(|f| f.to_string_lossy())
                .unwrap_or_default()
        ),
    )
    .with_origin(Origin::File(Location {
        path: file.to_path_buf(),
        line,
        col: col.max(1),
    }))
}

fn context(op: &Operator, params: &Value, opts: &RenderOptions, u: &Use) -> Value {
    json!({
        "Params": params,
        "Name": opts.instance,
        "Namespace": opts.namespace,
        "OperatorName": op.name,
        "OperatorVersion": op.operator_version,
        "AppVersion": op.app_version,
        "PlanName": opts.plan,
        "PhaseName": u.phase,
        "StepName": u.step,
    })
}

/// Reads rendered text as Kubernetes does and checks that each document is a Kubernetes object.
fn objects(file: &Path, text: &str, naming: Naming) -> Result<Vec<Value>, Diagnostic> {
    let docs = manifest::parse(file, text).map_err(|e| {
        let (line, col) = match &e {
            crate::Error::Yaml { line, col, .. } => (*line, *col),
            _ => (1, 1),
        };
        template_diag(
            file,
            line,
            col,
            format!("renders to invalid YAML (line {line} of the output): {e}"),
        )
    })?;
    let mut out = Vec::new();
    for d in docs {
        if d.is_null() {
            continue;
        }
        let ok = d.get("apiVersion").is_some_and(Value::is_string)
            && d.get("kind").is_some_and(Value::is_string)
            && (naming == Naming::Given
                || d.get("metadata").is_some_and(|m| {
                    m.get("name").is_some_and(Value::is_string)
                        || m.get("generateName").is_some_and(Value::is_string)
                }));
        if !ok {
            return Err(template_diag(
                file,
                1,
                1,
                "does not render to a Kubernetes object (apiVersion, kind and metadata.name are required)".into(),
            ));
        }
        out.push(d);
    }
    Ok(out)
}

fn param<'a>(h: &'a Helper<'_>, i: usize, name: &'static str) -> Result<&'a Value, RenderError> {
    h.param(i)
        .map(|p| p.value())
        .ok_or_else(|| RenderErrorReason::ParamNotFoundForIndex(name, i).into())
}

fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.render(),
    }
}

fn to_yaml(h: &Helper<'_>) -> Result<String, RenderError> {
    let v = param(h, 0, "toYaml")?;
    Ok(manifest::to_yaml(v).trim_end_matches('\n').to_string())
}

fn to_json(h: &Helper<'_>) -> Result<String, RenderError> {
    Ok(param(h, 0, "toJson")?.to_string())
}

fn quote(h: &Helper<'_>) -> Result<String, RenderError> {
    let s = text_of(param(h, 0, "quote")?);
    Ok(Value::String(s).to_string())
}

fn b64enc(h: &Helper<'_>) -> Result<String, RenderError> {
    let s = text_of(param(h, 0, "b64enc")?);
    Ok(base64::engine::general_purpose::STANDARD.encode(s))
}

fn indent(h: &Helper<'_>) -> Result<String, RenderError> {
    let n = param(h, 0, "indent")?.as_u64().ok_or_else(|| {
        RenderErrorReason::Other("indent: the first argument must be a number of spaces".into())
    })?;
    let pad = " ".repeat(n.min(256) as usize);
    let text = text_of(param(h, 1, "indent")?);
    let lines: Vec<String> = text.lines().map(|l| format!("{pad}{l}")).collect();
    Ok(lines.join("\n"))
}

/// A helper that writes the text its function makes of the parameters.
struct Text(fn(&Helper<'_>) -> Result<String, RenderError>);

impl handlebars::HelperDef for Text {
    fn call<'reg: 'rc, 'rc>(
        &self,
        h: &Helper<'rc>,
        _: &'reg Handlebars<'reg>,
        _: &'rc Context,
        _: &mut RenderContext<'reg, 'rc>,
        out: &mut dyn Output,
    ) -> HelperResult {
        out.write(&(self.0)(h)?)?;
        Ok(())
    }
}

fn pick_default(h: &Helper<'_>) -> Result<Value, RenderError> {
    let fallback = param(h, 1, "default")?;
    let v = h.param(0).map(|p| p.value()).unwrap_or(&Value::Null);
    Ok(match v {
        Value::Null => fallback.clone(),
        Value::String(s) if s.is_empty() => fallback.clone(),
        other => other.clone(),
    })
}

/// `default VALUE FALLBACK`: a value helper, so it keeps the type inside subexpressions
/// (`{{quote (default x "a")}}`).
pub struct DefaultHelper;

impl handlebars::HelperDef for DefaultHelper {
    fn call_inner<'reg: 'rc, 'rc>(
        &self,
        h: &Helper<'rc>,
        _: &'reg Handlebars<'reg>,
        _: &'rc Context,
        _: &mut RenderContext<'reg, 'rc>,
    ) -> Result<ScopedJson<'rc>, RenderError> {
        Ok(ScopedJson::Derived(pick_default(h)?))
    }
}
