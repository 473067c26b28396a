//! What every table for people shares: whether a report is for people at
//! all, whether to colour, numbers with thousands separators, counts with
//! their noun, short model names, a bar.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};

/// Set once `--json` was given or an MCP client reads the answers.
static FOR_PROGRAMS: AtomicBool = AtomicBool::new(false);

/// Every answer from now on is read by a program: `--json` was given
/// (commands without a `--json` of their own never see it), or an MCP
/// server answers its tools through the commands (its stdout is the
/// protocol, whatever it is attached to).
pub fn for_programs() {
    FOR_PROGRAMS.store(true, Ordering::Relaxed);
}

/// Whether a report is printed for people (a table, a view) rather than as
/// its JSON document — the one rule of every report command: as asked
/// (`Some(true)` for `--format table`, `Some(false)` for `--json` or
/// `--format json`), else on a terminal and not for a program. A pipe gets
/// the document a script reads; a person gets words.
pub fn for_people(asked: Option<bool>) -> bool {
    asked.unwrap_or_else(|| !FOR_PROGRAMS.load(Ordering::Relaxed) && std::io::stdout().is_terminal())
}

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

/// `text` in lines of at most `width` characters, broken between words.
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = vec![String::new()];
    for word in text.split(' ') {
        let Some(line) = lines.last_mut() else { break };
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
            lines.push(word.to_owned());
        } else {
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(word);
        }
    }
    lines
}

/// `1,234` or, where width is short, `1.2k`, `3.4M`, `5.6B`.
pub fn number(n: u64, short: bool) -> String {
    if !short || n < 10_000 {
        return thousands(n);
    }
    let (value, unit) = if n < 1_000_000 {
        (n as f64 / 1e3, "k")
    } else if n < 1_000_000_000 {
        (n as f64 / 1e6, "M")
    } else {
        (n as f64 / 1e9, "B")
    };
    if value < 100.0 { format!("{value:.1}{unit}") } else { format!("{value:.0}{unit}") }
}
