//! Artifacts: files a user stores on purpose (`beectl artifact add`),
//! content-addressed under `${BEE_HOME}/.bee/artifacts/` (`ID.bin`, 0600,
//! beside `ID.json`, its metadata with the sha256), and served back only
//! after the stored bytes verify against that sha256 — by `beectl artifact
//! get` and the MCP tools, which read and never write. Search and query
//! work on what is stored: exact line matches, and a declarative filter
//! over a JSON-lines artifact (nothing is executed).

use bee_proto::mcp::coded as error;
use bee_proto::tokens::TokenErrorCode;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::io::Read;
use std::path::{Path, PathBuf};

use crate::storage::path_rule;

/// The largest file stored.
pub const MAX_ARTIFACT_BYTES: u64 = 64 * 1024 * 1024;
/// An artifact's metadata file is read whole or refused.
const META_LIMIT: u64 = 64 * 1024;
/// The largest page `read_page` gives.
pub const MAX_PAGE_BYTES: u64 = 65_536;
/// The largest query.
pub const MAX_QUERY_BYTES: usize = 64 * 1024;
/// A matched line is shown up to this many bytes.
const MAX_LINE_SHOWN: usize = 1024;

/// An artifact's metadata.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Meta {
    pub id: String,
    pub sha256: String,
    pub bytes: u64,
    /// The file name it was added from.
    pub name: String,
    pub added_at_utc: String,
    /// Set when the artifact is the original of a compressed text
    /// (`bee_context_compress`): only such an artifact is recovered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compression: Option<CompressionRecord>,
}

/// What a compression of an artifact kept: metadata only.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompressionRecord {
    pub method: String,
    pub rate_percent: u32,
    pub original_tokens: u64,
    pub compressed_tokens: u64,
}

/// Why an artifact operation failed: a stable code and a sentence.
pub type ArtifactError = bee_proto::mcp::CodedError;

fn io(what: &Path, err: std::io::Error) -> ArtifactError {
    error("io", format!("{}: {err}", what.display()))
}

/// `${BEE_HOME}/.bee/artifacts`.
pub fn dir() -> Result<PathBuf, ArtifactError> {
    bee_proto::paths::bee_dir().map(|dir| dir.join("artifacts")).ok_or_else(|| error("io", bee_proto::paths::NO_HOME))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The sha256 of `bytes`, in hex.
pub fn sha256(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// An id as `add` gives it: 16 lowercase hex digits (the sha256's start).
fn check_id(id: &str) -> Result<(), ArtifactError> {
    if id.len() == 16 && id.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) {
        Ok(())
    } else {
        Err(error("invalid_usage", format!("{id:?} is not an artifact id (16 hex digits, as `artifact add` prints)")))
    }
}

/// Writes `bytes` to `path` atomically, 0600.
fn write_private(path: &Path, bytes: &[u8]) -> Result<(), ArtifactError> {
    crate::storage::files::write_private(path, bytes).map_err(|err| io(path, err))
}

/// Stores the regular file at `path` (links are not followed); the
/// artifact and whether it is new (the same content is stored once).
pub fn add(path: &Path) -> Result<(Meta, bool), ArtifactError> {
    let file = crate::storage::files::open_regular(path).map_err(|err| io(path, err))?;
    let mut bytes = Vec::new();
    file.take(MAX_ARTIFACT_BYTES + 1).read_to_end(&mut bytes).map_err(|err| io(path, err))?;
    if bytes.len() as u64 > MAX_ARTIFACT_BYTES {
        return Err(error("artifact_too_large", format!("{} is over {MAX_ARTIFACT_BYTES} bytes", path.display())));
    }
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    store(&bytes, name, None)
}

/// Stores `bytes` as an artifact named `name`; the artifact and whether it
/// is new. The same bytes are stored once: a second store answers the
/// first one's metadata.
pub fn store(
    bytes: &[u8],
    name: String,
    compression: Option<CompressionRecord>,
) -> Result<(Meta, bool), ArtifactError> {
    if bytes.len() as u64 > MAX_ARTIFACT_BYTES {
        return Err(error("artifact_too_large", format!("{name} is over {MAX_ARTIFACT_BYTES} bytes")));
    }
    let sha = sha256(bytes);
    let id = sha[..16].to_owned();
    let dir = dir()?;
    crate::storage::files::ensure_private_dir(&dir).map_err(|err| io(&dir, err))?;
    if let Ok(stored) = meta(&id) {
        if stored.sha256 == sha {
            return Ok((stored, false));
        }
        return Err(error("artifact_collision", format!("artifact {id} holds other content; not stored")));
    }
    let meta = Meta {
        id: id.clone(),
        sha256: sha,
        bytes: bytes.len() as u64,
        name,
        added_at_utc: bee_proto::time::now_rfc3339(),
        compression,
    };
    write_private(&dir.join(format!("{id}.bin")), bytes)?;
    let text = serde_json::to_vec(&meta).map_err(|err| error("io", err.to_string()))?;
    write_private(&dir.join(format!("{id}.json")), &text)?;
    Ok((meta, true))
}

fn meta(id: &str) -> Result<Meta, ArtifactError> {
    check_id(id)?;
    let text = match read_stored(&format!("{id}.json"), META_LIMIT) {
        Ok(text) => text,
        Err(TokenErrorCode::Missing) => {
            return Err(error("artifact_not_found", format!("no artifact {id}")));
        }
        Err(code) => return Err(refused(id, code)),
    };
    serde_json::from_slice::<Meta>(&text)
        .ok()
        .filter(|meta| meta.id == id)
        .ok_or_else(|| error("artifact_corrupt", format!("artifact {id}: its metadata is damaged")))
}

/// A file of the artifact store, by the one path rule (`storage::path_rule`)
/// under the store's directory: no link, a regular file, within `limit`.
fn read_stored(name: &str, limit: u64) -> Result<Vec<u8>, TokenErrorCode> {
    let dir = dir().map_err(|_| TokenErrorCode::RootInvalid)?;
    let dir = std::fs::canonicalize(&dir).map_err(|_| TokenErrorCode::Missing)?;
    path_rule::read_under(&path_rule::physical_root(&dir)?, name, limit)
}

fn refused(id: &str, code: TokenErrorCode) -> ArtifactError {
    error("io", format!("artifact {id}: {}", path_rule::refusal(code)))
}

/// Every stored artifact's metadata, oldest first.
pub fn list() -> Result<Vec<Meta>, ArtifactError> {
    let dir = dir()?;
    let entries = match std::fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(err) => return Err(io(&dir, err)),
    };
    let mut found: Vec<Meta> = entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str().and_then(|n| n.strip_suffix(".json")).map(str::to_owned))
        .filter_map(|id| meta(&id).ok())
        .collect();
    found.sort_by(|a, b| a.added_at_utc.cmp(&b.added_at_utc).then_with(|| a.id.cmp(&b.id)));
    Ok(found)
}

/// An artifact's bytes, verified against its sha256 (`artifact_corrupt`
/// when they do not match: never served).
pub fn load(id: &str) -> Result<(Meta, Vec<u8>), ArtifactError> {
    let meta = meta(id)?;
    let bytes = read_stored(&format!("{id}.bin"), MAX_ARTIFACT_BYTES).map_err(|code| match code {
        TokenErrorCode::Missing => error("artifact_corrupt", format!("artifact {id}: its bytes are gone")),
        code => refused(id, code),
    })?;
    if bytes.len() as u64 != meta.bytes || sha256(&bytes) != meta.sha256 {
        return Err(error(
            "artifact_corrupt",
            format!("artifact {id}: the stored bytes do not match its sha256 {}; not served", meta.sha256),
        ));
    }
    Ok((meta, bytes))
}

/// One page of an artifact's verified bytes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Page {
    pub id: String,
    pub source_sha256: String,
    pub source_bytes: u64,
    pub offset_bytes: u64,
    /// Where the next page starts; `null` at the end.
    pub next_offset_bytes: Option<u64>,
    pub base64: String,
}

/// `length` bytes (1..65536) from `offset` of artifact `id`.
pub fn read_page(id: &str, offset: u64, length: u64) -> Result<Page, ArtifactError> {
    if !(1..=MAX_PAGE_BYTES).contains(&length) {
        return Err(error("invalid_usage", format!("lengthBytes: 1..{MAX_PAGE_BYTES}")));
    }
    let (meta, bytes) = load(id)?;
    if offset > meta.bytes {
        return Err(error("invalid_usage", format!("offsetBytes {offset} is past the end ({} bytes)", meta.bytes)));
    }
    let end = offset.saturating_add(length).min(meta.bytes);
    let page = &bytes[offset as usize..end as usize];
    use base64::Engine as _;
    Ok(Page {
        id: meta.id,
        source_sha256: meta.sha256,
        source_bytes: meta.bytes,
        offset_bytes: offset,
        next_offset_bytes: (end < meta.bytes).then_some(end),
        base64: base64::engine::general_purpose::STANDARD.encode(page),
    })
}

/// One line that holds the searched text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LineMatch {
    pub id: String,
    /// 1-based.
    pub line: u64,
    /// The line, up to 1 KiB (`truncated` says when it was longer).
    pub text: String,
    pub truncated: bool,
}

/// `search`'s answer: the total before paging, then the page.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchAnswer {
    pub total: u64,
    pub offset: u64,
    pub matches: Vec<LineMatch>,
    /// Artifacts not searched because their bytes do not verify.
    pub corrupt: Vec<String>,
}

/// Lines of every stored artifact that contain `text` exactly (bytes as
/// UTF-8; lines that are not are skipped), in artifact then line order.
pub fn search(text: &str, limit: u64, offset: u64) -> Result<SearchAnswer, ArtifactError> {
    if text.is_empty() {
        return Err(error("invalid_usage", "text: give something to look for"));
    }
    let mut answer = SearchAnswer { total: 0, offset, matches: Vec::new(), corrupt: Vec::new() };
    for meta in list()? {
        let bytes = match load(&meta.id) {
            Ok((_, bytes)) => bytes,
            Err(err) if err.code == "artifact_corrupt" => {
                answer.corrupt.push(meta.id);
                continue;
            }
            Err(err) => return Err(err),
        };
        for (index, line) in bytes.split(|b| *b == b'\n').enumerate() {
            let Ok(line) = std::str::from_utf8(line) else { continue };
            if !line.contains(text) {
                continue;
            }
            answer.total += 1;
            if answer.total > offset && (answer.matches.len() as u64) < limit {
                let mut end = line.len().min(MAX_LINE_SHOWN);
                while !line.is_char_boundary(end) {
                    end -= 1;
                }
                answer.matches.push(LineMatch {
                    id: meta.id.clone(),
                    line: index as u64 + 1,
                    text: line[..end].to_owned(),
                    truncated: end < line.len(),
                });
            }
        }
    }
    Ok(answer)
}

/// A declarative filter over a JSON-lines artifact.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Query {
    #[serde(default, rename = "where")]
    pub conditions: Vec<Condition>,
    #[serde(default)]
    pub select: Vec<String>,
    pub limit: Option<u64>,
    #[serde(default)]
    pub offset: u64,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Condition {
    pub path: String,
    pub op: Op,
    #[serde(default)]
    pub value: Value,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Op {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Contains,
    Exists,
}

/// `query`'s answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct QueryAnswer {
    pub id: String,
    pub source_sha256: String,
    /// Records that matched, before paging.
    pub total: u64,
    pub offset: u64,
    pub rows: Vec<Value>,
    /// Lines that are not JSON (counted, never matched).
    pub unparseable_lines: u64,
}

/// Parses a query (at most 64 KiB of JSON).
pub fn parse_query(text: &str) -> Result<Query, ArtifactError> {
    if text.len() > MAX_QUERY_BYTES {
        return Err(error("query_too_large", format!("queryJson is {} bytes; at most {MAX_QUERY_BYTES}", text.len())));
    }
    let query: Query = serde_json::from_str(text).map_err(|err| error("query_invalid", format!("queryJson: {err}")))?;
    if let Some(bad) =
        query.conditions.iter().find(|c| c.op == Op::Exists && !matches!(c.value, Value::Null | Value::Bool(_)))
    {
        return Err(error(
            "query_invalid",
            format!("queryJson: exists on {:?} takes true, false or no value", bad.path),
        ));
    }
    Ok(query)
}

fn at<'a>(value: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.').try_fold(value, |value, key| match value {
        Value::Object(map) => map.get(key),
        Value::Array(items) => key.parse::<usize>().ok().and_then(|i| items.get(i)),
        _ => None,
    })
}

fn order(a: &Value, b: &Value) -> Option<std::cmp::Ordering> {
    match (a, b) {
        (Value::Number(a), Value::Number(b)) => a.as_f64()?.partial_cmp(&b.as_f64()?),
        (Value::String(a), Value::String(b)) => Some(a.cmp(b)),
        _ => None,
    }
}

fn holds(record: &Value, condition: &Condition) -> bool {
    let found = at(record, &condition.path);
    match condition.op {
        // `"value": false` asks for records without the path; true (or no
        // value) for records with it.
        Op::Exists => found.is_some() != (condition.value == Value::Bool(false)),
        Op::Eq => found == Some(&condition.value),
        Op::Ne => found != Some(&condition.value),
        Op::Contains => match (found, &condition.value) {
            (Some(Value::String(text)), Value::String(part)) => text.contains(part.as_str()),
            (Some(Value::Array(items)), value) => items.contains(value),
            _ => false,
        },
        Op::Lt | Op::Le | Op::Gt | Op::Ge => {
            let Some(ordering) = found.and_then(|found| order(found, &condition.value)) else { return false };
            match condition.op {
                Op::Lt => ordering.is_lt(),
                Op::Le => ordering.is_le(),
                Op::Gt => ordering.is_gt(),
                _ => ordering.is_ge(),
            }
        }
    }
}

/// The records of JSON-lines artifact `id` that meet every condition, each
/// projected to `select` (whole when empty), paged.
pub fn query(id: &str, query: &Query) -> Result<QueryAnswer, ArtifactError> {
    let (meta, bytes) = load(id)?;
    Ok(filter(query, &bytes, meta))
}

/// [`query`] over JSON lines already verified.
pub fn filter(query: &Query, bytes: &[u8], meta: Meta) -> QueryAnswer {
    let limit = query.limit.unwrap_or(100);
    let mut answer = QueryAnswer {
        id: meta.id,
        source_sha256: meta.sha256,
        total: 0,
        offset: query.offset,
        rows: Vec::new(),
        unparseable_lines: 0,
    };
    for line in bytes.split(|b| *b == b'\n').filter(|line| !line.iter().all(u8::is_ascii_whitespace)) {
        let Ok(record) = serde_json::from_slice::<Value>(line) else {
            answer.unparseable_lines += 1;
            continue;
        };
        if !query.conditions.iter().all(|condition| holds(&record, condition)) {
            continue;
        }
        answer.total += 1;
        if answer.total <= query.offset || answer.rows.len() as u64 >= limit {
            continue;
        }
        let row = if query.select.is_empty() {
            record
        } else {
            Value::Object(
                query
                    .select
                    .iter()
                    .map(|path| (path.clone(), at(&record, path).cloned().unwrap_or(Value::Null)))
                    .collect(),
            )
        };
        answer.rows.push(row);
    }
    answer
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn conditions_filter_and_select_projects() {
        let record = json!({"a": {"b": 3, "name": "alpha"}, "tags": ["x", "y"]});
        let condition = |path: &str, op: Op, value: Value| Condition { path: path.into(), op, value };
        assert!(holds(&record, &condition("a.b", Op::Eq, json!(3))));
        assert!(holds(&record, &condition("a.b", Op::Gt, json!(2.5))));
        assert!(!holds(&record, &condition("a.b", Op::Lt, json!("3"))), "no order across types");
        assert!(holds(&record, &condition("a.name", Op::Contains, json!("lph"))));
        assert!(holds(&record, &condition("tags", Op::Contains, json!("y"))));
        assert!(holds(&record, &condition("tags.1", Op::Eq, json!("y"))));
        assert!(holds(&record, &condition("a.missing", Op::Ne, json!(1))));
        assert!(!holds(&record, &condition("a.missing", Op::Exists, Value::Null)));
        assert!(holds(&record, &condition("a.missing", Op::Exists, json!(false))), "value false: absent");
        assert!(!holds(&record, &condition("a.b", Op::Exists, json!(false))));
        assert!(holds(&record, &condition("a.b", Op::Exists, json!(true))));
        assert_eq!(
            parse_query(r#"{"where":[{"path":"a","op":"exists","value":3}]}"#).unwrap_err().code,
            "query_invalid"
        );
        assert!(parse_query(r#"{"where":[{"path":"a","op":"like","value":1}]}"#).is_err());
        assert!(parse_query(r#"{"sql":"select 1"}"#).is_err(), "a filter, no code");
        assert_eq!(parse_query(&" ".repeat(MAX_QUERY_BYTES + 1)).unwrap_err().code, "query_too_large");
    }

    #[test]
    fn ids_are_sixteen_hex_digits() {
        assert!(check_id("0123456789abcdef").is_ok());
        for bad in ["../etc/passwd", "0123456789ABCDEF", "0123", "0123456789abcdefg"] {
            assert_eq!(check_id(bad).unwrap_err().code, "invalid_usage", "{bad}");
        }
    }
}
