//! `--format table`: the delivery report for people. The numbers are the JSON
//! report's, parsed back from the very bytes the JSON view prints, so the two
//! views cannot disagree; unknown totals read "unknown", never 0.

use bee_daemon::rendered::Rendered;
use bee_proto::delivery::{Dimension, Report, TotalsStatus};
use std::fmt::Write;

/// Turns a rendered JSON report into its table; anything that is not a report
/// (the cap answer) is printed as it is.
pub fn delivery_report(rendered: Rendered) -> Rendered {
    let Ok(report) = serde_json::from_slice::<Report>(&rendered.bytes) else {
        return rendered;
    };
    Rendered { exit: rendered.exit, bytes: render(&report).into_bytes() }
}

fn render(report: &Report) -> String {
    let known = report.totals_status == TotalsStatus::LowerBound;
    let figure = |n: u64| if known { n.to_string() } else { "unknown".to_owned() };
    let tokens = report.estimates.first().map_or(0, |e| e.delivered_estimated_tokens);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Delivery report — {}",
        if known {
            "at least these (the observation window is never complete)"
        } else {
            "no observations: unknown, not zero"
        }
    );
    let _ = writeln!(
        out,
        "  observed events   {} (delivered {}, write failed {}, partial {})",
        figure(report.observed_events),
        figure(report.event_kinds.delivered),
        figure(report.event_kinds.write_failed),
        figure(report.event_kinds.partial_write)
    );
    let _ = writeln!(
        out,
        "  delivered bytes   {} (UTF-8 as written and flushed: the surface's JSON wrapper and newline included)",
        figure(report.delivered_utf8_bytes)
    );
    let content = match report.delivered_content_utf8_bytes {
        Some(bytes) => figure(bytes),
        None => format!("unknown ({} delivered events did not record it)", report.content_unknown_events),
    };
    let _ = writeln!(out, "  the texts' own   {content} (the blocks' own bytes: the wrapper left out)");
    let _ = writeln!(
        out,
        "  estimated tokens  {} (utf16-ceil-div4 v1: an estimate, not a tokenizer count)",
        figure(tokens)
    );
    let issues: Vec<String> = report.issues.iter().map(|i| format!("{i:?}")).collect();
    let _ = writeln!(
        out,
        "  issues            {}",
        serde_json::to_string(&report.issues).unwrap_or_else(|_| issues.join(", "))
    );
    for (dimension, title) in
        [(Dimension::Item, "ITEM"), (Dimension::Surface, "SURFACE"), (Dimension::Session, "SESSION")]
    {
        let rows: Vec<_> = report.groups.iter().filter(|g| g.dimension == dimension).collect();
        if rows.is_empty() {
            continue;
        }
        let width = rows.iter().map(|g| g.identity.len()).max().unwrap_or(0).max(title.len());
        let version_width = rows.iter().map(|g| g.version.len()).max().unwrap_or(0).max(7);
        let _ = writeln!(out);
        let _ = writeln!(
            out,
            "  {title:<width$}  {:<version_width$}  {:>8}  {:>12}  {:>11}",
            "VERSION", "EVENTS", "BYTES", "EST.TOKENS"
        );
        for group in rows {
            let tokens = group.estimates.first().map_or(0, |e| e.delivered_estimated_tokens);
            let _ = writeln!(
                out,
                "  {:<width$}  {:<version_width$}  {:>8}  {:>12}  {:>11}",
                group.identity, group.version, group.delivered_events, group.delivered_utf8_bytes, tokens
            );
        }
    }
    if report.omitted_groups > 0 {
        let _ = writeln!(out, "\n  {} more groups not shown (--limit)", report.omitted_groups);
    }
    let _ = writeln!(out, "\n  Views show the same delivered output three ways: never add them up.");
    out
}
