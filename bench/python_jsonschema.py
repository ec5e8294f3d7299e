#!/usr/bin/env python3
"""The Python baseline of the kudo parameter benchmarks: PyYAML + jsonschema.

In-process timing (timeit-style: best-of and mean over repeats of N loops):

    python3 bench/python_jsonschema.py schema.json values.json [values.yaml]

measures, for the same values and the same JSON-schema as the Rust benchmarks:

- compile:        jsonschema.Draft202012Validator.check_schema(schema) + Draft202012Validator(schema)
                  (what kudo's Validator::new does: metaschema check + compile)
- validate:       list(validator.iter_errors(values)) with a pre-built validator (all errors, as kudo)
- yaml_load:      yaml.load(values.yaml) with the C loader when PyYAML has it (only with values.yaml)
- load+validate:  yaml_load + validate

Whole-process mode (for hyperfine):

    python3 bench/python_jsonschema.py --once schema.json values.yaml

loads the schema JSON and the YAML values, validates once, prints the number of errors on stderr
when there are any and exits 1 then.
"""

import argparse
import json
import sys
import timeit


def _loader(yaml):
    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def once(schema_path, values_path):
    import yaml
    from jsonschema import Draft202012Validator

    with open(schema_path, encoding="utf-8") as f:
        schema = json.load(f)
    with open(values_path, encoding="utf-8") as f:
        values = yaml.load(f, Loader=_loader(yaml))
    errors = list(Draft202012Validator(schema).iter_errors(values))
    if errors:
        print(f"{len(errors)} validation error(s); first: {errors[0].message}", file=sys.stderr)
        return 1
    return 0


def measure(label, fn, repeat, min_time, results):
    """timeit.Timer.autorange-like: pick a loop count taking >= min_time, then repeat."""
    timer = timeit.Timer(fn)
    number = 1
    while True:
        t = timer.timeit(number)
        if t >= min_time:
            break
        number *= 2 if t == 0 else max(2, int(min_time / t * 1.2))
    runs = [t / number for t in timer.repeat(repeat=repeat, number=number)]
    runs.sort()
    mean = sum(runs) / len(runs)
    median = runs[len(runs) // 2]
    results[label] = {"best_ms": runs[0] * 1e3, "median_ms": median * 1e3, "mean_ms": mean * 1e3,
                      "loops": number, "repeat": repeat}
    print(f"{label:<16} median {median * 1e3:9.4f} ms  mean {mean * 1e3:9.4f} ms  "
          f"best {runs[0] * 1e3:9.4f} ms  ({repeat} x {number} loops)")


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--once", action="store_true",
                    help="whole-process mode: SCHEMA.json VALUES.yaml, load and validate once")
    ap.add_argument("--repeat", type=int, default=15, help="repeats (default 15)")
    ap.add_argument("--min-time", type=float, default=0.2, help="seconds per repeat at least (default 0.2)")
    ap.add_argument("--json", metavar="FILE", help="also write the results as JSON to FILE")
    ap.add_argument("schema", help="the JSON-schema (JSON)")
    ap.add_argument("values", help="the values: JSON (in-process mode) or YAML (--once)")
    ap.add_argument("values_yaml", nargs="?", help="the same values as YAML (in-process mode)")
    a = ap.parse_args(argv)

    if a.once:
        return once(a.schema, a.values)

    import yaml
    from importlib.metadata import version
    from jsonschema import Draft202012Validator

    with open(a.schema, encoding="utf-8") as f:
        schema = json.load(f)
    with open(a.values, encoding="utf-8") as f:
        values = json.load(f)
    validator = Draft202012Validator(schema)
    errors = list(validator.iter_errors(values))
    if errors:
        print(f"the values do not validate ({len(errors)} errors), first: {errors[0].message}", file=sys.stderr)
        return 1

    loader = _loader(yaml)
    print(f"python {sys.version.split()[0]}, jsonschema {version('jsonschema')}, PyYAML {yaml.__version__} "
          f"({loader.__name__}); {len(schema.get('properties', {}))} properties, {len(values)} values")
    results = {}

    def compile_():
        Draft202012Validator.check_schema(schema)
        return Draft202012Validator(schema)

    measure("compile", compile_, a.repeat, a.min_time, results)
    measure("validate", lambda: list(validator.iter_errors(values)), a.repeat, a.min_time, results)
    if a.values_yaml:
        with open(a.values_yaml, encoding="utf-8") as f:
            text = f.read()
        assert yaml.load(text, Loader=loader) == values, "values.yaml and values.json differ"
        measure("yaml_load", lambda: yaml.load(text, Loader=loader), a.repeat, a.min_time, results)
        measure("load+validate", lambda: list(validator.iter_errors(yaml.load(text, Loader=loader))),
                a.repeat, a.min_time, results)
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump({"python": sys.version.split()[0], "jsonschema": version("jsonschema"),
                       "pyyaml": yaml.__version__, "loader": loader.__name__, "results": results}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
