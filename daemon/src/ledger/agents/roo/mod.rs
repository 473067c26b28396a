//! Roo Code: its editor extension's tasks (`<editor>/User/globalStorage/
//! rooveterinaryinc.roo-cline/tasks/<id>/ui_messages.json`), Cline's
//! classic format as Roo Code forked it, read by Cline's reader of it
//! ([`ui_messages`]). `README.md` beside this file describes the format as
//! read from Roo Code's source.

use bee_proto::ledger::Provider;

use crate::ledger::agents::agent::{About, Records, Verified};
use crate::ledger::agents::cline::TaskExtension;
use crate::ledger::agents::cline::ui_messages::{Tasks, Writer};

/// When Roo Code 3.29.5 was released (2025-11-01T19:36:30Z), from which
/// `tokensIn` counts both caches whatever the provider's protocol.
const INCLUSIVE_SINCE_MS: i64 = 1_762_025_790_000;

/// Roo Code, as [`Agent`].
pub static ROO: TaskExtension = TaskExtension {
    about: &About {
        provider: Provider::Roo,
        title: "Roo Code",
        verified: Verified::FormatFromSource,
        unrecorded_calls: Some("context condensing (its cost is kept, not its tokens) and prompt enhancement"),
        // Cache writes and its own cost; no reasoning count, no model,
        // no limit notice, no turn Bee times.
        records: Records {
            time_spans: false,
            limit_notices: false,
            reasoning: false,
            cache_writes: true,
            own_cost: true,
        },
    },
    extension: "rooveterinaryinc.roo-cline",
    tasks: Tasks { provider: Provider::Roo, writer: Writer::RooFamily { inclusive_since: INCLUSIVE_SINCE_MS } },
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::agents::agent::Agent;
    use crate::ledger::agents::cline::ui_messages::tests::{read_task, started};
    use crate::ledger::agents::tests::rows;
    use serde_json::{Value, json};
    use std::ffi::OsString;
    use std::path::{Path, PathBuf};

    fn info(protocol: &str, tokens_in: u64, writes: u64, reads: u64, out: u64) -> Value {
        json!({"apiProtocol": protocol, "tokensIn": tokens_in, "tokensOut": out, "cacheWrites": writes,
            "cacheReads": reads, "cost": 0.01})
    }

    /// Roo Code's requests, as its source writes them before and after
    /// 3.29.5: an Anthropic-protocol request's input without caches before
    /// the release, and after it where its counters or a later request of
    /// the task show an older writer; with both caches otherwise, and
    /// always for the OpenAI protocol; unknown without a protocol unless
    /// the counters say; a request still streaming (`{apiProtocol}` only)
    /// is none, a cancelled one counts what it used.
    #[test]
    fn roo_requests_before_and_after_the_release_that_changed_tokens_in() {
        let before = INCLUSIVE_SINCE_MS - 86_400_000;
        let after = INCLUSIVE_SINCE_MS + 86_400_000;
        let old_task = json!([
            {"ts": before, "type": "say", "say": "text", "text": "working"},
            started(before + 1, info("anthropic", 12, 300, 4000, 50)),
            started(before + 2, info("anthropic", 5000, 0, 4000, 60)),
            started(before + 3, info("openai", 5000, 0, 4000, 70)),
            started(before + 4, json!({"tokensIn": 5000, "tokensOut": 80, "cacheWrites": 0, "cacheReads": 4000,
                "cost": 0.01})),
            started(before + 5, json!({"apiProtocol": "anthropic"})),
            started(before + 6, json!({"apiProtocol": "openai", "tokensIn": 40, "tokensOut": 2, "cacheWrites": 0,
                "cacheReads": 0, "cost": 0, "cancelReason": "user_cancelled", "streamingFailedMessage": "x"})),
            {"ts": before + 7, "type": "say", "say": "condense_context", "contextCondense": {"cost": 0.2}},
        ]);
        let s = Some;
        let columns = |task: &str, messages: &Value| -> Vec<_> {
            rows(Provider::Roo, &read_task(Provider::Roo, task, messages))
                .into_iter()
                .map(|r| (r.0.rsplit('\u{1f}').next().unwrap().parse::<i64>().unwrap(), r.1, r.2, r.3, r.4, r.6))
                .collect()
        };
        assert_eq!(
            columns("old", &old_task),
            [
                (before + 1, s(12), s(300), s(4000), s(50), s(4362)),
                (before + 2, s(5000), s(0), s(4000), s(60), s(9060)),
                (before + 3, s(1000), s(0), s(4000), s(70), s(5070)),
                (before + 4, None, s(0), s(4000), s(80), None),
                (before + 6, s(40), s(0), s(0), s(2), s(42)),
            ]
        );
        let new_task = json!([
            started(after + 1, info("anthropic", 4312, 300, 4000, 50)),
            started(after + 2, info("openai", 5000, 40, 4000, 70)),
        ]);
        assert_eq!(
            columns("new", &new_task),
            [(after + 1, s(12), s(300), s(4000), s(50), s(4362)), (after + 2, s(960), s(40), s(4000), s(70), s(5070))]
        );
        // Still an older Roo Code after the release: its later request shows
        // it, and so the earlier one is read as it wrote it.
        let late_old = json!([
            started(after + 1, info("anthropic", 5000, 0, 4000, 60)),
            started(after + 2, info("anthropic", 12, 300, 4000, 50)),
            started(after + 3, info("anthropic", 4312, 300, 4000, 50)),
        ]);
        assert_eq!(
            columns("late", &late_old),
            [
                (after + 1, s(5000), s(0), s(4000), s(60), s(9060)),
                (after + 2, s(12), s(300), s(4000), s(50), s(4362)),
                (after + 3, s(12), s(300), s(4000), s(50), s(4362)),
            ]
        );
        let writes = read_task(Provider::Roo, "new", &new_task);
        assert!(writes.iter().all(|w| w.model.is_none() && w.own_figure == Some(0.01)));
        assert!(writes.iter().all(|w| w.session_id.as_deref() == Some("new")));
    }

    #[test]
    fn its_tasks_under_every_editor() {
        let env = |name: &str| (name == "HOME").then(|| OsString::from("/h"));
        let dirs = ROO.record_dirs(&env);
        assert_eq!(dirs[0], PathBuf::from("/h/.config/Code/User/globalStorage/rooveterinaryinc.roo-cline/tasks"));
        assert!(ROO.is_record_file(Path::new("/t/1/ui_messages.json")));
        assert!(!ROO.is_record_file(Path::new("/t/1/api_conversation_history.json")));
        assert!(!ROO.is_record_file(Path::new("/t/1/1.messages.json")));
    }
}
