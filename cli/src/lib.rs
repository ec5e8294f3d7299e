//! `kudo`: the command line for KUDO operator packages with structured parameters, as the
//! library its two binaries call: `kudo`, and `kubectl-kudo`, the same program as kubectl's
//! plugin (`kubectl kudo install ...`: kubectl runs `kubectl-kudo` from `$PATH`).
//!
//! [`run`] is the whole program: it parses the arguments, runs one command and returns the exit
//! code, decided in one place: 0 success, 1 the input was refused (invalid parameters, a package
//! that does not verify, a file that cannot be read), 2 a usage error (clap's own, or
//! `Error::Usage`), 130 an interrupted wizard; `kudo diff` as `diff(1)`: 0 no change, 1 changes,
//! 2 trouble. Help, usage lines and errors name the program as it was called (`kudo`, or
//! `kubectl kudo`), and `kudo --help` lists the commands one line each, in groups.
//!
//! ```no_run
//! fn main() -> std::process::ExitCode {
//!     kudo_cli::run()
//! }
//! ```

mod args;
mod cmd;
mod complete;
mod error;
mod examples;
mod overview;
mod program;
mod progress;
mod report;
mod run;
mod sources;

pub use crate::run::run;

/// mimalloc: the parameters engine allocates many small JSON nodes; glibc's allocator spent a
/// measurable share of a `kudo params` run in page faults and trimming (see BENCHMARKS.md).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
