//! An operator package on disk: `operator.yaml`, `params.yaml` and `templates/`, from a
//! directory or a `.tgz`.
//!
//! `operator.yaml` is read in both of KUDO's shapes: tasks as a list of
//! `{name, kind, spec: {resources, parameter}}` and the older map of `name: {resources: [...]}`;
//! `operatorVersion` or the legacy `version`. A missing `params.yaml` means no parameters.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use kudo_diag::diag::{Diagnostic, Location};
use kudo_diag::error::{Error, Result};
use kudo_diag::pointer;
use kudo_policy::params::{ParamSchema, Params};
use kudo_yaml::document::Document;

/// Largest package archive read, compressed or not (a package is text; this stops archive bombs).
pub const MAX_PACKAGE_BYTES: u64 = 64 * 1024 * 1024;

/// A task: what a plan step does.
#[derive(Debug, Clone, PartialEq)]
pub struct Task {
    /// Task name, referenced by plan steps.
    pub name: String,
    /// What kind of task it is.
    pub kind: TaskKind,
    /// Template files (under `templates/`) the task applies, deletes or toggles.
    pub resources: Vec<String>,
    /// For `Toggle`: the boolean parameter (a name, or a pointer like `backup/enabled`).
    pub parameter: Option<String>,
    /// The task's whole `spec`, as written.
    pub spec: Value,
}

/// The kind of a task: KUDO's (`pkg/engine/task`), written in `operator.yaml` as `kind: Apply`.
///
/// A kind KUDO does not know is kept as written ([`TaskKind::Other`]): `package verify`
/// reports it, and the manager refuses to run it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Deserialize, Serialize)]
#[serde(from = "String", into = "String")]
pub enum TaskKind {
    /// Applies its `resources`.
    Apply,
    /// Deletes the objects of its `resources`.
    Delete,
    /// Applies its `resources` when its boolean `parameter` is true, deletes them otherwise.
    Toggle,
    /// Runs a Pod and keeps the files it writes as ConfigMaps or Secrets ([`crate::pipe`]).
    Pipe,
    /// Installs a dependency as a child Instance ([`crate::dependency`]).
    KudoOperator,
    /// Does nothing.
    Dummy,
    /// A kind KUDO does not know, as written.
    Other(String),
}

impl TaskKind {
    /// The kinds KUDO knows, in the order messages list them.
    pub const KNOWN: [TaskKind; 6] = [
        TaskKind::Apply,
        TaskKind::Delete,
        TaskKind::Dummy,
        TaskKind::Pipe,
        TaskKind::Toggle,
        TaskKind::KudoOperator,
    ];

    /// The kind as `operator.yaml` writes it.
    pub fn as_str(&self) -> &str {
        match self {
            TaskKind::Apply => "Apply",
            TaskKind::Delete => "Delete",
            TaskKind::Toggle => "Toggle",
            TaskKind::Pipe => "Pipe",
            TaskKind::KudoOperator => "KudoOperator",
            TaskKind::Dummy => "Dummy",
            TaskKind::Other(kind) => kind,
        }
    }
}

impl From<&str> for TaskKind {
    fn from(kind: &str) -> TaskKind {
        TaskKind::KNOWN
            .into_iter()
            .find(|k| k.as_str() == kind)
            .unwrap_or_else(|| TaskKind::Other(kind.to_string()))
    }
}

impl From<String> for TaskKind {
    fn from(kind: String) -> TaskKind {
        TaskKind::from(kind.as_str())
    }
}

impl From<TaskKind> for String {
    fn from(kind: TaskKind) -> String {
        kind.as_str().to_string()
    }
}

impl std::fmt::Display for TaskKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A step of a phase.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Step {
    /// Step name.
    pub name: String,
    /// Task names run by this step.
    #[serde(default)]
    pub tasks: Vec<String>,
    /// Legacy: delete the step's resources instead of applying them.
    #[serde(default)]
    pub delete: bool,
}

/// A phase of a plan.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Phase {
    /// Phase name.
    pub name: String,
    /// `serial` or `parallel`.
    #[serde(default)]
    pub strategy: Option<String>,
    /// Steps.
    #[serde(default)]
    pub steps: Vec<Step>,
}

/// A plan: run when a parameter with its `trigger` changes (or by name).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Plan {
    /// `serial` or `parallel`.
    #[serde(default)]
    pub strategy: Option<String>,
    /// Phases.
    #[serde(default)]
    pub phases: Vec<Phase>,
}

/// A version field: KUDO read `appVersion: 5.7` (a YAML number) as the text "5.7".
fn version_text<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> std::result::Result<Option<String>, D::Error> {
    Ok(match Option::<Value>::deserialize(d)? {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s),
        Some(Value::Number(n)) => Some(n.to_string()),
        Some(other) => {
            return Err(serde::de::Error::custom(format!(
                "expected a version string, found {other}"
            )));
        }
    })
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawOperator {
    api_version: Option<String>,
    name: String,
    #[serde(default, deserialize_with = "version_text")]
    operator_version: Option<String>,
    #[serde(default, deserialize_with = "version_text")]
    version: Option<String>,
    #[serde(default, deserialize_with = "version_text")]
    app_version: Option<String>,
    #[serde(default, deserialize_with = "version_text")]
    kudo_version: Option<String>,
    #[serde(default, deserialize_with = "version_text")]
    kubernetes_version: Option<String>,
    #[serde(default)]
    tasks: RawTasks,
    #[serde(default)]
    plans: IndexMap<String, Plan>,
    #[serde(default)]
    template_engine: Option<String>,
    #[serde(default)]
    namespace_manifest: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(untagged)]
enum RawTasks {
    #[default]
    None,
    List(Vec<RawTask>),
    Map(IndexMap<String, LegacyTask>),
}

#[derive(Deserialize)]
struct RawTask {
    name: String,
    kind: TaskKind,
    #[serde(default)]
    spec: Value,
}

#[derive(Deserialize)]
struct LegacyTask {
    #[serde(default)]
    resources: Option<Vec<String>>,
}

/// `operator.yaml`.
#[derive(Debug, Clone, PartialEq)]
pub struct Operator {
    /// `apiVersion`, when given.
    pub api_version: Option<String>,
    /// Operator name.
    pub name: String,
    /// `operatorVersion` (or the legacy `version`).
    pub operator_version: Option<String>,
    /// `appVersion`.
    pub app_version: Option<String>,
    /// `kudoVersion`.
    pub kudo_version: Option<String>,
    /// `kubernetesVersion`.
    pub kubernetes_version: Option<String>,
    /// Tasks in file order.
    pub tasks: Vec<Task>,
    /// Plans in file order.
    pub plans: IndexMap<String, Plan>,
    /// `templateEngine`, when given (else [`Package::template_engine`] goes by the parameters'
    /// format).
    pub template_engine: Option<TemplateEngine>,
    /// `namespaceManifest`: the template (under `templates/`) of the Namespace KUDO created
    /// for an Instance installed with `--create-namespace`; `None` when absent or empty.
    pub namespace_manifest: Option<String>,
}

impl Operator {
    /// Reads `operator.yaml` from a parsed document; a field of the wrong shape is reported at
    /// its line.
    pub fn parse(doc: &Document) -> Result<Operator> {
        let raw: RawOperator = serde_path_to_error::deserialize(doc.value()).map_err(|e| {
            let ptr = path_to_pointer(e.path());
            Error::Invalid {
                path: doc.path().to_path_buf(),
                location: doc.location(&ptr).map(|l| (l.line, l.col)),
                message: format!("{}: {}", if ptr.is_empty() { "/" } else { &ptr }, e.inner()),
            }
        })?;
        let tasks = match raw.tasks {
            RawTasks::None => Vec::new(),
            RawTasks::List(list) => list
                .into_iter()
                .map(|t| Task {
                    resources: t
                        .spec
                        .get("resources")
                        .and_then(Value::as_array)
                        .map(|r| {
                            r.iter()
                                .filter_map(|s| s.as_str().map(String::from))
                                .collect()
                        })
                        .unwrap_or_default(),
                    parameter: t
                        .spec
                        .get("parameter")
                        .and_then(Value::as_str)
                        .map(String::from),
                    name: t.name,
                    kind: t.kind,
                    spec: t.spec,
                })
                .collect(),
            RawTasks::Map(map) => map
                .into_iter()
                .map(|(name, t)| Task {
                    name,
                    kind: TaskKind::Apply,
                    spec: serde_json::json!({ "resources": t.resources }),
                    resources: t.resources.unwrap_or_default(),
                    parameter: None,
                })
                .collect(),
        };
        let template_engine = match raw.template_engine.as_deref() {
            None => None,
            Some(name) => Some(TemplateEngine::parse(name).ok_or_else(|| Error::Invalid {
                path: doc.path().to_path_buf(),
                location: doc.location("/templateEngine").map(|l| (l.line, l.col)),
                message: format!(
                    "/templateEngine: `{name}` is not a template engine (one of: {})",
                    TemplateEngine::NAMES.join(", ")
                ),
            })?),
        };
        Ok(Operator {
            template_engine,
            api_version: raw.api_version,
            name: raw.name,
            operator_version: raw.operator_version.or(raw.version),
            app_version: raw.app_version,
            kudo_version: raw.kudo_version,
            kubernetes_version: raw.kubernetes_version,
            tasks,
            plans: raw.plans,
            namespace_manifest: raw.namespace_manifest.filter(|m| !m.trim().is_empty()),
        })
    }

    /// The task with this name.
    pub fn task(&self, name: &str) -> Option<&Task> {
        self.tasks.iter().find(|t| t.name == name)
    }
}

fn path_to_pointer(path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let mut out = String::new();
    for seg in path.iter() {
        match seg {
            Segment::Seq { index } => out.push_str(&format!("/{index}")),
            Segment::Map { key } => out = kudo_diag::pointer::push(&out, key),
            Segment::Enum { .. } | Segment::Unknown => {}
        }
    }
    out
}

/// Which language a package's templates are written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TemplateEngine {
    /// Handlebars (kudo's own packages).
    Handlebars,
    /// Go `text/template` with sprig (KUDO's packages).
    Go,
}

impl TemplateEngine {
    /// The name written in operator.yaml's `templateEngine`.
    pub fn as_str(self) -> &'static str {
        match self {
            TemplateEngine::Handlebars => "handlebars",
            TemplateEngine::Go => "go",
        }
    }

    /// Reads operator.yaml's `templateEngine`.
    pub fn parse(text: &str) -> Option<TemplateEngine> {
        match text {
            "handlebars" => Some(TemplateEngine::Handlebars),
            "go" => Some(TemplateEngine::Go),
            _ => None,
        }
    }

    /// The names `templateEngine` accepts.
    pub const NAMES: [&'static str; 2] = ["go", "handlebars"];
}

/// A loaded package.
#[derive(Debug, Clone)]
pub struct Package {
    source: PathBuf,
    provenance: Option<Provenance>,
    operator: Operator,
    operator_doc: Document,
    params_doc: Document,
    params: Params,
    schema: ParamSchema,
    templates: BTreeMap<String, String>,
}

/// Where a package came from and how its signature was checked, as its OperatorVersion
/// records it (set by whoever fetched it: the CLI's repositories and registries).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Provenance {
    /// `oci://REGISTRY/PATH/NAME:TAG@sha256:MANIFEST`, a package URL, or `repository NAME`.
    pub source: String,
    /// The `.tgz`'s sha256, `sha256:HEX`.
    pub digest: String,
    /// The fingerprint of the key that signed it (`sha256:HEX` of its public key), when a
    /// signature was verified.
    pub signer: Option<String>,
    /// How it was checked: `verified`, `unverified` (checked under `warn`, not signed by a
    /// key given), or `none` (not checked).
    pub verification: String,
}

/// The version of a package that names none.
pub const DEFAULT_VERSION: &str = "0.0.0";

/// The name of the OperatorVersion of `operator` at `version` of app `app_version`, as KUDO
/// (0.16 and later) names it and kudo does: `{operator}-{appVersion}-{version}`
/// (`zookeeper-3.6.2-0.3.3`), or `{operator}-{version}` when the package has no appVersion.
/// KUDO's `OperatorVersionName` (`pkg/apis/kudo/v1beta1/operatorversion_types_helpers.go`).
pub fn operator_version_name(operator: &str, app_version: Option<&str>, version: &str) -> String {
    match app_version.filter(|a| !a.is_empty()) {
        Some(app) => format!("{operator}-{app}-{version}"),
        None => format!("{operator}-{version}"),
    }
}

/// Every name an OperatorVersion of `operator` at `version` of app `app_version` has been
/// given: KUDO's ([`operator_version_name`]) first, then `{operator}-{version}`, which older
/// KUDO releases and kudo before it used whether or not there was an appVersion. An Instance
/// naming either runs this OperatorVersion.
pub fn operator_version_names(
    operator: &str,
    app_version: Option<&str>,
    version: &str,
) -> Vec<String> {
    let mut names = vec![operator_version_name(operator, app_version, version)];
    let short = operator_version_name(operator, None, version);
    if !names.contains(&short) {
        names.push(short);
    }
    names
}

impl Package {
    /// Loads a package from a directory or a `.tgz` / `.tar.gz` file.
    pub fn load(path: &Path) -> Result<Package> {
        let meta = std::fs::metadata(path).map_err(|source| Error::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let files = if meta.is_dir() {
            read_dir(path)?
        } else {
            read_tgz(path)?
        };
        Package::from_files(path, files)
    }

    /// Builds a package from its files (paths relative to the package root, `/`-separated).
    pub fn from_files(source: &Path, mut files: BTreeMap<String, Vec<u8>>) -> Result<Package> {
        let text = |name: &str, bytes: Vec<u8>| {
            String::from_utf8(bytes).map_err(|_| Error::Invalid {
                path: source.join(name),
                location: None,
                message: "not UTF-8 text".into(),
            })
        };
        let op_bytes = files
            .remove("operator.yaml")
            .ok_or_else(|| Error::Invalid {
                path: source.to_path_buf(),
                location: None,
                message: "not an operator package: operator.yaml is missing".into(),
            })?;
        let op_doc = Document::parse_lenient(
            &source.join("operator.yaml"),
            &text("operator.yaml", op_bytes)?,
        )?;
        let operator = Operator::parse(&op_doc)?;
        let params_path = source.join("params.yaml");
        let params_doc = match files.remove("params.yaml") {
            Some(b) => Document::parse(&params_path, &text("params.yaml", b)?)?,
            None => Document::parse(&params_path, "")?,
        };
        let params = Params::parse(&params_doc)?;
        let mut templates = BTreeMap::new();
        for (name, bytes) in files {
            if let Some(t) = name.strip_prefix("templates/")
                && !t.is_empty()
                && !t.ends_with('/')
            {
                templates.insert(t.to_string(), text(&name, bytes)?);
            }
        }
        Ok(Package {
            source: source.to_path_buf(),
            provenance: None,
            operator,
            operator_doc: op_doc,
            params_doc,
            schema: kudo_policy::convert::schema_of(&params),
            params,
            templates,
        })
    }

    /// Where the package was read from.
    pub fn source(&self) -> &Path {
        &self.source
    }

    /// Where the package came from and how it was checked, when its fetcher said so.
    pub fn provenance(&self) -> Option<&Provenance> {
        self.provenance.as_ref()
    }

    /// The package, with where it came from.
    pub fn with_provenance(mut self, provenance: Provenance) -> Package {
        self.provenance = Some(provenance);
        self
    }

    /// `operator.yaml`.
    pub fn operator(&self) -> &Operator {
        &self.operator
    }

    /// `operator.yaml` as a document (for locations).
    pub fn operator_document(&self) -> &Document {
        &self.operator_doc
    }

    /// `params.yaml` as parsed.
    pub fn params(&self) -> &Params {
        &self.params
    }

    /// `params.yaml` as a document (for locations).
    pub fn params_document(&self) -> &Document {
        &self.params_doc
    }

    /// The operator version (`operatorVersion`, or the legacy `version`), `0.0.0` when the
    /// package gives none.
    pub fn version(&self) -> String {
        self.operator
            .operator_version
            .clone()
            .unwrap_or_else(|| DEFAULT_VERSION.into())
    }

    /// The name of this package's OperatorVersion ([`operator_version_name`]).
    pub fn operator_version_name(&self) -> String {
        operator_version_name(
            &self.operator.name,
            self.operator.app_version.as_deref(),
            &self.version(),
        )
    }

    /// True when `name` names this package's OperatorVersion, in either form
    /// ([`operator_version_names`]).
    pub fn is_operator_version(&self, name: &str) -> bool {
        operator_version_names(
            &self.operator.name,
            self.operator.app_version.as_deref(),
            &self.version(),
        )
        .iter()
        .any(|n| n == name)
    }

    /// What the parameter policy needs of this package ([`kudo_policy::change::Version`]):
    /// its OperatorVersion name (and the other form of it), version, schema (compiled) and plans; `Err` when the schema
    /// does not compile.
    pub fn policy_version(&self) -> Result<kudo_policy::change::Version, Vec<Diagnostic>> {
        let names = operator_version_names(
            &self.operator.name,
            self.operator.app_version.as_deref(),
            &self.version(),
        );
        kudo_policy::change::Version::new(
            self.operator_version_name(),
            self.version(),
            self.schema().clone(),
            self.operator().plans.keys().cloned().collect(),
        )
        .map(|v| v.with_names(names))
    }

    /// The parameter schema (converted from v1beta1 once, at load).
    pub fn schema(&self) -> &ParamSchema {
        &self.schema
    }

    /// The language of the templates: operator.yaml's `templateEngine`, else Go templates for
    /// a KUDO package (flat `kudo.dev/v1beta1` parameters) and Handlebars for a kudo package.
    pub fn template_engine(&self) -> TemplateEngine {
        self.operator.template_engine.unwrap_or(match self.params {
            Params::V1beta1(_) => TemplateEngine::Go,
            _ => TemplateEngine::Handlebars,
        })
    }

    /// operator.yaml as it must read once params.yaml is converted to v1beta2: a package whose
    /// Go templates were chosen by its v1beta1 format names its engine (`templateEngine: go`),
    /// so that its templates are still read as Go templates. `None` when nothing changes.
    pub fn operator_yaml_for_v1beta2(&self) -> Option<String> {
        if self.operator.template_engine.is_some() || self.template_engine() != TemplateEngine::Go {
            return None;
        }
        let mut text = self.operator_doc.text().to_string();
        if !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(
            "# Written by `kudo package convert`: the templates are KUDO's Go templates.\ntemplateEngine: go\n",
        );
        Some(text)
    }

    /// Template files by their path under `templates/`.
    pub fn templates(&self) -> &BTreeMap<String, String> {
        &self.templates
    }

    /// Adds to each diagnostic naming a schema keyword ([`Diagnostic::by`]) the keyword's place
    /// in params.yaml, so that it reads "by params.yaml:12" next to "from values.yaml:3".
    pub fn locate_rules(&self, diags: &mut [Diagnostic]) {
        for d in diags {
            let pointer = d.pointer.clone();
            if let Some(rule) = &mut d.by
                && rule.at.is_none()
            {
                rule.at = self.rule_location(&rule.keyword, &pointer);
            }
        }
    }

    /// `diags` with their rules located ([`Package::locate_rules`]).
    pub fn located(&self, mut diags: Vec<Diagnostic>) -> Vec<Diagnostic> {
        self.locate_rules(&mut diags);
        diags
    }

    /// The parameters `inputs` ask for, validated against this package's schema
    /// ([`kudo_policy::validate::resolve`]), every diagnostic saying where its rule is written.
    pub fn resolve(
        &self,
        inputs: &kudo_policy::values::Inputs<'_>,
    ) -> std::result::Result<(kudo_policy::values::Values, Vec<Diagnostic>), Vec<Diagnostic>> {
        match kudo_policy::validate::resolve(&self.schema, inputs) {
            Ok((values, warnings)) => Ok((values, self.located(warnings))),
            Err(diags) => Err(self.located(diags)),
        }
    }

    /// Where in params.yaml the schema keyword `keyword` is written, for a diagnostic about the
    /// value at `value_pointer`. A v1beta2 params.yaml is the schema, so the keyword is found
    /// where it stands (through local `$ref`s); a v1beta1 parameter's rules all come from its
    /// entry in the flat list.
    pub fn rule_location(&self, keyword: &str, value_pointer: &str) -> Option<Location> {
        let doc = &self.params_doc;
        let tokens = pointer::tokens(keyword).ok()?;
        match &self.params {
            Params::V1beta2(_) => {
                let mut at = String::new();
                for t in &tokens {
                    if t == "$ref" {
                        let target = doc.value().pointer(&pointer::push(&at, t))?.as_str()?;
                        at = target.strip_prefix('#')?.to_string();
                    } else {
                        at = pointer::push(&at, t);
                    }
                }
                doc.location(&at)
            }
            Params::V1beta1(_) => {
                // `/properties/NAME/...`, or the root's `/required` for a missing NAME
                let name = match tokens.as_slice() {
                    [p, name, ..] if p == "properties" => name.clone(),
                    _ => pointer::tokens(value_pointer).ok()?.into_iter().next()?,
                };
                let entry = match doc.value().get("parameters")? {
                    Value::Array(list) => {
                        let i = list.iter().position(|p| p["name"] == name.as_str())?;
                        format!("/parameters/{i}")
                    }
                    _ => pointer::push("/parameters", &name),
                };
                doc.location(&entry)
            }
        }
    }
}

fn read_dir(root: &Path) -> Result<BTreeMap<String, Vec<u8>>> {
    let mut files = BTreeMap::new();
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| Error::Io { path, source }
    };
    for name in ["operator.yaml", "params.yaml"] {
        let p = root.join(name);
        if p.exists() {
            files.insert(name.to_string(), std::fs::read(&p).map_err(io(&p))?);
        }
    }
    let mut stack = vec![root.join("templates")];
    while let Some(dir) = stack.pop() {
        if !dir.is_dir() {
            continue;
        }
        for entry in std::fs::read_dir(&dir).map_err(io(&dir))? {
            let entry = entry.map_err(io(&dir))?;
            let p = entry.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p
                    .strip_prefix(root)
                    .unwrap_or(&p)
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy())
                    .collect::<Vec<_>>()
                    .join("/");
                files.insert(rel, std::fs::read(&p).map_err(io(&p))?);
            }
        }
    }
    Ok(files)
}

fn read_tgz(path: &Path) -> Result<BTreeMap<String, Vec<u8>>> {
    let file = std::fs::File::open(path).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })?;
    read_tgz_from(path, file)
}

/// Most entries a package archive may hold (the real KUDO operators hold at most a few dozen).
pub const MAX_PACKAGE_ENTRIES: usize = 10_000;

/// A reader that fails, saying so, once more than `left` bytes have come through it: a
/// decompressed stream larger than a package may be (a gzip bomb) is refused for that reason,
/// not for the truncated tar stream a silent limit leaves.
struct Capped<R> {
    inner: R,
    left: u64,
}

impl<R: Read> Read for Capped<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        match self.left.checked_sub(n as u64) {
            Some(left) => {
                self.left = left;
                Ok(n)
            }
            None => Err(std::io::Error::other(format!(
                "it unpacks to more than {MAX_PACKAGE_BYTES} bytes, the most a package may hold (a gzip bomb?)"
            ))),
        }
    }
}

/// The files of a gzipped tarball read from `reader` (`path` names it in errors), at most
/// [`MAX_PACKAGE_BYTES`] of it compressed and as many unpacked, and [`MAX_PACKAGE_ENTRIES`]
/// entries. Only regular files and folders: a link, a device or a path that is absolute or
/// climbs out with `..` is refused, naming the entry.
fn read_tgz_from(path: &Path, reader: impl Read) -> Result<BTreeMap<String, Vec<u8>>> {
    let refuse = |message: String| Error::Invalid {
        path: path.to_path_buf(),
        location: None,
        message,
    };
    let io = |source: std::io::Error| match source.get_ref().map(ToString::to_string) {
        Some(m) if m.contains("a gzip bomb") => refuse(format!("the archive is refused: {m}")),
        _ => Error::Io {
            path: path.to_path_buf(),
            source,
        },
    };
    let gz = flate2::read::GzDecoder::new(reader.take(MAX_PACKAGE_BYTES));
    let mut archive = tar::Archive::new(Capped {
        inner: gz,
        left: MAX_PACKAGE_BYTES,
    });
    let mut files = BTreeMap::new();
    for (count, entry) in archive.entries().map_err(io)?.enumerate() {
        let mut entry = entry.map_err(io)?;
        if count >= MAX_PACKAGE_ENTRIES {
            return Err(refuse(format!(
                "the archive holds more than {MAX_PACKAGE_ENTRIES} entries, the most a package may hold"
            )));
        }
        let raw = String::from_utf8_lossy(&entry.path_bytes()).into_owned();
        let kind = entry.header().entry_type();
        // Folders, and the metadata entries of the PAX and GNU formats (the tar crate applies
        // the per-file ones itself).
        if kind.is_dir()
            || kind.is_pax_global_extensions()
            || kind.is_pax_local_extensions()
            || kind.is_gnu_longname()
            || kind.is_gnu_longlink()
        {
            continue;
        }
        if !kind.is_file() {
            let what = if kind.is_symlink() {
                "a symbolic link"
            } else if kind.is_hard_link() {
                "a hard link"
            } else {
                "not a regular file (a device, a FIFO or another special entry)"
            };
            return Err(refuse(format!(
                "archive entry `{raw}` is {what}: a package holds regular files only"
            )));
        }
        let escapes = raw.starts_with('/') || raw.split(['/', '\\']).any(|part| part == "..");
        if escapes {
            return Err(refuse(format!(
                "archive entry `{raw}` is an absolute path or climbs out with `..`: a package's paths stay inside it"
            )));
        }
        let name = raw.trim_start_matches("./").to_string();
        let mut bytes = Vec::new();
        entry.read_to_end(&mut bytes).map_err(io)?;
        files.insert(name, bytes);
    }
    // Archives made with a top-level folder (`pkg/operator.yaml`) are read from that folder.
    if !files.contains_key("operator.yaml")
        && let Some(prefix) = files
            .keys()
            .find(|k| k.ends_with("/operator.yaml") && k.matches('/').count() == 1)
            .map(|k| k.trim_end_matches("operator.yaml").to_string())
    {
        files = files
            .into_iter()
            .filter_map(|(k, v)| k.strip_prefix(&prefix).map(|s| (s.to_string(), v)))
            .collect();
    }
    Ok(files)
}

/// A package held inside the package archive `archive`, as `member`: a folder of it
/// (`zookeeper/operator.yaml`, ...) or a `.tgz` in it. `None` when the archive holds no such
/// member (or cannot be read: the caller then looks elsewhere and reports that).
pub fn from_archive_member(archive: &Path, member: &str) -> Option<Result<Package>> {
    let member = member.trim_end_matches('/');
    let files = read_tgz(archive).ok()?;
    let source = archive.join(member);
    if let Some(bytes) = files.get(member) {
        return Some(
            read_tgz_from(&source, bytes.as_slice())
                .and_then(|inner| Package::from_files(&source, inner)),
        );
    }
    let prefix = format!("{member}/");
    let inner: BTreeMap<String, Vec<u8>> = files
        .into_iter()
        .filter_map(|(k, v)| k.strip_prefix(&prefix).map(|s| (s.to_string(), v)))
        .collect();
    inner
        .contains_key("operator.yaml")
        .then(|| Package::from_files(&source, inner))
}

/// Loads a package from the bytes of its `.tgz`; `source` names it (in errors, and as
/// [`Package::source`]).
pub fn from_tgz_bytes(source: &Path, bytes: &[u8]) -> Result<Package> {
    Package::from_files(source, read_tgz_from(source, bytes)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A gzipped tarball of `entries` (name, type, data or link target), names written as
    /// given (no check of `..`, which the tar crate's own path setter refuses).
    fn tgz(entries: &[(&str, tar::EntryType, &[u8])]) -> Vec<u8> {
        let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        let mut b = tar::Builder::new(gz);
        for (name, kind, data) in entries {
            let mut h = tar::Header::new_gnu();
            h.as_old_mut().name[..name.len()].copy_from_slice(name.as_bytes());
            h.set_entry_type(*kind);
            h.set_mode(0o644);
            if kind.is_symlink() || kind.is_hard_link() {
                h.set_link_name(std::str::from_utf8(data).unwrap()).unwrap();
                h.set_size(0);
                h.set_cksum();
                b.append(&h, std::io::empty()).unwrap();
            } else {
                h.set_size(data.len() as u64);
                h.set_cksum();
                b.append(&h, *data).unwrap();
            }
        }
        b.into_inner().unwrap().finish().unwrap()
    }

    fn refusal(bytes: &[u8]) -> String {
        match read_tgz_from(Path::new("p.tgz"), bytes) {
            Err(e) => e.to_string(),
            Ok(files) => panic!("accepted: {:?}", files.keys().collect::<Vec<_>>()),
        }
    }

    #[test]
    fn archive_entries_that_leave_the_package_or_are_not_files_are_refused_by_name() {
        use tar::EntryType::{Block, Link, Regular, Symlink};
        let op: &[u8] = b"name: x\n";
        let ok = tgz(&[
            ("operator.yaml", Regular, op),
            ("templates/a.yaml", Regular, b"a: 1\n"),
        ]);
        assert_eq!(
            read_tgz_from(Path::new("p.tgz"), ok.as_slice())
                .unwrap()
                .len(),
            2
        );
        for (entries, says) in [
            (
                vec![
                    ("operator.yaml", Regular, op),
                    ("templates/../../../x", Regular, op),
                ],
                "archive entry `templates/../../../x` is an absolute path or climbs out with `..`",
            ),
            (
                vec![("/etc/x", Regular, op)],
                "archive entry `/etc/x` is an absolute path",
            ),
            (
                vec![("templates/a.yaml", Symlink, b"/etc/passwd".as_slice())],
                "archive entry `templates/a.yaml` is a symbolic link",
            ),
            (
                vec![
                    ("operator.yaml", Regular, op),
                    ("templates/b.yaml", Link, b"operator.yaml".as_slice()),
                ],
                "archive entry `templates/b.yaml` is a hard link",
            ),
            (
                vec![("dev", Block, b"".as_slice())],
                "archive entry `dev` is not a regular file",
            ),
        ] {
            let got = refusal(&tgz(&entries));
            assert!(got.contains(says), "{says} in: {got}");
        }
    }

    #[test]
    fn a_gzip_bomb_is_refused_saying_so() {
        let big = vec![0u8; usize::try_from(MAX_PACKAGE_BYTES).unwrap() + 1024 * 1024];
        let bytes = tgz(&[("operator.yaml", tar::EntryType::Regular, big.as_slice())]);
        assert!(
            bytes.len() < 1024 * 1024,
            "{} bytes compressed",
            bytes.len()
        );
        let got = refusal(&bytes);
        assert!(got.contains("unpacks to more than 67108864 bytes"), "{got}");
    }

    #[test]
    fn task_kinds_read_and_write_as_operator_yaml_writes_them() {
        let cases: &[(&str, TaskKind)] = &[
            ("Apply", TaskKind::Apply),
            ("Delete", TaskKind::Delete),
            ("Toggle", TaskKind::Toggle),
            ("Pipe", TaskKind::Pipe),
            ("KudoOperator", TaskKind::KudoOperator),
            ("Dummy", TaskKind::Dummy),
            ("apply", TaskKind::Other("apply".into())), // kinds are case-sensitive, as in KUDO
            ("Custom", TaskKind::Other("Custom".into())),
        ];
        for (text, want) in cases {
            let got: TaskKind = serde_json::from_value(serde_json::json!(text)).unwrap();
            assert_eq!(&got, want, "read: {text}");
            let written = serde_json::to_value(&got).unwrap();
            assert_eq!(written, serde_json::json!(text), "written: {text}");
            assert_eq!(got.to_string(), *text, "displayed: {text}");
        }
    }

    fn package(operator_extra: &str, params: &str) -> Result<Package> {
        let operator = format!(
            "apiVersion: kudo.dev/v1beta1\nname: t\noperatorVersion: 0.1.0\n{operator_extra}"
        );
        let mut files = BTreeMap::new();
        files.insert("operator.yaml".to_string(), operator.into_bytes());
        files.insert("params.yaml".to_string(), params.as_bytes().to_vec());
        Package::from_files(Path::new("pkg"), files)
    }

    /// The line `by` names for the value at `value` breaking the keyword at `keyword`.
    fn rule_line(pkg: &Package, keyword: &str, value: &str) -> Option<usize> {
        pkg.rule_location(keyword, value).map(|l| l.line)
    }

    #[test]
    fn a_rule_is_found_where_params_yaml_writes_it() {
        let v2 = package(
            "",
            "apiVersion: kudo.dev/v1beta2\ntype: object\nproperties:\n  nodes:\n    type: integer\n    minimum: 1\n  dc:\n    $ref: '#/$defs/dc'\n$defs:\n  dc:\n    type: object\n    properties:\n      name:\n        type: string\n        maxLength: 8\n",
        )
        .unwrap();
        assert_eq!(
            rule_line(&v2, "/properties/nodes/minimum", "/nodes"),
            Some(6)
        );
        // through the $ref, to the keyword in $defs
        assert_eq!(
            rule_line(
                &v2,
                "/properties/dc/$ref/properties/name/maxLength",
                "/dc/name"
            ),
            Some(15)
        );
        let v1 = package(
            "",
            "apiVersion: kudo.dev/v1beta1\nparameters:\n  - name: A\n    default: x\n  - name: NODES\n    type: integer\n    required: true\n",
        )
        .unwrap();
        // a flat parameter's rules are its entry; a missing one is found by its pointer
        assert_eq!(rule_line(&v1, "/properties/NODES/type", "/NODES"), Some(5));
        assert_eq!(rule_line(&v1, "/required", "/NODES"), Some(5));
        assert_eq!(rule_line(&v1, "/properties/GONE/type", "/GONE"), None);
        // located in place, and by value
        let d = Diagnostic::error(kudo_diag::Code::OutOfRange, "/nodes", "x")
            .with_rule("/properties/nodes/minimum");
        let located = v2.located(vec![d]);
        assert_eq!(
            located[0]
                .by
                .as_ref()
                .and_then(|r| r.at.as_ref())
                .map(|l| l.line),
            Some(6)
        );
    }

    const V1: &str = "apiVersion: kudo.dev/v1beta1\nparameters:\n  - name: A\n    default: x\n";
    const V2: &str = "apiVersion: kudo.dev/v1beta2\ntype: object\nproperties: {}\n";

    #[test]
    fn the_template_engine_is_named_or_follows_the_parameters_format() {
        let engine = |extra: &str, params: &str| package(extra, params).unwrap().template_engine();
        assert_eq!(engine("", V1), TemplateEngine::Go);
        assert_eq!(engine("", V2), TemplateEngine::Handlebars);
        assert_eq!(
            engine("templateEngine: handlebars\n", V1),
            TemplateEngine::Handlebars
        );
        assert_eq!(engine("templateEngine: go\n", V2), TemplateEngine::Go);
        let Err(Error::Invalid {
            location, message, ..
        }) = package("templateEngine: jinja\n", V1)
        else {
            panic!("an unknown engine loads")
        };
        assert_eq!(location, Some((4, 17)));
        assert!(
            message.contains("`jinja`") && message.contains("go, handlebars"),
            "{message}"
        );
    }

    #[test]
    fn converting_a_kudo_package_names_its_go_engine_once() {
        let text = package("", V1)
            .unwrap()
            .operator_yaml_for_v1beta2()
            .unwrap();
        assert!(text.ends_with("templateEngine: go\n"), "{text}");
        assert!(text.starts_with("apiVersion: kudo.dev/v1beta1\nname: t\n"));
        for (extra, params) in [("templateEngine: go\n", V1), ("", V2)] {
            assert_eq!(
                package(extra, params).unwrap().operator_yaml_for_v1beta2(),
                None
            );
        }
    }

    #[test]
    fn operator_versions_are_named_as_kudo_names_them() {
        let cases: &[(&str, Option<&str>, &str, &[&str])] = &[
            (
                "zookeeper",
                Some("3.6.2"),
                "0.3.3",
                &["zookeeper-3.6.2-0.3.3", "zookeeper-0.3.3"],
            ),
            ("first-operator", None, "0.2.0", &["first-operator-0.2.0"]),
            ("x", Some(""), "1.0.0", &["x-1.0.0"]), // an empty appVersion is none, as in KUDO
        ];
        for (operator, app, version, want) in cases {
            assert_eq!(
                operator_version_names(operator, *app, version),
                want.to_vec(),
                "{operator} {app:?} {version}"
            );
            assert_eq!(operator_version_name(operator, *app, version), want[0]);
        }
    }
}
