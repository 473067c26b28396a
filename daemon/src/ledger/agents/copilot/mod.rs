//! GitHub Copilot CLI: its session store (`~/.copilot/session-store.db`,
//! one row a model call, which the CLI always writes), and the spans its
//! OpenTelemetry file exporter writes where it is turned on
//! (`COPILOT_OTEL_FILE_EXPORTER_PATH`, and `~/.copilot/otel/*.jsonl`).
//! `README.md` beside this file describes both formats, and how a call
//! both keep counts once.
//!
//! - [`store`]: the reader of the session store.
//! - [`otel`]: the reader of an export.

mod otel;
mod store;

use bee_proto::ledger::Provider;
use bee_proto::usage::Counters;
use std::path::{Path, PathBuf};

use crate::ledger::agents::agent::{About, Agent, Env, FileReader, Records, Verified, WholeFileReader, env_or_home};
use crate::ledger::agents::lines::JsonLines;
use crate::ledger::stored::evidence::{AgentState, Evidence};

/// GitHub Copilot CLI, as [`Agent`].
#[derive(Debug)]
pub struct Copilot;

/// Copilot's reader: the session store, or an export, each read whole
/// whenever it changes from where its last pass stopped.
struct Files;

impl WholeFileReader for Files {
    /// Each file takes the large-read token itself: an export's long line
    /// with its buffer (as ingestion reads a line log), a large store as
    /// one large read.
    fn reads_documents(&self) -> bool {
        true
    }

    fn read(&self, path: &Path, state: &AgentState, out: &mut Vec<Evidence>) -> std::io::Result<(AgentState, u64)> {
        if store::is_database(path) {
            return store::read(path, state, out);
        }
        let env = |name: &str| std::env::var_os(name).filter(|value| !value.is_empty());
        otel::read_export(path, state, &stores_of_export(path, &env), out)
    }
}

/// The session stores that may hold the conversations of the export at
/// `path`: the store of the Copilot home whose `otel/` it is in, and the
/// one of the home the environment names (where the exporter's own file,
/// anywhere, was written from), as [`Copilot::record_dirs`] finds it.
fn stores_of_export(path: &Path, env: Env<'_>) -> Vec<PathBuf> {
    let beside = path
        .parent()
        .filter(|dir| dir.file_name().is_some_and(|name| name == "otel"))
        .and_then(Path::parent)
        .map(|home| home.join(store::DATABASE));
    let of_env = home(env).map(|home| home.join(store::DATABASE));
    let mut stores: Vec<PathBuf> = beside.into_iter().chain(of_env).collect();
    stores.dedup();
    stores
}

/// Copilot's home: `COPILOT_HOME`, by default `~/.copilot`.
fn home(env: Env<'_>) -> Option<PathBuf> {
    env_or_home(env, "COPILOT_HOME", ".copilot")
}

impl Agent for Copilot {
    fn about(&self) -> &'static About {
        &About {
            provider: Provider::Copilot,
            title: "GitHub Copilot CLI",
            verified: Verified::RealCli("1.0.102"),
            unrecorded_calls: None,
            // Its session store keeps every call's reasoning (where the
            // model reports it) and cache writes (where the API reports
            // them), as its exporter's chat spans do; no cost in money, no
            // limit notice Bee reads.
            records: Records {
                time_spans: false,
                limit_notices: false,
                reasoning: true,
                cache_writes: true,
                own_cost: false,
            },
        }
    }

    /// The session store and `otel/` of `COPILOT_HOME` (by default
    /// `~/.copilot`), and the file `COPILOT_OTEL_FILE_EXPORTER_PATH` names.
    fn record_dirs(&self, env: Env<'_>) -> Vec<PathBuf> {
        let exporter = env("COPILOT_OTEL_FILE_EXPORTER_PATH").map(PathBuf::from);
        let home = home(env);
        let store = home.as_ref().map(|home| home.join(store::DATABASE));
        let exports = home.map(|home| home.join("otel"));
        store.into_iter().chain(exporter).chain(exports).collect()
    }

    /// An export (`*.jsonl`) or the session store.
    fn is_record_file(&self, path: &Path) -> bool {
        path.extension().is_some_and(|extension| extension == "jsonl") || store::is_database(path)
    }

    /// An export's lines, for the readers of a whole log at once (fuzzing,
    /// tests): ingestion reads every record file of Copilot's whole
    /// ([`Agent::whole_file`]).
    fn file_reader(&self, path: &Path, state: &AgentState) -> Box<dyn FileReader> {
        Box::new(JsonLines::<otel::Spans>::new(path, state))
    }

    fn whole_file(&self) -> Option<&dyn WholeFileReader> {
        Some(&Files)
    }

    /// OpenAI's shape, where input includes both its cached part and, for
    /// Anthropic's API, its cache writes: input is shown without either,
    /// cache reads and cache writes apart (writes unknown where the API
    /// reports none).
    fn columns(&self, reported: &Counters) -> Counters {
        let cached = reported.cached_input_tokens;
        let writes = reported.cache_creation_input_tokens;
        Counters {
            input_tokens: reported
                .input_tokens
                .zip(cached)
                .map(|(input, cached)| input.saturating_sub(cached).saturating_sub(writes.unwrap_or(0))),
            cached_input_tokens: None,
            cache_creation_input_tokens: writes,
            cache_read_input_tokens: cached,
            ..reported.clone()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::agents::tests::{responses_of, rows};
    use std::ffi::OsString;

    /// Where the records are: the session store and exports of the home
    /// the environment names, and the exporter's own file.
    #[test]
    fn records_are_the_store_and_the_exports() {
        let env = |name: &str| match name {
            "HOME" => Some(OsString::from("/h")),
            "COPILOT_OTEL_FILE_EXPORTER_PATH" => Some(OsString::from("/t/spans.jsonl")),
            _ => None,
        };
        let dirs = ["/h/.copilot/session-store.db", "/t/spans.jsonl", "/h/.copilot/otel"];
        assert_eq!(Copilot.record_dirs(&env), dirs.map(PathBuf::from));
        let moved = |name: &str| (name == "COPILOT_HOME").then(|| OsString::from("/c"));
        assert_eq!(Copilot.record_dirs(&moved), ["/c/session-store.db", "/c/otel"].map(PathBuf::from));
        for (path, is) in [
            ("/c/otel/a.jsonl", true),
            ("/c/session-store.db", true),
            ("/c/session-store.db-wal", false),
            ("/c/otel/a.json", false),
        ] {
            assert_eq!(Copilot.is_record_file(Path::new(path)), is, "{path}");
        }
        assert_eq!(
            stores_of_export(Path::new("/c/otel/a.jsonl"), &env),
            [PathBuf::from("/c/session-store.db"), PathBuf::from("/h/.copilot/session-store.db")]
        );
        assert_eq!(stores_of_export(Path::new("/t/spans.jsonl"), &moved), [PathBuf::from("/c/session-store.db")]);
        assert_eq!(stores_of_export(Path::new("/c/otel/a.jsonl"), &moved), [PathBuf::from("/c/session-store.db")]);
    }

    /// The chat span Copilot CLI 1.0.102 exported for a call of Anthropic's
    /// API (its conversation `session`, response `id`), as one line.
    fn anthropic_span(session: &str, id: &str) -> String {
        serde_json::json!({
            "type": "span", "traceId": "a57830f0f2673420cf0994d3eb105503", "spanId": format!("{id}-span"),
            "parentSpanId": "df97ea9b132f1cbf", "name": "chat claude-sonnet-4-5", "kind": 2,
            "startTime": [1796561486, 700000000], "endTime": [1796561486, 824000000], "status": {"code": 0},
            "attributes": {
                "gen_ai.operation.name": "chat", "gen_ai.provider.name": "github",
                "gen_ai.request.model": "claude-sonnet-4-5", "gen_ai.conversation.id": session,
                "gen_ai.usage.input_tokens": 2000, "gen_ai.usage.output_tokens": 220,
                "gen_ai.usage.cache_read.input_tokens": 300, "gen_ai.usage.cache_write.input_tokens": 500,
                "gen_ai.response.model": "claude-sonnet-4-5", "gen_ai.response.id": id,
                "github.copilot.turn_id": "0"
            }
        })
        .to_string()
            + "\n"
    }

    /// An export read whole, as ingestion reads it, from `state`.
    fn read_export(
        path: &Path,
        state: &AgentState,
    ) -> (Vec<crate::ledger::stored::responses::ResponseWrite>, AgentState, u64) {
        let mut evidence = Vec::new();
        let (state, unparseable) = Files.read(path, state, &mut evidence).unwrap();
        (responses_of(evidence), state, unparseable)
    }

    /// An export is read on from the end of the last whole line read: a
    /// line still being written is read once whole, a file cut short is
    /// read from its start, and its broken lines are counted; Anthropic's
    /// cache writes come out of input as the store's do.
    #[test]
    fn an_export_is_read_on_from_its_last_whole_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("spans.jsonl");
        let first = anthropic_span("c1", "msg_1");
        let second = anthropic_span("c1", "msg_2");
        std::fs::write(&path, format!("{first}{}", &second[..40])).unwrap();
        let (writes, state, unparseable) = read_export(&path, &AgentState::default());
        assert_eq!((writes.len(), unparseable), (1, 0));
        let s = Some;
        assert_eq!(
            rows(Provider::Copilot, &writes),
            [("msg_1".into(), s(1200), s(500), s(300), s(220), None, s(2220))]
        );
        std::fs::write(
            &path,
            format!("{first}{second}{{\"spanId\":\"x\",\"attributes\":{{\"gen_ai.usage.input_tokens\":\n"),
        )
        .unwrap();
        let (writes, state, unparseable) = read_export(&path, &state);
        assert_eq!((writes.iter().map(|w| w.key.as_str()).collect::<Vec<_>>(), unparseable), (vec!["msg_2"], 1));
        assert!(read_export(&path, &state).0.is_empty(), "nothing new");
        std::fs::write(&path, &first).unwrap();
        assert_eq!(read_export(&path, &state).0.len(), 1, "cut short: read from its start");
        // A state an earlier reader kept (its lines' `{}`): read from the start.
        assert_eq!(read_export(&path, &AgentState(Some("{}".into()))).0.len(), 1);
    }

    /// A call both records keep counts once: the store's row, the export's
    /// span of a conversation the store holds left out; a conversation the
    /// store holds nothing of, and calls of one from before the store's
    /// first (an older CLI's), are read from the export.
    #[test]
    fn a_call_in_the_store_and_an_export_counts_once() {
        let (dir, path, db) = crate::ledger::agents::tests::database(store::DATABASE, store::tests::SCHEMA);
        db.execute_batch(
            "INSERT INTO sessions (id, cwd) VALUES ('f59adf6d', '/w');
             INSERT INTO assistant_usage_events (session_id, turn_index, model, input_tokens, output_tokens,
                 cache_read_tokens, cache_write_tokens, reasoning_tokens, api_endpoint, created_at)
             VALUES ('f59adf6d', 0, 'claude-sonnet-4-5', 2000, 220, 300, 500, NULL, '/v1/messages',
                 '2026-12-06T12:51:26.812Z');",
        )
        .unwrap();
        let export = dir.path().join("otel").join("copilot.jsonl");
        std::fs::create_dir_all(export.parent().unwrap()).unwrap();
        // A call of the conversation the store holds; one of it from before
        // the store's first (a CLI that kept no store then); one of another.
        let earlier = anthropic_span("f59adf6d", "msg_earlier").replace("[1796561486,824000000]", "[1796561400,0]");
        let spans = anthropic_span("f59adf6d", "msg_05b2f24eec2f") + &earlier + &anthropic_span("older", "msg_old");
        std::fs::write(&export, spans).unwrap();
        let (from_store, _, _) = read_export(&path, &AgentState::default());
        let (from_export, _, _) = read_export(&export, &AgentState::default());
        assert_eq!(from_export.iter().map(|w| w.key.as_str()).collect::<Vec<_>>(), ["msg_earlier", "msg_old"]);
        let mut all = from_store;
        all.extend(from_export);
        let s = Some;
        let at = bee_proto::time::parse_rfc3339_ms("2026-12-06T12:51:26.812Z").unwrap();
        assert_eq!(
            rows(Provider::Copilot, &all),
            [
                (store::key("f59adf6d", 1, at), s(1200), s(500), s(300), s(220), None, s(2220)),
                ("msg_earlier".into(), s(1200), s(500), s(300), s(220), None, s(2220)),
                ("msg_old".into(), s(1200), s(500), s(300), s(220), None, s(2220)),
            ]
        );
        // Without the store beside it, the export's span is read.
        std::fs::remove_file(&path).unwrap();
        assert_eq!(read_export(&export, &AgentState::default()).0.len(), 3);
    }

    /// An export's span whose cache parts exceed its input keeps no cache
    /// writes; its columns still add up.
    #[test]
    fn cache_writes_past_the_input_are_unknown() {
        let line = anthropic_span("c1", "msg_1")
            .replace("\"gen_ai.usage.input_tokens\":2000", "\"gen_ai.usage.input_tokens\":700");
        let (writes, unparseable) = crate::ledger::agents::tests::responses(Provider::Copilot, line.as_bytes());
        assert_eq!(unparseable, 0);
        let s = Some;
        assert_eq!(rows(Provider::Copilot, &writes), [("msg_1".into(), s(400), None, s(300), s(220), None, s(920))]);
    }
}
