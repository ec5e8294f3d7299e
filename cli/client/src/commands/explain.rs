//! `kudo explain --instance NAME`: what [`kudo_pkg::explain`] needs of an installed Instance,
//! read and nothing written: the package rebuilt from its OperatorVersion, its
//! `spec.parameters` and `spec.immutableDefaults` (typed by the schema), and the pointers each
//! Secret of `spec.parametersFrom` sets.
//!
//! An entry with a `pointer` sets that pointer: its Secret is not read. An entry without one
//! holds a document of values, and which pointers it sets is in the document only: that Secret
//! is read, the pointers of its leaves kept and its text dropped at once. A Secret that cannot
//! be read (missing, forbidden) is reported as such ([`SecretSet::sets`] is `Err`), not an error:
//! the explanation then says which values it may set.

use k8s_openapi::api::core::v1::Secret;
use kube::Api;
use kudo_pkg::explain::SecretSet;
use kudo_policy::secrets::SecretSource;
use serde_json::{Map, Value};

use super::{Error, Result, Target, instance_and_version, operator_version, package_of};

/// An Instance as `kudo explain` reads it.
pub struct Stored {
    /// The Instance's OperatorVersion name.
    pub operator_version: String,
    /// Its package, rebuilt from the OperatorVersion.
    pub package: kudo_pkg::Package,
    /// `spec.parameters`, typed by the schema (an empty object when absent).
    pub parameters: Value,
    /// `spec.immutableDefaults`, typed by the schema.
    pub kept: Option<Value>,
    /// What each Secret of `spec.parametersFrom` sets, in order.
    pub secrets: Vec<SecretSet>,
}

/// `spec.parameters` may hold a `writeOnly` value (stored before kudo moved them to Secrets):
/// `Debug` shows which pointers are set, never a value.
impl std::fmt::Debug for Stored {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stored")
            .field("operator_version", &self.operator_version)
            .field("parameters", &kudo_diag::pointer::leaves(&self.parameters))
            .field("kept", &self.kept.as_ref().map(kudo_diag::pointer::leaves))
            .field("secrets", &self.secrets)
            .finish_non_exhaustive()
    }
}

impl Stored {
    /// The Instance as [`kudo_pkg::explain::explain`] takes it.
    pub fn instance(&self) -> kudo_pkg::explain::Instance<'_> {
        kudo_pkg::explain::Instance {
            parameters: &self.parameters,
            kept: self.kept.as_ref(),
            secrets: &self.secrets,
        }
    }
}

/// Reads Instance `name`, its OperatorVersion, and the pointers its Secrets set.
pub async fn read(t: &Target, name: &str) -> Result<Stored> {
    let (inst, ov_ref) = instance_and_version(t, name).await?;
    let package = package_of(&operator_version(t, &ov_ref).await?)?;
    let schema = package.schema();
    let parameters = match &inst.spec.parameters {
        Some(v @ Value::Object(_)) => kudo_policy::typing::typed_by_schema(schema, v),
        _ => Value::Object(Map::new()),
    };
    let kept = inst
        .spec
        .immutable_defaults
        .as_ref()
        .map(|v| kudo_policy::typing::typed_by_schema(schema, v));
    let listed = serde_json::to_value(&inst.spec.parameters_from)
        .map_err(|e| Error::Internal(format!("spec.parametersFrom as JSON: {e}")))?;
    let sources = SecretSource::list(Some(&listed)).map_err(Error::Internal)?;
    let mut secrets = Vec::new();
    for s in &sources {
        let sets = match &s.pointer {
            Some(p) => Ok(vec![p.clone()]),
            None => document_pointers(t, s).await?,
        };
        secrets.push(SecretSet {
            secret: s.name.clone(),
            sets,
        });
    }
    Ok(Stored {
        operator_version: ov_ref.name,
        package,
        parameters,
        kept,
        secrets,
    })
}

/// The pointers the document in `s` sets (its leaves); `Err` says why they are not known (the
/// Secret or its key is missing, reading it is forbidden, it holds no document of values).
/// The document's text is dropped here.
async fn document_pointers(
    t: &Target,
    s: &SecretSource,
) -> Result<std::result::Result<Vec<String>, String>> {
    let api: Api<Secret> = Api::namespaced(t.client.clone(), &t.namespace);
    let secret = match api.get_opt(&s.name).await {
        Ok(Some(secret)) => secret,
        Ok(None) => return Ok(Err("not found".into())),
        Err(kube::Error::Api(status)) if status.code == 403 => {
            return Ok(Err(format!("reading it is forbidden ({})", status.message)));
        }
        Err(e) => return Err(t.api("get", "Secret", &s.name)(e)),
    };
    let Some(bytes) = secret.data.and_then(|mut d| d.remove(&s.key)) else {
        return Ok(Err(format!("no key {}", s.key)));
    };
    let document = String::from_utf8(bytes.0)
        .ok()
        .and_then(|text| kudo_yaml::document::parse_value(&text).ok());
    match document {
        Some(v @ Value::Object(_)) => Ok(Ok(kudo_diag::pointer::leaves(&v)
            .into_iter()
            .filter(|p| !p.is_empty())
            .collect())),
        Some(Value::Null) => Ok(Ok(Vec::new())),
        _ => Ok(Err(format!(
            "key {} is not a YAML or JSON object of parameter values",
            s.key
        ))),
    }
}
