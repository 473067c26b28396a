//! An Aside session transcript (`<account>/sessions/<session>/messages.jsonl`):
//! one message a line, flat. Each provider response is an assistant message
//! `{"role": "assistant", "timestamp", "model", "provider", "responseId",
//! "usage": {"input", "output", "cacheRead", "cacheWrite", "reasoning",
//! "totalTokens", "cost": {"total"}}}` — pi's message shape with a
//! reasoning count: input without either cache, output with its reasoning.
//! The transcript's place names its session (`<account>/<session>`). A
//! response is counted once by its `responseId`; one without an id is keyed
//! by what a copy of it keeps (its time, model and counters).
//! `usage.cost.total` is Aside's own figure of the response's cost; 0 (what
//! a gateway that prices nothing writes) is no cost, not a free call.

use bee_proto::ledger::Provider;
use bee_proto::usage::Counters;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::Path;

use crate::ledger::agents::lines::{
    Beside, Found, LineRules, NamedSession, contains, count, markers, spelled, text, time_ms,
};
use crate::ledger::agents::sparse::{Keep, keep};

/// What the reader keeps of a transcript: the session its place names.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Messages {
    session: NamedSession,
    #[serde(skip)]
    from_path: Option<String>,
}

markers! {
    USAGE = b"\"usage\"";
}

keep! {
    /// What [`Messages::read`] reads of a line.
    LINE = [
        "role", "timestamp", "model", "responseId",
        "usage/input", "usage/output", "usage/cacheRead", "usage/cacheWrite", "usage/reasoning",
        "usage/totalTokens", "usage/cost/total",
    ];
}

impl LineRules for Messages {
    const PROVIDER: Provider = Provider::Aside;

    fn keep() -> &'static Keep {
        &LINE
    }

    fn is_marked(line: &[u8]) -> bool {
        contains(line, &USAGE)
    }

    fn opened(&mut self, path: &Path) {
        self.from_path = session_of(path);
    }

    fn read(&mut self, line: &Value, found: &mut Found<'_>) -> bool {
        if text(line, "/role") != Some("assistant") {
            return true;
        }
        let Some(usage) = line.get("usage").filter(|usage| !usage.is_null()) else { return true };
        if !usage.is_object() {
            return false;
        }
        let Some(session) = self.from_path.clone() else { return false };
        let Some(at_ms) = time_ms(line.get("timestamp")) else { return false };
        self.session.name(&session, None, found);
        let counters = counters(usage);
        if counters.counts_nothing() {
            // A request that failed before the provider counted anything.
            return true;
        }
        let model = text(line, "/model").filter(|model| !model.is_empty());
        let key = match text(line, "/responseId").filter(|id| !id.is_empty()) {
            Some(id) => id.to_owned(),
            None => format!("{at_ms}\u{1f}{}\u{1f}{}", model.unwrap_or(""), spelled(&counters.values())),
        };
        let cost = usage.pointer("/cost/total").and_then(Value::as_f64).filter(|&cost| cost > 0.0);
        found.response_with(key, &session, at_ms, model, counters, Beside { own_figure: cost, copied: false });
        true
    }
}

/// `<account>/<session>`, from `<account>/sessions/<session>/messages.jsonl`:
/// a session's folder name is unique within its account only.
fn session_of(path: &Path) -> Option<String> {
    let session_dir = path.parent()?;
    let sessions = session_dir.parent()?;
    if name_of(sessions) != Some("sessions") {
        return None;
    }
    let (session, account) = (name_of(session_dir)?, name_of(sessions.parent()?)?);
    (!session.is_empty() && !account.is_empty()).then(|| format!("{account}/{session}"))
}

/// A path's last component, as text.
fn name_of(path: &Path) -> Option<&str> {
    path.file_name()?.to_str()
}

/// Aside's `usage`, in Anthropic's shape: input without either cache, cache
/// writes, cache reads, output with its reasoning, and their sum
/// `totalTokens`. Reasoning past the output it is a part of is unknown.
fn counters(usage: &Value) -> Counters {
    let field = |name: &str| count(usage.get(name));
    let output = field("output");
    let reasoning = field("reasoning").filter(|&reasoning| output.is_some_and(|output| reasoning <= output));
    Counters {
        input_tokens: field("input"),
        cache_creation_input_tokens: field("cacheWrite"),
        cache_read_input_tokens: field("cacheRead"),
        output_tokens: output,
        reasoning_output_tokens: reasoning,
        total_tokens: field("totalTokens"),
        ..Counters::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::agents::read_log_at;
    use crate::ledger::agents::tests::{responses_of, rows};
    use crate::ledger::stored::responses::ResponseWrite;

    const PATH: &str = "/h/.aside/u/0/sessions/2026-09-05_one/messages.jsonl";

    fn read_at(path: &str, log: &[u8]) -> (Vec<ResponseWrite>, u64) {
        let (evidence, unparseable) = read_log_at(Provider::Aside, Path::new(path), log);
        (responses_of(evidence), unparseable)
    }

    fn read(log: &str) -> (Vec<ResponseWrite>, u64) {
        read_at(PATH, log.as_bytes())
    }

    /// A transcript of a prompt and two responses, one of them written
    /// twice: each response once, by its id, every counter in its column,
    /// Aside's cost beside it; a user message with usage is no response.
    #[test]
    fn each_response_once_with_every_counter() {
        let log = concat!(
            "{\"role\":\"user\",\"timestamp\":1788598095000,\"content\":\"hello\",\"usage\":{\"input\":900}}\n",
            "{\"role\":\"assistant\",\"timestamp\":1788598095439,\"model\":\"gpt-4o\",\"provider\":\"openai-codex\",\"responseId\":\"resp_1\",\"content\":[{\"type\":\"text\",\"text\":\"hi\"}],\"usage\":{\"input\":10,\"output\":20,\"cacheRead\":30,\"cacheWrite\":4,\"reasoning\":7,\"totalTokens\":64,\"cost\":{\"input\":0.1,\"total\":0.25}}}\n",
            "{\"role\":\"assistant\",\"timestamp\":\"2026-09-05T12:00:00Z\",\"model\":\"claude-sonnet-4\",\"provider\":\"anthropic\",\"responseId\":\"msg_2\",\"usage\":{\"input\":3,\"output\":5,\"cacheRead\":100,\"cacheWrite\":0,\"reasoning\":0,\"totalTokens\":108,\"cost\":{\"total\":0.001}}}\n",
            "{\"role\":\"assistant\",\"timestamp\":1788598095439,\"model\":\"gpt-4o\",\"provider\":\"openai-codex\",\"responseId\":\"resp_1\",\"usage\":{\"input\":10,\"output\":20,\"cacheRead\":30,\"cacheWrite\":4,\"reasoning\":7,\"totalTokens\":64,\"cost\":{\"total\":0.25}}}\n",
        );
        let (writes, unparseable) = read(log);
        assert_eq!(unparseable, 0);
        let (again, _) = read(log);
        let mut all = writes.clone();
        all.extend(again);
        let s = Some;
        assert_eq!(
            rows(Provider::Aside, &all),
            [
                ("msg_2".into(), s(3), s(0), s(100), s(5), s(0), s(108)),
                ("resp_1".into(), s(10), s(4), s(30), s(20), s(7), s(64)),
            ]
        );
        assert!(writes.iter().all(|w| w.session_id.as_deref() == Some("0/2026-09-05_one")));
        assert_eq!(writes[0].model.as_deref(), Some("gpt-4o"));
        assert_eq!(writes[0].at_ms, 1_788_598_095_439);
        assert_eq!(writes[0].own_figure, Some(0.25));
        assert_eq!(writes[1].at_ms, 1_788_609_600_000);
        assert_eq!(writes[1].own_figure, Some(0.001));
    }

    /// The fixture a home of every agent holds (`testdata/`): a response
    /// written twice and another, each once, Aside's cost beside it.
    #[test]
    fn the_fixture_reads_as_the_home_of_every_agent_expects() {
        let (writes, unparseable) = read_at(PATH, include_bytes!("testdata/aside-messages.jsonl"));
        assert_eq!(unparseable, 0);
        let s = Some;
        assert_eq!(
            rows(Provider::Aside, &writes),
            [
                ("msg_aside_1".into(), s(120), s(200), s(1000), s(40), s(10), s(1360)),
                ("resp_aside_2".into(), s(80), s(0), s(0), s(20), s(0), s(100)),
            ]
        );
        assert_eq!(writes[0].own_figure, Some(0.0045));
    }

    /// Responses without an id: two calls that differ count twice, a line
    /// repeated once; a cost of 0 is unknown; an all-zero usage is no
    /// response; reasoning past its output is unknown.
    #[test]
    fn responses_without_an_id_and_odd_figures() {
        let no_id = "{\"role\":\"assistant\",\"timestamp\":1788609600000,\"model\":\"gpt-4o\",\"provider\":\"aside\",\"usage\":{\"input\":2,\"output\":4,\"cacheRead\":0,\"cacheWrite\":0,\"reasoning\":1,\"cost\":{\"total\":0}}}\n";
        let other = "{\"role\":\"assistant\",\"timestamp\":1788609601000,\"model\":\"gpt-4o\",\"usage\":{\"input\":2,\"output\":4,\"reasoning\":99}}\n";
        let zero = "{\"role\":\"assistant\",\"timestamp\":1788609602000,\"usage\":{\"input\":0,\"output\":0}}\n";
        let (writes, unparseable) = read(&[no_id, no_id, other, zero].concat());
        assert_eq!(unparseable, 0);
        assert_eq!(writes.len(), 3);
        assert_eq!(writes[0].key, writes[1].key, "a repeated line is the same response");
        assert_ne!(writes[0].key, writes[2].key);
        assert_eq!(rows(Provider::Aside, &writes).len(), 2);
        assert_eq!(writes[0].own_figure, None, "a cost of 0 is no cost");
        assert_eq!(writes[0].tokens.reasoning_output_tokens, Some(1));
        assert_eq!(writes[2].tokens.reasoning_output_tokens, None, "reasoning past its output");
        assert_eq!(writes[2].tokens.cache_read_input_tokens, None, "a counter not written is unknown");
    }

    /// Broken and hostile lines: usage that is no object, no time, a line
    /// cut short, one not UTF-8 are unparseable and the transcript reads on;
    /// counters that are no counts are unknown, never 0; a transcript whose
    /// place names no session says nothing; an empty one nothing.
    #[test]
    fn broken_and_hostile_lines() {
        let mut log = concat!(
            "{\"role\":\"assistant\",\"timestamp\":1788609600000,\"usage\":7}\n",
            "{\"role\":\"assistant\",\"responseId\":\"r0\",\"usage\":{\"input\":1,\"output\":1}}\n",
            "{\"role\":\"assistant\",\"timestamp\":1788609600000,\"usage\":{\"input\":\n",
            "not json \"usage\"\n",
            "{\"role\":\"assistant\",\"timestamp\":1788609600000,\"usage\":null}\n",
            "{\"role\":\"assistant\",\"timestamp\":1788609600001,\"responseId\":\"r1\",\"usage\":{\"input\":\"ten\",\"output\":-3,\"cacheRead\":1.5,\"cacheWrite\":99999999999999999999999,\"reasoning\":2,\"totalTokens\":7,\"cost\":{\"total\":\"free\"}}}\n",
        )
        .as_bytes()
        .to_vec();
        log.extend_from_slice(b"{\"role\":\"assistant\",\"timestamp\":1788609600002,\"usage\":{\"input\":\"\xff\"}}\n");
        log.extend_from_slice(
            b"{\"role\":\"assistant\",\"timestamp\":1788609600003,\"responseId\":\"r2\",\"usage\":{\"input\":1,\"output\":2}}\n",
        );
        let (writes, unparseable) = read_at(PATH, &log);
        assert_eq!(unparseable, 5, "usage no object; no time; cut short; not JSON; not UTF-8");
        let keys: Vec<&str> = writes.iter().map(|w| w.key.as_str()).collect();
        assert_eq!(keys, ["r1", "r2"]);
        let t = &writes[0].tokens;
        assert_eq!((t.input_tokens, t.output_tokens, t.cache_read_input_tokens), (None, None, None));
        assert_eq!((t.cache_creation_input_tokens, t.reasoning_output_tokens), (None, None));
        assert_eq!(t.total_tokens, None, "a total that is not the sum of its parts is left to the ledger");
        assert_eq!(writes[0].own_figure, None);
        assert_eq!(read_at("messages.jsonl", &log).0.len(), 0, "a place that names no session");
        assert_eq!(read_at("/h/.aside/u/0/memory/messages.jsonl", &log).0.len(), 0);
        assert_eq!(read(""), (Vec::new(), 0), "an empty transcript");
    }
}
