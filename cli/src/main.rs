//! `beectl`: Bee's operator CLI.
//!
//! Every report command prints exactly one compact JSON document and a newline
//! and exits 0, 4 or 5. It asks beed when beed runs and serves the store in
//! question; otherwise it reads the store offline through the daemon's own
//! library, so both paths print the same bytes.
//!
//! This file parses and dispatches; the rooms it dispatches to are listed
//! in the crate's `lib.rs`.

// A first import makes a few hundred thousand small allocations on four
// threads and frees them in bulk; mimalloc serves that with an eighth of
// glibc's page faults and about a tenth less CPU (the ccusage benchmark).
// Built without transparent huge pages, which would hold the first
// import's peak memory above its 100 MiB bound.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod ask;
mod commands;
mod design;
mod input;
mod mcp;
mod render;
mod setup;

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
    let raw: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    // The process `beectl run` starts to become the provider CLI.
    if let Some(cli) = raw.strip_prefix(&[std::ffi::OsString::from(commands::run::BECOME_CLI)]) {
        return commands::run::become_cli(cli);
    }
    let rendered = match args::parse(raw) {
        // A wrapped provider run answers with the provider's own exit status.
        Ok(args::Parsed::Command(args::Command::Run(wrapped))) => return commands::run::run(wrapped),
        Ok(args::Parsed::Command(args::Command::McpServe { root, discovery })) => {
            mcp::evidence::serve(root.as_deref(), discovery)
        }
        Ok(args::Parsed::Command(command)) => commands::run(command),
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
                args::Family::Budget => {
                    commands::budget::failure(commands::budget::Exit::InvalidUsage, "invalid_usage")
                }
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
