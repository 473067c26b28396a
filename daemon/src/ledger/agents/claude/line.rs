//! The few fields ingestion reads of a Claude Code transcript line, as
//! typed shapes that borrow from the line: read by [`super::scan`] where it
//! can answer for the line, else by serde_json.

use serde::Deserialize;
use std::borrow::Cow;

/// What ingestion reads of a transcript line; strings borrowed from the
/// line where it holds them unescaped. Read by [`super::scan`] where it can answer
/// for the line, else by serde_json.
#[derive(Debug, Default, PartialEq, Deserialize)]
pub(super) struct ClaudeLine<'a> {
    #[serde(rename = "sessionId", borrow)]
    pub(super) session_id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub(super) timestamp: Option<Cow<'a, str>>,
    #[serde(rename = "requestId", borrow)]
    pub(super) request_id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub(super) message: Option<ClaudeMessage<'a>>,
    /// An API error Claude Code wrote in place of a response.
    #[serde(rename = "isApiErrorMessage")]
    pub(super) is_api_error: Option<bool>,
    /// The error's kind (`rate_limit` when a limit refused the request);
    /// other line types use the name for other shapes.
    #[serde(borrow)]
    pub(super) error: Option<RawJson<'a>>,
    /// The line's own type, as its JSON text (`"assistant"`): Claude Code
    /// writes an assistant line's after its message.
    #[serde(rename = "type", borrow)]
    pub(super) kind: Option<RawJson<'a>>,
}

impl ClaudeLine<'_> {
    pub(super) fn is_assistant(&self) -> bool {
        self.kind.as_ref().is_some_and(|kind| kind.0 == "\"assistant\"")
    }
}

/// A value's JSON text, as the line spells it.
#[derive(Debug, PartialEq)]
pub(super) struct RawJson<'a>(pub(super) &'a str);

impl<'de: 'a, 'a> Deserialize<'de> for RawJson<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw: &'de serde_json::value::RawValue = Deserialize::deserialize(deserializer)?;
        Ok(RawJson(raw.get()))
    }
}

#[derive(Debug, Default, PartialEq, Deserialize)]
pub(super) struct ClaudeMessage<'a> {
    #[serde(borrow)]
    pub(super) id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub(super) model: Option<Cow<'a, str>>,
    /// Set on the writes of a response whose stream is over.
    #[serde(borrow)]
    pub(super) stop_reason: Option<Cow<'a, str>>,
    pub(super) usage: Option<ClaudeUsage>,
}

#[derive(Debug, Default, PartialEq, Deserialize)]
pub(super) struct ClaudeUsage {
    pub(super) input_tokens: Option<u64>,
    pub(super) cache_creation_input_tokens: Option<u64>,
    pub(super) cache_read_input_tokens: Option<u64>,
    pub(super) output_tokens: Option<u64>,
}
