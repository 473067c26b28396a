//! A home holding records of every agent Bee reads, each at the place the
//! agent keeps them by default: the line logs and documents from the
//! agents' fixtures (`daemon/src/ledger/agents/testdata`), and databases
//! built with each agent's own tables. What each agent's records hold is
//! known, so a view can be checked agent by agent.

use rusqlite::Connection;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

use crate::{TestHome, claude_response_line, make_quiet, write_quiet};

/// What one agent's records in the home hold.
#[derive(Debug, Clone, Copy)]
pub struct Expected {
    /// Its name (`--provider`).
    pub agent: &'static str,
    /// Distinct responses.
    pub responses: u64,
    /// Whether its records leave calls out (`unrecorded_calls`).
    pub leaves_calls_out: bool,
}

fn fixture(name: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../daemon/src/ledger/agents/testdata").join(name);
    std::fs::read(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()))
}

fn text(name: &str) -> String {
    String::from_utf8(fixture(name)).expect("a fixture is text")
}

fn documents(name: &str) -> Vec<Value> {
    serde_json::from_slice(&fixture(name)).expect("a fixture of JSON documents")
}

fn database(path: &Path, schema_and_rows: &str) {
    std::fs::create_dir_all(path.parent().expect("a database in a directory")).expect("its directory");
    Connection::open(path).and_then(|db| db.execute_batch(schema_and_rows)).expect("build the database");
    make_quiet(path);
}

/// Writes every agent's records into `home`; what each holds.
pub fn write_every_agent(home: &TestHome) -> Vec<Expected> {
    let at = |relative: &str| home.path().join(relative);
    let session = "7a1e0000-0000-4000-8000-000000000001";
    write_quiet(
        &at(&format!(".claude/projects/-home-dev-app/{session}.jsonl")),
        &claude_response_line(session, "msg_every_1", "req_every_1", "2026-12-01T10:00:00.000Z", 20, 40),
    );
    write_quiet(
        &at(".gemini/tmp/app/chats/session-2026-12-05T03-21-8ed41bc8.jsonl"),
        &text("gemini-0.61.0-tool-and-resume.jsonl"),
    );
    write_quiet(&at(".qwen/projects/-home-dev-app/chats/qwen-session.jsonl"), &text("qwen-0.24.4-tool.jsonl"));
    write_quiet(
        &at(".pi/agent/sessions/--home-dev-app--/2026-12-05T03-22-45_s.jsonl"),
        &text("pi-0.73.1-tool-and-continue.jsonl"),
    );
    let opencode_tables = "CREATE TABLE session (id TEXT PRIMARY KEY, directory TEXT NOT NULL);
        CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, time_created INTEGER NOT NULL,
            time_updated INTEGER NOT NULL, data TEXT NOT NULL);
        INSERT INTO session VALUES ('ses_a', '/home/dev/app'), ('ses_fork', '/home/dev/app');";
    let message = json!({"role": "assistant", "providerID": "mock", "modelID": "claude-sonnet-4-5",
        "time": {"created": 1_796_119_200_000_i64, "completed": 1_796_119_201_000_i64},
        "tokens": {"total": 2450, "input": 100, "output": 40, "reasoning": 10, "cache": {"read": 2000, "write": 300}}})
    .to_string();
    let rows = format!(
        "{opencode_tables} INSERT INTO message VALUES ('m1', 'ses_a', 1, 1796119201000, '{message}'),
            ('m1_copy', 'ses_fork', 2, 1796119202000, '{message}');"
    );
    database(&at(".local/share/opencode/opencode.db"), &rows);
    database(&at(".local/share/kilo/kilo.db"), &rows);
    write_quiet(&at(".copilot/otel/copilot-2026-12-01.jsonl"), &text("copilot-otel.jsonl"));
    write_quiet(&at(".kimi/sessions/2b9f/5e1c-session/wire.jsonl"), &text("kimi-wire.jsonl"));
    write_quiet(&at(".openclaw/agents/main/sessions/oc-session-1.jsonl"), &text("openclaw-session.jsonl"));
    let threads = documents("amp-threads.json");
    for (name, thread) in [("T-1", &threads[1]), ("T-2", &threads[2]), ("T-0ld", &threads[3])] {
        write_quiet(&at(&format!(".local/share/amp/threads/{name}.json")), &thread.to_string());
    }
    let settings = documents("droid-settings.json");
    write_quiet(&at(".factory/sessions/-home-dev-app/6c1d.settings.json"), &settings[1].to_string());
    let chats = documents("codebuff-chats.json");
    write_quiet(
        &at(".config/manicode/projects/app/chats/2026-12-01T07-00-00/chat-messages.json"),
        &chats[1].to_string(),
    );
    database(
        &at(".local/share/goose/sessions/sessions.db"),
        "CREATE TABLE sessions (id TEXT PRIMARY KEY, created_at TIMESTAMP, provider_name TEXT, model_config_json TEXT,
            total_tokens INTEGER, input_tokens INTEGER, output_tokens INTEGER, accumulated_total_tokens INTEGER,
            accumulated_input_tokens INTEGER, accumulated_output_tokens INTEGER);
         INSERT INTO sessions VALUES
            ('g1', '2026-12-01 09:00:00', 'openai', '{\"model_name\":\"gpt-5.1\"}', 3300, 3200, 100, 9400, 9100, 300),
            ('g2', '2026-12-01 11:00:00', 'openai', '{\"model_name\":\"gpt-5.1\"}', 800, 700, 100, 800, 700, 100),
            ('g3', '2026-12-01 12:00:00', 'claude-code', '{\"model_name\":\"sonnet\"}', 90, 60, 30, 90, 60, 30);",
    );
    database(
        &at(".hermes/state.db"),
        "CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT NOT NULL, model TEXT, started_at REAL NOT NULL,
            message_count INTEGER DEFAULT 0, input_tokens INTEGER DEFAULT 0, output_tokens INTEGER DEFAULT 0,
            cache_read_tokens INTEGER DEFAULT 0, cache_write_tokens INTEGER DEFAULT 0, reasoning_tokens INTEGER DEFAULT 0,
            billing_provider TEXT, estimated_cost_usd REAL, actual_cost_usd REAL);
         INSERT INTO sessions (id, source, model, started_at, input_tokens, output_tokens, cache_read_tokens,
            cache_write_tokens, reasoning_tokens, billing_provider) VALUES
            ('h1', 'cli', 'claude-sonnet-4-5', 1796115600.25, 700, 150, 9000, 1500, 50, 'anthropic'),
            ('h2', 'telegram', 'gpt-5.1', 1796115660.0, 50, 10, 0, 0, 0, 'openai');",
    );
    let crush = at("work/app/.crush");
    write_quiet(
        &at(".local/share/crush/projects.json"),
        &json!({"projects": [{"path": at("work/app"), "data_dir": crush, "last_accessed": "2026-12-01T09:00:00Z"}]})
            .to_string(),
    );
    database(
        &crush.join("crush.db"),
        "CREATE TABLE messages (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, role TEXT NOT NULL,
            parts TEXT NOT NULL default '[]', model TEXT, provider TEXT, created_at INTEGER NOT NULL,
            updated_at INTEGER NOT NULL);
         INSERT INTO messages (id, session_id, role, model, provider, created_at, updated_at) VALUES
            ('u1', 'c1', 'user', NULL, NULL, 1796115600, 1796115600),
            ('a1', 'c1', 'assistant', 'gpt-5.1', 'openai', 1796115601, 1796115605),
            ('a2', 'c1', 'assistant', 'gpt-5.1', 'openai', 1796115606, 1796115610);",
    );
    let conversation = at(".gemini/antigravity-cli/conversations/0f9d2c44-5b1e-4c8a-9e61-2d7f3a8b9c10.db");
    database(&conversation, "CREATE TABLE gen_metadata (idx INTEGER PRIMARY KEY, data BLOB)");
    let db = Connection::open(&conversation).expect("the conversation");
    for (idx, usage) in [(1, agy_usage(5200, 0, 310, 95)), (2, agy_usage(140, 5100, 0, 60))] {
        db.execute("INSERT INTO gen_metadata (idx, data) VALUES (?1, ?2)", (idx, usage)).expect("a row");
    }
    make_quiet(&conversation);
    let expect = |agent, responses, leaves_calls_out| Expected { agent, responses, leaves_calls_out };
    vec![
        expect("claude", 1, false),
        expect("gemini", 3, true),
        expect("qwen", 2, false),
        expect("opencode", 1, true),
        expect("pi", 3, true),
        expect("copilot", 2, false),
        expect("amp", 4, false),
        expect("droid", 1, true),
        expect("goose", 2, true),
        expect("kilo", 1, true),
        expect("kimi", 3, false),
        expect("codebuff", 3, false),
        expect("crush", 2, true),
        expect("hermes", 2, true),
        expect("openclaw", 3, true),
        expect("agy", 2, false),
    ]
}

/// An agy `gen_metadata` blob: usage at field path 1.4, its output total
/// (field 3) the sum of reasoning and text.
fn agy_usage(input: u64, cached: u64, reasoning: u64, text: u64) -> Vec<u8> {
    use prost::encoding::{WireType, encode_key, encode_varint};
    let nest = |number: u32, inner: &[u8]| {
        let mut out = Vec::new();
        encode_key(number, WireType::LengthDelimited, &mut out);
        encode_varint(inner.len() as u64, &mut out);
        out.extend_from_slice(inner);
        out
    };
    let mut usage = Vec::new();
    for (number, value) in [(2, input), (3, reasoning + text), (5, cached), (9, reasoning), (10, text)] {
        encode_key(number, WireType::Varint, &mut usage);
        encode_varint(value, &mut usage);
    }
    nest(1, &nest(4, &usage))
}
