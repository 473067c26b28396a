//! Continue's CLI (`cn`, npm `@continuedev/cli`): its sessions
//! (`~/.continue/sessions/<id>.json`), JSON documents it rewrites whole as a
//! session goes on. `README.md` beside this file describes the format as
//! observed from the real CLI.
//!
//! - [`session`]: the reader of one session.
//!
//! The folder is `continue/` (the agent's name, which the READMEs' paths
//! spell); the module is `continue_cli`, `continue` being a keyword.

pub(crate) mod session;

use bee_proto::ledger::Provider;
use std::path::{Path, PathBuf};

use crate::ledger::agents::agent::{About, Agent, Env, Records, Verified, WholeFileReader, under_home};

/// Continue's CLI, as [`Agent`].
#[derive(Debug)]
pub struct Continue;

/// The index of its sessions, beside them: no session of its own.
const INDEX: &str = "sessions.json";

impl Agent for Continue {
    fn about(&self) -> &'static About {
        &About {
            provider: Provider::Continue,
            title: "Continue",
            verified: Verified::RealCli("1.5.47"),
            unrecorded_calls: Some(
                "a compaction's summary call and the responses a compaction drops before they are read, a response with neither text nor a tool call, and one whose provider sent no usage",
            ),
            // Its messages keep cache writes (Anthropic's API) and reasoning
            // (OpenAI's); no time of its own, so no turn Bee times; no limit
            // notice; its costs are not its own figures (see the README).
            records: Records {
                time_spans: false,
                limit_notices: false,
                reasoning: true,
                cache_writes: true,
                own_cost: false,
            },
        }
    }

    /// `sessions/` of `CONTINUE_GLOBAL_DIR` where set to an absolute path,
    /// else of `~/.continue`. (The CLI resolves a relative one against the
    /// directory it runs in, which Bee cannot know.)
    fn record_dirs(&self, env: Env<'_>) -> Vec<PathBuf> {
        let global = env("CONTINUE_GLOBAL_DIR").map(PathBuf::from).filter(|dir| dir.is_absolute());
        global.or_else(|| under_home(env, ".continue")).map(|dir| dir.join("sessions")).into_iter().collect()
    }

    /// A session `<id>.json`; not the index `sessions.json`.
    fn is_record_file(&self, path: &Path) -> bool {
        let name = path.file_name().and_then(|name| name.to_str()).unwrap_or("");
        name.ends_with(".json") && name != INDEX
    }

    fn whole_file(&self) -> Option<&dyn WholeFileReader> {
        Some(&session::SESSIONS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    /// Its sessions under `CONTINUE_GLOBAL_DIR` when absolute, else under
    /// `~/.continue`; the index is no session.
    #[test]
    fn record_dirs_and_files() {
        let env = |vars: &'static [(&'static str, &'static str)]| {
            move |name: &str| vars.iter().find(|(n, _)| *n == name).map(|(_, v)| OsString::from(v))
        };
        let home = env(&[("HOME", "/home/dev")]);
        assert_eq!(Continue.record_dirs(&home), [PathBuf::from("/home/dev/.continue/sessions")]);
        let set = env(&[("HOME", "/home/dev"), ("CONTINUE_GLOBAL_DIR", "/srv/cn")]);
        assert_eq!(Continue.record_dirs(&set), [PathBuf::from("/srv/cn/sessions")]);
        let relative = env(&[("HOME", "/home/dev"), ("CONTINUE_GLOBAL_DIR", "cn-home")]);
        assert_eq!(Continue.record_dirs(&relative), [PathBuf::from("/home/dev/.continue/sessions")]);
        assert!(Continue.record_dirs(&env(&[])).is_empty());

        assert!(Continue.is_record_file(Path::new("/s/8fb36db3-bad1-47e6-ba97-d5d81073d458.json")));
        assert!(!Continue.is_record_file(Path::new("/s/sessions.json")));
        assert!(!Continue.is_record_file(Path::new("/s/8fb36db3.json.tmp")));
    }
}
