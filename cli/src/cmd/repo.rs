//! `kudo repo add|list|remove|context|update|index` and `kudo search`: the configuration and
//! cache of `kudo_source::repo`, and the index model of `kudo_pkg::repo`.

use std::path::Path;

use kudo_pkg::repo::{Entry, Index};
use serde_json::json;

use super::Outcome;
use crate::args::{
    DataFormat, RepoAddArgs, RepoCommand, RepoContextArgs, RepoIndexArgs, RepoListArgs,
    RepoRemoveArgs, RepoUpdateArgs, SearchArgs,
};
use crate::error::{Error, Refusal};
use kudo_source::repo::{Home, Repositories, Repository, Resolver, Source};

pub fn run(c: RepoCommand) -> Result<Outcome, Error> {
    match c {
        RepoCommand::Add(a) => add(a),
        RepoCommand::List(a) => list(a),
        RepoCommand::Remove(a) => remove(a),
        RepoCommand::Context(a) => context(a),
        RepoCommand::Update(a) => update(a),
        RepoCommand::Index(a) => index(a),
    }
}

fn load(home: &Home) -> Result<Repositories, Error> {
    Repositories::load(home).map_err(|e| Error::from(e).about(home.config.display()))
}

fn save(home: &Home, config: &Repositories) -> Result<(), Error> {
    config
        .save(home)
        .map_err(|e| Error::from(e).about(home.config.display()))
}

/// Refuses a repository name that is not configured.
fn known(config: &Repositories, name: &str) -> Result<(), Error> {
    match config.get(name) {
        Some(_) => Ok(()),
        None => Err(Error::refused(
            name,
            Refusal::NoRepository {
                nothing_removed: false,
            },
        )),
    }
}

/// A repository URL as kept: a local folder becomes an absolute `file://` URL (it is read
/// from wherever kudo runs later).
fn url_of(given: &str) -> Result<String, Error> {
    if given.contains("://") {
        return Ok(given.trim_end_matches('/').to_string());
    }
    let path = Path::new(given);
    let abs = path.canonicalize().map_err(Error::io(path))?;
    Ok(format!("file://{}", abs.display()))
}

fn add(a: RepoAddArgs) -> Result<Outcome, Error> {
    let home = Home::from_env()?;
    let mut config = load(&home)?;
    if let Some(r) = config.get(&a.name) {
        return Err(Error::refused(
            &a.name,
            Refusal::RepositoryExists {
                name: a.name.clone(),
                url: r.url.clone(),
            },
        ));
    }
    let (verify, keys) = super::sign::policy_of(&a.trust)?;
    let repo = Repository {
        name: a.name.clone(),
        url: url_of(&a.url)?,
        verify,
        keys,
    };
    let mut entries = None;
    if !a.skip_check {
        let resolver = Resolver::new(home.clone(), Source::default());
        let index = resolver
            .download_index(&repo)
            .map_err(|e| Error::refused(&a.url, Refusal::IndexUnread(Box::new(e))))?;
        entries = Some(index.entries.values().map(Vec::len).sum::<usize>());
    }
    config.repositories.push(repo.clone());
    save(&home, &config)?;
    match entries {
        Some(n) => eprintln!(
            "repository {} added ({}, {n} packages)",
            repo.name, repo.url
        ),
        None => eprintln!("repository {} added ({}, not read)", repo.name, repo.url),
    }
    Ok(Outcome::Done)
}

fn list(a: RepoListArgs) -> Result<Outcome, Error> {
    let config = load(&Home::from_env()?)?;
    let text = match a.output {
        Some(DataFormat::Json) => format!(
            "{}\n",
            serde_json::to_string_pretty(&config).unwrap_or_default()
        ),
        Some(DataFormat::Yaml) => {
            super::to_yaml(&serde_json::to_value(&config).unwrap_or_default())
        }
        None => super::table(
            &["", "NAME", "URL", "VERIFY"],
            &config
                .repositories
                .iter()
                .map(|r| {
                    let mark = if r.name == config.context { "*" } else { "" };
                    vec![
                        mark.to_string(),
                        r.name.clone(),
                        r.url.clone(),
                        r.verify.as_str().to_string(),
                    ]
                })
                .collect::<Vec<_>>(),
        ),
    };
    super::print(&text)?;
    Ok(Outcome::Done)
}

fn remove(a: RepoRemoveArgs) -> Result<Outcome, Error> {
    let home = Home::from_env()?;
    let mut config = load(&home)?;
    if let Some(missing) = a.names.iter().find(|n| config.get(n).is_none()) {
        return Err(Error::refused(
            missing,
            Refusal::NoRepository {
                nothing_removed: true,
            },
        ));
    }
    config.repositories.retain(|r| !a.names.contains(&r.name));
    save(&home, &config)?;
    for name in &a.names {
        home.forget_index(name);
        eprintln!("repository {name} removed");
    }
    if a.names.contains(&config.context) {
        eprintln!(
            "warning: {} was the default repository: set another with `kudo repo context NAME`",
            config.context
        );
    }
    Ok(Outcome::Done)
}

fn context(a: RepoContextArgs) -> Result<Outcome, Error> {
    let home = Home::from_env()?;
    let mut config = load(&home)?;
    known(&config, &a.name)?;
    config.context = a.name.clone();
    save(&home, &config)?;
    eprintln!("names are now looked up in repository {}", a.name);
    Ok(Outcome::Done)
}

/// `repo update`: every repository it can, as `helm repo update` (Helm 3): a failed one is a
/// warning and keeps its cached index; an error (exit 1) only when none could be updated.
fn update(a: RepoUpdateArgs) -> Result<Outcome, Error> {
    let home = Home::from_env()?;
    let config = load(&home)?;
    for name in &a.names {
        known(&config, name)?;
    }
    let resolver = Resolver::new(home.clone(), Source::default());
    let mut updated = 0;
    for repo in config
        .repositories
        .iter()
        .filter(|r| a.names.is_empty() || a.names.contains(&r.name))
    {
        match resolver.download_index(repo) {
            Ok(index) => {
                updated += 1;
                eprintln!(
                    "{}: {} operators, {} packages",
                    repo.name,
                    index.entries.len(),
                    index.entries.values().map(Vec::len).sum::<usize>()
                )
            }
            Err(e) => {
                let kept = if home.index_file(repo).is_file() {
                    "its cached index is kept"
                } else {
                    "it has no cached index"
                };
                eprintln!("warning: {}: not updated ({kept}): {e}", repo.name)
            }
        }
    }
    if updated == 0 {
        return Err(Error::refused(
            "repo update",
            Refusal::NoRepositoryAnswered("updated"),
        ));
    }
    Ok(Outcome::Done)
}

fn index(a: RepoIndexArgs) -> Result<Outcome, Error> {
    if !a.dir.is_dir() {
        return Err(Error::refused(a.dir.display(), Refusal::NotADirectory));
    }
    let merge = match &a.merge {
        Some(file) => {
            let text = std::fs::read_to_string(file).map_err(Error::io(file))?;
            Some(Index::parse(&text).map_err(|e| Error::Index(e).about(file.display()))?)
        }
        None => None,
    };
    let (mut index, warnings) =
        kudo_pkg::repo::index_dir(&a.dir, a.url.as_deref(), Some(now_rfc3339()))
            .map_err(Error::io(&a.dir))?;
    for w in &warnings {
        eprintln!("warning: {w}");
    }
    let local: usize = index.entries.values().map(Vec::len).sum();
    if local == 0 && merge.is_none() {
        return Err(Error::refused(a.dir.display(), Refusal::NoPackages));
    }
    let merged = merge.as_ref().map(|m| index.merge(m)).unwrap_or(0);
    if let Some(path) = &a.sign_key {
        let key = super::sign::signing_key(path)?;
        let signed = kudo_source::trust::sign_index(&mut index, &key)?;
        eprintln!(
            "signed {signed} entries with {} ({})",
            path.display(),
            key.fingerprint
        );
    }
    let target = a.dir.join("index.yaml");
    super::write_atomic(&target, &index.to_yaml())?;
    super::print(&format!("{}\n", target.display()))?;
    if a.merge.is_some() {
        eprintln!("indexed {local} packages, {merged} more kept from the merged index");
    } else {
        eprintln!("indexed {local} packages");
    }
    Ok(Outcome::Done)
}

/// Now, as RFC 3339 in UTC, to the second (`generated` of an index, as KUDO writes it).
fn now_rfc3339() -> String {
    jiff::Timestamp::now()
        .round(jiff::Unit::Second)
        .map(|t| t.to_string())
        .unwrap_or_default()
}

/// `search`: each repository's cached index, else its index downloaded (and cached). As `helm
/// search repo`, a repository that cannot be read is a warning and the others are searched; an
/// error (exit 1) only when none could be.
pub fn search(a: SearchArgs) -> Result<Outcome, Error> {
    let home = Home::from_env()?;
    let config = load(&home)?;
    if let Some(name) = &a.repo {
        known(&config, name)?;
    }
    let resolver = Resolver::new(home, Source::default());
    let term = a.term.clone().unwrap_or_default();
    let mut hits: Vec<(String, Entry)> = Vec::new();
    let mut searched = 0;
    for repo in config
        .repositories
        .iter()
        .filter(|r| a.repo.as_ref().is_none_or(|n| *n == r.name))
    {
        match resolver.index(repo, false) {
            Ok((index, _)) => {
                searched += 1;
                hits.extend(
                    index
                        .search(&term, a.all_versions)
                        .into_iter()
                        .map(|e| (repo.name.clone(), e.clone())),
                )
            }
            Err(e) => eprintln!(
                "warning: {}: not searched: no cached index, and it cannot be downloaded \
                 (`kudo repo update {}` once it is reachable): {e}",
                repo.name, repo.name
            ),
        }
    }
    if searched == 0 {
        return Err(Error::refused(
            "search",
            Refusal::NoRepositoryAnswered("searched"),
        ));
    }
    let text = match a.output {
        Some(f) => {
            let items: Vec<serde_json::Value> = hits
                .iter()
                .map(|(repo, e)| {
                    let mut v = serde_json::to_value(e).unwrap_or_default();
                    v["repository"] = json!(repo);
                    v
                })
                .collect();
            match f {
                DataFormat::Json => format!(
                    "{}\n",
                    serde_json::to_string_pretty(&items).unwrap_or_default()
                ),
                DataFormat::Yaml => super::to_yaml(&json!(items)),
            }
        }
        None if hits.is_empty() => {
            eprintln!("no operator found");
            String::new()
        }
        None => super::table(
            &[
                "NAME",
                "OPERATOR VERSION",
                "APP VERSION",
                "REPOSITORY",
                "DESCRIPTION",
            ],
            &hits
                .iter()
                .map(|(repo, e)| {
                    vec![
                        e.name.clone(),
                        e.operator_version.clone(),
                        e.app_version.clone().unwrap_or_default(),
                        repo.clone(),
                        e.description.clone().unwrap_or_default(),
                    ]
                })
                .collect::<Vec<_>>(),
        ),
    };
    super::print(&text)?;
    Ok(Outcome::Done)
}
