//! `kudo uninstall NAME`: the rules live in `kudo_client::commands::uninstall`; this prints what
//! was deleted and what stays.

use super::Outcome;
use super::cluster;
use crate::args::UninstallArgs;
use crate::error::Error;
use crate::progress::Progress;
use kudo_client::commands::{uninstall, wait};

pub fn run(a: UninstallArgs, mut progress: Progress) -> Result<Outcome, Error> {
    let name = a.instance.get()?;
    // --prune deletes the OperatorVersion the cleanup plan runs from: only once it is gone.
    let waiting = a
        .wait
        .options()
        .or_else(|| a.prune.then(wait::Options::default));
    let out = cluster::block_on("uninstall", &a.cluster, async |t| {
        let done = uninstall::uninstall(&t, &name).await?;
        let ns = &t.namespace;
        let mut out = format!("Instance {ns}/{name} deleted");
        match (waiting, done.cleanup_plan) {
            (Some(o), cleanup) => {
                wait::gone(&t, &name, &o, &mut |r| progress.watch(r)).await?;
                out.push_str(match cleanup {
                    true => " (its cleanup plan ran, it is gone)\n",
                    false => " (it is gone)\n",
                });
            }
            (None, true) => out.push_str(" (its cleanup plan runs before it is gone)\n"),
            (None, false) => out.push('\n'),
        }
        if !done.claims.is_empty() {
            out.push_str(&format!(
                "left: PersistentVolumeClaim {} (the data stays; `kubectl delete pvc -n {ns} \
                 NAME` deletes it)\n",
                done.claims.join(", ")
            ));
        }
        let pruned = match (&done.operator, a.prune) {
            (Some(op), true) => Some(uninstall::prune(&t, op, &name).await?),
            _ => None,
        };
        match (&pruned, &done.operator_version) {
            (Some(p), _) => {
                for ov in &p.deleted {
                    out.push_str(&format!("OperatorVersion {ns}/{ov} deleted (unused)\n"));
                }
                for (ov, users) in &p.kept {
                    out.push_str(&format!(
                        "left: OperatorVersion {ns}/{ov}, used by Instance {}\n",
                        users.join(", ")
                    ));
                }
            }
            (None, Some(ov)) if done.version_users.is_empty() => out.push_str(&format!(
                "left: OperatorVersion {ns}/{ov}, used by no other Instance (--prune deletes \
                 it)\n"
            )),
            (None, Some(ov)) => out.push_str(&format!(
                "left: OperatorVersion {ns}/{ov}, used by Instance {}\n",
                done.version_users.join(", ")
            )),
            (None, None) => {}
        }
        match (&done.operator, &pruned) {
            (Some(op), Some(p)) if p.operator_deleted => {
                out.push_str(&format!("Operator {ns}/{op} deleted (no version left)\n"))
            }
            (Some(op), _) => out.push_str(&format!("left: Operator {ns}/{op}\n")),
            (None, _) => {}
        }
        Ok(out)
    })?;
    super::print(&out)?;
    Ok(Outcome::Done)
}
