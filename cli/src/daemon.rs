//! `beectl daemon status`: what beed says about itself, or what can be seen
//! offline when it does not run (exit 5); `beectl dashboard`: the URL of the
//! running beed's dashboard, with the read secret.

use bee_daemon::client::{self, ClientError};
use bee_daemon::rendered::Rendered;
use bee_proto::api::{DaemonState, DaemonStatus, PROTOCOL_VERSION, STATUS_PATH, SpoolStatus, StatusReport};
use bee_proto::delivery::CommandError;
use bee_proto::events::{DASHBOARD_URL_FILE, NO_DASHBOARD};
use bee_proto::exit::Exit;
use std::time::Duration;

pub fn status() -> Rendered {
    let socket = bee_proto::paths::socket_path();
    let spool_dir = bee_proto::paths::spool_dir();
    let spool = SpoolStatus {
        path: spool_dir.as_ref().map(|d| d.display().to_string()).unwrap_or_default(),
        pending_records: spool_dir
            .as_ref()
            .and_then(|dir| bee_proto::spool::pending_lines(dir, bee_proto::spool::DELIVERY_SPOOL_FILE).ok()),
    };
    let mut report = StatusReport {
        daemon: DaemonState::NotRunning,
        socket: socket.as_ref().map(|s| s.display().to_string()).unwrap_or_default(),
        cli_version: env!("CARGO_PKG_VERSION").to_owned(),
        protocol_version: PROTOCOL_VERSION,
        daemon_version: None,
        pid: None,
        started_at_utc: None,
        socket_activated: None,
        stores: Vec::new(),
        spool,
        message: None,
    };
    let answer = match &socket {
        Some(socket) => client::get(socket, STATUS_PATH, Duration::from_secs(3)),
        None => Err(ClientError::NotRunning("(neither BEE_HOME nor HOME is set)".into())),
    };
    let daemon: Result<DaemonStatus, ClientError> = answer
        .and_then(|answer| serde_json::from_slice(&answer.body).map_err(|err| ClientError::Transport(err.to_string())));
    match daemon {
        Ok(daemon) => {
            report.daemon = DaemonState::Running;
            report.daemon_version = Some(daemon.daemon_version);
            report.pid = Some(daemon.pid);
            report.started_at_utc = Some(daemon.started_at_utc);
            report.socket_activated = Some(daemon.socket_activated);
            report.stores = daemon.stores;
            Rendered::json(Exit::Success, &report)
        }
        Err(err) => {
            if !matches!(err, ClientError::NotRunning(_)) {
                report.daemon = DaemonState::Unreachable;
            }
            report.message = Some(err.to_string());
            report.stores = bee_proto::paths::default_delivery_store()
                .map(|store| vec![bee_daemon::delivery::report::store_status(&store)])
                .unwrap_or_default();
            Rendered::json(Exit::Unavailable, &report)
        }
    }
}

/// The dashboard URL the running beed wrote beside its socket (with the read
/// secret, unless reads are open); exit 5 when there is none to open.
pub fn dashboard() -> Rendered {
    let unavailable =
        |message: String| Rendered::json(Exit::Unavailable, &CommandError::unavailable(NO_DASHBOARD, message));
    let Some(socket) = bee_proto::paths::socket_path() else {
        return unavailable("neither BEE_HOME nor HOME is set".into());
    };
    if let Err(err) = client::get(&socket, STATUS_PATH, Duration::from_secs(3)) {
        return unavailable(format!("beed is not running on {}: {err}", socket.display()));
    }
    let url_file = bee_proto::paths::beside_socket(DASHBOARD_URL_FILE).unwrap_or_default();
    let url = bee_daemon::storage::files::read_small_text(&url_file);
    match url {
        Ok(url) if url.starts_with("http://") => {
            Rendered { exit: Exit::Success, bytes: format!("{url}\n").into_bytes() }
        }
        _ => unavailable("beed serves no loopback listener: start it with --http 127.0.0.1:PORT (or BEE_HTTP)".into()),
    }
}
