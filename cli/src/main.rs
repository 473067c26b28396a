//! `beectl`: Bee's operator CLI.
//!
//! Every report command prints exactly one compact JSON document and a newline
//! and exits 0, 4 or 5. It asks beed when beed runs and serves the store in
//! question; otherwise it reads the store offline through the daemon's own
//! library, so both paths print the same bytes.

// A first import makes a few hundred thousand small allocations on four
// threads and frees them in bulk; mimalloc serves that with an eighth of
// glibc's page faults and about a tenth less CPU (the ccusage benchmark).
// Built without transparent huge pages, which would hold the first
// import's peak memory above its 100 MiB bound.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod artifact_view;
mod ask;
mod audit;
mod budget;
mod budgeted;
mod compress_view;
mod context_packet;
mod daemon;
mod delivery;
mod design;
mod design_mcp;
mod design_view;
mod events_view;
mod export_view;
mod file_change;
mod hooks;
mod ingest;
mod ledger_view;
mod mcp;
mod mcp_transport;
mod outline;
mod plan_view;
mod repr;
mod run;
mod service;
mod setup;
mod table;
mod token;
mod token_input;
mod top;
mod usage_view;

use bee_daemon::rendered::Rendered;
use beectl::args;
use std::io::Write;
use std::process::ExitCode;

fn main() -> ExitCode {
    // The library's own logs (an offline ingestion pass's phases, a log it
    // could not read) when asked for, as beed shows them; never on stdout,
    // where the one JSON document goes.
    if let Some(filter) = std::env::var_os("BEE_LOG") {
        tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::new(filter.to_string_lossy()))
            .with_writer(std::io::stderr)
            .with_ansi(false)
            .init();
    }
    let rendered = match args::parse(std::env::args_os().skip(1).collect()) {
        // A wrapped provider run answers with the provider's own exit status.
        Ok(args::Parsed::Command(args::Command::Run(wrapped))) => return run::run(wrapped),
        Ok(args::Parsed::Command(command)) => run(command),
        Ok(args::Parsed::Text(text)) => {
            print!("{text}");
            return ExitCode::SUCCESS;
        }
        Err(args::Usage { family, message }) => {
            // For people, whatever the command's document: what is wrong,
            // the tip, the usage line.
            let _ = writeln!(std::io::stderr(), "beectl: {message}");
            match family {
                // Their contracts' documents have no message field.
                args::Family::Token => {
                    bee_daemon::tokens::report::failure(bee_proto::tokens::TokenErrorCode::InvalidUsage, None)
                }
                args::Family::Budget => budget::failure(budget::Exit::InvalidUsage, "invalid_usage"),
                args::Family::Other => Rendered::invalid_usage(message),
            }
        }
    };
    let mut stdout = std::io::stdout().lock();
    if stdout.write_all(&rendered.bytes).and_then(|_| stdout.flush()).is_err() {
        return ExitCode::from(bee_proto::exit::Exit::Unavailable.code());
    }
    ExitCode::from(rendered.exit.code())
}

fn run(command: args::Command) -> Rendered {
    match command {
        args::Command::Delivery(args::DeliveryCommand::Report(report)) => delivery::report(report),
        args::Command::Delivery(args::DeliveryCommand::Read(read)) => delivery::read(read),
        args::Command::Token(estimate) => token::estimate(estimate),
        args::Command::Budget(budget) => budget::measured(budget),
        args::Command::Run(_) => Rendered::invalid_usage("run is answered by the provider"),
        args::Command::Quota(ask) => ledger_view::quota(ask),
        args::Command::Ingest => ingest::run(),
        args::Command::Status(ask) => ledger_view::status(ask),
        args::Command::Usage(usage) => usage_view::usage(usage),
        args::Command::Prices { prices, json } => usage_view::prices(prices, json),
        args::Command::Top { timezone, once } => top::top(timezone, once),
        args::Command::Daemon(args::DaemonCommand::Status(table)) => {
            daemon::status(table.unwrap_or_else(|| std::io::IsTerminal::is_terminal(&std::io::stdout())))
        }
        args::Command::Daemon(args::DaemonCommand::Start) => daemon::start(),
        args::Command::Daemon(args::DaemonCommand::Stop) => daemon::stop(),
        args::Command::Daemon(args::DaemonCommand::Restart) => daemon::restart(),
        args::Command::Dashboard => daemon::dashboard(),
        args::Command::Audit(audit) => audit::audit(audit),
        args::Command::Canary(canary) => audit::canary(canary),
        args::Command::HooksInstall(install) => hooks::install(install),
        args::Command::HooksUninstall(uninstall) => hooks::uninstall(uninstall),
        args::Command::Setup(setup) => setup::setup(setup),
        args::Command::EventsRecent { limit } => events_view::recent(limit),
        args::Command::ArtifactAdd { file } => artifact_view::add(&file),
        args::Command::ArtifactList => artifact_view::list(),
        args::Command::ReprEncode { file, encoding, budget_bytes } => match repr::read_input(file.as_deref()) {
            Ok(text) => repr::encode(&text, encoding.as_deref(), budget_bytes),
            Err(rendered) => rendered,
        },
        args::Command::CompressSet { enabled } => compress_view::set(enabled),
        args::Command::CompressStatus => compress_view::status(),
        args::Command::ExportStatus => export_view::status(),
        args::Command::Design(design) => design_view::run(design),
        args::Command::CompressProse { file, rate_percent, budget_bytes } => {
            compress_view::prose(file.as_deref(), rate_percent, budget_bytes)
        }
        args::Command::ReprDecode { file, budget_bytes } => match repr::read_input(file.as_deref()) {
            Ok(packet) => repr::decode(&packet, budget_bytes),
            Err(rendered) => rendered,
        },
        args::Command::Plan(plan) => plan_view::plan(plan),
        args::Command::ContextDoctor { manifest, root } => match read_manifest(&manifest) {
            Ok(text) => context_packet::doctor(&text, root.as_deref()),
            Err(rendered) => rendered,
        },
        args::Command::BudgetManifest { manifest, calls, root } => match read_manifest(&manifest) {
            Ok(text) => context_packet::budget(&text, root.as_deref(), calls),
            Err(rendered) => rendered,
        },
        args::Command::ContextPacket { manifest, manifest_json, budget_bytes, root } => {
            let text = match (manifest_json, manifest) {
                (Some(text), _) => text,
                (None, Some(file)) => match read_manifest(&file) {
                    Ok(text) => text,
                    Err(rendered) => return rendered,
                },
                (None, None) => return Rendered::invalid_usage("--manifest FILE or --manifest-json TEXT"),
            };
            context_packet::packet(&text, budget_bytes, root.as_deref())
        }
        args::Command::ArtifactGet { id, out } => artifact_view::get(&id, &out),
        args::Command::McpServe { root, discovery } => mcp::serve(root.as_deref(), discovery),
    }
}

/// A manifest file's text (at most 1 MiB, a regular file).
fn read_manifest(path: &str) -> Result<String, Rendered> {
    use std::io::Read;
    let unavailable = |message: String| {
        Rendered::json(
            bee_proto::exit::Exit::Unavailable,
            &bee_proto::delivery::CommandError::unavailable("manifest_invalid", message),
        )
    };
    let file = bee_daemon::storage::files::open_regular(std::path::Path::new(path))
        .map_err(|err| unavailable(format!("{path}: {err}")))?;
    let mut text = String::new();
    file.take(1 << 20).read_to_string(&mut text).map_err(|err| unavailable(format!("{path}: {err}")))?;
    Ok(text)
}
