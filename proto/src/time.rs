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
    millis_shape_ms(text).is_some() || (text.ends_with('Z') && humantime::parse_rfc3339(text).is_ok())
}

/// Unix milliseconds of `text` when it has the shape both CLIs write on
/// every log line (`2026-11-30T10:00:01.000Z`) and a time humantime
/// accepts, read without building a `SystemTime`: ingestion reads a time
/// or three per response. `None` for anything else, which humantime then
/// reads, so the two never disagree (a test holds them to that).
fn millis_shape_ms(text: &str) -> Option<i64> {
    let b: &[u8; 24] = text.as_bytes().try_into().ok()?;
    if b[4] != b'-' || b[7] != b'-' || b[10] != b'T' || b[13] != b':' || b[16] != b':' || b[19] != b'.' || b[23] != b'Z'
    {
        return None;
    }
    let digit = |at: usize| {
        let value = b[at].wrapping_sub(b'0');
        (value < 10).then_some(i64::from(value))
    };
    let two = |at: usize| Some(digit(at)? * 10 + digit(at + 1)?);
    let (year, month, day) = (two(0)? * 100 + two(2)?, two(5)?, two(8)?);
    let (hour, minute, second, millis) = (two(11)?, two(14)?, two(17)?, two(20)? * 10 + digit(22)?);
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let month_days = match month {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        _ => return None,
    };
    // humantime reads a leap second as the second before it.
    if year < 1970 || day == 0 || day > month_days || hour > 23 || minute > 59 || second > 60 {
        return None;
    }
    // Days since 1970-01-01 of the civil date (Howard Hinnant's algorithm).
    let (y, m) = if month <= 2 { (year - 1, month + 9) } else { (year, month - 3) };
    let era_day = y % 400 * 365 + y % 400 / 4 - y % 400 / 100 + (153 * m + 2) / 5 + day - 1;
    let days = y / 400 * 146_097 + era_day - 719_468;
    Some(((days * 24 + hour) * 60 + minute) * 60_000 + second.min(59) * 1_000 + millis)
}

/// RFC 3339 UTC of unix seconds; `None` past year 9999, which RFC 3339
/// cannot spell (and a hostile log may claim).
pub fn format_unix_seconds(seconds: u64) -> Option<String> {
    if seconds > (LATEST_RFC3339_MS / 1000) as u64 {
        return None;
    }
    std::time::UNIX_EPOCH.checked_add(std::time::Duration::from_secs(seconds)).map(format_rfc3339)
}

/// RFC 3339 UTC of unix milliseconds (a time before 1970 is read as 1970,
/// one after 9999 as the last millisecond of 9999: RFC 3339 spells no other).
pub fn format_unix_ms(ms: i64) -> String {
    let ms = ms.clamp(0, LATEST_RFC3339_MS);
    // Written digit by digit, as humantime writes it (a test holds the two
    // to each other): views write two of these per row, and a report of
    // every session has tens of thousands of rows.
    let (days, in_day) = (ms.div_euclid(86_400_000), ms.rem_euclid(86_400_000));
    // The civil date of a day since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let (era, day_of_era) = (z / 146_097, z % 146_097);
    let year_of_era = (day_of_era - day_of_era / 1_460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let shifted_month = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * shifted_month + 2) / 5 + 1;
    let month = if shifted_month < 10 { shifted_month + 3 } else { shifted_month - 9 };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    let mut text = *b"0000-00-00T00:00:00.000Z";
    let mut put = |at: usize, width: usize, mut value: i64| {
        for digit in text[at..at + width].iter_mut().rev() {
            *digit = b'0' + (value % 10) as u8;
            value /= 10;
        }
    };
    put(0, 4, year);
    put(5, 2, month);
    put(8, 2, day);
    put(11, 2, in_day / 3_600_000);
    put(14, 2, in_day / 60_000 % 60);
    put(17, 2, in_day / 1_000 % 60);
    put(20, 3, in_day % 1_000);
    std::str::from_utf8(&text).unwrap_or_default().to_owned()
}

/// Parses an RFC 3339 UTC timestamp (with `Z`).
pub fn parse_rfc3339(text: &str) -> Option<SystemTime> {
    if !text.ends_with('Z') {
        return None;
    }
    humantime::parse_rfc3339(text).ok()
}

/// The last unix millisecond RFC 3339 can spell (9999-12-31T23:59:59.999Z).
pub const LATEST_RFC3339_MS: i64 = 253_402_300_799_999;

/// Whether `ms` is a time [`parse_rfc3339_ms`] can give: from 1970 to the
/// end of year 9999.
pub fn spells_as_rfc3339(ms: i64) -> bool {
    (0..=LATEST_RFC3339_MS).contains(&ms)
}

/// Unix milliseconds of an RFC 3339 UTC time.
pub fn parse_rfc3339_ms(text: &str) -> Option<i64> {
    if let Some(ms) = millis_shape_ms(text) {
        return Some(ms);
    }
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

    /// humantime's answer, which the fast path must give.
    fn humantime_ms(text: &str) -> Option<i64> {
        let at = parse_rfc3339(text)?;
        i64::try_from(at.duration_since(std::time::UNIX_EPOCH).ok()?.as_millis()).ok()
    }

    #[test]
    fn the_common_shape_reads_as_humantime_reads_it() {
        // Every day from 1969 to 2401 at a few times, leap days and the
        // days after month ends included, and a leap second.
        let mut checked = 0;
        for year in [1969, 1970, 1971, 1999, 2000, 2024, 2026, 2100, 2400, 2401, 9999] {
            for month in 0..=13 {
                for day in 0..=32 {
                    for time in ["00:00:00.000", "10:00:01.007", "23:59:60.999", "24:00:00.000", "12:60:00.000"] {
                        let text = format!("{year:04}-{month:02}-{day:02}T{time}Z");
                        assert_eq!(parse_rfc3339_ms(&text), humantime_ms(&text), "{text}");
                        assert_eq!(is_rfc3339_utc(&text), humantime_ms(&text).is_some(), "{text}");
                        checked += usize::from(millis_shape_ms(&text).is_some());
                    }
                }
            }
        }
        assert!(checked > 10_000, "the fast path read {checked}");
        // Near the shape: humantime decides.
        for text in [
            "2026-11-30T10:00:01.00Z",
            "2026-11-30T10:00:01.0000Z",
            "2026-11-30 10:00:01.000Z",
            "2026-11-30T10:00:01,000Z",
            "2026-11-30T10:00:01.0a0Z",
            "+026-11-30T10:00:01.000Z",
            "2026-11-30T10:00:01.000+00:00",
            "2026-11-30T10:00:01Z",
            "２０２6-11-30T10:00:01.000Z",
        ] {
            assert_eq!(millis_shape_ms(text), None, "{text}");
            assert_eq!(parse_rfc3339_ms(text), humantime_ms(text), "{text}");
        }
        // Any one byte of a time changed.
        for base in ["2026-02-28T23:59:59.999Z", "2024-02-29T00:00:00.000Z"] {
            for at in 0..base.len() {
                for byte in b"0123456789-T:.Z +a/" {
                    let mut text = base.as_bytes().to_vec();
                    text[at] = *byte;
                    let text = String::from_utf8(text).unwrap_or_default();
                    assert_eq!(parse_rfc3339_ms(&text), humantime_ms(&text), "{text}");
                }
            }
        }
        assert_eq!(parse_rfc3339_ms("2026-11-30T12:00:00.250Z"), Some(1_796_040_000_250));
    }

    /// Every day from 1970 to 2399 and times spread to year 9999: written
    /// as humantime writes them; none past what RFC 3339 spells.
    #[test]
    fn unix_ms_are_written_as_humantime_writes_them() {
        let humantime = |ms: i64| format_rfc3339(std::time::UNIX_EPOCH + std::time::Duration::from_millis(ms as u64));
        let mut times: Vec<i64> =
            (0..157_000).flat_map(|day: i64| [day * 86_400_000, day * 86_400_000 + 86_399_999]).collect();
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        for _ in 0..200_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            times.push((state % (LATEST_RFC3339_MS as u64 + 1)) as i64);
        }
        times.extend([LATEST_RFC3339_MS, 951_782_400_000, 1_796_040_000_250]);
        for ms in times {
            assert_eq!(format_unix_ms(ms), humantime(ms), "{ms}");
        }
        assert_eq!(format_unix_ms(-5), "1970-01-01T00:00:00.000Z");
        assert_eq!(format_unix_ms(i64::MAX), "9999-12-31T23:59:59.999Z");
        assert_eq!(format_unix_ms(1_796_040_000_250), "2026-11-30T12:00:00.250Z");
    }

    #[test]
    fn round_trips_and_rejects_offsets() {
        let now = now_rfc3339();
        assert!(is_rfc3339_utc(&now), "{now}");
        assert!(!is_rfc3339_utc("2026-11-30T12:00:00+01:00"));
        assert!(!is_rfc3339_utc("yesterday"));
    }
}
