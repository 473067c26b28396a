//! `beectl repr encode | decode` and their MCP twins: JSON values as a
//! `bee-json-v1` packet and back (the codec is the daemon library's), with
//! the measured size of both forms: bytes, and exact o200k tokens.

use bee_daemon::context::representation::{self, ReprError};
use bee_daemon::rendered::Rendered;
use bee_proto::delivery::CommandError;
use bee_proto::exit::Exit;
use bee_proto::mcp::REPRESENTATION_INPUT_BYTES;

use crate::render::budgeted::{budget, within};
use bee_proto::tokens::{COMMAND_MILLIS, Encoding};
use serde::Serialize;
use serde_json::value::RawValue;
use std::io::Read;
use std::time::{Duration, Instant};

/// The one representation there is.
const ENCODING: &str = representation::MAGIC;
/// What a packet is when `bee-json-v1` would cost more tokens: compact JSON.
const JSON_FALLBACK: &str = "json";

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Encoded {
    schema_version: u32,
    /// `bee-json-v1`, or `json` when that would have cost more o200k
    /// tokens than compact JSON: the packet is then the compact JSON itself
    /// (a result never costs more than the form it replaces).
    encoding: &'static str,
    fallback: bool,
    /// Whether the input held several values (JSON lines).
    sequence: bool,
    values: usize,
    packet: String,
    json_bytes: usize,
    packet_bytes: usize,
    tokenizer: &'static str,
    json_tokens: u64,
    packet_tokens: u64,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Decoded {
    schema_version: u32,
    encoding: &'static str,
    sequence: bool,
    /// Each value as compact JSON, its numbers spelled as the packet has them.
    values: Vec<Box<RawValue>>,
    json_bytes: usize,
}

fn failure(code: &str, message: impl Into<String>) -> Rendered {
    Rendered::json(Exit::Unavailable, &CommandError::unavailable(code, message))
}

fn from(err: ReprError) -> Rendered {
    failure(err.code, err.message)
}

/// The input text: `FILE`, or standard input for `-` or none; at most
/// [`REPRESENTATION_INPUT_BYTES`], UTF-8.
pub fn read_input(file: Option<&str>) -> Result<String, Rendered> {
    let limit = REPRESENTATION_INPUT_BYTES as u64;
    let mut bytes = Vec::new();
    let read = match file {
        None | Some("-") => std::io::stdin().lock().take(limit + 1).read_to_end(&mut bytes),
        Some(path) => std::fs::File::open(path).and_then(|f| f.take(limit + 1).read_to_end(&mut bytes)),
    };
    if let Err(err) = read {
        return Err(failure("io", format!("{}: {err}", file.unwrap_or("standard input"))));
    }
    checked_text(bytes)
}

/// `bytes` as text within the input limit.
pub fn checked_text(bytes: Vec<u8>) -> Result<String, Rendered> {
    if bytes.len() > REPRESENTATION_INPUT_BYTES {
        return Err(failure(
            "input_too_large",
            format!("the input is over {REPRESENTATION_INPUT_BYTES} bytes (256 KiB)"),
        ));
    }
    String::from_utf8(bytes).map_err(|err| failure("not_utf8", format!("the input is not UTF-8: {err}")))
}

/// `beectl repr encode`: the packet for the JSON value(s) in `text`.
pub fn encode(text: &str, encoding: Option<&str>, budget_bytes: Option<u64>) -> Rendered {
    let budget = match budget(budget_bytes) {
        Ok(budget) => budget,
        Err(rendered) => return rendered,
    };
    if let Some(other) = encoding.filter(|e| *e != ENCODING) {
        return failure("unsupported_encoding", format!("{other:?}: the one encoding is {ENCODING}"));
    }
    if text.len() > REPRESENTATION_INPUT_BYTES {
        return failure("input_too_large", format!("the input is over {REPRESENTATION_INPUT_BYTES} bytes (256 KiB)"));
    }
    let values = match representation::parse_json_values(text) {
        Ok(values) => values,
        Err(err) => return from(err),
    };
    let sequence = values.len() != 1;
    let packet = match representation::encode(&values, sequence) {
        Ok(packet) => packet,
        Err(err) => return from(err),
    };
    let json = values.iter().map(representation::to_json).collect::<Vec<_>>().join("\n");
    let deadline = Instant::now() + Duration::from_millis(COMMAND_MILLIS);
    let counts = match crate::commands::token::count(Encoding::O200kBase, &[json.clone(), packet.clone()], deadline) {
        Ok(counts) => counts,
        Err(_) => return failure("encoding_unavailable", "the o200k_base counts could not be made"),
    };
    // Small or irregular values can cost more as a packet (its header
    // line alone is tokens): then the packet is the compact JSON, marked so.
    let fallback = counts[1] > counts[0];
    let (encoding, packet, packet_tokens) =
        if fallback { (JSON_FALLBACK, json.clone(), counts[0]) } else { (ENCODING, packet, counts[1]) };
    let answer = Encoded {
        schema_version: 1,
        encoding,
        fallback,
        sequence,
        values: values.len(),
        json_bytes: json.len(),
        packet_bytes: packet.len(),
        packet,
        tokenizer: "o200k_base",
        json_tokens: counts[0],
        packet_tokens,
    };
    within(&answer, budget)
}

/// `beectl repr decode`: the exact JSON values a packet carries — a
/// `bee-json-v1` packet, or the compact JSON an encode fell back to.
pub fn decode(packet: &str, budget_bytes: Option<u64>) -> Rendered {
    let budget = match budget(budget_bytes) {
        Ok(budget) => budget,
        Err(rendered) => return rendered,
    };
    if packet.len() > REPRESENTATION_INPUT_BYTES {
        return failure("input_too_large", format!("the packet is over {REPRESENTATION_INPUT_BYTES} bytes (256 KiB)"));
    }
    let (encoding, decoded) = if packet.starts_with(representation::MAGIC) {
        (ENCODING, representation::decode(packet, budget))
    } else {
        // An encode's fallback: the JSON value(s) themselves.
        let values = representation::parse_json_values(packet).map_err(|_| ReprError {
            code: "invalid_packet",
            message: format!("neither a {ENCODING} packet nor the compact JSON an encode falls back to"),
        });
        (
            JSON_FALLBACK,
            values.map(|values| {
                let sequence = values.len() != 1;
                (values, sequence)
            }),
        )
    };
    let (values, sequence) = match decoded {
        Ok(decoded) => decoded,
        Err(err) => return from(err),
    };
    let texts: Vec<String> = values.iter().map(representation::to_json).collect();
    let json_bytes = texts.iter().map(String::len).sum::<usize>() + texts.len().saturating_sub(1);
    let values = match texts.into_iter().map(RawValue::from_string).collect::<Result<Vec<_>, _>>() {
        Ok(values) => values,
        Err(err) => return failure("io", err.to_string()),
    };
    within(&Decoded { schema_version: 1, encoding, sequence, values, json_bytes }, budget)
}
