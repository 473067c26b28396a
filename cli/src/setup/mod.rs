//! `beectl setup`: one idempotent command that wires Claude Code to Bee (the
//! turn marks, the events, optionally a prompt block — one `bee-hook` entry
//! per event, so one process each; Bee's status line wrapped around the one
//! already there) — or, with `--agent`, Gemini CLI, Qwen Code, Copilot CLI
//! or Codex (their turn marks and events, in their own settings; Codex's
//! trusted in its config.toml) — pins the manifest the audit checks, and
//! installs and starts beed as a user service. What it changed
//! is kept in a receipt in `~/.bee/setup`, so that `beectl setup --undo`
//! takes out exactly that and nothing else: when the settings are still
//! the bytes setup wrote (the receipt keeps their hash), the original file
//! the receipt keeps comes back byte for byte; when somebody changed them,
//! only Bee's entries go and their edits stay.
//!
//! Its parts, used by this file and by the commands that share them:
//! [`hooks`] (`beectl hooks install | uninstall`, the hook command lines),
//! [`service`] (beed as a systemd or launchd user service) and
//! [`file_change`] (a file Bee changes: shown as a diff, or written
//! atomically after a backup).

mod cline;
pub(crate) mod cline_hooks;
pub(crate) mod codex_trust;
pub mod file_change;
pub mod hooks;
pub mod json_layout;
pub mod run;
pub mod service;

use bee_daemon::context::artifacts::sha256;
use bee_daemon::events::agent_hooks::{self, HookedAgent};
use bee_daemon::events::claude_settings::{self, BlockRole, Put};
use bee_daemon::rendered::Rendered;
use bee_proto::exit::Exit;
use bee_proto::ledger::Provider;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

use beectl::args::SetupArgs;
use file_change::FileChange;
use hooks::{failed, shell_word};
use service::Manager;

/// One hook setup put in: `replaced` is the command Bee's own entry ran
/// before, `also_replaced` Bee's other entries the one entry took over.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
struct HookChange {
    event: String,
    command: String,
    replaced: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    also_replaced: Vec<String>,
    /// The event's hook groups before and after (`null`: none), so that
    /// undo puts back exactly what was there while nobody changed them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    groups_before: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    groups_after: Option<Value>,
}

/// The status line before setup wrapped or set it, and after.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct StatusLineChange {
    before: Option<Value>,
    after: Value,
}

/// A file setup wrote, with its text (to know it is unchanged) and the
/// backup of what it replaced.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct WrittenFile {
    path: PathBuf,
    text: String,
    backup: Option<PathBuf>,
}

/// What setup changed in one settings file.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Receipt {
    schema_version: u32,
    settings: PathBuf,
    /// The backup of the settings as setup first found them, when there was
    /// a file (a receipt from before [`Receipt::original`] was kept reads
    /// the original from it).
    original_backup: Option<PathBuf>,
    /// The settings' bytes as setup first found them (`None`: no file), so
    /// that undo gives back exactly them without relying on a backup the
    /// user may have pruned. The user's own file, holding what it holds
    /// (an `env` with tokens, say): the receipt is 0600 in Bee's 0700
    /// `~/.bee/setup`, as the backup is in `~/.bee/backups`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    original: Option<String>,
    /// The sha256 of the settings as setup last wrote them: while the file
    /// is still those bytes nobody edited it, and undo puts
    /// [`Receipt::original`] back byte for byte. `None` once a setup found
    /// the file edited since the one before (the original would undo that
    /// edit too), and in a receipt from before it was kept. Only a hash:
    /// a second copy of the file is not needed to know it is unchanged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    written_sha256: Option<String>,
    /// There was no settings file before setup.
    created: bool,
    /// The directories setup made for the settings file, deepest first.
    created_dirs: Vec<PathBuf>,
    hooks: Vec<HookChange>,
    status_line: Option<StatusLineChange>,
    manifest: Option<WrittenFile>,
    /// The trust setup gave Bee's hooks in Codex's `config.toml`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    codex_trust: Option<CodexTrust>,
}

/// Codex's `config.toml` and the trust entries setup wrote there last.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct CodexTrust {
    config: PathBuf,
    entries: Vec<codex_trust::TrustEntry>,
}

/// The user service setup installed (one for all settings files).
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ServiceReceipt {
    schema_version: u32,
    manager: Manager,
    files: Vec<WrittenFile>,
    /// The directories setup made for them, deepest first.
    #[serde(default)]
    created_dirs: Vec<PathBuf>,
    /// Who started beed: `systemd`, `launchd`, `beed` (directly), or `already_running`.
    started: String,
}

/// The answer of `setup` and `setup --undo`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Report {
    schema_version: u32,
    action: &'static str,
    settings: String,
    changed: bool,
    /// Each change, as a sentence.
    changes: Vec<String>,
    /// What was left alone, and why.
    kept: Vec<String>,
    backups: Vec<String>,
    manifest: Option<String>,
    manifest_status: Option<String>,
    service: ServiceReport,
    receipt: Option<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct ServiceReport {
    manager: Manager,
    files: Vec<String>,
    /// `systemd`, `launchd`, `beed`, `already_running`, `stopped`, `left_running`, `failed` or `none`.
    state: String,
    pid: Option<u32>,
    message: Option<String>,
}

/// What `beectl setup` prints of its answer.
fn answered(answer: Result<Answer, Rendered>) -> Rendered {
    match answer {
        Ok(Answer::Diff(text)) => Rendered { exit: Exit::Success, bytes: text.into_bytes() },
        Ok(Answer::Done(report)) => render(&report),
        Err(rendered) => rendered,
    }
}

enum Answer {
    Diff(String),
    Done(Box<Report>),
}

/// JSON when piped, sentences on a terminal.
fn render(report: &Report) -> Rendered {
    if !std::io::IsTerminal::is_terminal(&std::io::stdout()) {
        return Rendered::json(Exit::Success, report);
    }
    use std::fmt::Write as _;
    let mut out = String::new();
    let verb = if report.action == "undo" { "setup --undo" } else { "setup" };
    let _ = writeln!(out, "{verb}: {}", if report.changed { "done" } else { "nothing to change" });
    for line in &report.changes {
        let _ = writeln!(out, "  changed  {line}");
    }
    for line in &report.kept {
        let _ = writeln!(out, "  kept     {line}");
    }
    for backup in &report.backups {
        let _ = writeln!(out, "  backup   {backup}");
    }
    if let Some(status) = &report.manifest_status {
        let _ = writeln!(out, "  manifest {} ({status})", report.manifest.as_deref().unwrap_or("-"));
    }
    let service = &report.service;
    let _ = writeln!(
        out,
        "  service  {} {}{}",
        service.manager.as_str(),
        service.state,
        service.message.as_deref().map(|m| format!(": {m}")).unwrap_or_default()
    );
    Rendered { exit: Exit::Success, bytes: out.into_bytes() }
}

/// The receipt file of `settings`: its path, flattened.
fn receipt_path(settings: &Path) -> Result<PathBuf, Rendered> {
    let dir = bee_proto::paths::setup_dir().ok_or_else(|| failed("io", "HOME is not set".into()))?;
    Ok(dir.join(format!("settings-{}.json", crate::setup::file_change::flat_name(settings))))
}

fn service_receipt_path() -> Result<PathBuf, Rendered> {
    let dir = bee_proto::paths::setup_dir().ok_or_else(|| failed("io", "HOME is not set".into()))?;
    Ok(dir.join("service.json"))
}

fn read_json<T: for<'de> Deserialize<'de>>(path: &Path) -> Result<Option<T>, Rendered> {
    match FileChange::read(path).map_err(|message| failed("io", message))? {
        None => Ok(None),
        Some(text) => serde_json::from_str(&text)
            .map(Some)
            .map_err(|err| failed("receipt_invalid", format!("{}: {err}; remove it to start over", path.display()))),
    }
}

fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<(), Rendered> {
    let text = serde_json::to_string_pretty(value).map_err(|err| failed("io", err.to_string()))? + "\n";
    let dir = path.parent().ok_or_else(|| failed("io", "a receipt path has no directory".into()))?;
    bee_daemon::storage::files::ensure_private_dir(dir)
        .map_err(|err| failed("io", format!("{}: {err}", dir.display())))?;
    FileChange { path: path.to_owned(), before: None, after: Some(text) }
        .write(false)
        .and_then(|_| {
            // A settings receipt holds the user's original file: only its
            // owner reads it, whatever mode an older receipt had.
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
        })
        .map_err(|err| failed("io", format!("{}: {err}", path.display())))
}

fn sentence(change: &HookChange) -> String {
    match &change.replaced {
        Some(old) if change.also_replaced.is_empty() => {
            format!("{}: `{old}` now runs `{}`", change.event, change.command)
        }
        Some(old) => {
            let others: Vec<String> = change.also_replaced.iter().map(|c| format!("`{c}`")).collect();
            format!("{}: `{old}`, {} now one entry running `{}`", change.event, others.join(", "), change.command)
        }
        None => format!("{}: added `{}`", change.event, change.command),
    }
}

/// The agent `--agent` names, and the settings file setup changes for it
/// with the source app its events report as by default.
fn target(args: &SetupArgs) -> Result<(&'static HookedAgent, PathBuf, String), Rendered> {
    let agent = agent_hooks::hooked(args.agent)
        .ok_or_else(|| Rendered::invalid_usage(format!("--agent {}: Bee wires no hooks of it", args.agent.as_str())))?;
    if agent.provider == Provider::Claude {
        let (path, app) = hooks::target(args.hooks.project.as_deref())?;
        return Ok((agent, path, app));
    }
    if agent.provider == Provider::Codex && args.hooks.project.is_some() {
        return Err(Rendered::invalid_usage(
            "--agent codex --project: Codex trusts a project's hooks only once the project is trusted; wire the user's \
             (~/.codex/hooks.json)",
        ));
    }
    let (path, app) = match &args.hooks.project {
        Some(dir) => {
            let (project, app) = hooks::project_dir(dir)?;
            (agent.project_settings(&project), app)
        }
        None => {
            let path = agent.user_settings(&|name| std::env::var_os(name));
            (path.ok_or_else(|| failed("io", "HOME is not set".into()))?, agent.source_app.to_owned())
        }
    };
    Ok((agent, path, app))
}

fn wire(args: &SetupArgs) -> Result<Answer, Rendered> {
    let (agent, path, default_app) = target(args)?;
    let claude = agent.provider == Provider::Claude;
    let source_app = args.hooks.source_app.clone().unwrap_or(default_app);
    hooks::check_source_app(&source_app)?;
    let events = if claude || !args.hooks.events.is_empty() {
        hooks::chosen_events(args.hooks.events.clone(), args.hooks.reference, args.hooks.team)
    } else {
        agent.events.iter().map(|event| (*event).to_owned()).collect()
    };
    let turn_events = agent.turn_events();
    let block = match &args.prompt_block {
        Some(file) => match std::path::absolute(file).and_then(std::fs::canonicalize) {
            Ok(path) if path.is_file() => Some(path),
            _ => return Err(Rendered::invalid_usage(format!("--prompt-block: {file} is not a file"))),
        },
        None => None,
    };
    let bee_hook = shell_word(&hooks::bee_hook().display().to_string());
    let mut settings = hooks::load(path)?;
    let receipt_file = receipt_path(&settings.path)?;
    let mut receipt = read_json::<Receipt>(&receipt_file)?.unwrap_or_else(|| Receipt {
        schema_version: 1,
        settings: settings.path.clone(),
        original_backup: None,
        original: None,
        written_sha256: None,
        created: false,
        created_dirs: Vec::new(),
        hooks: Vec::new(),
        status_line: None,
        manifest: None,
        codex_trust: None,
    });

    // One Bee entry per event, playing every role setup wires there.
    let mut wired: Vec<&str> = events.iter().map(String::as_str).collect();
    for event in turn_events.iter().chain(block.is_some().then_some(&"UserPromptSubmit")) {
        if !wired.contains(event) {
            wired.push(event);
        }
    }
    let mut hook_changes = Vec::new();
    for event in wired {
        let posts = events.iter().any(|e| e == event);
        let turn = turn_events.contains(&event);
        let block_here = block.as_ref().filter(|_| event == "UserPromptSubmit").map(|block| BlockRole {
            file: shell_word(&block.display().to_string()),
            surface: "context-json".to_owned(),
            item: None,
            item_version: None,
        });
        let timeout = (turn || block_here.is_some()).then_some(agent.timeout);
        let groups_before = claude_settings::event_groups(&settings.value, event);
        let put =
            claude_settings::put_roles(&mut settings.value, event, &bee_hook, timeout, agent.tool_matcher, |roles| {
                if posts {
                    roles.post_events_for(&source_app);
                }
                if turn {
                    roles.turn = true;
                    roles.agent = agent.agent_word().map(str::to_owned);
                }
                if block_here.is_some() {
                    roles.block = block_here;
                }
            })
            .map_err(|err| failed("settings_invalid", format!("{err}; not touched")))?;
        if let Put::Changed { before, command } = put {
            let mut before = before.into_iter();
            hook_changes.push(HookChange {
                event: event.to_owned(),
                command: command.unwrap_or_default(),
                replaced: before.next(),
                also_replaced: before.collect(),
                groups_before: Some(groups_before),
                groups_after: Some(claude_settings::event_groups(&settings.value, event)),
            });
        }
    }
    let mut changes: Vec<String> = hook_changes.iter().map(sentence).collect();
    let mut kept = Vec::new();
    // The status line is Claude Code's alone.
    let status_line =
        if claude { wire_status_line(&mut settings.value, &bee_hook, &mut changes, &mut kept) } else { None };

    let (manager, unit_changes) = service_changes(args)?;
    let settings_changed = !hook_changes.is_empty() || status_line.is_some();
    let settings_change = settings.change(settings_changed)?;
    let trust = match agent.provider {
        Provider::Codex => {
            Some(codex_trust_change(agent, &settings.path, &settings.value, receipt.codex_trust.as_ref())?)
        }
        _ => None,
    };

    if args.hooks.dry_run {
        let mut text = settings_change.diff("setup");
        if let Some((change, _)) = &trust {
            text.push_str(&change.diff("setup"));
        }
        text.push_str(&service_dry_run(manager, &unit_changes));
        return Ok(Answer::Diff(text));
    }

    let mut backups = Vec::new();
    if settings_changed {
        let missing = crate::setup::file_change::missing_dirs(&settings.path);
        let backup = settings_change
            .write_if_unchanged(true)
            .map_err(|err| failed("io", format!("{}: {err}", settings.path.display())))?;
        let written = settings_change.after.as_deref().map(|text| sha256(text.as_bytes()));
        if receipt.hooks.is_empty() && receipt.status_line.is_none() {
            // The first change setup makes here: what undo goes back to.
            receipt.original_backup.clone_from(&backup);
            receipt.original.clone_from(&settings.before);
            receipt.written_sha256 = written;
            receipt.created = settings.before.is_none();
            receipt.created_dirs = missing;
        } else if still_written(&receipt, settings.before.as_deref()) {
            // Still the bytes the last setup wrote: the original stays what
            // an unedited file undoes to.
            receipt.written_sha256 = written;
        } else {
            // Edited since the last setup: the original bytes would take
            // that edit out too, so undo only ever takes Bee's entries out.
            receipt.written_sha256 = None;
        }
        backups.extend(backup.map(|b| b.display().to_string()));
        receipt.hooks.extend(hook_changes);
        if let Some(change) = status_line {
            match &mut receipt.status_line {
                Some(recorded) => recorded.after = change.after,
                None => receipt.status_line = Some(change),
            }
        }
    }
    if let Some((change, trusted)) = trust {
        if change.changed() {
            let backup = change
                .write_if_unchanged(true)
                .map_err(|err| failed("io", format!("{}: {err}", change.path.display())))?;
            backups.extend(backup.map(|b| b.display().to_string()));
            changes.push(format!(
                "{}: trusted Bee's {} hook(s), as Codex's /hooks would",
                change.path.display(),
                trusted.entries.len()
            ));
        }
        receipt.codex_trust = Some(trusted);
    }
    // The audit's manifest pins a Claude Code version and its events.
    let (manifest, manifest_status) = if claude {
        hooks::pin_manifest(&settings.path, &source_app, &events)
    } else {
        (
            None,
            format!(
                "not written: the pinned manifest is Claude Code's; {} is audited by its receipts",
                agent.provider.as_str()
            ),
        )
    };
    if manifest_status.starts_with("written")
        && let Some(path) = &manifest
        && let Ok(Some(text)) = FileChange::read(Path::new(path))
    {
        changes.push(format!("pinned the manifest {path}"));
        receipt.manifest = Some(WrittenFile { path: PathBuf::from(path), text, backup: None });
    }
    let recorded = !receipt.hooks.is_empty()
        || receipt.status_line.is_some()
        || receipt.manifest.is_some()
        || receipt.codex_trust.as_ref().is_some_and(|trust| !trust.entries.is_empty());
    if recorded {
        write_json(&receipt_file, &receipt)?;
    }

    let service = install_service(manager, &unit_changes, &mut changes, &mut backups)?;
    Ok(Answer::Done(Box::new(Report {
        schema_version: 1,
        action: "setup",
        settings: settings.path.display().to_string(),
        changed: !changes.is_empty(),
        changes,
        kept,
        backups,
        manifest,
        manifest_status: Some(manifest_status),
        service,
        receipt: recorded.then(|| receipt_file.display().to_string()),
    })))
}

/// The user service setup installs (`--service`): its manager and the
/// changes to its unit files.
fn service_changes(args: &SetupArgs) -> Result<(Manager, Vec<FileChange>), Rendered> {
    let manager = Manager::from_name(&args.service).unwrap_or_else(Manager::native);
    let units = service::unit_files(manager).map_err(|message| failed("io", message))?;
    let mut unit_changes = Vec::new();
    for (path, text) in units {
        let before = FileChange::read(&path).map_err(|message| failed("io", message))?;
        unit_changes.push(FileChange { path, before, after: Some(text) });
    }
    Ok((manager, unit_changes))
}

/// What setup would do of the user service (`--dry-run`): its units'
/// diffs, the commands it would run, and whether it would start beed.
fn service_dry_run(manager: Manager, unit_changes: &[FileChange]) -> String {
    let mut text: String = unit_changes.iter().map(|unit| unit.diff("setup")).collect();
    let running = crate::commands::daemon::running().is_some();
    let unit_files: Vec<PathBuf> = unit_changes.iter().map(|u| u.path.clone()).collect();
    if unit_changes.iter().any(FileChange::changed) {
        for command in service::start_commands(manager, &unit_files) {
            text.push_str(&format!("would run: {}\n", command.join(" ")));
        }
    }
    text.push_str(if running { "beed runs already\n" } else { "would start beed\n" });
    text
}

/// The trust Codex (`agent`) needs to run Bee's hooks in `settings` (its
/// `hooks.json` at `path`): the change to the `config.toml` beside it, and the entries
/// it then holds — those of a setup `before` that are no longer Bee's
/// places go.
fn codex_trust_change(
    agent: &HookedAgent,
    path: &Path,
    settings: &Value,
    before: Option<&CodexTrust>,
) -> Result<(FileChange, CodexTrust), Rendered> {
    let config = path.with_file_name("config.toml");
    let entries = codex_trust::bee_entries(settings, &codex_trust::source(agent, path));
    let stale: Vec<codex_trust::TrustEntry> = before
        .map(|trust| trust.entries.iter().filter(|entry| !entries.contains(entry)).cloned().collect())
        .unwrap_or_default();
    let text = FileChange::read_settled(&config).map_err(|message| failed("io", message))?;
    let after = codex_trust::put(text.as_deref(), &stale, &entries).ok_or_else(|| {
        failed(
            "settings_invalid",
            format!("{}: not TOML, or its `hooks` is not a table; not touched", config.display()),
        )
    })?;
    let after = if text.is_none() && after.is_empty() { None } else { Some(after) };
    Ok((FileChange { path: config.clone(), before: text, after }, CodexTrust { config, entries }))
}

/// Sets Bee's status line, or wraps the one there so that it keeps running
/// with Bee's line after it; the change, when there was one.
fn wire_status_line(
    settings: &mut Value,
    bee_hook: &str,
    changes: &mut Vec<String>,
    kept: &mut Vec<String>,
) -> Option<StatusLineChange> {
    let before = settings.get("statusLine").cloned();
    let after = match claude_settings::status_line_command(settings) {
        Some(command) if claude_settings::runs_bee_hook(command, "statusline") => return None,
        Some(command) => {
            let wrapped = format!("{bee_hook} statusline --append -- sh -c {}", shell_word(command));
            changes.push(format!("statusLine: `{command}` kept, Bee's line after it (`{wrapped}`)"));
            let mut after = before.clone().unwrap_or(Value::Null);
            after["command"] = Value::String(wrapped);
            after
        }
        None if before.is_none() => {
            let command = format!("{bee_hook} statusline");
            changes.push(format!("statusLine: set to `{command}`"));
            json!({"type": "command", "command": command, "padding": 0})
        }
        None => {
            kept.push("statusLine: left as it is (it runs no command to wrap)".to_owned());
            return None;
        }
    };
    let root = settings.as_object_mut()?;
    root.insert("statusLine".to_owned(), after.clone());
    Some(StatusLineChange { before, after })
}

/// Writes the unit files, starts them with the service manager (or beed
/// directly where the manager does not answer), and notes it all.
fn install_service(
    manager: Manager,
    unit_changes: &[FileChange],
    changes: &mut Vec<String>,
    backups: &mut Vec<String>,
) -> Result<ServiceReport, Rendered> {
    let receipt_file = service_receipt_path()?;
    let mut receipt = read_json::<ServiceReceipt>(&receipt_file)?.unwrap_or(ServiceReceipt {
        schema_version: 1,
        manager,
        files: Vec::new(),
        created_dirs: Vec::new(),
        started: String::new(),
    });
    let mut wrote_units = false;
    for unit in unit_changes.iter().filter(|u| u.changed()) {
        for dir in crate::setup::file_change::missing_dirs(&unit.path) {
            if !receipt.created_dirs.contains(&dir) {
                receipt.created_dirs.push(dir);
            }
        }
        let backup =
            unit.write_if_unchanged(true).map_err(|err| failed("io", format!("{}: {err}", unit.path.display())))?;
        changes.push(format!("wrote {}", unit.path.display()));
        backups.extend(backup.iter().map(|b| b.display().to_string()));
        let text = unit.after.clone().unwrap_or_default();
        match receipt.files.iter_mut().find(|f| f.path == unit.path) {
            Some(recorded) => recorded.text = text,
            None => receipt.files.push(WrittenFile { path: unit.path.clone(), text, backup }),
        }
        wrote_units = true;
    }
    let mut message = None;
    let mut state = String::new();
    if wrote_units {
        // A beed started by hand holds the socket path the new unit is to
        // listen on: it stops first, so the service owns the socket.
        if let Some(before) = crate::commands::daemon::running()
            && !before.socket_activated
            && manager != Manager::None
        {
            let halted = crate::commands::daemon::halt();
            if halted.outcome == "stopped" {
                changes.push(format!(
                    "stopped the beed that ran by hand (pid {}) so the service owns its socket",
                    before.pid
                ));
            }
        }
        let files: Vec<PathBuf> = unit_changes.iter().map(|u| u.path.clone()).collect();
        match service::run_all(&service::start_commands(manager, &files)) {
            Ok(()) => state = manager.as_str().to_owned(),
            Err(why) => message = Some(format!("{why}; started beed directly")),
        }
    }
    let launched = crate::commands::daemon::launch();
    if state.is_empty() || launched.outcome == "failed" {
        state = match launched.outcome {
            "started" => "beed".to_owned(),
            other => other.to_owned(),
        };
    }
    if launched.outcome == "started" {
        changes.push(format!("started beed (pid {})", launched.pid.unwrap_or(0)));
    }
    if let Some(said) = launched.message.filter(|_| launched.outcome == "failed") {
        message = Some(message.map_or(said.clone(), |m| format!("{m}; {said}")));
    }
    if receipt.started.is_empty() || receipt.started == "already_running" {
        receipt.started.clone_from(&state);
    }
    if !receipt.files.is_empty() || receipt.started != "already_running" {
        write_json(&receipt_file, &receipt)?;
    }
    Ok(ServiceReport {
        manager,
        files: unit_changes.iter().map(|u| u.path.display().to_string()).collect(),
        state,
        pid: launched.pid,
        message,
    })
}

fn undo(args: &SetupArgs) -> Result<Answer, Rendered> {
    let (_, path, _) = target(args)?;
    let settings = hooks::load(path)?;
    let receipt_file = receipt_path(&settings.path)?;
    let receipt = read_json::<Receipt>(&receipt_file)?;
    let mut changes = Vec::new();
    let mut kept = Vec::new();
    let mut file_changes = Vec::new();

    if let Some(receipt) = &receipt {
        let original = original_text(receipt)?;
        // Still exactly what setup wrote: nobody edited it since.
        let unedited = still_written(receipt, settings.before.as_deref());
        let mut value = settings.value.clone();
        for change in receipt.hooks.iter().rev() {
            let exactly = match (&change.groups_before, &change.groups_after) {
                (Some(before), Some(after)) => {
                    claude_settings::restore_groups(&mut value, &change.event, before, after)
                }
                _ => false,
            };
            // Edited since: Bee's entry alone goes back (or goes).
            let undone = exactly
                || match &change.replaced {
                    Some(old) => claude_settings::restore_hook(&mut value, &change.event, &change.command, old),
                    None => !claude_settings::remove_hooks(&mut value, Some(&[change.event.as_str()]), |c| {
                        c == change.command
                    })
                    .is_empty(),
                };
            if undone {
                changes.push(format!("{}: took out `{}`", change.event, change.command));
            } else {
                kept.push(format!("{}: `{}` is no longer there", change.event, change.command));
            }
        }
        if let Some(status_line) = &receipt.status_line {
            if value.get("statusLine") == Some(&status_line.after) {
                match (&status_line.before, value.as_object_mut()) {
                    (Some(before), Some(root)) => {
                        root.insert("statusLine".to_owned(), before.clone());
                    }
                    (None, Some(root)) => {
                        root.remove("statusLine");
                    }
                    _ => {}
                }
                changes.push("statusLine: back to what it was".to_owned());
            } else {
                kept.push("statusLine: changed since setup; left as it is".to_owned());
            }
        }
        let original_value = original.as_deref().and_then(settings_value);
        if let Some(original_value) = &original_value {
            keep_hooks_object(&mut value, &settings.value, original_value);
        }
        // A receipt without the hash (from before it was kept, or a setup
        // that found the file edited) knows the file unedited only by its
        // value: what the original reads as, once Bee's entries are out.
        let same_value = receipt.written_sha256.is_none() && original_value.as_ref() == Some(&value);
        let after = if unedited && receipt.created {
            // Setup made the file: unedited, it goes again.
            None
        } else if let (true, Some(text)) = (unedited, &original) {
            // Nobody changed it since: the file as it was, byte for byte,
            // whatever it held.
            Some(text.clone())
        } else if receipt.created && value.as_object().is_some_and(serde_json::Map::is_empty) {
            None
        } else if same_value {
            original
        } else if value == settings.value {
            settings.before.clone()
        } else {
            kept.push(format!("{}: edited since setup; only Bee's entries were taken out", settings.path.display()));
            Some(json_layout::like(settings.before.as_deref(), &value).map_err(|err| failed("io", err))?)
        };
        file_changes.push(FileChange { path: settings.path.clone(), before: settings.before.clone(), after });
        if let Some(trust) = &receipt.codex_trust {
            let now = FileChange::read_settled(&trust.config).map_err(|message| failed("io", message))?;
            if let Some(text) = &now {
                match codex_trust::take(text, &trust.entries) {
                    Some(after) => {
                        let after = (!after.is_empty()).then_some(after);
                        file_changes.push(FileChange { path: trust.config.clone(), before: now.clone(), after });
                    }
                    None => kept.push(format!("{}: no longer TOML; left as it is", trust.config.display())),
                }
            }
        }
        if let Some(manifest) = &receipt.manifest {
            let now = FileChange::read(&manifest.path).map_err(|message| failed("io", message))?;
            if now.as_deref() == Some(manifest.text.as_str()) {
                file_changes.push(FileChange { path: manifest.path.clone(), before: now, after: None });
            } else if now.is_some() {
                kept.push(format!("{}: changed since setup; kept", manifest.path.display()));
            }
        }
    } else {
        kept.push(format!("no setup receipt for {}: nothing to undo there", settings.path.display()));
    }

    let made_dirs: Vec<PathBuf> = receipt.iter().flat_map(|r| r.created_dirs.iter()).cloned().collect();
    undo_files(args, &settings.path, &receipt_file, file_changes, changes, kept, &made_dirs)
}

/// The rest of an undo, once the agent's own files' changes are known
/// (`settings` the file or folder setup wired, `receipt_file` its
/// receipt): the user service goes with the last setup that used it, every
/// change is written (or shown, `--dry-run`), the directories setup made
/// go while empty, and the receipts are removed.
#[allow(clippy::too_many_arguments)]
fn undo_files(
    args: &SetupArgs,
    settings: &Path,
    receipt_file: &Path,
    mut file_changes: Vec<FileChange>,
    mut changes: Vec<String>,
    mut kept: Vec<String>,
    made_dirs: &[PathBuf],
) -> Result<Answer, Rendered> {
    // The service goes with the last settings file setup wired.
    let service_file = service_receipt_path()?;
    let others = other_receipts(receipt_file);
    let service_receipt = if others == 0 { read_json::<ServiceReceipt>(&service_file)? } else { None };
    if others > 0 {
        kept.push(format!("the user service: {others} other setup(s) still use it"));
    }
    if let Some(service) = &service_receipt {
        for file in &service.files {
            let now = FileChange::read(&file.path).map_err(|message| failed("io", message))?;
            if now.as_deref() != Some(file.text.as_str()) {
                kept.push(format!("{}: changed since setup; kept", file.path.display()));
                continue;
            }
            let before = match &file.backup {
                Some(backup) => FileChange::read(backup).map_err(|message| failed("io", message))?,
                None => None,
            };
            file_changes.push(FileChange { path: file.path.clone(), before: now, after: before });
        }
    }

    if args.hooks.dry_run {
        let mut text: String = file_changes.iter().map(|c| c.diff("setup --undo")).collect();
        if let Some(service) = &service_receipt {
            for command in service::stop_commands(service.manager) {
                text.push_str(&format!("would run: {}\n", command.join(" ")));
            }
            if service.started == "beed" {
                text.push_str("would stop beed\n");
            }
        }
        for line in &kept {
            text.push_str(&format!("kept: {line}\n"));
        }
        return Ok(Answer::Diff(text));
    }

    let mut service_report = ServiceReport {
        manager: Manager::from_name(&args.service).unwrap_or_else(Manager::native),
        files: Vec::new(),
        state: "none".to_owned(),
        pid: None,
        message: None,
    };
    if let Some(service) = &service_receipt {
        service_report.manager = service.manager;
        let stopped = match service.started.as_str() {
            "systemd" | "launchd" => service::run_all(&service::stop_commands(service.manager)).map(|()| None),
            "beed" => {
                let halted = crate::commands::daemon::halt();
                match halted.outcome {
                    "failed" => Err(halted.message.unwrap_or_default()),
                    _ => Ok(halted.pid),
                }
            }
            _ => {
                service_report.state = "left_running".to_owned();
                kept.push("beed: it ran before setup; left running".to_owned());
                Ok(None)
            }
        };
        match stopped {
            Ok(pid) if service_report.state != "left_running" => {
                service_report.state = "stopped".to_owned();
                service_report.pid = pid;
                changes.push("stopped beed".to_owned());
            }
            Ok(_) => {}
            Err(why) => {
                service_report.state = "failed".to_owned();
                service_report.message = Some(why);
            }
        }
    }
    let mut backups = Vec::new();
    for change in file_changes.iter().filter(|c| c.changed()) {
        let backup =
            change.write_if_unchanged(true).map_err(|err| failed("io", format!("{}: {err}", change.path.display())))?;
        backups.extend(backup.map(|b| b.display().to_string()));
        let done = if change.after.is_none() { "removed" } else { "restored" };
        changes.push(format!("{done} {}", change.path.display()));
        service_report.files.extend(
            service_receipt
                .iter()
                .flat_map(|s| &s.files)
                .filter(|f| f.path == change.path)
                .map(|f| f.path.display().to_string()),
        );
    }
    if let Some(service) = &service_receipt
        && !service_report.files.is_empty()
        && let Err(why) = service::run_all(&service::after_removal_commands(service.manager))
    {
        service_report.message.get_or_insert(why);
    }
    let made_dirs: Vec<PathBuf> =
        made_dirs.iter().chain(service_receipt.iter().flat_map(|s| s.created_dirs.iter())).cloned().collect();
    for dir in crate::setup::file_change::remove_empty_dirs(&made_dirs) {
        changes.push(format!("removed the directory {} that setup made", dir.display()));
    }
    for done in [Some(receipt_file), service_receipt.as_ref().map(|_| service_file.as_path())].into_iter().flatten() {
        match std::fs::remove_file(done) {
            Err(err) if err.kind() != std::io::ErrorKind::NotFound => {
                return Err(failed("io", format!("{}: {err}", done.display())));
            }
            _ => {}
        }
    }
    Ok(Answer::Done(Box::new(Report {
        schema_version: 1,
        action: "undo",
        settings: settings.display().to_string(),
        changed: !changes.is_empty(),
        changes,
        kept,
        backups,
        manifest: None,
        manifest_status: None,
        service: service_report,
        receipt: None,
    })))
}

/// The settings as setup first found them (`None`: there was no file): in
/// the receipt, or, in a receipt from before it kept them, in the backup.
fn original_text(receipt: &Receipt) -> Result<Option<String>, Rendered> {
    if receipt.original.is_some() || receipt.created {
        return Ok(receipt.original.clone());
    }
    match &receipt.original_backup {
        Some(backup) => FileChange::read(backup).map_err(|message| failed("io", message)),
        None => Ok(None),
    }
}

/// A settings text's value by the rule [`hooks::load`] reads settings by
/// (an empty file is `{}`); `None` when it is not JSON.
fn settings_value(text: &str) -> Option<Value> {
    if text.trim().is_empty() { Some(Value::Object(serde_json::Map::new())) } else { serde_json::from_str(text).ok() }
}

/// Taking Bee's last entries out of `hooks` takes the emptied object with
/// it; when the user's original file had a `hooks` object (`"hooks": {}`)
/// and the file had one before the undo, it stays, at its original place,
/// so an edited file keeps the key its owner wrote.
fn keep_hooks_object(value: &mut Value, found: &Value, original: &Value) {
    let Some(original) = original.as_object() else { return };
    let Some(at) = original.keys().position(|key| key == "hooks") else { return };
    if found.get("hooks").is_none() || !original.get("hooks").is_some_and(Value::is_object) {
        return;
    }
    if let Some(root) = value.as_object_mut()
        && !root.contains_key("hooks")
    {
        let at = at.min(root.len());
        root.shift_insert(at, "hooks".to_owned(), Value::Object(serde_json::Map::new()));
    }
}

/// Whether the settings file's text (`None`: no file) is still the bytes
/// setup last wrote there, so nobody edited it since. Compared by hash, not
/// by value: an edit that reads the same (`{}` taken out, a key moved, a
/// newline) is still an edit, and the value of a file Bee wrote back need
/// not be its original's.
fn still_written(receipt: &Receipt, text: Option<&str>) -> bool {
    match (&receipt.written_sha256, text) {
        (Some(written), Some(text)) => *written == sha256(text.as_bytes()),
        _ => false,
    }
}

/// How many settings files other than `ours` setup still has receipts for.
fn other_receipts(ours: &Path) -> usize {
    let Some(dir) = ours.parent() else { return 0 };
    let Ok(entries) = std::fs::read_dir(dir) else { return 0 };
    entries
        .flatten()
        .filter(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            name.starts_with("settings-") && name.ends_with(".json") && entry.path() != ours
        })
        .count()
}
