//! `beectl daemon status`: what beed says about itself, or what can be seen
//! offline when it does not run (exit 5); `beectl dashboard`: the URL of the
//! running beed's dashboard, with the read secret.

use bee_daemon::client::{self, ClientError};
use bee_daemon::rendered::Rendered;
use bee_proto::api::{DaemonState, DaemonStatus, PROTOCOL_VERSION, STATUS_PATH, SpoolStatus, StatusReport};
use bee_proto::delivery::CommandError;
use bee_proto::events::{DASHBOARD_URL_FILE, NO_DASHBOARD};
use bee_proto::exit::Exit;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::os::unix::process::CommandExt;
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

/// How long `start` and `stop` wait for beed to answer, or to be gone.
const SETTLE: Duration = Duration::from_secs(10);

/// What `daemon start`, `stop` or `restart` did.
#[derive(Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct Control {
    schema_version: u32,
    action: &'static str,
    /// `started`, `already_running`, `stopped`, `not_running` or `failed`.
    outcome: &'static str,
    pid: Option<u32>,
    socket: String,
    message: Option<String>,
}

fn running() -> Option<DaemonStatus> {
    let socket = bee_proto::paths::socket_path()?;
    let answer = client::get(&socket, STATUS_PATH, Duration::from_secs(3)).ok()?;
    serde_json::from_slice(&answer.body).ok()
}

fn control(action: &'static str, outcome: &'static str, pid: Option<u32>, message: Option<String>) -> Rendered {
    let exit = if outcome == "failed" { Exit::Unavailable } else { Exit::Success };
    let socket = bee_proto::paths::socket_path().map(|s| s.display().to_string()).unwrap_or_default();
    Rendered::json(exit, &Control { schema_version: 1, action, outcome, pid, socket, message })
}

/// The `beed` installed beside this beectl, else the one on PATH.
fn beed() -> std::path::PathBuf {
    std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|dir| dir.join("beed")))
        .filter(|path| path.is_file())
        .unwrap_or_else(|| std::path::PathBuf::from("beed"))
}

pub fn start() -> Rendered {
    start_as("start")
}

fn start_as(action: &'static str) -> Rendered {
    if let Some(status) = running() {
        return control(action, "already_running", Some(status.pid), None);
    }
    let Some(run_dir) = bee_proto::paths::socket_path().and_then(|s| s.parent().map(std::path::Path::to_owned)) else {
        return control(action, "failed", None, Some("neither BEE_HOME nor HOME is set".into()));
    };
    // beed's own log, for when it does not come up.
    let log_path = run_dir.join("beed.log");
    let log = std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&run_dir)
        .and_then(|_| std::fs::OpenOptions::new().create(true).append(true).mode(0o600).open(&log_path));
    let log = match log {
        Ok(log) => log,
        Err(err) => return control(action, "failed", None, Some(format!("{}: {err}", log_path.display()))),
    };
    let mut command = std::process::Command::new(beed());
    command.stdin(std::process::Stdio::null()).stdout(std::process::Stdio::null()).stderr(log);
    // Its own process group: a terminal's ^C or hang-up is not beed's.
    command.process_group(0);
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(err) => return control(action, "failed", None, Some(format!("cannot run beed: {err}"))),
    };
    let deadline = std::time::Instant::now() + SETTLE;
    while std::time::Instant::now() < deadline {
        if let Some(status) = running() {
            return control(action, "started", Some(status.pid), Some(format!("log: {}", log_path.display())));
        }
        if let Ok(Some(exit)) = child.try_wait() {
            return control(
                action,
                "failed",
                None,
                Some(format!("beed exited ({exit}) before answering; see {}", log_path.display())),
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    control(action, "failed", Some(child.id()), Some(format!("beed did not answer within {SETTLE:?}")))
}

pub fn stop() -> Rendered {
    let Some(status) = running() else {
        return control("stop", "not_running", None, None);
    };
    let Some(pid) = i32::try_from(status.pid).ok().and_then(rustix::process::Pid::from_raw) else {
        return control("stop", "failed", None, Some(format!("beed reported pid {}", status.pid)));
    };
    if let Err(err) = rustix::process::kill_process(pid, rustix::process::Signal::TERM) {
        return control("stop", "failed", Some(status.pid), Some(format!("cannot signal beed: {err}")));
    }
    // Gone means the process, not only its socket: until it has exited it
    // still holds the stores, and a new beed would wait for them.
    let deadline = std::time::Instant::now() + SETTLE;
    while std::time::Instant::now() < deadline {
        if rustix::process::test_kill_process(pid).is_err() || exited_unreaped(status.pid) {
            return control("stop", "stopped", Some(status.pid), None);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    control("stop", "failed", Some(status.pid), Some(format!("beed {} still runs after {SETTLE:?}", status.pid)))
}

/// Whether `pid` has exited and waits only to be reaped (a zombie: its
/// parent, now init, has not collected it yet). Linux's /proc says so.
fn exited_unreaped(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| stat.rsplit_once(')').map(|(_, rest)| rest.trim_start().starts_with('Z')))
        .unwrap_or(false)
}

pub fn restart() -> Rendered {
    let stopped = stop();
    if stopped.exit != Exit::Success {
        return stopped;
    }
    start_as("restart")
}
