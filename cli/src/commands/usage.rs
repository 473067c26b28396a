//! `beectl usage` and `beectl prices`: the ledger's token usage and its
//! cost for people (a table: totals, thousands separators, short model
//! names, colour where wanted, a compact layout for narrow terminals) and
//! for scripts (JSON). When beed is down, what is new in the provider logs
//! is imported first, so the figures are today's.

use bee_daemon::ledger::views::calendar::Zone;
use bee_daemon::ledger::views::prices::PriceTable;
use bee_daemon::ledger::views::usage::{self, UsageAsk};
use bee_daemon::rendered::Rendered;
use bee_proto::exit::Exit;
use bee_proto::ledger::{PriceList, UsageGrouping, UsageReport, UsageRow};
use bee_proto::usage::usd_text_bounded;
use std::collections::HashMap;
use std::fmt::Write;

use crate::commands::ledger::{ledger_dir, ledger_unavailable};
use crate::render::terminal::{colour_wanted, counted, number, short_model, thousands, wrap};
use beectl::args::{UsageArgs, UsageOutput};

/// Below this many columns the table is compact.
const WIDE_COLUMNS: usize = 100;

pub fn usage(args: UsageArgs) -> Rendered {
    // The zone and the range read as the usage page's data route reads them.
    let words = usage::UsageWords {
        since: args.since.clone(),
        until: args.until.clone(),
        timezone: args.timezone.clone(),
        ..usage::UsageWords::default()
    };
    let asked = match words.ask(bee_proto::time::now_unix_ms()) {
        Ok(asked) => asked,
        Err(message) => return Rendered::invalid_usage(message),
    };
    let prices = match price_table(args.prices.as_deref()) {
        Ok(prices) => prices,
        Err(rendered) => return rendered,
    };
    let dir = match ledger_dir() {
        Ok(dir) => dir,
        Err(rendered) => return rendered,
    };
    let ask = UsageAsk { order: args.order, last: args.last, filters: args.filters.clone(), ..asked };
    // A chart of one key other than the agent or the model stacks each
    // bar by agent: the report is asked with that second key.
    let by = match (args.output, args.by.then, args.by.first) {
        (UsageOutput::Chart, None, first) if !matches!(first, UsageGrouping::Agent | UsageGrouping::Model) => {
            bee_proto::ledger::UsageBy { first, then: Some(UsageGrouping::Agent) }
        }
        _ => args.by,
    };
    if args.output == UsageOutput::Chart && !crate::render::terminal::for_people(None) {
        return Rendered::invalid_usage(
            "--chart draws bars for people on a terminal; piped, ask --json or --format csv for the figures",
        );
    }
    let ask = UsageAsk { by, ..ask };
    let read = || usage::report(&dir, &ask, &prices);
    let report = if args.no_import { read() } else { crate::commands::ingest::catch_up(read) };
    let report = match report {
        Ok(report) => report,
        Err(issue) => return ledger_unavailable(issue, &dir),
    };
    let table = match args.output {
        UsageOutput::Json => false,
        UsageOutput::Table => true,
        UsageOutput::Auto => crate::render::terminal::for_people(None),
        UsageOutput::Csv => {
            return match crate::commands::usage_csv::render(&report) {
                Ok(bytes) => Rendered { exit: Exit::Success, bytes },
                Err(err) => Rendered::json(
                    Exit::Unavailable,
                    &bee_proto::delivery::CommandError::unavailable("io", format!("CSV: {err}")),
                ),
            };
        }
        UsageOutput::Chart => {
            let columns = terminal_columns();
            let chart = crate::commands::usage_chart::render(&report, &range_words(&report), columns, colour_wanted());
            return Rendered { exit: Exit::Success, bytes: chart.into_bytes() };
        }
    };
    if !table {
        // A row is a few hundred bytes: room for them all at once, not
        // grown (and copied) a doubling at a time over a session view's megabytes.
        let mut bytes = Vec::with_capacity(4_096 + 768 * (report.rows.len() + report.subtotals.len()));
        return match serde_json::to_writer(&mut bytes, &report) {
            Ok(()) => {
                bytes.push(b'\n');
                Rendered { exit: Exit::Success, bytes }
            }
            Err(_) => Rendered::json(Exit::Success, &report),
        };
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
    if !crate::render::terminal::for_people(json.then_some(false)) {
        return Rendered::json(Exit::Success, &prices.listing());
    }
    Rendered { exit: Exit::Success, bytes: render_prices(&prices.list(), &prices, file.is_some()).into_bytes() }
}

/// `--prices FILE` alone (as it always was), else the bundled table with
/// the user's `~/.bee/prices.json` over it.
fn price_table(file: Option<&str>) -> Result<PriceTable, Rendered> {
    match file {
        Some(path) => PriceTable::from_file(std::path::Path::new(path))
            .map_err(|err| Rendered::invalid_usage(format!("--prices: {err}"))),
        // A broken user file is no mistake on the command line, and never
        // silently left out: nothing is estimated until it is fixed.
        None => PriceTable::with_user_file(PriceTable::user_file().as_deref()).map_err(|err| {
            let message = format!("{err} (Bee's user price file, merged over the bundled table: fix or remove it)");
            Rendered::json(
                Exit::Unavailable,
                &bee_proto::delivery::CommandError::unavailable("invalid_price_file", message),
            )
        }),
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

/// A figure of the agents' own (credits, unsplit or estimated tokens), marked a lower
/// bound while some of its parts are unknown; `-` where no part has one.
fn bounded(figure: Option<String>, unknown_parts: u64) -> String {
    match figure {
        Some(figure) if unknown_parts > 0 => format!("≥{figure}"),
        Some(figure) => figure,
        None => "-".to_owned(),
    }
}

fn title(by: UsageGrouping) -> &'static str {
    match by {
        UsageGrouping::Day => "DAY",
        UsageGrouping::Hour => "HOUR",
        UsageGrouping::Week => "WEEK OF",
        UsageGrouping::Month => "MONTH",
        UsageGrouping::Session => "SESSION",
        UsageGrouping::Model => "MODEL",
        UsageGrouping::Block => "BLOCK (UTC)",
        UsageGrouping::Agent => "AGENT",
        UsageGrouping::Project => "PROJECT",
    }
}

/// The text columns of a table beside its key, by what the key is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Text {
    Agent,
    LastActive,
    Project,
    Models,
}

impl Text {
    fn title(self) -> &'static str {
        match self {
            Text::Agent => "AGENT",
            Text::LastActive => "LAST ACTIVE",
            Text::Project => "PROJECT",
            Text::Models => "MODELS",
        }
    }
}

/// The figures of a table: which columns it has, and how numbers are written.
#[derive(Debug, Clone, Copy)]
struct Figures {
    cache: bool,
    reported: bool,
    agent_cost: bool,
    /// Kiro's credits: its own unit, a column of their own.
    credits: bool,
    /// Warp's totals of input and output together: in no other column.
    unsplit: bool,
    /// Aider's own counts of its tokens (estimates): in no other column.
    estimated: bool,
    short: bool,
    /// Headers as short as they go (`CACHE W`, `EST. $`), for the narrowest terminals.
    narrow: bool,
}

impl Figures {
    fn header(self) -> Vec<&'static str> {
        let pick = |wide: &'static str, narrow: &'static str| if self.narrow { narrow } else { wide };
        let mut header = vec!["INPUT", "OUTPUT"];
        if self.cache {
            header.extend([pick("CACHE WRITE", "CACHE W"), pick("CACHE READ", "CACHE R")]);
        }
        header.push("TOTAL");
        if self.unsplit {
            header.push("UNSPLIT");
        }
        if self.estimated {
            header.push(pick("AGENT EST.", "AG. EST."));
        }
        if self.reported {
            header.push(pick("REPORTED", "REPORTED"));
        }
        if self.agent_cost {
            header.push(pick("AGENT COST", "AGENT $"));
        }
        if self.credits {
            header.push("CREDITS");
        }
        header.push(pick("EST. COST", "EST. $"));
        header
    }

    fn cells(self, row: &UsageRow) -> Vec<String> {
        let bound = row.partial_parts > 0;
        let t = &row.tokens;
        // A column some parts could not report is a lower bound in this row.
        let column_bound = |name: &str| bound || row.partial_columns.contains_key(name);
        let count = |n: Option<u64>, name: &str| {
            n.map_or_else(
                || "-".to_owned(),
                |n| format!("{}{}", if column_bound(name) { "≥" } else { "" }, number(n, self.short)),
            )
        };
        let mut cells = vec![count(t.input_tokens, "inputTokens"), count(t.output_tokens, "outputTokens")];
        if self.cache {
            cells.push(count(t.cache_creation_input_tokens, "cacheCreationInputTokens"));
            cells.push(count(t.cache_read_input_tokens, "cacheReadInputTokens"));
        }
        cells.push(count(t.total_tokens, "totalTokens"));
        if self.unsplit {
            cells.push(bounded(row.unsplit_tokens.map(|n| number(n, self.short)), row.unsplit_tokens_unknown_parts));
        }
        if self.estimated {
            cells.push(bounded(
                row.agent_estimated_tokens.map(|n| format!("~{}", number(n, self.short))),
                row.agent_estimated_tokens_unknown_parts,
            ));
        }
        if self.reported {
            // Sessions that reported no cost are left out of what was reported.
            cells.push(dollars(row.reported_cost_usd, row.sessions_without_cost.is_some_and(|n| n > 0), false));
        }
        if self.agent_cost {
            // Responses of agents that write their cost but left it out of these.
            cells.push(dollars(row.agent_cost_usd, row.agent_cost_unknown_parts > 0, false));
        }
        if self.credits {
            cells.push(bounded(
                row.agent_credits.map(|credits| format!("{credits:.2}")),
                row.agent_credits_unknown_parts,
            ));
        }
        // An estimate over a part that lacks a counter, or over an unpriced
        // model, is a lower bound like the counts it is priced from.
        cells.push(dollars(row.estimated_cost_usd, bound || row.unpriced_parts > 0, row.unpriced_parts > 0));
        cells
    }
}

/// The text of one row's text column.
fn text_cell(text: Text, row: &UsageRow, zone: Option<&Zone>) -> String {
    match text {
        Text::Agent => match (&row.agent, row.agents.as_slice()) {
            (Some(agent), _) => agent.as_str().to_owned(),
            (None, agents) => agents.iter().map(|a| a.as_str()).collect::<Vec<_>>().join(", "),
        },
        Text::LastActive => row
            .last_at_utc
            .as_deref()
            .and_then(bee_proto::time::parse_rfc3339_ms)
            .map_or_else(|| "-".to_owned(), |ms| zone.map_or_else(|| ms.to_string(), |z| z.local_minute(ms))),
        Text::Project => row.project.clone().unwrap_or_else(|| "-".to_owned()),
        Text::Models => row.models.iter().map(|m| short_model(m)).collect::<Vec<_>>().join(", "),
    }
}

/// A key as a table shows it: a session by its shortest unique prefix, a
/// block with its agent and source.
fn key_text(grouping: UsageGrouping, key: Option<&str>, row: &UsageRow, prefixes: &HashMap<&str, String>) -> String {
    let Some(key) = key else { return "(unknown)".to_owned() };
    match grouping {
        UsageGrouping::Session => prefixes.get(key).cloned().unwrap_or_else(|| key.to_owned()),
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
        _ => key.to_owned(),
    }
}

/// What a table left out to fit its width, for its notes.
#[derive(Debug, Default)]
struct Fitted {
    cache_hidden: bool,
    hidden: Vec<&'static str>,
    short_numbers: bool,
    narrow_headers: bool,
}

/// The report's range in its zone's words: `2026-12-01 00:00 → 2026-12-07
/// 00:00 (Europe/Paris)`, `the beginning` for an open start.
fn range_words(report: &UsageReport) -> String {
    let zone = Zone::named(&report.timezone).ok();
    let local = |utc: &str| match (bee_proto::time::parse_rfc3339_ms(utc), &zone) {
        (Some(0), _) => "the beginning".to_owned(),
        (Some(ms), Some(zone)) => zone.local_minute(ms),
        _ => utc.to_owned(),
    };
    format!("{} → {} ({})", local(&report.since_utc), local(&report.until_utc), report.timezone)
}

/// The usage table.
pub fn render(report: &UsageReport, style: Style) -> String {
    let mut out = String::new();
    let zone = Zone::named(&report.timezone).ok();
    let heading = format!(
        "Usage by {}, {}",
        report.by.groupings().map(|g| g.as_str()).collect::<Vec<_>>().join(" and "),
        range_words(report)
    );
    let _ = writeln!(out, "{}", style.paint("1", &heading));
    let by = report.by;
    let sessions = by.has(UsageGrouping::Session);
    let mut texts: Vec<Text> = Vec::new();
    if sessions {
        texts.extend([Text::Agent, Text::LastActive, Text::Project]);
    }
    if !by.has(UsageGrouping::Model) {
        texts.push(Text::Models);
    }
    // Session ids cut where they differ from every other shown.
    let ids: Vec<&str> = report
        .rows
        .iter()
        .flat_map(|row| {
            let first = (by.first == UsageGrouping::Session).then_some(row.key.as_deref()).flatten();
            let then = (by.then == Some(UsageGrouping::Session)).then_some(row.subkey.as_deref()).flatten();
            first.into_iter().chain(then)
        })
        .collect();
    let prefixes: HashMap<&str, String> =
        ids.iter().copied().zip(crate::render::ids::unique_abbreviations(&ids, 8, 16)).collect();
    // The lines: each row, or grouped by two, each first key's subtotal with its rows indented beneath.
    let mut lines: Vec<(bool, String, &UsageRow)> = Vec::new();
    match by.then {
        None => {
            for row in &report.rows {
                lines.push((false, key_text(by.first, row.key.as_deref(), row, &prefixes), row));
            }
        }
        Some(then) => {
            for subtotal in &report.subtotals {
                lines.push((true, key_text(by.first, subtotal.key.as_deref(), subtotal, &prefixes), subtotal));
                // Two agents may spell the same session id: a session is its agent's.
                let same_session = |row: &&UsageRow| by.first != UsageGrouping::Session || row.agent == subtotal.agent;
                for row in report.rows.iter().filter(|row| row.key == subtotal.key).filter(same_session) {
                    lines.push((false, format!("  {}", key_text(then, row.subkey.as_deref(), row, &prefixes)), row));
                }
            }
        }
    }
    let key_title = match by.then {
        None => title(by.first).to_owned(),
        Some(then) => format!("{} / {}", title(by.first), title(then)),
    };
    let mut figures = Figures {
        cache: !style.compact || style.verbose,
        reported: report.totals.reported_cost_usd.is_some(),
        agent_cost: report.totals.agent_cost_usd.is_some(),
        credits: report.totals.agent_credits.is_some(),
        unsplit: report.totals.unsplit_tokens.is_some(),
        estimated: report.totals.agent_estimated_tokens.is_some(),
        short: false,
        narrow: false,
    };
    let mut fitted = Fitted { cache_hidden: !figures.cache, ..Fitted::default() };
    let width_of = |cells: &[String]| cells.iter().map(|c| c.chars().count() + 2).sum::<usize>();
    // Text cells, then figures; fitted to the terminal by giving up the
    // models' and projects' width, then writing numbers short, then hiding
    // text columns (each said in the notes).
    let build = |texts: &[Text], figures: Figures| -> (Vec<String>, Vec<Vec<String>>, Vec<String>) {
        let mut header = vec![key_title.clone()];
        header.extend(texts.iter().map(|t| t.title().to_owned()));
        header.extend(figures.header().into_iter().map(str::to_owned));
        let body = lines
            .iter()
            .map(|(_, key, row)| {
                let mut cells = vec![key.clone()];
                cells.extend(texts.iter().map(|t| text_cell(*t, row, zone.as_ref())));
                cells.extend(figures.cells(row));
                cells
            })
            .collect();
        let mut totals = vec!["Total".to_owned()];
        totals.extend(texts.iter().map(|_| String::new()));
        totals.extend(figures.cells(&report.totals));
        (header, body, totals)
    };
    let mut widths: Vec<usize>;
    let (mut header, mut body, mut totals);
    loop {
        (header, body, totals) = build(&texts, figures);
        widths = (0..header.len())
            .map(|i| {
                std::iter::once(&header)
                    .chain(body.iter())
                    .chain([&totals])
                    .map(|r| r.get(i).map_or(0, |c| c.chars().count()))
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        // Free text gives up width first, down to its title's.
        let mut excess =
            width_of(&widths.iter().map(|w| " ".repeat(*w)).collect::<Vec<_>>()).saturating_sub(style.columns);
        for (at, text) in texts.iter().enumerate().rev() {
            if matches!(text, Text::Models | Text::Project) {
                let column = at + 1;
                let give = excess.min(widths[column].saturating_sub(text.title().len().max(8)));
                widths[column] -= give;
                excess -= give;
            }
        }
        if excess == 0 {
            break;
        }
        if !figures.short {
            figures.short = true;
            fitted.short_numbers = true;
            continue;
        }
        if !figures.narrow && texts.iter().all(|t| *t == Text::Agent) {
            figures.narrow = true;
            fitted.narrow_headers = true;
            continue;
        }
        // Then whole text columns go, the least telling first.
        match [Text::Models, Text::Project, Text::LastActive].into_iter().find(|t| texts.contains(t)) {
            Some(text) => {
                texts.retain(|t| *t != text);
                fitted.hidden.push(text.title());
            }
            // Then the figures only one agent writes (the notes say which).
            None if figures.credits => {
                figures.credits = false;
                fitted.hidden.push("CREDITS");
            }
            None if figures.unsplit => {
                figures.unsplit = false;
                fitted.hidden.push("UNSPLIT");
            }
            None if figures.estimated => {
                figures.estimated = false;
                fitted.hidden.push("AGENT EST.");
            }
            None => {
                // Last, the agents' names and the keys give up width (cut
                // with `…`), down to what still tells them apart at a glance.
                let agent = texts.iter().position(|t| *t == Text::Agent).map(|at| (at + 1, 9));
                for (column, least) in agent.into_iter().chain([(0, 16)]) {
                    let give = excess.min(widths[column].saturating_sub(least));
                    widths[column] -= give;
                    excess -= give;
                }
                break;
            }
        }
    }
    let cut = |cell: &mut String, width: usize| {
        if cell.chars().count() > width {
            *cell = cell.chars().take(width.saturating_sub(1)).collect::<String>() + "…";
        }
    };
    let text_columns = 1 + texts.len();
    for row in body.iter_mut().chain([&mut totals]) {
        for (column, cell) in row.iter_mut().enumerate().take(text_columns) {
            cut(cell, widths[column]);
        }
    }
    let line = |cells: &[String]| -> String {
        let mut line = String::from(" ");
        for (i, cell) in cells.iter().enumerate() {
            let pad = widths[i].saturating_sub(cell.chars().count());
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
    for ((subtotal, _, _), cells) in lines.iter().zip(&body) {
        let text = line(cells);
        let _ = writeln!(out, "{}", if *subtotal { style.paint("1", &text) } else { text });
    }
    let rule = line(&header).chars().count().saturating_sub(2);
    let _ = writeln!(out, "  {}", "─".repeat(rule));
    let _ = writeln!(out, "{}", style.paint("1;33", &line(&totals)));
    notes(report, style, &fitted, &mut out);
    out
}

fn notes(report: &UsageReport, style: Style, fitted: &Fitted, out: &mut String) {
    let mut notes: Vec<String> = Vec::new();
    if report.rows.is_empty() {
        notes.push("No usage in this range (the logs Bee read hold none).".to_owned());
    }
    if fitted.cache_hidden {
        notes.push(
            "Compact: CACHE WRITE and CACHE READ are hidden, so INPUT + OUTPUT is less than TOTAL; --verbose or a \
             terminal of 100 columns shows them."
                .to_owned(),
        );
    }
    if !fitted.hidden.is_empty() {
        notes.push(format!(
            "Hidden to fit {} columns: {} (--json has every field).",
            style.columns,
            fitted.hidden.join(", ")
        ));
    }
    if fitted.short_numbers {
        notes.push("Numbers are shortened to fit: k thousand, M million, B billion.".to_owned());
    }
    if fitted.narrow_headers {
        notes.push("CACHE W and CACHE R are cache writes and reads; EST. $ the estimated cost.".to_owned());
    }
    if report.rows_left_out > 0 {
        notes.push(format!(
            "--last: {} with older activity are left out of the rows (not of the total).",
            counted(report.rows_left_out, "row")
        ));
    }
    if !report.totals.partial_columns.is_empty() {
        let columns: Vec<String> = report
            .totals
            .partial_columns
            .iter()
            .map(|(column, parts)| format!("{} ({})", column_words(column), counted(*parts, "part")))
            .collect();
        notes.push(format!(
            "≥: some agents cannot record {}; where they are mixed with agents that do, the sums are lower bounds.",
            columns.join(", ")
        ));
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
    if report.totals.copied_responses > 0 {
        notes.push(format!(
            "{} copied into other sessions (a fork, a resume) count in the session that made them.",
            counted(report.totals.copied_responses, "response")
        ));
    }
    if report.totals.agent_cost_unknown_parts > 0 && report.totals.agent_cost_usd.is_some() {
        notes.push(format!(
            "AGENT COST leaves out {} its agent wrote no cost for: a lower bound where marked ≥.",
            counted(report.totals.agent_cost_unknown_parts, "response")
        ));
    }
    if let Some(unsplit) = report.totals.unsplit_tokens {
        notes.push(format!(
            "UNSPLIT: {} tokens the agents counted only as totals of input and output together (Warp's): in no other \
             column and not in TOTAL{}.",
            number(unsplit, false),
            if report.totals.unsplit_tokens_unknown_parts > 0 { "; a lower bound where marked ≥" } else { "" }
        ));
    }
    if let Some(estimated) = report.totals.agent_estimated_tokens {
        notes.push(format!(
            "AGENT EST.: ~{} tokens the agents counted themselves (Aider's: its own estimate when it streams, and its \
             log does not say which are counts): in no other column and not in TOTAL{}.",
            number(estimated, false),
            if report.totals.agent_estimated_tokens_unknown_parts > 0 {
                "; a lower bound where marked ≥"
            } else {
                ""
            }
        ));
    }
    if let Some(credits) = report.totals.agent_credits {
        notes.push(format!(
            "CREDITS: {credits:.2} in the agents' own billing unit (Kiro's), neither tokens nor money{}.",
            if report.totals.agent_credits_unknown_parts > 0 { "; a lower bound where marked ≥" } else { "" }
        ));
    }
    notes.push(format!(
        "EST. COST is an estimate from a price table{}{}{}",
        if style.verbose { "" } else { " (--verbose: which)" },
        if report.totals.reported_cost_usd.is_some() { "; REPORTED is what the provider reported" } else { "" },
        if report.totals.agent_cost_usd.is_some() {
            "; AGENT COST is what the agents recorded themselves."
        } else {
            "."
        }
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

/// A token column's JSON name in words.
fn column_words(column: &str) -> &str {
    match column {
        "inputTokens" => "input",
        "cacheCreationInputTokens" => "cache writes",
        "cacheReadInputTokens" => "cache reads",
        "outputTokens" => "output",
        "reasoningOutputTokens" => "reasoning",
        "totalTokens" => "totals",
        other => other,
    }
}

/// `beectl prices` on a terminal: the table's source, date and size, the
/// user's file merged over it, then a model a line.
fn render_prices(list: &PriceList, table: &PriceTable, from_flag: bool) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Prices — {} — {} — {} models, {} aliases",
        list.source,
        list.date.as_deref().unwrap_or("date unknown"),
        thousands(list.models.len() as u64),
        thousands(table.aliases.len() as u64)
    );
    let user = match (&table.user, PriceTable::user_file()) {
        _ if from_flag => "--prices: this file alone, nothing merged over it.".to_owned(),
        (Some(user), _) => format!(
            "User prices: {} merged over the bundled table: {} added, {} replacing the bundled entry of its name{}.",
            user.path,
            counted(user.added, "model"),
            user.replaced,
            if user.skipped > 0 { format!(", {} skipped (below)", user.skipped) } else { String::new() }
        ),
        (None, Some(path)) => format!("User prices: none ({} does not exist).", path.display()),
        (None, None) => "User prices: none (no home directory).".to_owned(),
    };
    let _ = writeln!(out, "{user}");
    let width = list.models.iter().map(|m| m.model.chars().count()).max().unwrap_or(0).clamp(5, 64);
    let _ = writeln!(
        out,
        "  {:<width$} {:>9} {:>9} {:>12} {:>11}  LONG PROMPTS",
        "MODEL", "INPUT", "OUTPUT", "CACHE WRITE", "CACHE READ"
    );
    let price = |p: Option<f64>| p.map_or_else(|| "-".to_owned(), |p| format!("{p}"));
    // A threshold one short of a round figure is inclusive (xAI): from it on.
    let above = |tokens: u64| match (tokens + 1) % 1000 {
        0 => format!("≥{}k", (tokens + 1) / 1000),
        _ => format!(">{}k", tokens / 1000),
    };
    for model in &list.models {
        let tiers: Vec<String> = model
            .tiers
            .iter()
            .map(|t| format!("{}: in {} out {}", above(t.above_tokens), price(t.input), price(t.output)))
            .collect();
        let line = format!(
            "  {:<width$} {:>9} {:>9} {:>12} {:>11}  {}",
            model.model,
            price(model.input),
            price(model.output),
            price(model.cache_write),
            price(model.cache_read),
            tiers.join("; ")
        );
        let _ = writeln!(out, "{}", line.trim_end());
    }
    let _ = writeln!(
        out,
        "  {} per model; a cache price not listed is billed as input; a model not listed is never estimated.",
        list.unit
    );
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
            by: bee_proto::ledger::UsageBy::one(UsageGrouping::Day),
            since_utc: "2026-12-01T00:00:00.000Z".to_owned(),
            until_utc: "2026-12-02T00:00:00.000Z".to_owned(),
            timezone: "UTC".to_owned(),
            source: "provider_reported_counters".to_owned(),
            prices: bee_proto::ledger::PriceSource { source: "a table".to_owned(), date: None, models: 1 },
            filters: Default::default(),
            rows: vec![row.clone()],
            subtotals: Vec::new(),
            rows_left_out: 0,
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
