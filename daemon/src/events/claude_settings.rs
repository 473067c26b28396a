//! Claude Code's `settings.json` as far as Bee touches it: which lifecycle
//! events run `bee-hook event --source-app APP`, and merging such hooks in
//! while keeping every hook (and every other setting) the user has.

use serde_json::{Map, Value, json};
use std::collections::BTreeSet;

/// The twelve event groups the reference pipeline configures.
pub const REFERENCE_EVENTS: &[&str] = &[
    "SessionStart",
    "SessionEnd",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "PermissionRequest",
    "Notification",
    "SubagentStart",
    "SubagentStop",
    "Stop",
    "PreCompact",
];

/// The minimal single-agent lifecycle (the canary's sequence): the events
/// `hooks install` wires and a written manifest requires by default.
pub const MINIMAL_EVENTS: &[&str] = &["SessionStart", "PreToolUse", "PostToolUse", "Stop"];

/// What a team run adds: subagents, tasks, teammates.
pub const TEAM_EVENTS: &[&str] = &["SubagentStart", "SubagentStop", "TaskCreated", "TaskCompleted", "TeammateIdle"];

/// Events whose hook groups take a tool matcher.
const TOOL_EVENTS: &[&str] = &["PreToolUse", "PostToolUse", "PostToolUseFailure", "PermissionRequest"];

/// Whether `command` runs `bee-hook event` for `source_app`.
pub fn is_event_hook(command: &str, source_app: &str) -> bool {
    let words: Vec<&str> = command.split_whitespace().collect();
    let app = words.windows(2).any(|pair| pair[0] == "--source-app" && pair[1].trim_matches(['"', '\'']) == source_app)
        || words.iter().any(|word| word.strip_prefix("--source-app=") == Some(source_app));
    is_bee_event_hook(command) && app
}

/// Whether `command` runs `bee-hook event`, for any source app: Bee's own entry.
pub fn is_bee_event_hook(command: &str) -> bool {
    runs_bee_hook(command, "event")
}

fn commands(group: &Value) -> impl Iterator<Item = &str> {
    group.get("hooks").and_then(Value::as_array).into_iter().flatten().filter_map(|hook| {
        (hook.get("type").and_then(Value::as_str) == Some("command"))
            .then(|| hook.get("command").and_then(Value::as_str))
            .flatten()
    })
}

/// The events `settings` runs `bee-hook event --source-app source_app` for.
pub fn configured_events(settings: &Value, source_app: &str) -> BTreeSet<String> {
    let Some(hooks) = settings.get("hooks").and_then(Value::as_object) else { return BTreeSet::new() };
    hooks
        .iter()
        .filter(|(_, groups)| {
            groups.as_array().into_iter().flatten().any(|group| commands(group).any(|c| is_event_hook(c, source_app)))
        })
        .map(|(event, _)| event.clone())
        .collect()
}

/// Why settings could not be merged.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum MergeError {
    #[error("settings.json is not a JSON object")]
    NotAnObject,
    #[error("settings.json has a \"hooks\" that is not an object")]
    HooksNotAnObject,
    #[error("settings.json hooks for {0} are not a list")]
    EventNotAList(String),
}

/// What adding one hook did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Added {
    /// A hook that counts as present was there already.
    Unchanged,
    Added,
    /// Bee's own entry ran this older command; it now runs the new one.
    Replaced(String),
}

/// A hook to add: the event, the command, Claude Code's timeout for it.
#[derive(Debug, Clone, Copy)]
pub struct NewHook<'a> {
    pub event: &'a str,
    pub command: &'a str,
    pub timeout_seconds: Option<u64>,
}

/// Adds `hook` unless a hook whose command is `present` is there; a hook
/// whose command is `ours` (Bee's own, for something else) is pointed at
/// the new command in place instead of getting a sibling. Everything else
/// in `settings` is kept as it was, in its order.
pub fn add_hook(
    settings: &mut Value,
    hook: NewHook<'_>,
    present: impl Fn(&str) -> bool,
    ours: impl Fn(&str) -> bool,
) -> Result<Added, MergeError> {
    let root = settings.as_object_mut().ok_or(MergeError::NotAnObject)?;
    let hooks = root.entry("hooks").or_insert_with(|| Value::Object(Map::new()));
    let hooks = hooks.as_object_mut().ok_or(MergeError::HooksNotAnObject)?;
    let groups = hooks.entry(hook.event.to_owned()).or_insert_with(|| Value::Array(Vec::new()));
    let groups = groups.as_array_mut().ok_or_else(|| MergeError::EventNotAList(hook.event.to_owned()))?;
    if groups.iter().any(|group| commands(group).any(&present)) {
        return Ok(Added::Unchanged);
    }
    let existing = groups
        .iter_mut()
        .flat_map(|group| group.get_mut("hooks").and_then(Value::as_array_mut))
        .flatten()
        .find(|entry| entry.get("command").and_then(Value::as_str).is_some_and(&ours));
    if let Some(entry) = existing {
        let old = entry.get("command").and_then(Value::as_str).unwrap_or_default().to_owned();
        entry["command"] = Value::String(hook.command.to_owned());
        return Ok(Added::Replaced(old));
    }
    let mut entry = json!({"type": "command", "command": hook.command});
    if let Some(timeout) = hook.timeout_seconds {
        entry["timeout"] = json!(timeout);
    }
    let group = if TOOL_EVENTS.contains(&hook.event) {
        json!({"matcher": "", "hooks": [entry]})
    } else {
        json!({"hooks": [entry]})
    };
    groups.push(group);
    Ok(Added::Added)
}

/// Adds a `command` hook for each of `events` that does not already run
/// `bee-hook event --source-app source_app`; Bee's own entry for another
/// source app is replaced in place, not added to. Returns the events
/// changed. Everything else in `settings` is kept as it was, in its order.
pub fn merge(
    settings: &mut Value,
    events: &[String],
    command: &str,
    source_app: &str,
) -> Result<Vec<String>, MergeError> {
    let mut changed = Vec::new();
    for event in events {
        let hook = NewHook { event, command, timeout_seconds: None };
        if add_hook(settings, hook, |c| is_event_hook(c, source_app), is_bee_event_hook)? != Added::Unchanged {
            changed.push(event.clone());
        }
    }
    Ok(changed)
}

/// Whether `command` runs `bee-hook SUBCOMMAND`.
pub fn runs_bee_hook(command: &str, subcommand: &str) -> bool {
    let mut words = command.split_whitespace();
    words.next().is_some_and(|program| program.trim_matches(['"', '\'']).ends_with("bee-hook"))
        && words.next() == Some(subcommand)
}

/// Takes out of each of `events` the hooks whose command `matches`, then
/// the groups, event lists and `hooks` object that leaves empty; returns
/// the events touched. Everything else stays as it was.
pub fn remove_hooks(settings: &mut Value, events: Option<&[&str]>, matches: impl Fn(&str) -> bool) -> Vec<String> {
    let Some(hooks) = settings.get_mut("hooks").and_then(Value::as_object_mut) else { return Vec::new() };
    let mut touched = Vec::new();
    for (event, groups) in hooks.iter_mut() {
        if events.is_some_and(|only| !only.contains(&event.as_str())) {
            continue;
        }
        let Some(groups) = groups.as_array_mut() else { continue };
        let before = groups.clone();
        for group in groups.iter_mut() {
            if let Some(list) = group.get_mut("hooks").and_then(Value::as_array_mut) {
                list.retain(|hook| !hook.get("command").and_then(Value::as_str).is_some_and(&matches));
            }
        }
        groups.retain(|group| group.get("hooks").and_then(Value::as_array).is_none_or(|list| !list.is_empty()));
        if *groups != before {
            touched.push(event.clone());
        }
    }
    hooks.retain(|event, groups| !touched.contains(event) || groups.as_array().is_none_or(|g| !g.is_empty()));
    if hooks.is_empty()
        && !touched.is_empty()
        && let Some(root) = settings.as_object_mut()
    {
        root.remove("hooks");
    }
    touched
}

/// Points Bee's hook for `event` that runs `command` back at `old`.
pub fn restore_hook(settings: &mut Value, event: &str, command: &str, old: &str) -> bool {
    let Some(groups) = settings.pointer_mut(&format!("/hooks/{event}")).and_then(Value::as_array_mut) else {
        return false;
    };
    let entry = groups
        .iter_mut()
        .flat_map(|group| group.get_mut("hooks").and_then(Value::as_array_mut))
        .flatten()
        .find(|entry| entry.get("command").and_then(Value::as_str) == Some(command));
    match entry {
        Some(entry) => {
            entry["command"] = Value::String(old.to_owned());
            true
        }
        None => false,
    }
}

/// The status line's command, when it has one.
pub fn status_line_command(settings: &Value) -> Option<&str> {
    settings.get("statusLine")?.get("command")?.as_str()
}

/// Removes every `bee-hook event` hook (any source app), and the groups and
/// event lists that removal leaves empty; returns the events touched.
/// Everything else stays as it was.
pub fn remove_event_hooks(settings: &mut Value) -> Vec<String> {
    remove_hooks(settings, None, is_bee_event_hook)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merging_keeps_existing_hooks_and_is_idempotent() {
        let mut settings = json!({
            "model": "opus",
            "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh"}]}]}
        });
        let events: Vec<String> = ["PreToolUse", "Stop"].map(String::from).to_vec();
        let command = "/opt/bee/bee-hook event --source-app web";
        assert_eq!(merge(&mut settings, &events, command, "web").unwrap(), events);
        assert_eq!(settings["hooks"]["PreToolUse"][0]["hooks"][0]["command"], "./guard.sh");
        assert_eq!(settings["hooks"]["PreToolUse"][1]["hooks"][0]["command"], command);
        let before = settings.clone();
        assert!(merge(&mut settings, &events, command, "web").unwrap().is_empty());
        assert_eq!(settings, before);
        assert_eq!(configured_events(&settings, "web"), ["PreToolUse", "Stop"].map(String::from).into());
        assert!(configured_events(&settings, "other").is_empty());
        assert_eq!(merge(&mut json!([]), &events, command, "web"), Err(MergeError::NotAnObject));
        assert_eq!(merge(&mut json!({"hooks": 3}), &events, command, "web"), Err(MergeError::HooksNotAnObject));
    }

    #[test]
    fn another_source_app_replaces_bees_entry_and_uninstall_removes_only_bees() {
        let mut settings = json!({
            "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "./notify.sh"}]}]}
        });
        let original = settings.clone();
        let events: Vec<String> = ["Stop", "SessionStart"].map(String::from).to_vec();
        merge(&mut settings, &events, "bee-hook event --source-app web", "web").unwrap();
        assert_eq!(merge(&mut settings, &events, "bee-hook event --source-app api", "api").unwrap(), events);
        assert_eq!(settings["hooks"]["Stop"].as_array().unwrap().len(), 2, "replaced, not added");
        assert_eq!(settings["hooks"]["Stop"][1]["hooks"][0]["command"], "bee-hook event --source-app api");
        assert!(configured_events(&settings, "web").is_empty());
        assert_eq!(remove_event_hooks(&mut settings), ["Stop", "SessionStart"]);
        assert_eq!(settings, original, "everything else as it was");
        assert!(remove_event_hooks(&mut settings).is_empty());
    }

    #[test]
    fn only_bee_hook_event_for_the_app_counts() {
        assert!(is_event_hook("bee-hook event --source-app web", "web"));
        assert!(is_event_hook("\"/usr/local/bin/bee-hook\" event --source-app=web", "web"));
        assert!(!is_event_hook("bee-hook prompt --block x --source-app web", "web"));
        assert!(!is_event_hook("uv run send_event.py --source-app web", "web"));
        assert!(!is_event_hook("bee-hook event --source-app webx", "web"));
    }
}
