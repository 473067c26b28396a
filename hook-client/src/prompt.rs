//! `bee-hook prompt`: produce the output, write and flush it, then account.

use bee_proto::api::DELIVERY_OBSERVATIONS_PATH;
use bee_proto::delivery::{
    BUILTIN_ITEM_VERSION, ContextJsonOutput, ESTIMATOR_ID, ESTIMATOR_VERSION, Estimate, Observation,
    STEERING_BLOCK_ITEM, Surface, WRAPPED_COMMAND_ITEM,
};
use bee_proto::envelope;
use bee_proto::identity::Identity;
use std::ffi::OsString;
use std::io::{self, IsTerminal, Read, Write};
use std::path::PathBuf;
use std::process::{Command, ExitCode, Stdio};
use std::time::Instant;

use crate::output;
use crate::post::{self, Delivery};

/// `bee-hook prompt`'s arguments.
#[derive(Debug, clap::Args)]
pub(crate) struct PromptArgs {
    /// Output surface: `plain` (hook.prompt.plain) or `context-json` (hook.prompt.context-json).
    #[arg(long, value_name = "SURFACE")]
    pub(crate) surface: String,
    /// Steering block file to deliver.
    #[arg(long, value_name = "FILE", conflicts_with = "command")]
    pub(crate) block: Option<PathBuf>,
    /// Item identity of the output [default: steering-block, or wrapped-command].
    #[arg(long, value_name = "ID")]
    pub(crate) item: Option<String>,
    /// Item version [default: 1].
    #[arg(long, value_name = "VERSION")]
    pub(crate) item_version: Option<String>,
    /// Command whose stdout is the hook output; stdin, stdout, stderr and exit status pass through.
    #[arg(last = true, value_name = "CMD")]
    pub(crate) command: Vec<OsString>,
}

/// Set for a wrapped command: a bee-hook running inside another one is
/// nested and never observes (no hook call may measure another).
const NESTED_ENV: &str = "BEE_HOOK_NESTED";
/// When set, bee-hook prints a receipt on stderr: the event id and what
/// became of it, or why the prompt was not observed. Off by default, since
/// by default accounting never adds to the hook's stderr.
pub(crate) const DEBUG_ENV: &str = "BEE_HOOK_DEBUG";
/// Envelope bytes held in memory; the rest of a larger stdin is streamed
/// through to a wrapped command (and such an envelope is not observed).
const STDIN_HOLD_BYTES: u64 = 64 * 1024 * 1024;

pub(crate) struct Settings {
    pub(crate) surface: Surface,
    item_id: Identity,
    item_version: Identity,
}

fn settings(args: &PromptArgs) -> Result<Settings, String> {
    let default_item = if args.command.is_empty() { STEERING_BLOCK_ITEM } else { WRAPPED_COMMAND_ITEM };
    let settings = Settings::parse(&args.surface, args.item.as_deref(), args.item_version.as_deref(), default_item)?;
    if args.block.is_none() && args.command.is_empty() {
        return Err("give --block FILE or -- CMD ARGS...".into());
    }
    Ok(settings)
}

impl Settings {
    /// The surface and item identity the arguments name.
    pub(crate) fn parse(
        surface: &str,
        item: Option<&str>,
        item_version: Option<&str>,
        default_item: &str,
    ) -> Result<Settings, String> {
        let surface =
            Surface::from_cli(surface).ok_or_else(|| format!("unknown surface {surface:?} (plain or context-json)"))?;
        let item_id = Identity::parse(item.unwrap_or(default_item)).map_err(|err| format!("--item: {err}"))?;
        let item_version = Identity::parse(item_version.unwrap_or(BUILTIN_ITEM_VERSION))
            .map_err(|err| format!("--item-version: {err}"))?;
        Ok(Settings { surface, item_id, item_version })
    }
}

/// Runs the prompt hook and returns the exit status the agent must see.
pub fn run(args: PromptArgs) -> ExitCode {
    let settings = match settings(&args) {
        Ok(settings) => settings,
        Err(message) => {
            say!("bee-hook: {message}; not observed");
            return if args.command.is_empty() { ExitCode::from(1) } else { pass_through(&args.command) };
        }
    };
    let (envelope, whole) = read_stdin_prefix();
    let produced = match &args.block {
        Some(block) => block_output(block, settings.surface),
        None => wrapped_output(&args.command, &envelope, whole),
    };
    let (status, observation) = deliver(&settings, produced, &envelope, whole);
    if let Some(observation) = observation {
        account(&observation);
    }
    ExitCode::from(status)
}

/// Writes what was produced to the agent (or says why nothing was): the
/// exit status the agent must see, and the observation of a delivered
/// output. Everything after the write is accounting: silent, and unable
/// to change the output, the stderr or the exit status the agent has.
pub(crate) fn deliver(
    settings: &Settings,
    produced: Result<Produced, Failure>,
    envelope: &[u8],
    whole: bool,
) -> (u8, Option<Pending>) {
    let Produced { bytes, status, content_bytes } = match produced {
        Ok(produced) => produced,
        Err(failure) => {
            say!("bee-hook: {}", failure.message);
            return (failure.status, None);
        }
    };
    let observed_at_utc = bee_proto::time::now_rfc3339();
    let written = output::write_stdout(&bytes);
    let observed = status == 0 && whole;
    (
        status,
        observed.then(|| observation_of(settings, envelope, &bytes, content_bytes, written, observed_at_utc)).flatten(),
    )
}

/// Posts the observation alone, within the deadline; else spools it.
fn account(observation: &Pending) {
    let deadline = Instant::now() + post::DEADLINE;
    let delivery = match bee_proto::paths::socket_path() {
        Some(socket) => post::post(socket, DELIVERY_OBSERVATIONS_PATH, observation.body.get().into(), deadline),
        None => Delivery::Unavailable("no socket path".into()),
    };
    settle(observation, delivery);
}

/// An observation ready to post: its event id and its body.
pub(crate) struct Pending {
    event_id: uuid::Uuid,
    pub(crate) body: Box<serde_json::value::RawValue>,
}

/// The observation of an output written to the agent; `None` when it is
/// not observed (nested, no session, not UTF-8), said with `BEE_HOOK_DEBUG`.
fn observation_of(
    settings: &Settings,
    envelope: &[u8],
    output: &[u8],
    content: Option<u64>,
    written: output::WriteOutcome,
    observed_at_utc: String,
) -> Option<Pending> {
    if std::env::var_os(NESTED_ENV).is_some() {
        return None;
    }
    let env_session = std::env::var(envelope::SESSION_ENV).ok();
    let debug = std::env::var_os(DEBUG_ENV).is_some();
    let (session_kind, session_id) = match envelope::session_of(envelope, env_session.as_deref()) {
        Ok(session) => session,
        Err(not_observed) => {
            if debug {
                say!("bee-hook: not observed: {}", not_observed.reason());
            }
            return None;
        }
    };
    let Ok(text) = std::str::from_utf8(output) else {
        if debug {
            say!("bee-hook: not observed: output is not UTF-8");
        }
        return None;
    };
    let observation = Observation {
        kind: written.kind,
        observed_at_utc,
        event_id: uuid::Uuid::new_v4(),
        session_kind,
        session_id,
        surface: settings.surface,
        item_id: settings.item_id.clone(),
        item_version: settings.item_version.clone(),
        utf8_bytes: written.attempted,
        estimates: vec![Estimate {
            estimator: ESTIMATOR_ID.to_owned(),
            version: ESTIMATOR_VERSION,
            estimated_tokens: bee_proto::text::utf16_ceil_div4(text),
        }],
        // A block's size is known where it was wrapped; only a wrapped
        // command's output is read for it.
        content_utf8_bytes: content.or_else(|| content_bytes(settings.surface, text)),
    };
    let body = serde_json::value::to_raw_value(&observation).ok()?;
    Some(Pending { event_id: observation.event_id, body })
}

/// What follows beed's answer: nothing when it took the observation, the
/// spool when it could not be reached; a receipt with `BEE_HOOK_DEBUG`.
pub(crate) fn settle(observation: &Pending, delivery: Delivery) {
    let receipt = match delivery {
        Delivery::Accepted => "accepted by beed".to_owned(),
        Delivery::Refused(reason) => format!("refused by beed: {reason}"),
        Delivery::Unavailable(reason) => {
            // Nothing more can be done if even the spool fails; the hook's
            // own work is already done and must stay untouched.
            let spooled =
                bee_proto::paths::spool_dir().ok_or_else(|| "no spool directory".to_owned()).and_then(|dir| {
                    bee_proto::spool::append(
                        &dir,
                        bee_proto::spool::DELIVERY_SPOOL_FILE,
                        observation.body.get().as_bytes(),
                    )
                    .map_err(|err| err.to_string())
                });
            match spooled {
                Ok(()) => format!("spooled ({reason})"),
                Err(err) => format!("lost ({reason}; spool failed: {err})"),
            }
        }
    };
    if std::env::var_os(DEBUG_ENV).is_some() {
        say!("bee-hook: observation {} {receipt}", observation.event_id);
    }
}

/// A wrapped command's output's own bytes, without the surface's envelope: the
/// whole output of `plain`; the `additionalContext` of `context-json` (0
/// for a JSON answer without one). `None` when the output does not say —
/// a `context-json` output that is not a JSON object.
fn content_bytes(surface: Surface, output: &str) -> Option<u64> {
    match surface {
        Surface::Plain => Some(output.len() as u64),
        Surface::ContextJson => {
            let answer: serde_json::Value = serde_json::from_str(output).ok()?;
            answer.as_object()?;
            match answer.get("hookSpecificOutput").and_then(|specific| specific.get("additionalContext")) {
                None => Some(0),
                Some(serde_json::Value::String(context)) => Some(context.len() as u64),
                Some(_) => None,
            }
        }
    }
}

pub(crate) struct Produced {
    pub(crate) bytes: Vec<u8>,
    pub(crate) status: u8,
    /// The delivered text's own bytes, when the producer knows them.
    pub(crate) content_bytes: Option<u64>,
}

pub(crate) struct Failure {
    pub(crate) message: String,
    pub(crate) status: u8,
}

/// Reads stdin (not from a terminal) up to [`STDIN_HOLD_BYTES`]; `true` when
/// that was all of it.
pub(crate) fn read_stdin_prefix() -> (Vec<u8>, bool) {
    let stdin = io::stdin();
    if stdin.is_terminal() {
        return (Vec::new(), true);
    }
    let mut held = Vec::new();
    match stdin.lock().take(STDIN_HOLD_BYTES + 1).read_to_end(&mut held) {
        Ok(_) if held.len() as u64 <= STDIN_HOLD_BYTES => (held, true),
        Ok(_) => (held, false),
        Err(_) => (held, false),
    }
}

pub(crate) fn block_output(block: &std::path::Path, surface: Surface) -> Result<Produced, Failure> {
    // The rest of an oversized stdin is drained so the agent's write never
    // sees a broken pipe.
    let _ = io::copy(&mut io::stdin().lock(), &mut io::sink());
    let bytes = std::fs::read(block)
        .map_err(|err| Failure { message: format!("cannot read block file {}: {err}", block.display()), status: 1 })?;
    let content_bytes = Some(bytes.len() as u64);
    let bytes = match surface {
        Surface::Plain => bytes,
        Surface::ContextJson => {
            let text = String::from_utf8(bytes).map_err(|_| Failure {
                message: format!("block file {} is not UTF-8; context-json needs text", block.display()),
                status: 1,
            })?;
            let mut json = serde_json::to_vec(&ContextJsonOutput::user_prompt_submit(&text))
                .map_err(|err| Failure { message: format!("cannot encode the block: {err}"), status: 1 })?;
            json.push(b'\n');
            json
        }
    };
    Ok(Produced { bytes, status: 0, content_bytes })
}

pub(crate) fn wrapped_output(command: &[OsString], envelope: &[u8], whole: bool) -> Result<Produced, Failure> {
    let mut child = spawn(command, Stdio::piped(), Stdio::piped())?;
    let feeder = child.stdin.take().map(|mut child_stdin| {
        let held = envelope.to_vec();
        std::thread::spawn(move || {
            // A child that does not read its stdin closes the pipe: fine.
            if child_stdin.write_all(&held).is_ok() && !whole {
                let _ = io::copy(&mut io::stdin().lock(), &mut child_stdin);
            }
        })
    });
    let mut bytes = Vec::new();
    if let Some(mut stdout) = child.stdout.take() {
        let _ = stdout.read_to_end(&mut bytes);
    }
    let status =
        child.wait().map_err(|err| Failure { message: format!("waiting for the command: {err}"), status: 1 })?;
    if let Some(feeder) = feeder {
        let _ = feeder.join();
    }
    Ok(Produced { bytes, status: bee_proto::exit::shell_status(status), content_bytes: None })
}

fn spawn(command: &[OsString], stdin: Stdio, stdout: Stdio) -> Result<std::process::Child, Failure> {
    let (program, rest) =
        command.split_first().ok_or_else(|| Failure { message: "no command given".into(), status: 1 })?;
    Command::new(program)
        .args(rest)
        .env(NESTED_ENV, "1")
        .stdin(stdin)
        .stdout(stdout)
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|err| Failure {
            message: format!("cannot run {}: {err}", program.to_string_lossy()),
            // What a shell answers for a missing or non-executable command.
            status: if err.kind() == io::ErrorKind::NotFound { 127 } else { 126 },
        })
}

/// Runs `command` with stdin, stdout and stderr inherited and nothing observed.
pub fn pass_through(command: &[OsString]) -> ExitCode {
    match spawn(command, Stdio::inherit(), Stdio::inherit()) {
        Ok(mut child) => match child.wait() {
            Ok(status) => ExitCode::from(bee_proto::exit::shell_status(status)),
            Err(_) => ExitCode::from(1),
        },
        Err(failure) => {
            say!("bee-hook: {}", failure.message);
            ExitCode::from(failure.status)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_texts_own_bytes_leave_the_envelope_out() {
        let block = "Run the tests before you say done.\n";
        let wrapped = serde_json::to_string(&ContextJsonOutput::user_prompt_submit(block)).unwrap_or_default() + "\n";
        assert_eq!(content_bytes(Surface::ContextJson, &wrapped), Some(block.len() as u64));
        assert!(wrapped.len() > 2 * block.len(), "the envelope is most of a short block's output");
        assert_eq!(content_bytes(Surface::Plain, block), Some(block.len() as u64));
        assert_eq!(content_bytes(Surface::ContextJson, "{\"decision\":\"block\",\"reason\":\"no\"}"), Some(0));
        for unknown in ["not json", "[1]", "{\"hookSpecificOutput\":{\"additionalContext\":7}}"] {
            assert_eq!(content_bytes(Surface::ContextJson, unknown), None, "{unknown}");
        }
    }
}
