//! `kudo install PACKAGE`: the parameters computed and validated client-side first, then the
//! Instance's ServiceAccount and its bindings ([`super::service_account`], with the user's own
//! rights), the Operator and OperatorVersion when missing, then the Instance naming that
//! ServiceAccount. `writeOnly` values go to a Secret the Instance names in
//! `spec.parametersFrom` (`commands::secrets`), created just before the Instance and deleted
//! again when the Instance is refused.

use kube::api::ObjectMeta;
use kudo_pkg::Package;
use kudo_policy::change::{self, Decision};
use serde_json::Value;

use super::{
    Error, Inputs, Result, Target, create_missing, create_operator, create_operator_version,
    dependencies, post_params, same_operator_version, secrets, service_account,
};
use kudo_crd::common::ObjectRef;
use kudo_crd::labels;
use kudo_crd::package;
use kudo_crd::v1beta2::{Instance, InstanceSpec};

/// What to install.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    /// The package.
    pub package: &'a Package,
    /// Its KudoOperator dependencies, resolved ([`kudo_pkg::dependency::resolve_with`], e.g.
    /// by name from a repository); `None`: resolved here from paths
    /// ([`kudo_pkg::dependency::resolve`]).
    pub dependencies: Option<&'a [kudo_pkg::dependency::Dependency]>,
    /// The Instance's name ([`instance_name`] when `None`).
    pub instance: Option<&'a str>,
    /// `-P` and `-p`.
    pub inputs: Inputs<'a>,
    /// Write nothing: every check is made, and the Instance is sent as a server-side dry run
    /// when its OperatorVersion exists (the API server and kudo's admission webhook check it).
    pub dry_run: bool,
    /// The ServiceAccount the manager acts as for the Instance (`spec.serviceAccountName`);
    /// `None`: [`labels::DEFAULT_SERVICE_ACCOUNT`].
    pub service_account: Option<&'a str>,
    /// Create the namespace when it does not exist (with `dry_run`: only check that the user
    /// may, and say it would be created).
    pub create_namespace: bool,
    /// The check of the images the Instance runs ([`super::ImageGate`]); `None`: not checked.
    pub images: Option<&'a dyn super::ImageGate>,
}

/// What an install made: the result of [`install`] (not the policy's installed baseline,
/// `kudo_policy::change::Installed`).
#[derive(Clone)]
pub struct Installation {
    /// The Instance as the API server created it (its `metadata.generation` is what `--wait`
    /// waits for).
    pub instance: Instance,
    /// Whether the Operator was created (else it existed).
    pub created_operator: bool,
    /// Whether the OperatorVersion was created (else it existed, with the same spec).
    pub created_operator_version: bool,
    /// The parameters (warnings included).
    pub change: Decision,
    /// The Instance's ServiceAccount and its bindings, the OperatorVersions of dependencies,
    /// then the Operator and the OperatorVersion, that were (or, with `dry_run`, would be)
    /// created. (A dependency's Operator is created too when missing.)
    pub created: Vec<Value>,
    /// With `dry_run`: whether the API server checked the Instance (it can only when its
    /// OperatorVersion exists already). Always true without `dry_run`.
    pub server_checked: bool,
}

/// The Instance and the objects hold values, secrets included: `Debug` shows names and pointers.
impl std::fmt::Debug for Installation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let created: Vec<String> = self
            .created
            .iter()
            .map(|o| {
                format!(
                    "{} {}",
                    o["kind"].as_str().unwrap_or_default(),
                    o["metadata"]["name"].as_str().unwrap_or_default()
                )
            })
            .collect();
        f.debug_struct("Installation")
            .field("instance", &super::instance_shape(&self.instance))
            .field("created_operator", &self.created_operator)
            .field("created_operator_version", &self.created_operator_version)
            .field("change", &self.change)
            .field("created", &created)
            .field("server_checked", &self.server_checked)
            .finish()
    }
}

/// The default Instance name of a package: `{operator}-instance`.
pub fn instance_name(pkg: &Package) -> String {
    format!("{}-instance", pkg.operator().name)
}

/// The Instance of `pkg` named `name` in `namespace`: `kudo.dev/v1beta2`, labelled with its
/// operator, running the package's OperatorVersion, with the explicit values `parameters`
/// (none: no `spec.parameters`).
pub fn instance_object(pkg: &Package, namespace: &str, name: &str, parameters: &Value) -> Instance {
    let op = &pkg.operator().name;
    let ov = pkg.operator_version_name();
    let empty = parameters.as_object().is_some_and(|m| m.is_empty());
    Instance {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some(namespace.into()),
            labels: Some([(labels::OPERATOR.to_string(), op.clone())].into()),
            ..Default::default()
        },
        spec: InstanceSpec {
            operator_version: Some(ObjectRef {
                kind: None,
                name: Some(ov),
                namespace: None,
            }),
            parameters: (!empty).then(|| parameters.clone()),
            ..Default::default()
        },
        status: None,
    }
}

/// What installing `pkg` with `inputs` decides (values, plan), with no cluster: refused when the
/// parameters are invalid, each diagnostic saying where its rule is written.
pub fn check(pkg: &Package, inputs: &Inputs<'_>) -> Result<Decision> {
    let version = pkg
        .policy_version()
        .map_err(|d| Error::Parameters(pkg.located(d)))?;
    change::install(&version, inputs.proposal()).map_err(|d| Error::Parameters(pkg.located(d)))
}

/// Installs `req.package` as an Instance. Refused, with nothing written, when the parameters
/// are invalid ([`Error::Parameters`]), the Instance exists ([`Error::InstanceExists`]), the
/// package's OperatorVersion exists with another spec ([`Error::OperatorVersionDiffers`]) or
/// the user may not give the Instance's ServiceAccount the rights the package needs
/// ([`Error::Grant`]). When a later write fails, the ServiceAccount and bindings made here are
/// removed again.
///
/// Prepare (the decision, then every read and check), the ServiceAccount and its bindings,
/// then perform (`create`); a failure there undoes the ServiceAccount's objects.
pub async fn install(t: &Target, req: &Request<'_>) -> Result<Installation> {
    let pkg = req.package;
    let mut change = check(pkg, &req.inputs)?;
    let name = req
        .instance
        .map(String::from)
        .unwrap_or_else(|| instance_name(pkg));
    if t.instances()
        .get_opt(&name)
        .await
        .map_err(t.api("get", "Instance", &name))?
        .is_some()
    {
        return Err(exists(t, &name));
    }
    // The images it runs, checked and pinned before anything is written.
    let images = super::gate_images(req.images, pkg, change.values.value(), &name, &t.namespace)?;
    // Every dependency's objects checked (read only) before anything is written.
    let resolved = super::resolved(pkg, req.dependencies)?;
    let deps = dependencies(t, &resolved).await?;
    let (operator, ov) = package::objects_with(pkg, &t.namespace, &resolved);
    let op_name = operator.metadata.name.clone().unwrap_or_default();
    let has_operator = t
        .operators()
        .get_opt(&op_name)
        .await
        .map_err(t.api("get", "Operator", &op_name))?
        .is_some();
    // The same version installed under its other name is the one the Instance runs.
    let existing_ov = same_operator_version(t, &ov).await?;
    let has_ov = existing_ov.is_some();
    let service_account = req
        .service_account
        .unwrap_or(labels::DEFAULT_SERVICE_ACCOUNT);
    let packages = packages(pkg, change.values.value(), &resolved);
    let reach = service_account::reach(t, &packages, &name).await;
    let grants = service_account::objects(&t.namespace, service_account, &reach);
    let namespace = match req.create_namespace {
        true => ensure_namespace(t, req.dry_run).await?,
        false => None,
    };
    let prepared = grant(
        t,
        req,
        service_account,
        &packages,
        &grants,
        namespace.is_some(),
    )
    .await?;
    let mut created: Vec<Value> = namespace.into_iter().collect();
    created.extend(prepared.created.iter().cloned());
    change.warnings.extend(prepared.warnings.iter().map(|w| {
        kudo_diag::diag::Diagnostic::warning(kudo_diag::diag::Code::NotGranted, "", w.clone())
    }));
    for (_, dep_ov, dep_has_ov) in &deps {
        if !dep_has_ov {
            created.push(serde_json::to_value(dep_ov).unwrap_or_default());
        }
    }
    if !has_operator {
        created.push(serde_json::to_value(&operator).unwrap_or_default());
    }
    if !has_ov {
        created.push(serde_json::to_value(&ov).unwrap_or_default());
    }
    let (mut object, secret) = instance_and_secret(pkg, &t.namespace, &name, &change)?;
    if let Some(images) = images {
        object
            .metadata
            .annotations
            .get_or_insert_with(Default::default)
            .insert(labels::IMAGES.to_string(), images);
    }
    object.spec.service_account_name = Some(service_account.to_string());
    if let (Some(existing), Some(r)) = (&existing_ov, object.spec.operator_version.as_mut()) {
        r.name = Some(existing.clone());
    }
    let done = |instance, server_checked| Installation {
        instance,
        created_operator: !has_operator,
        created_operator_version: !has_ov,
        change,
        created,
        server_checked,
    };
    if req.dry_run {
        let (instance, server_checked) = dry_run(t, object, has_ov).await?;
        return Ok(done(instance, server_checked));
    }
    let written = async {
        create_missing(t, &deps).await?;
        if !has_operator {
            create_operator(t, &operator).await?;
        }
        if !has_ov {
            create_operator_version(t, &ov).await?;
        }
        create(t, &object, secret.as_ref()).await
    };
    let instance = match written.await {
        Ok(i) => i,
        Err(e) => {
            prepared.undo(t).await;
            return Err(e);
        }
    };
    if let Some((s, _)) = &secret {
        secrets::own(t, s, &instance).await?;
    }
    Ok(done(instance, true))
}

/// [`Error::InstanceExists`] for Instance `name`.
fn exists(t: &Target, name: &str) -> Error {
    Error::InstanceExists {
        namespace: t.namespace.clone(),
        name: name.to_string(),
    }
}

/// The packages the Instance's ServiceAccount acts for, each with its values: `pkg` with
/// `values`, and each dependency with its defaults (a dependency's parameters come from its
/// parent's parameterFile, rendered by the manager: its defaults stand for them here).
fn packages<'p>(
    pkg: &'p Package,
    values: &Value,
    resolved: &'p [kudo_pkg::dependency::Dependency],
) -> Vec<(&'p Package, Value)> {
    let mut packages = vec![(pkg, values.clone())];
    for dep in resolved {
        let values = dep
            .package
            .policy_version()
            .map(|v| {
                v.effective(&Value::Object(Default::default()))
                    .0
                    .into_value()
            })
            .unwrap_or_default();
        packages.push((&dep.package, values));
    }
    packages
}

/// The ServiceAccount `service_account` and the bindings `grants` that are missing, created
/// (with `dry_run`: found). In a namespace still to make (`new_namespace`), all of them, and
/// no dry run can be made there. A ServiceAccount whose bindings all exist gets nothing from
/// this install: the rights its Pipe tasks take are asked of the API server before anything
/// is written ([`Error::Lacks`]).
async fn grant(
    t: &Target,
    req: &Request<'_>,
    service_account: &str,
    packages: &[(&Package, Value)],
    grants: &[(Value, String)],
    new_namespace: bool,
) -> Result<service_account::Prepared> {
    if new_namespace && req.dry_run {
        return Ok(service_account::Prepared {
            created: grants.iter().map(|(o, _)| o.clone()).collect(),
            ..Default::default()
        });
    }
    let missing = service_account::missing(t, service_account, grants).await?;
    if missing.created.is_empty() {
        let all: Vec<&Package> = packages.iter().map(|(p, _)| *p).collect();
        if let Some((tasks, rights)) =
            service_account::pipe_rights_lacking(t, service_account, &all).await?
        {
            return Err(Error::Lacks {
                service_account: format!("{}/{service_account}", t.namespace),
                namespace: t.namespace.clone(),
                tasks,
                rights,
            });
        }
    }
    match req.dry_run {
        true => Ok(missing),
        false => service_account::create_missing(t, service_account, grants, &missing).await,
    }
}

/// The Instance of `pkg` named `name` holding the public values of `change`, and kudo's
/// Secret of its `writeOnly` values (a new name, and the values), which it names in
/// `spec.parametersFrom`: never a secret value in the Instance.
fn instance_and_secret(
    pkg: &Package,
    namespace: &str,
    name: &str,
    change: &Decision,
) -> Result<(Instance, Option<(String, Value)>)> {
    let (public, secret) = kudo_policy::secrets::split(pkg.schema(), &change.explicit);
    let mut object = instance_object(pkg, namespace, name, &public);
    let secret = match secret {
        Some(values) => Some((secrets::new_name(name)?, values)),
        None => None,
    };
    if let Some((s, _)) = &secret {
        object.spec.parameters_from = vec![secrets::entry(s)];
    }
    Ok((object, secret))
}

/// With `dry_run`: the Instance sent as a server-side dry run when its OperatorVersion exists
/// (`has_ov`: the API server and kudo's admission webhook check it), else as it is; and
/// whether the server checked it.
async fn dry_run(t: &Target, object: Instance, has_ov: bool) -> Result<(Instance, bool)> {
    if !has_ov {
        return Ok((object, false));
    }
    let name = object.metadata.name.clone().unwrap_or_default();
    let params = kube::api::PostParams {
        dry_run: true,
        ..post_params()
    };
    match t.instances().create(&params, &object).await {
        Ok(i) => Ok((i, true)),
        Err(kube::Error::Api(s)) if s.code == 409 => Err(exists(t, &name)),
        Err(e) => Err(t.api("create (dry run)", "Instance", &name)(e)),
    }
}

/// Creates kudo's Secret `secret` (its name and values), then the Instance `object`; the
/// Secret is deleted again when the Instance is refused.
async fn create(
    t: &Target,
    object: &Instance,
    secret: Option<&(String, Value)>,
) -> Result<Instance> {
    let name = object.metadata.name.clone().unwrap_or_default();
    if let Some((s, values)) = secret {
        secrets::create(t, &name, s, None, values).await?;
    }
    match t.instances().create(&post_params(), object).await {
        Ok(i) => Ok(i),
        Err(e) => {
            if let Some((s, _)) = secret {
                secrets::delete(t, s).await?;
            }
            Err(match e {
                kube::Error::Api(s) if s.code == 409 => exists(t, &name),
                e => t.api("create", "Instance", &name)(e),
            })
        }
    }
}

/// Creates the target namespace when it is missing (`dry_run`: a server-side dry run, which
/// checks that the user may) and returns it; `None` when it exists. A user who may not read
/// namespaces is not stopped here: the create says whether the namespace exists (409) or may
/// not be made (403, then the writes that follow say what is missing).
async fn ensure_namespace(t: &Target, dry_run: bool) -> Result<Option<Value>> {
    use k8s_openapi::api::core::v1::Namespace;
    let api: kube::Api<Namespace> = kube::Api::all(t.client.clone());
    let api_err = |action| {
        let namespace = t.namespace.clone();
        move |source| Error::Api {
            action,
            kind: "Namespace",
            namespace: namespace.clone(),
            name: namespace,
            source: Box::new(source),
        }
    };
    let forbidden_to_read = match api.get_opt(&t.namespace).await {
        Ok(Some(_)) => return Ok(None),
        Ok(None) => false,
        Err(kube::Error::Api(s)) if s.code == 403 => true,
        Err(e) => return Err(api_err("get")(e)),
    };
    let object = Namespace {
        metadata: ObjectMeta {
            name: Some(t.namespace.clone()),
            ..Default::default()
        },
        ..Default::default()
    };
    let params = kube::api::PostParams {
        dry_run,
        ..post_params()
    };
    match api.create(&params, &object).await {
        Ok(_) => {
            let mut v = serde_json::to_value(&object).unwrap_or_default();
            v["apiVersion"] = "v1".into();
            v["kind"] = "Namespace".into();
            Ok(Some(v))
        }
        Err(kube::Error::Api(s)) if s.code == 409 => Ok(None),
        Err(kube::Error::Api(s)) if s.code == 403 && forbidden_to_read => Ok(None),
        Err(e) => Err(api_err("create")(e)),
    }
}
