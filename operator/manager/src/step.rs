//! A step being run ([`StepRun`]: where it is in its plan, for which Instance, with whose
//! rights) and how it ended this time round ([`Outcome`]). An object's [`Health`] becomes an
//! outcome in one place ([`Outcome::of_health`]), and so does what the API server refused
//! ([`Failure`]).

use kube::ResourceExt;
use kudo_diag::Diagnostic;
use kudo_pkg::render::{Prepared, RenderOptions};
use kudo_policy::values::Redacted;
use serde_json::Value;

use crate::health::Health;
use crate::objects::{Failure, Notes, Objects};
use crate::tenant::Tenant;
use kudo_crd::common::ExecStatus;
use kudo_crd::v1beta2::Instance;

/// How a step ended this time round.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Every task done, every applied object healthy.
    Done,
    /// Applied, but an object is not healthy yet.
    Waiting(String),
    /// Failed; worth retrying (the API server was unreachable, a kind is not known yet...).
    Retry(String),
    /// Failed for good (an invalid object, a failed Job, a template that does not render).
    Fatal(String),
    /// RBAC refused the identity the manager acts with for the Instance
    /// ([`crate::tenant`]): retried for a grace period (a RoleBinding just made may take a
    /// moment to reach the API server's authorizer), then failed for good.
    Forbidden(String),
}

impl Outcome {
    /// What the health of the object `what` (`Deployment app`) makes of its step: a healthy
    /// object is done, one that progresses waits, a failed one fails the step for good.
    pub fn of_health(health: Health, what: &str) -> Outcome {
        match health {
            Health::Healthy => Outcome::Done,
            Health::Progressing(why) => Outcome::Waiting(format!("{what}: {why}")),
            Health::Failed(why) => Outcome::Fatal(format!("{what}: {why}")),
        }
    }

    /// The step's status and message: done is COMPLETE, waiting IN_PROGRESS, a failure worth
    /// retrying ERROR, a fatal one FATAL_ERROR; a refusal by RBAC is ERROR until it has lasted
    /// too long (`refused_too_long`), then FATAL_ERROR.
    pub fn status(self, refused_too_long: bool) -> (ExecStatus, Option<String>) {
        match self {
            Outcome::Done => (ExecStatus::Complete, None),
            Outcome::Waiting(m) => (ExecStatus::InProgress, Some(m)),
            Outcome::Retry(m) => (ExecStatus::Error, Some(m)),
            Outcome::Fatal(m) => (ExecStatus::FatalError, Some(m)),
            Outcome::Forbidden(m) if refused_too_long => (ExecStatus::FatalError, Some(m)),
            Outcome::Forbidden(m) => (ExecStatus::Error, Some(m)),
        }
    }

    /// `Ok` when done (the step goes on), else the outcome that ends it this time round.
    pub fn done(self) -> Result<(), Outcome> {
        match self {
            Outcome::Done => Ok(()),
            other => Err(other),
        }
    }

    /// Templates that do not render, or render what cannot be used: fatal, naming each problem.
    pub fn invalid(d: &[Diagnostic]) -> Outcome {
        Outcome::Fatal(diagnostics(d))
    }
}

impl From<Failure> for Outcome {
    fn from(f: Failure) -> Outcome {
        match f {
            Failure::Unavailable(m) => Outcome::Retry(m),
            Failure::Invalid(m) => Outcome::Fatal(m),
            Failure::Forbidden(m) => Outcome::Forbidden(m),
        }
    }
}

/// Diagnostics as one message: `a; b`.
pub fn diagnostics(d: &[Diagnostic]) -> String {
    d.iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

/// Where in a plan a step is.
#[derive(Debug, Clone, Copy)]
pub struct StepRef<'a> {
    /// The plan.
    pub plan: &'a str,
    /// The phase.
    pub phase: &'a str,
    /// The step.
    pub step: &'a str,
}

impl StepRef<'_> {
    /// How the step's templates are rendered for `inst`.
    pub fn render_options(&self, inst: &Instance) -> RenderOptions {
        RenderOptions {
            instance: inst.name_any(),
            namespace: inst.namespace().unwrap_or_default(),
            plan: self.plan.into(),
            images: kudo_crd::labels::image_pins(inst.metadata.annotations.as_ref()),
        }
    }

    /// `obj` with the labels and annotations that tie it to `inst` (of `pkg`) and to
    /// where the plan applied it ([`kudo_crd::applied::labelled`]).
    pub fn labelled(&self, obj: Value, inst: &Instance, pkg: &kudo_pkg::Package) -> Value {
        let at = kudo_crd::applied::At {
            plan: self.plan,
            phase: self.phase,
            step: self.step,
        };
        kudo_crd::applied::labelled(obj, inst, &pkg.operator().name, &pkg.version(), at)
    }
}

/// A step being run: where its objects go and with whose rights, the Instance, its package,
/// the effective parameters, and where in the plan the step is. Every kind of task runs with
/// one.
#[derive(Clone, Copy)]
pub struct StepRun<'a> {
    /// The objects' API.
    pub objects: &'a Objects,
    /// The identity the step acts with ([`crate::tenant`]).
    pub tenant: &'a Tenant,
    /// The Instance.
    pub inst: &'a Instance,
    /// Its OperatorVersion's package, prepared for rendering.
    pub prepared: &'a Prepared<'a>,
    /// The effective parameters the plan runs with.
    pub params: &'a Value,
    /// Where the step is.
    pub at: StepRef<'a>,
    /// What the step notes for its plan's status.
    pub notes: &'a Notes,
    /// How many times a Pipe Pod's init container may fail before the step fails
    /// (`Settings::pipe_max_restarts`).
    pub pipe_max_restarts: i64,
    /// The run restores a revision ([`kudo_crd::revision::restoring`]): a StatefulSet that
    /// waits gets its forced rollback ([`crate::forced_rollback`]).
    pub restoring: bool,
    /// What the step applied, as the API server stored it, for drift's first check
    /// ([`crate::drift::applying`]).
    pub applied: &'a Applied,
}

/// The objects a round's steps applied: each one's key and what kudo saw of it
/// ([`crate::context::Context::drift_seed`]).
pub type Applied = std::sync::Mutex<Vec<(String, crate::context::Known)>>;

impl StepRun<'_> {
    /// How the step's templates are rendered.
    pub fn render_options(&self) -> RenderOptions {
        self.at.render_options(self.inst)
    }

    /// Applies `obj`, [labelled](StepRef::labelled) for the Instance and the step, with the
    /// step's identity; what the API server stored.
    pub async fn apply(&self, obj: Value) -> Result<Value, Failure> {
        let obj = self.at.labelled(obj, self.inst, self.prepared.package());
        let seen = crate::drift::applying(&obj, self.inst);
        let stored = self
            .objects
            .apply(self.tenant, obj, self.inst, self.notes)
            .await?;
        if let Some(seen) = seen.stored(&stored)
            && let Ok(mut applied) = self.applied.lock()
        {
            applied.push(seen);
        }
        Ok(stored)
    }

    /// What masks the Instance's `writeOnly` values in a message (container logs, say).
    pub fn redacted(&self) -> Redacted {
        Redacted::new(self.prepared.package().schema(), self.params)
    }

    /// Deletes `obj` with the step's identity (already gone is fine).
    pub async fn delete(&self, obj: &Value) -> Result<(), Failure> {
        self.objects.delete(self.tenant, obj, self.inst).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn health_becomes_an_outcome_naming_the_object() {
        let cases = [
            (Health::Healthy, Outcome::Done),
            (
                Health::Progressing("1 of 3 replicas available".into()),
                Outcome::Waiting("Deployment app: 1 of 3 replicas available".into()),
            ),
            (
                Health::Failed("job failed".into()),
                Outcome::Fatal("Deployment app: job failed".into()),
            ),
        ];
        for (health, want) in cases {
            let input = format!("{health:?}");
            assert_eq!(
                Outcome::of_health(health, "Deployment app"),
                want,
                "{input}"
            );
        }
    }
}
