//! Command-line rules shared by every beectl command, and the command tree.
//!
//! Before clap sees anything: a bounded number of arguments (16 with at most
//! 16,384 UTF-16 units across them; `token estimate` takes up to 64 inputs),
//! UTF-8 only, and options as separate tokens (`--limit 0`, never
//! `--limit=0`). clap then rejects unknown, repeated, missing and empty
//! options; every rejection becomes one `invalid_usage` document of the
//! command's own shape with exit 4, instead of clap's text and exit 2.

use bee_proto::delivery::{MAX_GROUP_LIMIT, SessionSelector};
use bee_proto::identity::{Identity, parse_hyphenated_uuid};
use bee_proto::tokens::{DEFAULT_ROW_LIMIT, Encoding, MAX_CALLS, MAX_INPUTS, MAX_OUTPUT_BUDGET, MAX_ROW_LIMIT};
use clap::builder::NonEmptyStringValueParser;
use clap::error::ErrorKind;
use clap::{Parser, Subcommand};
use std::ffi::OsString;

/// Most arguments a command takes.
pub const MAX_ARGS: usize = 16;

/// Most arguments `beectl usage` takes: every one of its options once
/// (two groupings, a range, a zone, three filters, the order, the last N,
/// prices and the output) is 24.
pub const MAX_USAGE_ARGS: usize = 32;
/// Most UTF-16 units across all arguments.
pub const MAX_ARG_UTF16_UNITS: u64 = 16_384;
/// `token estimate`: its subcommand words, 64 inputs (two tokens each) and
/// every other option once.
pub const MAX_TOKEN_ARGS: usize = 2 + 2 * MAX_INPUTS + 12;
/// `token estimate`: 64 paths of up to 4,096 bytes each, and the rest.
pub const MAX_TOKEN_ARG_UTF16_UNITS: u64 = 64 * 4_096 + 1_024;

/// The command family an argument error belongs to: it decides the shape
/// of the invalid-usage document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    Token,
    Budget,
    Other,
}

/// An invalid command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Usage {
    pub family: Family,
    pub message: String,
}

#[derive(Debug, Parser)]
#[command(
    name = "beectl",
    version = concat!(env!("CARGO_PKG_VERSION"), " (protocol ", "1", ")"),
    // Help wraps at words to the terminal, and no wider than reads well.
    max_term_width = 100,
    about = "Bee's operator CLI: usage and cost, quota windows, delivery reports, the audit, from beed or offline."
)]
struct Cli {
    #[command(subcommand)]
    command: CliCommand,
}

#[derive(Debug, Subcommand)]
enum CliCommand {
    /// Delivery accounting: what prompt hooks wrote and flushed to the agent.
    #[command(subcommand)]
    Delivery(DeliveryCli),
    /// Pre-task token estimates of text you select on purpose.
    #[command(subcommand)]
    Token(TokenCli),
    /// Time and quota words over a window: Agent time, Used, Idle, Converted,
    /// Crossed, each provider's quota windows. Never costs or tokens.
    Quota {
        #[command(flatten)]
        range: RangeCli,
        /// Only this agent (`beectl agents` lists their names; --provider is its earlier name).
        #[arg(long, alias = "provider", value_name = "AGENT", value_parser = agent_names())]
        agent: Option<String>,
        #[command(flatten)]
        output: OutputCli,
    },
    /// The quota words plus the cost the provider CLIs reported.
    Status {
        #[command(flatten)]
        range: RangeCli,
        #[command(flatten)]
        output: OutputCli,
    },
    /// Tokens and cost by day, week, month, session, model or five-hour
    /// block: a table on a terminal, JSON when piped or with --json.
    Usage(UsageCli),
    /// A live view: quota windows with their projection, burn rate, active
    /// sessions, limit hits (q quits); printed once when not on a terminal.
    Top {
        /// The zone of "today" [default: the local zone].
        #[arg(long, value_name = "ZONE", value_parser = NonEmptyStringValueParser::new())]
        timezone: Option<String>,
        /// Print the view once, even on a terminal.
        #[arg(long)]
        once: bool,
        /// The view once as one JSON document (its figures, for scripts).
        #[arg(long, conflicts_with = "once")]
        json: bool,
    },
    /// Shell completions for bash, zsh or fish, on stdout.
    Completions {
        #[arg(value_name = "SHELL", value_parser = ["bash", "zsh", "fish"])]
        shell: String,
    },
    /// A man page (roff), on stdout: beectl's (`beectl man > beectl.1`), or one command's with all its
    /// options (`beectl man usage > beectl-usage.1`, `beectl man audit canary`).
    Man {
        /// The command (and subcommand) whose page to print [default: beectl's own].
        #[arg(value_name = "COMMAND")]
        command: Vec<String>,
    },
    /// Every agent Bee reads: where it looks, what it found, how its reader was verified.
    Agents {
        /// JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// The price table cost estimates use: the bundled LiteLLM snapshot (its release and date, its model
    /// count) with ~/.bee/prices.json merged over it (${BEE_HOME:-$HOME}/.bee; an entry there wins for its
    /// model), or --prices FILE alone.
    Prices {
        /// A price list in LiteLLM's model_prices_and_context_window.json format, used alone: neither the
        /// bundled table nor ~/.bee/prices.json is merged with it.
        #[arg(long, value_name = "FILE", value_parser = NonEmptyStringValueParser::new())]
        prices: Option<String>,
        /// JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Import the provider logs into the ledger now (beed does it itself
    /// every few seconds); a progress bar on a terminal.
    Ingest,
    /// Run a provider CLI exactly as given and record the call in the ledger.
    Run {
        /// The agent CLI to run: claude or codex (--provider is its earlier name).
        #[arg(long, alias = "provider", value_name = "AGENT", value_parser = ["claude", "codex"])]
        agent: String,
    },
    /// Measured usage of one session, read from the provider CLI's own log.
    Budget {
        /// Read recorded counters (nothing is estimated).
        #[arg(long, required_unless_present = "manifest")]
        measured: bool,
        /// Which CLI wrote the log: claude or codex.
        #[arg(long, value_name = "HARNESS", value_parser = ["claude", "codex"], required_unless_present = "manifest")]
        harness: Option<String>,
        /// The session's id (non-nil, hyphenated UUID); never guessed.
        #[arg(long, value_name = "UUID", value_parser = parse_event, required_unless_present = "manifest")]
        session: Option<uuid::Uuid>,
        /// The log: an absolute physical path to a regular file.
        #[arg(long, value_name = "PATH", value_parser = NonEmptyStringValueParser::new(), required_unless_present = "manifest")]
        log: Option<String>,
        /// Plain budget instead: what a context manifest's selections cost (bytes and exact
        /// tokens per selection), per call and for --calls calls.
        #[arg(long, value_name = "FILE", value_parser = NonEmptyStringValueParser::new(),
              conflicts_with_all = ["measured", "harness", "session", "log"])]
        manifest: Option<String>,
        /// With --manifest: calls with the same context, 1..1000000 [default: 1].
        #[arg(long, value_name = "N", requires = "manifest", value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
        calls: Option<u64>,
        /// With --manifest: the directory its paths are relative to [default: the current directory].
        #[arg(long, value_name = "DIR", requires = "manifest", value_parser = NonEmptyStringValueParser::new())]
        root: Option<String>,
        /// Accepted for scripts; the output is JSON either way.
        #[arg(long)]
        json: bool,
    },
    /// The daemon.
    #[command(subcommand)]
    Daemon(DaemonCli),
    /// The URL of the running beed's dashboard (it carries the per-user read
    /// secret: open it, do not share it).
    Dashboard,
    /// Receipts per boundary of the hook event chain and the audit class of a
    /// session (or of each session of the last day); `audit canary` proves the chain live.
    #[command(args_conflicts_with_subcommands = true)]
    Audit {
        #[command(subcommand)]
        canary: Option<AuditCli>,
        /// The session to audit [default: every session of the last day].
        #[arg(long, value_name = "ID", value_parser = NonEmptyStringValueParser::new())]
        session: Option<String>,
        #[command(flatten)]
        pinned: PinnedCli,
    },
    /// Claude Code hook settings.
    #[command(subcommand)]
    Hooks(HooksCli),
    /// Stored hook events.
    #[command(subcommand)]
    Events(EventsCli),
    /// Bee's MCP server for agents.
    #[command(subcommand)]
    Mcp(McpCli),
    /// Files stored on purpose for agents to read back (verified by sha256).
    #[command(subcommand)]
    Artifact(ArtifactCli),
    /// Context an agent selects on purpose, packed within a budget.
    #[command(subcommand)]
    Context(ContextCli),
    /// JSON values as a bee-json-v1 packet (fewer tokens, the same values) and back.
    #[command(subcommand)]
    Repr(ReprCli),
    /// Local prose compression for agents (bee_context_compress): off until enabled.
    #[command(subcommand)]
    Compress(CompressCli),
    /// Export to a team's engine ([export] in ~/.bee/config.toml): what beed sends and how it went.
    #[command(subcommand)]
    Export(ExportCli),
    /// Design bundles: import a static export, map entries to sources, capture
    /// screenshots as evidence; `design mcp` serves them to agents (read-only).
    #[command(subcommand)]
    Design(DesignCli),
    /// Plans: steps with dependencies and declared owners, claimed and reported here;
    /// agents read them through the MCP server.
    #[command(subcommand)]
    Plan(PlanCli),
    /// Wire Claude Code to Bee in one step: the turn and event hooks, Bee's status line
    /// (an existing one keeps running, Bee's line after it), optionally a prompt block,
    /// the pinned manifest, and beed as a user service, started. Run it again: it changes
    /// nothing. `--undo` takes out exactly what it added.
    #[command(
        after_help = "Examples:\n  beectl setup --dry-run          # every change as a diff, nothing written\n  beectl setup                    # ~/.claude/settings.json and the user service\n  beectl setup --project . --prompt-block .claude/steering.md\n  beectl setup --undo"
    )]
    Setup {
        /// The project whose .claude/settings.json is changed [default: the user's ~/.claude/settings.json].
        #[arg(long, value_name = "DIR", value_parser = NonEmptyStringValueParser::new(), conflicts_with = "user")]
        project: Option<String>,
        /// Change ~/.claude/settings.json (the default).
        #[arg(long)]
        user: bool,
        /// Also deliver this file's text as context on every prompt (`bee-hook prompt --block`).
        #[arg(long, value_name = "FILE", value_parser = NonEmptyStringValueParser::new(), conflicts_with = "undo")]
        prompt_block: Option<String>,
        /// Comma-separated event names [default: SessionStart, PreToolUse, PostToolUse, Stop].
        #[arg(long, value_name = "EVENTS", value_parser = NonEmptyStringValueParser::new(), conflicts_with_all = ["reference", "undo"])]
        events: Option<String>,
        /// The twelve event groups the reference pipeline configures (a broader set, opt-in).
        #[arg(long, conflicts_with = "undo")]
        reference: bool,
        /// Add the team events: SubagentStart, SubagentStop, TaskCreated, TaskCompleted, TeammateIdle.
        #[arg(long, conflicts_with = "undo")]
        team: bool,
        /// The source app the hooks report as [default: the project directory's name, or claude-code].
        #[arg(long, value_name = "NAME", value_parser = NonEmptyStringValueParser::new(), conflicts_with = "undo")]
        source_app: Option<String>,
        /// The user service: auto (systemd on Linux, launchd on macOS), systemd, launchd, or
        /// none (beed is started directly, no unit).
        #[arg(long, value_name = "MANAGER", default_value = "auto", value_parser = ["auto", "systemd", "launchd", "none"])]
        service: String,
        /// Print every change as a diff; write nothing, start nothing.
        #[arg(long)]
        dry_run: bool,
        /// Take out exactly what setup added (the original settings byte for byte when untouched since).
        #[arg(long)]
        undo: bool,
        /// The agent to wire: claude (Claude Code), gemini (Gemini CLI), qwen (Qwen Code), copilot
        /// (Copilot CLI), codex (Codex, its hooks.json, the hooks trusted in its config.toml): its
        /// settings get Bee's turn marks and event receipts (the status line and the pinned
        /// manifest are Claude Code's alone); or cline (Cline, its turn marks as two hook files in
        /// ~/.cline/hooks).
        #[arg(long, value_name = "NAME", default_value = "claude",
              value_parser = ["claude", "gemini", "qwen", "copilot", "codex", "cline"],
              conflicts_with_all = ["prompt_block", "reference", "team"])]
        agent: String,
    },
}

/// How a report prints: a table for people on a terminal, one JSON
/// document when piped, either as asked.
#[derive(Debug, clap::Args)]
struct OutputCli {
    /// json (one compact document) or table (for people) [default: table on a terminal, json otherwise].
    #[arg(long, value_name = "FORMAT", value_parser = ["json", "table"])]
    format: Option<String>,
    /// JSON, even on a terminal (accepted by every report command, for scripts).
    #[arg(long, conflicts_with = "format")]
    json: bool,
}

impl OutputCli {
    /// `Some(true)`: a table; `Some(false)`: JSON; `None`: as the terminal says.
    fn asked(&self) -> Option<bool> {
        if self.json { Some(false) } else { self.format.as_deref().map(|format| format == "table") }
    }
}

#[derive(Debug, clap::Args)]
struct PinnedCli {
    /// The pinned manifest (required events, Claude Code version, source app, outcome checks).
    #[arg(long, value_name = "FILE", value_parser = NonEmptyStringValueParser::new())]
    manifest: Option<String>,
    /// Claude Code settings checked against the manifest [default: .claude/settings.json].
    #[arg(long, value_name = "FILE", value_parser = NonEmptyStringValueParser::new())]
    settings: Option<String>,
    #[command(flatten)]
    output: OutputCli,
    /// Exit 5 when a run's class is one of these (comma-separated), or
    /// `unhealthy` for every class but healthy: a gate a CI can use.
    #[arg(long, value_name = "CLASSES", value_parser = NonEmptyStringValueParser::new())]
    fail_on: Option<String>,
    /// Run no outcome check (the manifest's commands): the outcome boundary stays unknown.
    #[arg(long)]
    no_outcome_checks: bool,
}

/// `--events`: comma-separated event names.
fn event_list(text: Option<String>) -> Result<Vec<String>, String> {
    let events: Vec<String> = match text {
        Some(list) => list.split(',').map(str::trim).filter(|e| !e.is_empty()).map(str::to_owned).collect(),
        None => Vec::new(),
    };
    if events.iter().any(|e| !e.chars().all(|c| c.is_ascii_alphanumeric())) {
        return Err("--events: event names are letters and digits, comma-separated".into());
    }
    Ok(events)
}

/// `--fail-on`: class names, or `unhealthy` for all but `healthy`.
fn fail_on(text: Option<&str>) -> Result<Vec<bee_proto::audit::AuditClass>, String> {
    use bee_proto::audit::AuditClass;
    let mut classes = Vec::new();
    for name in text.unwrap_or_default().split(',').map(str::trim).filter(|n| !n.is_empty()) {
        if name == "unhealthy" {
            classes.extend(AuditClass::ALL.iter().copied().filter(|c| *c != AuditClass::Healthy));
        } else {
            let known: Vec<&str> = AuditClass::ALL.iter().map(|c| c.as_str()).collect();
            classes.push(
                AuditClass::from_name(name).ok_or_else(|| {
                    format!("--fail-on: {name:?} is not a class ({}, or unhealthy)", known.join(", "))
                })?,
            );
        }
    }
    Ok(classes)
}

#[derive(Debug, Subcommand)]
enum AuditCli {
    /// Send one harmless, content-free event and prove every receipt for it.
    Canary {
        #[command(flatten)]
        pinned: PinnedCli,
        /// The stream a dashboard reads, as ws://127.0.0.1:PORT/stream [default: beed's socket].
        #[arg(long, value_name = "URL", value_parser = NonEmptyStringValueParser::new())]
        stream: Option<String>,
    },
}

#[derive(Debug, Subcommand)]
enum EventsCli {
    /// The latest stored events by their timestamp, oldest first: the JSON of `GET /events/recent`.
    Recent {
        /// How many, 0..5000 [default: 300].
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(0..=5_000))]
        limit: Option<u64>,
    },
}

/// A plan's step and who acts on it.
#[derive(Debug, clap::Args)]
struct StepCli {
    #[arg(value_name = "PLAN", value_parser = NonEmptyStringValueParser::new())]
    plan: String,
    #[arg(value_name = "STEP", value_parser = NonEmptyStringValueParser::new())]
    step: String,
    #[arg(long, value_name = "NAME", value_parser = NonEmptyStringValueParser::new())]
    owner: String,
}

#[derive(Debug, Subcommand)]
enum PlanCli {
    /// Record a plan from a JSON file: {"planId","space","title","steps":[{"id","title","dependsOn","owner"}]}.
    Create {
        #[arg(value_name = "FILE", value_parser = NonEmptyStringValueParser::new())]
        file: String,
    },
    /// Bind a checkout to a space (live while the checkout stays at the same path, device and inode).
    Bind {
        #[arg(long, value_name = "NAME", value_parser = NonEmptyStringValueParser::new())]
        space: String,
        /// The checkout [default: the current directory].
        #[arg(long, value_name = "DIR", value_parser = NonEmptyStringValueParser::new())]
        checkout: Option<String>,
    },
    /// Remove a checkout's binding.
    Unbind {
        /// The checkout [default: the current directory].
        #[arg(long, value_name = "DIR", value_parser = NonEmptyStringValueParser::new())]
        checkout: Option<String>,
    },
    /// Claim a ready, open step.
    Claim {
        #[command(flatten)]
        step: StepCli,
    },
    /// Report a claimed step complete (or --blocked): the owner's word, not independent QA.
    Report {
        #[command(flatten)]
        step: StepCli,
        #[arg(long)]
        blocked: bool,
    },
    /// A plan's steps and their states now.
    Show {
        #[arg(value_name = "PLAN", value_parser = NonEmptyStringValueParser::new())]
        plan: String,
    },
}

#[derive(Debug, Subcommand)]
enum ContextCli {
    /// Check a selection manifest before it is used: every path, file, hash pin, symbol,
    /// range and dependency, each problem named with its selection (exit 5 when any).
    Doctor {
        #[arg(long, value_name = "FILE", value_parser = NonEmptyStringValueParser::new())]
        manifest: String,
        /// Physical absolute directory the paths are relative to [default: the current directory].
        #[arg(long, value_name = "DIR", value_parser = NonEmptyStringValueParser::new())]
        root: Option<String>,
    },
    /// Pack the selections of a manifest (index, outline or body of files under the root) within a byte budget.
    Packet {
        /// The selection manifest: {"selections":[{"id","path","representation":"index|outline|body",…}]}.
        #[arg(long, value_name = "FILE", value_parser = NonEmptyStringValueParser::new(), conflicts_with = "manifest_json", required_unless_present = "manifest_json")]
        manifest: Option<String>,
        /// The manifest itself, as JSON text.
        #[arg(long, value_name = "JSON", value_parser = NonEmptyStringValueParser::new())]
        manifest_json: Option<String>,
        /// The whole answer's size limit, 512..262144 [default: 65536].
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(bee_proto::mcp::BUDGET_BYTES))]
        budget_bytes: Option<u64>,
        /// Physical absolute directory the paths are relative to [default: the current directory].
        #[arg(long, value_name = "DIR", value_parser = NonEmptyStringValueParser::new())]
        root: Option<String>,
    },
}

/// `beectl design …`, parsed.
#[derive(Debug)]
pub enum DesignCommand {
    Import {
        dir: String,
        bundle: String,
        root: Option<String>,
    },
    Map {
        id: String,
        source: String,
        bundle: Option<String>,
        root: Option<String>,
    },
    Capture {
        id: String,
        url: Option<String>,
        file: Option<String>,
        viewport: String,
        bundle: Option<String>,
        root: Option<String>,
    },
    Mcp {
        root: String,
    },
}

#[derive(Debug, Subcommand)]
enum DesignCli {
    /// Copy a static export (HTML, CSS, images) into <root>/.bee/design/NAME/ with its
    /// manifest bee-design.json (the export's own, or derived from its files).
    #[command(after_help = "Example:\n  beectl design import design/export --bundle app")]
    Import {
        /// The export's directory, inside the root.
        #[arg(value_name = "DIR", value_parser = NonEmptyStringValueParser::new())]
        dir: String,
        #[arg(long, value_name = "NAME", value_parser = NonEmptyStringValueParser::new())]
        bundle: String,
        /// The checkout: absolute and physical [default: the current directory].
        #[arg(long, value_name = "DIR", value_parser = NonEmptyStringValueParser::new())]
        root: Option<String>,
    },
    /// Record which source implements an entry: PATH[#SYMBOL], inside the root.
    #[command(after_help = "Example:\n  beectl design map screens/home --source src/home.tsx#HomePage")]
    Map {
        #[arg(value_name = "ID", value_parser = NonEmptyStringValueParser::new())]
        id: String,
        #[arg(long, value_name = "PATH[#SYMBOL]", value_parser = NonEmptyStringValueParser::new())]
        source: String,
        #[command(flatten)]
        root: DesignRoot,
    },
    /// Store a headless Chromium screenshot of an entry's rendering as evidence.
    #[command(
        after_help = "Examples:\n  beectl design capture screens/home --url http://127.0.0.1:5173/\n  beectl design capture screens/home --file build/home.html --viewport 1280x800"
    )]
    Capture {
        #[arg(value_name = "ID", value_parser = NonEmptyStringValueParser::new())]
        id: String,
        /// An http(s) address to render.
        #[arg(long, value_name = "URL", conflicts_with = "file", required_unless_present = "file")]
        url: Option<String>,
        /// An HTML file inside the root to render.
        #[arg(long, value_name = "HTML")]
        file: Option<String>,
        /// WIDTHxHEIGHT [default: 1280x800].
        #[arg(long, value_name = "WxH", default_value = "1280x800")]
        viewport: String,
        #[command(flatten)]
        root: DesignRoot,
    },
    /// Serve the design tools (list, slice, verify, visual report) over MCP on stdin/stdout.
    Mcp {
        /// stdin/stdout, the one transport.
        #[arg(long, required = true)]
        stdio: bool,
        /// The checkout: absolute and physical.
        #[arg(long, value_name = "DIR", value_parser = NonEmptyStringValueParser::new())]
        root: String,
    },
}

/// Where the design bundles are.
#[derive(Debug, clap::Args)]
struct DesignRoot {
    /// The bundle [default: the only one].
    #[arg(long, value_name = "NAME")]
    bundle: Option<String>,
    /// The checkout: absolute and physical [default: the current directory].
    #[arg(long, value_name = "DIR", value_parser = NonEmptyStringValueParser::new())]
    root: Option<String>,
}

#[derive(Debug, Subcommand)]
enum ExportCli {
    /// The [export] settings, the exporter's last attempt and success, its last error,
    /// the cursor (store records the last send covered) and the backlog beyond it.
    Status,
}

#[derive(Debug, Subcommand)]
enum CompressCli {
    /// Turn compression on ([compression] enabled = true in ~/.bee/config.toml).
    Enable,
    /// Turn it off: bee_context_compress then returns texts as given.
    Disable,
    /// Whether it is on, and the method.
    Status,
    /// Compress the prose in FILE as bee_context_compress would (the original is stored
    /// as an artifact).
    #[command(after_help = "Example:\n  beectl compress prose notes.md --rate-percent 50")]
    Prose {
        /// The text [default: standard input; also `-`].
        #[arg(value_name = "FILE")]
        file: Option<String>,
        /// The share of tokens to keep, 10..90.
        #[arg(long, value_name = "PERCENT", value_parser = clap::value_parser!(u32).range(10..=90))]
        rate_percent: u32,
        /// The answer's size limit, 512..262144 [default: 65536].
        #[arg(long, value_name = "N")]
        budget_bytes: Option<u64>,
    },
}

#[derive(Debug, Subcommand)]
enum ReprCli {
    /// The packet for the JSON value in FILE (several values, as JSON lines, make a
    /// sequence), with the bytes and exact o200k tokens of both forms.
    #[command(after_help = "Example:\n  beectl repr encode response.json\n  cat events.jsonl | beectl repr encode")]
    Encode {
        /// The JSON text [default: standard input; also `-`].
        #[arg(value_name = "FILE")]
        file: Option<String>,
        /// The representation [default: bee-json-v1, the one there is].
        #[arg(long, value_name = "ENCODING")]
        encoding: Option<String>,
        /// The answer's size limit, 512..262144 [default: 65536].
        #[arg(long, value_name = "N")]
        budget_bytes: Option<u64>,
    },
    /// The exact JSON values a bee-json-v1 packet carries.
    Decode {
        /// The packet [default: standard input; also `-`].
        #[arg(value_name = "FILE")]
        file: Option<String>,
        /// The answer's size limit, 512..262144 [default: 65536].
        #[arg(long, value_name = "N")]
        budget_bytes: Option<u64>,
    },
}

#[derive(Debug, Subcommand)]
enum ArtifactCli {
    /// Store a file (content-addressed, 0600, its sha256 recorded); prints its id.
    Add {
        #[arg(value_name = "FILE", value_parser = NonEmptyStringValueParser::new())]
        file: String,
    },
    /// Every stored artifact.
    List,
    /// Write an artifact to a new file, after its sha256 verifies (never overwrites).
    Get {
        #[arg(value_name = "ID", value_parser = NonEmptyStringValueParser::new())]
        id: String,
        /// The new file.
        #[arg(long, value_name = "NEW_FILE", value_parser = NonEmptyStringValueParser::new())]
        out: String,
    },
}

#[derive(Debug, Subcommand)]
enum McpCli {
    /// Serve Bee's evidence tools over MCP on stdin/stdout (the MCP client starts it).
    Serve {
        /// The checkout the tools read files under: absolute and physical [default: the current directory].
        #[arg(long, value_name = "DIR", value_parser = NonEmptyStringValueParser::new())]
        root: Option<String>,
        /// The same tools behind bee_tool_search, bee_tool_schema and bee_tool_call (small tool budgets).
        #[arg(long)]
        discovery: bool,
    },
}

#[derive(Debug, Subcommand)]
enum HooksCli {
    /// Merge `bee-hook event` hooks into Claude Code settings, keeping every hook already there.
    Install {
        /// The project whose .claude/settings.json is changed [default: the current directory].
        #[arg(long, value_name = "DIR", value_parser = NonEmptyStringValueParser::new(), conflicts_with = "user")]
        project: Option<String>,
        /// Change ~/.claude/settings.json instead.
        #[arg(long)]
        user: bool,
        /// Comma-separated event names [default: the minimal lifecycle: SessionStart,
        /// PreToolUse, PostToolUse, Stop].
        #[arg(long, value_name = "EVENTS", value_parser = NonEmptyStringValueParser::new(), conflicts_with = "reference")]
        events: Option<String>,
        /// The twelve event groups the reference pipeline configures (a broader set, opt-in).
        #[arg(long)]
        reference: bool,
        /// Add the team events: SubagentStart, SubagentStop, TaskCreated, TaskCompleted, TeammateIdle.
        #[arg(long)]
        team: bool,
        /// The source app the hooks report as [default: the project directory's name].
        #[arg(long, value_name = "NAME", value_parser = NonEmptyStringValueParser::new())]
        source_app: Option<String>,
        /// Print the change as a diff; write nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Remove every `bee-hook event` hook from Claude Code settings, and nothing else.
    Uninstall {
        /// The project whose .claude/settings.json is changed [default: the current directory].
        #[arg(long, value_name = "DIR", value_parser = NonEmptyStringValueParser::new(), conflicts_with = "user")]
        project: Option<String>,
        /// Change ~/.claude/settings.json instead.
        #[arg(long)]
        user: bool,
        /// Print the change as a diff; write nothing.
        #[arg(long)]
        dry_run: bool,
    },
}

#[derive(Debug, clap::Args)]
struct UsageCli {
    /// day, hour, week (from Monday), month, session, model, agent, project or block (five-hour windows);
    /// or two joined by a comma (day,agent; agent,model; project,model; session,model): rows under each
    /// first key with its subtotal.
    #[arg(long, value_name = "GROUP[,GROUP]", default_value = "day",
          value_parser = |text: &str| bee_proto::ledger::UsageBy::parse(text))]
    by: bee_proto::ledger::UsageBy,
    /// Rows oldest first (names A to Z), or newest first.
    #[arg(long, value_name = "ORDER", default_value = "asc", value_parser = ["asc", "desc"])]
    order: String,
    /// Only the N rows (first keys) whose last activity is latest.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    last: Option<u32>,
    /// From: YYYY-MM-DD, RFC 3339, today, yesterday, or 30m/5h/7d/2w ago [default: the beginning].
    #[arg(long, value_name = "TIME", value_parser = NonEmptyStringValueParser::new())]
    since: Option<String>,
    /// Until: the same forms; a day is included whole [default: now].
    #[arg(long, value_name = "TIME", value_parser = NonEmptyStringValueParser::new())]
    until: Option<String>,
    /// The zone whose days, weeks and months count, as an IANA name [default: the local zone].
    #[arg(long, value_name = "ZONE", value_parser = NonEmptyStringValueParser::new())]
    timezone: Option<String>,
    /// Only this agent (`beectl agents` lists their names; --provider is its earlier name).
    #[arg(long, alias = "provider", value_name = "AGENT", value_parser = agent_names())]
    agent: Option<String>,
    /// Only sessions whose project contains this: the directory a session ran in, named as Claude Code names
    /// its project folders (/home/dev/app is -home-dev-app), whichever agent ran there.
    #[arg(long, value_name = "TEXT", allow_hyphen_values = true, value_parser = NonEmptyStringValueParser::new())]
    project: Option<String>,
    /// Only models whose name contains this (any case).
    #[arg(long, value_name = "TEXT", value_parser = NonEmptyStringValueParser::new())]
    model: Option<String>,
    /// A price list in LiteLLM's format instead of the bundled one.
    #[arg(long, value_name = "FILE", value_parser = NonEmptyStringValueParser::new())]
    prices: Option<String>,
    /// JSON, even on a terminal.
    #[arg(long, conflicts_with = "format")]
    json: bool,
    /// json, table or csv (a row per grouping key: its tokens and the three costs, RFC 4180)
    /// [default: table on a terminal, json otherwise].
    #[arg(long, value_name = "FORMAT", value_parser = ["json", "table", "csv"])]
    format: Option<String>,
    /// Horizontal bars of each row's tokens, stacked by agent (or model), with a legend: for people,
    /// so on a terminal only.
    #[arg(long, conflicts_with_all = ["json", "format", "compact"])]
    chart: bool,
    /// The narrow table (also below 100 columns).
    #[arg(long)]
    compact: bool,
    /// Also show the price table's source and date, and the cache columns in compact tables.
    #[arg(long)]
    verbose: bool,
    /// Answer from the ledger as it is: no import of new log lines first (when beed is not running).
    #[arg(long)]
    no_import: bool,
}

/// How a usage view is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UsageOutput {
    Json,
    Table,
    /// RFC 4180, a row per grouping key.
    Csv,
    /// Bars, on a terminal only.
    Chart,
    /// A table on a terminal, JSON otherwise.
    Auto,
}

/// `beectl usage`, as asked (times are resolved against the zone later).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageArgs {
    pub by: bee_proto::ledger::UsageBy,
    pub order: bee_proto::ledger::UsageOrder,
    pub last: Option<usize>,
    pub since: Option<String>,
    pub until: Option<String>,
    pub timezone: Option<String>,
    pub filters: bee_proto::ledger::UsageFilters,
    pub prices: Option<String>,
    pub output: UsageOutput,
    pub compact: bool,
    pub verbose: bool,
    /// Do not import new provider log lines first.
    pub no_import: bool,
}

#[derive(Debug, clap::Args)]
struct RangeCli {
    /// The last 5h, 24h or 7d.
    #[arg(long, value_name = "WINDOW", value_parser = ["5h", "24h", "7d"], conflicts_with_all = ["since", "until"])]
    window: Option<String>,
    /// From: YYYY-MM-DD, RFC 3339, today, yesterday, or 30m/5h/7d/2w ago (days in the local zone).
    #[arg(long, value_name = "TIME", value_parser = parse_since)]
    since: Option<i64>,
    /// Until: the same forms; a day is included whole [default: now].
    #[arg(long, value_name = "TIME", value_parser = parse_until)]
    until: Option<i64>,
}

/// `--since` of the time-word views, in the words `usage` takes: one way
/// to say a time across beectl.
fn parse_since(text: &str) -> Result<i64, String> {
    local_time(text, false)
}

/// `--until`, as [`parse_since`]; a day given is included whole.
fn parse_until(text: &str) -> Result<i64, String> {
    local_time(text, true)
}

fn local_time(text: &str, end: bool) -> Result<i64, String> {
    bee_daemon::ledger::views::calendar::Zone::local().parse_time(text, end, bee_proto::time::now_unix_ms())
}

/// A time range in unix milliseconds, as asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RangeAsk {
    /// The last N milliseconds.
    Last(i64),
    /// From `since` (or the beginning) until `until` (or now).
    Between { since: Option<i64>, until: Option<i64> },
}

impl RangeCli {
    fn ask(self, default_last: Option<i64>) -> RangeAsk {
        const HOUR: i64 = 3_600_000;
        match (self.window.as_deref(), self.since, self.until) {
            (Some("5h"), ..) => RangeAsk::Last(5 * HOUR),
            (Some("7d"), ..) => RangeAsk::Last(7 * 24 * HOUR),
            (Some(_), ..) => RangeAsk::Last(24 * HOUR),
            (None, None, None) => match default_last {
                Some(last) => RangeAsk::Last(last),
                None => RangeAsk::Between { since: None, until: None },
            },
            (None, since, until) => RangeAsk::Between { since, until },
        }
    }
}

/// What a ledger view command asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LedgerAsk {
    pub range: RangeAsk,
    pub provider: Option<bee_proto::ledger::Provider>,
    /// A table (`Some(true)`), JSON (`Some(false)`), or as the terminal says.
    pub table: Option<bool>,
}

#[derive(Debug, Subcommand)]
enum TokenCli {
    /// Tokens per call and the budget for N calls, for the selected files and stdin.
    Estimate {
        /// Physical absolute directory the files are relative to [default: the current directory].
        #[arg(long, value_name = "DIR", value_parser = NonEmptyStringValueParser::new())]
        root: Option<String>,
        /// A file under the root, relative, with `/` separators (repeatable).
        #[arg(long, value_name = "REL", action = clap::ArgAction::Append, value_parser = NonEmptyStringValueParser::new())]
        file: Vec<String>,
        /// Also count stdin (only when it is a pipe or a file).
        #[arg(long)]
        stdin: bool,
        /// heuristic (utf16-ceil-div4 v1, the default), o200k_base or cl100k_base.
        #[arg(long, value_name = "ENCODING", value_parser = ["heuristic", "o200k_base", "cl100k_base"])]
        encoding: Option<String>,
        /// Independent calls with the same input, 1..1000000 [default: 1].
        #[arg(long, value_name = "N", value_parser = parse_calls)]
        calls: Option<u64>,
        /// Output allowance reserved per call, 0..1000000000 [default: unknown].
        #[arg(long, value_name = "N", value_parser = parse_output_budget)]
        output_budget: Option<u64>,
        /// Contributor rows shown, 0..64 [default: 20]; never changes totals.
        #[arg(long, value_name = "N", value_parser = parse_rows)]
        limit: Option<u64>,
        /// Accepted for scripts; the output is JSON either way.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
enum DeliveryCli {
    /// Totals and groups (item, surface, session) of delivered output.
    Report {
        /// Delivery store directory.
        #[arg(long, value_name = "PATH", value_parser = NonEmptyStringValueParser::new())]
        store: String,
        /// Session identity kind, e.g. claude-native-session (needs --session).
        #[arg(long, value_name = "KIND", requires = "session", value_parser = NonEmptyStringValueParser::new())]
        session_kind: Option<String>,
        /// Session id (needs --session-kind).
        #[arg(long, value_name = "ID", requires = "session_kind", value_parser = NonEmptyStringValueParser::new())]
        session: Option<String>,
        /// Groups returned per view, 0..100 [default: 100]; never limits totals.
        #[arg(long, value_name = "N", value_parser = parse_limit)]
        limit: Option<u32>,
        /// Output: json (the default, one compact document) or table (for people). The delivery
        /// contract refuses --json: its output is JSON.
        #[arg(long, value_name = "FORMAT", value_parser = ["json", "table"])]
        format: Option<String>,
    },
    /// One recorded observation by its event id.
    Read {
        /// Delivery store directory.
        #[arg(long, value_name = "PATH", value_parser = NonEmptyStringValueParser::new())]
        store: String,
        /// Event UUID (non-nil, hyphenated).
        #[arg(long, value_name = "UUID", value_parser = parse_event)]
        event: uuid::Uuid,
    },
}

#[derive(Debug, Subcommand)]
enum DaemonCli {
    /// Socket, versions, every store with its size and records, ingestion lag,
    /// spool backlog, the dashboard URL; exit 5 when beed is not running.
    Status {
        /// json (the default when piped) or table (the default on a terminal).
        #[arg(long, value_name = "FORMAT", value_parser = ["json", "table"])]
        format: Option<String>,
        /// JSON, even on a terminal.
        #[arg(long, conflicts_with = "format")]
        json: bool,
    },
    /// Start beed in the background (the one beside beectl, else on PATH) and wait until it answers.
    Start,
    /// Stop the running beed (SIGTERM) and wait until it is gone; nothing to stop is not an error.
    Stop,
    /// Stop, then start.
    Restart,
}

/// A validated command.
#[derive(Debug)]
pub enum Command {
    Delivery(DeliveryCommand),
    Token(EstimateArgs),
    Budget(BudgetArgs),
    Run(RunArgs),
    Quota(LedgerAsk),
    Ingest,
    Status(LedgerAsk),
    Usage(UsageArgs),
    Prices {
        prices: Option<String>,
        json: bool,
    },
    Agents {
        json: bool,
    },
    Top {
        timezone: Option<String>,
        once: bool,
        json: bool,
    },
    Daemon(DaemonCommand),
    Dashboard,
    Audit(AuditArgs),
    Canary(AuditArgs),
    HooksInstall(InstallArgs),
    HooksUninstall(UninstallArgs),
    Setup(SetupArgs),
    EventsRecent {
        limit: Option<u64>,
    },
    ArtifactAdd {
        file: String,
    },
    Plan(PlanCommand),
    ContextDoctor {
        manifest: String,
        root: Option<String>,
    },
    BudgetManifest {
        manifest: String,
        calls: u64,
        root: Option<String>,
    },
    ContextPacket {
        manifest: Option<String>,
        manifest_json: Option<String>,
        budget_bytes: Option<u64>,
        root: Option<String>,
    },
    ArtifactList,
    ReprEncode {
        file: Option<String>,
        encoding: Option<String>,
        budget_bytes: Option<u64>,
    },
    ReprDecode {
        file: Option<String>,
        budget_bytes: Option<u64>,
    },
    CompressSet {
        enabled: bool,
    },
    CompressStatus,
    ExportStatus,
    Design(DesignCommand),
    CompressProse {
        file: Option<String>,
        rate_percent: u32,
        budget_bytes: Option<u64>,
    },
    ArtifactGet {
        id: String,
        out: String,
    },
    McpServe {
        root: Option<String>,
        discovery: bool,
    },
}

/// `beectl audit` and `beectl audit canary`.
#[derive(Debug, Default)]
pub struct AuditArgs {
    pub session: Option<String>,
    pub manifest: Option<String>,
    pub settings: Option<String>,
    /// Canary only: the stream URL to prove presentation on.
    pub stream: Option<String>,
    /// A table (`Some(true)`), JSON (`Some(false)`), or as the terminal says.
    pub table: Option<bool>,
    /// Classes that make the command exit 5 (a CI gate).
    pub fail_on: Vec<bee_proto::audit::AuditClass>,
    /// Run no outcome check.
    pub no_outcome_checks: bool,
}

/// `beectl hooks install`.
#[derive(Debug)]
pub struct InstallArgs {
    /// `None`: the user's settings.
    pub project: Option<String>,
    /// Explicit events; empty: the preset.
    pub events: Vec<String>,
    pub reference: bool,
    pub team: bool,
    pub source_app: Option<String>,
    pub dry_run: bool,
}

/// `beectl plan …`.
#[derive(Debug)]
pub enum PlanCommand {
    Create { file: String },
    Bind { space: String, checkout: Option<String> },
    Unbind { checkout: Option<String> },
    Claim { plan: String, step: String, owner: String },
    Report { plan: String, step: String, owner: String, blocked: bool },
    Show { plan: String },
}

/// `beectl setup`: the event hooks as `hooks install` wires them, and more.
#[derive(Debug)]
pub struct SetupArgs {
    pub hooks: InstallArgs,
    pub prompt_block: Option<String>,
    /// `auto`, `systemd`, `launchd` or `none`.
    pub service: String,
    pub undo: bool,
    /// Whose hooks: Claude Code's, Gemini CLI's, Qwen Code's, Copilot CLI's, Codex's or Cline's.
    pub agent: bee_proto::ledger::Provider,
}

/// `beectl hooks uninstall`.
#[derive(Debug)]
pub struct UninstallArgs {
    /// `None`: the user's settings.
    pub project: Option<String>,
    pub dry_run: bool,
}

#[derive(Debug)]
pub struct RunArgs {
    /// The CLIs `run` reads the machine output of (spec/30: Claude Code and Codex).
    pub provider: bee_proto::usage::Harness,
    /// The provider command and its arguments, untouched.
    pub command: Vec<OsString>,
}

#[derive(Debug)]
pub struct BudgetArgs {
    pub harness: bee_proto::usage::Harness,
    pub session: uuid::Uuid,
    pub log: String,
}

/// One selected input, in command-line order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selection {
    File(String),
    Stdin,
}

#[derive(Debug)]
pub struct EstimateArgs {
    pub root: Option<String>,
    pub selections: Vec<Selection>,
    /// What `--stdin` reads instead of the process's stdin (the MCP server's
    /// inline text: its own stdin is the protocol).
    pub stdin_text: Option<Vec<u8>>,
    pub encoding: bee_proto::tokens::Encoding,
    pub calls: u64,
    pub output_budget: Option<u64>,
    pub limit: u64,
}

#[derive(Debug)]
pub enum DeliveryCommand {
    Report(ReportArgs),
    Read(ReadArgs),
}

#[derive(Debug)]
pub enum DaemonCommand {
    /// Whether as a table.
    Status(Option<bool>),
    Start,
    Stop,
    Restart,
}

#[derive(Debug)]
pub struct ReportArgs {
    pub store: String,
    pub session: Option<SessionSelector>,
    pub limit: u32,
    pub table: bool,
}

#[derive(Debug)]
pub struct ReadArgs {
    pub store: String,
    pub event: uuid::Uuid,
}

/// What parsing produced.
#[derive(Debug)]
pub enum Parsed {
    Command(Command),
    /// Help or version text to print as is (exit 0).
    Text(String),
}

fn parse_limit(text: &str) -> Result<u32, String> {
    let n = parse_decimal(text)?;
    if n > u64::from(MAX_GROUP_LIMIT) {
        return Err(format!("{text} is out of range 0..{MAX_GROUP_LIMIT}"));
    }
    Ok(n as u32)
}

/// Unsigned ASCII decimal digits only: no sign, no spaces, no hex.
fn parse_decimal(text: &str) -> Result<u64, String> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("{text:?} is not an unsigned decimal number"));
    }
    text.parse::<u64>().map_err(|_| format!("{text} is out of range"))
}

fn bounded(text: &str, low: u64, high: u64) -> Result<u64, String> {
    let n = parse_decimal(text)?;
    if n < low || n > high {
        return Err(format!("{text} is out of range {low}..{high}"));
    }
    Ok(n)
}

fn parse_calls(text: &str) -> Result<u64, String> {
    bounded(text, 1, MAX_CALLS)
}

fn parse_output_budget(text: &str) -> Result<u64, String> {
    bounded(text, 0, MAX_OUTPUT_BUDGET)
}

fn parse_rows(text: &str) -> Result<u64, String> {
    bounded(text, 0, MAX_ROW_LIMIT)
}

fn parse_event(text: &str) -> Result<uuid::Uuid, String> {
    parse_hyphenated_uuid(text).ok_or_else(|| format!("{text:?} is not a non-nil hyphenated UUID"))
}

/// Parses beectl's arguments (without the program name). No arguments at
/// all: the help.
pub fn parse(raw: Vec<OsString>) -> Result<Parsed, Usage> {
    if raw.is_empty() {
        return Ok(Parsed::Text(<Cli as clap::CommandFactory>::command().render_help().to_string()));
    }
    let family = match raw.first().and_then(|first| first.to_str()) {
        Some("token") => Family::Token,
        Some("budget") => Family::Budget,
        _ => Family::Other,
    };
    if raw.first().is_some_and(|first| first == "run") {
        return parse_run(raw).map_err(|message| Usage { family, message });
    }
    parse_family(raw).map_err(|message| Usage { family, message })
}

/// `run [--agent A] -- CMD ARGS…`: our options before `--` follow every
/// rule; the provider command after it is passed on untouched (any bytes).
fn parse_run(raw: Vec<OsString>) -> Result<Parsed, String> {
    let Some(split) = raw.iter().position(|arg| arg == "--") else {
        // `run --help` and the like answer; anything else lacks the command.
        return match parse_family(raw)? {
            Parsed::Text(text) => Ok(Parsed::Text(text)),
            Parsed::Command(_) => {
                Err("give the agent's command after --: beectl run --agent claude -- claude -p …".into())
            }
        };
    };
    let command = raw[split + 1..].to_vec();
    if command.is_empty() {
        return Err("give the provider command after --".into());
    }
    match parse_family(raw[..split].to_vec())? {
        Parsed::Command(Command::Run(RunArgs { provider, .. })) => {
            Ok(Parsed::Command(Command::Run(RunArgs { provider, command })))
        }
        other => Ok(other),
    }
}

/// The man page of beectl, or of the command `path` names (`beectl-usage(1)`,
/// `beectl-audit-canary(1)`: the names beectl's own page refers to).
fn man_page(path: &[String]) -> Result<String, String> {
    let mut command = <Cli as clap::CommandFactory>::command();
    command.build();
    for word in path {
        let Some(sub) = command.find_subcommand(word).cloned() else {
            let known: Vec<&str> = command.get_subcommands().map(clap::Command::get_name).collect();
            return Err(format!("no command {word:?} here; the commands are {}", known.join(", ")));
        };
        command = sub;
    }
    let name = std::iter::once("beectl").chain(path.iter().map(String::as_str)).collect::<Vec<_>>().join("-");
    let mut out = Vec::new();
    clap_mangen::Man::new(command).title(name).render(&mut out).map_err(|err| format!("the man page: {err}"))?;
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// Commands that take no `--json`: those whose answer is not a report, and
/// the delivery commands, whose contract (spec/10) refuses it.
const NOT_REPORTS: &[&str] = &["completions", "man", "run", "mcp", "setup", "hooks", "help", "delivery"];

/// `--json` on a report command whose answer is one JSON document anyway:
/// accepted (scripts pass it to every report command) and changes nothing.
/// A command with a `--json` of its own keeps it.
fn drop_redundant_json(args: &mut Vec<String>) {
    let Some(at) = args.iter().position(|arg| arg == "--json") else { return };
    if args[..at].iter().any(|arg| arg == "--") {
        return;
    }
    let mut command = <Cli as clap::CommandFactory>::command();
    let mut path = Vec::new();
    for word in args[1..at].iter().take_while(|word| !word.starts_with('-')) {
        let Some(sub) = command.find_subcommand(word).cloned() else { break };
        path.push(word.clone());
        command = sub;
    }
    let leaf = command.get_subcommands().next().is_none();
    let own = command.get_arguments().any(|arg| arg.get_long() == Some("json"));
    let report = path.first().is_some_and(|first| !NOT_REPORTS.contains(&first.as_str()));
    if leaf && report && !own {
        args.remove(at);
    }
}

fn parse_family(raw: Vec<OsString>) -> Result<Parsed, String> {
    let first = raw.first().and_then(|first| first.to_str());
    let (max_args, max_units) = match first {
        Some("token") => (MAX_TOKEN_ARGS, MAX_TOKEN_ARG_UTF16_UNITS),
        Some("usage") => (MAX_USAGE_ARGS, MAX_ARG_UTF16_UNITS),
        _ => (MAX_ARGS, MAX_ARG_UTF16_UNITS),
    };
    if raw.len() > max_args {
        return Err(format!("{} arguments given; at most {max_args}", raw.len()));
    }
    let mut args = Vec::with_capacity(raw.len() + 1);
    let mut units = 0u64;
    for arg in raw {
        let arg = arg.into_string().map_err(|_| "arguments must be UTF-8".to_owned())?;
        units += bee_proto::text::utf16_units(&arg);
        if arg.starts_with("--") && arg.contains('=') {
            return Err(format!("write options as separate tokens: {:?}", arg.split('=').next().unwrap_or("")));
        }
        args.push(arg);
    }
    if units > max_units {
        return Err(format!("arguments total {units} UTF-16 units; at most {max_units}"));
    }
    args.insert(0, "beectl".to_owned());
    drop_redundant_json(&mut args);
    let cli = match Cli::try_parse_from(&args) {
        Ok(cli) => cli,
        Err(err) => {
            return match err.kind() {
                ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => Ok(Parsed::Text(err.render().to_string())),
                _ => Err(whole_message(&err.render().to_string())),
            };
        }
    };
    Ok(Parsed::Command(match cli.command {
        CliCommand::Delivery(DeliveryCli::Report { store, session_kind, session, limit, format }) => {
            let session = match (session_kind, session) {
                (Some(kind), Some(id)) => {
                    let kind = Identity::parse(&kind).map_err(|err| format!("--session-kind: {err}"))?;
                    // A UUID typed in capitals is the same session (as in `budget --measured`).
                    let id = bee_proto::identity::session_as_stored(kind.as_str(), &id);
                    let id = Identity::parse(&id).map_err(|err| format!("--session: {err}"))?;
                    Some(SessionSelector::new(kind, id).map_err(|err| format!("--session: {err}"))?)
                }
                (None, None) => None,
                _ => return Err("--session-kind and --session go together".into()),
            };
            Command::Delivery(DeliveryCommand::Report(ReportArgs {
                store,
                session,
                limit: limit.unwrap_or(MAX_GROUP_LIMIT),
                table: format.as_deref() == Some("table"),
            }))
        }
        CliCommand::Delivery(DeliveryCli::Read { store, event }) => {
            Command::Delivery(DeliveryCommand::Read(ReadArgs { store, event }))
        }
        CliCommand::Daemon(DaemonCli::Status { format, json }) => {
            let table = if json { Some(false) } else { format.map(|format| format == "table") };
            Command::Daemon(DaemonCommand::Status(table))
        }
        CliCommand::Daemon(DaemonCli::Start) => Command::Daemon(DaemonCommand::Start),
        CliCommand::Daemon(DaemonCli::Stop) => Command::Daemon(DaemonCommand::Stop),
        CliCommand::Daemon(DaemonCli::Restart) => Command::Daemon(DaemonCommand::Restart),
        CliCommand::Dashboard => Command::Dashboard,
        CliCommand::Quota { range, agent, output } => Command::Quota(LedgerAsk {
            range: range.ask(Some(24 * 3_600_000)),
            provider: agent.as_deref().and_then(bee_proto::ledger::Provider::from_name),
            table: output.asked(),
        }),
        CliCommand::Status { range, output } => {
            Command::Status(LedgerAsk { range: range.ask(Some(24 * 3_600_000)), provider: None, table: output.asked() })
        }
        CliCommand::Usage(usage) => Command::Usage(UsageArgs {
            by: usage.by,
            order: bee_proto::ledger::UsageOrder::from_name(&usage.order).ok_or("--order: asc or desc")?,
            last: usage.last.map(|n| n as usize),
            since: usage.since,
            until: usage.until,
            timezone: usage.timezone,
            filters: bee_proto::ledger::UsageFilters {
                provider: usage.agent.as_deref().and_then(bee_proto::ledger::Provider::from_name),
                project: usage.project,
                model: usage.model,
            },
            prices: usage.prices,
            output: match (usage.json, usage.format.as_deref()) {
                _ if usage.chart => UsageOutput::Chart,
                (true, _) | (_, Some("json")) => UsageOutput::Json,
                (_, Some("csv")) => UsageOutput::Csv,
                (_, Some(_)) => UsageOutput::Table,
                _ => UsageOutput::Auto,
            },
            compact: usage.compact,
            verbose: usage.verbose,
            no_import: usage.no_import,
        }),
        CliCommand::Prices { prices, json } => Command::Prices { prices, json },
        CliCommand::Agents { json } => Command::Agents { json },
        CliCommand::Top { timezone, once, json } => Command::Top { timezone, once, json },
        CliCommand::Completions { shell } => {
            let shell = match shell.as_str() {
                "bash" => clap_complete::Shell::Bash,
                "zsh" => clap_complete::Shell::Zsh,
                _ => clap_complete::Shell::Fish,
            };
            let mut out = Vec::new();
            clap_complete::generate(shell, &mut <Cli as clap::CommandFactory>::command(), "beectl", &mut out);
            return Ok(Parsed::Text(String::from_utf8_lossy(&out).into_owned()));
        }
        CliCommand::Man { command } => return man_page(&command).map(Parsed::Text),
        CliCommand::Ingest => Command::Ingest,
        CliCommand::Audit { canary: None, session, pinned } => Command::Audit(AuditArgs {
            session,
            manifest: pinned.manifest,
            settings: pinned.settings,
            stream: None,
            table: pinned.output.asked(),
            fail_on: fail_on(pinned.fail_on.as_deref())?,
            no_outcome_checks: pinned.no_outcome_checks,
        }),
        CliCommand::Audit { canary: Some(AuditCli::Canary { pinned, stream }), .. } => {
            if let Some(url) = &stream
                && !url.starts_with("ws://")
            {
                return Err("--stream: a ws:// URL".into());
            }
            Command::Canary(AuditArgs {
                session: None,
                manifest: pinned.manifest,
                settings: pinned.settings,
                stream,
                table: pinned.output.asked(),
                fail_on: fail_on(pinned.fail_on.as_deref())?,
                no_outcome_checks: pinned.no_outcome_checks,
            })
        }
        CliCommand::Hooks(HooksCli::Uninstall { project, user, dry_run }) => Command::HooksUninstall(UninstallArgs {
            project: if user { None } else { Some(project.unwrap_or_else(|| ".".to_owned())) },
            dry_run,
        }),
        CliCommand::Events(EventsCli::Recent { limit }) => Command::EventsRecent { limit },
        CliCommand::Artifact(ArtifactCli::Add { file }) => Command::ArtifactAdd { file },
        CliCommand::Context(ContextCli::Doctor { manifest, root }) => Command::ContextDoctor { manifest, root },
        CliCommand::Plan(plan) => Command::Plan(match plan {
            PlanCli::Create { file } => PlanCommand::Create { file },
            PlanCli::Bind { space, checkout } => PlanCommand::Bind { space, checkout },
            PlanCli::Unbind { checkout } => PlanCommand::Unbind { checkout },
            PlanCli::Claim { step: StepCli { plan, step, owner } } => PlanCommand::Claim { plan, step, owner },
            PlanCli::Report { step: StepCli { plan, step, owner }, blocked } => {
                PlanCommand::Report { plan, step, owner, blocked }
            }
            PlanCli::Show { plan } => PlanCommand::Show { plan },
        }),
        CliCommand::Context(ContextCli::Packet { manifest, manifest_json, budget_bytes, root }) => {
            Command::ContextPacket { manifest, manifest_json, budget_bytes, root }
        }
        CliCommand::Artifact(ArtifactCli::List) => Command::ArtifactList,
        CliCommand::Repr(ReprCli::Encode { file, encoding, budget_bytes }) => {
            Command::ReprEncode { file, encoding, budget_bytes }
        }
        CliCommand::Repr(ReprCli::Decode { file, budget_bytes }) => Command::ReprDecode { file, budget_bytes },
        CliCommand::Compress(CompressCli::Enable) => Command::CompressSet { enabled: true },
        CliCommand::Compress(CompressCli::Disable) => Command::CompressSet { enabled: false },
        CliCommand::Compress(CompressCli::Status) => Command::CompressStatus,
        CliCommand::Export(ExportCli::Status) => Command::ExportStatus,
        CliCommand::Design(design) => Command::Design(match design {
            DesignCli::Import { dir, bundle, root } => DesignCommand::Import { dir, bundle, root },
            DesignCli::Map { id, source, root } => {
                DesignCommand::Map { id, source, bundle: root.bundle, root: root.root }
            }
            DesignCli::Capture { id, url, file, viewport, root } => {
                DesignCommand::Capture { id, url, file, viewport, bundle: root.bundle, root: root.root }
            }
            DesignCli::Mcp { stdio: _, root } => DesignCommand::Mcp { root },
        }),
        CliCommand::Compress(CompressCli::Prose { file, rate_percent, budget_bytes }) => {
            Command::CompressProse { file, rate_percent, budget_bytes }
        }
        CliCommand::Artifact(ArtifactCli::Get { id, out }) => Command::ArtifactGet { id, out },
        CliCommand::Mcp(McpCli::Serve { root, discovery }) => Command::McpServe { root, discovery },
        CliCommand::Setup {
            project,
            user: _,
            prompt_block,
            events,
            reference,
            team,
            source_app,
            service,
            dry_run,
            undo,
            agent,
        } => Command::Setup(SetupArgs {
            hooks: InstallArgs { project, events: event_list(events)?, reference, team, source_app, dry_run },
            prompt_block,
            service,
            undo,
            agent: bee_proto::ledger::Provider::from_name(&agent).unwrap_or(bee_proto::ledger::Provider::Claude),
        }),
        CliCommand::Hooks(HooksCli::Install { project, user, events, reference, team, source_app, dry_run }) => {
            let events = event_list(events)?;
            Command::HooksInstall(InstallArgs {
                project: if user { None } else { Some(project.unwrap_or_else(|| ".".to_owned())) },
                events,
                reference,
                team,
                source_app,
                dry_run,
            })
        }
        CliCommand::Run { agent } => Command::Run(RunArgs {
            provider: bee_proto::usage::Harness::from_cli(&agent).ok_or("--agent: claude or codex")?,
            command: Vec::new(),
        }),
        CliCommand::Budget { manifest: Some(manifest), calls, root, .. } => {
            Command::BudgetManifest { manifest, calls: calls.unwrap_or(1), root }
        }
        CliCommand::Budget { measured: _, harness, session, log, manifest: None, .. } => Command::Budget(BudgetArgs {
            harness: harness
                .as_deref()
                .and_then(bee_proto::usage::Harness::from_cli)
                .ok_or("--harness: claude or codex")?,
            session: session.ok_or("--session: the session's id")?,
            log: log.ok_or("--log: the log's path")?,
        }),
        CliCommand::Token(TokenCli::Estimate {
            root,
            file: _,
            stdin: _,
            encoding,
            calls,
            output_budget,
            limit,
            json: _,
        }) => {
            let selections = selections_in_order(&args[1..]);
            if selections.is_empty() {
                return Err("select at least one input: --file REL or --stdin".into());
            }
            if selections.len() > MAX_INPUTS {
                return Err(format!("{} inputs selected; at most {MAX_INPUTS}", selections.len()));
            }
            if selections.iter().filter(|s| **s == Selection::Stdin).count() > 1 {
                return Err("--stdin may be given once".into());
            }
            Command::Token(EstimateArgs {
                root,
                selections,
                stdin_text: None,
                encoding: encoding.as_deref().and_then(Encoding::from_cli).unwrap_or(Encoding::Heuristic),
                calls: calls.unwrap_or(1),
                output_budget,
                limit: limit.unwrap_or(DEFAULT_ROW_LIMIT),
            })
        }
    }))
}

/// `--file` and `--stdin` in the order given (clap keeps each apart).
/// Every option is a separate token here, so a value follows its option.
fn selections_in_order(args: &[String]) -> Vec<Selection> {
    const WITH_VALUE: [&str; 6] = ["--root", "--file", "--encoding", "--calls", "--output-budget", "--limit"];
    let mut selections = Vec::new();
    let mut at = 0;
    while at < args.len() {
        match args[at].as_str() {
            "--file" => {
                if let Some(path) = args.get(at + 1) {
                    selections.push(Selection::File(path.clone()));
                }
                at += 2;
            }
            "--stdin" => {
                selections.push(Selection::Stdin);
                at += 1;
            }
            option if WITH_VALUE.contains(&option) => at += 2,
            _ => at += 1,
        }
    }
    selections
}

/// clap's whole message (what is wrong, the tips, the usage line), without
/// its `error: ` prefix; never empty.
fn whole_message(rendered: &str) -> String {
    let message = rendered.trim().trim_start_matches("error: ").to_owned();
    if message.is_empty() { "invalid usage".to_owned() } else { message }
}

/// Every agent's name, as `--agent` (once `--provider`) takes it.
fn agent_names() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(bee_proto::ledger::Provider::ALL.iter().map(|agent| agent.as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_strs(args: &[&str]) -> Result<Parsed, Usage> {
        parse(args.iter().map(OsString::from).collect())
    }

    #[test]
    fn invalid_usage_matrix() {
        let sid = "3f2b8c1e-6a4d-4e9b-9c7a-1d2e3f4a5b6c";
        let bad: &[&[&str]] = &[
            &["delivery"],
            &["delivery", "report"],
            &["delivery", "report", "--store"],
            &["delivery", "report", "--store", ""],
            &["delivery", "report", "--store", "a", "--store", "b"],
            &["delivery", "report", "--store", "a", "--bogus"],
            &["delivery", "report", "--store", "a", "--limit", "101"],
            &["delivery", "report", "--store", "a", "--limit", "-1"],
            &["delivery", "report", "--store", "a", "--limit", "+5"],
            &["delivery", "report", "--store", "a", "--limit", "0x5"],
            &["delivery", "report", "--store", "a", "--limit="],
            &["delivery", "report", "--store=a"],
            &["delivery", "report", "--store", "a", "--session", sid],
            &["delivery", "report", "--store", "a", "--session-kind", "claude-native-session"],
            &[
                "delivery",
                "report",
                "--store",
                "a",
                "--session-kind",
                "claude-native-session",
                "--session",
                "00000000-0000-0000-0000-000000000000",
            ],
            &["delivery", "report", "--store", "a", "--session-kind", "bad kind", "--session", "x"],
            &["delivery", "read", "--store", "a"],
            &["delivery", "read", "--store", "a", "--event", "not-a-uuid"],
            &["delivery", "read", "--store", "a", "--event", "00000000-0000-0000-0000-000000000000"],
            &["delivery", "read", "--store", "a", "--event", "3f2b8c1e6a4d4e9b9c7a1d2e3f4a5b6c"],
            &["delivery", "frobnicate"],
            &["delivery", "report", "--store", "a", "--format", "yaml"],
            &["delivery", "report", "--store", "a", "--json"],
        ];
        for args in bad {
            assert!(parse_strs(args).is_err(), "accepted {args:?}");
        }
        let many: Vec<&str> = std::iter::repeat_n("x", 17).collect();
        assert!(parse_strs(&many).is_err());
        let long = "x".repeat(16_385);
        assert!(parse_strs(&["delivery", "report", "--store", &long]).is_err());
    }

    #[test]
    fn valid_forms() {
        let sid = "3f2b8c1e-6a4d-4e9b-9c7a-1d2e3f4a5b6c";
        for args in [
            &["delivery", "report", "--store", "a"][..],
            &["delivery", "report", "--store", "a", "--limit", "0"],
            &["delivery", "report", "--store", "a", "--format", "table"],
            &["delivery", "report", "--limit", "100", "--store", "a"],
            &["delivery", "report", "--store", "a", "--session-kind", "claude-native-session", "--session", sid],
            &["delivery", "report", "--store", "a", "--session-kind", "codex-session", "--session", "r-1"],
            &["delivery", "read", "--store", "a", "--event", sid],
            &["daemon", "status"],
        ] {
            assert!(matches!(parse_strs(args), Ok(Parsed::Command(_))), "rejected {args:?}");
        }
        assert!(matches!(parse_strs(&["delivery", "--help"]), Ok(Parsed::Text(_))));
        assert!(matches!(parse_strs(&["--version"]), Ok(Parsed::Text(_))));
    }

    /// `quota` and `status` take the time words `usage` takes, resolved
    /// the same way: a day given to `--until` is included whole.
    #[test]
    fn the_time_word_views_take_usages_time_words() {
        let zone = bee_daemon::ledger::views::calendar::Zone::local();
        let now = bee_proto::time::now_unix_ms();
        let day = |end| zone.parse_time("2026-11-01", end, now).unwrap();
        for view in ["quota", "status"] {
            let Ok(Parsed::Command(Command::Quota(ask) | Command::Status(ask))) =
                parse_strs(&[view, "--since", "2026-11-01", "--until", "2026-11-01"])
            else {
                panic!("{view}: a day refused");
            };
            assert_eq!(ask.range, RangeAsk::Between { since: Some(day(false)), until: Some(day(true)) }, "{view}");
            let Ok(Parsed::Command(Command::Quota(ask) | Command::Status(ask))) = parse_strs(&[view, "--since", "7d"])
            else {
                panic!("{view}: 7d refused");
            };
            let RangeAsk::Between { since: Some(since), until: None } = ask.range else { panic!("{view}: {ask:?}") };
            assert!((now - 7 * 86_400_000 - 1_000..=now - 7 * 86_400_000 + 60_000).contains(&since), "{view}: {since}");
            for text in ["", "tomorrow", "0d", "2026-13-01", "7 d", "2026-11-30T10:00:00"] {
                assert!(parse_strs(&[view, "--since", text]).is_err(), "{view} took --since {text:?}");
            }
            assert!(parse_strs(&[view, "--window", "5h", "--since", "today"]).is_err(), "{view}: both");
        }
    }

    /// `--agent` names the agent everywhere; `--provider`, its earlier
    /// name, is the same option; a report's output is as asked, or as the
    /// terminal says.
    #[test]
    fn agent_is_the_agents_name_and_output_is_as_asked() {
        for words in [["quota", "--agent", "codex"], ["quota", "--provider", "codex"]] {
            let Ok(Parsed::Command(Command::Quota(ask))) = parse_strs(&words) else { panic!("{words:?}") };
            assert_eq!(ask.provider, Some(bee_proto::ledger::Provider::Codex), "{words:?}");
        }
        for words in [["run", "--agent", "codex", "--", "codex"], ["run", "--provider", "codex", "--", "codex"]] {
            assert!(matches!(parse_strs(&words), Ok(Parsed::Command(Command::Run(_)))), "{words:?}");
        }
        for (words, table) in [
            (&["status"][..], None),
            (&["status", "--json"], Some(false)),
            (&["status", "--format", "json"], Some(false)),
            (&["status", "--format", "table"], Some(true)),
        ] {
            let Ok(Parsed::Command(Command::Status(ask))) = parse_strs(words) else { panic!("{words:?}") };
            assert_eq!(ask.table, table, "{words:?}");
        }
        for (words, output) in [
            (&["usage"][..], UsageOutput::Auto),
            (&["usage", "--json"], UsageOutput::Json),
            (&["usage", "--format", "table"], UsageOutput::Table),
            (&["usage", "--format", "csv"], UsageOutput::Csv),
            (&["usage", "--chart", "--by", "day,agent"], UsageOutput::Chart),
        ] {
            let Ok(Parsed::Command(Command::Usage(args))) = parse_strs(words) else { panic!("{words:?}") };
            assert_eq!(args.output, output, "{words:?}");
        }
        for words in [["usage", "--chart", "--json"], ["usage", "--chart", "--compact"]] {
            assert!(parse_strs(&words).is_err(), "{words:?}: a chart is neither");
        }
        assert!(parse_strs(&["usage", "--chart", "--format", "csv"]).is_err());
        assert!(parse_strs(&["usage", "--format", "xml"]).is_err());
    }

    #[test]
    fn non_utf8_argument_is_invalid_usage() {
        use std::os::unix::ffi::OsStringExt;
        let raw = vec![
            OsString::from("delivery"),
            OsString::from("report"),
            OsString::from("--store"),
            OsString::from_vec(vec![0xff, 0xfe]),
        ];
        assert!(parse(raw).is_err());
    }
}
