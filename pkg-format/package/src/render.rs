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
//! Each template is parsed once per [`Prepared`] package, when first rendered. A Handlebars
//! template may include as a partial (`{{> other.yaml}}`) a template rendered before it by the
//! same call. The free functions ([`render_plan`], [`render_task`], ...) prepare
//! the package for one call; a caller that renders a package repeatedly keeps a [`Prepared`].
//!
//! The rendered text is read as Kubernetes reads a manifest ([`kudo_yaml::manifest`]: YAML 1.1,
//! so `defaultMode: 0777` is 511), whether the manager applies it, `kudo template -o json` or
//! `install --dry-run` prints it or `package verify` checks it. [`stream`] prints the texts of
//! a plan as one YAML stream that reads back as exactly those objects.

use std::borrow::Cow;
use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, LazyLock, OnceLock};

use base64::Engine as _;
use handlebars::{
    Context, Handlebars, Helper, HelperResult, JsonRender, Output, RenderContext, RenderError,
    RenderErrorReason, Renderable, ScopedJson, StringOutput,
};
use serde_json::{Value, json};

use crate::gotemplate::{self, TemplateEngine};
use crate::package::{Operator, Package};
use crate::step::{self, Action, StepTask, UndefinedTask};
use kudo_diag::diag::{Code, Diagnostic, Location, Origin};
use kudo_yaml::manifest::{self, Printable};

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
    /// Container images pinned: an image as the templates write it → the reference every
    /// rendered object gets in its place (`registry/repository@sha256:...`, the digest kudo
    /// verified). Empty: the images as written ([`crate::images::rewrite`]).
    pub images: std::collections::BTreeMap<String, String>,
}

impl Default for RenderOptions {
    fn default() -> Self {
        RenderOptions {
            instance: "instance".into(),
            namespace: "default".into(),
            plan: "deploy".into(),
            images: Default::default(),
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

/// One object a plan writes: what [`Prepared::plan_objects`] renders once for every question
/// asked of a package's plans (the CRDs an upgrade checks, the rights its ServiceAccount needs).
#[derive(Debug, Clone, PartialEq)]
pub struct PlanObject {
    /// The plan.
    pub plan: String,
    /// The plan applies it ([`step::Action::Apply`]: an Apply task, or a Toggle whose
    /// parameter is true, outside a delete step); else it deletes it.
    pub applied: bool,
    /// The object.
    pub object: Value,
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
///
/// Each call parses the templates it renders; [`Prepared::render_plan`] keeps them parsed.
pub fn render_plan(
    pkg: &Package,
    params: &Value,
    opts: &RenderOptions,
) -> Result<Vec<Rendered>, Vec<Diagnostic>> {
    Prepared::new(pkg).render_plan(params, opts)
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
    Prepared::new(pkg).render_task(params, opts, phase, step, task)
}

/// Renders a Pipe task's Pod template (`at.template`) as its step sees it. KUDO names the Pod,
/// so the template need not.
pub fn render_pipe_pod(
    pkg: &Package,
    params: &Value,
    opts: &RenderOptions,
    at: Use,
) -> Result<Rendered, Vec<Diagnostic>> {
    Prepared::new(pkg).render_pipe_pod(params, opts, at)
}

/// Renders a KudoOperator task's `parameterFile` (`at.template`): the child Instance's
/// parameters as YAML text, not Kubernetes objects.
pub fn render_parameter_file(
    pkg: &Package,
    params: &Value,
    opts: &RenderOptions,
    at: Use,
) -> Result<String, Vec<Diagnostic>> {
    Prepared::new(pkg).render_parameter_file(params, opts, at)
}

/// A package ready to render any number of times: each template is parsed once, the first time
/// it is rendered, and kept for every later render (any plan, task, values or instance).
///
/// [`Prepared::new`] borrows the package; `Prepared::from(pkg)` owns it, for a cache
/// (`Prepared<'static>`). A `Prepared` is `Send + Sync`: share it behind an `Arc`; threads that
/// render the same template at once parse it once. The free functions ([`render_plan`], ...)
/// prepare the package for one call.
///
/// ```
/// use kudo_pkg::Package;
/// use kudo_policy::change::Version;
/// use kudo_pkg::render::{Prepared, RenderOptions};
/// use serde_json::json;
///
/// let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/cassandra-v1beta2");
/// let prepared = Prepared::from(Package::load(dir.as_ref()).unwrap());
/// let version = prepared.package().policy_version().unwrap();
/// for nodes in [3, 5] {
///     let values = version.effective(&json!({"nodeCount": nodes})).0.into_value();
///     // the first render parses each template, the second renders the same parsed templates
///     let rendered = prepared.render_plan(&values, &RenderOptions::default()).unwrap();
///     assert!(rendered.iter().all(|r| !r.objects.is_empty()));
/// }
/// ```
pub struct Prepared<'p> {
    pkg: Cow<'p, Package>,
    /// Each template of the package by name, parsed by the package's engine when first used.
    parsed: HashMap<String, OnceLock<Result<Parsed, ParseFailure>>>,
    /// The schema's top-level parameters, each with its value when unset (a Go template's
    /// `Params` holds each).
    declared: Vec<(Arc<str>, gotmpl::Value)>,
}

/// A template parsed by its package's engine.
pub(crate) enum Parsed {
    /// A Go template (gotmpl, with sprig's functions).
    Go(gotmpl::Template),
    /// A Handlebars template, rendered with [`engine`]'s helpers.
    Handlebars(handlebars::Template),
}

/// Why a template does not parse: where (1-based line and column, when known) and the parser's
/// words.
#[derive(Debug, Clone)]
pub(crate) struct ParseFailure {
    pub(crate) at: Option<(usize, usize)>,
    pub(crate) message: String,
}

impl From<Package> for Prepared<'static> {
    fn from(pkg: Package) -> Self {
        Prepared::of(Cow::Owned(pkg))
    }
}

impl<'p> Prepared<'p> {
    /// Prepares `pkg`; nothing is parsed until it is rendered.
    pub fn new(pkg: &'p Package) -> Prepared<'p> {
        Prepared::of(Cow::Borrowed(pkg))
    }

    fn of(pkg: Cow<'p, Package>) -> Prepared<'p> {
        let parsed = pkg
            .templates()
            .keys()
            .map(|name| (name.clone(), OnceLock::new()))
            .collect();
        let declared = gotemplate::declared(pkg.schema());
        Prepared {
            pkg,
            parsed,
            declared,
        }
    }

    /// The package.
    pub fn package(&self) -> &Package {
        &self.pkg
    }

    /// [`render_plan`] with the templates parsed once.
    pub fn render_plan(
        &self,
        params: &Value,
        opts: &RenderOptions,
    ) -> Result<Vec<Rendered>, Vec<Diagnostic>> {
        let uses = plan_templates(self.pkg.operator(), &opts.plan, params).map_err(|d| vec![d])?;
        self.render_uses(params, opts, uses, Naming::Required)
    }

    /// [`render_task`] with the templates parsed once.
    pub fn render_task(
        &self,
        params: &Value,
        opts: &RenderOptions,
        phase: &str,
        step: &str,
        task: &str,
    ) -> Result<Vec<Rendered>, Vec<Diagnostic>> {
        let t = self.pkg.operator().task(task).ok_or_else(|| {
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
        self.render_uses(params, opts, uses, Naming::Required)
    }

    /// Every object the Apply, Toggle (either way) and Delete tasks of every plan write for
    /// Instance `instance` of `namespace` with the effective parameters `params`: each task
    /// rendered once, in plan order. A task whose templates do not render is left out (the
    /// plan reports it when it runs; `package verify` before).
    pub fn plan_objects(&self, params: &Value, instance: &str, namespace: &str) -> Vec<PlanObject> {
        let op = self.pkg.operator();
        let mut out = Vec::new();
        for (plan, p) in &op.plans {
            let opts = RenderOptions {
                instance: instance.into(),
                namespace: namespace.into(),
                plan: plan.clone(),
                images: Default::default(),
            };
            for phase in &p.phases {
                for s in &phase.steps {
                    for StepTask { task, action } in step::tasks(op, s, params).flatten() {
                        let writes = matches!(
                            task.kind,
                            crate::package::TaskKind::Apply
                                | crate::package::TaskKind::Toggle
                                | crate::package::TaskKind::Delete
                        );
                        if !writes {
                            continue;
                        }
                        let Ok(rendered) =
                            self.render_task(params, &opts, &phase.name, &s.name, &task.name)
                        else {
                            continue;
                        };
                        out.extend(rendered.into_iter().flat_map(|r| r.objects).map(|object| {
                            PlanObject {
                                plan: plan.clone(),
                                applied: action == Action::Apply,
                                object,
                            }
                        }));
                    }
                }
            }
        }
        out
    }

    /// [`render_pipe_pod`] with the templates parsed once.
    pub fn render_pipe_pod(
        &self,
        params: &Value,
        opts: &RenderOptions,
        at: Use,
    ) -> Result<Rendered, Vec<Diagnostic>> {
        let mut rendered = self.render_uses(params, opts, vec![at], Naming::Given)?;
        rendered.pop().ok_or_else(Vec::new)
    }

    /// [`render_parameter_file`] with the templates parsed once.
    pub fn render_parameter_file(
        &self,
        params: &Value,
        opts: &RenderOptions,
        at: Use,
    ) -> Result<String, Vec<Diagnostic>> {
        let mut rendered = self.render_uses(params, opts, vec![at], Naming::Text)?;
        Ok(rendered.pop().map(|r| r.text).unwrap_or_default())
    }

    /// Template `name` parsed (the first call parses it), or why it does not parse; `None`
    /// when the package has no such template.
    pub(crate) fn parsed(&self, name: &str) -> Option<&Result<Parsed, ParseFailure>> {
        let (once, text) = self.parsed.get(name).zip(self.pkg.templates().get(name))?;
        Some(once.get_or_init(|| {
            match self.pkg.template_engine() {
                TemplateEngine::Go => {
                    gotemplate::parse(name, text)
                        .map(Parsed::Go)
                        .map_err(|f| ParseFailure {
                            at: f.at,
                            message: f.message,
                        })
                }
                TemplateEngine::Handlebars => {
                    handlebars::Template::compile_with_name(text, name.to_string())
                        .map(Parsed::Handlebars)
                        .map_err(|e| ParseFailure {
                            at: e.pos(),
                            message: e.reason().to_string(),
                        })
                }
            }
        }))
    }

    fn render_uses(
        &self,
        params: &Value,
        opts: &RenderOptions,
        uses: Vec<Use>,
        naming: Naming,
    ) -> Result<Vec<Rendered>, Vec<Diagnostic>> {
        let mut call = Call::new(self, params, opts);
        let mut out = Vec::new();
        let mut diags = Vec::new();
        for u in uses {
            let file = self.pkg.source().join("templates").join(&u.template);
            let Some(parsed) = self.parsed(&u.template) else {
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
            if let Ok(Parsed::Handlebars(t)) = parsed
                && !call.partials.iter().any(|p| p.name == t.name)
            {
                call.partials.push(t);
            }
            match render_one(parsed, &mut call, &u, &file) {
                Ok(text) if naming == Naming::Text => out.push(Rendered {
                    template: u.template,
                    phase: u.phase,
                    step: u.step,
                    task: u.task,
                    text,
                    objects: Vec::new(),
                }),
                Ok(text) => match objects(&file, &text, naming) {
                    Ok(mut objects) => out.push(Rendered {
                        objects: {
                            for o in &mut objects {
                                crate::images::rewrite(o, &opts.images);
                            }
                            objects
                        },
                        template: u.template,
                        phase: u.phase,
                        step: u.step,
                        task: u.task,
                        text,
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

/// What one call renders with: its render contexts, built when first needed (only the phase
/// and step differ between its templates), and the Handlebars templates it has rendered so far,
/// which a later one may include as partials.
struct Call<'a> {
    prepared: &'a Prepared<'a>,
    params: &'a Value,
    opts: &'a RenderOptions,
    go: Option<gotemplate::Context>,
    handlebars: Option<Context>,
    partials: Vec<&'a handlebars::Template>,
}

impl<'a> Call<'a> {
    fn new(prepared: &'a Prepared<'a>, params: &'a Value, opts: &'a RenderOptions) -> Self {
        Call {
            prepared,
            params,
            opts,
            go: None,
            handlebars: None,
            partials: Vec::new(),
        }
    }

    /// A Go template's context at `u` (see the `gotemplate` module).
    fn go(&mut self, u: &Use) -> &gotmpl::Value {
        let (p, params, opts) = (self.prepared, self.params, self.opts);
        self.go
            .get_or_insert_with(|| {
                let at = gotemplate::At {
                    instance: &opts.instance,
                    namespace: &opts.namespace,
                    plan: &opts.plan,
                };
                gotemplate::Context::new(p.pkg.operator(), &p.declared, params, at)
            })
            .at(&u.phase, &u.step)
    }

    /// A Handlebars template's context at `u` (see the module docs).
    fn handlebars(&mut self, u: &Use) -> &Context {
        let (op, params, opts) = (self.prepared.pkg.operator(), self.params, self.opts);
        let ctx = self.handlebars.get_or_insert_with(|| {
            Context::from(json!({
                "Params": params,
                "Name": opts.instance,
                "Namespace": opts.namespace,
                "OperatorName": op.name,
                "OperatorVersion": op.operator_version,
                "AppVersion": op.app_version,
                "PlanName": opts.plan,
                "PhaseName": "",
                "StepName": "",
            }))
        });
        if let Value::Object(m) = ctx.data_mut() {
            m.insert("PhaseName".into(), Value::String(u.phase.clone()));
            m.insert("StepName".into(), Value::String(u.step.clone()));
        }
        ctx
    }
}

/// Renders template `u` (file `file`), parsed as `parsed`, in `call`.
fn render_one<'a>(
    parsed: &'a Result<Parsed, ParseFailure>,
    call: &mut Call<'a>,
    u: &Use,
    file: &Path,
) -> Result<String, Diagnostic> {
    match parsed {
        Err(f) => {
            let (line, col) = f.at.unwrap_or((1, 0));
            Err(template_diag(
                file,
                line,
                col,
                format!("does not parse: {}", f.message),
            ))
        }
        Ok(Parsed::Handlebars(t)) => {
            let partials = call.partials.clone();
            let ctx = call.handlebars(u);
            let mut rc = RenderContext::new(t.name.as_ref());
            if let Some(block) = rc.block_mut() {
                for p in partials {
                    if let Some(name) = &p.name {
                        block.set_local_partial(name.clone(), p);
                    }
                }
            }
            let mut out = StringOutput::new();
            t.render(&HANDLEBARS, ctx, &mut rc, &mut out)
                .and_then(|()| out.into_string().map_err(RenderError::from))
                .map_err(|e| {
                    template_diag(
                        file,
                        e.line_no.unwrap_or(1),
                        e.column_no.unwrap_or(0),
                        format!("does not render: {}", render_reason(&e)),
                    )
                })
        }
        Ok(Parsed::Go(t)) => gotemplate::execute(t, call.go(u)).map_err(|f| {
            let (line, col) = f.at.unwrap_or((1, 0));
            template_diag(file, line, col, format!("does not render: {}", f.message))
        }),
    }
}

/// The helpers every Handlebars template is rendered with ([`engine`]), built once. No
/// template is registered: each is rendered on its own, with the partials of its call.
static HANDLEBARS: LazyLock<Handlebars<'static>> = LazyLock::new(engine);

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

/// Reads rendered text as Kubernetes does and checks that each document is a Kubernetes object.
fn objects(file: &Path, text: &str, naming: Naming) -> Result<Vec<Value>, Diagnostic> {
    let docs = manifest::parse(file, text).map_err(|e| {
        let (line, col) = match &e {
            kudo_diag::Error::Yaml { line, col, .. } => (*line, *col),
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::fixtures::{applying_one_template, applying_templates};

    /// One parameter: v1beta1's `NODES` (so Go templates) or v1beta2's `nodes` (so Handlebars).
    fn params(go: bool) -> &'static str {
        if go {
            "apiVersion: kudo.dev/v1beta1\nparameters:\n  - name: NODES\n    default: \"3\"\n"
        } else {
            "apiVersion: kudo.dev/v1beta2\ntype: object\nproperties:\n  nodes:\n    type: integer\n    default: 3\n"
        }
    }

    /// A package applying `template` ([`applying_one_template`]) with [`params`].
    fn package(go: bool, template: &str) -> Package {
        applying_one_template(params(go), template)
    }

    #[test]
    fn plan_objects_renders_each_writing_task_once_and_says_whether_it_is_applied() {
        let operator = "apiVersion: kudo.dev/v1beta1\nname: t\noperatorVersion: 0.1.0\n\
            tasks:\n\
            \x20 - {name: app, kind: Apply, spec: {resources: [crd.yaml]}}\n\
            \x20 - {name: extra, kind: Toggle, spec: {parameter: EXTRA, resources: [extra.yaml]}}\n\
            \x20 - {name: gone, kind: Delete, spec: {resources: [gone.yaml]}}\n\
            \x20 - {name: broken, kind: Apply, spec: {resources: [broken.yaml]}}\n\
            \x20 - {name: wait, kind: Dummy}\n\
            plans:\n\
            \x20 deploy: {phases: [{name: p, steps: [{name: s, tasks: [app, extra, gone, broken, wait]}]}]}\n\
            \x20 cleanup: {phases: [{name: p, steps: [{name: s, delete: true, tasks: [app]}]}]}\n";
        let params =
            "apiVersion: kudo.dev/v1beta1\nparameters:\n  - name: EXTRA\n    default: \"false\"\n";
        let crd = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: things.example.com}\n";
        let mut files = std::collections::BTreeMap::new();
        for (name, text) in [
            ("operator.yaml", operator),
            ("params.yaml", params),
            ("templates/crd.yaml", crd),
            (
                "templates/extra.yaml",
                "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: extra}\n",
            ),
            (
                "templates/gone.yaml",
                "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: gone}\n",
            ),
            (
                "templates/broken.yaml",
                "kind: x\n  b: {{ .Params.NOPE }}\n",
            ),
        ] {
            files.insert(name.to_string(), text.as_bytes().to_vec());
        }
        let pkg = Package::from_files(Path::new("pkg"), files).unwrap();
        let prepared = Prepared::new(&pkg);
        let seen = |extra: &str| -> Vec<(String, String, bool)> {
            prepared
                .plan_objects(&json!({ "EXTRA": extra }), "i", "ns")
                .into_iter()
                .map(|o| {
                    let name = o.object["metadata"]["name"]
                        .as_str()
                        .unwrap_or("")
                        .to_string();
                    (o.plan, name, o.applied)
                })
                .collect()
        };
        let at = |plan: &str, name: &str, applied| (plan.to_string(), name.to_string(), applied);
        // In plan order; the broken task is left out, the Dummy writes nothing; a delete step
        // deletes.
        assert_eq!(
            seen("false"),
            [
                at("deploy", "things.example.com", true),
                at("deploy", "extra", false),
                at("deploy", "gone", false),
                at("cleanup", "things.example.com", false),
            ]
        );
        assert_eq!(seen("true")[1], at("deploy", "extra", true));
        // The CRDs an upgrade checks: those applied, once.
        let objects = prepared.plan_objects(&json!({"EXTRA": "false"}), "i", "ns");
        let crds = crate::preflight::applied_crds(&objects);
        assert_eq!(crds.len(), 1);
        assert_eq!(crds[0]["metadata"]["name"], "things.example.com");
    }

    /// Images pinned in the options are rendered pinned, in every object; others as written.
    #[test]
    fn pinned_images_are_rendered_in_place_of_the_written_ones() {
        let pkg = package(
            false,
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  \
             - {name: a, image: \"nginx:1.27\"}\n  - {name: b, image: \"busybox\"}\n",
        );
        let pinned = "docker.io/library/nginx@sha256:".to_string() + &"ab".repeat(32);
        let opts = RenderOptions {
            images: [("nginx:1.27".to_string(), pinned.clone())].into(),
            ..RenderOptions::default()
        };
        let rendered = render_plan(&pkg, &json!({"nodes": 3}), &opts).unwrap();
        let pod = &rendered[0].objects[0];
        assert_eq!(pod["spec"]["containers"][0]["image"], pinned.as_str());
        assert_eq!(pod["spec"]["containers"][1]["image"], "busybox");
        let plain = render_plan(&pkg, &json!({"nodes": 3}), &RenderOptions::default()).unwrap();
        assert_eq!(
            plain[0].objects[0]["spec"]["containers"][0]["image"],
            "nginx:1.27"
        );
    }

    #[test]
    fn a_prepared_package_is_shared_between_threads() {
        fn shared<T: Send + Sync + 'static>() {}
        shared::<Prepared<'static>>();
    }

    #[test]
    fn a_failing_template_is_reported_where_it_fails_each_time_it_is_rendered() {
        // (Go or Handlebars, template, message, line, column)
        let cases: &[(bool, &str, &str, usize, usize)] = &[
            (
                true,
                "a: 1\n{{ if }}\n",
                "does not parse: empty command",
                2,
                9,
            ),
            (
                true,
                "a: {{ .Params.NODES\n",
                "does not parse: unclosed action",
                2,
                1,
            ),
            (
                true,
                "kind: x\n  b: {{ .Params.NOPE }}\n",
                "does not render: map has no entry for key \"NOPE\"",
                1,
                1,
            ),
            (
                false,
                "a: 1\n{{#if}}\n",
                "does not parse: invalid handlebars syntax",
                3,
                1,
            ),
            (
                false,
                "kind: x\n  b: {{ Params.nope }}\n",
                "does not render: `Params.nope` has no value",
                2,
                6,
            ),
        ];
        for &(go, text, message, line, col) in cases {
            let pkg = package(go, text);
            let values = if go {
                json!({"NODES": "3"})
            } else {
                json!({"nodes": 3})
            };
            let opts = RenderOptions::default();
            let prepared = Prepared::new(&pkg);
            for diags in [
                render_plan(&pkg, &values, &opts).unwrap_err(),
                prepared.render_plan(&values, &opts).unwrap_err(),
                prepared.render_plan(&values, &opts).unwrap_err(), // parsed (or not) once
            ] {
                let [d] = &diags[..] else {
                    panic!("{text:?}: one finding, got {diags:?}")
                };
                let want = format!("template all.yaml {message}");
                assert!(d.message.starts_with(&want), "{text:?}: {}", d.message);
                let at = Origin::File(Location {
                    path: "pkg/templates/all.yaml".into(),
                    line,
                    col,
                });
                assert_eq!(d.origin, at, "{text:?}");
            }
        }
    }

    #[test]
    fn a_prepared_package_renders_each_call_with_its_own_values_and_place() {
        let go = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Name }}-{{ .PhaseName }}-{{ .StepName }}\ndata:\n  n: \"{{ .Params.NODES }}\"\n";
        let hb = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ Name }}-{{ PhaseName }}-{{ StepName }}\ndata:\n  n: \"{{ Params.nodes }}\"\n";
        for (pkg, values) in [
            (
                package(true, go),
                [json!({"NODES": "3"}), json!({"NODES": "5"})],
            ),
            (
                package(false, hb),
                [json!({"nodes": 3}), json!({"nodes": 5})],
            ),
        ] {
            let prepared = Prepared::from(pkg.clone());
            for (instance, values) in ["a", "b"].into_iter().zip(&values) {
                let opts = RenderOptions {
                    instance: instance.into(),
                    ..RenderOptions::default()
                };
                let once = render_plan(&pkg, values, &opts).unwrap();
                assert_eq!(prepared.render_plan(values, &opts).unwrap(), once);
                let task = prepared
                    .render_task(values, &opts, "q", "t", "app")
                    .unwrap();
                let n = values.as_object().unwrap().values().next().unwrap();
                let want = format!(
                    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {instance}-q-t\ndata:\n  n: \"{}\"\n",
                    n.as_str()
                        .map(str::to_string)
                        .unwrap_or_else(|| n.to_string())
                );
                assert_eq!(task[0].text, want);
            }
        }
    }

    /// Issue 33: an optional parameter with no default and no value is what KUDO's
    /// `ParamsMap` makes it, by its type: a scalar `""` (cassandra's restore script printed
    /// `in prefix '<no value>'`), an array an empty list, a map nil. A parameter given as null
    /// is one without a value.
    #[test]
    fn a_kudo_parameter_without_a_value_renders_as_kudo_renders_it() {
        let params = "apiVersion: kudo.dev/v1beta1\nparameters:\n  \
            - name: PREFIX\n    required: false\n  \
            - name: COUNT\n    type: integer\n    required: false\n  \
            - name: ON\n    type: boolean\n    required: false\n  \
            - name: LIST\n    type: array\n  \
            - name: MAP\n    type: map\n";
        let template = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  \
            prefix: \"[{{ .Params.PREFIX }}]{{ if .Params.PREFIX }}set{{ end }}\"\n  \
            count: \"[{{ .Params.COUNT }}] [{{ .Params.ON }}]\"\n  \
            list: \"[{{ .Params.LIST }}] {{ len .Params.LIST }}{{ range .Params.LIST }}x{{ end }}\"\n  \
            map: \"[{{ .Params.MAP }}]\"\n";
        let pkg = applying_one_template(params, template);
        for values in [json!({}), json!({"PREFIX": null, "COUNT": null})] {
            let rendered = render_plan(&pkg, &values, &RenderOptions::default()).unwrap();
            assert_eq!(
                rendered[0].objects[0]["data"],
                json!({
                    "prefix": "[]",
                    "count": "[] []",
                    "list": "[[]] 0",
                    "map": "[<no value>]",
                }),
                "values: {values}"
            );
        }
    }

    #[test]
    fn a_handlebars_template_includes_as_a_partial_what_its_call_rendered_before_it() {
        let b = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n";
        let a = "{{> b.yaml}}";
        let values = json!({"nodes": 3});
        let opts = RenderOptions::default();
        let pkg = applying_templates(params(false), &[("b.yaml", b), ("a.yaml", a)]);
        let prepared = Prepared::new(&pkg);
        let rendered = prepared.render_plan(&values, &opts).unwrap();
        assert_eq!(rendered[1].text, b);
        // not in another call
        let alone = Use {
            phase: "p".into(),
            step: "s".into(),
            task: "app".into(),
            template: "a.yaml".into(),
        };
        let not_found = "template a.yaml does not render: Partial not found b.yaml";
        let diags = prepared
            .render_parameter_file(&values, &opts, alone)
            .unwrap_err();
        assert_eq!(diags[0].message, not_found);
        // nor rendered after it
        let pkg = applying_templates(params(false), &[("a.yaml", a), ("b.yaml", b)]);
        let diags = render_plan(&pkg, &values, &opts).unwrap_err();
        assert_eq!(diags[0].message, not_found);
    }
}
