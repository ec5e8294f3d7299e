//! `kudo rollout start|status|list|pause|resume|abort|approve`: the rules live in
//! `kudo_client::commands::rollout` (and the decisions the manager takes as a rollout runs in
//! `kudo_policy::rollout`).

use std::time::Duration;

use kudo_client::commands::{self, Target, rollout};
use kudo_crd::rollout::{Approval, Rollout, RolloutSpec, RolloutStatus, Selector, Window};
use serde_json::json;

use super::Outcome;
use super::cluster;
use crate::args::{
    DataFormat, GetFormat, ListArgs, OnFailure, RolloutAbortArgs, RolloutCommand, RolloutNameArgs,
    RolloutStartArgs, RolloutStatusArgs,
};
use crate::error::Error;
use crate::progress::Progress;

pub fn run(c: RolloutCommand, progress: Progress) -> Result<Outcome, Error> {
    match c {
        RolloutCommand::Start(a) => start(*a, progress),
        RolloutCommand::Status(a) => status(a, progress),
        RolloutCommand::List(a) => list(a),
        RolloutCommand::Pause(a) => control(a, rollout::Control::Pause),
        RolloutCommand::Resume(a) => control(a, rollout::Control::Resume),
        RolloutCommand::Abort(RolloutAbortArgs {
            rollout: named,
            rollback,
        }) => control(named, rollout::Control::Abort { rollback }),
        RolloutCommand::Approve(a) => control(
            a,
            rollout::Control::Approve {
                // The admission webhook writes the requesting user's name over it.
                by: "kudo rollout approve".into(),
            },
        ),
    }
}

/// The spec the flags ask for (`operator` and `operatorVersion` are the package's).
fn spec(a: &RolloutStartArgs) -> Result<RolloutSpec, Error> {
    let selector = |flag: &str, text: &str| {
        Selector::parse(text).map_err(|e| Error::Usage(format!("{flag}: {e}")))
    };
    let seconds = |d: Option<Duration>| d.map(|d| d.as_secs().min(u32::MAX.into()) as u32);
    Ok(RolloutSpec {
        selector: selector("--selector", &a.selector)?,
        namespace_selector: a
            .namespace_selector
            .as_deref()
            .map(|s| selector("--namespace-selector", s))
            .transpose()?,
        waves: a.waves.iter().map(|w| w.trim().to_string()).collect(),
        max_failures: a.max_failures,
        min_ready_seconds: seconds(a.min_ready),
        progress_deadline_seconds: seconds(a.progress_deadline),
        gate: a.gate.clone(),
        on_failure: a.on_failure.map(|f| {
            match f {
                OnFailure::Rollback => "rollback",
                OnFailure::Halt => "halt",
            }
            .to_string()
        }),
        approval: a.require_approval.then_some(Approval {
            required: true,
            approved_by: None,
        }),
        window: a.window_schedule.as_ref().map(|schedule| Window {
            schedule: schedule.clone(),
            duration: a.window_duration.clone().unwrap_or_default(),
            time_zone: a.window_time_zone.clone(),
        }),
        skip_unsafe: a.skip_unsafe,
        service_account_name: a.service_account.clone(),
        ..RolloutSpec::default()
    })
}

/// The flag that sets the field a problem names (`spec.waves[1] ...` → `--waves: ...`).
fn said_by_flag(problem: String) -> String {
    const FLAGS: &[(&str, &str)] = &[
        ("spec.waves", "--waves"),
        ("spec.gate", "--gate"),
        ("spec.window.duration", "--window-duration"),
        ("spec.window.timeZone", "--window-time-zone"),
        ("spec.window", "--window-schedule"),
        ("spec.selector", "--selector"),
        ("spec.namespaceSelector", "--namespace-selector"),
        ("spec.onFailure", "--on-failure"),
    ];
    match FLAGS.iter().find(|(field, _)| problem.starts_with(field)) {
        Some((_, flag)) => format!("{flag}: {problem}"),
        None => problem,
    }
}

fn start(a: RolloutStartArgs, mut progress: Progress) -> Result<Outcome, Error> {
    let spec = spec(&a)?;
    let loaded = super::load_with(&a.package, &a.source)?;
    let deps = loaded.dependencies()?;
    let req = rollout::StartRequest {
        name: &a.name,
        package: &loaded.package,
        dependencies: Some(&deps),
        spec,
        dry_run: a.dry_run,
    };
    let waiting = a.wait.options().filter(|_| !a.dry_run);
    let (started, ended) = cluster::block_on("rollout start", &a.cluster, async |t| {
        let started = match rollout::start(&t, &req).await {
            Err(commands::Error::Rollout { rollout, problems }) => {
                return Err(commands::Error::Rollout {
                    rollout,
                    problems: problems.into_iter().map(said_by_flag).collect(),
                }
                .into());
            }
            other => other?,
        };
        let ended = match &waiting {
            Some(o) => Some(wait(&t, &a.name, o, &mut progress).await?),
            None => None,
        };
        Ok((started, ended))
    })?;
    let mut shown = started.rollout.clone();
    if let Some(Ok(selection)) = &started.selection {
        shown.status = Some(RolloutStatus {
            instances: selection.members.clone(),
            wave_ends: selection.wave_ends.clone(),
            grown_rights: selection.grown_rights.clone(),
            ..RolloutStatus::default()
        });
    }
    let refused = matches!(&started.selection, Some(Err(_)));
    let text = match (a.output, &ended) {
        (Some(format), None) => data(&shown, format),
        (Some(format), Some(ro)) => data(ro, format),
        (None, _) => {
            let ro = &started.rollout;
            let key = format!(
                "{}/{}",
                ro.metadata.namespace.as_deref().unwrap_or_default(),
                a.name
            );
            let target = ro.spec.operator_version.name.clone().unwrap_or_default();
            let mut out = String::new();
            if started.created_operator_version {
                let verb = if a.dry_run { "would be" } else { "was" };
                out.push_str(&format!("OperatorVersion {target} {verb} created\n"));
            }
            match &started.selection {
                Some(Ok(selection)) => {
                    out.push_str(&format!(
                        "dry run: Rollout {key} would move {} Instances of {} to {target} in {} waves; nothing was created\n",
                        selection.members.iter().filter(|m| m.state() == kudo_policy::rollout::Member::Pending).count(),
                        ro.spec.operator,
                        selection.wave_ends.len()
                    ));
                    out.push_str(&grown(&shown));
                    out.push_str(&members(&shown));
                }
                Some(Err(why)) => eprintln!(
                    "dry run: the manager would refuse Rollout {key}: {why}; nothing was created"
                ),
                None => out.push_str(&format!(
                    "Rollout {key} created: the Instances of {} that {} selects move to {target}\n",
                    ro.spec.operator,
                    selector_text(&ro.spec)
                )),
            }
            if let Some(ro) = &ended {
                out.push_str(&overview(ro));
            }
            out
        }
    };
    super::print(&text)?;
    if refused {
        return Ok(Outcome::Failed);
    }
    ended.map_or(Ok(Outcome::Done), |ro| over(&ro))
}

/// The selectors as kubectl writes them.
fn selector_text(spec: &RolloutSpec) -> String {
    let q = spec.selector.query().unwrap_or_default();
    let mut out = if q.is_empty() {
        "every Instance".to_string()
    } else {
        format!("-l {q}")
    };
    if let Some(ns) = &spec.namespace_selector {
        out.push_str(&format!(
            " in the namespaces of {}",
            ns.query().unwrap_or_default()
        ));
    }
    out
}

/// Waits for the rollout to end, its phase, wave and message on stderr as `--wait` shows a
/// plan (`crate::progress`: a live line on a terminal, a line per change elsewhere).
async fn wait(
    t: &Target,
    name: &str,
    o: &commands::wait::Options,
    progress: &mut Progress,
) -> Result<Rollout, Error> {
    let started = std::time::Instant::now();
    let ro = rollout::wait(t, name, o, &mut |ro| {
        let over = ro.status.as_ref().is_some_and(|s| s.phase().is_final());
        progress.say(&headline(ro), started.elapsed(), over);
    })
    .await?;
    Ok(ro)
}

/// How a rollout that ended ends the command: 0 when it completed, else an error.
fn over(ro: &Rollout) -> Result<Outcome, Error> {
    let status = ro.status.clone().unwrap_or_default();
    match status.phase() {
        kudo_policy::rollout::Phase::Completed => Ok(Outcome::Done),
        phase => Err(commands::Error::RolloutEnded {
            rollout: format!(
                "{}/{}",
                ro.metadata.namespace.as_deref().unwrap_or_default(),
                ro.metadata.name.as_deref().unwrap_or_default()
            ),
            phase: format!("{phase:?}"),
            message: status.message.unwrap_or_default(),
        }
        .into()),
    }
}

/// `Rollout ns/name: Progressing, wave 2/3: message`.
fn headline(ro: &Rollout) -> String {
    let status = ro.status.clone().unwrap_or_default();
    let mut out = format!(
        "Rollout {}/{}: {:?}",
        ro.metadata.namespace.as_deref().unwrap_or_default(),
        ro.metadata.name.as_deref().unwrap_or_default(),
        status.phase()
    );
    if let Some(w) = &status.wave_shown {
        out.push_str(&format!(", wave {w}"));
    }
    if let Some(m) = &status.message {
        out.push_str(&format!(": {m}"));
    }
    out
}

/// The headline, the rollout's target and the table of its Instances.
fn overview(ro: &Rollout) -> String {
    let mut out = format!("{}\n", headline(ro));
    out.push_str(&format!(
        "  moves the Instances of {} that {} selects to {}\n",
        ro.spec.operator,
        selector_text(&ro.spec),
        ro.spec.operator_version.name.as_deref().unwrap_or_default()
    ));
    out.push_str(&grown(ro));
    out.push_str(&members(ro));
    out
}

/// The rights the new version needs that the old did not, when any: why an approval is asked.
fn grown(ro: &Rollout) -> String {
    let rights = ro
        .status
        .as_ref()
        .map(|s| s.grown_rights.clone())
        .unwrap_or_default();
    if rights.is_empty() {
        return String::new();
    }
    format!(
        "  needs an approval: the new version needs rights the old did not ({})\n",
        rights.join(", ")
    )
}

/// WAVE NAMESPACE NAME FROM STATE REASON, one row per Instance.
fn members(ro: &Rollout) -> String {
    let status = ro.status.clone().unwrap_or_default();
    let rows: Vec<Vec<String>> = status
        .instances
        .iter()
        .map(|m| {
            let wave = if m.state() == kudo_policy::rollout::Member::Skipped {
                "-".to_string()
            } else {
                (m.wave + 1).to_string()
            };
            vec![
                wave,
                m.namespace.clone(),
                m.name.clone(),
                m.from_version.clone().unwrap_or_default(),
                m.state.clone(),
                m.reason.clone().unwrap_or_default(),
            ]
        })
        .collect();
    if rows.is_empty() {
        return String::new();
    }
    super::table(
        &["WAVE", "NAMESPACE", "NAME", "FROM", "STATE", "REASON"],
        &rows,
    )
}

/// The Rollout as `-o yaml|json` prints it.
fn data(ro: &Rollout, format: DataFormat) -> String {
    let mut v = serde_json::to_value(ro).unwrap_or_default();
    v["apiVersion"] = json!("kudo.dev/v1beta2");
    v["kind"] = json!("Rollout");
    match format {
        DataFormat::Json => format!("{}\n", serde_json::to_string_pretty(&v).unwrap_or_default()),
        DataFormat::Yaml => super::to_yaml(&v),
    }
}

fn status(a: RolloutStatusArgs, mut progress: Progress) -> Result<Outcome, Error> {
    let waiting = a.wait.options();
    let name = &a.rollout.name;
    let ro = cluster::block_on(
        "rollout status",
        &a.rollout.cluster,
        async |t| match &waiting {
            Some(o) => wait(&t, name, o, &mut progress).await,
            None => Ok(rollout::get(&t, name).await?),
        },
    )?;
    let text = match a.output {
        Some(format) => data(&ro, format),
        None => overview(&ro),
    };
    super::print(&text)?;
    match waiting {
        Some(_) => over(&ro),
        None => Ok(Outcome::Done),
    }
}

fn list(a: ListArgs) -> Result<Outcome, Error> {
    let all = a.all_namespaces;
    let (namespace, items) = cluster::block_on("rollout list", &a.cluster, async |t| {
        Ok((t.namespace.clone(), rollout::list(&t, all).await?))
    })?;
    let text = match a.output {
        Some(GetFormat::Json | GetFormat::Yaml) => {
            let items: Vec<serde_json::Value> = items
                .iter()
                .map(|r| {
                    let mut v = serde_json::to_value(r).unwrap_or_default();
                    v["apiVersion"] = json!("kudo.dev/v1beta2");
                    v["kind"] = json!("Rollout");
                    v
                })
                .collect();
            let list = json!({"apiVersion": "v1", "kind": "List", "items": items});
            if a.output == Some(GetFormat::Json) {
                format!(
                    "{}\n",
                    serde_json::to_string_pretty(&list).unwrap_or_default()
                )
            } else {
                super::to_yaml(&list)
            }
        }
        _ if items.is_empty() => {
            match all {
                true => eprintln!("No resources found."),
                false => eprintln!("No resources found in namespace {namespace}."),
            }
            String::new()
        }
        _ => {
            let mut headers = vec!["NAME", "OPERATOR", "TARGET", "PHASE", "WAVE", "MESSAGE"];
            if all {
                headers.insert(0, "NAMESPACE");
            }
            let rows: Vec<Vec<String>> = items
                .iter()
                .map(|r| {
                    let status = r.status.clone().unwrap_or_default();
                    let mut row = vec![
                        r.metadata.name.clone().unwrap_or_default(),
                        r.spec.operator.clone(),
                        r.spec.operator_version.name.clone().unwrap_or_default(),
                        format!("{:?}", status.phase()),
                        status.wave_shown.clone().unwrap_or_else(|| "-".into()),
                        status.message.clone().unwrap_or_default(),
                    ];
                    if all {
                        row.insert(0, r.metadata.namespace.clone().unwrap_or_default());
                    }
                    row
                })
                .collect();
            super::table(&headers, &rows)
        }
    };
    super::print(&text)?;
    Ok(Outcome::Done)
}

fn control(a: RolloutNameArgs, control: rollout::Control) -> Result<Outcome, Error> {
    let ro = cluster::block_on("rollout", &a.cluster, async |t| {
        Ok(rollout::control(&t, &a.name, &control).await?)
    })?;
    let done = match control {
        rollout::Control::Pause => {
            "paused: nothing new starts until `kudo rollout resume`".to_string()
        }
        rollout::Control::Resume if ro.spec.retry.is_some() && !ro.spec.paused => {
            "resumed (a halted wave is retried)".to_string()
        }
        rollout::Control::Resume => "resumed".to_string(),
        rollout::Control::Abort { rollback: true } => {
            "aborted: the manager rolls back every Instance it moved".to_string()
        }
        rollout::Control::Abort { rollback: false } => {
            "aborted: the Instances it moved stay where they are".to_string()
        }
        rollout::Control::Approve { .. } => format!(
            "approved by {}",
            ro.spec
                .approval
                .as_ref()
                .and_then(|a| a.approved_by.clone())
                .unwrap_or_default()
        ),
    };
    super::print(&format!(
        "Rollout {}/{} {done}\n",
        ro.metadata.namespace.as_deref().unwrap_or_default(),
        a.name
    ))?;
    Ok(Outcome::Done)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_problem_is_said_by_the_flag_that_set_it() {
        assert_eq!(
            said_by_flag("spec.waves[1] \"ten\": not a count".into()),
            "--waves: spec.waves[1] \"ten\": not a count"
        );
        assert_eq!(
            said_by_flag("spec.window.duration \"x\": bad".into()),
            "--window-duration: spec.window.duration \"x\": bad"
        );
        assert_eq!(
            said_by_flag("spec.window.schedule \"x\": bad".into()),
            "--window-schedule: spec.window.schedule \"x\": bad"
        );
        assert_eq!(said_by_flag("something else".into()), "something else");
    }
}
