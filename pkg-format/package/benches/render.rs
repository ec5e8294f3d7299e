//! Rendering the whole corpus of KUDO operators with their Go templates.
//!
//! Run with `cargo bench -p kudo-pkg --bench render`. The 14 packages live in
//! `shared/corpus/kudo-operators-full` next to the work tree (or in `$KUDO_SHARED_DIR`).
//!
//! - `render_corpus_all_plans`: every plan of every package rendered with its defaults
//!   (`render::render_plan`: prepare the package, parse each template it renders, build KUDO's
//!   context, execute, parse the output as YAML objects): 29 plans, 115 template renders.
//!   Divide by 115 for the time per template.
//! - `render_corpus_all_plans_prepared`: the same through each package's `render::Prepared`,
//!   made once outside the loop (what a caller that keeps it, such as the manager's cache,
//!   pays): execute and read the output, nothing parsed.
//! - `render_cassandra_deploy`: the largest (21 templates, about 4,000 lines of output).
//! - `load_corpus`: `Package::load` of the 14 packages (reading, YAML, v1beta1 -> v1beta2).
// criterion's macros define undocumented public functions.
#![allow(missing_docs)]

use std::hint::black_box;
use std::path::{Path, PathBuf};

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::Value;

use kudo_pkg::Package;
use kudo_pkg::render::{Prepared, RenderOptions, render_plan};

fn corpus_dir() -> PathBuf {
    let shared = std::env::var_os("KUDO_SHARED_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared"));
    shared.join("corpus/kudo-operators-full")
}

fn packages() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(corpus_dir())
        .expect("the corpus of KUDO operators (set KUDO_SHARED_DIR)")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("operator.yaml").is_file())
        .collect();
    dirs.sort();
    dirs
}

/// Each package with its effective default values.
fn loaded() -> Vec<(Package, Value)> {
    packages()
        .iter()
        .map(|d| {
            let pkg = Package::load(d).expect("a corpus package loads");
            let version = pkg.policy_version().expect("a valid schema");
            let values = version.effective(&serde_json::json!({})).0.into_value();
            (pkg, values)
        })
        .collect()
}

/// Options for plan `plan`.
fn options(plan: &str) -> RenderOptions {
    RenderOptions {
        instance: "inst".into(),
        namespace: "ns".into(),
        plan: plan.into(),
        images: Default::default(),
    }
}

fn render_all(all: &[(Package, Value)]) -> usize {
    let mut n = 0;
    for (pkg, values) in all {
        for plan in pkg.operator().plans.keys() {
            n += render_plan(pkg, values, &options(plan))
                .expect("renders")
                .len();
        }
    }
    n
}

fn render_all_prepared(all: &[(Prepared<'_>, &Value)]) -> usize {
    let mut n = 0;
    for (prepared, values) in all {
        for plan in prepared.package().operator().plans.keys() {
            n += prepared
                .render_plan(values, &options(plan))
                .expect("renders")
                .len();
        }
    }
    n
}

fn benches(c: &mut Criterion) {
    let all = loaded();
    assert_eq!(
        render_all(&all),
        115,
        "the corpus changed: update the docs above"
    );
    c.bench_function("render_corpus_all_plans", |b| {
        b.iter(|| black_box(render_all(black_box(&all))))
    });
    let prepared: Vec<(Prepared<'_>, &Value)> =
        all.iter().map(|(p, v)| (Prepared::new(p), v)).collect();
    assert_eq!(render_all_prepared(&prepared), 115);
    c.bench_function("render_corpus_all_plans_prepared", |b| {
        b.iter(|| black_box(render_all_prepared(black_box(&prepared))))
    });
    let cassandra: Vec<(Package, Value)> = all
        .iter()
        .filter(|(p, _)| p.operator().name == "cassandra")
        .cloned()
        .collect();
    c.bench_function("render_cassandra_deploy", |b| {
        b.iter(|| {
            let (pkg, values) = &cassandra[0];
            black_box(
                render_plan(pkg, values, &options("deploy"))
                    .expect("renders")
                    .len(),
            )
        })
    });
    let dirs = packages();
    c.bench_function("load_corpus", |b| {
        b.iter(|| {
            for d in &dirs {
                black_box(Package::load(d).expect("loads"));
            }
        })
    });
}

criterion_group!(render, benches);
criterion_main!(render);
