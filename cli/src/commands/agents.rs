//! `beectl agents`: every agent Bee reads — where it looks, what it found
//! there, how many of its files and responses the ledger holds, the time
//! of its newest record there (the record's own time, never a file's), how
//! its reader was verified and what its records can say — as a table, or
//! JSON for scripts; both say the same.

use bee_daemon::ledger::stored::store::Reader;
use bee_daemon::ledger::views::newest;
use bee_daemon::rendered::Rendered;
use bee_proto::exit::Exit;
use std::collections::BTreeMap;
use std::fmt::Write;

/// `beectl agents`: read offline, as the ledger's other views are.
pub fn run(json: bool) -> Rendered {
    let roots = bee_daemon::ledger::intake::ingest::Roots::from_env();
    let reader = crate::commands::ledger::ledger_dir().ok().and_then(|dir| Reader::open(&dir).ok());
    let offsets = reader.as_ref().and_then(|reader| reader.offsets().ok()).unwrap_or_default();
    let in_ledger = reader.as_ref().and_then(|reader| newest::by_agent(reader).ok());
    let responses: Option<BTreeMap<_, _>> =
        in_ledger.as_ref().map(|found| found.iter().map(|(agent, found)| (*agent, found.responses)).collect());
    let newest: Option<BTreeMap<_, _>> = in_ledger
        .as_ref()
        .map(|found| found.iter().filter_map(|(agent, found)| Some((*agent, found.newest_ms?))).collect());
    let mut report =
        bee_daemon::ledger::intake::ingest::agents_report(&roots, &offsets, responses.as_ref(), newest.as_ref());
    for row in &mut report.agents {
        row.turn_hooks = turn_hooks(row.agent);
    }
    if !crate::render::terminal::for_people(json.then_some(false)) {
        return Rendered::json(Exit::Success, &report);
    }
    Rendered { exit: Exit::Success, bytes: render_agents(&report).into_bytes() }
}

/// Whether the agent's user settings run Bee's turn marks; `None` for an
/// agent whose hooks Bee does not wire. Settings that are missing or no
/// JSON wire nothing; Codex runs its hooks only once its `config.toml`
/// trusts each by its hash, so there they are wired only with that trust;
/// Cline's are files of their own.
fn turn_hooks(agent: bee_proto::ledger::Provider) -> Option<bool> {
    if agent == bee_proto::ledger::Provider::Cline {
        return Some(crate::setup::cline_hooks::wired());
    }
    let hooked = bee_daemon::events::agent_hooks::hooked(agent)?;
    let env = |name: &str| std::env::var_os(name).filter(|value| !value.is_empty());
    let Some(path) = hooked.user_settings(&env) else { return Some(false) };
    let settings = std::fs::read(&path).ok();
    let settings = settings.and_then(|bytes| serde_json::from_slice::<serde_json::Value>(&bytes).ok());
    let Some(settings) = settings.filter(|settings| hooked.turns_wired(settings)) else { return Some(false) };
    if agent != bee_proto::ledger::Provider::Codex {
        return Some(true);
    }
    Some(crate::setup::codex_trust::hooks_trusted(hooked, &path, &settings))
}

fn render_agents(report: &bee_proto::ledger::AgentsReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "  {:<9} {:<12} {:>6} {:>5} {:>10}  {:<24} {:<24} {:<36} {:<6} LOOKS IN",
        "AGENT", "", "FILES", "READ", "RESPONSES", "NEWEST RECORD", "VERIFIED", "RECORDS SAY", "HOOKS"
    );
    for row in &report.agents {
        let responses = row.responses.map_or_else(|| "no ledger".to_owned(), |n| n.to_string());
        let looks_in =
            if row.found { row.looks_in.join(", ") } else { format!("{} (nothing there)", row.looks_in.join(", ")) };
        let _ = writeln!(
            out,
            "  {:<9} {:<12} {:>6} {:>5} {:>10}  {:<24} {:<24} {:<36} {:<6} {}",
            row.agent.as_str(),
            row.title,
            row.files,
            row.files_read,
            responses,
            row.newest_record_utc.as_deref().unwrap_or("-"),
            row.verified,
            records_say(&row.records),
            match row.turn_hooks {
                Some(true) => "wired",
                Some(false) => "no",
                None => "-",
            },
            looks_in
        );
    }
    let _ = writeln!(
        out,
        "\nNEWEST RECORD is the newest record's own time in the ledger, not a file's; what RECORDS SAY \
         leaves out is null in every view, never 0. HOOKS: Bee's turn marks in the agent's own hooks \
         (`beectl setup --agent NAME`; Codex's only once its config.toml trusts them; - where Bee wires none)."
    );
    write_skipped(&mut out, report.agents.iter().flat_map(|row| row.skipped_files.iter().map(move |f| (row.agent, f))));
    out
}

/// What an agent's records can say, in a table's few words.
fn records_say(records: &bee_proto::ledger::AgentRecords) -> String {
    let said: Vec<&str> = [
        (records.time_spans, "time"),
        (records.limit_notices, "limits"),
        (records.reasoning, "reasoning"),
        (records.cache_writes, "cache writes"),
        (records.own_cost, "cost"),
    ]
    .into_iter()
    .filter_map(|(yes, what)| yes.then_some(what))
    .collect();
    if said.is_empty() { "tokens only".to_owned() } else { said.join(", ") }
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

#[cfg(test)]
mod tests {
    use super::*;
    use bee_proto::ledger::{AgentRecords, AgentRow, AgentsReport, Provider};

    /// The table says what the JSON says: the newest record's own time (or
    /// `-`), and what the agent's records can say.
    #[test]
    fn the_table_shows_the_newest_records_time_and_what_records_say() {
        let row = |agent: Provider, newest: Option<&str>, records: AgentRecords| AgentRow {
            agent,
            title: agent.as_str().to_owned(),
            looks_in: vec!["/home/dev/.x".to_owned()],
            found: true,
            files: 1,
            files_read: 1,
            responses: Some(2),
            newest_record_utc: newest.map(str::to_owned),
            records,
            verified: "format from its source".to_owned(),
            turn_hooks: (agent == Provider::Claude).then_some(true),
            skipped_files: Vec::new(),
        };
        let claude = AgentRecords { time_spans: true, limit_notices: true, cache_writes: true, ..Default::default() };
        let report = AgentsReport {
            schema_version: 1,
            agents: vec![
                row(Provider::Claude, Some("2026-11-21T09:30:00.000Z"), claude),
                row(Provider::Goose, None, AgentRecords::default()),
            ],
        };
        let table = render_agents(&report);
        let line = |agent: &str| table.lines().find(|l| l.trim_start().starts_with(agent)).unwrap_or_default();
        assert!(line("claude").contains("2026-11-21T09:30:00.000Z"), "{table}");
        assert!(line("claude").contains("time, limits, cache writes "), "{table}");
        assert!(line("goose").contains(" - ") && line("goose").contains("tokens only"), "{table}");
        assert!(table.contains("RECORDS SAY") && table.contains("not a file's"), "{table}");
        assert!(line("claude").contains(" wired ") && !line("goose").contains("wired"), "{table}");
    }
}
