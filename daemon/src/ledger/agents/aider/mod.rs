//! Aider (aider-chat, the terminal pair programmer): its analytics log, a
//! JSON line a event, which Aider writes only where its user asks it to
//! (`--analytics-log FILE`, `analytics-log:` in `~/.aider.conf.yml`, or
//! `AIDER_ANALYTICS_LOG`). `README.md` beside this file describes the
//! format and why its token counts are not read.
//!
//! - [`analytics`]: the incremental reader of the log.
//! - here: where the log is, from the two places Bee can see it named.

mod analytics;

use bee_proto::ledger::Provider;
use std::path::{Path, PathBuf};

use crate::ledger::agents::agent::{About, Agent, Env, FileReader, Records, Verified, under_home};
use crate::ledger::stored::evidence::AgentState;

/// Aider, as [`Agent`].
#[derive(Debug)]
pub struct Aider;

/// Longest `~/.aider.conf.yml` read: a settings file of a few dozen keys
/// is a few kilobytes; a larger one is not a settings file Bee reads.
const MAX_CONFIG_BYTES: u64 = 256 * 1024;

impl Agent for Aider {
    fn about(&self) -> &'static About {
        &About {
            provider: Provider::Aider,
            title: "Aider",
            verified: Verified::RealCli("0.86.2"),
            unrecorded_calls: Some(
                "every call's token counts (streamed replies log Aider's own estimate, indistinguishable from \
                 counts, so each reply's figure is shown apart as its estimate, never as a count), its weak \
                 model's commit-message and chat-summary calls, and calls that failed or were interrupted",
            ),
            // Its `message_send` events keep no cache split, no reasoning,
            // no limit notice and no turn Bee could time; their cost is
            // Aider's price of its own estimate when streaming, so not read.
            records: Records {
                time_spans: false,
                limit_notices: false,
                reasoning: false,
                cache_writes: false,
                own_cost: false,
            },
        }
    }

    /// The analytics log `AIDER_ANALYTICS_LOG` names, and the one
    /// `~/.aider.conf.yml` names, when each is an absolute path (Aider
    /// opens a relative one in whatever directory it runs in, which Bee
    /// cannot know). Each is a record file itself, not a directory to walk:
    /// a log kept in `HOME` must not make Bee walk all of `HOME`. No log
    /// named, nothing to read: Aider keeps no record unless asked to.
    fn record_dirs(&self, env: Env<'_>) -> Vec<PathBuf> {
        let mut logs: Vec<PathBuf> = Vec::new();
        let named = env("AIDER_ANALYTICS_LOG").map(PathBuf::from);
        let configured = under_home(env, ".aider.conf.yml").and_then(|config| configured_log(&config));
        for log in [named, configured].into_iter().flatten() {
            if log.is_absolute() && !logs.contains(&log) {
                logs.push(log);
            }
        }
        logs
    }

    /// Its log is named, not found by its name: a record file is one
    /// [`Aider::record_dirs`] names, which ingestion reads as it is.
    fn is_record_file(&self, _path: &Path) -> bool {
        false
    }

    fn file_reader(&self, _path: &Path, state: &AgentState) -> Box<dyn FileReader> {
        Box::new(analytics::Analytics::new(state))
    }
}

/// What Bee reads of an `.aider.conf.yml`: the one top-level key naming
/// the log (every other key is Aider's business).
#[derive(serde::Deserialize)]
struct Settings {
    #[serde(rename = "analytics-log")]
    analytics_log: Option<String>,
}

/// The log `config` (an `.aider.conf.yml`) names with its top-level
/// `analytics-log:` key, as a YAML parser reads it. A file past
/// [`MAX_CONFIG_BYTES`], not UTF-8 (which Aider itself refuses), not YAML,
/// or whose key is no string (or is there twice) names none.
fn configured_log(config: &Path) -> Option<PathBuf> {
    let text = crate::ledger::agents::agent::settings_text(config, MAX_CONFIG_BYTES)?;
    let settings: Settings = yaml_serde::from_str(&text).ok()?;
    settings.analytics_log.filter(|log| !log.is_empty()).map(PathBuf::from)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    fn env_of(home: &Path, log: Option<&str>) -> impl Fn(&str) -> Option<OsString> {
        let home = home.as_os_str().to_owned();
        let log = log.map(OsString::from);
        move |name: &str| match name {
            "HOME" => Some(home.clone()),
            "AIDER_ANALYTICS_LOG" => log.clone(),
            _ => None,
        }
    }

    /// The log the variable names, the one the home's settings name (once
    /// when both name it), and nothing when neither does or the path is
    /// relative.
    #[test]
    fn its_log_is_where_its_settings_say() {
        let home = tempfile::tempdir().unwrap();
        let env = env_of(home.path(), None);
        assert!(Aider.record_dirs(&env).is_empty(), "no log asked for, nothing to read");
        let env = env_of(home.path(), Some("/var/log/aider.jsonl"));
        assert_eq!(Aider.record_dirs(&env), [PathBuf::from("/var/log/aider.jsonl")]);
        let env = env_of(home.path(), Some("relative.jsonl"));
        assert!(Aider.record_dirs(&env).is_empty(), "opened where Aider runs: unknown to Bee");

        let config = home.path().join(".aider.conf.yml");
        std::fs::write(&config, "model: gpt-4o\n# analytics-log: /old.jsonl\nanalytics-log: /h/aider.jsonl # mine\n")
            .unwrap();
        let env = env_of(home.path(), None);
        assert_eq!(Aider.record_dirs(&env), [PathBuf::from("/h/aider.jsonl")]);
        let env = env_of(home.path(), Some("/h/aider.jsonl"));
        assert_eq!(Aider.record_dirs(&env), [PathBuf::from("/h/aider.jsonl")], "one log named twice");
        let env = env_of(home.path(), Some("/v/a.jsonl"));
        assert_eq!(Aider.record_dirs(&env), [PathBuf::from("/v/a.jsonl"), PathBuf::from("/h/aider.jsonl")]);
        assert!(Aider.record_dirs(&|_: &str| None).is_empty());
        assert!(!Aider.is_record_file(Path::new("/h/aider.jsonl")), "named, never found by name");
    }

    /// The one key read as a YAML parser reads it, or not at all.
    #[test]
    fn the_settings_key_is_read_as_yaml() {
        let home = tempfile::tempdir().unwrap();
        let config = home.path().join(".aider.conf.yml");
        let read = |text: &[u8]| {
            std::fs::write(&config, text).unwrap();
            configured_log(&config)
        };
        let path = |p: &str| Some(PathBuf::from(p));
        assert_eq!(read(b"analytics-log: /a b/log.jsonl\n"), path("/a b/log.jsonl"));
        assert_eq!(read(b"analytics-log: \"/q/log.jsonl\"  # quoted\n"), path("/q/log.jsonl"));
        assert_eq!(read(b"analytics-log: '/s/log#1.jsonl'\n"), path("/s/log#1.jsonl"));
        assert_eq!(read(b"analytics-log: '/it''s.jsonl'\n"), path("/it's.jsonl"));
        assert_eq!(read(b"analytics-log: /crlf.jsonl\r\n"), path("/crlf.jsonl"));
        assert_eq!(read(b"model: gpt-4o\nanalytics: true\nanalytics-log: /m.jsonl\n"), path("/m.jsonl"));
        for unread in [
            &b"analytics-log:\n"[..],
            b"analytics-log: ~\n",
            b"analytics-log: null\n",
            b"analytics-log: \"/unclosed\n",
            b"analytics-log: [/a]\n",
            b"analytics-log: /one\nanalytics-log: /two\n",
            b"nested:\n  analytics-log: /nested.jsonl\n",
            b"analytics: true\n",
            b"- a list\n",
            b"",
        ] {
            assert_eq!(read(unread), None, "{}", String::from_utf8_lossy(unread));
        }
        assert_eq!(read(b"analytics-log: /\xff/log.jsonl\n"), None, "not UTF-8: Aider refuses it too");
        let mut long = vec![b'#'; MAX_CONFIG_BYTES as usize];
        long.extend_from_slice(b"\nanalytics-log: /past-the-bound.jsonl\n");
        assert_eq!(read(&long), None, "past the bound: not read");
        assert_eq!(configured_log(&home.path().join("missing.yml")), None);
    }
}
