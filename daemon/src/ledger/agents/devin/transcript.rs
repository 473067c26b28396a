//! A Devin CLI transcript (`transcripts/<session>.json`): one JSON document
//! a session in the Agent Trajectory Interchange Format (`schema_version`
//! `"ATIF-v1.7"`), rewritten whole as the session goes on: `session_id`,
//! `agent {name, version, model_name}`, `steps[]` and `final_metrics`. A
//! step of `source` `"agent"` is one model call, its `metrics`
//! `{prompt_tokens, completion_tokens, cached_tokens}` in OpenAI's shape
//! (ATIF: the prompt includes its cached part, the completion its
//! reasoning), its `timestamp` ISO 8601 and its `model_name`.
//! `final_metrics` sums the steps and is not read.

use bee_proto::usage::Counters;
use serde_json::Value;
use std::path::Path;
use std::sync::LazyLock;

use crate::ledger::agents::lines::{Found, count, text};
use crate::ledger::agents::sparse::Keep;

/// What [`read`] reads of a transcript.
pub(crate) static TRANSCRIPT: LazyLock<Keep> = LazyLock::new(|| {
    Keep::paths(&[
        "schema_version",
        "session_id",
        "agent/model_name",
        "steps/step_id",
        "steps/timestamp",
        "steps/source",
        "steps/model_name",
        "steps/metrics/prompt_tokens",
        "steps/metrics/completion_tokens",
        "steps/metrics/cached_tokens",
    ])
});

/// Reads one transcript; the count is of agent steps with usage refused
/// (no time, no step id, metrics that are no object).
pub(crate) fn read(path: &Path, transcript: &Value, found: &mut Found<'_>) -> u64 {
    if !text(transcript, "/schema_version").is_some_and(|version| version.starts_with("ATIF-")) {
        return 0;
    }
    let from_path = path.file_stem().and_then(|stem| stem.to_str());
    let Some(session) = text(transcript, "/session_id").or(from_path).filter(|session| !session.is_empty()) else {
        return 0;
    };
    let Some(steps) = transcript.get("steps").and_then(Value::as_array) else { return 1 };
    found.session(session, None);
    let default_model = text(transcript, "/agent/model_name");
    let mut refused = 0;
    for step in steps {
        if text(step, "/source") != Some("agent") {
            continue;
        }
        let metrics = match step.get("metrics") {
            None | Some(Value::Null) => continue,
            Some(metrics @ Value::Object(_)) => metrics,
            Some(_) => {
                refused += 1;
                continue;
            }
        };
        let counters = Counters {
            input_tokens: count(metrics.get("prompt_tokens")),
            cached_input_tokens: count(metrics.get("cached_tokens")),
            output_tokens: count(metrics.get("completion_tokens")),
            ..Counters::default()
        };
        if counters.counts_nothing() {
            continue;
        }
        let step_id = match step.get("step_id") {
            Some(Value::Number(id)) => id.to_string(),
            Some(Value::String(id)) if !id.is_empty() => id.clone(),
            _ => {
                refused += 1;
                continue;
            }
        };
        let Some(at_ms) = text(step, "/timestamp").and_then(iso_ms) else {
            refused += 1;
            continue;
        };
        let model = text(step, "/model_name").or(default_model);
        found.response(format!("{session}\u{1f}{step_id}\u{1f}{at_ms}"), session, at_ms, model, counters);
    }
    refused
}

/// Unix ms of an ISO 8601 time in UTC (`Z`) or at an offset (`+02:00`).
fn iso_ms(text: &str) -> Option<i64> {
    if text.ends_with('Z') {
        return bee_proto::time::parse_rfc3339_ms(text);
    }
    let at = text.len().checked_sub(6)?;
    let (base, offset) = (text.get(..at)?, text.get(at..)?.as_bytes());
    let sign = match offset[0] {
        b'+' => 1,
        b'-' => -1,
        _ => return None,
    };
    let digit = |at: usize| offset.get(at).filter(|b| b.is_ascii_digit()).map(|b| i64::from(b - b'0'));
    if offset[3] != b':' {
        return None;
    }
    let minutes = (digit(1)? * 10 + digit(2)?) * 60 + digit(4)? * 10 + digit(5)?;
    let ms = bee_proto::time::parse_rfc3339_ms(&format!("{base}Z"))?.checked_sub(sign * minutes * 60_000)?;
    bee_proto::time::spells_as_rfc3339(ms).then_some(ms)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::agents::tests::{document_responses, responses_of, rows};
    use crate::ledger::stored::responses::ResponseWrite;
    use bee_proto::ledger::Provider;

    /// A transcript as Devin CLI writes it: a system step, a user step,
    /// agent steps with their metrics, `final_metrics`.
    fn transcript(steps: &[Value]) -> Value {
        serde_json::json!({
            "schema_version": "ATIF-v1.7",
            "session_id": "serene-example",
            "agent": {"name": "devin", "version": "3000.11.3", "model_name": "swe-1.5", "tool_definitions": [], "extra": {}},
            "steps": steps,
            "final_metrics": {"total_prompt_tokens": 3550, "total_completion_tokens": 236, "total_cached_tokens": 2700}
        })
    }

    fn agent_step(id: u64, at: &str, metrics: Value) -> Value {
        serde_json::json!({"step_id": id, "timestamp": at, "source": "agent", "message": "done",
            "model_name": "example-swe-high", "reasoning_content": "…", "tool_calls": [], "metrics": metrics})
    }

    fn read_path(path: &str, document: &Value) -> (Vec<ResponseWrite>, u64) {
        let mut evidence = Vec::new();
        let refused = super::super::TRANSCRIPTS.evidence(Path::new(path), document, &mut evidence);
        (responses_of(evidence), refused)
    }

    /// A session and the same session resumed (its transcript rewritten
    /// with more steps): each agent step once, cached input shown once
    /// under cache reads, the summary in `final_metrics` not counted.
    #[test]
    fn each_agent_step_once_through_a_resume() {
        let steps = vec![
            serde_json::json!({"step_id": 1, "timestamp": "2026-10-08T03:00:00.000Z", "source": "system", "message": "You are Devin"}),
            serde_json::json!({"step_id": 2, "timestamp": "2026-10-08T03:00:01.250Z", "source": "user", "message": "port the build script"}),
            agent_step(
                3,
                "2026-10-08T03:00:09.100Z",
                serde_json::json!({"prompt_tokens": 1240, "completion_tokens": 96, "cached_tokens": 600}),
            ),
        ];
        let first = transcript(&steps);
        let mut resumed = steps.clone();
        resumed.push(serde_json::json!({"step_id": 4, "timestamp": "2026-10-08T03:10:00.000Z", "source": "user", "message": "go on"}));
        resumed.push(agent_step(
            5,
            "2026-10-08T03:10:40.401+02:00",
            serde_json::json!({"prompt_tokens": 2310, "completion_tokens": 140, "cached_tokens": 2100}),
        ));
        let writes = document_responses(&super::super::TRANSCRIPTS, &[first, transcript(&resumed)]);
        let s = Some;
        assert_eq!(
            rows(Provider::Devin, &writes),
            [
                ("serene-example\u{1f}3\u{1f}1791428409100".into(), s(640), None, s(600), s(96), None, s(1336)),
                ("serene-example\u{1f}5\u{1f}1791421840401".into(), s(210), None, s(2100), s(140), None, s(2450)),
            ]
        );
        assert!(writes.iter().all(|w| w.session_id.as_deref() == Some("serene-example")));
        assert_eq!(writes[0].model.as_deref(), Some("example-swe-high"));
    }

    /// Broken and hostile transcripts: another schema or no JSON object is
    /// none of Devin's; steps that are no list, metrics that are no object,
    /// an agent step with no time or id are refused; counters that are no
    /// counts are unknown, never 0; an agent step without metrics is none.
    #[test]
    fn broken_and_hostile_transcripts() {
        assert_eq!(read_path("t/x.json", &serde_json::json!({"schema_version": "other", "steps": []})).1, 0);
        assert_eq!(read_path("t/x.json", &serde_json::json!([1, 2])).1, 0);
        let mut no_steps = transcript(&[]);
        no_steps["steps"] = serde_json::json!({"1": 2});
        assert_eq!(read_path("t/x.json", &no_steps), (Vec::new(), 1));
        let document = transcript(&[
            serde_json::json!({"step_id": 1, "source": "agent", "timestamp": "2026-10-08T03:00:09Z", "metrics": 7}),
            serde_json::json!({"step_id": 2, "source": "agent", "metrics": {"prompt_tokens": 5, "completion_tokens": 1}}),
            serde_json::json!({"source": "agent", "timestamp": "2026-10-08T03:00:09Z", "metrics": {"prompt_tokens": 5}}),
            serde_json::json!({"step_id": 4, "source": "agent", "timestamp": "yesterday", "metrics": {"prompt_tokens": 5}}),
            serde_json::json!({"step_id": 5, "source": "agent", "timestamp": "2026-10-08T03:00:09Z"}),
            serde_json::json!({"step_id": 6, "source": "agent", "timestamp": "2026-10-08T03:00:09Z",
                "metrics": {"prompt_tokens": "many", "completion_tokens": -1, "cached_tokens": 1.5}}),
            serde_json::json!({"step_id": 7, "source": "agent", "timestamp": "2026-10-08T03:00:10Z",
                "metrics": {"prompt_tokens": 18446744073709551615_u64, "completion_tokens": 2, "cached_tokens": "x"}}),
        ]);
        let (writes, refused) = read_path("t/serene-example.json", &document);
        assert_eq!(refused, 4, "metrics no object; no time; no id; a time that is none");
        assert_eq!(writes.len(), 1);
        assert_eq!((writes[0].tokens.input_tokens, writes[0].tokens.cached_input_tokens), (Some(u64::MAX), None));
        assert!(!writes[0].is_valid(), "past Bee's bound: never stored");
        let mut unnamed = transcript(&[]);
        unnamed["session_id"] = Value::Null;
        let mut evidence = Vec::new();
        super::super::TRANSCRIPTS.evidence(Path::new("t/from-its-name.json"), &unnamed, &mut evidence);
        assert!(evidence.iter().any(|e| matches!(e,
            crate::ledger::stored::evidence::Evidence::SessionLogged(_, s) if s == "from-its-name")));
    }

    #[test]
    fn times_in_utc_or_at_an_offset() {
        assert_eq!(iso_ms("2026-10-08T03:00:00Z"), Some(1_791_428_400_000));
        assert_eq!(iso_ms("2026-10-08T05:00:00+02:00"), Some(1_791_428_400_000));
        assert_eq!(iso_ms("2026-10-07T22:30:00.500-04:30"), Some(1_791_428_400_500));
        for broken in
            ["2026-10-08T03:00:00", "2026-10-08T03:00:00+0200", "x+02:00", "", "+02:00", "2026-10-08T03:00:00+a2:00"]
        {
            assert_eq!(iso_ms(broken), None, "{broken}");
        }
    }
}
