//! KUDO's KudoOperator tasks: a dependency operator, installed as a child Instance.
//!
//! A task `kind: KudoOperator` names its `package`, `operatorVersion` (and optionally
//! `appVersion`, `instanceName`, a `parameterFile` template rendering the child's parameters).
//! kudo resolves `package` as a **path** relative to the parent package: a directory or a
//! `.tgz` (`./zookeeper`, `../kafka-1.3.2.tgz`). A bare name (`zookeeper`, which KUDO looks up
//! in a repository) is refused with a message: repositories are not built yet.
//!
//! [`resolve`] loads every dependency (and theirs), checks the version the task asks for, and
//! refuses cycles. `kudo install` installs each one's Operator and OperatorVersion before the
//! parent's, and writes the child's operator name into the parent's task (`operatorName`), so
//! the manager finds the child's OperatorVersion by [`crate::package::operator_version_name`].

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::package::{Package, Task};

/// A KudoOperator task's `spec`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KudoOperatorTask {
    /// `package`: a path (or, in KUDO, a repository name).
    pub package: String,
    /// `operatorName`: the child's operator (written by `kudo install`; else `package`).
    pub operator_name: Option<String>,
    /// `operatorVersion`.
    pub operator_version: Option<String>,
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
    /// The package is a name, which kudo cannot resolve yet.
    #[error(
        "KudoOperator task `{task}` names package `{package}`: kudo installs a dependency from a path or .tgz relative to the package (`./{package}`); resolving a name from a repository is not built yet"
    )]
    ByName {
        /// The task.
        task: String,
        /// The name.
        package: String,
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
        source: Box<crate::Error>,
    },
    /// The package is another version than the task asks for.
    #[error("KudoOperator task `{task}` asks for operatorVersion {want} of {}, which is {have}", path.display())]
    Version {
        /// The task.
        task: String,
        /// The package.
        path: PathBuf,
        /// The version asked for.
        want: String,
        /// The package's version.
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
    /// The parent's task.
    pub task: String,
    /// The dependency's package (its own dependencies come before it in [`resolve`]'s list).
    pub package: Package,
}

/// Every dependency of `pkg`, depth first (a dependency's dependencies before it), each
/// package once. `Err` names the task and what is wrong.
pub fn resolve(pkg: &Package) -> Result<Vec<Dependency>, DependencyError> {
    let mut out = Vec::new();
    let mut seen: Vec<PathBuf> = Vec::new();
    let mut stack = vec![canonical(pkg.source())];
    walk(pkg, &mut stack, &mut seen, &mut out)?;
    Ok(out)
}

fn canonical(p: &Path) -> PathBuf {
    p.canonicalize().unwrap_or_else(|_| p.to_path_buf())
}

fn walk(
    pkg: &Package,
    stack: &mut Vec<PathBuf>,
    seen: &mut Vec<PathBuf>,
    out: &mut Vec<Dependency>,
) -> Result<(), DependencyError> {
    for task in pkg
        .operator()
        .tasks
        .iter()
        .filter(|t| t.kind == "KudoOperator")
    {
        let spec = KudoOperatorTask::of(task)?;
        if !spec.is_path() {
            return Err(DependencyError::ByName {
                task: task.name.clone(),
                package: spec.package,
            });
        }
        let path = spec.package_path(pkg);
        let key = canonical(&path);
        if stack.contains(&key) {
            return Err(DependencyError::Cycle {
                task: task.name.clone(),
                path,
            });
        }
        let dep = Package::load(&path).map_err(|e| DependencyError::Load {
            task: task.name.clone(),
            path: path.clone(),
            source: Box::new(e),
        })?;
        if let Some(want) = &spec.operator_version
            && *want != dep.version()
        {
            return Err(DependencyError::Version {
                task: task.name.clone(),
                path,
                want: want.clone(),
                have: dep.version().to_string(),
            });
        }
        if seen.contains(&key) {
            continue;
        }
        stack.push(key.clone());
        walk(&dep, stack, seen, out)?;
        stack.pop();
        seen.push(key);
        out.push(Dependency {
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
        assert!(
            e.contains("resolving a name from a repository is not built yet"),
            "{e}"
        );

        write(dir.path(), "old", "1.0.0", &[("zk", "../newzk")]);
        write(dir.path(), "newzk", "0.2.0", &[]);
        let e = resolve(&Package::load(&dir.path().join("old")).unwrap())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("asks for operatorVersion 0.1.0") && e.contains("0.2.0"),
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

    #[test]
    fn the_child_is_named_for_its_parent_unless_the_task_names_it() {
        let t = |spec: Value| {
            KudoOperatorTask::of(&Task {
                name: "dep".into(),
                kind: "KudoOperator".into(),
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
