//! What every table for people shares: whether to colour, numbers with
//! thousands separators, counts with their noun, short model names, a bar.

use std::io::IsTerminal;

/// Colour on a terminal, unless `NO_COLOR` (any value) or a dumb terminal says no.
pub fn colour_wanted() -> bool {
    std::io::stdout().is_terminal()
        && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
        && std::env::var("TERM").map_or(true, |term| term != "dumb")
}

/// `1234567` → `1,234,567`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `claude-sonnet-4-5-20250929` → `sonnet-4-5`; others as they are.
pub fn short_model(model: &str) -> &str {
    let name = model.strip_prefix("claude-").unwrap_or(model);
    bee_daemon::ledger::views::prices::without_date(name).unwrap_or(name)
}

/// `1 part`, `2 parts`, `1,000 sessions`: a count and its noun.
pub fn counted(n: u64, noun: &str) -> String {
    format!("{} {noun}{}", thousands(n), if n == 1 { "" } else { "s" })
}

/// `percent` as a bar of twenty cells.
pub fn bar(percent: f64) -> String {
    let filled = ((percent.clamp(0.0, 100.0) / 5.0).round()) as usize;
    format!("[{}{}]", "█".repeat(filled), "░".repeat(20 - filled))
}
