//! Kimi (Moonshot's Kimi CLI): each session's wire log
//! (`<share dir>/sessions/<project hash>/<session>/wire.jsonl`). `README.md`
//! beside this file describes the format.
//!
//! - [`wire`]: the incremental reader.

mod wire;

use bee_proto::ledger::Provider;
use std::path::{Path, PathBuf};

use crate::ledger::agents::agent::{About, Agent, Env, FileReader, Records, Verified, env_or_home};
use crate::ledger::agents::lines::JsonLines;
use crate::ledger::stored::evidence::AgentState;

/// Kimi CLI, as [`Agent`].
#[derive(Debug)]
pub struct Kimi;

impl Agent for Kimi {
    fn about(&self) -> &'static About {
        &About {
            provider: Provider::Kimi,
            title: "Kimi CLI",
            verified: Verified::FormatFromSource,
            unrecorded_calls: None,
            // Its status updates keep cache writes; no reasoning, no cost, no
            // limit notice Bee reads, no turn Bee times.
            records: Records {
                time_spans: false,
                limit_notices: false,
                reasoning: false,
                cache_writes: true,
                own_cost: false,
            },
        }
    }

    /// `sessions/` of `KIMI_SHARE_DIR`, else of `~/.kimi`.
    fn record_dirs(&self, env: Env<'_>) -> Vec<PathBuf> {
        env_or_home(env, "KIMI_SHARE_DIR", ".kimi").map(|dir| dir.join("sessions")).into_iter().collect()
    }

    fn is_record_file(&self, path: &Path) -> bool {
        path.file_name().is_some_and(|name| name == "wire.jsonl")
    }

    fn file_reader(&self, path: &Path, state: &AgentState) -> Box<dyn FileReader> {
        Box::new(JsonLines::<wire::Wire>::new(path, state))
    }
}
