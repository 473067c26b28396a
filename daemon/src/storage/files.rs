//! Private files and directories: 0700 directories, 0600 files, no links.

use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
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

/// Creates `dir` and missing parents with mode 0700; an existing `dir` must be
/// a real directory and is tightened to 0700.
pub fn ensure_private_dir(dir: &Path) -> io::Result<()> {
    bee_proto::spool::create_private_dir(dir)?;
    match classify(dir)? {
        PathKind::Directory => fs::set_permissions(dir, fs::Permissions::from_mode(0o700)),
        _ => Err(io::Error::new(io::ErrorKind::InvalidInput, format!("{} is not a directory", dir.display()))),
    }
}

/// Opens `path` for reading only if it is a regular file reached without
/// following a final symlink; O_NONBLOCK so that a FIFO swapped in never
/// blocks the open. Anything else is `InvalidInput`.
pub fn open_regular(path: &Path) -> io::Result<File> {
    let file = OpenOptions::new().read(true).custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK).open(path)?;
    if !file.metadata()?.file_type().is_file() {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("{} is not a regular file", path.display())));
    }
    Ok(file)
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
