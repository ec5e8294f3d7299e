//! `kudo get instances|operators|operatorversions`: the objects of a namespace, as data and as
//! a table.

use kube::api::ListParams;
use serde_json::Value;

use super::{Result, Target};
use kudo_crd::v1beta2::{Instance, Operator, OperatorVersion};

/// What to list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Instances.
    Instances,
    /// Operators.
    Operators,
    /// OperatorVersions.
    OperatorVersions,
}

/// The objects listed, and the table of them.
#[derive(Debug, Clone, PartialEq)]
pub struct Listing {
    /// Column headers.
    pub headers: Vec<&'static str>,
    /// One row per object.
    pub rows: Vec<Vec<String>>,
    /// The objects, as the API server returned them (with `apiVersion` and `kind`).
    pub items: Vec<Value>,
}

fn text(v: Option<&String>) -> String {
    v.cloned().unwrap_or_default()
}

/// The rows of Instances: name, OperatorVersion, active plan, its status, `Ready`.
pub fn instance_rows(items: &[Instance]) -> Vec<Vec<String>> {
    items
        .iter()
        .map(|i| {
            let status = i.status.clone().unwrap_or_default();
            let active = status.active_plan.as_ref().map(|a| a.name.clone());
            let plan_status = active
                .as_ref()
                .and_then(|a| status.plan_status.get(a))
                .and_then(|p| p.status.clone());
            let ready = status
                .conditions
                .iter()
                .find(|c| c.type_ == "Ready")
                .map(|c| c.status.clone());
            vec![
                text(i.metadata.name.as_ref()),
                text(
                    i.spec
                        .operator_version
                        .as_ref()
                        .and_then(|r| r.name.as_ref()),
                ),
                active.unwrap_or_default(),
                plan_status.unwrap_or_default(),
                ready.unwrap_or_default(),
            ]
        })
        .collect()
}

/// Lists `kind` in the target namespace.
pub async fn list(t: &Target, kind: Kind) -> Result<Listing> {
    let lp = ListParams::default();
    let list_err = |k: &'static str| t.api("list", k, "");
    let (headers, rows, items) = match kind {
        Kind::Instances => {
            let l = t
                .instances()
                .list(&lp)
                .await
                .map_err(list_err("Instance"))?;
            let rows = instance_rows(&l.items);
            (
                vec!["NAME", "OPERATOR VERSION", "ACTIVE PLAN", "STATUS", "READY"],
                rows,
                values(&l.items, "Instance"),
            )
        }
        Kind::Operators => {
            let l = t
                .operators()
                .list(&lp)
                .await
                .map_err(list_err("Operator"))?;
            let rows = l
                .items
                .iter()
                .map(|o: &Operator| {
                    vec![
                        text(o.metadata.name.as_ref()),
                        text(o.spec.fields.kudo_version.as_ref()),
                        text(o.spec.fields.kubernetes_version.as_ref()),
                    ]
                })
                .collect();
            (
                vec!["NAME", "KUDO VERSION", "KUBERNETES VERSION"],
                rows,
                values(&l.items, "Operator"),
            )
        }
        Kind::OperatorVersions => {
            let l = t
                .operator_versions()
                .list(&lp)
                .await
                .map_err(list_err("OperatorVersion"))?;
            let rows = l
                .items
                .iter()
                .map(|o: &OperatorVersion| {
                    vec![
                        text(o.metadata.name.as_ref()),
                        text(o.spec.operator.as_ref().and_then(|r| r.name.as_ref())),
                        text(o.spec.version.as_ref()),
                        text(o.spec.app_version.as_ref()),
                    ]
                })
                .collect();
            (
                vec!["NAME", "OPERATOR", "VERSION", "APP VERSION"],
                rows,
                values(&l.items, "OperatorVersion"),
            )
        }
    };
    Ok(Listing {
        headers,
        rows,
        items,
    })
}

fn values<T: serde::Serialize>(items: &[T], kind: &str) -> Vec<Value> {
    items
        .iter()
        .filter_map(|i| serde_json::to_value(i).ok())
        .map(|mut v| {
            if let Some(o) = v.as_object_mut() {
                o.entry("apiVersion")
                    .or_insert_with(|| "kudo.dev/v1beta2".into());
                o.entry("kind").or_insert_with(|| kind.into());
            }
            v
        })
        .collect()
}
