//! Cline: its CLI's (and SDK's) sessions (`~/.cline/data/sessions/<id>/
//! *.messages.json`) and its classic editor extension's tasks
//! (`<editor>/User/globalStorage/saoudrizwan.claude-dev/tasks/<id>/
//! ui_messages.json`, and `~/.cline/data/tasks/` where its other hosts keep
//! them), JSON documents it rewrites whole. `README.md` beside this file
//! describes the formats as observed from the real CLI and read from the
//! extension's source.
//!
//! - [`sessions`]: the reader of a CLI / SDK session's conversations.
//! - [`ui_messages`]: the reader of a classic task's messages, shared with
//!   the extensions that forked it (Roo Code, Kilo Code's legacy one).

pub(crate) mod sessions;
pub(crate) mod ui_messages;

use bee_proto::ledger::Provider;
use std::path::{Path, PathBuf};

use crate::ledger::agents::agent::{About, Agent, Env, Records, Verified, WholeFileReader, env_or_home, under_home};
use crate::ledger::stored::evidence::{AgentState, Evidence};

/// Cline, as [`Agent`].
#[derive(Debug)]
pub struct Cline;

/// The classic extension's tasks.
static TASKS: ui_messages::Tasks = ui_messages::Tasks { provider: Provider::Cline, writer: ui_messages::Writer::Cline };

/// Cline's reader: a classic task's messages, or a session's conversation,
/// by the file's name.
struct Files;

impl WholeFileReader for Files {
    fn reads_documents(&self) -> bool {
        true
    }

    fn read(&self, path: &Path, state: &AgentState, out: &mut Vec<Evidence>) -> std::io::Result<(AgentState, u64)> {
        if path.file_name().is_some_and(|name| name == ui_messages::UI_MESSAGES) {
            TASKS.read(path, state, out)
        } else {
            sessions::CONVERSATIONS.read(path, state, out)
        }
    }
}

/// The editors whose `User` directories may hold an extension's global
/// storage, as named under Linux's `~/.config` and macOS's
/// `~/Library/Application Support`: VS Code and the forks of it.
const EDITORS: [&str; 7] = ["Code", "Code - Insiders", "Code - OSS", "VSCodium", "Cursor", "Windsurf", "Positron"];

/// An editor extension of Cline's family (Roo Code, Kilo Code's legacy
/// one) whose tasks Cline's reader of `ui_messages.json` reads: what is
/// known of it, its extension id, and its reader.
#[derive(Debug)]
pub struct TaskExtension {
    pub(crate) about: &'static About,
    /// Its id, the folder of its global storage (`rooveterinaryinc.roo-cline`).
    pub(crate) extension: &'static str,
    pub(crate) tasks: ui_messages::Tasks,
}

impl Agent for TaskExtension {
    fn about(&self) -> &'static About {
        self.about
    }

    /// The `tasks/` directory of its global storage under each editor.
    fn record_dirs(&self, env: Env<'_>) -> Vec<PathBuf> {
        extension_task_dirs(env, self.extension)
    }

    /// A task's `ui_messages.json` (never a temporary copy of it).
    fn is_record_file(&self, path: &Path) -> bool {
        path.file_name().is_some_and(|name| name == ui_messages::UI_MESSAGES)
    }

    fn whole_file(&self) -> Option<&dyn WholeFileReader> {
        Some(&self.tasks)
    }
}

/// The `tasks/` directory of `extension`'s global storage under each
/// editor's `User` directory: Linux's under `XDG_CONFIG_HOME` (by default
/// `~/.config`), macOS's under `~/Library/Application Support`, a remote
/// server's (`~/.vscode-server/data/User`), code-server's and the VS Code
/// Flatpak's. (An extension's own setting that moves its storage, or an
/// editor started with `--user-data-dir`, is not followed.)
pub(crate) fn extension_task_dirs(env: Env<'_>, extension: &str) -> Vec<PathBuf> {
    let linux = env_or_home(env, "XDG_CONFIG_HOME", ".config");
    let macos = under_home(env, "Library/Application Support");
    let mut users: Vec<PathBuf> = [linux, macos]
        .into_iter()
        .flatten()
        .flat_map(|base| EDITORS.iter().map(move |editor| base.join(editor).join("User")))
        .collect();
    for user in [
        ".vscode-server/data/User",
        ".vscode-server-insiders/data/User",
        ".local/share/code-server/User",
        ".var/app/com.visualstudio.code/config/Code/User",
    ] {
        users.extend(under_home(env, user));
    }
    users.into_iter().map(|user| user.join("globalStorage").join(extension).join("tasks")).collect()
}

/// Cline's data directory: `CLINE_DATA_DIR`, else `data/` of its home
/// (`CLINE_DIR`, else `~/.cline`).
fn data_dir(env: Env<'_>) -> Option<PathBuf> {
    env("CLINE_DATA_DIR")
        .map(PathBuf::from)
        .or_else(|| env_or_home(env, "CLINE_DIR", ".cline").map(|home| home.join("data")))
}

impl Agent for Cline {
    fn about(&self) -> &'static About {
        &About {
            provider: Provider::Cline,
            title: "Cline",
            verified: Verified::RealCli("3.0.65"),
            unrecorded_calls: Some("the editor extension's commit-message and \"explain changes\" calls"),
            // Cache writes and its own cost on both formats; no reasoning
            // count, no limit notice, no turn Bee times.
            records: Records {
                time_spans: false,
                limit_notices: false,
                reasoning: false,
                cache_writes: true,
                own_cost: true,
            },
        }
    }

    /// The CLI's sessions (`CLINE_SESSION_DATA_DIR`, else `sessions/` of
    /// its data directory), the tasks its other hosts keep there
    /// (`tasks/`), and the classic extension's tasks under each editor.
    fn record_dirs(&self, env: Env<'_>) -> Vec<PathBuf> {
        let data = data_dir(env);
        let sessions =
            env("CLINE_SESSION_DATA_DIR").map(PathBuf::from).or_else(|| data.as_ref().map(|d| d.join("sessions")));
        let mut dirs: Vec<PathBuf> = sessions.into_iter().chain(data.map(|data| data.join("tasks"))).collect();
        dirs.extend(extension_task_dirs(env, "saoudrizwan.claude-dev"));
        dirs
    }

    /// A session's conversation (`*.messages.json`) or a task's
    /// `ui_messages.json` (never the extension's temporary copies of it).
    fn is_record_file(&self, path: &Path) -> bool {
        let name = path.file_name().and_then(|name| name.to_str()).unwrap_or("");
        name == ui_messages::UI_MESSAGES || sessions::is_conversation(name)
    }

    fn whole_file(&self) -> Option<&dyn WholeFileReader> {
        Some(&Files)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::agents::tests::env_of;

    /// Where the CLI keeps its sessions, as it resolves them, and the
    /// classic extension's tasks under every editor on Linux and macOS.
    #[test]
    fn its_records_where_cline_keeps_them() {
        let dirs = Cline.record_dirs(&env_of(&[("HOME", "/h")]));
        assert_eq!(dirs[0], PathBuf::from("/h/.cline/data/sessions"));
        assert_eq!(dirs[1], PathBuf::from("/h/.cline/data/tasks"));
        let task = "User/globalStorage/saoudrizwan.claude-dev/tasks";
        assert_eq!(dirs[2], PathBuf::from(format!("/h/.config/Code/{task}")));
        assert!(dirs.contains(&PathBuf::from(format!("/h/.config/Cursor/{task}"))));
        assert!(dirs.contains(&PathBuf::from(format!("/h/Library/Application Support/Windsurf/{task}"))));
        assert!(dirs.contains(&PathBuf::from(format!("/h/.vscode-server/data/{task}"))));
        assert_eq!(dirs.len(), 2 + 2 * EDITORS.len() + 4);
        let dirs = Cline.record_dirs(&env_of(&[("HOME", "/h"), ("CLINE_DIR", "/c"), ("XDG_CONFIG_HOME", "/x")]));
        assert_eq!(
            dirs[..3],
            [PathBuf::from("/c/data/sessions"), "/c/data/tasks".into(), format!("/x/Code/{task}").into()]
        );
        let dirs = Cline.record_dirs(&env_of(&[("HOME", "/h"), ("CLINE_DIR", "/c"), ("CLINE_DATA_DIR", "/d")]));
        assert_eq!(dirs[..2], [PathBuf::from("/d/sessions"), "/d/tasks".into()]);
        let dirs = Cline.record_dirs(&env_of(&[("CLINE_DATA_DIR", "/d"), ("CLINE_SESSION_DATA_DIR", "/s")]));
        assert_eq!(dirs, [PathBuf::from("/s"), "/d/tasks".into()]);
        assert!(Cline.record_dirs(&env_of(&[])).is_empty());
    }

    #[test]
    fn its_record_files_by_name() {
        for yes in ["s/1_a/1_a.messages.json", "s/1_a/agent_2_b.messages.json", "t/17/ui_messages.json"] {
            assert!(Cline.is_record_file(Path::new(yes)), "{yes}");
        }
        for no in [
            "s/1_a/1_a.json",
            "s/1_a/1_a.compaction.json",
            "s/.messages.json",
            "t/17/ui_messages.json.tmp.1764000000000.ab12.json",
            "t/17/api_conversation_history.json",
            "t/17/task_metadata.json",
        ] {
            assert!(!Cline.is_record_file(Path::new(no)), "{no}");
        }
    }
}
