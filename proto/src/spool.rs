//! The hook-side spool: an append-only file of one JSON record per line.
//!
//! Hooks append under a shared `flock` and `fdatasync` every line. The daemon
//! claims the file by renaming it aside and then taking the exclusive lock, so
//! an append that raced the rename either lands before the claim is read or is
//! retried against a fresh file: no line is read half-written or lost.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// Spool file for delivery observations, inside the spool directory.
pub const DELIVERY_SPOOL_FILE: &str = "delivery-v1.jsonl";
/// Lines the daemon could not parse are moved here, never dropped.
pub const DELIVERY_REJECTED_FILE: &str = "delivery-v1.rejected.jsonl";
/// Marker in the name of a spool file the daemon has claimed.
pub const CLAIMED_MARKER: &str = ".claimed-";

/// Creates `dir` (and missing parents) with mode 0700.
pub fn create_private_dir(dir: &Path) -> io::Result<()> {
    fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)
}

/// The opening of a sealed spool line: `{"crc32":N,"record":RECORD}`.
const SEAL_PREFIX: &[u8] = b"{\"crc32\":";

/// `record` (one JSON value) as a spool line's text: with the CRC-32 of its
/// bytes, as the stores' rows carry theirs, so a line damaged on disk is
/// told from the record its producer wrote.
pub fn seal(record: &[u8]) -> Vec<u8> {
    let crc = crc32fast::hash(record);
    let mut line = Vec::with_capacity(record.len() + 32);
    line.extend_from_slice(SEAL_PREFIX);
    line.extend_from_slice(crc.to_string().as_bytes());
    line.extend_from_slice(b",\"record\":");
    line.extend_from_slice(record);
    line.push(b'}');
    line
}

/// Why a spool line is set aside before its record is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineDamage {
    /// A sealed line that is not `{"crc32":N,"record":…}` any more.
    Unsealed,
    /// The record's bytes do not match the line's CRC-32.
    Checksum,
}

impl std::fmt::Display for LineDamage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            LineDamage::Unsealed => "a sealed spool line that no longer parses",
            LineDamage::Checksum => "the record does not match the line's CRC-32",
        })
    }
}

/// The record of a spool line: a sealed line's, checked against its CRC,
/// or the line itself when it was written unsealed (by a bee-hook from
/// before the seal; its record is checked by the store's own rules).
pub fn unseal(line: &[u8]) -> Result<&[u8], LineDamage> {
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Sealed<'a> {
        crc32: u32,
        #[serde(borrow)]
        record: &'a serde_json::value::RawValue,
    }
    if !line.starts_with(SEAL_PREFIX) {
        return Ok(line);
    }
    let sealed: Sealed<'_> = serde_json::from_slice(line).map_err(|_| LineDamage::Unsealed)?;
    let record = sealed.record.get().as_bytes();
    if crc32fast::hash(record) == sealed.crc32 { Ok(record) } else { Err(LineDamage::Checksum) }
}

/// Appends `record`, sealed ([`seal`]), plus a newline to `dir/file_name`,
/// synced to disk.
///
/// `record` must not contain a newline.
pub fn append(dir: &Path, file_name: &str, record: &[u8]) -> io::Result<()> {
    if record.contains(&b'\n') {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "record contains a newline"));
    }
    let record = seal(record);
    let record = record.as_slice();
    create_private_dir(dir)?;
    let path = dir.join(file_name);
    let mut line = Vec::with_capacity(record.len() + 1);
    line.extend_from_slice(record);
    line.push(b'\n');
    // The daemon may claim (rename) the file between our open and our lock;
    // then our handle points at a claimed file and we must reopen.
    for _ in 0..8 {
        let mut file = open_append(&path)?;
        file.lock_shared()?;
        if !still_at_path(&file, &path)? {
            continue;
        }
        file.write_all(&line)?;
        file.sync_data()?;
        return Ok(());
    }
    Err(io::Error::new(io::ErrorKind::WouldBlock, "spool kept being claimed"))
}

/// Appends whole lines (each already ending in a newline) to `dir/file_name`.
pub fn append_raw_lines(dir: &Path, file_name: &str, lines: &[u8]) -> io::Result<()> {
    create_private_dir(dir)?;
    let mut file = open_append(&dir.join(file_name))?;
    file.lock()?;
    file.write_all(lines)?;
    file.sync_data()
}

fn open_append(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .append(true)
        .create(true)
        .mode(0o600)
        // A spool that is a symlink is refused rather than followed.
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
}

fn still_at_path(file: &File, path: &Path) -> io::Result<bool> {
    let held = file.metadata()?;
    match fs::symlink_metadata(path) {
        Ok(current) => Ok(current.ino() == held.ino() && current.dev() == held.dev()),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(err) => Err(err),
    }
}

/// Claims the live spool file, if any, and lists every claimed file waiting
/// to be ingested (including ones a crashed daemon claimed and never finished).
///
/// Each returned path is exclusively quiet: no hook is still appending to it.
pub fn claim(dir: &Path, file_name: &str) -> io::Result<Vec<PathBuf>> {
    let live = dir.join(file_name);
    match fs::symlink_metadata(&live) {
        Ok(meta) if meta.file_type().is_file() && meta.len() > 0 => {
            let claimed = dir.join(format!(
                "{file_name}{CLAIMED_MARKER}{}-{}",
                std::process::id(),
                uuid::Uuid::new_v4().simple()
            ));
            fs::rename(&live, &claimed)?;
        }
        Ok(_) => {}
        Err(err) if err.kind() == io::ErrorKind::NotFound => {}
        Err(err) => return Err(err),
    }
    let prefix = format!("{file_name}{CLAIMED_MARKER}");
    let mut claimed = Vec::new();
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(claimed),
        Err(err) => return Err(err),
    };
    for entry in entries {
        let entry = entry?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if name.starts_with(&prefix) && entry.file_type()?.is_file() {
            let path = entry.path();
            // Waits for any hook that locked the file before the rename.
            File::open(&path)?.lock()?;
            claimed.push(path);
        }
    }
    claimed.sort();
    Ok(claimed)
}

/// The spool files waiting to be ingested, in the order beed takes them:
/// claimed files (oldest claim first), then the live file. Nothing is
/// claimed or locked: a reader only looks.
pub fn pending_files(dir: &Path, file_name: &str) -> io::Result<Vec<PathBuf>> {
    let prefix = format!("{file_name}{CLAIMED_MARKER}");
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(err) => return Err(err),
    };
    let (mut claimed, mut live) = (Vec::new(), None);
    for entry in entries {
        let entry = entry?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if !entry.file_type()?.is_file() {
            continue;
        }
        if name == file_name {
            live = Some(entry.path());
        } else if name.starts_with(&prefix) {
            claimed.push(entry.path());
        }
    }
    claimed.sort();
    claimed.extend(live);
    Ok(claimed)
}

/// Number of complete lines waiting in the live and claimed spool files.
pub fn pending_lines(dir: &Path, file_name: &str) -> io::Result<u64> {
    let mut lines = 0;
    for path in pending_files(dir, file_name)? {
        let bytes = fs::read(path)?;
        lines += bytes.iter().filter(|&&b| b == b'\n').count() as u64;
    }
    Ok(lines)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// A sealed line gives back its record exactly; a line whose record
    /// changed by one byte, or whose seal no longer parses, is damage; a
    /// line written before the seal is its own record.
    #[test]
    fn a_sealed_line_checks_its_record() {
        let record = br#"{"kind":"Delivered","utf8Bytes":4,"contentUtf8Bytes":4}"#;
        let line = seal(record);
        assert_eq!(unseal(&line), Ok(&record[..]));
        let tampered = String::from_utf8(line.clone()).unwrap().replace("\"utf8Bytes\":4", "\"utf8Bytes\":6");
        assert_eq!(unseal(tampered.as_bytes()), Err(LineDamage::Checksum));
        for at in 0..line.len() {
            let mut flipped = line.clone();
            flipped[at] ^= 0x04;
            if let Ok(read) = unseal(&flipped) {
                assert_ne!(read, &record[..], "byte {at}: a damaged line read as the record");
            }
        }
        assert_eq!(unseal(b"{\"crc32\":1,\"record\":"), Err(LineDamage::Unsealed));
        assert_eq!(unseal(record), Ok(&record[..]), "an unsealed line from an older bee-hook");
    }
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn appends_racing_claims_lose_no_line() {
        let dir = tempfile::tempdir().unwrap();
        let spool = dir.path().join("spool");
        let writers: Vec<_> = (0..4)
            .map(|w| {
                let spool = spool.clone();
                std::thread::spawn(move || {
                    for i in 0..100 {
                        append(&spool, DELIVERY_SPOOL_FILE, format!("{{\"w\":{w},\"i\":{i}}}").as_bytes()).unwrap();
                    }
                })
            })
            .collect();
        let mut seen = Vec::new();
        let drain = |seen: &mut Vec<String>| {
            for path in claim(&spool, DELIVERY_SPOOL_FILE).unwrap_or_default() {
                let text = fs::read_to_string(&path).unwrap();
                seen.extend(
                    text.lines().map(|line| String::from_utf8(unseal(line.as_bytes()).unwrap().to_vec()).unwrap()),
                );
                fs::remove_file(path).unwrap();
            }
        };
        for _ in 0..50 {
            drain(&mut seen);
            std::thread::yield_now();
        }
        for writer in writers {
            writer.join().unwrap();
        }
        drain(&mut seen);
        assert_eq!(seen.len(), 400, "every line exactly once");
        seen.sort();
        seen.dedup();
        assert_eq!(seen.len(), 400);
        assert!(seen.iter().all(|line| line.starts_with("{\"w\":") && line.ends_with('}')));
    }

    #[test]
    fn spool_is_private_refuses_links_and_newlines() {
        let dir = tempfile::tempdir().unwrap();
        let spool = dir.path().join("spool");
        append(&spool, DELIVERY_SPOOL_FILE, b"{}").unwrap();
        assert_eq!(fs::metadata(&spool).unwrap().permissions().mode() & 0o777, 0o700);
        let file = spool.join(DELIVERY_SPOOL_FILE);
        assert_eq!(fs::metadata(&file).unwrap().permissions().mode() & 0o777, 0o600);
        assert_eq!(pending_lines(&spool, DELIVERY_SPOOL_FILE).unwrap(), 1);
        assert!(append(&spool, DELIVERY_SPOOL_FILE, b"a\nb").is_err());
        fs::remove_file(&file).unwrap();
        std::os::unix::fs::symlink(dir.path().join("elsewhere"), &file).unwrap();
        assert!(append(&spool, DELIVERY_SPOOL_FILE, b"{}").is_err());
        assert!(!dir.path().join("elsewhere").exists());
    }
}
