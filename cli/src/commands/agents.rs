//! `beectl agents`: every agent Bee reads — where it looks, what it found
//! there, how many of its files and responses the ledger holds, and how its
//! reader was verified — as a table, or JSON for scripts.

use bee_daemon::ledger::stored::schema::Range;
use bee_daemon::ledger::stored::store::Reader;
use bee_daemon::rendered::Rendered;
use bee_proto::exit::Exit;
use std::fmt::Write;
use std::io::IsTerminal;

/// `beectl agents`: read offline, as the ledger's other views are.
pub fn run(json: bool) -> Rendered {
    let roots = bee_daemon::ledger::intake::ingest::Roots::from_env();
    let reader = crate::commands::ledger::ledger_dir().ok().and_then(|dir| Reader::open(&dir).ok());
    let offsets = reader.as_ref().and_then(|reader| reader.offsets().ok()).unwrap_or_default();
    let all = Range { since_ms: i64::MIN / 2, until_ms: i64::MAX / 2 };
    let responses = reader.as_ref().and_then(|reader| reader.usage(all, &|_, _| 0).ok()).map(|summary| {
        let mut counted = std::collections::BTreeMap::new();
        for (key, part) in &summary.parts {
            *counted.entry(key.provider).or_insert(0) += part.responses;
        }
        counted
    });
    let report = bee_daemon::ledger::intake::ingest::agents_report(&roots, &offsets, responses.as_ref());
    if json || !std::io::stdout().is_terminal() {
        return Rendered::json(Exit::Success, &report);
    }
    Rendered { exit: Exit::Success, bytes: render_agents(&report).into_bytes() }
}

fn render_agents(report: &bee_proto::ledger::AgentsReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "  {:<9} {:<12} {:>6} {:>5} {:>10}  {:<24} {:<24} LOOKS IN",
        "AGENT", "", "FILES", "READ", "RESPONSES", "NEWEST RECORD", "VERIFIED"
    );
    for row in &report.agents {
        let responses = row.responses.map_or_else(|| "no ledger".to_owned(), |n| n.to_string());
        let looks_in =
            if row.found { row.looks_in.join(", ") } else { format!("{} (nothing there)", row.looks_in.join(", ")) };
        let _ = writeln!(
            out,
            "  {:<9} {:<12} {:>6} {:>5} {:>10}  {:<24} {:<24} {}",
            row.agent.as_str(),
            row.title,
            row.files,
            row.files_read,
            responses,
            row.newest_record_utc.as_deref().unwrap_or("-"),
            row.verified,
            looks_in
        );
    }
    write_skipped(&mut out, report.agents.iter().flat_map(|row| row.skipped_files.iter().map(move |f| (row.agent, f))));
    out
}

/// The entries of agents' folders that are not read, after a table.
pub(crate) fn write_skipped<'a>(
    out: &mut String,
    skipped: impl Iterator<Item = (bee_proto::ledger::Provider, &'a bee_proto::ledger::SkippedFile)>,
) {
    let mut heading = true;
    for (agent, file) in skipped {
        if std::mem::take(&mut heading) {
            let _ =
                writeln!(out, "\nNot read (a link is never followed; FIFOs, sockets and devices are never opened):");
        }
        let _ = writeln!(out, "  {:<9} {:<7} {}", agent.as_str(), file.kind, file.path);
    }
}
