//! A Kimi Code agent's wire log (`<session>/agents/<agent>/wire.jsonl`): a
//! `metadata` line, then one record a line, `{"type", …, "time"}` (unix
//! ms). Before each model request the agent writes an `llm.request` record
//! naming the provider's `model` and the configured `modelAlias`; after
//! each step (and each compaction) a `usage.record` whose `model` is that
//! alias and whose `usage` is `{inputOther, output, inputCacheRead,
//! inputCacheCreation}`. A subagent's usage is in its own wire log only.
//! The log's place names its session and agent. The records keep no
//! response id, and a fork copies a session's logs, records and times
//! included, into a new session: a response is keyed by what a copy keeps
//! (its time, agent, alias and counters), so it counts once.

use bee_proto::ledger::Provider;
use bee_proto::ledger::bounds::MAX_TEXT_BYTES;
use bee_proto::usage::Counters;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

use crate::ledger::agents::lines::{Found, LineRules, NamedSession, contains, count, markers, spelled, text, time_ms};
use crate::ledger::agents::sparse::{Keep, keep};

/// What the reader keeps of a wire log where it stopped: the session its
/// place names, the model the last request asked for, and the models the
/// requests named for their aliases (a usage record names only its alias).
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Wire {
    session: NamedSession,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    requested: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    aliases: BTreeMap<String, String>,
    /// The session and agent the log's place names.
    #[serde(skip)]
    from_path: Option<(String, String)>,
}

/// The most aliases kept: a session switches models a few times at most,
/// and a later alias still has the last request's model.
const MOST_ALIASES: usize = 16;

markers! {
    USAGE = b"\"usage.record\"";
    REQUEST = b"\"llm.request\"";
}

keep! {
    /// What [`Wire::read`] reads of a line.
    LINE = [
        "type", "time", "model", "modelAlias",
        "usage/inputOther", "usage/output", "usage/inputCacheRead", "usage/inputCacheCreation",
    ];
}

impl LineRules for Wire {
    const PROVIDER: Provider = Provider::KimiCode;

    fn keep() -> &'static Keep {
        &LINE
    }

    fn is_marked(line: &[u8]) -> bool {
        contains(line, &USAGE) || contains(line, &REQUEST)
    }

    fn opened(&mut self, path: &Path) {
        self.from_path = session_and_agent(path);
    }

    fn read(&mut self, line: &Value, found: &mut Found<'_>) -> bool {
        match text(line, "/type") {
            Some("llm.request") => {
                self.request(line);
                true
            }
            Some("usage.record") => self.usage(line, found),
            _ => true,
        }
    }
}

impl Wire {
    /// A model request (every retry too): the model it asked for, and the
    /// alias it was configured under.
    fn request(&mut self, line: &Value) {
        let name = |pointer: &str| text(line, pointer).filter(|name| !name.is_empty() && name.len() <= MAX_TEXT_BYTES);
        self.requested = name("/model").map(str::to_owned);
        if let (Some(model), Some(alias)) = (name("/model"), name("/modelAlias"))
            && (self.aliases.len() < MOST_ALIASES || self.aliases.contains_key(alias))
        {
            self.aliases.insert(alias.to_owned(), model.to_owned());
        }
    }

    /// One step's usage: a provider response.
    fn usage(&mut self, line: &Value, found: &mut Found<'_>) -> bool {
        let Some(usage) = line.get("usage").filter(|usage| !usage.is_null()) else { return true };
        if !usage.is_object() {
            return false;
        }
        let Some((session, agent)) = self.from_path.clone() else { return false };
        let Some(at_ms) = time_ms(line.get("time")) else { return false };
        self.session.name(&session, None, found);
        let field = |name: &str| count(usage.get(name));
        let counters = Counters {
            input_tokens: field("inputOther"),
            cache_creation_input_tokens: field("inputCacheCreation"),
            cache_read_input_tokens: field("inputCacheRead"),
            output_tokens: field("output"),
            ..Counters::default()
        };
        if counters.counts_nothing() {
            // A step the provider reported no usage for (written as zeros).
            return true;
        }
        let alias = text(line, "/model").filter(|alias| !alias.is_empty());
        // The model its alias's request asked for, else the last request's;
        // the alias itself where no request named one.
        let model =
            alias.and_then(|alias| self.aliases.get(alias)).or(self.requested.as_ref()).map(String::as_str).or(alias);
        let key = format!("{at_ms}\u{1f}{agent}\u{1f}{}\u{1f}{}", alias.unwrap_or(""), spelled(&counters.values()));
        found.response(key, &session, at_ms, model, counters);
        true
    }
}

/// The session and agent of `<session>/agents/<agent>/wire.jsonl`.
fn session_and_agent(path: &Path) -> Option<(String, String)> {
    let agent_dir = path.parent()?;
    let agents = agent_dir.parent()?;
    if name_of(agents) != Some("agents") {
        return None;
    }
    let (agent, session) = (name_of(agent_dir)?, name_of(agents.parent()?)?);
    (!agent.is_empty() && !session.is_empty()).then(|| (session.to_owned(), agent.to_owned()))
}

/// A path's last component, as text.
fn name_of(path: &Path) -> Option<&str> {
    path.file_name()?.to_str()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::agents::tests::{responses_of, rows};
    use crate::ledger::agents::{LogParser, read_log_at};
    use crate::ledger::stored::evidence::FileOffset;
    use crate::ledger::stored::responses::ResponseWrite;

    const SESSION: &str = "session_019f0000-0000-7000-8000-000000000001";
    const MAIN: &str = "/h/.kimi-code/sessions/wd_app_0123456789ab/session_019f0000-0000-7000-8000-000000000001/agents/main/wire.jsonl";

    fn request(alias: &str, model: &str, step: &str, time: i64) -> String {
        format!(
            r#"{{"type":"llm.request","kind":"loop","provider":"kimi","model":"{model}","modelAlias":"{alias}","thinkingEffort":"on","maxTokens":32000,"toolSelect":false,"systemPromptHash":"9f2c","toolsHash":"a1b2","messageCount":2,"turnStep":"{step}","time":{time}}}"#
        ) + "\n"
    }

    fn usage(alias: &str, time: i64, [input, output, read, write]: [u64; 4], scope: &str) -> String {
        format!(
            r#"{{"type":"usage.record","model":"{alias}","usage":{{"inputOther":{input},"output":{output},"inputCacheRead":{read},"inputCacheCreation":{write}}},"usageScope":"{scope}","time":{time}}}"#
        ) + "\n"
    }

    fn read_at(path: &str, log: &[u8]) -> (Vec<ResponseWrite>, u64) {
        let (evidence, unparseable) = read_log_at(Provider::KimiCode, Path::new(path), log);
        (responses_of(evidence), unparseable)
    }

    fn read(log: &str) -> (Vec<ResponseWrite>, u64) {
        read_at(MAIN, log.as_bytes())
    }

    /// A main agent's two turns and a compaction: each step once, every
    /// counter in its column, the model its request asked for (never the
    /// alias); a retried request adds nothing; the same log read again, or
    /// copied by a fork into another session, counts each step once.
    #[test]
    fn each_step_once_with_its_requests_model() {
        let log = [
            r#"{"type":"metadata","protocol_version":"1.4","created_at":1782900000000}"#.to_owned() + "\n",
            r#"{"type":"turn.prompt","input":[{"type":"text","text":"fix the usage.record parser"}],"origin":{"kind":"user"},"time":1782900000000}"#.to_owned() + "\n",
            request("kimi-code/k3", "kimi-k3", "0.1", 1_782_900_001_000),
            request("kimi-code/k3", "kimi-k3", "0.1", 1_782_900_001_500),
            r#"{"type":"context.append_loop_event","event":{"type":"tool.call","name":"Bash","args":{"command":"ls"},"turnId":0,"step":1}}"#.to_owned() + "\n",
            usage("kimi-code/k3", 1_782_900_002_000, [100, 40, 25, 10], "turn"),
            request("kimi-code/glm", "glm-5.2", "1.1", 1_782_900_010_000),
            usage("kimi-code/glm", 1_782_900_011_000, [30, 7, 2400, 0], "turn"),
            request("kimi-code/k3", "kimi-k3", "1.2", 1_782_900_012_000),
            usage("kimi-code/k3", 1_782_900_013_000, [5, 300, 2500, 0], "session"),
        ]
        .concat();
        let (writes, unparseable) = read(&log);
        assert_eq!(unparseable, 0);
        let models: Vec<_> = writes.iter().map(|w| w.model.as_deref()).collect();
        assert_eq!(models, [Some("kimi-k3"), Some("glm-5.2"), Some("kimi-k3")]);
        assert!(writes.iter().all(|w| w.session_id.as_deref() == Some(SESSION)));
        assert_eq!(writes[0].at_ms, 1_782_900_002_000);
        let (again, _) = read(&log);
        let fork = MAIN.replace(SESSION, "session_019f0000-0000-7000-8000-0000000000ff");
        let (copy, _) = read_at(&fork, log.as_bytes());
        assert_eq!(copy.iter().map(|w| &w.key).collect::<Vec<_>>(), writes.iter().map(|w| &w.key).collect::<Vec<_>>());
        let mut all = writes;
        all.extend(again);
        all.extend(copy);
        let found = rows(Provider::KimiCode, &all);
        let s = Some;
        let columns: Vec<_> = found.iter().map(|r| (r.1, r.2, r.3, r.4, r.5, r.6)).collect();
        assert_eq!(
            columns,
            [
                (s(100), s(10), s(25), s(40), None, s(175)),
                (s(30), s(0), s(2400), s(7), None, s(2437)),
                (s(5), s(0), s(2500), s(300), None, s(2805))
            ]
        );
    }

    /// The fixture a home of every agent holds (`testdata/`): a turn of
    /// two steps, each the model its request asked for.
    #[test]
    fn the_fixture_reads_as_the_home_of_every_agent_expects() {
        let (writes, unparseable) = read_at(MAIN, include_bytes!("testdata/kimi-code-wire.jsonl"));
        assert_eq!(unparseable, 0);
        assert!(writes.iter().all(|w| w.model.as_deref() == Some("kimi-k3")));
        let s = Some;
        let columns: Vec<_> =
            rows(Provider::KimiCode, &writes).into_iter().map(|r| (r.1, r.2, r.3, r.4, r.5, r.6)).collect();
        assert_eq!(
            columns,
            [(s(1200), s(0), s(0), s(80), None, s(1280)), (s(60), s(0), s(1280), s(45), None, s(1385))]
        );
    }

    /// A usage record names the alias of its request: the model is that
    /// alias's, even after another request; with no request at all it is
    /// the alias; a subagent's steps are its own, in the same session; a
    /// step reported as zeros is none.
    #[test]
    fn models_by_alias_and_subagents() {
        let log = [
            request("first", "kimi-k3", "0.1", 1_782_900_051_000),
            request("second", "glm-5.2", "0.2", 1_782_900_052_000),
            usage("first", 1_782_900_053_000, [24, 6, 0, 0], "turn"),
            usage("unknown-alias", 1_782_900_054_000, [1, 1, 0, 0], "turn"),
            usage("second", 1_782_900_055_000, [0, 0, 0, 0], "turn"),
        ]
        .concat();
        let (writes, _) = read(&log);
        let models: Vec<_> = writes.iter().map(|w| w.model.as_deref()).collect();
        assert_eq!(models, [Some("kimi-k3"), Some("glm-5.2")], "the last request's model for an alias none named");
        let (alone, _) = read(&usage("kimi-code/k3", 1_782_900_002_000, [7, 1, 0, 0], "turn"));
        assert_eq!(alone[0].model.as_deref(), Some("kimi-code/k3"));
        let helper = MAIN.replace("agents/main", "agents/agent-helper");
        let step = usage("kimi-code/k3", 1_782_900_002_000, [7, 1, 0, 0], "turn");
        let (sub, _) = read_at(&helper, step.as_bytes());
        assert_eq!(sub[0].session_id.as_deref(), Some(SESSION));
        assert_ne!(sub[0].key, alone[0].key, "the same figures in another agent's log are another step");
    }

    /// A pass that stopped after a request keeps its model: the next pass
    /// names the step's model.
    #[test]
    fn the_requested_model_is_kept_between_passes() {
        let first = request("kimi-code/k3", "kimi-k3", "0.1", 1_782_900_001_000);
        let step = usage("kimi-code/k3", 1_782_900_002_000, [100, 40, 25, 10], "turn");
        let path = Path::new(MAIN);
        let mut parser = LogParser::new(Provider::KimiCode, path, FileOffset::default());
        assert!(parser.line(first.as_bytes(), 0, &mut Vec::new()));
        let mut next = LogParser::new(Provider::KimiCode, path, parser.resume_point(first.len() as u64));
        let mut out = Vec::new();
        assert!(next.line(step.as_bytes(), first.len() as u64, &mut out));
        let writes = responses_of(out);
        assert_eq!(writes[0].model.as_deref(), Some("kimi-k3"));
    }

    /// Broken and hostile records: usage that is no object, no time, a
    /// line cut short, one not UTF-8 are unparseable and the log reads on;
    /// counters that are no counts are unknown, never 0; a log whose place
    /// names no session says nothing; an empty log nothing.
    #[test]
    fn broken_and_hostile_records() {
        let mut log = [
            r#"{"type":"usage.record","model":"a","usage":7,"time":1782900002000}"#,
            r#"{"type":"usage.record","model":"a","usage":{"inputOther":1,"output":1}}"#,
            r#"{"type":"usage.record","model":"a","usage":{"inputOther":"#,
            r#"{"type":"usage.record","model":"a","usage":null,"time":1782900002001}"#,
            r#"{"type":"usage.record","model":"a","usage":{"inputOther":"ten","output":-1,"inputCacheRead":1.5,"inputCacheCreation":99999999999999999999999},"time":1782900002002}"#,
            r#"{"type":"llm.request","model":{"name":"x"},"modelAlias":7}"#,
            r#"{"type":"usage.record","model":"a","usage":{"inputOther":3,"output":1},"time":1782900002003}"#,
        ]
        .join("\n")
        .into_bytes();
        log.extend_from_slice(
            b"\n{\"type\":\"usage.record\",\"model\":\"\xff\",\"usage\":{},\"time\":1782900002004}\n",
        );
        let (writes, unparseable) = read_at(MAIN, &log);
        assert_eq!(unparseable, 4, "usage no object; no time; cut short; not UTF-8");
        assert_eq!(writes.len(), 1, "a usage of no counts is none");
        assert_eq!(writes[0].tokens.input_tokens, Some(3));
        assert_eq!(writes[0].model.as_deref(), Some("a"), "a request that names no model names none");
        assert!(read_at("/h/.kimi-code/sessions/wd/s/wire.jsonl", &log).0.is_empty(), "no agent in its place");
        assert_eq!(read(""), (Vec::new(), 0), "an empty log");
        let odd = r#"{"type":"usage.record","model":"a","usage":{"inputOther":"ten","output":-1,"inputCacheRead":1.5,"inputCacheCreation":2},"time":1782900002002}"#;
        let (writes, _) = read(&format!("{odd}\n"));
        let t = &writes[0].tokens;
        assert_eq!(
            (t.input_tokens, t.output_tokens, t.cache_read_input_tokens, t.cache_creation_input_tokens),
            (None, None, None, Some(2))
        );
    }
}
