//! The end-to-end suite's harness, one for every scenario: the cluster's kubeconfig (or the
//! suite skipped), `kudo-webhook` and `kudo-manager` run on this machine ([`Daemons`]), one
//! identity's view of the cluster with its `kudo` and `kubectl` commands ([`Kube`]), a
//! scenario's namespace ([`Scenario`]), `kudo install`/`upgrade`/`update --wait` built up
//! ([`Change`]), and the waits for a plan, a step, a condition or anything ([`wait_until`]).
//! A scenario module starts with `use crate::harness::*;`: what it needs from std, kube and
//! serde_json comes with it.

pub(crate) use std::collections::BTreeSet;
pub(crate) use std::ffi::OsString;
pub(crate) use std::io::Write as _;
pub(crate) use std::net::{TcpListener, TcpStream};
pub(crate) use std::ops::Deref;
pub(crate) use std::path::{Path, PathBuf};
pub(crate) use std::process::{Child, Command, Stdio};
pub(crate) use std::sync::{Arc, Mutex, RwLock, RwLockReadGuard, RwLockWriteGuard, Weak};
pub(crate) use std::time::{Duration, Instant};

pub(crate) use kube::api::{Api, ApiResource, DeleteParams, DynamicObject, Patch, PatchParams};
pub(crate) use kube::core::GroupVersionKind;
pub(crate) use kudo_crd::convert::{self, NoTypes};
pub(crate) use kudo_testkit::{example, fixture, kudo_bin, repo, workspace_bin};
pub(crate) use serde_json::{Value, json};

/// The managers' `--drift-interval`.
pub(crate) const DRIFT_INTERVAL: &str = "5s";
/// The variable naming the cluster's kubeconfig.
pub(crate) const KUBECONFIG_VAR: &str = "KUDO_E2E_KUBECONFIG";
/// What a skipped test prints.
pub(crate) const SKIPPED: &str = "skipped: set KUDO_E2E_KUBECONFIG to a cluster's kubeconfig";
/// The address the API server reaches this machine at (default `127.0.0.1`; for kind, the
/// docker network's gateway, see `docs/e2e.md`).
pub(crate) const WEBHOOK_HOST_VAR: &str = "KUDO_E2E_WEBHOOK_HOST";
/// Longest wait for anything the cluster does (a plan, a deletion).
pub(crate) const TIMEOUT: Duration = Duration::from_secs(180);

// ---------------------------------------------------------------------------------------------
// Skipping

/// The kubeconfig the suite runs against, from the value of [`KUBECONFIG_VAR`]; `Err` with the
/// message to print when the suite is skipped.
pub(crate) fn kubeconfig_from(var: Option<OsString>) -> Result<PathBuf, &'static str> {
    match var {
        Some(v) if !v.is_empty() => Ok(PathBuf::from(v)),
        _ => Err(SKIPPED),
    }
}

/// Prints past the test harness's capture, so a skip is visible in `cargo test` output.
pub(crate) fn say(line: &str) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

#[test]
fn without_the_variable_the_suite_is_skipped_with_a_message_naming_it() {
    assert_eq!(kubeconfig_from(None), Err(SKIPPED));
    assert_eq!(kubeconfig_from(Some(OsString::new())), Err(SKIPPED));
    assert!(SKIPPED.contains(KUBECONFIG_VAR));
    assert_eq!(
        kubeconfig_from(Some("/tmp/kind.yaml".into())),
        Ok(PathBuf::from("/tmp/kind.yaml"))
    );
}

// ---------------------------------------------------------------------------------------------
// The webhook and the manager, out of cluster

/// `kudo-webhook` and `kudo-manager` running on this machine, as the ServiceAccounts `kudo init`
/// makes for them (so an RBAC rule missing from `kudo init` fails the suite), and the
/// installation pointing at them. Stopped (SIGTERM) when the last scenario holding them ends;
/// either can be restarted (killed, and started again with the same flags, its log appended to).
pub(crate) struct Daemons {
    /// `None` only while being (re)started.
    pub(crate) webhook: Mutex<Option<Child>>,
    pub(crate) manager: Mutex<Option<Child>>,
    /// `https://HOST:PORT`.
    pub(crate) url: String,
    /// The CA bundle file the API server trusts the webhook with.
    pub(crate) ca_bundle: PathBuf,
    pub(crate) host: String,
    pub(crate) port: u16,
    pub(crate) metrics_port: u16,
    /// The kubeconfig of the ServiceAccount `kudo-system/kudo-webhook`.
    pub(crate) webhook_kubeconfig: PathBuf,
    /// The kubeconfig of the ServiceAccount `kudo-system/kudo-manager`.
    pub(crate) manager_kubeconfig: PathBuf,
    /// The Lease the managers elect their leader with (one per run of the suite).
    pub(crate) lease: String,
    /// Logs and certificates.
    pub(crate) dir: PathBuf,
}

/// The namespace `kudo init` installs into, where the suite's managers hold their Lease.
pub(crate) const KUDO_NAMESPACE: &str = "kudo-system";
/// The identity of the suite's shared manager in the Lease.
pub(crate) const MANAGER_A: &str = "e2e-manager-a";

impl Daemons {
    pub(crate) fn log(&self, name: &str) -> std::fs::File {
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.join(name))
            .expect("a log file")
    }

    pub(crate) fn spawn_webhook(&self) -> Child {
        Command::new(workspace_bin("kudo-webhook"))
            .args(["--listen", &format!("{}:{}", self.host, self.port)])
            .arg("--tls-cert")
            .arg(self.dir.join("tls.crt"))
            .arg("--tls-key")
            .arg(self.dir.join("tls.key"))
            .arg("--kubeconfig")
            .arg(&self.webhook_kubeconfig)
            .arg("--capture-dir")
            .arg(self.dir.join("captures"))
            .stdout(self.log("webhook.log"))
            .stderr(self.log("webhook.err"))
            .spawn()
            .expect("kudo-webhook starts")
    }

    /// The shared manager: leader-elected, as `kudo init` deploys it.
    pub(crate) fn spawn_manager(&self) -> Child {
        self.spawn_manager_as(MANAGER_A, self.metrics_port)
    }

    /// A manager with Lease identity `identity`, its metrics on `metrics_port`, logging to
    /// `IDENTITY.log`/`.err` (the shared one to `manager.log`).
    pub(crate) fn spawn_manager_as(&self, identity: &str, metrics_port: u16) -> Child {
        self.spawn_manager_with(identity, metrics_port, &[])
    }

    /// The same, with `extra` arguments (`--shards 3`).
    pub(crate) fn spawn_manager_with(
        &self,
        identity: &str,
        metrics_port: u16,
        extra: &[&str],
    ) -> Child {
        let log = if identity == MANAGER_A {
            "manager".to_string()
        } else {
            identity.to_string()
        };
        Command::new(workspace_bin("kudo-manager"))
            .arg("--kubeconfig")
            .arg(&self.manager_kubeconfig)
            .args([
                "--metrics-addr",
                &format!("127.0.0.1:{metrics_port}"),
                "--leader-elect",
                "--lease-name",
                &self.lease,
                "--lease-namespace",
                KUDO_NAMESPACE,
                "--identity",
                identity,
                "--default-service-account",
                kudo_crd::labels::DEFAULT_SERVICE_ACCOUNT,
                // Short, so that the drift scenarios see a check within seconds.
                "--drift-interval",
                DRIFT_INTERVAL,
            ])
            .args(extra)
            .stdout(self.log(&format!("{log}.log")))
            .stderr(self.log(&format!("{log}.err")))
            .spawn()
            .expect("kudo-manager starts")
    }

    pub(crate) fn wait_listening(&self) {
        wait_until("the webhook listens", || {
            TcpStream::connect((self.host.as_str(), self.port)).is_ok()
        });
    }

    /// The webhook's process id.
    pub(crate) fn webhook_pid(&self) -> u32 {
        let child = self.webhook.lock().unwrap_or_else(|e| e.into_inner());
        child.as_ref().expect("the webhook runs").id()
    }

    /// Kills the webhook (SIGKILL: no graceful shutdown) and starts it again.
    pub(crate) fn restart_webhook(&self) {
        let mut child = self.webhook.lock().unwrap_or_else(|e| e.into_inner());
        stop(&mut child);
        *child = Some(self.spawn_webhook());
        self.wait_listening();
    }

    /// The manager's `kudo_manager_reconciliations_total` (0 while it does not answer).
    pub(crate) fn reconciliations(&self) -> u64 {
        reconciliations(self.metrics_port)
    }

    /// The manager's counter `name` (0 while it does not answer).
    pub(crate) fn counter(&self, name: &str) -> u64 {
        counter(self.metrics_port, name)
    }

    /// Kills the manager (SIGKILL) and starts it again.
    pub(crate) fn restart_manager(&self) {
        let mut child = self.manager.lock().unwrap_or_else(|e| e.into_inner());
        stop(&mut child);
        *child = Some(self.spawn_manager());
    }
}

/// `kudo_manager_reconciliations_total` of the manager serving metrics on `port` (0 while it
/// does not answer).
pub(crate) fn reconciliations(port: u16) -> u64 {
    counter(port, "kudo_manager_reconciliations_total")
}

/// The counter `name` of the manager serving metrics on `port` (0 while it does not answer).
pub(crate) fn counter(port: u16, name: &str) -> u64 {
    use std::io::Read as _;
    let Ok(mut c) = TcpStream::connect(("127.0.0.1", port)) else {
        return 0;
    };
    let _ = c.set_read_timeout(Some(Duration::from_secs(5)));
    let _ = c.write_all(b"GET /metrics HTTP/1.0\r\nHost: localhost\r\n\r\n");
    let mut body = String::new();
    let _ = c.read_to_string(&mut body);
    body.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' '))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(0)
}

/// SIGKILL: no graceful shutdown.
pub(crate) fn stop(child: &mut Option<Child>) {
    if let Some(mut c) = child.take() {
        let _ = c.kill();
        let _ = c.wait();
    }
}

/// SIGTERM, as Kubernetes stops a Pod, then waits for the process to exit (SIGKILL after
/// `grace`).
pub(crate) fn terminate(child: &mut Option<Child>, grace: Duration) {
    let Some(mut c) = child.take() else {
        return;
    };
    let _ = Command::new("kill")
        .args(["-TERM", &c.id().to_string()])
        .status();
    let deadline = Instant::now() + grace;
    while Instant::now() < deadline {
        if let Ok(Some(_)) = c.try_wait() {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = c.kill();
    let _ = c.wait();
}

impl Drop for Daemons {
    fn drop(&mut self) {
        for child in [&self.webhook, &self.manager] {
            terminate(
                &mut child.lock().unwrap_or_else(|e| e.into_inner()),
                Duration::from_secs(10),
            );
        }
    }
}

/// The daemons, shared by the scenarios that run at the same time.
pub(crate) static DAEMONS: Mutex<Weak<Daemons>> = Mutex::new(Weak::new());
/// The names of the scenarios started in this process (each names a namespace).
static NAMES: Mutex<BTreeSet<String>> = Mutex::new(BTreeSet::new());
/// Scenarios read-lock the cluster; the migration scenario write-locks it.
pub(crate) static CLUSTER: RwLock<()> = RwLock::new(());

pub(crate) fn free_port(host: &str) -> u16 {
    TcpListener::bind((host, 0))
        .and_then(|l| l.local_addr())
        .expect("a free local port")
        .port()
}

/// A kubeconfig at `path` that reaches the cluster of `admin` (its current context) as the
/// ServiceAccount `namespace/name`, with a token from the TokenRequest API (valid 6 hours):
/// what `kudo-manager` and `kudo-webhook` see in a Pod of that ServiceAccount.
pub(crate) fn service_account_kubeconfig(admin: &Path, namespace: &str, name: &str, path: &Path) {
    use k8s_openapi::api::authentication::v1::{TokenRequest, TokenRequestSpec};
    use k8s_openapi::api::core::v1::ServiceAccount;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let token = runtime.block_on(async {
        let client = kudo_cluster::client(Some(admin), None)
            .await
            .expect("a client for the e2e cluster");
        let api: Api<ServiceAccount> = Api::namespaced(client, namespace);
        let request = TokenRequest {
            spec: TokenRequestSpec {
                expiration_seconds: Some(6 * 3600),
                ..Default::default()
            },
            ..Default::default()
        };
        api.create_token_request(name, &Default::default(), &request)
            .await
            .unwrap_or_else(|e| panic!("a token for ServiceAccount {namespace}/{name}: {e}"))
            .status
            .map(|s| s.token)
            .expect("a TokenRequest answered with a token")
    });
    let text = std::fs::read_to_string(admin).expect("the kubeconfig is readable");
    let config = kudo_yaml::document::Document::parse(admin, &text)
        .expect("the kubeconfig is YAML")
        .into_value();
    let current = config["current-context"].as_str().unwrap_or("");
    let contexts = config["contexts"].as_array().cloned().unwrap_or_default();
    let context = contexts
        .iter()
        .find(|c| c["name"] == current)
        .or(contexts.first())
        .expect("the kubeconfig has a context");
    let cluster_name = context["context"]["cluster"].clone();
    let mut cluster = config["clusters"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["name"] == cluster_name))
        .cloned()
        .expect("the context's cluster");
    // A relative certificate-authority path is relative to the kubeconfig it was read from.
    if let Some(ca) = cluster["cluster"]["certificate-authority"].as_str()
        && Path::new(ca).is_relative()
    {
        let dir = admin.parent().unwrap_or(Path::new("."));
        cluster["cluster"]["certificate-authority"] = json!(dir.join(ca));
    }
    let user = format!("{namespace}-{name}");
    let kubeconfig = json!({
        "apiVersion": "v1", "kind": "Config",
        "clusters": [cluster],
        "users": [{"name": user, "user": {"token": token}}],
        "contexts": [{"name": "sa", "context": {"cluster": cluster_name, "user": user, "namespace": namespace}}],
        "current-context": "sa",
    });
    std::fs::write(path, serde_json::to_vec_pretty(&kubeconfig).expect("JSON"))
        .expect("the kubeconfig is written");
}

/// The daemons, started (and `kudo init` run) when none are running: `kudo init` first (it
/// makes the ServiceAccounts), then the webhook and the manager as those ServiceAccounts, then
/// `kudo init --wait` until both webhooks answer.
pub(crate) fn daemons(kubeconfig: &Path) -> Arc<Daemons> {
    let mut shared = DAEMONS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(d) = shared.upgrade() {
        return d;
    }
    let dir = repo()
        .join("target")
        .join("e2e-logs")
        .join(std::process::id().to_string());
    std::fs::create_dir_all(&dir).expect("the log directory");
    say(&format!(
        "e2e: webhook and manager logs in {}",
        dir.display()
    ));
    let host = std::env::var(WEBHOOK_HOST_VAR)
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "127.0.0.1".into());
    let certs =
        kudo_webhook::certs::generate(std::slice::from_ref(&host), Duration::from_secs(24 * 3600))
            .expect("a CA and a serving certificate");
    for (name, text) in [
        ("ca.pem", &certs.ca_pem),
        ("tls.crt", &certs.cert_pem),
        ("tls.key", &certs.key_pem),
    ] {
        std::fs::write(dir.join(name), text).expect("writable log directory");
    }
    let port = free_port(&host);
    let d = Daemons {
        webhook: Mutex::new(None),
        manager: Mutex::new(None),
        url: format!("https://{host}:{port}"),
        ca_bundle: dir.join("ca.pem"),
        host,
        port,
        metrics_port: free_port("127.0.0.1"),
        webhook_kubeconfig: dir.join("kudo-webhook.kubeconfig"),
        manager_kubeconfig: dir.join("kudo-manager.kubeconfig"),
        lease: format!("kudo-manager-e2e-{}", std::process::id()),
        dir,
    };
    init_with(kubeconfig, &d, false);
    for (sa, path) in [
        ("kudo-webhook", &d.webhook_kubeconfig),
        ("kudo-manager", &d.manager_kubeconfig),
    ] {
        service_account_kubeconfig(kubeconfig, KUDO_NAMESPACE, sa, path);
    }
    *d.webhook.lock().unwrap_or_else(|e| e.into_inner()) = Some(d.spawn_webhook());
    *d.manager.lock().unwrap_or_else(|e| e.into_inner()) = Some(d.spawn_manager());
    let d = Arc::new(d);
    d.wait_listening();
    init(kubeconfig, &d);
    *shared = Arc::downgrade(&d);
    d
}

/// `kudo init --wait` pointing the CRD conversion and the admission webhooks at the local
/// webhook: it returns once the CRDs are established and the webhooks answer.
pub(crate) fn init(kubeconfig: &Path, d: &Daemons) {
    init_with(kubeconfig, d, true);
}

/// `kudo init` pointing at the local webhook, waiting for it to answer when `wait`.
pub(crate) fn init_with(kubeconfig: &Path, d: &Daemons, wait: bool) {
    let mut c = Command::new(kudo_bin());
    c.args(["init", "--webhook-url", &d.url, "--ca-bundle"])
        .arg(&d.ca_bundle)
        .arg("--kubeconfig")
        .arg(kubeconfig);
    if wait {
        c.args(["--wait-time", "2m"]);
    }
    let out = c.output().expect("kudo runs");
    assert!(out.status.success(), "kudo init: {}", text(&out.stderr));
}

// ---------------------------------------------------------------------------------------------
// A cluster and who acts on it: the kubeconfig, a client, kudo and kubectl

/// One identity's view of a cluster: its kubeconfig, a client and the runtime the client lives
/// on, and the `kudo` and `kubectl` commands that act as it. A [`Scenario`] is one (the
/// cluster's admin, through [`Deref`]); so are a tenant and the in-cluster scenario's control
/// plane.
pub(crate) struct Kube {
    pub(crate) kubeconfig: PathBuf,
    pub(crate) runtime: tokio::runtime::Runtime,
    pub(crate) client: kube::Client,
}

impl Kube {
    /// A client for the cluster of `kubeconfig`, on a runtime of its own.
    pub(crate) fn connect(kubeconfig: &Path) -> Kube {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        let client = runtime
            .block_on(kudo_cluster::client(Some(kubeconfig), None))
            .unwrap_or_else(|e| panic!("a client for {}: {e}", kubeconfig.display()));
        Kube {
            kubeconfig: kubeconfig.to_path_buf(),
            runtime,
            client,
        }
    }

    /// `kudo ARGS... --kubeconfig K` (in testkit's isolated environment, at most [`TIMEOUT`]).
    pub(crate) fn kudo(&self, args: &[&str]) -> assert_cmd::Command {
        let mut c = kudo_testkit::kudo();
        c.args(args).arg("--kubeconfig").arg(&self.kubeconfig);
        c.timeout(TIMEOUT);
        c
    }

    /// `kudo ARGS` with its configuration and cache in `home` (and the kubeconfig after ARGS
    /// for a command that talks to the cluster: `install`, `upgrade`, `uninstall`).
    pub(crate) fn kudo_at(&self, home: &Path, args: &[&str]) -> assert_cmd::Command {
        let mut c = if matches!(args[0], "install" | "upgrade" | "update" | "uninstall") {
            self.kudo(args)
        } else {
            let mut c = kudo_testkit::kudo();
            c.args(args);
            c
        };
        c.env("HOME", home)
            .env("KUDO_HOME", home.join("kudo"))
            .env("XDG_CACHE_HOME", home.join("cache"));
        c
    }

    /// `kubectl --kubeconfig K ARGS...` (kubectl is on the PATH; at most [`TIMEOUT`]); feed it
    /// a manifest with `write_stdin`.
    pub(crate) fn kubectl(&self, args: &[&str]) -> assert_cmd::Command {
        let mut c = assert_cmd::Command::new("kubectl");
        c.arg("--kubeconfig").arg(&self.kubeconfig).args(args);
        c.timeout(TIMEOUT);
        c
    }

    /// The kind `kind` (`plural`) of API version `version` in namespace `namespace`.
    pub(crate) fn namespaced(
        &self,
        namespace: &str,
        version: &str,
        kind: &str,
        plural: &str,
    ) -> Api<DynamicObject> {
        Api::namespaced_with(
            self.client.clone(),
            namespace,
            &api_resource(version, kind, plural),
        )
    }

    /// A cluster-scoped kind, or a namespaced one across all namespaces.
    pub(crate) fn cluster_api(
        &self,
        version: &str,
        kind: &str,
        plural: &str,
    ) -> Api<DynamicObject> {
        Api::all_with(self.client.clone(), &api_resource(version, kind, plural))
    }

    /// The CustomResourceDefinitions.
    pub(crate) fn crds(&self) -> Api<DynamicObject> {
        self.cluster_api(
            "apiextensions.k8s.io/v1",
            "CustomResourceDefinition",
            "customresourcedefinitions",
        )
    }

    /// The object at `api`/`name`, as JSON; `None` when it does not exist.
    pub(crate) fn get(&self, api: &Api<DynamicObject>, name: &str) -> Option<Value> {
        let got = self
            .runtime
            .block_on(api.get_opt(name))
            .unwrap_or_else(|e| panic!("reading {name}: {e}"));
        got.map(|o| serde_json::to_value(o).expect("an object is JSON"))
    }

    /// The objects at `api` with the labels `labels` (a selector; empty: all), as JSON.
    pub(crate) fn list(&self, api: &Api<DynamicObject>, labels: &str) -> Vec<Value> {
        let params = kube::api::ListParams::default().labels(labels);
        let list = self
            .runtime
            .block_on(api.list(&params))
            .unwrap_or_else(|e| panic!("listing ({labels}): {e}"));
        list.items
            .into_iter()
            .map(|o| serde_json::to_value(o).expect("an object is JSON"))
            .collect()
    }

    /// Server-side apply of any object (field manager `kudo-e2e`) with this identity's rights,
    /// as `kubectl apply --server-side` would.
    pub(crate) fn try_apply(&self, object: &Value) -> Result<(), kube::Error> {
        let (api_version, kind) = (object["apiVersion"].as_str(), object["kind"].as_str());
        let (Some(api_version), Some(kind)) = (api_version, kind) else {
            panic!("not an object: {object}");
        };
        let ar = api_resource(api_version, kind, plural(kind));
        let api: Api<DynamicObject> = match object["metadata"]["namespace"].as_str() {
            Some(ns) => Api::namespaced_with(self.client.clone(), ns, &ar),
            None => Api::all_with(self.client.clone(), &ar),
        };
        let name = object["metadata"]["name"].as_str().unwrap_or_default();
        let params = PatchParams::apply("kudo-e2e").force();
        self.runtime
            .block_on(api.patch(name, &params, &Patch::Apply(object)))
            .map(|_| ())
    }

    /// [`Kube::try_apply`], which must succeed.
    pub(crate) fn apply(&self, object: &Value) {
        self.try_apply(object).unwrap_or_else(|e| {
            let name = &object["metadata"]["name"];
            panic!("applying {} {name}: {e}", object["kind"])
        });
    }

    /// `kudo install PACKAGE --instance NAME -n NAMESPACE --wait` as this identity, to add to
    /// and run (a scenario's [`Scenario::install`] is in its namespace).
    pub(crate) fn install_in(&self, namespace: &str, package: &Path, instance: &str) -> Change<'_> {
        let package = package.to_string_lossy();
        Change::new(self, namespace, &["install", &package], instance)
    }

    /// `kudo update --instance NAME -n NAMESPACE --wait` as this identity, to add to and run.
    pub(crate) fn update_in(&self, namespace: &str, instance: &str) -> Change<'_> {
        Change::new(self, namespace, &["update"], instance)
    }

    /// The holder of the Lease `namespace/name` (`None` while it is free or missing).
    pub(crate) fn lease_holder(&self, namespace: &str, name: &str) -> Option<String> {
        let api = self.namespaced(namespace, "coordination.k8s.io/v1", "Lease", "leases");
        let lease = self.get(&api, name)?;
        lease["spec"]["holderIdentity"]
            .as_str()
            .filter(|h| !h.is_empty())
            .map(String::from)
    }
}

// ---------------------------------------------------------------------------------------------
// kudo install, upgrade and update, waiting

/// A `kudo install`, `upgrade`, `update` or `uninstall` of one Instance of a scenario, with `-n NAMESPACE`
/// and `--wait` (until [`Change::no_wait`]), built up, then run: [`Change::ok`] (must succeed),
/// [`Change::assert`], [`Change::output`], or [`Change::spawn`] (to run several at once).
pub(crate) struct Change<'a> {
    by: &'a Kube,
    args: Vec<String>,
    wait: bool,
}

impl<'a> Change<'a> {
    fn new(by: &'a Kube, namespace: &str, head: &[&str], instance: &str) -> Change<'a> {
        let mut args: Vec<String> = head.iter().map(|a| a.to_string()).collect();
        args.extend(["--instance", instance, "-n", namespace].map(String::from));
        Change {
            by,
            args,
            wait: true,
        }
    }

    /// `-p P`.
    pub(crate) fn param(mut self, p: &str) -> Self {
        self.args.extend(["-p".to_string(), p.to_string()]);
        self
    }

    /// `-p P` for each of `params`.
    pub(crate) fn params(self, params: &[&str]) -> Self {
        params.iter().fold(self, |c, p| c.param(p))
    }

    /// More arguments, as given (`--wait-time 170s`, `--force`, `-o json`).
    pub(crate) fn args(mut self, args: &[&str]) -> Self {
        self.args.extend(args.iter().map(|a| a.to_string()));
        self
    }

    /// Without `--wait`: returns once the change is written.
    pub(crate) fn no_wait(mut self) -> Self {
        self.wait = false;
        self
    }

    /// Run as `who` (a tenant) instead of the scenario's admin.
    pub(crate) fn by(mut self, who: &'a Kube) -> Self {
        self.by = who;
        self
    }

    fn all_args(&self) -> Vec<&str> {
        let mut args: Vec<&str> = self.args.iter().map(String::as_str).collect();
        if self.wait {
            args.push("--wait");
        }
        args
    }

    /// The command, to run as the caller likes.
    pub(crate) fn command(self) -> assert_cmd::Command {
        self.by.kudo(&self.all_args())
    }

    /// Runs it: what it did, to assert on.
    pub(crate) fn assert(self) -> assert_cmd::assert::Assert {
        self.command().assert()
    }

    /// Runs it; it must succeed.
    pub(crate) fn ok(self) -> assert_cmd::assert::Assert {
        self.assert().success()
    }

    /// Runs it: its output, whatever the exit code.
    pub(crate) fn output(self) -> std::process::Output {
        self.command().output().expect("kudo runs")
    }

    /// Runs it; it must succeed and print JSON (with `-o json`): that JSON.
    pub(crate) fn json(self) -> Value {
        let args: Vec<String> = self.all_args().iter().map(|a| a.to_string()).collect();
        json_of(&args, self.command())
    }

    /// Starts it (the kudo binary with the same arguments, its output piped) and returns at once.
    pub(crate) fn spawn(self) -> Child {
        Command::new(kudo_bin())
            .args(self.all_args())
            .arg("--kubeconfig")
            .arg(&self.by.kubeconfig)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("kudo starts")
    }
}

// ---------------------------------------------------------------------------------------------
// A scenario: a namespace, a client, the kudo command

/// One scenario's world: a namespace of its own and the cluster's admin acting in it ([`Kube`],
/// through [`Deref`]). Its namespace is deleted (and waited for, while the daemons still run
/// to process finalizers) when it ends.
pub(crate) struct Scenario {
    kube: Kube,
    pub(crate) namespace: String,
    pub(crate) daemons: Arc<Daemons>,
    _shared: Option<RwLockReadGuard<'static, ()>>,
    _exclusive: Option<RwLockWriteGuard<'static, ()>>,
}

impl Deref for Scenario {
    type Target = Kube;

    fn deref(&self) -> &Kube {
        &self.kube
    }
}

impl Scenario {
    /// The scenario `name`, or `None` (the test then passes) when the suite is skipped.
    pub(crate) fn start(name: &str) -> Option<Scenario> {
        Self::start_with(name, false)
    }

    /// A scenario that has the cluster to itself.
    pub(crate) fn start_alone(name: &str) -> Option<Scenario> {
        Self::start_with(name, true)
    }

    /// A scenario that needs Nodes to run its Pods (`alone`: with the cluster to itself);
    /// `None` also when the cluster has no Ready Node, which fails in CI.
    pub(crate) fn start_with_workloads(name: &str, alone: bool) -> Option<Scenario> {
        let s = Self::start_with(name, alone)?;
        s.has_ready_nodes().then_some(s)
    }

    /// Whether the cluster has a Ready Node to run workloads; without one (an API server alone)
    /// the workload scenarios say they are skipped, except in CI, where they fail.
    fn has_ready_nodes(&self) -> bool {
        let nodes = self.list(&self.cluster_api("v1", "Node", "nodes"), "");
        let ready = nodes.iter().any(|n| {
            n["status"]["conditions"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|c| c["type"] == "Ready" && c["status"] == "True")
        });
        if !ready {
            let why = "skipped: the cluster has no Ready Node to run workloads (start ../shared/k8s with FAKE_KUBELET=1)";
            assert!(!kudo_testkit::in_ci(), "{why} (CI is set, so this fails)");
            say(why);
        }
        ready
    }

    fn start_with(name: &str, alone: bool) -> Option<Scenario> {
        let kubeconfig = match kubeconfig_from(std::env::var_os(KUBECONFIG_VAR)) {
            Ok(k) => k,
            // In CI the control plane is part of the run: a scenario without it fails.
            Err(message) if kudo_testkit::in_ci() => {
                panic!("{name}: CI is set, and the end-to-end suite has no cluster: {message}")
            }
            Err(message) => {
                say(&format!("{name}: {message}"));
                return None;
            }
        };
        // Two scenarios of one name would share a namespace, and the first to end would delete
        // it under the other.
        let fresh = NAMES
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(name.to_string());
        assert!(
            fresh,
            "two scenarios are named {name}: each needs a name of its own"
        );
        let (shared, exclusive) = if alone {
            (
                None,
                Some(CLUSTER.write().unwrap_or_else(|e| e.into_inner())),
            )
        } else {
            (
                Some(CLUSTER.read().unwrap_or_else(|e| e.into_inner())),
                None,
            )
        };
        let kube = Kube::connect(&kubeconfig);
        let daemons = daemons(&kubeconfig);
        let namespace = format!("e2e-{name}-{}", std::process::id());
        let s = Scenario {
            kube,
            namespace,
            daemons,
            _shared: shared,
            _exclusive: exclusive,
        };
        s.apply(&json!({"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": s.namespace, "labels": {"kudo.dev/e2e": "true"}}}));
        Some(s)
    }

    /// `kudo ARGS`, which must succeed and print JSON (an `-o json` report).
    pub(crate) fn json(&self, args: &[&str]) -> Value {
        json_of(args, self.kudo(args))
    }

    /// `kudo install PACKAGE --instance NAME -n NS --wait`, to add to and run.
    pub(crate) fn install(&self, package: &Path, instance: &str) -> Change<'_> {
        self.install_in(&self.namespace, package, instance)
    }

    /// `kudo upgrade PACKAGE --instance NAME -n NS --wait`, to add to and run.
    pub(crate) fn upgrade(&self, package: &Path, instance: &str) -> Change<'_> {
        let package = package.to_string_lossy();
        Change::new(self, &self.namespace, &["upgrade", &package], instance)
    }

    /// `kudo update --instance NAME -n NS --wait`, to add to and run.
    pub(crate) fn update(&self, instance: &str) -> Change<'_> {
        self.update_in(&self.namespace, instance)
    }

    /// `kudo uninstall --instance NAME -n NS --wait`, to add to and run.
    pub(crate) fn uninstall(&self, instance: &str) -> Change<'_> {
        Change::new(self, &self.namespace, &["uninstall"], instance)
    }

    /// The kind `kind` (`plural`) of API version `version` in the scenario's namespace.
    pub(crate) fn api(&self, version: &str, kind: &str, plural: &str) -> Api<DynamicObject> {
        self.namespaced(&self.namespace, version, kind, plural)
    }

    /// The namespace's Instances through kudo.dev/`version`.
    pub(crate) fn instances(&self, version: &str) -> Api<DynamicObject> {
        self.api(&format!("kudo.dev/{version}"), "Instance", "instances")
    }

    /// The effective values the last plan of Instance `name` (in `namespace`) ran with:
    /// `status.applied.parameters` as older managers wrote them, else what the revision that
    /// `status.applied.revision` names records (issue 49); `Null` when neither says.
    pub(crate) fn applied_values_in(&self, namespace: &str, name: &str) -> Value {
        let inst = self
            .get(
                &self.namespaced(namespace, "kudo.dev/v1beta2", "Instance", "instances"),
                name,
            )
            .unwrap_or_default();
        let applied = &inst["status"]["applied"];
        if !applied["parameters"].is_null() {
            return applied["parameters"].clone();
        }
        let Some(n) = applied["revision"].as_i64() else {
            return Value::Null;
        };
        let api = self.namespaced(
            namespace,
            "apps/v1",
            "ControllerRevision",
            "controllerrevisions",
        );
        self.get(&api, &kudo_crd::revision::name(name, n))
            .and_then(|cr| serde_json::from_value(cr).ok())
            .and_then(|cr| kudo_crd::revision::applied_values(&cr))
            .unwrap_or_default()
    }

    /// The same in the scenario's namespace.
    pub(crate) fn applied_values(&self, name: &str) -> Value {
        self.applied_values_in(&self.namespace, name)
    }

    /// The Instance `name` read through kudo.dev/v1beta2.
    pub(crate) fn instance(&self, name: &str) -> Value {
        self.get(&self.instances("v1beta2"), name)
            .unwrap_or_else(|| panic!("Instance {}/{name} exists", self.namespace))
    }

    /// The data of ConfigMap `name`.
    pub(crate) fn config_map(&self, name: &str) -> Value {
        let cm = self.get(&self.api("v1", "ConfigMap", "configmaps"), name);
        cm.map(|c| c["data"].clone()).unwrap_or(Value::Null)
    }

    /// Waits for plan `plan` of Instance `name` to be the active one and complete.
    pub(crate) fn wait_plan(&self, name: &str, plan: &str) {
        wait_until(&format!("plan {plan} of {name} completes"), || {
            let i = self.instance(name);
            i["status"]["activePlan"]["name"] == plan
                && i["status"]["planStatus"][plan]["status"] == "COMPLETE"
        });
    }

    /// Waits until step `step` of plan `plan` of Instance `name` has the status `status`.
    pub(crate) fn wait_step(&self, name: &str, plan: &str, step: &str, status: &str) {
        wait_until(
            &format!("step {step} of {plan} of {name} is {status}"),
            || step_status(&self.instance(name), plan, step) == status,
        );
    }

    /// The condition `condition` of Instance `name` (`Null` when it has none).
    pub(crate) fn condition(&self, name: &str, condition: &str) -> Value {
        condition_of(&self.instance(name), condition)
    }

    /// Waits until the condition `condition` of Instance `name` has the status `status`
    /// (`True`, `False`, `Unknown`), polling every `every`: how long that took.
    pub(crate) fn wait_condition(
        &self,
        name: &str,
        condition: &str,
        status: &str,
        every: Duration,
    ) -> Duration {
        let what = format!("{name} is {condition}={status}");
        wait_for(&what, TIMEOUT, every, || {
            self.condition(name, condition)["status"] == status
        })
    }

    /// A merge patch on the Instance's v1beta2 object, the way any client could send it
    /// (`kubectl patch --type merge`), bypassing the CLI's checks.
    pub(crate) fn patch_raw(&self, name: &str, patch: Value) -> Result<Value, kube::Error> {
        self.patch_raw_as("v1beta2", name, patch)
    }

    /// The same through the API version `version` (a kubectl whose discovery predates v1beta2).
    pub(crate) fn patch_raw_as(
        &self,
        version: &str,
        name: &str,
        patch: Value,
    ) -> Result<Value, kube::Error> {
        let api = self.instances(version);
        self.runtime
            .block_on(api.patch(name, &PatchParams::default(), &Patch::Merge(patch)))
            .map(|o| serde_json::to_value(o).unwrap_or(Value::Null))
    }

    /// What `kudo install` makes for an Instance's plans to run as, made by the cluster admin
    /// for the scenarios that create Instances without `kudo install` (as `kubectl apply`
    /// would): the ServiceAccount `kudo-instance` of the namespace, bound to `admin` there.
    pub(crate) fn instance_service_account(&self) {
        let sa = kudo_crd::labels::DEFAULT_SERVICE_ACCOUNT;
        self.apply(&json!({"apiVersion": "v1", "kind": "ServiceAccount",
            "metadata": {"name": sa, "namespace": self.namespace}}));
        self.apply(&json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
            "metadata": {"name": format!("{sa}-admin"), "namespace": self.namespace},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "admin"},
            "subjects": [{"kind": "ServiceAccount", "name": sa, "namespace": self.namespace}]}));
    }

    /// The Prometheus operator's ServiceMonitor CRD (a minimal one, as a cluster running it
    /// has), applied and established.
    pub(crate) fn service_monitor_crd(&self) {
        let file = fixture("e2e/prometheus/servicemonitor-crd.yaml");
        let crd = kudo_yaml::document::Document::read(&file)
            .expect("the ServiceMonitor CRD")
            .into_value();
        self.apply(&crd);
        wait_until("the ServiceMonitor CRD is established", || {
            self.get(&self.crds(), "servicemonitors.monitoring.coreos.com")
                .is_some_and(|c| {
                    c["status"]["conditions"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .any(|c| c["type"] == "Established" && c["status"] == "True")
                })
        });
    }

    /// Every Instance of the cluster, listed through each version the CRD serves (issue 38:
    /// one object that cannot be converted fails the LIST for everyone): `Err` naming the
    /// version and what the API server said. A cluster without kudo's CRDs has nothing to list.
    fn every_instance_lists(&self) -> Result<(), String> {
        for version in ["v1beta1", "v1beta2"] {
            let api = self.cluster_api(&format!("kudo.dev/{version}"), "Instance", "instances");
            match self.runtime.block_on(api.list(&Default::default())) {
                Ok(_) => {}
                Err(kube::Error::Api(status)) if status.code == 404 => {}
                Err(e) => return Err(format!("instances.{version}.kudo.dev -A: {e}")),
            }
        }
        Ok(())
    }
}

impl Drop for Scenario {
    fn drop(&mut self) {
        // After every scenario's writes, whatever they were, every Instance still reads in
        // both versions.
        if !std::thread::panicking()
            && let Err(why) = self.every_instance_lists()
        {
            panic!("{}: after the scenario, {why}", self.namespace);
        }
        // A ClusterRoleBinding `kudo install` made for the namespace's ServiceAccount (an
        // operator with cluster-scoped objects) outlives the namespace: removed here.
        let bindings = self.cluster_api(
            "rbac.authorization.k8s.io/v1",
            "ClusterRoleBinding",
            "clusterrolebindings",
        );
        let binding = format!(
            "kudo:{}:{}",
            self.namespace,
            kudo_crd::labels::DEFAULT_SERVICE_ACCOUNT
        );
        let _ = self
            .runtime
            .block_on(bindings.delete(&binding, &DeleteParams::default()));
        let api = self.cluster_api("v1", "Namespace", "namespaces");
        let _ = self
            .runtime
            .block_on(api.delete(&self.namespace, &DeleteParams::default()));
        let deadline = Instant::now() + TIMEOUT;
        while Instant::now() < deadline {
            match self.runtime.block_on(api.get_opt(&self.namespace)) {
                Ok(None) | Err(_) => return,
                Ok(Some(_)) => std::thread::sleep(Duration::from_secs(1)),
            }
        }
        say(&format!(
            "e2e: namespace {} still terminating",
            self.namespace
        ));
    }
}

// ---------------------------------------------------------------------------------------------
// Small things every scenario uses

/// The API resource of kind `kind` (`plural`) of API version `version` (`group/version`, or
/// `version` for the core group).
pub(crate) fn api_resource(version: &str, kind: &str, plural: &str) -> ApiResource {
    let (group, version) = version.split_once('/').unwrap_or(("", version));
    ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(group, version, kind), plural)
}

/// The plural of the kinds the scenarios apply.
pub(crate) fn plural(kind: &str) -> &'static str {
    match kind {
        "Namespace" => "namespaces",
        "CustomResourceDefinition" => "customresourcedefinitions",
        "ServiceAccount" => "serviceaccounts",
        "RoleBinding" => "rolebindings",
        "Role" => "roles",
        "ConfigMap" => "configmaps",
        "Secret" => "secrets",
        "Operator" => "operators",
        "OperatorVersion" => "operatorversions",
        "Instance" => "instances",
        "Rollout" => "rollouts",
        other => panic!("no plural known for {other}"),
    }
}

/// Polls `done` every second until it holds; panics after [`TIMEOUT`]. Returns the time taken.
pub(crate) fn wait_until(what: &str, done: impl FnMut() -> bool) -> Duration {
    wait_for(what, TIMEOUT, Duration::from_secs(1), done)
}

/// Polls `done` every `every` until it holds; panics after `timeout`. Returns the time taken.
pub(crate) fn wait_for(
    what: &str,
    timeout: Duration,
    every: Duration,
    mut done: impl FnMut() -> bool,
) -> Duration {
    let started = Instant::now();
    while !done() {
        assert!(
            started.elapsed() < timeout,
            "timed out after {timeout:?} waiting until {what}"
        );
        std::thread::sleep(every);
    }
    started.elapsed()
}

/// What `command` (kudo with `args`) printed, which must succeed and be JSON.
fn json_of(args: &[impl std::fmt::Debug], mut command: assert_cmd::Command) -> Value {
    let out = command.assert().success().get_output().stdout.clone();
    serde_json::from_slice(&out).unwrap_or_else(|e| {
        panic!(
            "kudo {args:?} printed no JSON ({e}): {}",
            String::from_utf8_lossy(&out)
        )
    })
}

/// The condition `condition` of an object's status (`Null` when it has none).
pub(crate) fn condition_of(object: &Value, condition: &str) -> Value {
    object["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["type"] == condition)
        .cloned()
        .unwrap_or(Value::Null)
}

/// `K8S/NAME ARGS` (a script of the shared control plane, `start.sh`, `stop.sh`) with the
/// settings `env` (and no `KUBECONFIG` of this process): its output, whatever the exit code.
pub(crate) fn k8s_script(
    k8s: &Path,
    name: &str,
    args: &[&str],
    env: &[(&str, String)],
) -> std::process::Output {
    Command::new(k8s.join(name))
        .args(args)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .env_remove("KUBECONFIG")
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("{name} runs: {e}"))
}

/// Bytes as text (lossy).
pub(crate) fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A process's stdout then stderr, as text.
pub(crate) fn both(out: &std::process::Output) -> String {
    format!("{}{}", text(&out.stdout), text(&out.stderr))
}

/// The status of step `step` of phase `main` (the first) of plan `plan` in an Instance (`""`
/// when it has none).
pub(crate) fn step_status(instance: &Value, plan: &str, step: &str) -> String {
    let steps = &instance["status"]["planStatus"][plan]["phases"][0]["steps"];
    steps
        .as_array()
        .and_then(|a| a.iter().find(|s| s["name"] == step))
        .and_then(|s| s["status"].as_str())
        .unwrap_or("")
        .to_string()
}

/// The suite's operator (ConfigMaps only; plans deploy, update, rotate, cleanup).
pub(crate) fn configs() -> PathBuf {
    fixture("e2e/configs")
}

/// The same operator without an `update` plan.
pub(crate) fn configs_without_update() -> PathBuf {
    fixture("e2e/configs-no-update")
}

/// The Operator and OperatorVersion of `package` as KUDO wrote them: v1beta1, the parameters a
/// flat list of strings, without kudo's annotation that keeps the v1beta2 schema.
pub(crate) fn kudo_objects(package: &Path, namespace: &str) -> (Value, Value) {
    let pkg = kudo_pkg::Package::load(package).expect("the package loads");
    let (op, ov) = kudo_crd::package::objects(&pkg, namespace);
    let mut op = serde_json::to_value(op).expect("JSON");
    op["apiVersion"] = json!("kudo.dev/v1beta1");
    let ov = serde_json::to_value(ov).expect("JSON");
    let mut ov = convert::convert(&ov, "kudo.dev/v1beta1", &NoTypes).expect("converts");
    if let Some(m) = ov["metadata"].as_object_mut() {
        m.remove("annotations");
    }
    (op, ov)
}

/// The API server's message when it refused a request.
pub(crate) fn refusal(result: Result<Value, kube::Error>) -> String {
    match result {
        Err(kube::Error::Api(status)) => status.message,
        Err(other) => panic!("not a refusal by the API server: {other}"),
        Ok(object) => panic!("the change was accepted: {object}"),
    }
}
