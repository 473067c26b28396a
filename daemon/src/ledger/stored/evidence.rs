//! What a reader of an agent's records hands the store ([`Evidence`]),
//! made ready for it ([`Staged`]), and where it resumes in a file
//! ([`FileOffset`]): the one shape every agent's reader, Claude Code's own
//! telemetry and ingestion share, whatever the agent.

use bee_proto::ledger::{LedgerRecord, Provider};

use crate::ledger::stored::responses::{Prepared, ResponseWrite};
use crate::ledger::stored::validate;
use crate::storage::sqlite::DbError;

/// Namespace of the record ids derived from provider ids.
const NAMESPACE: uuid::Uuid = uuid::Uuid::from_u128(0x6265_6500_6c65_6467_6572_2d69_6e67_6573);

/// Where ingestion resumes in one log file: the file (its device and
/// inode), the offset, and what its agent's reader keeps there to go on
/// (see [`AgentState`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileOffset {
    pub dev: u64,
    pub ino: u64,
    pub offset: u64,
    pub state: AgentState,
}

/// What an agent's reader keeps of a file where reading stopped (the turn
/// open there, say, or the session a file names once at its top), as the
/// agent itself spells it: stored with the offset, handed back to the same
/// agent, read by nobody else. Empty for a file never read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AgentState(pub Option<String>);

/// A turn as a log's own timestamps show it: from its prompt to its last
/// response (or, for Codex, its completion) so far. A longer one for the
/// same start supersedes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DerivedTurn {
    pub provider: Provider,
    pub session_id: String,
    pub started_at_ms: i64,
    pub ended_at_ms: i64,
}

/// What a log reader hands the store.
#[derive(Debug, Clone, PartialEq)]
pub enum Evidence {
    Record(LedgerRecord),
    Response(ResponseWrite),
    /// A log of this session exists: producers' own counters no longer
    /// stand in for it (even when its log holds no response, say a request
    /// the provider refused).
    SessionLogged(Provider, String),
    /// The project a session's log names (Codex's working directory).
    SessionProject(SessionProject),
    Turn(DerivedTurn),
    SessionCost(SessionCost),
    /// A request the provider CLI's own telemetry timed (a call of source
    /// `api_request`): beed's own reading, like a derived turn, so never
    /// something a producer may append.
    TimedRequest(Box<bee_proto::ledger::CallRecord>),
}

/// The project a session's log names, as [`project_of_directory`] names
/// a working directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionProject {
    pub provider: Provider,
    pub session_id: String,
    pub project: String,
}

/// Longest project name stored (a path's length on Linux).
const MAX_PROJECT_BYTES: usize = 4096;

/// A working directory as a project: every character that is not an ASCII
/// letter or digit becomes `-`, as Claude Code names its project folders,
/// so one directory is one project whichever agent worked in it.
pub fn project_of_directory(directory: &str) -> String {
    directory.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect()
}

/// A session's cumulative cost as its CLI wrote it in its log.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionCost {
    pub provider: Provider,
    pub session_id: String,
    pub at_ms: i64,
    pub total_usd: f64,
}

impl Evidence {
    /// Within Bee's bounds (a hostile or broken line is not).
    pub fn is_valid(&self) -> bool {
        match self {
            Evidence::Record(record) => validate::validate(record).is_ok(),
            Evidence::TimedRequest(call) => {
                call.source == bee_proto::ledger::CallSource::ApiRequest && validate::validate_call(call).is_ok()
            }
            Evidence::Response(write) => write.is_valid(),
            Evidence::SessionLogged(_, session) => is_session_id(session),
            Evidence::SessionProject(named) => {
                is_session_id(&named.session_id)
                    && !named.project.is_empty()
                    && named.project.len() <= MAX_PROJECT_BYTES
            }
            Evidence::SessionCost(cost) => {
                is_session_id(&cost.session_id)
                    && cost.total_usd.is_finite()
                    && (0.0..=bee_proto::ledger::bounds::MAX_CALL_COST_USD).contains(&cost.total_usd)
            }
            Evidence::Turn(turn) => {
                is_session_id(&turn.session_id)
                    && turn.ended_at_ms >= turn.started_at_ms
                    && turn.ended_at_ms - turn.started_at_ms <= bee_proto::ledger::bounds::MAX_CALL_DURATION_MS as i64
            }
        }
    }
}

/// A session id within Bee's bounds: not empty, at most 128 bytes.
fn is_session_id(id: &str) -> bool {
    !id.is_empty() && id.len() <= 128
}

pub(crate) fn record_id(parts: &[&str]) -> uuid::Uuid {
    uuid::Uuid::new_v5(&NAMESPACE, parts.join("\u{1f}").as_bytes())
}

/// Evidence made ready for the store: a response write prepared (see
/// [`ResponseWrite::prepare`]), which ingestion does on its reading threads
/// so the one writer only binds and steps.
#[derive(Debug, Clone)]
pub(crate) enum Staged {
    Response(Prepared),
    Other(Evidence),
}

impl Staged {
    pub(crate) fn response(&self) -> Option<&Prepared> {
        match self {
            Staged::Response(prepared) => Some(prepared),
            Staged::Other(_) => None,
        }
    }

    /// `evidence` staged when it is within Bee's bounds ([`Evidence::is_valid`]).
    pub(crate) fn of_valid(evidence: Evidence) -> Option<Staged> {
        evidence.is_valid().then(|| Staged::of_checked(evidence))
    }

    fn of_checked(evidence: Evidence) -> Staged {
        match evidence {
            Evidence::Response(write) => Staged::Response(write.prepare()),
            other => Staged::Other(other),
        }
    }

    pub(crate) fn of(evidence: Evidence) -> Result<Staged, DbError> {
        match evidence {
            Evidence::Response(write) if !bee_proto::time::spells_as_rfc3339(write.at_ms) => {
                Err(DbError::Invalid("a response write's time"))
            }
            other => Ok(Staged::of_checked(other)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A directory is named as Claude Code names its project folders; a
    /// project name from a hostile log (empty, longer than a path) is no
    /// evidence.
    #[test]
    fn a_directory_is_a_project_and_a_hostile_one_is_refused() {
        assert_eq!(project_of_directory("/home/dev/my.app_2"), "-home-dev-my-app-2");
        assert_eq!(project_of_directory("/tmp/café"), "-tmp-caf-");
        let named = |project: String| {
            Evidence::SessionProject(SessionProject { provider: Provider::Codex, session_id: "s".into(), project })
        };
        assert!(named("-home-dev-app".into()).is_valid());
        assert!(!named(String::new()).is_valid());
        assert!(!named("-".repeat(MAX_PROJECT_BYTES + 1)).is_valid());
    }
}
