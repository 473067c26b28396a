//! UTC timestamps: RFC 3339 with a `Z` suffix, as every Bee record spells them.

use std::time::SystemTime;

/// The current time as RFC 3339 UTC with millisecond precision.
pub fn now_rfc3339() -> String {
    format_rfc3339(SystemTime::now())
}

/// Formats `at` as RFC 3339 UTC with millisecond precision.
pub fn format_rfc3339(at: SystemTime) -> String {
    humantime::format_rfc3339_millis(at).to_string()
}

/// Whether `text` is an RFC 3339 UTC timestamp with a `Z` suffix.
pub fn is_rfc3339_utc(text: &str) -> bool {
    text.ends_with('Z') && humantime::parse_rfc3339(text).is_ok()
}

/// RFC 3339 UTC of unix seconds; `None` past year 9999, which RFC 3339
/// cannot spell (and a hostile log may claim).
pub fn format_unix_seconds(seconds: u64) -> Option<String> {
    if seconds >= 253_402_300_800 {
        return None;
    }
    std::time::UNIX_EPOCH.checked_add(std::time::Duration::from_secs(seconds)).map(format_rfc3339)
}

/// RFC 3339 UTC of unix milliseconds (a time before 1970 is read as 1970).
pub fn format_unix_ms(ms: i64) -> String {
    format_rfc3339(std::time::UNIX_EPOCH + std::time::Duration::from_millis(ms.max(0) as u64))
}

/// Parses an RFC 3339 UTC timestamp (with `Z`).
pub fn parse_rfc3339(text: &str) -> Option<SystemTime> {
    if !text.ends_with('Z') {
        return None;
    }
    humantime::parse_rfc3339(text).ok()
}

/// Unix milliseconds of an RFC 3339 UTC time.
pub fn parse_rfc3339_ms(text: &str) -> Option<i64> {
    let at = parse_rfc3339(text)?;
    i64::try_from(at.duration_since(std::time::UNIX_EPOCH).ok()?.as_millis()).ok()
}

/// Unix milliseconds now (0 before 1970, which no clock here reads).
pub fn now_unix_ms() -> i64 {
    SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// A span of whole minutes as people read it on a status line: `45m`,
/// `2h 10m`, `3d 4h`.
pub fn minutes_text(minutes: i64) -> String {
    match (minutes / 1440, minutes / 60 % 24, minutes % 60) {
        (0, 0, m) => format!("{m}m"),
        (0, h, m) => format!("{h}h {m:02}m"),
        (d, h, _) => format!("{d}d {h}h"),
    }
}

/// The time from `now_ms` until `at_ms`, rounded up to a minute; `None`
/// once it has passed.
pub fn countdown(at_ms: i64, now_ms: i64) -> Option<String> {
    let minutes = at_ms.checked_sub(now_ms)?.checked_add(59_999)? / 60_000;
    (minutes > 0).then(|| minutes_text(minutes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unix_seconds_in_range_only() {
        assert_eq!(format_unix_seconds(1_796_040_000).as_deref(), Some("2026-11-30T12:00:00.000Z"));
        assert_eq!(format_unix_seconds(999_999_999_999), None);
        assert_eq!(format_unix_seconds(u64::MAX), None);
    }

    #[test]
    fn round_trips_and_rejects_offsets() {
        let now = now_rfc3339();
        assert!(is_rfc3339_utc(&now), "{now}");
        assert!(!is_rfc3339_utc("2026-11-30T12:00:00+01:00"));
        assert!(!is_rfc3339_utc("yesterday"));
    }
}
