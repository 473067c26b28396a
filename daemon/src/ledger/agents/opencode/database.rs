//! OpenCode's database: table `message`, one row a message, its `data`
//! JSON; one assistant message is one provider response, with the provider
//! and model asked for, its times (ms) and `tokens` {input, output,
//! reasoning, cache {read, write}, total}. Rows are read by `time_updated`,
//! OpenCode's own change marker: each pass reads the rows updated since
//! the newest it read (that instant again included, and a row read again
//! adds nothing twice).
//!
//! OpenCode keeps no provider id, and a fork copies every earlier message
//! into the new session under new ids with the same times and tokens, with
//! nothing linking copy to source. A response's key is therefore what a
//! copy keeps: its provider, model, creation and completion times (to the
//! millisecond) and its five counters, so the copy is the same response.
//! A message created before its session was (`session.time_created`) is
//! such a copy: the fork's session, newer, holds it, and OpenCode's
//! session ids sort newest first, so only this mark keeps the response in
//! the session that made it.
//!
//! A message's `cost` is OpenCode's own figure of what the response cost
//! (from its model prices; 0 for a model it has no price for): carried as
//! the agent's cost, never as the provider's.
//!
//! A message's `data` is read for the fields a response has, and only
//! within [`MAX_DATA_BYTES`]: a longer one is passed over and named by its
//! length alone (SQLite never reads it into memory), as is one whose
//! fields read pass their bound.
//!
//! A fork of OpenCode's (MiMo Code) imports other agents' sessions
//! (Claude Code's, Codex's, OpenCode's) into its database with their
//! tokens, and lists what it wrote in a table `external_import`: those
//! messages are the other agents' responses, counted from their own
//! records, and are not read ([`Imported`]). OpenCode's own database has
//! no such table, and reads as it always did.

use bee_proto::ledger::{Provider, SkipReason};
use bee_proto::usage::Counters;
use rusqlite::types::ValueRef;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::path::Path;

use crate::ledger::agents::agent::WholeFileReader;
use crate::ledger::agents::lines::{
    Beside, Found, LastName, before_start, count, decode_state, encode_state, spelled, text, with_part, wrapped_agent,
};
use crate::ledger::agents::sparse::{self, keep};
use crate::ledger::agents::whole::{open_read_only, pass_over_value};
use crate::ledger::stored::evidence::{AgentState, Evidence};

/// Longest `data` read of one message; a longer one is no response's
/// (a response's `data` is its few fields: its parts are rows of their
/// own), and is passed over and named.
pub(crate) const MAX_DATA_BYTES: u64 = 1 << 20;

keep! {
    /// What [`response`] reads of a message (`error` by one field of
    /// its own, so that its presence is told without keeping it whole).
    MESSAGE = [
        "role", "providerID", "modelID", "time/created", "time/completed", "error/name", "cost",
        "tokens/input", "tokens/output", "tokens/reasoning", "tokens/total", "tokens/cache/write", "tokens/cache/read",
    ];
}

/// Why a message's `data` was not read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unread {
    /// Not JSON: no response.
    Malformed,
    /// Passed over for its bound: named.
    Passed(SkipReason),
}

/// The fields [`response`] reads of one message's `data`, when it is
/// JSON within [`MAX_DATA_BYTES`] and its fields within their bound.
pub(crate) fn parse_message(data: &[u8]) -> Result<Value, Unread> {
    if data.len() as u64 > MAX_DATA_BYTES {
        return Err(Unread::Passed(SkipReason::OversizedDocument));
    }
    match sparse::parse(data, &MESSAGE) {
        Ok(message) => Ok(message),
        Err(sparse::Refused::TooComplex) => Err(Unread::Passed(SkipReason::TooComplex)),
        Err(sparse::Refused::Malformed) => Err(Unread::Malformed),
    }
}

/// The reader of the `message` table of OpenCode's (or a fork's: Kilo)
/// database, its responses counted under the agent's name.
pub(crate) struct Messages(pub(crate) Provider);

/// What the reader keeps of the database where it stopped.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Resume {
    /// The newest `time_updated` read (ms).
    updated_ms: Option<i64>,
}

impl WholeFileReader for Messages {
    fn read(&self, path: &Path, state: &AgentState, out: &mut Vec<Evidence>) -> std::io::Result<(AgentState, u64)> {
        let mut resume: Resume = decode_state(state);
        read_messages(self.0, path, &mut resume, out).map_err(std::io::Error::other)?;
        Ok((encode_state(&resume), 0))
    }
}

fn read_messages(
    provider: Provider,
    path: &Path,
    resume: &mut Resume,
    out: &mut Vec<Evidence>,
) -> rusqlite::Result<()> {
    let connection = open_read_only(path)?;
    // When each session began, where the database keeps it (every version
    // observed does; a table without it marks no copies).
    let started = if session_has_start(&connection)? { "s.time_created" } else { "NULL" };
    let since = resume.updated_ms.unwrap_or(i64::MIN);
    let imported = Imported::of(&connection, since)?;
    // `data` selected by its length first: one over the bound is never
    // read into memory (see `whole::column_within`).
    let mut statement = connection.prepare(&format!(
        "SELECT m.session_id, m.time_updated, octet_length(m.data),
                CASE WHEN octet_length(m.data) <= ?2 THEN m.data END, s.directory, m.id, {started}
           FROM message m LEFT JOIN session s ON s.id = m.session_id
          WHERE m.time_updated >= ?1 ORDER BY m.time_updated"
    ))?;
    // 1 MiB: an SQLite integer whatever the platform.
    let mut rows = statement.query([since, MAX_DATA_BYTES as i64])?;
    let (mut sessions, mut models) = (LastName::default(), LastName::default());
    let mut found = Found::new(provider, &mut sessions, &mut models, out);
    let mut named = HashSet::new();
    while let Some(row) = rows.next()? {
        let (Ok(session), Ok(updated)) = (row.get_ref(0)?.as_str(), row.get_ref(1)?.as_i64()) else { continue };
        resume.updated_ms = resume.updated_ms.max(Some(updated));
        let length = row.get_ref(2)?.as_i64().ok().and_then(|length| u64::try_from(length).ok());
        let data = match (row.get_ref(3)?, length) {
            (ValueRef::Text(data), _) => Ok(data),
            // Over the bound: not selected, only its length.
            (ValueRef::Null, Some(length)) if length > MAX_DATA_BYTES => Err(length),
            _ => continue,
        };
        let id = row.get_ref(5)?.as_str().unwrap_or("");
        let message = data
            .map_err(|length| (Unread::Passed(SkipReason::OversizedDocument), length))
            .and_then(|data| parse_message(data).map_err(|unread| (unread, data.len() as u64)));
        if let Ok(message) = &message
            && imported.holds(session, id, message.pointer("/time/created").and_then(Value::as_i64))
        {
            continue;
        }
        if named.insert(session.to_owned()) {
            found.session(session, row.get_ref(4)?.as_str().ok());
        }
        match message {
            Ok(message) => response(&message, session, row.get_ref(6)?.as_i64().ok(), &mut found),
            Err((Unread::Passed(reason), length)) => {
                pass_over_value(reason, length, path, &format_args!("message {id}"));
            }
            Err((Unread::Malformed, _)) => {}
        }
    }
    Ok(())
}

/// Longest list of message ids of one import read (a session's
/// thousands of ids are some kilobytes); a longer one is taken as a list
/// that cannot be read.
const MAX_IMPORTED_IDS_BYTES: i64 = 16 << 20;

/// What imports of other agents' sessions wrote into the database, as its
/// `external_import` table lists them (MiMo Code's: a row a session
/// imported, with `message_ids` (JSON) the messages it wrote, and
/// `time_imported`): those messages are not read. An import whose list is
/// missing (one made before the list was kept, which wrote the session
/// whole) or cannot be read holds every message of its session created
/// when it was made or before; one with no time either, the whole session.
#[derive(Debug, Default)]
struct Imported {
    messages: HashSet<String>,
    /// Sessions imported whole, up to when (ms).
    sessions: HashMap<String, i64>,
}

impl Imported {
    /// The imports of the sessions that have messages updated since
    /// `since` (ms): those a pass reads.
    fn of(connection: &rusqlite::Connection, since: i64) -> rusqlite::Result<Imported> {
        let mut imported = Imported::default();
        let mut columns = connection.prepare("SELECT name FROM pragma_table_info('external_import')")?;
        let columns: Vec<String> = columns.query_map([], |row| row.get(0))?.collect::<Result<_, _>>()?;
        let has = |name: &str| columns.iter().any(|column| column == name);
        if !has("session_id") {
            return Ok(imported);
        }
        // The list selected by its length first, as `data` is; without the
        // column, NULL (spelled with the bound, which the query binds).
        let ids = if has("message_ids") {
            "CASE WHEN octet_length(message_ids) <= ?2 THEN message_ids END"
        } else {
            "NULLIF(?2, ?2)"
        };
        let until = if has("time_imported") { "time_imported" } else { "NULL" };
        let mut statement = connection.prepare(&format!(
            "SELECT session_id, {ids}, {until} FROM external_import
              WHERE session_id IN (SELECT session_id FROM message WHERE time_updated >= ?1)"
        ))?;
        let mut rows = statement.query((since, MAX_IMPORTED_IDS_BYTES))?;
        while let Some(row) = rows.next()? {
            let Ok(session) = row.get_ref(0)?.as_str() else { continue };
            let listed = match row.get_ref(1)? {
                ValueRef::Text(ids) => serde_json::from_slice::<Vec<String>>(ids).ok(),
                _ => None,
            };
            match listed {
                Some(ids) => imported.messages.extend(ids),
                None => {
                    let until = row.get_ref(2)?.as_i64().unwrap_or(i64::MAX);
                    let whole = imported.sessions.entry(session.to_owned()).or_insert(until);
                    *whole = (*whole).max(until);
                }
            }
        }
        Ok(imported)
    }

    /// Whether the message `id` of `session`, created at `created_ms`,
    /// is one an import wrote.
    fn holds(&self, session: &str, id: &str, created_ms: Option<i64>) -> bool {
        self.messages.contains(id)
            || self.sessions.get(session).is_some_and(|&until| created_ms.is_none_or(|created| created <= until))
    }
}

/// Whether the `session` table has its `time_created` column.
fn session_has_start(connection: &rusqlite::Connection) -> rusqlite::Result<bool> {
    let mut columns = connection.prepare("SELECT 1 FROM pragma_table_info('session') WHERE name = 'time_created'")?;
    columns.exists([])
}

/// [`response`], with names of its own.
pub(super) fn read_message(session: &str, message: &Value, out: &mut Vec<Evidence>) {
    let (mut sessions, mut models) = (LastName::default(), LastName::default());
    response(message, session, None, &mut Found::new(Provider::OpenCode, &mut sessions, &mut models, out));
}

/// One assistant message of `session` (which began at `session_started`,
/// ms, where known), when it is a complete response: OpenCode writes
/// the row when the request starts and fills it in when it completes; a
/// failed request leaves zero tokens and an `error`.
fn response(message: &Value, session: &str, session_started: Option<i64>, found: &mut Found<'_>) {
    if text(message, "/role") != Some("assistant") {
        return;
    }
    let (Some(created), Some(completed)) = (
        message.pointer("/time/created").and_then(Value::as_i64),
        message.pointer("/time/completed").and_then(Value::as_i64),
    ) else {
        return;
    };
    let Some(tokens) = message.get("tokens") else { return };
    let counters = counters(tokens);
    let served = [
        counters.input_tokens,
        counters.cache_creation_input_tokens,
        counters.cache_read_input_tokens,
        counters.output_tokens,
    ];
    if message.get("error").is_some() && served.iter().all(|counter| counter.unwrap_or(0) == 0) {
        return;
    }
    if !bee_proto::time::spells_as_rfc3339(created) {
        return;
    }
    let provider = text(message, "/providerID").unwrap_or("");
    if wrapped_agent(provider).is_some() {
        return;
    }
    let model = text(message, "/modelID");
    // Kilo Code's newer extension imports its legacy tasks into Kilo's
    // database as messages of provider and model `legacy` with no tokens
    // (`packages/kilo-vscode/src/legacy-migration/sessions/lib/messages.ts`):
    // those responses are the `kilocode` agent's, read from its tasks.
    if provider == "legacy" && model == Some("legacy") && served.iter().all(|counter| counter.unwrap_or(0) == 0) {
        return;
    }
    let spelled = spelled(&[
        counters.input_tokens,
        counters.output_tokens,
        counters.reasoning_output_tokens,
        counters.cache_read_input_tokens,
        counters.cache_creation_input_tokens,
    ]);
    let key = format!("{provider}\u{1f}{}\u{1f}{created}\u{1f}{completed}\u{1f}{spelled}", model.unwrap_or(""));
    let beside = Beside {
        own_figure: message.get("cost").and_then(Value::as_f64),
        copied: before_start(created, session_started),
    };
    found.response_with(key, session, created, model, counters, beside);
}

/// OpenCode's `tokens`, in Anthropic's shape: input without either cache,
/// cache writes, cache reads; its output leaves out reasoning, which Bee
/// counts as part of output. The five add up to its `total`.
fn counters(tokens: &Value) -> Counters {
    let [input, output, reasoning, total] =
        ["/input", "/output", "/reasoning", "/total"].map(|at| count(tokens.pointer(at)));
    Counters {
        input_tokens: input,
        cache_creation_input_tokens: count(tokens.pointer("/cache/write")),
        cache_read_input_tokens: count(tokens.pointer("/cache/read")),
        output_tokens: with_part(output, reasoning),
        reasoning_output_tokens: reasoning,
        total_tokens: total,
        ..Counters::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::agents::tests::{database, noted, read_whole, tiny_items};

    /// OpenCode's tables (the columns the reader reads).
    const SCHEMA: &str = "CREATE TABLE session (id TEXT PRIMARY KEY, directory TEXT NOT NULL);
        CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, time_created INTEGER NOT NULL,
            time_updated INTEGER NOT NULL, data TEXT NOT NULL);
        INSERT INTO session VALUES ('ses_a', '/home/dev/app');";

    /// A response's `data`, with `@skip@` in a field not read and `@kept@`
    /// its input count.
    const MESSAGE: &str = r#"{"role":"assistant","providerID":"mock","modelID":"m","summary":@skip@,
        "time":{"created":1796440939675,"completed":@n@},"tokens":{"total":15,"input":@kept@,"output":5,
        "reasoning":0,"cache":{"write":0,"read":0}}}"#;

    fn message(n: i64, skip: &str, kept: &str) -> String {
        MESSAGE.replace("@skip@", skip).replace("@kept@", kept).replace("@n@", &(1_796_440_940_000 + n).to_string())
    }

    /// A fork, as OpenCode 1.18.33 and Kilo 7.7.7 write one: the parent's
    /// messages copied into a session begun later (`time_created`), with
    /// their times, tokens and (OpenCode) cost, or (Kilo) a cost of 0. The
    /// copies are marked, each message's own cost read; a session table
    /// without `time_created` marks none.
    #[test]
    fn a_forks_copies_are_marked_and_the_agents_own_costs_read() {
        const FORKED: &str = "CREATE TABLE session (id TEXT PRIMARY KEY, directory TEXT NOT NULL,
                time_created INTEGER NOT NULL);
            CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, time_created INTEGER NOT NULL,
                time_updated INTEGER NOT NULL, data TEXT NOT NULL);
            INSERT INTO session VALUES ('ses_b', '/home/dev/app', 1796549890000), ('ses_a', '/home/dev/app', 1796549946803);";
        let data = |created: i64, cost: &str| {
            format!(
                r#"{{"role":"assistant","providerID":"mock","modelID":"m","time":{{"created":{created},"completed":{}}},
                "cost":{cost},"tokens":{{"total":15,"input":10,"output":5,"reasoning":0,"cache":{{"write":0,"read":0}}}}}}"#,
                created + 500
            )
        };
        for schema in [FORKED, SCHEMA] {
            let (_dir, path, db) = database("opencode.db", schema);
            let rows = [
                ("m1", "ses_b", data(1_796_549_922_107, "0.0019776")),
                ("m2", "ses_a", data(1_796_549_922_107, "0")),
                ("m3", "ses_a", data(1_796_549_952_158, "0.0019248")),
                ("m4", "ses_a", data(1_796_549_952_159, "\"n/a\"")),
            ];
            if schema == SCHEMA {
                db.execute("INSERT INTO session VALUES ('ses_b', '/home/dev/app')", []).unwrap();
            }
            for (at, (id, session, data)) in rows.iter().enumerate() {
                db.execute("INSERT INTO message VALUES (?1, ?2, ?3, ?3, ?4)", (id, session, at as i64, data)).unwrap();
            }
            let (writes, _) = read_whole(Provider::OpenCode, &path, &AgentState::default());
            let read: Vec<(Option<&str>, bool, Option<f64>)> =
                writes.iter().map(|w| (w.session_id.as_deref(), w.copied, w.own_figure)).collect();
            let known = schema == FORKED;
            assert_eq!(
                read,
                [
                    (Some("ses_b"), false, Some(0.0019776)),
                    (Some("ses_a"), known, Some(0.0)),
                    (Some("ses_a"), false, Some(0.0019248)),
                    (Some("ses_a"), false, None),
                ]
            );
            assert_eq!(writes[0].key, writes[1].key, "the copy is the same response");
        }
    }

    /// Beside good messages, a message whose `data` passes its bound is
    /// named by its length (SQLite never reads it), and one whose read
    /// fields are millions of tiny items is named too; tiny items where
    /// nothing is read are passed over, and the message read.
    #[test]
    fn long_and_complex_data_is_named_and_the_rest_read() {
        let (_dir, path, db) = database("opencode.db", SCHEMA);
        let junk = tiny_items(400_000);
        let long = message(3, &format!("\"{}\"", "x".repeat(MAX_DATA_BYTES as usize)), "10");
        let complex = message(4, "0", &junk);
        let rows = [
            ("m1", message(1, "0", "10")),
            ("m2", message(2, &junk, "10")),
            ("m3", long.clone()),
            ("m4", complex.clone()),
            ("m5", message(5, "0", "\"ten\"")),
        ];
        for (at, (id, data)) in rows.iter().enumerate() {
            db.execute("INSERT INTO message VALUES (?1, 'ses_a', ?2, ?2, ?3)", (id, at as i64, data)).unwrap();
        }
        let _ = noted();
        let (writes, _) = read_whole(Provider::OpenCode, &path, &AgentState::default());
        assert_eq!(writes.len(), 3, "m1, m2 (its junk not read) and m5 (its input unknown)");
        assert_eq!(writes.iter().filter(|w| w.tokens.input_tokens == Some(10)).count(), 2);
        assert_eq!(
            noted(),
            [(0, long.len() as u64, SkipReason::OversizedDocument), (0, complex.len() as u64, SkipReason::TooComplex)]
        );
        assert_eq!(parse_message(long.as_bytes()), Err(Unread::Passed(SkipReason::OversizedDocument)));
        assert_eq!(parse_message(b"{\"role\": \"assistant\", \"tokens\": 5"), Err(Unread::Malformed));
    }
}
