//! The answers of commands that are also MCP tools with a `budgetBytes`:
//! the budget's range, and an answer over it refused (never cut).

use bee_daemon::rendered::Rendered;
use bee_proto::delivery::CommandError;
use bee_proto::exit::Exit;
use bee_proto::mcp::{BUDGET_BYTES, DEFAULT_BUDGET_BYTES};
use serde::Serialize;

/// `budgetBytes` as asked, or the default; its range is the MCP tools'.
pub fn budget(asked: Option<u64>) -> Result<usize, Rendered> {
    let budget = asked.unwrap_or(DEFAULT_BUDGET_BYTES);
    if BUDGET_BYTES.contains(&budget) {
        Ok(budget as usize)
    } else {
        Err(Rendered::invalid_usage(format!(
            "--budget-bytes (budgetBytes): {}..{}",
            BUDGET_BYTES.start(),
            BUDGET_BYTES.end()
        )))
    }
}

/// `answer` when its JSON fits `budget` bytes, else `budget_exceeded`.
pub fn within(answer: &impl Serialize, budget: usize) -> Rendered {
    let rendered = Rendered::json(Exit::Success, answer);
    // The printed document ends with a newline the budget does not count.
    let size = rendered.bytes.len().saturating_sub(1);
    if size > budget {
        return Rendered::json(
            Exit::Unavailable,
            &CommandError::unavailable(
                "budget_exceeded",
                format!("the answer is {size} bytes, over the budget of {budget}: raise budgetBytes or ask for less"),
            ),
        );
    }
    rendered
}
