//! Every real KUDO package of the corpus loads, converts to v1beta2, and after conversion every
//! default validates against the converted schema. A package that fails is a failing test.

use kudo_diag::{Code, Origin};
use kudo_pkg::Package;
use kudo_policy::Validator;
use kudo_policy::params::Params;
use kudo_policy::values::Values;
use kudo_yaml::document::Document;
use serde_json::Value;

#[test]
fn every_corpus_package_loads_converts_and_its_defaults_validate() {
    let Some(shared) = kudo_testkit::shared() else {
        return;
    };
    let root = shared.join("corpus/kudo-operators");
    let dirs = kudo_testkit::folders_with(&root, "params.yaml");
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
            Params::V1beta1(p) if p.shape == kudo_policy::params::v1beta1::V1beta1Shape::Map => {
                legacy_map += 1
            }
            _ => {}
        }
        let schema = kudo_policy::convert::schema_of(&params);
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
    let Some(shared) = kudo_testkit::shared() else {
        return;
    };
    let pkg = Package::load(&shared.join("corpus/kudo-operators/zookeeper/0.1.0")).unwrap();
    let op = pkg.operator();
    assert_eq!(op.operator_version.as_deref(), Some("0.1.0"));
    assert_eq!(
        op.task("infra").unwrap().resources,
        vec!["services.yaml", "pdb.yaml"]
    );
    assert_eq!(
        op.task("infra").unwrap().kind,
        kudo_pkg::package::TaskKind::Apply
    );
    assert!(op.plans.contains_key("deploy"));
}

#[test]
fn the_kep_33_draft_v1beta2_package_is_read_as_a_schema() {
    let Some(shared) = kudo_testkit::shared() else {
        return;
    };
    let pkg =
        Package::load(&shared.join("corpus/kudo-operators/_drafts/kafka-params-v1beta2")).unwrap();
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

/// The 14 KUDO operators with their templates: Go templates with sprig, rendered as KUDO
/// renders them. Each verifies without an error, and every plan renders with the defaults
/// into Kubernetes objects (Pipe keys named as KUDO names them).
#[test]
fn every_kudo_operator_with_templates_verifies_and_renders_every_plan() {
    use kudo_pkg::TemplateEngine;
    use kudo_pkg::render::{RenderOptions, render_plan};
    let Some(shared) = kudo_testkit::shared() else {
        return;
    };
    let root = shared.join("corpus/kudo-operators-full");
    let dirs = kudo_testkit::folders_with(&root, "operator.yaml");
    assert_eq!(dirs.len(), 14, "{dirs:?}");
    let mut failures = Vec::new();
    let (mut plans, mut templates) = (0, 0);
    for dir in &dirs {
        let name = dir.strip_prefix(&root).unwrap().display().to_string();
        let pkg = Package::load(dir).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(pkg.template_engine(), TemplateEngine::Go, "{name}");
        let errors: Vec<String> = kudo_pkg::verify::verify(&pkg)
            .iter()
            .filter(|d| d.is_error())
            .map(|d| format!("{name}: {d}"))
            .collect();
        failures.extend(errors);
        let version = pkg.policy_version().expect("a valid schema");
        let (values, _) = version.effective(&serde_json::json!({}));
        let values = values.into_value();
        for plan in pkg.operator().plans.keys() {
            let opts = RenderOptions {
                instance: "inst".into(),
                namespace: "ns".into(),
                plan: plan.clone(),
                images: Default::default(),
            };
            match render_plan(&pkg, &values, &opts) {
                Ok(rendered) => {
                    plans += 1;
                    templates += rendered.len();
                    // Issue 33: an optional parameter without a value renders as KUDO renders
                    // it (cassandra's BACKUP_PREFIX as ''), never as Go's `<no value>`.
                    failures.extend(
                        rendered
                            .iter()
                            .filter(|r| r.text.contains("<no value>"))
                            .map(|r| format!("{name}: plan {plan}: {} has <no value>", r.template)),
                    );
                }
                Err(diags) => {
                    failures.extend(diags.iter().map(|d| format!("{name}: plan {plan}: {d}")))
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // Every plan of the 14 operators, and their 114 templates (one twice, in two plans).
    assert_eq!((plans, templates), (29, 115));
}

/// Issue 33, through the CLI: `kudo template PKG --plan P` of every plan of the 14 KUDO
/// operators succeeds with no `-p` and prints no `<no value>` (cassandra's restore script
/// printed `in prefix '<no value>'` for BACKUP_PREFIX, optional and without a default; KUDO
/// prints `in prefix ''`).
#[test]
fn kudo_template_renders_every_plan_of_the_kudo_operators_without_no_value() {
    let Some(shared) = kudo_testkit::shared() else {
        return;
    };
    let root = shared.join("corpus/kudo-operators-full");
    let mut failures = Vec::new();
    let mut plans = 0;
    for dir in kudo_testkit::folders_with(&root, "operator.yaml") {
        let name = dir.strip_prefix(&root).unwrap().display().to_string();
        let pkg = Package::load(&dir).unwrap_or_else(|e| panic!("{name}: {e}"));
        for plan in pkg.operator().plans.keys() {
            plans += 1;
            let out = kudo_testkit::kudo()
                .arg("template")
                .arg(&dir)
                .args(["--plan", plan])
                .output()
                .unwrap();
            let stdout = String::from_utf8_lossy(&out.stdout);
            if !out.status.success() {
                failures.push(format!(
                    "{name}: plan {plan}: {}",
                    String::from_utf8_lossy(&out.stderr)
                ));
            }
            failures.extend(
                stdout
                    .lines()
                    .filter(|l| l.contains("<no value>"))
                    .map(|l| format!("{name}: plan {plan}: {}", l.trim())),
            );
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_eq!(plans, 29);
}

/// Cassandra's restore script with BACKUP_PREFIX unset, as KUDO renders it.
#[test]
fn cassandra_restore_script_has_an_empty_prefix_when_none_is_set() {
    let Some(shared) = kudo_testkit::shared() else {
        return;
    };
    let pkg = Package::load(&shared.join("corpus/kudo-operators-full/cassandra")).unwrap();
    let rendered = with_defaults(&pkg, "deploy");
    let scripts = rendered
        .iter()
        .find(|r| r.template == "node-scripts.yaml")
        .expect("deploy applies node-scripts.yaml");
    assert!(
        scripts.text.contains("from backup '' in prefix ''\";"),
        "{}",
        scripts.text
    );
}

/// `kudo package convert` keeps KUDO's templates working: each of the 14 operators, converted
/// to v1beta2 (typed parameters, `templateEngine: go`), renders every plan byte for byte as
/// the original does, with the defaults.
#[test]
fn converted_kudo_operators_render_exactly_as_the_originals() {
    use kudo_pkg::render::{RenderOptions, render_plan};
    let Some(shared) = kudo_testkit::shared() else {
        return;
    };
    let root = shared.join("corpus/kudo-operators-full");
    let tmp = tempfile::tempdir().unwrap();
    let render_all = |pkg: &Package| -> Vec<String> {
        let version = pkg.policy_version().expect("a valid schema");
        let values = version.effective(&serde_json::json!({})).0.into_value();
        let mut texts = Vec::new();
        for plan in pkg.operator().plans.keys() {
            let opts = RenderOptions {
                instance: "inst".into(),
                namespace: "ns".into(),
                plan: plan.clone(),
                images: Default::default(),
            };
            let rendered = render_plan(pkg, &values, &opts)
                .unwrap_or_else(|d| panic!("{}: {plan}: {d:?}", pkg.source().display()));
            texts.extend(
                rendered
                    .into_iter()
                    .map(|r| format!("{}\n{}", r.template, r.text)),
            );
        }
        texts
    };
    for dir in kudo_testkit::folders_with(&root, "operator.yaml") {
        let name = dir.file_name().unwrap().to_string_lossy().to_string();
        let out = tmp.path().join(&name);
        kudo_testkit::kudo()
            .args(["package", "convert"])
            .arg(&dir)
            .arg("--output-dir")
            .arg(&out)
            .assert()
            .success();
        let original = Package::load(&dir).unwrap();
        let converted = Package::load(&out).unwrap();
        assert!(matches!(converted.params(), Params::V1beta2(_)), "{name}");
        assert_eq!(render_all(&converted), render_all(&original), "{name}");
    }
}

/// Plan `plan` of `pkg` rendered with the package's defaults, for Instance `inst` in `ns`.
fn with_defaults(pkg: &Package, plan: &str) -> Vec<kudo_pkg::render::Rendered> {
    let version = pkg.policy_version().expect("a valid schema");
    let values = version.effective(&serde_json::json!({})).0.into_value();
    let opts = kudo_pkg::render::RenderOptions {
        instance: "inst".into(),
        namespace: "ns".into(),
        plan: plan.into(),
        images: Default::default(),
    };
    kudo_pkg::render::render_plan(pkg, &values, &opts)
        .unwrap_or_else(|d| panic!("{}: plan {plan}: {d:?}", pkg.source().display()))
}

/// Golden files: the deploy plan of three KUDO operators rendered with their defaults, byte for
/// byte (these renders are the ones found identical to Go's own text/template + sprig, see
/// docs/templates.md).
#[test]
fn three_kudo_operators_render_their_deploy_plan_as_the_golden_files() {
    let Some(shared) = kudo_testkit::shared() else {
        return;
    };
    let root = shared.join("corpus/kudo-operators-full");
    for name in ["zookeeper", "redis", "kafka"] {
        let pkg = Package::load(&root.join(name)).unwrap();
        let rendered = with_defaults(&pkg, "deploy");
        let mut text = String::new();
        for r in &rendered {
            // every document parses as a Kubernetes object (checked by the renderer)
            assert!(!r.objects.is_empty(), "{name}: {}", r.template);
            text.push_str(&format!(
                "# templates/{} (step {}, task {})\n{}\n",
                r.template, r.step, r.task, r.text
            ));
        }
        insta::assert_snapshot!(format!("deploy_{name}"), text);
    }
}

/// Issue 22: the operators' objects in API versions Kubernetes no longer serves. `package
/// verify` warns about each (and only those), where its `apiVersion` is written: rabbitmq's
/// Role and RoleBinding (`rbac.authorization.k8s.io/v1beta1`), spark's two CRDs
/// (`apiextensions.k8s.io/v1beta1`) and five PodDisruptionBudgets (`policy/v1beta1`); each
/// converts to its successor.
#[test]
fn kudo_operators_in_removed_api_versions_are_warned_about_where_written() {
    let Some(shared) = kudo_testkit::shared() else {
        return;
    };
    let root = shared.join("corpus/kudo-operators-full");
    let mut lines = Vec::new();
    for dir in kudo_testkit::folders_with(&root, "operator.yaml") {
        let pkg = Package::load(&dir).unwrap();
        for d in kudo_pkg::verify::verify(&pkg) {
            if d.code != Code::RemovedApi {
                continue;
            }
            assert!(!d.is_error(), "{d}");
            let Origin::File(at) = &d.origin else {
                panic!("{d} says not where it is")
            };
            let file = at.path.strip_prefix(&root).unwrap().display();
            let help = d.help.as_deref().unwrap_or_default();
            lines.push(format!(
                "{file}:{}:{}: {}\n    {help}",
                at.line, at.col, d.message
            ));
        }
    }
    assert_eq!(lines.len(), 9, "{}", lines.join("\n"));
    insta::assert_snapshot!(lines.join("\n"));
}

/// spark's two controller-gen CRDs (8,450 lines of `apiextensions.k8s.io/v1beta1`, rendered
/// as the deploy plan renders them) convert to v1 CRDs whose schemas are structural, with the
/// v1beta1 validation, subresources and version moved into `spec.versions`.
#[test]
fn spark_crds_convert_to_v1_with_structural_schemas() {
    use kudo_k8s::{structural, successor};
    let Some(shared) = kudo_testkit::shared() else {
        return;
    };
    let pkg = Package::load(&shared.join("corpus/kudo-operators-full/spark")).unwrap();
    let rendered = with_defaults(&pkg, "deploy");
    let crds: Vec<&Value> = rendered
        .iter()
        .filter(|r| r.template == "spark-operator-crds.yaml")
        .flat_map(|r| &r.objects)
        .collect();
    assert_eq!(crds.len(), 2);
    for crd in crds {
        let name = crd["metadata"]["name"].as_str().unwrap();
        let c = successor::convert(crd)
            .expect("a removed version")
            .unwrap_or_else(|u| panic!("{name}: {u}"));
        let v1 = &c.object;
        assert_eq!(v1["apiVersion"], "apiextensions.k8s.io/v1", "{name}");
        assert_eq!(v1.get("status"), None, "{name}");
        let spec = v1["spec"].as_object().unwrap();
        for gone in ["version", "validation", "subresources"] {
            assert!(!spec.contains_key(gone), "{name}: spec.{gone}");
        }
        assert_eq!(spec["preserveUnknownFields"], false, "{name}");
        assert_eq!(spec["scope"], "Namespaced", "{name}");
        let versions = spec["versions"].as_array().unwrap();
        assert_eq!(versions.len(), 1, "{name}");
        let v = &versions[0];
        assert_eq!(
            (&v["name"], &v["served"], &v["storage"]),
            (
                &Value::from("v1beta2"),
                &Value::from(true),
                &Value::from(true)
            ),
            "{name}"
        );
        assert_eq!(
            v["subresources"],
            serde_json::json!({"status": {}}),
            "{name}"
        );
        let schema = &v["schema"]["openAPIV3Schema"];
        let violations: Vec<String> = structural::violations(schema)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert!(violations.is_empty(), "{name}: {violations:#?}");
        let v1beta1 = &crd["spec"]["validation"]["openAPIV3Schema"];
        assert_eq!(
            schema["properties"]
                .as_object()
                .unwrap()
                .keys()
                .collect::<Vec<_>>(),
            v1beta1["properties"]
                .as_object()
                .unwrap()
                .keys()
                .collect::<Vec<_>>(),
            "{name}"
        );
        let notes: Vec<String> = c.notes.iter().map(ToString::to_string).collect();
        println!("{name}: {} notes\n{}", notes.len(), notes.join("\n"));
    }
}

/// Issue 22: rendered manifests are read as Kubernetes reads them. For every plan of the 14
/// operators rendered with the defaults, the stream `kudo template` prints reads back (by
/// Kubernetes' rules) as exactly the objects rendered, each template printed as rendered
/// (rabbitmq's ConfigMap, which ends in a block scalar with no line break, made `|-`); and
/// with `0777`, `0755` read as octal, no `defaultMode` is above 0777 (511).
#[test]
fn kudo_operators_print_streams_that_read_as_their_objects_by_kubernetes_rules() {
    use kudo_pkg::render::{self, RenderOptions, render_plan};
    use kudo_yaml::manifest::{self, Printable};
    let Some(shared) = kudo_testkit::shared() else {
        return;
    };
    let root = shared.join("corpus/kudo-operators-full");
    let (mut modes, mut stripped, mut failures) = (Vec::new(), Vec::new(), Vec::new());
    for dir in kudo_testkit::folders_with(&root, "operator.yaml") {
        let name = dir.file_name().unwrap().to_string_lossy().to_string();
        let pkg = Package::load(&dir).unwrap();
        let version = pkg.policy_version().expect("a valid schema");
        let values = version.effective(&serde_json::json!({})).0.into_value();
        for plan in pkg.operator().plans.keys() {
            let opts = RenderOptions {
                instance: "inst".into(),
                namespace: "ns".into(),
                plan: plan.clone(),
                images: Default::default(),
            };
            let rendered = render_plan(&pkg, &values, &opts).unwrap_or_else(|d| panic!("{d:?}"));
            let objects: Vec<Value> = rendered.iter().flat_map(|r| r.objects.clone()).collect();
            let text = render::stream(&rendered);
            let read: Vec<Value> = manifest::parse(std::path::Path::new("-"), &text)
                .unwrap_or_else(|e| panic!("{name} {plan}: {e}"))
                .into_iter()
                .filter(|d| !d.is_null())
                .collect();
            if read != objects {
                failures.push(format!("{name} {plan}: the stream reads as other objects"));
            }
            for r in &rendered {
                match manifest::printable(&r.text, &r.objects) {
                    Printable::Rendered(_) => {}
                    Printable::Stripped(_) => stripped.push(format!("{name}/{}", r.template)),
                    Printable::Objects(_) => {
                        failures.push(format!("{name} {plan}: {} printed as objects", r.template))
                    }
                }
                for o in &r.objects {
                    collect_default_modes(o, &mut |m| {
                        modes.push((name.clone(), r.template.clone(), o["kind"].clone(), m))
                    });
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    stripped.sort();
    stripped.dedup();
    assert_eq!(stripped, ["rabbitmq/configmap.yaml"]);
    let above: Vec<_> = modes.iter().filter(|m| m.3.as_u64() > Some(511)).collect();
    assert!(above.is_empty(), "defaultMode above 0777: {above:?}");
    assert!(modes.iter().all(|m| m.3.is_u64()), "{modes:?}");
    let zookeeper: Vec<_> = modes
        .iter()
        .filter(|m| m.0 == "zookeeper" && m.2 == "StatefulSet")
        .map(|m| m.3.clone())
        .collect();
    assert!(
        !zookeeper.is_empty() && zookeeper.iter().all(|m| m == 511),
        "{zookeeper:?}"
    );
    // 0755 in cassandra, confluent, kafka...: octal 493
    assert!(modes.iter().any(|m| m.3 == 493), "{modes:?}");
}

/// Calls `found` with every `defaultMode` in `v` (not the schemas of a CRD's properties).
fn collect_default_modes(v: &Value, found: &mut dyn FnMut(Value)) {
    match v {
        Value::Object(m) => {
            for (k, v) in m {
                if k == "defaultMode" && !v.is_object() {
                    found(v.clone());
                }
                collect_default_modes(v, found);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| collect_default_modes(v, found)),
        _ => {}
    }
}
