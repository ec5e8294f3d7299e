//! `kudo params`.

use kudo_policy::values;

use super::Outcome;
use crate::args::{DataFormat, ParamsArgs};
use crate::error::Error;

pub fn run(a: ParamsArgs) -> Result<Outcome, Error> {
    let pkg = super::load_with(&a.package, &a.source)?.package;
    let v = super::resolve(&pkg, &a.values)?;
    let (shown, hidden) = if a.show_secrets {
        (v.value().clone(), Vec::new())
    } else {
        let r = values::Redacted::new(pkg.schema(), v.value());
        (r.value().clone(), r.hidden().to_vec())
    };
    let mut out = match a.output {
        DataFormat::Json => {
            let mut s = serde_json::to_string_pretty(&shown).unwrap_or_default();
            s.push('\n');
            s
        }
        DataFormat::Yaml => super::to_yaml(&shown),
    };
    if !hidden.is_empty() {
        let list = hidden.join(", ");
        if a.output == DataFormat::Yaml {
            out.push_str(&format!(
                "# left out (writeOnly): {list}; --show-secrets prints them\n"
            ));
        }
        eprintln!("note: writeOnly values left out: {list} (use --show-secrets to print them)");
    }
    super::print(&out)?;
    Ok(Outcome::Done)
}
