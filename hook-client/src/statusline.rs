//! `bee-hook statusline`: Claude Code's status line. Without a command it
//! prints a line of its own from the status-line input and a glance at the
//! ledger (model, context used, the five-hour window, today's tokens and
//! estimated cost, the session's cost); with `-- CMD` it passes the input
//! to the user's own command and its output back unchanged (`--append`
//! adds Bee's line after it). Either way the quota snapshots in the input
//! (`rate_limits.five_hour` / `seven_day`) are recorded after the output is
//! written. A figure nobody observed is left out, never guessed: with beed
//! down the line has what the input says and nothing from the ledger.

use bee_proto::ledger::{LEDGER_GLANCE_PATH, LedgerGlance, LedgerRecord, Provider, QuotaSnapshot, WindowGlance};
use bee_proto::usage::{WindowKind, usd_text, usd_text_bounded};
use serde_json::Value;
use std::ffi::OsString;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use crate::{ledger, output, post, prompt};

/// How long the line waits for beed's glance: Claude Code redraws the line
/// every few hundred milliseconds, and a line without the ledger's figures
/// is better than a late one.
const GLANCE_DEADLINE: Duration = Duration::from_millis(50);

/// The line when `--format` does not say: segments (split at ` | `) whose
/// fields are all known, joined the same way.
pub const DEFAULT_FORMAT: &str = "{model} | ctx {context} | 5h {five_hour} | resets in {five_hour_reset} | today {today_tokens} {today_cost} | session {session_cost}";

/// The fields a `--format` may name.
pub const FIELDS: [&str; 9] = [
    "model",
    "context",
    "five_hour",
    "five_hour_reset",
    "weekly",
    "weekly_reset",
    "today_tokens",
    "today_cost",
    "session_cost",
];

pub fn run(command: &[OsString], format: Option<&str>, append: bool) -> ExitCode {
    let format = format.unwrap_or(DEFAULT_FORMAT);
    if let Err(message) = check_format(format) {
        // The line still shows: the segment with an unknown field is
        // dropped, like one nobody observed.
        say!("bee-hook: --format: {message} (its segment is left out)");
    }
    let (input, whole) = prompt::read_stdin_prefix();
    // Parsed once, for Bee's line and the snapshots alike; a cut-off input
    // is no JSON.
    let given: Value = if whole { serde_json::from_slice(&input).unwrap_or(Value::Null) } else { Value::Null };
    let status = if command.is_empty() {
        let line = own_line(&given, format);
        output::write_stdout(format!("{line}\n").as_bytes());
        0
    } else {
        let produced = match prompt::wrapped_output(command, &input, whole) {
            Ok(produced) => produced,
            Err(failure) => {
                say!("bee-hook: {}", failure.message);
                return ExitCode::from(failure.status);
            }
        };
        let mut bytes = produced.bytes;
        if append && produced.status == 0 {
            let line = own_line(&given, format);
            if !line.is_empty() {
                while bytes.last() == Some(&b'\n') {
                    bytes.pop();
                }
                if !bytes.is_empty() {
                    bytes.extend_from_slice(b" | ");
                }
                bytes.extend_from_slice(line.as_bytes());
                bytes.push(b'\n');
            }
        }
        output::write_stdout(&bytes);
        produced.status
    };
    if whole {
        ledger::record(snapshots(&given, &bee_proto::time::now_rfc3339()));
    }
    ExitCode::from(status)
}

/// Bee's line for the status-line input, with beed's glance when the line
/// needs the ledger (today's figures, or a window the input lacks) and beed
/// answers in time: no socket round trip otherwise.
fn own_line(status: &Value, format: &str) -> String {
    let lacks = |window: &str| percent(&status["rate_limits"][window]["used_percentage"]).is_none();
    let needs_ledger = format.contains("{today_")
        || (format.contains("{five_hour") && lacks("five_hour"))
        || (format.contains("{weekly") && lacks("seven_day"));
    let glance = if needs_ledger { ask_glance() } else { None };
    render(format, &fields(status, glance.as_ref(), bee_proto::time::now_unix_ms()))
}

fn ask_glance() -> Option<LedgerGlance> {
    let socket = bee_proto::paths::socket_path()?;
    let answer =
        post::exchange(socket, "GET", LEDGER_GLANCE_PATH, Vec::new(), Instant::now() + GLANCE_DEADLINE, 64 * 1024)
            .ok()?;
    match post::status_and_body(&answer)? {
        (200, body) => serde_json::from_slice(body).ok(),
        _ => None,
    }
}

/// Each field's text, `None` when nobody observed it.
pub fn fields(status: &Value, glance: Option<&LedgerGlance>, now_ms: i64) -> Vec<(&'static str, Option<String>)> {
    let model = status["model"]["display_name"].as_str().or(status["model"]["id"].as_str()).map(str::to_owned);
    let context = percent(&status["context_window"]["used_percentage"]);
    let window = |name: &str, kind: WindowKind| -> (Option<String>, Option<String>) {
        let given = &status["rate_limits"][name];
        if let Some(used) = percent(&given["used_percentage"]) {
            let resets = reset_ms(&given["resets_at"]);
            return (Some(used), resets.and_then(|at| bee_proto::time::countdown(at, now_ms)));
        }
        let latest: Option<&WindowGlance> =
            glance.and_then(|g| g.windows.iter().find(|w| w.provider == Provider::Claude && w.window == kind));
        match latest {
            Some(w) => (
                Some(format!("{:.0}%", w.used_percent)),
                w.resets_at_utc
                    .as_deref()
                    .and_then(bee_proto::time::parse_rfc3339_ms)
                    .and_then(|at| bee_proto::time::countdown(at, now_ms)),
            ),
            None => (None, None),
        }
    };
    let (five_hour, five_hour_reset) = window("five_hour", WindowKind::FiveHour);
    let (weekly, weekly_reset) = window("seven_day", WindowKind::Weekly);
    let today = glance.map(|g| &g.today);
    let today_tokens = today.and_then(|t| {
        let lower_bound = if t.partial_parts > 0 { "≥" } else { "" };
        t.tokens.total_tokens.map(|n| format!("{lower_bound}{}", tokens(n)))
    });
    let today_cost = today.and_then(|t| {
        let lower_bound = t.unpriced_parts > 0 || t.partial_parts > 0;
        t.estimated_cost_usd.map(|c| format!("est {}", usd_text_bounded(c, lower_bound)))
    });
    // Claude Code's own figure for its session.
    let session_cost = status["cost"]["total_cost_usd"].as_f64().filter(|c| c.is_finite() && *c >= 0.0).map(usd_text);
    vec![
        ("model", model),
        ("context", context),
        ("five_hour", five_hour),
        ("five_hour_reset", five_hour_reset),
        ("weekly", weekly),
        ("weekly_reset", weekly_reset),
        ("today_tokens", today_tokens),
        ("today_cost", today_cost),
        ("session_cost", session_cost),
    ]
}

fn percent(value: &Value) -> Option<String> {
    value.as_f64().filter(|p| p.is_finite() && (0.0..=1000.0).contains(p)).map(|p| format!("{p:.0}%"))
}

/// `resets_at` as unix seconds or RFC 3339, in unix milliseconds.
fn reset_ms(value: &Value) -> Option<i64> {
    match value {
        Value::Number(n) => n.as_i64().filter(|s| (0..253_402_300_800).contains(s)).map(|s| s * 1000),
        Value::String(text) => bee_proto::time::parse_rfc3339_ms(text),
        _ => None,
    }
}

/// `950`, `12.3k`, `4.5M`, `1.2B`; a figure that rounds up to the next
/// unit is shown in it (`1.0M`, never `1000.0k`).
fn tokens(n: u64) -> String {
    match n {
        0..1_000 => n.to_string(),
        1_000..999_950 => format!("{:.1}k", n as f64 / 1e3),
        999_950..999_950_000 => format!("{:.1}M", n as f64 / 1e6),
        _ => format!("{:.1}B", n as f64 / 1e9),
    }
}

/// The `{name}`s of `text`, in order; `Err` at a `{` without its `}`.
fn placeholders(text: &str) -> impl Iterator<Item = Result<&str, ()>> + '_ {
    let mut rest = Some(text);
    std::iter::from_fn(move || {
        let open = rest?.find('{')?;
        let after = &rest?[open + 1..];
        match after.find('}') {
            Some(close) => {
                rest = Some(&after[close + 1..]);
                Some(Ok(&after[..close]))
            }
            None => {
                rest = None;
                Some(Err(()))
            }
        }
    })
}

/// Every `{field}` of `format` is one of [`FIELDS`].
pub fn check_format(format: &str) -> Result<(), String> {
    for name in placeholders(format) {
        let Ok(name) = name else { return Err("a { without its }".to_owned()) };
        if !FIELDS.contains(&name) {
            return Err(format!("unknown field {{{name}}}; the fields are {}", FIELDS.join(", ")));
        }
    }
    Ok(())
}

/// `format` with its fields filled; a ` | `-separated segment with a field
/// nobody observed, or no field Bee knows, is left out.
pub fn render(format: &str, fields: &[(&'static str, Option<String>)]) -> String {
    let segments: Vec<String> = format
        .split(" | ")
        .filter_map(|segment| {
            let mut text = segment.to_owned();
            for (name, value) in fields {
                let placeholder = format!("{{{name}}}");
                if text.contains(&placeholder) {
                    text = text.replace(&placeholder, value.as_deref()?);
                }
            }
            Some(text.trim().to_owned()).filter(|t| !t.is_empty() && !has_placeholder(t))
        })
        .collect();
    segments.join(" | ")
}

/// Whether `text` still holds a `{name}` (a field no value was put in).
fn has_placeholder(text: &str) -> bool {
    placeholders(text)
        .flatten()
        .any(|name| !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
}

/// The quota snapshots in a status-line input; none when it carries none.
pub fn snapshots(input: &Value, now: &str) -> Vec<LedgerRecord> {
    let Some(limits) = input.get("rate_limits") else { return Vec::new() };
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
                    resets_at_utc: entry.get("resets_at").and_then(reset_ms).map(bee_proto::time::format_unix_ms),
                    limit_id: None,
                },
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use bee_proto::ledger::UsageRow;
    use bee_proto::usage::Counters;

    const NOW: i64 = 1_796_032_200_000; // 2026-11-30T09:50:00Z

    fn snapshots(input: &[u8], now: &str) -> Vec<LedgerRecord> {
        super::snapshots(&serde_json::from_slice(input).unwrap_or(Value::Null), now)
    }

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

    fn glance() -> LedgerGlance {
        LedgerGlance {
            schema_version: 1,
            at_utc: "2026-11-30T09:50:00.000Z".into(),
            timezone: "UTC".into(),
            today: UsageRow {
                tokens: Counters { total_tokens: Some(1_234_567), ..Counters::default() },
                estimated_cost_usd: Some(3.456),
                ..UsageRow::default()
            },
            windows: vec![WindowGlance {
                provider: Provider::Claude,
                window: WindowKind::FiveHour,
                used_percent: 61.0,
                resets_at_utc: Some("2026-11-30T12:00:00.000Z".into()),
                observed_at_utc: "2026-11-30T09:00:00.000Z".into(),
            }],
        }
    }

    #[test]
    fn the_line_takes_the_input_first_then_the_ledger_and_never_guesses() {
        let with_limits: Value = serde_json::from_str(
            r#"{"model":{"id":"claude-sonnet-4-5","display_name":"Sonnet 4.5"},"context_window":{"used_percentage":42.4},
                "cost":{"total_cost_usd":0.4567},"rate_limits":{"five_hour":{"used_percentage":37,"resets_at":1796040000}}}"#,
        )
        .unwrap();
        let line = render(DEFAULT_FORMAT, &fields(&with_limits, Some(&glance()), NOW));
        assert_eq!(line, "Sonnet 4.5 | ctx 42% | 5h 37% | resets in 2h 10m | today 1.2M est $3.46 | session $0.46");
        let without: Value = serde_json::from_str(r#"{"model":{"display_name":"Opus"}}"#).unwrap();
        let line = render(DEFAULT_FORMAT, &fields(&without, Some(&glance()), NOW));
        assert_eq!(line, "Opus | 5h 61% | resets in 2h 10m | today 1.2M est $3.46", "the ledger's snapshot");
        let line = render(DEFAULT_FORMAT, &fields(&without, None, NOW));
        assert_eq!(line, "Opus", "beed down: nothing from the ledger, nothing guessed");
        let line = render(DEFAULT_FORMAT, &fields(&Value::Null, None, NOW));
        assert_eq!(line, "");
    }

    #[test]
    fn formats_name_known_fields() {
        assert!(check_format(DEFAULT_FORMAT).is_ok());
        assert!(check_format("{model} {nope}").is_err());
        assert!(check_format("{model").is_err());
        assert!(check_format("plain text").is_ok());
        let fields = vec![("model", Some("Opus".to_owned())), ("context", None)];
        assert_eq!(render("[{model}] | {context} used | x", &fields), "[Opus] | x");
        assert_eq!(render("{model} | {bogus} | x", &fields), "Opus | x", "an unknown field's segment is dropped");
        assert_eq!(render("{bogus}", &fields), "");
    }

    #[test]
    fn durations_and_sizes_read_well() {
        use bee_proto::time::countdown;
        assert_eq!(countdown(NOW + 45 * 60_000, NOW).as_deref(), Some("45m"));
        assert_eq!(countdown(NOW + 130 * 60_000, NOW).as_deref(), Some("2h 10m"));
        assert_eq!(countdown(NOW + (3 * 1440 + 4 * 60) * 60_000, NOW).as_deref(), Some("3d 4h"));
        assert_eq!(countdown(NOW - 1, NOW), None, "a reset that has passed says nothing");
        assert_eq!(countdown(i64::MIN, i64::MAX), None);
        assert_eq!((tokens(950), tokens(12_345), tokens(4_500_000)), ("950".into(), "12.3k".into(), "4.5M".into()));
        assert_eq!(
            (tokens(999_949), tokens(999_950), tokens(999_999)),
            ("999.9k".into(), "1.0M".into(), "1.0M".into())
        );
        assert_eq!((tokens(999_949_999), tokens(999_950_000)), ("999.9M".into(), "1.0B".into()));
        assert_eq!(tokens(u64::MAX), "18446744073.7B");
    }
}
