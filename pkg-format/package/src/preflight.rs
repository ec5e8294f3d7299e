//! The package side of the upgrade preflight: the CustomResourceDefinitions a package's plans
//! apply ([`crds`]), which the CRD preflight (`kudo_k8s::crd_safety`) compares with those in
//! the cluster (`kudo upgrade`, the manager) or with an older package's (`kudo package verify
//! NEW --against OLD`).

use serde_json::Value;

use crate::package::Package;
use crate::render::{Prepared, RenderOptions};

/// The CustomResourceDefinitions the plans of `pkg` apply for an Instance `instance` in
/// `namespace` with effective parameters `params`, each once (by name, the first a plan
/// renders), in plan order, as `apiextensions.k8s.io/v1` (a `v1beta1` one as the manager
/// applies it, [`kudo_k8s::successor::convert`]). A plan whose templates do not render is skipped: rendering errors
/// are `package verify`'s and the plan's own to report, not the preflight's.
pub fn crds(pkg: &Package, params: &Value, instance: &str, namespace: &str) -> Vec<Value> {
    let prepared = Prepared::new(pkg);
    let mut out: Vec<Value> = Vec::new();
    for plan in pkg.operator().plans.keys() {
        let opts = RenderOptions {
            instance: instance.to_string(),
            namespace: namespace.to_string(),
            plan: plan.clone(),
        };
        let Ok(rendered) = prepared.render_plan(params, &opts) else {
            continue;
        };
        for object in rendered.into_iter().flat_map(|r| r.objects) {
            if !is_crd(&object) {
                continue;
            }
            let object = match kudo_k8s::successor::convert(&object) {
                Some(Ok(converted)) => converted.object,
                _ => object,
            };
            let name = object.pointer("/metadata/name");
            if out.iter().all(|o| o.pointer("/metadata/name") != name) {
                out.push(object);
            }
        }
    }
    out
}

/// True for an `apiextensions.k8s.io` CustomResourceDefinition (any version of that group).
pub fn is_crd(object: &Value) -> bool {
    object.get("kind").and_then(Value::as_str) == Some("CustomResourceDefinition")
        && object
            .get("apiVersion")
            .and_then(Value::as_str)
            .is_some_and(|v| v.starts_with("apiextensions.k8s.io/"))
}
