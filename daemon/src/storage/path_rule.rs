//! The one path rule for every file Bee reads because something names it —
//! a `--file` of `token estimate`, a context packet's selection, a design
//! manifest's entry or mapping, a skill, an artifact: a physical absolute
//! root, a relative path that stays under it, no link anywhere on the way,
//! a regular file with one link, not a common secret's name, within a size
//! bound, and unchanged while it is read. Checked at the moment of the
//! read, whatever a file on disk says; a refusal is a [`TokenErrorCode`]
//! naming the rule.

use bee_proto::tokens::TokenErrorCode;
use std::fs::{self, Metadata};
use std::io::{self, Read};
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};

/// The root: absolute, a directory, and already its own canonical form (so
/// no component is a link and there is no `.` or `..`).
pub fn physical_root(root: &Path) -> Result<PathBuf, TokenErrorCode> {
    if !root.is_absolute() {
        return Err(TokenErrorCode::RootInvalid);
    }
    let canonical = fs::canonicalize(root).map_err(|_| TokenErrorCode::RootInvalid)?;
    let trimmed = PathBuf::from(root.to_string_lossy().trim_end_matches('/'));
    if canonical != root && canonical != trimmed {
        return Err(TokenErrorCode::PathLink);
    }
    match fs::symlink_metadata(&canonical) {
        Ok(meta) if meta.is_dir() => Ok(canonical),
        _ => Err(TokenErrorCode::RootInvalid),
    }
}

/// The bytes of `relative` under `root` (a [`physical_root`]) by the one
/// path rule, at most `max_bytes` of them: what a server reads because a
/// file on disk (a manifest, a mapping) names it is checked here, at the
/// moment of the read, whatever that file says.
pub fn read_under(root: &Path, relative: &str, max_bytes: u64) -> Result<Vec<u8>, TokenErrorCode> {
    read_checked(root, relative, max_bytes, None)
}

/// What a refusal says, with the rule's name as the token report spells
/// its error codes: `refused by the path rule (path_link)`.
pub fn refusal(code: TokenErrorCode) -> String {
    let name = match serde_json::to_value(code) {
        Ok(serde_json::Value::String(name)) => name,
        _ => format!("{code:?}"),
    };
    format!("refused by the path rule ({name})")
}

/// [`read_under`], and with `seen`, never the same file (device and
/// inode) twice. The rule: a relative path that stays under the root, no link on the
/// way, a regular file with one link (never the same one twice where
/// `seen` keeps count), within `max_bytes`, unchanged while it is read.
pub fn read_checked(
    root: &Path,
    relative: &str,
    max_bytes: u64,
    seen: Option<&mut Vec<(u64, u64)>>,
) -> Result<Vec<u8>, TokenErrorCode> {
    let path = checked_path(root, relative)?;
    let before = fs::symlink_metadata(&path).map_err(not_found_as_missing)?;
    if before.file_type().is_symlink() {
        return Err(TokenErrorCode::PathLink);
    }
    if !before.file_type().is_file() {
        return Err(TokenErrorCode::NotRegularFile);
    }
    if before.nlink() > 1 {
        return Err(TokenErrorCode::HardLink);
    }
    if let Some(seen) = seen {
        let identity = (before.dev(), before.ino());
        if seen.contains(&identity) {
            return Err(TokenErrorCode::DuplicateFile);
        }
        seen.push(identity);
    }
    if before.len() > max_bytes {
        return Err(TokenErrorCode::FileByteLimit);
    }
    // A FIFO or link swapped in after the checks is refused, never waited on.
    let mut file = crate::storage::files::open_regular(&path).map_err(|err| match err.kind() {
        io::ErrorKind::InvalidInput => TokenErrorCode::InputChanged,
        _ => not_found_as_missing(err),
    })?;
    let opened = file.metadata().map_err(|_| TokenErrorCode::Io)?;
    if !same_file(&before, &opened) {
        return Err(TokenErrorCode::InputChanged);
    }
    let bytes = read_at_most(&mut file, max_bytes)?;
    let after = fs::symlink_metadata(&path).map_err(|_| TokenErrorCode::InputChanged)?;
    let after_open = file.metadata().map_err(|_| TokenErrorCode::Io)?;
    if !same_file(&before, &after) || !same_file(&before, &after_open) || after.len() != bytes.len() as u64 {
        return Err(TokenErrorCode::InputChanged);
    }
    Ok(bytes)
}

/// Same identity, size and modification time.
fn same_file(a: &Metadata, b: &Metadata) -> bool {
    a.dev() == b.dev()
        && a.ino() == b.ino()
        && a.len() == b.len()
        && a.mtime() == b.mtime()
        && a.mtime_nsec() == b.mtime_nsec()
}

fn not_found_as_missing(err: io::Error) -> TokenErrorCode {
    match err.kind() {
        io::ErrorKind::NotFound => TokenErrorCode::Missing,
        _ if err.raw_os_error() == Some(libc::ELOOP) => TokenErrorCode::PathLink,
        _ => TokenErrorCode::Io,
    }
}

/// Resolves `relative` under `root`, refusing escapes, links on the way and
/// secret-looking names.
fn checked_path(root: &Path, relative: &str) -> Result<PathBuf, TokenErrorCode> {
    let given = Path::new(relative);
    if given.is_absolute() || relative.contains('\\') {
        return Err(TokenErrorCode::PathEscape);
    }
    let mut path = root.to_path_buf();
    let components: Vec<Component<'_>> = given.components().collect();
    for (at, component) in components.iter().enumerate() {
        match component {
            Component::Normal(name) => {
                let name = name.to_str().ok_or(TokenErrorCode::InvalidUnicode)?;
                if is_sensitive(name) {
                    return Err(TokenErrorCode::SensitiveName);
                }
                path.push(name);
                let last = at + 1 == components.len();
                match fs::symlink_metadata(&path) {
                    Ok(meta) if meta.file_type().is_symlink() => return Err(TokenErrorCode::PathLink),
                    Ok(meta) if !last && !meta.is_dir() => return Err(TokenErrorCode::NotRegularFile),
                    Ok(_) => {}
                    Err(err) => return Err(not_found_as_missing(err)),
                }
            }
            Component::CurDir => {}
            Component::ParentDir | Component::RootDir | Component::Prefix(_) => {
                return Err(TokenErrorCode::PathEscape);
            }
        }
    }
    if path == root {
        return Err(TokenErrorCode::NotRegularFile);
    }
    Ok(path)
}

/// A guard against the common secret files, not a secret scanner.
fn is_sensitive(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    const EXACT: [&str; 16] = [
        ".env",
        ".netrc",
        ".npmrc",
        ".pypirc",
        ".git-credentials",
        ".pgpass",
        ".htpasswd",
        "credentials",
        "credentials.json",
        "id_rsa",
        "id_dsa",
        "id_ecdsa",
        "id_ed25519",
        ".ssh",
        ".aws",
        ".gnupg",
    ];
    const SUFFIXES: [&str; 7] = [".pem", ".key", ".p12", ".pfx", ".keystore", ".jks", ".kdbx"];
    EXACT.contains(&lower.as_str())
        || lower.starts_with(".env.")
        || (lower.starts_with("id_") && lower.ends_with("_key"))
        || SUFFIXES.iter().any(|suffix| lower.ends_with(suffix))
        || lower.starts_with("secrets.")
        || lower.starts_with("service-account") && lower.ends_with(".json")
}

/// Reads at most `max_bytes`; more is `file_byte_limit`, never a cut.
pub fn read_at_most(reader: &mut impl Read, max_bytes: u64) -> Result<Vec<u8>, TokenErrorCode> {
    let mut bytes = Vec::new();
    reader.take(max_bytes.saturating_add(1)).read_to_end(&mut bytes).map_err(|_| TokenErrorCode::Io)?;
    if bytes.len() as u64 > max_bytes {
        return Err(TokenErrorCode::FileByteLimit);
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sensitive_names() {
        for name in [".env", ".env.local", "id_rsa", "id_ed25519", "server.pem", "tls.key", "credentials", ".netrc"] {
            assert!(is_sensitive(name), "{name}");
        }
        for name in ["prompt.txt", "environment.md", "keys.rs", "main.rs", "id_card.txt"] {
            assert!(!is_sensitive(name), "{name}");
        }
    }
}
