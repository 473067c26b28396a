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
    write_every_agent_into(home.path())
}

/// Writes every agent's records into the directory `root`, taken as a
/// home (`$HOME`); what each holds. `root` should be absolute: some
/// records name places in the home by their path.
pub fn write_every_agent_into(root: &Path) -> Vec<Expected> {
    let at = |relative: &str| root.join(relative);
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
    // Kilo's database, shared by its CLI and Kilo Code's newer extension,
    // with a legacy task the extension imported (provider and model
    // `legacy`, no tokens): that task's responses are `kilocode`'s, never Kilo's.
    let imported = json!({"role": "assistant", "providerID": "legacy", "modelID": "legacy", "mode": "code",
        "agent": "main", "path": {"cwd": "/home/dev/app", "root": "/home/dev/app"}, "cost": 0,
        "time": {"created": 1_796_320_000_500_i64, "completed": 1_796_320_000_500_i64},
        "tokens": {"input": 0, "output": 0, "reasoning": 0, "cache": {"read": 0, "write": 0}}})
    .to_string();
    let kilo = format!(
        "{rows} INSERT INTO session VALUES ('ses_legacy', '/home/dev/app');
         INSERT INTO message VALUES ('msg_legacy', 'ses_legacy', 1796320000500, 1796320000500, '{imported}');"
    );
    database(&at(".local/share/kilo/kilo.db"), &kilo);
    write_quiet(&at(".copilot/otel/copilot-2026-12-01.jsonl"), &text("copilot-otel.jsonl"));
    write_copilot_store(&at(".copilot/session-store.db"));
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
            ('g3', '2026-12-01 12:00:00', 'claude-code', '{\"model_name\":\"sonnet\"}', 90, 60, 30, 90, 60, 30);
         CREATE TABLE usage_ledger (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL,
            created_timestamp INTEGER NOT NULL, model TEXT, input_tokens INTEGER, output_tokens INTEGER,
            total_tokens INTEGER, cache_read_tokens INTEGER, cache_write_tokens INTEGER, cost REAL,
            cost_source TEXT, is_compaction INTEGER DEFAULT 0);
         CREATE INDEX idx_usage_ledger_session ON usage_ledger(session_id);
         INSERT INTO usage_ledger (session_id, created_timestamp, model, input_tokens, output_tokens, total_tokens,
            cache_read_tokens, cache_write_tokens, cost, cost_source) VALUES
            ('g1', 1796119200, NULL, 5800, 200, 6000, 0, 0, NULL, 'carried_forward'),
            ('g1', 1796119200, 'gpt-5.1', 2000, 50, 2050, 1500, NULL, 0.01, 'estimated'),
            ('g1', 1796119260, 'gpt-5.1', 1300, 50, 1350, 1200, NULL, 0.01, 'estimated'),
            ('g3', 1796122800, 'sonnet', 60, 30, 90, 0, 0, 0.01, 'provider_reported');",
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
    // agy's records keep no time: a response is dated by its database's
    // last write, here a fixed one, so the views of this home read alike
    // whatever day they run.
    date_as_written(&conversation);
    write_copilot_vscode(&at(".config/Code/User/globalStorage/github.copilot-chat/agent-traces.db"));
    write_quiet(&at(".junie/sessions/session-260825-151015-1bxv/events.jsonl"), &junie_events());
    write_quiet(&at(".local/share/devin/cli/transcripts/serene-example.json"), &devin_transcript().to_string());
    let (parent, child) = mux_ledgers();
    write_quiet(&at(".mux/sessions/ws-parent/session-usage.json"), &parent.to_string());
    write_quiet(&at(".mux/sessions/ws-child/session-usage.json"), &child.to_string());
    let sessions: serde_json::Map<String, Value> =
        serde_json::from_slice(&fixture("cline-3.0.65-sessions.json")).expect("Cline's session directories");
    for (name, document) in sessions {
        write_quiet(&at(&format!(".cline/data/sessions/{name}")), &document.to_string());
    }
    let extensions = at(".config/Code/User/globalStorage");
    let (cline, roo, kilocode) = extension_tasks();
    write_quiet(&extensions.join("saoudrizwan.claude-dev/tasks/1796300000000/ui_messages.json"), &cline.to_string());
    write_quiet(&extensions.join("rooveterinaryinc.roo-cline/tasks/1796310000000/ui_messages.json"), &roo.to_string());
    write_quiet(&extensions.join("kilocode.kilo-code/tasks/1796320000000/ui_messages.json"), &kilocode.to_string());
    // Continue's sessions as the CLI last wrote each (resumed and forked
    // ones among them); its messages keep no time: dated by their files'
    // writes, fixed as agy's.
    let runs = documents("continue-1.5.47-sessions.json");
    for run in &runs {
        let file = run["file"].as_str().expect("a session's file name");
        let path = at(&format!(".continue/sessions/{file}"));
        write_quiet(&path, &run["document"].to_string());
        date_as_written(&path);
    }
    write_cursor(&at(".config/Cursor/User/globalStorage/state.vscdb"));
    write_zed(&at(".local/share/zed/threads/threads.db"));
    write_windsurf(&at(".config/Windsurf/User/workspaceStorage/9f1e2d3c4b5a69788796a5b4c3d2e1f0/state.vscdb"));
    // Auggie 0.36.0's own sessions: one continued once, one whose only
    // exchange has no usage.
    for (id, name) in [
        ("7524ff7e-7217-4996-9fcb-c8e23cc5623a", "augment-0.36.0-continued.json"),
        ("23f35fd8-5b45-4c9b-bf97-2f26a0f5a6ad", "augment-0.36.0-empty-response.json"),
    ] {
        write_quiet(&at(&format!(".augment/sessions/{id}.json")), &text(name));
    }
    // Aider 0.86.2's analytics log of four runs, where the home's settings
    // name it (Aider keeps none unless asked).
    let aider_log = at(".aider/analytics.jsonl");
    write_quiet(&at(".aider.conf.yml"), &format!("analytics-log: {}\n", aider_log.display()));
    write_quiet(&aider_log, &text("aider-0.86.2-analytics.jsonl"));
    // A Kiro IDE 1.0.411 turn of twelve model calls, every token unknown.
    write_quiet(
        &at(".kiro/sessions/9f3c1d0b7a4e2856/sess_0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d/messages.jsonl"),
        &text("kiro-1.0.411-turn.jsonl"),
    );
    write_meept(&at(".meept/metrics.db"));
    write_zcode(&at(".zcode/cli/db/db.sqlite"));
    write_warp(&at(".local/state/warp-terminal/warp.sqlite"));
    let own = |agent: &str, file: &str| {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../daemon/src/ledger/agents")
            .join(agent)
            .join("testdata")
            .join(file);
        std::fs::read_to_string(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()))
    };
    write_quiet(&at(".reasonix/stats/2026-08-04.jsonl"), &own("reasonix", "2026-08-04.jsonl"));
    write_quiet(&at(".lingtai/orchestrator/logs/token_ledger.jsonl"), &own("lingtai", "token_ledger.jsonl"));
    write_quiet(
        &at(".opencodereview/sessions/home-dev-app/6b1d2a4e-0c3f-4e5a-9b7d-1f2e3a4b5c6d.jsonl"),
        &own("opencodereview", "review-session.jsonl"),
    );
    write_quiet(&at(".aside/u/0/sessions/2026-12-05_one/messages.jsonl"), &own("aside", "aside-messages.jsonl"));
    write_quiet(
        &at(".local/share/muse/sessions/2026/12/05/01a0b7d1-b7af-7de2-8369-4f4815ae1d72/session.jsonl"),
        &own("muse", "muse-session.jsonl"),
    );
    write_quiet(
        &at(
            ".kimi-code/sessions/wd_app_0123456789ab/session_019f0000-0000-7000-8000-000000000001/agents/main/wire.jsonl",
        ),
        &own("kimi-code", "kimi-code-wire.jsonl"),
    );
    write_mimo(&at(".local/share/mimocode/mimocode.db"));
    let openclaude = "7a1e0000-0000-4000-8000-000000000009";
    write_quiet(
        &at(&format!(".openclaude/projects/-home-dev-app/{openclaude}.jsonl")),
        &claude_response_line(openclaude, "msg_oc_1", "req_oc_1", "2026-12-01T11:00:00.000Z", 20, 40),
    );
    // pi's session as Oh My Pi (pi's fork) writes it, its own responses.
    write_quiet(
        &at(".omp/agent/sessions/--home-dev-app--/2026-12-05T03-22-45_s.jsonl"),
        &text("pi-0.73.1-tool-and-continue.jsonl").replace("\"responseId\":\"msg_mock_", "\"responseId\":\"msg_omp_"),
    );
    write_quiet(
        &at(".config/IBM Bob/User/globalStorage/ibm.bob-code/tasks/1796330000000/ui_messages.json"),
        &bob_task().to_string(),
    );
    write_grok_cli(&at(".grok/grok.db"));
    write_vibe(root);
    let expect = |agent, responses, leaves_calls_out| Expected { agent, responses, leaves_calls_out };
    vec![
        expect("claude", 1, false),
        expect("gemini", 3, true),
        expect("qwen", 2, false),
        expect("opencode", 1, true),
        expect("pi", 3, true),
        // The export's two calls, and its session store's three of other
        // conversations.
        expect("copilot", 5, false),
        expect("amp", 4, false),
        expect("droid", 1, true),
        // Session g1's three ledger rows (the first carries its totals from
        // before the ledger), g2's totals; g3 is Claude Code's own calls.
        expect("goose", 4, true),
        expect("kilo", 1, true),
        expect("kimi", 3, false),
        expect("codebuff", 3, false),
        expect("crush", 2, true),
        expect("hermes", 2, true),
        expect("openclaw", 3, true),
        expect("agy", 2, false),
        // Found and read, and no response: its readable records hold none
        // (its calls are all unrecorded, see its README).
        expect("copilot-vs", 2, true),
        expect("junie", 4, false),
        expect("devin", 2, false),
        // A workspace and the sub-agent rolled into it, its own ledger beside.
        expect("mux", 2, true),
        // Two models' running totals of one conversation, each a total alone.
        // The CLI's eleven responses (a fork's copies and a sub-agent's
        // among them), and a classic extension task's one.
        expect("cline", 12, true),
        expect("roo", 3, true),
        expect("kilocode", 2, true),
        // Twelve responses, a fork's copies the same responses.
        expect("continue", 12, true),
        // Two AI bubbles, one whose counts Cursor left at 0 (unknown).
        expect("cursor", 2, true),
        // One thread's two prompts, each its latest request's usage.
        expect("zed", 2, true),
        // Two exchanges of a continued session; its sub-agents and
        // summarizations are recorded only under a feature flag.
        expect("augment", 2, true),
        // Four replies, each counted with its tokens unknown.
        expect("aider", 4, true),
        // Two calls; a failed one that served nothing is no response.
        expect("meept", 2, false),
        // Two requests; a third still running is not one yet.
        expect("zcode", 2, false),
        // A row summing three requests one response; markers, a
        // compaction and a failed request none.
        expect("reasonix", 3, true),
        // An all-zero line no response.
        expect("lingtai", 6, false),
        // A line written twice counted once.
        expect("opencodereview", 3, false),
        expect("aside", 2, false),
        // Two model calls, the rollup of a child's none.
        expect("muse", 2, false),
        expect("kimi-code", 2, false),
        // Its own response; one it imported from Claude Code is Claude's.
        expect("mimo", 1, true),
        expect("openclaude", 1, false),
        expect("omp", 3, true),
        expect("bob", 2, true),
        // A turn's total and a title call, each one entry.
        expect("grok-cli", 2, true),
        // A 2.x session's and a 3.x session's running totals, one entry each.
        expect("vibe", 2, true),
        // A turn's twelve model calls, each counted with its tokens unknown.
        expect("kiro", 12, true),
        // A conversation's two models, each one entry with its tokens
        // unknown; a fork of it none.
        expect("warp", 2, true),
        // A workspace's state: found and read, no response (Windsurf keeps
        // its calls only encrypted; its README says so).
        expect("windsurf", 0, true),
    ]
}

/// Meept's call metrics: an Anthropic call, an OpenAI one (its input
/// including the cached part), and a failed call that served nothing.
fn write_meept(path: &Path) {
    database(
        path,
        "CREATE TABLE llm_calls (id INTEGER PRIMARY KEY AUTOINCREMENT, timestamp TEXT NOT NULL,
            provider TEXT NOT NULL DEFAULT '', model_id TEXT NOT NULL DEFAULT '', agent_id TEXT NOT NULL DEFAULT '',
            session_id TEXT NOT NULL DEFAULT '', tokens_sent INTEGER NOT NULL DEFAULT 0,
            tokens_received INTEGER NOT NULL DEFAULT 0, tokens_cached INTEGER NOT NULL DEFAULT 0,
            reasoning_tokens INTEGER NOT NULL DEFAULT 0, cache_creation_tokens INTEGER NOT NULL DEFAULT 0,
            error INTEGER NOT NULL DEFAULT 0, error_message TEXT NOT NULL DEFAULT '',
            latency_ms INTEGER NOT NULL DEFAULT 0, duration REAL NOT NULL DEFAULT 0);
         INSERT INTO llm_calls (timestamp, provider, model_id, agent_id, session_id, tokens_sent, tokens_received,
            tokens_cached, cache_creation_tokens, reasoning_tokens, error) VALUES
            ('2026-12-01T09:00:00Z', 'anthropic', 'claude-sonnet-4-5', 'coder', 'convA', 1000, 500, 200, 150, 100, 0),
            ('2026-12-01T09:01:00Z', 'openai', 'gpt-5.1', 'reviewer', 'convB', 1000, 50, 800, 0, 0, 0),
            ('2026-12-01T09:02:00Z', 'openai', 'gpt-5.1', 'reviewer', 'convB', 0, 0, 0, 0, 0, 1);",
    );
}

/// ZCode's usage table: two completed requests and one still running.
fn write_zcode(path: &Path) {
    database(
        path,
        "CREATE TABLE session (id TEXT PRIMARY KEY, directory TEXT NOT NULL);
         CREATE TABLE model_usage (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, turn_id TEXT, model_id TEXT NOT NULL,
            input_tokens INTEGER NOT NULL DEFAULT 0, output_tokens INTEGER NOT NULL DEFAULT 0,
            reasoning_tokens INTEGER NOT NULL DEFAULT 0, cache_creation_input_tokens INTEGER NOT NULL DEFAULT 0,
            cache_read_input_tokens INTEGER NOT NULL DEFAULT 0, started_at INTEGER NOT NULL, completed_at INTEGER,
            computed_total_tokens INTEGER);
         INSERT INTO session VALUES ('sess-1', '/home/dev/app');
         INSERT INTO model_usage VALUES
            ('mu-1', 'sess-1', 'turn-1', 'GLM-5.2', 9125, 27, 0, 0, 8064, 1796115600000, 1796115620000, 9152),
            ('mu-2', 'sess-1', 'turn-1', 'GLM-5.2', 100, 20, 5, 3, 7, 1796115630000, 1796115631000, 120),
            ('mu-3', 'sess-1', 'turn-2', 'GLM-5.2', 0, 0, 0, 0, 0, 1796115640000, NULL, NULL);",
    );
}

/// Warp's state database (its `agent_conversations`, as its migrations
/// make it): a conversation that used two models, and a fork of it (whose
/// totals start as its source's copy).
fn write_warp(path: &Path) {
    let usage = |fork: bool| {
        let data = json!({"server_conversation_token": "srv-1", "conversation_usage_metadata": {
            "credits_spent": 3.5, "token_usage": [
                {"model_id": "claude-sonnet-4-5", "warp_tokens": 12000, "byok_tokens": 0, "custom_endpoint_tokens": 0},
                {"model_id": "gpt-5.1", "total_tokens": 800}]}});
        let mut data = data;
        if fork {
            data["forked_from_server_conversation_token"] = json!("srv-1");
        }
        data.to_string().replace('\'', "''")
    };
    database(
        path,
        &format!(
            "CREATE TABLE agent_conversations (id INTEGER PRIMARY KEY NOT NULL, conversation_id TEXT NOT NULL,
                active_task_id TEXT, conversation_data TEXT NOT NULL,
                last_modified_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP, summary TEXT);
             INSERT INTO agent_conversations (conversation_id, conversation_data, last_modified_at)
                VALUES ('c-1', '{}', '2026-10-09 03:00:00'), ('c-fork', '{}', '2026-10-09 04:00:00');",
            usage(false),
            usage(true)
        ),
    );
}

/// MiMo Code's database (OpenCode's tables): its own response, and one it
/// imported from a Claude Code transcript (`external_import`).
fn write_mimo(path: &Path) {
    let message = |provider: &str, input: u64| {
        json!({"role": "assistant", "providerID": provider, "modelID": "mimo-v2.5-pro",
            "time": {"created": 1_796_119_200_000_i64, "completed": 1_796_119_201_000_i64},
            "tokens": {"input": input, "output": 50, "reasoning": 10, "cache": {"read": 200, "write": 40}}})
        .to_string()
    };
    let (own, imported) = (message("mimo", 1000), message("anthropic", 700));
    database(
        path,
        &format!(
            "CREATE TABLE session (id TEXT PRIMARY KEY, directory TEXT NOT NULL, time_created INTEGER NOT NULL);
             CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, time_created INTEGER NOT NULL,
                time_updated INTEGER NOT NULL, data TEXT NOT NULL);
             CREATE TABLE external_import (source TEXT NOT NULL, source_key TEXT NOT NULL, session_id TEXT NOT NULL,
                source_path TEXT NOT NULL, source_mtime INTEGER NOT NULL, time_imported INTEGER NOT NULL,
                message_ids TEXT, PRIMARY KEY (source, source_key));
             INSERT INTO session VALUES ('ses_m', '/home/dev/app', 1796119100000), ('ses_cc', '/home/dev/app', 1796119100000);
             INSERT INTO message VALUES ('m1', 'ses_m', 1796119200000, 1796119201000, '{own}'),
                ('cc1', 'ses_cc', 1796119200000, 1796119202000, '{imported}');
             INSERT INTO external_import VALUES ('cc', 'u1', 'ses_cc', '/x.jsonl', 1, 1796119203000, '[\"cc1\"]');"
        ),
    );
}

/// Grok CLI's store: a user turn's total, and its title call.
fn write_grok_cli(path: &Path) {
    database(
        path,
        "CREATE TABLE sessions (id TEXT PRIMARY KEY, workspace_id TEXT NOT NULL, title TEXT, model TEXT NOT NULL,
            mode TEXT NOT NULL, cwd_at_start TEXT NOT NULL, cwd_last TEXT NOT NULL, status TEXT NOT NULL,
            created_at TEXT NOT NULL, updated_at TEXT NOT NULL);
         CREATE TABLE usage_events (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL, message_seq INTEGER,
            source TEXT NOT NULL, model TEXT NOT NULL, input_tokens INTEGER NOT NULL DEFAULT 0,
            output_tokens INTEGER NOT NULL DEFAULT 0, total_tokens INTEGER NOT NULL DEFAULT 0,
            cost_micros INTEGER NOT NULL DEFAULT 0, created_at TEXT NOT NULL);
         INSERT INTO sessions VALUES ('s-1', 'w1', NULL, 'grok-4.3', 'agent', '/home/dev/app', '/home/dev/app', 'active',
            '2026-12-01T09:59:00.000Z', '2026-12-01T10:00:00.000Z');
         INSERT INTO usage_events (session_id, source, model, input_tokens, output_tokens, total_tokens, cost_micros,
            created_at) VALUES
            ('s-1', 'message', 'grok-4.3', 48200, 1350, 49550, 63625, '2026-12-01T10:00:00.000Z'),
            ('s-1', 'title', 'grok-4-1-fast-non-reasoning', 410, 12, 422, 0, '2026-12-01T10:00:01.000Z');",
    );
}

/// Mistral Vibe's sessions: a 2.x session's `meta.json` and a 3.x
/// session's store (its running totals in a generation's projection).
fn write_vibe(root: &Path) {
    let logs = root.join(".vibe/logs/session");
    let old = json!({"session_id": "aaaaaaaa-1111-4111-8111-000000000001", "parent_session_id": null,
        "start_time": "2026-12-01T09:00:00.000000+00:00", "end_time": "2026-12-01T09:05:00+00:00",
        "environment": {"working_directory": "/home/dev/app"},
        "stats": {"steps": 3, "session_prompt_tokens": 5022, "session_completion_tokens": 105, "session_cached_tokens": 2000},
        "config": {"active_model": "mistral-medium-3.5",
            "models": {"mistral-medium-3.5": {"name": "mistral-vibe-cli-latest", "alias": "mistral-medium-3.5"}}}});
    write_quiet(&logs.join("session_20261201_090000_aaaaaaaa/meta.json"), &old.to_string());
    let id = "bbbbbbbb-2222-4222-8222-000000000002";
    let store = logs.join("unified").join(id);
    let projection = json!({"session_id": id, "snapshot": {"session": {"id": id, "createdAt": 1_796_115_600_000_i64,
        "tokenUsage": {"inputTokens": 3022, "cachedInputTokens": 1200, "outputTokens": 103, "totalTokens": 3125}}}});
    write_quiet(&store.join("generations/0000000000000008/projection-state.json"), &projection.to_string());
    let meta = json!({"session_id": id, "environment": {"working_directory": "/home/dev/app"},
        "config": {"active_model": "mistral-medium-3.5", "model_name": "mistral-vibe-cli-latest"}});
    write_quiet(&store.join("meta.json"), &meta.to_string());
}

/// A Cline-family task's request, its counters as `info`.
fn started(ts: i64, info: Value) -> Value {
    json!({"ts": ts, "type": "say", "say": "api_req_started", "text": info.to_string()})
}

/// A request's counters as Roo Code's family writes them.
fn info(protocol: &str, tokens_in: u64, writes: u64, reads: u64, out: u64) -> Value {
    json!({"apiProtocol": protocol, "tokensIn": tokens_in, "tokensOut": out, "cacheWrites": writes,
        "cacheReads": reads, "cost": 0.01})
}

/// An IBM Bob task (Roo Code's format, under its own extension id).
fn bob_task() -> Value {
    json!([
        {"ts": 1_796_330_000_000_i64, "type": "say", "say": "text", "text": "working"},
        started(1_796_330_000_001, info("anthropic", 4312, 300, 4000, 50)),
        started(1_796_330_000_002, info("openai", 5000, 40, 4000, 70)),
        started(1_796_330_000_003, json!({"apiProtocol": "anthropic"})),
    ])
}

/// Copilot CLI's session store as 1.0.102 creates it, holding the three
/// calls it wrote against a mock of each provider API.
fn write_copilot_store(path: &Path) {
    database(
        path,
        "CREATE TABLE schema_version (version INTEGER NOT NULL);
         INSERT INTO schema_version VALUES (8);
         CREATE TABLE sessions (
            id TEXT PRIMARY KEY, cwd TEXT, repository TEXT, host_type TEXT, branch TEXT, summary TEXT,
            created_at TEXT DEFAULT (datetime('now')), updated_at TEXT DEFAULT (datetime('now')));
         CREATE TABLE assistant_usage_events (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            session_id TEXT NOT NULL REFERENCES sessions(id),
            turn_index INTEGER, agent_id TEXT, parent_tool_call_id TEXT,
            model TEXT NOT NULL, copilot_usage_model TEXT,
            input_tokens INTEGER, output_tokens INTEGER, cache_read_tokens INTEGER, cache_write_tokens INTEGER,
            reasoning_tokens INTEGER, total_nano_aiu INTEGER, request_multiplier REAL, duration_ms INTEGER,
            time_to_first_token_ms INTEGER, output_ttft_ms REAL, inter_token_latency_ms INTEGER,
            initiator TEXT, api_endpoint TEXT, reasoning_effort TEXT, finish_reason TEXT,
            content_filter_triggered INTEGER, token_details_json TEXT,
            created_at TEXT DEFAULT (datetime('now')));
         INSERT INTO sessions (id, cwd) VALUES ('s-chat', '/home/dev/app'), ('s-responses', '/home/dev/app'),
            ('s-messages', '/home/dev/app');
         INSERT INTO assistant_usage_events (session_id, turn_index, model, input_tokens, output_tokens,
            cache_read_tokens, cache_write_tokens, reasoning_tokens, request_multiplier, initiator, api_endpoint,
            finish_reason, created_at) VALUES
          ('s-chat', 0, 'gpt-4.1', 1000, 200, 400, 0, 50, 0.0, 'user', '/chat/completions', 'stop',
           '2026-12-03T12:29:51.353Z'),
          ('s-responses', 0, 'gpt-5', 1100, 210, 300, 0, 60, 0.0, 'user', '/responses', 'stop',
           '2026-12-03T12:30:05.245Z'),
          ('s-messages', 0, 'claude-sonnet-4-5', 2000, 220, 300, 500, NULL, 0.0, 'user', '/v1/messages', 'stop',
           '2026-12-03T12:30:02.939Z');",
    );
}

/// Cursor's global state: a conversation's user bubble, an AI bubble with
/// its counts, one whose counts Cursor left at 0 (as current builds do),
/// and a row of other state.
fn write_cursor(path: &Path) {
    database(path, "CREATE TABLE cursorDiskKV (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB);");
    let db = Connection::open(path).expect("the state database");
    let composer = "9c1d2e3f-4a5b-4c6d-8e7f-0a1b2c3d4e5f";
    let bubble = |id: &str, kind: u8, at: &str, input: u64, output: u64| {
        let value = json!({"_v": 3, "type": kind, "bubbleId": id, "createdAt": at, "text": "",
            "tokenCount": {"inputTokens": input, "outputTokens": output},
            "modelInfo": {"modelName": "claude-4.5-sonnet"}});
        (format!("bubbleId:{composer}:{id}"), value.to_string())
    };
    for (key, value) in [
        bubble("b1", 1, "2026-12-04T09:00:00.000Z", 0, 0),
        bubble("b2", 2, "2026-12-04T09:00:05.000Z", 2400, 180),
        bubble("b3", 2, "2026-12-04T09:01:00.000Z", 0, 0),
        ("composerData:other".to_owned(), json!({"composerId": composer}).to_string()),
    ] {
        db.execute("INSERT INTO cursorDiskKV (key, value) VALUES (?1, ?2)", (key, value)).expect("a row");
    }
    make_quiet(path);
}

/// A Windsurf workspace's state database as the editor keeps it: its
/// folder and editor state, and a cache with counts in it that no
/// reader may take for usage.
fn write_windsurf(path: &Path) {
    database(path, "CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB);");
    let db = Connection::open(path).expect("Windsurf's state");
    for (key, value) in [
        ("codeium.windsurf", r#"{"windsurf.state.cachedTrajectorySummaries:w1":"CgR0ZXN0"}"#),
        ("memento/workbench.parts.editor", r#"{"editorpart.state":{"serializedGrid":{}}}"#),
        ("workbench.panel.aichat.view.aichat.chatdata", r#"{"tabs":[{"bubbles":[{"tokenCount":{"inputTokens":9}}]}]}"#),
    ] {
        db.execute("INSERT INTO ItemTable (key, value) VALUES (?1, ?2)", (key, value)).expect("a row");
    }
    drop(db);
    make_quiet(path);
}

/// Zed's threads: one thread of two prompts in one folder, plain JSON
/// (Zed compresses its own; the reader takes both).
fn write_zed(path: &Path) {
    database(
        path,
        "CREATE TABLE threads (id TEXT PRIMARY KEY, summary TEXT NOT NULL, updated_at TEXT NOT NULL,
            data_type TEXT NOT NULL, data BLOB NOT NULL, parent_id TEXT, folder_paths TEXT,
            folder_paths_order TEXT, created_at TEXT);",
    );
    let thread = json!({"title": "a thread", "messages": [], "updated_at": "2026-12-04T11:00:00Z",
        "request_token_usage": {
            "p1": {"input_tokens": 3000, "cache_creation_input_tokens": 1200, "output_tokens": 90},
            "p2": {"input_tokens": 150, "cache_read_input_tokens": 4200, "output_tokens": 60}},
        "model": {"provider": "anthropic", "model": "claude-sonnet-4-5"}, "version": "0.3.0"});
    let db = Connection::open(path).expect("the threads database");
    db.execute(
        "INSERT INTO threads (id, summary, updated_at, data_type, data, folder_paths)
         VALUES ('5e0f4c1a-8b2d-4e3f-9a1b-7c6d5e4f3a2b', 'a thread', '2026-12-04T11:00:00+00:00', 'json', ?1,
                 '/home/dev/app')",
        [thread.to_string().into_bytes()],
    )
    .expect("a thread");
    make_quiet(path);
}

/// Dates a record file that keeps no time of its own (its reader dates its
/// responses by the file's last write) at a fixed instant,
/// 2026-12-06T00:00:00Z, long quiet.
fn date_as_written(path: &Path) {
    let written = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_796_515_200);
    std::fs::File::options()
        .write(true)
        .open(path)
        .and_then(|file| file.set_modified(written))
        .unwrap_or_else(|err| panic!("{}: {err}", path.display()));
}

/// A classic task's messages (Cline's editor extension, and Roo Code and
/// Kilo Code, which forked it): Cline's, one request through Anthropic;
/// Roo Code's, a request of each protocol, one cancelled, one still
/// streaming (none) and a condensing (its cost alone, none); Kilo Code's,
/// one request and one whose usage never came (none).
fn extension_tasks() -> (Value, Value, Value) {
    let mut anthropic = started(
        1_796_300_000_100,
        json!({"request": "<task>…</task>", "tokensIn": 12, "tokensOut": 50, "cacheWrites": 300,
            "cacheReads": 4000, "cost": 0.01}),
    );
    anthropic["modelInfo"] = json!({"modelId": "claude-sonnet-4-5", "providerId": "anthropic", "mode": "act"});
    let cline = json!([{"ts": 1_796_300_000_000_i64, "type": "say", "say": "task", "text": "Do it"}, anthropic]);
    let roo = json!([
        {"ts": 1_796_310_000_000_i64, "type": "say", "say": "text", "text": "working"},
        started(1_796_310_000_001, info("anthropic", 4312, 300, 4000, 50)),
        started(1_796_310_000_002, info("openai", 5000, 40, 4000, 70)),
        started(1_796_310_000_003, json!({"apiProtocol": "openai", "tokensIn": 40, "tokensOut": 2, "cacheWrites": 0,
            "cacheReads": 0, "cost": 0, "cancelReason": "user_cancelled", "streamingFailedMessage": "x"})),
        started(1_796_310_000_004, json!({"apiProtocol": "anthropic"})),
        {"ts": 1_796_310_000_005_i64, "type": "say", "say": "condense_context", "contextCondense": {"cost": 0.2}},
    ]);
    let kilocode = json!([
        started(
            1_796_320_000_001,
            json!({"apiProtocol": "anthropic", "tokensIn": 5000, "tokensOut": 60,
            "cacheWrites": 0, "cacheReads": 4000, "cost": 0.02, "usageMissing": false, "inferenceProvider": "Anthropic"})
        ),
        started(
            1_796_320_000_002,
            json!({"apiProtocol": "openai", "tokensIn": 0, "tokensOut": 0, "cacheWrites": 0,
            "cacheReads": 0, "cost": 0, "usageMissing": true})
        ),
        started(1_796_320_000_003, info("openai", 5000, 40, 4000, 70)),
    ]);
    (cline, roo, kilocode)
}

/// The Copilot Chat extension's span store: an agent span summing its two
/// chat spans (the responses), a cancelled chat, a tool's span, and chat
/// spans it proxied for Claude Code and Codex (theirs, not its own).
fn write_copilot_vscode(path: &Path) {
    database(
        path,
        "CREATE TABLE schema_version (version INTEGER PRIMARY KEY);
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
            key TEXT NOT NULL, value TEXT, PRIMARY KEY (span_id, key));
         INSERT INTO schema_version VALUES (1);",
    );
    let db = Connection::open(path).expect("the span store");
    let end = 1_796_400_000_000_i64;
    type Span<'a> =
        (&'a str, Option<&'a str>, &'a str, i64, &'a str, Option<&'a str>, [Option<i64>; 4], Option<&'a str>);
    let spans: [Span<'_>; 7] = [
        ("a1", None, "invoke_agent", end + 5000, "invoke_agent", None, [Some(7000), Some(300), None, None], None),
        (
            "c1",
            Some("a1"),
            "chat",
            end,
            "chat",
            Some("gpt-5.1-2025-11-13"),
            [Some(5000), Some(200), Some(4096), Some(64)],
            None,
        ),
        (
            "c2",
            Some("a1"),
            "chat",
            end + 4000,
            "chat",
            Some("gpt-5.1-2025-11-13"),
            [Some(2000), Some(100), Some(1024), None],
            None,
        ),
        ("c3", Some("a1"), "chat", end + 4500, "chat", None, [None; 4], None),
        ("x1", Some("a1"), "execute_tool read_file", end + 4200, "execute_tool", None, [None; 4], None),
        ("p1", None, "chat", end, "chat", None, [Some(900), Some(9), None, None], Some("Claude Copilot Proxy")),
        ("p2", None, "chat", end, "chat", None, [Some(900), Some(9), None, None], Some("oaiLMServer")),
    ];
    for (id, parent, name, end, operation, model, [input, output, cached, reasoning], proxy) in spans {
        let session = proxy.is_none().then_some("chat-1");
        db.execute(
            "INSERT INTO spans (span_id, trace_id, parent_span_id, name, start_time_ms, end_time_ms, operation_name,
                agent_name, conversation_id, request_model, response_model, input_tokens, output_tokens, cached_tokens,
                reasoning_tokens, chat_session_id)
             VALUES (?1, 't1', ?2, ?3, ?4, ?5, ?6, ?7, 'r1', 'gpt-5.1', ?8, ?9, ?10, ?11, ?12, ?13)",
            rusqlite::params![
                id,
                parent,
                name,
                end - 900,
                end,
                operation,
                proxy,
                model,
                input,
                output,
                cached,
                reasoning,
                session
            ],
        )
        .expect("a span");
    }
    make_quiet(path);
}

/// A Junie session's events: a prompt, a task's start, four calls' usage
/// (a helper model's, one of a model it has no rates for), a context
/// report and the task's state.
fn junie_events() -> String {
    let usage = |at_ms: i64, model: &str, cost: f64, [input, cache_read, cache_write, output]: [u64; 4]| {
        json!({"kind": "SessionA2uxEvent", "event": {"state": "IN_PROGRESS", "agentEvent": {
            "kind": "LlmResponseMetadataEvent",
            "agent": {"kind": "MainAgent", "id": "main", "name": "main", "type": "LINEAR"},
            "modelUsage": [{"model": model, "cost": cost, "inputTokens": input, "cacheInputTokens": cache_read,
                "cacheCreateTokens": cache_write, "outputTokens": output, "time": 0}]}},
            "taskId": "task-260825-151015-1bxv", "timestampMs": at_ms})
    };
    [
        json!({"kind": "UserPromptEvent", "requestId": "prompt-260825-170225-v7cf", "prompt": "add a calendar",
            "timestampMs": 1_787_670_145_995_i64}),
        json!({"kind": "TaskStartedEvent", "taskId": "task-260825-151015-1bxv", "timestampMs": 1_787_663_415_261_i64}),
        usage(1_787_663_417_205, "claude-haiku-4-5-20251001", 0.00317, [3125, 0, 0, 9]),
        usage(1_787_663_426_600, "claude-fable-5", 0.2388975, [1, 0, 18631, 120]),
        json!({"kind": "SessionA2uxEvent", "event": {"state": "IN_PROGRESS", "agentEvent": {
            "kind": "ContextWindowReportEvent", "percentage": 1.8632, "used": 18632, "size": 1_000_000}},
            "timestampMs": 1_787_663_428_711_i64}),
        usage(1_787_663_438_843, "claude-fable-5", 0.092276, [2, 18631, 4826, 266]),
        usage(1_787_663_807_329, "custom-local", 0.0, [794, 0, 0, 6]),
        json!({"kind": "TaskState", "state": "COMPLETED", "timestampMs": 1_787_663_806_342_i64}),
    ]
    .iter()
    .map(|event| format!("{event}\n"))
    .collect()
}

/// A Devin CLI transcript, resumed once: system and user steps, two agent
/// steps with their metrics, and `final_metrics` (their sum, not read).
fn devin_transcript() -> Value {
    let agent_step = |id: u64, at: &str, prompt: u64, completion: u64, cached: u64| {
        json!({"step_id": id, "timestamp": at, "source": "agent", "message": "done", "model_name": "example-swe-high",
            "reasoning_content": "…", "tool_calls": [],
            "metrics": {"prompt_tokens": prompt, "completion_tokens": completion, "cached_tokens": cached}})
    };
    json!({
        "schema_version": "ATIF-v1.7",
        "session_id": "serene-example",
        "agent": {"name": "devin", "version": "3000.11.3", "model_name": "swe-1.5", "tool_definitions": [], "extra": {}},
        "steps": [
            {"step_id": 1, "timestamp": "2026-10-08T03:00:00.000Z", "source": "system", "message": "You are Devin"},
            {"step_id": 2, "timestamp": "2026-10-08T03:00:01.250Z", "source": "user", "message": "port the build script"},
            agent_step(3, "2026-10-08T03:00:09.100Z", 1240, 96, 600),
            {"step_id": 4, "timestamp": "2026-10-08T03:10:00.000Z", "source": "user", "message": "go on"},
            agent_step(5, "2026-10-08T03:10:40.401+02:00", 2310, 140, 2100),
        ],
        "final_metrics": {"total_prompt_tokens": 3550, "total_completion_tokens": 236, "total_cached_tokens": 2700}
    })
}

/// Mux's ledgers: a workspace of two models with a sub-agent rolled into
/// it, and that sub-agent's own ledger (read too: it counts once).
fn mux_ledgers() -> (Value, Value) {
    let usage = |input: u64, cached: u64, cache_create: u64, output: u64, reasoning: u64| {
        let part = |tokens: u64| json!({"tokens": tokens, "cost_usd": 0.001});
        json!({"input": part(input), "cached": part(cached), "cacheCreate": part(cache_create),
            "output": part(output), "reasoning": part(reasoning)})
    };
    let parent = json!({"version": 1,
        "byModel": {"anthropic:claude-sonnet-4-5": usage(700, 9000, 1500, 150, 30),
            "openai:gpt-5.1": usage(50, 0, 0, 20, 5)},
        "lastRequest": {"model": "anthropic:claude-sonnet-4-5", "usage": usage(300, 4000, 1200, 90, 10),
            "timestamp": 1_796_400_090_000_i64},
        "rolledUpFrom": {"ws-child": {"totalTokens": 75, "inputTokens": 50, "outputTokens": 20,
            "reasoningTokens": 5, "cachedTokens": 0, "cacheCreateTokens": 0, "contextTokens": 50,
            "agentType": "explore", "model": "openai:gpt-5.1", "rolledUpAtMs": 1_796_400_060_000_i64}},
        "tokenStatsCache": {"consumers": [], "totalTokens": 1}});
    let child = json!({"version": 1, "byModel": {"openai:gpt-5.1": usage(50, 0, 0, 20, 5)},
        "lastRequest": {"timestamp": 1_796_400_030_000_i64}});
    (parent, child)
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
