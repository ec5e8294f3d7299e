//! How an installer presents v1beta1 parameters: `groups`, a parameter's `group` and
//! `advanced` (KUDO's `paramGroups` and `metadata` checks, `pkg/kudoctl/packages/verifier`).
//!
//! - a group's name has no `/`, and no two groups have the same name (compared exactly, as
//!   KUDO compared them);
//! - a parameter's `group` has no `/` and names a group of `groups`;
//! - an `advanced: true` parameter that is required (KUDO's default) has a `default`: an
//!   installer hides advanced parameters, so one that must be given and is not shown could
//!   never be given.
//!
//! These are errors in KUDO's verifier too. v1beta2 schemas have no such fields. KUDO's opt-in
//! presentation advice (`--param-checks`: every parameter has a group, a display name ending
//! without `:`...) is not checked.

use super::{did_you_mean, file_origin};
use crate::package::Package;
use kudo_diag::diag::{Code, Diagnostic};
use kudo_diag::pointer;
use kudo_policy::params::Params;

/// The character a group name may not contain (installers use it as a separator).
const GROUP_SEPARATOR: char = '/';

pub(super) fn check(pkg: &Package, out: &mut Vec<Diagnostic>) {
    let Params::V1beta1(p) = pkg.params() else {
        return;
    };
    let doc = pkg.params_document();
    let mut defined: Vec<&str> = Vec::new();
    for g in &p.groups {
        let at = file_origin(doc, &format!("{}/name", g.pointer));
        if g.name.contains(GROUP_SEPARATOR) {
            out.push(
                Diagnostic::error(
                    Code::InvalidName,
                    "",
                    format!(
                        "parameter group `{}` contains the invalid character `{GROUP_SEPARATOR}`",
                        g.name
                    ),
                )
                .with_origin(at.clone()),
            );
        }
        if defined.contains(&g.name.as_str()) {
            out.push(
                Diagnostic::error(
                    Code::InvalidName,
                    "",
                    format!("parameter group `{}` is defined twice", g.name),
                )
                .with_origin(at),
            );
        } else {
            defined.push(&g.name);
        }
    }
    for param in &p.parameters {
        let value_ptr = pointer::push("", &param.name);
        if let Some(group) = param.group() {
            let at = file_origin(doc, &pointer::push(&param.pointer, "group"));
            if group.contains(GROUP_SEPARATOR) {
                out.push(
                    Diagnostic::error(
                        Code::InvalidName,
                        value_ptr.clone(),
                        format!(
                            "the group `{group}` contains the invalid character `{GROUP_SEPARATOR}`"
                        ),
                    )
                    .with_origin(at.clone()),
                );
            }
            if !defined.contains(&group) {
                let help = match did_you_mean(group, defined.iter().copied()) {
                    Some(m) => format!("did you mean `{m}`?"),
                    None if defined.is_empty() => {
                        format!("define it in a `groups` section: `groups: [{{name: {group}}}]`")
                    }
                    None => format!(
                        "the groups are: {}; or add `{group}` to them",
                        defined.join(", ")
                    ),
                };
                out.push(
                    Diagnostic::error(
                        Code::UnknownGroup,
                        value_ptr.clone(),
                        format!("the group `{group}` is not defined in `groups`"),
                    )
                    .with_origin(at)
                    .with_help(help),
                );
            }
        }
        if param.is_advanced() && param.is_required() && param.default.is_none() {
            out.push(
                Diagnostic::error(
                    Code::Required,
                    value_ptr,
                    "is `advanced` and required, but has no `default`: an installer hides advanced parameters, so it could not be given",
                )
                .with_origin(file_origin(doc, &pointer::push(&param.pointer, "advanced")))
                .with_help("give it a `default`, or say `required: false`"),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kudo_diag::diag::{Origin, Severity};
    use std::collections::BTreeMap;
    use std::path::Path;

    /// A finding: code, severity, pointer and line in params.yaml.
    type Finding<'a> = (Code, Severity, &'a str, usize);

    /// A case: params.yaml, what it shows, and the findings expected.
    type Case<'a> = (&'a str, &'a str, &'a [Finding<'a>]);

    /// The findings of this check on a package with these v1beta1 parameters.
    fn findings(params: &str) -> Vec<(Code, Severity, String, usize)> {
        let mut files = BTreeMap::new();
        files.insert(
            "operator.yaml".to_string(),
            b"name: t\noperatorVersion: 0.1.0\nplans: {}\n".to_vec(),
        );
        files.insert("params.yaml".to_string(), params.as_bytes().to_vec());
        let pkg = Package::from_files(Path::new("pkg"), files).unwrap();
        let mut out = Vec::new();
        check(&pkg, &mut out);
        out.into_iter()
            .map(|d| {
                let Origin::File(l) = &d.origin else {
                    panic!("{d} says not where it is")
                };
                assert_eq!(l.path, Path::new("pkg/params.yaml"));
                (d.code, d.severity, d.pointer.to_string(), l.line)
            })
            .collect()
    }

    #[test]
    fn a_parameter_group_is_defined_and_group_names_have_no_slash() {
        use Code::{InvalidName, UnknownGroup};
        use Severity::Error;
        let head = "apiVersion: kudo.dev/v1beta1\n";
        let cases: &[Case] = &[
            (
                "groups:\n  - name: cluster\n  - {name: tls, displayName: TLS, prio: 2}\nparameters:\n  - name: A\n    group: cluster\n  - name: B\n    group: tls\n  - name: C\n",
                "groups defined and used; a parameter without one",
                &[],
            ),
            (
                "parameters:\n  - name: A\n    group: cluster\n",
                "no groups section",
                &[(UnknownGroup, Error, "/A", 4)],
            ),
            (
                "groups:\n  - name: cluster\nparameters:\n  - name: A\n    group: clustr\n",
                "a typo of a group",
                &[(UnknownGroup, Error, "/A", 6)],
            ),
            (
                "groups:\n  - name: a/b\n  - name: c\n  - name: c\nparameters:\n  - name: A\n    group: a/b\n",
                "a slash in a group's name, where it is defined and where it is used; a duplicate",
                &[
                    (InvalidName, Error, "", 3),
                    (InvalidName, Error, "", 5),
                    (InvalidName, Error, "/A", 8),
                ],
            ),
            (
                "parameters:\n  - name: A\n    group: \"\"\n",
                "an empty group is no group, as KUDO read it",
                &[],
            ),
        ];
        for (params, what, want) in cases {
            let want: Vec<_> = want
                .iter()
                .map(|(c, s, p, l)| (*c, *s, p.to_string(), *l))
                .collect();
            assert_eq!(findings(&format!("{head}{params}")), want, "{what}");
        }
    }

    #[test]
    fn an_advanced_required_parameter_needs_a_default() {
        let head = "apiVersion: kudo.dev/v1beta1\nparameters:\n  - name: A\n";
        let cases: &[Case] = &[
            (
                "    advanced: true\n",
                "required by KUDO's default, no default",
                &[(Code::Required, Severity::Error, "/A", 4)],
            ),
            (
                "    required: true\n    advanced: \"true\"\n",
                "required, advanced as text",
                &[(Code::Required, Severity::Error, "/A", 5)],
            ),
            ("    advanced: true\n    default: x\n", "a default", &[]),
            ("    advanced: true\n    required: false\n", "optional", &[]),
            ("    advanced: false\n", "not advanced", &[]),
        ];
        for (fields, what, want) in cases {
            let want: Vec<_> = want
                .iter()
                .map(|(c, s, p, l)| (*c, *s, p.to_string(), *l))
                .collect();
            assert_eq!(findings(&format!("{head}{fields}")), want, "{what}");
        }
    }
}
