//! `kudo --help` at a glance: the commands one line each, in groups, as kubectl groups its own
//! ("Basic Commands", "Deploy Commands", ...). A command's line is its `about`, at most
//! 80 characters (a test holds it); the detail is in the command's own `--help` (its `long_about`).
//!
//! clap has no groups of commands: the list is written into the top-level command's help
//! template ([`grouped`]) from the command line itself when the program starts, so it shows
//! every command with its own summary; [`GROUPS`] only says which group each one is in.

use clap::Command;
use clap::builder::StyledStr;

/// The groups of `kudo --help`, in order, each with its commands in the order listed. A command
/// in no group is listed in the last one (and fails a test).
pub const GROUPS: &[(&str, &[&str])] = &[
    (
        "Package commands",
        &["template", "params", "explain", "package"],
    ),
    (
        "Instance commands",
        &[
            "install",
            "update",
            "upgrade",
            "rollout",
            "patch",
            "rollback",
            "uninstall",
            "diff",
            "history",
            "plan",
            "status",
            "get",
            "list",
        ],
    ),
    ("Cluster commands", &["init", "migrate", "version"]),
    (
        "Repository and registry commands",
        &["repo", "search", "registry"],
    ),
    ("Other commands", &["completion", "help"]),
];

/// The top-level command `cmd`, with the help that lists its commands in [`GROUPS`].
pub fn grouped(mut cmd: Command) -> Command {
    // built first: clap adds its `help` command then
    cmd.build();
    let template = template(&cmd);
    cmd.help_template(template)
}

/// clap's default help template, with the commands listed in groups in place of its one
/// `Commands:` list (`{all-args}` is that list and the options).
fn template(cmd: &Command) -> StyledStr {
    let styles = cmd.get_styles();
    let (header, literal) = (styles.get_header(), styles.get_literal());
    let commands: Vec<&Command> = cmd.get_subcommands().filter(|c| !c.is_hide_set()).collect();
    let width = commands
        .iter()
        .map(|c| c.get_name().len())
        .max()
        .unwrap_or(0);
    let mut out = String::from("{before-help}{about-with-newline}\n{usage-heading} {usage}\n");
    for (group, members) in in_groups(&commands) {
        out.push_str(&format!("\n{header}{group}:{header:#}\n"));
        for c in members {
            let name = c.get_name();
            let about = c.get_about().map(ToString::to_string).unwrap_or_default();
            let pad = width - name.len();
            out.push_str(&format!(
                "  {literal}{name}{literal:#}{:pad$}  {about}\n",
                ""
            ));
        }
    }
    out.push_str(&format!(
        "\n{header}Options:{header:#}\n{{options}}{{after-help}}"
    ));
    StyledStr::from(out)
}

/// `commands` in their groups, in [`GROUPS`]' order; a command in no group in the last one.
/// Groups with no command are left out.
fn in_groups<'a>(commands: &[&'a Command]) -> Vec<(&'static str, Vec<&'a Command>)> {
    let named = |name: &str| commands.iter().copied().find(|c| c.get_name() == name);
    let mut out: Vec<(&'static str, Vec<&'a Command>)> = GROUPS
        .iter()
        .map(|(group, names)| (*group, names.iter().filter_map(|n| named(n)).collect()))
        .collect();
    let elsewhere = commands.iter().copied().filter(|c| {
        !GROUPS
            .iter()
            .any(|(_, names)| names.contains(&c.get_name()))
    });
    if let Some((_, last)) = out.last_mut() {
        last.extend(elsewhere);
    }
    out.retain(|(_, members)| !members.is_empty());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The longest `about` of a command: its line in `kudo --help`, indented and after the
    /// longest command name, stays within 100 columns.
    const MAX_ABOUT: usize = 80;

    /// The top-level command as `kudo` runs it, built (clap's `help` command added).
    fn kudo() -> Command {
        crate::program::command(crate::program::KUDO)
    }

    #[test]
    fn every_command_has_a_one_line_about_and_exactly_one_group() {
        let cmd = kudo();
        let mut names = Vec::new();
        for c in cmd.get_subcommands() {
            let name = c.get_name();
            names.push(name);
            let about = c.get_about().map(ToString::to_string).unwrap_or_default();
            let length = about.chars().count();
            assert!(
                (1..=MAX_ABOUT).contains(&length) && !about.contains('\n'),
                "`kudo {name}`: its about has {length} characters (at most {MAX_ABOUT}, one \
                 line; the detail goes in long_about): {about}"
            );
            let groups: Vec<&str> = GROUPS
                .iter()
                .filter(|(_, members)| members.contains(&name))
                .map(|(group, _)| *group)
                .collect();
            assert_eq!(groups.len(), 1, "`kudo {name}` is in the groups {groups:?}");
        }
        for (group, members) in GROUPS {
            for m in *members {
                assert!(names.contains(m), "{group}: `kudo {m}` is no command");
            }
        }
    }

    #[test]
    fn kudo_help_lists_every_command_on_one_line_under_its_group() {
        let mut cmd = kudo();
        let abouts: Vec<(String, String)> = cmd
            .get_subcommands()
            .map(|c| {
                let about = c.get_about().map(ToString::to_string).unwrap_or_default();
                (c.get_name().to_string(), about)
            })
            .collect();
        for help in [cmd.render_help(), cmd.render_long_help()] {
            let help = help.to_string();
            for line in help.lines() {
                assert!(
                    line.chars().count() <= 100,
                    "a line over 100 columns: {line}"
                );
            }
            for (group, members) in GROUPS {
                let heading = format!("{group}:");
                let section: Vec<&str> = help
                    .lines()
                    .skip_while(|l| *l != heading)
                    .skip(1)
                    .take_while(|l| !l.is_empty())
                    .collect();
                let listed: Vec<&str> = section
                    .iter()
                    .filter_map(|l| l.split_whitespace().next())
                    .collect();
                assert_eq!(&listed, members, "the section {heading}\n{help}");
                for (line, name) in section.iter().zip(*members) {
                    let (_, about) = abouts.iter().find(|(n, _)| n == name).unwrap();
                    assert_eq!(
                        line.trim_start()[name.len()..].trim_start(),
                        about,
                        "{name}"
                    );
                }
            }
            assert!(
                help.contains("\nOptions:\n") && help.contains("\n  -h, --help"),
                "{help}"
            );
            assert!(help.contains("\nExamples:\n  kudo "), "{help}");
        }
    }

    #[test]
    fn a_command_in_no_group_is_listed_in_the_last() {
        let cmd = Command::new("kudo")
            .subcommand(Command::new("install"))
            .subcommand(Command::new("new"))
            .subcommand(Command::new("template"));
        let commands: Vec<&Command> = cmd.get_subcommands().collect();
        let got: Vec<(&str, Vec<&str>)> = in_groups(&commands)
            .into_iter()
            .map(|(g, cs)| (g, cs.iter().map(|c| c.get_name()).collect()))
            .collect();
        assert_eq!(
            got,
            [
                ("Package commands", vec!["template"]),
                ("Instance commands", vec!["install"]),
                ("Other commands", vec!["new"]),
            ]
        );
    }
}
