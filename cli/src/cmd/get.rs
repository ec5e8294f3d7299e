//! `kudo get instances|operators|operatorversions`.

use std::process::ExitCode;

use kudo_client::commands::get;
use serde_json::json;

use super::cluster;
use crate::args::{DataFormat, GetArgs, What};
use crate::error::Error;

pub fn run(a: GetArgs) -> Result<ExitCode, Error> {
    let kind = match a.what {
        What::Instances => get::Kind::Instances,
        What::Operators => get::Kind::Operators,
        What::Operatorversions => get::Kind::OperatorVersions,
    };
    let listing = cluster::block_on("get", &a.cluster, async |t| Ok(get::list(&t, kind).await?))?;
    let list = json!({"apiVersion": "v1", "kind": "List", "items": listing.items});
    let text = match a.output {
        Some(DataFormat::Json) => format!(
            "{}\n",
            serde_json::to_string_pretty(&list).unwrap_or_default()
        ),
        Some(DataFormat::Yaml) => super::to_yaml(&list),
        None => {
            let mut table = comfy_table::Table::new();
            table.load_preset(comfy_table::presets::NOTHING);
            table.set_header(listing.headers.clone());
            for row in &listing.rows {
                table.add_row(row.clone());
            }
            let mut s = table.to_string();
            s.push('\n');
            // Trailing spaces of the last column go.
            s.lines().map(|l| format!("{}\n", l.trim_end())).collect()
        }
    };
    super::print(&text)?;
    Ok(ExitCode::SUCCESS)
}
