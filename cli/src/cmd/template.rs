//! `kudo template`.

use kudo_pkg::render::{self, RenderOptions};

use super::Outcome;
use crate::args::{DataFormat, TemplateArgs};
use crate::error::Error;

pub fn run(a: TemplateArgs) -> Result<Outcome, Error> {
    let pkg = super::load_with(&a.package, &a.source)?.package;
    let values = super::resolve(&pkg, &a.values)?;
    let opts = RenderOptions {
        instance: a.instance,
        namespace: a.namespace,
        plan: a.plan,
        images: Default::default(),
    };
    match render::render_plan(&pkg, values.value(), &opts) {
        Ok(rendered) if a.output == DataFormat::Json => {
            let items: Vec<&serde_json::Value> =
                rendered.iter().flat_map(|r| r.objects.iter()).collect();
            let list = serde_json::json!({"apiVersion": "v1", "kind": "List", "items": items});
            super::print(&format!(
                "{}\n",
                serde_json::to_string_pretty(&list).unwrap_or_default()
            ))?;
            Ok(Outcome::Done)
        }
        Ok(rendered) => {
            super::print(&render::stream(&rendered))?;
            Ok(Outcome::Done)
        }
        Err(diags) => Err(Error::parameters(diags)),
    }
}
