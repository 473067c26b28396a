//! beectl explains itself: clap's whole message for every usage error (on
//! stderr for people, in the JSON document's `message` where the contract
//! has one — never empty), help everywhere (`help CMD`, `--help` on every
//! subcommand, a bare `beectl`), suggestions, completions and a man page.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use bee_tests::*;

fn stderr(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn every_usage_error_says_what_is_wrong_and_how_to_fix_it() {
    let home = TestHome::new();
    let missing = home.beectl(&["delivery", "report"]);
    assert_eq!(missing.status.code(), Some(4));
    let document = parse_json_line(&missing.stdout);
    let message = document["message"].as_str().unwrap();
    assert!(message.contains("--store <PATH>") && message.contains("Usage: beectl delivery report"), "{message}");
    assert!(stderr(&missing).contains("--store <PATH>"), "for people too");
    // Contracts without a message field: the document stays exact, stderr says why.
    for args in [&["token", "estimate", "--format", "table"][..], &["budget", "--harness", "claude"][..]] {
        let output = home.beectl(args);
        assert_eq!(output.status.code(), Some(4), "{args:?}");
        assert_eq!(parse_json_line(&output.stdout)["errorCode"], "invalid_usage");
        let said = stderr(&output);
        assert!(said.starts_with("beectl: ") && said.contains("Usage: beectl"), "{args:?}: {said:?}");
    }
    let typo = home.beectl(&["usgae"]);
    assert_eq!(typo.status.code(), Some(4));
    assert!(parse_json_line(&typo.stdout)["message"].as_str().unwrap().contains("'usage'"), "did you mean");
    let run = home.beectl(&["run", "--provider", "claude"]);
    assert_eq!(run.status.code(), Some(4));
    assert!(stderr(&run).contains("after --"));
}

/// On a terminal an error is words on stderr, and nothing else — the
/// argument parser's too; piped, the JSON document is unchanged on stdout
/// and the words are on stderr as well; `--json` keeps the document on a
/// terminal. An MCP server's stdout (its JSON-RPC channel) never carries a
/// failure to start: stderr says it.
#[test]
fn errors_are_words_for_people_and_the_document_for_pipes() {
    let home = TestHome::new();
    let on_terminal = |args: &str| {
        // `script` gives beectl a pty for stdout; stderr goes to a file.
        let err = home.path().join("stderr.txt");
        let line = format!("'{}' {args} 2>'{}'", bin("beectl").display(), err.display());
        let output = home.command("script").args(["-qfec", &line, "/dev/null"]).output().unwrap();
        (String::from_utf8_lossy(&output.stdout).into_owned(), std::fs::read_to_string(&err).unwrap_or_default())
    };
    for (args, said) in [
        ("usage --since lastweek", "beectl: --since: \"lastweek\" is not a time"),
        ("usage --timezone Mars/Base", "beectl: --timezone: \"Mars/Base\" is not a time zone"),
        ("quota --bogus", "beectl: unexpected argument '--bogus' found"),
        ("usage", "beectl: no ledger yet at "),
    ] {
        let (stdout, said_there) = on_terminal(args);
        assert!(said_there.starts_with(said), "{args}: {said_there:?}");
        assert!(!stdout.contains('{'), "{args}: no JSON on a terminal: {stdout:?}");
    }
    let (stdout, said_there) = on_terminal("usage --since lastweek --json");
    assert!(stdout.contains(r#""errorCode":"invalid_usage""#) && said_there.starts_with("beectl: --since"), "{stdout}");
    let piped = home.beectl(&["usage", "--since", "lastweek"]);
    assert_eq!(parse_json_line(&piped.stdout)["errorCode"], "invalid_usage");
    assert!(stderr(&piped).starts_with("beectl: --since: \"lastweek\" is not a time"), "{}", stderr(&piped));
    for args in
        [&["mcp", "serve", "--root", "/nonexistent"][..], &["design", "mcp", "--stdio", "--root", "/nonexistent"]]
    {
        let output = home.beectl(args);
        assert_eq!(output.status.code(), Some(4), "{args:?}");
        assert!(output.stdout.is_empty(), "{args:?}: the JSON-RPC channel stays clean");
        assert!(stderr(&output).contains("--root: /nonexistent must be an existing"), "{args:?}: {}", stderr(&output));
    }
}

/// `--json` is accepted by every report command: the document, exit 0 or 5,
/// never a usage error.
#[test]
fn every_report_command_takes_json() {
    let home = TestHome::new();
    let daemon = home.start_daemon_with(&["--ingest-every", "0"]);
    for args in [
        &["quota", "--json"][..],
        &["status", "--json"],
        &["usage", "--json"],
        &["top", "--json"],
        &["prices", "--json"],
        &["agents", "--json"],
        &["daemon", "status", "--json"],
        &["events", "recent", "--json"],
        &["audit", "--json"],
        &["export", "status", "--json"],
        &["artifact", "list", "--json"],
    ] {
        let output = home.beectl(args);
        assert_ne!(output.status.code(), Some(4), "{args:?}: {}", stderr(&output));
        let document: serde_json::Value = serde_json::from_slice(&output.stdout)
            .unwrap_or_else(|err| panic!("{args:?}: {err}: {}", String::from_utf8_lossy(&output.stdout)));
        // Recent events are the reference's bare array.
        assert!(document.is_object() || document.is_array(), "{args:?}");
    }
    assert_eq!(home.beectl(&["quota", "--json", "--format", "table"]).status.code(), Some(4), "one or the other");
    // The delivery contract refuses --json (its output is JSON): it still does.
    let store = home.store();
    let delivery = home.beectl(&["delivery", "report", "--store", store.to_str().unwrap(), "--json"]);
    assert_eq!(delivery.status.code(), Some(4));
    drop(daemon);
}

#[test]
fn help_is_everywhere() {
    let home = TestHome::new();
    for args in [
        &[][..],
        &["help"],
        &["help", "usage"],
        &["--help"],
        &["run", "--help"],
        &["usage", "--help"],
        &["audit", "canary", "--help"],
    ] {
        let output = home.beectl(args);
        assert_eq!(output.status.code(), Some(0), "{args:?}: {}", stderr(&output));
        let text = String::from_utf8(output.stdout).unwrap();
        assert!(text.contains("Usage: beectl"), "{args:?}: {text}");
    }
    let completions = home.beectl(&["completions", "bash"]);
    assert_eq!(completions.status.code(), Some(0));
    assert!(String::from_utf8(completions.stdout).unwrap().contains("complete -F _beectl"));
    for shell in ["zsh", "fish"] {
        let output = home.beectl(&["completions", shell]);
        assert!(output.status.success() && output.stdout.len() > 1_000, "{shell}");
    }
    let man = home.beectl(&["man"]);
    assert_eq!(man.status.code(), Some(0));
    let roff = String::from_utf8(man.stdout).unwrap();
    assert!(roff.starts_with(".ie") && roff.contains(".TH beectl 1"), "{roff}");
    // Every page beectl's own refers to can be made, with its options.
    let referred: Vec<String> = roff
        .split("beectl\\-")
        .skip(1)
        .filter_map(|rest| rest.split_once("(1)").map(|(name, _)| name.replace("\\-", "-")))
        .collect();
    assert!(referred.len() > 20 && referred.contains(&"usage".to_owned()), "{referred:?}");
    for name in referred.iter().filter(|name| *name != "help") {
        let page = home.beectl(&["man", name]);
        assert_eq!(page.status.code(), Some(0), "beectl man {name}: {}", stderr(&page));
        let page = String::from_utf8(page.stdout).unwrap();
        assert!(page.contains(&format!(".TH beectl-{name} 1")) && page.contains(".SH OPTIONS"), "{name}: {page}");
    }
    let usage = String::from_utf8(home.beectl(&["man", "usage"]).stdout).unwrap();
    assert!(usage.contains("\\-\\-since") && usage.contains("\\-\\-timezone"), "the options' text: {usage}");
    let nested = String::from_utf8(home.beectl(&["man", "audit", "canary"]).stdout).unwrap();
    assert!(nested.contains(".TH beectl-audit-canary 1") && nested.contains("\\-\\-fail\\-on"), "{nested}");
    assert_eq!(home.beectl(&["man", "usge"]).status.code(), Some(4));
    assert_eq!(home.beectl(&["completions", "tcsh"]).status.code(), Some(4));
}

/// `contrib/install.sh` of the dev profile into `dest`, with `env` on top.
fn install(home: &TestHome, dest: &std::path::Path, env: &[(&str, &std::ffi::OsStr)]) -> std::process::Output {
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../contrib/install.sh");
    let mut command = home.command("sh");
    command.arg(&script).env("BEE_INSTALL_DIR", dest).env("BEE_INSTALL_PROFILE", "dev");
    command.envs(env.iter().copied()).output().unwrap()
}

/// The README's one install command builds once and installs all three
/// binaries, which then run.
#[test]
fn the_install_script_installs_the_three_binaries() {
    let home = TestHome::new();
    let dest = home.path().join("bin");
    let output = install(&home, &dest, &[]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(String::from_utf8_lossy(&output.stdout).contains("installed beed, bee-hook and beectl"));
    assert!(stderr(&output).contains("add ") && stderr(&output).contains("to your PATH"), "not on PATH: said");
    for binary in ["beed", "bee-hook", "beectl"] {
        let run = std::process::Command::new(dest.join(binary)).arg("--version").output().unwrap();
        assert!(run.status.success(), "{binary}");
        assert!(String::from_utf8_lossy(&run.stdout).contains("0.1.0"), "{binary}");
    }
}

/// The install script takes the binaries from where cargo built them —
/// `CARGO_TARGET_DIR` here, as cargo's own metadata says — not from
/// `target/` whatever the setting (a stand-in cargo answers for the real one,
/// so nothing is built twice).
#[test]
fn the_install_script_honours_where_cargo_builds() {
    use std::os::unix::fs::PermissionsExt;
    let home = TestHome::new();
    let elsewhere = home.path().join("elsewhere");
    let built = elsewhere.join("debug");
    std::fs::create_dir_all(&built).unwrap();
    for binary in ["beed", "bee-hook", "beectl"] {
        let path = built.join(binary);
        std::fs::write(&path, format!("#!/bin/sh\necho {binary} from elsewhere\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let tools = home.path().join("tools");
    std::fs::create_dir_all(&tools).unwrap();
    let cargo = tools.join("cargo");
    std::fs::write(
        &cargo,
        "#!/bin/sh\ncase \"$1\" in\n  metadata) printf '{\"packages\":[],\"target_directory\":\"%s\",\"version\":1}\\n' \"$CARGO_TARGET_DIR\" ;;\n  *) ;;\nesac\n",
    )
    .unwrap();
    std::fs::set_permissions(&cargo, std::fs::Permissions::from_mode(0o755)).unwrap();
    let dest = home.path().join("bin");
    let path = format!("{}:/usr/bin:/bin", tools.display());
    let output = install(&home, &dest, &[("CARGO_TARGET_DIR", elsewhere.as_os_str()), ("PATH", path.as_ref())]);
    assert!(output.status.success(), "{}", stderr(&output));
    let run = std::process::Command::new(dest.join("beectl")).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&run.stdout), "beectl from elsewhere\n");
}

/// The book's table of agents lists every agent of the registry, in its
/// order, each saying what the registry declares: how its reader was
/// verified and what its records can say (its hooks column is the book's).
#[test]
fn the_books_agent_table_says_what_the_registry_declares() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/src/agents.md");
    let book = std::fs::read_to_string(&path).unwrap();
    let header = "| `--agent` | agent | verified | time spans | limit notices | reasoning | cache writes | own cost |";
    let table = &book[book.find(header).unwrap()..];
    let rows: Vec<String> = table
        .lines()
        .skip(2)
        .take_while(|line| line.starts_with('|'))
        .map(|line| line.split(" | ").take(8).collect::<Vec<_>>().join(" | ") + " |")
        .collect();
    let want = bee_daemon::ledger::agents::book_rows();
    assert_eq!(rows, want, "{}", diff(&want.join("\n"), &rows.join("\n")));
}

/// The README's table of agents is the registry's own (`BEE_BLESS=1`
/// rewrites it).
#[test]
fn the_readme_lists_every_agent_of_the_registry() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md");
    let readme = std::fs::read_to_string(&path).unwrap();
    let (open, close) =
        ("<!-- agents: generated from the registry (daemon/src/ledger/agents/mod.rs) -->\n", "<!-- /agents -->");
    let start = readme.find(open).unwrap() + open.len();
    let end = readme[start..].find(close).unwrap() + start;
    let table = bee_daemon::ledger::agents::readme_table();
    if std::env::var_os("BEE_BLESS").is_some() {
        std::fs::write(&path, format!("{}{table}{}", &readme[..start], &readme[end..])).unwrap();
        return;
    }
    assert_eq!(&readme[start..end], table, "{}", diff(&table, &readme[start..end]));
}
