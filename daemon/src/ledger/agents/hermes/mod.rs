//! Hermes Agent (Nous Research): its state database
//! (`$HERMES_HOME/state.db`, by default `~/.hermes/state.db`), which keeps
//! each session's running token totals. `README.md` beside this file
//! describes the format.
//!
//! - [`state`]: the reader of one session row.

pub(crate) mod state;

use bee_proto::ledger::Provider;
use std::path::{Path, PathBuf};

use crate::ledger::agents::agent::{About, Agent, Env, Records, Verified, WholeFileReader, env_or_home};
use crate::ledger::agents::whole::Rows;

/// Hermes Agent, as [`Agent`].
#[derive(Debug)]
pub struct Hermes;

/// Hermes's reader: every session row, whenever the database changes.
static SESSIONS: Rows = Rows { provider: Provider::Hermes, query: state::QUERY, read: state::read };

impl Agent for Hermes {
    fn about(&self) -> &'static About {
        &About {
            provider: Provider::Hermes,
            title: "Hermes Agent",
            verified: Verified::FormatFromSource,
            unrecorded_calls: Some(
                "its calls one by one: it keeps one running total a session, counted here as one response",
            ),
            // A session's running totals keep reasoning and cache writes, and
            // its own cost estimates; no call one by one, so no turn and no
            // limit notice.
            records: Records {
                time_spans: false,
                limit_notices: false,
                reasoning: true,
                cache_writes: true,
                own_cost: true,
            },
        }
    }

    /// The database `HERMES_HOME` holds, else `~/.hermes/state.db` (the
    /// rest of its home is the agent's own state and never walked).
    fn record_dirs(&self, env: Env<'_>) -> Vec<PathBuf> {
        env_or_home(env, "HERMES_HOME", ".hermes").map(|home| home.join("state.db")).into_iter().collect()
    }

    fn is_record_file(&self, path: &Path) -> bool {
        path.file_name().is_some_and(|name| name == "state.db")
    }

    fn whole_file(&self) -> Option<&dyn WholeFileReader> {
        Some(&SESSIONS)
    }
}
