//! A session of Continue's CLI: `{"sessionId", "title",
//! "workspaceDirectory", "history": [{"message": {...}, ...}], "usage":
//! {"totalCost", "promptTokens", "completionTokens", ...}}`, rewritten
//! whole as the session goes on. A provider response is an assistant
//! message with a `usage`: the last usage chunk of its stream as Continue's
//! adapter for the provider spelled it, in OpenAI's chat-completions names,
//! with the model beside it. Nothing in a message names the response or
//! says when it came.
//!
//! Three shapes ([`Shape`]). `prompt_tokens_details.cache_read_tokens` is
//! written only by Continue's adapter of Anthropic's Messages API, whose
//! `prompt_tokens` is Anthropic's `input_tokens` (without either cache)
//! beside `cache_write_tokens` and `cache_read_tokens`, and by its AI SDK
//! path (`CONTINUE_USE_AI_SDK`), whose `prompt_tokens` includes both caches
//! and which writes the details in another order, `cached_tokens` first.
//! Every other usage is the OpenAI-compatible provider's own, whose
//! `prompt_tokens` includes its `cached_tokens` (and an OpenRouter-style
//! `cache_write_tokens`) and whose `completion_tokens` includes its
//! `reasoning_tokens`.
//!
//! A response's key is what a fork's copy of it keeps: a digest of its
//! model and counters and of those of every response before it in the
//! history, with every tool call id there (the provider's own, unique), and
//! its place among them. `--resume` rewrites the same history; `--fork`
//! copies it into a new session, so a copy is the same response. The
//! session's own `usage` counts only the calls the session made (a fork's
//! starts at 0), so the responses a history holds beyond it, at its start,
//! are copies and are marked `copied`.
//!
//! A response is dated when the reader first found it (its session's last
//! write before that read), and keeps that time between reads (the
//! reader's state), so a session read again adds nothing.

use bee_proto::ledger::{Provider, SkipReason};
use bee_proto::usage::Counters;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha1::Digest;
use std::collections::HashMap;
use std::path::Path;

use crate::ledger::agents::agent::WholeFileReader;
use crate::ledger::agents::lines::{Beside, Found, LastName, count, decode_state, encode_state, spelled, text};
use crate::ledger::agents::skipped;
use crate::ledger::agents::sparse::keep;
use crate::ledger::agents::whole::{Document, MAX_DOCUMENT_BYTES, modified_ms, read_document_within};
use crate::ledger::stored::evidence::{AgentState, Evidence};

keep! {
    /// What [`read`] reads of a session.
    SESSION = [
        "sessionId",
        "workspaceDirectory",
        "usage/promptTokens",
        "usage/completionTokens",
        "history/message/role",
        "history/message/toolCalls/id",
        "history/message/usage/model",
        "history/message/usage/prompt_tokens",
        "history/message/usage/completion_tokens",
        "history/message/usage/prompt_tokens_details/cached_tokens",
        "history/message/usage/prompt_tokens_details/cache_read_tokens",
        "history/message/usage/prompt_tokens_details/cache_write_tokens",
        "history/message/usage/completion_tokens_details/reasoning_tokens",
    ];
}

/// The reader of Continue's sessions, each read whole whenever it
/// changes; what it keeps between reads is [`Seen`].
pub(crate) struct Sessions;

pub(crate) static SESSIONS: Sessions = Sessions;

impl WholeFileReader for Sessions {
    fn reads_documents(&self) -> bool {
        true
    }

    fn read(&self, path: &Path, state: &AgentState, out: &mut Vec<Evidence>) -> std::io::Result<(AgentState, u64)> {
        match read_document_within(path, MAX_DOCUMENT_BYTES, &SESSION)? {
            Document::Read(session) => {
                let (mut sessions, mut models) = (LastName::default(), LastName::default());
                let mut found = Found::new(Provider::Continue, &mut sessions, &mut models, out);
                let (seen, refused) = read(&session, modified_ms(path), &decode_state(state), &mut found);
                Ok((encode_state(&seen), refused))
            }
            // Not read this time: the times found before are kept.
            Document::Oversized(bytes) => {
                skipped::note(SkipReason::OversizedDocument, 0, bytes);
                Ok((state.clone(), 0))
            }
            Document::TooComplex(bytes) => {
                skipped::note(SkipReason::TooComplex, 0, bytes);
                Ok((state.clone(), 0))
            }
            // Caught being rewritten: read again when the write ends.
            Document::NotJson => Ok((state.clone(), 0)),
        }
    }
}

/// What the reader keeps of a session between reads: when it first found
/// each response the session holds (`[key, unix ms]`), so that a response
/// read again is dated as it was, and is the same write.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Seen {
    #[serde(default)]
    first: Vec<(String, i64)>,
}

/// Who wrote a usage, and so what its `prompt_tokens` holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// Continue's adapter of Anthropic's Messages API: the prompt without
    /// either cache (`cache_read_tokens` present, the details written
    /// `cache_write_tokens` first).
    Anthropic,
    /// Its AI SDK path (`CONTINUE_USE_AI_SDK`, for `openai` and `anthropic`
    /// providers): the prompt with both caches (`cache_read_tokens`
    /// present, the details written `cached_tokens` first), no reasoning
    /// count.
    AiSdk,
    /// The OpenAI-compatible provider's own: the prompt with its cached
    /// part (and a cache write it reports).
    OpenAi,
}

/// One message's usage as Continue wrote it.
#[derive(Debug, Clone, Copy)]
struct Usage<'v> {
    model: Option<&'v str>,
    prompt: Option<u64>,
    completion: Option<u64>,
    cached: Option<u64>,
    cache_read: Option<u64>,
    cache_write: Option<u64>,
    reasoning: Option<u64>,
    shape: Shape,
    /// It says how many tokens were written to the cache.
    says_cache_write: bool,
}

impl<'v> Usage<'v> {
    fn of(usage: &'v Value) -> Usage<'v> {
        let field = |pointer: &str| count(usage.pointer(pointer));
        let details = usage.get("prompt_tokens_details").and_then(Value::as_object);
        let has = |name: &str| details.is_some_and(|details| details.contains_key(name));
        // The order the details were written in (kept as read).
        let first = details.and_then(|details| details.keys().next()).map(String::as_str);
        let shape = match (has("cache_read_tokens"), first) {
            (false, _) => Shape::OpenAi,
            (true, Some("cached_tokens")) => Shape::AiSdk,
            (true, _) => Shape::Anthropic,
        };
        Usage {
            model: text(usage, "/model"),
            prompt: field("/prompt_tokens"),
            completion: field("/completion_tokens"),
            cached: field("/prompt_tokens_details/cached_tokens"),
            cache_read: field("/prompt_tokens_details/cache_read_tokens"),
            cache_write: field("/prompt_tokens_details/cache_write_tokens"),
            reasoning: field("/completion_tokens_details/reasoning_tokens"),
            shape,
            says_cache_write: has("cache_write_tokens"),
        }
    }

    /// What a copy of it keeps, spelled for its key.
    fn spelled(&self) -> String {
        let counters = [self.prompt, self.completion, self.cached, self.cache_read, self.cache_write, self.reasoning];
        format!("{}\u{1f}{}", self.model.unwrap_or(""), spelled(&counters))
    }

    /// Its counters in Bee's columns (Anthropic's shape): input without
    /// either cache, cache writes, cache reads, output with its reasoning
    /// inside, reasoning a part of it, and their total.
    fn columns(&self) -> Counters {
        let reasoning = self.reasoning.filter(|&reasoning| self.completion.is_none_or(|output| reasoning <= output));
        let without = |prompt: Option<u64>, reads: Option<u64>, writes: Option<u64>| {
            prompt
                .zip(reads)
                .zip(writes)
                .and_then(|((prompt, reads), writes)| prompt.checked_sub(reads)?.checked_sub(writes))
        };
        let (input, cache_writes, cache_reads) = match self.shape {
            Shape::Anthropic => (self.prompt, self.cache_write, self.cache_read),
            Shape::AiSdk => {
                (without(self.prompt, self.cache_read, self.cache_write), self.cache_write, self.cache_read)
            }
            Shape::OpenAi => {
                // The prompt holds its cached part, and a cache write where
                // the provider reports one (OpenRouter); a write it does not
                // report is none of its parts.
                let writes = if self.says_cache_write { self.cache_write } else { Some(0) };
                (without(self.prompt, self.cached, writes), writes, self.cached)
            }
        };
        let total = [input, cache_writes, cache_reads, self.completion]
            .into_iter()
            .try_fold(0u64, |sum, part| sum.checked_add(part?));
        Counters {
            input_tokens: input,
            cached_input_tokens: None,
            cache_creation_input_tokens: cache_writes,
            cache_read_input_tokens: cache_reads,
            output_tokens: self.completion,
            reasoning_output_tokens: reasoning,
            total_tokens: total,
        }
    }
}

/// The history up to a message, as a response's key names it.
#[derive(Default)]
struct Chain {
    digest: sha1::Sha1,
    responses: u64,
}

impl Chain {
    fn mix(&mut self, kind: u8, part: &[u8]) {
        self.digest.update([kind]);
        self.digest.update((part.len() as u64).to_le_bytes());
        self.digest.update(part);
    }

    /// The key of the response mixed in last: its place among the
    /// history's responses and 64 bits of the digest of the history up to
    /// it.
    fn key(&mut self) -> String {
        self.responses += 1;
        let digest = self.digest.clone().finalize();
        let mut high = [0u8; 8];
        high.copy_from_slice(&digest[..8]);
        format!("{}-{:016x}", self.responses, u64::from_be_bytes(high))
    }
}

/// A response found in the history.
struct Held<'v> {
    key: String,
    model: Option<&'v str>,
    counters: Counters,
    /// Its `prompt_tokens` and `completion_tokens`, as the session's own
    /// running totals added them.
    prompt: Option<u64>,
    completion: Option<u64>,
}

/// Reads one session whose file was last written at `written_ms`, given
/// what was kept of it last time; what to keep now, and the count of
/// usages refused (no count in them, or no time to date them by).
pub(crate) fn read(session: &Value, written_ms: Option<i64>, seen: &Seen, found: &mut Found<'_>) -> (Seen, u64) {
    let Some(session_id) = text(session, "/sessionId").filter(|id| !id.is_empty()) else {
        return (Seen::default(), 0);
    };
    found.session(session_id, text(session, "/workspaceDirectory"));
    let history = session.get("history").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    let mut chain = Chain::default();
    let mut responses = Vec::new();
    let mut refused = 0;
    for message in history.iter().filter_map(|item| item.get("message")) {
        if text(message, "/role") != Some("assistant") {
            continue;
        }
        let calls = message.get("toolCalls").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
        for id in calls.iter().filter_map(|call| text(call, "/id")) {
            chain.mix(b'c', id.as_bytes());
        }
        let Some(usage) = message.get("usage").filter(|usage| !usage.is_null()) else { continue };
        if !usage.is_object() {
            chain.mix(b'x', b"");
            refused += 1;
            continue;
        }
        let usage = Usage::of(usage);
        chain.mix(b'u', usage.spelled().as_bytes());
        let key = chain.key();
        if usage.prompt.is_none() && usage.completion.is_none() {
            refused += 1;
            continue;
        }
        let counters = usage.columns();
        if counters.counts_nothing() {
            continue;
        }
        responses.push(Held { key, model: usage.model, counters, prompt: usage.prompt, completion: usage.completion });
    }
    let own = (count(session.pointer("/usage/promptTokens")), count(session.pointer("/usage/completionTokens")));
    let first_own = first_own(&responses, own);
    let known: HashMap<&str, i64> = seen
        .first
        .iter()
        .filter(|(_, ms)| bee_proto::time::spells_as_rfc3339(*ms))
        .map(|(key, ms)| (key.as_str(), *ms))
        .collect();
    let mut now = Seen { first: Vec::with_capacity(responses.len()) };
    for (at, response) in responses.into_iter().enumerate() {
        let Some(at_ms) = known.get(response.key.as_str()).copied().or(written_ms) else {
            refused += 1;
            continue;
        };
        let beside = Beside { own_figure: None, copied: at < first_own };
        found.response_with(response.key.clone(), session_id, at_ms, response.model, response.counters, beside);
        now.first.push((response.key, at_ms));
    }
    (now, refused)
}

/// Where the session's own responses begin among `responses`: the last of
/// them add up to its own running totals (`own`: prompt and completion
/// tokens, which count only the calls this session made), and those
/// before them, more than it made, are copies (a fork's history, copied
/// first). All of them when the totals are unknown.
fn first_own(responses: &[Held<'_>], own: (Option<u64>, Option<u64>)) -> usize {
    let (Some(mut prompt), Some(mut completion)) = own else { return 0 };
    let mut first = responses.len();
    for (at, response) in responses.iter().enumerate().rev() {
        match (response.prompt, response.completion) {
            (Some(p), Some(c)) if p <= prompt && c <= completion => {
                prompt -= p;
                completion -= c;
                first = at;
            }
            _ => break,
        }
    }
    first
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::agents::tests::{Row, noted, read_whole, responses_of, rows, tiny_items};
    use crate::ledger::stored::responses::ResponseWrite;
    use std::path::PathBuf;
    use std::time::{Duration, SystemTime};

    /// The sessions the real CLI 1.5.47 wrote against a mock, in the order
    /// it wrote them: each file's name and its document.
    fn runs() -> Vec<(String, Value)> {
        let fixture: Vec<Value> =
            serde_json::from_slice(include_bytes!("../testdata/continue-1.5.47-sessions.json")).unwrap();
        fixture.into_iter().map(|run| (run["file"].as_str().unwrap().to_owned(), run["document"].clone())).collect()
    }

    /// Writes `document` as `path`, last written at `ms`.
    fn write(path: &Path, document: &Value, ms: i64) {
        std::fs::write(path, serde_json::to_vec_pretty(document).unwrap()).unwrap();
        let at = SystemTime::UNIX_EPOCH + Duration::from_millis(ms as u64);
        std::fs::File::options().write(true).open(path).unwrap().set_modified(at).unwrap();
    }

    /// Reads every run as the ledger would, each file read on from what its
    /// reader kept there, each written a second after the last.
    fn read_runs(runs: &[(String, Value)]) -> (tempfile::TempDir, Vec<ResponseWrite>) {
        let dir = tempfile::tempdir().unwrap();
        let mut states: HashMap<PathBuf, AgentState> = HashMap::new();
        let mut writes = Vec::new();
        for (at, (file, document)) in runs.iter().enumerate() {
            let path = dir.path().join(file);
            write(&path, document, 1_796_560_000_000 + 1000 * at as i64);
            let state = states.entry(path.clone()).or_default();
            let (found, kept) = read_whole(Provider::Continue, &path, state);
            *state = kept;
            writes.extend(found);
        }
        (dir, writes)
    }

    /// The sessions (and whether each write is a copy) holding the response
    /// keyed `key`, each once.
    fn held<'w>(writes: &'w [ResponseWrite], key: &str) -> Vec<(&'w str, bool)> {
        let mut held: Vec<_> =
            writes.iter().filter(|w| w.key == key).map(|w| (w.session_id.as_deref().unwrap(), w.copied)).collect();
        held.sort();
        held.dedup();
        held
    }

    /// Every response the mock served once, in Bee's columns: OpenAI's
    /// input net of its cached part (1000 + n − (400 + n)), no cache
    /// writes, reasoning inside output; Anthropic's input without either
    /// cache, its cache writes and reads, no reasoning count. Resumed
    /// sessions hold theirs once; a fork's copies are the same responses,
    /// marked copied, so each belongs to the session that made it.
    #[test]
    fn each_served_response_once_in_the_session_that_made_it() {
        let (_dir, writes) = read_runs(&runs());
        let found: Vec<Row> = rows(Provider::Continue, &writes);
        let s = Some;
        let openai = |n: u64| (s(600), s(0), s(400 + n), s(200 + n), s(50 + n), s(1200 + 2 * n));
        let anthropic = |n: u64| (s(1200 + n), s(500 + n), s(300 + n), s(220 + n), None, s(2220 + 4 * n));
        let mut columns: Vec<_> = found.iter().map(|r| (r.1, r.2, r.3, r.4, r.5, r.6)).collect();
        columns.sort();
        let mut served = vec![
            // The first mock: the same counters every time.
            openai(0),
            openai(0),
            // The second: counters grow with each request.
            openai(2),
            openai(3),
            openai(1165),
            openai(1166),
            anthropic(1167),
            anthropic(1),
            anthropic(2),
            anthropic(3),
            // Through the AI SDK: Anthropic's the same as its own adapter's
            // (its prompt 2003 holds both caches); OpenAI's Responses API
            // served input 1100 (cached 300), output 210 (reasoning 60,
            // not kept by the SDK path).
            anthropic(1),
            (s(800), s(0), s(300), s(210), None, s(1310)),
        ];
        served.sort();
        assert_eq!(columns, served);
        assert_eq!(found.len(), 12, "twelve responses, each under one key");

        let key = |session: &str, n: usize| -> String {
            let mut keys: Vec<&str> =
                writes.iter().filter(|w| w.session_id.as_deref() == Some(session)).map(|w| w.key.as_str()).collect();
            keys.sort_by_key(|key| key.split('-').next().unwrap().parse::<usize>().unwrap());
            keys.dedup();
            keys[n].to_owned()
        };
        let (plain, plain_fork) = ("db51c33a-64b5-4eda-b833-3e5ae060dfed", "d78f97f4-c847-466e-a5dd-af8d0f758bf5");
        let (tool, tool_fork) = ("a682f100-40f3-44b4-ae41-08575d917e26", "78a0fb89-e3a2-4363-8b2b-dafb5d63715a");
        let (ant, ant_fork) = ("be1195d3-18d8-40ec-9f9f-e4a017f0c4c9", "75d12e01-75d2-4eed-92d4-0c68c218cfa7");
        // Same counters, told apart by what came before them.
        assert_eq!(held(&writes, &key(plain, 0)), [(plain_fork, true), (plain, false)]);
        assert_eq!(held(&writes, &key(plain_fork, 1)), [(plain_fork, false)]);
        for n in 0..3 {
            assert_eq!(held(&writes, &key(tool, n)), [(tool_fork, true), (tool, false)], "{n}");
        }
        assert_eq!(held(&writes, &key(tool_fork, 3)), [(tool_fork, false)]);
        assert_eq!(held(&writes, &key(tool_fork, 4)), [(tool_fork, false)], "resumed through Anthropic's API");
        for n in 0..2 {
            assert_eq!(held(&writes, &key(ant, n)), [(ant_fork, true), (ant, false)], "{n}");
        }
        assert_eq!(held(&writes, &key(ant_fork, 2)), [(ant_fork, false)]);

        let models: std::collections::BTreeSet<_> = writes.iter().map(|w| w.model.as_deref()).collect();
        assert_eq!(models.into_iter().collect::<Vec<_>>(), [Some("claude-sonnet-4-5"), Some("mock-model")]);
        assert!(writes.iter().all(|w| w.own_figure.is_none() && w.is_final));
    }

    /// A resumed session read before and after the CLI rewrote it: the
    /// responses it held keep their keys and times (the same writes), the
    /// new one is dated by the rewrite; read again unchanged, the same
    /// writes once more.
    #[test]
    fn a_resumed_session_read_again_adds_nothing() {
        let runs = runs();
        let tool = "a682f100-40f3-44b4-ae41-08575d917e26.json";
        let [before, after] = [0, 1].map(|n| runs.iter().filter(|(file, _)| file == tool).nth(n).unwrap().1.clone());
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(tool);
        write(&path, &before, 1_796_563_813_000);
        let (first, state) = read_whole(Provider::Continue, &path, &AgentState::default());
        assert_eq!(first.len(), 2);
        write(&path, &after, 1_796_563_944_000);
        let (second, state) = read_whole(Provider::Continue, &path, &state);
        assert_eq!(second.len(), 3);
        assert_eq!(&second[..2], &first[..], "the same writes");
        assert_eq!(second[2].at_ms, 1_796_563_944_000);
        assert!(first.iter().all(|w| w.at_ms == 1_796_563_813_000));
        let digests = |writes: &[ResponseWrite]| writes.iter().map(ResponseWrite::digest).collect::<Vec<_>>();
        let (third, kept) = read_whole(Provider::Continue, &path, &state);
        assert_eq!((digests(&third), &kept), (digests(&second), &state));

        // Caught mid-write: nothing, and the times are kept for the next read.
        std::fs::write(&path, b"{\"sessionId\": \"a682f100").unwrap();
        let (none, kept) = read_whole(Provider::Continue, &path, &state);
        assert!(none.is_empty());
        assert_eq!(kept, state);
        write(&path, &after, 1_796_563_999_000);
        assert_eq!(digests(&read_whole(Provider::Continue, &path, &kept).0), digests(&second));
    }

    /// A fork read before the session it copied, and a fork whose own
    /// totals are gone: its copies are the same responses either way; only
    /// the totals tell they are copies, and without them none is marked.
    #[test]
    fn a_fork_counts_once_whatever_is_read_first() {
        let runs = runs();
        let ant = "be1195d3-18d8-40ec-9f9f-e4a017f0c4c9.json";
        let ant_fork = "75d12e01-75d2-4eed-92d4-0c68c218cfa7.json";
        let pick = |file: &str| runs.iter().find(|(f, _)| f == file).unwrap().clone();
        let (_dir, writes) = read_runs(&[pick(ant_fork), pick(ant)]);
        assert_eq!(rows(Provider::Continue, &writes).len(), 3);
        let copied: Vec<bool> = writes.iter().map(|w| w.copied).collect();
        assert_eq!(copied, [true, true, false, false, false]);

        let mut without = pick(ant_fork);
        without.1.as_object_mut().unwrap().remove("usage");
        let (_dir, writes) = read_runs(&[without, pick(ant)]);
        assert_eq!(rows(Provider::Continue, &writes).len(), 3);
        assert!(writes.iter().all(|w| !w.copied));
    }

    /// What the reader finds in `document`, written as a session file; the
    /// records it refused.
    fn read_one(document: &str) -> (Vec<ResponseWrite>, u64) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s1.json");
        std::fs::write(&path, document).unwrap();
        let mut evidence = Vec::new();
        let (_, refused) = SESSIONS.read(&path, &AgentState::default(), &mut evidence).unwrap();
        (responses_of(evidence), refused)
    }

    fn session(history: &str) -> String {
        format!(r#"{{"sessionId":"s1","workspaceDirectory":"/home/dev/app","history":{history}}}"#)
    }

    /// Documents that are no session, or hold none of its responses, say
    /// nothing; a usage that is no object, or has no count, is refused.
    #[test]
    fn malformed_documents_and_empty_sessions() {
        let openai = r#"{"prompt_tokens":10,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":4}}"#;
        let assistant = |usage: &str| format!(r#"{{"message":{{"role":"assistant","content":"hi","usage":{usage}}}}}"#);
        for nothing in [
            "",
            "{",
            "[]",
            r#"[{"sessionId":"s1","title":"Untitled Session","dateCreated":"1796560614974"}]"#,
            &session("[]")[..session("[]").len() - 1],
            r#"{"history":[]}"#,
            r#"{"sessionId":7,"history":[]}"#,
            &session("[]"),
            &session("{}"),
            &session("[1,null,{\"message\":5},{\"message\":{\"role\":\"user\",\"usage\":{\"prompt_tokens\":1}}}]"),
            &session(&format!("[{}]", assistant("null"))),
            &session(&format!("[{}]", assistant(r#"{"prompt_tokens":0,"completion_tokens":0}"#))),
        ] {
            assert_eq!(read_one(nothing), (Vec::new(), 0), "{nothing}");
        }
        let (writes, refused) = read_one(&session(&format!(
            "[{},{},{},{}]",
            assistant("7"),
            assistant(r#"{"model":"m"}"#),
            assistant(r#"{"prompt_tokens":"ten","completion_tokens":-1}"#),
            assistant(openai)
        )));
        assert_eq!((writes.len(), refused), (1, 3));
        assert_eq!(writes[0].key.split('-').next(), Some("3"), "the third usage that is an object");

        let dir = tempfile::tempdir().unwrap();
        let mut evidence = Vec::new();
        let empty = dir.path().join("sessions");
        assert!(
            crate::ledger::agents::agent(Provider::Continue).record_dirs(&|name: &str| {
                (name == "CONTINUE_GLOBAL_DIR").then(|| dir.path().as_os_str().to_owned())
            }) == [empty.clone()]
        );
        assert!(SESSIONS.read(&empty.join("none.json"), &AgentState::default(), &mut evidence).is_err());
        assert!(evidence.is_empty());
    }

    /// Hostile values: a count that is no count is unknown (never 0), and
    /// what depends on it too; a cached part or reasoning larger than what
    /// holds it is no split; a model name past any name's length is
    /// unknown; a kept state that does not decode is as none.
    #[test]
    fn hostile_values_are_unknown_never_zero() {
        let usage = |usage: &str| {
            let document = session(&format!(r#"[{{"message":{{"role":"assistant","usage":{usage}}}}}]"#));
            let (writes, refused) = read_one(&document);
            assert_eq!((writes.len(), refused), (1, 0), "{usage}");
            let t = &writes[0].tokens;
            (
                t.input_tokens,
                t.cache_creation_input_tokens,
                t.cache_read_input_tokens,
                t.output_tokens,
                t.reasoning_output_tokens,
                t.total_tokens,
            )
        };
        let s = Some;
        assert_eq!(
            usage(r#"{"prompt_tokens":-5,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":1}}"#),
            (None, s(0), s(1), s(2), None, None)
        );
        assert_eq!(
            usage(r#"{"prompt_tokens":5,"completion_tokens":2.5,"prompt_tokens_details":{"cached_tokens":9}}"#),
            (None, s(0), s(9), None, None, None),
            "more cached than the prompt"
        );
        assert_eq!(
            usage(r#"{"prompt_tokens":5,"completion_tokens":2,"completion_tokens_details":{"reasoning_tokens":3}}"#),
            (None, s(0), None, s(2), None, None),
            "no cached count, and more reasoning than output"
        );
        assert_eq!(
            usage(
                r#"{"prompt_tokens":5,"completion_tokens":2,"prompt_tokens_details":{"cache_read_tokens":"1","cache_write_tokens":3}}"#
            ),
            (s(5), s(3), None, s(2), None, None),
            "Anthropic's shape with a read count that is no count"
        );
        assert_eq!(
            usage(
                r#"{"prompt_tokens":18446744073709551615,"completion_tokens":1,"prompt_tokens_details":{"cache_read_tokens":1,"cache_write_tokens":1}}"#
            ),
            (s(u64::MAX), s(1), s(1), s(1), None, None),
            "a total past any count is unknown (and the store refuses the write)"
        );
        assert_eq!(
            usage(
                r#"{"prompt_tokens":100,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":10,"cache_write_tokens":30}}"#
            ),
            (s(60), s(30), s(10), s(2), None, s(102)),
            "OpenRouter's cache writes are part of its prompt"
        );
        assert_eq!(
            usage(
                r#"{"prompt_tokens":5,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":4,"cache_read_tokens":4,"cache_write_tokens":3}}"#
            ),
            (None, s(3), s(4), s(2), None, None),
            "the AI SDK's prompt smaller than the caches it holds"
        );

        let long = "m".repeat(bee_proto::ledger::bounds::MAX_TEXT_BYTES + 1);
        let document = session(&format!(
            r#"[{{"message":{{"role":"assistant","usage":{{"model":"{long}","prompt_tokens":5,"completion_tokens":1}}}}}}]"#
        ));
        let (writes, _) = read_one(&document);
        assert_eq!(writes[0].model, None);

        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s1.json");
        std::fs::write(&path, &document).unwrap();
        for state in [AgentState(Some("{\"first\": 5}".into())), AgentState(Some("[[\"1-x\", -1]]".into()))] {
            let (writes, _) = read_whole(Provider::Continue, &path, &state);
            assert_eq!(writes.len(), 1);
        }
        let kept = AgentState(Some(format!("{{\"first\":[[\"{}\",-99999999999999999]]}}", writes[0].key)));
        let (again, _) = read_whole(Provider::Continue, &path, &kept);
        assert!(bee_proto::time::spells_as_rfc3339(again[0].at_ms), "a kept time out of bounds is not taken");
    }

    /// Millions of tiny items where the reader does not look cost nothing
    /// and hide nothing; in a usage, the document is passed over and named;
    /// a document over the bound is named by its length, never read, and
    /// the times kept are kept.
    #[test]
    fn tiny_items_and_oversized_documents_are_passed_over_and_named() {
        let junk = tiny_items(1_500_000);
        let good = |content: &str| {
            session(&format!(
                r#"[{{"message":{{"role":"user","content":{content}}},"contextItems":{content}}},{{"message":{{"role":"assistant","content":{content},"usage":{{"prompt_tokens":10,"completion_tokens":2,"prompt_tokens_details":{{"cached_tokens":4}}}}}},"toolCallStates":{content}}}]"#
            ))
        };
        let _ = noted();
        assert_eq!(read_one(&good("0")).0.len(), 1);
        assert_eq!(read_one(&good(&junk)).0.len(), 1);
        assert!(noted().is_empty());
        let bad = session(&format!(r#"[{{"message":{{"role":"assistant","usage":{{"prompt_tokens":{junk}}}}}}}]"#));
        assert_eq!(read_one(&bad), (Vec::new(), 0));
        assert_eq!(noted(), [(0, bad.len() as u64, SkipReason::TooComplex)]);

        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s1.json");
        std::fs::File::create(&path).unwrap().set_len(MAX_DOCUMENT_BYTES + 1).unwrap();
        let kept = AgentState(Some("{\"first\":[[\"1-0\",1796560000000]]}".into()));
        let mut evidence = Vec::new();
        assert_eq!(SESSIONS.read(&path, &kept, &mut evidence).unwrap(), (kept, 0));
        assert!(evidence.is_empty());
        assert_eq!(noted(), [(0, MAX_DOCUMENT_BYTES + 1, SkipReason::OversizedDocument)]);
    }

    /// The session's project is the directory it ran in.
    #[test]
    fn the_project_is_its_workspace() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s1.json");
        std::fs::write(&path, session("[]")).unwrap();
        let mut evidence = Vec::new();
        SESSIONS.read(&path, &AgentState::default(), &mut evidence).unwrap();
        assert!(matches!(&evidence[..], [Evidence::SessionLogged(Provider::Continue, s), Evidence::SessionProject(p)]
            if s == "s1" && p.project == "-home-dev-app"));
    }
}
