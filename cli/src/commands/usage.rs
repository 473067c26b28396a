//! `beectl usage` and `beectl prices`: the ledger's token usage and its
//! cost for people (a table: totals, thousands separators, short model
//! names, colour where wanted, a compact layout for narrow terminals) and
//! for scripts (JSON). When beed is down, what is new in the provider logs
//! is imported first, so the figures are today's.

use bee_daemon::ledger::stored::schema::Range;
use bee_daemon::ledger::views::calendar::Zone;
use bee_daemon::ledger::views::prices::PriceTable;
use bee_daemon::ledger::views::usage::{self, UsageAsk};
use bee_daemon::rendered::Rendered;
use bee_proto::exit::Exit;
use bee_proto::ledger::{PriceList, UsageGrouping, UsageReport, UsageRow};
use bee_proto::usage::usd_text_bounded;
use std::fmt::Write;
use std::io::IsTerminal;

use crate::commands::ledger::{ledger_dir, ledger_unavailable};
use crate::render::terminal::{colour_wanted, counted, short_model, thousands};
use beectl::args::{UsageArgs, UsageOutput};

/// Below this many columns the table is compact.
const WIDE_COLUMNS: usize = 100;

pub fn usage(args: UsageArgs) -> Rendered {
    let zone = match args.timezone.as_deref() {
        Some(name) => match Zone::named(name) {
            Ok(zone) => zone,
            Err(message) => return Rendered::invalid_usage(format!("--timezone: {message}")),
        },
        None => Zone::local(),
    };
    let now = bee_proto::time::now_unix_ms();
    let time = |text: &Option<String>, end: bool, flag: &str| -> Result<Option<i64>, String> {
        text.as_deref().map(|t| zone.parse_time(t, end, now).map_err(|m| format!("{flag}: {m}"))).transpose()
    };
    let range = match (time(&args.since, false, "--since"), time(&args.until, true, "--until")) {
        (Ok(since), Ok(until)) => Range { since_ms: since.unwrap_or(0), until_ms: until.unwrap_or(now) },
        (Err(message), _) | (_, Err(message)) => return Rendered::invalid_usage(message),
    };
    if range.since_ms >= range.until_ms {
        return Rendered::invalid_usage("--since must be before --until");
    }
    let prices = match price_table(args.prices.as_deref()) {
        Ok(prices) => prices,
        Err(rendered) => return rendered,
    };
    let dir = match ledger_dir() {
        Ok(dir) => dir,
        Err(rendered) => return rendered,
    };
    let ask = UsageAsk { range, by: args.by, zone, filters: args.filters.clone() };
    let read = || usage::report(&dir, &ask, &prices);
    let report = if args.no_import { read() } else { crate::commands::ingest::catch_up(read) };
    let report = match report {
        Ok(report) => report,
        Err(issue) => return ledger_unavailable(issue, &dir),
    };
    let table = match args.output {
        UsageOutput::Json => false,
        UsageOutput::Table => true,
        UsageOutput::Auto => std::io::stdout().is_terminal(),
    };
    if !table {
        return Rendered::json(Exit::Success, &report);
    }
    let columns = terminal_columns();
    let style = Style {
        columns,
        colour: colour_wanted(),
        compact: args.compact || columns < WIDE_COLUMNS,
        verbose: args.verbose,
    };
    Rendered { exit: Exit::Success, bytes: render(&report, style).into_bytes() }
}

pub fn prices(file: Option<String>, json: bool) -> Rendered {
    let prices = match price_table(file.as_deref()) {
        Ok(prices) => prices,
        Err(rendered) => return rendered,
    };
    let list = prices.list();
    if json || !std::io::stdout().is_terminal() {
        return Rendered::json(Exit::Success, &list);
    }
    Rendered { exit: Exit::Success, bytes: render_prices(&list).into_bytes() }
}

fn price_table(file: Option<&str>) -> Result<PriceTable, Rendered> {
    match file {
        None => Ok(PriceTable::bundled()),
        Some(path) => PriceTable::from_file(std::path::Path::new(path))
            .map_err(|err| Rendered::invalid_usage(format!("--prices: {err}"))),
    }
}

/// `COLUMNS` when set, else the terminal's width, else 80.
fn terminal_columns() -> usize {
    if let Some(columns) = std::env::var("COLUMNS").ok().and_then(|c| c.trim().parse::<usize>().ok()) {
        return columns;
    }
    rustix::termios::tcgetwinsize(std::io::stdout()).map_or(80, |size| usize::from(size.ws_col).max(20))
}

#[derive(Debug, Clone, Copy)]
pub struct Style {
    pub columns: usize,
    pub colour: bool,
    pub compact: bool,
    pub verbose: bool,
}

impl Style {
    fn paint(&self, code: &str, text: &str) -> String {
        if self.colour { format!("\x1b[{code}m{text}\x1b[0m") } else { text.to_owned() }
    }
}

fn dollars(cost: Option<f64>, lower_bound: bool, unpriced: bool) -> String {
    match cost {
        Some(cost) => usd_text_bounded(cost, lower_bound),
        None if unpriced => "unpriced".to_owned(),
        None => "-".to_owned(),
    }
}

fn count(n: Option<u64>, lower_bound: bool) -> String {
    n.map_or_else(|| "-".to_owned(), |n| format!("{}{}", if lower_bound { "≥" } else { "" }, thousands(n)))
}

fn title(by: UsageGrouping) -> &'static str {
    match by {
        UsageGrouping::Day => "DAY",
        UsageGrouping::Week => "WEEK OF",
        UsageGrouping::Month => "MONTH",
        UsageGrouping::Session => "SESSION",
        UsageGrouping::Model => "MODEL",
        UsageGrouping::Block => "BLOCK (UTC)",
    }
}

/// The cells of one row: key, models, then the figures.
fn cells(report: &UsageReport, row: &UsageRow, key: String, style: Style) -> Vec<String> {
    let bound = row.partial_parts > 0;
    let t = &row.tokens;
    let models: Vec<&str> = row.models.iter().map(|m| short_model(m)).collect();
    let mut cells = vec![key];
    if report.by != UsageGrouping::Model {
        cells.push(models.join(", "));
    }
    cells.push(count(t.input_tokens, bound));
    cells.push(count(t.output_tokens, bound));
    if !style.compact || style.verbose {
        cells.push(count(t.cache_creation_input_tokens, bound));
        cells.push(count(t.cache_read_input_tokens, bound));
    }
    cells.push(count(t.total_tokens, bound));
    if report.totals.reported_cost_usd.is_some() {
        // Sessions that reported no cost are left out of what was reported.
        cells.push(dollars(row.reported_cost_usd, row.sessions_without_cost.is_some_and(|n| n > 0), false));
    }
    // An estimate over a part that lacks a counter, or over an unpriced
    // model, is a lower bound like the counts it is priced from.
    cells.push(dollars(row.estimated_cost_usd, bound || row.unpriced_parts > 0, row.unpriced_parts > 0));
    cells
}

/// The usage table.
pub fn render(report: &UsageReport, style: Style) -> String {
    let mut out = String::new();
    let local = |utc: &str| {
        let zone = Zone::named(&report.timezone).ok();
        match (bee_proto::time::parse_rfc3339_ms(utc), zone) {
            (Some(0), _) => "the beginning".to_owned(),
            (Some(ms), Some(zone)) => zone.local_minute(ms),
            _ => utc.to_owned(),
        }
    };
    let heading = format!(
        "Usage by {}, {} → {} ({})",
        report.by.as_str(),
        local(&report.since_utc),
        local(&report.until_utc),
        report.timezone
    );
    let _ = writeln!(out, "{}", style.paint("1", &heading));
    let mut header = vec![title(report.by).to_owned()];
    if report.by != UsageGrouping::Model {
        header.push("MODELS".to_owned());
    }
    header.extend(["INPUT", "OUTPUT"].map(str::to_owned));
    if !style.compact || style.verbose {
        header.extend(["CACHE WRITE", "CACHE READ"].map(str::to_owned));
    }
    header.push("TOTAL".to_owned());
    if report.totals.reported_cost_usd.is_some() {
        header.push("REPORTED".to_owned());
    }
    header.push("EST. COST".to_owned());
    let key_of = |row: &UsageRow| -> String {
        let key = row.key.clone().unwrap_or_else(|| "(unknown)".to_owned());
        let key = match report.by {
            UsageGrouping::Model => short_model(&key).to_owned(),
            UsageGrouping::Session if style.compact => key.chars().take(8).collect(),
            UsageGrouping::Block => {
                let block = row.block.as_ref();
                let provider = block.map_or("", |b| b.provider.as_str());
                let inferred = block.is_some_and(|b| b.source == bee_proto::ledger::BlockSource::Inferred);
                format!(
                    "{} {provider}{}",
                    &key[..16.min(key.len())].replace('T', " "),
                    if inferred { " (inferred)" } else { "" }
                )
            }
            _ => key,
        };
        match (&row.project, report.by) {
            (Some(project), UsageGrouping::Session) if !style.compact => format!("{key} {project}"),
            _ => key,
        }
    };
    let mut rows: Vec<Vec<String>> = report.rows.iter().map(|row| cells(report, row, key_of(row), style)).collect();
    let mut totals = cells(report, &report.totals, "Total".to_owned(), style);
    if report.by != UsageGrouping::Model {
        // The models of every row again would only be noise.
        totals[1].clear();
    }
    rows.push(totals);
    let text_columns = if report.by == UsageGrouping::Model { 1 } else { 2 };
    let mut widths: Vec<usize> = (0..header.len())
        .map(|i| {
            std::iter::once(&header)
                .chain(rows.iter())
                .map(|r| r.get(i).map_or(0, |c| c.chars().count()))
                .max()
                .unwrap_or(0)
        })
        .collect();
    // Fit the terminal: the free-text columns (models, then the key) give
    // up width, down to 8 characters each, their cells cut with "…".
    let mut excess = (widths.iter().sum::<usize>() + 2 * widths.len()).saturating_sub(style.columns);
    for column in (0..text_columns).rev() {
        let give = excess.min(widths[column].saturating_sub(8));
        widths[column] -= give;
        excess -= give;
        for row in &mut rows {
            if row[column].chars().count() > widths[column] {
                row[column] = row[column].chars().take(widths[column] - 1).collect::<String>() + "…";
            }
        }
    }
    let totals = rows.pop().unwrap_or_default();
    let line = |cells: &[String]| -> String {
        let mut line = String::from(" ");
        for (i, cell) in cells.iter().enumerate() {
            let pad = widths[i] - cell.chars().count();
            line.push(' ');
            if i < text_columns {
                line.push_str(cell);
                line.push_str(&" ".repeat(pad));
            } else {
                line.push_str(&" ".repeat(pad));
                line.push_str(cell);
            }
            if i + 1 < cells.len() {
                line.push(' ');
            }
        }
        line.trim_end().to_owned()
    };
    let _ = writeln!(out, "{}", style.paint("36", &line(&header)));
    for row in &rows {
        let _ = writeln!(out, "{}", line(row));
    }
    let rule = line(&header).chars().count().saturating_sub(2);
    let _ = writeln!(out, "  {}", "─".repeat(rule));
    let _ = writeln!(out, "{}", style.paint("1;33", &line(&totals)));
    notes(report, style, &mut out);
    out
}

fn notes(report: &UsageReport, style: Style, out: &mut String) {
    let mut notes: Vec<String> = Vec::new();
    if report.rows.is_empty() {
        notes.push("No usage in this range (the logs Bee read hold none).".to_owned());
    }
    if report.partial_parts > 0 {
        notes.push(format!(
            "≥: {} lacked a counter their provider reports; the sums and costs they are in are lower bounds.",
            counted(report.partial_parts, "part")
        ));
    }
    if let (Some(_), Some(sessions @ 1..)) = (report.totals.reported_cost_usd, report.totals.sessions_without_cost) {
        notes.push(format!(
            "REPORTED leaves out {} with usage that reported no cost (Codex never does): a lower bound where marked ≥.",
            counted(sessions, "session")
        ));
    }
    if report.pending_responses > 0 {
        notes.push(format!(
            "{} responses are still being written; their counters may grow.",
            thousands(report.pending_responses)
        ));
    }
    if !report.unpriced_models.is_empty() {
        notes.push(format!(
            "Not in the price table, so not estimated: {} ({}).",
            report.unpriced_models.join(", "),
            counted(report.totals.unpriced_parts, "part")
        ));
    }
    if report.project_unknown_parts > 0 {
        notes.push(format!("{} with no known project are left out.", counted(report.project_unknown_parts, "part")));
    }
    for unrecorded in &report.unrecorded_calls {
        notes.push(format!(
            "{} keeps no record of {}: its figures are a lower bound of what was served.",
            unrecorded.agent.as_str(),
            unrecorded.calls
        ));
    }
    if report.issues.iter().any(|i| i == bee_proto::ledger::CORRUPT_ISSUE) {
        notes.push("Some ledger records fail their checksum and are left out (corrupt).".to_owned());
    }
    let producer = report.totals.producer_counted_calls;
    if producer > 0 {
        notes.push(format!("{producer} calls left no log: their producer's own counters are used."));
    }
    notes.push(format!(
        "EST. COST is an estimate from a price table{}{}",
        if style.verbose { "" } else { " (--verbose: which)" },
        if report.totals.reported_cost_usd.is_some() { "; REPORTED is what the provider reported." } else { "." }
    ));
    if style.verbose {
        notes.push(format!(
            "Prices: {} ({} models), {}.",
            report.prices.source,
            report.prices.models,
            report.prices.date.as_deref().map_or_else(|| "date unknown".to_owned(), |d| format!("as of {d}"))
        ));
    }
    for note in notes {
        for line in wrap(&note, style.columns.saturating_sub(2).max(40)) {
            let _ = writeln!(out, "  {line}");
        }
    }
}

/// `text` in lines of at most `width` characters, broken between words.
fn wrap(text: &str, width: usize) -> Vec<String> {
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

fn render_prices(list: &PriceList) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "Prices — {} — {}", list.source, list.date.as_deref().unwrap_or("date unknown"));
    let _ = writeln!(
        out,
        "  {:<30} {:>9} {:>9} {:>12} {:>11}  LONG PROMPTS",
        "MODEL", "INPUT", "OUTPUT", "CACHE WRITE", "CACHE READ"
    );
    let price = |p: Option<f64>| p.map_or_else(|| "-".to_owned(), |p| format!("{p}"));
    for model in &list.models {
        let tiers: Vec<String> = model
            .tiers
            .iter()
            .map(|t| format!(">{}k: in {} out {}", t.above_tokens / 1000, price(t.input), price(t.output)))
            .collect();
        let _ = writeln!(
            out,
            "  {:<30} {:>9} {:>9} {:>12} {:>11}  {}",
            model.model,
            price(model.input),
            price(model.output),
            price(model.cache_write),
            price(model.cache_read),
            tiers.join("; ")
        );
    }
    let _ = writeln!(out, "  {} per model; a model not listed is never estimated.", list.unit);
    for (model, why) in &list.skipped {
        let _ = writeln!(out, "  skipped {model}: {why}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_models_are_shown_for_people() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_000), "1,000");
        assert_eq!(thousands(1_234_567), "1,234,567");
        assert_eq!(short_model("claude-sonnet-4-5-20250929"), "sonnet-4-5");
        assert_eq!(short_model("claude-opus-4-1"), "opus-4-1");
        assert_eq!(short_model("gpt-5-codex"), "gpt-5-codex");
    }

    /// A day of two responses, one of them without its cache-write
    /// counter: what `beectl usage` answered for it.
    fn partial_day(reported: Option<f64>) -> UsageReport {
        let row = UsageRow {
            key: Some("2026-12-01".to_owned()),
            models: vec!["claude-sonnet-4-5-20250929".to_owned()],
            responses: 2,
            tokens: bee_proto::usage::Counters {
                input_tokens: Some(20),
                cache_creation_input_tokens: Some(5),
                cache_read_input_tokens: Some(200),
                output_tokens: Some(100),
                total_tokens: Some(165),
                ..Default::default()
            },
            partial_parts: 1,
            reported_cost_usd: reported,
            estimated_cost_usd: Some(0.00163875),
            ..UsageRow::default()
        };
        UsageReport {
            schema_version: 3,
            by: UsageGrouping::Day,
            since_utc: "2026-12-01T00:00:00.000Z".to_owned(),
            until_utc: "2026-12-02T00:00:00.000Z".to_owned(),
            timezone: "UTC".to_owned(),
            source: "provider_reported_counters".to_owned(),
            prices: bee_proto::ledger::PriceSource { source: "a table".to_owned(), date: None, models: 1 },
            filters: Default::default(),
            rows: vec![row.clone()],
            totals: UsageRow { key: None, ..row },
            partial_parts: 1,
            pending_responses: 0,
            unpriced_models: Vec::new(),
            project_unknown_parts: 0,
            unrecorded_calls: Vec::new(),
            issues: vec!["partial".to_owned()],
        }
    }

    /// The estimate over a part that lacks a counter is a lower bound like
    /// the counts it is priced from, and the notes name only the columns
    /// the table has.
    #[test]
    fn a_partial_rows_estimate_is_a_lower_bound() {
        let style = Style { columns: 120, colour: false, compact: false, verbose: false };
        let table = render(&partial_day(None), style);
        let figures: Vec<&str> = table.lines().filter(|l| l.contains("≥165")).collect();
        assert_eq!(figures.len(), 2, "{table}");
        assert!(figures.iter().all(|l| l.ends_with(" ≥$0.0016")), "{table}");
        assert!(table.contains("≥: 1 part lacked a counter their provider reports"), "{table}");
        assert!(table.contains("EST. COST is an estimate from a price table (--verbose: which)."), "{table}");
        assert!(!table.contains("REPORTED"), "{table}");
        let table = render(&partial_day(Some(0.5)), style);
        assert!(table.contains("REPORTED  EST. COST") && table.contains("$0.50   ≥$0.0016"), "{table}");
        assert!(table.contains("; REPORTED is what the provider reported."), "{table}");
        assert!(!table.contains("≥$0.50") && !table.contains("REPORTED leaves out"), "{table}");
        // A session of the day reported no cost: what was reported leaves it out.
        let mut left_out = partial_day(Some(0.5));
        for row in left_out.rows.iter_mut().chain([&mut left_out.totals]) {
            row.sessions_without_cost = Some(1);
        }
        let table = render(&left_out, style);
        assert!(table.contains("≥$0.50   ≥$0.0016"), "{table}");
        assert!(table.contains("REPORTED leaves out 1 session with usage that reported no cost"), "{table}");
    }
}
