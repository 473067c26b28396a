//! `beectl`: Bee's operator CLI.
//!
//! Every report command prints one compact JSON document and a newline when
//! piped or given `--json`, and a table or view for people on a terminal
//! (one rule: [`render::terminal::for_people`]); it exits 0, 4 or 5. It asks
//! beed when beed runs and serves the store in question; otherwise it reads
//! the store offline through the daemon's own library, so both paths print
//! the same bytes. A reader that goes away early ends it quietly
//! ([`render::output`]).
//!
//! This file parses and dispatches; the rooms it dispatches to are listed
//! in the crate's `lib.rs`.

// mimalloc for beectl's commands, the system's when started as beed
// (why: `allocator`).
#[global_allocator]
static ALLOCATOR: allocator::ByProgram = allocator::ByProgram;

mod allocator;
mod ask;
mod commands;
mod design;
mod input;
mod mcp;
mod render;
mod setup;

use bee_daemon::rendered::Rendered;
use beectl::args;
use std::process::ExitCode;

fn main() -> ExitCode {
    // Started as `beed` (the archives' `beed -> beectl` link, npm's `beed`
    // entry, `beectl daemon start` where no beed is installed beside it):
    // the daemon, with beed's own arguments, logs and exit statuses.
    if allocator::started_as_beed() {
        return bee_daemon::server::command::main();
    }
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
    let json_asked = raw.iter().take_while(|arg| *arg != "--").any(|arg| arg == "--json");
    // An MCP server's stdout is its JSON-RPC channel: what fails before it
    // serves is said on stderr only (a client shows that), never there.
    let serves_mcp = matches!(raw.first(), Some(first) if first == "mcp")
        || (raw.first().is_some_and(|first| first == "design") && raw.get(1).is_some_and(|second| second == "mcp"));
    let mut said = false;
    // The process `beectl run` starts to become the provider CLI.
    if let Some(cli) = raw.strip_prefix(&[std::ffi::OsString::from(commands::run::BECOME_CLI)]) {
        return commands::run::become_cli(cli);
    }
    if json_asked || serves_mcp {
        render::terminal::for_programs();
    }
    let manual = matches!(raw.first(), Some(first) if first == "man");
    let rendered = match args::parse(raw) {
        // A wrapped provider run answers with the provider's own exit status.
        Ok(args::Parsed::Command(args::Command::Run(wrapped))) => return commands::run::run(wrapped),
        Ok(args::Parsed::Command(args::Command::McpServe { root, discovery })) => {
            mcp::evidence::serve(root.as_deref(), discovery)
        }
        Ok(args::Parsed::Command(command)) => commands::run(command),
        Ok(args::Parsed::Text(text)) => {
            // A man page (not `man --help`) is formatted for people, roff for files.
            let page = manual && text.starts_with('.');
            if page && render::terminal::for_people(None) && render::manual::show(&text) {
                return ExitCode::SUCCESS;
            }
            return match render::output::stdout(text.as_bytes()) {
                Ok(()) => ExitCode::SUCCESS,
                Err(_) => ExitCode::from(bee_proto::exit::Exit::Unavailable.code()),
            };
        }
        Err(args::Usage { family, message }) => {
            // For people, whatever the command's document: what is wrong,
            // the tip, the usage line.
            render::output::say(format_args!("beectl: {message}\n"));
            said = true;
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
    let terminal = std::io::IsTerminal::is_terminal(&std::io::stdout());
    // Only a failure is an error document (and a small one): a report of
    // megabytes is not parsed again to tell.
    let failed = rendered.exit != bee_proto::exit::Exit::Success;
    let words = if failed { render::errors::words(&rendered.bytes) } else { None };
    if let Some(words) = words.as_deref().filter(|_| !said) {
        // An error is said to people on stderr, whatever stdout carries.
        render::output::say(format_args!("beectl: {words}\n"));
    }
    // On a terminal the words are the answer; the JSON document is for
    // pipes and `--json`, unchanged.
    let error = said || words.is_some();
    let bytes: &[u8] = if error && (serves_mcp || (terminal && !json_asked)) { b"" } else { &rendered.bytes };
    if render::output::stdout(bytes).is_err() {
        return ExitCode::from(bee_proto::exit::Exit::Unavailable.code());
    }
    ExitCode::from(rendered.exit.code())
}
