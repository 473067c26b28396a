//! One file per subcommand a person types, named after it; each answers
//! with one finished [`Rendered`] (JSON, or a table for people), asking
//! beed where it runs and reading the stores offline where it does not.
//! [`run`] dispatches them; the MCP evidence server answers its tools
//! through it too, so a tool's answer is its command's.
//!
//! Shared among them: [`ledger`] (where the ledger is, and what its views
//! say when it cannot be read) and [`manifest`] (a manifest file read).

pub mod agents;
pub mod artifact;
pub mod audit;
pub mod budget;
pub mod compress;
pub mod daemon;
pub mod delivery;
pub mod design;
pub mod events;
pub mod export;
pub mod ingest;
pub mod ledger;
pub mod manifest;
pub mod plan;
pub mod quota;
pub mod repr;
pub mod run;
pub mod token;
pub mod top;
pub mod usage;
pub mod usage_chart;
pub mod usage_csv;

use bee_daemon::rendered::Rendered;
use beectl::args;

/// The answer to `command`: every command but `run` and `mcp serve`, which
/// `main` answers itself (the MCP server answers with these very commands).
pub fn run(command: args::Command) -> Rendered {
    match command {
        args::Command::Delivery(args::DeliveryCommand::Report(report)) => delivery::report(report),
        args::Command::Delivery(args::DeliveryCommand::Read(read)) => delivery::read(read),
        args::Command::Token(estimate) => token::estimate(estimate),
        args::Command::Budget(budget) => budget::measured(budget),
        args::Command::Run(_) => Rendered::invalid_usage("run is answered by the provider"),
        args::Command::Quota(ask) => quota::quota(ask),
        args::Command::Ingest => ingest::run(),
        args::Command::Status(ask) => quota::status(ask),
        args::Command::Usage(usage) => usage::usage(usage),
        args::Command::Prices { prices, json } => usage::prices(prices, json),
        args::Command::Agents { json } => agents::run(json),
        args::Command::Top { timezone, once, json } => top::top(timezone, once, json),
        args::Command::Daemon(args::DaemonCommand::Status(table)) => {
            daemon::status(crate::render::terminal::for_people(table))
        }
        args::Command::Daemon(args::DaemonCommand::Start) => daemon::start(),
        args::Command::Daemon(args::DaemonCommand::Stop) => daemon::stop(),
        args::Command::Daemon(args::DaemonCommand::Restart) => daemon::restart(),
        args::Command::Dashboard => daemon::dashboard(),
        args::Command::Audit(audit) => audit::audit(audit),
        args::Command::Canary(canary) => audit::canary(canary),
        args::Command::HooksInstall(install) => crate::setup::hooks::install(install),
        args::Command::HooksUninstall(uninstall) => crate::setup::hooks::uninstall(uninstall),
        args::Command::Setup(setup) => crate::setup::run::setup(setup),
        args::Command::EventsRecent { limit } => events::recent(limit),
        args::Command::ArtifactAdd { file } => artifact::add(&file),
        args::Command::ArtifactList => artifact::list(),
        args::Command::ReprEncode { file, encoding, budget_bytes } => match repr::read_input(file.as_deref()) {
            Ok(text) => repr::encode(&text, encoding.as_deref(), budget_bytes),
            Err(rendered) => rendered,
        },
        args::Command::CompressSet { enabled } => compress::set(enabled),
        args::Command::CompressStatus => compress::status(),
        args::Command::ExportStatus => export::status(),
        args::Command::Design(design) => design::run(design),
        args::Command::CompressProse { file, rate_percent, budget_bytes } => {
            compress::prose(file.as_deref(), rate_percent, budget_bytes)
        }
        args::Command::ReprDecode { file, budget_bytes } => match repr::read_input(file.as_deref()) {
            Ok(packet) => repr::decode(&packet, budget_bytes),
            Err(rendered) => rendered,
        },
        args::Command::Plan(plan) => plan::plan(plan),
        args::Command::ContextDoctor { manifest, root } => match manifest::read(&manifest) {
            Ok(text) => crate::mcp::packet::doctor(&text, root.as_deref()),
            Err(rendered) => rendered,
        },
        args::Command::BudgetManifest { manifest, calls, root } => match manifest::read(&manifest) {
            Ok(text) => crate::mcp::packet::budget(&text, root.as_deref(), calls),
            Err(rendered) => rendered,
        },
        args::Command::ContextPacket { manifest, manifest_json, budget_bytes, root } => {
            let text = match (manifest_json, manifest) {
                (Some(text), _) => text,
                (None, Some(file)) => match manifest::read(&file) {
                    Ok(text) => text,
                    Err(rendered) => return rendered,
                },
                (None, None) => return Rendered::invalid_usage("--manifest FILE or --manifest-json TEXT"),
            };
            crate::mcp::packet::packet(&text, budget_bytes, root.as_deref())
        }
        args::Command::ArtifactGet { id, out } => artifact::get(&id, &out),
        // Answered by `main`: the server runs these very commands.
        args::Command::McpServe { .. } => Rendered::invalid_usage("mcp serve is answered by the MCP server"),
    }
}
