//! Claude Code's `settings.json` as far as Bee touches it: which lifecycle
//! events run `bee-hook event --source-app APP` (alone or as a role of
//! `bee-hook on EVENT`), and putting Bee's roles in — one entry per event —
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
/// (Gemini CLI's `BeforeTool` and `AfterTool` too.)
const TOOL_EVENTS: &[&str] =
    &["PreToolUse", "PostToolUse", "PostToolUseFailure", "PermissionRequest", "BeforeTool", "AfterTool"];

/// Whether `command` posts its events to beed for `source_app`: `bee-hook
/// event --source-app APP`, or `bee-hook on EVENT --event --source-app APP`.
pub fn is_event_hook(command: &str, source_app: &str) -> bool {
    Roles::of_command(command).is_some_and(|roles| roles.source_app().as_deref() == Some(source_app))
}

/// Whether `command` posts events, for any source app: Bee's own entry.
pub fn is_bee_event_hook(command: &str) -> bool {
    Roles::of_command(command).is_some_and(|roles| roles.events_for.is_some())
}

/// A word the shell keeps as one argument.
pub fn shell_word(word: &str) -> String {
    if !word.is_empty() && word.chars().all(|c| c.is_ascii_alphanumeric() || "/._-+:@".contains(c)) {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// The steering block a Bee entry delivers (`--block FILE --surface S`);
/// each value a shell word as the entry spells it (`"$CLAUDE_PROJECT_DIR/…"`
/// stays for the shell to expand).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockRole {
    pub file: String,
    pub surface: String,
    pub item: Option<String>,
    pub item_version: Option<String>,
}

/// What Bee's entries do on one event: the roles of `bee-hook on`. Values
/// are shell words as the entry spells them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Roles {
    /// Marks turns (`--turn`, or `bee-hook turn`).
    pub turn: bool,
    /// Whose turns (`--agent NAME`; none: Claude Code's).
    pub agent: Option<String>,
    /// Posts events for this source app (`--event --source-app APP`).
    pub events_for: Option<String>,
    pub capture_payload: bool,
    pub block: Option<BlockRole>,
}

/// The words of `command` as the shell splits them, each as written
/// (quotes kept); `None` for an unbalanced quote.
fn raw_words(command: &str) -> Option<Vec<&str>> {
    let mut words = Vec::new();
    let mut start = None;
    let mut quote = None;
    let mut escaped = false;
    for (at, c) in command.char_indices() {
        if escaped {
            escaped = false;
            continue;
        }
        match (quote, c) {
            (Some('\''), '\'') | (Some('"'), '"') => quote = None,
            (Some('"') | None, '\\') => {
                escaped = true;
                start.get_or_insert(at);
            }
            (Some(_), _) => {}
            (None, '\'' | '"') => {
                quote = Some(c);
                start.get_or_insert(at);
            }
            // The shell's own separators, no others.
            (None, ' ' | '\t' | '\n') => {
                if let Some(from) = start.take() {
                    words.push(&command[from..at]);
                }
            }
            (None, _) => {
                start.get_or_insert(at);
            }
        }
    }
    if quote.is_some() || escaped {
        return None;
    }
    words.extend(start.map(|from| &command[from..]));
    Some(words)
}

/// A shell word's value, when it is one plain word (no expansion needed to know it).
fn unquoted(word: &str) -> Option<String> {
    match shlex::split(word)?.as_slice() {
        [value] => Some(value.clone()),
        _ => None,
    }
}

impl Roles {
    /// The roles of `command` when it is Bee's own entry: `bee-hook on`,
    /// `event`, `turn`, or `prompt --block`. A wrapped `prompt -- CMD` is
    /// the user's hook, and a command read any other way is not Bee's:
    /// neither is ever touched.
    pub fn of_command(command: &str) -> Option<Roles> {
        let words = raw_words(command)?;
        let (program, rest) = words.split_first()?;
        if !unquoted(program)?.ends_with("bee-hook") {
            return None;
        }
        let (subcommand, mut flags) = rest.split_first()?;
        if *subcommand == "on" {
            // The event the entry names: where it is wired is what counts.
            flags = flags.split_first()?.1;
        }
        let mut roles = Roles::default();
        let mut block = (None, None, None, None);
        let mut flags = flags.iter();
        while let Some(flag) = flags.next() {
            let (name, inline) = match flag.split_once('=') {
                Some((name, value)) if name.starts_with("--") => (name, Some((*value).to_owned())),
                _ => (*flag, None),
            };
            let mut value = || {
                inline.clone().or_else(|| flags.next().map(|word| (*word).to_owned())).filter(|word| !word.is_empty())
            };
            match (*subcommand, name) {
                ("on", "--turn") => roles.turn = true,
                ("on" | "turn", "--agent") => roles.agent = Some(value()?),
                ("on", "--event") => {}
                ("on" | "event", "--source-app") => roles.events_for = Some(value()?),
                ("on" | "event", "--capture-payload") => roles.capture_payload = true,
                ("on" | "prompt", "--block") => block.0 = Some(value()?),
                ("on" | "prompt", "--surface") => block.1 = Some(value()?),
                ("on" | "prompt", "--item") => block.2 = Some(value()?),
                ("on" | "prompt", "--item-version") => block.3 = Some(value()?),
                _ => return None,
            }
        }
        match *subcommand {
            "turn" => roles.turn = true,
            "on" | "event" | "prompt" => {}
            _ => return None,
        }
        // Capture is a part of the event role, the agent of the turn role;
        // without them, nothing.
        roles.capture_payload &= roles.events_for.is_some();
        roles.agent = roles.agent.filter(|_| roles.turn);
        if let (Some(file), Some(surface), item, item_version) = block {
            roles.block = Some(BlockRole { file, surface, item, item_version });
        }
        Some(roles)
    }

    /// The source app events are posted for, when it is a plain word.
    pub fn source_app(&self) -> Option<String> {
        self.events_for.as_deref().and_then(unquoted)
    }

    /// Posts events for `source_app`: an entry posting for it already is
    /// left as spelt; one posting for another app (and its capture opt-in,
    /// which was that app's) is changed.
    pub fn post_events_for(&mut self, source_app: &str) {
        if self.source_app().as_deref() != Some(source_app) {
            self.events_for = Some(shell_word(source_app));
            self.capture_payload = false;
        }
    }

    /// Whether the entry would do nothing.
    pub fn is_empty(&self) -> bool {
        !self.turn && self.events_for.is_none() && self.block.is_none()
    }

    /// Adds `other`'s roles to these; where both have one, these win.
    fn union(mut self, other: &Roles) -> Roles {
        self.turn |= other.turn;
        if self.agent.is_none() {
            self.agent.clone_from(&other.agent);
        }
        if self.events_for.is_none() {
            self.events_for.clone_from(&other.events_for);
            self.capture_payload = other.capture_payload;
        }
        if self.block.is_none() {
            self.block.clone_from(&other.block);
        }
        self
    }

    /// The one command that plays these roles on `event` (`bee_hook`
    /// already a shell word): a single role keeps its own subcommand, so an
    /// entry that needs one process reads as it always has; several are
    /// one `bee-hook on`. `None` for no role.
    pub fn command(&self, bee_hook: &str, event: &str) -> Option<String> {
        let events = self.events_for.as_ref().map(|app| {
            let capture = if self.capture_payload { " --capture-payload" } else { "" };
            format!("--source-app {app}{capture}")
        });
        let block = self.block.as_ref().map(|block| {
            let mut words = format!("--surface {} --block {}", block.surface, block.file);
            for (flag, value) in [("--item", &block.item), ("--item-version", &block.item_version)] {
                if let Some(value) = value {
                    words.push_str(&format!(" {flag} {value}"));
                }
            }
            words
        });
        let agent = self.agent.as_ref().filter(|_| self.turn).map(|agent| format!(" --agent {agent}"));
        let agent = agent.unwrap_or_default();
        Some(match (self.turn, events, block) {
            (false, None, None) => return None,
            (true, None, None) => format!("{bee_hook} turn{agent}"),
            (false, Some(events), None) => format!("{bee_hook} event {events}"),
            (false, None, Some(block)) => format!("{bee_hook} prompt {block}"),
            (turn, events, block) => {
                let mut command = format!("{bee_hook} on {}", shell_word(event));
                let parts = [block, turn.then(|| format!("--turn{agent}")), events.map(|e| format!("--event {e}"))];
                for part in parts.into_iter().flatten() {
                    command.push(' ');
                    command.push_str(&part);
                }
                command
            }
        })
    }
}

/// What putting Bee's roles on one event did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Put {
    /// Bee's one entry there ran the command already.
    Unchanged,
    /// Bee's entries there, and what they ran, now one entry with `command`
    /// (`None`: no role left, so none).
    Changed { before: Vec<String>, command: Option<String> },
}

/// Puts Bee's roles on `event` into one entry: the roles all of Bee's
/// entries there play, changed by `change`, run by one command. Bee's first
/// entry takes the command in place (its timeout set to `timeout`, in the
/// agent's unit, when given); the others go, with any group that leaves empty. With no
/// Bee entry, a group is added, on a tool event with `tool_matcher` (every
/// tool; `None`: no matcher, for an agent that refuses an empty one).
/// Everything else stays as it was.
pub fn put_roles(
    settings: &mut Value,
    event: &str,
    bee_hook: &str,
    timeout: Option<u64>,
    tool_matcher: Option<&str>,
    change: impl FnOnce(&mut Roles),
) -> Result<Put, MergeError> {
    let root = settings.as_object_mut().ok_or(MergeError::NotAnObject)?;
    let no_hooks = !root.contains_key("hooks");
    let hooks = root.entry("hooks").or_insert_with(|| Value::Object(Map::new()));
    let hooks = hooks.as_object_mut().ok_or(MergeError::HooksNotAnObject)?;
    let mut empty = Vec::new();
    let groups = match hooks.get_mut(event) {
        Some(groups) => groups.as_array_mut().ok_or_else(|| MergeError::EventNotAList(event.to_owned()))?,
        None => &mut empty,
    };
    let ours: Vec<(String, Roles)> = groups
        .iter()
        .flat_map(commands)
        .filter_map(|command| Roles::of_command(command).map(|roles| (command.to_owned(), roles)))
        .collect();
    let mut roles = ours.iter().fold(Roles::default(), |roles, (_, theirs)| roles.union(theirs));
    change(&mut roles);
    let command = roles.command(bee_hook, event);
    let unchanged = match (ours.as_slice(), &command) {
        ([(only, _)], Some(command)) => only == command,
        ([], None) => true,
        _ => false,
    };
    if unchanged {
        if no_hooks && hooks.is_empty() {
            root.remove("hooks");
        }
        return Ok(Put::Unchanged);
    }
    let before: Vec<String> = ours.into_iter().map(|(command, _)| command).collect();
    let mut placed = false;
    for group in groups.iter_mut() {
        let Some(list) = group.get_mut("hooks").and_then(Value::as_array_mut) else { continue };
        list.retain_mut(|entry| {
            let ours = entry.get("command").and_then(Value::as_str).is_some_and(|c| Roles::of_command(c).is_some());
            if !ours {
                return true;
            }
            match (&command, placed) {
                (Some(command), false) => {
                    placed = true;
                    entry["command"] = Value::String(command.clone());
                    if let Some(timeout) = timeout {
                        entry["timeout"] = json!(timeout);
                    }
                    true
                }
                _ => false,
            }
        });
    }
    groups.retain(|group| group.get("hooks").and_then(Value::as_array).is_none_or(|list| !list.is_empty()));
    if let (Some(command), false) = (&command, placed) {
        let mut entry = json!({"type": "command", "command": command});
        if let Some(timeout) = timeout {
            entry["timeout"] = json!(timeout);
        }
        groups.push(match tool_matcher.filter(|_| TOOL_EVENTS.contains(&event)) {
            Some(matcher) => json!({"matcher": matcher, "hooks": [entry]}),
            None => json!({"hooks": [entry]}),
        });
    }
    if !empty.is_empty() {
        hooks.insert(event.to_owned(), Value::Array(empty));
    } else if hooks.get(event).and_then(Value::as_array).is_some_and(Vec::is_empty) {
        hooks.remove(event);
    }
    if hooks.is_empty()
        && let Some(root) = settings.as_object_mut()
    {
        root.remove("hooks");
    }
    Ok(Put::Changed { before, command })
}

fn commands(group: &Value) -> impl Iterator<Item = &str> {
    group.get("hooks").and_then(Value::as_array).into_iter().flatten().filter_map(|hook| {
        (hook.get("type").and_then(Value::as_str) == Some("command"))
            .then(|| hook.get("command").and_then(Value::as_str))
            .flatten()
    })
}

/// Every command `settings` runs on `event`.
pub fn commands_on<'s>(settings: &'s Value, event: &str) -> Vec<&'s str> {
    let groups = settings.get("hooks").and_then(|hooks| hooks.get(event)).and_then(Value::as_array);
    groups.into_iter().flatten().flat_map(commands).collect()
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

/// Gives each of `events` Bee's event role for `source_app` (`bee_hook`
/// already a shell word), in Bee's one entry there: an event that posts
/// for the app already is left alone; Bee's entry for another source app
/// is changed in place, not added to. Returns the events changed.
/// Everything else in `settings` is kept as it was, in its order.
pub fn merge(
    settings: &mut Value,
    events: &[String],
    bee_hook: &str,
    source_app: &str,
) -> Result<Vec<String>, MergeError> {
    let mut changed = Vec::new();
    for event in events {
        let put = put_roles(settings, event, bee_hook, None, Some(""), |roles| roles.post_events_for(source_app))?;
        if put != Put::Unchanged {
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

/// An event's hook groups (`null`: none).
pub fn event_groups(settings: &Value, event: &str) -> Value {
    settings.get("hooks").and_then(|hooks| hooks.get(event)).cloned().unwrap_or(Value::Null)
}

/// Puts an event's groups back to `before` (`null`: none), when they are
/// still `after`; whether it did.
pub fn restore_groups(settings: &mut Value, event: &str, before: &Value, after: &Value) -> bool {
    if event_groups(settings, event) != *after {
        return false;
    }
    let Some(root) = settings.as_object_mut() else { return false };
    let hooks = root.entry("hooks").or_insert_with(|| Value::Object(Map::new()));
    let Some(hooks) = hooks.as_object_mut() else { return false };
    match before {
        Value::Null => {
            hooks.remove(event);
        }
        groups => {
            hooks.insert(event.to_owned(), groups.clone());
        }
    }
    if hooks.is_empty() {
        root.remove("hooks");
    }
    true
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

/// Takes Bee's event role (any source app) out of every event: a
/// `bee-hook event` entry goes, with the groups and event lists that leaves
/// empty; an entry with other roles keeps them. Returns the events touched.
/// Everything else stays as it was.
pub fn remove_event_hooks(settings: &mut Value) -> Vec<String> {
    let events: Vec<(String, String)> = settings
        .get("hooks")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter_map(|(event, groups)| {
            let command = groups.as_array()?.iter().flat_map(commands).find(|c| is_bee_event_hook(c))?;
            // Bee's own program word, as the entry spells it.
            Some((event.clone(), (*raw_words(command)?.first()?).to_owned()))
        })
        .collect();
    events
        .into_iter()
        .filter(|(event, bee_hook)| {
            let put = put_roles(settings, event, bee_hook, None, Some(""), |roles| {
                roles.events_for = None;
                roles.capture_payload = false;
            });
            matches!(put, Ok(Put::Changed { .. }))
        })
        .map(|(event, _)| event)
        .collect()
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
        assert_eq!(merge(&mut settings, &events, "/opt/bee/bee-hook", "web").unwrap(), events);
        assert_eq!(settings["hooks"]["PreToolUse"][0]["hooks"][0]["command"], "./guard.sh");
        assert_eq!(settings["hooks"]["PreToolUse"][1]["hooks"][0]["command"], command);
        let before = settings.clone();
        assert!(merge(&mut settings, &events, "/opt/bee/bee-hook", "web").unwrap().is_empty());
        assert_eq!(settings, before);
        assert_eq!(configured_events(&settings, "web"), ["PreToolUse", "Stop"].map(String::from).into());
        assert!(configured_events(&settings, "other").is_empty());
        assert_eq!(merge(&mut json!([]), &events, "bee-hook", "web"), Err(MergeError::NotAnObject));
        assert_eq!(merge(&mut json!({"hooks": 3}), &events, "bee-hook", "web"), Err(MergeError::HooksNotAnObject));
    }

    #[test]
    fn another_source_app_replaces_bees_entry_and_uninstall_removes_only_bees() {
        let mut settings = json!({
            "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "./notify.sh"}]}]}
        });
        let original = settings.clone();
        let events: Vec<String> = ["Stop", "SessionStart"].map(String::from).to_vec();
        merge(&mut settings, &events, "bee-hook", "web").unwrap();
        assert_eq!(merge(&mut settings, &events, "bee-hook", "api").unwrap(), events);
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
        assert!(is_event_hook("'/opt/my bee/bee-hook' on Stop --turn --event --source-app 'web'", "web"));
        assert!(!is_event_hook("bee-hook on Stop --turn", "web"));
        assert!(!is_event_hook("bee-hook on Stop --event --source-app \"unbalanced", "web"));
    }

    #[test]
    fn an_entry_is_read_for_its_roles_and_written_back_as_spelt() {
        let block = "\"$CLAUDE_PROJECT_DIR/.claude/steering.md\"";
        let prompt = format!("bee-hook prompt --surface context-json --block {block}");
        let roles = Roles::of_command(&prompt).unwrap();
        assert_eq!(roles.block.as_ref().unwrap().file, block, "the shell expands it, not Bee");
        assert_eq!(roles.command("bee-hook", "UserPromptSubmit").unwrap(), prompt, "one role keeps its subcommand");
        let all = Roles { turn: true, events_for: Some("'my app'".into()), ..roles };
        let on = all.command("bee-hook", "UserPromptSubmit").unwrap();
        assert_eq!(
            on,
            format!(
                "bee-hook on UserPromptSubmit --surface context-json --block {block} --turn --event --source-app 'my app'"
            )
        );
        assert_eq!(Roles::of_command(&on), Some(all.clone()), "read back as written");
        assert_eq!(all.source_app().as_deref(), Some("my app"));
        assert_eq!(Roles::of_command("bee-hook turn").map(|r| r.turn), Some(true));
        assert_eq!(Roles::of_command("bee-hook event --source-app=web").unwrap().source_app().as_deref(), Some("web"));
        // Not Bee's roles: the user's wrapped prompt hook, other subcommands,
        // flags Bee does not know, unbalanced quotes, hostile bytes.
        for other in [
            "bee-hook prompt --surface plain -- ./mine.sh",
            "bee-hook statusline",
            "bee-hook commit",
            "bee-hook on Stop --turn --frobnicate",
            "bee-hook on",
            "bee-hook event --source-app",
            "bee-hook event --source-app=",
            "not-bee turn",
            "bee-hook on Stop --block 'x",
            "",
            "\u{0}\u{7f}'\"\\",
        ] {
            assert_eq!(Roles::of_command(other), None, "{other:?}");
        }
        assert_eq!(Roles::default().command("bee-hook", "Stop"), None);
    }

    /// What the fuzz target holds, over many commands made of the words
    /// that matter: an entry read as Bee's is written back as the same roles.
    #[test]
    fn every_entry_read_is_written_back_as_the_same_roles() {
        let words = [
            "bee-hook",
            "'/a b/bee-hook'",
            "on",
            "event",
            "turn",
            "prompt",
            "Stop",
            "--turn",
            "--event",
            "--source-app",
            "--source-app=",
            "--source-app=w",
            "--capture-payload",
            "--block",
            "--surface",
            "--item",
            "--item-version",
            "'a b'",
            "\"$X/y\"",
            "x=y",
            "''",
            "\\ ",
            "'",
            "--",
            "-x",
            "\t",
            "é",
        ];
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        let mut read = 0;
        for _ in 0..50_000 {
            let mut command = String::new();
            for at in 0..(2 + state % 7) {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                let word =
                    if at == 0 { words[(state % 2) as usize] } else { words[(state % words.len() as u64) as usize] };
                command.push_str(word);
                command.push(' ');
            }
            let Some(roles) = Roles::of_command(&command) else { continue };
            read += 1;
            if let Some(written) = roles.command("bee-hook", "Stop") {
                assert_eq!(Roles::of_command(&written), Some(roles), "{command:?} -> {written:?}");
            }
        }
        assert!(read > 1_000, "the words make Bee's entries often enough: {read}");
    }

    #[test]
    fn putting_roles_leaves_one_bee_entry_per_event_and_keeps_the_users() {
        let mut settings = json!({"hooks": {
        "UserPromptSubmit": [
            {"hooks": [{"type": "command", "command": "./mine.sh"}]},
            {"hooks": [{"type": "command", "command": "bee-hook event --source-app web"}]},
            {"hooks": [{"type": "command", "command": "bee-hook turn", "timeout": 5}]},
            {"hooks": [{"type": "command", "command": "bee-hook prompt --surface plain -- ./wrapped.sh"}]}
        ]}});
        let put =
            put_roles(&mut settings, "UserPromptSubmit", "/b/bee-hook", Some(5), Some(""), |roles| roles.turn = true);
        let one = "/b/bee-hook on UserPromptSubmit --turn --event --source-app web";
        assert_eq!(
            put,
            Ok(Put::Changed {
                before: vec!["bee-hook event --source-app web".into(), "bee-hook turn".into()],
                command: Some(one.into())
            })
        );
        let groups = settings["hooks"]["UserPromptSubmit"].as_array().unwrap();
        let listed: Vec<&str> = groups.iter().flat_map(commands).collect();
        assert_eq!(listed, ["./mine.sh", one, "bee-hook prompt --surface plain -- ./wrapped.sh"]);
        assert_eq!(groups[1]["hooks"][0]["timeout"], 5);
        let before = settings.clone();
        let again =
            put_roles(&mut settings, "UserPromptSubmit", "/b/bee-hook", Some(5), Some(""), |roles| roles.turn = true);
        assert_eq!((again, &settings), (Ok(Put::Unchanged), &before));
        // Taking the event role out leaves the turn alone, in its own form.
        assert_eq!(remove_event_hooks(&mut settings), ["UserPromptSubmit"]);
        let listed: Vec<&str> =
            settings["hooks"]["UserPromptSubmit"].as_array().unwrap().iter().flat_map(commands).collect();
        assert_eq!(listed, ["./mine.sh", "/b/bee-hook turn", "bee-hook prompt --surface plain -- ./wrapped.sh"]);
        // Nothing to put where nothing is: no empty lists left behind.
        let mut empty = json!({});
        assert_eq!(put_roles(&mut empty, "Stop", "bee-hook", None, Some(""), |_| {}), Ok(Put::Unchanged));
        assert_eq!(empty, json!({}));
    }

    /// A tool event's new group matches every tool in the agent's own
    /// spelling: `""`, or no matcher at all where `""` is refused.
    #[test]
    fn a_tool_events_group_takes_the_agents_own_every_tool_matcher() {
        let post = |roles: &mut Roles| roles.post_events_for("app");
        for (matcher, expected) in [(Some(""), json!("")), (Some("*"), json!("*")), (None, Value::Null)] {
            let mut settings = json!({});
            put_roles(&mut settings, "PreToolUse", "bee-hook", None, matcher, post).unwrap();
            assert_eq!(settings["hooks"]["PreToolUse"][0]["matcher"], expected, "{settings}");
            put_roles(&mut settings, "SessionStart", "bee-hook", None, matcher, post).unwrap();
            assert!(settings["hooks"]["SessionStart"][0].get("matcher").is_none(), "{settings}");
        }
    }
}
