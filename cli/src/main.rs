//! `kudo`: the command line for KUDO operator packages with structured parameters.
//!
//! Parses arguments, runs one command, turns the outcome into an exit code:
//! 0 success, 1 the input was refused (invalid parameters, a package that does not verify,
//! a file that cannot be read), 2 a usage error (clap's own).

mod args;
mod cmd;
mod report;

use std::process::ExitCode;

use clap::Parser;

/// mimalloc: the parameters engine allocates many small JSON nodes; glibc's allocator spent a
/// measurable share of a `kudo params` run in page faults and trimming (see BENCHMARKS.md).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = args::Cli::parse();
    match cmd::run(cli) {
        Ok(code) => code,
        Err(e) => {
            report::error(&e);
            ExitCode::from(1)
        }
    }
}
