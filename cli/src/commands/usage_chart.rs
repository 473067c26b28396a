//! `beectl usage --chart`: each grouping key's tokens as a horizontal bar
//! for people on a terminal — stacked by the second key (by agent, when
//! the grouping names one key other than the agent or the model), each
//! series in its colour (or, with `NO_COLOR`, its own fill character),
//! under a legend, the whole as wide as the terminal.
//!
//! A bar's length is its row's `totalTokens`; a bar whose tokens no part
//! knows is drawn as `?`, never as an empty bar, and a total some parts
//! leave out is written `≥`. The figures are those of `beectl usage
//! --json` for the same range: a chart draws, it computes nothing.

use bee_proto::ledger::{UsageGrouping, UsageReport, UsageRow};
use std::collections::HashMap;
use std::fmt::Write;

use crate::render::terminal::{number, wrap};

/// Series drawn apart; the rest share one, "others".
const MAX_SERIES: usize = 7;

/// The series' colours (ANSI), in order of their totals.
const COLOURS: [&str; MAX_SERIES + 1] = ["36", "33", "35", "32", "34", "31", "96", "90"];

/// The series' fills without colour, in the same order.
const FILLS: [char; MAX_SERIES + 1] = ['█', '▓', '▒', '░', '#', '=', '+', ':'];

/// The widest a key is shown (cut with `…`).
const MAX_KEY: usize = 24;

/// Each bar: its key, its series' tokens, its total and whether that is a
/// lower bound.
struct Bar {
    key: String,
    parts: Vec<(String, u64)>,
    total: Option<u64>,
    bound: bool,
}

/// The chart of `report` (asked with the second key it stacks by), under
/// `heading`, `columns` wide.
pub fn render(report: &UsageReport, heading: &str, columns: usize, colour: bool) -> String {
    let by = report.by;
    let bars = bars(report);
    // The series by their totals, largest first; past the seventh, "others".
    let mut totals: HashMap<&str, u64> = HashMap::new();
    for bar in &bars {
        for (series, tokens) in &bar.parts {
            *totals.entry(series.as_str()).or_default() += tokens;
        }
    }
    let mut series: Vec<(&str, u64)> = totals.into_iter().collect();
    series.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let others = series.len() > MAX_SERIES + 1;
    let shown: Vec<&str> =
        series.iter().map(|(name, _)| *name).take(if others { MAX_SERIES } else { MAX_SERIES + 1 }).collect();
    let slot = |name: &str| shown.iter().position(|s| *s == name).unwrap_or(MAX_SERIES);
    let paint = |slot: usize, text: &str| {
        if colour { format!("\x1b[{}m{text}\x1b[0m", COLOURS[slot]) } else { text.to_owned() }
    };
    let fill = |slot: usize| if colour { '█' } else { FILLS[slot] };

    let value = |bar: &Bar| match bar.total {
        Some(total) => format!("{}{}", if bar.bound { "≥" } else { "" }, short(total)),
        None => "unknown".to_owned(),
    };
    let key_width = bars.iter().map(|bar| bar.key.chars().count()).max().unwrap_or(0).clamp(4, MAX_KEY);
    let value_width = bars.iter().map(|bar| value(bar).chars().count()).max().unwrap_or(0);
    let width = columns.saturating_sub(2 + key_width + 2 + 2 + value_width).max(10);
    let most = bars.iter().filter_map(|bar| bar.total).max().unwrap_or(0);

    let mut out = String::new();
    let title = match by.then {
        Some(then) => format!("Tokens by {}, stacked by {}", by.first.as_str(), then.as_str()),
        None => format!("Tokens by {}", by.first.as_str()),
    };
    for line in wrap(&format!("{title}: {heading}"), columns) {
        let _ = writeln!(out, "{line}");
    }
    if bars.is_empty() {
        let _ = writeln!(out, "  No usage in this range (the logs Bee read hold none).");
        return out;
    }
    for bar in &bars {
        let mut line = String::new();
        let mut drawn = 0;
        match bar.total {
            Some(total) if most > 0 => {
                // Each series ends where its running sum ends, so the bar is
                // as long as its total whatever its parts round to; a bar of
                // any tokens is at least one cell.
                let mut sum = 0u64;
                for (series, tokens) in &bar.parts {
                    sum += tokens;
                    let end = cells(sum, most, width);
                    if end > drawn {
                        let slot = slot(series);
                        line.push_str(&paint(slot, &fill(slot).to_string().repeat(end - drawn)));
                        drawn = end;
                    }
                }
                if drawn == 0 && total > 0 {
                    let slot = bar.parts.first().map_or(0, |(series, _)| slot(series));
                    line.push_str(&paint(slot, &fill(slot).to_string()));
                    drawn = 1;
                }
            }
            _ => {
                line.push('?');
                drawn = 1;
            }
        }
        let key = cut(&bar.key, key_width);
        let pad = " ".repeat(width.saturating_sub(drawn));
        let _ = writeln!(out, "  {key:<key_width$}  {line}{pad}  {:>value_width$}", value(bar));
    }
    // The legend, wrapped to the width: each series with its fill and total.
    let mut legend: Vec<String> = Vec::new();
    for (name, tokens) in series.iter().take(shown.len()) {
        let slot = slot(name);
        legend.push(format!("{} {name} {}", paint(slot, &fill(slot).to_string()), short(*tokens)));
    }
    if others {
        let rest: u64 = series.iter().skip(MAX_SERIES).map(|(_, tokens)| tokens).sum();
        let count = series.len() - MAX_SERIES;
        legend.push(format!("{} {count} others {}", paint(MAX_SERIES, &fill(MAX_SERIES).to_string()), short(rest)));
    }
    let mut line = String::from(" ");
    let mut line_width = 1;
    for item in legend {
        // The fill is one column whatever its colour codes.
        let item_width = visible_width(&item);
        if line_width + 2 + item_width > columns && line_width > 1 {
            let _ = writeln!(out, "{line}");
            line = String::from(" ");
            line_width = 1;
        }
        line.push_str("  ");
        line.push_str(&item);
        line_width += 2 + item_width;
    }
    let _ = writeln!(out, "{line}");
    let mut notes = vec![format!(
        "A bar is a row's TOTAL of `beectl usage --by {}` (inputs, caches and output).",
        by.groupings().map(UsageGrouping::as_str).collect::<Vec<_>>().join(",")
    )];
    if bars.iter().any(|bar| bar.bound) {
        notes.push("≥: a lower bound, some parts' tokens are unknown.".to_owned());
    }
    if bars.iter().any(|bar| bar.total.is_none()) {
        notes.push("?: no part's tokens are known (never drawn as 0).".to_owned());
    }
    for note in notes {
        for line in wrap(&note, columns.saturating_sub(2).max(20)) {
            let _ = writeln!(out, "  {line}");
        }
    }
    out
}

/// The bars of a report: one a row, or, grouped by two keys, one a first
/// key (its subtotal's total) made of its rows.
fn bars(report: &UsageReport) -> Vec<Bar> {
    let by = report.by;
    let bound = |row: &UsageRow| row.partial_parts > 0 || !row.partial_columns.is_empty();
    let label = |grouping: UsageGrouping, key: Option<&str>| match (grouping, key) {
        (_, None) => "(unknown)".to_owned(),
        (UsageGrouping::Block, Some(key)) => key.chars().take(16).collect::<String>().replace('T', " "),
        (_, Some(key)) => key.to_owned(),
    };
    match by.then {
        None => report
            .rows
            .iter()
            .map(|row| {
                let key = label(by.first, row.key.as_deref());
                Bar {
                    parts: row.tokens.total_tokens.map(|total| (key.clone(), total)).into_iter().collect(),
                    key,
                    total: row.tokens.total_tokens,
                    bound: bound(row),
                }
            })
            .collect(),
        Some(then) => report
            .subtotals
            .iter()
            .map(|subtotal| {
                let parts = report
                    .rows
                    .iter()
                    .filter(|row| row.key == subtotal.key)
                    .filter_map(|row| Some((label(then, row.subkey.as_deref()), row.tokens.total_tokens?)))
                    .collect();
                Bar {
                    key: label(by.first, subtotal.key.as_deref()),
                    parts,
                    total: subtotal.tokens.total_tokens,
                    bound: bound(subtotal),
                }
            })
            .collect(),
    }
}

/// The cells `tokens` fill of a bar `width` cells long for `most` tokens.
fn cells(tokens: u64, most: u64, width: usize) -> usize {
    ((tokens as f64 / most as f64) * width as f64).round() as usize
}

/// `1,234`, `12.3k`, `4.5M`, `6.7B`: the table's short numbers.
fn short(n: u64) -> String {
    number(n, true)
}

/// `text` cut to `width` characters, its end `…` where cut.
fn cut(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_owned();
    }
    text.chars().take(width.saturating_sub(1)).chain(['…']).collect()
}

/// Characters a terminal shows of `text`: its colour codes are none.
fn visible_width(text: &str) -> usize {
    let mut width = 0;
    let mut in_code = false;
    for c in text.chars() {
        match (in_code, c) {
            (false, '\x1b') => in_code = true,
            (true, 'm') => in_code = false,
            (true, _) => {}
            (false, _) => width += 1,
        }
    }
    width
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bar_is_as_long_as_its_share_and_a_short_number_as_the_table_writes_it() {
        assert_eq!((cells(50, 100, 40), cells(100, 100, 40), cells(0, 100, 40)), (20, 40, 0));
        assert_eq!(
            (short(9_999), short(12_345), short(524_414), short(3_400_000)),
            ("9,999".into(), "12.3k".into(), "524k".into(), "3.4M".into())
        );
        assert_eq!(cut("claude-sonnet-4-5-20250929", 10), "claude-so…");
        assert_eq!(visible_width("\x1b[36m█\x1b[0m claude 1.2k"), 13);
    }
}
