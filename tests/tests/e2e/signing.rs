//! Trusted packages (issue 37, `docs/signing.md`) on the real control plane: a package pushed
//! to a registry (Debian's `docker-registry` on loopback) and signed with a kudo key installs
//! with `--verify=KEY`; its OperatorVersion records where it came from, its digest and the
//! signer's fingerprint, and `kudo get operatorversions -o wide` shows them. An unsigned
//! package is refused before anything is written to the cluster.

use crate::harness::*;
use kudo_testkit::{RegistryOptions, TestRegistry};

/// `kudo ARGS` with its configuration, cache and key password (`pw`) in `home` (and the
/// cluster's kubeconfig for `install`, `upgrade` and `update`).
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

/// A package directory whose one Deployment runs `image` (a parameter, so `update -p image=`
/// changes it).
fn runs_image(dir: &Path, version: &str, image: &str) -> std::path::PathBuf {
    let pkg = dir.join(format!("runs-image-{version}"));
    std::fs::create_dir_all(pkg.join("templates")).unwrap();
    std::fs::write(
        pkg.join("operator.yaml"),
        format!("apiVersion: kudo.dev/v1beta1\nname: runs-image\noperatorVersion: {version}\n\
         kubernetesVersion: 1.20.0\ntasks:\n  - name: app\n    kind: Apply\n    spec:\n      \
         resources: [app.yaml]\nplans:\n  deploy:\n    strategy: serial\n    phases:\n      \
         - name: main\n        strategy: serial\n        steps:\n          - name: app\n            \
         tasks: [app]\n"),
    )
    .unwrap();
    std::fs::write(
        pkg.join("params.yaml"),
        format!(
            "apiVersion: kudo.dev/v1beta2\ntype: object\nproperties:\n  image:\n    type: string\n    \
             default: {image}\n    trigger: deploy\n"
        ),
    )
    .unwrap();
    std::fs::write(
        pkg.join("templates/app.yaml"),
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{Name}}-app\nspec:\n  \
         selector:\n    matchLabels: {app: runs-image}\n  template:\n    metadata:\n      \
         labels: {app: runs-image}\n    spec:\n      containers:\n        - name: app\n          \
         image: \"{{Params.image}}\"\n",
    )
    .unwrap();
    pkg
}

/// The images a plan runs, checked before it is written (issue 50 item 3): `kudo install
/// --image-key` resolves the package's image to its digest and verifies its cosign signature
/// (a kudo package pushed as the "image", signed in cosign 3's format); the manager applies
/// the Deployment with the image pinned to that digest, and the revision records what was
/// verified. `kudo update` to an unsigned image is refused naming it, and nothing is written.
#[test]
fn the_image_a_plan_runs_is_verified_before_it_is_written_and_applied_by_digest() {
    let Some(s) = Scenario::start_with_workloads("image-gate", false) else {
        return;
    };
    let Some(registry) = TestRegistry::start(RegistryOptions::default()) else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let home = work.path();
    let (fingerprint, signed, unsigned) = two_images(&s, home, &registry);
    let public = home.join("cosign.pub");
    let digest = signed["manifestDigest"].as_str().unwrap();
    let pinned = format!("{}/kudo/zookeeper@{digest}", registry.host());
    let pkg = runs_image(home, "0.1.0", &image(&signed));
    let key = public.to_str().unwrap();
    let started = Instant::now();
    kudo_home(
        &s,
        home,
        &[
            "install",
            "--instance",
            "app",
            "-n",
            &s.namespace,
            "--image-key",
            key,
            "--image-plain-http",
        ],
    )
    .arg(&pkg)
    .assert()
    .success();
    say(&format!(
        "e2e: kudo install with its image verified in {} ms",
        started.elapsed().as_millis()
    ));
    s.wait_plan("app", "deploy");
    // applied by digest
    let deployments = s.api("apps/v1", "Deployment", "deployments");
    let d = s.get(&deployments, "app-app").expect("the Deployment");
    assert_eq!(
        d["spec"]["template"]["spec"]["containers"][0]["image"],
        pinned.as_str(),
        "{d}"
    );
    // the Instance says what was verified, and its revision records it
    let inst = s.instance("app");
    let recorded: Value = serde_json::from_str(
        inst["metadata"]["annotations"]["kudo.dev/images"]
            .as_str()
            .expect("kudo.dev/images"),
    )
    .unwrap();
    let entry = &recorded[image(&signed).as_str()];
    assert_eq!(entry["verified"], fingerprint.as_str(), "{recorded}");
    assert_eq!(entry["pinned"], pinned.as_str());
    let revisions = s.api("apps/v1", "ControllerRevision", "controllerrevisions");
    let listed = s
        .runtime
        .block_on(revisions.list(&Default::default()))
        .expect("revisions");
    assert!(
        listed.items.iter().any(|r| {
            let r = serde_json::to_value(r).unwrap_or_default();
            r["data"]["images"][image(&signed).as_str()]["pinned"] == pinned.as_str()
        }),
        "a revision records the pinned image"
    );
    let history = s.json(&["history", "app", "-n", &s.namespace, "-o", "json"]);
    assert_eq!(
        history[0]["images"][image(&signed).as_str()]["verified"],
        fingerprint.as_str(),
        "{history}"
    );
    // an unsigned image: refused before anything is written
    let generation = inst["metadata"]["generation"].clone();
    let out = kudo_home(
        &s,
        home,
        &[
            "update",
            "--instance",
            "app",
            "-n",
            &s.namespace,
            "-p",
            &format!("image={}", image(&unsigned)),
            "--image-key",
            key,
            "--image-plain-http",
        ],
    )
    .assert()
    .code(1)
    .get_output()
    .stderr
    .clone();
    let stderr = text(&out);
    for part in [
        "the images the change would run are refused (nothing was written)".to_string(),
        format!(
            "{} ({})",
            image(&unsigned),
            unsigned["manifestDigest"].as_str().unwrap()
        ),
        format!("keys tried: {key}"),
    ] {
        assert!(stderr.contains(&part), "{part}\n{stderr}");
    }
    let after = s.instance("app");
    assert_eq!(after["metadata"]["generation"], generation);
    assert_eq!(after["spec"]["parameters"], inst["spec"]["parameters"]);
    // an upgrade to a version whose image is unsigned: refused the same way
    let next = runs_image(home, "0.2.0", &image(&unsigned));
    let out = kudo_home(
        &s,
        home,
        &[
            "upgrade",
            "--instance",
            "app",
            "-n",
            &s.namespace,
            "--image-key",
            key,
            "--image-plain-http",
        ],
    )
    .arg(&next)
    .assert()
    .code(1)
    .get_output()
    .stderr
    .clone();
    assert!(
        text(&out).contains("the images the change would run are refused"),
        "{}",
        text(&out)
    );
    let after = s.instance("app");
    assert_eq!(after["metadata"]["generation"], generation);
    assert_eq!(
        after["spec"]["operatorVersion"]["name"],
        inst["spec"]["operatorVersion"]["name"]
    );
}

/// Waits until Instance `name`'s deploy plan is COMPLETE, says how long that took since
/// `started` (`what` happened), and checks that its Deployment `NAME-app` runs `image`.
fn deployed_with(s: &Scenario, name: &str, started: Instant, what: &str, image: &str) -> Value {
    s.wait_plan(name, "deploy");
    say(&format!(
        "e2e: {what}; deploy COMPLETE {} ms after install",
        started.elapsed().as_millis()
    ));
    let deployments = s.api("apps/v1", "Deployment", "deployments");
    let d = s
        .get(&deployments, &format!("{name}-app"))
        .expect("the Deployment");
    assert_eq!(
        d["spec"]["template"]["spec"]["containers"][0]["image"], image,
        "{d}"
    );
    d
}

/// Two kudo packages pushed to `registry` to serve as images: the first signed (cosign 3's
/// format) by a key generated in `home`. The key's fingerprint and both pushes.
fn two_images(s: &Scenario, home: &Path, registry: &TestRegistry) -> (String, Value, Value) {
    let fingerprint = generate_key(s, home, home);
    let signed = pushed(
        s,
        home,
        &example("zookeeper-v1beta1"),
        &registry.oci("kudo"),
    );
    let unsigned = pushed(
        s,
        home,
        &example("cassandra-v1beta2"),
        &registry.oci("kudo"),
    );
    let signed_ref = signed["reference"].as_str().unwrap();
    kudo_home(
        s,
        home,
        &["package", "sign", signed_ref, "--plain-http", "--key"],
    )
    .arg(home.join("cosign.key"))
    .assert()
    .success();
    (fingerprint, signed, unsigned)
}

/// A push's reference as an image: `REGISTRY/PATH:TAG`.
fn image(pushed: &Value) -> String {
    pushed["reference"]
        .as_str()
        .unwrap()
        .trim_start_matches("oci://")
        .to_string()
}

/// The manager's own check (issue 50): with an image policy in `kudo-system`
/// (`kudo-image-policy`, `required` for this registry) and no check on the client, the
/// manager verifies the image a plan runs before its first step. A signed image is pinned by
/// the manager to the digest it verified, applied so and recorded in the revision; an
/// unsigned one fails the plan (FATAL_ERROR) before any object is applied, naming the image,
/// its digest and the keys tried.
#[test]
fn the_manager_checks_the_images_of_a_plan_by_the_policy_of_kudo_system() {
    let Some(s) = Scenario::start_with_workloads("image-policy", false) else {
        return;
    };
    let Some(registry) = TestRegistry::start(RegistryOptions::default()) else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let home = work.path();
    let (fingerprint, signed, unsigned) = two_images(&s, home, &registry);
    // The policy, for this registry only: the shared manager runs every scenario's Instances.
    let policy = serde_json::json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "kudo-image-policy", "namespace": "kudo-system"},
        "data": {
            "policy.yaml": format!(
                "plainHttp: true\nimages:\n- prefix: {}/kudo\n  verify: required\n  keys: [cosign.pub]\n",
                registry.host()
            ),
            "cosign.pub": std::fs::read_to_string(home.join("cosign.pub")).unwrap(),
        },
    });
    let file = home.join("policy.json");
    std::fs::write(&file, policy.to_string()).unwrap();
    s.kubectl(&["apply", "-f"]).arg(&file).assert().success();
    struct Removed<'a>(&'a Scenario);
    impl Drop for Removed<'_> {
        fn drop(&mut self) {
            let _ = self
                .0
                .kubectl(&[
                    "delete",
                    "configmap",
                    "-n",
                    "kudo-system",
                    "kudo-image-policy",
                ])
                .ok();
        }
    }
    let _removed = Removed(&s);
    // signed: verified and pinned by the manager
    let digest = signed["manifestDigest"].as_str().unwrap();
    let pinned = format!("{}/kudo/zookeeper@{digest}", registry.host());
    let started = Instant::now();
    kudo_home(
        &s,
        home,
        &["install", "--instance", "good", "-n", &s.namespace],
    )
    .arg(runs_image(home, "0.1.0", &image(&signed)))
    .assert()
    .success();
    deployed_with(
        &s,
        "good",
        started,
        "the manager verified and pinned the plan's image",
        &pinned,
    );
    let deployments = s.api("apps/v1", "Deployment", "deployments");
    let inst = s.instance("good");
    let recorded: Value = serde_json::from_str(
        inst["metadata"]["annotations"]["kudo.dev/images"]
            .as_str()
            .expect("the manager wrote kudo.dev/images"),
    )
    .unwrap();
    assert_eq!(
        recorded[image(&signed).as_str()]["verified"],
        fingerprint.as_str()
    );
    let history = s.json(&["history", "good", "-n", &s.namespace, "-o", "json"]);
    assert_eq!(
        history[0]["images"][image(&signed).as_str()]["pinned"],
        pinned.as_str(),
        "{history}"
    );
    // unsigned: the plan fails before any object is applied
    kudo_home(
        &s,
        home,
        &["install", "--instance", "bad", "-n", &s.namespace],
    )
    .arg(runs_image(home, "0.2.0", &image(&unsigned)))
    .assert()
    .success();
    s.wait_step("bad", "deploy", "app", "FATAL_ERROR");
    let bad = s.instance("bad");
    let message = bad["status"]["planStatus"]["deploy"]["phases"][0]["steps"][0]["message"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    for part in [
        format!(
            "{} ({})",
            image(&unsigned),
            unsigned["manifestDigest"].as_str().unwrap()
        ),
        "keys tried: ConfigMap kudo-system/kudo-image-policy/cosign.pub".to_string(),
        "nothing was applied".to_string(),
    ] {
        assert!(message.contains(&part), "{part}\n{message}");
    }
    assert!(s.get(&deployments, "bad-app").is_none(), "nothing applied");
    say(&format!("e2e: the manager refused: {message}"));
    // A policy that cannot be read holds the plan's first step in ERROR, retried; once it
    // reads, the step is checked again and refused: never let through unchecked.
    let mut broken = policy.clone();
    broken["data"]["policy.yaml"] = Value::from("images: 3\n");
    std::fs::write(&file, broken.to_string()).unwrap();
    s.kubectl(&["apply", "-f"]).arg(&file).assert().success();
    kudo_home(
        &s,
        home,
        &["install", "--instance", "held", "-n", &s.namespace],
    )
    .arg(runs_image(home, "0.3.0", &image(&unsigned)))
    .assert()
    .success();
    s.wait_step("held", "deploy", "app", "ERROR");
    let step = |name: &str| {
        s.instance(name)["status"]["planStatus"]["deploy"]["phases"][0]["steps"][0]["message"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    let held = step("held");
    assert!(
        held.contains("cannot be checked") && held.contains("policy.yaml"),
        "{held}"
    );
    std::fs::write(&file, policy.to_string()).unwrap();
    s.kubectl(&["apply", "-f"]).arg(&file).assert().success();
    s.wait_step("held", "deploy", "app", "FATAL_ERROR");
    assert!(
        step("held").contains("keys tried: ConfigMap kudo-system/kudo-image-policy/cosign.pub")
    );
    assert!(s.get(&deployments, "held-app").is_none(), "nothing applied");
}

/// An air-gapped install (issue 50, item 4): a package and the image it runs, bundled from one
/// registry, which is then stopped, relocated to another, and installed by name with
/// `--mirror`. The Deployment runs the image from the mirror by digest and names the source
/// registry nowhere; a package running an image the mirror lacks is refused, naming it, and
/// nothing is written.
#[test]
fn a_bundle_relocated_to_a_mirror_installs_with_the_source_registry_gone() {
    let Some(s) = Scenario::start_with_workloads("air-gap", false) else {
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
    let app_image = pushed(&s, home, &example("zookeeper-v1beta1"), &source.oci("kudo"));
    let pkg = pushed(
        &s,
        home,
        &runs_image(home, "0.1.0", &image(&app_image)),
        &source.oci("kudo"),
    );
    let archive = home.join("air.tar");
    kudo_home(&s, home, &["package", "bundle"])
        .arg(pkg["reference"].as_str().unwrap())
        .arg("-o")
        .arg(&archive)
        .arg("--plain-http")
        .assert()
        .success();
    let source_host = source.host().to_string();
    drop(source);
    let prefix = mirror.oci("air");
    kudo_home(&s, home, &["package", "relocate"])
        .arg(&archive)
        .args([prefix.as_str(), "--plain-http"])
        .assert()
        .success();
    let started = Instant::now();
    kudo_home(
        &s,
        home,
        &[
            "install",
            "runs-image",
            "--instance",
            "app",
            "-n",
            &s.namespace,
            "--mirror",
            &prefix,
            "--plain-http",
        ],
    )
    .assert()
    .success();
    let digest = app_image["manifestDigest"].as_str().unwrap();
    let d = deployed_with(
        &s,
        "app",
        started,
        "installed from the mirror",
        &format!("{}/air/kudo/zookeeper@{digest}", mirror.host()),
    );
    assert!(!d.to_string().contains(&source_host), "{d}");
    // The package came from the mirror (its defaults still name the image as written).
    let ov = s
        .get(
            &s.api("kudo.dev/v1beta1", "OperatorVersion", "operatorversions"),
            "runs-image-0.1.0",
        )
        .expect("the OperatorVersion");
    let from = ov["metadata"]["annotations"]["kudo.dev/package-source"]
        .as_str()
        .unwrap_or_default();
    assert!(
        from.starts_with(&format!("oci://{}/air/", mirror.host())),
        "{from}"
    );
    // an image the mirror lacks: refused, naming it; nothing written
    let other = home.join("other");
    let lacking = runs_image(&other, "0.2.0", &format!("{source_host}/kudo/missing:1"));
    let out = kudo_home(
        &s,
        home,
        &[
            "install",
            "--instance",
            "other",
            "-n",
            &s.namespace,
            "--mirror",
            &prefix,
            "--plain-http",
        ],
    )
    .arg(&lacking)
    .assert()
    .code(1)
    .get_output()
    .stderr
    .clone();
    let stderr = text(&out);
    assert!(
        stderr.contains(&format!("holds no copy of {source_host}/kudo/missing:1")),
        "{stderr}"
    );
    assert!(
        s.runtime
            .block_on(s.instances("v1beta2").get_opt("other"))
            .unwrap()
            .is_none(),
        "nothing written"
    );
}
