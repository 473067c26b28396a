//! `beectl token estimate` end to end: the spec's worked examples, every
//! error code, the path-safety rules, and daemon/offline byte identity.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use bee_tests::*;
use serde_json::{Value, json};
use std::path::Path;
use std::process::{Output, Stdio};

const UNKNOWN: [&str; 6] = [
    "future_real_output_and_reasoning",
    "tool_results_and_turns",
    "conversation_growth_and_compaction",
    "unselected_system_tool_and_framing_tokens",
    "cache_behaviour",
    "provider_usage_and_billing",
];

/// A home with the spec's two files under `work/`.
fn workspace() -> (TestHome, std::path::PathBuf) {
    let home = TestHome::new();
    let root = home.path().join("work");
    std::fs::create_dir(&root).unwrap();
    std::fs::write(root.join("prompt.txt"), "Hello world!\n").unwrap();
    std::fs::write(root.join("context.txt"), "Review the tests.\n").unwrap();
    (home, root)
}

fn estimate(home: &TestHome, root: &Path, args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut command = home.command(bin("beectl"));
    command.current_dir(root).args(["token", "estimate"]).args(args);
    match stdin {
        Some(input) => home.hook_with(command, &[], input).0,
        None => command.stdin(Stdio::null()).output().unwrap(),
    }
}

fn json_of(output: &Output) -> Value {
    parse_json_line(&output.stdout)
}

fn failed(output: &Output, exit: i32, code: &str, ordinal: Option<u64>) {
    assert_eq!(output.status.code(), Some(exit), "{}", String::from_utf8_lossy(&output.stdout));
    let value = json_of(output);
    assert_eq!(value["status"], if exit == 4 { "invalid" } else { "incomplete" });
    assert_eq!(value["errorCode"], code, "{value}");
    assert_eq!(value["errorInputOrdinal"], json!(ordinal), "{value}");
    for field in ["estimator", "input", "projection", "scenario", "money"] {
        assert!(value[field].is_null(), "{field} in {value}");
    }
    assert_eq!(value["contributors"], json!([]));
}

#[test]
fn example_1_heuristic_file() {
    let (home, root) = workspace();
    let output = estimate(&home, &root, &["--file", "prompt.txt"], None);
    assert_eq!(output.status.code(), Some(0));
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(!text.contains("prompt") && !text.contains("Hello") && !text.contains(root.to_str().unwrap()));
    assert_json_eq(
        &json_of(&output),
        &json!({
            "schemaVersion": 1, "status": "complete", "errorCode": null, "errorInputOrdinal": null,
            "scope": "selected_text_only",
            "estimator": {"method": "utf16-ceil-div4", "version": 1},
            "input": {"utf8Bytes": 13, "utf16Units": 13, "estimatedTokensPerCall": 4},
            "contributors": [{"ordinal": 1, "kind": "file", "estimatedTokens": 4, "utf8Bytes": 13, "utf16Units": 13}],
            "projection": {"returned": 1, "omitted": 0, "omittedEstimatedTokens": 0},
            "scenario": {"calls": 1, "inputEstimatedTokens": 4, "outputBudgetPerCall": null,
                         "outputAllocatedTokens": null, "totalAllocatedTokens": null},
            "unknown": UNKNOWN, "money": null, "snapshot": "checked_unchanged_not_atomic"
        }),
    );
}

#[test]
fn example_2_o200k_stdin() {
    let (home, root) = workspace();
    let output = estimate(&home, &root, &["--stdin", "--encoding", "o200k_base"], Some(b"Hello world!"));
    assert_eq!(output.status.code(), Some(0));
    let value = json_of(&output);
    assert_eq!(value["estimator"], json!({"method": "o200k_base", "version": 1}));
    assert_eq!(value["input"], json!({"utf8Bytes": 12, "utf16Units": 12, "estimatedTokensPerCall": 3}));
    assert_eq!(value["contributors"][0]["kind"], "stdin");
    assert_eq!(value["scenario"]["totalAllocatedTokens"], Value::Null);
}

#[test]
fn examples_3_to_5_cl100k_calls_budget_and_limit() {
    let (home, root) = workspace();
    let both = [
        "--file",
        "prompt.txt",
        "--file",
        "context.txt",
        "--encoding",
        "cl100k_base",
        "--calls",
        "3",
        "--output-budget",
        "2000",
    ];
    let value = json_of(&estimate(&home, &root, &both, None));
    assert_eq!(value["input"]["estimatedTokensPerCall"], 7);
    assert_eq!(
        value["contributors"],
        json!([
            {"ordinal": 2, "kind": "file", "estimatedTokens": 4, "utf8Bytes": 18, "utf16Units": 18},
            {"ordinal": 1, "kind": "file", "estimatedTokens": 3, "utf8Bytes": 13, "utf16Units": 13}
        ])
    );
    assert_eq!(
        value["scenario"],
        json!({"calls": 3, "inputEstimatedTokens": 21, "outputBudgetPerCall": 2000,
               "outputAllocatedTokens": 6000, "totalAllocatedTokens": 6021})
    );
    // Example 4: --limit 0 keeps every total.
    let mut limited = both.to_vec();
    limited.extend(["--limit", "0"]);
    let zero = json_of(&estimate(&home, &root, &limited, None));
    assert_eq!(zero["contributors"], json!([]));
    assert_eq!(zero["projection"], json!({"returned": 0, "omitted": 2, "omittedEstimatedTokens": 7}));
    assert_eq!((zero["input"].clone(), zero["scenario"].clone()), (value["input"].clone(), value["scenario"].clone()));
    // Example 5.
    let one = ["--file", "prompt.txt", "--encoding", "cl100k_base", "--calls", "3", "--output-budget", "2000"];
    let five = json_of(&estimate(&home, &root, &one, None));
    assert_eq!(five["input"]["estimatedTokensPerCall"], 3);
    assert_eq!(five["scenario"]["inputEstimatedTokens"], 9);
    assert_eq!(five["scenario"]["totalAllocatedTokens"], 6009);
}

#[test]
fn example_6_empty_stdin_with_budget_zero() {
    let (home, root) = workspace();
    let output = estimate(&home, &root, &["--stdin", "--output-budget", "0"], Some(b""));
    assert_eq!(output.status.code(), Some(0));
    let value = json_of(&output);
    assert_eq!(value["input"], json!({"utf8Bytes": 0, "utf16Units": 0, "estimatedTokensPerCall": 0}));
    assert_eq!(
        value["scenario"],
        json!({"calls": 1, "inputEstimatedTokens": 0, "outputBudgetPerCall": 0, "outputAllocatedTokens": 0, "totalAllocatedTokens": 0})
    );
}

#[test]
fn invalid_usage_is_exit_4_with_null_totals() {
    let (home, root) = workspace();
    let many: Vec<String> = (0..65).flat_map(|_| ["--file".to_owned(), "prompt.txt".to_owned()]).collect();
    let many: Vec<&str> = many.iter().map(String::as_str).collect();
    let cases: Vec<Vec<&str>> = vec![
        vec![],
        vec!["--limit=0", "--file", "prompt.txt"],
        vec!["--file", "prompt.txt", "--limit", "65"],
        vec!["--file", "prompt.txt", "--calls", "0"],
        vec!["--file", "prompt.txt", "--calls", "1000001"],
        vec!["--file", "prompt.txt", "--calls", "+3"],
        vec!["--file", "prompt.txt", "--output-budget", "1000000001"],
        vec!["--file", "prompt.txt", "--output-budget", "1e3"],
        vec!["--file", "prompt.txt", "--encoding", "gpt2"],
        vec!["--file", "prompt.txt", "--encoding", "o200k_base", "--encoding", "cl100k_base"],
        vec!["--stdin", "--stdin"],
        vec!["--file", ""],
        vec!["--file", "prompt.txt", "--bogus"],
        many,
    ];
    for args in cases {
        failed(&estimate(&home, &root, &args, None), 4, "invalid_usage", None);
    }
    // --limit 0 as a separate token is valid; --json is accepted.
    let ok = estimate(&home, &root, &["--file", "prompt.txt", "--limit", "0", "--json"], None);
    assert_eq!(ok.status.code(), Some(0));
}

#[test]
fn every_input_error_code() {
    let (home, root) = workspace();
    let write = |name: &str, bytes: &[u8]| std::fs::write(root.join(name), bytes).unwrap();
    write("latin1.txt", b"caf\xe9\n");
    write("utf16.txt", b"\xff\xfeh\x00i\x00");
    write("nul.txt", b"a\x00b");
    write("big.txt", &vec![b'a'; 262_145]);
    write("aaa.txt", "word ".repeat(52_000).as_bytes());
    write("letters.txt", "x".repeat(10_000).as_bytes());
    let cases: Vec<(Vec<&str>, &str, Option<u64>)> = vec![
        (vec!["--file", "prompt.txt", "--file", "nope.txt"], "missing", Some(2)),
        (vec!["--file", "latin1.txt"], "invalid_unicode", Some(1)),
        (vec!["--file", "utf16.txt"], "invalid_text", Some(1)),
        (vec!["--file", "nul.txt"], "invalid_text", Some(1)),
        (vec!["--file", "big.txt"], "file_byte_limit", Some(1)),
        (vec!["--file", "aaa.txt", "--file", "./aaa.txt"], "duplicate_file", Some(2)),
        (vec!["--file", "letters.txt", "--encoding", "o200k_base"], "tokenization_limit", Some(1)),
        (vec!["--file", "prompt.txt", "--root", "relative/dir"], "root_invalid", None),
        (vec!["--file", "prompt.txt", "--root", "/nonexistent/root"], "root_invalid", None),
    ];
    for (args, code, ordinal) in cases {
        failed(&estimate(&home, &root, &args, None), 5, code, ordinal);
    }
    // Five inputs of 250,000 bytes: each fits, together they do not.
    for n in 0..5 {
        write(&format!("part{n}.txt"), &vec![b'b'; 250_000]);
    }
    let parts: Vec<String> = (0..5).flat_map(|n| ["--file".to_owned(), format!("part{n}.txt")]).collect();
    let parts: Vec<&str> = parts.iter().map(String::as_str).collect();
    failed(&estimate(&home, &root, &parts, None), 5, "total_byte_limit", Some(5));
    // Oversized stdin is the per-input limit too, never truncated.
    failed(&estimate(&home, &root, &["--stdin"], Some(&vec![b'c'; 262_145])), 5, "file_byte_limit", Some(1));
    // A file that reads differently from what it said it was (procfs: size 0).
    let proc = estimate(&home, &root, &["--root", "/proc", "--file", "version"], None);
    failed(&proc, 5, "input_changed", Some(1));
}

#[test]
fn path_safety() {
    let (home, root) = workspace();
    std::fs::create_dir(root.join("sub")).unwrap();
    std::fs::write(root.join("sub/inner.txt"), "inner\n").unwrap();
    std::fs::write(home.path().join("outside.txt"), "outside\n").unwrap();
    std::os::unix::fs::symlink(home.path().join("outside.txt"), root.join("link.txt")).unwrap();
    std::os::unix::fs::symlink(root.join("sub"), root.join("sublink")).unwrap();
    std::fs::hard_link(root.join("prompt.txt"), root.join("hard.txt")).unwrap();
    std::fs::write(root.join(".env"), "TOKEN=x\n").unwrap();
    std::fs::write(root.join("id_ed25519"), "key\n").unwrap();
    std::fs::write(root.join("server.pem"), "key\n").unwrap();
    let fifo = root.join("pipe");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let root_link = home.path().join("root-link");
    std::os::unix::fs::symlink(&root, &root_link).unwrap();

    let root_str = root.to_str().unwrap();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["--file", "../outside.txt"], "path_escape"),
        (vec!["--file", "sub/../../outside.txt"], "path_escape"),
        (vec!["--file", "/etc/hostname"], "path_escape"),
        (vec!["--file", "link.txt"], "path_link"),
        (vec!["--file", "sublink/inner.txt"], "path_link"),
        (vec!["--file", "sub/inner.txt", "--root", root_link.to_str().unwrap()], "path_link"),
        (vec!["--file", "hard.txt"], "hard_link"),
        (vec!["--file", "pipe"], "not_regular_file"),
        (vec!["--file", "sub"], "not_regular_file"),
        (vec!["--file", ".env"], "sensitive_name"),
        (vec!["--file", "id_ed25519"], "sensitive_name"),
        (vec!["--file", "server.pem"], "sensitive_name"),
    ];
    for (args, code) in cases {
        let ordinal = if code == "path_link" && args.contains(&"--root") { None } else { Some(1) };
        let started = std::time::Instant::now();
        failed(&estimate(&home, &root, &args, None), 5, code, ordinal);
        assert!(started.elapsed() < std::time::Duration::from_secs(5), "{args:?} blocked");
    }
    // The same rules hold with an explicit physical root.
    let ok = estimate(&home, home.path(), &["--root", root_str, "--file", "sub/inner.txt"], None);
    assert_eq!(ok.status.code(), Some(0));
    // With only --stdin, the root is never opened: even a root that does not exist is fine.
    let output = estimate(&home, &root, &["--root", "/nonexistent/root", "--stdin"], Some(b"hi"));
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stdout));
}

#[test]
fn stdin_from_a_terminal_is_refused() {
    // util-linux `script` gives the command a pseudo-terminal as stdin.
    let home = TestHome::new();
    let command = format!("{} token estimate --stdin", bin("beectl").display());
    let output = home
        .command("script")
        .args(["-q", "-e", "-c", &command, "/dev/null"])
        .stdin(Stdio::null())
        .output()
        .expect("run script(1)");
    let text = String::from_utf8_lossy(&output.stdout);
    let line = text.lines().find(|l| l.starts_with('{')).unwrap_or_else(|| panic!("no JSON in {text:?}"));
    let value: Value = serde_json::from_str(line.trim_end()).unwrap();
    assert_eq!(value["errorCode"], "stdin_not_redirected");
    assert_eq!(output.status.code(), Some(5));
}

#[test]
fn daemon_and_in_process_counts_are_byte_identical() {
    let (home, root) = workspace();
    std::fs::write(root.join("code.rs"), "fn main() { println!(\"héllo 😀\"); }\r\n// don't panic\n").unwrap();
    let runs: Vec<(Vec<&str>, Option<Vec<u8>>)> = vec![
        (vec!["--file", "prompt.txt", "--file", "code.rs", "--encoding", "o200k_base"], None),
        (
            vec!["--file", "code.rs", "--stdin", "--encoding", "cl100k_base", "--calls", "7", "--output-budget", "5"],
            Some(b"<|endoftext|> x".to_vec()),
        ),
        (vec!["--file", "prompt.txt", "--encoding", "o200k_base", "--limit", "0"], None),
        (vec!["--stdin", "--encoding", "o200k_base"], Some("y".repeat(9_000).into_bytes())),
    ];
    let offline: Vec<Output> =
        runs.iter().map(|(args, stdin)| estimate(&home, &root, args, stdin.as_deref())).collect();
    let mut command = home.command(bin("beed"));
    command.env("BEE_LOG", "debug");
    let daemon = Daemon::start(&home, command);
    assert!(eventually(std::time::Duration::from_secs(30), || daemon.log().contains("encoders built")));
    for ((args, stdin), offline) in runs.iter().zip(offline) {
        let online = estimate(&home, &root, args, stdin.as_deref());
        assert_eq!(online.status.code(), offline.status.code(), "{args:?}");
        assert_eq!(String::from_utf8_lossy(&online.stdout), String::from_utf8_lossy(&offline.stdout), "{args:?}");
        assert!(online.stderr.is_empty(), "{}", String::from_utf8_lossy(&online.stderr));
    }
    assert!(daemon.log().matches("counted tokens").count() >= 4, "{}", daemon.log());
}

#[test]
fn the_daemon_cancels_a_count_past_its_budget() {
    let home = TestHome::new();
    let daemon = home.start_daemon();
    let body =
        serde_json::to_vec(&json!({"encoding": "o200k_base", "inputs": ["word ".repeat(50_000)], "budgetMillis": 0}))
            .unwrap();
    let (status, _, answer) = raw_http(&home.socket(), &post_request("/v1/token/count", "", &body));
    assert_eq!(status, 200);
    let answer: Value = serde_json::from_slice(&answer).unwrap();
    assert_eq!(answer["errorCode"], "encoding_timeout");
    assert_eq!(answer["counts"], Value::Null);
    // Oversized or hostile bodies get JSON errors, never a panic.
    let too_many =
        serde_json::to_vec(&json!({"encoding": "heuristic", "inputs": vec!["x"; 65], "budgetMillis": 10})).unwrap();
    let (status, _, _) = raw_http(&home.socket(), &post_request("/v1/token/count", "", &too_many));
    assert_eq!(status, 400);
    let (status, _, _) = raw_http(&home.socket(), &post_request("/v1/token/count", "", b"{\"encoding\":\"gpt2\"}"));
    assert_eq!(status, 400);
    drop(daemon);
}

#[test]
fn the_whole_command_is_bounded_at_ten_seconds() {
    // A frozen beed takes the request and never answers: the command gives
    // up at its 10 s budget with encoding_timeout, null totals and exit 5.
    let (home, root) = workspace();
    let daemon = home.start_daemon();
    daemon.freeze();
    let started = std::time::Instant::now();
    let output = estimate(&home, &root, &["--file", "prompt.txt", "--encoding", "o200k_base"], None);
    let elapsed = started.elapsed();
    daemon.resume();
    failed(&output, 5, "encoding_timeout", Some(1));
    assert!(elapsed >= std::time::Duration::from_secs(9), "{elapsed:?}");
    assert!(elapsed < std::time::Duration::from_secs(30), "{elapsed:?}");
    drop(daemon);
}
