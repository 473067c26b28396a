//! `bee-hook statusline -- CMD…`: Claude Code's status line, passed to the
//! user's own command and its output passed back unchanged; the quota
//! snapshots in the input (`rate_limits.five_hour` / `seven_day`) are
//! recorded after the output is written.

use bee_proto::ledger::{LedgerRecord, Provider, QuotaSnapshot};
use bee_proto::usage::WindowKind;
use serde_json::Value;
use std::ffi::OsString;
use std::process::ExitCode;

use crate::{ledger, output, prompt};

pub fn run(command: &[OsString]) -> ExitCode {
    let (input, whole) = prompt::read_stdin_prefix();
    let produced = match prompt::wrapped_output(command, &input, whole) {
        Ok(produced) => produced,
        Err(failure) => {
            say!("bee-hook: {}", failure.message);
            return ExitCode::from(failure.status);
        }
    };
    output::write_stdout(&produced.bytes);
    if whole {
        ledger::record(snapshots(&input, &bee_proto::time::now_rfc3339()));
    }
    ExitCode::from(produced.status)
}

/// The quota snapshots in a status-line input; none when it carries none.
pub fn snapshots(input: &[u8], now: &str) -> Vec<LedgerRecord> {
    let Ok(value) = serde_json::from_slice::<Value>(input) else { return Vec::new() };
    let Some(limits) = value.get("rate_limits") else { return Vec::new() };
    [("five_hour", WindowKind::FiveHour, 300), ("seven_day", WindowKind::Weekly, 10_080)]
        .into_iter()
        .filter_map(|(name, window, minutes)| {
            let entry = limits.get(name)?;
            let used = entry.get("used_percentage").and_then(Value::as_f64).filter(|p| p.is_finite() && *p >= 0.0)?;
            Some(LedgerRecord::Snapshot {
                provider: Provider::Claude,
                snapshot: QuotaSnapshot {
                    observed_at_utc: now.to_owned(),
                    window,
                    window_minutes: Some(minutes),
                    used_percent: used,
                    resets_at_utc: entry.get("resets_at").and_then(reset_time),
                    limit_id: None,
                },
            })
        })
        .collect()
}

/// `resets_at` as unix seconds or as an RFC 3339 UTC time.
fn reset_time(value: &Value) -> Option<String> {
    match value {
        Value::Number(n) => n.as_u64().and_then(bee_proto::time::format_unix_seconds),
        Value::String(text) => bee_proto::time::parse_rfc3339(text).map(bee_proto::time::format_rfc3339),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snapshots_from_a_status_line_input() {
        let input = br#"{"session_id":"x","model":{"id":"claude-sonnet-4-5"},"rate_limits":{"five_hour":{"used_percentage":42.5,"resets_at":1796040000},"seven_day":{"used_percentage":7,"resets_at":"2026-12-03T00:00:00Z"}}}"#;
        let records = snapshots(input, "2026-11-30T10:00:00.000Z");
        assert_eq!(records.len(), 2);
        let LedgerRecord::Snapshot { snapshot, .. } = &records[0] else { panic!("{records:?}") };
        assert_eq!((snapshot.window, snapshot.used_percent), (WindowKind::FiveHour, 42.5));
        assert_eq!(snapshot.resets_at_utc.as_deref(), Some("2026-11-30T12:00:00.000Z"));
        let LedgerRecord::Snapshot { snapshot, .. } = &records[1] else { panic!("{records:?}") };
        assert_eq!(snapshot.resets_at_utc.as_deref(), Some("2026-12-03T00:00:00.000Z"));
        assert!(snapshots(b"{}", "2026-11-30T10:00:00.000Z").is_empty());
        assert!(snapshots(b"\xff garbage", "2026-11-30T10:00:00.000Z").is_empty());
        let hostile = br#"{"rate_limits":{"five_hour":{"used_percentage":-1},"seven_day":{"used_percentage":"x"}}}"#;
        assert!(snapshots(hostile, "2026-11-30T10:00:00.000Z").is_empty());
    }
}
