//! `beectl man [COMMAND]` on a terminal: the page as `man` shows any page
//! (formatted, through the reader's own pager), not its roff source, which
//! stays what a pipe or a file gets (`beectl man usage > beectl-usage.1`).

use std::io::Write;
use std::process::{Command, Stdio};

/// Shows the page `roff` with the system's `man` (`man -l -`: man-db and
/// mandoc read a page from stdin so). `false` when no `man` could show it
/// (none installed, one that takes no `-l`): the caller prints the roff,
/// which is still the page.
pub fn show(roff: &str) -> bool {
    let Ok(mut man) = Command::new("man").args(["-l", "-"]).stdin(Stdio::piped()).spawn() else {
        return false;
    };
    if let Some(mut stdin) = man.stdin.take() {
        // A man that stops reading early (it refused `-l`) answers below
        // by its status; the page is then printed as roff.
        let _ = stdin.write_all(roff.as_bytes());
    }
    man.wait().is_ok_and(|status| status.success())
}
