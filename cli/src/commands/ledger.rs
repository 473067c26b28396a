//! Where the ledger is, and what the ledger's views say when it cannot be
//! read: shared by `quota`, `status`, `usage` and `top`.

use bee_daemon::rendered::Rendered;
use bee_proto::delivery::Issue;
use std::path::{Path, PathBuf};

use crate::render::errors::unavailable;

/// The ledger's directory, or the answer when no home places it.
pub fn ledger_dir() -> Result<PathBuf, Rendered> {
    bee_proto::paths::default_ledger_store()
        .ok_or_else(|| unavailable("io", Some(bee_proto::paths::NO_HOME.to_owned())))
}

/// The ledger at `dir` could not be read: its issue, and what that means
/// and what to do. A new user's first view meets `missing`, which says
/// where Bee looks for the provider logs and whether it found any.
pub fn ledger_unavailable(issue: Issue, dir: &Path) -> Rendered {
    let dir_shown = dir.display();
    // Gone or emptied after it held records: a loss, never "not yet".
    if matches!(issue, Issue::Missing | Issue::Corrupt)
        && let Some(since) = bee_daemon::ledger::stored::store::held_since(dir)
    {
        let db = dir.join(bee_daemon::ledger::stored::store::DB_FILE);
        let lost = bee_daemon::ledger::stored::store::lost_reason(dir, &since);
        let message = match std::fs::metadata(&db) {
            Ok(meta) if meta.len() == 0 => format!("the ledger at {dir_shown} was emptied (0 bytes): {lost}"),
            Err(_) => lost,
            Ok(_) => format!("the ledger at {dir_shown} does not read as Bee's ledger; nothing was changed"),
        };
        return unavailable(Issue::Corrupt.as_str(), Some(message));
    }
    let message = match issue {
        Issue::Missing => {
            let roots = bee_daemon::ledger::intake::ingest::Roots::from_env();
            let found: Vec<String> =
                roots.all_dirs().filter(|root| root.exists()).map(|root| root.display().to_string()).collect();
            let spooled = bee_proto::paths::spool_dir()
                .and_then(|spool| bee_proto::spool::pending_lines(&spool, bee_proto::ledger::LEDGER_SPOOL_FILE).ok())
                .unwrap_or(0);
            let records = if found.is_empty() {
                format!(
                    "the agents' own records (none there yet where any of the {} agents Bee reads keeps them: \
                     `beectl agents` lists each place)",
                    bee_proto::ledger::Provider::ALL.len()
                )
            } else {
                format!("the agents' own records ({})", found.join(", "))
            };
            format!(
                "no ledger yet at {dir_shown}: beed builds it from {records} and from what producers record{}; \
                 start beed (`beectl daemon start`), or run `beectl ingest`",
                match spooled {
                    0 => String::new(),
                    1 => " (1 record already waits in the spool)".to_owned(),
                    n => format!(" ({n} records already wait in the spool)"),
                },
            )
        }
        Issue::Busy => format!("the ledger at {dir_shown} is busy (another process is changing it); try again"),
        Issue::Corrupt => format!("the ledger at {dir_shown} does not read as Bee's ledger; nothing was changed"),
        _ => format!("the ledger at {dir_shown} could not be read"),
    };
    unavailable(issue.as_str(), Some(message))
}
