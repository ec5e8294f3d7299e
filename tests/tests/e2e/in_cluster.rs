//! The in-cluster installation as users run it (issue 46): `kudo init` without `--webhook-url`
//! makes the manager and webhook Deployments, the webhook Service and its self-managed
//! certificates, and this scenario checks them on a control plane of its own, whose fake
//! kubelets run kudo's binaries as the main containers of the `kudo/kudo-manager` and
//! `kudo/kudo-webhook` images (`FAKE_KUBELET_IMAGE_MAP`, `../shared/k8s/README.md`): in-cluster
//! configuration, ServiceAccount tokens, leader election among Pods, the API server calling the
//! webhooks through the Service's ClusterIP. The suite's shared cluster is not used (its
//! webhook and manager run outside, `kudo init --webhook-url`).
//!
//! With a loop of writes and LISTs going through the webhooks, it deletes the manager's Pod
//! (the replacement takes the Lease and runs the next plan), deletes a webhook Pod, and waits
//! for the webhook to renew its certificate (`kudo init --webhook-cert-validity 3m
//! --webhook-cert-renew-before 2m`): no request may fail at any point.

use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::SystemTime;

use crate::harness::*;

/// The webhook certificate's lifetime: renewed when it expires within 2 minutes, checked every
/// 40 s by each replica, so the first renewal comes 60 to 100 s after `kudo init`, and the next
/// as long after each.
const CERT_VALIDITY: &str = "3m";
const CERT_RENEW_BEFORE: &str = "2m";
const CERT_VALIDITY_SECS: i64 = 180;
/// Where the scenario works.
const NAMESPACE: &str = "in-cluster";
/// The Instance whose plans the scenario runs; the load writes to another one.
const INSTANCE: &str = "cfg";
/// The Instance the loop of writes patches.
const LOADED: &str = "load";

// ---------------------------------------------------------------------------------------------
// A control plane of its own

/// `../shared/k8s/start.sh` in a state directory of its own, on free ports, with fake kubelets
/// that run kudo's binaries; `stop.sh --clean` when dropped, whatever happened (its logs and
/// the containers' first copied to `target/e2e-logs/PID/in-cluster/` when the test failed).
struct ControlPlane {
    k8s: PathBuf,
    _dir: tempfile::TempDir,
    run: PathBuf,
    env: Vec<(&'static str, String)>,
    kubeconfig: PathBuf,
}

/// A free port whose successor is free too (`KCM_PORT` is `API_PORT + 1`).
fn free_port_pair() -> u16 {
    loop {
        let port = free_port("127.0.0.1");
        if port < u16::MAX && TcpListener::bind(("127.0.0.1", port + 1)).is_ok() {
            return port;
        }
    }
}

impl ControlPlane {
    /// Started with fake kubelets that run `manager` and `webhook` (absolute paths) as the
    /// main containers of kudo's images.
    fn start(k8s: &Path, manager: &Path, webhook: &Path) -> ControlPlane {
        let dir = tempfile::tempdir().expect("a state directory");
        let run = dir.path().join("k8s");
        let api_port = free_port_pair();
        let env = vec![
            ("K8S_RUN_DIR", run.display().to_string()),
            ("API_PORT", api_port.to_string()),
            ("KCM_PORT", (api_port + 1).to_string()),
            ("ETCD_CLIENT_PORT", free_port("127.0.0.1").to_string()),
            ("ETCD_PEER_PORT", free_port("127.0.0.1").to_string()),
            ("FAKE_KUBELET", "1".into()),
            ("K8S_AUTHORIZATION", "RBAC".into()),
            (
                "FAKE_KUBELET_IMAGE_MAP",
                format!(
                    "kudo/kudo-manager={},kudo/kudo-webhook={}",
                    manager.display(),
                    webhook.display()
                ),
            ),
        ];
        let cp = ControlPlane {
            k8s: k8s.to_path_buf(),
            kubeconfig: run.join("kubeconfig"),
            _dir: dir,
            run,
            env,
        };
        let out = cp.script("start.sh", &[]);
        assert!(
            out.status.success(),
            "start.sh failed: {}\n(logs in {})",
            text(&out.stderr),
            cp.run.join("logs").display()
        );
        cp
    }

    /// `k8s/NAME ARGS` with this control plane's settings.
    fn script(&self, name: &str, args: &[&str]) -> std::process::Output {
        k8s_script(&self.k8s, name, args, &self.env)
    }

    /// The control plane's logs and the containers' (before `--clean` deletes them).
    fn keep_logs(&self) {
        let to = repo()
            .join("target/e2e-logs")
            .join(std::process::id().to_string())
            .join("in-cluster");
        let _ = std::fs::create_dir_all(&to);
        let copy = |from: &Path, name: String| {
            let _ = std::fs::copy(from, to.join(name));
        };
        for e in std::fs::read_dir(self.run.join("logs"))
            .into_iter()
            .flatten()
            .flatten()
        {
            copy(&e.path(), e.file_name().to_string_lossy().into_owned());
        }
        let sandboxes = self.run.join("fake-kubelet/sandboxes");
        for pod in std::fs::read_dir(sandboxes).into_iter().flatten().flatten() {
            let logs = pod.path().join("logs");
            for e in std::fs::read_dir(logs).into_iter().flatten().flatten() {
                let uid = pod.file_name().to_string_lossy().into_owned();
                copy(
                    &e.path(),
                    format!("{uid}-{}", e.file_name().to_string_lossy()),
                );
            }
        }
        say(&format!("in-cluster: logs kept in {}", to.display()));
    }
}

impl Drop for ControlPlane {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.keep_logs();
        }
        let out = self.script("stop.sh", &["--clean"]);
        if !out.status.success() {
            say(&format!("in-cluster: stop.sh: {}", text(&out.stderr)));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The cluster, as the test reads and writes it

/// The in-cluster control plane's admin ([`Kube`], through [`Deref`]) and what this scenario
/// reads of kudo's installation in it.
struct Cluster(Kube);

impl Deref for Cluster {
    type Target = Kube;

    fn deref(&self) -> &Kube {
        &self.0
    }
}

impl Cluster {
    fn new(kubeconfig: &Path) -> Cluster {
        Cluster(Kube::connect(kubeconfig))
    }

    fn kudo_system(&self, v: &str, kind: &str, plural: &str) -> Api<DynamicObject> {
        self.namespaced(KUDO_NAMESPACE, v, kind, plural)
    }

    fn deployment(&self, name: &str) -> Value {
        let api = self.kudo_system("apps/v1", "Deployment", "deployments");
        self.get(&api, name)
            .unwrap_or_else(|| panic!("Deployment {KUDO_NAMESPACE}/{name} exists"))
    }

    /// The ready Pods of component `component` (`kudo-webhook`, `kudo-manager`) that are not
    /// being deleted, by name, with their IPs.
    fn ready_pods(&self, component: &str) -> Vec<(String, String)> {
        let api = self.kudo_system("v1", "Pod", "pods");
        let pods = self.list(&api, &format!("app.kubernetes.io/component={component}"));
        pods.iter()
            .filter(|p| p["metadata"]["deletionTimestamp"].is_null())
            .filter(|p| {
                p["status"]["conditions"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|c| c["type"] == "Ready" && c["status"] == "True")
            })
            .map(|p| {
                let name = p["metadata"]["name"].as_str().unwrap_or_default();
                let ip = p["status"]["podIP"].as_str().unwrap_or_default();
                (name.to_string(), ip.to_string())
            })
            .collect()
    }

    fn pod_exists(&self, name: &str) -> bool {
        self.get(&self.kudo_system("v1", "Pod", "pods"), name)
            .is_some()
    }

    fn delete_pod(&self, name: &str) {
        let api = self.kudo_system("v1", "Pod", "pods");
        self.runtime
            .block_on(api.delete(name, &DeleteParams::default()))
            .unwrap_or_else(|e| panic!("deleting Pod {name}: {e}"));
    }

    /// The holder of the manager's Lease (`None` while it is free).
    fn lease_holder(&self) -> Option<String> {
        self.0
            .lease_holder(KUDO_NAMESPACE, kudo_crd::labels::MANAGER)
    }

    /// The webhook's certificate Secret, decoded: (`ca.crt`, `tls.crt`, expiry in Unix seconds).
    fn certificate(&self) -> (String, String, i64) {
        let api = self.kudo_system("v1", "Secret", "secrets");
        let secret = self
            .get(&api, kudo_crd::labels::WEBHOOK_SECRET)
            .expect("the webhook made its Secret");
        let bundle = kudo_webhook::certs::from_secret(&secret).expect("the Secret holds a bundle");
        (bundle.ca_pem, bundle.cert_pem, bundle.not_after)
    }

    /// Every `caBundle` the webhook injects, base64 as stored: the two converted CRDs' and each
    /// webhook of the two configurations, named.
    fn ca_bundles(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        let crds = self.crds();
        for name in kudo_crd::labels::CONVERTED_CRDS {
            let crd = self.get(&crds, name).expect("the CRD");
            let ca = &crd["spec"]["conversion"]["webhook"]["clientConfig"]["caBundle"];
            out.push((
                name.to_string(),
                ca.as_str().unwrap_or_default().to_string(),
            ));
        }
        for (kind, plural, name) in [
            (
                "MutatingWebhookConfiguration",
                "mutatingwebhookconfigurations",
                kudo_crd::labels::MUTATING,
            ),
            (
                "ValidatingWebhookConfiguration",
                "validatingwebhookconfigurations",
                kudo_crd::labels::VALIDATING,
            ),
        ] {
            let api = self.cluster_api("admissionregistration.k8s.io/v1", kind, plural);
            let config = self.get(&api, name).expect("the webhook configuration");
            for w in config["webhooks"].as_array().into_iter().flatten() {
                let ca = w["clientConfig"]["caBundle"].as_str().unwrap_or_default();
                out.push((format!("{kind} {}", w["name"]), ca.to_string()));
            }
        }
        out
    }
}

/// `pem` as base64, as a `caBundle` holds it.
fn b64(pem: &str) -> String {
    base64::Engine::encode(&base64::engine::general_purpose::STANDARD, pem)
}

/// The base64 body of the first PEM certificate in `text`, one line.
fn first_certificate(text: &str) -> Option<String> {
    let start = text.find("-----BEGIN CERTIFICATE-----")?;
    let rest = &text[start + "-----BEGIN CERTIFICATE-----".len()..];
    let end = rest.find("-----END CERTIFICATE-----")?;
    Some(rest[..end].split_whitespace().collect())
}

/// The certificate the webhook Pod at `ip` serves (`openssl s_client`, which start.sh needs
/// too), as [`first_certificate`] writes it.
fn served_certificate(ip: &str) -> Option<String> {
    let out = Command::new("openssl")
        .args(["s_client", "-connect", &format!("{ip}:8443")])
        .args(["-servername", "kudo-webhook.kudo-system.svc"])
        .stdin(Stdio::null())
        .output()
        .ok()?;
    first_certificate(&text(&out.stdout))
}

fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or_default()
}

// ---------------------------------------------------------------------------------------------
// Requests through the webhooks, all the time

/// One request of the loop.
#[derive(Debug, Clone)]
struct Request {
    what: &'static str,
    /// When it was sent, Unix seconds.
    at: f64,
    took: Duration,
    /// The API server's refusal or the client's error.
    error: Option<String>,
}

impl Request {
    fn is_write(&self) -> bool {
        self.what.starts_with("patch")
    }
}

/// A thread sending, one after the other, requests that each go through kudo's webhooks: a
/// parameter patched through `kudo.dev/v1beta2` (the mutating and validating webhooks; the
/// `update` plan runs), an annotation patched through `kudo.dev/v1beta1` (the v1beta1 mutating
/// webhook, conversion both ways), and a LIST of the namespace's Instances through v1beta1
/// (conversion of each).
struct Load {
    stop: Arc<AtomicBool>,
    requests: Arc<Mutex<Vec<Request>>>,
    thread: Option<JoinHandle<()>>,
    started: f64,
}

impl Load {
    fn start(kubeconfig: &Path) -> Load {
        let stop = Arc::new(AtomicBool::new(false));
        let requests = Arc::new(Mutex::new(Vec::new()));
        let (flag, log, kubeconfig) = (stop.clone(), requests.clone(), kubeconfig.to_path_buf());
        let thread = std::thread::spawn(move || {
            let cluster = Cluster::new(&kubeconfig);
            let instances = |v: &str| {
                cluster.namespaced(NAMESPACE, &format!("kudo.dev/{v}"), "Instance", "instances")
            };
            let (v1beta1, v1beta2) = (instances("v1beta1"), instances("v1beta2"));
            let mut n = 0u64;
            while !flag.load(Ordering::SeqCst) {
                let (at, started) = (unix_now(), Instant::now());
                let what = [
                    "patch v1beta2 parameter",
                    "patch v1beta1 annotation",
                    "list v1beta1",
                ][(n % 3) as usize];
                let params = PatchParams::default();
                let result = cluster.runtime.block_on(async {
                    match n % 3 {
                        0 => {
                            let k00 = format!("w{n}");
                            let patch = json!({"spec": {"parameters": {"settings": {"k00": k00}}}});
                            v1beta2
                                .patch(LOADED, &params, &Patch::Merge(patch))
                                .await
                                .map(drop)
                        }
                        1 => {
                            let tick = n.to_string();
                            let patch =
                                json!({"metadata": {"annotations": {"e2e.kudo.dev/tick": tick}}});
                            v1beta1
                                .patch(LOADED, &params, &Patch::Merge(patch))
                                .await
                                .map(drop)
                        }
                        _ => v1beta1.list(&Default::default()).await.map(drop),
                    }
                });
                log.lock().unwrap_or_else(|e| e.into_inner()).push(Request {
                    what,
                    at,
                    took: started.elapsed(),
                    error: result.err().map(|e| e.to_string()),
                });
                n += 1;
                std::thread::sleep(Duration::from_millis(100));
            }
        });
        Load {
            stop,
            requests,
            thread: Some(thread),
            started: unix_now(),
        }
    }

    /// The requests sent from `from` (Unix seconds) to `to`.
    fn between(&self, from: f64, to: f64) -> Vec<Request> {
        let all = self.requests.lock().unwrap_or_else(|e| e.into_inner());
        all.iter()
            .filter(|r| r.at >= from && r.at <= to)
            .cloned()
            .collect()
    }

    /// Stops the loop: every request it sent. Panics when the loop itself did.
    fn finish(mut self) -> Vec<Request> {
        assert!(self.stop(), "the loop of requests panicked");
        self.requests
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Stops the loop; whether it ended without panicking.
    fn stop(&mut self) -> bool {
        self.stop.store(true, Ordering::SeqCst);
        self.thread.take().is_none_or(|t| t.join().is_ok())
    }
}

impl Drop for Load {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Fails naming every request that failed, or when there were too few to tell (at least one
/// every 3 s is expected: the loop sends about 7 a second).
fn none_failed(requests: &[Request], during: &str, seconds: f64) {
    assert!(
        requests.len() as f64 >= seconds / 3.0,
        "only {} requests in {seconds:.0} s {during}",
        requests.len()
    );
    let failed: Vec<String> = requests
        .iter()
        .filter_map(|r| {
            r.error
                .as_ref()
                .map(|e| format!("  {} at {:.1}: {e}", r.what, r.at))
        })
        .collect();
    assert!(
        failed.is_empty(),
        "{} of {} requests failed {during}:\n{}",
        failed.len(),
        requests.len(),
        failed.join("\n")
    );
}

/// The longest write and the longest LIST of `requests`, in ms.
fn longest(requests: &[Request]) -> (u128, u128) {
    let max = |writes: bool| {
        requests
            .iter()
            .filter(|r| r.is_write() == writes)
            .map(|r| r.took.as_millis())
            .max()
            .unwrap_or(0)
    };
    (max(true), max(false))
}

// ---------------------------------------------------------------------------------------------
// The scenario

#[test]
fn the_in_cluster_installation_fails_over_and_renews_its_certificate_refusing_no_request() {
    let name = "in_cluster";
    match kubeconfig_from(std::env::var_os(KUBECONFIG_VAR)) {
        Ok(_) => {}
        Err(message) if kudo_testkit::in_ci() => {
            panic!("{name}: CI is set, and the end-to-end suite has no cluster: {message}")
        }
        Err(message) => {
            say(&format!("{name}: {message}"));
            return;
        }
    }
    let Some(shared) = kudo_testkit::shared() else {
        return;
    };
    // Beside the other scenarios (its own ports and state), but not beside those that have the
    // shared cluster to themselves: they measure failover times.
    let _shared = CLUSTER.read().unwrap_or_else(|e| e.into_inner());
    // Built first (by `.ci/run` already): the fake kubelets run them from where they are.
    let bin = |name: &str| std::path::absolute(workspace_bin(name)).expect("an absolute path");
    let (manager, webhook) = (bin("kudo-manager"), bin("kudo-webhook"));
    let started = Instant::now();
    let control_plane = ControlPlane::start(&shared.join("k8s"), &manager, &webhook);
    say(&format!(
        "in-cluster: control plane started in {:.1} s",
        started.elapsed().as_secs_f64()
    ));
    let c = Cluster::new(&control_plane.kubeconfig);

    // 1. `kudo init` as users run it: the Deployments, the Service, self-managed certificates.
    let started = Instant::now();
    c.kudo(&[
        "init",
        "--wait",
        "--wait-time",
        "3m",
        "--webhook-cert-validity",
        CERT_VALIDITY,
        "--webhook-cert-renew-before",
        CERT_RENEW_BEFORE,
    ])
    .assert()
    .success();
    let init_returned = started.elapsed();
    wait_until("both webhook replicas and the manager are ready", || {
        let ready = |d: &Value| d["status"]["readyReplicas"].as_i64().unwrap_or(0);
        ready(&c.deployment(kudo_crd::labels::WEBHOOK)) == 2
            && ready(&c.deployment(kudo_crd::labels::MANAGER)) == 1
    });
    say(&format!(
        "in-cluster: kudo init --wait returned in {:.1} s; both Deployments ready in {:.1} s",
        init_returned.as_secs_f64(),
        started.elapsed().as_secs_f64()
    ));
    let webhooks = c.ready_pods(kudo_crd::labels::WEBHOOK);
    assert_eq!(webhooks.len(), 2, "{webhooks:?}");
    for (pod, ip) in &webhooks {
        assert!(
            ip.starts_with("127.3."),
            "Pod {pod} runs with a Pod IP: {ip:?}"
        );
    }
    let managers = c.ready_pods(kudo_crd::labels::MANAGER);
    assert_eq!(managers.len(), 1, "{managers:?}");
    let leader = c.lease_holder().expect("the manager holds its Lease");
    assert_eq!(leader, managers[0].0, "the Lease names the manager's Pod");
    // The API server calls the Service (no URL), trusting the CA the webhook injected itself.
    let (ca, first_cert, _) = c.certificate();
    for (what, bundle) in c.ca_bundles() {
        assert_eq!(bundle, b64(&ca), "{what} trusts the Secret's CA");
    }
    let crds = c.crds();
    let crd = c
        .get(&crds, "instances.kudo.dev")
        .expect("the Instance CRD");
    let client_config = &crd["spec"]["conversion"]["webhook"]["clientConfig"];
    assert_eq!(
        client_config["service"]["name"],
        kudo_crd::labels::WEBHOOK,
        "{client_config}"
    );
    assert!(client_config["url"].is_null(), "{client_config}");

    // 2. An operator installed through the in-cluster webhooks and run by the in-cluster manager.
    let ns = c.cluster_api("v1", "Namespace", "namespaces");
    let namespace: DynamicObject = serde_json::from_value(
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}),
    )
    .expect("a Namespace");
    c.runtime
        .block_on(ns.create(&Default::default(), &namespace))
        .expect("the namespace is created");
    let package = configs();
    for instance in [INSTANCE, LOADED] {
        let started = Instant::now();
        c.install_in(NAMESPACE, &package, instance).ok();
        say(&format!(
            "in-cluster: kudo install --wait ({instance}) COMPLETE in {:.1} s",
            started.elapsed().as_secs_f64()
        ));
    }
    let instances =
        |v: &str| c.namespaced(NAMESPACE, &format!("kudo.dev/{v}"), "Instance", "instances");
    let installed = c
        .get(&instances("v1beta2"), INSTANCE)
        .expect("the Instance");
    assert_eq!(
        installed["status"]["planStatus"]["deploy"]["status"], "COMPLETE",
        "{installed}"
    );
    // The mutating webhook stamped who wrote it; a v1beta1 read converts through the webhook.
    assert_eq!(
        installed["metadata"]["annotations"][kudo_crd::labels::CHANGED_BY],
        "admin",
        "{installed}"
    );
    let old = c
        .get(&instances("v1beta1"), INSTANCE)
        .expect("the Instance through v1beta1");
    assert_eq!(old["apiVersion"], "kudo.dev/v1beta1");
    assert_eq!(
        old["spec"]["operatorVersion"]["name"], installed["spec"]["operatorVersion"]["name"],
        "{old}"
    );

    // From here on, requests go through the webhooks all the time.
    let load = Load::start(&control_plane.kubeconfig);

    // 3. The manager's Pod deleted: the replacement takes the Lease and runs the next plan.
    let deleted = Instant::now();
    c.delete_pod(&leader);
    let mut successor = String::new();
    let failover = wait_for(
        "a new manager Pod holds the Lease",
        TIMEOUT,
        Duration::from_millis(100),
        || match c.lease_holder() {
            Some(h) if h != leader && c.pod_exists(&h) => {
                successor = h;
                true
            }
            _ => false,
        },
    );
    assert!(successor.starts_with("kudo-manager-"), "{successor}");
    let started = Instant::now();
    c.update_in(NAMESPACE, INSTANCE).param("replicas=2").ok();
    let updated = started.elapsed();
    let cm = c.get(
        &c.namespaced(NAMESPACE, "v1", "ConfigMap", "configmaps"),
        &format!("{INSTANCE}-config"),
    );
    assert_eq!(cm.expect("the ConfigMap")["data"]["replicas"], "2");
    say(&format!(
        "in-cluster: manager Pod {leader} deleted; {successor} held the Lease after {:.1} s; \
         kudo update --wait COMPLETE in {:.1} s ({:.1} s after the deletion)",
        failover.as_secs_f64(),
        updated.as_secs_f64(),
        deleted.elapsed().as_secs_f64()
    ));

    // 4. A webhook Pod deleted while requests go on: the other one answers, a new one comes.
    let before = c.ready_pods(kudo_crd::labels::WEBHOOK);
    assert_eq!(before.len(), 2, "{before:?}");
    let (victim, _) = before[0].clone();
    let from = unix_now();
    c.delete_pod(&victim);
    let replaced = wait_for(
        "the webhook Pod is replaced",
        TIMEOUT,
        Duration::from_millis(200),
        || {
            let now = c.ready_pods(kudo_crd::labels::WEBHOOK);
            !c.pod_exists(&victim) && now.len() == 2 && now.iter().all(|(p, _)| *p != victim)
        },
    );
    // A few seconds more through the replacement.
    std::thread::sleep(Duration::from_secs(5));
    let until = unix_now();
    let during = load.between(from, until);
    none_failed(
        &during,
        "while a webhook Pod was deleted and replaced",
        until - from,
    );
    let (write, list) = longest(&during);
    say(&format!(
        "in-cluster: webhook Pod {victim} deleted and replaced in {:.1} s; {} requests meanwhile, \
         none refused; longest write {write} ms, LIST {list} ms",
        replaced.as_secs_f64(),
        during.len()
    ));

    // 5. The certificate renewed while requests go on: a renewal made after the loop started,
    // the CA bundles following it, every replica serving it.
    let mut renewed_at = 0.0;
    let mut current = (String::new(), String::new());
    let waited = wait_for(
        "the webhook renews its certificate",
        Duration::from_secs(4 * CERT_VALIDITY_SECS as u64),
        Duration::from_millis(500),
        || {
            let (ca, cert, not_after) = c.certificate();
            let issued = (not_after - CERT_VALIDITY_SECS) as f64;
            if cert != first_cert && issued > load.started + 1.0 {
                renewed_at = issued;
                current = (ca, cert);
                true
            } else {
                false
            }
        },
    );
    let blocks = kudo_webhook::certs::pem_blocks(&current.0);
    assert_eq!(
        blocks.len(),
        2,
        "the new CA, then the previous one (still valid)"
    );
    let mut serving = Vec::new();
    let followed = wait_for(
        "the CA bundles follow and every webhook replica serves the renewed certificate",
        TIMEOUT,
        Duration::from_millis(500),
        || {
            // Compared with the Secret as it is now: another renewal may have come since.
            let (ca, cert, _) = c.certificate();
            let bundles_follow = c.ca_bundles().iter().all(|(_, b)| *b == b64(&ca));
            let want = first_certificate(&cert);
            serving = c
                .ready_pods(kudo_crd::labels::WEBHOOK)
                .into_iter()
                .map(|(pod, ip)| (pod, served_certificate(&ip) == want))
                .collect();
            bundles_follow && serving.len() == 2 && serving.iter().all(|(_, new)| *new)
        },
    );
    let until = unix_now();
    let during = load.between(renewed_at, until);
    let loop_started = load.started;
    let all = load.finish();
    none_failed(
        &during,
        "while the certificate was renewed",
        until - renewed_at,
    );
    none_failed(&all, "during the scenario", until - loop_started);
    let (write, list) = longest(&during);
    say(&format!(
        "in-cluster: certificate renewed {:.0} s after the loop started (waited {:.0} s), \
         served by both replicas {:.0} s after it was made; {} requests meanwhile, none refused; \
         longest write {write} ms, LIST {list} ms",
        renewed_at - loop_started,
        waited.as_secs_f64(),
        until - renewed_at,
        during.len(),
    ));
    let (write, list) = longest(&all);
    say(&format!(
        "in-cluster: {} requests through the webhooks in {:.0} s, none refused; longest write \
         {write} ms, LIST {list} ms (waited {:.0} s for the bundles and replicas)",
        all.len(),
        until - loop_started,
        followed.as_secs_f64()
    ));
}
