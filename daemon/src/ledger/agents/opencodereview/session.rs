//! An OpenCodeReview session's log (`<repository>/<session id>.jsonl`):
//! one JSON record a line, each with `uuid`, `parentUuid`, `type`,
//! `sessionId` and `timestamp` (RFC 3339, whole seconds, UTC). The first is
//! `session_start` (with `cwd`, the reviewed repository); after each model
//! call `ocr` writes `llm_response` with `model`, `duration_ms` and `usage
//! {prompt_tokens, completion_tokens, cache_read_tokens,
//! cache_write_tokens}`, `prompt_tokens` holding both caches. Its `content`
//! (the model's text) is never read.
//!
//! The same call can be written twice, line for line: a response is keyed
//! by what its line says — its session, time, model and counters — so a
//! copy adds nothing.

use bee_proto::ledger::Provider;
use bee_proto::usage::Counters;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::Path;

use crate::ledger::agents::lines::{Found, LineRules, NamedSession, contains, count, markers, spelled, text, time_ms};
use crate::ledger::agents::sparse::{Keep, keep};

/// What the reader keeps of a session's log: the session named last.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct SessionLog {
    session: NamedSession,
    /// The session its file's name gives, for a record that names none.
    #[serde(skip)]
    from_path: Option<String>,
}

markers! {
    RESPONSE = b"\"llm_response\"";
    START = b"\"session_start\"";
}

keep! {
    /// What [`SessionLog::read`] reads of a line.
    LINE = [
        "type", "sessionId", "timestamp", "cwd", "model", "usage/prompt_tokens", "usage/completion_tokens",
        "usage/cache_read_tokens", "usage/cache_write_tokens",
    ];
}

impl SessionLog {
    /// The session a record names, else the one its file's name gives.
    fn session_of(&self, record: &Value) -> Option<String> {
        text(record, "/sessionId").filter(|id| !id.is_empty()).map(str::to_owned).or_else(|| self.from_path.clone())
    }
}

impl LineRules for SessionLog {
    const PROVIDER: Provider = Provider::OpenCodeReview;

    fn keep() -> &'static Keep {
        &LINE
    }

    fn is_marked(line: &[u8]) -> bool {
        contains(line, &RESPONSE) || contains(line, &START)
    }

    fn opened(&mut self, path: &Path) {
        self.from_path =
            path.file_stem().and_then(|stem| stem.to_str()).filter(|stem| !stem.is_empty()).map(str::to_owned);
    }

    fn read(&mut self, record: &Value, found: &mut Found<'_>) -> bool {
        match text(record, "/type") {
            Some("session_start") => {
                let Some(session) = self.session_of(record) else { return false };
                self.session.name(&session, text(record, "/cwd"), found);
                true
            }
            Some("llm_response") => self.response(record, found),
            _ => true,
        }
    }
}

impl SessionLog {
    /// One `llm_response`; `false` when it could not be read.
    fn response(&mut self, record: &Value, found: &mut Found<'_>) -> bool {
        let Some(usage) = record.get("usage").filter(|usage| usage.is_object()) else { return false };
        let Some(session) = self.session_of(record) else { return false };
        let Some(at_ms) = time_ms(record.get("timestamp")) else { return false };
        let names = ["prompt_tokens", "completion_tokens", "cache_read_tokens", "cache_write_tokens"];
        let recorded = names.map(|name| count(usage.get(name)));
        let [prompt, completion, cache_read, cache_write] = recorded;
        // A counter written that is no count: unknown, and the call counts.
        let unreadable =
            names.iter().any(|name| usage.get(*name).is_some_and(|v| !v.is_null() && v.as_u64().is_none()));
        let counters = Counters {
            // The prompt holds both caches: the rest is fresh input,
            // unknown where the caches exceed it.
            input_tokens: prompt
                .zip(cache_read)
                .zip(cache_write)
                .and_then(|((prompt, read), write)| prompt.checked_sub(read)?.checked_sub(write)),
            cache_creation_input_tokens: cache_write,
            cache_read_input_tokens: cache_read,
            output_tokens: completion,
            ..Counters::default()
        };
        // No usage (a call whose provider reported none): no response.
        if counters.counts_nothing() && !unreadable {
            return true;
        }
        self.session.name(&session, None, found);
        let model = text(record, "/model");
        let key = format!("{session}\u{1f}{at_ms}\u{1f}{}\u{1f}{}", model.unwrap_or(""), spelled(&recorded));
        found.response(key, &session, at_ms, model, counters);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::agents::tests::{noted, responses_of, rows, tiny_items};
    use crate::ledger::agents::{MAX_LINE_BYTES, read_log_at};
    use crate::ledger::stored::evidence::Evidence;
    use crate::ledger::stored::responses::ResponseWrite;
    use bee_proto::ledger::SkipReason;

    const PATH: &str = "/h/.opencodereview/sessions/home-dev-app/6b1d2a4e-0c3f-4e5a-9b7d-1f2e3a4b5c6d.jsonl";

    fn read(log: &[u8]) -> (Vec<ResponseWrite>, u64) {
        let (evidence, unparseable) = read_log_at(Provider::OpenCodeReview, Path::new(PATH), log);
        (responses_of(evidence), unparseable)
    }

    /// A review as `ocr` logs it (a start, a request, two responses, a
    /// tool call, one response written twice, an error, the end): each
    /// response once in its session, the reviewed repository its project,
    /// in Anthropic's shape with the caches taken out of the prompt.
    #[test]
    fn each_response_once_and_a_copy_adds_nothing() {
        let log = include_bytes!("testdata/review-session.jsonl");
        let (evidence, unparseable) = read_log_at(Provider::OpenCodeReview, Path::new(PATH), log);
        assert_eq!(unparseable, 0);
        assert!(
            evidence.iter().any(|e| matches!(e, Evidence::SessionProject(p) if p.project == "-home-dev-app")),
            "the repository it reviewed"
        );
        let writes = responses_of(evidence);
        assert_eq!(writes.len(), 4, "the line written twice is read twice");
        assert!(writes.iter().all(|w| w.session_id.as_deref() == Some("6b1d2a4e-0c3f-4e5a-9b7d-1f2e3a4b5c6d")));
        let s = Some;
        let found = rows(Provider::OpenCodeReview, &writes);
        let mut columns: Vec<_> = found.iter().map(|r| (r.1, r.2, r.3, r.4, r.5, r.6)).collect();
        columns.sort();
        assert_eq!(
            columns,
            [
                (s(400), s(100), s(500), s(200), None, s(1200)),
                (s(850), s(0), s(0), s(120), None, s(970)),
                (s(1200), s(2100), s(0), s(95), None, s(3395)),
            ],
            "the copy is the same response"
        );
        assert_eq!(writes[0].model.as_deref(), Some("claude-sonnet-4-20250514"));
        assert_eq!(writes[0].at_ms, 1_768_471_205_000);
    }

    /// Broken and hostile records: usage that is no object, no time, a
    /// line cut short are unparseable and the log reads on; counters that
    /// are no counts are unknown, never 0; caches larger than the prompt
    /// leave the input unknown; all-zero usage is no response; a record
    /// naming no session takes its file's; an empty log holds nothing.
    #[test]
    fn broken_records_are_counted_and_unknown_stays_unknown() {
        let response = |session: &str, usage: &str| {
            format!(
                r#"{{"uuid":"u","type":"llm_response","sessionId":"{session}","timestamp":"2026-01-15T10:00:05Z","model":"gpt-5.1","content":"…","duration_ms":900,"usage":{usage}}}"#
            )
        };
        let log = [
            response("s1", "7"),
            r#"{"type":"llm_response","sessionId":"s1","model":"m","usage":{"prompt_tokens":1}}"#.to_owned(),
            response("s1", r#"{"prompt_tokens":10,"completion_to"#),
            response(
                "s1",
                r#"{"prompt_tokens":"ten","completion_tokens":-2,"cache_read_tokens":0,"cache_write_tokens":0}"#,
            ),
            response(
                "s1",
                r#"{"prompt_tokens":10,"completion_tokens":2,"cache_read_tokens":30,"cache_write_tokens":0}"#,
            ),
            response("s1", r#"{"prompt_tokens":0,"completion_tokens":0,"cache_read_tokens":0,"cache_write_tokens":0}"#),
            response("", r#"{"prompt_tokens":10,"completion_tokens":2,"cache_read_tokens":0,"cache_write_tokens":0}"#),
        ]
        .join("\n")
            + "\n";
        let (writes, unparseable) = read(log.as_bytes());
        assert_eq!(unparseable, 3, "usage no object; no time; cut short");
        assert_eq!(writes.len(), 3);
        assert_eq!((writes[0].tokens.input_tokens, writes[0].tokens.output_tokens), (None, None));
        assert_eq!((writes[1].tokens.input_tokens, writes[1].tokens.cache_read_input_tokens), (None, Some(30)));
        assert_eq!(writes[2].session_id.as_deref(), Some("6b1d2a4e-0c3f-4e5a-9b7d-1f2e3a4b5c6d"), "its file's");
        assert_eq!(read(b"").0.len(), 0, "an empty log");
    }

    /// Bytes that are no UTF-8 in a value read make the record
    /// unparseable; a line over the line bound is passed over and named;
    /// the model's text, however large, is never built, and millions of
    /// tiny items in usage name the record, not parse it.
    #[test]
    fn hostile_lines_do_not_stop_the_log() {
        let line = |content: &str, prompt: &str| {
            format!(
                r#"{{"type":"llm_response","sessionId":"s1","timestamp":"2026-01-15T10:00:05Z","model":"m","content":{content},"tool_calls":{content},"usage":{{"prompt_tokens":{prompt},"completion_tokens":2,"cache_read_tokens":0,"cache_write_tokens":0}}}}"#
            ) + "\n"
        };
        let mut log = b"{\"type\":\"llm_response\",\"sessionId\":\"s\xff1\",\"timestamp\":\"2026-01-15T10:00:05Z\",\"usage\":{}}\n".to_vec();
        let at = log.len() as u64;
        let long = format!("{}\n", " ".repeat(MAX_LINE_BYTES as usize));
        log.extend_from_slice(long.as_bytes());
        log.extend_from_slice(line("\"ok\"", "10").as_bytes());
        let _ = noted();
        let (writes, unparseable) = read(&log);
        assert_eq!((writes.len(), unparseable), (1, 1));
        assert_eq!(noted(), [(at, long.len() as u64, SkipReason::OversizedLine)]);

        let junk = tiny_items(1_500_000);
        assert_eq!(read(line(&junk, "10").as_bytes()), (writes.clone(), 0));
        assert!(noted().is_empty());
        let bad = line("\"ok\"", &junk);
        let (again, unparseable) = read(format!("{bad}{}", line("\"ok\"", "10")).as_bytes());
        assert_eq!((again.len(), unparseable), (1, 0));
        assert_eq!(noted(), [(0, bad.len() as u64, SkipReason::TooComplex)]);
    }
}
