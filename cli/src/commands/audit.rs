//! `beectl audit` and `beectl audit canary`: the receipts of the hook event
//! chain boundary by boundary and the class of the spec's priority order.
//!
//! The audit reads the events store and the spool offline (the same library
//! beed uses), asks a live beed's stream what it presents, checks the pinned
//! manifest against the settings in place, and runs the outcome checks here,
//! outside the hook path. The canary sends one harmless event through the
//! real `bee-hook` and follows its id through every boundary.

use bee_daemon::client::stream::{self, StreamTarget};
use bee_daemon::events::audit::{self, Context, Presented};
use bee_daemon::events::store;
use bee_daemon::rendered::Rendered;
use bee_daemon::storage::sqlite;
use bee_proto::audit::{AuditReport, AuditSummary, Boundary, Manifest, Receipt, ReceiptStatus};
use bee_proto::delivery::Issue;
use bee_proto::events::{EVENTS_RECENT_PATH, MAX_RECENT, RECEIPT_PREFIX};
use bee_proto::exit::Exit;
use serde_json::Value;
use std::fmt::Write as _;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use beectl::args::AuditArgs;

/// How long the canary waits for its event on the stream.
const CANARY_LINGER: Duration = Duration::from_secs(3);
/// The canary's source app: its events never mix with a real app's.
pub const CANARY_APP: &str = "bee-canary";

fn unavailable(issue: &str, message: String) -> Rendered {
    crate::render::errors::unavailable(issue, Some(message))
}

struct Inputs {
    manifest: Option<Manifest>,
    settings: Option<Result<Value, String>>,
    no_outcome_checks: bool,
}

fn inputs(args: &AuditArgs) -> Result<Inputs, Rendered> {
    // The manifest `hooks install` pinned beside the settings, unless another is named.
    let pinned = Path::new(".claude").join(audit::MANIFEST_FILE);
    let named = args.manifest.clone().or_else(|| pinned.is_file().then(|| pinned.display().to_string()));
    let manifest = match &named {
        Some(path) => Some(audit::load_manifest(Path::new(path)).map_err(|err| unavailable("manifest_invalid", err))?),
        None => None,
    };
    let settings = manifest.as_ref().map(|_| {
        let path = args.settings.clone().unwrap_or_else(|| ".claude/settings.json".to_owned());
        audit::read_json(Path::new(&path))
    });
    Ok(Inputs { manifest, settings, no_outcome_checks: args.no_outcome_checks })
}

/// The audit's context: the manifest's checks run here and now, from the
/// current directory.
fn context<'a>(inputs: &'a Inputs, spool: Option<&'a Path>, presented: Option<audit::Witness<'a>>) -> Context<'a> {
    Context {
        manifest: inputs.manifest.as_ref(),
        settings: inputs.settings.clone(),
        installed_version: inputs.manifest.as_ref().and_then(|_| audit::installed_claude_version()),
        spool_dir: spool,
        presented,
        outcome: inputs
            .manifest
            .as_ref()
            .filter(|_| !inputs.no_outcome_checks)
            .and_then(|m| audit::run_outcome_checks(&m.outcome, Path::new("."))),
        now_ms: bee_proto::time::now_unix_ms(),
    }
}

/// The events store read-only, once its integrity check passed (damage is
/// `corrupt`, named): `None` when there is none yet.
fn events_store() -> Result<Option<store::Connection>, Rendered> {
    let Some(dir) = bee_proto::paths::default_events_store() else {
        return Err(unavailable("io", bee_proto::paths::NO_HOME.into()));
    };
    match store::open_checked(&dir) {
        Ok(conn) => Ok(Some(conn)),
        Err(refused) if refused.issue == Issue::Missing => Ok(None),
        Err(refused) => {
            Err(unavailable(refused.issue.as_str(), format!("events store at {}: {}", dir.display(), refused.reason)))
        }
    }
}

fn socket() -> Option<PathBuf> {
    bee_proto::paths::socket_path().filter(|socket| std::os::unix::net::UnixStream::connect(socket).is_ok())
}

/// What a stream client of `session` gets from `target` now (that
/// session's replay, `linger` of its live events).
fn presented(target: &StreamTarget, session: &str, linger: Duration, until_seen: Option<i64>) -> Presented {
    Presented::received(stream::read(target, Some(session), linger, until_seen).map(stream::Received::into_parts))
}

pub fn audit(args: AuditArgs) -> Rendered {
    let inputs = match inputs(&args) {
        Ok(inputs) => inputs,
        Err(rendered) => return rendered,
    };
    let conn = match events_store() {
        Ok(conn) => conn,
        Err(rendered) => return rendered,
    };
    let table = crate::render::terminal::for_people(args.table);
    // Each session judged by its own replay: other sessions' traffic
    // cannot push it out of what the stream owes.
    let target = socket().map(StreamTarget::Socket);
    let witness =
        |session: &str| target.as_ref().map(|t| presented(t, session, Duration::ZERO, None)).unwrap_or_default();
    let spool = bee_proto::paths::spool_dir();
    let cx = context(&inputs, spool.as_deref(), target.is_some().then_some(&witness as audit::Witness<'_>));
    let result = match &args.session {
        Some(session) => audit::audit_session(conn.as_ref(), session, &cx).map(|report| {
            // Nothing stored or spooled: not a session Bee ever saw.
            if report.evidence.newest_ms.is_none() {
                return Rendered::json(
                    Exit::Unavailable,
                    &bee_proto::delivery::CommandError::unavailable(
                        "no_such_session",
                        format!("no event of session {session} is stored or waiting in the spool"),
                    ),
                );
            }
            let exit = gate(&args, std::iter::once(report.class));
            let mut rendered = if table { text(report_table("audit", &report)) } else { Rendered::json(exit, &report) };
            rendered.exit = exit;
            rendered
        }),
        None => {
            let sessions = match &conn {
                Some(conn) => store::recent_sessions(conn, cx.now_ms - 24 * 3_600_000, 300),
                None => Ok(Vec::new()),
            };
            sessions.and_then(|sessions| {
                let reports = sessions
                    .iter()
                    .map(|session| audit::audit_session(conn.as_ref(), session, &cx))
                    .collect::<Result<Vec<_>, _>>()?;
                let mut issues = Vec::new();
                if conn.is_none() {
                    issues.push("no_events_store".to_owned());
                }
                let summary = AuditSummary { schema_version: 1, sessions: reports, issues };
                let exit = gate(&args, summary.sessions.iter().map(|r| r.class));
                let mut rendered = if table { text(summary_table(&summary)) } else { Rendered::json(exit, &summary) };
                rendered.exit = exit;
                Ok(rendered)
            })
        }
    };
    // A read that failed: `corrupt` when SQLite says the store is damaged.
    result.unwrap_or_else(|err| unavailable(sqlite::issue_of(&err).as_str(), err.to_string()))
}

/// Exit 5 when a class `--fail-on` names is among `classes`: the report
/// is printed either way.
fn gate(args: &AuditArgs, mut classes: impl Iterator<Item = bee_proto::audit::AuditClass>) -> Exit {
    if classes.any(|class| args.fail_on.contains(&class)) { Exit::Unavailable } else { Exit::Success }
}

/// What the canary's hook run said.
struct HookRun {
    exit: Option<i32>,
    stored_id: Option<i64>,
    said: String,
}

/// The canary's known lifecycle sequence: the minimal single-agent manifest.
pub const CANARY_SEQUENCE: [&str; 4] = ["SessionStart", "PreToolUse", "PostToolUse", "Stop"];

/// One event of the canary's sequence through the real `bee-hook`, with
/// opaque fields only.
fn send_canary_event(session: &str, event: &str, tool_use_id: &str) -> Result<HookRun, String> {
    let mut envelope = serde_json::json!({"session_id": session, "hook_event_name": event});
    match event {
        "PreToolUse" | "PostToolUse" => {
            envelope["tool_name"] = "bee_canary".into();
            envelope["tool_use_id"] = tool_use_id.into();
        }
        "SessionStart" => envelope["source"] = "startup".into(),
        "Stop" => envelope["stop_hook_active"] = false.into(),
        _ => {}
    }
    let mut child = Command::new(crate::setup::hooks::bee_hook())
        .args(["event", "--source-app", CANARY_APP])
        .env("BEE_HOOK_DEBUG", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|err| format!("cannot run bee-hook: {err}"))?;
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(envelope.to_string().as_bytes());
    }
    let output = child.wait_with_output().map_err(|err| format!("bee-hook: {err}"))?;
    let said = String::from_utf8_lossy(&output.stderr).trim().to_owned();
    let stored_id = said
        .lines()
        .find_map(|line| line.strip_prefix(RECEIPT_PREFIX))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|id| id.parse().ok());
    Ok(HookRun { exit: output.status.code(), stored_id, said })
}

fn set(receipts: &mut [Receipt], boundary: Boundary, status: ReceiptStatus, evidence: String) {
    if let Some(receipt) = receipts.iter_mut().find(|r| r.boundary == boundary) {
        receipt.status = status;
        receipt.evidence = evidence;
    }
}

pub fn canary(args: AuditArgs) -> Rendered {
    let inputs = match inputs(&args) {
        Ok(inputs) => inputs,
        Err(rendered) => return rendered,
    };
    let session = uuid::Uuid::new_v4().hyphenated().to_string();
    let tool_use_id = format!("toolu_bee_canary_{}", uuid::Uuid::new_v4().simple());
    let mut hooks = Vec::new();
    for event in CANARY_SEQUENCE {
        match send_canary_event(&session, event, &tool_use_id) {
            Ok(hook) => hooks.push((event, hook)),
            Err(err) => return unavailable("io", err),
        }
    }
    let ids: Vec<i64> = hooks.iter().filter_map(|(_, hook)| hook.stored_id).collect();
    let live = socket();
    // Persistence: the exact ids, as the server lists them.
    let listed: Option<Vec<i64>> = live.as_ref().filter(|_| !ids.is_empty()).and_then(|socket| {
        let path = format!("{EVENTS_RECENT_PATH}?limit={MAX_RECENT}");
        bee_daemon::client::get(socket, &path, Duration::from_secs(5)).ok().map(|answer| {
            let recent = serde_json::from_slice::<Vec<Value>>(&answer.body).unwrap_or_default();
            let listed: Vec<i64> = recent.iter().filter_map(|event| event.get("id").and_then(Value::as_i64)).collect();
            ids.iter().copied().filter(|id| listed.contains(id)).collect()
        })
    });
    // Presentation: a fresh stream client must get every id (replay or live).
    let target = match (&args.stream, &live) {
        (Some(url), _) => Some(StreamTarget::Url { url: url.clone(), secret: http_read_secret() }),
        (None, Some(socket)) => Some(StreamTarget::Socket(socket.clone())),
        (None, None) => None,
    };
    let presented = match (ids.iter().max(), &target) {
        (Some(last), Some(target)) => Some(presented(target, &session, CANARY_LINGER, Some(*last))),
        _ => None,
    };
    let witness = |_: &str| presented.clone().unwrap_or_default();
    let conn = match events_store() {
        Ok(conn) => conn,
        Err(rendered) => return rendered,
    };
    let spool = bee_proto::paths::spool_dir();
    let cx = context(&inputs, spool.as_deref(), presented.is_some().then_some(&witness as audit::Witness<'_>));
    let mut report = match audit::audit_session(conn.as_ref(), &session, &cx) {
        Ok(report) => report,
        Err(err) => return unavailable(sqlite::issue_of(&err).as_str(), err.to_string()),
    };
    canary_receipts(&mut report, &hooks, listed.as_deref(), cx.now_ms);
    let exit = gate(&args, std::iter::once(report.class));
    let table = crate::render::terminal::for_people(args.table);
    let mut rendered = if table { text(report_table("canary", &report)) } else { Rendered::json(exit, &report) };
    rendered.exit = exit;
    rendered
}

/// The canary's own evidence over what the store and spool say: every
/// event of its sequence answered with a stored id and listed; without a
/// manifest, its known sequence is its coverage.
fn canary_receipts(report: &mut AuditReport, hooks: &[(&str, HookRun)], listed: Option<&[i64]>, now_ms: i64) {
    let evidence = &mut report.evidence;
    let unanswered: Vec<String> = hooks
        .iter()
        .filter(|(_, hook)| hook.stored_id.is_none())
        .map(|(event, hook)| {
            let exit = hook.exit.map_or_else(|| "a signal".to_owned(), |code| code.to_string());
            let said = if hook.said.is_empty() { "nothing" } else { hook.said.as_str() };
            format!("{event}: bee-hook exited {exit} without a stored id; it said: {said}")
        })
        .collect();
    let ids: Vec<(&str, i64)> = hooks.iter().filter_map(|(event, hook)| Some((*event, hook.stored_id?))).collect();
    if unanswered.is_empty() {
        let answered: Vec<String> = ids.iter().map(|(event, id)| format!("{event} {id}")).collect();
        set(
            &mut report.receipts,
            Boundary::Transport,
            ReceiptStatus::Pass,
            format!("HTTP 200 with a stored id for each: {} (bee-hook exited 0)", answered.join(", ")),
        );
    } else {
        evidence.undelivered = evidence.undelivered.max(unanswered.len() as u64);
        set(&mut report.receipts, Boundary::Transport, ReceiptStatus::Fail, unanswered.join("; "));
    }
    let is_listed = |id: &i64| listed.is_some_and(|l| l.contains(id));
    let unlisted: Vec<i64> = ids.iter().map(|(_, id)| *id).filter(|id| listed.is_some() && !is_listed(id)).collect();
    match listed {
        Some(_) if !unlisted.is_empty() => {
            evidence.unreceipted = evidence.unreceipted.max(unlisted.len() as u64);
            let text = format!("ids {unlisted:?} not in recent events");
            set(&mut report.receipts, Boundary::Persistence, ReceiptStatus::Fail, text);
        }
        Some(listed) if !listed.is_empty() => {
            let text = format!("ids {listed:?} in recent events");
            set(&mut report.receipts, Boundary::Persistence, ReceiptStatus::Pass, text);
        }
        _ => {}
    }
    // Coverage of the canary's known sequence, when no manifest judged it.
    let coverage_unknown =
        report.receipts.iter().any(|r| r.boundary == Boundary::Coverage && r.status == ReceiptStatus::Unknown);
    if coverage_unknown && listed.is_some() {
        let arrived: Vec<&str> = ids.iter().filter(|(_, id)| is_listed(id)).map(|(event, _)| *event).collect();
        let missing: Vec<&str> = CANARY_SEQUENCE.iter().copied().filter(|event| !arrived.contains(event)).collect();
        if missing.is_empty() {
            let text = format!("the canary's sequence arrived: {}", CANARY_SEQUENCE.join(", "));
            set(&mut report.receipts, Boundary::Coverage, ReceiptStatus::Pass, text);
        } else {
            evidence.missing = missing.iter().map(|event| (*event).to_owned()).collect();
            let text = format!("missing: {}", missing.join(", "));
            set(&mut report.receipts, Boundary::Coverage, ReceiptStatus::Fail, text);
        }
    }
    evidence.note_unverified(&report.receipts);
    report.class = evidence.classify(now_ms);
}

fn text(body: String) -> Rendered {
    Rendered { exit: Exit::Success, bytes: body.into_bytes() }
}

/// Every session of the last day, one table each; when there is none, a
/// sentence that says so and why (never an empty answer).
fn summary_table(summary: &AuditSummary) -> String {
    if summary.sessions.is_empty() {
        let why = if summary.issues.iter().any(|issue| issue == "no_events_store") {
            "no events store yet: no hook event was ever stored (`beectl setup` wires the hooks)"
        } else {
            "no session stored a hook event in the last day"
        };
        return format!("audit: no session to audit — {why}\n");
    }
    summary.sessions.iter().map(|r| report_table("audit", r)).collect::<Vec<_>>().join("\n")
}

fn report_table(what: &str, report: &AuditReport) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{what} session {}: {}", report.session_id, report.class.as_str());
    for receipt in &report.receipts {
        let status = match receipt.status {
            ReceiptStatus::Pass => "pass",
            ReceiptStatus::Fail => "FAIL",
            ReceiptStatus::Unknown => "-",
        };
        let _ = writeln!(out, "  {:<14} {:<5} {}", receipt.boundary.as_str(), status, receipt.evidence);
    }
    out
}

/// The loopback listener's read secret, kept beside beed's socket.
fn http_read_secret() -> Option<String> {
    let path = bee_proto::paths::beside_socket(bee_proto::events::HTTP_TOKEN_FILE)?;
    bee_daemon::storage::files::read_small_text(&path).ok().filter(|secret| !secret.is_empty())
}
