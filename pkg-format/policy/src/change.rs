//! `change`: the one policy that decides whether an Instance may be installed, updated,
//! upgraded or rewritten, what it then stores, and which plan runs.
//!
//! The CLI (`kudo install`, `kudo update`, `kudo upgrade`, on a file or in a cluster), the
//! admission webhook and the manager call these functions and nothing else, so they cannot
//! disagree. Each function takes what it decides on as data: the installed [`Version`] and
//! values ([`Installed`]), the new version, and the new values as a [`Proposal`] (`-P`/`-p`
//! inputs, or the complete `spec.parameters` a client sent). It returns a [`Decision`] (the
//! values to store, the effective values, the plan, the changes, the migration report) or every
//! problem at once.
//!
//! # Rules
//!
//! | rule | where | code when refused |
//! |---|---|---|
//! | values are compared after both sides are typed by their schema: `"7"` and `7` are the same value for an integer, so a change of representation is never a change | all | |
//! | an install runs `deploy`; an operator without one cannot be installed | [`install`] | `unknown-plan` |
//! | an update runs the plan of its changes ([`crate::trigger`]); two plans at once are refused | [`update`] | `trigger-conflict` |
//! | no value under an `immutable` node changes, is added or is removed after install | [`update`], [`upgrade`] | `immutable-changed` |
//! | an update with no change (a rewrite: `kudo migrate`, the manager's own writes) is always allowed and runs no plan | [`update`] | |
//! | an upgrade runs `upgrade`, else `update`, else `deploy` of the new version | [`upgrade`] | `unknown-plan` |
//! | changes given with an upgrade are allowed only when the plan they trigger in the new version is `deploy`; a value the new version removes is no change | [`upgrade`] | `upgrade-with-change` |
//! | a parameter that becomes immutable, or a new immutable one, without a default must be given a value with the upgrade, and giving it one is allowed | [`upgrade`] | `immutable-unset` |
//! | while the Instance is being deleted, no parameter change and no upgrade | [`update`], [`upgrade`] | `deleting` |
//! | while a plan is scheduled or running, a change that runs another plan is refused, a change that runs the same plan restarts it, and an upgrade is refused | [`update`], [`upgrade`] | `plan-in-progress` |
//! | `--reset POINTER` removes a value the user set, so its default applies again; a change of the effective value follows the rules above (an immutable value that differs from its default cannot be reset) | [`Proposal::Edits`] | `unknown-parameter` |
//! | a direct trigger (`kudo plan trigger`, a new `spec.planExecution`) names a plan of the operator, and is refused while the Instance is being deleted, while another plan is scheduled or running (triggering the running plan restarts it), and together with a change that runs a plan of its own; `--force` (the write names the run in `kudo.dev/supersede`) lifts the `plan-in-progress` rule only | [`trigger_plan`], [`with_trigger`] | `unknown-plan`, `deleting`, `plan-in-progress`, `trigger-conflict` |
//!
//! | a parameter the version does not declare is refused, unless the write keeps it: a `kudo.dev/v1beta1` write keeps any (KUDO accepted and ignored them), every write keeps one the Instance already holds unchanged; a kept one is stored, warned about, and ignored by every rule and plan | [`set_aside`], [`declared`] | `unknown-parameter` |
//!
//! These are KUDO's admission rules where KEP-33 is silent. Where kudo is stricter than KUDO
//! (an immutable value may not be removed, nor changed during an upgrade), docs/extensions.md
//! says why.

use serde_json::{Map, Value};

use crate::old_name::{self, Report};
use crate::params::ParamSchema;
use crate::preflight::{self, Allow};
use crate::trigger::{self, Selection};
use crate::values::{self, Inputs, Override, Reset, Values, effective, overlay};
/// The version a decision is about ([`crate::version`]), named here where every decision
/// takes it.
pub use crate::version::Version;
use crate::{immutable, limits};
use kudo_diag::diag::{Code, Diagnostic, Location, Origin, Severity};
use kudo_diag::pointer;
use kudo_yaml::document::Document;

/// The plan a new Instance runs.
pub const DEPLOY: &str = "deploy";
/// The plan an upgrade runs, when the new version has it.
pub const UPGRADE: &str = "upgrade";
/// The plan a change without a `trigger` runs, when the operator has it (else `deploy`).
pub const UPDATE: &str = "update";

/// The plan an upgrade to `to` runs: `upgrade`, else `update`, else `deploy` (KUDO's order).
pub fn upgrade_plan(to: &Version) -> Option<&'static str> {
    [UPGRADE, UPDATE, DEPLOY]
        .into_iter()
        .find(|p| to.has_plan(p))
}

/// An installed Instance, as the policy sees it.
#[derive(Clone, Copy)]
pub struct Installed<'a> {
    /// The version it runs.
    pub version: &'a Version,
    /// Its `spec.parameters` as stored (typed or v1beta1 strings; what the user set).
    pub values: &'a Value,
    /// Its `spec.immutableDefaults`: installed defaults of immutable parameters that a later
    /// version changed ([`Decision::kept`]); `None` when it has none.
    pub kept: Option<&'a Value>,
    /// Its `spec.parametersFrom` names Secrets this caller has not read (an Instance file,
    /// offline): a `required` value may be missing from what it sees.
    pub secrets_elsewhere: bool,
    /// `metadata.deletionTimestamp` is set.
    pub deleting: bool,
    /// The plan scheduled or running now, if any.
    pub in_progress: Option<&'a str>,
}

impl<'a> Installed<'a> {
    /// An Instance that is not being deleted and has no plan in progress (an Instance kept in a
    /// file, or the state the manager last acted on).
    pub fn at_rest(version: &'a Version, values: &'a Value) -> Installed<'a> {
        Installed {
            version,
            values,
            kept: None,
            secrets_elsewhere: false,
            deleting: false,
            in_progress: None,
        }
    }
}

/// The new values.
#[derive(Clone, Copy)]
pub enum Proposal<'a> {
    /// `-P` files (merged in order) and `-p` overrides, on top of the installed (on upgrade:
    /// the migrated) values.
    Edits {
        /// `-P` files in order.
        files: &'a [Document],
        /// `-p` arguments in order.
        overrides: &'a [Override],
        /// `--reset` pointers in order: each removes a value the user set, before the files
        /// and `-p`, so that the default applies again ([`crate::values::reset`]).
        resets: &'a [Reset],
    },
    /// The complete new `spec.parameters`, as a client sent them (the admission webhook, the
    /// manager). On upgrade, values equal to the installed ones mean "carry them over".
    Values(&'a Value),
    /// `kudo patch`'s `--add` and `--remove` ([`crate::values::Edit`]), in order, on top of
    /// the installed values.
    Patch(&'a [crate::values::Edit]),
    /// Like [`Proposal::Values`], from a caller that cannot read the Instance's Secrets
    /// (`spec.parametersFrom`; the admission webhook): a `required` parameter may be missing
    /// here, since its value may be in a Secret. The manager validates the whole.
    WithoutSecrets(&'a Value),
}

impl Proposal<'_> {
    /// No new values: `-P` and `-p` both empty.
    pub const NONE: Proposal<'static> = Proposal::Edits {
        files: &[],
        overrides: &[],
        resets: &[],
    };
}

/// What a change does, once allowed.
#[derive(Clone)]
pub struct Decision {
    /// The effective parameters after the change (defaults applied), each with its origin.
    pub values: Values,
    /// The effective parameters before it, in the layout of `values` (on upgrade: the installed
    /// values moved by `oldName`; on install: empty). What `kudo diff` compares `values` with.
    pub before: Value,
    /// The values to store in `spec.parameters` (typed): what the user set, not the defaults.
    pub explicit: Value,
    /// The values to store in `spec.immutableDefaults` (an object, empty when none): the
    /// defaults of `immutable` parameters as installed, where a later version changed the
    /// default. They are no user values (`--reset` leaves them), but an immutable value never
    /// changes, so the installed one is kept over the new default.
    pub kept: Value,
    /// The plan to run; `None` when nothing changes.
    pub plan: Option<String>,
    /// Every changed value and the plan it runs in the (new) version.
    pub changes: Vec<trigger::ValueChange>,
    /// The migration report (upgrade only).
    pub report: Option<Report>,
    /// Warnings (accepted, but worth reading).
    pub warnings: Vec<Diagnostic>,
}

impl std::fmt::Debug for Decision {
    /// Values are left out: they may hold `writeOnly` secrets.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Decision")
            .field("plan", &self.plan)
            .field("changes", &self.changes)
            .field("report", &self.report)
            .finish_non_exhaustive()
    }
}

impl Decision {
    /// The plan and the changes, as [`trigger::select`] reports them.
    pub fn selection(&self) -> Selection {
        Selection {
            plan: self.plan.clone(),
            changes: self.changes.clone(),
        }
    }
}

type Verdict = Result<Decision, Vec<Diagnostic>>;

/// A new Instance of `to`: defaults, then the proposal, validated once; the plan is `deploy`.
pub fn install(to: &Version, proposal: Proposal<'_>) -> Verdict {
    within_limits(proposal)?;
    let (values, explicit, mut problems) = propose(to, &empty(), &empty(), proposal);
    problems.extend(stored_within_limits(&explicit));
    problems.extend(validate(to, &values, proposal, false));
    if !to.has_plan(DEPLOY) {
        problems.push(no_plan(
            to,
            "the operator has no `deploy` plan, so an Instance of it cannot be installed",
        ));
    }
    let warnings = errors_or_warnings(problems)?;
    Ok(Decision {
        before: empty(),
        values,
        explicit,
        kept: empty(),
        plan: Some(DEPLOY.into()),
        changes: Vec::new(),
        report: None,
        warnings,
    })
}

/// A change of parameters within the installed version. An update that changes nothing (after
/// typing both sides) is a rewrite: allowed whatever the state, no plan runs.
pub fn update(installed: &Installed<'_>, proposal: Proposal<'_>) -> Verdict {
    within_limits(proposal)?;
    let v = installed.version;
    let old_explicit = v.typed(installed.values);
    let kept = installed.kept.map(|k| v.typed(k)).unwrap_or_else(empty);
    let (old, _) = effective(&v.schema, &current(overlay(&kept, &old_explicit)));
    let (new, explicit, mut problems) = propose(v, &old_explicit, &kept, proposal);
    let changed = trigger::changed_paths(old.value(), new.value());
    if changed.is_empty() && matches!(proposal, Proposal::Values(_) | Proposal::WithoutSecrets(_)) {
        // A rewrite: what is stored stays as it is, so nothing about it can be refused now.
        let warnings = problems
            .into_iter()
            .chain(validate(v, &new, proposal, installed.secrets_elsewhere))
            .map(|mut d| {
                d.severity = Severity::Warning;
                d
            })
            .collect();
        return Ok(unchanged(old.into_value(), new, explicit, kept, warnings));
    }
    problems.extend(stored_within_limits(&explicit));
    problems.extend(validate(v, &new, proposal, installed.secrets_elsewhere));
    problems.extend(with_origins(
        &new,
        immutable::check_update(&v.schema, old.value(), new.value()),
    ));
    if installed.deleting && !changed.is_empty() {
        problems.push(deleting("change parameters"));
    }
    let selection = match trigger::select(&v.schema, &v.plan_names(), old.value(), new.value()) {
        Ok(s) => s,
        Err(d) => {
            problems.extend(with_origins(&new, d));
            Selection {
                plan: None,
                changes: Vec::new(),
            }
        }
    };
    if let (Some(running), Some(plan)) = (installed.in_progress, &selection.plan)
        && running != plan
    {
        problems.extend(selection.changes.iter().map(|c| {
            Diagnostic::error(
                Code::PlanInProgress,
                &c.pointer,
                format!(
                    "this change runs plan `{}`, but plan `{running}` is scheduled or running",
                    c.plan
                ),
            )
            .with_origin(new.origin(&c.pointer))
            .with_help(format!(
                "wait until `{running}` ends (kudo plan status), then update; a change that runs `{running}` itself restarts it"
            ))
        }));
    }
    let warnings = errors_or_warnings(problems)?;
    Ok(Decision {
        before: old.into_value(),
        values: new,
        explicit,
        kept,
        plan: selection.plan,
        changes: selection.changes,
        report: None,
        warnings,
    })
}

/// An upgrade of an installed Instance to `to`: the installed values carried over by `oldName`
/// ([`old_name`]), then the proposal; the plan is [`upgrade_plan`].
///
/// Before anything else is decided, the [`crate::preflight`] compares both versions' schemas
/// against the values: a set value the new version drops, a value its new rules refuse, a new
/// required parameter left unset are refused (each naming both versions' rule) unless `allow`
/// lets them through; a changed default the user never set, an `immutable` added or removed are
/// warnings.
pub fn upgrade(
    installed: &Installed<'_>,
    to: &Version,
    proposal: Proposal<'_>,
    allow: &Allow,
) -> Verdict {
    within_limits(proposal)?;
    let from = installed.version;
    let mut problems = unsettled(installed, "upgrade", "upgrade to", to, "then upgrade");
    let old_explicit = from.typed(installed.values);
    let Carried {
        migration: m,
        mut kept,
        installed_values,
        explicit: carried,
    } = match carry(installed, to) {
        Ok(c) => c,
        Err(d) => {
            problems.extend(d);
            return Err(problems);
        }
    };
    let proposal = match proposal {
        Proposal::Values(v) if from.typed(v) == old_explicit => Proposal::Values(&carried),
        Proposal::WithoutSecrets(v) if from.typed(v) == old_explicit => {
            Proposal::WithoutSecrets(&carried)
        }
        p => p,
    };
    let (mut new, mut explicit, mut more) = propose(to, &carried, &kept, proposal);
    // An immutable value the user never set keeps its installed default when the new version
    // changes the default: it is kept, not turned into a user value.
    let pins: Vec<pointer::Pointer> =
        immutable::check_update(&to.schema, &installed_values, new.value())
            .into_iter()
            .map(|d| d.pointer)
            .filter(|p| explicit.pointer(p).is_none() && new.value().pointer(p).is_some())
            .collect();
    if !pins.is_empty() {
        for p in &pins {
            if let (Some(v), Ok(tokens)) = (installed_values.pointer(p), pointer::tokens(p)) {
                pointer::set_creating(&mut kept, &tokens, v.clone());
            }
        }
        (new, explicit, more) = propose(to, &carried, &kept, proposal);
    }
    problems.extend(more);
    // What the upgrade compares against: the carried values over the new defaults (a changed
    // default is no change given with the upgrade), with the kept defaults.
    let (base, _) = effective(&to.schema, &current(overlay(&kept, &carried)));
    let baseline = base.value();
    problems.extend(stored_within_limits(&explicit));
    // The preflight's findings name both versions' rules: the validator's own refusal of the
    // same value says less, and goes.
    let (refused, told): (Vec<Diagnostic>, Vec<Diagnostic>) =
        preflight::against(from, to, &new, &explicit, &m.report.dropped, allow)
            .into_iter()
            .partition(Diagnostic::is_error);
    let mut checked = validate(to, &new, proposal, installed.secrets_elsewhere);
    checked.retain(|d| !refused.iter().any(|f| f.pointer == d.pointer));
    problems.extend(checked);
    problems.extend(refused);
    let immutable_changes = upgrade_immutables(from, to, baseline, &installed_values, &new);
    problems.extend(with_origins(&new, immutable_changes));
    problems.extend(immutable::check_unset(&to.schema, new.value()));
    let changes = upgrade_changes(from, to, baseline, &new, &mut problems);
    let plan = upgrade_plan(to);
    if plan.is_none() {
        problems.push(no_plan(
            to,
            "the new version has no `upgrade`, `update` or `deploy` plan to run the upgrade",
        ));
    }
    let mut warnings = errors_or_warnings(problems)?;
    warnings.extend(told);
    Ok(Decision {
        before: installed_values,
        values: new,
        explicit,
        kept,
        plan: plan.map(String::from),
        changes,
        report: Some(m.report),
        warnings,
    })
}

/// The immutable values an upgrade to `to` changes, from the `baseline` it compares against and
/// from the installed values.
fn upgrade_immutables(
    from: &Version,
    to: &Version,
    baseline: &Value,
    installed_values: &Value,
    new: &Values,
) -> Vec<Diagnostic> {
    // A value may be added where the installed version had no immutable value to keep: a
    // parameter that becomes immutable, or a new immutable one (KUDO's KEP-30).
    // Against the installed values too: giving the new default of an immutable value is a
    // change when the installed value was another.
    let mut immutable_changes: Vec<Diagnostic> =
        immutable::check_update(&to.schema, baseline, new.value())
            .into_iter()
            .filter(|d| {
                baseline.pointer(&d.pointer).is_some()
                    || immutable::immutable_at(&from.schema, &d.pointer).is_some()
            })
            .collect();
    for d in immutable::check_update(&to.schema, installed_values, new.value()) {
        if installed_values.pointer(&d.pointer).is_some()
            && !immutable_changes.iter().any(|c| c.pointer == d.pointer)
        {
            immutable_changes.push(d);
        }
    }
    immutable_changes
}

/// The changes given with an upgrade to `to`, over its `baseline`: refused (into `problems`)
/// when they run another plan than `deploy` in the new version.
fn upgrade_changes(
    from: &Version,
    to: &Version,
    baseline: &Value,
    new: &Values,
    problems: &mut Vec<Diagnostic>,
) -> Vec<trigger::ValueChange> {
    // The values the upgrade needs (those new immutable parameters) run no plan of their own.
    let mut compared = baseline.clone();
    for p in trigger::changed_paths(baseline, new.value()) {
        let required = baseline.pointer(&p).is_none()
            && immutable::immutable_at(&to.schema, &p).is_some()
            && immutable::immutable_at(&from.schema, &p).is_none();
        if let (true, Some(v), Ok(tokens)) =
            (required, new.value().pointer(&p), pointer::tokens(&p))
        {
            pointer::set_creating(&mut compared, &tokens, v.clone());
        }
    }
    match trigger::select(&to.schema, &to.plan_names(), &compared, new.value()) {
        Ok(Selection {
            plan: Some(plan),
            changes,
        }) if plan != DEPLOY => {
            problems.extend(changes.iter().map(|c| {
                Diagnostic::error(
                    Code::UpgradeWithChange,
                    &c.pointer,
                    format!(
                        "this change runs plan `{}` in {}; changes given with an upgrade may only run `deploy`",
                        c.plan, to.name
                    ),
                )
                .with_origin(new.origin(&c.pointer))
                .with_help("upgrade first, then update this value")
            }));
            changes
        }
        Ok(s) => s.changes,
        Err(d) => {
            problems.extend(with_origins(new, d));
            Vec::new()
        }
    }
}

/// A rollback of an installed Instance to one of its revisions (`kudo rollback`, the manager's
/// remediation): `proposal` is the revision's whole `spec.parameters` ([`Proposal::Values`] or
/// [`Proposal::WithoutSecrets`]), `kept` its `spec.immutableDefaults`.
///
/// Within the installed version it is [`update`]: the values that change run the plans they
/// trigger. Back to another version `to`: the revision's values are already in `to`'s layout
/// (no `oldName` moves them), validated by `to`; no immutable value may change, compared with
/// the installed values moved to `to`'s layout by the installed version's `oldName`s read
/// backwards ([`old_name::reverse`]); the plan is `to`'s [`upgrade_plan`], whatever the restored
/// values trigger (they are the revision's whole state, not a change given with an upgrade).
pub fn rollback(
    installed: &Installed<'_>,
    to: &Version,
    proposal: Proposal<'_>,
    kept: Option<&Value>,
) -> Verdict {
    let from = installed.version;
    if from.name == to.name {
        return update(installed, proposal);
    }
    within_limits(proposal)?;
    let mut problems = unsettled(
        installed,
        "roll back",
        "roll back to",
        to,
        "or roll back with --force",
    );
    let kept = kept.map(|k| to.typed(k)).unwrap_or_else(empty);
    let (new, explicit, more) = propose(to, &empty(), &kept, proposal);
    problems.extend(more);
    problems.extend(stored_within_limits(&explicit));
    problems.extend(validate(to, &new, proposal, installed.secrets_elsewhere));
    let old_explicit = from.typed(installed.values);
    let old_kept = installed.kept.map(|k| from.typed(k)).unwrap_or_else(empty);
    let (installed_values, _) =
        effective(&from.schema, &current(overlay(&old_kept, &old_explicit)));
    let back = old_name::reverse(&from.schema, installed_values.value(), &to.schema);
    let immutable_changes: Vec<Diagnostic> =
        immutable::check_update(&to.schema, &back, new.value())
            .into_iter()
            .filter(|d| back.pointer(&d.pointer).is_some())
            .map(|d| {
                d.with_help(format!(
                    "the value changed after the revision was recorded and may never change again; a rollback to {} cannot restore it",
                    to.name
                ))
            })
            .collect();
    // Immutable in the version installed now, too: a value that version made immutable may
    // not change by going back to one that did not (what it guards, data on disk say, is
    // already there).
    // (Asked only when the older version's own rule found nothing: the same value, in the
    // other layout, would be named twice.)
    let mut immutable_changes = immutable_changes;
    if immutable_changes.is_empty()
        && let Ok(forward) = old_name::migrate(&to.schema, new.value(), &from.schema, &to.version)
    {
        let installed = installed_values.value();
        for d in immutable::check_update(&from.schema, installed, forward.values.value()) {
            if installed.pointer(&d.pointer).is_some()
                && !immutable_changes.iter().any(|c| c.pointer == d.pointer)
            {
                immutable_changes.push(d.with_help(format!(
                    "{} made this value immutable; a rollback to {} cannot change it",
                    from.name, to.name
                )));
            }
        }
    }
    problems.extend(with_origins(&new, immutable_changes));
    let changes = trigger::select(&to.schema, &to.plan_names(), &back, new.value())
        .map(|s| s.changes)
        .unwrap_or_default();
    let plan = upgrade_plan(to);
    if plan.is_none() {
        problems.push(no_plan(
            to,
            "the version rolled back to has no `upgrade`, `update` or `deploy` plan to run",
        ));
    }
    let warnings = errors_or_warnings(problems)?;
    Ok(Decision {
        before: back,
        values: new,
        explicit,
        kept,
        plan: plan.map(String::from),
        changes,
        report: None,
        warnings,
    })
}

/// Why `installed` cannot move to version `to` now: it is being deleted, or a plan is
/// scheduled or running (an upgrade's and a rollback's refusal; `what` and `verb` say which,
/// `then` ends the help).
fn unsettled(
    installed: &Installed<'_>,
    what: &str,
    verb: &str,
    to: &Version,
    then: &str,
) -> Vec<Diagnostic> {
    let mut problems = Vec::new();
    if installed.deleting {
        problems.push(deleting(what));
    }
    if let Some(running) = installed.in_progress {
        problems.push(
            Diagnostic::error(
                Code::PlanInProgress,
                "",
                format!(
                    "cannot {verb} {} while plan `{running}` is scheduled or running",
                    to.name
                ),
            )
            .with_help(format!(
                "wait until `{running}` ends (kudo plan status), {then}"
            )),
        );
    }
    problems
}

/// What an upgrade starts from, before the values given with it.
struct Carried {
    /// The user's values moved by `oldName`.
    migration: old_name::Migration,
    /// The kept installed defaults, moved.
    kept: Value,
    /// The installed effective values, moved to the new layout: what no immutable value may
    /// leave.
    installed_values: Value,
    /// The values to store: the user's, moved, and those the Instance ran with where the new
    /// version has no default ([`carry_unset`]).
    explicit: Value,
}

fn carry(installed: &Installed<'_>, to: &Version) -> Result<Carried, Vec<Diagnostic>> {
    let from = installed.version;
    let old_explicit = from.typed(installed.values);
    let old_kept = installed.kept.map(|k| from.typed(k)).unwrap_or_else(empty);
    let moved = |values: &Value| old_name::migrate(&from.schema, values, &to.schema, &from.version);
    let m = moved(&old_explicit)?;
    // Kept defaults move as the user's values do.
    let kept = moved(&old_kept)
        .map(|k| k.explicit)
        .unwrap_or_else(|_| empty());
    let (installed_values, _) =
        effective(&from.schema, &current(overlay(&old_kept, &old_explicit)));
    let installed_values = moved(installed_values.value())
        .map(|i| i.explicit)
        .unwrap_or_else(|_| m.values.value().clone());
    // A value the new version has no default for, that the Instance ran with (the old
    // version's default, moved by oldName), is carried over: without it the upgrade would leave
    // the parameter unset (or refuse a required one) for a reason the user never chose.
    let explicit = carry_unset(
        &to.schema,
        &m.explicit,
        &installed_values,
        effective(&to.schema, &current(overlay(&kept, &m.explicit)))
            .0
            .value(),
    );
    Ok(Carried {
        migration: m,
        kept,
        installed_values,
        explicit,
    })
}

/// The values an upgrade of `installed` to `to` stores before any value given with it: the
/// user's values moved by `oldName`, and those the Instance ran with where `to` has no
/// default. What a client that sends the complete `spec.parameters` starts from.
pub fn carried_over(installed: &Installed<'_>, to: &Version) -> Result<Value, Vec<Diagnostic>> {
    carry(installed, to).map(|c| c.explicit)
}

/// `explicit` with each member that `installed` (the installed effective values, in the new
/// layout) has and `new` (the new version's effective values) lacks, taken from `installed`
/// when it is of the type the new version declares there.
fn carry_unset(schema: &ParamSchema, explicit: &Value, installed: &Value, new: &Value) -> Value {
    fn fits(schema: &ParamSchema, at: &[String], v: &Value) -> bool {
        let declared = schema.node_at(at).and_then(|n| n.get("type"));
        let Some(Value::String(ty)) = declared else {
            return declared.is_none() && schema.node_at(at).is_some();
        };
        match ty.as_str() {
            "integer" => v.is_i64() || v.is_u64(),
            "number" => v.is_number(),
            "string" => v.is_string(),
            "boolean" => v.is_boolean(),
            "array" => v.is_array(),
            "object" => v.is_object(),
            "null" => v.is_null(),
            _ => false,
        }
    }
    fn walk(
        schema: &ParamSchema,
        out: &mut Value,
        installed: &Value,
        new: Option<&Value>,
        at: &mut Vec<String>,
    ) {
        let Value::Object(members) = installed else {
            return;
        };
        for (k, v) in members {
            at.push(k.clone());
            match new.and_then(|n| n.get(k)) {
                None if fits(schema, at, v) => pointer::set_creating(out, at, v.clone()),
                Some(n @ Value::Object(_)) => walk(schema, out, v, Some(n), at),
                _ => {}
            }
            at.pop();
        }
    }
    let mut out = explicit.clone();
    walk(schema, &mut out, installed, Some(new), &mut Vec::new());
    out
}

/// A direct trigger of plan `plan` on an installed Instance (`kudo plan trigger`: a new
/// `spec.planExecution`). `alongside` is the plan the same write runs otherwise (a parameter
/// change, an upgrade), if any. Refused (every reason at once):
/// - a plan the version does not have (`unknown-plan`);
/// - while the Instance is being deleted (`deleting`);
/// - while another plan is scheduled or running (`plan-in-progress`), unless the write
///   supersedes it (`--force`, read into [`Installed::in_progress`] by the caller); triggering
///   the plan that runs restarts it;
/// - together with a change that runs a plan of its own (`trigger-conflict`): the manager would
///   run only one of them.
pub fn trigger_plan(
    installed: &Installed<'_>,
    plan: &str,
    alongside: Option<&str>,
) -> Result<(), Vec<Diagnostic>> {
    let mut problems = Vec::new();
    if !installed.version.has_plan(plan) {
        problems.push(no_plan(
            installed.version,
            &format!(
                "there is no plan `{plan}` to trigger (plans: {})",
                installed.version.plans.join(", ")
            ),
        ));
    }
    if installed.deleting {
        problems.push(deleting(&format!("trigger plan `{plan}`")));
    }
    if let Some(running) = installed.in_progress
        && running != plan
    {
        problems.push(
            Diagnostic::error(
                Code::PlanInProgress,
                "",
                format!("cannot trigger plan `{plan}`: plan `{running}` is scheduled or running"),
            )
            .with_help(format!(
                "wait until `{running}` ends (kudo plan status), or supersede it: kudo plan trigger --force"
            )),
        );
    }
    if let Some(other) = alongside {
        problems.push(
            Diagnostic::error(
                Code::TriggerConflict,
                "",
                format!(
                    "plan `{plan}` is triggered directly by the same write whose other changes run plan `{other}`"
                ),
            )
            .with_help("trigger the plan and change the Instance in two writes"),
        );
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems)
    }
}

/// `decided` (the [`update`] or [`upgrade`] of a write) combined with the write's direct
/// trigger of `plan` ([`trigger_plan`]): every problem of both, or the decision with `plan` as
/// the plan it runs.
pub fn with_trigger(installed: &Installed<'_>, plan: &str, decided: Verdict) -> Verdict {
    let alongside = decided.as_ref().ok().and_then(|d| d.plan.clone());
    match (decided, trigger_plan(installed, plan, alongside.as_deref())) {
        (Ok(d), Ok(())) => Ok(Decision {
            plan: Some(plan.to_string()),
            ..d
        }),
        (Ok(_), Err(refused)) => Err(refused),
        (Err(problems), Ok(())) => Err(problems),
        (Err(mut problems), Err(refused)) => {
            problems.extend(refused);
            Err(problems)
        }
    }
}

fn unchanged(
    before: Value,
    values: Values,
    explicit: Value,
    kept: Value,
    warnings: Vec<Diagnostic>,
) -> Decision {
    Decision {
        before,
        values,
        explicit,
        kept,
        plan: None,
        changes: Vec::new(),
        report: None,
        warnings,
    }
}

/// The effective values, the values to store and the problems of `proposal` on top of
/// `baseline` (typed, explicit values of version `to`), with the `kept` installed defaults
/// under them.
///
/// A value written at the `oldName` of a parameter moves there, and a value set at a parameter
/// marked `deprecated` stays: each with a warning ([`old_name::renamed`],
/// [`preflight::deprecated`]).
fn propose(
    to: &Version,
    baseline: &Value,
    kept: &Value,
    proposal: Proposal<'_>,
) -> (Values, Value, Vec<Diagnostic>) {
    let (values, explicit, mut problems) = proposed(to, baseline, kept, proposal);
    problems.extend(preflight::deprecated(
        &to.deprecations,
        Some(&to.name),
        &values,
    ));
    (values, explicit, problems)
}

fn proposed(
    to: &Version,
    baseline: &Value,
    kept: &Value,
    proposal: Proposal<'_>,
) -> (Values, Value, Vec<Diagnostic>) {
    match proposal {
        Proposal::Edits {
            files,
            overrides,
            resets,
        } => {
            let (baseline, mut refused) = reset(to, baseline, resets);
            let baseline = &baseline;
            let (values, problems) = effective(
                &to.schema,
                &Inputs {
                    current: Some(overlay(kept, baseline)),
                    files,
                    overrides,
                },
            );
            let explicit = explicit(baseline, files, overrides, values.value());
            refused.extend(problems);
            (values, explicit, refused)
        }
        Proposal::Patch(edits) => {
            let (mut values, mut problems) =
                effective(&to.schema, &current(overlay(kept, baseline)));
            for e in edits {
                if let Err(d) = values.edit(&to.schema, e) {
                    problems.push(d);
                }
            }
            values.apply_defaults(&to.schema);
            let explicit = explicit_edits(baseline, edits, values.value());
            (values, explicit, problems)
        }
        Proposal::Values(given) | Proposal::WithoutSecrets(given) => {
            let (given, mut moved) = old_name::renamed(&to.schema, given);
            let typed = to.typed(&given);
            let (values, problems) = effective(&to.schema, &current(overlay(kept, &typed)));
            moved.extend(problems);
            (values, typed, moved)
        }
    }
}

/// The proposal's own values within [`limits`], checked before anything else: values too large
/// are refused whole, at the cost of measuring them ([`limits::check`] stops at the first
/// bound passed), never of typing, merging or validating them.
fn within_limits(proposal: Proposal<'_>) -> Result<(), Vec<Diagnostic>> {
    let too_long = |what: String, len: usize, origin: Origin| {
        (len > limits::MAX_BYTES).then(|| {
            Diagnostic::error(
                Code::TooLarge,
                "",
                format!(
                    "{what} is {len} bytes, more than the {} the values of an Instance may hold",
                    limits::MAX_BYTES
                ),
            )
            .with_origin(origin)
        })
    };
    let refused: Vec<Diagnostic> = match proposal {
        Proposal::Values(v) | Proposal::WithoutSecrets(v) => {
            limits::refuse(v, "the Instance's parameters", Origin::Instance)
                .err()
                .into_iter()
                .collect()
        }
        Proposal::Edits {
            files, overrides, ..
        } => files
            .iter()
            .filter_map(|f| {
                let origin = Origin::File(Location {
                    path: f.path().to_path_buf(),
                    line: 1,
                    col: 1,
                });
                let what = format!("the values of -P {}", f.path().display());
                limits::refuse(f.value(), &what, origin).err()
            })
            .chain(overrides.iter().filter_map(|ov| {
                too_long(
                    format!("-p argument {}", ov.index),
                    ov.value.len(),
                    ov.origin(),
                )
            }))
            .collect(),
        Proposal::Patch(edits) => edits
            .iter()
            .filter_map(|e| match e {
                crate::values::Edit::Add { index, value, .. } => too_long(
                    format!("--add argument {index}"),
                    value.len(),
                    Origin::Add { index: *index },
                ),
                crate::values::Edit::Remove { .. } => None,
            })
            .collect(),
    };
    if refused.is_empty() {
        Ok(())
    } else {
        Err(refused)
    }
}

/// The values to store within [`limits`] (several inputs, each within them, may add up past
/// them).
fn stored_within_limits(explicit: &Value) -> Option<Diagnostic> {
    limits::refuse(explicit, "the parameters to store", Origin::None).err()
}

/// `values` validated against `v`'s schema; a missing `required` value is no problem when the
/// caller has not seen the Instance's Secrets (`WithoutSecrets`, `secrets_elsewhere`).
fn validate(
    v: &Version,
    values: &Values,
    proposal: Proposal<'_>,
    secrets_elsewhere: bool,
) -> Vec<Diagnostic> {
    let mut problems = v.validator.validate(values);
    if secrets_elsewhere || matches!(proposal, Proposal::WithoutSecrets(_)) {
        problems.retain(|d| d.code != Code::Required);
    }
    problems
}

/// Every `writeOnly` value in `stored` (an Instance's `spec.parameters`), as an error: an
/// Instance never holds a secret; it names a Secret in `spec.parametersFrom` instead
/// ([`crate::secrets`]). The value itself is never shown.
pub fn secrets_stored(v: &Version, stored: &Value) -> Vec<Diagnostic> {
    crate::secrets::pointers(&v.schema, &v.typed(stored))
        .into_iter()
        .map(|p| {
            Diagnostic::error(
                Code::SecretInInstance,
                &p,
                "is writeOnly: its value is never stored in an Instance, where anyone who may read Instances sees it",
            )
            .with_origin(kudo_diag::diag::Origin::Instance)
            .with_help(
                "keep it in a Secret named in spec.parametersFrom (kudo install and kudo update do this; kudo migrate moves an installed value)",
            )
        })
        .collect()
}

/// Whose undeclared parameters a write may keep ([`set_aside`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Undeclared {
    /// Only those the Instance already holds, unchanged (kudo's own writes, `kudo.dev/v1beta2`
    /// writes, `-p`): a new one is refused (`unknown-parameter`).
    KeepInstalled,
    /// Any (a `kudo.dev/v1beta1` write): KUDO accepted a parameter its OperatorVersion does not
    /// declare, kept it and ignored it, and KUDO's own manifests rely on it (kafka's upgrade
    /// manifests set parameters of the version they upgrade to in their first step).
    KeepAll,
}

/// The parameters of a write that its OperatorVersion does not declare and that are kept as
/// they are, ignored by every rule and by the plans ([`set_aside`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SetAside {
    /// The kept parameters, by name. Values are never shown: one may be a secret.
    pub values: Map<String, Value>,
    /// One warning per kept parameter, naming it and the OperatorVersion.
    pub warnings: Vec<Diagnostic>,
}

impl SetAside {
    /// `explicit` (what the policy stores, [`Decision::explicit`]) with the kept parameters
    /// back in.
    pub fn restored(&self, explicit: &Value) -> Value {
        let mut out = match explicit {
            Value::Object(m) => m.clone(),
            _ => Map::new(),
        };
        for (k, v) in &self.values {
            out.insert(k.clone(), v.clone());
        }
        Value::Object(out)
    }

    /// `decision` with the kept parameters back in what it stores, and their warnings.
    pub fn restore(&self, mut decision: Decision) -> Decision {
        decision.explicit = self.restored(&decision.explicit);
        decision.warnings.extend(self.warnings.iter().cloned());
        decision
    }
}

/// Splits `given` (an Instance's `spec.parameters`) into what version `to` declares and the
/// parameters it does not (top-level names the schema has no place for) that the write may
/// keep: every one with [`Undeclared::KeepAll`], else those `installed` (the version the
/// Instance ran before the write, and its parameters) holds with the same value. One the
/// installed version declares is never set aside. The policy then decides on the
/// first part only, and [`SetAside::restore`] puts the kept ones back into what is stored. A
/// parameter it may not keep stays in the first part, where the policy refuses it
/// (`unknown-parameter`, with its did-you-mean).
///
/// The manager reads an Instance's values through [`declared`], so a kept parameter is never
/// rendered, validated or compared: it runs no plan and fails none.
pub fn set_aside(
    to: &Version,
    given: &Value,
    installed: Option<(&Version, &Value)>,
    mode: Undeclared,
) -> (Value, SetAside) {
    let Value::Object(values) = given else {
        return (given.clone(), SetAside::default());
    };
    let undeclared = |v: &Version, k: &str| {
        matches!(
            v.schema.child(v.schema.root(), k),
            crate::params::v1beta2::Child::Unknown
        )
    };
    let mut known = Map::new();
    let mut kept = SetAside::default();
    for (k, v) in values {
        // A parameter the installed version declares is the policy's on an upgrade (carried
        // by `oldName`, or reported where it lands nowhere), never set aside.
        // A value written by its `oldName` is the policy's: it moves to its parameter.
        let keep = undeclared(to, k)
            && !old_name::is_old_name(&to.schema, k)
            && installed.is_none_or(|(from, _)| undeclared(from, k))
            && (mode == Undeclared::KeepAll
                || installed
                    .and_then(|(_, i)| i.get(k))
                    .is_some_and(|old| old == v));
        if !keep {
            known.insert(k.clone(), v.clone());
            continue;
        }
        let at = pointer::push("", k);
        kept.warnings.push(
            Diagnostic::warning(
                Code::UnknownParameter,
                at.as_str(),
                format!(
                    "is not a parameter of OperatorVersion {}: kept as written and ignored (as KUDO did with kudo.dev/v1beta1 Instances)",
                    to.name
                ),
            )
            .with_origin(kudo_diag::diag::Origin::Instance)
            .with_help("no plan reads it; remove it, or upgrade to a version that declares it"),
        );
        kept.values.insert(k.clone(), v.clone());
    }
    (Value::Object(known), kept)
}

/// `values` (an Instance's parameters) without the top-level parameters `to` does not declare:
/// what the manager renders, validates and compares ([`set_aside`] says why one may be there).
pub fn declared(to: &Version, values: &Value) -> Value {
    set_aside(to, values, None, Undeclared::KeepAll).0
}

fn empty() -> Value {
    Value::Object(Map::new())
}

/// `baseline` without the values `--reset` names, and the resets refused.
fn reset(to: &Version, baseline: &Value, resets: &[Reset]) -> (Value, Vec<Diagnostic>) {
    let mut out = baseline.clone();
    let refused = resets
        .iter()
        .filter_map(|r| values::reset(&to.schema, &mut out, r).err())
        .collect();
    (out, refused)
}

fn current(values: Value) -> Inputs<'static> {
    Inputs {
        current: Some(values),
        ..Default::default()
    }
}

/// The problems split into errors (refused) and warnings (accepted), each problem once: the
/// same finding from two checks (a value both invalid and immutable, say) is listed once.
fn errors_or_warnings(mut problems: Vec<Diagnostic>) -> Result<Vec<Diagnostic>, Vec<Diagnostic>> {
    let mut seen = std::collections::HashSet::new();
    problems.retain(|d| seen.insert((d.code, d.pointer.to_string(), d.message.clone())));
    let (errors, warnings): (Vec<_>, Vec<_>) = problems.into_iter().partition(|d| d.is_error());
    if errors.is_empty() {
        Ok(limits::bounded(warnings))
    } else {
        Err(limits::bounded(errors))
    }
}

fn deleting(what: &str) -> Diagnostic {
    Diagnostic::error(
        Code::Deleting,
        "",
        format!("cannot {what}: the Instance is being deleted"),
    )
    .with_help("wait until the deletion ends, then install again")
}

fn no_plan(to: &Version, why: &str) -> Diagnostic {
    Diagnostic::error(Code::UnknownPlan, "", format!("{}: {why}", to.name))
}

/// Each problem about a changed value says where the new value came from (`-p` argument N,
/// a `-P` file, the Instance).
fn with_origins(values: &Values, diags: Vec<Diagnostic>) -> Vec<Diagnostic> {
    diags
        .into_iter()
        .map(|d| {
            let origin = values.origin(&d.pointer);
            d.with_origin(origin)
        })
        .collect()
}

/// The values to store: `current` with the `-P` files merged in, then each `-p` value (the
/// whole array when it goes through one), taken from the effective result.
fn explicit(
    current: &Value,
    files: &[Document],
    overrides: &[Override],
    effective: &Value,
) -> Value {
    let mut out = current.clone();
    for f in files {
        if !f.value().is_null() {
            json_patch::merge(&mut out, f.value());
        }
    }
    if !out.is_object() {
        out = Value::Object(Map::new());
    }
    for ov in overrides {
        // Write from the outermost array on the way, else the value itself.
        let mut end = ov.tokens.len();
        for k in 1..=ov.tokens.len() {
            if effective
                .pointer(&pointer::from_tokens(&ov.tokens[..k]))
                .is_some_and(Value::is_array)
            {
                end = k;
                break;
            }
        }
        let at = &ov.tokens[..end];
        if let Some(v) = effective.pointer(&pointer::from_tokens(at)) {
            pointer::set_creating(&mut out, at, v.clone());
        }
    }
    out
}

/// The values to store after `kudo patch`'s `edits`: `current` with each edited array written
/// whole from `effective` (the outermost array on the way, as for `-p`), and each removed object
/// member removed.
fn explicit_edits(current: &Value, edits: &[crate::values::Edit], effective: &Value) -> Value {
    let mut out = match current {
        Value::Object(_) => current.clone(),
        _ => Value::Object(Map::new()),
    };
    for e in edits {
        let tokens = e.tokens();
        let Some((last, parents)) = tokens.split_last() else {
            continue;
        };
        let array = (1..=parents.len()).find(|k| {
            effective
                .pointer(&pointer::from_tokens(&tokens[..*k]))
                .is_some_and(Value::is_array)
        });
        match array {
            Some(k) => {
                let at = &tokens[..k];
                if let Some(v) = effective.pointer(&pointer::from_tokens(at)) {
                    pointer::set_creating(&mut out, at, v.clone());
                }
            }
            None => {
                if let Some(Value::Object(m)) = out.pointer_mut(&pointer::from_tokens(parents)) {
                    m.remove(last);
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The installed version: `update`, `backup-update` and `deploy` plans.
    fn v1(plans: &[&str]) -> Version {
        version(
            "db-1.0.0",
            json!({"type": "object", "properties": {
                "clusterName": {"type": "string", "immutable": true, "default": "c1"},
                "nodeCount": {"type": "integer", "minimum": 1, "default": 3},
                "ports": {"type": "array", "items": {"type": "integer"}, "default": [80]},
                "flag": {"type": "boolean", "default": false},
                "zone": {"type": "string"},
                "removed": {"type": "string"},
                "backup": {"type": "object", "trigger": "backup-update", "properties": {
                    "enabled": {"type": "boolean", "default": false}}},
                "password": {"type": "string", "writeOnly": true, "minLength": 8}
            }}),
            plans,
        )
    }

    /// The new version: `removed` is gone, `zone` became immutable, `region` is a new immutable
    /// parameter without a default, `cluster` moved by `oldName`.
    fn v2(plans: &[&str]) -> Version {
        version(
            "db-2.0.0",
            json!({"type": "object", "properties": {
                "cluster": {"type": "string", "immutable": true, "default": "c1",
                    "oldName": "clusterName"},
                "nodeCount": {"type": "integer", "minimum": 1, "default": 3},
                "ports": {"type": "array", "items": {"type": "integer"}, "default": [80]},
                "flag": {"type": "boolean", "default": false},
                "zone": {"type": "string", "immutable": true},
                "region": {"type": "string", "immutable": true},
                "backup": {"type": "object", "trigger": "backup-update", "properties": {
                    "enabled": {"type": "boolean", "default": false}}},
                "password": {"type": "string", "writeOnly": true, "minLength": 8}
            }}),
            plans,
        )
    }

    fn version(name: &str, schema: Value, plans: &[&str]) -> Version {
        Version::new(
            name.into(),
            name.rsplit('-').next().unwrap_or_default().into(),
            ParamSchema::from_value(schema).unwrap(),
            plans.iter().map(|p| p.to_string()).collect(),
        )
        .unwrap()
    }

    const ALL: &[&str] = &["deploy", "update", "upgrade", "backup-update"];

    /// Issue 34: a rollback restores a revision's whole values, back across a rename, and
    /// never changes an immutable value.
    #[test]
    fn a_rollback_restores_a_revision_and_keeps_immutable_values() {
        let older = version(
            "c-0.1.0",
            json!({"type": "object", "properties": {
                "CLUSTER_NAME": {"type": "string", "immutable": true, "default": "c"},
                "nodes": {"type": "integer", "default": 3, "trigger": "scale"},
                "heap": {"type": "string", "default": "1G"}
            }}),
            &["deploy", "upgrade", "scale"],
        );
        let newer = version(
            "c-0.2.0",
            json!({"type": "object", "properties": {
                "cluster": {"type": "object", "properties": {
                    "name": {"type": "string", "oldName": "CLUSTER_NAME", "immutable": true, "default": "c"}
                }},
                "nodes": {"type": "integer", "default": 3},
                "heap": {"type": "string", "default": "2G"}
            }}),
            &["deploy", "upgrade"],
        );
        let installed_values = json!({"cluster": {"name": "prod"}, "nodes": 5});
        let installed = Installed::at_rest(&newer, &installed_values);
        // Back to revision 1 (0.1.0, CLUSTER_NAME prod, 3 nodes): the older version's upgrade
        // plan runs, although `nodes` alone would run `scale`.
        let revision = json!({"CLUSTER_NAME": "prod"});
        let d = rollback(&installed, &older, Proposal::Values(&revision), None).unwrap();
        assert_eq!(d.plan.as_deref(), Some("upgrade"));
        assert_eq!(d.explicit, revision);
        assert_eq!(d.values.value()["heap"], json!("1G"), "the older defaults");
        // A revision whose immutable value differs from the installed one is refused.
        let revision = json!({"CLUSTER_NAME": "other"});
        let refused = rollback(&installed, &older, Proposal::Values(&revision), None).unwrap_err();
        assert_eq!(refused.len(), 1, "{refused:?}");
        assert_eq!(refused[0].code, Code::ImmutableChanged);
        assert_eq!(refused[0].pointer, "/CLUSTER_NAME");
        // A plan in progress refuses it, as it refuses an upgrade.
        let busy = Installed {
            in_progress: Some("deploy"),
            ..installed
        };
        let revision = json!({"CLUSTER_NAME": "prod"});
        let refused = rollback(&busy, &older, Proposal::Values(&revision), None).unwrap_err();
        assert_eq!(refused[0].code, Code::PlanInProgress);
        // A value the installed version made immutable does not change by going back to a
        // version where it was not.
        let mutable = version(
            "c-0.0.9",
            json!({"type": "object", "properties": {
                "CLUSTER_NAME": {"type": "string", "default": "c"},
                "nodes": {"type": "integer", "default": 3}
            }}),
            &["deploy"],
        );
        let before = json!({"CLUSTER_NAME": "before"});
        let refused = rollback(&installed, &mutable, Proposal::Values(&before), None).unwrap_err();
        assert_eq!(refused.len(), 1, "{refused:?}");
        assert_eq!(refused[0].code, Code::ImmutableChanged);
        assert!(
            refused[0]
                .help
                .as_deref()
                .is_some_and(|h| h.contains("c-0.2.0 made")),
            "{refused:?}"
        );
        // Within one version it is an update: the restored value runs the plan it triggers.
        let at_rest = json!({"CLUSTER_NAME": "prod", "nodes": 5});
        let installed = Installed::at_rest(&older, &at_rest);
        let d = rollback(&installed, &older, Proposal::Values(&revision), None).unwrap();
        assert_eq!(d.plan.as_deref(), Some("scale"));
    }

    /// Issue 33: KUDO's kafka upgrade manifests set, in their first step, a parameter of the
    /// version they upgrade to. A v1beta1 write keeps it; any write keeps one already held.
    #[test]
    fn undeclared_parameters_are_kept_by_v1beta1_writes_and_ignored() {
        let v = v1(ALL);
        type Case = (
            &'static str,
            Value,
            Option<Value>,
            Undeclared,
            Value,
            &'static [&'static str],
        );
        let cases: &[Case] = &[
            (
                "a v1beta1 write keeps a new one",
                json!({"nodeCount": "5", "NEW_PARAM": "x"}),
                None,
                Undeclared::KeepAll,
                json!({"nodeCount": "5"}),
                &["NEW_PARAM"],
            ),
            (
                "a v1beta2 write keeps one the Instance holds unchanged",
                json!({"nodeCount": 5, "NEW_PARAM": "x"}),
                Some(json!({"NEW_PARAM": "x"})),
                Undeclared::KeepInstalled,
                json!({"nodeCount": 5}),
                &["NEW_PARAM"],
            ),
            (
                "a v1beta2 write leaves a new or changed one to the policy",
                json!({"NEW_PARAM": "y", "nodeCont": 5}),
                Some(json!({"NEW_PARAM": "x"})),
                Undeclared::KeepInstalled,
                json!({"NEW_PARAM": "y", "nodeCont": 5}),
                &[],
            ),
            (
                "a declared parameter is never set aside",
                json!({"backup": {"enabled": true}}),
                None,
                Undeclared::KeepAll,
                json!({"backup": {"enabled": true}}),
                &[],
            ),
        ];
        for (rule, given, installed, mode, known, kept) in cases {
            let (got, aside) = set_aside(&v, given, installed.as_ref().map(|i| (&v, i)), *mode);
            assert_eq!(&got, known, "rule: {rule}");
            let names: Vec<&str> = aside.values.keys().map(String::as_str).collect();
            assert_eq!(names, kept.to_vec(), "rule: {rule}");
            assert_eq!(aside.warnings.len(), kept.len(), "rule: {rule}");
            for w in &aside.warnings {
                assert_eq!(w.code, Code::UnknownParameter, "rule: {rule}");
                assert_eq!(w.severity, Severity::Warning, "rule: {rule}");
                assert!(
                    w.message.contains("db-1.0.0"),
                    "names the OperatorVersion: {w}"
                );
            }
        }
    }

    /// On an upgrade, a parameter the installed version declares is carried by `oldName`
    /// (or reported), never set aside, whatever API version the write came through.
    #[test]
    fn an_upgrade_sets_aside_only_what_neither_version_declares() {
        let (from, to) = (v1(ALL), v2(ALL));
        let installed = json!({"clusterName": "c1", "removed": "r", "EXTRA": "x"});
        for mode in [Undeclared::KeepAll, Undeclared::KeepInstalled] {
            let (known, aside) = set_aside(&to, &installed, Some((&from, &installed)), mode);
            assert_eq!(
                known,
                json!({"clusterName": "c1", "removed": "r"}),
                "{mode:?}"
            );
            let names: Vec<&String> = aside.values.keys().collect();
            assert_eq!(names, ["EXTRA"], "{mode:?}");
        }
    }

    #[test]
    fn a_kept_parameter_is_stored_and_runs_no_plan() {
        let v = v1(ALL);
        let installed = json!({"nodeCount": 3, "NEW_PARAM": "x"});
        let given = json!({"nodeCount": 3, "NEW_PARAM": "x"});
        let (old, _) = set_aside(&v, &installed, None, Undeclared::KeepAll);
        let (new, aside) = set_aside(
            &v,
            &given,
            Some((&v, &installed)),
            Undeclared::KeepInstalled,
        );
        let d = update(&Installed::at_rest(&v, &old), Proposal::Values(&new))
            .map(|d| aside.restore(d))
            .expect("kept");
        assert_eq!(d.plan, None, "nothing changed");
        assert_eq!(d.explicit, json!({"nodeCount": 3, "NEW_PARAM": "x"}));
        assert_eq!(d.warnings.len(), 1);
        // The manager's view never holds it.
        assert_eq!(declared(&v, &given), json!({"nodeCount": 3}));
        // An install through v1beta1 keeps it and runs deploy.
        let fresh = json!({"NEW_PARAM": "x"});
        let (known, aside) = set_aside(&v, &fresh, None, Undeclared::KeepAll);
        let d = install(&v, Proposal::Values(&known))
            .map(|d| aside.restore(d))
            .expect("kept");
        assert_eq!(d.plan.as_deref(), Some(DEPLOY));
        assert_eq!(d.explicit, json!({"NEW_PARAM": "x"}));
        let refused = install(&v, Proposal::Values(&fresh)).map_err(|d| d[0].code);
        assert_eq!(refused.map(|d| d.plan), Err(Code::UnknownParameter));
    }

    /// The state of the installed Instance in a case.
    #[derive(Clone, Copy, Default)]
    struct State {
        deleting: bool,
        in_progress: Option<&'static str>,
    }

    const IDLE: State = State {
        deleting: false,
        in_progress: None,
    };

    impl State {
        /// An Instance in this state, installed at `version` with `values`.
        fn of<'a>(&self, version: &'a Version, values: &'a Value) -> Installed<'a> {
            Installed {
                deleting: self.deleting,
                in_progress: self.in_progress,
                ..Installed::at_rest(version, values)
            }
        }
    }

    fn outcome(r: Verdict) -> Result<Option<String>, Vec<Code>> {
        r.map(|d| d.plan)
            .map_err(|d| d.iter().map(|d| d.code).collect())
    }

    fn args(overrides: &[&str]) -> Vec<Override> {
        Override::parse_all(overrides).expect("well-formed -p arguments")
    }

    fn resets(pointers: &[&str]) -> Vec<Reset> {
        Reset::parse_all(pointers).expect("well-formed --reset pointers")
    }

    fn update_with(v: &Version, installed: Value, state: State, overrides: &[&str]) -> Verdict {
        let o = args(overrides);
        let i = state.of(v, &installed);
        update(
            &i,
            Proposal::Edits {
                files: &[],
                overrides: &o,
                resets: &[],
            },
        )
    }

    #[test]
    fn a_patch_stores_the_edited_array_whole_and_runs_its_plan() {
        let v = v1(ALL);
        let installed = json!({"nodeCount": 4, "zone": "z"});
        let edits = [
            values::Edit::add(1, "ports/-=8080").unwrap(),
            values::Edit::remove(1, "nodeCount").unwrap(),
        ];
        let d = update(&Installed::at_rest(&v, &installed), Proposal::Patch(&edits)).unwrap();
        // The array from its default, stored whole; the removed member falls back to its default.
        assert_eq!(d.explicit, json!({"zone": "z", "ports": [80, 8080]}));
        assert_eq!(d.before["ports"], json!([80]));
        assert_eq!(d.values.value()["ports"], json!([80, 8080]));
        assert_eq!(d.values.value()["nodeCount"], json!(3));
        assert_eq!(d.plan.as_deref(), Some("update"));
        // Changes that run two plans are refused as any update's are.
        let both = [
            values::Edit::add(1, "ports/-=8080").unwrap(),
            values::Edit::remove(1, "backup/enabled").unwrap(),
        ];
        let conflict = update(
            &Installed::at_rest(&v, &json!({"backup": {"enabled": true}})),
            Proposal::Patch(&both),
        );
        assert_eq!(
            outcome(conflict),
            Err(vec![Code::TriggerConflict]),
            "ports runs update, backup runs backup-update"
        );
        // An immutable value cannot be removed either.
        let immutable = [values::Edit::remove(1, "clusterName").unwrap()];
        assert_eq!(
            outcome(update(
                &Installed::at_rest(&v, &json!({"clusterName": "x"})),
                Proposal::Patch(&immutable)
            )),
            Err(vec![Code::ImmutableChanged])
        );
    }

    fn upgrade_with(
        from: &Version,
        to: &Version,
        installed: Value,
        state: State,
        overrides: &[&str],
    ) -> Verdict {
        upgrade_allowing(from, to, installed, state, overrides, &Allow::NONE)
    }

    fn upgrade_allowing(
        from: &Version,
        to: &Version,
        installed: Value,
        state: State,
        overrides: &[&str],
        allow: &Allow,
    ) -> Verdict {
        let o = args(overrides);
        let i = state.of(from, &installed);
        upgrade(
            &i,
            to,
            Proposal::Edits {
                files: &[],
                overrides: &o,
                resets: &[],
            },
            allow,
        )
    }

    #[test]
    fn install_runs_deploy_and_needs_a_deploy_plan() {
        let got = install(&v1(ALL), Proposal::NONE);
        assert_eq!(outcome(got), Ok(Some("deploy".into())));
        let got = install(&v1(&["update"]), Proposal::NONE);
        assert_eq!(outcome(got), Err(vec![Code::UnknownPlan]));
        let o = args(&["nodeCount=0"]);
        let got = install(
            &v1(ALL),
            Proposal::Edits {
                files: &[],
                overrides: &o,
                resets: &[],
            },
        );
        assert_eq!(outcome(got), Err(vec![Code::OutOfRange]));
    }

    /// Every update rule, by name: (rule, plans, installed, state, `-p`, outcome).
    #[test]
    fn update_rules() {
        type Case = (
            &'static str,
            &'static [&'static str],
            Value,
            State,
            &'static [&'static str],
            Result<Option<&'static str>, Vec<Code>>,
        );
        let busy = |plan| State {
            deleting: false,
            in_progress: Some(plan),
        };
        let deleting = State {
            deleting: true,
            in_progress: None,
        };
        let cases: Vec<Case> = vec![
            (
                "a trigger runs its plan",
                ALL,
                json!({}),
                IDLE,
                &["backup/enabled=true"],
                Ok(Some("backup-update")),
            ),
            (
                "no trigger runs update",
                ALL,
                json!({}),
                IDLE,
                &["nodeCount=4"],
                Ok(Some("update")),
            ),
            (
                "no trigger and no update plan runs deploy",
                &["deploy", "backup-update"],
                json!({}),
                IDLE,
                &["nodeCount=4"],
                Ok(Some("deploy")),
            ),
            (
                "nothing changes, no plan",
                ALL,
                json!({"nodeCount": 4}),
                IDLE,
                &["nodeCount=4"],
                Ok(None),
            ),
            (
                "setting the default is no change",
                ALL,
                json!({}),
                IDLE,
                &["nodeCount=3"],
                Ok(None),
            ),
            (
                "two plans are refused",
                ALL,
                json!({}),
                IDLE,
                &["nodeCount=4", "backup/enabled=true"],
                Err(vec![Code::TriggerConflict]),
            ),
            (
                "an immutable value cannot change",
                ALL,
                json!({}),
                IDLE,
                &["clusterName=c2"],
                Err(vec![Code::ImmutableChanged]),
            ),
            (
                "an invalid value is refused",
                ALL,
                json!({}),
                IDLE,
                &["nodeCount=0"],
                Err(vec![Code::OutOfRange]),
            ),
            (
                "an integer in another notation is refused",
                ALL,
                json!({}),
                IDLE,
                &["nodeCount=1e3"],
                Err(vec![Code::TypeMismatch]),
            ),
            (
                "no change while deleting",
                ALL,
                json!({}),
                deleting,
                &["nodeCount=4"],
                Err(vec![Code::Deleting]),
            ),
            (
                "a no-op while deleting is fine",
                ALL,
                json!({"nodeCount": 4}),
                deleting,
                &["nodeCount=4"],
                Ok(None),
            ),
            (
                "another plan while one runs is refused",
                ALL,
                json!({}),
                busy("backup-update"),
                &["nodeCount=4"],
                Err(vec![Code::PlanInProgress]),
            ),
            (
                "the same plan while it runs restarts it",
                ALL,
                json!({}),
                busy("update"),
                &["nodeCount=4"],
                Ok(Some("update")),
            ),
            (
                "a stored v1beta1 string is the same value",
                ALL,
                json!({"nodeCount": "7"}),
                IDLE,
                &["nodeCount=7"],
                Ok(None),
            ),
        ];
        for (rule, plans, installed, state, overrides, want) in cases {
            let got = outcome(update_with(&v1(plans), installed, state, overrides));
            let want = want.map(|p| p.map(String::from));
            assert_eq!(got, want, "rule: {rule}");
        }
    }

    #[test]
    fn a_change_of_representation_is_no_change_and_never_refused() {
        let v = v1(ALL);
        let stored =
            json!({"nodeCount": "7", "flag": "false", "ports": "[80, 443]", "clusterName": "c9"});
        let typed = json!({"nodeCount": 7, "flag": false, "ports": [80, 443], "clusterName": "c9"});
        for state in [
            IDLE,
            State {
                deleting: true,
                in_progress: Some("backup-update"),
            },
        ] {
            let i = state.of(&v, &stored);
            let d = update(&i, Proposal::Values(&typed)).unwrap();
            assert_eq!(d.plan, None);
            assert!(d.changes.is_empty());
            assert_eq!(d.explicit, typed);
        }
    }

    #[test]
    fn a_rewrite_of_values_that_no_longer_validate_is_allowed_with_warnings() {
        let v = v1(ALL);
        let stored = json!({"nodeCount": 0});
        let i = Installed {
            version: &v,
            values: &stored,
            kept: None,
            secrets_elsewhere: false,
            deleting: false,
            in_progress: None,
        };
        let d = update(&i, Proposal::Values(&stored)).unwrap();
        assert_eq!(d.plan, None);
        assert_eq!(
            d.warnings.iter().map(|w| w.code).collect::<Vec<_>>(),
            [Code::OutOfRange]
        );
        // The same values sent as a change are refused.
        let i = Installed {
            values: &json!({}),
            ..i
        };
        assert_eq!(
            outcome(update(&i, Proposal::Values(&stored))),
            Err(vec![Code::OutOfRange])
        );
    }

    /// Every upgrade rule, by name: (rule, new plans, installed, state, `-p`, outcome).
    #[test]
    fn upgrade_rules() {
        type Case = (
            &'static str,
            &'static [&'static str],
            Value,
            State,
            &'static [&'static str],
            Result<Option<&'static str>, Vec<Code>>,
        );
        let given = json!({"zone": "z1"});
        let cases: Vec<Case> = vec![
            (
                "upgrade runs upgrade",
                ALL,
                given.clone(),
                IDLE,
                &["region=eu"],
                Ok(Some("upgrade")),
            ),
            (
                "else update",
                &["deploy", "update"],
                given.clone(),
                IDLE,
                &["region=eu"],
                Ok(Some("update")),
            ),
            (
                "else deploy",
                &["deploy"],
                given.clone(),
                IDLE,
                &["region=eu"],
                Ok(Some("deploy")),
            ),
            (
                "a change that runs deploy is allowed",
                &["deploy", "upgrade"],
                given.clone(),
                IDLE,
                &["region=eu", "nodeCount=5"],
                Ok(Some("upgrade")),
            ),
            (
                "a change that runs update is refused",
                ALL,
                given.clone(),
                IDLE,
                &["region=eu", "nodeCount=5"],
                Err(vec![Code::UpgradeWithChange]),
            ),
            (
                "a change that runs a triggered plan is refused",
                ALL,
                given.clone(),
                IDLE,
                &["region=eu", "backup/enabled=true"],
                Err(vec![Code::UpgradeWithChange]),
            ),
            (
                "changes that run two plans are refused",
                ALL,
                given.clone(),
                IDLE,
                &["region=eu", "nodeCount=5", "backup/enabled=true"],
                Err(vec![Code::TriggerConflict]),
            ),
            (
                "a set value the new version drops is refused (the preflight)",
                ALL,
                json!({"zone": "z1", "removed": "x"}),
                IDLE,
                &["region=eu"],
                Err(vec![Code::ValueDropped]),
            ),
            (
                "a default value the new version drops is no change",
                ALL,
                json!({"zone": "z1"}),
                IDLE,
                &["region=eu"],
                Ok(Some("upgrade")),
            ),
            (
                "a new immutable parameter without default needs a value",
                ALL,
                given.clone(),
                IDLE,
                &[],
                Err(vec![Code::ImmutableUnset]),
            ),
            (
                "a parameter that becomes immutable needs a value",
                ALL,
                json!({}),
                IDLE,
                &["region=eu"],
                Err(vec![Code::ImmutableUnset]),
            ),
            (
                "giving both a value is allowed",
                ALL,
                json!({}),
                IDLE,
                &["region=eu", "zone=z2"],
                Ok(Some("upgrade")),
            ),
            (
                "an immutable value cannot change in an upgrade (stricter than KUDO)",
                ALL,
                json!({"clusterName": "c9", "zone": "z1"}),
                IDLE,
                &["region=eu", "cluster=c2"],
                Err(vec![Code::ImmutableChanged, Code::UpgradeWithChange]),
            ),
            (
                "no upgrade while deleting",
                ALL,
                given.clone(),
                State {
                    deleting: true,
                    in_progress: None,
                },
                &["region=eu"],
                Err(vec![Code::Deleting]),
            ),
            (
                "no upgrade while a plan runs",
                ALL,
                given.clone(),
                State {
                    deleting: false,
                    in_progress: Some("deploy"),
                },
                &["region=eu"],
                Err(vec![Code::PlanInProgress]),
            ),
            (
                "no plan to run it",
                &["backup-update"],
                given.clone(),
                IDLE,
                &["region=eu"],
                Err(vec![Code::UnknownPlan]),
            ),
        ];
        for (rule, plans, installed, state, overrides, want) in cases {
            let got = outcome(upgrade_with(
                &v1(ALL),
                &v2(plans),
                installed,
                state,
                overrides,
            ));
            let want = want.map(|p| p.map(String::from));
            assert_eq!(got, want, "rule: {rule}");
        }
    }

    #[test]
    fn an_upgrade_reports_the_changes_given_with_it_and_the_migration() {
        let installed = json!({"clusterName": "c9", "zone": "z1", "removed": "x"});
        let d = upgrade_allowing(
            &v1(ALL),
            &v2(&["deploy", "upgrade"]),
            installed,
            IDLE,
            &["region=eu", "nodeCount=5"],
            &Allow {
                drop: vec!["/removed".into()],
                force: false,
            },
        )
        .unwrap();
        let let_go: Vec<&Diagnostic> = d
            .warnings
            .iter()
            .filter(|w| w.code == Code::ValueDropped)
            .collect();
        assert_eq!(let_go.len(), 1, "{:?}", d.warnings);
        assert!(let_go[0].message.contains("allowed by --allow-drop"));
        let changed: Vec<(&str, &str)> = d
            .changes
            .iter()
            .map(|c| (c.pointer.as_str(), c.plan.as_str()))
            .collect();
        assert_eq!(
            changed,
            [("/nodeCount", "deploy")],
            "the needed /region runs no plan"
        );
        assert_eq!(
            d.explicit,
            json!({"cluster": "c9", "zone": "z1", "region": "eu", "nodeCount": 5})
        );
        let report = d.report.unwrap();
        assert_eq!(report.moved[0].to, "/cluster");
        assert_eq!(report.dropped[0].pointer, "/removed");
    }

    #[test]
    fn an_upgrade_whose_values_are_left_as_installed_migrates_them() {
        let from = v1(ALL);
        let to = v2(ALL);
        let stored = json!({"clusterName": "c9", "zone": "z1", "region": "eu"});
        let i = Installed {
            version: &from,
            values: &stored,
            kept: None,
            secrets_elsewhere: false,
            deleting: false,
            in_progress: None,
        };
        // region is not a parameter of v1: migration keeps it only if v2 has it (it does).
        let d = upgrade(&i, &to, Proposal::Values(&stored), &Allow::NONE).unwrap();
        assert_eq!(
            d.explicit,
            json!({"cluster": "c9", "zone": "z1", "region": "eu"})
        );
        assert_eq!(d.plan.as_deref(), Some("upgrade"));
        assert!(d.changes.is_empty());
    }

    /// One parameter set by the user, two left to their defaults: `level` (mutable, default
    /// `INFO` then `WARN`) and `name` (immutable, default `a`, then `b`, then `c`).
    fn defaults_version(name: &str, level: &str, id: &str) -> Version {
        version(
            name,
            json!({"type": "object", "properties": {
                "nodeCount": {"type": "integer", "default": 3},
                "level": {"type": "string", "default": level},
                "name": {"type": "string", "immutable": true, "default": id},
                "image": {"type": "object", "trigger": "deploy", "properties": {
                    "tag": {"type": "string", "default": format!("{level}-tag")}}}
            }}),
            ALL,
        )
    }

    #[test]
    fn an_upgrade_takes_the_new_defaults_and_keeps_installed_immutable_ones() {
        let v1 = defaults_version("db-1.0.0", "INFO", "a");
        let v2 = defaults_version("db-2.0.0", "WARN", "b");
        let v3 = defaults_version("db-3.0.0", "ERROR", "c");
        let installed = install(
            &v1,
            Proposal::Edits {
                files: &[],
                overrides: &args(&["nodeCount=4"]),
                resets: &[],
            },
        )
        .unwrap();
        // Only what the user set is stored.
        assert_eq!(installed.explicit, json!({"nodeCount": 4}));
        assert_eq!(installed.kept, json!({}));

        // Left as installed, through the webhook (the complete spec.parameters) and the CLI.
        for proposal in [Proposal::Values(&installed.explicit), Proposal::NONE] {
            let i = Installed::at_rest(&v1, &installed.explicit);
            let d = upgrade(&i, &v2, proposal, &Allow::NONE).unwrap();
            assert_eq!(d.explicit, json!({"nodeCount": 4}));
            let v = d.values.value();
            assert_eq!(v["level"], "WARN", "a mutable default follows the version");
            assert_eq!(v["image"]["tag"], "WARN-tag");
            assert_eq!(v["name"], "a", "an immutable default stays as installed");
            assert_eq!(d.kept, json!({"name": "a"}), "kept, not a user value");
            // New defaults are no change given with the upgrade: the upgrade plan runs.
            assert_eq!(d.plan.as_deref(), Some("upgrade"));
            assert!(d.changes.is_empty(), "{:?}", d.changes);
        }

        // The next upgrade keeps it again; an update leaves it.
        let i = Installed::at_rest(&v1, &installed.explicit);
        let d2 = upgrade(&i, &v2, Proposal::NONE, &Allow::NONE).unwrap();
        let i = Installed {
            kept: Some(&d2.kept),
            secrets_elsewhere: false,
            ..Installed::at_rest(&v2, &d2.explicit)
        };
        let d3 = upgrade(&i, &v3, Proposal::NONE, &Allow::NONE).unwrap();
        assert_eq!(d3.values.value()["name"], "a");
        assert_eq!(d3.values.value()["level"], "ERROR");
        assert_eq!(d3.kept, json!({"name": "a"}));
        let i = Installed {
            kept: Some(&d3.kept),
            secrets_elsewhere: false,
            ..Installed::at_rest(&v3, &d3.explicit)
        };
        let u = update(
            &i,
            Proposal::Edits {
                files: &[],
                overrides: &args(&["level=DEBUG"]),
                resets: &[],
            },
        )
        .unwrap();
        assert_eq!(u.kept, json!({"name": "a"}));
        assert_eq!(u.values.value()["name"], "a");
        assert_eq!(u.explicit, json!({"nodeCount": 4, "level": "DEBUG"}));
        // Changing the kept value is an immutable change like any other.
        let err = update(
            &i,
            Proposal::Edits {
                files: &[],
                overrides: &args(&["name=z"]),
                resets: &[],
            },
        )
        .unwrap_err();
        assert_eq!(err[0].code, Code::ImmutableChanged);
        // And so is giving a new value with the upgrade.
        let i = Installed::at_rest(&v1, &installed.explicit);
        let err = upgrade(
            &i,
            &v2,
            Proposal::Edits {
                files: &[],
                overrides: &args(&["name=b"]),
                resets: &[],
            },
            &Allow::NONE,
        )
        .unwrap_err();
        assert!(
            err.iter().any(|d| d.code == Code::ImmutableChanged),
            "{err:?}"
        );
    }

    #[test]
    fn a_value_the_new_version_has_no_default_for_keeps_the_one_the_instance_ran_with() {
        let v1 = version(
            "op-1.0.0",
            json!({"type": "object", "properties": {
                "BACKUP_ENABLED": {"type": "boolean", "default": false},
                "LEVEL": {"type": "string", "default": "INFO"}}}),
            ALL,
        );
        let v2 = version(
            "op-2.0.0",
            json!({"type": "object", "properties": {
                "backup": {"type": "object", "required": ["enabled"], "properties": {
                    "enabled": {"type": "boolean", "oldName": "BACKUP_ENABLED"}}},
                "level": {"type": "string", "default": "WARN", "oldName": "LEVEL"}}}),
            ALL,
        );
        let stored = json!({});
        let d = upgrade(
            &Installed::at_rest(&v1, &stored),
            &v2,
            Proposal::NONE,
            &Allow::NONE,
        )
        .unwrap();
        assert_eq!(d.values.value()["backup"]["enabled"], false);
        assert_eq!(d.explicit, json!({"backup": {"enabled": false}}));
        assert_eq!(
            d.values.value()["level"],
            "WARN",
            "a new default still wins"
        );
    }

    fn reset_with(v: &Version, installed: Value, state: State, resets: &[&str]) -> Verdict {
        let r = self::resets(resets);
        let i = state.of(v, &installed);
        update(
            &i,
            Proposal::Edits {
                files: &[],
                overrides: &[],
                resets: &r,
            },
        )
    }

    /// `--reset`: (rule, installed, state, resets, outcome, stored after).
    #[test]
    fn reset_rules() {
        type Case = (
            &'static str,
            Value,
            State,
            &'static [&'static str],
            Result<Option<&'static str>, Vec<Code>>,
            Value,
        );
        let busy = State {
            deleting: false,
            in_progress: Some("backup-update"),
        };
        let cases: Vec<Case> = vec![
            (
                "a reset of a value that differs from its default runs its plan",
                json!({"nodeCount": 5, "zone": "z1"}),
                IDLE,
                &["nodeCount"],
                Ok(Some("update")),
                json!({"zone": "z1"}),
            ),
            (
                "a reset of a value equal to its default runs no plan, and is stored",
                json!({"nodeCount": 3}),
                IDLE,
                &["/nodeCount"],
                Ok(None),
                json!({}),
            ),
            (
                "a reset of a value that is not set is no change",
                json!({}),
                IDLE,
                &["nodeCount"],
                Ok(None),
                json!({}),
            ),
            (
                "a reset under a trigger runs that plan",
                json!({"backup": {"enabled": true}}),
                IDLE,
                &["backup/enabled"],
                Ok(Some("backup-update")),
                json!({"backup": {}}),
            ),
            (
                "an immutable value equal to its default may be reset",
                json!({"clusterName": "c1"}),
                IDLE,
                &["clusterName"],
                Ok(None),
                json!({}),
            ),
            (
                "two resets that run two plans are refused",
                json!({"nodeCount": 5, "backup": {"enabled": true}}),
                IDLE,
                &["nodeCount", "backup"],
                Err(vec![Code::TriggerConflict]),
                json!(null),
            ),
            (
                "an immutable value that differs from its default cannot be reset",
                json!({"clusterName": "c9"}),
                IDLE,
                &["clusterName"],
                Err(vec![Code::ImmutableChanged]),
                json!(null),
            ),
            (
                "a reset that runs another plan while one runs is refused",
                json!({"nodeCount": 5}),
                busy,
                &["nodeCount"],
                Err(vec![Code::PlanInProgress]),
                json!(null),
            ),
            (
                "no reset while deleting",
                json!({"nodeCount": 5}),
                State {
                    deleting: true,
                    in_progress: None,
                },
                &["nodeCount"],
                Err(vec![Code::Deleting]),
                json!(null),
            ),
            (
                "a pointer the schema does not have is refused",
                json!({"nodeCount": 5}),
                IDLE,
                &["nodeCont"],
                Err(vec![Code::UnknownParameter]),
                json!(null),
            ),
        ];
        for (rule, installed, state, resets, want, stored) in cases {
            let got = reset_with(&v1(ALL), installed, state, resets);
            let explicit = got.as_ref().map(|d| d.explicit.clone()).ok();
            let want = want.map(|p| p.map(String::from));
            assert_eq!(outcome(got), want, "rule: {rule}");
            if let Some(explicit) = explicit {
                assert_eq!(explicit, stored, "rule: {rule}");
            }
        }
    }

    #[test]
    fn resets_come_before_files_and_overrides() {
        let v = v1(ALL);
        let installed = json!({"nodeCount": 5, "zone": "z1"});
        let (o, r) = (args(&["nodeCount=7"]), resets(&["nodeCount", "zone"]));
        let i = Installed::at_rest(&v, &installed);
        let d = update(
            &i,
            Proposal::Edits {
                files: &[],
                overrides: &o,
                resets: &r,
            },
        )
        .unwrap();
        assert_eq!(d.explicit, json!({"nodeCount": 7}));
        assert_eq!(d.plan.as_deref(), Some("update"));
        // In an upgrade too, the resets come before the overrides.
        let from = v1(ALL);
        let to = v2(ALL);
        let installed = json!({"clusterName": "c9", "zone": "z1", "nodeCount": 3});
        let (o, r) = (args(&["region=eu"]), resets(&["nodeCount"]));
        let i = Installed::at_rest(&from, &installed);
        let d = upgrade(
            &i,
            &to,
            Proposal::Edits {
                files: &[],
                overrides: &o,
                resets: &r,
            },
            &Allow::NONE,
        )
        .unwrap();
        assert_eq!(
            d.explicit,
            json!({"cluster": "c9", "zone": "z1", "region": "eu"})
        );
    }

    /// A direct trigger (`kudo plan trigger`): (rule, plans, state, plan, alongside, outcome).
    #[test]
    fn direct_trigger_rules() {
        type Case = (
            &'static str,
            State,
            &'static str,
            Option<&'static str>,
            Result<(), Vec<Code>>,
        );
        let busy = |plan| State {
            deleting: false,
            in_progress: Some(plan),
        };
        let cases: Vec<Case> = vec![
            (
                "an idle Instance runs it",
                IDLE,
                "backup-update",
                None,
                Ok(()),
            ),
            // KUDO: "overriding an existing plan directly is NOT allowed".
            (
                "another plan while one is scheduled or running is refused",
                busy("deploy"),
                "backup-update",
                None,
                Err(vec![Code::PlanInProgress]),
            ),
            (
                "the plan that runs is restarted",
                busy("backup-update"),
                "backup-update",
                None,
                Ok(()),
            ),
            (
                "a plan the operator does not have is refused",
                IDLE,
                "backup",
                None,
                Err(vec![Code::UnknownPlan]),
            ),
            (
                "no trigger while deleting",
                State {
                    deleting: true,
                    in_progress: None,
                },
                "update",
                None,
                Err(vec![Code::Deleting]),
            ),
            (
                "not together with a change that runs a plan",
                IDLE,
                "backup-update",
                Some("update"),
                Err(vec![Code::TriggerConflict]),
            ),
            (
                "every reason at once",
                State {
                    deleting: true,
                    in_progress: Some("deploy"),
                },
                "nope",
                Some("update"),
                Err(vec![
                    Code::UnknownPlan,
                    Code::Deleting,
                    Code::PlanInProgress,
                    Code::TriggerConflict,
                ]),
            ),
        ];
        let v = v1(ALL);
        let values = json!({});
        for (rule, state, plan, alongside, want) in cases {
            let i = state.of(&v, &values);
            let got =
                trigger_plan(&i, plan, alongside).map_err(|d| d.iter().map(|d| d.code).collect());
            assert_eq!(got, want, "rule: {rule}");
        }
    }

    #[test]
    fn a_write_that_triggers_a_plan_is_decided_with_its_other_changes() {
        let v = v1(ALL);
        let stored = json!({"nodeCount": 4});
        let i = Installed::at_rest(&v, &stored);
        // Only the trigger: the plan is the one triggered.
        let d = with_trigger(&i, "backup-update", update(&i, Proposal::Values(&stored)));
        assert_eq!(outcome(d), Ok(Some("backup-update".into())));
        // The trigger and a change that runs `update`, in one write.
        let changed = json!({"nodeCount": 5});
        let d = with_trigger(&i, "backup-update", update(&i, Proposal::Values(&changed)));
        assert_eq!(outcome(d), Err(vec![Code::TriggerConflict]));
        // Problems of both are listed.
        let busy = Installed {
            in_progress: Some("deploy"),
            ..i
        };
        let invalid = json!({"nodeCount": 0});
        let d = with_trigger(
            &busy,
            "backup-update",
            update(&busy, Proposal::Values(&invalid)),
        );
        assert_eq!(
            outcome(d),
            Err(vec![
                Code::OutOfRange,
                Code::PlanInProgress,
                Code::PlanInProgress
            ])
        );
    }

    #[test]
    fn a_decision_never_prints_its_values() {
        let o = args(&["password=hunter2-secret"]);
        let d = install(
            &v1(ALL),
            Proposal::Edits {
                files: &[],
                overrides: &o,
                resets: &[],
            },
        )
        .unwrap();
        assert!(!format!("{d:?}").contains("hunter2"));
    }
}
