//! `beectl export status`: the `[export]` settings of config.toml, what the
//! exporter in beed last did (attempt, success, error), the cursor its last
//! send covered and the store records beyond it. Read offline, so it answers
//! with beed stopped too. Lines for people on a terminal, the document when
//! piped or asked.

use bee_daemon::export::{self, Stores};
use bee_daemon::rendered::Rendered;
use bee_proto::delivery::CommandError;
use bee_proto::exit::Exit;
use bee_proto::export::ExportStatus;

/// The stores the exporter reads, at their default places.
pub fn default_stores() -> Option<Stores> {
    Some(Stores {
        ledger: bee_proto::paths::default_ledger_store()?,
        delivery: bee_proto::paths::default_delivery_store()?,
        events: bee_proto::paths::default_events_store()?,
        manifests: bee_daemon::events::audit::default_manifests(),
        spool: bee_proto::paths::spool_dir()?,
        socket: bee_proto::paths::socket_path()?,
    })
}

/// The export's status, when a home is set.
pub fn current() -> Option<ExportStatus> {
    default_stores().map(|stores| export::status(&stores))
}

/// The status: its document for pipes and `--json`, its lines for people.
pub fn status() -> Rendered {
    match current() {
        Some(status) if crate::render::terminal::for_people(None) => {
            Rendered { exit: Exit::Success, bytes: (status_lines(&status).join("\n") + "\n").into_bytes() }
        }
        Some(status) => Rendered::json(Exit::Success, &status),
        None => {
            Rendered::json(Exit::Unavailable, &CommandError::unavailable("io", bee_proto::paths::NO_HOME.to_owned()))
        }
    }
}

/// `export status` for people: [`lines`], who sends and how often, and a
/// line even when export is off (where it would be turned on).
fn status_lines(status: &ExportStatus) -> Vec<String> {
    let mut lines = lines(status);
    if lines.is_empty() {
        let config =
            bee_proto::paths::config_file().map_or_else(|| "config.toml".to_owned(), |f| f.display().to_string());
        lines.push(format!("export    off: {config} names no [export] destination"));
        return lines;
    }
    let user = status.user.as_deref().map(|user| format!("as user {user}"));
    let every = status.interval_seconds.map(|seconds| format!("every {seconds} s"));
    let how: Vec<String> = user.into_iter().chain(every).collect();
    if !how.is_empty() {
        lines.insert(1, format!("  {}", how.join(", ")));
    }
    if status.state.is_none() {
        lines.push("  beed has not run an exporter yet".to_owned());
    }
    lines
}

/// `daemon status`'s lines for the export, when one is configured or ran.
pub fn lines(status: &ExportStatus) -> Vec<String> {
    let mut lines = Vec::new();
    if !status.enabled && status.config_errors.is_empty() && status.state.is_none() {
        return lines;
    }
    lines.push(format!("export    {}", if status.enabled { "on" } else { "off" }));
    for error in &status.config_errors {
        lines.push(format!("  config: {error}"));
    }
    for (name, destination) in status.state.iter().flat_map(|state| state.destinations()) {
        lines.push(format!(
            "  {name} {}: last success {}, last attempt {}, {} series",
            destination.url,
            destination.last_success_utc.as_deref().unwrap_or("never"),
            destination.last_attempt_utc.as_deref().unwrap_or("never"),
            destination.series_sent
        ));
        if let Some(error) = &destination.last_error {
            lines.push(format!("    failing ({} attempts): {error}", destination.consecutive_failures));
        }
    }
    if let Some(backlog) = status.backlog_records {
        lines.push(format!("  backlog {backlog} records since the last send"));
    }
    lines
}
