//! `kudo patch NAME --add POINTER=VALUE | --remove POINTER`: an update whose proposal is the
//! edits ([`kudo_policy::values::Edit`]), sent and reported as `kudo update --instance` is.

use kudo_client::commands::{Inputs, update};

use super::Outcome;
use crate::args::PatchArgs;
use crate::error::Error;
use crate::progress::Progress;

pub fn run(a: PatchArgs, progress: Progress) -> Result<Outcome, Error> {
    let name = crate::args::either(a.name.as_deref(), a.instance.as_deref())?
        .unwrap_or_default()
        .to_string();
    // clap parsed them (`args::Numbered`); one of the two is empty.
    let edits = if a.adds.is_empty() { a.removes } else { a.adds };
    // An install from a mirror (the configuration's `mirror:`) stays on it.
    let mirror = super::mirror::Mirror::of(None, a.images.image_plain_http)?;
    let gate = super::images::Gate::of(&a.images, mirror.as_ref().map(|m| m.pins()))?;
    let req = update::Request {
        instance: &name,
        inputs: Inputs {
            edits: &edits,
            ..Inputs::default()
        },
        dry_run: a.dry_run,
        force: a.force,
        ignore_window: a.ignore_window,
        remediation: None,
        images: gate
            .as_ref()
            .map(|g| g as &dyn kudo_client::commands::ImageGate),
    };
    super::update::send("patch", &req, &a.cluster, &a.wait, a.output, progress)
}
