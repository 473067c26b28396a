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

/// Events whose hook groups take a tool matcher.
const TOOL_EVENTS: &[&str] = &["PreToolUse", "PostToolUse", "PostToolUseFailure", "PermissionRequest"];

/// Whether `command` runs `bee-hook event` for `source_app`.
pub fn is_event_hook(command: &str, source_app: &str) -> bool {
    let words: Vec<&str> = command.split_whitespace().collect();
    let runs_bee_hook = words.first().is_some_and(|program| program.trim_matches(['"', '\'']).ends_with("bee-hook"));
    let app = words.windows(2).any(|pair| pair[0] == "--source-app" && pair[1].trim_matches(['"', '\'']) == source_app)
        || words.iter().any(|word| word.strip_prefix("--source-app=") == Some(source_app));
    runs_bee_hook && words.get(1) == Some(&"event") && app
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

/// Adds a `command` hook for each of `events` that does not already run
/// `bee-hook event --source-app source_app`; returns the events added.
/// Everything else in `settings` is kept as it was, in its order.
pub fn merge(
    settings: &mut Value,
    events: &[String],
    command: &str,
    source_app: &str,
) -> Result<Vec<String>, MergeError> {
    let root = settings.as_object_mut().ok_or(MergeError::NotAnObject)?;
    let hooks = root.entry("hooks").or_insert_with(|| Value::Object(Map::new()));
    let hooks = hooks.as_object_mut().ok_or(MergeError::HooksNotAnObject)?;
    let mut added = Vec::new();
    for event in events {
        let groups = hooks.entry(event.clone()).or_insert_with(|| Value::Array(Vec::new()));
        let groups = groups.as_array_mut().ok_or_else(|| MergeError::EventNotAList(event.clone()))?;
        if groups.iter().any(|group| commands(group).any(|c| is_event_hook(c, source_app))) {
            continue;
        }
        let hook = json!({"type": "command", "command": command});
        let group = if TOOL_EVENTS.contains(&event.as_str()) {
            json!({"matcher": "", "hooks": [hook]})
        } else {
            json!({"hooks": [hook]})
        };
        groups.push(group);
        added.push(event.clone());
    }
    Ok(added)
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
    fn only_bee_hook_event_for_the_app_counts() {
        assert!(is_event_hook("bee-hook event --source-app web", "web"));
        assert!(is_event_hook("\"/usr/local/bin/bee-hook\" event --source-app=web", "web"));
        assert!(!is_event_hook("bee-hook prompt --block x --source-app web", "web"));
        assert!(!is_event_hook("uv run send_event.py --source-app web", "web"));
        assert!(!is_event_hook("bee-hook event --source-app webx", "web"));
    }
}
