//! Mocks of the provider APIs the real CLIs talk to — Anthropic's Messages
//! API for Claude Code, OpenAI's Responses API for Codex — each recording
//! exactly what it served. A ledger figure is right when it equals what the
//! mock served, never when it equals another Bee figure.
//!
//! Both stream (SSE) with realistic usage (every response different), call
//! a tool when the newest user message says `TOOL` (so one turn makes two
//! requests), send rate-limit headers, and refuse with a usage-limit 429
//! when the newest user message says `LIMIT` (`LIMIT-NOHEADERS`: without
//! rate-limit headers); each refuses with a 400 that is no limit (an API
//! error the CLI does not retry) when it says `APIERROR`. A
//! conversation that says `SLOW:<ms>` anywhere is
//! answered that many milliseconds late, request by request, so a measured
//! duration has a floor the test knows.

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The real Claude Code CLI's native binary (pinned in `tests/node`,
/// installed by `.ci/run`), or `BEE_TEST_CLAUDE`.
pub fn claude_cli() -> PathBuf {
    pinned_cli("BEE_TEST_CLAUDE", "node_modules/@anthropic-ai/claude-code-linux-x64/claude")
}

/// The real Codex CLI's native binary (pinned in `tests/node`), or `BEE_TEST_CODEX`.
pub fn codex_cli() -> PathBuf {
    pinned_cli("BEE_TEST_CODEX", "node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex")
}

/// The MCP Inspector's command-line client (pinned in `tests/node`), or
/// `BEE_TEST_MCP_INSPECTOR`.
pub fn mcp_inspector_cli() -> PathBuf {
    pinned_cli("BEE_TEST_MCP_INSPECTOR", "node_modules/.bin/mcp-inspector")
}

fn pinned_cli(variable: &str, under_node: &str) -> PathBuf {
    if let Some(path) = std::env::var_os(variable) {
        return path.into();
    }
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("node").join(under_node);
    assert!(path.exists(), "this test needs the real CLI: `npm ci --prefix tests/node` (.ci/run does it)");
    path
}

/// The API key the CLIs are given: not a real one.
pub const TEST_API_KEY: &str = "sk-ant-test-not-a-real-key";

/// One response a mock served, with the counters it reported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Served {
    pub id: String,
    pub model: String,
    pub input: u64,
    /// Anthropic: cache writes. OpenAI: 0.
    pub cache_creation: u64,
    /// Anthropic: cache reads. OpenAI: cached input (part of input).
    pub cache_read: u64,
    pub output: u64,
    /// OpenAI: reasoning (part of output). Anthropic: 0.
    pub reasoning: u64,
    /// The request offered no tools or asked for JSON: an agent's side
    /// call (a title, a route), which some agents' records leave out.
    pub side: bool,
}

impl Served {
    /// The total as each provider defines it (Anthropic's four counters;
    /// OpenAI's input + output).
    pub fn total(&self, anthropic: bool) -> u64 {
        if anthropic {
            self.input + self.cache_creation + self.cache_read + self.output
        } else {
            self.input + self.output
        }
    }
}

#[derive(Default)]
struct Log {
    served: Vec<Served>,
    refused: u64,
    requests: Vec<(String, Value)>,
}

/// A running mock provider API on a loopback port.
pub struct MockProvider {
    pub port: u16,
    api: Api,
    log: Arc<Mutex<Log>>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Api {
    Anthropic,
    OpenAi,
    /// OpenAI's Chat Completions API (`/v1/chat/completions`).
    Chat,
    /// Google's Gemini API (`/v1beta/models/M:generateContent`).
    Gemini,
    /// Augment's own service (`/chat-stream`, NDJSON), which Auggie calls
    /// its tenant: Augment is its provider.
    Augment,
}

impl MockProvider {
    /// Anthropic's Messages API (`ANTHROPIC_BASE_URL`).
    pub fn anthropic() -> MockProvider {
        MockProvider::start(Api::Anthropic)
    }

    /// OpenAI's Responses API (a Codex `model_providers` entry, `/v1`).
    pub fn openai() -> MockProvider {
        MockProvider::start(Api::OpenAi)
    }

    /// OpenAI's Chat Completions API, as OpenAI-compatible providers serve it (`/v1`).
    pub fn chat() -> MockProvider {
        MockProvider::start(Api::Chat)
    }

    /// Google's Gemini API (`GOOGLE_GEMINI_BASE_URL`).
    pub fn gemini() -> MockProvider {
        MockProvider::start(Api::Gemini)
    }

    /// Augment's service, as Auggie's tenant (`AUGMENT_SESSION_AUTH`).
    pub fn augment() -> MockProvider {
        MockProvider::start(Api::Augment)
    }

    fn start(api: Api) -> MockProvider {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
        let port = listener.local_addr().expect("local address").port();
        let log = Arc::new(Mutex::new(Log::default()));
        let shared = log.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let log = shared.clone();
                std::thread::spawn(move || serve(api, stream, &log));
            }
        });
        MockProvider { port, api, log }
    }

    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Points a Claude Code command at this mock (Anthropic's API), with a
    /// test key and nothing else sent anywhere.
    pub fn point_claude(&self, command: &mut std::process::Command) {
        command
            .env("ANTHROPIC_BASE_URL", self.base_url())
            .env("ANTHROPIC_API_KEY", TEST_API_KEY)
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .env("DISABLE_TELEMETRY", "1")
            .env("DISABLE_ERROR_REPORTING", "1")
            .env("DISABLE_AUTOUPDATER", "1");
    }

    /// Every response served so far, in order.
    pub fn served(&self) -> Vec<Served> {
        self.log.lock().map(|log| log.served.clone()).unwrap_or_default()
    }

    /// What was served, summed in `beectl usage`'s shape: `responses` and
    /// the token counters this provider reports (its total as it defines it).
    pub fn served_usage(&self) -> Value {
        self.usage_of(&self.served())
    }

    /// [`MockProvider::served_usage`] of the responses `keep` keeps.
    pub fn served_usage_of(&self, keep: impl Fn(&Served) -> bool) -> Value {
        self.usage_of(&self.served().into_iter().filter(|served| keep(served)).collect::<Vec<_>>())
    }

    fn usage_of(&self, served: &[Served]) -> Value {
        let sum = |f: fn(&Served) -> u64| -> u64 { served.iter().map(f).sum() };
        match self.api {
            // Augment reports Anthropic's four counters.
            Api::Anthropic | Api::Augment => json!({
                "responses": served.len(),
                "inputTokens": sum(|s| s.input),
                "cacheCreationInputTokens": sum(|s| s.cache_creation),
                "cacheReadInputTokens": sum(|s| s.cache_read),
                "outputTokens": sum(|s| s.output),
                "totalTokens": sum(|s| s.total(true)),
            }),
            // Bee's one set of columns: OpenAI's input includes its cached
            // part, which is shown once, under cache reads.
            Api::OpenAi | Api::Chat | Api::Gemini => json!({
                "responses": served.len(),
                "inputTokens": sum(|s| s.input - s.cache_read),
                "cacheReadInputTokens": sum(|s| s.cache_read),
                "outputTokens": sum(|s| s.output),
                "reasoningOutputTokens": sum(|s| s.reasoning),
                "totalTokens": sum(|s| s.total(false)),
            }),
        }
    }

    /// Requests refused: with a usage-limit 429, or (`APIERROR`) a 400.
    pub fn refused(&self) -> u64 {
        self.log.lock().map(|log| log.refused).unwrap_or(0)
    }

    /// Every request: its path and JSON body.
    pub fn requests(&self) -> Vec<(String, Value)> {
        self.log.lock().map(|log| log.requests.clone()).unwrap_or_default()
    }
}

/// A `beectl usage` report's rows summed over the fields of `like` (as
/// [`MockProvider::served_usage`] spells them): `responses` from the rows,
/// the rest from their tokens; an unreported counter adds 0.
pub fn usage_sums(report: &Value, like: &Value) -> Value {
    let rows = report["rows"].as_array().map(Vec::as_slice).unwrap_or_default();
    let sums = like.as_object().into_iter().flatten().map(|(field, _)| {
        let cell = |row: &Value| if field == "responses" { row[field].as_u64() } else { row["tokens"][field].as_u64() };
        (field.clone(), json!(rows.iter().map(|row| cell(row).unwrap_or(0)).sum::<u64>()))
    });
    Value::Object(sums.collect())
}

/// Every row of a `beectl usage` report, and its totals: input + cache
/// writes + cache reads + output equal the total (an unreported column
/// adds 0), whichever agents the row holds.
pub fn assert_columns_add_up(report: &Value) {
    let rows = report["rows"].as_array().map(Vec::as_slice).unwrap_or_default();
    for row in rows.iter().chain([&report["totals"]]) {
        let t = &row["tokens"];
        let columns = ["inputTokens", "cacheCreationInputTokens", "cacheReadInputTokens", "outputTokens"]
            .map(|column| t[column].as_u64());
        // A row with no counters at all (a cost line alone) has no total
        // either; nor has a row with a part of unknown size (`partial`).
        let sum = columns.iter().any(Option::is_some).then(|| columns.iter().flatten().sum::<u64>());
        let partial = row["partialParts"].as_u64().unwrap_or(0) > 0;
        if !(partial && t["totalTokens"].is_null()) {
            assert_eq!(sum, t["totalTokens"].as_u64(), "columns {columns:?} of {row}");
        }
        assert!(t["cachedInputTokens"].is_null(), "cached input is shown once, as cache reads: {row}");
    }
}

/// The issues a usage report over responses of `models` (and nothing
/// uncounted) must carry: none, or `unpriced_model` naming exactly the
/// models the bundled price table does not price.
pub fn expected_usage_issues(report: &Value, models: &[String]) -> (Value, Value) {
    let table = bee_daemon::ledger::views::prices::PriceTable::bundled();
    let mut unpriced: Vec<&String> = models.iter().filter(|m| table.lookup(m).is_none()).collect();
    unpriced.sort();
    unpriced.dedup();
    let issues = if unpriced.is_empty() { json!([]) } else { json!(["unpriced_model"]) };
    (json!([report["issues"].clone(), report["unpricedModels"].clone()]), json!([issues, unpriced]))
}

/// The newest prompt of the conversation (the CLIs' own context messages,
/// which start with `<`, aside), and whether a tool result answered it.
fn newest_user_text(api: Api, body: &Value) -> (String, bool) {
    let items = match api {
        Api::Anthropic | Api::Chat => body["messages"].as_array(),
        Api::OpenAi => body["input"].as_array(),
        Api::Gemini => body["contents"].as_array(),
        // Its requests are read by `augment_answer`, never here.
        Api::Augment => None,
    };
    let Some(items) = items else { return (String::new(), false) };
    let mut answered = false;
    for item in items.iter().rev() {
        let is_result = match api {
            Api::Anthropic => {
                item["content"].as_array().is_some_and(|parts| parts.iter().any(|p| p["type"] == "tool_result"))
            }
            Api::OpenAi => item["type"] == "function_call_output",
            Api::Chat => item["role"] == "tool",
            Api::Gemini => {
                item["parts"].as_array().is_some_and(|parts| parts.iter().any(|p| p.get("functionResponse").is_some()))
            }
            // Its requests are read by `augment_answer`, never here.
            Api::Augment => false,
        };
        if is_result {
            answered = true;
            continue;
        }
        if item["role"] == "assistant" || item["role"] == "model" || item["type"] == "function_call" {
            if answered {
                continue;
            }
            // The model already answered the newest prompt: a new turn
            // without one of ours.
            return (String::new(), false);
        }
        if item["role"] == "user" {
            let text = match item.get("content").unwrap_or(&item["parts"]) {
                Value::String(text) => text.clone(),
                Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect::<Vec<_>>().join(" "),
                _ => String::new(),
            };
            if text.contains("TOOL")
                || text.contains("LIMIT")
                || text.contains("APIERROR")
                || text.contains("MCP:")
                || !text.trim_start().starts_with('<')
            {
                return (text, answered);
            }
        }
    }
    (String::new(), answered)
}

fn serve(api: Api, stream: TcpStream, log: &Mutex<Log>) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(30)));
    let Ok(clone) = stream.try_clone() else { return };
    let mut reader = BufReader::new(clone);
    let mut stream = stream;
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
        return;
    }
    let mut length = 0usize;
    let mut request_id = None;
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).unwrap_or(0) == 0 || header == "\r\n" {
            break;
        }
        if let Some((name, value)) = header.split_once(':') {
            if name.eq_ignore_ascii_case("content-length") {
                length = value.trim().parse().unwrap_or(0);
            } else if name.eq_ignore_ascii_case("x-request-id") {
                request_id = Some(value.trim().to_owned());
            }
        }
    }
    let mut body = vec![0u8; length];
    let _ = reader.read_exact(&mut body);
    let path = request_line.split_whitespace().nth(1).unwrap_or("").to_owned();
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let Ok(mut log) = log.lock() else { return };
    log.requests.push((path.clone(), body.clone()));
    let model = body["model"].as_str().unwrap_or("unknown-model").to_owned();
    let answer = match api {
        Api::Anthropic if path.contains("count_tokens") => Answer::json(200, json!({"input_tokens": 25})),
        Api::Anthropic if path.starts_with("/v1/messages") && body["stream"] == true => {
            anthropic_answer(&body, &model, &mut log)
        }
        Api::OpenAi if path.starts_with("/v1/responses") => openai_answer(&body, &model, &mut log),
        Api::Chat if path.starts_with("/v1/chat/completions") => chat_answer(&body, &model, &mut log),
        Api::Gemini if path.contains(":generateContent") || path.contains(":streamGenerateContent") => {
            let model = path.split("models/").nth(1).and_then(|rest| rest.split(':').next()).unwrap_or("unknown-model");
            gemini_answer(&body, model, path.contains("stream"), &mut log)
        }
        Api::Augment if path.starts_with("/get-models") => augment_models(),
        Api::Augment if path.starts_with("/agents/list-remote-tools") => Answer::json(200, json!({"tools": []})),
        Api::Augment if path.starts_with("/chat-stream") => augment_answer(&body, request_id, &mut log),
        // Its events, metrics and checkpoints: taken, answered with nothing.
        Api::Augment => Answer::json(200, json!({})),
        _ => Answer::json(404, json!({})),
    };
    drop(log);
    let delay = body
        .to_string()
        .split("SLOW:")
        .nth(1)
        .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next().and_then(|ms| ms.parse::<u64>().ok()));
    if let Some(ms) = delay {
        std::thread::sleep(Duration::from_millis(ms.min(10_000)));
    }
    let mut head = format!(
        "HTTP/1.1 {} {}\r\ncontent-type: {}\r\ncontent-length: {}\r\nconnection: close\r\n",
        answer.status,
        if answer.status == 200 { "OK" } else { "Error" },
        answer.content_type,
        answer.body.len()
    );
    for (name, value) in &answer.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(answer.body.as_bytes());
}

struct Answer {
    status: u16,
    content_type: &'static str,
    headers: Vec<(String, String)>,
    body: String,
}

impl Answer {
    fn json(status: u16, body: Value) -> Answer {
        Answer { status, content_type: "application/json", headers: Vec::new(), body: body.to_string() }
    }
}

fn sse(events: &[(String, Value)]) -> String {
    events.iter().map(|(name, data)| format!("event: {name}\ndata: {data}\n\n")).collect()
}

fn anthropic_answer(body: &Value, model: &str, log: &mut Log) -> Answer {
    let (text, answered) = newest_user_text(Api::Anthropic, body);
    if text.contains("APIERROR") {
        log.refused += 1;
        let mut answer = Answer::json(
            400,
            json!({"type": "error", "error": {"type": "invalid_request_error", "message": "mock: the request was refused"}}),
        );
        answer.headers.push(("x-should-retry".into(), "false".into()));
        return answer;
    }
    if text.contains("LIMIT") {
        log.refused += 1;
        let mut answer = Answer::json(
            429,
            json!({"type": "error", "error": {"type": "rate_limit_error", "message": "Rate limited"}}),
        );
        answer.headers.push(("x-should-retry".into(), "false".into()));
        if !text.contains("NOHEADERS") {
            for (name, value) in [
                ("anthropic-ratelimit-unified-status", "rejected"),
                ("anthropic-ratelimit-unified-representative-claim", "five_hour"),
                ("anthropic-ratelimit-unified-5h-utilization", "1.0"),
                ("anthropic-ratelimit-unified-5h-reset", five_hour_reset().as_str()),
            ] {
                answer.headers.push((name.into(), value.into()));
            }
        }
        return answer;
    }
    let k = log.served.len() as u64 + 1;
    let served = Served {
        id: format!("msg_mock_{k:03}"),
        model: model.to_owned(),
        input: 100 + k,
        cache_creation: 300 * k,
        cache_read: 5_000 + 7 * k,
        output: 20 + 3 * k,
        reasoning: 0,
        side: body["tools"].as_array().is_none_or(Vec::is_empty),
    };
    let tool = text.split_whitespace().find_map(|word| word.strip_prefix("TOOL:")).filter(|_| !answered);
    // `MCP:NAME ARGS:{json}`: a call of an MCP tool, with those arguments.
    let mcp = text.split_whitespace().find_map(|word| word.strip_prefix("MCP:")).filter(|_| !answered);
    let mcp_input = text
        .split_whitespace()
        .find_map(|word| word.strip_prefix("ARGS:"))
        .and_then(|args| serde_json::from_str::<Value>(args).ok())
        .unwrap_or_else(|| json!({}));
    let start = json!({"type": "message_start", "message": {"id": served.id, "type": "message", "role": "assistant",
        "model": model, "content": [], "stop_reason": null, "stop_sequence": null,
        "usage": {"input_tokens": served.input, "cache_creation_input_tokens": served.cache_creation,
                  "cache_read_input_tokens": served.cache_read, "output_tokens": 1}}});
    let mut events = vec![("message_start".to_owned(), start)];
    let mut block = |index: u64, content: Value, delta: Value| {
        events.push((
            "content_block_start".into(),
            json!({"type": "content_block_start", "index": index, "content_block": content}),
        ));
        events.push((
            "content_block_delta".into(),
            json!({"type": "content_block_delta", "index": index, "delta": delta}),
        ));
        events.push(("content_block_stop".into(), json!({"type": "content_block_stop", "index": index})));
    };
    block(0, json!({"type": "text", "text": ""}), json!({"type": "text_delta", "text": format!("Answer {k}.")}));
    let stop = if let Some(name) = mcp {
        block(
            1,
            json!({"type": "tool_use", "id": format!("toolu_mock_{k:03}"), "name": name, "input": {}}),
            json!({"type": "input_json_delta", "partial_json": mcp_input.to_string()}),
        );
        "tool_use"
    } else if let Some(path) = tool {
        block(
            1,
            json!({"type": "tool_use", "id": format!("toolu_mock_{k:03}"), "name": "Read", "input": {}}),
            json!({"type": "input_json_delta", "partial_json": json!({"file_path": path}).to_string()}),
        );
        "tool_use"
    } else {
        "end_turn"
    };
    events.push((
        "message_delta".into(),
        json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null}, "usage": {"output_tokens": served.output}}),
    ));
    events.push(("message_stop".into(), json!({"type": "message_stop"})));
    log.served.push(served);
    Answer {
        status: 200,
        content_type: "text/event-stream",
        headers: vec![
            ("request-id".into(), format!("req_mock_{k:03}")),
            ("anthropic-ratelimit-unified-status".into(), "allowed".into()),
            ("anthropic-ratelimit-unified-5h-utilization".into(), "0.42".into()),
            ("anthropic-ratelimit-unified-5h-reset".into(), five_hour_reset()),
        ],
        body: sse(&events),
    }
}

/// When the served windows reset (unix seconds): fixed for the whole run, as
/// a provider's current window is, and ahead of the clock, so no test
/// outlives its windows.
fn five_hour_reset() -> String {
    (windows_base() + 9_000).to_string()
}

fn weekly_reset() -> String {
    (windows_base() + 420_000).to_string()
}

fn windows_base() -> u64 {
    static BASE: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *BASE.get_or_init(|| std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs()))
}

fn openai_answer(body: &Value, model: &str, log: &mut Log) -> Answer {
    let (text, answered) = newest_user_text(Api::OpenAi, body);
    // Two limit families: odd responses report `codex`, even ones `codex_other`.
    let family = |n: u64, used: &str| -> Vec<(String, String)> {
        let prefix = if n % 2 == 1 { "x-codex" } else { "x-codex-other" };
        vec![
            (format!("{prefix}-primary-used-percent"), used.to_owned()),
            (format!("{prefix}-primary-window-minutes"), "300".to_owned()),
            (format!("{prefix}-primary-reset-at"), five_hour_reset()),
            (format!("{prefix}-secondary-used-percent"), "12.0".to_owned()),
            (format!("{prefix}-secondary-window-minutes"), "10080".to_owned()),
            (format!("{prefix}-secondary-reset-at"), weekly_reset()),
        ]
    };
    if text.contains("APIERROR") {
        log.refused += 1;
        return Answer::json(
            400,
            json!({"error": {"type": "invalid_request_error", "code": "invalid_value",
                             "message": "mock: the request was refused", "param": null}}),
        );
    }
    if text.contains("LIMIT") {
        log.refused += 1;
        let mut answer = Answer::json(
            429,
            json!({"error": {"type": "usage_limit_reached", "message": "The usage limit has been reached",
                             "plan_type": "plus", "resets_at": five_hour_reset().parse::<u64>().unwrap_or(0), "resets_in_seconds": 9000}}),
        );
        if !text.contains("NOHEADERS") {
            answer.headers = family(1, "100.0");
        }
        return answer;
    }
    let k = log.served.len() as u64 + 1;
    let served = openai_shaped(1_000, k, format!("resp_mock_{k:03}"), model, false);
    let tools: Vec<&str> = body["tools"].as_array().into_iter().flatten().filter_map(|t| t["name"].as_str()).collect();
    // Codex's shell, else Droid's harmless listing of a directory.
    let call = match tools.contains(&"LS") && !tools.contains(&"exec_command") {
        true => ("LS", json!({"directory_path": "/"})),
        false => ("exec_command", json!({"cmd": "true"})),
    };
    let item = if text.contains("TOOL") && !answered {
        json!({"type": "function_call", "name": call.0, "arguments": call.1.to_string(),
               "call_id": format!("call_{k}"), "id": format!("fc_{k}")})
    } else {
        json!({"type": "message", "role": "assistant", "id": format!("msg_{k}"),
               "content": [{"type": "output_text", "text": format!("Answer {k}.")}]})
    };
    let usage = json!({"input_tokens": served.input, "input_tokens_details": {"cached_tokens": served.cache_read},
        "output_tokens": served.output, "output_tokens_details": {"reasoning_tokens": served.reasoning},
        "total_tokens": served.input + served.output});
    let events = vec![
        ("response.created".to_owned(), json!({"type": "response.created", "response": {"id": served.id}})),
        // The item streamed as OpenAI streams it (added, its text's delta,
        // done): clients built on the AI SDK (Droid) take the text from the
        // delta, Codex the item from its end.
        (
            "response.output_item.added".to_owned(),
            json!({"type": "response.output_item.added", "output_index": 0, "item": item}),
        ),
        (
            "response.output_text.delta".to_owned(),
            json!({"type": "response.output_text.delta", "item_id": item["id"], "output_index": 0,
                   "content_index": 0, "delta": item["content"][0]["text"]}),
        ),
        (
            "response.output_item.done".to_owned(),
            json!({"type": "response.output_item.done", "output_index": 0, "item": item}),
        ),
        (
            "response.completed".to_owned(),
            // The whole response again, as OpenAI sends it: clients built on
            // the AI SDK (Droid) read the output from here.
            json!({"type": "response.completed", "response": {"id": served.id, "object": "response",
                   "status": "completed", "model": model, "output": [item], "usage": usage}}),
        ),
    ];
    log.served.push(served);
    Answer { status: 200, content_type: "text/event-stream", headers: family(k, "42.0"), body: sse(&events) }
}

/// Counters of the `k`th response of an OpenAI-shaped API, its prompt
/// from `base` tokens: the cached part under the input, reasoning under
/// the output.
fn openai_shaped(base: u64, k: u64, id: String, model: &str, side: bool) -> Served {
    Served {
        id,
        model: model.to_owned(),
        input: base + 11 * k,
        cache_creation: 0,
        cache_read: 100 * k,
        output: 30 + 5 * k,
        reasoning: 2 * k,
        side,
    }
}

fn chat_answer(body: &Value, model: &str, log: &mut Log) -> Answer {
    let (text, answered) = newest_user_text(Api::Chat, body);
    if text.contains("APIERROR") && !answered {
        log.refused += 1;
        return Answer::json(
            400,
            json!({"error": {"type": "invalid_request_error", "code": "invalid_value", "message": "mock: the request was refused"}}),
        );
    }
    let k = log.served.len() as u64 + 1;
    let tools: Vec<&str> =
        body["tools"].as_array().into_iter().flatten().filter_map(|t| t["function"]["name"].as_str()).collect();
    let served = openai_shaped(5_000, k, format!("chatcmpl-mock-{k:03}"), model, tools.is_empty());
    // Continue's is `Bash`, OpenClaw's `exec`.
    let shell = ["run_shell_command", "bash", "terminal", "run_commands", "Bash", "exec"]
        .into_iter()
        .find(|name| tools.contains(name));
    let delta = match shell.filter(|_| text.contains("TOOL") && !answered) {
        Some(name) => {
            // Cline runs a list of commands; the others, one.
            let arguments = match name {
                "run_commands" => json!({"commands": ["true"]}),
                _ => json!({"command": "true", "description": "nothing"}),
            };
            json!({"role": "assistant", "tool_calls": [{"index": 0, "id": format!("call_{k}"), "type": "function",
            "function": {"name": name, "arguments": arguments.to_string()}}]})
        }
        None => json!({"role": "assistant", "content": format!("Answer {k}.")}),
    };
    let finish = if delta.get("tool_calls").is_some() { "tool_calls" } else { "stop" };
    let usage = json!({"prompt_tokens": served.input, "completion_tokens": served.output,
        "total_tokens": served.input + served.output,
        "prompt_tokens_details": {"cached_tokens": served.cache_read},
        "completion_tokens_details": {"reasoning_tokens": served.reasoning}});
    let chunk = |choices: Value, usage: Option<&Value>| {
        let mut chunk = json!({"id": served.id, "object": "chat.completion.chunk", "created": 1, "model": model, "choices": choices});
        if let Some(usage) = usage {
            chunk["usage"] = usage.clone();
        }
        chunk
    };
    let answer = if body["stream"] == true {
        let chunks = [
            chunk(json!([{"index": 0, "delta": delta, "finish_reason": null}]), None),
            chunk(json!([{"index": 0, "delta": {}, "finish_reason": finish}]), None),
            chunk(json!([]), Some(&usage)),
        ];
        let body: String = chunks.iter().map(|c| format!("data: {c}\n\n")).collect::<String>() + "data: [DONE]\n\n";
        Answer { status: 200, content_type: "text/event-stream", headers: Vec::new(), body }
    } else {
        Answer::json(
            200,
            json!({"id": served.id, "object": "chat.completion", "created": 1, "model": model,
                   "choices": [{"index": 0, "message": delta, "finish_reason": finish}], "usage": usage}),
        )
    };
    log.served.push(served);
    answer
}

/// The one model Augment's mock serves, named in its feature flags so that
/// Auggie sends it with each request and keeps it in its sessions.
const AUGMENT_MODEL: &str = "claude-sonnet-4-5";

fn augment_models() -> Answer {
    let registry = json!({AUGMENT_MODEL: {"displayName": "Mock", "shortName": "mock", "isDefault": true}});
    Answer::json(
        200,
        json!({"default_model": AUGMENT_MODEL,
            "models": [{"name": AUGMENT_MODEL, "suggested_prefix_char_count": 0, "suggested_suffix_char_count": 0}],
            "feature_flags": {"agent_chat_model": AUGMENT_MODEL, "model_info_registry": registry.to_string()},
            "user_tier": "PROFESSIONAL_TIER"}),
    )
}

/// Augment's chat stream (Auggie 0.36): NDJSON lines of `nodes` — text
/// (type 0), a tool use (type 5, `stop_reason` 3), the usage (type 10,
/// Anthropic's four counters). A request carrying a tool's result (a
/// `tool_result_node`) is answered with text; one whose text says `TOOL`
/// with a `view` of `hello.txt`; one that says `APIERROR` is refused with
/// a 400. Each response is recorded under the request id Auggie sent
/// (`x-request-id`), the id its session keeps.
fn augment_answer(body: &Value, request_id: Option<String>, log: &mut Log) -> Answer {
    let nodes = body["nodes"].as_array().map(Vec::as_slice).unwrap_or_default();
    let answered = nodes.iter().any(|node| node["type"] == 1 && node.get("tool_result_node").is_some());
    let text: String = nodes
        .iter()
        .filter(|node| node["type"] == 0)
        .filter_map(|node| node["text_node"]["content"].as_str())
        .collect::<Vec<_>>()
        .join(" ");
    if text.contains("APIERROR") && !answered {
        log.refused += 1;
        return Answer::json(400, json!({"error": "mock: the request was refused"}));
    }
    let k = log.served.len() as u64 + 1;
    let served = Served {
        id: request_id.unwrap_or_else(|| format!("augment-mock-{k:03}")),
        model: AUGMENT_MODEL.to_owned(),
        input: 100 + k,
        cache_creation: 300 * k,
        cache_read: 5_000 + 7 * k,
        output: 20 + 3 * k,
        reasoning: 0,
        side: false,
    };
    let usage = json!({"id": 9, "type": 10, "content": "", "token_usage": {"input_tokens": served.input,
        "cache_creation_input_tokens": served.cache_creation, "cache_read_input_tokens": served.cache_read,
        "output_tokens": served.output}});
    let reply = format!("Answer {k}.");
    let mut lines = vec![json!({"text": reply, "nodes": [{"id": 1, "type": 0, "content": reply}]})];
    let stop = if text.contains("TOOL") && !answered {
        let input = json!({"type": "file", "path": "hello.txt"}).to_string();
        let tool = json!({"tool_use_id": format!("toolu_mock_{k:03}"), "tool_name": "view", "input_json": input});
        lines.push(json!({"text": "", "nodes": [{"id": 2, "type": 5, "content": "", "tool_use": tool}]}));
        3
    } else {
        1
    };
    lines.push(json!({"text": "", "nodes": [usage], "stop_reason": stop}));
    log.served.push(served);
    let body: String = lines.iter().map(|line| format!("{line}\n")).collect();
    Answer { status: 200, content_type: "application/json", headers: Vec::new(), body }
}

/// A value of the JSON schema `schema`: what a model asked for JSON
/// (Gemini CLI's router) must answer.
fn schema_value(schema: &Value) -> Value {
    if let Some(first) = schema["enum"].as_array().and_then(|values| values.first()) {
        return first.clone();
    }
    match schema["type"].as_str().map(str::to_ascii_lowercase).as_deref() {
        Some("array") => json!([]),
        Some("number" | "integer") => json!(1),
        Some("boolean") => json!(false),
        Some("string") => json!("mock"),
        _ => Value::Object(
            schema["properties"].as_object().into_iter().flatten().map(|(k, v)| (k.clone(), schema_value(v))).collect(),
        ),
    }
}

fn gemini_answer(body: &Value, model: &str, stream: bool, log: &mut Log) -> Answer {
    let (text, answered) = newest_user_text(Api::Gemini, body);
    let config = &body["generationConfig"];
    let schema = config.get("responseJsonSchema").or_else(|| config.get("responseSchema"));
    if text.contains("APIERROR") && !answered && schema.is_none() {
        log.refused += 1;
        return Answer::json(
            400,
            json!({"error": {"code": 400, "message": "mock: the request was refused", "status": "INVALID_ARGUMENT"}}),
        );
    }
    let k = log.served.len() as u64 + 1;
    let mut served = openai_shaped(5_000, k, format!("gemini-mock-{k:03}"), model, schema.is_some());
    // Gemini reports thoughts beside the candidates: Bee's output is both.
    let candidates = served.output;
    served.output += served.reasoning;
    let part = match schema {
        Some(schema) => json!({"text": schema_value(schema).to_string()}),
        None if text.contains("TOOL") && !answered => {
            json!({"functionCall": {"name": "run_shell_command", "args": {"command": "true"}}})
        }
        None => json!({"text": format!("Answer {k}.")}),
    };
    let response = json!({
        "candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": served.input, "cachedContentTokenCount": served.cache_read,
            "candidatesTokenCount": candidates, "thoughtsTokenCount": served.reasoning,
            "totalTokenCount": served.input + served.output},
        "modelVersion": model, "responseId": served.id});
    log.served.push(served);
    if stream {
        Answer {
            status: 200,
            content_type: "text/event-stream",
            headers: Vec::new(),
            body: format!("data: {response}\r\n\r\n"),
        }
    } else {
        Answer::json(200, response)
    }
}
