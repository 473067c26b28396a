//! A LingTai agent's token ledger (`<home>/<agent>/logs/token_ledger.jsonl`):
//! one JSON object a line, appended after every model call the agent makes
//! (`lingtai.kernel.token_ledger.append_token_entry`): `ts` (RFC 3339,
//! whole seconds, UTC), `input` (the whole prompt, its cached part
//! included), `output`, `thinking`, `cached` (cache reads), `model` and
//! `endpoint` when known, and tags beside them (`source`: `main`, `soul`,
//! `tc_wake`, `summarize_apriori`, …; a daemon's calls, mirrored into its
//! parent's ledger, carry `source: "daemon"`, `em_id`, `run_id`).
//!
//! A line keeps no id: the ledger's place names the agent's session, and a
//! call is keyed by its session, its place in the file (which only grows)
//! and what it says, so the ledger read again counts each call once.
//!
//! Whether `output` includes `thinking` depends on the kernel's adapter,
//! which the line does not name: its OpenAI-family adapters write the
//! provider's completion count with reasoning inside and the reasoning
//! count apart; its Gemini adapter writes candidates without thoughts and
//! the thoughts apart. Where `thinking` exceeds `output` it cannot be a
//! part of it, and output is both; elsewhere output is as written.

use bee_proto::ledger::Provider;
use bee_proto::usage::Counters;
use serde_json::Value;
use std::path::Path;

use crate::ledger::agents::agent::FileReader;
use crate::ledger::agents::lines::{
    Found, LastName, NamedSession, Unread, contains, count, decode_state, encode_state, markers, parse_record, spelled,
    text,
};
use crate::ledger::agents::sparse::keep;
use crate::ledger::stored::evidence::{AgentState, Evidence};

markers! {
    /// A counter every ledger line has, as Python's `json.dumps` spells it.
    INPUT = b"\"input\"";
}

keep! {
    /// What [`Ledger::read`] reads of a line.
    LINE = ["ts", "input", "output", "thinking", "cached", "model"];
}

/// The agent a ledger belongs to, by its place.
#[derive(Debug, Clone)]
struct Place {
    /// `<project>/<agent>`: the agent's folder, and the project its home
    /// is in (the home's own name where it is no project's `.lingtai`).
    session: String,
    /// The project's directory, when the home is a project's `.lingtai`.
    project: Option<String>,
}

/// Ingestion's reader of one agent's ledger.
pub(super) struct Ledger {
    /// The session named last (kept where reading stops).
    session: NamedSession,
    place: Option<Place>,
    sessions: LastName,
    models: LastName,
}

impl Ledger {
    pub(super) fn new(path: &Path, state: &AgentState) -> Ledger {
        Ledger {
            session: decode_state(state),
            place: place(path),
            sessions: LastName::default(),
            models: LastName::default(),
        }
    }

    /// Reads one ledger line that starts at byte `at`; `false` when it
    /// could not be read.
    fn read(&mut self, entry: &Value, at: u64, out: &mut Vec<Evidence>) -> bool {
        let names = ["input", "output", "thinking", "cached"];
        let recorded = names.map(|name| count(entry.get(name)));
        let [input, output, thinking, cached] = recorded;
        // A counter written that is no count: unknown, and the call counts.
        let unreadable =
            names.iter().any(|name| entry.get(*name).is_some_and(|value| !value.is_null() && value.as_u64().is_none()));
        // A call that reported no usage: no response.
        if recorded.iter().all(|counter| counter.unwrap_or(0) == 0) && !unreadable {
            return true;
        }
        let Some(place) = self.place.clone() else { return false };
        let Some(at_ms) = time_ms(entry.get("ts")) else { return false };
        let counters = Counters {
            // A cached part larger than the whole: the input is unknown.
            input_tokens: input.filter(|&input| cached.is_none_or(|cached| cached <= input)),
            cached_input_tokens: cached,
            output_tokens: match (output, thinking) {
                (Some(output), Some(thinking)) if thinking > output => output.checked_add(thinking),
                _ => output,
            },
            reasoning_output_tokens: thinking,
            ..Counters::default()
        };
        let mut found = Found::new(Provider::LingTai, &mut self.sessions, &mut self.models, out);
        self.session.name(&place.session, place.project.as_deref(), &mut found);
        let model = text(entry, "/model");
        let key = format!(
            "{}\u{1f}{at}\u{1f}{at_ms}\u{1f}{}\u{1f}{}",
            place.session,
            model.unwrap_or(""),
            spelled(&recorded)
        );
        found.response(key, &place.session, at_ms, model, counters);
        true
    }
}

impl FileReader for Ledger {
    fn line(&mut self, line: &[u8], at: u64, out: &mut Vec<Evidence>) -> bool {
        if !contains(line, &INPUT) {
            return true;
        }
        match parse_record(line, &LINE, at) {
            Ok(entry @ Value::Object(_)) => self.read(&entry, at, out),
            Ok(_) | Err(Unread::Malformed) => false,
            // Named already: not also counted as unparseable.
            Err(Unread::Noted) => true,
        }
    }

    fn finish(&mut self, _quiet_before_ms: i64, _out: &mut Vec<Evidence>) {}

    fn resume(&self, offset: u64) -> (u64, AgentState) {
        (offset, encode_state(&self.session))
    }
}

/// The agent a ledger at `path` (`<home>/<agent>/logs/token_ledger.jsonl`)
/// belongs to; `None` where the path names no agent.
fn place(path: &Path) -> Option<Place> {
    let agent = path.parent()?.parent()?;
    let agent_name = agent.file_name()?.to_str()?;
    let home = agent.parent();
    let home_name = home.and_then(Path::file_name).and_then(|name| name.to_str());
    let project = home.filter(|_| home_name == Some(".lingtai")).and_then(Path::parent);
    let project_name = match project {
        Some(project) => project.file_name().and_then(|name| name.to_str()),
        None => home_name,
    };
    let session = match project_name.filter(|name| !name.is_empty()) {
        Some(project_name) => format!("{project_name}/{agent_name}"),
        None => agent_name.to_owned(),
    };
    Some(Place { session, project: project.and_then(Path::to_str).map(str::to_owned) })
}

/// A ledger line's time: RFC 3339 (the kernel writes UTC, whole seconds),
/// or a unix time in seconds or milliseconds (as LingTai's readers take a
/// number).
fn time_ms(value: Option<&Value>) -> Option<i64> {
    let ms = match value? {
        Value::String(time) => time.parse::<jiff::Timestamp>().ok()?.as_millisecond(),
        Value::Number(time) => {
            let time = time.as_i64()?;
            if time < 1_000_000_000_000 { time.checked_mul(1000)? } else { time }
        }
        _ => return None,
    };
    Some(ms).filter(|&ms| bee_proto::time::spells_as_rfc3339(ms))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::agents::tests::{noted, responses_of, rows, tiny_items};
    use crate::ledger::agents::{MAX_LINE_BYTES, read_log_at};
    use crate::ledger::stored::responses::ResponseWrite;
    use bee_proto::ledger::SkipReason;

    const PATH: &str = "/work/app/.lingtai/orchestrator/logs/token_ledger.jsonl";

    fn read(log: &[u8]) -> (Vec<ResponseWrite>, u64) {
        let (evidence, unparseable) = read_log_at(Provider::LingTai, Path::new(PATH), log);
        (responses_of(evidence), unparseable)
    }

    /// An agent's ledger as the kernel writes it: main calls, a soul
    /// consultation, a daemon's call mirrored with its tags, a Gemini
    /// call whose thoughts exceed its candidates, a call that reported no
    /// usage, an untagged line from an older kernel without a model. Each
    /// call with usage is one response in the agent's session, its project
    /// the directory holding `.lingtai`, in OpenAI's shape.
    #[test]
    fn each_call_once_in_its_agents_session() {
        let log = include_bytes!("testdata/token_ledger.jsonl");
        let (evidence, unparseable) = read_log_at(Provider::LingTai, Path::new(PATH), log);
        assert_eq!(unparseable, 0);
        assert!(evidence.iter().any(|e| matches!(e, Evidence::SessionProject(p) if p.project == "-work-app")));
        let writes = responses_of(evidence);
        assert!(writes.iter().all(|w| w.session_id.as_deref() == Some("app/orchestrator")));
        let s = Some;
        let columns: Vec<_> = writes
            .iter()
            .map(|w| {
                let row = &rows(Provider::LingTai, std::slice::from_ref(w))[0];
                (row.1, row.2, row.3, row.4, row.5, row.6)
            })
            .collect();
        assert_eq!(
            columns,
            [
                (s(90), None, s(10), s(20), s(5), s(120)),
                (s(1200), None, s(12800), s(310), s(0), s(14310)),
                (s(2400), None, s(0), s(180), s(64), s(2580)),
                (s(640), None, s(3200), s(95), s(0), s(3935)),
                (s(5000), None, s(0), s(340), s(300), s(5340)),
                (s(700), None, s(0), s(50), s(0), s(750)),
            ]
        );
        assert_eq!(writes[0].model.as_deref(), Some("gpt-5.5"));
        assert_eq!(writes[5].model, None, "an older line names no model");
        assert_eq!(writes[0].at_ms, 1_780_536_309_000);
        let (again, _) = read(log);
        let mut all = writes.clone();
        all.extend(again);
        assert_eq!(rows(Provider::LingTai, &all).len(), 6, "the ledger read again adds nothing");
    }

    /// Two identical calls in one second are two lines, two responses;
    /// a pass resumed where another stopped keys them as a whole read.
    #[test]
    fn identical_calls_are_two_and_a_resumed_pass_agrees() {
        let line = r#"{"source": "main", "ts": "2026-06-04T01:25:09Z", "input": 100, "output": 20, "thinking": 0, "cached": 0, "model": "deepseek-chat"}"#;
        let log = format!("{line}\n{line}\n");
        let (whole, unparseable) = read(log.as_bytes());
        assert_eq!((whole.len(), unparseable), (2, 0));
        assert_ne!(whole[0].key, whole[1].key);
        let mut evidence = Vec::new();
        let mut first = Ledger::new(Path::new(PATH), &AgentState::default());
        assert!(first.line(format!("{line}\n").as_bytes(), 0, &mut evidence));
        let (offset, state) = first.resume(line.len() as u64 + 1);
        let mut second = Ledger::new(Path::new(PATH), &state);
        assert!(second.line(format!("{line}\n").as_bytes(), offset, &mut evidence));
        let keys = |writes: &[ResponseWrite]| writes.iter().map(|w| w.key.clone()).collect::<Vec<_>>();
        assert_eq!(keys(&responses_of(evidence)), keys(&whole));
    }

    /// Broken lines: no JSON object, no time, a line cut short are
    /// unparseable and the ledger reads on; counters that are no counts
    /// are unknown, never 0; a cached part larger than the input leaves it
    /// unknown; an empty ledger holds nothing; a ledger whose place names
    /// no agent names no session.
    #[test]
    fn broken_lines_are_counted_and_unknown_stays_unknown() {
        let good = r#"{"ts": "2026-06-04T01:25:09Z", "input": 100, "output": 20, "thinking": 0, "cached": 0}"#;
        let log = [
            "[\"input\"]",
            r#"{"input": 100, "output": 20, "thinking": 0, "cached": 0}"#,
            &good[..good.len() - 10],
            r#"{"ts": "2026-06-04T01:25:10Z", "input": "100", "output": -1, "thinking": 0.5, "cached": 0}"#,
            r#"{"ts": "2026-06-04T01:25:11Z", "input": 10, "output": 2, "thinking": 0, "cached": 30}"#,
            good,
        ]
        .join("\n")
            + "\n";
        let (writes, unparseable) = read(log.as_bytes());
        assert_eq!((writes.len(), unparseable), (3, 3));
        let t = |at: usize| &writes[at].tokens;
        assert_eq!((t(0).input_tokens, t(0).output_tokens, t(0).reasoning_output_tokens), (None, None, None));
        assert_eq!((t(1).input_tokens, t(1).cached_input_tokens), (None, Some(30)));
        assert_eq!(read(b"").0.len(), 0, "an empty ledger");
        let (evidence, unparseable) =
            read_log_at(Provider::LingTai, Path::new("token_ledger.jsonl"), format!("{good}\n").as_bytes());
        assert_eq!((responses_of(evidence).len(), unparseable), (0, 1));
    }

    /// Bytes that are no UTF-8 in a value read make the line unparseable;
    /// a line over the line bound is passed over and named; millions of
    /// tiny items in a value not read are read past, and in a value read
    /// the line is named, not parsed.
    #[test]
    fn hostile_lines_do_not_stop_the_ledger() {
        let mut log = b"{\"ts\": \"2026-06-04T01:25:09Z\", \"input\": 1, \"model\": \"gpt\xff\"}\n".to_vec();
        let at = log.len() as u64;
        let long = format!("{}\n", " ".repeat(MAX_LINE_BYTES as usize));
        log.extend_from_slice(long.as_bytes());
        let line = |endpoint: &str, input: &str| {
            format!(r#"{{"endpoint": {endpoint}, "ts": "2026-06-04T01:25:09Z", "input": {input}, "output": 2}}"#) + "\n"
        };
        log.extend_from_slice(line("\"e\"", "10").as_bytes());
        let _ = noted();
        let (writes, unparseable) = read(&log);
        assert_eq!((writes.len(), unparseable), (1, 1));
        assert_eq!(noted(), [(at, long.len() as u64, SkipReason::OversizedLine)]);

        let junk = tiny_items(1_500_000);
        assert_eq!(read(line(&junk, "10").as_bytes()).0.len(), 1);
        assert!(noted().is_empty());
        let bad = line("\"e\"", &junk);
        let (writes, unparseable) = read(format!("{bad}{}", line("\"e\"", "10")).as_bytes());
        assert_eq!((writes.len(), unparseable), (1, 0));
        assert_eq!(noted(), [(0, bad.len() as u64, SkipReason::TooComplex)]);
    }

    #[test]
    fn the_agent_and_project_a_ledger_belongs_to() {
        let of = |path: &str| place(Path::new(path)).map(|place| (place.session, place.project));
        assert_eq!(
            of("/work/app/.lingtai/orchestrator/logs/token_ledger.jsonl"),
            Some(("app/orchestrator".to_owned(), Some("/work/app".to_owned())))
        );
        assert_eq!(of("/srv/agents/scout/logs/token_ledger.jsonl"), Some(("agents/scout".to_owned(), None)));
        assert_eq!(of("token_ledger.jsonl"), None);
    }
}
