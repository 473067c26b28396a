//! What the readers of several agents' line logs share: the longest line
//! read, byte markers searched before any parsing, a name met again shared
//! rather than copied, counters and times read the one way every reader
//! reads them, an agent's resume state kept as JSON, and [`JsonLines`]:
//! the whole file reader of an agent whose record lines are small JSON
//! objects, so that such an agent writes only what its lines mean.
//!
//! Every record is parsed for what its reader reads and nothing else
//! ([`sparse`](crate::ledger::agents::sparse)): a line or document costs at
//! most its own bytes and a tree within its bound, however many items it
//! holds, and one whose kept parts pass that bound is passed over and named
//! ([`parse_record`]), never read into a tree dozens of times its size.

use bee_proto::ledger::{Provider, SkipReason};
use bee_proto::usage::{Counters, UsageIssue, UsageIssueCode, note_line_issue};
use serde_json::Value;
use std::path::Path;
use std::sync::Arc;

use crate::ledger::agents::skipped;
use crate::ledger::agents::sparse::{self, Keep, Refused};
use crate::ledger::stored::evidence::{AgentState, DerivedTurn, Evidence, SessionProject, project_of_directory};
use crate::ledger::stored::responses::{ResponseWrite, own_figure, sum_of_parts};

/// Longest line parsed; Claude transcripts carry tool output inline, so this
/// is generous, and a longer line is reported (or skipped), not parsed.
pub const MAX_LINE_BYTES: u64 = 64 * 1024 * 1024;

/// A byte string looked for in every line before any parsing, its
/// searcher built once rather than per line.
pub(crate) type Marker = std::sync::LazyLock<memchr::memmem::Finder<'static>>;

/// Declares `static`s of [`Marker`]s.
macro_rules! markers {
    ($($(#[$doc:meta])* $name:ident = $needle:expr;)*) => {
        $($(#[$doc])* static $name: $crate::ledger::agents::lines::Marker =
            std::sync::LazyLock::new(|| memchr::memmem::Finder::new($needle));)*
    };
}
pub(crate) use markers;

pub(crate) fn contains(haystack: &[u8], marker: &Marker) -> bool {
    marker.find(haystack).is_some()
}

/// `contains` ignoring ASCII case; `needle` is lowercase and starts with a letter.
pub(crate) fn contains_ignoring_case(haystack: &[u8], needle: &[u8]) -> bool {
    let Some(&first) = needle.first() else { return true };
    memchr::memchr2_iter(first, first.to_ascii_uppercase(), haystack)
        .any(|at| haystack.get(at..at + needle.len()).is_some_and(|w| w.eq_ignore_ascii_case(needle)))
}

/// The name of a kind (a session, a model) a file's reader met last, one
/// copy shared by the writes that name it again.
#[derive(Debug, Default)]
pub(crate) struct LastName(Option<Arc<str>>);

impl LastName {
    pub(crate) fn shared(&mut self, name: &str) -> Arc<str> {
        match &self.0 {
            Some(last) if **last == *name => last.clone(),
            _ => self.0.insert(Arc::from(name)).clone(),
        }
    }
}

/// An agent's state where reading stopped, as stored with its offset
/// ([`AgentState`]): its own small JSON object.
pub(crate) fn encode_state(state: &impl serde::Serialize) -> AgentState {
    AgentState(serde_json::to_string(state).ok())
}

/// The state [`encode_state`] stored; a file never read (or a state that
/// does not decode, which only another version could have written) starts
/// afresh, as a file read from its start does.
pub(crate) fn decode_state<T: serde::de::DeserializeOwned + Default>(state: &AgentState) -> T {
    state.0.as_deref().and_then(|text| serde_json::from_str(text).ok()).unwrap_or_default()
}

/// The turn open where a file's reading stopped, as far as it went: a
/// later pass may lengthen it (a longer turn for the same start supersedes).
pub(crate) fn open_turn(
    provider: Provider,
    session: Option<&str>,
    started: Option<i64>,
    ended: Option<i64>,
    out: &mut Vec<Evidence>,
) {
    if let (Some(started), Some(ended), Some(session)) = (started, ended, session) {
        out.push(Evidence::Turn(DerivedTurn {
            provider,
            session_id: session.to_owned(),
            started_at_ms: started,
            ended_at_ms: ended,
        }));
    }
}

/// A counter: a non-negative integer that fits, else an issue and `None`.
pub(crate) fn counter(value: Option<&Value>, line: u64, issues: &mut Vec<UsageIssue>) -> Option<u64> {
    match value? {
        Value::Null => None,
        Value::Number(n) => match n.as_u64() {
            Some(n) => Some(n),
            None => {
                note_line_issue(issues, UsageIssueCode::InvalidCounter, line);
                None
            }
        },
        _ => {
            note_line_issue(issues, UsageIssueCode::InvalidCounter, line);
            None
        }
    }
}

/// Why a record was not read ([`parse_record`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unread {
    /// Not JSON, or not whole: the reader counts it as it counts a broken
    /// record.
    Malformed,
    /// What its reader reads of it passes the bound: passed over, and
    /// already named ([`skipped::note`]), so not counted again.
    Noted,
}

/// The parts `keep` names of the record `input`, which starts at byte
/// `at` of its file (0 for a document or a database value). A record
/// whose kept parts pass the bound is noted as passed over
/// ([`SkipReason::TooComplex`]), with its length.
pub(crate) fn parse_record(input: &[u8], keep: &Keep, at: u64) -> Result<Value, Unread> {
    match sparse::parse(input, keep) {
        Ok(value) => Ok(value),
        Err(Refused::Malformed) => Err(Unread::Malformed),
        Err(Refused::TooComplex) => {
            skipped::note(SkipReason::TooComplex, at, input.len() as u64);
            Err(Unread::Noted)
        }
    }
}

pub(crate) fn line_time(value: &Value) -> Option<String> {
    value.get("timestamp").and_then(Value::as_str).filter(|t| bee_proto::time::is_rfc3339_utc(t)).map(str::to_owned)
}

/// What an agent whose records are JSON lines reads of one line
/// ([`JsonLines`] does the rest): its own state where reading stopped
/// (stored as JSON), and the lines it reads.
pub(crate) trait LineRules: Default + serde::Serialize + serde::de::DeserializeOwned + Send + 'static {
    const PROVIDER: Provider;

    /// What of a line [`LineRules::read`] reads: every path it looks at
    /// (the rest of a line is passed over while parsing, never built).
    fn keep() -> &'static Keep;

    /// Whether a line may be one this agent reads, by its bytes alone.
    fn is_marked(line: &[u8]) -> bool;

    /// Reads one parsed line; `false` when it was one of its records but
    /// not one it could read.
    fn read(&mut self, line: &Value, found: &mut Found<'_>) -> bool;

    /// The file at `path` is opened, its state as kept (for an agent whose
    /// files' places name their sessions).
    fn opened(&mut self, _path: &Path) {}
}

/// Ingestion's reader of a file of JSON lines, by an agent's [`LineRules`].
pub(crate) struct JsonLines<R: LineRules> {
    rules: R,
    sessions: LastName,
    models: LastName,
}

impl<R: LineRules> JsonLines<R> {
    pub(crate) fn new(path: &Path, state: &AgentState) -> JsonLines<R> {
        let mut rules: R = decode_state(state);
        rules.opened(path);
        JsonLines { rules, sessions: LastName::default(), models: LastName::default() }
    }
}

impl<R: LineRules> crate::ledger::agents::agent::FileReader for JsonLines<R> {
    fn line(&mut self, line: &[u8], at: u64, out: &mut Vec<Evidence>) -> bool {
        if !R::is_marked(line) {
            return true;
        }
        let value = match parse_record(line, R::keep(), at) {
            Ok(value @ Value::Object(_)) => value,
            Ok(_) | Err(Unread::Malformed) => return false,
            // Named already: not also counted as unparseable.
            Err(Unread::Noted) => return true,
        };
        let mut found = Found::new(R::PROVIDER, &mut self.sessions, &mut self.models, out);
        self.rules.read(&value, &mut found)
    }

    fn finish(&mut self, _quiet_before_ms: i64, _out: &mut Vec<Evidence>) {}

    fn resume(&self, offset: u64) -> (u64, AgentState) {
        (offset, encode_state(&self.rules))
    }
}

/// The session a log names, kept where its reading stops (as
/// `sessionId`), and found once each time it changes.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct NamedSession {
    session_id: Option<String>,
}

impl NamedSession {
    /// The log names `session` (run in `directory`, when it says).
    pub(crate) fn name(&mut self, session: &str, directory: Option<&str>, found: &mut Found<'_>) {
        if self.session_id.as_deref() != Some(session) {
            self.session_id = Some(session.to_owned());
            found.session(session, directory);
        }
    }

    /// The session named last.
    pub(crate) fn get(&self) -> Option<&str> {
        self.session_id.as_deref()
    }
}

/// Where an agent's reader puts what it found, its names shared.
pub(crate) struct Found<'a> {
    provider: Provider,
    sessions: &'a mut LastName,
    models: &'a mut LastName,
    out: &'a mut Vec<Evidence>,
}

impl<'a> Found<'a> {
    pub(crate) fn new(
        provider: Provider,
        sessions: &'a mut LastName,
        models: &'a mut LastName,
        out: &'a mut Vec<Evidence>,
    ) -> Found<'a> {
        Found { provider, sessions, models, out }
    }

    /// A model's name, unless it is longer than any name: then the model
    /// is unknown (and said so in the log), and the response still counts.
    fn model_name(&mut self, model: &str) -> Option<Arc<str>> {
        if model.len() > bee_proto::ledger::bounds::MAX_TEXT_BYTES {
            tracing::warn!(
                agent = self.provider.as_str(),
                bytes = model.len(),
                "a model name past any name's length; the model is unknown"
            );
            return None;
        }
        Some(self.models.shared(model))
    }

    /// A session's log was found, and (when it says) the directory it ran in.
    pub(crate) fn session(&mut self, session: &str, directory: Option<&str>) {
        self.out.push(Evidence::SessionLogged(self.provider, session.to_owned()));
        if let Some(directory) = directory.filter(|directory| !directory.is_empty()) {
            self.out.push(Evidence::SessionProject(SessionProject {
                provider: self.provider,
                session_id: session.to_owned(),
                project: project_of_directory(directory),
            }));
        }
    }

    /// One provider response, written whole (these agents write a
    /// response once it is complete). A total the agent wrote that is not
    /// the sum of its parts is left out, and the ledger sums the parts.
    pub(crate) fn response(&mut self, key: String, session: &str, at_ms: i64, model: Option<&str>, tokens: Counters) {
        self.response_with(key, session, at_ms, model, tokens, Beside::default());
    }

    /// [`Found::response`], with what the record says beside its counters.
    pub(crate) fn response_with(
        &mut self,
        key: String,
        session: &str,
        at_ms: i64,
        model: Option<&str>,
        tokens: Counters,
        beside: Beside,
    ) {
        let tokens = Counters {
            total_tokens: tokens.total_tokens.filter(|&total| sum_of_parts(self.provider, &tokens) == Some(total)),
            ..tokens
        };
        let model = model.filter(|model| !model.is_empty()).and_then(|model| self.model_name(model));
        self.out.push(Evidence::Response(ResponseWrite {
            provider: self.provider,
            key,
            session_id: Some(self.sessions.shared(session)),
            at_ms,
            model,
            tokens,
            context_tokens: None,
            context_window: None,
            is_final: true,
            own_figure: beside.own_figure.and_then(|figure| own_figure(self.provider, figure)),
            copied: beside.copied,
        }));
    }
}

/// What a response's record says beside its counters, where its agent
/// writes it.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Beside {
    /// The figure the agent wrote for it in its unit — a cost, Kiro's
    /// credits, Warp's total (checked against Bee's bounds here).
    pub(crate) own_figure: Option<f64>,
    /// Its session holds it as a copy of another session's response (see
    /// `ResponseWrite::copied`).
    pub(crate) copied: bool,
}

/// Whether a response written at `at_ms` is a copy in a session its
/// agent says began at `started_ms`: a session holds nothing it made
/// before it began (a fork or resume copies earlier responses with their
/// own times). Unknown when the start is.
pub(crate) fn before_start(at_ms: i64, started_ms: Option<i64>) -> bool {
    started_ms.is_some_and(|started| at_ms < started)
}

/// The agent Bee reads whose CLI a record's model provider is, when it is
/// one: the record is a wrapper's copy of that agent's usage (Goose's
/// `claude-code` provider runs Claude Code, OpenClaw's `claude-cli` and
/// `codex-cli` backends run those CLIs), which the wrapped CLI wrote in
/// its own records too. Such a record is not read: each response counts
/// once, from the records of the agent that called the provider.
pub(crate) fn wrapped_agent(provider_name: &str) -> Option<Provider> {
    match provider_name {
        "claude-code" | "claude-cli" | "claude_code" => Some(Provider::Claude),
        "codex" | "codex-cli" | "codex_cli" => Some(Provider::Codex),
        "gemini-cli" | "gemini_cli" => Some(Provider::Gemini),
        "qwen-code" | "qwen_code" => Some(Provider::Qwen),
        _ => None,
    }
}

/// A counter with a part the agent keeps apart added in (Gemini's
/// thoughts, OpenCode's reasoning): unknown when the counter is; a part
/// the agent did not write adds nothing.
pub(crate) fn with_part(counter: Option<u64>, part: Option<u64>) -> Option<u64> {
    counter?.checked_add(part.unwrap_or(0))
}

/// A response's counters spelled for a key, for an agent whose records
/// keep no response id: the counters are what a copy of the response keeps.
pub(crate) fn spelled(counters: &[Option<u64>]) -> String {
    let spelled: Vec<String> =
        counters.iter().map(|counter| counter.map_or_else(|| "-".to_owned(), |n| n.to_string())).collect();
    spelled.join("/")
}

/// A counter of a record: a non-negative integer, else unknown.
pub(crate) fn count(value: Option<&Value>) -> Option<u64> {
    value?.as_u64()
}

/// The name of the folder a log is in: the session of an agent that names
/// each session's log by its folder.
pub(crate) fn folder_name(path: &Path) -> Option<String> {
    path.parent().and_then(Path::file_name).and_then(|name| name.to_str()).map(str::to_owned)
}

/// A text field of a record.
pub(crate) fn text<'v>(value: &'v Value, pointer: &str) -> Option<&'v str> {
    value.pointer(pointer)?.as_str()
}

/// A record's time: RFC 3339 text, or unix milliseconds.
pub(crate) fn time_ms(value: Option<&Value>) -> Option<i64> {
    match value? {
        Value::String(text) => bee_proto::time::parse_rfc3339_ms(text),
        Value::Number(ms) => ms.as_i64().filter(|&ms| bee_proto::time::spells_as_rfc3339(ms)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Names met again in a row share one copy; another name gets its own,
    /// and every copy spells its name.
    #[test]
    fn a_name_met_again_is_shared() {
        let mut sessions = LastName::default();
        let (first, again) = (sessions.shared("s1"), sessions.shared("s1"));
        assert!(Arc::ptr_eq(&first, &again));
        let other = sessions.shared("s2");
        assert_eq!((&*first, &*other), ("s1", "s2"));
        assert!(!Arc::ptr_eq(&other, &sessions.shared("s1")));
    }

    #[test]
    fn the_codex_limit_prefilter_ignores_case_like_the_notice_reader() {
        for text in ["You've hit your usage limit.", "You've hit your Usage Limit", "USAGE LIMIT reached"] {
            let line =
                serde_json::json!({"type": "event_msg", "payload": {"type": "error", "message": text}}).to_string();
            assert!(contains_ignoring_case(line.as_bytes(), b"usage limit"), "{text}");
            assert!(bee_proto::usage::codex_limit_notice(text));
        }
        assert!(!contains_ignoring_case(b"usage: limited", b"usage limit"));
        assert!(!contains_ignoring_case(b"usage limi", b"usage limit"), "a needle running past the end");
    }
}
