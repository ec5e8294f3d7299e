//! `kudo explain`: the explanation comes from `kudo_pkg::explain` (and, with --instance, the
//! Instance from `kudo_client::commands::explain`); this module draws it.

use std::fmt::Write as _;
use std::path::Path;

use kudo_diag::Shown;
use kudo_pkg::explain::{self, Current, Explanation, Field, TriggerFrom, ValueSource};
use serde_json::{Map, Value};

use super::Outcome;
use super::cluster;
use crate::args::{ExplainArgs, ExplainFormat};
use crate::error::Error;

/// What is explained: a package, or an Instance's.
enum Subject {
    Package {
        operator: String,
        version: String,
    },
    Instance {
        name: String,
        operator_version: String,
    },
}

pub fn run(a: ExplainArgs) -> Result<Outcome, Error> {
    let (subject, explained) = match &a.instance {
        None => {
            let Some(package) = &a.package else {
                return Err(Error::Usage(format!(
                    "{} explain: give a PACKAGE, or --instance NAME",
                    crate::program::shown()
                )));
            };
            let pkg = super::load_with(Path::new(package), &a.source)?.package;
            let plans: Vec<&str> = pkg.operator().plans.keys().map(String::as_str).collect();
            let e = explain::explain(pkg.schema(), &plans, a.pointer.as_deref(), None)
                .map_err(|d| Error::parameters(vec![d]))?;
            let subject = Subject::Package {
                operator: pkg.operator().name.clone(),
                version: pkg.version(),
            };
            (subject, e)
        }
        Some(name) => {
            // PACKAGE and POINTER are positional: with --instance the one given is POINTER.
            let pointer = match (&a.package, &a.pointer) {
                (Some(_), Some(_)) => {
                    return Err(Error::Usage(format!(
                        "{} explain --instance NAME takes no PACKAGE: give only POINTER (the \
                         package is the Instance's)",
                        crate::program::shown()
                    )));
                }
                (p, None) | (None, p) => p.clone(),
            };
            let stored = cluster::block_on("explain", &a.cluster, async |t| {
                Ok(kudo_client::commands::explain::read(&t, name).await?)
            })?;
            let pkg = &stored.package;
            let plans: Vec<&str> = pkg.operator().plans.keys().map(String::as_str).collect();
            let e = explain::explain(
                pkg.schema(),
                &plans,
                pointer.as_deref(),
                Some(&stored.instance()),
            )
            .map_err(|d| Error::parameters(vec![d]))?;
            let subject = Subject::Instance {
                name: name.clone(),
                operator_version: stored.operator_version.clone(),
            };
            (subject, e)
        }
    };
    let out = match a.output {
        ExplainFormat::Text => text(&subject, &explained),
        ExplainFormat::Json => format!(
            "{}\n",
            serde_json::to_string_pretty(&json(&subject, &explained)).unwrap_or_default()
        ),
    };
    super::print(&out)?;
    Ok(Outcome::Done)
}

/// The explanation as one JSON object: what is explained, then the explanation's fields.
fn json(subject: &Subject, e: &Explanation) -> Value {
    let mut out = Map::new();
    match subject {
        Subject::Package { operator, version } => {
            out.insert("operator".into(), operator.as_str().into());
            out.insert("operatorVersion".into(), version.as_str().into());
        }
        Subject::Instance {
            name,
            operator_version,
        } => {
            out.insert("instance".into(), name.as_str().into());
            out.insert(
                "operatorVersionName".into(),
                operator_version.as_str().into(),
            );
        }
    }
    if let Ok(Value::Object(fields)) = serde_json::to_value(e) {
        out.extend(fields);
    }
    Value::Object(out)
}

/// kubectl explain's layout: a header of `LABEL: value` lines, the description, the fields.
fn text(subject: &Subject, e: &Explanation) -> String {
    let mut s = String::new();
    let mut line = |label: &str, value: &str| {
        let _ = writeln!(s, "{:<12}{value}", format!("{label}:"));
    };
    match subject {
        Subject::Package { operator, version } => {
            line("OPERATOR", &format!("{operator} {version}"));
        }
        Subject::Instance {
            name,
            operator_version,
        } => line(
            "INSTANCE",
            &format!("{name} (OperatorVersion {operator_version})"),
        ),
    }
    line(
        "PARAMETER",
        if e.pointer.is_empty() {
            "(the top level)"
        } else {
            e.pointer.as_str()
        },
    );
    line("TYPE", &e.type_name);
    if !e.pointer.is_empty() {
        line("REQUIRED", yes_no(e.required));
        let default = match (&e.default, e.default_hidden) {
            (Some(d), _) => Shown::of(d, false).to_string(),
            (None, true) => "(hidden: writeOnly)".into(),
            (None, false) => "(none)".into(),
        };
        line("DEFAULT", &default);
    }
    line("TRIGGER", &trigger(e));
    line(
        "IMMUTABLE",
        &inherited(e.immutable, e.immutable_from.as_deref()),
    );
    line(
        "WRITEONLY",
        &inherited(e.write_only, e.write_only_from.as_deref()),
    );
    if let Some(old) = &e.old_name {
        line("OLD NAME", old);
    }
    if let Some(message) = &e.deprecated {
        line(
            "DEPRECATED",
            if message.is_empty() {
                "yes"
            } else {
                message.as_str()
            },
        );
    }
    if let Some(c) = &e.current {
        line("VALUE", &current(c));
    }
    if !e.constraints.is_empty() {
        s.push_str("CONSTRAINTS:\n");
        let width = e.constraints.keys().map(String::len).max().unwrap_or(0) + 1;
        for (k, v) in &e.constraints {
            let _ = writeln!(s, "  {:<width$} {}", format!("{k}:"), Shown::of(v, false));
        }
    }
    let about = [e.title.as_deref(), e.description.as_deref()];
    if about.iter().any(Option::is_some) {
        s.push_str("\nDESCRIPTION:\n");
        for text in about.into_iter().flatten() {
            for l in text.lines() {
                let _ = writeln!(s, "  {l}");
            }
        }
    }
    if let Some(items) = &e.items {
        let _ = writeln!(s, "\nITEMS:      <{}> ({})", items.type_name, items.pointer);
        for l in items
            .title
            .iter()
            .chain(&items.description)
            .flat_map(|t| t.lines())
        {
            let _ = writeln!(s, "  {l}");
        }
    }
    if !e.fields.is_empty() {
        s.push_str("\nFIELDS:\n");
        for f in &e.fields {
            let _ = writeln!(s, "  {}", field(f));
            if let Some(d) = &f.description {
                let _ = writeln!(s, "    {d}");
            }
            s.push('\n');
        }
        s.pop();
    }
    s
}

fn yes_no(b: bool) -> &'static str {
    if b { "yes" } else { "no" }
}

fn trigger(e: &Explanation) -> String {
    let plan = e.trigger.as_deref().unwrap_or("(none)");
    match e.trigger_source {
        TriggerFrom::Own => format!("{plan} (its own trigger)"),
        TriggerFrom::Inherited => format!(
            "{plan} (inherited from {})",
            e.trigger_from.as_deref().map_or("/", |p| p)
        ),
        TriggerFrom::Fallback => {
            format!("{plan} (no trigger here or above: the operator's fallback plan)")
        }
        TriggerFrom::Unknown => format!("{plan} (the operator has no such plan: refused)"),
    }
}

fn inherited(on: bool, from: Option<&str>) -> String {
    match (on, from) {
        (true, Some(from)) => format!(
            "yes (inherited from {})",
            if from.is_empty() { "/" } else { from }
        ),
        (true, None) => "yes".into(),
        (false, _) => "no".into(),
    }
}

fn current(c: &Current) -> String {
    let secrets = c.secrets.join(", ");
    let value = c.value.as_ref().map(|v| Shown::of(v, false).to_string());
    match (c.source, c.masked, value) {
        (ValueSource::User, true, _) => "(secret, set by the user)".into(),
        (ValueSource::Secret, true, _) => format!("(secret, set by the user in Secret {secrets})"),
        (ValueSource::Secret, false, _) => {
            format!("(set by the user in Secret {secrets}; not shown)")
        }
        (ValueSource::KeptDefault, true, _) => "(secret, the installed default, kept)".into(),
        (ValueSource::Default, true, _) => "(secret, the default)".into(),
        (ValueSource::User, false, Some(v)) => format!("{v} (set by the user)"),
        (ValueSource::KeptDefault, false, Some(v)) => {
            format!("{v} (the installed default, kept in spec.immutableDefaults)")
        }
        (ValueSource::Default, false, Some(v)) => format!("{v} (the default)"),
        (ValueSource::Unknown, _, _) => format!(
            "(unknown: may be set in Secret {secrets}, which could not be read: {})",
            c.unknown_because.as_deref().unwrap_or_default()
        ),
        (ValueSource::Unset, _, _) => "(unset)".into(),
        // Set, but every value under it is writeOnly (taken out).
        (_, false, None) => "(set: only writeOnly values, not shown)".into(),
    }
}

/// `name  <type>  -required- -immutable- -writeOnly- trigger: plan`.
fn field(f: &Field) -> String {
    let mut s = format!("{}  <{}>", f.name, f.type_name);
    for (on, mark) in [
        (f.required, "-required-"),
        (f.immutable, "-immutable-"),
        (f.write_only, "-writeOnly-"),
    ] {
        if on {
            s.push(' ');
            s.push_str(mark);
        }
    }
    if let Some(t) = &f.trigger {
        let _ = write!(s, " (trigger: {t})");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(source: ValueSource, masked: bool, value: Option<Value>) -> String {
        current(&Current {
            source,
            value,
            masked,
            secrets: vec!["i-params-x".into()],
            unknown_because: Some("Secret i-params-x: not found".into()),
        })
    }

    #[test]
    fn a_value_says_who_set_it_and_a_secret_is_never_shown() {
        // (source, masked, value, text)
        let cases: &[(ValueSource, bool, Option<Value>, &str)] = &[
            (
                ValueSource::User,
                false,
                Some(5.into()),
                "5 (set by the user)",
            ),
            (ValueSource::User, true, None, "(secret, set by the user)"),
            (
                ValueSource::Secret,
                true,
                None,
                "(secret, set by the user in Secret i-params-x)",
            ),
            (
                ValueSource::Secret,
                false,
                None,
                "(set by the user in Secret i-params-x; not shown)",
            ),
            (
                ValueSource::Default,
                false,
                Some("INFO".into()),
                "\"INFO\" (the default)",
            ),
            (ValueSource::Default, true, None, "(secret, the default)"),
            (ValueSource::Unset, false, None, "(unset)"),
            (
                ValueSource::Unknown,
                false,
                None,
                "(unknown: may be set in Secret i-params-x, which could not be read: Secret i-params-x: not found)",
            ),
        ];
        for (source, masked, v, want) in cases {
            assert_eq!(value(*source, *masked, v.clone()), *want, "{source:?}");
        }
    }
}
