//! The CustomResourceDefinitions of Operator, OperatorVersion and Instance, each served in `kudo.dev/v1beta1` (KUDO's
//! flat parameters) and `kudo.dev/v1beta2` (structured parameters, the storage version), and of
//! Rollout, served in `kudo.dev/v1beta2` only (KUDO never had it).
//!
//! The Rust types are the source of truth: [`definitions`] derives the CustomResourceDefinitions
//! from them (kube's derive + schemars) and merges the two versions of each kind.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::CustomResourceExt;

use crate::{v1beta1, v1beta2};

/// The version etcd stores.
pub const STORAGE_VERSION: &str = "v1beta2";

/// kudo's CRDs: the three KUDO kinds, each with both versions (v1beta2 stored, both served),
/// then Rollout.
pub fn definitions() -> Vec<CustomResourceDefinition> {
    let mut out = converted();
    out.push(crate::rollout::Rollout::crd());
    out
}

/// The CRDs served in two versions, which the conversion webhook converts and a storage
/// migration rewrites: Operator, OperatorVersion, Instance.
pub fn converted() -> Vec<CustomResourceDefinition> {
    let pairs = [
        (v1beta1::Operator::crd(), v1beta2::Operator::crd()),
        (
            v1beta1::OperatorVersion::crd(),
            v1beta2::OperatorVersion::crd(),
        ),
        (v1beta1::Instance::crd(), v1beta2::Instance::crd()),
    ];
    pairs
        .into_iter()
        .map(|(old, new)| {
            kube::core::crd::merge_crds(vec![old, new], STORAGE_VERSION)
                .expect("the two versions of a kind share names and scope")
        })
        .collect()
}

/// The CRDs as one multi-document YAML stream (`deploy/crds.yaml`).
pub fn yaml() -> String {
    let mut out = String::new();
    for crd in definitions() {
        out.push_str("---\n");
        out.push_str(&serde_saphyr::to_string(&crd).expect("a CRD serializes"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_version_schema_is_structural() {
        for crd in definitions() {
            let name = crd.metadata.name.clone().unwrap_or_default();
            let versions = if crd.spec.names.kind == "Rollout" {
                1
            } else {
                2
            };
            assert_eq!(crd.spec.versions.len(), versions, "{name}");
            for v in &crd.spec.versions {
                assert!(v.served, "{name} {}", v.name);
                assert_eq!(v.storage, v.name == STORAGE_VERSION, "{name} {}", v.name);
                let schema = v
                    .schema
                    .as_ref()
                    .and_then(|s| s.open_api_v3_schema.as_ref())
                    .expect("every version has a schema");
                let json = serde_json::to_value(schema).unwrap();
                let problems = kudo_k8s::structural::violations(&json);
                assert!(
                    problems.is_empty(),
                    "{name} {}: {}",
                    v.name,
                    problems
                        .iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join("\n")
                );
            }
        }
    }

    #[test]
    fn instances_have_a_status_subresource_and_short_names() {
        let crds = definitions();
        let inst = crds
            .iter()
            .find(|c| c.spec.names.kind == "Instance")
            .unwrap();
        assert_eq!(
            inst.spec.names.short_names.as_deref(),
            Some(&["inst".to_string()][..])
        );
        for v in &inst.spec.versions {
            assert!(
                v.subresources
                    .as_ref()
                    .and_then(|s| s.status.as_ref())
                    .is_some()
            );
            assert!(
                v.additional_printer_columns
                    .as_ref()
                    .is_some_and(|c| !c.is_empty())
            );
        }
    }

    /// `deploy/crds.yaml` is generated: it must be exactly what the types give
    /// (`KUDO_UPDATE_CRDS=1 cargo test -p kudo-crd` rewrites it).
    #[test]
    fn the_checked_in_crds_match_the_types() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../deploy/crds.yaml");
        let want = yaml();
        if std::env::var_os("KUDO_UPDATE_CRDS").is_some() {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, &want).unwrap();
        }
        let have = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            have == want,
            "deploy/crds.yaml is not what the types generate: run KUDO_UPDATE_CRDS=1 cargo test -p kudo-crd"
        );
    }
}
