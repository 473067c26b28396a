//! Writing beectl's answer. A reader that has gone (`beectl usage | head
//! -c1`, a pager quit early) ends beectl as it ends any filter: quietly,
//! killed by SIGPIPE, the status a shell expects (141) — never a panic,
//! never an error message about a pipe the user closed on purpose.
//!
//! Why not restore SIGPIPE's default action when beectl starts: beectl
//! also writes to pipes and sockets that are not its reader — beed's
//! socket, bee-hook's stdin (`audit canary`), the wrapped CLI's output
//! (`beectl run` drains it after its reader went, so the call is still
//! recorded). There a closed end is a failure to report, or to ride out,
//! never a reason to die mid-work. So SIGPIPE stays ignored (Rust's
//! default, inherited by nothing: `Command` restores it in children) and
//! only a write to stdout that finds its reader gone ends the process.

use std::io::Write;

/// Writes `bytes` to stdout whole and flushes it. A reader that has gone
/// ends the process (see the module's note); any other failure is
/// returned.
pub fn stdout(bytes: &[u8]) -> std::io::Result<()> {
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(bytes).and_then(|()| stdout.flush()) {
        Err(err) if err.kind() == std::io::ErrorKind::BrokenPipe => reader_gone(),
        done => done,
    }
}

/// Says `text` on stderr: a warning, a progress bar. A stderr that is
/// closed or full loses it — what beectl answers on stdout goes on — and
/// never panics, as `eprintln!` would.
pub fn say(text: std::fmt::Arguments<'_>) {
    let mut stderr = std::io::stderr().lock();
    let _ = stderr.write_fmt(text).and_then(|()| stderr.flush());
}

/// The reader of stdout has gone: end as a filter does, by SIGPIPE's own
/// default action (the shell then reports 141 and `pipefail` sees it).
pub fn reader_gone() -> ! {
    // Nothing is left to say: the one who would read it has gone.
    let _ = signal_hook::low_level::emulate_default_handler(signal_hook::consts::SIGPIPE);
    // Only if the signal could not end the process: the same status, as an exit.
    std::process::exit(128 + signal_hook::consts::SIGPIPE)
}
