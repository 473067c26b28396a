//! A glance at the ledger for a status line or a live view: today's usage
//! (the local day) with its estimated and reported cost, and each
//! provider's latest quota windows that have not reset yet. A window whose
//! reset time has passed is not shown: its use since is unknown.

use bee_proto::delivery::Issue;
use bee_proto::ledger::{LedgerGlance, UsageGrouping, WindowGlance};
use bee_proto::time::format_unix_ms;
use bee_proto::usage::WindowKind;
use std::path::Path;

use crate::ledger::stored::schema::Range;
use crate::ledger::stored::store::{Reader, kind_of};
use crate::ledger::views::calendar::Zone;
use crate::ledger::views::prices::PriceTable;
use crate::ledger::views::usage::{self, UsageAsk};

/// The longest window (a week): snapshots older than that describe windows
/// that have reset.
const WEEK_MS: i64 = 7 * 24 * 3_600_000;

/// The glance at the ledger in `dir` at `now_ms`, days in `zone`.
pub fn glance(dir: &Path, now_ms: i64, zone: &Zone, prices: &PriceTable) -> Result<LedgerGlance, Issue> {
    let today = Range { since_ms: zone.day_start(now_ms), until_ms: now_ms.max(zone.day_start(now_ms) + 1) };
    let ask = UsageAsk::new(today, UsageGrouping::Day, zone.clone());
    let report = usage::report(dir, &ask, prices)?;
    let mut totals = report.totals;
    totals.key = Some(zone.day_key(now_ms));
    let reader = Reader::open(dir)?;
    let (snapshots, _) = reader.snapshots(Range { since_ms: now_ms - WEEK_MS, until_ms: now_ms + 1 })?;
    let mut windows: Vec<WindowGlance> = Vec::new();
    // Newest first: the newest snapshot of a window decides, and says
    // nothing when that window has reset since.
    let mut decided = Vec::new();
    for snapshot in snapshots.iter().rev() {
        let kind = kind_of(snapshot);
        if kind == WindowKind::Other || decided.contains(&(snapshot.provider, kind)) {
            continue;
        }
        decided.push((snapshot.provider, kind));
        let length = if kind == WindowKind::FiveHour { 5 * 3_600_000 } else { WEEK_MS };
        let current = match snapshot.resets_ms {
            Some(resets) => resets > now_ms,
            // No reset time: current only while a window begun then could be.
            None => now_ms - snapshot.observed_ms < length,
        };
        if current {
            windows.push(WindowGlance {
                provider: snapshot.provider,
                window: kind,
                used_percent: snapshot.used_percent,
                resets_at_utc: snapshot.resets_ms.map(format_unix_ms),
                observed_at_utc: format_unix_ms(snapshot.observed_ms),
            });
        }
    }
    windows.sort_by_key(|w| (w.provider, w.window == WindowKind::Weekly));
    Ok(LedgerGlance {
        schema_version: 1,
        at_utc: format_unix_ms(now_ms),
        timezone: zone.name.clone(),
        today: totals,
        windows,
    })
}
