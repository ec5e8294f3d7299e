//! cosign signatures of packages (`kudo package generate-key`, `sign`, `verify-signature`,
//! `--verify`, the policy of `repositories.yaml`) as processes, against a real registry:
//! Debian's `docker-registry` on a loopback port ([`kudo_testkit::TestRegistry`]), and a
//! repository served over HTTP. Each registry test skips, saying so, when it is not installed
//! (in CI that fails).

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use base64::Engine;
use kudo_testkit::{RegistryOptions, TestRegistry, example, kudo_in};
use oci_client::client::ImageLayer;
use predicates::prelude::*;
use serde_json::Value;

/// `kudo` with its configuration, cache and credentials in `home`, and the keys' password.
fn kudo(home: &Path) -> Command {
    let mut c = kudo_in(home);
    c.env_remove("CI")
        .env_remove("COSIGN_PASSWORD")
        .env("KUDO_PASSWORD", "pw");
    c
}

fn json_of(output: &std::process::Output) -> Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

fn stderr(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// A key pair in `home/NAME/`: its private and public key files, and the fingerprint.
fn key_pair(home: &Path, name: &str) -> (PathBuf, PathBuf, String) {
    let dir = home.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    let out = kudo(home)
        .args(["package", "generate-key", "-d"])
        .arg(&dir)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    let fingerprint = text
        .lines()
        .find_map(|l| l.strip_prefix("fingerprint: "))
        .unwrap()
        .to_string();
    (dir.join("cosign.key"), dir.join("cosign.pub"), fingerprint)
}

/// `kudo package push DIR oci://.../kudo --plain-http -o json`.
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

/// `kudo package sign REF --key K --bundle-format FORMAT`: its JSON.
fn sign(home: &Path, reference: &str, key: &Path, format: &str) -> Value {
    json_of(
        kudo(home)
            .args([
                "package",
                "sign",
                reference,
                "--plain-http",
                "-o",
                "json",
                "--bundle-format",
                format,
                "--key",
            ])
            .arg(key)
            .assert()
            .success()
            .get_output(),
    )
}

/// `kudo package verify-signature REF --key K...`: its exit code and JSON.
fn verify_signature(home: &Path, reference: &str, keys: &[&Path]) -> (i32, Value) {
    let mut c = kudo(home);
    c.args([
        "package",
        "verify-signature",
        reference,
        "--plain-http",
        "-o",
        "json",
    ]);
    for k in keys {
        c.arg("--key").arg(k);
    }
    let out = c.output().unwrap();
    (out.status.code().unwrap(), json_of(&out))
}

/// The packages kudo's cache holds.
fn cached_packages(home: &Path) -> usize {
    let dir = home.join("cache/kudo/packages");
    std::fs::read_dir(dir).map(|d| d.count()).unwrap_or(0)
}

/// A package signed and verified; the signature where cosign keeps it, in cosign's layout; a
/// second key's signature added beside the first; a key that did not sign, a moved tag (the
/// manifest replaced) and an unsigned package refused by `--verify`, before anything is
/// cached; `warn` and `required` from `kudo registry trust`.
#[test]
fn a_package_signed_in_a_registry_is_verified_and_an_unsigned_or_tampered_one_refused() {
    let Some(registry) = TestRegistry::start(RegistryOptions::default()) else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let home = work.path();
    let (a_key, a_pub, a_fp) = key_pair(home, "a");
    let (b_key, b_pub, b_fp) = key_pair(home, "b");
    let (_, c_pub, _) = key_pair(home, "c");
    let pushed = push(home, &example("zookeeper-v1beta1"), &registry.oci("kudo"));
    let reference = pushed["reference"].as_str().unwrap().to_string();
    let digest = pushed["manifestDigest"].as_str().unwrap().to_string();

    // unsigned
    let (code, v) = verify_signature(home, &reference, &[&a_pub]);
    assert_eq!(code, 1, "{v}");
    assert_eq!(v["verified"], false);
    assert!(
        v["reason"]
            .as_str()
            .unwrap()
            .contains("no cosign signature"),
        "{v}"
    );

    // signed by a: a verifies, b does not
    let signed = sign(home, &reference, &a_key, "legacy");
    assert_eq!(signed["manifestDigest"], digest.as_str());
    assert_eq!(signed["key"], a_fp.as_str());
    let (code, v) = verify_signature(home, &reference, &[&a_pub]);
    assert_eq!(
        (code, &v["key"]["fingerprint"]),
        (0, &Value::from(a_fp.clone()))
    );
    // untagged, as `kudo install` takes it: the newest tag
    let untagged = reference.rsplit_once(':').unwrap().0;
    let (code, v) = verify_signature(home, untagged, &[&a_pub]);
    assert_eq!(
        (code, &v["reference"]),
        (0, &Value::from(reference.clone())),
        "{v}"
    );
    assert_eq!(v["manifestDigest"], digest.as_str());
    // a folder carries no signature
    let folder = example("zookeeper-v1beta1");
    let out = kudo(home)
        .args(["package", "verify-signature"])
        .arg(&folder)
        .arg("--key")
        .arg(&a_pub)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("carries no signature"),
        "{}",
        stderr(&out)
    );
    let (code, v) = verify_signature(home, &reference, &[&b_pub]);
    assert_eq!(code, 1);
    assert!(
        v["reason"]
            .as_str()
            .unwrap()
            .contains("1 signature(s) for sha256:"),
        "{v}"
    );

    // cosign's layout: the tag sha256-HEX.sig, one simple-signing layer per signature, its
    // signature in cosign's annotation, its payload naming the manifest digest
    let sig_tag = format!("{}.sig", digest.replace(':', "-"));
    let (status, body) = registry
        .get(&format!("/v2/kudo/zookeeper/manifests/{sig_tag}"))
        .unwrap();
    assert_eq!(status, 200, "{body}");
    let manifest: Value = serde_json::from_str(&body).unwrap();
    let layers = manifest["layers"].as_array().unwrap();
    assert_eq!(layers.len(), 1);
    assert_eq!(
        layers[0]["mediaType"],
        "application/vnd.dev.cosign.simplesigning.v1+json"
    );
    assert!(layers[0]["annotations"]["dev.cosignproject.cosign/signature"].is_string());
    let (_, payload) = registry
        .get(&format!(
            "/v2/kudo/zookeeper/blobs/{}",
            layers[0]["digest"].as_str().unwrap()
        ))
        .unwrap();
    let payload: Value = serde_json::from_str(&payload).unwrap();
    assert_eq!(
        payload["critical"]["type"],
        "cosign container image signature"
    );
    assert_eq!(
        payload["critical"]["image"]["docker-manifest-digest"],
        digest.as_str()
    );
    assert_eq!(
        payload["critical"]["identity"]["docker-reference"],
        format!("{}/kudo/zookeeper", registry.host())
    );

    // b signs too: both signatures are kept (cosign appends); signing again with a replaces
    // a's own
    assert_eq!(sign(home, &reference, &b_key, "legacy")["signatures"], 2);
    assert_eq!(sign(home, &reference, &a_key, "legacy")["signatures"], 2);
    for (public, fp) in [(&a_pub, &a_fp), (&b_pub, &b_fp)] {
        let (code, v) = verify_signature(home, &reference, &[&c_pub, public]);
        assert_eq!(
            (code, &v["key"]["fingerprint"]),
            (0, &Value::from(fp.clone()))
        );
    }

    // --verify=KEY on a command that takes a PACKAGE: the signer is said; c is refused before
    // anything is cached
    let ok = kudo(home)
        .args(["params", &reference, "--plain-http"])
        .arg(format!("--verify={}", a_pub.display()))
        .assert()
        .success()
        .get_output()
        .clone();
    assert!(
        stderr(&ok).contains(&format!(
            "signature verified (key {}, {a_fp})",
            a_pub.display()
        )),
        "{}",
        stderr(&ok)
    );
    let cached = cached_packages(home);
    std::fs::remove_dir_all(home.join("cache/kudo/packages")).unwrap();
    assert_eq!(cached, 1);
    let refused = kudo(home)
        .args(["template", &reference, "--plain-http"])
        .arg(format!("--verify={}", c_pub.display()))
        .assert()
        .code(1)
        .get_output()
        .clone();
    let e = stderr(&refused);
    for want in [
        format!("{reference}: refused: not signed by a trusted key"),
        "2 signature(s) for sha256:".to_string(),
        format!("digest: {digest}"),
        format!("keys tried: {}", c_pub.display()),
        "policy: verify: required (--verify=".into(),
        "nothing was cached or written".into(),
    ] {
        assert!(e.contains(&want), "{want}\n{e}");
    }
    assert_eq!(cached_packages(home), 0);

    // the tag moved: the same versions pushed again with other content; its manifest is not
    // the one signed
    let changed = home.join("zookeeper-changed");
    kudo_testkit::copy_dir(&example("zookeeper-v1beta1"), &changed);
    let op = std::fs::read_to_string(changed.join("operator.yaml")).unwrap();
    std::fs::write(changed.join("operator.yaml"), format!("{op}\n# changed\n")).unwrap();
    let moved = push(home, &changed, &registry.oci("kudo"));
    assert_eq!(moved["reference"], reference.as_str());
    assert_ne!(moved["manifestDigest"], digest.as_str());
    kudo(home)
        .args(["params", &reference, "--plain-http"])
        .arg(format!("--verify={}", a_pub.display()))
        .assert()
        .code(1)
        .stderr(predicate::str::contains(format!(
            "no cosign signature for {}",
            moved["manifestDigest"].as_str().unwrap()
        )));
    assert_eq!(cached_packages(home), 0);

    // the policy of the registry: warn uses it with a warning, required refuses it
    let prefix = registry.oci("kudo");
    kudo(home)
        .args(["registry", "trust", &prefix, "--verify", "warn", "--key"])
        .arg(&a_pub)
        .assert()
        .success();
    kudo(home)
        .args(["params", &reference, "--plain-http"])
        .assert()
        .success()
        .stderr(predicate::str::contains(format!(
            "warning: {reference}: signature NOT verified"
        )))
        .stderr(predicate::str::contains(
            "used anyway: verify: warn (registry",
        ));
    kudo(home)
        .args([
            "registry", "trust", &prefix, "--verify", "required", "--key",
        ])
        .arg(&a_pub)
        .assert()
        .success();
    kudo(home)
        .args(["registry", "trust", &format!("{prefix}/zookeeper")])
        .assert()
        .success()
        .stdout(predicate::str::contains("verify: required"));
    kudo(home)
        .args(["params", &reference, "--plain-http"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "policy: verify: required (registry",
        ));
    // signed again (the new manifest), it is used
    sign(home, &reference, &a_key, "bundle");
    kudo(home)
        .args(["params", &reference, "--plain-http"])
        .assert()
        .success()
        .stderr(predicate::str::contains("signature verified"));
    kudo(home)
        .args(["registry", "trust", &prefix, "--remove"])
        .assert()
        .success();
    // a package on disk has no signature to check
    kudo(home)
        .args(["params", "examples/zookeeper-v1beta1"])
        .arg(format!("--verify={}", a_pub.display()))
        .assert()
        .code(1)
        .stderr(predicate::str::contains("carries no signature"));
}

/// A signature made outside kudo, as cosign lays it out (a manifest tagged sha256-HEX.sig,
/// a simple-signing layer, the signature in cosign's annotation), with a key ring made
/// (ECDSA P-256): kudo verifies it. kudo signs with a key the cosign tool generated.
#[test]
fn a_signature_made_outside_kudo_in_cosign_s_layout_verifies_and_cosign_s_key_signs() {
    use ring::signature::{ECDSA_P256_SHA256_ASN1_SIGNING, EcdsaKeyPair, KeyPair};
    let Some(registry) = TestRegistry::start(RegistryOptions::default()) else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let home = work.path();
    let pushed = push(home, &example("zookeeper-v1beta1"), &registry.oci("kudo"));
    let reference = pushed["reference"].as_str().unwrap().to_string();
    let digest = pushed["manifestDigest"].as_str().unwrap().to_string();

    // the key, and its public key as PEM (P-256's SubjectPublicKeyInfo prefix, then the point)
    let rng = ring::rand::SystemRandom::new();
    let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_ASN1_SIGNING, &rng).unwrap();
    let pair =
        EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_ASN1_SIGNING, pkcs8.as_ref(), &rng).unwrap();
    let mut spki = hex("3059301306072a8648ce3d020106082a8648ce3d030107034200");
    spki.extend_from_slice(pair.public_key().as_ref());
    let b64 = base64::engine::general_purpose::STANDARD.encode(&spki);
    let pem = format!("-----BEGIN PUBLIC KEY-----\n{b64}\n-----END PUBLIC KEY-----\n");
    let public = home.join("ring.pub");
    std::fs::write(&public, pem).unwrap();

    // the payload as cosign writes it, signed, pushed as cosign pushes it
    let payload = format!(
        "{{\"critical\":{{\"identity\":{{\"docker-reference\":\"{}/kudo/zookeeper\"}},\"image\":{{\"docker-manifest-digest\":\"{digest}\"}},\"type\":\"cosign container image signature\"}},\"optional\":null}}",
        registry.host()
    );
    let signature = pair.sign(&rng, payload.as_bytes()).unwrap();
    let signature = base64::engine::general_purpose::STANDARD.encode(signature.as_ref());
    let layer = ImageLayer::new(
        payload.into_bytes(),
        SIMPLE_SIGNING.into(),
        Some([(SIGNATURE_ANNOTATION.to_string(), signature)].into()),
    );
    push_signatures(&registry, "kudo/zookeeper", &digest, vec![layer]);
    let (code, v) = verify_signature(home, &reference, &[&public]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["manifestDigest"], digest.as_str());

    // cosign's own key (sigstore-rs's fixture, made by `cosign generate-key-pair`, empty
    // password): kudo signs with it, appending to the signature above
    let cosign_key = kudo_testkit::fixture("signing/cosign_generated_encrypted_empty_private.key");
    let out = kudo(home)
        .env("KUDO_PASSWORD", "")
        .args([
            "package",
            "sign",
            &reference,
            "--plain-http",
            "-o",
            "json",
            "--bundle-format=legacy",
            "--key",
        ])
        .arg(&cosign_key)
        .assert()
        .success()
        .get_output()
        .clone();
    assert_eq!(json_of(&out)["signatures"], 2);
    let (code, _) = verify_signature(home, &reference, &[&public]);
    assert_eq!(code, 0, "the other signature is kept");
}

const SIMPLE_SIGNING: &str = "application/vnd.dev.cosign.simplesigning.v1+json";
const SIGNATURE_ANNOTATION: &str = "dev.cosignproject.cosign/signature";

/// Pushes `layers` as the cosign signature manifest of `digest` in `repository`, with
/// oci-client, as cosign pushes it (the tag `sha256-HEX.sig`, an empty OCI config).
fn push_signatures(
    registry: &TestRegistry,
    repository: &str,
    digest: &str,
    layers: Vec<ImageLayer>,
) {
    use oci_client::client::{ClientConfig, ClientProtocol, Config};
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
        let target = oci_client::Reference::with_tag(
            registry.host().to_string(),
            repository.into(),
            format!("{}.sig", digest.replace(':', "-")),
        );
        client
            .push(
                &target,
                &layers,
                Config::oci_v1(b"{}".to_vec(), None),
                &oci_client::secrets::RegistryAuth::Anonymous,
                None,
            )
            .await
            .unwrap();
    });
}

/// A signature manifest larger than kudo reads (more than 100 layers) is refused before the
/// cosign client reads its layers.
#[test]
fn a_signature_manifest_larger_than_kudo_reads_is_refused() {
    let Some(registry) = TestRegistry::start(RegistryOptions::default()) else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let home = work.path();
    let (_, public, _) = key_pair(home, "a");
    let pushed = push(home, &example("zookeeper-v1beta1"), &registry.oci("kudo"));
    let reference = pushed["reference"].as_str().unwrap().to_string();
    let digest = pushed["manifestDigest"].as_str().unwrap().to_string();
    let layers = (0..101)
        .map(|i| {
            ImageLayer::new(
                format!("{{\"n\":{i}}}").into_bytes(),
                SIMPLE_SIGNING.into(),
                None,
            )
        })
        .collect();
    push_signatures(&registry, "kudo/zookeeper", &digest, layers);
    kudo(home)
        .args([
            "package",
            "verify-signature",
            &reference,
            "--plain-http",
            "--key",
        ])
        .arg(&public)
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "its signature manifest holds 101 layers; kudo reads at most 100 signatures",
        ));
}

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// A repository whose index is signed (`kudo repo index --sign-key`): a repository added with
/// `--key` requires it; an entry whose signature was removed, or another key's, is refused
/// before the package is downloaded; `--verify=KEY` asks the same of one command.
#[test]
fn a_signed_repository_index_is_required_by_its_policy() {
    let work = tempfile::tempdir().unwrap();
    let home = work.path();
    let (a_key, a_pub, a_fp) = key_pair(home, "a");
    let (_, b_pub, _) = key_pair(home, "b");
    let served = home.join("served");
    std::fs::create_dir_all(&served).unwrap();
    for p in ["zookeeper-v1beta1", "cassandra-v1beta2"] {
        kudo(home)
            .args(["package", "create"])
            .arg(example(p))
            .arg("-d")
            .arg(&served)
            .assert()
            .success();
    }
    kudo(home)
        .args(["repo", "index"])
        .arg(&served)
        .arg("--sign-key")
        .arg(&a_key)
        .assert()
        .success()
        .stderr(predicate::str::contains("signed 2 entries"));
    // cassandra's signature removed from the index
    let index_file = served.join("index.yaml");
    let mut index =
        kudo_pkg::repo::Index::parse(&std::fs::read_to_string(&index_file).unwrap()).unwrap();
    for e in index.entries.get_mut("cassandra").unwrap() {
        assert_eq!(e.signatures.len(), 1);
        assert_eq!(e.signatures[0].key.as_deref(), Some(a_fp.as_str()));
        e.signatures.clear();
    }
    std::fs::write(&index_file, index.to_yaml()).unwrap();
    let server = kudo_testkit::serve_dir(&served);
    kudo(home)
        .args(["repo", "add", "signed", &server.url, "--key"])
        .arg(&a_pub)
        .assert()
        .success();
    kudo(home)
        .args(["params", "zookeeper", "--repo", "signed"])
        .assert()
        .success()
        .stderr(predicate::str::contains(format!(
            "signature verified (key {}, {a_fp})",
            a_pub.display()
        )));
    kudo(home)
        .args(["params", "cassandra", "--repo", "signed"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "cassandra 3.11.6_2.0.0 from repository signed: refused: not signed by a trusted key: the index gives no signature for this package",
        ))
        .stderr(predicate::str::contains("policy: verify: required (repository signed in"));
    // another key, for one command
    kudo(home)
        .args(["params", "zookeeper", "--repo", "signed"])
        .arg(format!("--verify={}", b_pub.display()))
        .assert()
        .code(1)
        .stderr(predicate::str::contains("none made by these keys"));
    // only zookeeper was downloaded
    assert_eq!(cached_packages(home), 1);
    // verify-signature takes a name in a repository, as install does, and downloads nothing
    let verify = |name: &str, key: &Path| {
        let out = kudo(home)
            .args([
                "package",
                "verify-signature",
                name,
                "--repo",
                "signed",
                "-o",
                "json",
            ])
            .arg("--key")
            .arg(key)
            .output()
            .unwrap();
        (out.status.code().unwrap(), json_of(&out))
    };
    let (code, v) = verify("zookeeper", &a_pub);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["key"]["fingerprint"], a_fp.as_str());
    assert!(
        v["reference"]
            .as_str()
            .unwrap()
            .contains("from repository signed"),
        "{v}"
    );
    let (code, v) = verify("cassandra", &a_pub);
    assert_eq!(code, 1, "{v}");
    assert!(
        v["reason"].as_str().unwrap().contains("no signature"),
        "{v}"
    );
    assert_eq!(cached_packages(home), 1);
}

/// A registry that asks for credentials (htpasswd, alice): `sign`, `verify-signature` and
/// `--verify` send those of `kudo registry login`, as push and pull do; without them the
/// signature cannot be read, and `--verify` refuses.
#[test]
fn signing_and_verifying_use_the_registry_s_credentials() {
    let Some(registry) = TestRegistry::start(RegistryOptions::with_user("alice", "s3cret")) else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let home = work.path();
    let (key, public, fingerprint) = key_pair(home, "a");
    kudo(home)
        .args(["registry", "login", registry.host(), "-u", "alice"])
        .args(["--password-stdin", "--plain-http"])
        .write_stdin("s3cret\n")
        .assert()
        .success();
    let pushed = push(
        home,
        &example("zookeeper-v1beta1"),
        &registry.oci("team/kudo"),
    );
    let reference = pushed["reference"].as_str().unwrap().to_string();
    assert_eq!(
        sign(home, &reference, &key, "bundle")["key"],
        fingerprint.as_str()
    );
    let (code, v) = verify_signature(home, &reference, &[&public]);
    assert_eq!(
        (code, &v["key"]["fingerprint"]),
        (0, &Value::from(fingerprint.clone()))
    );
    kudo(home)
        .args(["params", &reference, "--plain-http"])
        .arg(format!("--verify={}", public.display()))
        .assert()
        .success()
        .stderr(predicate::str::contains("signature verified"));
    // logged out: the registry answers 401 and nothing is verified
    kudo(home)
        .args(["registry", "logout", registry.host()])
        .assert()
        .success();
    kudo(home)
        .args([
            "package",
            "verify-signature",
            &reference,
            "--plain-http",
            "--key",
        ])
        .arg(&public)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("401"));
}

/// The refusals that need no registry: no password, a policy without a key, a policy removed
/// that was never set, `--verify` with no key given or configured, a public key given to sign;
/// none of them writes a file.
#[test]
fn a_key_or_policy_that_is_missing_is_refused_and_nothing_is_written() {
    let work = tempfile::tempdir().unwrap();
    let home = work.path();
    let keys = home.join("keys");
    std::fs::create_dir_all(&keys).unwrap();
    kudo_in(home)
        .env_remove("KUDO_PASSWORD")
        .env_remove("COSIGN_PASSWORD")
        .args(["package", "generate-key", "-d"])
        .arg(&keys)
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "the private key's password: set KUDO_PASSWORD (or COSIGN_PASSWORD)",
        ));
    assert_eq!(std::fs::read_dir(&keys).unwrap().count(), 0);
    let config = home.join("kudo/repository/repositories.yaml");
    kudo(home)
        .args([
            "registry",
            "trust",
            "oci://127.0.0.1:5000/acme",
            "--verify",
            "required",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "--verify required needs a public key",
        ));
    kudo(home)
        .args(["registry", "trust", "oci://127.0.0.1:5000/acme", "--remove"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "no policy is set for exactly this prefix",
        ));
    assert!(!config.exists());
    kudo(home)
        .args(["params", "oci://127.0.0.1:1/kudo/zookeeper:0.1.0", "--plain-http", "--verify"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "verify: required names no public key (give --verify=cosign.pub, or keys: in the configuration)",
        ));
    let (_, public, _) = key_pair(home, "a");
    kudo(home)
        .args([
            "package",
            "sign",
            "oci://127.0.0.1:1/kudo/zookeeper:0.1.0",
            "--plain-http",
        ])
        .arg("--key")
        .arg(&public)
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "is a public key: signing takes the private key",
        ));
}

/// The manifest tag `tag` of repository `repository` names, read from the registry's storage
/// (an image index is served only to a client that asks for one).
fn stored_manifest(registry: &TestRegistry, repository: &str, tag: &str) -> (String, Value) {
    let link = registry
        .storage()
        .join("docker/registry/v2/repositories")
        .join(repository)
        .join("_manifests/tags")
        .join(tag)
        .join("current/link");
    let digest = std::fs::read_to_string(&link).unwrap_or_else(|e| panic!("{link:?}: {e}"));
    (digest.clone(), stored_blob(registry, &digest))
}

fn stored_blob(registry: &TestRegistry, digest: &str) -> Value {
    serde_json::from_slice(&std::fs::read(registry.blob_file(digest)).unwrap()).unwrap()
}

/// cosign 3's format: `kudo package sign` attaches a Sigstore bundle as a referrer of the
/// package's manifest. Debian's docker-registry (distribution 2.8) lacks the referrers API, so
/// the fallback tag `sha256-HEX` lists it, as cosign's client does; the referrer manifest and
/// the bundle are cosign's shape. verify-signature reads it, says which format verified and
/// that no transparency log was checked; a second key's bundle is kept beside the first; a
/// bundle changed in the registry's storage does not count.
#[test]
fn a_bundle_is_attached_as_a_referrer_as_cosign_3_attaches_it_and_verified() {
    let Some(registry) = TestRegistry::start(RegistryOptions::default()) else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let home = work.path();
    let (a_key, a_pub, a_fp) = key_pair(home, "a");
    let (b_key, b_pub, b_fp) = key_pair(home, "b");
    let pushed = push(home, &example("zookeeper-v1beta1"), &registry.oci("kudo"));
    let reference = pushed["reference"].as_str().unwrap().to_string();
    let digest = pushed["manifestDigest"].as_str().unwrap().to_string();
    let hexd = digest.trim_start_matches("sha256:");

    // the registry has no referrers API: the fallback tag is written
    let (status, _) = registry
        .get(&format!("/v2/kudo/zookeeper/referrers/{digest}"))
        .unwrap();
    assert_eq!(status, 404, "docker-registry 2.8 serves no referrers API");
    let out = kudo(home)
        .args([
            "package",
            "sign",
            &reference,
            "--plain-http",
            "-o",
            "json",
            "--key",
        ])
        .arg(&a_key)
        .assert()
        .success()
        .get_output()
        .clone();
    let signed = json_of(&out);
    assert_eq!(signed["format"], "bundle", "{signed}");
    assert_eq!(signed["manifestDigest"], digest.as_str());
    assert!(
        signed["attachedBy"]
            .as_str()
            .unwrap()
            .contains(&format!("fallback tag sha256-{hexd}")),
        "{signed}"
    );
    let (_, index) = stored_manifest(&registry, "kudo/zookeeper", &format!("sha256-{hexd}"));
    assert_eq!(
        index["mediaType"],
        "application/vnd.oci.image.index.v1+json"
    );
    let entries = index["manifests"].as_array().unwrap();
    assert_eq!(entries.len(), 1, "{index}");
    assert_eq!(
        entries[0]["artifactType"],
        "application/vnd.dev.sigstore.bundle.v0.3+json"
    );
    let referrer_digest = entries[0]["digest"].as_str().unwrap();
    assert!(
        signed["signature"]
            .as_str()
            .unwrap()
            .ends_with(&format!("@{referrer_digest}"))
    );
    // the referrer: cosign's manifest (WriteReferrer) around cosign's bundle
    let referrer = stored_blob(&registry, referrer_digest);
    assert_eq!(referrer["subject"]["digest"], digest.as_str(), "{referrer}");
    assert_eq!(
        referrer["artifactType"],
        "application/vnd.dev.sigstore.bundle.v0.3+json"
    );
    assert_eq!(
        referrer["config"]["mediaType"],
        "application/vnd.oci.empty.v1+json"
    );
    assert_eq!(
        referrer["annotations"]["dev.sigstore.bundle.content"],
        "dsse-envelope"
    );
    assert_eq!(
        referrer["annotations"]["dev.sigstore.bundle.predicateType"],
        "https://sigstore.dev/cosign/sign/v1"
    );
    let bundle_digest = referrer["layers"][0]["digest"]
        .as_str()
        .unwrap()
        .to_string();
    let bundle = stored_blob(&registry, &bundle_digest);
    assert_eq!(
        bundle["mediaType"],
        "application/vnd.dev.sigstore.bundle.v0.3+json"
    );
    let hint = bundle["verificationMaterial"]["publicKey"]["hint"]
        .as_str()
        .unwrap();
    use base64::Engine;
    let b64 = base64::engine::general_purpose::STANDARD;
    assert_eq!(
        b64.decode(hint).unwrap(),
        hex(a_fp.trim_start_matches("sha256:")),
        "the hint is base64 of the key's sha256"
    );
    let envelope = &bundle["dsseEnvelope"];
    assert_eq!(envelope["payloadType"], "application/vnd.in-toto+json");
    assert_eq!(envelope["signatures"].as_array().unwrap().len(), 1);
    let statement: Value =
        serde_json::from_slice(&b64.decode(envelope["payload"].as_str().unwrap()).unwrap())
            .unwrap();
    assert_eq!(statement["_type"], "https://in-toto.io/Statement/v1");
    assert_eq!(statement["subject"][0]["digest"]["sha256"], hexd);
    assert_eq!(
        statement["predicateType"],
        "https://sigstore.dev/cosign/sign/v1"
    );

    // verified, in the bundle format; the transparency log not checked, in cosign's words
    let (code, v) = verify_signature(home, &reference, &[&b_pub, &a_pub]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["key"]["fingerprint"], a_fp.as_str());
    assert_eq!(v["format"], "bundle");
    assert!(
        v["transparencyLog"]
            .as_str()
            .unwrap()
            .starts_with("Skipping tlog verification is an insecure practice"),
        "{v}"
    );
    let (code, v) = verify_signature(home, &reference, &[&b_pub]);
    assert_eq!(code, 1, "{v}");
    assert!(
        v["reason"]
            .as_str()
            .unwrap()
            .contains("1 Sigstore bundle(s) attached to"),
        "{v}"
    );
    // b's bundle is added beside a's; each verifies
    sign(home, &reference, &b_key, "bundle");
    let (_, index) = stored_manifest(&registry, "kudo/zookeeper", &format!("sha256-{hexd}"));
    assert_eq!(index["manifests"].as_array().unwrap().len(), 2, "{index}");
    let (code, v) = verify_signature(home, &reference, &[&b_pub]);
    assert_eq!((code, &v["key"]["fingerprint"]), (0, &Value::from(b_fp)));

    // a bundle changed where the registry keeps it: its digest no longer matches, it does not
    // count, and the reason says so
    let file = registry.blob_file(&bundle_digest);
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, text.replacen("dsseEnvelope", "dsseEnvelopf", 1)).unwrap();
    let (code, v) = verify_signature(home, &reference, &[&a_pub]);
    assert_eq!(code, 1, "{v}");
    assert!(
        v["reason"]
            .as_str()
            .unwrap()
            .contains("does not match its digest"),
        "{v}"
    );
}

/// The images a package runs, checked before anything runs them: `kudo package images
/// --image-key` resolves each tag to its digest, verifies its cosign signature (here a kudo
/// package pushed as the "image", signed in cosign 3's format), pins it, and refuses an
/// unsigned one naming the image, its digest and the keys tried; the `images:` policy of
/// the configuration under `warn` only warns; a second run reads the verification from the
/// cache; a registry that is gone refuses under `required`.
#[test]
fn the_images_a_package_runs_are_verified_pinned_and_an_unsigned_one_refused() {
    let Some(registry) = TestRegistry::start(RegistryOptions::default()) else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let home = work.path();
    let (a_key, a_pub, a_fp) = key_pair(home, "a");
    let signed = push(home, &example("zookeeper-v1beta1"), &registry.oci("kudo"));
    let unsigned = push(home, &example("cassandra-v1beta2"), &registry.oci("kudo"));
    sign(
        home,
        signed["reference"].as_str().unwrap(),
        &a_key,
        "bundle",
    );
    let image = |pushed: &Value| {
        pushed["reference"]
            .as_str()
            .unwrap()
            .trim_start_matches("oci://")
            .to_string()
    };
    let (signed_image, unsigned_image) = (image(&signed), image(&unsigned));
    let signed_digest = signed["manifestDigest"].as_str().unwrap();
    // a package running both
    let pkg = home.join("runs-two");
    std::fs::create_dir_all(pkg.join("templates")).unwrap();
    std::fs::write(
        pkg.join("operator.yaml"),
        "apiVersion: kudo.dev/v1beta1\nname: runs-two\noperatorVersion: 0.1.0\n\
         kubernetesVersion: 1.20.0\ntasks:\n  - name: app\n    kind: Apply\n    spec:\n      \
         resources: [app.yaml]\nplans:\n  deploy:\n    strategy: serial\n    phases:\n      \
         - name: main\n        strategy: serial\n        steps:\n          - name: app\n            \
         tasks: [app]\n",
    )
    .unwrap();
    std::fs::write(
        pkg.join("params.yaml"),
        format!(
            "apiVersion: kudo.dev/v1beta2\ntype: object\nproperties:\n  signed:\n    type: string\n    \
             default: {signed_image}\n  unsigned:\n    type: string\n    default: {unsigned_image}\n"
        ),
    )
    .unwrap();
    std::fs::write(
        pkg.join("templates/app.yaml"),
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app\nspec:\n  selector:\n    \
         matchLabels: {app: a}\n  template:\n    metadata:\n      labels: {app: a}\n    spec:\n      \
         containers:\n        - name: signed\n          image: \"{{Params.signed}}\"\n        \
         - name: unsigned\n          image: \"{{Params.unsigned}}\"\n",
    )
    .unwrap();
    let images = |extra: &[&str]| {
        let out = kudo(home)
            .args(["package", "images"])
            .arg(&pkg)
            .args(["--plain-http", "-o", "json"])
            .args(extra)
            .output()
            .unwrap();
        (out.status.code().unwrap(), json_of(&out), stderr(&out))
    };
    let key = a_pub.to_str().unwrap();
    let (code, v, err) = images(&["--image-key", key]);
    assert_eq!(code, 1, "{v}\n{err}");
    let by_image = |v: &Value, name: &str| -> Value {
        v["images"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["image"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("{name} in {v}"))
    };
    let s = by_image(&v, &signed_image);
    assert_eq!(s["digest"], signed_digest, "{s}");
    assert_eq!(
        s["pinned"],
        format!("{}/kudo/zookeeper@{signed_digest}", registry.host())
    );
    assert_eq!(s["verification"]["status"], "verified", "{s}");
    assert_eq!(s["verification"]["format"], "bundle");
    assert_eq!(s["verification"]["key"]["fingerprint"], a_fp.as_str());
    assert_eq!(s["verification"]["cached"], false);
    let u = by_image(&v, &unsigned_image);
    assert_eq!(u["verification"]["status"], "unverified", "{u}");
    for want in [
        format!(
            "refused: {unsigned_image} ({}): not signed by a trusted key",
            unsigned["manifestDigest"].as_str().unwrap()
        ),
        format!("keys tried: {key}"),
        "policy: verify: required (--image-key)".into(),
    ] {
        assert!(err.contains(&want), "{want}\n{err}");
    }
    // again: the signed image's verification comes from the cache
    let (_, v, _) = images(&["--image-key", key]);
    assert_eq!(by_image(&v, &signed_image)["verification"]["cached"], true);

    // the configuration's `images:` policy, under warn: used, with a warning
    let config = home.join("kudo/repository/repositories.yaml");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    std::fs::write(
        &config,
        format!(
            "repoVersion: v1\ncontext: community\nrepositories: []\nimages:\n- prefix: {}/kudo\n  \
             verify: warn\n  keys: [{key}]\n",
            registry.host()
        ),
    )
    .unwrap();
    let (code, v, err) = images(&["--verify-images"]);
    assert_eq!(code, 0, "{v}\n{err}");
    assert!(err.contains(&format!("warning: {unsigned_image}")), "{err}");
    assert_eq!(
        by_image(&v, &signed_image)["verification"]["policy"]["verify"],
        "warn"
    );

    // the registry gone: required refuses, naming why; warn says it and goes on
    drop(registry);
    let (code, v, err) = images(&["--image-key", key]);
    assert_eq!(code, 1, "{v}\n{err}");
    assert!(err.contains("its digest cannot be resolved"), "{err}");
    let (code, v, err) = images(&["--verify-images"]);
    assert_eq!(code, 0, "{v}\n{err}");
    for image in [&signed_image, &unsigned_image] {
        assert!(
            err.contains(&format!(
                "warning: {image}: not signed by a trusted key: its digest cannot be resolved"
            )),
            "{image}\n{err}"
        );
    }
}

/// A registry that accepts connections and never answers: each image's check is bounded
/// (30 s), and then refused under `required`, a warning under `warn`. Both run at once.
#[test]
fn a_registry_that_never_answers_is_waited_for_a_bounded_time() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let host = format!("127.0.0.1:{}", listener.local_addr().unwrap().port());
    // Accepts, holds every connection open, says nothing.
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for c in listener.incoming().flatten() {
            held.push(c);
        }
    });
    let work = tempfile::tempdir().unwrap();
    let home = work.path();
    let (_, a_pub, _) = key_pair(home, "a");
    let key = a_pub.to_str().unwrap();
    let image = format!("{host}/kudo/app:1");
    let pkg = home.join("runs-one");
    std::fs::create_dir_all(pkg.join("templates")).unwrap();
    std::fs::write(
        pkg.join("operator.yaml"),
        "apiVersion: kudo.dev/v1beta1\nname: runs-one\noperatorVersion: 0.1.0\n\
         kubernetesVersion: 1.20.0\ntasks:\n  - name: app\n    kind: Apply\n    spec:\n      \
         resources: [app.yaml]\nplans:\n  deploy:\n    strategy: serial\n    phases:\n      \
         - name: main\n        strategy: serial\n        steps:\n          - name: app\n            \
         tasks: [app]\n",
    )
    .unwrap();
    std::fs::write(
        pkg.join("templates/app.yaml"),
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: app\nspec:\n  containers:\n    \
             - name: app\n      image: {image}\n"
        ),
    )
    .unwrap();
    let warn_home = home.join("warn");
    let config = warn_home.join("kudo/repository/repositories.yaml");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    std::fs::write(
        &config,
        format!(
            "repoVersion: v1\ncontext: community\nrepositories: []\nimages:\n- prefix: {host}\n  \
             verify: warn\n  keys: [{key}]\n"
        ),
    )
    .unwrap();
    let run = |home: &Path, extra: &[&str]| {
        let out = kudo(home)
            .args(["package", "images"])
            .arg(&pkg)
            .args(["--plain-http"])
            .args(extra)
            .output()
            .unwrap();
        (out.status.code().unwrap(), stderr(&out))
    };
    let ((required, r_err), (warn, w_err)) = std::thread::scope(|s| {
        let r = s.spawn(|| run(home, &["--image-key", key]));
        let w = s.spawn(|| run(&warn_home, &["--verify-images"]));
        (r.join().unwrap(), w.join().unwrap())
    });
    let said =
        format!("{image}: not signed by a trusted key: the registry did not answer within 30 s");
    assert_eq!(required, 1, "{r_err}");
    assert!(r_err.contains(&format!("refused: {said}")), "{r_err}");
    assert_eq!(warn, 0, "{w_err}");
    assert!(w_err.contains(&format!("warning: {said}")), "{w_err}");
}
