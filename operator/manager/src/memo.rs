//! Values computed once per key and shared by the reconciles: the compiled OperatorVersions and
//! the API resources of the kinds applied.

use std::collections::HashMap;
use std::sync::Mutex;

/// A map behind a lock; a poisoned lock reads as empty and takes no writes (the value is then
/// computed again).
pub(crate) struct Memo<V>(Mutex<HashMap<String, V>>);

impl<V> Default for Memo<V> {
    fn default() -> Self {
        Memo(Mutex::default())
    }
}

impl<V: Clone> Memo<V> {
    /// The value kept for `key`.
    pub fn get(&self, key: &str) -> Option<V> {
        self.0.lock().ok()?.get(key).cloned()
    }

    /// Keeps `value` for `key`, first dropping the keys `stale` says are outdated.
    pub fn put(&self, key: String, value: V, stale: impl Fn(&str) -> bool) {
        if let Ok(mut m) = self.0.lock() {
            m.retain(|k, _| !stale(k));
            m.insert(key, value);
        }
    }
}
