//! What the ledger lets in: the bounds serde cannot check (times, ranges,
//! lengths) of every record, whoever brings it — a producer's append, a
//! spooled line, a log's evidence. The store, the spool and the HTTP
//! routes all refuse by this one rule.

use bee_proto::ledger::bounds;
use bee_proto::ledger::{CallRecord, CallSource, LedgerRecord, OwnUnit, Provider, QuotaSnapshot};
use bee_proto::usage::Counters;

/// Why a record is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid ledger record: {0}")]
pub struct InvalidRecord(pub &'static str);

pub(crate) fn required_ms(text: &str, what: &'static str) -> Result<i64, InvalidRecord> {
    bee_proto::time::parse_rfc3339_ms(text).ok_or(InvalidRecord(what))
}

pub(crate) fn optional_ms(text: Option<&str>, what: &'static str) -> Result<Option<i64>, InvalidRecord> {
    text.map(|t| required_ms(t, what)).transpose()
}

/// Checks a call's times, ranges and lengths.
pub fn validate_call(call: &CallRecord) -> Result<(), InvalidRecord> {
    required_ms(&call.started_at_utc, "startedAtUtc")?;
    if call.cost_usd.is_some_and(|c| !c.is_finite() || !(0.0..=bounds::MAX_CALL_COST_USD).contains(&c)) {
        return Err(InvalidRecord("costUsd"));
    }
    if call.duration_ms.is_some_and(|d| d > bounds::MAX_CALL_DURATION_MS) {
        return Err(InvalidRecord("durationMs"));
    }
    let tokens = call.tokens.iter().flat_map(Counters::values);
    if tokens.chain([call.context_window, call.context_tokens]).flatten().any(|n| n > bounds::MAX_CALL_TOKENS) {
        return Err(InvalidRecord("token counter"));
    }
    if [call.model_invocations, call.compactions].into_iter().flatten().any(|n| n > bounds::MAX_CALL_COUNT) {
        return Err(InvalidRecord("modelInvocations or compactions"));
    }
    for snapshot in &call.quota_snapshots {
        validate_snapshot(snapshot)?;
    }
    let texts = [call.model.as_deref(), call.project_path.as_deref(), call.session_id.as_deref()];
    if texts.iter().flatten().any(|t| t.len() > bounds::MAX_TEXT_BYTES) {
        return Err(InvalidRecord("text field too long"));
    }
    Ok(())
}

/// Checks a record a producer appends: what serde cannot (times, ranges,
/// lengths), and that a call is a producer's span.
pub fn validate(record: &LedgerRecord) -> Result<(), InvalidRecord> {
    match record {
        LedgerRecord::Call(call) => {
            // Log-derived evidence and telemetry-timed requests are beed's
            // own reading, never something appended.
            if matches!(call.source, CallSource::Derived | CallSource::Ingested | CallSource::ApiRequest) {
                return Err(InvalidRecord("source"));
            }
            validate_call(call)?;
        }
        LedgerRecord::Limit(limit) => {
            required_ms(&limit.at_utc, "atUtc")?;
            optional_ms(limit.resets_at_utc.as_deref(), "resetsAtUtc")?;
            if [limit.limit_id.as_deref(), limit.session_id.as_deref()].into_iter().flatten().any(|t| t.len() > 128) {
                return Err(InvalidRecord("limitId or sessionId"));
            }
            if limit.window_minutes.is_some_and(|m| m > bounds::MAX_CALL_DURATION_MS / 60_000) {
                return Err(InvalidRecord("windowMinutes"));
            }
        }
        LedgerRecord::Work(work) => {
            required_ms(&work.at_utc, "atUtc")?;
            let hex = work.commit_hash.len() >= 7
                && work.commit_hash.len() <= 64
                && work.commit_hash.bytes().all(|b| b.is_ascii_hexdigit());
            if !hex {
                return Err(InvalidRecord("commitHash"));
            }
            if work.run_mode.len() > 64 || work.task_id.len() > 256 {
                return Err(InvalidRecord("runMode or taskId"));
            }
        }
        LedgerRecord::Snapshot { snapshot, .. } => validate_snapshot(snapshot)?,
        LedgerRecord::TurnMark(mark) => {
            required_ms(&mark.at_utc, "atUtc")?;
            if mark.session_id.is_empty() || mark.session_id.len() > 128 {
                return Err(InvalidRecord("sessionId"));
            }
            let paths = [mark.transcript_path.as_deref(), mark.cwd.as_deref()];
            if paths.iter().flatten().any(|p| p.len() > bounds::MAX_TEXT_BYTES || !p.starts_with('/')) {
                return Err(InvalidRecord("transcriptPath or cwd"));
            }
        }
    }
    Ok(())
}

fn validate_snapshot(snapshot: &QuotaSnapshot) -> Result<(), InvalidRecord> {
    required_ms(&snapshot.observed_at_utc, "observedAtUtc")?;
    if snapshot.limit_id.as_ref().is_some_and(|id| id.len() > 128) {
        return Err(InvalidRecord("limitId"));
    }
    optional_ms(snapshot.resets_at_utc.as_deref(), "resetsAtUtc")?;
    if !snapshot.used_percent.is_finite() || !(0.0..=bounds::MAX_USED_PERCENT).contains(&snapshot.used_percent) {
        return Err(InvalidRecord("usedPercent"));
    }
    Ok(())
}

/// The largest cost Bee takes an agent to have written for one response:
/// far above any one request's price; a larger one is a broken or hostile
/// record, and the cost is unknown.
pub const MAX_AGENT_COST_USD: f64 = OwnUnit::Usd.max();

/// Whether `figure` is one `provider` can have written beside a response
/// in its own unit ([`Provider::own_unit`]), as the ledger keeps it.
pub fn is_own_figure(provider: Provider, figure: f64) -> bool {
    provider.own_unit().holds(figure)
}

/// The figure `provider` wrote beside a response as the ledger keeps it:
/// within Bee's bounds for its unit ([`is_own_figure`]), else unknown; `-0`
/// as `0`.
pub fn own_figure(provider: Provider, figure: f64) -> Option<f64> {
    let figure = figure + 0.0;
    is_own_figure(provider, figure).then_some(figure)
}
