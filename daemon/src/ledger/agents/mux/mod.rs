//! Mux (Coder's agent multiplexer, renamed xum): each workspace's usage
//! ledger (`~/.mux/sessions/<workspace>/session-usage.json`, and
//! `~/.xum`'s), a JSON document it rewrites whole, which keeps the
//! workspace's running totals per model. `README.md` beside this file
//! describes the format.
//!
//! - [`usage`]: the reader of one ledger.

pub(crate) mod usage;

use bee_proto::ledger::Provider;
use std::path::{Path, PathBuf};

use crate::ledger::agents::agent::{About, Agent, Env, Records, Verified, WholeFileReader, under_home};
use crate::ledger::agents::whole::Documents;

/// Mux, as [`Agent`].
#[derive(Debug)]
pub struct Mux;

/// Mux's reader: each workspace's ledger read whole.
pub(crate) static LEDGERS: Documents = Documents { provider: Provider::Mux, keep: &usage::LEDGER, read: usage::read };

/// Its home directories under `HOME`: the current name first, then the
/// older ones it still opens.
const HOMES: [&str; 3] = [".xum", ".mux", ".cmux"];

impl Agent for Mux {
    fn about(&self) -> &'static About {
        &About {
            provider: Provider::Mux,
            title: "Mux",
            verified: Verified::FormatFromSource,
            unrecorded_calls: Some(
                "its calls one by one: it keeps one running total a workspace, counted here as one response",
            ),
            // A workspace's running totals keep reasoning and cache writes; no
            // call one by one, so no turn and no limit notice; its cost
            // estimates are not read.
            records: Records {
                time_spans: false,
                limit_notices: false,
                reasoning: true,
                cache_writes: true,
                own_cost: false,
            },
        }
    }

    /// `sessions/` of `XUM_ROOT` and `MUX_ROOT` where set, and of `~/.xum`,
    /// `~/.mux` and `~/.cmux` (a workspace found in two counts once).
    fn record_dirs(&self, env: Env<'_>) -> Vec<PathBuf> {
        let set = ["XUM_ROOT", "MUX_ROOT"].into_iter().filter_map(|name| env(name).map(PathBuf::from));
        let homes = HOMES.into_iter().filter_map(|home| under_home(env, home));
        let mut dirs: Vec<PathBuf> = Vec::new();
        for dir in set.chain(homes).map(|root| root.join("sessions")) {
            if !dirs.contains(&dir) {
                dirs.push(dir);
            }
        }
        dirs
    }

    fn is_record_file(&self, path: &Path) -> bool {
        path.file_name().is_some_and(|name| name == "session-usage.json")
    }

    fn whole_file(&self) -> Option<&dyn WholeFileReader> {
        Some(&LEDGERS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    #[test]
    fn its_sessions_under_every_home_it_opens() {
        let env = |name: &str| (name == "HOME").then(|| OsString::from("/h"));
        assert_eq!(
            Mux.record_dirs(&env),
            [PathBuf::from("/h/.xum/sessions"), PathBuf::from("/h/.mux/sessions"), PathBuf::from("/h/.cmux/sessions")]
        );
        let env = |name: &str| match name {
            "HOME" => Some(OsString::from("/h")),
            "MUX_ROOT" => Some(OsString::from("/h/.mux")),
            _ => None,
        };
        assert_eq!(Mux.record_dirs(&env)[0], PathBuf::from("/h/.mux/sessions"));
        assert_eq!(Mux.record_dirs(&env).len(), 3);
        assert!(Mux.record_dirs(&|_: &str| None).is_empty());
        assert!(Mux.is_record_file(Path::new("/h/.mux/sessions/ws-1/session-usage.json")));
        assert!(!Mux.is_record_file(Path::new("/h/.mux/sessions/ws-1/chat.jsonl")));
    }

    /// A ledger on disk read whole, and read again: one entry.
    #[test]
    fn a_ledger_on_disk_read_twice_is_one_entry() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sessions/ws-1/session-usage.json");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(
            &path,
            r#"{"byModel":{"openai:gpt-5.1":{"input":{"tokens":100,"cost_usd":0.1},"cached":{"tokens":0,"cost_usd":0},"cacheCreate":{"tokens":0,"cost_usd":0},"output":{"tokens":9,"cost_usd":0.01},"reasoning":{"tokens":1,"cost_usd":0.001}}},"lastRequest":{"model":"openai:gpt-5.1","usage":{},"timestamp":1796400000000},"version":1}"#,
        )
        .unwrap();
        let mut evidence = Vec::new();
        LEDGERS.read(&path, &Default::default(), &mut evidence).unwrap();
        LEDGERS.read(&path, &Default::default(), &mut evidence).unwrap();
        let writes = crate::ledger::agents::tests::responses_of(evidence);
        let s = Some;
        assert_eq!(
            crate::ledger::agents::tests::rows(Provider::Mux, &writes),
            [("ws-1".into(), s(100), s(0), s(0), s(10), s(1), s(110))]
        );
    }

    /// Millions of tiny items where the reader does not look cost nothing
    /// and hide nothing; where it looks, the document is passed over and
    /// named (offset 0, its length), never read into a tree.
    #[test]
    fn tiny_items_are_passed_over_or_named() {
        use crate::ledger::agents::tests::{noted, responses_of, tiny_items};
        let junk = tiny_items(1_500_000);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sessions/ws/session-usage.json");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let read = |document: &str| {
            std::fs::write(&path, document).unwrap();
            let mut evidence = Vec::new();
            let (_, refused) = LEDGERS.read(&path, &Default::default(), &mut evidence).unwrap();
            (responses_of(evidence).len(), refused)
        };
        let _ = noted();
        assert_eq!(read(&r#"{"byModel":{"m":{"input":{"tokens":5},"cached":{"tokens":0},"cacheCreate":{"tokens":0},"output":{"tokens":1},"reasoning":{"tokens":0}}},"lastRequest":{"timestamp":1796400000000},"tokenStatsCache":{"consumers":@junk@},"version":1}"#.replace("@junk@", &junk)), (1, 0));
        assert!(noted().is_empty());
        let bad = r#"{"byModel":{"m":@junk@},"version":1}"#.replace("@junk@", &junk);
        assert_eq!(read(&bad), (0, 0));
        assert_eq!(noted(), [(0, bad.len() as u64, bee_proto::ledger::SkipReason::TooComplex)]);
    }
}
