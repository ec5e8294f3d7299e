//! The program: [`run`] parses the arguments, runs one command, turns the outcome into an exit
//! code, here and nowhere else ([`exit_code`]).

use std::process::ExitCode;

use crate::cmd::{self, Outcome};
use crate::error::Error;
use crate::{args, program, report};
use kudo_source::oci;

/// Runs kudo with the process's arguments, as `kudo` or as `kubectl-kudo`, and returns its exit
/// code: 0 success, 1 the input was refused, 2 a usage error, 130 an interrupted wizard
/// (`kudo diff`: 0 no change, 1 changes, 2 trouble).
pub fn run() -> ExitCode {
    oci::install_crypto_provider();
    // `COMPLETE=SHELL kudo -- WORDS`: the shell asks for candidates (see `complete`); answered
    // here, before anything prints, and silently: a completer's panic prints nothing either
    if std::env::var_os("COMPLETE").is_some_and(|v| !v.is_empty() && v != "0") {
        std::panic::set_hook(Box::new(|_| {}));
    }
    clap_complete::CompleteEnv::with_factory(<args::Cli as clap::CommandFactory>::command)
        .complete();
    if let Some(hint) = helm_habit(program::shown(), std::env::args().skip(1)) {
        eprintln!("error: {hint}");
        return ExitCode::from(2);
    }
    let result = cmd::run(program::parse());
    let code = exit_code(&result);
    if let Err(e) = result {
        report::error(e);
    }
    ExitCode::from(code)
}

/// The exit code of a command's result.
fn exit_code(result: &Result<Outcome, Error>) -> u8 {
    match result {
        Ok(Outcome::Done) => 0,
        Ok(Outcome::Failed | Outcome::Changes) => 1,
        Ok(Outcome::Incomplete) => 2,
        Err(e) => error_code(e),
    }
}

/// The exit code of an error: decided by its variant, through the context that wraps it.
fn error_code(e: &Error) -> u8 {
    match e {
        Error::Usage(_) | Error::Diff(_) => 2,
        Error::Interrupted => 130,
        Error::About { source, .. } | Error::In { source, .. } => error_code(source),
        _ => 1,
    }
}

/// A usage error for Helm's value flags, which clap would answer with a misleading "use
/// `-- --set`" tip, and for Helm's `-f values.yaml` where kudo's `-f` is not a values file.
/// Anything after `--` is left alone. `program` is the program's name as shown
/// ([`program::shown`]).
fn helm_habit(program: &str, args: impl Iterator<Item = String>) -> Option<String> {
    let mut command: Option<String> = None;
    for a in args {
        if a == "--" {
            return None;
        }
        if command.is_none() && !a.starts_with('-') {
            command = Some(a.clone());
        }
        let flag = a.split('=').next().unwrap_or("");
        let values_command = matches!(command.as_deref(), Some("template" | "params" | "install"));
        if values_command
            && (flag == "-f"
                || flag == "--file"
                || (a.starts_with("-f") && a.len() > 2 && !a.starts_with("--")))
        {
            return Some(format!(
                "{program} {} has no -f: give a values file (an RFC 7396 merge patch, as Helm's \
                 -f) with -P FILE; kudo's -f is the Instance file of `{program} update` and \
                 `{program} upgrade`",
                command.unwrap_or_default()
            ));
        }
        match flag {
            "--set" | "--set-string" | "--set-json" => {
                return Some(format!(
                    "{program} has no {flag}: give each value with -p POINTER=VALUE, a JSON pointer \
                     (`-p topology/0/datacenterName=DC1`), or a values file with -P FILE"
                ));
            }
            "--values" => {
                return Some(format!(
                    "{program} has no --values: give a values file (an RFC 7396 merge patch) \
                     with -P FILE"
                ));
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Refusal;

    #[test]
    fn exit_codes_are_decided_by_the_outcome_or_the_error_through_its_context() {
        let io_error = || std::io::Error::new(std::io::ErrorKind::PermissionDenied, "denied");
        let cases: Vec<(Result<Outcome, Error>, u8)> = vec![
            (Ok(Outcome::Done), 0),
            (Ok(Outcome::Failed), 1),
            (Ok(Outcome::Changes), 1),
            (Ok(Outcome::Incomplete), 2),
            (Err(Error::Usage("-u/--username is empty".into())), 2),
            (Err(Error::Interrupted), 130),
            (Err(Error::refused("p", Refusal::NotPem)), 1),
            (Err(Error::Stdout(io_error())), 1),
            (Err(Error::Usage("x".into()).about("p")), 2),
            (Err(Error::Interrupted.in_command("install")), 130),
            (Err(Error::parameters(Vec::new())), 1),
            // `kudo diff`: any trouble is 2, as diff(1)
            (Err(Error::Diff(Box::new(Error::parameters(Vec::new())))), 2),
            (Err(Error::Diff(Box::new(Error::Interrupted))), 2),
        ];
        for (result, want) in &cases {
            assert_eq!(exit_code(result), *want, "{result:?}");
        }
    }

    #[test]
    fn helm_value_flags_get_kudo_s_equivalent() {
        let args = |a: &[&str]| {
            a.iter()
                .map(|s| s.to_string())
                .collect::<Vec<_>>()
                .into_iter()
        };
        assert!(
            helm_habit("kudo", args(&["template", ".", "--set", "a.b=1"]))
                .unwrap()
                .contains("-p POINTER=VALUE")
        );
        assert!(
            helm_habit("kudo", args(&["template", ".", "--set-string=a=1"]))
                .unwrap()
                .contains("--set-string")
        );
        assert!(
            helm_habit("kudo", args(&["install", ".", "--values", "v.yaml"]))
                .unwrap()
                .contains("-P FILE")
        );
        assert_eq!(
            helm_habit("kudo", args(&["template", ".", "-p", "a=1"])),
            None
        );
        for helm in [
            &["template", ".", "-f", "v.yaml"][..],
            &["install", ".", "-fv.yaml"],
        ] {
            assert!(
                helm_habit("kudo", args(helm))
                    .unwrap()
                    .contains("with -P FILE"),
                "{helm:?}"
            );
        }
        // kudo's own -f
        assert_eq!(
            helm_habit("kudo", args(&["update", "-f", "i.yaml", "-p", "a=1"])),
            None
        );
        assert_eq!(helm_habit("kudo", args(&["template", "--", "--set"])), None);
    }
}
