//! Codex's hook trust, as `beectl setup --agent codex` gives it: Codex runs
//! a hook of `hooks.json` only once its user trusts it, by a hash of what
//! the hook runs kept in `config.toml` (`[hooks.state."<file>:<event>:
//! <group>:<index>"] trusted_hash = "sha256:…"`, what its `/hooks` screen
//! writes on approval). Setup trusts Bee's own entries, and no other, by
//! the hash Codex 0.169 computes (`codex-rs/hooks/src/engine/discovery.rs`,
//! `command_hook_hash`; checked against the hashes the binary reports for
//! every event): SHA-256 of the hook's identity as compact JSON, keys
//! sorted — its event's snake-case name, its group's matcher (not for the
//! events that take none), and the handler's type, command, timeout (as
//! Codex defaults and bounds it), `async` and status message.
//!
//! Trust is by place: a hook that moves loses it. Bee's group is added
//! after the user's on each event, so theirs keep their places.

use serde_json::{Map, Value, json};
use std::path::{Path, PathBuf};

use bee_daemon::events::agent_hooks::HookedAgent;
use bee_daemon::events::claude_settings::Roles;

/// Events whose hooks Codex hashes without their group's matcher.
const NO_MATCHER: [&str; 5] = ["UserPromptSubmit", "Stop", "Interrupt", "PreModelRequest", "PostModelRequest"];

/// Events whose handler's `additionalContextLimit` is part of its identity.
const CONTEXT_LIMIT: [&str; 5] = ["PreToolUse", "PostToolUse", "SessionStart", "UserPromptSubmit", "SubagentStart"];

/// Events whose timeout defaults to 1 s and is bounded at 3 s (600 s and
/// unbounded for the others).
const SHORT: [&str; 2] = ["SessionEnd", "Interrupt"];

/// One trust entry: the key of a hook's place and the hash of what it runs.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TrustEntry {
    pub key: String,
    pub hash: String,
}

/// An event's name in Codex's keys and hashes: `UserPromptSubmit` is
/// `user_prompt_submit`.
fn snake(event: &str) -> String {
    let mut name = String::with_capacity(event.len() + 4);
    for (i, c) in event.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                name.push('_');
            }
            name.push(c.to_ascii_lowercase());
        } else {
            name.push(c);
        }
    }
    name
}

/// The hash Codex trusts a command hook of `event` by, in `matcher`'s group.
pub fn hook_hash(event: &str, matcher: Option<&str>, handler: &Value) -> String {
    let timeout = handler.get("timeout").and_then(Value::as_u64);
    let timeout = if SHORT.contains(&event) { timeout.unwrap_or(1).min(3) } else { timeout.unwrap_or(600) }.max(1);
    // Inserted in sorted order, so the bytes are the same whether or not
    // serde_json keeps insertion order.
    let mut hook = Map::new();
    if CONTEXT_LIMIT.contains(&event)
        && let Some(limit) = handler.get("additionalContextLimit").and_then(Value::as_u64)
    {
        hook.insert("additionalContextLimit".into(), json!(limit));
    }
    hook.insert("async".into(), json!(handler.get("async").and_then(Value::as_bool).unwrap_or(false)));
    hook.insert("command".into(), handler.get("command").cloned().unwrap_or(Value::Null));
    if let Some(message) = handler.get("statusMessage").filter(|m| m.is_string()) {
        hook.insert("statusMessage".into(), message.clone());
    }
    hook.insert("timeout".into(), json!(timeout));
    hook.insert("type".into(), json!("command"));
    let mut identity = Map::new();
    identity.insert("event_name".into(), json!(snake(event)));
    identity.insert("hooks".into(), json!([hook]));
    if let Some(matcher) = matcher.filter(|_| !NO_MATCHER.contains(&event)) {
        identity.insert("matcher".into(), json!(matcher));
    }
    let bytes = serde_json::to_vec(&Value::Object(identity)).unwrap_or_default();
    format!("sha256:{}", bee_daemon::context::artifacts::sha256(&bytes))
}

/// The trust entries of Bee's own hooks in `settings` (the `hooks.json` at
/// `source`, as Codex names it in its keys), by key.
pub fn bee_entries(settings: &Value, source: &Path) -> Vec<TrustEntry> {
    let mut entries = Vec::new();
    let Some(events) = settings.get("hooks").and_then(Value::as_object) else { return entries };
    for (event, groups) in events {
        for (g, group) in groups.as_array().into_iter().flatten().enumerate() {
            let matcher = group.get("matcher").and_then(Value::as_str);
            for (i, handler) in group.get("hooks").and_then(Value::as_array).into_iter().flatten().enumerate() {
                let command = handler.get("command").and_then(Value::as_str);
                if command.and_then(Roles::of_command).is_some() {
                    entries.push(TrustEntry {
                        key: format!("{}:{}:{g}:{i}", source.display(), snake(event)),
                        hash: hook_hash(event, matcher, handler),
                    });
                }
            }
        }
    }
    entries.sort_by(|a, b| a.key.cmp(&b.key));
    entries
}

/// `config.toml`'s text with `stale` trust entries out (those setup wrote
/// before that are no longer Bee's, or that moved) and `entries` in; the
/// rest of the file as it was. `None` for a file that is not TOML or whose
/// `hooks` / `hooks.state` is not a table.
pub fn put(config: Option<&str>, stale: &[TrustEntry], entries: &[TrustEntry]) -> Option<String> {
    let mut document: toml_edit::DocumentMut = config.unwrap_or("").parse().ok()?;
    let hooks = document.entry("hooks").or_insert_with(|| toml_edit::Item::Table(implicit()));
    let state = hooks.as_table_like_mut()?.entry("state").or_insert_with(|| toml_edit::Item::Table(implicit()));
    let state = state.as_table_like_mut()?;
    for entry in stale {
        if trusted(state, entry) {
            state.remove(&entry.key);
        }
    }
    for entry in entries {
        let mut table = toml_edit::Table::new();
        table.insert("trusted_hash", toml_edit::value(entry.hash.clone()));
        state.insert(&entry.key, toml_edit::Item::Table(table));
    }
    Some(document.to_string())
}

/// `config.toml`'s text with `entries` out, each only while it still
/// trusts the hash setup wrote; `hooks.state` and `hooks` go when that
/// leaves them empty. `None` as for [`put`].
pub fn take(config: &str, entries: &[TrustEntry]) -> Option<String> {
    let mut document: toml_edit::DocumentMut = config.parse().ok()?;
    let Some(hooks) = document.get_mut("hooks") else { return Some(config.to_owned()) };
    let hooks = hooks.as_table_like_mut()?;
    if let Some(state) = hooks.get_mut("state") {
        let state = state.as_table_like_mut()?;
        for entry in entries {
            if trusted(state, entry) {
                state.remove(&entry.key);
            }
        }
        if state.is_empty() {
            hooks.remove("state");
        }
    }
    if hooks.is_empty() {
        document.remove("hooks");
    }
    Some(document.to_string())
}

/// Codex's `hooks.json` at `path` as Codex (`agent`) names it in its trust
/// keys: under its home without links.
pub(crate) fn source(agent: &HookedAgent, path: &Path) -> PathBuf {
    match agent.folder_env.and_then(std::env::var_os).filter(|home| !home.is_empty()) {
        Some(home) => std::fs::canonicalize(&home).unwrap_or_else(|_| PathBuf::from(home)).join("hooks.json"),
        None => path.to_owned(),
    }
}

/// Whether the `config.toml` beside Codex's `hooks.json` at `path` trusts
/// each of Bee's hooks in `settings` (that file's JSON) by its hash: Codex
/// runs them only then (`beectl agents`).
pub(crate) fn hooks_trusted(agent: &HookedAgent, path: &Path, settings: &Value) -> bool {
    let entries = bee_entries(settings, &source(agent, path));
    let config = std::fs::read_to_string(path.with_file_name("config.toml")).ok();
    config.is_some_and(|config| all_trusted(&config, &entries))
}

/// Whether `config` (`config.toml`'s text) trusts every one of `entries`
/// by its hash: Codex runs Bee's hooks only then. `false` for a file that
/// is not TOML.
pub fn all_trusted(config: &str, entries: &[TrustEntry]) -> bool {
    let Ok(document) = config.parse::<toml_edit::DocumentMut>() else { return false };
    let state = document.get("hooks").and_then(|hooks| hooks.as_table_like()?.get("state")?.as_table_like());
    state.is_some_and(|state| entries.iter().all(|entry| trusted(state, entry)))
}

/// A table that prints no header of its own while empty (`[hooks]` then
/// appears only as its subtables' prefix).
fn implicit() -> toml_edit::Table {
    let mut table = toml_edit::Table::new();
    table.set_implicit(true);
    table
}

/// Whether `state` trusts `entry`'s key by `entry`'s hash.
fn trusted(state: &dyn toml_edit::TableLike, entry: &TrustEntry) -> bool {
    state
        .get(&entry.key)
        .and_then(|item| item.as_table_like())
        .and_then(|table| table.get("trusted_hash"))
        .and_then(|hash| hash.as_str())
        == Some(entry.hash.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hashes Codex 0.169.0 itself reports (`hooks/list`) for hooks of
    /// each kind: a prompt hook (no matcher hashed), a tool hook in a group
    /// with an empty matcher, and a session end with no timeout (1 s).
    #[test]
    fn each_hash_is_the_one_codex_reports() {
        let prompt = json!({"type": "command", "command": "/tmp/research/codex/rec.sh UserPromptSubmit", "timeout": 5});
        assert_eq!(
            hook_hash("UserPromptSubmit", Some("ignored"), &prompt),
            "sha256:5f508119eacc683a470ed2a64aa17a45f556068f14bef1adf24ac61636b34190"
        );
        assert_eq!(snake("PostModelRequest"), "post_model_request");
        assert_eq!(snake("Stop"), "stop");
    }

    /// Bee's entries get trust by their places; the user's are not
    /// touched; undo takes out only what still trusts Bee's hash, and the
    /// tables it leaves empty.
    #[test]
    fn only_bees_entries_are_trusted_and_undone() {
        let settings = json!({"hooks": {
            "Stop": [{"hooks": [{"type": "command", "command": "./mine.sh"}]},
                     {"hooks": [{"type": "command", "command": "/b/bee-hook turn --agent codex", "timeout": 5}]}],
            "PreToolUse": [{"matcher": "", "hooks": [{"type": "command", "command": "/b/bee-hook event --source-app codex"}]}],
        }});
        let entries = bee_entries(&settings, Path::new("/h/.codex/hooks.json"));
        let keys: Vec<&str> = entries.iter().map(|e| e.key.as_str()).collect();
        assert_eq!(keys, ["/h/.codex/hooks.json:pre_tool_use:0:0", "/h/.codex/hooks.json:stop:1:0"]);
        let mine = "model = \"gpt-5\" # mine\n\n[hooks.state.\"/h/.codex/hooks.json:stop:0:0\"]\ntrusted_hash = \"sha256:00\"\n";
        let written = put(Some(mine), &[], &entries).unwrap();
        assert!(written.starts_with(mine), "{written}");
        let document: toml_edit::DocumentMut = written.parse().unwrap();
        assert_eq!(
            document["hooks"]["state"]["/h/.codex/hooks.json:stop:1:0"]["trusted_hash"].as_str(),
            Some(entries[1].hash.as_str())
        );
        assert_eq!(take(&written, &entries).unwrap(), mine, "the user's trust stays");
        let alone = put(None, &[], &entries).unwrap();
        assert!(!alone.contains("[hooks]\n"), "no empty table header: {alone}");
        assert_eq!(take(&alone, &entries).unwrap(), "");
        // Trust the user changed since is theirs.
        let changed = alone.replace(&entries[0].hash, "sha256:11");
        assert!(take(&changed, &entries).unwrap().contains("sha256:11"));
        // A stale entry goes only while it still trusts Bee's old hash.
        let moved = put(Some(&alone), &entries[..1], &entries[1..]).unwrap();
        assert!(!moved.contains(&entries[0].key) && moved.contains(&entries[1].key), "{moved}");
        assert_eq!(put(Some("hooks = 3\n"), &[], &entries), None);
        assert_eq!(put(Some("not [ toml"), &[], &entries), None);
    }
}
