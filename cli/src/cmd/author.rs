//! `kudo package add parameter`: the wizard (dialoguer) and its scripted form. Every answer is
//! checked by `kudo_pkg::author`, so a wrong one is asked again (wizard) or refused with the
//! same words (flags). params.yaml is written only at the very end, atomically.

use std::io::IsTerminal;

use dialoguer::theme::ColorfulTheme;
use dialoguer::{Confirm, Input, Select};
use kudo_pkg::Package;
use kudo_pkg::author::{self, NewParameter, ParamType};
use kudo_policy::Params;

use super::Outcome;
use crate::args::AddParameterArgs;
use crate::error::{Error, Refusal};

const TYPES: &[&str] = &["string", "integer", "number", "boolean", "object", "array"];
const ITEM_TYPES: &[&str] = &["string", "integer", "number", "boolean", "object"];

pub fn add_parameter(a: AddParameterArgs) -> Result<Outcome, Error> {
    if !a.package.is_dir() {
        return Err(Error::refused(a.package.display(), Refusal::NotEditable));
    }
    let pkg = super::load(&a.package)?;
    let interactive = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    let convert = matches!(pkg.params(), Params::V1beta1(_))
        && (a.convert
            || (interactive
                && a.path.is_none()
                && Confirm::with_theme(&ColorfulTheme::default())
                    .with_prompt(
                        "This package has flat (v1beta1) parameters. Convert params.yaml to v1beta2 first, to nest the new one?",
                    )
                    .default(false)
                    .interact()
                    .unwrap_or(false)));
    let pkg = match convert.then(|| author::converted(&pkg)).transpose()? {
        Some(Some(converted)) => {
            eprintln!("params.yaml is converted to kudo.dev/v1beta2 first");
            converted
        }
        _ => pkg,
    };
    let outcome = if interactive {
        let r = Wizard::new(&pkg, &a).run();
        // dialoguer hides the cursor while it asks; give it back whatever happened.
        let _ = dialoguer::console::Term::stderr().show_cursor();
        r
    } else {
        scripted(&pkg, &a)
    };
    let p = match outcome {
        Ok(Some(p)) => p,
        Ok(None) => {
            eprintln!("nothing written");
            return Ok(Outcome::Failed);
        }
        Err(Stop::Refused(message)) => {
            return Err(Error::refused(
                a.package.display(),
                Refusal::NewParameter(message),
            ));
        }
        Err(Stop::Usage(message)) => return Err(Error::Usage(message)),
        Err(Stop::Interrupted) => return Err(Error::Interrupted),
    };
    let added = author::add_parameter(&pkg, &p).map_err(Error::parameters)?;
    let file = pkg.params_document().path().to_path_buf();
    let preview = match pkg.params() {
        // a v1beta1 parameter is an item of the `parameters` list
        Params::V1beta1(_) => serde_json::json!([added.node]),
        Params::V1beta2(_) => serde_json::json!({ p.name.clone(): added.node }),
    };
    eprintln!(
        "adding {} to {}:\n{}",
        p.pointer(),
        file.display(),
        indent(&super::to_yaml(&preview))
    );
    let go = if a.yes {
        true
    } else if interactive {
        Confirm::with_theme(&ColorfulTheme::default())
            .with_prompt("Write it?")
            .default(true)
            .interact()
            .unwrap_or(false)
    } else {
        return Err(Error::Usage(
            "stdin is not a terminal, so nothing can be confirmed: pass --yes to write".into(),
        ));
    };
    if !go {
        eprintln!("nothing written");
        return Ok(Outcome::Failed);
    }
    super::write_atomic(&file, &added.text)?;
    eprintln!("added {} to {}", p.pointer(), file.display());
    Ok(Outcome::Done)
}

fn indent(text: &str) -> String {
    text.lines().map(|l| format!("  {l}\n")).collect()
}

/// Why the wizard stopped without a parameter.
enum Stop {
    /// A flag or answer that cannot be used with this package.
    Refused(String),
    /// The command was called wrong: a flag that is needed without a terminal (exit 2).
    Usage(String),
    /// Ctrl-C or end of input.
    Interrupted,
}

impl From<dialoguer::Error> for Stop {
    fn from(_: dialoguer::Error) -> Self {
        Stop::Interrupted
    }
}

/// The place given with --path, checked: the root or an object parameter.
fn place(pkg: &Package, path: &str) -> Result<String, Stop> {
    author::place(pkg, path).map_err(Stop::Refused)
}

fn parse_type(s: &str) -> Result<ParamType, Stop> {
    ParamType::parse(s).ok_or_else(|| {
        Stop::Usage(format!(
            "--type {s}: {}",
            crate::args::type_flag(s).unwrap_err()
        ))
    })
}

fn constraints(a: &AddParameterArgs) -> Result<Vec<(String, String)>, Stop> {
    a.constraints
        .iter()
        .map(|c| {
            c.split_once('=')
                .map(|(k, v)| (k.trim().to_string(), v.to_string()))
                .ok_or_else(|| Stop::Usage(format!("--constraint {c}: expected KEYWORD=VALUE")))
        })
        .collect()
}

/// Everything from flags; what is essential and missing is refused (nothing can be asked).
fn scripted(pkg: &Package, a: &AddParameterArgs) -> Result<Option<NewParameter>, Stop> {
    let mut missing = Vec::new();
    if a.name.is_none() {
        missing.push("--name");
    }
    if a.ty.is_none() {
        missing.push("--type");
    }
    if !missing.is_empty() {
        return Err(Stop::Usage(format!(
            "stdin is not a terminal, so nothing can be asked: give {}",
            missing.join(" and ")
        )));
    }
    let parent = place(pkg, a.path.as_deref().unwrap_or(""))?;
    let mut p = NewParameter::new(
        &parent,
        a.name.as_deref().unwrap_or_default(),
        parse_type(a.ty.as_deref().unwrap_or_default())?,
    );
    p.default = a.default.clone();
    p.title = a.title.clone();
    p.description = a.description.clone();
    p.required = a.required;
    p.enum_values = a.enum_values.clone();
    p.constraints = constraints(a)?;
    p.trigger = a.trigger.clone();
    p.immutable = a.immutable;
    p.write_only = a.write_only;
    Ok(Some(p))
}

struct Wizard<'a> {
    pkg: &'a Package,
    a: &'a AddParameterArgs,
    theme: ColorfulTheme,
}

impl<'a> Wizard<'a> {
    fn new(pkg: &'a Package, a: &'a AddParameterArgs) -> Self {
        Wizard {
            pkg,
            a,
            theme: ColorfulTheme::default(),
        }
    }

    fn text(&self, prompt: &str, given: &Option<String>) -> Result<Option<String>, Stop> {
        if given.is_some() {
            return Ok(given.clone());
        }
        let s: String = Input::with_theme(&self.theme)
            .with_prompt(format!("{prompt} (empty: none)"))
            .allow_empty(true)
            .interact_text()?;
        Ok(if s.trim().is_empty() { None } else { Some(s) })
    }

    fn yes_no(&self, prompt: &str, given: bool) -> Result<bool, Stop> {
        if given {
            return Ok(true);
        }
        Ok(Confirm::with_theme(&self.theme)
            .with_prompt(prompt)
            .default(false)
            .interact()?)
    }

    fn run(&self) -> Result<Option<NewParameter>, Stop> {
        let a = self.a;
        let parent = self.parent()?;
        let name = self.name(&parent)?;
        let mut p = NewParameter::new(&parent, &name, self.ty()?);
        p.title = self.text("Title", &a.title)?;
        p.description = self.text("Description", &a.description)?;
        p.enum_values = self.enum_values(&p)?;
        p.constraints = self.constraints(&p)?;
        p.default = self.default(&p)?;
        p.required = self.yes_no("Required?", a.required)?;
        p.trigger = self.trigger(&parent)?;
        p.immutable = self.yes_no("Immutable (never changes after install)?", a.immutable)?;
        if p.immutable && p.default.is_none() && !p.required {
            p.required = Confirm::with_theme(&self.theme)
                .with_prompt(
                    "An immutable parameter without a default must be required. Make it required?",
                )
                .default(true)
                .interact()?;
            if !p.required {
                return Ok(None);
            }
        }
        p.write_only = self.yes_no("Secret (writeOnly: never printed)?", a.write_only)?;
        Ok(Some(p))
    }

    /// Where the parameter goes: `--path`, else asked among the package's places.
    fn parent(&self) -> Result<String, Stop> {
        let (pkg, a) = (self.pkg, self.a);
        Ok(match &a.path {
            Some(p) => place(pkg, p)?,
            None => {
                let places = author::places(pkg);
                if places.len() == 1 {
                    String::new()
                } else {
                    let shown: Vec<&str> = places.iter().map(|(_, s)| s.as_str()).collect();
                    let i = Select::with_theme(&self.theme)
                        .with_prompt("Where does the parameter go?")
                        .items(&shown)
                        .default(0)
                        .interact()?;
                    places[i].0.clone()
                }
            }
        })
    }

    /// Its name: `--name`, checked, else asked.
    fn name(&self, parent: &str) -> Result<String, Stop> {
        let (pkg, a) = (self.pkg, self.a);
        Ok(match &a.name {
            Some(n) => {
                author::check_name(pkg, parent, n)
                    .map_err(|e| Stop::Refused(format!("--name {n}: {e}")))?;
                n.clone()
            }
            None => Input::with_theme(&self.theme)
                .with_prompt("Name")
                .validate_with(|n: &String| author::check_name(pkg, parent, n.trim()))
                .interact_text()?
                .trim()
                .to_string(),
        })
    }

    /// Its type: `--type`, else asked (an array's items too, in v1beta2).
    fn ty(&self) -> Result<ParamType, Stop> {
        let (pkg, a) = (self.pkg, self.a);
        Ok(match &a.ty {
            Some(t) => parse_type(t)?,
            None => {
                let flat = matches!(pkg.params(), Params::V1beta1(_));
                let i = Select::with_theme(&self.theme)
                    .with_prompt("Type")
                    .items(TYPES)
                    .default(0)
                    .interact()?;
                match TYPES[i] {
                    "array" if !flat => {
                        let j = Select::with_theme(&self.theme)
                            .with_prompt("Type of the array's items")
                            .items(ITEM_TYPES)
                            .default(0)
                            .interact()?;
                        ParamType::Array(Box::new(parse_type(ITEM_TYPES[j])?))
                    }
                    t => parse_type(t)?,
                }
            }
        })
    }

    /// Its allowed values: `--enum`, else asked one by one (none for objects and arrays).
    fn enum_values(&self, p: &NewParameter) -> Result<Vec<String>, Stop> {
        let a = self.a;
        Ok(
            if !a.enum_values.is_empty() || matches!(p.ty, ParamType::Object | ParamType::Array(_))
            {
                a.enum_values.clone()
            } else {
                let mut values = Vec::new();
                loop {
                    let probe = NewParameter {
                        enum_values: values.clone(),
                        ..p.clone()
                    };
                    let v: String = Input::with_theme(&self.theme)
                        .with_prompt(format!(
                            "Allowed value {} (empty: {})",
                            values.len() + 1,
                            if values.is_empty() {
                                "any value"
                            } else {
                                "done"
                            }
                        ))
                        .allow_empty(true)
                        .validate_with(|v: &String| -> Result<(), author::Refusal> {
                            if v.is_empty() {
                                return Ok(());
                            }
                            let mut q = probe.clone();
                            q.enum_values.push(v.clone());
                            author::node(&q).map(|_| ())
                        })
                        .interact_text()?;
                    if v.is_empty() {
                        break;
                    }
                    values.push(v);
                }
                values
            },
        )
    }

    /// Its constraints: `--constraint`, else asked for each its type has.
    fn constraints(&self, p: &NewParameter) -> Result<Vec<(String, String)>, Stop> {
        let a = self.a;
        Ok(if a.constraints.is_empty() {
            let mut out = Vec::new();
            for k in p.ty.constraints() {
                let probe = NewParameter {
                    constraints: out.clone(),
                    ..p.clone()
                };
                let v: String = Input::with_theme(&self.theme)
                    .with_prompt(format!("{k} (empty: none)"))
                    .allow_empty(true)
                    .validate_with(|v: &String| -> Result<(), author::Refusal> {
                        if v.is_empty() {
                            return Ok(());
                        }
                        let mut q = probe.clone();
                        q.constraints.push((k.to_string(), v.clone()));
                        author::node(&q).map(|_| ())
                    })
                    .interact_text()?;
                if !v.is_empty() {
                    out.push((k.to_string(), v));
                }
            }
            out
        } else {
            constraints(a)?
        })
    }

    /// Its default: `--default`, else asked (YAML), checked against what is known so far.
    fn default(&self, p: &NewParameter) -> Result<Option<String>, Stop> {
        let a = self.a;
        Ok(match &a.default {
            Some(d) => Some(d.clone()),
            None => {
                let probe = p.clone();
                let d: String = Input::with_theme(&self.theme)
                    .with_prompt("Default (YAML, empty: none)")
                    .allow_empty(true)
                    .validate_with(|d: &String| -> Result<(), author::Refusal> {
                        if d.is_empty() {
                            return Ok(());
                        }
                        let q = NewParameter {
                            default: Some(d.clone()),
                            ..probe.clone()
                        };
                        author::node(&q).map(|_| ())
                    })
                    .interact_text()?;
                if d.is_empty() { None } else { Some(d) }
            }
        })
    }

    /// The plan a change of it runs: `--trigger`, else asked among the allowed ones.
    fn trigger(&self, parent: &str) -> Result<Option<String>, Stop> {
        let (pkg, a) = (self.pkg, self.a);
        Ok(match &a.trigger {
            Some(t) => Some(t.clone()),
            None => {
                let allowed = author::allowed_triggers(pkg, parent);
                let mut items =
                    vec!["(none: inherit, or the operator's update/deploy plan)".to_string()];
                items.extend(allowed.iter().cloned());
                let i = Select::with_theme(&self.theme)
                    .with_prompt("Plan a change runs (trigger)")
                    .items(&items)
                    .default(0)
                    .interact()?;
                if i == 0 {
                    None
                } else {
                    Some(allowed[i - 1].clone())
                }
            }
        })
    }
}
