//! Dynamic shell completion: names completed from the cluster while you type.
//!
//! `kudo completion SHELL` prints the registration script of clap_complete's dynamic engine
//! (what `COMPLETE=SHELL kudo` prints): the shell then calls `kudo` itself at each TAB, with
//! `COMPLETE` set and the words typed so far after `--`, and `main` answers with the candidates
//! ([`clap_complete::CompleteEnv`]) before anything else runs. Subcommands, flags and value
//! enums are completed from the command line's definition; the completers here add what only
//! the cluster knows:
//!
//! - Instance names: the NAME and `--instance` of `uninstall`, `update`, `upgrade`, `patch`,
//!   `diff`, `plan status`, `plan trigger`, `status` and `rollback`, and the NAME of
//!   `get instances` (of `get operators` and `get operatorversions`: their names);
//! - plan names: the `--name` of `plan trigger`, the plans of the Instance's OperatorVersion
//!   (without an Instance yet, the plans of every OperatorVersion of the namespace);
//! - namespaces: the `-n/--namespace` of the cluster commands.
//!
//! The cluster is the one the command would talk to: the `--kubeconfig`, `--context` and
//! `-n/--namespace` already on the command line are read from the typed words (clap's
//! completers see only the word being completed, so the words are parsed again here),
//! else `$KUBECONFIG` or `~/.kube/config` and the context's namespace. Completion must never
//! get in the way of typing: every lookup runs on a current-thread runtime with [`TIMEOUT`]
//! for the whole of it, and any error (no kubeconfig, an unreachable cluster, no kudo CRDs,
//! forbidden, too slow, even a panic) gives no candidates and prints nothing.

use std::collections::BTreeSet;
use std::ffi::{OsStr, OsString};
use std::time::Duration;

use clap_complete::engine::{ArgValueCompleter, CompletionCandidate};
use kube::api::{Api, ApiResource, DynamicObject, ListParams};
use serde_json::Value;

/// How long a completion may wait for the cluster, connecting included.
pub const TIMEOUT: Duration = Duration::from_secs(2);

/// Makes kudo's command line (`args::Cli`'s), which the completers parse the words typed so
/// far with; the arguments module passes it in, so that this one does not depend on it.
pub type CommandLine = fn() -> clap::Command;

/// Completes an Instance name (for `get`: the name of the kind it lists).
pub fn instances(cli: CommandLine) -> ArgValueCompleter {
    ArgValueCompleter::new(move |current: &OsStr| complete(current, Lookup::Names, cli))
}

/// Completes a plan name of `plan trigger --name`.
pub fn plans(cli: CommandLine) -> ArgValueCompleter {
    ArgValueCompleter::new(move |current: &OsStr| complete(current, Lookup::Plans, cli))
}

/// Completes a namespace.
pub fn namespaces(cli: CommandLine) -> ArgValueCompleter {
    ArgValueCompleter::new(move |current: &OsStr| complete(current, Lookup::Namespaces, cli))
}

/// What a completer looks up.
#[derive(Clone, Copy)]
enum Lookup {
    Names,
    Plans,
    Namespaces,
}

/// The candidates of `lookup` that start with `current`, sorted; none on any error.
fn complete(current: &OsStr, lookup: Lookup, cli: CommandLine) -> Vec<CompletionCandidate> {
    let Some(current) = current.to_str() else {
        return Vec::new();
    };
    let typed = Typed::from_words(cli(), &words());
    let names = std::panic::catch_unwind(|| lookup_names(&typed, lookup))
        .ok()
        .flatten()
        .unwrap_or_default();
    matching(names, current)
}

/// The names that start with `current`, as candidates.
fn matching(names: impl IntoIterator<Item = String>, current: &str) -> Vec<CompletionCandidate> {
    names
        .into_iter()
        .filter(|n| n.starts_with(current))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .map(CompletionCandidate::new)
        .collect()
}

/// The words the shell passed (the command line being completed): what follows the first
/// `--` of this process's arguments (`kudo -- kudo plan trigger --name ''`).
fn words() -> Vec<OsString> {
    std::env::args_os()
        .skip(1)
        .skip_while(|a| a != "--")
        .skip(1)
        .collect()
}

/// What the command line being completed already says.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Typed {
    pub(crate) kubeconfig: Option<std::path::PathBuf>,
    pub(crate) context: Option<String>,
    pub(crate) namespace: Option<String>,
    /// NAME or --instance.
    pub(crate) instance: Option<String>,
    /// `kudo get`'s kind (`instances`, `operators`, `operatorversions`).
    pub(crate) what: Option<String>,
}

impl Typed {
    /// Parses `words` (the program's name first) as kudo's command line, forgiving what is
    /// missing or wrong; an empty value counts as not given (the word being completed).
    pub(crate) fn from_words(cli: clap::Command, words: &[OsString]) -> Typed {
        let Ok(mut m) = cli.ignore_errors(true).try_get_matches_from(words) else {
            return Typed::default();
        };
        let mut leaf = String::new();
        while let Some((name, sub)) = m.subcommand() {
            leaf = name.to_string();
            m = sub.clone();
        }
        // `patch`, `rollback` and `history` call their positional NAME `name`; `plan trigger`'s --name
        // is the plan
        let named = matches!(leaf.as_str(), "patch" | "rollback" | "history");
        let one = |id: &str| -> Option<String> {
            let mut values = m.try_get_raw(id).ok().flatten()?;
            let v = values.next()?.to_str()?;
            (!v.is_empty()).then(|| v.to_string())
        };
        Typed {
            kubeconfig: one("kubeconfig").map(Into::into),
            context: one("context"),
            namespace: one("namespace"),
            instance: one("instance_name")
                .or_else(|| one("instance"))
                .or_else(|| one("name").filter(|_| named)),
            what: one("what"),
        }
    }
}

/// Looks `lookup` up in the cluster, within [`TIMEOUT`]; `None` on any error.
fn lookup_names(typed: &Typed, lookup: Lookup) -> Option<Vec<String>> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .ok()?;
    runtime.block_on(async {
        tokio::time::timeout(TIMEOUT, query(typed, lookup))
            .await
            .ok()?
    })
}

async fn query(typed: &Typed, lookup: Lookup) -> Option<Vec<String>> {
    use kudo_crd::v1beta2::{Instance, Operator, OperatorVersion};
    let client = kudo_cluster::client(typed.kubeconfig.as_deref(), typed.context.as_deref())
        .await
        .ok()?;
    let namespace = typed
        .namespace
        .clone()
        .unwrap_or_else(|| client.default_namespace().to_string());
    match lookup {
        Lookup::Namespaces => {
            let api: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(client);
            names(api).await
        }
        Lookup::Names => match typed.what.as_deref() {
            Some("operators") => names(Api::<Operator>::namespaced(client, &namespace)).await,
            Some("operatorversions") => {
                names(Api::<OperatorVersion>::namespaced(client, &namespace)).await
            }
            _ => names(Api::<Instance>::namespaced(client, &namespace)).await,
        },
        Lookup::Plans => {
            let dynamic = |r: ApiResource| {
                Api::<DynamicObject>::namespaced_with(client.clone(), &namespace, &r)
            };
            let instances = dynamic(ApiResource::erase::<Instance>(&()));
            let versions = dynamic(ApiResource::erase::<OperatorVersion>(&()));
            let ov = match &typed.instance {
                Some(name) => Some(operator_version_of(&instances.get(name).await.ok()?.data)?),
                None => None,
            };
            let objects = match ov {
                Some(ov) => vec![versions.get(&ov).await.ok()?],
                None => versions.list(&ListParams::default()).await.ok()?.items,
            };
            Some(objects.iter().flat_map(|o| plans_of(&o.data)).collect())
        }
    }
}

/// The names of the objects `api` lists (metadata only).
async fn names<K>(api: Api<K>) -> Option<Vec<String>>
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    let list = api.list_metadata(&ListParams::default()).await.ok()?;
    Some(
        list.items
            .into_iter()
            .filter_map(|o| o.metadata.name)
            .collect(),
    )
}

/// The OperatorVersion an Instance (as JSON) runs: `spec.operatorVersion.name`.
fn operator_version_of(instance: &Value) -> Option<String> {
    instance["spec"]["operatorVersion"]["name"]
        .as_str()
        .map(String::from)
}

/// The plan names of an OperatorVersion (as JSON): the keys of `spec.plans`.
fn plans_of(operator_version: &Value) -> Vec<String> {
    operator_version["spec"]["plans"]
        .as_object()
        .map(|plans| plans.keys().cloned().collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn plan_names_are_the_keys_of_spec_plans() {
        let ov = json!({
            "metadata": {"name": "kafka-1.0.0"},
            "spec": {"plans": {"deploy": {"strategy": "serial"}, "backup": {}, "update": {}}}
        });
        assert_eq!(plans_of(&ov), ["deploy", "backup", "update"]);
        assert!(plans_of(&json!({"spec": {}})).is_empty());
        assert!(plans_of(&json!({"spec": {"plans": []}})).is_empty());
        let inst = json!({"spec": {"operatorVersion": {"name": "kafka-1.0.0"}}});
        assert_eq!(operator_version_of(&inst).as_deref(), Some("kafka-1.0.0"));
        assert_eq!(operator_version_of(&json!({"spec": {}})), None);
    }

    #[test]
    fn candidates_start_with_the_word_once_each_sorted() {
        let names = ["deploy", "backup", "debug", "deploy"].map(String::from);
        let got: Vec<_> = matching(names, "de")
            .iter()
            .map(|c| c.get_value().to_string_lossy().into_owned())
            .collect();
        assert_eq!(got, ["debug", "deploy"]);
    }
}
