//! bee-hook end to end: the hook's own output is sacred whatever happens to
//! beed or the store, and only valid prompt envelopes are observed.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use bee_tests::*;
use serde_json::json;
use std::process::Output;
use std::time::Duration;

const BLOCK: &[u8] = b"Use the project's test runner; never skip a failing test.\n";

fn block_args(block: &std::path::Path) -> Vec<String> {
    ["prompt", "--surface", "plain", "--block", block.to_str().unwrap()].map(str::to_owned).to_vec()
}

fn run_block(home: &TestHome, block: &std::path::Path, envelope: &[u8]) -> (Output, Duration) {
    let args = block_args(block);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    home.hook(&args, envelope)
}

/// The agent-visible result of a hook run.
fn visible(output: &Output) -> (Vec<u8>, Vec<u8>, Option<i32>) {
    (output.stdout.clone(), output.stderr.clone(), output.status.code())
}

#[test]
fn envelopes_that_are_not_observed_leave_the_output_untouched() {
    let home = TestHome::new();
    let block = home.file("block.md", BLOCK);
    let not_utf8_block = home.file("binary.md", b"caf\xe9 \xff\xfe steering\n");
    let daemon = home.start_daemon();
    let valid = prompt_envelope(SESSION, "refactor the parser");

    let huge_prompt = "😀".repeat(32_768); // 65,536 units of prompt alone
    let nil = prompt_envelope("00000000-0000-0000-0000-000000000000", "x");
    let mut no_session: serde_json::Value = serde_json::from_slice(&valid).unwrap();
    no_session.as_object_mut().unwrap().remove("session_id");
    let no_session = serde_json::to_vec(&no_session).unwrap();
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("oversized envelope", prompt_envelope(SESSION, &huge_prompt)),
        ("malformed envelope", b"{\"session_id\":\"3f2b8c1e-6a4d-4e9b-9c7a-1d2e3f4a5b6c\",".to_vec()),
        ("raw prompt text", b"refactor the parser".to_vec()),
        ("empty stdin", Vec::new()),
        ("non-UTF-8 envelope", [&valid[..10], b"\xff\xfe", &valid[10..]].concat()),
        ("nil session", nil),
        ("no session at all", no_session.clone()),
        ("not a prompt event", String::from_utf8(valid.clone()).unwrap().replace("UserPromptSubmit", "SessionStart").into_bytes()),
        ("duplicate session key", format!("{{\"session_id\":\"{SESSION}\",\"session_id\":\"{OTHER_SESSION}\",\"hook_event_name\":\"UserPromptSubmit\"}}").into_bytes()),
    ];
    for (name, envelope) in &cases {
        let (output, _) = run_block(&home, &block, envelope);
        assert_eq!(visible(&output), (BLOCK.to_vec(), Vec::new(), Some(0)), "{name}");
    }
    // Output that is not UTF-8 passes through byte for byte and is not observed.
    let (output, _) = run_block(&home, &not_utf8_block, &valid);
    assert_eq!(visible(&output), (b"caf\xe9 \xff\xfe steering\n".to_vec(), Vec::new(), Some(0)));

    // Nothing was observed, nothing spooled.
    home.settle();
    let (code, report) = home.report(&[]);
    assert_eq!((code, report["observedEvents"].clone()), (5, json!(0)));
    assert_eq!(home.spool_lines(), 0);

    // CLAUDE_CODE_SESSION_ID is used only when the envelope names no session,
    // and the envelope's id wins over it.
    let mut with_env = home.command(bin("bee-hook"));
    with_env.env("CLAUDE_CODE_SESSION_ID", OTHER_SESSION);
    let args = block_args(&block);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (output, _) = home.hook_with(with_env, &args, &valid);
    assert_eq!(output.stdout, BLOCK);
    let mut with_env = home.command(bin("bee-hook"));
    with_env.env("CLAUDE_CODE_SESSION_ID", OTHER_SESSION);
    let (output, _) = home.hook_with(with_env, &args, &no_session);
    assert_eq!(output.stdout, BLOCK);
    home.settle();
    let (_, mine) = home.report(&["--session-kind", "claude-native-session", "--session", SESSION]);
    let (_, env) = home.report(&["--session-kind", "claude-native-session", "--session", OTHER_SESSION]);
    assert_eq!((mine["observedEvents"].clone(), env["observedEvents"].clone()), (json!(1), json!(1)));

    // The envelope alone is not Claude Code: Codex and other harnesses reuse
    // the hook without the variable, and are not observed.
    for not_claude in ["", "codex", "00000000-0000-0000-0000-000000000000"] {
        let mut other_harness = home.command(bin("bee-hook"));
        other_harness.env("CLAUDE_CODE_SESSION_ID", not_claude).env("BEE_HOOK_DEBUG", "1");
        let (output, _) = home.hook_with(other_harness, &args, &valid);
        assert_eq!(output.stdout, BLOCK, "the hook still works");
        assert!(String::from_utf8_lossy(&output.stderr).contains("not run by Claude Code"), "{not_claude:?}");
    }
    home.settle();
    assert_eq!(home.report(&[]).1["observedEvents"], 2, "nothing more observed");
    drop(daemon);
}

#[test]
fn the_hook_output_is_identical_whatever_state_beed_and_the_store_are_in() {
    let home = TestHome::new();
    let block = home.file("block.md", BLOCK);
    let envelope = prompt_envelope(SESSION, "add a regression test");
    let expected = (BLOCK.to_vec(), Vec::new(), Some(0));

    // beed down, socket absent.
    let (down, down_time) = run_block(&home, &block, &envelope);
    assert_eq!(visible(&down), expected, "beed down");
    assert!(down_time < Duration::from_secs(2), "{down_time:?}");
    assert_eq!(home.spool_lines(), 1, "the observation was spooled");

    // beed up: the spool is ingested on start.
    let daemon = home.start_daemon();
    assert_eq!(home.spool_lines(), 0);
    let (up, _) = run_block(&home, &block, &envelope);
    assert_eq!(visible(&up), expected, "beed up");
    home.settle();
    assert_eq!(home.report(&[]).1["observedEvents"], 2);

    // beed slow (frozen): the hook gives up at its deadline and spools.
    daemon.freeze();
    let (slow, slow_time) = run_block(&home, &block, &envelope);
    assert_eq!(visible(&slow), expected, "beed slow");
    assert!(slow_time >= Duration::from_millis(100), "waited {slow_time:?}");
    assert!(slow_time < Duration::from_secs(2), "waited {slow_time:?}");
    assert_eq!(home.spool_lines(), 1);
    daemon.resume();
    // The late append commits and the spooled copy is recognised: once.
    assert!(eventually(Duration::from_secs(10), || home.spool_lines() == 0), "spool not ingested");
    assert!(eventually(Duration::from_secs(5), || home.report(&[]).1["observedEvents"] == 3));

    // Store unwritable: the append fails inside beed; the hook spools.
    let guard =
        ImmutableFiles::new(&[home.store().join("delivery.sqlite3-wal"), home.store().join("delivery.sqlite3")]);
    let (unwritable, _) = run_block(&home, &block, &envelope);
    assert_eq!(visible(&unwritable), expected, "store unwritable");
    assert_eq!(home.spool_lines(), 1, "refused append was spooled");
    drop(guard);
    drop(daemon);

    // After the store is writable again the spooled observation is counted once.
    let daemon = home.start_daemon();
    assert_eq!(home.report(&[]).1["observedEvents"], 4);
    drop(daemon);
    let daemon = home.start_daemon();
    assert_eq!(home.report(&[]).1["observedEvents"], 4, "a second restart counts nothing twice");
    drop(daemon);
}

#[test]
fn a_wrapped_command_passes_through_byte_for_byte() {
    let home = TestHome::new();
    let daemon = home.start_daemon();
    let envelope = prompt_envelope(SESSION, "what does the wrapped hook see?");
    let seen = home.path().join("seen-stdin");
    let script = format!(
        "cat > '{}'; printf 'context line\\n'; printf 'warn: \\001 odd\\n' >&2; exit ${{HOOK_EXIT:-0}}",
        seen.display()
    );
    let run = |exit: &str| {
        let mut command = home.command(bin("bee-hook"));
        command.env("HOOK_EXIT", exit);
        home.hook_with(command, &["prompt", "--surface", "plain", "--", "sh", "-c", &script], &envelope).0
    };
    let direct = |exit: &str| {
        let mut command = home.command("sh");
        command.env("HOOK_EXIT", exit);
        home.hook_with(command, &["-c", &script], &envelope).0
    };
    for exit in ["0", "3", "2"] {
        let wrapped = run(exit);
        assert_eq!(std::fs::read(&seen).unwrap(), envelope, "the child saw the exact envelope");
        assert_eq!(visible(&wrapped), visible(&direct(exit)), "exit {exit}");
    }
    // Only the exit-0 run delivered context; exit 2 (blocked) and 3 did not.
    home.settle();
    let (code, report) = home.report(&[]);
    assert_eq!((code, report["observedEvents"].clone()), (0, json!(1)));
    assert_eq!(report["groups"][0]["identity"], "wrapped-command");

    // Killed by a signal: the shell's 128 + n, as a direct run shows.
    let killed = home.hook(&["prompt", "--surface", "plain", "--", "sh", "-c", "kill -TERM $$"], &envelope).0;
    assert_eq!(killed.status.code(), Some(128 + 15));
    // A missing command: 127 like a shell, and a clear message.
    let missing = home.hook(&["prompt", "--surface", "plain", "--", "/nonexistent/hook"], &envelope).0;
    assert_eq!(missing.status.code(), Some(127));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("cannot run"));
    // A misconfigured bee-hook still runs the user's command untouched.
    let misconfigured = home.hook(&["prompt", "--surface", "bogus", "--", "sh", "-c", "cat; exit 0"], &envelope).0;
    assert_eq!(misconfigured.stdout, envelope);
    assert_eq!(misconfigured.status.code(), Some(0));
    // Never exit 2 (which would block the prompt) for our own usage errors.
    let unusable = home.hook(&["prompt", "--surface", "plain"], &envelope).0;
    assert_eq!(unusable.status.code(), Some(1));
    let unusable = home.hook(&["prompt", "--bogus"], &envelope).0;
    assert_eq!(unusable.status.code(), Some(1));
    assert_eq!(home.report(&[]).1["observedEvents"], 1);
    drop(daemon);
}

#[test]
fn a_failed_write_is_recorded_but_never_counted_as_delivered() {
    let home = TestHome::new();
    let block = home.file("block.md", BLOCK);
    let daemon = home.start_daemon();
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader); // the agent went away: writing stdout fails with EPIPE
    let mut child = home
        .command(bin("bee-hook"))
        .args(block_args(&block))
        .env("CLAUDE_CODE_SESSION_ID", SESSION)
        .stdin(std::process::Stdio::piped())
        .stdout(writer)
        .spawn()
        .unwrap();
    use std::io::Write;
    child.stdin.take().unwrap().write_all(&prompt_envelope(SESSION, "x")).unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(0));
    home.settle();
    let (code, report) = home.report(&[]);
    assert_eq!(code, 0, "a failure-only report is still evidence");
    assert_eq!(report["eventKinds"], json!({"Delivered": 0, "WriteFailed": 1, "PartialWrite": 0}));
    assert_eq!((report["deliveredEvents"].clone(), report["deliveredUtf8Bytes"].clone()), (json!(0), json!(0)));
    assert_eq!(report["groups"], json!([]));
    drop(daemon);
}

#[test]
fn fifty_parallel_hooks_are_each_recorded_exactly_once() {
    let home = TestHome::new();
    let block = home.file("block.md", BLOCK);
    let daemon = home.start_daemon();
    let outcomes = home.fire_in_parallel(&block, 50, 1, || {});
    let mut ids = std::collections::BTreeSet::new();
    for (stdout, receipt) in &outcomes {
        assert_eq!(stdout, BLOCK);
        let (id, _) = receipt.clone().expect("a receipt");
        ids.insert(id);
    }
    assert_eq!(ids.len(), 50, "every call got its own event id");
    // Late or spooled appends settle within a spool poll.
    assert!(eventually(Duration::from_secs(10), || home.spool_lines() == 0));
    let (_, report) = home.report(&[]);
    assert_eq!(report["observedEvents"], 50);
    assert_eq!(report["deliveredUtf8Bytes"], 50 * BLOCK.len());
    for id in &ids {
        assert_eq!(home.read_event(id).0, 0, "{id}");
    }
    drop(daemon);
}

/// Runs bee-hook with its stderr on `/dev/full`: every write to it fails.
fn hook_with_full_stderr(home: &TestHome, args: &[&str], envelope: &[u8], debug: bool) -> Output {
    use std::io::Write;
    let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
    let mut command = home.command(bin("bee-hook"));
    if debug {
        command.env("BEE_HOOK_DEBUG", "1");
    }
    command.env("CLAUDE_CODE_SESSION_ID", SESSION);
    let mut child = command
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(full)
        .spawn()
        .unwrap();
    // A usage error may exit before reading its input.
    let _ = child.stdin.take().unwrap().write_all(envelope);
    child.wait_with_output().unwrap()
}

#[test]
fn an_unwritable_stderr_never_changes_the_exit_status_or_the_output() {
    let home = TestHome::new();
    let block = home.file("block.md", BLOCK);
    let envelope = prompt_envelope(SESSION, "x");
    let args = block_args(&block);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();

    // beed down and BEE_HOOK_DEBUG on: the receipt line fails, the hook does not.
    let output = hook_with_full_stderr(&home, &args, &envelope, true);
    assert_eq!((output.stdout.as_slice(), output.status.code()), (BLOCK, Some(0)));
    // A missing wrapped command is still a shell's 127, not a panic's 101.
    let output =
        hook_with_full_stderr(&home, &["prompt", "--surface", "plain", "--", "/nonexistent/hook"], &envelope, false);
    assert_eq!(output.status.code(), Some(127));
    // Our own usage errors stay 1; a misconfigured hook still runs the command.
    let output = hook_with_full_stderr(&home, &["prompt", "--surface", "plain"], &envelope, false);
    assert_eq!(output.status.code(), Some(1));
    let output =
        hook_with_full_stderr(&home, &["prompt", "--bogus", "--", "sh", "-c", "cat; exit 3"], &envelope, false);
    assert_eq!((output.stdout.as_slice(), output.status.code()), (envelope.as_slice(), Some(3)));
    // Monitoring never blocks the agent: `event` exits 0 with beed down.
    let event = serde_json::to_vec(&json!({"session_id": SESSION, "hook_event_name": "Stop"})).unwrap();
    let output = hook_with_full_stderr(&home, &["event", "--source-app", "app"], &event, true);
    assert_eq!((output.stdout.as_slice(), output.status.code()), (&b""[..], Some(0)));
    let output = hook_with_full_stderr(&home, &["event"], &event, false);
    assert_eq!(output.status.code(), Some(0));
}
