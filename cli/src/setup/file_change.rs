//! One file Bee means to change, as it is and as it will be: shown as a
//! unified diff (`--dry-run`), or written atomically after a backup of the
//! old text in `~/.bee/backups` (never beside the file, where it would be
//! committed by accident). A user's file is changed by compare-and-swap
//! ([`FileChange::write_if_unchanged`]): the new file is written beside it
//! and renamed over it only while the file on disk is still the bytes that
//! were read, so an editor writing it meanwhile loses nothing.

use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// A file's text now and after the change (`None`: no file).
#[derive(Debug, Clone)]
pub struct FileChange {
    pub path: PathBuf,
    pub before: Option<String>,
    pub after: Option<String>,
}

impl FileChange {
    /// The file as it is on disk (`None` when there is none), read to
    /// change it: an empty file is read again after a moment, since an
    /// editor that truncates before it writes leaves one for an instant,
    /// and it is empty only when it still is.
    pub fn read_settled(path: &Path) -> Result<Option<String>, String> {
        let first = FileChange::read(path)?;
        if first.as_deref() != Some("") {
            return Ok(first);
        }
        std::thread::sleep(EMPTY_RECHECK);
        FileChange::read(path)
    }

    /// The file as it is on disk (`None` when there is none); an unreadable
    /// or non-regular file is an error, never taken for an absent one.
    pub fn read(path: &Path) -> Result<Option<String>, String> {
        match std::fs::symlink_metadata(path) {
            Ok(meta) if meta.file_type().is_file() => {
                std::fs::read_to_string(path).map(Some).map_err(|err| format!("{}: {err}", path.display()))
            }
            Ok(_) => Err(format!("{} is not a regular file; not touched", path.display())),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(err) => Err(format!("{}: {err}", path.display())),
        }
    }

    pub fn changed(&self) -> bool {
        self.before != self.after
    }

    /// The change as a unified diff (`/dev/null` for a file created or
    /// removed), or a line saying there is none.
    pub fn diff(&self, what: &str) -> String {
        let shown = self.path.display().to_string();
        if !self.changed() {
            return format!("no change to {shown}\n");
        }
        let old_name = if self.before.is_some() { format!("{shown} (now)") } else { "/dev/null".to_owned() };
        let new_name = if self.after.is_some() { format!("{shown} (after {what})") } else { "/dev/null".to_owned() };
        similar::TextDiff::from_lines(self.before.as_deref().unwrap_or(""), self.after.as_deref().unwrap_or(""))
            .unified_diff()
            .header(&old_name, &new_name)
            .to_string()
    }

    /// [`FileChange::write`] of a file someone else may be writing: only
    /// while the file on disk is still [`FileChange::before`] — checked
    /// before the backup, and again just before the new file is renamed
    /// over it. Otherwise nothing is changed, and the error says so.
    pub fn write_if_unchanged(&self, backup: bool) -> std::io::Result<Option<PathBuf>> {
        self.check_unchanged()?;
        self.apply(backup, || self.check_unchanged())
    }

    /// Whether the file on disk is still the bytes that were read.
    fn check_unchanged(&self) -> std::io::Result<()> {
        let now = FileChange::read(&self.path).map_err(std::io::Error::other)?;
        if now == self.before {
            Ok(())
        } else {
            Err(std::io::Error::other(format!(
                "{} changed while Bee was changing it (another program is writing it); nothing was changed: run \
                 the command again",
                self.path.display()
            )))
        }
    }

    /// Backs up the old text (when there was a file and `backup` asks) in
    /// `~/.bee/backups`, then writes the new text atomically with the old
    /// file's mode (0600 for a new one), or removes the file. Returns the
    /// backup's path.
    pub fn write(&self, backup: bool) -> std::io::Result<Option<PathBuf>> {
        self.apply(backup, || Ok(()))
    }

    /// The backup, then the new text or the removal once `still` holds.
    fn apply(&self, backup: bool, still: impl Fn() -> std::io::Result<()>) -> std::io::Result<Option<PathBuf>> {
        let saved = match (&self.before, backup) {
            (Some(text), true) => Some(save_backup(&self.path, text)?),
            _ => None,
        };
        match &self.after {
            Some(text) => replace(&self.path, text, still)?,
            None => {
                still()?;
                match std::fs::remove_file(&self.path) {
                    Err(err) if err.kind() != std::io::ErrorKind::NotFound => return Err(err),
                    _ => {}
                }
            }
        }
        Ok(saved)
    }
}

/// `path` as one file name that says which file it is: `/` becomes `_`
/// (`/home/u/.claude/settings.json` → `home_u_.claude_settings.json`).
pub fn flat_name(path: &Path) -> String {
    let name: String = path.display().to_string().chars().map(|c| if c == '/' { '_' } else { c }).collect();
    name.trim_start_matches('_').to_owned()
}

/// Keeps `text`, the old contents of `path`, in `~/.bee/backups` under a
/// name that says which file it is of and when.
fn save_backup(path: &Path, text: &str) -> std::io::Result<PathBuf> {
    let backups = bee_proto::paths::backups_dir().ok_or_else(|| std::io::Error::other("HOME is not set"))?;
    bee_daemon::storage::files::ensure_private_dir(&backups)?;
    let stamp = bee_proto::time::now_rfc3339().replace([':', '-', '.'], "");
    // The file's own path, flattened: which file a backup is of.
    let name = flat_name(path);
    let mut backup = backups.join(format!("{name}-{stamp}"));
    // Two changes in one millisecond (setup, then undo in a script) keep both.
    let mut n = 1;
    while backup.exists() {
        n += 1;
        backup = backups.join(format!("{name}-{stamp}-{n}"));
    }
    let mut file = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(&backup)?;
    file.write_all(text.as_bytes())?;
    file.sync_all()?;
    Ok(backup)
}

/// How long an empty file is given to be written before it is taken as empty.
const EMPTY_RECHECK: std::time::Duration = std::time::Duration::from_millis(50);

/// Replaces `path` with `text` atomically (a temporary file beside it,
/// renamed over it once `still` says so), keeping the old file's mode.
fn replace(path: &Path, text: &str, still: impl Fn() -> std::io::Result<()>) -> std::io::Result<()> {
    let dir = path.parent().ok_or_else(|| std::io::Error::other("the path has no directory"))?;
    std::fs::create_dir_all(dir)?;
    let mode = std::fs::metadata(path).map(|m| m.permissions().mode() & 0o777).unwrap_or(0o600);
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let temporary = dir.join(format!(".{name}.bee-{}", uuid::Uuid::new_v4().simple()));
    let mut file = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(&temporary)?;
    file.write_all(text.as_bytes())?;
    file.set_permissions(std::fs::Permissions::from_mode(mode))?;
    file.sync_all()?;
    still().and_then(|()| std::fs::rename(&temporary, path)).inspect_err(|_| {
        let _ = std::fs::remove_file(&temporary);
    })
}

/// The directories that writing `path` would create, deepest first.
pub fn missing_dirs(path: &Path) -> Vec<PathBuf> {
    path.ancestors()
        .skip(1)
        .take_while(|dir| !dir.as_os_str().is_empty() && !dir.exists())
        .map(Path::to_owned)
        .collect()
}

/// Removes each of `dirs` (deepest first) that is empty; the ones removed.
pub fn remove_empty_dirs(dirs: &[PathBuf]) -> Vec<PathBuf> {
    dirs.iter().filter(|dir| std::fs::remove_dir(dir).is_ok()).cloned().collect()
}
