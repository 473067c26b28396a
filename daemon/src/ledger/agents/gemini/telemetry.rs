//! Gemini CLI's local telemetry file (`telemetry.outfile`): OpenTelemetry's
//! spans, log records and metrics, each a JSON value pretty-printed with a
//! two-space indent (`{` and `}` alone on their lines), appended by every
//! CLI process. A `gemini_cli.api_response` log record is one response of
//! the provider, a stream's last usage, its `role` naming the call:
//! `main` (the chat files keep it), `subagent` and `utility_*` (the routing
//! call before each prompt, next-speaker checks, summaries, compression…),
//! which no chat file Bee reads keeps. Only those are read here, so no
//! response counts twice; the record right after it
//! (`gen_ai.client.inference.operation.details`, the same time) carries
//! the provider's response id, its key.
//!
//! A record is read a line at a time and only the `attributes` lines it
//! needs are parsed: the rest of a record (the prompt, the request, the
//! response text, the host and user, the system prompt) is never parsed
//! nor kept.

use bee_proto::ledger::Provider;

use crate::ledger::agents::agent::FileReader;
use crate::ledger::agents::lines::{Found, LastName};
use crate::ledger::stored::evidence::{AgentState, Evidence};

/// The text attributes read of a record, spelled as the CLI writes them.
const TEXTS: [&str; 6] = ["event.name", "session.id", "event.timestamp", "model", "role", "gen_ai.response.id"];

/// The count attributes read, in the order of Gemini's six counts (see
/// [`super::chat::counters_of`]).
const COUNTS: [&str; 6] = [
    "input_token_count",
    "cached_content_token_count",
    "output_token_count",
    "thoughts_token_count",
    "tool_token_count",
    "total_token_count",
];

/// Longest attribute line parsed: a name, a time or a count is a few dozen
/// bytes; a longer line holds text Bee never reads.
const MAX_ATTRIBUTE_LINE_BYTES: usize = 4 * 1024;

/// What is read of a record's `attributes`: the texts of [`TEXTS`] and the
/// counts of [`COUNTS`], each `None` when absent or of another type.
#[derive(Debug, Default)]
struct Attributes {
    texts: [Option<String>; 6],
    counts: [Option<u64>; 6],
}

impl Attributes {
    fn text(&self, name: &str) -> Option<&str> {
        let at = TEXTS.iter().position(|known| *known == name)?;
        self.texts[at].as_deref()
    }
}

/// One top-level value being read.
#[derive(Debug)]
struct Open {
    /// Where its `{` line starts.
    start: u64,
    in_attributes: bool,
    attributes: Attributes,
}

/// A side call's response read, waiting for the record after it (its
/// provider id).
#[derive(Debug)]
struct Pending {
    start: u64,
    session: String,
    timestamp: String,
    at_ms: i64,
    model: Option<String>,
    counts: [Option<u64>; 6],
    role: String,
}

/// Ingestion's reader of a telemetry file.
pub(super) struct Telemetry {
    open: Option<Open>,
    pending: Option<Pending>,
    session: Option<String>,
    sessions: LastName,
    models: LastName,
}

impl Telemetry {
    pub(super) fn new() -> Telemetry {
        Telemetry {
            open: None,
            pending: None,
            session: None,
            sessions: LastName::default(),
            models: LastName::default(),
        }
    }

    /// A whole value read: a side call's response is held for the record
    /// after it; that record, or any other, lets the one held go.
    fn value(&mut self, open: Open, out: &mut Vec<Evidence>) -> bool {
        let attributes = open.attributes;
        let event = attributes.text("event.name");
        if let Some(pending) = self.pending.take() {
            let details = event == Some("gen_ai.client.inference.operation.details")
                && attributes.text("event.timestamp") == Some(pending.timestamp.as_str())
                && attributes.text("session.id") == Some(pending.session.as_str());
            let id = attributes.text("gen_ai.response.id").filter(|id| details && !id.is_empty());
            self.found(pending, id, out);
        }
        if event != Some("gemini_cli.api_response") {
            return true;
        }
        let Some(role) = attributes.text("role") else { return true };
        // The chats keep the main calls.
        if !(role == "subagent" || role.starts_with("utility_")) {
            return true;
        }
        let (Some(session), Some(timestamp)) = (attributes.text("session.id"), attributes.text("event.timestamp"))
        else {
            return false;
        };
        let Some(at_ms) = bee_proto::time::parse_rfc3339_ms(timestamp) else { return false };
        if session.is_empty() {
            return false;
        }
        self.pending = Some(Pending {
            start: open.start,
            session: session.to_owned(),
            timestamp: timestamp.to_owned(),
            at_ms,
            model: attributes.text("model").map(str::to_owned),
            counts: attributes.counts,
            role: role.to_owned(),
        });
        true
    }

    /// A side call's response, keyed by its provider id (`None`: the record
    /// after it never said; then by what it is, which reading the file
    /// again gives again).
    fn found(&mut self, pending: Pending, id: Option<&str>, out: &mut Vec<Evidence>) {
        let mut found = Found::new(Provider::Gemini, &mut self.sessions, &mut self.models, out);
        if self.session.as_deref() != Some(pending.session.as_str()) {
            found.session(&pending.session, None);
            self.session = Some(pending.session.clone());
        }
        let key = match id {
            Some(id) => format!("response\u{1f}{id}"),
            None => {
                let counts: Vec<String> =
                    pending.counts.iter().map(|count| count.map_or_else(String::new, |n| n.to_string())).collect();
                format!(
                    "telemetry\u{1f}{}\u{1f}{}\u{1f}{}\u{1f}{}",
                    pending.session,
                    pending.timestamp,
                    pending.role,
                    counts.join("/")
                )
            }
        };
        let tokens = super::chat::counters_of(pending.counts);
        found.response(key, &pending.session, pending.at_ms, pending.model.as_deref(), tokens);
    }
}

/// An attribute line (`    "name": value` or with a comma after), read
/// into `attributes` when its name is one read: a text or a count, else
/// (another type, a line past the bound, not UTF-8) left unknown.
fn read_attribute(line: &[u8], attributes: &mut Attributes) {
    let Some(rest) = line.strip_prefix(b"    \"") else { return };
    let Some(end) = memchr::memchr(b'"', rest) else { return };
    let name = &rest[..end];
    let text = TEXTS.iter().position(|known| known.as_bytes() == name);
    let count = COUNTS.iter().position(|known| known.as_bytes() == name);
    if (text.is_none() && count.is_none()) || line.len() > MAX_ATTRIBUTE_LINE_BYTES {
        return;
    }
    let Some(value) = rest[end + 1..].strip_prefix(b": ") else { return };
    let value = value.strip_suffix(b",").unwrap_or(value);
    if let Some(at) = text {
        attributes.texts[at] = serde_json::from_slice::<String>(value).ok();
    } else if let Some(at) = count {
        attributes.counts[at] = serde_json::from_slice::<u64>(value).ok();
    }
}

impl FileReader for Telemetry {
    fn line(&mut self, line: &[u8], at: u64, out: &mut Vec<Evidence>) -> bool {
        let line = line.strip_suffix(b"\n").unwrap_or(line);
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        match line {
            b"{" => {
                self.open = Some(Open { start: at, in_attributes: false, attributes: Attributes::default() });
                true
            }
            b"}" => match self.open.take() {
                Some(open) => self.value(open, out),
                None => true,
            },
            _ => {
                let Some(open) = self.open.as_mut() else { return true };
                if line == b"  \"attributes\": {" {
                    open.in_attributes = true;
                } else if line == b"  }," || line == b"  }" {
                    open.in_attributes = false;
                } else if open.in_attributes {
                    read_attribute(line, &mut open.attributes);
                }
                true
            }
        }
    }

    /// A side call whose next record is not written yet is held while it
    /// is recent (the CLI writes the two together, its batch at most a
    /// second apart); one older was never followed by its id.
    fn finish(&mut self, quiet_before_ms: i64, out: &mut Vec<Evidence>) {
        if let Some(pending) = self.pending.take_if(|pending| pending.at_ms < quiet_before_ms) {
            self.found(pending, None, out);
        }
    }

    /// From the first value not yet read whole: a side call held, else a
    /// value whose closing line is not written yet.
    fn resume(&self, offset: u64) -> (u64, AgentState) {
        let held = self.pending.as_ref().map(|pending| pending.start);
        let open = self.open.as_ref().map(|open| open.start);
        (held.or(open).unwrap_or(offset).min(offset), AgentState::default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::agents::read_log_at;
    use crate::ledger::agents::tests::{responses_of, rows};
    use crate::ledger::stored::responses::ResponseWrite;

    const FILE: &str = "/h/.gemini/telemetry.log";

    fn read(log: &[u8]) -> (Vec<ResponseWrite>, u64) {
        let (evidence, unparseable) = read_log_at(Provider::Gemini, std::path::Path::new(FILE), log);
        (responses_of(evidence), unparseable)
    }

    /// A record as the CLI writes it (two-space indent), with `attributes`.
    fn record(attributes: &str) -> String {
        format!(
            "{{\n  \"hrTime\": [\n    1,\n    2\n  ],\n  \"attributes\": {{\n{attributes}\n  }},\n  \"_body\": \"x\"\n}}\n"
        )
    }

    fn response(role: &str, session: &str, at: &str, input: u64) -> String {
        record(&format!(
            "    \"session.id\": \"{session}\",\n    \"event.name\": \"gemini_cli.api_response\",\n    \
             \"event.timestamp\": \"{at}\",\n    \"model\": \"gemini-3.5-flash-lite\",\n    \
             \"input_token_count\": {input},\n    \"output_token_count\": 7,\n    \
             \"cached_content_token_count\": 0,\n    \"thoughts_token_count\": 0,\n    \
             \"tool_token_count\": 0,\n    \"total_token_count\": {},\n    \"finish_reasons\": [\n      \"stop\"\n    ],\n    \
             \"role\": \"{role}\"",
            input + 7
        ))
    }

    fn details(session: &str, at: &str, id: &str) -> String {
        record(&format!(
            "    \"session.id\": \"{session}\",\n    \"event.name\": \"gen_ai.client.inference.operation.details\",\n    \
             \"event.timestamp\": \"{at}\",\n    \"gen_ai.response.id\": \"{id}\""
        ))
    }

    /// Gemini CLI 0.61.0's own telemetry of a tool turn and a resume
    /// (spans, prompts and requests among its records, long texts
    /// trimmed): its two routing calls, each once under the provider's
    /// response id from the record after it, in the chat's columns (the
    /// cached part and the tool-use prompt inside the input, thoughts
    /// inside output); its three main calls are the chat's, not read here.
    #[test]
    fn the_real_files_side_calls_once_by_their_provider_ids() {
        let (writes, unparseable) = read(include_bytes!("../testdata/gemini-0.61.0-telemetry.log"));
        assert_eq!(unparseable, 0);
        let s = Some;
        assert_eq!(
            rows(Provider::Gemini, &writes),
            [
                ("response\u{1f}gemini-mock-001".into(), s(1351), None, s(150), s(30), s(13), s(1531)),
                ("response\u{1f}gemini-mock-004".into(), s(4054), None, s(450), s(90), s(43), s(4594)),
            ]
        );
        for write in &writes {
            assert_eq!(write.session_id.as_deref(), Some("ef521c1f-c3dc-4177-a52c-2aa6393862b6"));
            assert_eq!((write.model.as_deref(), write.copied), (Some("gemini-3.5-flash-lite"), false));
        }
        assert_eq!(writes[0].at_ms, bee_proto::time::parse_rfc3339_ms("2026-12-06T21:05:49.607Z").unwrap());
    }

    /// A side call whose record after it is not written yet is held while
    /// recent (the next pass reads it again, then with its id), and counted
    /// by what it is once old; a value cut short is read again whole.
    #[test]
    fn a_side_call_waits_for_its_id_and_a_cut_value_is_read_again() {
        let at = "2026-12-06T21:05:49.607Z";
        let at_ms = bee_proto::time::parse_rfc3339_ms(at).unwrap();
        let first = response("utility_router", "s1", at, 100);
        let whole = first.clone() + &details("s1", at, "r-1");
        let feed = |reader: &mut Telemetry, bytes: &[u8], from: u64, out: &mut Vec<Evidence>| {
            let mut offset = from;
            for line in bytes[from as usize..].split_inclusive(|b| *b == b'\n').filter(|l| l.ends_with(b"\n")) {
                assert!(reader.line(line, offset, out));
                offset += line.len() as u64;
            }
            offset
        };
        let (mut reader, mut out) = (Telemetry::new(), Vec::new());
        let end = feed(&mut reader, first.as_bytes(), 0, &mut out);
        reader.finish(at_ms, &mut out);
        assert!(responses_of(std::mem::take(&mut out)).is_empty(), "held while recent");
        let (from, _) = reader.resume(end);
        assert_eq!(from, 0, "read again from the held response");
        let (mut again, mut out) = (Telemetry::new(), Vec::new());
        let cut = &whole.as_bytes()[..whole.len() - 20];
        let end = feed(&mut again, cut, from, &mut out);
        again.finish(at_ms, &mut out);
        let (from, _) = again.resume(end);
        assert_eq!(from, 0, "the record after it is not whole yet");
        let (mut last, mut out) = (Telemetry::new(), Vec::new());
        let end = feed(&mut last, whole.as_bytes(), from, &mut out);
        last.finish(at_ms, &mut out);
        assert_eq!(last.resume(end).0, whole.len() as u64);
        let keys: Vec<String> = responses_of(out).into_iter().map(|w| w.key).collect();
        assert_eq!(keys, ["response\u{1f}r-1"]);

        let (mut old, mut out) = (Telemetry::new(), Vec::new());
        let end = feed(&mut old, first.as_bytes(), 0, &mut out);
        old.finish(at_ms + 1, &mut out);
        assert_eq!(old.resume(end).0, end);
        let keys: Vec<String> = responses_of(out).into_iter().map(|w| w.key).collect();
        assert_eq!(keys, [format!("telemetry\u{1f}s1\u{1f}{at}\u{1f}utility_router\u{1f}100/0/7/0/0/107")]);
    }

    /// Only side calls and sub-agents' calls count (the chats keep the main
    /// ones); a side call with no session or time is unreadable; lines
    /// outside a value, broken or foreign lines, a non-UTF-8 or oversized
    /// attribute and an empty file add nothing and stop nothing.
    #[test]
    fn main_calls_are_the_chats_and_broken_records_are_counted() {
        assert_eq!(read(b"").0.len(), 0);
        let at = "2026-12-06T21:05:49.607Z";
        let mut log = String::from("stray line\n}\n");
        log += &response("main", "s1", at, 100);
        log += &response("subagent", "s1", "2026-12-06T21:05:50.000Z", 200);
        log += &response("utility_next_speaker", "", at, 300);
        log += &response("utility_summarizer", "s2", "yesterday", 400);
        log += &record(
            "    \"event.name\": \"gemini_cli.api_response\",\n    \"role\": \"utility_router\",\n    \"session.id\": 7",
        );
        log += &record(&format!("    \"model\": \"{}\",\n    \"role\": \"\u{fffd}\"", "m".repeat(8_000)));
        log += &response("utility_loop_detector", "s3", at, 500);
        let mut log = log.into_bytes();
        log.extend_from_slice(b"{\n  \"attributes\": {\n    \"session.id\": \"\xff\",\n  }\n}\n");
        log.extend_from_slice(b"{\n  \"attributes\": {\n");
        let (writes, unparseable) = read(&log);
        assert_eq!(unparseable, 3, "no session; no time; a session that is no text");
        let sessions: Vec<_> = writes.iter().map(|w| w.session_id.as_deref().unwrap_or("")).collect();
        assert_eq!(sessions, ["s1", "s3"], "the sub-agent's call and the loop check");
        assert!(writes.iter().all(|w| w.is_valid() && w.tokens.total_tokens.is_some()));
    }
}
