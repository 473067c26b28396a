//! Claude Code: its transcripts (one JSONL file per session under its
//! project's folder) and its own OpenTelemetry events. `README.md` beside
//! this file describes the format as observed from the real CLI.
//!
//! - [`line`]: the few fields read of a transcript line;
//! - [`scan`]: those fields found in one checked pass over a line's bytes;
//! - [`transcript`]: the incremental reader and `budget --measured`'s;
//! - [`telemetry`]: `claude_code.api_request` events.

mod line;
mod scan;
mod telemetry;
mod transcript;

use bee_proto::ledger::Provider;
use opentelemetry_proto::tonic::logs::v1::LogRecord;
use std::path::{Path, PathBuf};

pub use scan::agrees_with_serde;

use crate::ledger::agents::agent::{About, Agent, Env, FileReader, Records, SessionReader, Telemetry, Verified};
use crate::ledger::stored::evidence::AgentState;

/// The incremental reader of a transcript in Claude Code's format, its
/// records counted under `provider`: Claude Code's own, or a fork's that
/// keeps the format (OpenClaude).
pub(crate) fn transcript_reader(provider: Provider, state: &AgentState) -> Box<dyn FileReader> {
    Box::new(transcript::ClaudeParser::new(provider, state))
}

/// Claude Code, as [`Agent`].
#[derive(Debug)]
pub struct Claude;

impl Agent for Claude {
    fn about(&self) -> &'static About {
        &About {
            provider: Provider::Claude,
            title: "Claude Code",
            verified: Verified::RealCli("2.1.332"),
            unrecorded_calls: None,
            // Its transcripts time each turn (prompt → last response), write a
            // usage-limit hit as an API-error line, keep cache writes apart,
            // reasoning inside output, and its cost in cost-state lines.
            records: Records {
                time_spans: true,
                limit_notices: true,
                reasoning: false,
                cache_writes: true,
                own_cost: true,
            },
        }
    }

    /// `projects/` of each configuration directory, as Claude Code finds
    /// them: `CLAUDE_CONFIG_DIR` (a comma-separated list), else `~/.claude`.
    /// `BEE_CLAUDE_PROJECTS` names the one `projects` directory instead.
    fn record_dirs(&self, env: Env<'_>) -> Vec<PathBuf> {
        if let Some(projects) = env("BEE_CLAUDE_PROJECTS") {
            vec![PathBuf::from(projects)]
        } else if let Some(list) = env("CLAUDE_CONFIG_DIR") {
            let mut dirs: Vec<PathBuf> = list
                .to_string_lossy()
                .split(',')
                .map(str::trim)
                .filter(|dir| !dir.is_empty())
                .map(|dir| PathBuf::from(dir).join("projects"))
                .collect();
            dirs.dedup();
            dirs
        } else {
            env("HOME").map(|home| PathBuf::from(home).join(".claude").join("projects")).into_iter().collect()
        }
    }

    fn file_reader(&self, _path: &Path, state: &AgentState) -> Box<dyn FileReader> {
        transcript_reader(Provider::Claude, state)
    }

    fn session_reader(&self) -> Option<Box<dyn SessionReader>> {
        Some(Box::<transcript::ClaudeState>::default())
    }

    /// The project directory and session a transcript's path names: its
    /// own (`<project>/<session>.jsonl`) or its subagents'
    /// (`<project>/<session>/subagents/…`).
    fn project_and_session<'p>(&self, path: &'p str) -> Option<(&'p str, &'p str)> {
        let (_, below) = path.rsplit_once("/projects/")?;
        let mut parts = below.split('/');
        let (project, session) = (parts.next()?, parts.next()?);
        let session = session.strip_suffix(".jsonl").unwrap_or(session);
        (!project.is_empty() && !session.is_empty()).then_some((project, session))
    }

    fn telemetry(&self, record: &LogRecord) -> Telemetry {
        telemetry::read(record)
    }
}
