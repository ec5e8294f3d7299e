//! Maintenance windows: when a plan (of an Instance) or a wave (of a Rollout) may start.
//!
//! A window is `{schedule, duration, timeZone}`: it opens at each time the 5-field cron
//! `schedule` names, read as wall-clock time in the IANA `timeZone` (UTC when none is given),
//! and stays open for `duration` of real time. A window that opens at 02:30 on a day without
//! 02:30 (a spring-forward gap) opens when that wall-clock time would have been, as `croner`
//! resolves it; a 2-hour window across a DST change lasts two real hours.
//!
//! Only starts are held: what has started runs to its end, however long the window lasts.
//! The schedule is parsed by [`croner`] (vixie-cron semantics: day-of-month and day-of-week
//! are ORed), times and zones by [`jiff`], whose tz database is bundled.

use croner::Cron;
use croner::parser::{CronParser, Seconds, Year};
use jiff::tz::TimeZone;
use jiff::{SignedDuration, Timestamp, Zoned};
use serde::{Deserialize, Serialize};

/// A window as it is written (`spec.window` of a Rollout or an Instance).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct WindowSpec {
    /// When it opens: 5-field cron (`minute hour day-of-month month day-of-week`).
    pub schedule: String,
    /// How long it stays open: a Go duration (`90m`, `2h`, `1h30m`).
    pub duration: String,
    /// The IANA time zone `schedule` is read in (`Europe/Berlin`); UTC when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_zone: Option<String>,
}

/// Why a window cannot be used: each names the field that is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WindowError {
    /// `schedule` is not 5-field cron.
    #[error(
        "window.schedule {schedule:?}: not a 5-field cron schedule (minute hour day-of-month month day-of-week): {reason}"
    )]
    Schedule {
        /// The schedule as written.
        schedule: String,
        /// croner's reason.
        reason: String,
    },
    /// `schedule` never matches a time (`0 0 30 2 *`).
    #[error("window.schedule {0:?}: never opens (no time matches it)")]
    Never(String),
    /// `duration` is not a positive duration of at most a week.
    #[error("window.duration {duration:?}: {reason}")]
    Duration {
        /// The duration as written.
        duration: String,
        /// Why not.
        reason: String,
    },
    /// `timeZone` is not an IANA time zone.
    #[error("window.timeZone {0:?}: not an IANA time zone (such as Europe/Berlin or UTC)")]
    TimeZone(String),
}

/// The longest window: a week, which is the longest period a 5-field schedule repeats within
/// for most schedules (longer windows would always overlap the next opening).
pub const MAX_DURATION: SignedDuration = SignedDuration::from_hours(24 * 7);

/// A window, checked and ready to answer [`Window::at`].
#[derive(Debug, Clone)]
pub struct Window {
    cron: Cron,
    duration: SignedDuration,
    zone: TimeZone,
}

/// Whether a window is open at a time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// Open until this time.
    Open {
        /// When it closes.
        until: Timestamp,
    },
    /// Closed until this time.
    Closed {
        /// When it next opens.
        opens: Timestamp,
    },
}

impl Window {
    /// Checks a window as written: the schedule parses as 5-field cron and matches some time
    /// after `now`, the duration is positive and at most a week, the zone is known.
    pub fn new(spec: &WindowSpec, now: Timestamp) -> Result<Window, WindowError> {
        let parser = CronParser::builder()
            .seconds(Seconds::Disallowed)
            .year(Year::Disallowed)
            .build();
        let cron = parser
            .parse(&spec.schedule)
            .map_err(|e| WindowError::Schedule {
                schedule: spec.schedule.clone(),
                reason: e.to_string(),
            })?;
        let duration = parse_duration(&spec.duration).map_err(|reason| WindowError::Duration {
            duration: spec.duration.clone(),
            reason,
        })?;
        let zone = match spec.time_zone.as_deref() {
            None | Some("") => TimeZone::UTC,
            Some(name) => {
                TimeZone::get(name).map_err(|_| WindowError::TimeZone(name.to_string()))?
            }
        };
        let window = Window {
            cron,
            duration,
            zone,
        };
        if window.next_opening(now).is_none() {
            return Err(WindowError::Never(spec.schedule.clone()));
        }
        Ok(window)
    }

    /// Open or closed at `now`, and until when.
    pub fn at(&self, now: Timestamp) -> State {
        let zoned = now.to_zoned(self.zone.clone());
        let last = self
            .cron
            .find_previous_occurrence(&zoned, true)
            .ok()
            .map(|z: Zoned| z.timestamp());
        if let Some(opened) = last
            && let Ok(until) = opened.checked_add(self.duration)
            && now < until
        {
            return State::Open { until };
        }
        match self.next_opening(now) {
            Some(opens) => State::Closed { opens },
            // Checked in `new`: a schedule that matched once matches again (croner searches
            // years ahead); this is the far future, for safety.
            None => State::Closed {
                opens: Timestamp::MAX,
            },
        }
    }

    /// The first opening strictly after `now`.
    pub fn next_opening(&self, now: Timestamp) -> Option<Timestamp> {
        let zoned = now.to_zoned(self.zone.clone());
        self.cron
            .find_next_occurrence(&zoned, false)
            .ok()
            .map(|z: Zoned| z.timestamp())
    }
}

/// A duration as kudo prints it: `5m`, `1m30s`, `250ms` (the CLI's waits, a rollout's
/// deadlines).
pub fn humanize(d: std::time::Duration) -> String {
    let ms = d.as_millis();
    if ms < 1000 {
        return format!("{ms}ms");
    }
    let s = d.as_secs();
    let (h, m, s) = (s / 3600, s / 60 % 60, s % 60);
    let mut out = String::new();
    if h > 0 {
        out.push_str(&format!("{h}h"));
    }
    if m > 0 {
        out.push_str(&format!("{m}m"));
    }
    if s > 0 || out.is_empty() {
        out.push_str(&format!("{s}s"));
    }
    out
}

/// A Go duration (`1h30m`, `90m`, `45s`), as Kubernetes writes them, positive and at most
/// [`MAX_DURATION`]. Units: `h`, `m`, `s`.
pub fn parse_duration(text: &str) -> Result<SignedDuration, String> {
    let d = go_duration(text)?;
    if d <= SignedDuration::ZERO {
        return Err("must be longer than 0s".into());
    }
    if d > MAX_DURATION {
        return Err("must be at most 168h (a week)".into());
    }
    Ok(d)
}

/// A Go duration (`1h30m`, `90m`, `45s`, `0s`) of hours, minutes and seconds, not negative.
pub fn go_duration(text: &str) -> Result<SignedDuration, String> {
    let bad = || format!("not a duration such as 90m, 2h or 1h30m: {text:?}");
    if text.is_empty() {
        return Err(bad());
    }
    let mut total = SignedDuration::ZERO;
    let mut rest = text;
    while !rest.is_empty() {
        let digits = rest.find(|c: char| !c.is_ascii_digit()).ok_or_else(bad)?;
        if digits == 0 {
            return Err(bad());
        }
        let n: i64 = rest[..digits].parse().map_err(|_| bad())?;
        let unit = &rest[digits..digits + 1];
        let secs = match unit {
            "h" => n.checked_mul(3600),
            "m" => n.checked_mul(60),
            "s" => Some(n),
            _ => return Err(bad()),
        }
        .ok_or_else(bad)?;
        total = total
            .checked_add(SignedDuration::from_secs(secs))
            .ok_or_else(bad)?;
        rest = &rest[digits + 1..];
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(schedule: &str, duration: &str, zone: Option<&str>) -> WindowSpec {
        WindowSpec {
            schedule: schedule.into(),
            duration: duration.into(),
            time_zone: zone.map(String::from),
        }
    }

    fn ts(text: &str) -> Timestamp {
        text.parse().unwrap()
    }

    #[test]
    fn a_nightly_window_is_open_from_its_opening_for_its_duration() {
        let now = ts("2026-11-28T12:00:00Z");
        let w = Window::new(&spec("0 2 * * *", "2h", None), now).unwrap();
        assert_eq!(
            w.at(now),
            State::Closed {
                opens: ts("2026-11-29T02:00:00Z")
            }
        );
        assert_eq!(
            w.at(ts("2026-11-29T02:00:00Z")),
            State::Open {
                until: ts("2026-11-29T04:00:00Z")
            }
        );
        assert_eq!(
            w.at(ts("2026-11-29T03:59:59Z")),
            State::Open {
                until: ts("2026-11-29T04:00:00Z")
            }
        );
        assert_eq!(
            w.at(ts("2026-11-29T04:00:00Z")),
            State::Closed {
                opens: ts("2026-11-30T02:00:00Z")
            }
        );
    }

    #[test]
    fn the_schedule_is_read_in_its_time_zone_across_dst() {
        // 01:00 in New York: 06:00 UTC in winter (EST), 05:00 UTC in summer (EDT).
        let w = Window::new(
            &spec("0 1 * * *", "1h", Some("America/New_York")),
            ts("2026-03-01T00:00:00Z"),
        )
        .unwrap();
        assert_eq!(
            w.next_opening(ts("2026-03-07T12:00:00Z")),
            Some(ts("2026-03-08T06:00:00Z"))
        );
        // 2026-03-08 is the spring-forward day: the next day's opening is an hour earlier in UTC.
        assert_eq!(
            w.next_opening(ts("2026-03-08T12:00:00Z")),
            Some(ts("2026-03-09T05:00:00Z"))
        );
        // Berlin, a weekly Saturday window of 90 minutes, in summer time (UTC+2).
        let b = Window::new(
            &spec("30 22 * * 6", "90m", Some("Europe/Berlin")),
            ts("2026-07-01T00:00:00Z"),
        )
        .unwrap();
        assert_eq!(
            b.at(ts("2026-07-04T21:00:00Z")),
            State::Open {
                until: ts("2026-07-04T22:00:00Z")
            }
        );
    }

    #[test]
    fn a_window_in_a_spring_forward_gap_still_opens_that_day() {
        // 02:30 does not exist in New York on 2026-03-08.
        let w = Window::new(
            &spec("30 2 * * *", "1h", Some("America/New_York")),
            ts("2026-03-07T12:00:00Z"),
        )
        .unwrap();
        let opens = w.next_opening(ts("2026-03-08T00:00:00Z")).unwrap();
        assert!(
            opens < ts("2026-03-09T00:00:00Z"),
            "the gap day's window opened at {opens}"
        );
    }

    #[test]
    fn bad_windows_name_their_field() {
        let now = ts("2026-11-28T12:00:00Z");
        let err = |s: WindowSpec| Window::new(&s, now).unwrap_err().to_string();
        assert!(err(spec("0 2 * *", "1h", None)).starts_with("window.schedule \"0 2 * *\""));
        assert!(err(spec("0 0 2 * * *", "1h", None)).starts_with("window.schedule"));
        assert!(err(spec("61 * * * *", "1h", None)).starts_with("window.schedule"));
        assert_eq!(
            err(spec("0 0 30 2 *", "1h", None)),
            "window.schedule \"0 0 30 2 *\": never opens (no time matches it)"
        );
        assert!(err(spec("0 2 * * *", "0s", None)).contains("longer than 0s"));
        assert!(err(spec("0 2 * * *", "2d", None)).starts_with("window.duration \"2d\""));
        assert!(err(spec("0 2 * * *", "200h", None)).contains("at most 168h"));
        assert_eq!(
            err(spec("0 2 * * *", "1h", Some("Mars/Olympus"))),
            "window.timeZone \"Mars/Olympus\": not an IANA time zone (such as Europe/Berlin or UTC)"
        );
    }

    #[test]
    fn go_durations_add_their_parts() {
        assert_eq!(go_duration("1h30m"), Ok(SignedDuration::from_secs(5400)));
        assert_eq!(go_duration("45s"), Ok(SignedDuration::from_secs(45)));
        assert_eq!(go_duration("0s"), Ok(SignedDuration::ZERO));
        for bad in ["", "h", "1", "1x", "-1h", "1.5h"] {
            assert!(go_duration(bad).is_err(), "{bad}");
        }
    }
}
