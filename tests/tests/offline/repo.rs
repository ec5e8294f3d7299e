//! Repositories end to end, offline from the Internet: packages made by `kudo package create`,
//! indexed by `kudo repo index`, served by a real HTTP server on loopback
//! ([`kudo_testkit::serve_dir`]), used by name through `kudo repo add`, `kudo search`,
//! `kudo template NAME` with version selection; a tampered package refused; the cache used
//! once the server is gone. Installing by name on a cluster is in the e2e suite
//! (`e2e/repository.rs`).

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use kudo_testkit::{example, kudo_in};
use predicates::prelude::*;

/// kudo's own files in a temporary home: the configuration, the cache.
struct Home {
    dir: tempfile::TempDir,
}

impl Home {
    fn new() -> Home {
        Home {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn kudo(&self, args: &[&str]) -> Command {
        let mut c = kudo_in(self.dir.path());
        c.args(args);
        c
    }

    fn cache(&self) -> PathBuf {
        self.dir.path().join("cache/kudo")
    }
}

/// The zookeeper example at `version`, with its NODE_COUNT default set to `nodes` (so the
/// version chosen shows in what renders), in `root/zookeeper-VERSION/`.
fn zookeeper_at(root: &Path, version: &str, nodes: u32) -> PathBuf {
    let dir = root.join(format!("zookeeper-{version}"));
    kudo_testkit::copy_dir(&example("zookeeper-v1beta1"), &dir);
    let op = std::fs::read_to_string(dir.join("operator.yaml")).unwrap();
    let op = op.replace(
        "operatorVersion: \"0.4.0\"",
        &format!("operatorVersion: \"{version}\""),
    );
    assert!(op.contains(version));
    std::fs::write(dir.join("operator.yaml"), op).unwrap();
    let params = std::fs::read_to_string(dir.join("params.yaml")).unwrap();
    let params = params.replacen("default: \"3\"", &format!("default: \"{nodes}\""), 1);
    std::fs::write(dir.join("params.yaml"), params).unwrap();
    dir
}

/// `kudo params NAME [flags]` through the repository: the NODE_COUNT it prints.
fn node_count(home: &Home, args: &[&str]) -> String {
    let mut all = vec!["params", "zookeeper", "-o", "json"];
    all.extend(args);
    let out = home
        .kudo(&all)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    v["NODE_COUNT"].to_string()
}

#[test]
fn a_served_repository_is_searched_used_by_name_and_version_checked_and_cached() {
    let home = Home::new();
    let work = tempfile::tempdir().unwrap();
    let served = work.path().join("served");
    std::fs::create_dir(&served).unwrap();
    for (version, nodes) in [("0.3.0", 1), ("0.4.0", 3), ("1.0.0", 5)] {
        let dir = zookeeper_at(work.path(), version, nodes);
        home.kudo(&["package", "create"])
            .arg(&dir)
            .arg("-d")
            .arg(&served)
            .assert()
            .success()
            .stdout(predicate::str::ends_with(format!(
                "zookeeper-3.6.2_{version}.tgz\n"
            )));
    }
    home.kudo(&["package", "create"])
        .arg(example("cassandra-v1beta2"))
        .arg("-d")
        .arg(&served)
        .assert()
        .success();
    // Not a package: left out of the index with a warning.
    std::fs::write(served.join("junk.tgz"), b"not a tarball").unwrap();
    home.kudo(&["repo", "index"])
        .arg(&served)
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "junk.tgz: left out: not a valid package",
        ))
        .stderr(predicate::str::contains("indexed 4 packages"));

    let server = kudo_testkit::serve_dir(&served);
    let url = server.url.clone();
    // A URL with no index is refused, and nothing is added.
    home.kudo(&["repo", "add", "nowhere", &format!("{url}/nothing")])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("404").and(predicate::str::contains("nothing was added")));
    home.kudo(&["repo", "add", "local", &url])
        .assert()
        .success();
    home.kudo(&["repo", "add", "local", &url])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("exists"));
    home.kudo(&["repo", "context", "local"]).assert().success();
    home.kudo(&["repo", "list"])
        .assert()
        .success()
        .stdout(predicate::str::contains("*  local").and(predicate::str::contains("community")))
        .stdout(predicate::str::contains("nowhere").not());

    // search: the newest of each, or every version
    let out = home
        .kudo(&["search", "--repo", "local"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8_lossy(&out);
    assert!(
        text.contains("zookeeper   1.0.0") || text.contains("1.0.0"),
        "{text}"
    );
    assert_eq!(text.matches("zookeeper").count(), 1, "{text}");
    let all: serde_json::Value = serde_json::from_slice(
        &home
            .kudo(&[
                "search",
                "zoo",
                "--repo",
                "local",
                "--all-versions",
                "-o",
                "json",
            ])
            .assert()
            .success()
            .get_output()
            .stdout
            .clone(),
    )
    .unwrap();
    let versions: Vec<&str> = all
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["operatorVersion"].as_str().unwrap())
        .collect();
    assert_eq!(versions, ["1.0.0", "0.4.0", "0.3.0"], "newest first");

    // by name: the newest, an exact version, a range
    assert_eq!(node_count(&home, &[]), "5");
    assert_eq!(node_count(&home, &["--operator-version", "0.4.0"]), "3");
    assert_eq!(node_count(&home, &["--operator-version", "~0.3"]), "1");
    assert_eq!(node_count(&home, &["--operator-version", ">=0.3, <1"]), "3");
    assert_eq!(node_count(&home, &["--app-version", "3.6.x"]), "5");
    home.kudo(&["params", "zookeeper", "--operator-version", "2.0.0"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "local has no zookeeper with operatorVersion 2.0.0; it has 3.6.2_1.0.0, 3.6.2_0.4.0, 3.6.2_0.3.0",
        ));
    home.kudo(&["template", "zookeepr"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("did you mean `zookeeper`?"));
    home.kudo(&["template", "zookeeper", "--operator-version", "1.0.0"])
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "zookeeper 3.6.2_1.0.0 from repository local",
        ))
        .stdout(predicate::str::contains("kind: StatefulSet"));

    // A package changed after it was indexed: refused, naming both digests; not cached.
    let index = std::fs::read_to_string(served.join("index.yaml")).unwrap();
    let expected = index
        .lines()
        .skip_while(|l| !l.contains("cassandra-3.11.6_2.0.0.tgz"))
        .find_map(|l| l.trim().strip_prefix("digest: "))
        .unwrap()
        .to_string();
    let tampered_dir = work.path().join("tampered");
    kudo_testkit::copy_dir(&example("cassandra-v1beta2"), &tampered_dir);
    let t = tampered_dir.join("templates/service.yaml");
    let text = std::fs::read_to_string(&t).unwrap_or_default();
    std::fs::write(&t, format!("{text}\n# changed\n")).unwrap();
    let (bytes, _) = kudo_pkg::create_archive(&tampered_dir).unwrap();
    let actual = kudo_pkg::repo::sha256_hex(&bytes);
    std::fs::write(served.join("cassandra-3.11.6_2.0.0.tgz"), &bytes).unwrap();
    home.kudo(&["template", "cassandra"])
        .assert()
        .code(1)
        .stdout("")
        .stderr(predicate::str::contains(&expected).and(predicate::str::contains(&actual)))
        .stderr(predicate::str::contains("nothing was used"));
    assert!(!home.cache().join("packages").join(&actual).exists());
    assert!(!home.cache().join("packages").join(&expected).exists());

    // The server gone: search reads the cache; a package downloaded before comes from it;
    // one never downloaded cannot be had.
    drop(server);
    home.kudo(&["search", "zookeeper", "--repo", "local"])
        .assert()
        .success()
        .stdout(predicate::str::contains("1.0.0"));
    assert_eq!(node_count(&home, &["--operator-version", "0.4.0"]), "3");
    home.kudo(&["params", "cassandra"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("cassandra-3.11.6_2.0.0.tgz"));
    // A cached package changed on disk is not used.
    let cached = home.cache().join("packages");
    for dir in std::fs::read_dir(&cached).unwrap().flatten() {
        for f in std::fs::read_dir(dir.path()).unwrap().flatten() {
            std::fs::write(f.path(), b"changed").unwrap();
        }
    }
    home.kudo(&["params", "zookeeper", "--operator-version", "0.4.0"])
        .assert()
        .code(1);

    // repo remove forgets the repository and its cached index
    home.kudo(&["repo", "remove", "local"]).assert().success();
    home.kudo(&["search", "--repo", "local"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("no repository of this name"));
    assert!(
        std::fs::read_dir(home.cache().join("repository"))
            .unwrap()
            .next()
            .is_none()
    );
}

/// Issue 33: one repository unreachable (KUDO's `community` on a machine without the Internet)
/// does not stop the others. As `helm search repo` and `helm repo update` (Helm 3): each
/// failure is a warning naming the repository on stderr; what answered is used and the exit
/// code is 0. Only when no repository answers is it an error (exit 1).
#[test]
fn an_unreachable_repository_is_a_warning_while_another_answers() {
    let home = Home::new();
    let work = tempfile::tempdir().unwrap();
    let served = work.path().join("served");
    std::fs::create_dir(&served).unwrap();
    let dir = zookeeper_at(work.path(), "1.0.0", 5);
    home.kudo(&["package", "create"])
        .arg(&dir)
        .arg("-d")
        .arg(&served)
        .assert()
        .success();
    home.kudo(&["repo", "index"])
        .arg(&served)
        .assert()
        .success();
    let server = kudo_testkit::serve_dir(&served);
    home.kudo(&["repo", "add", "local", &server.url])
        .assert()
        .success();
    // Nothing listens on port 1; `community` is left out so the test does not depend on the
    // Internet.
    let gone = "http://127.0.0.1:1";
    home.kudo(&["repo", "add", "gone", gone, "--skip-check"])
        .assert()
        .success();
    home.kudo(&["repo", "remove", "community"])
        .assert()
        .success();
    // The one that cannot be reached is a warning, and the other is updated.
    home.kudo(&["repo", "update"])
        .assert()
        .success()
        .stderr(predicate::str::contains("local: 1 operators, 1 packages"))
        .stderr(predicate::str::contains(
            "warning: gone: not updated (it has no cached index): http://127.0.0.1:1/index.yaml",
        ));
    // Search: the cached index of local; gone has none and cannot be downloaded.
    home.kudo(&["search", "zoo"])
        .assert()
        .success()
        .stdout(predicate::str::contains("zookeeper").and(predicate::str::contains("1.0.0")))
        .stderr(predicate::str::contains(
            "warning: gone: not searched: no cached index, and it cannot be downloaded \
             (`kudo repo update gone` once it is reachable): http://127.0.0.1:1/index.yaml",
        ))
        .stderr(predicate::str::contains("local").not());
    // No repository answering is an error.
    home.kudo(&["search", "zoo", "--repo", "gone"])
        .assert()
        .code(1)
        .stdout("")
        .stderr(predicate::str::contains("warning: gone: not searched"))
        .stderr(predicate::str::contains(
            "error: search: no repository could be searched (each is named above)",
        ));
    home.kudo(&["repo", "update", "gone"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("warning: gone: not updated"))
        .stderr(predicate::str::contains(
            "error: repo update: no repository could be updated (each is named above)",
        ));
    // Both unreachable: nothing is updated (local keeps its cached index), and search reads
    // that cache.
    drop(server);
    home.kudo(&["repo", "update"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "warning: local: not updated (its cached index is kept)",
        ))
        .stderr(predicate::str::contains("warning: gone: not updated"));
    home.kudo(&["search", "zoo"])
        .assert()
        .success()
        .stdout(predicate::str::contains("zookeeper"))
        .stderr(predicate::str::contains("warning: gone: not searched"));
}

#[test]
fn the_shipped_example_repository_is_what_package_create_and_repo_index_make() {
    let repo = example("repository");
    let index =
        kudo_pkg::repo::Index::parse(&std::fs::read_to_string(repo.join("index.yaml")).unwrap())
            .unwrap();
    for (dir, file) in [
        ("cassandra-v1beta2", "cassandra-3.11.6_2.0.0.tgz"),
        ("zookeeper-v1beta1", "zookeeper-3.6.2_0.4.0.tgz"),
    ] {
        let (bytes, _) = kudo_pkg::create_archive(&example(dir)).unwrap();
        assert_eq!(
            std::fs::read(repo.join(file)).unwrap(),
            bytes,
            "examples/repository/{file} is not `kudo package create examples/{dir}`: make it again"
        );
        let digest = kudo_pkg::repo::sha256_hex(&bytes);
        assert!(
            index
                .entries
                .values()
                .flatten()
                .any(|e| e.urls == [file] && e.digest.as_deref() == Some(digest.as_str())),
            "examples/repository/index.yaml has no entry for {file} with digest {digest}"
        );
    }
}
