//! The tools' input schemas as an agent needs them: each optional field a
//! single type (absent means the default; `["integer","null"]` is less
//! portable, and clients that map schemas onto one-type dialects drop it),
//! each integer's real minimum and maximum (the `a..b` its description
//! states, written once there), and each word-valued field's words as an
//! enum; and a call whose arguments miss the schema answered as the
//! server's other tool errors are.

use bee_proto::ledger::{Provider, UsageGrouping};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::{CallToolResponse, CallToolResult};
use rmcp::service::RoleServer;
use serde_json::{Map, Value, json};
use std::sync::Arc;

/// Every route of `router` with its input schema tightened.
pub fn tighten<S>(router: &mut ToolRouter<S>) {
    for route in router.map.values_mut() {
        let mut schema = (*route.attr.input_schema).clone();
        tighten_schema(&route.attr.name, &mut schema);
        route.attr.input_schema = Arc::new(schema);
    }
}

/// The words a field of a tool takes (`None`: any text).
fn words(tool: &str, property: &str) -> Option<Vec<String>> {
    let listed = |words: &[&str]| Some(words.iter().map(|w| (*w).to_owned()).collect());
    match (tool, property) {
        (_, "provider" | "agent") => Some(Provider::ALL.iter().map(|p| p.as_str().to_owned()).collect()),
        ("bee_usage", "by") => Some(UsageGrouping::ALL.iter().map(|g| g.as_str().to_owned()).collect()),
        ("bee_usage", "thenBy") => Some(
            UsageGrouping::ALL.iter().filter(|g| **g != UsageGrouping::Block).map(|g| g.as_str().to_owned()).collect(),
        ),
        ("bee_usage", "order") => listed(&["asc", "desc"]),
        ("bee_quota", "window") => listed(&["5h", "24h", "7d"]),
        ("bee_token_estimate", "encoding") => listed(&["heuristic", "o200k_base", "cl100k_base"]),
        ("bee_representation_encode", "encoding") => listed(&["bee-json-v1"]),
        ("bee_context_compress", "contentKind") => listed(&["prose"]),
        _ => None,
    }
}

fn tighten_schema(tool: &str, schema: &mut Map<String, Value>) {
    let Some(Value::Object(properties)) = schema.get_mut("properties") else { return };
    for (name, property) in properties.iter_mut() {
        let Value::Object(property) = property else { continue };
        // `["integer", "null"]` → `"integer"`: absent is the default.
        if let Some(Value::Array(types)) = property.get("type") {
            let kinds: Vec<Value> = types.iter().filter(|t| *t != "null").cloned().collect();
            if let [only] = kinds.as_slice() {
                property.insert("type".to_owned(), only.clone());
            }
        }
        let kind = property.get("type").and_then(Value::as_str).unwrap_or_default().to_owned();
        let description = property.get("description").and_then(Value::as_str).unwrap_or_default().to_owned();
        if kind == "integer"
            && let Some((low, high)) = stated_range(&description)
        {
            property.insert("minimum".to_owned(), json!(low));
            property.insert("maximum".to_owned(), json!(high));
        }
        if kind == "string"
            && let Some(words) = words(tool, name)
        {
            property.insert("enum".to_owned(), json!(words));
        }
    }
}

/// The first `LOW..HIGH` a description states (digits, `,` and `_` allowed).
fn stated_range(description: &str) -> Option<(u64, u64)> {
    let number = |text: &str| -> Option<u64> {
        let digits: String = text.chars().filter(|c| *c != ',' && *c != '_').collect();
        digits.parse().ok()
    };
    let at = description.find("..")?;
    let before = &description[..at];
    let low_start = before.rfind(|c: char| !(c.is_ascii_digit() || c == ',' || c == '_')).map_or(0, |i| i + 1);
    let after = &description[at + 2..];
    let high_end = after.find(|c: char| !(c.is_ascii_digit() || c == ',' || c == '_')).unwrap_or(after.len());
    let (low, high) = (number(&before[low_start..])?, number(after[..high_end].trim_end_matches(','))?);
    (low <= high).then_some((low, high))
}

/// What the SDK answers for arguments that do not fit a tool's schema
/// (its text starts so): a tool error like any other, rewritten by
/// [`schema_error_as_tool_error`].
const SCHEMA_ERROR_PREFIX: &str = "failed to deserialize parameters:";

/// A call whose arguments do not fit the tool's schema answered as every
/// tool error of the server is (`error`: its answer for a code and a
/// message), `invalid_usage` saying what did not fit — never the SDK's
/// plain text.
fn schema_error_as_tool_error(
    response: CallToolResponse,
    error: impl Fn(&'static str, String) -> CallToolResult,
) -> CallToolResponse {
    let CallToolResponse::Complete(result) = &response else { return response };
    let said = match (result.is_error, result.content.as_slice()) {
        (Some(true), [only]) => only.as_text().and_then(|text| text.text.strip_prefix(SCHEMA_ERROR_PREFIX)),
        _ => None,
    };
    match said {
        Some(what) => CallToolResponse::Complete(error(
            "invalid_usage",
            format!("the arguments do not fit the tool's input schema: {}", what.trim()),
        )),
        None => response,
    }
}

/// A tool call routed by `router` of `server`, a schema misfit answered by
/// `error` (see [`schema_error_as_tool_error`]): every server's `call_tool`.
pub(crate) async fn call_tool<S: Send + Sync + 'static>(
    server: &S,
    router: &ToolRouter<S>,
    request: rmcp::model::CallToolRequestParams,
    context: rmcp::service::RequestContext<RoleServer>,
    error: impl Fn(&'static str, String) -> CallToolResult,
) -> Result<CallToolResponse, rmcp::ErrorData> {
    let call = rmcp::handler::server::tool::ToolCallContext::new(server, request, context);
    Ok(schema_error_as_tool_error(router.call(call).await?, error))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_types_and_words_are_stated() {
        assert_eq!(stated_range("The whole result's size limit, 512..262144 [default: 65536]."), Some((512, 262_144)));
        assert_eq!(stated_range("Independent calls with the same input, 1..1000000."), Some((1, 1_000_000)));
        assert_eq!(stated_range("Contributor rows shown, 0..64."), Some((0, 64)));
        assert_eq!(stated_range("no range here"), None);
        let mut schema = json!({"type": "object", "properties": {
            "budgetBytes": {"type": ["integer", "null"], "format": "uint64", "minimum": 0,
                            "description": "The whole result's size limit, 512..262144 [default: 65536]."},
            "by": {"type": ["string", "null"], "description": "day (the default), week…"}}});
        let Value::Object(map) = &mut schema else { unreachable!() };
        tighten_schema("bee_usage", map);
        assert_eq!(schema["properties"]["budgetBytes"]["type"], "integer");
        assert_eq!(
            (
                schema["properties"]["budgetBytes"]["minimum"].clone(),
                schema["properties"]["budgetBytes"]["maximum"].clone()
            ),
            (json!(512), json!(262_144))
        );
        assert_eq!(
            schema["properties"]["by"]["enum"],
            json!(["day", "hour", "week", "month", "session", "model", "block", "agent", "project"])
        );
    }
}
