//! Oh My Pi (`omp`, a fork of pi): its session logs (`~/.omp/agent/
//! sessions/<cwd slug>/<time>_<session>.jsonl`, a sub-agent's under
//! `<time>_<session>/<agent>.jsonl`), pi's format, read by pi's reader
//! ([`session`]) under omp's own name. What differs from pi is only where
//! the logs are. `README.md` beside this file describes the format and
//! where it was read from.
//!
//! omp also honours `PI_CODING_AGENT_DIR`, pi's own variable: a session
//! written there is in pi's directory, which pi's reader reads, and is
//! counted there once, as pi's. So omp's directories are never the one that
//! variable names, nor any of pi's ([`OhMyPi::record_dirs`]).

use bee_proto::ledger::Provider;
use std::path::{Path, PathBuf};

use crate::ledger::agents::agent::{About, Agent, Env, FileReader, Records, Verified};
use crate::ledger::agents::lines::JsonLines;
use crate::ledger::agents::pi::session::{self, PiLog};
use crate::ledger::stored::evidence::AgentState;

/// omp's session logs, as pi's reader reads them.
pub(crate) struct OhMyPiLog;

impl PiLog for OhMyPiLog {
    const PROVIDER: Provider = Provider::OhMyPi;
}

/// Oh My Pi, as [`Agent`].
#[derive(Debug)]
pub struct OhMyPi;

impl Agent for OhMyPi {
    fn about(&self) -> &'static About {
        &About {
            provider: Provider::OhMyPi,
            title: "Oh My Pi",
            verified: Verified::FormatFromSource,
            unrecorded_calls: Some("compaction and summary calls, as in pi"),
            // pi's: cache writes and its own `usage.cost`, no reasoning count;
            // a failed request leaves no limit notice, and Bee times no turn.
            records: Records {
                time_spans: false,
                limit_notices: false,
                reasoning: false,
                cache_writes: true,
                own_cost: true,
            },
        }
    }

    /// `agent/sessions/` of its configuration root (`~/.omp`, or
    /// `PI_CONFIG_DIR` under `HOME`), and `omp/sessions/` of
    /// `XDG_DATA_HOME` where that is set (where omp keeps them once its
    /// data was moved there). Never `PI_CODING_AGENT_DIR`, which omp also
    /// honours: that directory is pi's, and a directory pi's reader reads
    /// (or one within it, or around it) is left to pi's, so no log is read
    /// twice.
    fn record_dirs(&self, env: Env<'_>) -> Vec<PathBuf> {
        let root = env("HOME").map(|home| {
            let name = env("PI_CONFIG_DIR").map_or_else(|| PathBuf::from(".omp"), PathBuf::from);
            PathBuf::from(home).join(name).join("agent").join("sessions")
        });
        let xdg = env("XDG_DATA_HOME").map(|data| PathBuf::from(data).join("omp").join("sessions"));
        let pis = crate::ledger::agents::pi::Pi.record_dirs(env);
        let mut dirs: Vec<PathBuf> = root
            .into_iter()
            .chain(xdg)
            .filter(|dir| !pis.iter().any(|pi| dir.starts_with(pi) || pi.starts_with(dir)))
            .collect();
        dirs.dedup();
        dirs
    }

    fn file_reader(&self, path: &Path, state: &AgentState) -> Box<dyn FileReader> {
        Box::new(JsonLines::<session::Session<OhMyPiLog>>::new(path, state))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::agents::tests::env_of;
    use crate::ledger::agents::tests::{responses, rows};

    /// omp's header, after the title line newer omp writes first.
    const HEADER: &str = concat!(
        "{\"type\":\"title\",\"title\":\"Fix the session parser\"}\n",
        "{\"type\":\"session\",\"version\":3,\"id\":\"0b3e2f10-6c1d-4a57-9e8e-2f4c5d6e7f80\",",
        "\"timestamp\":\"2026-12-07T10:00:00.000Z\",\"cwd\":\"/home/dev/app\"}\n",
    );

    /// An assistant entry of omp's, as pi writes one.
    fn response(id: &str, at: &str, ms: i64, usage: &str) -> String {
        format!(
            "{{\"type\":\"message\",\"id\":\"e{ms}\",\"timestamp\":\"{at}\",\"message\":{{\"role\":\"assistant\",\
             \"content\":[{{\"type\":\"text\",\"text\":\"ok\"}}],\"api\":\"anthropic-messages\",\"provider\":\"anthropic\",\
             \"model\":\"claude-sonnet-4-5\",\"usage\":{usage},\"stopReason\":\"stop\",\"timestamp\":{ms},\
             \"responseId\":\"{id}\"}}}}\n"
        )
    }

    fn usage(input: u64, output: u64, read: u64, write: u64) -> String {
        format!(
            "{{\"input\":{input},\"output\":{output},\"cacheRead\":{read},\"cacheWrite\":{write},\
             \"totalTokens\":{},\"cost\":{{\"total\":0.0123}}}}",
            input + output + read + write
        )
    }

    /// omp's log of a turn read exactly, under omp's name: every counter,
    /// its own cost, the session and its project; a response written again
    /// (a resumed session, or a line read twice) is the same response; a
    /// failed request (no id, zero usage) is none; a line cut short is
    /// counted unparseable and the rest is read.
    #[test]
    fn omps_responses_read_exactly_and_once() {
        let first = response("msg_01", "2026-12-07T10:00:05.000Z", 1_796_637_605_000, &usage(120, 40, 5000, 600));
        let failed = "{\"type\":\"message\",\"timestamp\":\"2026-12-07T10:00:06.000Z\",\"message\":{\"role\":\"assistant\",\
            \"usage\":{\"input\":0,\"output\":0,\"cacheRead\":0,\"cacheWrite\":0,\"totalTokens\":0},\"stopReason\":\"error\"}}\n";
        let second = response("msg_02", "2026-12-07T10:00:09.000Z", 1_796_637_609_000, &usage(7, 90, 5600, 0));
        let cut = &second[..second.len() - 20];
        let log = format!("{HEADER}{first}{failed}{cut}\n{second}{first}");
        let (writes, unparseable) = responses(Provider::OhMyPi, log.as_bytes());
        assert_eq!(unparseable, 1, "the line cut short");
        let s = Some;
        assert_eq!(
            rows(Provider::OhMyPi, &writes),
            [
                ("msg_01".into(), s(120), s(600), s(5000), s(40), None, s(5760)),
                ("msg_02".into(), s(7), s(0), s(5600), s(90), None, s(5697)),
            ]
        );
        assert!(writes.iter().all(|w| w.provider == Provider::OhMyPi && w.own_figure == Some(0.0123)));
        assert!(writes.iter().all(|w| w.session_id.as_deref() == Some("0b3e2f10-6c1d-4a57-9e8e-2f4c5d6e7f80")));
        assert!(writes.iter().all(|w| w.model.as_deref() == Some("claude-sonnet-4-5") && !w.copied));
    }

    /// An empty log, one of a header alone, and lines that are no JSON or
    /// no UTF-8 hold no response and do not panic; an oversized line is
    /// passed over.
    #[test]
    fn empty_broken_and_oversized_logs() {
        assert_eq!(responses(Provider::OhMyPi, b""), (vec![], 0));
        assert_eq!(responses(Provider::OhMyPi, HEADER.as_bytes()), (vec![], 0));
        let mut log = HEADER.as_bytes().to_vec();
        log.extend_from_slice(b"{\"usage\": \xff\xfe}\n");
        log.extend_from_slice(
            format!("{}\n", " ".repeat(crate::ledger::agents::MAX_LINE_BYTES as usize + 1)).as_bytes(),
        );
        let (writes, unparseable) = responses(Provider::OhMyPi, &log);
        assert_eq!((writes.len(), unparseable), (0, 1));
        let _ = crate::ledger::agents::tests::noted();
    }

    /// Where omp keeps its sessions, and never where pi's reader reads.
    #[test]
    fn its_sessions_where_omp_keeps_them_and_never_pis() {
        let dirs = OhMyPi.record_dirs(&env_of(&[("HOME", "/h")]));
        assert_eq!(dirs, [PathBuf::from("/h/.omp/agent/sessions")]);
        let dirs = OhMyPi.record_dirs(&env_of(&[("HOME", "/h"), ("XDG_DATA_HOME", "/x")]));
        assert_eq!(dirs, [PathBuf::from("/h/.omp/agent/sessions"), "/x/omp/sessions".into()]);
        let dirs = OhMyPi.record_dirs(&env_of(&[("HOME", "/h"), ("PI_CONFIG_DIR", ".omp-dev")]));
        assert_eq!(dirs, [PathBuf::from("/h/.omp-dev/agent/sessions")]);
        // PI_CODING_AGENT_DIR moves omp's sessions into pi's directory: pi's
        // reader reads them, once.
        let dirs = OhMyPi.record_dirs(&env_of(&[("HOME", "/h"), ("PI_CODING_AGENT_DIR", "/p")]));
        assert_eq!(dirs, [PathBuf::from("/h/.omp/agent/sessions")]);
        let dirs = OhMyPi.record_dirs(&env_of(&[("HOME", "/h"), ("PI_CODING_AGENT_DIR", "/h/.omp/agent")]));
        assert!(dirs.is_empty(), "omp's own directory named as pi's is pi's: {dirs:?}");
        let dirs = OhMyPi.record_dirs(&env_of(&[("HOME", "/h"), ("PI_CONFIG_DIR", ".pi")]));
        assert!(dirs.is_empty(), "omp configured into pi's directory reads nothing twice: {dirs:?}");
        assert!(OhMyPi.record_dirs(&env_of(&[])).is_empty());
        assert!(OhMyPi.is_record_file(Path::new("/s/--home-dev-app--/2026-12-07T10-00-00-000Z_0b3e.jsonl")));
        assert!(!OhMyPi.is_record_file(Path::new("/s/--home-dev-app--/notes.md")));
    }
}
