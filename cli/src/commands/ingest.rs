//! `beectl ingest`: a first import of the provider logs into the ledger.
//! beed is the ledger's only writer while it runs, so then beed does the
//! pass; otherwise beectl does it here, with a progress bar on a terminal
//! (stderr) that ends at 100 % and is not drawn when nothing is new. What
//! the pass did: a few lines for people, its JSON document when piped.

use bee_daemon::ledger::intake::ingest::{self, Roots};
use bee_daemon::ledger::stored::store::Ledger;
use bee_daemon::rendered::Rendered;
use bee_daemon::storage::sqlite::DbError;
use bee_proto::exit::Exit;
use bee_proto::ledger::{IngestReport, IngestedBy, LEDGER_INGEST_PATH, LedgerUnavailable, PassSummary};
use std::io::IsTerminal;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crate::ask;
use crate::render::output::say;
use crate::render::terminal::{counted, for_people, thousands};

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
        Ok(summary) => report(IngestReport { schema_version: 1, by: IngestedBy::Beectl, summary }),
        Err(message) => failure(&message),
    }
}

/// What the pass did: its document, or its lines for people.
fn report(report: IngestReport) -> Rendered {
    if !for_people(None) {
        return Rendered::json(Exit::Success, &report);
    }
    Rendered { exit: Exit::Success, bytes: report_lines(&report).into_bytes() }
}

/// Most passed-over records named for people (`--json` names up to its own bound).
const SKIPPED_SHOWN: usize = 10;

fn report_lines(report: &IngestReport) -> String {
    use std::fmt::Write as _;
    let summary = &report.summary;
    let by = match report.by {
        IngestedBy::Beectl => "beectl",
        IngestedBy::Beed => "beed (it holds the ledger while it runs)",
    };
    let mut out = String::new();
    if summary.files_seen == 0 {
        let _ = writeln!(
            out,
            "Nothing to import: no agent Bee reads keeps records here yet (`beectl agents` lists where it looks)."
        );
    } else if summary.records_appended == 0 && summary.bytes_read == 0 && summary.unreadable_files == 0 {
        // A last line still being written is looked at, never read: nothing new.
        let _ = writeln!(
            out,
            "Nothing new to import from the {} Bee reads (by {by}).",
            counted(summary.files_seen, "file")
        );
    } else {
        let _ = writeln!(
            out,
            "Imported {} from {} of {} ({} read), by {by}.",
            counted(summary.records_appended, "new record"),
            thousands(summary.files_read),
            counted(summary.files_seen, "file"),
            size(summary.bytes_read)
        );
    }
    let notes = [
        (summary.duplicates, "already in the ledger (duplicates, not counted twice)"),
        (summary.unparseable_lines, "lines could not be read as records"),
        (summary.restarted_files, "files were read again from their start (truncated or replaced)"),
        (summary.unreadable_files, "files with new lines could not be read: the next pass tries them again"),
        (summary.skipped_records, "records were passed over (never read again)"),
    ];
    for (count, note) in notes.into_iter().filter(|(count, _)| *count > 0) {
        let _ = writeln!(out, "  {} {note}", thousands(count));
    }
    for skipped in summary.skipped.iter().take(SKIPPED_SHOWN) {
        let reason = serde_json::to_value(skipped.reason).ok();
        let _ = writeln!(
            out,
            "    {} {} at byte {} ({}): {}",
            skipped.agent.as_str(),
            skipped.file,
            skipped.offset,
            size(skipped.bytes),
            reason.as_ref().and_then(serde_json::Value::as_str).unwrap_or("passed over")
        );
    }
    if summary.skipped.len() > SKIPPED_SHOWN {
        let _ =
            writeln!(out, "    … and {} more: beectl ingest --json names them", summary.skipped.len() - SKIPPED_SHOWN);
    }
    out
}

/// A size for people: bytes, kB or MB, never "0 MB" for something read.
fn size(bytes: u64) -> String {
    match bytes {
        0..1_000 => format!("{bytes} B"),
        1_000..1_000_000 => format!("{} kB", bytes / 1_000),
        _ => format!("{:.1} MB", bytes as f64 / 1e6),
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
            say(format_args!(
                "beectl: the provider logs were not imported ({err}); the figures are the ledger's as it was\n"
            ));
            return view();
        }
    };
    // Read in the pass; read after it when the pass failed before that.
    let mut seen = None;
    match import(ledger, || seen = Some(view())) {
        Ok((summary, ())) if summary.unreadable_files > 0 => say(format_args!(
            "beectl: {} provider log files with new lines could not be read; the figures leave them out\n",
            summary.unreadable_files
        )),
        Ok(_) => {}
        Err(message) => say(format_args!(
            "beectl: the provider logs were not imported ({message}); the figures are the ledger's as it was\n"
        )),
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
    // The percentage last drawn (`NOT_DRAWN` before the first): the bar is
    // redrawn only when it moves, and never drawn before a byte was read (a
    // last line still being written is looked at each pass, never read).
    const NOT_DRAWN: u64 = u64::MAX;
    let drawn = AtomicU64::new(NOT_DRAWN);
    let to_read = AtomicU64::new(0);
    let bar = |done: u64, total: u64| {
        if !terminal || total == 0 || done == 0 {
            return;
        }
        to_read.store(total, Ordering::Relaxed);
        let percent = done.min(total) * 100 / total;
        if drawn.swap(percent, Ordering::Relaxed) != percent {
            draw_bar(done, total);
        }
    };
    // Everything is settled for a one-off import: no file is being streamed
    // into by a beed pass, and the next pass rereads any open response.
    let passed = ingest::pass_then(&ledger, &Roots::from_env(), Duration::from_secs(30), 2, &bar, then);
    if drawn.load(Ordering::Relaxed) != NOT_DRAWN {
        // A pass that went through ends its bar at 100 %: a database read
        // whole, or a last line still being written, is never reported as
        // bytes read, and the bar would stop short of what was done.
        let total = to_read.load(Ordering::Relaxed);
        if passed.is_ok() && drawn.load(Ordering::Relaxed) != 100 {
            draw_bar(total, total);
        }
        say(format_args!("\n"));
    }
    passed.map_err(|err| err.to_string())
}

/// The progress bar on stderr, `done` of `total` bytes (total above 0).
fn draw_bar(done: u64, total: u64) {
    let done = done.min(total);
    let filled = (done * 30 / total) as usize;
    // `\x1b[K` clears what a longer previous drawing left at the line's end.
    say(format_args!(
        "\r[{}{}] {:>3}% {} / {}\x1b[K",
        "#".repeat(filled),
        "-".repeat(30 - filled),
        done * 100 / total,
        size(done),
        size(total)
    ));
}

fn through_daemon() -> Rendered {
    match ask::post(LEDGER_INGEST_PATH, b"{}".to_vec(), Duration::from_secs(600), "cannot import now") {
        Some(answer) => match serde_json::from_slice::<PassSummary>(&answer.body) {
            Ok(summary) => report(IngestReport { schema_version: 1, by: IngestedBy::Beed, summary }),
            Err(err) => failure(&err.to_string()),
        },
        None => failure("the ledger is held by a beed that did not answer"),
    }
}

fn failure(message: &str) -> Rendered {
    Rendered::json(Exit::Unavailable, &LedgerUnavailable::new("io", Some(message.to_owned())))
}
