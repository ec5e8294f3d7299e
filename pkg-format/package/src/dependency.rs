//! KUDO's KudoOperator tasks: a dependency operator, installed as a child Instance.
//!
//! A task `kind: KudoOperator` names its `package`, `operatorVersion` (and optionally
//! `appVersion`, `instanceName`, a `parameterFile` template rendering the child's parameters).
//! `package` is, as in KUDO, either
//! - a **path** relative to the parent package: a directory or a `.tgz` (`./zookeeper`,
//!   `../kafka-1.3.2.tgz`). A parent read from a `.tgz` (a local one, or one downloaded from a
//!   repository) finds `./child` **inside its own archive** first, as KUDO does;
//! - or a **name** (`zookeeper`), looked up by a [`Lookup`]: the CLI's looks in the parent's
//!   own repository, with the task's `operatorVersion` and `appVersion` (exact, or semver
//!   ranges: [`crate::repo::Want`]). Without one ([`resolve`]), a name is refused.
//!
//! [`resolve_with`] loads every dependency (and theirs), checks the versions the task asks
//! for, and refuses cycles. `kudo install` installs each one's Operator and OperatorVersion
//! before the parent's, and writes the child's operator name and version into the parent's
//! task (`operatorName`, `operatorVersion`), so the manager finds the child's OperatorVersion
//! by [`crate::package::operator_version_name`] in the cluster, with no repository.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::package::{Package, Task, TaskKind};

/// A KudoOperator task's `spec`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KudoOperatorTask {
    /// `package`: a path (or, in KUDO, a repository name).
    pub package: String,
    /// `operatorName`: the child's operator (written by `kudo install`; else `package`).
    pub operator_name: Option<String>,
    /// `operatorVersion`.
    pub operator_version: Option<String>,
    /// `appVersion`.
    pub app_version: Option<String>,
    /// `instanceName`: the child Instance (default `<parent>-<operator>`).
    pub instance_name: Option<String>,
    /// `parameterFile`: a template under `templates/` rendering the child's parameters.
    pub parameter_file: Option<String>,
}

/// What is wrong with a KudoOperator task or the package it names.
#[derive(Debug, thiserror::Error)]
pub enum DependencyError {
    /// The task has no `spec.package`.
    #[error("KudoOperator task `{0}` has no `spec.package`")]
    NoPackage(String),
    /// The package is a name, and there is no repository to look it up in, or it is not
    /// there.
    #[error("KudoOperator task `{task}` names package `{package}`: {why}")]
    ByName {
        /// The task.
        task: String,
        /// The name.
        package: String,
        /// Why it was not found.
        why: String,
    },
    /// The package depends on itself, directly or not.
    #[error("KudoOperator task `{task}`: package {} depends on itself", path.display())]
    Cycle {
        /// The task.
        task: String,
        /// The package.
        path: PathBuf,
    },
    /// The package does not load.
    #[error("KudoOperator task `{task}`: package {}: {source}", path.display())]
    Load {
        /// The task.
        task: String,
        /// The package.
        path: PathBuf,
        /// Why.
        source: Box<kudo_diag::Error>,
    },
    /// The package is another version than the task asks for.
    #[error("KudoOperator task `{task}` asks for {want} of {}, which is {have}", path.display())]
    Version {
        /// The task.
        task: String,
        /// The package.
        path: PathBuf,
        /// The versions asked for.
        want: String,
        /// The package's versions (`APPVERSION_OPERATORVERSION`).
        have: String,
    },
}

impl KudoOperatorTask {
    /// Reads a KudoOperator task's `spec`.
    pub fn of(task: &Task) -> Result<KudoOperatorTask, DependencyError> {
        let text = |k: &str| {
            task.spec
                .get(k)
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(String::from)
        };
        Ok(KudoOperatorTask {
            package: text("package")
                .ok_or_else(|| DependencyError::NoPackage(task.name.clone()))?,
            operator_name: text("operatorName"),
            operator_version: text("operatorVersion"),
            app_version: text("appVersion"),
            instance_name: text("instanceName"),
            parameter_file: text("parameterFile"),
        })
    }

    /// The child's operator name.
    pub fn operator(&self) -> &str {
        self.operator_name.as_deref().unwrap_or(&self.package)
    }

    /// Whether `package` is a path (kudo resolves those) rather than a repository name.
    pub fn is_path(&self) -> bool {
        let p = &self.package;
        p.starts_with("./")
            || p.starts_with("../")
            || p.starts_with('/')
            || p.ends_with(".tgz")
            || p.ends_with(".tar.gz")
    }

    /// Where the dependency's package is, for a `package` path given in `parent`: relative to
    /// the parent's directory (or to the directory of its `.tgz`).
    pub fn package_path(&self, parent: &Package) -> PathBuf {
        let source = parent.source();
        let base = if source.is_dir() {
            source
        } else {
            source.parent().unwrap_or(Path::new(""))
        };
        base.join(&self.package)
    }

    /// The child Instance's name for parent Instance `parent`.
    pub fn child_name(&self, parent: &str) -> String {
        self.instance_name
            .clone()
            .unwrap_or_else(|| format!("{parent}-{}", self.operator()))
    }
}

/// A resolved dependency.
#[derive(Debug, Clone)]
pub struct Dependency {
    /// The OperatorVersion name of the package whose task this is.
    pub parent: String,
    /// The parent's task.
    pub task: String,
    /// The dependency's package (its own dependencies come before it in [`resolve_with`]'s
    /// list).
    pub package: Package,
}

/// Where a dependency that `package` names by a repository name comes from.
pub trait Lookup {
    /// The package `spec` names for `parent`, in the versions the task asks for; `Err` says
    /// why not (no such operator, no such version, a download that failed).
    fn by_name(&self, parent: &Package, spec: &KudoOperatorTask) -> Result<Package, String>;
}

/// No repository: a name is refused.
struct NoRepository;

impl Lookup for NoRepository {
    fn by_name(&self, _: &Package, spec: &KudoOperatorTask) -> Result<Package, String> {
        Err(format!(
            "a name needs a repository to look it up in; give a path or .tgz relative to the \
             package instead (`./{}`)",
            spec.package
        ))
    }
}

/// [`resolve_with`] without repositories: dependencies are paths.
pub fn resolve(pkg: &Package) -> Result<Vec<Dependency>, DependencyError> {
    resolve_with(pkg, &NoRepository)
}

/// Every dependency of `pkg`, depth first (a dependency's dependencies before it), each
/// package once; names are looked up by `names`. `Err` names the task and what is wrong.
pub fn resolve_with(pkg: &Package, names: &dyn Lookup) -> Result<Vec<Dependency>, DependencyError> {
    let mut out = Vec::new();
    let mut seen: Vec<PathBuf> = Vec::new();
    let mut stack = vec![canonical(pkg.source())];
    walk(pkg, names, &mut stack, &mut seen, &mut out)?;
    Ok(out)
}

fn canonical(p: &Path) -> PathBuf {
    p.canonicalize().unwrap_or_else(|_| p.to_path_buf())
}

/// The package a path names for `parent`: inside the parent's archive first when the parent
/// is a `.tgz` (`./child` is a folder or a `.tgz` in it), else on disk.
fn load_path(parent: &Package, spec: &KudoOperatorTask) -> (PathBuf, kudo_diag::Result<Package>) {
    let source = parent.source();
    if source.is_file()
        && let Some(inner) = spec.package.strip_prefix("./")
        && let Some(found) = crate::package::from_archive_member(source, inner)
    {
        return (source.join(inner), found);
    }
    let path = spec.package_path(parent);
    let loaded = Package::load(&path);
    (path, loaded)
}

fn walk(
    pkg: &Package,
    names: &dyn Lookup,
    stack: &mut Vec<PathBuf>,
    seen: &mut Vec<PathBuf>,
    out: &mut Vec<Dependency>,
) -> Result<(), DependencyError> {
    for task in pkg
        .operator()
        .tasks
        .iter()
        .filter(|t| t.kind == TaskKind::KudoOperator)
    {
        let spec = KudoOperatorTask::of(task)?;
        let (path, dep) = if spec.is_path() {
            let (path, loaded) = load_path(pkg, &spec);
            let dep = loaded.map_err(|e| DependencyError::Load {
                task: task.name.clone(),
                path: path.clone(),
                source: Box::new(e),
            })?;
            (path, dep)
        } else {
            let dep = names
                .by_name(pkg, &spec)
                .map_err(|why| DependencyError::ByName {
                    task: task.name.clone(),
                    package: spec.package.clone(),
                    why,
                })?;
            (dep.source().to_path_buf(), dep)
        };
        let key = canonical(&path);
        if stack.contains(&key) {
            return Err(DependencyError::Cycle {
                task: task.name.clone(),
                path,
            });
        }
        let want = crate::repo::Want::parse(
            spec.operator_version.as_deref(),
            spec.app_version.as_deref(),
        )
        .map_err(|e| DependencyError::Version {
            task: task.name.clone(),
            path: path.clone(),
            want: e.to_string(),
            have: dep.version(),
        })?;
        let app = dep.operator().app_version.as_deref();
        if !want.accepts_versions(&dep.version(), app) {
            return Err(DependencyError::Version {
                task: task.name.clone(),
                path,
                want: want.to_string(),
                have: crate::repo::versions(&dep.version(), app),
            });
        }
        if seen.contains(&key) {
            continue;
        }
        stack.push(key.clone());
        walk(&dep, names, stack, seen, out)?;
        stack.pop();
        seen.push(key);
        out.push(Dependency {
            parent: pkg.operator_version_name(),
            task: task.name.clone(),
            package: dep,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, version: &str, deps: &[(&str, &str)]) {
        let d = dir.join(name);
        std::fs::create_dir_all(d.join("templates")).unwrap();
        let mut tasks = String::from("tasks:\n  - name: app\n    kind: Dummy\n    spec: {}\n");
        for (task, package) in deps {
            tasks.push_str(&format!(
                "  - name: {task}\n    kind: KudoOperator\n    spec:\n      package: {package}\n      operatorVersion: 0.1.0\n"
            ));
        }
        std::fs::write(
            d.join("operator.yaml"),
            format!("apiVersion: kudo.dev/v1beta1\nname: {name}\noperatorVersion: {version}\n{tasks}plans: {{}}\n"),
        )
        .unwrap();
        std::fs::write(
            d.join("params.yaml"),
            "apiVersion: kudo.dev/v1beta2\ntype: object\nproperties: {}\n",
        )
        .unwrap();
    }

    #[test]
    fn dependencies_are_loaded_depth_first_once_each_from_paths_only() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "zk", "0.1.0", &[]);
        write(dir.path(), "kafka", "0.1.0", &[("zk", "../zk")]);
        write(
            dir.path(),
            "app",
            "1.0.0",
            &[("kafka", "../kafka"), ("zk", "../zk")],
        );
        let app = Package::load(&dir.path().join("app")).unwrap();
        let deps = resolve(&app).unwrap();
        let names: Vec<&str> = deps
            .iter()
            .map(|d| d.package.operator().name.as_str())
            .collect();
        assert_eq!(names, ["zk", "kafka"]);
        assert_eq!(deps[1].task, "kafka");

        write(dir.path(), "byname", "1.0.0", &[("zk", "zookeeper")]);
        let e = resolve(&Package::load(&dir.path().join("byname")).unwrap())
            .unwrap_err()
            .to_string();
        assert!(e.contains("a name needs a repository"), "{e}");

        write(dir.path(), "old", "1.0.0", &[("zk", "../newzk")]);
        write(dir.path(), "newzk", "0.2.0", &[]);
        let e = resolve(&Package::load(&dir.path().join("old")).unwrap())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("asks for operatorVersion 0.1.0") && e.contains("which is 0.2.0"),
            "{e}"
        );

        write(dir.path(), "a", "0.1.0", &[("b", "../b")]);
        write(dir.path(), "b", "0.1.0", &[("a", "../a")]);
        let e = resolve(&Package::load(&dir.path().join("a")).unwrap())
            .unwrap_err()
            .to_string();
        assert!(e.contains("depends on itself"), "{e}");

        write(dir.path(), "lost", "1.0.0", &[("x", "../nowhere")]);
        let e = resolve(&Package::load(&dir.path().join("lost")).unwrap())
            .unwrap_err()
            .to_string();
        assert!(e.contains("nowhere"), "{e}");
    }

    /// A repository of two zk versions.
    struct Repo(PathBuf);

    impl Lookup for Repo {
        fn by_name(&self, _: &Package, spec: &KudoOperatorTask) -> Result<Package, String> {
            let want = crate::repo::Want::parse(
                spec.operator_version.as_deref(),
                spec.app_version.as_deref(),
            )
            .map_err(|e| e.to_string())?;
            ["0.2.0", "0.1.0"]
                .iter()
                .find(|v| want.accepts_versions(v, None))
                .map(|v| Package::load(&self.0.join(format!("{}-{v}", spec.package))).unwrap())
                .ok_or_else(|| format!("no {} with {want}", spec.package))
        }
    }

    #[test]
    fn names_are_looked_up_with_the_tasks_versions_and_archives_hold_their_children() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "zk", "0.1.0", &[]);
        std::fs::rename(dir.path().join("zk"), dir.path().join("zk-0.1.0")).unwrap();
        write(dir.path(), "zk", "0.2.0", &[]);
        std::fs::rename(dir.path().join("zk"), dir.path().join("zk-0.2.0")).unwrap();
        let repo = Repo(dir.path().to_path_buf());
        // `write` asks for operatorVersion 0.1.0: exact, as KUDO
        write(dir.path(), "app", "1.0.0", &[("zk", "zk")]);
        let app = Package::load(&dir.path().join("app")).unwrap();
        let deps = resolve_with(&app, &repo).unwrap();
        assert_eq!(deps[0].package.version(), "0.1.0");
        assert_eq!(deps[0].parent, "app-1.0.0");
        let op = std::fs::read_to_string(dir.path().join("app/operator.yaml")).unwrap();
        std::fs::write(
            dir.path().join("app/operator.yaml"),
            op.replace("operatorVersion: 0.1.0", "operatorVersion: \"<1\""),
        )
        .unwrap();
        let app = Package::load(&dir.path().join("app")).unwrap();
        assert_eq!(
            resolve_with(&app, &repo).unwrap()[0].package.version(),
            "0.2.0",
            "a range: the newest"
        );
        let e = resolve_with(&Package::load(&dir.path().join("zk-0.1.0")).unwrap(), &repo);
        assert!(e.unwrap().is_empty());

        // A parent archive holding its child as a folder: `./zk` is read from the archive.
        write(dir.path(), "outer", "1.0.0", &[("zk", "./zk")]);
        let (bytes, _) = crate::create_archive(&dir.path().join("outer")).unwrap();
        let child = crate::create_archive(&dir.path().join("zk-0.1.0"))
            .unwrap()
            .0;
        let tgz = dir.path().join("outer.tgz");
        let mut files = read_archive(&bytes);
        for (name, data) in read_archive(&child) {
            files.push((format!("zk/{name}"), data));
        }
        std::fs::write(&tgz, write_archive(&files)).unwrap();
        let outer = Package::load(&tgz).unwrap();
        let deps = resolve(&outer).unwrap();
        assert_eq!(deps[0].package.operator().name, "zk");
        assert_eq!(deps[0].package.source(), tgz.join("zk"));
    }

    fn read_archive(bytes: &[u8]) -> Vec<(String, Vec<u8>)> {
        use std::io::Read;
        let mut a = tar::Archive::new(flate2::read::GzDecoder::new(bytes));
        a.entries()
            .unwrap()
            .map(|e| {
                let mut e = e.unwrap();
                let name = e.path().unwrap().to_string_lossy().into_owned();
                let mut data = Vec::new();
                e.read_to_end(&mut data).unwrap();
                (name, data)
            })
            .collect()
    }

    fn write_archive(files: &[(String, Vec<u8>)]) -> Vec<u8> {
        let mut tar = tar::Builder::new(flate2::write::GzEncoder::new(
            Vec::new(),
            flate2::Compression::default(),
        ));
        for (name, data) in files {
            let mut h = tar::Header::new_gnu();
            h.set_size(data.len() as u64);
            h.set_mode(0o644);
            tar.append_data(&mut h, name, data.as_slice()).unwrap();
        }
        tar.into_inner().unwrap().finish().unwrap()
    }

    #[test]
    fn the_child_is_named_for_its_parent_unless_the_task_names_it() {
        let t = |spec: Value| {
            KudoOperatorTask::of(&Task {
                name: "dep".into(),
                kind: TaskKind::KudoOperator,
                resources: vec![],
                parameter: None,
                spec,
            })
        };
        let plain = t(serde_json::json!({"package": "./zk", "operatorName": "zookeeper"})).unwrap();
        assert_eq!(plain.child_name("shop"), "shop-zookeeper");
        assert!(plain.is_path());
        let named = t(serde_json::json!({"package": "zookeeper", "instanceName": "zk"})).unwrap();
        assert_eq!(named.child_name("shop"), "zk");
        assert!(!named.is_path());
        assert!(
            t(serde_json::json!({}))
                .unwrap_err()
                .to_string()
                .contains("spec.package")
        );
    }
}
