//! `kudo-pkg`: KUDO operator packages, on disk, in archives and in repositories.
//!
//! A package is `operator.yaml`, `params.yaml` and `templates/`. This crate loads one, renders
//! its plans (KUDO's Go templates with sprig, or Handlebars), checks it (`package verify`),
//! finds it in a repository, and serves the authoring and explaining commands. What its
//! parameters mean is the policy's (`kudo-policy`); [`Package::policy_version`] hands the policy
//! what it needs of a package. Pure: no Kubernetes client, no network, no async runtime.
//!
//! | module | what it decides | entry points |
//! |---|---|---|
//! | [`package`] | a package on disk or in a `.tgz` | [`Package`], [`TemplateEngine`], [`create_archive`] |
//! | [`instance`] | `kudo update -f` / `upgrade -f` on an Instance file, comments kept | [`instance::update`], [`instance::upgrade`] |
//! | [`render`] | a plan's templates (Handlebars, or KUDO's Go templates with sprig) as objects | [`render::render_plan`], [`render::render_task`], [`render::Prepared`] (templates parsed once, for repeated renders), [`render::stream`] |
//! | [`step`] | what a plan step does: its tasks, each resolved for the parameters (shared by the renderer and the manager) | [`step::tasks`], [`package::TaskKind`] |
//! | [`pipe`], [`dependency`] | KUDO's Pipe and KudoOperator tasks | [`pipe::PipeTask`], [`dependency::resolve`] |
//! | [`images`] | the container images a package's plans run, for given values (or each value of every finite domain), where each is used, and rewriting them in an object, and where each goes in a mirror | [`images::list`], [`images::uses`], [`images::rewrite`], [`images::relocated`] |
//! | [`repo`] | KUDO's repository `index.yaml`: its order, and the entry a name and a version (or a semver range) ask for | [`repo::Index`], [`repo::Want`], [`repo::file_name`] |
//! | [`preflight`] | the package side of the upgrade preflight: the CRDs a package's plans apply; one package against another, offline | [`preflight::crds`], [`preflight::against`] |
//! | [`verify`] | `package verify` | [`verify::verify`] |
//! | [`author`], [`listing`], [`explain`] | `package add parameter`; `package list parameters`; `kudo explain` | [`author::add_parameter`], [`listing::rows`], [`explain::explain`] |
//!
//! The crates under it, each one concept (docs/architecture.md draws the graph): `kudo-diag`
//! (problems and pointers), `kudo-yaml` (YAML as Go and Kubernetes read it), `kudo-k8s`
//! (structural schemas, removed API versions), `kudo-sprig` (sprig's functions) and
//! `kudo-policy` (the parameter policy).
// `Diagnostic` is the error value of the parameter APIs: it carries everything a user needs
// (pointer, rule, value, origin, help) and is built only when input is refused.
#![allow(clippy::result_large_err)]

// The library's namespaces: each module is one concept, named in paths (`render::render_plan`,
// `verify::verify`, `repo::Index`).
pub mod author;
pub mod dependency;
pub mod explain;
pub mod images;
pub mod instance;
pub mod listing;
pub mod package;
pub mod pipe;
pub mod preflight;
pub mod render;
pub mod repo;
pub mod step;
pub mod verify;

// Inner workings, reached through the entry points below.
mod archive;
#[cfg(test)]
mod fixtures;
mod gotemplate;

pub use archive::create as create_archive;
pub use package::{Package, Provenance, TemplateEngine};
