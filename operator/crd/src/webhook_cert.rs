//! How long the webhook's self-managed certificate lives: its validity, how long before expiry
//! it is renewed, and how often each replica checks the Secret
//! [`WEBHOOK_SECRET`](crate::labels::WEBHOOK_SECRET).
//!
//! `kudo-webhook --cert-validity D --cert-renew-before D` and `kudo init
//! --webhook-cert-validity D --webhook-cert-renew-before D` both build a [`Lifetime`], so both
//! refuse the same values, and `kudo init` refuses them before it deploys a webhook that would
//! not start.
//!
//! ```
//! use std::time::Duration;
//! use kudo_crd::webhook_cert::{Lifetime, LifetimeError};
//! let minutes = |m: u64| Duration::from_secs(60 * m);
//! let l = Lifetime::new(minutes(3), minutes(2)).unwrap();
//! assert_eq!(l.check_every(), Duration::from_secs(40)); // a third of renew-before
//! assert!(matches!(
//!     Lifetime::new(minutes(2), minutes(2)),
//!     Err(LifetimeError::RenewBeforeNotShorter { .. })
//! ));
//! ```

use std::time::Duration;

/// Validity of a new certificate unless told: one year.
pub const DEFAULT_VALIDITY: Duration = Duration::from_secs(365 * 24 * 3600);
/// Renewal this long before expiry unless told: 30 days.
pub const DEFAULT_RENEW_BEFORE: Duration = Duration::from_secs(30 * 24 * 3600);
/// The longest time between two checks of the Secret.
pub const LONGEST_CHECK: Duration = Duration::from_secs(3600);
/// The shortest renew-before accepted. After one replica renews, another serves its previous
/// certificate until its next check (at most a third of renew-before) and its server reloads
/// the files (every 10 s by default); the previous certificate must outlive both. A minute
/// leaves that certificate 10 s to spare at the worst.
pub const SHORTEST_RENEW_BEFORE: Duration = Duration::from_secs(60);

/// A certificate lifetime renewal can keep: renewal comes before expiry, and every replica sees
/// it while the certificate it serves is still valid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lifetime {
    validity: Duration,
    renew_before: Duration,
}

impl Default for Lifetime {
    fn default() -> Self {
        Lifetime {
            validity: DEFAULT_VALIDITY,
            renew_before: DEFAULT_RENEW_BEFORE,
        }
    }
}

/// Why a lifetime was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LifetimeError {
    /// A certificate would be due for renewal as soon as it is made.
    #[error(
        "the certificate renew-before ({}) must be shorter than its validity ({}): \
         each new certificate would be due for renewal at once",
        written(*.renew_before),
        written(*.validity)
    )]
    RenewBeforeNotShorter {
        /// The validity given.
        validity: Duration,
        /// The renew-before given.
        renew_before: Duration,
    },
    /// Too short for the other replicas to pick up a renewal before expiry.
    #[error(
        "the certificate renew-before ({}) must be at least {}: the other replica serves its \
         previous certificate until its next check and reload",
        written(*.renew_before),
        written(SHORTEST_RENEW_BEFORE)
    )]
    RenewBeforeTooShort {
        /// The renew-before given.
        renew_before: Duration,
    },
}

/// `d` as the flags take it, exactly, in its largest whole unit: `90d`, `25h`, `3m`, `90s`,
/// `1500ms` (humantime reads each back; its own formatting writes `2months 29days 2h 52m 48s`
/// for 90 days).
pub fn written(d: Duration) -> String {
    let (secs, millis) = (d.as_secs(), d.subsec_millis());
    if d.subsec_nanos() != millis * 1_000_000 {
        return format!("{}ns", d.as_nanos());
    }
    if millis != 0 {
        return format!("{}ms", d.as_millis());
    }
    match secs {
        0 => "0s".into(),
        s if s % 86400 == 0 => format!("{}d", s / 86400),
        s if s % 3600 == 0 => format!("{}h", s / 3600),
        s if s % 60 == 0 => format!("{}m", s / 60),
        s => format!("{s}s"),
    }
}

impl Lifetime {
    /// Certificates valid for `validity`, renewed when they expire within `renew_before`.
    pub fn new(validity: Duration, renew_before: Duration) -> Result<Lifetime, LifetimeError> {
        if renew_before >= validity {
            return Err(LifetimeError::RenewBeforeNotShorter {
                validity,
                renew_before,
            });
        }
        if renew_before < SHORTEST_RENEW_BEFORE {
            return Err(LifetimeError::RenewBeforeTooShort { renew_before });
        }
        Ok(Lifetime {
            validity,
            renew_before,
        })
    }

    /// Either given, the other at its default ([`DEFAULT_VALIDITY`], [`DEFAULT_RENEW_BEFORE`]);
    /// `None` when neither is given.
    pub fn from_flags(
        validity: Option<Duration>,
        renew_before: Option<Duration>,
    ) -> Option<Result<Lifetime, LifetimeError>> {
        if validity.is_none() && renew_before.is_none() {
            return None;
        }
        Some(Lifetime::new(
            validity.unwrap_or(DEFAULT_VALIDITY),
            renew_before.unwrap_or(DEFAULT_RENEW_BEFORE),
        ))
    }

    /// Validity of a new certificate.
    pub fn validity(&self) -> Duration {
        self.validity
    }

    /// A certificate is renewed when it expires within this.
    pub fn renew_before(&self) -> Duration {
        self.renew_before
    }

    /// How often each replica checks the Secret: a third of renew-before, at most
    /// [`LONGEST_CHECK`]. A renewal then comes at least two thirds of renew-before before
    /// expiry, and every replica has read it with a third to spare.
    pub fn check_every(&self) -> Duration {
        (self.renew_before / 3).min(LONGEST_CHECK)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: u64 = 1;
    const M: u64 = 60;
    const D: u64 = 24 * 3600;

    #[test]
    fn a_lifetime_is_accepted_only_when_renewal_comes_in_time() {
        let secs = Duration::from_secs;
        let cases: &[(u64, u64, Result<u64, LifetimeError>)] = &[
            // (validity, renew-before, check every or the refusal)
            (365 * D, 30 * D, Ok(3600)), // the defaults: hourly
            (3 * M, 2 * M, Ok(40)),      // the e2e scenario's
            (61 * S, M, Ok(20)),         // the shortest renew-before
            (
                2 * M,
                2 * M,
                Err(LifetimeError::RenewBeforeNotShorter {
                    validity: secs(2 * M),
                    renew_before: secs(2 * M),
                }),
            ),
            (
                M,
                2 * M,
                Err(LifetimeError::RenewBeforeNotShorter {
                    validity: secs(M),
                    renew_before: secs(2 * M),
                }),
            ),
            (
                3 * M,
                59 * S,
                Err(LifetimeError::RenewBeforeTooShort {
                    renew_before: secs(59),
                }),
            ),
        ];
        for (validity, renew_before, want) in cases {
            let got = Lifetime::new(secs(*validity), secs(*renew_before))
                .map(|l| l.check_every().as_secs());
            assert_eq!(
                &got, want,
                "validity {validity} s, renew-before {renew_before} s"
            );
        }
    }

    #[test]
    fn one_flag_alone_takes_the_default_of_the_other() {
        let secs = Duration::from_secs;
        assert_eq!(Lifetime::from_flags(None, None), None);
        assert_eq!(
            Lifetime::from_flags(None, Some(secs(7 * D))),
            Some(Ok(Lifetime::new(DEFAULT_VALIDITY, secs(7 * D)).unwrap()))
        );
        // 10 days of validity with the default 30 days of renew-before: refused.
        assert_eq!(
            Lifetime::from_flags(Some(secs(10 * D)), None),
            Some(Err(LifetimeError::RenewBeforeNotShorter {
                validity: secs(10 * D),
                renew_before: DEFAULT_RENEW_BEFORE,
            }))
        );
    }

    #[test]
    fn a_duration_is_written_in_its_largest_whole_unit_and_reads_back() {
        let cases: &[(Duration, &str)] = &[
            (Duration::from_secs(90 * D), "90d"),
            (Duration::from_secs(D + 3600), "25h"),
            (Duration::from_secs(3 * M), "3m"),
            (Duration::from_secs(90), "90s"),
            (Duration::from_millis(1500), "1500ms"),
            (Duration::from_nanos(1_000_001), "1000001ns"),
            (Duration::ZERO, "0s"),
        ];
        for (d, want) in cases {
            assert_eq!(written(*d), *want, "{d:?}");
            assert_eq!(humantime::parse_duration(want), Ok(*d), "{want}");
        }
    }

    #[test]
    fn the_refusal_names_both_durations_as_written() {
        let e = Lifetime::new(Duration::from_secs(120), Duration::from_secs(180)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "the certificate renew-before (3m) must be shorter than its validity (2m): \
             each new certificate would be due for renewal at once"
        );
    }
}
