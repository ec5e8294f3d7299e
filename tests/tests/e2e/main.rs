//! The end-to-end suite: the real binaries against a real cluster (kind, or any API server
//! 1.24+), run when `KUDO_E2E_KUBECONFIG` names its kubeconfig; otherwise every test says it
//! is skipped and passes. See `docs/e2e.md`.
//!
//! `kudo-webhook` and `kudo-manager` run **outside** the cluster, on this machine, the way
//! envtest does it: the suite makes a CA and a serving certificate for 127.0.0.1 (or
//! `KUDO_E2E_WEBHOOK_HOST`), starts the webhook on a free port there and the manager, then runs
//! `kudo init --webhook-url https://HOST:PORT --ca-bundle CA`. The two processes live while
//! any test needs them (their logs are kept under `target/e2e-logs/`).
//!
//! The webhook captures every review it receives (`--capture-dir`, under the log directory):
//! the wire scenario checks them against `tests/fixtures/wire/`, and writes them there with
//! `KUDO_E2E_UPDATE_WIRE=1`.
//!
//! Each scenario works in its own namespace, deleted (and waited for) when it ends. The
//! migration scenario replaces kudo's CRDs, so it runs alone: the others share a read lock on
//! the cluster, it takes the write lock.
//!
//! The harness is [`harness`] (a [`harness::Scenario`] and its builders); each other module is
//! a group of scenarios. `cargo test -p kudo-tests --test e2e -- MODULE::` runs one group.

mod harness;

mod admission;
mod alone;
mod diff_patch;
mod drift;
mod habits;
mod in_cluster;
mod kudo_manifests;
mod lifecycle;
mod limits;
mod operators;
mod pipe;
mod plans;
mod preflight;
mod repository;
mod rollouts;
mod signing;
mod stored;
mod tenancy;
mod windows;
mod wire;
