//! IBM Bob: its IDE's tasks (`<app data>/IBM Bob/User/globalStorage/
//! ibm.bob-code/tasks/<id>/ui_messages.json`, `Bob-IDE` before its general
//! release), Roo Code's format as Bob's extension forked it, read by
//! Cline's reader of it ([`ui_messages`]) as Roo Code's and Kilo Code's
//! are. What differs from Roo Code is only where the tasks are: Bob is an
//! editor of its own, not an extension of VS Code's, so its tasks are
//! under its own application folders. `README.md` beside this file
//! describes the format and where it was read from.

use bee_proto::ledger::Provider;
use std::path::{Path, PathBuf};

use crate::ledger::agents::agent::{About, Agent, Env, Records, Verified, WholeFileReader, env_or_home, under_home};
use crate::ledger::agents::cline::ui_messages::{self, Tasks, Writer};

/// When Roo Code 3.29.5 was released (2025-11-01T19:36:30Z), the first
/// release of the family in which `tokensIn` counts both caches: no task
/// Bob's Roo-derived extension wrote before it can count them so. Which
/// Roo Code Bob forked, and whether it took that change, is not known (its
/// source is closed); where a task's own counters show the older kind,
/// Cline's reader reads it so whatever the date (`../roo/README.md`).
const INCLUSIVE_SINCE_MS: i64 = 1_762_025_790_000;

/// Bob's extension id: the folder of its global storage.
const EXTENSION: &str = "ibm.bob-code";

/// The names Bob's application folder has had: `IBM Bob` since its general
/// release, `Bob-IDE` in its preview.
const APPS: [&str; 2] = ["IBM Bob", "Bob-IDE"];

/// Its tasks' reader: Cline's reader of `ui_messages.json`, with Roo
/// Code's conventions, counting under Bob's name.
static TASKS: Tasks =
    Tasks { provider: Provider::Bob, writer: Writer::RooFamily { inclusive_since: INCLUSIVE_SINCE_MS } };

/// IBM Bob, as [`Agent`].
#[derive(Debug)]
pub struct Bob;

impl Agent for Bob {
    fn about(&self) -> &'static About {
        &About {
            provider: Provider::Bob,
            title: "IBM Bob",
            verified: Verified::FormatFromSource,
            unrecorded_calls: Some(
                "context condensing (its cost is kept, not its tokens) and prompt enhancement, as in Roo Code",
            ),
            // Roo Code's: cache writes and its own cost; no reasoning count,
            // no model, no limit notice, no turn Bee times.
            records: Records {
                time_spans: false,
                limit_notices: false,
                reasoning: false,
                cache_writes: true,
                own_cost: true,
            },
        }
    }

    /// The `tasks/` directory of its global storage in each of its
    /// application folders: Linux's under `XDG_CONFIG_HOME` (by default
    /// `~/.config`), macOS's under `~/Library/Application Support`.
    fn record_dirs(&self, env: Env<'_>) -> Vec<PathBuf> {
        let linux = env_or_home(env, "XDG_CONFIG_HOME", ".config");
        let macos = under_home(env, "Library/Application Support");
        [linux, macos]
            .into_iter()
            .flatten()
            .flat_map(|base| APPS.map(|app| base.join(app).join("User/globalStorage").join(EXTENSION).join("tasks")))
            .collect()
    }

    /// A task's `ui_messages.json` (never a temporary copy of it).
    fn is_record_file(&self, path: &Path) -> bool {
        path.file_name().is_some_and(|name| name == ui_messages::UI_MESSAGES)
    }

    fn whole_file(&self) -> Option<&dyn WholeFileReader> {
        Some(&TASKS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::agents::cline::ui_messages::tests::{read_task, read_task_bytes, started};
    use crate::ledger::agents::tests::env_of;
    use crate::ledger::agents::tests::rows;
    use serde_json::json;

    /// A task of Bob's as Roo Code's source writes one (Bob keeps Roo's
    /// `ui_messages.json`): each finished request read exactly, input
    /// without either cache by its protocol and time; the same task read
    /// again (Bob rewrites it whole) adds nothing new; a request still
    /// streaming is not read; one with no counters is none.
    #[test]
    fn bobs_requests_read_exactly_and_once() {
        let after = INCLUSIVE_SINCE_MS + 86_400_000;
        let info = |protocol: &str, tokens_in: u64, writes: u64, reads: u64, out: u64| {
            json!({"apiProtocol": protocol, "tokensIn": tokens_in, "tokensOut": out, "cacheWrites": writes,
                "cacheReads": reads, "cost": 0.0125})
        };
        let messages = json!([
            {"ts": after, "type": "say", "say": "text", "text": "modernize this class"},
            started(after + 1, info("anthropic", 4312, 300, 4000, 50)),
            started(after + 2, info("openai", 5000, 40, 4000, 70)),
            started(after + 3, json!({"apiProtocol": "anthropic"})),
            started(after + 4, json!({"apiProtocol": "openai", "tokensIn": 0, "tokensOut": 0, "cacheWrites": 0,
                "cacheReads": 0, "cost": 0, "cancelReason": "streaming_failed"})),
        ]);
        let mut writes = read_task(Provider::Bob, "1764000000000", &messages);
        let s = Some;
        let key = |at: i64| format!("1764000000000\u{1f}{at}");
        let expected = [
            (key(after + 1), s(12), s(300), s(4000), s(50), None, s(4362)),
            (key(after + 2), s(960), s(40), s(4000), s(70), None, s(5070)),
        ];
        assert_eq!(rows(Provider::Bob, &writes), expected);
        assert!(writes.iter().all(|w| w.provider == Provider::Bob && w.own_figure == Some(0.0125)));
        assert!(writes.iter().all(|w| w.session_id.as_deref() == Some("1764000000000") && w.model.is_none()));
        writes.extend(read_task(Provider::Bob, "1764000000000", &messages));
        assert_eq!(rows(Provider::Bob, &writes), expected, "read again, the same responses");
    }

    /// A task written before Roo Code's change, or one whose counters show
    /// the older kind, is read with input without caches.
    #[test]
    fn an_older_writers_input_is_read_as_it_wrote_it() {
        let before = INCLUSIVE_SINCE_MS - 86_400_000;
        let info = |tokens_in: u64| {
            json!({"apiProtocol": "anthropic", "tokensIn": tokens_in, "tokensOut": 9, "cacheWrites": 100,
                "cacheReads": 2000, "cost": 0.01})
        };
        let writes = read_task(Provider::Bob, "t", &json!([started(before, info(5000)), started(before + 1, info(7))]));
        let inputs: Vec<_> = rows(Provider::Bob, &writes).into_iter().map(|r| r.1).collect();
        assert_eq!(inputs, [Some(5000), Some(7)]);
    }

    /// A document cut short, not UTF-8, empty, or an empty task holds
    /// nothing (read again when its write ends); an entry that is no
    /// request or has no time is passed over or refused and counted, and
    /// the rest is read; millions of tiny entries are no cost.
    #[test]
    fn broken_empty_and_hostile_tasks() {
        let good = json!([started(INCLUSIVE_SINCE_MS, json!({"tokensIn": 5, "tokensOut": 1, "cost": 0}))]).to_string();
        for broken in [&good[..good.len() - 2], "", "[", "{}"] {
            assert_eq!(read_task_bytes(Provider::Bob, "t", broken.as_bytes()), (vec![], 0), "{broken}");
        }
        assert!(read_task_bytes(Provider::Bob, "t", b"[\"\xff\xfe\"]").0.is_empty());
        assert!(read_task(Provider::Bob, "t", &json!([])).is_empty());
        let messages = json!([
            7, "text",
            {"ts": INCLUSIVE_SINCE_MS, "say": "api_req_started", "text": "not json"},
            {"say": "api_req_started", "text": json!({"tokensIn": 5, "tokensOut": 1, "cost": 0}).to_string()},
            started(INCLUSIVE_SINCE_MS + 1, json!({"tokensIn": 5, "tokensOut": 1, "cost": 0})),
        ]);
        let (writes, refused) = read_task_bytes(Provider::Bob, "t", messages.to_string().as_bytes());
        assert_eq!((writes.len(), refused), (1, 1));
        let junk = crate::ledger::agents::tests::tiny_items(1_000_000);
        let many = format!("{},{}]", &junk[..junk.len() - 1], &good[1..good.len() - 1]);
        assert_eq!(read_task_bytes(Provider::Bob, "t", many.as_bytes()).0.len(), 1);
    }

    /// Its tasks where Bob keeps them on Linux (its XDG config home) and
    /// macOS, under both names its application folder has had.
    #[test]
    fn its_tasks_where_bob_keeps_them() {
        let task = "User/globalStorage/ibm.bob-code/tasks";
        let dirs = Bob.record_dirs(&env_of(&[("HOME", "/h")]));
        assert_eq!(
            dirs,
            [
                PathBuf::from(format!("/h/.config/IBM Bob/{task}")),
                format!("/h/.config/Bob-IDE/{task}").into(),
                format!("/h/Library/Application Support/IBM Bob/{task}").into(),
                format!("/h/Library/Application Support/Bob-IDE/{task}").into(),
            ]
        );
        let dirs = Bob.record_dirs(&env_of(&[("HOME", "/h"), ("XDG_CONFIG_HOME", "/x")]));
        assert_eq!(dirs[..2], [PathBuf::from(format!("/x/IBM Bob/{task}")), format!("/x/Bob-IDE/{task}").into()]);
        assert!(Bob.record_dirs(&env_of(&[])).is_empty());
        assert!(Bob.is_record_file(Path::new("/t/1/ui_messages.json")));
        for no in ["/t/1/api_conversation_history.json", "/t/1/task_metadata.json", "/t/1/ui_messages.json.tmp"] {
            assert!(!Bob.is_record_file(Path::new(no)), "{no}");
        }
    }
}
