//! `kudo uninstall --instance NAME`.

use std::process::ExitCode;

use super::cluster;
use crate::args::UninstallArgs;
use crate::error::Error;
use kudo_client::commands::{uninstall, wait};

pub fn run(a: UninstallArgs) -> Result<ExitCode, Error> {
    let waiting = a.wait.options();
    let out = cluster::block_on("uninstall", &a.cluster, async |t| {
        uninstall::uninstall(&t, &a.instance).await?;
        let mut out = format!("Instance {}/{} deleted", t.namespace, a.instance);
        match waiting {
            Some(o) => {
                wait::gone(&t, &a.instance, &o).await?;
                out.push_str(" (cleanup done, it is gone)\n");
            }
            None => out.push_str(" (the cleanup plan runs before it is gone)\n"),
        }
        Ok(out)
    })?;
    super::print(&out)?;
    Ok(ExitCode::SUCCESS)
}
