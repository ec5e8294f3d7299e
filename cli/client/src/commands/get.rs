//! `kudo get instances|operators|operatorversions [NAME]`: one object, the objects of a
//! namespace or of all namespaces (`-A`), as data (without `metadata.managedFields`, as
//! kubectl) and as a table (`-o wide`: more columns).

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
    items.iter().map(|i| instance_row(i, false, 0)).collect()
}

/// One Instance's row; `wide` adds its operator, ServiceAccount and age (`now`: seconds since
/// the epoch).
fn instance_row(i: &Instance, wide: bool, now: i64) -> Vec<String> {
    let status = i.status.clone().unwrap_or_default();
    let active = status.active_plan.as_ref().map(|a| a.name.clone());
    let plan_status = active
        .as_ref()
        .and_then(|a| status.plan_status.get(a))
        .and_then(|p| p.status.as_ref())
        .map(ToString::to_string);
    let ready = status
        .conditions
        .iter()
        .find(|c| c.type_ == "Ready")
        .map(|c| c.status.clone());
    let mut row = vec![
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
    ];
    if wide {
        let operator = i
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get(kudo_crd::labels::OPERATOR));
        row.push(text(operator));
        row.push(text(i.spec.service_account_name.as_ref()));
        row.push(age(&i.metadata, now));
    }
    row
}

/// How long ago the object was created, as kubectl writes it (`45s`, `12m`, `5h`, `3d`).
fn age(meta: &kube::api::ObjectMeta, now: i64) -> String {
    let Some(created) = &meta.creation_timestamp else {
        return "<unknown>".into();
    };
    let s = (now - created.0.as_second()).max(0);
    match s {
        s if s < 120 => format!("{s}s"),
        s if s < 120 * 60 => format!("{}m", s / 60),
        s if s < 48 * 3600 => format!("{}h", s / 3600),
        s => format!("{}d", s / 86400),
    }
}

/// What `kudo get` asks for.
#[derive(Debug, Clone, Copy)]
pub struct Query<'a> {
    /// The kind.
    pub kind: Kind,
    /// One object of that name (else all of them).
    pub name: Option<&'a str>,
    /// Every namespace (then a NAMESPACE column comes first), not the target's.
    pub all_namespaces: bool,
    /// More columns (`-o wide`): AGE, and for Instances their operator and ServiceAccount.
    pub wide: bool,
}

/// Lists `kind` in the target namespace.
pub async fn list(t: &Target, kind: Kind) -> Result<Listing> {
    get(
        t,
        &Query {
            kind,
            name: None,
            all_namespaces: false,
            wide: false,
        },
    )
    .await
}

/// Reads what `q` asks for: one object ([`super::Error::NotFound`] when it is not there), or
/// the list of a namespace or of all of them.
pub async fn get(t: &Target, q: &Query<'_>) -> Result<Listing> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or_default();
    match q.kind {
        Kind::Instances => {
            let items = read::<Instance>(t, q, "Instance").await?;
            let mut headers = vec!["NAME", "OPERATOR VERSION", "ACTIVE PLAN", "STATUS", "READY"];
            if q.wide {
                headers.extend(["OPERATOR", "SERVICE ACCOUNT", "AGE"]);
            }
            let rows = items.iter().map(|i| instance_row(i, q.wide, now)).collect();
            Ok(listing(q, headers, rows, &items, "Instance"))
        }
        Kind::Operators => {
            let items = read::<Operator>(t, q, "Operator").await?;
            let mut headers = vec!["NAME", "KUDO VERSION", "KUBERNETES VERSION"];
            if q.wide {
                headers.push("AGE");
            }
            let rows = items
                .iter()
                .map(|o| {
                    let mut row = vec![
                        text(o.metadata.name.as_ref()),
                        text(o.spec.fields.kudo_version.as_ref()),
                        text(o.spec.fields.kubernetes_version.as_ref()),
                    ];
                    if q.wide {
                        row.push(age(&o.metadata, now));
                    }
                    row
                })
                .collect();
            Ok(listing(q, headers, rows, &items, "Operator"))
        }
        Kind::OperatorVersions => {
            let items = read::<OperatorVersion>(t, q, "OperatorVersion").await?;
            let mut headers = vec!["NAME", "OPERATOR", "VERSION", "APP VERSION"];
            if q.wide {
                headers.extend(["SOURCE", "SIGNATURE", "AGE"]);
            }
            let rows = items
                .iter()
                .map(|o| {
                    let mut row = vec![
                        text(o.metadata.name.as_ref()),
                        text(o.spec.operator.as_ref().and_then(|r| r.name.as_ref())),
                        text(o.spec.version.as_ref()),
                        text(o.spec.app_version.as_ref()),
                    ];
                    if q.wide {
                        row.extend(provenance(&o.metadata));
                        row.push(age(&o.metadata, now));
                    }
                    row
                })
                .collect();
            Ok(listing(q, headers, rows, &items, "OperatorVersion"))
        }
    }
}

/// An OperatorVersion's SOURCE and SIGNATURE columns: where `kudo install` fetched its
/// package, and how its cosign signature was checked (`verified sha256:...` with the signing
/// key's fingerprint, `unverified`, `none`); `<none>` for one made otherwise.
fn provenance(meta: &kube::core::ObjectMeta) -> [String; 2] {
    use kudo_crd::labels::{PACKAGE_SIGNER, PACKAGE_SOURCE, PACKAGE_VERIFICATION};
    let a = meta.annotations.as_ref();
    let get = |k: &str| a.and_then(|a| a.get(k)).filter(|v| !v.is_empty());
    let signature = match (get(PACKAGE_VERIFICATION), get(PACKAGE_SIGNER)) {
        (Some(v), Some(signer)) => format!("{v} {signer}"),
        (Some(v), None) => v.clone(),
        (None, _) => "<none>".into(),
    };
    [text(get(PACKAGE_SOURCE)), signature]
}

/// The objects `q` names, of kind `K` (`kind` in messages).
async fn read<K>(t: &Target, q: &Query<'_>, kind: &'static str) -> Result<Vec<K>>
where
    K: kube::Resource<Scope = kube::core::NamespaceResourceScope, DynamicType = ()>
        + Clone
        + serde::de::DeserializeOwned
        + std::fmt::Debug,
{
    if let Some(name) = q.name {
        let api: kube::Api<K> = kube::Api::namespaced(t.client.clone(), &t.namespace);
        let found = api.get_opt(name).await.map_err(t.api("get", kind, name))?;
        return found
            .map(|o| vec![o])
            .ok_or_else(|| t.not_found(kind, name));
    }
    let api: kube::Api<K> = match q.all_namespaces {
        true => kube::Api::all(t.client.clone()),
        false => kube::Api::namespaced(t.client.clone(), &t.namespace),
    };
    let l = api.list(&ListParams::default()).await.map_err(|e| {
        if q.all_namespaces {
            super::Error::Api {
                action: "list",
                kind,
                namespace: String::new(),
                name: String::new(),
                source: Box::new(e),
            }
        } else {
            t.api("list", kind, "")(e)
        }
    })?;
    Ok(l.items)
}

/// The listing of `items`, a NAMESPACE column first with `-A`.
fn listing<T: serde::Serialize + kube::Resource>(
    q: &Query<'_>,
    mut headers: Vec<&'static str>,
    mut rows: Vec<Vec<String>>,
    items: &[T],
    kind: &str,
) -> Listing {
    if q.all_namespaces {
        headers.insert(0, "NAMESPACE");
        for (row, item) in rows.iter_mut().zip(items) {
            row.insert(0, text(item.meta().namespace.as_ref()));
        }
    }
    Listing {
        headers,
        rows,
        items: values(items, kind),
    }
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
                // As kubectl: the field managers' bookkeeping is noise to a reader.
                if let Some(m) = o.get_mut("metadata").and_then(Value::as_object_mut) {
                    m.remove("managedFields");
                }
            }
            v
        })
        .collect()
}
