//! The schema extensions: `trigger`, `immutable`, `oldName`. KEP-33's own examples as golden
//! tests, and the cases KUDO's admission webhook tested, rewritten for nested parameters.

use kudo_diag::Code;
use kudo_pkg::Package;
use kudo_policy::change::{self, Installed, Proposal, Version};
use kudo_policy::old_name::migrate;
use kudo_policy::trigger::{Reason, select};
use kudo_policy::values::{self, Inputs};
use kudo_policy::{ParamSchema, Params, immutable};
use kudo_testkit::fixture;
use serde_json::{Value, json};

/// KEP-33 "Operator conversion and upgrade example": the installed v1beta1 instance, converted,
/// then upgraded to the restructured version, must come out exactly as the KEP shows.
#[test]
fn kep33_conversion_and_upgrade_example() {
    let old = Package::load(&fixture("kep33/v1")).unwrap();
    let new = Package::load(&fixture("kep33/v2")).unwrap();
    let Params::V1beta1(old_params) = old.params() else {
        panic!("the KEP's first version is v1beta1");
    };
    // The Instance's values as the KEP writes them, and as a v1beta1 Instance stores them.
    for installed in [
        json!({"CLUSTER_NAME": "my-cluster", "BACKUP_ENABLED": false,
            "BACKUP_CREDENTIALS_USERNAME": "some value", "BACKUP_CREDENTIALS_PASSWORD": "some password"}),
        json!({"CLUSTER_NAME": "my-cluster", "BACKUP_ENABLED": "false",
            "BACKUP_CREDENTIALS_USERNAME": "some value", "BACKUP_CREDENTIALS_PASSWORD": "some password"}),
    ] {
        let (typed, problems) =
            kudo_policy::typing::instance_values(old_params, installed.as_object().unwrap());
        assert!(problems.is_empty(), "{problems:?}");
        let m = migrate(old.schema(), &Value::Object(typed), new.schema(), "0.1.0").unwrap();
        assert_eq!(
            m.values.value(),
            &json!({
                "clusterName": "my-cluster",
                "backup": {
                    "enabled": false,
                    "credentials": {"name": "some value", "password": "some password"}
                }
            })
        );
        let moved: Vec<(&str, &str)> = m
            .report
            .moved
            .iter()
            .map(|m| (m.from.as_str(), m.to.as_str()))
            .collect();
        assert_eq!(
            moved,
            [
                ("/CLUSTER_NAME", "/clusterName"),
                ("/BACKUP_ENABLED", "/backup/enabled"),
                ("/BACKUP_CREDENTIALS_USERNAME", "/backup/credentials/name"),
                (
                    "/BACKUP_CREDENTIALS_PASSWORD",
                    "/backup/credentials/password"
                ),
            ]
        );
        assert!(m.report.dropped.is_empty() && m.report.kept.is_empty());
        let v = kudo_policy::Validator::new(new.schema()).unwrap();
        assert_eq!(v.validate(&m.values), vec![]);
    }
    // KEP: 0.1 (CLUSTER_NAME) -> 0.2 (clusterName) -> 0.3 (Cluster.Name): 0.2 is not skippable.
    let v3 = ParamSchema::from_value(json!({"type": "object", "properties": {"Cluster": {
        "type": "object", "properties": {"Name": {"type": "string", "oldName": "/clusterName"}}}}}))
    .unwrap();
    let err = migrate(old.schema(), &json!({"CLUSTER_NAME": "c"}), &v3, "0.1.0").unwrap_err();
    assert_eq!(err[0].code, Code::OldNameNotFound);
    assert_eq!(err[0].pointer, "/Cluster/Name");
    let two = migrate(
        new.schema(),
        &json!({"clusterName": "c", "backup": {"enabled": true}}),
        &v3,
        "0.2.0",
    )
    .unwrap();
    assert_eq!(two.values.value(), &json!({"Cluster": {"Name": "c"}}));
    assert_eq!(two.report.dropped.len(), 1, "{:?}", two.report);
    assert_eq!(two.report.dropped[0].pointer, "/backup");
}

/// KEP-33's valid trigger example, as written (including its `type: int`).
#[test]
fn kep33_valid_trigger_example() {
    let schema = ParamSchema::from_value(json!({
        "type": "object",
        "properties": {
            "ClusterName": {"type": "string", "trigger": "deploy"},
            "NodeCount": {"type": "int"},
            "Authorization": {"type": "object", "trigger": "auth-update", "properties": {
                "ENABLED": {"type": "boolean", "trigger": "auth-update"},
                "NAME": {"type": "string"}}}
        }
    }))
    .unwrap();
    let plans = ["deploy", "auth-update"];
    let base = json!({"ClusterName": "c", "NodeCount": 3,
        "Authorization": {"ENABLED": false, "NAME": "n"}});
    let plan_of = |p: &str, v: Value| {
        let mut new = base.clone();
        *new.pointer_mut(p).unwrap() = v;
        select(&schema, &plans, &base, &new).unwrap()
    };
    let s = plan_of("/ClusterName", json!("d"));
    assert_eq!(s.plan.as_deref(), Some("deploy"));
    assert_eq!(
        s.changes[0].reason,
        Reason::Trigger {
            at: "/ClusterName".into()
        }
    );
    let s = plan_of("/NodeCount", json!(5));
    assert_eq!(s.plan.as_deref(), Some("deploy"));
    assert_eq!(s.changes[0].reason, Reason::Fallback);
    let s = plan_of("/Authorization/ENABLED", json!(true));
    assert_eq!(s.plan.as_deref(), Some("auth-update"));
    let s = plan_of("/Authorization/NAME", json!("m"));
    assert_eq!(s.plan.as_deref(), Some("auth-update"));
    assert_eq!(
        s.changes[0].reason,
        Reason::Trigger {
            at: "/Authorization".into()
        }
    );
    // Changing ClusterName and Authorization.NAME together runs two plans: refused.
    let mut both = base.clone();
    both["ClusterName"] = json!("d");
    both["Authorization"]["NAME"] = json!("m");
    let err = select(&schema, &plans, &base, &both).unwrap_err();
    // One diagnostic for the update, naming each plan and its changes.
    assert_eq!(err.len(), 1);
    assert_eq!(err[0].code, Code::TriggerConflict);
    assert!(err[0].message.contains("/ClusterName"), "{err:?}");
    assert!(err[0].message.contains("/Authorization/NAME"), "{err:?}");
}

fn table_schema() -> ParamSchema {
    ParamSchema::from_value(json!({
        "type": "object",
        "properties": {
            "clusterName": {"type": "string", "immutable": true, "default": "c1"},
            "nodeCount": {"type": "integer", "default": 3},
            "custom": {"type": "string", "trigger": "custom", "default": "x"},
            "other": {"type": "string", "trigger": "other"},
            "broken": {"type": "string", "trigger": "no-such-plan"},
            "storage": {"type": "object", "immutable": true, "properties": {
                "size": {"type": "string", "default": "1Gi"},
                "class": {"type": "string"}}},
            "backup": {"type": "object", "trigger": "backup-update", "properties": {
                "enabled": {"type": "boolean", "default": false},
                "credentials": {"type": "object", "properties": {
                    "name": {"type": "string"},
                    "password": {"type": "string", "writeOnly": true}}}}},
            "topology": {"type": "array", "items": {"type": "object", "properties": {
                "datacenterName": {"type": "string"},
                "rack": {"type": "string", "trigger": "rack-update"},
                "nodes": {"type": "integer"}}},
                "default": [{"datacenterName": "dc1", "rack": "r1", "nodes": 3}]},
            "labels": {"type": "array", "trigger": "labels-update",
                "items": {"type": "string"}}
        }
    }))
    .unwrap()
}

const ALL_PLANS: &[&str] = &[
    "deploy",
    "update",
    "custom",
    "other",
    "backup-update",
    "rack-update",
    "labels-update",
];

/// One row: name, the operator's plans, a `-P` patch (null: none), `-p` overrides, outcome.
type Case = (
    &'static str,
    &'static [&'static str],
    Value,
    &'static [&'static str],
    Want,
);

enum Want {
    /// Accepted; the plan run (None: nothing changed).
    Plan(Option<&'static str>),
    /// Refused with these codes, in order.
    Refused(&'static [Code]),
}

/// An update: `-p`/`-P` style inputs on top of the installed values, decided by the one
/// policy ([`kudo_policy::change::update`]) the CLI, the webhook and the manager call.
fn run_update(
    plans: &[&str],
    current: Value,
    patch: Value,
    overrides: &[&str],
) -> Result<Option<String>, Vec<Code>> {
    let version = Version::new(
        "table-1.0.0".into(),
        "1.0.0".into(),
        table_schema(),
        plans.iter().map(|p| p.to_string()).collect(),
    )
    .unwrap();
    let patch_doc =
        kudo_yaml::document::Document::parse(std::path::Path::new("p.yaml"), &patch.to_string())
            .unwrap();
    let files = if patch.is_null() {
        vec![]
    } else {
        vec![patch_doc]
    };
    let overrides = kudo_policy::values::Override::parse_all(overrides)
        .map_err(|d| d.iter().map(|d| d.code).collect::<Vec<_>>())?;
    let installed = Installed {
        version: &version,
        values: &current,
        kept: None,
        secrets_elsewhere: false,
        deleting: false,
        in_progress: None,
    };
    change::update(
        &installed,
        Proposal::Edits {
            files: &files,
            overrides: &overrides,
            resets: &[],
        },
    )
    .map(|d| d.plan)
    .map_err(|d| d.iter().map(|d| d.code).collect())
}

#[test]
fn update_table() {
    use Want::*;
    let installed = json!({"clusterName": "c1", "storage": {"size": "1Gi"},
        "backup": {"enabled": false, "credentials": {"name": "u", "password": "p"}},
        "labels": ["a", "b"]});
    let cases: Vec<Case> = vec![
        ("nothing changes", ALL_PLANS, Value::Null, &[], Plan(None)),
        (
            "same value as the default",
            ALL_PLANS,
            Value::Null,
            &["nodeCount=3"],
            Plan(None),
        ),
        (
            "custom trigger",
            ALL_PLANS,
            Value::Null,
            &["custom=y"],
            Plan(Some("custom")),
        ),
        (
            "fallback to update",
            ALL_PLANS,
            Value::Null,
            &["nodeCount=5"],
            Plan(Some("update")),
        ),
        (
            "fallback to deploy",
            &["deploy", "custom"],
            Value::Null,
            &["nodeCount=5"],
            Plan(Some("deploy")),
        ),
        (
            "no plan to fall back to",
            &["custom"],
            Value::Null,
            &["nodeCount=5"],
            Refused(&[Code::UnknownPlan]),
        ),
        (
            "two plans refused",
            ALL_PLANS,
            Value::Null,
            &["custom=y", "nodeCount=5"],
            Refused(&[Code::TriggerConflict]),
        ),
        (
            "two custom plans refused",
            ALL_PLANS,
            Value::Null,
            &["custom=y", "other=z"],
            Refused(&[Code::TriggerConflict]),
        ),
        (
            "same plan twice",
            ALL_PLANS,
            Value::Null,
            &["backup/enabled=true", "backup/credentials/name=v"],
            Plan(Some("backup-update")),
        ),
        (
            "unknown trigger plan",
            ALL_PLANS,
            Value::Null,
            &["broken=v"],
            Refused(&[Code::UnknownPlan]),
        ),
        (
            "trigger inherited two levels",
            ALL_PLANS,
            Value::Null,
            &["backup/credentials/password=q"],
            Plan(Some("backup-update")),
        ),
        (
            "trigger of a removed object",
            ALL_PLANS,
            json!({"backup": null}),
            &[],
            Plan(Some("backup-update")),
        ),
        (
            "immutable changed",
            ALL_PLANS,
            Value::Null,
            &["clusterName=c2"],
            Refused(&[Code::ImmutableChanged]),
        ),
        (
            "immutable unchanged",
            ALL_PLANS,
            Value::Null,
            &["clusterName=c1"],
            Plan(None),
        ),
        (
            "immutable subtree changed",
            ALL_PLANS,
            Value::Null,
            &["storage/class=fast"],
            Refused(&[Code::ImmutableChanged]),
        ),
        (
            "immutable subtree via -P",
            ALL_PLANS,
            json!({"storage": {"size": "2Gi"}}),
            &[],
            Refused(&[Code::ImmutableChanged]),
        ),
        (
            "immutable removed falls back to its default",
            ALL_PLANS,
            json!({"clusterName": null}),
            &[],
            Plan(None),
        ),
        (
            "immutable and another change",
            ALL_PLANS,
            Value::Null,
            &["clusterName=c2", "nodeCount=4"],
            Refused(&[Code::ImmutableChanged]),
        ),
        (
            "array item field with its own trigger",
            ALL_PLANS,
            Value::Null,
            &["topology/0/rack=r2"],
            Plan(Some("rack-update")),
        ),
        (
            "array item field without trigger",
            ALL_PLANS,
            Value::Null,
            &["topology/0/nodes=4"],
            Plan(Some("update")),
        ),
        (
            "array item with two plans",
            ALL_PLANS,
            Value::Null,
            &["topology/0/nodes=4", "topology/0/rack=r2"],
            Refused(&[Code::TriggerConflict]),
        ),
        (
            "array replaced whole by -P",
            ALL_PLANS,
            json!({"topology": [{"datacenterName": "dc1", "rack": "r1", "nodes": 3}, {"datacenterName": "dc2"}]}),
            &[],
            Plan(Some("update")),
        ),
        (
            "array with a trigger: item changed",
            ALL_PLANS,
            Value::Null,
            &["labels/1=c"],
            Plan(Some("labels-update")),
        ),
        (
            "array with a trigger: item added",
            ALL_PLANS,
            json!({"labels": ["a", "b", "c"]}),
            &[],
            Plan(Some("labels-update")),
        ),
        (
            "array with a trigger: item removed",
            ALL_PLANS,
            json!({"labels": ["a"]}),
            &[],
            Plan(Some("labels-update")),
        ),
        (
            "array with a trigger: removed whole",
            ALL_PLANS,
            json!({"labels": null}),
            &[],
            Plan(Some("labels-update")),
        ),
        (
            "index out of range is refused before anything",
            ALL_PLANS,
            Value::Null,
            &["labels/5=x"],
            Refused(&[Code::IndexOutOfRange]),
        ),
        (
            "value removed falls back to default",
            ALL_PLANS,
            json!({"backup": {"enabled": null}}),
            &[],
            Plan(None),
        ),
        (
            "value without default removed",
            ALL_PLANS,
            json!({"backup": {"credentials": {"name": null}}}),
            &[],
            Plan(Some("backup-update")),
        ),
        (
            "unknown parameter",
            ALL_PLANS,
            Value::Null,
            &["nodecount=4"],
            Refused(&[Code::UnknownParameter]),
        ),
    ];
    let mut failures = Vec::new();
    for (name, plans, patch, overrides, want) in cases {
        let got = run_update(plans, installed.clone(), patch, overrides);
        let ok = match (&want, &got) {
            (Plan(p), Ok(g)) => p.map(String::from) == *g,
            (Refused(codes), Err(g)) => codes.to_vec() == *g,
            _ => false,
        };
        if !ok {
            failures.push(format!("{name}: got {got:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn upgrade_table() {
    let old = table_schema();
    let installed = json!({"clusterName": "c1", "nodeCount": 5, "storage": {"size": "1Gi"},
        "custom": "y", "labels": ["a"]});
    let new_schema = |extra: Value| {
        let mut s = table_schema().as_value().clone();
        for (k, v) in extra.as_object().unwrap() {
            if v.is_null() {
                s["properties"].as_object_mut().unwrap().remove(k);
            } else {
                s["properties"][k] = v.clone();
            }
        }
        ParamSchema::from_value(s).unwrap()
    };
    // A new immutable parameter with a default: filled, accepted.
    let new = new_schema(json!({"zone": {"type": "string", "immutable": true, "default": "z1"}}));
    let m = migrate(&old, &installed, &new, "1.0").unwrap();
    assert_eq!(m.values.value()["zone"], json!("z1"));
    assert!(immutable::check_unset(&new, m.values.value()).is_empty());
    assert!(m.report.defaulted.contains(&"/zone".to_string()));
    // Without a default: refused until given.
    let new = new_schema(json!({"zone": {"type": "string", "immutable": true}}));
    let m = migrate(&old, &installed, &new, "1.0").unwrap();
    let d = immutable::check_unset(&new, m.values.value());
    assert_eq!(d.len(), 1);
    assert_eq!(
        (d[0].code, d[0].pointer.as_str()),
        (Code::ImmutableUnset, "/zone")
    );
    // A parameter removed by the upgrade: its value is reported, never silently dropped.
    let new = new_schema(json!({"custom": null}));
    let m = migrate(&old, &installed, &new, "1.0").unwrap();
    assert_eq!(m.report.dropped.len(), 1);
    assert_eq!(m.report.dropped[0].pointer, "/custom");
    assert_eq!(m.report.warnings()[0].code, Code::ValueDropped);
    assert!(m.values.value().get("custom").is_none());
    // A renamed one moves; its type follows the new schema.
    let new = new_schema(json!({"nodeCount": null,
        "nodes": {"type": "object", "properties": {"count": {"type": "integer", "oldName": "/nodeCount"}}}}));
    let m = migrate(&old, &installed, &new, "1.0").unwrap();
    assert_eq!(m.values.value()["nodes"], json!({"count": 5}));
    // Upgrade plus update: an override on top of the migrated values, immutables still hold.
    let overrides =
        kudo_policy::values::Override::parse_all(&["nodes/count=7", "clusterName=c2"]).unwrap();
    let (after, problems) = values::effective(
        &new,
        &Inputs {
            current: Some(m.values.value().clone()),
            overrides: &overrides,
            ..Default::default()
        },
    );
    assert!(problems.is_empty());
    assert_eq!(after.value()["nodes"]["count"], json!(7));
    let d = immutable::check_update(&new, m.values.value(), after.value());
    assert_eq!(d.len(), 1);
    assert_eq!(d[0].pointer, "/clusterName");
}

/// KEP-33's two trigger examples through `package verify`: the invalid one is refused at the
/// child that names another plan than its parent, the valid one (which restates its parent's
/// trigger) is not.
#[test]
fn kep33_trigger_examples_through_verify() {
    let operator = r#"apiVersion: kudo.dev/v1beta1
name: kep
operatorVersion: 0.1.0
kubernetesVersion: 1.16.0
tasks:
  - name: app
    kind: Dummy
    spec:
      done: true
plans:
  deploy:
    strategy: serial
    phases:
      - name: p
        strategy: serial
        steps:
          - name: s
            tasks: [app]
  update-instance:
    strategy: serial
    phases:
      - name: p
        strategy: serial
        steps:
          - name: s
            tasks: [app]
  auth-update:
    strategy: serial
    phases:
      - name: p
        strategy: serial
        steps:
          - name: s
            tasks: [app]
"#;
    let invalid = "apiVersion: kudo.dev/v1beta2\ntype: object\nproperties:\n  Authorization:\n    type: object\n    trigger: \"deploy\"\n    properties:\n      ENABLED:\n        type: \"boolean\"\n        trigger: \"update-instance\"\n";
    let valid = "apiVersion: kudo.dev/v1beta2\ntype: object\nproperties:\n  ClusterName:\n    type: string\n    trigger: \"deploy\"\n  NodeCount:\n    type: int\n  Authorization:\n    type: object\n    trigger: \"auth-update\"\n    properties:\n      ENABLED:\n        type: \"boolean\"\n        trigger: \"auth-update\"\n      NAME:\n        type: \"string\"\n";
    let verify = |params: &str| {
        let mut files = std::collections::BTreeMap::new();
        files.insert("operator.yaml".to_string(), operator.as_bytes().to_vec());
        files.insert("params.yaml".to_string(), params.as_bytes().to_vec());
        let pkg = Package::from_files(std::path::Path::new("kep"), files).unwrap();
        kudo_pkg::verify::verify(&pkg)
    };
    let conflicts: Vec<String> = verify(invalid)
        .into_iter()
        .filter(|d| d.code == Code::TriggerConflict)
        .map(|d| d.pointer.to_string())
        .collect();
    assert_eq!(conflicts, ["/Authorization/ENABLED"]);
    assert!(
        !verify(valid)
            .iter()
            .any(|d| matches!(d.code, Code::TriggerConflict | Code::UnknownPlan)),
    );
}
