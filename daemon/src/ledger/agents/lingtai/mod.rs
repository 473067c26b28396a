//! LingTai (its TUI and the `lingtai` agent kernel it runs): each agent's
//! token ledger (`<home>/<agent>/logs/token_ledger.jsonl`), a JSON line a
//! model call. `README.md` beside this file describes the format.
//!
//! - [`ledger`]: the incremental reader of an agent's ledger.
//! - here: the homes that hold agents, as LingTai's readers find them.

mod ledger;

use bee_proto::ledger::Provider;
use serde_json::Value;
use std::io::Read;
use std::path::{Path, PathBuf};

use crate::ledger::agents::agent::{About, Agent, Env, FileReader, Records, Verified, under_home};
use crate::ledger::stored::evidence::AgentState;

/// LingTai, as [`Agent`].
#[derive(Debug)]
pub struct LingTai;

/// Longest project registry read: a line a project, a few hundred bytes
/// each; a larger file is not a registry Bee reads.
const MAX_REGISTRY_BYTES: u64 = 1 << 20;

impl Agent for LingTai {
    fn about(&self) -> &'static About {
        &About {
            provider: Provider::LingTai,
            title: "LingTai",
            verified: Verified::FormatFromSource,
            unrecorded_calls: None,
            // Its ledger keeps cached input and thinking for every call; no
            // cache writes, no cost, no limit notice, no turn Bee times.
            records: Records {
                time_spans: false,
                limit_notices: false,
                reasoning: true,
                cache_writes: false,
                own_cost: false,
            },
        }
    }

    /// The homes `LINGTAI_HOME` lists, else those `LINGTAI_TUI_HOME`
    /// lists (`~` the home); else `~/.lingtai` and the `.lingtai` of every
    /// project the TUI registered (`~/.lingtai-tui/registry.jsonl`).
    fn record_dirs(&self, env: Env<'_>) -> Vec<PathBuf> {
        let listed = ["LINGTAI_HOME", "LINGTAI_TUI_HOME"].into_iter().find_map(env);
        let mut homes: Vec<PathBuf> = listed
            .map(|list| {
                std::env::split_paths(&list)
                    .filter(|home| !home.as_os_str().is_empty())
                    .filter_map(|home| with_home(env, home))
                    .collect()
            })
            .unwrap_or_default();
        if homes.is_empty() {
            homes.extend(under_home(env, ".lingtai"));
            if let Some(registry) = under_home(env, ".lingtai-tui/registry.jsonl") {
                homes.extend(registered_projects(&registry).into_iter().map(|project| project.join(".lingtai")));
            }
        }
        let mut distinct: Vec<PathBuf> = Vec::new();
        for home in homes {
            if !distinct.contains(&home) {
                distinct.push(home);
            }
        }
        distinct
    }

    /// An agent's `logs/token_ledger.jsonl`; not a daemon's
    /// (`<agent>/daemons/<run>/logs/…`), whose calls its parent's ledger
    /// holds too.
    fn is_record_file(&self, path: &Path) -> bool {
        let logs = path.parent();
        let agent = logs.and_then(Path::parent);
        let is_ledger = path.file_name().is_some_and(|name| name == "token_ledger.jsonl")
            && logs.and_then(Path::file_name).is_some_and(|name| name == "logs");
        let of_daemon = agent.and_then(Path::parent).and_then(Path::file_name).is_some_and(|name| name == "daemons");
        is_ledger && agent.is_some() && !of_daemon
    }

    fn file_reader(&self, path: &Path, state: &AgentState) -> Box<dyn FileReader> {
        Box::new(ledger::Ledger::new(path, state))
    }
}

/// `path` with a leading `~` read as `HOME`, as LingTai's readers expand it.
fn with_home(env: Env<'_>, path: PathBuf) -> Option<PathBuf> {
    match path.strip_prefix("~") {
        Ok(rest) => under_home(env, "").map(|home| home.join(rest)),
        Err(_) => Some(path),
    }
}

/// The project directories the TUI's registry lists (a JSON line each,
/// `{"path", "brief_hash"}`), those that are absolute; nothing when there
/// is no registry or it is past its bound. A broken line is passed over,
/// as the TUI passes it over.
fn registered_projects(registry: &Path) -> Vec<PathBuf> {
    let mut bytes = Vec::new();
    let read = std::fs::File::open(registry)
        .and_then(|file| file.take(MAX_REGISTRY_BYTES + 1).read_to_end(&mut bytes))
        .is_ok_and(|read| read as u64 <= MAX_REGISTRY_BYTES);
    if !read {
        return Vec::new();
    }
    bytes
        .split(|&b| b == b'\n')
        .filter_map(|line| serde_json::from_slice::<Value>(line).ok())
        .filter_map(|entry| entry.get("path").and_then(Value::as_str).map(PathBuf::from))
        .filter(|project| project.is_absolute())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    #[test]
    fn its_homes_listed_or_registered() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().to_path_buf();
        let registered = [
            r#"{"path":"/work/app","brief_hash":"3f9a"}"#,
            "{\"path\": [broken",
            r#"{"path":"relative/app"}"#,
            &format!(r#"{{"path":{}}}"#, serde_json::to_string(&home.to_str().unwrap()).unwrap()),
            r#"{"path":"/work/app","brief_hash":"3f9a"}"#,
        ]
        .join("\n");
        std::fs::create_dir_all(home.join(".lingtai-tui")).unwrap();
        std::fs::write(home.join(".lingtai-tui/registry.jsonl"), registered).unwrap();
        let env = |name: &str| (name == "HOME").then(|| home.clone().into_os_string());
        assert_eq!(
            LingTai.record_dirs(&env),
            [home.join(".lingtai"), PathBuf::from("/work/app/.lingtai")],
            "its home, then each project registered once"
        );
        let env = |name: &str| match name {
            "HOME" => Some(OsString::from("/h")),
            "LINGTAI_TUI_HOME" => Some(OsString::from("/t")),
            "LINGTAI_HOME" => Some(OsString::from("~/one:/two/.lingtai::/two/.lingtai")),
            _ => None,
        };
        assert_eq!(LingTai.record_dirs(&env), [PathBuf::from("/h/one"), PathBuf::from("/two/.lingtai")]);
        let env = |name: &str| (name == "LINGTAI_TUI_HOME").then(|| OsString::from("/t"));
        assert_eq!(LingTai.record_dirs(&env), [PathBuf::from("/t")], "no registry read for listed homes");
        assert!(LingTai.record_dirs(&|_: &str| None).is_empty());
        let oversized = tempfile::tempdir().unwrap();
        std::fs::write(oversized.path().join("registry.jsonl"), " ".repeat(MAX_REGISTRY_BYTES as usize + 1)).unwrap();
        assert!(registered_projects(&oversized.path().join("registry.jsonl")).is_empty());

        assert!(LingTai.is_record_file(Path::new("/work/app/.lingtai/orchestrator/logs/token_ledger.jsonl")));
        assert!(
            !LingTai
                .is_record_file(Path::new("/work/app/.lingtai/orchestrator/daemons/run-7f2a/logs/token_ledger.jsonl"))
        );
        assert!(!LingTai.is_record_file(Path::new("/work/app/.lingtai/orchestrator/logs/events.jsonl")));
        assert!(!LingTai.is_record_file(Path::new("/work/app/.lingtai/orchestrator/token_ledger.jsonl")));
    }
}
