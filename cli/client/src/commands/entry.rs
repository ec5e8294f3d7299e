//! Get, modify, commit: the one way the cluster commands write an object other writers write
//! too (the model is kube-rs's `Api::entry`).
//!
//! A command's attempt reads what it needs, decides, and commits one write guarded by what it
//! read (a `test` of each value, or the `metadata.resourceVersion`). When the object changed
//! in between (409 Conflict, or a failed `test`), [`retry`] waits [`backoff`] and the attempt
//! is made again from a fresh read, up to a number of attempts. [`Entry`] is that loop for an
//! Instance, named once: `kudo update --instance`, `kudo upgrade --instance` and `kudo rollback`
//! run in it; `kudo migrate` runs its rewrites in [`retry`] too
//! (`crate::storage_migration`).

use std::time::Duration;

use kube::api::Patch;
use kudo_crd::reference::OperatorVersionRef;
use kudo_crd::v1beta2::Instance;
use serde_json::Value;

use super::{Error, Result, Target, instance_and_version, merge, patch_params, secrets};

/// Writes of the Instance tried before giving up when another writer got there first.
pub const MAX_ATTEMPTS: usize = 8;

/// How one attempt of a get-modify-commit ended.
pub(crate) enum Attempt<T> {
    /// Done: written, nothing to write, or a dry run.
    Done(T),
    /// The object changed since it was read: read it again.
    Conflict,
}

/// The wait before attempt `attempt + 1`: 25 ms doubling per attempt, at most 1.6 s, each
/// between half and all of that at random, so that writers that met once do not meet again.
pub(crate) fn backoff(attempt: usize) -> Duration {
    let ceiling = 25u64 << attempt.min(6);
    Duration::from_millis(ceiling / 2 + fastrand::u64(0..=ceiling / 2))
}

/// Runs `attempt` (numbered from 1) until it is done, at most `max` times, waiting
/// [`backoff`] after each conflict but the last. `Ok(None)`: every attempt met a conflict.
pub(crate) async fn retry<T, E>(
    max: usize,
    mut attempt: impl AsyncFnMut(usize) -> std::result::Result<Attempt<T>, E>,
) -> std::result::Result<Option<T>, E> {
    for n in 1..=max {
        if let Attempt::Done(done) = attempt(n).await? {
            return Ok(Some(done));
        }
        if n < max {
            tokio::time::sleep(backoff(n)).await;
        }
    }
    Ok(None)
}

/// An Instance written by get, modify, commit, named once.
pub(crate) struct Entry<'a> {
    t: &'a Target,
    name: &'a str,
}

impl<'a> Entry<'a> {
    /// Instance `name` in `t`'s namespace.
    pub(crate) fn new(t: &'a Target, name: &'a str) -> Entry<'a> {
        Entry { t, name }
    }

    /// Get: the Instance and the OperatorVersion it names.
    pub(crate) async fn get(&self) -> Result<(Instance, OperatorVersionRef)> {
        instance_and_version(self.t, self.name).await
    }

    /// Commit: `patch` sent, with kudo's new Secret of `write` created before and deleted again
    /// when the patch does not land (`commands::secrets`). [`Attempt::Conflict`] when the
    /// Instance changed since `inst` was read.
    pub(crate) async fn commit(
        &self,
        inst: &Instance,
        write: Option<&secrets::Write>,
        patch: &Patch<Value>,
    ) -> Result<Attempt<Instance>> {
        if let Some(w) = write {
            w.prepare(self.t, inst).await?;
        }
        let sent = self
            .t
            .instances()
            .patch(self.name, &patch_params(), patch)
            .await;
        if let Some(w) = write {
            // Exactly one of the old and the new Secret stays: the one the Instance names.
            w.settle(self.t, sent.is_ok()).await?;
        }
        match sent {
            Ok(written) => Ok(Attempt::Done(written)),
            Err(e) if is_conflict(&e) || merge::test_failed(&e) => Ok(Attempt::Conflict),
            Err(e) => Err(self.t.api("patch", "Instance", self.name)(e)),
        }
    }

    /// Runs `attempt` in [`retry`], [`MAX_ATTEMPTS`] times at most; [`Error::Conflict`] when
    /// every attempt met a newer Instance.
    pub(crate) async fn run<T>(
        &self,
        attempt: impl AsyncFnMut(usize) -> Result<Attempt<T>>,
    ) -> Result<T> {
        retry(MAX_ATTEMPTS, attempt)
            .await?
            .ok_or_else(|| Error::Conflict {
                namespace: self.t.namespace.clone(),
                name: self.name.to_string(),
                attempts: MAX_ATTEMPTS,
            })
    }
}

/// Whether the API server answered 409 Conflict.
fn is_conflict(e: &kube::Error) -> bool {
    matches!(e, kube::Error::Api(s) if s.code == 409)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_backoff_doubles_from_25ms_to_at_most_1_6s_with_jitter() {
        for attempt in 0..12 {
            let ceiling = 25u64 << attempt.min(6);
            let d = backoff(attempt).as_millis() as u64;
            assert!((ceiling / 2..=ceiling).contains(&d), "{attempt}: {d}");
        }
    }

    #[tokio::test]
    async fn retry_runs_again_after_each_conflict_and_stops_when_done_or_out_of_attempts() {
        let mut seen = Vec::new();
        let done = retry(5, async |n| {
            seen.push(n);
            Ok::<_, ()>(if n == 3 {
                Attempt::Done(n)
            } else {
                Attempt::Conflict
            })
        })
        .await;
        assert_eq!((done, seen), (Ok(Some(3)), vec![1, 2, 3]));
        let mut tries = 0;
        let never = retry(4, async |_| {
            tries += 1;
            Ok::<Attempt<()>, ()>(Attempt::Conflict)
        })
        .await;
        assert_eq!((never, tries), (Ok(None), 4));
        let failed = retry(4, async |n| Err::<Attempt<()>, _>(n)).await;
        assert_eq!(failed, Err(1));
    }
}
