//! A Junie session's event log (`<session>/events.jsonl`): one JSON event a
//! line, each with `kind` and `timestampMs` (unix ms). After each model
//! call Junie writes a `SessionA2uxEvent` whose `event.agentEvent` is an
//! `LlmResponseMetadataEvent`, its `modelUsage[]` one entry a model the
//! call used: `model`, `cost` (Junie's own estimate, in dollars),
//! `inputTokens` (without either cache), `cacheInputTokens` (cache
//! reads), `cacheCreateTokens` (cache writes), `outputTokens`, `time`. The
//! log's directory names its session. The records keep no response id: a
//! response is keyed by what a copy of it keeps (its time, its place in
//! the event, its model and counters), so a session copied into another
//! adds nothing.

use bee_proto::ledger::Provider;
use bee_proto::usage::Counters;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::Path;

use crate::ledger::agents::lines::{Beside, Found, LineRules, NamedSession, contains, count, markers, spelled, text};
use crate::ledger::agents::sparse::{Keep, keep};

/// What the reader keeps of an event log: the session its place names.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Events {
    session: NamedSession,
    #[serde(skip)]
    from_path: Option<String>,
}

markers! {
    USAGE = b"LlmResponseMetadataEvent";
}

keep! {
    /// What [`Events::read`] reads of a line.
    LINE = [
        "timestampMs", "event/agentEvent/kind", "event/agentEvent/modelUsage/model",
        "event/agentEvent/modelUsage/cost", "event/agentEvent/modelUsage/inputTokens",
        "event/agentEvent/modelUsage/cacheInputTokens", "event/agentEvent/modelUsage/cacheCreateTokens",
        "event/agentEvent/modelUsage/outputTokens",
    ];
}

impl LineRules for Events {
    const PROVIDER: Provider = Provider::Junie;

    fn keep() -> &'static Keep {
        &LINE
    }

    fn is_marked(line: &[u8]) -> bool {
        contains(line, &USAGE)
    }

    fn opened(&mut self, path: &Path) {
        self.from_path = crate::ledger::agents::lines::folder_name(path);
    }

    fn read(&mut self, line: &Value, found: &mut Found<'_>) -> bool {
        if text(line, "/event/agentEvent/kind") != Some("LlmResponseMetadataEvent") {
            return true;
        }
        let Some(usages) = line.pointer("/event/agentEvent/modelUsage").and_then(Value::as_array) else {
            return false;
        };
        let Some(session) = self.from_path.clone().filter(|session| !session.is_empty()) else { return false };
        let Some(at_ms) =
            line.get("timestampMs").and_then(Value::as_i64).filter(|&ms| bee_proto::time::spells_as_rfc3339(ms))
        else {
            return false;
        };
        self.session.name(&session, None, found);
        let mut read = true;
        for (at, usage) in usages.iter().enumerate() {
            if !usage.is_object() {
                read = false;
                continue;
            }
            let field = |name: &str| count(usage.get(name));
            let counters = Counters {
                input_tokens: field("inputTokens"),
                cache_creation_input_tokens: field("cacheCreateTokens"),
                cache_read_input_tokens: field("cacheInputTokens"),
                output_tokens: field("outputTokens"),
                ..Counters::default()
            };
            if counters.counts_nothing() {
                continue;
            }
            let model = text(usage, "/model").filter(|model| !model.is_empty());
            // Junie's cost of a model it has no rates for is 0: no cost, not a free call.
            let cost = usage.get("cost").and_then(Value::as_f64).filter(|&cost| cost > 0.0);
            let key = format!("{at_ms}\u{1f}{at}\u{1f}{}\u{1f}{}", model.unwrap_or(""), spelled(&counters.values()));
            found.response_with(key, &session, at_ms, model, counters, Beside { own_figure: cost, copied: false });
        }
        read
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::agents::read_log_at;
    use crate::ledger::agents::tests::{responses_of, rows};
    use crate::ledger::stored::responses::ResponseWrite;

    const PATH: &str = "/h/.junie/sessions/session-260825-151015-1bxv/events.jsonl";

    /// A usage event as Junie 3419 writes it, with one model's usage.
    fn event(at_ms: i64, model: &str, cost: f64, tokens: [u64; 4]) -> String {
        let [input, cache_read, cache_write, output] = tokens;
        format!(
            r#"{{"kind":"SessionA2uxEvent","event":{{"state":"IN_PROGRESS","agentEvent":{{"kind":"LlmResponseMetadataEvent","agent":{{"kind":"MainAgent","id":"main","name":"main","type":"LINEAR"}},"modelUsage":[{{"model":"{model}","cost":{cost:?},"inputTokens":{input},"cacheInputTokens":{cache_read},"cacheCreateTokens":{cache_write},"outputTokens":{output},"time":0}}]}}}},"taskId":"task-260825-151015-1bxv","timestampMs":{at_ms}}}"#
        ) + "\n"
    }

    fn read(log: &str) -> (Vec<ResponseWrite>, u64) {
        let (evidence, unparseable) = read_log_at(Provider::Junie, Path::new(PATH), log.as_bytes());
        (responses_of(evidence), unparseable)
    }

    /// A task's calls as Junie logged them (a prompt, a context report, a
    /// helper model's call, the task state) and the same log read again:
    /// each call once, in the session its directory names, Anthropic's
    /// shape, Junie's own cost beside it (none where it wrote 0).
    #[test]
    fn each_call_once_in_its_session() {
        let log = [
            r#"{"kind":"UserPromptEvent","requestId":"prompt-260825-170225-v7cf","prompt":"add a calendar","timestampMs":1787670145995}"#.to_owned() + "\n",
            r#"{"kind":"TaskStartedEvent","taskId":"task-260825-151015-1bxv","timestampMs":1787663415261}"#.to_owned() + "\n",
            event(1_787_663_417_205, "claude-haiku-4-5-20251001", 0.00317, [3125, 0, 0, 9]),
            event(1_787_663_426_600, "claude-fable-5", 0.2388975, [1, 0, 18631, 120]),
            r#"{"kind":"SessionA2uxEvent","event":{"state":"IN_PROGRESS","agentEvent":{"kind":"ContextWindowReportEvent","percentage":1.8632,"used":18632,"size":1000000}},"timestampMs":1787663428711}"#.to_owned() + "\n",
            event(1_787_663_438_843, "claude-fable-5", 0.092276, [2, 18631, 4826, 266]),
            event(1_787_663_807_329, "custom-local", 0.0, [794, 0, 0, 6]),
            r#"{"kind":"TaskState","state":"COMPLETED","timestampMs":1787663806342}"#.to_owned() + "\n",
        ]
        .concat();
        let (writes, unparseable) = read(&log);
        assert_eq!(unparseable, 0);
        let (again, _) = read(&log);
        let mut all = writes.clone();
        all.extend(again);
        let s = Some;
        let found = rows(Provider::Junie, &all);
        let columns: Vec<_> = found.iter().map(|r| (r.1, r.2, r.3, r.4, r.5, r.6)).collect();
        assert_eq!(
            columns,
            [
                (s(3125), s(0), s(0), s(9), None, s(3134)),
                (s(1), s(18631), s(0), s(120), None, s(18752)),
                (s(2), s(4826), s(18631), s(266), None, s(23725)),
                (s(794), s(0), s(0), s(6), None, s(800)),
            ]
        );
        assert!(writes.iter().all(|w| w.session_id.as_deref() == Some("session-260825-151015-1bxv")));
        let cost = |model: &str| writes.iter().find(|w| w.model.as_deref() == Some(model)).map(|w| w.own_figure);
        assert_eq!(cost("claude-haiku-4-5-20251001"), Some(Some(0.00317)));
        assert_eq!(cost("custom-local"), Some(None), "a cost of 0 is Junie's missing rate, not a free call");
        assert_eq!(writes[0].at_ms, 1_787_663_417_205);
    }

    /// A session resumed into another (its log copied): the copied calls
    /// add nothing, the new one counts; an event of two models' usage is
    /// two responses.
    #[test]
    fn a_copied_call_counts_once_and_two_models_twice() {
        let first = event(1_787_663_417_205, "claude-haiku-4-5-20251001", 0.00317, [3125, 0, 0, 9]);
        let (original, _) = read(&first);
        let two = r#"{"kind":"SessionA2uxEvent","event":{"agentEvent":{"kind":"LlmResponseMetadataEvent","modelUsage":[{"model":"claude-fable-5","inputTokens":2,"cacheInputTokens":18631,"cacheCreateTokens":4826,"outputTokens":266},{"model":"gpt-4.1-mini-2025-04-14","inputTokens":186,"cacheInputTokens":0,"cacheCreateTokens":0,"outputTokens":12}]}},"timestampMs":1787663438843}"#;
        let resumed = format!("{first}{two}\n");
        let (evidence, unparseable) =
            read_log_at(Provider::Junie, Path::new("/h/.junie/sessions/session-2/events.jsonl"), resumed.as_bytes());
        assert_eq!(unparseable, 0);
        let copy = responses_of(evidence);
        assert_eq!(copy.len(), 3);
        assert_eq!(copy[0].key, original[0].key, "the copy is the same response");
        let mut all = original;
        all.extend(copy);
        assert_eq!(rows(Provider::Junie, &all).len(), 3);
    }

    /// Broken and hostile events: usage that is no array, an entry that is
    /// no object, no time, a line cut short are unparseable and the log
    /// reads on; counters that are no counts (text, negative, fractions,
    /// past u64) are unknown, never 0; an all-zero entry is no response;
    /// a log whose place names no session says nothing.
    #[test]
    fn broken_and_hostile_events() {
        let log = [
            r#"{"kind":"SessionA2uxEvent","event":{"agentEvent":{"kind":"LlmResponseMetadataEvent","modelUsage":{"model":"m"}}},"timestampMs":1787663417205}"#,
            r#"{"kind":"SessionA2uxEvent","event":{"agentEvent":{"kind":"LlmResponseMetadataEvent","modelUsage":[7]}},"timestampMs":1787663417206}"#,
            r#"{"kind":"SessionA2uxEvent","event":{"agentEvent":{"kind":"LlmResponseMetadataEvent","modelUsage":[{"inputTokens":5,"outputTokens":1}]}}}"#,
            r#"{"kind":"SessionA2uxEvent","event":{"agentEvent":{"kind":"LlmResponseMetadataEvent","modelUsage":[{"model":"m","inputTokens":"#,
            r#"{"kind":"SessionA2uxEvent","event":{"agentEvent":{"kind":"LlmResponseMetadataEvent","modelUsage":[{"model":"m","cost":"free","inputTokens":"ten","cacheInputTokens":-3,"cacheCreateTokens":1.5,"outputTokens":99999999999999999999999}]}},"timestampMs":1787663417207}"#,
            r#"{"kind":"SessionA2uxEvent","event":{"agentEvent":{"kind":"LlmResponseMetadataEvent","modelUsage":[{"model":"m","inputTokens":0,"cacheInputTokens":0,"cacheCreateTokens":0,"outputTokens":0}]}},"timestampMs":1787663417208}"#,
            r#"{"kind":"SessionA2uxEvent","event":{"agentEvent":{"kind":"LlmResponseMetadataEvent","modelUsage":[{"model":"m","inputTokens":18446744073709551615,"outputTokens":2}]}},"timestampMs":1787663417209}"#,
        ]
        .join("\n")
            + "\n";
        let (writes, unparseable) = read(&log);
        assert_eq!(unparseable, 4, "usage no array; an entry no object; no time; cut short");
        assert_eq!(writes.len(), 1);
        assert_eq!(writes[0].tokens.input_tokens, Some(u64::MAX));
        assert!(!writes[0].is_valid(), "past Bee's bound: never stored");
        let (evidence, _) = read_log_at(Provider::Junie, Path::new("events.jsonl"), log.as_bytes());
        assert!(responses_of(evidence).is_empty(), "a log whose place names no session");
        assert_eq!(read("").0.len(), 0, "an empty log");
    }

    /// Millions of tiny items where the reader does not look are read past;
    /// in usage it reads, the line is passed over and named, and the log
    /// reads on.
    #[test]
    fn tiny_items_are_passed_over_or_named() {
        use crate::ledger::agents::tests::{noted, tiny_items};
        let junk = tiny_items(1_500_000);
        let line = |agent: &str, usage: &str| {
            format!(
                r#"{{"kind":"SessionA2uxEvent","event":{{"agentEvent":{{"kind":"LlmResponseMetadataEvent","agent":{agent},"modelUsage":[{{"model":"m","inputTokens":{usage},"outputTokens":1}}]}}}},"timestampMs":1787663417205}}"#
            ) + "\n"
        };
        let _ = noted();
        assert_eq!(read(&line(&junk, "5")).0.len(), 1);
        assert!(noted().is_empty());
        let bad = line("{}", &junk);
        let log = format!("{bad}{}", line("{}", "6"));
        let (writes, unparseable) = read(&log);
        assert_eq!((writes.len(), unparseable), (1, 0));
        assert_eq!(noted(), [(0, bad.len() as u64, bee_proto::ledger::SkipReason::TooComplex)]);
    }
}
