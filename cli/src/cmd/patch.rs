//! `kudo patch NAME --add POINTER=VALUE | --remove POINTER`: an update whose proposal is the
//! edits ([`kudo_policy::values::Edit`]), sent and reported as `kudo update --instance` is.

use std::process::ExitCode;

use kudo_client::commands::{Inputs, update};
use kudo_policy::values::Edit;

use crate::args::PatchArgs;
use crate::error::Error;

pub fn run(a: PatchArgs) -> Result<ExitCode, Error> {
    let name = crate::args::either(a.name.as_deref(), a.instance.as_deref())?
        .unwrap_or_default()
        .to_string();
    let (args, parse): (&[String], fn(usize, &str) -> _) = if a.adds.is_empty() {
        (&a.removes, Edit::remove)
    } else {
        (&a.adds, Edit::add)
    };
    let mut edits = Vec::new();
    let mut problems = Vec::new();
    for (i, arg) in args.iter().enumerate() {
        match parse(i + 1, arg) {
            Ok(e) => edits.push(e),
            Err(d) => problems.push(d),
        }
    }
    if !problems.is_empty() {
        return Err(Error::parameters(problems).in_command("patch"));
    }
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
