//! A Cline CLI / SDK session: `<sessions>/<session id>/` holds the lead
//! agent's conversation (`<session id>.messages.json`), one conversation
//! per sub-agent it spawned (`agent_<id>.messages.json`), and the
//! session's manifest (`<session id>.json`). Each conversation is one JSON
//! document, rewritten whole (not atomically) at the end of every
//! iteration: `{"sessionId", "messages": [...]}`. A provider response is
//! an assistant message with `metrics {inputTokens, outputTokens,
//! cacheReadTokens, cacheWriteTokens, cost?}`, its own `id`, its `ts` (ms,
//! when its stream ended) and `modelInfo {id, provider}`.
//!
//! `inputTokens` includes both caches (whatever the provider's style), and
//! `outputTokens` its reasoning (never counted apart): input is
//! `inputTokens` less the two cache counters, unknown where they pass it.
//!
//! A response's key is its message id: a fork (`/fork`) copies every
//! message into a new session with its id, time and metrics, so the copy
//! is the same response; it is marked `copied` (the fork's manifest names
//! the session it came from and when; the messages written before then are
//! copies), so it stays the session's that made it. Every conversation file
//! of the session directory is read: a sub-agent's responses are in its own
//! file only, and count under the session.
//!
//! Not responses: an error notice (`metadata.displayOnly`, no metrics); a
//! message whose counters are all 0 (a stream cut before the provider
//! reported usage); a response through Claude Code's CLI (`claude-code`,
//! counted from Claude Code's own records); the one message the SDK writes
//! with a legacy task's whole totals when it resumes one (provider
//! `unknown`: those responses are counted from the task's own records); and
//! the messages an import copied from another agent's records (the manifest
//! says `importedFrom`).

use bee_proto::ledger::Provider;
use bee_proto::usage::Counters;
use serde_json::Value;
use std::path::Path;

use crate::ledger::agents::lines::{Beside, Found, before_start, count, text, time_ms};
use crate::ledger::agents::sparse::keep;
use crate::ledger::agents::whole::{Document, Documents, MAX_DOCUMENT_BYTES, read_document_within};

keep! {
    /// What [`read`] reads of a conversation: of each message, its kind,
    /// id, time, model, counters and whether it is only a notice.
    CONVERSATION = [
        "messages/role", "messages/id", "messages/ts", "messages/modelInfo/id", "messages/modelInfo/provider",
        "messages/metrics/inputTokens", "messages/metrics/outputTokens", "messages/metrics/cacheReadTokens",
        "messages/metrics/cacheWriteTokens", "messages/metrics/cost", "messages/metadata/displayOnly",
    ];
    /// What [`Manifest::beside`] reads of a session's manifest.
    MANIFEST = [
        "cwd", "started_at", "metadata/fork/forkedFromSessionId", "metadata/fork/forkedAt",
        "metadata/importedFrom/importedAt", "metadata/sessionHistoryOrigin/mode",
    ];
}

/// The reader of Cline's conversation documents.
pub(crate) static CONVERSATIONS: Documents = Documents { provider: Provider::Cline, keep: &CONVERSATION, read };

/// Whether a file is one of a session's conversations (the lead's or a
/// sub-agent's): `*.messages.json`.
pub(crate) fn is_conversation(name: &str) -> bool {
    name.len() > ".messages.json".len() && name.ends_with(".messages.json")
}

/// What a session's manifest says that the reader weighs.
#[derive(Debug, Default, PartialEq)]
struct Manifest {
    /// The directory it ran in.
    cwd: Option<String>,
    /// A fork: when it was made (ms, where the manifest says); the messages
    /// written before then are copies.
    forked: Option<Option<i64>>,
    /// An import of another agent's session: when it was imported (ms,
    /// where the manifest says yet); the messages written by then are the
    /// other agent's.
    imported: Option<Option<i64>>,
}

impl Manifest {
    /// The manifest of `session`, in its directory `dir`: a manifest not
    /// there, or not readable this time (being rewritten), says nothing.
    fn beside(dir: &Path, session: &str) -> Manifest {
        let path = dir.join(format!("{session}.json"));
        let Ok(Document::Read(manifest)) = read_document_within(&path, MAX_DOCUMENT_BYTES, &MANIFEST) else {
            return Manifest::default();
        };
        let at = |pointer: &str| time_ms(manifest.pointer(pointer));
        let forked = manifest
            .pointer("/metadata/fork")
            .filter(|fork| fork.is_object())
            .map(|_| at("/metadata/fork/forkedAt").or_else(|| at("/started_at")));
        let imported = match manifest.pointer("/metadata/importedFrom") {
            Some(imported) if imported.is_object() => Some(at("/metadata/importedFrom/importedAt")),
            _ => (text(&manifest, "/metadata/sessionHistoryOrigin/mode") == Some("import")).then_some(None),
        };
        Manifest { cwd: text(&manifest, "/cwd").map(str::to_owned), forked, imported }
    }

    /// Whether a message written at `at_ms` is another agent's, imported.
    fn is_imported(&self, at_ms: i64) -> bool {
        match self.imported {
            Some(Some(imported)) => at_ms <= imported,
            // Being imported: nothing of Cline's own is in it yet.
            Some(None) => true,
            None => false,
        }
    }
}

/// When a session began (ms), as its id spells it (`<ms>_<suffix>`, or a
/// task's `<ms>`): nothing it made is older.
fn started_by_id(session: &str) -> Option<i64> {
    let digits = session.split('_').next()?;
    digits.parse::<i64>().ok().filter(|&ms| digits.len() == 13 && bee_proto::time::spells_as_rfc3339(ms))
}

/// Reads one conversation of the session whose directory holds `path`;
/// the count is of responses without an id or a time.
pub(crate) fn read(path: &Path, conversation: &Value, found: &mut Found<'_>) -> u64 {
    let Some(dir) = path.parent() else { return 0 };
    let Some(session) = dir.file_name().and_then(|name| name.to_str()).filter(|name| !name.is_empty()) else {
        return 0;
    };
    let Some(messages) = conversation.get("messages").and_then(Value::as_array) else { return 0 };
    let manifest = Manifest::beside(dir, session);
    found.session(session, manifest.cwd.as_deref());
    // A message written before this is a copy: the fork's own start, else
    // the session's (a session holds nothing it made before it began).
    let copies_before = manifest.forked.flatten().or_else(|| started_by_id(session));
    let mut refused = 0;
    for message in messages {
        let Some(counters) = response(message) else { continue };
        let (Some(id), Some(at_ms)) = (text(message, "/id").filter(|id| !id.is_empty()), time_ms(message.get("ts")))
        else {
            refused += 1;
            continue;
        };
        if manifest.is_imported(at_ms) {
            continue;
        }
        let beside = Beside {
            own_figure: message.pointer("/metrics/cost").and_then(Value::as_f64),
            copied: before_start(at_ms, copies_before),
        };
        found.response_with(id.to_owned(), session, at_ms, text(message, "/modelInfo/id"), counters, beside);
    }
    refused
}

/// The counters of a message that is a provider response of Cline's own,
/// in Bee's columns; `None` for any other message.
fn response(message: &Value) -> Option<Counters> {
    if text(message, "/role") != Some("assistant")
        || message.pointer("/metadata/displayOnly").and_then(Value::as_bool) == Some(true)
    {
        return None;
    }
    let metrics = message.get("metrics").filter(|metrics| metrics.is_object())?;
    // Claude Code's CLI's responses are its own records'; `unknown` is the
    // SDK's sum of a resumed legacy task's responses, not a response.
    if matches!(text(message, "/modelInfo/provider"), Some("claude-code" | "unknown")) {
        return None;
    }
    let [input, output, read, write] =
        ["inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens"].map(|name| count(metrics.get(name)));
    // All 0: no usage was reported (a stream cut off before it came).
    if [input, output, read, write].iter().all(|counter| counter.unwrap_or(0) == 0) {
        return None;
    }
    Some(Counters {
        // `inputTokens` includes both caches: what is left is input.
        input_tokens: input
            .and_then(|input| input.checked_sub(read.unwrap_or(0)))
            .and_then(|input| input.checked_sub(write.unwrap_or(0))),
        cache_creation_input_tokens: write,
        cache_read_input_tokens: read,
        output_tokens: output,
        ..Counters::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::agents::tests::{Row, read_whole, rows};
    use crate::ledger::stored::evidence::{AgentState, Evidence};
    use crate::ledger::stored::responses::ResponseWrite;

    /// Cline CLI 3.0.65's own session directories, as the real CLI wrote
    /// them against a mock provider (system prompts cut short): a plain
    /// prompt, a tool turn resumed with `--id`, a fork of it, a spawned
    /// sub-agent, a stream cut off, two failed runs (HTTP 500, 429), a slow
    /// stream and a tool turn through Anthropic's API.
    fn sessions() -> (tempfile::TempDir, Vec<std::path::PathBuf>) {
        let fixture: serde_json::Map<String, Value> =
            serde_json::from_slice(include_bytes!("../testdata/cline-3.0.65-sessions.json")).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let mut conversations = Vec::new();
        for (name, document) in fixture {
            let path = dir.path().join(&name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, serde_json::to_vec(&document).unwrap()).unwrap();
            if is_conversation(&name) {
                conversations.push(path);
            }
        }
        conversations.sort();
        (dir, conversations)
    }

    fn read_all(paths: &[std::path::PathBuf]) -> Vec<ResponseWrite> {
        paths.iter().flat_map(|path| read_whole(Provider::Cline, path, &AgentState::default()).0).collect()
    }

    /// Every response the mock served once, under its session, in Bee's
    /// columns: input without either cache (1001 − 600 read; Anthropic's
    /// 993 − 600 − 70 = the 323 it served), output with reasoning inside;
    /// the sub-agent's response in its session; the fork's copies the same
    /// responses (their session's), only its own new one its; an error
    /// notice and a cut stream's zeros are none.
    #[test]
    fn each_served_response_once_in_the_session_that_made_it() {
        let (_dir, paths) = sessions();
        let writes = read_all(&paths);
        let s = Some;
        let found: Vec<Row> = rows(Provider::Cline, &writes);
        let columns: Vec<_> = found.iter().map(|r| (r.0.as_str(), r.1, r.2, r.3, r.4, r.5, r.6)).collect();
        assert_eq!(
            columns,
            [
                ("msg_-34_sgs3", s(323), s(70), s(600), s(223), None, s(1216)),
                ("msg_3bRWv5th", s(401), s(0), s(600), s(201), None, s(1202)),
                ("msg_DSw3pg3Q", s(405), s(0), s(600), s(205), None, s(1210)),
                ("msg_Gy_BKX9i", s(408), s(0), s(600), s(208), None, s(1216)),
                ("msg_LimyRu7z", s(422), s(0), s(600), s(222), None, s(1244)),
                ("msg_MsT7Kkw7", s(403), s(0), s(600), s(203), None, s(1206)),
                ("msg_OeUZeFYW", s(407), s(0), s(600), s(207), None, s(1214)),
                ("msg_ZTuSzVav", s(402), s(0), s(600), s(202), None, s(1204)),
                ("msg_e-bOlr1q", s(404), s(0), s(600), s(204), None, s(1208)),
                ("msg_jXiequwG", s(406), s(0), s(600), s(206), None, s(1212)),
                ("msg_l6rmip4r", s(324), s(70), s(600), s(224), None, s(1218)),
            ]
        );
        // Each response's session, and whether the write is a copy.
        let held = |key: &str| -> Vec<(&str, bool)> {
            let mut held: Vec<_> =
                writes.iter().filter(|w| w.key == key).map(|w| (w.session_id.as_deref().unwrap(), w.copied)).collect();
            held.sort();
            held
        };
        assert_eq!(held("msg_ZTuSzVav"), [("1796561152495_j97ot", false), ("1796561185811_6s8kz", true)]);
        assert_eq!(held("msg_e-bOlr1q"), [("1796561152495_j97ot", false), ("1796561185811_6s8kz", true)]);
        assert_eq!(held("msg_DSw3pg3Q"), [("1796561185811_6s8kz", false)], "the fork's own response");
        assert_eq!(held("msg_OeUZeFYW"), [("1796561200482_ema4q", false)], "the sub-agent's, in its session");
        let anthropic = writes.iter().find(|w| w.key == "msg_-34_sgs3").unwrap();
        assert_eq!(anthropic.own_figure, Some(0.0047564999999999994));
        assert_eq!(anthropic.model.as_deref(), Some("claude-sonnet-4-5"));
        assert_eq!(anthropic.at_ms, 1_796_561_348_661);
        assert!(
            writes
                .iter()
                .filter(|w| w.key != "msg_-34_sgs3" && w.key != "msg_l6rmip4r")
                .all(|w| { w.own_figure.is_none() && w.model.as_deref() == Some("mock-model") })
        );
    }

    /// The session's project is the directory its manifest says it ran
    /// in; a session without a manifest is still read.
    #[test]
    fn the_project_from_the_manifest() {
        let (dir, paths) = sessions();
        let plain = paths.iter().find(|p| p.ends_with("1796561147600_x9o0c.messages.json")).unwrap();
        let mut evidence = Vec::new();
        CONVERSATIONS.evidence(plain, &serde_json::from_slice(&std::fs::read(plain).unwrap()).unwrap(), &mut evidence);
        assert!(evidence.iter().any(|e| matches!(e, Evidence::SessionProject(p) if p.project == "-home-dev-proj")));
        std::fs::remove_file(dir.path().join("1796561147600_x9o0c/1796561147600_x9o0c.json")).unwrap();
        let (writes, _) = read_whole(Provider::Cline, plain, &AgentState::default());
        assert_eq!(writes.len(), 1);
    }

    /// A resumed session (`--id`): the CLI rewrites the same file, the old
    /// messages as they were and the new appended; read before and after,
    /// each response once.
    #[test]
    fn a_resumed_session_read_as_it_grew() {
        let (_dir, paths) = sessions();
        let resumed = paths.iter().find(|p| p.ends_with("1796561152495_j97ot.messages.json")).unwrap();
        let after: Value = serde_json::from_slice(&std::fs::read(resumed).unwrap()).unwrap();
        let mut before = after.clone();
        before["messages"].as_array_mut().unwrap().truncate(4);
        std::fs::write(resumed, serde_json::to_vec(&before).unwrap()).unwrap();
        let (mut writes, _) = read_whole(Provider::Cline, resumed, &AgentState::default());
        assert_eq!(writes.len(), 2);
        std::fs::write(resumed, serde_json::to_vec(&after).unwrap()).unwrap();
        writes.extend(read_whole(Provider::Cline, resumed, &AgentState::default()).0);
        let keys: Vec<_> = rows(Provider::Cline, &writes).into_iter().map(|r| r.0).collect();
        assert_eq!(keys, ["msg_MsT7Kkw7", "msg_ZTuSzVav", "msg_e-bOlr1q"]);
    }

    /// A fork whose manifest cannot be read this time is still told by its
    /// id's time (its copies are older than it); one whose manifest names
    /// no fork time is told by when it began.
    #[test]
    fn a_forks_copies_without_its_manifest() {
        let (dir, paths) = sessions();
        let fork_dir = dir.path().join("1796561185811_6s8kz");
        let manifest_path = fork_dir.join("1796561185811_6s8kz.json");
        let fork = paths.iter().find(|p| p.ends_with("1796561185811_6s8kz.messages.json")).unwrap();
        let copied = |path: &Path| -> Vec<bool> {
            read_whole(Provider::Cline, path, &AgentState::default()).0.iter().map(|w| w.copied).collect()
        };
        assert_eq!(copied(fork), [true, true, true, false]);
        let forked_at =
            Manifest { cwd: Some("/home/dev/proj".into()), forked: Some(Some(1_796_561_185_810)), imported: None };
        assert_eq!(Manifest::beside(&fork_dir, "1796561185811_6s8kz"), forked_at);
        let mut manifest: Value = serde_json::from_slice(&std::fs::read(&manifest_path).unwrap()).unwrap();
        std::fs::write(&manifest_path, b"{\"version\":1,\"sess").unwrap();
        assert_eq!(copied(fork), [true, true, true, false], "told by its id");
        manifest["metadata"]["fork"].as_object_mut().unwrap().remove("forkedAt");
        std::fs::write(&manifest_path, serde_json::to_vec(&manifest).unwrap()).unwrap();
        let renamed = dir.path().join("fork").join("fork.messages.json");
        std::fs::create_dir_all(renamed.parent().unwrap()).unwrap();
        std::fs::copy(fork, &renamed).unwrap();
        std::fs::write(renamed.with_file_name("fork.json"), serde_json::to_vec(&manifest).unwrap()).unwrap();
        assert_eq!(copied(&renamed), [true, true, true, false], "told by its start");
        let started = Manifest { forked: Some(Some(1_796_561_185_812)), ..forked_at };
        assert_eq!(Manifest::beside(&fork_dir, "1796561185811_6s8kz"), started);
    }

    /// A session imported from another agent's records holds that agent's
    /// responses (counted from its own records), then Cline's own; the
    /// SDK's sum of a resumed legacy task is no response; nor is one
    /// through Claude Code's CLI.
    #[test]
    fn imported_messages_and_sums_are_not_responses() {
        let dir = tempfile::tempdir().unwrap();
        let session = dir.path().join("1796500000000_imprt");
        std::fs::create_dir_all(&session).unwrap();
        let metrics =
            serde_json::json!({"inputTokens": 50, "outputTokens": 5, "cacheReadTokens": 0, "cacheWriteTokens": 0});
        let message = |id: &str, ts: i64, provider: &str| {
            serde_json::json!({"id": id, "role": "assistant", "ts": ts, "content": [],
                "modelInfo": {"id": "m", "provider": provider}, "metrics": metrics})
        };
        let conversation = serde_json::json!({"messages": [
            message("imported", 1_796_500_000_100, "opencode"),
            message("own", 1_796_500_900_000, "anthropic"),
            message("legacy", 1_796_500_900_001, "unknown"),
            message("wrapped", 1_796_500_900_002, "claude-code"),
        ]});
        let path = session.join("1796500000000_imprt.messages.json");
        std::fs::write(&path, conversation.to_string()).unwrap();
        let manifest = |metadata: Value| {
            std::fs::write(
                session.join("1796500000000_imprt.json"),
                serde_json::json!({"session_id": "1796500000000_imprt", "metadata": metadata}).to_string(),
            )
            .unwrap();
        };
        let keys = || -> Vec<String> {
            read_whole(Provider::Cline, &path, &AgentState::default()).0.into_iter().map(|w| w.key).collect()
        };
        assert_eq!(keys(), ["imported", "own"], "no manifest: nothing says it was imported");
        manifest(serde_json::json!({"sessionHistoryOrigin": {"mode": "import", "trigger": "opencode"}}));
        assert!(keys().is_empty(), "being imported");
        manifest(serde_json::json!({"sessionHistoryOrigin": {"mode": "import"},
            "importedFrom": {"tool": "opencode", "importedAt": "2026-12-05T19:50:00.000Z"}}));
        assert_eq!(keys(), ["own"]);
    }

    /// Hostile and broken documents: counters that are no counts are
    /// unknown (never 0), caches larger than the input make input unknown,
    /// a response without its id or time is refused and counted, huge
    /// numbers are read as far as they are counts; a document that is no
    /// conversation, cut short, or not JSON is nothing this time.
    #[test]
    fn broken_and_hostile_conversations() {
        let dir = tempfile::tempdir().unwrap();
        let session = dir.path().join("1796500000000_hostl");
        std::fs::create_dir_all(&session).unwrap();
        let path = session.join("1796500000000_hostl.messages.json");
        let conversation = serde_json::json!({"messages": [
            {"id": "a", "role": "assistant", "ts": 1_796_500_000_001_i64,
                "metrics": {"inputTokens": "ten", "outputTokens": 5, "cacheReadTokens": 1, "cacheWriteTokens": 0}},
            {"id": "b", "role": "assistant", "ts": 1_796_500_000_002_i64,
                "metrics": {"inputTokens": 10, "outputTokens": 5, "cacheReadTokens": 9, "cacheWriteTokens": 2, "cost": -1}},
            {"id": "c", "role": "assistant", "ts": 1_796_500_000_003_i64,
                "metrics": {"inputTokens": u64::MAX, "outputTokens": 1e300, "cacheReadTokens": -4, "cacheWriteTokens": 0,
                    "cost": "free"}},
            {"role": "assistant", "ts": 1_796_500_000_004_i64, "metrics": {"inputTokens": 3, "outputTokens": 1}},
            {"id": "e", "role": "assistant", "ts": "yesterday", "metrics": {"inputTokens": 3, "outputTokens": 1}},
            {"id": "f", "role": "assistant", "ts": 1_796_500_000_006_i64, "metrics": 7},
            {"id": "g", "role": "user", "ts": 1_796_500_000_007_i64, "metrics": {"inputTokens": 3}},
            "not a message", 12, null,
        ]});
        std::fs::write(&path, conversation.to_string()).unwrap();
        let mut evidence = Vec::new();
        let (_, refused) = crate::ledger::agents::agent::WholeFileReader::read(
            &CONVERSATIONS,
            &path,
            &AgentState::default(),
            &mut evidence,
        )
        .unwrap();
        assert_eq!(refused, 2, "without an id; without a time");
        let writes = crate::ledger::agents::tests::responses_of(evidence);
        let read: Vec<_> = writes
            .iter()
            .map(|w| {
                let t = &w.tokens;
                (w.key.as_str(), t.input_tokens, t.cache_read_input_tokens, t.output_tokens, w.own_figure)
            })
            .collect();
        assert_eq!(
            read,
            [
                ("a", None, Some(1), Some(5), None),
                ("b", None, Some(9), Some(5), None),
                ("c", Some(u64::MAX), None, None, None),
            ]
        );
        for broken in [&b"{\"messages\": [{\"id\": \"a\", \"role\": \"assis"[..], b"[1, 2]", b"\xff\xfe", b""] {
            std::fs::write(&path, broken).unwrap();
            let (writes, _) = read_whole(Provider::Cline, &path, &AgentState::default());
            assert!(writes.is_empty());
        }
    }
}
