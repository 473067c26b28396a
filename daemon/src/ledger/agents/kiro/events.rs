//! A Kiro session's event log (`<bucket>/<session>/messages.jsonl`): one
//! event a line, `{"id", "timestamp", "payload": {"type", …}}`. A turn's
//! `usage_summary` event lists each model call the turn made by its request
//! id (`requestIds`) beside the turn's credits (`promptTurnSummaries`),
//! keyed by the turn's `executionId`. Each request id is one response,
//! every token of it unknown — Kiro writes no token count, only credits,
//! its own unit, no token or dollar figure: the turn's credits are its
//! first request's own figure, its other requests' 0, so every sum over
//! a turn's requests holds the turn's credits once. A request id is the
//! provider call's own, so a summary written again (a replay, a fork's
//! copy) counts nothing twice. A summary that lists no request id is one
//! response, keyed by its turn.
//! The log's place names its session (the folder's name).

use bee_proto::ledger::Provider;
use bee_proto::usage::Counters;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::Path;

use crate::ledger::agents::lines::{Beside, Found, LineRules, NamedSession, contains, markers, text, time_ms};
use crate::ledger::agents::sparse::{Keep, keep};

/// What the reader keeps of a log: the session its place names.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Events {
    session: NamedSession,
    #[serde(skip)]
    from_path: Option<String>,
}

markers! {
    USAGE_SUMMARY = b"\"usage_summary\"";
}

keep! {
    /// What [`Events::read`] reads of a line.
    LINE = ["timestamp", "payload/type", "payload/executionId", "payload/requestIds",
        "payload/promptTurnSummaries/unit", "payload/promptTurnSummaries/usage"];
}

impl LineRules for Events {
    const PROVIDER: Provider = Provider::Kiro;

    fn keep() -> &'static Keep {
        &LINE
    }

    fn is_marked(line: &[u8]) -> bool {
        contains(line, &USAGE_SUMMARY)
    }

    fn opened(&mut self, path: &Path) {
        self.from_path = crate::ledger::agents::lines::folder_name(path);
    }

    fn read(&mut self, line: &Value, found: &mut Found<'_>) -> bool {
        if text(line, "/payload/type") != Some("usage_summary") {
            return true;
        }
        let (Some(session), Some(at_ms)) = (self.from_path.clone(), time_ms(line.get("timestamp"))) else {
            return false;
        };
        if session.is_empty() {
            return false;
        }
        let requests: Vec<&str> = match line.pointer("/payload/requestIds") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(ids)) => {
                let Some(ids) = ids.iter().map(Value::as_str).collect::<Option<Vec<_>>>() else { return false };
                ids.into_iter().filter(|id| !id.is_empty()).collect()
            }
            Some(_) => return false,
        };
        self.session.name(&session, None, found);
        let credits = turn_credits(line.pointer("/payload/promptTurnSummaries"));
        let keys: Vec<String> = if requests.is_empty() {
            let Some(turn) = text(line, "/payload/executionId").filter(|turn| !turn.is_empty()) else { return false };
            vec![format!("turn\u{1f}{turn}")]
        } else {
            requests.into_iter().map(str::to_owned).collect()
        };
        for (nth, key) in keys.into_iter().enumerate() {
            let credits = if nth == 0 { credits } else { credits.map(|_| 0.0) };
            let beside = Beside { own_figure: credits, copied: false };
            found.response_with(key, &session, at_ms, None, Counters::default(), beside);
        }
        true
    }
}

/// A turn's credits: the sum of its summaries' `usage` in Kiro's `credit`
/// unit; unknown (`None`, never 0) when there is none, or when one is of
/// another unit or no number.
fn turn_credits(summaries: Option<&Value>) -> Option<f64> {
    let summaries = summaries?.as_array().filter(|summaries| !summaries.is_empty())?;
    summaries.iter().try_fold(0.0, |sum, summary| {
        let credits = summary.get("usage").and_then(Value::as_f64).filter(|_| text(summary, "/unit") == Some("credit"));
        credits.map(|credits| sum + credits)
    })
}

#[cfg(test)]
mod tests {
    use crate::ledger::agents::read_log_at;
    use crate::ledger::agents::tests::responses_of;
    use crate::ledger::stored::responses::ResponseWrite;
    use bee_proto::ledger::Provider;
    use std::path::Path;

    const PATH: &str = "/h/.kiro/sessions/9f3c1d0b7a4e2856/sess_0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d/messages.jsonl";

    fn read(log: &[u8]) -> (Vec<ResponseWrite>, u64) {
        let (evidence, unparseable) = read_log_at(Provider::Kiro, Path::new(PATH), log);
        (responses_of(evidence), unparseable)
    }

    /// A real turn's log (Kiro IDE 1.0.411, as an open reader's anonymised
    /// capture keeps it: a turn of 12 model calls and 11 tools): each
    /// request id once, in the session the folder names, dated at the
    /// summary, every token unknown (never 0), no model (the session's is
    /// `auto`), the turn's credits the first request's, 0 the others'.
    #[test]
    fn each_request_of_a_turn_once_with_its_tokens_unknown() {
        let (writes, unparseable) = read(include_bytes!("../testdata/kiro-1.0.411-turn.jsonl"));
        assert_eq!(unparseable, 0);
        assert_eq!(writes.len(), 12);
        let at = bee_proto::time::parse_rfc3339_ms("2026-09-03T12:01:11.847Z").unwrap();
        for write in &writes {
            assert_eq!(write.session_id.as_deref(), Some("sess_0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"));
            assert_eq!((write.at_ms, write.model.as_deref()), (at, None));
            assert_eq!(write.tokens, bee_proto::usage::Counters::default(), "no count is known, none is 0");
            assert!(write.is_final && write.is_valid());
        }
        assert_eq!(writes[0].key, "00000034-0000-4000-8000-000000000034");
        assert_eq!(writes[0].own_figure, Some(0.7029686111111112), "the turn's credits, as Kiro wrote them");
        assert!(writes[1..].iter().all(|write| write.own_figure == Some(0.0)));
    }

    /// Credits are read only in Kiro's `credit` unit; a summary of another
    /// unit, without a number, or without summaries leaves the turn's
    /// credits unknown (never 0).
    #[test]
    fn a_turns_credits_or_unknown() {
        let credits = |summaries: &str| super::turn_credits(serde_json::from_str(summaries).ok().as_ref());
        assert_eq!(credits(r#"[{"unit":"credit","usage":0.25},{"unit":"credit","usage":0.5}]"#), Some(0.75));
        assert_eq!(credits(r#"[{"unit":"credit","usage":0.25},{"unit":"request","usage":1}]"#), None);
        assert_eq!(credits(r#"[{"unit":"credit","usage":"0.25"}]"#), None);
        assert_eq!(credits(r#"[{"unit":"credit"}]"#), None);
        assert_eq!(credits("[]"), None);
        assert_eq!(credits("{}"), None);
        assert_eq!(credits("null"), None);
        // A credit figure out of Bee's bounds is unknown once stored.
        assert_eq!(crate::ledger::stored::responses::own_figure(Provider::Kiro, -0.5), None);
    }

    /// A summary written twice (a replay, a fork's copy) counts each request
    /// once; one listing no request is one response, keyed by its turn;
    /// broken summaries are unreadable; other events, an empty log and a
    /// log with no place to name its session add nothing.
    #[test]
    fn replays_once_and_broken_summaries_counted() {
        assert_eq!(read(b"").0.len(), 0);
        let summary = |exec: &str, ids: &str, at: &str| {
            format!(
                r#"{{"id":"{exec}-usage","timestamp":"{at}","payload":{{"type":"usage_summary","promptTurnSummaries":[{{"unit":"credit","unitPlural":"credits","usage":0.5,"usedTools":[]}}],"elapsedTime":900,"status":"success","executionId":"{exec}"{ids}}}}}"#
            ) + "\n"
        };
        let at = "2026-09-03T12:00:00.000Z";
        let mut log = String::from(
            r#"{"id":"e1-turn-start","timestamp":"2026-09-03T11:59:59.000Z","payload":{"type":"turn_start","executionId":"e1"}}"#,
        );
        log.push('\n');
        log += &summary("e1", r#","requestIds":["r1","r2"]"#, at);
        log += &summary("e1", r#","requestIds":["r1","r2"]"#, at);
        log += &summary("e2", "", at);
        log += &summary("e3", r#","requestIds":"r3""#, at);
        log += &summary("e4", r#","requestIds":[3]"#, at);
        log += &summary("e5", r#","requestIds":["r5"]"#, "yesterday");
        log += &summary("", "", at);
        let (writes, unparseable) = read(log.as_bytes());
        assert_eq!(unparseable, 4, "ids no list; an id no text; no time; no request and no turn");
        let mut keys: Vec<&str> = writes.iter().map(|w| w.key.as_str()).collect();
        keys.sort_unstable();
        keys.dedup();
        assert_eq!(keys, ["r1", "r2", "turn\u{1f}e2"]);
        let credits = |key: &str| writes.iter().find(|w| w.key == key).and_then(|w| w.own_figure);
        assert_eq!((credits("r1"), credits("r2"), credits("turn\u{1f}e2")), (Some(0.5), Some(0.0), Some(0.5)));
        let (evidence, unparseable) =
            read_log_at(Provider::Kiro, Path::new(""), summary("e1", r#","requestIds":["r1"]"#, at).as_bytes());
        assert_eq!((responses_of(evidence).len(), unparseable), (0, 1), "no session to name");
    }
}
