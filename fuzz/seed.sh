#!/usr/bin/env bash
# Seeds the fuzz corpora with the requests kube-apiserver really sent (shared/wire/) and the
# -p arguments of the tests.
set -euo pipefail
cd "$(dirname "$0")"
SHARED=${KUDO_SHARED_DIR:-../../shared}
mkdir -p corpus/convert corpus/admit corpus/override
for f in "$SHARED"/wire/conversion-*.json; do
    python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))["request_body"]))' "$f" > "corpus/convert/$(basename "$f")"
done
for f in "$SHARED"/wire/admission-*.json; do
    python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))["request_body"]))' "$f" > "corpus/admit/$(basename "$f")"
done
i=0
for arg in 'n=3' 's=NO' 'l/0/k=x' 'o/b=true' '/l/-=x' 'n=[1, 2]' 'a~1b=1' 'o=' '=3'; do
    printf '%s' "$arg" > "corpus/override/seed-$i"; i=$((i + 1))
done
