//! The CLI and the admission webhook decide alike: for generated installed and new versions,
//! installed values, `-p` overrides and Instance states, `kudo update`/`kudo upgrade` (the
//! policy fed `-p` arguments) and the webhook (fed the objects a client would write, the state
//! read from the old object's status and metadata) allow the same changes, with the same plan,
//! and refuse the same ones, with the same codes.

use kudo_policy::values::Override;
use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use kudo_diag::Code;
use kudo_policy::ParamSchema;
use kudo_policy::change::{self, Installed, Proposal, Version};
use kudo_webhook::{OperatorVersions, Verdict, decide, version_from_object};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

#[derive(Debug, Clone)]
struct Param {
    ty: &'static str,
    trigger: Option<&'static str>,
    immutable: bool,
    default: bool,
}

const PLANS: &[&str] = &["deploy", "update", "upgrade", "a", "b"];

fn param() -> impl Strategy<Value = Param> {
    (
        prop::sample::select(vec!["integer", "boolean", "string"]),
        prop::option::of(prop::sample::select(vec!["a", "b", "deploy"])),
        prop::bool::weighted(0.25),
        any::<bool>(),
    )
        .prop_map(|(ty, trigger, immutable, default)| Param {
            ty,
            trigger,
            immutable,
            default,
        })
}

fn sample(ty: &str, n: u8) -> (Value, String) {
    match ty {
        "integer" => (json!(n as i64 + 1), (n as i64 + 1).to_string()),
        "boolean" => (json!(n.is_multiple_of(2)), n.is_multiple_of(2).to_string()),
        _ => (json!(format!("s{n}")), format!("s{n}")),
    }
}

fn schema(params: &[Option<Param>]) -> Value {
    let mut props = Map::new();
    for (i, p) in params.iter().enumerate() {
        let Some(p) = p else { continue };
        let mut node = json!({"type": p.ty});
        if let Some(t) = p.trigger {
            node["trigger"] = json!(t);
        }
        if p.immutable {
            node["immutable"] = json!(true);
        }
        if p.default {
            node["default"] = sample(p.ty, 0).0;
        }
        props.insert(format!("p{i}"), node);
    }
    json!({"type": "object", "properties": props})
}

fn ov_object(name: &str, schema: Value, plans: &[&str]) -> Value {
    let plans: Map<String, Value> = plans.iter().map(|p| (p.to_string(), json!({}))).collect();
    json!({"metadata": {"name": name, "namespace": "ns"},
        "spec": {"version": name.rsplit('-').next(), "parameters": schema, "plans": plans}})
}

struct Store(HashMap<String, Arc<Version>>);

impl OperatorVersions for Store {
    fn ready(&self) -> Result<(), kudo_webhook::StoreError> {
        Ok(())
    }
    fn get(&self, _: &str, name: &str) -> Result<Option<Arc<Version>>, kudo_webhook::StoreError> {
        Ok(self.0.get(name).cloned())
    }
}

fn instance(ov: &str, params: &Value, in_progress: Option<&str>, deleting: bool) -> Value {
    let mut o = json!({"apiVersion": "kudo.dev/v1beta2", "kind": "Instance",
        "metadata": {"name": "i", "namespace": "ns", "generation": 2},
        "spec": {"operatorVersion": {"name": ov}, "parameters": params}});
    if let Some(plan) = in_progress {
        o["status"] = json!({"activePlan": {"name": plan, "uid": "u"},
            "planStatus": {plan: {"name": plan, "status": "IN_PROGRESS", "uid": "u"}},
            "observedGeneration": 2});
    }
    if deleting {
        o["metadata"]["deletionTimestamp"] = json!("2026-11-23T00:00:00Z");
    }
    o
}

type Answer = Result<Option<String>, BTreeSet<&'static str>>;

fn of_policy(r: Result<change::Decision, Vec<kudo_diag::Diagnostic>>) -> Answer {
    r.map(|d| d.plan)
        .map_err(|d| d.iter().map(|d| d.code.as_str()).collect())
}

fn of_verdict(v: Verdict) -> Answer {
    match v {
        Verdict::Allow { plan, .. } => Ok(plan),
        Verdict::Deny(d) => Err(d.iter().map(|d| d.code.as_str()).collect()),
        Verdict::Unchecked(why) => panic!("unchecked: {why}"),
    }
}

#[derive(Debug, Clone)]
struct Case {
    old: Vec<Option<Param>>,
    new: Vec<Option<Param>>,
    new_plans: Vec<&'static str>,
    installed: Vec<Option<u8>>,
    overrides: Vec<(usize, u8)>,
    in_progress: Option<&'static str>,
    deleting: bool,
}

fn case() -> impl Strategy<Value = Case> {
    (
        prop::collection::vec(param(), 4),
        prop::collection::vec(prop::option::weighted(0.85, param()), 4),
        prop::sample::subsequence(PLANS.to_vec(), 1..=PLANS.len()),
        prop::collection::vec(prop::option::of(0u8..3), 4),
        prop::collection::vec((0usize..4, 0u8..3), 0..3),
        prop::option::weighted(0.2, prop::sample::select(PLANS.to_vec())),
        prop::bool::weighted(0.1),
    )
        .prop_map(
            |(old, new, new_plans, installed, overrides, in_progress, deleting)| Case {
                old: old.into_iter().map(Some).collect(),
                new,
                new_plans,
                installed,
                overrides,
                in_progress,
                deleting,
            },
        )
}

impl Case {
    fn installed_values(&self) -> Value {
        let mut m = Map::new();
        for (i, (p, v)) in self.old.iter().zip(&self.installed).enumerate() {
            if let (Some(p), Some(v)) = (p, v) {
                m.insert(format!("p{i}"), sample(p.ty, *v).0);
            }
        }
        Value::Object(m)
    }

    /// `-p` arguments for the parameters of `params` that exist.
    fn args(&self, params: &[Option<Param>]) -> Vec<Override> {
        let args: Vec<String> = self
            .overrides
            .iter()
            .filter_map(|(i, n)| {
                let p = params[*i].as_ref()?;
                Some(format!("p{i}={}", sample(p.ty, *n).1))
            })
            .collect();
        Override::parse_all(&args).expect("well-formed -p arguments")
    }

    /// What a client sends: `base` with the overrides of `params` set.
    fn sent(&self, base: &Value, params: &[Option<Param>]) -> Value {
        let mut out = base.clone();
        for (i, n) in &self.overrides {
            if let Some(p) = &params[*i] {
                out[format!("p{i}")] = sample(p.ty, *n).0;
            }
        }
        out
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn the_cli_and_the_webhook_decide_updates_alike(c in case()) {
        let old_ov = ov_object("op-1.0.0", schema(&c.old), PLANS);
        let v1 = version_from_object(&old_ov).unwrap();
        let installed_values = c.installed_values();
        let args = c.args(&c.old);
        let cli = of_policy(change::update(
            &Installed {
                version: &v1,
                values: &installed_values,
                kept: None,
                secrets_elsewhere: false,
                deleting: c.deleting,
                in_progress: c.in_progress,
            },
            Proposal::Edits { files: &[], overrides: &args, resets: &[] },
        ));
        let store = Store(HashMap::from([("op-1.0.0".to_string(), Arc::new(v1))]));
        let sent = c.sent(&installed_values, &c.old);
        let old = instance("op-1.0.0", &installed_values, c.in_progress, false);
        let new = instance("op-1.0.0", &sent, c.in_progress, c.deleting);
        let webhook = of_verdict(decide("ns", Some(&old), &new, &store));
        prop_assert_eq!(cli, webhook);
    }

    #[test]
    fn the_cli_and_the_webhook_decide_upgrades_alike(c in case()) {
        let old_ov = ov_object("op-1.0.0", schema(&c.old), PLANS);
        let new_ov = ov_object("op-2.0.0", schema(&c.new), &c.new_plans);
        let v1 = version_from_object(&old_ov).unwrap();
        let v2 = version_from_object(&new_ov).unwrap();
        let installed_values = c.installed_values();
        let args = c.args(&c.new);
        let cli = of_policy(change::upgrade(
            &Installed {
                version: &v1,
                values: &installed_values,
                kept: None,
                secrets_elsewhere: false,
                deleting: c.deleting,
                in_progress: c.in_progress,
            },
            &v2,
            Proposal::Edits { files: &[], overrides: &args, resets: &[] },
            &Default::default(),
        ));
        // The client writes the carried-over values with its overrides (or, given none, the
        // installed values as they are: the webhook carries them over itself).
        // The carried-over values are the upgrade's own (migrated by oldName, and the values
        // it ran with where the new version has no default), as the policy computes them.
        let at_rest = Installed::at_rest(&v1, &installed_values);
        let carried = change::carried_over(&at_rest, &v2);
        let migrated = kudo_policy::old_name::migrate(&v1.schema, &installed_values, &v2.schema, "1.0.0");
        let sent = match (&migrated, &carried, args.is_empty()) {
            (_, _, true) | (Err(_), _, _) => installed_values.clone(),
            (Ok(_), Ok(carried), false) => c.sent(carried, &c.new),
            (Ok(m), Err(_), false) => c.sent(&m.explicit, &c.new),
        };
        let store = Store(HashMap::from([
            ("op-1.0.0".to_string(), Arc::new(v1)),
            ("op-2.0.0".to_string(), Arc::new(v2)),
        ]));
        let old = instance("op-1.0.0", &installed_values, c.in_progress, false);
        let new = instance("op-2.0.0", &sent, c.in_progress, c.deleting);
        let webhook = of_verdict(decide("ns", Some(&old), &new, &store));
        prop_assert_eq!(cli, webhook);
    }
}

#[test]
fn generated_schemas_are_usable() {
    let s = schema(&[Some(Param {
        ty: "integer",
        trigger: Some("a"),
        immutable: true,
        default: true,
    })]);
    assert!(ParamSchema::from_value(s).is_ok());
    assert_eq!(Code::PlanInProgress.as_str(), "plan-in-progress");
}
