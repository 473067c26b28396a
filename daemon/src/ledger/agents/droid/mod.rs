//! Droid (Factory's CLI): each session's settings document
//! (`~/.factory/sessions/…/<session>.settings.json`), which keeps the
//! session's running token total. `README.md` beside this file describes
//! the format.
//!
//! - [`settings`]: the reader of one settings document.

pub(crate) mod settings;

use bee_proto::ledger::Provider;
use std::path::{Path, PathBuf};

use crate::ledger::agents::agent::{About, Agent, Env, Records, Verified, WholeFileReader, under_home};
use crate::ledger::agents::whole::Documents;

/// Droid, as [`Agent`].
#[derive(Debug)]
pub struct Droid;

/// Droid's reader: each settings document read whole.
pub(crate) static SETTINGS: Documents =
    Documents { provider: Provider::Droid, keep: &settings::SETTINGS, read: settings::read };

impl Agent for Droid {
    fn about(&self) -> &'static About {
        &About {
            provider: Provider::Droid,
            title: "Droid",
            verified: Verified::RealCli("0.225.2"),
            unrecorded_calls: Some(
                "its calls one by one: it keeps one running total a session, counted here as one response",
            ),
            // A session's running total keeps thinking and cache writes; no
            // call is kept one by one, so no turn, no limit notice, no cost.
            records: Records {
                time_spans: false,
                limit_notices: false,
                reasoning: true,
                cache_writes: true,
                own_cost: false,
            },
        }
    }

    /// `sessions/` of `~/.factory`.
    fn record_dirs(&self, env: Env<'_>) -> Vec<PathBuf> {
        under_home(env, ".factory/sessions").into_iter().collect()
    }

    fn is_record_file(&self, path: &Path) -> bool {
        path.file_name().and_then(|name| name.to_str()).is_some_and(|name| name.ends_with(".settings.json"))
    }

    fn whole_file(&self) -> Option<&dyn WholeFileReader> {
        Some(&SETTINGS)
    }
}
