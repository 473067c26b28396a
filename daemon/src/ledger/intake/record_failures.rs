//! The journal of ledger writes that reached neither beed nor the spool
//! (`quota.record_failed`): counted by `beectl status` and watched by beed,
//! which logs every new entry.

use bee_proto::ledger::{MAX_RECORD_FAILURE_BYTES, RECORD_FAILED, RECORD_FAILURES_FILE, RecordFailure};
use std::io::{self, BufReader, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use crate::storage::files;
use crate::storage::lines::{self, Line};

/// The journal: `${BEE_HOME:-$HOME}/.bee/usage/record-failures.jsonl`.
pub fn journal() -> Option<PathBuf> {
    bee_proto::paths::usage_dir().map(|dir| dir.join(RECORD_FAILURES_FILE))
}

/// The entries from byte `from` on, and the offset after the last whole line.
/// Lines that are not entries (torn, oversized, hostile) are passed over.
pub fn read(path: &Path, from: u64) -> io::Result<(Vec<RecordFailure>, u64)> {
    let mut file = match files::open_regular(path) {
        Ok(file) => file,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok((Vec::new(), 0)),
        Err(err) => return Err(err),
    };
    let from = if from > file.metadata()?.len() { 0 } else { from };
    file.seek(SeekFrom::Start(from))?;
    let mut reader = BufReader::new(file);
    let (mut entries, mut offset, mut line) = (Vec::new(), from, Vec::new());
    loop {
        let (kind, read) = lines::next(&mut reader, MAX_RECORD_FAILURE_BYTES, &mut line)?;
        match kind {
            Line::Complete => entries.extend(
                bee_proto::spool::unseal(line.trim_ascii_end())
                    .ok()
                    .and_then(|record| serde_json::from_slice::<RecordFailure>(record).ok()),
            ),
            Line::Oversized { complete: true } => {}
            Line::End | Line::Partial | Line::Oversized { complete: false } => return Ok((entries, offset)),
        }
        offset += read;
    }
}

/// Entries whose time lies in `[since_ms, until_ms)`; an unreadable journal counts none.
pub fn count_in(path: &Path, since_ms: i64, until_ms: i64) -> u64 {
    let Ok((entries, _)) = read(path, 0) else { return 0 };
    entries
        .iter()
        .filter_map(|entry| bee_proto::time::parse_rfc3339_ms(&entry.at_utc))
        .filter(|at| *at >= since_ms && *at < until_ms)
        .count() as u64
}

/// beed's watch on the journal: every entry written while it runs is logged once.
pub struct Watch {
    path: Option<PathBuf>,
    offset: u64,
}

impl Watch {
    /// Starts at the journal's end, logging how many entries were there.
    pub fn start() -> Watch {
        let path = journal();
        let mut watch = Watch { path, offset: 0 };
        if let Some(path) = &watch.path
            && let Ok((earlier, offset)) = read(path, 0)
        {
            if !earlier.is_empty() {
                tracing::warn!(code = RECORD_FAILED, entries = earlier.len(), journal = %path.display(),
                    "ledger writes were lost before beed started");
            }
            watch.offset = offset;
        }
        watch
    }

    /// Logs the entries written since the last look.
    pub fn poll(&mut self) {
        let Some(path) = &self.path else { return };
        match read(path, self.offset) {
            Ok((entries, offset)) => {
                for entry in entries {
                    tracing::warn!(code = RECORD_FAILED, at = %entry.at_utc, producer = entry.producer.as_str(),
                        records = entry.records, "ledger records reached neither beed nor the spool");
                }
                self.offset = offset;
            }
            Err(err) => tracing::debug!(error = %err, "record failure journal not readable"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn entries_are_read_from_an_offset_and_hostile_lines_passed_over() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(RECORD_FAILURES_FILE);
        let good = r#"{"atUtc":"2026-11-30T10:00:00.000Z","producer":"run","records":2}"#;
        let mut file = std::fs::File::create(&path).unwrap();
        file.write_all(format!("{good}\nnot json\n{}\n", "x".repeat(5000)).as_bytes()).unwrap();
        file.write_all(b"\xff\xfe\n").unwrap();
        file.write_all(br#"{"atUtc":"2026-11-30T11:00:00.000Z","producer":"hook","records":1}"#).unwrap();
        let (entries, offset) = read(&path, 0).unwrap();
        assert_eq!(entries.len(), 1, "the torn last line waits");
        file.write_all(b"\n").unwrap();
        let (more, _) = read(&path, offset).unwrap();
        assert_eq!(more.len(), 1);
        let nine = bee_proto::time::parse_rfc3339_ms("2026-11-30T09:00:00.000Z").unwrap();
        assert_eq!(count_in(&path, nine, nine + 3 * 3_600_000), 2);
        assert_eq!(count_in(&path, nine, nine + 3_600_000 + 1), 1);
        assert_eq!(count_in(&dir.path().join("missing"), 0, i64::MAX), 0);
    }
}
