//! `kudo plan status` and `kudo plan trigger`.

use super::Outcome;
use super::changes::Superseded;
use super::cluster;
use crate::args::{DataFormat, PlanCommand, StatusArgs, TriggerArgs};
use crate::error::Error;
use crate::progress::Progress;
use kudo_client::commands::{self, plan, wait};
use kudo_crd::common::ExecStatus;

pub fn run(c: PlanCommand, progress: Progress) -> Result<Outcome, Error> {
    match c {
        PlanCommand::Status(a) => status(a, progress),
        PlanCommand::Trigger(a) => trigger(a, progress),
    }
}

fn status(a: StatusArgs, mut progress: Progress) -> Result<Outcome, Error> {
    let name = a.instance.get()?;
    let waiting = a.wait.options();
    let view = cluster::block_on("plan status", &a.cluster, async |t| {
        if let Some(o) = waiting {
            wait::plan_terminal(&t, &name, &o, &mut |r| progress.watch(r)).await?;
        }
        Ok(plan::status(&t, &name).await?)
    })?;
    let text = match a.output {
        None => view.to_string(),
        Some(DataFormat::Json) => format!(
            "{}\n",
            serde_json::to_string_pretty(&view).unwrap_or_default()
        ),
        Some(DataFormat::Yaml) => super::to_yaml(&serde_json::to_value(&view).unwrap_or_default()),
    };
    super::print(&text)?;
    // After --wait, a plan that ended in FATAL_ERROR is a failure.
    let active = view.active_plan.as_ref().map(|p| p.name.as_str());
    let failed = view
        .plans
        .iter()
        .any(|p| Some(p.name.as_str()) == active && p.status == ExecStatus::FatalError);
    Ok(if waiting.is_some() && failed {
        Outcome::Failed
    } else {
        Outcome::Done
    })
}

fn trigger(a: TriggerArgs, mut progress: Progress) -> Result<Outcome, Error> {
    let instance = a.instance.get()?;
    let waiting = a.wait.options();
    let out = cluster::block_on("plan trigger", &a.cluster, async |t| {
        let uid = commands::new_uid();
        let done = plan::trigger(&t, &instance, &a.name, &uid, a.force, a.ignore_window).await?;
        let mut out = format!(
            "plan {} of Instance {}/{} triggered (run {})\n",
            done.plan, t.namespace, instance, done.uid
        );
        if let Some(run) = &done.superseded {
            out.push_str(&Superseded::of(run).line());
        }
        if let Some(o) = waiting {
            let goal = wait::Goal {
                generation: done.generation.unwrap_or(0),
                uid: Some(done.uid.clone()),
            };
            let plan =
                wait::plan_done(&t, &instance, &goal, &o, &mut |r| progress.watch(r)).await?;
            out.push_str(&format!("plan {plan} COMPLETE\n"));
        }
        Ok(out)
    })?;
    super::print(&out)?;
    Ok(Outcome::Done)
}
