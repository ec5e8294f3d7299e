//! `kudo init --dry-run`: a complete installation, in YAML or JSON, and clear refusals.

use kudo_testkit::kudo;
use predicates::prelude::*;

#[test]
fn dry_run_prints_every_object_of_the_installation() {
    let out = kudo()
        .args(["init", "--dry-run"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    let docs = kudo_yaml::manifest::parse(std::path::Path::new("-"), &text).unwrap();
    let docs: Vec<_> = docs.into_iter().filter(|d| !d.is_null()).collect();
    let kinds: Vec<&str> = docs.iter().map(|d| d["kind"].as_str().unwrap()).collect();
    // Namespace, 4 CRDs (Rollout's included), 2 ServiceAccounts, 5 ClusterRoles (manager,
    // webhook, the view and admin aggregations, the rollout approver), 2 ClusterRoleBindings,
    // 2 Roles and 2 RoleBindings (the manager's Lease, the webhook's Secret), 2 Deployments, a
    // PodDisruptionBudget, a Service, 2 webhook configurations.
    assert_eq!(kinds.len(), 24, "{kinds:?}");
    assert_eq!(kinds[0], "Namespace");
    assert_eq!(
        kinds
            .iter()
            .filter(|k| **k == "CustomResourceDefinition")
            .count(),
        4
    );
    let out = kudo()
        .args(["init", "--dry-run", "-o", "json", "--namespace", "ops"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let list: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(list["kind"], "List");
    assert_eq!(list["items"][0]["metadata"]["name"], "ops");
}

#[test]
fn out_of_cluster_webhooks_and_refusals() {
    let dir = tempfile::tempdir().unwrap();
    let ca = dir.path().join("ca.pem");
    std::fs::write(
        &ca,
        "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n",
    )
    .unwrap();
    kudo()
        .args([
            "init",
            "--dry-run",
            "--webhook-url",
            "https://127.0.0.1:8443",
            "--ca-bundle",
        ])
        .arg(&ca)
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "url: https://127.0.0.1:8443/convert",
        ))
        .stdout(predicate::str::contains("kind: Service\n").not());
    kudo()
        .args([
            "init",
            "--dry-run",
            "--webhook-url",
            "http://127.0.0.1:8443",
            "--ca-bundle",
        ])
        .arg(&ca)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("https://"));
    kudo()
        .args(["init", "--dry-run", "--webhook-url", "https://x"])
        .assert()
        .code(2);
    // --wait waits on what is applied: with --dry-run nothing is, so the pair is a usage
    // error, and so is a --wait-time that is not a duration.
    for wait in [&["--wait"][..], &["--wait-time", "30s"]] {
        kudo()
            .args(["init", "--dry-run"])
            .args(wait)
            .assert()
            .code(2)
            .stderr(predicate::str::contains("--dry-run"));
    }
    kudo()
        .args(["init", "--wait-time", "soon"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("not a duration"));
    // Applying needs a cluster: a kubeconfig that cannot be read is a clear error, nothing is
    // printed on stdout.
    kudo()
        .args(["init", "--kubeconfig", "/nonexistent/kubeconfig"])
        .assert()
        .code(1)
        .stdout("")
        .stderr(predicate::str::contains("/nonexistent/kubeconfig"));
}

#[test]
fn the_webhook_certificate_lifetime_reaches_the_webhook_deployment_or_is_refused() {
    let out = kudo()
        .args(["init", "--dry-run", "-o", "json"])
        .args([
            "--webhook-cert-validity",
            "3m",
            "--webhook-cert-renew-before",
            "2m",
        ])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let list: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let webhook = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["kind"] == "Deployment" && o["metadata"]["name"] == "kudo-webhook")
        .expect("the webhook Deployment");
    let args: Vec<&str> = webhook["spec"]["template"]["spec"]["containers"][0]["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert_eq!(
        args[args.len() - 4..],
        ["--cert-validity", "3m", "--cert-renew-before", "2m"]
    );
    // (flags, what stderr says): usage errors (exit 2), nothing printed.
    let refused: &[(&[&str], &str)] = &[
        (
            &[
                "--webhook-cert-validity",
                "2m",
                "--webhook-cert-renew-before",
                "2m",
            ],
            "renew-before (2m) must be shorter than its validity (2m)",
        ),
        // The other at its default: 30 days of renew-before.
        (
            &["--webhook-cert-validity", "10d"],
            "renew-before (30d) must be shorter than its validity (10d)",
        ),
        (
            &["--webhook-cert-renew-before", "10s"],
            "renew-before (10s) must be at least 1m",
        ),
        // No Deployment with --webhook-url: nothing would take the lifetime.
        (
            &[
                "--webhook-url",
                "https://x",
                "--webhook-cert-validity",
                "3m",
            ],
            "cannot be used with",
        ),
    ];
    for (flags, says) in refused {
        kudo()
            .args(["init", "--dry-run"])
            .args(*flags)
            .assert()
            .code(2)
            .stdout("")
            .stderr(predicate::str::contains(*says));
    }
}
