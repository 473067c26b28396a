//! `beectl top` in a real terminal (`script` gives it a pty): it shows the
//! quota window, redraws within a second of a new ledger record or hook
//! event (beed tells it; it does not poll), quits on `q` and restores the
//! terminal. Piped, it prints the view once.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use bee_tests::*;
use serde_json::json;
use std::io::{Read, Write};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

fn now_seconds() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs()
}

/// Records a five-hour snapshot as Claude Code's status line brings it.
fn status_line(home: &TestHome, used: f64) {
    let input = json!({"hook_event_name": "Status", "session_id": SESSION,
        "model": {"id": "claude-sonnet-4-5", "display_name": "Sonnet 4.5"},
        "rate_limits": {"five_hour": {"used_percentage": used, "resets_at": now_seconds() + 7_200}}});
    let (output, _) = home.hook(&["statusline", "--", "true"], &serde_json::to_vec(&input).unwrap());
    assert_eq!(output.status.code(), Some(0));
}

/// `beectl top` in a pty (110 × 40 unless sized), its output read as a
/// terminal shows it.
struct Terminal {
    child: std::process::Child,
    output: Arc<Mutex<Vec<u8>>>,
    reader: Option<std::thread::JoinHandle<()>>,
    size: (u16, u16),
}

impl Terminal {
    fn start(home: &TestHome) -> Terminal {
        Terminal::sized(home, 110, 40)
    }

    fn sized(home: &TestHome, cols: u16, rows: u16) -> Terminal {
        let line = format!("stty cols {cols} rows {rows}; exec '{}' top", bin("beectl").display());
        let mut command = home.command("script");
        command
            .args(["-qfec", &line, "/dev/null"])
            .env("TERM", "xterm-256color")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        let mut child = command.spawn().unwrap();
        let output = Arc::new(Mutex::new(Vec::new()));
        let mut stdout = child.stdout.take().unwrap();
        let sink = output.clone();
        let reader = std::thread::spawn(move || {
            let mut buffer = [0u8; 4096];
            while let Ok(n) = stdout.read(&mut buffer) {
                if n == 0 {
                    break;
                }
                if let Ok(mut sink) = sink.lock() {
                    sink.extend_from_slice(&buffer[..n]);
                }
            }
        });
        Terminal { child, output, reader: Some(reader), size: (cols, rows) }
    }

    /// What the screen shows now.
    fn screen(&self) -> String {
        let mut parser = vt100::Parser::new(self.size.1, self.size.0, 0);
        parser.process(&self.output.lock().unwrap());
        parser.screen().contents()
    }

    fn raw(&self) -> Vec<u8> {
        self.output.lock().unwrap().clone()
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if let Some(reader) = self.reader.take() {
            let _ = reader.join();
        }
    }
}

#[test]
fn top_shows_the_window_redraws_on_a_new_record_and_quits_on_q() {
    let home = TestHome::new();
    let daemon = home.start_daemon_with(&["--ingest-every", "0"]);
    status_line(&home, 37.0);
    home.settle();
    let mut top = Terminal::start(&home);
    let shown = eventually(Duration::from_secs(10), || {
        let screen = top.screen();
        screen.contains("claude five-hour window") && screen.contains("37% used")
    });
    assert!(shown, "the window:\n{}", top.screen());
    // A new record: the view follows within a second.
    let written = Instant::now();
    status_line(&home, 45.0);
    let followed = eventually(Duration::from_secs(3), || top.screen().contains("45% used"));
    let took = written.elapsed();
    assert!(followed, "the new snapshot:\n{}", top.screen());
    assert!(took < Duration::from_secs(1), "redrawn {took:?} after the record (the hook itself included)");
    // Two snapshots seconds apart are no trend (rounding would project
    // thousands of percent), and the screen says that, not "fewer than two".
    assert!(
        top.screen().contains("no projection yet: its 2 recent snapshots span under 5 minutes"),
        "{}",
        top.screen()
    );
    // A hook event: the session's last event shows, as soon as beed stores it.
    let event = json!({"session_id": SESSION, "hook_event_name": "PreToolUse", "tool_name": "Bash",
                       "tool_use_id": "toolu_top", "tool_input": {"command": "cargo test"}});
    let stored = Instant::now();
    let (output, _) = home.hook(&["event", "--source-app", "web"], &serde_json::to_vec(&event).unwrap());
    assert_eq!(output.status.code(), Some(0));
    let followed = eventually(Duration::from_secs(3), || top.screen().contains("last event PreToolUse Bash"));
    assert!(followed, "the hook event:\n{}", top.screen());
    assert!(stored.elapsed() < Duration::from_secs(1), "redrawn {:?} after the event", stored.elapsed());
    let before_quit = top.raw().len();
    top.child.stdin.as_mut().unwrap().write_all(b"q").unwrap();
    let exited = eventually(Duration::from_secs(5), || top.child.try_wait().unwrap().is_some());
    assert!(exited, "q quits");
    assert!(top.child.wait().unwrap().success());
    if let Some(reader) = top.reader.take() {
        reader.join().unwrap();
    }
    let raw = top.raw();
    let after = &raw[before_quit..];
    assert!(contains(after, b"\x1b[?1049l"), "the alternate screen is left: {:?}", String::from_utf8_lossy(after));
    assert!(contains(after, b"\x1b[?25h"), "the cursor is shown again");
    drop(daemon);
}

#[test]
fn piped_top_prints_the_view_once() {
    let home = TestHome::new();
    let daemon = home.start_daemon();
    status_line(&home, 12.0);
    home.settle();
    let output = home.beectl(&["top"]);
    assert_eq!(output.status.code(), Some(0));
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(text.contains("claude five-hour window"), "{text}");
    assert!(text.contains("12% used, resets in 2h 00m"), "{text}");
    assert!(text.contains("no projection: fewer than two snapshots in the last 30 minutes"), "{text}");
    assert!(!text.contains('\u{1b}'), "plain text when piped");
    drop(daemon);
}

/// Responses of the last minutes, some without their cache-write counter:
/// the day's sum, its estimate and each session's hour are lower bounds
/// (what was reported, marked ≥), whose columns add up; a session whose
/// responses report no counter at all has an unknown hour, never "no
/// tokens".
#[test]
fn a_partial_hour_reads_as_a_lower_bound_and_an_unknown_one_as_unknown() {
    let home = TestHome::new();
    let minute_ago = |minutes: u64| bee_proto::time::format_unix_ms(((now_seconds() - minutes * 60) * 1000) as i64);
    let response = |session: &str, n: u32, minutes: u64, usage: serde_json::Value| {
        json!({"type": "assistant", "sessionId": session, "timestamp": minute_ago(minutes), "requestId": format!("req_{session}_{n}"),
            "message": {"id": format!("msg_{session}_{n}"), "model": "claude-sonnet-4-5-20250929", "stop_reason": "end_turn", "usage": usage}})
        .to_string()
    };
    let whole = json!({"input_tokens": 10, "cache_creation_input_tokens": 5, "cache_read_input_tokens": 100, "output_tokens": 50});
    let lacking = json!({"input_tokens": 10, "cache_read_input_tokens": 100, "output_tokens": 50});
    let projects = home.path().join(".claude/projects/-home-dev-app");
    let mixed = [response("aaaa1111", 1, 3, whole), response("aaaa1111", 2, 2, lacking.clone())].join("\n");
    write_quiet(&projects.join("aaaa1111.jsonl"), &(mixed + "\n"));
    write_quiet(&projects.join("bbbb2222.jsonl"), &(response("bbbb2222", 1, 2, lacking) + "\n"));
    write_quiet(
        &projects.join("cccc3333.jsonl"),
        &(response("cccc3333", 1, 2, json!({"service_tier": "standard"})) + "\n"),
    );
    assert_eq!(home.beectl(&["ingest"]).status.code(), Some(0));
    let output = home.beectl(&["top"]);
    assert_eq!(output.status.code(), Some(0));
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(text.contains("tokens, est ≥$0.0"), "the day's estimate is a lower bound: {text}");
    assert!(text.contains("Today (UTC): ≥485 tokens"), "{text}");
    let line = |session: &str| text.lines().find(|l| l.contains(session)).unwrap_or_default().to_owned();
    assert!(line("aaaa1111").contains(" ≥325 tokens "), "{text}");
    assert!(line("bbbb2222").contains(" ≥160 tokens "), "{text}");
    assert!(line("cccc3333").contains(" unknown tokens "), "{text}");
    // The day's burn: its hours hold the day's responses and its known
    // tokens, drawn as a sparkline under it.
    assert!(text.contains("  by hour |"), "{text}");
    let view = parse_json_line(&home.beectl(&["top", "--json"]).stdout);
    let hours = view["todayByHour"].as_array().unwrap();
    let tokens: u64 = hours.iter().filter_map(|hour| hour["tokens"].as_u64()).sum();
    let responses: u64 = hours.iter().map(|hour| hour["responses"].as_u64().unwrap()).sum();
    assert_eq!(Some(tokens), view["today"]["tokens"]["totalTokens"].as_u64(), "{view}");
    assert_eq!(Some(responses), view["today"]["responses"].as_u64(), "{view}");
    assert!(hours.iter().any(|hour| hour["partialParts"].as_u64() > Some(0)), "{view}");
}

/// A Codex rollout whose five-hour window went from 10 % to 40 % in the
/// last six minutes, resetting in two hours.
fn steep_codex_window(home: &TestHome) {
    let at = |minutes_ago: u64| bee_proto::time::format_unix_ms(((now_seconds() - minutes_ago * 60) * 1000) as i64);
    let resets = now_seconds() + 7_200;
    let count = |minutes_ago: u64, used: f64| {
        json!({"timestamp": at(minutes_ago), "type": "event_msg", "payload": {"type": "token_count", "info": null,
            "rate_limits": {"primary": {"used_percent": used, "window_minutes": 300, "resets_at": resets}}}})
        .to_string()
    };
    let session = "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b";
    let meta = json!({"timestamp": at(7), "type": "session_meta", "payload": {"id": session, "cwd": "/home/dev/app"}});
    // A weekly window and another limit family beside it: four windows.
    let others = json!({"timestamp": at(1), "type": "event_msg", "payload": {"type": "token_count", "info": null,
        "rate_limits": {"limit_id": "codex_other", "primary": {"used_percent": 5.0, "window_minutes": 300, "resets_at": resets},
                        "secondary": {"used_percent": 7.0, "window_minutes": 10080, "resets_at": resets + 86_400}}}});
    let weekly = json!({"timestamp": at(1), "type": "event_msg", "payload": {"type": "token_count", "info": null,
        "rate_limits": {"secondary": {"used_percent": 9.0, "window_minutes": 10080, "resets_at": resets + 86_400}}}});
    let rollout =
        [meta.to_string(), count(6, 10.0), count(3, 25.0), count(0, 40.0), others.to_string(), weekly.to_string()]
            .join("\n")
            + "\n";
    write_quiet(&home.path().join(format!(".codex/sessions/2026/12/04/rollout-x-{session}.jsonl")), &rollout);
    assert_eq!(home.beectl(&["ingest"]).status.code(), Some(0));
}

/// A steep trend projects to 100 % at most (a window is never used past
/// it), and says when it fills.
#[test]
fn a_projection_never_passes_a_full_window() {
    let home = TestHome::new();
    steep_codex_window(&home);
    let text = String::from_utf8(home.beectl(&["top"]).stdout).unwrap();
    let line = text.lines().find(|l| l.contains("projection:")).unwrap_or_default();
    assert!(line.contains("projection: 100% at the reset (+300.0 points/h); full in 12m at this rate"), "{text}");
}

/// A terminal too short for the view says what it leaves out (the limit
/// hits below), never cuts a section without a sign.
#[test]
fn a_short_terminal_says_what_it_cannot_show() {
    let home = TestHome::new();
    steep_codex_window(&home);
    let top = Terminal::sized(&home, 80, 24);
    // The whole frame, not the first lines of one still being drawn.
    let says = |screen: &str| {
        screen.contains("codex five-hour window")
            && (screen.contains("Limit hits")
                || screen.contains("more lines (Limit hits below): a taller terminal, or beectl top --once"))
    };
    let shown = eventually(Duration::from_secs(10), || says(&top.screen()));
    assert!(shown, "{}", top.screen());
}
