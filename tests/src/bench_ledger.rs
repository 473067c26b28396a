//! The benches' ledger of a million responses from every agent Bee reads
//! (20,000 sessions, several models each, over the last 30 days), written
//! straight into a test home's store and settled.

use bee_daemon::ledger::stored::evidence::Evidence;
use bee_daemon::ledger::stored::responses::ResponseWrite;
use bee_daemon::ledger::stored::store::Ledger;
use bee_proto::ledger::{OwnUnit, Provider};
use bee_proto::usage::Counters;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use crate::{TestHome, xorshift};

/// Responses in the ledger.
pub const RESPONSES: u64 = 1_000_000;
const SESSIONS: u64 = 20_000;
const MODELS: [&str; 6] = [
    "claude-sonnet-4-5-20250929",
    "anthropic/claude-sonnet-4-5",
    "gpt-5-codex",
    "gemini-2.5-pro",
    "qwen3-coder-plus",
    "glm-4.6",
];

/// A final response as beed appends one from a log, its counters of a
/// busy session's sizes drawn from `random`.
pub fn response(
    provider: Provider,
    key: String,
    session: String,
    at_ms: i64,
    model: &str,
    own_figure: Option<f64>,
    random: &mut impl FnMut() -> u64,
) -> Evidence {
    Evidence::Response(ResponseWrite {
        provider,
        key,
        session_id: Some(session.into()),
        at_ms,
        model: Some(model.into()),
        tokens: Counters {
            input_tokens: Some(random() % 5_000),
            cache_creation_input_tokens: Some(random() % 500),
            cache_read_input_tokens: Some(random() % 50_000),
            output_tokens: Some(random() % 900),
            ..Counters::default()
        },
        context_tokens: None,
        context_window: None,
        is_final: true,
        own_figure,
        copied: false,
    })
}

/// Writes the million responses into `home`'s ledger and settles it,
/// saying how long each took.
#[allow(clippy::print_stdout, clippy::unwrap_used)]
pub fn million_responses(home: &TestHome) {
    let dir = home.bee_dir().join("usage").join("ledger-v1");
    let mut ledger = Ledger::open(&dir).unwrap();
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis() as u64;
    let month = 30 * 24 * 3_600_000u64;
    let mut random = xorshift(0x51f1_5eed_0dd5_1234);
    let started = Instant::now();
    let batch_size = 20_000;
    for batch in 0..RESPONSES / batch_size {
        let writes: Vec<Evidence> = (0..batch_size)
            .map(|n| {
                let session = random() % SESSIONS;
                // A session is one agent's: the agent follows from it.
                let provider = Provider::ALL[(session % Provider::ALL.len() as u64) as usize];
                let at = now - 1_000 - (session * 7_919_000 + random() % 3_600_000) % (month - 3_600_000);
                let model = MODELS[((session + random() % 2) % MODELS.len() as u64) as usize];
                // A cost of its own, where the agent's own figure is one.
                let own_figure =
                    Some(0.001).filter(|_| session.is_multiple_of(3) && provider.own_unit() == OwnUnit::Usd);
                let session = format!("{}-session-{session:05}", provider.as_str());
                response(provider, format!("r{batch}-{n}"), session, at as i64, model, own_figure, &mut random)
            })
            .collect();
        ledger.append_at(&writes, &[]).unwrap();
    }
    let written = started.elapsed();
    let started = Instant::now();
    ledger.settle();
    println!(
        "\n{RESPONSES} responses of {} agents in {SESSIONS} sessions written in {:.1} s, settled in {:.1} s",
        Provider::ALL.len(),
        written.as_secs_f64(),
        started.elapsed().as_secs_f64()
    );
    drop(ledger);
}
