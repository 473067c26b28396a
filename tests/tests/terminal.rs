//! One terminal answer: on a terminal every reporting command prints words
//! for people (a table, a view, a sentence, a formatted man page) and never
//! its JSON document, which pipes and `--json` still get; `top` shows every
//! active session, ids cut where they differ; the import's progress bar
//! ends at 100 % and is not drawn when nothing is new; a reader that closes
//! the pipe early ends any command quietly, never with a panic; help wraps
//! at words; `--agent` names the agent everywhere.
//!
//! The terminal is a real pty: `script` (util-linux), as the other
//! terminal tests (`top.rs`, `cli.rs`) run beectl — no pty crate is needed
//! for a process that only writes.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use bee_tests::*;
use std::io::Read;
use std::os::unix::process::ExitStatusExt;
use std::process::Stdio;

/// 15 Claude Code sessions active two minutes ago, whose ids share their
/// first 28 characters (as UUIDv7 ids of one minute, pi's, do): the first
/// eight say nothing.
fn fifteen_sessions(home: &TestHome) -> Vec<String> {
    let two_minutes_ago = bee_proto::time::format_unix_ms(bee_proto::time::now_unix_ms() - 120_000);
    let projects = home.path().join(".claude/projects/-home-dev-app");
    (0..15)
        .map(|n| {
            let session = format!("01a249a4-0000-4000-8000-0000000000{n:02}");
            let line =
                claude_response_line(&session, &format!("msg_{n}"), &format!("req_{n}"), &two_minutes_ago, 10, 5);
            write_quiet(&projects.join(format!("{session}.jsonl")), &line);
            session
        })
        .collect()
}

/// What `beectl ARGS` wrote to a 140 × 50 terminal (stdout, and stderr
/// too unless `stderr_apart`): all of it, and the screen it left; what it
/// said on stderr apart; its exit status.
struct Shown {
    written: String,
    screen: String,
    said: String,
    code: Option<i32>,
}

fn on_terminal(home: &TestHome, args: &str, env: &[(&str, &str)], stderr_apart: bool) -> Shown {
    let said = home.path().join("said.txt");
    let _ = std::fs::remove_file(&said);
    let redirect = if stderr_apart { format!(" 2>'{}'", said.display()) } else { String::new() };
    let line = format!("stty cols 140 rows 50; exec '{}' {args}{redirect}", bin("beectl").display());
    let mut command = home.command("script");
    command.args(["-qfec", &line, "/dev/null"]).env("TERM", "xterm-256color").stdin(Stdio::null());
    for (key, value) in env {
        command.env(key, value);
    }
    let output = command.output().expect("run script");
    let mut parser = vt100::Parser::new(50, 140, 0);
    parser.process(&output.stdout);
    Shown {
        written: String::from_utf8_lossy(&output.stdout).replace('\r', ""),
        screen: parser.screen().contents(),
        said: std::fs::read_to_string(&said).unwrap_or_default(),
        code: output.status.code(),
    }
}

/// Text as a terminal shows it: overstrikes (`N\x08N`, man's bold) and
/// SGR sequences (colour) taken out.
fn plain(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{8}' => {
                out.pop();
            }
            '\u{1b}' if chars.peek() == Some(&'[') => {
                for c in chars.by_ref() {
                    if c.is_ascii_alphabetic() {
                        break;
                    }
                }
            }
            c => out.push(c),
        }
    }
    out
}

fn no_json(args: &str, shown: &Shown) {
    assert!(!shown.written.trim().is_empty(), "{args}: nothing on the terminal (stderr: {})", shown.said);
    assert!(
        !shown.written.contains("{\"") && !shown.written.trim_start().starts_with('{'),
        "{args}: JSON on a terminal:\n{}",
        shown.written
    );
    assert!(!shown.said.contains("panicked"), "{args}: {}", shown.said);
}

#[test]
fn every_report_on_a_terminal_is_for_people_and_every_pipe_gets_the_document() {
    let home = TestHome::new();
    fifteen_sessions(&home);
    // One log whose last line is still being written: its bytes are never
    // read, and the bar still ends at 100 % once the pass is done.
    let writing = claude_response_line(SESSION, "msg_w", "req_w", "2026-11-30T10:00:00.000Z", 1, 1);
    let partial = format!("{writing}{}", &writing[..writing.len() / 2]);
    write_quiet(&home.path().join(format!(".claude/projects/-home-dev-app/{SESSION}.jsonl")), &partial);

    // The first import: its bar (stderr, on the terminal) ends at 100 %, its answer is words.
    let first = on_terminal(&home, "ingest", &[], false);
    assert_eq!(first.code, Some(0), "{}", first.screen);
    let bar = first.screen.lines().find(|line| line.contains('%')).unwrap_or_default();
    assert!(bar.starts_with("[##############################] 100% "), "the bar ends at 100 %:\n{}", first.screen);
    assert!(!bar.contains(" 0 MB"), "{bar}");
    assert!(first.screen.contains("Imported 16 new records from 16 of 16 files"), "{}", first.screen);
    no_json("ingest", &first);
    // Nothing new: no bar is drawn, the answer says so.
    let again = on_terminal(&home, "ingest", &[], false);
    assert!(!again.screen.contains('%'), "a bar with nothing to read:\n{}", again.screen);
    assert!(again.screen.contains("Nothing new to import from the 16 files Bee reads"), "{}", again.screen);

    for (args, says) in [
        ("quota", "Quota "),
        ("status", "est. cost"),
        ("usage", "TOTAL"),
        ("agents", "AGENT"),
        ("prices", "MODEL"),
        ("top --once", "Active sessions (last hour):"),
        ("daemon status", "beed      not running"),
        ("export status", "export    off"),
        ("audit", "audit: no session to audit"),
        ("audit --format table", "audit: no session to audit"),
        ("daemon stop", "beed is not running: nothing to stop"),
    ] {
        let shown = on_terminal(&home, args, &[("NO_COLOR", "1")], true);
        no_json(args, &shown);
        assert!(shown.written.contains(says), "{args}:\n{}", shown.written);
        // The same command piped: its document (unless a table was asked for by name).
        let piped = home.beectl(&args.split(' ').collect::<Vec<_>>());
        if args != "top --once" && !args.ends_with("--format table") {
            let document: serde_json::Value = serde_json::from_slice(&piped.stdout)
                .unwrap_or_else(|err| panic!("{args} piped: {err}: {}", String::from_utf8_lossy(&piped.stdout)));
            assert!(document.is_object(), "{args}");
        }
    }
    // `--json` on a terminal: the document.
    for args in ["quota --json", "export status --json", "daemon stop --json", "audit --json", "ingest --json"] {
        let shown = on_terminal(&home, args, &[], true);
        assert!(shown.written.trim_start().starts_with('{'), "{args}:\n{}", shown.written);
    }

    // The man page, formatted as man formats it (the pager is the test's `cat`).
    let page = on_terminal(&home, "man usage", &[("MANPAGER", "cat"), ("PAGER", "cat")], true);
    no_json("man usage", &page);
    let text = plain(&page.written);
    assert!(text.contains("\nNAME\n") && text.contains("beectl-usage"), "{text}");
    assert!(!page.written.contains(".TH") && !page.written.contains(".SH"), "raw roff:\n{}", page.written);
    let roff = home.beectl(&["man", "usage"]);
    assert!(String::from_utf8_lossy(&roff.stdout).contains(".TH beectl-usage"), "piped: the roff");

    // beed started, asked about, restarted and stopped: a sentence each.
    let _stops = StopsBeed(&home);
    for (args, says) in [
        ("daemon start", "beed started, pid "),
        ("daemon status", "beed      running, pid "),
        ("daemon restart", "beed restarted, pid "),
        ("daemon stop", "beed stopped, pid "),
    ] {
        let shown = on_terminal(&home, args, &[("NO_COLOR", "1")], true);
        no_json(args, &shown);
        assert!(shown.written.contains(says), "{args}:\n{}\n{}", shown.written, shown.said);
        assert_eq!(shown.code, Some(0), "{args}: {}", shown.said);
    }
}

/// `top` with no ledger says so in words on stderr, as every error, and
/// takes no screen; without a home it names what is missing, never a
/// document whose message is null.
#[test]
fn top_without_a_ledger_says_so_in_words() {
    let home = TestHome::new();
    for args in ["top", "top --once"] {
        let shown = on_terminal(&home, args, &[], true);
        assert_eq!(shown.code, Some(5), "{args}");
        assert!(shown.written.trim().is_empty(), "{args}: {:?}", shown.written);
        assert!(shown.said.starts_with("beectl: no ledger yet at "), "{args}: {}", shown.said);
    }
    let homeless = home
        .command(bin("beectl"))
        .args(["top", "--once"])
        .env_remove("HOME")
        .env_remove("BEE_HOME")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(homeless.status.code(), Some(5));
    assert!(parse_json_line(&homeless.stdout)["message"].is_string(), "{}", String::from_utf8_lossy(&homeless.stdout));
    assert!(String::from_utf8_lossy(&homeless.stderr).starts_with("beectl: "), "words on stderr");
}

/// `top --once` shows every active session, each id cut to the shortest
/// prefix that tells it apart (here, where the ids differ: their end).
#[test]
fn top_shows_every_session_and_no_two_read_alike() {
    let home = TestHome::new();
    let sessions = fifteen_sessions(&home);
    assert_eq!(home.beectl(&["ingest"]).status.code(), Some(0));
    let output = home.beectl(&["top", "--once"]);
    assert_eq!(output.status.code(), Some(0));
    let text = String::from_utf8(output.stdout).unwrap();
    let rows: Vec<&str> = text.lines().filter(|line| line.contains(" tokens  ")).collect();
    assert_eq!(rows.len(), 15, "{text}");
    for session in &sessions {
        assert_eq!(rows.iter().filter(|row| row.contains(session.as_str())).count(), 1, "{session}: {text}");
    }
    assert!(!text.contains("more session"), "{text}");
}

/// A reader that takes one byte and closes the pipe (`| head -c1`), or
/// closes it before any: every command ends quietly — no panic, no 101 —
/// and one that was printing ends as a filter does, by SIGPIPE (status 141
/// in a shell).
#[test]
fn a_closed_pipe_ends_every_command_quietly() {
    let home = TestHome::new();
    fifteen_sessions(&home);
    assert_eq!(home.beectl(&["ingest"]).status.code(), Some(0));
    let root = home.path().to_str().unwrap().to_owned();
    let store = home.store().to_str().unwrap().to_owned();
    let text = home.file("notes.txt", b"Some words to count and to compress, several times over.\n");
    let text = text.to_str().unwrap().to_owned();
    let json = home.file("value.json", br#"{"a":[1,2,3],"b":"x"}"#);
    let json = json.to_str().unwrap().to_owned();
    let manifest =
        home.file("manifest.json", br#"{"selections":[{"id":"n","path":"notes.txt","representation":"body"}]}"#);
    let manifest = manifest.to_str().unwrap().to_owned();
    let log = format!("{root}/none.jsonl");
    let event = "3f2b8c1e-6a4d-4e9b-9c7a-1d2e3f4a5b6c";
    // Every command, with harmless arguments; `true`: it prints on stdout when piped.
    let commands: Vec<(Vec<&str>, bool)> = vec![
        (vec!["--help"], true),
        (vec!["--version"], true),
        (vec!["help", "usage"], true),
        (vec!["usage", "--help"], true),
        (vec!["completions", "bash"], true),
        (vec!["completions", "zsh"], true),
        (vec!["man"], true),
        (vec!["man", "usage"], true),
        (vec!["quota"], true),
        (vec!["quota", "--format", "table"], true),
        (vec!["status"], true),
        (vec!["status", "--format", "table"], true),
        (vec!["usage"], true),
        (vec!["usage", "--format", "table"], true),
        (vec!["usage", "--by", "session", "--format", "table"], true),
        (vec!["top"], true),
        (vec!["top", "--once"], true),
        (vec!["top", "--json"], true),
        (vec!["agents"], true),
        (vec!["agents", "--json"], true),
        (vec!["prices"], true),
        (vec!["ingest"], true),
        (vec!["delivery", "report", "--store", &store], true),
        (vec!["delivery", "report", "--store", &store, "--format", "table"], true),
        (vec!["delivery", "read", "--store", &store, "--event", event], true),
        (vec!["token", "estimate", "--root", &root, "--file", "notes.txt"], true),
        (vec!["budget", "--measured", "--harness", "claude", "--session", event, "--log", &log], true),
        (vec!["budget", "--manifest", &manifest, "--root", &root], true),
        (vec!["context", "doctor", "--manifest", &manifest, "--root", &root], true),
        (vec!["context", "packet", "--manifest", &manifest, "--root", &root], true),
        (vec!["daemon", "status"], true),
        (vec!["daemon", "status", "--format", "table"], true),
        (vec!["daemon", "stop"], true),
        (vec!["dashboard"], true),
        (vec!["audit"], true),
        (vec!["audit", "--format", "table"], true),
        (vec!["events", "recent"], true),
        (vec!["artifact", "list"], true),
        (vec!["repr", "encode", &json], true),
        (vec!["compress", "status"], true),
        (vec!["compress", "prose", &text, "--rate-percent", "50"], true),
        (vec!["export", "status"], true),
        (vec!["plan", "show", "none"], true),
        (vec!["hooks", "install", "--project", &root, "--dry-run"], true),
        (vec!["setup", "--project", &root, "--dry-run", "--service", "none"], true),
        (vec!["usgae"], true),
        (vec!["quota", "--bogus"], true),
        (vec!["mcp", "serve", "--root", &root], false),
        (vec!["run", "--agent", "claude", "--", "echo", "hi"], false),
    ];
    for (args, prints) in &commands {
        for read_first in [true, false] {
            // Closed before any byte: the reader is gone before beectl
            // starts, so even a quick answer finds no one to read it.
            let (reader, writer) = std::io::pipe().unwrap();
            let reader = read_first.then_some(reader);
            let mut child = home
                .command(bin("beectl"))
                .args(args)
                .env("BEE_LOG", "warn")
                .stdin(Stdio::null())
                .stdout(writer)
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            // One byte read, then the reader closes (`| head -c1`).
            if let Some(mut reader) = reader {
                let mut byte = [0u8; 1];
                let _ = reader.read(&mut byte);
            }
            let mut said = String::new();
            child.stderr.take().unwrap().read_to_string(&mut said).unwrap();
            let status = child.wait().unwrap();
            let how = if read_first { "after one byte" } else { "before any byte" };
            assert!(!said.contains("panicked"), "{args:?} {how}: {said}");
            assert_ne!(status.code(), Some(101), "{args:?} {how}: {said}");
            if *prints && !read_first {
                assert_eq!(status.signal(), Some(13), "{args:?} {how}: ends by SIGPIPE ({status}): {said}");
            }
        }
    }
}

/// Help wraps at words to the width it has (COLUMNS when not a terminal,
/// at most 100), and `--agent` is the agent filter's name (`--provider`,
/// its earlier name, still works).
#[test]
fn help_wraps_at_words_and_names_the_agent_filter_agent() {
    let home = TestHome::new();
    let help = |args: &[&str], columns: &str| {
        let output = home.command(bin("beectl")).args(args).env("COLUMNS", columns).output().unwrap();
        String::from_utf8(output.stdout).unwrap()
    };
    for args in [&["--help"][..], &["quota", "--help"], &["usage", "--help"], &["setup", "--help"]] {
        let narrow = help(args, "60");
        let wide = help(args, "100");
        for (text, width) in [(&narrow, 60), (&wide, 100)] {
            let long: Vec<&str> = text.lines().filter(|line| line.chars().count() > width).collect();
            assert!(long.is_empty(), "{args:?} at {width}: {long:#?}");
        }
        let words = |text: &str| text.split_whitespace().map(str::to_owned).collect::<Vec<_>>();
        assert_eq!(words(&narrow), words(&wide), "{args:?}: wrapped only between words");
    }
    for command in ["quota", "usage", "run"] {
        let text = help(&[command, "--help"], "100");
        assert!(text.contains("--agent <AGENT>"), "{command}: {text}");
        assert!(!text.contains("--provider <"), "{command}: {text}");
    }
    for args in
        [&["quota", "--provider", "claude"][..], &["quota", "--agent", "claude"], &["usage", "--provider", "codex"]]
    {
        assert_ne!(home.beectl(args).status.code(), Some(4), "{args:?}");
    }
}
