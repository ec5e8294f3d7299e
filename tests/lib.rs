//! Shared fixtures of kudo's integration tests: where the repository, its examples, its own
//! fixtures (`tests/fixtures/`) and the data that is not the project's (the corpus of real KUDO
//! packages, in [`shared`]) are, and the binaries under test.

use std::path::{Path, PathBuf};

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

/// Whether `CI` says this is a CI run (`true` or `1`), where a missing prerequisite fails a
/// test instead of skipping it.
pub fn in_ci() -> bool {
    ci(std::env::var_os("CI"))
}

fn ci(var: Option<std::ffi::OsString>) -> bool {
    var.is_some_and(|v| v == "true" || v == "1")
}

/// Where the data that is not the project's own lives (the corpus of real KUDO packages, the
/// spec's wire captures and conformance tables): `$KUDO_SHARED_DIR`, else `shared/` beside the
/// repository (as CI lays it out).
pub fn shared_dir() -> PathBuf {
    std::env::var_os("KUDO_SHARED_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join("..").join("shared"))
}

/// The shared data directory ([`shared_dir`]), or `None` when it is absent: the calling test
/// then says in one line that it is skipped and returns. In CI its absence fails the test.
///
/// ```ignore
/// let Some(shared) = kudo_tests::shared() else { return };
/// ```
pub fn shared() -> Option<PathBuf> {
    let dir = shared_dir();
    if dir.join("corpus").is_dir() {
        return Some(dir);
    }
    let test = std::thread::current()
        .name()
        .unwrap_or("a test")
        .to_string();
    let why = format!(
        "{test}: skipped: the shared data (the corpus of real KUDO packages) is not at {}; \
         set KUDO_SHARED_DIR",
        dir.display()
    );
    assert!(!in_ci(), "{why} (CI is set, so this fails)");
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr(), "{why}");
    None
}

/// Copies the directory `from` (a package, the examples) to `to`, recursively.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("a directory to copy into");
    for e in std::fs::read_dir(from).expect("a directory to copy") {
        let e = e.expect("a directory entry");
        let target = to.join(e.file_name());
        if e.path().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).expect("a file copied");
        }
    }
}

/// A copy of the package directory `src`, as `pkg/` in a temporary directory (kept while the
/// returned handle lives).
pub fn copy_package(src: &Path) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let to = dir.path().join("pkg");
    copy_dir(src, &to);
    (dir, to)
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

/// A folder served over HTTP on loopback (axum with tower-http's `ServeDir`, on its own
/// thread and runtime) until dropped: a real HTTP server for repositories.
pub struct Served {
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Served {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Serves `dir` (files as they are at each request) until the result is dropped.
pub fn serve_dir(dir: &Path) -> Served {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    listener.set_nonblocking(true).expect("non-blocking");
    let url = format!("http://{}", listener.local_addr().expect("its address"));
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let dir = dir.to_path_buf();
    let thread = std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).expect("tokio listener");
            let app =
                axum::Router::new().fallback_service(tower_http::services::ServeDir::new(dir));
            let _ = axum::serve(listener, app)
                .with_graceful_shutdown(async {
                    let _ = stopped.await;
                })
                .await;
        });
    });
    Served {
        url,
        stop: Some(stop),
        thread: Some(thread),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn ci_is_true_or_1() {
        assert!(super::ci(Some("true".into())) && super::ci(Some("1".into())));
        assert!(!super::ci(None) && !super::ci(Some("false".into())));
    }
}
