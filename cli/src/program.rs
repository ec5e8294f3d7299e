//! The program's name as its user types it, in help, usage lines and errors: `kudo`, or
//! `kubectl kudo` when kubectl runs kudo as its plugin. kubectl finds a plugin by its file name,
//! `kubectl-NAME` in `$PATH` (a `-` in NAME stands for a space of the command, a `_` for a
//! `-`), so `kubectl-kudo`, kudo's second binary or a link to `kudo`, is what kubectl runs for
//! `kubectl kudo install ...`.
//!
//! [`shown`] is the name read from `argv[0]`; [`command`] is the command line as clap sees it,
//! with that name in its usage lines and clap's errors (clap alone would say the file name,
//! `kubectl-kudo`), in the Examples of every `--help`, and in the commands the help texts quote
//! (`` `kudo plan status NAME` ``); [`quoted_commands`] does the same for an error's text.

use std::ffi::OsStr;
use std::path::Path;
use std::sync::OnceLock;

use clap::builder::{Resettable, StyledStr};
use clap::{Command, CommandFactory, FromArgMatches};

use crate::args::Cli;

/// The name kudo is shown by, unless it runs as a kubectl plugin.
pub const KUDO: &str = "kudo";

/// The program's name as shown: [`from_argv0`] of this process's `argv[0]`.
pub fn shown() -> &'static str {
    static SHOWN: OnceLock<String> = OnceLock::new();
    SHOWN.get_or_init(|| from_argv0(std::env::args_os().next().as_deref()))
}

/// The name of the program run as `argv0`: the command kubectl maps a plugin's file name to
/// (`kubectl-kudo` in any folder, `kubectl-kudo.exe` on Windows: `kubectl kudo`), else `kudo`,
/// whatever the file is called (a test binary, a renamed copy).
fn from_argv0(argv0: Option<&OsStr>) -> String {
    let file = argv0
        .map(Path::new)
        .and_then(Path::file_name)
        .and_then(OsStr::to_str)
        .unwrap_or(KUDO);
    let file = file
        .strip_suffix(std::env::consts::EXE_SUFFIX)
        .unwrap_or(file);
    match file.strip_prefix("kubectl-") {
        Some(plugin) if !plugin.is_empty() => {
            format!("kubectl {}", plugin.replace('-', " ").replace('_', "-"))
        }
        _ => KUDO.to_string(),
    }
}

/// The command line named `shown`: usage lines, clap's errors, the Examples and the quoted
/// commands of every help text say `shown`, and `kudo --help` lists the commands in groups
/// ([`crate::overview`]).
pub fn command(shown: &str) -> Command {
    let mut cmd = Cli::command().bin_name(shown);
    if shown != KUDO {
        cmd = renamed(cmd, shown);
    }
    crate::overview::grouped(cmd)
}

/// This process's arguments, parsed by [`command`] with the name [`shown`]. A usage error is
/// clap's: printed, and the process exits with code 2 (0 for `--help` and `--version`).
pub fn parse() -> Cli {
    let mut cmd = command(shown());
    let mut matches = cmd.get_matches_mut();
    Cli::from_arg_matches_mut(&mut matches).unwrap_or_else(|e| e.format(&mut cmd).exit())
}

/// `cmd` and its subcommands, every help text saying `shown` where it says `kudo` as a command
/// to type: the Examples (`after_help`) and the commands quoted in the others.
fn renamed(cmd: Command, shown: &str) -> Command {
    // a text that is not set stays so
    let quoted = |s: Option<&StyledStr>| -> Resettable<StyledStr> {
        s.map(|s| quoted_commands(&s.ansi().to_string(), shown).into())
            .into()
    };
    let examples = |s: Option<&StyledStr>| -> Resettable<StyledStr> {
        s.map(|s| examples(&s.ansi().to_string(), shown).into())
            .into()
    };
    let (about, long_about) = (quoted(cmd.get_about()), quoted(cmd.get_long_about()));
    let (after, after_long) = (
        examples(cmd.get_after_help()),
        examples(cmd.get_after_long_help()),
    );
    cmd.about(about)
        .long_about(long_about)
        .after_help(after)
        .after_long_help(after_long)
        .mut_args(|arg| {
            let (help, long_help) = (quoted(arg.get_help()), quoted(arg.get_long_help()));
            arg.help(help).long_help(long_help)
        })
        .mut_subcommands(|sub| renamed(sub, shown))
}

/// `text` with each command quoted in it (`` `kudo get instances` ``) named `shown`.
pub fn quoted_commands(text: &str, shown: &str) -> String {
    if shown == KUDO {
        return text.to_string();
    }
    text.replace("`kudo ", &format!("`{shown} "))
}

/// An Examples section with each example (a line that starts with `kudo `) and each quoted
/// command named `shown`.
fn examples(text: &str, shown: &str) -> String {
    text.split_inclusive('\n')
        .map(|line| {
            let example = line.trim_start();
            let indent = &line[..line.len() - example.len()];
            match example.strip_prefix("kudo ") {
                Some(rest) => format!("{indent}{shown} {}", quoted_commands(rest, shown)),
                None => quoted_commands(line, shown),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_name_shown_is_the_command_kubectl_users_type_for_a_plugin_else_kudo() {
        let exe = std::env::consts::EXE_SUFFIX;
        let cases: &[(Option<&str>, &str)] = &[
            (Some("kudo"), "kudo"),
            (Some("/usr/local/bin/kudo"), "kudo"),
            (Some("./target/debug/kubectl-kudo"), "kubectl kudo"),
            (Some("kubectl-kudo"), "kubectl kudo"),
            // kubectl's plugin names: `-` is a space of the command, `_` a `-`
            (Some("/opt/kubectl-kudo-dev"), "kubectl kudo dev"),
            (Some("kubectl-kudo_dev"), "kubectl kudo-dev"),
            (Some("kubectl-"), "kudo"),
            // a test binary, a renamed copy, no argv[0]
            (Some("target/debug/deps/kudo_cli-0123456789abcdef"), "kudo"),
            (Some("kudo-0.1.0"), "kudo"),
            (Some(""), "kudo"),
            (None, "kudo"),
        ];
        for (argv0, want) in cases {
            let got = from_argv0(argv0.map(OsStr::new));
            assert_eq!(got, *want, "argv[0]: {argv0:?}");
            if let Some(a) = argv0.filter(|a| !a.is_empty()) {
                let with_suffix = format!("{a}{exe}");
                assert_eq!(
                    from_argv0(Some(OsStr::new(&with_suffix))),
                    *want,
                    "{with_suffix}"
                );
            }
        }
    }

    /// Every help text of the command tree, rendered long, by the command's words.
    fn helps(cmd: &mut Command, path: String, out: &mut Vec<(String, String)>) {
        out.push((path.clone(), cmd.render_long_help().to_string()));
        for sub in cmd.get_subcommands_mut() {
            let words = format!("{path} {}", sub.get_name());
            helps(sub, words, out);
        }
    }

    #[test]
    fn as_kubectl_kudo_every_help_names_kubectl_kudo() {
        let mut out = Vec::new();
        let mut cmd = command("kubectl kudo");
        // as parsing does: the subcommands' usage names come from the top's
        cmd.build();
        helps(&mut cmd, String::new(), &mut out);
        assert!(out.len() > 40, "{} commands", out.len());
        for (words, help) in &out {
            let at = format!("kubectl kudo{words}");
            assert!(
                help.contains(&format!("Usage: {at}")),
                "`{at} --help`:\n{help}"
            );
            // an example (an indented line), a quoted command (wrapped as clap wraps it)
            let flat = help.split_whitespace().collect::<Vec<_>>().join(" ");
            assert!(
                !help.lines().any(|l| l.starts_with("  kudo ")) && !flat.contains("`kudo "),
                "`{at} --help` says kudo:\n{help}"
            );
        }
        let (_, top) = &out[0];
        assert!(
            top.contains("\n  kubectl kudo install examples/cassandra-v1beta2 --instance"),
            "{top}"
        );
        let (_, list) = out.iter().find(|(w, _)| w == " list").unwrap();
        assert!(list.contains("`kubectl kudo get instances`"), "{list}");
    }

    #[test]
    fn as_kudo_the_help_texts_are_the_command_line_s_own() {
        let mut named = command(KUDO);
        let mut own = Cli::command().bin_name(KUDO);
        own.build();
        for sub in ["install", "list", "completion"] {
            let named = named.find_subcommand_mut(sub).unwrap().render_long_help();
            let own = own.find_subcommand_mut(sub).unwrap().render_long_help();
            assert_eq!(named.to_string(), own.to_string(), "kudo {sub} --help");
        }
    }

    #[test]
    fn clap_s_usage_errors_name_kubectl_kudo() {
        let err = command("kubectl kudo")
            .try_get_matches_from(["kubectl-kudo", "install"])
            .unwrap_err();
        let text = err.render().to_string();
        assert!(
            text.contains("Usage: kubectl kudo install <PACKAGE>"),
            "{text}"
        );
    }

    #[test]
    fn examples_and_quoted_commands_take_the_name() {
        let cases = [
            ("  kudo get instances\n", "  kubectl kudo get instances\n"),
            (
                "  # as `kudo plan status NAME`\n",
                "  # as `kubectl kudo plan status NAME`\n",
            ),
            // a comment about kudo stays
            ("  # kudo reads the cache\n", "  # kudo reads the cache\n"),
            ("  -p a=1 --kudo x\n", "  -p a=1 --kudo x\n"),
            (
                "the shell runs `kudo` itself",
                "the shell runs `kudo` itself",
            ),
        ];
        for (text, want) in cases {
            assert_eq!(examples(text, "kubectl kudo"), want, "{text:?}");
        }
        assert_eq!(
            quoted_commands("kudo reads `kudo repo list`", "kubectl kudo"),
            "kudo reads `kubectl kudo repo list`"
        );
        assert_eq!(
            quoted_commands("see `kudo repo list`", KUDO),
            "see `kudo repo list`"
        );
    }
}
