//! A task of an editor extension of the Cline family — Cline's classic
//! extension, Roo Code, and Kilo Code's legacy extension, which forked it —
//! as its `tasks/<task id>/ui_messages.json` keeps it: one JSON array of
//! the messages the extension showed, rewritten whole (to a temporary file,
//! then renamed) as the task goes on. One reader serves the three: its
//! [`Writer`] says whose conventions a task's counters follow.
//!
//! A provider request is a `say: "api_req_started"` entry: its `ts` (ms,
//! when the request started, kept as the entry is updated) and its `text`,
//! JSON `{tokensIn, tokensOut, cacheWrites, cacheReads, cost,
//! cancelReason?, apiProtocol? (Roo, Kilo), usageMissing? (Kilo)}`. An entry
//! with neither `cost` nor `cancelReason` is still streaming: not read yet
//! (the extension rewrites the file when it is finished, and it is read
//! again then). Cline writes the counters, and a cost, on every usage chunk
//! of a stream: a file read mid-stream holds part of a response, and the
//! fuller write read later is kept. Very old Cline tasks keep the counters
//! in a separate `api_req_finished` entry; Cline's sub-agent batches keep
//! their requests' sums in one `subagent_usage` entry. A request with no
//! counters (a failure, Kilo's `usageMissing`) is no response; nor is a
//! `deleted_api_reqs` entry (the sum of requests a checkpoint restore
//! deleted, already read while they were there).
//!
//! A response's key is its task and its entry's `ts`: the same request
//! read again, however its counters grew, is the same response.
//!
//! `tokensIn` means different things (see [`Writer`]); input in Bee's
//! columns is without either cache, unknown where the records cannot say
//! which it is.

use bee_proto::ledger::{Provider, SkipReason};
use bee_proto::usage::Counters;
use serde::de::{Deserializer as _, SeqAccess, Visitor};
use serde_json::Value;
use serde_json::value::RawValue;
use std::path::Path;

use crate::ledger::agents::agent::WholeFileReader;
use crate::ledger::agents::lines::{Beside, Found, LastName, count, parse_record, text, time_ms};
use crate::ledger::agents::skipped;
use crate::ledger::agents::sparse::keep;
use crate::ledger::agents::whole::{MAX_DOCUMENT_BYTES, Text, read_text_within};
use crate::ledger::stored::evidence::{AgentState, Evidence};

/// The name of a task's messages.
pub(crate) const UI_MESSAGES: &str = "ui_messages.json";

/// Whose conventions a task's counters follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Writer {
    /// Cline's classic extension: `tokensIn` is what its provider's handler
    /// yields, without either cache for some providers (Anthropic's API,
    /// OpenRouter, Gemini, …), with them for others (OpenAI-compatible
    /// ones, LiteLLM, Ollama, …): told by the entry's
    /// `modelInfo.providerId` ([`cline_convention`]).
    Cline,
    /// Roo Code, and Kilo Code's legacy extension: from the release made at
    /// `inclusive_since` (ms; Roo 3.29.5, Kilo Code 4.119.0) `tokensIn` is
    /// the whole input, both caches included; before it, without them for
    /// `apiProtocol: "anthropic"` and with them for `"openai"`.
    RooFamily { inclusive_since: i64 },
}

/// The reader of one family member's tasks, counted under `provider`.
#[derive(Debug)]
pub(crate) struct Tasks {
    pub(crate) provider: Provider,
    pub(crate) writer: Writer,
}

keep! {
    /// What is read of every entry.
    ENTRY = ["ts", "say", "apiProtocol", "modelInfo/modelId", "modelInfo/providerId"];
    /// What is read again of a request's entry: its text.
    TEXT = ["text"];
    /// What is read of a request's text (its `request`, the prompt, is not).
    INFO = [
        "tokensIn", "tokensOut", "cacheWrites", "cacheReads", "cost", "cancelReason", "apiProtocol",
    ];
}

/// The kind of entry a request's counters are in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// `api_req_started`: one request.
    Started,
    /// `api_req_finished`: one request's counters, in very old Cline tasks.
    Finished,
    /// `subagent_usage`: the sum of a Cline sub-agent batch's requests.
    Subagents,
}

/// How a request's `tokensIn` counts the caches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Convention {
    /// Input without either cache.
    Excludes,
    /// The whole input, both caches in it.
    Includes,
    /// The records cannot say.
    Unknown,
}

/// One request as its entry says it.
#[derive(Debug)]
struct Request {
    kind: Kind,
    at_ms: Option<i64>,
    tokens_in: Option<u64>,
    tokens_out: Option<u64>,
    cache_writes: Option<u64>,
    cache_reads: Option<u64>,
    cost: Option<f64>,
    /// Its stream is over (it has a cost or a reason it was cancelled).
    over: bool,
    protocol: Option<String>,
    model: Option<String>,
    provider: Option<String>,
}

impl Request {
    /// Both caches, as far as they are known.
    fn cached(&self) -> u64 {
        self.cache_reads.unwrap_or(0).saturating_add(self.cache_writes.unwrap_or(0))
    }

    /// Whether its counters say it is the kind without caches: a whole
    /// input never is smaller than its cached part.
    fn shows_exclusive(&self) -> bool {
        self.tokens_in.is_some_and(|tokens_in| tokens_in < self.cached())
    }

    fn counts_nothing(&self) -> bool {
        [self.tokens_in, self.tokens_out, self.cache_writes, self.cache_reads].iter().all(|c| c.unwrap_or(0) == 0)
    }
}

/// How Cline's classic extension's handler for `provider` counts
/// `tokensIn` (its `core/api/providers/*.ts`).
fn cline_convention(provider: Option<&str>) -> Convention {
    match provider {
        Some(
            "anthropic" | "vertex" | "bedrock" | "minimax" | "cline" | "openrouter" | "vercel-ai-gateway"
            | "openai-native" | "deepseek" | "groq" | "gemini" | "moonshot",
        ) => Convention::Excludes,
        Some(
            "openai" | "xai" | "zai" | "lmstudio" | "litellm" | "fireworks" | "hicap" | "doubao" | "qwen" | "oca"
            | "requesty" | "together" | "sambanova" | "nebius" | "mistral" | "ollama" | "huggingface" | "openai-codex"
            | "cerebras" | "qwen-code" | "huawei-cloud-maas" | "dify" | "baseten" | "nousResearch" | "wandb",
        ) => Convention::Includes,
        _ => Convention::Unknown,
    }
}

impl Tasks {
    /// How `request` counts its caches, given the newest time (ms) at which
    /// its task shows, by its counters, a writer of the kind without caches.
    fn convention(&self, request: &Request, exclusive_until: Option<i64>) -> Convention {
        if request.shows_exclusive() {
            return Convention::Excludes;
        }
        match self.writer {
            Writer::Cline => cline_convention(request.provider.as_deref()),
            Writer::RooFamily { inclusive_since } => match request.protocol.as_deref() {
                Some("openai") => Convention::Includes,
                Some("anthropic") => {
                    let at = request.at_ms.unwrap_or(i64::MIN);
                    // Written before the release that changed it, or by a
                    // writer its task shows to be older: without caches.
                    if at < inclusive_since || exclusive_until.is_some_and(|until| at <= until) {
                        Convention::Excludes
                    } else {
                        Convention::Includes
                    }
                }
                _ => Convention::Unknown,
            },
        }
    }

    /// `request`'s counters in Bee's columns.
    fn counters(&self, request: &Request, exclusive_until: Option<i64>) -> Counters {
        let cached = request.cached();
        let input = request.tokens_in.and_then(|tokens_in| match self.convention(request, exclusive_until) {
            // Without caches either way.
            _ if cached == 0 => Some(tokens_in),
            Convention::Excludes => Some(tokens_in),
            Convention::Includes => tokens_in.checked_sub(cached),
            Convention::Unknown => None,
        });
        Counters {
            input_tokens: input,
            cache_creation_input_tokens: request.cache_writes,
            cache_read_input_tokens: request.cache_reads,
            output_tokens: request.tokens_out,
            ..Counters::default()
        }
    }

    /// What the task whose `ui_messages.json` is `document` holds (the
    /// task is its directory, `task`); the count is of requests without a
    /// time. Nothing when the document is not a whole JSON array.
    fn evidence(&self, task: &str, document: &str, out: &mut Vec<Evidence>) -> u64 {
        let mut requests = Vec::new();
        let mut reader = serde_json::Deserializer::from_str(document);
        let read = (&mut reader).deserialize_seq(EachEntry(|entry: &RawValue| requests.extend(request(entry))));
        if read.and_then(|()| reader.end()).is_err() {
            return 0;
        }
        let exclusive_until = match self.writer {
            Writer::Cline => None,
            Writer::RooFamily { .. } => requests
                .iter()
                .filter(|r| r.protocol.as_deref() == Some("anthropic") && r.shows_exclusive())
                .filter_map(|r| r.at_ms)
                .max(),
        };
        let (mut sessions, mut models) = (LastName::default(), LastName::default());
        let mut found = Found::new(self.provider, &mut sessions, &mut models, out);
        found.session(task, None);
        let mut refused = 0;
        for request in &requests {
            if !request.over || request.counts_nothing() {
                continue;
            }
            // Claude Code's CLI's responses are its own records'.
            if self.writer == Writer::Cline && request.provider.as_deref() == Some("claude-code") {
                continue;
            }
            let Some(at_ms) = request.at_ms else {
                refused += 1;
                continue;
            };
            let key = match request.kind {
                Kind::Started => format!("{task}\u{1f}{at_ms}"),
                Kind::Finished => format!("{task}\u{1f}{at_ms}\u{1f}finished"),
                Kind::Subagents => format!("{task}\u{1f}{at_ms}\u{1f}subagents"),
            };
            let counters = self.counters(request, exclusive_until);
            let beside = Beside { own_figure: request.cost, copied: false };
            found.response_with(key, task, at_ms, request.model.as_deref(), counters, beside);
        }
        refused
    }
}

/// The request an entry is, if it is one.
fn request(entry: &RawValue) -> Option<Request> {
    let entry = entry.get().as_bytes();
    let head = parse_record(entry, &ENTRY, 0).ok().filter(Value::is_object)?;
    let kind = match text(&head, "/say")? {
        "api_req_started" => Kind::Started,
        "api_req_finished" => Kind::Finished,
        "subagent_usage" => Kind::Subagents,
        _ => return None,
    };
    let body = parse_record(entry, &TEXT, 0).ok()?;
    let info = parse_record(text(&body, "/text")?.as_bytes(), &INFO, 0).ok().filter(Value::is_object)?;
    // Over, as Cline and Roo tell it: a cost written, or a reason it was
    // cancelled.
    let written = |name: &str| info.get(name).is_some_and(|value| !value.is_null());
    let over = kind != Kind::Started || written("cost") || written("cancelReason");
    let named = |value: Option<&str>| value.filter(|name| !name.is_empty()).map(str::to_owned);
    Some(Request {
        kind,
        at_ms: time_ms(head.get("ts").filter(|ts| ts.is_number())),
        tokens_in: count(info.get("tokensIn")),
        tokens_out: count(info.get("tokensOut")),
        cache_writes: count(info.get("cacheWrites")),
        cache_reads: count(info.get("cacheReads")),
        cost: info.get("cost").and_then(Value::as_f64),
        over,
        protocol: named(text(&info, "/apiProtocol").or_else(|| text(&head, "/apiProtocol"))),
        model: named(text(&head, "/modelInfo/modelId")),
        provider: named(text(&head, "/modelInfo/providerId")),
    })
}

/// Hands each entry of a JSON array to a function as it is met, raw: no
/// array of them is built, and an entry is parsed only for what is read.
struct EachEntry<F>(F);

impl<'de, F: FnMut(&'de RawValue)> Visitor<'de> for EachEntry<F> {
    type Value = ();

    fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("an array of messages")
    }

    fn visit_seq<A: SeqAccess<'de>>(mut self, mut entries: A) -> Result<(), A::Error> {
        while let Some(entry) = entries.next_element::<&'de RawValue>()? {
            (self.0)(entry);
        }
        Ok(())
    }
}

impl WholeFileReader for Tasks {
    fn reads_documents(&self) -> bool {
        true
    }

    /// The task's messages, read whole within [`MAX_DOCUMENT_BYTES`] (a
    /// longer file is passed over and named by its length, never read into
    /// memory), as every document Bee reads: a regular file, no link
    /// followed.
    fn read(&self, path: &Path, _state: &AgentState, out: &mut Vec<Evidence>) -> std::io::Result<(AgentState, u64)> {
        let task = path.parent().and_then(Path::file_name).and_then(|name| name.to_str()).unwrap_or("");
        if task.is_empty() {
            return Ok((AgentState::default(), 0));
        }
        // Found whole, or not at all: a document that does not parse is
        // nothing this time.
        let mut found = Vec::new();
        let refused =
            match read_text_within(path, MAX_DOCUMENT_BYTES, |document| self.evidence(task, document, &mut found))? {
                Text::Read(refused) => refused,
                Text::Oversized(bytes) => {
                    skipped::note(SkipReason::OversizedDocument, 0, bytes);
                    0
                }
                Text::NotUtf8 => 0,
            };
        out.append(&mut found);
        Ok((AgentState::default(), refused))
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::ledger::agents::tests::{noted, read_whole, rows, tiny_items};
    use crate::ledger::stored::responses::ResponseWrite;
    use serde_json::json;

    /// An `api_req_started` entry at `ts` with `info` as its text.
    pub(crate) fn started(ts: i64, info: Value) -> Value {
        json!({"ts": ts, "type": "say", "say": "api_req_started", "text": info.to_string()})
    }

    /// A task's messages, written as `tasks/<task>/ui_messages.json` in a
    /// directory of its own, read by `provider`'s reader.
    pub(crate) fn read_task(provider: Provider, task: &str, messages: &Value) -> Vec<ResponseWrite> {
        read_task_bytes(provider, task, messages.to_string().as_bytes()).0
    }

    pub(crate) fn read_task_bytes(provider: Provider, task: &str, bytes: &[u8]) -> (Vec<ResponseWrite>, u64) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tasks").join(task).join(UI_MESSAGES);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, bytes).unwrap();
        let mut evidence = Vec::new();
        let reader = crate::ledger::agents::agent(provider).whole_file().unwrap();
        let (_, refused) = reader.read(&path, &AgentState::default(), &mut evidence).unwrap();
        (crate::ledger::agents::tests::responses_of(evidence), refused)
    }

    /// Cline's classic format, as its source writes it: a request's input
    /// by its provider's convention (Anthropic's without caches, an
    /// OpenAI-compatible one's with its cached part, one the reader does
    /// not know unknown unless its counters say); a request streaming
    /// (no cost yet) not read, then read when it is over; a cancelled one
    /// read for what it used; a sub-agent batch's sum; a request through
    /// Claude Code's CLI, a deleted requests' sum and a failure with no
    /// counters are none.
    #[test]
    fn cline_classic_requests_by_their_providers_conventions() {
        let model = |provider: &str| json!({"modelId": "m", "providerId": provider, "mode": "act"});
        let with = |mut entry: Value, provider: &str| {
            entry["modelInfo"] = model(provider);
            entry
        };
        let info = |tokens_in: u64, writes: u64, reads: u64, out: u64| {
            json!({"request": "<task>…</task>", "tokensIn": tokens_in, "tokensOut": out, "cacheWrites": writes,
                "cacheReads": reads, "cost": 0.01})
        };
        let messages = json!([
            {"ts": 1_764_000_000_000_i64, "type": "say", "say": "task", "text": "Do it"},
            with(started(1_764_000_000_100, info(12, 300, 4000, 50)), "anthropic"),
            with(started(1_764_000_000_200, info(5000, 0, 4000, 60)), "openai"),
            with(started(1_764_000_000_300, info(5000, 0, 4000, 70)), "asksage"),
            with(started(1_764_000_000_400, info(30, 0, 4000, 80)), "asksage"),
            with(started(1_764_000_000_500, info(700, 0, 0, 90)), "asksage"),
            with(started(1_764_000_000_600, json!({"request": "…", "tokensIn": 9, "tokensOut": 0})), "anthropic"),
            with(started(1_764_000_000_700, json!({"tokensIn": 9, "tokensOut": 3, "cacheWrites": 0, "cacheReads": 0,
                "cost": 0.001, "cancelReason": "user_cancelled"})), "anthropic"),
            with(started(1_764_000_000_800, json!({"tokensIn": 0, "tokensOut": 0, "cacheWrites": 0, "cacheReads": 0,
                "cancelReason": "retries_exhausted"})), "anthropic"),
            with(started(1_764_000_000_900, info(40, 0, 0, 5)), "claude-code"),
            {"ts": 1_764_000_001_000_i64, "type": "say", "say": "subagent_usage", "modelInfo": model("openrouter"),
                "text": json!({"source": "subagents", "tokensIn": 100, "tokensOut": 20, "cacheWrites": 0,
                    "cacheReads": 50, "cost": 0.02}).to_string()},
            {"ts": 1_764_000_001_100_i64, "type": "say", "say": "deleted_api_reqs",
                "text": json!({"tokensIn": 1, "tokensOut": 1, "cacheWrites": 0, "cacheReads": 0, "cost": 0}).to_string()},
            {"ts": 1_764_000_001_200_i64, "type": "say", "say": "api_req_finished",
                "text": json!({"tokensIn": 11, "tokensOut": 22, "cacheWrites": 0, "cacheReads": 0, "cost": 0.003}).to_string()},
        ]);
        let writes = read_task(Provider::Cline, "1764000000000", &messages);
        let s = Some;
        let found: Vec<_> =
            rows(Provider::Cline, &writes).into_iter().map(|r| (r.0, r.1, r.2, r.3, r.4, r.6)).collect();
        let key = |ts: &str| format!("1764000000000\u{1f}{ts}");
        assert_eq!(
            found,
            [
                (key("1764000000100"), s(12), s(300), s(4000), s(50), s(4362)),
                (key("1764000000200"), s(1000), s(0), s(4000), s(60), s(5060)),
                (key("1764000000300"), None, s(0), s(4000), s(70), None),
                (key("1764000000400"), s(30), s(0), s(4000), s(80), s(4110)),
                (key("1764000000500"), s(700), s(0), s(0), s(90), s(790)),
                (key("1764000000700"), s(9), s(0), s(0), s(3), s(12)),
                (key("1764000001000\u{1f}subagents"), s(100), s(0), s(50), s(20), s(170)),
                (key("1764000001200\u{1f}finished"), s(11), s(0), s(0), s(22), s(33)),
            ]
        );
        assert!(writes.iter().all(|w| w.session_id.as_deref() == Some("1764000000000")));
        let first = writes.iter().find(|w| w.key == key("1764000000100")).unwrap();
        assert_eq!((first.model.as_deref(), first.own_figure, first.at_ms), (Some("m"), Some(0.01), 1_764_000_000_100));
        let finished = writes.iter().find(|w| w.key.ends_with("finished")).unwrap();
        assert_eq!(finished.model, None);
    }

    /// A request read while it streams (Cline saves its counters, with a
    /// cost, on each usage chunk) and again once over: one response, the
    /// fuller write's counters.
    #[test]
    fn a_request_read_mid_stream_and_again_is_one_response() {
        let model = json!({"modelId": "claude-sonnet-4-5", "providerId": "anthropic"});
        let mut entry = started(
            1_764_000_000_100,
            json!({"request": "…", "tokensIn": 12, "tokensOut": 1,
            "cacheWrites": 300, "cacheReads": 4000, "cost": 0.002}),
        );
        entry["modelInfo"] = model;
        let mut writes = read_task(Provider::Cline, "t1", &json!([entry.clone()]));
        entry["text"] = json!({"request": "…", "tokensIn": 12, "tokensOut": 250, "cacheWrites": 300,
            "cacheReads": 4000, "cost": 0.006})
        .to_string()
        .into();
        writes.extend(read_task(Provider::Cline, "t1", &json!([entry])));
        let prepared: Vec<_> = writes.into_iter().map(ResponseWrite::prepare).collect();
        let merged = crate::ledger::stored::responses::merge_prepared(&prepared.iter().collect::<Vec<_>>());
        assert_eq!(merged.len(), 1);
        assert_eq!(merged[0].tokens.output_tokens, Some(250));
    }

    /// A document that is no array of messages, cut short, or not UTF-8 is
    /// nothing this time; an empty task holds nothing; entries that are no
    /// messages, texts that are no JSON, counters of the wrong type or past
    /// any count are passed over or unknown (never 0); a request without a
    /// time is refused and counted; millions of tiny entries cost nothing.
    #[test]
    fn broken_and_hostile_tasks() {
        let good = json!([started(1_764_000_000_100, json!({"tokensIn": 5, "tokensOut": 1, "cost": 0}))]).to_string();
        for broken in [&good[..good.len() - 2], "{\"ts\": 1}", "", "[1, 2", "null"] {
            assert_eq!(read_task_bytes(Provider::Cline, "t", broken.as_bytes()), (vec![], 0), "{broken}");
        }
        assert_eq!(read_task_bytes(Provider::Cline, "t", b"[\"\xff\"]").0.len(), 0);
        assert!(read_task(Provider::Cline, "t", &json!([])).is_empty());
        let messages = json!([
            1, "text", null, [],
            {"ts": 1_764_000_000_001_i64, "say": "api_req_started", "text": "not json"},
            {"ts": 1_764_000_000_002_i64, "say": "api_req_started", "text": 7},
            {"ts": 1_764_000_000_003_i64, "say": ["api_req_started"], "text": "{}"},
            started(1_764_000_000_004, json!({"tokensIn": "ten", "tokensOut": 5, "cacheReads": -1, "cost": "free"})),
            started(1_764_000_000_005, json!({"tokensIn": 18_446_744_073_709_551_615_u64, "tokensOut": 1e300,
                "cacheWrites": 0, "cacheReads": 0, "cost": 1e308})),
            {"ts": "2025-11-24T10:00:00Z", "say": "api_req_started",
                "text": json!({"tokensIn": 5, "tokensOut": 1, "cost": 0}).to_string()},
            {"say": "api_req_started", "text": json!({"tokensIn": 5, "tokensOut": 1, "cost": 0}).to_string()},
        ]);
        let (writes, refused) = read_task_bytes(Provider::Cline, "t", messages.to_string().as_bytes());
        assert_eq!(refused, 2, "no time as a number; no time at all");
        let read: Vec<_> = writes
            .iter()
            .map(|w| (w.key.as_str(), w.tokens.input_tokens, w.tokens.output_tokens, w.own_figure))
            .collect();
        assert_eq!(
            read,
            [("t\u{1f}1764000000004", None, Some(5), None), ("t\u{1f}1764000000005", Some(u64::MAX), None, None)]
        );
        let _ = noted();
        let junk = tiny_items(2_000_000);
        let many = format!("{},{}]", &junk[..junk.len() - 1], &good[1..good.len() - 1]);
        let (writes, _) = read_task_bytes(Provider::Cline, "t", many.as_bytes());
        assert_eq!(writes.len(), 1);
        assert!(noted().is_empty());
    }

    /// A task read through the agent's own reader as ingestion reads it.
    #[test]
    fn a_task_file_through_the_agents_reader() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("1764000000000").join(UI_MESSAGES);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let info = json!({"tokensIn": 5, "tokensOut": 1, "cacheReads": 0, "cacheWrites": 0, "cost": 0.0001});
        std::fs::write(&path, json!([started(1_764_000_000_100, info)]).to_string()).unwrap();
        let (writes, _) = read_whole(Provider::Cline, &path, &AgentState::default());
        assert_eq!(writes.len(), 1);
    }
}
