//! One label per model across agents: the views group and show a model by
//! its label, whatever provider prefix (`anthropic/`, `openrouter/…/`,
//! `models/`), cloud spelling (Bedrock's `us.anthropic.…-v1:0`, Vertex's
//! `@date`), snapshot date or `-latest` alias an agent wrote; the ids
//! actually written stay beside it (`modelIds`). Prices are never looked up
//! by label: a snapshot may be priced apart from its alias.

/// The label of the model an agent wrote as `id`.
pub fn label(id: &str) -> String {
    let id = id.trim().to_ascii_lowercase();
    // A routing prefix names who served it, not the model: the last segment does.
    let mut name = id.rsplit('/').next().unwrap_or(&id);
    // Bedrock: `us.anthropic.claude-…-v1:0`; OpenRouter variants: `…:free`.
    if let Some((model, _variant)) = name.split_once(':') {
        name = model;
    }
    for region in ["us.", "eu.", "apac.", "global."] {
        if let Some(rest) = name.strip_prefix(region) {
            name = rest;
        }
    }
    for vendor in ["anthropic.", "meta.", "amazon.", "mistral.", "cohere.", "deepseek.", "qwen.", "openai."] {
        if let Some(rest) = name.strip_prefix(vendor) {
            // Only Bedrock spells a vendor so, and only its ids end in a revision.
            name = strip_bedrock_version(rest).unwrap_or(rest);
        }
    }
    // Vertex spells a snapshot `claude-sonnet-4-5@20250929`.
    if let Some((model, _date)) = name.split_once('@') {
        name = model;
    }
    let mut name = name.strip_suffix("-latest").unwrap_or(name);
    // The price table's own rule for a snapshot date (`-20250929`, `-2025-08-07`).
    if let Some(rest) = crate::ledger::views::prices::without_date(name) {
        name = rest;
    }
    // Claude's version is spelled with dashes by Anthropic and with a dot
    // by OpenRouter and others (`claude-sonnet-4.5`); Cursor puts it first
    // (`claude-4.5-sonnet`).
    if name.starts_with("claude-") {
        let dashed = name.replace('.', "-");
        crate::ledger::views::prices::claude_family_first(&dashed).unwrap_or(dashed)
    } else {
        name.to_owned()
    }
}

/// `…-v1` or `…-v2` at the end (Bedrock's revision), without it.
fn strip_bedrock_version(name: &str) -> Option<&str> {
    let (model, version) = name.rsplit_once("-v")?;
    (!version.is_empty() && version.bytes().all(|b| b.is_ascii_digit()) && model.contains('-')).then_some(model)
}

#[cfg(test)]
mod tests {
    use super::label;

    #[test]
    fn every_spelling_of_one_model_reads_as_one_label() {
        let cases = [
            ("claude-sonnet-4-5", "claude-sonnet-4-5"),
            ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5"),
            ("anthropic/claude-sonnet-4.5", "claude-sonnet-4-5"),
            ("openrouter/anthropic/claude-sonnet-4-5", "claude-sonnet-4-5"),
            ("us.anthropic.claude-sonnet-4-5-20250929-v1:0", "claude-sonnet-4-5"),
            ("claude-sonnet-4-5@20250929", "claude-sonnet-4-5"),
            ("claude-4.5-sonnet", "claude-sonnet-4-5"),
            ("claude-4-opus-thinking", "claude-opus-4-thinking"),
            ("claude-3-5-sonnet-20241022", "claude-3-5-sonnet"),
            ("Claude-Sonnet-4-5-Latest", "claude-sonnet-4-5"),
            ("models/gemini-2.5-pro", "gemini-2.5-pro"),
            ("gemini/gemini-2.5-pro", "gemini-2.5-pro"),
            ("gpt-4o-2024-08-06", "gpt-4o"),
            ("deepseek-v3", "deepseek-v3"),
            ("openai/gpt-5-mini", "gpt-5-mini"),
            ("qwen/qwen3-coder:free", "qwen3-coder"),
            ("dashscope/qwen3-coder-plus", "qwen3-coder-plus"),
        ];
        for (id, want) in cases {
            assert_eq!(label(id), want, "{id}");
        }
    }

    #[test]
    fn distinct_models_keep_distinct_labels() {
        // Versions and sizes are the model, not a spelling of it.
        let ids = ["gpt-4.1", "gpt-4.1-mini", "gpt-5", "gpt-5-mini", "kimi-k2-0905", "kimi-k2", "glm-4.6", "glm-4.5"];
        let labels: std::collections::BTreeSet<String> = ids.iter().map(|id| label(id)).collect();
        assert_eq!(labels.len(), ids.len(), "{labels:?}");
        assert_eq!(label("gpt-4.1"), "gpt-4.1", "only Claude's dots are dashes");
        assert_eq!(label(""), "");
        assert_eq!(label("-20250929"), "-20250929", "a date alone is no model's snapshot");
    }
}
