//! A Reasonix statistics file (`<state root>/stats/YYYY-MM-DD.jsonl`):
//! one JSON object a line, appended (`O_APPEND`, under a lock) by its
//! recorder. A usage row is `{ts, model: "provider/model", source, prompt,
//! completion, reasoning, cache_hit, cache_miss, total, requests, …}`, its
//! counters omitted when 0 (Go's `omitempty`); `{ts, turn: true}` marks a
//! completed turn, a row with `compaction` records a context compaction,
//! and a row of `requests` alone counts failed requests: none of those
//! carries tokens, and none is a response. `prompt` includes the cached
//! part (`cache_hit`); `completion` includes `reasoning`.
//!
//! A row keeps no id and no session: the file's day names the session,
//! and a row is keyed by its day, its place in the file (the file only
//! grows) and what it says (its time and counters), so the file read again
//! counts each row once. A row with `requests` above 1 sums that many
//! provider requests whose tokens it does not split: it is one response.

use bee_proto::ledger::Provider;
use bee_proto::usage::Counters;
use serde_json::Value;
use std::path::Path;

use crate::ledger::agents::agent::FileReader;
use crate::ledger::agents::lines::{
    Found, LastName, NamedSession, Unread, contains, decode_state, encode_state, markers, parse_record, spelled, text,
};
use crate::ledger::agents::sparse::keep;
use crate::ledger::stored::evidence::{AgentState, Evidence};

markers! {
    /// Every row's time, as Go's encoder spells its key.
    TIME = b"\"ts\"";
}

keep! {
    /// What [`Stats::read`] reads of a line.
    LINE = ["ts", "model", "turn", "prompt", "completion", "reasoning", "cache_hit", "cache_miss", "total"];
}

/// Ingestion's reader of one day's statistics file.
pub(super) struct Stats {
    /// The session named last (kept where reading stops).
    session: NamedSession,
    /// The file's day (its name without `.jsonl`), the session its rows
    /// belong to; `None` for a file whose name gives none.
    day: Option<String>,
    sessions: LastName,
    models: LastName,
}

impl Stats {
    pub(super) fn new(path: &Path, state: &AgentState) -> Stats {
        let day = path.file_stem().and_then(|stem| stem.to_str()).filter(|stem| !stem.is_empty()).map(str::to_owned);
        Stats { session: decode_state(state), day, sessions: LastName::default(), models: LastName::default() }
    }

    /// Reads one row that starts at byte `at`; `false` for a usage row
    /// it could not read.
    fn read(&mut self, row: &Value, at: u64, out: &mut Vec<Evidence>) -> bool {
        if row.get("turn").and_then(Value::as_bool) == Some(true) {
            return true;
        }
        let field = |name: &str| omitted_is_zero(row.get(name));
        let recorded = ["prompt", "completion", "reasoning", "cache_hit", "cache_miss", "total"].map(field);
        let [prompt, completion, reasoning, cache_hit, cache_miss, total] = recorded;
        // A turn, a compaction, a failed request's count: no tokens, no response.
        if recorded.iter().all(|counter| *counter == Some(0)) {
            return true;
        }
        let Some(day) = self.day.clone() else { return false };
        let Some(at_ms) = time_ms(row.get("ts")) else { return false };
        // An explicit miss count is the fresh input (as its readers take
        // it); without one, the fresh input is what the prompt holds
        // beyond its cached part.
        let input = match cache_miss {
            Some(miss) if miss > 0 => cache_hit.and_then(|hit| hit.checked_add(miss)),
            _ => prompt,
        };
        let counters = Counters {
            // A cached part larger than the whole: the input is unknown.
            input_tokens: input.filter(|&input| cache_hit.is_none_or(|hit| hit <= input)),
            cached_input_tokens: cache_hit,
            output_tokens: completion,
            reasoning_output_tokens: reasoning.filter(|&reasoning| completion.is_none_or(|all| reasoning <= all)),
            total_tokens: total,
            ..Counters::default()
        };
        let mut found = Found::new(Provider::Reasonix, &mut self.sessions, &mut self.models, out);
        self.session.name(&day, None, &mut found);
        let key = format!("{day}\u{1f}{at}\u{1f}{at_ms}\u{1f}{}", spelled(&recorded));
        found.response(key, &day, at_ms, text(row, "/model"), counters);
        true
    }
}

impl FileReader for Stats {
    fn line(&mut self, line: &[u8], at: u64, out: &mut Vec<Evidence>) -> bool {
        if !contains(line, &TIME) {
            return true;
        }
        match parse_record(line, &LINE, at) {
            Ok(row @ Value::Object(_)) => self.read(&row, at, out),
            Ok(_) | Err(Unread::Malformed) => false,
            // Named already: not also counted as unparseable.
            Err(Unread::Noted) => true,
        }
    }

    fn finish(&mut self, _quiet_before_ms: i64, _out: &mut Vec<Evidence>) {}

    fn resume(&self, offset: u64) -> (u64, AgentState) {
        (offset, encode_state(&self.session))
    }
}

/// A counter of a usage row: its writer omits one that is 0, so an absent
/// counter is 0; one that is no count is unknown.
fn omitted_is_zero(value: Option<&Value>) -> Option<u64> {
    match value {
        None => Some(0),
        Some(value) => value.as_u64(),
    }
}

/// A row's time: Go's RFC 3339 with the local offset
/// (`2026-08-04T17:10:11.123456789+08:00`), or unix milliseconds.
fn time_ms(value: Option<&Value>) -> Option<i64> {
    let ms = match value? {
        Value::String(time) => time.parse::<jiff::Timestamp>().ok()?.as_millisecond(),
        Value::Number(ms) => ms.as_i64()?,
        _ => return None,
    };
    Some(ms).filter(|&ms| bee_proto::time::spells_as_rfc3339(ms))
}

/// Whether `name` is a day's file as Reasonix names it: `YYYY-MM-DD.jsonl`.
pub(super) fn is_day_file(name: &str) -> bool {
    let Some(day) = name.strip_suffix(".jsonl") else { return false };
    let bytes = day.as_bytes();
    bytes.len() == 10
        && bytes.iter().enumerate().all(|(at, b)| if at == 4 || at == 7 { *b == b'-' } else { b.is_ascii_digit() })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::agents::tests::{noted, responses_of, rows, tiny_items};
    use crate::ledger::agents::{MAX_LINE_BYTES, read_log_at};
    use crate::ledger::stored::responses::ResponseWrite;
    use bee_proto::ledger::SkipReason;

    const PATH: &str = "/h/.reasonix/stats/2026-08-04.jsonl";

    fn read(log: &[u8]) -> (Vec<ResponseWrite>, u64) {
        let (evidence, unparseable) = read_log_at(Provider::Reasonix, Path::new(PATH), log);
        (responses_of(evidence), unparseable)
    }

    /// A day as Reasonix's recorder writes it: usage rows (one with every
    /// counter, one whose zero counters are omitted, one summing three
    /// requests), a turn marker, a compaction, a failed request's count.
    /// Each usage row is one response, in OpenAI's shape; the others are
    /// none; the model is kept as written.
    #[test]
    fn each_usage_row_once_in_its_day() {
        let log = include_bytes!("testdata/2026-08-04.jsonl");
        let (writes, unparseable) = read(log);
        assert_eq!(unparseable, 0);
        assert!(writes.iter().all(|w| w.session_id.as_deref() == Some("2026-08-04")));
        let s = Some;
        let found = rows(Provider::Reasonix, &writes);
        let columns: Vec<_> = found.iter().map(|r| (r.1, r.2, r.3, r.4, r.5, r.6)).collect();
        assert_eq!(
            columns,
            [
                (s(70), None, s(30), s(20), s(5), s(120)),
                (s(1800), None, s(0), s(42), s(0), s(1842)),
                (s(900), None, s(6000), s(310), s(120), s(7210)),
            ]
        );
        assert_eq!(writes.len(), 3, "the row of three requests is one response");
        assert_eq!(writes[0].model.as_deref(), Some("deepseek/deepseek-v4-flash"));
        assert_eq!(writes[0].at_ms, 1_785_834_611_123, "Go's local offset read as UTC");
        let (again, _) = read(log);
        let mut all = writes.clone();
        all.extend(again);
        assert_eq!(rows(Provider::Reasonix, &all).len(), 3, "the file read again adds nothing");
    }

    /// A file read in two passes (the second resumed where the first
    /// stopped) gives the rows the whole file gives, under the same keys.
    #[test]
    fn a_resumed_pass_keys_rows_as_a_whole_read() {
        let log: &[u8] = include_bytes!("testdata/2026-08-04.jsonl");
        let (whole, _) = read(log);
        let split = log.iter().position(|&b| b == b'\n').map_or(0, |end| end + 1);
        let mut evidence = Vec::new();
        let mut first = Stats::new(Path::new(PATH), &AgentState::default());
        assert!(first.line(&log[..split], 0, &mut evidence));
        let (offset, state) = first.resume(split as u64);
        let mut second = Stats::new(Path::new(PATH), &state);
        let mut at = offset;
        for line in log[offset as usize..].split_inclusive(|&b| b == b'\n') {
            assert!(second.line(line, at, &mut evidence));
            at += line.len() as u64;
        }
        let keys = |writes: &[ResponseWrite]| writes.iter().map(|w| w.key.clone()).collect::<Vec<_>>();
        assert_eq!(keys(&responses_of(evidence)), keys(&whole));
    }

    /// Counters as its readers take them: an explicit miss count is the
    /// fresh input even where it disagrees with `prompt`; a cached part
    /// larger than the input leaves the input unknown; reasoning larger
    /// than the output is unknown; a counter that is no count is unknown,
    /// never 0, and the row still counts.
    #[test]
    fn counters_that_disagree_are_unknown() {
        let log = concat!(
            r#"{"ts":"2026-08-04T09:10:11Z","model":"deepseek/chat","prompt":100,"completion":20,"cache_hit":30,"cache_miss":10,"total":120}"#,
            "\n",
            r#"{"ts":"2026-08-04T09:10:12Z","model":"deepseek/chat","prompt":10,"completion":2,"reasoning":9,"cache_hit":30,"total":12}"#,
            "\n",
            r#"{"ts":"2026-08-04T09:10:13Z","model":"deepseek/chat","prompt":"ten","completion":-2,"cache_hit":1.5,"total":12}"#,
            "\n",
        );
        let (writes, unparseable) = read(log.as_bytes());
        assert_eq!((writes.len(), unparseable), (3, 0));
        let t = |at: usize| &writes[at].tokens;
        assert_eq!((t(0).input_tokens, t(0).cached_input_tokens, t(0).total_tokens), (Some(40), Some(30), None));
        assert_eq!((t(1).input_tokens, t(1).reasoning_output_tokens, t(1).output_tokens), (None, None, Some(2)));
        assert_eq!((t(2).input_tokens, t(2).output_tokens, t(2).cached_input_tokens), (None, None, None));
    }

    /// Broken rows: a line cut short (a crash mid-write), one that is no
    /// JSON object, a usage row with no time or a time that is none, are
    /// unparseable and the file reads on; an empty file holds nothing; a
    /// file whose name gives no day names no session.
    #[test]
    fn broken_rows_are_counted_and_the_file_reads_on() {
        let good = r#"{"ts":"2026-08-04T09:10:11Z","model":"deepseek/chat","prompt":10,"completion":2,"total":12}"#;
        let log = [
            &good[..40],
            "[\"ts\"]",
            r#"{"model":"deepseek/chat","prompt":10,"completion":2,"total":12,"note":"ts"}"#,
            r#"{"ts":"yesterday","prompt":10,"completion":2,"total":12}"#,
            good,
        ]
        .join("\n")
            + "\n";
        let (writes, unparseable) = read(log.as_bytes());
        assert_eq!((writes.len(), unparseable), (1, 4));
        assert_eq!(read(b"").0.len(), 0, "an empty file");
        let (evidence, unparseable) = read_log_at(Provider::Reasonix, Path::new(""), format!("{good}\n").as_bytes());
        assert_eq!((responses_of(evidence).len(), unparseable), (0, 1), "no day, no session");
    }

    /// Bytes that are no UTF-8 in a value read make the row unparseable;
    /// a line over the line bound is passed over and named; millions of
    /// tiny items in a value not read are read past, and in a value read
    /// the row is named, not parsed.
    #[test]
    fn hostile_lines_do_not_stop_the_file() {
        let good = r#"{"ts":"2026-08-04T09:10:11Z","model":"deepseek/chat","prompt":10,"completion":2,"total":12}"#;
        let mut log = b"{\"ts\":\"2026-08-04T09:10:11Z\",\"model\":\"deep\xffseek\",\"prompt\":1}\n".to_vec();
        let at = log.len() as u64;
        let long = format!("{}\n", " ".repeat(MAX_LINE_BYTES as usize));
        log.extend_from_slice(long.as_bytes());
        log.extend_from_slice(format!("{good}\n").as_bytes());
        let _ = noted();
        let (writes, unparseable) = read(&log);
        assert_eq!((writes.len(), unparseable), (1, 1));
        assert_eq!(noted(), [(at, long.len() as u64, SkipReason::OversizedLine)]);

        let junk = tiny_items(1_500_000);
        let row = |prefix: &str, prompt: &str| {
            format!(r#"{{"prefix_reasons":{prefix},"ts":"2026-08-04T09:10:11Z","prompt":{prompt},"completion":2}}"#)
                + "\n"
        };
        let (writes, unparseable) = read(row(&junk, "10").as_bytes());
        assert_eq!((writes.len(), unparseable), (1, 0));
        assert!(noted().is_empty());
        let bad = row("[]", &junk);
        let (writes, unparseable) = read(format!("{bad}{}", row("[]", "10")).as_bytes());
        assert_eq!((writes.len(), unparseable), (1, 0));
        assert_eq!(noted(), [(0, bad.len() as u64, SkipReason::TooComplex)]);
    }

    #[test]
    fn day_files_by_their_names() {
        assert!(is_day_file("2026-08-04.jsonl"));
        assert!(!is_day_file("2026-8-4.jsonl"));
        assert!(!is_day_file("2026-08-04.json"));
        assert!(!is_day_file("2026_08_04.jsonl"));
    }
}
