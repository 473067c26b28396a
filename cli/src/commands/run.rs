//! `beectl run --agent claude|codex -- CMD ARGS…`: runs a provider CLI
//! exactly as given — stdin, stdout, stderr and exit status pass through —
//! measures start, duration and success itself, reads what the CLI reports in
//! its machine output, and appends a `call` (and any `limit`) to the ledger.
//! A ledger that cannot be written never fails the run: it becomes the
//! warning `quota.record_failed`.

use bee_proto::ledger::{
    CallOutcome, CallRecord, CallSource, Detection, LEDGER_RECORDS_PATH, LEDGER_SPOOL_FILE, LedgerAppend, LedgerRecord,
    LimitRecord, Provider, RECORD_FAILED, RecordFailure, RecordProducer,
};
use bee_proto::usage::{Counters, Harness};
use serde_json::Value;
use signal_hook::consts::{SIGCONT, SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGTSTP, SIGUSR1, SIGUSR2, SIGWINCH};
use signal_hook::iterator::SignalsInfo;
use signal_hook::iterator::exfiltrator::origin::WithOrigin;
use signal_hook::low_level::siginfo::Cause;
use std::ffi::{OsStr, OsString};
use std::io::{self, IsTerminal, Read, Write};
use std::os::unix::process::CommandExt;
use std::process::{Command, ExitCode, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant, SystemTime};

use beectl::args::RunArgs;

/// Longest output line parsed for machine output; longer lines still pass through.
const MAX_PARSED_LINE: usize = 64 * 1024 * 1024;

pub fn run(args: RunArgs) -> ExitCode {
    let started_at = SystemTime::now();
    let clock = Instant::now();
    let (program, rest) = match args.command.split_first() {
        Some(split) => split,
        None => return ExitCode::from(4),
    };
    // At a terminal the provider CLI is interactive: it keeps the terminal
    // (its own stdout, the foreground process group) and its output is no
    // machine output to read. Elsewhere its output is read as it passes
    // through, and it runs in a process group of its own, so a signal to
    // beectl reaches the whole group it started, once.
    let at_terminal = io::stdin().is_terminal() || io::stdout().is_terminal() || io::stderr().is_terminal();
    // A CLI that never started spent no quota, and is still a call that
    // failed: the contract counts it.
    let not_started = |err: io::Error| {
        let _ = writeln!(std::io::stderr(), "beectl: cannot run {}: {err}", program.to_string_lossy());
        if !is_probe(args.provider, rest) {
            let records = Reported::default().records(
                Provider::from(args.provider),
                started_at,
                clock.elapsed(),
                Ended::NotStarted,
                false,
            );
            if let Err(reason) = record(records) {
                let _ = writeln!(std::io::stderr(), "beectl: warning {RECORD_FAILED}: {reason}");
                let _ = RecordFailure::note(RecordProducer::Run, 1);
            }
        }
        ExitCode::from(if err.kind() == io::ErrorKind::NotFound { 127 } else { 126 })
    };
    let mut command = match cli_command(program, rest) {
        Ok(command) => command,
        Err(err) => return not_started(err),
    };
    // The provider's own commands (a `git commit`, say) inherit this, so a
    // post-commit `bee-hook commit` knows whose work it is.
    command.env("BEE_RUN_PROVIDER", Provider::from(args.provider).as_str()).stdin(Stdio::inherit());
    if io::stdout().is_terminal() {
        command.stdout(Stdio::inherit()).stderr(Stdio::inherit());
    } else {
        command.stdout(Stdio::piped()).stderr(Stdio::piped());
    }
    if !at_terminal {
        command.process_group(0);
    }
    // Caught before the child starts, so no signal falls between.
    let signals = SignalsInfo::<WithOrigin>::new(FORWARDED);
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(err) => return not_started(err),
    };
    let forwarded = Arc::new(AtomicU64::new(0));
    let forwarder = match signals {
        Ok(signals) => Some(forward_signals(signals, &child, !at_terminal, Arc::clone(&forwarded))),
        Err(err) => {
            let _ = writeln!(std::io::stderr(), "beectl: warning: signals will not be forwarded: {err}");
            None
        }
    };
    // Bounded: a provider printing faster than its lines are read waits a
    // little instead of growing beectl's memory.
    let (lines_out, lines_in) = mpsc::sync_channel::<(Stream, Vec<u8>)>(256);
    let pumps: Vec<_> = [
        child.stdout.take().map(|out| pump(out, io::stdout(), Stream::Out, lines_out.clone())),
        child.stderr.take().map(|err| pump(err, io::stderr(), Stream::Err, lines_out.clone())),
    ]
    .into_iter()
    .flatten()
    .collect();
    drop(lines_out);
    // Always waited for: the child never outlives the run. The call ends
    // when the child exits, even where a process it left behind still holds
    // its output open (that output still passes through, to its end).
    let waiter = std::thread::spawn(move || {
        let status = child.wait();
        (status, clock.elapsed())
    });
    let mut reported = Reported::default();
    for (stream, line) in lines_in {
        reported.read(args.provider, stream, &line);
    }
    for pump in pumps {
        let _ = pump.join();
    }
    let (status, duration) =
        waiter.join().unwrap_or_else(|_| (Err(io::Error::other("the waiter stopped")), clock.elapsed()));
    if let Some((handle, thread)) = forwarder {
        handle.close();
        let _ = thread.join();
    }
    let code = match &status {
        Ok(status) => bee_proto::exit::shell_status(*status),
        Err(_) => 1,
    };
    if !is_probe(args.provider, rest) {
        // Interrupted only when the child ended by the signal: killed by
        // one, or exiting as a shell does on one it was sent (128 + its
        // number). A CLI that ignored a Ctrl-C and finished completed.
        let killed =
            status.as_ref().is_ok_and(|status| std::os::unix::process::ExitStatusExt::signal(status).is_some());
        let sent = forwarded.load(Ordering::SeqCst);
        let by_sent_signal = (129..=191).contains(&code) && sent & (1 << (code - 128)) != 0;
        let ended = if killed || by_sent_signal {
            Ended::Interrupted
        } else if code == 0 {
            Ended::Exited(true)
        } else {
            Ended::Exited(false)
        };
        let resumed = resumes_a_thread(args.provider, rest);
        let records = reported.records(Provider::from(args.provider), started_at, duration, ended, resumed);
        let count = records.len();
        if let Err(reason) = record(records) {
            let _ = writeln!(std::io::stderr(), "beectl: warning {RECORD_FAILED}: {reason}");
            let _ = RecordFailure::note(RecordProducer::Run, count);
        }
    }
    ExitCode::from(code)
}

/// beectl's hidden first argument for the process that becomes the CLI
/// (see [`cli_command`]).
pub const BECOME_CLI: &str = "__bee-run-become-cli";
/// The pid of the `beectl run` that started it.
const PARENT_ENV: &str = "BEE_RUN_PARENT";

/// The command that starts `program`. On Linux it is beectl itself
/// ([`become_cli`]), which has the kernel kill it when this beectl dies
/// (`PR_SET_PDEATHSIG`, so the CLI is never left running orphaned, whatever
/// ends beectl: a `SIGKILL` included) and then becomes the CLI by exec:
/// the same process, arguments and environment. A CLI that is not there
/// is known here, before anything starts.
fn cli_command(program: &OsStr, rest: &[OsString]) -> io::Result<Command> {
    resolve(program)?;
    if cfg!(target_os = "linux") {
        let mut command = Command::new(std::env::current_exe()?);
        let parent = rustix::process::getpid().as_raw_nonzero().get();
        command.arg(BECOME_CLI).arg(program).args(rest).env(PARENT_ENV, parent.to_string());
        Ok(command)
    } else {
        let mut command = Command::new(program);
        command.args(rest);
        Ok(command)
    }
}

/// Whether `program` is there to run, as exec finds it: a path, or a name
/// searched on `PATH`; not there is `NotFound`, there but not executable
/// `PermissionDenied`.
fn resolve(program: &OsStr) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let runnable = |path: &std::path::Path| {
        std::fs::metadata(path).map(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
    };
    let candidates: Vec<std::path::PathBuf> = if program.as_encoded_bytes().contains(&b'/') {
        vec![std::path::PathBuf::from(program)]
    } else {
        let path = std::env::var_os("PATH").unwrap_or_default();
        std::env::split_paths(&path)
            .map(|dir| if dir.as_os_str().is_empty() { std::path::PathBuf::from(".") } else { dir })
            .map(|dir| dir.join(program))
            .collect()
    };
    let mut found_unrunnable = false;
    for candidate in candidates {
        match runnable(&candidate) {
            Ok(true) => return Ok(()),
            Ok(false) => found_unrunnable = true,
            Err(_) => {}
        }
    }
    Err(if found_unrunnable {
        io::Error::new(io::ErrorKind::PermissionDenied, "not an executable file")
    } else {
        io::Error::new(io::ErrorKind::NotFound, "no such file on the path")
    })
}

/// The process [`cli_command`] starts: set to be killed when its `beectl
/// run` dies, then the CLI itself (`args`: the program and its arguments).
/// Returns only when the CLI could not be started.
pub fn become_cli(args: &[OsString]) -> ExitCode {
    let Some((program, rest)) = args.split_first() else { return ExitCode::from(4) };
    #[cfg(target_os = "linux")]
    if let Err(err) = rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL)) {
        let _ = writeln!(std::io::stderr(), "beectl: warning: the CLI will not end with beectl: {err}");
    }
    // The beectl that started it may have died before the line above.
    let parent = std::env::var(PARENT_ENV).ok().and_then(|pid| pid.parse::<i32>().ok());
    let now = rustix::process::getppid().map(|pid| pid.as_raw_nonzero().get());
    if parent.is_some_and(|parent| now != Some(parent)) {
        return ExitCode::from(1);
    }
    let err = Command::new(program).args(rest).env_remove(PARENT_ENV).exec();
    let _ = writeln!(std::io::stderr(), "beectl: cannot run {}: {err}", program.to_string_lossy());
    ExitCode::from(if err.kind() == io::ErrorKind::NotFound { 127 } else { 126 })
}

/// Every signal a terminal or a supervisor may send that the provider CLI
/// should get too: beectl forwards each (SIGKILL and SIGSTOP cannot be
/// caught, so cannot be).
const FORWARDED: [i32; 9] = [SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH, SIGCONT, SIGTSTP];

/// How the provider CLI's run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ended {
    /// It could not be started.
    NotStarted,
    /// It ended by a signal.
    Interrupted,
    /// It exited on its own, with success or not.
    Exited(bool),
}

/// Forwards every signal of [`FORWARDED`] to the child until the handle is
/// closed, noting in `sent` (a bit per signal number) which were sent. A
/// stop (`SIGTSTP`) stops beectl too once the child has it, as a terminal
/// stops its whole foreground group; `SIGCONT` wakes the child with it.
fn forward_signals(
    mut signals: SignalsInfo<WithOrigin>,
    child: &std::process::Child,
    own_group: bool,
    sent: Arc<AtomicU64>,
) -> (signal_hook::iterator::Handle, std::thread::JoinHandle<()>) {
    let handle = signals.handle();
    let pid = rustix::process::Pid::from_child(child);
    let thread = std::thread::spawn(move || {
        for origin in signals.forever() {
            let Some(signal) = rustix::process::Signal::from_named_raw(origin.signal) else { continue };
            let forwarded = if own_group {
                Some(rustix::process::kill_process_group(pid, signal))
            } else if origin.cause == Cause::Kernel {
                // From the terminal: it reached the whole foreground group,
                // the child included, already. Twice would be another
                // keypress; and an interactive CLI may take Ctrl-C as "stop
                // this answer" and go on, so only its exit says interrupted.
                None
            } else {
                Some(rustix::process::kill_process(pid, signal))
            };
            if let Some(result) = forwarded {
                if let Ok(bit) = u32::try_from(origin.signal) {
                    sent.fetch_or(1u64.checked_shl(bit).unwrap_or(0), Ordering::SeqCst);
                }
                if let Err(err) = result {
                    let _ = writeln!(
                        std::io::stderr(),
                        "beectl: could not forward signal {} to the provider: {err}",
                        origin.signal
                    );
                }
            }
            if origin.signal == SIGTSTP {
                // Caught, so it no longer stops beectl by itself.
                let _ = rustix::process::kill_process(rustix::process::getpid(), rustix::process::Signal::STOP);
            }
        }
    });
    (handle, thread)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stream {
    Out,
    Err,
}

/// Copies `from` to `to` as it arrives, and hands complete lines to the reader.
fn pump(
    mut from: impl Read + Send + 'static,
    mut to: impl Write + Send + 'static,
    stream: Stream,
    lines: mpsc::SyncSender<(Stream, Vec<u8>)>,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let mut buffer = vec![0u8; 64 * 1024];
        let mut line = Vec::new();
        let mut oversized = false;
        loop {
            let n = match from.read(&mut buffer) {
                Ok(0) => break,
                Ok(n) => n,
                Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => break,
            };
            // Pass-through first: what the user sees never waits for parsing.
            if to.write_all(&buffer[..n]).and_then(|_| to.flush()).is_err() {
                // Our reader went away; keep draining so the child is not blocked.
            }
            for &byte in &buffer[..n] {
                if byte == b'\n' {
                    if !oversized {
                        let _ = lines.send((stream, std::mem::take(&mut line)));
                    }
                    line.clear();
                    oversized = false;
                } else if !oversized {
                    line.push(byte);
                    if line.len() > MAX_PARSED_LINE {
                        line = Vec::new();
                        oversized = true;
                    }
                }
            }
        }
        if !line.is_empty() && !oversized {
            let _ = lines.send((stream, line));
        }
    })
}

/// Whether the arguments ask the provider CLI for its version or help, or
/// a subcommand that makes no model call (login, configuration, MCP
/// management…), by the CLI's own grammar: such a run is not recorded. Only
/// the option words themselves, and a subcommand in the first place, count:
/// `claude -p help` asks the model about "help".
fn is_probe(provider: Harness, args: &[OsString]) -> bool {
    let words: Vec<&str> = args.iter().map(|a| a.to_str().unwrap_or("")).take_while(|a| *a != "--").collect();
    let (flags, subcommands): (&[&str], &[&str]) = match provider {
        Harness::Claude => (
            &["--version", "-v", "--help", "-h"],
            &[
                "config",
                "mcp",
                "doctor",
                "update",
                "upgrade",
                "install",
                "setup-token",
                "migrate-installer",
                "plugin",
                "auth",
                "login",
                "logout",
                "help",
            ],
        ),
        Harness::Codex => (
            &["--version", "-V", "--help", "-h"],
            &[
                "login",
                "logout",
                "mcp",
                "mcp-server",
                "completion",
                "help",
                "features",
                "sandbox",
                "debug",
                "apply",
                "app-server",
                "generate-ts",
            ],
        ),
    };
    if words.iter().any(|word| flags.contains(word)) {
        return true;
    }
    words.first().is_some_and(|first| subcommands.contains(first))
}

/// Whether a run continues an existing thread or session (Codex `exec
/// resume`; Claude `--resume`, `--continue`): the counters (and Claude's
/// cost) it reports then include earlier turns, so this run's own are unknown.
fn resumes_a_thread(provider: Harness, args: &[OsString]) -> bool {
    match provider {
        Harness::Codex => args.iter().take(3).any(|a| a.to_str() == Some("resume")),
        // Claude Code 2.1 continues the same session, and its result's cost
        // and usage are the session's running totals.
        Harness::Claude => args.iter().take_while(|a| a.to_str() != Some("--")).any(|a| {
            matches!(a.to_str(), Some("--resume" | "-r" | "--continue" | "-c"))
                || a.to_str().is_some_and(|a| a.starts_with("--resume="))
        }),
    }
}

/// What the CLI reported about itself.
#[derive(Debug, Default)]
struct Reported {
    cost_usd: Option<f64>,
    tokens: Option<Counters>,
    model: Option<String>,
    invocations: Option<u64>,
    context_window: Option<u64>,
    session_id: Option<String>,
    is_error: Option<bool>,
    /// The CLI's machine output shows it reached the model (Claude's first
    /// assistant message or a turn count above 0; Codex's `turn.started`).
    asked_model: bool,
    /// Machine output was seen at all: without it, nothing is known of
    /// whether the model was asked.
    machine_output: bool,
    limits: Vec<(SystemTime, Option<String>, Detection)>,
}

impl Reported {
    fn read(&mut self, provider: Harness, stream: Stream, line: &[u8]) {
        let text = String::from_utf8_lossy(line);
        let trimmed = text.trim();
        // Machine output: each event is read by its shape, once.
        if stream == Stream::Out
            && trimmed.starts_with('{')
            && let Ok(value) = serde_json::from_str::<Value>(trimmed)
        {
            self.machine_output = true;
            match provider {
                Harness::Claude => self.claude(&value),
                Harness::Codex => self.codex(&value),
            }
            return;
        }
        // Anything else (stderr, plain text) may still carry a limit notice.
        if let Some(reset) = limit_in_text(provider, &text) {
            self.limits.push((SystemTime::now(), reset, Detection::Text));
        }
    }

    /// Claude `-p --output-format json|stream-json`: the `result` message.
    fn claude(&mut self, value: &Value) {
        let kind = value.get("type").and_then(Value::as_str);
        if kind == Some("system") && self.model.is_none() {
            self.model = value.get("model").and_then(Value::as_str).map(str::to_owned);
        }
        if kind == Some("assistant") {
            self.asked_model = true;
        }
        if kind != Some("result") {
            return;
        }
        self.cost_usd = value.get("total_cost_usd").and_then(Value::as_f64).filter(|c| c.is_finite() && *c >= 0.0);
        self.invocations = value.get("num_turns").and_then(Value::as_u64);
        self.asked_model |= self.invocations.is_some_and(|turns| turns > 0);
        self.session_id = value.get("session_id").and_then(Value::as_str).map(str::to_owned);
        self.is_error = value.get("is_error").and_then(Value::as_bool);
        if let Some(usage) = value.get("usage") {
            self.tokens = Some(Counters {
                input_tokens: usage.get("input_tokens").and_then(Value::as_u64),
                cache_creation_input_tokens: usage.get("cache_creation_input_tokens").and_then(Value::as_u64),
                cache_read_input_tokens: usage.get("cache_read_input_tokens").and_then(Value::as_u64),
                output_tokens: usage.get("output_tokens").and_then(Value::as_u64),
                ..Counters::default()
            });
        }
        // The model that did most of the work, with its context window.
        if let Some(models) = value.get("modelUsage").and_then(Value::as_object) {
            let busiest = models.iter().max_by_key(|(_, m)| m.get("outputTokens").and_then(Value::as_u64).unwrap_or(0));
            if let Some((name, usage)) = busiest {
                self.model = Some(name.clone());
                self.context_window = usage.get("contextWindow").and_then(Value::as_u64);
            }
        }
        if let Some(result) = value.get("result").and_then(Value::as_str)
            && let Some(reset) = limit_in_text(Harness::Claude, result)
        {
            self.limits.push((SystemTime::now(), reset, Detection::Text));
        }
    }

    /// Codex `exec --json`: usage per completed turn.
    fn codex(&mut self, value: &Value) {
        match value.get("type").and_then(Value::as_str) {
            Some("thread.started") => {
                self.session_id = value.get("thread_id").and_then(Value::as_str).map(str::to_owned);
            }
            Some("turn.started") => self.asked_model = true,
            Some("turn.completed") => {
                // The thread's cumulative usage (0.169): the last one holds
                // every turn of the thread so far; never summed.
                if let Some(usage) = value.get("usage") {
                    self.tokens = Some(Counters::from_codex(usage));
                    self.invocations = Some(self.invocations.unwrap_or(0) + 1);
                }
            }
            Some("turn.failed") | Some("error") => {
                self.is_error = Some(true);
                let message = value
                    .get("message")
                    .or_else(|| value.get("error").and_then(|e| e.get("message")))
                    .and_then(Value::as_str)
                    .unwrap_or("");
                if let Some(reset) = limit_in_text(Harness::Codex, message) {
                    self.limits.push((SystemTime::now(), reset, Detection::Text));
                }
            }
            _ => {}
        }
    }

    fn records(
        self,
        provider: Provider,
        started_at: SystemTime,
        duration: Duration,
        ended: Ended,
        resumed: bool,
    ) -> Vec<LedgerRecord> {
        let project_path = std::env::current_dir().ok().map(|dir| dir.display().to_string());
        let interrupted = ended == Ended::Interrupted;
        let failed = ended != Ended::Exited(true) || self.is_error == Some(true);
        let outcome = match ended {
            Ended::Interrupted => CallOutcome::Interrupted,
            Ended::NotStarted => CallOutcome::FailedBeforeRequest,
            _ if !failed => CallOutcome::Completed,
            _ if self.machine_output && !self.asked_model => CallOutcome::FailedBeforeRequest,
            _ => CallOutcome::Failed,
        };
        // A resumed thread's or session's running totals include turns
        // before this run, which it cannot tell apart: unknown, not a guess.
        let (tokens, cost_usd) = if resumed { (None, None) } else { (self.tokens, self.cost_usd) };
        let mut records = vec![LedgerRecord::Call(Box::new(CallRecord {
            record_id: uuid::Uuid::new_v4(),
            source: CallSource::Run,
            provider,
            started_at_utc: bee_proto::time::format_rfc3339(started_at),
            duration_ms: Some(duration.as_millis() as u64),
            success: Some(!failed && !interrupted),
            model: self.model,
            project_path,
            cost_usd,
            tokens,
            quota_snapshots: Vec::new(),
            model_invocations: self.invocations,
            context_window: self.context_window,
            context_tokens: None,
            compactions: None,
            session_id: self.session_id.clone(),
            outcome: Some(outcome),
        }))];
        // One run hits a limit once, however many lines say so.
        if let Some((at, resets_at_utc, detection)) = self.limits.into_iter().next() {
            let mut limit = LimitRecord::new(
                uuid::Uuid::new_v4(),
                bee_proto::time::format_rfc3339(at),
                provider,
                resets_at_utc,
                detection,
            );
            limit.session_id = self.session_id;
            records.push(LedgerRecord::Limit(limit));
        }
        records
    }
}

/// `Some(reset time)` when `text` is a usage-limit notice of `provider`.
fn limit_in_text(provider: Harness, text: &str) -> Option<Option<String>> {
    match provider {
        Harness::Claude => bee_proto::usage::claude_limit_reset(text),
        Harness::Codex => bee_proto::usage::codex_limit_notice(text).then_some(None),
    }
}

/// Hands the records to beed, else to the spool beed ingests later.
fn record(records: Vec<LedgerRecord>) -> Result<(), String> {
    let body = serde_json::to_vec(&LedgerAppend { records: records.clone() }).map_err(|err| err.to_string())?;
    if let Some(socket) = bee_proto::paths::socket_path()
        && bee_daemon::client::post(&socket, LEDGER_RECORDS_PATH, body, Duration::from_secs(2)).is_ok()
    {
        return Ok(());
    }
    let dir = bee_proto::paths::spool_dir().ok_or(bee_proto::paths::NO_HOME)?;
    for record in &records {
        let line = serde_json::to_vec(record).map_err(|err| err.to_string())?;
        bee_proto::spool::append(&dir, LEDGER_SPOOL_FILE, &line).map_err(|err| format!("spool: {err}"))?;
    }
    Ok(())
}
