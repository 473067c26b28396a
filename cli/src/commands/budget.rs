//! `beectl budget --measured`: one session's counters, read from the log its
//! provider CLI wrote. All three selectors are given; nothing is guessed.

use bee_daemon::rendered::Rendered;
pub use bee_proto::exit::Exit;
use bee_proto::usage::MeasuredBudget;
use std::fs;
use std::path::Path;

use beectl::args::BudgetArgs;

pub fn measured(args: BudgetArgs) -> Rendered {
    let file = match open_physical(&args.log) {
        Ok(file) => file,
        Err(code) => return failure(Exit::Unavailable, code),
    };
    let session = args.session.hyphenated().to_string();
    let usage = match bee_daemon::ledger::agents::read_session(args.harness, file, &session) {
        Ok(usage) => usage,
        Err(_) => return failure(Exit::Unavailable, "io"),
    };
    let matched = usage.lines.matched_session > 0;
    let document = MeasuredBudget {
        schema_version: 1,
        status: if matched { "complete" } else { "incomplete" }.to_owned(),
        error_code: None,
        harness: Some(args.harness),
        session: Some(session),
        source: "provider_reported_counters".to_owned(),
        lines: Some(usage.lines),
        response: usage.response,
        history: usage.history,
        rate_limits: usage.rate_limits,
        limits: usage.limits,
        issues: usage.issues,
        money: None,
    };
    Rendered::json(if matched { Exit::Success } else { Exit::Unavailable }, &document)
}

/// A document with no evidence: the code says why.
pub fn failure(exit: Exit, code: &str) -> Rendered {
    let status = if exit == Exit::InvalidUsage { "invalid" } else { "incomplete" };
    Rendered::json(
        exit,
        &MeasuredBudget {
            schema_version: 1,
            status: status.to_owned(),
            error_code: Some(code.to_owned()),
            harness: None,
            session: None,
            source: "provider_reported_counters".to_owned(),
            lines: None,
            response: None,
            history: None,
            rate_limits: Vec::new(),
            limits: Vec::new(),
            issues: Vec::new(),
            money: None,
        },
    )
}

/// Opens the log: absolute, physical (no link anywhere on the path), a regular file.
fn open_physical(log: &str) -> Result<fs::File, &'static str> {
    let path = Path::new(log);
    if !path.is_absolute() {
        return Err("path_not_absolute");
    }
    let canonical = fs::canonicalize(path).map_err(|err| match err.kind() {
        std::io::ErrorKind::NotFound => "missing",
        _ => "io",
    })?;
    if canonical != path {
        return Err("path_link");
    }
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_file() => {}
        Ok(_) => return Err("not_regular_file"),
        Err(_) => return Err("missing"),
    }
    bee_daemon::storage::files::open_regular(path).map_err(|_| "io")
}
