//! `bee-hook`: the binary Claude Code runs for a hook event.
//!
//! It must never change, delay beyond its deadline, or break the hook's own
//! output. So it produces the output first (a steering block, or a wrapped
//! command passed through byte for byte), writes and flushes it, and only
//! then accounts for it: one post to beed with a 100 ms deadline, falling back
//! to the local spool. Usage errors never block the prompt: they exit 1
//! (Claude Code's non-blocking error), never 2.

// stderr may be closed or full (`2>/dev/full`): a failed diagnostic must
// never panic the hook, so every message goes through `say!`.
#![deny(clippy::print_stderr)]

/// Writes one line to stderr, ignoring failure: the hook's own output and
/// exit status matter more than any diagnostic.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

mod commit;
mod event;
mod ledger;
mod on;
mod output;
mod post;
mod prompt;
mod statusline;
mod turn;

use clap::{Parser, Subcommand};
use std::ffi::OsString;
use std::process::ExitCode;

#[derive(Debug, Parser)]
#[command(
    name = "bee-hook",
    version,
    about = "Bee's hook client: writes the hook output, then records what was delivered."
)]
struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// UserPromptSubmit hook: write a steering block or pass a wrapped command through.
    Prompt(prompt::PromptArgs),
    /// Status line: Bee's own line (model, context, five-hour window, today's
    /// tokens and cost), or your command's passed through; records quota snapshots.
    Statusline(StatuslineArgs),
    /// A turn's start and end (UserPromptSubmit and Stop; Gemini CLI's BeforeAgent and
    /// AfterAgent): mark an interactive turn (prints nothing, exits 0).
    Turn(turn::TurnArgs),
    /// git post-commit: credit the commit to the provider whose run or session made it.
    Commit,
    /// Any lifecycle event: post it to beed (prints nothing, exits 0, says and spools a failed post).
    Event(EventArgs),
    /// Every role for one hook event in one process and one round trip:
    /// the block (--block), the turn mark (--turn), the event (--event).
    On(on::OnArgs),
}

#[derive(Debug, clap::Args)]
struct EventArgs {
    /// Name of the app or project the events come from.
    #[arg(long, value_name = "NAME")]
    source_app: String,
    /// Also send the full hook input (prompts, tool inputs): a privacy trade-off, off by default.
    #[arg(long)]
    capture_payload: bool,
}

#[derive(Debug, clap::Args)]
struct StatuslineArgs {
    /// The line: {model}, {context}, {five_hour}, {five_hour_reset}, {weekly}, {weekly_reset},
    /// {today_tokens}, {today_cost}, {session_cost}; a " | "-separated segment with a field
    /// nobody observed is left out.
    #[arg(long, value_name = "TEMPLATE")]
    format: Option<String>,
    /// With a command: add Bee's line after its output.
    #[arg(long, requires = "command")]
    append: bool,
    /// Your command; stdin, stdout, stderr and exit status pass through.
    #[arg(last = true, value_name = "CMD")]
    command: Vec<OsString>,
}

fn main() -> ExitCode {
    let raw: Vec<OsString> = std::env::args_os().collect();
    match Args::try_parse_from(&raw) {
        Ok(Args { command: Command::Prompt(args) }) => prompt::run(args),
        Ok(Args { command: Command::Statusline(args) }) => {
            statusline::run(&args.command, args.format.as_deref(), args.append)
        }
        Ok(Args { command: Command::Turn(args) }) => turn::run(&args),
        Ok(Args { command: Command::Commit }) => commit::run(),
        Ok(Args { command: Command::Event(args) }) => event::run(&args.source_app, args.capture_payload),
        Ok(Args { command: Command::On(args) }) => on::run(args),
        Err(err) if !err.use_stderr() => {
            let _ = err.print();
            ExitCode::SUCCESS
        }
        Err(err) => {
            // A misconfigured hook must not take the user's own hook down with
            // it: when a wrapped command is present, it still runs untouched.
            say!("bee-hook: {}; not observed", err.kind());
            let _ = err.print();
            match raw.iter().position(|arg| arg == "--") {
                Some(at) if at + 1 < raw.len() => prompt::pass_through(&raw[at + 1..]),
                // Monitoring never blocks the agent, not even misconfigured;
                // only a block that could not be delivered is an error.
                _ if raw.get(1).is_some_and(|arg| arg == "event" || arg == "turn") => ExitCode::SUCCESS,
                _ if raw.get(1).is_some_and(|arg| arg == "on")
                    && !raw.iter().any(|arg| arg.to_str().is_some_and(|arg| arg.starts_with("--block"))) =>
                {
                    ExitCode::SUCCESS
                }
                _ => ExitCode::from(1),
            }
        }
    }
}
