//! The receipt audit: the evidence kept at each boundary of the hook event
//! chain, the pinned manifest a run is judged against, and the nine-class
//! classifier in the contract's priority order.

use serde::{Deserialize, Serialize};

crate::named! {
    /// An audit verdict, in priority order: the first that applies wins.
    pub enum AuditClass {
        DeliveryFailedHidden => "delivery_failed_hidden",
        PersistenceUnverified => "persistence_unverified",
        DashboardStale => "dashboard_stale",
        ManifestDrift => "manifest_drift",
        CoverageGap => "coverage_gap",
        Waiting => "waiting",
        FalseComplete => "false_complete",
        Stale => "stale",
        Healthy => "healthy",
    }
}

crate::named! {
    /// The boundaries a receipt is kept for.
    pub enum Boundary {
        Configuration => "configuration",
        Transport => "transport",
        Persistence => "persistence",
        Presentation => "presentation",
        Coverage => "coverage",
        Outcome => "outcome",
    }
}

/// Evidence expires after this long unless the manifest says otherwise.
pub const DEFAULT_EVIDENCE_TTL_SECONDS: u64 = 24 * 3600;
/// A required event without its own deadline must arrive this long after
/// the session's first event.
pub const DEFAULT_EVENT_DEADLINE_SECONDS: u64 = 600;

/// The pinned manifest: what a healthy run of this source app delivers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Manifest {
    pub schema_version: u32,
    /// The Claude Code version the required events were pinned against.
    pub claude_code_version: String,
    /// The `--source-app` the hooks must be configured with.
    pub source_app: String,
    pub required_events: Vec<RequiredEvent>,
    #[serde(default)]
    pub evidence_ttl_seconds: Option<u64>,
    /// Checks of the intended result, run outside the hook path.
    #[serde(default)]
    pub outcome: Vec<OutcomeCheck>,
    /// Who answers a waiting event (a permission request) and within how
    /// long, per event type and tool: Claude Code sends neither, and an
    /// event that carries its own `owner`/`deadline` wins.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub wait_policies: Vec<WaitPolicy>,
}

/// Who answers an event of `event` (for `tool`, or any tool when none is
/// named), within `deadlineSeconds` of the event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WaitPolicy {
    pub event: String,
    #[serde(default)]
    pub tool: Option<String>,
    pub owner: String,
    pub deadline_seconds: u64,
}

impl WaitPolicy {
    /// The deadline (unix ms) of a wait that began at `at_ms`.
    pub fn deadline_after(&self, at_ms: i64) -> i64 {
        at_ms.saturating_add(i64::try_from(self.deadline_seconds.saturating_mul(1000)).unwrap_or(i64::MAX))
    }
}

impl Manifest {
    /// The policy for an event of type `event` naming `tool`: one for that
    /// very tool first, else one for any tool.
    pub fn wait_policy(&self, event: &str, tool: Option<&str>) -> Option<&WaitPolicy> {
        let of_event = || self.wait_policies.iter().filter(move |policy| policy.event == event);
        of_event()
            .find(|policy| policy.tool.is_some() && policy.tool.as_deref() == tool)
            .or_else(|| of_event().find(|policy| policy.tool.is_none()))
    }
}

/// One required event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RequiredEvent {
    pub event: String,
    /// Seconds after the session's first event by which it must have arrived.
    #[serde(default)]
    pub deadline_seconds: Option<u64>,
}

/// A deterministic check of an outcome.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub enum OutcomeCheck {
    /// A regular file exists (relative paths from the audit's directory) and,
    /// when given, contains the text.
    File { path: String, contains: Option<String> },
    /// A command (argv, no shell) exits 0.
    Command { argv: Vec<String> },
}

/// What a receipt says.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReceiptStatus {
    /// Evidence for this boundary was found.
    Pass,
    /// Evidence against it was found.
    Fail,
    /// Not checked (no manifest, no live daemon, no outcome check): no claim.
    Unknown,
}

/// One boundary's receipt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Receipt {
    pub boundary: Boundary,
    pub status: ReceiptStatus,
    /// What was seen: ids, event names, file names — never content.
    pub evidence: String,
}

/// A permission request waiting for a decision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Wait {
    pub owner: Option<String>,
    /// Unix milliseconds.
    pub deadline_ms: Option<i64>,
}

/// Everything the classifier looks at, boundary by boundary. Content-free.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct Evidence {
    /// Posts that never reached the server (spooled or pending in the spool).
    pub undelivered: u64,
    /// Posts the server accepted without returning a stored id.
    pub unreceipted: u64,
    /// Stored ids that a stream client did not get (replay or live); `None`
    /// when the stream was not checked.
    pub unpresented: Option<u64>,
    /// Required events not configured in settings, or a pinned version that
    /// differs from the installed one; `None` without a manifest.
    pub drift: Option<Vec<String>>,
    /// Configured required events that did not arrive by their deadline.
    pub missing: Vec<String>,
    /// A permission request still open (the last thing the session did).
    pub waiting: Option<Wait>,
    /// Whether a `Stop` arrived.
    pub stopped: bool,
    /// The outcome checks' verdict; `None` when none ran.
    pub outcome: Option<bool>,
    /// Unix milliseconds of the newest evidence; `None` when there is none.
    pub newest_ms: Option<i64>,
    pub evidence_ttl_seconds: u64,
    /// Boundaries nothing proved either way (their receipt is `unknown`):
    /// while any is, the run is not healthy.
    pub unverified: Vec<Boundary>,
}

impl Evidence {
    /// Notes the boundaries whose receipt is `unknown`: nothing proved them.
    pub fn note_unverified(&mut self, receipts: &[Receipt]) {
        self.unverified = receipts
            .iter()
            .filter(|receipt| receipt.status == ReceiptStatus::Unknown)
            .map(|receipt| receipt.boundary)
            .collect();
    }

    /// The class of this evidence at `now_ms`: the first rule that applies,
    /// in the contract's order (delivery → persistence → presentation →
    /// manifest and coverage → stale evidence → a legitimate wait → the
    /// outcome). A boundary nothing proved ranks with its failure: no
    /// stored id is unverified persistence, a stream not checked is a stale
    /// dashboard, no pinned manifest (or an unchecked version) is drift, no
    /// outcome check is not complete. `healthy` is what is left: every
    /// boundary and the outcome proven.
    pub fn classify(&self, now_ms: i64) -> AuditClass {
        let unverified = |boundary: Boundary| self.unverified.contains(&boundary);
        let owned_wait = self.waiting.as_ref().is_some_and(|wait| {
            wait.owner.as_deref().is_some_and(|owner| !owner.trim().is_empty())
                && wait.deadline_ms.is_some_and(|deadline| deadline > now_ms)
        });
        let expired = self.newest_ms.is_none_or(|newest| {
            now_ms.saturating_sub(newest)
                > i64::try_from(self.evidence_ttl_seconds.saturating_mul(1000)).unwrap_or(i64::MAX)
        });
        if self.undelivered > 0 {
            AuditClass::DeliveryFailedHidden
        } else if self.unreceipted > 0 || unverified(Boundary::Transport) || unverified(Boundary::Persistence) {
            AuditClass::PersistenceUnverified
        } else if self.unpresented.is_none_or(|n| n > 0) || unverified(Boundary::Presentation) {
            AuditClass::DashboardStale
        } else if self.drift.as_ref().is_none_or(|drift| !drift.is_empty())
            || unverified(Boundary::Configuration)
            || unverified(Boundary::Coverage)
        {
            AuditClass::ManifestDrift
        } else if !self.missing.is_empty() && !owned_wait {
            // An owned, unexpired wait holds the session legitimately; once
            // its owner or deadline is gone the missing events are a gap.
            AuditClass::CoverageGap
        } else if expired {
            // Expired evidence beats everything after it: no old green.
            AuditClass::Stale
        } else if owned_wait {
            AuditClass::Waiting
        } else if self.outcome != Some(true) || unverified(Boundary::Outcome) {
            AuditClass::FalseComplete
        } else {
            AuditClass::Healthy
        }
    }
}

/// `beectl audit` for one session or canary: the receipts and the verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditReport {
    pub schema_version: u32,
    /// The session audited (the canary's throwaway session for a canary).
    pub session_id: String,
    pub class: AuditClass,
    pub receipts: Vec<Receipt>,
    pub evidence: Evidence,
    pub checked_at_utc: String,
}

/// `beectl audit` without `--session`: every recent session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditSummary {
    pub schema_version: u32,
    pub sessions: Vec<AuditReport>,
    pub issues: Vec<String>,
}
