//! `bee-hook on EVENT [--block FILE --surface S] [--turn] [--event --source-app APP]`:
//! every role Bee plays on one hook event, in one process and one round
//! trip to beed.
//!
//! Claude Code waits for each hook process of an event, so three Bee
//! entries on `UserPromptSubmit` cost three starts and three posts. Here
//! each role keeps its own contract exactly — the block's bytes are written
//! and flushed first and decide the exit status; the turn mark and the
//! event never print on stdout — and what they have to say goes to beed as
//! one report within the one 100 ms deadline ([`bee_proto::api::HOOK_PATH`]).
//! Whatever beed did not take is handled part by part as its own
//! subcommand would: an observation or turn mark to the spool, an event to
//! the spool and said on stderr.

use bee_proto::api::{HOOK_PATH, HookReceipt, HookReceipts, HookReport};
use bee_proto::delivery::STEERING_BLOCK_ITEM;
use bee_proto::events::PostFailure;
use bee_proto::ledger::{LedgerRecord, TurnMark};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use crate::post::{self, Delivery, ExchangeFailure};
use crate::prompt::{self, Pending, Settings};
use crate::{event, ledger, turn};

/// `bee-hook on`'s arguments: the event and the roles for it.
#[derive(Debug, clap::Args)]
pub(crate) struct OnArgs {
    /// The hook event this entry is wired on (as settings.json names it).
    #[arg(value_name = "EVENT")]
    pub(crate) hook_event: String,
    /// Mark an interactive turn's start or end, as `bee-hook turn` does.
    #[arg(long)]
    pub(crate) turn: bool,
    /// With --turn: the agent whose hook runs it (claude, gemini, qwen, copilot, codex).
    #[arg(long, value_name = "NAME", default_value = "claude", value_parser = turn::agent_of)]
    pub(crate) agent: bee_proto::ledger::Provider,
    /// Post the event to beed, as `bee-hook event` does.
    #[arg(long = "event", requires = "source_app")]
    pub(crate) post_event: bool,
    /// With --event: the app or project the events come from.
    #[arg(long, value_name = "NAME", requires = "post_event")]
    pub(crate) source_app: Option<String>,
    /// With --event: also send the full hook input (a privacy trade-off).
    #[arg(long, requires = "post_event")]
    pub(crate) capture_payload: bool,
    /// Deliver this steering block, as `bee-hook prompt --block` does.
    #[arg(long, value_name = "FILE", requires = "surface")]
    pub(crate) block: Option<PathBuf>,
    /// With --block: `plain` or `context-json`.
    #[arg(long, value_name = "SURFACE", requires = "block")]
    pub(crate) surface: Option<String>,
    /// With --block: the item identity [default: steering-block].
    #[arg(long, value_name = "ID", requires = "block")]
    pub(crate) item: Option<String>,
    /// With --block: the item version [default: 1].
    #[arg(long, value_name = "VERSION", requires = "block")]
    pub(crate) item_version: Option<String>,
}

/// What the roles have for beed.
#[derive(Default)]
struct Parts {
    observation: Option<Pending>,
    records: Vec<LedgerRecord>,
    event: Option<serde_json::Value>,
}

pub fn run(args: OnArgs) -> ExitCode {
    let (input, whole) = prompt::read_stdin_prefix();
    let mut parts = Parts::default();
    // The block first: its bytes and exit status are the agent's, and
    // nothing below may change or delay them.
    let status = match &args.block {
        Some(block) => {
            let (status, observation) = deliver_block(&args, block, &input, whole);
            parts.observation = observation;
            status
        }
        None => {
            // The rest of an oversized input is drained, so the agent's
            // write never meets a broken pipe.
            let _ = std::io::copy(&mut std::io::stdin().lock(), &mut std::io::sink());
            0
        }
    };
    if args.turn && whole {
        let mark: Option<TurnMark> = turn::mark_of(&input, &bee_proto::time::now_rfc3339(), args.agent);
        parts.records.extend(mark.map(LedgerRecord::TurnMark));
    }
    if args.post_event {
        let source_app = args.source_app.as_deref().unwrap_or_default();
        match event::event_of(&input, whole, source_app, args.capture_payload) {
            Ok(event) => parts.event = Some(event),
            Err(why) => say!("bee-hook: event not sent: {why}"),
        }
    }
    report(parts);
    ExitCode::from(status)
}

/// Writes the block as `bee-hook prompt --block` does: its exit status and
/// its observation.
fn deliver_block(args: &OnArgs, block: &std::path::Path, input: &[u8], whole: bool) -> (u8, Option<Pending>) {
    // clap asks for --surface with --block.
    let surface = args.surface.as_deref().unwrap_or_default();
    match Settings::parse(surface, args.item.as_deref(), args.item_version.as_deref(), STEERING_BLOCK_ITEM) {
        Ok(settings) => prompt::deliver(&settings, prompt::block_output(block, settings.surface), input, whole),
        Err(message) => {
            say!("bee-hook: {message}; not observed");
            (1, None)
        }
    }
}

/// Sends every part in one report and settles each by its receipt.
fn report(parts: Parts) {
    let ledger = ledger::body_of(&parts.records);
    let event = parts.event.as_ref().and_then(|event| serde_json::value::to_raw_value(event).ok());
    let report = HookReport {
        observation: parts.observation.as_ref().map(|pending| &*pending.body),
        ledger: ledger.as_deref(),
        event: event.as_deref(),
    };
    if report.observation.is_none() && report.ledger.is_none() && report.event.is_none() {
        return;
    }
    let receipts = match serde_json::to_vec(&report) {
        Ok(body) => send(body),
        Err(err) => Err(Unsent::Other(format!("cannot encode the report: {err}"))),
    };
    let (observation, ledger_receipt, event_receipt) = match &receipts {
        Ok(receipts) => (
            delivery(receipts.observation.as_ref()),
            delivery(receipts.ledger.as_ref()),
            stored(receipts.event.as_ref()),
        ),
        Err(unsent) => (Delivery::Unavailable(unsent.to_string()), Delivery::Unavailable(unsent.to_string()), {
            Err(unsent.event_failure())
        }),
    };
    if let Some(pending) = &parts.observation {
        prompt::settle(pending, observation);
    }
    ledger::settle(&parts.records, &ledger_receipt);
    if let Some(event) = parts.event {
        event::settle(event, event_receipt);
    }
}

/// Why the report got no receipts at all.
enum Unsent {
    Exchange(ExchangeFailure),
    /// beed answered, but not with receipts (another protocol, an older
    /// beed without the route, a failure): its HTTP status when it had one.
    Answer(String, Option<u16>),
    Other(String),
}

impl std::fmt::Display for Unsent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unsent::Exchange(failure) => write!(f, "{failure}"),
            Unsent::Answer(why, _) | Unsent::Other(why) => f.write_str(why),
        }
    }
}

impl Unsent {
    /// How the event's own post would have failed.
    fn event_failure(&self) -> PostFailure {
        match self {
            Unsent::Exchange(failure) => event::failure_of(failure),
            Unsent::Answer(_, Some(status)) if *status != 200 => PostFailure::Refused { status: *status },
            Unsent::Answer(..) => PostFailure::NoReceipt,
            Unsent::Other(_) => PostFailure::Unreachable,
        }
    }
}

fn send(body: Vec<u8>) -> Result<HookReceipts, Unsent> {
    let Some(socket) = bee_proto::paths::socket_path() else {
        return Err(Unsent::Other("no socket path".into()));
    };
    let deadline = Instant::now() + post::DEADLINE;
    // The event's echo is the largest part of an answer.
    let answer = post::exchange(socket, "POST", HOOK_PATH, body, deadline, event::MAX_ANSWER + 64 * 1024)
        .map_err(Unsent::Exchange)?;
    let parsed = post::status_and_body(&answer);
    match (post::classify_answer(&answer), parsed) {
        (Delivery::Accepted, Some((status, body))) => serde_json::from_slice(body)
            .map_err(|err| Unsent::Answer(format!("beed's receipts are not readable: {err}"), Some(status))),
        (Delivery::Accepted, None) => Err(Unsent::Answer("beed's answer was not HTTP".into(), None)),
        (Delivery::Refused(why) | Delivery::Unavailable(why), _) => Err(Unsent::Answer(why, parsed.map(|(s, _)| s))),
    }
}

/// What a receipt says of an observation or a ledger append.
fn delivery(receipt: Option<&HookReceipt>) -> Delivery {
    match receipt {
        Some(receipt) => post::classify_status(receipt.status),
        None => Delivery::Unavailable("beed's answer had no receipt for it".into()),
    }
}

/// What a receipt says of an event: its stored id, or how it failed.
fn stored(receipt: Option<&HookReceipt>) -> Result<i64, PostFailure> {
    match receipt {
        Some(receipt) => event::receipt_of(receipt.status, receipt.body.get().as_bytes()),
        None => Err(PostFailure::NoReceipt),
    }
}
