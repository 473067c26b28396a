//! GitHub Copilot CLI: the spans its OpenTelemetry file exporter writes
//! (`COPILOT_OTEL_FILE_EXPORTER_PATH`, and `~/.copilot/otel/*.jsonl`), its
//! only local record of tokens. `README.md` beside this file describes the
//! format.
//!
//! - [`otel`]: the incremental reader.

mod otel;

use bee_proto::ledger::Provider;
use std::path::{Path, PathBuf};

use crate::ledger::agents::agent::{About, Agent, Env, FileReader, Records, Verified, env_or_home};
use crate::ledger::agents::lines::JsonLines;
use crate::ledger::stored::evidence::AgentState;

/// GitHub Copilot CLI, as [`Agent`].
#[derive(Debug)]
pub struct Copilot;

impl Agent for Copilot {
    fn about(&self) -> &'static About {
        &About {
            provider: Provider::Copilot,
            title: "GitHub Copilot CLI",
            verified: Verified::FormatFromSource,
            unrecorded_calls: None,
            // Its exporter's chat spans keep reasoning where the model reports
            // it; no cache writes, no cost, no limit notice Bee reads.
            records: Records {
                time_spans: false,
                limit_notices: false,
                reasoning: true,
                cache_writes: false,
                own_cost: false,
            },
        }
    }

    /// The file `COPILOT_OTEL_FILE_EXPORTER_PATH` names, and `otel/` of
    /// `COPILOT_HOME` (by default `~/.copilot`).
    fn record_dirs(&self, env: Env<'_>) -> Vec<PathBuf> {
        let exporter = env("COPILOT_OTEL_FILE_EXPORTER_PATH").map(PathBuf::from);
        let home = env_or_home(env, "COPILOT_HOME", ".copilot").map(|dir| dir.join("otel"));
        exporter.into_iter().chain(home).collect()
    }

    fn file_reader(&self, path: &Path, state: &AgentState) -> Box<dyn FileReader> {
        Box::new(JsonLines::<otel::Spans>::new(path, state))
    }
}
