//! kudo's test support, shared by the integration tests (`tests/`) and the crates' own test
//! suites and benchmarks (which cannot depend on `kudo-tests`, since it depends on them):
//!
//! - where things are: the repository, its examples, its fixtures (`tests/fixtures/`), the
//!   data that is not the project's ([`shared`]: the corpus of real KUDO packages);
//! - the binaries under test, built first ([`kudo_bin`], [`workspace_bin`]), and [`kudo`], the
//!   `kudo` command in an isolated environment;
//! - [`mock_api`]: a mocked Kubernetes API server behind a `kube::Client`, or on loopback for
//!   the `kudo` binary;
//! - [`wire`]: the webhook reviews kube-apiserver sent, captured by the end-to-end suite;
//! - real servers on loopback: [`serve_dir`] (HTTP, for repositories) and [`TestRegistry`]
//!   (an OCI registry).
//!
//! It depends on no kudo crate, so any of them may use it as a dev-dependency.

use std::path::{Path, PathBuf};

pub mod mock_api;
pub mod tls;
pub mod wire;

/// The repository root.
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .expect("tests/testkit is two levels below the repository")
        .to_path_buf()
}

/// `examples/NAME` in the repository.
pub fn example(name: &str) -> PathBuf {
    repo().join("examples").join(name)
}

/// `tests/fixtures/NAME`.
pub fn fixture(name: &str) -> PathBuf {
    repo().join("tests/fixtures").join(name)
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
/// let Some(shared) = kudo_testkit::shared() else { return };
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
        let mut build = std::process::Command::new(cargo);
        build
            .args(["build", "--quiet", "--workspace", "--bins"])
            .current_dir(repo());
        // What cargo sets for this test process (CARGO_PKG_NAME=kudo-tests, CARGO_MANIFEST_DIR,
        // ...) must not reach the inner cargo: build scripts that watch those variables (ring's,
        // through `cc`) would run again, and ring and everything above it be compiled again,
        // here and once more by the next outer `cargo test`.
        for (key, _) in std::env::vars_os() {
            let key = key.to_string_lossy();
            let set_by_cargo = [
                "CARGO_PKG_",
                "CARGO_BIN_",
                "CARGO_CRATE_",
                "CARGO_MANIFEST_",
            ]
            .iter()
            .any(|p| key.starts_with(p))
                || matches!(
                    key.as_ref(),
                    "CARGO_PRIMARY_PACKAGE" | "CARGO_TARGET_TMPDIR" | "OUT_DIR"
                );
            if set_by_cargo {
                build.env_remove(key.as_ref());
            }
        }
        let status = build.status().expect("cargo runs");
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

/// The `kudo` binary ([`kudo_bin`]) as a command in an isolated environment ([`kudo_in`]) of
/// this test process: a test that wants its own state (a repository cache, registry
/// credentials) calls [`kudo_in`] with a directory of its own.
pub fn kudo() -> assert_cmd::Command {
    kudo_in(isolated_home())
}

/// The `kudo` binary as a command with nothing of the machine's own configuration: run from
/// the repository root, without colours, no kubeconfig (`KUBECONFIG` names a file that does not
/// exist; a test that wants a cluster passes `--kubeconfig`), and kudo's configuration, caches
/// and registry credentials in `home` (`HOME`, `KUDO_HOME=home/kudo`,
/// `XDG_CONFIG_HOME=home/config`, `XDG_CACHE_HOME=home/cache`, `DOCKER_CONFIG=home/docker`).
pub fn kudo_in(home: &Path) -> assert_cmd::Command {
    let mut c = assert_cmd::Command::new(kudo_bin());
    c.current_dir(repo())
        .env("NO_COLOR", "1")
        .env("KUBECONFIG", "/nonexistent/kubeconfig")
        .env("HOME", home)
        .env("KUDO_HOME", home.join("kudo"))
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_CACHE_HOME", home.join("cache"))
        .env("DOCKER_CONFIG", home.join("docker"))
        .env_remove("KUDO_REGISTRY_CA_FILE");
    c
}

/// The home of [`kudo`]'s isolated environment: one temporary directory per test process,
/// removed never (it is small, and a failing test's state stays to be read).
fn isolated_home() -> &'static Path {
    static HOME: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    HOME.get_or_init(|| {
        tempfile::Builder::new()
            .prefix("kudo-testkit-home-")
            .tempdir()
            .expect("a temporary directory")
            .keep()
    })
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

/// A real HTTP server on loopback (axum, on its own thread and runtime) until dropped: a folder
/// for repositories ([`serve_dir`]), or the mocked API server ([`mock_api::serve`]).
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
    serve_app(axum::Router::new().fallback_service(tower_http::services::ServeDir::new(dir)))
}

/// Serves `app` on a loopback port, on its own thread and runtime, until the result is dropped.
fn serve_app(app: axum::Router) -> Served {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    listener.set_nonblocking(true).expect("non-blocking");
    let url = format!("http://{}", listener.local_addr().expect("its address"));
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let thread = std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).expect("tokio listener");
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

// =============================================================================================
// An OCI registry (tests/tests/offline/oci.rs, the `oci` module of kudo-cli): Debian's `docker-registry`, the
// CNCF distribution server, on a free loopback port.

/// How [`TestRegistry::start`] configures the registry.
#[derive(Debug, Default, Clone)]
pub struct RegistryOptions {
    /// An htpasswd file's text (bcrypt hashes): the registry then asks for Basic credentials.
    pub htpasswd: Option<String>,
    /// A PEM certificate and key: the registry then speaks HTTPS only.
    pub tls: Option<(String, String)>,
}

impl RegistryOptions {
    /// A registry that asks for Basic credentials: `user` with `password` (its htpasswd line,
    /// bcrypt at the lowest cost, as a test needs no strength).
    pub fn with_user(user: &str, password: &str) -> RegistryOptions {
        let hash = bcrypt::hash(password, 4).expect("bcrypt hashes any password");
        RegistryOptions {
            htpasswd: Some(format!("{user}:{hash}\n")),
            tls: None,
        }
    }
}

/// A `docker-registry serve` on `127.0.0.1:PORT`, its storage and configuration in a temporary
/// directory; killed when dropped.
pub struct TestRegistry {
    child: std::process::Child,
    host: String,
    dir: tempfile::TempDir,
}

impl TestRegistry {
    /// Starts a registry and waits until it answers (`/v2/` over plain HTTP, a TCP connection
    /// with TLS). `None` when `docker-registry` is not installed: the calling test then says it
    /// is skipped and returns; in CI that fails it.
    pub fn start(options: RegistryOptions) -> Option<TestRegistry> {
        let Some(bin) = registry_bin() else {
            let test = std::thread::current()
                .name()
                .unwrap_or("a test")
                .to_string();
            let why = format!(
                "{test}: skipped: docker-registry (Debian's package docker-registry, the CNCF \
                 distribution server) is not installed"
            );
            assert!(!in_ci(), "{why} (CI is set, so this fails)");
            use std::io::Write as _;
            let _ = writeln!(std::io::stderr(), "{why}");
            return None;
        };
        // A port taken between finding it free and the registry binding it: try another.
        let mut last_log = String::new();
        for _ in 0..5 {
            let dir = tempfile::tempdir().expect("a temporary directory");
            let port = std::net::TcpListener::bind("127.0.0.1:0")
                .and_then(|l| l.local_addr())
                .expect("a free loopback port")
                .port();
            let host = format!("127.0.0.1:{port}");
            let config = registry_config(dir.path(), &host, &options);
            std::fs::write(dir.path().join("config.yml"), config).expect("the registry's config");
            let log = std::fs::File::create(dir.path().join("registry.log")).expect("a log file");
            let child = std::process::Command::new(&bin)
                .arg("serve")
                .arg(dir.path().join("config.yml"))
                .stdin(std::process::Stdio::null())
                .stdout(log.try_clone().expect("the log file"))
                .stderr(log)
                .spawn()
                .expect("docker-registry starts");
            let mut registry = TestRegistry { child, host, dir };
            if registry.wait_ready(options.tls.is_some()) {
                return Some(registry);
            }
            last_log = registry.log();
        }
        panic!("docker-registry did not start; its log:\n{last_log}");
    }

    /// `127.0.0.1:PORT`.
    pub fn host(&self) -> &str {
        &self.host
    }

    /// `oci://127.0.0.1:PORT/PATH`.
    pub fn oci(&self, path: &str) -> String {
        format!("oci://{}/{path}", self.host)
    }

    /// The registry's storage (`docker/registry/v2/...` below it).
    pub fn storage(&self) -> PathBuf {
        self.dir.path().join("storage")
    }

    /// The file of a blob in the storage, by its `sha256:HEX` digest.
    pub fn blob_file(&self, digest: &str) -> PathBuf {
        let hex = digest.trim_start_matches("sha256:");
        self.storage()
            .join("docker/registry/v2/blobs/sha256")
            .join(&hex[..2])
            .join(hex)
            .join("data")
    }

    /// What the registry logged.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("registry.log")).unwrap_or_default()
    }

    /// A plain-HTTP GET of `path` (`/v2/...`), anonymous: the status code and the body. For a
    /// registry without TLS.
    pub fn get(&self, path: &str) -> std::io::Result<(u16, String)> {
        http_get(&self.host, path)
    }

    fn wait_ready(&mut self, tls: bool) -> bool {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
        while std::time::Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return false; // exited: its log says why
            }
            let ready = if tls {
                std::net::TcpStream::connect(&self.host).is_ok()
            } else {
                matches!(self.get("/v2/"), Ok((200 | 401, _)))
            };
            if ready {
                return true;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        false
    }
}

impl Drop for TestRegistry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `docker-registry` on `PATH`, or Debian's `/usr/bin/docker-registry`.
fn registry_bin() -> Option<PathBuf> {
    let on_path = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .map(|d| d.join("docker-registry"));
    on_path
        .chain([PathBuf::from("/usr/bin/docker-registry")])
        .find(|p| p.is_file())
}

/// The registry's configuration: filesystem storage in `dir`, deletes allowed, no access log,
/// htpasswd and TLS when asked.
fn registry_config(dir: &Path, host: &str, options: &RegistryOptions) -> String {
    let mut config = format!(
        "version: 0.1\nlog:\n  level: warn\n  accesslog:\n    disabled: true\nstorage:\n  \
         filesystem:\n    rootdirectory: {}\n  delete:\n    enabled: true\nhttp:\n  addr: {host}\n  \
         secret: kudo-tests\n",
        dir.join("storage").display()
    );
    if let Some((cert, key)) = &options.tls {
        std::fs::write(dir.join("cert.pem"), cert).expect("the certificate");
        std::fs::write(dir.join("key.pem"), key).expect("the key");
        config.push_str(&format!(
            "  tls:\n    certificate: {}\n    key: {}\n",
            dir.join("cert.pem").display(),
            dir.join("key.pem").display()
        ));
    }
    if let Some(htpasswd) = &options.htpasswd {
        std::fs::write(dir.join("htpasswd"), htpasswd).expect("the htpasswd file");
        config.push_str(&format!(
            "auth:\n  htpasswd:\n    realm: kudo-tests\n    path: {}\n",
            dir.join("htpasswd").display()
        ));
    }
    config
}

/// What [`http_get`] accepts: JSON, and OCI manifests (a registry answers 404 for a manifest
/// of a type the client does not accept).
const ACCEPT: &str = "application/vnd.oci.image.manifest.v1+json, application/json";

/// A plain-HTTP/1.0 GET (the server closes the connection after the answer).
fn http_get(host: &str, path: &str) -> std::io::Result<(u16, String)> {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(host)?;
    stream.set_read_timeout(Some(std::time::Duration::from_secs(5)))?;
    write!(
        stream,
        "GET {path} HTTP/1.0\r\nHost: {host}\r\nAccept: {ACCEPT}\r\n\r\n"
    )?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer)?;
    let status = answer
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| std::io::Error::other(format!("not an HTTP answer: {answer:?}")))?;
    let body = answer
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    Ok((status, body))
}
