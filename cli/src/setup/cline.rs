//! Cline's hooks, as `beectl setup --agent cline` wires them: Cline runs an
//! executable file per event from its hooks folder (`$CLINE_DIR/hooks`,
//! else `~/.cline/hooks`), the file named by the event, the event's JSON on
//! its stdin (found in Cline 3.0.65's `@cline/shared` storage paths and
//! its hook-file loader, and by running it). Bee's turn marks are two such
//! files, `TaskStart` and `TaskComplete` (its top agent's run starting and
//! ending), each running `bee-hook turn --agent cline`.
//!
//! A folder holds one file per event: a file of the user's own there is
//! never replaced (setup refuses, saying so). The receipt keeps what setup
//! wrote; undo removes each file while it is still those bytes. Only the
//! turn marks are wired: Cline's envelopes are not Claude Code's, so the
//! audit's event receipts, which read that shape, are not posted from it.

use bee_daemon::rendered::Rendered;
use serde::{Deserialize, Serialize};
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

use super::cline_hooks::{hooks_dir, is_bees, script, turn_events};
use super::file_change::{FileChange, missing_dirs};
use super::hooks::{bee_hook, failed, shell_word};
use super::{
    Answer, Report, WrittenFile, install_service, read_json, receipt_path, service_changes, service_dry_run,
    undo_files, write_json,
};
use beectl::args::SetupArgs;

/// What setup wrote for Cline: its hook files and the folders it made.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ClineReceipt {
    schema_version: u32,
    hooks_dir: PathBuf,
    files: Vec<WrittenFile>,
    created_dirs: Vec<PathBuf>,
}

/// What setup changes for Cline refuses: a project's hooks (Cline reads
/// those from the project's own folders; Bee wires the user's), events of
/// the audit's and a prompt block (Cline's envelopes are not Claude Code's).
fn refused(args: &SetupArgs) -> Option<Rendered> {
    let why = if args.hooks.project.is_some() {
        "--agent cline --project: Bee wires the user's Cline hooks (~/.cline/hooks), not a project's"
    } else if !args.hooks.events.is_empty() || args.hooks.reference || args.hooks.team {
        "--agent cline: Bee wires only its turn marks there (Cline's events are not Claude Code's envelopes)"
    } else if args.prompt_block.is_some() {
        "--agent cline --prompt-block: Cline's prompt hook takes no context from Bee"
    } else {
        return None;
    };
    Some(Rendered::invalid_usage(why))
}

/// The folder and the receipt of Cline's hooks.
fn places() -> Result<(PathBuf, PathBuf), Rendered> {
    let dir = hooks_dir(&|name| std::env::var_os(name)).ok_or_else(|| failed("io", "HOME is not set".into()))?;
    let receipt = receipt_path(&dir)?;
    Ok((dir, receipt))
}

pub(super) fn wire(args: &SetupArgs) -> Result<Answer, Rendered> {
    if let Some(refused) = refused(args) {
        return Err(refused);
    }
    let (dir, receipt_file) = places()?;
    let text = script(&shell_word(&bee_hook().display().to_string()));
    let mut file_changes = Vec::new();
    for event in turn_events() {
        let path = dir.join(event);
        let before = FileChange::read(&path).map_err(|message| failed("io", message))?;
        if before.as_deref().is_some_and(|found| !is_bees(found)) {
            return Err(failed(
                "settings_invalid",
                format!(
                    "{}: a hook of your own; Cline runs one file per event there, so Bee's turn mark cannot be added \
                     beside it: not touched",
                    path.display()
                ),
            ));
        }
        file_changes.push(FileChange { path, before, after: Some(text.clone()) });
    }
    let (manager, unit_changes) = service_changes(args)?;
    if args.hooks.dry_run {
        let mut diff: String = file_changes.iter().map(|change| change.diff("setup")).collect();
        diff.push_str(&service_dry_run(manager, &unit_changes));
        return Ok(Answer::Diff(diff));
    }
    let mut receipt = read_json::<ClineReceipt>(&receipt_file)?.unwrap_or(ClineReceipt {
        schema_version: 1,
        hooks_dir: dir.clone(),
        ..ClineReceipt::default()
    });
    let mut changes = Vec::new();
    let mut backups = Vec::new();
    for change in &file_changes {
        let executable = std::fs::metadata(&change.path).is_ok_and(|meta| meta.permissions().mode() & 0o700 == 0o700);
        if !change.changed() && executable {
            continue;
        }
        for made in missing_dirs(&change.path) {
            if !receipt.created_dirs.contains(&made) {
                receipt.created_dirs.push(made);
            }
        }
        let parent = change.path.parent().unwrap_or(&dir);
        bee_daemon::storage::files::ensure_private_dir(parent)
            .map_err(|err| failed("io", format!("{}: {err}", parent.display())))?;
        let backup = change
            .write_if_unchanged(true)
            .and_then(|backup| {
                // Cline runs the file itself: its owner's alone, and executable.
                std::fs::set_permissions(&change.path, std::fs::Permissions::from_mode(0o700)).map(|()| backup)
            })
            .map_err(|err| failed("io", format!("{}: {err}", change.path.display())))?;
        backups.extend(backup.map(|b| b.display().to_string()));
        let event = change.path.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default();
        changes.push(format!("{event}: wrote {} running `bee-hook turn --agent cline`", change.path.display()));
        receipt.files.retain(|file| file.path != change.path);
        receipt.files.push(WrittenFile {
            path: change.path.clone(),
            text: change.after.clone().unwrap_or_default(),
            backup: None,
        });
    }
    if !receipt.files.is_empty() {
        write_json(&receipt_file, &receipt)?;
    }
    let service = install_service(manager, &unit_changes, &mut changes, &mut backups)?;
    Ok(Answer::Done(Box::new(Report {
        schema_version: 1,
        action: "setup",
        settings: dir.display().to_string(),
        changed: !changes.is_empty(),
        changes,
        kept: Vec::new(),
        backups,
        manifest: None,
        manifest_status: Some(
            "not written: the pinned manifest is Claude Code's; cline is measured by its turn marks".to_owned(),
        ),
        service,
        receipt: (!receipt.files.is_empty()).then(|| receipt_file.display().to_string()),
    })))
}

pub(super) fn undo(args: &SetupArgs) -> Result<Answer, Rendered> {
    if let Some(refused) = refused(args) {
        return Err(refused);
    }
    let (dir, receipt_file) = places()?;
    let receipt = read_json::<ClineReceipt>(&receipt_file)?;
    let (mut file_changes, mut kept) = (Vec::new(), Vec::new());
    match &receipt {
        Some(receipt) => {
            for file in &receipt.files {
                let now = FileChange::read(&file.path).map_err(|message| failed("io", message))?;
                match now {
                    Some(text) if text == file.text => {
                        file_changes.push(FileChange { path: file.path.clone(), before: Some(text), after: None });
                    }
                    Some(_) => kept.push(format!("{}: changed since setup; kept", file.path.display())),
                    None => kept.push(format!("{}: no longer there", file.path.display())),
                }
            }
        }
        None => kept.push(format!("no setup receipt for {}: nothing to undo there", dir.display())),
    }
    let made_dirs: Vec<PathBuf> = receipt.iter().flat_map(|r| r.created_dirs.iter()).cloned().collect();
    undo_files(args, &dir, &receipt_file, file_changes, Vec::new(), kept, &made_dirs)
}
