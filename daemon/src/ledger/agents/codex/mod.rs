//! Codex: its rollout logs (one JSONL file per session, by date, under
//! `sessions/`). `README.md` beside this file describes the format as
//! observed from the real CLI.
//!
//! - [`rollout`]: the incremental reader and `budget --measured`'s.

mod rollout;

use bee_proto::ledger::Provider;
use std::path::{Path, PathBuf};

use crate::ledger::agents::agent::{About, Agent, Env, FileReader, Records, SessionReader, Verified};
use crate::ledger::stored::evidence::AgentState;

/// Codex, as [`Agent`].
#[derive(Debug)]
pub struct Codex;

impl Agent for Codex {
    fn about(&self) -> &'static About {
        &About {
            provider: Provider::Codex,
            title: "Codex",
            verified: Verified::RealCli("0.169.0"),
            unrecorded_calls: None,
            // Its rollouts time each task (started → complete), write a
            // usage-limit hit as an error event, count reasoning apart; no
            // cache-write counter, no cost.
            records: Records {
                time_spans: true,
                limit_notices: true,
                reasoning: true,
                cache_writes: false,
                own_cost: false,
            },
        }
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

    fn file_reader(&self, _path: &Path, state: &AgentState) -> Box<dyn FileReader> {
        Box::new(rollout::CodexParser::new(state))
    }

    fn session_reader(&self) -> Option<Box<dyn SessionReader>> {
        Some(Box::<rollout::CodexState>::default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bee_proto::usage::Counters;

    /// Codex's input includes its cached part: in Bee's columns the cached
    /// part is a cache read, input the rest, and the columns add up to
    /// Codex's own total; an unknown cached part leaves input unknown.
    #[test]
    fn cached_input_is_shown_once_as_cache_reads() {
        let reported = Counters {
            input_tokens: Some(10_000),
            cached_input_tokens: Some(8_000),
            output_tokens: Some(500),
            reasoning_output_tokens: Some(200),
            total_tokens: Some(10_500),
            ..Counters::default()
        };
        let shown = Codex.columns(&reported);
        assert_eq!(
            (shown.input_tokens, shown.cache_read_input_tokens, shown.cached_input_tokens),
            (Some(2_000), Some(8_000), None)
        );
        let columns =
            [shown.input_tokens, shown.cache_creation_input_tokens, shown.cache_read_input_tokens, shown.output_tokens];
        assert_eq!(Some(columns.iter().flatten().sum::<u64>()), shown.total_tokens);
        let unknown_cache = Counters { cached_input_tokens: None, ..reported };
        assert_eq!(Codex.columns(&unknown_cache).input_tokens, None, "input without cache reads is unknown");
    }
}
