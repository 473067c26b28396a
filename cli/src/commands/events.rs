//! `beectl events recent`: the latest stored hook events, read from the
//! events store with the very function beed answers `GET /events/recent`
//! with (a WAL reader sees every committed event while beed runs), so both
//! give the same bytes.

use bee_daemon::events::store;
use bee_daemon::rendered::Rendered;
use bee_proto::delivery::Issue;
use bee_proto::events::{DEFAULT_RECENT, MAX_EVENTS_ANSWER_BYTES};
use bee_proto::exit::Exit;
use std::io::Write as _;

pub fn recent(limit: Option<u64>) -> Rendered {
    let limit = limit.map_or(DEFAULT_RECENT, |n| usize::try_from(n).unwrap_or(usize::MAX));
    let Some(dir) = bee_proto::paths::default_events_store() else {
        return crate::render::errors::unavailable("io", Some(bee_proto::paths::NO_HOME.to_owned()));
    };
    let conn = match store::open_reader(&dir) {
        Ok(conn) => conn,
        Err(Issue::Missing) => {
            return crate::render::errors::unavailable(
                "missing",
                Some(format!("no events store at {}: no hook event was stored yet", dir.display())),
            );
        }
        Err(issue) => {
            return crate::render::errors::unavailable(
                issue.as_str(),
                Some(format!("events store at {}", dir.display())),
            );
        }
    };
    match store::recent(&conn, limit, MAX_EVENTS_ANSWER_BYTES) {
        Ok(recent) => {
            // The document is the array beed answers; damage is named beside it.
            if recent.damaged > 0 {
                let _ = writeln!(
                    std::io::stderr(),
                    "beectl: {} stored event(s) fail their checksum and were left out (beectl audit names their sessions)",
                    recent.damaged
                );
            }
            Rendered { exit: Exit::Success, bytes: (recent.json + "\n").into_bytes() }
        }
        Err(err) => crate::render::errors::unavailable("io", Some(err.to_string())),
    }
}
