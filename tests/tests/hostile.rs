//! Hostile records planted in every agent's folder at once — a line over
//! the longest line read, a line (or document) of millions of tiny items,
//! a huge database value, an agy blob of millions of tiny protobuf fields —
//! beside each agent's good records: `beectl ingest` and beed both finish,
//! every good record is counted, every bad one is named (file, offset,
//! size), memory stays bounded, and beed still stops on SIGTERM at once.
//! Also: a ledger damaged or emptied is refused by its writers, left as it
//! is, and named by the views.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use bee_tests::every_agent::{Expected, write_every_agent};
use bee_tests::*;
use rusqlite::Connection;
use serde_json::Value;
use std::io::{Seek, SeekFrom, Write};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

const MB: usize = 1 << 20;

/// What a planted file is made of.
#[derive(Clone, Copy)]
enum Part<'a> {
    Bytes(&'a [u8]),
    /// A line of this many bytes and its newline, past the longest line
    /// read: a JSON string's opening, a hole in the file (it reads as NUL
    /// bytes and takes no disk, so dozens of these fit on a small CI
    /// disk), the string's close.
    LongLine(usize),
}

impl<'a, T: AsRef<[u8]> + ?Sized> From<&'a T> for Part<'a> {
    fn from(bytes: &'a T) -> Self {
        Part::Bytes(bytes.as_ref())
    }
}

/// A JSON object of about `bytes` whose keys every reader reads hold
/// millions of tiny items (so a reader that builds what it reads would
/// hold dozens of times the input).
fn tiny_items(bytes: usize) -> Vec<u8> {
    // Each agent's own marker is among the keys, so every reader looks.
    let keys = [
        "type",
        "message",
        "messages",
        "tokens",
        "usage",
        "attributes",
        "sessionId",
        "payload",
        "tokenUsage",
        "token_usage",
        "gen_ai.usage.input_tokens",
        "metadata",
        "request_token_usage",
    ];
    let each = bytes / keys.len() / 2;
    let mut doc = Vec::with_capacity(bytes + 64);
    doc.push(b'{');
    for (n, key) in keys.iter().enumerate() {
        if n > 0 {
            doc.push(b',');
        }
        doc.extend_from_slice(format!("\"{key}\":[").as_bytes());
        for i in 0..each {
            doc.extend_from_slice(if i == 0 { b"0" } else { b",0" });
        }
        doc.push(b']');
    }
    doc.push(b'}');
    doc
}

/// A JSON array of about `bytes` of tiny items (`[0,0,…]`), to be placed
/// where one agent's reader looks.
fn tiny_array(bytes: usize) -> Vec<u8> {
    let mut array = Vec::with_capacity(bytes + 2);
    array.push(b'[');
    for i in 0..bytes / 2 {
        array.extend_from_slice(if i == 0 { b"0" } else { b",0" });
    }
    array.push(b']');
    array
}

fn write_file(path: &Path, parts: &[Part<'_>]) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let mut file = std::fs::File::create(path).unwrap();
    for part in parts {
        match part {
            Part::Bytes(bytes) => file.write_all(bytes).unwrap(),
            Part::LongLine(bytes) => {
                let (open, close) = (b"{\"type\":\"", b"\"}\n");
                file.write_all(open).unwrap();
                file.seek(SeekFrom::Current((bytes - open.len()) as i64)).unwrap();
                file.write_all(close).unwrap();
            }
        }
    }
    drop(file);
    make_quiet(path);
}

/// An agy usage blob of `fields` tiny protobuf fields (varint field 15, value 0).
fn agy_blob(fields: usize) -> Vec<u8> {
    [0x78u8, 0x00].repeat(fields)
}

/// Plants the hostile records in every agent's folder of `home`.
fn plant_hostile(home: &TestHome) {
    let at = |relative: &str| home.path().join(relative);
    let long = Part::LongLine(70 * MB);
    let mut tiny = tiny_items(40 * MB);
    tiny.push(b'\n');
    let mut first_log = None;
    for log in [
        ".claude/projects/-home-dev-app/0bad0000-0000-4000-8000-000000000001.jsonl",
        ".gemini/tmp/app/chats/session-2026-12-05T03-21-0badbad0.jsonl",
        ".qwen/projects/-home-dev-app/chats/hostile.jsonl",
        ".pi/agent/sessions/--home-dev-app--/2026-12-05T03-22-45_hostile.jsonl",
        ".copilot/otel/copilot-2026-12-02.jsonl",
        ".kimi/sessions/2b9f/0bad-session/wire.jsonl",
        ".openclaw/agents/main/sessions/oc-hostile.jsonl",
        ".codex/sessions/2026/12/01/rollout-2026-12-01T10-00-00-0bad0000-0000-4000-8000-000000000001.jsonl",
        ".reasonix/stats/2026-08-05.jsonl",
        ".lingtai/hostile/logs/token_ledger.jsonl",
        ".opencodereview/sessions/home-dev-app/0bad.jsonl",
        ".aside/u/0/sessions/0bad/messages.jsonl",
        ".local/share/muse/sessions/2026/12/06/0bad/session.jsonl",
        ".kimi-code/sessions/wd_app_0bad/session_0bad/agents/main/wire.jsonl",
        ".openclaude/projects/-home-dev-app/0bad0000-0000-4000-8000-000000000002.jsonl",
        ".omp/agent/sessions/--home-dev-app--/2026-12-05T03-22-45_hostile.jsonl",
        ".kiro/sessions/0bad0bad0bad0bad/sess_0bad/messages.jsonl",
    ] {
        // One file at every agent's path (its bytes on disk once): each
        // reader reads it at its own path, its offset kept per path.
        match &first_log {
            None => {
                write_file(&at(log), &[long, (&tiny).into(), b"{\"after\":\"the bad lines\"}\n".into()]);
                first_log = Some(at(log));
            }
            Some(first) => {
                std::fs::create_dir_all(at(log).parent().unwrap()).unwrap();
                std::fs::hard_link(first, at(log)).unwrap();
            }
        }
    }
    // Gemini CLI's telemetry file, named in its settings: a long line, tiny
    // items, and a side call's record whose attribute line is past any
    // attribute's bound (never parsed; the record has no session left).
    let telemetry = at(".gemini/telemetry.log");
    let settings = serde_json::json!({"telemetry": {"outfile": telemetry}}).to_string();
    write_file(&at(".gemini/settings.json"), &[settings.as_bytes().into()]);
    let huge_attribute = [b"    \"session.id\": \"".as_slice(), &vec![b's'; 60 * MB], b"\",\n"].concat();
    write_file(
        &telemetry,
        &[
            long,
            (&tiny).into(),
            b"{\n  \"attributes\": {\n".into(),
            (&huge_attribute).into(),
            b"    \"event.name\": \"gemini_cli.api_response\",\n    \"role\": \"utility_router\"\n  }\n}\n".into(),
        ],
    );
    // Junie reads only its usage events (its marker): the tiny items are in
    // the counters of one.
    let junk = tiny_array(40 * MB);
    write_file(
        &at(".junie/sessions/session-0bad/events.jsonl"),
        &[
            long,
            b"{\"kind\":\"SessionA2uxEvent\",\"event\":{\"agentEvent\":{\"kind\":\"LlmResponseMetadataEvent\",\
              \"modelUsage\":[{\"model\":\"m\",\"inputTokens\":"
                .into(),
            (&junk).into(),
            b",\"outputTokens\":1}]}},\"timestampMs\":1787663417205}\n{\"after\":\"the bad lines\"}\n".into(),
        ],
    );
    // Aider's log is the one its settings name: the bad lines go after its
    // good ones, the tiny items in the model of a reply.
    let aider = at(".aider/analytics.jsonl");
    let good = std::fs::read(&aider).unwrap();
    write_file(
        &aider,
        &[
            (&good).into(),
            long,
            b"{\"event\": \"message_send\", \"properties\": {\"main_model\": ".into(),
            (&junk).into(),
            b"}, \"user_id\": \"u\", \"time\": 1796561080}\n{\"after\":\"the bad lines\"}\n".into(),
        ],
    );
    let tiny_doc = tiny_items(40 * MB);
    for (document, long_name) in [
        (".local/share/amp/threads/T-hostile.json", ".local/share/amp/threads/T-long.json"),
        (".factory/sessions/-home-dev-app/0bad.settings.json", ".factory/sessions/-home-dev-app/0long.settings.json"),
        (
            ".config/manicode/projects/app/chats/2026-12-02T07-00-00/chat-messages.json",
            ".config/manicode/projects/app/chats/2026-12-03T07-00-00/chat-messages.json",
        ),
    ] {
        // Codebuff's document is an array of messages.
        let array = document.ends_with("chat-messages.json");
        let (open, close): (&[u8], &[u8]) = if array { (b"[", b"]") } else { (b"", b"") };
        write_file(&at(document), &[open.into(), (&tiny_doc).into(), close.into()]);
        write_file(&at(long_name), &[long]);
    }
    let extensions = ".config/Code/User/globalStorage";
    let ui_messages: (&[u8], &[u8]) = (b"[{\"ts\":1796310000009,\"say\":", b"}]");
    for (document, long_name, (open, close)) in [
        (
            ".local/share/devin/cli/transcripts/hostile.json".to_owned(),
            ".local/share/devin/cli/transcripts/long.json".to_owned(),
            (
                &b"{\"schema_version\":\"ATIF-v1.7\",\"session_id\":\"hostile\",\"steps\":[{\"step_id\":1,\
                   \"source\":\"agent\",\"metrics\":{\"prompt_tokens\":"[..],
                &b"}}]}"[..],
            ),
        ),
        (
            ".vibe/logs/session/session_20261202_000000_0bad/meta.json".to_owned(),
            ".vibe/logs/session/session_20261202_000000_0long/meta.json".to_owned(),
            (&b"{\"session_id\":\"0bad\",\"stats\":{\"session_prompt_tokens\":"[..], &b"}}"[..]),
        ),
        (
            ".mux/sessions/ws-hostile/session-usage.json".to_owned(),
            ".mux/sessions/ws-long/session-usage.json".to_owned(),
            (&b"{\"version\":1,\"byModel\":{\"m\":"[..], &b"}}"[..]),
        ),
        (
            ".augment/sessions/0bad.json".to_owned(),
            ".augment/sessions/0long.json".to_owned(),
            (
                &b"{\"sessionId\":\"0bad\",\"chatHistory\":[{\"exchange\":{\"request_id\":\"r-bad\",\
                   \"response_nodes\":[{\"type\":10,\"token_usage\":"[..],
                &b"}]}}]}"[..],
            ),
        ),
        (
            ".cline/data/sessions/0bad/0bad.messages.json".to_owned(),
            ".cline/data/sessions/0long/0long.messages.json".to_owned(),
            (
                &b"{\"version\":1,\"agent\":\"lead\",\"sessionId\":\"0bad\",\"messages\":[{\"role\":\"assistant\",\
                   \"id\":\"msg_bad\",\"ts\":1796561348000,\"metrics\":{\"inputTokens\":"[..],
                &b"}}]}"[..],
            ),
        ),
        (
            ".continue/sessions/0bad.json".to_owned(),
            ".continue/sessions/0long.json".to_owned(),
            (
                &b"{\"sessionId\":\"0bad\",\"history\":[{\"message\":{\"role\":\"assistant\",\
                   \"usage\":{\"prompt_tokens\":"[..],
                &b"}}}]}"[..],
            ),
        ),
        (
            format!("{extensions}/saoudrizwan.claude-dev/tasks/0bad/ui_messages.json"),
            format!("{extensions}/saoudrizwan.claude-dev/tasks/0long/ui_messages.json"),
            ui_messages,
        ),
        (
            format!("{extensions}/rooveterinaryinc.roo-cline/tasks/0bad/ui_messages.json"),
            format!("{extensions}/rooveterinaryinc.roo-cline/tasks/0long/ui_messages.json"),
            ui_messages,
        ),
        (
            format!("{extensions}/kilocode.kilo-code/tasks/0bad/ui_messages.json"),
            format!("{extensions}/kilocode.kilo-code/tasks/0long/ui_messages.json"),
            ui_messages,
        ),
        (
            ".config/IBM Bob/User/globalStorage/ibm.bob-code/tasks/0bad/ui_messages.json".to_owned(),
            ".config/IBM Bob/User/globalStorage/ibm.bob-code/tasks/0long/ui_messages.json".to_owned(),
            ui_messages,
        ),
    ] {
        write_file(&at(&document), &[open.into(), (&junk).into(), close.into()]);
        write_file(&at(&long_name), &[long]);
    }
    // A 40 MB value in each agent database's JSON (or text) column.
    let column = String::from_utf8(tiny_items(40 * MB)).unwrap();
    let add = |db: &str, sql: &str| {
        let path = at(db);
        let conn = Connection::open(&path).unwrap();
        conn.execute(sql, [&column]).unwrap();
        drop(conn);
        make_quiet(&path);
    };
    add(".local/share/opencode/opencode.db", "INSERT INTO message VALUES ('m_bad', 'ses_a', 3, 1796119203000, ?1)");
    add(".local/share/kilo/kilo.db", "INSERT INTO message VALUES ('m_bad', 'ses_a', 3, 1796119203000, ?1)");
    add(".local/share/mimocode/mimocode.db", "INSERT INTO message VALUES ('m_bad', 'ses_m', 3, 1796119203000, ?1)");
    add(
        ".meept/metrics.db",
        "INSERT INTO llm_calls (timestamp, provider, model_id, session_id, tokens_sent) \
         VALUES ('2026-12-01T09:05:00Z', 'openai', ?1, 'convC', 5)",
    );
    add(
        ".grok/grok.db",
        "INSERT INTO usage_events (session_id, source, model, input_tokens, output_tokens, total_tokens, created_at) \
         VALUES ('s-1', 'message', ?1, 5, 1, 6, '2026-12-01T10:05:00.000Z')",
    );
    add(
        ".zcode/cli/db/db.sqlite",
        "INSERT INTO model_usage VALUES ('mu-bad', 'sess-1', 't', ?1, 1, 1, 0, 0, 0, 1796115650000, 1796115651000, 2)",
    );
    add(
        ".local/share/goose/sessions/sessions.db",
        "INSERT INTO sessions VALUES ('g_bad', '2026-12-01 13:00:00', 'openai', ?1, 1, 1, 0, 1, 1, 0)",
    );
    add(
        ".hermes/state.db",
        "INSERT INTO sessions (id, source, model, started_at, input_tokens, output_tokens) \
         VALUES ('h_bad', 'cli', ?1, 1796115700.0, 10, 5)",
    );
    let crush = home.path().join("work/app/.crush/crush.db");
    let conn = Connection::open(&crush).unwrap();
    conn.execute(
        "INSERT INTO messages (id, session_id, role, parts, model, created_at, updated_at) \
         VALUES ('bad', 'c1', 'user', ?1, NULL, 1796115611, 1796115611)",
        [&column],
    )
    .unwrap();
    drop(conn);
    make_quiet(&crush);
    // A chat span with good counters and a hostile model name: counted, its
    // model unknown.
    add(
        ".config/Code/User/globalStorage/github.copilot-chat/agent-traces.db",
        "INSERT INTO spans (span_id, trace_id, name, start_time_ms, end_time_ms, operation_name, response_model,
            input_tokens, output_tokens, chat_session_id)
         VALUES ('c-bad', 't1', 'chat', 1796400009000, 1796400009900, 'chat', ?1, 40, 4, 'chat-1')",
    );
    // A call in Copilot CLI's session store with good counters and a
    // 40 MB model name: counted, its model unknown.
    add(
        ".copilot/session-store.db",
        "INSERT INTO assistant_usage_events (session_id, turn_index, model, input_tokens, output_tokens,
            created_at) VALUES ('s-chat', 1, ?1, 40, 4, '2026-12-03T12:40:00.000Z')",
    );
    // A 40 MB conversation in Warp's state.
    add(
        ".local/state/warp-terminal/warp.sqlite",
        "INSERT INTO agent_conversations (conversation_id, conversation_data, last_modified_at)
         VALUES ('c-bad', ?1, '2026-10-09 05:00:00')",
    );
    // A 40 MB value in a Windsurf workspace's state, which nothing reads.
    add(
        ".config/Windsurf/User/workspaceStorage/9f1e2d3c4b5a69788796a5b4c3d2e1f0/state.vscdb",
        "INSERT INTO ItemTable (key, value) VALUES ('workbench.panel.aichat.view.aichat.chatdata', ?1)",
    );
    // A 40 MB bubble in Cursor's state and a 40 MB thread in Zed's.
    add(
        ".config/Cursor/User/globalStorage/state.vscdb",
        "INSERT INTO cursorDiskKV (key, value) VALUES ('bubbleId:c-bad:b-bad', ?1)",
    );
    add(
        ".local/share/zed/threads/threads.db",
        "INSERT INTO threads (id, summary, updated_at, data_type, data)
         VALUES ('t-bad', 's', '2026-12-04T12:00:00+00:00', 'json', ?1)",
    );
    let agy = at(".gemini/antigravity-cli/conversations/0f9d2c44-5b1e-4c8a-9e61-2d7f3a8b9c10.db");
    let conn = Connection::open(&agy).unwrap();
    conn.execute("INSERT INTO gen_metadata (idx, data) VALUES (3, ?1)", [agy_blob(25_000_000)]).unwrap();
    drop(conn);
    make_quiet(&agy);
}

/// Each agent's responses in the ledger, as `beectl usage` counts them.
fn assert_every_good_record_counted(home: &TestHome, expected: &[Expected]) {
    for agent in expected {
        let report =
            parse_json_line(&home.beectl(&["usage", "--provider", agent.agent, "--since", "2026-01-01"]).stdout);
        // Goose's, Hermes's, Copilot in VS Code's, Copilot CLI's, Meept's,
        // ZCode's and Grok CLI's hostile rows are sessions or calls with
        // good counters and a hostile model config or name: counted, their
        // model unknown.
        let hostile_model = ["goose", "hermes", "copilot-vs", "copilot", "meept", "zcode", "grok-cli"];
        let responses = agent.responses + u64::from(hostile_model.contains(&agent.agent));
        assert_eq!(report["totals"]["responses"], responses, "{}: {report}", agent.agent);
    }
}

/// The peak resident memory `/usr/bin/time -v` reports, in KiB.
fn peak_kib(stderr: &str) -> u64 {
    let line = stderr.lines().find(|line| line.contains("Maximum resident set size")).expect("GNU time's report");
    line.rsplit(':').next().unwrap().trim().parse().unwrap()
}

fn named(summary: &Value, agent: &str, reason: &str) -> bool {
    summary["skipped"]
        .as_array()
        .is_some_and(|skipped| skipped.iter().any(|s| s["agent"] == agent && s["reason"] == reason))
}

#[test]
fn hostile_records_in_every_agent_folder_cost_only_themselves() {
    assert!(Path::new("/usr/bin/time").exists(), "this test needs GNU time (.ci/run installs it)");
    let home = TestHome::new();
    let expected = write_every_agent(&home);
    plant_hostile(&home);
    let mut ingest = home.command("/usr/bin/time");
    ingest.args(["-v", bin("beectl").to_str().unwrap(), "ingest"]);
    let started = Instant::now();
    let output = ingest.output().unwrap();
    let took = started.elapsed();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "beectl ingest finished: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    let report = parse_json_line(&output.stdout);
    let summary = &report["summary"];
    let peak = peak_kib(&stderr);
    eprintln!("beectl ingest over every hostile record: {took:?}, peak RSS {} MiB", peak / 1024);
    assert!(peak < 256 * 1024, "peak RSS {peak} KiB: {summary}");
    // Each bad record is named: the long lines by where they are.
    for agent in [
        "claude",
        "gemini",
        "qwen",
        "pi",
        "copilot",
        "kimi",
        "openclaw",
        "codex",
        "junie",
        "aider",
        "reasonix",
        "lingtai",
        "opencodereview",
        "aside",
        "muse",
        "kimi-code",
        "openclaude",
        "omp",
        "kiro",
    ] {
        assert!(named(summary, agent, "oversized_line"), "{agent}'s long line named: {summary}");
    }
    let documents =
        ["amp", "droid", "codebuff", "devin", "mux", "cline", "roo", "kilocode", "continue", "augment", "bob", "vibe"];
    for agent in ["cursor", "zed"] {
        assert!(named(summary, agent, "too_complex"), "{agent}'s tiny items named: {summary}");
    }
    let lines = ["gemini", "qwen", "pi", "copilot", "kimi", "openclaw", "junie", "aider"];
    for agent in lines.into_iter().chain(documents) {
        assert!(named(summary, agent, "too_complex"), "{agent}'s tiny items named: {summary}");
    }
    for agent in documents {
        assert!(named(summary, agent, "oversized_document"), "{agent}'s long document named: {summary}");
    }
    let long = summary["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["agent"] == "claude" && s["reason"] == "oversized_line")
        .unwrap();
    assert_eq!((long["offset"].as_u64(), long["bytes"].as_u64()), (Some(0), Some(70 * MB as u64 + 3)), "{long}");
    assert!(long["file"].as_str().unwrap().ends_with("0bad0000-0000-4000-8000-000000000001.jsonl"), "{long}");
    assert_every_good_record_counted(&home, &expected);

    // beed over the same home, from an empty ledger: it finishes, counts the
    // same, stays within the bound and stops on SIGTERM at once.
    std::fs::remove_dir_all(home.bee_dir().join("usage/ledger-v1")).unwrap();
    // beed as shipped (beectl under that name), whose memory is the bound's.
    let daemon = home.start_shipped_daemon_with(&["--ingest-every", "1"]);
    let claude = expected.iter().find(|agent| agent.agent == "claude").unwrap();
    // A bound on the wait, not a measure of speed: on a loaded machine a
    // pass over every agent's hostile records takes minutes.
    assert!(
        eventually(Duration::from_secs(360), || {
            let report = parse_json_line(&home.beectl(&["usage", "--provider", "claude"]).stdout);
            report["totals"]["responses"] == claude.responses
        }),
        "beed ingested past the hostile records: {}",
        daemon.log()
    );
    let status = std::fs::read_to_string(format!("/proc/{}/status", daemon.pid())).unwrap();
    let peak: u64 = status
        .lines()
        .find(|line| line.starts_with("VmHWM:"))
        .and_then(|line| line.split_whitespace().nth(1)?.parse().ok())
        .unwrap();
    eprintln!("beed over every hostile record: peak RSS {} MiB", peak / 1024);
    assert!(peak < 256 * 1024, "beed's peak RSS {peak} KiB");
    let health = tcp_or_socket_health(&home);
    assert!(health.contains("\"ok\""), "{health}");
    let stopping = Instant::now();
    assert_eq!(daemon.stop(), Some(0));
    assert!(stopping.elapsed() < Duration::from_secs(2), "beed stopped in {:?}", stopping.elapsed());
    assert_every_good_record_counted(&home, &expected);
}

/// `/health` over beed's socket.
fn tcp_or_socket_health(home: &TestHome) -> String {
    let (status, _, body) = raw_http(&home.socket(), &get_request(bee_proto::events::HEALTH_PATH, "localhost", ""));
    format!("{status} {}", String::from_utf8_lossy(&body))
}

/// A line over the bound in a file alone, and a line longer than a read
/// chunk but within the bound right after it: both read as they are.
#[test]
fn a_line_past_the_bound_is_named_and_reading_goes_on() {
    let home = TestHome::new();
    let session = "7a1e0000-0000-4000-8000-000000000002";
    let good = claude_response_line(session, "msg_after", "req_after", "2026-12-01T10:00:00.000Z", 20, 40);
    let path = home.path().join(format!(".claude/projects/-home-dev-app/{session}.jsonl"));
    write_file(&path, &[Part::LongLine(65 * MB), good.as_bytes().into()]);
    let output = home.beectl(&["ingest"]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let report = parse_json_line(&output.stdout);
    assert_eq!(report["summary"]["skippedRecords"], 1, "{report}");
    assert!(named(&report["summary"], "claude", "oversized_line"), "{report}");
    let usage = parse_json_line(&home.beectl(&["usage", "--provider", "claude", "--since", "2026-01-01"]).stdout);
    assert_eq!(usage["totals"]["responses"], 1, "the line after the long one is read: {usage}");
}

/// An index of the ledger (its read offsets') damaged by one flipped bit: `beectl usage`
/// refuses it, beed refuses to start on it, `beectl ingest` appends
/// nothing, and the file is left byte for byte as it was.
#[test]
fn a_damaged_ledger_is_refused_by_every_writer_and_left_as_it_is() {
    let home = TestHome::new();
    write_every_agent(&home);
    assert!(home.beectl(&["ingest"]).status.success());
    let db = home.bee_dir().join("usage/ledger-v1/ledger.sqlite3");
    // Checkpointed, so the damage is in the file every open reads.
    Connection::open(&db).unwrap().execute_batch("PRAGMA wal_checkpoint(TRUNCATE)").unwrap();
    let conn = Connection::open(&db).unwrap();
    let (root, page_size): (i64, i64) = (
        conn.query_row(
            "SELECT rootpage FROM sqlite_master WHERE type = 'index' AND tbl_name = 'ingest_offset' LIMIT 1",
            [],
            |row| row.get(0),
        )
        .unwrap(),
        conn.query_row("PRAGMA page_size", [], |row| row.get(0)).unwrap(),
    );
    drop(conn);
    let mut bytes = std::fs::read(&db).unwrap();
    // A byte in the last cell of the index's root page: its key, not its header.
    let at = (root as usize) * (page_size as usize) - 20;
    bytes[at] ^= 0x55;
    std::fs::write(&db, &bytes).unwrap();
    let integrity: String =
        Connection::open(&db).unwrap().query_row("PRAGMA integrity_check", [], |row| row.get(0)).unwrap();
    assert_ne!(integrity, "ok", "the flip damaged the index");

    let ingest = home.beectl(&["ingest"]);
    assert_eq!(ingest.status.code(), Some(5), "{}", String::from_utf8_lossy(&ingest.stdout));
    assert!(String::from_utf8_lossy(&ingest.stdout).contains("corrupt"), "{:?}", ingest);
    let (code, said) = refused_start(&home);
    assert_eq!(code, Some(5), "beed refuses: {said}");
    assert!(said.contains("corrupt") && said.contains("move it aside"), "beed says what to do: {said}");
    assert_eq!(std::fs::read(&db).unwrap(), bytes, "the damaged ledger is left byte for byte");
}

/// A ledger that held records, emptied to 0 bytes or removed: beed and
/// `beectl ingest` refuse to build a new one in silence, and every view
/// names the loss.
#[test]
fn a_ledger_emptied_or_removed_after_holding_records_is_named_not_rebuilt() {
    for damage in ["emptied", "removed"] {
        let home = TestHome::new();
        write_every_agent(&home);
        assert!(home.beectl(&["ingest"]).status.success());
        let db = home.bee_dir().join("usage/ledger-v1/ledger.sqlite3");
        assert!(home.bee_dir().join("usage/ledger-v1/held-records").exists(), "the ledger notes it holds records");
        for side in ["-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{side}", db.display()));
        }
        match damage {
            "emptied" => std::fs::write(&db, b"").unwrap(),
            _ => std::fs::remove_file(&db).unwrap(),
        }
        let ingest = home.beectl(&["ingest"]);
        assert_eq!(ingest.status.code(), Some(5), "{damage}: {}", String::from_utf8_lossy(&ingest.stdout));
        for view in [&["usage"][..], &["quota", "--json"], &["status", "--json"], &["top", "--json"]] {
            let output = home.beectl(view);
            let said = String::from_utf8_lossy(&output.stdout).into_owned() + &String::from_utf8_lossy(&output.stderr);
            assert!(said.contains("corrupt") && said.contains("held records"), "{damage}: {view:?} names it: {said}");
        }
        let (code, said) = refused_start(&home);
        assert_eq!(code, Some(5), "{damage}: beed refuses: {said}");
        assert!(said.contains("held records"), "{damage}: {said}");
        match damage {
            "emptied" => assert_eq!(std::fs::metadata(&db).unwrap().len(), 0, "left as it is"),
            _ => assert!(!db.exists(), "nothing built in its place"),
        }
        // The way out it names: the marker removed, a new ledger is built.
        std::fs::remove_file(home.bee_dir().join("usage/ledger-v1/held-records")).unwrap();
        if damage == "emptied" {
            std::fs::remove_file(&db).unwrap();
        }
        assert!(home.beectl(&["ingest"]).status.success());
        let usage = parse_json_line(&home.beectl(&["usage", "--since", "2026-01-01"]).stdout);
        assert!(usage["totals"]["responses"].as_u64().unwrap() > 0, "{usage}");
    }
}

/// A pass over the agents' logs that fails (the ledger cannot be written)
/// leaves beed up, and `/health` says `degraded` with the reason, never
/// `ok` while nothing is ingested.
#[test]
fn health_says_degraded_while_the_logs_cannot_be_ingested() {
    let home = TestHome::new();
    let session = "7a1e0000-0000-4000-8000-000000000003";
    let log = home.path().join(format!(".claude/projects/-home-dev-app/{session}.jsonl"));
    let line = |id: &str| claude_response_line(session, id, &format!("req_{id}"), "2026-12-01T10:00:00.000Z", 20, 40);
    write_file(&log, &[line("msg_1").as_bytes().into()]);
    let daemon = home.start_daemon_with(&["--ingest-every", "1"]);
    assert!(eventually(Duration::from_secs(20), || tcp_or_socket_health(&home).starts_with("200")));
    assert!(eventually(Duration::from_secs(20), || tcp_or_socket_health(&home).contains("\"status\":\"ok\"")));
    let ledger = home.bee_dir().join("usage/ledger-v1");
    // Nothing of the ledger can be written: its files, nor new ones beside.
    let mut files = vec![ledger.join("ledger.sqlite3"), ledger.clone()];
    files.extend(
        ["-wal", "-shm"].map(|side| ledger.join(format!("ledger.sqlite3{side}"))).into_iter().filter(|f| f.exists()),
    );
    let frozen = ImmutableFiles::new(&files);
    write_file(&log, &[line("msg_1").as_bytes().into(), line("msg_2").as_bytes().into()]);
    assert!(
        eventually(Duration::from_secs(30), || tcp_or_socket_health(&home).contains("\"status\":\"degraded\"")),
        "{}",
        tcp_or_socket_health(&home)
    );
    let health = tcp_or_socket_health(&home);
    assert!(health.starts_with("200") && health.contains("the last ingestion pass failed"), "{health}");
    drop(frozen);
    assert!(
        eventually(Duration::from_secs(30), || tcp_or_socket_health(&home).contains("\"status\":\"ok\"")),
        "{}",
        tcp_or_socket_health(&home)
    );
    daemon.stop();
}

/// Links, FIFOs and sockets in an agent's folder are never followed nor
/// opened — and never passed over in silence: `beectl agents` and `beectl
/// daemon status` list each, with what it is.
#[test]
fn links_fifos_and_sockets_in_an_agents_folder_are_listed() {
    let home = TestHome::new();
    let projects = home.path().join(".claude/projects/-home-dev-app");
    let session = "7a1e0000-0000-4000-8000-000000000004";
    let good = claude_response_line(session, "msg_1", "req_1", "2026-12-01T10:00:00.000Z", 20, 40);
    write_file(&projects.join(format!("{session}.jsonl")), &[good.as_bytes().into()]);
    let outside = home.path().join("elsewhere.jsonl");
    let other = claude_response_line(session, "msg_outside", "req_outside", "2026-12-01T10:00:00.000Z", 20, 40);
    std::fs::write(&outside, other.as_bytes()).unwrap();
    std::os::unix::fs::symlink(&outside, projects.join("linked.jsonl")).unwrap();
    assert!(std::process::Command::new("mkfifo").arg(projects.join("pipe.jsonl")).status().unwrap().success());
    let _socket = std::os::unix::net::UnixListener::bind(projects.join("socket.jsonl")).unwrap();
    let listed = |entries: &Value| -> Vec<(String, String)> {
        let mut found: Vec<(String, String)> = entries
            .as_array()
            .unwrap()
            .iter()
            .map(|entry| {
                let name = entry["path"].as_str().unwrap().rsplit('/').next().unwrap().to_owned();
                (name, entry["kind"].as_str().unwrap().to_owned())
            })
            .collect();
        found.sort();
        found
    };
    let expected: Vec<(String, String)> =
        [("linked.jsonl", "link"), ("pipe.jsonl", "fifo"), ("socket.jsonl", "socket")]
            .map(|(name, kind)| (name.to_owned(), kind.to_owned()))
            .to_vec();
    let agents = parse_json_line(&home.beectl(&["agents", "--json"]).stdout);
    let claude = agents["agents"].as_array().unwrap().iter().find(|row| row["agent"] == "claude").unwrap();
    assert_eq!(listed(&claude["skippedFiles"]), expected, "{claude}");
    assert_eq!(claude["files"], 1, "only the regular file is a record file: {claude}");
    let status = parse_json_line(&home.beectl(&["daemon", "status", "--json"]).stdout);
    let lag = status["ingestion"].as_array().unwrap().iter().find(|lag| lag["provider"] == "claude").unwrap();
    assert_eq!(listed(&lag["skippedFiles"]), expected, "{status}");
    // The link's target was never read: one response, the folder's own.
    let usage = parse_json_line(&home.beectl(&["usage", "--provider", "claude", "--since", "2026-01-01"]).stdout);
    assert_eq!(usage["totals"]["responses"], 1, "{usage}");
}

/// A log beed cannot read (beed runs as another user here, uid 65534, so
/// a root-only file is unreadable to it) is warned about once, not once
/// every pass, and once more after it changes.
#[test]
fn an_unreadable_log_is_warned_about_once_per_change() {
    assert!(rustix::process::geteuid().is_root(), "this test runs beed as uid 65534: run it as root, as CI does");
    let home = TestHome::new();
    let projects = home.path().join(".claude/projects/-home-dev-app");
    let session = "7a1e0000-0000-4000-8000-000000000005";
    let good = claude_response_line(session, "msg_1", "req_1", "2026-12-01T10:00:00.000Z", 20, 40);
    write_file(&projects.join(format!("{session}.jsonl")), &[good.as_bytes().into()]);
    let locked = projects.join("7a1e0000-0000-4000-8000-000000000006.jsonl");
    write_file(&locked, &[good.as_bytes().into()]);
    let chown = |path: &Path| {
        assert!(Command::new("chown").args(["-R", "65534:65534"]).arg(path).status().unwrap().success());
    };
    chown(home.path());
    // The locked log stays root's, readable by nobody else.
    assert!(Command::new("chown").args(["0:0"]).arg(&locked).status().unwrap().success());
    std::fs::set_permissions(&locked, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    let log = home.path().join("beed-as-nobody.log");
    let mut beed = home
        .command("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(bin("beed"))
        .args(["--ingest-every", "1"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let warnings = || std::fs::read_to_string(&log).unwrap_or_default().matches("log not readable").count();
    assert!(eventually(Duration::from_secs(30), || warnings() >= 1), "{}", std::fs::read_to_string(&log).unwrap());
    // Several passes later: still one warning.
    std::thread::sleep(Duration::from_secs(4));
    assert_eq!(warnings(), 1, "{}", std::fs::read_to_string(&log).unwrap());
    // The file changes: one more warning, then quiet again.
    write_file(&locked, &[good.as_bytes().into(), good.as_bytes().into()]);
    std::fs::set_permissions(&locked, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    assert!(eventually(Duration::from_secs(30), || warnings() == 2), "{}", std::fs::read_to_string(&log).unwrap());
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(warnings(), 2, "{}", std::fs::read_to_string(&log).unwrap());
    rustix::process::kill_process(rustix::process::Pid::from_child(&beed), rustix::process::Signal::TERM).unwrap();
    assert!(beed.wait().unwrap().success());
}
