//! The report of `update` and `upgrade`, of an Instance file (`-f`) or in the cluster
//! (`--instance`): one shape, printed by `-o json`.

use kudo_policy::change::Decision;
use serde::Serialize;

/// What a change did, or would do with `--dry-run`. Fields that do not apply to a command are
/// left out.
#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ChangeReport<'a> {
    /// The Instance file changed (`-f`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// The Instance changed, `namespace/name` (`--instance`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instance: Option<String>,
    /// The OperatorVersion the Instance runs (update).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub operator_version: Option<&'a str>,
    /// The OperatorVersion it ran (upgrade).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from: Option<&'a str>,
    /// The OperatorVersion it runs now (upgrade).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub to: Option<&'a str>,
    /// The plan the change runs (`null`: none).
    pub plan: Option<&'a str>,
    /// Every changed value and the plan it runs.
    pub changes: Vec<Changed<'a>>,
    /// Where each value went (upgrade).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub migration: Option<&'a kudo_policy::old_name::Report>,
    /// Whether the new OperatorVersion was created (upgrade in the cluster).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub created_operator_version: Option<bool>,
    /// `--dry-run`: nothing written.
    pub dry_run: bool,
    /// Whether the file or the Instance was written.
    pub written: bool,
    /// The run `--force` superseded (in the cluster).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub superseded: Option<Superseded<'a>>,
    /// What the API server answered (in the cluster).
    #[serde(flatten)]
    pub cluster: Option<Sent<'a>>,
    /// The change as a unified diff of the file, secrets masked (`-f --dry-run`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
}

/// One changed value.
#[derive(Debug, Serialize)]
pub struct Changed<'a> {
    /// Its JSON pointer.
    pub pointer: &'a str,
    /// The plan it runs.
    pub plan: &'a str,
}

/// What the API server answered.
#[derive(Debug, Serialize)]
pub struct Sent<'a> {
    /// The Instance's `metadata.generation` after the write (`null`: nothing written).
    pub generation: Option<i64>,
    /// Writes attempted (more than one after conflicts; update).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attempts: Option<usize>,
    /// The plan `--wait` saw COMPLETE (`null`: not waited for).
    pub completed: Option<&'a str>,
}

/// A run `--force` superseded.
#[derive(Debug, Serialize)]
pub struct Superseded<'a> {
    /// Its plan.
    pub plan: &'a str,
    /// Its run id.
    pub run: &'a str,
}

impl<'a> Superseded<'a> {
    /// The report of `run`.
    pub fn of(run: &'a kudo_policy::run::Running) -> Superseded<'a> {
        Superseded {
            plan: &run.plan,
            run: &run.uid,
        }
    }

    /// The confirmation line of the text output.
    pub fn line(&self) -> String {
        format!(
            "--force: plan `{}` (run {}) was scheduled or running; it is superseded and stops where it is\n",
            self.plan, self.run
        )
    }
}

/// The text lines of a written change after its plan line: each value that changed and the plan
/// it runs, then the superseded run (`--force`), if any, then whether the Instance was written
/// (`written`: the confirmation line, said unless this was a dry run).
pub fn change_lines(
    changes: &[kudo_policy::trigger::ValueChange],
    superseded: Option<&kudo_policy::run::Running>,
    instance: &str,
    dry_run: bool,
    written: Option<String>,
) -> String {
    let mut out = String::new();
    for c in changes {
        out.push_str(&format!("  changed {} (runs {})\n", c.pointer, c.plan));
    }
    if let Some(run) = superseded {
        out.push_str(&Superseded::of(run).line());
    }
    if dry_run {
        out.push_str(&format!("dry run: Instance {instance} was not changed\n"));
    } else if let Some(line) = written {
        out.push_str(&line);
    }
    out
}

impl<'a> ChangeReport<'a> {
    /// The plan, changes and migration of `decision`.
    pub fn of(decision: &'a Decision, dry_run: bool, written: bool) -> ChangeReport<'a> {
        ChangeReport {
            plan: decision.plan.as_deref(),
            changes: decision
                .changes
                .iter()
                .map(|c| Changed {
                    pointer: &c.pointer,
                    plan: &c.plan,
                })
                .collect(),
            migration: decision.report.as_ref(),
            dry_run,
            written,
            ..ChangeReport::default()
        }
    }

    /// The report as pretty JSON, with a final newline.
    pub fn json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).unwrap_or_default();
        s.push('\n');
        s
    }
}
