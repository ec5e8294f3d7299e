//! `kudo patch NAME --add POINTER=VALUE | --remove POINTER`: an update whose proposal is the
//! edits ([`kudo_pkg::values::Edit`]), sent and reported as `kudo update --instance` is.

use std::process::ExitCode;

use kudo_client::commands::{Inputs, update};
use kudo_pkg::values::Edit;

use crate::args::PatchArgs;
use crate::error::Error;

pub fn run(a: PatchArgs) -> Result<ExitCode, Error> {
    let name = a.name.clone().or(a.instance.clone()).unwrap_or_default();
    let parsed: Vec<Result<Edit, kudo_pkg::Diagnostic>> = if a.adds.is_empty() {
        let each = a.removes.iter().enumerate();
        each.map(|(i, arg)| Edit::remove(i + 1, arg)).collect()
    } else {
        let each = a.adds.iter().enumerate();
        each.map(|(i, arg)| Edit::add(i + 1, arg)).collect()
    };
    let (edits, problems): (Vec<_>, Vec<_>) = parsed.into_iter().partition(Result::is_ok);
    let problems: Vec<_> = problems.into_iter().filter_map(Result::err).collect();
    if !problems.is_empty() {
        return Err(Error::parameters(problems).in_command("patch"));
    }
    let edits: Vec<Edit> = edits.into_iter().filter_map(Result::ok).collect();
    let req = update::Request {
        instance: &name,
        inputs: Inputs {
            edits: &edits,
            ..Inputs::default()
        },
        dry_run: a.dry_run,
        force: a.force,
    };
    super::update::send("patch", &req, &a.cluster, &a.wait, a.output)
}
