//! Records an agent's reader passed over (too long, too complex for their
//! bound), noted where the reader passes them over and named by ingestion
//! with the file they are in: the readers' seam stays what it is, and
//! nothing passed over goes unsaid.

use bee_proto::ledger::{MOST_SKIPPED_NAMED, SkipReason};
use std::cell::RefCell;

/// A record passed over, where in its file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Noted {
    pub(crate) offset: u64,
    pub(crate) bytes: u64,
    pub(crate) reason: SkipReason,
}

/// What this thread's reader noted since the last [`take`]: the first
/// few, and how many in all.
#[derive(Debug, Default)]
pub(crate) struct Notes {
    pub(crate) first: Vec<Noted>,
    pub(crate) count: u64,
}

thread_local! {
    static NOTES: RefCell<Notes> = RefCell::default();
}

/// A record of `bytes` at `offset` of the file being read was passed over.
pub(crate) fn note(reason: SkipReason, offset: u64, bytes: u64) {
    NOTES.with_borrow_mut(|notes| {
        notes.count += 1;
        if notes.first.len() < MOST_SKIPPED_NAMED {
            notes.first.push(Noted { offset, bytes, reason });
        }
    });
}

/// What was noted on this thread since the last call.
pub(crate) fn take() -> Notes {
    NOTES.with_borrow_mut(std::mem::take)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes_are_counted_past_the_named_few_and_taken_once() {
        for at in 0..(MOST_SKIPPED_NAMED as u64 + 5) {
            note(SkipReason::TooComplex, at, 9);
        }
        let notes = take();
        assert_eq!((notes.count, notes.first.len()), (MOST_SKIPPED_NAMED as u64 + 5, MOST_SKIPPED_NAMED));
        assert_eq!(notes.first[1], Noted { offset: 1, bytes: 9, reason: SkipReason::TooComplex });
        assert_eq!(take().count, 0);
    }
}
