//! `kubectl-kudo`: kudo as kubectl's plugin. kubectl runs it for `kubectl kudo ...` when it is
//! in `$PATH`; it is `kudo` itself, and names itself `kubectl kudo` in help and errors.

fn main() -> std::process::ExitCode {
    kudo_cli::run()
}
