//! The `/convert` handler on a 1000-object ConversionReview (the three captured objects of
//! `tests/fixtures/wire/`, repeated with distinct names), against the floor: serde_json parsing the same
//! body and serializing it back. Criterion gives the medians; the percentile pass after it
//! prints p50/p99 of single calls and objects/s.
// criterion's macros define undocumented public functions.
#![allow(missing_docs)]

use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use kudo_crd::convert::NoTypes;
use serde_json::Value;

use kudo_testkit::wire::list_review as body;

fn handler(b: &[u8]) -> Vec<u8> {
    kudo_webhook::convert_review(b, &NoTypes).0.body
}

fn floor(b: &[u8]) -> Vec<u8> {
    let v: Value = serde_json::from_slice(b).unwrap();
    serde_json::to_vec(&v).unwrap()
}

fn percentiles(name: &str, f: impl Fn() -> Vec<u8>) -> (Duration, Duration) {
    let mut times: Vec<Duration> = (0..300)
        .map(|_| {
            let t = Instant::now();
            std::hint::black_box(f());
            t.elapsed()
        })
        .collect();
    times.sort();
    let p50 = times[times.len() / 2];
    let p99 = times[times.len() * 99 / 100];
    println!(
        "{name}: p50 {:.2} ms, p99 {:.2} ms, {:.0} objects/s (at p50)",
        p50.as_secs_f64() * 1e3,
        p99.as_secs_f64() * 1e3,
        1000.0 / p50.as_secs_f64()
    );
    (p50, p99)
}

fn bench(c: &mut Criterion) {
    let up = body("kudo.dev/v1beta2");
    let down = body("kudo.dev/v1beta1");
    let mut g = c.benchmark_group("convert_1000");
    g.bench_function("handler_to_v1beta2", |b| b.iter(|| handler(&up)));
    g.bench_function("handler_to_v1beta1", |b| b.iter(|| handler(&down)));
    g.bench_function("floor_parse_serialize", |b| b.iter(|| floor(&up)));
    g.finish();
    let (h50, h99) = percentiles("handler_to_v1beta2", || handler(&up));
    percentiles("handler_to_v1beta1", || handler(&down));
    let (f50, f99) = percentiles("floor_parse_serialize", || floor(&up));
    println!(
        "handler / floor: p50 {:.2}x, p99 {:.2}x; body {} bytes",
        h50.as_secs_f64() / f50.as_secs_f64(),
        h99.as_secs_f64() / f99.as_secs_f64(),
        up.len()
    );
}

criterion_group!(benches, bench);
criterion_main!(benches);
