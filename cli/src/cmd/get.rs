//! `kudo get instances|operators|operatorversions [NAME]` and `kudo list` (its Instances).

use kudo_client::commands::get;
use serde_json::json;

use super::Outcome;
use super::cluster;
use crate::args::{GetArgs, GetFormat, ListArgs, What};
use crate::error::Error;

pub fn run(a: GetArgs) -> Result<Outcome, Error> {
    let kind = match a.what {
        What::Instances => get::Kind::Instances,
        What::Operators => get::Kind::Operators,
        What::Operatorversions => get::Kind::OperatorVersions,
    };
    show(kind, a.name.as_deref(), &a.list)
}

/// `kudo list`: `kudo get instances`.
pub fn list(a: ListArgs) -> Result<Outcome, Error> {
    show(get::Kind::Instances, None, &a)
}

fn show(kind: get::Kind, name: Option<&str>, a: &ListArgs) -> Result<Outcome, Error> {
    let q = get::Query {
        kind,
        name,
        all_namespaces: a.all_namespaces,
        wide: a.output == Some(GetFormat::Wide),
    };
    let (namespace, listing) = cluster::block_on("get", &a.cluster, async |t| {
        Ok((t.namespace.clone(), get::get(&t, &q).await?))
    })?;
    // One object by name is shown as itself, as kubectl does.
    let data = match (name, listing.items.as_slice()) {
        (Some(_), [one]) => one.clone(),
        _ => json!({"apiVersion": "v1", "kind": "List", "items": listing.items}),
    };
    let text = match a.output {
        Some(GetFormat::Json) => format!(
            "{}\n",
            serde_json::to_string_pretty(&data).unwrap_or_default()
        ),
        Some(GetFormat::Yaml) => super::to_yaml(&data),
        None | Some(GetFormat::Wide) if listing.rows.is_empty() => {
            // As kubectl: an empty list is no error, and nothing on stdout.
            match a.all_namespaces {
                true => eprintln!("No resources found."),
                false => eprintln!("No resources found in namespace {namespace}."),
            }
            String::new()
        }
        None | Some(GetFormat::Wide) => super::table(&listing.headers, &listing.rows),
    };
    super::print(&text)?;
    Ok(Outcome::Done)
}
