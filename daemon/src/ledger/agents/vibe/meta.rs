//! A Mistral Vibe 2.x session's `meta.json`
//! (`logs/session/<prefix>_<YYYYmmdd_HHMMSS>_<short id>/meta.json`, a
//! sub-agent's under its session's `agents/`; Vibe 2.0 to 2.25, and 2.26
//! run with `--legacy-harness`), a JSON document Vibe rewrites whole
//! after each exchange: `session_id`, `parent_session_id` (set when a
//! compaction, a rewind or a fork began it), `start_time` and `end_time`
//! (ISO 8601, `+00:00`), `environment.working_directory`, `stats` — the
//! agent loop's running totals: `session_prompt_tokens` (prompts, cached
//! parts inside), `session_cached_tokens` (those cached parts, in later
//! 2.x), `session_completion_tokens` (completions, reasoning inside),
//! `steps`, … — and `config` (`active_model`, the alias of one of
//! `models`, whose `name` is the model id sent to the provider). Vibe 1.x
//! wrote one flat `logs/session/<prefix>_<…>.json` a session instead, the
//! same fields under `metadata` (`agent_config` for `config`, naive local
//! times).
//!
//! Vibe keeps no call one by one: a session is one entry, keyed by its
//! id (a rewrite replaces it, never adds), its counters its running
//! totals. A compaction or a rewind goes on in a new session whose
//! `stats` go on from its parent's (Vibe's loop keeps one `AgentStats`):
//! such a session's entry is what it added, its totals less its parent's
//! as its parent's document last says, so the two count once. A fork
//! starts from zero and counts whole; it is told from a continuation by
//! its parent's document (see [`continues`]).

use bee_proto::usage::Counters;
use serde_json::Value;
use std::path::Path;
use std::sync::LazyLock;

use crate::ledger::agents::lines::{Found, count, text};
use crate::ledger::agents::sparse::Keep;
use crate::ledger::agents::whole::{Document, MAX_DOCUMENT_BYTES, modified_ms, read_document_within};

/// A session folder's document.
pub(super) const META_FILE: &str = "meta.json";

/// Most sibling folders named with a parent's short id that are opened
/// to find its document (a short id is 8 random hex digits: two sessions
/// share one by chance only).
const MOST_CANDIDATES: usize = 8;

/// What [`read`] reads of a document (Vibe 2.x and later at the root,
/// 1.x under `metadata`); of `config.models` only each model's `alias`
/// and `name` (never a system prompt, a tool list or a message).
pub(crate) static META: LazyLock<Keep> = LazyLock::new(|| {
    Keep::paths(&[
        "session_id",
        "parent_session_id",
        "start_time",
        "end_time",
        "environment/working_directory",
        "stats/session_prompt_tokens",
        "stats/session_completion_tokens",
        "stats/session_cached_tokens",
        "stats/steps",
        "config/active_model",
        "config/models",
        "metadata/session_id",
        "metadata/start_time",
        "metadata/end_time",
        "metadata/environment/working_directory",
        "metadata/stats/session_prompt_tokens",
        "metadata/stats/session_completion_tokens",
        "metadata/stats/session_cached_tokens",
        "metadata/stats/steps",
        "metadata/agent_config/active_model",
        "metadata/agent_config/models",
    ])
});

/// What one session document says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Session<'d> {
    id: &'d str,
    parent: Option<&'d str>,
    start_ms: Option<i64>,
    end_ms: Option<i64>,
    directory: Option<&'d str>,
    prompt: Option<u64>,
    /// The cached part of `prompt`, where Vibe counts it.
    cached: Option<u64>,
    completion: Option<u64>,
    steps: Option<u64>,
    model: Option<&'d str>,
}

/// What a document is to the reader.
enum Read<'d> {
    /// A session, with its running totals.
    Session(Session<'d>),
    /// No `stats`: no usage to read (none of Vibe's, or no exchange yet).
    NoStats,
    /// `stats` without a session id: refused as unreadable.
    NoId,
}

/// The session a document (Vibe's 2.x `meta.json`, or 1.x's flat file
/// with `metadata`) says.
fn session_of(document: &Value) -> Read<'_> {
    let meta = document.get("metadata").filter(|meta| meta.is_object()).unwrap_or(document);
    let Some(stats) = meta.get("stats").filter(|stats| stats.is_object()) else { return Read::NoStats };
    let Some(id) = text(meta, "/session_id").filter(|id| !id.is_empty()) else { return Read::NoId };
    let config = meta.get("config").or_else(|| meta.get("agent_config"));
    Read::Session(Session {
        id,
        parent: text(meta, "/parent_session_id").filter(|parent| !parent.is_empty() && *parent != id),
        start_ms: meta.get("start_time").and_then(Value::as_str).and_then(time_ms),
        end_ms: meta.get("end_time").and_then(Value::as_str).and_then(time_ms),
        directory: text(meta, "/environment/working_directory"),
        prompt: count(stats.get("session_prompt_tokens")),
        cached: count(stats.get("session_cached_tokens")),
        completion: count(stats.get("session_completion_tokens")),
        steps: count(stats.get("steps")),
        model: config.and_then(model_of),
    })
}

/// The model a config's `active_model` names: the `name` (the id sent to
/// the provider) of the model whose `alias` it is — `models` a list (Vibe
/// 1.x and early 2.x) or an object keyed by alias (later 2.x) —, else the
/// alias itself.
fn model_of(config: &Value) -> Option<&str> {
    let active = config.get("active_model").and_then(Value::as_str).filter(|active| !active.is_empty())?;
    let is_active = |model: &&Value| model.get("alias").and_then(Value::as_str) == Some(active);
    let named = match config.get("models") {
        Some(Value::Array(models)) => models.iter().find(is_active),
        Some(Value::Object(models)) => models.get(active).or_else(|| models.values().find(is_active)),
        _ => None,
    };
    let name = named.and_then(|model| model.get("name")).and_then(Value::as_str).filter(|name| !name.is_empty());
    Some(name.unwrap_or(active))
}

/// A time as Vibe writes it (Python's `isoformat()`, `+00:00`), in ms;
/// Vibe 1.x's naive local times say no offset, and are unknown.
pub(super) fn time_ms(text: &str) -> Option<i64> {
    let at: jiff::Timestamp = text.parse().ok()?;
    Some(at.as_millisecond()).filter(|&ms| bee_proto::time::spells_as_rfc3339(ms))
}

/// Whether `child`, whose document names `parent` as its parent, went on
/// with `parent`'s running totals (a compaction or a rewind: Vibe's loop
/// keeps its `AgentStats` and begins a new session) rather than from zero
/// (a fork: a new loop). A continuation began after its parent's last
/// write, and every running total of its is at least its parent's; a fork
/// (begun from zero) is below its parent in some total, or its parent was
/// written after it began. Unknown totals are no continuation.
fn continues(parent: &Session<'_>, child: &Session<'_>) -> bool {
    let at_least = |parent: Option<u64>, child: Option<u64>| parent.zip(child).is_some_and(|(p, c)| p <= c);
    let began_after = match (parent.end_ms, child.start_ms) {
        (Some(end), Some(start)) => end <= start,
        _ => true,
    };
    let known_at_least = |parent: Option<u64>, child: Option<u64>| parent.zip(child).is_none_or(|(p, c)| p <= c);
    began_after
        && at_least(parent.prompt, child.prompt)
        && at_least(parent.completion, child.completion)
        && known_at_least(parent.cached, child.cached)
        && known_at_least(parent.steps, child.steps)
}

/// The document of session `parent`, a sibling of the session folder
/// holding `path` (Vibe names a session's folder
/// `<prefix>_<YYYYmmdd_HHMMSS>_<first 8 characters of its id>`, and
/// finds a session by that short id the same way).
fn parent_document(path: &Path, parent: &str) -> Option<Value> {
    let own = path.parent()?;
    let folders = own.parent()?;
    let short: String = parent.chars().take(8).collect();
    let suffix = format!("_{short}");
    let mut opened = 0;
    for entry in std::fs::read_dir(folders).ok()?.flatten() {
        let name = entry.file_name();
        if !name.to_str().is_some_and(|name| name.ends_with(&suffix)) || entry.path() == own {
            continue;
        }
        if opened == MOST_CANDIDATES {
            break;
        }
        opened += 1;
        // A parent over the bound, or not JSON, is not found (its own read
        // names it).
        if let Ok(Document::Read(document)) =
            read_document_within(&entry.path().join(META_FILE), MAX_DOCUMENT_BYTES, &META)
            && text(&document, "/session_id") == Some(parent)
        {
            return Some(document);
        }
    }
    None
}

/// Reads one session document: the count is of sessions refused (usage
/// without a session id, or no time at all).
pub(crate) fn read(path: &Path, document: &Value, found: &mut Found<'_>) -> u64 {
    let session = match session_of(document) {
        Read::Session(session) => session,
        Read::NoStats => return 0,
        Read::NoId => return 1,
    };
    let (mut prompt, mut cached, mut completion) = (session.prompt, session.cached, session.completion);
    if let Some(parent_id) = session.parent {
        let parent = parent_document(path, parent_id);
        if let Some(Read::Session(parent)) = parent.as_ref().map(session_of)
            && continues(&parent, &session)
        {
            // What this session added to the totals its parent's document
            // already counts (both known: `continues` says so).
            let added = |child: Option<u64>, parent: Option<u64>| child.zip(parent).and_then(|(c, p)| c.checked_sub(p));
            prompt = added(prompt, parent.prompt);
            completion = added(completion, parent.completion);
            // A cached count only one of the two keeps is no part of what
            // was added: unknown.
            cached = added(cached, parent.cached);
        }
    }
    let counters = Counters {
        // The cached part is inside the prompt count: taken out where Vibe
        // counts it (less than it: unknown, never 0), else the input is the
        // whole prompt.
        input_tokens: match (session.cached, cached) {
            (Some(_), Some(cached)) => prompt.and_then(|prompt| prompt.checked_sub(cached)),
            (Some(_), None) => None,
            (None, _) => prompt,
        },
        cache_read_input_tokens: cached,
        output_tokens: completion,
        ..Counters::default()
    };
    if counters.counts_nothing() {
        // No exchange yet, or nothing added to its parent's totals.
        return 0;
    }
    let Some(at_ms) = session.start_ms.or(session.end_ms).or_else(|| modified_ms(path)) else { return 1 };
    found.session(session.id, session.directory);
    found.response(session.id.to_owned(), session.id, at_ms, session.model, counters);
    0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::agents::tests::{noted, responses_of, rows, tiny_items};
    use crate::ledger::stored::evidence::{Evidence, SessionProject};
    use crate::ledger::stored::responses::ResponseWrite;
    use bee_proto::ledger::{Provider, SkipReason};
    use serde_json::json;
    use std::path::PathBuf;

    /// A session document as Vibe 3.0 writes it (`save_interaction`), with
    /// the parts Bee never reads beside those it does.
    const SESSION: &str = include_str!("testdata/meta.json");
    /// A Vibe 1.x session file (`metadata` and `messages`).
    const LEGACY: &str = include_str!("testdata/session_20251215_101500_1f0e2d3c.json");

    /// A 2.x document: `(id, parent, start, end, prompt, completion, steps)`.
    fn meta(id: &str, parent: Option<&str>, start: &str, end: &str, prompt: u64, completion: u64, steps: u64) -> Value {
        json!({"session_id": id, "parent_session_id": parent, "start_time": start, "end_time": end,
            "git_commit": null, "git_branch": "main", "username": "dev",
            "environment": {"working_directory": "/home/dev/app"}, "title": "t", "title_source": "auto",
            "stats": {"steps": steps, "session_prompt_tokens": prompt, "session_completion_tokens": completion,
                "tool_calls_agreed": 0, "context_tokens": prompt, "input_price_per_million": 1.5,
                "output_price_per_million": 7.5, "session_total_llm_tokens": prompt + completion,
                "session_cost": 0.0},
            "total_messages": 2,
            "config": {"active_model": "mistral-medium-3.5", "models": [
                {"name": "mistral-vibe-cli-latest", "provider": "mistral", "alias": "mistral-medium-3.5"},
                {"name": "devstral-small-latest", "provider": "mistral", "alias": "devstral-small"}]}})
    }

    /// A logs folder: each `(folder, document)` written as
    /// `<folder>/meta.json` (or as the file `<folder>` when it ends in
    /// `.json`), then every document read, in order.
    fn read_logs(documents: &[(&str, &str)]) -> (Vec<Evidence>, u64) {
        let dir = tempfile::tempdir().unwrap();
        let logs = dir.path().join("logs/session");
        let mut paths: Vec<PathBuf> = Vec::new();
        for (folder, document) in documents {
            let path = if folder.ends_with(".json") { logs.join(folder) } else { logs.join(folder).join(META_FILE) };
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, document).unwrap();
            paths.push(path);
        }
        let mut evidence = Vec::new();
        let mut refused = 0;
        for path in &paths {
            let reader = crate::ledger::agents::agent(Provider::MistralVibe).whole_file().unwrap();
            refused += reader.read(path, &Default::default(), &mut evidence).unwrap().1;
        }
        (evidence, refused)
    }

    fn responses(documents: &[(&str, &str)]) -> Vec<ResponseWrite> {
        responses_of(read_logs(documents).0)
    }

    /// A session read exactly: one entry keyed by its id, input its whole
    /// prompt count (no cache counter), output its completions, dated at
    /// its start, its model the id its active alias names, its project
    /// its working directory; nothing of its prompt or tools kept.
    #[test]
    fn a_session_is_one_running_total_read_exactly() {
        let (evidence, refused) = read_logs(&[("session_20260511_100000_019e1e27", SESSION)]);
        assert_eq!(refused, 0);
        let projects: Vec<_> = evidence
            .iter()
            .filter_map(|e| match e {
                Evidence::SessionProject(SessionProject { session_id, project, .. }) => {
                    Some((session_id.clone(), project.clone()))
                }
                _ => None,
            })
            .collect();
        let id = "019e1e27-6f8e-73cb-b0eb-78da684e5111";
        assert_eq!(projects, [(id.to_owned(), "-Users-test-mistral-project".to_owned())]);
        let writes = responses_of(evidence);
        let s = Some;
        assert_eq!(
            rows(Provider::MistralVibe, &writes),
            [(id.into(), s(20_000), None, None, s(3_000), None, s(23_000))]
        );
        let write = &writes[0];
        assert_eq!(write.at_ms, bee_proto::time::parse_rfc3339_ms("2026-05-11T10:00:00.123Z").unwrap());
        assert_eq!(write.model.as_deref(), Some("mistral-vibe-cli-latest"));
        assert_eq!(write.own_figure, None, "its worst-case estimate is not read");
    }

    /// A session rewritten as it grows, read again, and resumed (Vibe 2.18
    /// begins its totals again in the same folder; 2.24 goes on from
    /// them): one entry, by its id, whose fullest write the ledger keeps.
    #[test]
    fn a_rewrite_or_a_resume_replaces_never_adds() {
        let id = "a1b2c3d4-0000-4000-8000-00000000feed";
        let start = "2026-06-01T09:00:00.000000+00:00";
        let early = meta(id, None, start, "2026-06-01T09:01:00+00:00", 1_000, 100, 1).to_string();
        let later = meta(id, None, start, "2026-06-01T09:05:00+00:00", 5_000, 400, 4).to_string();
        let resumed = meta(id, None, start, "2026-06-02T08:00:00+00:00", 700, 50, 1).to_string();
        let folder = "session_20260601_090000_a1b2c3d4";
        let mut writes = responses(&[(folder, &early)]);
        writes.extend(responses(&[(folder, &later)]));
        writes.extend(responses(&[(folder, &later)]));
        writes.extend(responses(&[(folder, &resumed)]));
        assert!(writes.iter().all(|w| w.key == id), "one key: the ledger keeps its fullest write");
        assert_eq!(writes.len(), 4);
    }

    /// A compaction begins a new session whose totals go on from its
    /// parent's: it counts what it added, so the two count once; a fork
    /// (Vibe's ACP) begins from zero and counts whole; a parent whose
    /// document is gone leaves the child whole; a chain of compactions
    /// adds up to its last totals.
    #[test]
    fn a_compacted_session_counts_what_it_added() {
        let root = "aaaaaaaa-1111-4111-8111-5e55100c0de1";
        let compacted = "bbbbbbbb-2222-4222-8222-5e55100c0de1";
        let again = "cccccccc-3333-4333-8333-5e55100c0de1";
        let fork = "dddddddd-4444-4444-8444-5e55100c0de1";
        let orphan = "eeeeeeee-5555-4555-8555-5e55100c0de1";
        let docs = [
            (
                "session_20260601_090000_aaaaaaaa",
                meta(root, None, "2026-06-01T09:00:00+00:00", "2026-06-01T09:30:00+00:00", 90_000, 3_000, 12),
            ),
            (
                "session_20260601_093005_bbbbbbbb",
                meta(
                    compacted,
                    Some(root),
                    "2026-06-01T09:30:05+00:00",
                    "2026-06-01T10:00:00+00:00",
                    130_000,
                    4_500,
                    20,
                ),
            ),
            (
                "session_20260601_100010_cccccccc",
                meta(
                    again,
                    Some(compacted),
                    "2026-06-01T10:00:10+00:00",
                    "2026-06-01T10:10:00+00:00",
                    150_000,
                    5_000,
                    25,
                ),
            ),
            (
                "session_20260601_092000_dddddddd",
                meta(fork, Some(root), "2026-06-01T09:20:00+00:00", "2026-06-01T09:25:00+00:00", 8_000, 600, 2),
            ),
            (
                "session_20260601_110000_eeeeeeee",
                meta(
                    orphan,
                    Some("ffffffff-6666-4666-8666-5e55100c0de1"),
                    "2026-06-01T11:00:00+00:00",
                    "2026-06-01T11:05:00+00:00",
                    900,
                    90,
                    1,
                ),
            ),
        ];
        let texts: Vec<(&str, String)> = docs.iter().map(|(folder, doc)| (*folder, doc.to_string())).collect();
        let borrowed: Vec<(&str, &str)> = texts.iter().map(|(folder, doc)| (*folder, doc.as_str())).collect();
        let writes = responses(&borrowed);
        let s = Some;
        assert_eq!(
            rows(Provider::MistralVibe, &writes),
            [
                (root.into(), s(90_000), None, None, s(3_000), None, s(93_000)),
                (compacted.into(), s(40_000), None, None, s(1_500), None, s(41_500)),
                (again.into(), s(20_000), None, None, s(500), None, s(20_500)),
                (fork.into(), s(8_000), None, None, s(600), None, s(8_600)),
                (orphan.into(), s(900), None, None, s(90), None, s(990)),
            ]
        );
        let total: u64 =
            writes.iter().filter(|w| w.key != fork && w.key != orphan).map(|w| w.tokens.input_tokens.unwrap()).sum();
        assert_eq!(total, 150_000, "the chain adds up to its last totals");
    }

    /// Vibe 2.24.0's own documents (three headless runs against a local
    /// mock, the last two compacting: each compaction began a session of
    /// its own whose totals went on from its parent's, cache reads
    /// counted): each session counts what it added, the three adding up
    /// to the last one's totals; input without its cached part; the model
    /// the id its alias names in `models` keyed by alias.
    #[test]
    fn vibes_own_compacted_sessions_count_once() {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src/ledger/agents/vibe/testdata/2.24.0");
        let mut documents: Vec<(String, String)> = Vec::new();
        for entry in std::fs::read_dir(&dir).unwrap() {
            let folder = entry.unwrap().file_name().into_string().unwrap();
            documents.push((folder.clone(), std::fs::read_to_string(dir.join(&folder).join(META_FILE)).unwrap()));
        }
        documents.sort();
        let borrowed: Vec<(&str, &str)> = documents.iter().map(|(f, d)| (f.as_str(), d.as_str())).collect();
        let writes = responses(&borrowed);
        let s = Some;
        assert_eq!(
            rows(Provider::MistralVibe, &writes),
            [
                ("0101a445-06d8-f61f-3120-bec6434018a7".into(), s(14_433), None, s(9_600), s(174), None, s(24_207)),
                ("1825698e-e74d-54b3-0657-bec6434018a7".into(), s(9_033), None, s(6_000), s(165), None, s(15_198)),
                ("bc94aa20-be8b-93c3-b12d-bec6434018a7".into(), s(3_022), None, s(2_000), s(105), None, s(5_127)),
            ]
        );
        let whole: u64 =
            writes.iter().map(|w| w.tokens.input_tokens.unwrap() + w.tokens.cache_read_input_tokens.unwrap()).sum();
        assert_eq!(whole, 44_088, "the last session's prompt total, once");
        assert!(writes.iter().all(|w| w.model.as_deref() == Some("mock-model-v1")));
        let first = writes.iter().find(|w| w.key.starts_with("bc94aa20")).unwrap();
        assert_eq!(first.at_ms, bee_proto::time::parse_rfc3339_ms("2026-12-06T19:12:44.593Z").unwrap());
    }

    /// A fork whose parent was written after it began, though its totals
    /// passed its parent's, is no continuation: whole.
    #[test]
    fn a_fork_past_its_parent_counts_whole() {
        let parent = "aaaaaaaa-1111-4111-8111-000000000001";
        let fork = "dddddddd-4444-4444-8444-000000000001";
        let parent_doc = meta(parent, None, "2026-06-01T09:00:00+00:00", "2026-06-01T12:00:00+00:00", 1_000, 10, 1);
        let fork_doc =
            meta(fork, Some(parent), "2026-06-01T09:20:00+00:00", "2026-06-01T11:00:00+00:00", 50_000, 900, 9);
        let writes = responses(&[
            ("session_20260601_090000_aaaaaaaa", &parent_doc.to_string()),
            ("session_20260601_092000_dddddddd", &fork_doc.to_string()),
        ]);
        let fork_write = writes.iter().find(|w| w.key == fork).unwrap();
        assert_eq!(fork_write.tokens.input_tokens, Some(50_000));
    }

    /// A sub-agent's session (under its session's `agents/`) is its own
    /// entry, its totals its own (Vibe starts a sub-agent's loop anew).
    #[test]
    fn a_sub_agents_session_is_its_own_entry() {
        let parent = meta(
            "aaaaaaaa-1111-4111-8111-000000000002",
            None,
            "2026-06-01T09:00:00+00:00",
            "2026-06-01T09:10:00+00:00",
            5_000,
            500,
            3,
        )
        .to_string();
        let sub = meta(
            "99999999-1111-4111-8111-000000000003",
            None,
            "2026-06-01T09:02:00+00:00",
            "2026-06-01T09:03:00+00:00",
            1_200,
            80,
            2,
        )
        .to_string();
        let writes = responses(&[
            ("session_20260601_090000_aaaaaaaa", &parent),
            ("session_20260601_090000_aaaaaaaa/agents/explore_20260601_090200_99999999", &sub),
        ]);
        let s = Some;
        assert_eq!(
            rows(Provider::MistralVibe, &writes).into_iter().map(|r| (r.0, r.1, r.4)).collect::<Vec<_>>(),
            [
                ("99999999-1111-4111-8111-000000000003".into(), s(1_200), s(80)),
                ("aaaaaaaa-1111-4111-8111-000000000002".into(), s(5_000), s(500))
            ]
        );
    }

    /// Vibe 1.x's flat file: `metadata` read the same way, its model from
    /// `agent_config`; its naive local times say no offset, so it is dated
    /// at the file's last write.
    #[test]
    fn a_legacy_session_file_is_read() {
        let writes = responses(&[("session_20251215_101500_1f0e2d3c.json", LEGACY)]);
        let s = Some;
        assert_eq!(
            rows(Provider::MistralVibe, &writes),
            [("1f0e2d3c-8a9b-4c5d-9e0f-123456789abc".into(), s(8_000), None, None, s(500), None, s(8_500))]
        );
        assert_eq!(writes[0].model.as_deref(), Some("mistral-vibe-cli-latest"));
        let now = bee_proto::time::now_unix_ms();
        assert!((now - 600_000..=now + 1).contains(&writes[0].at_ms), "dated at the file's write");
    }

    /// Broken documents: no stats is nothing; stats without a session id
    /// is refused; counters that are no counts are unknown, never 0; a
    /// session without any usage yet is none; an active model of no alias
    /// is named as written; not JSON, not UTF-8 or cut short is nothing.
    #[test]
    fn broken_documents() {
        let no_stats = r#"{"session_id": "x1", "start_time": "2026-06-01T09:00:00+00:00"}"#;
        let no_id = r#"{"start_time": "2026-06-01T09:00:00+00:00", "stats": {"session_prompt_tokens": 5}}"#;
        let hostile = r#"{"session_id": "x2", "start_time": "2026-06-01T09:00:00+00:00",
            "stats": {"session_prompt_tokens": "many", "session_completion_tokens": 7, "steps": -1},
            "config": {"active_model": "my-local", "models": 5}}"#;
        let empty = r#"{"session_id": "x3", "start_time": "2026-06-01T09:00:00+00:00",
            "stats": {"session_prompt_tokens": 0, "session_completion_tokens": 0}}"#;
        let (evidence, refused) = read_logs(&[
            ("session_20260601_090000_x1", no_stats),
            ("session_20260601_090000_x0", no_id),
            ("session_20260601_090000_x2", hostile),
            ("session_20260601_090000_x3", empty),
            ("session_20260601_090000_x4", "{\"session_id\": \"x4\", \"stats\": {"),
            ("session_20260601_090000_x5", "{\"session_id\": \"x\u{0}5\"}"),
        ]);
        assert_eq!(refused, 1, "stats without a session id");
        let writes = responses_of(evidence);
        assert_eq!(writes.len(), 1);
        let t = &writes[0].tokens;
        assert_eq!((writes[0].key.as_str(), t.input_tokens, t.output_tokens), ("x2", None, Some(7)));
        assert_eq!(writes[0].model.as_deref(), Some("my-local"));
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(META_FILE);
        std::fs::write(&path, b"{\"session_id\": \"\xff\xfe\", \"stats\": {}}").unwrap();
        let reader = crate::ledger::agents::agent(Provider::MistralVibe).whole_file().unwrap();
        let mut evidence = Vec::new();
        assert_eq!(reader.read(&path, &Default::default(), &mut evidence).unwrap().1, 0);
        assert!(evidence.is_empty(), "not UTF-8: none of Vibe's");
    }

    /// A system prompt or a tool list of millions of tiny items is passed
    /// over while parsing (never built); a document over the bound is
    /// named by its length, never read.
    #[test]
    fn large_documents_are_passed_over_or_named() {
        let junk = tiny_items(1_500_000);
        let mut document: Value = serde_json::from_str(SESSION).unwrap();
        document["tools_available"] = Value::String(String::new());
        let text = document.to_string().replace("\"tools_available\":\"\"", &format!("\"tools_available\":{junk}"));
        let _ = noted();
        assert_eq!(responses(&[("session_20260511_100000_019e1e27", &text)]).len(), 1);
        assert!(noted().is_empty());
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(META_FILE);
        std::fs::File::create(&path).unwrap().set_len(MAX_DOCUMENT_BYTES + 1).unwrap();
        let reader = crate::ledger::agents::agent(Provider::MistralVibe).whole_file().unwrap();
        let mut evidence = Vec::new();
        assert_eq!(reader.read(&path, &Default::default(), &mut evidence).unwrap().1, 0);
        assert!(evidence.is_empty());
        assert_eq!(noted(), [(0, MAX_DOCUMENT_BYTES + 1, SkipReason::OversizedDocument)]);
    }
}
