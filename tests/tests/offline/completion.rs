//! Shell completion as the shell drives it: `kudo completion SHELL` prints the dynamic engine's
//! registration script, and `COMPLETE=bash kudo -- WORDS` (what that script runs at each TAB,
//! with the variables bash's script sets) answers with candidates: subcommands and flags from
//! the command line's definition, Instance names, plan names and namespaces from the cluster.
//! The cluster here is a small fake API server on 127.0.0.1 that answers the few lists and
//! reads completion makes (and records them); no cluster, a cluster that never answers: no
//! candidates, no error, exit 0, quickly.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use kudo_testkit::kudo;

/// What bash's registration script runs for the words `words` with the cursor on word `index`
/// (`kudo` is word 0): the candidates, one a line, and the process's output.
fn complete(words: &[&str], index: usize, env: &[(&str, &str)]) -> (Vec<String>, Duration) {
    let mut cmd = kudo();
    cmd.env("COMPLETE", "bash")
        .env("_CLAP_COMPLETE_INDEX", index.to_string())
        .env("_CLAP_COMPLETE_COMP_TYPE", "9")
        .env("_CLAP_COMPLETE_SPACE", "false")
        .env("_CLAP_IFS", "\n")
        .arg("--")
        .args(words);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let started = Instant::now();
    let out = cmd.output().unwrap();
    let took = started.elapsed();
    assert!(out.status.success(), "{words:?}: {out:?}");
    assert!(out.stderr.is_empty(), "{words:?}: stderr {out:?}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    (stdout.lines().map(String::from).collect(), took)
}

/// The candidates of [`complete`] but flags (clap adds a command's flags to the values of an
/// empty positional).
fn names(words: &[&str], index: usize, env: &[(&str, &str)]) -> Vec<String> {
    let (mut candidates, _) = complete(words, index, env);
    candidates.retain(|c| !c.starts_with('-'));
    candidates
}

#[test]
fn completion_prints_the_dynamic_registration_script() {
    for (shell, marker) in [
        ("bash", "complete -o nospace"),
        ("zsh", "#compdef kudo"),
        ("fish", "complete --keep-order --exclusive --command kudo"),
    ] {
        let out = kudo().args(["completion", shell]).output().unwrap();
        assert!(out.status.success(), "{out:?}");
        let script = String::from_utf8(out.stdout).unwrap();
        assert!(script.contains(marker), "{shell}: {script}");
        // the shell calls kudo back, with the engine's variable
        assert!(
            script.contains(&format!("COMPLETE={shell}"))
                || script.contains(&format!("COMPLETE=\"{shell}\"")),
            "{shell}: {script}"
        );
        assert!(
            script.contains(kudo_testkit::kudo_bin().to_str().unwrap()),
            "{shell}: {script}"
        );
        // the same as the engine's own `COMPLETE=SHELL kudo`
        let env = kudo().env("COMPLETE", shell).output().unwrap();
        assert!(env.status.success(), "{env:?}");
        assert_eq!(String::from_utf8(env.stdout).unwrap(), script, "{shell}");
        // -n is accepted and ignored
        let with_n = kudo()
            .args(["completion", shell, "-n", "x"])
            .output()
            .unwrap();
        assert_eq!(String::from_utf8(with_n.stdout).unwrap(), script, "{shell}");
    }
}

#[test]
fn subcommands_flags_and_value_enums_complete_offline() {
    assert_eq!(complete(&["kudo", "unin"], 1, &[]).0, ["uninstall"]);
    assert_eq!(complete(&["kudo", "plan", "tr"], 2, &[]).0, ["trigger"]);
    assert_eq!(complete(&["kudo", "completion", "fi"], 2, &[]).0, ["fish"]);
    let (flags, _) = complete(&["kudo", "plan", "trigger", "--na"], 3, &[]);
    assert!(flags.contains(&"--name".to_string()), "{flags:?}");
    let (flags, _) = complete(&["kudo", "uninstall", "--inst"], 2, &[]);
    assert_eq!(flags, ["--instance"]);
}

#[test]
fn no_cluster_completes_no_names_silently_and_quickly() {
    for (words, index) in [
        (&["kudo", "uninstall", ""][..], 2),
        (&["kudo", "uninstall", "ka"], 2),
        (&["kudo", "plan", "trigger", "kafka", "--name", ""], 5),
        (&["kudo", "status", "-n", ""], 3),
        (&["kudo", "get", "instances", "k"], 3),
        (
            &["kudo", "uninstall", "--kubeconfig", "/nonexistent", "k"],
            4,
        ),
    ] {
        let (candidates, took) = complete(words, index, &[]);
        assert!(
            candidates.iter().all(|c| c.starts_with('-')),
            "{words:?}: {candidates:?}"
        );
        assert!(took < Duration::from_secs(5), "{words:?}: {took:?}");
    }
}

/// A fake API server: answers GETs from `routes` (path, JSON), 404 for anything else, and
/// records every request's path. With `silent`, accepts connections and never answers.
struct FakeApi {
    port: u16,
    requests: Arc<Mutex<Vec<String>>>,
}

impl FakeApi {
    fn start(routes: Vec<(&'static str, serde_json::Value)>, silent: bool) -> FakeApi {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let seen = requests.clone();
        std::thread::spawn(move || {
            let mut held = Vec::new();
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                if silent {
                    held.push(stream);
                    continue;
                }
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut line = String::new();
                if reader.read_line(&mut line).is_err() {
                    continue;
                }
                loop {
                    let mut header = String::new();
                    match reader.read_line(&mut header) {
                        Ok(0) | Err(_) => break,
                        Ok(_) if header == "\r\n" => break,
                        Ok(_) => {}
                    }
                }
                let path = line.split_whitespace().nth(1).unwrap_or("").to_string();
                let bare = path.split('?').next().unwrap_or("").to_string();
                seen.lock().unwrap().push(path);
                let (status, body) = match routes.iter().find(|(p, _)| *p == bare) {
                    Some((_, json)) => ("200 OK", json.to_string()),
                    None => (
                        "404 Not Found",
                        serde_json::json!({"kind": "Status", "apiVersion": "v1",
                            "status": "Failure", "reason": "NotFound", "code": 404})
                        .to_string(),
                    ),
                };
                let _ = write!(
                    stream,
                    "HTTP/1.1 {status}\r\nContent-Type: application/json\r\n\
                     Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            }
        });
        FakeApi { port, requests }
    }

    /// A kubeconfig naming this server, its context's namespace `team`.
    fn kubeconfig(&self, dir: &Path) -> PathBuf {
        let path = dir.join("kubeconfig");
        std::fs::write(
            &path,
            format!(
                "apiVersion: v1\nkind: Config\n\
                 clusters: [{{name: fake, cluster: {{server: 'http://127.0.0.1:{}'}}}}]\n\
                 users: [{{name: u, user: {{token: t}}}}]\n\
                 contexts: [{{name: fake, context: {{cluster: fake, user: u, namespace: team}}}}]\n\
                 current-context: fake\n",
                self.port
            ),
        )
        .unwrap();
        path
    }

    fn requests(&self) -> Vec<String> {
        self.requests.lock().unwrap().clone()
    }
}

/// A metadata-only list of objects named `names`.
fn metadata_list(names: &[&str]) -> serde_json::Value {
    serde_json::json!({
        "apiVersion": "meta.k8s.io/v1",
        "kind": "PartialObjectMetadataList",
        "metadata": {},
        "items": names.iter().map(|n| serde_json::json!({
            "apiVersion": "meta.k8s.io/v1",
            "kind": "PartialObjectMetadata",
            "metadata": {"name": n}
        })).collect::<Vec<_>>()
    })
}

fn operator_version(name: &str, plans: &[&str]) -> serde_json::Value {
    let plans: serde_json::Map<_, _> = plans
        .iter()
        .map(|p| {
            (
                p.to_string(),
                serde_json::json!({"strategy": "serial", "phases": []}),
            )
        })
        .collect();
    serde_json::json!({
        "apiVersion": "kudo.dev/v1beta2", "kind": "OperatorVersion",
        "metadata": {"name": name, "namespace": "team"},
        "spec": {"plans": plans}
    })
}

const KUDO: &str = "/apis/kudo.dev/v1beta2/namespaces";

#[test]
fn names_come_from_the_cluster_the_command_line_names() {
    let api = FakeApi::start(
        vec![
            (
                "/apis/kudo.dev/v1beta2/namespaces/team/instances",
                metadata_list(&["kafka", "kafka-2", "zk"]),
            ),
            (
                "/apis/kudo.dev/v1beta2/namespaces/other/instances",
                metadata_list(&["other-kafka"]),
            ),
            (
                "/apis/kudo.dev/v1beta2/namespaces/team/operators",
                metadata_list(&["kafka", "zookeeper"]),
            ),
            (
                "/apis/kudo.dev/v1beta2/namespaces/team/instances/kafka",
                serde_json::json!({
                    "apiVersion": "kudo.dev/v1beta2", "kind": "Instance",
                    "metadata": {"name": "kafka", "namespace": "team"},
                    "spec": {"operatorVersion": {"name": "kafka-1.0.0"}}
                }),
            ),
            (
                "/apis/kudo.dev/v1beta2/namespaces/team/operatorversions/kafka-1.0.0",
                operator_version("kafka-1.0.0", &["deploy", "backup", "restore"]),
            ),
            (
                "/apis/kudo.dev/v1beta2/namespaces/team/operatorversions",
                serde_json::json!({
                    "apiVersion": "kudo.dev/v1beta2", "kind": "OperatorVersionList",
                    "metadata": {},
                    "items": [
                        operator_version("kafka-1.0.0", &["deploy", "backup"]),
                        operator_version("zk-3.4.0", &["deploy", "update"]),
                    ]
                }),
            ),
            (
                "/api/v1/namespaces",
                metadata_list(&["default", "kube-system", "team"]),
            ),
        ],
        false,
    );
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = api.kubeconfig(dir.path());
    let kc = kubeconfig.to_str().unwrap();
    let env = [("KUBECONFIG", kc)];

    // $KUBECONFIG and its context's namespace
    assert_eq!(
        names(&["kudo", "uninstall", "ka"], 2, &env),
        ["kafka", "kafka-2"]
    );
    assert_eq!(
        names(&["kudo", "plan", "status", "--instance", "k"], 4, &env),
        ["kafka", "kafka-2"]
    );
    // --kubeconfig typed on the line, and -n
    for words in [
        &["kudo", "update", "--kubeconfig", kc, "-n", "other", ""][..],
        &[
            "kudo",
            "update",
            "--kubeconfig",
            kc,
            "--namespace=other",
            "",
        ],
    ] {
        assert_eq!(
            names(words, words.len() - 1, &[]),
            ["other-kafka"],
            "{words:?}"
        );
    }
    // get: the kind it lists
    assert_eq!(
        names(&["kudo", "get", "operators", ""], 3, &env),
        ["kafka", "zookeeper"]
    );
    // plan trigger --name: the plans of the Instance's OperatorVersion
    assert_eq!(
        names(&["kudo", "plan", "trigger", "kafka", "--name", ""], 5, &env),
        ["backup", "deploy", "restore"]
    );
    assert_eq!(
        names(
            &[
                "kudo",
                "plan",
                "trigger",
                "--name",
                "re",
                "--instance",
                "kafka"
            ],
            4,
            &env
        ),
        ["restore"]
    );
    // no Instance yet: the plans of every OperatorVersion of the namespace
    assert_eq!(
        names(&["kudo", "plan", "trigger", "--name", ""], 4, &env),
        ["backup", "deploy", "update"]
    );
    // an Instance that is not there: nothing
    assert!(names(&["kudo", "plan", "trigger", "nope", "--name", ""], 5, &env).is_empty());
    // namespaces
    assert_eq!(
        names(&["kudo", "uninstall", "-n", ""], 3, &env),
        ["default", "kube-system", "team"]
    );
    assert_eq!(
        names(&["kudo", "install", ".", "--namespace", "t"], 4, &env),
        ["team"]
    );

    let requests = api.requests();
    assert!(
        requests
            .iter()
            .any(|r| r.starts_with(&format!("{KUDO}/other/instances"))),
        "{requests:?}"
    );
}

#[test]
fn a_cluster_that_never_answers_completes_nothing_within_the_timeout() {
    let api = FakeApi::start(Vec::new(), true);
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = api.kubeconfig(dir.path());
    let (candidates, took) = complete(
        &["kudo", "uninstall", "k"],
        2,
        &[("KUBECONFIG", kubeconfig.to_str().unwrap())],
    );
    assert!(candidates.is_empty(), "{candidates:?}");
    assert!(took < Duration::from_secs(5), "{took:?}");
}
