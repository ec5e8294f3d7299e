//! Every real KUDO package of the corpus loads, converts to v1beta2, and after conversion every
//! default validates against the converted schema. A package that fails is a failing test.

use kudo_pkg::document::Document;
use kudo_pkg::params::Params;
use kudo_pkg::values::Values;
use kudo_pkg::{Code, Origin, Package, Validator};
use serde_json::Value;

#[test]
fn every_corpus_package_loads_converts_and_its_defaults_validate() {
    let root = kudo_tests::shared().join("corpus/kudo-operators");
    let dirs = kudo_tests::folders_with(&root, "params.yaml");
    let mut failures = Vec::new();
    let (mut full, mut params_only, mut v1beta2, mut legacy_map, mut defaults_checked) =
        (0, 0, 0, 0, 0);
    for dir in &dirs {
        let name = dir.strip_prefix(&root).unwrap().display().to_string();
        // The few `unversioned*` folders are early layouts with params.yaml alone.
        let params = if dir.join("operator.yaml").is_file() {
            match Package::load(dir) {
                Ok(pkg) => {
                    full += 1;
                    pkg.params().clone()
                }
                Err(e) => {
                    failures.push(format!("{name}: does not load: {e}"));
                    continue;
                }
            }
        } else {
            params_only += 1;
            match Document::read(&dir.join("params.yaml")).and_then(|d| Params::parse(&d)) {
                Ok(p) => p,
                Err(e) => {
                    failures.push(format!("{name}: params.yaml does not load: {e}"));
                    continue;
                }
            }
        };
        match &params {
            Params::V1beta2(_) => v1beta2 += 1,
            Params::V1beta1(p) if p.shape == kudo_pkg::params::v1beta1::V1beta1Shape::Map => {
                legacy_map += 1
            }
            _ => {}
        }
        let schema = params.schema();
        let validator = match Validator::new(&schema) {
            Ok(v) => v,
            Err(d) => {
                failures.push(format!("{name}: converted schema is invalid: {}", d[0]));
                continue;
            }
        };
        let mut values = Values::new(Value::Object(Default::default()), Origin::None);
        let filled = values.apply_defaults(&schema);
        defaults_checked += filled.len();
        for d in validator.validate(&values) {
            if d.code != Code::Required {
                failures.push(format!("{name}: default does not validate: {d}"));
            }
        }
        // The conversion keeps every parameter.
        if let Params::V1beta1(p) = &params {
            let props = schema.as_value()["properties"]
                .as_object()
                .map(|m| m.len())
                .unwrap_or(0);
            if props != p.parameters.len() {
                failures.push(format!(
                    "{name}: {} parameters became {props} properties",
                    p.parameters.len()
                ));
            }
        }
    }
    println!(
        "corpus: {} packages ({full} with operator.yaml, {params_only} params-only; {legacy_map} legacy map format, {v1beta2} v1beta2), {defaults_checked} defaults validated",
        dirs.len()
    );
    assert!(
        failures.is_empty(),
        "{} failure(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
    // 96 published package versions plus the one KEP-33 draft.
    assert_eq!(dirs.len(), 97, "the corpus has 97 params.yaml folders");
}

#[test]
fn the_corpus_legacy_task_map_and_version_field_are_read() {
    let pkg =
        Package::load(&kudo_tests::shared().join("corpus/kudo-operators/zookeeper/0.1.0")).unwrap();
    let op = pkg.operator();
    assert_eq!(op.operator_version.as_deref(), Some("0.1.0"));
    assert_eq!(
        op.task("infra").unwrap().resources,
        vec!["services.yaml", "pdb.yaml"]
    );
    assert_eq!(op.task("infra").unwrap().kind, "Apply");
    assert!(op.plans.contains_key("deploy"));
}

#[test]
fn the_kep_33_draft_v1beta2_package_is_read_as_a_schema() {
    let pkg = Package::load(
        &kudo_tests::shared().join("corpus/kudo-operators/_drafts/kafka-params-v1beta2"),
    )
    .unwrap();
    let Params::V1beta2(schema) = pkg.params() else {
        panic!("expected v1beta2")
    };
    assert_eq!(
        schema
            .node_at(&["Authorization", "AUTHORIZATION_ENABLED"])
            .and_then(|n| n.get("trigger")),
        Some(&Value::String("update-instance".into()))
    );
}
