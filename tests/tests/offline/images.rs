//! `kudo package images`: the images the real KUDO operators run (with the given values, then
//! with every value of each finite domain), the dependencies they name, and a fixture whose
//! images follow an enum, a boolean and a registry parameter.

use std::path::Path;

use kudo_testkit::{fixture, kudo};
use serde_json::Value;

/// `kudo package images PACKAGE ARGS -o json`, which must succeed.
fn images(pkg: &Path, args: &[&str]) -> Value {
    let out = kudo()
        .args(["package", "images"])
        .arg(pkg)
        .args(args)
        .args(["-o", "json"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    serde_json::from_slice(&out).expect("-o json prints JSON")
}

/// The references listed, in order.
fn references(listed: &Value) -> Vec<&str> {
    listed["images"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["image"].as_str().unwrap())
        .collect()
}

/// The uses of `image` as `plan/task Kind/name pointer [with PARAMETER=VALUE]`.
fn uses(listed: &Value, image: &str) -> Vec<String> {
    let entry = listed["images"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["image"] == image)
        .unwrap_or_else(|| panic!("{image} is not listed: {listed}"));
    entry["uses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| {
            let with = match &u["with"] {
                Value::Null => String::new(),
                w => format!(
                    " [with {}={}]",
                    w["parameter"].as_str().unwrap(),
                    w["value"]
                ),
            };
            format!(
                "{}/{} {}/{} {}{with}",
                u["plan"].as_str().unwrap(),
                u["task"].as_str().unwrap(),
                u["kind"].as_str().unwrap(),
                u["name"].as_str().unwrap(),
                u["pointer"].as_str().unwrap()
            )
        })
        .collect()
}

const CONTAINER_0: &str = "/spec/template/spec/containers/0/image";

#[test]
fn the_kudo_operators_list_the_images_their_plans_run() {
    let Some(shared) = kudo_testkit::shared() else {
        return;
    };
    let full = shared.join("corpus/kudo-operators-full");

    let zookeeper = images(&full.join("zookeeper"), &[]);
    assert_eq!(references(&zookeeper), ["zookeeper:3.6.2"]);
    assert_eq!(
        uses(&zookeeper, "zookeeper:3.6.2"),
        [
            format!("deploy/validation Job/instance-validation {CONTAINER_0}"),
            format!("deploy/app StatefulSet/instance-zookeeper {CONTAINER_0}"),
            format!("validation/validation Job/instance-validation {CONTAINER_0}"),
        ]
    );
    assert_eq!(
        zookeeper["images"][0]["reference"],
        "docker.io/library/zookeeper:3.6.2"
    );
    assert_eq!(zookeeper["dependencies"], serde_json::json!([]));
    assert!(zookeeper.get("values").is_none(), "{zookeeper}");

    // the broker and its metrics sidecar; the Pipe Pod's own image and kudo's waiter
    let kafka = images(&full.join("kafka"), &[]);
    assert_eq!(
        references(&kafka),
        [
            "busybox",
            "busybox:1.31.1",
            "mesosphere/kafka:2.5.1-1.3.1",
            "quay.io/prometheus/node-exporter:v0.18.1",
        ]
    );
    let pipe_pod = "Pod/instance.deploy.deploykafka.generatetlscertificates.\
                    generatetlscertificates.pipepod";
    assert_eq!(
        uses(&kafka, "busybox:1.31.1"),
        [format!(
            "deploy/generate-tls-certificates {pipe_pod} /spec/initContainers/0/image"
        )]
    );
    assert_eq!(
        uses(&kafka, "busybox"),
        [format!(
            "deploy/generate-tls-certificates {pipe_pod} /spec/containers/0/image"
        )]
    );
    let broker = "/spec/template/spec/containers/1/image";
    assert_eq!(
        uses(&kafka, "mesosphere/kafka:2.5.1-1.3.1"),
        [
            format!("deploy/sts StatefulSet/instance-kafka {broker}"),
            format!("external-access/sts StatefulSet/instance-kafka {broker}"),
            format!("update-instance/sts StatefulSet/instance-kafka {broker}"),
        ]
    );

    // a Toggle turned on with -p applies its Deployment, and so lists its image
    let cruise = images(&full.join("kafka"), &["-p", "ENABLE_CRUISE_CONTROL=true"]);
    assert_eq!(
        uses(&cruise, "mesosphere/cruise-control:2.0.77-1.3.0"),
        [format!(
            "cruise-control/cruise-deployment Deployment/instance-cruise-control {CONTAINER_0}"
        )]
    );
}

#[test]
fn all_values_finds_the_images_a_toggle_or_a_value_of_a_domain_selects() {
    let Some(shared) = kudo_testkit::shared() else {
        return;
    };
    let full = shared.join("corpus/kudo-operators-full");

    // kafka's Toggle tasks, each turned on in turn: the images they add, and by which value
    let kafka = images(&full.join("kafka"), &["--all-values"]);
    assert_eq!(
        references(&kafka),
        [
            "busybox",
            "busybox:1.31.1",
            "mesosphere/cruise-control:2.0.77-1.3.0",
            "mesosphere/kafka:2.5.1-1.3.1",
            "mesosphere/kafka:workload",
            "quay.io/prometheus/node-exporter:v0.18.1",
            "shubhanilbag/kafka:2.4.0-1.3.0",
        ]
    );
    assert_eq!(
        uses(&kafka, "shubhanilbag/kafka:2.4.0-1.3.0"),
        [format!(
            "kafka-connect/kafka-connect-setup Job/instance-connect-setup {CONTAINER_0} \
             [with /KAFKA_CONNECT_ENABLED=true]"
        )]
    );
    let tried: Vec<String> = kafka["values"]["tried"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            format!(
                "{}={} {}",
                t["parameter"].as_str().unwrap(),
                t["value"],
                t["outcome"].as_str().unwrap()
            )
        })
        .collect();
    assert!(
        tried.contains(&"/ENABLE_CRUISE_CONTROL=true rendered".to_string())
            && tried.contains(&"/ENABLE_CRUISE_CONTROL=false given".to_string()),
        "{tried:?}"
    );

    // cassandra: the backup and recovery images only run when their parameters are "true"
    let given = images(&full.join("cassandra"), &[]);
    let walked = images(&full.join("cassandra"), &["--all-values"]);
    assert_eq!(
        references(&given),
        [
            "bitnami/kubectl:1.18.4",
            "mesosphere/cassandra:3.11.6-1.0.1"
        ]
    );
    assert_eq!(
        references(&walked),
        [
            "bitnami/kubectl:1.18.4",
            "mesosphere/cassandra-prometheus-exporter:2.3.4-1.0.1",
            "mesosphere/cassandra:3.11.6-1.0.1",
            "mesosphere/kudo-cassandra-medusa:0.6.0-1.0.1",
            "mesosphere/kudo-cassandra-recovery:0.0.2-1.0.1",
        ]
    );
    assert!(
        uses(&walked, "mesosphere/kudo-cassandra-medusa:0.6.0-1.0.1")
            .iter()
            .all(|u| u.ends_with("[with /BACKUP_RESTORE_ENABLED=true]")),
        "{walked}"
    );
}

#[test]
fn dependencies_are_named_not_fetched() {
    let Some(shared) = kudo_testkit::shared() else {
        return;
    };
    let demo = shared.join("corpus/kudo-operators-full/flink-demo");
    let listed = images(&demo, &[]);
    assert_eq!(
        references(&listed),
        [
            "bash",
            "dcoslabs/flink-demo-actor:0.3",
            "mesosphere/flink-generator:0.1",
        ]
    );
    let named: Vec<String> = listed["dependencies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            format!(
                "{} {} {} {} {}",
                d["task"].as_str().unwrap(),
                d["package"].as_str().unwrap(),
                d["operatorVersion"].as_str().unwrap(),
                d["appVersion"].as_str().unwrap(),
                d["from"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        named,
        [
            "zookeeper zookeeper 0.3.1 3.4.14 repository",
            "kafka kafka 1.3.1 2.5.0 repository",
            "flink flink 0.2.1 1.7.2 repository",
        ]
    );
    // the table's notes say so on stderr, and no repository is read
    kudo()
        .args(["package", "images"])
        .arg(&demo)
        .assert()
        .success()
        .stderr(predicates::str::contains(
            "note: task `kafka` (plan deploy) installs package `kafka` (operatorVersion 1.3.1, \
             appVersion 2.5.0) from the repository: its images are not listed",
        ));
}

#[test]
fn a_fixture_whose_images_follow_an_enum_a_boolean_and_a_registry() {
    let pkg = fixture("images");
    let table = kudo()
        .args(["package", "images"])
        .arg(&pkg)
        .args(["--all-values"])
        .assert()
        .success()
        .get_output()
        .clone();
    let stdout = String::from_utf8(table.stdout).unwrap();
    let rows: Vec<Vec<&str>> = stdout
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    let jobs = "/spec/jobTemplate/spec/template/spec/containers/0/image";
    let want: Vec<Vec<&str>> = vec![
        vec!["IMAGE", "PLAN", "TASK", "OBJECT", "FIELD", "WITH"],
        vec![
            "busybox:1.36",
            "deploy",
            "server",
            "Pod/instance-debug",
            "/spec/containers/0/image",
            "debug=true",
        ],
        vec![
            "registry.example.com/acme/backup:2.1.0",
            "deploy",
            "backup",
            "CronJob/instance-backup",
            jobs,
        ],
        vec![
            "registry.example.com/acme/migrate:2.1.0",
            "deploy",
            "server",
            "Deployment/instance-server",
            "/spec/template/spec/initContainers/0/image",
        ],
        vec![
            "registry.example.com/acme/server-community:2.1.0",
            "deploy",
            "server",
            "Deployment/instance-server",
            CONTAINER_0,
        ],
        vec![
            "registry.example.com/acme/server-enterprise:2.1.0",
            "deploy",
            "server",
            "Deployment/instance-server",
            CONTAINER_0,
            "edition=\"enterprise\"",
        ],
    ];
    assert_eq!(rows, want, "{stdout}");
    let stderr = String::from_utf8(table.stderr).unwrap();
    assert!(
        stderr.contains("note: --all-values tried 4 values, one parameter at a time: 2 rendered, 2 as given, 0 refused by the schema")
            && stderr.contains("note: not walked (under an array item): /shards/0/tier"),
        "{stderr}"
    );

    // with -p, the given values change what is listed; the namespace an object names is kept
    let listed = images(
        &pkg,
        &[
            "-p",
            "edition=enterprise",
            "-p",
            "registry=mirror.local:5000/acme",
        ],
    );
    assert_eq!(
        references(&listed),
        [
            "mirror.local:5000/acme/backup:2.1.0",
            "mirror.local:5000/acme/migrate:2.1.0",
            "mirror.local:5000/acme/server-enterprise:2.1.0",
        ]
    );
    assert_eq!(listed["images"][0]["uses"][0]["namespace"], "backups");
    assert_eq!(
        listed["images"][0]["reference"],
        "mirror.local:5000/acme/backup:2.1.0"
    );

    // an image that is no reference: exit 1, naming the image, its object and its field
    kudo()
        .args(["package", "images"])
        .arg(&pkg)
        .args(["-p", "registry=Registry.Example.com/ACME"])
        .assert()
        .code(1)
        .stdout("")
        .stderr(predicates::str::contains(
            "image `Registry.Example.com/ACME/migrate:2.1.0` is not an image reference: invalid \
             reference format; in Deployment `instance-server` at \
             /spec/template/spec/initContainers/0/image (plan deploy, task server, \
             templates/server.yaml)",
        ));
    // usage errors as the other commands: a malformed -p is exit 2
    kudo()
        .args(["package", "images"])
        .arg(&pkg)
        .args(["-p", "registry"])
        .assert()
        .code(2);
}
