//! Benchmarks of the parameters engine on the largest real KUDO package of the corpus.
//!
//! Run with `cargo bench -p kudo-pkg --bench params` (or `bash bench/run.sh`, which also compares
//! with Python's `jsonschema`). The corpus lives in `shared/corpus/kudo-operators` next to the
//! work tree (or in `$KUDO_SHARED_DIR`); the package with the largest `params.yaml` (and an
//! `operator.yaml`) is chosen.
//!
//! - `load_convert_largest`: `Package::load` + `Package::schema` (v1beta1 -> v1beta2 conversion).
//! - `params_10p_2P_validate`: `values::effective` with 10 `-p` overrides and 2 `-P` files
//!   (both parsed once, outside the timing, as the CLI parses them where it reads its arguments), then `Validator::validate` with a pre-built validator.
//! - `validate_only`: `Validator::validate` of those effective values.
//! - `compile_schema`: `Validator::new` (metaschema check + compilation).
//! - `deprecations_walk`: `preflight::deprecations`, the walk of the schema that every admission
//!   ran before issue 49; now once per Version.
//! - `deprecated_check`: `preflight::deprecated` with the walk done: what an admission runs now.
//!
//! When `KUDO_BENCH_INPUTS` names a directory, the inputs are written there before measuring
//! (`package.txt`, `overrides.txt` one `-p` argument a line, `p1.yaml`, `p2.yaml`), so that
//! `bench/run.sh` can feed the very same inputs to the `kudo` CLI and to Python.
// criterion's macros define undocumented public functions.
#![allow(missing_docs)]

use std::hint::black_box;
use std::path::{Path, PathBuf};

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::Value;

use kudo_pkg::Package;
use kudo_policy::values::{self, Inputs};
use kudo_policy::{ParamSchema, Validator};
use kudo_yaml::document::Document;

/// `$KUDO_SHARED_DIR/corpus/kudo-operators`, else `shared/` beside the repository.
fn corpus_dir() -> PathBuf {
    let shared = std::env::var_os("KUDO_SHARED_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared"));
    shared.join("corpus/kudo-operators")
}

/// The package directory (holding an `operator.yaml`) whose `params.yaml` is the largest.
fn largest_package() -> PathBuf {
    fn walk(dir: &Path, best: &mut Option<(u64, PathBuf)>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        let mut entries: Vec<_> = entries.flatten().map(|e| e.path()).collect();
        entries.sort(); // deterministic choice among equal sizes
        for p in entries {
            if p.is_dir() {
                walk(&p, best);
            } else if p.file_name().is_some_and(|n| n == "params.yaml") {
                let dir = p.parent().unwrap();
                if !dir.join("operator.yaml").is_file() {
                    continue;
                }
                let size = p.metadata().map(|m| m.len()).unwrap_or(0);
                if best.as_ref().is_none_or(|(s, _)| size > *s) {
                    *best = Some((size, dir.to_path_buf()));
                }
            }
        }
    }
    let root = corpus_dir();
    let mut best = None;
    walk(&root, &mut best);
    let (_, dir) =
        best.unwrap_or_else(|| panic!("no package with params.yaml under {}", root.display()));
    dir.canonicalize().unwrap_or(dir)
}

fn prop_type(node: &Value) -> &str {
    match node.get("type") {
        Some(Value::String(t)) => t,
        _ => "string",
    }
}

/// A value text for `-p NAME=TEXT`, valid for the parameter's converted type. `preferred` is a
/// realistic value for the parameter (used when it fits the type).
fn override_text(node: &Value, preferred: Option<&str>, seed: usize) -> String {
    let ty = prop_type(node);
    let fits = |t: &str| match ty {
        "integer" => t.parse::<i64>().is_ok(),
        "number" => t.parse::<f64>().is_ok(),
        "boolean" => t == "true" || t == "false",
        "string" => true,
        _ => false,
    };
    if let Some(p) = preferred.filter(|p| fits(p)) {
        return p.to_string();
    }
    match ty {
        "integer" => (seed + 2).to_string(),
        "number" => format!("{}.5", seed + 1),
        "boolean" => if seed.is_multiple_of(2) {
            "true"
        } else {
            "false"
        }
        .into(),
        "array" | "object" => node
            .get("default")
            .map(Value::to_string)
            .unwrap_or_else(|| "null".into()),
        _ => format!("bench-{seed}"),
    }
}

/// A JSON value for a `-P` file, valid for the parameter's converted type.
fn file_value(node: &Value, seed: usize) -> Value {
    match prop_type(node) {
        "integer" => Value::from(seed as i64 + 2),
        "number" => Value::from(seed as f64 + 0.5),
        "boolean" => Value::Bool(seed.is_multiple_of(2)),
        "string" => match node.get("default") {
            Some(Value::String(s)) if !s.is_empty() => Value::String(s.clone()),
            _ => Value::String(format!("file-value-{seed}")),
        },
        _ => node.get("default").cloned().unwrap_or(Value::Null),
    }
}

/// Each line `NAME: <JSON scalar>` (a JSON scalar is a YAML flow scalar, so types stay exact).
fn yaml_text(entries: &[(String, Value)]) -> String {
    let mut s = String::from("# values file written by pkg-format/package/benches/params.rs\n");
    for (k, v) in entries {
        s.push_str(&format!("{k}: {v}\n"));
    }
    s
}

struct Fixture {
    package: PathBuf,
    schema: ParamSchema,
    overrides: Vec<String>,
    p1: String,
    p2: String,
    files: Vec<Document>,
}

/// Realistic overrides of the kafka package; other packages fall back to their first properties.
const PREFERRED: &[(&str, &str)] = &[
    ("BROKER_COUNT", "5"),
    ("BROKER_CPUS", "1000m"),
    ("BROKER_MEM", "4096Mi"),
    ("DISK_SIZE", "20Gi"),
    ("METRICS_ENABLED", "false"),
    (
        "ZOOKEEPER_URI",
        "zk-zookeeper-0.zk-hs:2181,zk-zookeeper-1.zk-hs:2181,zk-zookeeper-2.zk-hs:2181",
    ),
    ("NUM_PARTITIONS", "12"),
    ("LOG_RETENTION_HOURS", "72"),
    ("KERBEROS_ENABLED", "false"),
    ("MIN_INSYNC_REPLICAS", "2"),
];

fn fixture() -> Fixture {
    let package = largest_package();
    let pkg = Package::load(&package).expect("the largest corpus package loads");
    let schema = pkg.schema().clone();
    let root = schema.root();
    let props = root
        .get("properties")
        .and_then(Value::as_object)
        .expect("the converted schema has properties");
    assert!(
        props.len() >= 40,
        "expected a large package, got {} parameters",
        props.len()
    );

    // 10 `-p` overrides: the preferred names the package has, then the first other properties.
    let mut chosen: Vec<(String, Option<&str>)> = PREFERRED
        .iter()
        .filter(|(n, _)| props.contains_key(*n))
        .map(|(n, v)| (n.to_string(), Some(*v)))
        .collect();
    for name in props.keys() {
        if chosen.len() >= 10 {
            break;
        }
        if !chosen.iter().any(|(n, _)| n == name) {
            chosen.push((name.clone(), None));
        }
    }
    let overrides: Vec<String> = chosen
        .iter()
        .enumerate()
        .map(|(i, (n, pref))| format!("{n}={}", override_text(&props[n.as_str()], *pref, i)))
        .collect();

    // Two `-P` files on other parameters: the first pins 24 values, the second sets 8 of them
    // again and 8 more (so the second merge patch overwrites as well as adds).
    let rest: Vec<&String> = props
        .keys()
        .filter(|k| !chosen.iter().any(|(n, _)| n == *k))
        .collect();
    let entry =
        |i: usize, seed: usize| (rest[i].clone(), file_value(&props[rest[i].as_str()], seed));
    let f1: Vec<_> = (0..24.min(rest.len())).map(|i| entry(i, i)).collect();
    let f2: Vec<_> = (16..32.min(rest.len()))
        .map(|i| entry(i, i + 100))
        .collect();
    let (p1, p2) = (yaml_text(&f1), yaml_text(&f2));
    let files = vec![
        Document::parse(Path::new("p1.yaml"), &p1).expect("p1.yaml parses"),
        Document::parse(Path::new("p2.yaml"), &p2).expect("p2.yaml parses"),
    ];
    Fixture {
        package,
        schema,
        overrides,
        p1,
        p2,
        files,
    }
}

fn export(fx: &Fixture) {
    let Some(dir) = std::env::var_os("KUDO_BENCH_INPUTS") else {
        return;
    };
    let dir = PathBuf::from(dir);
    std::fs::create_dir_all(&dir).expect("create KUDO_BENCH_INPUTS");
    std::fs::write(
        dir.join("package.txt"),
        format!("{}\n", fx.package.display()),
    )
    .unwrap();
    std::fs::write(dir.join("overrides.txt"), fx.overrides.join("\n") + "\n").unwrap();
    std::fs::write(dir.join("p1.yaml"), &fx.p1).unwrap();
    std::fs::write(dir.join("p2.yaml"), &fx.p2).unwrap();
}

fn benches(c: &mut Criterion) {
    let fx = fixture();
    export(&fx);
    let validator = Validator::new(&fx.schema).expect("the converted schema compiles");
    // `-p` arguments are parsed where the command line is read (clap's value parser): once.
    let overrides = values::Override::parse_all(&fx.overrides).expect("well-formed -p arguments");
    let inputs = Inputs {
        current: None,
        files: &fx.files,
        overrides: &overrides,
    };

    // Once, outside the timing: the inputs are valid, so the benchmarks measure the success path.
    let (vals, problems) = values::effective(&fx.schema, &inputs);
    assert!(
        problems.is_empty(),
        "effective values had problems: {problems:?}"
    );
    let diags = validator.validate(&vals);
    assert!(
        diags.is_empty(),
        "validation failed: {:?}",
        diags.iter().map(|d| d.to_string()).collect::<Vec<_>>()
    );
    kudo_policy::validate::resolve(&fx.schema, &inputs).expect("resolve succeeds");
    eprintln!(
        "package {} ({} parameters, {} bytes of params.yaml); -p {}",
        fx.package.display(),
        fx.schema.root()["properties"]
            .as_object()
            .map_or(0, |m| m.len()),
        std::fs::metadata(fx.package.join("params.yaml")).map_or(0, |m| m.len()),
        fx.overrides.join(" -p "),
    );

    c.bench_function("load_convert_largest", |b| {
        b.iter(|| {
            let pkg = Package::load(black_box(&fx.package)).unwrap();
            black_box(pkg) // conversion happens in load
        })
    });
    c.bench_function("params_10p_2P_validate", |b| {
        b.iter(|| {
            let (v, problems) = values::effective(black_box(&fx.schema), black_box(&inputs));
            let diags = validator.validate(&v);
            black_box((v, problems, diags))
        })
    });
    c.bench_function("validate_only", |b| {
        b.iter(|| black_box(validator.validate(black_box(&vals))))
    });
    c.bench_function("compile_schema", |b| {
        b.iter(|| black_box(Validator::new(black_box(&fx.schema)).unwrap()))
    });
    use kudo_policy::preflight;
    c.bench_function("deprecations_walk", |b| {
        b.iter(|| black_box(preflight::deprecations(black_box(&fx.schema))))
    });
    let found = preflight::deprecations(&fx.schema);
    c.bench_function("deprecated_check", |b| {
        b.iter(|| black_box(preflight::deprecated(black_box(&found), None, &vals)))
    });
}

criterion_group!(params, benches);
criterion_main!(params);
