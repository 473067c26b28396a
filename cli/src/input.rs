//! The selected inputs of `token estimate` and of context packets, read by
//! the CLI itself (with the caller's view of the filesystem) under the one
//! path rule (`bee_daemon::storage::path_rule`): a physical absolute root, a
//! relative path that stays under it, no link on the way, a regular file
//! with one link, not a common secret file, within the byte limits,
//! unchanged between the checks and the end of the read. Here, besides: no
//! file selected twice, and strict UTF-8 text without NUL or a UTF-16/32 BOM.

use bee_daemon::storage::path_rule;
use bee_proto::tokens::{MAX_INPUT_BYTES, MAX_TOTAL_BYTES, TokenErrorCode};
use std::io::{self, IsTerminal, Read};
use std::path::{Path, PathBuf};

use beectl::args::Selection;

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
/// no component is a link and there is no `.` or `..`); the current
/// directory when none is given.
pub fn physical_root(root: Option<&str>) -> Result<PathBuf, TokenErrorCode> {
    let root = match root {
        Some(root) => PathBuf::from(root),
        None => std::env::current_dir().map_err(|_| TokenErrorCode::RootInvalid)?,
    };
    path_rule::physical_root(&root)
}

fn read_file(root: &Path, relative: &str, seen: &mut Vec<(u64, u64)>) -> Result<Vec<u8>, TokenErrorCode> {
    path_rule::read_checked(root, relative, MAX_INPUT_BYTES, Some(seen))
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
    path_rule::read_at_most(reader, MAX_INPUT_BYTES)
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
}
