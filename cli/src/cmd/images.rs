//! `kudo package images`: the list comes from `kudo_pkg::images`; this module prints it, as a
//! table (with notes on stderr) or as data.

use kudo_client::commands::ImageGate;
use kudo_pkg::images::{self, DependencyTask, Images, ListOptions, Site, Tested, Walk};
use kudo_pkg::render::Prepared;
use kudo_source::image_trust::{
    Checker, Status, Wanted, judge, unverified_line, wanted, wanted_at,
};
use kudo_source::trust::Mode;
use serde_json::{Value, json};

use super::Outcome;
use crate::args::{DataFormat, ImageArgs, ImagesArgs};
use crate::error::Error;

pub fn run(a: ImagesArgs) -> Result<Outcome, Error> {
    let pkg = super::load_with(&a.package, &a.source)?.package;
    let values = super::resolve(&pkg, &a.values)?;
    let opts = ListOptions {
        instance: a.instance.clone(),
        namespace: a.namespace.clone(),
        all_values: a.all_values,
    };
    let found = images::list(&Prepared::new(&pkg), values.value(), &opts)?;
    if a.verify_images || !a.image_key.is_empty() {
        return verify(&found, &a);
    }
    match a.output {
        None => {
            super::print(&table(&found))?;
            for line in notes(&found) {
                eprintln!("{line}");
            }
        }
        Some(DataFormat::Json) => super::print(&format!(
            "{}\n",
            serde_json::to_string_pretty(&data(&found)).unwrap_or_default()
        ))?,
        Some(DataFormat::Yaml) => super::print(&super::to_yaml(&data(&found)))?,
    }
    Ok(Outcome::Done)
}

/// One row per place an image is used; a `WITH` column when the walk found some.
fn table(found: &Images) -> String {
    if found.images.is_empty() {
        return String::new();
    }
    let walked = found
        .images
        .iter()
        .flat_map(|i| &i.sites)
        .any(|s| s.setting.is_some());
    let mut headers = vec!["IMAGE", "PLAN", "TASK", "OBJECT", "FIELD"];
    if walked {
        headers.push("WITH");
    }
    let mut rows = Vec::new();
    for image in &found.images {
        for s in &image.sites {
            let mut row = vec![
                image.image.clone(),
                s.plan.clone(),
                s.task.clone(),
                format!("{}/{}", s.object.kind, s.object.name),
                s.pointer.clone(),
            ];
            if walked {
                row.push(s.setting.as_ref().map(setting).unwrap_or_default());
            }
            rows.push(row);
        }
    }
    super::table(&headers, &rows)
}

/// A domain value as `-p` sets it: `debug=true`.
fn setting(s: &images::Setting) -> String {
    format!("{}={}", s.pointer.trim_start_matches('/'), s.text())
}

/// What the table does not say: the dependencies not listed, what the walk tried.
fn notes(found: &Images) -> Vec<String> {
    let mut out = Vec::new();
    if found.images.is_empty() {
        out.push("no image found".to_string());
    }
    for d in &found.dependencies {
        out.push(format!(
            "note: task `{}` (plan {}) installs package {}: its images are not listed",
            d.task,
            d.plans.join(", "),
            dependency(d)
        ));
    }
    if let Some(walk) = &found.walk {
        let count =
            |want: fn(&Tested) -> bool| walk.tried.iter().filter(|t| want(&t.outcome)).count();
        out.push(format!(
            "note: --all-values tried {} values, one parameter at a time: {} rendered, {} as \
             given, {} refused by the schema",
            walk.tried.len(),
            count(|o| matches!(o, Tested::Rendered)),
            count(|o| matches!(o, Tested::Given)),
            count(|o| matches!(o, Tested::Refused(_))),
        ));
        for t in &walk.tried {
            if let Tested::Refused(diags) = &t.outcome {
                out.push(format!(
                    "  refused: {}: {}",
                    setting(&t.setting),
                    problems(diags)
                ));
            }
        }
        if !walk.not_walked.is_empty() {
            out.push(format!(
                "note: not walked (under an array item): {}",
                walk.not_walked.join(", ")
            ));
        }
    }
    out
}

/// What a KudoOperator task names, in words: `kafka (operatorVersion 1.3.1, appVersion 2.5.0)
/// from the repository`.
fn dependency(d: &DependencyTask) -> String {
    let spec = &d.spec;
    let versions: Vec<String> = [
        ("operatorVersion", &spec.operator_version),
        ("appVersion", &spec.app_version),
    ]
    .into_iter()
    .filter_map(|(k, v)| v.as_ref().map(|v| format!("{k} {v}")))
    .collect();
    let versions = if versions.is_empty() {
        String::new()
    } else {
        format!(" ({})", versions.join(", "))
    };
    let from = if spec.is_path() {
        "a path beside the package"
    } else {
        "the repository"
    };
    format!("`{}`{versions} from {from}", spec.package)
}

/// The messages of a refusal, without their origin (the value is the walk's, not a `-p`).
fn problems(diags: &[kudo_diag::Diagnostic]) -> String {
    diags
        .iter()
        .filter(|d| d.is_error())
        .map(|d| format!("{}: {}", d.pointer, d.message))
        .collect::<Vec<_>>()
        .join("; ")
}

/// The list as data: `images`, `dependencies`, and with `--all-values` the values tried.
fn data(found: &Images) -> Value {
    let images: Vec<Value> = found
        .images
        .iter()
        .map(|i| {
            json!({
                "image": i.image,
                "reference": i.reference.whole(),
                "uses": i.sites.iter().map(site).collect::<Vec<_>>(),
            })
        })
        .collect();
    let dependencies: Vec<Value> = found
        .dependencies
        .iter()
        .map(|d| {
            let mut v = json!({
                "task": d.task,
                "plans": d.plans,
                "package": d.spec.package,
                "from": if d.spec.is_path() { "path" } else { "repository" },
            });
            for (k, x) in [
                ("operatorName", &d.spec.operator_name),
                ("operatorVersion", &d.spec.operator_version),
                ("appVersion", &d.spec.app_version),
            ] {
                if let Some(x) = x {
                    v[k] = json!(x);
                }
            }
            v
        })
        .collect();
    let mut out = json!({"images": images, "dependencies": dependencies});
    if let Some(walk) = &found.walk {
        out["values"] = walked(walk);
    }
    out
}

fn site(s: &Site) -> Value {
    let mut v = json!({
        "plan": s.plan,
        "phase": s.phase,
        "step": s.step,
        "task": s.task,
        "template": s.template,
        "apiVersion": s.object.api_version,
        "kind": s.object.kind,
        "name": s.object.name,
        "pointer": s.pointer,
    });
    if let Some(ns) = &s.object.namespace {
        v["namespace"] = json!(ns);
    }
    if let Some(w) = &s.setting {
        v["with"] = json!({"parameter": w.pointer, "value": w.value});
    }
    v
}

fn walked(walk: &Walk) -> Value {
    let tried: Vec<Value> = walk
        .tried
        .iter()
        .map(|t| {
            let mut v = json!({
                "parameter": t.setting.pointer,
                "value": t.setting.value,
                "outcome": match t.outcome {
                    Tested::Rendered => "rendered",
                    Tested::Given => "given",
                    Tested::Refused(_) => "refused",
                },
            });
            if let Tested::Refused(diags) = &t.outcome {
                let refused: Vec<Value> = diags
                    .iter()
                    .filter(|d| d.is_error())
                    .map(|d| json!({"pointer": d.pointer.to_string(), "message": d.message}))
                    .collect();
                v["problems"] = json!(refused);
            }
            v
        })
        .collect();
    json!({"tried": tried, "notWalked": walk.not_walked})
}

/// `--verify-images` / `--image-key`: each image's digest and signature
/// ([`kudo_source::image_trust`]); exit 1 when one under `required` is not verified.
fn verify(found: &Images, a: &ImagesArgs) -> Result<Outcome, Error> {
    let wanted = wanted(found);
    let checker = Checker::new(a.image_key.clone(), a.source.plain_http)?;
    let checked = checker.check_all(&wanted)?;
    let mut refused = Vec::new();
    let mut rows = Vec::new();
    let mut list = Vec::new();
    for (w, f) in wanted.iter().zip(&checked) {
        let (said, verification) = match &f.status {
            Status::NotChecked => ("not checked".to_string(), json!({"status": "not checked"})),
            Status::Verified {
                key,
                path,
                format,
                cached,
            } => (
                format!("verified ({format}, {key})"),
                json!({"status": "verified", "key": {"fingerprint": key, "path": path.display().to_string()},
                    "format": format, "cached": cached}),
            ),
            Status::Unverified { why, keys } => {
                let line = unverified_line(f, why, keys);
                match f.policy.verify {
                    Mode::Required => refused.push(line),
                    _ => eprintln!("warning: {line}"),
                }
                (
                    "NOT verified".to_string(),
                    json!({"status": "unverified", "reason": why, "keysTried": keys}),
                )
            }
        };
        let mut v = verification;
        v["policy"] = json!({"verify": f.policy.verify.as_str(), "from": f.policy.from});
        rows.push(vec![
            f.image.clone(),
            f.digest.clone().unwrap_or_else(|| "-".into()),
            said,
        ]);
        list.push(json!({
            "image": f.image,
            "digest": f.digest,
            "pinned": f.pinned(w),
            "verification": v,
        }));
    }
    let data = json!({"images": list});
    match a.output {
        None => super::print(&super::table(&["IMAGE", "DIGEST", "SIGNATURE"], &rows))?,
        Some(DataFormat::Json) => super::print(&format!(
            "{}\n",
            serde_json::to_string_pretty(&data).unwrap_or_default()
        ))?,
        Some(DataFormat::Yaml) => super::print(&super::to_yaml(&data))?,
    }
    if refused.is_empty() {
        return Ok(Outcome::Done);
    }
    for line in &refused {
        eprintln!("refused: {line}");
    }
    Ok(Outcome::Failed)
}

/// The CLI's [`ImageGate`]: the images of the package with the change's values
/// ([`images::list`], every plan), checked by [`Checker`]. An image under `required` that no key
/// signed refuses the change; under `warn` it is said on stderr; verified images are pinned.
pub struct Gate {
    checker: Checker,
    /// An install from a mirror: every image runs from its copy there.
    mirror: Option<super::mirror::MirrorPins>,
}

impl std::fmt::Debug for Gate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Gate")
    }
}

impl Gate {
    /// The gate `a` asks for: `None` when no key is given, no `images:` policy is
    /// configured and no `mirror` is installed from (nothing is checked, nothing resolved).
    /// With `mirror`, each image is checked (and pinned) at its copy there, and one the mirror
    /// lacks refuses the change.
    pub fn of(
        a: &ImageArgs,
        mirror: Option<super::mirror::MirrorPins>,
    ) -> Result<Option<Gate>, Error> {
        let checker = Checker::new(a.image_key.clone(), a.image_plain_http)?;
        Ok((checker.is_active() || mirror.is_some()).then_some(Gate { checker, mirror }))
    }
}

impl ImageGate for Gate {
    fn check(
        &self,
        pkg: &kudo_pkg::Package,
        values: &Value,
        instance: &str,
        namespace: &str,
    ) -> Result<Option<String>, String> {
        let opts = ListOptions {
            instance: instance.to_string(),
            namespace: namespace.to_string(),
            all_values: false,
        };
        let found = images::list(&Prepared::new(pkg), values, &opts).map_err(|e| e.to_string())?;
        // From a mirror: each image at its copy there, by digest.
        let mut pins = serde_json::Map::new();
        let all = if let Some(m) = &self.mirror {
            let missing: Vec<&str> = found
                .images
                .iter()
                .filter(|i| !m.pins.contains_key(&i.image))
                .map(|i| i.image.as_str())
                .collect();
            if !missing.is_empty() {
                return Err(format!(
                    "the mirror {} holds no copy of {}: its relocation map does not list it \
                     (bundle the package again, `kudo package bundle`, and relocate it)",
                    m.prefix,
                    missing.join(", ")
                ));
            }
            pins = m.annotation();
            wanted_at(&found, &m.pins)
        } else {
            wanted(&found)
        };
        // Only what a policy checks is resolved: an image under `none` costs nothing.
        let wanted: Vec<Wanted> = all.into_iter().filter(|w| self.checker.checks(w)).collect();
        if wanted.is_empty() {
            return Ok((!pins.is_empty()).then(|| Value::Object(pins).to_string()));
        }
        // Called inside the cluster commands' runtime: the checker runs its own, on a thread.
        let checked = std::thread::scope(|s| {
            s.spawn(|| self.checker.check_all(&wanted))
                .join()
                .map_err(|_| "the image check stopped".to_string())
        })?
        .map_err(|e| e.to_string())?;
        let verdict = judge(&wanted, &checked);
        for line in &verdict.warnings {
            eprintln!("warning: {line}");
        }
        if !verdict.refused.is_empty() {
            return Err(verdict.refused.join("\n"));
        }
        // What was verified, beside the mirror's pins (the same copy, by the same digest).
        for (image, entry) in verdict.pins {
            match (pins.get_mut(&image), entry) {
                (Some(Value::Object(mirrored)), Value::Object(checked)) => {
                    for (k, v) in checked {
                        mirrored.entry(k).or_insert(v);
                    }
                }
                (_, entry) => {
                    pins.insert(image, entry);
                }
            }
        }
        if pins.is_empty() {
            return Ok(None);
        }
        Ok(Some(Value::Object(pins).to_string()))
    }
}
