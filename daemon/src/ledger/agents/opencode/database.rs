//! OpenCode's database: table `message`, one row a message, its `data`
//! JSON; one assistant message is one provider response, with the provider
//! and model asked for, its times (ms) and `tokens` {input, output,
//! reasoning, cache {read, write}, total}. Rows are read by `time_updated`,
//! OpenCode's own change marker: each pass reads the rows updated since
//! the newest it read (that instant again included, and a row read again
//! adds nothing twice).
//!
//! OpenCode keeps no provider id, and a fork copies every earlier message
//! into the new session under new ids with the same times and tokens, with
//! nothing linking copy to source. A response's key is therefore what a
//! copy keeps: its provider, model, creation and completion times (to the
//! millisecond) and its five counters, so the copy is the same response.

use bee_proto::ledger::Provider;
use bee_proto::usage::Counters;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::HashSet;
use std::path::Path;

use crate::ledger::agents::agent::WholeFileReader;
use crate::ledger::agents::lines::{
    Found, LastName, count, decode_state, encode_state, spelled, text, with_part, wrapped_agent,
};
use crate::ledger::agents::whole::open_read_only;
use crate::ledger::evidence::{AgentState, Evidence};

/// Longest `data` read of one message; a longer one is no response's.
const MAX_DATA_BYTES: usize = 1 << 20;

/// The reader of the `message` table of OpenCode's (or a fork's: Kilo)
/// database, its responses counted under the agent's name.
pub(crate) struct Messages(pub(crate) Provider);

/// What the reader keeps of the database where it stopped.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Resume {
    /// The newest `time_updated` read (ms).
    updated_ms: Option<i64>,
}

impl WholeFileReader for Messages {
    fn read(&self, path: &Path, state: &AgentState, out: &mut Vec<Evidence>) -> std::io::Result<(AgentState, u64)> {
        let mut resume: Resume = decode_state(state);
        read_messages(self.0, path, &mut resume, out).map_err(std::io::Error::other)?;
        Ok((encode_state(&resume), 0))
    }
}

fn read_messages(
    provider: Provider,
    path: &Path,
    resume: &mut Resume,
    out: &mut Vec<Evidence>,
) -> rusqlite::Result<()> {
    let connection = open_read_only(path)?;
    let mut statement = connection.prepare(
        "SELECT m.session_id, m.time_updated, m.data, s.directory
           FROM message m LEFT JOIN session s ON s.id = m.session_id
          WHERE m.time_updated >= ?1 ORDER BY m.time_updated",
    )?;
    let mut rows = statement.query([resume.updated_ms.unwrap_or(i64::MIN)])?;
    let (mut sessions, mut models) = (LastName::default(), LastName::default());
    let mut found = Found::new(provider, &mut sessions, &mut models, out);
    let mut named = HashSet::new();
    while let Some(row) = rows.next()? {
        let (Ok(session), Ok(updated)) = (row.get_ref(0)?.as_str(), row.get_ref(1)?.as_i64()) else { continue };
        resume.updated_ms = resume.updated_ms.max(Some(updated));
        let Ok(data) = row.get_ref(2)?.as_str() else { continue };
        if named.insert(session.to_owned()) {
            found.session(session, row.get_ref(3)?.as_str().ok());
        }
        if data.len() > MAX_DATA_BYTES {
            continue;
        }
        if let Ok(message) = serde_json::from_str::<Value>(data) {
            response(&message, session, &mut found);
        }
    }
    Ok(())
}

/// [`response`], with names of its own.
pub(super) fn read_message(session: &str, message: &Value, out: &mut Vec<Evidence>) {
    let (mut sessions, mut models) = (LastName::default(), LastName::default());
    response(message, session, &mut Found::new(Provider::OpenCode, &mut sessions, &mut models, out));
}

/// One assistant message, when it is a complete response: OpenCode writes
/// the row when the request starts and fills it in when it completes; a
/// failed request leaves zero tokens and an `error`.
fn response(message: &Value, session: &str, found: &mut Found<'_>) {
    if text(message, "/role") != Some("assistant") {
        return;
    }
    let (Some(created), Some(completed)) = (
        message.pointer("/time/created").and_then(Value::as_i64),
        message.pointer("/time/completed").and_then(Value::as_i64),
    ) else {
        return;
    };
    let Some(tokens) = message.get("tokens") else { return };
    let counters = counters(tokens);
    let served = [
        counters.input_tokens,
        counters.cache_creation_input_tokens,
        counters.cache_read_input_tokens,
        counters.output_tokens,
    ];
    if message.get("error").is_some() && served.iter().all(|counter| counter.unwrap_or(0) == 0) {
        return;
    }
    if !bee_proto::time::spells_as_rfc3339(created) {
        return;
    }
    let provider = text(message, "/providerID").unwrap_or("");
    if wrapped_agent(provider).is_some() {
        return;
    }
    let model = text(message, "/modelID");
    let spelled = spelled(&[
        counters.input_tokens,
        counters.output_tokens,
        counters.reasoning_output_tokens,
        counters.cache_read_input_tokens,
        counters.cache_creation_input_tokens,
    ]);
    let key = format!("{provider}\u{1f}{}\u{1f}{created}\u{1f}{completed}\u{1f}{spelled}", model.unwrap_or(""));
    found.response(key, session, created, model, counters);
}

/// OpenCode's `tokens`, in Anthropic's shape: input without either cache,
/// cache writes, cache reads; its output leaves out reasoning, which Bee
/// counts as part of output. The five add up to its `total`.
fn counters(tokens: &Value) -> Counters {
    let [input, output, reasoning, total] =
        ["/input", "/output", "/reasoning", "/total"].map(|at| count(tokens.pointer(at)));
    Counters {
        input_tokens: input,
        cache_creation_input_tokens: count(tokens.pointer("/cache/write")),
        cache_read_input_tokens: count(tokens.pointer("/cache/read")),
        output_tokens: with_part(output, reasoning),
        reasoning_output_tokens: reasoning,
        total_tokens: total,
        ..Counters::default()
    }
}
