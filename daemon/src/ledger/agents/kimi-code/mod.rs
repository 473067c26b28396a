//! Kimi Code (Moonshot's successor to the Kimi CLI, a separate store):
//! each agent's wire log in a session
//! (`<home>/sessions/<work dir key>/<session>/agents/<agent>/wire.jsonl`).
//! `README.md` beside this file describes the format.
//!
//! - [`wire`]: the incremental reader.

mod wire;

use bee_proto::ledger::Provider;
use std::path::{Path, PathBuf};

use crate::ledger::agents::agent::{About, Agent, Env, FileReader, Records, Verified, under_home};
use crate::ledger::agents::lines::JsonLines;
use crate::ledger::stored::evidence::AgentState;

/// Kimi Code, as [`Agent`].
#[derive(Debug)]
pub struct KimiCode;

/// Where the Kimi desktop app runs its own Kimi Code, on macOS.
const DESKTOP_HOME: &str = "Library/Application Support/kimi-desktop/daimon-share/daimon/runtime/kimi-code/home";

impl Agent for KimiCode {
    fn about(&self) -> &'static About {
        &About {
            provider: Provider::KimiCode,
            title: "Kimi Code",
            verified: Verified::FormatFromSource,
            unrecorded_calls: None,
            // Its usage records keep cache writes; no reasoning, no cost, no
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

    /// `sessions/` of `KIMI_CODE_HOME` where it is set (the one home Kimi
    /// Code then uses); else of `~/.kimi-code` and of the desktop app's
    /// own home on macOS.
    fn record_dirs(&self, env: Env<'_>) -> Vec<PathBuf> {
        let homes: Vec<PathBuf> = match env("KIMI_CODE_HOME") {
            Some(home) => vec![PathBuf::from(home)],
            None => [".kimi-code", DESKTOP_HOME].into_iter().filter_map(|home| under_home(env, home)).collect(),
        };
        homes.into_iter().map(|home| home.join("sessions")).collect()
    }

    /// An agent's `agents/<agent>/wire.jsonl` in a session (the main
    /// agent's and each subagent's).
    fn is_record_file(&self, path: &Path) -> bool {
        path.file_name().is_some_and(|name| name == "wire.jsonl")
            && path.parent().and_then(Path::parent).and_then(Path::file_name).is_some_and(|name| name == "agents")
    }

    fn file_reader(&self, path: &Path, state: &AgentState) -> Box<dyn FileReader> {
        Box::new(JsonLines::<wire::Wire>::new(path, state))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    #[test]
    fn its_homes_and_agents_wire_logs() {
        let env = |name: &str| (name == "HOME").then(|| OsString::from("/h"));
        assert_eq!(
            KimiCode.record_dirs(&env),
            [PathBuf::from("/h/.kimi-code/sessions"), PathBuf::from(format!("/h/{DESKTOP_HOME}/sessions"))]
        );
        let env = |name: &str| match name {
            "HOME" => Some(OsString::from("/h")),
            "KIMI_CODE_HOME" => Some(OsString::from("/k")),
            _ => None,
        };
        assert_eq!(KimiCode.record_dirs(&env), [PathBuf::from("/k/sessions")]);
        assert!(KimiCode.record_dirs(&|_: &str| None).is_empty());
        let session = "/h/.kimi-code/sessions/wd_app_0123456789ab/session_019f0000-0000-7000-8000-000000000001";
        assert!(KimiCode.is_record_file(Path::new(&format!("{session}/agents/main/wire.jsonl"))));
        assert!(KimiCode.is_record_file(Path::new(&format!("{session}/agents/agent-0/wire.jsonl"))));
        assert!(!KimiCode.is_record_file(Path::new(&format!("{session}/wire.jsonl"))), "a session-level log");
        assert!(!KimiCode.is_record_file(Path::new(&format!("{session}/state.json"))));
        assert!(!KimiCode.is_record_file(Path::new("/h/.kimi/sessions/2b9f/5e1c/wire.jsonl")), "the Kimi CLI's");
    }
}
