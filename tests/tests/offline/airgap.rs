//! Air-gapped installs (issue 50, item 4): `kudo package bundle` copies packages, their
//! dependencies, their images and every signature into one OCI image layout archive;
//! `kudo package relocate` pushes it to a mirror. Two of Debian's `docker-registry` on loopback
//! ports: a source, stopped before relocation (nothing is read from it afterwards), and a
//! mirror. The images are small fake ones (a config and a layer; one multi-platform index)
//! pushed with oci-client. Each test skips, saying so, when `docker-registry` is not installed.

use std::path::{Path, PathBuf};

use kudo_testkit::{RegistryOptions, TestRegistry, kudo_in};
use oci_client::client::{ClientConfig, ClientProtocol, Config, ImageLayer};
use oci_client::secrets::RegistryAuth;
use serde_json::{Value, json};

const INDEX: &str = "application/vnd.oci.image.index.v1+json";
const MANIFEST: &str = "application/vnd.oci.image.manifest.v1+json";

fn kudo(home: &Path) -> assert_cmd::Command {
    let mut c = kudo_in(home);
    c.env_remove("CI")
        .env_remove("COSIGN_PASSWORD")
        .env_remove("HTTP_PROXY")
        .env_remove("http_proxy")
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

fn runtime() -> tokio::runtime::Runtime {
    let _ = rustls::crypto::ring::default_provider().install_default();
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn client() -> oci_client::Client {
    oci_client::Client::try_from(ClientConfig {
        protocol: ClientProtocol::Http,
        ..ClientConfig::default()
    })
    .unwrap()
}

/// Pushes a fake image (an OCI config and one layer, both made of `seed`) to
/// `host/repository:tag`; its manifest's digest.
fn push_image(host: &str, repository: &str, tag: &str, seed: &str) -> String {
    runtime().block_on(async {
        let client = client();
        let target = oci_client::Reference::with_tag(host.into(), repository.into(), tag.into());
        let layer = ImageLayer::oci_v1(format!("layer of {seed}").into_bytes(), None);
        let config = Config::oci_v1(
            format!("{{\"architecture\":\"amd64\",\"os\":\"linux\",\"seed\":\"{seed}\"}}")
                .into_bytes(),
            None,
        );
        client
            .push(&target, &[layer], config, &RegistryAuth::Anonymous, None)
            .await
            .unwrap();
        client
            .fetch_manifest_digest(&target, &RegistryAuth::Anonymous)
            .await
            .unwrap()
    })
}

/// Pushes a two-platform image: two fake images, then an image index listing them, tagged
/// `tag`; the index's digest.
fn push_index(host: &str, repository: &str, tag: &str) -> String {
    let amd = push_image(
        host,
        repository,
        &format!("{tag}-amd64"),
        &format!("{repository} amd64"),
    );
    let arm = push_image(
        host,
        repository,
        &format!("{tag}-arm64"),
        &format!("{repository} arm64"),
    );
    let (amd_size, arm_size) = (
        manifest(host, repository, &amd).len(),
        manifest(host, repository, &arm).len(),
    );
    let index = json!({
        "schemaVersion": 2, "mediaType": INDEX,
        "manifests": [
            {"mediaType": MANIFEST, "digest": amd, "size": amd_size, "platform": {"architecture": "amd64", "os": "linux"}},
            {"mediaType": MANIFEST, "digest": arm, "size": arm_size, "platform": {"architecture": "arm64", "os": "linux"}},
        ],
    });
    let body = serde_json::to_vec(&index).unwrap();
    runtime().block_on(async {
        let target = oci_client::Reference::with_tag(host.into(), repository.into(), tag.into());
        client()
            .push_manifest_raw(&target, body.clone(), INDEX.parse().unwrap())
            .await
            .unwrap();
    });
    format!("sha256:{}", sha256(&body))
}

fn sha256(bytes: &[u8]) -> String {
    ring::digest::digest(&ring::digest::SHA256, bytes)
        .as_ref()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The manifest `reference` (a tag or a digest) names in `host/repository`, raw; empty when
/// there is none.
fn manifest(host: &str, repository: &str, reference: &str) -> Vec<u8> {
    runtime().block_on(async {
        let at = if reference.starts_with("sha256:") {
            oci_client::Reference::with_digest(host.into(), repository.into(), reference.into())
        } else {
            oci_client::Reference::with_tag(host.into(), repository.into(), reference.into())
        };
        client()
            .pull_manifest_raw(&at, &RegistryAuth::Anonymous, &[MANIFEST, INDEX])
            .await
            .map(|(b, _)| b.to_vec())
            .unwrap_or_default()
    })
}

/// A fake cosign `.sig` of `digest` in `host/repository` (one simple-signing layer; its
/// signature is not checked here, only carried).
fn push_sig(host: &str, repository: &str, digest: &str) {
    runtime().block_on(async {
        let target = oci_client::Reference::with_tag(
            host.into(),
            repository.into(),
            format!("{}.sig", digest.replace(':', "-")),
        );
        let payload = format!(
            "{{\"critical\":{{\"identity\":{{\"docker-reference\":\"{host}/{repository}\"}},\"image\":{{\"docker-manifest-digest\":\"{digest}\"}},\"type\":\"cosign container image signature\"}},\"optional\":null}}"
        );
        let layer = ImageLayer::new(
            payload.into_bytes(),
            "application/vnd.dev.cosign.simplesigning.v1+json".into(),
            Some([("dev.cosignproject.cosign/signature".to_string(), "MEUCIQ==".to_string())].into()),
        );
        client()
            .push(
                &target,
                &[layer],
                Config::oci_v1(b"{}".to_vec(), None),
                &RegistryAuth::Anonymous,
                None,
            )
            .await
            .unwrap();
    });
}

/// A package `name` 0.1.0 whose one Deployment runs `images`.
fn package_running(dir: &Path, name: &str, images: &[String]) -> PathBuf {
    let pkg = dir.join(name);
    std::fs::create_dir_all(pkg.join("templates")).unwrap();
    std::fs::write(
        pkg.join("operator.yaml"),
        format!(
            "apiVersion: kudo.dev/v1beta1\nname: {name}\noperatorVersion: 0.1.0\n\
             kubernetesVersion: 1.20.0\ntasks:\n  - name: app\n    kind: Apply\n    spec:\n      \
             resources: [app.yaml]\nplans:\n  deploy:\n    strategy: serial\n    phases:\n      \
             - name: main\n        strategy: serial\n        steps:\n          - name: app\n            \
             tasks: [app]\n"
        ),
    )
    .unwrap();
    std::fs::write(
        pkg.join("params.yaml"),
        "apiVersion: kudo.dev/v1beta2\ntype: object\n",
    )
    .unwrap();
    let containers: String = images
        .iter()
        .enumerate()
        .map(|(i, image)| format!("        - name: c{i}\n          image: \"{image}\"\n"))
        .collect();
    std::fs::write(
        pkg.join("templates/app.yaml"),
        format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app\nspec:\n  selector:\n    \
             matchLabels: {{app: a}}\n  template:\n    metadata:\n      labels: {{app: a}}\n    spec:\n      \
             containers:\n{containers}"
        ),
    )
    .unwrap();
    pkg
}

/// `kudo package bundle ARGS --plain-http --output-format json`: its exit code, JSON (or
/// `Null`) and stderr.
fn bundle(home: &Path, args: &[&str], env: &[(&str, &str)]) -> (i32, Value, String) {
    let mut c = kudo(home);
    c.args(["package", "bundle"])
        .args(args)
        .args(["--plain-http", "--output-format", "json"]);
    for (k, v) in env {
        c.env(k, v);
    }
    let out = c.output().unwrap();
    let v = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (
        out.status.code().unwrap(),
        v,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `kudo package relocate FILE MIRROR --plain-http -o json`: its exit code, JSON and stderr.
fn relocate(home: &Path, archive: &Path, mirror: &str) -> (i32, Value, String) {
    let out = kudo(home)
        .args(["package", "relocate"])
        .arg(archive)
        .arg(mirror)
        .args(["--plain-http", "-o", "json"])
        .output()
        .unwrap();
    let v = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (
        out.status.code().unwrap(),
        v,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The repositories a registry holds (its catalog).
fn catalog(registry: &TestRegistry) -> Vec<String> {
    let (_, body) = registry.get("/v2/_catalog").unwrap();
    let v: Value = serde_json::from_str(&body).unwrap();
    v["repositories"]
        .as_array()
        .map(|a| a.iter().map(|r| r.as_str().unwrap().to_string()).collect())
        .unwrap_or_default()
}

/// The relocation map a mirror holds at `PREFIX/kudo-relocation:latest`.
fn mirror_map(host: &str, prefix: &str) -> Value {
    let repository = format!("{prefix}/kudo-relocation");
    let m: Value = serde_json::from_slice(&manifest(host, &repository, "latest")).unwrap();
    assert_eq!(m["artifactType"], "application/vnd.kudo.relocation.v1+json");
    let layer = &m["layers"][0];
    let bytes = runtime().block_on(async {
        let at = oci_client::Reference::with_tag(host.into(), repository.clone(), "latest".into());
        let descriptor = oci_client::manifest::OciDescriptor {
            media_type: layer["mediaType"].as_str().unwrap().into(),
            digest: layer["digest"].as_str().unwrap().into(),
            size: layer["size"].as_i64().unwrap(),
            ..Default::default()
        };
        let mut out = Vec::new();
        client()
            .pull_blob(&at, &descriptor, &mut out)
            .await
            .unwrap();
        out
    });
    serde_json::from_slice(&bytes).unwrap()
}

/// A package from a registry, signed in both of cosign's formats, and the images it runs (one
/// signed, one a two-platform index, one unsigned) are bundled; the source registry is then
/// stopped, and relocation puts every image by digest, the package under its tag, every
/// signature beside what it signs and the relocation map into the mirror. The package's
/// signatures still verify there. Relocating again pushes no blob.
#[test]
fn a_bundle_carries_a_package_its_images_and_their_signatures_to_a_mirror() {
    let Some(source) = TestRegistry::start(RegistryOptions::default()) else {
        return;
    };
    let Some(mirror) = TestRegistry::start(RegistryOptions::default()) else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let home = work.path();
    let src = source.host().to_string();
    let app = push_image(&src, "acme/app", "1", "app");
    push_sig(&src, "acme/app", &app);
    let multi = push_index(&src, "acme/multi", "2");
    let tool = push_image(&src, "tools/tool", "3", "tool");
    let images = [
        format!("{src}/acme/app:1"),
        format!("{src}/acme/multi:2"),
        format!("{src}/tools/tool@{tool}"),
    ];
    let pkg = package_running(home, "runs-three", &images);
    // the package in the registry, signed in both formats
    let key_dir = home.join("keys");
    std::fs::create_dir_all(&key_dir).unwrap();
    kudo(home)
        .args(["package", "generate-key", "-d"])
        .arg(&key_dir)
        .assert()
        .success();
    kudo(home)
        .args(["package", "push"])
        .arg(&pkg)
        .arg(source.oci("kudo"))
        .arg("--plain-http")
        .assert()
        .success();
    let reference = source.oci("kudo/runs-three:0.1.0");
    for format in ["bundle", "legacy"] {
        kudo(home)
            .args([
                "package",
                "sign",
                &reference,
                "--plain-http",
                "--bundle-format",
                format,
            ])
            .arg("--key")
            .arg(key_dir.join("cosign.key"))
            .assert()
            .success();
    }

    let archive = home.join("out/bundle.tar");
    std::fs::create_dir_all(home.join("out")).unwrap();
    let (code, v, err) = bundle(home, &[&reference, "-o", archive.to_str().unwrap()], &[]);
    assert_eq!(code, 0, "{err}");
    let map = &v["relocation"];
    let by_image = |image: &str| -> Value {
        map["images"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["image"] == image)
            .cloned()
            .unwrap_or_else(|| panic!("{image} not bundled: {map}"))
    };
    assert_eq!(by_image(&images[0])["digest"], app.as_str());
    assert_eq!(by_image(&images[0])["relocated"], "acme/app");
    assert_eq!(by_image(&images[0])["signatures"][0]["kind"], "cosignTag");
    assert_eq!(by_image(&images[1])["digest"], multi.as_str());
    assert_eq!(by_image(&images[1])["mediaType"], INDEX);
    assert_eq!(by_image(&images[2])["digest"], tool.as_str());
    let package = &map["packages"][0];
    assert_eq!(package["name"], "runs-three");
    assert_eq!(package["tag"], "0.1.0");
    let kinds: Vec<&str> = package["signatures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["cosignTag", "referrer"], "{package}");
    assert_eq!(v["signatures"], 3);
    // the unsigned ones are said, not refused
    let unsigned: Vec<&str> = v["unsigned"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u.as_str().unwrap())
        .collect();
    assert_eq!(
        unsigned,
        [
            format!("image {}", images[1]),
            format!("image {}", images[2])
        ]
    );
    // 3 images (2 + 1 + 2 + the index's 2 platform manifests' 4 blobs), the package's 3,
    // signatures, the map
    assert!(v["blobs"].as_u64().unwrap() >= 15, "{v}");
    assert_eq!(
        v["archiveBytes"].as_u64().unwrap(),
        std::fs::metadata(&archive).unwrap().len()
    );
    let left: Vec<_> = std::fs::read_dir(home.join("out"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, ["bundle.tar"], "nothing staged is left");

    // the source is gone: everything comes from the archive
    drop(source);
    let prefix = "air/gapped";
    let (code, v, err) = relocate(home, &archive, &mirror.oci(prefix));
    assert_eq!(code, 0, "{err}");
    assert_eq!(v["blobsPresent"], 0, "{v}");
    let host = mirror.host();
    for (image, digest, repository) in [
        (&images[0], &app, "acme/app"),
        (&images[1], &multi, "acme/multi"),
        (&images[2], &tool, "tools/tool"),
    ] {
        let body = manifest(host, &format!("{prefix}/{repository}"), digest);
        assert_eq!(
            format!("sha256:{}", sha256(&body)),
            *digest,
            "{image} by digest"
        );
    }
    // the index's platform manifests, and the tags the templates name
    let index: Value =
        serde_json::from_slice(&manifest(host, &format!("{prefix}/acme/multi"), "2")).unwrap();
    for m in index["manifests"].as_array().unwrap() {
        let d = m["digest"].as_str().unwrap();
        assert!(
            !manifest(host, &format!("{prefix}/acme/multi"), d).is_empty(),
            "platform {d}"
        );
    }
    assert!(
        !manifest(
            host,
            &format!("{prefix}/acme/app"),
            &format!("{}.sig", app.replace(':', "-"))
        )
        .is_empty()
    );
    // the package, under its tag, with its signatures verified at the mirror
    let moved = mirror.oci(&format!("{prefix}/runs-three:0.1.0"));
    let out = kudo(home)
        .args([
            "package",
            "verify-signature",
            &moved,
            "--plain-http",
            "-o",
            "json",
            "--key",
        ])
        .arg(key_dir.join("cosign.pub"))
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(json_of(&out)["verified"], true);
    kudo(home)
        .args(["package", "pull", &moved, "--plain-http", "-d"])
        .arg(home)
        .assert()
        .success();
    // the map, where an install reads it
    let read = mirror_map(host, prefix);
    assert_eq!(read, *map);
    assert_eq!(
        v["map"],
        mirror.oci(&format!("{prefix}/kudo-relocation:latest"))
    );

    // again: every blob is there
    let (code, again, err) = relocate(home, &archive, &mirror.oci(prefix));
    assert_eq!(code, 0, "{err}");
    assert_eq!(again["blobsPushed"], 0, "{again}");
}

/// A damaged archive is refused before anything is pushed, naming the entry: cut short, or a
/// blob changed. An image missing from its registry at bundle time fails the bundle, naming
/// the image, and leaves no file; so does an image whose repository path another registry's
/// image already takes in the mirror.
#[test]
fn a_damaged_archive_or_a_missing_image_is_refused_and_nothing_is_written_or_pushed() {
    let Some(source) = TestRegistry::start(RegistryOptions::default()) else {
        return;
    };
    let Some(mirror) = TestRegistry::start(RegistryOptions::default()) else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let home = work.path();
    let src = source.host().to_string();
    push_image(&src, "acme/app", "1", "app");
    let pkg = package_running(home, "runs-one", &[format!("{src}/acme/app:1")]);
    let archive = home.join("bundle.tar");
    let (code, _, err) = bundle(
        home,
        &[pkg.to_str().unwrap(), "-o", archive.to_str().unwrap()],
        &[],
    );
    assert_eq!(code, 0, "{err}");
    let bytes = std::fs::read(&archive).unwrap();

    // cut short inside the layer's bytes
    let cut = home.join("cut.tar");
    let at = bytes
        .windows(b"layer of app".len())
        .position(|w| w == b"layer of app")
        .unwrap();
    std::fs::write(&cut, &bytes[..at + 4]).unwrap();
    let (code, _, err) = relocate(home, &cut, &mirror.oci("m"));
    assert_eq!(code, 1, "{err}");
    let layer = format!("sha256:{}", sha256(b"layer of app"));
    assert!(
        err.contains(&format!(
            "cut short or damaged at blobs/sha256/{}",
            layer.trim_start_matches("sha256:")
        )),
        "{err}"
    );
    assert!(err.contains("nothing was pushed"), "{err}");

    // a layer's byte changed
    let tampered = home.join("tampered.tar");
    let mut changed = bytes.clone();
    let at = changed
        .windows(b"layer of app".len())
        .position(|w| w == b"layer of app")
        .unwrap();
    changed[at] = b'L';
    std::fs::write(&tampered, &changed).unwrap();
    let (code, _, err) = relocate(home, &tampered, &mirror.oci("m"));
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains(&format!(
            "entry blobs/sha256/{} holds bytes of digest sha256:",
            layer.trim_start_matches("sha256:")
        )),
        "{err}"
    );
    assert!(
        err.contains("the archive was changed; nothing was pushed"),
        "{err}"
    );
    assert!(
        catalog(&mirror).is_empty(),
        "nothing pushed: {:?}",
        catalog(&mirror)
    );

    // an image its registry lacks
    let absent = format!("{src}/acme/absent:9");
    let pkg = package_running(
        home,
        "runs-absent",
        &[format!("{src}/acme/app:1"), absent.clone()],
    );
    let out_dir = home.join("none");
    std::fs::create_dir_all(&out_dir).unwrap();
    let target = out_dir.join("b.tar");
    let (code, _, err) = bundle(
        home,
        &[pkg.to_str().unwrap(), "-o", target.to_str().unwrap()],
        &[],
    );
    assert_eq!(code, 1, "{err}");
    assert!(err.contains(&format!("image {absent}: ")), "{err}");
    assert!(err.contains("not found"), "{err}");
    assert_eq!(
        std::fs::read_dir(&out_dir).unwrap().count(),
        0,
        "no file, nothing staged"
    );

    // two registries' images at one repository path
    push_image(mirror.host(), "acme/app", "1", "other app");
    let other = format!("{}/acme/app:1", mirror.host());
    let pkg = package_running(
        home,
        "runs-both",
        &[format!("{src}/acme/app:1"), other.clone()],
    );
    let (code, _, err) = bundle(
        home,
        &[pkg.to_str().unwrap(), "-o", target.to_str().unwrap()],
        &[],
    );
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("would both go to acme/app below the mirror's prefix"),
        "{err}"
    );
    assert!(err.contains(&format!("{src}/acme/app")), "{err}");
    assert!(
        err.contains(&format!("{}/acme/app", mirror.host())),
        "{err}"
    );
    assert_eq!(
        std::fs::read_dir(&out_dir).unwrap().count(),
        0,
        "no file, nothing staged"
    );
}

/// `image: REF` lines of a template whose REF is written out (no template action), but
/// `busybox` ones: each REF rewritten to `host/REPOSITORY:TAG` (its repository path as the
/// distribution spec reads it). `busybox` stays on docker.io: kudo's own Pipe `waiter` runs
/// docker.io's busybox, and two registries' `library/busybox` cannot share a mirror.
fn rewrite_images(file: &Path, host: &str) {
    let text = std::fs::read_to_string(file).unwrap();
    let out: Vec<String> = text
        .lines()
        .map(|line| {
            let Some((head, value)) = line.split_once("image: ") else {
                return line.to_string();
            };
            let image = value.trim().trim_matches('"');
            if image.contains("{{")
                || image.starts_with("busybox")
                || head.trim_start().starts_with('#')
            {
                return line.to_string();
            }
            let r: kudo_pkg::images::Reference = image.parse().unwrap();
            format!(
                "{head}image: \"{host}/{}:{}\"",
                r.repository(),
                r.tag().unwrap_or("latest")
            )
        })
        .collect();
    std::fs::write(file, out.join("\n") + "\n").unwrap();
}

/// The images `kudo package images --all-values` lists for `pkg`, as the distribution spec
/// reads them (`docker.io/library/busybox:latest`).
fn images_of(home: &Path, pkg: &Path) -> Vec<String> {
    let out = kudo(home)
        .args(["package", "images"])
        .arg(pkg)
        .args(["--all-values", "-o", "json"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let v: Value = serde_json::from_slice(&out).unwrap();
    v["images"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["reference"].as_str().unwrap().to_string())
        .collect()
}

/// The real flink-demo (the corpus of KUDO's operators), whose KudoOperator tasks install
/// kafka, zookeeper and flink by name: copies of the four, their images rewritten to the
/// source registry, pushed there; bundled from `oci://SOURCE/kudo/flink-demo` (the children
/// found as its siblings, as `kudo install` finds them), relocated after the source is gone.
/// The images that stay on docker.io (kudo's Pipe waiter, `busybox`) are served by the source
/// registry through an HTTP proxy (`HTTP_PROXY`), as a proxy cache would serve them. The
/// mirror then holds the four packages under their tags and every image by digest.
#[test]
fn flink_demo_is_bundled_with_its_three_children_and_relocated() {
    let Some(shared) = kudo_testkit::shared() else {
        return;
    };
    let Some(source) = TestRegistry::start(RegistryOptions::default()) else {
        return;
    };
    let Some(mirror) = TestRegistry::start(RegistryOptions::default()) else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let home = work.path();
    let src = source.host().to_string();
    let corpus = shared.join("corpus/kudo-operators-full");
    let mut packages = Vec::new();
    for name in ["kafka", "zookeeper", "flink", "flink-demo"] {
        let dir = home.join("operators").join(name);
        kudo_testkit::copy_dir(&corpus.join(name), &dir);
        for t in std::fs::read_dir(dir.join("templates")).unwrap() {
            rewrite_images(&t.unwrap().path(), &src);
        }
        packages.push(dir);
    }
    // flink-demo asks for kafka 1.3.1 and zookeeper 0.3.1; the corpus has 1.3.2 and 0.3.3
    let op = packages[3].join("operator.yaml");
    let text = std::fs::read_to_string(&op)
        .unwrap()
        .replace(
            "operatorVersion: 1.3.1\n      appVersion: 2.5.0",
            "operatorVersion: 1.3.2\n      appVersion: 2.5.1",
        )
        .replace(
            "operatorVersion: 0.3.1\n      appVersion: 3.4.14",
            "operatorVersion: 0.3.3\n      appVersion: 3.6.2",
        );
    std::fs::write(&op, text).unwrap();
    // a fake image for each one listed, at the source (docker.io's through the proxy)
    let mut pushed = std::collections::BTreeMap::new();
    for pkg in &packages {
        for reference in images_of(home, pkg) {
            let r: kudo_pkg::images::Reference = reference.parse().unwrap();
            let tag = r.tag().unwrap_or("latest").to_string();
            let digest = push_image(&src, r.repository(), &tag, &reference);
            pushed.insert(reference, digest);
        }
        kudo(home)
            .args(["package", "push"])
            .arg(pkg)
            .arg(source.oci("kudo"))
            .arg("--plain-http")
            .assert()
            .success();
    }
    let archive = home.join("flink-demo.tar");
    let proxy = format!("http://{src}");
    let (code, v, err) = bundle(
        home,
        &[
            &source.oci("kudo/flink-demo:0.1.6"),
            "-o",
            archive.to_str().unwrap(),
        ],
        &[
            ("HTTP_PROXY", &proxy),
            ("http_proxy", &proxy),
            ("NO_PROXY", "127.0.0.1"),
            ("no_proxy", "127.0.0.1"),
        ],
    );
    assert_eq!(code, 0, "{err}");
    let map = &v["relocation"];
    let names: Vec<&str> = map["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["kafka", "zookeeper", "flink", "flink-demo"],
        "dependencies first"
    );
    let bundled: std::collections::BTreeMap<String, String> = map["images"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            let whole = format!(
                "{}/{}:{}",
                i["registry"].as_str().unwrap(),
                i["repository"].as_str().unwrap(),
                i["tag"].as_str().unwrap()
            );
            (whole, i["digest"].as_str().unwrap().to_string())
        })
        .collect();
    assert_eq!(bundled, pushed, "every image listed, at the digest pushed");
    eprintln!(
        "flink-demo bundle: {} bytes, {} blobs, {} packages, {} images: {}",
        v["archiveBytes"],
        v["blobs"],
        names.len(),
        bundled.len(),
        bundled.keys().cloned().collect::<Vec<_>>().join(", ")
    );

    drop(source);
    let (code, v, err) = relocate(home, &archive, &mirror.oci("air"));
    assert_eq!(code, 0, "{err}");
    for image in map["images"].as_array().unwrap() {
        let repository = format!("air/{}", image["relocated"].as_str().unwrap());
        let digest = image["digest"].as_str().unwrap();
        let body = manifest(mirror.host(), &repository, digest);
        assert_eq!(format!("sha256:{}", sha256(&body)), digest, "{image}");
    }
    for p in map["packages"].as_array().unwrap() {
        let tag = p["tag"].as_str().unwrap();
        let body = manifest(
            mirror.host(),
            &format!("air/{}", p["relocated"].as_str().unwrap()),
            tag,
        );
        assert_eq!(
            format!("sha256:{}", sha256(&body)),
            p["digest"].as_str().unwrap(),
            "{p}"
        );
    }
    assert_eq!(mirror_map(mirror.host(), "air"), *map);
    // the mirror serves flink-demo to the resolver, its children found beside it
    kudo(home)
        .args([
            "package",
            "images",
            &mirror.oci("air/flink-demo:0.1.6"),
            "--plain-http",
            "-o",
            "json",
        ])
        .assert()
        .success();
    assert!(v["blobsPushed"].as_u64().unwrap() > 0);
}
