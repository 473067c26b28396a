//! `beectl usage --format csv`: the report's rows as RFC 4180 CSV (CRLF
//! line ends, fields quoted where they must be), one row per grouping key
//! — a two-key grouping's rows, not its subtotals, nor the totals, which a
//! reader sums — under a header of the JSON document's own field names.
//! A figure no part reported is an empty field, never 0; the columns that
//! say a sum is a lower bound (`partialParts`, `pendingResponses`,
//! `unpricedParts` and the unknown parts of the agents' own figures) are
//! columns of their own.

use bee_proto::ledger::UsageReport;

/// The header: each field named as `beectl usage --json` names it.
const HEADER: [&str; 26] = [
    "key",
    "subkey",
    "agent",
    "agents",
    "models",
    "responses",
    "inputTokens",
    "outputTokens",
    "cacheCreationInputTokens",
    "cacheReadInputTokens",
    "reasoningOutputTokens",
    "totalTokens",
    "partialParts",
    "pendingResponses",
    "reportedCostUsd",
    "agentCostUsd",
    "agentCostUnknownParts",
    "estimatedCostUsd",
    "unpricedParts",
    "agentCredits",
    "agentCreditsUnknownParts",
    "unsplitTokens",
    "unsplitTokensUnknownParts",
    "agentEstimatedTokens",
    "agentEstimatedTokensUnknownParts",
    "sessionsWithoutCost",
];

/// The report's rows as CSV text.
pub fn render(report: &UsageReport) -> Result<Vec<u8>, csv::Error> {
    let mut out = csv::WriterBuilder::new().terminator(csv::Terminator::CRLF).from_writer(Vec::new());
    out.write_record(HEADER)?;
    let known = |n: Option<u64>| n.map(|n| n.to_string()).unwrap_or_default();
    let figure = |f: Option<f64>| f.map(|f| f.to_string()).unwrap_or_default();
    for row in &report.rows {
        let t = &row.tokens;
        // Several names in one field, `;` between them (no name holds one).
        let agents: Vec<&str> = row.agents.iter().map(|agent| agent.as_str()).collect();
        out.write_record([
            row.key.clone().unwrap_or_default(),
            row.subkey.clone().unwrap_or_default(),
            row.agent.map(|agent| agent.as_str().to_owned()).unwrap_or_default(),
            agents.join(";"),
            row.models.join(";"),
            row.responses.to_string(),
            known(t.input_tokens),
            known(t.output_tokens),
            known(t.cache_creation_input_tokens),
            known(t.cache_read_input_tokens),
            known(t.reasoning_output_tokens),
            known(t.total_tokens),
            row.partial_parts.to_string(),
            row.pending_responses.to_string(),
            figure(row.reported_cost_usd),
            figure(row.agent_cost_usd),
            row.agent_cost_unknown_parts.to_string(),
            figure(row.estimated_cost_usd),
            row.unpriced_parts.to_string(),
            figure(row.agent_credits),
            row.agent_credits_unknown_parts.to_string(),
            known(row.unsplit_tokens),
            row.unsplit_tokens_unknown_parts.to_string(),
            known(row.agent_estimated_tokens),
            row.agent_estimated_tokens_unknown_parts.to_string(),
            known(row.sessions_without_cost),
        ])?;
    }
    out.into_inner().map_err(|err| csv::Error::from(err.into_error()))
}
