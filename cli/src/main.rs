//! `kudo`: the command line for KUDO operator packages with structured parameters.

fn main() -> std::process::ExitCode {
    kudo_cli::run()
}
