//! kudo's integration and end-to-end tests are three test binaries in `tests/tests/`: `offline`
//! (`tests/tests/offline/`, a module per suite; no cluster), `e2e` (`tests/tests/e2e/`, a real
//! cluster) and `docs` (`tests/tests/docs.rs`). What they share is the `kudo-testkit` crate
//! (`tests/testkit/`). This library is empty.
