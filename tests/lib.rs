//! Shared fixtures of kudo's integration tests: where the repository, its examples and the
//! project's shared data (corpus, conformance cases, wire captures) are.

use std::path::PathBuf;

/// The repository root.
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .to_path_buf()
}

/// `examples/NAME` in the repository.
pub fn example(name: &str) -> PathBuf {
    repo().join("examples").join(name)
}

/// `tests/fixtures/NAME`.
pub fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(name)
}

/// The project's shared data: `$KUDO_SHARED_DIR`, else `shared/` beside the repository (as CI
/// lays it out). Tests that need it fail, never skip, when it is missing.
pub fn shared() -> PathBuf {
    let dir = std::env::var_os("KUDO_SHARED_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join("..").join("shared"));
    assert!(
        dir.join("corpus").is_dir(),
        "the shared data directory {} is missing (set KUDO_SHARED_DIR)",
        dir.display()
    );
    dir
}

/// The `kudo` binary, built from this workspace first (so `cargo test -p kudo-tests` alone, or a
/// fresh clone, never runs a stale or missing binary).
pub fn kudo_bin() -> PathBuf {
    build_binaries();
    target_bin("kudo")
}

/// Binary `bin` of the workspace (`kudo-webhook`, `kudo-manager`, ...), built first: the one
/// place the suites find the binaries of other packages (`CARGO_BIN_EXE_*` only knows the
/// binaries of this package).
pub fn workspace_bin(bin: &str) -> PathBuf {
    build_binaries();
    target_bin(bin)
}

/// Builds every binary of the workspace once, in one cargo invocation with the workspace's
/// feature set: shared dependencies are compiled once, not once per binary (`.ci/run` builds
/// them before the tests, so this finds them up to date).
fn build_binaries() {
    static BUILD: std::sync::Once = std::sync::Once::new();
    BUILD.call_once(|| {
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let status = std::process::Command::new(cargo)
            .args(["build", "--quiet", "--workspace", "--bins"])
            .current_dir(repo())
            .status()
            .expect("cargo runs");
        assert!(status.success(), "building the workspace's binaries failed");
    });
}

fn target_bin(bin: &str) -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join("target"));
    target
        .join("debug")
        .join(format!("{bin}{}", std::env::consts::EXE_SUFFIX))
}

/// The folders under `root` that hold `file` (`operator.yaml`, `params.yaml`), sorted; folders
/// below a match are not searched.
pub fn folders_with(root: &std::path::Path, file: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).expect("a readable directory") {
            let p = e.expect("a directory entry").path();
            if p.is_dir() {
                if p.join(file).is_file() {
                    out.push(p);
                } else {
                    stack.push(p);
                }
            }
        }
    }
    out.sort();
    out
}
