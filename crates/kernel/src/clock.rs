//! Injected time and identity. Production uses the system clock and ULIDs; tests use
//! [`FixedClock`] and [`SequentialIds`] so time windows and ids are deterministic.

use chrono::{DateTime, Duration, SecondsFormat, Utc};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

pub trait Clock: Send + Sync {
    fn now(&self) -> DateTime<Utc>;
}

/// Creates record ids and correlation ids.
pub trait IdSource: Send + Sync {
    /// A new id for a record of `object`. Must never repeat within a workspace.
    fn record_id(&self, object: &str) -> String;
    /// A new correlation id grouping the writes of one save or one import.
    fn correlation_id(&self) -> String;
}

#[derive(Debug, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }
}

/// A clock that stands still until a test moves it.
#[derive(Debug)]
pub struct FixedClock(Mutex<DateTime<Utc>>);

impl FixedClock {
    pub fn at(rfc3339: &str) -> Self {
        let t = DateTime::parse_from_rfc3339(rfc3339)
            .expect("FixedClock::at needs an RFC 3339 time")
            .with_timezone(&Utc);
        FixedClock(Mutex::new(t))
    }

    pub fn advance(&self, by: Duration) {
        let mut t = self.0.lock().expect("clock lock");
        *t += by;
    }
}

impl Clock for FixedClock {
    fn now(&self) -> DateTime<Utc> {
        *self.0.lock().expect("clock lock")
    }
}

/// ULID-based ids: `<object>_<ulid>` for records, a bare ULID for correlations.
#[derive(Debug, Default)]
pub struct UlidIds;

impl IdSource for UlidIds {
    fn record_id(&self, object: &str) -> String {
        format!("{object}_{}", ulid::Ulid::new().to_string().to_lowercase())
    }
    fn correlation_id(&self) -> String {
        ulid::Ulid::new().to_string().to_lowercase()
    }
}

/// Deterministic ids for tests: `<object>_t0001`, `corr_0001`, …
#[derive(Debug, Default)]
pub struct SequentialIds(AtomicU64);

impl SequentialIds {
    /// Ids that go on after `issued` were handed out (a copy of a workspace made with them).
    pub fn after(issued: u64) -> SequentialIds {
        SequentialIds(AtomicU64::new(issued))
    }

    /// How many ids were handed out.
    pub fn issued(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

impl IdSource for SequentialIds {
    fn record_id(&self, object: &str) -> String {
        let n = self.0.fetch_add(1, Ordering::Relaxed) + 1;
        format!("{object}_t{n:04}")
    }
    fn correlation_id(&self) -> String {
        let n = self.0.fetch_add(1, Ordering::Relaxed) + 1;
        format!("corr_{n:04}")
    }
}

/// The calendar day `now` falls on in the workspace's time zone (an IANA name such as
/// `Europe/Berlin`; `None` or a name this machine does not know: UTC).
pub fn local_day(now: DateTime<Utc>, time_zone: Option<&str>) -> chrono::NaiveDate {
    let Some(tz) = zone(time_zone) else { return now.date_naive() };
    let Ok(ts) = jiff::Timestamp::from_second(now.timestamp()) else { return now.date_naive() };
    let d = ts.to_zoned_datetime(tz).date();
    chrono::NaiveDate::from_ymd_opt(d.year() as i32, d.month() as u32, d.day() as u32)
        .unwrap_or(now.date_naive())
}

/// The instant a calendar day starts in the workspace's time zone (UTC when none).
pub fn day_start(day: chrono::NaiveDate, time_zone: Option<&str>) -> DateTime<Utc> {
    use chrono::Datelike;
    let utc = day.and_hms_opt(0, 0, 0).expect("midnight exists").and_utc();
    let Some(tz) = zone(time_zone) else { return utc };
    let Ok(date) = jiff::civil::Date::new(day.year() as i16, day.month() as i8, day.day() as i8) else {
        return utc;
    };
    // A day that starts in a DST gap starts at the first instant that exists.
    match date.to_zoned_datetime(tz) {
        Ok(z) => DateTime::from_timestamp(z.timestamp().as_second(), 0).unwrap_or(utc),
        Err(_) => utc,
    }
}

/// Whether this machine knows the time zone name.
pub fn known_time_zone(name: &str) -> bool {
    jiff::tz::TimeZone::get(name).is_ok()
}

fn zone(name: Option<&str>) -> Option<jiff::tz::TimeZone> {
    jiff::tz::TimeZone::get(name?).ok()
}

/// The one timestamp format stored and shown: RFC 3339, UTC, seconds.
pub fn timestamp(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Secs, true)
}
