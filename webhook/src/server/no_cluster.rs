//! The stores of a webhook without a cluster: [`NoCluster`] and [`Offline`].

use std::sync::Arc;

use kudo_crd::convert::TypeSource;

use crate::admission::{OperatorVersions, StoreError};

/// The store of a webhook started without a cluster connection (`--no-cluster`): conversion
/// works (values it cannot type stay as they are), admission is refused with this reason.
pub struct NoCluster;

impl TypeSource for NoCluster {
    fn schema(&self, _: &str, _: &str) -> Option<kudo_policy::ParamSchema> {
        None
    }
}

impl OperatorVersions for NoCluster {
    fn ready(&self) -> Result<(), StoreError> {
        Err(StoreError::NoCluster)
    }
    fn get(
        &self,
        _: &str,
        _: &str,
    ) -> Result<Option<Arc<kudo_policy::change::Version>>, StoreError> {
        Err(StoreError::NoCluster)
    }
}

/// Like [`NoCluster`], with the reason the cluster cannot be reached.
pub struct Offline(pub String);

impl TypeSource for Offline {
    fn schema(&self, _: &str, _: &str) -> Option<kudo_policy::ParamSchema> {
        None
    }
}

impl OperatorVersions for Offline {
    fn ready(&self) -> Result<(), StoreError> {
        Err(StoreError::Offline(self.0.clone()))
    }
    fn get(
        &self,
        _: &str,
        _: &str,
    ) -> Result<Option<Arc<kudo_policy::change::Version>>, StoreError> {
        Err(StoreError::Offline(self.0.clone()))
    }
}
