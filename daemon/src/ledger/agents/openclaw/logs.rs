//! OpenClaw's session logs, read as pi's are
//! ([`Session`](crate::ledger::agents::pi::session::Session) under
//! OpenClaw's name), each line once: a live log or one a reset or a delete
//! renamed (versions before the agent database), read from the end of the
//! last whole line read; and the archive 2026.9.6 writes of a session it
//! deletes, `<session>.jsonl.deleted.<time>.<generation>.zst` — its
//! transcript's events, one a line, in one zstd frame — read whole once.
//!
//! An archive is decompressed as it is read, a line at a time within the
//! line bound (a longer line passed over and named, as in a log), and no
//! further than [`MAX_ARCHIVE_BYTES`] (the rest passed over and named); a
//! frame asking for a window past the bound of a record is refused before
//! anything is allocated.

use bee_proto::ledger::SkipReason;
use serde::{Deserialize, Serialize};
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::Path;

use super::entries::OpenClawEntries;
use crate::ledger::agents::agent::FileReader;
use crate::ledger::agents::lines::{JsonLines, MAX_LINE_BYTES, decode_state, encode_state};
use crate::ledger::agents::pi::session::Session;
use crate::ledger::agents::skipped;
use crate::ledger::agents::whole::MAX_DOCUMENT_BYTES;
use crate::ledger::stored::evidence::{AgentState, Evidence};
use crate::storage::lines::{Line, Lines};

/// The most an archive is decompressed: sixteen records' bound (1 GiB).
/// Memory holds a line at a time whatever it is; this bounds the time.
pub(super) const MAX_ARCHIVE_BYTES: u64 = 16 * MAX_DOCUMENT_BYTES;

/// Whether a session log's name is of a compressed archive.
pub(super) fn is_archive(path: &Path) -> bool {
    path.extension().is_some_and(|extension| extension == "zst")
}

/// Where the reader of a log stopped: the end of the last whole line read,
/// and what pi's rules kept there (the session its header named).
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ReadTo {
    #[serde(default)]
    offset: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    rules: Option<String>,
}

/// Reads the log at `path` from where `state` says the last pass stopped
/// to its last whole line (a line still being written is read next time;
/// one over the line bound is passed over and named). The count is of
/// lines that did not parse.
pub(super) fn read_log(path: &Path, state: &AgentState, out: &mut Vec<Evidence>) -> std::io::Result<(AgentState, u64)> {
    let mut file = crate::storage::files::open_regular(path)?;
    let length = file.metadata()?.len();
    let mut read_to: ReadTo = decode_state(state);
    if read_to.offset > length {
        // Cut short since: written anew.
        read_to = ReadTo::default();
    }
    file.seek(SeekFrom::Start(read_to.offset))?;
    let mut reader = Lines::new(file, MAX_LINE_BYTES);
    let mut lines = JsonLines::<Session<OpenClawEntries>>::new(path, &AgentState(read_to.rules));
    let mut unparseable = 0;
    let offset = read_lines(&mut reader, read_to.offset, None, &mut lines, &mut unparseable, out)?;
    let rules = lines.resume(offset).1.0;
    Ok((encode_state(&ReadTo { offset, rules }), unparseable))
}

/// Reads the compressed archive at `path` whole; the count is of lines
/// that did not parse, and of a frame that breaks (what was read before
/// it stands).
pub(super) fn read_archive(path: &Path, out: &mut Vec<Evidence>) -> std::io::Result<(AgentState, u64)> {
    read_archive_within(path, MAX_ARCHIVE_BYTES, out)
}

/// [`read_archive`], decompressing no further than `max_bytes`.
pub(super) fn read_archive_within(
    path: &Path,
    max_bytes: u64,
    out: &mut Vec<Evidence>,
) -> std::io::Result<(AgentState, u64)> {
    let file = crate::storage::files::open_regular(path)?;
    let Ok(decoder) =
        ruzstd::decoding::StreamingDecoder::new_with_max_window_size(BufReader::new(file), MAX_DOCUMENT_BYTES)
    else {
        return Ok((AgentState::default(), 1));
    };
    let mut reader = Lines::new(decoder.take(max_bytes.saturating_add(1)), MAX_LINE_BYTES);
    let mut lines = JsonLines::<Session<OpenClawEntries>>::new(path, &AgentState::default());
    let mut unparseable = 0;
    match read_lines(&mut reader, 0, Some(max_bytes), &mut lines, &mut unparseable, out) {
        Ok(decompressed) if decompressed > max_bytes => {
            skipped::note(SkipReason::OversizedDocument, 0, decompressed);
            tracing::warn!(
                file = %path.display(),
                bytes = decompressed,
                "an archive decompresses past its bound; the rest of it was passed over"
            );
        }
        Ok(_) => {}
        Err(_) => unparseable += 1,
    }
    Ok((AgentState::default(), unparseable))
}

/// Reads whole lines from `reader`, which is at byte `offset` of its log,
/// into `lines`, counting those that do not parse: where it stopped (the
/// end of the last whole line). A log's last line without its newline is
/// still being written, and left for later; an archive's (`whole`, read
/// no further than that bound) is its last line, read unless the bound
/// cut it.
fn read_lines(
    reader: &mut Lines<impl Read>,
    mut offset: u64,
    whole: Option<u64>,
    lines: &mut JsonLines<Session<OpenClawEntries>>,
    unparseable: &mut u64,
    out: &mut Vec<Evidence>,
) -> std::io::Result<u64> {
    loop {
        let (kind, line, read) = reader.next_line()?;
        match (kind, whole) {
            (Line::Complete, _) => *unparseable += u64::from(!lines.line(line, offset, out)),
            (Line::Oversized { complete: true }, _) => skipped::note(SkipReason::OversizedLine, offset, read),
            (Line::Partial, Some(max)) if offset + read <= max => {
                *unparseable += u64::from(!lines.line(line, offset, out));
            }
            (Line::Oversized { complete: false }, Some(max)) if offset + read <= max => {
                skipped::note(SkipReason::OversizedLine, offset, read);
            }
            (Line::Partial | Line::Oversized { complete: false }, Some(_)) => {}
            // The end, or a last line still being written: read from here next.
            (Line::End | Line::Partial | Line::Oversized { complete: false }, None) | (Line::End, Some(_)) => {
                return Ok(offset);
            }
        }
        offset += read;
    }
}
