//! Gemini CLI: its chat logs (`<home>/.gemini/tmp/<project>/chats/
//! session-*.jsonl`, one per session), and its local telemetry file where
//! its user turned one on (the calls its chats leave out). `README.md`
//! beside this file describes both as observed from the real CLI.
//!
//! - [`chat`]: the incremental reader of a chat log.
//! - [`telemetry`]: the incremental reader of the telemetry file.
//! - here: where they are.

mod chat;
mod telemetry;

use bee_proto::ledger::Provider;
use std::path::{Path, PathBuf};

use crate::ledger::agents::agent::{About, Agent, Env, FileReader, Records, Verified};
use crate::ledger::agents::lines::JsonLines;
use crate::ledger::stored::evidence::AgentState;

/// Gemini CLI, as [`Agent`].
#[derive(Debug)]
pub struct Gemini;

impl Agent for Gemini {
    fn about(&self) -> &'static About {
        &About {
            provider: Provider::Gemini,
            title: "Gemini CLI",
            verified: Verified::RealCli("0.61.0"),
            unrecorded_calls: Some(
                "the routing call before each prompt and its other utility and sub-agent calls while its telemetry \
                 file (`telemetry.outfile`) is off, and a streamed attempt it retried",
            ),
            // Its chats keep responses with their thoughts; no turn Bee times, no
            // limit notice (a refused request leaves no line), no cache
            // writes, no cost.
            records: Records {
                time_spans: false,
                limit_notices: false,
                reasoning: true,
                cache_writes: false,
                own_cost: false,
            },
        }
    }

    /// `.gemini/tmp` of `GEMINI_CLI_HOME`, else of `HOME`, as the CLI finds
    /// it; and the telemetry file `GEMINI_TELEMETRY_OUTFILE` names, and the
    /// one its user settings name (`telemetry.outfile`), each when it is an
    /// absolute path (the CLI opens a relative one in the folder it runs
    /// in, which Bee cannot know). Each is a record file itself, never a
    /// directory to walk.
    fn record_dirs(&self, env: Env<'_>) -> Vec<PathBuf> {
        let Some(gemini) =
            env("GEMINI_CLI_HOME").or_else(|| env("HOME")).map(|home| PathBuf::from(home).join(".gemini"))
        else {
            return Vec::new();
        };
        let named = env("GEMINI_TELEMETRY_OUTFILE").map(PathBuf::from);
        let configured = telemetry_outfile(&gemini.join("settings.json"));
        let mut dirs = vec![gemini.join("tmp")];
        for file in [named, configured].into_iter().flatten() {
            if file.is_absolute() && !dirs.contains(&file) {
                dirs.push(file);
            }
        }
        dirs
    }

    /// `chats/session-*.jsonl`: the CLI's other files there (logs, shell
    /// history, plans) are no chats.
    fn is_record_file(&self, path: &Path) -> bool {
        let in_chats = path.parent().and_then(Path::file_name).is_some_and(|dir| dir == "chats");
        let name = path.file_name().and_then(|name| name.to_str()).unwrap_or("");
        in_chats && name.starts_with("session-") && name.ends_with(".jsonl")
    }

    /// A chat log is found by its name; any other file of its is one
    /// [`Gemini::record_dirs`] named, its telemetry file.
    fn file_reader(&self, path: &Path, state: &AgentState) -> Box<dyn FileReader> {
        if self.is_record_file(path) {
            Box::new(JsonLines::<chat::Chat>::new(path, state))
        } else {
            Box::new(telemetry::Telemetry::new())
        }
    }
}

/// Longest settings file read: a few dozen settings are a few kilobytes.
const MAX_SETTINGS_BYTES: u64 = 1024 * 1024;

/// The telemetry file a `settings.json` names (`telemetry.outfile`, read
/// whether or not telemetry is on now: a file written before holds calls
/// all the same), when it is plain JSON (the CLI also takes comments:
/// such a file is not read, and `GEMINI_TELEMETRY_OUTFILE` still names the
/// file to Bee). A path with a `$` is left alone: the CLI expands it from
/// its own environment, which Bee does not see.
fn telemetry_outfile(settings: &Path) -> Option<PathBuf> {
    #[derive(serde::Deserialize)]
    struct Settings {
        telemetry: Option<Telemetry>,
    }
    #[derive(serde::Deserialize)]
    struct Telemetry {
        outfile: Option<String>,
    }
    let text = crate::ledger::agents::agent::settings_text(settings, MAX_SETTINGS_BYTES)?;
    let telemetry = serde_json::from_str::<Settings>(&text).ok()?.telemetry?;
    telemetry.outfile.filter(|outfile| !outfile.is_empty() && !outfile.contains('$')).map(PathBuf::from)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    /// The telemetry file is read where `GEMINI_TELEMETRY_OUTFILE` or the
    /// user settings name it by an absolute path, each once; a relative
    /// path, one with a variable, settings that are no plain JSON or past
    /// the bound, and no home name nothing.
    #[test]
    fn its_telemetry_file_is_where_its_settings_say() {
        let home = tempfile::tempdir().unwrap();
        let gemini = home.path().join(".gemini");
        std::fs::create_dir_all(&gemini).unwrap();
        let settings = gemini.join("settings.json");
        let dirs = |named: Option<&str>| {
            let (home, named) = (home.path().as_os_str().to_owned(), named.map(OsString::from));
            Gemini.record_dirs(&move |name: &str| match name {
                "HOME" => Some(home.clone()),
                "GEMINI_TELEMETRY_OUTFILE" => named.clone(),
                _ => None,
            })
        };
        let tmp = gemini.join("tmp");
        assert_eq!(dirs(None), std::slice::from_ref(&tmp), "no telemetry file named");
        assert_eq!(dirs(Some("/t/env.log")), [tmp.clone(), PathBuf::from("/t/env.log")]);
        assert_eq!(dirs(Some("relative.log")), std::slice::from_ref(&tmp), "opened where the CLI runs: unknown to Bee");
        std::fs::write(&settings, r#"{"telemetry": {"enabled": true, "target": "local", "outfile": "/t/set.log"}}"#)
            .unwrap();
        assert_eq!(dirs(None), [tmp.clone(), PathBuf::from("/t/set.log")]);
        assert_eq!(dirs(Some("/t/set.log")), [tmp.clone(), PathBuf::from("/t/set.log")], "one file named twice");
        for unread in [
            &br#"{"telemetry": {"outfile": "$HOME/t.log"}}"#[..],
            br#"{"telemetry": {"outfile": ""}}"#,
            br#"{"telemetry": {"outfile": 7}}"#,
            br#"{"telemetry": true}"#,
            b"// mine\n{\"telemetry\": {\"outfile\": \"/t/set.log\"}}",
            b"\xff",
        ] {
            std::fs::write(&settings, unread).unwrap();
            assert_eq!(dirs(None), std::slice::from_ref(&tmp), "{}", String::from_utf8_lossy(unread));
        }
        let mut long = br#"{"telemetry": {"outfile": "/t/set.log"}, "pad": ""#.to_vec();
        long.extend(std::iter::repeat_n(b'x', MAX_SETTINGS_BYTES as usize));
        long.extend_from_slice(b"\"}");
        std::fs::write(&settings, long).unwrap();
        assert_eq!(dirs(None), [tmp], "past the bound: not read");
        assert!(Gemini.record_dirs(&|_: &str| None).is_empty());
        assert!(!Gemini.is_record_file(Path::new("/t/set.log")), "named, never found by name");
    }
}
