//! A Qwen Code chat log: one JSON record a line, each with its session and
//! working directory. Every response the CLI received — the main model's
//! and its side calls' (the memory extractor after each prompt) — is a
//! `system` record of subtype `ui_telemetry` whose event is
//! `qwen-code.api_response`, with the provider's `response_id`, the model
//! that answered and its counters. The `assistant` records repeat the main
//! responses' counters without an id and are not read; a fork copies its
//! parent's records, ids included, so a response is counted once. Each
//! record a fork copied names where it came from (`forkedFrom`): the
//! response stays the session's that made it, the fork holds a copy.

use bee_proto::ledger::Provider;
use bee_proto::usage::Counters;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::ledger::agents::lines::{Beside, Found, LineRules, NamedSession, contains, count, markers, text, time_ms};
use crate::ledger::agents::sparse::{Keep, keep};

/// What the reader keeps of a chat log where it stopped: the session it
/// named last.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub(super) struct Chat(NamedSession);

markers! {
    API_RESPONSE = b"qwen-code.api_response";
    SESSION_ID = b"\"sessionId\"";
}

keep! {
    /// What [`Chat::read`] reads of a line.
    LINE = [
        "sessionId", "cwd", "timestamp", "forkedFrom/sessionId",
        "systemPayload/uiEvent/event.name", "systemPayload/uiEvent/event.timestamp",
        "systemPayload/uiEvent/response_id", "systemPayload/uiEvent/model",
        "systemPayload/uiEvent/input_token_count", "systemPayload/uiEvent/cached_content_token_count",
        "systemPayload/uiEvent/output_token_count", "systemPayload/uiEvent/thoughts_token_count",
        "systemPayload/uiEvent/total_token_count",
    ];
}

impl LineRules for Chat {
    const PROVIDER: Provider = Provider::Qwen;

    fn keep() -> &'static Keep {
        &LINE
    }

    fn is_marked(line: &[u8]) -> bool {
        contains(line, &API_RESPONSE) || contains(line, &SESSION_ID)
    }

    fn read(&mut self, line: &Value, found: &mut Found<'_>) -> bool {
        let Some(session) = text(line, "/sessionId").filter(|session| !session.is_empty()) else { return true };
        self.0.name(session, text(line, "/cwd"), found);
        let event = line.pointer("/systemPayload/uiEvent");
        let Some(event) = event.filter(|event| text(event, "/event.name") == Some("qwen-code.api_response")) else {
            return true;
        };
        let at_ms = time_ms(event.get("event.timestamp")).or_else(|| time_ms(line.get("timestamp")));
        let (Some(id), Some(at_ms)) = (text(event, "/response_id").filter(|id| !id.is_empty()), at_ms) else {
            return false;
        };
        let beside = Beside { own_figure: None, copied: line.pointer("/forkedFrom/sessionId").is_some() };
        found.response_with(id.to_owned(), session, at_ms, text(event, "/model"), counters(event), beside);
        true
    }
}

/// An `api_response` event's counters, in OpenAI's shape as the provider
/// reported them: input with its cached part, output with its reasoning.
pub(super) fn counters(event: &Value) -> Counters {
    let field = |name: &str| count(event.get(name));
    Counters {
        input_tokens: field("input_token_count"),
        cached_input_tokens: field("cached_content_token_count"),
        output_tokens: field("output_token_count"),
        reasoning_output_tokens: field("thoughts_token_count"),
        total_tokens: field("total_token_count"),
        ..Counters::default()
    }
}

#[cfg(test)]
mod tests {
    use crate::ledger::agents::tests::responses;
    use bee_proto::ledger::Provider;

    /// Qwen Code 0.24.4's own fork (`--continue --fork-session`): the
    /// parent's records copied into the fork's file under the fork's
    /// session, each naming where it came from (`forkedFrom`), then the
    /// fork's own two responses. The copies are marked; Qwen Code writes no
    /// cost.
    #[test]
    fn a_forks_copied_records_are_marked() {
        let (writes, unparseable) = responses(Provider::Qwen, include_bytes!("../testdata/qwen-0.24.4-fork.jsonl"));
        assert_eq!(unparseable, 0);
        let read: Vec<(&str, bool)> = writes.iter().map(|w| (w.key.as_str(), w.copied)).collect();
        assert_eq!(
            read,
            [
                ("chatcmpl-mock-003", true),
                ("chatcmpl-mock-004", true),
                ("chatcmpl-mock-005", true),
                ("chatcmpl-mock-006", true),
                ("chatcmpl-mock-007", false),
                ("chatcmpl-mock-008", false),
            ]
        );
        assert!(writes.iter().all(|w| w.own_figure.is_none()));
        let (writes, _) = responses(Provider::Qwen, include_bytes!("../testdata/qwen-0.24.4-tool.jsonl"));
        assert!(writes.iter().all(|w| !w.copied));
    }
}
