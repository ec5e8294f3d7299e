//! The offline upgrade preflight (`kudo package verify NEW --against OLD`,
//! [`kudo_pkg::preflight::against`]) over the corpus of real KUDO operators: every consecutive
//! pair of versions of each operator (ordered as KUDO's repository orders them: appVersion, then
//! operatorVersion, both semver), and every version against itself.
//!
//! It prints the table docs/upgrade-safety.md records (pairs that pass, only warn, or
//! fail; findings per code) and every finding of every pair, for checking by hand. It asserts
//! only what must hold: every pair is checked without a panic, a version against itself finds
//! nothing, every finding has a code and a pointer.
//!
//! The corpus holds operator.yaml and params.yaml only (no templates), so no CRD is rendered:
//! the CRD side is covered by the unit tests and tests/verify_against.rs.

use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;

use kudo_pkg::Package;
use kudo_pkg::preflight::{Against, against};

/// A semver as KUDO's repository reads one, loosely: a leading `v`, missing MINOR or PATCH as 0,
/// a pre-release sorting before its release. `None` when it is not one.
fn semver(text: Option<&str>) -> Option<(u64, u64, u64, bool, String)> {
    let t = text?.trim().trim_start_matches('v');
    let (core, pre) = match t.split_once('-') {
        Some((c, p)) => (c, p.to_string()),
        None => (t, String::new()),
    };
    let mut parts = core.split('.').map(|p| p.parse::<u64>());
    let major = parts.next()?.ok()?;
    let minor = parts.next().unwrap_or(Ok(0)).ok()?;
    let patch = parts.next().unwrap_or(Ok(0)).ok()?;
    Some((major, minor, patch, pre.is_empty(), pre))
}

type Key = (
    Option<(u64, u64, u64, bool, String)>,
    Option<(u64, u64, u64, bool, String)>,
);

fn key(pkg: &Package) -> Key {
    (
        semver(pkg.operator().app_version.as_deref()),
        semver(Some(&pkg.version())),
    )
}

/// Every finding of `a`: (code, unsafe, pointer, message).
fn findings(a: &Against) -> Vec<(String, bool, String, String)> {
    a.diagnostics()
        .iter()
        .map(|d| {
            (
                d.code.as_str().to_string(),
                d.is_error(),
                d.pointer.as_str().to_string(),
                d.message.clone(),
            )
        })
        .collect()
}

#[test]
fn every_consecutive_corpus_version_pair_is_checked_offline() {
    let Some(shared) = kudo_testkit::shared() else {
        return;
    };
    let root = shared.join("corpus/kudo-operators");
    let mut operators: BTreeMap<String, Vec<(Key, PathBuf, Package)>> = BTreeMap::new();
    for dir in kudo_testkit::folders_with(&root, "operator.yaml") {
        let rel = dir.strip_prefix(&root).unwrap();
        let op = rel.iter().next().unwrap().to_string_lossy().to_string();
        if op.starts_with('_') {
            continue; // the KEP-33 draft, no version of a published operator
        }
        let pkg = Package::load(&dir).unwrap_or_else(|e| panic!("{}: {e}", rel.display()));
        operators
            .entry(op)
            .or_default()
            .push((key(&pkg), rel.to_path_buf(), pkg));
    }

    let mut problems = Vec::new();
    let (mut versions, mut pairs, mut pass, mut warn, mut fail, mut refused) = (0, 0, 0, 0, 0, 0);
    let mut per_code: BTreeMap<(String, &str), usize> = BTreeMap::new();
    let mut report = String::new();
    for list in operators.values_mut() {
        list.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
        for (_, rel, pkg) in list.iter() {
            versions += 1;
            match catch_unwind(AssertUnwindSafe(|| against(pkg, pkg))) {
                Ok(Ok(a)) if a.is_empty() => {}
                Ok(Ok(a)) => problems.push(format!(
                    "{}: against itself: {:?}",
                    rel.display(),
                    findings(&a)
                )),
                Ok(Err(e)) => problems.push(format!("{}: against itself: {e:?}", rel.display())),
                Err(_) => problems.push(format!("{}: against itself: panicked", rel.display())),
            }
        }
        for w in list.windows(2) {
            let ((_, old_rel, old), (_, new_rel, new)) = (&w[0], &w[1]);
            pairs += 1;
            let pair = format!("{} -> {}", old_rel.display(), new_rel.display());
            let a = match catch_unwind(AssertUnwindSafe(|| against(new, old))) {
                Ok(Ok(a)) => a,
                Ok(Err(e)) => {
                    refused += 1;
                    report.push_str(&format!("REFUSED {pair}: {}\n", e[0]));
                    continue;
                }
                Err(_) => {
                    problems.push(format!("{pair}: panicked"));
                    continue;
                }
            };
            let found = findings(&a);
            let verdict = if a.is_unsafe() {
                fail += 1;
                "FAIL"
            } else if !a.is_empty() {
                warn += 1;
                "WARN"
            } else {
                pass += 1;
                "PASS"
            };
            report.push_str(&format!("{verdict} {pair}: {}\n", a.summary()));
            for (code, is_unsafe, pointer, message) in found {
                let severity = if is_unsafe { "unsafe" } else { "note" };
                report.push_str(&format!("    {severity} {code} {pointer}: {message}\n"));
                if code.is_empty() {
                    problems.push(format!("{pair}: a finding without a code: {message}"));
                }
                if !(pointer.is_empty() || pointer.starts_with('/')) {
                    problems.push(format!("{pair}: `{pointer}` is not a JSON pointer"));
                }
                if pointer.is_empty() && !code.contains("version") && code != "scope-changed" {
                    problems.push(format!("{pair}: {code} without a pointer: {message}"));
                }
                *per_code.entry((code, severity)).or_default() += 1;
            }
        }
    }

    println!("{report}");
    println!(
        "| operators | versions | pairs | pass | warn | fail | refused |\n|---|---|---|---|---|---|---|\n| {} | {versions} | {pairs} | {pass} | {warn} | {fail} | {refused} |\n",
        operators.len()
    );
    println!("| code | kind | findings |\n|---|---|---|");
    for ((code, severity), n) in &per_code {
        println!("| `{code}` | {severity} | {n} |");
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert_eq!(pass + warn + fail + refused, pairs);
    assert!(pairs > 50, "{pairs} pairs: the corpus is read");
}
