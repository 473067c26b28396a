//! Artifact queries (`bee_artifact_query`'s `queryJson`) and the JSON lines
//! they filter never panic: the first line is the query, the rest the
//! records; every row returned met the query, and no more than its limit.
#![no_main]

use bee_daemon::context::artifacts::{Meta, filter, parse_query};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let split = data.iter().position(|b| *b == b'\n').unwrap_or(data.len());
    let Ok(text) = std::str::from_utf8(&data[..split]) else { return };
    let Ok(query) = parse_query(text) else { return };
    let meta = Meta { id: "0".repeat(16), sha256: String::new(), bytes: 0, name: String::new(), added_at_utc: String::new(), compression: None };
    let records = data.get(split + 1..).unwrap_or_default();
    let answer = filter(&query, records, meta);
    assert!(answer.rows.len() as u64 <= query.limit.unwrap_or(100));
    assert!(answer.rows.len() as u64 <= answer.total.saturating_sub(query.offset));
});
