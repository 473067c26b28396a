//! The error document of commands whose contract gives them none of their
//! own: the evidence is unavailable (exit 5), with its issue and what went
//! wrong, never a report of zeros; and any error document's words for
//! people.

use bee_daemon::rendered::Rendered;
use bee_proto::exit::Exit;
use bee_proto::ledger::LedgerUnavailable;

/// Evidence unavailable (exit 5): `issue`, and what went wrong.
pub fn unavailable(issue: &str, message: Option<String>) -> Rendered {
    Rendered::json(Exit::Unavailable, &LedgerUnavailable::new(issue, message))
}

/// The words of an error document (`{"status":"invalid"|"unavailable"|
/// "error", "message", "errorCode"?, "issues"?}` and nothing else) for
/// people: its message, and its code. `None` for any other answer — a
/// report, even one that exits 5, speaks for itself.
pub fn words(document: &[u8]) -> Option<String> {
    const ERROR_FIELDS: [&str; 5] = ["schemaVersion", "status", "errorCode", "message", "issues"];
    let serde_json::Value::Object(fields) = serde_json::from_slice(document).ok()? else { return None };
    if !fields.keys().all(|key| ERROR_FIELDS.contains(&key.as_str())) {
        return None;
    }
    let status = fields.get("status")?.as_str()?;
    if !["invalid", "unavailable", "error"].contains(&status) {
        return None;
    }
    // A document without a message still names its issues: never shown raw.
    let issues = || {
        let named: Vec<&str> = fields.get("issues")?.as_array()?.iter().filter_map(serde_json::Value::as_str).collect();
        (!named.is_empty()).then(|| format!("the evidence is unavailable ({})", named.join(", ")))
    };
    let message = match fields.get("message")? {
        serde_json::Value::String(message) => message.trim_end().to_owned(),
        serde_json::Value::Null => issues()?,
        _ => return None,
    };
    // The argument parser's text carries its usage lines: the first says it.
    Some(match fields.get("errorCode").and_then(serde_json::Value::as_str) {
        Some(code) => format!("{message} [{code}]"),
        None => message.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_document_has_words_and_a_report_has_none() {
        let error =
            br#"{"status":"invalid","errorCode":"invalid_usage","message":"--since: \"lastweek\" is not a time"}"#;
        assert_eq!(words(error).as_deref(), Some("--since: \"lastweek\" is not a time [invalid_usage]"));
        let missing = br#"{"schemaVersion":1,"status":"unavailable","issues":["missing"],"message":"no ledger yet"}"#;
        assert_eq!(words(missing).as_deref(), Some("no ledger yet"));
        let report = br#"{"schemaVersion":1,"status":"complete","message":"x","rows":[]}"#;
        assert_eq!(words(report), None);
        assert_eq!(words(b"not json"), None);
        let silent = br#"{"schemaVersion":1,"status":"unavailable","issues":["io"],"message":null}"#;
        assert_eq!(words(silent).as_deref(), Some("the evidence is unavailable (io)"), "never the raw document");
    }
}
