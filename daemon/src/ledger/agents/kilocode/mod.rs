//! Kilo Code's legacy editor extension (up to 5.x): its tasks
//! (`<editor>/User/globalStorage/kilocode.kilo-code/tasks/<id>/
//! ui_messages.json`), Roo Code's format as Kilo Code forked it, read by
//! Cline's reader of it ([`ui_messages`]). Its newer extension (7.x, built
//! on Kilo's CLI) keeps no store of its own: it runs the CLI it bundles
//! (`kilo serve`), which writes the CLI's own database
//! (`$XDG_DATA_HOME/kilo/kilo.db`, shared with the CLI), so its responses
//! are the `kilo` agent's (`../kilo/`) and are not read here a second
//! time. `README.md` beside this file describes both, as read from their
//! source.

use bee_proto::ledger::Provider;

use crate::ledger::agents::agent::{About, Records, Verified};
use crate::ledger::agents::cline::TaskExtension;
use crate::ledger::agents::cline::ui_messages::{Tasks, Writer};

/// When Kilo Code 4.119.0 was released (2025-11-12T18:03:51Z), the first
/// with Roo Code's change that made `tokensIn` count both caches.
const INCLUSIVE_SINCE_MS: i64 = 1_762_970_631_000;

/// Kilo Code's legacy extension, as [`Agent`].
pub static KILO_CODE: TaskExtension = TaskExtension {
    about: &About {
        provider: Provider::KiloCode,
        title: "Kilo Code (legacy extension)",
        verified: Verified::FormatFromSource,
        unrecorded_calls: Some("context condensing (its cost is kept, not its tokens) and prompt enhancement"),
        // Roo Code's: cache writes and its own cost; no reasoning count,
        // no model, no limit notice, no turn Bee times.
        records: Records {
            time_spans: false,
            limit_notices: false,
            reasoning: false,
            cache_writes: true,
            own_cost: true,
        },
    },
    extension: "kilocode.kilo-code",
    tasks: Tasks { provider: Provider::KiloCode, writer: Writer::RooFamily { inclusive_since: INCLUSIVE_SINCE_MS } },
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::agents::agent::Agent;
    use crate::ledger::agents::cline::ui_messages::tests::{read_task, started};
    use crate::ledger::agents::tests::rows;
    use serde_json::json;
    use std::ffi::OsString;
    use std::path::{Path, PathBuf};

    /// Kilo Code's requests, in Roo Code's shape with its own fields: a
    /// request whose usage never came (`usageMissing`, zero counters) is
    /// none; its release date, not Roo Code's, tells its writers apart.
    #[test]
    fn kilo_code_requests_and_missing_usage() {
        // Between Roo Code's release and Kilo Code's: still the old kind.
        let at = INCLUSIVE_SINCE_MS - 86_400_000;
        let messages = json!([
            started(
                at + 1,
                json!({"apiProtocol": "anthropic", "tokensIn": 5000, "tokensOut": 60, "cacheWrites": 0,
                "cacheReads": 4000, "cost": 0.02, "usageMissing": false, "inferenceProvider": "Anthropic"})
            ),
            started(
                at + 2,
                json!({"apiProtocol": "openai", "tokensIn": 0, "tokensOut": 0, "cacheWrites": 0,
                "cacheReads": 0, "cost": 0, "usageMissing": true})
            ),
            started(
                INCLUSIVE_SINCE_MS + 1,
                json!({"apiProtocol": "anthropic", "tokensIn": 5000, "tokensOut": 60,
                "cacheWrites": 0, "cacheReads": 4000, "cost": 0.02})
            ),
        ]);
        let writes = read_task(Provider::KiloCode, "1762000000000", &messages);
        let s = Some;
        let found: Vec<_> = rows(Provider::KiloCode, &writes).into_iter().map(|r| (r.1, r.2, r.3, r.4, r.6)).collect();
        assert_eq!(found, [(s(5000), s(0), s(4000), s(60), s(9060)), (s(1000), s(0), s(4000), s(60), s(5060))]);
        assert!(writes.iter().all(|w| w.own_figure == Some(0.02)));
    }

    /// The newer extension's responses are in the database it shares
    /// with Kilo's CLI, which the `kilo` agent reads: this agent looks in
    /// none of the directories that hold it and claims no file of it, so
    /// each of its responses is read once, as Kilo's.
    #[test]
    fn the_newer_extensions_database_is_read_once_as_kilos() {
        use crate::ledger::agents::kilo::Kilo;
        use crate::ledger::agents::tests::env_of;
        for env in [env_of(&[("HOME", "/h")]), env_of(&[("HOME", "/h"), ("XDG_DATA_HOME", "/x")])] {
            let shared = Kilo.record_dirs(&env);
            assert_eq!(shared.len(), 1);
            assert!(
                KILO_CODE
                    .record_dirs(&env)
                    .iter()
                    .all(|dir| !dir.starts_with(&shared[0]) && !shared[0].starts_with(dir)),
                "{shared:?}"
            );
            let database = shared[0].join("kilo.db");
            assert!(Kilo.is_record_file(&database) && !KILO_CODE.is_record_file(&database));
        }
        // Nor a database beside its tasks in an editor's global storage,
        // where the extension keeps none (a copy there is nobody's).
        let storage = Path::new("/h/.config/Code/User/globalStorage/kilocode.kilo-code");
        assert!(!KILO_CODE.is_record_file(&storage.join("kilo.db")));
        let dirs = KILO_CODE.record_dirs(&|name: &str| (name == "HOME").then(|| OsString::from("/h")));
        assert!(dirs.iter().all(|dir| dir.ends_with("tasks")));
    }

    #[test]
    fn its_tasks_under_every_editor() {
        let env = |name: &str| (name == "HOME").then(|| OsString::from("/h"));
        let dirs = KILO_CODE.record_dirs(&env);
        assert_eq!(dirs[0], PathBuf::from("/h/.config/Code/User/globalStorage/kilocode.kilo-code/tasks"));
        assert!(KILO_CODE.is_record_file(Path::new("/t/1/ui_messages.json")));
        assert!(!KILO_CODE.is_record_file(Path::new("/h/.local/share/kilo/kilo.db")));
    }
}
