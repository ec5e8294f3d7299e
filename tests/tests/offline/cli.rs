//! The `kudo` binary as a process: exit codes, stdout/stderr separation, files left untouched.

use kudo_testkit::kudo;
use predicates::prelude::*;

#[test]
fn template_prints_one_yaml_stream_of_kubernetes_objects() {
    let out = kudo()
        .args([
            "template",
            "examples/cassandra-v1beta2",
            "-P",
            "examples/values/cassandra-v1beta2.yaml",
        ])
        .args([
            "-p",
            "topology/0/datacenterName=DC9",
            "--instance",
            "db",
            "--namespace",
            "prod",
        ])
        .assert()
        .success()
        .stderr("")
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    let docs = kudo_yaml::manifest::parse(std::path::Path::new("-"), &text).unwrap();
    assert!(docs.len() >= 4, "{} documents", docs.len());
    for d in &docs {
        assert!(
            d["kind"].is_string() && d["metadata"]["name"].is_string(),
            "{d}"
        );
        assert_eq!(d["metadata"]["namespace"], "prod");
    }
    assert!(text.contains("DC9"));
}

/// Issue 22: rendered manifests are read as Kubernetes reads them (YAML 1.1: `0777` is octal
/// 511, `yes` is true), and the text `kudo template` prints reads as exactly the objects that
/// `-o json` prints (a final block scalar with no line break after it keeps none).
#[test]
fn template_text_reads_as_the_objects_of_json_output_with_kubernetes_rules() {
    let (_tmp, pkg) = kudo_testkit::copy_package(&kudo_testkit::example("zookeeper-v1beta1"));
    let template = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{Name}}-yaml11\n\
                    data:\n  mode: '0777'\n  script: |\n    echo 1\n    echo 2";
    std::fs::write(pkg.join("templates/configmap.yaml"), template).unwrap();
    let statefulset = pkg.join("templates/statefulset.yaml");
    let text = std::fs::read_to_string(&statefulset).unwrap();
    let volume = [
        "        - name: scripts",
        "          configMap:",
        "            name: x",
        "            defaultMode: 0777",
        "            optional: yes",
    ]
    .join("\n");
    let text = text.replacen("volumes:\n", &format!("volumes:\n{volume}\n"), 1);
    assert!(
        text.contains("defaultMode: 0777"),
        "the StatefulSet has volumes"
    );
    std::fs::write(&statefulset, text).unwrap();
    let run = |format: &str| {
        let out = kudo()
            .arg("template")
            .arg(&pkg)
            .args(["-o", format])
            .assert()
            .success();
        String::from_utf8(out.get_output().stdout.clone()).unwrap()
    };
    let list: serde_json::Value = serde_json::from_str(&run("json")).unwrap();
    let text = run("yaml");
    let docs: Vec<serde_json::Value> = kudo_yaml::manifest::parse(std::path::Path::new("-"), &text)
        .unwrap()
        .into_iter()
        .filter(|d| !d.is_null())
        .collect();
    assert_eq!(serde_json::Value::from(docs), list["items"], "{text}");
    let items = list["items"].as_array().unwrap();
    let config = items.iter().find(|o| o["kind"] == "ConfigMap").unwrap();
    assert_eq!(config["data"]["script"], "echo 1\necho 2");
    assert_eq!(config["data"]["mode"], "0777");
    let set = items.iter().find(|o| o["kind"] == "StatefulSet").unwrap();
    let volume = &set["spec"]["template"]["spec"]["volumes"][0]["configMap"];
    assert_eq!(volume["defaultMode"], 511);
    assert_eq!(volume["optional"], true);
    assert!(
        text.contains("  script: |-\n    echo 1\n    echo 2\n"),
        "{text}"
    );
}

#[test]
fn template_renders_the_v1beta1_example_with_typed_values() {
    kudo()
        .args([
            "template",
            "examples/zookeeper-v1beta1",
            "-p",
            "NODE_COUNT=5",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains("replicas: 5"));
}

#[test]
fn invalid_parameters_print_nothing_on_stdout_and_exit_1() {
    kudo()
        .args([
            "template",
            "examples/cassandra-v1beta2",
            "-P",
            "examples/values/cassandra-invalid.yaml",
        ])
        .assert()
        .code(1)
        .stdout("")
        .stderr(predicate::str::contains(
            "/nodeCount: must be at least 1, got 0",
        ))
        .stderr(predicate::str::contains("did you mean /topology?"))
        .stderr(predicate::str::contains("5 error(s)"))
        // the secret value 12345 never appears, neither as a value nor in a source line
        .stderr(predicate::str::contains("12345").not())
        .stderr(predicate::str::contains("<hidden: writeOnly>"));
}

#[test]
fn override_errors_name_their_argument() {
    kudo()
        .args([
            "params",
            "examples/cassandra-v1beta2",
            "-p",
            "nodeCount=3",
            "-p",
            "nodeCont=4",
        ])
        .assert()
        .code(1)
        .stdout("")
        .stderr(predicate::str::contains(
            "/nodeCont: is not a parameter of this package (from -p argument 2)",
        ))
        .stderr(predicate::str::contains("did you mean /nodeCount?"));
}

/// `-p`, `--reset`, `--add` and `--remove` are parsed where the command line is read: a
/// malformed one is a usage error (exit 2) naming its position among its kind, never its value,
/// before any file or cluster is read.
#[test]
fn malformed_value_arguments_are_usage_errors_naming_their_position() {
    let nowhere = tempfile::tempdir().unwrap();
    for (args, says) in [
        (
            &[
                "params",
                "examples/cassandra-v1beta2",
                "-p",
                "nodeCount=3",
                "-p",
                "nodeCount",
            ][..],
            "/: expected KEY=VALUE, found `nodeCount` (from -p argument 2) [override-syntax]",
        ),
        (
            &[
                "params",
                "examples/cassandra-v1beta2",
                "-p",
                "a~2b=hunter2-secret",
            ],
            "/a~2b: invalid JSON pointer",
        ),
        (
            &[
                "update",
                "--instance",
                "c",
                "--reset",
                "nodeCount",
                "--reset",
                "",
            ],
            "(from --reset argument 2) [override-syntax]",
        ),
        (
            &["patch", "c", "--add", "ports/-"],
            "expected POINTER=VALUE, found `ports/-` (from --add argument 1)",
        ),
        (
            &["patch", "c", "--remove", "/"],
            "(from --remove argument 1) [override-syntax]",
        ),
        // the package need not exist: nothing is read before the arguments are parsed
        (
            &["install", "no/such/package", "-p", "=3"],
            "(from -p argument 1) [override-syntax]",
        ),
    ] {
        kudo()
            .args(args)
            .env("KUBECONFIG", nowhere.path().join("none"))
            .assert()
            .code(2)
            .stdout("")
            .stderr(predicate::str::contains(says))
            .stderr(predicate::str::contains("hunter2").not())
            .stderr(predicate::str::contains("Usage:"));
    }
}

#[test]
fn usage_errors_exit_2() {
    kudo().args(["template"]).assert().code(2).stdout("");
    kudo().args(["params", "x", "-o", "toml"]).assert().code(2);
    kudo().args(["frobnicate"]).assert().code(2);
}

#[test]
fn a_missing_package_is_an_error_not_a_crash() {
    kudo()
        .args(["params", "examples/does-not-exist"])
        .assert()
        .code(1)
        .stderr(predicate::str::starts_with("error: "));
}

#[test]
fn params_output_feeds_back_as_a_values_file_and_hides_secrets() {
    let dir = tempfile::tempdir().unwrap();
    let out = kudo()
        .args([
            "params",
            "examples/cassandra-v1beta2",
            "-p",
            "backup/credentials/password=s3cret",
            "-p",
            "nodeCount=9",
        ])
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "writeOnly values left out: /backup/credentials/password",
        ))
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    assert!(!text.contains("s3cret"));
    let file = dir.path().join("values.yaml");
    std::fs::write(&file, &text).unwrap();
    let again = kudo()
        .args(["params", "examples/cassandra-v1beta2", "-P"])
        .arg(&file)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    // The same values come back; only the note about the left-out secret is gone.
    let without_note: String = text
        .lines()
        .filter(|l| !l.starts_with("# left out"))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(
        String::from_utf8(again).unwrap(),
        without_note,
        "params output is a fixed point"
    );
    kudo()
        .args([
            "params",
            "examples/cassandra-v1beta2",
            "-p",
            "backup/credentials/password=s3cret",
            "--show-secrets",
            "-o",
            "json",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains("\"password\": \"s3cret\""));
}

#[test]
fn convert_prints_a_v1beta2_schema_that_loads_and_validates_the_defaults() {
    let out = kudo()
        .args(["package", "convert", "examples/zookeeper-v1beta1"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    let doc =
        kudo_yaml::document::Document::parse(std::path::Path::new("params.yaml"), &text).unwrap();
    let kudo_policy::Params::V1beta2(schema) = kudo_policy::Params::parse(&doc).unwrap() else {
        panic!("not v1beta2: {text}")
    };
    assert_eq!(schema.node_at(&["NODE_COUNT"]).unwrap()["default"], 3);
    assert_eq!(
        schema.node_at(&["ENABLE_METRICS"]).unwrap()["trigger"],
        "update-metrics"
    );
}

#[test]
fn convert_in_place_and_to_a_new_directory() {
    let dir = tempfile::tempdir().unwrap();
    let pkg = dir.path().join("zk");
    kudo_testkit::copy_dir(&kudo_testkit::example("zookeeper-v1beta1"), &pkg);
    let out = dir.path().join("zk2");
    kudo()
        .args(["package", "convert"])
        .arg(&pkg)
        .arg("--output-dir")
        .arg(&out)
        .assert()
        .success();
    kudo()
        .args(["package", "verify"])
        .arg(&out)
        .assert()
        .success();
    // --output refuses an existing directory and writes nothing
    kudo()
        .args(["package", "convert"])
        .arg(&pkg)
        .arg("--output-dir")
        .arg(&out)
        .assert()
        .code(1);
    kudo()
        .args(["package", "convert", "--in-place"])
        .arg(&pkg)
        .assert()
        .success();
    let text = std::fs::read_to_string(pkg.join("params.yaml")).unwrap();
    assert!(text.starts_with("apiVersion: kudo.dev/v1beta2"), "{text}");
    kudo()
        .args(["package", "verify"])
        .arg(&pkg)
        .assert()
        .success();
}

#[test]
fn verify_reports_json_and_fails_on_a_bad_default() {
    let dir = tempfile::tempdir().unwrap();
    let pkg = dir.path().join("c");
    kudo_testkit::copy_dir(&kudo_testkit::example("cassandra-v1beta2"), &pkg);
    kudo()
        .args(["package", "verify", "-o", "json"])
        .arg(&pkg)
        .assert()
        .success()
        .stdout(predicate::str::contains("\"ok\": true"));
    let params = std::fs::read_to_string(pkg.join("params.yaml")).unwrap();
    let broken = params.replacen("default: INFO", "default: LOUD", 1);
    assert_ne!(broken, params);
    std::fs::write(pkg.join("params.yaml"), broken).unwrap();
    let out = kudo()
        .args(["package", "verify", "-o", "json"])
        .arg(&pkg)
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    let report: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(report["ok"], false);
    let d = &report["diagnostics"][0];
    assert_eq!(d["code"], "invalid-default");
    assert_eq!(d["pointer"], "/logLevel");
    assert!(
        d["origin"]["path"]
            .as_str()
            .unwrap()
            .ends_with("params.yaml")
    );
}

/// KUDO's verifier checks on a v1beta1 package: every planted defect of
/// `tests/fixtures/verify-kudo/defects` in one run, exit 1, each with its code, its
/// pointer and its file:line; the clean twin verifies.
#[test]
fn verify_has_kudos_checks_and_reports_every_finding_in_one_run() {
    let fixtures = kudo_testkit::fixture("verify-kudo");
    let out = kudo()
        .args(["package", "verify", "-o", "json"])
        .arg(fixtures.join("defects"))
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    let report: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let found: Vec<(String, String, String, u64)> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            let path = d["origin"]["path"].as_str().unwrap_or_default();
            let file = path.rsplit_once("defects/").map_or(path, |(_, f)| f);
            (
                d["code"].as_str().unwrap().to_string(),
                d["pointer"].as_str().unwrap().to_string(),
                file.to_string(),
                d["origin"]["line"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    for want in [
        ("unknown-group", "/NODES", "params.yaml", 10),
        ("invalid-name", "/DEBUG", "params.yaml", 20),
        ("required", "/TUNING", "params.yaml", 16),
        ("namespace-object", "", "templates/namespaced.yaml", 2),
        ("unused", "", "templates/forgotten.yaml", 1),
        (
            "undefined-parameter",
            "/PROT",
            "templates/configmap.yaml",
            8,
        ),
        ("template", "", "templates/configmap.yaml", 5),
        ("template", "", "templates/configmap.yaml", 11),
        ("template", "", "templates/namespace.yaml", 2),
    ] {
        let want = (
            want.0.to_string(),
            want.1.to_string(),
            want.2.to_string(),
            want.3,
        );
        assert!(found.contains(&want), "{want:?} not in {found:#?}");
    }
    kudo()
        .args(["package", "verify"])
        .arg(fixtures.join("clean"))
        .assert()
        .success();
}

#[test]
fn a_values_file_that_cannot_be_read_says_so_by_its_code() {
    let cassandra = kudo_testkit::example("cassandra-v1beta2");
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope.yaml");
    for (file, code, says) in [
        (&missing, "file-not-found", "No such file"),
        (&dir.path().to_path_buf(), "file-unreadable", "directory"),
    ] {
        kudo()
            .args(["template"])
            .arg(&cassandra)
            .arg("-P")
            .arg(file)
            .assert()
            .code(1)
            .stdout("")
            .stderr(predicate::str::contains(code))
            .stderr(predicate::str::contains(says))
            .stderr(predicate::str::contains("yaml-syntax").not());
    }
}

#[test]
fn package_convert_takes_a_params_file_alone_or_a_folder_holding_only_one() {
    let dir = tempfile::tempdir().unwrap();
    let only = dir.path().join("only");
    std::fs::create_dir(&only).unwrap();
    let v1 = "apiVersion: kudo.dev/v1beta1\nparameters:\n  - name: NODES\n    type: integer\n    default: \"3\"\n";
    std::fs::write(only.join("params.yaml"), v1).unwrap();
    for target in [only.clone(), only.join("params.yaml")] {
        kudo()
            .args(["package", "convert"])
            .arg(&target)
            .assert()
            .success()
            .stdout(predicate::str::contains("apiVersion: kudo.dev/v1beta2"))
            .stdout(predicate::str::contains("default: 3"));
    }
    let out = dir.path().join("out");
    kudo()
        .args(["package", "convert"])
        .arg(only.join("params.yaml"))
        .arg("--output-dir")
        .arg(&out)
        .assert()
        .success();
    assert!(
        std::fs::read_to_string(out.join("params.yaml"))
            .unwrap()
            .contains("kudo.dev/v1beta2")
    );
    kudo()
        .args(["package", "convert"])
        .arg(only.join("params.yaml"))
        .arg("--in-place")
        .assert()
        .success();
    assert!(
        std::fs::read_to_string(only.join("params.yaml"))
            .unwrap()
            .contains("type: integer")
    );
    // An empty folder: what kudo expected, nothing written.
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    kudo()
        .args(["package", "convert"])
        .arg(&empty)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("a params.yaml file"));
    assert_eq!(std::fs::read_dir(&empty).unwrap().count(), 0);
}

#[test]
fn kudo_version_prints_the_client_and_reports_an_unreachable_cluster() {
    let out = kudo()
        .args(["version", "--client", "-o", "json"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["client"]["version"], env!("CARGO_PKG_VERSION"));
    assert!(v.get("server").is_none());
    // No cluster: still exit 0, the server part says why.
    kudo()
        .args(["version", "--kubeconfig", "/nonexistent/kubeconfig"])
        .assert()
        .success()
        .stdout(predicate::str::contains("Client: kudo"))
        .stdout(predicate::str::contains("Server: not reachable"))
        .stdout(predicate::str::contains("/nonexistent/kubeconfig"));
}

#[test]
fn helm_habits_get_kudo_s_words() {
    let cassandra = kudo_testkit::example("cassandra-v1beta2");
    // A dotted path: the JSON pointer it meant.
    kudo()
        .arg("template")
        .arg(&cassandra)
        .args(["-p", "jvm.heapSize=2G"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("unknown-parameter"))
        .stderr(predicate::str::contains("did you mean /jvm/heapSize?"));
    // Helm's value flags: a usage error naming kudo's.
    for (flag, says) in [("--set", "-p POINTER=VALUE"), ("--values", "-P FILE")] {
        kudo()
            .arg("template")
            .arg(&cassandra)
            .args([flag, "x"])
            .assert()
            .code(2)
            .stderr(predicate::str::contains(says))
            .stderr(predicate::str::contains("-- --").not());
    }
}

/// One grammar: `-o` is a format everywhere (a directory is `--output-dir`), Helm's and KUDO's
/// habits get kudo's way in a usage error (exit 2), a name instead of a package says what kudo
/// takes, and no cluster is a short error naming where one is looked for.
#[test]
fn one_cli_grammar_with_helm_and_kudo_habits_answered() {
    let cassandra = kudo_testkit::example("cassandra-v1beta2");
    // template -o json: one List of the objects
    let out = kudo()
        .arg("template")
        .arg(&cassandra)
        .args(["-n", "prod", "-o", "json"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let list: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(list["kind"], "List");
    assert!(list["items"].as_array().unwrap().len() > 2);
    assert!(
        list["items"]
            .as_array()
            .unwrap()
            .iter()
            .all(|o| o["metadata"]["namespace"] == "prod"),
        "{list}"
    );
    // convert's directory is --output-dir; --output is a format and convert has none
    kudo()
        .args(["package", "convert"])
        .arg(kudo_testkit::example("zookeeper-v1beta1"))
        .args(["--output", "somewhere"])
        .assert()
        .code(2);
    // Helm's -f and --set, KUDO's install by name
    let repo_home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(repo_home.path().join("repository")).unwrap();
    std::fs::write(
        repo_home.path().join("repository/repositories.yaml"),
        "repoVersion: v1\ncontext: community\nrepositories:\n- name: community\n  url: file:///nonexistent/kudo\n",
    )
    .unwrap();
    for (args, says, code) in [
        (&["template", "PKG", "-f", "v.yaml"][..], "with -P FILE", 2),
        (&["install", "PKG", "--set", "a.b=1"], "-p POINTER=VALUE", 2),
        (
            &["params", "PKG", "-p", "jvm.heapSize=2G"],
            "did you mean /jvm/heapSize",
            1,
        ),
        (
            &["install", "cassandra"],
            "not a file or directory, so looked up as an operator name in a repository",
            1,
        ),
    ] {
        let args: Vec<std::ffi::OsString> = args
            .iter()
            .map(|a| {
                if *a == "PKG" {
                    cassandra.clone().into_os_string()
                } else {
                    (*a).into()
                }
            })
            .collect();
        kudo()
            .args(&args)
            // a repository that cannot be read, Internet or not
            .env("KUDO_HOME", repo_home.path())
            .env("XDG_CACHE_HOME", repo_home.path().join("cache"))
            .assert()
            .code(code)
            .stderr(predicate::str::contains(says));
    }
    // no cluster: one short line naming the three places
    let home = tempfile::tempdir().unwrap();
    kudo()
        .args(["get", "instances"])
        .env_remove("KUBECONFIG")
        .env_remove("KUBERNETES_SERVICE_HOST")
        .env("HOME", home.path())
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "give --kubeconfig FILE, or set $KUBECONFIG, or write ~/.kube/config",
        ));
}

/// `program` (kudo's `kubectl-kudo` binary, or a link to `kudo` by that name) as kubectl runs
/// it, with nothing of the machine's configuration: kudo's own in `home`, as [`kudo`] has it.
fn plugin(program: &std::path::Path, home: &std::path::Path) -> assert_cmd::Command {
    let mut c = assert_cmd::Command::new(program);
    c.current_dir(kudo_testkit::repo())
        .env("NO_COLOR", "1")
        .env("KUBECONFIG", "/nonexistent/kubeconfig")
        .env("HOME", home)
        .env("KUDO_HOME", home.join("kudo"))
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_CACHE_HOME", home.join("cache"));
    c
}

/// kudo's `kubectl-kudo` binary and, where links exist, a link named so in `dir` to `kudo`
/// (the README's `ln -s`): the two ways kudo is kubectl's plugin.
fn plugins(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut programs = vec![kudo_testkit::workspace_bin("kubectl-kudo")];
    #[cfg(unix)]
    {
        let link = dir.join("kubectl-kudo");
        std::os::unix::fs::symlink(kudo_testkit::kudo_bin(), &link).unwrap();
        programs.push(link);
    }
    programs
}

/// Issue 46: called as kubectl's plugin, kudo's help, usage lines and errors name it as kubectl
/// users type it, `kubectl kudo`.
#[test]
fn as_kubectl_kudo_help_usage_and_errors_say_kubectl_kudo() {
    let dir = tempfile::tempdir().unwrap();
    // (arguments, exit code, what stdout (exit code 0) or stderr says)
    let cases: &[(&[&str], i32, &str)] = &[
        (&["--help"], 0, "Usage: kubectl kudo [OPTIONS] <COMMAND>"),
        (
            &["--help"],
            0,
            "\n  kubectl kudo install examples/cassandra-v1beta2 --instance cassandra",
        ),
        (&["list", "--help"], 0, "as `kubectl kudo get instances`"),
        (&["install"], 2, "Usage: kubectl kudo install <PACKAGE>"),
        (
            &["install", "--nope"],
            2,
            "Usage: kubectl kudo install [OPTIONS] <PACKAGE>",
        ),
        (
            &["uninstall", "x"],
            1,
            "error: kubectl kudo uninstall: the kubeconfig /nonexistent/kubeconfig ($KUBECONFIG) \
             does not exist",
        ),
        (
            &["template", ".", "--set", "a=1"],
            2,
            "error: kubectl kudo has no --set",
        ),
        (
            &["repo", "context", "nowhere"],
            1,
            "nowhere: no repository of this name (see `kubectl kudo repo list`)",
        ),
    ];
    for program in &plugins(dir.path()) {
        for (args, code, says) in cases {
            let home = tempfile::tempdir().unwrap();
            let out = plugin(program, home.path())
                .args(*args)
                .assert()
                .code(*code)
                .get_output()
                .clone();
            let shown = if *code == 0 { &out.stdout } else { &out.stderr };
            let shown = String::from_utf8_lossy(shown);
            assert!(
                shown.contains(says),
                "{} {args:?} does not say {says:?}:\n{shown}",
                program.display()
            );
            // an example (an indented line), a quoted command (wrapped as clap wraps it)
            let flat = shown.split_whitespace().collect::<Vec<_>>().join(" ");
            assert!(
                !shown.lines().any(|l| l.starts_with("  kudo ")) && !flat.contains("`kudo "),
                "{} {args:?} names kudo alone:\n{shown}",
                program.display()
            );
        }
    }
}
/// Issue 46: `kubectl plugin list` finds kudo in `$PATH` as `kubectl-kudo`, and `kubectl kudo`
/// runs it. Skipped, saying so, where kubectl is not installed.
#[test]
fn kubectl_plugin_list_finds_kubectl_kudo_and_kubectl_kudo_runs_it() {
    let Some(kubectl) = std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|d| d.join(format!("kubectl{}", std::env::consts::EXE_SUFFIX)))
            .find(|k| k.is_file())
    }) else {
        eprintln!(
            "kubectl_plugin_list_finds_kubectl_kudo_and_kubectl_kudo_runs_it: skipped: kubectl \
             is not in $PATH"
        );
        return;
    };
    // $PATH is a folder holding kubectl-kudo alone (target/debug holds files kubectl warns
    // about, as kubectl-kudo.d)
    let dir = tempfile::tempdir().unwrap();
    let installed = dir
        .path()
        .join(format!("kubectl-kudo{}", std::env::consts::EXE_SUFFIX));
    std::fs::copy(kudo_testkit::workspace_bin("kubectl-kudo"), &installed).unwrap();
    let kubectl = |args: &[&str]| {
        std::process::Command::new(&kubectl)
            .args(args)
            .env("PATH", dir.path())
            .env("KUBECONFIG", "/nonexistent/kubeconfig")
            .env("HOME", dir.path())
            .env("NO_COLOR", "1")
            .output()
            .unwrap()
    };
    let out = kubectl(&["plugin", "list"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "kubectl plugin list: {out:?}");
    assert!(
        stdout.lines().any(|l| l == installed.to_string_lossy()),
        "kubectl plugin list does not list {}:\n{stdout}",
        installed.display()
    );
    let out = kubectl(&["kudo", "version", "--client", "-o", "json"]);
    assert!(out.status.success(), "kubectl kudo version: {out:?}");
    let version: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        version["client"]["version"],
        env!("CARGO_PKG_VERSION"),
        "{version}"
    );
    let out = kubectl(&["kudo", "--help"]);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("Usage: kubectl kudo [OPTIONS] <COMMAND>"),
        "kubectl kudo --help: {out:?}"
    );
}
