//! Gathering a session's audit evidence boundary by boundary — the events
//! store, the sender spool, the stream, the pinned manifest against
//! `.claude/settings.json`, the outcome checks — and turning it into
//! receipts and a class. Shared by `beectl audit` and beed's dashboard.

use bee_proto::audit::{
    AuditReport, Boundary, DEFAULT_EVENT_DEADLINE_SECONDS, DEFAULT_EVIDENCE_TTL_SECONDS, Evidence, Manifest,
    OutcomeCheck, Receipt, ReceiptStatus, Wait,
};
use bee_proto::events::{EVENTS_SPOOL_FILE, PostFailure, SpooledEvent};
use rusqlite::Connection;
use serde_json::Value;
use std::collections::{BTreeSet, HashSet};
use std::io::{BufReader, Read};
use std::path::Path;

use crate::events::store::{self, SessionEvent};
use crate::storage::lines::{self, Line};

/// A pinned manifest with the settings beside it.
pub struct Pinned {
    manifest: Manifest,
    settings: Result<Value, String>,
}

impl Pinned {
    /// The manifests that load; one that does not is said in the log.
    pub fn load(paths: &[std::path::PathBuf]) -> Vec<Pinned> {
        paths
            .iter()
            .filter(|path| path.exists())
            .filter_map(|path| match load_manifest(path) {
                Ok(manifest) => {
                    let settings = path.with_file_name("settings.json");
                    Some(Pinned { manifest, settings: read_json(&settings) })
                }
                Err(err) => {
                    tracing::warn!("manifest not used for verdicts: {err}");
                    None
                }
            })
            .collect()
    }
}

/// The manifest the verdicts use unless told otherwise: the user's
/// `~/.claude/bee-manifest.json` (`beectl setup` pins it).
pub fn default_manifests() -> Vec<std::path::PathBuf> {
    std::env::var_os("HOME")
        .filter(|home| !home.is_empty())
        .map(|home| std::path::PathBuf::from(home).join(".claude").join(MANIFEST_FILE))
        .into_iter()
        .collect()
}

/// How far back a session's last event may lie for its verdict to be shown
/// (the dashboard) or counted (the export), and how many sessions at most.
pub const RECENT_SESSIONS_MS: i64 = 24 * 3_600_000;
pub const RECENT_SESSIONS: usize = 300;

/// A recent session's verdict, and the source app it was judged as.
#[derive(Debug, Clone)]
pub struct Verdict {
    pub source_app: Option<String>,
    pub report: AuditReport,
}

/// The verdict of every recent session, each judged by the pinned manifest
/// of its source app (none pinned: the boundaries it would prove stay
/// unknown).
pub fn recent_verdicts(
    conn: &Connection,
    pinned: &[Pinned],
    spool: &Path,
    presented: Option<Witness<'_>>,
    now_ms: i64,
) -> rusqlite::Result<Vec<Verdict>> {
    let sessions = store::recent_sessions(conn, now_ms - RECENT_SESSIONS_MS, RECENT_SESSIONS)?;
    sessions
        .iter()
        .map(|session| {
            let app = store::session_source_app(conn, session)?;
            let found = app.as_deref().and_then(|app| pinned.iter().find(|p| p.manifest.source_app == app));
            let cx = Context {
                manifest: found.map(|p| &p.manifest),
                settings: found.map(|p| p.settings.clone()),
                installed_version: found.and_then(|_| installed_version()),
                spool_dir: Some(spool),
                presented,
                outcome: None,
                now_ms,
            };
            Ok(Verdict { report: audit_session(Some(conn), session, &cx)?, source_app: app })
        })
        .collect()
}

/// The installed Claude Code's version, asked at most once a minute: the
/// verdicts are asked every few seconds.
fn installed_version() -> Option<String> {
    use std::time::{Duration, Instant};
    static ASKED: std::sync::Mutex<Option<(Instant, Option<String>)>> = std::sync::Mutex::new(None);
    let mut asked = ASKED.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    match &*asked {
        Some((at, version)) if at.elapsed() < Duration::from_secs(60) => version.clone(),
        _ => {
            let version = installed_claude_version();
            *asked = Some((Instant::now(), version.clone()));
            version
        }
    }
}

/// Largest manifest or settings file read.
const MAX_CONFIG_BYTES: u64 = 4 * 1024 * 1024;

/// Reads a small JSON configuration file (a manifest, Claude Code settings).
pub fn read_json(path: &Path) -> Result<Value, String> {
    let file = crate::storage::files::open_regular(path).map_err(|err| format!("{}: {err}", path.display()))?;
    let mut text = Vec::new();
    file.take(MAX_CONFIG_BYTES + 1).read_to_end(&mut text).map_err(|err| format!("{}: {err}", path.display()))?;
    if text.len() as u64 > MAX_CONFIG_BYTES {
        return Err(format!("{} is over {MAX_CONFIG_BYTES} bytes", path.display()));
    }
    serde_json::from_slice(&text).map_err(|err| format!("{} is not JSON: {err}", path.display()))
}

/// A pinned manifest file, checked.
pub fn load_manifest(path: &Path) -> Result<Manifest, String> {
    let manifest: Manifest =
        serde_json::from_value(read_json(path)?).map_err(|err| format!("{}: {err}", path.display()))?;
    if manifest.schema_version != 1 {
        return Err(format!("{}: schemaVersion must be 1", path.display()));
    }
    Ok(manifest)
}

/// The manifest file `hooks install` and `setup` pin beside the settings.
pub const MANIFEST_FILE: &str = "bee-manifest.json";

/// `claude --version`, when a `claude` runs here.
pub fn installed_claude_version() -> Option<String> {
    let output = std::process::Command::new("claude")
        .arg("--version")
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    let text = String::from_utf8(output.stdout).ok()?;
    output.status.success().then(|| text.trim().to_owned()).filter(|t| !t.is_empty())
}

/// What a stream client received: the ids, and the oldest id the replay
/// covered (older events are outside what a stream owes).
#[derive(Debug, Clone, Default)]
pub struct Presented {
    pub oldest_replayed: i64,
    pub ids: HashSet<i64>,
    /// Why the stream could not be read, when it could not.
    pub failure: Option<String>,
}

impl Presented {
    /// What a stream client received (the ids of its replay, and every id
    /// it saw), or why it could not read the stream.
    pub fn received(received: Result<(Vec<i64>, HashSet<i64>), String>) -> Presented {
        match received {
            Ok((replayed, ids)) => Presented {
                // A full replay covers only the newest events; a shorter one covers all.
                oldest_replayed: if replayed.len() >= bee_proto::events::REPLAY_EVENTS {
                    replayed.iter().copied().min().unwrap_or(i64::MIN)
                } else {
                    i64::MIN
                },
                ids,
                failure: None,
            },
            Err(failure) => Presented { oldest_replayed: i64::MIN, ids: HashSet::new(), failure: Some(failure) },
        }
    }
}

/// What a stream client received of one session: a per-session replay
/// read for it (so no other session's traffic decides its receipt), or a
/// page's own report of what it showed.
pub type Witness<'a> = &'a dyn Fn(&str) -> Presented;

/// Everything besides the events store the audit looks at.
#[derive(Default)]
pub struct Context<'a> {
    pub manifest: Option<&'a Manifest>,
    /// `.claude/settings.json`, parsed; `Err` says why it is not readable.
    pub settings: Option<Result<Value, String>>,
    /// `claude --version` as installed, when it was asked.
    pub installed_version: Option<String>,
    pub spool_dir: Option<&'a Path>,
    /// What a stream client got of a session; `None` when no stream is read.
    pub presented: Option<Witness<'a>>,
    /// Outcome checks' verdict and evidence, when they ran.
    pub outcome: Option<(bool, String)>,
    pub now_ms: i64,
}

/// Longest spool line read back.
const MAX_SPOOL_LINE: u64 = bee_proto::events::MAX_EVENT_BYTES as u64 + 4096;

/// The sender spool's pending lines for `session`.
pub fn spooled(spool_dir: &Path, session: &str) -> Vec<SpooledEvent> {
    let Ok(file) = crate::storage::files::open_regular(&spool_dir.join(EVENTS_SPOOL_FILE)) else { return Vec::new() };
    let mut reader = BufReader::new(file.take(1 << 30));
    let (mut found, mut line) = (Vec::new(), Vec::new());
    while let Ok((kind, _)) = lines::next(&mut reader, MAX_SPOOL_LINE, &mut line) {
        match kind {
            Line::Complete => {
                if let Ok(record) = bee_proto::spool::unseal(line.trim_ascii_end())
                    && let Ok(spooled) = serde_json::from_slice::<SpooledEvent>(record)
                    && spooled.event.get("session_id").and_then(Value::as_str) == Some(session)
                {
                    found.push(spooled);
                }
            }
            Line::Oversized { complete: true } => {}
            _ => break,
        }
    }
    found
}

/// Audits `session` from the events store (`None`: no store yet) and `cx`.
pub fn audit_session(conn: Option<&Connection>, session: &str, cx: &Context<'_>) -> rusqlite::Result<AuditReport> {
    let (stored, damaged): (Vec<_>, Vec<_>) = match conn {
        Some(conn) => store::session_events(conn, session)?,
        None => Vec::new(),
    }
    .into_iter()
    .partition(|event| event.verified);
    let issues = match conn {
        Some(conn) => store::receipt_issues(conn, session)?,
        None => Vec::new(),
    };
    let pending = cx.spool_dir.map(|dir| spooled(dir, session)).unwrap_or_default();
    let mut receipts = Vec::new();
    let mut evidence = Evidence {
        evidence_ttl_seconds: cx.manifest.and_then(|m| m.evidence_ttl_seconds).unwrap_or(DEFAULT_EVIDENCE_TTL_SECONDS),
        ..Evidence::default()
    };

    // Configuration: the pinned manifest against the settings actually in place.
    let configured: Option<BTreeSet<String>> = match (cx.manifest, &cx.settings) {
        (Some(manifest), Some(Ok(settings))) => {
            Some(crate::events::claude_settings::configured_events(settings, &manifest.source_app))
        }
        _ => None,
    };
    match cx.manifest {
        Some(manifest) => {
            let mut drift: Vec<String> = match (&configured, &cx.settings) {
                (Some(configured), _) => manifest
                    .required_events
                    .iter()
                    .filter(|required| !configured.contains(&required.event))
                    .map(|required| format!("not_configured:{}", required.event))
                    .collect(),
                (None, Some(Err(reason))) => vec![format!("settings_unreadable:{reason}")],
                (None, _) => vec!["settings_missing".to_owned()],
            };
            match &cx.installed_version {
                Some(installed) if !installed.starts_with(&manifest.claude_code_version) => drift
                    .push(format!("claude_code_version:expected {}, found {installed}", manifest.claude_code_version)),
                _ => {}
            }
            receipts.push(match (drift.is_empty(), &cx.installed_version) {
                (false, _) => fail(Boundary::Configuration, drift.join(", ")),
                // A version nobody could check is not a pass.
                (true, None) => Receipt {
                    boundary: Boundary::Configuration,
                    status: ReceiptStatus::Unknown,
                    evidence: format!(
                        "{} required events configured for source app {}; the pinned Claude Code {} was not checked \
                         (no claude answered --version here)",
                        manifest.required_events.len(),
                        manifest.source_app,
                        manifest.claude_code_version
                    ),
                },
                (true, Some(installed)) => pass(
                    Boundary::Configuration,
                    format!(
                        "{} required events configured for source app {}; Claude Code {installed} as pinned ({})",
                        manifest.required_events.len(),
                        manifest.source_app,
                        manifest.claude_code_version
                    ),
                ),
            });
            evidence.drift = Some(drift);
        }
        None => receipts.push(unknown(Boundary::Configuration, "no pinned manifest")),
    }

    // Transport: every post answered; none left to or taken from the spool.
    // A post answered without an id did cross transport: persistence says so.
    let answered = |delivery: &str| delivery == "direct" || delivery == store::failure_name(&PostFailure::NoReceipt);
    let undelivered: Vec<String> = stored
        .iter()
        .filter(|event| !answered(&event.delivery))
        .map(|event| format!("event {} arrived through the spool ({})", event.id, event.delivery))
        .chain(
            pending
                .iter()
                .filter(|line| line.failure != PostFailure::NoReceipt)
                .map(|line| format!("a post still in the spool ({})", store::failure_name(&line.failure))),
        )
        .collect();
    evidence.undelivered = undelivered.len() as u64;
    receipts.push(match (undelivered.is_empty(), stored.is_empty()) {
        (false, _) => fail(Boundary::Transport, undelivered.join("; ")),
        (true, false) => pass(Boundary::Transport, format!("{} posts answered with a stored id", stored.len())),
        (true, true) => unknown(Boundary::Transport, "no event of this session was posted"),
    });

    // Persistence: the ids are in the store; no post accepted without one.
    // A stored event that fails its checksum is no receipt either.
    let unreceipted =
        issues.len() + damaged.len() + pending.iter().filter(|line| line.failure == PostFailure::NoReceipt).count();
    evidence.unreceipted = unreceipted as u64;
    let damaged_ids: Vec<i64> = damaged.iter().map(|event| event.id).collect();
    receipts.push(match (unreceipted, stored.first(), stored.last()) {
        _ if !damaged_ids.is_empty() => {
            fail(Boundary::Persistence, format!("stored events {damaged_ids:?} fail their checksum (corrupt)"))
        }
        (0, Some(first), Some(last)) => {
            pass(Boundary::Persistence, format!("ids {}..{} stored ({} events)", first.id, last.id, stored.len()))
        }
        (0, _, _) => unknown(Boundary::Persistence, "nothing stored for this session"),
        (n, _, _) => fail(Boundary::Persistence, format!("{n} posts accepted without a stored id")),
    });

    // Presentation: what a stream client got of the stored ids it owes.
    match cx.presented.map(|witness| witness(session)) {
        Some(presented) => {
            let owed: Vec<i64> = stored.iter().map(|e| e.id).filter(|id| *id >= presented.oldest_replayed).collect();
            let missed: Vec<i64> = owed.iter().copied().filter(|id| !presented.ids.contains(id)).collect();
            evidence.unpresented = Some(missed.len() as u64);
            receipts.push(match (&presented.failure, missed.is_empty()) {
                (Some(reason), _) if !missed.is_empty() => fail(Boundary::Presentation, reason.clone()),
                (_, false) => fail(Boundary::Presentation, format!("stream did not deliver ids {missed:?}")),
                (_, true) if owed.is_empty() => unknown(
                    Boundary::Presentation,
                    "no stored id of this session within what the stream replayed of it",
                ),
                (_, true) => pass(Boundary::Presentation, format!("stream delivered ids {owed:?}")),
            });
        }
        None => receipts.push(unknown(Boundary::Presentation, "stream not checked")),
    }

    // Coverage: each configured, required event by its deadline. An owned,
    // unexpired permission request is read from the last event.
    evidence.stopped = stored.iter().any(|e| e.hook_event_type == "Stop");
    // The owner and deadline the event carries, else the manifest's policy
    // for its type and tool (Claude Code sends neither).
    evidence.waiting = stored.last().filter(|e| e.hook_event_type == "PermissionRequest").map(|e| {
        let policy = cx.manifest.and_then(|m| m.wait_policy(&e.hook_event_type, e.tool_name.as_deref()));
        Wait {
            owner: e.owner.clone().or_else(|| policy.map(|p| p.owner.clone())),
            deadline_ms: e.deadline_ms.or_else(|| policy.map(|p| p.deadline_after(e.timestamp_ms))),
        }
    });
    match (cx.manifest, stored.first()) {
        (Some(manifest), Some(first)) => {
            evidence.missing = missing_events(manifest, configured.as_ref(), &stored, first, cx.now_ms);
            receipts.push(if evidence.missing.is_empty() {
                pass(Boundary::Coverage, "every configured required event arrived or is not yet due".to_owned())
            } else {
                fail(Boundary::Coverage, format!("missing past deadline: {}", evidence.missing.join(", ")))
            });
        }
        (Some(_), None) => receipts.push(unknown(Boundary::Coverage, "no event of this session stored")),
        (None, _) => receipts.push(unknown(Boundary::Coverage, "no pinned manifest")),
    }

    // Outcome: checked outside the hook path, or no receipt.
    evidence.outcome = cx.outcome.as_ref().map(|(ok, _)| *ok);
    receipts.push(match &cx.outcome {
        Some((true, what)) => pass(Boundary::Outcome, what.clone()),
        Some((false, what)) => fail(Boundary::Outcome, what.clone()),
        None => unknown(Boundary::Outcome, "no outcome check configured"),
    });

    evidence.note_unverified(&receipts);
    let spooled_at = pending.iter().filter_map(|line| bee_proto::time::parse_rfc3339_ms(&line.at_utc));
    evidence.newest_ms = stored.iter().map(|e| e.received_at_ms).chain(spooled_at).max();
    Ok(AuditReport {
        schema_version: 1,
        session_id: session.to_owned(),
        class: evidence.classify(cx.now_ms),
        receipts,
        evidence,
        checked_at_utc: bee_proto::time::format_unix_ms(cx.now_ms),
    })
}

fn missing_events(
    manifest: &Manifest,
    configured: Option<&BTreeSet<String>>,
    stored: &[SessionEvent],
    first: &SessionEvent,
    now_ms: i64,
) -> Vec<String> {
    manifest
        .required_events
        .iter()
        // An event not configured is drift, not a coverage gap.
        .filter(|required| configured.is_none_or(|c| c.contains(&required.event)))
        .filter_map(|required| {
            let seconds = required.deadline_seconds.unwrap_or(DEFAULT_EVENT_DEADLINE_SECONDS);
            let deadline = first.timestamp_ms.saturating_add(i64::try_from(seconds.saturating_mul(1000)).ok()?);
            let arrived = stored.iter().any(|e| e.hook_event_type == required.event && e.timestamp_ms <= deadline);
            (!arrived && now_ms > deadline).then(|| required.event.clone())
        })
        .collect()
}

fn pass(boundary: Boundary, evidence: String) -> Receipt {
    Receipt { boundary, status: ReceiptStatus::Pass, evidence }
}

fn fail(boundary: Boundary, evidence: String) -> Receipt {
    Receipt { boundary, status: ReceiptStatus::Fail, evidence }
}

fn unknown(boundary: Boundary, evidence: &str) -> Receipt {
    Receipt { boundary, status: ReceiptStatus::Unknown, evidence: evidence.to_owned() }
}

/// Runs the manifest's outcome checks from `dir`: all must pass. Commands
/// run with no shell, their output discarded (only the exit status counts).
pub fn run_outcome_checks(checks: &[OutcomeCheck], dir: &Path) -> Option<(bool, String)> {
    if checks.is_empty() {
        return None;
    }
    let mut verdicts = Vec::new();
    let mut ok = true;
    for check in checks {
        let (passed, what) = match check {
            OutcomeCheck::File { path, contains } => {
                let full = dir.join(path);
                let content = crate::storage::files::open_regular(&full).and_then(|mut file| {
                    let mut text = Vec::new();
                    file.read_to_end(&mut text).map(|_| text)
                });
                match (content, contains) {
                    (Ok(text), Some(needle)) => {
                        let found = memchr::memmem::find(&text, needle.as_bytes()).is_some();
                        (found, format!("file {path} {}", if found { "has the text" } else { "lacks the text" }))
                    }
                    (Ok(_), None) => (true, format!("file {path} exists")),
                    (Err(_), _) => (false, format!("file {path} missing or not a regular file")),
                }
            }
            OutcomeCheck::Command { argv } => {
                let status = argv.split_first().map(|(program, args)| {
                    std::process::Command::new(program)
                        .args(args)
                        .current_dir(dir)
                        .stdin(std::process::Stdio::null())
                        .stdout(std::process::Stdio::null())
                        .stderr(std::process::Stdio::null())
                        .status()
                });
                let name = argv.first().map_or("(empty)", String::as_str);
                match status {
                    Some(Ok(status)) if status.success() => (true, format!("command {name} exited 0")),
                    Some(Ok(status)) => {
                        (false, format!("command {name} exited {}", bee_proto::exit::shell_status(status)))
                    }
                    Some(Err(_)) => (false, format!("command {name} could not start")),
                    None => (false, "empty command".to_owned()),
                }
            }
        };
        ok &= passed;
        verdicts.push(what);
    }
    Some((ok, verdicts.join("; ")))
}
