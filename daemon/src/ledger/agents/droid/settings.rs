//! A Droid session's settings: `{"model", "providerLock",
//! "providerLockTimestamp", "tokenUsage": {inputTokens, outputTokens,
//! cacheCreationTokens, cacheReadTokens, thinkingTokens}}`. The usage is
//! the session's running total, rewritten after each call; Droid keeps no
//! record of its calls one by one. So a session is one entry in the
//! ledger, keyed by the session (its file's name), its counters the
//! fullest total read, dated when the session started (`providerLockTimestamp`,
//! else when the document was last written). Input excludes both caches;
//! output holds the thinking already (seen with the real Droid against a
//! mock of OpenAI's Responses API: output 210 with 60 of thinking served
//! is `outputTokens` 210, `thinkingTokens` 60), which is the part of it
//! shown as reasoning, never added again.

use bee_proto::usage::Counters;
use serde_json::Value;
use std::path::Path;
use std::sync::LazyLock;

use crate::ledger::agents::lines::{Found, count, text, time_ms};
use crate::ledger::agents::sparse::Keep;
use crate::ledger::agents::whole::modified_ms;

/// What [`read`] reads of a settings document (`tokenUsage` kept as
/// an object of the counters read, so that its kind is still told).
pub(crate) static SETTINGS: LazyLock<Keep> = LazyLock::new(|| {
    Keep::paths(&[
        "model",
        "providerLockTimestamp",
        "tokenUsage/inputTokens",
        "tokenUsage/outputTokens",
        "tokenUsage/cacheCreationTokens",
        "tokenUsage/cacheReadTokens",
        "tokenUsage/thinkingTokens",
    ])
});

/// Reads one settings document at `path`; the count is of usage that is
/// not Droid's.
pub(crate) fn read(path: &Path, settings: &Value, found: &mut Found<'_>) -> u64 {
    let Some(session) = path
        .file_name()
        .and_then(|name| name.to_str())
        .and_then(|name| name.strip_suffix(".settings.json"))
        .filter(|session| !session.is_empty())
    else {
        return 0;
    };
    let Some(usage) = settings.get("tokenUsage") else { return 0 };
    if !usage.is_object() {
        return 1;
    }
    let field = |name: &str| count(usage.get(name));
    let counters = Counters {
        input_tokens: field("inputTokens"),
        cache_creation_input_tokens: field("cacheCreationTokens"),
        cache_read_input_tokens: field("cacheReadTokens"),
        output_tokens: field("outputTokens"),
        reasoning_output_tokens: field("thinkingTokens"),
        ..Counters::default()
    };
    if counters.counts_nothing() {
        return 0;
    }
    let Some(at_ms) = time_ms(settings.get("providerLockTimestamp")).or_else(|| modified_ms(path)) else { return 1 };
    let model = text(settings, "/model").map(|model| model.strip_prefix("custom:").unwrap_or(model));
    found.session(session, None);
    found.response(format!("session\u{1f}{session}"), session, at_ms, model, counters);
    0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::agents::tests::rows;
    use bee_proto::ledger::Provider;

    fn responses(documents: &[(&str, Value)]) -> Vec<crate::ledger::stored::responses::ResponseWrite> {
        let mut evidence = Vec::new();
        for (name, document) in documents {
            super::super::SETTINGS.evidence(Path::new(name), document, &mut evidence);
        }
        crate::ledger::agents::tests::responses_of(evidence)
    }

    /// A session's total read as it grows and again when resumed: one
    /// entry, its fullest total; a session with no usage yet and a broken
    /// document are nothing.
    #[test]
    fn a_session_is_one_running_total() {
        let documents: Vec<Value> = serde_json::from_slice(include_bytes!("../testdata/droid-settings.json")).unwrap();
        let named: Vec<(&str, Value)> = [
            "s/-home-dev-app/6c1d.settings.json",
            "s/-home-dev-app/6c1d.settings.json",
            "s/-home-dev-app/9e02.settings.json",
            "s/-home-dev-app/bad.settings.json",
        ]
        .into_iter()
        .zip(documents)
        .collect();
        let writes = responses(&named);
        assert_eq!(writes.len(), 2, "the two readings of one session, and nothing else");
        assert_eq!(writes[0].key, writes[1].key, "one session, one key");
        let s = Some;
        let readings: Vec<_> =
            rows(Provider::Droid, &writes).into_iter().map(|r| (r.1, r.2, r.3, r.4, r.5, r.6)).collect();
        assert_eq!(
            readings,
            [
                (s(1100), s(9000), s(30000), s(500), s(200), s(40600)),
                (s(2400), s(9000), s(61000), s(1400), s(500), s(73800))
            ]
        );
        assert_eq!(writes[1].model.as_deref(), Some("claude-opus-4-5-20251101"));
        assert_eq!(writes[0].at_ms, writes[1].at_ms, "dated when the session started");
    }
}
