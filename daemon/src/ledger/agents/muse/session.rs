//! A Muse Code session journal (`<session>/session.jsonl`): one
//! event-sourced record a line, `{"schema_version", "id", "stream": {"kind",
//! "id"}, "sequence", "recorded_at" (unix µs), "record_type",
//! "payload_type", "payload"}`. Each provider call is a `runtime.session`
//! record whose `payload.event` is `{"kind": "model_completed", "model",
//! "usage": {"input_tokens", "output_tokens", "cached_tokens",
//! "cache_read_tokens", "cache_write_tokens", "reasoning_tokens"},
//! "duration_ms", "finish_reason"}`, written when the call ends. Its input
//! includes both caches and its output its reasoning (Responses-shaped).
//! A parent's `workflow_child_lifecycle` events repeat its workflow
//! children's usage, which each child's own journal holds: only
//! `model_completed` counts. The `runtime.session.metadata` record names the
//! session's `workspace_root`. A call is keyed by its record's own `id` (a
//! journal copied into another keeps it), else by what a copy keeps (its
//! time to the µs, model and counters).

use bee_proto::ledger::Provider;
use bee_proto::usage::Counters;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::Path;

use crate::ledger::agents::lines::{Found, LineRules, NamedSession, contains, count, markers, spelled, text};
use crate::ledger::agents::sparse::{Keep, keep};

/// What the reader keeps of a journal: the session it names.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Session {
    session: NamedSession,
    #[serde(skip)]
    from_path: Option<String>,
}

/// The event of one provider call.
const COMPLETED: &str = "model_completed";
/// The record that names the session's workspace.
const METADATA: &str = "runtime.session.metadata";

markers! {
    COMPLETED_MARK = COMPLETED.as_bytes();
    METADATA_MARK = METADATA.as_bytes();
}

keep! {
    /// What [`Session::read`] reads of a line.
    LINE = [
        "id", "stream/id", "recorded_at", "payload_type", "payload/record/workspace_root",
        "payload/event/kind", "payload/event/model", "payload/event/duration_ms",
        "payload/event/usage/input_tokens", "payload/event/usage/output_tokens",
        "payload/event/usage/cached_tokens", "payload/event/usage/cache_read_tokens",
        "payload/event/usage/cache_write_tokens", "payload/event/usage/reasoning_tokens",
    ];
}

/// The least `recorded_at` that is microseconds (September 2001): a
/// smaller one is not a time Muse wrote.
const LEAST_MICROS: i64 = 1_000_000_000_000_000;

impl LineRules for Session {
    const PROVIDER: Provider = Provider::Muse;

    fn keep() -> &'static Keep {
        &LINE
    }

    fn is_marked(line: &[u8]) -> bool {
        contains(line, &COMPLETED_MARK) || contains(line, &METADATA_MARK)
    }

    fn opened(&mut self, path: &Path) {
        self.from_path = crate::ledger::agents::lines::folder_name(path);
    }

    fn read(&mut self, line: &Value, found: &mut Found<'_>) -> bool {
        match text(line, "/payload_type") {
            Some(METADATA) => self.metadata(line, found),
            Some("runtime.session") if text(line, "/payload/event/kind") == Some(COMPLETED) => {
                self.completed(line, found)
            }
            _ => true,
        }
    }
}

impl Session {
    /// The session a record belongs to: its stream's id, else the journal's
    /// folder.
    fn session_of(&self, line: &Value) -> Option<String> {
        text(line, "/stream/id").filter(|id| !id.is_empty()).map(str::to_owned).or_else(|| self.from_path.clone())
    }

    /// The session's metadata: where it runs. It may follow the session's
    /// first call, so it names the project even once the session is named.
    fn metadata(&mut self, line: &Value, found: &mut Found<'_>) -> bool {
        let Some(session) = self.session_of(line) else { return false };
        let Some(root) = text(line, "/payload/record/workspace_root").filter(|root| !root.is_empty()) else {
            return true;
        };
        if self.session.get() == Some(session.as_str()) {
            found.session(&session, Some(root));
        } else {
            self.session.name(&session, Some(root), found);
        }
        true
    }

    /// One provider call.
    fn completed(&mut self, line: &Value, found: &mut Found<'_>) -> bool {
        let event = &line["payload"]["event"];
        let Some(usage) = event.get("usage").filter(|usage| !usage.is_null()) else {
            // A call that failed before the provider counted anything.
            return true;
        };
        if !usage.is_object() {
            return false;
        }
        let Some(session) = self.session_of(line) else { return false };
        let Some(ended_us) = line.get("recorded_at").and_then(Value::as_i64).filter(|&us| us >= LEAST_MICROS) else {
            return false;
        };
        let ended_ms = ended_us.div_euclid(1000);
        // `recorded_at` is the call's end; it began `duration_ms` before.
        let duration = event.get("duration_ms").and_then(Value::as_i64).filter(|&ms| (0..=ended_ms).contains(&ms));
        let at_ms = ended_ms - duration.unwrap_or(0);
        if !bee_proto::time::spells_as_rfc3339(at_ms) {
            return false;
        }
        self.session.name(&session, None, found);
        let counters = counters(usage);
        if counters.counts_nothing() {
            return true;
        }
        let model = text(event, "/model").filter(|model| !model.is_empty());
        let key = match text(line, "/id").filter(|id| !id.is_empty()) {
            Some(id) => id.to_owned(),
            None => format!("{ended_us}\u{1f}{}\u{1f}{}", model.unwrap_or(""), spelled(&counters.values())),
        };
        found.response(key, &session, at_ms, model, counters);
        true
    }
}

/// Muse's `usage` in Anthropic's shape: its input includes both caches, so
/// input is what is left of it without them (unknown where they are more
/// than it); a cache counter the record does not write is not taken from
/// it, and is unknown in its own column. Cache reads are
/// `cache_read_tokens` (`cached_tokens`, the same count, in records that
/// keep only it); output includes its reasoning.
fn counters(usage: &Value) -> Counters {
    let field = |name: &str| count(usage.get(name));
    let reads = field("cache_read_tokens").or_else(|| field("cached_tokens"));
    let writes = field("cache_write_tokens");
    let input = field("input_tokens")
        .and_then(|input| input.checked_sub(reads.unwrap_or(0)))
        .and_then(|input| input.checked_sub(writes.unwrap_or(0)));
    Counters {
        input_tokens: input,
        cache_creation_input_tokens: writes,
        cache_read_input_tokens: reads,
        output_tokens: field("output_tokens"),
        reasoning_output_tokens: field("reasoning_tokens"),
        ..Counters::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::agents::read_log_at;
    use crate::ledger::agents::tests::{responses_of, rows};
    use crate::ledger::stored::evidence::Evidence;
    use crate::ledger::stored::responses::ResponseWrite;

    const SESSION: &str = "01a0b7d1-b7af-7de2-8369-4f4815ae1d72";
    const PATH: &str = "/h/.local/share/muse/sessions/2026/09/18/01a0b7d1-b7af-7de2-8369-4f4815ae1d72/session.jsonl";

    /// A `model_completed` record as Muse 1.3 writes it (per its readers).
    fn completed(id: &str, sequence: u32, recorded_at: i64, usage: &str, duration_ms: i64) -> String {
        format!(
            r#"{{"schema_version":1,"id":"{id}","stream":{{"kind":"session","id":"{SESSION}"}},"sequence":{sequence},"recorded_at":{recorded_at},"record_type":"event","durability":"durable","payload_type":"runtime.session","payload_schema_version":1,"payload":{{"kind":"run","run_id":"898f5ab5-88d7-4baa-a281-86040f9d6a57","event":{{"kind":"model_completed","usage":{usage},"duration_ms":{duration_ms},"finish_reason":"tool_calls","model":"muse-spark-1.3-contributor"}}}}}}"#
        ) + "\n"
    }

    fn metadata(root: &str) -> String {
        format!(
            r#"{{"schema_version":1,"id":"e-meta","stream":{{"kind":"session","id":"{SESSION}"}},"sequence":3,"recorded_at":1789790369778491,"record_type":"event","payload_type":"runtime.session.metadata","payload_schema_version":1,"payload":{{"kind":"metadata","record":{{"workspace_root":"{root}","provider_id":"meta","model_id":"muse-spark-1.3-contributor"}}}}}}"#
        ) + "\n"
    }

    fn read_at(path: &str, log: &[u8]) -> (Vec<Evidence>, u64) {
        read_log_at(Provider::Muse, Path::new(path), log)
    }

    fn read(log: &str) -> (Vec<ResponseWrite>, u64) {
        let (evidence, unparseable) = read_at(PATH, log.as_bytes());
        (responses_of(evidence), unparseable)
    }

    /// A session's calls as Muse journals them, around a child workflow's
    /// rollup, resource telemetry and a tool record: each call once by its
    /// record's id, input without either cache, reasoning inside output,
    /// dated at its start; the rollup and the telemetry count nothing; the
    /// metadata after the first call still names the project.
    #[test]
    fn each_call_once_and_rollups_not_counted() {
        let first = completed(
            "e39",
            39,
            1_789_790_455_896_395,
            r#"{"input_tokens":26964,"output_tokens":379,"cached_tokens":5105,"cache_write_tokens":0,"cache_read_tokens":5105,"reasoning_tokens":278}"#,
            5819,
        );
        let second = completed(
            "e40",
            40,
            1_789_790_470_000_000,
            r#"{"input_tokens":1000,"output_tokens":250,"cached_tokens":400,"cache_write_tokens":50,"cache_read_tokens":400,"reasoning_tokens":25}"#,
            1000,
        );
        let log = [
            r#"{"schema_version":1,"id":"e30","sequence":30,"recorded_at":1789790455896390,"payload_type":"tool_batch.effect.started","payload":{"kind":"tool","text":"model_completed"}}"#.to_owned() + "\n",
            first.clone(),
            metadata("/home/dev/repo"),
            r#"{"id":"e282","sequence":282,"recorded_at":1789790455896400,"payload_type":"runtime.session","payload":{"kind":"run","event":{"kind":"workflow_child_lifecycle","status":"usage","usage":{"input_tokens":917394,"output_tokens":5917,"cached_tokens":845908,"cache_read_tokens":845908,"reasoning_tokens":926}}}}"#.to_owned() + "\n",
            r#"{"id":"e283","recorded_at":1789790455896401,"payload_type":"runtime.session","payload":{"kind":"run","event":{"kind":"resource_usage_sampled","usage":{"cpu_self_ms":8,"rss_self_bytes":123456}}}}"#.to_owned() + "\n",
            second,
            first,
        ]
        .concat();
        let (evidence, unparseable) = read_at(PATH, log.as_bytes());
        assert_eq!(unparseable, 0);
        assert!(evidence.iter().any(|e| matches!(e, Evidence::SessionProject(p)
            if p.session_id == SESSION && p.project == "-home-dev-repo")));
        let writes = responses_of(evidence);
        assert_eq!(writes.len(), 3, "the first call's line written twice");
        let s = Some;
        assert_eq!(
            rows(Provider::Muse, &writes),
            [
                ("e39".into(), s(26964 - 5105), s(0), s(5105), s(379), s(278), s(26964 + 379)),
                ("e40".into(), s(550), s(50), s(400), s(250), s(25), s(1250)),
            ]
        );
        assert!(writes.iter().all(|w| w.session_id.as_deref() == Some(SESSION)));
        assert_eq!(writes[0].model.as_deref(), Some("muse-spark-1.3-contributor"));
        assert_eq!(writes[0].at_ms, 1_789_790_455_896 - 5819, "the call's start");
        assert_eq!(writes[0].own_figure, None);
    }

    /// The fixture a home of every agent holds (`testdata/`): its
    /// metadata, two calls and a child workflow's rollup.
    #[test]
    fn the_fixture_reads_as_the_home_of_every_agent_expects() {
        let (evidence, unparseable) = read_at(PATH, include_bytes!("testdata/muse-session.jsonl"));
        assert_eq!(unparseable, 0);
        assert!(evidence.iter().any(|e| matches!(e, Evidence::SessionProject(p) if p.project == "-home-dev-app")));
        let s = Some;
        assert_eq!(
            rows(Provider::Muse, &responses_of(evidence)),
            [
                ("e-39".into(), s(550), s(50), s(400), s(250), s(25), s(1250)),
                ("e-40".into(), s(100), s(0), s(1200), s(90), s(0), s(1390)),
            ]
        );
    }

    /// A subagent's journal is its own session (its stream's id); a record
    /// without a stream is the journal's folder's; without an id it is
    /// keyed by what a copy keeps; older records keep only `cached_tokens`
    /// and no cache writes: reads still come off input, writes unknown.
    #[test]
    fn subagents_ids_and_older_records() {
        let child = "01a0b7df-bac6-75d2-b28e-8dab127205f0";
        let path = format!("/h/.local/share/muse/sessions/2026/09/18/{SESSION}/subagent/{child}/session.jsonl");
        let line = completed("c1", 1, 1_789_791_288_021_470, r#"{"input_tokens":100,"output_tokens":10}"#, 100)
            .replace(SESSION, child);
        let no_stream = r#"{"recorded_at":1789791288021471,"payload_type":"runtime.session","payload":{"event":{"kind":"model_completed","model":"muse-spark-1.3","usage":{"input_tokens":1847,"output_tokens":98,"cached_tokens":1792,"reasoning_tokens":0}}}}"#;
        let log = format!("{line}{no_stream}\n{no_stream}\n");
        let (evidence, unparseable) = read_at(&path, log.as_bytes());
        assert_eq!(unparseable, 0);
        let writes = responses_of(evidence);
        assert_eq!(writes.len(), 3);
        assert!(writes.iter().all(|w| w.session_id.as_deref() == Some(child)));
        assert_eq!(writes[1].key, writes[2].key, "a copy keeps its time, model and counters");
        let t = &writes[1].tokens;
        assert_eq!(
            (t.input_tokens, t.cache_read_input_tokens, t.cache_creation_input_tokens, t.output_tokens),
            (Some(55), Some(1792), None, Some(98))
        );
        assert_eq!(writes[1].at_ms, 1_789_791_288_021, "no duration: its end");
    }

    /// Broken and hostile records: usage that is no object, no time or a
    /// time that is no microseconds, a line cut short, one not UTF-8 are
    /// unparseable and the journal reads on; caches larger than the input
    /// leave input unknown, never clamped to 0; counters that are no counts
    /// are unknown; a call without usage is none; an empty journal says
    /// nothing.
    #[test]
    fn broken_and_hostile_records() {
        let event = |at: &str, usage: &str| {
            format!(
                r#"{{"stream":{{"id":"s1"}},"recorded_at":{at},"payload_type":"runtime.session","payload":{{"event":{{"kind":"model_completed","model":"m","usage":{usage},"duration_ms":-5}}}}}}"#
            ) + "\n"
        };
        let mut log = [
            event("1789790455896395", "7"),
            event("\"2026-09-18T10:00:00Z\"", r#"{"input_tokens":1}"#),
            event("1789790455896", r#"{"input_tokens":1}"#),
            event("1789790455896395", r#"{"input_tokens":"#).replace("}}}}\n", "\n"),
            event("1789790455896396", r#"{"input_tokens":100,"output_tokens":10,"cache_read_tokens":999,"reasoning_tokens":999}"#),
            event("1789790455896397", r#"{"input_tokens":"ten","output_tokens":-1,"cache_read_tokens":1.5,"cache_write_tokens":99999999999999999999999,"reasoning_tokens":3}"#),
            event("1789790455896398", "null"),
            r#"{"recorded_at":1789790455896399,"payload_type":"runtime.session","payload":{"event":{"kind":"model_completed","model":"m"}}}"#.to_owned() + "\n",
        ]
        .concat()
        .into_bytes();
        log.extend_from_slice(b"{\"recorded_at\":1789790455896400,\"payload_type\":\"runtime.session\",\"payload\":{\"event\":{\"kind\":\"model_completed\",\"model\":\"\xff\"}}}\n");
        let (writes, unparseable) = {
            let (evidence, unparseable) = read_at(PATH, &log);
            (responses_of(evidence), unparseable)
        };
        assert_eq!(unparseable, 5, "usage no object; a time in text; milliseconds; cut short; not UTF-8");
        assert_eq!(writes.len(), 2);
        let t = &writes[0].tokens;
        assert_eq!((t.input_tokens, t.cache_read_input_tokens, t.output_tokens), (None, Some(999), Some(10)));
        assert_eq!(writes[0].at_ms, 1_789_790_455_896, "a negative duration is none");
        let t = &writes[1].tokens;
        assert_eq!((t.input_tokens, t.output_tokens, t.cache_read_input_tokens), (None, None, None));
        assert_eq!((t.cache_creation_input_tokens, t.reasoning_output_tokens), (None, Some(3)));
        assert_eq!(read(""), (Vec::new(), 0), "an empty journal");
    }
}
