//! `beectl hooks install`: merges `bee-hook event` hooks into Claude Code's
//! `settings.json`. Every hook and setting already there is kept (and keeps
//! its order); an event that already runs `bee-hook event` for the source app
//! is left alone, so a second run changes nothing. A change is written
//! atomically after a backup of the old file; `--dry-run` prints the diff.

use bee_daemon::events::claude_settings::{self, REFERENCE_EVENTS};
use bee_daemon::rendered::Rendered;
use bee_proto::exit::Exit;
use bee_proto::ledger::LedgerUnavailable;
use serde::Serialize;
use serde_json::{Map, Value};
use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use beectl::args::InstallArgs;

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
}

fn failed(issue: &str, message: String) -> Rendered {
    Rendered::json(Exit::Unavailable, &LedgerUnavailable::new(issue, Some(message)))
}

/// The `bee-hook` installed beside this beectl, else the one on PATH.
pub fn bee_hook() -> PathBuf {
    std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|dir| dir.join("bee-hook")))
        .filter(|path| path.is_file())
        .unwrap_or_else(|| PathBuf::from("bee-hook"))
}

/// A word the shell keeps as one argument.
fn shell_word(word: &str) -> String {
    if !word.is_empty() && word.chars().all(|c| c.is_ascii_alphanumeric() || "/._-+:@".contains(c)) {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

pub fn install(args: InstallArgs) -> Rendered {
    let (settings_path, default_app) = match &args.project {
        Some(dir) => {
            let dir = match std::path::absolute(dir).and_then(std::fs::canonicalize) {
                Ok(dir) if dir.is_dir() => dir,
                _ => return Rendered::invalid_usage(format!("--project: {dir} is not a directory")),
            };
            let app = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "project".into());
            (dir.join(".claude").join("settings.json"), app)
        }
        None => match std::env::var_os("HOME").filter(|h| !h.is_empty()) {
            Some(home) => (PathBuf::from(home).join(".claude").join("settings.json"), "claude-code".to_owned()),
            None => return failed("io", "HOME is not set".into()),
        },
    };
    let source_app = args.source_app.unwrap_or(default_app);
    if source_app.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return Rendered::invalid_usage("--source-app: no spaces or control characters");
    }
    let events: Vec<String> =
        if args.events.is_empty() { REFERENCE_EVENTS.iter().map(|e| (*e).to_owned()).collect() } else { args.events };
    let bee_hook = bee_hook().display().to_string();
    let command = format!("{} event --source-app {}", shell_word(&bee_hook), shell_word(&source_app));

    let before = match std::fs::symlink_metadata(&settings_path) {
        Ok(meta) if meta.file_type().is_file() => match std::fs::read_to_string(&settings_path) {
            Ok(text) => Some(text),
            Err(err) => return failed("io", format!("{}: {err}", settings_path.display())),
        },
        Ok(_) => return failed("io", format!("{} is not a regular file; not touched", settings_path.display())),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => None,
        Err(err) => return failed("io", format!("{}: {err}", settings_path.display())),
    };
    let mut settings = match &before {
        Some(text) if !text.trim().is_empty() => match serde_json::from_str::<Value>(text) {
            Ok(value) => value,
            Err(err) => {
                return failed(
                    "settings_invalid",
                    format!("{} is not JSON ({err}); not touched", settings_path.display()),
                );
            }
        },
        _ => Value::Object(Map::new()),
    };
    let added = match claude_settings::merge(&mut settings, &events, &command, &source_app) {
        Ok(added) => added,
        Err(err) => return failed("settings_invalid", format!("{}: {err}; not touched", settings_path.display())),
    };
    let after = match serde_json::to_string_pretty(&settings) {
        Ok(text) => text + "\n",
        Err(err) => return failed("io", err.to_string()),
    };
    let shown = settings_path.display().to_string();
    if args.dry_run {
        let old = before.unwrap_or_default();
        let diff = similar::TextDiff::from_lines(&old, &after)
            .unified_diff()
            .header(&format!("{shown} (now)"), &format!("{shown} (after install)"))
            .to_string();
        let body = if added.is_empty() { format!("no change to {shown}\n") } else { diff };
        return Rendered { exit: Exit::Success, bytes: body.into_bytes() };
    }
    let mut backup = None;
    if !added.is_empty() {
        match write(&settings_path, before.as_deref(), &after) {
            Ok(saved) => backup = saved.map(|p| p.display().to_string()),
            Err(err) => return failed("io", format!("{shown}: {err}")),
        }
    }
    Rendered::json(
        Exit::Success,
        &Installed {
            schema_version: 1,
            settings: shown,
            source_app,
            command,
            changed: !added.is_empty(),
            added,
            backup,
        },
    )
}

/// Backs up `before` (when there was a file) and replaces the file with
/// `after` atomically, keeping its mode. Returns the backup's path.
fn write(path: &Path, before: Option<&str>, after: &str) -> std::io::Result<Option<PathBuf>> {
    let dir = path.parent().ok_or_else(|| std::io::Error::other("settings path has no directory"))?;
    std::fs::create_dir_all(dir)?;
    let mode = std::fs::metadata(path).map(|m| m.permissions().mode() & 0o777).unwrap_or(0o600);
    let backup = match before {
        Some(text) => {
            let stamp = bee_proto::time::now_rfc3339().replace([':', '-', '.'], "");
            let backup = dir.join(format!("settings.json.bee-backup-{stamp}"));
            let mut file = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(&backup)?;
            file.write_all(text.as_bytes())?;
            file.sync_all()?;
            Some(backup)
        }
        None => None,
    };
    let temporary = dir.join(format!(".settings.json.bee-{}", uuid::Uuid::new_v4().simple()));
    let mut file = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(&temporary)?;
    file.write_all(after.as_bytes())?;
    file.set_permissions(std::fs::Permissions::from_mode(mode))?;
    file.sync_all()?;
    std::fs::rename(&temporary, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&temporary);
    })?;
    Ok(backup)
}
