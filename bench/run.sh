#!/usr/bin/env bash
# Parameter benchmarks of kudo, and the comparison with Python's jsonschema.
#
#   bash bench/run.sh
#
# 1. installs what is missing (jsonschema + PyYAML with pip, hyperfine with apt-get: optional),
# 2. builds the CLI (`cargo build --release -p kudo-cli`),
# 3. runs the criterion benchmarks (`cargo bench -p kudo-pkg --bench params`), which also write
#    their inputs (largest corpus package, 10 -p overrides, 2 -P files) to $OUT/inputs,
# 4. exports, with the CLI, the converted schema and the effective values of those same inputs,
# 5. times Python in-process (PyYAML load + jsonschema Draft202012Validator) on them,
# 6. times whole processes: `kudo params PKG -p ... -P ... -o json` against
#    `python3 bench/python_jsonschema.py --once schema.json values.yaml` (run by the interpreter
#    itself, not a wrapper on PATH), with both start-up floors, and prints the ratio.
#
# Results go to $OUT: criterion.md, python.json, whole-process.md, hyperfine.json, the inputs.
#
# Environment: OUT (default target/kudo-bench) for the results; PYTHON (default python3); RUNS
# (default 200) runs per command of the whole-process comparison; SKIP_CRITERION=1 skips step 3
# (needs a previous run's $OUT/inputs); NO_HYPERFINE=1 uses the bash timing loop.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
OUT=${OUT:-$TARGET/kudo-bench}
RUNS=${RUNS:-200}
GOAL=20
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
PY=${PYTHON:-python3}

say() { printf '\n== %s\n' "$*"; }

# --- 1. tools -------------------------------------------------------------------------------
say "tools"
if ! "$PY" -c 'from jsonschema import Draft202012Validator; import yaml' 2>/dev/null; then
    "$PY" -m pip install --quiet --disable-pip-version-check jsonschema pyyaml
fi
if ! command -v hyperfine >/dev/null 2>&1; then
    SUDO=""
    if [ "$(id -u)" != 0 ] && command -v sudo >/dev/null 2>&1; then SUDO="sudo -n"; fi
    { $SUDO apt-get install -y -qq hyperfine || { $SUDO apt-get update -qq && $SUDO apt-get install -y -qq hyperfine; }; } \
        >/dev/null 2>&1 || echo "hyperfine could not be installed: falling back to a bash timing loop"
fi
HYPERFINE=$(command -v hyperfine || true)
[ "${NO_HYPERFINE:-0}" = 1 ] && HYPERFINE=""
echo "nproc: $(nproc); cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
echo "$("$PY" --version); jsonschema $("$PY" -c 'from importlib.metadata import version; print(version("jsonschema"))'); PyYAML $("$PY" -c 'import yaml; print(yaml.__version__)')"
echo "$(rustc --version); hyperfine: $(if [ -n "$HYPERFINE" ]; then hyperfine --version; else echo "none (bash loop)"; fi)"
# The interpreter itself: `python3` may be a wrapper (a pyenv shim is a bash script that adds tens
# of milliseconds to every start). The comparison runs the interpreter; a wrapper, when there is
# one, is timed too and reported apart.
PY_REAL=$("$PY" -c 'import sys; print(sys.executable)')
PY_PATH=$(command -v "$PY" || echo "$PY")
echo "python interpreter: $PY_REAL ($PY on PATH: $PY_PATH)"

# --- 2. build -------------------------------------------------------------------------------
say "cargo build --release -p kudo-cli"
cargo build --release -p kudo-cli
KUDO=$TARGET/release/kudo

# --- 3. criterion ---------------------------------------------------------------------------
if [ "${SKIP_CRITERION:-0}" != 1 ]; then
    say "cargo bench -p kudo-pkg --bench params"
    KUDO_BENCH_INPUTS=$OUT/inputs cargo bench -p kudo-pkg --bench params 2>&1 | tee "$OUT/criterion.txt"
fi
[ -s "$OUT/inputs/package.txt" ] || { echo "no benchmark inputs in $OUT/inputs" >&2; exit 1; }

# criterion's own estimates (target/criterion/NAME/new/estimates.json)
"$PY" - "$TARGET/criterion" > "$OUT/criterion.md" <<'EOF'
import json, os, sys
root = sys.argv[1]
def fmt(ns):
    for unit, f in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if ns >= f:
            return f"{ns / f:.3f} {unit}"
    return f"{ns:.1f} ns"
print("| benchmark | median | mean (95% CI) |")
print("|---|---|---|")
for name in ("load_convert_largest", "params_10p_2P_validate", "validate_only", "compile_schema"):
    p = os.path.join(root, name, "new", "estimates.json")
    if not os.path.exists(p):
        print(f"| {name} | (missing) | |"); continue
    e = json.load(open(p))
    m, md = e["mean"], e["median"]
    ci = m["confidence_interval"]
    print(f"| `{name}` | {fmt(md['point_estimate'])} | {fmt(m['point_estimate'])} "
          f"({fmt(ci['lower_bound'])} – {fmt(ci['upper_bound'])}) |")
EOF
cat "$OUT/criterion.md"

# --- 4. the same inputs through the CLI ----------------------------------------------------
say "export schema and effective values with the CLI"
PKG=$(head -n1 "$OUT/inputs/package.txt")
ARGS=()
while IFS= read -r o; do
    [ -n "$o" ] && ARGS+=(-p "$o")
done < "$OUT/inputs/overrides.txt"
ARGS+=(-P "$OUT/inputs/p1.yaml" -P "$OUT/inputs/p2.yaml")
echo "package: $PKG"
echo "inputs:  ${ARGS[*]}"

"$KUDO" package convert "$PKG" > "$OUT/schema.yaml"
"$KUDO" params "$PKG" "${ARGS[@]}" -o json > "$OUT/values.json"
"$KUDO" params "$PKG" "${ARGS[@]}" -o yaml > "$OUT/values.yaml"
"$PY" - "$OUT/schema.yaml" "$OUT/schema.json" <<'EOF'
import json, sys, yaml
doc = yaml.safe_load(open(sys.argv[1], encoding="utf-8"))
doc.pop("apiVersion", None)
json.dump(doc, open(sys.argv[2], "w", encoding="utf-8"), indent=1)
print(f"schema: {len(doc.get('properties', {}))} properties")
EOF
"$PY" bench/python_jsonschema.py --once "$OUT/schema.json" "$OUT/values.yaml"
echo "values: $(wc -c < "$OUT/values.yaml") bytes of YAML; python --once validates them"

# --- 5. Python in-process -------------------------------------------------------------------
say "python in-process (same schema, same values)"
"$PY" bench/python_jsonschema.py --json "$OUT/python.json" "$OUT/schema.json" "$OUT/values.json" "$OUT/values.yaml"

# --- 6. whole processes ---------------------------------------------------------------------
say "whole process: kudo params vs python --once ($RUNS runs each)"
quote() { local s; printf -v s '%q ' "$@"; printf '%s' "${s% }"; }
NAMES=(kudo python kudo-startup python-startup)
CMDS=(
    "$(quote "$KUDO" params "$PKG" "${ARGS[@]}" -o json)"
    "$(quote "$PY_REAL" "$ROOT/bench/python_jsonschema.py" --once "$OUT/schema.json" "$OUT/values.yaml")"
    "$(quote "$KUDO" --version)"
    "$(quote "$PY_REAL" -c 'import yaml, jsonschema')"
)
if [ "$PY_PATH" != "$PY_REAL" ]; then
    NAMES+=(python-via-path)
    CMDS+=("$(quote "$PY" "$ROOT/bench/python_jsonschema.py" --once "$OUT/schema.json" "$OUT/values.yaml")")
fi
for i in "${!NAMES[@]}"; do printf '%-16s %s\n' "${NAMES[$i]}" "${CMDS[$i]}"; done

: > "$OUT/whole-process.tsv"
if [ -n "$HYPERFINE" ]; then
    HF=()
    for i in "${!NAMES[@]}"; do HF+=(-n "${NAMES[$i]}" "${CMDS[$i]}"); done
    hyperfine -N --warmup 10 --runs "$RUNS" --export-json "$OUT/hyperfine.json" "${HF[@]}"
    "$PY" -c '
import json, sys
for r in json.load(open(sys.argv[1]))["results"]:
    print(r["command"], r["mean"] * 1e3, sep="\t")' "$OUT/hyperfine.json" > "$OUT/whole-process.tsv"
else
    # bash loop: mean wall time per run (fork + exec included), output discarded, 5 warm-up runs
    for i in "${!NAMES[@]}"; do
        eval "set -- ${CMDS[$i]}"
        for _ in 1 2 3 4 5; do "$@" > /dev/null; done
        t0=$(date +%s%N)
        for ((r = 0; r < RUNS; r++)); do "$@" > /dev/null; done
        t1=$(date +%s%N)
        printf '%s\t%s\n' "${NAMES[$i]}" "$("$PY" -c "print(($t1 - $t0) / 1e6 / $RUNS)")" >> "$OUT/whole-process.tsv"
    done
fi

"$PY" - "$OUT/whole-process.tsv" "$GOAL" <<'EOF' | tee "$OUT/whole-process.md"
import sys
rows = {}
for line in open(sys.argv[1]):
    name, mean = line.rstrip("\n").split("\t")[:2]
    rows[name] = float(mean)
goal = float(sys.argv[2])
labels = {
    "kudo": "`kudo params PKG` (10 -p, 2 -P, -o json)",
    "python": "`python bench/python_jsonschema.py --once schema.json values.yaml`",
    "kudo-startup": "`kudo --version` (start-up floor)",
    "python-startup": "`python -c 'import yaml, jsonschema'` (start-up + imports floor)",
    "python-via-path": "the Python run through `python3` on PATH (a wrapper)",
}
print("| process | mean |")
print("|---|---|")
for name, mean in rows.items():
    print(f"| {labels.get(name, name)} | {mean:.2f} ms |")
k, p = rows["kudo"], rows["python"]
ratio = p / k
print()
print(f"ratio python / kudo: {ratio:.1f}x (goal >= {goal:.0f}x: " + (
    "met)" if ratio >= goal else
    f"NOT met: kudo would need {p / goal:.2f} ms or less, i.e. to be {k / (p / goal):.2f}x faster)"))
if "python-via-path" in rows:
    print(f"ratio against python3 through the PATH wrapper: {rows['python-via-path'] / k:.1f}x "
          "(not counted: the wrapper's own start-up is not Python's)")
EOF
echo
echo "results in $OUT"
