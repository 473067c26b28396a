//! `beectl daemon status`: what beed says about itself, or what can be seen
//! offline when it does not run (exit 5); `beectl daemon start|stop|restart`;
//! `beectl dashboard`: the URL of the running beed's dashboard, with the
//! read secret. Each a table or a sentence on a terminal, its JSON
//! document when piped or asked.

use bee_daemon::client::{self, ClientError};
use bee_daemon::rendered::Rendered;
use bee_proto::api::{DaemonState, DaemonStatus, PROTOCOL_VERSION, STATUS_PATH, SpoolStatus, StatusReport};
use bee_proto::delivery::CommandError;
use bee_proto::events::{DASHBOARD_URL_FILE, NO_DASHBOARD};
use bee_proto::exit::Exit;
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::process::CommandExt;
use std::time::Duration;

/// Every spool's backlog.
fn spool_backlogs(dir: Option<&std::path::Path>) -> Vec<bee_proto::api::SpoolBacklog> {
    [bee_proto::spool::DELIVERY_SPOOL_FILE, bee_proto::ledger::LEDGER_SPOOL_FILE, bee_proto::events::EVENTS_SPOOL_FILE]
        .into_iter()
        .map(|file| bee_proto::api::SpoolBacklog {
            file: file.to_owned(),
            pending_lines: dir.and_then(|dir| bee_proto::spool::pending_lines(dir, file).ok()),
        })
        .collect()
}

/// How far the ledger is behind the provider logs (read offline: the
/// ledger's offsets against the files on disk).
fn ingestion_lag() -> Vec<bee_proto::api::IngestionLag> {
    let Some(dir) = bee_proto::paths::default_ledger_store() else { return Vec::new() };
    let offsets =
        bee_daemon::ledger::stored::store::Reader::open(&dir).and_then(|reader| reader.offsets()).unwrap_or_default();
    bee_daemon::ledger::intake::ingest::lag(&bee_daemon::ledger::intake::ingest::Roots::from_env(), &offsets)
}

/// The status as JSON, or as a table for people.
fn answer_status(exit: Exit, report: &StatusReport, table: bool) -> Rendered {
    if !table {
        return Rendered::json(exit, report);
    }
    use std::fmt::Write as _;
    let mut out = String::new();
    let daemon = match report.daemon {
        DaemonState::Running => format!(
            "running, pid {}, version {}, since {}",
            report.pid.unwrap_or(0),
            report.daemon_version.as_deref().unwrap_or("?"),
            report.started_at_utc.as_deref().unwrap_or("?")
        ),
        DaemonState::NotRunning => "not running".to_owned(),
        DaemonState::Unreachable => "not answering".to_owned(),
    };
    let _ = writeln!(out, "beed      {daemon}");
    let _ = writeln!(out, "socket    {}", report.socket);
    let _ = writeln!(out, "beectl    {} (protocol {})", report.cli_version, report.protocol_version);
    if let Some(url) = &report.dashboard_url {
        let _ = writeln!(out, "dashboard {url}");
    }
    let _ = writeln!(out, "\n  {:<9} {:>10} {:>10} {:>9}  ISSUES / PATH", "STORE", "RECORDS", "SIZE", "CAPACITY");
    for store in &report.stores {
        let records = store.records.map_or("unknown".to_owned(), |n| n.to_string());
        let size = store.size_bytes.map_or("unknown".to_owned(), |b| format!("{:.1} MB", b as f64 / 1e6));
        let capacity = store.capacity.map_or("-".to_owned(), |c| c.to_string());
        let issues: Vec<&str> = store.issues.iter().map(|i| i.as_str()).collect();
        let _ = writeln!(
            out,
            "  {:<9} {records:>10} {size:>10} {capacity:>9}  {}{}",
            store.name,
            if issues.is_empty() { String::new() } else { format!("[{}] ", issues.join(", ")) },
            store.path
        );
    }
    let _ = writeln!(out, "\n  {:<9} {:>10} {:>14} {:>14}", "LOGS", "FILES", "FILES BEHIND", "BYTES BEHIND");
    for lag in &report.ingestion {
        let _ = writeln!(
            out,
            "  {:<9} {:>10} {:>14} {:>14}",
            lag.provider.as_str(),
            lag.files,
            lag.files_behind,
            lag.bytes_behind
        );
    }
    crate::commands::agents::write_skipped(
        &mut out,
        report.ingestion.iter().flat_map(|lag| lag.skipped_files.iter().map(move |file| (lag.provider, file))),
    );
    let _ = writeln!(out, "\n  {:<22} {:>10}", "SPOOL", "PENDING");
    for spool in &report.spools {
        let pending = spool.pending_lines.map_or("unknown".to_owned(), |n| n.to_string());
        let _ = writeln!(out, "  {:<22} {pending:>10}", spool.file);
    }
    if let Some(export) = &report.export {
        let lines = crate::commands::export::lines(export);
        if !lines.is_empty() {
            let _ = writeln!(out, "\n{}", lines.join("\n"));
        }
    }
    if let Some(message) = &report.message {
        let _ = writeln!(out, "\n  {message}");
    }
    Rendered { exit, bytes: out.into_bytes() }
}

pub fn status(table: bool) -> Rendered {
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
        spools: spool_backlogs(spool_dir.as_deref()),
        ingestion: ingestion_lag(),
        dashboard_url: None,
        export: crate::commands::export::current(),
    };
    let answer = match &socket {
        Some(socket) => client::get(socket, STATUS_PATH, Duration::from_secs(3)),
        None => Err(ClientError::NotRunning(format!("({})", bee_proto::paths::NO_HOME))),
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
            report.dashboard_url = bee_proto::paths::beside_socket(DASHBOARD_URL_FILE)
                .and_then(|file| bee_daemon::storage::files::read_small_text(&file).ok())
                .filter(|url| url.starts_with("http://"));
            answer_status(Exit::Success, &report, table)
        }
        Err(err) => {
            report.message = Some(match err {
                // What to do about it, for the first look after installing.
                ClientError::NotRunning(_) => {
                    format!("{err}; start it: `beectl daemon start`, or `beectl setup` for a user service")
                }
                _ => {
                    report.daemon = DaemonState::Unreachable;
                    err.to_string()
                }
            });
            report.stores = [
                bee_proto::paths::default_delivery_store().map(|s| bee_daemon::delivery::report::store_status(&s)),
                bee_proto::paths::default_ledger_store().map(|s| bee_daemon::ledger::stored::store::store_status(&s)),
                bee_proto::paths::default_events_store().map(|s| bee_daemon::events::store::store_status(&s)),
            ]
            .into_iter()
            .flatten()
            .collect();
            answer_status(Exit::Unavailable, &report, table)
        }
    }
}

/// The dashboard URL the running beed wrote beside its socket (with the read
/// secret, unless reads are open); exit 5 when there is none to open.
pub fn dashboard() -> Rendered {
    let unavailable =
        |message: String| Rendered::json(Exit::Unavailable, &CommandError::unavailable(NO_DASHBOARD, message));
    let Some(socket) = bee_proto::paths::socket_path() else {
        return unavailable(bee_proto::paths::NO_HOME.into());
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

pub(crate) fn running() -> Option<DaemonStatus> {
    let socket = bee_proto::paths::socket_path()?;
    let answer = client::get(&socket, STATUS_PATH, Duration::from_secs(3)).ok()?;
    serde_json::from_slice(&answer.body).ok()
}

/// What `start`, `stop` or `restart` did: its document for pipes and
/// `--json`; for people a sentence, and a failure as words on stderr (its
/// error document, which `main` says there), as every error is.
fn control(action: &'static str, outcome: &'static str, pid: Option<u32>, message: Option<String>) -> Rendered {
    let exit = if outcome == "failed" { Exit::Unavailable } else { Exit::Success };
    let socket = bee_proto::paths::socket_path().map(|s| s.display().to_string()).unwrap_or_default();
    let done = Control { schema_version: 1, action, outcome, pid, socket, message };
    if !crate::render::terminal::for_people(None) {
        return Rendered::json(exit, &done);
    }
    if exit != Exit::Success {
        let why = done.message.as_deref().unwrap_or("no reason was given");
        return Rendered::json(exit, &CommandError::unavailable(outcome, format!("daemon {action}: {why}")));
    }
    Rendered { exit, bytes: (control_words(&done) + "\n").into_bytes() }
}

/// A sentence for what `start`, `stop` or `restart` did.
fn control_words(done: &Control) -> String {
    let pid = done.pid.map_or_else(String::new, |pid| format!(", pid {pid}"));
    let note = done.message.as_deref().map_or_else(String::new, |message| format!(" ({message})"));
    match done.outcome {
        "started" if done.action == "restart" => format!("beed restarted{pid}, on {}{note}", done.socket),
        "started" => format!("beed started{pid}, on {}{note}", done.socket),
        "already_running" => format!("beed is already running{pid}, on {}{note}", done.socket),
        "stopped" => format!("beed stopped{pid}{note}"),
        "not_running" => format!("beed is not running: nothing to stop{note}"),
        other => format!("beed: {other}{pid}{note}"),
    }
}

pub fn start() -> Rendered {
    start_as("start")
}

fn start_as(action: &'static str) -> Rendered {
    let done = launch();
    control(action, done.outcome, done.pid, done.message)
}

pub fn stop() -> Rendered {
    let done = halt();
    control("stop", done.outcome, done.pid, done.message)
}

/// What starting or stopping beed came to.
#[derive(Debug)]
pub(crate) struct Outcome {
    /// `started`, `already_running`, `stopped`, `not_running` or `failed`.
    pub outcome: &'static str,
    pub pid: Option<u32>,
    pub message: Option<String>,
}

fn outcome(outcome: &'static str, pid: Option<u32>, message: Option<String>) -> Outcome {
    Outcome { outcome, pid, message }
}

/// Starts beed in the background (its log beside its socket) and waits
/// until it answers.
pub(crate) fn launch() -> Outcome {
    if let Some(status) = running() {
        return outcome("already_running", Some(status.pid), None);
    }
    let Some(run_dir) = bee_proto::paths::socket_path().and_then(|s| s.parent().map(std::path::Path::to_owned)) else {
        return outcome("failed", None, Some(bee_proto::paths::NO_HOME.into()));
    };
    // beed's own log, for when it does not come up.
    let log_path = run_dir.join("beed.log");
    let log = bee_daemon::storage::files::ensure_private_dir(&run_dir)
        .and_then(|_| std::fs::OpenOptions::new().create(true).append(true).mode(0o600).open(&log_path));
    let log = match log {
        Ok(log) => log,
        Err(err) => return outcome("failed", None, Some(format!("{}: {err}", log_path.display()))),
    };
    let mut command = crate::setup::hooks::Beed::find().command();
    command.stdin(std::process::Stdio::null()).stdout(std::process::Stdio::null()).stderr(log);
    // Its own process group: a terminal's ^C or hang-up is not beed's.
    command.process_group(0);
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(err) => return outcome("failed", None, Some(format!("cannot run beed: {err}"))),
    };
    let deadline = std::time::Instant::now() + SETTLE;
    while std::time::Instant::now() < deadline {
        if let Some(status) = running() {
            return outcome("started", Some(status.pid), Some(format!("log: {}", log_path.display())));
        }
        if let Ok(Some(exit)) = child.try_wait() {
            return outcome(
                "failed",
                None,
                Some(format!("beed exited ({exit}) before answering; see {}", log_path.display())),
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    outcome("failed", Some(child.id()), Some(format!("beed did not answer within {SETTLE:?}")))
}

/// Asks the running beed to stop (SIGTERM) and waits until it is gone.
pub(crate) fn halt() -> Outcome {
    let Some(status) = running() else {
        return outcome("not_running", None, None);
    };
    let Some(pid) = i32::try_from(status.pid).ok().and_then(rustix::process::Pid::from_raw) else {
        return outcome("failed", None, Some(format!("beed reported pid {}", status.pid)));
    };
    if let Err(err) = rustix::process::kill_process(pid, rustix::process::Signal::TERM) {
        return outcome("failed", Some(status.pid), Some(format!("cannot signal beed: {err}")));
    }
    // Gone means the process, not only its socket: until it has exited it
    // still holds the stores, and a new beed would wait for them.
    let deadline = std::time::Instant::now() + SETTLE;
    while std::time::Instant::now() < deadline {
        if rustix::process::test_kill_process(pid).is_err() || exited_unreaped(status.pid) {
            return outcome("stopped", Some(status.pid), None);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    outcome("failed", Some(status.pid), Some(format!("beed {} still runs after {SETTLE:?}", status.pid)))
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
