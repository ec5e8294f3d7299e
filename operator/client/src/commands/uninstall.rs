//! `kudo uninstall --instance NAME`: deletes the Instance. The manager's finalizer
//! ([`kudo_crd::labels::FINALIZER`]) runs the `cleanup` plan before the Instance goes; `--wait`
//! polls until it is gone ([`super::wait::gone`]).

use kube::api::DeleteParams;

use super::{Result, Target};

/// Deletes Instance `name` ([`super::Error::NotFound`] when there is none).
pub async fn uninstall(t: &Target, name: &str) -> Result<()> {
    match t.instances().delete(name, &DeleteParams::default()).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(s)) if s.code == 404 => Err(t.not_found("Instance", name)),
        Err(e) => Err(t.api("delete", "Instance", name)(e)),
    }
}
