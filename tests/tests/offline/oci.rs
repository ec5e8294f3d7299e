//! `kudo package push`, `kudo package pull` and `kudo registry login|logout` as processes,
//! against a real registry: Debian's `docker-registry` (the CNCF distribution server) on a
//! loopback port ([`kudo_testkit::TestRegistry`]). Each test skips, saying so, when it is not
//! installed (in CI that fails).

use kudo_pkg::repo::sha256_hex;
use std::path::Path;

use assert_cmd::Command;
use kudo_testkit::{RegistryOptions, TestRegistry, example, kudo_in};
use predicates::prelude::*;
use serde_json::Value;

/// `kudo` with every credentials file it reads in `home`: nothing of the user's is read.
fn kudo(home: &Path) -> Command {
    let mut c = kudo_in(home);
    c.env_remove("CI");
    c
}

/// The JSON a command printed.
fn json_of(output: &std::process::Output) -> Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}",
            String::from_utf8_lossy(&output.stdout)
        )
    })
}

/// `kudo package create` of an example into `dir`: the archive's path.
fn create(home: &Path, package: &Path, dir: &Path) -> std::path::PathBuf {
    let out = kudo(home)
        .args(["package", "create"])
        .arg(package)
        .arg("-d")
        .arg(dir)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    std::path::PathBuf::from(String::from_utf8(out).unwrap().trim())
}

/// `kudo package push PACKAGE TARGET --plain-http -o json`, which must succeed.
fn push(home: &Path, package: &Path, target: &str) -> Value {
    json_of(
        kudo(home)
            .args(["package", "push"])
            .arg(package)
            .arg(target)
            .args(["--plain-http", "-o", "json"])
            .assert()
            .success()
            .get_output(),
    )
}

/// The tags the registry lists for `repository`, through its HTTP API.
fn tags(registry: &TestRegistry, repository: &str) -> Vec<String> {
    let (status, body) = registry
        .get(&format!("/v2/{repository}/tags/list"))
        .unwrap();
    assert_eq!(status, 200, "{body}");
    let list: Value = serde_json::from_str(&body).unwrap();
    let mut tags: Vec<String> = list["tags"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap().to_string())
        .collect();
    tags.sort();
    tags
}

#[test]
fn a_target_or_package_that_is_not_one_is_refused() {
    let home = tempfile::tempdir().unwrap();
    let pkg = example("cassandra-v1beta2");
    let cases: &[(&[&str], &str)] = &[
        (
            &["localhost:5000/kudo"],
            "localhost:5000/kudo: not an OCI reference kudo takes here: it does not start with oci://",
        ),
        (
            &["oci://localhost:5000/kudo:1.0"],
            "a push target names no tag",
        ),
        (
            &["oci://localhost:5000/Kudo"],
            "\"Kudo\" is not a repository name component",
        ),
    ];
    for (args, want) in cases {
        kudo(home.path())
            .args(["package", "push"])
            .arg(&pkg)
            .args(*args)
            .assert()
            .code(1)
            .stderr(predicate::str::contains(*want));
    }
    // a file that is not a .tgz, one that does not exist
    let readme = kudo_testkit::repo().join("README.md");
    kudo(home.path())
        .args(["package", "push"])
        .arg(&readme)
        .arg("oci://localhost:5000/kudo")
        .assert()
        .code(1)
        .stderr(predicate::str::contains("README.md: not a package archive"));
    kudo(home.path())
        .args([
            "package",
            "push",
            "cassandra-9.9.9.tgz",
            "oci://localhost:5000/kudo",
        ])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "cassandra-9.9.9.tgz: no such file",
        ));
    // pull needs a tag
    kudo(home.path())
        .args(["package", "pull", "oci://localhost:5000/kudo/cassandra"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("it names no tag"));
}

#[test]
fn push_tags_versions_repush_gives_the_same_digests_and_pull_gives_the_same_bytes() {
    let Some(registry) = TestRegistry::start(RegistryOptions::default()) else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let tgz = create(home.path(), &example("cassandra-v1beta2"), home.path());
    let bytes = std::fs::read(&tgz).unwrap();

    let first = push(home.path(), &tgz, &registry.oci("kudo"));
    let reference = format!("{}/cassandra:3.11.6_2.0.0", registry.oci("kudo"));
    assert_eq!(first["reference"], reference.as_str());
    assert_eq!(first["tag"], "3.11.6_2.0.0");
    assert_eq!(first["packageDigest"], sha256_hex(&bytes).as_str());
    let manifest_digest = first["manifestDigest"].as_str().unwrap().to_string();
    assert!(manifest_digest.starts_with("sha256:"), "{manifest_digest}");

    // the same package again, and from its directory (archived in memory, the same bytes)
    for again in [tgz.clone(), example("cassandra-v1beta2")] {
        let pushed = push(home.path(), &again, &registry.oci("kudo"));
        assert_eq!(
            pushed["manifestDigest"],
            manifest_digest.as_str(),
            "{again:?}"
        );
        assert_eq!(pushed["packageDigest"], first["packageDigest"], "{again:?}");
    }

    // a second version, from a directory; the text output
    let (_copy, pkg) = kudo_testkit::copy_package(&example("cassandra-v1beta2"));
    let op = std::fs::read_to_string(pkg.join("operator.yaml")).unwrap();
    std::fs::write(
        pkg.join("operator.yaml"),
        op.replace(
            "operatorVersion: \"2.0.0\"",
            "operatorVersion: \"2.0.1+build.7\"",
        ),
    )
    .unwrap();
    kudo(home.path())
        .args(["package", "push"])
        .arg(&pkg)
        .arg(registry.oci("kudo"))
        .arg("--plain-http")
        .assert()
        .success()
        .stdout(predicate::str::starts_with(format!(
            "pushed {}/cassandra:3.11.6_2.0.1__build.7\ndigest: sha256:",
            registry.oci("kudo")
        )));
    assert_eq!(
        tags(&registry, "kudo/cassandra"),
        ["3.11.6_2.0.0", "3.11.6_2.0.1__build.7"]
    );

    // the manifest, as the registry keeps it
    let (status, manifest) = registry
        .get("/v2/kudo/cassandra/manifests/3.11.6_2.0.0")
        .unwrap();
    assert_eq!(status, 200);
    let manifest: Value = serde_json::from_str(&manifest).unwrap();
    assert_eq!(
        manifest["config"]["mediaType"],
        "application/vnd.kudo.operator.config.v1+json"
    );
    assert_eq!(
        manifest["layers"][0]["mediaType"],
        "application/vnd.kudo.operator.package.v1.tar+gzip"
    );
    assert_eq!(
        manifest["layers"][0]["digest"],
        format!("sha256:{}", sha256_hex(&bytes)).as_str()
    );
    assert_eq!(manifest["layers"].as_array().unwrap().len(), 1);
    assert_eq!(
        manifest["annotations"],
        serde_json::json!({
            "org.opencontainers.image.title": "cassandra",
            "org.opencontainers.image.version": "3.11.6_2.0.0",
        })
    );
    let (_, config) = registry
        .get(&format!(
            "/v2/kudo/cassandra/blobs/{}",
            manifest["config"]["digest"].as_str().unwrap()
        ))
        .unwrap();
    let config: Value = serde_json::from_str(&config).unwrap();
    assert_eq!(config["name"], "cassandra");
    assert_eq!(config["operatorVersion"], "2.0.0");
    assert_eq!(config["appVersion"], "3.11.6");
    assert_eq!(config["maintainers"][0]["name"], "KUDO example maintainers");

    // pull: the same bytes and digests; the file is named as `package create` names it
    let out = tempfile::tempdir().unwrap();
    let pulled = json_of(
        kudo(home.path())
            .args([
                "package",
                "pull",
                &reference,
                "--plain-http",
                "-o",
                "json",
                "-d",
            ])
            .arg(out.path())
            .assert()
            .success()
            .get_output(),
    );
    assert_eq!(pulled["manifestDigest"], manifest_digest.as_str());
    assert_eq!(pulled["packageDigest"], first["packageDigest"]);
    let file = out.path().join("cassandra-2.0.0.tgz");
    assert_eq!(pulled["path"], file.display().to_string().as_str());
    assert_eq!(std::fs::read(&file).unwrap(), bytes);
    // a file that exists is kept without --overwrite
    kudo(home.path())
        .args(["package", "pull", &reference, "--plain-http", "-d"])
        .arg(out.path())
        .assert()
        .code(1)
        .stderr(predicate::str::contains("--overwrite"));
    kudo(home.path())
        .args([
            "package",
            "pull",
            &reference,
            "--plain-http",
            "--overwrite",
            "-d",
        ])
        .arg(out.path())
        .assert()
        .success()
        .stdout(format!("{}\n", file.display()));

    // a tag or a repository the registry does not have
    kudo(home.path())
        .args(["package", "pull", "--plain-http"])
        .arg(format!("{}/cassandra:9.9.9", registry.oci("kudo")))
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "cassandra:9.9.9: not found in the registry",
        ));
}

/// Pushes an artifact that is not kudo's, with oci-client as another tool would.
fn push_foreign(registry: &TestRegistry, repository: &str, config_type: &str, layer_type: &str) {
    use oci_client::client::{ClientConfig, ClientProtocol, Config, ImageLayer};
    let _ = rustls::crypto::ring::default_provider().install_default();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let client = oci_client::Client::try_from(ClientConfig {
            protocol: ClientProtocol::Http,
            ..ClientConfig::default()
        })
        .unwrap();
        let reference = oci_client::Reference::with_tag(
            registry.host().to_string(),
            repository.to_string(),
            "1.0.0".to_string(),
        );
        let layer = ImageLayer::new(b"not a kudo package".to_vec(), layer_type.into(), None);
        let config = Config::new(b"{}".to_vec(), config_type.into(), None);
        client
            .push(
                &reference,
                &[layer],
                config,
                &oci_client::secrets::RegistryAuth::Anonymous,
                None,
            )
            .await
            .unwrap();
    });
}

#[test]
fn what_kudo_package_push_did_not_push_is_refused() {
    let Some(registry) = TestRegistry::start(RegistryOptions::default()) else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let cases = [
        (
            "charts/mysql",
            "application/vnd.cncf.helm.config.v1+json",
            "application/vnd.cncf.helm.chart.content.v1.tar+gzip",
            "a Helm chart",
        ),
        (
            "images/busybox",
            "application/vnd.oci.image.config.v1+json",
            "application/vnd.oci.image.layer.v1.tar+gzip",
            "a container image",
        ),
        (
            "kudo/other-layer",
            "application/vnd.kudo.operator.config.v1+json",
            "application/vnd.oci.image.layer.v1.tar+gzip",
            "a kudo package manifest with other layers",
        ),
    ];
    for (repository, config, layer, what) in cases {
        push_foreign(&registry, repository, config, layer);
        let out = tempfile::tempdir().unwrap();
        kudo(home.path())
            .args(["package", "pull", "--plain-http", "-d"])
            .arg(out.path())
            .arg(format!("{}:1.0.0", registry.oci(repository)))
            .assert()
            .code(1)
            .stderr(predicate::str::contains(format!(
                "{}:1.0.0: not a kudo operator package: {what} (config {config}, layers [{layer}])",
                registry.oci(repository)
            )));
        assert_eq!(
            std::fs::read_dir(out.path()).unwrap().count(),
            0,
            "{repository}"
        );
    }
}

#[test]
fn a_package_the_registry_serves_altered_is_refused_and_not_written() {
    let Some(registry) = TestRegistry::start(RegistryOptions::default()) else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let pushed = push(
        home.path(),
        &example("zookeeper-v1beta1"),
        &registry.oci("kudo"),
    );
    let digest = format!("sha256:{}", pushed["packageDigest"].as_str().unwrap());
    // one byte changed where the registry keeps the blob: it serves it as it is
    let blob = registry.blob_file(&digest);
    let mut bytes = std::fs::read(&blob).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0xff;
    std::fs::write(&blob, &bytes).unwrap();
    let out = tempfile::tempdir().unwrap();
    kudo(home.path())
        .args(["package", "pull", "--plain-http", "-d"])
        .arg(out.path())
        .arg(pushed["reference"].as_str().unwrap())
        .assert()
        .code(1)
        .stderr(predicate::str::contains(format!(
            "the package's bytes have digest sha256:{}, its manifest says {digest}",
            sha256_hex(&bytes)
        )));
    assert_eq!(std::fs::read_dir(out.path()).unwrap().count(), 0);
}

/// A registry asking for Basic credentials: alice, password `s3cret`.
fn registry_with_alice() -> Option<TestRegistry> {
    TestRegistry::start(RegistryOptions::with_user("alice", "s3cret"))
}

#[test]
fn login_checks_the_credentials_keeps_them_and_push_and_pull_use_them() {
    let Some(registry) = registry_with_alice() else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let host = registry.host();
    let file = home.path().join("kudo/registry/config.json");
    let pkg = example("zookeeper-v1beta1");
    let target = registry.oci("team/kudo");
    let push = || {
        let mut c = kudo(home.path());
        c.args(["package", "push"])
            .arg(&pkg)
            .arg(&target)
            .arg("--plain-http");
        c
    };

    // anonymous: refused, with the way out
    push()
        .assert()
        .code(1)
        .stderr(predicate::str::contains(format!(
            "the registry refused access (401 Unauthorized); no credentials for {host} were found: \
         log in with `kudo registry login {host}`"
        )));

    // a wrong password: refused, nothing kept, the password never shown
    kudo(home.path())
        .args(["registry", "login", host, "-u", "alice", "--password-stdin", "--plain-http"])
        .write_stdin("wrong-password\n")
        .assert()
        .code(1)
        .stderr(predicate::str::contains(format!(
            "{host}: the registry refused the credentials of alice (401 Unauthorized); nothing was stored"
        )))
        .stderr(predicate::str::contains("wrong-password").not());
    assert!(!file.exists());

    // the right one: kept, mode 0600, Docker's format
    kudo(home.path())
        .args([
            "registry",
            "login",
            host,
            "-u",
            "alice",
            "--password-stdin",
            "--plain-http",
        ])
        .write_stdin("s3cret\n")
        .assert()
        .success()
        .stdout(format!("logged in to {host}\n"));
    let config: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    use base64::Engine as _;
    assert_eq!(
        config["auths"][host]["auth"],
        base64::engine::general_purpose::STANDARD
            .encode("alice:s3cret")
            .as_str()
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "{mode:o}");
    }

    // push and pull with them
    push()
        .assert()
        .success()
        .stdout(predicate::str::contains(format!(
            "pushed {target}/zookeeper:3.6.2_0.4.0"
        )));
    let out = tempfile::tempdir().unwrap();
    kudo(home.path())
        .args(["package", "pull", "--plain-http", "-d"])
        .arg(out.path())
        .arg(format!("{target}/zookeeper:3.6.2_0.4.0"))
        .assert()
        .success();
    assert!(out.path().join("zookeeper-0.4.0.tgz").is_file());

    // -p works, with a warning; a password stored again replaces the first
    kudo(home.path())
        .args([
            "registry",
            "login",
            host,
            "-u",
            "alice",
            "-p",
            "s3cret",
            "--plain-http",
        ])
        .assert()
        .success()
        .stderr(predicate::str::contains("prefer --password-stdin"));
    let config: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(config["auths"].as_object().unwrap().len(), 1);

    // credentials kudo keeps that the registry no longer takes: the message says whose
    std::fs::write(
        &file,
        serde_json::json!({"auths": {host: {"auth": base64::engine::general_purpose::STANDARD.encode("alice:old")}}})
            .to_string(),
    )
    .unwrap();
    push()
        .assert()
        .code(1)
        .stderr(predicate::str::contains(format!(
            "the credentials of alice from {} were sent",
            file.display()
        )));

    // logout: gone, and pushes are anonymous again
    kudo(home.path())
        .args(["registry", "logout", host])
        .assert()
        .success()
        .stdout(format!("logged out of {host}\n"));
    let config: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(config["auths"], serde_json::json!({}));
    push()
        .assert()
        .code(1)
        .stderr(predicate::str::contains("no credentials for"));
    kudo(home.path())
        .args(["registry", "logout", host])
        .assert()
        .success()
        .stdout(format!("not logged in to {host}\n"));
}

#[test]
fn docker_s_config_is_read_after_kudo_s_and_xdg_holds_kudo_s_without_kudo_home() {
    let Some(registry) = registry_with_alice() else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let host = registry.host();
    let pkg = example("zookeeper-v1beta1");
    // Docker's entry, keyed with a scheme, user and password apart
    std::fs::create_dir_all(home.path().join("docker")).unwrap();
    std::fs::write(
        home.path().join("docker/config.json"),
        serde_json::json!({"auths": {format!("http://{host}"): {"username": "alice", "password": "s3cret"}}})
            .to_string(),
    )
    .unwrap();
    kudo(home.path())
        .args(["package", "push"])
        .arg(&pkg)
        .arg(registry.oci("kudo"))
        .arg("--plain-http")
        .assert()
        .success();
    // kudo's own file comes first: its wrong password is the one sent
    let xdg = home.path().join("xdg");
    let run = |args: &[&str], stdin: &str| {
        let mut c = kudo(home.path());
        c.env_remove("KUDO_HOME")
            .env("XDG_CONFIG_HOME", &xdg)
            .args(args)
            .write_stdin(stdin.to_string());
        c.assert()
    };
    run(
        &[
            "registry",
            "login",
            host,
            "-u",
            "alice",
            "--password-stdin",
            "--plain-http",
        ],
        "s3cret",
    )
    .success();
    let kept = xdg.join("kudo/registry/config.json");
    assert!(kept.is_file());
    std::fs::write(
        &kept,
        serde_json::json!({"auths": {host: {"username": "alice", "password": "old"}}}).to_string(),
    )
    .unwrap();
    let push_args = [
        "package",
        "push",
        pkg.to_str().unwrap(),
        &registry.oci("kudo"),
        "--plain-http",
    ];
    run(&push_args, "")
        .code(1)
        .stderr(predicate::str::contains(format!(
            "the credentials of alice from {} were sent",
            kept.display()
        )));
    // logged out of kudo: Docker's entry again, and logout says it stays
    run(&["registry", "logout", host], "")
        .success()
        .stderr(predicate::str::contains("docker logout"));
    run(&push_args, "").success();
}

#[test]
fn a_registry_with_a_private_ca_is_trusted_through_kudo_registry_ca_file() {
    let bundle = kudo_webhook::certs::generate(
        &["127.0.0.1".to_string()],
        std::time::Duration::from_secs(3600),
    )
    .unwrap();
    let Some(registry) = TestRegistry::start(RegistryOptions {
        htpasswd: None,
        tls: Some((bundle.cert_pem.clone(), bundle.key_pem.clone())),
    }) else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let ca = home.path().join("ca.pem");
    std::fs::write(&ca, &bundle.ca_pem).unwrap();
    let push = |ca_file: Option<&Path>| {
        let mut c = kudo(home.path());
        c.args(["package", "push"])
            .arg(example("zookeeper-v1beta1"))
            .arg(registry.oci("kudo"));
        if let Some(f) = ca_file {
            c.env("KUDO_REGISTRY_CA_FILE", f);
        }
        c.assert()
    };
    push(None)
        .code(1)
        .stderr(predicate::str::contains("cannot reach the registry"))
        .stderr(predicate::str::contains("UnknownIssuer"));
    push(Some(&ca))
        .success()
        .stdout(predicate::str::contains("pushed oci://"));
    push(Some(&home.path().join("missing.pem")))
        .code(1)
        .stderr(predicate::str::contains(
            "missing.pem (from KUDO_REGISTRY_CA_FILE): cannot read it",
        ));
}

/// An `oci://` reference is a PACKAGE wherever one is taken: without a tag, the newest tag the
/// versions asked for accept (exact or a semver range).
#[test]
fn an_oci_reference_is_a_package_with_versions_chosen_among_its_tags() {
    let Some(registry) = TestRegistry::start(RegistryOptions::default()) else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let base = registry.oci("kudo");
    for (version, nodes) in [("0.3.0", 1), ("0.4.0", 3), ("1.0.0", 5)] {
        let dir = home.path().join(format!("zookeeper-{version}"));
        kudo_testkit::copy_dir(&example("zookeeper-v1beta1"), &dir);
        let op = std::fs::read_to_string(dir.join("operator.yaml")).unwrap();
        std::fs::write(
            dir.join("operator.yaml"),
            op.replace(
                "operatorVersion: \"0.4.0\"",
                &format!("operatorVersion: \"{version}\""),
            ),
        )
        .unwrap();
        let params = std::fs::read_to_string(dir.join("params.yaml")).unwrap();
        std::fs::write(
            dir.join("params.yaml"),
            params.replacen("default: \"3\"", &format!("default: \"{nodes}\""), 1),
        )
        .unwrap();
        push(home.path(), &dir, &base);
    }
    let node_count = |args: &[&str]| {
        let out = kudo(home.path())
            .args([
                "params",
                &format!("{base}/zookeeper"),
                "--plain-http",
                "-o",
                "json",
            ])
            .args(args)
            .assert()
            .success()
            .get_output()
            .clone();
        json_of(&out)["NODE_COUNT"].to_string()
    };
    assert_eq!(node_count(&[]), "5", "the newest");
    assert_eq!(node_count(&["--operator-version", "~0.3"]), "1");
    assert_eq!(node_count(&["--operator-version", "<1"]), "3");
    kudo(home.path())
        .args([
            "template",
            &format!("{base}/zookeeper:3.6.2_0.4.0"),
            "--plain-http",
        ])
        .assert()
        .success()
        .stderr(predicate::str::contains(format!(
            "zookeeper 3.6.2_0.4.0 from {base}/zookeeper:3.6.2_0.4.0"
        )));
    kudo(home.path())
        .args(["params", &format!("{base}/zookeeper"), "--plain-http"])
        .args(["--operator-version", "2.0.0"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "has no zookeeper with operatorVersion 2.0.0; it has 3.6.2_1.0.0, 3.6.2_0.4.0, 3.6.2_0.3.0",
        ));
}
