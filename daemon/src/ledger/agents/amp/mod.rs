//! Amp: its threads (`$XDG_DATA_HOME/amp/threads/T-<id>.json`), JSON
//! documents it rewrites whole as a thread goes on. `README.md` beside this
//! file describes the format.
//!
//! - [`thread`]: the reader of one thread.

pub(crate) mod thread;

use bee_proto::ledger::Provider;
use std::path::{Path, PathBuf};

use crate::ledger::agents::agent::{About, Agent, Env, Records, Verified, WholeFileReader, xdg_data};
use crate::ledger::agents::whole::Documents;

/// Amp, as [`Agent`].
#[derive(Debug)]
pub struct Amp;

/// Amp's reader: each thread document read whole.
pub(crate) static THREADS: Documents = Documents { provider: Provider::Amp, keep: &thread::THREAD, read: thread::read };

impl Agent for Amp {
    fn about(&self) -> &'static About {
        &About {
            provider: Provider::Amp,
            title: "Amp",
            verified: Verified::FormatFromSource,
            unrecorded_calls: None,
            // Its threads keep cache writes; no reasoning, no cost, no limit
            // notice, no turn Bee times.
            records: Records {
                time_spans: false,
                limit_notices: false,
                reasoning: false,
                cache_writes: true,
                own_cost: false,
            },
        }
    }

    /// `threads/` of the `amp/` directory of `XDG_DATA_HOME` (by default
    /// `~/.local/share`).
    fn record_dirs(&self, env: Env<'_>) -> Vec<PathBuf> {
        xdg_data(env, "amp").map(|dir| dir.join("threads")).into_iter().collect()
    }

    fn is_record_file(&self, path: &Path) -> bool {
        let name = path.file_name().and_then(|name| name.to_str()).unwrap_or("");
        name.starts_with("T-") && name.ends_with(".json")
    }

    fn whole_file(&self) -> Option<&dyn WholeFileReader> {
        Some(&THREADS)
    }
}
