//! The memory budget: bytes of request bodies held at once, in lanes, taken as bytes arrive.

use std::sync::Arc;

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::gauge::Gauge;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

#[cfg(doc)]
use super::Config;
use super::metrics::{LaneLabels, Metrics};

/// One lane of the memory budget ([`Config::memory_budget`], [`Config::small_budget`]):
/// bytes of request bodies handled at once, counted in KiB.
#[derive(Clone)]
pub struct MemoryBudget {
    permits: Arc<Semaphore>,
    total_kib: u32,
    /// What a request without `Content-Length` is counted as when it must wait.
    unknown: usize,
    in_use: Gauge,
    waits: Counter,
}

/// A request's share of a [`MemoryBudget`], given back when dropped.
pub struct Held {
    permit: Option<OwnedSemaphorePermit>,
    in_use: Gauge,
}

impl Held {
    /// Bytes held (in whole KiB).
    pub fn bytes(&self) -> usize {
        self.permit.as_ref().map_or(0, |p| p.num_permits() * 1024)
    }

    fn add(&mut self, more: OwnedSemaphorePermit) {
        self.in_use.inc_by((more.num_permits() * 1024) as i64);
        match &mut self.permit {
            Some(p) => p.merge(more),
            None => self.permit = Some(more),
        }
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        self.in_use.dec_by(self.bytes() as i64);
    }
}

impl MemoryBudget {
    /// A budget of `bytes`; a request of unknown size counts as `unknown` bytes when it waits.
    pub fn new(bytes: usize, unknown: usize) -> MemoryBudget {
        // At most 2^29 KiB (512 GiB): within Semaphore::MAX_PERMITS on every target.
        let total_kib = u32::try_from(bytes.div_ceil(1024))
            .unwrap_or(u32::MAX)
            .clamp(1, u32::MAX >> 3);
        MemoryBudget {
            permits: Arc::new(Semaphore::new(total_kib as usize)),
            total_kib,
            unknown,
            in_use: Gauge::default(),
            waits: Counter::default(),
        }
    }

    /// This lane's gauge and counter in `metrics`, labelled `lane`.
    pub(super) fn with_metrics(mut self, metrics: &Metrics, lane: &'static str) -> MemoryBudget {
        self.in_use = metrics
            .budget_in_use
            .get_or_create(&LaneLabels { lane })
            .clone();
        self.waits = metrics
            .budget_waits
            .get_or_create(&LaneLabels { lane })
            .clone();
        self
    }

    /// `bytes` in KiB, at least 1, at most the whole budget.
    fn kib(&self, bytes: usize) -> u32 {
        u32::try_from(bytes.div_ceil(1024))
            .unwrap_or(u32::MAX)
            .clamp(1, self.total_kib)
    }

    /// A share of nothing.
    pub fn nothing(&self) -> Held {
        Held {
            permit: None,
            in_use: self.in_use.clone(),
        }
    }

    /// Waits until a body of `bytes` (`None`: unknown) fits, and holds its share until the
    /// [`Held`] is dropped. A body larger than the whole budget waits for all of it.
    #[cfg(test)]
    pub async fn reserve(&self, bytes: Option<usize>) -> Held {
        let kib = self.kib(bytes.unwrap_or(self.unknown));
        let mut held = self.nothing();
        // The semaphore is never closed.
        if let Ok(p) = self.permits.clone().acquire_many_owned(kib).await {
            held.add(p);
        }
        held
    }

    /// Makes `held` cover `bytes` received so far of a body of `declared` bytes. Takes the
    /// difference at once when the budget has it; otherwise gives back what `held` has and
    /// waits in line for the whole body (`declared`, the unknown size when absent, at least
    /// `bytes`): a partly read body never waits holding a share, so partly read bodies cannot
    /// stall each other. `true` when it waited.
    pub async fn grow(&self, held: &mut Held, bytes: usize, declared: Option<usize>) -> bool {
        let want = self.kib(bytes);
        let have = (held.bytes() / 1024) as u32;
        if want <= have {
            return false;
        }
        if let Ok(more) = self.permits.clone().try_acquire_many_owned(want - have) {
            held.add(more);
            return false;
        }
        *held = self.nothing();
        self.waits.inc();
        let whole = self.kib(declared.unwrap_or(self.unknown).max(bytes));
        if let Ok(p) = self.permits.clone().acquire_many_owned(whole).await {
            held.add(p);
        }
        true
    }

    /// Gives back what `held` has beyond `bytes`.
    pub fn trim(&self, held: &mut Held, bytes: usize) {
        let keep = self.kib(bytes) as usize;
        if let Some(p) = &mut held.permit
            && p.num_permits() > keep
            && let Some(extra) = p.split(p.num_permits() - keep)
        {
            self.in_use.dec_by((extra.num_permits() * 1024) as i64);
        }
    }

    /// Bytes of the budget not in use now.
    #[cfg(test)]
    pub fn available(&self) -> usize {
        self.permits.available_permits() * 1024
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    const KIB: usize = 1024;

    #[tokio::test]
    async fn a_body_that_does_not_fit_waits_until_the_budget_frees() {
        let budget = MemoryBudget::new(1000 * KIB, 32 * 1024 * KIB);
        let first = budget.reserve(Some(600 * KIB)).await;
        assert_eq!(first.bytes(), 600 * KIB);
        assert_eq!(budget.available(), 400 * KIB);
        let waiting =
            tokio::time::timeout(Duration::from_millis(50), budget.reserve(Some(600 * KIB))).await;
        assert!(waiting.is_err(), "600 KiB more must wait");
        // A request that gave up holds nothing; a smaller body still fits.
        assert_eq!(budget.available(), 400 * KIB);
        let small = budget.reserve(Some(300 * KIB)).await;
        assert_eq!(budget.available(), 100 * KIB);
        drop(first);
        let second =
            tokio::time::timeout(Duration::from_secs(5), budget.reserve(Some(600 * KIB))).await;
        assert!(second.is_ok_and(|p| p.bytes() == 600 * KIB));
        drop(small);
    }

    #[tokio::test]
    async fn a_body_larger_than_the_budget_takes_all_of_it_and_an_unknown_size_counts_as_the_limit()
    {
        let budget = MemoryBudget::new(1024 * KIB, 4 * 1024 * KIB);
        let big = budget.reserve(Some(10 * 1024 * KIB)).await;
        assert_eq!(big.bytes(), 1024 * KIB);
        assert_eq!(budget.available(), 0);
        drop(big);
        let unknown = budget.reserve(None).await;
        assert_eq!(budget.available(), 0);
        drop(unknown);
        let tiny = budget.reserve(Some(1)).await;
        assert_eq!(budget.available(), 1023 * KIB);
        drop(tiny);
        assert_eq!(budget.available(), 1024 * KIB);
    }

    // Issue 38, item 3: a client that declares 8 MiB and trickles held the whole budget.
    #[tokio::test]
    async fn a_trickling_body_holds_what_it_sent_not_what_it_declared() {
        let budget = MemoryBudget::new(8 * 1024 * KIB, 32 * 1024 * KIB);
        let declared = Some(8 * 1024 * KIB);
        let mut held = budget.nothing();
        for sent in 1..=3000 {
            assert!(!budget.grow(&mut held, sent, declared).await, "never waits");
        }
        assert_eq!(held.bytes(), 3 * KIB);
        assert_eq!(budget.available(), (8 * 1024 - 3) * KIB);
        // What it sent is all it gives back.
        drop(held);
        assert_eq!(budget.available(), 8 * 1024 * KIB);
    }

    #[tokio::test]
    async fn a_body_that_finds_the_budget_short_gives_back_its_share_and_waits_for_all_of_it() {
        let budget = MemoryBudget::new(1000 * KIB, 32 * 1024 * KIB);
        let declared = Some(600 * KIB);
        let (mut a, mut b) = (budget.nothing(), budget.nothing());
        assert!(!budget.grow(&mut a, 500 * KIB, declared).await);
        assert!(!budget.grow(&mut b, 400 * KIB, declared).await);
        assert_eq!(budget.available(), 100 * KIB);
        // a needs 100 KiB more and gets it; b then finds nothing left: instead of waiting with
        // 400 KiB (both would wait for ever), it gives them back and waits in line for 600.
        assert!(!budget.grow(&mut a, 600 * KIB, declared).await);
        let budget2 = budget.clone();
        let waiter = tokio::spawn(async move {
            let waited = budget2.grow(&mut b, 500 * KIB, declared).await;
            (waited, b.bytes())
        });
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert_eq!(
            budget.available(),
            0,
            "b gave back its 400 KiB and waits for 600"
        );
        assert!(!waiter.is_finished());
        drop(a);
        let (waited, held) = tokio::time::timeout(Duration::from_secs(5), waiter)
            .await
            .unwrap()
            .unwrap();
        assert!(waited);
        assert_eq!(held, 600 * KIB);
        assert_eq!(
            budget.available(),
            1000 * KIB,
            "b dropped its share when done"
        );
    }

    #[tokio::test]
    async fn a_share_is_trimmed_to_the_body_that_came() {
        let metrics = Metrics::default();
        let budget = MemoryBudget::new(1000 * KIB, 32 * 1024 * KIB).with_metrics(&metrics, "large");
        let mut held = budget.reserve(Some(600 * KIB)).await;
        budget.trim(&mut held, 10 * KIB);
        assert_eq!(held.bytes(), 10 * KIB);
        assert_eq!(budget.available(), 990 * KIB);
        assert!(
            metrics
                .encode()
                .contains(r#"kudo_webhook_memory_budget_in_use_bytes{lane="large"} 10240"#),
            "{}",
            metrics.encode()
        );
        drop(held);
        assert!(
            metrics
                .encode()
                .contains(r#"kudo_webhook_memory_budget_in_use_bytes{lane="large"} 0"#)
        );
    }
}
