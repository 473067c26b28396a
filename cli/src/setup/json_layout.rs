//! A JSON settings file written back in its own layout: each top-level
//! member Bee did not change keeps its original text byte for byte
//! (compact arrays stay compact, comments-free JSON as the user wrote it),
//! and what did change is written with the file's own indent.

use serde::de::{Deserializer as _, MapAccess, Visitor};
use serde_json::Value;
use serde_json::value::RawValue;

/// `value` as the text of a file that was `before`: its unchanged
/// top-level members as they were written, the rest pretty-printed with
/// the file's indent (two spaces when it has none to follow).
pub fn like(before: Option<&str>, value: &Value) -> Result<String, String> {
    let original = before.and_then(members);
    let indent = before.and_then(indent_of).unwrap_or_else(|| "  ".to_owned());
    let Value::Object(object) = value else { return pretty(value, &indent).map(|text| text + "\n") };
    if object.is_empty() {
        return Ok("{}\n".to_owned());
    }
    let mut out = String::from("{\n");
    for (n, (key, member)) in object.iter().enumerate() {
        let kept = original.as_ref().and_then(|members| {
            members.iter().find(|(name, raw)| {
                name == key && serde_json::from_str::<Value>(raw.get()).is_ok_and(|was| &was == member)
            })
        });
        let text = match kept {
            Some((_, raw)) => raw.get().to_owned(),
            None => pretty(member, &indent)?.replace('\n', &format!("\n{indent}")),
        };
        let key = serde_json::to_string(key).map_err(|err| err.to_string())?;
        out.push_str(&format!("{indent}{key}: {text}"));
        out.push_str(if n + 1 < object.len() { ",\n" } else { "\n" });
    }
    out.push_str("}\n");
    Ok(out)
}

fn pretty(value: &Value, indent: &str) -> Result<String, String> {
    use serde::Serialize;
    let mut bytes = Vec::new();
    let formatter = serde_json::ser::PrettyFormatter::with_indent(indent.as_bytes());
    let mut serializer = serde_json::Serializer::with_formatter(&mut bytes, formatter);
    value.serialize(&mut serializer).map_err(|err| err.to_string())?;
    String::from_utf8(bytes).map_err(|err| err.to_string())
}

/// The indent of the file's first indented line (spaces or a tab).
fn indent_of(text: &str) -> Option<String> {
    text.lines().skip(1).find_map(|line| {
        let indent: String = line.chars().take_while(|c| *c == ' ' || *c == '\t').collect();
        (!indent.is_empty() && indent.len() <= 8).then_some(indent)
    })
}

/// The top-level members of a JSON object text, in order, each as written.
fn members(text: &str) -> Option<Vec<(String, Box<RawValue>)>> {
    struct Members;
    impl<'de> Visitor<'de> for Members {
        type Value = Vec<(String, Box<RawValue>)>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a JSON object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut members = Vec::new();
            while let Some(entry) = map.next_entry::<String, Box<RawValue>>()? {
                members.push(entry);
            }
            Ok(members)
        }
    }
    serde_json::Deserializer::from_str(text).deserialize_map(Members).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Only the member that changed is written anew; the others keep their
    /// bytes, compact arrays included, and the file's four-space indent.
    #[test]
    fn unchanged_members_keep_their_text() {
        let before = "{\n    \"permissions\": {\"allow\": [\"Bash(ls)\", \"Read\"]},\n    \"model\": \"opus\",\n    \"env\": {\"A\": \"1\"}\n}\n";
        let mut value: Value = serde_json::from_str(before).unwrap();
        value["hooks"] = json!({"Stop": [{"hooks": [{"type": "command", "command": "bee-hook turn"}]}]});
        value["model"] = json!("sonnet");
        let after = like(Some(before), &value).unwrap();
        assert!(after.contains("    \"permissions\": {\"allow\": [\"Bash(ls)\", \"Read\"]},\n"), "{after}");
        assert!(after.contains("    \"env\": {\"A\": \"1\"},\n"), "{after}");
        assert!(after.contains("    \"model\": \"sonnet\",\n"), "{after}");
        assert!(after.contains("    \"hooks\": {\n        \"Stop\": ["), "{after}");
        assert_eq!(serde_json::from_str::<Value>(&after).unwrap(), value);
        // Nothing changed: the same bytes.
        let same: Value = serde_json::from_str(before).unwrap();
        assert_eq!(like(Some(before), &same).unwrap(), before);
        assert_eq!(like(None, &json!({})).unwrap(), "{}\n");
    }
}
