//! Every coding agent whose own local records Bee reads, one folder each
//! (`claude/`, `codex/`): where the agent keeps its records, how its files
//! are parsed, what its reader keeps to resume, and a README of its format
//! as observed from the real CLI. They extract what the provider reported —
//! token counters, rate-limit snapshots, usage-limit hits — and nothing is
//! estimated.
//!
//! The seam is [`agent::Agent`]; [`agent()`] is the registry, one line per
//! agent. Three readers use only the seam: ingestion's incremental parsers
//! ([`LogParser`], driven by `ledger::intake::ingest`), `budget --measured`'s
//! whole-log reader ([`read_session`]), which accounts for every line
//! (matched to the session, to another session, or unparseable with its
//! line number), and the OpenTelemetry receiver (`ledger::intake::otel`).
//!
//! Inside, files point one way: the registry (this file) → each agent's
//! folder → [`lines`] (what line readers share) and [`agent`] (the seam).

pub mod agent;
pub mod agy;
pub mod aider;
pub mod amp;
pub mod aside;
pub mod augment;
pub mod bob;
pub mod claude;
pub mod cline;
pub mod codebuff;
pub mod codex;
#[path = "continue/mod.rs"]
pub mod continue_cli;
pub mod copilot;
#[path = "copilot-vs/mod.rs"]
pub mod copilot_vscode;
pub mod crush;
pub mod cursor;
pub mod devin;
pub mod droid;
pub mod gemini;
pub mod goose;
#[path = "grok-cli/mod.rs"]
pub mod grok_cli;
pub mod hermes;
pub mod junie;
pub mod kilo;
pub mod kilocode;
pub mod kimi;
#[path = "kimi-code/mod.rs"]
pub mod kimi_code;
pub mod kiro;
pub mod lines;
pub mod lingtai;
pub mod meept;
pub mod mimo;
pub mod muse;
pub mod mux;
pub mod omp;
pub mod openclaude;
pub mod openclaw;
pub mod opencode;
pub mod opencodereview;
pub mod pi;
pub mod qwen;
pub mod reasonix;
pub mod roo;
pub(crate) mod skipped;
pub(crate) mod sparse;
pub mod vibe;
pub mod warp;
pub mod whole;
pub mod windsurf;
pub mod zcode;
pub mod zed;

use bee_proto::ledger::Provider;
use bee_proto::usage::{Harness, UsageIssue, UsageIssueCode, note_line_issue};
use serde_json::Value;
use std::io::{self, Read};
use std::path::Path;

pub use agent::{Agent, SessionUsage};
pub use lines::MAX_LINE_BYTES;
pub use sparse::agrees_with_serde as sparse_agrees_with_serde;

use crate::ledger::stored::evidence::{Evidence, FileOffset};
use crate::storage::lines::{self as line_reader, Line};

/// The agent whose records count under `provider`: the registry. Adding an
/// agent is its folder and its line here (and its name in
/// `bee_proto::ledger::Provider`, the contract's spelling of it).
pub fn agent(provider: Provider) -> &'static dyn Agent {
    match provider {
        Provider::Claude => &claude::Claude,
        Provider::Codex => &codex::Codex,
        Provider::Gemini => &gemini::Gemini,
        Provider::Qwen => &qwen::Qwen,
        Provider::OpenCode => &opencode::OpenCode,
        Provider::Pi => &pi::Pi,
        Provider::Copilot => &copilot::Copilot,
        Provider::Amp => &amp::Amp,
        Provider::Droid => &droid::Droid,
        Provider::Goose => &goose::Goose,
        Provider::Kilo => &kilo::Kilo,
        Provider::Kimi => &kimi::Kimi,
        Provider::Codebuff => &codebuff::Codebuff,
        Provider::Crush => &crush::Crush,
        Provider::Hermes => &hermes::Hermes,
        Provider::OpenClaw => &openclaw::OpenClaw,
        Provider::Agy => &agy::Agy,
        Provider::CopilotVsCode => &copilot_vscode::CopilotVsCode,
        Provider::Junie => &junie::Junie,
        Provider::Devin => &devin::Devin,
        Provider::Mux => &mux::Mux,
        Provider::Cline => &cline::Cline,
        Provider::Roo => &roo::ROO,
        Provider::KiloCode => &kilocode::KILO_CODE,
        Provider::Continue => &continue_cli::Continue,
        Provider::Cursor => &cursor::Cursor,
        Provider::Zed => &zed::Zed,
        Provider::Aider => &aider::Aider,
        Provider::Augment => &augment::Augment,
        Provider::Meept => &meept::Meept,
        Provider::ZCode => &zcode::ZCode,
        Provider::Reasonix => &reasonix::Reasonix,
        Provider::LingTai => &lingtai::LingTai,
        Provider::OpenCodeReview => &opencodereview::OpenCodeReview,
        Provider::Aside => &aside::Aside,
        Provider::Muse => &muse::Muse,
        Provider::KimiCode => &kimi_code::KimiCode,
        Provider::MiMo => &mimo::MiMo,
        Provider::OpenClaude => &openclaude::OpenClaude,
        Provider::Bob => &bob::Bob,
        Provider::OhMyPi => &omp::OhMyPi,
        Provider::GrokCli => &grok_cli::GrokCli,
        Provider::MistralVibe => &vibe::MistralVibe,
        Provider::Kiro => &kiro::Kiro,
        Provider::Warp => &warp::Warp,
        Provider::Windsurf => &windsurf::Windsurf,
    }
}

/// Every agent, in the contract's order of their names.
pub fn all() -> impl Iterator<Item = &'static dyn Agent> {
    Provider::ALL.iter().map(|&provider| agent(provider))
}

/// What `provider`'s records can say ([`agent::Records`]: time spans,
/// usage-limit notices, reasoning, cache writes, its own cost), as its
/// registry entry declares: what a view asks before it reports one of
/// these figures of an agent (and says `null`, or `partial`, where the
/// records cannot).
pub fn records(provider: Provider) -> agent::Records {
    agent(provider).records()
}

/// The line of an agent's README that says what its records can say: a
/// test keeps each README's line equal to the registry's declaration.
pub fn records_line(records: agent::Records) -> String {
    let [time_spans, limit_notices, reasoning, cache_writes, own_cost] = records_said(records);
    format!(
        "Its records say — time spans: {time_spans}; limit notices: {limit_notices}; reasoning: {reasoning}; \
         cache writes: {cache_writes}; its own cost: {own_cost}."
    )
}

/// What an agent's records can say, each `yes` or `no`, in the order the
/// README's line and the book's table give them.
fn records_said(records: agent::Records) -> [&'static str; 5] {
    [records.time_spans, records.limit_notices, records.reasoning, records.cache_writes, records.own_cost]
        .map(|yes| if yes { "yes" } else { "no" })
}

/// The README's table of agents, from the registry (a test keeps the
/// README's copy equal to it).
pub fn readme_table() -> String {
    let mut table = String::from("| `--agent` | agent | verified | its format |\n|---|---|---|---|\n");
    for agent in all() {
        let name = agent.provider().as_str();
        table.push_str(&format!(
            "| `{name}` | {} | {} | [`daemon/src/ledger/agents/{name}/README.md`](daemon/src/ledger/agents/{name}/README.md) |\n",
            agent.title(),
            agent.verified()
        ));
    }
    table
}

/// The registry's cells of the book's table of agents (`docs/src/agents.md`),
/// a row an agent: its name, title, how its reader was verified and what its
/// records can say (a test keeps the book's rows equal to these).
pub fn book_rows() -> Vec<String> {
    all()
        .map(|agent| {
            format!(
                "| `{}` | {} | {} | {} |",
                agent.provider().as_str(),
                agent.title(),
                agent.verified(),
                records_said(agent.records()).join(" | ")
            )
        })
        .collect()
}

/// Ingestion's parser of one file: its agent's reader, and the file it reads.
pub(crate) struct LogParser {
    reader: Box<dyn agent::FileReader>,
    dev: u64,
    ino: u64,
}

impl LogParser {
    pub(crate) fn new(provider: Provider, path: &Path, start: FileOffset) -> LogParser {
        LogParser { reader: agent(provider).file_reader(path, &start.state), dev: start.dev, ino: start.ino }
    }

    /// Reads one complete line; `false` when it had a marker but did not parse.
    pub(crate) fn line(&mut self, line: &[u8], at: u64, out: &mut Vec<Evidence>) -> bool {
        self.reader.line(line, at, out)
    }

    /// The end of what could be read (see [`agent::FileReader::finish`]):
    /// a record still open is over when its own time is before
    /// `quiet_before_ms`.
    pub(crate) fn finish(&mut self, quiet_before_ms: i64, out: &mut Vec<Evidence>) {
        self.reader.finish(quiet_before_ms, out);
    }

    /// Where the next pass resumes, and with what.
    pub(crate) fn resume_point(&self, offset: u64) -> FileOffset {
        let (offset, state) = self.reader.resume(offset);
        FileOffset { dev: self.dev, ino: self.ino, offset, state }
    }
}

/// What ingestion reads from `log`, a whole file of `provider`'s, read in
/// one pass as if every record in it were over: the evidence and the number of lines
/// that carried a marker but did not parse (a line passed over for its
/// bound is noted as ingestion notes it). For fuzzing and
/// tests; ingestion itself reads files incrementally.
pub fn read_log(provider: Provider, log: &[u8]) -> (Vec<Evidence>, u64) {
    read_log_at(provider, Path::new(""), log)
}

/// [`read_log`] of a file at `path` (an agent that names its sessions by
/// their files' places).
pub fn read_log_at(provider: Provider, path: &Path, log: &[u8]) -> (Vec<Evidence>, u64) {
    let mut parser = LogParser::new(provider, path, FileOffset::default());
    let (mut evidence, mut unparseable, mut at) = (Vec::new(), 0u64, 0u64);
    let mut rest = log;
    while let Some(end) = memchr::memchr(b'\n', rest) {
        let (line, after) = rest.split_at(end + 1);
        if line.len() as u64 > MAX_LINE_BYTES {
            // As ingestion does: passed over and named, never parsed.
            skipped::note(bee_proto::ledger::SkipReason::OversizedLine, at, line.len() as u64);
        } else if !parser.line(line, at, &mut evidence) {
            unparseable += 1;
        }
        at += line.len() as u64;
        rest = after;
    }
    parser.finish(i64::MAX, &mut evidence);
    (evidence, unparseable)
}

/// Reads `log` (a whole file) for `session`. A line is parsed for the
/// paths its agent's reader reads ([`SessionReader::kept`]); one whose
/// kept parts pass their bound is not parsed, as a line over the line
/// bound is not.
pub fn read_session(harness: Harness, log: impl Read, session: &str) -> io::Result<SessionUsage> {
    let mut reader = io::BufReader::with_capacity(1 << 16, log);
    let Some(mut state) = agent(Provider::from(harness)).session_reader() else {
        return Err(io::Error::other("budget --measured reads no log of this agent"));
    };
    let keep = sparse::Keep::paths(state.kept());
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
        let value = match sparse::parse(text, &keep) {
            Ok(value @ Value::Object(_)) => value,
            // Refused for its bound: said as a line over the line bound is.
            Err(sparse::Refused::TooComplex) => {
                note_line_issue(&mut usage.issues, UsageIssueCode::OversizedLine, number);
                usage.lines.unparseable += 1;
                continue;
            }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::stored::responses::ResponseWrite;
    use bee_proto::ledger::SkipReason;
    use bee_proto::usage::Counters;

    /// A zstd frame of RLE blocks that decompresses to `bytes` spaces: a
    /// few bytes a 128 KiB block (a bomb for the bounded decompression).
    pub(crate) fn rle_frame(bytes: u64) -> Vec<u8> {
        // No checksum, a 128 KiB window.
        let mut frame = vec![0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x38];
        let mut left = bytes;
        while left > 0 {
            let size = left.min(128 << 10);
            left -= size;
            let header = (size << 3) | (1 << 1) | u64::from(left == 0);
            frame.extend_from_slice(&header.to_le_bytes()[..3]);
            frame.push(b' ');
        }
        frame
    }

    /// The responses a whole log of `provider`'s holds, and its unreadable lines.
    pub(crate) fn responses(provider: Provider, log: &[u8]) -> (Vec<ResponseWrite>, u64) {
        let (evidence, unparseable) = read_log(provider, log);
        (responses_of(evidence), unparseable)
    }

    /// [`responses`] of a Gemini CLI chat log: its reader tells a chat
    /// from its telemetry file by the chat's name.
    pub(crate) fn gemini_chat_responses(log: &[u8]) -> (Vec<ResponseWrite>, u64) {
        let chat = Path::new("/h/.gemini/tmp/p/chats/session-2026-12-05T03-21-8ed41bc8.jsonl");
        let (evidence, unparseable) = read_log_at(Provider::Gemini, chat, log);
        (responses_of(evidence), unparseable)
    }

    /// The responses among `evidence`.
    pub(crate) fn responses_of(evidence: Vec<Evidence>) -> Vec<ResponseWrite> {
        evidence
            .into_iter()
            .filter_map(|found| match found {
                Evidence::Response(write) => Some(write),
                _ => None,
            })
            .collect()
    }

    /// The responses JSON documents hold, each read as if at `path`.
    pub(crate) fn document_responses(reader: &whole::Documents, documents: &[Value]) -> Vec<ResponseWrite> {
        let mut evidence = Vec::new();
        for document in documents {
            reader.evidence(std::path::Path::new("sessions/project/chat/record.json"), document, &mut evidence);
        }
        responses_of(evidence)
    }

    /// A database named `name` in a directory of its own, made with
    /// `schema`: where an agent's database reader is tested. The directory
    /// lives as long as the first of the three.
    pub(crate) fn database(name: &str, schema: &str) -> (tempfile::TempDir, std::path::PathBuf, rusqlite::Connection) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(name);
        let db = rusqlite::Connection::open(&path).unwrap();
        db.execute_batch(schema).unwrap();
        (dir, path, db)
    }

    /// The responses a record file read whole holds, read on from `state`,
    /// and what its reader keeps now.
    pub(crate) fn read_whole(
        provider: Provider,
        path: &std::path::Path,
        state: &crate::ledger::stored::evidence::AgentState,
    ) -> (Vec<ResponseWrite>, crate::ledger::stored::evidence::AgentState) {
        let mut evidence = Vec::new();
        let (state, _) = agent(provider).whole_file().unwrap().read(path, state, &mut evidence).unwrap();
        (responses_of(evidence), state)
    }

    /// Each agent's README says what its records can say, in the words of
    /// the registry's declaration beside its reader: the two never part.
    #[test]
    fn every_readme_says_what_the_registry_declares_its_records_say() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/ledger/agents");
        for agent in all() {
            let name = agent.provider().as_str();
            let readme = std::fs::read_to_string(dir.join(name).join("README.md")).unwrap();
            let line = records_line(agent.records());
            assert!(readme.contains(&line), "{name}/README.md lacks the line `{line}`");
        }
    }

    /// An environment of `vars` alone, as an agent's `record_dirs` reads it.
    pub(crate) fn env_of(vars: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<std::ffi::OsString> {
        move |name: &str| vars.iter().find(|(var, _)| *var == name).map(|(_, value)| std::ffi::OsString::from(value))
    }

    /// Each response once by its key, in Bee's columns: (key, input,
    /// cache writes, cache reads, output, reasoning, total).
    pub(crate) type Row = (String, Option<u64>, Option<u64>, Option<u64>, Option<u64>, Option<u64>, Option<u64>);

    pub(crate) fn rows(provider: Provider, writes: &[ResponseWrite]) -> Vec<Row> {
        let mut rows: Vec<Row> = writes
            .iter()
            .map(|write| {
                let t = agent(provider)
                    .columns(&crate::ledger::stored::responses::with_total(provider, write.tokens.clone()));
                let sum = [t.input_tokens, t.cache_creation_input_tokens, t.cache_read_input_tokens, t.output_tokens]
                    .iter()
                    .flatten()
                    .sum::<u64>();
                if let Some(total) = t.total_tokens {
                    assert_eq!(sum, total, "columns add up: {t:?}");
                }
                (
                    write.key.clone(),
                    t.input_tokens,
                    t.cache_creation_input_tokens,
                    t.cache_read_input_tokens,
                    t.output_tokens,
                    t.reasoning_output_tokens,
                    t.total_tokens,
                )
            })
            .collect();
        rows.sort();
        rows.dedup();
        rows
    }

    /// An array of `items` tiny items, as JSON: millions of them make a
    /// record whose full tree would be dozens of times its size.
    pub(crate) fn tiny_items(items: usize) -> String {
        let mut junk = String::with_capacity(2 * items + 2);
        junk.push('[');
        for at in 0..items {
            junk.push_str(if at == 0 { "0" } else { ",0" });
        }
        junk.push(']');
        junk
    }

    /// What was noted as passed over on this thread since the last call.
    pub(crate) fn noted() -> Vec<(u64, u64, bee_proto::ledger::SkipReason)> {
        skipped::take().first.into_iter().map(|noted| (noted.offset, noted.bytes, noted.reason)).collect()
    }

    /// A line agent's record, for the tests of what its reader passes
    /// over: `head` (lines before any record), and a record line in which
    /// `@n@` numbers the record, `@skip@` is a value its reader does not
    /// read and `@kept@` one it reads (normally `kept`).
    struct LineCase {
        provider: Provider,
        path: &'static str,
        head: &'static str,
        record: &'static str,
        kept: &'static str,
    }

    impl LineCase {
        fn line(&self, n: usize, skip: &str, kept: &str) -> String {
            let record = self.record.replace("@skip@", skip).replace("@kept@", kept);
            record.replace("@n@", &n.to_string()) + "\n"
        }
    }

    /// Every line agent whose lines are parsed into a tree (Claude Code's
    /// are read as typed fields), each with one record in its own shape.
    const LINE_CASES: &[LineCase] = &[
        LineCase {
            provider: Provider::Gemini,
            path: "/h/.gemini/tmp/p/chats/session-2026-12-05T03-21-8ed41bc8.jsonl",
            head: "{\"sessionId\":\"s1\",\"projectHash\":\"h\",\"startTime\":\"2026-12-05T03:21:30.449Z\"}\n",
            record: r#"{"id":"m@n@","timestamp":"2026-12-05T03:21:3@n@.000Z","type":"gemini","content":@skip@,"tokens":{"input":10,"output":5,"cached":1,"thoughts":0,"tool":0,"total":15},"model":@kept@}"#,
            kept: r#""gemini-3.8-flash""#,
        },
        LineCase {
            provider: Provider::Qwen,
            path: "",
            head: "",
            record: r#"{"sessionId":"s1","cwd":"/w","type":"system","subtype":"ui_telemetry","message":@skip@,"systemPayload":{"uiEvent":{"event.name":"qwen-code.api_response","event.timestamp":"2026-12-05T03:21:5@n@.382Z","response_id":"r@n@","model":@kept@,"input_token_count":10,"output_token_count":5,"cached_content_token_count":1,"thoughts_token_count":0,"total_token_count":15}}}"#,
            kept: r#""qwen3-coder-plus""#,
        },
        LineCase {
            provider: Provider::Pi,
            path: "",
            head: "{\"type\":\"session\",\"version\":3,\"id\":\"s1\",\"timestamp\":\"2026-12-05T03:22:45.669Z\",\"cwd\":\"/w\"}\n",
            record: r#"{"type":"message","timestamp":"2026-12-05T03:22:4@n@.755Z","message":{"role":"assistant","content":@skip@,"responseId":"r@n@","model":@kept@,"usage":{"input":1,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":3}}}"#,
            kept: r#""claude-sonnet-4-5""#,
        },
        LineCase {
            provider: Provider::OpenClaw,
            path: "",
            head: "{\"type\":\"session\",\"version\":3,\"id\":\"s1\",\"timestamp\":\"2026-12-05T03:22:45.669Z\",\"cwd\":\"/w\"}\n",
            record: r#"{"type":"message","timestamp":"2026-12-05T03:22:4@n@.755Z","message":{"role":"assistant","content":@skip@,"responseId":"r@n@","provider":@kept@,"usage":{"input":1,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":3}}}"#,
            kept: r#""anthropic""#,
        },
        LineCase {
            provider: Provider::Copilot,
            path: "",
            head: "",
            record: r#"{"traceId":"t1","spanId":"s@n@","name":"chat gpt-5.1","startTime":[1796440000,0],"endTime":[179644000@n@,5000000],"events":@skip@,"attributes":{"gen_ai.operation.name":"chat","gen_ai.conversation.id":"c1","gen_ai.response.id":"r@n@","gen_ai.response.model":@kept@,"gen_ai.usage.input_tokens":10,"gen_ai.usage.cache_read.input_tokens":1,"gen_ai.usage.output_tokens":{"intValue":"5"}}}"#,
            kept: r#""gpt-5.1""#,
        },
        LineCase {
            provider: Provider::Kimi,
            path: "s/2b9f/5e1c-session/wire.jsonl",
            head: "",
            record: r#"{"timestamp":179644000@n@.5,"message":{"type":"StatusUpdate","payload":{"context":@skip@,"token_usage":{"input_other":10,"output":5,"input_cache_read":1,"input_cache_creation":0},"message_id":@kept@}}}"#,
            kept: r#""k@n@""#,
        },
        LineCase {
            provider: Provider::Aside,
            path: "/h/.aside/u/0/sessions/s1/messages.jsonl",
            head: "",
            record: r#"{"role":"assistant","timestamp":178860960000@n@,"responseId":"r@n@","content":@skip@,"usage":{"input":@kept@,"output":1}}"#,
            kept: "5",
        },
        LineCase {
            provider: Provider::Muse,
            path: "/h/.local/share/muse/sessions/2026/09/18/01a0b7d1-b7af-7de2-8369-4f4815ae1d72/session.jsonl",
            head: "",
            record: r#"{"id":"e@n@","stream":{"id":"s1"},"recorded_at":178979045589639@n@,"payload_type":"runtime.session","payload":{"kind":"run","text":@skip@,"event":{"kind":"model_completed","model":"m","usage":{"input_tokens":@kept@,"output_tokens":1}}}}"#,
            kept: "5",
        },
        LineCase {
            provider: Provider::KimiCode,
            path: "/h/.kimi-code/sessions/wd_app/session_s1/agents/main/wire.jsonl",
            head: "",
            record: r#"{"type":"usage.record","model":"a","prompt":@skip@,"usage":{"inputOther":@kept@,"output":1},"time":178290000000@n@}"#,
            kept: "5",
        },
        LineCase {
            provider: Provider::Codex,
            path: "",
            head: concat!(
                "{\"timestamp\":\"2026-11-30T10:00:00.000Z\",\"type\":\"session_meta\",\"payload\":{\"id\":\"s1\",\"cwd\":\"/w\"}}\n",
                "{\"timestamp\":\"2026-11-30T10:00:00.000Z\",\"type\":\"turn_context\",\"payload\":{\"model\":\"gpt-5.1\"}}\n",
            ),
            record: r#"{"timestamp":"2026-11-30T10:00:0@n@.000Z","type":"event_msg","payload":{"type":"token_count","rate_limits":{"credits":@skip@},"info":{"total_token_usage":{"input_tokens":@n@00,"output_tokens":5},"last_token_usage":{"input_tokens":100,"cached_input_tokens":0,"output_tokens":@kept@},"model_context_window":1000}}}"#,
            kept: "5",
        },
        LineCase {
            provider: Provider::Kiro,
            path: "/h/.kiro/sessions/9f3c1d0b7a4e2856/sess_1/messages.jsonl",
            head: "",
            record: r#"{"id":"e@n@-usage","timestamp":"2026-09-03T12:00:0@n@.000Z","payload":{"type":"usage_summary","promptTurnSummaries":[{"unit":"credit","usage":0.5,"usedTools":@skip@}],"executionId":"e@n@","requestIds":@kept@}}"#,
            kept: r#"["r@n@"]"#,
        },
    ];

    /// Each line agent: a record with millions of tiny items in a value its
    /// reader does not read is read as if they were not there; in a value
    /// it reads, the record is passed over and named (where it starts, how
    /// long it is), not counted unparseable, and the log reads on.
    #[test]
    fn tiny_items_are_passed_over_or_the_record_named() {
        let junk = tiny_items(1_500_000);
        for case in LINE_CASES {
            let name = case.provider.as_str();
            let read = |log: &str| {
                let (evidence, unparseable) = read_log_at(case.provider, Path::new(case.path), log.as_bytes());
                (rows(case.provider, &responses_of(evidence)), unparseable)
            };
            let clean = format!("{}{}{}", case.head, case.line(1, "0", case.kept), case.line(3, "0", case.kept));
            let (expected, unparseable) = read(&clean);
            assert_eq!((expected.len(), unparseable), (2, 0), "{name}: {expected:?}");
            let _ = noted();

            let bad = case.line(2, "0", &junk);
            let first = case.line(1, &junk, case.kept);
            let log = format!("{}{first}{bad}{}", case.head, case.line(3, "0", case.kept));
            assert_eq!(read(&log), (expected, 0), "{name}: the record with junk where it is not read is read");
            let at = (case.head.len() + first.len()) as u64;
            assert_eq!(noted(), [(at, bad.len() as u64, SkipReason::TooComplex)], "{name}");
        }
    }

    /// A record too broken to parse is still unparseable, and a line that
    /// is no UTF-8 in a value read is too; one over the line bound is
    /// passed over and named, never parsed.
    #[test]
    fn broken_and_oversized_lines_of_every_line_agent() {
        for case in LINE_CASES {
            let name = case.provider.as_str();
            let good = case.line(1, "0", case.kept);
            // Cut short where every marker is still in it.
            let cut = &good[..good.len() - 10];
            let not_utf8 = case.line(2, "0", "\"\u{fffd}\"").replace('\u{fffd}', "\u{0}").into_bytes();
            let not_utf8: Vec<u8> = not_utf8.iter().map(|&b| if b == 0 { 0xff } else { b }).collect();
            let mut log = format!("{}{cut}\n", case.head).into_bytes();
            log.extend_from_slice(&not_utf8);
            let at = log.len() as u64;
            let long = format!("{}\n", " ".repeat(MAX_LINE_BYTES as usize));
            log.extend_from_slice(long.as_bytes());
            log.extend_from_slice(good.as_bytes());
            let _ = noted();
            let (evidence, unparseable) = read_log_at(case.provider, Path::new(case.path), &log);
            assert_eq!(unparseable, 2, "{name}: the cut line and the one not UTF-8");
            assert_eq!(responses_of(evidence).len(), 1, "{name}: the good record after them");
            assert_eq!(noted(), [(at, long.len() as u64, SkipReason::OversizedLine)], "{name}");
        }
    }

    /// `budget --measured`: a line whose tool input or output is millions
    /// of tiny items is read for its usage; one whose read parts (a text
    /// part, a rate-limit window) are is said to be over its bound and
    /// counted unparseable, and the log reads on.
    #[test]
    fn measured_lines_of_tiny_items_are_read_or_said_too_large() {
        let session = "5d0a9c1b-2e3f-4a5b-8c6d-7e8f9a0b1c2d";
        let junk = tiny_items(1_500_000);
        let claude = |content: &str, id: u32| {
            format!(
                r#"{{"type":"assistant","sessionId":"{session}","timestamp":"2026-11-30T10:00:00.000Z","requestId":"req_{id}","message":{{"id":"msg_{id}","model":"claude-sonnet-4-5","content":{content},"usage":{{"input_tokens":10,"cache_creation_input_tokens":0,"cache_read_input_tokens":1,"output_tokens":5}}}}}}"#
            ) + "\n"
        };
        let log = claude(&format!(r#"[{{"type":"tool_use","input":{junk}}}]"#), 1)
            + &claude(&format!(r#"[{{"type":"text","text":{junk}}}]"#), 2)
            + &claude(r#"[{"type":"text","text":"done"}]"#, 3);
        let usage = read_session(Harness::Claude, log.as_bytes(), session).unwrap();
        assert_eq!((usage.lines.matched_session, usage.lines.unparseable), (2, 1));
        assert_eq!(usage.response.as_ref().map(|r| r.responses), Some(2));
        assert!(usage.issues.iter().any(|i| i.code == UsageIssueCode::OversizedLine && i.line == Some(2)));

        let codex = [
            format!(
                r#"{{"timestamp":"2026-11-30T10:00:00.000Z","type":"session_meta","payload":{{"id":"{session}","base_instructions":{junk}}}}}"#
            ),
            format!(
                r#"{{"timestamp":"2026-11-30T10:00:01.000Z","type":"event_msg","payload":{{"type":"token_count","info":{{"total_token_usage":{{"input_tokens":100,"output_tokens":5}},"last_token_usage":{{"input_tokens":100,"output_tokens":5}}}},"rate_limits":{{"primary":{{"used_percent":{junk}}}}}}}}}"#
            ),
            r#"{"timestamp":"2026-11-30T10:00:02.000Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":200,"output_tokens":9},"last_token_usage":{"input_tokens":100,"output_tokens":4}}}}"#.to_owned(),
        ]
        .join("\n")
            + "\n";
        let usage = read_session(Harness::Codex, codex.as_bytes(), session).unwrap();
        assert_eq!((usage.lines.matched_session, usage.lines.unparseable), (2, 1));
        assert_eq!(usage.response.as_ref().map(|r| r.responses), Some(1));
        assert!(usage.issues.iter().any(|i| i.code == UsageIssueCode::OversizedLine && i.line == Some(2)));
    }

    /// A 40 MB pi line, almost all of it a tool result of tiny items, is
    /// read for its response: what is built of it is its few fields.
    #[test]
    fn a_forty_megabyte_line_of_tiny_items_is_read() {
        let case = &LINE_CASES[2];
        let junk = tiny_items(20_000_000);
        let log = format!("{}{}", case.head, case.line(1, &junk, case.kept));
        assert!(log.len() > 40_000_000);
        let (writes, unparseable) = responses(Provider::Pi, log.as_bytes());
        assert_eq!((writes.len(), unparseable), (1, 0));
        assert_eq!((writes[0].key.as_str(), writes[0].tokens.total_tokens), ("r1", Some(3)));
        assert!(noted().is_empty());
    }

    /// Gemini CLI 0.61.0's own log of a tool turn, then a resume: each
    /// response once under its message id (written again with its tool
    /// calls; listed again, without tokens, by the resume), prompt tokens
    /// net of the cached part, thoughts inside output.
    #[test]
    fn gemini_responses_once_each_through_tool_calls_and_resume() {
        let log = include_bytes!("testdata/gemini-0.61.0-tool-and-resume.jsonl");
        let (writes, unparseable) = gemini_chat_responses(log);
        assert_eq!(unparseable, 0);
        assert!(writes.iter().all(|w| w.session_id.as_deref() == Some("8ed41bc8-1ce0-4c6a-8524-b2419579ce82")));
        let s = Some;
        assert_eq!(
            rows(Provider::Gemini, &writes),
            [
                ("316e08f8-96c6-429b-bf0a-3d71d304ea31".into(), s(555), None, s(500), s(65), s(10), s(1120)),
                ("38495692-8e3f-40d4-83f3-fdf04fbad336".into(), s(288), None, s(800), s(86), s(16), s(1174)),
                ("e5f8e7ae-ada0-441d-9267-cebf61d0f420".into(), s(466), None, s(600), s(72), s(12), s(1138)),
            ]
        );
        assert_eq!(writes[0].model.as_deref(), Some("gemini-3.8-flash"));
    }

    /// Qwen Code 0.24.4's own log of a tool turn: both responses by their
    /// provider ids from the CLI's `api_response` records, the assistant
    /// records' copies of them not counted again; the project is the
    /// session's working directory.
    #[test]
    fn qwen_responses_by_their_provider_ids() {
        let log = include_bytes!("testdata/qwen-0.24.4-tool.jsonl");
        let (evidence, unparseable) = read_log(Provider::Qwen, log);
        assert_eq!(unparseable, 0);
        assert!(evidence.iter().any(|e| matches!(e, Evidence::SessionProject(p) if p.project == "-home-dev-app")));
        let (writes, _) = responses(Provider::Qwen, log);
        let s = Some;
        assert_eq!(
            rows(Provider::Qwen, &writes),
            [
                ("chatcmpl-mock-013".into(), s(1013), None, s(130), s(95), s(26), s(1238)),
                ("chatcmpl-mock-014".into(), s(1014), None, s(140), s(100), s(28), s(1254)),
            ]
        );
    }

    /// pi 0.73.1's own log of a tool turn and a continued prompt: each
    /// response by its provider id, in Anthropic's shape; a failed request
    /// (no id, zero usage) is no response.
    #[test]
    fn pi_responses_by_their_ids_and_a_failure_is_none() {
        let (writes, unparseable) =
            responses(Provider::Pi, include_bytes!("testdata/pi-0.73.1-tool-and-continue.jsonl"));
        assert_eq!(unparseable, 0);
        let s = Some;
        assert_eq!(
            rows(Provider::Pi, &writes),
            [
                ("msg_mock_025".into(), s(125), s(7500), s(5175), s(95), None, s(12895)),
                ("msg_mock_026".into(), s(126), s(7800), s(5182), s(98), None, s(13206)),
                ("msg_mock_027".into(), s(127), s(8100), s(5189), s(101), None, s(13517)),
            ]
        );
        let (failed, unparseable) = responses(Provider::Pi, include_bytes!("testdata/pi-0.73.1-error.jsonl"));
        assert_eq!((failed.len(), unparseable), (0, 0));
    }

    /// Hostile and broken lines of every line agent: a line that is no
    /// JSON object is unparseable, a response without its id or time is
    /// unparseable, a counter that is no count is unknown (never 0), and
    /// a total that is not the sum of its parts is left to the ledger.
    #[test]
    fn broken_lines_are_counted_and_unknown_stays_unknown() {
        let gemini = concat!(
            "{\"sessionId\":\"s1\",\"projectHash\":\"h\",\"startTime\":\"2026-12-05T03:21:30.449Z\"}\n",
            "{\"id\":\"m1\",\"timestamp\":\"2026-12-05T03:21:31.000Z\",\"type\":\"gemini\",\"tokens\":{\"input\":\"ten\",\"output\":5,\"cached\":1,\"thoughts\":0,\"tool\":0,\"total\":99},\"model\":\"gemini-3.8-flash\"}\n",
            "{\"id\":\"m2\",\"type\":\"gemini\",\"tokens\":{\"input\":1}}\n",
            "{\"tokens\": [1,2\n",
            "\u{fffd}\"tokens\"\n",
        );
        let (writes, unparseable) = gemini_chat_responses(gemini.as_bytes());
        assert_eq!(unparseable, 3, "no time; not JSON; not UTF-8 JSON");
        assert_eq!(writes.len(), 1);
        assert_eq!((writes[0].tokens.input_tokens, writes[0].tokens.total_tokens), (None, None));
        let pi = concat!(
            "{\"type\":\"session\",\"version\":3,\"id\":\"s1\",\"timestamp\":\"2026-12-05T03:22:45.669Z\",\"cwd\":\"/w\"}\n",
            "{\"type\":\"message\",\"timestamp\":\"2026-12-05T03:22:45.755Z\",\"message\":{\"role\":\"assistant\",\"responseId\":\"r1\",\"usage\":{\"input\":-1,\"output\":2,\"cacheRead\":0,\"cacheWrite\":0,\"totalTokens\":2}}}\n",
            "{\"type\":\"message\",\"message\":{\"role\":\"assistant\",\"responseId\":\"r2\",\"usage\":7}}\n",
        );
        let (writes, unparseable) = responses(Provider::Pi, pi.as_bytes());
        assert_eq!((writes.len(), unparseable), (1, 1));
        assert_eq!(writes[0].tokens.input_tokens, None, "a negative count is unknown");
        assert_eq!(writes[0].tokens.total_tokens, None, "a total over an unknown part is unknown");
        let qwen = "{\"sessionId\":\"s1\",\"type\":\"system\",\"subtype\":\"ui_telemetry\",\"systemPayload\":{\"uiEvent\":{\"event.name\":\"qwen-code.api_response\",\"response_id\":\"\",\"event.timestamp\":\"2026-12-05T03:21:57.382Z\"}}}\n";
        assert_eq!(responses(Provider::Qwen, qwen.as_bytes()).1, 1, "a response without its id");
    }

    /// OpenCode 1.18.33's messages: a fork's copy (new id, same times
    /// and tokens) is the same response; reasoning is part of output; a
    /// failed request (zero tokens, an `error`) and one still running (no
    /// completion time) are no responses.
    #[test]
    fn opencode_copies_are_one_response_and_failures_none() {
        let message = |completed: serde_json::Value, tokens: serde_json::Value, error: bool| {
            let mut data = serde_json::json!({"role": "assistant", "providerID": "mock", "modelID": "qwen3-coder-plus",
                "time": {"created": 1_796_440_939_675_i64, "completed": completed}, "tokens": tokens, "cost": 0});
            if error {
                data["error"] = serde_json::json!({"name": "APIError"});
            }
            data.to_string()
        };
        let tokens = serde_json::json!({"total": 5434, "input": 5000, "output": 84, "reasoning": 36,
            "cache": {"write": 0, "read": 314}});
        let original =
            opencode::read_message("ses_a", message(1_796_440_940_522_i64.into(), tokens.clone(), false).as_bytes());
        let copy = opencode::read_message("ses_fork", message(1_796_440_940_522_i64.into(), tokens, false).as_bytes());
        let keys = |found: &[Evidence]| -> Vec<(String, Counters)> {
            found
                .iter()
                .filter_map(|e| match e {
                    Evidence::Response(w) => Some((w.key.clone(), w.tokens.clone())),
                    _ => None,
                })
                .collect()
        };
        let (original, copy) = (keys(&original), keys(&copy));
        assert_eq!(original.len(), 1);
        assert_eq!(original, copy, "the fork's copy is the same response");
        let t = &original[0].1;
        assert_eq!(
            (t.input_tokens, t.cache_read_input_tokens, t.output_tokens, t.reasoning_output_tokens),
            (Some(5000), Some(314), Some(120), Some(36))
        );
        let zero = serde_json::json!({"input": 0, "output": 0, "reasoning": 0, "cache": {"read": 0, "write": 0}});
        let zero_free =
            || serde_json::json!({"input": 5, "output": 1, "reasoning": 0, "cache": {"read": 0, "write": 0}});
        assert!(
            opencode::read_message("ses_b", message(1_796_440_948_525_i64.into(), zero.clone(), true).as_bytes())
                .is_empty()
        );
        assert!(opencode::read_message("ses_b", message(serde_json::Value::Null, zero, false).as_bytes()).is_empty());
        assert!(opencode::read_message("ses_b", b"{\"role\": \"assistant\", \"tokens\": 5").is_empty());
        let mut wrapped: Value =
            serde_json::from_str(&message(1_796_440_940_522_i64.into(), zero_free(), false)).unwrap();
        wrapped["providerID"] = "claude-code".into();
        assert!(
            opencode::read_message("ses_c", wrapped.to_string().as_bytes()).is_empty(),
            "a response through Claude Code's CLI is Claude Code's own"
        );
    }
}
