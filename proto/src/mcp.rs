//! The MCP servers' contract (spec/50): their limits, and the body of a
//! tool error.

use serde::{Deserialize, Serialize};

/// The largest JSON-RPC frame a server takes.
pub const MAX_FRAME_BYTES: usize = 512 * 1024;
/// The largest tool result.
pub const MAX_RESULT_BYTES: usize = 256 * 1024;
/// How long one tool call may take.
pub const TOOL_TIMEOUT_SECONDS: u64 = 15;
/// The `budgetBytes` a tool takes, and its default.
pub const BUDGET_BYTES: std::ops::RangeInclusive<u64> = 512..=262_144;
pub const DEFAULT_BUDGET_BYTES: u64 = 65_536;

/// A tool error's text (the result has `isError: true`): a stable
/// snake_case code and a sentence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolError {
    pub error_code: String,
    pub message: String,
}

/// Why an operation behind a tool or its CLI twin failed (an artifact, a
/// skill, a plan, a packet, a compression, a design bundle): a stable
/// snake_case code and a sentence. [`ToolError`] is how it travels.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodedError {
    pub code: &'static str,
    pub message: String,
}

/// A [`CodedError`].
pub fn coded(code: &'static str, message: impl Into<String>) -> CodedError {
    CodedError { code, message: message.into() }
}

impl std::fmt::Display for CodedError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for CodedError {}

/// The largest JSON text `repr encode` takes, and the largest packet
/// `repr decode` takes.
pub const REPRESENTATION_INPUT_BYTES: usize = 262_144;
