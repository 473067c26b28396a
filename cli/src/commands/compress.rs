//! `beectl compress enable | disable | status | prose` and the MCP tools
//! `bee_context_compress` / `bee_compression_recover`: local prose
//! compression (the method is the daemon library's), off until enabled.
//! The original is kept as an artifact and recovered only after its sha256
//! verifies.

use bee_daemon::context::artifacts::{self, CompressionRecord};
use bee_daemon::context::compression::{self, CompressionError};
use bee_daemon::rendered::Rendered;
use bee_proto::delivery::CommandError;
use bee_proto::exit::Exit;

use crate::render::budgeted::{budget, within};
use serde::Serialize;
use std::io::Read;

/// What the answers say every time something was dropped.
const LABELS: [&str; 2] = [
    "extractive: the kept words are the original's, in order; what was dropped may have mattered",
    "the original is stored as an artifact; bee_compression_recover gives it back whole",
];

fn failure(code: &str, message: impl Into<String>) -> Rendered {
    if code == "invalid_usage" {
        return Rendered::invalid_usage(message);
    }
    Rendered::json(Exit::Unavailable, &CommandError::unavailable(code, message))
}

fn from(err: CompressionError) -> Rendered {
    failure(err.code, err.message)
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Status {
    schema_version: u32,
    enabled: bool,
    config: String,
    method: &'static str,
}

/// `beectl compress status`.
pub fn status() -> Rendered {
    let enabled = match compression::enabled() {
        Ok(enabled) => enabled,
        Err(err) => return from(err),
    };
    let config = bee_proto::paths::config_file().map(|p| p.display().to_string()).unwrap_or_default();
    Rendered::json(Exit::Success, &Status { schema_version: 1, enabled, config, method: compression::METHOD })
}

/// `beectl compress enable | disable`: `[compression] enabled` in
/// config.toml, the rest of the file as it was.
pub fn set(enabled: bool) -> Rendered {
    let Some(path) = bee_proto::paths::config_file() else {
        return failure("io", bee_proto::paths::NO_HOME);
    };
    let before = match crate::setup::file_change::FileChange::read(&path) {
        Ok(before) => before,
        Err(message) => return failure("io", message),
    };
    let text = before.clone().unwrap_or_default();
    let mut document: toml_edit::DocumentMut = match text.parse() {
        Ok(document) => document,
        Err(err) => return failure("config_invalid", format!("{}: {err}", path.display())),
    };
    let table = document.entry("compression").or_insert_with(|| toml_edit::Item::Table(toml_edit::Table::new()));
    let Some(table) = table.as_table_like_mut() else {
        return failure("config_invalid", format!("{}: `compression` is not a table", path.display()));
    };
    table.insert("enabled", toml_edit::value(enabled));
    if let Some(dir) = path.parent()
        && let Err(err) = bee_daemon::storage::files::ensure_private_dir(dir)
    {
        return failure("io", format!("{}: {err}", dir.display()));
    }
    let change =
        crate::setup::file_change::FileChange { path: path.clone(), before, after: Some(document.to_string()) };
    if let Err(err) = change.write(false) {
        return failure("io", format!("{}: {err}", path.display()));
    }
    status()
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Answer<'a> {
    schema_version: u32,
    compressed: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<String>,
    original_sha256: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    method: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    rate_percent: Option<u32>,
    original_tokens: usize,
    compressed_tokens: usize,
    /// The share of tokens kept, in percent, one decimal.
    #[serde(skip_serializing_if = "Option::is_none")]
    achieved_rate_percent: Option<f64>,
    semantic_risk: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    dropped_words: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    dropped_sentences: Option<usize>,
    text: &'a str,
    labels: Vec<&'static str>,
}

/// `bee_context_compress` (and `beectl compress prose`): off, the text as
/// given; on, the kept share, the original stored as an artifact.
pub fn compress(text: &str, content_kind: &str, rate_percent: u32, budget_bytes: Option<u64>) -> Rendered {
    let budget = match budget(budget_bytes) {
        Ok(budget) => budget,
        Err(rendered) => return rendered,
    };
    let enabled = match compression::enabled() {
        Ok(enabled) => enabled,
        Err(err) => return from(err),
    };
    let original_sha256 = artifacts::sha256(text.as_bytes());
    if !enabled {
        let tokens = match compression::tokens(text) {
            Ok(tokens) => tokens,
            Err(err) => return from(err),
        };
        let answer = Answer {
            schema_version: 1,
            compressed: false,
            reason: Some("compression is off (beectl compress enable turns it on)"),
            id: None,
            original_sha256,
            method: None,
            rate_percent: None,
            original_tokens: tokens,
            compressed_tokens: tokens,
            achieved_rate_percent: None,
            semantic_risk: false,
            dropped_words: None,
            dropped_sentences: None,
            text,
            labels: Vec::new(),
        };
        return within(&answer, budget);
    }
    if content_kind != "prose" {
        return failure(
            "unsupported_content_kind",
            format!("contentKind {content_kind:?}: only \"prose\" is compressed (code, data and logs are not)"),
        );
    }
    let compressed = match compression::compress(text, rate_percent) {
        Ok(compressed) => compressed,
        Err(err) => return from(err),
    };
    let record = CompressionRecord {
        method: compression::METHOD.to_owned(),
        rate_percent,
        original_tokens: compressed.original_tokens as u64,
        compressed_tokens: compressed.kept_tokens as u64,
    };
    let (meta, _) = match artifacts::store(text.as_bytes(), "compressed-prose-original.txt".to_owned(), Some(record)) {
        Ok(stored) => stored,
        Err(err) => return failure(err.code, err.message),
    };
    let dropped = compressed.dropped_words > 0;
    let achieved = if compressed.original_tokens == 0 {
        100.0
    } else {
        (compressed.kept_tokens as f64 * 1000.0 / compressed.original_tokens as f64).round() / 10.0
    };
    let answer = Answer {
        schema_version: 1,
        compressed: true,
        reason: None,
        id: Some(meta.id),
        original_sha256,
        method: Some(compression::METHOD),
        rate_percent: Some(rate_percent),
        original_tokens: compressed.original_tokens,
        compressed_tokens: compressed.kept_tokens,
        achieved_rate_percent: Some(achieved),
        semantic_risk: dropped,
        dropped_words: Some(compressed.dropped_words),
        dropped_sentences: Some(compressed.dropped_sentences),
        text: &compressed.text,
        labels: if dropped { LABELS.to_vec() } else { LABELS[1..].to_vec() },
    };
    within(&answer, budget)
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Recovered {
    schema_version: u32,
    id: String,
    sha256: String,
    verified: bool,
    bytes: u64,
    text: String,
}

/// `bee_compression_recover`: the exact original of a compression, after
/// its sha256 verifies.
pub fn recover(id: &str, budget_bytes: Option<u64>) -> Rendered {
    let budget = match budget(budget_bytes) {
        Ok(budget) => budget,
        Err(rendered) => return rendered,
    };
    let (meta, bytes) = match artifacts::load(id) {
        Ok(loaded) => loaded,
        Err(err) => return failure(err.code, err.message),
    };
    if meta.compression.is_none() {
        return failure(
            "not_a_compression_original",
            format!("artifact {id} is not the original of a compression (bee_artifact_read reads any artifact)"),
        );
    }
    let text = match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(_) => return failure("artifact_corrupt", format!("artifact {id}: the original is not UTF-8")),
    };
    within(
        &Recovered { schema_version: 1, id: meta.id, sha256: meta.sha256, verified: true, bytes: meta.bytes, text },
        budget,
    )
}

/// `beectl compress prose [FILE]`: the text of FILE (or standard input).
pub fn prose(file: Option<&str>, rate_percent: u32, budget_bytes: Option<u64>) -> Rendered {
    let limit = compression::MAX_INPUT_BYTES as u64;
    let mut bytes = Vec::new();
    let read = match file {
        None | Some("-") => std::io::stdin().lock().take(limit + 1).read_to_end(&mut bytes),
        Some(path) => std::fs::File::open(path).and_then(|f| f.take(limit + 1).read_to_end(&mut bytes)),
    };
    if let Err(err) = read {
        return failure("io", format!("{}: {err}", file.unwrap_or("standard input")));
    }
    if bytes.len() as u64 > limit {
        return failure("input_too_large", format!("the text is over {limit} bytes (64 KiB)"));
    }
    match String::from_utf8(bytes) {
        Ok(text) => compress(&text, "prose", rate_percent, budget_bytes),
        Err(err) => failure("not_utf8", format!("the text is not UTF-8: {err}")),
    }
}
