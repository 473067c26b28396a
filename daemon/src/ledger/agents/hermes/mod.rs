//! Hermes Agent (Nous Research): its state database
//! (`$HERMES_HOME/state.db`, by default `~/.hermes/state.db`), which keeps
//! running token totals per session, model and task. `README.md` beside
//! this file describes the format.
//!
//! - [`state`]: the readers of one row of either table that keeps them.

pub(crate) mod state;

use bee_proto::ledger::Provider;
use std::path::{Path, PathBuf};

use crate::ledger::agents::agent::{About, Agent, Env, Records, Verified, WholeFileReader, env_or_home};
use crate::ledger::agents::whole::{Rows, has_table};
use crate::ledger::stored::evidence::{AgentState, Evidence};

/// Hermes Agent, as [`Agent`].
#[derive(Debug)]
pub struct Hermes;

/// Every row of totals per session, model and task (Hermes 0.19 on).
static BY_MODEL: Rows = Rows { provider: Provider::Hermes, query: state::BY_MODEL_QUERY, read: state::read_by_model };

/// Every session row, of a database that keeps no totals per model.
static SESSIONS: Rows = Rows { provider: Provider::Hermes, query: state::SESSIONS_QUERY, read: state::read_session };

/// Hermes's reader: whichever table the database keeps its totals in,
/// read whole whenever the database changes.
struct Totals;

impl WholeFileReader for Totals {
    fn read(&self, path: &Path, state: &AgentState, out: &mut Vec<Evidence>) -> std::io::Result<(AgentState, u64)> {
        if has_table(path, state::BY_MODEL_TABLE)? {
            BY_MODEL.read(path, state, out)
        } else {
            SESSIONS.read(path, state, out)
        }
    }
}

impl Agent for Hermes {
    fn about(&self) -> &'static About {
        &About {
            provider: Provider::Hermes,
            title: "Hermes Agent",
            verified: Verified::RealCli("0.19.0"),
            unrecorded_calls: Some(
                "its calls one by one: it keeps one running total a session, model and task, counted here as one response",
            ),
            // A session's running totals keep reasoning and cache writes; no
            // call one by one, so no turn and no limit notice. Its cost
            // estimate is a running sum to which a call it could not price
            // adds 0, under the status of its last call: not a cost that can
            // be told whole, so not read.
            records: Records {
                time_spans: false,
                limit_notices: false,
                reasoning: true,
                cache_writes: true,
                own_cost: false,
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
        Some(&Totals)
    }
}
