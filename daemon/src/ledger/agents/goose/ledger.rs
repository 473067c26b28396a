//! Goose's `usage_ledger` table (schema v15 on): one row a provider call,
//! appended when the call's usage is recorded and never rewritten. A row's
//! `input_tokens` is the whole prompt, its cache reads and writes inside
//! it (Goose folds them in for providers that report them apart); its
//! `total_tokens` is input + output. Each row is one response in the
//! ledger, keyed by the row's own id and its session, dated when Goose
//! wrote it, its model the row's own.
//!
//! A session's first row marked `carried_forward` is what the session had
//! spent before Goose kept this table (its running totals then): it keeps
//! the key and date Bee gave those totals, so a session counted from its
//! totals before Goose moved them here is counted once. A session whose
//! provider is another agent's CLI is that agent's usage, not read here.
//! A row that says nothing read (all its counters zero or empty) is passed
//! over; one without a session or a time, or with a counter that is no
//! count, is refused.

use bee_proto::usage::Counters;
use rusqlite::types::ValueRef;
use std::path::Path;

use crate::ledger::agents::goose::sessions::configured_model;
use crate::ledger::agents::lines::{Found, wrapped_agent};
use crate::ledger::agents::whole::{column_text, column_time_ms};

/// The table.
pub(crate) const TABLE: &str = "usage_ledger";

/// The columns read of each row, with its session's creation time,
/// provider and, for a row that names no model, its configured model
/// (`model_config_json` by its length first, see
/// [`configured_model`]); in the order of its sessions (Goose's index on
/// `session_id` holds that order), each session's rows in the order Goose
/// wrote them.
pub(crate) const QUERY: &str = "SELECT l.id, l.session_id, l.created_timestamp, l.model,
        l.input_tokens, l.output_tokens, l.total_tokens, l.cache_read_tokens, l.cache_write_tokens,
        l.cost_source, s.created_at, s.provider_name,
        CASE WHEN l.model IS NULL THEN octet_length(s.model_config_json) END,
        CASE WHEN l.model IS NULL AND octet_length(s.model_config_json) <= ?1 THEN s.model_config_json END
   FROM usage_ledger l LEFT JOIN sessions s ON s.id = l.session_id
  ORDER BY l.session_id, l.id";

/// What Goose marks the row that carries a session's spend from before
/// the table (or any later drift of its running totals past the table's
/// sum) with, in `cost_source`.
const CARRIED_FORWARD: &str = "carried_forward";

/// A row's token counts as Goose wrote them (`NULL` is `None`): input
/// (cache reads and writes inside it), output, total, cache reads, cache
/// writes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Written {
    pub input: Option<u64>,
    pub output: Option<u64>,
    pub total: Option<u64>,
    pub cache_reads: Option<u64>,
    pub cache_writes: Option<u64>,
}

/// A row's counts in Bee's columns: input without either cache (unknown
/// when the caches Goose names pass it, never clamped to 0), cache writes,
/// cache reads, output (its reasoning, which Goose does not count apart,
/// inside it), and Goose's total. A cache Goose left empty is unknown, and
/// nothing is taken out of input for it.
pub fn counters(written: Written) -> Counters {
    let caches = written.cache_reads.unwrap_or(0).checked_add(written.cache_writes.unwrap_or(0));
    Counters {
        input_tokens: written.input.zip(caches).and_then(|(input, caches)| input.checked_sub(caches)),
        cache_creation_input_tokens: written.cache_writes,
        cache_read_input_tokens: written.cache_reads,
        output_tokens: written.output,
        total_tokens: written.total,
        ..Counters::default()
    }
}

/// A column holding a count: `Ok(None)` when empty, `Err` when it holds
/// anything but a non-negative integer (the row is no row of Goose's).
fn count(row: &rusqlite::Row<'_>, column: usize) -> Result<Option<u64>, ()> {
    match row.get_ref(column).map_err(drop)? {
        ValueRef::Null => Ok(None),
        ValueRef::Integer(n) => u64::try_from(n).map(Some).map_err(drop),
        _ => Err(()),
    }
}

/// A row's counts, from its column of `input_tokens` on.
fn written(row: &rusqlite::Row<'_>) -> Result<Written, ()> {
    Ok(Written {
        input: count(row, 4)?,
        output: count(row, 5)?,
        total: count(row, 6)?,
        cache_reads: count(row, 7)?,
        cache_writes: count(row, 8)?,
    })
}

/// The rows of the table, read in [`QUERY`]'s order: which session the
/// last row was of, to find each session's first row, and whether that
/// session was named yet (once, with its first row read).
#[derive(Debug, Default)]
pub(crate) struct Rows {
    session: Option<String>,
    named: bool,
}

impl Rows {
    /// Reads one row; `false` when it is refused as unreadable.
    pub(crate) fn read(&mut self, path: &Path, row: &rusqlite::Row<'_>, found: &mut Found<'_>) -> bool {
        let Some(session) = column_text(row, 1) else { return false };
        let opens_session = self.session.as_deref() != Some(session);
        if opens_session {
            self.session = Some(session.to_owned());
            self.named = false;
        }
        let Ok(Some(id)) = count(row, 0) else { return false };
        if column_text(row, 11).and_then(wrapped_agent).is_some() {
            return true;
        }
        let Ok(written) = written(row) else { return false };
        let tokens = counters(written);
        if tokens.counts_nothing() {
            return true;
        }
        let Some(written_at_ms) = column_time_ms(row, 2) else { return false };
        // The spend a session had before the table: the session's own
        // entry, as its running totals were read before (key, date, model).
        let before_the_table = opens_session && column_text(row, 9) == Some(CARRIED_FORWARD);
        // A carried row names no model (Goose writes none): the session's.
        let configured = match column_text(row, 3) {
            Some(_) => None,
            None => configured_model(row, 12, path, session),
        };
        let model = column_text(row, 3).or(configured.as_deref());
        let (key, at_ms) = if before_the_table {
            (format!("session\u{1f}{session}"), column_time_ms(row, 10).unwrap_or(written_at_ms))
        } else {
            (format!("ledger\u{1f}{session}\u{1f}{id}"), written_at_ms)
        };
        if !self.named {
            found.session(session, None);
            self.named = true;
        }
        found.response(key, session, at_ms, model, tokens);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Goose's input holds both caches: Bee's input is the rest; a cache
    /// left empty is unknown and takes nothing out; caches past the input
    /// leave it unknown, never 0.
    #[test]
    fn input_is_the_prompt_without_its_caches() {
        let s = Some;
        let written =
            Written { input: s(12_000), output: s(400), total: s(12_400), cache_reads: s(9000), cache_writes: s(1500) };
        let t = counters(written);
        assert_eq!(
            (t.input_tokens, t.cache_creation_input_tokens, t.cache_read_input_tokens, t.output_tokens, t.total_tokens),
            (s(1500), s(1500), s(9000), s(400), s(12_400))
        );
        let t = counters(Written { cache_reads: None, cache_writes: None, ..written });
        assert_eq!((t.input_tokens, t.cache_read_input_tokens, t.cache_creation_input_tokens), (s(12_000), None, None));
        let t = counters(Written { cache_writes: None, ..written });
        assert_eq!((t.input_tokens, t.cache_creation_input_tokens), (s(3000), None));
        let t = counters(Written { input: s(100), ..written });
        assert_eq!(t.input_tokens, None);
        let t = counters(Written { cache_reads: s(u64::MAX), ..written });
        assert_eq!(t.input_tokens, None);
        assert_eq!(t.reasoning_output_tokens, None);
    }
}
