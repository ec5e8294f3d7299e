//! Packages the unit tests build, named for what they hold.

use std::collections::BTreeMap;
use std::path::Path;

use crate::package::Package;

/// A package (at `pkg/`) whose `deploy` plan applies `templates/all.yaml` (`template`) through
/// its one task `app`, in phase `p`, step `s`; `params` is its params.yaml. v1beta1 parameters
/// give it Go templates, v1beta2 ones Handlebars.
pub(crate) fn applying_one_template(params: &str, template: &str) -> Package {
    applying_templates(params, &[("all.yaml", template)])
}

/// The same with `templates` (name and text), which task `app` applies in this order.
pub(crate) fn applying_templates(params: &str, templates: &[(&str, &str)]) -> Package {
    let names: Vec<&str> = templates.iter().map(|(name, _)| *name).collect();
    let operator = format!(
        "apiVersion: kudo.dev/v1beta1\nname: t\noperatorVersion: 0.1.0\nkubernetesVersion: 1.18.0\n\
         tasks:\n  - name: app\n    kind: Apply\n    spec:\n      resources: [{}]\n\
         plans:\n  deploy:\n    phases:\n      - name: p\n        steps:\n          - name: s\n            tasks: [app]\n",
        names.join(", ")
    );
    let mut files = BTreeMap::new();
    files.insert("operator.yaml".to_string(), operator.into_bytes());
    files.insert("params.yaml".to_string(), params.as_bytes().to_vec());
    for (name, text) in templates {
        files.insert(format!("templates/{name}"), text.as_bytes().to_vec());
    }
    Package::from_files(Path::new("pkg"), files).unwrap()
}
