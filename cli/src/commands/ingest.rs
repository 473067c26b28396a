//! `beectl ingest`: a first import of the provider logs into the ledger.
//! beed is the ledger's only writer while it runs, so then beed does the
//! pass; otherwise beectl does it here, with a progress bar on a terminal.

use bee_daemon::ledger::intake::ingest::{self, Roots};
use bee_daemon::ledger::stored::store::Ledger;
use bee_daemon::rendered::Rendered;
use bee_daemon::storage::sqlite::DbError;
use bee_proto::exit::Exit;
use bee_proto::ledger::{IngestReport, IngestedBy, LEDGER_INGEST_PATH, LedgerUnavailable, PassSummary};
use std::io::{IsTerminal, Write};
use std::sync::Mutex;
use std::time::Duration;

use crate::ask;

pub fn run() -> Rendered {
    let Some(dir) = bee_proto::paths::default_ledger_store() else {
        return failure(bee_proto::paths::NO_HOME);
    };
    let ledger = match Ledger::open(&dir) {
        Ok(ledger) => ledger,
        Err(DbError::Locked(_)) => return through_daemon(),
        Err(err) => return failure(&err.to_string()),
    };
    match import(ledger, || ()).map(|(summary, ())| summary) {
        Ok(summary) => {
            Rendered::json(Exit::Success, &serde_json::json!({"schemaVersion": 1, "by": "beectl", "summary": summary}))
        }
        Err(message) => failure(&message),
    }
}

/// A usage view, after catching up: with beed down, imports what is new in
/// the provider logs (a progress bar on a terminal) so the figures are
/// today's, and reads `view` as soon as the import is settled (see
/// [`ingest::pass_then`]); with beed up it holds the ledger and imports by
/// itself. A failure is said on stderr, with how many files were not read;
/// `view` then shows the ledger as it is.
pub fn catch_up<T>(view: impl Fn() -> T) -> T {
    let roots = Roots::from_env();
    if !roots.all_dirs().any(|root| root.is_dir()) {
        return view();
    }
    let Some(dir) = bee_proto::paths::default_ledger_store() else { return view() };
    let ledger = match Ledger::open(&dir) {
        Ok(ledger) => ledger,
        Err(DbError::Locked(_)) => return view(),
        Err(err) => {
            eprintln!("beectl: the provider logs were not imported ({err}); the figures are the ledger's as it was");
            return view();
        }
    };
    // Read in the pass; read after it when the pass failed before that.
    let mut seen = None;
    match import(ledger, || seen = Some(view())) {
        Ok((summary, ())) if summary.unreadable_files > 0 => eprintln!(
            "beectl: {} provider log files with new lines could not be read; the figures leave them out",
            summary.unreadable_files
        ),
        Ok(_) => {}
        Err(message) => {
            eprintln!("beectl: the provider logs were not imported ({message}); the figures are the ledger's as it was")
        }
    }
    seen.unwrap_or_else(view)
}

/// Takes the spool, then one pass over the provider logs; `then` once
/// the pass is settled (see [`ingest::pass_then`]). The ledger closes
/// after both.
fn import<T>(ledger: Ledger, then: impl FnOnce() -> T) -> Result<(PassSummary, T), String> {
    let ledger = Mutex::new(ledger);
    // What producers spooled while beed was down is evidence too: taken
    // first, as beed would on start.
    if let Some(spool) = bee_proto::paths::spool_dir()
        && let Err(err) = bee_daemon::ledger::intake::spool::ingest(&spool, &ledger)
    {
        return Err(format!("the ledger spool: {err}"));
    }
    let terminal = std::io::stderr().is_terminal();
    // The percentage last drawn: the bar is redrawn only when it moves.
    let drawn = std::sync::atomic::AtomicU64::new(u64::MAX);
    let bar = |done: u64, total: u64| {
        let percent = (done.min(total) * 100).checked_div(total).unwrap_or(0);
        if terminal && total > 0 && drawn.swap(percent, std::sync::atomic::Ordering::Relaxed) != percent {
            let filled = (done.min(total) * 30 / total) as usize;
            eprint!(
                "\r[{}{}] {:>3}% {} / {} MB",
                "#".repeat(filled),
                "-".repeat(30 - filled),
                percent,
                done >> 20,
                total >> 20
            );
            let _ = std::io::stderr().flush();
        }
    };
    // Everything is settled for a one-off import: no file is being streamed
    // into by a beed pass, and the next pass rereads any open response.
    let passed = ingest::pass_then(&ledger, &Roots::from_env(), Duration::from_secs(30), 2, &bar, then);
    if terminal {
        eprintln!();
    }
    passed.map_err(|err| err.to_string())
}

fn through_daemon() -> Rendered {
    match ask::post(LEDGER_INGEST_PATH, b"{}".to_vec(), Duration::from_secs(600), "cannot import now") {
        Some(answer) => match serde_json::from_slice::<PassSummary>(&answer.body) {
            Ok(summary) => {
                Rendered::json(Exit::Success, &IngestReport { schema_version: 1, by: IngestedBy::Beed, summary })
            }
            Err(err) => failure(&err.to_string()),
        },
        None => failure("the ledger is held by a beed that did not answer"),
    }
}

fn failure(message: &str) -> Rendered {
    Rendered::json(Exit::Unavailable, &LedgerUnavailable::new("io", Some(message.to_owned())))
}
