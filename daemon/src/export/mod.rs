//! Export to a team's engine (spec/60): the `[export]` settings of
//! `config.toml`, the series read from the stores and the exporter's state
//! files here; the ledger's series, kept between sends and told apart by
//! origin, in [`counters`]; the two encodings in [`remote_write`]
//! (Prometheus) and [`otlp`] (OpenTelemetry); the sending loop in
//! [`exporter`].
//!
//! Every series is cumulative over the whole store, so a collector that was
//! down loses nothing (the next send carries every total), and a resend is
//! harmless. The same library paths answer `beectl usage` and `quota`, so a
//! series equals what the CLI prints.

pub mod counters;
pub mod exporter;
pub mod otlp;
pub mod remote_write;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use bee_proto::export::{self as names, ExportState, ExportStatus, LogCursor, StoreCursor};
use serde::Deserialize;

use crate::ledger::views::prices::PriceTable;
use crate::storage::files;
pub use counters::CounterState;

/// The shortest interval between sends (a collector is not a log).
const MIN_INTERVAL_SECONDS: u64 = 1;
const DEFAULT_INTERVAL_SECONDS: u64 = 30;

/// `[export]` of config.toml, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct ExportConfig {
    pub user: String,
    /// Prometheus remote write: `http://HOST[:PORT]/PATH`.
    pub remote_write: Option<Endpoint>,
    /// OTLP/HTTP metrics: the collector's base URL and `/v1/metrics`.
    pub otlp: Option<Endpoint>,
    /// OTLP/HTTP logs: the same base URL and `/v1/logs`.
    pub otlp_logs: Option<Endpoint>,
    /// Extra request headers (`Authorization`, tenant ids).
    pub headers: Vec<(String, String)>,
    pub interval: Duration,
    /// Certificates (DER) trusted for HTTPS beside the system's roots: a
    /// team's own CA, from `ca_file`.
    pub extra_roots: Vec<Vec<u8>>,
}

/// Where a request goes, split for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    pub url: String,
    pub authority: String,
}

/// What config.toml says about export.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Settings {
    /// A destination is configured and every setting is valid.
    pub config: Option<ExportConfig>,
    pub user: Option<String>,
    pub interval_seconds: Option<u64>,
    /// Why export is off although config.toml has an `[export]` table.
    pub errors: Vec<String>,
}

#[derive(Deserialize)]
struct File {
    export: Option<Table>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Table {
    user: Option<String>,
    prometheus_remote_write: Option<String>,
    otlp_endpoint: Option<String>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    headers_file: Option<PathBuf>,
    ca_file: Option<PathBuf>,
    interval_seconds: Option<u64>,
}

/// Reads `[export]` from `${BEE_HOME}/.bee/config.toml`; no file or no
/// table is export off, with no errors.
pub fn settings() -> Settings {
    match files::read_config::<File>() {
        Ok(file) => settings_of(file.and_then(|file| file.export)),
        Err(message) => Settings { errors: vec![message], ..Settings::default() },
    }
}

/// `[export]` of a config.toml's text (`path` names it in errors).
pub fn settings_from(text: &str, path: &Path) -> Settings {
    match toml::from_str::<File>(text) {
        Ok(file) => settings_of(file.export),
        Err(err) => Settings { errors: vec![files::config_error(path, &err)], ..Settings::default() },
    }
}

fn settings_of(table: Option<Table>) -> Settings {
    let Some(table) = table else { return Settings::default() };
    let mut errors = Vec::new();
    let interval_seconds = table.interval_seconds.unwrap_or(DEFAULT_INTERVAL_SECONDS);
    if interval_seconds < MIN_INTERVAL_SECONDS {
        errors.push(format!("interval_seconds: at least {MIN_INTERVAL_SECONDS}"));
    }
    let user = table.user.clone().filter(|user| !user.trim().is_empty());
    if user.is_none() {
        errors.push("user: required (the label on every series; Bee never derives it)".to_owned());
    }
    let mut endpoint = |key: &str, url: Option<&str>, path: &str| {
        url.and_then(|url| match parse_url(url, path) {
            Ok(endpoint) => Some(endpoint),
            Err(message) => {
                errors.push(format!("{key}: {message}"));
                None
            }
        })
    };
    let remote_write = endpoint("prometheus_remote_write", table.prometheus_remote_write.as_deref(), "");
    let otlp = endpoint("otlp_endpoint", table.otlp_endpoint.as_deref(), OTLP_METRICS_PATH);
    if table.prometheus_remote_write.is_none() && table.otlp_endpoint.is_none() {
        errors.push("prometheus_remote_write or otlp_endpoint: name where to send".to_owned());
    }
    let mut headers: Vec<(String, String)> = table.headers.into_iter().collect();
    if let Some(file) = &table.headers_file {
        match headers_from_file(file) {
            Ok(more) => headers.extend(more),
            Err(message) => errors.push(format!("headers_file: {message}")),
        }
    }
    for (name, value) in &headers {
        if hyper::header::HeaderName::from_bytes(name.as_bytes()).is_err()
            || hyper::header::HeaderValue::from_str(value).is_err()
        {
            errors.push(format!("headers: {name:?} is not a valid HTTP header"));
        }
    }
    let extra_roots = match &table.ca_file {
        Some(file) => roots_from_file(file).unwrap_or_else(|message| {
            errors.push(format!("ca_file: {message}"));
            Vec::new()
        }),
        None => Vec::new(),
    };
    let config = match (errors.is_empty(), user.clone()) {
        (true, Some(user)) => {
            let otlp_logs = otlp.as_ref().map(|metrics| Endpoint {
                url: format!("{}{OTLP_LOGS_PATH}", metrics.url.trim_end_matches(OTLP_METRICS_PATH)),
                authority: metrics.authority.clone(),
            });
            let interval = Duration::from_secs(interval_seconds);
            Some(ExportConfig { user, remote_write, otlp, otlp_logs, headers, interval, extra_roots })
        }
        _ => None,
    };
    Settings { config, user, interval_seconds: Some(interval_seconds), errors }
}

/// OTLP/HTTP's metrics and logs paths under the collector's base URL.
pub const OTLP_METRICS_PATH: &str = "/v1/metrics";
pub const OTLP_LOGS_PATH: &str = "/v1/logs";

/// `http[s]://HOST[:PORT]/PATH`, with `suffix` appended (OTLP's signal path).
fn parse_url(url: &str, suffix: &str) -> Result<Endpoint, String> {
    // Never echoed, never kept in the state file or the log.
    if url.contains('@') {
        return Err("credentials do not go in the URL: put them in headers or headers_file".to_owned());
    }
    let uri: hyper::Uri = url.parse().map_err(|err| format!("{url}: {err}"))?;
    if !matches!(uri.scheme_str(), Some("http" | "https")) {
        return Err(format!("{url}: an http:// or https:// URL"));
    }
    let authority = uri.authority().map(|a| a.as_str().to_owned()).ok_or_else(|| format!("{url}: no host"))?;
    let url = if suffix.is_empty() { url.to_owned() } else { format!("{}{suffix}", url.trim_end_matches('/')) };
    Ok(Endpoint { url, authority })
}

/// The certificates of a PEM file (a CA to trust for HTTPS).
fn roots_from_file(path: &Path) -> Result<Vec<Vec<u8>>, String> {
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject;
    let shown = path.display();
    let text = files::read_text_at_most(path, 1 << 20).map_err(|err| format!("{shown}: {err}"))?;
    let roots: Vec<Vec<u8>> = CertificateDer::pem_slice_iter(text.as_bytes())
        .map(|cert| cert.map(|cert| cert.to_vec()))
        .collect::<Result<_, _>>()
        .map_err(|err| format!("{shown}: {err}"))?;
    if roots.is_empty() {
        return Err(format!("{shown}: no PEM certificate in it"));
    }
    Ok(roots)
}

/// `Name: value` lines of a 0600 file (credentials stay out of config.toml).
fn headers_from_file(path: &Path) -> Result<Vec<(String, String)>, String> {
    use std::os::unix::fs::PermissionsExt;
    let shown = path.display();
    let file = files::open_regular(path).map_err(|err| format!("{shown}: {err}"))?;
    let mode = file.metadata().map_err(|err| format!("{shown}: {err}"))?.permissions().mode();
    if mode & 0o077 != 0 {
        return Err(format!("{shown}: readable by others (mode {:o}); chmod 600 it", mode & 0o777));
    }
    let text = files::read_text_at_most(path, 64 * 1024).map_err(|err| format!("{shown}: {err}"))?;
    text.lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .map(|line| {
            line.split_once(':')
                .map(|(name, value)| (name.trim().to_owned(), value.trim().to_owned()))
                .ok_or_else(|| format!("{shown}: a line is not `Name: value`"))
        })
        .collect()
}

/// One sample of one series.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub name: &'static str,
    /// Sorted by name, as remote write wants; `__name__` excluded.
    pub labels: Vec<(&'static str, String)>,
    pub value: f64,
}

impl Series {
    /// `name{label="value",…}`: the series' identity at a receiver.
    pub fn key(&self) -> String {
        counters::series_key(self.name, &self.labels)
    }

    /// The series' identity without `user` and `host` (the counters'
    /// state names it so).
    pub fn id_key(&self) -> String {
        let labels: Vec<(&'static str, String)> = self
            .labels
            .iter()
            .filter(|(label, _)| *label != names::LABEL_USER && *label != names::LABEL_HOST)
            .cloned()
            .collect();
        counters::SeriesId::new(self.name, &labels).key()
    }
}

/// Where the series are read from.
#[derive(Debug, Clone)]
pub struct Stores {
    pub ledger: PathBuf,
    pub delivery: PathBuf,
    pub events: PathBuf,
    /// What the audit verdicts need beside the events store: the pinned
    /// manifests, the sender spool, and beed's socket (its stream is the
    /// presentation receipt, read as `beectl audit` reads it).
    pub manifests: Vec<PathBuf>,
    pub spool: PathBuf,
    pub socket: PathBuf,
}

/// The verdicts of the recent sessions, as the dashboard judges them.
fn recent_verdicts(stores: &Stores, now_ms: i64) -> Result<Vec<crate::events::audit::Verdict>, String> {
    let conn = crate::events::store::open_reader(&stores.events).map_err(|issue| issue.as_str().to_owned())?;
    let pinned = crate::events::audit::Pinned::load(&stores.manifests);
    // No beed answering: presentation is unchecked, and the verdicts say so.
    // Each session is judged by its own replay, as `beectl audit` judges it.
    let target = crate::client::stream::StreamTarget::Socket(stores.socket.clone());
    let witness = |session: &str| {
        crate::events::audit::Presented::received(
            crate::client::stream::read(&target, Some(session), std::time::Duration::ZERO, None)
                .map(crate::client::stream::Received::into_parts),
        )
    };
    let presented = std::os::unix::net::UnixStream::connect(&stores.socket)
        .is_ok()
        .then_some(&witness as crate::events::audit::Witness<'_>);
    crate::events::audit::recent_verdicts(&conn, &pinned, &stores.spool, presented, now_ms)
        .map_err(|err| crate::storage::sqlite::issue_of(&err).as_str().to_owned())
}

/// One full read of the stores: the series, the record counts they cover
/// (the cursor), what could not be read, and the recent sessions' verdicts
/// (`None` when the events store could not be judged), which the log
/// events compare with the ones last sent.
#[derive(Debug, Clone)]
pub struct Reading {
    pub series: Vec<Series>,
    pub cursor: StoreCursor,
    pub problems: Vec<String>,
    pub verdicts: Option<Vec<crate::events::audit::Verdict>>,
}

/// [`read`]'s series, cursor and problems.
pub fn read_series(stores: &Stores, user: &str, host: &str, now_ms: i64) -> (Vec<Series>, StoreCursor, Vec<String>) {
    let reading = read(stores, user, host, now_ms, &mut None, &BTreeMap::new());
    (reading.series, reading.cursor, reading.problems)
}

/// Every series of the stores at `now_ms`, labelled with `user` and `host`,
/// and the record counts they cover (the cursor). A store that cannot be
/// read contributes no series (unknown, not zero) and names itself in the
/// error list. `counters` is what the exporter keeps of the ledger between
/// reads ([`counters::read`]; `None` before the first); `floors`, what was
/// last sent of each counter ([`Sent::floors`]).
pub fn read(
    stores: &Stores,
    user: &str,
    host: &str,
    now_ms: i64,
    counters: &mut Option<CounterState>,
    floors: &BTreeMap<String, f64>,
) -> Reading {
    // Counted first: a record that lands while the series are read is
    // beyond the cursor, so it is never reported as sent when it was not.
    let covered = cursor(stores);
    let mut out = Vec::new();
    let mut verdicts = None;
    let mut problems = Vec::new();
    let common = [(names::LABEL_USER, user.to_owned()), (names::LABEL_HOST, host.to_owned())];
    let mut push = |name: &'static str, labels: &[(&'static str, String)], value: f64| {
        let mut all: Vec<(&'static str, String)> =
            common.iter().chain(labels).filter(|(_, v)| !v.is_empty()).cloned().collect();
        all.sort();
        out.push(Series { name, labels: all, value });
    };
    push(names::BUILD_INFO, &[(names::LABEL_VERSION, env!("CARGO_PKG_VERSION").to_owned())], 1.0);
    push(names::LAST_SEND_TIMESTAMP, &[], now_ms as f64 / 1000.0);
    match counters::read(&stores.ledger, counters, now_ms, &PriceTable::user_or_bundled(), floors) {
        Ok(series) => {
            for (id, value) in series {
                push(id.name, &id.labels, value);
            }
        }
        Err(issue) => problems.push(format!("ledger: {}", issue.as_str())),
    }
    if stores.delivery.exists() {
        let query = crate::delivery::report::ReportQuery { session: None, limit: 100 };
        let rendered = crate::delivery::report::report(&stores.delivery, &query);
        match serde_json::from_slice::<bee_proto::delivery::Report>(&rendered.bytes) {
            Ok(report) => {
                for group in report.groups.iter().filter(|g| g.dimension == bee_proto::delivery::Dimension::Surface) {
                    let s = [(names::LABEL_SURFACE, group.identity.clone())];
                    push(names::DELIVERY_OBSERVATIONS_TOTAL, &s, group.delivered_events as f64);
                    push(names::DELIVERY_BYTES_TOTAL, &s, group.delivered_utf8_bytes as f64);
                }
            }
            Err(_) => problems.push("delivery: its report could not be read".to_owned()),
        }
    }
    if stores.events.exists() {
        match crate::events::store::open_reader(&stores.events).and_then(|conn| {
            crate::events::store::counts_by_type(&conn).map_err(|err| crate::storage::sqlite::issue_of(&err))
        }) {
            Ok(counts) => {
                for (event_type, source_app, count) in counts {
                    push(
                        names::HOOK_EVENTS_TOTAL,
                        &[(names::LABEL_TYPE, event_type), (names::LABEL_SOURCE_APP, source_app)],
                        count as f64,
                    );
                }
            }
            Err(issue) => problems.push(format!("events: {}", issue.as_str())),
        }
        match recent_verdicts(stores, now_ms) {
            Ok(judged) => {
                for class in bee_proto::audit::AuditClass::ALL {
                    let sessions = judged.iter().filter(|v| v.report.class == *class).count();
                    push(names::AUDIT_SESSIONS, &[(names::LABEL_CLASS, class.as_str().to_owned())], sessions as f64);
                }
                verdicts = Some(judged);
            }
            Err(issue) => problems.push(format!("events: the audit verdicts: {issue}")),
        }
    }
    Reading { series: out, cursor: covered, problems, verdicts }
}

/// The limit hits not sent yet, and how far (in the ledger's insertion
/// order) the notices were read. Notices are taken in the order they were
/// stored. Each one's hit is the notices around it, grouped as the views
/// group them ([`hit_of_each`]). A hit is sent once it is settled
/// (its last notice [`SAME_HIT_MS`] old: no notice can merge into it any
/// more), and only when none of its notices was read before: a notice
/// that joins a hit already sent sends nothing. Reading stops at the first
/// notice whose hit is still open, to go on from it next time.
///
/// [`hit_of_each`]: crate::ledger::stored::store::hit_of_each
/// [`SAME_HIT_MS`]: crate::ledger::stored::store::SAME_HIT_MS
fn unsent_limit_hits(
    ledger: &Path,
    from: &LogCursor,
    now_ms: i64,
) -> Result<(Vec<crate::ledger::stored::store::LimitRow>, i64), bee_proto::delivery::Issue> {
    let unchanged = Ok((Vec::new(), from.limit_notices_through_seq));
    if !ledger.exists() {
        return unchanged;
    }
    let reader = crate::ledger::stored::store::Reader::open(ledger)?;
    if reader.newest_limit_seq()? <= from.limit_notices_through_seq {
        return unchanged;
    }
    Ok(hits_to_send(&reader.limit_notices()?, from, now_ms))
}

/// [`unsent_limit_hits`] over `notices` (in time order, with their `seq`).
fn hits_to_send(
    notices: &[(i64, crate::ledger::stored::store::LimitRow)],
    from: &LogCursor,
    now_ms: i64,
) -> (Vec<crate::ledger::stored::store::LimitRow>, i64) {
    use crate::ledger::stored::store::{SAME_HIT_MS, hit_of_each};
    let hit_of = hit_of_each(notices.iter().map(|(_, notice)| (notice.provider, notice.at_ms)));
    // Each hit's notices (in time order), by its first one.
    let mut members: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for (at, first) in hit_of.iter().enumerate() {
        members.entry(*first).or_default().push(at);
    }
    let mut by_arrival: Vec<usize> =
        (0..notices.len()).filter(|&at| notices[at].0 > from.limit_notices_through_seq).collect();
    by_arrival.sort_by_key(|&at| notices[at].0);
    let mut through = from.limit_notices_through_seq;
    let mut sent = Vec::new();
    for at in by_arrival {
        let hit = members.get(&hit_of[at]).map(Vec::as_slice).unwrap_or_default();
        // Open while its last notice is recent: another may still join it.
        let last_at = hit.last().map_or(i64::MAX, |&last| notices[last].1.at_ms);
        if last_at > now_ms - SAME_HIT_MS || sent.len() >= LOG_EVENTS_PER_SEND {
            break;
        }
        let read_before = |member: &usize| {
            let (seq, notice) = &notices[*member];
            *seq <= through || notice.at_ms <= from.limit_hits_through_ms
        };
        if !hit.iter().any(read_before) {
            // Its notices merged as the views merge them.
            let merged = crate::ledger::stored::store::one_per_hit(
                hit.iter().map(|member| notices[*member].1.clone()).collect(),
            );
            sent.extend(merged);
        }
        through = notices[at].0;
    }
    (sent, through)
}

/// How grave an OTLP log event is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogLevel {
    /// A verdict that changed.
    Info,
    /// A limit hit.
    Warn,
    /// Records lost.
    Error,
}

/// One OTLP log event.
#[derive(Debug, Clone, PartialEq)]
pub struct LogEvent {
    pub at_ms: i64,
    pub name: &'static str,
    pub level: LogLevel,
    pub body: String,
    pub attributes: Vec<(&'static str, String)>,
}

/// At most this many log events go in one send; the rest follow.
const LOG_EVENTS_PER_SEND: usize = 1000;

/// The log events after `from`, at most [`LOG_EVENTS_PER_SEND`] limit
/// hits, and the cursor after them. Limit notices are read in the order
/// they reached the ledger ([`unsent_limit_hits`]), so a hit that arrived
/// late (beed was down, a rollout was read later) is sent all the same. The verdicts are those of the last full read
/// ([`Reading::verdicts`]); a change among them is sent once. A part that
/// cannot be read sends nothing and keeps its cursor.
pub fn read_log_events(
    stores: &Stores,
    from: LogCursor,
    verdicts: Option<&[crate::events::audit::Verdict]>,
    user: &str,
    host: &str,
    now_ms: i64,
) -> (Vec<LogEvent>, LogCursor, Vec<String>) {
    let (mut events, mut cursor, mut problems) = (Vec::new(), from.clone(), Vec::new());
    let common = || vec![(names::LABEL_USER, user.to_owned()), (names::LABEL_HOST, host.to_owned())];
    match unsent_limit_hits(&stores.ledger, &from, now_ms) {
        Ok((hits, through_seq)) => {
            cursor.limit_notices_through_seq = through_seq;
            for hit in hits {
                let mut attributes = common();
                attributes.push((names::LABEL_PROVIDER, hit.provider.as_str().to_owned()));
                if let Some(window) = hit.window {
                    attributes.push((names::LABEL_WINDOW, window.as_str().to_owned()));
                }
                if let Some(limit_id) = hit.limit_id {
                    attributes.push((names::LABEL_LIMIT_ID, limit_id));
                }
                events.push(LogEvent {
                    at_ms: hit.at_ms,
                    name: names::LOG_LIMIT_HIT,
                    level: LogLevel::Warn,
                    body: format!("{} usage limit hit", hit.provider.as_str()),
                    attributes,
                });
            }
        }
        Err(issue) => problems.push(format!("ledger: {}", issue.as_str())),
    }
    if let Some(journal) = stores.ledger.parent().map(|dir| dir.join(bee_proto::ledger::RECORD_FAILURES_FILE)) {
        match crate::ledger::intake::record_failures::read(&journal, from.record_failures_offset) {
            Ok((failures, offset)) => {
                cursor.record_failures_offset = offset;
                for failure in failures {
                    let mut attributes = common();
                    attributes.push(("producer", failure.producer.as_str().to_owned()));
                    attributes.push(("records", failure.records.to_string()));
                    events.push(LogEvent {
                        at_ms: bee_proto::time::parse_rfc3339_ms(&failure.at_utc).unwrap_or(now_ms),
                        name: names::LOG_RECORD_FAILED,
                        level: LogLevel::Error,
                        body: format!("{} ledger records could not be written", failure.records),
                        attributes,
                    });
                }
            }
            Err(err) => problems.push(format!("record failures: {err}")),
        }
    }
    if let Some(verdicts) = verdicts {
        for crate::events::audit::Verdict { report, source_app } in verdicts {
            let class = report.class.as_str();
            let previous = from.verdicts.get(&report.session_id);
            if previous.map(String::as_str) == Some(class) {
                continue;
            }
            let mut attributes = common();
            attributes.push((names::LABEL_SESSION_ID, report.session_id.clone()));
            if let Some(app) = source_app {
                attributes.push((names::LABEL_SOURCE_APP, app.clone()));
            }
            attributes.push((names::LABEL_CLASS, class.to_owned()));
            if let Some(previous) = previous {
                attributes.push((names::LABEL_PREVIOUS_CLASS, previous.clone()));
            }
            events.push(LogEvent {
                at_ms: now_ms,
                name: names::LOG_AUDIT_VERDICT_CHANGED,
                level: LogLevel::Info,
                body: match previous {
                    Some(previous) => format!("audit verdict {previous} -> {class}"),
                    None => format!("audit verdict {class}"),
                },
                attributes,
            });
        }
        cursor.verdicts =
            verdicts.iter().map(|v| (v.report.session_id.clone(), v.report.class.as_str().to_owned())).collect();
    }
    (events, cursor, problems)
}

/// The stores' record counts now (0 for a store that does not exist yet).
pub fn cursor(stores: &Stores) -> StoreCursor {
    let count = |status: bee_proto::api::StoreStatus| status.records.unwrap_or(0);
    StoreCursor {
        ledger_records: count(crate::ledger::stored::store::store_status(&stores.ledger)),
        delivery_records: count(crate::delivery::report::store_status(&stores.delivery)),
        event_records: count(crate::events::store::store_status(&stores.events)),
    }
}

/// This machine's name, the `host` label.
pub fn host_name() -> String {
    rustix::system::uname().nodename().to_string_lossy().into_owned()
}

/// The exporter's last state, when beed ever wrote one.
pub fn read_state() -> Option<ExportState> {
    let path = bee_proto::paths::export_state_file()?;
    let text = files::read_text_at_most(&path, 64 * 1024).ok()?;
    serde_json::from_str(&text).ok()
}

/// Writes the exporter's state (0600, atomically, its directory 0700).
pub fn write_state(state: &ExportState) -> std::io::Result<()> {
    write_private_json(bee_proto::paths::export_state_file(), &serde_json::to_vec_pretty(state)?)
}

/// What the exporter keeps for itself between sends and across restarts
/// (`export/counters.json`, beside its state): the ledger's running totals
/// ([`CounterState`]) and, per destination, the series it has taken (a
/// series new to it is sent from a 0 sample).
#[derive(Debug, Clone, Default, serde::Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Kept {
    #[serde(default)]
    pub counters: Option<counters::SavedCounters>,
    /// Per destination URL, the keys ([`Series::key`]) of the counters it took.
    #[serde(default)]
    pub taken: BTreeMap<String, std::collections::BTreeSet<String>>,
}

/// The largest `counters.json` read back: a few hundred series take tens of KB.
const MAX_KEPT_BYTES: u64 = 16 << 20;

/// What the exporter kept, when it kept anything readable.
pub fn read_kept() -> Option<Kept> {
    read_kept_from(&bee_proto::paths::export_counters_file()?)
}

/// [`read_kept`] of the file at `path`: `None` for one that is missing, too
/// large, not UTF-8 or not what beed writes (the exporter starts afresh).
fn read_kept_from(path: &Path) -> Option<Kept> {
    let text = files::read_text_at_most(path, MAX_KEPT_BYTES).ok()?;
    serde_json::from_str(&text).ok()
}

/// What each destination was last sent of every counter (`export/sent.json`,
/// written after each send that succeeded): kept apart from `counters.json`,
/// so that state lost or damaged is rebuilt from the ledger with no series
/// going backwards at a receiver, and a series a destination already holds
/// is never sent a 0 sample again. Input, not authority: a value that is
/// not a finite, non-negative number makes the whole file no record, and a
/// series' last values are used only while they fit in what the ledger
/// holds ([`counters::read`]).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, Deserialize)]
pub struct Sent {
    /// Per destination URL, per series (without `user` and `host`), the
    /// value last sent.
    #[serde(default)]
    pub to: BTreeMap<String, BTreeMap<String, f64>>,
}

impl Sent {
    fn is_sound(&self) -> bool {
        self.to.values().flat_map(BTreeMap::values).all(|value| value.is_finite() && *value >= 0.0)
    }

    /// `series` reached the destination at `url`.
    pub fn note(&mut self, url: &str, series: &[Series]) {
        let sent = self.to.entry(url.to_owned()).or_default();
        for one in series.iter().filter(|one| is_counter(one)) {
            sent.insert(one.id_key(), one.value);
        }
    }

    /// Whether the destination at `url` was ever sent `series`.
    pub fn holds(&self, url: &str, series: &Series) -> bool {
        self.to.get(url).is_some_and(|sent| sent.contains_key(&series.id_key()))
    }

    /// Each series' highest value sent to any destination.
    pub fn floors(&self) -> BTreeMap<String, f64> {
        let mut floors = BTreeMap::new();
        for (key, value) in self.to.values().flatten() {
            let floor: &mut f64 = floors.entry(key.clone()).or_default();
            *floor = floor.max(*value);
        }
        floors
    }
}

/// Whether `series` is a counter (a gauge may fall).
pub fn is_counter(series: &Series) -> bool {
    bee_proto::export::series_meta(series.name).is_some_and(|meta| meta.counter)
}

/// What was sent, when a record of it can be read.
pub fn read_sent() -> Option<Sent> {
    let text = files::read_text_at_most(&bee_proto::paths::export_sent_file()?, MAX_KEPT_BYTES).ok()?;
    serde_json::from_str::<Sent>(&text).ok().filter(Sent::is_sound)
}

/// Writes what was sent (0600, atomically, its directory 0700).
pub fn write_sent(sent: &Sent) -> std::io::Result<()> {
    write_private_json(bee_proto::paths::export_sent_file(), &serde_json::to_vec(sent)?)
}

/// Writes `bytes` at `path` (0600, atomically, its directory 0700); no
/// home, nothing to write.
fn write_private_json(path: Option<PathBuf>, bytes: &[u8]) -> std::io::Result<()> {
    let Some(path) = path else { return Ok(()) };
    if let Some(dir) = path.parent() {
        files::ensure_private_dir(dir)?;
    }
    files::write_private(&path, bytes)
}

/// Writes what the exporter keeps (0600, atomically, its directory 0700).
pub fn write_kept(kept: &Kept) -> std::io::Result<()> {
    write_private_json(bee_proto::paths::export_counters_file(), &serde_json::to_vec(kept)?)
}

/// `beectl export status`: the settings, the last state and the backlog.
pub fn status(stores: &Stores) -> ExportStatus {
    let settings = settings();
    let state = read_state();
    // Before its first success a destination has covered nothing: every
    // record waits. The furthest-behind destination sets the backlog.
    let now = state.as_ref().map(|_| cursor(stores));
    let backlog_records = state.as_ref().zip(now).and_then(|(state, now)| {
        state
            .destinations()
            .map(|(_, destination)| {
                let sent = destination.cursor.unwrap_or_default();
                now.ledger_records.saturating_sub(sent.ledger_records)
                    + now.delivery_records.saturating_sub(sent.delivery_records)
                    + now.event_records.saturating_sub(sent.event_records)
            })
            .max()
    });
    ExportStatus {
        schema_version: 1,
        enabled: settings.config.is_some(),
        user: settings.user,
        interval_seconds: settings.interval_seconds,
        config_errors: settings.errors,
        state,
        backlog_records,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::stored::store::LimitRow;
    use bee_proto::ledger::Provider;

    const MINUTE: i64 = 60_000;

    /// A Codex notice stored `seq`-th, at `minute`.
    fn notice(seq: i64, minute: i64) -> (i64, LimitRow) {
        let row = LimitRow {
            provider: Provider::Codex,
            at_ms: minute * MINUTE,
            window: None,
            window_minutes: None,
            limit_id: None,
        };
        (seq, row)
    }

    /// Notices in time order, as the ledger lists them.
    fn in_time_order(mut notices: Vec<(i64, LimitRow)>) -> Vec<(i64, LimitRow)> {
        notices.sort_by_key(|(seq, notice)| (notice.at_ms, *seq));
        notices
    }

    fn sent_at(hits: &[LimitRow]) -> Vec<i64> {
        hits.iter().map(|hit| hit.at_ms / MINUTE).collect()
    }

    /// A kept-totals file that is damaged, hostile, too large or not UTF-8
    /// is no state (the exporter starts afresh), never a panic; one beed
    /// wrote reads back.
    #[test]
    fn a_damaged_counters_file_is_no_state() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("counters.json");
        let oversized = format!("{{\"taken\":{{\"u\":[\"{}\"]}}}}", "x".repeat(MAX_KEPT_BYTES as usize));
        let bodies: [&[u8]; 6] = [
            b"",
            b"{\"counters\":",
            b"\xff\xfe{}",
            b"{\"counters\":{\"readAtMs\":\"soon\"}}",
            b"[1,2,3]",
            oversized.as_bytes(),
        ];
        for body in bodies {
            std::fs::write(&path, body).unwrap();
            assert!(read_kept_from(&path).is_none(), "{:?}", String::from_utf8_lossy(&body[..body.len().min(40)]));
        }
        // Series this Bee does not export, or labels it never sets, drop out.
        std::fs::write(
            &path,
            br#"{"counters":{"readAtMs":1,"boundaryMs":0,"cutMs":0,"changesSeen":3,"series":[
                {"name":"bee_tokens_total","labels":[["kind","output"],["evil","x"]],"beforeCut":1,"beforeBoundary":1,"total":1,"backfilled":0,"live":1},
                {"name":"bee_responses_total","labels":[["provider","claude"]],"beforeCut":1,"beforeBoundary":1,"total":2,"backfilled":1,"live":1}]},
              "taken":{"http://x/api/v1/write":["bee_responses_total{}"]}}"#,
        )
        .unwrap();
        let kept = read_kept_from(&path).unwrap();
        let state = CounterState::from(kept.counters.unwrap());
        assert_eq!(counters::SavedCounters::from(&state).series_names(), ["bee_responses_total"]);
        assert_eq!(kept.taken.len(), 1);
    }

    /// A hit is sent once, when settled, however late its notices reached
    /// the ledger; a notice joining a hit already sent sends nothing; an
    /// open hit waits, and what follows it waits with it.
    #[test]
    fn limit_hits_are_sent_once_in_the_order_they_arrived() {
        let mut cursor = LogCursor::default();
        // Two notices of one hit at minutes 100 and 101; another hit at 200 still open at 203.
        let notices = in_time_order(vec![notice(1, 100), notice(2, 101), notice(3, 200)]);
        let (hits, through) = hits_to_send(&notices, &cursor, 203 * MINUTE);
        assert_eq!((sent_at(&hits), through), (vec![100], 2), "one hit; the open one waits");
        cursor.limit_notices_through_seq = through;
        let (hits, through) = hits_to_send(&notices, &cursor, 206 * MINUTE);
        assert_eq!((sent_at(&hits), through), (vec![200], 3));
        cursor.limit_notices_through_seq = through;
        // Beed was down: a hit of minute 50 and a late notice of the hit at 100 arrive.
        let notices =
            in_time_order(vec![notice(1, 100), notice(2, 101), notice(3, 200), notice(4, 50), notice(5, 103)]);
        let (hits, through) = hits_to_send(&notices, &cursor, 300 * MINUTE);
        assert_eq!((sent_at(&hits), through), (vec![50], 5), "the late hit once; the late notice joins one sent");
        cursor.limit_notices_through_seq = through;
        assert_eq!(hits_to_send(&notices, &cursor, 400 * MINUTE), (Vec::new(), 5), "nothing twice");
    }

    /// A cursor of the versions that followed usage time: what it covered
    /// counts as sent; a later notice of an older time is still sent.
    #[test]
    fn a_usage_time_cursor_counts_as_sent() {
        let cursor = LogCursor { limit_hits_through_ms: 150 * MINUTE, ..LogCursor::default() };
        let notices = in_time_order(vec![notice(1, 100), notice(2, 200), notice(3, 120)]);
        let (hits, through) = hits_to_send(&notices, &cursor, 300 * MINUTE);
        assert_eq!((sent_at(&hits), through), (vec![200], 3), "minute 120 arrived late but before the upgrade");
    }

    fn read(text: &str) -> Settings {
        settings_from(text, Path::new("config.toml"))
    }

    #[test]
    fn export_is_off_without_a_table_and_every_mistake_is_named() {
        assert_eq!(read(""), Settings::default());
        assert_eq!(read("[compression]\nenabled = true\n"), Settings::default());
        let good = read(
            "[export]\nuser = \"alice\"\nprometheus_remote_write = \"http://127.0.0.1:9090/api/v1/write\"\nheaders = { \"X-Scope-OrgID\" = \"team\" }\ninterval_seconds = 5\n",
        );
        let config = good.config.unwrap();
        assert_eq!(config.user, "alice");
        assert_eq!(config.remote_write.unwrap().authority, "127.0.0.1:9090");
        assert_eq!(config.otlp, None);
        let otlp = read("[export]\nuser = \"a\"\notlp_endpoint = \"http://collector:4318/\"\n").config.unwrap();
        assert_eq!(otlp.otlp.unwrap().url, "http://collector:4318/v1/metrics");
        assert_eq!(otlp.otlp_logs.unwrap().url, "http://collector:4318/v1/logs");
        assert_eq!(otlp.remote_write, None);
        assert_eq!(config.headers, vec![("X-Scope-OrgID".to_owned(), "team".to_owned())]);
        assert_eq!(config.interval, Duration::from_secs(5));
        for (text, named) in [
            ("[export]\nprometheus_remote_write = \"http://h/w\"\n", "user: required"),
            ("[export]\nuser = \"a\"\n", "name where to send"),
            (
                "[export]\nuser = \"a\"\nprometheus_remote_write = \"http://h/w\"\nca_file = \"/nonexistent.pem\"\n",
                "ca_file",
            ),
            ("[export]\nuser = \"a\"\nprometheus_remote_write = \"ftp://h/w\"\n", "an http:// or https:// URL"),
            (
                "[export]\nuser = \"a\"\nprometheus_remote_write = \"http://h/w\"\ninterval_seconds = 0\n",
                "interval_seconds",
            ),
            ("[export]\nuser = \"a\"\notlp_endpoint = \"h:4318\"\n", "otlp_endpoint: h:4318"),
            (
                "[export]\nuser = \"a\"\nprometheus_remote_write = \"http://h/w\"\nheaders = { \"bad name\" = \"x\" }\n",
                "not a valid HTTP header",
            ),
            ("[export]\nuser = \"a\"\nprometheus_remote_write = \"http://h/w\"\ncolour = 1\n", "unknown field"),
            ("[export\n", "config.toml"),
            ("[export]\nheaders = { Authorization = \"Bearer secret-token\n", "at byte"),
            ("[export]\nuser = \"a\"\nprometheus_remote_write = \"http://me:secret-token@h/w\"\n", "credentials"),
            ("[export]\nuser = \"a\"\notlp_endpoint = \"http://h\"\nheaders = { X = \"secret-token\\n\" }\n", "X"),
        ] {
            let settings = read(text);
            assert!(settings.config.is_none(), "{text}");
            assert!(settings.errors.iter().any(|e| e.contains(named)), "{text}: {:?}", settings.errors);
            // A credential in a mistaken setting is not repeated in the error.
            assert!(!settings.errors.iter().any(|e| e.contains("secret-token")), "{text}: {:?}", settings.errors);
        }
    }

    #[test]
    fn a_headers_file_must_be_private() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("headers");
        std::fs::write(&file, "# the collector's token\nAuthorization: Bearer abc\n\nX-Scope-OrgID: team\n").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert!(headers_from_file(&file).unwrap_err().contains("chmod 600"));
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(
            headers_from_file(&file).unwrap(),
            vec![
                ("Authorization".to_owned(), "Bearer abc".to_owned()),
                ("X-Scope-OrgID".to_owned(), "team".to_owned())
            ]
        );
        std::fs::write(&file, "no colon here\n").unwrap();
        assert!(headers_from_file(&file).is_err());
    }
}
