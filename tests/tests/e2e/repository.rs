//! Operators installed by name from a repository: packages made by `kudo package create`,
//! indexed by `kudo repo index`, served over HTTP on loopback, installed on the cluster with
//! their KudoOperator dependencies resolved by name in the same repository.

use crate::harness::*;

/// A package in `dir` assembled from the metadata corpus's `operator.yaml` and `params.yaml`
/// of version `versions` of `operator` and the templates of the full corpus's (newer) version
/// of it: the corpus keeps the templates of one version per operator only, and flink-demo
/// 0.1.6 asks for kafka 1.3.1 and zookeeper 0.3.1. Each `(from, to)` of `edits` is applied to
/// the templates (zookeeper 0.3.3's templates use a parameter 0.3.1 does not have).
fn assembled(
    shared: &Path,
    dir: &Path,
    operator: &str,
    versions: &str,
    edits: &[(&str, &str)],
) -> PathBuf {
    let out = dir.join(format!("{operator}-{versions}"));
    let meta = shared.join(format!("corpus/kudo-operators/{operator}/{versions}"));
    kudo_testkit::copy_dir(
        &shared.join(format!("corpus/kudo-operators-full/{operator}/templates")),
        &out.join("templates"),
    );
    for f in ["operator.yaml", "params.yaml"] {
        std::fs::copy(meta.join(f), out.join(f)).expect("the corpus's metadata");
    }
    for entry in std::fs::read_dir(out.join("templates")).unwrap().flatten() {
        let text = std::fs::read_to_string(entry.path()).unwrap();
        let edited = edits.iter().fold(text, |t, (from, to)| t.replace(from, to));
        std::fs::write(entry.path(), edited).unwrap();
    }
    out
}

/// flink-demo installs by name: kudo downloads it and its three KudoOperator dependencies
/// (kafka 1.3.1, zookeeper 0.3.1 and flink 0.2.1, named by name in its tasks) from the
/// repository, checks each digest, creates their OperatorVersions before the parent's, and the
/// manager starts the children as Instances from them: each reaches COMPLETE (kafka's Pipe
/// task included), then the parent does, and its uninstall removes the children and their
/// workloads. A package changed after it was indexed is refused
/// with exit 1 and nothing of it is installed.
#[test]
fn flink_demo_installs_by_name_with_its_dependencies_from_a_served_repository() {
    let Some(s) = Scenario::start_with_workloads("repository", false) else {
        return;
    };
    let Some(shared) = kudo_testkit::shared() else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let home = work.path().join("home");
    let served = work.path().join("served");
    std::fs::create_dir_all(&served).unwrap();
    let full = shared.join("corpus/kudo-operators-full");
    let mut packages = vec![
        full.join("kafka"),
        full.join("zookeeper"),
        full.join("flink"),
        full.join("flink-demo"),
        example("cassandra-v1beta2"),
    ];
    packages.push(assembled(&shared, work.path(), "kafka", "2.5.0_1.3.1", &[]));
    packages.push(assembled(
        &shared,
        work.path(),
        "zookeeper",
        "3.4.14_0.3.1",
        &[("{{ .Params.IMAGE_PULL_POLICY }}", "IfNotPresent")],
    ));
    for p in &packages {
        s.kudo_at(&home, &["package", "create"])
            .arg(p)
            .arg("-d")
            .arg(&served)
            .assert()
            .success();
    }
    // The index signed (issue 37): each entry carries a cosign signature over its digest.
    let fingerprint = super::signing::generate_key(&s, &home, work.path());
    let public = work.path().join("cosign.pub");
    s.kudo_at(&home, &["repo", "index"])
        .arg(&served)
        .arg("--sign-key")
        .arg(work.path().join("cosign.key"))
        .env("KUDO_PASSWORD", "pw")
        .assert()
        .success()
        .stderr(predicates::str::contains("indexed 7 packages"))
        .stderr(predicates::str::contains("signed 7 entries"));
    // A copy whose zookeeper entries lost their signatures: flink-demo's dependency is
    // refused under the repository's `required`, before anything is written.
    let half = work.path().join("half");
    kudo_testkit::copy_dir(&served, &half);
    let mut index =
        kudo_pkg::repo::Index::parse(&std::fs::read_to_string(half.join("index.yaml")).unwrap())
            .unwrap();
    for e in index.entries.get_mut("zookeeper").unwrap() {
        e.signatures.clear();
    }
    std::fs::write(half.join("index.yaml"), index.to_yaml()).unwrap();
    let half_server = kudo_testkit::serve_dir(&half);
    s.kudo_at(&home, &["repo", "add", "half", &half_server.url, "--key"])
        .arg(&public)
        .assert()
        .success();
    let refused = s
        .kudo_at(
            &home,
            &[
                "install",
                "flink-demo",
                "--repo",
                "half",
                "--instance",
                "demo",
                "-n",
                &s.namespace,
            ],
        )
        .assert()
        .code(1)
        .get_output()
        .stderr
        .clone();
    let refused = text(&refused);
    assert!(
        refused.contains(
            "zookeeper 3.4.14_0.3.1 from repository half: refused: not signed by a trusted key"
        ),
        "{refused}"
    );
    let ovs = s.api("kudo.dev/v1beta2", "OperatorVersion", "operatorversions");
    assert!(s.get(&ovs, "flink-demo-0.1.6").is_none(), "nothing written");
    assert!(s.get(&s.instances("v1beta2"), "demo").is_none());
    let server = kudo_testkit::serve_dir(&served);
    s.kudo_at(&home, &["repo", "add", "local", &server.url, "--key"])
        .arg(&public)
        .assert()
        .success();

    let started = Instant::now();
    let out = s
        .kudo_at(
            &home,
            &[
                "install",
                "flink-demo",
                "--repo",
                "local",
                "--instance",
                "demo",
                "-n",
                &s.namespace,
            ],
        )
        .assert()
        .success()
        .get_output()
        .clone();
    say(&format!(
        "e2e: kudo install flink-demo (by name, 4 packages downloaded) in {:.2} s",
        started.elapsed().as_secs_f64()
    ));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("flink-demo 0.1.6 from repository local"),
        "{stderr}"
    );
    for ov in [
        // KUDO's names: NAME-APPVERSION-OPERATORVERSION (flink-demo has no appVersion).
        "kafka-2.5.0-1.3.1",
        "zookeeper-3.4.14-0.3.1",
        "flink-1.7.2-0.2.1",
        "flink-demo-0.1.6",
    ] {
        let o = s
            .get(&ovs, ov)
            .unwrap_or_else(|| panic!("OperatorVersion {ov} installed"));
        // each package's signature verified, its signer recorded (the children's too)
        let a = &o["metadata"]["annotations"];
        assert_eq!(a["kudo.dev/package-verification"], "verified", "{ov}: {a}");
        assert_eq!(a["kudo.dev/package-signer"], fingerprint.as_str(), "{ov}");
    }
    let demo = s.get(&ovs, "flink-demo-0.1.6").unwrap();
    let kafka_task = demo["spec"]["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "kafka")
        .unwrap()
        .clone();
    assert_eq!(kafka_task["spec"]["operatorName"], "kafka");
    assert_eq!(kafka_task["spec"]["operatorVersion"], "1.3.1");
    // The manager finds the children's OperatorVersions in the cluster and starts them, one
    // step after the other: zookeeper, then kafka (its deploy plan begins with a Pipe task,
    // run for real: a busybox init container, its files read with exec), then flink, then the
    // demo's own workloads. The parent completes once its three children have.
    wait_until("the child Instance zk", || {
        s.get(&s.instances("v1beta2"), "zk").is_some()
    });
    let zk = s.instance("zk");
    assert_eq!(
        zk["spec"]["operatorVersion"]["name"], "zookeeper-3.4.14-0.3.1",
        "{zk}"
    );
    s.wait_plan("demo", "deploy");
    say(&format!(
        "e2e: flink-demo COMPLETE with its three children in {:.1} s",
        started.elapsed().as_secs_f64()
    ));
    for (child, ov) in [
        ("zk", "zookeeper-3.4.14-0.3.1"),
        ("kafka", "kafka-2.5.0-1.3.1"),
        ("flink", "flink-1.7.2-0.2.1"),
    ] {
        let i = s.instance(child);
        assert_eq!(i["spec"]["operatorVersion"]["name"], ov, "{i}");
        assert_eq!(
            i["status"]["planStatus"]["deploy"]["status"], "COMPLETE",
            "{child}: {i}"
        );
    }
    let pipe_secret =
        "kafka.deploy.deploykafka.generatetlscertificates.generatetlscertificates.certificate";
    assert!(
        s.get(&s.api("v1", "Secret", "secrets"), pipe_secret)
            .is_some(),
        "kafka's Pipe made its Secret"
    );
    // Uninstalled, the parent goes with its children and their workloads.
    s.kudo_at(&home, &["uninstall", "demo", "-n", &s.namespace, "--wait"])
        .assert()
        .success();
    wait_until("the children and their workloads are gone", || {
        let instances = s
            .runtime
            .block_on(s.instances("v1beta2").list(&Default::default()))
            .map(|l| l.items.len())
            .unwrap_or(usize::MAX);
        let pods = s
            .runtime
            .block_on(s.api("v1", "Pod", "pods").list(&Default::default()))
            .map(|l| l.items.len())
            .unwrap_or(usize::MAX);
        let sets = s
            .runtime
            .block_on(
                s.api("apps/v1", "StatefulSet", "statefulsets")
                    .list(&Default::default()),
            )
            .map(|l| l.items.len())
            .unwrap_or(usize::MAX);
        instances == 0 && pods == 0 && sets == 0
    });

    // A second install of the same packages: every download comes from the cache.
    let started = Instant::now();
    s.kudo_at(
        &home,
        &[
            "install",
            "zookeeper",
            "--repo",
            "local",
            "--operator-version",
            "0.3.1",
            "--instance",
            "zk2",
            "-n",
            &s.namespace,
        ],
    )
    .assert()
    .success();
    say(&format!(
        "e2e: kudo install zookeeper (by name, cached) in {:.2} s",
        started.elapsed().as_secs_f64()
    ));

    // Tampered: cassandra changed after indexing.
    let tampered = work.path().join("tampered");
    kudo_testkit::copy_dir(&example("cassandra-v1beta2"), &tampered);
    let svc = tampered.join("templates/service.yaml");
    let t = std::fs::read_to_string(&svc).unwrap();
    std::fs::write(&svc, format!("{t}\n# changed\n")).unwrap();
    let (bytes, _) = kudo_pkg::create_archive(&tampered).unwrap();
    std::fs::write(served.join("cassandra-3.11.6_2.0.0.tgz"), &bytes).unwrap();
    let out = s
        .kudo_at(
            &home,
            &[
                "install",
                "cassandra",
                "--repo",
                "local",
                "-n",
                &s.namespace,
            ],
        )
        .assert()
        .code(1)
        .get_output()
        .clone();
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(&kudo_pkg::repo::sha256_hex(&bytes))
            && stderr.contains("is not the digest"),
        "{stderr}"
    );
    let operators = s.api("kudo.dev/v1beta2", "Operator", "operators");
    assert!(
        s.get(&operators, "cassandra").is_none(),
        "nothing installed"
    );
    assert!(
        s.get(&ovs, "cassandra-3.11.6-2.0.0").is_none(),
        "nothing installed"
    );
    drop(server);
}
