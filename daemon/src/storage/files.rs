//! Private files and directories: 0700 directories, 0600 files, no links.

use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

/// What a path turned out to be when we looked without following links.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathKind {
    Missing,
    Directory,
    RegularFile,
    /// A symlink, socket, FIFO or device: never opened by a reader.
    Unsupported,
}

/// Classifies `path` without following a final symlink.
pub fn classify(path: &Path) -> io::Result<PathKind> {
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_dir() => Ok(PathKind::Directory),
        Ok(meta) if meta.file_type().is_file() => Ok(PathKind::RegularFile),
        Ok(_) => Ok(PathKind::Unsupported),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(PathKind::Missing),
        Err(err) => Err(err),
    }
}

/// Creates `dir` and missing parents with mode 0700. An existing `dir` must be
/// a real directory of ours and is tightened to 0700, and so is every
/// directory between it and `.bee` (itself included): a `.bee` or `usage/`
/// left 0755 or 0777 would show the stores' names and sizes to everyone.
pub fn ensure_private_dir(dir: &Path) -> io::Result<()> {
    bee_proto::spool::create_private_dir(dir)?;
    let bee_dir = bee_proto::paths::bee_dir().and_then(|bee| std::path::absolute(bee).ok());
    let dir = std::path::absolute(dir)?;
    tighten(&dir)?;
    if let Some(bee_dir) = bee_dir.filter(|bee| dir.starts_with(bee)) {
        for ancestor in dir.ancestors().skip(1).take_while(|a| a.starts_with(&bee_dir)) {
            tighten(ancestor)?;
        }
    }
    Ok(())
}

/// Makes a directory of ours 0700; refuses one that is not ours.
fn tighten(dir: &Path) -> io::Result<()> {
    let meta = fs::symlink_metadata(dir)?;
    if !meta.file_type().is_dir() {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("{} is not a directory", dir.display())));
    }
    let us = rustix::process::geteuid().as_raw();
    if meta.uid() != us {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "{} belongs to uid {}, not to this user (uid {us}); refusing to keep Bee's files there",
                dir.display(),
                meta.uid()
            ),
        ));
    }
    if meta.mode() & 0o777 != 0o700 {
        fs::set_permissions(dir, fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}

/// Opens `path` for reading only if it is a regular file reached without
/// following a final symlink; O_NONBLOCK so that a FIFO swapped in never
/// blocks the open. Anything else is `InvalidInput`.
/// Bytes the regular files directly in `dir` take: a store's size.
pub fn dir_size(dir: &Path) -> io::Result<u64> {
    let mut size = 0;
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        if entry.file_type()?.is_file() {
            size += entry.metadata()?.len();
        }
    }
    Ok(size)
}

pub fn open_regular(path: &Path) -> io::Result<File> {
    let file = OpenOptions::new().read(true).custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK).open(path)?;
    if !file.metadata()?.file_type().is_file() {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("{} is not a regular file", path.display())));
    }
    Ok(file)
}

/// The trimmed text of a small regular file Bee wrote (a mark, a secret, a
/// URL), read without following a link; at most 4 KiB is read.
pub fn read_small_text(path: &Path) -> io::Result<String> {
    use std::io::Read;
    let mut text = String::new();
    open_regular(path)?.take(4096).read_to_string(&mut text)?;
    Ok(text.trim().to_owned())
}

/// The whole text of a regular file (a config, a manifest), read without
/// following a link; a file over `limit` bytes is an error, never cut short.
pub fn read_text_at_most(path: &Path, limit: u64) -> io::Result<String> {
    use std::io::Read;
    let mut text = String::new();
    open_regular(path)?.take(limit + 1).read_to_string(&mut text)?;
    if text.len() as u64 > limit {
        return Err(io::Error::new(io::ErrorKind::InvalidData, format!("larger than {limit} bytes")));
    }
    Ok(text)
}

/// The largest settings file Bee reads (`config.toml`).
pub const CONFIG_LIMIT: u64 = 1 << 20;

/// Bee's `config.toml`, read whole and parsed as `T`; `None` when there is
/// no home or no file. An error says which file and why, never quoting it.
pub fn read_config<T: serde::de::DeserializeOwned>() -> Result<Option<T>, String> {
    let Some(path) = bee_proto::paths::config_file() else { return Ok(None) };
    let text = match read_text_at_most(&path, CONFIG_LIMIT) {
        Ok(text) => text,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(format!("{}: {err}", path.display())),
    };
    toml::from_str(&text).map(Some).map_err(|err| config_error(&path, &err))
}

/// A `config.toml` that does not parse, named by toml's message and the byte
/// where it went wrong — not toml's quote of the line, which may hold a
/// credential (`[export] headers`) and would reach a log or an agent.
pub fn config_error(path: &Path, err: &toml::de::Error) -> String {
    let at = err.span().map(|span| format!(" (at byte {})", span.start)).unwrap_or_default();
    format!("{}: {}{at}", path.display(), err.message().trim_end())
}

/// Opens (creating with 0600 if needed) a regular file for reading and writing,
/// refusing to follow a symlink.
pub fn open_private_file(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
}

/// Writes `bytes` to a new file at `path` atomically (a temporary file
/// beside it, synced, then renamed over it), 0600.
pub fn write_private(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_private_with(path, bytes, true)
}

/// [`write_private`] without waiting for the disk: for a note that is as
/// good lost as written (a crash then loses it, never leaves it half).
pub fn write_private_unsynced(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_private_with(path, bytes, false)
}

fn write_private_with(path: &Path, bytes: &[u8], synced: bool) -> io::Result<()> {
    use std::io::Write;
    let temporary = path.with_extension(format!("tmp-{}", uuid::Uuid::new_v4().simple()));
    let written = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&temporary)
        .and_then(|mut file| file.write_all(bytes).and_then(|()| if synced { file.sync_all() } else { Ok(()) }))
        .and_then(|()| fs::rename(&temporary, path));
    if written.is_err() {
        let _ = fs::remove_file(&temporary);
    }
    written
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_text_is_read_whole_or_refused_never_cut() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        let text = "# a line of a long config\n".repeat(400);
        std::fs::write(&path, &text).unwrap();
        assert_eq!(read_text_at_most(&path, text.len() as u64).unwrap(), text);
        let refused = read_text_at_most(&path, text.len() as u64 - 1).unwrap_err();
        assert_eq!(refused.kind(), io::ErrorKind::InvalidData);
        std::os::unix::fs::symlink(&path, dir.path().join("link")).unwrap();
        assert!(read_text_at_most(&dir.path().join("link"), CONFIG_LIMIT).is_err(), "a link is not followed");
    }

    #[test]
    fn a_config_error_does_not_quote_the_line() {
        let text = "[export]\nheaders = { Authorization = \"Bearer secret-token\n";
        let err = toml::from_str::<toml::Table>(text).unwrap_err();
        assert!(err.to_string().contains("secret-token"), "toml's own message quotes the line: {err}");
        let said = config_error(Path::new("config.toml"), &err);
        assert!(said.starts_with("config.toml: ") && said.contains("at byte"), "{said}");
        assert!(!said.contains("secret-token"), "{said}");
    }
}
