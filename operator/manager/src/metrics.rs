//! The manager's Prometheus metrics (served on `/metrics`).

use std::time::Instant;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ErrorLabels {
    error: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct PlanLabels {
    plan: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct PhaseLabels {
    phase: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ActionLabels {
    action: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct InstanceLabels {
    namespace: String,
    instance: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct PlanEndLabels {
    plan: String,
    status: String,
}

/// Reconciliations, failures, plans started and finished, status writes refused.
pub struct Metrics {
    registry: Registry,
    reconciliations: Counter,
    failures: Family<ErrorLabels, Counter>,
    duration: Histogram,
    started: Family<PlanLabels, Counter>,
    finished: Family<PlanEndLabels, Counter>,
    status_refused: Counter,
    revisions: Counter,
    remediations: Family<ActionLabels, Counter>,
    drift_detected: Counter,
    drift_corrected: Counter,
    drift_unchanged: Counter,
    drift_dry_runs: Counter,
    drifted_objects: Family<InstanceLabels, Gauge>,
    rollout_phases: Family<PhaseLabels, Counter>,
    rollout_members: Family<ActionLabels, Counter>,
}

impl Default for Metrics {
    fn default() -> Self {
        let mut registry = Registry::with_prefix("kudo_manager");
        let reconciliations = Counter::default();
        let failures = Family::<ErrorLabels, Counter>::default();
        let duration = Histogram::new([
            0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0,
        ]);
        let started = Family::<PlanLabels, Counter>::default();
        let finished = Family::<PlanEndLabels, Counter>::default();
        registry.register(
            "reconciliations",
            "Instance reconciliations",
            reconciliations.clone(),
        );
        registry.register(
            "reconcile_failures",
            "Reconciliations that failed, by error",
            failures.clone(),
        );
        registry.register(
            "reconcile_duration_seconds",
            "Time to reconcile an Instance",
            duration.clone(),
        );
        registry.register("plans_started", "Plans started, by plan", started.clone());
        registry.register(
            "plans_finished",
            "Plans that reached COMPLETE or FATAL_ERROR, by plan and status",
            finished.clone(),
        );
        let status_refused = Counter::default();
        registry.register(
            "status_refused",
            "Status writes the API server refused, replaced by a smaller status saying why",
            status_refused.clone(),
        );
        let revisions = Counter::default();
        registry.register(
            "revisions_recorded",
            "Revisions recorded (one per change whose plan ran)",
            revisions.clone(),
        );
        let remediations = Family::<ActionLabels, Counter>::default();
        registry.register(
            "remediations",
            "Remediation actions on failed plans, by action (retry, rollback, stopped)",
            remediations.clone(),
        );
        let drift_detected = Counter::default();
        registry.register(
            "drift_detected",
            "Objects found drifted from what kudo applied (each time a drift is first reported)",
            drift_detected.clone(),
        );
        let drift_corrected = Counter::default();
        registry.register(
            "drift_corrected",
            "Drifted or deleted objects applied again (spec.drift.mode correct)",
            drift_corrected.clone(),
        );
        let drift_unchanged = Counter::default();
        registry.register(
            "drift_unchanged",
            "Objects a drift check did not dry-run: their resourceVersion, read from a list shared by the Instances of their namespace, unchanged since a check found them holding what kudo applied",
            drift_unchanged.clone(),
        );
        let drift_dry_runs = Counter::default();
        registry.register(
            "drift_dry_runs",
            "Objects a drift check dry-run applied (changed since a check found them clean, or never checked)",
            drift_dry_runs.clone(),
        );
        let drifted_objects = Family::<InstanceLabels, Gauge>::default();
        registry.register(
            "drifted_objects",
            "Objects of an Instance drifted at its last drift check",
            drifted_objects.clone(),
        );
        let rollout_phases = Family::<PhaseLabels, Counter>::default();
        registry.register(
            "rollout_phases",
            "Rollouts that entered a phase, by phase (Progressing, Halted, Completed, ...)",
            rollout_phases.clone(),
        );
        let rollout_members = Family::<ActionLabels, Counter>::default();
        registry.register(
            "rollout_instances",
            "Instances a rollout upgraded, rolled back, or saw fail, by action",
            rollout_members.clone(),
        );
        Metrics {
            rollout_phases,
            rollout_members,
            revisions,
            remediations,
            drift_detected,
            drift_corrected,
            drift_unchanged,
            drift_dry_runs,
            drifted_objects,
            status_refused,
            registry,
            reconciliations,
            failures,
            duration,
            started,
            finished,
        }
    }
}

impl Metrics {
    /// A reconciliation that began at `started` ended.
    pub fn reconciled(&self, started: Instant) {
        self.reconciliations.inc();
        self.duration.observe(started.elapsed().as_secs_f64());
    }

    /// A reconciliation failed with the error labelled `error`.
    pub fn failed(&self, error: &str) {
        self.failures
            .get_or_create(&ErrorLabels {
                error: error.into(),
            })
            .inc();
    }

    /// `plan` started.
    pub fn plan_started(&self, plan: &str) {
        self.started
            .get_or_create(&PlanLabels { plan: plan.into() })
            .inc();
    }

    /// `plan` ended with `status`.
    pub fn plan_finished(&self, plan: &str, status: &str) {
        self.finished
            .get_or_create(&PlanEndLabels {
                plan: plan.into(),
                status: status.into(),
            })
            .inc();
    }

    /// The API server refused a status write.
    pub fn status_refused(&self) {
        self.status_refused.inc();
    }

    /// A rollout entered `phase`.
    pub fn rollout_phase(&self, phase: &str) {
        self.rollout_phases
            .get_or_create(&PhaseLabels {
                phase: phase.into(),
            })
            .inc();
    }

    /// A rollout did `action` to an Instance (`upgraded`, `failed`, `rolled_back`,
    /// `rollback_refused`).
    pub fn rollout_instance(&self, action: &str) {
        self.rollout_members
            .get_or_create(&ActionLabels {
                action: action.into(),
            })
            .inc();
    }

    /// A revision was recorded.
    pub fn revision_recorded(&self) {
        self.revisions.inc();
    }

    /// Remediation took `action` (`retry`, `rollback`, `stopped`).
    pub fn remediated(&self, action: &str) {
        self.remediations
            .get_or_create(&ActionLabels {
                action: action.into(),
            })
            .inc();
    }

    /// A drift check found `n` objects unchanged (no dry run).
    pub fn drift_unchanged(&self, n: usize) {
        self.drift_unchanged.inc_by(n as u64);
    }

    /// A drift check dry-runs an object.
    pub fn drift_dry_run(&self) {
        self.drift_dry_runs.inc();
    }

    /// A drift check of Instance `namespace/instance` found `drifted` objects drifted, `new`
    /// of them not reported before.
    pub fn drift_checked(&self, namespace: &str, instance: &str, drifted: usize, new: usize) {
        let labels = InstanceLabels {
            namespace: namespace.into(),
            instance: instance.into(),
        };
        self.drifted_objects
            .get_or_create(&labels)
            .set(i64::try_from(drifted).unwrap_or(i64::MAX));
        self.drift_detected.inc_by(new as u64);
    }

    /// `n` drifted objects were applied again.
    pub fn drift_corrected(&self, n: usize) {
        self.drift_corrected.inc_by(n as u64);
    }

    /// Publishes the gauge of shards held and the counter of shards taken (`--shards`).
    pub(crate) fn register_shards(&mut self, held: Gauge, taken: Counter) {
        self.registry.register(
            "shards_held",
            "Shards whose Lease this replica holds (--shards)",
            held,
        );
        self.registry.register(
            "shards_taken",
            "Shards this replica took: at start, from a replica that died or handed one over",
            taken,
        );
    }

    /// The metrics in Prometheus' text format.
    pub fn encode(&self) -> String {
        let mut out = String::new();
        let _ = prometheus_client::encoding::text::encode(&mut out, &self.registry);
        out
    }
}
