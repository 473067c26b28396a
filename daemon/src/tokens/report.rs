//! The `beectl token estimate` document, from per-input measures and counts.
//! Shared by every path that counts, so the daemon-counted and the
//! in-process-counted reports are the same bytes.

use bee_proto::exit::Exit;
use bee_proto::tokens::{
    Contributor, Encoding, InputKind, InputTotals, OUTPUT_CAP_BYTES, Projection, Scenario, TokenErrorCode, TokenReport,
    TokenStatus, UNKNOWN,
};

use crate::rendered::Rendered;

/// One selected input, measured (its text is not kept in the report).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Measured {
    pub kind: InputKind,
    pub utf8_bytes: u64,
    pub utf16_units: u64,
}

/// What the scenario asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ask {
    pub encoding: Encoding,
    pub calls: u64,
    pub output_budget: Option<u64>,
    pub limit: u64,
}

/// The complete report for `inputs` counted as `tokens` (same order).
pub fn complete(ask: Ask, inputs: &[Measured], tokens: &[u64]) -> Rendered {
    let mut rows: Vec<Contributor> = inputs
        .iter()
        .zip(tokens)
        .enumerate()
        .map(|(index, (input, &estimated_tokens))| Contributor {
            ordinal: index as u64 + 1,
            kind: input.kind,
            estimated_tokens,
            utf8_bytes: input.utf8_bytes,
            utf16_units: input.utf16_units,
        })
        .collect();
    rows.sort_by(|a, b| {
        b.estimated_tokens
            .cmp(&a.estimated_tokens)
            .then(b.utf16_units.cmp(&a.utf16_units))
            .then(a.ordinal.cmp(&b.ordinal))
    });
    let per_call: u64 = tokens.iter().sum();
    let shown = rows.len().min(ask.limit as usize);
    let omitted = rows.split_off(shown);
    let input_tokens = per_call.saturating_mul(ask.calls);
    let output_tokens = ask.output_budget.map(|budget| budget.saturating_mul(ask.calls));
    let report = TokenReport {
        schema_version: 1,
        status: TokenStatus::Complete,
        error_code: None,
        error_input_ordinal: None,
        scope: "selected_text_only".to_owned(),
        estimator: Some(ask.encoding.estimator()),
        input: Some(InputTotals {
            utf8_bytes: inputs.iter().map(|i| i.utf8_bytes).sum(),
            utf16_units: inputs.iter().map(|i| i.utf16_units).sum(),
            estimated_tokens_per_call: per_call,
        }),
        projection: Some(Projection {
            returned: rows.len() as u64,
            omitted: omitted.len() as u64,
            omitted_estimated_tokens: omitted.iter().map(|r| r.estimated_tokens).sum(),
        }),
        contributors: rows,
        scenario: Some(Scenario {
            calls: ask.calls,
            input_estimated_tokens: input_tokens,
            output_budget_per_call: ask.output_budget,
            output_allocated_tokens: output_tokens,
            total_allocated_tokens: output_tokens.map(|out| out.saturating_add(input_tokens)),
        }),
        unknown: UNKNOWN.iter().map(|s| (*s).to_owned()).collect(),
        money: None,
        snapshot: "checked_unchanged_not_atomic".to_owned(),
    };
    capped_at(Rendered::json(Exit::Success, &report), OUTPUT_CAP_BYTES)
}

/// A failed estimate: no totals, no rows.
pub fn failure(code: TokenErrorCode, ordinal: Option<u64>) -> Rendered {
    let (status, exit) = match code {
        TokenErrorCode::InvalidUsage => (TokenStatus::Invalid, Exit::InvalidUsage),
        _ => (TokenStatus::Incomplete, Exit::Unavailable),
    };
    Rendered::json(exit, &TokenReport::failure(status, code, ordinal))
}

/// Replaces a document over `cap` bytes (final newline included): never split JSON.
fn capped_at(rendered: Rendered, cap: usize) -> Rendered {
    if rendered.bytes.len() > cap { failure(TokenErrorCode::OutputLimit, None) } else { rendered }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(units: u64) -> Measured {
        Measured { kind: InputKind::File, utf8_bytes: units, utf16_units: units }
    }

    fn report(rendered: &Rendered) -> serde_json::Value {
        serde_json::from_slice(&rendered.bytes).unwrap()
    }

    #[test]
    fn rows_sort_by_tokens_then_units_then_ordinal_and_limit_never_changes_totals() {
        let inputs = [input(4), input(8), input(7), input(8)];
        let tokens = [1, 2, 2, 2];
        for limit in 0..=5 {
            let ask = Ask { encoding: Encoding::Heuristic, calls: 3, output_budget: Some(10), limit };
            let value = report(&complete(ask, &inputs, &tokens));
            let ordinals: Vec<u64> =
                value["contributors"].as_array().unwrap().iter().map(|r| r["ordinal"].as_u64().unwrap()).collect();
            let full = [2u64, 4, 3, 1];
            assert_eq!(ordinals, full[..(limit as usize).min(4)].to_vec());
            assert_eq!(value["input"]["estimatedTokensPerCall"], 7);
            assert_eq!(value["scenario"]["inputEstimatedTokens"], 21);
            assert_eq!(value["scenario"]["totalAllocatedTokens"], 51);
            let omitted: u64 = full[(limit as usize).min(4)..].iter().map(|o| tokens[*o as usize - 1]).sum();
            assert_eq!(value["projection"]["omittedEstimatedTokens"], omitted);
        }
    }

    #[test]
    fn heuristic_is_additive_over_inputs() {
        // Per input, then summed: two one-unit inputs give 2; joined, 1.
        let texts = ["a", "b", "hello", "😀😀😀", "", "xyz\r\n"];
        let mut random = 0x1234_5678_u64;
        for _ in 0..500 {
            random = random.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            let chosen: Vec<&str> = texts.iter().filter(|_| random.rotate_left(7) & 1 == 1).copied().collect();
            let each: u64 = chosen.iter().map(|t| bee_proto::text::utf16_ceil_div4(t)).sum();
            let upper: u64 = chosen.iter().map(|t| bee_proto::text::utf16_units(t)).sum::<u64>().div_ceil(4);
            assert!(each >= upper);
            assert!(each <= upper + chosen.len() as u64);
        }
        assert_eq!(bee_proto::text::utf16_ceil_div4("a") + bee_proto::text::utf16_ceil_div4("b"), 2);
        assert_eq!(bee_proto::text::utf16_ceil_div4("ab"), 1);
    }

    #[test]
    fn an_oversized_document_becomes_output_limit() {
        let ask = Ask { encoding: Encoding::Heuristic, calls: 1, output_budget: None, limit: 64 };
        let inputs: Vec<Measured> = (0..64).map(|_| input(u64::MAX / 128)).collect();
        let full = complete(ask, &inputs, &[u64::MAX / 128; 64]);
        assert_eq!(full.exit, Exit::Success, "64 rows of the largest numbers fit the real cap");
        let capped = capped_at(full.clone(), full.bytes.len() - 1);
        assert_eq!(capped.exit, Exit::Unavailable);
        assert_eq!(report(&capped)["errorCode"], "output_limit");
        assert_eq!(capped_at(full.clone(), full.bytes.len()), full, "the cap includes the newline");
    }

    #[test]
    fn failures_carry_no_totals() {
        let value = report(&failure(TokenErrorCode::FileByteLimit, Some(2)));
        assert_eq!(value["status"], "incomplete");
        assert_eq!(value["errorCode"], "file_byte_limit");
        assert_eq!(value["errorInputOrdinal"], 2);
        for field in ["estimator", "input", "projection", "scenario", "money"] {
            assert!(value[field].is_null(), "{field}");
        }
        assert_eq!(value["contributors"], serde_json::json!([]));
        assert_eq!(failure(TokenErrorCode::InvalidUsage, None).exit, Exit::InvalidUsage);
    }
}
