//! A Kimi CLI wire log: a `metadata` line, then one record a line, each
//! `{"timestamp": <seconds>, "message": {"type", "payload"}}`. After each
//! provider response the CLI writes a `StatusUpdate` whose payload has the
//! step's `token_usage` {input_other, output, input_cache_read,
//! input_cache_creation} and the provider's `message_id`. The log's place
//! names its session (its directory); a fork copies the parent's lines,
//! ids included, into a new session's log, so a response is counted once
//! by its id. The records name no model.

use bee_proto::ledger::Provider;
use bee_proto::usage::Counters;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::Path;

use crate::ledger::agents::lines::{Found, LineRules, NamedSession, contains, count, markers, spelled, text};
use crate::ledger::agents::sparse::{Keep, keep};

/// What the reader keeps of a wire log: the session its place names.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Wire {
    session: NamedSession,
    #[serde(skip)]
    from_path: Option<String>,
}

markers! {
    TOKEN_USAGE = b"\"token_usage\"";
}

keep! {
    /// What [`Wire::read`] reads of a line.
    LINE = [
        "timestamp", "message/type", "message/payload/message_id",
        "message/payload/token_usage/input_other", "message/payload/token_usage/input_cache_creation",
        "message/payload/token_usage/input_cache_read", "message/payload/token_usage/output",
    ];
}

impl LineRules for Wire {
    const PROVIDER: Provider = Provider::Kimi;

    fn keep() -> &'static Keep {
        &LINE
    }

    fn is_marked(line: &[u8]) -> bool {
        contains(line, &TOKEN_USAGE)
    }

    fn opened(&mut self, path: &Path) {
        self.from_path = crate::ledger::agents::lines::folder_name(path);
    }

    fn read(&mut self, line: &Value, found: &mut Found<'_>) -> bool {
        if text(line, "/message/type") != Some("StatusUpdate") {
            return true;
        }
        let Some(usage) = line.pointer("/message/payload/token_usage") else { return true };
        if usage.is_null() {
            return true;
        }
        if !usage.is_object() {
            return false;
        }
        let Some(session) = self.from_path.clone().filter(|session| !session.is_empty()) else { return false };
        self.session.name(&session, None, found);
        let Some(at_ms) = seconds_ms(line.get("timestamp")) else { return false };
        let field = |name: &str| count(usage.get(name));
        let counters = Counters {
            input_tokens: field("input_other"),
            cache_creation_input_tokens: field("input_cache_creation"),
            cache_read_input_tokens: field("input_cache_read"),
            output_tokens: field("output"),
            ..Counters::default()
        };
        let key = match text(line, "/message/payload/message_id").filter(|id| !id.is_empty()) {
            Some(id) => id.to_owned(),
            None => format!("{at_ms}\u{1f}{}", spelled(&counters.values())),
        };
        found.response(key, &session, at_ms, None, counters);
        true
    }
}

/// Unix seconds with a fraction, as Python's `time.time()` writes them.
fn seconds_ms(value: Option<&Value>) -> Option<i64> {
    let seconds = value?.as_f64()?;
    let ms = (seconds * 1000.0).round();
    (ms.is_finite() && (0.0..=i64::MAX as f64).contains(&ms))
        .then_some(ms as i64)
        .filter(|&ms| bee_proto::time::spells_as_rfc3339(ms))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::agents::read_log_at;
    use crate::ledger::agents::tests::{responses_of, rows};

    /// A session with a tool step, continued later, and a fork's copy of
    /// its first step: each response once by its id, in its session; a
    /// step without usage is none; a broken record is counted.
    #[test]
    fn each_step_once_through_continue_and_fork() {
        let log = include_bytes!("../testdata/kimi-wire.jsonl");
        let (evidence, unparseable) = read_log_at(Provider::Kimi, Path::new("s/2b9f/5e1c-session/wire.jsonl"), log);
        assert_eq!(unparseable, 2, "usage that is no object; a truncated line");
        let writes = responses_of(evidence);
        assert!(writes.iter().all(|w| w.session_id.as_deref() == Some("5e1c-session") && w.model.is_none()));
        let s = Some;
        assert_eq!(
            rows(Provider::Kimi, &writes),
            [
                ("chatcmpl-k1".into(), s(2300), s(0), s(0), s(120), None, s(2420)),
                ("chatcmpl-k2".into(), s(180), s(0), s(2400), s(64), None, s(2644)),
                ("chatcmpl-k3".into(), s(40), s(0), s(2600), s(30), None, s(2670)),
            ]
        );
        let (nowhere, _) = read_log_at(Provider::Kimi, Path::new(""), log);
        assert!(responses_of(nowhere).is_empty(), "a log whose place names no session");
    }
}
