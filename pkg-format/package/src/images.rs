//! Container images: which ones a package runs, where each is used, and how to rewrite them.
//!
//! Three levels, each built on the one before:
//!
//! - **one object**: [`uses`] lists the image fields of a rendered Kubernetes object, each with
//!   the object ([`ObjectRef`]) and the JSON pointer of the field
//!   (`/spec/template/spec/containers/0/image`); [`rewrite`] replaces the images at those
//!   fields, by a map from the old reference to the new one (to pin `image@sha256:...`, or to
//!   move to a mirror);
//! - **one package, one set of values**: [`list`] renders every plan (its Apply tasks and the
//!   Toggle tasks that are on, as [`render_plan`](crate::render::render_plan) does) and every
//!   Pipe task's Pod (as kudo runs it: with its `waiter` container, [`crate::pipe::pipe_pod`]),
//!   and gathers the images, each once ([`Image`]), with every place it is used ([`Site`]); each
//!   reference is parsed as the OCI distribution spec reads it ([`Reference`]). KudoOperator
//!   tasks name other packages: they are listed ([`DependencyTask`]), not resolved;
//! - **one package, every value of each finite domain** ([`ListOptions::all_values`]): see
//!   below.
//!
//! Where the pod spec of an object is, by API group and kind (any version):
//!
//! | group | kinds | pod spec |
//! |---|---|---|
//! | core (`v1`) | `Pod` | `/spec` |
//! | core (`v1`) | `ReplicationController` | `/spec/template/spec` |
//! | core (`v1`) | `PodTemplate` | `/template/spec` |
//! | `apps`, `extensions` | `Deployment`, `StatefulSet`, `DaemonSet`, `ReplicaSet` | `/spec/template/spec` |
//! | `batch` | `Job` | `/spec/template/spec` |
//! | `batch` | `CronJob` (`batch/v1`, `batch/v1beta1`) | `/spec/jobTemplate/spec/template/spec` |
//!
//! In each pod spec, the `image` of every item of `containers`, `initContainers` and
//! `ephemeralContainers`.
//!
//! Not covered: an object of any other kind or group is not guessed at, even when it holds
//! something shaped like a pod template (a custom resource's, a `v1` `List`'s items); nor are
//! images a running program starts by itself (an operator's own workloads), nor a template
//! that no plan applies, nor a Toggle task that is off under the values (unless the walk below
//! turns it on).
//!
//! # Walking the finite domains
//!
//! With [`ListOptions::all_values`], [`list`] also renders the package with the given values
//! plus **one** parameter set to each value of its finite domain ([`domains`]), one parameter
//! at a time: not the cartesian product of all of them, so an image that only two settings
//! together select is not found. A parameter's finite domain is
//!
//! - its schema's `enum`, in either parameter format (a `kudo.dev/v1beta1` parameter's `enum`
//!   becomes the schema's, typed);
//! - `true` and `false` for a parameter of `type: boolean` (a `kudo.dev/v1beta1` parameter
//!   without `type: boolean` is a string, whatever its values look like);
//! - `true` and `false` for the parameter a Toggle task names, whatever its type (the task's
//!   two states).
//!
//! Each value is set as `-p POINTER=VALUE` sets it on top of the given values
//! ([`kudo_policy::values`]: typed by the schema) and the result validated
//! ([`Package::resolve`]); a value the schema refuses with the others ([`Tested::Refused`]) is
//! not rendered, and one that changes nothing ([`Tested::Given`]) is not rendered again. A
//! parameter under an array item (`/topology/0/rack`) is not walked: it is listed in
//! [`Walk::not_walked`]. The walk renders at most [`MAX_RENDERS`] times (the given values
//! once, then one render per domain value); a package whose domains need more is refused
//! whole ([`ImagesError::TooManyRenders`]) before anything is rendered.
//!
//! ```
//! use kudo_pkg::images;
//! use serde_json::json;
//!
//! let deployment = json!({
//!     "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
//!     "spec": {"template": {"spec": {
//!         "initContainers": [{"name": "init", "image": "busybox:1.36"}],
//!         "containers": [{"name": "web", "image": "nginx:1.27"}],
//!     }}},
//! });
//! let found: Vec<(String, String)> = images::uses(&deployment)
//!     .into_iter()
//!     .map(|u| (u.image, u.pointer))
//!     .collect();
//! assert_eq!(found, [
//!     ("nginx:1.27".to_string(), "/spec/template/spec/containers/0/image".to_string()),
//!     ("busybox:1.36".to_string(), "/spec/template/spec/initContainers/0/image".to_string()),
//! ]);
//! ```

use std::collections::BTreeMap;

use serde_json::Value;

pub use oci_spec::distribution::{ParseError, Reference};

use crate::dependency::KudoOperatorTask;
use crate::package::{Package, TaskKind};
use crate::pipe::{self, PipeTask};
use crate::render::{Prepared, RenderOptions, Use};
use crate::step::{self, Action, StepTask};
use kudo_diag::diag::{Code, Diagnostic};
use kudo_diag::pointer;
use kudo_policy::values::{Inputs, Override};

/// The most renders of a package one [`list`] makes: the given values once, then one per
/// value of the walked domains ([`ListOptions::all_values`]).
pub const MAX_RENDERS: usize = 256;

/// Where the pod spec of an object is, by API group (`""` for core) and kind: the module docs'
/// table.
const POD_SPECS: &[(&str, &str, &str)] = &[
    ("", "Pod", "/spec"),
    ("", "ReplicationController", "/spec/template/spec"),
    ("", "PodTemplate", "/template/spec"),
    ("apps", "Deployment", "/spec/template/spec"),
    ("apps", "StatefulSet", "/spec/template/spec"),
    ("apps", "DaemonSet", "/spec/template/spec"),
    ("apps", "ReplicaSet", "/spec/template/spec"),
    ("extensions", "Deployment", "/spec/template/spec"),
    ("extensions", "DaemonSet", "/spec/template/spec"),
    ("extensions", "ReplicaSet", "/spec/template/spec"),
    ("batch", "Job", "/spec/template/spec"),
    ("batch", "CronJob", "/spec/jobTemplate/spec/template/spec"),
];

/// The lists of a pod spec whose items run an image.
const CONTAINER_LISTS: [&str; 3] = ["containers", "initContainers", "ephemeralContainers"];

/// The pointer of the pod spec in an object of `api_version` and `kind`, when kudo knows where
/// it is (the module docs' table); `None` for any other kind.
pub fn pod_spec_pointer(api_version: &str, kind: &str) -> Option<&'static str> {
    let group = api_version.rsplit_once('/').map_or("", |(group, _)| group);
    POD_SPECS
        .iter()
        .find(|(g, k, _)| *g == group && *k == kind)
        .map(|(_, _, at)| *at)
}

/// The object an image is used in, as `kubectl` names it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ObjectRef {
    /// `apiVersion`.
    pub api_version: String,
    /// `kind`.
    pub kind: String,
    /// `metadata.namespace`, when the object gives one (else the Instance's applies).
    pub namespace: Option<String>,
    /// `metadata.name`, else `metadata.generateName`, else empty.
    pub name: String,
}

impl ObjectRef {
    /// The object `object` names.
    pub fn of(object: &Value) -> ObjectRef {
        let text = |p: &str| object.pointer(p).and_then(Value::as_str).map(String::from);
        ObjectRef {
            api_version: text("/apiVersion").unwrap_or_default(),
            kind: text("/kind").unwrap_or_default(),
            namespace: text("/metadata/namespace"),
            name: text("/metadata/name")
                .or_else(|| text("/metadata/generateName"))
                .unwrap_or_default(),
        }
    }
}

/// One image field of one object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageUse {
    /// The reference, as written.
    pub image: String,
    /// The object.
    pub object: ObjectRef,
    /// The field's JSON pointer in the object (`/spec/containers/0/image`).
    pub pointer: String,
}

/// Every image field of `object` (the module docs say which), whatever it holds, in order:
/// the pod spec's `containers`, then `initContainers`, then `ephemeralContainers`.
fn image_fields(object: &Value) -> Vec<(String, &Value)> {
    let (Some(api_version), Some(kind)) = (
        object.get("apiVersion").and_then(Value::as_str),
        object.get("kind").and_then(Value::as_str),
    ) else {
        return Vec::new();
    };
    let Some(at) = pod_spec_pointer(api_version, kind) else {
        return Vec::new();
    };
    let Some(spec) = object.pointer(at) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for list in CONTAINER_LISTS {
        let items = spec
            .get(list)
            .and_then(Value::as_array)
            .into_iter()
            .flatten();
        for (i, container) in items.enumerate() {
            if let Some(image) = container.get("image") {
                out.push((format!("{at}/{list}/{i}/image"), image));
            }
        }
    }
    out
}

/// The images `object` runs: each image field of its pod spec, in order (`containers`, then
/// `initContainers`, then `ephemeralContainers`). An object of a kind the module docs do not
/// list has none. A field that holds something else than a string (which Kubernetes refuses)
/// is no image use; [`list`] reports it as an error.
pub fn uses(object: &Value) -> Vec<ImageUse> {
    let fields = image_fields(object);
    if fields.is_empty() {
        return Vec::new();
    }
    let at = ObjectRef::of(object);
    fields
        .into_iter()
        .filter_map(|(pointer, image)| {
            image.as_str().map(|image| ImageUse {
                image: image.to_string(),
                object: at.clone(),
                pointer,
            })
        })
        .collect()
}

/// Replaces each image of `object` ([`uses`]) that `to` maps (from the reference as written to
/// the new one) and returns the uses it replaced, with their old image. An image `to` does not
/// name is left as it is.
///
/// ```
/// use std::collections::BTreeMap;
/// use kudo_pkg::images;
/// use serde_json::json;
///
/// let mut pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
///     "spec": {"containers": [{"name": "a", "image": "nginx:1.27"}]}});
/// let pinned = "nginx:1.27@sha256:0000000000000000000000000000000000000000000000000000000000000000";
/// let to = BTreeMap::from([("nginx:1.27".to_string(), pinned.to_string())]);
/// let replaced = images::rewrite(&mut pod, &to);
/// assert_eq!(replaced[0].pointer, "/spec/containers/0/image");
/// assert_eq!(pod["spec"]["containers"][0]["image"], pinned);
/// ```
pub fn rewrite(object: &mut Value, to: &BTreeMap<String, String>) -> Vec<ImageUse> {
    let mut replaced = Vec::new();
    for u in uses(object) {
        let (Some(new), Some(field)) = (to.get(&u.image), object.pointer_mut(&u.pointer)) else {
            continue;
        };
        *field = Value::String(new.clone());
        replaced.push(u);
    }
    replaced
}

/// Where an image goes in a mirror: `MIRROR_PREFIX/REPOSITORY`, its repository path as the
/// OCI distribution spec reads it (the registry dropped, Docker Hub's `library/` kept), below
/// the mirror's prefix (`oci://` and slashes around it are dropped; an empty prefix gives the
/// repository alone, as the relocation map records it). No tag, no digest: the caller adds
/// the one it copied. The one rule `kudo package bundle` and `relocate` follow (two images
/// of different registries with the same repository path cannot share a mirror: the bundle
/// refuses them), and the one an install from a mirror reads back.
///
/// | image as written | mirror prefix | relocated |
/// |---|---|---|
/// | `zookeeper:3.6.2` | `mirror.local:5000/kudo` | `mirror.local:5000/kudo/library/zookeeper` |
/// | `127.0.0.1:5000/acme/app@sha256:...` | `oci://mirror/` | `mirror/acme/app` |
/// | `quay.io/prometheus/node-exporter:v0.18.1` | (empty) | `prometheus/node-exporter` |
///
/// ```
/// use kudo_pkg::images::{self, Reference};
/// let r: Reference = "zookeeper:3.6.2".parse().unwrap();
/// assert_eq!(images::relocated(&r, "mirror.local:5000/kudo"), "mirror.local:5000/kudo/library/zookeeper");
/// ```
pub fn relocated(reference: &Reference, mirror_prefix: &str) -> String {
    let prefix = mirror_prefix.trim_start_matches("oci://").trim_matches('/');
    if prefix.is_empty() {
        reference.repository().to_string()
    } else {
        format!("{prefix}/{}", reference.repository())
    }
}

/// One value of one parameter's domain, set on top of the given values.
#[derive(Debug, Clone, PartialEq)]
pub struct Setting {
    /// The parameter's pointer (`/backup/enabled`).
    pub pointer: String,
    /// The value, as its domain gives it.
    pub value: Value,
}

impl Setting {
    /// The value as `-p` takes it (`true`, `"INFO"`).
    pub fn text(&self) -> String {
        self.value.to_string()
    }
}

/// Where a package uses an image.
#[derive(Debug, Clone, PartialEq)]
pub struct Site {
    /// The plan.
    pub plan: String,
    /// The phase.
    pub phase: String,
    /// The step.
    pub step: String,
    /// The task.
    pub task: String,
    /// The template, under `templates/`.
    pub template: String,
    /// The object.
    pub object: ObjectRef,
    /// The field's JSON pointer in the object.
    pub pointer: String,
    /// The domain value it was first found with ([`ListOptions::all_values`]); `None` when
    /// the given values use it.
    pub setting: Option<Setting>,
}

impl Site {
    /// What orders sites and tells two apart: everything but the setting.
    fn place(&self) -> (&str, &str, &str, &str, &str, &ObjectRef, &str) {
        (
            &self.plan,
            &self.phase,
            &self.step,
            &self.task,
            &self.template,
            &self.object,
            &self.pointer,
        )
    }
}

/// One image a package uses, and everywhere it does.
#[derive(Debug, Clone)]
pub struct Image {
    /// The reference, as the templates write it (`zookeeper:3.6.2`).
    pub image: String,
    /// The reference parsed (`docker.io/library/zookeeper:3.6.2`: its registry, repository, tag
    /// and digest).
    pub reference: Reference,
    /// Where it is used, sorted; each place once.
    pub sites: Vec<Site>,
}

/// A KudoOperator task: another package, installed as a child Instance, whose images [`list`]
/// does not list (it does not fetch the package).
#[derive(Debug, Clone, PartialEq)]
pub struct DependencyTask {
    /// The task.
    pub task: String,
    /// The plans that run it, in the operator's order.
    pub plans: Vec<String>,
    /// What it names: the package (a path, or a name in a repository:
    /// [`KudoOperatorTask::is_path`]) and its versions.
    pub spec: KudoOperatorTask,
}

/// Where a parameter's finite domain comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DomainKind {
    /// Its schema's `enum`.
    Enum,
    /// Its schema's `type: boolean`.
    Boolean,
    /// A Toggle task names it.
    Toggle,
}

/// A parameter and the values of its finite domain.
#[derive(Debug, Clone, PartialEq)]
pub struct Domain {
    /// The parameter's pointer.
    pub pointer: String,
    /// The values, in the schema's order (`true` before `false`).
    pub values: Vec<Value>,
    /// Where they come from.
    pub kind: DomainKind,
}

/// The finite domains of a package's parameters ([`domains`]).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Domains {
    /// Those the walk sets, in the schema's order, then the Toggle tasks' in the operator's.
    pub walked: Vec<Domain>,
    /// The pointers of the parameters with a finite domain under an array item: not walked.
    pub not_walked: Vec<String>,
}

impl Domains {
    /// The renders the walk takes: the given values once, then one per value.
    pub fn renders(&self) -> usize {
        1 + self.walked.iter().map(|d| d.values.len()).sum::<usize>()
    }
}

/// The finite domains of `pkg`'s parameters (the module docs say which).
pub fn domains(pkg: &Package) -> Domains {
    let schema = pkg.schema();
    let mut out = Domains::default();
    let mut add = |p: String, values: Vec<Value>, kind: DomainKind| {
        let Ok(tokens) = pointer::tokens(&p) else {
            return;
        };
        let seen = out.walked.iter().any(|d| d.pointer == p) || out.not_walked.contains(&p);
        if seen {
            return;
        }
        let path = schema.path(&tokens);
        let through_array = tokens.iter().enumerate().any(|(i, t)| {
            path.get(i)
                .is_some_and(|n| schema.is_array(n) && t.parse::<usize>().is_ok())
        });
        if through_array {
            out.not_walked.push(p);
        } else {
            out.walked.push(Domain {
                pointer: p,
                values,
                kind,
            });
        }
    };
    let both = || vec![Value::Bool(true), Value::Bool(false)];
    for p in schema.parameter_pointers() {
        let Some(node) = pointer::tokens(&p).ok().and_then(|t| schema.node_at(&t)) else {
            continue;
        };
        if let Some(Value::Array(values)) = node.get("enum") {
            add(p, values.clone(), DomainKind::Enum);
        } else if schema.types(node).contains(&"boolean") {
            add(p, both(), DomainKind::Boolean);
        }
    }
    for task in &pkg.operator().tasks {
        if task.kind != TaskKind::Toggle {
            continue;
        }
        if let Some(name) = task.parameter.as_deref() {
            add(toggle_pointer(name), both(), DomainKind::Toggle);
        }
    }
    out
}

/// The pointer of a Toggle task's `parameter`, as [`step::toggle_enabled`] reads it: a name, or
/// a pointer with or without its leading `/`.
fn toggle_pointer(name: &str) -> String {
    match name {
        n if n.starts_with('/') => n.to_string(),
        n if n.contains('/') => format!("/{n}"),
        n => pointer::push("", n),
    }
}

/// What became of one domain value.
#[derive(Debug, Clone, PartialEq)]
pub enum Tested {
    /// Rendered.
    Rendered,
    /// The values it gives are the given ones: rendered already.
    Given,
    /// The schema refuses it with the given values: not rendered (no Instance can have it).
    Refused(Vec<Diagnostic>),
}

/// One domain value tried.
#[derive(Debug, Clone, PartialEq)]
pub struct Tried {
    /// The parameter and its value.
    pub setting: Setting,
    /// What became of it.
    pub outcome: Tested,
}

/// What the walk of the domains tried ([`ListOptions::all_values`]).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Walk {
    /// Each value, in the order of [`domains`].
    pub tried: Vec<Tried>,
    /// The parameters with a finite domain under an array item: not walked.
    pub not_walked: Vec<String>,
}

/// The images of a package ([`list`]).
#[derive(Debug, Clone)]
pub struct Images {
    /// Each image once, sorted by its reference as written.
    pub images: Vec<Image>,
    /// The KudoOperator tasks the plans run, each once, in the order the plans run them:
    /// packages whose images are not listed.
    pub dependencies: Vec<DependencyTask>,
    /// What the walk tried, when asked for.
    pub walk: Option<Walk>,
}

/// How [`list`] renders.
#[derive(Debug, Clone)]
pub struct ListOptions {
    /// The Instance's name (`Name` in templates).
    pub instance: String,
    /// Its namespace (`Namespace`).
    pub namespace: String,
    /// Also walk each parameter's finite domain (the module docs).
    pub all_values: bool,
}

impl Default for ListOptions {
    fn default() -> Self {
        let r = RenderOptions::default();
        ListOptions {
            instance: r.instance,
            namespace: r.namespace,
            all_values: false,
        }
    }
}

/// The templates that do not render with one set of values.
#[derive(Debug, Clone, PartialEq)]
pub struct RenderFailure {
    /// The domain value set on top of the given values; `None` for the given values alone.
    pub setting: Option<Setting>,
    /// Every problem, as rendering reports it (the template, file:line).
    pub diags: Vec<Diagnostic>,
}

/// Why an image field holds no valid reference.
#[derive(Debug, thiserror::Error)]
pub enum ReferenceProblem {
    /// The field holds something else than a string.
    #[error("is not a string")]
    NotText,
    /// The string is not a reference (the OCI distribution spec's grammar).
    #[error("is not an image reference: {0}")]
    Parse(#[from] ParseError),
}

/// An image that is no valid reference, and every field that holds it.
#[derive(Debug, thiserror::Error)]
#[error("image `{image}` {problem}; in {}", places(.sites))]
pub struct BadReference {
    /// The fields' value as written (its JSON text when it is not a string).
    pub image: String,
    /// Where, sorted.
    pub sites: Vec<Site>,
    /// What is wrong.
    pub problem: ReferenceProblem,
}

fn places(sites: &[Site]) -> String {
    let place = |s: &Site| {
        format!(
            "{} `{}` at {} (plan {}, task {}, templates/{})",
            s.object.kind, s.object.name, s.pointer, s.plan, s.task, s.template
        )
    };
    sites.iter().map(place).collect::<Vec<_>>().join("; ")
}

/// Why [`list`] gives no list.
#[derive(Debug, thiserror::Error)]
pub enum ImagesError {
    /// Templates do not render: with the given values (the one failure, then nothing else is
    /// tried), or with domain values (each that fails).
    #[error("the package does not render ({} failing render(s))", .0.len())]
    Render(Vec<RenderFailure>),
    /// Images that are no valid reference, every one of them.
    #[error("{} image(s) are not valid references:{}", .0.len(), lines(.0))]
    References(Vec<BadReference>),
    /// The walk would take more renders than [`MAX_RENDERS`].
    #[error(
        "walking every value of the parameters' finite domains takes {needed} renders, more than \
         the {max} kudo makes (the largest domain: {largest}, {largest_values} values)",
        max = MAX_RENDERS
    )]
    TooManyRenders {
        /// The renders it would take.
        needed: usize,
        /// The parameter with the most values.
        largest: String,
        /// How many.
        largest_values: usize,
    },
}

fn lines(bad: &[BadReference]) -> String {
    bad.iter().map(|b| format!("\n  {b}")).collect()
}

/// The images of the package `prepared` for the effective values `values` (and, with
/// [`ListOptions::all_values`], for each value of its finite domains): the module docs say
/// which are found. Every failing render, every invalid reference is reported.
pub fn list(
    prepared: &Prepared<'_>,
    values: &Value,
    opts: &ListOptions,
) -> Result<Images, ImagesError> {
    let domains = opts.all_values.then(|| domains(prepared.package()));
    if let Some(d) = &domains
        && d.renders() > MAX_RENDERS
    {
        let largest = d.walked.iter().max_by_key(|d| d.values.len());
        return Err(ImagesError::TooManyRenders {
            needed: d.renders(),
            largest: largest.map(|d| d.pointer.clone()).unwrap_or_default(),
            largest_values: largest.map_or(0, |d| d.values.len()),
        });
    }
    let mut found = Found::new(prepared, opts);
    found.render(values, None).map_err(|diags| {
        ImagesError::Render(vec![RenderFailure {
            setting: None,
            diags,
        }])
    })?;
    let walk = match domains {
        Some(d) => Some(found.walk(values, d)?),
        None => None,
    };
    found.finish(walk)
}

/// What the renders found so far.
struct Found<'a> {
    prepared: &'a Prepared<'a>,
    opts: &'a ListOptions,
    /// Each image as written, and its sites.
    images: BTreeMap<String, Vec<Site>>,
    /// Fields that hold no string: the JSON text of each value, and its sites.
    not_text: BTreeMap<String, Vec<Site>>,
    dependencies: Vec<DependencyTask>,
}

impl<'a> Found<'a> {
    fn new(prepared: &'a Prepared<'a>, opts: &'a ListOptions) -> Self {
        Found {
            prepared,
            opts,
            images: BTreeMap::new(),
            not_text: BTreeMap::new(),
            dependencies: Vec::new(),
        }
    }

    /// Renders every plan and every Pipe Pod with `values`, and records what they use; every
    /// problem on the way.
    fn render(&mut self, values: &Value, setting: Option<&Setting>) -> Result<(), Vec<Diagnostic>> {
        let op = self.prepared.package().operator();
        let mut diags = Vec::new();
        for (plan, p) in &op.plans {
            let opts = RenderOptions {
                instance: self.opts.instance.clone(),
                namespace: self.opts.namespace.clone(),
                plan: plan.clone(),
                images: Default::default(),
            };
            match self.prepared.render_plan(values, &opts) {
                Ok(rendered) => {
                    for r in rendered {
                        let at = Use {
                            phase: r.phase,
                            step: r.step,
                            task: r.task,
                            template: r.template,
                        };
                        for object in &r.objects {
                            self.record(plan, &at, object, setting);
                        }
                    }
                }
                Err(d) => diags.extend(d),
            }
            for phase in &p.phases {
                for s in &phase.steps {
                    // a task the operator does not define: render_plan reported it
                    for StepTask { task, action } in step::tasks(op, s, values).flatten() {
                        let at = |template: &str| Use {
                            phase: phase.name.clone(),
                            step: s.name.clone(),
                            task: task.name.clone(),
                            template: template.to_string(),
                        };
                        let done = match action {
                            Action::Pipe => PipeTask::of(task)
                                .map_err(|e| vec![operator_diag(e.to_string())])
                                .and_then(|spec| {
                                    self.pipe_pod(values, &opts, at(&spec.pod), setting)
                                }),
                            Action::KudoOperator => KudoOperatorTask::of(task)
                                .map(|spec| self.depends(plan, &task.name, spec))
                                .map_err(|e| vec![operator_diag(e.to_string())]),
                            _ => Ok(()),
                        };
                        if let Err(d) = done {
                            diags.extend(d);
                        }
                    }
                }
            }
        }
        if diags.is_empty() {
            Ok(())
        } else {
            diags.dedup();
            Err(diags)
        }
    }

    /// Renders the Pod of the Pipe task at `at` and records its images, as kudo runs the Pod:
    /// named, with its `waiter` container ([`pipe::pipe_pod`]).
    fn pipe_pod(
        &mut self,
        values: &Value,
        opts: &RenderOptions,
        at: Use,
        setting: Option<&Setting>,
    ) -> Result<(), Vec<Diagnostic>> {
        let rendered = self.prepared.render_pipe_pod(values, opts, at.clone())?;
        let name = pipe::artifact_name(&[
            &opts.instance,
            &opts.plan,
            &at.phase,
            &at.step,
            &at.task,
            "pipepod",
        ]);
        for object in rendered.objects {
            // a Pod the manager would refuse to run (not a Pod, no shared volume) as rendered
            let run = match object.get("kind") {
                Some(kind) if kind == "Pod" => pipe::pipe_pod(object.clone(), &name).ok(),
                _ => None,
            };
            self.record(&opts.plan, &at, run.as_ref().unwrap_or(&object), setting);
        }
        Ok(())
    }

    /// Records the image fields of `object`, applied by `at` of `plan`.
    fn record(&mut self, plan: &str, at: &Use, object: &Value, setting: Option<&Setting>) {
        let fields = image_fields(object);
        if fields.is_empty() {
            return;
        }
        let of = ObjectRef::of(object);
        for (pointer, image) in fields {
            let site = Site {
                plan: plan.to_string(),
                phase: at.phase.clone(),
                step: at.step.clone(),
                task: at.task.clone(),
                template: at.template.clone(),
                object: of.clone(),
                pointer,
                setting: setting.cloned(),
            };
            let sites = match image.as_str() {
                Some(text) => self.images.entry(text.to_string()).or_default(),
                None => self.not_text.entry(image.to_string()).or_default(),
            };
            if !sites.iter().any(|s| s.place() == site.place()) {
                sites.push(site);
            }
        }
    }

    /// Records that `plan` runs the KudoOperator task `task`.
    fn depends(&mut self, plan: &str, task: &str, spec: KudoOperatorTask) {
        match self.dependencies.iter_mut().find(|d| d.task == task) {
            Some(d) if d.plans.iter().any(|p| p == plan) => {}
            Some(d) => d.plans.push(plan.to_string()),
            None => self.dependencies.push(DependencyTask {
                task: task.to_string(),
                plans: vec![plan.to_string()],
                spec,
            }),
        }
    }

    /// Renders with each value of `domains` set on top of `values`.
    fn walk(&mut self, values: &Value, domains: Domains) -> Result<Walk, ImagesError> {
        let pkg = self.prepared.package();
        let mut walk = Walk {
            tried: Vec::new(),
            not_walked: domains.not_walked,
        };
        let mut failures = Vec::new();
        for d in domains.walked {
            // `domains` keeps only pointers that parse
            let Ok(tokens) = pointer::tokens(&d.pointer) else {
                continue;
            };
            for value in d.values {
                let setting = Setting {
                    pointer: d.pointer.clone(),
                    value,
                };
                // what `-p POINTER=VALUE` would be, set on top of the given values
                let set = Override {
                    index: 1,
                    pointer: d.pointer.clone(),
                    tokens: tokens.clone(),
                    value: setting.text(),
                };
                let inputs = Inputs {
                    current: Some(values.clone()),
                    files: &[],
                    overrides: std::slice::from_ref(&set),
                };
                let outcome = match pkg.resolve(&inputs) {
                    Err(refused) => Tested::Refused(refused),
                    Ok((set, _)) if set.value() == values => Tested::Given,
                    Ok((set, _)) => {
                        if let Err(diags) = self.render(set.value(), Some(&setting)) {
                            failures.push(RenderFailure {
                                setting: Some(setting.clone()),
                                diags,
                            });
                        }
                        Tested::Rendered
                    }
                };
                walk.tried.push(Tried { setting, outcome });
            }
        }
        if failures.is_empty() {
            Ok(walk)
        } else {
            Err(ImagesError::Render(failures))
        }
    }

    /// The list, once every reference is parsed.
    fn finish(self, walk: Option<Walk>) -> Result<Images, ImagesError> {
        let sorted = |mut sites: Vec<Site>| {
            sites.sort_by(|a, b| a.place().cmp(&b.place()));
            sites
        };
        let mut bad: Vec<BadReference> = self
            .not_text
            .into_iter()
            .map(|(image, sites)| BadReference {
                image,
                sites: sorted(sites),
                problem: ReferenceProblem::NotText,
            })
            .collect();
        let mut images = Vec::new();
        for (image, sites) in self.images {
            let sites = sorted(sites);
            match Reference::try_from(image.as_str()) {
                Ok(reference) => images.push(Image {
                    image,
                    reference,
                    sites,
                }),
                Err(e) => bad.push(BadReference {
                    image,
                    sites,
                    problem: ReferenceProblem::Parse(e),
                }),
            }
        }
        if !bad.is_empty() {
            return Err(ImagesError::References(bad));
        }
        Ok(Images {
            images,
            dependencies: self.dependencies,
            walk,
        })
    }
}

/// A problem of operator.yaml met while rendering (a malformed Pipe or KudoOperator task).
fn operator_diag(message: String) -> Diagnostic {
    Diagnostic::error(Code::Operator, "", message)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use serde_json::json;

    use super::*;

    /// The relocation rule: the repository path below the prefix, whatever the registry.
    #[test]
    fn an_image_is_relocated_to_its_repository_path_below_the_prefix() {
        let cases: &[(&str, &str, &str)] = &[
            ("zookeeper:3.6.2", "m:5000/p", "m:5000/p/library/zookeeper"),
            ("docker.io/library/zookeeper", "", "library/zookeeper"),
            ("127.0.0.1:5000/acme/app:1", "oci://m/p/", "m/p/acme/app"),
            (
                "127.0.0.1:5000/acme/app@sha256:0000000000000000000000000000000000000000000000000000000000000000",
                "m",
                "m/acme/app",
            ),
            (
                "quay.io/prometheus/node-exporter:v0.18.1",
                "/",
                "prometheus/node-exporter",
            ),
            (
                "mesosphere/kafka:2.5.1-1.3.1",
                "m/p",
                "m/p/mesosphere/kafka",
            ),
        ];
        for (image, prefix, want) in cases {
            let r: Reference = image.parse().unwrap();
            assert_eq!(
                relocated(&r, prefix),
                *want,
                "image {image}, prefix {prefix}"
            );
        }
    }

    fn container(name: &str, image: &str) -> Value {
        json!({"name": name, "image": image})
    }

    /// A pod spec running `app:1` in a container and `init:1` in an init container.
    fn pod_spec() -> Value {
        json!({
            "containers": [container("app", "app:1")],
            "initContainers": [container("init", "init:1")],
        })
    }

    #[test]
    fn every_kind_with_a_pod_template_gives_its_images_and_their_fields() {
        let template = json!({"spec": pod_spec()});
        // (apiVersion, kind, the object's spec-bearing fields, where its pod spec is)
        let cases: &[(&str, &str, Value, Option<&str>)] = &[
            ("v1", "Pod", json!({"spec": pod_spec()}), Some("/spec")),
            (
                "v1",
                "ReplicationController",
                json!({"spec": {"template": template}}),
                Some("/spec/template/spec"),
            ),
            (
                "v1",
                "PodTemplate",
                json!({"template": template}),
                Some("/template/spec"),
            ),
            (
                "apps/v1",
                "Deployment",
                json!({"spec": {"template": template}}),
                Some("/spec/template/spec"),
            ),
            (
                "apps/v1",
                "StatefulSet",
                json!({"spec": {"template": template}}),
                Some("/spec/template/spec"),
            ),
            (
                "apps/v1",
                "DaemonSet",
                json!({"spec": {"template": template}}),
                Some("/spec/template/spec"),
            ),
            (
                "apps/v1",
                "ReplicaSet",
                json!({"spec": {"template": template}}),
                Some("/spec/template/spec"),
            ),
            (
                "extensions/v1beta1",
                "Deployment",
                json!({"spec": {"template": template}}),
                Some("/spec/template/spec"),
            ),
            (
                "batch/v1",
                "Job",
                json!({"spec": {"template": template}}),
                Some("/spec/template/spec"),
            ),
            (
                "batch/v1",
                "CronJob",
                json!({"spec": {"jobTemplate": {"spec": {"template": template}}}}),
                Some("/spec/jobTemplate/spec/template/spec"),
            ),
            (
                "batch/v1beta1",
                "CronJob",
                json!({"spec": {"jobTemplate": {"spec": {"template": template}}}}),
                Some("/spec/jobTemplate/spec/template/spec"),
            ),
            // not guessed at: another group's kind, a custom resource, a List
            (
                "batch.volcano.sh/v1alpha1",
                "Job",
                json!({"spec": {"template": template}}),
                None,
            ),
            (
                "example.com/v1",
                "Database",
                json!({"spec": {"template": template}}),
                None,
            ),
            (
                "v1",
                "List",
                json!({"items": [{"apiVersion": "v1", "kind": "Pod", "spec": pod_spec()}]}),
                None,
            ),
            ("v1", "ConfigMap", json!({"data": {"image": "x:1"}}), None),
        ];
        for (api_version, kind, fields, at) in cases {
            let mut object = json!({
                "apiVersion": api_version,
                "kind": kind,
                "metadata": {"name": "o", "namespace": "ns"},
            });
            for (k, v) in fields.as_object().unwrap() {
                object[k] = v.clone();
            }
            let got: Vec<(String, String)> = uses(&object)
                .into_iter()
                .map(|u| (u.image, u.pointer))
                .collect();
            let want: Vec<(String, String)> = match at {
                Some(at) => vec![
                    ("app:1".into(), format!("{at}/containers/0/image")),
                    ("init:1".into(), format!("{at}/initContainers/0/image")),
                ],
                None => Vec::new(),
            };
            assert_eq!(got, want, "{api_version} {kind}");
        }
    }

    #[test]
    fn a_use_names_its_object_and_every_container_list_in_order() {
        let pod = json!({
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"generateName": "job-"},
            "spec": {
                "ephemeralContainers": [container("debug", "debug:1")],
                "containers": [container("a", "a:1"), {"name": "no-image"}, container("b", "b:1")],
                "initContainers": [{"name": "number", "image": 5}],
            },
        });
        let got = uses(&pod);
        let object = ObjectRef {
            api_version: "v1".into(),
            kind: "Pod".into(),
            namespace: None,
            name: "job-".into(),
        };
        let want: Vec<ImageUse> = [
            ("a:1", "/spec/containers/0/image"),
            ("b:1", "/spec/containers/2/image"),
            ("debug:1", "/spec/ephemeralContainers/0/image"),
        ]
        .into_iter()
        .map(|(image, pointer)| ImageUse {
            image: image.into(),
            object: object.clone(),
            pointer: pointer.into(),
        })
        .collect();
        // the number is no image use (list reports it)
        assert_eq!(got, want);
    }

    #[test]
    fn rewrite_replaces_the_mapped_images_at_their_fields_and_nothing_else() {
        let mut job = json!({
            "apiVersion": "batch/v1",
            "kind": "CronJob",
            "metadata": {"name": "backup"},
            "spec": {"jobTemplate": {"spec": {"template": {"spec": {
                "containers": [container("a", "app:1"), container("b", "other:2")],
                "initContainers": [container("init", "app:1")],
            }}}}},
            "data": {"image": "app:1"},
        });
        let digest = "sha256:".to_string() + &"a".repeat(64);
        let to = BTreeMap::from([
            (
                "app:1".to_string(),
                format!("mirror.example.com/app:1@{digest}"),
            ),
            ("absent:1".to_string(), "never:used".to_string()),
        ]);
        let replaced: Vec<String> = rewrite(&mut job, &to)
            .into_iter()
            .map(|u| format!("{} {}", u.image, u.pointer))
            .collect();
        let at = "/spec/jobTemplate/spec/template/spec";
        assert_eq!(
            replaced,
            [
                format!("app:1 {at}/containers/0/image"),
                format!("app:1 {at}/initContainers/0/image"),
            ]
        );
        let now: Vec<String> = uses(&job).into_iter().map(|u| u.image).collect();
        let pinned = format!("mirror.example.com/app:1@{digest}");
        assert_eq!(now, [pinned.as_str(), "other:2", pinned.as_str()]);
        // a field outside a pod spec is not an image field
        assert_eq!(job["data"]["image"], "app:1");
        // rewriting again with the same map changes nothing more
        assert!(rewrite(&mut job, &to).is_empty());
    }

    /// A package: `operator.yaml` and the other files (name, text).
    fn package(operator: &str, files: &[(&str, &str)]) -> Package {
        let mut all = BTreeMap::new();
        all.insert("operator.yaml".to_string(), operator.as_bytes().to_vec());
        for (name, text) in files {
            all.insert(name.to_string(), text.as_bytes().to_vec());
        }
        Package::from_files(Path::new("pkg"), all).unwrap()
    }

    /// A Handlebars package (v1beta2 parameters) whose `deploy` plan applies a Deployment
    /// running `app:{{Params.version}}` (`version` an enum of 1, 2 and 3, default 1), a Job
    /// running `tools:1` when `debug` (a boolean, default false) is on, and a Toggle task
    /// (`metrics`, a string parameter) applying a Pod running `exporter:1`; a Pipe task's Pod
    /// runs `gen:1`; a KudoOperator task installs `./child`.
    fn walked_package() -> Package {
        let operator = "apiVersion: kudo.dev/v1beta1\nname: w\noperatorVersion: 0.1.0\n\
            tasks:\n\
            \x20 - {name: app, kind: Apply, spec: {resources: [app.yaml, tools.yaml]}}\n\
            \x20 - {name: metrics, kind: Toggle, spec: {parameter: metrics, resources: [exporter.yaml]}}\n\
            \x20 - {name: gen, kind: Pipe, spec: {pod: gen.yaml, pipe: [{file: /out/a, kind: ConfigMap, key: a}]}}\n\
            \x20 - {name: child, kind: KudoOperator, spec: {package: ./child, operatorVersion: 0.2.0}}\n\
            plans:\n\
            \x20 deploy: {phases: [{name: p, steps: [{name: s, tasks: [app, metrics, gen, child]}]}]}\n\
            \x20 update: {phases: [{name: p, steps: [{name: s, tasks: [app]}]}]}\n";
        let params = "apiVersion: kudo.dev/v1beta2\ntype: object\nproperties:\n\
            \x20 version: {type: integer, enum: [1, 2, 3], default: 1}\n\
            \x20 debug: {type: boolean, default: false}\n\
            \x20 metrics: {type: string, default: \"false\"}\n\
            \x20 pools: {type: array, default: [], items: {type: object, properties: {big: {type: boolean}}}}\n";
        let app = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: '{{Name}}-app'}\n\
            spec: {template: {spec: {containers: [{name: app, image: 'app:{{Params.version}}'}]}}}\n";
        let tools = "{{#if Params.debug}}apiVersion: batch/v1\nkind: Job\nmetadata: {name: tools}\n\
            spec: {template: {spec: {containers: [{name: t, image: 'tools:1'}]}}}\n{{/if}}";
        let exporter = "apiVersion: v1\nkind: Pod\nmetadata: {name: exporter}\n\
            spec: {containers: [{name: e, image: 'exporter:1'}]}\n";
        let gen_pod = "apiVersion: v1\nkind: Pod\nspec:\n  volumes: [{name: out, emptyDir: {}}]\n  \
            initContainers: [{name: gen, image: 'gen:1', volumeMounts: [{name: out, mountPath: /out}]}]\n";
        package(
            operator,
            &[
                ("params.yaml", params),
                ("templates/app.yaml", app),
                ("templates/tools.yaml", tools),
                ("templates/exporter.yaml", exporter),
                ("templates/gen.yaml", gen_pod),
            ],
        )
    }

    fn defaults(pkg: &Package) -> Value {
        let inputs = Inputs::default();
        pkg.resolve(&inputs).unwrap().0.into_value()
    }

    /// Each image with its sites as `plan/task Kind/name pointer [setting]`.
    fn listed(images: &Images) -> Vec<(String, Vec<String>)> {
        images
            .images
            .iter()
            .map(|i| {
                let sites = i
                    .sites
                    .iter()
                    .map(|s| {
                        let with = s
                            .setting
                            .as_ref()
                            .map(|w| format!(" [{}={}]", w.pointer, w.text()))
                            .unwrap_or_default();
                        format!(
                            "{}/{} {}/{} {}{with}",
                            s.plan, s.task, s.object.kind, s.object.name, s.pointer
                        )
                    })
                    .collect();
                (i.image.clone(), sites)
            })
            .collect()
    }

    fn entry(image: &str, sites: &[&str]) -> (String, Vec<String>) {
        (
            image.to_string(),
            sites.iter().map(|s| s.to_string()).collect(),
        )
    }

    #[test]
    fn list_renders_every_plan_and_pipe_pod_and_names_the_dependencies() {
        let pkg = walked_package();
        let prepared = Prepared::new(&pkg);
        let got = list(&prepared, &defaults(&pkg), &ListOptions::default()).unwrap();
        let spec = "/spec/template/spec/containers/0/image";
        assert_eq!(
            listed(&got),
            [
                entry(
                    "app:1",
                    &[
                        &format!("deploy/app Deployment/instance-app {spec}"),
                        &format!("update/app Deployment/instance-app {spec}"),
                    ]
                ),
                // the waiter container kudo adds to the Pipe Pod
                entry(
                    "busybox",
                    &["deploy/gen Pod/instance.deploy.p.s.gen.pipepod /spec/containers/0/image"]
                ),
                entry(
                    "gen:1",
                    &[
                        "deploy/gen Pod/instance.deploy.p.s.gen.pipepod /spec/initContainers/0/image"
                    ]
                ),
            ]
        );
        assert_eq!(got.images[0].reference.whole(), "docker.io/library/app:1");
        let [dep] = &got.dependencies[..] else {
            panic!("{:?}", got.dependencies)
        };
        assert_eq!(
            (dep.task.as_str(), dep.plans.as_slice()),
            ("child", &["deploy".to_string()][..])
        );
        assert_eq!(dep.spec.package, "./child");
        assert_eq!(dep.spec.operator_version.as_deref(), Some("0.2.0"));
        assert!(got.walk.is_none());
    }

    #[test]
    fn the_walk_sets_one_parameter_at_a_time_to_each_value_of_its_domain() {
        let pkg = walked_package();
        let d = domains(&pkg);
        let walked: Vec<(&str, &Vec<Value>, DomainKind)> = d
            .walked
            .iter()
            .map(|d| (d.pointer.as_str(), &d.values, d.kind))
            .collect();
        let both = vec![json!(true), json!(false)];
        assert_eq!(
            walked,
            [
                (
                    "/version",
                    &vec![json!(1), json!(2), json!(3)],
                    DomainKind::Enum
                ),
                ("/debug", &both, DomainKind::Boolean),
                ("/metrics", &both, DomainKind::Toggle),
            ]
        );
        assert_eq!(d.not_walked, ["/pools/0/big"]);
        assert_eq!(d.renders(), 8);

        let prepared = Prepared::new(&pkg);
        let opts = ListOptions {
            all_values: true,
            ..ListOptions::default()
        };
        let got = list(&prepared, &defaults(&pkg), &opts).unwrap();
        let images: Vec<&str> = got.images.iter().map(|i| i.image.as_str()).collect();
        // app:2 and app:3 by the enum, tools:1 by the boolean, exporter:1 by the Toggle
        assert_eq!(
            images,
            [
                "app:1",
                "app:2",
                "app:3",
                "busybox",
                "exporter:1",
                "gen:1",
                "tools:1"
            ]
        );
        let by = |image: &str| -> Vec<String> {
            listed(&got)
                .into_iter()
                .find(|(i, _)| i == image)
                .unwrap()
                .1
        };
        let tools = "Job/tools /spec/template/spec/containers/0/image [/debug=true]";
        assert_eq!(
            by("tools:1"),
            [format!("deploy/app {tools}"), format!("update/app {tools}")]
        );
        assert_eq!(
            by("exporter:1"),
            ["deploy/metrics Pod/exporter /spec/containers/0/image [/metrics=true]"]
        );
        // found with the given values first: no setting
        assert!(
            by("app:1").iter().all(|s| !s.contains('[')),
            "{:?}",
            by("app:1")
        );
        let walk = got.walk.unwrap();
        let tried: Vec<(String, &str)> = walk
            .tried
            .iter()
            .map(|t| {
                let outcome = match t.outcome {
                    Tested::Rendered => "rendered",
                    Tested::Given => "given",
                    Tested::Refused(_) => "refused",
                };
                (
                    format!("{}={}", t.setting.pointer, t.setting.text()),
                    outcome,
                )
            })
            .collect();
        let want: Vec<(String, &str)> = [
            ("/version=1", "given"),
            ("/version=2", "rendered"),
            ("/version=3", "rendered"),
            ("/debug=true", "rendered"),
            ("/debug=false", "given"),
            ("/metrics=true", "rendered"),
            ("/metrics=false", "given"),
        ]
        .into_iter()
        .map(|(s, o)| (s.to_string(), o))
        .collect();
        assert_eq!(tried, want);
        assert_eq!(walk.not_walked, ["/pools/0/big"]);
    }

    #[test]
    fn a_v1beta1_parameter_has_a_domain_by_its_enum_or_its_boolean_type_only() {
        let operator = "apiVersion: kudo.dev/v1beta1\nname: v\noperatorVersion: 0.1.0\n\
            tasks:\n\
            \x20 - {name: app, kind: Apply, spec: {resources: [app.yaml]}}\n\
            \x20 - {name: extra, kind: Toggle, spec: {parameter: EXTRA, resources: [app.yaml]}}\n\
            plans: {deploy: {phases: [{name: p, steps: [{name: s, tasks: [app]}]}]}}\n";
        let params = "apiVersion: kudo.dev/v1beta1\nparameters:\n\
            \x20 - {name: SIZE, type: integer, enum: [\"1\", \"3\"], default: \"1\"}\n\
            \x20 - {name: TLS, type: boolean, default: \"false\"}\n\
            \x20 - {name: METRICS, default: \"true\"}\n\
            \x20 - {name: EXTRA, default: \"false\"}\n";
        let app = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n\
            spec: {containers: [{name: c, image: 'a:1'}]}\n";
        let pkg = package(
            operator,
            &[("params.yaml", params), ("templates/app.yaml", app)],
        );
        let found = domains(&pkg);
        let got: Vec<(&str, &Vec<Value>, DomainKind)> = found
            .walked
            .iter()
            .map(|d| (d.pointer.as_str(), &d.values, d.kind))
            .collect();
        let both = vec![json!(true), json!(false)];
        // the enum typed by the parameter's type; METRICS, a string, has no finite domain
        assert_eq!(
            got,
            [
                ("/SIZE", &vec![json!(1), json!(3)], DomainKind::Enum),
                ("/TLS", &both, DomainKind::Boolean),
                ("/EXTRA", &both, DomainKind::Toggle),
            ]
        );
    }

    #[test]
    fn a_domain_value_the_schema_refuses_with_the_others_is_not_rendered() {
        // `mode: b` needs `size` under 10 (if/then); the given size is 20
        let operator = "apiVersion: kudo.dev/v1beta1\nname: r\noperatorVersion: 0.1.0\n\
            tasks: [{name: app, kind: Apply, spec: {resources: [app.yaml]}}]\n\
            plans: {deploy: {phases: [{name: p, steps: [{name: s, tasks: [app]}]}]}}\n";
        let params = "apiVersion: kudo.dev/v1beta2\ntype: object\nproperties:\n\
            \x20 mode: {type: string, enum: [a, b], default: a}\n\
            \x20 size: {type: integer, default: 20}\n\
            if: {properties: {mode: {const: b}}}\nthen: {properties: {size: {maximum: 10}}}\n";
        let app = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n\
            spec: {containers: [{name: c, image: 'app-{{Params.mode}}:1'}]}\n";
        let pkg = package(
            operator,
            &[("params.yaml", params), ("templates/app.yaml", app)],
        );
        let opts = ListOptions {
            all_values: true,
            ..ListOptions::default()
        };
        let got = list(&Prepared::new(&pkg), &defaults(&pkg), &opts).unwrap();
        let images: Vec<&str> = got.images.iter().map(|i| i.image.as_str()).collect();
        assert_eq!(images, ["app-a:1"]);
        let walk = got.walk.unwrap();
        let Tested::Refused(diags) = &walk.tried[1].outcome else {
            panic!("{:?}", walk.tried)
        };
        assert_eq!(walk.tried[1].setting.text(), "\"b\"");
        assert!(
            diags.iter().any(|d| d.code == Code::OutOfRange),
            "{diags:?}"
        );
    }

    #[test]
    fn the_walk_is_bounded_and_refused_whole_beyond_the_bound() {
        let operator = "apiVersion: kudo.dev/v1beta1\nname: b\noperatorVersion: 0.1.0\n\
            tasks: [{name: app, kind: Apply, spec: {resources: [app.yaml]}}]\n\
            plans: {deploy: {phases: [{name: p, steps: [{name: s, tasks: [app]}]}]}}\n";
        let app = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n\
            spec: {containers: [{name: c, image: 'app:{{Params.small}}'}]}\n";
        // the given values once, plus one render per value: (values of `big`, renders, allowed)
        let cases: &[(usize, usize, bool)] = &[
            (MAX_RENDERS - 3, MAX_RENDERS, true),
            (MAX_RENDERS - 2, MAX_RENDERS + 1, false),
        ];
        for &(big, renders, allowed) in cases {
            let values: Vec<String> = (0..big).map(|i| i.to_string()).collect();
            let params = format!(
                "apiVersion: kudo.dev/v1beta2\ntype: object\nproperties:\n\
                 \x20 small: {{type: integer, enum: [1, 2], default: 1}}\n\
                 \x20 big: {{type: integer, enum: [{}], default: 0}}\n",
                values.join(", ")
            );
            let pkg = package(
                operator,
                &[("params.yaml", &params), ("templates/app.yaml", app)],
            );
            assert_eq!(domains(&pkg).renders(), renders, "{big} values");
            let opts = ListOptions {
                all_values: true,
                ..ListOptions::default()
            };
            match list(&Prepared::new(&pkg), &defaults(&pkg), &opts) {
                Ok(images) => {
                    assert!(allowed, "{big} values: listed");
                    assert_eq!(images.images.len(), 2);
                }
                Err(ImagesError::TooManyRenders {
                    needed,
                    largest,
                    largest_values,
                }) => {
                    assert!(!allowed, "{big} values: refused");
                    assert_eq!(
                        (needed, largest.as_str(), largest_values),
                        (renders, "/big", big)
                    );
                }
                Err(e) => panic!("{big} values: {e}"),
            }
        }
    }

    #[test]
    fn fields_without_a_valid_reference_are_every_one_reported_where_they_are() {
        let operator = "apiVersion: kudo.dev/v1beta1\nname: x\noperatorVersion: 0.1.0\n\
            tasks: [{name: app, kind: Apply, spec: {resources: [app.yaml]}}]\n\
            plans: {deploy: {phases: [{name: p, steps: [{name: s, tasks: [app]}]}]}}\n";
        let params = "apiVersion: kudo.dev/v1beta2\ntype: object\nproperties: {}\n";
        let app = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  \
            - {name: a, image: 'Upper/Case:1'}\n  - {name: b, image: 5}\n  - {name: c, image: 'ok:1'}\n  \
            - {name: d, image: ''}\n";
        let pkg = package(
            operator,
            &[("params.yaml", params), ("templates/app.yaml", app)],
        );
        let err = list(
            &Prepared::new(&pkg),
            &defaults(&pkg),
            &ListOptions::default(),
        )
        .unwrap_err();
        let ImagesError::References(bad) = &err else {
            panic!("{err}")
        };
        let got: Vec<(&str, Vec<&str>, String)> = bad
            .iter()
            .map(|b| {
                let at = b.sites.iter().map(|s| s.pointer.as_str()).collect();
                (b.image.as_str(), at, b.problem.to_string())
            })
            .collect();
        let not_a_reference = |e: ParseError| format!("is not an image reference: {e}");
        assert_eq!(
            got,
            [
                (
                    "5",
                    vec!["/spec/containers/1/image"],
                    "is not a string".to_string()
                ),
                (
                    "",
                    vec!["/spec/containers/3/image"],
                    not_a_reference(ParseError::NameEmpty)
                ),
                (
                    "Upper/Case:1",
                    vec!["/spec/containers/0/image"],
                    not_a_reference(ParseError::ReferenceInvalidFormat)
                ),
            ]
        );
        assert_eq!(
            bad[0].to_string(),
            "image `5` is not a string; in Pod `p` at /spec/containers/1/image (plan deploy, \
             task app, templates/app.yaml)"
        );
    }

    #[test]
    fn a_template_that_does_not_render_is_reported_with_the_setting_that_broke_it() {
        let operator = "apiVersion: kudo.dev/v1beta1\nname: f\noperatorVersion: 0.1.0\n\
            tasks: [{name: app, kind: Apply, spec: {resources: [app.yaml]}}]\n\
            plans: {deploy: {phases: [{name: p, steps: [{name: s, tasks: [app]}]}]}}\n";
        let params = "apiVersion: kudo.dev/v1beta2\ntype: object\nproperties:\n\
            \x20 extra: {type: boolean, default: false}\n";
        let app = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n\
            spec: {containers: [{name: c, image: 'a:1'}]}\n\
            {{#if Params.extra}}{{Params.missing}}{{/if}}\n";
        let pkg = package(
            operator,
            &[("params.yaml", params), ("templates/app.yaml", app)],
        );
        let prepared = Prepared::new(&pkg);
        assert!(list(&prepared, &defaults(&pkg), &ListOptions::default()).is_ok());
        let opts = ListOptions {
            all_values: true,
            ..ListOptions::default()
        };
        let err = list(&prepared, &defaults(&pkg), &opts).unwrap_err();
        let ImagesError::Render(failures) = &err else {
            panic!("{err}")
        };
        let [failure] = &failures[..] else {
            panic!("{failures:?}")
        };
        assert_eq!(
            failure.setting,
            Some(Setting {
                pointer: "/extra".into(),
                value: json!(true)
            })
        );
        assert_eq!(failure.diags[0].code, Code::Template);
        assert!(
            failure.diags[0]
                .message
                .starts_with("template app.yaml does not render"),
            "{}",
            failure.diags[0].message
        );
    }
}
