//! Pre-task token estimate: `beectl token estimate` options, limits, error
//! codes and the report document, and the socket request that asks beed to
//! count (beed keeps the BPE encoders built).

use serde::{Deserialize, Serialize};

/// Most selected inputs, `--stdin` included.
pub const MAX_INPUTS: usize = 64;
/// Bytes per input.
pub const MAX_INPUT_BYTES: u64 = 262_144;
/// Bytes across all inputs.
pub const MAX_TOTAL_BYTES: u64 = 1_048_576;
/// JSON output, final newline included.
pub const OUTPUT_CAP_BYTES: usize = 32_768;
/// Sum over all inputs of the squared UTF-8 length of every pre-token piece.
pub const WORK_BOUND: u64 = 67_108_864;
/// Longest pre-token piece counted exactly.
pub const MAX_PIECE_BYTES: usize = 8_192;
/// Longest time one regex operation may take.
pub const REGEX_OPERATION_MILLIS: u64 = 250;
/// Whole-command budget, enforced cooperatively.
pub const COMMAND_MILLIS: u64 = 10_000;
/// `--calls` range.
pub const MAX_CALLS: u64 = 1_000_000;
/// `--output-budget` range.
pub const MAX_OUTPUT_BUDGET: u64 = 1_000_000_000;
/// `--limit` default and range.
pub const DEFAULT_ROW_LIMIT: u64 = 20;
pub const MAX_ROW_LIMIT: u64 = 64;

/// `POST`: count inputs with an encoding; answers [`CountAnswer`].
pub const TOKEN_COUNT_PATH: &str = "/v1/token/count";
/// Largest count request: the inputs' limit, JSON-escaped at worst (`\u0000`).
pub const MAX_COUNT_REQUEST_BYTES: usize = 6 * MAX_TOTAL_BYTES as usize + 64 * 1024;

/// How tokens are counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Encoding {
    /// `utf16-ceil-div4` version 1, per input.
    #[serde(rename = "heuristic")]
    Heuristic,
    #[serde(rename = "o200k_base")]
    O200kBase,
    #[serde(rename = "cl100k_base")]
    Cl100kBase,
}

impl Encoding {
    pub fn from_cli(text: &str) -> Option<Encoding> {
        match text {
            "heuristic" => Some(Encoding::Heuristic),
            "o200k_base" => Some(Encoding::O200kBase),
            "cl100k_base" => Some(Encoding::Cl100kBase),
            _ => None,
        }
    }

    /// The estimator as the report names it.
    pub fn estimator(self) -> Estimator {
        let method = match self {
            Encoding::Heuristic => crate::delivery::ESTIMATOR_ID,
            Encoding::O200kBase => "o200k_base",
            Encoding::Cl100kBase => "cl100k_base",
        };
        Estimator { method: method.to_owned(), version: 1 }
    }
}

/// Stable error codes of `beectl token estimate`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TokenErrorCode {
    InvalidUsage,
    Missing,
    StdinNotRedirected,
    InvalidUnicode,
    InvalidText,
    FileByteLimit,
    TotalByteLimit,
    PathEscape,
    PathLink,
    HardLink,
    DuplicateFile,
    NotRegularFile,
    SensitiveName,
    RootInvalid,
    /// A file changed between its checks and the end of its read.
    InputChanged,
    Io,
    EncodingUnavailable,
    TokenizationLimit,
    /// A regex operation took over 250 ms, or the command over 10 s.
    EncodingTimeout,
    OutputLimit,
}

impl TokenErrorCode {
    /// What the code means, for a person or an agent (the report's contract
    /// has no message field; an MCP error body needs one).
    pub fn sentence(self) -> &'static str {
        match self {
            TokenErrorCode::InvalidUsage => "the arguments are not a valid estimate request",
            TokenErrorCode::Missing => "an input file does not exist",
            TokenErrorCode::StdinNotRedirected => "standard input was asked for but is a terminal",
            TokenErrorCode::InvalidUnicode => "an input is not valid UTF-8",
            TokenErrorCode::InvalidText => "an input holds text that cannot be estimated (a NUL byte)",
            TokenErrorCode::FileByteLimit => "an input file is over the per-file byte limit",
            TokenErrorCode::TotalByteLimit => "the inputs together are over the total byte limit",
            TokenErrorCode::PathEscape => "a path is outside the root (or not absolute and physical)",
            TokenErrorCode::PathLink => "a path goes through a symbolic link",
            TokenErrorCode::HardLink => "an input file has several hard links",
            TokenErrorCode::DuplicateFile => "the same file is selected twice",
            TokenErrorCode::NotRegularFile => "an input is not a regular file",
            TokenErrorCode::SensitiveName => "an input's name marks it as a secret (a key, .env): not read",
            TokenErrorCode::RootInvalid => "the root is not an existing, absolute, physical directory",
            TokenErrorCode::InputChanged => "an input file changed while it was read",
            TokenErrorCode::Io => "an input could not be read",
            TokenErrorCode::EncodingUnavailable => "the encoding cannot be used here",
            TokenErrorCode::TokenizationLimit => "an input is over the tokenizer's limit",
            TokenErrorCode::EncodingTimeout => "encoding took longer than its time limit",
            TokenErrorCode::OutputLimit => "the answer would be over the output limit",
        }
    }
}

/// `status` of a token report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TokenStatus {
    Complete,
    Invalid,
    Incomplete,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Estimator {
    pub method: String,
    pub version: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InputTotals {
    pub utf8_bytes: u64,
    pub utf16_units: u64,
    pub estimated_tokens_per_call: u64,
}

/// Where an input came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InputKind {
    File,
    Stdin,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Contributor {
    pub ordinal: u64,
    pub kind: InputKind,
    pub estimated_tokens: u64,
    pub utf8_bytes: u64,
    pub utf16_units: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Projection {
    pub returned: u64,
    pub omitted: u64,
    pub omitted_estimated_tokens: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Scenario {
    pub calls: u64,
    pub input_estimated_tokens: u64,
    /// `null` when no `--output-budget` was given: unknown, not zero.
    pub output_budget_per_call: Option<u64>,
    pub output_allocated_tokens: Option<u64>,
    pub total_allocated_tokens: Option<u64>,
}

/// What an estimate of selected text never covers.
pub const UNKNOWN: [&str; 6] = [
    "future_real_output_and_reasoning",
    "tool_results_and_turns",
    "conversation_growth_and_compaction",
    "unselected_system_tool_and_framing_tokens",
    "cache_behaviour",
    "provider_usage_and_billing",
];

/// The `beectl token estimate` document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TokenReport {
    pub schema_version: u32,
    pub status: TokenStatus,
    pub error_code: Option<TokenErrorCode>,
    pub error_input_ordinal: Option<u64>,
    pub scope: String,
    pub estimator: Option<Estimator>,
    pub input: Option<InputTotals>,
    pub contributors: Vec<Contributor>,
    pub projection: Option<Projection>,
    pub scenario: Option<Scenario>,
    pub unknown: Vec<String>,
    pub money: Option<u64>,
    pub snapshot: String,
}

impl TokenReport {
    /// A failure: no totals, no rows, the code and (where it applies) the input.
    pub fn failure(status: TokenStatus, code: TokenErrorCode, ordinal: Option<u64>) -> TokenReport {
        TokenReport {
            schema_version: 1,
            status,
            error_code: Some(code),
            error_input_ordinal: ordinal,
            scope: "selected_text_only".to_owned(),
            estimator: None,
            input: None,
            contributors: Vec::new(),
            projection: None,
            scenario: None,
            unknown: UNKNOWN.iter().map(|s| (*s).to_owned()).collect(),
            money: None,
            snapshot: "checked_unchanged_not_atomic".to_owned(),
        }
    }
}

/// `POST /v1/token/count`: the inputs, already read and checked by the CLI.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CountRequest {
    pub encoding: Encoding,
    pub inputs: Vec<String>,
    /// Milliseconds left of the command's budget.
    pub budget_millis: u64,
}

/// Counts per input, or the first failure.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CountAnswer {
    pub counts: Option<Vec<u64>>,
    pub error_code: Option<TokenErrorCode>,
    /// 1-based input that failed.
    pub error_input_ordinal: Option<u64>,
}
