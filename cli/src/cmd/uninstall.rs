//! `kudo uninstall --instance NAME`.

use std::process::ExitCode;

use kudo_client::commands::{uninstall, wait};
use kudo_pkg::Error;

use super::cluster;
use crate::args::UninstallArgs;

pub fn run(a: UninstallArgs) -> Result<ExitCode, Error> {
    let waiting = a.wait.options();
    let result = cluster::block_on(&a.cluster, async |t| {
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
    });
    match result {
        Ok(out) => {
            super::print(&out)?;
            Ok(ExitCode::SUCCESS)
        }
        Err(f) => Ok(cluster::fail("uninstall", f, Default::default())),
    }
}
