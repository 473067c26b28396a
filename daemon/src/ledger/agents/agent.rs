//! The seam between Bee and one agent's own records: what ingestion,
//! `budget --measured` and the OpenTelemetry receiver ask of every agent,
//! and nothing of any one of them. An agent's folder implements [`Agent`];
//! the registry (`agents::AGENTS`) lists it.

use bee_proto::ledger::{AgentRecords, CounterShape, Provider};
use bee_proto::usage::{Counters, HistoryStream, LimitHit, LineCounts, RateLimitSnapshot, ResponseStream, UsageIssue};
use opentelemetry_proto::tonic::logs::v1::LogRecord;
use serde_json::Value;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::ledger::stored::evidence::{AgentState, Evidence};

/// The environment as an agent reads it: a variable, when set and not empty.
pub type Env<'a> = &'a dyn Fn(&str) -> Option<OsString>;

/// `relative` under `HOME`.
pub(crate) fn under_home(env: Env<'_>, relative: &str) -> Option<PathBuf> {
    env("HOME").map(|home| PathBuf::from(home).join(relative))
}

/// The directory a variable names, else `relative` under `HOME`: where
/// most agents keep their records.
pub(crate) fn env_or_home(env: Env<'_>, variable: &str, relative: &str) -> Option<PathBuf> {
    env(variable).map(PathBuf::from).or_else(|| under_home(env, relative))
}

/// An agent's own settings file, whole, found as the agent finds it (a link
/// followed, as dotfile managers make them); `None` when it is missing,
/// unreadable, not UTF-8 or over `limit` bytes — never cut short.
pub(crate) fn settings_text(path: &Path, limit: u64) -> Option<String> {
    use std::io::Read;
    let mut text = String::new();
    std::fs::File::open(path).ok()?.take(limit + 1).read_to_string(&mut text).ok()?;
    (text.len() as u64 <= limit).then_some(text)
}

/// `name` under the XDG data directory (`XDG_DATA_HOME`, by default
/// `~/.local/share`), as agents that follow it find their data.
pub(crate) fn xdg_data(env: Env<'_>, name: &str) -> Option<PathBuf> {
    env_or_home(env, "XDG_DATA_HOME", ".local/share").map(|data| data.join(name))
}

/// What an agent's records can say, as its reader reads them (the
/// contract's [`AgentRecords`]): time spans Bee derives turns from,
/// usage-limit notices, reasoning tokens, cache writes, its own cost. One
/// declaration per agent, in its `mod.rs`, justified by its README (whose
/// "What its records say" line a test keeps equal to it).
pub type Records = AgentRecords;

/// What is known of an agent before any record is read: its name, what
/// people call it, how its reader was verified, the calls its records
/// leave out, and what they can say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct About {
    /// The name its records are counted under.
    pub provider: Provider,
    /// What people call it.
    pub title: &'static str,
    /// How its reader was verified (`beectl agents`, the README's table).
    pub verified: Verified,
    /// The calls it makes and keeps no record of, in words (see its
    /// README): a view over its records says so, never a total that looks
    /// exact.
    pub unrecorded_calls: Option<&'static str>,
    /// What its records can say: a view reports a figure of this agent
    /// only where they can, and elsewhere `null` with an issue naming it
    /// (`time_not_measured`, `limits_not_recorded`), never 0.
    pub records: Records,
}

/// One coding agent whose local records Bee reads.
pub trait Agent: Sync {
    /// What is known of it ([`About`]).
    fn about(&self) -> &'static About;

    /// The name its records are counted under.
    fn provider(&self) -> Provider {
        self.about().provider
    }

    /// What people call it.
    fn title(&self) -> &'static str {
        self.about().title
    }

    /// How its reader was verified.
    fn verified(&self) -> Verified {
        self.about().verified
    }

    /// The calls its records leave out, in words.
    fn unrecorded_calls(&self) -> Option<&'static str> {
        self.about().unrecorded_calls
    }

    /// What its records can say ([`Records`]).
    fn records(&self) -> Records {
        self.about().records
    }

    /// The directories that hold its records, found as the agent itself
    /// finds them (its own environment variables, else its default under
    /// `HOME`), each to be walked for [`Agent::is_record_file`]s.
    fn record_dirs(&self, env: Env<'_>) -> Vec<PathBuf>;

    /// Whether a regular file under one of those directories is one of its
    /// records (by name: nothing is opened to tell).
    fn is_record_file(&self, path: &Path) -> bool {
        path.extension().is_some_and(|extension| extension == "jsonl")
    }

    /// Ingestion's incremental reader of the file at `path`, resuming where `state`
    /// (what this agent's reader kept there last, see [`FileReader::resume`])
    /// says. An agent whose record files are read whole
    /// ([`Agent::whole_file`]) reads no lines.
    fn file_reader(&self, _path: &Path, _state: &AgentState) -> Box<dyn FileReader> {
        Box::new(NoLines)
    }

    /// `budget --measured`'s reader of one session in a whole log, for the
    /// agents `budget` measures (spec/20: Claude Code and Codex).
    fn session_reader(&self) -> Option<Box<dyn SessionReader>> {
        None
    }

    /// The reader of an agent whose record files are read whole whenever
    /// they change — a database, read by its own change markers, or a
    /// JSON document the agent rewrites — rather than by offsets; `None`
    /// for an agent whose records are line logs.
    fn whole_file(&self) -> Option<&dyn WholeFileReader> {
        None
    }

    /// The project and session a record file's path names, where its place
    /// says so (Claude Code keeps a transcript under its project's folder).
    fn project_and_session<'p>(&self, _path: &'p str) -> Option<(&'p str, &'p str)> {
        None
    }

    /// Its counters in Bee's one set of token columns — input without
    /// cache reads, cache writes, cache reads, output (reasoning a part of
    /// it), total — whatever its own counters mean, so every view's columns
    /// add up to its total. The mapping is written in the agent's README:
    /// counters of Anthropic's shape already mean that; OpenAI's input
    /// includes its cached part, which is shown once, under cache reads, and
    /// input is the rest (unknown when the cached part is). OpenAI's shape
    /// has no cache writes.
    fn columns(&self, reported: &Counters) -> Counters {
        match self.provider().counter_shape() {
            CounterShape::Anthropic => reported.clone(),
            CounterShape::OpenAi => {
                let cached = reported.cached_input_tokens;
                Counters {
                    input_tokens: reported.input_tokens.zip(cached).map(|(input, cached)| input.saturating_sub(cached)),
                    cached_input_tokens: None,
                    cache_creation_input_tokens: None,
                    cache_read_input_tokens: cached,
                    ..reported.clone()
                }
            }
        }
    }

    /// What one OpenTelemetry log record its CLI sent is to the ledger.
    fn telemetry(&self, _record: &LogRecord) -> Telemetry {
        Telemetry::NotOurs
    }
}

/// How an agent's reader was verified.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verified {
    /// A test drives this version of the real CLI (pinned in `tests/node`)
    /// against a mock of its provider's API.
    RealCli(&'static str),
    /// Fixtures written from the format its own source defines.
    FormatFromSource,
}

impl std::fmt::Display for Verified {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Verified::RealCli(version) => write!(f, "real CLI {version}"),
            Verified::FormatFromSource => f.write_str("format from its source"),
        }
    }
}

/// Ingestion's reader of one file of an agent's, fed its complete lines in order.
pub trait FileReader: Send {
    /// Reads one complete line that starts at byte `at`; `false` when it
    /// had the agent's marker but did not parse.
    fn line(&mut self, line: &[u8], at: u64, out: &mut Vec<Evidence>) -> bool;

    /// The end of what could be read. Whether a record still open there
    /// is over is judged from the record, never from its file's
    /// modification time (a file copied or restored today may hold
    /// records written weeks ago): one its own words end (a stop reason,
    /// a later record) is final; one that does not say is over when its
    /// own time is before `quiet_before_ms` (nothing continues a stream
    /// quiet that long), and is held as pending otherwise.
    fn finish(&mut self, quiet_before_ms: i64, out: &mut Vec<Evidence>);

    /// Where the next pass resumes, given that everything up to `offset`
    /// was read (a reader holds back a record still open, to read it again
    /// until it is over), and what the reader keeps to go on from there.
    fn resume(&self, offset: u64) -> (u64, AgentState);
}

/// The line reader of an agent whose record files are read whole.
struct NoLines;

impl FileReader for NoLines {
    fn line(&mut self, _line: &[u8], _at: u64, _out: &mut Vec<Evidence>) -> bool {
        true
    }

    fn finish(&mut self, _quiet_before_ms: i64, _out: &mut Vec<Evidence>) {}

    fn resume(&self, offset: u64) -> (u64, AgentState) {
        (offset, AgentState::default())
    }
}

/// Ingestion's reader of a record file read whole (see [`Agent::whole_file`]).
pub trait WholeFileReader: Sync {
    /// Reads the record file at `path` (a database opened read-only): the
    /// evidence of what changed since `state` (what this reader kept last;
    /// empty for a file never read), and what it keeps now. A record read
    /// again adds nothing twice, as a line read again does not.
    /// The count is of records refused as unreadable.
    fn read(&self, path: &Path, state: &AgentState, out: &mut Vec<Evidence>) -> std::io::Result<(AgentState, u64)>;

    /// Whether it reads JSON documents, which take the large-read token
    /// themselves (with its buffer); a database reader's large file is
    /// one large read as a whole (SQLite holds its values).
    fn reads_documents(&self) -> bool {
        false
    }
}

/// `budget --measured`'s reader of one session in a whole log, fed every
/// line that is a JSON object, numbered from 1, parsed for the paths it
/// reads.
pub trait SessionReader {
    /// Every path of a line [`SessionReader::line`] looks at, as object
    /// keys from the line's root (`"message/usage"`): a path's last key is
    /// kept whole, a path applies to every element of an array met on its
    /// way, and the rest of a line is passed over, never built.
    fn kept(&self) -> &'static [&'static str];

    /// Whether the line belongs to the session; what it says goes to `usage`.
    fn line(&mut self, value: &Value, number: u64, session: &str, usage: &mut SessionUsage) -> bool;

    /// The log's end: the session's streams, as far as they were read.
    fn finish(self: Box<Self>, usage: &mut SessionUsage);
}

/// What one log says about one session.
#[derive(Debug, Clone, Default)]
pub struct SessionUsage {
    pub lines: LineCounts,
    pub response: Option<ResponseStream>,
    pub history: Option<HistoryStream>,
    pub rate_limits: Vec<RateLimitSnapshot>,
    pub limits: Vec<LimitHit>,
    pub issues: Vec<UsageIssue>,
}

/// An OpenTelemetry log record, as the agent whose CLI sent it reads it.
#[derive(Debug)]
pub enum Telemetry {
    /// Not an event of this agent's that the ledger reads.
    NotOurs,
    /// An event the ledger reads: its evidence, or `None` when the event
    /// cannot be taken (no time, a figure outside Bee's bounds).
    Event(Option<Vec<Evidence>>),
}
