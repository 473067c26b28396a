//! `beectl token estimate`: read and check the inputs here, count them in
//! beed (whose encoders are already built) or in-process when it is not
//! running, and print the one report both paths share.

use bee_daemon::rendered::Rendered;
use bee_daemon::tokens::encoders::{CountFailure, Encoders};
use bee_daemon::tokens::report::{self, Ask, Measured};
use bee_proto::tokens::{COMMAND_MILLIS, CountAnswer, CountRequest, Encoding, InputKind, TOKEN_COUNT_PATH};
use std::time::{Duration, Instant};

use crate::ask;
use crate::input;
use beectl::args::{EstimateArgs, Selection};

pub fn estimate(args: EstimateArgs) -> Rendered {
    let deadline = Instant::now() + Duration::from_millis(COMMAND_MILLIS);
    let inputs = match input::read_all(args.root.as_deref(), &args.selections, args.stdin_text.as_deref()) {
        Ok(inputs) => inputs,
        Err((code, ordinal)) => return report::failure(code, ordinal),
    };
    let measured: Vec<Measured> = inputs
        .iter()
        .map(|input| Measured {
            kind: match input.selection {
                Selection::File(_) => InputKind::File,
                Selection::Stdin => InputKind::Stdin,
            },
            utf8_bytes: input.text.len() as u64,
            utf16_units: bee_proto::text::utf16_units(&input.text),
        })
        .collect();
    let texts: Vec<String> = inputs.into_iter().map(|input| input.text).collect();
    let counts = count(args.encoding, &texts, deadline);
    let ask = Ask { encoding: args.encoding, calls: args.calls, output_budget: args.output_budget, limit: args.limit };
    match counts {
        Ok(counts) => report::complete(ask, &measured, &counts),
        Err(failure) => report::failure(failure.code, failure.input.map(|index| index as u64 + 1)),
    }
}

/// Each text's tokens in `encoding`: the heuristic here; an exact encoding
/// by beed (whose encoders are built) when it runs, else in-process.
pub fn count(encoding: Encoding, texts: &[String], deadline: Instant) -> Result<Vec<u64>, CountFailure> {
    match encoding {
        Encoding::Heuristic => Ok(texts.iter().map(|text| bee_proto::text::utf16_ceil_div4(text)).collect()),
        exact => ask_daemon(exact, texts, deadline).unwrap_or_else(|| {
            // Built once per process: the MCP server counts many times.
            static ENCODERS: std::sync::OnceLock<Encoders> = std::sync::OnceLock::new();
            ENCODERS.get_or_init(Encoders::default).count(exact, texts, deadline)
        }),
    }
}

/// beed's counts, or `None` when the counting must happen here.
fn ask_daemon(encoding: Encoding, texts: &[String], deadline: Instant) -> Option<Result<Vec<u64>, CountFailure>> {
    let left = deadline.saturating_duration_since(Instant::now());
    let request = CountRequest { encoding, inputs: texts.to_vec(), budget_millis: left.as_millis() as u64 };
    let body = serde_json::to_vec(&request).ok()?;
    let answer = ask::post(TOKEN_COUNT_PATH, body, left, "counting in-process")?;
    let answer: CountAnswer = serde_json::from_slice(&answer.body).ok()?;
    match (answer.counts, answer.error_code) {
        (Some(counts), None) if counts.len() == texts.len() => Some(Ok(counts)),
        (None, Some(code)) => Some(Err(CountFailure {
            code,
            input: answer.error_input_ordinal.and_then(|o| usize::try_from(o).ok()).map(|o| o.saturating_sub(1)),
        })),
        _ => None,
    }
}
