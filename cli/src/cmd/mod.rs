//! One module per command. Each turns its arguments into `kudo-pkg` calls and decides the exit
//! code; the logic they call lives in `kudo-pkg`.

mod author;
mod changes;
pub mod cluster;
pub mod get;
pub mod install;
mod instance;
mod list;
pub(crate) mod migrate;
mod package;
mod params;
pub mod plan;
mod registry;
mod repo;
mod template;
pub mod uninstall;
mod update;
mod upgrade;
pub mod version;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use kudo_pkg::diag::Location;
use kudo_pkg::document::Document;
use kudo_pkg::{Code, Diagnostic, Error, Origin, Package};

use crate::args::{
    AddCommand, Cli, Command, ListCommand, PackageCommand, RegistryCommand, SourceArgs, ValueArgs,
};

/// A usage error found after clap: printed as clap prints its own, exit code 2.
pub fn usage_error(message: &str) -> ExitCode {
    eprintln!("error: {message}\n\nFor more information, try '--help'.");
    ExitCode::from(2)
}

/// Runs the command. `Err` is an error that stopped it (printed by `main`).
pub fn run(cli: Cli) -> Result<ExitCode, Error> {
    match cli.command {
        Command::Template(a) => template::run(a),
        Command::Params(a) => params::run(a),
        Command::Package(PackageCommand::Convert(a)) => package::convert(a),
        Command::Package(PackageCommand::Verify(a)) => package::verify(a),
        Command::Package(PackageCommand::List(ListCommand::Parameters(a))) => list::parameters(a),
        Command::Package(PackageCommand::Add(AddCommand::Parameter(a))) => author::add_parameter(a),
        Command::Package(PackageCommand::Create(a)) => package::create(a),
        Command::Package(PackageCommand::Push(a)) => registry::push(a),
        Command::Package(PackageCommand::Pull(a)) => registry::pull(a),
        Command::Registry(RegistryCommand::Login(a)) => registry::login(a),
        Command::Registry(RegistryCommand::Logout(a)) => registry::logout(a),
        Command::Init(a) => init(a),
        Command::Completion(a) => {
            use clap::CommandFactory;
            let mut cmd = Cli::command();
            let mut out = Vec::new();
            clap_complete::generate(a.shell, &mut cmd, "kudo", &mut out);
            print(&String::from_utf8_lossy(&out))?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Update(a) if a.instance.is_some() => update::run(a),
        Command::Update(a) => instance::update(a),
        Command::Upgrade(a) if a.instance.is_some() => upgrade::run(a),
        Command::Upgrade(a) => instance::upgrade(a),
        Command::Migrate(a) => migrate::run(a),
        Command::Install(a) => install::run(a),
        Command::Uninstall(a) => uninstall::run(a),
        Command::Plan(c) => plan::run(c),
        Command::Get(a) => get::run(a),
        Command::Version(a) => version::run(a),
        Command::Repo(c) => repo::run(c),
        Command::Search(a) => repo::search(a),
    }
}

/// `kudo init`: the installation, printed.
fn init(a: crate::args::InitArgs) -> Result<ExitCode, Error> {
    use kudo_client::init::{self, Options, WebhookTarget};
    let mut o = Options {
        namespace: a.namespace.clone(),
        ..Options::default()
    };
    if let Some(i) = a.manager_image {
        o.manager_image = i;
    }
    if let Some(i) = a.webhook_image {
        o.webhook_image = i;
    }
    let ca = match &a.ca_bundle {
        Some(path) => Some(std::fs::read(path).map_err(|source| Error::Io {
            path: path.clone(),
            source,
        })?),
        None => None,
    };
    if let Some(ca) = &ca
        && !String::from_utf8_lossy(ca).contains("-----BEGIN CERTIFICATE-----")
    {
        return Err(Error::Invalid {
            path: a.ca_bundle.clone().unwrap_or_default(),
            location: None,
            message: "--ca-bundle is not a PEM certificate bundle".into(),
        });
    }
    o.webhook = match (a.webhook_url, ca) {
        (Some(url), Some(ca_bundle)) => {
            if !url.starts_with("https://") {
                return Err(Error::Invalid {
                    path: url.into(),
                    location: None,
                    message: "--webhook-url must be an https:// URL: the API server calls webhooks over TLS only".into(),
                });
            }
            WebhookTarget::Url { url, ca_bundle }
        }
        (_, ca_bundle) => WebhookTarget::Service { ca_bundle },
    };
    let objects = init::manifests(&o);
    if !a.dry_run {
        let runtime = runtime().map_err(|source| Error::Io {
            path: "<runtime>".into(),
            source,
        })?;
        let result = runtime.block_on(async {
            let client = a.connect.client().await?;
            let mut lines = init::apply(&client, &objects)
                .await
                .map_err(|e| e.to_string())?;
            if a.wait || a.wait_time.is_some() {
                for l in lines.drain(..) {
                    eprintln!("{l}");
                }
                let timeout = a
                    .wait_time
                    .unwrap_or(kudo_client::commands::wait::DEFAULT_TIMEOUT);
                lines = init::wait_ready(&client, &o, timeout)
                    .await
                    .map_err(|e| e.to_string())?;
            }
            Ok::<_, String>(lines)
        });
        return match result {
            Ok(lines) => {
                for l in lines {
                    eprintln!("{l}");
                }
                let ready = if a.wait || a.wait_time.is_some() {
                    " and ready"
                } else {
                    ""
                };
                print(&format!(
                    "kudo is installed{ready} in namespace {}\n",
                    o.namespace
                ))?;
                if matches!(o.webhook, WebhookTarget::Url { .. }) {
                    eprintln!(
                        "the manager and the webhook run outside the cluster (--webhook-url): run kudo-webhook at that URL and kudo-manager, as the ServiceAccounts {ns}/{} and {ns}/{}",
                        kudo_crd::labels::WEBHOOK,
                        kudo_crd::labels::MANAGER,
                        ns = o.namespace
                    );
                }
                Ok(ExitCode::SUCCESS)
            }
            Err(e) => {
                eprintln!("error: kudo init: {e}");
                Ok(ExitCode::from(1))
            }
        };
    }
    let text = match a.output {
        crate::args::DataFormat::Json => format!(
            "{}\n",
            serde_json::to_string_pretty(&serde_json::json!({
                "apiVersion": "v1", "kind": "List", "items": objects
            }))
            .unwrap_or_default()
        ),
        crate::args::DataFormat::Yaml => objects
            .iter()
            .map(|v| format!("---\n{}", to_yaml(v)))
            .collect(),
    };
    print(&text)?;
    Ok(ExitCode::SUCCESS)
}

/// Loads the package named on the command line (a folder, a `.tgz`, a URL, an `oci://`
/// reference or a repository name), looking names up with no version asked for.
fn load(path: &Path) -> Result<Package, Error> {
    Ok(load_with(path, &SourceArgs::default())?.package)
}

/// A PACKAGE argument, loaded, with the resolver that found it (which looks up its
/// dependencies named by name in the same repository).
struct Loaded {
    /// The PACKAGE argument as given.
    arg: PathBuf,
    package: Package,
    origin: crate::repo::Origin,
    resolver: crate::repo::Resolver,
}

impl Loaded {
    /// The package's KudoOperator dependencies, resolved as the package was: paths on disk or
    /// in its archive, names in its repository.
    fn dependencies(&self) -> Result<Vec<kudo_pkg::dependency::Dependency>, Error> {
        kudo_pkg::dependency::resolve_with(&self.package, &self.resolver).map_err(|e| {
            Error::Invalid {
                path: self.arg.clone(),
                location: None,
                message: e.to_string(),
            }
        })
    }

    /// One line for stderr saying where a package not on disk came from.
    fn provenance(&self) -> Option<String> {
        use crate::repo::Origin;
        let pkg = &self.package;
        let what = format!(
            "{} {}",
            pkg.operator().name,
            kudo_pkg::repo::versions(&pkg.version(), pkg.operator().app_version.as_deref())
        );
        match &self.origin {
            Origin::Local => None,
            Origin::Url(url) => Some(format!("{what} from {url}")),
            Origin::Repository { name, url, digest } => Some(format!(
                "{what} from repository {name} ({url}, sha256 {digest} checked)"
            )),
            Origin::Oci(reference) => Some(format!("{what} from {reference}")),
        }
    }
}

/// [`load`] with `--repo`, `--operator-version`, `--app-version` and `--plain-http`.
fn load_with(path: &Path, source: &SourceArgs) -> Result<Loaded, Error> {
    let source = source.to_source()?;
    let home = crate::repo::Home::from_env().map_err(|e| invalid_arg(path, e.to_string()))?;
    let resolver = crate::repo::Resolver::new(home, source);
    if path.exists() {
        // On disk: the package's own errors (file:line), unchanged.
        return Ok(Loaded {
            arg: path.to_path_buf(),
            package: Package::load(path)?,
            origin: crate::repo::Origin::Local,
            resolver,
        });
    }
    let text = path.to_string_lossy();
    match resolver.package(&text) {
        Ok(r) => {
            let loaded = Loaded {
                arg: path.to_path_buf(),
                package: r.package,
                origin: r.origin,
                resolver,
            };
            if let Some(line) = loaded.provenance() {
                eprintln!("{line}");
            }
            Ok(loaded)
        }
        Err(crate::repo::RepoError::Io { .. }) => Err(invalid_arg(
            path,
            "no such file or directory: PACKAGE is a package directory, a .tgz file, an \
             http(s):// URL, an oci:// reference or an operator name in a repository"
                .into(),
        )),
        Err(e) => Err(invalid_arg(path, not_found(&text, &resolver, e))),
    }
}

/// Why a PACKAGE argument found neither on disk nor where it was looked up is not a package.
fn not_found(text: &str, resolver: &crate::repo::Resolver, e: crate::repo::RepoError) -> String {
    use crate::repo::RepoError;
    let is_name = !text.contains("://");
    match e {
        RepoError::Find(_) | RepoError::Download { .. } | RepoError::Index { .. } if is_name => {
            let repo = resolver.config().map(|c| c.context).unwrap_or_default();
            format!(
                "not a file or directory, so looked up as an operator name in a repository \
                 (--repo, default `{repo}`): {e}"
            )
        }
        e => e.to_string(),
    }
}

fn invalid_arg(path: &Path, message: String) -> Error {
    Error::Invalid {
        path: path.to_path_buf(),
        location: None,
        message,
    }
}

/// Reads the -P files; a file that cannot be read or parsed becomes a diagnostic.
fn value_files(args: &ValueArgs) -> (Vec<Document>, Vec<Diagnostic>) {
    let mut docs = Vec::new();
    let mut diags = Vec::new();
    for f in &args.files {
        match Document::read(f) {
            Ok(d) => docs.push(d),
            Err(Error::Yaml {
                path,
                line,
                col,
                message,
            }) => diags.push(
                Diagnostic::error(Code::YamlSyntax, "", format!("not valid YAML: {message}"))
                    .with_origin(Origin::File(Location { path, line, col })),
            ),
            Err(Error::Io { path, source }) => {
                let code = if source.kind() == std::io::ErrorKind::NotFound {
                    Code::FileNotFound
                } else {
                    Code::FileUnreadable
                };
                diags.push(Diagnostic::error(
                    code,
                    "",
                    format!(
                        "-P {}: cannot read the values file: {source}",
                        path.display()
                    ),
                ));
            }
            Err(e) => diags.push(Diagnostic::error(
                Code::FileUnreadable,
                "",
                format!("-P {}: cannot read the values file: {e}", f.display()),
            )),
        }
    }
    (docs, diags)
}

/// Writes a file through a temporary file in the same directory and a rename: readers see the
/// old file or the new one, never half of it. An existing file keeps its permissions.
fn write_atomic(path: &Path, text: &str) -> Result<(), Error> {
    write_bytes_atomic(path, text.as_bytes())
}

/// [`write_atomic`] for bytes.
fn write_bytes_atomic(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    crate::atomic::write(path, bytes, None).map_err(package::io(path))
}

/// Writes to stdout; a closed pipe (`kudo params ... | head`) is not an error.
fn print(text: &str) -> Result<(), Error> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(source) => Err(Error::Io {
            path: "<stdout>".into(),
            source,
        }),
    }
}

/// YAML text of a JSON value, which Kubernetes reads back as the same JSON (`"yes"` and
/// `"0777"` are quoted).
pub(crate) fn to_yaml(value: &serde_json::Value) -> String {
    kudo_pkg::manifest::to_yaml(value)
}

/// Snippet sources that never show the lines of the -P files that hold secret values.
fn secret_sources(schema: &kudo_pkg::ParamSchema, docs: &[Document]) -> crate::report::Sources {
    let mut sources = crate::report::Sources::default();
    for d in docs {
        for p in kudo_pkg::values::Redacted::new(schema, d.value()).hidden() {
            if let Some(loc) = d.location(p) {
                sources.hide_line(loc.path, loc.line);
            }
        }
    }
    sources
}

/// The CLI's async runtime: one thread, for one request at a time.
fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
}

/// Computes and validates the parameters from the command line; prints problems.
fn resolve(pkg: &Package, args: &ValueArgs) -> Option<kudo_pkg::values::Values> {
    let (docs, mut diags) = value_files(args);
    let sources = secret_sources(pkg.schema(), &docs);
    let inputs = kudo_pkg::values::Inputs {
        current: None,
        files: &docs,
        overrides: &args.overrides,
    };
    match pkg.resolve(&inputs) {
        Ok((values, warnings)) if diags.is_empty() => {
            crate::report::diagnostics(&warnings);
            Some(values)
        }
        Ok((_, more)) | Err(more) => {
            diags.extend(more);
            crate::report::diagnostics_with(&diags, sources);
            None
        }
    }
}
