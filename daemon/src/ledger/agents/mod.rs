//! Every coding agent whose own local records Bee reads, one folder each
//! (`claude/`, `codex/`): where the agent keeps its records, how its files
//! are parsed, what its reader keeps to resume, and a README of its format
//! as observed from the real CLI. They extract what the provider reported —
//! token counters, rate-limit snapshots, usage-limit hits — and nothing is
//! estimated.
//!
//! The seam is [`agent::Agent`]; [`agent()`] is the registry, one line per
//! agent. Three readers use only the seam: ingestion's incremental parsers
//! ([`LogParser`], driven by `ledger::ingest`), `budget --measured`'s
//! whole-log reader ([`read_session`]), which accounts for every line
//! (matched to the session, to another session, or unparseable with its
//! line number), and the OpenTelemetry receiver (`ledger::otel`).
//!
//! Inside, files point one way: the registry (this file) → each agent's
//! folder → [`lines`] (what line readers share) and [`agent`] (the seam).

pub mod agent;
pub mod claude;
pub mod codex;
pub mod lines;

use bee_proto::ledger::Provider;
use bee_proto::usage::{Harness, UsageIssue, UsageIssueCode, note_line_issue};
use serde_json::Value;
use std::io::{self, Read};

pub use agent::{Agent, SessionUsage};
pub use lines::MAX_LINE_BYTES;

use crate::ledger::evidence::{Evidence, FileOffset};
use crate::storage::lines::{self as line_reader, Line};

/// The agent whose records count under `provider`: the registry. Adding an
/// agent is its folder and its line here (and its name in
/// `bee_proto::ledger::Provider`, the contract's spelling of it).
pub fn agent(provider: Provider) -> &'static dyn Agent {
    match provider {
        Provider::Claude => &claude::Claude,
        Provider::Codex => &codex::Codex,
    }
}

/// Every agent, in the contract's order of their names.
pub fn all() -> impl Iterator<Item = &'static dyn Agent> {
    Provider::ALL.iter().map(|&provider| agent(provider))
}

/// Ingestion's parser of one file: its agent's reader, and the file it reads.
pub(crate) struct LogParser {
    reader: Box<dyn agent::FileReader>,
    dev: u64,
    ino: u64,
}

impl LogParser {
    pub(crate) fn new(provider: Provider, start: FileOffset) -> LogParser {
        LogParser { reader: agent(provider).file_reader(&start.state), dev: start.dev, ino: start.ino }
    }

    /// Reads one complete line; `false` when it had a marker but did not parse.
    pub(crate) fn line(&mut self, line: &[u8], at: u64, out: &mut Vec<Evidence>) -> bool {
        self.reader.line(line, at, out)
    }

    /// The end of what could be read (see [`agent::FileReader::finish`]).
    pub(crate) fn finish(&mut self, settled: bool, out: &mut Vec<Evidence>) {
        self.reader.finish(settled, out);
    }

    /// Where the next pass resumes, and with what.
    pub(crate) fn resume_point(&self, offset: u64, settled: bool) -> FileOffset {
        let (offset, state) = self.reader.resume(offset, settled);
        FileOffset { dev: self.dev, ino: self.ino, offset, state }
    }
}

/// What ingestion reads from `log`, a whole file of `provider`'s, read in
/// one pass as if the file were quiet: the evidence and the number of lines
/// that carried a marker but did not parse. For fuzzing and tests; ingestion
/// itself reads files incrementally.
pub fn read_log(provider: Provider, log: &[u8]) -> (Vec<Evidence>, u64) {
    let mut parser = LogParser::new(provider, FileOffset::default());
    let (mut evidence, mut unparseable, mut at) = (Vec::new(), 0u64, 0u64);
    let mut rest = log;
    while let Some(end) = memchr::memchr(b'\n', rest) {
        let (line, after) = rest.split_at(end + 1);
        if line.len() as u64 <= MAX_LINE_BYTES && !parser.line(line, at, &mut evidence) {
            unparseable += 1;
        }
        at += line.len() as u64;
        rest = after;
    }
    parser.finish(true, &mut evidence);
    (evidence, unparseable)
}

/// Reads `log` (a whole file) for `session`.
pub fn read_session(harness: Harness, log: impl Read, session: &str) -> io::Result<SessionUsage> {
    let mut reader = io::BufReader::with_capacity(1 << 16, log);
    let mut state = agent(Provider::from(harness)).session_reader();
    let mut usage = SessionUsage::default();
    let mut line = Vec::new();
    let mut number = 0u64;
    loop {
        let (kind, _) = line_reader::next(&mut reader, MAX_LINE_BYTES, &mut line)?;
        if kind == Line::End {
            break;
        }
        number += 1;
        usage.lines.read += 1;
        match kind {
            Line::Oversized { .. } => {
                note_line_issue(&mut usage.issues, UsageIssueCode::OversizedLine, number);
                usage.lines.unparseable += 1;
                continue;
            }
            Line::Partial => note_line_issue(&mut usage.issues, UsageIssueCode::TruncatedLastLine, number),
            Line::Complete | Line::End => {}
        }
        let text = line.strip_suffix(b"\n").unwrap_or(&line);
        let text = text.strip_suffix(b"\r").unwrap_or(text);
        if text.iter().all(u8::is_ascii_whitespace) {
            usage.lines.other_session += 1;
            continue;
        }
        let value = match serde_json::from_slice::<Value>(text) {
            Ok(value @ Value::Object(_)) => value,
            _ => {
                usage.lines.unparseable += 1;
                note_line_issue(&mut usage.issues, UsageIssueCode::UnparseableLine, number);
                continue;
            }
        };
        if state.line(&value, number, session, &mut usage) {
            usage.lines.matched_session += 1;
        } else {
            usage.lines.other_session += 1;
        }
    }
    state.finish(&mut usage);
    if usage.lines.matched_session == 0 {
        usage.issues.insert(0, UsageIssue { code: UsageIssueCode::NoMatchingSession, line: None, omitted: None });
    } else if usage.response.as_ref().is_none_or(|r| r.counters.is_none()) {
        usage.issues.insert(0, UsageIssue { code: UsageIssueCode::NoTokenCount, line: None, omitted: None });
    }
    Ok(usage)
}
