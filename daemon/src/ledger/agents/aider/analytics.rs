//! Aider's analytics log: one JSON event a line, `{"event", "properties",
//! "user_id", "time"}` (`time` in unix seconds, `user_id` the install's
//! id from `~/.aider/analytics.json`), appended by every Aider process the
//! log is named to. Each `launched` event starts a process; each
//! `message_send` event is one reply of its main model, with `main_model`
//! (`<provider>/REDACTED` for a model Aider's list lacks, `None` with no
//! provider prefix either), `prompt_tokens`, `completion_tokens`,
//! `total_tokens`, `cost` and `total_cost`.
//!
//! The counts are no token counter: a streamed reply (Aider's default) logs
//! Aider's own count of the text it sent and got back, a reply not streamed
//! the provider's counts, and nothing in the event says which. So a reply
//! is counted with every token counter unknown, never an estimate passed as
//! a count, and `prompt_tokens + completion_tokens` is kept as Aider's own
//! figure (its unit: tokens the agent estimated, shown in a column of their
//! own); its `cost` is Aider's price of the same figures, not read.
//!
//! No event names a session or a reply: a process is a session (its
//! `launched` event's time and the install's id), and a reply is keyed by
//! the install's id, its time and its line's place in the log — what the
//! same log read again, or a copy of it, keeps.

use bee_proto::ledger::Provider;
use bee_proto::usage::Counters;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::ledger::agents::agent::FileReader;
use crate::ledger::agents::lines::{
    Beside, Found, LastName, NamedSession, Unread, contains, count, decode_state, encode_state, markers, parse_record,
    text,
};
use crate::ledger::agents::sparse::keep;
use crate::ledger::stored::evidence::{AgentState, Evidence};

/// Longest install id read: Aider's is a UUID; a longer one is no id of its.
const MAX_USER_ID_BYTES: usize = 128;

markers! {
    /// The events read, as Python's `json.dump` spells them.
    LAUNCHED = b"\"launched\"";
    MESSAGE_SEND = b"\"message_send\"";
}

keep! {
    /// What [`Analytics::line`] reads of a line.
    LINE = [
        "event",
        "user_id",
        "time",
        "properties/main_model",
        "properties/prompt_tokens",
        "properties/completion_tokens",
    ];
}

/// What is kept where reading stops: the process the last `launched`
/// event started, and the session named last.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct State {
    /// The install that launched it, and its session.
    launched: Option<(String, String)>,
    session: NamedSession,
}

/// Ingestion's reader of an analytics log.
pub(super) struct Analytics {
    state: State,
    sessions: LastName,
    models: LastName,
}

impl Analytics {
    pub(super) fn new(state: &AgentState) -> Analytics {
        Analytics { state: decode_state(state), sessions: LastName::default(), models: LastName::default() }
    }
}

impl FileReader for Analytics {
    fn line(&mut self, line: &[u8], at: u64, out: &mut Vec<Evidence>) -> bool {
        if !contains(line, &MESSAGE_SEND) && !contains(line, &LAUNCHED) {
            return true;
        }
        let value = match parse_record(line, &LINE, at) {
            Ok(value @ Value::Object(_)) => value,
            Ok(_) | Err(Unread::Malformed) => return false,
            // Named already: not also counted as unparseable.
            Err(Unread::Noted) => return true,
        };
        let event = text(&value, "/event");
        if !matches!(event, Some("launched" | "message_send")) {
            return true;
        }
        let user = text(&value, "/user_id").filter(|user| !user.is_empty() && user.len() <= MAX_USER_ID_BYTES);
        let time = value.get("time").and_then(Value::as_i64);
        let at_ms = time.and_then(|time| time.checked_mul(1000)).filter(|&ms| bee_proto::time::spells_as_rfc3339(ms));
        let (Some(user), Some(time), Some(at_ms)) = (user, time, at_ms) else { return false };
        if event == Some("launched") {
            self.state.launched = Some((user.to_owned(), format!("{time}-{user}")));
            return true;
        }
        // A reply of the process launched last, if that process is this
        // install's (two installs may share a log); else of the install.
        let session = match &self.state.launched {
            Some((launched_by, session)) if launched_by == user => session.clone(),
            _ => user.to_owned(),
        };
        let mut found = Found::new(Provider::Aider, &mut self.sessions, &mut self.models, out);
        self.state.session.name(&session, None, &mut found);
        let model = text(&value, "/properties/main_model").filter(|model| known_model(model));
        let key = format!("{user}\u{1f}{time}\u{1f}{at}");
        // Aider's own figure: both its counts, or unknown (never 0).
        let estimate = count(value.pointer("/properties/prompt_tokens"))
            .zip(count(value.pointer("/properties/completion_tokens")))
            .and_then(|(prompt, completion)| prompt.checked_add(completion));
        let beside = Beside { own_figure: estimate.map(|tokens| tokens as f64), copied: false };
        found.response_with(key, &session, at_ms, model, Counters::default(), beside);
        true
    }

    fn finish(&mut self, _quiet_before_ms: i64, _out: &mut Vec<Evidence>) {}

    fn resume(&self, offset: u64) -> (u64, AgentState) {
        (offset, encode_state(&self.state))
    }
}

/// Whether Aider named the model: it writes `<provider>/REDACTED` for one
/// its model list lacks, and Python's `None` for one with no provider
/// prefix either.
fn known_model(model: &str) -> bool {
    !model.is_empty() && model != "None" && !model.ends_with("/REDACTED")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::agents::tests::{noted, responses_of, rows, tiny_items};
    use crate::ledger::agents::{MAX_LINE_BYTES, read_log};
    use crate::ledger::stored::responses::ResponseWrite;
    use bee_proto::ledger::SkipReason;

    const USER: &str = "119fc35f-3752-4964-a92b-be47d0d58e24";

    fn read(log: &[u8]) -> (Vec<ResponseWrite>, u64) {
        let (evidence, unparseable) = read_log(Provider::Aider, log);
        (responses_of(evidence), unparseable)
    }

    fn message_send(time: i64, model: &str) -> String {
        format!(
            r#"{{"event": "message_send", "properties": {{"main_model": "{model}", "weak_model": "{model}", "editor_model": "{model}", "edit_format": "diff", "prompt_tokens": 2344, "completion_tokens": 10, "total_tokens": 2354, "cost": 0.007182, "total_cost": 0.007182}}, "user_id": "{USER}", "time": {time}}}"#
        ) + "\n"
    }

    fn launched(time: i64) -> String {
        format!(r#"{{"event": "launched", "properties": {{}}, "user_id": "{USER}", "time": {time}}}"#) + "\n"
    }

    /// Aider 0.86.2's own log of four runs against a mock (streamed and
    /// not, OpenAI's and Anthropic's API): one reply each, in its own
    /// process's session, dated at its event, its model unknown (Aider
    /// redacted it), every counter unknown — the streamed ones are Aider's
    /// estimates (593 and 2,344 sent for what the mock counted 1,000 and
    /// 2,500) and the event does not say which are — each reply's two
    /// figures kept together as Aider's own, and no cost read.
    #[test]
    fn each_reply_of_the_real_log_once_with_its_tokens_unknown() {
        let log = include_bytes!("../testdata/aider-0.86.2-analytics.jsonl");
        let (writes, unparseable) = read(log);
        assert_eq!(unparseable, 0);
        let sessions: Vec<_> = writes.iter().map(|w| w.session_id.as_deref().unwrap_or("")).collect();
        assert_eq!(
            sessions,
            [1_796_560_966, 1_796_560_983, 1_796_561_002, 1_796_561_009].map(|t| format!("{t}-{USER}")),
            "each process a session"
        );
        let at: Vec<_> = writes.iter().map(|w| w.at_ms).collect();
        assert_eq!(at, [1_796_560_970_000, 1_796_560_988_000, 1_796_561_007_000, 1_796_561_015_000]);
        for write in &writes {
            assert_eq!(write.tokens, Counters::default(), "no count is known, none is 0");
            assert_eq!(write.model, None);
            assert!(write.is_final && write.is_valid());
        }
        let own: Vec<_> = writes.iter().map(|w| w.own_figure).collect();
        assert_eq!(own, [604.0, 1_200.0, 2_354.0, 2_720.0].map(Some), "prompt and completion tokens, as logged");
        let none = (None, None, None, None, None, None);
        let found = rows(Provider::Aider, &writes);
        assert_eq!(found.iter().map(|r| (r.1, r.2, r.3, r.4, r.5, r.6)).collect::<Vec<_>>(), [none; 4]);
    }

    /// A log read again from its start, or resumed where a pass stopped
    /// (its state kept), adds nothing; a copy of the log adds nothing; two
    /// replies in one second are two; a model Aider named is kept.
    #[test]
    fn a_log_read_again_or_resumed_adds_nothing() {
        let first = launched(1_796_561_076) + &message_send(1_796_561_080, "gpt-4o");
        let log = first.clone() + &message_send(1_796_561_080, "gpt-4o") + &message_send(1_796_561_090, "None");
        let (whole, unparseable) = read(log.as_bytes());
        assert_eq!((whole.len(), unparseable), (3, 0));
        assert_eq!(whole[0].model.as_deref(), Some("gpt-4o"));
        assert_eq!(whole[2].model, None, "Python's None is no model");
        assert_ne!(whole[0].key, whole[1].key, "two replies in one second");

        // The first pass stops after the first reply; the second resumes.
        let mut evidence = Vec::new();
        let mut reader = Analytics::new(&AgentState::default());
        let mut offset = 0u64;
        for line in first.split_inclusive('\n') {
            assert!(reader.line(line.as_bytes(), offset, &mut evidence));
            offset += line.len() as u64;
        }
        let (resume_at, state) = reader.resume(offset);
        let mut reader = Analytics::new(&state);
        for line in log[resume_at as usize..].split_inclusive('\n') {
            assert!(reader.line(line.as_bytes(), offset, &mut evidence));
            offset += line.len() as u64;
        }
        let resumed = responses_of(evidence);
        let keys = |writes: &[ResponseWrite]| writes.iter().map(|w| (w.key.clone(), w.session_id.clone())).collect();
        let (whole_keys, resumed_keys): (Vec<_>, Vec<_>) = (keys(&whole), keys(&resumed));
        assert_eq!(whole_keys, resumed_keys, "the resumed pass keeps the process's session");

        let (again, _) = read(log.as_bytes());
        let mut all = whole.clone();
        all.extend(again);
        assert_eq!(rows(Provider::Aider, &all).len(), 3);
    }

    /// Replies before any `launched` event, or of another install than the
    /// one launched last, are the install's own session.
    #[test]
    fn a_reply_of_no_process_read_is_its_installs() {
        let other = launched(1_796_561_000).replace(USER, "other-install");
        let log = message_send(1_796_560_000, "gpt-4o") + &other + &message_send(1_796_561_001, "gpt-4o");
        let (writes, _) = read(log.as_bytes());
        let sessions: Vec<_> = writes.iter().filter_map(|w| w.session_id.as_deref()).collect();
        assert_eq!(sessions, [USER, USER]);
    }

    /// Broken and hostile events: not JSON, cut short, no object, no or a
    /// wrong time, no install id are unparseable and the log reads on;
    /// huge, negative and wrong-typed counters change nothing (no token
    /// counter is read: every one stays unknown, never 0) and make Aider's
    /// own figure unknown, as does a figure past Bee's bound; a line that is no
    /// UTF-8 where it is read is unparseable; other events are passed over;
    /// an empty log says nothing.
    #[test]
    fn broken_and_hostile_events() {
        let good = message_send(1_796_561_080, "gpt-4o");
        let hostile = r#"{"event": "message_send", "properties": {"main_model": 7, "prompt_tokens": 99999999999999999999999, "completion_tokens": -3, "total_tokens": "ten", "cost": "free"}, "user_id": "u", "time": 1796561081}"#;
        let huge = r#"{"event": "message_send", "properties": {"prompt_tokens": 18446744073709551615, "completion_tokens": 1}, "user_id": "u", "time": 1796561082}"#;
        let past_bound = r#"{"event": "message_send", "properties": {"prompt_tokens": 10000000000, "completion_tokens": 1}, "user_id": "u", "time": 1796561084}"#;
        let wrong = r#"{"event": "message_send", "properties": {"prompt_tokens": "12", "completion_tokens": 1}, "user_id": "u", "time": 1796561083}"#;
        let mut log = [
            "not json \"message_send\"",
            r#"{"event": "message_send", "properties": {"prompt_tokens": 1"#,
            r#"["message_send"]"#,
            r#"{"event": "message_send", "properties": {}, "user_id": "u"}"#,
            r#"{"event": "message_send", "properties": {}, "user_id": "u", "time": "1796561080"}"#,
            r#"{"event": "message_send", "properties": {}, "user_id": "u", "time": 1796561080.5}"#,
            r#"{"event": "message_send", "properties": {}, "user_id": "u", "time": 99999999999999}"#,
            r#"{"event": "message_send", "properties": {}, "user_id": "u", "time": -1}"#,
            r#"{"event": "message_send", "properties": {}, "time": 1796561080}"#,
            r#"{"event": "launched", "properties": {}, "user_id": 5, "time": 1796561080}"#,
            r#"{"event": "message_send_starting", "properties": {}, "user_id": "u", "time": 1796561080}"#,
            r#"{"event": "exit", "properties": {"reason": "\"message_send\""}, "user_id": "u", "time": 1796561080}"#,
            hostile,
            huge,
            wrong,
            past_bound,
        ]
        .join("\n")
            + "\n";
        log.push_str(&good);
        let mut bytes = log.into_bytes();
        bytes.extend_from_slice(
            b"{\"event\": \"message_send\", \"properties\": {}, \"user_id\": \"\xff\", \"time\": 1}\n",
        );
        let (writes, unparseable) = read(&bytes);
        assert_eq!(unparseable, 11, "every broken line but the other events; the line not UTF-8");
        assert_eq!(writes.len(), 5, "the hostile counters' replies and the good one");
        assert!(writes.iter().all(|w| w.tokens == Counters::default()));
        let own: Vec<_> = writes.iter().map(|w| w.own_figure).collect();
        assert_eq!(own, [None, None, None, None, Some(2_354.0)], "unknown, never 0 nor a bound's worth");
        assert_eq!(writes[0].model, None, "a model that is no text");
        assert_eq!(read(b"").0.len(), 0, "an empty log");
        assert_eq!(read(b"\n\n").1, 0, "blank lines");
    }

    /// Millions of tiny items where the reader does not look are read past;
    /// where it looks, the line is passed over and named, and the log reads
    /// on; a line past the line bound is named, never parsed.
    #[test]
    fn tiny_items_and_long_lines_are_passed_over_or_named() {
        let junk = tiny_items(1_500_000);
        let line = |properties: &str, model: &str| {
            format!(
                r#"{{"event": "message_send", "properties": {{"edit_format": {properties}, "main_model": {model}}}, "user_id": "{USER}", "time": 1796561080}}"#
            ) + "\n"
        };
        let _ = noted();
        assert_eq!(read(line(&junk, "\"gpt-4o\"").as_bytes()), (read(line("0", "\"gpt-4o\"").as_bytes()).0, 0));
        assert!(noted().is_empty());
        let bad = line("0", &junk);
        let log = format!("{bad}{}", line("0", "\"gpt-4o\""));
        let (writes, unparseable) = read(log.as_bytes());
        assert_eq!((writes.len(), unparseable), (1, 0));
        assert_eq!(noted(), [(0, bad.len() as u64, SkipReason::TooComplex)]);

        let long = format!("{}\n", " ".repeat(MAX_LINE_BYTES as usize));
        let log = format!("{long}{}", line("0", "\"gpt-4o\""));
        assert_eq!(read(log.as_bytes()).0.len(), 1);
        assert_eq!(noted(), [(0, long.len() as u64, SkipReason::OversizedLine)]);
    }
}
