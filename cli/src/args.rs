//! The command line, as clap sees it: every command's arguments and their value parsers, in
//! one place that depends on no command (`cmd` reads these; nothing here reads `cmd`).
//! Commands turn them into `kudo-policy`, `kudo-pkg` and `kudo-client` inputs.

use std::path::PathBuf;
use std::time::Duration;

use clap::CommandFactory as _;
use clap::{ArgGroup, Args, Parser, Subcommand, ValueEnum};
use kudo_policy::values::{Edit, Override, Reset};

mod rollout;
pub use rollout::*;

/// kudo: operator packages with structured (JSON-schema) parameters.
#[derive(Debug, Parser)]
#[command(
    name = "kudo",
    version,
    about,
    long_about = None,
    propagate_version = true,
    after_help = crate::examples::KUDO
)]
pub struct Cli {
    /// The command to run.
    #[command(subcommand)]
    pub command: Command,
    /// Show no progress on stderr while --wait waits.
    #[arg(short, long, global = true)]
    pub quiet: bool,
}

/// Top-level commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Render the Kubernetes objects a plan applies, with the given parameters.
    ///
    /// Prints one multi-document YAML stream on stdout. Invalid parameters print nothing on
    /// stdout, every problem on stderr, and exit with code 1.
    #[command(after_help = crate::examples::TEMPLATE)]
    Template(TemplateArgs),
    /// Print the effective parameters: defaults, then -P files, then -p overrides.
    ///
    /// The package's defaults, then the -P files, then the -p overrides.
    ///
    /// The output is validated and can be fed back with -P. Values of writeOnly parameters are
    /// left out (and listed on stderr) unless --show-secrets is given.
    #[command(after_help = crate::examples::PARAMS)]
    Params(ParamsArgs),
    /// Explain a parameter as kubectl explains a field: type, default, plan, marks.
    ///
    /// Its type, default, constraints, description, the plan a change runs (its own trigger, an
    /// ancestor's, or the fallback), immutable, writeOnly, oldName, and its fields. With
    /// --instance, also its current value and who set it (writeOnly values are never shown).
    #[command(after_help = crate::examples::EXPLAIN)]
    Explain(ExplainArgs),
    /// Work on a package: verify, convert, list or add parameters, create, push, sign.
    ///
    /// Verify it, list its parameters, add one, convert it to structured parameters, list the
    /// container images it runs, create its archive; push it to an OCI registry, pull it, sign
    /// it, verify its signature, make a key pair.
    #[command(after_help = crate::examples::PACKAGE)]
    #[command(subcommand)]
    Package(PackageCommand),
    /// Manage operator repositories (KUDO's index.yaml, served over HTTP).
    ///
    /// Add, list, remove, choose the default, download their indexes into the cache, index a folder
    /// of packages.
    ///
    /// The configuration is $KUDO_HOME/repository/repositories.yaml when KUDO_HOME is set, else
    /// $XDG_CONFIG_HOME/kudo/repositories.yaml; with none, KUDO's `community` repository is the
    /// only one and the default. Indexes and downloaded packages are cached in
    /// $XDG_CACHE_HOME/kudo (packages by their sha256, checked against the index).
    #[command(subcommand, after_help = crate::examples::REPO)]
    Repo(RepoCommand),
    /// Search the repositories' cached indexes for operators, by name or description.
    ///
    /// Reads the cache only (`kudo repo update` fills it; a repository with no cached index
    /// yet is downloaded once): after an update, search works offline. A repository that
    /// cannot be read is a warning and the others are searched; exits with 1 only when none
    /// could be.
    #[command(after_help = crate::examples::SEARCH)]
    Search(SearchArgs),
    /// Change an Instance's parameters, in the cluster (--instance) or in a file (-f).
    ///
    /// With --instance NAME: reads the Instance and its OperatorVersion from the cluster, applies
    /// -P and -p, validates, refuses immutable changes and changes that would run two plans, prints
    /// the plan that will run and the changed paths, then writes only the changed values (a merge
    /// patch conditioned on the Instance's resourceVersion; re-read and redone on a conflict).
    /// --dry-run sends nothing; --wait waits for the plan to complete.
    ///
    /// With -f FILE --package PACKAGE: applies -P files (merged into the file's values) and -p
    /// overrides, validates the result against the package's schema, refuses changes to immutable
    /// parameters and updates whose changes would run two different plans, then rewrites the file
    /// in place: only the parameter values change, comments and layout stay. Prints the plan that
    /// the change runs and the changed paths. Any refusal leaves the file untouched and exits with
    /// 1.
    #[command(after_help = crate::examples::UPDATE)]
    Update(UpdateArgs),
    /// Upgrade an Instance to another package version, in the cluster or in a file.
    ///
    /// With PACKAGE --instance NAME: the installed OperatorVersion is the old version, PACKAGE the
    /// new; the new OperatorVersion is created when missing, then the Instance moves to it with the
    /// migrated parameters (resourceVersion precondition, retried on a conflict).
    ///
    /// With -f FILE --from OLD --package NEW: carries the values over by the new version's
    /// `oldName`s (moved, kept, defaulted, and values that land nowhere, all reported), then
    /// applies -P and -p, validates, checks immutable parameters, and writes the new values,
    /// apiVersion and operator version into the file. A refused upgrade leaves the file untouched
    /// and exits with 1.
    #[command(after_help = crate::examples::UPGRADE)]
    Upgrade(UpgradeArgs),
    /// Install kudo in a cluster: its CRDs, RBAC, manager and webhooks.
    ///
    /// Everything a cluster needs to run kudo: namespace, CRDs (v1beta2 stored, v1beta1 served,
    /// converted by the webhook), RBAC, the manager and webhook Deployments, the webhook Service
    /// and PodDisruptionBudget, and the admission webhook configurations.
    ///
    /// Applied with server-side apply (field manager kudo-init), in order; running it again is
    /// safe. The namespace is applied first, then every other object is checked by a
    /// server-side dry run, and only when all pass are they written: a refusal the API server
    /// can foresee leaves nothing but the namespace. --dry-run prints the objects instead. With
    /// --webhook-url and --ca-bundle the API server calls webhooks running outside the cluster
    /// (development, the end-to-end suite): the manager runs outside too, so neither Deployment
    /// nor the webhook Service is made, only the ServiceAccounts and RBAC the two processes run
    /// as.
    #[command(after_help = crate::examples::INIT)]
    Init(InitArgs),
    /// Install a package in a cluster: an Instance holding the -P/-p values.
    ///
    /// Its Operator and OperatorVersion (when missing) and an Instance (default name:
    /// OPERATOR-instance) holding the -P/-p values.
    ///
    /// The parameters are validated first, as `kudo params` does: nothing is written when
    /// anything is refused. An existing Instance, or an OperatorVersion of the same name with
    /// another content, is refused.
    #[command(after_help = crate::examples::INSTALL)]
    Install(InstallArgs),
    /// Show what an update, upgrade or rollback would change, or an Instance's drift.
    ///
    /// What an update or upgrade of an Instance would do, writing nothing: the values that change
    /// (secrets masked), the plan it runs or why it is refused, and for each object the plan
    /// applies a unified diff of the live object against a server-side dry run.
    ///
    /// `kudo diff --instance NAME -p ... -P ...` is the diff of `kudo update`;
    /// `kudo diff PACKAGE --instance NAME` the diff of `kudo upgrade`; `kudo diff NAME` (no
    /// change given) the drift of the objects kudo applied: each live object against a
    /// server-side dry run of what kudo applied, spec.drift.ignore honoured. Exit codes, as
    /// `diff` and `kubectl diff`: 0 nothing would change (no drift), 1 something would change
    /// (something drifted), 2 an error (a refused change, the cluster, an object the API
    /// server could not dry-run).
    #[command(after_help = crate::examples::DIFF)]
    Diff(DiffArgs),
    /// Add or remove an array item of an Instance's parameters (what -p cannot do).
    ///
    /// One array item (or object member) of an Instance's parameters, added or removed: KEP-33's
    /// `kudo patch`.
    ///
    /// The edit applies to the effective value (an array that only has its default is edited
    /// from the default), and the array is stored whole. The result is checked as `kudo update`
    /// checks it (validation, immutable, one plan per change, the plan in progress) and written
    /// with the same guard against concurrent writers.
    #[command(after_help = crate::examples::PATCH)]
    Patch(PatchArgs),
    /// Delete an Instance (its cleanup plan runs first) and say what stays.
    ///
    /// The manager runs the package's cleanup plan first, when it has one; --wait waits until the
    /// Instance is gone.
    ///
    /// Says what stays: the Instance's PersistentVolumeClaims (their data), its Operator and
    /// OperatorVersion, and which other Instances use that version. --prune deletes the
    /// operator's OperatorVersions no Instance uses, and the Operator when none is left.
    #[command(after_help = crate::examples::UNINSTALL)]
    Uninstall(UninstallArgs),
    /// The plans of an Instance: their status, or run one.
    #[command(after_help = crate::examples::PLAN)]
    #[command(subcommand)]
    Plan(PlanCommand),
    /// List Instances, Operators or OperatorVersions, or show one by NAME.
    ///
    /// Those of a namespace (-A: of all), as a table (-o wide for more columns), or -o json|yaml.
    #[command(after_help = crate::examples::GET)]
    Get(GetArgs),
    /// List the Instances of a namespace (-A: of all), as `kudo get instances`.
    ///
    /// Helm's `list`.
    #[command(after_help = crate::examples::LIST)]
    List(ListArgs),
    /// The plans of an Instance, as `kudo plan status NAME`.
    #[command(after_help = crate::examples::STATUS)]
    Status(StatusArgs),
    /// List the revisions of an Instance, one per change whose plan ran.
    ///
    /// One revision per change whose plan ran (install, update, upgrade, rollback, plan trigger,
    /// remediation), with its plan, how it ended, what changed (secrets masked) and who asked.
    #[command(after_help = crate::examples::HISTORY)]
    History(HistoryArgs),
    /// Roll an Instance back to a revision (default: the last one that completed).
    ///
    /// Back to a revision (default: the previous one that completed): its values, its
    /// OperatorVersion and its Secrets, through the same rules as every change. The values run the
    /// plans they trigger; back to another version, that version's `upgrade` plan runs. Refused,
    /// with nothing written, when an immutable value changed since, or the revision's
    /// OperatorVersion or Secret is gone.
    #[command(after_help = crate::examples::ROLLBACK)]
    Rollback(RollbackArgs),
    /// Print this client's version, and the cluster's when it is reachable.
    ///
    /// This client's version and, when a cluster is reachable, its Kubernetes version and whether
    /// kudo is installed there (the version each kudo CRD stores). --client: no cluster is
    /// contacted. An unreachable cluster is reported, not an error.
    #[command(after_help = crate::examples::VERSION)]
    Version(VersionArgs),
    /// Print the shell code that completes kudo's commands, flags and names.
    ///
    /// The shell then completes kudo's commands, flags and values, Instance names, plan names and
    /// namespaces included (read from the cluster as you type: the shell runs `kudo` itself at each
    /// TAB; an unreachable cluster completes nothing).
    ///
    /// Load it when the shell starts, so it always matches this kudo: `source <(kudo completion
    /// bash)` in ~/.bashrc, `source <(kudo completion zsh)` in ~/.zshrc, `kudo completion fish |
    /// source` in ~/.config/fish/config.fish. It is what `COMPLETE=SHELL kudo` prints.
    ///
    /// kudo is also a kubectl plugin: kubectl runs an executable named kubectl-kudo in $PATH
    /// for `kubectl kudo ...`. `cargo install` installs it beside kudo; else link it: `ln -s
    /// "$(command -v kudo)" ~/.local/bin/kubectl-kudo` (any folder of $PATH), and `kubectl plugin
    /// list` lists it. Completion stays kudo's: kubectl completes a plugin's arguments only
    /// through a kubectl_complete-kudo program, which kudo does not ship.
    #[command(after_help = crate::examples::COMPLETION)]
    Completion(CompletionArgs),
    /// Migrate the cluster's kudo objects to v1beta2 storage (KEP-33).
    ///
    /// Pre-flight conversion of every OperatorVersion and Instance (nothing is written if one
    /// fails), the CRDs with v1beta2 stored (their conversion webhook kept), every object rewritten
    /// through v1beta2 and read back compared, then v1beta1 removed from the CRDs'
    /// status.storedVersions.
    ///
    /// Every phase is idempotent: running it again is safe and resumes an interrupted run.
    /// --dry-run runs the pre-flight only and prints what would be rewritten.
    #[command(after_help = crate::examples::MIGRATE)]
    Migrate(MigrateArgs),
    /// Log in to an OCI registry or out; set a registry's signature policy.
    ///
    /// Log in (the credentials checked, then kept for `kudo package push` and `pull`), log out, or
    /// set the signature policy of a registry or of a path in it.
    #[command(after_help = crate::examples::REGISTRY)]
    #[command(subcommand)]
    Registry(RegistryCommand),
    /// Move many Instances of one operator to a new version in waves (fleet upgrades).
    ///
    /// Start a rollout, see where it stands, list them, pause, resume, abort or approve one
    /// (docs/rollouts.md). Waves halt on the first failure; a rollout may wait for a
    /// maintenance window or an approval.
    #[command(subcommand, after_help = crate::examples::ROLLOUT)]
    Rollout(RolloutCommand),
}

/// Where the cluster is: the flags every command that talks to one takes.
#[derive(Debug, Args)]
pub struct ConnectArgs {
    /// Kubeconfig file (default: $KUBECONFIG or ~/.kube/config, or the in-cluster config).
    #[arg(long, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,
    /// Kubeconfig context (default: the current one).
    #[arg(long, value_name = "NAME")]
    pub context: Option<String>,
}

/// `-n/--namespace` where no namespace applies: kubectl and Helm take -n with every command,
/// so kudo does too, and ignores it where it changes nothing.
#[derive(Debug, Args)]
pub struct NoNamespace {
    /// Ignored: this command works in no namespace (-n is accepted with every command, as
    /// kubectl and Helm accept it).
    #[arg(short = 'n', long, value_name = "NAMESPACE")]
    pub namespace: Option<String>,
}

/// `kudo init`.
#[derive(Debug, Args)]
pub struct InitArgs {
    /// Print the objects instead of applying them.
    #[arg(long)]
    pub dry_run: bool,
    #[command(flatten)]
    pub connect: ConnectArgs,
    /// Output format of --dry-run.
    #[arg(short = 'o', long = "output", value_enum, default_value = "yaml")]
    pub output: DataFormat,
    /// Namespace of the manager and the webhook.
    #[arg(short = 'n', long, default_value = kudo_crd::labels::NAMESPACE)]
    pub namespace: String,
    /// Image of the manager (default: kudo/kudo-manager:VERSION).
    #[arg(long, value_name = "IMAGE")]
    pub manager_image: Option<String>,
    /// Image of the webhook (default: kudo/kudo-webhook:VERSION).
    #[arg(long, value_name = "IMAGE")]
    pub webhook_image: Option<String>,
    /// Call the webhooks at this URL (https://HOST:PORT) instead of an in-cluster Service; the
    /// manager then runs outside the cluster too (no Deployment is made).
    #[arg(long, value_name = "URL", requires = "ca_bundle")]
    pub webhook_url: Option<String>,
    /// PEM CA bundle that signed the webhook's certificate.
    #[arg(long, value_name = "FILE")]
    pub ca_bundle: Option<PathBuf>,
    /// Replicas of the manager. 1 (the default): one runs the plans, elected through a Lease.
    /// More: the replicas share the Instances (kudo-manager --shards N), each running those
    /// of the shards whose Lease it holds; a dead replica's shards are taken over within 15 s.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=64), conflicts_with = "webhook_url")]
    pub manager_replicas: u32,
    /// Validity of the in-cluster webhook's self-managed certificates: `365d` (the default),
    /// `90d`, `3m`. Passed to the webhook Deployment as --cert-validity.
    #[arg(long, value_name = "DURATION", value_parser = duration, conflicts_with = "webhook_url")]
    pub webhook_cert_validity: Option<std::time::Duration>,
    /// Renew the webhook's certificate when it expires within this: `30d` (the default); shorter
    /// than the validity, at least 1m. Passed to the webhook Deployment as --cert-renew-before.
    #[arg(long, value_name = "DURATION", value_parser = duration, conflicts_with = "webhook_url")]
    pub webhook_cert_renew_before: Option<std::time::Duration>,
    /// After applying, wait until kudo answers: the CRDs established, kudo.dev/v1beta2
    /// served, the conversion and admission webhooks answering through the API server (a
    /// dry-run Instance, nothing written), and with the in-cluster webhook, the manager's
    /// Deployment available. The end of --wait-time exits with 1 and says what is missing.
    #[arg(long, conflicts_with = "dry_run")]
    pub wait: bool,
    /// How long --wait waits: `30s`, `5m`, `1h30m` (default 5m). Implies --wait.
    #[arg(long, value_name = "DURATION", value_parser = duration, conflicts_with = "dry_run")]
    pub wait_time: Option<std::time::Duration>,
}

/// `kudo completion`.
#[derive(Debug, Args)]
pub struct CompletionArgs {
    /// The shell.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
    #[command(flatten)]
    pub namespace: NoNamespace,
}

/// `kudo repo ...`.
#[derive(Debug, Subcommand)]
pub enum RepoCommand {
    /// Add a repository. Refused when the name exists, or when URL/index.yaml cannot be read
    /// (unless --skip-check). The index read is cached.
    #[command(after_help = crate::examples::REPO_ADD)]
    Add(RepoAddArgs),
    /// List the repositories; `*` marks the default (the context).
    #[command(after_help = crate::examples::REPO_LIST)]
    List(RepoListArgs),
    /// Remove repositories (and their cached indexes).
    #[command(after_help = crate::examples::REPO_REMOVE)]
    Remove(RepoRemoveArgs),
    /// Set the repository names are looked up in when --repo is not given.
    #[command(after_help = crate::examples::REPO_CONTEXT)]
    Context(RepoContextArgs),
    /// Download the index of every repository (or of those named) into the cache. A repository
    /// that cannot be read is a warning (its cached index is kept) and the others are still
    /// updated; exits with 1 only when none was updated.
    #[command(after_help = crate::examples::REPO_UPDATE)]
    Update(RepoUpdateArgs),
    /// Write DIR/index.yaml for the packages (DIR/*.tgz) in DIR, for a repository served from
    /// DIR: name, versions, description, maintainers, URL and sha256 digest of each. A file
    /// that is not a valid package is left out with a warning.
    #[command(after_help = crate::examples::REPO_INDEX)]
    Index(RepoIndexArgs),
}

/// `kudo repo add`.
#[derive(Debug, Args)]
pub struct RepoAddArgs {
    /// The repository's name.
    pub name: String,
    /// Its URL: where index.yaml is (http://, https://, file://, or a local folder).
    pub url: String,
    /// Add it without reading URL/index.yaml.
    #[arg(long)]
    pub skip_check: bool,
    #[command(flatten)]
    pub trust: TrustArgs,
    #[command(flatten)]
    pub namespace: NoNamespace,
}

/// A source's signature policy, as `kudo repo add` and `kudo registry trust` set it.
#[derive(Debug, Clone, Default, Args)]
pub struct TrustArgs {
    /// Check its packages' cosign signatures: `none`, `warn` (an unsigned package is used,
    /// with a warning) or `required` (refused). Default: required when --key is given, else
    /// none.
    #[arg(long, value_enum, value_name = "MODE")]
    pub verify: Option<kudo_source::trust::Mode>,
    /// A public key its packages are signed with (PEM, as cosign.pub); repeat for several.
    /// Kept as an absolute path.
    #[arg(long, value_name = "FILE")]
    pub key: Vec<PathBuf>,
}

/// `kudo repo list`.
#[derive(Debug, Args)]
pub struct RepoListArgs {
    /// Output format (default: a table).
    #[arg(short = 'o', long = "output", value_enum)]
    pub output: Option<DataFormat>,
    #[command(flatten)]
    pub namespace: NoNamespace,
}

/// `kudo repo remove`.
#[derive(Debug, Args)]
pub struct RepoRemoveArgs {
    /// The repositories' names.
    #[arg(required = true)]
    pub names: Vec<String>,
    #[command(flatten)]
    pub namespace: NoNamespace,
}

/// `kudo repo context`.
#[derive(Debug, Args)]
pub struct RepoContextArgs {
    /// The repository's name.
    pub name: String,
    #[command(flatten)]
    pub namespace: NoNamespace,
}

/// `kudo repo update`.
#[derive(Debug, Args)]
pub struct RepoUpdateArgs {
    /// The repositories to update (default: all).
    pub names: Vec<String>,
    #[command(flatten)]
    pub namespace: NoNamespace,
}

/// `kudo repo index`.
#[derive(Debug, Args)]
pub struct RepoIndexArgs {
    /// The folder holding the packages (*.tgz); index.yaml is written into it.
    pub dir: PathBuf,
    /// The URL the folder is served at: package URLs in the index are URL/FILE (default: the
    /// file names alone, relative to wherever the index is served).
    #[arg(long, value_name = "URL")]
    pub url: Option<String>,
    /// Merge this index into the new one: its entries are kept unless a package of the folder
    /// has the same name and versions (the folder's wins).
    #[arg(long, value_name = "FILE")]
    pub merge: Option<PathBuf>,
    /// Sign every entry with this private key (cosign's encrypted PEM): the entry carries
    /// cosign's simple-signing payload over the package's sha256 and its signature, which
    /// `--verify` and a repository's `verify: required` check. Password from $KUDO_PASSWORD
    /// (or $COSIGN_PASSWORD), else a prompt.
    #[arg(long, value_name = "FILE")]
    pub sign_key: Option<PathBuf>,
    #[command(flatten)]
    pub namespace: NoNamespace,
}

/// `kudo search`.
#[derive(Debug, Args)]
pub struct SearchArgs {
    /// What to look for in operator names and descriptions (case-insensitive; all when
    /// omitted).
    pub term: Option<String>,
    /// Search this repository only (default: every repository).
    #[arg(long, value_name = "NAME")]
    pub repo: Option<String>,
    /// List every version, not only the newest of each operator.
    #[arg(long)]
    pub all_versions: bool,
    /// Output format (default: a table).
    #[arg(short = 'o', long = "output", value_enum)]
    pub output: Option<DataFormat>,
    #[command(flatten)]
    pub namespace: NoNamespace,
}

/// `kudo package create`.
#[derive(Debug, Args)]
pub struct CreateArgs {
    /// The package directory.
    pub package: PathBuf,
    /// Directory to write NAME-APPVERSION_OPERATORVERSION.tgz (NAME-OPERATORVERSION.tgz without
    /// an appVersion) into (KUDO's --destination is accepted too).
    #[arg(
        short = 'd',
        long = "output-dir",
        visible_alias = "destination",
        value_name = "DIR",
        default_value = "."
    )]
    pub destination: PathBuf,
    /// Replace an existing archive of the same name.
    #[arg(long)]
    pub overwrite: bool,
    #[command(flatten)]
    pub namespace: NoNamespace,
}

/// What `update` and `upgrade` print.
#[derive(Debug, Args)]
pub struct FileEditArgs {
    /// The Instance manifest to change (kudo.dev/v1beta1 or v1beta2), edited in place.
    #[arg(short = 'f', long = "file", value_name = "INSTANCE_FILE")]
    pub file: Option<PathBuf>,
    /// Write nothing: with -f, print the change as a unified diff of the file (secret values
    /// masked); with --instance, print the plan and changed paths and send nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Output format of the report.
    #[arg(short = 'o', long = "output", value_enum, default_value = "text")]
    pub output: ReportFormat,
}

/// The -n of `update` and `upgrade`, which take it in the cluster and ignore it with -f.
const INSTANCE_NAMESPACE: &str = "With --instance: the Instance's namespace (default: the \
    context's namespace, else `default`). Ignored with -f: the file is edited as it is.";

/// `kudo update`: `-f FILE --package PACKAGE`, or `NAME` (`--instance NAME`) in the cluster.
#[derive(Debug, Args)]
#[command(group(ArgGroup::new("target").required(true).multiple(true)
    .args(["file", "instance_name", "instance"])))]
#[command(group(ArgGroup::new("named").multiple(true).args(["instance_name", "instance"])
    .conflicts_with("file")))]
#[command(group(ArgGroup::new("in_cluster").multiple(true)
    .args(["kubeconfig", "context", "wait", "wait_time", "force", "rollback_on_failure"]).conflicts_with("file")))]
#[command(mut_arg("namespace", |a| a.help(INSTANCE_NAMESPACE)))]
pub struct UpdateArgs {
    /// The Instance in the cluster to update (or --instance NAME; instead of -f).
    #[arg(id = "instance_name", value_name = "NAME", add = crate::complete::instances(Cli::command))]
    pub name: Option<String>,
    #[command(flatten)]
    pub edit: FileEditArgs,
    /// With -f: the Instance's operator package (directory or .tgz).
    #[arg(
        long,
        value_name = "PACKAGE",
        requires = "file",
        required_unless_present_any = ["instance", "instance_name"]
    )]
    pub package: Option<PathBuf>,
    #[command(flatten)]
    pub values: ValueArgs,
    /// Remove the value you set at this parameter (a JSON pointer, e.g. `resources/memory`), so
    /// its default applies again (repeatable; applied before -P and -p). A change of the
    /// effective value runs its plan and follows the immutable rule, like any other change.
    #[arg(long = "reset", value_name = "POINTER", value_parser = reset_arg())]
    pub resets: Vec<Reset>,
    /// The Instance in the cluster to update, as NAME (instead of -f).
    #[arg(long, value_name = "NAME", add = crate::complete::instances(Cli::command))]
    pub instance: Option<String>,
    #[command(flatten)]
    pub cluster: ClusterArgs,
    /// Supersede the plan the Instance has scheduled or running (a stuck plan) instead of
    /// refusing: that plan stops where it is and the plan of this change runs. The output says
    /// which run was superseded.
    #[arg(long)]
    pub force: bool,
    /// Run the plan of this change now, even outside the Instance's maintenance window
    /// (`spec.window`); the revision records it, with who asked.
    #[arg(long)]
    pub ignore_window: bool,
    #[command(flatten)]
    pub wait: WaitArgs,
    #[command(flatten)]
    pub remediation: RemediationArgs,
    #[command(flatten)]
    pub images: ImageArgs,
}

/// `kudo upgrade`: `-f FILE --from OLD --package NEW`, or `PACKAGE --instance NAME` in the
/// cluster.
#[derive(Debug, Args)]
#[command(group(ArgGroup::new("target").required(true).args(["file", "instance"])))]
#[command(group(ArgGroup::new("in_cluster").multiple(true)
    .args(["kubeconfig", "context", "wait", "wait_time", "force", "rollback_on_failure"]).conflicts_with("file")))]
#[command(mut_arg("namespace", |a| a.help(INSTANCE_NAMESPACE)))]
pub struct UpgradeArgs {
    /// With --instance: the package to upgrade to (a directory, a .tgz, an http(s):// URL, an
    /// oci:// reference or an operator name in a repository).
    #[arg(
        value_name = "PACKAGE",
        requires = "instance",
        required_unless_present = "file"
    )]
    pub new_package: Option<PathBuf>,
    #[command(flatten)]
    pub source: SourceArgs,
    #[command(flatten)]
    pub edit: FileEditArgs,
    /// With -f: the package of the version the Instance runs now.
    #[arg(
        long,
        value_name = "OLD_PACKAGE",
        requires = "file",
        required_unless_present = "instance"
    )]
    pub from: Option<PathBuf>,
    /// With -f: the package to upgrade to.
    #[arg(
        long,
        value_name = "NEW_PACKAGE",
        requires = "file",
        required_unless_present = "instance"
    )]
    pub package: Option<PathBuf>,
    #[command(flatten)]
    pub values: ValueArgs,
    /// The Instance in the cluster to upgrade (instead of -f).
    #[arg(long, value_name = "NAME", add = crate::complete::instances(Cli::command))]
    pub instance: Option<String>,
    #[command(flatten)]
    pub cluster: ClusterArgs,
    /// Let a value the Instance set go when the new version has no place for it and no
    /// `oldName` carries it (the preflight refuses the upgrade otherwise). A JSON pointer
    /// (leading / optional); repeatable; a value at or under it may go.
    #[arg(long = "allow-drop", value_name = "POINTER")]
    pub allow_drop: Vec<String>,
    /// Upgrade despite the preflight: every set value the new version drops goes, and a CRD
    /// change OLM's rules call unsafe is applied (each said as a warning; a value the new
    /// version's schema refuses is still refused). Also supersedes the plan the Instance has
    /// scheduled or running (a stuck plan) instead of refusing: that plan stops where it is
    /// and the plan of this change runs. The output says which run was superseded.
    #[arg(long)]
    pub force: bool,
    /// Run the plan of this change now, even outside the Instance's maintenance window
    /// (`spec.window`); the revision records it, with who asked.
    #[arg(long)]
    pub ignore_window: bool,
    #[command(flatten)]
    pub wait: WaitArgs,
    #[command(flatten)]
    pub remediation: RemediationArgs,
    #[command(flatten)]
    pub images: ImageArgs,
    #[command(flatten)]
    pub mirror: MirrorArgs,
}

impl UpgradeArgs {
    /// What the upgrade preflight lets through: `--allow-drop` and `--force`.
    pub fn allow(&self) -> kudo_policy::preflight::Allow {
        allow(&self.allow_drop, self.force)
    }
}

/// What the upgrade preflight lets through, from `--allow-drop` (leading `/` optional) and
/// `--force`.
pub fn allow(drop: &[String], force: bool) -> kudo_policy::preflight::Allow {
    kudo_policy::preflight::Allow {
        drop: drop
            .iter()
            .map(|p| format!("/{}", p.trim_start_matches('/')))
            .collect(),
        force,
    }
}

/// Parameter inputs shared by the commands that compute parameters.
#[derive(Debug, Default, Args)]
pub struct ValueArgs {
    /// Set a parameter: a JSON pointer (leading / optional) = a YAML value typed by the schema,
    /// e.g. `-p topology/0/datacenterName=DC1`, `-p nodeCount=5`,
    /// `-p 'topology/0/labels=[{key: team, value: data}]'`.
    /// Applied in order, after every -P file. Array items must exist; `-` (append) is refused.
    #[arg(short = 'p', long = "parameter", value_name = "KEY=VALUE", value_parser = override_arg())]
    pub overrides: Vec<Override>,
    /// A values file applied as an RFC 7396 JSON merge patch (objects merge, arrays replace,
    /// null removes a value so it falls back to its default). Applied in order, before -p.
    #[arg(short = 'P', long = "parameter-file", value_name = "FILE")]
    pub files: Vec<PathBuf>,
}

/// Where a PACKAGE named by name comes from, and which version: the flags of every command
/// that takes a package.
#[derive(Debug, Clone, Default, Args)]
pub struct SourceArgs {
    #[command(flatten)]
    pub lookup: LookupArgs,
    /// Talk plain HTTP (no TLS) to an oci:// registry, e.g. one on localhost.
    #[arg(long)]
    pub plain_http: bool,
    /// Require the package (and each of its dependencies) to be signed: by the key KEY (a PEM
    /// public key, as cosign.pub) with `--verify=KEY`, else by a key the configuration gives
    /// its repository or registry. An unsigned or wrongly signed package is refused before
    /// anything is cached or written. Without it, the configuration's policy applies.
    #[arg(
        long,
        value_name = "KEY",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = ""
    )]
    pub verify: Option<String>,
}

/// Which package a name or an untagged oci:// reference means.
#[derive(Debug, Args, Default, Clone)]
pub struct LookupArgs {
    /// The repository a PACKAGE name is looked up in (default: the context, `kudo repo
    /// context`). Also where the package's KudoOperator dependencies named by name are found.
    #[arg(long, value_name = "NAME")]
    pub repo: Option<String>,
    /// The operatorVersion of a PACKAGE named by name or oci:// reference: exact (`1.3.1`) or a
    /// semver range (`^1.3`, `~1.3.2`, `>=1.2 <2`, `1.3.x`); default the newest.
    #[arg(long, value_name = "VERSION")]
    pub operator_version: Option<String>,
    /// The appVersion of a PACKAGE named by name or oci:// reference, as --operator-version.
    #[arg(long, value_name = "VERSION")]
    pub app_version: Option<String>,
}

impl LookupArgs {
    /// The versions asked for; one that is neither a version nor a range is refused.
    pub fn want(&self) -> Result<kudo_pkg::repo::Want, crate::error::Error> {
        kudo_pkg::repo::Want::parse(
            self.operator_version.as_deref(),
            self.app_version.as_deref(),
        )
        .map_err(crate::error::Error::Index)
    }
}

impl SourceArgs {
    /// As the repository code takes it; a version that is neither a version nor a range is
    /// refused.
    pub fn to_source(&self) -> Result<kudo_source::repo::Source, crate::error::Error> {
        Ok(kudo_source::repo::Source {
            repo: self.lookup.repo.clone(),
            want: self.lookup.want()?,
            plain_http: self.plain_http,
            verify: self.verify.as_ref().map(PathBuf::from),
        })
    }
}

/// `kudo template`.
#[derive(Debug, Args)]
pub struct TemplateArgs {
    /// The package: a directory, a .tgz, an http(s):// URL, an oci:// reference or an
    /// operator name in a repository.
    pub package: PathBuf,
    #[command(flatten)]
    pub source: SourceArgs,
    #[command(flatten)]
    pub values: ValueArgs,
    /// Instance name (`Name` in templates).
    #[arg(long, default_value = "instance")]
    pub instance: String,
    /// Namespace (`Namespace` in templates).
    #[arg(long, short = 'n', default_value = "default")]
    pub namespace: String,
    /// The plan whose Apply tasks (and enabled Toggle tasks) are rendered.
    #[arg(long, default_value = "deploy")]
    pub plan: String,
    /// Output format: a multi-document YAML stream, or one JSON `List` of the objects.
    #[arg(short = 'o', long = "output", value_enum, default_value = "yaml")]
    pub output: DataFormat,
}

/// `kudo package images`.
#[derive(Debug, Args)]
pub struct ImagesArgs {
    /// The package: a directory, a .tgz, an http(s):// URL, an oci:// reference or an
    /// operator name in a repository.
    pub package: PathBuf,
    #[command(flatten)]
    pub source: SourceArgs,
    #[command(flatten)]
    pub values: ValueArgs,
    /// Instance name (`Name` in templates).
    #[arg(long, default_value = "instance")]
    pub instance: String,
    /// Namespace (`Namespace` in templates).
    #[arg(long, short = 'n', default_value = "default")]
    pub namespace: String,
    /// Also render each value of every parameter's finite domain (enum, boolean, a Toggle
    /// task's parameter), one parameter at a time, on top of the given values.
    #[arg(long)]
    pub all_values: bool,
    /// Check each image's cosign signature (either of cosign's formats) by the `images:`
    /// policy of kudo's configuration (verify: none|warn|required and keys, per registry
    /// prefix), resolving each tag to its digest. Prints the digest, the pinned reference and
    /// what the signature said; exits with 1 when an image under `required` is not signed by
    /// one of its keys. Verifications are cached by digest.
    #[arg(long)]
    pub verify_images: bool,
    /// Require every image to be signed by this public key (repeat for any of several):
    /// --verify-images with `required` for all images.
    #[arg(long, value_name = "FILE")]
    pub image_key: Vec<PathBuf>,
    /// Output format (default: a table, one row per place an image is used).
    #[arg(short = 'o', long = "output", value_enum)]
    pub output: Option<DataFormat>,
}

/// How `install`, `upgrade`, `update` and `patch` check the container images the change runs.
#[derive(Debug, Args, Default, Clone)]
pub struct ImageArgs {
    /// Require every image the change runs to be signed by this public key (cosign, either
    /// format; repeat for any of several). Without it, the `images:` policy of kudo's
    /// configuration applies (per registry prefix; none configured: no image is checked).
    /// Checked images are pinned to their digests in what the manager applies; an unsigned
    /// one under `required` refuses the change before anything is written.
    #[arg(long, value_name = "FILE")]
    pub image_key: Vec<PathBuf>,
    /// Talk plain HTTP (no TLS) to the images' registries (a registry on localhost).
    #[arg(long)]
    pub image_plain_http: bool,
}

/// `--mirror`: an air-gapped install (`docs/air-gap.md`).
#[derive(Debug, Args, Default, Clone)]
pub struct MirrorArgs {
    /// Install from this mirror (`oci://REGISTRY/PREFIX`), where `kudo package relocate`
    /// pushed a bundle: a package named by name comes from its copy there (its dependencies
    /// beside it), and every image the templates write runs from its copy, by digest, as the
    /// mirror's relocation map says; an image the map lacks refuses the change. Default: the
    /// `mirror:` of kudo's configuration. `--plain-http` applies to it.
    #[arg(long, value_name = "oci://REGISTRY/PREFIX")]
    pub mirror: Option<String>,
}

/// Output formats of data.
#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum DataFormat {
    /// YAML.
    Yaml,
    /// JSON.
    Json,
}

/// `kudo params`.
#[derive(Debug, Args)]
pub struct ParamsArgs {
    /// The package: a directory, a .tgz, an http(s):// URL, an oci:// reference or an
    /// operator name in a repository.
    pub package: PathBuf,
    #[command(flatten)]
    pub source: SourceArgs,
    #[command(flatten)]
    pub values: ValueArgs,
    /// Output format.
    #[arg(short = 'o', long = "output", value_enum, default_value = "yaml")]
    pub output: DataFormat,
    /// Print the values of writeOnly (secret) parameters too.
    #[arg(long)]
    pub show_secrets: bool,
    #[command(flatten)]
    pub namespace: NoNamespace,
}

/// `kudo package ...`.
#[derive(Debug, Subcommand)]
pub enum PackageCommand {
    /// Convert a package's params.yaml from kudo.dev/v1beta1 to kudo.dev/v1beta2 (JSON-schema).
    ///
    /// Prints the new params.yaml on stdout unless --output-dir or --in-place is given. Defaults
    /// are typed ("3" becomes 3 for an integer); nothing a parameter carries is dropped.
    #[command(after_help = crate::examples::CONVERT)]
    Convert(ConvertArgs),
    /// Check a package: it loads, its schema is valid, every default validates, every template
    /// renders with the defaults. Exits with 1 when there is an error.
    ///
    /// With --against OLD, also checks that upgrading from OLD to this package is safe, as an
    /// author's CI checks a new version before it is released: no cluster is needed.
    #[command(after_help = crate::examples::VERIFY)]
    Verify(VerifyArgs),
    /// List what a package defines.
    #[command(subcommand, after_help = crate::examples::LIST_PARAMETERS)]
    List(ListCommand),
    /// List the container images a package's plans run with the given parameters.
    ///
    /// Renders every plan (its Apply tasks and the Toggle tasks that are on, as `kudo template`
    /// renders them) and every Pipe task's Pod (with the `waiter` container kudo adds to it),
    /// and lists each image once, with where it is used: the plan, the task, the object and the
    /// JSON pointer of the field. Images are read from the containers, init containers and
    /// ephemeral containers of Pods, Deployments, StatefulSets, DaemonSets, ReplicaSets,
    /// ReplicationControllers, PodTemplates, Jobs and CronJobs.
    ///
    /// Not listed: an object of any other kind (a custom resource is not guessed at, even one
    /// holding a pod template), images a running program starts by itself, and the images of
    /// the packages KudoOperator tasks install: those are named (on stderr, or under
    /// `dependencies` with -o), not fetched. An image that is not a valid reference is an
    /// error naming it, its object and its field.
    ///
    /// --all-values also renders, one parameter at a time, each value of every finite domain:
    /// a parameter's `enum`, true and false for a boolean, and true and false for the
    /// parameter of a Toggle task. Not every combination of them: an image only two settings
    /// together select is not found. Parameters under an array item are not walked. At most
    /// 256 renders in all, else nothing is rendered.
    #[command(after_help = crate::examples::IMAGES)]
    Images(ImagesArgs),
    /// Add something to a package.
    #[command(subcommand, after_help = crate::examples::ADD_PARAMETER)]
    Add(AddCommand),
    /// Verify a package directory, then write it as NAME-VERSION.tgz (reproducible: the same
    /// package always gives the same bytes). Nothing is written when verify finds an error.
    #[command(after_help = crate::examples::CREATE)]
    Create(CreateArgs),
    /// Push a package to an OCI registry, as oci://REGISTRY/PATH/NAME:TAG.
    ///
    /// PACKAGE is a .tgz, pushed byte for byte, or a package directory, verified and archived
    /// in memory as `kudo package create` does (the same bytes, so the same digests). NAME is
    /// the package's name; TAG its versions, APPVERSION_OPERATORVERSION, or OPERATORVERSION
    /// alone when it has no appVersion (a `+` is written `__`). Pushing the same package again
    /// gives the same digests. Prints the reference, the manifest's digest and the package's
    /// sha256 (the digest a KUDO index.yaml lists). Credentials: those of `kudo registry login`,
    /// else Docker's config, else none.
    #[command(after_help = crate::examples::PUSH)]
    Push(PushArgs),
    /// Pull a package from an OCI registry and write it as NAME-VERSION.tgz.
    ///
    /// The reference names a tag (oci://REGISTRY/PATH/NAME:TAG). Only what `kudo package push`
    /// pushed is taken (a Helm chart or a container image is refused), and only when its bytes
    /// have the digest its manifest gives. Prints the file written.
    #[command(after_help = crate::examples::PULL)]
    Pull(PullArgs),
    /// Sign a package in an OCI registry with a cosign key.
    ///
    /// Writes what `cosign sign --key` 3.x writes by default: a Sigstore bundle (an in-toto
    /// statement naming the package's manifest digest, in a DSSE envelope signed with the
    /// private key) attached to the manifest as an OCI 1.1 referrer, through the referrers API,
    /// or where the registry lacks it through the fallback tag sha256-DIGEST, as cosign does.
    /// --bundle-format=legacy writes cosign 2's format instead: a simple-signing payload
    /// stored as the tag sha256-DIGEST.sig (added to the signatures already there). kudo
    /// accepts either format. Nothing is sent to a transparency log (Rekor): `cosign verify`
    /// needs --insecure-ignore-tlog. The key's password comes from $KUDO_PASSWORD (or
    /// $COSIGN_PASSWORD), else a prompt. Keyless signing (Fulcio, Rekor) is not offered: it
    /// needs the Internet.
    #[command(after_help = crate::examples::SIGN)]
    Sign(SignArgs),
    /// Check that a package is signed by one of the keys given, without installing it.
    ///
    /// PACKAGE is any signed form `kudo install` takes, resolved as install resolves it: an
    /// oci:// reference with a tag, or without one (the newest tag that --operator-version and
    /// --app-version accept), or a name in a repository (--repo, else the context; its index
    /// entry's signatures). For a registry package it reads cosign's signatures of the
    /// manifest digest in both of cosign's formats: Sigstore bundles among its referrers
    /// (cosign 3), then the .sig tag (cosign 2). No transparency log is checked, as with
    /// `cosign verify --insecure-ignore-tlog`, and it says so. Exits with 0 and names the key that signed, or with 1 saying what
    /// was found (no signature, none by these keys). A folder, a .tgz or an http(s):// URL
    /// carries no signature and is refused (exit 2).
    #[command(after_help = crate::examples::VERIFY_SIGNATURE)]
    VerifySignature(VerifySignatureArgs),
    /// Copy packages, their dependencies, every image they run and all their signatures into
    /// one archive, for a registry that cannot reach the Internet.
    ///
    /// PACKAGE is any form `kudo install` takes (a folder, a .tgz, an http(s):// URL, an
    /// oci:// reference, a name in a repository), resolved as install resolves it; its
    /// KudoOperator dependencies come along, each once. The images are those `kudo package
    /// images --all-values` lists for each package, copied by digest (an image index with every
    /// manifest it lists), with their blobs. Signatures: cosign's .sig tag and every referrer
    /// (Sigstore bundles) of each image and registry package; none found is said, not an
    /// error. FILE is an OCI image layout in a tar archive (oci-layout, index.json,
    /// blobs/sha256/...) holding a relocation map that says where each goes in a mirror;
    /// written whole or not at all. `kudo package relocate` pushes it to a mirror.
    #[command(after_help = crate::examples::BUNDLE)]
    Bundle(BundleArgs),
    /// Push an archive `kudo package bundle` wrote to a mirror registry.
    ///
    /// The archive is read whole and checked first (every blob against its digest, every
    /// manifest's references): a damaged archive is refused and nothing is pushed. Then each
    /// image goes to oci://MIRROR/PREFIX/REPOSITORY (its repository path without its
    /// registry: docker.io/library/zookeeper goes to PREFIX/library/zookeeper) by digest and
    /// under its tag, each package to PREFIX/NAME under its tag (as `kudo package push` tags
    /// it), each signature beside what it signs, and the relocation map to
    /// PREFIX/kudo-relocation:latest. Blobs the mirror has are not pushed again. `kudo install
    /// NAME --mirror oci://MIRROR/PREFIX` then installs from there, every image pinned to its
    /// copy by digest.
    #[command(after_help = crate::examples::RELOCATE)]
    Relocate(RelocateArgs),

    /// Make a key pair for signing: cosign.key (encrypted, mode 0600) and cosign.pub.
    ///
    /// The same files as `cosign generate-key-pair` (ECDSA P-256, the private key in cosign's
    /// encrypted PEM): cosign signs with kudo's key and kudo with cosign's. The password comes
    /// from $KUDO_PASSWORD (or $COSIGN_PASSWORD), else a prompt (asked twice). An existing
    /// file is never replaced.
    #[command(after_help = crate::examples::GENERATE_KEY)]
    GenerateKey(GenerateKeyArgs),
}

/// `kudo package bundle`.
#[derive(Debug, Args)]
pub struct BundleArgs {
    /// The packages: directories, .tgz files, http(s):// URLs, oci:// references or operator
    /// names in a repository.
    #[arg(value_name = "PACKAGE", required = true)]
    pub packages: Vec<PathBuf>,
    /// The archive to write (an OCI image layout in a tar file).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: PathBuf,
    #[command(flatten)]
    pub source: SourceArgs,
    /// Print the summary as data instead of text (-o names the archive).
    #[arg(long = "output-format", value_enum, value_name = "FORMAT")]
    pub output_format: Option<DataFormat>,
    #[command(flatten)]
    pub namespace: NoNamespace,
}

/// `kudo package relocate`.
#[derive(Debug, Args)]
pub struct RelocateArgs {
    /// The archive `kudo package bundle` wrote.
    #[arg(value_name = "FILE")]
    pub archive: PathBuf,
    /// The mirror: oci://REGISTRY/PREFIX (no tag).
    #[arg(value_name = "oci://MIRROR/PREFIX")]
    pub mirror: String,
    #[command(flatten)]
    pub registry: RegistryArgs,
    /// Print what was pushed as data instead of text.
    #[arg(short = 'o', long = "output", value_enum)]
    pub output: Option<DataFormat>,
    #[command(flatten)]
    pub namespace: NoNamespace,
}

/// `kudo package sign`.
#[derive(Debug, Args)]
pub struct SignArgs {
    /// The package: oci://REGISTRY/PATH/NAME:TAG.
    #[arg(value_name = "oci://REGISTRY/PATH/NAME:TAG")]
    pub reference: String,
    /// The private key (cosign's encrypted PEM).
    #[arg(long, value_name = "FILE", default_value = kudo_source::trust::PRIVATE_KEY_FILE)]
    pub key: PathBuf,
    /// The signature's format: `bundle` (cosign 3's default, a Sigstore bundle attached as a
    /// referrer) or `legacy` (cosign 2's `.sig` tag).
    #[arg(long, value_enum, value_name = "FORMAT", default_value = "bundle")]
    pub bundle_format: kudo_source::oci::signature::Format,
    #[command(flatten)]
    pub registry: RegistryArgs,
    /// Print what was signed as data instead of text.
    #[arg(short = 'o', long = "output", value_enum)]
    pub output: Option<DataFormat>,
    #[command(flatten)]
    pub namespace: NoNamespace,
}

/// `kudo package verify-signature`.
#[derive(Debug, Args)]
pub struct VerifySignatureArgs {
    /// The package: oci://REGISTRY/PATH/NAME[:TAG], or a name in a repository.
    #[arg(value_name = "PACKAGE")]
    pub reference: String,
    /// A public key (PEM, as cosign.pub); repeat to accept any of several.
    #[arg(long, value_name = "FILE", required = true)]
    pub key: Vec<PathBuf>,
    #[command(flatten)]
    pub lookup: LookupArgs,
    #[command(flatten)]
    pub registry: RegistryArgs,
    /// Print the result as data instead of text.
    #[arg(short = 'o', long = "output", value_enum)]
    pub output: Option<DataFormat>,
    #[command(flatten)]
    pub namespace: NoNamespace,
}

/// `kudo package generate-key`.
#[derive(Debug, Args)]
pub struct GenerateKeyArgs {
    /// The folder to write cosign.key and cosign.pub into.
    #[arg(
        short = 'd',
        long = "output-dir",
        value_name = "DIR",
        default_value = "."
    )]
    pub dir: PathBuf,
    #[command(flatten)]
    pub namespace: NoNamespace,
}

/// How to talk to a registry.
#[derive(Debug, Args)]
pub struct RegistryArgs {
    /// Speak plain HTTP, not HTTPS (a registry on localhost, in a test). Without it, a private
    /// CA's certificates can be given in a PEM file named by $KUDO_REGISTRY_CA_FILE.
    #[arg(long)]
    pub plain_http: bool,
}

/// `kudo package push`.
#[derive(Debug, Args)]
pub struct PushArgs {
    /// The package: a .tgz, or a package directory.
    pub package: PathBuf,
    /// Where to push: oci://REGISTRY/PATH (the package's name is appended).
    #[arg(value_name = "oci://REGISTRY/PATH")]
    pub target: String,
    #[command(flatten)]
    pub registry: RegistryArgs,
    /// Print what was pushed as data instead of text.
    #[arg(short = 'o', long = "output", value_enum)]
    pub output: Option<DataFormat>,
    #[command(flatten)]
    pub namespace: NoNamespace,
}

/// `kudo package pull`.
#[derive(Debug, Args)]
pub struct PullArgs {
    /// What to pull: oci://REGISTRY/PATH/NAME:TAG.
    #[arg(value_name = "oci://REGISTRY/PATH/NAME:TAG")]
    pub reference: String,
    /// Directory to write NAME-VERSION.tgz into.
    #[arg(
        short = 'd',
        long = "output-dir",
        value_name = "DIR",
        default_value = "."
    )]
    pub destination: PathBuf,
    /// Replace an existing archive of the same name.
    #[arg(long)]
    pub overwrite: bool,
    #[command(flatten)]
    pub registry: RegistryArgs,
    /// Print what was pulled as data instead of the file's path.
    #[arg(short = 'o', long = "output", value_enum)]
    pub output: Option<DataFormat>,
    #[command(flatten)]
    pub namespace: NoNamespace,
}

/// `kudo registry ...`.
#[derive(Debug, Subcommand)]
pub enum RegistryCommand {
    /// Check credentials against an OCI registry, then keep them for push and pull.
    ///
    /// They are kept in $KUDO_HOME/registry/config.json, else
    /// $XDG_CONFIG_HOME/kudo/registry/config.json (default ~/.config), in Docker's format,
    /// readable by you alone; kudo reads Docker's config (~/.docker/config.json) after its own.
    /// Credentials the registry refuses are not kept (exit code 1).
    #[command(after_help = crate::examples::REGISTRY)]
    Login(LoginArgs),
    /// Forget the credentials `kudo registry login` kept for a registry (Docker's config is
    /// left alone).
    #[command(after_help = crate::examples::REGISTRY)]
    Logout(LogoutArgs),
    /// Set the signature policy of a registry, or of a path in it: its packages' cosign
    /// signatures are checked by every command that takes a PACKAGE (`required`: an unsigned
    /// or wrongly signed package is refused; `warn`: used, with a warning).
    ///
    /// Kept in repositories.yaml (`registries:`); the longest prefix that matches a package's
    /// oci://REGISTRY/PATH/NAME applies. With no option, prints the policy that applies.
    #[command(after_help = crate::examples::REGISTRY_TRUST)]
    Trust(RegistryTrustArgs),
}

/// `kudo registry trust`.
#[derive(Debug, Args)]
pub struct RegistryTrustArgs {
    /// The registry, or a path in it: oci://HOST:PORT/PATH, the port and the path optional
    /// (oci:// too).
    #[arg(value_name = "oci://REGISTRY[/PATH]")]
    pub prefix: String,
    #[command(flatten)]
    pub trust: TrustArgs,
    /// Remove the policy set for exactly this prefix.
    #[arg(long, conflicts_with_all = ["verify", "key"])]
    pub remove: bool,
    #[command(flatten)]
    pub namespace: NoNamespace,
}

/// `kudo registry login`.
#[derive(Debug, Args)]
pub struct LoginArgs {
    /// The registry: HOST or HOST:PORT; or oci://HOST:PORT/PATH to check the credentials against
    /// that repository.
    #[arg(value_name = "REGISTRY")]
    pub registry: String,
    /// The user.
    #[arg(short = 'u', long)]
    pub username: String,
    /// Read the password (or token) from standard input.
    #[arg(long, conflicts_with = "password")]
    pub password_stdin: bool,
    /// The password (or token); it shows in the process list and the shell's history, prefer
    /// --password-stdin. Without either, a terminal asks for it.
    #[arg(short = 'p', long)]
    pub password: Option<String>,
    #[command(flatten)]
    pub registry_args: RegistryArgs,
    #[command(flatten)]
    pub namespace: NoNamespace,
}

/// `kudo registry logout`.
#[derive(Debug, Args)]
pub struct LogoutArgs {
    /// The registry: HOST or HOST:PORT.
    #[arg(value_name = "REGISTRY")]
    pub registry: String,
    #[command(flatten)]
    pub namespace: NoNamespace,
}

/// `kudo package add ...`.
#[derive(Debug, Subcommand)]
pub enum AddCommand {
    /// Add a parameter to params.yaml, asking for what the flags do not give.
    ///
    /// In a terminal, a wizard asks for every field not given as a flag: where the parameter
    /// goes (the top level, an object, or the items of an array of objects), its name, type,
    /// default (checked against the type and constraints as you type it), title, description,
    /// required, enum values, constraints that fit the type, trigger (among the plans an
    /// enclosing trigger allows), immutable, writeOnly. It shows the YAML to be added and asks
    /// for confirmation. params.yaml is then changed in place: comments, key order and
    /// indentation stay; the write is atomic. Ctrl-C or "no" leaves the file untouched.
    ///
    /// Without a terminal nothing is asked: --name and --type are needed (--path defaults to the
    /// top level), fields not given stay unset, and --yes is needed to write.
    #[command(after_help = crate::examples::ADD_PARAMETER)]
    Parameter(AddParameterArgs),
}

/// `kudo package add parameter`.
#[derive(Debug, Args)]
pub struct AddParameterArgs {
    /// The package directory.
    pub package: PathBuf,
    /// Where the parameter goes: a JSON pointer to an object parameter (`/backup/credentials`),
    /// `/` for the top level, `/topology/[]` (or `/topology/0`) for the items of an array of
    /// objects.
    #[arg(long, value_name = "POINTER")]
    pub path: Option<String>,
    /// The name.
    #[arg(long)]
    pub name: Option<String>,
    /// string, integer, number, boolean, object, array (of strings) or array:TYPE.
    #[arg(long = "type", value_name = "TYPE", value_parser = type_flag)]
    pub ty: Option<String>,
    /// The default, as YAML typed by the type (`3`, `true`, `[a, b]`).
    #[arg(long, value_name = "VALUE")]
    pub default: Option<String>,
    /// Title (v1beta1: displayName).
    #[arg(long)]
    pub title: Option<String>,
    /// Description.
    #[arg(long)]
    pub description: Option<String>,
    /// The parameter is required.
    #[arg(long)]
    pub required: bool,
    /// An allowed value (repeat for each).
    #[arg(long = "enum", value_name = "VALUE")]
    pub enum_values: Vec<String>,
    /// A constraint that fits the type, KEYWORD=VALUE: minimum=1, maxLength=63,
    /// pattern=^[a-z]+$, minItems=1, ... (repeat for each).
    #[arg(long = "constraint", value_name = "KEYWORD=VALUE", value_parser = constraint_flag)]
    pub constraints: Vec<String>,
    /// The plan a change of this parameter runs.
    #[arg(long, value_name = "PLAN")]
    pub trigger: Option<String>,
    /// The parameter can never change after install.
    #[arg(long)]
    pub immutable: bool,
    /// The value is a secret: never printed, masked in errors.
    #[arg(long)]
    pub write_only: bool,
    /// Write without asking for confirmation.
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// For a v1beta1 package: convert params.yaml to v1beta2 first (as `package convert`
    /// does; its comments are not kept), then add the parameter.
    #[arg(long)]
    pub convert: bool,
    #[command(flatten)]
    pub namespace: NoNamespace,
}

/// `kudo package list ...`.
#[derive(Debug, Subcommand)]
pub enum ListCommand {
    /// The parameters as a tree table: type, default, required, the plan a change runs,
    /// immutability (own, or inherited from an ancestor), and with --descriptions the
    /// description.
    ///
    /// v1beta1 packages are shown through their conversion to v1beta2. Defaults of writeOnly
    /// parameters are masked. The table fits the terminal; when stdout is not a terminal it is
    /// printed plain, without borders or width limit (unless --width is given).
    #[command(after_help = crate::examples::LIST_PARAMETERS)]
    Parameters(ListParametersArgs),
}

/// Output formats of `package list parameters`.
#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum ListFormat {
    /// The tree table.
    Table,
    /// One JSON object per parameter.
    Json,
    /// The same as YAML.
    Yaml,
    /// The v1beta2 parameter schema (for a v1beta1 package: the converted one).
    JsonSchema,
}

/// `kudo package list parameters`.
#[derive(Debug, Args)]
pub struct ListParametersArgs {
    /// The package: a directory, a .tgz, an http(s):// URL, an oci:// reference or an
    /// operator name in a repository.
    pub package: PathBuf,
    #[command(flatten)]
    pub source: SourceArgs,
    /// Add the description column.
    #[arg(long)]
    pub descriptions: bool,
    /// Only required parameters (and the objects they are in).
    #[arg(long)]
    pub required: bool,
    /// Print one JSON pointer per line instead of the table (array items as `/0`).
    #[arg(long, conflicts_with = "output")]
    pub names: bool,
    /// Output format.
    #[arg(short = 'o', long = "output", value_enum, default_value = "table")]
    pub output: ListFormat,
    /// Table width in columns (default: the terminal's width; unlimited when not a terminal).
    #[arg(long, value_name = "COLUMNS")]
    pub width: Option<u16>,
    #[command(flatten)]
    pub namespace: NoNamespace,
}

/// `kudo package convert`.
#[derive(Debug, Args)]
pub struct ConvertArgs {
    /// The package: a directory or a .tgz; or a params.yaml file alone (or a directory holding
    /// only one), whose converted parameters are printed, written in place or into --output-dir.
    pub package: PathBuf,
    /// Write the converted package (all files) into this new directory.
    #[arg(
        short = 'd',
        long = "output-dir",
        value_name = "DIR",
        conflicts_with = "in_place"
    )]
    pub output: Option<PathBuf>,
    /// Replace the package's params.yaml (a directory package only).
    #[arg(long)]
    pub in_place: bool,
    #[command(flatten)]
    pub namespace: NoNamespace,
}

/// Output formats of reports.
#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum ReportFormat {
    /// Human-readable.
    Text,
    /// JSON.
    Json,
}

/// `kudo package verify`.
#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// The package: a directory, a .tgz, an http(s):// URL, an oci:// reference or an
    /// operator name in a repository.
    pub package: PathBuf,
    /// Also check the upgrade from OLD, the previous version of the operator (a directory, a
    /// .tgz, an http(s):// URL, an oci:// reference or an operator name in a repository, read
    /// as PACKAGE is): both parameter schemas compared, and every CRD both apply (rendered with
    /// the defaults) judged by OLM's CRD upgrade-safety rules, with no cluster and no Instance.
    /// A finding is unsafe when it may break an Instance that exists (a parameter dropped or
    /// restricted, a CRD field newly required...): then kudo exits with 1, as `kudo upgrade`
    /// would refuse it for such an Instance. A changed default or immutability is only noted.
    /// --repo, --operator-version and --app-version choose OLD when it is a name (the released
    /// version to compare a working copy with); they are ignored for a PACKAGE on disk.
    #[arg(long, value_name = "OLD")]
    pub against: Option<PathBuf>,
    #[command(flatten)]
    pub source: SourceArgs,
    /// Output format.
    #[arg(short = 'o', long = "output", value_enum, default_value = "text")]
    pub output: ReportFormat,
    #[command(flatten)]
    pub namespace: NoNamespace,
}

// ---------------------------------------------------------------------------------------------
// `kudo explain`

/// `kudo explain`.
#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// The package: a directory, a .tgz, an http(s):// URL, an oci:// reference or an operator
    /// name in a repository. Not with --instance (then the first argument is POINTER).
    #[arg(value_name = "PACKAGE")]
    pub package: Option<String>,
    /// The parameter, a JSON pointer (`/topology/0/datacenterName`; the leading `/` optional;
    /// array items by index). None: the top level.
    #[arg(value_name = "POINTER")]
    pub pointer: Option<String>,
    /// Explain the parameters of this Instance in the cluster (its OperatorVersion's package),
    /// with their current values.
    #[arg(long, value_name = "NAME", add = crate::complete::instances(Cli::command))]
    pub instance: Option<String>,
    /// Output format (`-o json`: the fields are listed in docs/explain.md).
    #[arg(short = 'o', long = "output", value_enum, default_value = "text")]
    pub output: ExplainFormat,
    #[command(flatten)]
    pub source: SourceArgs,
    #[command(flatten)]
    pub cluster: ClusterArgs,
}

/// Output formats of `kudo explain`.
#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum ExplainFormat {
    /// kubectl explain's layout.
    Text,
    /// One JSON object.
    Json,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::complete::Typed;
    use clap::CommandFactory;

    fn words(w: &[&str]) -> Vec<std::ffi::OsString> {
        w.iter().map(std::ffi::OsString::from).collect()
    }

    #[test]
    /// The completers read kudo's own command line (here, not in `complete`, which does not
    /// depend on the arguments).
    fn typed_words_give_the_cluster_namespace_and_instance() {
        let t = Typed::from_words(
            Cli::command(),
            &words(&[
                "kudo",
                "plan",
                "trigger",
                "--kubeconfig",
                "/k",
                "--context=c",
                "-n",
                "ns",
                "my-kafka",
                "--name",
                "",
            ]),
        );
        assert_eq!(
            t,
            Typed {
                kubeconfig: Some("/k".into()),
                context: Some("c".into()),
                namespace: Some("ns".into()),
                instance: Some("my-kafka".into()),
                what: None,
            }
        );
        let t = Typed::from_words(
            Cli::command(),
            &words(&["kudo", "plan", "trigger", "--instance", "i", "--name", "de"]),
        );
        assert_eq!(t.instance.as_deref(), Some("i"));
        let t = Typed::from_words(
            Cli::command(),
            &words(&["kudo", "plan", "trigger", "--name", "deploy"]),
        );
        assert_eq!(t.instance, None);
        let t = Typed::from_words(Cli::command(), &words(&["kudo", "patch", "p", "--remove"]));
        assert_eq!(t.instance.as_deref(), Some("p"));
        // the word being completed is no Instance yet
        let t = Typed::from_words(Cli::command(), &words(&["kudo", "uninstall", ""]));
        assert_eq!(t, Typed::default());
        // get: NAME is the object, not an Instance to read plans from
        let t = Typed::from_words(
            Cli::command(),
            &words(&["kudo", "get", "operators", "x", "-nfoo"]),
        );
        assert_eq!(t.what.as_deref(), Some("operators"));
        assert_eq!(t.namespace.as_deref(), Some("foo"));
        assert_eq!(t.instance, None);
        // nothing sensible typed
        assert_eq!(
            Typed::from_words(Cli::command(), &words(&["kudo", "--nope"])),
            Typed::default()
        );
    }

    #[test]
    fn the_command_line_is_consistent() {
        Cli::command().debug_assert();
    }

    /// The commands without subcommands, as the words that name them (`["repo", "add"]`).
    fn leaves(cmd: &clap::Command, path: Vec<String>, out: &mut Vec<Vec<String>>) {
        let subs: Vec<&clap::Command> = cmd
            .get_subcommands()
            .filter(|c| c.get_name() != "help")
            .collect();
        for sub in &subs {
            let mut p = path.clone();
            p.push(sub.get_name().to_string());
            leaves(sub, p, out);
        }
        if subs.is_empty() {
            out.push(path);
        }
    }

    /// The namespace `-n` gave, in the matches of the command named by `args`.
    fn namespace(args: &[&str]) -> Result<Option<String>, clap::Error> {
        let mut m = &Cli::command().try_get_matches_from(args)?;
        while let Some((_, sub)) = m.subcommand() {
            m = sub;
        }
        Ok(m.get_one::<String>("namespace").cloned())
    }

    #[test]
    fn every_command_takes_a_namespace_as_kubectl_and_helm_do() {
        // The least each command needs, to which `-n x` is added. Every command is here: the
        // walk below fails on one that is not.
        let cases: &[&[&str]] = &[
            &["template", "pkg"],
            &["params", "pkg"],
            &["explain", "pkg", "nodeCount"],
            &["explain", "--instance", "i", "nodeCount"],
            &["package", "convert", "pkg"],
            &["package", "verify", "pkg"],
            &["package", "list", "parameters", "pkg"],
            &["package", "images", "pkg"],
            &["package", "add", "parameter", "pkg"],
            &["package", "create", "pkg"],
            &["package", "push", "pkg", "oci://r/p"],
            &["package", "pull", "oci://r/p/n:1"],
            &["package", "sign", "oci://r/p/n:1"],
            &["package", "verify-signature", "oci://r/p/n:1", "--key", "k"],
            &["package", "generate-key"],
            &["package", "bundle", "pkg", "-o", "b.tar"],
            &["package", "relocate", "b.tar", "oci://r/p"],
            &["repo", "add", "name", "url"],
            &["repo", "list"],
            &["repo", "remove", "name"],
            &["repo", "context", "name"],
            &["repo", "update"],
            &["repo", "index", "dir"],
            &["search"],
            // in the cluster, and with -f, where -n is ignored
            &["update", "--instance", "i"],
            &["update", "i", "-p", "a=1"],
            &["update", "-f", "i.yaml", "--package", "pkg"],
            &["upgrade", "pkg", "--instance", "i"],
            &[
                "upgrade",
                "-f",
                "i.yaml",
                "--from",
                "old",
                "--package",
                "new",
            ],
            &["init"],
            &["install", "pkg"],
            &["uninstall", "--instance", "i"],
            &["uninstall", "i"],
            &["diff", "--instance", "i"],
            &["diff", "pkg", "--instance", "i"],
            &["patch", "i", "--add", "a/-=1"],
            &["patch", "--instance", "i", "--remove", "a/0"],
            &["plan", "status", "--instance", "i"],
            &["plan", "status", "i"],
            &["plan", "trigger", "--instance", "i", "--name", "p"],
            &["plan", "trigger", "i", "--name", "p"],
            &["get", "instances"],
            &["get", "instances", "i"],
            &["list"],
            &["status", "i"],
            &["rollback", "i"],
            &["history", "i"],
            &["version"],
            &["completion", "bash"],
            &["migrate"],
            &["registry", "login", "r", "-u", "me"],
            &["registry", "logout", "r"],
            &["registry", "trust", "r"],
            &["rollout", "start", "r", "pkg", "-l", "a=b"],
            &["rollout", "status", "r"],
            &["rollout", "list"],
            &["rollout", "pause", "r"],
            &["rollout", "resume", "r"],
            &["rollout", "abort", "r", "--rollback"],
            &["rollout", "approve", "r"],
        ];
        let mut commands = Vec::new();
        leaves(&Cli::command(), Vec::new(), &mut commands);
        for command in &commands {
            assert!(
                cases.iter().any(|c| c.starts_with(&command.iter().map(String::as_str).collect::<Vec<_>>())),
                "no case for `kudo {}`",
                command.join(" ")
            );
        }
        for case in cases {
            let mut args = vec!["kudo"];
            args.extend_from_slice(case);
            for n in [&["-n", "x"][..], &["--namespace=x"]] {
                let mut args = args.clone();
                args.extend_from_slice(n);
                assert_eq!(
                    namespace(&args).map_err(|e| e.to_string()),
                    Ok(Some("x".to_string())),
                    "{args:?}"
                );
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The cluster commands

/// Where the cluster is.
#[derive(Debug, Args)]
pub struct ClusterArgs {
    #[command(flatten)]
    pub connect: ConnectArgs,
    /// Namespace (default: the context's namespace, else `default`).
    #[arg(short = 'n', long, value_name = "NAMESPACE", add = crate::complete::namespaces(Cli::command))]
    pub namespace: Option<String>,
}

/// `--wait` and `--wait-time`.
#[derive(Debug, Args)]
pub struct WaitArgs {
    /// Wait until the manager has run the plan to COMPLETE; a FATAL_ERROR or the end of
    /// --wait-time exits with 1.
    #[arg(long)]
    pub wait: bool,
    /// How long --wait waits: `30s`, `5m`, `1h30m` (default 5m). Implies --wait.
    #[arg(long, value_name = "DURATION", value_parser = duration)]
    pub wait_time: Option<Duration>,
}

/// `kudo install`.
#[derive(Debug, Args)]
pub struct InstallArgs {
    /// The package: a directory, a .tgz, an http(s):// URL, an oci:// reference or an
    /// operator name in a repository.
    pub package: PathBuf,
    #[command(flatten)]
    pub source: SourceArgs,
    /// Name of the Instance (default: OPERATOR-instance).
    #[arg(long, value_name = "NAME")]
    pub instance: Option<String>,
    /// The ServiceAccount of the namespace whose rights the manager acts with for the Instance
    /// (spec.serviceAccountName). It is created when missing, with a RoleBinding to `admin` in
    /// the namespace, and a ClusterRoleBinding to `cluster-admin` when the package has
    /// cluster-scoped objects: with your own rights, so you can only grant what you hold.
    #[arg(long, value_name = "NAME", default_value = kudo_crd::labels::DEFAULT_SERVICE_ACCOUNT)]
    pub service_account: String,
    /// Create the namespace (-n) when it does not exist, with your own rights (as Helm's
    /// --create-namespace). With --dry-run: only checked, nothing written.
    #[arg(long)]
    pub create_namespace: bool,
    #[command(flatten)]
    pub values: ValueArgs,
    #[command(flatten)]
    pub cluster: ClusterArgs,
    #[command(flatten)]
    pub wait: WaitArgs,
    /// Write nothing: check the parameters and the cluster (an existing Instance, a differing
    /// OperatorVersion), send the Instance as a server-side dry run when its OperatorVersion
    /// exists (the API server and kudo's admission webhook check it), and say what would be
    /// created.
    #[arg(long, conflicts_with_all = ["wait", "wait_time"])]
    pub dry_run: bool,
    /// With --dry-run: print the objects that would be created (a `List`) instead of a summary.
    #[arg(short = 'o', long = "output", value_enum, requires = "dry_run")]
    pub output: Option<DataFormat>,
    #[command(flatten)]
    pub images: ImageArgs,
    #[command(flatten)]
    pub mirror: MirrorArgs,
}

/// The Instance a command works on: `NAME`, as kubectl and Helm name what they work on, or
/// `--instance NAME` (both given must agree).
#[derive(Debug, Args)]
#[group(id = "which_instance", required = true, multiple = true)]
pub struct InstanceArg {
    /// The Instance (or --instance NAME).
    #[arg(id = "instance_name", value_name = "NAME", add = crate::complete::instances(Cli::command))]
    pub name: Option<String>,
    /// The Instance, as NAME.
    #[arg(long, value_name = "NAME", add = crate::complete::instances(Cli::command))]
    pub instance: Option<String>,
}

impl InstanceArg {
    /// The name given; a usage error when NAME and --instance differ.
    pub fn get(&self) -> Result<String, crate::error::Error> {
        either(self.name.as_deref(), self.instance.as_deref())
            .map(|n| n.unwrap_or_default().to_string())
    }
}

/// NAME or --instance NAME; a usage error when both are given and differ.
pub fn either<'a>(
    positional: Option<&'a str>,
    flag: Option<&'a str>,
) -> Result<Option<&'a str>, crate::error::Error> {
    match (positional, flag) {
        (Some(a), Some(b)) if a != b => Err(crate::error::Error::Usage(format!(
            "NAME ({a}) and --instance ({b}) name different Instances: give one"
        ))),
        (a, b) => Ok(a.or(b)),
    }
}

/// `kudo uninstall`.
#[derive(Debug, Args)]
pub struct UninstallArgs {
    #[command(flatten)]
    pub instance: InstanceArg,
    #[command(flatten)]
    pub cluster: ClusterArgs,
    /// Once the Instance is gone (this waits for it), delete the OperatorVersions of its
    /// operator that no Instance of the namespace uses, then the Operator when none is left.
    #[arg(long)]
    pub prune: bool,
    #[command(flatten)]
    pub wait: WaitArgs,
}

/// `kudo plan ...`.
#[derive(Debug, Subcommand)]
pub enum PlanCommand {
    /// The plans of an Instance: the active plan as a tree of phases and steps with their
    /// statuses, and the status of every other plan. --wait waits until the active plan is
    /// COMPLETE or FATAL_ERROR (exit 1 on FATAL_ERROR).
    #[command(after_help = crate::examples::PLAN)]
    Status(StatusArgs),
    /// Run a plan of an Instance now (sets spec.planExecution with a fresh run uid).
    ///
    /// Refused while another plan is scheduled or running (KUDO's rule; triggering the plan
    /// that runs restarts it), unless --force supersedes that run.
    #[command(after_help = crate::examples::PLAN)]
    Trigger(TriggerArgs),
}

/// `kudo plan status`.
#[derive(Debug, Args)]
pub struct StatusArgs {
    #[command(flatten)]
    pub instance: InstanceArg,
    /// Print the status as data instead of the tree.
    #[arg(short = 'o', long = "output", value_enum)]
    pub output: Option<DataFormat>,
    #[command(flatten)]
    pub cluster: ClusterArgs,
    #[command(flatten)]
    pub wait: WaitArgs,
}

/// `kudo plan trigger`.
#[derive(Debug, Args)]
pub struct TriggerArgs {
    /// The plan to run.
    #[arg(long, value_name = "PLAN", add = crate::complete::plans(Cli::command))]
    pub name: String,
    #[command(flatten)]
    pub instance: InstanceArg,
    #[command(flatten)]
    pub cluster: ClusterArgs,
    /// Supersede the plan the Instance has scheduled or running instead of refusing the
    /// trigger: that plan stops where it is and this one runs. The output says which run was
    /// superseded.
    #[arg(long)]
    pub force: bool,
    /// Run the plan of this change now, even outside the Instance's maintenance window
    /// (`spec.window`); the revision records it, with who asked.
    #[arg(long)]
    pub ignore_window: bool,
    #[command(flatten)]
    pub wait: WaitArgs,
}

/// What `kudo get` lists.
#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum What {
    /// Instances.
    Instances,
    /// Operators.
    Operators,
    /// OperatorVersions.
    Operatorversions,
}

/// `kudo get`.
#[derive(Debug, Args)]
pub struct GetArgs {
    /// What to list.
    #[arg(value_enum)]
    pub what: What,
    /// Show this one object only (not with -A).
    #[arg(
        value_name = "NAME",
        conflicts_with = "all_namespaces",
        add = crate::complete::instances(Cli::command)
    )]
    pub name: Option<String>,
    #[command(flatten)]
    pub list: ListArgs,
}

/// `kudo list`, and how `kudo get` lists.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// List the objects of every namespace (a NAMESPACE column comes first), as kubectl -A.
    #[arg(short = 'A', long)]
    pub all_namespaces: bool,
    /// Output format: a wider table, or the objects as data (a v1 List; one object by NAME
    /// as itself) instead of the table.
    #[arg(short = 'o', long = "output", value_enum)]
    pub output: Option<GetFormat>,
    #[command(flatten)]
    pub cluster: ClusterArgs,
}

/// Output formats of `kudo get`.
#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum GetFormat {
    /// The table with more columns (AGE; an Instance's operator and ServiceAccount).
    Wide,
    /// YAML.
    Yaml,
    /// JSON.
    Json,
}

/// `kudo history`.
#[derive(Debug, Args)]
pub struct HistoryArgs {
    /// The Instance.
    #[arg(value_name = "NAME", add = crate::complete::instances(Cli::command))]
    pub name: String,
    /// Output format (default: a table).
    #[arg(short = 'o', long = "output", value_enum)]
    pub output: Option<DataFormat>,
    #[command(flatten)]
    pub cluster: ClusterArgs,
}

/// `kudo rollback`.
#[derive(Debug, Args)]
pub struct RollbackArgs {
    /// The Instance (Helm's RELEASE).
    #[arg(value_name = "NAME", add = crate::complete::instances(Cli::command))]
    pub name: String,
    /// The revision to go back to (`kudo history NAME` lists them); default: the previous one
    /// whose plan completed.
    #[arg(value_name = "REVISION")]
    pub revision: Option<i64>,
    /// Decide and report; write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Supersede the plan the Instance has scheduled or running instead of refusing.
    #[arg(long)]
    pub force: bool,
    /// Run the plan of this change now, even outside the Instance's maintenance window
    /// (`spec.window`); the revision records it, with who asked.
    #[arg(long)]
    pub ignore_window: bool,
    /// Output format.
    #[arg(short = 'o', long = "output", value_enum, default_value = "text")]
    pub output: ReportFormat,
    #[command(flatten)]
    pub wait: WaitArgs,
    #[command(flatten)]
    pub cluster: ClusterArgs,
}

/// `--rollback-on-failure` and `--timeout` of `kudo update` and `kudo upgrade`.
#[derive(Debug, Args)]
pub struct RemediationArgs {
    /// Should the plan of this change fail (FATAL_ERROR, or run past --timeout), the manager
    /// rolls the Instance back to the last revision that completed (Helm 4's flag). For this
    /// change only; `spec.remediation` sets it for every change.
    #[arg(long)]
    pub rollback_on_failure: bool,
    /// With --rollback-on-failure: how long the plan may run before it counts as failed
    /// (`30s`, `5m`, `1h30m`).
    #[arg(long, value_name = "DURATION", requires = "rollback_on_failure", value_parser = go_duration)]
    pub timeout: Option<String>,
}

impl RemediationArgs {
    /// The remediation these flags ask for.
    pub fn remediation(&self) -> Option<kudo_crd::common::Remediation> {
        self.rollback_on_failure
            .then(|| kudo_crd::common::Remediation {
                retries: None,
                on_failure: Some(kudo_crd::common::OnFailure::Rollback),
                timeout: self.timeout.clone(),
            })
    }
}

/// A Go duration as `spec.remediation.timeout` takes it, kept as written.
fn go_duration(text: &str) -> Result<String, String> {
    kudo_crd::revision::parse_duration(text)
        .map(|_| text.to_string())
        .ok_or_else(|| format!("`{text}` is not a duration: write it as 30s, 5m or 1h30m"))
}

/// `kudo version`.
#[derive(Debug, Args)]
pub struct VersionArgs {
    /// Only this client's version: no cluster is contacted.
    #[arg(long)]
    pub client: bool,
    /// Output format.
    #[arg(short = 'o', long = "output", value_enum, default_value = "text")]
    pub output: VersionFormat,
    #[command(flatten)]
    pub connect: ConnectArgs,
    #[command(flatten)]
    pub namespace: NoNamespace,
}

/// Output formats of `kudo version`.
#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum VersionFormat {
    /// Human-readable.
    Text,
    /// JSON.
    Json,
    /// YAML.
    Yaml,
}

/// `kudo migrate`.
#[derive(Debug, Args)]
pub struct MigrateArgs {
    /// Pre-flight only: list and convert every object, print what would be rewritten, write
    /// nothing.
    #[arg(long)]
    pub dry_run: bool,
    #[command(flatten)]
    pub connect: ConnectArgs,
    /// Print the report as JSON or YAML instead of text.
    #[arg(short = 'o', long = "output", value_enum)]
    pub output: Option<DataFormat>,
    #[command(flatten)]
    pub namespace: NoNamespace,
}

/// A `--wait-time` value: `30s`, `5m`, `1h30m`.
pub(crate) fn duration(text: &str) -> Result<std::time::Duration, String> {
    kudo_client::commands::parse_duration(text)
        .ok_or_else(|| format!("not a duration: {text:?} (examples: 30s, 5m, 1h30m)"))
}

/// `--type`, as clap checks it (a wrong one is a usage error).
pub(crate) fn type_flag(s: &str) -> Result<String, String> {
    match kudo_pkg::author::ParamType::parse(s) {
        Some(_) => Ok(s.to_string()),
        None => Err(
            "use string, integer, number, boolean, object, array or array:TYPE (array:integer)"
                .into(),
        ),
    }
}

/// `--constraint`, as clap checks it.
pub(crate) fn constraint_flag(s: &str) -> Result<String, String> {
    match s.split_once('=') {
        Some((k, _)) if !k.trim().is_empty() => Ok(s.to_string()),
        _ => Err("expected KEYWORD=VALUE (minimum=1, maxLength=63, pattern=^[a-z]+$)".into()),
    }
}

/// The value parser of an argument given once per value (`-p`, `--reset`, `--add`,
/// `--remove`): each occurrence parsed, where the command line is read, into the typed value
/// every crate after this one takes, with its 1-based position among that argument's
/// occurrences (clap calls a value parser once per occurrence, in command-line order, on a
/// command built for this one parse). A refusal is a usage error (exit 2) whose sentence names
/// the argument's position, never its value.
#[derive(Clone)]
pub(crate) struct Numbered<T> {
    parse: fn(usize, &str) -> Result<T, kudo_diag::Diagnostic>,
    seen: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

impl<T> Numbered<T> {
    fn new(parse: fn(usize, &str) -> Result<T, kudo_diag::Diagnostic>) -> Numbered<T> {
        Numbered {
            parse,
            seen: Default::default(),
        }
    }
}

impl<T: Clone + Send + Sync + 'static> clap::builder::TypedValueParser for Numbered<T> {
    type Value = T;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        _arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<T, clap::Error> {
        use clap::error::ErrorKind;
        let index = self.seen.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        let refuse = |kind, message: String| cmd.clone().error(kind, message);
        let Some(text) = value.to_str() else {
            return Err(refuse(
                ErrorKind::InvalidUtf8,
                format!("argument {index} of its kind is not UTF-8 text"),
            ));
        };
        (self.parse)(index, text).map_err(|d| refuse(ErrorKind::ValueValidation, d.to_string()))
    }
}

/// `-p KEY=VALUE`.
fn override_arg() -> Numbered<Override> {
    Numbered::new(Override::parse)
}

/// `--reset POINTER`.
fn reset_arg() -> Numbered<Reset> {
    Numbered::new(Reset::parse)
}

/// `kudo patch --add POINTER=VALUE`.
fn add_arg() -> Numbered<Edit> {
    Numbered::new(Edit::add)
}

/// `kudo patch --remove POINTER`.
fn remove_arg() -> Numbered<Edit> {
    Numbered::new(Edit::remove)
}

// ---------------------------------------------------------------------------------------------
// kudo diff and kudo patch

/// `kudo diff`.
#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The package to upgrade to: the diff of `kudo upgrade PACKAGE --instance NAME` (a
    /// directory, a .tgz, an http(s):// URL, an oci:// reference or an operator name in a
    /// repository). Without it, the diff of `kudo update --instance NAME`. Without
    /// --instance, the Instance: `kudo diff NAME` shows its drift.
    #[arg(value_name = "PACKAGE|NAME")]
    pub package: Option<PathBuf>,
    #[command(flatten)]
    pub source: SourceArgs,
    /// The Instance.
    #[arg(long, value_name = "NAME", add = crate::complete::instances(Cli::command), required_unless_present = "package")]
    pub instance: Option<String>,
    #[command(flatten)]
    pub values: ValueArgs,
    /// As `kudo update --reset`: remove the value you set at this parameter.
    #[arg(long = "reset", value_name = "POINTER", conflicts_with = "package", value_parser = reset_arg())]
    pub resets: Vec<Reset>,
    /// As `kudo upgrade --allow-drop`: the diff of the upgrade that lets this set value go.
    #[arg(long = "allow-drop", value_name = "POINTER", requires = "package")]
    pub allow_drop: Vec<String>,
    /// The diff of the change made with --force: the plan scheduled or running would be
    /// superseded instead of refusing the change (and, for an upgrade, what the preflight
    /// refuses let through as `kudo upgrade --force` does).
    #[arg(long)]
    pub force: bool,
    /// The diff of `kudo rollback NAME REVISION` (`kudo diff NAME --revision N`): the live
    /// Instance's values and objects against revision REVISION's.
    #[arg(long, value_name = "REVISION", conflicts_with = "resets")]
    pub revision: Option<i64>,
    /// Output format.
    #[arg(short = 'o', long = "output", value_enum, default_value = "text")]
    pub output: ReportFormat,
    #[command(flatten)]
    pub cluster: ClusterArgs,
}

/// `kudo patch`.
#[derive(Debug, Args)]
#[command(group(ArgGroup::new("edits").required(true).args(["adds", "removes"])))]
#[command(group(ArgGroup::new("who").required(true).multiple(true).args(["name", "instance"])))]
pub struct PatchArgs {
    /// The Instance (or --instance NAME).
    #[arg(value_name = "NAME", add = crate::complete::instances(Cli::command))]
    pub name: Option<String>,
    /// The Instance.
    #[arg(
        long,
        value_name = "NAME",
        add = crate::complete::instances(Cli::command)
    )]
    pub instance: Option<String>,
    /// Add an array item: POINTER names the array, and the item is appended (KEP-33's
    /// `--add 'topology/0/labels={key: k, value: v}'`), or the new item's place, the array's
    /// pointer then an index (0 to the length) or `-` to append (`--add ports/0=8080`,
    /// `--add 'topology/-={datacenterName: dc2}'`). VALUE is YAML typed by the item's schema.
    /// Repeatable, applied in order.
    #[arg(long = "add", value_name = "POINTER=VALUE", conflicts_with = "removes", value_parser = add_arg())]
    pub adds: Vec<Edit>,
    /// Remove an array item (`topology/1`) or a member you set of an object (`labels/team`;
    /// a member with a default falls back to it). Repeatable, applied in order: indexes refer
    /// to the array as the previous removals left it.
    #[arg(long = "remove", value_name = "POINTER", value_parser = remove_arg())]
    pub removes: Vec<Edit>,
    #[command(flatten)]
    pub cluster: ClusterArgs,
    /// Send nothing: print the plan the change runs and the changed paths.
    #[arg(long, conflicts_with_all = ["wait", "wait_time"])]
    pub dry_run: bool,
    /// Output format of the report.
    #[arg(short = 'o', long = "output", value_enum, default_value = "text")]
    pub output: ReportFormat,
    /// Supersede the plan the Instance has scheduled or running (a stuck plan) instead of
    /// refusing: that plan stops where it is and the plan of this change runs.
    #[arg(long)]
    pub force: bool,
    /// Run the plan of this change now, even outside the Instance's maintenance window
    /// (`spec.window`); the revision records it, with who asked.
    #[arg(long)]
    pub ignore_window: bool,
    #[command(flatten)]
    pub wait: WaitArgs,
    #[command(flatten)]
    pub images: ImageArgs,
}
