//! Goose (Block's agent): its sessions database
//! (`$GOOSE_PATH_ROOT/data/sessions/sessions.db`, by default
//! `~/.local/share/goose/sessions/sessions.db`), which keeps each
//! session's running token totals. `README.md` beside this file describes
//! the format.
//!
//! - [`sessions`]: the reader of one session row.

pub(crate) mod sessions;

use bee_proto::ledger::Provider;
use std::path::{Path, PathBuf};

use crate::ledger::agents::agent::{About, Agent, Env, Records, Verified, WholeFileReader, xdg_data};
use crate::ledger::agents::whole::Rows;

/// Goose, as [`Agent`].
#[derive(Debug)]
pub struct Goose;

/// Goose's reader: every session row, whenever the database changes.
static SESSIONS: Rows = Rows { provider: Provider::Goose, query: sessions::QUERY, read: sessions::read };

impl Agent for Goose {
    fn about(&self) -> &'static About {
        &About {
            provider: Provider::Goose,
            title: "Goose",
            verified: Verified::FormatFromSource,
            unrecorded_calls: Some(
                "its calls one by one: it keeps one running total a session, counted here as one response",
            ),
            // A session's running totals of input and output only: no turn,
            // no limit notice, no reasoning, no cache counter, no cost.
            records: Records {
                time_spans: false,
                limit_notices: false,
                reasoning: false,
                cache_writes: false,
                own_cost: false,
            },
        }
    }

    /// `data/sessions/` of `GOOSE_PATH_ROOT`, else the `goose/sessions/`
    /// directory of `XDG_DATA_HOME` (by default `~/.local/share`).
    fn record_dirs(&self, env: Env<'_>) -> Vec<PathBuf> {
        let dir = match env("GOOSE_PATH_ROOT") {
            Some(root) => Some(PathBuf::from(root).join("data").join("sessions")),
            None => xdg_data(env, "goose").map(|dir| dir.join("sessions")),
        };
        dir.into_iter().collect()
    }

    fn is_record_file(&self, path: &Path) -> bool {
        path.file_name().is_some_and(|name| name == "sessions.db")
    }

    fn whole_file(&self) -> Option<&dyn WholeFileReader> {
        Some(&SESSIONS)
    }
}
