//! `beectl export status`: the `[export]` settings of config.toml, what the
//! exporter in beed last did (attempt, success, error), the cursor its last
//! send covered and the store records beyond it. Read offline, so it answers
//! with beed stopped too.

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
    })
}

/// The export's status, when a home is set.
pub fn current() -> Option<ExportStatus> {
    default_stores().map(|stores| export::status(&stores))
}

pub fn status() -> Rendered {
    match current() {
        Some(status) => Rendered::json(Exit::Success, &status),
        None => Rendered::json(
            Exit::Unavailable,
            &CommandError::unavailable("io", "neither BEE_HOME nor HOME is set".to_owned()),
        ),
    }
}

/// `daemon status`'s lines for the export, when one is configured or ran.
pub fn lines(status: &ExportStatus) -> Vec<String> {
    let mut lines = Vec::new();
    if !status.enabled && status.config_errors.is_empty() && status.state.is_none() {
        return lines;
    }
    let destination = status
        .state
        .as_ref()
        .and_then(|state| state.prometheus_remote_write.clone())
        .unwrap_or_else(|| "(none)".to_owned());
    lines.push(format!("export    {} to {destination}", if status.enabled { "on" } else { "off" }));
    for error in &status.config_errors {
        lines.push(format!("  config: {error}"));
    }
    if let Some(state) = &status.state {
        lines.push(format!(
            "  last success {}, last attempt {}, {} series",
            state.last_success_utc.as_deref().unwrap_or("never"),
            state.last_attempt_utc.as_deref().unwrap_or("never"),
            state.series_sent
        ));
        if let Some(error) = &state.last_error {
            lines.push(format!("  failing ({} attempts): {error}", state.consecutive_failures));
        }
    }
    if let Some(backlog) = status.backlog_records {
        lines.push(format!("  backlog {backlog} records since the last send"));
    }
    lines
}
