//! The docs name what the code has: every `kudo_*::path` written in `docs/`, the README,
//! BENCHMARKS.md and the crates' doc comments resolves to a module or an item of the crate, every
//! repository path written in backticks (`operator/manager/src/tenant.rs`) exists, and every
//! relative link of a Markdown file points at a file. A module renamed or moved without its docs
//! fails here.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use kudo_testkit::repo;

/// The source folder of each crate, by the name code uses for it.
const CRATES: &[(&str, &str)] = &[
    ("kudo_diag", "pkg-format/diag/src"),
    ("kudo_yaml", "pkg-format/yaml/src"),
    ("kudo_k8s", "pkg-format/k8s/src"),
    ("kudo_sprig", "pkg-format/sprig/src"),
    ("kudo_policy", "pkg-format/policy/src"),
    ("kudo_pkg", "pkg-format/package/src"),
    ("kudo_crd", "operator/crd/src"),
    ("kudo_cluster", "operator/cluster/src"),
    ("kudo_client", "cli/client/src"),
    ("kudo_source", "cli/source/src"),
    ("kudo_manager", "operator/manager/src"),
    ("kudo_webhook", "webhook/src"),
    ("kudo_cli", "cli/src"),
    ("kudo_testkit", "tests/testkit/src"),
];

/// The folders a path written in the docs may start with.
const TOP: &[&str] = &[
    "pkg-format/",
    "operator/",
    "webhook/",
    "cli/",
    "tests/",
    "examples/",
    "docs/",
    "deploy/",
    "fuzz/",
    "bench/",
    ".ci/",
];

/// The Markdown files and the Rust sources whose doc comments are read.
fn documents() -> Vec<PathBuf> {
    let root = repo();
    let mut out: Vec<PathBuf> = ["README.md", "BENCHMARKS.md", "examples/README.md"]
        .iter()
        .map(|f| root.join(f))
        .collect();
    out.extend(files(&root.join("docs"), "md"));
    for dir in [
        "pkg-format",
        "operator",
        "webhook/src",
        "cli/src",
        "tests/testkit/src",
    ] {
        out.extend(files(&root.join(dir), "rs"));
    }
    out
}

fn files(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display())) {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == ext) {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The prose of a document: a Markdown file whole, a Rust file's `//!` and `///` lines.
fn prose(file: &Path) -> String {
    let text = std::fs::read_to_string(file).unwrap();
    if file.extension().is_some_and(|x| x == "md") {
        return text;
    }
    text.lines()
        .map(str::trim_start)
        .filter_map(|l| l.strip_prefix("//!").or_else(|| l.strip_prefix("///")))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The spans written in backticks.
fn code_spans(text: &str) -> Vec<&str> {
    text.split('`').skip(1).step_by(2).collect()
}

/// The `kudo_x::a::b` paths in `span`.
fn kudo_paths(span: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = span;
    while let Some(at) = rest.find("kudo_") {
        let before = rest[..at].chars().last();
        let tail = &rest[at..];
        let end = tail
            .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
            .unwrap_or(tail.len());
        let path = tail[..end].trim_end_matches(':');
        if before.is_none_or(|c| !(c.is_alphanumeric() || c == '_')) && path.contains("::") {
            out.push(path.to_string());
        }
        rest = &tail[end.max(1)..];
    }
    out
}

/// Whether the module file `file` (or, for `mod.rs`/a folder, the files below it) defines or
/// re-exports `name`.
fn defines(file: &Path, name: &str) -> bool {
    let text = std::fs::read_to_string(file).unwrap_or_default();
    let kinds = [
        "fn",
        "struct",
        "enum",
        "const",
        "static",
        "type",
        "trait",
        "mod",
        "macro_rules!",
    ];
    let defined = text.lines().any(|l| {
        let l = l.trim_start();
        kinds.iter().any(|k| {
            l.split_whitespace()
                .skip_while(|w| w.starts_with("pub") || *w == "async" || *w == "unsafe")
                .collect::<Vec<_>>()
                .windows(2)
                .next()
                .is_some_and(|w| {
                    w[0] == *k
                        && w[1]
                            .trim_end_matches(|c: char| !(c.is_alphanumeric() || c == '_'))
                            .split(['<', '(', ':', ';', '{'])
                            .next()
                            == Some(name)
                })
        })
    });
    // A variant, a field or a re-export (`pub use x::{Name, ...}`, `Name,` in an enum).
    defined
        || text.lines().any(|l| {
            let l = l.trim_start();
            (l.starts_with("pub use") && l.contains(name))
                || l.starts_with(&format!("{name},"))
                || l.starts_with(&format!("{name} {{"))
                || l.starts_with(&format!("{name}("))
                || l.starts_with(&format!("pub {name}:"))
        })
}

/// Resolves `kudo_x::a::b::c`: modules as files or folders, then items defined in the last
/// module reached (a type's method or variant in the same file).
fn resolves(path: &str) -> Result<(), String> {
    let mut segs = path.split("::");
    let krate = segs.next().unwrap();
    let Some((_, src)) = CRATES.iter().find(|(k, _)| *k == krate) else {
        return Err(format!("no crate {krate}"));
    };
    let mut dir = repo().join(src);
    let mut module = dir.join("lib.rs");
    let mut in_module = true;
    for seg in segs {
        if in_module {
            let file = dir.join(format!("{seg}.rs"));
            let folder = dir.join(seg);
            if file.is_file() || folder.join("mod.rs").is_file() {
                module = if file.is_file() {
                    file
                } else {
                    folder.join("mod.rs")
                };
                dir = folder;
                continue;
            }
            in_module = false;
        }
        let mut here = vec![module.clone()];
        if dir.is_dir() {
            here.extend(files(&dir, "rs"));
        }
        if !here.iter().any(|f| defines(f, seg)) {
            return Err(format!("`{seg}` is not in {}", module.display()));
        }
    }
    Ok(())
}

#[test]
fn every_kudo_path_in_the_docs_resolves() {
    let mut wrong = BTreeSet::new();
    let mut checked = 0;
    for file in documents() {
        let text = prose(&file);
        for span in code_spans(&text) {
            for path in kudo_paths(span) {
                checked += 1;
                if let Err(why) = resolves(&path) {
                    let rel = file.strip_prefix(repo()).unwrap_or(&file).display();
                    wrong.insert(format!("{rel}: `{path}`: {why}"));
                }
            }
        }
    }
    assert!(
        checked > 50,
        "only {checked} paths found: the scan is broken"
    );
    assert!(
        wrong.is_empty(),
        "{} paths in the docs name nothing:\n{}",
        wrong.len(),
        wrong.into_iter().collect::<Vec<_>>().join("\n")
    );
}

#[test]
fn every_repository_path_in_the_docs_exists() {
    let mut wrong = BTreeSet::new();
    for file in documents() {
        let text = prose(&file);
        for span in code_spans(&text) {
            let path = span.split([':', ' ', '#']).next().unwrap_or("");
            let looks_like_one = TOP.iter().any(|t| path.starts_with(t))
                && path.rsplit('/').next().is_some_and(|f| {
                    [".rs", ".md", ".yaml", ".toml", ".sh"]
                        .iter()
                        .any(|x| f.ends_with(x))
                })
                && !path.contains(['*', '<', '{', '$']);
            if looks_like_one && !repo().join(path).exists() {
                let rel = file.strip_prefix(repo()).unwrap_or(&file).display();
                wrong.insert(format!("{rel}: `{path}`"));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "{} paths in the docs do not exist:\n{}",
        wrong.len(),
        wrong.into_iter().collect::<Vec<_>>().join("\n")
    );
}

#[test]
fn every_relative_link_in_markdown_points_at_a_file() {
    let mut wrong = BTreeSet::new();
    for file in documents()
        .into_iter()
        .filter(|f| f.extension().is_some_and(|x| x == "md"))
    {
        let text = std::fs::read_to_string(&file).unwrap();
        for (i, _) in text.match_indices("](") {
            let target = &text[i + 2..];
            let Some(end) = target.find(')') else {
                continue;
            };
            let target = target[..end].split('#').next().unwrap_or("");
            if target.is_empty() || target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let at = file.parent().unwrap().join(target);
            if !at.exists() {
                let rel = file.strip_prefix(repo()).unwrap_or(&file).display();
                wrong.insert(format!("{rel}: ({target})"));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "{} links point at nothing:\n{}",
        wrong.len(),
        wrong.into_iter().collect::<Vec<_>>().join("\n")
    );
}

#[test]
fn no_doc_names_the_crates_that_are_gone() {
    let mut wrong = BTreeSet::new();
    for file in documents() {
        let text = prose(&file);
        for gone in ["kudo-operator", "kudo_operator::", "ARCHITECTURE.md"] {
            // `kudo-operators` (the corpus) is not the crate.
            let named = text
                .match_indices(gone)
                .any(|(i, _)| !text[i + gone.len()..].starts_with('s'));
            if named && !file.ends_with("docs/crates.md") {
                let rel = file.strip_prefix(repo()).unwrap_or(&file).display();
                wrong.insert(format!("{rel}: {gone}"));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "docs name what is gone:\n{}",
        wrong.into_iter().collect::<Vec<_>>().join("\n")
    );
}

/// docs/architecture.md's table of crates lists every crate of the workspace, in the folder it
/// is in, and only those.
#[test]
fn the_architecture_lists_every_crate_where_it_is() {
    let root = repo();
    let page = std::fs::read_to_string(root.join("docs/architecture.md")).unwrap();
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    let members = manifest
        .lines()
        .find(|l| l.starts_with("members"))
        .expect("a members line");
    let mut wrong = Vec::new();
    for folder in members.split('"').skip(1).step_by(2) {
        let cargo = std::fs::read_to_string(root.join(folder).join("Cargo.toml")).unwrap();
        let name = cargo
            .lines()
            .find_map(|l| l.strip_prefix("name = \""))
            .and_then(|l| l.strip_suffix('"'))
            .expect("a package name");
        let row = format!("| `{name}` | `{folder}/` |");
        let line = format!("{name} ({folder}/)");
        if !page.contains(&row) && !page.contains(&line) {
            wrong.push(format!("{name} in {folder}/"));
        }
    }
    for row in page.lines().filter(|l| l.starts_with("| `kudo")) {
        let folder = row.split('`').nth(3).unwrap_or_default();
        if !members.contains(&format!("\"{}\"", folder.trim_end_matches('/'))) {
            wrong.push(format!("a row for {folder}, not a workspace member"));
        }
    }
    assert!(wrong.is_empty(), "docs/architecture.md's crates: {wrong:?}");
}

/// docs/architecture.md's walk of an update names every Rust file it crosses in one table:
/// each row's file holds the function it names, the row's caller really calls it, the walk's
/// text names no file the table lacks, and the walk crosses at most 20 files.
#[test]
fn the_walk_of_an_update_names_every_file_it_crosses_and_each_call() {
    let root = repo();
    let page = std::fs::read_to_string(root.join("docs/architecture.md")).unwrap();
    let walk = section(&page, "## The life of an update", "### Why the policy runs");
    let table = section(walk, "### The files the walk crosses", "\u{0}");
    let rows: Vec<Vec<&str>> = table
        .lines()
        .filter(|l| l.starts_with("| `"))
        .map(|l| l.split('|').map(str::trim).collect())
        .collect();
    let code = |s: &str| s.trim().trim_matches('`').to_string();
    let mut wrong = Vec::new();
    let mut files = BTreeSet::new();
    for row in &rows {
        let (file, holds, caller) = (code(row[1]), code(row[2]), row[3]);
        files.insert(file.clone());
        let Ok(text) = std::fs::read_to_string(root.join(&file)) else {
            wrong.push(format!("{file} does not exist"));
            continue;
        };
        let name = holds.trim_start_matches("fn ");
        if ![format!("fn {name}("), format!("fn {name}<")]
            .iter()
            .any(|f| text.contains(f.as_str()))
        {
            wrong.push(format!("{file} does not hold `{holds}`"));
        }
        if let Some((from, call)) = caller.split_once(": ") {
            let (from, call) = (code(from), code(call));
            match std::fs::read_to_string(root.join(&from)) {
                Ok(t) if t.contains(call.as_str()) => {}
                _ => wrong.push(format!(
                    "{from} does not call `{call}`, as the row of {file} says"
                )),
            }
        }
    }
    // Every Rust file the walk's steps name is a row of the table.
    let steps = section(walk, "## The life", "### The files the walk crosses");
    for named in steps
        .split('`')
        .filter(|w| w.ends_with(".rs") && !w.contains(' '))
    {
        if !files.contains(named) {
            wrong.push(format!("the walk names {named}, which its table lacks"));
        }
    }
    if files.len() > 20 {
        wrong.push(format!(
            "the walk crosses {} files (at most 20)",
            files.len()
        ));
    }
    if files.len() < 10 {
        wrong.push(format!(
            "the table has {} rows: it was not read",
            files.len()
        ));
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// The text of `page` from `from` to `to` (or to its end).
fn section<'a>(page: &'a str, from: &str, to: &str) -> &'a str {
    let start = page.find(from).unwrap_or_else(|| panic!("no {from}"));
    let rest = &page[start..];
    rest.find(to).map_or(rest, |end| &rest[..end])
}
