//! Property tests of the extensions: for random schemas and values, a migration places or
//! reports every installed value, and an update and its reverse select the same plan. And of
//! manifests: what kudo prints as YAML, Kubernetes reads back as the same JSON.

use std::collections::BTreeMap;

use kudo_policy::ParamSchema;
use kudo_policy::old_name::migrate;
use kudo_policy::trigger::select;
use proptest::prelude::*;
use serde_json::{Map, Value, json};

const PLANS: &[&str] = &["deploy", "update", "p1", "p2"];

/// A leaf parameter: its path (1 to 3 names), and an optional trigger on it.
#[derive(Debug, Clone)]
struct Leaf {
    path: Vec<String>,
    trigger: Option<&'static str>,
}

fn name() -> impl Strategy<Value = String> {
    prop::sample::select(vec!["a", "b", "c", "d", "x/y", "t~n"]).prop_map(String::from)
}

fn leaves() -> impl Strategy<Value = Vec<Leaf>> {
    prop::collection::vec(
        (
            prop::collection::vec(name(), 1..=3),
            prop::option::of(prop::sample::select(vec!["p1", "p2", "update"])),
        )
            .prop_map(|(path, trigger)| Leaf { path, trigger }),
        1..8,
    )
    .prop_map(|mut ls| {
        // No leaf may be a prefix of another (a path is either an object or a leaf).
        ls.sort_by_key(|l| l.path.len());
        let mut kept: Vec<Leaf> = Vec::new();
        for l in ls {
            let clash = kept.iter().any(|k| {
                let n = k.path.len().min(l.path.len());
                k.path[..n] == l.path[..n]
            });
            if !clash {
                kept.push(l);
            }
        }
        kept
    })
}

/// An object schema with the leaves as integer parameters (`rename` adds an `oldName`).
fn schema_of(leaves: &[(Leaf, Option<Vec<String>>)]) -> ParamSchema {
    let mut root = json!({"type": "object", "properties": {}});
    for (leaf, old_name) in leaves {
        let mut node = &mut root;
        for (i, t) in leaf.path.iter().enumerate() {
            let props = node["properties"].as_object_mut().unwrap();
            let last = i + 1 == leaf.path.len();
            let child = props.entry(t.clone()).or_insert_with(|| {
                if last {
                    json!({"type": "integer"})
                } else {
                    json!({"type": "object", "properties": {}})
                }
            });
            node = child;
        }
        if let Some(t) = leaf.trigger {
            node["trigger"] = json!(t);
        }
        if let Some(old) = old_name {
            node["oldName"] = json!(kudo_diag::pointer::from_tokens(old));
        }
    }
    ParamSchema::from_value(root).unwrap()
}

fn pointer(path: &[String]) -> String {
    kudo_diag::pointer::from_tokens(path)
}

/// Values for a random subset of the leaves.
fn values_of(leaves: &[Leaf], picks: &[(bool, i64)]) -> Value {
    let mut out = Value::Object(Map::new());
    for (leaf, (set, v)) in leaves.iter().zip(picks.iter().cycle()) {
        if !set {
            continue;
        }
        let mut cur = &mut out;
        for t in &leaf.path {
            cur = cur
                .as_object_mut()
                .unwrap()
                .entry(t.clone())
                .or_insert(Value::Object(Map::new()));
        }
        *cur = json!(v);
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn update_and_reverse_update_select_the_same_plan(
        ls in leaves(),
        a in prop::collection::vec((any::<bool>(), 0i64..3), 1..8),
        b in prop::collection::vec((any::<bool>(), 0i64..3), 1..8),
    ) {
        let schema = schema_of(&ls.iter().cloned().map(|l| (l, None)).collect::<Vec<_>>());
        let old = values_of(&ls, &a);
        let new = values_of(&ls, &b);
        let there = select(&schema, PLANS, &old, &new);
        let back = select(&schema, PLANS, &new, &old);
        match (there, back) {
            (Ok(x), Ok(y)) => {
                prop_assert_eq!(x.plan, y.plan);
                let mut px: Vec<_> = x.changes.iter().map(|c| c.pointer.clone()).collect();
                let mut py: Vec<_> = y.changes.iter().map(|c| c.pointer.clone()).collect();
                px.sort();
                py.sort();
                prop_assert_eq!(px, py);
            }
            (Err(x), Err(y)) => {
                let mut cx: Vec<_> = x.iter().map(|d| (d.pointer.clone(), d.code)).collect();
                let mut cy: Vec<_> = y.iter().map(|d| (d.pointer.clone(), d.code)).collect();
                cx.sort_by(|l, r| l.0.cmp(&r.0));
                cy.sort_by(|l, r| l.0.cmp(&r.0));
                prop_assert_eq!(cx, cy);
            }
            (x, y) => prop_assert!(false, "one way {:?}, the other {:?}", x, y),
        }
    }

    #[test]
    fn migration_places_or_reports_every_installed_value(
        ls in leaves(),
        fates in prop::collection::vec(0u8..3, 8),
        picks in prop::collection::vec((any::<bool>(), 0i64..100), 1..8),
    ) {
        let old_schema = schema_of(&ls.iter().cloned().map(|l| (l, None)).collect::<Vec<_>>());
        let installed = values_of(&ls, &picks);
        // Each old leaf is kept (0), renamed under /moved (1) or removed (2).
        let mut new_leaves = Vec::new();
        for (l, fate) in ls.iter().zip(fates.iter().cycle()) {
            match fate {
                0 => new_leaves.push((l.clone(), None)),
                1 => {
                    let mut path = vec!["moved".to_string()];
                    path.extend(l.path.iter().cloned());
                    new_leaves.push((Leaf { path, trigger: None }, Some(l.path.clone())));
                }
                _ => {}
            }
        }
        // `moved` must not clash with an old top-level name.
        prop_assume!(!ls.iter().any(|l| l.path[0] == "moved"));
        let new_schema = schema_of(&new_leaves);
        let m = migrate(&old_schema, &installed, &new_schema, "1").unwrap();
        let mut accounted: BTreeMap<String, &str> = BTreeMap::new();
        for mv in &m.report.moved {
            accounted.insert(mv.from.clone(), "moved");
            prop_assert_eq!(installed.pointer(&mv.from), m.values.value().pointer(&mv.to));
        }
        for k in &m.report.kept {
            accounted.insert(k.clone(), "kept");
            prop_assert_eq!(installed.pointer(k), m.values.value().pointer(k));
        }
        for d in &m.report.dropped {
            accounted.insert(d.pointer.clone(), "dropped");
        }
        for l in &ls {
            let p = pointer(&l.path);
            if installed.pointer(&p).is_none() {
                continue;
            }
            let found = accounted.keys().any(|a| p == *a || p.starts_with(&format!("{a}/")));
            prop_assert!(found, "{} is neither placed nor reported: {:?}", p, m.report);
        }
    }
}

/// `-p` arguments, good and bad, for the example Cassandra Instance.
fn override_arg() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "nodeCount=4",
        "nodeCount=0",
        "nodeCount=abc",
        "clusterName=other",
        "clusterName=prod-cluster",
        "topology/0/nodes=5",
        "topology/1/nodes=1",
        "topology/7/nodes=1",
        "topology/-=x",
        "backup/enabled=false",
        "backup/credentials/password=n3w",
        "metrics/enabled=true",
        "logLevel=TRACE",
        "logLevel=DEBUG",
        "nodecount=4",
        "=3",
    ])
    .prop_map(String::from)
}

proptest! {
    // Each case runs the kudo process: fewer cases.
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// A refused `kudo update -f` leaves the file byte-identical; an accepted one leaves a file
    /// that still parses as the same Instance with only parameters changed.
    #[test]
    fn a_refused_update_leaves_the_file_byte_identical(
        args in prop::collection::vec(override_arg(), 1..4),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("instance.yaml");
        std::fs::copy(kudo_testkit::example("instances/cassandra.yaml"), &file).unwrap();
        let before = std::fs::read(&file).unwrap();
        let mut cmd = std::process::Command::new(kudo_testkit::kudo_bin());
        cmd.arg("update").arg("-f").arg(&file)
            .arg("--package").arg(kudo_testkit::example("cassandra-v1beta2"));
        for a in &args {
            cmd.arg("-p").arg(a);
        }
        let out = cmd.output().unwrap();
        let after = std::fs::read(&file).unwrap();
        if out.status.success() {
            let old = kudo_yaml::document::Document::parse(std::path::Path::new("a"), std::str::from_utf8(&before).unwrap()).unwrap();
            let new = kudo_yaml::document::Document::parse(std::path::Path::new("b"), std::str::from_utf8(&after).unwrap()).unwrap();
            let strip = |v: &Value| {
                let mut v = v.clone();
                v["spec"].as_object_mut().unwrap().remove("parameters");
                v
            };
            prop_assert_eq!(strip(old.value()), strip(new.value()));
        } else {
            // 2: a malformed `-p` (`=3`), a usage error; 1: refused parameters
            let want = if args.iter().any(|a| a.starts_with('=')) { 2 } else { 1 };
            prop_assert_eq!(out.status.code(), Some(want));
            prop_assert!(before == after, "refused {:?} but the file changed", args);
        }
    }
}

/// A JSON value of the shapes manifests hold: strings a YAML 1.1 reader would take for
/// something else, other text, numbers (no integral floats: Kubernetes reads those as
/// integers), booleans, null, maps and lists.
fn manifest_value() -> impl Strategy<Value = Value> {
    let tricky = prop::sample::select(vec![
        "yes",
        "on",
        "y",
        "N",
        "Off",
        "~",
        "null",
        "",
        "0777",
        "08",
        "1_000",
        "0x1F",
        "0o17",
        "0b101",
        "+1",
        "1e3",
        "1.",
        ".5",
        ".inf",
        "-.Inf",
        ".NaN",
        "2001-12-14",
        "<<",
        "- x",
        "a: b",
        "#",
        "|",
        ">-",
        "'",
        "\"",
        "@",
        "%",
        "!x",
        "&a",
        "*a",
        "? x",
        "---",
        "...",
    ]);
    let text = prop_oneof![tricky.clone().prop_map(String::from), "[ -~\n\t]{0,12}"];
    let leaf = prop_oneof![
        text.clone().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        prop_oneof![-1e6..1e6f64, -1e-3..1e-3f64]
            .prop_filter("not an integer", |f| f.fract() != 0.0)
            .prop_map(Value::from),
        any::<bool>().prop_map(Value::from),
        Just(Value::Null),
    ];
    leaf.prop_recursive(3, 24, 4, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
            prop::collection::btree_map(text.clone(), inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// `kudo install --dry-run -o yaml` and every YAML output: Kubernetes reads it back as the
    /// JSON printed (`"yes"` stays a string, `"0777"` is not 511).
    #[test]
    fn yaml_printed_reads_back_by_kubernetes_rules_as_the_same_json(value in manifest_value()) {
        let yaml = kudo_yaml::manifest::to_yaml(&value);
        let back = kudo_yaml::manifest::parse(std::path::Path::new("-"), &yaml);
        prop_assert_eq!(back.ok(), Some(vec![value]), "{}", yaml);
    }
}
