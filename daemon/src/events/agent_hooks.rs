//! The agents whose own hooks Bee wires (`beectl setup --agent NAME`):
//! where each keeps the `settings.json` its hooks live in, the events Bee
//! posts there for the audit's receipts beside the two that start and end
//! its turns ([`TurnEdge::events`]), its hook timeouts' unit — and whether
//! Bee's turn marks are wired there now (`beectl agents`).
//!
//! Gemini CLI, Qwen Code, Copilot CLI and Codex read Claude Code's settings
//! shape (`hooks` → event → groups → `{"type": "command", "command",
//! "timeout"}`; Copilot CLI beside its own flat one, Codex in a `hooks.json`
//! of its own), so one merge ([`crate::events::claude_settings::put_roles`])
//! serves all five; Codex runs a hook only once its user trusts it by its
//! hash, which setup writes with the entries. Cline runs hooks too, an
//! executable file per event rather than a settings file: beectl's setup
//! wires those itself (`setup/cline.rs`), and is not listed here.

use bee_proto::ledger::{Provider, TurnEdge};
use serde_json::Value;
use std::path::{Path, PathBuf};

use crate::events::claude_settings::{Roles, commands_on};

/// An agent whose hooks Bee wires.
#[derive(Debug)]
pub struct HookedAgent {
    pub provider: Provider,
    /// Its settings folder, under the home.
    pub folder: &'static str,
    /// The file there its hooks live in.
    pub file: &'static str,
    /// Its settings folder under a project, where that is another.
    pub project_folder: &'static str,
    /// The variable that moves its home (whose `folder` it then reads).
    pub home_env: Option<&'static str>,
    /// The variable that names its settings folder itself.
    pub folder_env: Option<&'static str>,
    /// The events posted to beed by default, in its own names.
    pub events: &'static [&'static str],
    /// Bee's hook deadline in the agent's unit: Gemini CLI counts
    /// milliseconds, the others seconds.
    pub timeout: u64,
    /// The source app its events report as by default.
    pub source_app: &'static str,
    /// The matcher of a tool event's group that means every tool: Claude
    /// Code's `""`; `None` where an empty one is refused (Copilot CLI
    /// then ignores the whole settings file), so the group has none.
    pub tool_matcher: Option<&'static str>,
}

/// Claude Code, Gemini CLI, Qwen Code, Copilot CLI and Codex.
pub const HOOKED: [HookedAgent; 5] = [
    HookedAgent {
        provider: Provider::Claude,
        folder: ".claude",
        file: "settings.json",
        project_folder: ".claude",
        folder_env: None,
        home_env: None,
        events: crate::events::claude_settings::MINIMAL_EVENTS,
        timeout: 5,
        source_app: "claude-code",
        tool_matcher: Some(""),
    },
    HookedAgent {
        provider: Provider::Gemini,
        folder: ".gemini",
        file: "settings.json",
        project_folder: ".gemini",
        folder_env: None,
        home_env: Some("GEMINI_CLI_HOME"),
        events: &["SessionStart", "BeforeTool", "AfterTool", "SessionEnd"],
        timeout: 5_000,
        source_app: "gemini-cli",
        tool_matcher: Some(""),
    },
    HookedAgent {
        provider: Provider::Qwen,
        folder: ".qwen",
        file: "settings.json",
        project_folder: ".qwen",
        folder_env: None,
        home_env: None,
        events: crate::events::claude_settings::MINIMAL_EVENTS,
        timeout: 5,
        source_app: "qwen-code",
        tool_matcher: Some(""),
    },
    // Its hooks in the user's settings run in any folder; a project's
    // (`.github/copilot/settings.json`) only in a folder the user trusts.
    // Its own PascalCase events send Claude Code's payloads.
    HookedAgent {
        provider: Provider::Copilot,
        folder: ".copilot",
        file: "settings.json",
        project_folder: ".github/copilot",
        home_env: None,
        folder_env: Some("COPILOT_HOME"),
        events: &["SessionStart", "PreToolUse", "PostToolUse", "SessionEnd"],
        timeout: 5,
        source_app: "copilot-cli",
        tool_matcher: None,
    },
    // `$CODEX_HOME/hooks.json`, else `~/.codex/hooks.json`; each hook runs
    // once trusted (`codex_trust` in beectl's setup). SessionEnd's deadline
    // is at most 3 s, Codex's own bound.
    HookedAgent {
        provider: Provider::Codex,
        folder: ".codex",
        file: "hooks.json",
        project_folder: ".codex",
        home_env: None,
        folder_env: Some("CODEX_HOME"),
        events: &["SessionStart", "PreToolUse", "PostToolUse", "SessionEnd"],
        timeout: 5,
        source_app: "codex-cli",
        tool_matcher: Some(""),
    },
];

/// The agent `provider` is, when Bee wires its hooks.
pub fn hooked(provider: Provider) -> Option<&'static HookedAgent> {
    HOOKED.iter().find(|agent| agent.provider == provider)
}

impl HookedAgent {
    /// Its user settings: in the folder its own variable names, else
    /// under its own home variable, else under `HOME`; `None` with none.
    pub fn user_settings(&self, env: &dyn Fn(&str) -> Option<std::ffi::OsString>) -> Option<PathBuf> {
        let set = |name: &str| env(name).filter(|value| !value.is_empty());
        if let Some(folder) = self.folder_env.and_then(set) {
            return Some(PathBuf::from(folder).join(self.file));
        }
        let home = self.home_env.and_then(env).or_else(|| env("HOME")).filter(|home| !home.is_empty())?;
        Some(PathBuf::from(home).join(self.folder).join(self.file))
    }

    /// A project's settings.
    pub fn project_settings(&self, project: &Path) -> PathBuf {
        project.join(self.project_folder).join(self.file)
    }

    /// The events that start and end its turns.
    pub fn turn_events(&self) -> [&'static str; 2] {
        TurnEdge::events(self.provider).unwrap_or(["UserPromptSubmit", "Stop"])
    }

    /// The `--agent` word Bee's turn entries carry for it (`None`:
    /// Claude Code's, which carry none).
    pub fn agent_word(&self) -> Option<&'static str> {
        (self.provider != Provider::Claude).then_some(self.provider.as_str())
    }

    /// Whether `settings` mark its turns: on both of its turn events, a
    /// Bee entry marking this agent's turns.
    pub fn turns_wired(&self, settings: &Value) -> bool {
        self.turn_events().iter().all(|event| {
            commands_on(settings, event).iter().any(|command| {
                Roles::of_command(command)
                    .is_some_and(|roles| roles.turn && roles.agent.as_deref() == self.agent_word())
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::ffi::OsString;

    #[test]
    fn each_agents_settings_where_it_reads_them() {
        let env = |name: &str| match name {
            "HOME" => Some(OsString::from("/h")),
            "GEMINI_CLI_HOME" => Some(OsString::from("/g")),
            "COPILOT_HOME" => Some(OsString::from("/c/copilot")),
            "CODEX_HOME" => Some(OsString::from("/x/codex")),
            _ => None,
        };
        let paths: Vec<PathBuf> = HOOKED.iter().filter_map(|agent| agent.user_settings(&env)).collect();
        let expected = ["/h/.claude/settings.json", "/g/.gemini/settings.json", "/h/.qwen/settings.json"]
            .into_iter()
            .chain(["/c/copilot/settings.json", "/x/codex/hooks.json"])
            .map(PathBuf::from)
            .collect::<Vec<_>>();
        assert_eq!(paths, expected);
        let copilot = hooked(Provider::Copilot).unwrap();
        let home_only = |name: &str| (name == "HOME").then(|| OsString::from("/h"));
        assert_eq!(copilot.user_settings(&home_only), Some(PathBuf::from("/h/.copilot/settings.json")));
        assert_eq!(copilot.project_settings(Path::new("/p")), PathBuf::from("/p/.github/copilot/settings.json"));
        assert!(hooked(Provider::Cline).is_none());
    }

    /// Wired means both turn events run Bee's mark for this agent: one of
    /// them, or Claude Code's mark under Gemini's names, is not.
    #[test]
    fn turns_are_wired_only_with_both_marks_for_the_agent() {
        let gemini = hooked(Provider::Gemini).unwrap();
        let entry = |command: &str| json!([{"matcher": "", "hooks": [{"type": "command", "command": command}]}]);
        let both = json!({"hooks": {
            "BeforeAgent": entry("/b/bee-hook turn --agent gemini"),
            "AfterAgent": entry("/b/bee-hook on AfterAgent --turn --agent gemini --event --source-app g"),
        }});
        assert!(gemini.turns_wired(&both));
        let claude_marks =
            json!({"hooks": {"BeforeAgent": entry("/b/bee-hook turn"), "AfterAgent": entry("/b/bee-hook turn")}});
        assert!(!gemini.turns_wired(&claude_marks));
        let one = json!({"hooks": {"BeforeAgent": entry("/b/bee-hook turn --agent gemini")}});
        assert!(!gemini.turns_wired(&one));
        let claude = hooked(Provider::Claude).unwrap();
        let wired = json!({"hooks": {"UserPromptSubmit": entry("bee-hook turn"), "Stop": entry("bee-hook turn")}});
        assert!(claude.turns_wired(&wired) && !claude.turns_wired(&json!({})));
    }
}
