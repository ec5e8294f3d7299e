//! KUDO's Pipe task, the part that needs no cluster: what the task says, the checks on its
//! Pod, the Pod that runs it, and the ConfigMap or Secret each file becomes.
//!
//! A Pipe task names a Pod template (`spec.pod`) and files (`spec.pipe`: `file` or `envFile`,
//! `kind` `Secret` or `ConfigMap`, `key`). As in KUDO:
//! 1. the Pod must have exactly one init container (it writes the files) and no container,
//!    one `emptyDir` volume mounted in the init container, every file under that mount, and
//!    `restartPolicy` unset or `OnFailure` ([`check_pod`]);
//! 2. kudo runs it with a `waiter` container added (busybox, `sleep infinity`, the same volume
//!    at the same path), `restartPolicy: OnFailure` and the annotation `kudo.dev/pipepod`
//!    ([`pipe_pod`]), named [`artifact_name`]`(…, "pipepod")`;
//! 3. once the Pod is Ready (the init container succeeded), each file is read from the waiter
//!    (at most [`MAX_FILE_SIZE`] bytes) and becomes a ConfigMap (`binaryData`) or an Opaque
//!    Secret (`data`) named [`artifact_name`]`(…, key)`, its one key the file's base name; an
//!    `envFile` becomes one entry per `KEY=VALUE` line ([`artifact`]);
//! 4. the Pod is deleted. Templates reach each artifact's name as `{{ .Pipes.KEY }}`.

use base64::Engine as _;
use serde_json::{Value, json};

use crate::package::Task;

/// Largest file a Pipe task copies (a ConfigMap or Secret holds at most 1 MiB).
pub const MAX_FILE_SIZE: usize = 1024 * 1024;
/// The container kudo adds to the Pipe Pod, from which the files are read.
pub const WAITER: &str = "waiter";
/// The annotation marking a Pipe Pod.
pub const ANNOTATION: &str = "kudo.dev/pipepod";

/// What a file becomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArtifactKind {
    /// A Secret (type Opaque).
    Secret,
    /// A ConfigMap.
    ConfigMap,
}

/// One file of a Pipe task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PipeFile {
    /// Its path in the Pod.
    pub path: String,
    /// An env file (`KEY=VALUE` lines, one entry each) rather than one file.
    pub env_file: bool,
    /// What it becomes.
    pub kind: ArtifactKind,
    /// Its key in `.Pipes`.
    pub key: String,
}

/// A Pipe task's `spec`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PipeTask {
    /// The Pod template, under `templates/`.
    pub pod: String,
    /// The files.
    pub files: Vec<PipeFile>,
}

/// What is wrong with a Pipe task, its Pod or a file it produced (KUDO's rules).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PipeError {
    /// The task names no Pod template.
    #[error("Pipe task `{0}` has no `spec.pod` template")]
    NoPod(String),
    /// The task lists no files.
    #[error("Pipe task `{0}` has no `spec.pipe` files")]
    NoFiles(String),
    /// A file entry with both or neither of `file` and `envFile`.
    #[error("Pipe task `{task}` file {index}: give exactly one of `file` and `envFile`")]
    FileOrEnvFile {
        /// The task.
        task: String,
        /// The entry's index in `spec.pipe`.
        index: usize,
    },
    /// A file whose `kind` is neither Secret nor ConfigMap.
    #[error("Pipe task `{task}` file {path}: kind {} is neither Secret nor ConfigMap", kind.as_deref().unwrap_or("(none)"))]
    Kind {
        /// The task.
        task: String,
        /// The file.
        path: String,
        /// The kind given, if any.
        kind: Option<String>,
    },
    /// A file without a `key`.
    #[error("Pipe task `{task}` file {path}: no `key`")]
    NoKey {
        /// The task.
        task: String,
        /// The file.
        path: String,
    },
    /// Two files with one key.
    #[error("Pipe task `{task}`: key `{key}` is used twice")]
    DuplicateKey {
        /// The task.
        task: String,
        /// The key.
        key: String,
    },
    /// The Pod has containers.
    #[error("the Pipe Pod must have no containers: its init container writes the files")]
    Containers,
    /// The Pod has no init container, or several.
    #[error("the Pipe Pod must have exactly one init container")]
    InitContainers,
    /// The Pod restarts otherwise than on failure.
    #[error("the Pipe Pod's restartPolicy must be OnFailure (or unset), not {0}")]
    RestartPolicy(String),
    /// The Pod has no emptyDir volume, or several.
    #[error("the Pipe Pod must have exactly one emptyDir volume, where its files are written")]
    Volume,
    /// The init container does not mount the shared volume.
    #[error("the Pipe Pod's init container must mount the volume `{0}`")]
    Mount(String),
    /// A file outside the shared volume.
    #[error("pipe file {path} must be under the shared volume's mount path {mount}")]
    Outside {
        /// The file.
        path: String,
        /// Where the volume is mounted.
        mount: String,
    },
    /// A file name a ConfigMap or Secret key cannot be.
    #[error("pipe file name {0} must consist of letters, digits, '.', '_' and '-'")]
    FileName(String),
    /// An env file that is not `KEY=VALUE` lines.
    #[error("env file {path}: {problem}")]
    EnvFile {
        /// The file.
        path: String,
        /// What is wrong, and on which line.
        problem: EnvFileProblem,
    },
}

/// What is wrong with an env file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EnvFileProblem {
    /// It is not UTF-8.
    #[error("is not UTF-8")]
    NotUtf8,
    /// A line without `=`.
    #[error("line {0}: not KEY=VALUE")]
    NotKeyValue(usize),
    /// A key that is not a C identifier.
    #[error("line {line}: `{key}` is not a variable name")]
    Key {
        /// The 1-based line.
        line: usize,
        /// The key.
        key: String,
    },
}

impl PipeTask {
    /// Reads a Pipe task's `spec`; `Err` says what is wrong with it.
    pub fn of(task: &Task) -> Result<PipeTask, PipeError> {
        let name = &task.name;
        let pod = task
            .spec
            .get("pod")
            .and_then(Value::as_str)
            .ok_or_else(|| PipeError::NoPod(name.clone()))?
            .to_string();
        let list = task
            .spec
            .get("pipe")
            .and_then(Value::as_array)
            .filter(|l| !l.is_empty())
            .ok_or_else(|| PipeError::NoFiles(name.clone()))?;
        let mut files: Vec<PipeFile> = Vec::new();
        for (i, f) in list.iter().enumerate() {
            let text = |k: &str| f.get(k).and_then(Value::as_str).filter(|s| !s.is_empty());
            let (path, env_file) = match (text("file"), text("envFile")) {
                (Some(p), None) => (p, false),
                (None, Some(p)) => (p, true),
                _ => {
                    return Err(PipeError::FileOrEnvFile {
                        task: name.clone(),
                        index: i,
                    });
                }
            };
            let kind = match text("kind") {
                Some("Secret") => ArtifactKind::Secret,
                Some("ConfigMap") => ArtifactKind::ConfigMap,
                other => {
                    return Err(PipeError::Kind {
                        task: name.clone(),
                        path: path.to_string(),
                        kind: other.map(String::from),
                    });
                }
            };
            let key = text("key")
                .ok_or_else(|| PipeError::NoKey {
                    task: name.clone(),
                    path: path.to_string(),
                })?
                .to_string();
            if files.iter().any(|f| f.key == key) {
                return Err(PipeError::DuplicateKey {
                    task: name.clone(),
                    key,
                });
            }
            files.push(PipeFile {
                path: path.to_string(),
                env_file,
                kind,
                key,
            });
        }
        Ok(PipeTask { pod, files })
    }
}

/// A right a Pipe task needs in the Instance's namespace, as an RBAC rule names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Right {
    /// `create`, `get`, `patch`, `delete`.
    pub verb: &'static str,
    /// `pods`, `pods/exec`, `secrets`, `configmaps` (core group).
    pub resource: &'static str,
}

impl Right {
    /// The resource and subresource, as an access review names them: `pods/exec` is
    /// (`pods`, `exec`).
    pub fn parts(&self) -> (&'static str, Option<&'static str>) {
        match self.resource.split_once('/') {
            Some((resource, sub)) => (resource, Some(sub)),
            None => (self.resource, None),
        }
    }
}

impl std::fmt::Display for Right {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.verb, self.resource)
    }
}

/// The rights running `task` takes, with the identity the manager acts with for the Instance:
/// the Pod applied (server-side apply: `patch`, and `create` when it is new), read and deleted;
/// `exec` into it to read the files (`create` is what a POST asks, `get` what a WebSocket
/// upgrade asks on API servers before 1.31); each file's ConfigMap or Secret applied.
pub fn rights(task: &PipeTask) -> Vec<Right> {
    let mut out: Vec<Right> = [
        ("create", "pods"),
        ("patch", "pods"),
        ("get", "pods"),
        ("delete", "pods"),
        ("create", "pods/exec"),
        ("get", "pods/exec"),
    ]
    .into_iter()
    .map(|(verb, resource)| Right { verb, resource })
    .collect();
    for file in &task.files {
        let resource = match file.kind {
            ArtifactKind::Secret => "secrets",
            ArtifactKind::ConfigMap => "configmaps",
        };
        for verb in ["create", "patch"] {
            let r = Right { verb, resource };
            if !out.contains(&r) {
                out.push(r);
            }
        }
    }
    out
}

/// The Pipe tasks of plan `plan` of `op` (every plan when `None`), each with the rights it
/// takes ([`rights`]), in plan order, each task once. Tasks that are not valid Pipe tasks are
/// left out: running them reports why.
pub fn plan_rights(op: &crate::package::Operator, plan: Option<&str>) -> Vec<(String, Vec<Right>)> {
    let mut out: Vec<(String, Vec<Right>)> = Vec::new();
    let plans = op
        .plans
        .iter()
        .filter(|(name, _)| plan.is_none_or(|p| p == name.as_str()));
    for (_, p) in plans {
        for name in p
            .phases
            .iter()
            .flat_map(|ph| &ph.steps)
            .flat_map(|s| &s.tasks)
        {
            let Some(task) = op.task(name) else { continue };
            if task.kind != crate::package::TaskKind::Pipe || out.iter().any(|(t, _)| t == name) {
                continue;
            }
            if let Ok(spec) = PipeTask::of(task) {
                out.push((name.clone(), rights(&spec)));
            }
        }
    }
    out
}

/// KUDO's name of what a Pipe task makes: instance, plan, phase, step, task and `suffix` (a
/// key, or `pipepod`), each lower-cased with everything but `a-z0-9` removed, joined with `.`.
pub fn artifact_name(parts: &[&str]) -> String {
    parts
        .iter()
        .map(|p| {
            p.to_lowercase()
                .chars()
                .filter(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join(".")
}

/// The shared volume of a Pipe Pod and where the init container mounts it.
fn shared(pod: &Value) -> Result<(String, String), PipeError> {
    let spec = &pod["spec"];
    let volumes: Vec<&str> = spec["volumes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|v| v.get("emptyDir").is_some())
        .filter_map(|v| v["name"].as_str())
        .collect();
    let [volume] = volumes[..] else {
        return Err(PipeError::Volume);
    };
    let mount = spec["initContainers"][0]["volumeMounts"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|m| m["name"] == volume)
        .and_then(|m| m["mountPath"].as_str())
        .ok_or_else(|| PipeError::Mount(volume.to_string()))?;
    Ok((volume.to_string(), mount.to_string()))
}

/// KUDO's checks of a Pipe task's rendered Pod.
pub fn check_pod(pod: &Value, files: &[PipeFile]) -> Result<(), PipeError> {
    let spec = &pod["spec"];
    if spec["containers"].as_array().is_some_and(|c| !c.is_empty()) {
        return Err(PipeError::Containers);
    }
    if spec["initContainers"].as_array().map_or(0, Vec::len) != 1 {
        return Err(PipeError::InitContainers);
    }
    match spec["restartPolicy"].as_str() {
        None | Some("") | Some("OnFailure") => {}
        Some(other) => {
            return Err(PipeError::RestartPolicy(other.to_string()));
        }
    }
    let (_, mount) = shared(pod)?;
    let base = mount.trim_end_matches('/');
    for f in files {
        let inside = f
            .path
            .strip_prefix(base)
            .is_some_and(|rest| rest.starts_with('/') && rest.len() > 1)
            && !f.path.split('/').any(|part| part == "..");
        if !inside {
            return Err(PipeError::Outside {
                path: f.path.clone(),
                mount,
            });
        }
        let name = base_name(&f.path);
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_'))
        {
            return Err(PipeError::FileName(name.to_string()));
        }
    }
    Ok(())
}

fn base_name(path: &str) -> &str {
    path.trim_end_matches('/').rsplit('/').next().unwrap_or("")
}

/// The Pod kudo runs for a checked Pipe Pod: named `name`, annotated, `restartPolicy:
/// OnFailure`, with the [`WAITER`] container mounting the shared volume.
pub fn pipe_pod(mut pod: Value, name: &str) -> Result<Value, PipeError> {
    let (volume, mount) = shared(&pod)?;
    pod["metadata"]["name"] = json!(name);
    pod["metadata"]["annotations"][ANNOTATION] = json!("true");
    pod["spec"]["restartPolicy"] = json!("OnFailure");
    pod["spec"]["containers"] = json!([{
        "name": WAITER,
        "image": "busybox",
        "command": ["/bin/sh", "-c"],
        "args": ["sleep infinity"],
        "volumeMounts": [{"name": volume, "mountPath": mount}],
    }]);
    Ok(pod)
}

/// The ConfigMap or Secret (named `name`) a file's `data` becomes.
pub fn artifact(file: &PipeFile, name: &str, data: &[u8]) -> Result<Value, PipeError> {
    let b64 = |d: &[u8]| base64::engine::general_purpose::STANDARD.encode(d);
    let entries: Vec<(String, Vec<u8>)> = if file.env_file {
        env_entries(data).map_err(|problem| PipeError::EnvFile {
            path: file.path.clone(),
            problem,
        })?
    } else {
        vec![(base_name(&file.path).to_string(), data.to_vec())]
    };
    Ok(match file.kind {
        ArtifactKind::Secret => {
            let data: serde_json::Map<String, Value> = entries
                .iter()
                .map(|(k, v)| (k.clone(), json!(b64(v))))
                .collect();
            json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name},
                "type": "Opaque", "data": data})
        }
        ArtifactKind::ConfigMap if file.env_file => {
            let data: serde_json::Map<String, Value> = entries
                .iter()
                .map(|(k, v)| (k.clone(), json!(String::from_utf8_lossy(v))))
                .collect();
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name},
                "data": data})
        }
        ArtifactKind::ConfigMap => {
            let data: serde_json::Map<String, Value> = entries
                .iter()
                .map(|(k, v)| (k.clone(), json!(b64(v))))
                .collect();
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name},
                "binaryData": data})
        }
    })
}

/// `KEY=VALUE` lines (kubectl's `--from-env-file`): blank lines and `#` comments skipped,
/// leading whitespace trimmed, the key a C identifier.
fn env_entries(data: &[u8]) -> Result<Vec<(String, Vec<u8>)>, EnvFileProblem> {
    let text = std::str::from_utf8(data).map_err(|_| EnvFileProblem::NotUtf8)?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim_start();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (key, value) = line
            .split_once('=')
            .ok_or(EnvFileProblem::NotKeyValue(i + 1))?;
        let valid = key
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid {
            return Err(EnvFileProblem::Key {
                line: i + 1,
                key: key.to_string(),
            });
        }
        out.push((key.to_string(), value.as_bytes().to_vec()));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::package::TaskKind;

    #[test]
    fn a_pipe_task_takes_pods_exec_and_its_artifacts_kinds() {
        let t = task(json!({"pod": "p.yaml", "pipe": [
            {"file": "/tmp/a", "kind": "Secret", "key": "a"},
            {"file": "/tmp/b", "kind": "Secret", "key": "b"}]}));
        let said: Vec<String> = rights(&PipeTask::of(&t).unwrap())
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            said,
            [
                "create pods",
                "patch pods",
                "get pods",
                "delete pods",
                "create pods/exec",
                "get pods/exec",
                "create secrets",
                "patch secrets"
            ]
        );
    }

    #[test]
    fn the_pipe_tasks_of_a_plan_are_found_once_each() {
        let doc = kudo_yaml::document::Document::parse(
            std::path::Path::new("operator.yaml"),
            r#"
name: x
tasks:
  - {name: gen, kind: Pipe, spec: {pod: p.yaml, pipe: [{file: /tmp/a, kind: ConfigMap, key: a}]}}
  - {name: app, kind: Apply, spec: {resources: [a.yaml]}}
plans:
  deploy: {phases: [{name: m, steps: [{name: s, tasks: [gen, app]}, {name: t, tasks: [gen]}]}]}
  update: {phases: [{name: m, steps: [{name: s, tasks: [app]}]}]}
"#,
        )
        .unwrap();
        let op = crate::package::Operator::parse(&doc).unwrap();
        let deploy = plan_rights(&op, Some("deploy"));
        assert_eq!(deploy.len(), 1);
        assert_eq!(deploy[0].0, "gen");
        assert!(deploy[0].1.contains(&Right {
            verb: "patch",
            resource: "configmaps"
        }));
        assert!(plan_rights(&op, Some("update")).is_empty());
        assert_eq!(plan_rights(&op, None).len(), 1);
    }

    fn task(spec: Value) -> Task {
        Task {
            name: "gen".into(),
            kind: TaskKind::Pipe,
            resources: Vec::new(),
            parameter: None,
            spec,
        }
    }

    fn pod() -> Value {
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x"},
            "spec": {"volumes": [{"name": "shared", "emptyDir": {}}],
                "initContainers": [{"name": "init", "image": "alpine",
                    "volumeMounts": [{"name": "shared", "mountPath": "/tmp/out"}]}]}})
    }

    fn file(path: &str) -> PipeFile {
        PipeFile {
            path: path.into(),
            env_file: false,
            kind: ArtifactKind::ConfigMap,
            key: "k".into(),
        }
    }

    #[test]
    fn a_pipe_spec_is_read_and_its_mistakes_named() {
        let t = PipeTask::of(&task(json!({"pod": "pod.yaml", "pipe": [
            {"file": "/tmp/out/a.txt", "kind": "ConfigMap", "key": "a"},
            {"envFile": "/tmp/out/env", "kind": "Secret", "key": "e"}]})))
        .unwrap();
        assert_eq!(t.pod, "pod.yaml");
        assert_eq!(t.files[1].kind, ArtifactKind::Secret);
        assert!(t.files[1].env_file);
        for (spec, says) in [
            (
                json!({"pipe": [{"file": "/a", "kind": "Secret", "key": "a"}]}),
                "spec.pod",
            ),
            (json!({"pod": "p.yaml"}), "spec.pipe"),
            (
                json!({"pod": "p.yaml", "pipe": [{"file": "/a", "envFile": "/b", "kind": "Secret", "key": "a"}]}),
                "exactly one",
            ),
            (
                json!({"pod": "p.yaml", "pipe": [{"file": "/a", "kind": "Job", "key": "a"}]}),
                "kind Job",
            ),
            (
                json!({"pod": "p.yaml", "pipe": [{"file": "/a", "kind": "Secret"}]}),
                "no `key`",
            ),
            (
                json!({"pod": "p.yaml", "pipe": [{"file": "/a", "kind": "Secret", "key": "a"},
                {"file": "/b", "kind": "Secret", "key": "a"}]}),
                "twice",
            ),
        ] {
            let e = PipeTask::of(&task(spec)).unwrap_err().to_string();
            assert!(e.contains(says), "{e}");
        }
    }

    #[test]
    fn the_pod_is_checked_as_kudo_checks_it() {
        assert_eq!(check_pod(&pod(), &[file("/tmp/out/a.txt")]), Ok(()));
        let mut with_container = pod();
        with_container["spec"]["containers"] = json!([{"name": "c"}]);
        let mut always = pod();
        always["spec"]["restartPolicy"] = json!("Always");
        let mut two_volumes = pod();
        two_volumes["spec"]["volumes"] =
            json!([{"name": "a", "emptyDir": {}}, {"name": "b", "emptyDir": {}}]);
        let cases = [
            (with_container, file("/tmp/out/a"), "no containers"),
            (always, file("/tmp/out/a"), "OnFailure"),
            (two_volumes, file("/tmp/out/a"), "exactly one emptyDir"),
            (pod(), file("/etc/passwd"), "under the shared volume"),
            (pod(), file("/tmp/out/../x"), "under the shared volume"),
            (pod(), file("/tmp/outside"), "under the shared volume"),
            (pod(), file("/tmp/out/a b"), "letters, digits"),
        ];
        for (p, f, says) in cases {
            let e = check_pod(&p, &[f]).unwrap_err().to_string();
            assert!(e.contains(says), "{e}");
        }
    }

    #[test]
    fn the_pipe_pod_gets_the_waiter_and_the_artifacts_their_data() {
        let p = pipe_pod(pod(), "i.deploy.main.gen.gen.pipepod").unwrap();
        assert_eq!(p["metadata"]["name"], "i.deploy.main.gen.gen.pipepod");
        assert_eq!(p["metadata"]["annotations"][ANNOTATION], "true");
        assert_eq!(p["spec"]["restartPolicy"], "OnFailure");
        assert_eq!(p["spec"]["containers"][0]["name"], WAITER);
        assert_eq!(
            p["spec"]["containers"][0]["volumeMounts"][0]["mountPath"],
            "/tmp/out"
        );

        let cm = artifact(&file("/tmp/out/a.txt"), "n", b"hi").unwrap();
        assert_eq!(cm["binaryData"]["a.txt"], "aGk=");
        let secret = PipeFile {
            kind: ArtifactKind::Secret,
            ..file("/tmp/out/a.txt")
        };
        let s = artifact(&secret, "n", b"hi").unwrap();
        assert_eq!(
            (s["kind"].as_str(), s["type"].as_str()),
            (Some("Secret"), Some("Opaque"))
        );
        assert_eq!(s["data"]["a.txt"], "aGk=");
        let env = PipeFile {
            env_file: true,
            ..file("/tmp/out/env")
        };
        let e = artifact(&env, "n", b"# c\n\nA=1\n  B_2=x=y\n").unwrap();
        assert_eq!(e["data"], json!({"A": "1", "B_2": "x=y"}));
        assert!(
            artifact(&env, "n", b"1A=x\n")
                .unwrap_err()
                .to_string()
                .contains("line 1")
        );
        assert!(
            artifact(&env, "n", b"novalue\n")
                .unwrap_err()
                .to_string()
                .contains("KEY=VALUE")
        );
        assert_eq!(
            artifact_name(&["My-Inst", "deploy", "main", "gen_cert", "pipe", "Cert.PEM"]),
            "myinst.deploy.main.gencert.pipe.certpem"
        );
    }
}
