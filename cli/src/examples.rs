//! The Examples section of each command's `--help` (lines of at most 96 characters, so that
//! clap never wraps them; a command continues on the next line after ` \`). Every command
//! (a line that starts with `  kudo `) is run by `tests/tests/offline/help.rs` on a copy of the shipped
//! examples: offline commands must succeed; cluster commands are run against a kubeconfig
//! that does not exist, so they must get past argument parsing, the package and the
//! parameters, and stop at the cluster.

pub const KUDO: &str = "\
Examples:
  kudo package verify examples/cassandra-v1beta2
  kudo template examples/cassandra-v1beta2 -p nodeCount=5
  kudo install examples/cassandra-v1beta2 --instance cassandra -n prod --wait
";

pub const TEMPLATE: &str = "\
Examples:
  # The objects of the deploy plan, with the defaults
  kudo template examples/cassandra-v1beta2

  # With a values file and overrides (JSON pointers, values typed by the schema)
  kudo template examples/cassandra-v1beta2 -P examples/values/cassandra-v1beta2.yaml \\
    -p topology/0/datacenterName=DC1 -p 'topology/0/labels=[{key: team, value: data}]'

  # Another plan of a KUDO (v1beta1) package, as one JSON List, in a namespace
  kudo template examples/zookeeper-v1beta1 -p NODE_COUNT=5 --plan update -n prod -o json
";

pub const PARAMS: &str = "\
Examples:
  kudo params examples/cassandra-v1beta2 -p nodeCount=5 -p jvm/heapSize=2G

  # The effective values as JSON, fed back later with -P
  kudo params examples/cassandra-v1beta2 -P examples/values/cassandra-v1beta2.yaml -o json
";

pub const EXPLAIN: &str = "\
Examples:
  # The top level: every parameter, with its type and marks
  kudo explain examples/cassandra-v1beta2

  # One parameter: type, default, bounds, the plan a change runs and where it comes from
  kudo explain examples/cassandra-v1beta2 /topology/0/datacenterName
  kudo explain examples/cassandra-v1beta2 backup/credentials/password -o json

  # A KUDO (v1beta1) package, through its conversion
  kudo explain examples/zookeeper-v1beta1 NODE_COUNT

  # An Instance's parameter: also its value, and whether you set it (secrets stay masked)
  kudo explain --instance cassandra -n prod backup/credentials/password
";

pub const PACKAGE: &str = "\
Examples:
  kudo package verify examples/cassandra-v1beta2
  kudo package list parameters examples/cassandra-v1beta2
  kudo package images examples/cassandra-v1beta2
  kudo package convert examples/zookeeper-v1beta1 --output-dir zookeeper-v1beta2
  kudo package add parameter examples/cassandra-v1beta2 --path /backup --name keepDays \\
    --type integer --default 7 --yes
  kudo package create examples/cassandra-v1beta2 --output-dir .
";

pub const CONVERT: &str = "\
Examples:
  # The converted params.yaml on stdout
  kudo package convert examples/zookeeper-v1beta1

  # The whole package, converted, into a new directory
  kudo package convert examples/zookeeper-v1beta1 --output-dir zookeeper-v1beta2

  # A params.yaml alone
  kudo package convert examples/zookeeper-v1beta1/params.yaml
";

pub const VERIFY: &str = "\
Examples:
  kudo package verify examples/cassandra-v1beta2
  kudo package verify examples/zookeeper-v1beta1 -o json

  # In an author's CI: is the upgrade from the released version safe? (no cluster needed;
  # exits with 1 on a change that may break an Instance)
  kudo package verify examples/cassandra-v1beta2 \\
    --against examples/repository/cassandra-3.11.6_2.0.0.tgz
";

pub const LIST_PARAMETERS: &str = "\
Examples:
  kudo package list parameters examples/cassandra-v1beta2
  kudo package list parameters examples/cassandra-v1beta2 --required --descriptions
  kudo package list parameters examples/zookeeper-v1beta1 --names
  kudo package list parameters examples/cassandra-v1beta2 -o json-schema
";

pub const IMAGES: &str = "\
Examples:
  # Each image the plans run with the defaults, and where
  kudo package images examples/cassandra-v1beta2

  # With values, also each value of every enum and boolean (one at a time), as JSON
  kudo package images examples/cassandra-v1beta2 -p nodeCount=5 --all-values -o json

  # A KUDO (v1beta1) package, as YAML
  kudo package images examples/zookeeper-v1beta1 -o yaml
";

pub const ADD_PARAMETER: &str = "\
Examples:
  # In a terminal, the wizard asks for each field the flags do not give:
  #   kudo package add parameter examples/cassandra-v1beta2
  # Scripted, every field from flags:
  kudo package add parameter examples/cassandra-v1beta2 --path /backup --name retentionDays \\
    --type integer --default 7 --constraint minimum=1 --trigger backup-update --yes
  kudo package add parameter examples/cassandra-v1beta2 --path '/topology/[]' --name rack \\
    --type string --yes
";

pub const CREATE: &str = "\
Examples:
  # cassandra-3.11.6_2.0.0.tgz (NAME-APPVERSION_OPERATORVERSION.tgz) in the current directory
  kudo package create examples/cassandra-v1beta2
  kudo package create examples/zookeeper-v1beta1 --output-dir . --overwrite
";

pub const UPDATE: &str = "\
Examples:
  # An Instance in the cluster: prints the plan the change runs, then waits for it
  kudo update cassandra -n prod -p nodeCount=5 --wait

  # An Instance kept in a file (GitOps): the file is edited in place; --dry-run shows the diff
  kudo update -f examples/instances/cassandra.yaml --package examples/cassandra-v1beta2 \\
    -p nodeCount=5 --dry-run

  # Back to the default: remove the value you set (`-p nodeCount=null` is refused)
  kudo update cassandra -n prod --reset nodeCount --wait
";

pub const UPGRADE: &str = "\
Examples:
  kudo upgrade examples/cassandra-v1beta2 --instance cassandra -n prod --wait
  kudo upgrade -f examples/instances/cassandra.yaml --from examples/cassandra-v1beta2 \\
    --package examples/cassandra-v1beta2 --dry-run
";

pub const ROLLOUT: &str = "\
Examples:
  # Every Cassandra of team data in prod: one first, then a quarter, then the rest
  kudo rollout start cassandra-4 examples/cassandra-v1beta2 -n prod -l team=data \\
    --waves 1,25%,100% --min-ready 5m --wait
  # The same across the namespaces labelled env=prod, in a window, once approved
  kudo rollout start cassandra-4 examples/cassandra-v1beta2 -n platform -l team=data \\
    --namespace-selector env=prod --window-schedule '0 22 * * 1-5' --window-duration 2h \\
    --window-time-zone Europe/Berlin --require-approval --dry-run
  kudo rollout status cassandra-4 -n prod
  kudo rollout approve cassandra-4 -n platform
  kudo rollout pause cassandra-4 -n prod
  kudo rollout resume cassandra-4 -n prod
  kudo rollout abort cassandra-4 -n prod --rollback
  kudo rollout list -A
";

pub const INIT: &str = "\
Examples:
  # Install kudo in the cluster, and wait until it answers
  kudo init --wait

  # Print the objects instead
  kudo init --dry-run -o yaml
";

pub const INSTALL: &str = "\
Examples:
  kudo install examples/cassandra-v1beta2 --instance cassandra -n prod \\
    -P examples/values/cassandra-v1beta2.yaml --wait
  kudo install examples/zookeeper-v1beta1 -p NODE_COUNT=5 --dry-run

  # The manager acts for the Instance as ServiceAccount team-a/deployer (made, and bound to
  # admin in team-a, with your credentials)
  kudo install examples/zookeeper-v1beta1 -n team-a --service-account deployer

  # In a new namespace (made with your rights when missing, as Helm's --create-namespace)
  kudo install examples/zookeeper-v1beta1 -n team-b --create-namespace

  # Only if the package (and each dependency) is signed by cosign.pub:
  #   kudo install oci://localhost:5000/kudo/zookeeper --plain-http --verify=cosign.pub
";

pub const DIFF: &str = "\
Examples:
  # What an update would do: values, plan, and each object's diff (exit 1: something changes)
  kudo diff --instance cassandra -n prod -p nodeCount=5

  # What an upgrade would do
  kudo diff examples/cassandra-v1beta2 --instance cassandra -n prod

  # As data, for a script or a review bot
  kudo diff --instance cassandra -n prod -P examples/values/cassandra-v1beta2.yaml -o json

  # Drift: what changed in the objects kudo applied since (exit 1: something drifted)
  kudo diff cassandra -n prod
";

pub const PATCH: &str = "\
Examples:
  # Append a datacenter (from the default topology when none was set)
  kudo patch cassandra -n prod --add 'topology/-={datacenterName: dc2, nodes: 3}' --wait

  # Add a label to the first datacenter (KEP-33's form: the pointer names the array)
  kudo patch cassandra -n prod --add 'topology/0/labels={key: Tier, value: gold}'

  # Insert a JVM option first; remove the second datacenter
  kudo patch cassandra -n prod --add 'jvm/extraOptions/0=-XX:+UseG1GC'
  kudo patch cassandra -n prod --remove topology/1 --dry-run
";

pub const UNINSTALL: &str = "\
Examples:
  kudo uninstall cassandra -n prod --wait

  # Also delete the operator's versions no Instance uses any more
  kudo uninstall cassandra -n prod --prune
";

pub const PLAN: &str = "\
Examples:
  kudo plan status cassandra -n prod
  kudo plan trigger cassandra --name backup-update -n prod

  # Replace a stuck plan (refused without --force while another plan runs)
  kudo plan trigger cassandra --name backup-update -n prod --force
";

pub const GET: &str = "\
Examples:
  kudo get instances -n prod
  kudo get operatorversions -n prod -o yaml

  # One Instance; every namespace's, with more columns
  kudo get instances cassandra -n prod -o yaml
  kudo get instances -A -o wide
";

pub const LIST: &str = "\
Examples:
  kudo list -n prod
  kudo list -A -o wide
";

pub const STATUS: &str = "\
Examples:
  kudo status cassandra -n prod
";

pub const ROLLBACK: &str = "\
Examples:
  # Back to the previous revision whose plan completed
  kudo rollback cassandra -n prod
  # Back to revision 1 (kudo history lists them), waiting for its plan
  kudo rollback cassandra 1 -n prod --wait
  # What it would do, written nowhere
  kudo rollback cassandra 1 -n prod --dry-run -o json
  kudo diff cassandra --revision 1 -n prod
";

pub const HISTORY: &str = "\
Examples:
  kudo history cassandra -n prod
  kudo history cassandra -n prod -o yaml
";

pub const VERSION: &str = "\
Examples:
  kudo version
  kudo version --client -o json
";

pub const COMPLETION: &str = "\
Examples:
  # bash: `source <(kudo completion bash)` in ~/.bashrc
  kudo completion bash
  # zsh: `source <(kudo completion zsh)` in ~/.zshrc
  kudo completion zsh
  # fish: `kudo completion fish | source` in ~/.config/fish/config.fish
  kudo completion fish
";

pub const MIGRATE: &str = "\
Examples:
  # What would be rewritten, nothing written
  kudo migrate --dry-run
  kudo migrate -o json
";

pub const REPO: &str = "\
Examples:
  # A repository from packages: create them, index the folder, serve it, add it
  kudo package create examples/cassandra-v1beta2 -d examples/repository --overwrite
  kudo repo index examples/repository --url http://127.0.0.1:8080
  kudo repo add local examples/repository
  kudo repo list
";

pub const REPO_ADD: &str = "\
Examples:
  kudo repo add local examples/repository
  kudo repo add staging https://operators.example.com/staging --skip-check

  # Its packages must be signed by the key (`--verify warn`: a warning instead)
  kudo repo add acme https://operators.example.com/acme --skip-check \\
    --key examples/signing/cosign.pub
";

pub const REPO_LIST: &str = "\
Examples:
  kudo repo list
  kudo repo list -o yaml
";

pub const REPO_REMOVE: &str = "\
Examples:
  kudo repo remove community
";

pub const REPO_CONTEXT: &str = "\
Examples:
  # Names are looked up in `community` unless --repo says otherwise
  kudo repo context community
";

pub const REPO_UPDATE: &str = "\
Examples:
  # Every repository's index, into the cache (then `kudo search` works offline)
  kudo repo update
  kudo repo update community
";

pub const REPO_INDEX: &str = "\
Examples:
  kudo repo index examples/repository --url https://operators.example.com/stable

  # Add the folder's packages to the index already published (the folder's entries win)
  kudo repo index examples/repository --merge examples/repository/index.yaml

  # Each entry signed (the key's password from $KUDO_PASSWORD, else asked)
  kudo repo index examples/repository --sign-key examples/signing/cosign.key
";

pub const SEARCH: &str = "\
Examples:
  kudo search kafka
  kudo search --all-versions
  kudo search zoo --repo community -o json
";

pub const PUSH: &str = "\
Examples:
  # A package directory (verified, archived as `kudo package create` does) to a registry on
  # this machine that speaks plain HTTP: oci://localhost:5000/kudo/cassandra:3.11.6_2.0.0
  kudo package push examples/cassandra-v1beta2 oci://localhost:5000/kudo --plain-http

  # An archive, to a registry you logged in to, the result as JSON
  #   kudo package create examples/cassandra-v1beta2
  #   kudo package push cassandra-3.11.6_2.0.0.tgz oci://ghcr.io/acme/kudo -o json
";

pub const PULL: &str = "\
Examples:
  # cassandra-3.11.6_2.0.0.tgz in the current directory
  kudo package pull oci://localhost:5000/kudo/cassandra:3.11.6_2.0.0 --plain-http
";

pub const REGISTRY: &str = "\
Examples:
  # The password (or token) from standard input, out of the shell's history:
  #   echo \"$GHCR_TOKEN\" | kudo registry login ghcr.io -u alice --password-stdin
  kudo registry login localhost:5000 -u alice --password-stdin --plain-http
  kudo registry logout localhost:5000
";

pub const SIGN: &str = "\
Examples:
  # A key pair once (`kudo package generate-key`), then sign what was pushed; the password
  # from $KUDO_PASSWORD (examples/signing's is `example`)
  kudo package push examples/zookeeper-v1beta1 oci://localhost:5000/kudo --plain-http
  kudo package sign oci://localhost:5000/kudo/zookeeper:3.6.2_0.4.0 \\
    --key examples/signing/cosign.key --plain-http

  # cosign 2's format (the tag sha256-DIGEST.sig), for verifiers that read only that
  kudo package sign oci://localhost:5000/kudo/zookeeper:3.6.2_0.4.0 --bundle-format legacy \\
    --key examples/signing/cosign.key --plain-http

  # cosign reads either (kudo writes no Rekor entry, so cosign is told not to ask one):
  #   cosign verify --key cosign.pub --insecure-ignore-tlog=true \\
  #     localhost:5000/kudo/zookeeper:3.6.2_0.4.0
";

pub const VERIFY_SIGNATURE: &str = "\
Examples:
  kudo package verify-signature oci://localhost:5000/kudo/zookeeper:3.6.2_0.4.0 \\
    --key examples/signing/cosign.pub --plain-http

  # Any of two keys (a rotation), the result as JSON
  kudo package verify-signature oci://ghcr.io/acme/kudo/kafka:2.5.1_1.3.2 \\
    --key old.pub --key new.pub -o json

  # Untagged: the newest 1.3.x tag, as `kudo install` picks it
  kudo package verify-signature oci://ghcr.io/acme/kudo/kafka --operator-version 1.3.x \\
    --key cosign.pub
";

pub const BUNDLE: &str = "\
Examples:
  # A package with its dependencies, images and signatures, from a registry on this machine
  kudo package bundle examples/zookeeper-v1beta1 -o zookeeper-bundle.tar --plain-http

  # Several packages, one from a registry; the summary as JSON
  kudo package bundle oci://localhost:5000/kudo/kafka:2.5.1_1.3.2 examples/cassandra-v1beta2 \\
    -o operators.tar --plain-http --output-format json

  # Then carry operators.tar across the air gap and `kudo package relocate` it
";

pub const RELOCATE: &str = "\
Examples:
  # Everything the archive holds, below oci://localhost:5000/mirror; the map is at
  # oci://localhost:5000/mirror/kudo-relocation:latest
  kudo package relocate operators.tar oci://localhost:5000/mirror --plain-http

  # To a registry you logged in to (`kudo registry login`), the result as JSON
  kudo package relocate operators.tar oci://registry.internal/kudo -o json
";

pub const GENERATE_KEY: &str = "\
Examples:
  # cosign.key and cosign.pub in the current folder; the password is asked twice
  kudo package generate-key

  # In a script: the password from the environment, the keys in ./keys
  KUDO_PASSWORD=\"$(cat pw)\" kudo package generate-key -d keys
";

pub const REGISTRY_TRUST: &str = "\
Examples:
  # Every package under ghcr.io/acme must be signed by the key
  kudo registry trust oci://ghcr.io/acme --verify required --key examples/signing/cosign.pub

  # A warning, not a refusal, for one path; what applies to a package (then undo it with
  # `kudo registry trust oci://localhost:5000/test --remove`)
  kudo registry trust oci://localhost:5000/test --verify warn --key examples/signing/cosign.pub
  kudo registry trust oci://localhost:5000/test/zookeeper
";

#[cfg(test)]
mod tests {
    #[test]
    fn example_lines_fit_so_that_help_never_wraps_them() {
        for text in [
            super::KUDO,
            super::TEMPLATE,
            super::PARAMS,
            super::PACKAGE,
            super::CONVERT,
            super::VERIFY,
            super::LIST_PARAMETERS,
            super::IMAGES,
            super::ADD_PARAMETER,
            super::CREATE,
            super::UPDATE,
            super::UPGRADE,
            super::INIT,
            super::INSTALL,
            super::UNINSTALL,
            super::PLAN,
            super::GET,
            super::LIST,
            super::STATUS,
            super::ROLLBACK,
            super::HISTORY,
            super::VERSION,
            super::COMPLETION,
            super::MIGRATE,
            super::PUSH,
            super::PULL,
            super::REGISTRY,
            super::SIGN,
            super::VERIFY_SIGNATURE,
            super::GENERATE_KEY,
            super::BUNDLE,
            super::RELOCATE,
            super::REGISTRY_TRUST,
            super::REPO,
            super::REPO_ADD,
            super::REPO_LIST,
            super::REPO_REMOVE,
            super::REPO_CONTEXT,
            super::REPO_UPDATE,
            super::REPO_INDEX,
            super::SEARCH,
        ] {
            assert!(text.starts_with("Examples:\n"), "{text}");
            for line in text.lines() {
                assert!(line.chars().count() <= 96, "too long for --help: {line}");
            }
        }
    }
}
