//! `kudo version`: this client's version, and the cluster's when one is reachable (its
//! Kubernetes version and whether kudo is installed there, with the version each kudo CRD
//! stores).

use std::time::Duration;

use super::Outcome;
use crate::args::{VersionArgs, VersionFormat};
use crate::error::Error;
use serde_json::{Value, json};

/// How long the cluster is given to answer.
const TIMEOUT: Duration = Duration::from_secs(5);

pub fn run(a: VersionArgs) -> Result<Outcome, Error> {
    let client = json!({"version": env!("CARGO_PKG_VERSION")});
    let server = if a.client { None } else { Some(server(&a)) };
    let mut report = json!({"client": client});
    if let Some(s) = &server {
        report["server"] = s.clone();
    }
    let text = match a.output {
        VersionFormat::Json => format!(
            "{}\n",
            serde_json::to_string_pretty(&report).unwrap_or_default()
        ),
        VersionFormat::Yaml => super::to_yaml(&report),
        VersionFormat::Text => {
            let mut t = format!("Client: kudo {}\n", env!("CARGO_PKG_VERSION"));
            match &server {
                None => {}
                Some(s) if s.get("error").is_some() => {
                    t.push_str(&format!(
                        "Server: not reachable: {}\n",
                        s["error"].as_str().unwrap_or("")
                    ));
                }
                Some(s) => {
                    t.push_str(&format!(
                        "Server: Kubernetes {}\n",
                        s["kubernetes"].as_str().unwrap_or("?")
                    ));
                    match s["kudo"]["crds"].as_object() {
                        Some(crds) if !crds.is_empty() => {
                            let stored: Vec<String> = crds
                                .iter()
                                .map(|(n, v)| format!("{n} stores {}", v.as_str().unwrap_or("?")))
                                .collect();
                            t.push_str(&format!("kudo: installed ({})\n", stored.join(", ")));
                        }
                        _ => t.push_str("kudo: not installed (run `kudo init`)\n"),
                    }
                }
            }
            t
        }
    };
    super::print(&text)?;
    Ok(Outcome::Done)
}

/// The cluster's side, or `{"error": why}`: a version is printed either way.
fn server(a: &VersionArgs) -> Value {
    let runtime = match super::runtime() {
        Ok(r) => r,
        Err(e) => return json!({"error": e.to_string()}),
    };
    runtime.block_on(async {
        let found = tokio::time::timeout(TIMEOUT, async {
            let client = a.connect.client().await.map_err(|e| e.to_string())?;
            let version = client
                .apiserver_version()
                .await
                .map_err(|e| format!("the API server does not answer: {}", kudo_cluster::said(&e)))?;
            let crds: kube::Api<
                k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
            > = kube::Api::all(client);
            let mut stored = serde_json::Map::new();
            for name in ["operators.kudo.dev", "operatorversions.kudo.dev", "instances.kudo.dev"] {
                if let Ok(Some(crd)) = crds.get_opt(name).await
                    && let Some(v) = crd.spec.versions.iter().find(|v| v.storage)
                {
                    stored.insert(name.into(), json!(v.name));
                }
            }
            Ok::<_, String>(json!({"kubernetes": version.git_version, "kudo": {"crds": stored}}))
        })
        .await;
        match found {
            Ok(Ok(v)) => v,
            Ok(Err(e)) => json!({"error": e}),
            Err(_) => json!({"error": format!("no answer within {}s", TIMEOUT.as_secs())}),
        }
    })
}
