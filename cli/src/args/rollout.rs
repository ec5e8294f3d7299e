//! `kudo rollout ...`: fleet upgrades (docs/rollouts.md).

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Subcommand, ValueEnum};

use super::{ClusterArgs, DataFormat, ListArgs, SourceArgs, WaitArgs, duration};

/// `kudo rollout ...`.
#[derive(Debug, Subcommand)]
pub enum RolloutCommand {
    /// Move the Instances a selector matches to PACKAGE, wave by wave (creates a Rollout).
    ///
    /// Creates PACKAGE's OperatorVersion when missing (as `kudo upgrade` does), then a Rollout
    /// the manager carries out: the upgrade preflight for every selected Instance first (an
    /// unsafe one refuses the whole rollout unless --skip-unsafe), then waves of upgrades,
    /// each through the admission webhook, as the Rollout's ServiceAccount. A wave passes when
    /// every Instance in it completed its plan, stayed so for --min-ready and passes --gate;
    /// more than --max-failures failures halt the rollout (and roll the failed back). Checked
    /// before anything is written: a refused start leaves nothing.
    #[command(after_help = crate::examples::ROLLOUT)]
    Start(Box<RolloutStartArgs>),
    /// Where a rollout stands: its phase, its waves and every Instance's state.
    ///
    /// --wait waits until it ends: exit 0 when it completed, 1 when it halted, was refused or
    /// aborted (or --wait-time ran out).
    #[command(after_help = crate::examples::ROLLOUT)]
    Status(RolloutStatusArgs),
    /// List the rollouts of a namespace (-A: of all).
    #[command(after_help = crate::examples::ROLLOUT)]
    List(ListArgs),
    /// Start nothing new (what runs is still judged) until `kudo rollout resume`.
    #[command(after_help = crate::examples::ROLLOUT)]
    Pause(RolloutNameArgs),
    /// Go on after a pause; a halted rollout retries its halted wave.
    #[command(after_help = crate::examples::ROLLOUT)]
    Resume(RolloutNameArgs),
    /// Stop a rollout for good; --rollback also moves back every Instance it moved.
    #[command(after_help = crate::examples::ROLLOUT)]
    Abort(RolloutAbortArgs),
    /// Approve a rollout that asks for approval (--require-approval).
    ///
    /// The admission webhook records who approved, and admits it only from a user who may
    /// `approve` `rollouts` in its namespace (the ClusterRole kudo-rollout-approver grants
    /// that).
    #[command(after_help = crate::examples::ROLLOUT)]
    Approve(RolloutNameArgs),
}

/// What a failed Instance gets.
#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum OnFailure {
    /// Rolled back to its revision before the rollout, when that is safe.
    Rollback,
    /// Left as it is.
    Halt,
}

/// `kudo rollout start`.
#[derive(Debug, Args)]
pub struct RolloutStartArgs {
    /// The Rollout's name.
    #[arg(value_name = "NAME")]
    pub name: String,
    /// The version to move to: a directory, a .tgz, an http(s):// URL, an oci:// reference or
    /// an operator name in a repository.
    #[arg(value_name = "PACKAGE")]
    pub package: PathBuf,
    #[command(flatten)]
    pub source: SourceArgs,
    /// The Instances to move, as kubectl's -l (`team=blue,tier in (gold,silver)`); always
    /// only the package's operator's.
    #[arg(short = 'l', long, value_name = "LABELS")]
    pub selector: String,
    /// Look in the namespaces this matches (`env=prod`) instead of -n's.
    #[arg(long, value_name = "LABELS")]
    pub namespace_selector: Option<String>,
    /// Cumulative wave targets, each a count or a percentage of the selected Instances: `1,
    /// 10%,50%,100%` is one Instance, then up to a tenth in all, then half, then the rest
    /// (default `1,100%`).
    #[arg(long, value_name = "WAVES", value_delimiter = ',')]
    pub waves: Vec<String>,
    /// Failed Instances a wave may hold before the rollout halts (default 0).
    #[arg(long, value_name = "N")]
    pub max_failures: Option<u32>,
    /// How long an upgraded Instance must stay complete before it counts (`30s`, `5m`).
    #[arg(long, value_name = "DURATION", value_parser = duration)]
    pub min_ready: Option<Duration>,
    /// How long an Instance has from its upgrade to pass before it counts as failed (default
    /// 10m).
    #[arg(long, value_name = "DURATION", value_parser = duration)]
    pub progress_deadline: Option<Duration>,
    /// A CEL expression over the Instance (`self`) that must be true for it to pass, as in
    /// x-kubernetes-validations: `self.status.planStatus.deploy.status == 'COMPLETE'`.
    #[arg(long, value_name = "CEL")]
    pub gate: Option<String>,
    /// What a failed Instance gets (default rollback).
    #[arg(long, value_enum, value_name = "WHAT")]
    pub on_failure: Option<OnFailure>,
    /// Wait for `kudo rollout approve` before the first wave.
    #[arg(long)]
    pub require_approval: bool,
    /// Start waves only inside a window that opens on this 5-field cron schedule
    /// (`0 22 * * 1-5`: weekdays at 22:00).
    #[arg(long, value_name = "CRON", requires = "window_duration")]
    pub window_schedule: Option<String>,
    /// How long the window stays open (`2h`, `90m`).
    #[arg(long, value_name = "DURATION", requires = "window_schedule")]
    pub window_duration: Option<String>,
    /// The IANA time zone of --window-schedule (`Europe/Berlin`; default UTC).
    #[arg(long, value_name = "TZ", requires = "window_schedule")]
    pub window_time_zone: Option<String>,
    /// Leave out the Instances the preflight finds unsafe (listed as Skipped) instead of
    /// refusing the rollout.
    #[arg(long)]
    pub skip_unsafe: bool,
    /// The ServiceAccount of the namespace whose rights every write of the rollout is made
    /// with (default: the manager's default, as for Instances).
    #[arg(long, value_name = "NAME")]
    pub service_account: Option<String>,
    /// Check, and list what the manager would select and in which wave; create nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Print the Rollout as data (with --dry-run: the one that would be created).
    #[arg(short = 'o', long = "output", value_enum)]
    pub output: Option<DataFormat>,
    #[command(flatten)]
    pub wait: WaitArgs,
    #[command(flatten)]
    pub cluster: ClusterArgs,
}

/// `kudo rollout status`.
#[derive(Debug, Args)]
pub struct RolloutStatusArgs {
    #[command(flatten)]
    pub rollout: RolloutNameArgs,
    /// Print the Rollout as data instead of the table.
    #[arg(short = 'o', long = "output", value_enum)]
    pub output: Option<DataFormat>,
    #[command(flatten)]
    pub wait: WaitArgs,
}

/// `kudo rollout pause|resume|approve`, and the Rollout every `kudo rollout` command but
/// `start` and `list` names.
#[derive(Debug, Args)]
pub struct RolloutNameArgs {
    /// The Rollout.
    #[arg(value_name = "NAME")]
    pub name: String,
    #[command(flatten)]
    pub cluster: ClusterArgs,
}

/// `kudo rollout abort`.
#[derive(Debug, Args)]
pub struct RolloutAbortArgs {
    #[command(flatten)]
    pub rollout: RolloutNameArgs,
    /// Also roll back every Instance the rollout moved, to its revision before.
    #[arg(long)]
    pub rollback: bool,
}
