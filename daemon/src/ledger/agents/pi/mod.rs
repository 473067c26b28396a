//! pi (the pi coding agent): its session logs (`<agent dir>/sessions/
//! --<project>--/<time>_<session>.jsonl`). `README.md` beside this file
//! describes the format as observed from the real CLI.
//!
//! - [`session`]: the incremental reader.

pub(crate) mod session;

use bee_proto::ledger::Provider;
use std::path::{Path, PathBuf};

use crate::ledger::agents::agent::{About, Agent, Env, FileReader, Records, Verified};
use crate::ledger::agents::lines::JsonLines;
use crate::ledger::stored::evidence::AgentState;

/// pi, as [`Agent`].
#[derive(Debug)]
pub struct Pi;

impl Agent for Pi {
    fn about(&self) -> &'static About {
        &About {
            provider: Provider::Pi,
            title: "pi",
            verified: Verified::RealCli("0.73.1"),
            unrecorded_calls: Some("compaction and summary calls"),
            // Its sessions keep cache writes and its own `usage.cost`, no
            // reasoning; a failed request leaves no limit notice, and Bee
            // times no turn from them.
            records: Records {
                time_spans: false,
                limit_notices: false,
                reasoning: false,
                cache_writes: true,
                own_cost: true,
            },
        }
    }

    /// `sessions/` of `PI_CODING_AGENT_DIR`, else of `~/.pi/agent`.
    fn record_dirs(&self, env: Env<'_>) -> Vec<PathBuf> {
        env("PI_CODING_AGENT_DIR")
            .map(PathBuf::from)
            .or_else(|| env("HOME").map(|home| PathBuf::from(home).join(".pi").join("agent")))
            .map(|dir| dir.join("sessions"))
            .into_iter()
            .collect()
    }

    fn file_reader(&self, path: &Path, state: &AgentState) -> Box<dyn FileReader> {
        Box::new(JsonLines::<session::Session<session::Pi>>::new(path, state))
    }
}
