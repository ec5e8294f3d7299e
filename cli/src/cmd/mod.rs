//! One module per command. Each turns its arguments into `kudo-policy` and `kudo-pkg` (and `kudo-client`) calls
//! and prints their results; the logic they call lives there. What stops a command is a
//! [`crate::error::Error`], which decides the exit code.

mod airgap;
mod author;
mod changes;
pub mod cluster;
mod diff;
mod explain;
pub mod get;
mod history;
mod images;
mod init;
pub mod install;
mod instance_file;
mod list;
pub(crate) mod migrate;
mod mirror;
mod package;
mod params;
mod patch;
pub mod plan;
mod registry;
mod repo;
mod rollout;
mod sign;
mod template;
pub mod uninstall;
mod update;
mod upgrade;
pub mod version;

use std::io::Write;
use std::path::{Path, PathBuf};

use kudo_pkg::Package;
use kudo_yaml::document::Document;

use crate::args::{
    AddCommand, Cli, Command, ListCommand, PackageCommand, RegistryCommand, SourceArgs, ValueArgs,
};
use crate::error::{Error, Refusal};
use crate::progress::Progress;

/// How a command that ran ended. `main` alone turns it into the exit code (and an [`Error`],
/// what stopped a command, into its own).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// It did what it was asked.
    Done,
    /// It ran, and what it reports failed, said on stderr: a package that does not verify
    /// (`package verify`, `create`, `push`), a parameter the user did not write (`package add
    /// parameter`), a plan that ended in FATAL_ERROR (`plan status --wait`).
    Failed,
    /// `kudo diff`: something would change.
    Changes,
    /// `kudo diff`: the diff is incomplete (an object could not be compared).
    Incomplete,
}

/// Runs the command. `Err` is an error that stopped it (printed by `main`, which takes its
/// exit code from it); `Ok` is how a command that ran ended.
pub fn run(cli: Cli) -> Result<Outcome, Error> {
    // what --wait shows on stderr while it waits: the commands that wait take it
    let progress = Progress::on_stderr(cli.quiet);
    match cli.command {
        Command::Template(a) => template::run(a),
        Command::Params(a) => params::run(a),
        Command::Explain(a) => explain::run(a),
        Command::Package(PackageCommand::Convert(a)) => package::convert(a),
        Command::Package(PackageCommand::Verify(a)) => package::verify(a),
        Command::Package(PackageCommand::List(ListCommand::Parameters(a))) => list::parameters(a),
        Command::Package(PackageCommand::Images(a)) => images::run(a),
        Command::Package(PackageCommand::Add(AddCommand::Parameter(a))) => author::add_parameter(a),
        Command::Package(PackageCommand::Create(a)) => package::create(a),
        Command::Package(PackageCommand::Push(a)) => registry::push(a),
        Command::Package(PackageCommand::Pull(a)) => registry::pull(a),
        Command::Package(PackageCommand::Sign(a)) => sign::sign(a),
        Command::Package(PackageCommand::VerifySignature(a)) => sign::verify_signature(a),
        Command::Package(PackageCommand::GenerateKey(a)) => sign::generate_key(a),
        Command::Package(PackageCommand::Bundle(a)) => airgap::bundle(a),
        Command::Package(PackageCommand::Relocate(a)) => airgap::relocate(a),
        Command::Registry(RegistryCommand::Trust(a)) => sign::registry_trust(a),
        Command::Registry(RegistryCommand::Login(a)) => registry::login(a),
        Command::Registry(RegistryCommand::Logout(a)) => registry::logout(a),
        Command::Init(a) => init::run(a),
        Command::Completion(a) => {
            print(&completion_script(a.shell)?)?;
            Ok(Outcome::Done)
        }
        Command::Update(a) if a.instance.is_some() || a.name.is_some() => update::run(a, progress),
        Command::Update(a) => instance_file::update(a),
        Command::Upgrade(a) if a.instance.is_some() => upgrade::run(a, progress),
        Command::Upgrade(a) => instance_file::upgrade(a),
        Command::Migrate(a) => migrate::run(a),
        Command::Install(a) => install::run(a, progress),
        Command::Diff(a) => diff::run(a),
        Command::Patch(a) => patch::run(a, progress),
        Command::Uninstall(a) => uninstall::run(a, progress),
        Command::Plan(c) => plan::run(c, progress),
        Command::Get(a) => get::run(a),
        Command::List(a) => get::list(a),
        Command::Status(a) => plan::run(crate::args::PlanCommand::Status(a), progress),
        Command::History(a) => history::history(a),
        Command::Rollback(a) => history::rollback(a, progress),
        Command::Version(a) => version::run(a),
        Command::Repo(c) => repo::run(c),
        Command::Search(a) => repo::search(a),
        Command::Rollout(c) => rollout::run(c, progress),
    }
}

/// The registration script of dynamic completion for `shell`: what `COMPLETE=SHELL kudo`
/// prints. Sourced, it makes the shell call this `kudo` (as it was invoked: a name looked up
/// in `$PATH`, or a path) at each TAB, and `crate::complete` answers with names from the
/// cluster. A shell the dynamic engine does not know gets clap_complete's static script.
fn completion_script(shell: clap_complete::Shell) -> Result<String, Error> {
    use clap::CommandFactory;
    use clap_complete::env::{Bash, Elvish, EnvCompleter, Fish, Powershell, Zsh};
    let mut cmd = Cli::command();
    let dynamic: &dyn EnvCompleter = match shell {
        clap_complete::Shell::Bash => &Bash,
        clap_complete::Shell::Zsh => &Zsh,
        clap_complete::Shell::Fish => &Fish,
        clap_complete::Shell::Elvish => &Elvish,
        clap_complete::Shell::PowerShell => &Powershell,
        _ => {
            let mut out = Vec::new();
            clap_complete::generate(shell, &mut cmd, "kudo", &mut out);
            return Ok(String::from_utf8_lossy(&out).into_owned());
        }
    };
    // the program as CompleteEnv names it: argv[0], made absolute when it is a relative path
    let mut completer = std::env::args_os()
        .next()
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("kudo"));
    if completer.components().count() > 1
        && let Ok(dir) = std::env::current_dir()
    {
        completer = dir.join(completer);
    }
    let mut out = Vec::new();
    dynamic
        .write_registration(
            "COMPLETE",
            cmd.get_name(),
            "kudo",
            &completer.to_string_lossy(),
            &mut out,
        )
        .map_err(Error::Stdout)?;
    Ok(String::from_utf8_lossy(&out).into_owned())
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
    resolver: kudo_source::repo::Resolver,
}

impl Loaded {
    /// The package's KudoOperator dependencies, resolved as the package was: paths on disk or
    /// in its archive, names in its repository.
    fn dependencies(&self) -> Result<Vec<kudo_pkg::dependency::Dependency>, Error> {
        kudo_pkg::dependency::resolve_with(&self.package, &self.resolver)
            .map_err(|e| Error::from(e).about(self.arg.display()))
    }
}

/// [`load`] with `--repo`, `--operator-version`, `--app-version` and `--plain-http`.
fn load_with(path: &Path, source: &SourceArgs) -> Result<Loaded, Error> {
    let source = source.to_source()?;
    let verify = source.verify.is_some();
    let home =
        kudo_source::repo::Home::from_env().map_err(|e| Error::from(e).about(path.display()))?;
    let resolver = kudo_source::repo::Resolver::new(home, source);
    if path.exists() {
        if verify {
            return Err(
                kudo_source::repo::RepoError::NothingToVerify(path.display().to_string()).into(),
            );
        }
        // On disk: the package's own errors (file:line), unchanged.
        return Ok(Loaded {
            arg: path.to_path_buf(),
            package: Package::load(path)?,
            resolver,
        });
    }
    let text = path.to_string_lossy();
    match resolver.package(&text) {
        Ok(r) => {
            if let Some(line) = r.provenance() {
                eprintln!("{line}");
            }
            Ok(Loaded {
                arg: path.to_path_buf(),
                package: r.package,
                resolver,
            })
        }
        Err(kudo_source::repo::RepoError::Io { .. }) => {
            Err(Error::refused(path.display(), Refusal::NoSuchPackage))
        }
        Err(e) => Err(not_found(path, &resolver, e)),
    }
}

/// Why a PACKAGE argument found neither on disk nor where it was looked up is not a package.
fn not_found(
    path: &Path,
    resolver: &kudo_source::repo::Resolver,
    e: kudo_source::repo::RepoError,
) -> Error {
    use kudo_source::repo::RepoError;
    let is_name = !path.to_string_lossy().contains("://");
    match e {
        RepoError::Find(_) | RepoError::Download { .. } | RepoError::Index { .. } if is_name => {
            let context = resolver.config().map(|c| c.context).unwrap_or_default();
            Error::refused(
                path.display(),
                Refusal::NoSuchName {
                    context,
                    source: Box::new(e),
                },
            )
        }
        e => Error::from(e).about(path.display()),
    }
}

/// The -P files, with the snippet sources that hide their lines holding secrets of `schema`; a
/// file that cannot be read or parsed stops the command, as a parameter problem.
fn value_inputs(
    schema: &kudo_policy::ParamSchema,
    args: &ValueArgs,
) -> Result<(Vec<Document>, crate::sources::Sources), Error> {
    let (docs, diags) = kudo_policy::values::read_files(&args.files);
    let sources = secret_sources(schema, &docs);
    if diags.is_empty() {
        Ok((docs, sources))
    } else {
        Err(Error::parameters(diags).with_sources(sources))
    }
}

/// Writes a file through a temporary file in the same directory and a rename: readers see the
/// old file or the new one, never half of it. An existing file keeps its permissions.
fn write_atomic(path: &Path, text: &str) -> Result<(), Error> {
    write_bytes_atomic(path, text.as_bytes())
}

/// [`write_atomic`] for bytes.
fn write_bytes_atomic(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    kudo_source::atomic::write(path, bytes, None).map_err(Error::io(path))
}

/// Writes to stdout; a closed pipe (`kudo params ... | head`) is not an error.
fn print(text: &str) -> Result<(), Error> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(Error::Stdout(e)),
    }
}

/// YAML text of a JSON value, which Kubernetes reads back as the same JSON (`"yes"` and
/// `"0777"` are quoted).
/// A table as kubectl prints one: no borders, columns padded, no trailing spaces.
pub(crate) fn table(headers: &[&str], rows: &[Vec<String>]) -> String {
    let mut table = comfy_table::Table::new();
    table.load_preset(comfy_table::presets::NOTHING);
    table.set_header(headers.to_vec());
    for row in rows {
        table.add_row(row.clone());
    }
    format!("{table}\n")
        .lines()
        .map(|l| format!("{}\n", l.trim_end()))
        .collect()
}

pub(crate) fn to_yaml(value: &serde_json::Value) -> String {
    kudo_yaml::manifest::to_yaml(value)
}

/// Snippet sources that never show the lines of the -P files that hold secret values.
fn secret_sources(schema: &kudo_policy::ParamSchema, docs: &[Document]) -> crate::sources::Sources {
    let mut sources = crate::sources::Sources::default();
    for d in docs {
        for p in kudo_policy::values::Redacted::new(schema, d.value()).hidden() {
            if let Some(loc) = d.location(p) {
                sources.hide_line(loc.path, loc.line);
            }
        }
    }
    sources
}

/// The CLI's async runtime: one thread, for one request at a time.
fn runtime() -> Result<tokio::runtime::Runtime, Error> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(Error::Runtime)
}

/// Computes and validates the parameters from the command line; prints the warnings.
fn resolve(pkg: &Package, args: &ValueArgs) -> Result<kudo_policy::values::Values, Error> {
    let (docs, mut diags) = kudo_policy::values::read_files(&args.files);
    let sources = secret_sources(pkg.schema(), &docs);
    let inputs = kudo_policy::values::Inputs {
        current: None,
        files: &docs,
        overrides: &args.overrides,
    };
    match pkg.resolve(&inputs) {
        Ok((values, warnings)) if diags.is_empty() => {
            crate::report::diagnostics(&warnings);
            Ok(values)
        }
        Ok((_, more)) | Err(more) => {
            diags.extend(more);
            Err(Error::parameters(diags).with_sources(sources))
        }
    }
}
