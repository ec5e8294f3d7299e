//! Trusted packages (issue 37, `docs/signing.md`) on the real control plane: a package pushed
//! to a registry (Debian's `docker-registry` on loopback) and signed with a kudo key installs
//! with `--verify=KEY`; its OperatorVersion records where it came from, its digest and the
//! signer's fingerprint, and `kudo get operatorversions -o wide` shows them. An unsigned
//! package is refused before anything is written to the cluster.

use crate::harness::*;
use kudo_testkit::{RegistryOptions, TestRegistry};

/// `kudo ARGS` with its configuration, cache and key password (`pw`) in `home` (and the
/// cluster's kubeconfig for `install`).
fn kudo_home(s: &Scenario, home: &Path, args: &[&str]) -> assert_cmd::Command {
    let mut c = s.kudo_at(home, args);
    c.env("KUDO_PASSWORD", "pw");
    c
}

/// `kudo package generate-key -d DIR` (password `pw`): the key's fingerprint.
pub(super) fn generate_key(s: &Scenario, home: &Path, dir: &Path) -> String {
    let out = kudo_home(s, home, &["package", "generate-key", "-d"])
        .arg(dir)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    text(&out)
        .lines()
        .find_map(|l| l.strip_prefix("fingerprint: "))
        .expect("generate-key prints the fingerprint")
        .to_string()
}

/// The `reference` a `kudo package push -o json` printed.
fn pushed(s: &Scenario, home: &Path, package: &Path, target: &str) -> Value {
    let out = kudo_home(s, home, &["package", "push"])
        .arg(package)
        .arg(target)
        .args(["--plain-http", "-o", "json"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    serde_json::from_slice(&out).unwrap()
}

#[test]
fn a_signed_oci_package_installs_with_verify_and_its_operator_version_records_the_signer() {
    let Some(s) = Scenario::start_with_workloads("signing", false) else {
        return;
    };
    let Some(registry) = TestRegistry::start(RegistryOptions::default()) else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let home = work.path();
    let fingerprint = generate_key(&s, home, home);
    let public = home.join("cosign.pub");
    let verify = format!("--verify={}", public.display());
    let zookeeper = pushed(
        &s,
        home,
        &example("zookeeper-v1beta1"),
        &registry.oci("kudo"),
    );
    let cassandra = pushed(
        &s,
        home,
        &example("cassandra-v1beta2"),
        &registry.oci("kudo"),
    );
    let zk_ref = zookeeper["reference"].as_str().unwrap();
    let digest = zookeeper["manifestDigest"].as_str().unwrap();
    kudo_home(
        &s,
        home,
        &["package", "sign", zk_ref, "--plain-http", "--key"],
    )
    .arg(home.join("cosign.key"))
    .assert()
    .success();

    // Unsigned: refused, naming the package, its digest and the key tried; nothing written.
    let refused = kudo_home(
        &s,
        home,
        &[
            "install",
            cassandra["reference"].as_str().unwrap(),
            "--plain-http",
            &verify,
            "--instance",
            "cass",
            "-n",
            &s.namespace,
        ],
    )
    .assert()
    .code(1)
    .get_output()
    .stderr
    .clone();
    let stderr = text(&refused);
    for part in [
        "refused: not signed by a trusted key: no Sigstore bundle among its referrers; no cosign signature for",
        cassandra["manifestDigest"].as_str().unwrap(),
        &fingerprint,
        "nothing was cached or written",
    ] {
        assert!(stderr.contains(part), "{part}\n{stderr}");
    }
    let ovs = s.api("kudo.dev/v1beta2", "OperatorVersion", "operatorversions");
    assert!(s.get(&ovs, "cassandra-3.11.6-2.0.0").is_none());
    assert!(s.get(&s.instances("v1beta2"), "cass").is_none());

    // Signed: installed, the signer said and recorded.
    let started = Instant::now();
    let out = kudo_home(
        &s,
        home,
        &[
            "install",
            zk_ref,
            "--plain-http",
            &verify,
            "--instance",
            "zk",
            "-n",
            &s.namespace,
        ],
    )
    .assert()
    .success()
    .get_output()
    .stderr
    .clone();
    say(&format!(
        "e2e: kudo install oci://... --verify in {} ms",
        started.elapsed().as_millis()
    ));
    assert!(
        text(&out).contains(&format!("signature verified (key {}", public.display())),
        "{}",
        text(&out)
    );
    let ov = s
        .get(&ovs, "zookeeper-3.6.2-0.4.0")
        .expect("its OperatorVersion");
    let a = &ov["metadata"]["annotations"];
    assert_eq!(
        a["kudo.dev/package-source"],
        format!("{zk_ref}@{digest}").as_str(),
        "{a}"
    );
    assert_eq!(
        a["kudo.dev/package-digest"],
        format!("sha256:{}", zookeeper["packageDigest"].as_str().unwrap()).as_str()
    );
    assert_eq!(a["kudo.dev/package-verification"], "verified");
    assert_eq!(a["kudo.dev/package-signer"], fingerprint.as_str());
    let wide = s
        .kudo(&["get", "operatorversions", "-o", "wide", "-n", &s.namespace])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let wide = text(&wide);
    assert!(wide.contains("SIGNATURE"), "{wide}");
    assert!(wide.contains(&format!("verified {fingerprint}")), "{wide}");
    // The Instance runs that OperatorVersion. (Its plan is not waited for: the example's
    // metrics step depends on whether another scenario has made the ServiceMonitor CRD.)
    assert_eq!(
        s.instance("zk")["spec"]["operatorVersion"]["name"],
        "zookeeper-3.6.2-0.4.0"
    );
}
