//! The one path rule for the files a command or an MCP server reads under
//! a root: `token estimate`'s inputs, context packets' selections, design
//! bundles' checks. Every safety check is made by the CLI itself (with the
//! caller's view of the filesystem).
//!
//! A file is taken only when its root is a physical absolute directory, its
//! path is relative and stays under the root, no component is a link, it is
//! a regular file with one link, not selected twice, not a common secret
//! file, within the byte limits, strict UTF-8 without NUL or a UTF-16/32
//! BOM, and unchanged between the checks and the end of the read.

use bee_proto::tokens::{MAX_INPUT_BYTES, MAX_TOTAL_BYTES, TokenErrorCode};
use std::fs::{self, Metadata};
use std::io::{self, IsTerminal, Read};
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};

use crate::args::Selection;

/// The first failure: its code and the 1-based input to blame, if one is.
pub type InputFailure = (TokenErrorCode, Option<u64>);

/// One input's text and where it came from.
pub struct Input {
    pub selection: Selection,
    pub text: String,
}

/// Reads every selection in order; the first failure wins.
/// `stdin_text`, when given, is what `--stdin` reads instead of the process's stdin.
pub fn read_all(
    root: Option<&str>,
    selections: &[Selection],
    stdin_text: Option<&[u8]>,
) -> Result<Vec<Input>, InputFailure> {
    let needs_root = selections.iter().any(|s| matches!(s, Selection::File(_)));
    // With only --stdin the root is never opened, not even the current directory.
    let mut files = if needs_root { Some(Files::open(root).map_err(|code| (code, None))?) } else { None };
    let mut total = 0u64;
    let mut inputs = Vec::with_capacity(selections.len());
    for (index, selection) in selections.iter().enumerate() {
        let ordinal = Some(index as u64 + 1);
        let bytes = match (selection, files.as_mut()) {
            (Selection::Stdin, _) => match stdin_text {
                Some(mut text) => read_bounded(&mut text),
                None => read_stdin(),
            },
            (Selection::File(relative), Some(files)) => files.read(relative),
            (Selection::File(_), None) => Err(TokenErrorCode::RootInvalid),
        };
        let text = bytes.and_then(|bytes| counted(&mut total, bytes)).map_err(|code| (code, ordinal))?;
        inputs.push(Input { selection: selection.clone(), text });
    }
    Ok(inputs)
}

/// Text read so far, `bytes` more: within the total limit and plain text.
pub fn counted(total: &mut u64, bytes: Vec<u8>) -> Result<String, TokenErrorCode> {
    *total += bytes.len() as u64;
    if *total > MAX_TOTAL_BYTES {
        return Err(TokenErrorCode::TotalByteLimit);
    }
    plain_text(bytes)
}

/// Files read under one root by `--file`'s path rules: the root resolved
/// once, and the same file (device and inode) never read twice.
pub struct Files {
    root: PathBuf,
    seen: Vec<(u64, u64)>,
}

impl Files {
    pub fn open(root: Option<&str>) -> Result<Files, TokenErrorCode> {
        Ok(Files { root: physical_root(root)?, seen: Vec::new() })
    }

    /// The bytes of `relative` under the root.
    pub fn read(&mut self, relative: &str) -> Result<Vec<u8>, TokenErrorCode> {
        read_file(&self.root, relative, &mut self.seen)
    }
}

/// The root: absolute, a directory, and already its own canonical form (so
/// no component is a link and there is no `.` or `..`).
pub fn physical_root(root: Option<&str>) -> Result<PathBuf, TokenErrorCode> {
    let root = match root {
        Some(root) => PathBuf::from(root),
        None => std::env::current_dir().map_err(|_| TokenErrorCode::RootInvalid)?,
    };
    if !root.is_absolute() {
        return Err(TokenErrorCode::RootInvalid);
    }
    let canonical = fs::canonicalize(&root).map_err(|_| TokenErrorCode::RootInvalid)?;
    let trimmed = PathBuf::from(root.to_string_lossy().trim_end_matches('/'));
    if canonical != root && canonical != trimmed {
        return Err(TokenErrorCode::PathLink);
    }
    match fs::symlink_metadata(&canonical) {
        Ok(meta) if meta.is_dir() => Ok(canonical),
        _ => Err(TokenErrorCode::RootInvalid),
    }
}

fn read_file(root: &Path, relative: &str, seen: &mut Vec<(u64, u64)>) -> Result<Vec<u8>, TokenErrorCode> {
    read_checked(root, relative, MAX_INPUT_BYTES, Some(seen))
}

/// The bytes of `relative` under `root` (a [`physical_root`]) by the one
/// path rule, at most `max_bytes` of them: what a server reads because a
/// file on disk (a manifest, a mapping) names it is checked here, at the
/// moment of the read, whatever that file says.
pub fn read_under(root: &Path, relative: &str, max_bytes: u64) -> Result<Vec<u8>, TokenErrorCode> {
    read_checked(root, relative, max_bytes, None)
}

/// The rule's name for a refusal (`path_escape`, `path_link`, …), as the
/// token report spells its error codes.
pub fn rule_name(code: TokenErrorCode) -> String {
    match serde_json::to_value(code) {
        Ok(serde_json::Value::String(name)) => name,
        _ => format!("{code:?}"),
    }
}

/// The rule: a relative path that stays under the root, no link on the
/// way, a regular file with one link (never the same one twice where
/// `seen` keeps count), within `max_bytes`, unchanged while it is read.
fn read_checked(
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
    let mut file = bee_daemon::storage::files::open_regular(&path).map_err(|err| match err.kind() {
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

fn read_stdin() -> Result<Vec<u8>, TokenErrorCode> {
    let stdin = io::stdin();
    if stdin.is_terminal() {
        return Err(TokenErrorCode::StdinNotRedirected);
    }
    read_bounded(&mut stdin.lock())
}

/// Reads at most the per-input limit; more is `file_byte_limit`, never a cut.
fn read_bounded(reader: &mut impl Read) -> Result<Vec<u8>, TokenErrorCode> {
    read_at_most(reader, MAX_INPUT_BYTES)
}

/// Reads at most `max_bytes`; more is `file_byte_limit`, never a cut.
fn read_at_most(reader: &mut impl Read, max_bytes: u64) -> Result<Vec<u8>, TokenErrorCode> {
    let mut bytes = Vec::new();
    reader.take(max_bytes.saturating_add(1)).read_to_end(&mut bytes).map_err(|_| TokenErrorCode::Io)?;
    if bytes.len() as u64 > max_bytes {
        return Err(TokenErrorCode::FileByteLimit);
    }
    Ok(bytes)
}

/// Strict UTF-8 plain text: no NUL, no UTF-16/32 byte-order mark. A UTF-8
/// BOM stays and counts as U+FEFF; nothing is trimmed or normalised.
fn plain_text(bytes: Vec<u8>) -> Result<String, TokenErrorCode> {
    const FOREIGN_BOMS: [&[u8]; 4] = [b"\x00\x00\xfe\xff", b"\xff\xfe\x00\x00", b"\xfe\xff", b"\xff\xfe"];
    if FOREIGN_BOMS.iter().any(|bom| bytes.starts_with(bom)) || bytes.contains(&0) {
        return Err(TokenErrorCode::InvalidText);
    }
    String::from_utf8(bytes).map_err(|_| TokenErrorCode::InvalidUnicode)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_rules() {
        assert_eq!(plain_text(b"\xef\xbb\xbfhi\r\n".to_vec()).unwrap(), "\u{feff}hi\r\n");
        assert_eq!(plain_text(b"\xff\xfeh\x00".to_vec()), Err(TokenErrorCode::InvalidText));
        assert_eq!(plain_text(b"\xfe\xff\x00h".to_vec()), Err(TokenErrorCode::InvalidText));
        assert_eq!(plain_text(b"a\x00b".to_vec()), Err(TokenErrorCode::InvalidText));
        assert_eq!(plain_text(b"caf\xe9".to_vec()), Err(TokenErrorCode::InvalidUnicode));
        assert_eq!(plain_text(b"\xed\xa0\x80".to_vec()), Err(TokenErrorCode::InvalidUnicode));
    }

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
