//! The integration tests that need no cluster, in one test binary (linked once, its tests
//! scheduled together): a module per suite. The end-to-end suite is `tests/tests/e2e/`, the
//! documentation check `tests/tests/docs.rs`.
//!
//! Process-wide state: the current directory is the only one the suites change, and only ever
//! to the repository's root ([`in_repo`]), where the tests that read relative paths expect it;
//! no suite reads a path relative to another directory. No suite sets environment variables
//! (each sets them on the commands it runs).

mod airgap;
mod author;
mod cli;
mod cluster;
mod completion;
mod conformance;
mod corpus;
mod create;
mod diagnostics;
mod explain;
mod extensions;
mod help;
mod images;
mod init;
mod instance;
mod list;
mod migrate;
mod oci;
mod overrides;
mod properties;
mod repo;
mod secrets;
mod signing;
mod upgrade_preflight_corpus;
mod verify;
mod verify_against;
mod wizard;

/// Makes the repository's root the current directory (idempotent: every caller sets the same
/// one), for the tests that print paths relative to it.
fn in_repo() {
    std::env::set_current_dir(kudo_testkit::repo()).expect("the repository's root exists");
}
