//! `beectl hooks install` and `uninstall`: gives Claude Code's events Bee's
//! event role (`bee-hook event`, or `--event` in the one `bee-hook on`
//! entry Bee keeps per event), or takes it out. Every other hook and
//! setting is kept (and keeps its order); an event that already posts for
//! the source app is left alone, so a second run changes nothing, and
//! another source app changes Bee's entry instead of adding one. A change is written atomically after a backup of the old
//! file in `~/.bee/backups` (never beside it, where it would be committed);
//! `--dry-run` prints the diff.

use bee_daemon::events::claude_settings::{self, MINIMAL_EVENTS, REFERENCE_EVENTS, TEAM_EVENTS};
use bee_daemon::rendered::Rendered;
use bee_proto::exit::Exit;
use serde::Serialize;
use serde_json::{Map, Value};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use crate::setup::file_change::FileChange;
use beectl::args::{InstallArgs, UninstallArgs};

/// What `hooks install` did.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Installed {
    schema_version: u32,
    settings: String,
    source_app: String,
    command: String,
    added: Vec<String>,
    changed: bool,
    backup: Option<String>,
    /// The pinned manifest beside the settings: `beectl audit` uses it.
    manifest: Option<String>,
    /// `written`, `kept` (one was there), or why none was written.
    manifest_status: String,
}

pub(crate) fn failed(issue: &str, message: String) -> Rendered {
    crate::render::errors::unavailable(issue, Some(message))
}

/// The binary `name` installed beside this beectl, else the one on PATH.
pub fn sibling(name: &str) -> PathBuf {
    beside(std::env::current_exe().ok().as_deref(), name).unwrap_or_else(|| PathBuf::from(name))
}

/// The file `name` in the folder of `exe`, when there is one.
fn beside(exe: Option<&Path>, name: &str) -> Option<PathBuf> {
    exe?.parent().map(|dir| dir.join(name)).filter(|path| path.is_file())
}

/// beed's name: its binary's, and the name under which beectl is beed.
pub const BEED: &str = "beed";

/// How to start beed: the `beed` installed beside this beectl (a cargo
/// install, a build tree, the archives' `beed -> beectl` link), else this
/// beectl itself under the name `beed` (npm's packages hold no link) — the
/// same version either way; PATH's `beed` only when this process cannot
/// name its own program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Beed {
    /// The program to execute.
    pub program: PathBuf,
    /// The argv[0] to give it, when that is not the program's own name.
    pub arg0: Option<&'static str>,
}

impl Beed {
    /// This beectl's beed, as above.
    pub fn find() -> Beed {
        let exe = std::env::current_exe().ok();
        match (beside(exe.as_deref(), BEED), exe) {
            (Some(beside), _) => Beed { program: beside, arg0: None },
            (None, Some(exe)) => Beed { program: exe, arg0: Some(BEED) },
            (None, None) => Beed { program: PathBuf::from(BEED), arg0: None },
        }
    }

    /// A command that runs beed.
    pub fn command(&self) -> std::process::Command {
        use std::os::unix::process::CommandExt;
        let mut command = std::process::Command::new(&self.program);
        if let Some(arg0) = self.arg0 {
            command.arg0(arg0);
        }
        command
    }
}

/// The `bee-hook` installed beside this beectl, else the one on PATH.
pub fn bee_hook() -> PathBuf {
    sibling("bee-hook")
}

pub(crate) use claude_settings::shell_word;

/// A `settings.json` as found: its path, its text (`None`: no file yet),
/// its value (an empty object for no file).
pub(crate) struct Settings {
    pub path: PathBuf,
    pub before: Option<String>,
    pub value: Value,
}

/// The settings of `project` (`None`: the user's) and the default source app.
pub(crate) fn target(project: Option<&str>) -> Result<(PathBuf, String), Rendered> {
    match project {
        Some(dir) => {
            let (dir, app) = project_dir(dir)?;
            Ok((dir.join(".claude").join("settings.json"), app))
        }
        None => match std::env::var_os("HOME").filter(|h| !h.is_empty()) {
            Some(home) => Ok((PathBuf::from(home).join(".claude").join("settings.json"), "claude-code".to_owned())),
            None => Err(failed("io", "HOME is not set".into())),
        },
    }
}

/// `--project DIR` as a directory that exists (absolute, links resolved),
/// and the source app its events report as by default: its name.
pub(crate) fn project_dir(dir: &str) -> Result<(PathBuf, String), Rendered> {
    let dir = match std::path::absolute(dir).and_then(std::fs::canonicalize) {
        Ok(dir) if dir.is_dir() => dir,
        _ => return Err(Rendered::invalid_usage(format!("--project: {dir} is not a directory"))),
    };
    let app = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "project".into());
    Ok((dir, app))
}

pub(crate) fn load(path: PathBuf) -> Result<Settings, Rendered> {
    let before = FileChange::read_settled(&path).map_err(|message| failed("io", message))?;
    let value = match &before {
        Some(text) if !text.trim().is_empty() => serde_json::from_str::<Value>(text).map_err(|err| {
            failed("settings_invalid", format!("{} is not JSON ({err}); not touched", path.display()))
        })?,
        _ => Value::Object(Map::new()),
    };
    Ok(Settings { path, before, value })
}

impl Settings {
    /// The file's change: its value written out when `changed`, else as it was.
    pub(crate) fn change(&self, changed: bool) -> Result<FileChange, Rendered> {
        let after = if changed {
            // The file's own layout: only the members Bee changed are written anew.
            Some(
                crate::setup::json_layout::like(self.before.as_deref(), &self.value)
                    .map_err(|err| failed("io", err))?,
            )
        } else {
            self.before.clone()
        };
        Ok(FileChange { path: self.path.clone(), before: self.before.clone(), after })
    }
}

/// The change as a diff (`--dry-run`), or written with a backup of the old
/// file in `~/.bee/backups`; the backup's path when one was made.
enum Applied {
    Shown(Rendered),
    Written(Option<String>),
}

fn apply(settings: &Settings, changed: bool, dry_run: bool, what: &str) -> Result<Applied, Rendered> {
    let change = settings.change(changed)?;
    if dry_run {
        return Ok(Applied::Shown(Rendered { exit: Exit::Success, bytes: change.diff(what).into_bytes() }));
    }
    if !changed {
        return Ok(Applied::Written(None));
    }
    match change.write_if_unchanged(true) {
        Ok(saved) => Ok(Applied::Written(saved.map(|p| p.display().to_string()))),
        Err(err) => Err(failed("io", format!("{}: {err}", settings.path.display()))),
    }
}

/// The events to wire: an explicit list, else the reference's twelve or
/// the minimal lifecycle, with the team events added on request.
pub(crate) fn chosen_events(explicit: Vec<String>, reference: bool, team: bool) -> Vec<String> {
    let mut events: Vec<String> = match (explicit.is_empty(), reference) {
        (false, _) => explicit,
        (true, true) => REFERENCE_EVENTS.iter().map(|e| (*e).to_owned()).collect(),
        (true, false) => MINIMAL_EVENTS.iter().map(|e| (*e).to_owned()).collect(),
    };
    if team {
        events.extend(TEAM_EVENTS.iter().map(|e| (*e).to_owned()).filter(|e| !events.contains(e)).collect::<Vec<_>>());
    }
    events
}

/// A source app's name as the hooks report it: no spaces or control characters.
pub(crate) fn check_source_app(source_app: &str) -> Result<(), Rendered> {
    if source_app.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return Err(Rendered::invalid_usage("--source-app: no spaces or control characters"));
    }
    Ok(())
}

pub fn install(args: InstallArgs) -> Rendered {
    let (path, default_app) = match target(args.project.as_deref()) {
        Ok(found) => found,
        Err(rendered) => return rendered,
    };
    let source_app = args.source_app.unwrap_or(default_app);
    if let Err(rendered) = check_source_app(&source_app) {
        return rendered;
    }
    let events = chosen_events(args.events, args.reference, args.team);
    let bee_hook = shell_word(&bee_hook().display().to_string());
    let command = format!("{bee_hook} event --source-app {}", shell_word(&source_app));
    let mut settings = match load(path) {
        Ok(settings) => settings,
        Err(rendered) => return rendered,
    };
    let added = match claude_settings::merge(&mut settings.value, &events, &bee_hook, &source_app) {
        Ok(added) => added,
        Err(err) => return failed("settings_invalid", format!("{}: {err}; not touched", settings.path.display())),
    };
    let backup = match apply(&settings, !added.is_empty(), args.dry_run, "install") {
        Ok(Applied::Shown(diff)) => return diff,
        Ok(Applied::Written(backup)) => backup,
        Err(rendered) => return rendered,
    };
    let (manifest, manifest_status) = pin_manifest(&settings.path, &source_app, &events);
    Rendered::json(
        Exit::Success,
        &Installed {
            schema_version: 1,
            settings: settings.path.display().to_string(),
            source_app,
            command,
            changed: !added.is_empty(),
            added,
            backup,
            manifest,
            manifest_status,
        },
    )
}

/// Writes the manifest the installed hooks match (the events, the source
/// app, the installed Claude Code's version) beside `settings`, unless one
/// is there (it is the user's to keep) or no `claude` answers for its
/// version (a manifest cannot pin what nobody checked).
pub(crate) fn pin_manifest(settings: &Path, source_app: &str, events: &[String]) -> (Option<String>, String) {
    let Some(path) = settings.parent().map(|dir| dir.join(bee_daemon::events::audit::MANIFEST_FILE)) else {
        return (None, "no directory for a manifest".to_owned());
    };
    let shown = path.display().to_string();
    if path.exists() {
        return (Some(shown), "kept".to_owned());
    }
    let Some(version) = bee_daemon::events::audit::installed_claude_version() else {
        return (None, "not written: no claude answered --version to pin".to_owned());
    };
    // `2.1.332 (Claude Code)` pins `2.1`: patch releases keep the events.
    let pinned: String = version.split(['.', ' ']).take(2).collect::<Vec<_>>().join(".");
    let manifest = bee_proto::audit::Manifest {
        schema_version: 1,
        claude_code_version: pinned,
        source_app: source_app.to_owned(),
        required_events: events
            .iter()
            .map(|event| bee_proto::audit::RequiredEvent { event: event.clone(), deadline_seconds: None })
            .collect(),
        evidence_ttl_seconds: None,
        outcome: Vec::new(),
        // Claude Code asks you, at its prompt: you answer its permission
        // requests (edit the owner and time to route them elsewhere).
        wait_policies: if events.iter().any(|event| event == "PermissionRequest") {
            vec![bee_proto::audit::WaitPolicy {
                event: "PermissionRequest".to_owned(),
                tool: None,
                owner: std::env::var("USER").ok().filter(|user| !user.is_empty()).unwrap_or_else(|| "you".to_owned()),
                deadline_seconds: bee_proto::audit::DEFAULT_EVENT_DEADLINE_SECONDS,
            }]
        } else {
            Vec::new()
        },
    };
    let text = match serde_json::to_string_pretty(&manifest) {
        Ok(text) => text + "\n",
        Err(err) => return (None, format!("not written: {err}")),
    };
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)
        .and_then(|mut file| file.write_all(text.as_bytes()));
    match written {
        Ok(()) => (Some(shown), "written; add an outcome check to it, or no run is ever healthy".to_owned()),
        Err(err) => (None, format!("not written: {shown}: {err}")),
    }
}

/// What `hooks uninstall` did.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Uninstalled {
    schema_version: u32,
    settings: String,
    removed: Vec<String>,
    changed: bool,
    backup: Option<String>,
}

pub fn uninstall(args: UninstallArgs) -> Rendered {
    let (path, _) = match target(args.project.as_deref()) {
        Ok(found) => found,
        Err(rendered) => return rendered,
    };
    let mut settings = match load(path) {
        Ok(settings) => settings,
        Err(rendered) => return rendered,
    };
    let removed = claude_settings::remove_event_hooks(&mut settings.value);
    let backup = match apply(&settings, !removed.is_empty(), args.dry_run, "uninstall") {
        Ok(Applied::Shown(diff)) => return diff,
        Ok(Applied::Written(backup)) => backup,
        Err(rendered) => return rendered,
    };
    Rendered::json(
        Exit::Success,
        &Uninstalled {
            schema_version: 1,
            settings: settings.path.display().to_string(),
            changed: !removed.is_empty(),
            removed,
            backup,
        },
    )
}
