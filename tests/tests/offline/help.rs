//! Every command's `--help` has an Examples section, and every example in it works on the
//! shipped examples (each run on its own copy of them, in a temporary directory): offline commands
//! succeed; commands that need a cluster get past their arguments, package and parameters and
//! stop at the cluster, here a `$KUBECONFIG` that does not exist; commands that read KUDO's
//! community repository succeed, or stop at the network (a machine with no Internet).

use std::path::Path;
use std::process::Command;

fn kudo(dir: &Path, args: &[String]) -> std::process::Output {
    Command::new(kudo_testkit::kudo_bin())
        .args(args)
        .current_dir(dir)
        .env("KUBECONFIG", dir.join("no-kubeconfig"))
        .env("KUDO_REGISTRY_CA_FILE", dir.join("no-ca.pem"))
        .env("HOME", dir)
        // examples/signing's key, whose password is public
        .env("KUDO_PASSWORD", "example")
        .env_remove("COSIGN_PASSWORD")
        .env_remove("CI")
        .output()
        .expect("kudo runs")
}

/// The subcommands a `--help` lists (but `help`): under `Commands:`, or under the groups of
/// `kudo --help` (`Package commands:`, ...).
fn subcommands(help: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut listing = false;
    for l in help.lines() {
        if l.is_empty() {
            listing = false;
        } else if !l.starts_with(' ') {
            listing = l == "Commands:" || l.ends_with(" commands:");
        } else if listing && !l.starts_with("   ") {
            out.extend(l.split_whitespace().next().map(String::from));
        }
    }
    out.retain(|c| c != "help");
    out
}

/// The example commands of a `--help`: lines after `Examples:` starting with `kudo`, joined
/// across ` \` continuations, split as a shell would (single and double quotes).
fn examples(help: &str) -> Vec<Vec<String>> {
    let section: Vec<&str> = help
        .lines()
        .skip_while(|l| *l != "Examples:")
        .skip(1)
        .collect();
    let mut out = Vec::new();
    let mut current = String::new();
    for line in section {
        let line = line.trim();
        if current.is_empty() && !line.starts_with("kudo ") {
            continue;
        }
        match line.strip_suffix('\\') {
            Some(head) => current.push_str(head),
            None => {
                current.push_str(line);
                out.push(words(&current));
                current.clear();
            }
        }
    }
    out
}

fn words(line: &str) -> Vec<String> {
    let (mut out, mut word, mut quote, mut started) = (Vec::new(), String::new(), None, false);
    for c in line.chars() {
        match (quote, c) {
            (None, '\'' | '"') => {
                quote = Some(c);
                started = true;
            }
            (Some(q), c) if c == q => quote = None,
            (None, c) if c.is_whitespace() => {
                if started {
                    out.push(std::mem::take(&mut word));
                    started = false;
                }
            }
            (_, c) => {
                word.push(c);
                started = true;
            }
        }
    }
    if started {
        out.push(word);
    }
    out
}

/// Commands that read KUDO's community repository (the default one): they succeed where the
/// Internet is reachable, else fail naming it.
fn needs_the_community_repository(args: &[String]) -> bool {
    let has = |f: &str| args.iter().any(|a| a == f);
    match args[1].as_str() {
        "search" => true,
        "repo" => args.get(2).is_some_and(|c| c == "update") && !has("local"),
        _ => false,
    }
}

/// Commands that only talk to a cluster (the rest must succeed offline).
fn needs_cluster(args: &[String]) -> bool {
    let has = |f: &str| args.iter().any(|a| a == f);
    match args[1].as_str() {
        "install" | "uninstall" | "plan" | "get" | "list" | "status" | "migrate" | "diff"
        | "patch" | "history" | "rollback" | "rollout" => true,
        "update" | "upgrade" => !has("-f"),
        "explain" => has("--instance"),
        "init" => !has("--dry-run"),
        _ => false,
    }
}

/// Commands that talk to an OCI registry: they get past their arguments and package and stop
/// before any connection, at `$KUDO_REGISTRY_CA_FILE`, a file that does not exist
/// (tests/oci.rs runs them against a registry).
fn needs_registry(args: &[String]) -> bool {
    matches!(
        (args[1].as_str(), args.get(2).map(String::as_str)),
        (
            "package",
            Some("push" | "pull" | "sign" | "verify-signature" | "bundle" | "relocate")
        ) | ("registry", Some("login"))
    )
}

#[test]
fn every_command_has_examples_and_every_example_works_on_the_shipped_examples() {
    let dir = tempfile::tempdir().unwrap();
    kudo_testkit::copy_dir(
        &kudo_testkit::repo().join("examples"),
        &dir.path().join("examples"),
    );
    let mut queue: Vec<Vec<String>> = vec![vec![]];
    let (mut commands, mut ran, mut offline) = (0, 0, 0);
    while let Some(path) = queue.pop() {
        let mut args = path.clone();
        args.push("--help".into());
        let out = kudo(dir.path(), &args);
        assert!(out.status.success(), "kudo {args:?}");
        let help = String::from_utf8(out.stdout).unwrap();
        commands += 1;
        let examples = examples(&help);
        assert!(
            !examples.is_empty(),
            "`kudo {} --help` has no Examples section",
            path.join(" ")
        );
        for example in examples {
            assert_eq!(example[0], "kudo", "{example:?}");
            // each example on its own copy: some write (add parameter, create, convert)
            let own = tempfile::tempdir().unwrap();
            kudo_testkit::copy_dir(&dir.path().join("examples"), &own.path().join("examples"));
            let out = kudo(own.path(), &example[1..]);
            let stderr = String::from_utf8_lossy(&out.stderr);
            if needs_registry(&example) {
                assert_eq!(out.status.code(), Some(1), "{example:?}: {stderr}");
                assert!(
                    stderr.contains("no-ca.pem (from KUDO_REGISTRY_CA_FILE)"),
                    "{example:?} did not stop at the registry: {stderr}"
                );
            } else if needs_the_community_repository(&example) && !out.status.success() {
                assert!(
                    stderr.contains("kudo-repository.storage.googleapis.com"),
                    "{example:?} failed, and not at the community repository: {stderr}"
                );
            } else if needs_cluster(&example) {
                // `kudo diff` exits with 2 on an error, as `diff` and `kubectl diff` do.
                let code = if example[1] == "diff" { 2 } else { 1 };
                assert_eq!(out.status.code(), Some(code), "{example:?}: {stderr}");
                assert!(
                    stderr.contains("($KUBECONFIG) does not exist"),
                    "{example:?} did not stop at the cluster: {stderr}"
                );
            } else {
                assert!(out.status.success(), "{example:?}: {stderr}");
                offline += 1;
            }
            ran += 1;
        }
        for sub in subcommands(&help) {
            let mut next = path.clone();
            next.push(sub);
            queue.push(next);
        }
    }
    // kudo, its 14 commands, package's 5 and plan's 2 and the groups' one each
    assert!(commands >= 22, "{commands} commands");
    assert!(
        ran >= 40 && offline >= 25,
        "{ran} examples, {offline} offline"
    );
}

#[test]
fn shell_words_as_the_examples_need_them() {
    assert_eq!(
        words("kudo x -p 'a=[{k: v}]' \"b c\" d"),
        vec!["kudo", "x", "-p", "a=[{k: v}]", "b c", "d"]
    );
}
