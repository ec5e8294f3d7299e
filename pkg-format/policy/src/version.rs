//! One operator version as the policy sees it ([`Version`]): its schema, compiled once, its
//! plans and the names an Instance may give it.

use serde_json::{Map, Value};

use crate::params::ParamSchema;
use crate::typing;
use crate::validate::Validator;
use crate::values::{Inputs, Values, effective, overlay};
use kudo_diag::diag::Diagnostic;

/// What the policy needs of one operator version: its parameter schema (compiled once) and its
/// plans. Built from a package (`kudo_pkg::Package::policy_version`) or from an OperatorVersion
/// object.
pub struct Version {
    /// The OperatorVersion's name (`{operator}-{version}`).
    pub name: String,
    /// The version (`spec.version`).
    pub version: String,
    /// The parameter schema (a v1beta1 package's, converted).
    pub schema: ParamSchema,
    /// `schema`, compiled.
    pub validator: Validator,
    /// The parameters `schema` marks `deprecated`, found once
    /// ([`crate::preflight::deprecations`]).
    pub deprecations: Vec<crate::preflight::Deprecated>,
    /// The plan names.
    pub plans: Vec<String>,
    /// Every name an Instance may give this version, `name` first (KUDO's two forms of an
    /// OperatorVersion's name): moving between them is no upgrade ([`Version::answers_to`]).
    pub names: Vec<String>,
}

impl std::fmt::Debug for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Version")
            .field("name", &self.name)
            .field("plans", &self.plans)
            .finish_non_exhaustive()
    }
}

impl Version {
    /// A version from its parts; `Err` when the schema does not compile.
    pub fn new(
        name: String,
        version: String,
        schema: ParamSchema,
        plans: Vec<String>,
    ) -> Result<Version, Vec<Diagnostic>> {
        let validator = Validator::new(&schema)?;
        Ok(Version {
            deprecations: crate::preflight::deprecations(&schema),
            names: vec![name.clone()],
            name,
            version,
            schema,
            validator,
            plans,
        })
    }

    /// The same version, also answering to `names` (the other forms of its name).
    pub fn with_names(mut self, names: impl IntoIterator<Item = String>) -> Version {
        for n in names {
            if !self.names.contains(&n) {
                self.names.push(n);
            }
        }
        self
    }

    /// True when an Instance naming `name` runs this version (in any form of its name).
    pub fn answers_to(&self, name: &str) -> bool {
        self.names.iter().any(|n| n == name)
    }

    /// True when the operator has plan `name`.
    pub fn has_plan(&self, name: &str) -> bool {
        self.plans.iter().any(|p| p == name)
    }

    pub(crate) fn plan_names(&self) -> Vec<&str> {
        self.plans.iter().map(String::as_str).collect()
    }

    /// Stored values (`spec.parameters`: v1beta2 values, or v1beta1 strings) typed by this
    /// version's schema, with the defaults filled in, and the problems met (not validated).
    pub fn effective(&self, stored: &Value) -> (Values, Vec<Diagnostic>) {
        self.effective_kept(stored, None)
    }

    /// [`Version::effective`] of an Instance that also keeps installed defaults
    /// (`spec.immutableDefaults`, [`crate::change::Decision::kept`]): they stand under the
    /// stored values and over this version's defaults.
    pub fn effective_kept(
        &self,
        stored: &Value,
        kept: Option<&Value>,
    ) -> (Values, Vec<Diagnostic>) {
        let kept = kept
            .map(|k| self.typed(k))
            .unwrap_or_else(|| Value::Object(Map::new()));
        let current = Inputs {
            current: Some(overlay(&kept, &self.typed(stored))),
            ..Default::default()
        };
        effective(&self.schema, &current)
    }

    /// Stored values typed by this version's schema (`"7"` -> 7 for an integer parameter).
    pub fn typed(&self, stored: &Value) -> Value {
        match stored {
            Value::Object(_) => typing::typed_by_schema(&self.schema, stored),
            _ => Value::Object(Map::new()),
        }
    }
}
