//! The Copilot Chat extension's span store (`agent-traces.db`): table
//! `spans`, one row a finished OpenTelemetry span, the GenAI attributes
//! Bee reads copied into columns of their own (`operation_name`,
//! `input_tokens`, `output_tokens`, `cached_tokens`, `reasoning_tokens`,
//! `request_model`, `response_model`, `chat_session_id`, …) and every
//! attribute again in `span_attributes`. One provider response is one
//! `chat` span: the `invoke_agent` span above it sums its turns, so only
//! `chat` rows are read and nothing counts twice.
//!
//! A call the extension made for another agent whose records Bee reads
//! (Claude Code, Codex, through its proxies) is that agent's, counted from
//! its own records, and not read here.
//!
//! A span is keyed by its `span_id` (the table's primary key, written again
//! with `INSERT OR REPLACE`), dated at its end, and counted in its chat
//! session: `chat_session_id`, else the `copilot_chat.session_id`
//! attribute, else the span's `conversation_id` (the extension names each
//! request there), else its trace.

use bee_proto::usage::Counters;
use std::path::Path;

use crate::ledger::agents::lines::Found;
use crate::ledger::agents::whole::{column_count, column_text, column_time_ms};

/// Every chat span's row, the columns [`read`] reads in order.
pub(crate) const QUERY: &str = "SELECT s.span_id, s.end_time_ms, s.chat_session_id,
        (SELECT a.value FROM span_attributes a WHERE a.span_id = s.span_id AND a.key = 'copilot_chat.session_id'),
        s.conversation_id, s.trace_id, s.response_model, s.request_model,
        s.input_tokens, s.output_tokens, s.cached_tokens, s.reasoning_tokens
   FROM spans s WHERE s.operation_name = 'chat'
    -- The extension's proxies for agents whose own records Bee reads (a
    -- chat span's `agent_name`): Claude Code's calls through Copilot
    -- (`claudeLanguageModelServer.ts`) are in its transcripts, the Codex
    -- agent's (`oaiLanguageModelServer.ts`) in its rollouts.
    AND COALESCE(s.agent_name, '') NOT IN ('Claude Copilot Proxy', 'oaiLMServer')";

/// Reads one chat span's row; `false` when it is refused (no id, no time,
/// no session).
pub(crate) fn read(_path: &Path, row: &rusqlite::Row<'_>, found: &mut Found<'_>) -> bool {
    // The extension writes usage only on a successful response (input and
    // output always then; the cached and reasoning counts only when they
    // are not 0, so a missing one is unknown). A span with none (failed,
    // cancelled) is no response.
    let counters = Counters {
        input_tokens: column_count(row, 8),
        output_tokens: column_count(row, 9),
        cached_input_tokens: column_count(row, 10),
        reasoning_output_tokens: column_count(row, 11),
        ..Counters::default()
    };
    if counters.counts_nothing() {
        return true;
    }
    let Some(span) = column_text(row, 0) else { return false };
    let Some(at_ms) = column_time_ms(row, 1) else { return false };
    let Some(session) = [2, 3, 4, 5].into_iter().find_map(|at| column_text(row, at)) else { return false };
    let model = column_text(row, 6).or_else(|| column_text(row, 7));
    found.session(session, None);
    found.response(span.to_owned(), session, at_ms, model, counters);
    true
}

#[cfg(test)]
mod tests {
    use crate::ledger::agents::tests::{database, responses_of};
    use crate::ledger::stored::responses::ResponseWrite;
    use bee_proto::ledger::Provider;

    /// The responses the store at `path` holds, and the rows it refused.
    fn read(path: &std::path::Path) -> (Vec<ResponseWrite>, u64) {
        let mut evidence = Vec::new();
        let reader = crate::ledger::agents::agent(Provider::CopilotVsCode).whole_file().unwrap();
        let (_, refused) = reader.read(path, &Default::default(), &mut evidence).unwrap();
        (responses_of(evidence), refused)
    }

    /// The store's tables as the extension creates them (schema version 1).
    pub(crate) const SCHEMA: &str = "CREATE TABLE schema_version (version INTEGER PRIMARY KEY);
        CREATE TABLE spans (
            span_id TEXT PRIMARY KEY, trace_id TEXT NOT NULL, parent_span_id TEXT,
            name TEXT NOT NULL, start_time_ms INTEGER NOT NULL, end_time_ms INTEGER NOT NULL,
            status_code INTEGER NOT NULL DEFAULT 0, status_message TEXT,
            operation_name TEXT, provider_name TEXT, agent_name TEXT, conversation_id TEXT,
            request_model TEXT, response_model TEXT,
            input_tokens INTEGER, output_tokens INTEGER, cached_tokens INTEGER, reasoning_tokens INTEGER,
            tool_name TEXT, tool_call_id TEXT, tool_type TEXT,
            chat_session_id TEXT, turn_index INTEGER, ttft_ms REAL);
        CREATE TABLE span_attributes (
            span_id TEXT NOT NULL REFERENCES spans(span_id) ON DELETE CASCADE,
            key TEXT NOT NULL, value TEXT, PRIMARY KEY (span_id, key));";

    const INSERT: &str = "INSERT OR REPLACE INTO spans (span_id, trace_id, parent_span_id, name, start_time_ms,
        end_time_ms, status_code, operation_name, conversation_id, request_model, response_model, input_tokens,
        output_tokens, cached_tokens, reasoning_tokens, chat_session_id)
        VALUES (?1, 't1', ?2, ?3, ?4, ?5, 0, ?6, ?7, 'gpt-5.1', ?8, ?9, ?10, ?11, ?12, ?13)";

    type Span<'a> = (&'a str, Option<&'a str>, &'a str, i64, &'a str, &'a str, Option<&'a str>);

    fn span(db: &rusqlite::Connection, s: Span<'_>, tokens: [Option<i64>; 4], session: Option<&str>) {
        let (id, parent, name, end, operation, conversation, model) = s;
        db.execute(
            INSERT,
            rusqlite::params![
                id,
                parent,
                name,
                end - 900,
                end,
                operation,
                conversation,
                model,
                tokens[0],
                tokens[1],
                tokens[2],
                tokens[3],
                session
            ],
        )
        .unwrap();
    }

    /// A chat turn of two model calls under its agent span (which sums
    /// them), a call written again, a cancelled call, and calls the
    /// extension proxied for Claude Code and Codex: each call once by its
    /// span, in its chat session, dated at its end; the agent span is not
    /// a response, nor are the proxied calls (their agents' records count
    /// them); cached input shown once under cache reads.
    #[test]
    fn chat_spans_once_each_and_the_agent_span_not_at_all() {
        let (_dir, path, db) = database("agent-traces.db", SCHEMA);
        let s = Some;
        let end = 1_796_400_000_000_i64;
        span(
            &db,
            ("a1", None, "invoke_agent GitHub Copilot Chat", end + 5000, "invoke_agent", "r0", None),
            [Some(7000), Some(300), None, None],
            Some("chat-1"),
        );
        span(
            &db,
            ("c1", Some("a1"), "chat gpt-5.1", end, "chat", "r1", Some("gpt-5.1-2025-11-13")),
            [Some(5000), Some(200), Some(4096), Some(64)],
            Some("chat-1"),
        );
        let (first, _) = read(&path);
        span(
            &db,
            ("c2", Some("a1"), "chat gpt-5.1", end + 4000, "chat", "r2", Some("gpt-5.1-2025-11-13")),
            [Some(2000), Some(100), Some(1024), None],
            Some("chat-1"),
        );
        span(
            &db,
            ("c3", Some("a1"), "chat gpt-5.1", end + 4500, "chat", "r3", None),
            [None, None, None, None],
            Some("chat-1"),
        );
        span(
            &db,
            ("x1", Some("a1"), "execute_tool read_file", end + 4200, "execute_tool", "r2", None),
            [None, None, None, None],
            Some("chat-1"),
        );
        for (id, proxy) in [("p1", "Claude Copilot Proxy"), ("p2", "oaiLMServer")] {
            span(
                &db,
                (id, None, "chat claude-sonnet-4.5", end, "chat", "rp", None),
                [Some(900), Some(9), None, None],
                None,
            );
            db.execute("UPDATE spans SET agent_name = ?2 WHERE span_id = ?1", (id, proxy)).unwrap();
        }
        let (mut all, _) = read(&path);
        all.extend(first);
        let rows = crate::ledger::agents::tests::rows(Provider::CopilotVsCode, &all);
        assert_eq!(
            rows,
            [
                ("c1".into(), s(904), None, s(4096), s(200), s(64), s(5200)),
                ("c2".into(), s(976), None, s(1024), s(100), None, s(2100)),
            ]
        );
        assert!(all.iter().all(|w| w.session_id.as_deref() == Some("chat-1")));
        assert_eq!(all.iter().find(|w| w.key == "c1").map(|w| w.at_ms), Some(end));
        assert_eq!(all[0].model.as_deref(), Some("gpt-5.1-2025-11-13"));
    }

    /// Without a chat session the span's session attribute names it, then
    /// its request's id, then its trace; a call whose cached count was
    /// not written keeps it unknown (never 0).
    #[test]
    fn the_session_falls_back_and_an_unwritten_cached_count_is_unknown() {
        let (_dir, path, db) = database("agent-traces.db", SCHEMA);
        let s = Some;
        let end = 1_796_400_000_000_i64;
        span(&db, ("c1", None, "chat gpt-4.1", end, "chat", "req-1", None), [Some(10), Some(2), None, None], None);
        db.execute("INSERT INTO span_attributes VALUES ('c1', 'copilot_chat.session_id', 'conv-9')", []).unwrap();
        span(&db, ("c2", None, "chat gpt-4.1", end, "chat", "req-2", None), [Some(11), Some(3), None, None], None);
        let (writes, refused) = read(&path);
        assert_eq!(refused, 0);
        let session = |key: &str| writes.iter().find(|w| w.key == key).and_then(|w| w.session_id.clone());
        assert_eq!(session("c1").as_deref(), Some("conv-9"));
        assert_eq!(session("c2").as_deref(), Some("req-2"));
        let c2 = writes.iter().find(|w| w.key == "c2").unwrap();
        assert_eq!((c2.tokens.input_tokens, c2.tokens.cached_input_tokens), (s(11), None));
        assert_eq!(c2.model.as_deref(), Some("gpt-5.1"), "the requested model where no response model is written");
    }

    /// Hostile rows: counts that are no counts (text, negative, past i64,
    /// a real) are unknown, never 0; a span without a time is refused and
    /// the store reads on; an empty store, and one of another schema,
    /// hold nothing.
    #[test]
    fn hostile_rows_broken_rows_and_empty_stores() {
        let (_dir, path, db) = database("agent-traces.db", SCHEMA);
        let end = 1_796_400_000_000_i64;
        let (writes, refused) = read(&path);
        assert_eq!((writes.len(), refused), (0, 0), "an empty store");
        db.execute(
            "INSERT INTO spans (span_id, trace_id, name, start_time_ms, end_time_ms, operation_name,
                input_tokens, output_tokens, cached_tokens, reasoning_tokens)
             VALUES ('h1', 't', 'chat m', 0, ?1, 'chat', 'many', -5, 1.5, 99999999999999999999)",
            [end],
        )
        .unwrap();
        db.execute(
            "INSERT INTO spans (span_id, trace_id, name, start_time_ms, end_time_ms, operation_name,
                input_tokens, output_tokens) VALUES ('h2', 't', 'chat m', 0, ?1, 'chat', 9223372036854775807, 1)",
            [end],
        )
        .unwrap();
        db.execute(
            "INSERT INTO spans (span_id, trace_id, name, start_time_ms, end_time_ms, operation_name,
                input_tokens, output_tokens) VALUES ('h3', 't', 'chat m', 0, 'never', 'chat', 5, 1)",
            [],
        )
        .unwrap();
        let (writes, refused) = read(&path);
        assert_eq!(refused, 1, "the span without a time");
        assert_eq!(writes.len(), 1, "h1 counts nothing it can say; h2 is read");
        assert_eq!(writes[0].key, "h2");
        assert_eq!(writes[0].tokens.input_tokens, Some(i64::MAX as u64));
        assert!(!writes[0].is_valid(), "past Bee's bound for a counter: never stored");

        let (_other, other, _db) = database("agent-traces.db", "CREATE TABLE unrelated (x INTEGER)");
        let mut evidence = Vec::new();
        let reader = crate::ledger::agents::agent(Provider::CopilotVsCode).whole_file().unwrap();
        assert!(reader.read(&other, &Default::default(), &mut evidence).is_err(), "no spans table: an error");
        assert!(responses_of(evidence).is_empty());
    }
}
