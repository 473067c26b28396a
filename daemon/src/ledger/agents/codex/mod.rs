//! Codex: its rollout logs (one JSONL file per session, by date, under
//! `sessions/`). `README.md` beside this file describes the format as
//! observed from the real CLI.
//!
//! - [`rollout`]: the incremental reader and `budget --measured`'s.

mod rollout;

use bee_proto::ledger::Provider;
use std::path::PathBuf;

use crate::ledger::agents::agent::{Agent, Env, FileReader, SessionReader};
use crate::ledger::evidence::AgentState;

/// Codex, as [`Agent`].
#[derive(Debug)]
pub struct Codex;

impl Agent for Codex {
    fn provider(&self) -> Provider {
        Provider::Codex
    }

    /// `sessions/` of `CODEX_HOME`, else of `~/.codex`, as Codex finds it.
    /// `BEE_CODEX_SESSIONS` names the sessions directory itself instead.
    fn record_dirs(&self, env: Env<'_>) -> Vec<PathBuf> {
        if let Some(sessions) = env("BEE_CODEX_SESSIONS") {
            vec![PathBuf::from(sessions)]
        } else if let Some(codex_home) = env("CODEX_HOME") {
            vec![PathBuf::from(codex_home).join("sessions")]
        } else {
            env("HOME").map(|home| PathBuf::from(home).join(".codex").join("sessions")).into_iter().collect()
        }
    }

    fn file_reader(&self, state: &AgentState) -> Box<dyn FileReader> {
        Box::new(rollout::CodexParser::new(state))
    }

    fn session_reader(&self) -> Box<dyn SessionReader> {
        Box::<rollout::CodexState>::default()
    }
}
