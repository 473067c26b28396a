//! `agy` (the Antigravity CLI): one SQLite database a conversation
//! (`~/.gemini/antigravity-cli/conversations/<conversation>.db`), whose
//! `gen_metadata` table keeps each generation's usage as a protobuf with
//! no published schema. `README.md` beside this file describes the format.
//!
//! - [`conversation`]: the reader of one generation row;
//! - [`protobuf`]: the few protobuf fields it reads.

pub(crate) mod conversation;
mod protobuf;

use bee_proto::ledger::Provider;
use std::path::{Path, PathBuf};

use crate::ledger::agents::agent::{About, Agent, Env, Records, Verified, WholeFileReader, under_home};
use crate::ledger::agents::whole::Rows;

pub use conversation::{Generation, read_generation};

/// agy, as [`Agent`].
#[derive(Debug)]
pub struct Agy;

/// agy's reader: every generation row of a conversation, whenever its
/// database changes.
static GENERATIONS: Rows = Rows { provider: Provider::Agy, query: conversation::QUERY, read: conversation::read };

impl Agent for Agy {
    fn about(&self) -> &'static About {
        &About {
            provider: Provider::Agy,
            title: "Antigravity CLI (agy)",
            verified: Verified::FormatFromSource,
            unrecorded_calls: None,
            // Its conversation databases keep reasoning and both caches; a
            // row's time is its generation's, no span, so no turn; no limit
            // notice or cost.
            records: Records {
                time_spans: false,
                limit_notices: false,
                reasoning: true,
                cache_writes: true,
                own_cost: false,
            },
        }
    }

    /// `conversations/` of `~/.gemini/antigravity-cli` (agy reads no
    /// variable that moves it).
    fn record_dirs(&self, env: Env<'_>) -> Vec<PathBuf> {
        under_home(env, ".gemini/antigravity-cli/conversations").into_iter().collect()
    }

    fn is_record_file(&self, path: &Path) -> bool {
        path.extension().is_some_and(|extension| extension == "db")
    }

    fn whole_file(&self) -> Option<&dyn WholeFileReader> {
        Some(&GENERATIONS)
    }
}
