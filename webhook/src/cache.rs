//! The watch-fed cache of OperatorVersions: what admission checks Instances against, and what
//! conversion types Instance values with.
//!
//! A decision never depends on how warm the cache is: an OperatorVersion the watch has not
//! delivered yet (the webhook just started, the object was just created) is read from the API
//! server directly, and only a 404 from it means "does not exist". What the direct read returns
//! is kept until the watch delivers the object.
//!
//! A `kube::runtime` reflector keeps every `kudo.dev/v1beta2` OperatorVersion of the cluster
//! (read as `DynamicObject`, so that an odd field in one of them never stops the watch). The
//! cache is ready once the first full list has arrived; a watch error after that keeps serving
//! what it has (the reflector retries with backoff) and is reported by `/readyz` only until the
//! next successful event. Compiled validators are kept per OperatorVersion and `resourceVersion`,
//! so a request never compiles a schema twice.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use futures::StreamExt;
use kube::api::{Api, ApiResource, DynamicObject};
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::{WatchStreamExt, watcher};
use kudo_crd::convert::TypeSource;
use kudo_crd::reference::{Identity, resolve};
use kudo_crd::v1beta2;

use crate::admission::{OperatorVersions, StoreError, version_from_object};
use kudo_policy::change::Version;

#[derive(Default)]
struct Health {
    synced: bool,
    last_error: Option<String>,
}

type Compiled = HashMap<(String, String), (Option<String>, Arc<Version>)>;

/// The cache. Cheap to share behind an `Arc`.
pub struct Cache {
    store: Store<DynamicObject>,
    resource: ApiResource,
    client: kube::Client,
    health: Arc<Mutex<Health>>,
    compiled: Mutex<Compiled>,
}

impl Cache {
    /// The cache, and the future that keeps it filled (spawn it).
    pub fn start(client: kube::Client) -> (Arc<Cache>, impl Future<Output = ()> + Send) {
        let resource = ApiResource::erase::<v1beta2::OperatorVersion>(&());
        let api: Api<DynamicObject> = Api::all_with(client.clone(), &resource);
        let writer = reflector::store::Writer::new(resource.clone());
        let reader = writer.as_reader();
        let health = Arc::new(Mutex::new(Health::default()));
        let cache = Arc::new(Cache {
            store: reader,
            resource: resource.clone(),
            client,
            health: health.clone(),
            compiled: Mutex::new(HashMap::new()),
        });
        let run = async move {
            let stream = reflector::reflector(writer, watcher(api, watcher::Config::default()))
                .default_backoff();
            futures::pin_mut!(stream);
            while let Some(event) = stream.next().await {
                let mut h = health.lock().unwrap_or_else(|e| e.into_inner());
                match event {
                    Ok(watcher::Event::InitDone) => {
                        h.synced = true;
                        h.last_error = None;
                        tracing::info!("OperatorVersion cache synced");
                    }
                    Ok(_) => h.last_error = None,
                    Err(e) => {
                        tracing::warn!(error = %e, "watching OperatorVersions");
                        h.last_error = Some(e.to_string());
                    }
                }
            }
        };
        (cache, run)
    }

    /// The compiled OperatorVersion: from the watch's store, else read from the API server.
    fn info(&self, namespace: &str, name: &str) -> Result<Option<Arc<Version>>, StoreError> {
        let key = (namespace.to_string(), name.to_string());
        let cached = self
            .store
            .get(&ObjectRef::new_with(name, self.resource.clone()).within(namespace))
            .or_else(|| self.resolved(namespace, name));
        let obj = match cached {
            Some(obj) => obj,
            None => {
                // Read before the watch delivered it: kept until the watch does.
                if let Some((_, v)) = self.compiled().get(&key) {
                    return Ok(Some(v.clone()));
                }
                match self.read(namespace, name)? {
                    Some(obj) => Arc::new(obj),
                    None => return Ok(None),
                }
            }
        };
        let version = obj.metadata.resource_version.clone();
        if let Some((v, info)) = self.compiled().get(&key)
            && *v == version
        {
            return Ok(Some(info.clone()));
        }
        let value = serde_json::to_value(obj.as_ref())
            .map_err(|e| StoreError::Unreadable(e.to_string()))?;
        match version_from_object(&value) {
            Ok(info) => {
                let info = Arc::new(info);
                self.compiled().insert(key, (version, info.clone()));
                Ok(Some(info))
            }
            Err(e) => {
                tracing::warn!(namespace, name, error = %e, "OperatorVersion with unusable parameters");
                Err(StoreError::Unusable {
                    namespace: namespace.to_string(),
                    name: name.to_string(),
                    reason: e,
                })
            }
        }
    }

    /// The OperatorVersion of `namespace` in the watch's store that answers to `name`, named
    /// the other way ([`kudo_crd::reference::resolve`]).
    fn resolved(&self, namespace: &str, name: &str) -> Option<Arc<DynamicObject>> {
        let here: Vec<Arc<DynamicObject>> = self
            .store
            .state()
            .into_iter()
            .filter(|o| o.metadata.namespace.as_deref() == Some(namespace))
            .collect();
        let found = resolve(name, here.iter().filter_map(|o| identity(o)))?.to_string();
        here.into_iter()
            .find(|o| o.metadata.name.as_deref() == Some(found.as_str()))
    }

    fn compiled(&self) -> std::sync::MutexGuard<'_, Compiled> {
        self.compiled.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A direct GET of the OperatorVersion. The handlers run on blocking threads
    /// (`spawn_blocking`), where waiting for the runtime is allowed; elsewhere (a
    /// single-threaded runtime's own thread) the read cannot wait and says so.
    fn read(&self, namespace: &str, name: &str) -> Result<Option<DynamicObject>, StoreError> {
        let handle = tokio::runtime::Handle::try_current().map_err(|_| {
            StoreError::Unreadable("no runtime to read the OperatorVersion with".into())
        })?;
        if handle.runtime_flavor() == tokio::runtime::RuntimeFlavor::CurrentThread {
            return Err(StoreError::Unreadable(
                "the OperatorVersion is not in the cache yet".into(),
            ));
        }
        let api: Api<DynamicObject> =
            Api::namespaced_with(self.client.clone(), namespace, &self.resource);
        let failed = |e: kube::Error| {
            StoreError::Unreadable(format!("reading it from the API server failed: {e}"))
        };
        let read = async {
            if let Some(obj) = api.get_opt(name).await? {
                return Ok(Some(obj));
            }
            // Named the other way: the one of the namespace that answers to the name.
            let list = api.list(&kube::api::ListParams::default()).await?;
            let found = resolve(name, list.items.iter().filter_map(identity)).map(String::from);
            Ok(found.and_then(|f| {
                list.items
                    .into_iter()
                    .find(|o| o.metadata.name.as_deref() == Some(f.as_str()))
            }))
        };
        tokio::task::block_in_place(|| handle.block_on(read)).map_err(failed)
    }
}

/// What names an OperatorVersion object ([`Identity`]).
fn identity(o: &DynamicObject) -> Option<Identity<'_>> {
    Some(Identity::of_spec(
        o.metadata.name.as_deref()?,
        o.data.get("spec"),
    ))
}

impl OperatorVersions for Cache {
    fn ready(&self) -> Result<(), StoreError> {
        let h = self.health.lock().unwrap_or_else(|e| e.into_inner());
        match (&h.synced, &h.last_error) {
            (true, _) => Ok(()),
            (false, Some(e)) => Err(StoreError::CannotList(e.to_string())),
            (false, None) => Err(StoreError::NotSynced),
        }
    }

    fn get(&self, namespace: &str, name: &str) -> Result<Option<Arc<Version>>, StoreError> {
        self.info(namespace, name)
    }
}

impl TypeSource for Cache {
    fn schema(&self, namespace: &str, name: &str) -> Option<kudo_policy::ParamSchema> {
        match self.info(namespace, name) {
            Ok(Some(i)) => Some(i.schema.clone()),
            Ok(None) => None,
            Err(e) => {
                tracing::warn!(namespace, name, error = %e, "Instance values stay untyped");
                None
            }
        }
    }
}
