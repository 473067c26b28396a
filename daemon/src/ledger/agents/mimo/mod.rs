//! MiMo Code (Xiaomi's fork of OpenCode): its SQLite database
//! (`$XDG_DATA_HOME/mimocode/mimocode.db`, a release channel's
//! `mimocode-<channel>.db`), OpenCode's schema, read by OpenCode's reader
//! ([`Messages`]) under MiMo Code's own name. What differs from OpenCode:
//! where the database is, and sessions MiMo Code imports from other agents
//! (Claude Code, Codex, OpenCode) into it with their tokens, listed in its
//! `external_import` table, which OpenCode's reader leaves to those agents.
//! `README.md` beside this file describes the format and where it was read
//! from.

use bee_proto::ledger::Provider;
use std::path::{Path, PathBuf};

use crate::ledger::agents::agent::{About, Agent, Env, Records, Verified, WholeFileReader, xdg_data};
use crate::ledger::agents::opencode::database::Messages;

/// MiMo Code, as [`Agent`].
#[derive(Debug)]
pub struct MiMo;

/// Its data directory, as MiMo Code finds it: `data/` of `MIMOCODE_HOME`
/// where that is absolute, else `mimocode/` of `XDG_DATA_HOME` (by default
/// `~/.local/share`, on macOS too).
fn data_dir(env: Env<'_>) -> Option<PathBuf> {
    env("MIMOCODE_HOME")
        .map(PathBuf::from)
        .filter(|home| home.is_absolute())
        .map(|home| home.join("data"))
        .or_else(|| xdg_data(env, "mimocode"))
}

impl Agent for MiMo {
    fn about(&self) -> &'static About {
        &About {
            provider: Provider::MiMo,
            title: "MiMo Code",
            verified: Verified::FormatFromSource,
            unrecorded_calls: Some("the title calls of each session"),
            // OpenCode's messages: reasoning, cache writes and its own `cost`;
            // a refused request is recorded nowhere, and Bee times no turn.
            records: Records {
                time_spans: false,
                limit_notices: false,
                reasoning: true,
                cache_writes: true,
                own_cost: true,
            },
        }
    }

    /// The database `MIMOCODE_DB` names (absolute, else under its data
    /// directory; `:memory:` is none), else its data directory, where
    /// every channel's database is.
    fn record_dirs(&self, env: Env<'_>) -> Vec<PathBuf> {
        match env("MIMOCODE_DB") {
            Some(database) if database == ":memory:" => Vec::new(),
            Some(database) if Path::new(&database).is_absolute() => vec![PathBuf::from(database)],
            Some(database) => data_dir(env).map(|data| data.join(database)).into_iter().collect(),
            None => data_dir(env).into_iter().collect(),
        }
    }

    /// `mimocode.db`, or a channel's `mimocode-<channel>.db` (never their
    /// `-wal` and `-shm` files).
    fn is_record_file(&self, path: &Path) -> bool {
        let name = path.file_name().and_then(|name| name.to_str()).unwrap_or("");
        name == "mimocode.db" || (name.starts_with("mimocode-") && name.ends_with(".db"))
    }

    fn whole_file(&self) -> Option<&dyn WholeFileReader> {
        Some(&Messages(Provider::MiMo))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::agents::tests::env_of;
    use crate::ledger::agents::tests::{Row, read_whole, rows};
    use crate::ledger::stored::evidence::AgentState;
    use rusqlite::Connection;
    use serde_json::json;

    /// MiMo Code's tables as its source creates them (the columns the
    /// reader reads, and those it leaves).
    const SCHEMA: &str = "CREATE TABLE session (id TEXT PRIMARY KEY, project_id TEXT NOT NULL, directory TEXT NOT NULL,
            title TEXT NOT NULL, version TEXT NOT NULL, time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL);
        CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, agent_id TEXT NOT NULL DEFAULT 'main',
            time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL);
        CREATE TABLE external_import (source TEXT NOT NULL, source_key TEXT NOT NULL, session_id TEXT NOT NULL,
            source_path TEXT NOT NULL, source_mtime INTEGER NOT NULL, time_imported INTEGER NOT NULL, message_ids TEXT,
            PRIMARY KEY (source, source_key));";

    const T: i64 = 1_796_700_000_000;

    /// An assistant message's `data`, as MiMo Code writes it (no id: it is
    /// the row's).
    fn assistant(
        provider: &str,
        created: i64,
        input: u64,
        output: u64,
        reasoning: u64,
        read: u64,
        write: u64,
    ) -> String {
        json!({"role": "assistant", "parentID": "msg_u", "modelID": "mimo-v2.5-pro", "providerID": provider,
            "mode": "build", "agent": "build", "path": {"cwd": "/home/dev/app", "root": "/home/dev/app"},
            "cost": 0.05, "time": {"created": created, "completed": created + 1234}, "finish": "stop",
            "tokens": {"total": input + output + reasoning + read + write, "input": input, "output": output,
                "reasoning": reasoning, "cache": {"read": read, "write": write}}})
        .to_string()
    }

    fn database(path: &Path, sessions: &[(&str, i64)], messages: &[(&str, &str, i64, String)]) -> Connection {
        let db = Connection::open(path).unwrap();
        db.execute_batch(SCHEMA).unwrap();
        for (id, created) in sessions {
            db.execute("INSERT INTO session VALUES (?1, 'p', '/home/dev/app', 't', '0.4.2', ?2, ?2)", (id, created))
                .unwrap();
        }
        for (id, session, updated, data) in messages {
            db.execute("INSERT INTO message VALUES (?1, ?2, 'main', ?3, ?3, ?4)", (id, session, updated, data))
                .unwrap();
        }
        db
    }

    /// Bee's columns of each response: input, cache writes, cache reads,
    /// output, reasoning, total.
    fn columns(found: &[Row]) -> Vec<[Option<u64>; 6]> {
        found.iter().map(|r| [r.1, r.2, r.3, r.4, r.5, r.6]).collect()
    }

    /// A response read exactly (every counter, reasoning inside output, its
    /// own cost); a fork's copy (a new row in a session begun later) and
    /// the same message written into a second channel's database are the
    /// same response; a row that is no JSON is none, the rest read; a
    /// second pass reads only rows updated since.
    #[test]
    fn each_response_once_through_fork_and_channel_switch() {
        let dir = tempfile::tempdir().unwrap();
        let first = assistant("mimo", T, 1000, 500, 100, 200, 50);
        let path = dir.path().join("mimocode.db");
        let db = database(
            &path,
            &[("ses_b", T - 60_000)],
            &[("msg_1", "ses_b", T + 2000, first.clone()), ("msg_2", "ses_b", T + 3000, "{\"role\": \"assis".into())],
        );
        let (writes, state) = read_whole(Provider::MiMo, &path, &AgentState::default());
        let s = Some;
        assert_eq!(columns(&rows(Provider::MiMo, &writes)), [[s(1000), s(50), s(200), s(600), s(100), s(1850)]]);
        assert_eq!((writes[0].own_figure, writes[0].model.as_deref()), (Some(0.05), Some("mimo-v2.5-pro")));
        assert_eq!((writes[0].session_id.as_deref(), writes[0].at_ms, writes[0].copied), (Some("ses_b"), T, false));
        // A fork: the history copied into a session begun later, and its own
        // response.
        db.execute("INSERT INTO session VALUES ('ses_a', 'p', '/home/dev/app', 't', '0.4.2', ?1, ?1)", [T + 10_000])
            .unwrap();
        let second = assistant("mimo", T + 20_000, 7, 5, 0, 2400, 0);
        for (id, updated, data) in [("msg_f1", T + 21_000, &first), ("msg_f2", T + 21_001, &second)] {
            db.execute("INSERT INTO message VALUES (?1, 'ses_a', 'main', ?2, ?2, ?3)", (id, updated, data)).unwrap();
        }
        let (again, _) = read_whole(Provider::MiMo, &path, &state);
        assert_eq!(again.len(), 2, "only the rows updated since");
        assert!(again[0].copied && !again[1].copied);
        // The same message written into a channel's database too.
        let channel = dir.path().join("mimocode-dev.db");
        database(&channel, &[("ses_b", T - 60_000)], &[("msg_1", "ses_b", T + 2000, first)]);
        let (switched, _) = read_whole(Provider::MiMo, &channel, &AgentState::default());
        let mut all = writes.clone();
        all.extend(again);
        all.extend(switched);
        let found = rows(Provider::MiMo, &all);
        assert_eq!(
            columns(&found),
            [[s(1000), s(50), s(200), s(600), s(100), s(1850)], [s(7), s(0), s(2400), s(5), s(0), s(2412)]],
            "{found:?}"
        );
    }

    /// Sessions MiMo Code imported from Claude Code and OpenCode (their
    /// messages listed in `external_import`, or, for an import made before
    /// the list was kept, every message up to the import) are those
    /// agents' responses, never MiMo Code's; a message of its own written
    /// on in an imported session is read.
    #[test]
    fn other_agents_imported_sessions_are_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mimocode.db");
        let claude = assistant("anthropic", T, 3, 9, 0, 18_000, 300);
        let listed = assistant("anthropic", T + 1000, 4, 8, 0, 18_300, 0);
        let own = |created: i64| assistant("mimo", created, 11, 22, 0, 0, 0);
        let db = database(
            &path,
            &[("ses_cc", T), ("ses_legacy", T), ("ses_oc", T)],
            &[
                ("msg_cc1", "ses_cc", T + 80_000, listed),
                ("msg_cc2", "ses_cc", T + 95_000, own(T + 90_000)),
                ("msg_l1", "ses_legacy", T + 80_001, claude),
                ("msg_l2", "ses_legacy", T + 96_000, own(T + 91_000)),
                ("msg_o1", "ses_oc", T + 80_002, assistant("openai", T + 2000, 50, 10, 5, 0, 0)),
            ],
        );
        db.execute_batch(&format!(
            "INSERT INTO external_import VALUES ('cc', 'u1', 'ses_cc', '/h/.claude/projects/p/u1.jsonl', 1, {}, '[\"msg_cc1\"]');
             INSERT INTO external_import VALUES ('cc', 'u2', 'ses_legacy', '/h/.claude/projects/p/u2.jsonl', 1, {}, NULL);
             INSERT INTO external_import VALUES ('opencode', 'ses_oc', 'ses_oc', '/h/.local/share/opencode/opencode.db', 1, {}, 'not json');",
            T + 80_000,
            T + 80_000,
            T + 80_000,
        ))
        .unwrap();
        let (writes, _) = read_whole(Provider::MiMo, &path, &AgentState::default());
        let read: Vec<_> = writes.iter().map(|w| (w.session_id.as_deref(), w.tokens.input_tokens)).collect();
        assert_eq!(read, [(Some("ses_cc"), Some(11)), (Some("ses_legacy"), Some(11))]);
    }

    /// A database with no rows, one without MiMo's import table (an older
    /// one), and a file that is no database: nothing read, no panic.
    #[test]
    fn empty_old_and_broken_databases() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mimocode.db");
        database(&path, &[], &[]);
        assert!(read_whole(Provider::MiMo, &path, &AgentState::default()).0.is_empty());
        let old = dir.path().join("mimocode-old.db");
        let db = Connection::open(&old).unwrap();
        db.execute_batch(
            "CREATE TABLE session (id TEXT PRIMARY KEY, directory TEXT NOT NULL);
             CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, time_created INTEGER NOT NULL,
                time_updated INTEGER NOT NULL, data TEXT NOT NULL);",
        )
        .unwrap();
        db.execute("INSERT INTO message VALUES ('m', 's', 1, 1, ?1)", [assistant("mimo", T, 1, 2, 0, 0, 0)]).unwrap();
        assert_eq!(read_whole(Provider::MiMo, &old, &AgentState::default()).0.len(), 1);
        let broken = dir.path().join("mimocode-broken.db");
        std::fs::write(&broken, b"SQLite format 3\0\xff\xfe not a database").unwrap();
        let mut evidence = Vec::new();
        let read = MiMo.whole_file().unwrap().read(&broken, &AgentState::default(), &mut evidence);
        assert!(read.is_err() && evidence.is_empty());
    }

    /// Where MiMo Code keeps its database, as it finds it.
    #[test]
    fn its_database_where_mimo_code_keeps_it() {
        let data = PathBuf::from("/h/.local/share/mimocode");
        assert_eq!(MiMo.record_dirs(&env_of(&[("HOME", "/h")])), [PathBuf::from("/h/.local/share/mimocode")]);
        assert_eq!(
            MiMo.record_dirs(&env_of(&[("HOME", "/h"), ("XDG_DATA_HOME", "/x")])),
            [PathBuf::from("/x/mimocode")]
        );
        assert_eq!(MiMo.record_dirs(&env_of(&[("HOME", "/h"), ("MIMOCODE_HOME", "/m")])), [PathBuf::from("/m/data")]);
        assert_eq!(
            MiMo.record_dirs(&env_of(&[("HOME", "/h"), ("MIMOCODE_HOME", "rel")])),
            [PathBuf::from("/h/.local/share/mimocode")]
        );
        assert_eq!(
            MiMo.record_dirs(&env_of(&[("HOME", "/h"), ("MIMOCODE_DB", "/d/my.db")])),
            [PathBuf::from("/d/my.db")]
        );
        assert_eq!(MiMo.record_dirs(&env_of(&[("HOME", "/h"), ("MIMOCODE_DB", "other.db")])), [data.join("other.db")]);
        assert!(MiMo.record_dirs(&env_of(&[("HOME", "/h"), ("MIMOCODE_DB", ":memory:")])).is_empty());
        assert!(MiMo.record_dirs(&env_of(&[])).is_empty());
        for yes in ["mimocode.db", "mimocode-dev.db", "mimocode-local.db"] {
            assert!(MiMo.is_record_file(Path::new(yes)), "{yes}");
        }
        for no in ["mimocode.db-wal", "mimocode.db-shm", "opencode.db", "mimocode", "kilo.db"] {
            assert!(!MiMo.is_record_file(Path::new(no)), "{no}");
        }
    }
}
