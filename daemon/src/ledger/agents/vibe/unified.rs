//! A Mistral Vibe session in its unified session store (Vibe 2.26 and
//! later, and 2.25 where its rollout picked it):
//! `logs/session/unified/<session id>/`, whose
//! `generations/<generation>/projection-state.json` Vibe writes anew at
//! each checkpoint (the last two generations kept): `session_id`, and
//! `snapshot.session` — `id`, `createdAt` (unix ms), `tokenUsage`, the
//! session's running totals (`inputTokens`, the cached part inside it
//! `cachedInputTokens`, `outputTokens`, `totalTokens`), kept across a
//! resume and a compaction. Beside the generations, `meta.json` names the
//! session's folder (`environment.working_directory`) and model
//! (`config.model_name`, the id sent to the provider; Vibe 2.26 writes no
//! `config`, and its `runtime-state.json` names the model's alias,
//! `session_metadata.active_model`). A sub-agent runs as a session of its
//! own, in a store of its own, with its own totals.
//!
//! The store's journal (`journal/<first sequence>.jsonl`) holds each model
//! call's usage, but Vibe deletes a segment at the checkpoint after the
//! next: it is not read. A session is one entry, keyed apart from a 2.x
//! session of the same id (an import of one keeps its id, not its totals),
//! its counters its running totals; each generation read again replaces
//! it, never adds.

use bee_proto::usage::Counters;
use serde_json::Value;
use std::path::Path;
use std::sync::LazyLock;

use crate::ledger::agents::lines::{Found, count, text, time_ms};
use crate::ledger::agents::sparse::Keep;
use crate::ledger::agents::whole::{Document, MAX_DOCUMENT_BYTES, modified_ms, read_document_within};

/// A generation's projection of its session.
pub(super) const PROJECTION_FILE: &str = "projection-state.json";

/// A generation's runtime state, beside its projection.
const RUNTIME_FILE: &str = "runtime-state.json";

/// The folder of a store's generations.
const GENERATIONS: &str = "generations";

/// What [`read`] reads of a projection.
pub(crate) static PROJECTION: LazyLock<Keep> = LazyLock::new(|| {
    Keep::paths(&["session_id", "snapshot/session/id", "snapshot/session/createdAt", "snapshot/session/tokenUsage"])
});

/// What is read of the session's `meta.json`.
static SESSION_META: LazyLock<Keep> = LazyLock::new(|| {
    Keep::paths(&["start_time", "environment/working_directory", "config/model_name", "config/active_model"])
});

/// What is read of a generation's runtime state, where `meta.json` names
/// no model or folder.
static RUNTIME: LazyLock<Keep> =
    LazyLock::new(|| Keep::paths(&["session_metadata/active_model", "session_metadata/cwd"]));

/// Whether `path` is a generation's projection
/// (`generations/<generation>/projection-state.json`).
pub(super) fn is_projection(path: &Path) -> bool {
    path.file_name().is_some_and(|name| name == PROJECTION_FILE)
        && path.parent().and_then(Path::parent).and_then(Path::file_name).is_some_and(|name| name == GENERATIONS)
}

/// The parts `keep` names of the JSON document at `path`, when it is one
/// within the bound (one over it, or not JSON, is none: the session is
/// read without what it would say).
fn beside(path: &Path, keep: &Keep) -> Option<Value> {
    match read_document_within(path, MAX_DOCUMENT_BYTES, keep) {
        Ok(Document::Read(document)) => Some(document),
        _ => None,
    }
}

/// Reads one generation's projection: the count is of sessions refused
/// (usage without a session id, or no time at all).
pub(crate) fn read(path: &Path, projection: &Value, found: &mut Found<'_>) -> u64 {
    let Some(usage) = projection.pointer("/snapshot/session/tokenUsage").filter(|usage| usage.is_object()) else {
        return 0;
    };
    let id = text(projection, "/session_id").or_else(|| text(projection, "/snapshot/session/id"));
    let Some(session) = id.filter(|id| !id.is_empty()) else { return 1 };
    let input = count(usage.get("inputTokens"));
    let cached = count(usage.get("cachedInputTokens"));
    let counters = Counters {
        // The cached part is inside the input: taken out where it is known
        // (less than it: unknown, never 0), else the input is the whole.
        input_tokens: match cached {
            Some(cached) => input.and_then(|input| input.checked_sub(cached)),
            None => input,
        },
        cache_read_input_tokens: cached,
        output_tokens: count(usage.get("outputTokens")),
        total_tokens: count(usage.get("totalTokens")),
        ..Counters::default()
    };
    if counters.counts_nothing() {
        return 0;
    }
    let generation = path.parent();
    let store = generation.and_then(Path::parent).and_then(Path::parent);
    let meta = store.and_then(|store| beside(&store.join(super::meta::META_FILE), &SESSION_META));
    let meta_text = |pointer: &str| meta.as_ref().and_then(|meta| text(meta, pointer)).filter(|text| !text.is_empty());
    let mut directory = meta_text("/environment/working_directory");
    let mut model = meta_text("/config/model_name").or_else(|| meta_text("/config/active_model"));
    let runtime = (directory.is_none() || model.is_none())
        .then(|| generation.and_then(|generation| beside(&generation.join(RUNTIME_FILE), &RUNTIME)))
        .flatten();
    let runtime_text = |pointer: &str| runtime.as_ref().and_then(|runtime| text(runtime, pointer));
    directory = directory.or_else(|| runtime_text("/session_metadata/cwd"));
    model = model.or_else(|| runtime_text("/session_metadata/active_model")).filter(|model| !model.is_empty());
    let start = meta.as_ref().and_then(|meta| text(meta, "/start_time")).and_then(super::meta::time_ms);
    let at_ms = time_ms(projection.pointer("/snapshot/session/createdAt")).or(start).or_else(|| modified_ms(path));
    let Some(at_ms) = at_ms else { return 1 };
    found.session(session, directory);
    found.response(format!("unified\u{1f}{session}"), session, at_ms, model, counters);
    0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::agents::tests::{responses_of, rows};
    use crate::ledger::stored::evidence::{Evidence, SessionProject};
    use crate::ledger::stored::responses::ResponseWrite;
    use bee_proto::ledger::Provider;
    use std::path::PathBuf;

    /// The fixtures' folder: stores written by the real CLI (3.0.3, 2.26.1)
    /// against a local mock, their runtime states trimmed.
    fn testdata() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src/ledger/agents/vibe/testdata")
    }

    /// Every projection under `root`, copied under a logs folder with its
    /// store and read: the evidence, and the sessions refused.
    fn read_stores(root: &Path) -> (Vec<Evidence>, u64) {
        let dir = tempfile::tempdir().unwrap();
        let logs = dir.path().join("logs/session");
        copy_tree(root, &logs);
        let mut projections = Vec::new();
        find(&logs, &mut projections);
        projections.sort();
        let reader = crate::ledger::agents::agent(Provider::MistralVibe).whole_file().unwrap();
        let (mut evidence, mut refused) = (Vec::new(), 0);
        for path in projections {
            refused += reader.read(&path, &Default::default(), &mut evidence).unwrap().1;
        }
        (evidence, refused)
    }

    fn copy_tree(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).unwrap();
        for entry in std::fs::read_dir(from).unwrap() {
            let entry = entry.unwrap();
            let target = to.join(entry.file_name());
            if entry.file_type().unwrap().is_dir() {
                copy_tree(&entry.path(), &target);
            } else {
                std::fs::copy(entry.path(), target).unwrap();
            }
        }
    }

    fn find(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                find(&path, out);
            } else if is_projection(&path) {
                out.push(path);
            }
        }
    }

    fn responses(root: &Path) -> Vec<ResponseWrite> {
        responses_of(read_stores(root).0)
    }

    /// Vibe 3.0.3's store (two headless runs, the second resumed with
    /// `--continue`, a third whose compaction failed: one session): one
    /// entry, its running totals — input without its cached part, cache
    /// reads, output, the total adding up — dated at its creation, its
    /// model the id `meta.json` names, its folder the project.
    #[test]
    fn a_unified_session_is_one_running_total() {
        let (evidence, refused) = read_stores(&testdata().join("3.0.3"));
        assert_eq!(refused, 0);
        let projects: Vec<_> = evidence
            .iter()
            .filter_map(|e| match e {
                Evidence::SessionProject(SessionProject { project, .. }) => Some(project.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(projects, ["-tmp-vibe-run-work"]);
        let writes = responses_of(evidence);
        let s = Some;
        let id = "a4d376b7-0cc4-10b7-82e8-8f70cde27217";
        assert_eq!(
            rows(Provider::MistralVibe, &writes),
            [(format!("unified\u{1f}{id}"), s(11_125), None, s(2_400), s(156), None, s(13_681))]
        );
        assert_eq!(writes[0].session_id.as_deref(), Some(id));
        assert_eq!(writes[0].at_ms, 1_796_584_087_213);
        assert_eq!(writes[0].model.as_deref(), Some("mock-model-v1"));
    }

    /// Vibe 2.26.1 writes no `config` in `meta.json`: the model is the
    /// alias its runtime state names.
    #[test]
    fn a_model_named_only_by_the_runtime_state() {
        let writes = responses(&testdata().join("2.26.1"));
        let s = Some;
        assert_eq!(
            rows(Provider::MistralVibe, &writes),
            [("unified\u{1f}d8dfdd87-0f48-b508-6f71-cf7b628c593d".into(), s(611), None, s(400), s(51), None, s(1_062))]
        );
        assert_eq!(writes[0].model.as_deref(), Some("mock-alias"));
    }

    /// A projection without usage is nothing; usage without a session id
    /// is refused; a cached part larger than the input leaves the input
    /// unknown, never 0; counts that are no counts are unknown; a store
    /// without `meta.json` is read without its model and folder.
    #[test]
    fn broken_projections() {
        let dir = tempfile::tempdir().unwrap();
        let write = |session: &str, projection: &str| {
            let path = dir.path().join(format!("unified/{session}/generations/0000000000000008/{PROJECTION_FILE}"));
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, projection).unwrap();
            path
        };
        let paths = [
            write("s0", r#"{"session_id": "s0", "snapshot": {"session": {"id": "s0", "createdAt": 1796584087213}}}"#),
            write("s1", r#"{"snapshot": {"session": {"tokenUsage": {"inputTokens": 5, "outputTokens": 1}}}}"#),
            write(
                "s2",
                r#"{"session_id": "s2", "snapshot": {"session": {"createdAt": 1796584087213,
                    "tokenUsage": {"inputTokens": 10, "cachedInputTokens": 40, "outputTokens": "many"}}}}"#,
            ),
        ];
        let reader = crate::ledger::agents::agent(Provider::MistralVibe).whole_file().unwrap();
        let (mut evidence, mut refused) = (Vec::new(), 0);
        for path in &paths {
            refused += reader.read(path, &Default::default(), &mut evidence).unwrap().1;
        }
        assert_eq!(refused, 1, "usage without a session id");
        let writes = responses_of(evidence);
        assert_eq!(writes.len(), 1);
        let t = &writes[0].tokens;
        assert_eq!((t.input_tokens, t.cache_read_input_tokens, t.output_tokens), (None, Some(40), None));
        assert_eq!(writes[0].model, None);
    }
}
