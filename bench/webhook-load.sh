#!/usr/bin/env bash
# Admission load on the webhook server (issue 38): throughput and latency of validating
# AdmissionReviews doing the real policy work, with and without a trickling client.
#
#   bash bench/webhook-load.sh            # 3 runs of 20 s at 16 in flight, then one with a trickler
#   SECONDS_PER_RUN=60 RUNS=1 bash bench/webhook-load.sh
#
# Builds `cargo build --release -p kudo-webhook --example load` (webhook/examples/load.rs) and
# runs `load SECONDS 16 admit`: the real HTTPS server (the binary's `serve`, default limits) in
# this process with a generated certificate, 16 clients each sending the captured Instance update
# (tests/fixtures/wire/admission-validate-update.json, 12 KB) to /admit/instance/validate,
# judged against a store holding its OperatorVersion (an answer that does not allow it is an
# error). The last run adds LOAD_TRICKLE=1: one client that declares an 8 MiB body and sends a
# byte every 100 ms, reconnecting when the server drops it (issue 38's security probe).
#
# Prints, per run: requests, errors, reviews/s, p50/p90/p99/p99.9/max latency. To compare with
# an older commit, build the example there (it only uses the crate's public API) and run the
# binary the same way. Environment: SECONDS_PER_RUN (20), RUNS (3), CLIENTS (16), TRICKLE (1;
# 0 skips the trickling run).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
SECONDS_PER_RUN=${SECONDS_PER_RUN:-20}
RUNS=${RUNS:-3}
CLIENTS=${CLIENTS:-16}
TRICKLE=${TRICKLE:-1}
TARGET=${CARGO_TARGET_DIR:-$PWD/target}

cargo build --release -p kudo-webhook --example load
LOAD=$TARGET/release/examples/load
echo "nproc: $(nproc); cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
for i in $(seq 1 "$RUNS"); do
    echo "== run $i: $SECONDS_PER_RUN s, $CLIENTS in flight, admission reviews"
    "$LOAD" "$SECONDS_PER_RUN" "$CLIENTS" admit | sed -n 1,2p
done
if [ "$TRICKLE" != 0 ]; then
    echo "== with $TRICKLE trickling client(s): $SECONDS_PER_RUN s, $CLIENTS in flight"
    LOAD_TRICKLE=$TRICKLE "$LOAD" "$SECONDS_PER_RUN" "$CLIENTS" admit
fi
