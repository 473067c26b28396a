//! Kilo (the Kilo Code CLI): a fork of OpenCode that keeps OpenCode's
//! database under its own name (`$XDG_DATA_HOME/kilo/kilo.db`), read by
//! OpenCode's reader. `README.md` beside this file describes the format as
//! observed from the real CLI.

use bee_proto::ledger::Provider;
use std::path::{Path, PathBuf};

use crate::ledger::agents::agent::{About, Agent, Env, Records, Verified, WholeFileReader, xdg_data};
use crate::ledger::agents::opencode::database::Messages;

/// Kilo, as [`Agent`].
#[derive(Debug)]
pub struct Kilo;

impl Agent for Kilo {
    fn about(&self) -> &'static About {
        &About {
            provider: Provider::Kilo,
            title: "Kilo",
            verified: Verified::RealCli("7.7.7"),
            unrecorded_calls: Some("the title call of each new session"),
            // OpenCode's messages: reasoning, cache writes and its own `cost`;
            // a refused request is recorded nowhere.
            records: Records {
                time_spans: false,
                limit_notices: false,
                reasoning: true,
                cache_writes: true,
                own_cost: true,
            },
        }
    }

    /// The database `KILO_DB` names (a relative name under Kilo's data
    /// directory, as the CLI joins it; `:memory:` keeps nothing), else the
    /// `kilo/` directory of `XDG_DATA_HOME` (by default `~/.local/share`).
    fn record_dirs(&self, env: Env<'_>) -> Vec<PathBuf> {
        let data = xdg_data(env, "kilo");
        match env("KILO_DB").filter(|named| !named.is_empty()) {
            Some(named) if named == ":memory:" => Vec::new(),
            Some(named) if Path::new(&named).is_absolute() => vec![PathBuf::from(named)],
            Some(named) => data.map(|data| data.join(named)).into_iter().collect(),
            None => data.into_iter().collect(),
        }
    }

    /// `kilo.db`, or a channel's `kilo-<channel>.db`.
    fn is_record_file(&self, path: &Path) -> bool {
        let name = path.file_name().and_then(|name| name.to_str()).unwrap_or("");
        name == "kilo.db" || (name.starts_with("kilo-") && name.ends_with(".db"))
    }

    fn whole_file(&self) -> Option<&dyn WholeFileReader> {
        Some(&Messages(Provider::Kilo))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `KILO_DB` moves the database as the CLI moves it (Kilo 7.7.7's
    /// `KILO_DB`: absolute, relative to its data directory, or in memory).
    #[test]
    fn kilo_db_names_the_database() {
        let env = |named: Option<&'static str>| {
            move |name: &str| match name {
                "HOME" => Some(std::ffi::OsString::from("/h")),
                "KILO_DB" => named.map(std::ffi::OsString::from),
                _ => None,
            }
        };
        let dirs = |named| Kilo.record_dirs(&env(named));
        assert_eq!(dirs(None), [PathBuf::from("/h/.local/share/kilo")]);
        assert_eq!(dirs(Some("/d/mine.db")), [PathBuf::from("/d/mine.db")]);
        assert_eq!(dirs(Some("work.db")), [PathBuf::from("/h/.local/share/kilo/work.db")]);
        assert!(dirs(Some(":memory:")).is_empty(), "kept in memory: nothing on disk");
        assert_eq!(dirs(Some("")), [PathBuf::from("/h/.local/share/kilo")]);
    }
    use crate::ledger::agents::tests::{Row, read_whole, rows};
    use rusqlite::Connection;

    /// OpenCode's tables as Kilo's source creates them (the columns the
    /// reader reads), with `rows` of (id, session, updated ms, data).
    fn database(path: &Path, rows: &[(&str, &str, i64, String)]) {
        let db = Connection::open(path).unwrap();
        db.execute_batch(
            "CREATE TABLE IF NOT EXISTS session (id TEXT PRIMARY KEY, directory TEXT NOT NULL);
             CREATE TABLE IF NOT EXISTS message (id TEXT PRIMARY KEY, session_id TEXT NOT NULL,
                time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL);
             INSERT OR IGNORE INTO session VALUES ('ses_a', '/home/dev/app'), ('ses_fork', '/home/dev/app');",
        )
        .unwrap();
        for (id, session, updated, data) in rows {
            db.execute("INSERT OR REPLACE INTO message VALUES (?1, ?2, ?3, ?3, ?4)", (id, session, updated, data))
                .unwrap();
        }
    }

    fn message(created: i64, input: u64, output: u64, reasoning: u64, read: u64, write: u64) -> String {
        serde_json::json!({"role": "assistant", "providerID": "kilo", "modelID": "anthropic/claude-sonnet-4.5",
            "time": {"created": created, "completed": created + 900},
            "tokens": {"total": input + output + reasoning + read + write, "input": input, "output": output,
                "reasoning": reasoning, "cache": {"read": read, "write": write}}})
        .to_string()
    }

    /// A session, its continuation, a fork's copies and a message rewritten
    /// in place: each response once, in Bee's columns; a row that is no
    /// JSON is no response; a second pass reads only rows updated since.
    #[test]
    fn each_response_once_through_continue_fork_and_rewrite() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("kilo.db");
        let first = message(1_796_119_200_000, 100, 40, 10, 2000, 300);
        database(
            &path,
            &[
                ("msg_1", "ses_a", 1_796_119_201_000, first.clone()),
                ("msg_2", "ses_a", 1_796_119_202_000, "{\"role\": \"assistant\", \"tokens\": ".into()),
            ],
        );
        let (writes, state) = read_whole(Provider::Kilo, &path, &Default::default());
        let s = Some;
        let columns = |found: &[Row]| -> Vec<_> { found.iter().map(|r| (r.1, r.2, r.3, r.4, r.5, r.6)).collect() };
        assert_eq!(columns(&rows(Provider::Kilo, &writes)), [(s(100), s(300), s(2000), s(50), s(10), s(2450))]);
        let second = message(1_796_119_300_000, 7, 5, 0, 2400, 0);
        database(
            &path,
            &[
                ("msg_3", "ses_a", 1_796_119_301_000, second.clone()),
                ("msg_1", "ses_a", 1_796_119_302_000, first.clone()),
                ("msg_fork_1", "ses_fork", 1_796_119_303_000, first),
                ("msg_fork_3", "ses_fork", 1_796_119_303_000, second),
            ],
        );
        let (again, _) = read_whole(Provider::Kilo, &path, &state);
        let mut all = writes.clone();
        all.extend(again);
        let found = rows(Provider::Kilo, &all);
        assert_eq!(found.len(), 2, "{found:?}");
        let mut found = columns(&found);
        found.sort();
        assert_eq!(
            found,
            [(s(7), s(0), s(2400), s(5), s(0), s(2412)), (s(100), s(300), s(2000), s(50), s(10), s(2450))]
        );
    }
}
