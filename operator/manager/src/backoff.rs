//! The back-off of failing Instances ([`Backoff`]): how long before a failing Instance is
//! tried again, and which of its failures are logged.
//!
//! A failure has a fingerprint: the failing steps of the plan run and their messages, or the
//! error of a failed reconcile. An Instance that fails the same way again is retried after
//! [`delay`]: the first delay, doubled with each repeat, up to the cap (5 s, 10 s, 20 s, … 5
//! min with the defaults). A different failure starts again from the first delay; so does a
//! plan that progresses, ends, or whose status is written after a step completed.
//!
//! The log rule ([`logged`]): of a run of failures that are the same, the first
//! [`LOGGED_FIRST`] are logged, then only those whose number is a power of two (8th, 16th,
//! 32nd…), each saying how many times it happened: at the cap that is a line every few hours,
//! not one per retry.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

/// How many of a run of identical failures are all logged.
pub const LOGGED_FIRST: u32 = 3;

/// The delay before the `n`th retry of the same failure (`n` from 1): `first`, doubled each
/// time, at most `cap`.
pub fn delay(first: Duration, cap: Duration, n: u32) -> Duration {
    let doublings = n.saturating_sub(1).min(16);
    first.saturating_mul(1 << doublings).min(cap)
}

/// Whether the `n`th of a run of identical failures (`n` from 1) is logged: the first
/// [`LOGGED_FIRST`], then each power of two.
pub fn logged(n: u32) -> bool {
    n <= LOGGED_FIRST || n.is_power_of_two()
}

/// A failure seen again: how many times in a row, the delay before the next try, and whether
/// to log it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retry {
    /// How many times in a row it happened (1: the first time).
    pub count: u32,
    /// How long before the Instance is tried again.
    pub delay: Duration,
    /// Whether this occurrence is logged ([`logged`]).
    pub log: bool,
}

/// The current run of identical failures of each Instance.
#[derive(Debug, Default)]
pub struct Backoff {
    first: Duration,
    cap: Duration,
    /// By Instance (`namespace/name`): the fingerprint of its failure and how many times in a
    /// row it happened.
    runs: Mutex<HashMap<String, (u64, u32)>>,
}

impl Backoff {
    /// Delays from `first` up to `cap`.
    pub fn new(first: Duration, cap: Duration) -> Backoff {
        Backoff {
            first,
            cap,
            runs: Mutex::default(),
        }
    }

    /// Instance `key` failed with `fingerprint`: the same as last time continues its run,
    /// anything else starts a new one.
    pub fn failed(&self, key: &str, fingerprint: &str) -> Retry {
        let fp = fingerprint_of(fingerprint);
        let count = self
            .runs
            .lock()
            .map(|mut m| {
                let run = m.entry(key.to_string()).or_insert((fp, 0));
                if run.0 != fp {
                    *run = (fp, 0);
                }
                run.1 = run.1.saturating_add(1);
                run.1
            })
            .unwrap_or(1);
        Retry {
            count,
            delay: delay(self.first, self.cap, count),
            log: logged(count),
        }
    }

    /// Instance `key` progressed: its next failure is a first one.
    pub fn reset(&self, key: &str) {
        if let Ok(mut m) = self.runs.lock() {
            m.remove(key);
        }
    }
}

fn fingerprint_of(text: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut h);
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: fn(u64) -> Duration = Duration::from_secs;

    #[test]
    fn the_delay_doubles_from_the_first_up_to_the_cap() {
        let cases = [
            (1, S(5)),
            (2, S(10)),
            (3, S(20)),
            (4, S(40)),
            (5, S(80)),
            (6, S(160)),
            (7, S(300)),
            (8, S(300)),
            (100, S(300)),
            (u32::MAX, S(300)),
        ];
        for (n, want) in cases {
            assert_eq!(delay(S(5), S(300), n), want, "retry {n}");
        }
    }

    #[test]
    fn the_first_three_failures_are_logged_then_each_power_of_two() {
        let logged_of_40: Vec<u32> = (1..=40).filter(|n| logged(*n)).collect();
        assert_eq!(logged_of_40, [1, 2, 3, 4, 8, 16, 32]);
    }

    #[test]
    fn the_same_failure_backs_off_and_another_starts_again() {
        let b = Backoff::new(S(5), S(300));
        let steps = [
            ("a", "step x: refused", 1, S(5), true),
            ("a", "step x: refused", 2, S(10), true),
            ("a", "step x: refused", 3, S(20), true),
            ("b", "step x: refused", 1, S(5), true), // another Instance: its own run
            ("a", "step x: refused", 4, S(40), true),
            ("a", "step x: refused", 5, S(80), false),
            ("a", "step y: unreachable", 1, S(5), true), // another failure
            ("a", "step y: unreachable", 2, S(10), true),
        ];
        for (i, (key, fp, count, wait, log)) in steps.into_iter().enumerate() {
            let want = Retry {
                count,
                delay: wait,
                log,
            };
            assert_eq!(b.failed(key, fp), want, "call {i}: {key} {fp}");
        }
        b.reset("a");
        assert_eq!(
            b.failed("a", "step y: unreachable").count,
            1,
            "after a reset"
        );
    }
}
