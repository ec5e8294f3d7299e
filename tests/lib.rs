//! kudo's integration and end-to-end tests are the files in `tests/tests/`; what they share is
//! the `kudo-testkit` crate (`tests/testkit/`). This library is empty.
