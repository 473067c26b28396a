//! The error document of commands whose contract gives them none of their
//! own: the evidence is unavailable (exit 5), with its issue and what went
//! wrong, never a report of zeros.

use bee_daemon::rendered::Rendered;
use bee_proto::exit::Exit;
use bee_proto::ledger::LedgerUnavailable;

/// Evidence unavailable (exit 5): `issue`, and what went wrong.
pub fn unavailable(issue: &str, message: Option<String>) -> Rendered {
    Rendered::json(Exit::Unavailable, &LedgerUnavailable::new(issue, message))
}
